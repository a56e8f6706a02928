/* The stream-ordered caching device-memory pool (PyTorch/CUDA-caching-allocator design,
 * backend-agnostic: it only calls the backend's segment_alloc/free, va_* and event
 * slots).
 *
 * - Requests round up to 512 B. Requests <= 1 MiB come from 2 MiB "small" segments,
 *   larger ones from "large" segments (shared ones of 20 MiB below 10 MiB, on devices of
 *   2 GiB or more 64 MiB below 20 MiB, made larger to hold a whole number of blocks of
 *   the request that creates one; else the request rounded to the device granule, a
 *   dedicated segment), or from expandable address ranges per stream (half the device
 *   for large blocks, an eighth for small ones) whose granules are mapped on demand
 *   (expandable_segments). In plain mode the shared segments are a pool of their own
 *   (kind_of), which also takes requests of 256 KiB - 1 MiB.
 * - Free blocks are kept per (device, stream it was allocated for, small/large), best fit
 *   (in expandable large ranges: the lowest-addressed block that fits, and for requests
 *   of a shared segment's size or more the highest, placed at its end), split on
 *   allocation and coalesced with free neighbours on free.
 * - A block is reused at once by work on its own stream (stream order makes that safe);
 *   other streams recorded on it (hwi_pool_record_stream) get a backend event at free
 *   time and the block stays PENDING until every event has completed. hwi_pool_free
 *   never blocks.
 * - Before growing past its peak of reserved bytes it syncs the device and gives back
 *   whole cached segments (and unmaps free pages of expandable ranges). Before failing
 *   (cap or device), it syncs, returns every cached segment and free page and retries;
 *   then a free block of another of the device's pools may serve it (another stream's
 *   for a request on a stream, which is recorded on the block), or, in expandable
 *   ranges, the placement that needs the fewest new pages;
 *   only then does it fail with a breakdown.
 * - The pool is an object of its device (hwi_device.pool, created on first use, destroyed
 *   at hwrt_shutdown) with its own lock; it reaches the backend only through the
 *   device's hwi_dev_* wrappers. Pointers whose device is unknown (hwrt_free, copies)
 *   are found through the list of pools (pool_map.c), locking one pool. */
#include "pool_tcache.h"
#include "alloc_trace.h"
#include "mem_events.h"
#include "../base/config.h"
#include "../base/log.h"
#include "../base/status.h"
#include "../runtime/device_ops.h"

#include <execinfo.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t create_mu = PTHREAD_MUTEX_INITIALIZER;   /* creating a device's pool */

/* What an allocation attempt asks of its caller besides its status (an out-parameter,
 * never a status): sync the device, clean up, try again. The attempt then returns
 * HWRT_ERROR_OUT_OF_MEMORY without setting the error sentence. */
typedef enum pool_want { WANT_NONE, WANT_GC, WANT_TRIM } pool_want;

hwrt_status hwi_pool_oom(dpool *dp, size_t req, size_t rsize, const char *cause);


/* Every request rounds up to 512 B; with roundup_power2_divisions N (PyTorch's), one
 * above 512 B x N rounds up to the next of N equal steps between two powers of two (N is
 * taken down to a power of two; 1: the next power of two), so that sizes differing a
 * little share cached blocks, at the cost of the rounding. */
static size_t round_size(size_t n)
{
    if (n < POOL_ROUND) return POOL_ROUND;
    size_t div = (size_t)hwi_cfg_int(HWI_CFG_ROUNDUP_POWER2_DIVISIONS);
    if (div && n > POOL_ROUND * div && n <= ((size_t)1 << 62)) {
        int l = 63 - __builtin_clzll((unsigned long long)n);
        size_t floor2 = (size_t)1 << l;
        if (n == floor2) return n;
        size_t step = floor2 >> (63 - __builtin_clzll((unsigned long long)div));
        if (step < POOL_ROUND) step = POOL_ROUND;
        return (n + step - 1) & ~(step - 1);
    }
    return (n + POOL_ROUND - 1) & ~(POOL_ROUND - 1);
}
static size_t round_to(size_t n, size_t g) { return (n + g - 1) / g * g; }

static hwrt_status pool_part_close(hwi_device *d, void *part)
{
    hwi_pool_destroy(d);
    return HWRT_SUCCESS;
}

static const hwi_dev_part_ops pool_part = {.close = pool_part_close};

/* The device's pool, created on first use. */
static dpool *dpool_get(hwi_device *d)
{
    dpool *dp = __atomic_load_n(&d->pool, __ATOMIC_ACQUIRE);
    if (dp) return dp;
    pthread_mutex_lock(&create_mu);
    dp = __atomic_load_n(&d->pool, __ATOMIC_ACQUIRE);
    if (dp) {
        pthread_mutex_unlock(&create_mu);
        return dp;
    }
    dp = calloc(1, sizeof *dp);
    if (!dp) {
        pthread_mutex_unlock(&create_mu);
        return NULL;
    }
    pthread_mutex_init(&dp->mu, NULL);
    dp->dev = d;
    dp->device = d->id;
    dp->st.max_split_size = -1;
    /* the large pool's shared segments: PyTorch's 20 MiB for requests below 10 MiB; on a
     * device of 2 GiB or more 64 MiB below 20 MiB, where blocks of 1-20 MiB with mixed
     * lifetimes (K/V caches, activations) pin fewer segments (hwrt-bench pool
     * --min-capacity, docs/memory.md) */
    size_t f, t = 0, o;
    if (hwi_dev_mem_info(d, &f, &t, &o) != HWRT_SUCCESS) t = 0;
    int big = t >= ((size_t)2 << 30);
    dp->shared_seg = (size_t)(big ? 64 : 20) << 20;
    dp->shared_below = (size_t)(big ? 20 : 10) << 20;
    /* the pool closes with its device (after the streams: a part of the mem layer); the
     * process-wide hook closes the allocation trace and reports the session's leaks */
    hwi_device_attach(d, HWI_PART_MEM, dp, &pool_part);
    hwi_on_shutdown(40, hwi_pool_teardown);
    hwi_alloc_trace_open();                    /* HWRT_ALLOC_TRACE, once per session */
    pool_list_add(dp);
    __atomic_store_n(&d->pool, dp, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&create_mu);
    return dp;
}

