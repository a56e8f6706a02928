/* Device-level wrappers (device_ops.h): every backend call, and the fallbacks of the
 * optional slots. */
#include "device_ops.h"
#include "../base/status.h"

void hwi_dev_device_close(const hwi_device *d)
{
    d->ops->device_close(d->bdev);
}

hwrt_status hwi_dev_mem_info(const hwi_device *d, size_t *free_bytes, size_t *total_bytes, size_t *overhead_bytes)
{
    return d->ops->mem_info(d->bdev, free_bytes, total_bytes, overhead_bytes);
}

hwrt_status hwi_dev_segment_alloc(const hwi_device *d, size_t bytes, void **dptr)
{
    return d->ops->segment_alloc(d->bdev, bytes, dptr);
}

hwrt_status hwi_dev_segment_free(const hwi_device *d, void *dptr, size_t bytes)
{
    return d->ops->segment_free(d->bdev, dptr, bytes);
}

size_t hwi_dev_va_granularity(const hwi_device *d)
{
    return d->ops->va_granularity ? d->ops->va_granularity(d->bdev) : 0;
}

hwrt_status hwi_dev_va_reserve(const hwi_device *d, size_t bytes, void **base)
{
    if (!d->ops->va_reserve)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "the %s backend has no virtual memory", d->ops->name);
    return d->ops->va_reserve(d->bdev, bytes, base);
}

hwrt_status hwi_dev_va_map(const hwi_device *d, void *addr, size_t bytes)
{
    if (!d->ops->va_map)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "the %s backend has no virtual memory", d->ops->name);
    return d->ops->va_map(d->bdev, addr, bytes);
}

hwrt_status hwi_dev_va_unmap(const hwi_device *d, void *addr, size_t bytes)
{
    if (!d->ops->va_unmap)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "the %s backend has no virtual memory", d->ops->name);
    return d->ops->va_unmap(d->bdev, addr, bytes);
}

hwrt_status hwi_dev_va_release(const hwi_device *d, void *base, size_t bytes)
{
    if (!d->ops->va_release)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "the %s backend has no virtual memory", d->ops->name);
    return d->ops->va_release(d->bdev, base, bytes);
}

hwrt_status hwi_dev_host_alloc(const hwi_device *d, size_t bytes, void **hptr)
{
    if (!d->ops->host_alloc)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "the %s backend has no pinned host memory", d->ops->name);
    return d->ops->host_alloc(bytes, hptr);
}

void hwi_dev_host_free(const hwi_device *d, void *hptr, size_t bytes)
{
    if (d->ops->host_free) d->ops->host_free(hptr, bytes);
}

hwrt_status hwi_dev_stream_create(const hwi_device *d, int priority, hwrt_bstream **s)
{
    return d->ops->stream_create(d->bdev, priority, s);
}

void hwi_dev_stream_destroy(const hwi_device *d, hwrt_bstream *s)
{
    d->ops->stream_destroy(s);
}

hwrt_status hwi_dev_stream_synchronize(const hwi_device *d, hwrt_bstream *s)
{
    return d->ops->stream_synchronize(s);
}

hwrt_status hwi_dev_stream_query(const hwi_device *d, hwrt_bstream *s)
{
    return d->ops->stream_query(s);
}

hwrt_status hwi_dev_stream_wait_event(const hwi_device *d, hwrt_bstream *s, hwrt_bevent *e)
{
    return d->ops->stream_wait_event(s, e);
}

hwrt_status hwi_dev_memcpy_async(const hwi_device *d, hwrt_bstream *s, void *dst, const void *src, size_t bytes, hwrt_memcpy_kind kind, int host_pinned)
{
    return d->ops->memcpy_async(s, dst, src, bytes, kind, host_pinned);
}

hwrt_status hwi_dev_memset_async(const hwi_device *d, hwrt_bstream *s, void *dptr, int value, size_t bytes)
{
    return d->ops->memset_async(s, dptr, value, bytes);
}

hwrt_status hwi_dev_kernel_launch(const hwi_device *d, hwrt_bstream *s, const hwrt_kernel *k)
{
    return d->ops->kernel_launch(s, k);
}

