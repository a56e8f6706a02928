/* hwrt public API — copies, streams, events, host functions. Include <hwrt.h>.
 *
 * Work is asynchronous: a call that enqueues returns before the device has done it.
 * A stream is an in-order queue on one device; work on different streams may overlap
 * (each device has a compute engine and separate H2D and D2H copy engines). Order
 * across streams only with events. NULL as a stream means the current device's default
 * stream. */
#ifndef HWRT_EXEC_H
#define HWRT_EXEC_H

#include "hwrt_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hwrt_stream_s *hwrt_stream;
typedef struct hwrt_event_s *hwrt_event;

typedef enum hwrt_memcpy_kind {
    HWRT_MEMCPY_HOST_TO_HOST = 0,
    HWRT_MEMCPY_HOST_TO_DEVICE = 1,
    HWRT_MEMCPY_DEVICE_TO_HOST = 2,
    HWRT_MEMCPY_DEVICE_TO_DEVICE = 3,
    HWRT_MEMCPY_DEFAULT = 4          /* inferred from the pointers */
} hwrt_memcpy_kind;

/* Blocking copy on the default stream of the device owning the device side: returns
 * when the bytes have arrived. A kind that contradicts the pointers (a host pointer
 * given as device memory, a range past a block's end) is INVALID_ARGUMENT.
 * Errors: also NOT_PERMITTED during capture, DEVICE_FAULT. */
HWRT_API hwrt_status hwrt_memcpy(void *dst, const void *src, size_t bytes,
                                 hwrt_memcpy_kind kind);

/* Enqueue a copy on s. With pinned host memory (hwrt_host_alloc HWRT_HOST_PINNED) the
 * call returns at once; with pageable host memory it returns once the source has been
 * consumed (as CUDA and ACL do). Device-to-device and device sides never block. */
HWRT_API hwrt_status hwrt_memcpy_async(void *dst, const void *src, size_t bytes,
                                       hwrt_memcpy_kind kind, hwrt_stream s);

/* Enqueue setting bytes of device memory to (unsigned char)value. */
HWRT_API hwrt_status hwrt_memset_async(void *dptr, int value, size_t bytes, hwrt_stream s);

/* Streams. priority: 0 normal, <0 higher (accepted, recorded; sim engines are FIFO). */
HWRT_API hwrt_status hwrt_stream_create(hwrt_stream *s, int priority);
/* Waits for the stream's queued work, then destroys it. The default stream cannot be
 * destroyed (INVALID_HANDLE). */
HWRT_API hwrt_status hwrt_stream_destroy(hwrt_stream s);
/* Block until all work queued on s so far has finished (the seed's synchronize_stream).
 * Short waits spin, longer ones sleep. Errors: DEVICE_FAULT, NOT_PERMITTED in capture. */
HWRT_API hwrt_status hwrt_stream_synchronize(hwrt_stream s);
/* HWRT_SUCCESS when s is idle, HWRT_ERROR_NOT_READY while work is pending. */
HWRT_API hwrt_status hwrt_stream_query(hwrt_stream s);
/* Work queued on s after this call waits until e's last record has completed. */
HWRT_API hwrt_status hwrt_stream_wait_event(hwrt_stream s, hwrt_event e);
/* Device ordinal of stream s. */
HWRT_API hwrt_status hwrt_stream_device(hwrt_stream s, int *device_id);
/* The default stream of the current device, as a handle (never NULL on success). */
HWRT_API hwrt_status hwrt_stream_default(hwrt_stream *s);

/* Run fn(arg) on a host thread once work queued on s before it has finished; work
 * queued after it waits for fn to return. fn must not call hwrt synchronization
 * functions (it would wait for itself): from inside fn they return
 * HWRT_ERROR_NOT_PERMITTED. */
typedef void (*hwrt_host_fn)(void *arg);
HWRT_API hwrt_status hwrt_launch_host_func(hwrt_stream s, hwrt_host_fn fn, void *arg);

/* Events. Flags: HWRT_EVENT_DEFAULT (with timing) or HWRT_EVENT_DISABLE_TIMING. */
enum { HWRT_EVENT_DEFAULT = 0, HWRT_EVENT_DISABLE_TIMING = 1 };
HWRT_API hwrt_status hwrt_event_create(hwrt_event *e, unsigned flags);
/* Capture the work queued on s so far; e completes when that work has. */
HWRT_API hwrt_status hwrt_event_record(hwrt_event e, hwrt_stream s);
/* SUCCESS when complete (or never recorded), NOT_READY otherwise. */
HWRT_API hwrt_status hwrt_event_query(hwrt_event e);
HWRT_API hwrt_status hwrt_event_synchronize(hwrt_event e);
/* Device time between two completed records, in ms (device timestamps).
 * Errors: NOT_READY if either is pending, INVALID_ARGUMENT if either was never recorded
 * or was created with HWRT_EVENT_DISABLE_TIMING. */
HWRT_API hwrt_status hwrt_event_elapsed_ms(float *ms, hwrt_event start, hwrt_event end);
HWRT_API hwrt_status hwrt_event_destroy(hwrt_event e);

#ifdef __cplusplus
}
#endif
#endif /* HWRT_EXEC_H */
