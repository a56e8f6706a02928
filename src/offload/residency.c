/* Residency manager: evictions through the D2H engine to the host tier (pinned when
 * enable_pinned_mem) or to the disk tier's file, fetches through the H2D engine,
 * stream-ordered so compute waits on the device and not on the host.
 *
 * The rule every transition follows: a tensor's location and clean state change only
 * once the copy that justifies them has completed successfully. A synchronous copy (an
 * eviction the host waits for, a disk fetch) is judged by its stream's synchronization;
 * an asynchronous one (a host-tier fetch, a stream-ordered write-back) is an hwi_xfer
 * whose outcome hwi_res_settle applies when its `done` event is reached. Until then the
 * previous copy stays authoritative. */
#include "residency.h"
#include "../base/config.h"
#include "../runtime/device_ops.h"
#include "../runtime/handle.h"
#include "../base/log.h"
#include "../base/status.h"
#include "../mem/pool.h"
#include "../mem/pool_headroom.h"
#include "../exec/dispatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

hwi_offload_mgr hwi_offload = {.mu = PTHREAD_MUTEX_INITIALIZER};
#define MGR hwi_offload

uint64_t hwi_res_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double hwi_res_ms_since(uint64_t t0) { return (double)(hwi_res_now_ns() - t0) / 1e6; }

const char *hwi_res_describe(const hwi_tensor *t, char *buf, size_t len)
{
    char shape[96] = "", size[32];
    for (int i = 0; i < t->ndim; i++)
        snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld", i ? "," : "",
                 (long long)t->shape[i]);
    snprintf(buf, len, "tensor %p (%s[%s], %s)", (void *)t->handle, hwrt_dtype_name(t->dtype),
             shape, hwi_fmt_bytes(size, sizeof size, t->nbytes));
    return buf;
}

/* The manager's streams on a device: offload's part of the device (device.h), made on
 * first use (under MGR.mu), released when the device closes. */
typedef struct res_engine {
    hwi_stream *evict, *fetch;
} res_engine;

static hwrt_status close_engine(hwi_device *d, void *part)
{
    (void)d;
    res_engine *e = part;
    hwrt_status first = HWRT_SUCCESS, st = HWRT_SUCCESS;
    /* ours is the handle's reference: the stream goes with it (its work finished first) */
    if (e->evict && hwi_handle_kill(e->evict->handle, HWI_H_STREAM, &st)) first = st;
    st = HWRT_SUCCESS;
    if (e->fetch && hwi_handle_kill(e->fetch->handle, HWI_H_STREAM, &st) && first == HWRT_SUCCESS)
        first = st;
    free(e);
    return first;
}

static const hwi_dev_part_ops engine_part = {close_engine, NULL};

static res_engine *engine_of(int device)
{
    hwi_device *d = hwi_device_if_open(device);
    return d ? hwi_device_part(d, HWI_PART_OFFLOAD) : NULL;
}

static hwrt_status engine_streams(int device)
{
    if (engine_of(device))
        return HWRT_SUCCESS;
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_get(device, &d));
    res_engine *e = calloc(1, sizeof *e);
    if (!e)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "offload: host out of memory");
    hwrt_status st = hwi_stream_create_on(device, &e->evict);
    if (st == HWRT_SUCCESS) st = hwi_stream_create_on(device, &e->fetch);
    if (st == HWRT_SUCCESS && hwi_device_attach(d, HWI_PART_OFFLOAD, e, &engine_part) == e)
        return HWRT_SUCCESS;
    hwrt_status ignored = HWRT_SUCCESS;
    if (e->evict) hwi_handle_kill(e->evict->handle, HWI_H_STREAM, &ignored);
    if (e->fetch) hwi_handle_kill(e->fetch->handle, HWI_H_STREAM, &ignored);
    free(e);
    return st;                     /* SUCCESS: another attach won (callers hold MGR.mu) */
}

