/* Settling: applying the outcome of fetches and stream-ordered write-backs once their
 * `done` is reached, and freeing a tensor's tier copies. */
#include "res_internal.h"
#include "../runtime/device_ops.h"
#include "../base/log.h"
#include "../mem/pool.h"
#include "../exec/dispatch.h"

/* ---- settling outcomes ---- */

static void hwi_res_drop_block(hwi_resident *r)
{
    MGR.stats.device_bytes -= r->t->nbytes;
    r->t->data = NULL;
}

int hwi_res_off_device(const hwi_resident *r)
{
    return r->has_host ? HWI_LOC_HOST : HWI_LOC_DISK;
}

static void resolve_wb(hwi_resident *v);

/* r's fetch is done: confirm it, or drop the block it never filled. */
void hwi_res_resolve_fetch(hwi_resident *r)
{
    hwi_xfer *x = r->fetch;
    MGR.unsettled--;
    if (atomic_load(&x->landed)) {
        x->settled = 1;
        return;
    }
    hwi_log(HWI_LOG_INFO, "offload: a fetch did not land (device fault); the %s copy stays "
            "authoritative", r->has_host ? "host" : "disk");
    /* work queued on the block after the fetch waited for it and was skipped */
    hwi_res_wait_uses(r);
    r->fetch = NULL;
    /* the block may be a written victim's, lent while its write-back was in flight:
     * that write-back decides first (it may take the block back) */
    for (int i = 0; i < MGR.n; i++) {
        hwi_resident *v = MGR.list[i];
        if (v->wb && v->wb->block == x->block) {
            hwi_xfer_wait(v->wb);
            resolve_wb(v);
            break;
        }
    }
    if (r->t->data == x->block) {
        hwi_dispatch_forget(x->block);
        hwi_pool_free(x->block, "offload: a fetch that did not land");
        hwi_res_drop_block(r);
    }
    r->dirty = 0;                     /* writes queued after the fetch were skipped */
    r->loc = hwi_res_off_device(r);
    hwi_xfer_free(x);
}

/* v's stream-ordered write-back is done: v's host copy is clean now, or (it failed) the
 * data is still in the lent block, which v takes back from the tensor whose fetch was
 * to overwrite it (that fetch waited for the write-back, so it did not land either). */
static void resolve_wb(hwi_resident *v)
{
    hwi_xfer *x = v->wb;
    size_t n = v->t->nbytes;
    v->wb = NULL;
    MGR.unsettled--;
    if (atomic_load(&x->landed)) {
        v->has_host = 1;
        v->dirty = 0;
        v->loc = HWI_LOC_HOST;
        if (v->has_disk) {                /* the file region is stale now */
            hwi_disk_release(&v->disk);
            v->has_disk = 0;
            MGR.disk_used -= n;
        }
        MGR.stats.evictions_to_host++;
        MGR.stats.bytes_to_host += n;
    } else {
        /* v's device copy held its data unless it was itself still being fetched and
         * that fetch did not land (then the host/disk copy never stopped being it) */
        int valid = !x->after || atomic_load(&x->after->landed);
        if (x->fresh_host) {
            hwrt_host_free(v->host);
            v->host = NULL;
            v->has_host = 0;
            MGR.host_used -= n;
        }
        hwi_resident *h = NULL;
        for (int i = 0; i < MGR.n && !h; i++)
            if (MGR.list[i]->t->data == x->block) h = MGR.list[i];
        if (valid && h && h->fetch && !h->fetch->settled) {
            hwi_xfer_wait(h->fetch);
            if (atomic_load(&h->fetch->landed)) {
                valid = 0;                /* cannot happen: it waited for the write-back */
                hwi_log(HWI_LOG_ERROR, "offload: a fetch landed in a block whose write-back "
                        "failed; the older copy is kept");
            }
        }
        if (valid && h) {
            hwi_res_wait_uses(h);
            if (h->fetch) {
                if (!h->fetch->settled) MGR.unsettled--;
                hwi_xfer_free(h->fetch);
                h->fetch = NULL;
            }
            hwi_res_drop_block(h);
            h->dirty = 0;
            h->loc = hwi_res_off_device(h);
        } else if (valid) {
            valid = 0;                    /* cannot happen: the fetch holds it until settled */
            hwi_log(HWI_LOG_ERROR, "offload: a failed write-back's block has no holder; the "
                    "older copy is kept");
        }
        if (valid) {
            v->t->data = x->block;
            MGR.stats.device_bytes += n;
            v->loc = HWI_LOC_DEVICE;      /* dirty stays: the device copy is the data */
            hwi_log(HWI_LOG_INFO, "offload: a write-back did not land (device fault); the "
                    "device copy stays authoritative");
        } else {
            v->dirty = 0;
            v->loc = hwi_res_off_device(v);
        }
    }
    if (x->after) hwi_xfer_free(x->after);
    hwi_xfer_free(x);
}

void hwi_res_settle(void)
{
    if (!MGR.unsettled || !hwi_runtime_active()) {
        if (MGR.retired && hwi_runtime_active()) hwi_res_free_retired(0);
        return;
    }
    for (int i = 0; i < MGR.n; i++) {
        hwi_resident *v = MGR.list[i];
        if (v->wb && hwi_xfer_done(v->wb)) resolve_wb(v);
    }
    for (int i = 0; i < MGR.n; i++) {
        hwi_resident *r = MGR.list[i];
        if (r->fetch && !r->fetch->settled && hwi_xfer_done(r->fetch)) hwi_res_resolve_fetch(r);
    }
    hwi_res_free_retired(0);
}

void hwi_res_free_copies(hwi_resident *r)
{
    size_t n = r->t->nbytes;
    if (r->host) { hwrt_host_free(r->host); MGR.host_used -= n; }
    r->host = NULL;
    r->has_host = 0;
    if (r->has_disk) { hwi_disk_release(&r->disk); MGR.disk_used -= n; }
    r->has_disk = 0;
    if (r->fetch) {
        if (!r->fetch->settled) MGR.unsettled--;
        hwi_xfer_retire(r->fetch);
    }
    r->fetch = NULL;
    for (int i = 0; i < HWI_RES_USES; i++)
        if (r->use[i].ev) {
            hwi_dev_event_destroy(hwi_res_tdev(r->t), r->use[i].ev);
            hwi_dispatch_forget_event(&r->use[i].view);
            r->use[i].ev = NULL;
        }
}
