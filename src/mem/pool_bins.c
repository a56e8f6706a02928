/* Free-block bins of one (device, stream, kind) pool, and block bookkeeping.
 *
 * Bins: one exact bin per 512 B step up to 2 MiB (every small-pool block size), then
 * eight sub-bins per power of two, each kept sorted by size. A two-level bitmap finds
 * the first non-empty bin at or above a request, so the first acceptable block found
 * is the best fit (smallest block that is large enough). Pools of expandable large
 * ranges keep their free blocks in the address index instead (pool_addr.c) and take the
 * lowest-addressed block that is large enough (address-ordered first fit; the
 * highest-addressed one for requests placed at the top, see pool_try_alloc): live blocks
 * pack towards the start of the range and free space gathers in fewer, larger holes
 * whose pages can be unmapped. Guarded by the pool's lock. */
#include "pool_internal.h"

#include <stdlib.h>
#include <string.h>

#define NWORDS ((POOL_NBINS + 63) / 64)

/* Fields not set here (uses, evs, site) are set by whoever needs them. */
pblock *pblock_new(dpool *dp)
{
    pblock *b = dp->spare;
    if (!b) {
        b = calloc(1, sizeof *b);
        if (b) b->bin = -1;
        return b;
    }
    dp->spare = b->fnext;
    b->prev = b->next = b->fprev = b->fnext = NULL;
    b->seg = NULL;
    b->state = B_FREE;
    b->bin = -1;
    b->counted = 0;
    b->freed_at = 0;
    b->nuses = b->nevs = b->nsite = 0;
    b->requested = 0;
    atomic_store_explicit(&b->in_tc, 0, memory_order_relaxed);
    return b;
}

void pblock_put(dpool *dp, pblock *b)
{
    free(b->tag);
    b->tag = NULL;
    b->fnext = dp->spare;
    dp->spare = b;
}

void pblock_spare_free(dpool *dp)
{
    while (dp->spare) {
        pblock *n = dp->spare->fnext;
        free(dp->spare->uses);
        free(dp->spare->evs);
        free(dp->spare);
        dp->spare = n;
    }
}

int pblock_is_split(const pblock *b) { return b->prev || b->next; }

static int bin_of(size_t size)
{
    if (size <= POOL_SMALL_SEG) return (int)(size / POOL_ROUND) - 1;
    int l = 63 - __builtin_clzll((unsigned long long)size);
    int b = POOL_EXACT_BINS + (l - 21) * 8 + (int)((size >> (l - 3)) & 7);
    return b < POOL_NBINS ? b : POOL_NBINS - 1;
}

static void mark(spool *sp, int bin, int on)
{
    int w = bin >> 6;
    uint64_t bit = 1ull << (bin & 63);
    if (on) sp->bitmap[w] |= bit;
    else sp->bitmap[w] &= ~bit;
    if (sp->bitmap[w]) sp->summary[w >> 6] |= 1ull << (w & 63);
    else sp->summary[w >> 6] &= ~(1ull << (w & 63));
}

/* First non-empty bin >= from, or -1: the word of `from`, then the summary. */
static int next_bin(const spool *sp, int from)
{
    if (from >= POOL_NBINS) return -1;
    int w = from >> 6;
    uint64_t m = sp->bitmap[w] & (~0ull << (from & 63));
    if (m) return w * 64 + __builtin_ctzll(m);
    int nw = w + 1;
    for (int sw = nw >> 6; sw < 2; sw++) {
        uint64_t sm = sp->summary[sw];
        if (sw == nw >> 6) sm &= ~0ull << (nw & 63);
        if (sm) {
            int x = sw * 64 + __builtin_ctzll(sm);
            return x * 64 + __builtin_ctzll(sp->bitmap[x]);
        }
    }
    return -1;
}

/* Counted in inactive_split: a free piece of a split plain segment (expandable ranges
 * always have an unmapped free tail, which is not memory held). */
static int counts_split(const pblock *b) { return pblock_is_split(b) && !b->seg->expandable; }

static void count_split(spool *sp, pblock *b)
{
    if (counts_split(b)) {
        b->counted = 1;                       /* remembered for the matching remove */
        pool_stat_add(&sp->dp->st.inactive_split, 1);
        pool_stat_add(&sp->dp->st.inactive_split_bytes, (int64_t)b->size);
    }
}

static void uncount_split(spool *sp, pblock *b)
{
    if (b->counted) {
        b->counted = 0;
        pool_stat_sub(&sp->dp->st.inactive_split, 1);
        pool_stat_sub(&sp->dp->st.inactive_split_bytes, (int64_t)b->size);
    }
}

void pbin_insert(spool *sp, pblock *b)
{
    if (__builtin_expect(sp->addr_order, 0)) {
        b->bin = PADDR_BIN;
        paddr_insert(sp, b);
        count_split(sp, b);
        return;
    }
    int bin = bin_of(b->size);
    b->bin = bin;
    pblock *prev = NULL, *next = sp->bins[bin];
    if (bin >= POOL_EXACT_BINS)               /* keep large bins sorted by size */
        while (next && next->size < b->size) { prev = next; next = next->fnext; }
    b->fprev = prev;
    b->fnext = next;
    if (next) next->fprev = b;
    if (prev) prev->fnext = b;
    else sp->bins[bin] = b;
    mark(sp, bin, 1);
    count_split(sp, b);
}