static hwi_stream *evict_stream(int device) { return engine_of(device)->evict; }
hwi_stream *hwi_res_fetch_stream(int device) { return engine_of(device)->fetch; }

/* The device a tensor's events belong to (open while the tensor lives). */
static const hwi_device *tdev(const hwi_tensor *t) { return hwi_device_if_open(t->device); }

hwrt_status hwi_res_event(hwi_event *view, hwrt_bevent *be, hwi_stream *s, int record)
{
    view->be = be;
    view->handle = (hwrt_event)(void *)view;  /* a key unique to this event */
    view->dev = s->dev;
    view->device = s->device;
    view->internal = 1;
    hwi_work w = {.kind = record ? HWI_WORK_EVENT_RECORD : HWI_WORK_EVENT_WAIT, .stream = s,
                  .name = record ? "OffloadEventRecord" : "OffloadEventWait"};
    w.u.event.ev = view;
    return hwi_dispatch(&w);
}

static hwrt_status new_event(int device, hwrt_bevent **out)
{
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_get(device, &d));
    return hwi_dev_event_create(d, HWRT_EVENT_DISABLE_TIMING, out);
}

static int reached(const hwi_device *d, hwrt_bevent *e)
{
    return hwi_dev_event_query(d, e) != HWRT_ERROR_NOT_READY;
}

/* ---- uses: one event per stream ---- */

