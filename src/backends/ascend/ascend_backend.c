/* The Ascend backend's ops table (AscendCL and aclnn through dlopen; see
 * ascend_internal.h). Written from CANN's published interfaces: docs/ascend.md lists what
 * was checked and what only hardware can confirm. */
#include "ascend_internal.h"
#include "ascend_dcmi.h"

static void asc_report_usage(hwrt_bdev *d, size_t reserved, size_t allocated)
{
    asc_dcmi_publish_usage(d->ordinal, reserved, allocated);
}

hwrt_status asc_probe(int *count, char *reason, size_t rlen);
hwrt_status asc_device_props(int ordinal, hwrt_device_props *p);
hwrt_status asc_device_open(int ordinal, hwrt_bdev **out);
void asc_device_close(hwrt_bdev *d);
hwrt_status asc_mem_info(hwrt_bdev *d, size_t *free_b, size_t *total, size_t *overhead);
hwrt_status asc_segment_alloc(hwrt_bdev *d, size_t bytes, void **dptr);
hwrt_status asc_segment_free(hwrt_bdev *d, void *dptr, size_t bytes);
size_t asc_va_granularity(hwrt_bdev *d);
hwrt_status asc_va_reserve(hwrt_bdev *d, size_t bytes, void **base);
hwrt_status asc_va_map(hwrt_bdev *d, void *addr, size_t bytes);
hwrt_status asc_va_unmap(hwrt_bdev *d, void *addr, size_t bytes);
hwrt_status asc_va_release(hwrt_bdev *d, void *base, size_t bytes);
hwrt_status asc_host_alloc(size_t bytes, void **hptr);
void asc_host_free(void *hptr, size_t bytes);
hwrt_status asc_stream_create(hwrt_bdev *d, int priority, hwrt_bstream **out);
void asc_stream_destroy(hwrt_bstream *s);
hwrt_status asc_stream_synchronize(hwrt_bstream *s);
hwrt_status asc_stream_query(hwrt_bstream *s);
hwrt_status asc_stream_wait_event(hwrt_bstream *s, hwrt_bevent *e);
void *asc_stream_native(hwrt_bstream *s);
hwrt_status asc_memcpy_async(hwrt_bstream *s, void *dst, const void *src, size_t bytes,
                             hwrt_memcpy_kind kind, int host_pinned);
hwrt_status asc_memset_async(hwrt_bstream *s, void *dptr, int value, size_t bytes);
hwrt_status asc_host_func(hwrt_bstream *s, hwrt_host_fn fn, void *arg);
hwrt_status asc_device_synchronize(hwrt_bdev *d);
hwrt_status asc_device_reset(hwrt_bdev *d);
hwrt_status asc_event_create(hwrt_bdev *d, unsigned flags, hwrt_bevent **out);
void asc_event_destroy(hwrt_bevent *e);
hwrt_status asc_event_record(hwrt_bevent *e, hwrt_bstream *s);
hwrt_status asc_event_query(hwrt_bevent *e);
hwrt_status asc_event_synchronize(hwrt_bevent *e);
hwrt_status asc_event_elapsed_ms(float *ms, hwrt_bevent *start, hwrt_bevent *end);
hwrt_status asc_event_timestamp_ns(hwrt_bevent *e, uint64_t *ns);

const hwrt_backend_ops hwrt_backend_ascend = {
    .abi_version = HWRT_BACKEND_ABI_VERSION,
    .name = "ascend",
    .probe = asc_probe,
    .device_props = asc_device_props,
    .device_open = asc_device_open,
    .device_close = asc_device_close,
    .mem_info = asc_mem_info,
    .segment_alloc = asc_segment_alloc,
    .segment_free = asc_segment_free,
    .va_granularity = asc_va_granularity,
    .va_reserve = asc_va_reserve,
    .va_map = asc_va_map,
    .va_unmap = asc_va_unmap,
    .va_release = asc_va_release,
    .host_alloc = asc_host_alloc,
    .host_free = asc_host_free,
    .stream_create = asc_stream_create,
    .stream_destroy = asc_stream_destroy,
    .stream_synchronize = asc_stream_synchronize,
    .stream_query = asc_stream_query,
    .stream_wait_event = asc_stream_wait_event,
    .memcpy_async = asc_memcpy_async,
    .memset_async = asc_memset_async,
    .kernel_launch = asc_kernel_launch,
    .host_func = asc_host_func,
    .event_create = asc_event_create,
    .event_destroy = asc_event_destroy,
    .event_record = asc_event_record,
    .event_query = asc_event_query,
    .event_synchronize = asc_event_synchronize,
    .event_elapsed_ms = asc_event_elapsed_ms,
    .event_timestamp_ns = asc_event_timestamp_ns,
    .device_synchronize = asc_device_synchronize,
    /* clears hwrt's sticky record when the device synchronizes cleanly again */
    .device_reset = asc_device_reset,
    /* the pool's figures on the usage board, for hwrt-smi's reconciliation with DCMI */
    .report_usage = asc_report_usage,
    /* DCMI, what npu-smi reads (ascend_dcmi.c) */
    .monitor = asc_monitor,
    /* ACL's profiling data goes to files for msprof, not to an in-process callback: the
     * profiler places work with events */
    .activity_enable = NULL,
    .activity_query = NULL,
    /* the aclrtStream, for HCCL (which queues collectives on it) */
    .stream_native = asc_stream_native,
    .dlpack_device = NULL,
    /* the device's context current on the calling thread, its sticky fault first
     * (NCCL/HCCL engine threads) */
    .thread_enter = asc_enter,
    .more_devices_hint = "ASCEND_RT_VISIBLE_DEVICES may hide NPUs: widen or unset it",
};
