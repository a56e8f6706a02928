/* hwrt public API — heterogeneous offload: run models larger than device memory.
 * Include <hwrt.h>, not this file.
 *
 * With memory_offload ON, tensors marked offloadable may live on the device, in host
 * memory (pinned when enable_pinned_mem) or in files under offload_path, and move on
 * demand:
 *  - an op on a non-resident tensor brings it back first, stream-ordered (the op's stream
 *    waits for the fetch on the H2D engine; the host does not block);
 *  - creating or fetching a tensor that would pass the device budget (max_device_memory,
 *    else the device's capacity) evicts idle offloadable tensors first — never one that
 *    queued work still uses — through the D2H engine, to host memory while
 *    offload_cpu_size allows, then to disk while offload_disk_size allows;
 *  - a tensor evicted unchanged since its last fetch costs no copy (its host copy is kept);
 *  - prefetch: hwrt_offload_prefetch() starts a fetch early; with auto_offload the runtime
 *    records the order tensors are used within a step (hwrt_offload_step() marks the
 *    boundary) and in later steps fetches ahead along that order while the bytes in
 *    flight stay within prefetch_depth times the order's mean tensor size, never pushing
 *    out a tensor needed sooner, and evicts the tensor whose next use is farthest away.
 *    A fetch may take the block of a victim still used by
 *    queued work (any size whose block holds it) in stream order, so the host does not
 *    wait; victim_waits in the statistics counts the times it had to. When the device
 *    holds less than the budget counts (the pool could not place a block within the
 *    budget: fragmented segments), room is made below what it was found to hold, so the
 *    pool's last resort, a device-wide synchronization, is not taken on every fetch.
 * Never wrong data: a tensor's location and clean state change only once the copy that
 * justifies it has completed; after a device fault the last good copy stays
 * authoritative, the fault surfaces at the synchronizing calls (HWRT_ERROR_DEVICE_FAULT),
 * and after hwrt_device_reset re-issued work sees the right data. The disk tier is one
 * nameless file in a private 0700 directory under offload_path (default /var/tmp), each
 * tensor's bytes checked by CRC-32C on read-back (HWRT_ERROR_IO on a mismatch).
 * hwrt_shutdown settles and frees every offloadable tensor still alive (their handles
 * become invalid) and removes the disk tier. See docs/offload.md.
 * The same settings come from hwrt_set_config keys and env HWRT_OFFLOAD_CONF. */
#ifndef HWRT_OFFLOAD_H
#define HWRT_OFFLOAD_H

#include "hwrt_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hwrt_offload_config {
    int enabled;                 /* memory_offload ON/OFF */
    int auto_offload;            /* learn the use order and prefetch/evict by it */
    size_t max_device_memory;    /* device budget for tensors; 0 = device capacity */
    size_t offload_cpu_size;     /* host tier budget; 0 = no host tier */
    size_t offload_disk_size;    /* disk tier budget; 0 = no disk tier */
    const char *offload_path;    /* directory for the disk tier (NULL = keep current) */
    int enable_pinned_mem;       /* host tier in page-locked memory */
    int prefetch_depth;          /* prefetch window in auto mode, in tensors of the learned
                                    order's mean size: bytes in flight (0..64) */
} hwrt_offload_config;

typedef struct hwrt_offload_stats {
    uint64_t evictions_to_host, evictions_to_disk, clean_evictions;
    uint64_t bytes_to_host, bytes_to_disk;            /* D2H and file writes */
    uint64_t fetches_from_host, fetches_from_disk;
    uint64_t bytes_from_host, bytes_from_disk;        /* H2D and file reads */
    double evict_ms, fetch_ms;                        /* host time spent in both */
    uint64_t prefetch_hits;      /* a prefetched tensor was already on the device */
    uint64_t prefetch_late;      /* prefetched but still in flight when needed */
    uint64_t prefetch_misses;    /* needed, not prefetched: fetched on demand */
    double stall_ms;             /* time work waited for fetches: device time a stream
                                    waited on a fetch, plus host time blocked in
                                    pageable fetches */
    size_t device_bytes, host_bytes, disk_bytes;      /* current use of each tier */
    size_t device_budget;
    uint64_t victim_waits;       /* times the host blocked until a victim's queued work
                                    was done (no victim could leave in stream order) */
    /* Fetches into the memory of a victim still used by queued work (stream-ordered):
     * such a fetch starts on the device only after the victim's last use, so its copy
     * overlaps the compute of the uses between that one and the fetched tensor's own
     * (its window, counted in uses of offloadable tensors). A window of 0 (the victim
     * used right before the fetched tensor) leaves the whole copy exposed: the compute
     * stream waits for all of it. */
    uint64_t fetches_after_victim, fetches_exposed;
    uint64_t fetch_window_uses;  /* sum of those fetches' windows */
} hwrt_offload_stats;

/* Apply a whole configuration (validated first: on error nothing changes).
 * Errors: INVALID_ARGUMENT naming the field (e.g. prefetch_depth out of range, an
 * offload_path that is not a writable directory or is longer than 511 bytes). */
HWRT_API hwrt_status hwrt_set_offload_config(const hwrt_offload_config *cfg);
/* The configuration in force; out->offload_path stays valid for the life of the process. */
HWRT_API hwrt_status hwrt_get_offload_config(hwrt_offload_config *out);

/* Let t be moved off the device (on = 1) or pin it there (on = 0; fetched if needed). */
HWRT_API hwrt_status hwrt_tensor_set_offloadable(hwrt_tensor t, int on);
/* Start bringing t to the device on the H2D engine; work later queued on s that uses t
 * waits for it. Non-blocking. */
HWRT_API hwrt_status hwrt_offload_prefetch(hwrt_tensor t, hwrt_stream s);
/* Move t off the device now (blocks until its data is safe in the host or disk tier).
 * Errors: DEVICE_BUSY if queued work still uses t, OUT_OF_MEMORY if every tier is full,
 * DEVICE_FAULT if the device has a sticky fault (t stays on the device), IO if the disk
 * tier cannot be written (errno text; t stays on the device). */
HWRT_API hwrt_status hwrt_offload_evict(hwrt_tensor t);
/* Iteration boundary: in auto mode, the first step records the use order, later steps
 * prefetch and evict by it. */
HWRT_API hwrt_status hwrt_offload_step(void);
/* Where is t now? 0 device, 1 host, 2 disk. */
HWRT_API hwrt_status hwrt_offload_location(hwrt_tensor t, int *where);
HWRT_API hwrt_status hwrt_offload_stats_get(hwrt_offload_stats *out);
HWRT_API hwrt_status hwrt_offload_reset_stats(void);

#ifdef __cplusplus
}
#endif
#endif /* HWRT_OFFLOAD_H */
