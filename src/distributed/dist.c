/* Joining and leaving the group; rank, size and local rank. */
#include "../base/log.h"
#include "dist.h"
#include "coll_select.h"
#include "../base/status.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

hwi_dist hwi_dist_g;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

void hwi_dist_lock(void) { pthread_mutex_lock(&mu); }
void hwi_dist_unlock(void) { pthread_mutex_unlock(&mu); }

void hwi_dist_hostname(char *buf, size_t len)
{
    const char *v = getenv("HWRT_DIST_HOSTNAME");
    if (v && *v && strlen(v) < len) { snprintf(buf, len, "%s", v); return; }
    if (v && *v)     /* cut short it could equal another host's name: not used */
        fprintf(stderr, "[hwrt warn] HWRT_DIST_HOSTNAME=\"%.40s...\" is longer than %zu "
                "characters; using the host's own name\n", v, len - 1);
    if (gethostname(buf, len) != 0) snprintf(buf, len, "localhost");
    buf[len - 1] = 0;
}

/* What each rank says at init: its host, and the local rank its launcher gave it. */
typedef struct {
    char host[HWI_HOST_LEN];
    int32_t launcher_local;      /* -1: the launcher gives none */
    int32_t named;               /* host from HWRT_DIST_HOSTNAME: a model, not the machine */
} host_rec;

/* Local rank of rank r from the host table: ranks before it on the same host. */
static int local_from_hosts(const host_rec *recs, int r)
{
    int l = 0;
    for (int q = 0; q < r; q++) l += !strncmp(recs[q].host, recs[r].host, HWI_HOST_LEN);
    return l;
}

/* The launcher knows which processes share a machine. Where its local rank differs from
 * the host-name count, two machines answer to one host name (cloned VMs, containers named
 * alike) and every later verdict (device = local rank, the duplicate check) would be
 * wrong: all ranks stop here with the same sentence. */
static hwrt_status check_host_names(const hwi_dist *d, const host_rec *recs)
{
    for (int r = 0; r < d->size; r++) {
        int l = local_from_hosts(recs, r), n = 0;
        if (recs[r].launcher_local < 0 || recs[r].named || recs[r].launcher_local == l)
            continue;
        for (int q = 0; q < d->size; q++) n += !strncmp(recs[q].host, recs[r].host, HWI_HOST_LEN);
        return hwi_err(HWRT_ERROR_DIST, "hwrt_dist_init: rank %d is local rank %d by its %s "
                       "launcher but %d by host names: %d ranks report host name '%s', so two "
                       "machines share that name and their ranks would be bound as if on one "
                       "machine. Give each machine a unique host name, or set "
                       "HWRT_DIST_HOSTNAME to a name unique to the machine on every rank",
                       r, recs[r].launcher_local, d->info.launcher, l, n, recs[r].host);
    }
    return HWRT_SUCCESS;
}

/* Every rank's host, then local rank/size from it: ranks sharing a host, in rank order.
 * Computed rather than taken from the launcher, so it is right under every launcher
 * (msrun/HCCL do not export a local rank) and with HWRT_DIST_HOSTNAME; checked against
 * the launcher's local rank where it gives one. */
static hwrt_status learn_hosts(hwi_dist *d)
{
    d->hosts = calloc((size_t)d->size, HWI_HOST_LEN);
    host_rec *recs = calloc((size_t)d->size, sizeof *recs);
    if (!d->hosts || !recs) {
        free(recs);
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "hwrt_dist_init: host out of memory");
    }
    host_rec me = {.launcher_local = d->info.local_rank};
    const char *named = getenv("HWRT_DIST_HOSTNAME");
    me.named = named && *named;
    hwi_dist_hostname(me.host, sizeof me.host);
    hwrt_status st = d->eng->allgather(NULL, &me, recs, sizeof me, NULL);
    if (st == HWRT_SUCCESS) st = check_host_names(d, recs);
    if (st != HWRT_SUCCESS) {
        free(recs);
        return st;
    }
    d->local_rank = d->local_size = d->nhosts = 0;
    for (int r = 0; r < d->size; r++) {
        memcpy(d->hosts[r], recs[r].host, HWI_HOST_LEN);
        int same = !strncmp(recs[r].host, me.host, HWI_HOST_LEN);
        d->local_size += same;
        if (same && r < d->rank) d->local_rank++;
        d->nhosts += local_from_hosts(recs, r) == 0;
    }
    free(recs);
    return HWRT_SUCCESS;
}

