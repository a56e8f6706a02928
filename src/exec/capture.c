/* Graph capture: begin/end, the dispatch hooks that record work on capturing streams,
 * and the host-sync guard. When no capture is active the hooks cost one atomic load. */
#include "capture.h"
#include "event.h"
#include "../runtime/handle.h"
#include "../base/status.h"
#include "../mem/host_mem.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ACTIVE 64

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static hwi_graph *active[MAX_ACTIVE];     /* captures in progress */
static _Atomic int nactive;

static hwi_graph *stream_capture(hwi_stream *s)
{
    return s ? __atomic_load_n((hwi_graph **)&s->capture, __ATOMIC_ACQUIRE) : NULL;
}

int hwi_capture_on_this_thread(void)
{
    if (!atomic_load_explicit(&nactive, memory_order_acquire))
        return 0;
    int found = 0;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < MAX_ACTIVE; i++)
        if (active[i] && pthread_equal(active[i]->owner, pthread_self())) found = 1;
    pthread_mutex_unlock(&mu);
    return found;
}

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 1;
    size_t nc = *cap ? *cap * 2 : 64;
    while (nc < need) nc *= 2;
    void *na = realloc(*arr, nc * elem);
    if (!na) return 0;
    *arr = na;
    *cap = nc;
    return 1;
}

static void note_ptr(hwi_graph *g, const void *p, size_t bytes, int host)
{
    if (!p) return;
    for (size_t i = 0; i < g->nptr; i++)
        if (g->ptrs[i].p == p && g->ptrs[i].host == host) {
            if (bytes > g->ptrs[i].bytes) g->ptrs[i].bytes = bytes;
            return;
        }
    if (!grow((void **)&g->ptrs, &g->cap_ptr, g->nptr + 1, sizeof *g->ptrs)) { g->oom = 1; return; }
    g->ptrs[g->nptr++] = (hwi_graph_ptr){p, bytes, host};
}

static void note_ptrs(hwi_graph *g, const hwi_work *w)
{
    if (w->kind == HWI_WORK_COPY) {
        hwrt_memcpy_kind k = w->u.copy.kind;
        int dst_dev = k == HWRT_MEMCPY_HOST_TO_DEVICE || k == HWRT_MEMCPY_DEVICE_TO_DEVICE;
        int src_dev = k == HWRT_MEMCPY_DEVICE_TO_HOST || k == HWRT_MEMCPY_DEVICE_TO_DEVICE;
        /* host sides: only pinned buffers are hwrt's to check (pageable is refused) */
        if (dst_dev || hwi_host_is_pinned(w->u.copy.dst, w->u.copy.bytes))
            note_ptr(g, w->u.copy.dst, w->u.copy.bytes, !dst_dev);
        if (src_dev || hwi_host_is_pinned(w->u.copy.src, w->u.copy.bytes))
            note_ptr(g, w->u.copy.src, w->u.copy.bytes, !src_dev);
    } else if (w->kind == HWI_WORK_MEMSET) {
        note_ptr(g, w->u.set.dst, w->u.set.bytes, 0);
    } else if (w->kind == HWI_WORK_KERNEL) {
        note_ptr(g, w->u.kernel.out, 1, 0);
        note_ptr(g, w->u.kernel.a, 1, 0);
        note_ptr(g, w->u.kernel.b, 1, 0);
    }
}

/* An eager stream must not wait for an event whose latest record is inside a capture:
 * that record has not happened and only will at each replay. */
static hwrt_status check_eager_wait(const hwi_work *w)
{
    void *h = w->u.event.ev->handle;
    hwrt_status st = HWRT_SUCCESS;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < MAX_ACTIVE && st == HWRT_SUCCESS; i++) {
        hwi_graph *g = active[i];
        for (size_t j = 0; g && j < g->n; j++)
            if (g->events[j] == h && g->nodes[j].kind == HWI_WORK_EVENT_RECORD) {
                st = hwi_err(HWRT_ERROR_NOT_PERMITTED, "hwrt_stream_wait_event: event %p was "
                             "recorded inside the graph being captured on device %d; a stream "
                             "outside the capture cannot wait for it (multi-stream capture is "
                             "not supported). Record the event outside the captured region, or "
                             "queue the waiting work on the capturing stream", h, g->device);
                break;
            }
    }
    pthread_mutex_unlock(&mu);
    return st;
}

