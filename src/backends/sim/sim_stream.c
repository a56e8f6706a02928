/* Streams: in-order queues. Only the head op of a stream is ever on an engine; when it
 * completes, the next one is handed to its engine. Event records and waits are control
 * ops handled right here, without an engine. */
#include "sim.h"
#include "sim_sched.h"
#include "../../base/status.h"
#include "../../base/spin.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t blocked_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t unpinned_cv = PTHREAD_COND_INITIALIZER;   /* a kick let a stream go */
/* streams whose head is (or was: see advance_locked's second look) an unsatisfied WAIT,
 * each listed once. Room for every live stream is reserved when a stream is created
 * (sim_stream_create), so listing one never allocates: a stream that could not be listed
 * for want of host memory would never be woken (issue 25: found by tests/unit/test_cov_oom). */
static sim_stream **blocked;
static int nblocked, cap_blocked, nstreams;
static _Atomic int any_blocked;

void sim_mark_blocked(sim_stream *s)
{
    pthread_mutex_lock(&blocked_mu);
    if (!s->listed && nblocked < cap_blocked) {   /* always room: nblocked <= nstreams */
        s->listed = 1;
        blocked[nblocked++] = s;
    }
    atomic_store(&any_blocked, 1);
    pthread_mutex_unlock(&blocked_mu);
}

/* Room on the blocked list for one more stream; 0 when the host is out of memory. */
static int reserve_blocked(void)
{
    pthread_mutex_lock(&blocked_mu);
    int ok = 1;
    if (nstreams == cap_blocked) {
        int nc = cap_blocked ? cap_blocked * 2 : 16;
        sim_stream **nb = realloc(blocked, (size_t)nc * sizeof *nb);
        if (nb) {
            blocked = nb;
            cap_blocked = nc;
        } else {
            ok = 0;
        }
    }
    if (ok) nstreams++;
    pthread_mutex_unlock(&blocked_mu);
    return ok;
}

/* A stream can stay listed after its WAIT was satisfied (advance_locked's second look):
 * harmless while it lives, a write into freed memory at the next kick once destroyed. So
 * destroy takes s off, waits for kicks that took s before it did, and gives back its
 * room on the list. */
void sim_unlist_blocked(sim_stream *s)
{
    pthread_mutex_lock(&blocked_mu);
    for (int i = 0; i < nblocked;)
        if (blocked[i] == s) blocked[i] = blocked[--nblocked];
        else i++;
    s->listed = 0;
    if (!nblocked) atomic_store(&any_blocked, 0);
    while (s->kick_pins)
        pthread_cond_wait(&unpinned_cv, &blocked_mu);
    nstreams--;
    pthread_mutex_unlock(&blocked_mu);
}

/* ---- op freelist (see struct hwrt_bstream) ---- */

/* Ops kept per stream for reuse (120 bytes each: at most 15 MiB, reached only by a stream
 * that once had this many queued); beyond that retired ops go back to malloc. */
#define SIM_SPARE_OPS (1 << 17)

sim_op *sim_op_new(sim_stream *s, sim_op_type type, int engine)
{
    while (atomic_flag_test_and_set_explicit(&s->alloc_lock, memory_order_acquire))
        hwi_cpu_relax();
    sim_op *op = s->spare;
    if (!op) op = atomic_exchange_explicit(&s->returned, NULL, memory_order_acquire);
    if (op) {
        s->spare = op->next;
        atomic_fetch_sub_explicit(&s->nspare, 1, memory_order_relaxed);
    }
    atomic_flag_clear_explicit(&s->alloc_lock, memory_order_release);
    if (!op) op = malloc(sizeof *op);
    if (op) {
        op->type = type;
        op->engine = engine;
        /* copies, memsets, kernels and host functions run on an engine and are reported;
         * records and waits are control ops (no activity). The thread-local is read only
         * while a sink listens: with no profiler, one load of a global and a branch */
        op->corr = 0;
        if (type <= SOP_HOSTFN &&
            atomic_load_explicit(&sim_activity_sink.fn, memory_order_relaxed) &&
            (op->corr = hwi_backend_correlation))
            sim_activity_submitted();
    }
    return op;
}

/* Retire op to its stream's freelist. Caller holds s->mu (so that the stream outlives
 * the call: sim_stream_destroy takes s->mu before freeing). */
static void op_release_locked(sim_stream *s, sim_op *op)
{
    if (atomic_load_explicit(&s->nspare, memory_order_relaxed) >= SIM_SPARE_OPS) {
        free(op);
        return;
    }
    atomic_fetch_add_explicit(&s->nspare, 1, memory_order_relaxed);
    sim_op *h = atomic_load_explicit(&s->returned, memory_order_relaxed);
    do op->next = h;
    while (!atomic_compare_exchange_weak_explicit(&s->returned, &h, op, memory_order_release,
                                                  memory_order_relaxed));
}

