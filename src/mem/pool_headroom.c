/* The pool's headroom: the largest block obtainable without a device sync (see
 * pool_headroom.h). It reads the pool's structures under its lock and applies the
 * policy's own rules (pool.c's rounding, kind and growth rules, pool_bins.c's
 * acceptability), so it answers what an allocation would do without doing it. */
#include "pool_headroom.h"
#include "pool_internal.h"
#include "../base/config.h"
#include "../runtime/device_ops.h"

static size_t round_down(size_t n, size_t g) { return n / g * g; }

/* Bytes of new physical memory the pool may commit now without a sync. */
static size_t page_room(dpool *dp, hwi_device *d, size_t rsize, size_t cap)
{
    size_t f = 0, t = 0, o = 0;
    if (hwi_dev_mem_info(d, &f, &t, &o) != HWRT_SUCCESS) return 0;
    size_t room = f;
    size_t resv = dp ? (size_t)dp->st.reserved_bytes.current : 0;
    if (cap) {
        size_t c = cap > resv ? cap - resv : 0;
        if (c < room) room = c;
    }
    if (dp) {
        size_t g = pool_unsynced_growth(dp, rsize, cap);
        if (g < room) room = g;
    }
    return room;
}

/* The first bytes of the free block b that can be handed out with room more bytes of
 * pages mapped (all of b in a plain segment). */
static size_t usable_prefix(pblock *b, size_t room)
{
    pseg *s = b->seg;
    if (!s->expandable) return b->size;
    if (pseg_unmapped_in(s, b->base, b->size) <= room) return b->size;
    size_t off = (size_t)(b->base - s->base), end = off + b->size, x = off;
    size_t g = off / s->gran;
    for (; g * s->gran < end; g++) {
        if (!s->gmap[g]) {
            if (room < s->gran) break;
            room -= s->gran;
        }
        x = (g + 1) * s->gran;
    }
    if (x > end) x = end;
    return x - off;
}

size_t hwi_pool_headroom(hwi_device *d, hwrt_bstream *bs, size_t bytes)
{
    size_t cap = (size_t)hwi_cfg_int(HWI_CFG_MAX_DEVICE_MEMORY);
    size_t msz = (size_t)hwi_cfg_int(HWI_CFG_MAX_SPLIT_SIZE);
    dpool *dp = __atomic_load_n(&d->pool, __ATOMIC_ACQUIRE);
    if (!dp)                                   /* nothing cached: new segments only */
        return round_down(page_room(NULL, d, 0, cap), POOL_SMALL_SEG);
    tc_leave_other(dp);
    pthread_mutex_lock(&dp->mu);
    pool_process_events(dp);
    size_t rsize = pool_round_size(bytes);
    int kind = pool_kind_of(dp, rsize);
    size_t room = page_room(dp, d, rsize, cap);
    size_t g = pseg_granule(dp);
    if (g < POOL_SMALL_SEG) g = POOL_SMALL_SEG;
    size_t best = round_down(room, g);         /* a new segment (or range pages) */
    for (pseg *s = dp->segs; s; s = s->next) {
        if (s->sp->owner != bs || s->sp->kind != kind) continue;
        for (pblock *b = s->first; b; b = b->next) {
            if (b->state != B_FREE || b->bin < 0 || b->size <= best ||
                !pblock_acceptable(b, rsize < b->size ? rsize : b->size, msz))
                continue;
            size_t u = usable_prefix(b, room);
            if (u > best) best = u;
        }
    }
    /* the block the pool itself would take for this request (best fit, or in an
     * expandable range the lowest-addressed one, placed at the top for large ones):
     * when its pages cannot be mapped without a sync, the request cannot have any */
    spool *sp = NULL;
    for (spool *q = dp->spools; q && !sp; q = q->next)
        if (q->owner == bs && q->kind == kind) sp = q;
    int top = sp && sp->addr_order && rsize >= dp->shared_seg;
    pblock *b = sp ? pbin_search(sp, rsize, msz, top) : NULL;
    if (b) {
        size_t need = pseg_unmapped_in(b->seg, top ? b->base + b->size - rsize : b->base, rsize);
        if (need > room) best = 0;
        else if (best < rsize) best = rsize;
    }
    pthread_mutex_unlock(&dp->mu);
    return best;
}