static spool *spool_get(dpool *dp, hwrt_bstream *bs, int kind)
{
    spool *sp = dp->last;
    if (sp && sp->owner == bs && sp->kind == kind) return sp;
    for (sp = dp->spools; sp; sp = sp->next)
        if (sp->owner == bs && sp->kind == kind) break;
    if (!sp) {
        sp = calloc(1, sizeof *sp);
        if (!sp) return NULL;
        sp->owner = bs;
        sp->kind = kind;
        sp->dp = dp;
        sp->next = dp->spools;
        dp->spools = sp;
    }
    dp->last = sp;
    return sp;
}

/* ---- events: cross-stream reuse ---- */

static hwrt_bevent *event_get(dpool *dp)
{
    if (dp->nev) return dp->evcache[--dp->nev];
    hwrt_bevent *e = NULL;
    if (hwi_dev_event_create(dp->dev, 0, &e) != HWRT_SUCCESS) return NULL;
    return e;
}

static void event_put(dpool *dp, hwrt_bevent *e)
{
    if (dp->nev == dp->cap_ev) {
        int nc = dp->cap_ev ? dp->cap_ev * 2 : 16;
        hwrt_bevent **n = realloc(dp->evcache, (size_t)nc * sizeof *n);
        if (!n) { hwi_dev_event_destroy(dp->dev, e); return; }
        dp->evcache = n;
        dp->cap_ev = nc;
    }
    dp->evcache[dp->nev++] = e;
}

/* A block becomes free: active drops, it merges with free neighbours. freed_at was set
 * when the caller freed it (a PENDING block keeps that time: a device sync begun after
 * it covers its owner stream's work, and its events have completed). */
static void make_free(pblock *b)
{
    dpool *dp = b->seg->dp;
    pool_stat_sub(&dp->st.active, 1);
    pool_stat_sub(&dp->st.active_bytes, (int64_t)b->size);
    pblock_coalesce_insert(b);
}

/* Move PENDING blocks whose events have all completed to the free bins. */
static void process_events(dpool *dp)
{
    for (pblock *b = dp->pending, *n; b; b = n) {
        n = b->fnext;
        while (b->nevs && hwi_dev_event_query(dp->dev, b->evs[b->nevs - 1]) != HWRT_ERROR_NOT_READY)
            event_put(dp, b->evs[--b->nevs]);   /* done (or faulted: it will not run) */
        if (b->nevs) continue;
        if (b->fprev) b->fprev->fnext = b->fnext;
        else dp->pending = b->fnext;
        if (b->fnext) b->fnext->fprev = b->fprev;
        b->fnext = b->fprev = NULL;
        make_free(b);
    }
}

/* ---- segment policy ---- */

static int use_expandable(const dpool *dp)
{
    return hwi_cfg_int(HWI_CFG_EXPANDABLE_SEGMENTS) && hwi_dev_has_va(dp->dev);
}

/* The pool (kind) a request of rsize bytes takes blocks from and grows. In plain mode the
 * requests that share segments (above POOL_SHARED_MIN, below shared_below) have a pool
 * of their own: they do not carve up dedicated segments (whose rest would stay pinned to
 * a segment made for one large request), dedicated-size requests do not take the holes
 * of shared segments (which smaller blocks can fill), and blocks of 256 KiB - 1 MiB
 * (K/V caches of short sequences, say) join the shared segments' holes instead of
 * pinning 2 MiB small segments two or three at a time. Under pressure the retry's last
 * resort (try_other_pools) still takes a block of another kind. With expandable segments
 * free pages are unmapped, so none of this matters there. */
static int kind_of(const dpool *dp, size_t rsize)
{
    if (rsize >= dp->shared_below) return PK_LARGE;
    if (rsize > POOL_SHARED_MIN && !use_expandable(dp)) return PK_SHARED;
    return rsize <= POOL_SMALL_MAX ? PK_SMALL : PK_LARGE;
}

/* A new large segment for a request of rsize: a dedicated one of the request rounded to
 * the granule, or, below shared_below, a shared one of at least shared_seg bytes that
 * holds a whole number of blocks of the request's size (rounded to the granule): K/V
 * caches and activations come in runs of equal sizes, and 64 MiB of 14 MiB blocks would
 * leave 8 MiB that the next block of the run cannot use (hwrt-bench pool
 * --min-capacity, docs/memory.md). */
static size_t large_seg_size(dpool *dp, size_t rsize)
{
    size_t g = pseg_granule(dp);
    if (g < POOL_SMALL_SEG) g = POOL_SMALL_SEG;
    if (rsize >= dp->shared_below) return round_to(rsize, g);
    size_t size = round_to((dp->shared_seg + rsize - 1) / rsize * rsize, g);
    return size > dp->shared_seg ? size : dp->shared_seg;
}

static size_t device_total(dpool *dp)
{
    size_t f, t, o;
    if (hwi_dev_mem_info(dp->dev, &f, &t, &o) != HWRT_SUCCESS) return 0;
    return t;
}

/* garbage_collection_threshold: before the pool grows past that fraction of the cap
 * (or of the device), it gives back cached segments, least recently freed first. */
static int gc_wanted(dpool *dp, size_t need, size_t cap)
{
    double thr = hwi_cfg_double(HWI_CFG_GC_THRESHOLD);
    if (thr <= 0) return 0;
    size_t limit = cap ? cap : device_total(dp);
    if ((double)((size_t)dp->st.reserved_bytes.current + need) <= thr * (double)limit) return 0;
    dp->gc_need = need;
    for (pseg *s = dp->segs; s; s = s->next)
        if (s->first->state == B_FREE && (!s->first->next || s->expandable)) return 1;
    return 0;
}

/* Would trimming give anything back: free mapped granules of expandable ranges, or a
 * whole free plain segment? */