hwrt_status hwi_res_note_use(hwi_resident *r, hwi_stream *s)
{
    hwi_res_use *u = NULL;
    for (int i = 0; i < HWI_RES_USES && !u; i++)
        if (r->use[i].ev && r->use[i].s == s->handle) u = &r->use[i];
    for (int i = 0; i < HWI_RES_USES && !u; i++)
        if (!r->use[i].ev) {
            HWI_TRY(new_event(r->t->device, &r->use[i].ev));
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

static int uses_done(const hwi_resident *r)
{
    for (int i = 0; i < HWI_RES_USES; i++)
        if (r->use[i].ev && !reached(tdev(r->t), r->use[i].ev)) return 0;
    return 1;
}

static void wait_uses(const hwi_resident *r)
{
    for (int i = 0; i < HWI_RES_USES; i++)
        if (r->use[i].ev) hwi_dev_event_synchronize(tdev(r->t), r->use[i].ev);
}

/* s waits for every use of r (before something else writes r's block). */
static hwrt_status order_after_uses(hwi_resident *r, hwi_stream *s)
{
    for (int i = 0; i < HWI_RES_USES; i++)
        if (r->use[i].ev) HWI_TRY(hwi_res_event(&r->use[i].view, r->use[i].ev, s, 0));
    return HWRT_SUCCESS;
}

/* ---- transfers ---- */

static void xfer_landed(void *arg) { atomic_store(&((hwi_xfer *)arg)->landed, 1); }

static hwrt_status xfer_new(int device, void *block, hwi_xfer **out)
{
    hwi_xfer *x = calloc(1, sizeof *x);
    if (!x)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "offload: host out of memory");
    hwrt_status st = new_event(device, &x->done);
    if (st != HWRT_SUCCESS) { free(x); return st; }
    x->dev = hwi_device_if_open(device);
    x->block = block;
    *out = x;
    return HWRT_SUCCESS;
}

/* Queue the confirmation and the done record on s, after the copy. On failure the xfer
 * is abandoned (done, not landed) once s has drained, so nobody waits for it forever. */
static hwrt_status xfer_close(hwi_xfer *x, hwi_stream *s)
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

static int xfer_done(const hwi_xfer *x) { return x->abandoned || reached(x->dev, x->done); }

static void xfer_wait(const hwi_xfer *x)
{
    if (!x->abandoned) hwi_dev_event_synchronize(x->dev, x->done);
}

static void xfer_free(hwi_xfer *x)
{
    if (!x) return;
    if (x->done) hwi_dev_event_destroy(x->dev, x->done);
    hwi_dispatch_forget_event(&x->done_ev);
    free(x);
}

/* Nobody needs x any more, but its confirmation may still run: free it once done. */
static void retire(hwi_xfer *x)
{
    if (!x) return;
    if (xfer_done(x)) { xfer_free(x); return; }
    x->next = MGR.retired;
    MGR.retired = x;
}

void hwi_res_free_retired(int block)
{
    hwi_xfer **p = &MGR.retired;
    while (*p) {
        hwi_xfer *x = *p;
        if (block) xfer_wait(x);
        if (xfer_done(x)) { *p = x->next; xfer_free(x); }
        else p = &x->next;
    }
}

hwrt_status hwi_res_wait_ready(hwi_resident *r, hwi_stream *s)
{
    if (!r->fetch || r->fetch->abandoned) return HWRT_SUCCESS;
    return hwi_res_event(&r->fetch->done_ev, r->fetch->done, s, 0);
}

/* ---- settling outcomes ---- */

static void drop_block(hwi_resident *r)
{
    MGR.stats.device_bytes -= r->t->nbytes;
    r->t->data = NULL;
}

static int authoritative_off_device(const hwi_resident *r)
{
    return r->has_host ? HWI_LOC_HOST : HWI_LOC_DISK;
}

static void resolve_wb(hwi_resident *v);

/* r's fetch is done: confirm it, or drop the block it never filled. */
static void resolve_fetch(hwi_resident *r)
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
    wait_uses(r);
    r->fetch = NULL;
    /* the block may be a written victim's, lent while its write-back was in flight:
     * that write-back decides first (it may take the block back) */
    for (int i = 0; i < MGR.n; i++) {
        hwi_resident *v = MGR.list[i];
        if (v->wb && v->wb->block == x->block) {
            xfer_wait(v->wb);
            resolve_wb(v);
            break;
        }
    }
    if (r->t->data == x->block) {
        hwi_dispatch_forget(x->block);
        hwi_pool_free(x->block, "offload: a fetch that did not land");
        drop_block(r);
    }
    r->dirty = 0;                     /* writes queued after the fetch were skipped */
    r->loc = authoritative_off_device(r);
    xfer_free(x);
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
            xfer_wait(h->fetch);
            if (atomic_load(&h->fetch->landed)) {
                valid = 0;                /* cannot happen: it waited for the write-back */
                hwi_log(HWI_LOG_ERROR, "offload: a fetch landed in a block whose write-back "
                        "failed; the older copy is kept");
            }
        }
        if (valid && h) {
            wait_uses(h);
            if (h->fetch) {
                if (!h->fetch->settled) MGR.unsettled--;
                xfer_free(h->fetch);
                h->fetch = NULL;
            }
            drop_block(h);
            h->dirty = 0;
            h->loc = authoritative_off_device(h);
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
            v->loc = authoritative_off_device(v);
        }
    }
    if (x->after) xfer_free(x->after);
    xfer_free(x);
}

void hwi_res_settle(void)
{
    if (!MGR.unsettled || !hwi_runtime_active()) {
        if (MGR.retired && hwi_runtime_active()) hwi_res_free_retired(0);
        return;
    }
    for (int i = 0; i < MGR.n; i++) {
        hwi_resident *v = MGR.list[i];
        if (v->wb && xfer_done(v->wb)) resolve_wb(v);
    }
    for (int i = 0; i < MGR.n; i++) {
        hwi_resident *r = MGR.list[i];
        if (r->fetch && !r->fetch->settled && xfer_done(r->fetch)) resolve_fetch(r);
    }
    hwi_res_free_retired(0);
}

/* ---- idle ---- */

/* Idle: every stream's last use of the tensor and any fetch into it have completed
 * (later work on the same streams does not matter). Covers work queued before the
 * tensor became offloadable (set_offloadable notes the tensor's earlier users). */
int hwi_res_idle(const hwi_resident *r)
{
    if (r->fetch && !r->fetch->settled && !xfer_done(r->fetch)) return 0;
    return uses_done(r);
}

