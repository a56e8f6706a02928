/* The shared-memory machinery of the test doubles of the collective libraries
 * (tests/ascend/hccl_double.c for libhccl, tests/cuda/nccl_double.c for libnccl), never
 * a collective library: each double includes it (header-only, static functions: the two
 * are separate shared libraries) and gives its own error codes where one is answered.
 *   - the root info / unique id names a POSIX shared memory segment ("/hwrt-<lib>-double-
 *     <pid>-<seq>", behind a magic number): made by the first rank to attach, unlinked
 *     once all have, or by the last to detach, or at exit (every name attached is kept);
 *   - the segment holds a slot of SLOT bytes per rank (MAX_RANKS at most) and a
 *     process-shared barrier, which gives up after 60 s with the double's timeout code;
 *   - the collectives' data moves through the slots between two barriers;
 *   - the live communicators are kept in a table (so a leak check sees them) and counted;
 *   - take(): an injected failure code, answered once. */
#ifndef HWRT_TEST_COLL_DOUBLE_SHM_H
#define HWRT_TEST_COLL_DOUBLE_SHM_H

#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MAX_RANKS 8
#define SLOT (1u << 20)

typedef struct { uint32_t magic; char name[60]; } seg_head;   /* in the root info / id */
typedef struct {
    int nranks, joined, arrived, gen;      /* touched with __atomic builtins only */
    char slot[MAX_RANKS][SLOT];
} seg_t;

static char names[16][60];                  /* segments to unlink at exit */
static void *comms[16];                     /* live communicators (a leak check sees them) */
static int live;                            /* communicators made, not handed back */

__attribute__((destructor)) static void unlink_all(void)
{
    for (int i = 0; i < 16; i++)
        if (names[i][0]) shm_unlink(names[i]);
}

/* an injected failure code (0: none), cleared as it is answered */
static int take(int *code)
{
    int c = *code;
    *code = 0;
    return c;
}

/* sym in the instance of the runtime's test double that hwrt loaded (env names it); self
 * and runtime name the libraries in the message of the abort without it */
static void *runtime_sym(const char *env, const char *self, const char *runtime, const char *sym)
{
    const char *lib = getenv(env);
    void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
    void *f = h ? dlsym(h, sym) : NULL;
    if (!f) {
        fprintf(stderr, "hwrt's test double of %s: no %s in %s (%s): it runs on the test "
                "double of %s only\n", self, sym, env, lib ? lib : "unset", runtime);
        abort();
    }
    return f;
}

/* every rank waits for all; 0, or e_timeout after 60 s */
static int seg_barrier(seg_t *g, int e_timeout)
{
    int gen = __atomic_load_n(&g->gen, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&g->arrived, 1, __ATOMIC_ACQ_REL) == g->nranks) {
        __atomic_store_n(&g->arrived, 0, __ATOMIC_RELAXED);
        __atomic_add_fetch(&g->gen, 1, __ATOMIC_RELEASE);
        return 0;
    }
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (__atomic_load_n(&g->gen, __ATOMIC_ACQUIRE) == gen) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 60) return e_timeout;
        nanosleep(&(struct timespec){0, 50000}, NULL);
    }
    return 0;
}

/* a new segment name for lib ("hccl", "nccl"), behind magic, into the size bytes at
 * internal (zeroed first) */
static void seg_name_new(void *internal, size_t size, uint32_t magic, const char *lib)
{
    static int seq;
    memset(internal, 0, size);
    seg_head h = {magic, ""};
    snprintf(h.name, sizeof h.name, "/hwrt-%s-double-%d-%d", lib, (int)getpid(), seq++);
    memcpy(internal, &h, sizeof h);
}

/* the segment name behind magic at internal into h: 0, or -1 without the magic */
static int seg_name_get(const void *internal, uint32_t magic, seg_head *h)
{
    memcpy(h, internal, sizeof *h);
    return h->magic == magic ? 0 : -1;
}

/* attach rank's process to the segment name of n ranks: 0 and *out, or e_sys (the segment
 * cannot be had), or e_arg (it is one of another number of ranks) */
static int seg_join(const char *name, int n, seg_t **out, int e_sys, int e_arg)
{
    int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
    if (fd < 0) return e_sys;
    seg_t *g = ftruncate(fd, sizeof *g) ? MAP_FAILED
             : mmap(NULL, sizeof *g, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (g == MAP_FAILED) return e_sys;
    int zero = 0;
    __atomic_compare_exchange_n(&g->nranks, &zero, n, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    if (g->nranks != n) {
        munmap(g, sizeof *g);
        return e_arg;
    }
    if (__atomic_add_fetch(&g->joined, 1, __ATOMIC_ACQ_REL) == n)
        shm_unlink(name);                   /* every rank has it: the name is not needed */
    for (int i = 0; i < 16; i++)
        if (!names[i][0]) { memcpy(names[i], name, sizeof names[i]); break; }
    *out = g;
    return 0;
}

/* the communicator c (allocated) is live */
static void comm_made(void *c)
{
    for (int i = 0; i < 16; i++)
        if (!comms[i]) { comms[i] = c; break; }
    live++;
}

/* the communicator c on segment g (name) is handed back: detached (the last to detach
 * unlinks the name) and freed, after clear (its magic number zeroed) */
static void comm_gone(void *c, seg_t *g, const char *name, uint32_t *magic)
{
    if (__atomic_sub_fetch(&g->joined, 1, __ATOMIC_ACQ_REL) == 0) shm_unlink(name);
    munmap(g, sizeof *g);
    for (int i = 0; i < 16; i++)
        if (comms[i] == c) comms[i] = NULL;
    *magic = 0;
    free(c);
    live--;
}

/* how a double reduces: out[i] = op over the ranks of element i of their slots, from
 * byte off */
typedef void seg_reduce_fn(seg_t *g, size_t off, void *out, uint64_t n, int dt, int op);

/* a reduction: rank's sbytes at s into its slot, then each rank's n elements from byte
 * off of every slot reduced into r; 0, or e_timeout */
static int seg_reduce(seg_t *g, int rank, const void *s, size_t sbytes, size_t off, void *r,
                      uint64_t n, int dt, int op, seg_reduce_fn *fn, int e_timeout)
{
    memcpy(g->slot[rank], s, sbytes);
    int e = seg_barrier(g, e_timeout);
    if (e) return e;
    fn(g, off, r, n, dt, op);
    return seg_barrier(g, e_timeout);
}

/* an allgather of bytes per rank from s into r; 0, or e_timeout */
static int seg_allgather(seg_t *g, int rank, const void *s, void *r, size_t bytes, int e_timeout)
{
    memcpy(g->slot[rank], s, bytes);
    int e = seg_barrier(g, e_timeout);
    if (e) return e;
    for (int q = 0; q < g->nranks; q++) memcpy((char *)r + q * bytes, g->slot[q], bytes);
    return seg_barrier(g, e_timeout);
}

/* a broadcast of root's bytes at s into r of every rank (root's own r too, unless it is s);
 * 0, or e_timeout */
static int seg_broadcast(seg_t *g, int rank, int root, const void *s, void *r, size_t bytes,
                         int e_timeout)
{
    if (rank == root) memcpy(g->slot[root], s, bytes);
    int e = seg_barrier(g, e_timeout);
    if (e) return e;
    if (rank != root || r != s) memcpy(r, g->slot[root], bytes);
    return seg_barrier(g, e_timeout);
}

#endif