static int trimmable(dpool *dp)
{
    for (pseg *s = dp->segs; s; s = s->next) {
        if (!s->expandable) {
            if (s->first->state == B_FREE && !s->first->next) return 1;
            continue;
        }
        for (pblock *b = s->first; b; b = b->next) {
            if (b->state != B_FREE) continue;
            size_t off = (size_t)(b->base - s->base);
            for (size_t g = (off + s->gran - 1) / s->gran; g < (off + b->size) / s->gran; g++)
                if (s->gmap[g]) return 1;
        }
    }
    return 0;
}

static int seg_releasable(pseg *s, uint64_t snap)
{
    pblock *b = s->first;
    return b->state == B_FREE && !b->next && b->freed_at <= snap;
}

/* Release cached memory freed before snap (the device was synchronized after snap was
 * taken, so no queued work can still touch it). target: stop once reserved <= target
 * (SIZE_MAX: release everything). Oldest-freed segments go first. */
static void release_cached(dpool *dp, uint64_t snap, size_t target, int trim_only)
{
    for (pseg *s = dp->segs; s; s = s->next)
        if (s->expandable)
            for (pblock *b = s->first; b; b = b->next)
                if (b->state == B_FREE && b->freed_at <= snap) pseg_trim_block(b);
    while (!trim_only && ((size_t)dp->st.reserved_bytes.current > target  || target == SIZE_MAX)) {
        pseg *best = NULL;
        for (pseg *s = dp->segs; s; s = s->next)
            if (seg_releasable(s, snap) && (!best || s->first->freed_at < best->first->freed_at))
                best = s;
        if (!best) break;
        pbin_remove(best->sp, best->first);
        pseg_release(best);
    }
}

/* ---- the backend's monitor (hwrt-smi) ---- */

/* Under the lock: should the monitor hear about dp now? Every change of reserved (what
 * a device monitor shows as used); allocated once it moved by max(64 MiB, reserved/8),
 * or otherwise every 1024th locked call that moved it, so hot loops do not publish on
 * every call. The thread caches' shares (<= 2 MiB per thread) are not included. */
static int report_due(dpool *dp, size_t *resv, size_t *alloc)
{
    *resv = (size_t)dp->st.reserved_bytes.current;
    *alloc = (size_t)dp->st.allocated_bytes.current;
    if (*resv == dp->reported_resv && *alloc == dp->reported_alloc) return 0;
    size_t moved = *alloc > dp->reported_alloc ? *alloc - dp->reported_alloc
                                               : dp->reported_alloc - *alloc;
    size_t step = *resv / 8 > ((size_t)64 << 20) ? *resv / 8 : (size_t)64 << 20;
    if (*resv == dp->reported_resv && moved < step && ++dp->report_skips < 1024) return 0;
    dp->report_skips = 0;
    dp->reported_resv = *resv;
    dp->reported_alloc = *alloc;
    return 1;
}

void hwi_pool_report(hwi_device *d)
{
    hwrt_memory_info m;
    hwi_pool_fill_info(d, &m);
    hwi_dev_report_usage(d, m.reserved, m.allocated);
}

/* ---- allocation ---- */

/* A fresh segment (or expandable range) for sp; its whole-range block, out of the bins. */
static hwrt_status grow(dpool *dp, spool *sp, size_t rsize, size_t cap, int no_gc, int no_trim,
                        pool_want *want, pblock **out)
{
    pseg *seg = NULL;
    if (use_expandable(dp)) {
        /* the range costs address space, not capacity: half the device for the large
         * kind, so that one range holds a stream's large blocks in one address order
         * (fewer range ends, each of which strands part of a page); an eighth when that
         * much address space is not to be had, and for the small kind */
        size_t g = pseg_granule(dp), total = device_total(dp);
        size_t va = round_to(rsize, g);
        size_t chunks[2] = {round_to(total / (sp->kind == PK_SMALL ? 8 : 2), g), round_to(total / 8, g)};
        for (int i = 0; i < 2; i++) {
            size_t len = va < chunks[i] ? chunks[i] : va;
            if (i && len == (va < chunks[0] ? chunks[0] : va)) break;   /* tried that */
            /* a range the device could never back is not reserved (nor its granule map
             * allocated): the plain path below fails it with the OOM sentence */
            if (len <= total && pseg_new(dp, sp, len, 1, &seg) == HWRT_SUCCESS) {
                sp->addr_order = sp->kind != PK_SMALL;
                *out = seg->first;
                return HWRT_SUCCESS;
            }
        }                      /* no address space left: fall back to a plain segment */
    }
    size_t need = sp->kind == PK_SMALL ? POOL_SMALL_SEG : large_seg_size(dp, rsize);
    /* the 20 MiB segment of a small large request is a convenience: when the cap or
     * the device cannot give it, the request rounded to the granule will do */
    size_t g = pseg_granule(dp), exact = round_to(rsize, g > POOL_SMALL_SEG ? g : POOL_SMALL_SEG);
    if (sp->kind == PK_SMALL || exact > need) exact = need;
    size_t resv = (size_t)dp->st.reserved_bytes.current;
    if (cap && resv + need > cap && resv + exact <= cap) need = exact;
    /* growing past the high-water mark while whole segments sit cached (ones the
     * dedicated rule kept for their own size, say): give those back first, so the peak
     * does not grow by what the cache holds */
    if (!no_trim && resv + need > dp->hw_reserved && trimmable(dp)) {
        dp->trim_need = need;
        *want = WANT_TRIM;
        return HWRT_ERROR_OUT_OF_MEMORY;
    }
    if (!no_gc && gc_wanted(dp, need, cap)) {
        *want = WANT_GC;
        return HWRT_ERROR_OUT_OF_MEMORY;
    }
    if (cap && resv + need > cap)
        return hwi_err(HWRT_ERROR_OUT_OF_MEMORY, "the max_device_memory cap is reached");
    hwrt_status st = pseg_new(dp, sp, need, 0, &seg);
    /* a shared segment made larger for whole blocks: the plain shared size first */
    if (st == HWRT_ERROR_OUT_OF_MEMORY && sp->kind != PK_SMALL && rsize < dp->shared_below &&
        exact < dp->shared_seg && dp->shared_seg < need)
        st = pseg_new(dp, sp, dp->shared_seg, 0, &seg);
    if (st == HWRT_ERROR_OUT_OF_MEMORY && exact < need) st = pseg_new(dp, sp, exact, 0, &seg);
    HWI_TRY(st);
    /* dedicated: made for one large request (also when its rounded size happens to equal
     * the shared segments' size); a segment of the shared kind is shared even when the cap
     * or the device made it the request's size, so that its rest serves the next ones */
    seg->dedicated = sp->kind == PK_LARGE && !(rsize < dp->shared_below &&
                     (seg->size == large_seg_size(dp, rsize) || seg->size == dp->shared_seg));
    if ((size_t)dp->st.reserved_bytes.current > dp->hw_reserved)
        dp->hw_reserved = (size_t)dp->st.reserved_bytes.current;
    *out = seg->first;
    return HWRT_SUCCESS;
}