static hwrt_status cap_pre(void *ctx, hwi_work *w)
{
    (void)ctx;
    if (!atomic_load_explicit(&nactive, memory_order_acquire))
        return HWRT_SUCCESS;
    hwi_graph *g = stream_capture(w->stream);
    if (!g)
        return w->kind == HWI_WORK_EVENT_WAIT ? check_eager_wait(w) : HWRT_SUCCESS;
    if (w->kind == HWI_WORK_COPY && !w->u.copy.pinned)
        return hwi_err(HWRT_ERROR_NOT_PERMITTED, "%s during graph capture on device %d: the "
                       "host buffer is pageable, so the copy would block the caller at capture "
                       "time; use pinned memory (hwrt_host_alloc with HWRT_HOST_PINNED), or move "
                       "the copy outside the captured region", w->name, g->device);
    pthread_mutex_lock(&mu);       /* vs. check_eager_wait reading the node list */
    if (stream_capture(w->stream) != g) {   /* the capture ended meanwhile: run it eagerly */
        pthread_mutex_unlock(&mu);
        return HWRT_SUCCESS;
    }
    int ok = grow((void **)&g->nodes, &g->cap, g->n + 1, sizeof *g->nodes);
    if (ok) {
        size_t cap = g->cap;
        void **ne = realloc(g->events, cap * sizeof *ne);
        if (ne) g->events = ne;
        ok = ne != NULL;
    }
    if (ok) {
        g->nodes[g->n] = *w;
        g->nodes[g->n].stream = NULL;          /* set at launch */
        int ev = w->kind == HWI_WORK_EVENT_RECORD || w->kind == HWI_WORK_EVENT_WAIT;
        g->events[g->n] = ev ? w->u.event.ev->handle : NULL;
        g->n++;
        note_ptrs(g, w);
    } else {
        g->oom = 1;
    }
    pthread_mutex_unlock(&mu);
    if (!ok) {
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "recording %s into a graph on device %d: "
                       "host out of memory; the capture will be dropped at "
                       "hwrt_stream_end_capture", w->name, g->device);
    }
    w->consumed = 1;
    return HWRT_SUCCESS;
}

static hwrt_status cap_host_sync(void *ctx, const char *api, hwi_stream *s)
{
    (void)ctx;
    if (!atomic_load_explicit(&nactive, memory_order_acquire))
        return HWRT_SUCCESS;
    hwi_graph *g = stream_capture(s);
    int dev = g ? g->device : -1;
    if (!g) {
        pthread_mutex_lock(&mu);
        for (int i = 0; i < MAX_ACTIVE && !g; i++) {
            hwi_graph *a = active[i];
            /* the capturing thread, or any device-wide wait while something captures */
            if (a && (pthread_equal(a->owner, pthread_self()) || !s)) { g = a; dev = a->device; }
        }
        pthread_mutex_unlock(&mu);
    }
    if (!g)
        return HWRT_SUCCESS;
    return hwi_err(HWRT_ERROR_NOT_PERMITTED, "%s is not permitted while a graph is being "
                   "captured (device %d): a host synchronization or host read inside the "
                   "captured region would run once now, not at each replay. Move %s outside "
                   "the captured region (before hwrt_stream_begin_capture or after "
                   "hwrt_stream_end_capture)", api, dev, api);
}

static const hwi_hook capture_hook = {.pre = cap_pre, .host_sync = cap_host_sync};

