/* The CUDA backend's ops table (driver API through dlopen; see cuda_internal.h). */
#include "cuda_internal.h"
#include "cuda_nvml.h"
#include "hwrt/dlpack.h"   /* kDLCUDA, kDLCUDAHost */

hwrt_status cu_probe(int *count, char *reason, size_t rlen);
hwrt_status cu_device_props(int ordinal, hwrt_device_props *p);
hwrt_status cu_device_open(int ordinal, hwrt_bdev **out);
void cu_device_close(hwrt_bdev *d);
void cu_report_usage(hwrt_bdev *d, size_t reserved, size_t allocated);
hwrt_status cu_mem_info(hwrt_bdev *d, size_t *free_b, size_t *total, size_t *overhead);
hwrt_status cu_segment_alloc(hwrt_bdev *d, size_t bytes, void **dptr);
hwrt_status cu_segment_free(hwrt_bdev *d, void *dptr, size_t bytes);
size_t cu_va_granularity(hwrt_bdev *d);
hwrt_status cu_va_reserve(hwrt_bdev *d, size_t bytes, void **base);
hwrt_status cu_va_map(hwrt_bdev *d, void *addr, size_t bytes);
hwrt_status cu_va_unmap(hwrt_bdev *d, void *addr, size_t bytes);
hwrt_status cu_va_release(hwrt_bdev *d, void *base, size_t bytes);
hwrt_status cu_host_alloc(size_t bytes, void **hptr);
void cu_host_free(void *hptr, size_t bytes);
hwrt_status cu_stream_create(hwrt_bdev *d, int priority, hwrt_bstream **out);
void cu_stream_destroy(hwrt_bstream *s);
hwrt_status cu_stream_synchronize(hwrt_bstream *s);
hwrt_status cu_stream_query(hwrt_bstream *s);
hwrt_status cu_stream_wait_event(hwrt_bstream *s, hwrt_bevent *e);
void *cu_stream_native(hwrt_bstream *s);
hwrt_status cu_memcpy_async(hwrt_bstream *s, void *dst, const void *src, size_t bytes,
                            hwrt_memcpy_kind kind, int host_pinned);
hwrt_status cu_memset_async(hwrt_bstream *s, void *dptr, int value, size_t bytes);
hwrt_status cu_host_func(hwrt_bstream *s, hwrt_host_fn fn, void *arg);
hwrt_status cu_device_synchronize(hwrt_bdev *d);
hwrt_status cu_event_create(hwrt_bdev *d, unsigned flags, hwrt_bevent **out);
void cu_event_destroy(hwrt_bevent *e);
hwrt_status cu_event_record(hwrt_bevent *e, hwrt_bstream *s);
hwrt_status cu_event_query(hwrt_bevent *e);
hwrt_status cu_event_synchronize(hwrt_bevent *e);
hwrt_status cu_event_elapsed_ms(float *ms, hwrt_bevent *start, hwrt_bevent *end);
hwrt_status cu_event_timestamp_ns(hwrt_bevent *e, uint64_t *ns);

/* DLPack: device memory is the driver's own address (kDLCUDA), pinned host memory from
 * cuMemHostAlloc is kDLCUDAHost; data and byte_offset stay as the core set them. */
static hwrt_status cu_dlpack_device(hwrt_bdev *dev, const void *ptr, int pinned_host,
                                    int *dl_device_type, void **data, uint64_t *byte_offset)
{
    *dl_device_type = pinned_host ? kDLCUDAHost : kDLCUDA;
    return HWRT_SUCCESS;
}

const hwrt_backend_ops hwrt_backend_cuda = {
    .abi_version = HWRT_BACKEND_ABI_VERSION,
    .name = "cuda",
    .probe = cu_probe,
    .device_props = cu_device_props,
    .device_open = cu_device_open,
    .device_close = cu_device_close,
    .mem_info = cu_mem_info,
    .segment_alloc = cu_segment_alloc,
    .segment_free = cu_segment_free,
    .va_granularity = cu_va_granularity,
    .va_reserve = cu_va_reserve,
    .va_map = cu_va_map,
    .va_unmap = cu_va_unmap,
    .va_release = cu_va_release,
    .host_alloc = cu_host_alloc,
    .host_free = cu_host_free,
    .stream_create = cu_stream_create,
    .stream_destroy = cu_stream_destroy,
    .stream_synchronize = cu_stream_synchronize,
    .stream_query = cu_stream_query,
    .stream_wait_event = cu_stream_wait_event,
    .memcpy_async = cu_memcpy_async,
    .memset_async = cu_memset_async,
    .kernel_launch = cu_kernel_launch,
    .host_func = cu_host_func,
    .event_create = cu_event_create,
    .event_destroy = cu_event_destroy,
    .event_record = cu_event_record,
    .event_query = cu_event_query,
    .event_synchronize = cu_event_synchronize,
    .event_elapsed_ms = cu_event_elapsed_ms,
    .event_timestamp_ns = cu_event_timestamp_ns,
    .device_synchronize = cu_device_synchronize,
    /* CUDA's sticky errors cannot be cleared in the process: recovery is a new process */
    .device_reset = NULL,
    .report_usage = cu_report_usage,
    .monitor = hwi_cuda_nvml_monitor,   /* NVML (cuda_nvml.c) */
    /* CUPTI's activity API when libcupti loads; otherwise enable fails and the profiler
     * places work with events */
    .activity_enable = cu_activity_enable,
    .activity_query = cu_activity_query,
    .stream_native = cu_stream_native,
    .dlpack_device = cu_dlpack_device,
    /* the device's primary context made current (cuCtxSetCurrent), as every entry does */
    .thread_enter = cu_enter,
    .more_devices_hint = "CUDA_VISIBLE_DEVICES may hide GPUs: widen or unset it",
};
