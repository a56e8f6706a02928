/* The sync checker (HWRT_CHECK_SYNC=1 / check_sync): a happens-before model of what the
 * program ordered, built from the dispatch hooks, checked at every device access.
 *
 * Each stream numbers its ops (seq) and carries a vector clock: vc[j] = the last op of
 * stream j known to be ordered before the stream's next op. Recording an event snapshots
 * the recording stream's clock; waiting on it joins that snapshot; a host synchronization
 * joins the synchronized stream's clock into the host clock, and every op the host queues
 * afterwards starts from the host clock. An earlier access (stream a, op x) is ordered
 * before the current op on stream b iff a == b or vc_b[a] >= x. Per device block (found
 * with hwi_pool_find) the last writer and the readers since are kept; an unordered
 * read-after-write, write-after-write or write-after-read is reported with both ops.
 * Everything runs under one mutex: this is a debugging mode. */
#include "sync_check.h"
#include "../base/config.h"
#include "../runtime/handle.h"
#include "../base/status.h"
#include "../exec/capture.h"
#include "../exec/event.h"
#include "../mem/pool.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXS 64                /* streams tracked at once */
#define MAXR 8                 /* readers kept per block */

typedef struct { int s; uint64_t seq; const char *name; const char *api; } access;

typedef struct {
    void *handle;              /* hwrt_stream: a destroyed stream was synchronized */
    int device, is_default;
    uint64_t seq;
    uint64_t vc[MAXS];
} sstate;

typedef struct { void *handle; int internal; uint64_t vc[MAXS]; } estate;

typedef struct {
    void *base;
    size_t size;
    int device;
    int has_writer;
    access writer;
    access readers[MAXR];
    int nreaders;
} bstate;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static sstate streams[MAXS];
static int nstreams;
static uint64_t host_vc[MAXS];
static estate *events;
static size_t nevents, cap_events;
static bstate *blocks;
static size_t nblocks, cap_blocks;
static _Atomic uint64_t hazards;
static char last_report[1024];
static _Thread_local const char *tl_api;   /* host-read call in progress on this thread */

static int enabled(void) { return hwi_cfg_int(HWI_CFG_CHECK_SYNC) != 0; }

static int stream_index(hwi_stream *s)
{
    for (int i = 0; i < nstreams; i++)
        if (streams[i].handle == s->handle) return i;
    int slot = -1;
    for (int i = 0; i < nstreams && slot < 0; i++)      /* reuse a destroyed stream's slot */
        if (!hwi_handle_live(streams[i].handle, HWI_H_STREAM)) slot = i;
    if (slot < 0 && nstreams < MAXS) slot = nstreams++;
    if (slot < 0) return -1;
    /* a reused slot keeps its seq numbers moving forward; accesses of the destroyed
     * stream (synchronized by hwrt_stream_destroy) are forgotten */
    uint64_t seq = streams[slot].seq;
    for (size_t i = 0; i < nblocks; i++) {
        bstate *b = &blocks[i];
        if (b->has_writer && b->writer.s == slot) b->has_writer = 0;
        int k = 0;
        for (int r = 0; r < b->nreaders; r++)
            if (b->readers[r].s != slot) b->readers[k++] = b->readers[r];
        b->nreaders = k;
    }
    memset(&streams[slot], 0, sizeof streams[slot]);
    streams[slot] = (sstate){.handle = s->handle, .device = s->device,
                             .is_default = s->is_default, .seq = seq};
    streams[slot].vc[slot] = seq;
    for (int j = 0; j < MAXS; j++)                      /* the host queued it: ordered after */
        if (host_vc[j] > streams[slot].vc[j]) streams[slot].vc[j] = host_vc[j];
    return slot;
}

static void join(uint64_t *dst, const uint64_t *src)
{
    for (int j = 0; j < MAXS; j++)
        if (src[j] > dst[j]) dst[j] = src[j];
}

