/* Pointer registry of a pool: live blocks by exact base address (an open-addressing
 * hash, so hwrt_free is O(1)), and segments sorted by address (binary search, for
 * interior pointers and "is this device memory?"), both guarded by the pool's lock.
 * And the list of every pool, for pointers whose device is not known (hwrt_free, copy
 * validation): each pool publishes the address bounds of its segments, so a lookup
 * locks only the pool whose bounds contain the pointer (one, unless the backends'
 * ranges interleave). */
#include "pool_internal.h"

#include <stdlib.h>
#include <string.h>

/* Pools are added when created and removed when destroyed (hwrt_shutdown); lookups
 * walk the list without a lock. */
static dpool *_Atomic pools;
static pthread_mutex_t pools_mu = PTHREAD_MUTEX_INITIALIZER;

void pool_list_add(dpool *dp)
{
    pthread_mutex_lock(&pools_mu);
    atomic_store_explicit(&dp->next_pool, atomic_load(&pools), memory_order_relaxed);
    atomic_store_explicit(&pools, dp, memory_order_release);
    pthread_mutex_unlock(&pools_mu);
}

void pool_list_del(dpool *dp)
{
    pthread_mutex_lock(&pools_mu);
    for (dpool *_Atomic *pp = &pools; atomic_load(pp); pp = &atomic_load(pp)->next_pool)
        if (atomic_load(pp) == dp) {
            atomic_store(pp, atomic_load(&dp->next_pool));
            break;
        }
    pthread_mutex_unlock(&pools_mu);
}

dpool *pool_list_first(void) { return atomic_load_explicit(&pools, memory_order_acquire); }

dpool *pool_lock_containing(const void *p, pseg **seg)
{
    uintptr_t a = (uintptr_t)p;
    for (dpool *dp = pool_list_first(); dp;
         dp = atomic_load_explicit(&dp->next_pool, memory_order_acquire)) {
        if (a < atomic_load_explicit(&dp->lo, memory_order_acquire) ||
            a >= atomic_load_explicit(&dp->hi, memory_order_acquire))
            continue;
        pthread_mutex_lock(&dp->mu);
        pseg *s = pseg_index_find(dp, p);
        if (s) {
            *seg = s;
            return dp;
        }
        pthread_mutex_unlock(&dp->mu);
    }
    return NULL;
}

static inline size_t hash_ptr(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 29;
    return (size_t)x;
}

static int grow(dpool *dp)
{
    size_t nn = dp->nslots ? dp->nslots * 2 : 1024;
    pblock **slots = dp->slots;
    size_t nslots = dp->nslots;
    pblock **ns = calloc(nn, sizeof *ns);
    if (!ns) return 0;
    for (size_t i = 0; i < nslots; i++) {
        pblock *b = slots[i];
        if (!b) continue;
        size_t j = hash_ptr(b->base) & (nn - 1);
        while (ns[j]) j = (j + 1) & (nn - 1);
        ns[j] = b;
    }
    free(slots);
    dp->slots = ns;
    dp->nslots = nn;
    return 1;
}

int pmap_put(dpool *dp, pblock *b)
{
    if ((dp->nused + 1) * 2 > dp->nslots && !grow(dp)) return 0;
    pblock **slots = dp->slots;
    size_t nslots = dp->nslots;
    size_t j = hash_ptr(b->base) & (nslots - 1);
    while (slots[j]) j = (j + 1) & (nslots - 1);
    slots[j] = b;
    dp->nused++;
    return 1;
}

pblock *pmap_get(dpool *dp, const void *base)
{
    pblock **slots = dp->slots;
    size_t nslots = dp->nslots;
    if (!nslots) return NULL;
    size_t j = hash_ptr(base) & (nslots - 1);
    for (pblock *b; (b = slots[j]); j = (j + 1) & (nslots - 1))
        if (b->base == base) return b;
    return NULL;
}

/* Remove and return the block at base (NULL if none). Backward-shift deletion keeps
 * probe chains intact without tombstones. */
pblock *pmap_take(dpool *dp, const void *base)
{
    pblock **slots = dp->slots;
    size_t nslots = dp->nslots;
    if (!nslots) return NULL;
    size_t mask = nslots - 1, j = hash_ptr(base) & mask;
    while (slots[j] && slots[j]->base != base) j = (j + 1) & mask;
    pblock *found = slots[j];
    if (!found) return NULL;
    slots[j] = NULL;
    dp->nused--;
    for (size_t k = (j + 1) & mask; slots[k]; k = (k + 1) & mask) {
        size_t home = hash_ptr(slots[k]->base) & mask;
        /* move slots[k] into the hole if its home is not in (j, k] (cyclically) */
        int between = j <= k ? (home > j && home <= k) : (home > j || home <= k);
        if (!between) {
            slots[j] = slots[k];
            slots[k] = NULL;
            j = k;
        }
    }
    return found;
}

void pmap_clear(dpool *dp)
{
    free(dp->slots);
    dp->slots = NULL;
    dp->nslots = dp->nused = 0;
    free(dp->sidx);
    dp->sidx = NULL;
    dp->nsidx = dp->cap_sidx = 0;
}

static size_t seg_upper(const dpool *dp, const void *p)      /* first segment with base > p */
{
    pseg **segs = dp->sidx;
    size_t lo = 0, hi = dp->nsidx;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (segs[mid]->base <= (const char *)p) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

int pseg_index_add(pseg *s)
{
    dpool *dp = s->dp;
    if (dp->nsidx == dp->cap_sidx) {
        size_t nc = dp->cap_sidx ? dp->cap_sidx * 2 : 64;
        pseg **n = realloc(dp->sidx, nc * sizeof *n);
        if (!n) return 0;
        dp->sidx = n;
        dp->cap_sidx = nc;
    }
    size_t i = seg_upper(dp, s->base);
    memmove(&dp->sidx[i + 1], &dp->sidx[i], (dp->nsidx - i) * sizeof *dp->sidx);
    dp->sidx[i] = s;
    dp->nsidx++;
    /* the bounds only widen (a lookup of a stale pointer then takes this lock and finds
     * nothing); a new segment is published before its pointers are handed out */
    uintptr_t a = (uintptr_t)s->base, e = a + s->size;
    if (!atomic_load(&dp->hi) || a < atomic_load(&dp->lo))
        atomic_store_explicit(&dp->lo, a, memory_order_release);
    if (e > atomic_load(&dp->hi)) atomic_store_explicit(&dp->hi, e, memory_order_release);
    return 1;
}

void pseg_index_del(pseg *s)
{
    dpool *dp = s->dp;
    size_t i = seg_upper(dp, s->base);
    if (i == 0 || dp->sidx[i - 1] != s) return;
    memmove(&dp->sidx[i - 1], &dp->sidx[i], (dp->nsidx - i) * sizeof *dp->sidx);
    dp->nsidx--;
}

pseg *pseg_index_find(dpool *dp, const void *p)
{
    size_t i = seg_upper(dp, p);
    if (i == 0) return NULL;
    pseg *s = dp->sidx[i - 1];
    return (const char *)p < s->base + s->size ? s : NULL;
}