hwrt_status hwi_res_wait_idle(hwi_resident *r)
{
    uint64_t t0 = hwi_res_now_ns();
    if (r->fetch) xfer_wait(r->fetch);
    wait_uses(r);
    hwi_res_settle();
    hwi_dispatch_span(HWI_PROF_OFFLOAD_STALL, "wait for a victim's queued work",
                      r->t->device, t0, hwi_res_now_ns(), 0);
    return HWRT_SUCCESS;
}

void hwi_res_quiesce(hwi_resident *r, int uses)
{
    if (r->fetch) xfer_wait(r->fetch);
    if (r->wb) xfer_wait(r->wb);
    if (uses) wait_uses(r);
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
        retire(r->fetch);
    }
    r->fetch = NULL;
    for (int i = 0; i < HWI_RES_USES; i++)
        if (r->use[i].ev) {
            hwi_dev_event_destroy(tdev(r->t), r->use[i].ev);
            hwi_dispatch_forget_event(&r->use[i].view);
            r->use[i].ev = NULL;
        }
}

/* ---- budget ---- */

/* The device commits memory in pages and the pool keeps segments: blocks of 1-4 MiB
 * next to activations in segments of their own can leave it unable to place a block
 * that the budget still has room for, and then the allocation's last resort
 * synchronizes the whole device (the host waits for all queued work) and releases the
 * cache before it fails. So room is made until the pool itself can place the block. */
int hwi_res_fits(int device, size_t bytes)
{
    hwrt_memory_info m;
    hwi_device *d = hwi_device_if_open(device);
    if (!d || hwrt_get_memory_info(device, &m) != HWRT_SUCCESS) return 0;
    return m.allocated + bytes <= hwi_res_budget(device) &&
           hwi_pool_headroom(d, NULL, bytes) >= bytes;
}

size_t hwi_res_budget(int device)
{
    size_t cap = (size_t)hwi_cfg_int(HWI_CFG_MAX_DEVICE_MEMORY);
    hwrt_memory_info m;
    if (hwrt_get_memory_info(device, &m) != HWRT_SUCCESS)
        return cap;
    size_t dev = m.total - m.overhead;
    return cap && cap < dev ? cap : dev;
}

hwrt_status hwi_res_tier_oom(int device, size_t bytes, const char *api)
{
    char a[32], b[32], c[32], d[32], e[32], f[32], g[32];
    hwrt_memory_info m = {0};
    hwrt_get_memory_info(device, &m);
    MGR.stats.device_budget = hwi_res_budget(device);
    return hwi_err(HWRT_ERROR_OUT_OF_MEMORY,
                   "%s: cannot place %s on device %d: every tier is full — device %s allocated of "
                   "a %s budget (no idle offloadable tensor left to evict), host tier %s of "
                   "offload_cpu_size %s, disk tier %s of offload_disk_size %s; raise "
                   "offload_cpu_size or offload_disk_size, mark more tensors offloadable, or "
                   "lower the batch size", api, hwi_fmt_bytes(a, sizeof a, bytes), device,
                   hwi_fmt_bytes(b, sizeof b, m.allocated),
                   hwi_fmt_bytes(c, sizeof c, hwi_res_budget(device)),
                   hwi_fmt_bytes(d, sizeof d, MGR.host_used),
                   hwi_fmt_bytes(e, sizeof e, (size_t)hwi_cfg_int(HWI_CFG_OFFLOAD_CPU_SIZE)),
                   hwi_fmt_bytes(f, sizeof f, MGR.disk_used),
                   hwi_fmt_bytes(g, sizeof g, (size_t)hwi_cfg_int(HWI_CFG_OFFLOAD_DISK_SIZE)));
}

