/* Streams as in-order OpenCL command queues (with profiling, for event timestamps), and
 * the work that goes on them: copies, memsets, host functions, event waits. Each stream
 * keeps its newest command's event, which makes query and fault reporting cheap. Every
 * enqueue is flushed: OpenCL does not promise progress (or cross-queue waits) otherwise. */
#include "ocl.h"
#include "../../base/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

hwrt_status ocl_dev_fault(ocl_dev *d)
{
    char msg[256];
    hwrt_status st = hwi_fault_read(&d->fault, msg, sizeof msg);
    if (st == HWRT_SUCCESS)
        return HWRT_SUCCESS;
    return hwi_err(st, "opencl device %d has a sticky fault: %s; call hwrt_device_reset(%d) to "
                   "recover (work queued after the failed command was not run)", d->ordinal, msg,
                   d->ordinal);
}

/* Make the device's fault sticky if ev's command failed since the last reset. */
static cl_int note_failure(ocl_dev *d, cl_event ev, unsigned epoch, const char *what)
{
    cl_int st = CL_COMPLETE;
    if (ocl.GetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) !=
        CL_SUCCESS)
        return CL_COMPLETE;
    if (st < 0 && epoch == atomic_load(&d->epoch) && !hwi_fault_set(&d->fault)) {
        char desc[128];
        /* drivers use -1 as a generic failure status, not as CL_DEVICE_NOT_FOUND */
        snprintf(desc, sizeof desc, "an OpenCL command failed (execution status %d%s%s)",
                 (int)st, st == -1 ? "" : ", ", st == -1 ? "" : ocl_error_name(st));
        hwi_fault_record(&d->fault, desc, what);
    }
    return st;
}

hwrt_status ocl_event_status(ocl_dev *d, cl_event ev, unsigned epoch, const char *what)
{
    if (note_failure(d, ev, epoch, what) > CL_COMPLETE)
        return HWRT_ERROR_NOT_READY;
    return ocl_dev_fault(d);      /* a failure acknowledged by a reset counts as done */
}

/* The previous command is checked as it is replaced: if it already failed, a command
 * queued now would not inherit the failure (drivers fail only commands still waiting on
 * it), so it is noted here; if it is still pending, the new one fails with it. */
void ocl_stream_track(ocl_stream *s, cl_event ev)
{
    unsigned epoch = atomic_load(&s->dev->epoch);
    pthread_mutex_lock(&s->mu);
    cl_event old = s->last;
    unsigned old_epoch = s->last_epoch;
    s->last = ev;
    s->last_epoch = epoch;
    pthread_mutex_unlock(&s->mu);
    if (old) {
        note_failure(s->dev, old, old_epoch, "the next enqueue on its stream");
        ocl.ReleaseEvent(old);
    }
    ocl.Flush(s->q);
}

static cl_event last_retained(ocl_stream *s, unsigned *epoch)
{
    pthread_mutex_lock(&s->mu);
    cl_event ev = s->last;
    if (ev) ocl.RetainEvent(ev);
    *epoch = s->last_epoch;
    pthread_mutex_unlock(&s->mu);
    return ev;
}

static int register_stream(ocl_dev *d, ocl_stream *s)
{
    pthread_mutex_lock(&d->streams_mu);
    if (d->nstreams == d->cap_streams) {
        int nc = d->cap_streams ? d->cap_streams * 2 : 16;
        ocl_stream **ns = realloc(d->streams, (size_t)nc * sizeof *ns);
        if (!ns) { pthread_mutex_unlock(&d->streams_mu); return 0; }
        d->streams = ns;
        d->cap_streams = nc;
    }
    d->streams[d->nstreams++] = s;
    pthread_mutex_unlock(&d->streams_mu);
    return 1;
}

static void unregister_stream(ocl_dev *d, ocl_stream *s)
{
    pthread_mutex_lock(&d->streams_mu);
    for (int i = 0; i < d->nstreams; i++)
        if (d->streams[i] == s) { d->streams[i] = d->streams[--d->nstreams]; break; }
    pthread_mutex_unlock(&d->streams_mu);
}

/* Finish every stream of the device, then clear the sticky fault: commands that failed
 * before now are acknowledged (the epoch moves on), later work runs normally. */
