/* Tensors: creation, host round trips that are never stale, reference counting. */
#include "tensor.h"
#include "../runtime/handle.h"
#include "../base/log.h"
#include "../exec/capture.h"
#include "../base/status.h"
#include "../mem/pool.h"
#include "../offload/offload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

hwrt_status hwi_tensor_resolve(hwrt_tensor h, hwi_tensor **out)
{
    hwi_tensor *t = hwi_handle_acquire(h, HWI_H_TENSOR);
    if (!t)
        return hwi_err(HWRT_ERROR_INVALID_HANDLE, "tensor handle %p is not a live tensor "
                       "(released, NULL, or not from hwrt)", (void *)h);
    *out = t;
    return HWRT_SUCCESS;
}

void hwi_tensor_put(hwi_tensor *t)
{
    if (t) hwi_handle_put(t->handle);
}

static hwrt_status check_desc(const char *api, hwrt_dtype dt, int ndim, const int64_t *shape,
                              int64_t *numel, size_t *nbytes)
{
    if ((unsigned)dt >= HWRT_DTYPE_COUNT)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: dtype %d is not a hwrt_dtype (0..%d)",
                       api, (int)dt, HWRT_DTYPE_COUNT - 1);
    if (ndim < 0 || ndim > HWRT_MAX_DIMS)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: ndim %d is out of range 0..%d", api, ndim,
                       HWRT_MAX_DIMS);
    if (ndim > 0 && !shape)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: shape is NULL for ndim %d", api, ndim);
    uint64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: extent %lld of dimension %d is "
                           "negative", api, (long long)shape[i], i);
        if (shape[i] && n > (UINT64_C(1) << 60) / (uint64_t)shape[i])
            return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: the shape's element count overflows "
                           "(dimension %d = %lld)", api, i, (long long)shape[i]);
        n *= (uint64_t)shape[i];
    }
    if (n > (UINT64_C(1) << 60) / hwrt_dtype_size(dt))
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: %llu elements of %s overflow a size", api,
                       (unsigned long long)n, hwrt_dtype_name(dt));
    *numel = (int64_t)n;
    *nbytes = (size_t)n * hwrt_dtype_size(dt);
    return HWRT_SUCCESS;
}

static hwrt_status shutdown_tensors(void);
static hwrt_status tensor_dtor(void *obj);

static hwrt_status make(const char *api, hwrt_dtype dt, int ndim, const int64_t *shape,
                        int device, void *data, DLManagedTensorVersioned *ext, hwi_tensor **out)
{
    int64_t numel;
    size_t nbytes;
    HWI_TRY(check_desc(api, dt, ndim, shape, &numel, &nbytes));
    hwi_tensor *t = calloc(1, sizeof *t);
    if (!t)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "%s: host out of memory", api);
    t->dtype = dt;
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++) t->shape[i] = shape[i];
    t->numel = numel;
    t->nbytes = nbytes;
    t->device = device;
    t->ext = ext;
    atomic_init(&t->refs, 1);
    pthread_mutex_init(&t->mu, NULL);
    if (!data && nbytes) {
        hwi_device *d = NULL;
        hwrt_status st = hwi_device_get(device, &d);
        if (st == HWRT_SUCCESS) st = hwi_offload_alloc(d, nbytes, &t->data);
        if (st != HWRT_SUCCESS) {
            pthread_mutex_destroy(&t->mu);
            free(t);
            return hwi_err_prefix(st, "%s", api);
        }
    } else {
        t->data = data;
    }
    hwi_on_shutdown(25, shutdown_tensors);
    hwi_handle_set_dtor(HWI_H_TENSOR, tensor_dtor);
    t->handle = hwi_handle_new(HWI_H_TENSOR, t);
    if (!t->handle) {
        if (!ext && t->data) hwi_pool_free(t->data, api);
        pthread_mutex_destroy(&t->mu);
        free(t);
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "%s: handle table full", api);
    }
    *out = t;
    return HWRT_SUCCESS;
}

hwrt_status hwi_tensor_wrap(hwrt_dtype dt, int ndim, const int64_t *shape, int device,
                            void *data, DLManagedTensorVersioned *owner, hwrt_tensor *out)
{
    hwi_tensor *t;
    HWI_TRY(make("hwrt_tensor_from_dlpack", dt, ndim, shape, device, data, owner, &t));
    *out = t->handle;
    return HWRT_SUCCESS;
}

