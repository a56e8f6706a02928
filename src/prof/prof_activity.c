/* Device spans from the backend's activity records (backend.h, activity_enable), as
 * CUPTI's activity API and ACL's profiling give them: at launch the dispatch hook gives
 * the work a correlation id (hwi_backend_correlation, read by the backend as it queues
 * the op); the backend's own thread (a sim engine) hands on_activity batches of records
 * (id, device start, device end) of the ops it ran. No event per launch, and nothing
 * shared with the launching thread.
 *
 * Records go to one buffer under a mutex: calls come once per batch (up to 32 ops on the
 * sim), so the lock is taken rarely and no thread-local state is needed (libhwrt's
 * thread-locals are static TLS, scarce when Python dlopens it). Chunks come from the tracer's pre-touched pool. Records are joined to the work
 * records by id when the session writes its file. Ids (prof_next_corr, prof_tracer.c)
 * name the session, the thread and the launch, so a late report from an earlier session
 * matches nothing. */
#include "prof.h"
#include "../base/config.h"
#include "../runtime/device_ops.h"
#include "../runtime/runtime.h"
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

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;      /* the state below */
static pthread_mutex_t buf_mu = PTHREAD_MUTEX_INITIALIZER;  /* the records */
static prof_chunk *first, *cur;
static size_t in_cur, count;
static int act_on;                 /* under buf_mu: a session takes records */
static uint64_t cap_chunks, chunks_used;
static uint64_t missing;
/* the backend the last launch used, and whether it reports activities (set together
 * under mu; `usable` is read after `seen` with acquire) */
static _Atomic(const hwrt_backend_ops *) seen;
static _Atomic int usable;
static int markers_only;           /* HWRT_PROFILE_MARKERS=1: compare with the fallback */

/* The sink the backend calls on its own thread with a batch (see hwrt_activity_fn). */
static void on_activity(void *ctx, const hwrt_activity *recs, size_t n)
{
    (void)ctx;
    pthread_mutex_lock(&buf_mu);
    while (n && act_on) {
        if (!cur || in_cur == ACT_PER_CHUNK) {
            prof_chunk *c = chunks_used < cap_chunks ? prof_chunk_get() : NULL;
            if (!c) break;             /* past the cap: the launches count as missing */
            chunks_used++;
            c->next = NULL;
            if (cur) cur->next = c;
            else first = c;
            cur = c;
            in_cur = 0;
        }
        size_t k = ACT_PER_CHUNK - in_cur < n ? ACT_PER_CHUNK - in_cur : n;
        memcpy((prof_act *)(void *)cur->recs + in_cur, recs, k * sizeof *recs);
        in_cur += k;
        count += k;
        recs += k;
        n -= k;
    }
    pthread_mutex_unlock(&buf_mu);
}

void prof_activity_start(uint64_t cap)
{
    pthread_mutex_lock(&mu);
    markers_only = hwi_env_flag("HWRT_PROFILE_MARKERS", 0);
    missing = 0;
    atomic_store(&seen, NULL);         /* enabled again by the first launch */
    atomic_store(&usable, 0);
    pthread_mutex_lock(&buf_mu);
    cap_chunks = (cap + ACT_PER_CHUNK - 1) / ACT_PER_CHUNK;
    chunks_used = 0;
    act_on = 1;
    pthread_mutex_unlock(&buf_mu);
    pthread_mutex_unlock(&mu);
}

/* First launch in this session: turn its backend's records on if it has them. */
static int enable(const hwrt_backend_ops *ops)
{
    pthread_mutex_lock(&mu);
    const hwrt_backend_ops *now = atomic_load(&seen);
    if (now) {                         /* another thread's launch enabled a backend first */
        int ok = now == ops && atomic_load(&usable);
        pthread_mutex_unlock(&mu);
        return ok;
    }
    pthread_mutex_lock(&buf_mu);
    int on = act_on;
    pthread_mutex_unlock(&buf_mu);
    int ok = on && !markers_only && hwi_backend_has_activity(ops) &&
             hwi_backend_activity_enable(ops, on_activity, NULL) == HWRT_SUCCESS;
    atomic_store(&usable, ok);
    atomic_store_explicit(&seen, ops, memory_order_release);
    pthread_mutex_unlock(&mu);
    return ok;
}

uint64_t prof_activity_correlate(const hwi_work *w)
{
    /* the records of one backend per session (the first one launched on); work on a
     * device of another backend gets markers (prof_markers.c) */
    const hwi_device *d = w->stream->dev;
    const hwrt_backend_ops *s = atomic_load_explicit(&seen, memory_order_acquire);
    int ok = s == d->ops ? atomic_load_explicit(&usable, memory_order_relaxed)
                         : !s && enable(d->ops);
    /* waits are control ops, not reported; a host function without the backend's slot
     * runs inline on this thread (device_ops.c) */
    uint64_t id = 0;
    if (ok && w->kind != HWI_WORK_EVENT_RECORD && w->kind != HWI_WORK_EVENT_WAIT &&
        (w->kind != HWI_WORK_HOST_FUNC || hwi_dev_has_host_func(d)))
        id = prof_next_corr();
    hwi_backend_correlation = id;      /* also clears an id a consumed launch left */
    return id;
}

void prof_activity_drain(uint64_t deadline_ns)
{
    const hwrt_backend_ops *ops = atomic_load(&seen);
    if (!ops || !atomic_load(&usable)) return;
    while (hwi_backend_activity_query(ops) == HWRT_ERROR_NOT_READY &&
           hwi_prof_now_ns() < deadline_ns)
        sched_yield();
}

static int by_corr(const void *a, const void *b)
{
    const prof_act *x = a, *y = b;
    return x->corr < y->corr ? -1 : x->corr > y->corr;
}

/* Every record so far, sorted by id; NULL with *n 0 if none. */
static prof_act *gather(size_t *n)
{
    pthread_mutex_lock(&buf_mu);
    size_t total = count, i = 0;
    prof_act *v = total ? malloc(total * sizeof *v) : NULL;
    for (prof_chunk *c = first; v && c && i < total; c = c->next) {
        size_t k = total - i < ACT_PER_CHUNK ? total - i : ACT_PER_CHUNK;
        memcpy(v + i, c->recs, k * sizeof *v);
        i += k;
    }
    pthread_mutex_unlock(&buf_mu);
    *n = v ? i : 0;
    if (v) qsort(v, *n, sizeof *v, by_corr);
    return v;
}

void prof_activity_join(prof_buf *const *wbufs, int nbufs)
{
    size_t n;
    prof_act *v = gather(&n);
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
    const hwrt_backend_ops *ops = atomic_load(&seen);
    if (ops && atomic_load(&usable)) hwi_backend_activity_enable(ops, NULL, NULL);
    atomic_store(&seen, NULL);
    atomic_store(&usable, 0);
    pthread_mutex_lock(&buf_mu);       /* a report under way finishes first; later ones */
    act_on = 0;                        /* find act_on cleared */
    for (prof_chunk *c = first, *nx; c; c = nx) {
        nx = c->next;
        prof_chunk_put(c);
    }
    first = cur = NULL;
    in_cur = count = 0;
    pthread_mutex_unlock(&buf_mu);
    pthread_mutex_unlock(&mu);
}
