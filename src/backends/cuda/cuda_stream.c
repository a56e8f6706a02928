/* CUDA streams (non-blocking, with priorities), the work queued on them (copies,
 * memsets, host functions, event waits) and events with timing. */
#include "cuda_internal.h"
#include "../../base/status.h"

#include <stdlib.h>
#include <string.h>

hwrt_status cu_anchor(cu_dev *d);

/* hwrt priorities: 0 normal, < 0 higher, as CUDA's; clamped into the device's range
 * [greatest, least] (e.g. [-5, 0] on recent GPUs). */
hwrt_status cu_stream_create(hwrt_bdev *d, int priority, hwrt_bstream **out)
{
    HWI_TRY(cu_enter(d));
    cu_stream *s = calloc(1, sizeof *s);
    if (!s)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "creating a stream: host out of memory");
    int p = priority < d->prio_greatest ? d->prio_greatest
            : priority > d->prio_least  ? d->prio_least
                                        : priority;
    hcu_result r = hcu.StreamCreateWithPriority(&s->s, HCU_STREAM_NON_BLOCKING, p);
    if (r != HCU_SUCCESS) {
        free(s);
        return cu_err(d, r, "cuda device %d: cuStreamCreateWithPriority(priority %d)", d->ordinal,
                      p);
    }
    s->dev = d;
    s->priority = p;
    *out = s;
    return HWRT_SUCCESS;
}

void cu_stream_destroy(hwrt_bstream *s)
{
    hcu.CtxSetCurrent(s->dev->ctx);
    hcu.StreamDestroy(s->s);
    free(s);
}

hwrt_status cu_stream_synchronize(hwrt_bstream *s)
{
    HWI_TRY(cu_enter(s->dev));
    hcu_result r = hcu.StreamSynchronize(s->s);
    if (r != HCU_SUCCESS)
        return cu_err(s->dev, r, "cuda device %d: cuStreamSynchronize", s->dev->ordinal);
    return HWRT_SUCCESS;
}

hwrt_status cu_stream_query(hwrt_bstream *s)
{
    HWI_TRY(cu_enter(s->dev));
    hcu_result r = hcu.StreamQuery(s->s);
    if (r == HCU_SUCCESS) return HWRT_SUCCESS;
    if (r == HCU_ERROR_NOT_READY) return HWRT_ERROR_NOT_READY;
    return cu_err(s->dev, r, "cuda device %d: cuStreamQuery", s->dev->ordinal);
}

hwrt_status cu_stream_wait_event(hwrt_bstream *s, hwrt_bevent *e)
{
    HWI_TRY(cu_enter(s->dev));
    hcu_result r = hcu.StreamWaitEvent(s->s, e->e, HCU_EVENT_WAIT_DEFAULT);
    if (r != HCU_SUCCESS)
        return cu_err(s->dev, r, "cuda device %d: cuStreamWaitEvent (event of device %d)",
                      s->dev->ordinal, e->dev->ordinal);
    return HWRT_SUCCESS;
}

void *cu_stream_native(hwrt_bstream *s)
{
    return s->s;
}

/* ---- copies and memsets ---- */

/* A copy with a pageable host side must not return before the host buffer has been read
 * (H2D) or written (D2H) (backend.h). CUDA only says such an async copy "might be"
 * synchronous, so hwrt waits for the stream, which also covers the DMA itself. */
