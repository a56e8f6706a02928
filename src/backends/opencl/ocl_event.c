/* Events: a record is a marker (clEnqueueMarkerWithWaitList) on the stream's in-order
 * queue; the event keeps the marker of its last record. Timestamps are the marker's
 * CL_PROFILING_COMMAND_END, moved onto the host's CLOCK_MONOTONIC by the offset measured
 * when the device was opened. */
#include "ocl.h"
#include "../../base/status.h"

#include <stdlib.h>

hwrt_status ocl_event_create(hwrt_bdev *d, unsigned flags, hwrt_bevent **out)
{
    ocl_event *e = calloc(1, sizeof *e);
    if (!e)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "creating an event: host out of memory");
    e->dev = d;
    e->flags = flags;
    pthread_mutex_init(&e->mu, NULL);
    *out = e;
    return HWRT_SUCCESS;
}

void ocl_event_destroy(hwrt_bevent *e)
{
    if (e->ev) ocl.ReleaseEvent(e->ev);   /* queued waits hold their own reference */
    pthread_mutex_destroy(&e->mu);
    free(e);
}

hwrt_status ocl_event_record(hwrt_bevent *e, hwrt_bstream *s)
{
    cl_event m;
    pthread_mutex_lock(&s->enq_mu);
    cl_int err = ocl.EnqueueMarkerWithWaitList(s->q, 0, NULL, &m);
    if (err != CL_SUCCESS) {
        pthread_mutex_unlock(&s->enq_mu);
        return ocl_err(err, "opencl device %d: recording an event (clEnqueueMarkerWithWaitList)",
                       s->dev->ordinal);
    }
    ocl.RetainEvent(m);                     /* one reference for the stream, one for e */
    pthread_mutex_lock(&e->mu);
    cl_event old = e->ev;
    e->ev = m;
    e->epoch = atomic_load(&e->dev->epoch);
    pthread_mutex_unlock(&e->mu);
    ocl_stream_track(s, m);
    pthread_mutex_unlock(&s->enq_mu);
    if (old) ocl.ReleaseEvent(old);
    return HWRT_SUCCESS;
}

static cl_event current(hwrt_bevent *e, unsigned *epoch)
{
    pthread_mutex_lock(&e->mu);
    cl_event m = e->ev;
    if (m) ocl.RetainEvent(m);
    *epoch = e->epoch;
    pthread_mutex_unlock(&e->mu);
    return m;
}

hwrt_status ocl_event_query(hwrt_bevent *e)
{
    unsigned epoch;
    cl_event m = current(e, &epoch);
    if (!m) return HWRT_SUCCESS;
    hwrt_status st = ocl_event_status(e->dev, m, epoch, "hwrt_event_query");
    ocl.ReleaseEvent(m);
    return st;
}

hwrt_status ocl_event_synchronize(hwrt_bevent *e)
{
    unsigned epoch;
    cl_event m = current(e, &epoch);
    if (!m) return HWRT_SUCCESS;
    cl_int we = ocl.WaitForEvents(1, &m);  /* a failed command shows in the status below */
    hwrt_status st = ocl_event_status(e->dev, m, epoch, "hwrt_event_synchronize");
    if (st == HWRT_ERROR_NOT_READY && we != CL_SUCCESS)   /* the wait itself failed */
        st = ocl_err(we, "opencl device %d: clWaitForEvents in hwrt_event_synchronize",
                     e->dev->ordinal);
    ocl.ReleaseEvent(m);
    return st;
}

hwrt_status ocl_event_timestamp_ns(hwrt_bevent *e, uint64_t *ns)
{
    unsigned epoch;
    cl_event m = current(e, &epoch);
    if (!m)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "the event was never recorded");
    hwrt_status st = ocl_event_status(e->dev, m, epoch, "event timestamp");
    cl_ulong end = 0;
    if (st == HWRT_ERROR_NOT_READY)
        st = hwi_err(HWRT_ERROR_NOT_READY, "the event's last record has not been reached yet");
    if (st == HWRT_SUCCESS) {
        cl_int err = ocl.GetEventProfilingInfo(m, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL);
        if (err != CL_SUCCESS)
            st = ocl_err(err, "opencl device %d: reading an event's timestamp "
                         "(CL_PROFILING_COMMAND_END)", e->dev->ordinal);
    }
    ocl.ReleaseEvent(m);
    if (st == HWRT_SUCCESS)
        *ns = (uint64_t)((int64_t)end - e->dev->ts_offset);
    return st;
}