hwrt_status ocl_device_reset(hwrt_bdev *d)
{
    pthread_mutex_lock(&d->streams_mu);
    for (int i = 0; i < d->nstreams; i++)
        ocl.Finish(d->streams[i]->q);
    atomic_fetch_add(&d->epoch, 1);
    hwi_fault_clear(&d->fault);
    pthread_mutex_unlock(&d->streams_mu);
    return HWRT_SUCCESS;
}

hwrt_status ocl_stream_create(hwrt_bdev *d, int priority, hwrt_bstream **out)
{
    ocl_stream *s = calloc(1, sizeof *s);
    if (!s)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "creating a stream: host out of memory");
    cl_int e;
    s->q = ocl.CreateCommandQueue(d->ctx, d->dev, CL_QUEUE_PROFILING_ENABLE, &e);
    if (e != CL_SUCCESS) {
        free(s);
        return ocl_err(e, "opencl device %d: clCreateCommandQueue", d->ordinal);
    }
    s->dev = d;
    s->priority = priority;      /* OpenCL 1.2 queues have no priorities: recorded only */
    if (!register_stream(d, s)) {
        ocl.ReleaseCommandQueue(s->q);
        free(s);
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "creating a stream: host out of memory");
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->enq_mu, NULL);
    *out = s;
    return HWRT_SUCCESS;
}

void ocl_stream_destroy(hwrt_bstream *s)
{
    unregister_stream(s->dev, s);
    ocl.Finish(s->q);
    if (s->last) ocl.ReleaseEvent(s->last);
    ocl.ReleaseCommandQueue(s->q);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->enq_mu);
    free(s);
}

hwrt_status ocl_stream_synchronize(hwrt_bstream *s)
{
    cl_int e = ocl.Finish(s->q);
    if (e != CL_SUCCESS)
        return ocl_err(e, "opencl device %d: clFinish", s->dev->ordinal);
    unsigned epoch;
    cl_event ev = last_retained(s, &epoch);
    if (!ev) return ocl_dev_fault(s->dev);
    /* clFinish can return while the last event's status is being published */
    cl_int we = ocl.WaitForEvents(1, &ev);   /* a failed command shows in the status below */
    hwrt_status st = ocl_event_status(s->dev, ev, epoch, "stream synchronize");
    /* the wait itself failed: an error, not NOT_READY (a synchronize never answers that;
     * the caller would wait again, for ever) */
    if (st == HWRT_ERROR_NOT_READY && we != CL_SUCCESS)
        st = ocl_err(we, "opencl device %d: clWaitForEvents in stream synchronize",
                     s->dev->ordinal);
    ocl.ReleaseEvent(ev);
    return st;
}

hwrt_status ocl_stream_query(hwrt_bstream *s)
{
    unsigned epoch;
    cl_event ev = last_retained(s, &epoch);
    if (!ev) return ocl_dev_fault(s->dev);
    hwrt_status st = ocl_event_status(s->dev, ev, epoch, "stream query");
    ocl.ReleaseEvent(ev);
    return st;
}

/* ---- host functions and cross-stream waits ---- */

/* Hold the stream behind a user event that the host thread completes after `after`
 * completed (and after fn ran). Later work on s waits for it. */
static hwrt_status hold_until(ocl_stream *s, cl_event after, hwrt_host_fn fn, void *arg)
{
    ocl_dev *d = s->dev;
    cl_int e;
    cl_event user = ocl.CreateUserEvent(d->ctx, &e);
    if (e != CL_SUCCESS)
        return ocl_err(e, "opencl device %d: clCreateUserEvent", d->ordinal);
    ocl_hostjob *j = calloc(1, sizeof *j);
    if (!j) {
        ocl.SetUserEventStatus(user, CL_COMPLETE);
        ocl.ReleaseEvent(user);
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "opencl: host out of memory for a job");
    }
    j->fn = fn;
    j->arg = arg;
    j->user = user;
    j->marker = after;
    cl_event barrier;
    e = ocl.EnqueueBarrierWithWaitList(s->q, 1, &user, &barrier);
    if (e != CL_SUCCESS) {
        ocl.SetUserEventStatus(user, CL_COMPLETE);
        ocl.ReleaseEvent(user);
        free(j);
        return ocl_err(e, "opencl device %d: clEnqueueBarrierWithWaitList", d->ordinal);
    }
    ocl_stream_track(s, barrier);
    hwrt_status st = ocl_host_after(d, after, j);
    if (st != HWRT_SUCCESS) {            /* release the stream rather than hang it */
        ocl.SetUserEventStatus(user, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
        ocl.ReleaseEvent(user);
        free(j);
    }
    return st;
}

