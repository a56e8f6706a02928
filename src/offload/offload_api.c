/* Offload: public calls and the tensor layer's entry points. */
#include "residency.h"
#include "../base/config.h"
#include "../runtime/device_ops.h"
#include "../runtime/handle.h"
#include "../base/status.h"
#include "../mem/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MGR hwi_offload
/* the config store keeps strings of up to 511 bytes */
#define HWI_OFFLOAD_PATH_MAX 511

/* ---- stall accounting: device time a stream waited for a fetch ---- */

typedef struct { const hwi_device *dev; hwrt_bevent *need, *done; } stall_pair;
static stall_pair pairs[256];
static int npairs;

static void resolve_pairs(int block)
{
    int w = 0;
    for (int i = 0; i < npairs; i++) {
        stall_pair p = pairs[i];
        if (block) { hwi_dev_event_synchronize(p.dev, p.need); hwi_dev_event_synchronize(p.dev, p.done); }
        uint64_t a, b;
        if (hwi_dev_event_timestamp_ns(p.dev, p.need, &a) == HWRT_SUCCESS &&
            hwi_dev_event_timestamp_ns(p.dev, p.done, &b) == HWRT_SUCCESS) {
            if (b > a) MGR.stats.stall_ms += (double)(b - a) / 1e6;
            hwi_dev_event_destroy(p.dev, p.need);
            hwi_dev_event_destroy(p.dev, p.done);
        } else if (block) {
            /* waited for and still without a time: never recorded (host out of memory
             * when it was queued) or failed; drop it rather than keep it past the
             * device's life (hwrt_shutdown blocks here too) */
            hwi_dev_event_destroy(p.dev, p.need);
            hwi_dev_event_destroy(p.dev, p.done);
        } else {
            pairs[w++] = p;
        }
    }
    npairs = w;
}

/* Note that s is about to wait for r's fetch: time it on the device. */
static void track_stall(hwi_resident *r, hwi_stream *s)
{
    if (npairs == 256) resolve_pairs(1);
    hwi_device *d = NULL;
    if (hwi_device_get(r->t->device, &d) != HWRT_SUCCESS) return;
    stall_pair p = {.dev = d};
    if (hwi_dev_event_create(d, 0, &p.need) != HWRT_SUCCESS) return;
    if (hwi_dev_event_create(d, 0, &p.done) != HWRT_SUCCESS) { hwi_dev_event_destroy(d, p.need); return; }
    if (hwi_dev_event_record(d, p.need, s->bs) != HWRT_SUCCESS ||
        hwi_dev_event_record(d, p.done, hwi_res_fetch_stream(r->t->device)->bs) != HWRT_SUCCESS) {
        /* not timed (the stall accounting only): an unrecorded pair would never resolve */
        hwi_dev_event_destroy(d, p.need);
        hwi_dev_event_destroy(d, p.done);
        return;
    }
    pairs[npairs++] = p;
}

/* ---- entry points for the tensor layer ---- */

int hwi_offload_enabled(void) { return (int)hwi_cfg_int(HWI_CFG_MEMORY_OFFLOAD); }

hwrt_status hwi_offload_alloc(hwi_device *d, size_t bytes, void **out)
{
    if (!hwi_offload_enabled()) return hwi_pool_alloc_tensor(d, bytes, out);
    pthread_mutex_lock(&MGR.mu);
    hwi_res_settle();
    hwrt_status st = hwi_res_alloc(d, bytes, NULL, 0, NULL, "allocating a tensor", out);
    pthread_mutex_unlock(&MGR.mu);
    return st;
}

