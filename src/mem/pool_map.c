/* Pointer registry of the pool: live blocks by exact base address (an open-addressing
 * hash, so hwrt_free is O(1)), and segments sorted by address (binary search, for
 * interior pointers and "is this device memory?"). Guarded by hwi_pool_mu. */
#include "pool_internal.h"

#include <stdlib.h>
#include <string.h>

static pblock **slots;          /* NULL = empty */
static size_t nslots, nused;    /* nslots is a power of two */

static pseg **segs;             /* sorted by base */
static size_t nsegs, cap_segs;

static inline size_t hash_ptr(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 29;
    return (size_t)x;
}

static int grow(void)
{
    size_t nn = nslots ? nslots * 2 : 1024;
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
    slots = ns;
    nslots = nn;
    return 1;
}

int pmap_put(pblock *b)
{
    if ((nused + 1) * 2 > nslots && !grow()) return 0;
    size_t j = hash_ptr(b->base) & (nslots - 1);
    while (slots[j]) j = (j + 1) & (nslots - 1);
    slots[j] = b;
    nused++;
    return 1;
}

pblock *pmap_get(const void *base)
{
    if (!nslots) return NULL;
    size_t j = hash_ptr(base) & (nslots - 1);
    for (pblock *b; (b = slots[j]); j = (j + 1) & (nslots - 1))
        if (b->base == base) return b;
    return NULL;
}

/* Remove and return the block at base (NULL if none). Backward-shift deletion keeps
 * probe chains intact without tombstones. */
pblock *pmap_take(const void *base)
{
    if (!nslots) return NULL;
    size_t mask = nslots - 1, j = hash_ptr(base) & mask;
    while (slots[j] && slots[j]->base != base) j = (j + 1) & mask;
    pblock *found = slots[j];
    if (!found) return NULL;
    slots[j] = NULL;
    nused--;
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

void pmap_clear(void)
{
    free(slots);
    slots = NULL;
    nslots = nused = 0;
    free(segs);
    segs = NULL;
    nsegs = cap_segs = 0;
}

static size_t seg_upper(const void *p)      /* first segment with base > p */
{
    size_t lo = 0, hi = nsegs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (segs[mid]->base <= (const char *)p) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

int pseg_index_add(pseg *s)
{
    if (nsegs == cap_segs) {
        size_t nc = cap_segs ? cap_segs * 2 : 64;
        pseg **n = realloc(segs, nc * sizeof *n);
        if (!n) return 0;
        segs = n;
        cap_segs = nc;
    }
    size_t i = seg_upper(s->base);
    memmove(&segs[i + 1], &segs[i], (nsegs - i) * sizeof *segs);
    segs[i] = s;
    nsegs++;
    return 1;
}

void pseg_index_del(pseg *s)
{
    size_t i = seg_upper(s->base);
    if (i == 0 || segs[i - 1] != s) return;
    memmove(&segs[i - 1], &segs[i], (nsegs - i) * sizeof *segs);
    nsegs--;
}

pseg *pseg_index_find(const void *p)
{
    size_t i = seg_upper(p);
    if (i == 0) return NULL;
    pseg *s = segs[i - 1];
    return (const char *)p < s->base + s->size ? s : NULL;
}
