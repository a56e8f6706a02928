/* hwi_xfer: a copy between tiers whose success is learned on the device timeline
 * (residency.h), and the retired list of those nobody needs any more. */
#include "res_internal.h"
#include "../runtime/device_ops.h"
#include "../base/status.h"
#include "../exec/dispatch.h"

#include <stdlib.h>

/* ---- transfers ---- */

static void xfer_landed(void *arg) { atomic_store(&((hwi_xfer *)arg)->landed, 1); }

hwrt_status hwi_xfer_new(int device, void *block, hwi_xfer **out)
{
    hwi_xfer *x = calloc(1, sizeof *x);
    if (!x)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "offload: host out of memory");
    hwrt_status st = hwi_res_new_event(device, &x->done);
    if (st != HWRT_SUCCESS) { free(x); return st; }
    x->dev = hwi_device_if_open(device);
    x->block = block;
    *out = x;
    return HWRT_SUCCESS;
}

/* Queue the confirmation and the done record on s, after the copy. On failure the xfer
 * is abandoned (done, not landed) once s has drained, so nobody waits for it forever. */
hwrt_status hwi_xfer_close(hwi_xfer *x, hwi_stream *s)
{
    hwi_work w = {.kind = HWI_WORK_HOST_FUNC, .stream = s, .name = "OffloadConfirm"};
    w.u.host.fn = xfer_landed;
    w.u.host.arg = x;
    hwrt_status st = hwi_dispatch(&w);
    if (st == HWRT_SUCCESS) st = hwi_res_event(&x->done_ev, x->done, s, 1);
    if (st != HWRT_SUCCESS) {
        hwi_dev_stream_synchronize(s->dev, s->bs);   /* the confirmation (if queued) has run */
        x->abandoned = 1;
    }
    return st;
}

int hwi_xfer_done(const hwi_xfer *x) { return x->abandoned || hwi_res_reached(x->dev, x->done); }

void hwi_xfer_wait(const hwi_xfer *x)
{
    if (!x->abandoned) hwi_dev_event_synchronize(x->dev, x->done);
}

void hwi_xfer_free(hwi_xfer *x)
{
    if (!x) return;
    if (x->done) hwi_dev_event_destroy(x->dev, x->done);
    hwi_dispatch_forget_event(&x->done_ev);
    free(x);
}

/* Nobody needs x any more, but its confirmation may still run: free it once done. */
void hwi_xfer_retire(hwi_xfer *x)
{
    if (!x) return;
    if (hwi_xfer_done(x)) { hwi_xfer_free(x); return; }
    x->next = MGR.retired;
    MGR.retired = x;
}

void hwi_res_free_retired(int block)
{
    hwi_xfer **p = &MGR.retired;
    while (*p) {
        hwi_xfer *x = *p;
        if (block) hwi_xfer_wait(x);
        if (hwi_xfer_done(x)) { *p = x->next; hwi_xfer_free(x); }
        else p = &x->next;
    }
}

hwrt_status hwi_res_wait_ready(hwi_resident *r, hwi_stream *s)
{
    if (!r->fetch || r->fetch->abandoned) return HWRT_SUCCESS;
    return hwi_res_event(&r->fetch->done_ev, r->fetch->done, s, 0);
}