static void stream_name(int i, char *buf, size_t len)
{
    if (streams[i].is_default)
        snprintf(buf, len, "the default stream of device %d", streams[i].device);
    else
        snprintf(buf, len, "stream %p (device %d)", streams[i].handle, streams[i].device);
}

static int ordered(const access *a, int s)
{
    if (a->s == s || streams[s].vc[a->s] >= a->seq) return 1;
    /* the earlier stream is gone: hwrt_stream_destroy synchronized it */
    return !hwi_handle_live(streams[a->s].handle, HWI_H_STREAM);
}

enum { RAW, WAW, WAR };

static void report(int kind, const bstate *b, const access *cur, const access *prev)
{
    static const char *const kinds[] = {"read after write", "write after write",
                                        "write after read"};
    char sc[96], sp[96], what[160], msg[sizeof last_report];
    stream_name(cur->s, sc, sizeof sc);
    stream_name(prev->s, sp, sizeof sp);
    if (cur->api)
        snprintf(what, sizeof what, "host read of unsynchronized device data: %s (%s, op %llu "
                 "on %s)", cur->api, cur->name, (unsigned long long)cur->seq, sc);
    else
        snprintf(what, sizeof what, "cross-stream hazard (%s): %s (op %llu on %s)", kinds[kind],
                 cur->name, (unsigned long long)cur->seq, sc);
    snprintf(msg, sizeof msg,
             "%s %s device block %p (%zu bytes, device %d) that %s (op %llu on %s) %s, and no "
             "event or synchronization orders the two: %s. Fix: record an event on %s after %s "
             "and hwrt_stream_wait_event on %s before %s, or synchronize %s first%s",
             what, kind == RAW ? "reads" : "writes", b->base, b->size, b->device, prev->name,
             (unsigned long long)prev->seq, sp, kind == WAR ? "reads" : "writes",
             cur->api ? "the host may get stale data" : "the result depends on timing", sp,
             prev->name, sc, cur->api ? cur->api : cur->name, sp,
             cur->api ? "; hwrt_tensor_copy_to_host orders itself after the tensor's writers"
                      : "");
    atomic_fetch_add(&hazards, 1);
    snprintf(last_report, sizeof last_report, "%s", msg);
    fprintf(stderr, "hwrt sync-check: %s\n", msg);
}

static bstate *block_for(const void *p)
{
    hwi_block_info bi;
    if (!p || !hwi_pool_find(p, 1, &bi)) return NULL;
    for (size_t i = 0; i < nblocks; i++)
        if (blocks[i].base == bi.base) {
            if (blocks[i].size != bi.size)   /* freed and reallocated: a new block */
                blocks[i] = (bstate){.base = bi.base, .size = bi.size, .device = bi.device};
            return &blocks[i];
        }
    if (nblocks == cap_blocks) {
        size_t nc = cap_blocks ? cap_blocks * 2 : 64;
        bstate *nb = realloc(blocks, nc * sizeof *nb);
        if (!nb) return NULL;
        blocks = nb;
        cap_blocks = nc;
    }
    blocks[nblocks] = (bstate){.base = bi.base, .size = bi.size, .device = bi.device};
    return &blocks[nblocks++];
}

static void on_read(bstate *b, const access *cur)
{
    if (b->has_writer && !ordered(&b->writer, cur->s))
        report(RAW, b, cur, &b->writer);
    for (int i = 0; i < b->nreaders; i++)
        if (b->readers[i].s == cur->s) { b->readers[i] = *cur; return; }
    if (b->nreaders < MAXR) b->readers[b->nreaders++] = *cur;
    else b->readers[MAXR - 1] = *cur;
}

static void on_write(bstate *b, const access *cur)
{
    if (b->has_writer && !ordered(&b->writer, cur->s))
        report(WAW, b, cur, &b->writer);
    for (int i = 0; i < b->nreaders; i++)
        if (!ordered(&b->readers[i], cur->s)) {
            report(WAR, b, cur, &b->readers[i]);
            break;
        }
    b->writer = *cur;
    b->has_writer = 1;
    b->nreaders = 0;
}

