/* Streams as the layers above the backend see them: a checked public handle around a
 * backend stream, the per-device default stream, and the list of live streams that
 * device-wide synchronization walks. */
#ifndef HWI_STREAM_H
#define HWI_STREAM_H

#include "../core/runtime.h"

typedef struct hwi_stream {
    hwrt_stream handle;
    int device;
    hwrt_bstream *bs;
    int priority;
    int is_default;
    void *capture;               /* graph being captured on this stream (NULL: eager) */
} hwi_stream;

/* NULL -> the current device's default stream; else the live stream behind s. */
hwrt_status hwi_stream_resolve(hwrt_stream s, hwi_stream **out);
/* The default stream of an open device (created on first use). */
hwrt_status hwi_stream_default(int device, hwi_stream **out);
/* A new non-default stream on device (for internal engines such as offload). */
hwrt_status hwi_stream_create_on(int device, hwi_stream **out);
/* Synchronize every live stream of device (checked against capture first). */
hwrt_status hwi_streams_sync_device(int device, const char *api);
/* Host-blocking synchronize of one stream, after the capture check. */
hwrt_status hwi_stream_sync(hwi_stream *s, const char *api);

#endif
