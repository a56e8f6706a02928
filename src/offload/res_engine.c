/* The residency manager's streams on each device (offload's part of the device) and its
 * events, recorded and waited for through the dispatch point. */
#include "res_internal.h"
#include "../runtime/device_ops.h"
#include "../runtime/handle.h"
#include "../base/status.h"
#include "../exec/dispatch.h"

#include <stdlib.h>

/* The manager's streams on a device: offload's part of the device (device.h), made on
 * first use (under MGR.mu), released when the device closes. */
typedef struct res_engine {
    hwi_stream *evict, *fetch;
} res_engine;

static hwrt_status close_engine(hwi_device *d, void *part)
{
    (void)d;
    res_engine *e = part;
    hwrt_status first = HWRT_SUCCESS, st = HWRT_SUCCESS;
    /* ours is the handle's reference: the stream goes with it (its work finished first) */
    if (e->evict && hwi_handle_kill(e->evict->handle, HWI_H_STREAM, &st)) first = st;
    st = HWRT_SUCCESS;
    if (e->fetch && hwi_handle_kill(e->fetch->handle, HWI_H_STREAM, &st) && first == HWRT_SUCCESS)
        first = st;
    free(e);
    return first;
}

static const hwi_dev_part_ops engine_part = {close_engine, NULL};

static res_engine *engine_of(int device)
{
    hwi_device *d = hwi_device_if_open(device);
    return d ? hwi_device_part(d, HWI_PART_OFFLOAD) : NULL;
}

hwrt_status hwi_res_engine_streams(int device)
{
    if (engine_of(device))
        return HWRT_SUCCESS;
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_get(device, &d));
    res_engine *e = calloc(1, sizeof *e);
    if (!e)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "offload: host out of memory");
    hwrt_status st = hwi_stream_create_on(device, &e->evict);
    if (st == HWRT_SUCCESS) st = hwi_stream_create_on(device, &e->fetch);
    if (st == HWRT_SUCCESS && hwi_device_attach(d, HWI_PART_OFFLOAD, e, &engine_part) == e)
        return HWRT_SUCCESS;
    hwrt_status ignored = HWRT_SUCCESS;
    if (e->evict) hwi_handle_kill(e->evict->handle, HWI_H_STREAM, &ignored);
    if (e->fetch) hwi_handle_kill(e->fetch->handle, HWI_H_STREAM, &ignored);
    free(e);
    return st;                     /* SUCCESS: another attach won (callers hold MGR.mu) */
}

hwi_stream *hwi_res_evict_stream(int device) { return engine_of(device)->evict; }
hwi_stream *hwi_res_fetch_stream(int device) { return engine_of(device)->fetch; }

/* The device a tensor's events belong to (open while the tensor lives). */
const hwi_device *hwi_res_tdev(const hwi_tensor *t) { return hwi_device_if_open(t->device); }

hwrt_status hwi_res_event(hwi_event *view, hwrt_bevent *be, hwi_stream *s, int record)
{
    view->be = be;
    view->handle = (hwrt_event)(void *)view;  /* a key unique to this event */
    view->dev = s->dev;
    view->device = s->device;
    view->internal = 1;
    hwi_work w = {.kind = record ? HWI_WORK_EVENT_RECORD : HWI_WORK_EVENT_WAIT, .stream = s,
                  .name = record ? "OffloadEventRecord" : "OffloadEventWait"};
    w.u.event.ev = view;
    return hwi_dispatch(&w);
}

hwrt_status hwi_res_new_event(int device, hwrt_bevent **out)
{
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_get(device, &d));
    return hwi_dev_event_create(d, HWRT_EVENT_DISABLE_TIMING, out);
}

int hwi_res_reached(const hwi_device *d, hwrt_bevent *e)
{
    return hwi_dev_event_query(d, e) != HWRT_ERROR_NOT_READY;
}
