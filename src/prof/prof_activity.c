/* Device spans from the backend's activity records (backend.h, activity_enable), as
 * CUPTI's activity API and ACL's profiling give them: at launch the dispatch hook gives
 * the work a correlation id (hwi_backend_correlation, read by the backend as it queues
 * the op); the backend's own thread (a sim engine) hands on_activity batches of records
 * (id, device start, device end) of the ops it ran. No event per launch, no lock shared
 * with the launching thread.
 *
 * Records go to a buffer per reporting thread, with the same busy-flag handshake as the
 * tracer's buffers (prof_tracer.c), in chunks from the tracer's pre-touched pool. They
 * are joined to the work records by id when the session writes its file. Ids are
 * (thread number << 32 | launch number on that thread): unique, and no shared counter
 * on the launch path. */
#include "prof.h"
#include "../core/runtime.h"
#include "../exec/dispatch.h"
#include "../backends/backend.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

typedef struct prof_act { uint64_t corr, start, end; } prof_act;   /* = hwrt_activity */
_Static_assert(sizeof(prof_act) == sizeof(hwrt_activity), "records are copied as they come");

/* records reuse the tracer's chunks: as many as fit in its record array */
#define ACT_PER_CHUNK (sizeof(((prof_chunk *)0)->recs) / (sizeof(prof_act)))

typedef struct act_buf {
    struct act_buf *next;        /* every buffer ever made (kept: threads hold them) */
    prof_chunk *first, *cur;
    size_t in_cur;
    _Atomic size_t count;        /* records in all chunks */
    _Atomic int busy;            /* inside on_activity */
} act_buf;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static act_buf *bufs;
static _Atomic int act_on;
static uint64_t cap_chunks;
static _Atomic uint64_t chunks_used;
static uint64_t missing;
/* the backend the last launch used, and whether it reports activities (set together
 * under mu; `usable` is read after `seen` with acquire) */
static _Atomic(const hwrt_backend_ops *) seen;
static _Atomic int usable;
static _Atomic uint32_t threads;
static int markers_only;           /* HWRT_PROFILE_MARKERS=1: compare with the fallback */

static _Thread_local act_buf *tls_buf;
static _Thread_local uint64_t tls_next;    /* last id given on this thread */

static act_buf *buf_register(void)
{
    act_buf *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    pthread_mutex_lock(&mu);
    b->next = bufs;
    bufs = b;
    pthread_mutex_unlock(&mu);
    tls_buf = b;
    return b;
}

static int chunk_add(act_buf *b)
{
    if (atomic_fetch_add_explicit(&chunks_used, 1, memory_order_relaxed) >= cap_chunks)
        return 0;
    prof_chunk *c = prof_chunk_get();
    if (!c) return 0;
    c->next = NULL;
    if (b->cur) b->cur->next = c;
    else b->first = c;
    b->cur = c;
    b->in_cur = 0;
    return 1;
}

/* The sink the backend calls on its own thread with a batch (see hwrt_activity_fn). */
static void on_activity(void *ctx, const hwrt_activity *recs, size_t n)
{
    (void)ctx;
    act_buf *b = tls_buf ? tls_buf : buf_register();
    if (!b) return;                    /* host out of memory: the launches count as missing */
    atomic_exchange_explicit(&b->busy, 1, memory_order_seq_cst);
    size_t cnt = atomic_load_explicit(&b->count, memory_order_relaxed);
    while (n && atomic_load_explicit(&act_on, memory_order_relaxed)) {
        if ((!b->cur || b->in_cur == ACT_PER_CHUNK) && !chunk_add(b))
            break;                     /* past the cap: the launches count as missing */
        size_t k = ACT_PER_CHUNK - b->in_cur < n ? ACT_PER_CHUNK - b->in_cur : n;
        memcpy((prof_act *)(void *)b->cur->recs + b->in_cur, recs, k * sizeof *recs);
        b->in_cur += k;
        recs += k;
        n -= k;
        cnt += k;
        atomic_store_explicit(&b->count, cnt, memory_order_release);
    }
    atomic_store_explicit(&b->busy, 0, memory_order_release);
}

void prof_activity_start(uint64_t cap)
{
    pthread_mutex_lock(&mu);
    cap_chunks = (cap + ACT_PER_CHUNK - 1) / ACT_PER_CHUNK;
    const char *m = getenv("HWRT_PROFILE_MARKERS");
    markers_only = m && !strcmp(m, "1");
    atomic_store(&chunks_used, 0);
    missing = 0;
    atomic_store(&seen, NULL);         /* enabled again by the first launch */
    atomic_store(&usable, 0);
    atomic_store(&act_on, 1);
    pthread_mutex_unlock(&mu);
}

/* First launch with backend ops in this session: turn its records on if it has them. */
static int enable(const hwrt_backend_ops *ops)
{
    pthread_mutex_lock(&mu);
    int ok = atomic_load(&act_on) && !markers_only && ops->activity_enable &&
             ops->activity_query && ops->activity_enable(on_activity, NULL) == HWRT_SUCCESS;
    atomic_store(&usable, ok);
    atomic_store_explicit(&seen, ops, memory_order_release);
    pthread_mutex_unlock(&mu);
    return ok;
}

