/* Streams: public handles, and each device's default stream and live streams (exec's
 * part of the device, device.h), with the checked device-wide synchronize. */
#include "stream.h"
#include "dispatch.h"
#include "../runtime/handle.h"
#include "../base/status.h"
#include "../mem/pool.h"
#include "../runtime/device_ops.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* exec's part of a device (device.h): its default stream and its live streams, guarded
 * by the device's lock (d->mu), which outlives the part. */
typedef struct dev_streams {
    hwi_stream *def;
    _Atomic(void *) def_h;       /* the default stream's handle, read without the lock */
    hwi_stream **live;           /* every stream of the device, the default included */
    size_t nlive, cap;
} dev_streams;

static hwrt_status close_streams(hwi_device *d, void *part);
static hwrt_status sync_streams(hwi_device *d, void *part, const char *api);
static const hwi_dev_part_ops streams_part = {close_streams, sync_streams};

static dev_streams *streams_of(hwi_device *d)
{
    dev_streams *p = hwi_device_part(d, HWI_PART_EXEC);
    if (p) return p;
    dev_streams *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    p = hwi_device_attach(d, HWI_PART_EXEC, n, &streams_part);
    if (p != n) free(n);
    return p;
}

static void unlist(hwi_stream *s)
{
    pthread_mutex_lock(&s->dev->mu);
    dev_streams *p = s->owner;
    for (size_t i = 0; p && i < p->nlive; i++)
        if (p->live[i] == s) { p->live[i] = p->live[--p->nlive]; break; }
    s->owner = NULL;
    pthread_mutex_unlock(&s->dev->mu);
}

/* The last reference to a stream went (its handle was destroyed and no call uses it):
 * its work finishes, the pool forgets it, the backend stream goes. */
static hwrt_status stream_dtor(void *obj)
{
    hwi_stream *s = obj;
    unlist(s);
    hwrt_status st = hwi_dev_stream_synchronize(s->dev, s->bs);
    hwi_pool_stream_destroyed(s->bs);              /* the pool forgets the stream */
    hwi_dev_stream_destroy(s->dev, s->bs);
    hwi_dispatch_drop_host_calls(s);               /* those a fault skipped */
    free(s);
    return st;
}

static hwrt_status create(hwi_device *d, int priority, int is_default, hwi_stream **out)
{
    dev_streams *p = streams_of(d);
    hwi_stream *s = p ? calloc(1, sizeof *s) : NULL;
    if (!s)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "creating a stream: host out of memory");
    s->dev = d;
    s->device = d->id;
    s->priority = priority;
    s->is_default = is_default;
    hwrt_status st = hwi_dev_stream_create(d, priority, &s->bs);
    if (st != HWRT_SUCCESS) { free(s); return st; }
    hwi_handle_set_dtor(HWI_H_STREAM, stream_dtor);
    s->handle = hwi_handle_new(HWI_H_STREAM, s);
    pthread_mutex_lock(&d->mu);
    if (s->handle && p->nlive == p->cap) {
        size_t nc = p->cap ? p->cap * 2 : 16;
        hwi_stream **nl = realloc(p->live, nc * sizeof *nl);
        if (nl) { p->live = nl; p->cap = nc; }
    }
    int ok = s->handle && p->nlive < p->cap;
    if (ok) { p->live[p->nlive++] = s; s->owner = p; }
    pthread_mutex_unlock(&d->mu);
    if (!ok) {
        if (s->handle) {
            hwi_handle_kill(s->handle, HWI_H_STREAM, NULL);      /* stream_dtor frees it */
        } else {
            hwi_dev_stream_destroy(d, s->bs);
            free(s);
        }
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "creating a stream: handle table full");
    }
    *out = s;
    return HWRT_SUCCESS;
}

/* The default stream, pinned; NULL while it does not exist. Lock-free (every op on the
 * default stream comes here): pinning goes through the handle, which a shutdown that
 * dropped the stream has made dead, so the pin never lands on a freed stream. */
