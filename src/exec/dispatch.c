/* The single dispatch point (see dispatch.h). With no hook installed and
 * launch_blocking off, dispatch is a branch and a backend call. */
#include "dispatch.h"
#include "event.h"
#include "stream.h"
#include "../base/config.h"
#include "../base/status.h"
#include "../runtime/device_ops.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define MAX_HOOKS 8

static _Atomic(const hwi_hook *) hooks[MAX_HOOKS];
static _Atomic int nhooks;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

hwrt_status hwi_dispatch_add_hook(const hwi_hook *h)
{
    pthread_mutex_lock(&mu);
    int n = atomic_load(&nhooks), free_slot = -1;
    for (int i = 0; i < n; i++) {
        const hwi_hook *cur = atomic_load(&hooks[i]);
        if (cur == h) { pthread_mutex_unlock(&mu); return HWRT_SUCCESS; }
        if (!cur && free_slot < 0) free_slot = i;
    }
    if (free_slot < 0 && n == MAX_HOOKS) {
        pthread_mutex_unlock(&mu);
        return hwi_err(HWRT_ERROR_INTERNAL, "dispatch: more than %d hooks", MAX_HOOKS);
    }
    if (free_slot < 0) {
        free_slot = n;
        atomic_store(&hooks[free_slot], h);
        atomic_store(&nhooks, n + 1);
    } else {
        atomic_store(&hooks[free_slot], h);
    }
    pthread_mutex_unlock(&mu);
    return HWRT_SUCCESS;
}

void hwi_dispatch_remove_hook(const hwi_hook *h)
{
    pthread_mutex_lock(&mu);
    for (int i = 0; i < atomic_load(&nhooks); i++)
        if (atomic_load(&hooks[i]) == h) atomic_store(&hooks[i], NULL);
    pthread_mutex_unlock(&mu);
}

/* A host function runs through this trampoline, which marks its thread as inside a host
 * function of that stream: a host-blocking call from there would wait for the function
 * itself (the backend runs a device's host functions on one thread, in stream order), so
 * hwi_host_sync_check refuses it instead of hanging. */
typedef struct host_call {
    hwrt_host_fn fn;
    void *arg;
    int device;
    hwi_stream *owner;             /* queued on it, not yet run (NULL: running or inline) */
    struct host_call *prev, *next;
} host_call;

static _Thread_local const host_call *in_host_fn;
/* Queued calls are listed on their stream: a backend skips the host functions queued on
 * a faulted device (backend.h), and their closures are freed with the stream instead. */
static pthread_mutex_t calls_mu = PTHREAD_MUTEX_INITIALIZER;

static void unlink_call(host_call *c)
{
    if (c->prev) c->prev->next = c->next;
    else c->owner->host_calls = c->next;
    if (c->next) c->next->prev = c->prev;
    c->owner = NULL;
}

static void host_trampoline(void *p)
{
    host_call *pc = p;
    pthread_mutex_lock(&calls_mu);
    if (pc->owner) unlink_call(pc);
    pthread_mutex_unlock(&calls_mu);
    host_call c = *pc;
    free(pc);
    const host_call *outer = in_host_fn;
    in_host_fn = &c;
    c.fn(c.arg);
    in_host_fn = outer;
}

void hwi_dispatch_drop_host_calls(hwi_stream *s)
{
    pthread_mutex_lock(&calls_mu);
    while (s->host_calls) {
        host_call *c = s->host_calls;
        unlink_call(c);
        free(c);
    }
    pthread_mutex_unlock(&calls_mu);
}

static hwrt_status submit_host_func(const hwi_work *w)
{
    host_call *c = calloc(1, sizeof *c);
    if (!c)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "hwrt_launch_host_func: host out of memory");
    hwi_stream *s = w->stream;
    c->fn = w->u.host.fn;
    c->arg = w->u.host.arg;
    c->device = s->dev->ordinal;
    pthread_mutex_lock(&calls_mu);     /* listed before the backend may run it */
    c->owner = s;
    c->next = s->host_calls;
    if (c->next) c->next->prev = c;
    s->host_calls = c;
    pthread_mutex_unlock(&calls_mu);
    /* a backend without host_func: device_ops.c runs it inline once the stream drained */
    hwrt_status st = hwi_dev_host_func(s->dev, s->bs, host_trampoline, c);
    if (st != HWRT_SUCCESS) {
        pthread_mutex_lock(&calls_mu);
        if (c->owner) unlink_call(c);
        pthread_mutex_unlock(&calls_mu);
        free(c);
    }
    return st;
}