/* Reads and writes of one work item, as device pointers. */
static int accesses(const hwi_work *w, const void **rd, const void **wr, int *nw)
{
    int nr = 0;
    *nw = 0;
    switch (w->kind) {
    case HWI_WORK_COPY: {
        hwrt_memcpy_kind k = w->u.copy.kind;
        if (k == HWRT_MEMCPY_DEVICE_TO_HOST || k == HWRT_MEMCPY_DEVICE_TO_DEVICE)
            rd[nr++] = w->u.copy.src;
        if (k == HWRT_MEMCPY_HOST_TO_DEVICE || k == HWRT_MEMCPY_DEVICE_TO_DEVICE)
            wr[(*nw)++] = w->u.copy.dst;
        break;
    }
    case HWI_WORK_MEMSET: wr[(*nw)++] = w->u.set.dst; break;
    case HWI_WORK_KERNEL:
        if (w->u.kernel.a) rd[nr++] = w->u.kernel.a;
        if (w->u.kernel.b) rd[nr++] = w->u.kernel.b;
        wr[(*nw)++] = w->u.kernel.out;
        break;
    default: break;
    }
    return nr;
}

/* A slot is reused for h when it is h's, or a destroyed public event's; the runtime's
 * internal events are not handles and stay until hwi_sync_check_forget_event. */
static void event_store(void *h, int internal, const uint64_t *vc)
{
    for (size_t i = 0; i < nevents; i++)
        if (events[i].handle == h ||
            (!events[i].internal && !hwi_handle_live(events[i].handle, HWI_H_EVENT))) {
            events[i].handle = h;
            events[i].internal = internal;
            memcpy(events[i].vc, vc, sizeof events[i].vc);
            return;
        }
    if (nevents == cap_events) {
        size_t nc = cap_events ? cap_events * 2 : 32;
        estate *ne = realloc(events, nc * sizeof *ne);
        if (!ne) return;
        events = ne;
        cap_events = nc;
    }
    events[nevents].handle = h;
    events[nevents].internal = internal;
    memcpy(events[nevents++].vc, vc, sizeof events[0].vc);
}

static const estate *event_find(void *h)
{
    for (size_t i = 0; i < nevents; i++)
        if (events[i].handle == h) return &events[i];
    return NULL;
}

static hwrt_status sc_pre(void *ctx, hwi_work *w)
{
    (void)ctx;
    if (!enabled() || w->stream->capture)
        return HWRT_SUCCESS;                 /* captured work is checked when replayed */
    const char *api = tl_api;
    tl_api = NULL;
    pthread_mutex_lock(&mu);
    int s = stream_index(w->stream);
    if (s < 0) { pthread_mutex_unlock(&mu); return HWRT_SUCCESS; }
    sstate *st = &streams[s];
    join(st->vc, host_vc);
    if (w->kind == HWI_WORK_EVENT_RECORD) {
        event_store(w->u.event.ev->handle, w->u.event.ev->internal, st->vc);
    } else if (w->kind == HWI_WORK_EVENT_WAIT) {
        const estate *e = event_find(w->u.event.ev->handle);
        if (e) join(st->vc, e->vc);
    } else {
        st->vc[s] = ++st->seq;
        access cur = {s, st->seq, w->name, NULL};
        if (w->kind == HWI_WORK_COPY && w->u.copy.kind == HWRT_MEMCPY_DEVICE_TO_HOST) cur.api = api;
        const void *rd[3], *wr[2];
        int nw, nr = accesses(w, rd, wr, &nw);
        for (int i = 0; i < nr; i++) {
            bstate *b = block_for(rd[i]);
            if (b) on_read(b, &cur);
        }
        for (int i = 0; i < nw; i++) {
            bstate *b = block_for(wr[i]);
            if (b) on_write(b, &cur);
        }
    }
    pthread_mutex_unlock(&mu);
    return HWRT_SUCCESS;
}