static void add_stream(hwrt_stream *list, int *n, int *overflow, hwrt_stream s)
{
    for (int i = 0; i < *n; i++)
        if (list[i] == s) return;
    if (*n < HWI_TENSOR_STREAMS) list[(*n)++] = s;
    else *overflow = 1;
}

/* One more user reference, unless the last one is already gone (then the handle is dead
 * for good and stays so). */
static int ref_up(hwi_tensor *t)
{
    int r = atomic_load(&t->refs);
    while (r > 0 && !atomic_compare_exchange_weak(&t->refs, &r, r + 1)) {}
    return r > 0;
}

/* One user reference less; the last one destroys the handle (the caller's pin keeps the
 * tensor until its put). */
static void ref_down(hwi_tensor *t)
{
    int r = atomic_load(&t->refs);
    while (r > 0 && !atomic_compare_exchange_weak(&t->refs, &r, r - 1)) {}
    if (r == 1) hwi_handle_kill(t->handle, HWI_H_TENSOR, NULL);
}

/* a graph pins the tensor (its memory stays valid for replays) and holds a reference */
static void keep_retain(void *obj)
{
    hwi_handle_pin(((hwi_tensor *)obj)->handle);   /* the capturing call has it pinned */
    ref_up(obj);
}
static void keep_release(void *obj)
{
    ref_down(obj);
    hwi_handle_put(((hwi_tensor *)obj)->handle);
}
static void keep_launch(void *obj, hwi_stream *s, int write) { hwi_tensor_note_use(obj, s, write); }
/* a graph keeps the tensors its nodes use alive, and re-notes them at each launch */
static const hwi_keep_ops graph_keep = {keep_retain, keep_release, keep_launch};

void hwi_tensor_note_use(hwi_tensor *t, hwi_stream *s, int write)
{
    if (s->capture) hwi_capture_keep(s, t, write, &graph_keep);
    pthread_mutex_lock(&t->mu);
    add_stream(t->users, &t->nusers, &t->overflow, s->handle);
    if (write) add_stream(t->writers, &t->nwriters, &t->overflow, s->handle);
    pthread_mutex_unlock(&t->mu);
}

hwrt_status hwi_tensor_wait(hwi_tensor *t, int write_only, const char *api)
{
    return hwi_tensor_wait_except(t, write_only, NULL, api);
}

hwrt_status hwi_tensor_wait_except(hwi_tensor *t, int write_only, const hwi_stream *except,
                                   const char *api)
{
    hwrt_stream list[HWI_TENSOR_STREAMS];
    pthread_mutex_lock(&t->mu);
    int n = write_only ? t->nwriters : t->nusers;
    memcpy(list, write_only ? t->writers : t->users, sizeof list);
    int overflow = t->overflow;
    pthread_mutex_unlock(&t->mu);
    if (overflow)
        return hwi_streams_sync_device(t->device, api);
    for (int i = 0; i < n; i++) {
        HWI_STREAM_REF(s);
        if (except && list[i] == except->handle) continue;
        s = hwi_handle_acquire(list[i], HWI_H_STREAM);
        if (s) HWI_TRY(hwi_stream_sync(s, api));   /* destroyed streams were synchronized */
    }
    return HWRT_SUCCESS;
}

/* Bring an offloaded tensor back before the host or a copy touches its memory. */
static hwrt_status resident(hwi_tensor *t, int write)
{
    if (!t->offload)
        return HWRT_SUCCESS;
    HWI_STREAM_REF(s);
    HWI_TRY(hwi_stream_default(t->device, &s));
    hwi_tensor *ts[1] = {t};
    int w[1] = {write};
    return hwi_offload_ensure(ts, w, 1, s);
}

/* After a host-visible point every recorded stream is done: start a new record. */
static void reset_streams(hwi_tensor *t)
{
    pthread_mutex_lock(&t->mu);
    t->nwriters = t->nusers = 0;
    t->overflow = 0;
    pthread_mutex_unlock(&t->mu);
}

static _Atomic int leaked_tensors;

static void drop_tensor(void *obj)
{
    hwi_tensor *t = obj;
    atomic_fetch_add(&leaked_tensors, 1);
    if (t->ext) {
        if (t->ext->deleter) t->ext->deleter(t->ext);    /* the owner gets its memory back */
    } else if (t->data) {
        hwi_pool_free(t->data, "hwrt_shutdown");
    }
    pthread_mutex_destroy(&t->mu);
    free(t);
}