static hwrt_status host_func_locked(ocl_stream *s, hwrt_host_fn fn, void *arg)
{
    cl_event marker;
    cl_int e = ocl.EnqueueMarkerWithWaitList(s->q, 0, NULL, &marker);
    if (e != CL_SUCCESS)
        return ocl_err(e, "opencl device %d: clEnqueueMarkerWithWaitList", s->dev->ordinal);
    hwrt_status st = hold_until(s, marker, fn, arg);
    if (st != HWRT_SUCCESS) ocl.ReleaseEvent(marker);
    return st;
}

hwrt_status ocl_host_func(hwrt_bstream *s, hwrt_host_fn fn, void *arg)
{
    pthread_mutex_lock(&s->enq_mu);
    hwrt_status st = host_func_locked(s, fn, arg);
    pthread_mutex_unlock(&s->enq_mu);
    return st;
}

static hwrt_status wait_event_locked(ocl_stream *s, hwrt_bevent *ev)
{
    pthread_mutex_lock(&ev->mu);
    cl_event m = ev->ev;
    if (m) ocl.RetainEvent(m);
    unsigned epoch = ev->epoch;
    pthread_mutex_unlock(&ev->mu);
    if (!m) return HWRT_SUCCESS;         /* never recorded: nothing to wait for */
    cl_int mst = CL_COMPLETE;
    ocl.GetEventInfo(m, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof mst, &mst, NULL);
    if (mst < 0 && epoch != atomic_load(&ev->dev->epoch)) {
        ocl.ReleaseEvent(m);             /* failed before a reset: acknowledged, done */
        return HWRT_SUCCESS;
    }
    if (ev->dev == s->dev) {
        cl_event b;
        cl_int e = ocl.EnqueueBarrierWithWaitList(s->q, 1, &m, &b);
        ocl.ReleaseEvent(m);
        if (e != CL_SUCCESS)
            return ocl_err(e, "opencl device %d: clEnqueueBarrierWithWaitList", s->dev->ordinal);
        ocl_stream_track(s, b);
        return HWRT_SUCCESS;
    }
    /* another device's context: its events cannot be waited on here, so a user event of
     * this context stands in and is completed when the foreign marker completes */
    hwrt_status st = hold_until(s, m, NULL, NULL);
    if (st != HWRT_SUCCESS) ocl.ReleaseEvent(m);
    return st;
}

hwrt_status ocl_stream_wait_event(hwrt_bstream *s, hwrt_bevent *ev)
{
    pthread_mutex_lock(&s->enq_mu);
    hwrt_status st = wait_event_locked(s, ev);
    pthread_mutex_unlock(&s->enq_mu);
    return st;
}

/* ---- copies and memsets ---- */

typedef struct { void *dst; const void *src; size_t bytes; } h2h_arg;

static void h2h_run(void *p)
{
    h2h_arg *a = p;
    memmove(a->dst, a->src, a->bytes);
    free(a);
}

