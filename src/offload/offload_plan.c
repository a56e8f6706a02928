/* Planning: the learned use order of auto_offload, prefetching ahead along it, and the
 * choice of a victim (farthest next use when the order is known, else least recently
 * used) — the swap planning MindSpore and DeepSpeed's parameter prefetch do. */
#include "residency.h"
#include "../base/config.h"

#include <stdlib.h>

static int learned(void)
{
    return hwi_cfg_int(HWI_CFG_AUTO_OFFLOAD) && !hwi_offload.recording && hwi_offload.norder > 0;
}

void hwi_plan_note_use(hwi_resident *r)
{
    r->last_use = ++hwi_offload.tick;
    if (!hwi_cfg_int(HWI_CFG_AUTO_OFFLOAD))
        return;
    if (hwi_offload.recording) {
        if (r->order_pos >= 0)
            return;                                /* first use in the step counts */
        if (hwi_offload.norder == hwi_offload.cap_order) {
            int nc = hwi_offload.cap_order ? hwi_offload.cap_order * 2 : 64;
            hwi_resident **no = realloc(hwi_offload.order, (size_t)nc * sizeof *no);
            if (!no) return;
            hwi_offload.order = no;
            hwi_offload.cap_order = nc;
        }
        r->order_pos = hwi_offload.norder;
        hwi_offload.order[hwi_offload.norder++] = r;
    } else if (r->order_pos >= 0) {
        hwi_offload.cursor = r->order_pos;
    }
}

/* Distance (in uses) from the cursor to r's next use along the cyclic order. */
static int distance(const hwi_resident *r)
{
    if (r->order_pos < 0) return hwi_offload.norder + 1;    /* unknown: evict first */
    int d = r->order_pos - hwi_offload.cursor;
    return d <= 0 ? d + hwi_offload.norder : d;
}

hwi_resident *hwi_plan_pick_victim(int device, hwi_tensor *const *keep, int nkeep, int busy_ok)
{
    hwi_resident *best = NULL;
    int use_order = learned();
    for (int i = 0; i < hwi_offload.n; i++) {
        hwi_resident *r = hwi_offload.list[i];
        if (r->t->device != device || !r->t->data || r->pinned_to_device || !r->t->nbytes)
            continue;
        int skip = 0;
        for (int k = 0; k < nkeep; k++) skip |= keep[k] == r->t;
        if (skip || (!busy_ok && !hwi_res_idle(r)))
            continue;
        if (!best) { best = r; continue; }
        if (use_order ? distance(r) > distance(best) : r->last_use < best->last_use)
            best = r;
    }
    return best;
}

void hwi_plan_prefetch_ahead(hwi_resident *r, hwi_tensor *const *keep, int nkeep)
{
    if (!learned() || r->order_pos < 0)
        return;
    int depth = (int)hwi_cfg_int(HWI_CFG_PREFETCH_DEPTH);
    for (int k = 1; k <= depth && k < hwi_offload.norder; k++) {
        hwi_resident *next = hwi_offload.order[(r->order_pos + k) % hwi_offload.norder];
        /* a write-back in flight would make the host wait: fetched on demand instead */
        if (next->t->data || next->wb || next->t->device != r->t->device)
            continue;
        /* a prefetch must not push out what is needed sooner than itself */
        size_t budget = hwi_res_budget(next->t->device);
        hwrt_memory_info m;
        if (hwrt_get_memory_info(next->t->device, &m) != HWRT_SUCCESS)
            return;
        if (m.allocated + next->t->nbytes > budget) {
            /* the victim may still be in use by earlier queued ops: waiting for them is
             * the pipeline's natural pace (the device is behind the host) */
            hwi_resident *v = hwi_plan_pick_victim(next->t->device, keep, nkeep, 1);
            if (!v || distance(v) <= distance(next))
                return;
        }
        if (hwi_res_fetch(next, keep, nkeep, "prefetch") != HWRT_SUCCESS)
            return;                                /* on-demand fetch will report it */
        next->prefetched = 1;
    }
}

void hwi_plan_forget(hwi_resident *r)
{
    for (int i = 0; i < hwi_offload.norder; i++)
        if (hwi_offload.order[i] == r) {
            for (int j = i; j + 1 < hwi_offload.norder; j++) {
                hwi_offload.order[j] = hwi_offload.order[j + 1];
                hwi_offload.order[j]->order_pos = j;
            }
            hwi_offload.norder--;
            break;
        }
}
