/* Freeing device memory (non-blocking: a block other streams used waits for their
 * events, pool_events.c), record_stream, and pointer lookups for validating copies and
 * kernels. The thread cache's fast path (pool_tcache.h) comes first. */
#include "pool_tcache.h"
#include "alloc_trace.h"
#include "mem_events.h"
#include "../base/status.h"
#include "../runtime/device_ops.h"

#include <stdatomic.h>
#include <stdlib.h>

/* Under dp's lock: the live block of dp containing p, which lies in dp's segment s
 * (exact base first: the common case). */
static pblock *live_containing(dpool *dp, pseg *s, const void *p)
{
    pblock *b = pmap_get(dp, p);
    if (b) return atomic_load_explicit(&b->in_tc, memory_order_relaxed) ? NULL : b;
    for (b = s->first; b; b = b->next)
        if ((const char *)p >= b->base && (const char *)p < b->base + b->size)
            break;
    return b && b->state == B_ALLOC && !atomic_load_explicit(&b->in_tc, memory_order_relaxed) ? b : NULL;
}

/* Free p. rec (hwrt_free_async's stream, NULL for none) is recorded as a user first when
 * it is a stream of the block's device (rec_device) other than the block's own. One
 * lookup, one lock. */
static hwrt_status __attribute__((noinline))
free_slow(void *p, const char *api, int user, hwrt_bstream *rec, int rec_device)
{
    pseg *s = NULL;
    dpool *dp = pool_lock_containing(p, &s);
    pblock *b = dp ? pmap_get(dp, p) : NULL;
    if (b && atomic_load_explicit(&b->in_tc, memory_order_relaxed)) b = NULL;   /* parked */
    if (b && user && b->owned) {
        pthread_mutex_unlock(&dp->mu);
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT,
                       "%s(%p): the pointer is the data of a live tensor (hwrt_tensor_data); "
                       "release the tensor with hwrt_tensor_release instead, which frees it once "
                       "its queued work is done", api, p);
    }
    if (!b) {
        int inside = dp && live_containing(dp, s, p) != NULL;
        if (dp) pthread_mutex_unlock(&dp->mu);
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT,
                       "%s(%p): %s; pass the exact pointer hwrt_malloc returned, once", api, p,
                       inside ? "the pointer is inside a block, not its start"
                              : "hwrt did not allocate this pointer (a host pointer, or already freed)");
    }
    if (rec && dp->device == rec_device && rec != b->seg->sp->owner) {
        hwrt_status st = pool_add_use(b, rec);
        if (st != HWRT_SUCCESS) {
            pthread_mutex_unlock(&dp->mu);
            return st;
        }
    }
    pmap_take(dp, p);
    atomic_fetch_add(&b->tc_gen, 1);           /* no thread cache may take it back */
    if (hwi_alloc_trace_active())              /* the free's stream: the last user, else its own */
        hwi_alloc_trace_free(dp->device, p, b->nuses ? b->uses[b->nuses - 1] : b->seg->sp->owner,
                             b->tag);
    pool_stat_sub(&dp->st.allocation, 1);
    pool_stat_sub(&dp->st.allocated_bytes, (int64_t)b->size);
    pool_stat_sub(&dp->st.requested_bytes, (int64_t)b->requested);
    free(b->tag);
    b->tag = NULL;
    b->freed_at = ++dp->free_seq;
    if (b->nuses) pool_record_events(dp, b);
    if (b->nevs) {
        b->state = B_PENDING;
        b->fprev = NULL;
        b->fnext = dp->pending;
        if (dp->pending) dp->pending->fprev = b;
        dp->pending = b;
    } else {
        pool_make_free(b);
    }
    size_t resv = 0, alloc = 0;
    int report = pool_report_due(dp, &resv, &alloc);
    pthread_mutex_unlock(&dp->mu);
    if (report) hwi_dev_report_usage(dp->dev, resv, alloc);
    return HWRT_SUCCESS;
}