static void free_list(sim_op *op)
{
    while (op) {
        sim_op *next = op->next;
        free(op);
        op = next;
    }
}

static void pop_head_locked(sim_stream *s, sim_op *op)
{
    s->head = op->next;
    if (!s->head) s->tail = NULL;
    atomic_store_explicit(&s->completed, op->seq, memory_order_release);
}

/* Hand the head to an engine, or retire control ops. When the head is for engine `self`
 * and self has nothing queued, it goes to *direct instead (self runs it next). Returns 1
 * if an event record was reached (blocked streams must be re-checked once the caller has
 * dropped s->mu). */
static int advance_locked(sim_stream *s, sim_engine *self, sim_op **direct)
{
    int reached = 0;
    while (s->head && !s->inflight) {
        sim_op *op = s->head;
        if (op->type == SOP_RECORD) {
            /* the event is reached before the record counts as completed: a synchronize
             * that sees it completed must find the event complete too */
            sim_event_reached(op->u.ev.ev, op->u.ev.gen);
            pop_head_locked(s, op);
            sim_event_unref(op->u.ev.ev);
            op_release_locked(s, op);
            reached = 1;
            continue;
        }
        if (op->type == SOP_WAIT) {
            if (!sim_event_done(op->u.ev.ev, op->u.ev.gen)) {
                if (!s->blocked) {
                    s->blocked = 1;
                    sim_mark_blocked(s);
                }
                /* look again now that we are on the blocked list: a record reached
                 * between the first look and the marking kicked nobody (both sides use
                 * sequentially consistent accesses, so one of them sees the other) */
                if (atomic_load(&op->u.ev.ev->done_gen) < op->u.ev.gen)
                    break;
            }
            s->blocked = 0;
            pop_head_locked(s, op);
            sim_event_unref(op->u.ev.ev);
            op_release_locked(s, op);
            continue;
        }
        s->inflight = 1;
        if (op->type == SOP_COPY && op->u.copy.job)
            sim_split_start(s, op);        /* its chunks: for waiters and the helper */
        sim_engine *e = &s->dev->engines[op->engine];
        if (e == self && !atomic_load_explicit(&e->pending, memory_order_acquire))
            *direct = op;
        else
            sim_engine_push(e, op);
    }
    if (!s->head && s->waiters)
        pthread_cond_broadcast(&s->cv);
    return reached;
}

/* Advance every listed stream. The streams are taken off the list in rounds of up to 64
 * (on the stack), or all at once into a heap copy when more are listed; without host
 * memory for that copy, rounds of 64 until every stream listed at the start was taken
 * (never "none": a stream left listed and unkicked would wait forever). */
void sim_kick_blocked(void)
{
    if (!atomic_load(&any_blocked))
        return;
    enum { ROUND = 64 };
    int unkicked = -1;                 /* listed streams the last round left; -1: all listed */
    for (;;) {
        sim_stream *local[ROUND];
        pthread_mutex_lock(&blocked_mu);
        int n = unkicked >= 0 && unkicked < nblocked ? unkicked : nblocked;
        sim_stream **list = n <= ROUND ? local : malloc((size_t)n * sizeof *list);
        int rest = 0;
        if (!list) {
            list = local;
            rest = n - ROUND;
            n = ROUND;
        }
        for (int i = 0; i < n; i++) {
            list[i] = blocked[i];
            list[i]->kick_pins++;       /* not freed under us (sim_unlist_blocked) */
            list[i]->listed = 0;
        }
        memmove(blocked, blocked + n, (size_t)(nblocked - n) * sizeof *blocked);
        nblocked -= n;
        if (!nblocked) atomic_store(&any_blocked, 0);
        pthread_mutex_unlock(&blocked_mu);
        int reached = 0;
        for (int i = 0; i < n; i++) {
            sim_stream *s = list[i];
            pthread_mutex_lock(&s->mu);
            s->blocked = 0;
            reached |= advance_locked(s, NULL, NULL);
            pthread_mutex_unlock(&s->mu);
        }
        pthread_mutex_lock(&blocked_mu);
        for (int i = 0; i < n; i++) list[i]->kick_pins--;
        pthread_cond_broadcast(&unpinned_cv);
        pthread_mutex_unlock(&blocked_mu);
        if (list != local) free(list);
        if (reached) unkicked = -1;    /* another event was reached: everyone again */
        else if (rest > 0) unkicked = rest;
        else break;
        if (!atomic_load(&any_blocked)) break;
    }
}