hwrt_status hwi_offload_ensure(hwi_tensor *const *ts, const int *writes, int n, hwi_stream *s)
{
    int any = 0;
    for (int i = 0; i < n; i++) any |= ts[i] && ts[i]->offload;
    if (!any) return HWRT_SUCCESS;
    pthread_mutex_lock(&MGR.mu);
    hwi_res_settle();                          /* fetches that did not land drop out */
    hwrt_status st = HWRT_SUCCESS;
    hwi_resident *last = NULL;
    for (int i = 0; i < n && st == HWRT_SUCCESS; i++) {
        hwi_resident *r = ts[i] ? ts[i]->offload : NULL;
        if (!r) continue;
        if (!r->t->data) {
            MGR.stats.prefetch_misses++;
            st = hwi_res_fetch(r, ts, n, "fetching an offloaded tensor");
            if (st == HWRT_SUCCESS && r->fetch) {
                track_stall(r, s);             /* before the wait, so it times the wait */
                st = hwi_res_wait_ready(r, s);
            }
        } else if (r->fetch) {
            if (!r->fetch->abandoned &&
                hwi_dev_event_query(r->fetch->dev, r->fetch->done) == HWRT_ERROR_NOT_READY) {
                MGR.stats.prefetch_late++;
                track_stall(r, s);
            } else if (r->prefetched) {
                MGR.stats.prefetch_hits++;
            }
            st = hwi_res_wait_ready(r, s);
        }
        r->prefetched = 0;
        if (writes[i]) r->dirty = 1;
        hwi_plan_note_use(r);
        if (st == HWRT_SUCCESS && r->window_pending) {
            r->window_pending = 0;
            if (r->wait_use) {             /* its copy waited for a victim's last use */
                /* the uses of offloadable tensors in between (fetches do not count:
                   before, each fetch's tick did, so a fetch right after its victim's
                   use read a window of 1 and none read 0) */
                uint64_t w = r->use_no > r->wait_use + 1 ? r->use_no - r->wait_use - 1 : 0;
                MGR.stats.fetches_after_victim++;
                MGR.stats.fetch_window_uses += w;
                if (!w) MGR.stats.fetches_exposed++;
            }
        }
        last = r;
    }
    if (st == HWRT_SUCCESS && last)
        hwi_plan_prefetch_ahead(last, ts, n);
    pthread_mutex_unlock(&MGR.mu);
    return st;
}

void hwi_offload_after_use(hwi_tensor *const *ts, int n, hwi_stream *s)
{
    int any = 0;
    for (int i = 0; i < n; i++) any |= ts[i] && ts[i]->offload;
    if (!any) return;
    pthread_mutex_lock(&MGR.mu);
    for (int i = 0; i < n; i++) {
        hwi_resident *r = ts[i] ? ts[i]->offload : NULL;
        if (r && hwi_res_note_use(r, s) != HWRT_SUCCESS) {
            /* cannot track this use (host out of memory): wait for it instead, so the
             * tensor is never taken as idle while the work is queued */
            hwi_dev_stream_synchronize(s->dev, s->bs);
        }
    }
    pthread_mutex_unlock(&MGR.mu);
}

static void remove_from_list(hwi_resident *r)
{
    for (int i = 0; i < MGR.n; i++)
        if (MGR.list[i] == r) { MGR.list[i] = MGR.list[--MGR.n]; break; }
}

/* Detach a quiesced, settled resident from its tensor and free its copies. */
static void drop_resident(hwi_resident *r)
{
    hwi_tensor *t = r->t;
    remove_from_list(r);
    hwi_plan_forget(r);
    hwi_res_free_copies(r);
    if (t->data) MGR.stats.device_bytes -= t->nbytes;
    t->offload = NULL;
    free(r);
}

void hwi_offload_forget(hwi_tensor *t)
{
    hwi_resident *r = t->offload;
    if (!r) return;
    pthread_mutex_lock(&MGR.mu);
    /* a fetch may still be reading the host copy or writing the device block, a
     * write-back still reading the block it lent: wait, then apply their outcomes (a
     * failed write-back gives the tensor its block back, to be freed with it) */
    hwi_res_quiesce(r, 0);
    hwi_res_settle();
    drop_resident(r);
    pthread_mutex_unlock(&MGR.mu);
}

/* ---- public API ---- */

static hwrt_status set_size(const char *key, size_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%zu", v);
    return hwrt_set_config(key, buf);
}

