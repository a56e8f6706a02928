/* The stream-ordered caching device-memory pool (PyTorch/CUDA-caching-allocator design,
 * backend-agnostic: it only calls the backend's segment_alloc/free, va_* and event
 * slots).
 *
 * - Requests round up to 512 B. Requests <= 1 MiB come from 2 MiB "small" segments,
 *   larger ones from "large" segments (shared ones of 20 MiB below 10 MiB, on devices of
 *   4 GiB or more 64 MiB below 20 MiB; else the request rounded to the device granule, a
 *   dedicated segment), or from one expandable address range per stream whose granules
 *   are mapped on demand (expandable_segments).
 * - Free blocks are kept per (device, stream it was allocated for, small/large), best fit,
 *   split on allocation and coalesced with free neighbours on free.
 * - A block is reused at once by work on its own stream (stream order makes that safe);
 *   other streams recorded on it (hwi_pool_record_stream) get a backend event at free
 *   time and the block stays PENDING until every event has completed. hwi_pool_free
 *   never blocks.
 * - Before growing past its peak of reserved bytes it syncs the device and gives back
 *   whole cached segments (and unmaps free pages of expandable ranges). Before failing
 *   (cap or device), it syncs, returns every cached segment and free page and retries;
 *   then a free block of another of the device's pools may serve it (another stream's
 *   for a request on a stream, which is recorded on the block);
 *   only then does it fail with a breakdown. */
#include "pool_tcache.h"
#include "alloc_trace.h"
#include "mem_events.h"
#include "../base/config.h"
#include "../base/log.h"
#include "../base/status.h"

#include <execinfo.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

pthread_mutex_t hwi_pool_mu = PTHREAD_MUTEX_INITIALIZER;
dpool *hwi_pool_devs[HWI_MAX_DEVICES];

uint64_t hwi_pool_free_seq;                /* bumped whenever a block becomes free */

/* internal try_alloc outcomes: sync the device, clean up, try again */
#define WANT_GC ((hwrt_status)2000)
#define WANT_TRIM ((hwrt_status)2001)

hwrt_status hwi_pool_teardown(void);
hwrt_status hwi_pool_oom(dpool *dp, size_t req, size_t rsize, const char *cause);

hwrt_status hwi_pool_sync_device(int device, const char *api)
{
    hwi_device *d = hwi_device_if_open(device);
    return d ? hwi_device_synchronize(d, api) : HWRT_SUCCESS;
}

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

