/* Groups: sub-communicators of the world (hwrt_group_*). A group is a list of world
 * ranks and the engine's communicator of them (MPI_Comm_create_group on the MPI engine);
 * its collectives are collective.c's, run on that communicator. Live groups are kept in a
 * list, so a destroyed or made-up handle is refused (INVALID_HANDLE), never followed. */
#include "dist.h"
#include "../base/status.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct hwrt_group_s {
    struct hwrt_group_s *next;
    void *comm;                    /* the engine's communicator */
    int rank, size;                /* this process's rank in the group, the group's size */
    int ranks[];                   /* group rank -> world rank */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct hwrt_group_s *live;

/* Under mu: the live group g, or NULL. */
static struct hwrt_group_s *find(hwrt_group g)
{
    struct hwrt_group_s *p = live;
    while (p && p != g) p = p->next;
    return p;
}

hwrt_status hwi_group_get(const char *api, hwrt_group g, void **comm, int *rank, int *size)
{
    if (!g) {
        *comm = NULL;
        *rank = hwi_dist_g.rank;
        *size = hwi_dist_g.size;
        return HWRT_SUCCESS;
    }
    pthread_mutex_lock(&mu);
    struct hwrt_group_s *p = find(g);
    if (p) { *comm = p->comm; *rank = p->rank; *size = p->size; }
    pthread_mutex_unlock(&mu);
    if (!p)
        return hwi_err(HWRT_ERROR_INVALID_HANDLE, "%s: group %p is not a live group (destroyed, "
                       "or not made by hwrt_group_create)", api, (void *)g);
    return HWRT_SUCCESS;
}

void hwi_group_drop_all(void)
{
    pthread_mutex_lock(&mu);
    while (live) {
        struct hwrt_group_s *p = live;
        live = p->next;
        free(p);
    }
    pthread_mutex_unlock(&mu);
}

hwrt_status hwrt_group_create(const int *ranks, int n, hwrt_group *out)
{
    if (!out || !ranks)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_group_create: ranks and out are "
                       "required");
    HWI_TRY(hwrt_dist_init());
    int world = hwi_dist_g.size, me = -1;
    if (n < 1 || n > world)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_group_create: n %d is out of range: a "
                       "group has 1 to %d (the world's size) ranks", n, world);
    char *seen = calloc((size_t)world, 1);
    if (!seen)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "hwrt_group_create: host out of memory");
    for (int i = 0; i < n; i++) {
        int r = ranks[i];
        if (r < 0 || r >= world || seen[r]) {
            free(seen);
            if (r < 0 || r >= world)
                return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_group_create: ranks[%d] = %d "
                               "is not a world rank (0..%d)", i, r, world - 1);
            return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_group_create: world rank %d is "
                           "listed twice (ranks[%d]); list each rank once", r, i);
        }
        seen[r] = 1;
        if (r == hwi_dist_g.rank) me = i;
    }
    free(seen);
    if (me < 0)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_group_create: this process (world "
                       "rank %d) is not in the list; only the listed ranks create the group",
                       hwi_dist_g.rank);
    struct hwrt_group_s *g = calloc(1, sizeof *g + (size_t)n * sizeof g->ranks[0]);
    if (!g)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "hwrt_group_create: host out of memory");
    memcpy(g->ranks, ranks, (size_t)n * sizeof ranks[0]);
    g->rank = me;
    g->size = n;
    hwi_coll_lock();
    hwrt_status st = hwi_dist_g.eng->group_create(ranks, n, &g->comm);
    hwi_coll_unlock();
    if (st != HWRT_SUCCESS) {
        free(g);
        return st;
    }
    pthread_mutex_lock(&mu);
    g->next = live;
    live = g;
    pthread_mutex_unlock(&mu);
    *out = g;
    return HWRT_SUCCESS;
}

hwrt_status hwrt_group_destroy(hwrt_group h)
{
    pthread_mutex_lock(&mu);
    struct hwrt_group_s **pp = &live;
    while (*pp && *pp != h) pp = &(*pp)->next;
    struct hwrt_group_s *g = *pp;
    if (g) *pp = g->next;
    pthread_mutex_unlock(&mu);
    if (!g)
        return hwi_err(HWRT_ERROR_INVALID_HANDLE, "hwrt_group_destroy: group %p is not a live "
                       "group (destroyed already, or not made by hwrt_group_create)", (void *)h);
    hwi_coll_lock();                /* never under a running collective of the group */
    hwrt_status st = hwi_dist_g.eng->group_free(g->comm);
    hwi_coll_unlock();
    free(g);
    return st;
}

hwrt_status hwrt_group_rank(hwrt_group g, int *rank)
{
    if (!rank) return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_group_rank: rank is NULL");
    if (!g) HWI_TRY(hwrt_dist_init());
    void *comm;
    int size;
    return hwi_group_get("hwrt_group_rank", g, &comm, rank, &size);
}

hwrt_status hwrt_group_size(hwrt_group g, int *size)
{
    if (!size) return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_group_size: size is NULL");
    if (!g) HWI_TRY(hwrt_dist_init());
    void *comm;
    int rank;
    return hwi_group_get("hwrt_group_size", g, &comm, &rank, size);
}

hwrt_status hwrt_group_world_rank(hwrt_group g, int group_rank, int *world_rank)
{
    if (!world_rank)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_group_world_rank: world_rank is NULL");
    if (!g) HWI_TRY(hwrt_dist_init());
    pthread_mutex_lock(&mu);
    struct hwrt_group_s *p = g ? find(g) : NULL;
    int size = g ? (p ? p->size : -1) : hwi_dist_g.size;
    int w = group_rank >= 0 && group_rank < size ? (p ? p->ranks[group_rank] : group_rank) : -1;
    pthread_mutex_unlock(&mu);
    if (size < 0)
        return hwi_err(HWRT_ERROR_INVALID_HANDLE, "hwrt_group_world_rank: group %p is not a live "
                       "group", (void *)g);
    if (w < 0)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_group_world_rank: group rank %d is out "
                       "of range: the group has %d ranks (0..%d)", group_rank, size, size - 1);
    *world_rank = w;
    return HWRT_SUCCESS;
}
