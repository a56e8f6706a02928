/* New device memory for the pool: segment sizing (shared, dedicated, the small pool's 2
 * MiB), expandable address ranges, and mapping the pages an expandable block needs. Each
 * asks its caller (pool_want) to sync and release cached memory first when growing
 * would pass the reserved high-water mark or the garbage-collection threshold.
 * Guarded by the pool's lock. */
#include "../base/config.h"
#include "../base/status.h"
#include "../runtime/device_ops.h"
#include "pool_internal.h"

/* A new large segment for a request of rsize: a dedicated one of the request rounded to
 * the granule, or, below shared_below, a shared one of at least shared_seg bytes that
 * holds a whole number of blocks of the request's size (rounded to the granule): K/V
 * caches and activations come in runs of equal sizes, and 64 MiB of 14 MiB blocks would
 * leave 8 MiB that the next block of the run cannot use (hwrt-bench pool
 * --min-capacity, docs/memory.md). A dedicated segment holds two blocks of the request
 * when rounding one to the granule would waste half a granule or more and two fit in a
 * shared segment's size (a K/V buffer of 20 MiB + 1 KiB: 42 MiB for two, not 22 MiB
 * each); its second block serves the next request of the run. */
static size_t large_seg_size(dpool *dp, size_t rsize)
{
    size_t g = pseg_granule(dp);
    if (g < POOL_SMALL_SEG) g = POOL_SMALL_SEG;
    if (rsize >= dp->shared_below) {
        size_t one = pool_round_to(rsize, g), two = pool_round_to(2 * rsize, g);
        return 2 * rsize <= dp->shared_seg && two - 2 * rsize < 2 * (one - rsize) ? two : one;
    }
    size_t size = pool_round_to((dp->shared_seg + rsize - 1) / rsize * rsize, g);
    return size > dp->shared_seg ? size : dp->shared_seg;
}

/* Before reserved grows by need (a segment, or pages to map): does the caller have to
 * sync the device and give cached memory back first (*want)? When growing would pass
 * the reserved high-water mark while something is trimmable (WANT_TRIM), or the
 * garbage-collection threshold (WANT_GC); no_trim / no_gc: that was done already. */
static int clean_first(dpool *dp, size_t need, size_t cap, int no_gc, int no_trim,
                       pool_want *want)
{
    size_t resv = (size_t)dp->st.reserved_bytes.current;
    if (!no_trim && resv + need > dp->hw_reserved && pool_trimmable(dp)) {
        dp->trim_need = need;
        *want = WANT_TRIM;
        return 1;
    }
    if (!no_gc && pool_gc_wanted(dp, need, cap)) {
        *want = WANT_GC;
        return 1;
    }
    return 0;
}

static void note_high_water(dpool *dp)
{
    size_t resv = (size_t)dp->st.reserved_bytes.current;
    if (resv > dp->hw_reserved) dp->hw_reserved = resv;
}

size_t pool_device_total(dpool *dp)
{
    size_t f, t, o;
    if (hwi_dev_mem_info(dp->dev, &f, &t, &o) != HWRT_SUCCESS) return 0;
    return t;
}

/* The plain segment a request of rsize (of kind) asks for first, and in *exact the
 * smallest that would do: the 20 MiB segment of a small large request is a convenience,
 * so when the cap or the device cannot give it, the request rounded to the granule will
 * do (the first ask is that one when only it fits under the cap). */
static size_t first_segment(dpool *dp, int kind, size_t rsize, size_t cap, size_t *exact)
{
    size_t need = kind == PK_SMALL ? POOL_SMALL_SEG : large_seg_size(dp, rsize);
    size_t g = pseg_granule(dp);
    *exact = pool_round_to(rsize, g > POOL_SMALL_SEG ? g : POOL_SMALL_SEG);
    if (kind == PK_SMALL || *exact > need) *exact = need;
    size_t resv = (size_t)dp->st.reserved_bytes.current;
    if (cap && resv + need > cap && resv + *exact <= cap) need = *exact;
    return need;
}

