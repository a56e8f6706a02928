/* Residency manager: evictions through the D2H engine to the host tier (pinned when
 * enable_pinned_mem) or to files of the disk tier, fetches through the H2D engine,
 * stream-ordered so compute waits on the device and not on the host. */
#include "residency.h"
#include "../core/config.h"
#include "../core/handle.h"
#include "../core/status.h"
#include "../mem/pool.h"
#include "../exec/dispatch.h"
#include "../diag/sync_check.h"
#include "../prof/prof.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

hwi_offload_mgr hwi_offload = {.mu = PTHREAD_MUTEX_INITIALIZER};

uint64_t hwi_res_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double hwi_res_ms_since(uint64_t t0) { return (double)(hwi_res_now_ns() - t0) / 1e6; }

static hwrt_status engine_streams(int device)
{
    if (!hwi_offload.evict_stream[device])
        HWI_TRY(hwi_stream_create_on(device, &hwi_offload.evict_stream[device]));
    if (!hwi_offload.fetch_stream[device])
        HWI_TRY(hwi_stream_create_on(device, &hwi_offload.fetch_stream[device]));
    return HWRT_SUCCESS;
}

hwrt_status hwi_res_order(hwi_resident *r, hwi_res_event which, hwi_stream *s, int record)
{
    hwi_event *e = which == HWI_RES_READY ? &r->ready_ev : &r->used_ev;
    e->be = which == HWI_RES_READY ? r->ready : r->used;
    e->handle = (hwrt_event)(void *)e;         /* a key unique to this resident's event */
    e->device = s->device;
    e->internal = 1;
    hwi_work w = {.kind = record ? HWI_WORK_EVENT_RECORD : HWI_WORK_EVENT_WAIT, .stream = s,
                  .name = record ? "OffloadEventRecord" : "OffloadEventWait"};
    w.u.event.ev = e;
    return hwi_dispatch(&w);
}

/* Idle: the last op that used the tensor and any fetch into it have completed (later
 * work on the same streams does not matter). */
int hwi_res_idle(const hwi_resident *r)
{
    const hwrt_backend_ops *ops = hwi_ops_if_selected();
    if (r->ready && ops->event_query(r->ready) == HWRT_ERROR_NOT_READY) return 0;
    if (r->used && ops->event_query(r->used) == HWRT_ERROR_NOT_READY) return 0;
    return 1;
}

hwrt_status hwi_res_wait_idle(hwi_resident *r)
{
    const hwrt_backend_ops *ops = hwi_ops_if_selected();
    uint64_t t0 = hwi_res_now_ns();
    if (r->ready) HWI_TRY(ops->event_synchronize(r->ready));
    if (r->used) HWI_TRY(ops->event_synchronize(r->used));
    hwi_prof_record_event(HWI_PROF_OFFLOAD_STALL, "wait for a victim's queued work",
                          r->t->device, t0, hwi_res_now_ns(), 0);
    return HWRT_SUCCESS;
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
    hwi_offload.stats.device_budget = hwi_res_budget(device);
    return hwi_err(HWRT_ERROR_OUT_OF_MEMORY,
                   "%s: cannot place %s on device %d: every tier is full — device %s allocated of "
                   "a %s budget (no idle offloadable tensor left to evict), host tier %s of "
                   "offload_cpu_size %s, disk tier %s of offload_disk_size %s; raise "
                   "offload_cpu_size or offload_disk_size, mark more tensors offloadable, or "
                   "lower the batch size", api, hwi_fmt_bytes(a, sizeof a, bytes), device,
                   hwi_fmt_bytes(b, sizeof b, m.allocated),
                   hwi_fmt_bytes(c, sizeof c, hwi_res_budget(device)),
                   hwi_fmt_bytes(d, sizeof d, hwi_offload.host_used),
                   hwi_fmt_bytes(e, sizeof e, (size_t)hwi_cfg_int(HWI_CFG_OFFLOAD_CPU_SIZE)),
                   hwi_fmt_bytes(f, sizeof f, hwi_offload.disk_used),
                   hwi_fmt_bytes(g, sizeof g, (size_t)hwi_cfg_int(HWI_CFG_OFFLOAD_DISK_SIZE)));
}