static hwi_stream *pin_default(hwi_device *d)
{
    dev_streams *p = hwi_device_part(d, HWI_PART_EXEC);
    void *h = p ? atomic_load_explicit(&p->def_h, memory_order_acquire) : NULL;
    return h ? hwi_handle_acquire(h, HWI_H_STREAM) : NULL;
}

static hwrt_status default_of(hwi_device *d, hwi_stream **out)
{
    hwi_stream *s = pin_default(d);
    if (s) { *out = s; return HWRT_SUCCESS; }
    HWI_TRY(create(d, 0, 1, &s));
    pthread_mutex_lock(&d->mu);
    dev_streams *p = s->owner;
    int won = p && !p->def;
    if (won) {
        p->def = s;
        atomic_store_explicit(&p->def_h, s->handle, memory_order_release);
    }
    pthread_mutex_unlock(&d->mu);
    if (!won)                        /* another thread made it first */
        hwi_handle_kill(s->handle, HWI_H_STREAM, NULL);
    s = pin_default(d);
    if (!s)
        return hwi_err(HWRT_ERROR_INVALID_DEVICE, "the default stream of device %d went away "
                       "(hwrt_shutdown ran concurrently)", d->ordinal);
    *out = s;
    return HWRT_SUCCESS;
}

hwrt_status hwi_stream_default(int device, hwi_stream **out)
{
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_get(device, &d));
    return default_of(d, out);
}

void hwi_stream_put(hwi_stream *s)
{
    if (s) hwi_handle_put(s->handle);
}

hwrt_status hwi_stream_resolve_on(hwrt_stream h, int device, hwi_stream **out)
{
    return h ? hwi_stream_resolve(h, out) : hwi_stream_default(device, out);
}

hwrt_status hwi_stream_resolve(hwrt_stream h, hwi_stream **out)
{
    if (!h) {
        hwi_device *d = NULL;
        HWI_TRY(hwi_device_current(&d));
        return default_of(d, out);
    }
    hwi_stream *s = hwi_handle_acquire(h, HWI_H_STREAM);
    if (!s)
        return hwi_err(HWRT_ERROR_INVALID_HANDLE,
                       "stream handle %p is not a live stream (destroyed, or not from "
                       "hwrt_stream_create); pass NULL for the default stream", (void *)h);
    *out = s;
    return HWRT_SUCCESS;
}

hwrt_status hwi_stream_sync(hwi_stream *s, const char *api)
{
    HWI_TRY(hwi_host_sync_check(api, s));
    hwrt_status st = hwi_dev_stream_synchronize(s->dev, s->bs);
    hwi_host_sync_end(api, s, st);
    if (st != HWRT_SUCCESS)
        return hwi_err_prefix(st, "%s", api);
    return HWRT_SUCCESS;
}

/* The device-wide synchronize of d (its part op): checked against capture and host
 * functions, seen by the hooks; the backend's, or every stream of d (device_ops.c). */
static hwrt_status sync_streams(hwi_device *d, void *part, const char *api)
{
    (void)part;
    HWI_TRY(hwi_host_sync_check(api, NULL));
    hwrt_status st = hwi_dev_device_synchronize(d);
    hwi_host_sync_end(api, NULL, st);
    if (st != HWRT_SUCCESS)
        return hwi_err_prefix(st, "%s", api);
    return HWRT_SUCCESS;
}

hwrt_status hwi_streams_sync_device(int device, const char *api)
{
    hwi_device *d = hwi_device_if_open(device);
    return d ? hwi_device_synchronize(d, api) : HWRT_SUCCESS;
}

/* Closing d: every stream of d goes (its handle dies; stream_dtor synchronizes and frees
 * it at once: calls still using a stream when the device closes are the caller's error). */
static hwrt_status close_streams(hwi_device *d, void *part)
{
    dev_streams *p = part;
    pthread_mutex_lock(&d->mu);
    hwi_stream **list = p->live;
    size_t n = p->nlive;
    for (size_t i = 0; i < n; i++) list[i]->owner = NULL;
    pthread_mutex_unlock(&d->mu);
    free(p);
    hwrt_status first = HWRT_SUCCESS;
    for (size_t i = 0; i < n; i++) {
        hwrt_status st = HWRT_SUCCESS;
        hwi_handle_kill(list[i]->handle, HWI_H_STREAM, &st);
        if (first == HWRT_SUCCESS) first = st;
    }
    free(list);
    return first;
}

