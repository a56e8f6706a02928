/* hwrt public API — device and host memory. Include <hwrt.h>, not this file.
 *
 * Device memory comes from a caching pool per device: hwrt_free() keeps the block for
 * reuse (figures: allocated drops, reserved does not), hwrt_empty_cache() hands cached
 * segments back to the device (reserved and device-wide used drop). */
#ifndef HWRT_MEMORY_H
#define HWRT_MEMORY_H

#include "hwrt_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hwrt_stream_s *hwrt_stream;   /* defined in hwrt_exec.h */

/* Device-memory figures, in bytes. */
typedef struct hwrt_memory_info {
    size_t total;            /* device capacity */
    size_t free;             /* device-wide free, as the driver reports it */
    size_t used;             /* device-wide used (what a system monitor shows): pool
                                reserved + overhead (+ other processes where known) */
    size_t allocated;        /* bytes in live blocks handed out by hwrt */
    size_t reserved;         /* bytes the pool holds from the device (allocated + cached) */
    size_t peak_allocated;   /* since start or hwrt_reset_peak_memory_stats */
    size_t peak_reserved;
    size_t overhead;         /* context, driver, communication buffers of this process */
} hwrt_memory_info;

/* A counter as PyTorch's memory_stats reports them. */
typedef struct hwrt_stat {
    int64_t current, peak, allocated, freed;
} hwrt_stat;

typedef struct hwrt_mem_stats {   /* (a type cannot share the function's name in C) */
    hwrt_stat allocation;            /* number of live blocks */
    hwrt_stat segment;               /* device segments held */
    hwrt_stat active;                /* blocks in use or awaiting stream completion */
    hwrt_stat inactive_split;        /* free blocks that are pieces of a split segment */
    hwrt_stat allocated_bytes;
    hwrt_stat reserved_bytes;
    hwrt_stat active_bytes;
    hwrt_stat inactive_split_bytes;
    hwrt_stat requested_bytes;       /* what callers asked for, before rounding */
    int64_t num_ooms;
    int64_t num_alloc_retries;       /* allocations that freed the cache and retried */
    int64_t num_device_alloc;        /* segment allocations from the backend */
    int64_t num_device_free;
    int64_t num_sync_all_streams;
    int64_t max_split_size;          /* bytes; -1 when unlimited */
} hwrt_mem_stats;

/* Allocate bytes of device memory on the current device (stream-ordered on the
 * default stream). bytes == 0 gives *dptr = NULL and success.
 * Errors: OUT_OF_MEMORY (the sentence gives requested, total, free, allocated, reserved,
 * the cap and what to change), INVALID_ARGUMENT (NULL dptr, size overflow). */
HWRT_API hwrt_status hwrt_malloc(void **dptr, size_t bytes);

/* Return a block from hwrt_malloc to the pool; NULL is a no-op.
 * Errors: INVALID_ARGUMENT for a pointer hwrt did not hand out (host pointers, interior
 * pointers, double frees) or a live tensor's data (hwrt_tensor_data: release the tensor
 * instead): the sentence says which. */
HWRT_API hwrt_status hwrt_free(void *dptr);

/* Stream-ordered allocation: the block may be reused by work on s without a sync. */
HWRT_API hwrt_status hwrt_malloc_async(void **dptr, size_t bytes, hwrt_stream s);
/* Stream-ordered free: the block becomes reusable once s has done its queued work.
 * Errors as hwrt_free (a live tensor's data included). */
HWRT_API hwrt_status hwrt_free_async(void *dptr, hwrt_stream s);
/* Mark that s uses dptr too: the block is not reused before s's current work is done. */
HWRT_API hwrt_status hwrt_record_stream(void *dptr, hwrt_stream s);

/* Allocation tag shown in snapshots and leak reports (copied; NULL clears). */
HWRT_API hwrt_status hwrt_set_alloc_tag(void *dptr, const char *tag);

enum { HWRT_HOST_DEFAULT = 0, HWRT_HOST_PINNED = 1 };

/* Host memory; HWRT_HOST_PINNED gives page-locked memory the copy engines read and
 * write directly, so async copies from/to it do not block the caller.
 * Errors: HOST_OUT_OF_MEMORY, INVALID_ARGUMENT (NULL hptr, bad flags). */
HWRT_API hwrt_status hwrt_host_alloc(void **hptr, size_t bytes, unsigned flags);
HWRT_API hwrt_status hwrt_host_free(void *hptr);

/* Figures for device_id (see hwrt_memory_info). */
HWRT_API hwrt_status hwrt_get_memory_info(int device_id, hwrt_memory_info *out);
HWRT_API hwrt_status hwrt_memory_stats(int device_id, hwrt_mem_stats *out);
/* Human-readable table into buf (truncated to len, always NUL-terminated). */
HWRT_API hwrt_status hwrt_memory_summary(int device_id, char *buf, size_t len);
/* JSON of segments and blocks (with tags and, if record_alloc_sites, call sites). */
HWRT_API hwrt_status hwrt_memory_snapshot(int device_id, const char *path);
/* Synchronize the device and release every unused cached segment to it. */
HWRT_API hwrt_status hwrt_empty_cache(int device_id);
HWRT_API hwrt_status hwrt_reset_peak_memory_stats(int device_id);

#ifdef __cplusplus
}
#endif
#endif /* HWRT_MEMORY_H */
