/* Allocation: the entry points (hwi_pool_alloc, hwi_pool_alloc_tensor: the thread
 * cache's hit inline, the rest under the pool's lock), and the policy: how a request is
 * rounded, which (stream, kind) pool serves it, which free block it takes (pool_bins.c,
 * pool_addr.c), where in the block it is placed, and what is split off. New memory
 * comes from pool_grow.c, the retry under pressure from pool_release.c. */
#include "pool_tcache.h"
#include "alloc_trace.h"
#include "mem_events.h"
#include "../base/config.h"
#include "../base/status.h"
#include "../runtime/device_ops.h"

#include <execinfo.h>
#include <string.h>

/* Every request rounds up to 512 B; with roundup_power2_divisions N (PyTorch's), one
 * above 512 B x N rounds up to the next of N equal steps between two powers of two (N is
 * taken down to a power of two; 1: the next power of two), so that sizes differing a
 * little share cached blocks, at the cost of the rounding. */
size_t pool_round_size(size_t n)
{
    if (n < POOL_ROUND) return POOL_ROUND;
    size_t div = (size_t)hwi_cfg_int(HWI_CFG_ROUNDUP_POWER2_DIVISIONS);
    if (div && n > POOL_ROUND * div && n <= ((size_t)1 << 62)) {
        int l = 63 - __builtin_clzll((unsigned long long)n);
        size_t floor2 = (size_t)1 << l;
        if (n == floor2) return n;
        size_t step = floor2 >> (63 - __builtin_clzll((unsigned long long)div));
        if (step < POOL_ROUND) step = POOL_ROUND;
        return (n + step - 1) & ~(step - 1);
    }
    return (n + POOL_ROUND - 1) & ~(POOL_ROUND - 1);
}

int pool_use_expandable(const dpool *dp)
{
    return hwi_cfg_int(HWI_CFG_EXPANDABLE_SEGMENTS) && hwi_dev_has_va(dp->dev);
}

/* The pool (kind) a request of rsize bytes takes blocks from and grows. In plain mode the
 * requests that share segments (above POOL_SHARED_MIN, below shared_below) have a pool
 * of their own: they do not carve up dedicated segments (whose rest would stay pinned to
 * a segment made for one large request), dedicated-size requests do not take the holes
 * of shared segments (which smaller blocks can fill), and blocks of 256 KiB - 1 MiB
 * (K/V caches of short sequences, say) join the shared segments' holes instead of
 * pinning 2 MiB small segments two or three at a time. Under pressure the retry's last
 * resort (try_other_pools) still takes a block of another kind. With expandable segments
 * free pages are unmapped, so none of this matters there. */
int pool_kind_of(const dpool *dp, size_t rsize)
{
    if (rsize >= dp->shared_below) return PK_LARGE;
    if (rsize > POOL_SHARED_MIN && (rsize <= POOL_SMALL_MAX || !pool_use_expandable(dp)))
        return PK_SHARED;
    return rsize <= POOL_SMALL_MAX ? PK_SMALL : PK_LARGE;
}

static int should_split(const pblock *b, size_t size, size_t msz)
{
    size_t rem = b->size - size;
    /* the rest of a shared segment's block is split off however small (it merges with
     * its free neighbour when that is freed first, instead of waiting for this block);
     * a dedicated block keeps a rest of up to 1 MiB (PyTorch's rule) */
    if (b->seg->expandable || !b->seg->dedicated) return rem >= POOL_ROUND;
    return (!msz || size < msz) && rem > POOL_LARGE_MIN_SPLIT;
}

/* b (out of the bins) keeps only its last rsize bytes, the front going back to the
 * bins, when hand_out would split it (hand_out then finds nothing to split). */
void pool_place_at_end(pblock *b, size_t rsize, size_t msz)
{
    if (!should_split(b, rsize, msz)) return;
    b->state = B_ALLOC;                        /* the front must not merge back */
    pblock_split_high(b, rsize);
    b->state = B_FREE;
}

/* Hand out b (out of the bins): split off the rest, map what it needs, count it. */
hwrt_status pool_hand_out(dpool *dp, pblock *b, size_t req, size_t rsize, int no_gc,
                            int no_trim, pool_want *want, pblock **out)
{
    size_t msz = (size_t)hwi_cfg_int(HWI_CFG_MAX_SPLIT_SIZE);
    size_t cap = (size_t)hwi_cfg_int(HWI_CFG_MAX_DEVICE_MEMORY);
    b->state = B_ALLOC;                        /* taken: the split rest must not merge back */
    if (should_split(b, rsize, msz)) pblock_split(b, rsize);
    if (b->seg->expandable) {
        pseg_hold(b);                          /* its pages are not idle (trimmable) */
        hwrt_status st = pool_map_block(dp, b, cap, no_gc, no_trim, want);
        if (st != HWRT_SUCCESS) {
            pseg_unhold(b);
            pblock_coalesce_insert(b);         /* back, unchanged in the figures */
            return st;
        }
    }
    b->state = B_ALLOC;
    b->requested = req;
    b->nuses = 0;
    b->owned = 0;
    b->alloc_seq = ++dp->alloc_seq;
    if (!pmap_put(dp, b)) {
        pseg_unhold(b);
        pblock_coalesce_insert(b);
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "device memory pool: host out of memory");
    }
    pool_stat_add(&dp->st.allocation, 1);
    pool_stat_add(&dp->st.allocated_bytes, (int64_t)b->size);
    pool_stat_add(&dp->st.requested_bytes, (int64_t)req);
    pool_stat_add(&dp->st.active, 1);
    pool_stat_add(&dp->st.active_bytes, (int64_t)b->size);
    *out = b;
    return HWRT_SUCCESS;
}