hwrt_status cu_memcpy_async(hwrt_bstream *s, void *dst, const void *src, size_t bytes,
                            hwrt_memcpy_kind kind, int host_pinned)
{
    cu_dev *d = s->dev;
    HWI_TRY(cu_enter(d));
    const hcu_dptr dd = (hcu_dptr)(uintptr_t)dst, ds = (hcu_dptr)(uintptr_t)src;
    hcu_result r;
    int wait = !host_pinned;
    uint64_t corr = kind == HWRT_MEMCPY_HOST_TO_HOST ? cu_cupti_host_begin() : cu_cupti_push();
    uint64_t t0 = corr ? cu_now_ns() : 0;
    switch (kind) {
    case HWRT_MEMCPY_HOST_TO_DEVICE: r = hcu.MemcpyHtoDAsync(dd, src, bytes, s->s); break;
    case HWRT_MEMCPY_DEVICE_TO_HOST: r = hcu.MemcpyDtoHAsync(dst, ds, bytes, s->s); break;
    case HWRT_MEMCPY_DEVICE_TO_DEVICE: r = hcu.MemcpyDtoDAsync(dd, ds, bytes, s->s); wait = 0; break;
    case HWRT_MEMCPY_HOST_TO_HOST:
        /* in stream order: after the work before it, on the host */
        r = hcu.StreamSynchronize(s->s);
        if (r == HCU_SUCCESS) {
            t0 = corr ? cu_now_ns() : 0;
            memmove(dst, src, bytes);
        }
        cu_cupti_host_record(corr, t0, corr ? cu_now_ns() : 0, r == HCU_SUCCESS);
        corr = 0;
        wait = 0;
        break;
    default: r = hcu.MemcpyAsync(dd, ds, bytes, s->s); break;   /* unified addressing */
    }
    cu_cupti_pop(corr, r == HCU_SUCCESS);
    if (r == HCU_SUCCESS && wait) r = hcu.StreamSynchronize(s->s);
    if (r != HCU_SUCCESS)
        return cu_err(d, r, "cuda device %d: %s copy of %zu bytes (%p -> %p, %s host memory)",
                      d->ordinal, hwi_memcpy_kind_name(kind), bytes, src, dst,
                      host_pinned ? "pinned" : "pageable");
    return HWRT_SUCCESS;
}

hwrt_status cu_memset_async(hwrt_bstream *s, void *dptr, int value, size_t bytes)
{
    HWI_TRY(cu_enter(s->dev));
    uint64_t corr = cu_cupti_push();
    hcu_result r = hcu.MemsetD8Async((hcu_dptr)(uintptr_t)dptr, (unsigned char)value, bytes, s->s);
    cu_cupti_pop(corr, r == HCU_SUCCESS);
    if (r != HCU_SUCCESS)
        return cu_err(s->dev, r, "cuda device %d: cuMemsetD8Async(%p, %d, %zu bytes)",
                      s->dev->ordinal, dptr, value, bytes);
    return HWRT_SUCCESS;
}

/* ---- host functions ---- */

typedef struct host_job {
    hwrt_host_fn fn;
    void *arg;
    cu_dev *dev;
    uint64_t corr;           /* activity record to report (0: none) */
} host_job;

/* On CUDA's callback thread. The driver does not call it once the context has an error;
 * hwrt's own sticky record is checked too (a fault seen by another call first). No CUDA
 * call is allowed here (the driver forbids it), so the context is not made current. */
static void run_host_job(void *p)
{
    host_job *j = p;
    int run = !hwi_fault_set(&j->dev->fault);
    uint64_t t0 = j->corr ? cu_now_ns() : 0;
    if (run) j->fn(j->arg);
    cu_cupti_host_record(j->corr, t0, j->corr ? cu_now_ns() : 0, run);
    free(j);
}

hwrt_status cu_host_func(hwrt_bstream *s, hwrt_host_fn fn, void *arg)
{
    HWI_TRY(cu_enter(s->dev));
    host_job *j = malloc(sizeof *j);
    if (!j) return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "cuda: host out of memory for a job");
    j->fn = fn;
    j->arg = arg;
    j->dev = s->dev;
    j->corr = cu_cupti_host_begin();
    hcu_result r = hcu.LaunchHostFunc(s->s, run_host_job, j);
    if (r != HCU_SUCCESS) {
        cu_cupti_host_record(j->corr, 0, 0, 0);
        free(j);
        return cu_err(s->dev, r, "cuda device %d: cuLaunchHostFunc", s->dev->ordinal);
    }
    return HWRT_SUCCESS;
}

hwrt_status cu_device_synchronize(hwrt_bdev *d)
{
    HWI_TRY(cu_enter(d));
    hcu_result r = hcu.CtxSynchronize();
    if (r != HCU_SUCCESS)
        return cu_err(d, r, "cuda device %d: cuCtxSynchronize", d->ordinal);
    return HWRT_SUCCESS;
}

/* ---- events ---- */

