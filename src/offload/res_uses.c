/* The last work queued on a resident tensor, one event per stream that used it, and
 * what follows from it: idle, waiting for it, ordering a stream after it. */
#include "res_internal.h"
#include "../runtime/device_ops.h"
#include "../base/status.h"
#include "../exec/dispatch.h"

/* ---- uses: one event per stream ---- */

hwrt_status hwi_res_note_use(hwi_resident *r, hwi_stream *s)
{
    hwi_res_use *u = NULL;
    for (int i = 0; i < HWI_RES_USES && !u; i++)
        if (r->use[i].ev && r->use[i].s == s->handle) u = &r->use[i];
    for (int i = 0; i < HWI_RES_USES && !u; i++)
        if (!r->use[i].ev) {
            HWI_TRY(hwi_res_new_event(r->t->device, &r->use[i].ev));
            u = &r->use[i];
        }
    if (!u) {
        /* more streams than slots: s takes over slot 0 after waiting for it, so the slot's
         * next record still covers the earlier stream's work */
        u = &r->use[0];
        HWI_TRY(hwi_res_event(&u->view, u->ev, s, 0));
    }
    u->s = s->handle;
    return hwi_res_event(&u->view, u->ev, s, 1);
}

static int hwi_res_uses_done(const hwi_resident *r)
{
    for (int i = 0; i < HWI_RES_USES; i++)
        if (r->use[i].ev && !hwi_res_reached(hwi_res_tdev(r->t), r->use[i].ev)) return 0;
    return 1;
}

void hwi_res_wait_uses(const hwi_resident *r)
{
    for (int i = 0; i < HWI_RES_USES; i++)
        if (r->use[i].ev) hwi_dev_event_synchronize(hwi_res_tdev(r->t), r->use[i].ev);
}

/* s waits for every use of r (before something else writes r's block). */
hwrt_status hwi_res_order_after_uses(hwi_resident *r, hwi_stream *s)
{
    for (int i = 0; i < HWI_RES_USES; i++)
        if (r->use[i].ev) HWI_TRY(hwi_res_event(&r->use[i].view, r->use[i].ev, s, 0));
    return HWRT_SUCCESS;
}

/* ---- idle ---- */

/* Idle: every stream's last use of the tensor and any fetch into it have completed
 * (later work on the same streams does not matter). Covers work queued before the
 * tensor became offloadable (set_offloadable notes the tensor's earlier users). */
int hwi_res_idle(const hwi_resident *r)
{
    if (r->fetch && !r->fetch->settled && !hwi_xfer_done(r->fetch)) return 0;
    return hwi_res_uses_done(r);
}

hwrt_status hwi_res_wait_idle(hwi_resident *r)
{
    uint64_t t0 = hwi_res_now_ns();
    if (r->fetch) hwi_xfer_wait(r->fetch);
    hwi_res_wait_uses(r);
    hwi_res_settle();
    hwi_dispatch_span(HWI_PROF_OFFLOAD_STALL, "wait for a victim's queued work",
                      r->t->device, t0, hwi_res_now_ns(), 0);
    return HWRT_SUCCESS;
}

void hwi_res_quiesce(hwi_resident *r, int uses)
{
    if (r->fetch) hwi_xfer_wait(r->fetch);
    if (r->wb) hwi_xfer_wait(r->wb);
    if (uses) hwi_res_wait_uses(r);
}