/* Map what an expandable block needs; *want asks the caller to sync and clean first.
 * Free mapped granules are unmapped (which needs a device sync) only when mapping more
 * would raise reserved above its high-water mark: below it, cached pages are reused
 * freely; at it, holes are given back first so the peak does not grow. */
static hwrt_status map_block(dpool *dp, pblock *b, size_t cap, int no_gc, int no_trim,
                             pool_want *want)
{
    size_t need = pseg_unmapped_in(b->seg, b->base, b->size);
    if (!need) return HWRT_SUCCESS;
    size_t resv = (size_t)dp->st.reserved_bytes.current;
    if (!no_trim && resv + need > dp->hw_reserved && trimmable(dp)) {
        dp->trim_need = need;
        *want = WANT_TRIM;
        return HWRT_ERROR_OUT_OF_MEMORY;
    }
    if (!no_gc && gc_wanted(dp, need, cap)) {
        *want = WANT_GC;
        return HWRT_ERROR_OUT_OF_MEMORY;
    }
    HWI_TRY(pseg_map_range(b->seg, b->base, b->size, cap));
    resv = (size_t)dp->st.reserved_bytes.current;
    if (resv > dp->hw_reserved) dp->hw_reserved = resv;
    return HWRT_SUCCESS;
}

static int should_split(const pblock *b, size_t size, size_t msz)
{
    size_t rem = b->size - size;
    /* the rest of a shared segment's block is split off however small (it merges with
     * its free neighbour when that is freed first, instead of waiting for this block);
     * a dedicated block keeps a rest of up to 1 MiB (PyTorch's rule) */
    if (b->seg->expandable || !b->seg->dedicated) return rem >= POOL_ROUND;
    return (!msz || size < msz) && rem > POOL_LARGE_MIN_SPLIT;
}

/* b (out of the bins) keeps only its last rsize bytes, the front going back to the
 * bins, when hand_out would split it (hand_out then finds nothing to split). */
static void place_at_end(pblock *b, size_t rsize, size_t msz)
{
    if (!should_split(b, rsize, msz)) return;
    b->state = B_ALLOC;                        /* the front must not merge back */
    pblock_split_high(b, rsize);
    b->state = B_FREE;
}

/* Hand out b (out of the bins): split off the rest, map what it needs, count it. */
static hwrt_status hand_out(dpool *dp, pblock *b, size_t req, size_t rsize, int no_gc,
                            int no_trim, pool_want *want, pblock **out)
{
    size_t msz = (size_t)hwi_cfg_int(HWI_CFG_MAX_SPLIT_SIZE);
    size_t cap = (size_t)hwi_cfg_int(HWI_CFG_MAX_DEVICE_MEMORY);
    b->state = B_ALLOC;                        /* taken: the split rest must not merge back */
    if (should_split(b, rsize, msz)) pblock_split(b, rsize);
    if (b->seg->expandable) {
        hwrt_status st = map_block(dp, b, cap, no_gc, no_trim, want);
        if (st != HWRT_SUCCESS) {
            pblock_coalesce_insert(b);         /* back, unchanged in the figures */
            return st;
        }
    }
    b->state = B_ALLOC;
    b->requested = req;
    b->nuses = 0;
    b->owned = 0;
    b->alloc_seq = ++dp->alloc_seq;
    if (!pmap_put(dp, b)) {
        pblock_coalesce_insert(b);
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "device memory pool: host out of memory");
    }
    pool_stat_add(&dp->st.allocation, 1);
    pool_stat_add(&dp->st.allocated_bytes, (int64_t)b->size);
    pool_stat_add(&dp->st.requested_bytes, (int64_t)req);
    pool_stat_add(&dp->st.active, 1);
    pool_stat_add(&dp->st.active_bytes, (int64_t)b->size);
    *out = b;
    return HWRT_SUCCESS;
}

static hwrt_status try_alloc(dpool *dp, hwrt_bstream *bs, size_t req, size_t rsize,
                             int no_gc, int no_trim, pool_want *want, pblock **out)
{
    *want = WANT_NONE;
    if (dp->pending) process_events(dp);
    spool *sp = spool_get(dp, bs, kind_of(dp, rsize));
    if (!sp)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "device memory pool: host out of memory");
    size_t msz = (size_t)hwi_cfg_int(HWI_CFG_MAX_SPLIT_SIZE);
    size_t cap = (size_t)hwi_cfg_int(HWI_CFG_MAX_DEVICE_MEMORY);
    /* in an expandable large range, requests of a shared segment's size or more are
     * placed at the top of the highest-addressed block that fits, away from the smaller
     * blocks packed from the bottom */
    int top = __builtin_expect(sp->addr_order, 0) && rsize >= dp->shared_seg;
    pblock *b = pbin_search(sp, rsize, msz, top);
    if (b) pbin_remove(sp, b);
    else HWI_TRY(grow(dp, sp, rsize, cap, no_gc, no_trim, want, &b));
    if (__builtin_expect(sp->addr_order, 0) && rsize >= dp->shared_seg)   /* grow may set it */
        place_at_end(b, rsize, msz);
    return hand_out(dp, b, req, rsize, no_gc, no_trim, want, out);
}