hwrt_status cu_event_create(hwrt_bdev *d, unsigned flags, hwrt_bevent **out)
{
    HWI_TRY(cu_enter(d));
    cu_event *e = calloc(1, sizeof *e);
    if (!e) return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "creating an event: host out of memory");
    unsigned cf = (flags & HWRT_EVENT_DISABLE_TIMING) ? HCU_EVENT_DISABLE_TIMING : HCU_EVENT_DEFAULT;
    hcu_result r = hcu.EventCreate(&e->e, cf);
    if (r != HCU_SUCCESS) {
        free(e);
        return cu_err(d, r, "cuda device %d: cuEventCreate", d->ordinal);
    }
    e->dev = d;
    e->flags = flags;
    *out = e;
    return HWRT_SUCCESS;
}

void cu_event_destroy(hwrt_bevent *e)
{
    hcu.CtxSetCurrent(e->dev->ctx);
    hcu.EventDestroy(e->e);
    free(e);
}

hwrt_status cu_event_record(hwrt_bevent *e, hwrt_bstream *s)
{
    HWI_TRY(cu_enter(s->dev));
    hcu_result r = hcu.EventRecord(e->e, s->s);
    if (r != HCU_SUCCESS)
        return cu_err(s->dev, r, "cuda device %d: cuEventRecord", s->dev->ordinal);
    return HWRT_SUCCESS;
}

hwrt_status cu_event_query(hwrt_bevent *e)
{
    HWI_TRY(cu_enter(e->dev));
    hcu_result r = hcu.EventQuery(e->e);
    if (r == HCU_SUCCESS) return HWRT_SUCCESS;
    if (r == HCU_ERROR_NOT_READY) return HWRT_ERROR_NOT_READY;
    return cu_err(e->dev, r, "cuda device %d: cuEventQuery", e->dev->ordinal);
}

hwrt_status cu_event_synchronize(hwrt_bevent *e)
{
    HWI_TRY(cu_enter(e->dev));
    hcu_result r = hcu.EventSynchronize(e->e);
    if (r != HCU_SUCCESS)
        return cu_err(e->dev, r, "cuda device %d: cuEventSynchronize", e->dev->ordinal);
    return HWRT_SUCCESS;
}

static hwrt_status elapsed(cu_dev *d, float *ms, hcu_event a, hcu_event b)
{
    hcu_result r = hcu.EventElapsedTime(ms, a, b);
    if (r == HCU_ERROR_NOT_READY) return HWRT_ERROR_NOT_READY;
    if (r != HCU_SUCCESS)
        return cu_err(d, r, "cuda device %d: cuEventElapsedTime", d->ordinal);
    return HWRT_SUCCESS;
}

hwrt_status cu_event_elapsed_ms(float *ms, hwrt_bevent *start, hwrt_bevent *end)
{
    HWI_TRY(cu_enter(start->dev));
    return elapsed(start->dev, ms, start->e, end->e);
}

/* Timestamps are the reference event's host time plus the event's distance from it.
 * Beyond 10 s the float milliseconds lose microseconds, so the reference moves up to
 * now and the distance is taken again. */
hwrt_status cu_event_timestamp_ns(hwrt_bevent *e, uint64_t *ns)
{
    cu_dev *d = e->dev;
    if (e->flags & HWRT_EVENT_DISABLE_TIMING)
        return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "the event was created with "
                       "HWRT_EVENT_DISABLE_TIMING: it has no timestamp");
    HWI_TRY(cu_enter(d));
    pthread_mutex_lock(&d->ts_mu);
    float ms = 0;
    hwrt_status st = elapsed(d, &ms, d->ref, e->e);
    if (st == HWRT_SUCCESS && (ms > 1e4f || ms < -1e4f)) {
        st = cu_anchor(d);
        if (st == HWRT_SUCCESS) st = elapsed(d, &ms, d->ref, e->e);
    }
    if (st == HWRT_SUCCESS) {
        int64_t t = (int64_t)d->ref_ns + (int64_t)((double)ms * 1e6);
        *ns = t > 0 ? (uint64_t)t : 0;
    }
    pthread_mutex_unlock(&d->ts_mu);
    return st;
}