uint64_t sim_stream_enqueue(sim_stream *s, sim_op *op)
{
    op->stream = s;
    op->next = NULL;
    pthread_mutex_lock(&s->mu);
    uint64_t seq = atomic_load_explicit(&s->submitted, memory_order_relaxed) + 1;
    op->seq = seq;
    atomic_store_explicit(&s->submitted, seq, memory_order_release);
    if (s->tail) s->tail->next = op;
    else s->head = op;
    s->tail = op;
    int reached = (s->head == op) ? advance_locked(s, NULL, NULL) : 0;
    pthread_mutex_unlock(&s->mu);
    if (reached)
        sim_kick_blocked();
    sim_sched_tick(1);                 /* deterministic simulation: time may pass */
    return seq;
}

sim_op *sim_stream_complete(sim_engine *e, sim_op *op)
{
    sim_stream *s = op->stream;
    sim_op *direct = NULL;
    pthread_mutex_lock(&s->mu);
    s->inflight = 0;
    pop_head_locked(s, op);
    op_release_locked(s, op);
    int reached = advance_locked(s, e, &direct);
    if (s->waiters)
        pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);      /* s may be destroyed from here on unless direct */
    if (reached)
        sim_kick_blocked();
    return direct;
}

typedef struct { sim_stream *s; uint64_t seq; } seq_wait;

static int seq_done(void *arg)
{
    seq_wait *w = arg;
    return atomic_load_explicit(&w->s->completed, memory_order_acquire) >= w->seq;
}

void sim_stream_wait_seq(sim_stream *s, uint64_t seq)
{
    if (atomic_load_explicit(&s->completed, memory_order_acquire) >= seq)
        return;
    if (sim_sched_det()) {             /* the waiter runs ready ops, seeded */
        seq_wait w = {s, seq};
        sim_sched_run_until(seq_done, &w);
        return;
    }
    sim_split_help(s);
    uint64_t until = sim_now_ns() + s->dev->engines[SIM_ENG_COMPUTE].spin_ns;
    unsigned i = 0;
    while (atomic_load_explicit(&s->completed, memory_order_acquire) < seq) {
        hwi_cpu_relax();
        if ((++i & 3) == 0) {
            if (atomic_load_explicit(&s->cur_job, memory_order_relaxed)) {
                sim_split_help(s);             /* a large copy became the head: help */
                until = sim_now_ns() + s->dev->engines[SIM_ENG_COMPUTE].spin_ns;
            }
            if (sim_now_ns() >= until) break;
            sched_yield();
        }
    }
    if (atomic_load_explicit(&s->completed, memory_order_acquire) >= seq)
        return;
    pthread_mutex_lock(&s->mu);
    s->waiters++;
    while (atomic_load(&s->completed) < seq)
        pthread_cond_wait(&s->cv, &s->mu);
    s->waiters--;
    pthread_mutex_unlock(&s->mu);
}

hwrt_status sim_dev_fault_status(sim_dev *d)
{
    char msg[sizeof d->fault.msg];
    hwrt_status f = hwi_fault_read(&d->fault, msg, sizeof msg);
    if (f == HWRT_SUCCESS)
        return HWRT_SUCCESS;
    return hwi_err(f, "device %d has a sticky fault: %s; call hwrt_device_reset(%d) to recover "
                   "(work queued since the fault was skipped)", d->ordinal, msg, d->ordinal);
}

/* ---- backend slots ---- */

hwrt_status sim_stream_create(hwrt_bdev *dev, int priority, hwrt_bstream **out)
{
    sim_stream *s = calloc(1, sizeof *s);
    if (!s || !reserve_blocked()) {
        free(s);
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "creating a stream: host out of memory");
    }
    s->dev = dev;
    s->priority = priority;
    atomic_flag_clear(&s->alloc_lock);
    sim_mutex_init(&s->mu);
    pthread_cond_init(&s->cv, NULL);
    *out = s;
    return HWRT_SUCCESS;
}

void sim_stream_destroy(hwrt_bstream *s)
{
    sim_stream_wait_seq(s, atomic_load(&s->submitted));
    sim_unlist_blocked(s);
    /* the engine that retired the last op may still hold s->mu (it publishes `completed`
     * before unlocking): wait for it to let go before freeing */
    pthread_mutex_lock(&s->mu);
    pthread_mutex_unlock(&s->mu);
    free_list(s->spare);
    free_list(atomic_load(&s->returned));
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}

hwrt_status sim_stream_synchronize(hwrt_bstream *s)
{
    sim_stream_wait_seq(s, atomic_load_explicit(&s->submitted, memory_order_acquire));
    return sim_dev_fault_status(s->dev);
}

hwrt_status sim_stream_query(hwrt_bstream *s)
{
    sim_sched_tick(1);
    if (atomic_load(&s->completed) < atomic_load(&s->submitted))
        return HWRT_ERROR_NOT_READY;
    return sim_dev_fault_status(s->dev);
}