/* The last resort before OOM, after the device sync of the retry (snap): a free block
 * of the device that the request may take, freed before that sync when it belongs to
 * another stream: one of another pool (the other kind of bs's own, or, for a request on
 * a stream, any pool of another stream), or, in an expandable range, also of bs's own
 * pool. Then bs is recorded on the block as a user, so that when it is freed its owner's
 * stream reuses it only after bs's work on it is done (bs NULL cannot be recorded).
 * Chosen by the pages it would have to map (a block of an expandable range placed at
 * whichever end of it needs fewer: its ends may lie in pages that live neighbours keep
 * mapped, which the retry could not unmap), then by size (the smallest). In plain
 * segments nothing needs mapping, and the smallest block of another pool is taken. */
static hwrt_status try_other_pools(dpool *dp, hwrt_bstream *bs, size_t req, size_t rsize,
                                   uint64_t snap, pblock **out)
{
    int kind = kind_of(dp, rsize);
    pblock *best = NULL;
    size_t best_need = 0;
    int at_end = 0;
    for (pseg *s = dp->segs; s; s = s->next) {
        int own = s->sp->owner == bs;
        if (!own && !bs) continue;             /* the default stream cannot be recorded */
        if (own && s->sp->kind == kind && !s->expandable) continue;   /* best fit saw it */
        for (pblock *b = s->first; b; b = b->next) {
            if (b->state != B_FREE || b->size < rsize || (!own && b->freed_at > snap)) continue;
            size_t lo = pseg_unmapped_in(s, b->base, rsize);
            size_t hi = pseg_unmapped_in(s, b->base + b->size - rsize, rsize);
            size_t need = lo < hi ? lo : hi;
            if (!best || need < best_need || (need == best_need && b->size < best->size)) {
                best = b;
                best_need = need;
                at_end = hi < lo;
            }
        }
    }
    if (!best) return HWRT_ERROR_OUT_OF_MEMORY;
    if (!best->cap_uses) {
        hwrt_bstream **u = malloc(4 * sizeof *u);
        hwrt_bevent **e = u ? malloc(4 * sizeof *e) : NULL;
        if (!e) {
            free(u);
            return HWRT_ERROR_OUT_OF_MEMORY;
        }
        free(best->uses);
        free(best->evs);
        best->uses = u;
        best->evs = e;
        best->cap_uses = 4;
    }
    pbin_remove(best->seg->sp, best);
    if (at_end) place_at_end(best, rsize, (size_t)hwi_cfg_int(HWI_CFG_MAX_SPLIT_SIZE));
    pool_want want;                            /* never set: no GC, no trim here */
    HWI_TRY(hand_out(dp, best, req, rsize, 1, 1, &want, out));
    if (best->seg->sp->owner != bs) {
        best->uses[0] = bs;
        best->nuses = 1;
    }
    return HWRT_SUCCESS;
}

/* Synchronize the device with the pool lock released; sets *snap to the free sequence
 * before the sync: blocks freed up to it are no longer touched by queued work. */
static hwrt_status sync_unlocked(dpool *dp, const char *api, uint64_t *snap)
{
    tc_request_flush(dp);                      /* parked blocks back first: they count */
    *snap = dp->free_seq;
    pthread_mutex_unlock(&dp->mu);
    /* the device-wide synchronize (exec's checked one once streams exist: runtime/device.h) */
    hwrt_status st = hwi_device_synchronize(dp->dev, api);
    pthread_mutex_lock(&dp->mu);
    dp->st.num_sync_all_streams++;
    if (st == HWRT_SUCCESS) process_events(dp);
    return st;
}

static hwrt_status alloc_locked(dpool *dp, hwrt_bstream *bs, size_t bytes, pblock **b)
{
    size_t rsize = round_size(bytes);
    int no_gc = 0, no_trim = 0, retried = 0, synced = 0;
    uint64_t retry_snap = 0;
    for (;;) {
        pool_want want;
        hwrt_status st = try_alloc(dp, bs, bytes, rsize, no_gc, no_trim, &want, b);
        if (st == HWRT_SUCCESS) return st;
        if (want == WANT_NONE && (st != HWRT_ERROR_OUT_OF_MEMORY || retried)) {
            if (st != HWRT_ERROR_OUT_OF_MEMORY) return st;
            char cause[512];
            snprintf(cause, sizeof cause, "%s", hwrt_last_error());
            if (synced && try_other_pools(dp, bs, bytes, rsize, retry_snap, b) == HWRT_SUCCESS)
                return HWRT_SUCCESS;
            dp->st.num_ooms++;
            hwrt_status oom = hwi_pool_oom(dp, bytes, rsize, cause);
            hwi_log(HWI_LOG_INFO, "%s", hwrt_last_error());
            return oom;
        }
        uint64_t snap;
        hwrt_status sst = sync_unlocked(dp, "device memory allocation", &snap);
        if (want == WANT_GC || want == WANT_TRIM)
            hwi_log(HWI_LOG_DEBUG, "device %d: releasing cached memory before growing (%s)",
                    dp->device, want == WANT_GC ? "garbage_collection_threshold reached"
                                                : "growth past the reserved high-water mark");
        if (want == WANT_GC) {
            no_gc = 1;
            if (sst == HWRT_SUCCESS) {
                double thr = hwi_cfg_double(HWI_CFG_GC_THRESHOLD);
                size_t cap = (size_t)hwi_cfg_int(HWI_CFG_MAX_DEVICE_MEMORY);
                size_t limit = cap ? cap : device_total(dp);
                size_t target = (size_t)(thr * (double)limit);
                release_cached(dp, snap, target > dp->gc_need ? target - dp->gc_need : 0, 0);
            }
        } else if (want == WANT_TRIM) {
            no_trim = 1;
            /* unmap free granules; release whole free segments, oldest first, until
             * the growth fits under the high-water mark */
            if (sst == HWRT_SUCCESS)
                release_cached(dp, snap, dp->hw_reserved > dp->trim_need ? dp->hw_reserved - dp->trim_need : 0, 0);
        } else {
            retried = 1;
            dp->st.num_alloc_retries++;
            if (hwi_log_level() >= HWI_LOG_INFO) {
                char need[32], resv[32];
                hwi_log(HWI_LOG_INFO, "device %d: allocating %s failed; synchronized the device "
                        "and releasing the cached segments (%s reserved) to retry", dp->device,
                        hwi_fmt_bytes(need, sizeof need, bytes),
                        hwi_fmt_bytes(resv, sizeof resv, (uint64_t)dp->st.reserved_bytes.current));
            }
            if (sst == HWRT_SUCCESS) release_cached(dp, snap, SIZE_MAX, 0);
            synced = sst == HWRT_SUCCESS;
            retry_snap = snap;
        }
    }
}