hwrt_status hwrt_set_offload_config(const hwrt_offload_config *c)
{
    if (!c)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_set_offload_config: cfg is NULL");
    if (c->prefetch_depth < 0 || c->prefetch_depth > 64)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_set_offload_config: prefetch_depth %d "
                       "is out of range; use 0..64", c->prefetch_depth);
    if (c->offload_path) {
        size_t len = strlen(c->offload_path);
        if (len > HWI_OFFLOAD_PATH_MAX)
            return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_set_offload_config: offload_path "
                           "\"%.48s...\" is %zu bytes long; it may have at most %d (the disk "
                           "tier's private directory and file go below it); choose a shorter "
                           "path, e.g. a symlink to the directory", c->offload_path, len,
                           HWI_OFFLOAD_PATH_MAX);
        struct stat sb;
        if (stat(c->offload_path, &sb) != 0 || !S_ISDIR(sb.st_mode) ||
            access(c->offload_path, W_OK) != 0)
            return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_set_offload_config: offload_path "
                           "\"%s\" is not a writable directory; create it or choose another",
                           c->offload_path);
        HWI_TRY(hwrt_set_config("offload_path", c->offload_path));
    }
    HWI_TRY(hwrt_set_config("memory_offload", c->enabled ? "on" : "off"));
    HWI_TRY(hwrt_set_config("auto_offload", c->auto_offload ? "1" : "0"));
    HWI_TRY(set_size("max_device_memory", c->max_device_memory));
    HWI_TRY(set_size("offload_cpu_size", c->offload_cpu_size));
    HWI_TRY(set_size("offload_disk_size", c->offload_disk_size));
    HWI_TRY(hwrt_set_config("enable_pinned_mem", c->enable_pinned_mem ? "1" : "0"));
    char depth[16];
    snprintf(depth, sizeof depth, "%d", c->prefetch_depth);
    return hwrt_set_config("prefetch_depth", depth);
}

/* offload_path as a string that stays valid for the process's life: each distinct value
 * is kept once (a program sets few), so hwrt_get_offload_config hands out a stable
 * pointer without a thread-local buffer. */
static const char *interned_path(void)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static char **kept;
    static size_t nkept;
    char path[512];
    hwi_cfg_string(HWI_CFG_OFFLOAD_PATH, path, sizeof path);
    pthread_mutex_lock(&mu);
    const char *out = NULL;
    for (size_t i = 0; i < nkept && !out; i++)
        if (!strcmp(kept[i], path)) out = kept[i];
    if (!out) {
        char **nk = realloc(kept, (nkept + 1) * sizeof *nk);
        char *copy = nk ? strdup(path) : NULL;
        if (nk) kept = nk;
        if (copy) out = kept[nkept++] = copy;
    }
    pthread_mutex_unlock(&mu);
    return out;
}

hwrt_status hwrt_get_offload_config(hwrt_offload_config *out)
{
    if (!out)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_get_offload_config: out is NULL");
    const char *path = interned_path();
    if (!path)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "hwrt_get_offload_config: host out of "
                       "memory");
    *out = (hwrt_offload_config){
        .enabled = (int)hwi_cfg_int(HWI_CFG_MEMORY_OFFLOAD),
        .auto_offload = (int)hwi_cfg_int(HWI_CFG_AUTO_OFFLOAD),
        .max_device_memory = (size_t)hwi_cfg_int(HWI_CFG_MAX_DEVICE_MEMORY),
        .offload_cpu_size = (size_t)hwi_cfg_int(HWI_CFG_OFFLOAD_CPU_SIZE),
        .offload_disk_size = (size_t)hwi_cfg_int(HWI_CFG_OFFLOAD_DISK_SIZE),
        .offload_path = path,
        .enable_pinned_mem = (int)hwi_cfg_int(HWI_CFG_ENABLE_PINNED_MEM),
        .prefetch_depth = (int)hwi_cfg_int(HWI_CFG_PREFETCH_DEPTH)};
    return HWRT_SUCCESS;
}

/* Shutdown, before the tensors go (order 10 < 25): every offloadable tensor still alive
 * is settled (its copies in flight waited for and their outcomes applied), its host and
 * disk copies freed and its record dropped, so the tensor layer then frees the tensor
 * like any other (its handle becomes invalid) and the next session starts empty. The
 * disk tier's file is closed and its private directory removed. */
