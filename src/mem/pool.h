/* Device memory as the layers above see it: a stream-ordered caching pool per device
 * (hwi_device.pool: created on the device's first allocation, with its own lock, destroyed
 * by hwrt_shutdown or hwi_pool_destroy), with pointer lookup (which device, which live
 * block) for validating copies and kernels. The pool reaches the backend only through
 * the device's hwi_dev_* wrappers (runtime/device_ops.h).
 * Streams are the backend's (hwrt_bstream), so this layer sits below src/exec; exec
 * registers a device-wide synchronize for the pool's slow paths (empty_cache, the retry
 * before OOM, garbage collection). See docs/memory.md. */
#ifndef HWI_POOL_H
#define HWI_POOL_H

#include "../runtime/runtime.h"

typedef struct hwi_pool hwi_pool;

typedef struct hwi_block_info {
    int device;            /* -1: not device memory hwrt manages */
    void *base;            /* start of the live block containing the pointer (NULL: none) */
    size_t size;           /* usable bytes of the block (the caller's request) */
} hwi_block_info;

/* Allocate on device for use on stream bs (NULL: no stream; such blocks are reused
 * only by other NULL-stream allocations, as the default stream's are). Non-blocking on
 * the hot path; before failing it synchronizes the device, frees cached segments and
 * retries. OUT_OF_MEMORY sentence: requested, total, free, allocated, cached, cap, fix. */
hwrt_status hwi_pool_alloc(hwi_device *d, size_t bytes, hwrt_bstream *bs, void **out);
/* The same for a tensor's data (no stream): only the tensor layer and offload free the
 * block; hwrt_free and hwrt_free_async refuse it. */
hwrt_status hwi_pool_alloc_tensor(hwi_device *d, size_t bytes, void **out);
/* Free a block; non-blocking. It is reused once every stream recorded on it has
 * finished the work queued before this call (backend events), and at once by work
 * on the stream it was allocated for (stream order). */
hwrt_status hwi_pool_free(void *p, const char *api);
/* hwrt_free: as hwi_pool_free, but a tensor's data (hwi_pool_alloc_tensor) is refused. */
hwrt_status hwi_pool_free_user(void *p, const char *api);
/* Stream-ordered free on bs (hwrt_free_async; refuses a tensor's data): bs is recorded as
 * a user first when the block is on `device` and was allocated for another stream;
 * non-blocking. */
hwrt_status hwi_pool_free_on(void *p, hwrt_bstream *bs, int device, const char *api);
/* Note that stream bs (of the block's device) uses the block. */
hwrt_status hwi_pool_record_stream(void *p, hwrt_bstream *bs);
/* One lookup (one pool locked once) for validating a pointer: 0 when p is not device
 * memory hwrt manages (out->device -1), else 1 with out->device and the live block
 * containing p (out->base NULL when none: freed, or cached). */
int hwi_pool_lookup(const void *p, hwi_block_info *out);
/* Does the live block of a lookup hold all of [p, p+bytes)? */
int hwi_block_covers(const hwi_block_info *b, const void *p, size_t bytes);
/* The live block containing [p, p+bytes): 1 and *out filled, or 0 (*out is filled when
 * a live block contains p but not the whole range). */
int hwi_pool_find(const void *p, size_t bytes, hwi_block_info *out);
/* Does p point into device memory hwrt manages (live or not)? 1 + device, or 0. */
int hwi_pool_is_device_ptr(const void *p, int *device);
/* Tell the backend's monitor (hwrt-smi's source) what the pool of d holds now. */
void hwi_pool_report(hwi_device *d);
/* Synchronize d and return every cached, unused segment of d to the device. */
hwrt_status hwi_pool_empty_cache(hwi_device *d);
/* allocated, reserved and peak figures for one device (other fields untouched). */
void hwi_pool_fill_info(const hwi_device *d, hwrt_memory_info *info);

/* Counters of one device (zeros for a device never used). */
void hwi_pool_stats(const hwi_device *d, hwrt_mem_stats *out);
void hwi_pool_reset_peaks(const hwi_device *d);
/* Tag of a live block (copied; NULL clears). INVALID_ARGUMENT if p is not one. */
hwrt_status hwi_pool_set_tag(void *p, const char *tag);
/* JSON of the device's segments and blocks into f. */
hwrt_status hwi_pool_snapshot(const hwi_device *d, void *file /* FILE* */);
/* Live blocks found by the last hwrt_shutdown's leak report (tests read it). */
size_t hwi_pool_last_leaks(void);
/* Destroy d's pool (its device is closing; queued work on it has finished): live blocks
 * are reported as leaks and every segment goes back to the device. The pool is a part of
 * its device (HWI_PART_MEM), so closing the device calls this. */
void hwi_pool_destroy(hwi_device *d);
/* hwrt_shutdown's process-wide hook (order 40): destroys any pool no device close took,
 * closes the allocation trace and reports the session's leaked blocks. */
hwrt_status hwi_pool_teardown(void);

/* A stream is being destroyed (after its work finished): forget it. */
void hwi_pool_stream_destroyed(hwrt_bstream *bs);

#endif