static void sc_post(void *ctx, const hwi_work *w, hwrt_status status)
{
    (void)ctx;
    /* a pageable host copy returns once it ran, so the host is ordered after it */
    if (status != HWRT_SUCCESS || w->kind != HWI_WORK_COPY || w->u.copy.pinned ||
        !enabled() || w->stream->capture)
        return;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nstreams; i++)
        if (streams[i].handle == w->stream->handle) join(host_vc, streams[i].vc);
    pthread_mutex_unlock(&mu);
}

/* Blocks freed since they were last seen start over. */
static void prune_locked(void)
{
    size_t k = 0;
    for (size_t i = 0; i < nblocks; i++) {
        hwi_block_info bi;
        if (hwi_pool_find(blocks[i].base, 1, &bi) && bi.base == blocks[i].base &&
            bi.size == blocks[i].size)
            blocks[k++] = blocks[i];
    }
    nblocks = k;
}

static hwrt_status sc_host_sync(void *ctx, const char *api, hwi_stream *s)
{
    (void)ctx;
    if (!enabled() || (s && s->capture) || hwi_capture_on_this_thread())
        return HWRT_SUCCESS;                 /* the capture hook refuses the call */
    if (strstr(api, "memcpy") || strstr(api, "copy_to_host")) tl_api = api;
    pthread_mutex_lock(&mu);
    /* called just before the wait: the caller is ordered after s (or everything) */
    for (int i = 0; i < nstreams; i++)
        if (!s || streams[i].handle == s->handle) join(host_vc, streams[i].vc);
    prune_locked();
    pthread_mutex_unlock(&mu);
    return HWRT_SUCCESS;
}

/* The host read's own copy was dispatched between the two: a label left by the final
 * synchronization must not name the thread's next device-to-host copy. */
static void sc_host_sync_end(void *ctx, const char *api, hwi_stream *s, hwrt_status st)
{
    (void)ctx, (void)api, (void)s, (void)st;
    tl_api = NULL;
}

static void sc_forget(void *ctx, const void *base) { (void)ctx; hwi_sync_check_forget(base); }
static void sc_forget_event(void *ctx, const void *handle)
{
    (void)ctx;
    hwi_sync_check_forget_event(handle);
}

static const hwi_hook sync_hook = {.pre = sc_pre, .post = sc_post, .host_sync = sc_host_sync,
                                   .host_sync_end = sc_host_sync_end, .forget = sc_forget,
                                   .forget_event = sc_forget_event};

/* Installed at load time so that HWRT_CHECK_SYNC, HWRT_*_CONF and hwrt_set_config all
 * work; while off, each callback is one relaxed load and a return. */
__attribute__((constructor)) static void install(void)
{
    hwi_dispatch_add_hook(&sync_hook);
}

uint64_t hwi_sync_check_hazards(void) { return atomic_load(&hazards); }

void hwi_sync_check_last(char *buf, size_t len)
{
    pthread_mutex_lock(&mu);
    snprintf(buf, len, "%s", last_report);
    pthread_mutex_unlock(&mu);
}

void hwi_sync_check_forget(const void *base)
{
    if (!enabled()) return;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < nblocks; i++)
        if (blocks[i].base == base) blocks[i] = blocks[--nblocks];
    pthread_mutex_unlock(&mu);
}

void hwi_sync_check_forget_event(const void *handle)
{
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < nevents; i++)
        if (events[i].handle == handle) events[i] = events[--nevents];
    pthread_mutex_unlock(&mu);
}

void hwi_sync_check_reset(void)
{
    pthread_mutex_lock(&mu);
    memset(streams, 0, sizeof streams);
    nstreams = 0;
    memset(host_vc, 0, sizeof host_vc);
    nevents = nblocks = 0;
    last_report[0] = 0;
    atomic_store(&hazards, 0);
    pthread_mutex_unlock(&mu);
}