static hwrt_status shutdown_offload(void)
{
    pthread_mutex_lock(&MGR.mu);
    if (hwi_runtime_active()) {
        for (int i = 0; i < MGR.n; i++) hwi_res_quiesce(MGR.list[i], 1);
        hwi_res_settle();
        while (MGR.n) drop_resident(MGR.list[MGR.n - 1]);
        hwi_res_free_retired(1);
    }
    free(MGR.list);
    MGR.list = NULL;
    MGR.n = MGR.cap = 0;
    MGR.unsettled = 0;
    MGR.host_used = MGR.disk_used = 0;
    MGR.stats.device_bytes = 0;
    hwi_disk_close();
    resolve_pairs(1);
    hwrt_host_free(MGR.staging);
    MGR.staging = NULL;
    MGR.staging_size = 0;
    free(MGR.order);
    MGR.order = NULL;
    MGR.norder = MGR.cap_order = MGR.steps = MGR.cursor = 0;
    /* the evict and fetch streams are the devices' (closed with them, res_engine.c) */
    pthread_mutex_unlock(&MGR.mu);
    return HWRT_SUCCESS;
}

hwrt_status hwrt_tensor_set_offloadable(hwrt_tensor h, int on)
{
    HWI_TENSOR_REF(t);
    HWI_TRY(hwi_tensor_resolve(h, &t));
    if (t->ext)
        return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "hwrt_tensor_set_offloadable: the tensor wraps "
                       "DLPack-imported memory it does not own; it cannot be moved");
    /* work already queued on the tensor, on any stream, keeps it busy: note each stream
     * that used it (more than the tensor layer tracks: wait for them all now) */
    hwrt_stream users[HWI_TENSOR_STREAMS];
    pthread_mutex_lock(&t->mu);
    int nusers = t->nusers, overflow = t->overflow;
    memcpy(users, t->users, sizeof users);
    pthread_mutex_unlock(&t->mu);
    if (on && !t->offload && overflow)
        HWI_TRY(hwi_tensor_wait(t, 0, "hwrt_tensor_set_offloadable"));
    pthread_mutex_lock(&MGR.mu);
    hwrt_status st = HWRT_SUCCESS;
    hwi_resident *r = t->offload;
    int was_pinned = r ? r->pinned_to_device : 0;
    if (on && !r) {
        r = calloc(1, sizeof *r);
        hwi_resident **nl = MGR.n == MGR.cap
                                ? realloc(MGR.list, (size_t)(MGR.cap ? MGR.cap * 2 : 64) * sizeof *nl)
                                : MGR.list;
        if (!r || !nl) {
            free(r);
            st = hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "hwrt_tensor_set_offloadable: host out "
                         "of memory");
        } else {
            if (nl != MGR.list) { MGR.list = nl; MGR.cap = MGR.cap ? MGR.cap * 2 : 64; }
            r->t = t;
            r->order_pos = -1;
            r->loc = HWI_LOC_DEVICE;
            r->dirty = 1;
            MGR.list[MGR.n++] = r;
            t->offload = r;
            MGR.stats.device_bytes += t->nbytes;
            if (MGR.steps == 0) MGR.recording = 1;
            hwi_on_shutdown(10, shutdown_offload);
            for (int i = 0; i < nusers && !overflow && st == HWRT_SUCCESS; i++) {
                HWI_STREAM_REF(s);
                s = hwi_handle_acquire(users[i], HWI_H_STREAM);
                if (s) st = hwi_res_note_use(r, s);   /* destroyed ones were synchronized */
            }
            if (st != HWRT_SUCCESS) {                 /* cannot track them: wait instead */
                pthread_mutex_unlock(&MGR.mu);
                st = hwi_tensor_wait(t, 0, "hwrt_tensor_set_offloadable");
                pthread_mutex_lock(&MGR.mu);
            }
        }
    } else if (r) {
        r->pinned_to_device = !on;
    }
    pthread_mutex_unlock(&MGR.mu);
    if (st == HWRT_SUCCESS && r && !on && !t->data) {
        HWI_STREAM_REF(s);
        st = hwi_stream_default(t->device, &s);
        hwi_tensor *ts[1] = {t};
        int w[1] = {0};
        if (st == HWRT_SUCCESS) st = hwi_offload_ensure(ts, w, 1, s);
        if (st != HWRT_SUCCESS) {      /* it did not come back: not pinned, as before */
            pthread_mutex_lock(&MGR.mu);
            r->pinned_to_device = was_pinned;
            pthread_mutex_unlock(&MGR.mu);
        }
    }
    return st;
}

