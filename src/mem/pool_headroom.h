/* How much device memory the pool can hand out without synchronizing the device: the
 * question a caller that must not make the host wait for all queued work (offload's
 * prefetches and stream-ordered fetches) asks before it allocates. */
#ifndef HWI_POOL_HEADROOM_H
#define HWI_POOL_HEADROOM_H

#include "pool.h"

/* The headroom of the pool of device d for an allocation of `bytes` on stream bs (NULL:
 * a tensor's data): 0 when that allocation would make the pool synchronize the device
 * (its last resort before failing, the high-water or the garbage-collection rule), else
 * the largest block of its size class (the pool kind `bytes` rounds to) that can be had
 * now without a sync: a cached free block the pool would give such a request (frees
 * whose users' events are done count; in an expandable range, as much of it as the
 * pages that can still be mapped cover) or a new segment (range pages) of the device's
 * free physical memory within max_device_memory. So an allocation of `bytes` succeeds
 * without a device-wide sync exactly when the result is at least `bytes`.
 * Takes the pool's lock; settles completed frees first, as an allocation would. */
size_t hwi_pool_headroom(hwi_device *d, hwrt_bstream *bs, size_t bytes);

#endif