static hwrt_status __attribute__((noinline))
alloc_slow(hwi_device *d, size_t bytes, hwrt_bstream *bs, int owned, void **out)
{
    void *site[POOL_SITE_DEPTH + 1];
    int nsite = 0;
    if (hwi_cfg_int(HWI_CFG_RECORD_ALLOC_SITES))
        nsite = backtrace(site, POOL_SITE_DEPTH + 1);
    dpool *dp = dpool_get(d);
    if (!dp) return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "device memory pool: host out of memory");
    tc_leave_other(dp);
    pthread_mutex_lock(&dp->mu);
    pblock *b = NULL;
    tc_slow_enter(dp, bs);
    hwrt_status st = alloc_locked(dp, bs, bytes, &b);
    size_t resv = 0, alloc = 0;
    int report = 0;
    if (st == HWRT_SUCCESS) {
        tc_note_alloc(dp, bs, b);
        if (hwi_alloc_trace_active()) hwi_alloc_trace_alloc(dp->device, b->base, bytes, bs);
        b->owned = owned;
        b->nsite = nsite > 1 ? nsite - 1 : 0;   /* frame 0 is this function */
        if (b->nsite) memcpy(b->site, site + 1, (size_t)b->nsite * sizeof(void *));
        *out = b->base;
        report = report_due(dp, &resv, &alloc);
    }
    pthread_mutex_unlock(&dp->mu);
    if (report) hwi_dev_report_usage(d, resv, alloc);
    return st;
}

/* The profiler's view of an allocation or free, with the device's figures after it. */
static void mem_event(hwi_mem_event_kind kind, const hwi_device *d, const void *p, size_t bytes)
{
    hwrt_memory_info m;
    hwi_pool_fill_info(d, &m);
    hwi_mem_event(kind, d->id, p, bytes, m.allocated, m.reserved);
}

/* Everything but a thread-cache hit without a profiler: kept out of line, so that the
 * hit is a leaf path with no stack frame. */
static hwrt_status __attribute__((noinline))
alloc_other(hwi_device *d, size_t bytes, hwrt_bstream *bs, int owned, void **out, int hit)
{
    hwrt_status st = hit ? HWRT_SUCCESS : alloc_slow(d, bytes, bs, owned, out);
    if (st == HWRT_SUCCESS && hwi_mem_events_active())
        mem_event(HWI_MEM_ALLOC, d, *out, bytes);
    return st;
}

static inline __attribute__((always_inline)) hwrt_status
pool_alloc(hwi_device *d, size_t bytes, hwrt_bstream *bs, int owned, void **out)
{
    /* the thread cache is off while record_alloc_sites is on, so sites are never lost */
    int hit = tc_try_alloc(d, bs, bytes, owned, out);
    if (__builtin_expect(hit && !hwi_mem_events_active(), 1)) return HWRT_SUCCESS;
    return alloc_other(d, bytes, bs, owned, out, hit);
}

hwrt_status hwi_pool_alloc(hwi_device *d, size_t bytes, hwrt_bstream *bs, void **out)
{
    return pool_alloc(d, bytes, bs, 0, out);
}

hwrt_status hwi_pool_alloc_tensor(hwi_device *d, size_t bytes, void **out)
{
    return pool_alloc(d, bytes, NULL, 1, out);
}

/* ---- free, record_stream ---- */

/* Under dp's lock: the live block of dp containing p, which lies in dp's segment s
 * (exact base first: the common case). */
static pblock *live_containing(dpool *dp, pseg *s, const void *p)
{
    pblock *b = pmap_get(dp, p);
    if (b) return atomic_load_explicit(&b->in_tc, memory_order_relaxed) ? NULL : b;
    for (b = s->first; b; b = b->next)
        if ((const char *)p >= b->base && (const char *)p < b->base + b->size)
            break;
    return b && b->state == B_ALLOC && !atomic_load_explicit(&b->in_tc, memory_order_relaxed) ? b : NULL;
}

static void record_events(dpool *dp, pblock *b)
{
    b->nevs = 0;
    for (int i = 0; i < b->nuses; i++) {
        hwrt_bevent *e = event_get(dp);
        if (!e) { hwi_dev_stream_synchronize(dp->dev, b->uses[i]); continue; }  /* cannot defer: wait */
        if (hwi_dev_event_record(dp->dev, e, b->uses[i]) != HWRT_SUCCESS) { event_put(dp, e); continue; }
        b->evs[b->nevs++] = e;
    }
    b->nuses = 0;
}

/* Under the lock: stream bs (not b's own) uses the live block b. */
static hwrt_status add_use(pblock *b, hwrt_bstream *bs)
{
    for (int i = 0; i < b->nuses; i++)
        if (b->uses[i] == bs) return HWRT_SUCCESS;
    if (b->nuses == b->cap_uses) {
        int nc = b->cap_uses ? b->cap_uses * 2 : 4;
        hwrt_bstream **u = realloc(b->uses, (size_t)nc * sizeof *u);
        hwrt_bevent **e = u ? realloc(b->evs, (size_t)nc * sizeof *e) : NULL;
        if (u) b->uses = u;
        if (e) { b->evs = e; b->cap_uses = nc; }
    }
    if (b->nuses == b->cap_uses)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "hwrt_record_stream: host out of memory");
    b->uses[b->nuses++] = bs;
    return HWRT_SUCCESS;
}