/* Shutdown, before the streams go: tensors still alive are released (their handles
 * become stale, their memory goes back to the pool) and counted in the log. */
static hwrt_status shutdown_tensors(void)
{
    uint64_t n = hwi_handle_drain(HWI_H_TENSOR, drop_tensor);
    if (n)
        hwi_log(HWI_LOG_WARN, "hwrt_shutdown: %llu tensor(s) were never released; released them",
                (unsigned long long)n);
    return HWRT_SUCCESS;
}

hwrt_status hwrt_tensor_empty(hwrt_tensor *out, hwrt_dtype dt, int ndim, const int64_t *shape)
{
    if (!out)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_tensor_empty: out is NULL");
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_current(&d));
    hwi_tensor *t;
    HWI_TRY(make("hwrt_tensor_empty", dt, ndim, shape, d->id, NULL, NULL, &t));
    *out = t->handle;
    return HWRT_SUCCESS;
}

/* H2D of the whole tensor on its device's default stream, after every prior use. */
static hwrt_status upload(hwi_tensor *t, const void *host, const char *api)
{
    if (!t->nbytes)
        return HWRT_SUCCESS;
    HWI_TRY(resident(t, 1));
    HWI_TRY(hwi_tensor_wait(t, 0, api));
    HWI_STREAM_REF(s);
    HWI_TRY(hwi_stream_default(t->device, &s));
    HWI_TRY(hwi_host_sync_check(api, s));
    reset_streams(t);
    HWI_TRY(hwrt_memcpy_async(t->data, host, t->nbytes, HWRT_MEMCPY_HOST_TO_DEVICE, s->handle));
    hwi_tensor_note_use(t, s, 1);
    /* pageable sources were consumed by the call; pinned ones must be too before we return */
    return hwi_stream_sync(s, api);
}

hwrt_status hwrt_tensor_from_host(hwrt_tensor *out, hwrt_dtype dt, int ndim, const int64_t *shape,
                                  const void *host)
{
    if (!out)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_tensor_from_host: out is NULL");
    HWI_TRY(hwrt_tensor_empty(out, dt, ndim, shape));
    HWI_TENSOR_REF(t);
    if (hwi_tensor_resolve(*out, &t) != HWRT_SUCCESS) {
        *out = NULL;                   /* released by another thread already */
        return hwi_err(HWRT_ERROR_INVALID_HANDLE, "hwrt_tensor_from_host: the new tensor was "
                       "released while it was being filled");
    }
    if (t->nbytes && !host) {
        hwrt_tensor_release(*out);
        *out = NULL;
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_tensor_from_host: host is NULL");
    }
    hwrt_status st = upload(t, host, "hwrt_tensor_from_host");
    if (st != HWRT_SUCCESS) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", hwrt_last_error());
        hwrt_tensor_release(*out);
        *out = NULL;
        return hwi_err(st, "%s", msg);
    }
    return HWRT_SUCCESS;
}

static hwrt_status check_bytes(const char *api, hwi_tensor *t, const void *host, size_t bytes)
{
    if (!host && t->nbytes)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: host is NULL", api);
    if (bytes != t->nbytes) {
        char shape[160] = "";
        for (int i = 0; i < t->ndim; i++)
            snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld", i ? "," : "",
                     (long long)t->shape[i]);
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: %zu bytes given but the tensor (%s [%s]) "
                       "holds %zu bytes", api, bytes, hwrt_dtype_name(t->dtype), shape, t->nbytes);
    }
    return HWRT_SUCCESS;
}

hwrt_status hwrt_tensor_copy_from_host(hwrt_tensor h, const void *host, size_t bytes)
{
    HWI_TENSOR_REF(t);
    HWI_TRY(hwi_tensor_resolve(h, &t));
    HWI_TRY(check_bytes("hwrt_tensor_copy_from_host", t, host, bytes));
    return upload(t, host, "hwrt_tensor_copy_from_host");
}