static hwrt_status staging(size_t bytes)
{
    if (hwi_offload.staging_size >= bytes)
        return HWRT_SUCCESS;
    hwrt_host_free(hwi_offload.staging);
    hwi_offload.staging = NULL;
    hwi_offload.staging_size = 0;
    HWI_TRY(hwrt_host_alloc(&hwi_offload.staging, bytes, HWRT_HOST_PINNED));
    hwi_offload.staging_size = bytes;
    return HWRT_SUCCESS;
}

/* Write the device copy to a new clean copy in the host tier, else the disk tier. */
static hwrt_status save_copy(hwi_resident *r, const char *api)
{
    hwi_tensor *t = r->t;
    size_t n = t->nbytes;
    hwi_stream *s = hwi_offload.evict_stream[t->device];
    size_t cpu = (size_t)hwi_cfg_int(HWI_CFG_OFFLOAD_CPU_SIZE);
    size_t disk = (size_t)hwi_cfg_int(HWI_CFG_OFFLOAD_DISK_SIZE);
    int have_host_room = r->has_host || hwi_offload.host_used + n <= cpu;
    if (have_host_room) {
        if (!r->has_host) {
            int pin = (int)hwi_cfg_int(HWI_CFG_ENABLE_PINNED_MEM);
            HWI_TRY(hwrt_host_alloc(&r->host, n, pin ? HWRT_HOST_PINNED : HWRT_HOST_DEFAULT));
            r->host_pinned = pin;
            hwi_offload.host_used += n;
        }
        HWI_TRY(hwrt_memcpy_async(r->host, t->data, n, HWRT_MEMCPY_DEVICE_TO_HOST, s->handle));
        HWI_TRY(hwi_stream_sync(s, api));
        r->has_host = 1;
        hwi_offload.stats.evictions_to_host++;
        hwi_offload.stats.bytes_to_host += n;
        if (r->has_disk) {            /* the file is stale now */
            unlink(r->path);
            r->has_disk = 0;
            hwi_offload.disk_used -= n;
        }
        r->loc = HWI_LOC_HOST;
        return HWRT_SUCCESS;
    }
    if (r->has_disk || hwi_offload.disk_used + n <= disk) {
        HWI_TRY(staging(n));
        HWI_TRY(hwrt_memcpy_async(hwi_offload.staging, t->data, n, HWRT_MEMCPY_DEVICE_TO_HOST,
                                  s->handle));
        HWI_TRY(hwi_stream_sync(s, api));
        if (!r->has_disk) {
            char dir[480];
            hwi_cfg_string(HWI_CFG_OFFLOAD_PATH, dir, sizeof dir);
            snprintf(r->path, sizeof r->path, "%s/hwrt-offload-%d-%llu.bin", dir, (int)getpid(),
                     (unsigned long long)++hwi_offload.file_seq);
        }
        int fd = open(r->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        ssize_t w = fd >= 0 ? pwrite(fd, hwi_offload.staging, n, 0) : -1;
        int err = errno;
        if (fd >= 0) close(fd);
        if (w != (ssize_t)n) {
            unlink(r->path);
            return hwi_err(HWRT_ERROR_IO, "%s: writing %zu bytes to the disk tier file %s failed: "
                           "%s; check offload_path", api, n, r->path, strerror(err));
        }
        if (!r->has_disk) hwi_offload.disk_used += n;
        r->has_disk = 1;
        hwi_offload.stats.evictions_to_disk++;
        hwi_offload.stats.bytes_to_disk += n;
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
    HWI_TRY(engine_streams(t->device));
    uint64_t t0 = hwi_res_now_ns();
    if (r->dirty || (!r->has_host && !r->has_disk)) {
        HWI_TRY(save_copy(r, api));
    } else {
        hwi_offload.stats.clean_evictions++;
        r->loc = r->has_host ? HWI_LOC_HOST : HWI_LOC_DISK;
    }
    r->dirty = 0;
    if (r->ready) {
        hwi_ops_if_selected()->event_destroy(r->ready);
        r->ready = NULL;
    }
    hwi_sync_check_forget(t->data);          /* the pool orders any reuse of the block */
    HWI_TRY(hwi_pool_free(t->data, api));
    t->data = NULL;
    hwi_offload.stats.device_bytes -= t->nbytes;
    hwi_offload.stats.evict_ms += hwi_res_ms_since(t0);
    hwi_prof_record_event(HWI_PROF_OFFLOAD_EVICT, "evict", t->device, t0, hwi_res_now_ns(),
                          t->nbytes);
    return HWRT_SUCCESS;
}

/* Can a written victim be saved without the host waiting? Into pinned host-tier memory
 * only: a pageable copy blocks the host, and the disk tier is written by the host. */
static int can_write_back_in_order(const hwi_resident *v)
{
    if (!hwi_cfg_int(HWI_CFG_ENABLE_PINNED_MEM)) return 0;
    if (v->has_host) return v->host_pinned;
    return hwi_offload.host_used + v->t->nbytes <= (size_t)hwi_cfg_int(HWI_CFG_OFFLOAD_CPU_SIZE);
}

/* Write v's device copy back to its host-tier copy on the D2H engine, ordered after v's
 * last use and pending fetch, and make `order` wait for it. v->ready then marks the
 * write-back's end: a later fetch of v (on the fetch stream, after this wait) and
 * hwi_offload_forget (which frees the host copy) are ordered after it. */
static hwrt_status write_back_in_order(hwi_resident *v, hwi_stream *order)
{
    const hwrt_backend_ops *ops = hwi_ops_if_selected();
    hwi_tensor *t = v->t;
    size_t n = t->nbytes;
    hwi_stream *es = hwi_offload.evict_stream[t->device];
    if (!v->has_host) {
        HWI_TRY(hwrt_host_alloc(&v->host, n, HWRT_HOST_PINNED));
        v->host_pinned = 1;
        v->has_host = 1;
        hwi_offload.host_used += n;
    }
    if (v->used) HWI_TRY(hwi_res_order(v, HWI_RES_USED, es, 0));
    if (v->ready) HWI_TRY(hwi_res_order(v, HWI_RES_READY, es, 0));
    HWI_TRY(hwrt_memcpy_async(v->host, t->data, n, HWRT_MEMCPY_DEVICE_TO_HOST, es->handle));
    if (!v->ready) {
        hwi_device *d = NULL;
        HWI_TRY(hwi_device_get(t->device, &d));
        HWI_TRY(ops->event_create(d->bdev, HWRT_EVENT_DISABLE_TIMING, &v->ready));
    }
    HWI_TRY(hwi_res_order(v, HWI_RES_READY, es, 1));
    HWI_TRY(hwi_res_order(v, HWI_RES_READY, order, 0));
    if (v->has_disk) {                         /* the file is stale now */
        unlink(v->path);
        v->has_disk = 0;
        hwi_offload.disk_used -= n;
    }
    v->dirty = 0;
    hwi_offload.stats.evictions_to_host++;
    hwi_offload.stats.bytes_to_host += n;
    return HWRT_SUCCESS;
}

/* Stream-ordered eviction of a victim v still used by queued work: v hands its device
 * block straight to the new tensor if it has the same size. `order`, the stream that
 * first writes the block, waits on the device for v's last use; a written v is first
 * saved to its pinned host-tier copy on the D2H engine in the same order. The host does
 * not wait at all, so it keeps running ahead of the device. Returns 1 and the block in
 * *out, or 0 (another size, or a written v that would need the disk tier or pageable
 * memory: the caller waits for v instead). */
static int hand_over(hwi_resident *v, size_t bytes, hwi_stream *order, void **out)
{
    if (v->t->nbytes != bytes)
        return 0;
    int clean = !v->dirty && (v->has_host || v->has_disk);
    if (!clean && !can_write_back_in_order(v))
        return 0;
    const hwrt_backend_ops *ops = hwi_ops_if_selected();
    hwi_tensor *t = v->t;
    uint64_t t0 = hwi_res_now_ns();
    if (clean) {
        if (v->used && hwi_res_order(v, HWI_RES_USED, order, 0) != HWRT_SUCCESS) return 0;
        if (v->ready && hwi_res_order(v, HWI_RES_READY, order, 0) != HWRT_SUCCESS) return 0;
        if (v->ready) {
            ops->event_destroy(v->ready);
            v->ready = NULL;
        }
        hwi_offload.stats.clean_evictions++;
    } else if (write_back_in_order(v, order) != HWRT_SUCCESS) {
        return 0;                                  /* the waiting path reports it */
    }
    *out = t->data;
    t->data = NULL;
    v->loc = v->has_host ? HWI_LOC_HOST : HWI_LOC_DISK;
    hwi_offload.stats.device_bytes -= t->nbytes;
    hwi_offload.stats.evict_ms += hwi_res_ms_since(t0);
    hwi_prof_record_event(HWI_PROF_OFFLOAD_EVICT, "evict (stream-ordered)", t->device, t0,
                          hwi_res_now_ns(), t->nbytes);
    return 1;
}

/* Evict until `bytes` more fit the budget: idle victims first; when every candidate is
 * still used by queued work, the best one hands its block over in `order`'s stream
 * order (*handed set: nothing to allocate), or the host waits for it (backpressure). */
static hwrt_status make_room(int device, size_t bytes, hwi_tensor *const *keep, int nkeep,
                             hwi_stream *order, const char *api, void **handed)
{
    size_t budget = hwi_res_budget(device);
    for (;;) {
        hwrt_memory_info m;
        HWI_TRY(hwrt_get_memory_info(device, &m));
        if (m.allocated + bytes <= budget)
            return HWRT_SUCCESS;
        hwi_resident *v = hwi_plan_pick_victim(device, keep, nkeep, 0);
        if (!v) {
            v = hwi_plan_pick_victim(device, keep, nkeep, 1);
            if (!v)
                return hwi_res_tier_oom(device, bytes, api);
            if (order && hand_over(v, bytes, order, handed))
                return HWRT_SUCCESS;
            HWI_TRY(hwi_res_wait_idle(v));
        }
        HWI_TRY(hwi_res_evict(v, api));
    }
}

hwrt_status hwi_res_alloc(hwi_device *d, size_t bytes, hwi_tensor *const *keep, int nkeep,
                          hwi_stream *order, const char *api, void **out)
{
    for (;;) {
        void *handed = NULL;
        HWI_TRY(make_room(d->ordinal, bytes, keep, nkeep, order, api, &handed));
        if (handed) {
            *out = handed;
            return HWRT_SUCCESS;
        }
        hwrt_status st = hwi_pool_alloc_tensor(d, bytes, out);
        if (st != HWRT_ERROR_OUT_OF_MEMORY)
            return st;
        /* within the budget but the device itself is full (page rounding, other
         * processes): free one more tensor's memory and try again */
        hwi_resident *v = hwi_plan_pick_victim(d->ordinal, keep, nkeep, 1);
        if (!v)
            return hwi_res_tier_oom(d->ordinal, bytes, api);
        HWI_TRY(hwi_res_wait_idle(v));
        HWI_TRY(hwi_res_evict(v, api));
    }
}

/* Bring r's data to the device on the fetch stream; the fetch's completion is recorded
 * in r->ready. wait_on (may be NULL) is made to wait for it. */
hwrt_status hwi_res_fetch(hwi_resident *r, hwi_stream *wait_on, hwi_tensor *const *keep,
                          int nkeep, const char *api)
{
    hwi_tensor *t = r->t;
    const hwrt_backend_ops *ops = hwi_ops_if_selected();
    HWI_TRY(engine_streams(t->device));
    hwi_tensor *self[1] = {t};
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_get(t->device, &d));
    uint64_t t0 = hwi_res_now_ns();
    void *p;
    hwi_stream *fs = hwi_offload.fetch_stream[t->device];
    /* the memory is first written by the fetch stream: victims may leave in its order */
    HWI_TRY(hwi_res_alloc(d, t->nbytes, keep ? keep : self, keep ? nkeep : 1, fs, api, &p));
    hwrt_status st;
    if (r->has_host) {
        uint64_t h0 = hwi_res_now_ns();
        st = hwrt_memcpy_async(p, r->host, t->nbytes, HWRT_MEMCPY_HOST_TO_DEVICE, fs->handle);
        if (!r->host_pinned) {        /* pageable: the host itself waited for the copy */
            hwi_offload.stats.stall_ms += hwi_res_ms_since(h0);
            hwi_prof_record_event(HWI_PROF_OFFLOAD_STALL, "pageable fetch", t->device, h0,
                                  hwi_res_now_ns(), t->nbytes);
        }
        hwi_offload.stats.fetches_from_host++;
        hwi_offload.stats.bytes_from_host += t->nbytes;
    } else {
        uint64_t h0 = hwi_res_now_ns();
        st = staging(t->nbytes);
        int fd = st == HWRT_SUCCESS ? open(r->path, O_RDONLY) : -1;
        ssize_t got = fd >= 0 ? pread(fd, hwi_offload.staging, t->nbytes, 0) : -1;
        if (fd >= 0) close(fd);
        if (st == HWRT_SUCCESS && got != (ssize_t)t->nbytes)
            st = hwi_err(HWRT_ERROR_IO, "%s: reading %zu bytes back from the disk tier file %s "
                         "failed", api, t->nbytes, r->path);
        if (st == HWRT_SUCCESS)
            st = hwrt_memcpy_async(p, hwi_offload.staging, t->nbytes, HWRT_MEMCPY_HOST_TO_DEVICE,
                                   fs->handle);
        if (st == HWRT_SUCCESS)           /* the bounce buffer is reused by the next read */
            st = hwi_stream_sync(fs, api);
        hwi_prof_record_event(HWI_PROF_OFFLOAD_STALL, "disk fetch", t->device, h0,
                              hwi_res_now_ns(), t->nbytes);
        hwi_offload.stats.fetches_from_disk++;
        hwi_offload.stats.bytes_from_disk += t->nbytes;
    }
    if (st == HWRT_SUCCESS && !r->ready)
        st = ops->event_create(d->bdev, HWRT_EVENT_DISABLE_TIMING, &r->ready);
    if (st == HWRT_SUCCESS)
        st = hwi_res_order(r, HWI_RES_READY, fs, 1);
    if (st != HWRT_SUCCESS) {
        hwi_pool_free(p, api);
        return st;
    }
    t->data = p;
    r->loc = HWI_LOC_DEVICE;
    r->dirty = 0;
    /* fetched to be used soon: least-recently-used eviction must not pick it first
     * (a prefetched tensor would otherwise carry its last step's tick) */
    r->last_use = ++hwi_offload.tick;
    hwi_offload.stats.device_bytes += t->nbytes;
    hwi_offload.stats.fetch_ms += hwi_res_ms_since(t0);
    hwi_prof_record_event(strstr(api, "prefetch") ? HWI_PROF_OFFLOAD_PREFETCH
                                                  : HWI_PROF_OFFLOAD_FETCH,
                          r->has_host ? "fetch from host" : "fetch from disk", t->device, t0,
                          hwi_res_now_ns(), t->nbytes);
    if (wait_on)
        HWI_TRY(hwi_res_order(r, HWI_RES_READY, wait_on, 0));
    return HWRT_SUCCESS;
}