void pbin_remove(spool *sp, pblock *b)
{
    if (b->bin < 0) return;
    if (__builtin_expect(b->bin == PADDR_BIN, 0)) {
        paddr_remove(sp, b);
        b->bin = -1;
        uncount_split(sp, b);
        return;
    }
    if (b->fprev) b->fprev->fnext = b->fnext;
    else sp->bins[b->bin] = b->fnext;
    if (b->fnext) b->fnext->fprev = b->fprev;
    if (!sp->bins[b->bin]) mark(sp, b->bin, 0);
    b->bin = -1;
    b->fnext = b->fprev = NULL;
    uncount_split(sp, b);
}

void pbin_use_addr_order(spool *sp)
{
    if (sp->addr_order) return;
    pblock *moved = NULL;                     /* out of the bins first, then into the index */
    for (int bin = next_bin(sp, 0); bin >= 0; bin = next_bin(sp, 0)) {
        pblock *b = sp->bins[bin];
        pbin_remove(sp, b);
        b->fnext = moved;
        moved = b;
    }
    sp->addr_order = 1;
    while (moved) {
        pblock *b = moved;
        moved = b->fnext;
        b->fnext = NULL;
        pbin_insert(sp, b);
    }
}

/* Would the pool hand out b for a request of size bytes? Dedicated segments stay for
 * requests of about their size; max_split_size (msz) keeps
 * big blocks whole: small requests may not take them, and big requests take them only
 * when little would be wasted. */
int pblock_acceptable(const pblock *b, size_t size, size_t msz)
{
    if (b->size < size) return 0;
    /* a plain segment made for one large request is not carved up by a request that
     * would leave more than POOL_DEDICATED_SLACK of the block unused: that request
     * gets a segment of its own, and under pressure the retry gives the unused one
     * back to the device, whose pages then serve any size (split, its rest would stay
     * pinned to the segment by the smaller block) */
    if (b->seg->dedicated && b->size > size + POOL_DEDICATED_SLACK) return 0;
    /* max_split_size concerns blocks of dedicated segments: the rest of a shared one
     * stays usable by requests below it whatever the setting (PyTorch's limit of
     * max_split_size > 20 MiB, the shared segment size, says the same) */
    if (!msz || b->seg->expandable || !b->seg->dedicated) return 1;
    if (size < msz && b->size >= msz) return 0;
    if (size >= msz && b->size >= size + POOL_OVERSIZE_SLACK) return 0;
    return 1;
}

pblock *pbin_search(spool *sp, size_t size, size_t msz, int top)
{
    if (__builtin_expect(sp->addr_order, 0)) return paddr_search(sp, size, msz, top);
    int tries = 0;
    for (int bin = next_bin(sp, bin_of(size)); bin >= 0; bin = next_bin(sp, bin + 1)) {
        for (pblock *b = sp->bins[bin]; b; b = b->fnext) {
            if (pblock_acceptable(b, size, msz)) return b;
            if (++tries > 256) return NULL;   /* bounded: the slow path allocates */
            if (bin < POOL_EXACT_BINS) break; /* an exact bin holds one size */
        }
    }
    return NULL;
}

/* Put a free block back, merged with free neighbours (never with PENDING ones). */
pblock *pblock_coalesce_insert(pblock *b)
{
    spool *sp = b->seg->sp;
    pblock *p = b->prev, *n = b->next;
    if (p && p->state == B_FREE) {
        pbin_remove(sp, p);
        p->size += b->size;
        p->next = n;
        if (n) n->prev = p;
        if (b->freed_at > p->freed_at) p->freed_at = b->freed_at;
        pblock_put(sp->dp, b);
        b = p;
    }
    if (n && n->state == B_FREE) {
        pbin_remove(sp, n);
        b->size += n->size;
        b->next = n->next;
        if (n->next) n->next->prev = b;
        if (n->freed_at > b->freed_at) b->freed_at = n->freed_at;
        pblock_put(sp->dp, n);
    }
    b->state = B_FREE;
    pbin_insert(sp, b);
    return b;
}

/* Cut b (out of the bins) to size bytes; the rest goes back to the bins. */
void pblock_split(pblock *b, size_t size)
{
    pblock *r = pblock_new(b->seg->dp);
    if (!r) return;                           /* host OOM: hand out the whole block */
    r->base = b->base + size;
    r->size = b->size - size;
    r->seg = b->seg;
    r->state = B_FREE;
    r->freed_at = b->freed_at;
    r->prev = b;
    r->next = b->next;
    if (b->next) b->next->prev = r;
    b->next = r;
    b->size = size;
    pblock_coalesce_insert(r);
}

void pblock_split_high(pblock *b, size_t size)
{
    pblock *r = pblock_new(b->seg->dp);
    if (!r) return;                           /* host OOM: hand out the whole block */
    r->base = b->base;
    r->size = b->size - size;
    r->seg = b->seg;
    r->state = B_FREE;
    r->freed_at = b->freed_at;
    r->prev = b->prev;
    r->next = b;
    if (b->prev) b->prev->next = r;
    else b->seg->first = r;
    b->prev = r;
    b->base += r->size;
    b->size = size;
    pblock_coalesce_insert(r);
}
