/* The profiler's taps: a dispatch hook (launch spans, device spans by activity record
 * or marker, sync spans) and the pool's allocation observer. Each tap fills one record
 * in the calling thread's buffer; nothing here takes a lock shared by threads except a
 * stream's own marker queue (marker path only). */
#include "prof.h"
#include "../exec/dispatch.h"
#include "../mem/mem_events.h"
#include "../base/status.h"
#include "../backends/backend.h"

static _Thread_local uint64_t launch_t0;
static _Thread_local uint64_t sync_t0;
static _Thread_local const char *sync_api;

static hwrt_status on_pre(void *ctx, hwi_work *w)
{
    launch_t0 = hwi_prof_now_ns();
    prof_activity_correlate(w);  /* sets hwi_backend_correlation: the backend stamps the op */
    return HWRT_SUCCESS;
}

static void fill_work(prof_rec *r, const hwi_work *w)
{
    switch (w->kind) {
    case HWI_WORK_COPY:
        r->bytes = w->u.copy.bytes;
        r->sub = (uint8_t)w->u.copy.kind;
        r->pinned = (uint8_t)(w->u.copy.pinned != 0);
        break;
    case HWI_WORK_MEMSET:
        r->bytes = w->u.set.bytes;
        break;
    case HWI_WORK_KERNEL:
        r->sub = (uint8_t)w->u.kernel.dtype;
        if (w->u.kernel.op == HWRT_K_MATMUL || w->u.kernel.op == HWRT_K_SUM) {
            r->a = (uint64_t)w->u.kernel.m;
            r->b = (uint64_t)w->u.kernel.k;
            r->c = (uint64_t)w->u.kernel.nn;
        } else {
            r->a = (uint64_t)w->u.kernel.n;
        }
        break;
    default:
        break;
    }
}

static void on_post(void *ctx, const hwi_work *w, hwrt_status st)
{
    uint64_t t1 = hwi_prof_now_ns();
    uint64_t t0 = launch_t0, corr = hwi_backend_correlation;   /* as pre set it */
    launch_t0 = 0;
    if (corr)                          /* later enqueues on this thread are not this work */
        hwi_backend_correlation = 0;
    prof_rec *r = prof_begin();
    if (!r)
        return;
    prof_stream *p = prof_stream_get(w->stream);
    r->type = PREC_WORK;
    r->kind = (uint8_t)w->kind;
    r->name = w->name ? w->name : "Work";
    r->device = (int16_t)w->stream->device;
    r->stream = prof_stream_id(p);
    r->t0 = t0 && t0 <= t1 ? t0 : t1;   /* hook added mid-launch: no pre time */
    r->t1 = t1;
    r->flags = st != HWRT_SUCCESS ? PREC_F_FAILED : 0;
    fill_work(r, w);
    /* failed work never reaches the device; a user's event record is itself a marker;
     * correlated work gets its device span from the backend's activity record */
    if (st == HWRT_SUCCESS && corr)
        r->corr = corr;
    else if (st == HWRT_SUCCESS && w->kind != HWI_WORK_EVENT_RECORD)
        prof_marker_attach(p, w->stream, r);
    prof_commit(r);
}

static hwrt_status on_sync(void *ctx, const char *api, hwi_stream *s)
{
    sync_t0 = hwi_prof_now_ns();
    sync_api = api;
    return HWRT_SUCCESS;
}

static void on_sync_end(void *ctx, const char *api, hwi_stream *s, hwrt_status st)
{
    uint64_t t1 = hwi_prof_now_ns();
    uint64_t t0 = sync_api == api && sync_t0 <= t1 ? sync_t0 : t1;
    sync_api = NULL;
    prof_rec *r = prof_begin();
    if (!r)
        return;
    r->type = PREC_SYNC;
    r->name = api ? api : "synchronize";
    r->device = (int16_t)(s ? s->device : -1);
    r->stream = s ? prof_stream_id(prof_stream_get(s)) : 0;
    r->t0 = t0;
    r->t1 = t1;
    r->flags = st != HWRT_SUCCESS ? PREC_F_FAILED : 0;
    prof_commit(r);
}

static void on_mem(hwi_mem_event_kind kind, int device, const void *ptr, size_t bytes,
                   size_t allocated, size_t reserved)
{
    prof_rec *r = prof_begin();
    if (!r)
        return;
    r->type = PREC_MEM;
    r->kind = (uint8_t)kind;
    r->name = kind == HWI_MEM_ALLOC ? "alloc" : kind == HWI_MEM_FREE ? "free"
              : kind == HWI_MEM_RESERVE ? "reserve" : "release";
    r->device = (int16_t)device;
    r->t0 = r->t1 = hwi_prof_now_ns();
    r->bytes = bytes;
    r->a = allocated;
    r->b = reserved;
    r->c = (uint64_t)(uintptr_t)ptr;
    prof_commit(r);
}

void hwi_prof_record_event(hwi_prof_cat cat, const char *name, int device, uint64_t start_ns,
                           uint64_t end_ns, uint64_t bytes)
{
    if (!hwi_prof_active())
        return;
    prof_rec *r = prof_begin();
    if (!r)
        return;
    r->type = PREC_EXT;
    r->kind = (uint8_t)cat;
    r->name = name ? name : "event";
    r->device = (int16_t)device;
    r->t0 = start_ns;
    r->t1 = end_ns >= start_ns ? end_ns : start_ns;
    r->bytes = bytes;
    prof_commit(r);
}

static void on_span(void *ctx, hwi_span_cat cat, const char *name, int device,
                    uint64_t start_ns, uint64_t end_ns, uint64_t bytes)
{
    (void)ctx;
    hwi_prof_record_event(cat, name, device, start_ns, end_ns, bytes);
}

static const hwi_hook hook = {
    .pre = on_pre, .post = on_post, .host_sync = on_sync, .host_sync_end = on_sync_end,
    .per_work = 1,     /* a replayed graph's nodes are profiled one by one */
    .span = on_span,   /* offload's spans (hwi_dispatch_span) */
};

hwrt_status prof_hook_install(void)
{
    HWI_TRY(hwi_dispatch_add_hook(&hook));
    hwi_mem_events_set(on_mem);
    return HWRT_SUCCESS;
}

void prof_hook_remove(void)
{
    hwi_mem_events_set(NULL);
    hwi_dispatch_remove_hook(&hook);
}
