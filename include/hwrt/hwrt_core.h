/* hwrt public API — status codes, error text, version, configuration, shutdown.
 * Include <hwrt.h>, not this file. */
#ifndef HWRT_CORE_H
#define HWRT_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define HWRT_API __attribute__((visibility("default")))
#else
#define HWRT_API
#endif

/* Result of every fallible call. Stable numeric values. */
typedef enum hwrt_status {
    HWRT_SUCCESS = 0,
    HWRT_ERROR_INVALID_ARGUMENT = 1,  /* a NULL output, a bad size, shape, dtype, kind or key */
    HWRT_ERROR_INVALID_DEVICE = 2,    /* ordinal out of range, unknown backend name */
    HWRT_ERROR_NO_DEVICE = 3,         /* the backend works but has no device */
    HWRT_ERROR_UNAVAILABLE = 4,       /* driver or hardware absent (reason in the error text) */
    HWRT_ERROR_OUT_OF_MEMORY = 5,     /* device memory (breakdown in the error text) */
    HWRT_ERROR_HOST_OUT_OF_MEMORY = 6,
    HWRT_ERROR_NOT_READY = 7,         /* query: work still pending (not a failure) */
    HWRT_ERROR_INVALID_HANDLE = 8,    /* NULL, destroyed or foreign handle */
    HWRT_ERROR_NOT_SUPPORTED = 9,     /* this backend cannot do it (reason in the error text) */
    HWRT_ERROR_NOT_PERMITTED = 10,    /* e.g. a host sync during graph capture */
    HWRT_ERROR_DEVICE_BUSY = 11,      /* device held exclusively by another process */
    HWRT_ERROR_DEVICE_FAULT = 12,     /* sticky device error: reset the device */
    HWRT_ERROR_DIST = 13,             /* a distributed peer failed or timed out */
    HWRT_ERROR_IO = 14,               /* a file could not be read or written */
    HWRT_ERROR_INTERNAL = 15          /* a bug in hwrt; the text says where */
} hwrt_status;

/* Name of a status ("HWRT_ERROR_OUT_OF_MEMORY"); never NULL. */
HWRT_API const char *hwrt_status_name(hwrt_status status);

/* The calling thread's last error sentence ("" when the last failing call set none).
 * Thread-local; valid until this thread's next hwrt call. */
HWRT_API const char *hwrt_last_error(void);

/* Version of the libhwrt actually loaded, "MAJOR.MINOR.PATCH" (the headers' own is
 * HWRT_VERSION_STRING and HWRT_VERSION_MAJOR/MINOR/PATCH, hwrt_version.h). */
HWRT_API const char *hwrt_version(void);

/* Set a runtime option by key (thread-safe). Keys and accepted values:
 *   allocator:   max_device_memory (size, "24GB"; 0 = no cap), max_split_size (size),
 *                expandable_segments (bool), garbage_collection_threshold (0..1),
 *                record_alloc_sites (bool), thread_cache (bool: per-thread cache of
 *                small blocks, default on), pinned_pool (bool: cache pinned host
 *                buffers, default on), roundup_power2_divisions (0..64: round
 *                requests to that many steps between powers of two; 0 = off)
 *   offload:     memory_offload (ON/OFF), auto_offload (bool), offload_cpu_size (size),
 *                offload_disk_size (size), offload_path (path), enable_pinned_mem (bool),
 *                prefetch_depth (int)
 *   execution:   launch_blocking (bool), check_sync (bool), log_level (off, error, warn, info,
 *                debug, trace or 0..5)
 *   distributed: dist_timeout (seconds a collective may wait for its peers before it
 *                returns HWRT_ERROR_DIST; default 300; env HWRT_DIST_TIMEOUT too),
 *                dist_force_staging (bool: copy through pinned host buffers even when
 *                the backend's device memory is host-addressable, as on sim)
 * Sizes accept bytes or a number with B/KB/MB/GB/TB (binary multiples, "1.5GB" too).
 * Booleans accept 1/0, true/false, on/off, yes/no (any case).
 * The same keys come from the environment: HWRT_ALLOC_CONF and HWRT_OFFLOAD_CONF
 * ("key:value,key:value"), read once at first use.
 * Errors: INVALID_ARGUMENT for an unknown key or a malformed value; the sentence names
 * the key, the value and the accepted form. The old value stays in force. */
HWRT_API hwrt_status hwrt_set_config(const char *key, const char *value);

/* Read a key's current value as text into buf (e.g. "25769803776" for sizes).
 * Errors: INVALID_ARGUMENT for an unknown key, NULL buf or a buffer too small. */
HWRT_API hwrt_status hwrt_get_config(const char *key, char *buf, size_t len);

/* Synchronize every open device, report leaks (live allocations with tag, size and
 * site; to stderr at HWRT_LOG_LEVEL >= 1) and release every resource hwrt holds.
 * Returns the first error met while synchronizing (e.g. a sticky DEVICE_FAULT), else
 * HWRT_SUCCESS. After shutdown the library can be used again from scratch (a new backend
 * may be chosen). Not to be called while other threads use hwrt. */
HWRT_API hwrt_status hwrt_shutdown(void);

#ifdef __cplusplus
}
#endif
#endif /* HWRT_CORE_H */
