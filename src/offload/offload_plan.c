/* Planning: the learned use order of auto_offload, prefetching ahead along it, and the
 * choice of a victim (farthest next use when the order is known, else least recently
 * used) — the swap planning MindSpore and DeepSpeed's parameter prefetch do. */
#include "residency.h"
#include "../runtime/device_ops.h"
#include "../base/config.h"

#include <stdlib.h>

static int learned(void)
{
    return hwi_cfg_int(HWI_CFG_AUTO_OFFLOAD) && !hwi_offload.recording && hwi_offload.norder > 0;
}

void hwi_plan_note_use(hwi_resident *r)
{
    r->last_use = ++hwi_offload.tick;
    r->use_no = ++hwi_offload.uses;
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

/* May r leave the device for another tensor? (on this device, holding a block, not
 * pinned, not an operand of the current op; while prefetching, used after the tensor
 * being prefetched) */
static int candidate(const hwi_resident *r, int device, hwi_tensor *const *keep, int nkeep)
{
    if (r->t->device != device || !r->t->data || r->pinned_to_device || !r->t->nbytes)
        return 0;
    for (int k = 0; k < nkeep; k++)
        if (keep[k] == r->t) return 0;
    return !hwi_offload.horizon || distance(r) > hwi_offload.horizon;
}

/* Is r a better victim than best? With the learned order the farthest next use
 * (Belady's choice: the fewest bytes moved), else, and between tensors equally far (those
 * the order does not know), the least recently used. */
static int better(const hwi_resident *r, const hwi_resident *best, int use_order)
{
    if (!best) return 1;
    int dr = use_order ? distance(r) : 0, db = use_order ? distance(best) : 0;
    return dr != db ? dr > db : r->last_use < best->last_use;
}

int hwi_plan_prefer_busy(const hwi_resident *busy, const hwi_resident *idle)
{
    if (!learned()) return 0;
    int window = (int)hwi_cfg_int(HWI_CFG_PREFETCH_DEPTH) + 1;
    return distance(idle) <= window && distance(busy) > distance(idle);
}

hwi_resident *hwi_plan_pick_victim(int device, hwi_tensor *const *keep, int nkeep, int busy_ok)
{
    hwi_resident *best = NULL;
    int use_order = learned();
    for (int i = 0; i < hwi_offload.n; i++) {
        hwi_resident *r = hwi_offload.list[i];
        if (!candidate(r, device, keep, nkeep) || (!busy_ok && !hwi_res_idle(r)))
            continue;
        if (better(r, best, use_order)) best = r;
    }
    return best;
}

/* Is r a better block to hand over than best (both hold the fetch)? Outside the prefetch
 * window (prefetch_depth + 1 uses ahead, with a learned order): the smaller block (a
 * larger one stays for a larger fetch, which no smaller block can take), then the one
 * whose last use is oldest: the device is done with it first, so the copy into its
 * block can start earliest and overlaps the most compute (Belady's farthest next use
 * would take the tensor used last, whose block frees only when the op right before the
 * fetched tensor's has run: the copy then waits for that op, and the op after it for
 * the copy). Within the window, the farthest next use, then the smaller block. */
static int better_handover(const hwi_resident *r, size_t rb, const hwi_resident *best,
                           size_t bb, int use_order, int window)
{
    if (!best) return 1;
    int rs = use_order && distance(r) <= window, bs = use_order && distance(best) <= window;
    if (rs != bs) return bs;
    if (rs && distance(r) != distance(best)) return distance(r) > distance(best);
    if (rb != bb) return rb < bb;
    return !rs && r->last_use < best->last_use;
}

hwi_resident *hwi_plan_pick_handover(int device, size_t bytes, hwi_tensor *const *keep,
                                     int nkeep)
{
    hwi_resident *best = NULL;
    size_t best_block = 0;
    int use_order = learned();
    int window = (int)hwi_cfg_int(HWI_CFG_PREFETCH_DEPTH) + 1;
    for (int i = 0; i < hwi_offload.n; i++) {
        hwi_resident *r = hwi_offload.list[i];
        if (!candidate(r, device, keep, nkeep) || r->wb) continue;
        size_t b = hwi_res_block_bytes(r);
        if (b < bytes) continue;
        if (better_handover(r, b, best, best_block, use_order, window)) {
            best = r;
            best_block = b;
        }
    }
    return best;
}

/* Can `bytes` be placed on the device without evicting a tensor used before position
 * hwi_offload.horizon uses ahead (set by the caller; candidate() applies it)? Room the
 * pool can place without a device sync, or free budget plus the blocks of later-used
 * tensors, or one later-used block that can be handed over. */
static int room_beyond(int device, size_t bytes, hwi_tensor *const *keep, int nkeep)
{
    if (hwi_res_fits(device, bytes)) return 1;
    hwrt_memory_info m;
    if (hwrt_get_memory_info(device, &m) != HWRT_SUCCESS) return 0;
    /* free budget the pool cannot place now counts with the blocks evicted next to it
     * (make_room evicts until the pool can place the block) */
    size_t budget = hwi_res_budget(device);
    size_t avail = m.allocated < budget ? budget - m.allocated : 0;
    for (int i = 0; i < hwi_offload.n; i++) {
        hwi_resident *r = hwi_offload.list[i];
        if (!candidate(r, device, keep, nkeep))
            continue;
        size_t b = hwi_res_block_bytes(r);
        if (b >= bytes) return 1;
        avail += b;
        if (avail >= bytes) return 1;
    }
    return 0;
}

/* Prefetch along the learned order, by bytes: the tensors after r are fetched while
 * the bytes of those already in flight plus the next stay within prefetch_depth times
 * the order's mean tensor size (for tensors of one size: prefetch_depth tensors ahead),
 * and only into free budget or the memory of tensors used after it (a prefetch never
 * pushes out what is needed sooner). Tensors already on the device are passed over, up
 * to a budget's worth of tensors ahead. */
void hwi_plan_prefetch_ahead(hwi_resident *r, hwi_tensor *const *keep, int nkeep)
{
    if (!learned() || r->order_pos < 0)
        return;
    int depth = (int)hwi_cfg_int(HWI_CFG_PREFETCH_DEPTH);
    if (depth <= 0) return;
    size_t sum = 0;
    for (int i = 0; i < hwi_offload.norder; i++) sum += hwi_offload.order[i]->t->nbytes;
    size_t inwin = sum / (size_t)hwi_offload.norder * (size_t)depth, inflight = 0, ahead = 0;
    size_t budget = hwi_res_budget(r->t->device);
    for (int k = 1; k < hwi_offload.norder; k++) {
        hwi_resident *next = hwi_offload.order[(r->order_pos + k) % hwi_offload.norder];
        if (next->t->device != r->t->device) continue;
        ahead += next->t->nbytes;
        if (ahead > budget) return;                /* beyond what the device holds */
        if (next->t->data) {
            if (next->fetch && !next->fetch->settled && !next->fetch->abandoned &&
                hwi_dev_event_query(next->fetch->dev, next->fetch->done) == HWRT_ERROR_NOT_READY)
                inflight += next->t->nbytes;       /* still on the link */
            if (inflight >= inwin) return;
            continue;
        }
        /* a write-back in flight would make the host wait: fetched on demand instead */
        if (next->wb) continue;
        if (inflight + next->t->nbytes > inwin && inflight > 0) return;
        int hole;
        /* only tensors used after next may make room for it: in the fetch's size, the
         * room check and the fetch */
        hwi_offload.horizon = distance(next);
        /* the size the fetch will ask for: its class block, or its own size in a hole */
        size_t want = hwi_plan_fetch_bytes(next, keep, nkeep, &hole);
        hwrt_status st = room_beyond(next->t->device, want, keep, nkeep)
                             ? hwi_res_fetch(next, keep, nkeep, "prefetch")
                             : HWRT_ERROR_OUT_OF_MEMORY;
        hwi_offload.horizon = 0;
        if (st != HWRT_SUCCESS)
            return;                                /* on-demand fetch will report it */
        next->prefetched = 1;
        inflight += next->t->nbytes;
    }
}

/* The part of the budget the offloadable tensors can have: the budget less the device
 * memory of everything else (activations, tensors not under the manager). */
static size_t offload_share(int device)
{
    hwrt_memory_info m;
    if (hwrt_get_memory_info(device, &m) != HWRT_SUCCESS) return 0;
    size_t mine = 0;
    for (int i = 0; i < hwi_offload.n; i++) {
        const hwi_resident *o = hwi_offload.list[i];
        if (o->t->device == device && o->t->data) mine += hwi_res_block_bytes(o);
    }
    size_t other = m.allocated > mine ? m.allocated - mine : 0, budget = hwi_res_budget(device);
    return budget > other ? budget - other : 0;
}

size_t hwi_plan_fetch_bytes(const hwi_resident *r, hwi_tensor *const *keep, int nkeep,
                            int *hole)
{
    const hwi_tensor *t = r->t;
    size_t bytes = hwi_plan_block_bytes(r);
    *hole = 0;
    if (bytes > t->nbytes && !hwi_res_fits(t->device, bytes)) {
        hwi_resident *h = hwi_plan_pick_handover(t->device, t->nbytes, keep, nkeep);
        *hole = hwi_res_fits(t->device, t->nbytes) ||
                (h && h->hole_block && hwi_res_block_bytes(h) < bytes);
        if (*hole) bytes = t->nbytes;
    }
    return bytes;
}

size_t hwi_plan_block_bytes(const hwi_resident *r)
{
    size_t n = r->t->nbytes, max = 0;
    if (!learned() || r->order_pos < 0) return n;
    for (int i = 0; i < hwi_offload.norder; i++) {
        const hwi_tensor *o = hwi_offload.order[i]->t;
        if (o->device == r->t->device && o->nbytes > max) max = o->nbytes;
    }
    if (!max || n < max / 2 || n >= max) return n;
    /* one size class only where the offloadable share holds two class blocks: with one
     * (D = 512 in hwrt-bench offload: 7 MiB for weights of 3 and 4 MiB) every fetch would
     * take the block of the tensor used right before and wait for its op, compute and
     * transfer in series; exact sizes keep a 3 MiB block beside the 4 MiB one */
    return offload_share(r->t->device) >= 2 * max ? max : n;
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
