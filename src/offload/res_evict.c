/* Eviction the host waits for: the device copy saved to the host tier, else the disk
 * tier, and the block given back to the pool only once the save completed. */
#include "res_internal.h"
#include "../base/config.h"
#include "../base/log.h"
#include "../base/status.h"
#include "../mem/pool.h"
#include "../exec/dispatch.h"

hwrt_status hwi_res_staging(size_t bytes)
{
    if (MGR.staging_size >= bytes)
        return HWRT_SUCCESS;
    hwrt_host_free(MGR.staging);
    MGR.staging = NULL;
    MGR.staging_size = 0;
    HWI_TRY(hwrt_host_alloc(&MGR.staging, bytes, HWRT_HOST_PINNED));
    MGR.staging_size = bytes;
    return HWRT_SUCCESS;
}

/* ---- eviction ---- */

/* Write the device copy to the host tier, else the disk tier, the host waiting for the
 * copy. Nothing changes (and nothing stays allocated) unless it completed. */
static hwrt_status save_copy(hwi_resident *r, const char *api)
{
    hwi_tensor *t = r->t;
    size_t n = t->nbytes;
    hwi_stream *s = hwi_res_evict_stream(t->device);
    size_t cpu = (size_t)hwi_cfg_int(HWI_CFG_OFFLOAD_CPU_SIZE);
    size_t disk = (size_t)hwi_cfg_int(HWI_CFG_OFFLOAD_DISK_SIZE);
    if (r->host || MGR.host_used + n <= cpu) {
        int fresh = !r->host;
        int pin = fresh ? (int)hwi_cfg_int(HWI_CFG_ENABLE_PINNED_MEM) : r->host_pinned;
        void *h = r->host;
        if (fresh) HWI_TRY(hwrt_host_alloc(&h, n, pin ? HWRT_HOST_PINNED : HWRT_HOST_DEFAULT));
        hwrt_status st = hwrt_memcpy_async(h, t->data, n, HWRT_MEMCPY_DEVICE_TO_HOST, s->handle);
        if (st == HWRT_SUCCESS) st = hwi_stream_sync(s, api);
        if (st != HWRT_SUCCESS) {
            if (fresh) hwrt_host_free(h);          /* a retry must not leak it */
            return st;
        }
        if (fresh) {
            r->host = h;
            r->host_pinned = pin;
            MGR.host_used += n;
        }
        r->has_host = 1;
        MGR.stats.evictions_to_host++;
        MGR.stats.bytes_to_host += n;
        if (r->has_disk) {                         /* the file region is stale now */
            hwi_disk_release(&r->disk);
            r->has_disk = 0;
            MGR.disk_used -= n;
        }
        r->loc = HWI_LOC_HOST;
        return HWRT_SUCCESS;
    }
    if (r->has_disk || MGR.disk_used + n <= disk) {
        HWI_TRY(hwi_res_staging(n));
        HWI_TRY(hwrt_memcpy_async(MGR.staging, t->data, n, HWRT_MEMCPY_DEVICE_TO_HOST,
                                  s->handle));
        HWI_TRY(hwi_stream_sync(s, api));
        char what[160];
        int had = r->has_disk;
        hwrt_status st = hwi_disk_write(&r->disk, MGR.staging, n, api,
                                        hwi_res_describe(t, what, sizeof what));
        if (st != HWRT_SUCCESS) {
            if (had) { r->has_disk = 0; MGR.disk_used -= n; }
            return st;                             /* the device copy stays */
        }
        if (!had) MGR.disk_used += n;
        r->has_disk = 1;
        MGR.stats.evictions_to_disk++;
        MGR.stats.bytes_to_disk += n;
        r->loc = HWI_LOC_DISK;
        return HWRT_SUCCESS;
    }
    return hwi_res_tier_oom(t->device, n, api);
}

hwrt_status hwi_res_evict(hwi_resident *r, const char *api)
{
    hwi_tensor *t = r->t;
    if (!t->data)
        return HWRT_SUCCESS;                       /* already off the device */
    if (!hwi_res_idle(r))
        return hwi_err(HWRT_ERROR_DEVICE_BUSY, "%s: the tensor is still used by queued work; "
                       "synchronize its streams first", api);
    hwi_res_settle();                              /* a failed fetch leaves no block */
    if (!t->data)
        return HWRT_SUCCESS;
    HWI_TRY(hwi_res_engine_streams(t->device));
    uint64_t t0 = hwi_res_now_ns();
    if (r->dirty || (!r->has_host && !r->has_disk)) {
        HWI_TRY(save_copy(r, api));
    } else {
        MGR.stats.clean_evictions++;
        r->loc = hwi_res_off_device(r);
    }
    r->dirty = 0;
    hwi_xfer_retire(r->fetch);                              /* done and settled: idle */
    r->fetch = NULL;
    hwi_dispatch_forget(t->data);          /* the pool orders any reuse of the block */
    HWI_TRY(hwi_pool_free(t->data, api));
    t->data = NULL;
    MGR.stats.device_bytes -= t->nbytes;
    MGR.stats.evict_ms += hwi_res_ms_since(t0);
    hwi_dispatch_span(HWI_PROF_OFFLOAD_EVICT, "evict", t->device, t0, hwi_res_now_ns(),
                      t->nbytes);
    if (hwi_log_level() >= HWI_LOG_DEBUG) {
        char what[160];
        hwi_res_describe(t, what, sizeof what);
        hwi_log(HWI_LOG_DEBUG, "offload: evicted %s from device %d to the %s tier (%s)", what,
                t->device, r->has_host ? "host" : "disk", api);
    }
    return HWRT_SUCCESS;
}