hwrt_status hwi_dev_host_func(const hwi_device *d, hwrt_bstream *s, hwrt_host_fn fn, void *arg)
{
    if (d->ops->host_func)
        return d->ops->host_func(s, fn, arg);
    /* fallback: run it in order, on this thread, once the stream has drained; not at all
     * when the stream faulted (the contract of the slot) */
    hwrt_status st = d->ops->stream_synchronize(s);
    if (st != HWRT_SUCCESS)
        return st;
    fn(arg);
    return HWRT_SUCCESS;
}

hwrt_status hwi_dev_event_create(const hwi_device *d, unsigned flags, hwrt_bevent **e)
{
    return d->ops->event_create(d->bdev, flags, e);
}

void hwi_dev_event_destroy(const hwi_device *d, hwrt_bevent *e)
{
    d->ops->event_destroy(e);
}

hwrt_status hwi_dev_event_record(const hwi_device *d, hwrt_bevent *e, hwrt_bstream *s)
{
    return d->ops->event_record(e, s);
}

hwrt_status hwi_dev_event_query(const hwi_device *d, hwrt_bevent *e)
{
    return d->ops->event_query(e);
}

hwrt_status hwi_dev_event_synchronize(const hwi_device *d, hwrt_bevent *e)
{
    return d->ops->event_synchronize(e);
}

hwrt_status hwi_dev_event_elapsed_ms(const hwi_device *d, float *ms, hwrt_bevent *start, hwrt_bevent *end)
{
    if (d->ops->event_elapsed_ms)
        return d->ops->event_elapsed_ms(ms, start, end);
    uint64_t t0, t1;
    HWI_TRY(d->ops->event_timestamp_ns(start, &t0));
    HWI_TRY(d->ops->event_timestamp_ns(end, &t1));
    *ms = (float)((double)((int64_t)(t1 - t0)) / 1e6);
    return HWRT_SUCCESS;
}

hwrt_status hwi_dev_event_timestamp_ns(const hwi_device *d, hwrt_bevent *e, uint64_t *ns)
{
    return d->ops->event_timestamp_ns(e, ns);
}

hwrt_status hwi_dev_device_synchronize(const hwi_device *d)
{
    if (!d->ops->device_synchronize)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "the %s backend has no device-wide synchronize; "
                       "synchronize each stream", d->ops->name);
    return d->ops->device_synchronize(d->bdev);
}

hwrt_status hwi_dev_device_reset(const hwi_device *d)
{
    if (!d->ops->device_reset)
        return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "the %s backend cannot clear a device fault; "
                       "restart the process", d->ops->name);
    return d->ops->device_reset(d->bdev);
}

void hwi_dev_report_usage(const hwi_device *d, size_t reserved, size_t allocated)
{
    if (d->ops->report_usage) d->ops->report_usage(d->bdev, reserved, allocated);
}

hwrt_status hwi_dev_monitor(const hwi_device *d, hwrt_smi_snapshot *out)
{
    if (!d->ops->monitor)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "the %s backend has no monitor", d->ops->name);
    return d->ops->monitor(out);
}

hwrt_status hwi_dev_activity_enable(const hwi_device *d, hwrt_activity_fn fn, void *ctx)
{
    if (!d->ops->activity_enable || !d->ops->activity_query)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "the %s backend has no activity records", d->ops->name);
    return d->ops->activity_enable(fn, ctx);
}

hwrt_status hwi_dev_activity_query(const hwi_device *d)
{
    if (!d->ops->activity_query)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "the %s backend has no activity records", d->ops->name);
    return d->ops->activity_query();
}

void *hwi_dev_stream_native(const hwi_device *d, hwrt_bstream *s)
{
    return d->ops->stream_native ? d->ops->stream_native(s) : NULL;
}

const char *hwi_dev_backend_name(const hwi_device *d)
{
    return d->ops->name;
}

int hwi_dev_has_va(const hwi_device *d)
{
    const hwrt_backend_ops *o = d->ops;
    return o->va_granularity && o->va_reserve && o->va_map && o->va_unmap && o->va_release;
}

hwrt_status hwi_dev_dlpack_device(const hwi_device *d, const void *ptr, int pinned_host,
                                  int *dl_device_type, void **data, uint64_t *byte_offset)
{
    *dl_device_type = pinned_host ? kDLCPU : kDLExtDev;
    *data = (void *)ptr;
    *byte_offset = 0;
    if (!d->ops->dlpack_device) return HWRT_SUCCESS;
    return d->ops->dlpack_device(d->bdev, ptr, pinned_host, dl_device_type, data, byte_offset);
}