static hwrt_status staging(size_t bytes)
{
    if (MGR.staging_size >= bytes)
        return HWRT_SUCCESS;
    hwrt_host_free(MGR.staging);
    MGR.staging = NULL;
    MGR.staging_size = 0;
    HWI_TRY(hwrt_host_alloc(&MGR.staging, bytes, HWRT_HOST_PINNED));
    MGR.staging_size = bytes;
    return HWRT_SUCCESS;
}

/* ---- eviction ---- */

/* Write the device copy to the host tier, else the disk tier, the host waiting for the
 * copy. Nothing changes (and nothing stays allocated) unless it completed. */
static hwrt_status save_copy(hwi_resident *r, const char *api)
{
    hwi_tensor *t = r->t;
    size_t n = t->nbytes;
    hwi_stream *s = evict_stream(t->device);
    size_t cpu = (size_t)hwi_cfg_int(HWI_CFG_OFFLOAD_CPU_SIZE);
    size_t disk = (size_t)hwi_cfg_int(HWI_CFG_OFFLOAD_DISK_SIZE);
    if (r->host || MGR.host_used + n <= cpu) {
        int fresh = !r->host;
        int pin = fresh ? (int)hwi_cfg_int(HWI_CFG_ENABLE_PINNED_MEM) : r->host_pinned;
        void *h = r->host;
        if (fresh) HWI_TRY(hwrt_host_alloc(&h, n, pin ? HWRT_HOST_PINNED : HWRT_HOST_DEFAULT));
        hwrt_status st = hwrt_memcpy_async(h, t->data, n, HWRT_MEMCPY_DEVICE_TO_HOST, s->handle);
        if (st == HWRT_SUCCESS) st = hwi_stream_sync(s, api);
        if (st != HWRT_SUCCESS) {
            if (fresh) hwrt_host_free(h);          /* a retry must not leak it */
            return st;
        }
        if (fresh) {
            r->host = h;
            r->host_pinned = pin;
            MGR.host_used += n;
        }
        r->has_host = 1;
        MGR.stats.evictions_to_host++;
        MGR.stats.bytes_to_host += n;
        if (r->has_disk) {                         /* the file region is stale now */
            hwi_disk_release(&r->disk);
            r->has_disk = 0;
            MGR.disk_used -= n;
        }
        r->loc = HWI_LOC_HOST;
        return HWRT_SUCCESS;
    }
    if (r->has_disk || MGR.disk_used + n <= disk) {
        HWI_TRY(staging(n));
        HWI_TRY(hwrt_memcpy_async(MGR.staging, t->data, n, HWRT_MEMCPY_DEVICE_TO_HOST,
                                  s->handle));
        HWI_TRY(hwi_stream_sync(s, api));
        char what[160];
        int had = r->has_disk;
        hwrt_status st = hwi_disk_write(&r->disk, MGR.staging, n, api,
                                        hwi_res_describe(t, what, sizeof what));
        if (st != HWRT_SUCCESS) {
            if (had) { r->has_disk = 0; MGR.disk_used -= n; }
            return st;                             /* the device copy stays */
        }
        if (!had) MGR.disk_used += n;
        r->has_disk = 1;
        MGR.stats.evictions_to_disk++;
        MGR.stats.bytes_to_disk += n;
        r->loc = HWI_LOC_DISK;
        return HWRT_SUCCESS;
    }
    return hwi_res_tier_oom(t->device, n, api);
}

