/* Ascend events: timing, and device timestamps calibrated to the host clock.
 *
 * aclrtEventGetTimestamp (newer 8.x) gives the device time of a completed record in
 * microseconds, since an unspecified epoch: the offset to CLOCK_MONOTONIC is taken by
 * recording the reference event on the idle internal stream between two host clock reads
 * (the device reached it in between; the midpoint is used). Without it, timestamps are
 * the reference's host time plus aclrtEventElapsedTime from it, re-anchored beyond 10 s
 * since the float milliseconds lose resolution. */
#include "ascend_internal.h"
#include "../../base/status.h"

#include <stdlib.h>

/* Caller holds ts_mu, or owns d alone (open). */
hwrt_status asc_anchor(asc_dev *d)
{
    uint64_t t0 = asc_now_ns();
    hacl_error r = hacl.RecordEvent(d->ref, d->aux);
    if (r == HACL_SUCCESS) r = hacl.SynchronizeEvent(d->ref);
    if (r != HACL_SUCCESS)
        return asc_err(d, r, "ascend device %d: recording the timestamp reference", d->ordinal);
    d->ref_ns = t0 + (asc_now_ns() - t0) / 2;
    uint64_t us = 0;
    if (hacl.EventGetTimestamp && hacl.EventGetTimestamp(d->ref, &us) == HACL_SUCCESS)
        d->ts_offset_ns = (int64_t)d->ref_ns - (int64_t)(us * 1000u);
    return HWRT_SUCCESS;
}

/* Ex events where the runtime has them (reusable, no count limit); the plain ones, which
 * time by default, otherwise or when the driver refuses Ex (207000). */
hwrt_status asc_event_create(hwrt_bdev *d, unsigned flags, hwrt_bevent **out)
{
    HWI_TRY(asc_enter(d));
    asc_event *e = calloc(1, sizeof *e);
    if (!e) return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "creating an event: host out of memory");
    hacl_error r = HACL_ERROR_RT_FEATURE_NOT_SUPPORT;
    if (hacl.CreateEventExWithFlag) {
        uint32_t f = (flags & HWRT_EVENT_DISABLE_TIMING) ? HACL_EVENT_SYNC
                                                         : HACL_EVENT_SYNC | HACL_EVENT_TIME_LINE;
        r = hacl.CreateEventExWithFlag(&e->e, f);
    }
    if (r == HACL_ERROR_RT_FEATURE_NOT_SUPPORT) r = hacl.CreateEvent(&e->e);
    if (r != HACL_SUCCESS) {
        free(e);
        return asc_err(d, r, "ascend device %d: aclrtCreateEvent", d->ordinal);
    }
    e->dev = d;
    e->flags = flags;
    *out = e;
    return HWRT_SUCCESS;
}

void asc_event_destroy(hwrt_bevent *e)
{
    if (asc_thread_enter(e->dev) == HWRT_SUCCESS) hacl.DestroyEvent(e->e);
    free(e);
}

hwrt_status asc_event_record(hwrt_bevent *e, hwrt_bstream *s)
{
    HWI_TRY(asc_enter(s->dev));
    hacl_error r = hacl.RecordEvent(e->e, s->s);
    if (r != HACL_SUCCESS)
        return asc_err(s->dev, r, "ascend device %d: aclrtRecordEvent", s->dev->ordinal);
    return HWRT_SUCCESS;
}

hwrt_status asc_event_query(hwrt_bevent *e)
{
    HWI_TRY(asc_enter(e->dev));
    hacl_event_status st = HACL_EVENT_RECORDED_STATUS_NOT_READY;
    hacl_error r = hacl.QueryEventStatus(e->e, &st);
    if (r != HACL_SUCCESS)
        return asc_err(e->dev, r, "ascend device %d: aclrtQueryEventStatus", e->dev->ordinal);
    return st == HACL_EVENT_RECORDED_STATUS_COMPLETE ? HWRT_SUCCESS : HWRT_ERROR_NOT_READY;
}

