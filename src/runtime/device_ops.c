/* Device-level wrappers (device_ops.h): every backend call, and the fallbacks of the
 * optional slots. */
#include "device_ops.h"
#include "../base/status.h"

#include <stdlib.h>

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

/* The device's live backend streams, for the device-wide synchronize of a backend
 * without one. A stream being synchronized through the list is pinned: destroying it then
 * only marks it, and the last pin destroys it, so the list lock is never held across a
 * blocking call. */
struct hwi_dev_bstream {
    hwrt_bstream *bs;
    int pins;
    int dead;
    struct hwi_dev_bstream *next;
};

hwrt_status hwi_dev_stream_create(const hwi_device *d, int priority, hwrt_bstream **s)
{
    hwi_dev_bstream *n = malloc(sizeof *n);
    if (!n)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "creating a stream on device %d: host out "
                       "of memory", d->ordinal);
    hwrt_status st = d->ops->stream_create(d->bdev, priority, s);
    if (st != HWRT_SUCCESS) { free(n); return st; }
    hwi_device *m = (hwi_device *)d;          /* the list is the device's own state */
    pthread_mutex_lock(&m->mu);
    *n = (hwi_dev_bstream){*s, 0, 0, m->bstreams};
    m->bstreams = n;
    pthread_mutex_unlock(&m->mu);
    return HWRT_SUCCESS;
}

/* Unlink n from d's list; caller holds d->mu. */
static void unlink_bstream(hwi_device *d, hwi_dev_bstream *n)
{
    for (hwi_dev_bstream **p = &d->bstreams; *p; p = &(*p)->next)
        if (*p == n) { *p = n->next; return; }
}

void hwi_dev_stream_destroy(const hwi_device *d, hwrt_bstream *s)
{
    hwi_device *m = (hwi_device *)d;
    pthread_mutex_lock(&m->mu);
    hwi_dev_bstream *n = m->bstreams;
    while (n && n->bs != s) n = n->next;
    int later = n && n->pins;                 /* a device synchronize holds it */
    if (n && later) n->dead = 1;
    else if (n) unlink_bstream(m, n);
    pthread_mutex_unlock(&m->mu);
    if (later) return;
    d->ops->stream_destroy(s);
    free(n);
}

/* Fallback of device_synchronize: every live stream of d, pinned (see above). */
static hwrt_status sync_every_stream(hwi_device *d)
{
    pthread_mutex_lock(&d->mu);
    size_t n = 0;
    for (hwi_dev_bstream *b = d->bstreams; b; b = b->next) n += !b->dead;
    hwi_dev_bstream **list = malloc((n ? n : 1) * sizeof *list);
    n = 0;
    for (hwi_dev_bstream *b = d->bstreams; list && b; b = b->next)
        if (!b->dead) { b->pins++; list[n++] = b; }
    pthread_mutex_unlock(&d->mu);
    if (!list)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "synchronizing device %d: host out of "
                       "memory", d->ordinal);
    hwrt_status first = HWRT_SUCCESS;
    for (size_t i = 0; i < n; i++) {
        hwrt_status st = d->ops->stream_synchronize(list[i]->bs);
        if (first == HWRT_SUCCESS) first = st;
    }
    for (size_t i = 0; i < n; i++) {
        pthread_mutex_lock(&d->mu);
        int last = --list[i]->pins == 0 && list[i]->dead;
        if (last) unlink_bstream(d, list[i]);
        pthread_mutex_unlock(&d->mu);
        if (last) {                           /* destroyed meanwhile: ours to finish */
            d->ops->stream_destroy(list[i]->bs);
            free(list[i]);
        }
    }
    free(list);
    return first;
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
        return sync_every_stream((hwi_device *)d);
    return d->ops->device_synchronize(d->bdev);
}

hwrt_status hwi_dev_device_reset(const hwi_device *d)
{
    if (!d->ops->device_reset)
        return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "backend %s cannot reset device %d: it cannot "
                       "clear a device fault; restart the process", d->ops->name, d->ordinal);
    return d->ops->device_reset(d->bdev);
}

void hwi_dev_report_usage(const hwi_device *d, size_t reserved, size_t allocated)
{
    if (d->ops->report_usage) d->ops->report_usage(d->bdev, reserved, allocated);
}

hwrt_status hwi_backend_monitor(const hwrt_backend_ops *ops, hwrt_smi_snapshot *out)
{
    if (!ops->monitor)
        return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "the %s backend's driver offers no device-wide "
                       "process view", ops->name);
    return ops->monitor(out);
}

hwrt_status hwi_backend_activity_enable(const hwrt_backend_ops *ops, hwrt_activity_fn fn,
                                        void *ctx)
{
    if (!ops->activity_enable || !ops->activity_query)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "the %s backend has no activity records", ops->name);
    return ops->activity_enable(fn, ctx);
}

hwrt_status hwi_backend_activity_query(const hwrt_backend_ops *ops)
{
    if (!ops->activity_query)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "the %s backend has no activity records", ops->name);
    return ops->activity_query();
}

int hwi_backend_has_activity(const hwrt_backend_ops *ops)
{
    return ops->activity_enable && ops->activity_query;
}

hwrt_status hwi_dev_activity_enable(const hwi_device *d, hwrt_activity_fn fn, void *ctx)
{
    return hwi_backend_activity_enable(d->ops, fn, ctx);
}

hwrt_status hwi_dev_activity_query(const hwi_device *d)
{
    return hwi_backend_activity_query(d->ops);
}

void *hwi_dev_stream_native(const hwi_device *d, hwrt_bstream *s)
{
    return d->ops->stream_native ? d->ops->stream_native(s) : NULL;
}

hwrt_status hwi_dev_thread_enter(const hwi_device *d)
{
    return d->ops->thread_enter ? d->ops->thread_enter(d->bdev) : HWRT_SUCCESS;
}

int hwi_dev_has_host_func(const hwi_device *d) { return d->ops->host_func != NULL; }

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

/* ---- backend-level calls (no device open yet): selection, device open, props ---- */

hwrt_status hwi_backend_probe(const hwrt_backend_ops *ops, int *count, char *reason, size_t len)
{
    return ops->probe(count, reason, len);
}

hwrt_status hwi_backend_device_props(const hwrt_backend_ops *ops, int ordinal,
                                     hwrt_device_props *out)
{
    return ops->device_props(ordinal, out);
}

hwrt_status hwi_backend_device_open(const hwrt_backend_ops *ops, int ordinal, hwrt_bdev **out)
{
    return ops->device_open(ordinal, out);
}

int hwi_dev_has_host_alloc(const hwi_device *d)
{
    return d->ops->host_alloc && d->ops->host_free;
}

int hwi_dev_host_addressable(const hwi_device *d) { return d->ops->host_addressable; }

const char *hwi_backend_more_devices_hint(const hwrt_backend_ops *ops)
{
    return ops->more_devices_hint ? ops->more_devices_hint : "";
}

const char *hwi_dev_backend_name(const hwi_device *d) { return d->ops->name; }
const char *hwi_backend_name(const hwrt_backend_ops *ops) { return ops->name; }
uint32_t hwi_backend_abi(const hwrt_backend_ops *ops) { return ops->abi_version; }