/* Free p. rec (hwrt_free_async's stream, NULL for none) is recorded as a user first when
 * it is a stream of the block's device (rec_device) other than the block's own. One
 * lookup, one lock. */
static hwrt_status __attribute__((noinline))
free_slow(void *p, const char *api, int user, hwrt_bstream *rec, int rec_device)
{
    pseg *s = NULL;
    dpool *dp = pool_lock_containing(p, &s);
    pblock *b = dp ? pmap_get(dp, p) : NULL;
    if (b && atomic_load_explicit(&b->in_tc, memory_order_relaxed)) b = NULL;   /* parked */
    if (b && user && b->owned) {
        pthread_mutex_unlock(&dp->mu);
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT,
                       "%s(%p): the pointer is the data of a live tensor (hwrt_tensor_data); "
                       "release the tensor with hwrt_tensor_release instead, which frees it once "
                       "its queued work is done", api, p);
    }
    if (!b) {
        int inside = dp && live_containing(dp, s, p) != NULL;
        if (dp) pthread_mutex_unlock(&dp->mu);
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT,
                       "%s(%p): %s; pass the exact pointer hwrt_malloc returned, once", api, p,
                       inside ? "the pointer is inside a block, not its start"
                              : "hwrt did not allocate this pointer (a host pointer, or already freed)");
    }
    if (rec && dp->device == rec_device && rec != b->seg->sp->owner) {
        hwrt_status st = add_use(b, rec);
        if (st != HWRT_SUCCESS) {
            pthread_mutex_unlock(&dp->mu);
            return st;
        }
    }
    pmap_take(dp, p);
    atomic_fetch_add(&b->tc_gen, 1);           /* no thread cache may take it back */
    if (hwi_alloc_trace_active())              /* the free's stream: the last user, else its own */
        hwi_alloc_trace_free(dp->device, p, b->nuses ? b->uses[b->nuses - 1] : b->seg->sp->owner,
                             b->tag);
    pool_stat_sub(&dp->st.allocation, 1);
    pool_stat_sub(&dp->st.allocated_bytes, (int64_t)b->size);
    pool_stat_sub(&dp->st.requested_bytes, (int64_t)b->requested);
    free(b->tag);
    b->tag = NULL;
    b->freed_at = ++dp->free_seq;
    if (b->nuses) record_events(dp, b);
    if (b->nevs) {
        b->state = B_PENDING;
        b->fprev = NULL;
        b->fnext = dp->pending;
        if (dp->pending) dp->pending->fprev = b;
        dp->pending = b;
    } else {
        make_free(b);
    }
    size_t resv = 0, alloc = 0;
    int report = report_due(dp, &resv, &alloc);
    pthread_mutex_unlock(&dp->mu);
    if (report) hwi_dev_report_usage(dp->dev, resv, alloc);
    return HWRT_SUCCESS;
}

/* Everything but a thread-cache hit without a profiler (see alloc_other). */
static hwrt_status __attribute__((noinline))
free_other(void *p, const char *api, int user, hwrt_bstream *rec, int rec_device)
{
    if (!hwi_mem_events_active()) return free_slow(p, api, user, rec, rec_device);
    /* a profiler observes: the block's device and size before it goes */
    pseg *s = NULL;
    dpool *dp = pool_lock_containing(p, &s);
    pblock *b = dp ? live_containing(dp, s, p) : NULL;
    size_t size = b ? b->requested : 0;
    int known = b && b->base == (char *)p;
    if (dp) pthread_mutex_unlock(&dp->mu);
    hwrt_status st = !rec && tc_try_free(p, user) ? HWRT_SUCCESS : free_slow(p, api, user, rec, rec_device);
    if (st == HWRT_SUCCESS && known) mem_event(HWI_MEM_FREE, dp->dev, p, size);
    return st;
}

static inline __attribute__((always_inline)) hwrt_status
pool_free(void *p, const char *api, int user, hwrt_bstream *rec, int rec_device)
{
    /* with rec, the slow path records it first (the thread cache takes no block in use) */
    if (__builtin_expect(!rec && !hwi_mem_events_active() && tc_try_free(p, user), 1))
        return HWRT_SUCCESS;
    return free_other(p, api, user, rec, rec_device);
}

hwrt_status hwi_pool_free(void *p, const char *api) { return pool_free(p, api, 0, NULL, -1); }

hwrt_status hwi_pool_free_user(void *p, const char *api) { return pool_free(p, api, 1, NULL, -1); }

hwrt_status hwi_pool_free_on(void *p, hwrt_bstream *bs, int device, const char *api)
{
    tcache *t = hwi_tc;
    /* the thread cache takes only blocks no other stream used: bs must be their own */
    if (t && t->owner == bs && t->device == device && !hwi_mem_events_active() &&
        tc_try_free(p, 1))
        return HWRT_SUCCESS;
    return pool_free(p, api, 1, bs, device);
}

hwrt_status hwi_pool_record_stream(void *p, hwrt_bstream *bs)
{
    pseg *s = NULL;
    dpool *dp = pool_lock_containing(p, &s);
    pblock *b = dp ? live_containing(dp, s, p) : NULL;
    hwrt_status st = HWRT_SUCCESS;
    if (!b)
        st = hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_record_stream(%p): not a live block "
                     "allocated by hwrt", p);
    else if (bs && bs != b->seg->sp->owner)
        st = add_use(b, bs);
    if (dp) pthread_mutex_unlock(&dp->mu);
    return st;
}

/* ---- lookups ---- */

int hwi_pool_lookup(const void *p, hwi_block_info *out)
{
    pseg *s = NULL;
    dpool *dp = pool_lock_containing(p, &s);
    if (!dp) {
        *out = (hwi_block_info){-1, NULL, 0};
        return 0;
    }
    pblock *b = live_containing(dp, s, p);
    *out = (hwi_block_info){dp->device, b ? b->base : NULL, b ? b->requested : 0};
    pthread_mutex_unlock(&dp->mu);
    return 1;
}

