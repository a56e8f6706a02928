/* Streams as the layers above the backend see them: a checked public handle around a
 * backend stream; each device keeps its default stream and live streams (exec's part of
 * the device, stream.c). Internal `int device` arguments are process-wide ids. */
#ifndef HWI_STREAM_H
#define HWI_STREAM_H

#include "../runtime/runtime.h"

typedef struct hwi_stream {
    hwrt_stream handle;
    hwi_device *dev;             /* the device the stream belongs to */
    int device;                  /* dev->id (the process-wide id, runtime.h) */
    struct dev_streams *owner;   /* the device's list it is on (NULL once off it) */
    hwrt_bstream *bs;
    int priority;
    int is_default;
    void *capture;               /* graph being captured on this stream (NULL: eager) */
    struct host_call *host_calls; /* host functions queued, not yet run (dispatch.c) */
} hwi_stream;

/* NULL -> the current device's default stream; else the live stream behind s. The
 * stream comes pinned (runtime/handle.h): a concurrent hwrt_stream_destroy cannot free it
 * before the caller's hwi_stream_put. */
hwrt_status hwi_stream_resolve(hwrt_stream s, hwi_stream **out);
/* The default stream of an open device (created on first use), pinned. */
hwrt_status hwi_stream_default(int device, hwi_stream **out);
/* h if given (pinned, as hwi_stream_resolve), else device's default stream (pinned). */
hwrt_status hwi_stream_resolve_on(hwrt_stream h, int device, hwi_stream **out);
/* Drop the pin of a resolved stream (NULL: nothing). */
void hwi_stream_put(hwi_stream *s);
static inline void hwi_stream_unpin(hwi_stream **s) { hwi_stream_put(*s); }
/* A local that holds a resolved stream and puts it when it goes out of scope. */
#define HWI_STREAM_REF(v) hwi_stream *v __attribute__((cleanup(hwi_stream_unpin))) = NULL
/* A new non-default stream on device (for internal engines such as offload); the
 * caller owns its handle's reference (not a pin). */
hwrt_status hwi_stream_create_on(int device, hwi_stream **out);
/* Synchronize every live stream of device (checked against capture first):
 * hwi_device_synchronize of that device. */
hwrt_status hwi_streams_sync_device(int device, const char *api);
/* Host-blocking synchronize of one stream, after the capture check. */
hwrt_status hwi_stream_sync(hwi_stream *s, const char *api);

#endif