void hwi_capture_keep(hwi_stream *s, void *obj, int write, const hwi_keep_ops *ops)
{
    pthread_mutex_lock(&mu);          /* several threads may queue on one capturing stream */
    hwi_graph *g = stream_capture(s);
    size_t i = 0;
    while (g && i < g->nkeep && g->keeps[i].obj != obj) i++;
    if (g && i < g->nkeep) {
        g->keeps[i].write |= write;
    } else if (g && !grow((void **)&g->keeps, &g->cap_keep, g->nkeep + 1, sizeof *g->keeps)) {
        g->oom = 1;
    } else if (g) {
        ops->retain(obj);
        g->keeps[g->nkeep++] = (hwi_keep){obj, write, ops};
    }
    pthread_mutex_unlock(&mu);
}

hwrt_status hwrt_stream_begin_capture(hwrt_stream h)
{
    HWI_STREAM_REF(s);
    HWI_TRY(hwi_stream_resolve(h, &s));
    HWI_TRY(hwi_dispatch_add_hook(&capture_hook));
    hwi_graph *g = calloc(1, sizeof *g);
    if (!g)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "hwrt_stream_begin_capture: host out of "
                       "memory");
    g->device = s->device;
    g->origin = s;
    g->owner = pthread_self();
    pthread_mutex_init(&g->mu, NULL);
    pthread_mutex_lock(&mu);
    int slot = -1;
    for (int i = 0; i < MAX_ACTIVE && slot < 0; i++)
        if (!active[i]) slot = i;
    void *expect = NULL;
    int won = slot >= 0 && __atomic_compare_exchange_n(&s->capture, &expect, g, 0,
                                                       __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    if (won) {
        active[slot] = g;
        atomic_fetch_add(&nactive, 1);
    }
    pthread_mutex_unlock(&mu);
    if (!won) {
        hwi_graph_free(g);
        if (expect)
            return hwi_err(HWRT_ERROR_NOT_PERMITTED, "hwrt_stream_begin_capture: the stream is "
                           "already capturing a graph; call hwrt_stream_end_capture first");
        return hwi_err(HWRT_ERROR_NOT_PERMITTED, "hwrt_stream_begin_capture: %d captures are "
                       "already in progress; end one first", MAX_ACTIVE);
    }
    return HWRT_SUCCESS;
}

hwrt_status hwrt_stream_end_capture(hwrt_stream h, hwrt_graph *out)
{
    HWI_STREAM_REF(s);
    HWI_TRY(hwi_stream_resolve(h, &s));
    if (!out)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_stream_end_capture: out is NULL (the "
                       "capture goes on)");
    pthread_mutex_lock(&mu);
    hwi_graph *g = stream_capture(s);
    if (g) {
        __atomic_store_n(&s->capture, NULL, __ATOMIC_RELEASE);
        for (int i = 0; i < MAX_ACTIVE; i++)
            if (active[i] == g) active[i] = NULL;
        atomic_fetch_sub(&nactive, 1);
        g->origin = NULL;
    }
    pthread_mutex_unlock(&mu);
    if (!g)
        return hwi_err(HWRT_ERROR_NOT_PERMITTED, "hwrt_stream_end_capture: the stream is not "
                       "capturing; call hwrt_stream_begin_capture first");
    *out = NULL;
    if (g->oom) {
        hwi_graph_free(g);
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "hwrt_stream_end_capture: host memory ran "
                       "out while recording, so the graph was dropped; the stream is eager "
                       "again");
    }
    HWI_TRY(hwi_graph_publish(g));
    *out = g->handle;
    return HWRT_SUCCESS;
}

void hwi_capture_abort_all(void)
{
    pthread_mutex_lock(&mu);
    for (int i = 0; i < MAX_ACTIVE; i++) {
        hwi_graph *g = active[i];
        if (!g) continue;
        active[i] = NULL;
        atomic_fetch_sub(&nactive, 1);
        if (g->origin) __atomic_store_n(&g->origin->capture, NULL, __ATOMIC_RELEASE);
        hwi_graph_free(g);
    }
    pthread_mutex_unlock(&mu);
}