hwrt_status hwi_dispatch_submit(const hwi_work *w)
{
    const hwi_device *d = w->stream->dev;
    hwrt_bstream *bs = w->stream->bs;
    switch (w->kind) {
    case HWI_WORK_COPY:
        return hwi_dev_memcpy_async(d, bs, w->u.copy.dst, w->u.copy.src, w->u.copy.bytes,
                                    w->u.copy.kind, w->u.copy.pinned);
    case HWI_WORK_MEMSET:
        return hwi_dev_memset_async(d, bs, w->u.set.dst, w->u.set.value, w->u.set.bytes);
    case HWI_WORK_KERNEL:
        return hwi_dev_kernel_launch(d, bs, &w->u.kernel);
    case HWI_WORK_HOST_FUNC:
        return submit_host_func(w);
    case HWI_WORK_EVENT_RECORD:
        return hwi_dev_event_record(d, w->u.event.ev->be, bs);
    case HWI_WORK_EVENT_WAIT:
        return hwi_dev_stream_wait_event(d, bs, w->u.event.ev->be);
    }
    return hwi_err(HWRT_ERROR_INTERNAL, "dispatch: unknown work kind %d", (int)w->kind);
}

void hwi_dispatch_forget(const void *base)
{
    int n = atomic_load_explicit(&nhooks, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        const hwi_hook *h = atomic_load(&hooks[i]);
        if (h && h->forget) h->forget(h->ctx, base);
    }
}

void hwi_dispatch_forget_event(const void *handle)
{
    int n = atomic_load_explicit(&nhooks, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        const hwi_hook *h = atomic_load(&hooks[i]);
        if (h && h->forget_event) h->forget_event(h->ctx, handle);
    }
}

void hwi_dispatch_span(hwi_span_cat cat, const char *name, int device, uint64_t start_ns,
                       uint64_t end_ns, uint64_t bytes)
{
    int n = atomic_load_explicit(&nhooks, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        const hwi_hook *h = atomic_load(&hooks[i]);
        if (h && h->span) h->span(h->ctx, cat, name, device, start_ns, end_ns, bytes);
    }
}

int hwi_dispatch_per_work(void)
{
    int n = atomic_load_explicit(&nhooks, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        const hwi_hook *h = atomic_load(&hooks[i]);
        if (h && h->per_work) return 1;
    }
    return 0;
}

hwrt_status hwi_dispatch(hwi_work *w)
{
    int n = atomic_load_explicit(&nhooks, memory_order_acquire);
    w->consumed = 0;
    for (int i = 0; i < n; i++) {
        const hwi_hook *h = atomic_load(&hooks[i]);
        if (!h || !h->pre) continue;
        hwrt_status st = h->pre(h->ctx, w);
        if (st != HWRT_SUCCESS) return st;
        if (w->consumed) return HWRT_SUCCESS;
    }
    hwrt_status st = hwi_dispatch_submit(w);
    if (st == HWRT_SUCCESS && hwi_cfg_int(HWI_CFG_LAUNCH_BLOCKING) &&
        w->kind != HWI_WORK_EVENT_RECORD && w->kind != HWI_WORK_EVENT_WAIT) {
        /* launch_blocking: the work is done before the call returns, and a fault is
         * reported by the call that caused it */
        st = hwi_dev_stream_synchronize(w->stream->dev, w->stream->bs);
        if (st != HWRT_SUCCESS)
            hwi_err_prefix(st, "%s on device %d (launch_blocking)", w->name,
                           w->stream->dev->ordinal);
    }
    for (int i = 0; i < n; i++) {
        const hwi_hook *h = atomic_load(&hooks[i]);
        if (h && h->post) h->post(h->ctx, w, st);
    }
    return st;
}

hwrt_status hwi_host_fn_check(const char *api)
{
    if (__builtin_expect(in_host_fn != NULL, 0))
        return hwi_err(HWRT_ERROR_NOT_PERMITTED, "%s was called from a host function (queued "
                       "with hwrt_launch_host_func on device %d): it would wait for work that "
                       "runs after the host function returns, i.e. for itself, and hang. Do the "
                       "synchronization after the host function, on the thread that queued it, "
                       "or queue the dependent work with events", api, in_host_fn->device);
    return HWRT_SUCCESS;
}

hwrt_status hwi_host_sync_check(const char *api, hwi_stream *s)
{
    HWI_TRY(hwi_host_fn_check(api));
    int n = atomic_load_explicit(&nhooks, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        const hwi_hook *h = atomic_load(&hooks[i]);
        if (h && h->host_sync) HWI_TRY(h->host_sync(h->ctx, api, s));
    }
    return HWRT_SUCCESS;
}

void hwi_host_sync_end(const char *api, hwi_stream *s, hwrt_status st)
{
    int n = atomic_load_explicit(&nhooks, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        const hwi_hook *h = atomic_load(&hooks[i]);
        if (h && h->host_sync_end) h->host_sync_end(h->ctx, api, s, st);
    }
}