hwrt_status pool_try_alloc(dpool *dp, hwrt_bstream *bs, size_t req, size_t rsize,
                             int no_gc, int no_trim, pool_want *want, pblock **out)
{
    *want = WANT_NONE;
    if (dp->pending) pool_process_events(dp);
    spool *sp = pool_spool(dp, bs, pool_kind_of(dp, rsize));
    if (!sp)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "device memory pool: host out of memory");
    size_t msz = (size_t)hwi_cfg_int(HWI_CFG_MAX_SPLIT_SIZE);
    size_t cap = (size_t)hwi_cfg_int(HWI_CFG_MAX_DEVICE_MEMORY);
    /* in an expandable large range, requests of a shared segment's size or more are
     * placed at the top of the highest-addressed block that fits, away from the smaller
     * blocks packed from the bottom */
    int top = __builtin_expect(sp->addr_order, 0) && rsize >= dp->shared_seg;
    pblock *b = pbin_search(sp, rsize, msz, top);
    if (b) pbin_remove(sp, b);
    else HWI_TRY(pool_grow(dp, sp, rsize, cap, no_gc, no_trim, want, &b));
    if (__builtin_expect(sp->addr_order, 0) && rsize >= dp->shared_seg)   /* grow may set it */
        pool_place_at_end(b, rsize, msz);
    return pool_hand_out(dp, b, req, rsize, no_gc, no_trim, want, out);
}

/* The whole allocation under the lock: the first attempt here, the rest (syncs,
 * releases, retries, the last resort, OOM) in pool_release.c. */
hwrt_status pool_alloc_locked(dpool *dp, hwrt_bstream *bs, size_t bytes, pblock **b)
{
    size_t rsize = pool_round_size(bytes);
    pool_want want;
    hwrt_status st = pool_try_alloc(dp, bs, bytes, rsize, 0, 0, &want, b);
    if (__builtin_expect(st == HWRT_SUCCESS, 1)) return st;
    return pool_alloc_retry(dp, bs, bytes, rsize, st, want, b);
}

/* ---- allocation: the entry points ---- */

static hwrt_status __attribute__((noinline))
alloc_slow(hwi_device *d, size_t bytes, hwrt_bstream *bs, int owned, void **out)
{
    void *site[POOL_SITE_DEPTH + 1];
    int nsite = 0;
    if (hwi_cfg_int(HWI_CFG_RECORD_ALLOC_SITES))
        nsite = backtrace(site, POOL_SITE_DEPTH + 1);
    dpool *dp = pool_get(d);
    if (!dp) return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "device memory pool: host out of memory");
    tc_leave_other(dp);
    pthread_mutex_lock(&dp->mu);
    pblock *b = NULL;
    tc_slow_enter(dp, bs);
    hwrt_status st = pool_alloc_locked(dp, bs, bytes, &b);
    size_t resv = 0, alloc = 0;
    int report = 0;
    if (st == HWRT_SUCCESS) {
        tc_note_alloc(dp, bs, b);
        if (hwi_alloc_trace_active()) hwi_alloc_trace_alloc(dp->device, b->base, bytes, bs);
        b->owned = owned;
        b->nsite = nsite > 1 ? nsite - 1 : 0;   /* frame 0 is this function */
        if (b->nsite) memcpy(b->site, site + 1, (size_t)b->nsite * sizeof(void *));
        *out = b->base;
        report = pool_report_due(dp, &resv, &alloc);
    }
    pthread_mutex_unlock(&dp->mu);
    if (report) hwi_dev_report_usage(d, resv, alloc);
    return st;
}

/* Everything but a thread-cache hit without a profiler: kept out of line, so that the
 * hit is a leaf path with no stack frame. */
static hwrt_status __attribute__((noinline))
alloc_other(hwi_device *d, size_t bytes, hwrt_bstream *bs, int owned, void **out, int hit)
{
    hwrt_status st = hit ? HWRT_SUCCESS : alloc_slow(d, bytes, bs, owned, out);
    if (st == HWRT_SUCCESS && hwi_mem_events_active())
        pool_mem_event(HWI_MEM_ALLOC, d, *out, bytes);
    return st;
}

static inline __attribute__((always_inline)) hwrt_status
pool_alloc(hwi_device *d, size_t bytes, hwrt_bstream *bs, int owned, void **out)
{
    /* the thread cache is off while record_alloc_sites is on, so sites are never lost */
    int hit = tc_try_alloc(d, bs, bytes, owned, out);
    if (__builtin_expect(hit && !hwi_mem_events_active(), 1)) return HWRT_SUCCESS;
    return alloc_other(d, bytes, bs, owned, out, hit);
}

hwrt_status hwi_pool_alloc(hwi_device *d, size_t bytes, hwrt_bstream *bs, void **out)
{
    return pool_alloc(d, bytes, bs, 0, out);
}

hwrt_status hwi_pool_alloc_tensor(hwi_device *d, size_t bytes, void **out)
{
    return pool_alloc(d, bytes, NULL, 1, out);
}
