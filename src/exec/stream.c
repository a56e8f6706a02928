/* Streams: public handles, per-device default streams, device-wide synchronization. */
#include "stream.h"
#include "dispatch.h"
#include "../runtime/handle.h"
#include "../base/status.h"
#include "../mem/pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static hwi_stream *defaults[HWI_MAX_DEVICES];
static _Atomic(void *) default_h[HWI_MAX_DEVICES];   /* their handles, read without mu */
static hwi_stream **live;            /* every stream, defaults included */
static size_t nlive, cap_live;

static hwrt_status shutdown_streams(void);

static void unlist(hwi_stream *s)
{
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < nlive; i++)
        if (live[i] == s) { live[i] = live[--nlive]; break; }
    pthread_mutex_unlock(&mu);
}

/* The last reference to a stream went (its handle was destroyed and no call uses it):
 * its work finishes, the pool forgets it, the backend stream goes. */
static hwrt_status stream_dtor(void *obj)
{
    hwi_stream *s = obj;
    unlist(s);
    const hwrt_backend_ops *ops = hwi_ops_if_selected();
    hwrt_status st = ops->stream_synchronize(s->bs);
    hwi_pool_stream_destroyed(s->bs);              /* the pool forgets the stream */
    ops->stream_destroy(s->bs);
    hwi_dispatch_drop_host_calls(s);               /* those a fault skipped */
    free(s);
    return st;
}

static hwrt_status create(hwi_device *d, int priority, int is_default, hwi_stream **out)
{
    hwi_stream *s = calloc(1, sizeof *s);
    if (!s)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "creating a stream: host out of memory");
    s->device = d->ordinal;
    s->priority = priority;
    s->is_default = is_default;
    hwrt_status st = hwi_ops_if_selected()->stream_create(d->bdev, priority, &s->bs);
    if (st != HWRT_SUCCESS) { free(s); return st; }
    hwi_handle_set_dtor(HWI_H_STREAM, stream_dtor);
    s->handle = hwi_handle_new(HWI_H_STREAM, s);
    pthread_mutex_lock(&mu);
    if (s->handle && nlive == cap_live) {
        size_t nc = cap_live ? cap_live * 2 : 16;
        hwi_stream **nl = realloc(live, nc * sizeof *nl);
        if (nl) { live = nl; cap_live = nc; }
    }
    int ok = s->handle && nlive < cap_live;
    if (ok) live[nlive++] = s;
    pthread_mutex_unlock(&mu);
    if (!ok) {
        if (s->handle) {
            hwi_handle_kill(s->handle, HWI_H_STREAM, NULL);      /* stream_dtor frees it */
        } else {
            hwi_ops_if_selected()->stream_destroy(s->bs);
            free(s);
        }
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "creating a stream: handle table full");
    }
    hwi_on_shutdown(30, shutdown_streams);
    hwi_pool_set_sync(hwi_streams_sync_device);   /* the pool's slow paths sync devices */
    *out = s;
    return HWRT_SUCCESS;
}

/* The default stream, pinned; NULL while it does not exist. Lock-free (every op on the
 * default stream comes here): pinning goes through the handle, which a shutdown that
 * dropped the stream has made dead, so the pin never lands on a freed stream. */
static hwi_stream *pin_default(int device)
{
    void *h = atomic_load_explicit(&default_h[device], memory_order_acquire);
    return h ? hwi_handle_acquire(h, HWI_H_STREAM) : NULL;
}

hwrt_status hwi_stream_default(int device, hwi_stream **out)
{
    hwi_stream *s = pin_default(device);
    if (s) { *out = s; return HWRT_SUCCESS; }
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_get(device, &d));
    HWI_TRY(create(d, 0, 1, &s));
    pthread_mutex_lock(&mu);
    int won = !defaults[device];
    if (won) {
        defaults[device] = s;
        atomic_store_explicit(&default_h[device], s->handle, memory_order_release);
    }
    pthread_mutex_unlock(&mu);
    if (!won)                        /* another thread made it first */
        hwi_handle_kill(s->handle, HWI_H_STREAM, NULL);
    s = pin_default(device);
    if (!s)
        return hwi_err(HWRT_ERROR_INVALID_DEVICE, "the default stream of device %d went away "
                       "(hwrt_shutdown ran concurrently)", device);
    *out = s;
    return HWRT_SUCCESS;
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
        return hwi_stream_default(d->ordinal, out);
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
    hwrt_status st = hwi_ops_if_selected()->stream_synchronize(s->bs);
    hwi_host_sync_end(api, s, st);
    if (st != HWRT_SUCCESS)
        return hwi_err_prefix(st, "%s", api);
    return HWRT_SUCCESS;
}

