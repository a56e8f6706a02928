/* The thread cache's fast path, inlined into hwi_pool_alloc (pool_alloc.c) and hwi_pool_free
 * (pool_free.c); see pool_tcache.c for the design. */
#ifndef HWI_POOL_TCACHE_H
#define HWI_POOL_TCACHE_H

#include "pool_internal.h"
#include "../base/config.h"

#include <stdlib.h>

#define TC_MAX_SIZE ((size_t)64 << 10)
#define TC_NBINS ((int)(TC_MAX_SIZE / POOL_ROUND))
#define TC_DEPTH 8
#define TC_MAX_BYTES ((size_t)2 << 20)
#define TC_NENT 256
/* A thread's share: what its fast allocations and frees added and removed since its
 * last fold (count, block bytes, requested bytes); current = alloc - freed. Blocks the
 * fast path moves are never PENDING, so active and allocation move together. */
enum { C_COUNT, C_BYTES, C_REQ, C_N };

/* size: the block's size when it was handed out (an allocated block never changes size),
 * so that a free finds its bin without waiting for the block's own cache line */
typedef struct { pblock *b; uint64_t gen; size_t size; } tc_ent;
typedef struct { int n; pblock *blk[TC_DEPTH]; } tc_bin;

typedef struct tcache {
    struct tcache *next;            /* registry, under tc_mu (pool_tcache.c) */
    int registered;
    dpool *dp;                      /* key: device pool and stream (written under tc_mu) */
    hwrt_bstream *owner;
    int device;
    int enabled;                    /* thread_cache on, record_alloc_sites and HWRT_ALLOC_TRACE off */
    uint64_t cfg_gen, flush_gen;
    size_t bytes;                   /* parked */
    _Atomic int64_t alloc[C_N], freed[C_N];             /* this thread's share */
    int64_t headroom[C_N];          /* peak - current of the pool at the last fold */
    tc_ent ents[TC_NENT];           /* blocks this thread holds, by address */
    tc_bin bins[TC_NBINS];
} tcache;

/* initial-exec: one pointer of static TLS, so the fast path has no __tls_get_addr call */
extern __thread tcache *hwi_tc __attribute__((tls_model("initial-exec")));
extern _Atomic uint64_t hwi_tc_flush_gen;

static inline __attribute__((always_inline)) int64_t ld(_Atomic int64_t *x) { return atomic_load_explicit(x, memory_order_relaxed); }
static inline __attribute__((always_inline)) void add(_Atomic int64_t *x, int64_t v) { atomic_store_explicit(x, ld(x) + v, memory_order_relaxed); }
static inline size_t ent_of(const void *p) { return ((uintptr_t)p >> 9) & (TC_NENT - 1); }

static inline __attribute__((always_inline)) void count(_Atomic int64_t *side, size_t size, size_t req)
{
    add(&side[C_COUNT], 1);
    add(&side[C_BYTES], (int64_t)size);
    add(&side[C_REQ], (int64_t)req);
}

static inline __attribute__((always_inline)) int64_t share(tcache *t, int i) { return ld(&t->alloc[i]) - ld(&t->freed[i]); }

static inline __attribute__((always_inline)) int tc_try_alloc(hwi_device *d, hwrt_bstream *bs, size_t bytes, int owned,
                                                                 void **out)
{
    tcache *t = hwi_tc;
    if (__builtin_expect(!t || bytes > TC_MAX_SIZE, 0)) return 0;
    size_t rsize = bytes < POOL_ROUND ? POOL_ROUND : (bytes + POOL_ROUND - 1) & ~(POOL_ROUND - 1);
    tc_bin *bin = &t->bins[rsize / POOL_ROUND - 1];
    if (!bin->n || !t->enabled || t->owner != bs || !t->dp ||
        t->dp != __atomic_load_n(&d->pool, __ATOMIC_RELAXED) ||
        t->flush_gen != atomic_load_explicit(&hwi_tc_flush_gen, memory_order_relaxed))
        return 0;
    /* never past a recorded peak: the slow path raises peaks under the lock */
    if (share(t, C_COUNT) + 1 > t->headroom[C_COUNT] ||
        share(t, C_BYTES) + (int64_t)rsize > t->headroom[C_BYTES] ||
        share(t, C_REQ) + (int64_t)bytes > t->headroom[C_REQ] || t->cfg_gen != hwi_cfg_generation_peek())
        return 0;
    pblock *b = bin->blk[--bin->n];
    t->bytes -= b->size;
    b->requested = bytes;          /* nuses is 0 already: tc_try_free caches no block in use */
    b->owned = owned;
    atomic_store_explicit(&b->in_tc, 0, memory_order_relaxed);
    tc_ent *e = &t->ents[ent_of(b->base)];
    *e = (tc_ent){b, atomic_load_explicit(&b->tc_gen, memory_order_relaxed), b->size};
    count(t->alloc, b->size, bytes);
    *out = b->base;
    return 1;
}

/* user: a hwrt_free call, which must not free a tensor's data (the slow path says so) */
static inline __attribute__((always_inline)) int tc_try_free(void *p, int user)
{
    tcache *t = hwi_tc;
    if (!t || !t->enabled || t->flush_gen != atomic_load_explicit(&hwi_tc_flush_gen, memory_order_relaxed))
        return 0;
    tc_ent *e = &t->ents[ent_of(p)];
    pblock *b = e->b;
    /* a tagged block takes the slow path, which frees the tag (no call here) */
    if (!b || b->base != (char *)p || atomic_load_explicit(&b->tc_gen, memory_order_relaxed) != e->gen ||
        b->nuses || (user && b->owned) || b->tag)
        return 0;
    size_t size = e->size, req = b->requested;
    if (size > TC_MAX_SIZE || t->bytes + size > TC_MAX_BYTES) return 0;
    tc_bin *bin = &t->bins[size / POOL_ROUND - 1];
    int n = bin->n;
    if (n == TC_DEPTH) return 0;
    e->b = NULL;
    atomic_store_explicit(&b->in_tc, 1, memory_order_relaxed);
    bin->blk[n] = b;
    bin->n = n + 1;
    t->bytes += size;
    count(t->freed, size, req);
    return 1;
}

#endif
