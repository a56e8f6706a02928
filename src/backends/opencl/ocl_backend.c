/* The OpenCL backend's ops table (runs on PoCL on a CPU-only machine). */
#include "ocl.h"

hwrt_status ocl_probe(int *count, char *reason, size_t rlen);
hwrt_status ocl_device_props(int ordinal, hwrt_device_props *p);
hwrt_status ocl_device_open(int ordinal, hwrt_bdev **out);
void ocl_device_close(hwrt_bdev *d);
hwrt_status ocl_mem_info(hwrt_bdev *d, size_t *free_b, size_t *total, size_t *overhead);
hwrt_status ocl_segment_alloc(hwrt_bdev *d, size_t bytes, void **dptr);
hwrt_status ocl_segment_free(hwrt_bdev *d, void *dptr, size_t bytes);
hwrt_status ocl_stream_create(hwrt_bdev *d, int priority, hwrt_bstream **out);
void ocl_stream_destroy(hwrt_bstream *s);
hwrt_status ocl_stream_synchronize(hwrt_bstream *s);
hwrt_status ocl_stream_query(hwrt_bstream *s);
hwrt_status ocl_stream_wait_event(hwrt_bstream *s, hwrt_bevent *e);
hwrt_status ocl_memcpy_async(hwrt_bstream *s, void *dst, const void *src, size_t bytes,
                             hwrt_memcpy_kind kind, int host_pinned);
hwrt_status ocl_memset_async(hwrt_bstream *s, void *dptr, int value, size_t bytes);
hwrt_status ocl_host_func(hwrt_bstream *s, hwrt_host_fn fn, void *arg);
hwrt_status ocl_event_create(hwrt_bdev *d, unsigned flags, hwrt_bevent **out);
void ocl_event_destroy(hwrt_bevent *e);
hwrt_status ocl_event_record(hwrt_bevent *e, hwrt_bstream *s);
hwrt_status ocl_event_query(hwrt_bevent *e);
hwrt_status ocl_event_synchronize(hwrt_bevent *e);
hwrt_status ocl_event_timestamp_ns(hwrt_bevent *e, uint64_t *ns);
hwrt_status ocl_device_reset(hwrt_bdev *d);
hwrt_status ocl_dlpack_device(hwrt_bdev *dev, const void *ptr, int pinned_host,
                              int *dl_device_type, void **data, uint64_t *byte_offset);

const hwrt_backend_ops hwrt_backend_opencl = {
    .abi_version = HWRT_BACKEND_ABI_VERSION,
    .name = "opencl",
    .probe = ocl_probe,
    .device_props = ocl_device_props,
    .device_open = ocl_device_open,
    .device_close = ocl_device_close,
    .mem_info = ocl_mem_info,
    .segment_alloc = ocl_segment_alloc,
    .segment_free = ocl_segment_free,
    /* OpenCL 1.2/3.0 has no virtual memory API: the pool uses whole segments */
    .va_granularity = NULL,
    .va_reserve = NULL,
    .va_map = NULL,
    .va_unmap = NULL,
    .va_release = NULL,
    .host_alloc = ocl_host_alloc,
    .host_free = ocl_host_free,
    .stream_create = ocl_stream_create,
    .stream_destroy = ocl_stream_destroy,
    .stream_synchronize = ocl_stream_synchronize,
    .stream_query = ocl_stream_query,
    .stream_wait_event = ocl_stream_wait_event,
    .memcpy_async = ocl_memcpy_async,
    .memset_async = ocl_memset_async,
    .kernel_launch = ocl_kernel_launch,
    .host_func = ocl_host_func,
    .event_create = ocl_event_create,
    .event_destroy = ocl_event_destroy,
    .event_record = ocl_event_record,
    .event_query = ocl_event_query,
    .event_synchronize = ocl_event_synchronize,
    .event_timestamp_ns = ocl_event_timestamp_ns,
    .device_synchronize = NULL,        /* the core synchronizes every stream it made */
    .device_reset = ocl_device_reset,  /* finish the streams, acknowledge failed commands */
    .dlpack_device = ocl_dlpack_device,
};