/* Everything but a thread-cache hit without a profiler (see alloc_other). */
static hwrt_status __attribute__((noinline))
free_other(void *p, const char *api, int user, hwrt_bstream *rec, int rec_device)
{
    if (!hwi_mem_events_active()) return free_slow(p, api, user, rec, rec_device);
    /* a profiler observes: the block's device and size before it goes */
    pseg *s = NULL;
    dpool *dp = pool_lock_containing(p, &s);
    pblock *b = dp ? live_containing(dp, s, p) : NULL;
    size_t size = b ? b->requested : 0;
    int known = b && b->base == (char *)p;
    if (dp) pthread_mutex_unlock(&dp->mu);
    hwrt_status st = !rec && tc_try_free(p, user) ? HWRT_SUCCESS : free_slow(p, api, user, rec, rec_device);
    if (st == HWRT_SUCCESS && known) pool_mem_event(HWI_MEM_FREE, dp->dev, p, size);
    return st;
}

static inline __attribute__((always_inline)) hwrt_status
pool_free(void *p, const char *api, int user, hwrt_bstream *rec, int rec_device)
{
    /* with rec, the slow path records it first (the thread cache takes no block in use) */
    if (__builtin_expect(!rec && !hwi_mem_events_active() && tc_try_free(p, user), 1))
        return HWRT_SUCCESS;
    return free_other(p, api, user, rec, rec_device);
}

hwrt_status hwi_pool_free(void *p, const char *api) { return pool_free(p, api, 0, NULL, -1); }

hwrt_status hwi_pool_free_user(void *p, const char *api) { return pool_free(p, api, 1, NULL, -1); }

hwrt_status hwi_pool_free_on(void *p, hwrt_bstream *bs, int device, const char *api)
{
    tcache *t = hwi_tc;
    /* the thread cache takes only blocks no other stream used: bs must be their own */
    if (t && t->owner == bs && t->device == device && !hwi_mem_events_active() &&
        tc_try_free(p, 1))
        return HWRT_SUCCESS;
    return pool_free(p, api, 1, bs, device);
}

hwrt_status hwi_pool_record_stream(void *p, hwrt_bstream *bs)
{
    pseg *s = NULL;
    dpool *dp = pool_lock_containing(p, &s);
    pblock *b = dp ? live_containing(dp, s, p) : NULL;
    hwrt_status st = HWRT_SUCCESS;
    if (!b)
        st = hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_record_stream(%p): not a live block "
                     "allocated by hwrt", p);
    else if (bs && bs != b->seg->sp->owner)
        st = pool_add_use(b, bs);
    if (dp) pthread_mutex_unlock(&dp->mu);
    return st;
}

/* ---- lookups ---- */

int hwi_pool_lookup(const void *p, hwi_block_info *out)
{
    pseg *s = NULL;
    dpool *dp = pool_lock_containing(p, &s);
    if (!dp) {
        *out = (hwi_block_info){-1, NULL, 0};
        return 0;
    }
    pblock *b = live_containing(dp, s, p);
    *out = (hwi_block_info){dp->device, b ? b->base : NULL, b ? b->requested : 0};
    pthread_mutex_unlock(&dp->mu);
    return 1;
}

int hwi_block_covers(const hwi_block_info *b, const void *p, size_t bytes)
{
    if (!b->base || (const char *)p < (const char *)b->base) return 0;
    size_t off = (size_t)((const char *)p - (const char *)b->base);
    return off <= b->size && bytes <= b->size - off;   /* no wrap */
}

int hwi_pool_find(const void *p, size_t bytes, hwi_block_info *out)
{
    hwi_block_info b;
    if (!hwi_pool_lookup(p, &b) || !b.base) return 0;
    if (out) *out = b;
    return hwi_block_covers(&b, p, bytes);
}

int hwi_pool_is_device_ptr(const void *p, int *device)
{
    hwi_block_info b;
    int in = hwi_pool_lookup(p, &b);
    if (in && device) *device = b.device;
    return in;
}