hwrt_status hwi_res_evict(hwi_resident *r, const char *api)
{
    hwi_tensor *t = r->t;
    if (!t->data)
        return HWRT_SUCCESS;                       /* already off the device */
    if (!hwi_res_idle(r))
        return hwi_err(HWRT_ERROR_DEVICE_BUSY, "%s: the tensor is still used by queued work; "
                       "synchronize its streams first", api);
    hwi_res_settle();                              /* a failed fetch leaves no block */
    if (!t->data)
        return HWRT_SUCCESS;
    HWI_TRY(engine_streams(t->device));
    uint64_t t0 = hwi_res_now_ns();
    if (r->dirty || (!r->has_host && !r->has_disk)) {
        HWI_TRY(save_copy(r, api));
    } else {
        MGR.stats.clean_evictions++;
        r->loc = authoritative_off_device(r);
    }
    r->dirty = 0;
    retire(r->fetch);                              /* done and settled: idle */
    r->fetch = NULL;
    hwi_dispatch_forget(t->data);          /* the pool orders any reuse of the block */
    HWI_TRY(hwi_pool_free(t->data, api));
    t->data = NULL;
    MGR.stats.device_bytes -= t->nbytes;
    MGR.stats.evict_ms += hwi_res_ms_since(t0);
    hwi_dispatch_span(HWI_PROF_OFFLOAD_EVICT, "evict", t->device, t0, hwi_res_now_ns(),
                      t->nbytes);
    if (hwi_log_level() >= HWI_LOG_DEBUG) {
        char what[160];
        hwi_res_describe(t, what, sizeof what);
        hwi_log(HWI_LOG_DEBUG, "offload: evicted %s from device %d to the %s tier (%s)", what,
                t->device, r->has_host ? "host" : "disk", api);
    }
    return HWRT_SUCCESS;
}

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
    hwi_stream *es = evict_stream(t->device);
    int fresh = !v->host;
    void *h = v->host;
    if (fresh) HWI_TRY(hwrt_host_alloc(&h, n, HWRT_HOST_PINNED));
    hwi_xfer *x = NULL;
    hwrt_status st = xfer_new(t->device, t->data, &x);
    if (st == HWRT_SUCCESS) st = order_after_uses(v, es);
    if (st == HWRT_SUCCESS) st = hwi_res_wait_ready(v, es);
    if (st == HWRT_SUCCESS) st = hwrt_memcpy_async(h, t->data, n, HWRT_MEMCPY_DEVICE_TO_HOST,
                                                   es->handle);
    if (st != HWRT_SUCCESS) {                      /* nothing that matters was queued */
        if (fresh) hwrt_host_free(h);
        if (x) xfer_free(x);
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
    st = xfer_close(x, es);
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
        xfer_free(x);
        return st;
    }
    if (!x->after) retire(old_fetch);              /* landed or absent: not needed */
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
static int hand_over(hwi_resident *v, size_t bytes, hwi_stream *order, void **out)
{
    if (hwi_res_block_bytes(v) < bytes)
        return 0;
    int clean = !v->dirty && (v->has_host || v->has_disk);
    if (!clean && !can_write_back_in_order(v))
        return 0;
    hwi_tensor *t = v->t;
    uint64_t t0 = hwi_res_now_ns();
    if (clean) {
        if (order_after_uses(v, order) != HWRT_SUCCESS) return 0;
        if (hwi_res_wait_ready(v, order) != HWRT_SUCCESS) return 0;
        if (v->fetch && !v->fetch->settled) MGR.unsettled--;  /* its outcome no longer matters */
        retire(v->fetch);
        v->fetch = NULL;
        v->loc = authoritative_off_device(v);
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

/* Evict until `bytes` more fit the budget. Victims are chosen by use (offload_plan.c's
 * rule) among those that cost the host no wait: idle tensors, and (with `order`)
 * tensors still used by queued work whose block can hold `bytes`, which hand it over in
 * `order`'s stream order (*handed set: nothing to allocate); an idle one goes first
 * unless it is needed within the prefetch window. Only when neither exists does the
 * host wait for the best victim (backpressure, counted in victim_waits). */
static hwrt_status make_room(int device, size_t bytes, hwi_tensor *const *keep, int nkeep,
                             hwi_stream *order, const char *api, void **handed)
{
    size_t budget = hwi_res_budget(device);
    for (;;) {
        hwrt_memory_info m;
        HWI_TRY(hwrt_get_memory_info(device, &m));
        if (hwi_res_fits(device, bytes))
            return HWRT_SUCCESS;
        hwi_resident *v = hwi_plan_pick_victim(device, keep, nkeep, 0);
        /* a busy victim that can leave in stream order costs the host nothing either:
         * it goes first when the idle one is needed soon (hwi_plan_prefer_busy) */
        hwi_resident *h = order ? hwi_plan_pick_handover(device, bytes, keep, nkeep) : NULL;
        uint64_t h_use = h ? h->last_use : 0;
        if (h && (!v || hwi_plan_prefer_busy(h, v)) && hand_over(h, bytes, order, handed)) {
            if (h_use > MGR.victim_tick) MGR.victim_tick = h_use;
            return HWRT_SUCCESS;
        }
        if (!v) {
            /* within the budget but the pool cannot place it without a device sync,
             * and no victim can leave without the host waiting: let the pool try
             * first (not for a prefetch, which gives up) */
            if (!hwi_offload.horizon && m.allocated + bytes <= budget)
                return HWRT_SUCCESS;
            v = hwi_plan_pick_victim(device, keep, nkeep, 1);
            if (!v)
                return hwi_res_tier_oom(device, bytes, api);
            MGR.stats.victim_waits++;
            HWI_TRY(hwi_res_wait_idle(v));
        }
        HWI_TRY(hwi_res_evict(v, api));
    }
}

hwrt_status hwi_res_alloc(hwi_device *d, size_t bytes, hwi_tensor *const *keep, int nkeep,
                          hwi_stream *order, const char *api, void **out)
{
    if (order) HWI_TRY(engine_streams(d->id));
    for (;;) {
        void *handed = NULL;
        HWI_TRY(make_room(d->id, bytes, keep, nkeep, order, api, &handed));
        if (handed) {
            *out = handed;
            return HWRT_SUCCESS;
        }
        hwrt_status st = hwi_pool_alloc_tensor(d, bytes, out);
        if (st != HWRT_ERROR_OUT_OF_MEMORY)
            return st;
        /* within the budget but the device itself is full (page rounding, other
         * processes): free one more tensor's memory and try again */
        hwi_resident *v = hwi_plan_pick_victim(d->id, keep, nkeep, 1);
        if (!v)
            return st;                             /* the allocator's own sentence */
        if (!hwi_res_idle(v)) MGR.stats.victim_waits++;
        HWI_TRY(hwi_res_wait_idle(v));
        HWI_TRY(hwi_res_evict(v, api));
    }
}

/* ---- fetch ---- */

hwrt_status hwi_res_fetch(hwi_resident *r, hwi_tensor *const *keep, int nkeep,
                          const char *api)
{
    hwi_tensor *t = r->t;
    if (t->nbytes == 0) {              /* no bytes (and no block): nothing to move */
        r->loc = HWI_LOC_DEVICE;
        return HWRT_SUCCESS;
    }
    if (r->wb) {
        /* its data is in flight to the host tier: wait for the write-back to settle
         * (it may give the block back, and then nothing needs fetching) */
        xfer_wait(r->wb);
        hwi_res_settle();
        if (t->data) return HWRT_SUCCESS;
    }
    HWI_TRY(engine_streams(t->device));
    hwi_tensor *self[1] = {t};
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_get(t->device, &d));
    uint64_t t0 = hwi_res_now_ns();
    void *p;
    hwi_stream *fs = hwi_res_fetch_stream(t->device);
    int from_host = r->has_host;
    char what[160];
    hwi_res_describe(t, what, sizeof what);
    /* the memory is first written by the fetch stream: victims may leave in its order */
    MGR.victim_tick = 0;
    HWI_TRY(hwi_res_alloc(d, hwi_plan_block_bytes(r), keep ? keep : self, keep ? nkeep : 1,
                          fs, api, &p));
    r->wait_tick = MGR.victim_tick;
    r->window_pending = 1;
    hwi_xfer *x = NULL;
    hwrt_status st = HWRT_SUCCESS;
    if (!from_host) {                 /* read and verify before anything is queued */
        uint64_t h0 = hwi_res_now_ns();
        st = staging(t->nbytes);
        if (st == HWRT_SUCCESS) st = hwi_disk_read(&r->disk, MGR.staging, api, what);
        hwi_dispatch_span(HWI_PROF_OFFLOAD_STALL, "disk read", t->device, h0,
                          hwi_res_now_ns(), t->nbytes);
    }
    if (st == HWRT_SUCCESS) st = xfer_new(t->device, p, &x);
    if (st != HWRT_SUCCESS) {
        /* nothing was queued, but p may be a block lent by a write-back still in flight
         * (fs waits for it): as an abandoned fetch, resolve_fetch lets that write-back
         * decide who keeps p */
        hwi_xfer *hold = calloc(1, sizeof *hold);
        hwi_dev_stream_synchronize(fs->dev, fs->bs);
        if (!hold) {
            hwi_res_settle();
            hwi_pool_free(p, api);
            return st;
        }
        hold->abandoned = 1;
        hold->block = p;
        t->data = p;
        MGR.stats.device_bytes += t->nbytes;
        r->fetch = hold;
        MGR.unsettled++;
        resolve_fetch(r);
        return st;
    }
    t->data = p;
    MGR.stats.device_bytes += t->nbytes;
    r->fetch = x;
    MGR.unsettled++;
    hwi_log(HWI_LOG_DEBUG, "offload: fetching %s from the %s tier to device %d (%s)", what,
            from_host ? "host" : "disk", t->device, api);
    if (from_host) {
        uint64_t h0 = hwi_res_now_ns();
        st = hwrt_memcpy_async(p, r->host, t->nbytes, HWRT_MEMCPY_HOST_TO_DEVICE, fs->handle);
        if (!r->host_pinned) {        /* pageable: the host itself waited for the copy */
            MGR.stats.stall_ms += hwi_res_ms_since(h0);
            hwi_dispatch_span(HWI_PROF_OFFLOAD_STALL, "pageable fetch", t->device, h0,
                              hwi_res_now_ns(), t->nbytes);
        }
        MGR.stats.fetches_from_host++;
        MGR.stats.bytes_from_host += t->nbytes;
    } else {
        st = hwrt_memcpy_async(p, MGR.staging, t->nbytes, HWRT_MEMCPY_HOST_TO_DEVICE, fs->handle);
        MGR.stats.fetches_from_disk++;
        MGR.stats.bytes_from_disk += t->nbytes;
    }
    if (st != HWRT_SUCCESS) {
        hwi_dev_stream_synchronize(fs->dev, fs->bs);
        x->abandoned = 1;
    } else {
        st = xfer_close(x, fs);
    }
    if (st == HWRT_SUCCESS && !from_host)
        st = hwi_stream_sync(fs, api);    /* the bounce buffer is reused by the next read */
    if (st != HWRT_SUCCESS || !from_host) {
        if (st != HWRT_SUCCESS && !xfer_done(x)) xfer_wait(x);
        hwi_res_settle();                 /* a fetch that did not land drops its block */
        if (st == HWRT_SUCCESS && !t->data)
            st = hwi_err(HWRT_ERROR_DEVICE_FAULT, "%s: fetching %s did not complete (device "
                         "fault)", api, what);
        if (st != HWRT_SUCCESS) return st;
    }
    r->loc = HWI_LOC_DEVICE;
    r->dirty = 0;
    /* fetched to be used soon: least-recently-used eviction must not pick it first
     * (a prefetched tensor would otherwise carry its last step's tick) */
    r->last_use = ++MGR.tick;
    MGR.stats.fetch_ms += hwi_res_ms_since(t0);
    hwi_dispatch_span(strstr(api, "prefetch") ? HWI_PROF_OFFLOAD_PREFETCH
                                              : HWI_PROF_OFFLOAD_FETCH,
                      from_host ? "fetch from host" : "fetch from disk", t->device, t0,
                      hwi_res_now_ns(), t->nbytes);
    return HWRT_SUCCESS;
}