static hwrt_status copy_d2d(ocl_stream *s, void *dst, const void *src, size_t bytes)
{
    ocl_dev *d = s->dev;
    cl_mem dm, sm;
    size_t doff, soff;
    HWI_TRY(ocl_resolve(d, dst, bytes, &dm, &doff));
    HWI_TRY(ocl_resolve(d, src, bytes, &sm, &soff));
    cl_event ev;
    cl_int e;
    if (dm == sm && doff < soff + bytes && soff < doff + bytes) {
        if (doff == soff) return HWRT_SUCCESS;
        /* overlapping ranges of one buffer (CL_MEM_COPY_OVERLAP): bounce through a
         * temporary buffer, released by OpenCL once both copies are done */
        cl_mem tmp = ocl.CreateBuffer(d->ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
        if (e != CL_SUCCESS)
            return ocl_err(e, "opencl device %d: temporary buffer for an overlapping copy of %zu "
                           "bytes", d->ordinal, bytes);
        e = ocl.EnqueueCopyBuffer(s->q, sm, tmp, soff, 0, bytes, 0, NULL, NULL);
        if (e == CL_SUCCESS)
            e = ocl.EnqueueCopyBuffer(s->q, tmp, dm, 0, doff, bytes, 0, NULL, &ev);
        ocl.ReleaseMemObject(tmp);
    } else {
        e = ocl.EnqueueCopyBuffer(s->q, sm, dm, soff, doff, bytes, 0, NULL, &ev);
    }
    if (e != CL_SUCCESS)
        return ocl_err(e, "opencl device %d: clEnqueueCopyBuffer of %zu bytes", d->ordinal, bytes);
    ocl_stream_track(s, ev);
    return HWRT_SUCCESS;
}

static hwrt_status memcpy_locked(ocl_stream *s, void *dst, const void *src, size_t bytes,
                                 hwrt_memcpy_kind kind, cl_event *out)
{
    ocl_dev *d = s->dev;
    cl_mem m;
    size_t off;
    cl_event ev;
    cl_int e;
    switch (kind) {
    case HWRT_MEMCPY_HOST_TO_DEVICE:
        HWI_TRY(ocl_resolve(d, dst, bytes, &m, &off));
        e = ocl.EnqueueWriteBuffer(s->q, m, CL_FALSE, off, bytes, src, 0, NULL, &ev);
        if (e != CL_SUCCESS)
            return ocl_err(e, "opencl device %d: clEnqueueWriteBuffer of %zu bytes", d->ordinal,
                           bytes);
        break;
    case HWRT_MEMCPY_DEVICE_TO_HOST:
        HWI_TRY(ocl_resolve(d, src, bytes, &m, &off));
        e = ocl.EnqueueReadBuffer(s->q, m, CL_FALSE, off, bytes, dst, 0, NULL, &ev);
        if (e != CL_SUCCESS)
            return ocl_err(e, "opencl device %d: clEnqueueReadBuffer of %zu bytes", d->ordinal,
                           bytes);
        break;
    case HWRT_MEMCPY_DEVICE_TO_DEVICE:
        return copy_d2d(s, dst, src, bytes);
    default: {                          /* host to host, in stream order */
        h2h_arg *a = malloc(sizeof *a);
        if (!a)
            return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "hwrt_memcpy_async: host out of memory");
        *a = (h2h_arg){dst, src, bytes};
        hwrt_status st = host_func_locked(s, h2h_run, a);
        if (st != HWRT_SUCCESS) free(a);
        return st;
    }
    }
    ocl.RetainEvent(ev);
    *out = ev;
    ocl_stream_track(s, ev);
    return HWRT_SUCCESS;
}

hwrt_status ocl_memcpy_async(hwrt_bstream *s, void *dst, const void *src, size_t bytes,
                             hwrt_memcpy_kind kind, int host_pinned)
{
    cl_event ev = NULL;
    pthread_mutex_lock(&s->enq_mu);
    hwrt_status st = memcpy_locked(s, dst, src, bytes, kind, &ev);
    pthread_mutex_unlock(&s->enq_mu);
    if (!ev) return st;
    /* pageable host memory: return once the host side has been consumed (H2D) or filled
     * (D2H), as CUDA and ACL do; waited for outside the lock, so that other threads can
     * still queue work and query the stream meanwhile */
    if (!host_pinned) {
        ocl.WaitForEvents(1, &ev);
        st = ocl_event_status(s->dev, ev, atomic_load(&s->dev->epoch), "hwrt_memcpy_async");
    }
    ocl.ReleaseEvent(ev);
    return st;
}

hwrt_status ocl_memset_async(hwrt_bstream *s, void *dptr, int value, size_t bytes)
{
    cl_mem m;
    size_t off;
    HWI_TRY(ocl_resolve(s->dev, dptr, bytes, &m, &off));
    cl_uchar pat = (cl_uchar)value;
    cl_event ev;
    pthread_mutex_lock(&s->enq_mu);
    cl_int e = ocl.EnqueueFillBuffer(s->q, m, &pat, 1, off, bytes, 0, NULL, &ev);
    if (e == CL_SUCCESS) ocl_stream_track(s, ev);
    pthread_mutex_unlock(&s->enq_mu);
    if (e != CL_SUCCESS)
        return ocl_err(e, "opencl device %d: clEnqueueFillBuffer of %zu bytes", s->dev->ordinal,
                       bytes);
    return HWRT_SUCCESS;
}