static hwrt_status sync_device(int device, const char *api);

hwrt_status hwi_streams_sync_device(int device, const char *api)
{
    HWI_TRY(hwi_host_sync_check(api, NULL));
    hwrt_status st = sync_device(device, api);
    hwi_host_sync_end(api, NULL, st);
    return st;
}

static hwrt_status sync_device(int device, const char *api)
{
    const hwrt_backend_ops *ops = hwi_ops_if_selected();
    hwi_device *d = hwi_device_if_open(device);
    if (!ops || !d)
        return HWRT_SUCCESS;
    if (ops->device_synchronize)
        return ops->device_synchronize(d->bdev);
    /* copy the list so that syncing does not hold the lock */
    /* copied and pinned: a stream destroyed meanwhile is freed after we are done with it
     * (one already being destroyed is synchronized by its destroy) */
    pthread_mutex_lock(&mu);
    size_t n = 0;
    hwi_stream **list = malloc((nlive ? nlive : 1) * sizeof *list);
    for (size_t i = 0; list && i < nlive; i++)
        if (live[i]->device == device && hwi_handle_acquire(live[i]->handle, HWI_H_STREAM))
            list[n++] = live[i];
    pthread_mutex_unlock(&mu);
    if (!list)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "%s: host out of memory", api);
    hwrt_status first = HWRT_SUCCESS;
    for (size_t i = 0; i < n; i++) {
        hwrt_status st = ops->stream_synchronize(list[i]->bs);
        if (first == HWRT_SUCCESS) first = st;
        hwi_stream_put(list[i]);
    }
    free(list);
    if (first != HWRT_SUCCESS)
        return hwi_err_prefix(first, "%s", api);
    return HWRT_SUCCESS;
}

static hwrt_status shutdown_streams(void)
{
    hwrt_status first = HWRT_SUCCESS;
    pthread_mutex_lock(&mu);
    hwi_stream **list = live;
    size_t n = nlive;
    live = NULL;
    nlive = cap_live = 0;
    memset(defaults, 0, sizeof defaults);
    for (int i = 0; i < HWI_MAX_DEVICES; i++) atomic_store(&default_h[i], NULL);
    pthread_mutex_unlock(&mu);
    /* each handle dies; stream_dtor synchronizes and frees the stream (at once: calls
     * still using a stream when hwrt_shutdown runs are the caller's error) */
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
    hwrt_status st = hwi_ops_if_selected()->stream_synchronize(s->bs);
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
    return hwi_ops_if_selected()->stream_query(s->bs);
}

hwrt_status hwrt_stream_device(hwrt_stream h, int *device_id)
{
    if (!device_id)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_stream_device: device_id is NULL");
    HWI_STREAM_REF(s);
    HWI_TRY(hwi_stream_resolve(h, &s));
    *device_id = s->device;
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

hwrt_status hwrt_device_synchronize(void)
{
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_current(&d));
    return hwi_streams_sync_device(d->ordinal, "hwrt_device_synchronize");
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

/* Stream-ordered memory calls live here because they need a stream. */

hwrt_status hwrt_malloc_async(void **dptr, size_t bytes, hwrt_stream h)
{
    if (!dptr)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_malloc_async: dptr is NULL");
    *dptr = NULL;
    HWI_STREAM_REF(s);
    HWI_TRY(hwi_stream_resolve(h, &s));
    if (bytes == 0)
        return HWRT_SUCCESS;
    if (bytes > ((size_t)1 << 62))
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_malloc_async: %zu bytes is not a valid "
                       "size (overflowed computation?)", bytes);
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_get(s->device, &d));
    return hwi_pool_alloc(d, bytes, s->bs, dptr);
}

hwrt_status hwrt_record_stream(void *dptr, hwrt_stream h)
{
    HWI_STREAM_REF(s);
    HWI_TRY(hwi_stream_resolve(h, &s));
    hwi_block_info b;
    if (!hwi_pool_find(dptr, 1, &b) && !hwi_pool_is_device_ptr(dptr, NULL))
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_record_stream(%p): not device memory "
                       "allocated by hwrt", dptr);
    if (hwi_pool_find(dptr, 1, &b) && b.device != s->device)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_record_stream: the block is on device "
                       "%d but the stream is on device %d", b.device, s->device);
    return hwi_pool_record_stream(dptr, s->bs);
}

hwrt_status hwrt_free_async(void *dptr, hwrt_stream h)
{
    if (!dptr)
        return HWRT_SUCCESS;
    HWI_STREAM_REF(s);
    HWI_TRY(hwi_stream_resolve(h, &s));
    return hwi_pool_free_on(dptr, s->bs, s->device, "hwrt_free_async");
}