/* The tensor comes pinned in *tp (the caller puts it), and its residency state. */
static hwrt_status resident_of(hwrt_tensor h, const char *api, hwi_tensor **tp,
                               hwi_resident **out)
{
    HWI_TRY(hwi_tensor_resolve(h, tp));
    hwi_tensor *t = *tp;
    if (!t->offload)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: the tensor is not offloadable; call "
                       "hwrt_tensor_set_offloadable(t, 1) first", api);
    *out = t->offload;
    return HWRT_SUCCESS;
}

hwrt_status hwrt_offload_prefetch(hwrt_tensor h, hwrt_stream sh)
{
    hwi_resident *r;
    HWI_TENSOR_REF(t);
    HWI_STREAM_REF(s);
    HWI_TRY(resident_of(h, "hwrt_offload_prefetch", &t, &r));
    HWI_TRY(hwi_stream_resolve(sh, &s));
    pthread_mutex_lock(&MGR.mu);
    hwi_res_settle();
    hwrt_status st = HWRT_SUCCESS;
    if (!r->t->data && !r->wb) {     /* non-blocking: one still being written back waits */
        st = hwi_res_fetch(r, NULL, 0, "hwrt_offload_prefetch");
        if (st == HWRT_SUCCESS) r->prefetched = 1;
    }
    pthread_mutex_unlock(&MGR.mu);
    return st;
}

hwrt_status hwrt_offload_evict(hwrt_tensor h)
{
    hwi_resident *r;
    HWI_TENSOR_REF(t);
    HWI_TRY(resident_of(h, "hwrt_offload_evict", &t, &r));
    pthread_mutex_lock(&MGR.mu);
    hwi_res_settle();
    hwrt_status st = r->pinned_to_device
                         ? hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_offload_evict: the tensor "
                                   "was pinned to the device with set_offloadable(t, 0)")
                         : hwi_res_evict(r, "hwrt_offload_evict");
    pthread_mutex_unlock(&MGR.mu);
    return st;
}

hwrt_status hwrt_offload_step(void)
{
    pthread_mutex_lock(&MGR.mu);
    MGR.steps++;
    MGR.recording = 0;
    resolve_pairs(0);
    /* start the next step's first fetches now */
    if (MGR.norder > 0 && hwi_cfg_int(HWI_CFG_AUTO_OFFLOAD))
        hwi_plan_prefetch_ahead(MGR.order[MGR.norder - 1], NULL, 0);
    pthread_mutex_unlock(&MGR.mu);
    return HWRT_SUCCESS;
}

hwrt_status hwrt_offload_location(hwrt_tensor h, int *where)
{
    if (!where)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_offload_location: where is NULL");
    HWI_TENSOR_REF(t);
    HWI_TRY(hwi_tensor_resolve(h, &t));
    pthread_mutex_lock(&MGR.mu);
    hwi_res_settle();
    hwi_resident *r = t->offload;
    *where = (!r || t->data) ? HWI_LOC_DEVICE : r->loc;
    pthread_mutex_unlock(&MGR.mu);
    return HWRT_SUCCESS;
}

hwrt_status hwrt_offload_stats_get(hwrt_offload_stats *out)
{
    if (!out)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_offload_stats_get: out is NULL");
    pthread_mutex_lock(&MGR.mu);
    if (hwi_runtime_active()) { resolve_pairs(1); hwi_res_settle(); }
    MGR.stats.host_bytes = MGR.host_used;
    MGR.stats.disk_bytes = MGR.disk_used;
    hwi_device *d = NULL;
    if (hwi_runtime_active() && hwi_device_current(&d) == HWRT_SUCCESS)
        MGR.stats.device_budget = hwi_res_budget(d->id);
    *out = MGR.stats;
    pthread_mutex_unlock(&MGR.mu);
    return HWRT_SUCCESS;
}

hwrt_status hwrt_offload_reset_stats(void)
{
    pthread_mutex_lock(&MGR.mu);
    if (hwi_runtime_active()) resolve_pairs(1);
    size_t dev_bytes = MGR.stats.device_bytes;
    memset(&MGR.stats, 0, sizeof MGR.stats);
    MGR.stats.device_bytes = dev_bytes;
    pthread_mutex_unlock(&MGR.mu);
    return HWRT_SUCCESS;
}
