/* Events: checked handles around backend events; record and wait go through dispatch so
 * graph capture and the profiler see them. */
#include "event.h"
#include "../runtime/handle.h"
#include "../base/status.h"
#include "../runtime/device_ops.h"

#include <stdlib.h>

hwrt_status hwi_event_resolve(hwrt_event h, hwi_event **out)
{
    hwi_event *e = hwi_handle_acquire(h, HWI_H_EVENT);
    if (!e)
        return hwi_err(HWRT_ERROR_INVALID_HANDLE, "event handle %p is not a live event "
                       "(destroyed, NULL, or not from hwrt_event_create)", (void *)h);
    *out = e;
    return HWRT_SUCCESS;
}

void hwi_event_put(hwi_event *e)
{
    if (e && !e->internal) hwi_handle_put(e->handle);
}

static void drop_event(void *obj)
{
    hwi_event *e = obj;
    hwi_dev_event_destroy(e->dev, e->be);   /* pending waits keep their reference */
    free(e);
}

/* The last reference went: the handle was destroyed and no call uses the event. */
static hwrt_status event_dtor(void *obj)
{
    drop_event(obj);
    return HWRT_SUCCESS;
}

/* Shutdown (after the streams were synchronized): events still alive become stale. */
static hwrt_status shutdown_events(void)
{
    if (hwi_runtime_active()) hwi_handle_drain(HWI_H_EVENT, drop_event);
    return HWRT_SUCCESS;
}

hwrt_status hwrt_event_create(hwrt_event *out, unsigned flags)
{
    if (!out)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_event_create: out is NULL");
    if (flags & ~(unsigned)HWRT_EVENT_DISABLE_TIMING)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_event_create: flags 0x%x are unknown; "
                       "use HWRT_EVENT_DEFAULT or HWRT_EVENT_DISABLE_TIMING", flags);
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_current(&d));
    hwi_event *e = calloc(1, sizeof *e);
    if (!e)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "hwrt_event_create: host out of memory");
    e->dev = d;
    e->device = d->id;
    e->flags = flags;
    hwrt_status st = hwi_dev_event_create(d, flags, &e->be);
    if (st != HWRT_SUCCESS) { free(e); return st; }
    hwi_handle_set_dtor(HWI_H_EVENT, event_dtor);
    e->handle = hwi_handle_new(HWI_H_EVENT, e);
    if (!e->handle) {
        hwi_dev_event_destroy(d, e->be);
        free(e);
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "hwrt_event_create: handle table full");
    }
    hwi_on_shutdown(35, shutdown_events);
    *out = e->handle;
    return HWRT_SUCCESS;
}

/* Later calls with h fail at once; a call using the event meanwhile finishes with it. */
hwrt_status hwrt_event_destroy(hwrt_event h)
{
    if (!hwi_handle_kill(h, HWI_H_EVENT, NULL))
        return hwi_err(HWRT_ERROR_INVALID_HANDLE, "hwrt_event_destroy(%p): not a live event "
                       "(already destroyed?)", (void *)h);
    return HWRT_SUCCESS;
}

hwrt_status hwrt_event_record(hwrt_event h, hwrt_stream sh)
{
    HWI_EVENT_REF(e);
    HWI_STREAM_REF(s);
    HWI_TRY(hwi_event_resolve(h, &e));
    HWI_TRY(hwi_stream_resolve(sh, &s));
    if (e->device != s->device)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_event_record: the event belongs to "
                       "%s but the stream to %s; create the event while that device "
                       "is current", hwi_device_label(e->device).s, hwi_device_label(s->device).s);
    hwi_work w = {.kind = HWI_WORK_EVENT_RECORD, .stream = s, .name = "EventRecord"};
    w.u.event.ev = e;
    HWI_TRY(hwi_dispatch(&w));
    e->recorded = 1;
    return HWRT_SUCCESS;
}

hwrt_status hwrt_stream_wait_event(hwrt_stream sh, hwrt_event h)
{
    HWI_EVENT_REF(e);
    HWI_STREAM_REF(s);
    HWI_TRY(hwi_stream_resolve(sh, &s));
    HWI_TRY(hwi_event_resolve(h, &e));
    hwi_work w = {.kind = HWI_WORK_EVENT_WAIT, .stream = s, .name = "EventWait"};
    w.u.event.ev = e;
    return hwi_dispatch(&w);
}

hwrt_status hwrt_event_query(hwrt_event h)
{
    HWI_EVENT_REF(e);
    HWI_TRY(hwi_event_resolve(h, &e));
    return hwi_dev_event_query(e->dev, e->be);
}

hwrt_status hwrt_event_synchronize(hwrt_event h)
{
    HWI_EVENT_REF(e);
    HWI_TRY(hwi_event_resolve(h, &e));
    HWI_TRY(hwi_host_sync_check("hwrt_event_synchronize", NULL));
    hwrt_status st = hwi_dev_event_synchronize(e->dev, e->be);
    hwi_host_sync_end("hwrt_event_synchronize", NULL, st);
    return st;
}

hwrt_status hwrt_event_elapsed_ms(float *ms, hwrt_event start, hwrt_event end)
{
    if (!ms)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_event_elapsed_ms: ms is NULL");
    HWI_EVENT_REF(a);
    HWI_EVENT_REF(b);
    HWI_TRY(hwi_event_resolve(start, &a));
    HWI_TRY(hwi_event_resolve(end, &b));
    if (!a->recorded || !b->recorded)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_event_elapsed_ms: the %s event was "
                       "never recorded; call hwrt_event_record on both first",
                       !a->recorded ? "start" : "end");
    /* what every backend would check alike; the backend then only measures */
    if ((a->flags | b->flags) & HWRT_EVENT_DISABLE_TIMING)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT,
                       "hwrt_event_elapsed_ms: an event was created with "
                       "HWRT_EVENT_DISABLE_TIMING; create both with HWRT_EVENT_DEFAULT");
    if (a->dev != b->dev)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_event_elapsed_ms: the events belong to "
                       "devices %s %d and %s %d; timestamps of different devices do not compare",
                       a->dev->props.backend, a->dev->ordinal, b->dev->props.backend, b->dev->ordinal);
    hwrt_status st = hwi_dev_event_elapsed_ms(a->dev, ms, a->be, b->be);
    if (st != HWRT_SUCCESS) return hwi_err_prefix(st, "hwrt_event_elapsed_ms");
    return HWRT_SUCCESS;
}