hwrt_status asc_event_synchronize(hwrt_bevent *e)
{
    HWI_TRY(asc_enter(e->dev));
    hacl_error r = hacl.SynchronizeEvent(e->e);
    if (r != HACL_SUCCESS && !asc_overflow(r))
        return asc_err(e->dev, r, "ascend device %d: aclrtSynchronizeEvent", e->dev->ordinal);
    return asc_dev_fault(e->dev);
}

/* ElapsedTime needs both records complete (107006 otherwise): NOT_READY until then. */
static hwrt_status elapsed(asc_dev *d, float *ms, hacl_event a, hacl_event b)
{
    hacl_event_status sa = HACL_EVENT_RECORDED_STATUS_NOT_READY, sb = sa;
    hacl_error r = hacl.QueryEventStatus(a, &sa);
    if (r == HACL_SUCCESS) r = hacl.QueryEventStatus(b, &sb);
    if (r == HACL_SUCCESS && (sa != HACL_EVENT_RECORDED_STATUS_COMPLETE ||
                              sb != HACL_EVENT_RECORDED_STATUS_COMPLETE))
        return HWRT_ERROR_NOT_READY;
    if (r == HACL_SUCCESS) r = hacl.EventElapsedTime(ms, a, b);
    if (r != HACL_SUCCESS)
        return asc_err(d, r, "ascend device %d: aclrtEventElapsedTime", d->ordinal);
    return HWRT_SUCCESS;
}

hwrt_status asc_event_elapsed_ms(float *ms, hwrt_bevent *start, hwrt_bevent *end)
{
    HWI_TRY(asc_enter(start->dev));
    return elapsed(start->dev, ms, start->e, end->e);
}

hwrt_status asc_event_timestamp_ns(hwrt_bevent *e, uint64_t *ns)
{
    asc_dev *d = e->dev;
    if (e->flags & HWRT_EVENT_DISABLE_TIMING)
        return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "the event was created with "
                       "HWRT_EVENT_DISABLE_TIMING: it has no timestamp");
    HWI_TRY(asc_enter(d));
    pthread_mutex_lock(&d->ts_mu);
    hwrt_status st = HWRT_SUCCESS;
    uint64_t us = 0;
    if (hacl.EventGetTimestamp) {
        hacl_event_status es = HACL_EVENT_RECORDED_STATUS_NOT_READY;
        hacl_error r = hacl.QueryEventStatus(e->e, &es);
        if (r == HACL_SUCCESS && es != HACL_EVENT_RECORDED_STATUS_COMPLETE)
            st = HWRT_ERROR_NOT_READY;
        else if (r == HACL_SUCCESS && (r = hacl.EventGetTimestamp(e->e, &us)) == HACL_SUCCESS) {
            int64_t t = (int64_t)(us * 1000u) + d->ts_offset_ns;
            *ns = t > 0 ? (uint64_t)t : 0;
        }
        if (r != HACL_SUCCESS)
            st = asc_err(d, r, "ascend device %d: aclrtEventGetTimestamp", d->ordinal);
        pthread_mutex_unlock(&d->ts_mu);
        return st;
    }
    float ms = 0;
    st = elapsed(d, &ms, d->ref, e->e);
    if (st == HWRT_ERROR_INTERNAL && hacl.EventElapsedTime(&ms, e->e, d->ref) == HACL_SUCCESS) {
        ms = -ms;                    /* recorded before the reference (107007 reversed) */
        st = HWRT_SUCCESS;
    }
    if (st == HWRT_SUCCESS && (ms > 1e4f || ms < -1e4f)) {
        st = asc_anchor(d);
        if (st == HWRT_SUCCESS) st = elapsed(d, &ms, d->ref, e->e);
    }
    if (st == HWRT_SUCCESS) {
        int64_t t = (int64_t)d->ref_ns + (int64_t)((double)ms * 1e6);
        *ns = t > 0 ? (uint64_t)t : 0;
    }
    pthread_mutex_unlock(&d->ts_mu);
    return st;
}