/* A fresh segment (or expandable range) for sp; its whole-range block, out of the bins. */
hwrt_status pool_grow(dpool *dp, spool *sp, size_t rsize, size_t cap, int no_gc, int no_trim,
                        pool_want *want, pblock **out)
{
    pseg *seg = NULL;
    if (pool_use_expandable(dp)) {
        /* the range costs address space, not capacity: half the device for the large
         * kind, so that one range holds a stream's large blocks in one address order
         * (fewer range ends, each of which strands part of a page); an eighth when that
         * much address space is not to be had, and for the small kind and the 256 KiB -
         * 1 MiB one (PK_SHARED: address-ordered like the large kind) */
        size_t g = pseg_granule(dp), total = pool_device_total(dp);
        size_t va = pool_round_to(rsize, g);
        size_t chunks[2] = {pool_round_to(total / (sp->kind == PK_LARGE ? 2 : 8), g), pool_round_to(total / 8, g)};
        for (int i = 0; i < 2; i++) {
            size_t len = va < chunks[i] ? chunks[i] : va;
            if (i && len == (va < chunks[0] ? chunks[0] : va)) break;   /* tried that */
            /* a range the device could never back is not reserved (nor its granule map
             * allocated): the plain path below fails it with the OOM sentence */
            if (len <= total && pseg_new(dp, sp, len, 1, &seg) == HWRT_SUCCESS) {
                if (sp->kind != PK_SMALL) pbin_use_addr_order(sp);
                *out = seg->first;
                return HWRT_SUCCESS;
            }
        }                      /* no address space left: fall back to a plain segment */
    }
    size_t exact, need = first_segment(dp, sp->kind, rsize, cap, &exact);
    size_t resv = (size_t)dp->st.reserved_bytes.current;
    /* growing past the high-water mark while whole segments sit cached (ones the
     * dedicated rule kept for their own size, say): give those back first, so the peak
     * does not grow by what the cache holds */
    if (clean_first(dp, need, cap, no_gc, no_trim, want)) return HWRT_ERROR_OUT_OF_MEMORY;
    if (cap && resv + need > cap)
        return hwi_err(HWRT_ERROR_OUT_OF_MEMORY, "the max_device_memory cap is reached");
    hwrt_status st = pseg_new(dp, sp, need, 0, &seg);
    /* a shared segment made larger for whole blocks: the plain shared size first */
    if (st == HWRT_ERROR_OUT_OF_MEMORY && sp->kind != PK_SMALL && rsize < dp->shared_below &&
        exact < dp->shared_seg && dp->shared_seg < need)
        st = pseg_new(dp, sp, dp->shared_seg, 0, &seg);
    if (st == HWRT_ERROR_OUT_OF_MEMORY && exact < need) st = pseg_new(dp, sp, exact, 0, &seg);
    HWI_TRY(st);
    /* dedicated: made for one large request, or two of its size (also when its rounded
     * size happens to equal the shared segments' size); blocks of it keep to requests of
     * about their size (pblock_acceptable); a segment of the shared kind is shared even when the cap
     * or the device made it the request's size, so that its rest serves the next ones */
    seg->dedicated = sp->kind == PK_LARGE && !(rsize < dp->shared_below &&
                     (seg->size == large_seg_size(dp, rsize) || seg->size == dp->shared_seg));
    note_high_water(dp);
    *out = seg->first;
    return HWRT_SUCCESS;
}

/* Map what an expandable block needs; *want asks the caller to sync and clean first.
 * Free mapped granules are unmapped (which needs a device sync) only when mapping more
 * would raise reserved above its high-water mark: below it, cached pages are reused
 * freely; at it, holes are given back first so the peak does not grow. */
hwrt_status pool_map_block(dpool *dp, pblock *b, size_t cap, int no_gc, int no_trim,
                             pool_want *want)
{
    size_t need = pseg_unmapped_in(b->seg, b->base, b->size);
    if (!need) return HWRT_SUCCESS;
    if (clean_first(dp, need, cap, no_gc, no_trim, want)) return HWRT_ERROR_OUT_OF_MEMORY;
    HWI_TRY(pseg_map_range(b->seg, b->base, b->size, cap));
    note_high_water(dp);
    return HWRT_SUCCESS;
}

/* ---- the growth rule as pool_headroom.c reads it (under the lock) ---- */

size_t pool_unsynced_growth(dpool *dp, size_t rsize, size_t cap)
{
    size_t resv = (size_t)dp->st.reserved_bytes.current;
    if (pool_use_expandable(dp)) {
        /* map_block: mapping past the high-water mark while something is trimmable, or
         * past the garbage-collection threshold, syncs first */
        size_t room = SIZE_MAX;
        if (pool_trimmable(dp)) room = dp->hw_reserved > resv ? dp->hw_reserved - resv : 0;
        double thr = hwi_cfg_double(HWI_CFG_GC_THRESHOLD);
        if (thr > 0) {
            size_t limit = cap ? cap : pool_device_total(dp);
            size_t at = (size_t)(thr * (double)limit), gc = at > resv ? at - resv : 0;
            if (gc < room && pool_gc_wanted(dp, gc + 1, cap)) room = gc;
        }
        return room;
    }
    /* pool_grow: the segment it asks for first decides whether it syncs first */
    size_t exact, need = first_segment(dp, pool_kind_of(dp, rsize), rsize, cap, &exact);
    if (resv + need > dp->hw_reserved && pool_trimmable(dp)) return 0;
    if (pool_gc_wanted(dp, need, cap)) return 0;
    return SIZE_MAX;
}