hwrt_status hwrt_tensor_copy_to_host(hwrt_tensor h, void *host, size_t bytes)
{
    HWI_TENSOR_REF(t);
    HWI_TRY(hwi_tensor_resolve(h, &t));
    const char *api = "hwrt_tensor_copy_to_host";
    HWI_TRY(check_bytes(api, t, host, bytes));
    if (!t->nbytes)
        return HWRT_SUCCESS;
    HWI_STREAM_REF(s);
    HWI_TRY(hwi_stream_default(t->device, &s));
    HWI_TRY(hwi_host_sync_check(api, s));
    /* ordered after every writer, whichever stream it used: never stale */
    HWI_TRY(resident(t, 0));
    HWI_TRY(hwi_tensor_wait(t, 1, api));
    HWI_TRY(hwrt_memcpy_async(host, t->data, t->nbytes, HWRT_MEMCPY_DEVICE_TO_HOST, s->handle));
    return hwi_stream_sync(s, api);
}

hwrt_status hwrt_tensor_retain(hwrt_tensor h)
{
    HWI_TENSOR_REF(t);
    HWI_TRY(hwi_tensor_resolve(h, &t));
    if (!ref_up(t))
        return hwi_err(HWRT_ERROR_INVALID_HANDLE, "hwrt_tensor_retain(%p): the tensor was "
                       "released (its last reference went on another thread)", (void *)h);
    return HWRT_SUCCESS;
}

/* The last reference went: the handle is dead and no call uses the tensor. */
static hwrt_status tensor_dtor(void *obj)
{
    hwi_tensor *t = obj;
    hwrt_status st = HWRT_SUCCESS;
    hwi_offload_forget(t);
    if (t->ext) {
        /* imported memory: the owner may free it once our queued work is done */
        st = hwi_tensor_wait(t, 0, "hwrt_tensor_release");
        if (t->ext->deleter) t->ext->deleter(t->ext);
    } else if (t->data) {
        /* stream-ordered: the pool reuses the block once the users' work is done */
        for (int i = 0; i < t->nusers; i++) {
            HWI_STREAM_REF(s);
            s = hwi_handle_acquire(t->users[i], HWI_H_STREAM);
            if (s) hwi_pool_record_stream(t->data, s->bs);
        }
        if (t->overflow) st = hwi_streams_sync_device(t->device, "hwrt_tensor_release");
        hwi_dispatch_forget(t->data);
        hwrt_status st2 = hwi_pool_free(t->data, "hwrt_tensor_release");
        if (st == HWRT_SUCCESS) st = st2;
    }
    pthread_mutex_destroy(&t->mu);
    free(t);
    return st;
}

/* The last reference destroys the handle at once; the tensor itself goes when the last
 * call using it (on any thread) ends, here if none does. */
hwrt_status hwrt_tensor_release(hwrt_tensor h)
{
    hwi_tensor *t = NULL;
    HWI_TRY(hwi_tensor_resolve(h, &t));
    ref_down(t);
    return hwi_handle_put(h);          /* tensor_dtor's status if this was the last */
}

#define ACCESSOR(fn, type, expr)                                                              \
    hwrt_status fn(hwrt_tensor h, type *out)                                                 \
    {                                                                                         \
        HWI_TENSOR_REF(t);                                                                    \
        HWI_TRY(hwi_tensor_resolve(h, &t));                                                   \
        if (!out) return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, #fn ": out is NULL");           \
        *out = (expr);                                                                        \
        return HWRT_SUCCESS;                                                                  \
    }

ACCESSOR(hwrt_tensor_dtype, hwrt_dtype, t->dtype)
ACCESSOR(hwrt_tensor_ndim, int, t->ndim)
ACCESSOR(hwrt_tensor_numel, int64_t, t->numel)
ACCESSOR(hwrt_tensor_nbytes, size_t, t->nbytes)
ACCESSOR(hwrt_tensor_device, int, hwi_device_ordinal(t->device))
hwrt_status hwrt_tensor_data(hwrt_tensor h, void **out)
{
    HWI_TENSOR_REF(t);
    HWI_TRY(hwi_tensor_resolve(h, &t));
    if (!out) return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_tensor_data: out is NULL");
    HWI_TRY(resident(t, 1));          /* the caller may write through the pointer */
    *out = t->data;
    return HWRT_SUCCESS;
}

hwrt_status hwrt_tensor_shape(hwrt_tensor h, int64_t *shape, int cap)
{
    HWI_TENSOR_REF(t);
    HWI_TRY(hwi_tensor_resolve(h, &t));
    if (!shape && cap > 0)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_tensor_shape: shape is NULL");
    for (int i = 0; i < t->ndim && i < cap; i++) shape[i] = t->shape[i];
    return HWRT_SUCCESS;
}
