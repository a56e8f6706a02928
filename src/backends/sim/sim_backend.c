/* The sim backend's ops table. */
#include "sim.h"
#include "sim_registry.h"

hwrt_status sim_probe(int *count, char *reason, size_t rlen);
hwrt_status sim_device_props(int ordinal, hwrt_device_props *p);
hwrt_status sim_device_open(int ordinal, hwrt_bdev **out);
void sim_device_close(hwrt_bdev *d);
hwrt_status sim_mem_info(hwrt_bdev *d, size_t *free_b, size_t *total, size_t *overhead);
hwrt_status sim_segment_alloc(hwrt_bdev *d, size_t bytes, void **dptr);
hwrt_status sim_segment_free(hwrt_bdev *d, void *dptr, size_t bytes);
size_t sim_va_granularity(hwrt_bdev *d);
hwrt_status sim_va_reserve(hwrt_bdev *d, size_t bytes, void **base);
hwrt_status sim_va_map(hwrt_bdev *d, void *addr, size_t bytes);
hwrt_status sim_va_unmap(hwrt_bdev *d, void *addr, size_t bytes);
hwrt_status sim_va_release(hwrt_bdev *d, void *base, size_t bytes);
hwrt_status sim_stream_create(hwrt_bdev *dev, int priority, hwrt_bstream **out);
void sim_stream_destroy(hwrt_bstream *s);
hwrt_status sim_stream_synchronize(hwrt_bstream *s);
hwrt_status sim_stream_query(hwrt_bstream *s);
hwrt_status sim_stream_wait_event(hwrt_bstream *s, hwrt_bevent *e);
hwrt_status sim_memcpy_async(hwrt_bstream *s, void *dst, const void *src, size_t bytes,
                             hwrt_memcpy_kind kind, int host_pinned);
hwrt_status sim_memset_async(hwrt_bstream *s, void *dptr, int value, size_t bytes);
hwrt_status sim_kernel_launch(hwrt_bstream *s, const hwrt_kernel *k);
hwrt_status sim_host_func(hwrt_bstream *s, hwrt_host_fn fn, void *arg);
hwrt_status sim_event_create(hwrt_bdev *dev, unsigned flags, hwrt_bevent **out);
void sim_event_destroy(hwrt_bevent *e);
hwrt_status sim_event_record(hwrt_bevent *e, hwrt_bstream *s);
hwrt_status sim_event_query(hwrt_bevent *e);
hwrt_status sim_event_synchronize(hwrt_bevent *e);
hwrt_status sim_event_timestamp_ns(hwrt_bevent *e, uint64_t *ns);
hwrt_status sim_device_reset(hwrt_bdev *d);

/* The simulated device's memory is host memory (an mmap'd arena): a DLPack consumer on
 * the CPU reads it in place, so device and pinned memory are both kDLCPU. */
static hwrt_status sim_dlpack_device(hwrt_bdev *dev, const void *ptr, int pinned_host,
                                     int *dl_device_type, void **data, uint64_t *byte_offset)
{
    (void)dev; (void)ptr; (void)pinned_host; (void)data; (void)byte_offset;
    *dl_device_type = kDLCPU;
    return HWRT_SUCCESS;
}

const hwrt_backend_ops hwrt_backend_sim = {
    .abi_version = HWRT_BACKEND_ABI_VERSION,
    .name = "sim",
    .probe = sim_probe,
    .device_props = sim_device_props,
    .device_open = sim_device_open,
    .device_close = sim_device_close,
    .mem_info = sim_mem_info,
    .segment_alloc = sim_segment_alloc,
    .segment_free = sim_segment_free,
    .va_granularity = sim_va_granularity,
    .va_reserve = sim_va_reserve,
    .va_map = sim_va_map,
    .va_unmap = sim_va_unmap,
    .va_release = sim_va_release,
    .host_alloc = NULL,                /* the core's mlock'd pages are what sim models */
    .host_free = NULL,
    .stream_create = sim_stream_create,
    .stream_destroy = sim_stream_destroy,
    .stream_synchronize = sim_stream_synchronize,
    .stream_query = sim_stream_query,
    .stream_wait_event = sim_stream_wait_event,
    .memcpy_async = sim_memcpy_async,
    .memset_async = sim_memset_async,
    .kernel_launch = sim_kernel_launch,
    .host_func = sim_host_func,
    .event_create = sim_event_create,
    .event_destroy = sim_event_destroy,
    .event_record = sim_event_record,
    .event_query = sim_event_query,
    .event_synchronize = sim_event_synchronize,
    .event_timestamp_ns = sim_event_timestamp_ns,
    .device_synchronize = NULL,        /* the core synchronizes every stream it made */
    .device_reset = sim_device_reset,
    .report_usage = sim_registry_report_pool,
    .monitor = sim_registry_monitor,
    .activity_enable = sim_activity_enable,
    .activity_query = sim_activity_query,
    .dlpack_device = sim_dlpack_device,
    .host_addressable = 1,             /* segments are host memory (sim_dlpack_device: kDLCPU) */
    .more_devices_hint = "set HWRT_SIM_DEVICES for more simulated devices",
};
