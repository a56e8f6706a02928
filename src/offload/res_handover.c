/* Stream-ordered eviction: a victim still used by queued work hands its device block to
 * a fetch, which waits on the device for the victim's last uses (and a written victim's
 * write-back) instead of the host waiting. */
#include "res_internal.h"
#include "../base/config.h"
#include "../runtime/device_ops.h"
#include "../base/status.h"
#include "../mem/pool.h"
#include "../exec/dispatch.h"

/* Can a written victim be saved without the host waiting? Into pinned host-tier memory
 * only: a pageable copy blocks the host, and the disk tier is written by the host. */
static int can_write_back_in_order(const hwi_resident *v)
{
    if (!hwi_cfg_int(HWI_CFG_ENABLE_PINNED_MEM)) return 0;
    if (v->host) return v->host_pinned;
    return MGR.host_used + v->t->nbytes <= (size_t)hwi_cfg_int(HWI_CFG_OFFLOAD_CPU_SIZE);
}

/* Write v's device copy back to its host-tier buffer on the D2H engine, ordered after
 * v's last uses and pending fetch, and make `order` wait for it (the write-back's done,
 * after its confirmation). v stays dirty, its data in the block it lends, until the
 * write-back is settled. */
static hwrt_status write_back_in_order(hwi_resident *v, hwi_stream *order)
{
    hwi_tensor *t = v->t;
    size_t n = t->nbytes;
    hwi_stream *es = hwi_res_evict_stream(t->device);
    int fresh = !v->host;
    void *h = v->host;
    if (fresh) HWI_TRY(hwrt_host_alloc(&h, n, HWRT_HOST_PINNED));
    hwi_xfer *x = NULL;
    hwrt_status st = hwi_xfer_new(t->device, t->data, &x);
    if (st == HWRT_SUCCESS) st = hwi_res_order_after_uses(v, es);
    if (st == HWRT_SUCCESS) st = hwi_res_wait_ready(v, es);
    if (st == HWRT_SUCCESS) st = hwrt_memcpy_async(h, t->data, n, HWRT_MEMCPY_DEVICE_TO_HOST,
                                                   es->handle);
    if (st != HWRT_SUCCESS) {                      /* nothing that matters was queued */
        if (fresh) hwrt_host_free(h);
        if (x) hwi_xfer_free(x);
        return st;
    }
    x->fresh_host = fresh;
    if (fresh) {
        v->host = h;
        v->host_pinned = 1;
        MGR.host_used += n;
    }
    hwi_xfer *old_fetch = v->fetch;
    if (v->fetch && !v->fetch->settled) {
        x->after = v->fetch;                       /* decides whether v's block was valid */
        MGR.unsettled--;                           /* settled with the write-back */
    }
    v->fetch = NULL;
    v->wb = x;
    MGR.unsettled++;
    st = hwi_xfer_close(x, es);
    if (st == HWRT_SUCCESS) st = hwi_res_event(&x->done_ev, x->done, order, 0);
    if (st != HWRT_SUCCESS) {
        hwi_dev_stream_synchronize(es->dev, es->bs);
        x->abandoned = 1;                          /* drained: its outcome is known */
    }
    if (st != HWRT_SUCCESS && !atomic_load(&x->landed)) {
        /* not queued in full (host out of memory): undo, v keeps its block and the
         * caller waits for v instead */
        v->wb = NULL;
        MGR.unsettled--;
        if (x->after) MGR.unsettled++;
        v->fetch = old_fetch;
        x->after = NULL;
        if (fresh) {
            hwrt_host_free(v->host);
            v->host = NULL;
            MGR.host_used -= n;
        }
        hwi_xfer_free(x);
        return st;
    }
    if (!x->after) hwi_xfer_retire(old_fetch);              /* landed or absent: not needed */
    return HWRT_SUCCESS;
}

size_t hwi_res_block_bytes(const hwi_resident *r)
{
    hwi_block_info b;
    if (r->t->data && hwi_pool_find(r->t->data, 1, &b) && b.base == r->t->data &&
        b.size > r->t->nbytes)
        return b.size;
    return r->t->nbytes;
}

/* Stream-ordered eviction of a victim v still used by queued work: v hands its device
 * block straight to the new tensor if the block can hold it (the same size or larger:
 * the new tensor then lives in the larger block, which it hands on in turn when it
 * leaves, so blocks keep circulating among the tensors). `order`, the stream that
 * first writes the block, waits on the device for v's last uses; a written v is first
 * saved to its pinned host-tier buffer on the D2H engine in the same order. The host does
 * not wait at all, so it keeps running ahead of the device. Returns 1 and the block in
 * *out, or 0 (a smaller block, or a written v that would need the disk tier or
 * pageable memory: the caller waits for a victim instead). */
int hwi_res_hand_over(hwi_resident *v, size_t bytes, hwi_stream *order, void **out)
{
    if (hwi_res_block_bytes(v) < bytes)
        return 0;
    int clean = !v->dirty && (v->has_host || v->has_disk);
    if (!clean && !can_write_back_in_order(v))
        return 0;
    hwi_tensor *t = v->t;
    uint64_t t0 = hwi_res_now_ns();
    if (clean) {
        if (hwi_res_order_after_uses(v, order) != HWRT_SUCCESS) return 0;
        if (hwi_res_wait_ready(v, order) != HWRT_SUCCESS) return 0;
        if (v->fetch && !v->fetch->settled) MGR.unsettled--;  /* its outcome no longer matters */
        hwi_xfer_retire(v->fetch);
        v->fetch = NULL;
        v->loc = hwi_res_off_device(v);
        MGR.stats.clean_evictions++;
    } else if (write_back_in_order(v, order) != HWRT_SUCCESS) {
        return 0;                                  /* the waiting path reports it */
    }
    *out = t->data;
    t->data = NULL;
    MGR.stats.device_bytes -= t->nbytes;
    MGR.stats.evict_ms += hwi_res_ms_since(t0);
    hwi_dispatch_span(HWI_PROF_OFFLOAD_EVICT, "evict (stream-ordered)", t->device, t0,
                      hwi_res_now_ns(), t->nbytes);
    return 1;
}
