/* The stream-ordered caching device-memory pool (PyTorch/CUDA-caching-allocator design,
 * backend-agnostic: it only calls the backend's segment_alloc/free, va_* and event
 * slots). This file: the pool object of a device (created on first use), its (stream,
 * kind) pools, the monitor's figures. The rest: pool_alloc.c (allocation policy:
 * rounding, which pool, split, hand out; the allocation entry points), pool_grow.c
 * (new segments and expandable mapping), pool_release.c (release and retry under
 * pressure, empty_cache), pool_events.c (cross-stream reuse), pool_free.c (free,
 * record_stream, lookups), pool_bins.c / pool_addr.c (free-block indexes), pool_seg.c
 * (segments), pool_map.c (pointer registry), pool_stats.c (figures, snapshot, leaks),
 * pool_tcache.c (thread caches); pool_internal.h holds the structures they share.
 *
 * - Requests round up to 512 B. Requests <= 1 MiB come from 2 MiB "small" segments,
 *   larger ones from "large" segments (shared ones of 20 MiB below 10 MiB, on devices of
 *   2 GiB or more 64 MiB below 20 MiB, made larger to hold a whole number of blocks of
 *   the request that creates one; else the request rounded to the device granule, a
 *   dedicated segment, or two of the request when rounding one would waste half a
 *   granule or more), or from expandable address ranges per stream (half the device
 *   for large blocks, an eighth for small ones and one for 256 KiB - 1 MiB) whose
 *   granules are mapped on demand
 *   (expandable_segments). In plain mode the shared segments are a pool of their own
 *   (pool_kind_of), which also takes requests of 256 KiB - 1 MiB.
 * - Free blocks are kept per (device, stream it was allocated for, small/large), best fit
 *   (in expandable ranges but the small one, from an address-ordered index (pool_addr.c): the
 *   lowest-addressed block that fits, and for requests
 *   of a shared segment's size or more the highest, placed at its end), split on
 *   allocation and coalesced with free neighbours on free.
 * - A block is reused at once by work on its own stream (stream order makes that safe);
 *   other streams recorded on it (hwi_pool_record_stream) get a backend event at free
 *   time and the block stays PENDING until every event has completed. hwi_pool_free
 *   never blocks.
 * - Before growing past its peak of reserved bytes it syncs the device and gives back
 *   whole cached segments (and unmaps free pages of expandable ranges). Before failing
 *   (cap or device), it syncs, returns every cached segment and free page and retries;
 *   then a free block of another of the device's pools may serve it (another stream's
 *   for a request on a stream, which is recorded on the block), or, in expandable
 *   ranges, the placement that needs the fewest new pages;
 *   only then does it fail with a breakdown.
 * - The pool is an object of its device (hwi_device.pool, created on first use, destroyed
 *   at hwrt_shutdown) with its own lock; it reaches the backend only through the
 *   device's hwi_dev_* wrappers. Pointers whose device is unknown (hwrt_free, copies)
 *   are found through the list of pools (pool_map.c), locking one pool. */
#include "pool_tcache.h"
#include "alloc_trace.h"
#include "mem_events.h"
#include "../base/config.h"
#include "../base/status.h"
#include "../runtime/device_ops.h"

#include <execinfo.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t create_mu = PTHREAD_MUTEX_INITIALIZER;   /* creating a device's pool */

static hwrt_status pool_part_close(hwi_device *d, void *part)
{
    hwi_pool_destroy(d);
    return HWRT_SUCCESS;
}

static const hwi_dev_part_ops pool_part = {.close = pool_part_close};

/* The device's pool, created on first use (pool_get's slow path). */
dpool *pool_create(hwi_device *d)
{
    dpool *dp;
    pthread_mutex_lock(&create_mu);
    dp = __atomic_load_n(&d->pool, __ATOMIC_ACQUIRE);
    if (dp) {
        pthread_mutex_unlock(&create_mu);
        return dp;
    }
    dp = calloc(1, sizeof *dp);
    if (!dp) {
        pthread_mutex_unlock(&create_mu);
        return NULL;
    }
    pthread_mutex_init(&dp->mu, NULL);
    dp->dev = d;
    dp->device = d->id;
    dp->st.max_split_size = -1;
    /* the large pool's shared segments: PyTorch's 20 MiB for requests below 10 MiB; on a
     * device of 2 GiB or more 64 MiB below 20 MiB, where blocks of 1-20 MiB with mixed
     * lifetimes (K/V caches, activations) pin fewer segments (hwrt-bench pool
     * --min-capacity, docs/memory.md) */
    size_t f, t = 0, o;
    if (hwi_dev_mem_info(d, &f, &t, &o) != HWRT_SUCCESS) t = 0;
    int big = t >= ((size_t)2 << 30);
    dp->shared_seg = (size_t)(big ? 64 : 20) << 20;
    dp->shared_below = (size_t)(big ? 20 : 10) << 20;
    /* the pool closes with its device (after the streams: a part of the mem layer); the
     * process-wide hook closes the allocation trace and reports the session's leaks */
    hwi_device_attach(d, HWI_PART_MEM, dp, &pool_part);
    hwi_on_shutdown(40, hwi_pool_teardown);
    hwi_alloc_trace_open();                    /* HWRT_ALLOC_TRACE, once per session */
    pool_list_add(dp);
    __atomic_store_n(&d->pool, dp, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&create_mu);
    return dp;
}

spool *pool_spool_find(dpool *dp, hwrt_bstream *bs, int kind)
{
    spool *sp;
    for (sp = dp->spools; sp; sp = sp->next)
        if (sp->owner == bs && sp->kind == kind) break;
    if (!sp) {
        sp = calloc(1, sizeof *sp);
        if (!sp) return NULL;
        sp->owner = bs;
        sp->kind = kind;
        sp->dp = dp;
        sp->next = dp->spools;
        dp->spools = sp;
    }
    dp->last = sp;
    return sp;
}

/* ---- the backend's monitor (hwrt-smi) ---- */

void hwi_pool_report(hwi_device *d)
{
    hwrt_memory_info m;
    hwi_pool_fill_info(d, &m);
    hwi_dev_report_usage(d, m.reserved, m.allocated);
}

/* The profiler's view of an allocation or free, with the device's figures after it. */
void pool_mem_event(hwi_mem_event_kind kind, const hwi_device *d, const void *p, size_t bytes)
{
    hwrt_memory_info m;
    hwi_pool_fill_info(d, &m);
    hwi_mem_event(kind, d->id, p, bytes, m.allocated, m.reserved);
}
