/* Device memory for a tensor's data under the residency manager: making room (victims
 * by use, stream-ordered where they are busy) and allocating. */
#include "res_internal.h"
#include "../base/status.h"
#include "../mem/pool.h"

/* Evict until `bytes` more fit the budget. Victims are chosen by use (offload_plan.c's
 * rule) among those that cost the host no wait: idle tensors, and (with `order`)
 * tensors still used by queued work whose block can hold `bytes`, which hand it over in
 * `order`'s stream order (*handed set: nothing to allocate); an idle one goes first
 * unless it is needed within the prefetch window. Only when neither exists does the
 * host wait for the best victim (backpressure, counted in victim_waits). */
static hwrt_status make_room(int device, size_t bytes, hwi_tensor *const *keep, int nkeep,
                             hwi_stream *order, const char *api, void **handed)
{
    size_t budget = hwi_res_budget(device);
    for (;;) {
        hwrt_memory_info m;
        HWI_TRY(hwrt_get_memory_info(device, &m));
        if (hwi_res_fits(device, bytes))
            return HWRT_SUCCESS;
        hwi_resident *v = hwi_plan_pick_victim(device, keep, nkeep, 0);
        /* a busy victim that can leave in stream order costs the host nothing either:
         * it goes first when the idle one is needed soon (hwi_plan_prefer_busy) */
        hwi_resident *h = order ? hwi_plan_pick_handover(device, bytes, keep, nkeep) : NULL;
        uint64_t h_use = h ? h->use_no : 0;
        if (h && (!v || hwi_plan_prefer_busy(h, v)) && hwi_res_hand_over(h, bytes, order, handed)) {
            if (h_use > MGR.victim_use) MGR.victim_use = h_use;
            return HWRT_SUCCESS;
        }
        if (!v) {
            /* no victim can leave without the host waiting: a prefetch gives up (the
             * op fetches on demand when it comes, the device further along), it never
             * makes the host wait; an allocation within the budget lets the pool try
             * first (the pool cannot place it without a device sync) */
            if (hwi_offload.horizon)
                return HWRT_ERROR_NOT_READY;       /* nothing to report: not an error */
            if (m.allocated + bytes <= budget)
                return HWRT_SUCCESS;
            v = hwi_plan_pick_victim(device, keep, nkeep, 1);
            if (!v)
                return hwi_res_tier_oom(device, bytes, api);
            MGR.stats.victim_waits++;
            HWI_TRY(hwi_res_wait_idle(v));
        }
        HWI_TRY(hwi_res_evict(v, api));
    }
}

hwrt_status hwi_res_alloc(hwi_device *d, size_t bytes, hwi_tensor *const *keep, int nkeep,
                          hwi_stream *order, const char *api, void **out)
{
    if (order) HWI_TRY(hwi_res_engine_streams(d->id));
    for (;;) {
        void *handed = NULL;
        HWI_TRY(make_room(d->id, bytes, keep, nkeep, order, api, &handed));
        if (handed) {
            *out = handed;
            return HWRT_SUCCESS;
        }
        hwrt_status st = hwi_pool_alloc_tensor(d, bytes, out);
        if (st != HWRT_ERROR_OUT_OF_MEMORY)
            return st;
        /* within the budget but the device itself is full (page rounding, other
         * processes): free one more tensor's memory and try again (a prefetch gives
         * up rather than make the host wait for a busy victim) */
        hwi_resident *v = hwi_plan_pick_victim(d->id, keep, nkeep, 1);
        if (!v)
            return st;                             /* the allocator's own sentence */
        if (!hwi_res_idle(v)) {
            if (hwi_offload.horizon) return st;
            MGR.stats.victim_waits++;
        }
        HWI_TRY(hwi_res_wait_idle(v));
        HWI_TRY(hwi_res_evict(v, api));
    }
}