uint64_t prof_activity_correlate(const hwi_work *w)
{
    const hwrt_backend_ops *ops = hwi_ops_if_selected();
    if (!ops) return 0;
    int ok = atomic_load_explicit(&seen, memory_order_acquire) == ops
                 ? atomic_load_explicit(&usable, memory_order_relaxed)
                 : enable(ops);
    /* waits are control ops, not reported; a host function without the backend's slot
     * runs inline on this thread (dispatch.c) */
    if (!ok || w->kind == HWI_WORK_EVENT_RECORD || w->kind == HWI_WORK_EVENT_WAIT ||
        (w->kind == HWI_WORK_HOST_FUNC && !ops->host_func))
        return 0;
    if (!tls_next)
        tls_next = (uint64_t)(atomic_fetch_add(&threads, 1) + 1) << 32;
    hwi_backend_correlation = ++tls_next;
    return tls_next;
}

void prof_activity_drain(uint64_t deadline_ns)
{
    const hwrt_backend_ops *ops = atomic_load(&seen);
    if (!ops || !atomic_load(&usable)) return;
    while (ops->activity_query() == HWRT_ERROR_NOT_READY && hwi_prof_now_ns() < deadline_ns)
        sched_yield();
}

static int by_corr(const void *a, const void *b)
{
    const prof_act *x = a, *y = b;
    return x->corr < y->corr ? -1 : x->corr > y->corr;
}

/* Every record so far, sorted by id (caller holds mu); NULL with *n 0 if none. */
static prof_act *gather_locked(size_t *n)
{
    size_t total = 0;
    for (act_buf *b = bufs; b; b = b->next) total += atomic_load(&b->count);
    *n = 0;
    prof_act *v = total ? malloc(total * sizeof *v) : NULL;
    if (!v) return NULL;
    for (act_buf *b = bufs; b; b = b->next) {
        size_t cnt = atomic_load_explicit(&b->count, memory_order_acquire), i = 0;
        for (prof_chunk *c = b->first; c && i < cnt && *n < total; c = c->next)
            for (size_t k = 0; k < ACT_PER_CHUNK && i < cnt && *n < total; k++, i++)
                v[(*n)++] = ((prof_act *)(void *)c->recs)[k];
    }
    qsort(v, *n, sizeof *v, by_corr);
    return v;
}

void prof_activity_join(prof_buf *const *wbufs, int nbufs)
{
    pthread_mutex_lock(&mu);
    size_t n;
    prof_act *v = gather_locked(&n);
    pthread_mutex_unlock(&mu);
    uint64_t miss = 0;
    for (int t = 0; t < nbufs; t++) {
        size_t cnt = atomic_load_explicit(&wbufs[t]->count, memory_order_acquire), i = 0;
        for (prof_chunk *c = wbufs[t]->first; c && i < cnt; c = c->next)
            for (size_t k = 0; k < PROF_CHUNK && i < cnt; k++, i++) {
                prof_rec *r = &c->recs[k];
                if (r->type != PREC_WORK || !r->corr) continue;
                prof_act key = {r->corr, 0, 0};
                const prof_act *a = n ? bsearch(&key, v, n, sizeof *v, by_corr) : NULL;
                if (!a) { miss++; continue; }
                /* an op handed to its engine back to back starts at the previous end,
                 * which can precede the launch by the few ns the hand-over took */
                r->dev_start = a->start > r->t0 ? a->start : r->t0;
                if (r->dev_start > a->end) r->dev_start = a->end;
                atomic_store_explicit(&r->dev_end, a->end, memory_order_relaxed);
            }
    }
    free(v);
    pthread_mutex_lock(&mu);
    missing = miss;
    pthread_mutex_unlock(&mu);
}

uint64_t prof_activity_missing(void)
{
    pthread_mutex_lock(&mu);
    uint64_t m = missing;
    pthread_mutex_unlock(&mu);
    return m;
}

void prof_activity_stop(void)
{
    pthread_mutex_lock(&mu);
    atomic_store(&act_on, 0);
    const hwrt_backend_ops *ops = atomic_load(&seen);
    if (ops && atomic_load(&usable)) ops->activity_enable(NULL, NULL);
    atomic_store(&seen, NULL);
    atomic_store(&usable, 0);
    atomic_thread_fence(memory_order_seq_cst);
    for (act_buf *b = bufs; b; b = b->next) {
        uint64_t until = hwi_prof_now_ns() + 1000000000ull;
        while (atomic_load_explicit(&b->busy, memory_order_acquire) && hwi_prof_now_ns() < until)
            sched_yield();
        for (prof_chunk *c = b->first, *nx; c; c = nx) {
            nx = c->next;
            prof_chunk_put(c);
        }
        b->first = b->cur = NULL;
        b->in_cur = 0;
        atomic_store(&b->count, 0);
    }
    pthread_mutex_unlock(&mu);
}
