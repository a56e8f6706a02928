/* Fetch: a tensor's data brought back to the device on the H2D engine, from the host
 * tier (stream-ordered) or the disk tier (read and verified first). */
#include "res_internal.h"
#include "../runtime/device_ops.h"
#include "../base/log.h"
#include "../base/status.h"
#include "../mem/pool.h"
#include "../exec/dispatch.h"

#include <stdlib.h>
#include <string.h>

/* ---- fetch ---- */

hwrt_status hwi_res_fetch(hwi_resident *r, hwi_tensor *const *keep, int nkeep,
                          const char *api)
{
    hwi_tensor *t = r->t;
    if (t->nbytes == 0) {              /* no bytes (and no block): nothing to move */
        r->loc = HWI_LOC_DEVICE;
        return HWRT_SUCCESS;
    }
    if (r->wb) {
        /* its data is in flight to the host tier: wait for the write-back to settle
         * (it may give the block back, and then nothing needs fetching) */
        hwi_xfer_wait(r->wb);
        hwi_res_settle();
        if (t->data) return HWRT_SUCCESS;
    }
    HWI_TRY(hwi_res_engine_streams(t->device));
    hwi_tensor *self[1] = {t};
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_get(t->device, &d));
    uint64_t t0 = hwi_res_now_ns();
    void *p;
    hwi_stream *fs = hwi_res_fetch_stream(t->device);
    int from_host = r->has_host;
    char what[160];
    hwi_res_describe(t, what, sizeof what);
    /* the memory is first written by the fetch stream: victims may leave in its order */
    MGR.victim_use = 0;
    int hole = 0;
    size_t bytes = hwi_plan_fetch_bytes(r, keep ? keep : self, keep ? nkeep : 1, &hole);
    HWI_TRY(hwi_res_alloc(d, bytes, keep ? keep : self, keep ? nkeep : 1, fs, api, &p));
    r->hole_block = hole;
    r->wait_use = MGR.victim_use;
    r->window_pending = 1;
    hwi_xfer *x = NULL;
    hwrt_status st = HWRT_SUCCESS;
    if (!from_host) {                 /* read and verify before anything is queued */
        uint64_t h0 = hwi_res_now_ns();
        st = hwi_res_staging(t->nbytes);
        if (st == HWRT_SUCCESS) st = hwi_disk_read(&r->disk, MGR.staging, api, what);
        hwi_dispatch_span(HWI_PROF_OFFLOAD_STALL, "disk read", t->device, h0,
                          hwi_res_now_ns(), t->nbytes);
    }
    if (st == HWRT_SUCCESS) st = hwi_xfer_new(t->device, p, &x);
    if (st != HWRT_SUCCESS) {
        /* nothing was queued, but p may be a block lent by a write-back still in flight
         * (fs waits for it): as an abandoned fetch, resolve_fetch lets that write-back
         * decide who keeps p */
        hwi_xfer *hold = calloc(1, sizeof *hold);
        hwi_dev_stream_synchronize(fs->dev, fs->bs);
        if (!hold) {
            hwi_res_settle();
            hwi_pool_free(p, api);
            return st;
        }
        hold->abandoned = 1;
        hold->block = p;
        t->data = p;
        MGR.stats.device_bytes += t->nbytes;
        r->fetch = hold;
        MGR.unsettled++;
        hwi_res_resolve_fetch(r);
        return st;
    }
    t->data = p;
    MGR.stats.device_bytes += t->nbytes;
    r->fetch = x;
    MGR.unsettled++;
    hwi_log(HWI_LOG_DEBUG, "offload: fetching %s from the %s tier to device %d (%s)", what,
            from_host ? "host" : "disk", t->device, api);
    if (from_host) {
        uint64_t h0 = hwi_res_now_ns();
        st = hwrt_memcpy_async(p, r->host, t->nbytes, HWRT_MEMCPY_HOST_TO_DEVICE, fs->handle);
        if (!r->host_pinned) {        /* pageable: the host itself waited for the copy */
            MGR.stats.stall_ms += hwi_res_ms_since(h0);
            hwi_dispatch_span(HWI_PROF_OFFLOAD_STALL, "pageable fetch", t->device, h0,
                              hwi_res_now_ns(), t->nbytes);
        }
        MGR.stats.fetches_from_host++;
        MGR.stats.bytes_from_host += t->nbytes;
    } else {
        st = hwrt_memcpy_async(p, MGR.staging, t->nbytes, HWRT_MEMCPY_HOST_TO_DEVICE, fs->handle);
        MGR.stats.fetches_from_disk++;
        MGR.stats.bytes_from_disk += t->nbytes;
    }
    if (st != HWRT_SUCCESS) {
        hwi_dev_stream_synchronize(fs->dev, fs->bs);
        x->abandoned = 1;
    } else {
        st = hwi_xfer_close(x, fs);
    }
    if (st == HWRT_SUCCESS && !from_host)
        st = hwi_stream_sync(fs, api);    /* the bounce buffer is reused by the next read */
    if (st != HWRT_SUCCESS || !from_host) {
        if (st != HWRT_SUCCESS && !hwi_xfer_done(x)) hwi_xfer_wait(x);
        hwi_res_settle();                 /* a fetch that did not land drops its block */
        if (st == HWRT_SUCCESS && !t->data)
            st = hwi_err(HWRT_ERROR_DEVICE_FAULT, "%s: fetching %s did not complete (device "
                         "fault)", api, what);
        if (st != HWRT_SUCCESS) return st;
    }
    r->loc = HWI_LOC_DEVICE;
    r->dirty = 0;
    /* fetched to be used soon: least-recently-used eviction must not pick it first
     * (a prefetched tensor would otherwise carry its last step's tick) */
    r->last_use = ++MGR.tick;
    MGR.stats.fetch_ms += hwi_res_ms_since(t0);
    hwi_dispatch_span(strstr(api, "prefetch") ? HWI_PROF_OFFLOAD_PREFETCH
                                              : HWI_PROF_OFFLOAD_FETCH,
                      from_host ? "fetch from host" : "fetch from disk", t->device, t0,
                      hwi_res_now_ns(), t->nbytes);
    return HWRT_SUCCESS;
}