int hwi_block_covers(const hwi_block_info *b, const void *p, size_t bytes)
{
    if (!b->base || (const char *)p < (const char *)b->base) return 0;
    size_t off = (size_t)((const char *)p - (const char *)b->base);
    return off <= b->size && bytes <= b->size - off;   /* no wrap */
}

int hwi_pool_find(const void *p, size_t bytes, hwi_block_info *out)
{
    hwi_block_info b;
    if (!hwi_pool_lookup(p, &b) || !b.base) return 0;
    if (out) *out = b;
    return hwi_block_covers(&b, p, bytes);
}

int hwi_pool_is_device_ptr(const void *p, int *device)
{
    hwi_block_info b;
    int in = hwi_pool_lookup(p, &b);
    if (in && device) *device = b.device;
    return in;
}

/* ---- cache control ---- */

hwrt_status hwi_pool_empty_cache(hwi_device *d)
{
    dpool *dp = __atomic_load_n(&d->pool, __ATOMIC_ACQUIRE);
    if (!dp) return HWRT_SUCCESS;              /* nothing was ever cached */
    tc_leave_other(dp);
    pthread_mutex_lock(&dp->mu);
    uint64_t snap;
    int64_t before = dp->st.reserved_bytes.current;
    hwrt_status st = sync_unlocked(dp, "hwrt_empty_cache", &snap);
    if (st == HWRT_SUCCESS) release_cached(dp, snap, SIZE_MAX, 0);
    int64_t released = before - dp->st.reserved_bytes.current;
    size_t resv = 0, alloc = 0;
    dp->report_skips = 1024;                   /* the monitor gets exact figures now */
    int report = report_due(dp, &resv, &alloc);
    pthread_mutex_unlock(&dp->mu);
    if (report) hwi_dev_report_usage(d, resv, alloc);
    /* the observer (the profiler's memory curve) sees the drop now, not at the next
     * allocation, which may never come */
    if (released > 0 && hwi_mem_events_active())
        mem_event(HWI_MEM_RELEASE, d, NULL, (size_t)released);
    if (released > 0 && hwi_log_level() >= HWI_LOG_DEBUG) {
        char b[32];
        hwi_log(HWI_LOG_DEBUG, "device %d: hwrt_empty_cache released %s", d->ordinal,
                hwi_fmt_bytes(b, sizeof b, (uint64_t)released));
    }
    return st;
}

/* The stream's work is done (exec synchronized it): its cached blocks join the
 * NULL-stream pool of its device, and no block keeps it as a user. */
void hwi_pool_stream_destroyed(hwrt_bstream *bs)
{
    hwi_alloc_trace_stream_gone(bs);
    for (dpool *dp = pool_list_first(); dp;
         dp = atomic_load_explicit(&dp->next_pool, memory_order_acquire)) {
        pthread_mutex_lock(&dp->mu);
        tc_request_flush(dp);                  /* caches keyed by bs give their blocks back */
        for (pseg *s = dp->segs; s; s = s->next) {
            for (pblock *b = s->first; b; b = b->next)
                for (int k = 0; k < b->nuses; k++)
                    if (b->uses[k] == bs) b->uses[k--] = b->uses[--b->nuses];
            if (s->sp->owner != bs) continue;
            spool *to = spool_get(dp, NULL, s->sp->kind);
            if (!to) continue;                 /* host OOM: keep it under the old key */
            spool *from = s->sp;
            to->addr_order |= s->expandable && to->kind != PK_SMALL;
            for (pblock *b = s->first; b; b = b->next)
                if (b->state == B_FREE) pbin_remove(from, b);
            s->sp = to;
            for (pblock *b = s->first; b; b = b->next)
                if (b->state == B_FREE) pbin_insert(to, b);
        }
        for (spool **pp = &dp->spools; *pp;) {
            spool *sp = *pp;
            int used = 0;
            for (pseg *s = dp->segs; s && !used; s = s->next) used = s->sp == sp;
            if (sp->owner == bs && !used) { *pp = sp->next; free(sp); }
            else pp = &sp->next;
        }
        dp->last = NULL;
        pthread_mutex_unlock(&dp->mu);
    }
}

/* ---- the policy as pool_headroom.c reads it (under the lock) ---- */

size_t pool_round_size(size_t n) { return round_size(n); }

int pool_kind_of(const dpool *dp, size_t rsize) { return kind_of(dp, rsize); }

void pool_process_events(dpool *dp)
{
    if (dp->pending) process_events(dp);
}

size_t pool_unsynced_growth(dpool *dp, size_t rsize, size_t cap)
{
    size_t resv = (size_t)dp->st.reserved_bytes.current;
    if (use_expandable(dp)) {
        /* map_block: mapping past the high-water mark while something is trimmable, or
         * past the garbage-collection threshold, syncs first */
        size_t room = SIZE_MAX;
        if (trimmable(dp)) room = dp->hw_reserved > resv ? dp->hw_reserved - resv : 0;
        double thr = hwi_cfg_double(HWI_CFG_GC_THRESHOLD);
        if (thr > 0) {
            size_t limit = cap ? cap : device_total(dp);
            size_t at = (size_t)(thr * (double)limit), gc = at > resv ? at - resv : 0;
            if (gc < room && gc_wanted(dp, gc + 1, cap)) room = gc;
        }
        return room;
    }
    /* grow: the segment it asks for first decides whether it syncs first */
    int kind = kind_of(dp, rsize);
    size_t need = kind == PK_SMALL ? POOL_SMALL_SEG : large_seg_size(dp, rsize);
    size_t g = pseg_granule(dp), exact = round_to(rsize, g > POOL_SMALL_SEG ? g : POOL_SMALL_SEG);
    if (kind == PK_SMALL || exact > need) exact = need;
    if (cap && resv + need > cap && resv + exact <= cap) need = exact;
    if (resv + need > dp->hw_reserved && trimmable(dp)) return 0;
    if (gc_wanted(dp, need, cap)) return 0;
    return SIZE_MAX;
}