static hwrt_status join_mpi(hwi_dist *d)
{
    int rank = -1, size = -1;
    HWI_TRY(hwi_mpi_engine_open(&d->eng, &rank, &size, d->mpi_version, sizeof d->mpi_version));
    if (rank != d->info.rank || size != d->info.size) {
        d->eng->finalize();
        return hwi_err(HWRT_ERROR_DIST, "hwrt_dist_init: the %s launcher says rank %d of %d but "
                       "MPI (%s) sees rank %d of %d: the processes were not started by an MPI "
                       "launcher, so MPI cannot connect them. Start them with mpirun/mpiexec "
                       "(or srun --mpi=pmix under Slurm); NCCL/HCCL engines for torchrun/msrun "
                       "launches come with their backends", d->info.launcher, d->info.rank,
                       d->info.size, d->mpi_version, rank, size);
    }
    d->rank = rank;
    d->size = size;
    hwrt_status st = learn_hosts(d);
    if (st != HWRT_SUCCESS) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", hwrt_last_error());
        d->eng->finalize();            /* every rank reached the same verdict */
        hwi_err(st, "%s", msg);
    }
    return st;
}

hwrt_status hwrt_dist_init(void)
{
    hwi_dist_lock();
    if (hwi_dist_g.inited) { hwi_dist_unlock(); return HWRT_SUCCESS; }
    hwi_dist d = {0};
    int want;
    hwrt_status st = hwi_coll_want(&want);    /* a bad HWRT_COLL_ENGINE fails before MPI */
    if (st == HWRT_SUCCESS) st = hwrt_dist_detect(&d.info);
    if (st == HWRT_SUCCESS && d.info.size == 1) {
        d.eng = &hwi_engine_self;
        d.rank = 0; d.size = 1; d.local_rank = 0; d.local_size = 1; d.nhosts = 1;
    } else if (st == HWRT_SUCCESS) {
        st = join_mpi(&d);
    }
    if (st == HWRT_SUCCESS) {
        d.inited = 1;
        hwi_dist_g = d;
        hwi_log(HWI_LOG_INFO, "dist: rank %d of %d (local rank %d of %d, %d host%s), launcher %s, "
                "engine %s%s%s", d.rank, d.size, d.local_rank, d.local_size, d.nhosts,
                d.nhosts == 1 ? "" : "s", d.info.launcher[0] ? d.info.launcher : "none",
                d.size == 1 ? "self (one process)" : "MPI", d.mpi_version[0] ? ", " : "",
                d.mpi_version);
    } else {
        free(d.hosts);
    }
    hwi_dist_unlock();
    return st;
}

hwrt_status hwrt_dist_finalize(void)
{
    hwi_dist_lock();
    hwrt_status st = HWRT_SUCCESS;
    if (hwi_dist_g.inited) {
        hwi_group_drop_all();
        if (hwi_dist_g.coll && hwi_dist_g.coll != hwi_dist_g.eng)
            st = hwi_dist_g.coll->finalize();          /* NCCL's communicator first */
        hwrt_status mst = hwi_dist_g.eng->finalize();
        if (st == HWRT_SUCCESS) st = mst;
        hwi_dist_free_staging();
        free(hwi_dist_g.hosts);
        memset(&hwi_dist_g, 0, sizeof hwi_dist_g);
    }
    hwi_dist_unlock();
    return st;
}

/* Before init: the launcher's word (0, 1, 0 when absent or malformed). */
static hwrt_dist_info detected(void)
{
    hwrt_dist_info i;
    char saved[1024];
    snprintf(saved, sizeof saved, "%s", hwrt_last_error());
    if (hwrt_dist_detect(&i) != HWRT_SUCCESS) {
        memset(&i, 0, sizeof i);
        i.size = 1;
    }
    if (i.local_rank < 0) i.local_rank = 0;
    hwi_err(HWRT_SUCCESS, "%s", saved);   /* a query leaves the last error alone */
    return i;
}

int hwrt_dist_rank(void) { return hwi_dist_g.inited ? hwi_dist_g.rank : detected().rank; }
int hwrt_dist_size(void) { return hwi_dist_g.inited ? hwi_dist_g.size : detected().size; }
int hwrt_dist_local_rank(void)
{
    return hwi_dist_g.inited ? hwi_dist_g.local_rank : detected().local_rank;
}
