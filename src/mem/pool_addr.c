/* The address-ordered index of one pool's free blocks, for pools of expandable large
 * ranges (spool.addr_order): a treap keyed by address order (older range first, then
 * lower address), each node holding the largest block size of its subtree, so the
 * lowest-addressed (or highest-addressed) block of at least a given size is found in
 * O(log n) without scanning. Blocks in it have bin == PADDR_BIN; tl/tr are the
 * children. The priority is a hash of the block struct's address (stable while the
 * block is in the index). Guarded by the pool's lock. */
#include "pool_internal.h"

static inline uint64_t prio(const pblock *b)
{
    uint64_t x = (uint64_t)(uintptr_t)b;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

/* Address order across a pool's ranges: older range first, then lower address. */
static inline int before(const pblock *a, const pblock *b)
{
    if (a->seg != b->seg) {
        if (a->seg->created_seq != b->seg->created_seq)
            return a->seg->created_seq < b->seg->created_seq;
        return a->seg->base < b->seg->base;
    }
    return a->base < b->base;
}

static inline size_t tmax(const pblock *t) { return t ? t->tmax : 0; }

static inline void update(pblock *t)
{
    size_t m = t->size;
    if (tmax(t->tl) > m) m = t->tl->tmax;
    if (tmax(t->tr) > m) m = t->tr->tmax;
    t->tmax = m;
}

/* Split t into the blocks before key (*l) and the rest (*r). */
static void split(pblock *t, const pblock *key, pblock **l, pblock **r)
{
    if (!t) {
        *l = *r = NULL;
        return;
    }
    if (before(t, key)) {
        split(t->tr, key, &t->tr, r);
        *l = t;
    } else {
        split(t->tl, key, l, &t->tl);
        *r = t;
    }
    update(t);
}

/* Join l and r, every block of l before every block of r. */
static pblock *merge(pblock *l, pblock *r)
{
    if (!l) return r;
    if (!r) return l;
    if (prio(l) > prio(r)) {
        l->tr = merge(l->tr, r);
        update(l);
        return l;
    }
    r->tl = merge(l, r->tl);
    update(r);
    return r;
}

static pblock *insert(pblock *t, pblock *b)
{
    if (!t) return b;
    if (prio(b) > prio(t)) {
        split(t, b, &b->tl, &b->tr);
        update(b);
        return b;
    }
    if (before(b, t)) t->tl = insert(t->tl, b);
    else t->tr = insert(t->tr, b);
    update(t);
    return t;
}

static pblock *erase(pblock *t, pblock *b)
{
    if (!t) return NULL;                      /* not there: nothing to do */
    if (t == b) return merge(b->tl, b->tr);
    if (before(b, t)) t->tl = erase(t->tl, b);
    else t->tr = erase(t->tr, b);
    update(t);
    return t;
}

void paddr_insert(spool *sp, pblock *b)
{
    b->tl = b->tr = NULL;
    b->tmax = b->size;
    sp->aroot = insert(sp->aroot, b);
}

void paddr_remove(spool *sp, pblock *b)
{
    sp->aroot = erase(sp->aroot, b);
    b->tl = b->tr = NULL;
}

/* The first acceptable block in address order (top: the last) in t, subtrees without a
 * block of size bytes skipped. When every block of the size is acceptable (expandable
 * ranges: pblock_acceptable is a size test there) the descent never backtracks. */
static pblock *first_fit(pblock *t, size_t size, size_t msz, int top)
{
    while (t && t->tmax >= size) {
        pblock *near = top ? t->tr : t->tl, *far = top ? t->tl : t->tr;
        if (tmax(near) >= size) {
            pblock *r = first_fit(near, size, msz, top);
            if (r) return r;
        }
        if (pblock_acceptable(t, size, msz)) return t;
        t = far;
    }
    return NULL;
}

pblock *paddr_search(spool *sp, size_t size, size_t msz, int top)
{
    return first_fit(sp->aroot, size, msz, top);
}
