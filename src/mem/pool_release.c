/* Under pressure: the allocation loop that syncs the device and releases cached memory
 * (whole free segments, free pages of expandable ranges) when an attempt asks for it or
 * fails, retries, then takes another pool's free block as the last resort before
 * failing with the breakdown (hwi_pool_oom); garbage_collection_threshold; and
 * hwrt_empty_cache. Guarded by the pool's lock (released around device syncs). */
#include "../base/config.h"
#include "../base/log.h"
#include "../base/status.h"
#include "../runtime/device_ops.h"
#include "mem_events.h"
#include "pool_internal.h"

#include <stdio.h>
#include <stdlib.h>

/* garbage_collection_threshold: before the pool grows past that fraction of the cap
 * (or of the device), it gives back cached segments, least recently freed first. */
int pool_gc_wanted(dpool *dp, size_t need, size_t cap)
{
    double thr = hwi_cfg_double(HWI_CFG_GC_THRESHOLD);
    if (thr <= 0) return 0;
    size_t limit = cap ? cap : pool_device_total(dp);
    if ((double)((size_t)dp->st.reserved_bytes.current + need) <= thr * (double)limit) return 0;
    dp->gc_need = need;
    for (pseg *s = dp->segs; s; s = s->next)
        if (s->first->state == B_FREE && (!s->first->next || s->expandable)) return 1;
    return 0;
}

/* Would trimming give anything back: free mapped granules of expandable ranges, or a
 * whole free plain segment? */
int pool_trimmable(dpool *dp)
{
    for (pseg *s = dp->segs; s; s = s->next) {
        if (!s->expandable) {
            if (s->first->state == B_FREE && !s->first->next) return 1;
            continue;
        }
        if (pseg_has_idle_pages(s)) return 1;
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
void pool_release_cached(dpool *dp, uint64_t snap, size_t target)
{
    for (pseg *s = dp->segs; s; s = s->next)
        if (s->expandable)
            for (pblock *b = s->first; b; b = b->next)
                if (b->state == B_FREE && b->freed_at <= snap) pseg_trim_block(b);
    while ((size_t)dp->st.reserved_bytes.current > target || target == SIZE_MAX) {
        pseg *best = NULL;
        for (pseg *s = dp->segs; s; s = s->next)
            if (seg_releasable(s, snap) && (!best || s->first->freed_at < best->first->freed_at))
                best = s;
        if (!best) break;
        pbin_remove(best->sp, best->first);
        pseg_release(best);
    }
}

/* Synchronize the device with the pool lock released; sets *snap to the free sequence
 * before the sync: blocks freed up to it are no longer touched by queued work. */
hwrt_status pool_sync_unlocked(dpool *dp, const char *api, uint64_t *snap)
{
    tc_request_flush(dp);                      /* parked blocks back first: they count */
    *snap = dp->free_seq;
    pthread_mutex_unlock(&dp->mu);
    /* the device-wide synchronize (exec's checked one once streams exist: runtime/device.h) */
    hwrt_status st = hwi_device_synchronize(dp->dev, api);
    pthread_mutex_lock(&dp->mu);
    dp->st.num_sync_all_streams++;
    if (st == HWRT_SUCCESS) pool_process_events(dp);
    return st;
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
    int kind = pool_kind_of(dp, rsize);
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
    if (at_end) pool_place_at_end(best, rsize, (size_t)hwi_cfg_int(HWI_CFG_MAX_SPLIT_SIZE));
    pool_want want;                            /* never set: no GC, no trim here */
    HWI_TRY(pool_hand_out(dp, best, req, rsize, 1, 1, &want, out));
    if (best->seg->sp->owner != bs) {
        best->uses[0] = bs;
        best->nuses = 1;
    }
    return HWRT_SUCCESS;
}

hwrt_status pool_alloc_retry(dpool *dp, hwrt_bstream *bs, size_t bytes, size_t rsize,
                             hwrt_status st, pool_want want, pblock **b)
{
    int no_gc = 0, no_trim = 0, retried = 0, synced = 0;
    uint64_t retry_snap = 0;
    for (;; st = pool_try_alloc(dp, bs, bytes, rsize, no_gc, no_trim, &want, b)) {
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
        hwrt_status sst = pool_sync_unlocked(dp, "device memory allocation", &snap);
        if (want == WANT_GC || want == WANT_TRIM)
            hwi_log(HWI_LOG_DEBUG, "device %d: releasing cached memory before growing (%s)",
                    dp->device, want == WANT_GC ? "garbage_collection_threshold reached"
                                                : "growth past the reserved high-water mark");
        if (want == WANT_GC) {
            no_gc = 1;
            if (sst == HWRT_SUCCESS) {
                double thr = hwi_cfg_double(HWI_CFG_GC_THRESHOLD);
                size_t cap = (size_t)hwi_cfg_int(HWI_CFG_MAX_DEVICE_MEMORY);
                size_t limit = cap ? cap : pool_device_total(dp);
                size_t target = (size_t)(thr * (double)limit);
                pool_release_cached(dp, snap, target > dp->gc_need ? target - dp->gc_need : 0);
            }
        } else if (want == WANT_TRIM) {
            no_trim = 1;
            /* unmap free granules; release whole free segments, oldest first, until
             * the growth fits under the high-water mark */
            if (sst == HWRT_SUCCESS)
                pool_release_cached(dp, snap, dp->hw_reserved > dp->trim_need ? dp->hw_reserved - dp->trim_need : 0);
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
            if (sst == HWRT_SUCCESS) pool_release_cached(dp, snap, SIZE_MAX);
            synced = sst == HWRT_SUCCESS;
            retry_snap = snap;
        }
    }
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
    hwrt_status st = pool_sync_unlocked(dp, "hwrt_empty_cache", &snap);
    if (st == HWRT_SUCCESS) pool_release_cached(dp, snap, SIZE_MAX);
    int64_t released = before - dp->st.reserved_bytes.current;
    size_t resv = 0, alloc = 0;
    dp->report_skips = 1024;                   /* the monitor gets exact figures now */
    int report = pool_report_due(dp, &resv, &alloc);
    pthread_mutex_unlock(&dp->mu);
    if (report) hwi_dev_report_usage(d, resv, alloc);
    /* the observer (the profiler's memory curve) sees the drop now, not at the next
     * allocation, which may never come */
    if (released > 0 && hwi_mem_events_active())
        pool_mem_event(HWI_MEM_RELEASE, d, NULL, (size_t)released);
    if (released > 0 && hwi_log_level() >= HWI_LOG_DEBUG) {
        char b[32];
        hwi_log(HWI_LOG_DEBUG, "device %d: hwrt_empty_cache released %s", d->ordinal,
                hwi_fmt_bytes(b, sizeof b, (uint64_t)released));
    }
    return st;
}