hwrt_status hwi_stream_create_on(int device, hwi_stream **out)
{
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_get(device, &d));
    return create(d, 0, 0, out);
}

/* ---- public API ---- */

hwrt_status hwrt_stream_create(hwrt_stream *out, int priority)
{
    if (!out)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_stream_create: out is NULL");
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_current(&d));
    hwi_stream *s = NULL;
    HWI_TRY(create(d, priority, 0, &s));
    *out = s->handle;
    return HWRT_SUCCESS;
}

/* Later calls with h fail at once; calls already using the stream finish with it, and
 * the last of them frees it. The work queued so far is done when this returns. */
hwrt_status hwrt_stream_destroy(hwrt_stream h)
{
    hwi_stream *s = hwi_handle_acquire(h, HWI_H_STREAM);
    if (!s || s->is_default) {
        hwi_stream_put(s);
        return hwi_err(HWRT_ERROR_INVALID_HANDLE, "hwrt_stream_destroy(%p): %s", (void *)h,
                       s ? "the default stream cannot be destroyed"
                         : "not a live stream (already destroyed?)");
    }
    if (s->capture) {
        hwi_stream_put(s);
        return hwi_err(HWRT_ERROR_NOT_PERMITTED, "hwrt_stream_destroy: the stream is capturing a "
                       "graph; call hwrt_stream_end_capture first");
    }
    hwrt_status refused = hwi_host_fn_check("hwrt_stream_destroy");   /* it synchronizes */
    if (refused != HWRT_SUCCESS) {
        hwi_stream_put(s);
        return refused;
    }
    if (!hwi_handle_kill(h, HWI_H_STREAM, NULL)) {
        hwi_stream_put(s);
        return hwi_err(HWRT_ERROR_INVALID_HANDLE, "hwrt_stream_destroy(%p): not a live stream "
                       "(destroyed concurrently by another thread)", (void *)h);
    }
    hwrt_status st = hwi_dev_stream_synchronize(s->dev, s->bs);
    hwrt_status st2 = hwi_handle_put(h);           /* the last reference: stream_dtor */
    return st != HWRT_SUCCESS ? st : st2;
}

hwrt_status hwrt_stream_synchronize(hwrt_stream h)
{
    HWI_STREAM_REF(s);
    HWI_TRY(hwi_stream_resolve(h, &s));
    return hwi_stream_sync(s, "hwrt_stream_synchronize");
}

hwrt_status hwrt_stream_query(hwrt_stream h)
{
    HWI_STREAM_REF(s);
    HWI_TRY(hwi_stream_resolve(h, &s));
    return hwi_dev_stream_query(s->dev, s->bs);
}

hwrt_status hwrt_stream_device(hwrt_stream h, int *device_id)
{
    if (!device_id)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_stream_device: device_id is NULL");
    HWI_STREAM_REF(s);
    HWI_TRY(hwi_stream_resolve(h, &s));
    *device_id = s->dev->ordinal;
    return HWRT_SUCCESS;
}

hwrt_status hwrt_stream_default(hwrt_stream *out)
{
    if (!out)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_stream_default: out is NULL");
    HWI_STREAM_REF(s);
    HWI_TRY(hwi_stream_resolve(NULL, &s));
    *out = s->handle;
    return HWRT_SUCCESS;
}

hwrt_status hwrt_launch_host_func(hwrt_stream h, hwrt_host_fn fn, void *arg)
{
    if (!fn)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_launch_host_func: fn is NULL");
    HWI_STREAM_REF(s);
    HWI_TRY(hwi_stream_resolve(h, &s));
    hwi_work w = {.kind = HWI_WORK_HOST_FUNC, .stream = s, .name = "HostFunc"};
    w.u.host.fn = fn;
    w.u.host.arg = arg;
    return hwi_dispatch(&w);
}
