/* Device memory as the layers above see it: allocation, stream-ordered release, and
 * pointer lookup (which device, which live block) for validating copies and kernels.
 * Streams are the backend's (hwrt_bstream), so this layer sits below src/exec. */
#ifndef HWI_POOL_H
#define HWI_POOL_H

#include "../core/runtime.h"

typedef struct hwi_block_info {
    int device;
    void *base;            /* start of the live block containing the pointer */
    size_t size;           /* usable bytes of the block (the caller's request) */
} hwi_block_info;

/* Allocate on device for use on stream bs (NULL: no stream yet). */
hwrt_status hwi_pool_alloc(hwi_device *d, size_t bytes, hwrt_bstream *bs, void **out);
/* Free a block; it is reused once every stream recorded on it has finished the work
 * queued before this call. */
hwrt_status hwi_pool_free(void *p, const char *api);
/* Note that stream bs (of the block's device) uses the block. */
hwrt_status hwi_pool_record_stream(void *p, hwrt_bstream *bs);
/* bs is being destroyed (after it was synchronized): drop it from every block's uses, so
 * a later free does not wait on a freed stream. */
void hwi_pool_forget_stream(hwrt_bstream *bs);
/* The live block containing [p, p+bytes): 1 and *out filled, or 0. */
int hwi_pool_find(const void *p, size_t bytes, hwi_block_info *out);
/* Does p point into device memory hwrt manages (live or not)? 1 + device, or 0. */
int hwi_pool_is_device_ptr(const void *p, int *device);
/* Tell the backend's monitor (hwrt-smi's source) what the pool of d holds now. */
void hwi_pool_report(hwi_device *d);
/* Return every cached, unused segment of d to the device. */
hwrt_status hwi_pool_empty_cache(hwi_device *d);
/* allocated, reserved and peak figures for one device (other fields untouched). */
void hwi_pool_fill_info(int device, hwrt_memory_info *info);

#endif
