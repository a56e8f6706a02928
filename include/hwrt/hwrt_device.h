/* hwrt public API — backends and devices. Include <hwrt.h>, not this file.
 *
 * Device ids. Each thread has its own current device, one device of one backend ("sim",
 * "opencl", "cuda", "ascend"), set with hwrt_set_device(backend, id) as in CUDA and ACL.
 * A process may use several backends at once: one thread on ("sim", 0), another on
 * ("opencl", 0), each device with its own memory pool, streams and events. A device id
 * is an ordinal within a backend, and every call that takes or returns one (props,
 * memory figures, reset, hwrt_stream_device, hwrt_tensor_device) means the calling
 * thread's backend. A thread that never called hwrt_set_device is on device 0 of the
 * process's first backend (the first one selected, by a hwrt_set_device or by "auto" on
 * first use). Streams, events, tensors and device pointers belong to their device:
 * handing one to a thread on another device is allowed, using it with another device's
 * stream is an error, as with two devices of one backend. hwrt_shutdown() ends every
 * backend. */
#ifndef HWRT_DEVICE_H
#define HWRT_DEVICE_H

#include "hwrt_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hwrt_device_props {
    int device_id;
    char name[128];          /* e.g. "hwrt simulated NPU 0" */
    char backend[16];        /* "sim", "opencl", ... */
    size_t total_memory;     /* bytes of device memory */
    int compute_units;
    int copy_engines;        /* independent DMA engines (sim: 2, H2D and D2H) */
    int simulated;           /* 1 for the sim backend: figures are modelled */
    double link_gbps;        /* modelled host link bandwidth, 0 = unthrottled/unknown */
} hwrt_device_props;

typedef struct hwrt_backend_desc {
    char name[16];
    int available;           /* 1 when the driver loaded and probing worked */
    int device_count;        /* 0 when unavailable */
    char reason[256];        /* why not available ("" when available) */
} hwrt_backend_desc;

/* Probe a backend without selecting it. backend: "sim", "opencl", "cuda", "ascend".
 * Never fails for a missing driver: out->available = 0 and out->reason say why.
 * Errors: INVALID_DEVICE for an unknown backend name; INVALID_ARGUMENT for NULL out. */
HWRT_API hwrt_status hwrt_backend_info(const char *backend, hwrt_backend_desc *out);

/* Make device_id of backend the calling thread's current device, opening it on first
 * use. backend: a name above, or "auto"/NULL (the calling thread's backend; when no
 * backend is in use yet, env HWRT_BACKEND, else the first backend with devices). A
 * backend other than those in use is added (the process then uses both); other threads
 * keep their devices. A failed call changes nothing.
 * Errors: INVALID_DEVICE (unknown backend, or ordinal out of range: the sentence names
 * the device count), UNAVAILABLE (driver absent: the reason), DEVICE_BUSY. */
HWRT_API hwrt_status hwrt_set_device(const char *backend, int device_id);

/* The calling thread's current device ordinal (within its backend). */
HWRT_API hwrt_status hwrt_get_device(int *device_id);

/* Number of devices of a backend ("auto"/NULL = the calling thread's, or the default).
 * An absent driver gives *count = 0 and HWRT_SUCCESS; hwrt_backend_info says why. */
HWRT_API hwrt_status hwrt_device_count(const char *backend, int *count);

/* Properties of a device of the calling thread's backend (chosen as by "auto" if none
 * yet). */
HWRT_API hwrt_status hwrt_get_device_props(int device_id, hwrt_device_props *out);

/* Name of the calling thread's backend ("" before any backend was chosen). */
HWRT_API const char *hwrt_current_backend(void);

/* Block until all work on every stream of the current device has finished.
 * Errors: DEVICE_FAULT when a kernel faulted (sticky), NOT_PERMITTED during capture. */
HWRT_API hwrt_status hwrt_device_synchronize(void);

/* Clear a sticky device fault on device_id after synchronizing it, as a device reset
 * does on real hardware (device memory contents survive in sim). */
HWRT_API hwrt_status hwrt_device_reset(int device_id);

#ifdef __cplusplus
}
#endif
#endif /* HWRT_DEVICE_H */