static dpool *dpool_get(hwi_device *d)
{
    dpool *dp = hwi_pool_devs[d->id];
    if (dp) return dp;
    dp = calloc(1, sizeof *dp);
    if (!dp) return NULL;
    dp->device = d->id;
    dp->bdev = d->bdev;
    dp->dev = d;
    dp->st.max_split_size = -1;
    /* the large pool's shared segments: PyTorch's 20 MiB for requests below 10 MiB; on a
     * device of 4 GiB or more 64 MiB below 20 MiB, where blocks of 1-20 MiB with mixed
     * lifetimes (K/V caches, activations) pin fewer segments (hwrt-bench pool
     * --min-capacity, docs/memory.md) */
    size_t f, t = 0, o;
    if (hwi_dev_mem_info(d, &f, &t, &o) != HWRT_SUCCESS) t = 0;
    int big = t >= ((size_t)4 << 30);
    dp->shared_seg = (size_t)(big ? 64 : 20) << 20;
    dp->shared_below = (size_t)(big ? 20 : 10) << 20;
    hwi_pool_devs[d->id] = dp;
    hwi_on_shutdown(40, hwi_pool_teardown);
    hwi_alloc_trace_open();                    /* HWRT_ALLOC_TRACE, once per session */
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

static size_t large_seg_size(dpool *dp, size_t rsize)
{
    if (rsize < dp->shared_below) return dp->shared_seg;
    size_t g = pseg_granule(dp);
    return round_to(rsize, g > POOL_SMALL_SEG ? g : POOL_SMALL_SEG);
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
    hwi_pool_fill_info(d->id, &m);
    hwi_dev_report_usage(d, m.reserved, m.allocated);
}

/* ---- allocation ---- */

static int use_expandable(const hwi_device *d)
{
    return hwi_cfg_int(HWI_CFG_EXPANDABLE_SEGMENTS) && hwi_dev_has_va(d);
}

/* A fresh segment (or expandable range) for sp; its whole-range block, out of the bins. */
static hwrt_status grow(dpool *dp, spool *sp, size_t rsize, size_t cap, int no_gc, int no_trim,
                        pblock **out)
{
    pseg *seg = NULL;
    if (use_expandable(dp->dev)) {
        size_t g = pseg_granule(dp), total = device_total(dp);
        size_t va = round_to(rsize, g), chunk = round_to(total / 8, g);
        if (va < chunk) va = chunk;
        /* a range the device could never back is not reserved (nor its granule map
         * allocated): the plain path below fails it with the OOM sentence */
        if (va <= total && pseg_new(dp, sp, va, 1, &seg) == HWRT_SUCCESS) {
            *out = seg->first;
            return HWRT_SUCCESS;
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
        return WANT_TRIM;
    }
    if (!no_gc && gc_wanted(dp, need, cap)) return WANT_GC;
    if (cap && resv + need > cap)
        return hwi_err(HWRT_ERROR_OUT_OF_MEMORY, "the max_device_memory cap is reached");
    hwrt_status st = pseg_new(dp, sp, need, 0, &seg);
    if (st == HWRT_ERROR_OUT_OF_MEMORY && exact < need) st = pseg_new(dp, sp, exact, 0, &seg);
    HWI_TRY(st);
    seg->dedicated = sp->kind == PK_LARGE && seg->size != dp->shared_seg;
    if ((size_t)dp->st.reserved_bytes.current > dp->hw_reserved)
        dp->hw_reserved = (size_t)dp->st.reserved_bytes.current;
    *out = seg->first;
    return HWRT_SUCCESS;
}

/* Map what an expandable block needs; WANT_* asks the caller to sync and clean first.
 * Free mapped granules are unmapped (which needs a device sync) only when mapping more
 * would raise reserved above its high-water mark: below it, cached pages are reused
 * freely; at it, holes are given back first so the peak does not grow. */
static hwrt_status map_block(dpool *dp, pblock *b, size_t cap, int no_gc, int no_trim)
{
    size_t need = pseg_unmapped_in(b->seg, b->base, b->size);
    if (!need) return HWRT_SUCCESS;
    size_t resv = (size_t)dp->st.reserved_bytes.current;
    if (!no_trim && resv + need > dp->hw_reserved && trimmable(dp)) {
        dp->trim_need = need;
        return WANT_TRIM;
    }
    if (!no_gc && gc_wanted(dp, need, cap)) return WANT_GC;
    HWI_TRY(pseg_map_range(b->seg, b->base, b->size, cap));
    resv = (size_t)dp->st.reserved_bytes.current;
    if (resv > dp->hw_reserved) dp->hw_reserved = resv;
    return HWRT_SUCCESS;
}

static int should_split(const pblock *b, size_t size, size_t msz)
{
    size_t rem = b->size - size;
    if (b->seg->expandable || b->seg->sp->kind == PK_SMALL) return rem >= POOL_ROUND;
    return (!msz || size < msz) && rem > POOL_LARGE_MIN_SPLIT;
}

/* Hand out b (out of the bins): split off the rest, map what it needs, count it. */
static hwrt_status hand_out(dpool *dp, pblock *b, size_t req, size_t rsize, int no_gc,
                            int no_trim, pblock **out)
{
    size_t msz = (size_t)hwi_cfg_int(HWI_CFG_MAX_SPLIT_SIZE);
    size_t cap = (size_t)hwi_cfg_int(HWI_CFG_MAX_DEVICE_MEMORY);
    b->state = B_ALLOC;                        /* taken: the split rest must not merge back */
    if (should_split(b, rsize, msz)) pblock_split(b, rsize);
    if (b->seg->expandable) {
        hwrt_status st = map_block(dp, b, cap, no_gc, no_trim);
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
    if (!pmap_put(b)) {
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
                             int no_gc, int no_trim, pblock **out)
{
    if (dp->pending) process_events(dp);
    spool *sp = spool_get(dp, bs, rsize <= POOL_SMALL_MAX ? PK_SMALL : PK_LARGE);
    if (!sp)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "device memory pool: host out of memory");
    size_t msz = (size_t)hwi_cfg_int(HWI_CFG_MAX_SPLIT_SIZE);
    size_t cap = (size_t)hwi_cfg_int(HWI_CFG_MAX_DEVICE_MEMORY);
    pblock *b = pbin_search(sp, rsize, msz);
    if (b) pbin_remove(sp, b);
    else HWI_TRY(grow(dp, sp, rsize, cap, no_gc, no_trim, &b));
    return hand_out(dp, b, req, rsize, no_gc, no_trim, out);
}

/* The last resort before OOM, after the device sync of the retry (snap): the smallest
 * free block freed before that sync in another pool of the device: the other kind
 * (small/large) of bs's own, or, for a request on a stream, any pool of another stream;
 * then bs is recorded on the block as a user, so that when it is freed its owner's
 * stream reuses it only after bs's work on it is done (bs NULL cannot be recorded). */
static hwrt_status try_other_pools(dpool *dp, hwrt_bstream *bs, size_t req, size_t rsize,
                                   uint64_t snap, pblock **out)
{
    int kind = rsize <= POOL_SMALL_MAX ? PK_SMALL : PK_LARGE;
    pblock *best = NULL;
    for (pseg *s = dp->segs; s; s = s->next) {
        if (s->sp->owner == bs ? s->sp->kind == kind : !bs) continue;
        for (pblock *b = s->first; b; b = b->next)
            if (b->state == B_FREE && b->freed_at <= snap && b->size >= rsize &&
                (!best || b->size < best->size))
                best = b;
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
    HWI_TRY(hand_out(dp, best, req, rsize, 1, 1, out));
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
    tc_request_flush();                        /* parked blocks back first: they count */
    *snap = hwi_pool_free_seq;
    pthread_mutex_unlock(&hwi_pool_mu);
    hwrt_status st = hwi_pool_sync_device(dp->device, api);
    pthread_mutex_lock(&hwi_pool_mu);
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
        hwrt_status st = try_alloc(dp, bs, bytes, rsize, no_gc, no_trim, b);
        if (st == HWRT_SUCCESS) return st;
        if (st != WANT_GC && st != WANT_TRIM && (st != HWRT_ERROR_OUT_OF_MEMORY || retried)) {
            if (st != HWRT_ERROR_OUT_OF_MEMORY) return st;
            char cause[512];
            snprintf(cause, sizeof cause, "%s", hwrt_last_error());
            if (synced && try_other_pools(dp, bs, bytes, rsize, retry_snap, b) == HWRT_SUCCESS)
                return HWRT_SUCCESS;
            dp->st.num_ooms++;
            return hwi_pool_oom(dp, bytes, rsize, cause);
        }
        uint64_t snap;
        hwrt_status sst = sync_unlocked(dp, "device memory allocation", &snap);
        if (st == WANT_GC) {
            no_gc = 1;
            if (sst == HWRT_SUCCESS) {
                double thr = hwi_cfg_double(HWI_CFG_GC_THRESHOLD);
                size_t cap = (size_t)hwi_cfg_int(HWI_CFG_MAX_DEVICE_MEMORY);
                size_t limit = cap ? cap : device_total(dp);
                size_t target = (size_t)(thr * (double)limit);
                release_cached(dp, snap, target > dp->gc_need ? target - dp->gc_need : 0, 0);
            }
        } else if (st == WANT_TRIM) {
            no_trim = 1;
            /* unmap free granules; release whole free segments, oldest first, until
             * the growth fits under the high-water mark */
            if (sst == HWRT_SUCCESS)
                release_cached(dp, snap, dp->hw_reserved > dp->trim_need ? dp->hw_reserved - dp->trim_need : 0, 0);
        } else {
            retried = 1;
            dp->st.num_alloc_retries++;
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
    pthread_mutex_lock(&hwi_pool_mu);
    dpool *dp = dpool_get(d);
    pblock *b = NULL;
    if (dp) tc_slow_enter(dp, bs);
    hwrt_status st = dp ? alloc_locked(dp, bs, bytes, &b)
                        : hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "device memory pool: host out of memory");
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
    pthread_mutex_unlock(&hwi_pool_mu);
    if (report) hwi_dev_report_usage(d, resv, alloc);
    return st;
}

/* The profiler's view of an allocation or free, with the device's figures after it. */
static void mem_event(hwi_mem_event_kind kind, int device, const void *p, size_t bytes)
{
    hwrt_memory_info m;
    hwi_pool_fill_info(device, &m);
    hwi_mem_event(kind, device, p, bytes, m.allocated, m.reserved);
}

static inline hwrt_status pool_alloc(hwi_device *d, size_t bytes, hwrt_bstream *bs, int owned,
                                     void **out)
{
    /* the thread cache is off while record_alloc_sites is on, so sites are never lost */
    hwrt_status st = tc_try_alloc(d, bs, bytes, owned, out) ? HWRT_SUCCESS
                                                            : alloc_slow(d, bytes, bs, owned, out);
    if (st == HWRT_SUCCESS && hwi_mem_events_active())
        mem_event(HWI_MEM_ALLOC, d->id, *out, bytes);
    return st;
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

/* The live block containing p (exact base first: the common case). */
static pblock *live_containing(const void *p)
{
    pblock *b = pmap_get(p);
    if (b) return atomic_load_explicit(&b->in_tc, memory_order_relaxed) ? NULL : b;
    pseg *s = pseg_index_find(p);
    if (!s) return NULL;
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

static hwrt_status __attribute__((noinline)) free_slow(void *p, const char *api, int user)
{
    pthread_mutex_lock(&hwi_pool_mu);
    pblock *b = pmap_get(p);
    if (b && atomic_load_explicit(&b->in_tc, memory_order_relaxed)) b = NULL;   /* parked */
    if (b && user && b->owned) {
        pthread_mutex_unlock(&hwi_pool_mu);
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT,
                       "%s(%p): the pointer is the data of a live tensor (hwrt_tensor_data); "
                       "release the tensor with hwrt_tensor_release instead, which frees it once "
                       "its queued work is done", api, p);
    }
    if (b) {
        pmap_take(p);
        atomic_fetch_add(&b->tc_gen, 1);       /* no thread cache may take it back */
    } else {
        int inside = live_containing(p) != NULL;
        pthread_mutex_unlock(&hwi_pool_mu);
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT,
                       "%s(%p): %s; pass the exact pointer hwrt_malloc returned, once", api, p,
                       inside ? "the pointer is inside a block, not its start"
                              : "hwrt did not allocate this pointer (a host pointer, or already freed)");
    }
    dpool *dp = b->seg->dp;
    if (hwi_alloc_trace_active())              /* the free's stream: the last user, else its own */
        hwi_alloc_trace_free(dp->device, p, b->nuses ? b->uses[b->nuses - 1] : b->seg->sp->owner,
                             b->tag);
    pool_stat_sub(&dp->st.allocation, 1);
    pool_stat_sub(&dp->st.allocated_bytes, (int64_t)b->size);
    pool_stat_sub(&dp->st.requested_bytes, (int64_t)b->requested);
    free(b->tag);
    b->tag = NULL;
    b->freed_at = ++hwi_pool_free_seq;
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
    pthread_mutex_unlock(&hwi_pool_mu);
    if (report) hwi_dev_report_usage(dp->dev, resv, alloc);
    return HWRT_SUCCESS;
}

static hwrt_status pool_free(void *p, const char *api, int user)
{
    hwi_block_info info = {.device = -1};
    if (hwi_mem_events_active() && !hwi_pool_find(p, 1, &info)) info.device = -1;
    hwrt_status st = tc_try_free(p, user) ? HWRT_SUCCESS : free_slow(p, api, user);
    if (st == HWRT_SUCCESS && info.device >= 0)
        mem_event(HWI_MEM_FREE, info.device, p, info.size);
    return st;
}

hwrt_status hwi_pool_free(void *p, const char *api) { return pool_free(p, api, 0); }

hwrt_status hwi_pool_free_user(void *p, const char *api) { return pool_free(p, api, 1); }

hwrt_status hwi_pool_free_on(void *p, hwrt_bstream *bs, int device, const char *api)
{
    tcache *t = hwi_tc;
    /* with a profiler observing, take the reporting path (pool_free) */
    if (t && t->owner == bs && t->device == device && !hwi_mem_events_active() &&
        tc_try_free(p, 1))
        return HWRT_SUCCESS;
    pthread_mutex_lock(&hwi_pool_mu);
    pblock *b = live_containing(p);
    int record = b && b->base == (char *)p && b->seg->dp->device == device && bs &&
                 bs != b->seg->sp->owner;
    pthread_mutex_unlock(&hwi_pool_mu);
    if (record) HWI_TRY(hwi_pool_record_stream(p, bs));
    return pool_free(p, api, 1);
}

hwrt_status hwi_pool_record_stream(void *p, hwrt_bstream *bs)
{
    pthread_mutex_lock(&hwi_pool_mu);
    pblock *b = live_containing(p);
    hwrt_status st = HWRT_SUCCESS;
    if (!b) {
        st = hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_record_stream(%p): not a live block "
                     "allocated by hwrt", p);
    } else if (bs && bs != b->seg->sp->owner) {
        int have = 0;
        for (int i = 0; i < b->nuses; i++) have |= b->uses[i] == bs;
        if (!have && b->nuses == b->cap_uses) {
            int nc = b->cap_uses ? b->cap_uses * 2 : 4;
            hwrt_bstream **u = realloc(b->uses, (size_t)nc * sizeof *u);
            hwrt_bevent **e = u ? realloc(b->evs, (size_t)nc * sizeof *e) : NULL;
            if (u) b->uses = u;
            if (e) { b->evs = e; b->cap_uses = nc; }
        }
        if (!have && b->nuses < b->cap_uses) b->uses[b->nuses++] = bs;
        else if (!have)
            st = hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "hwrt_record_stream: host out of memory");
    }
    pthread_mutex_unlock(&hwi_pool_mu);
    return st;
}

/* ---- lookups ---- */

int hwi_pool_find(const void *p, size_t bytes, hwi_block_info *out)
{
    pthread_mutex_lock(&hwi_pool_mu);
    pblock *b = live_containing(p);
    size_t off = b ? (size_t)((const char *)p - b->base) : 0;
    int ok = b && off <= b->requested && bytes <= b->requested - off;   /* no wrap */
    if (b && out) *out = (hwi_block_info){b->seg->dp->device, b->base, b->requested};
    pthread_mutex_unlock(&hwi_pool_mu);
    return ok;
}

int hwi_pool_is_device_ptr(const void *p, int *device)
{
    pthread_mutex_lock(&hwi_pool_mu);
    pseg *s = pseg_index_find(p);
    if (s && device) *device = s->dp->device;
    pthread_mutex_unlock(&hwi_pool_mu);
    return s != NULL;
}

/* ---- cache control ---- */

hwrt_status hwi_pool_empty_cache(hwi_device *d)
{
    pthread_mutex_lock(&hwi_pool_mu);
    dpool *dp = hwi_pool_devs[d->id];
    hwrt_status st = HWRT_SUCCESS;
    if (dp) {
        uint64_t snap;
        st = sync_unlocked(dp, "hwrt_empty_cache", &snap);
        if (st == HWRT_SUCCESS) release_cached(dp, snap, SIZE_MAX, 0);
    }
    size_t resv = 0, alloc = 0;
    if (dp) dp->report_skips = 1024;           /* the monitor gets exact figures now */
    int report = dp && report_due(dp, &resv, &alloc);
    pthread_mutex_unlock(&hwi_pool_mu);
    if (report) hwi_dev_report_usage(d, resv, alloc);
    return st;
}

/* The stream's work is done (exec synchronized it): its cached blocks join the
 * NULL-stream pool of the device, and no block keeps it as a user. */
void hwi_pool_stream_destroyed(hwrt_bstream *bs)
{
    pthread_mutex_lock(&hwi_pool_mu);
    tc_request_flush();                        /* caches keyed by bs give their blocks back */
    hwi_alloc_trace_stream_gone(bs);
    for (int i = 0; i < HWI_MAX_DEVICES; i++) {
        dpool *dp = hwi_pool_devs[i];
        if (!dp) continue;
        for (pseg *s = dp->segs; s; s = s->next) {
            for (pblock *b = s->first; b; b = b->next)
                for (int k = 0; k < b->nuses; k++)
                    if (b->uses[k] == bs) b->uses[k--] = b->uses[--b->nuses];
            if (s->sp->owner != bs) continue;
            spool *to = spool_get(dp, NULL, s->sp->kind);
            if (!to) continue;                 /* host OOM: keep it under the old key */
            spool *from = s->sp;
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
    }
    pthread_mutex_unlock(&hwi_pool_mu);
}
