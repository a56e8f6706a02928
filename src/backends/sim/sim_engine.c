/* Engine threads. An engine runs the ops handed to it in order. After its queue runs
 * dry it spins for a short window (a sleeping-thread handoff costs ~66 us on a VM, a
 * spinning one ~0.2 us) and then sleeps on a condition variable, so an idle engine
 * burns no CPU after the window. */
#define _GNU_SOURCE 1   /* PTHREAD_MUTEX_ADAPTIVE_NP */
#include "sim.h"
#include "sim_registry.h"
#include "sim_sched.h"
#include "../../base/spin.h"

#include <sched.h>
#include <stdlib.h>

static uint64_t spin_window(void)
{
    const sim_config *c;
    char r[8];
    sim_config_get(&c, r, sizeof r);
    return c->spin_ns;
}

static sim_op *pop_locked(sim_engine *e)
{
    sim_op *op = e->head;
    if (op) {
        e->head = op->enext;
        if (!e->head) e->tail = NULL;
        atomic_fetch_sub_explicit(&e->pending, 1, memory_order_relaxed);
    }
    return op;
}

/* Add the time since t0 to the engine's busy time; returns now. */
static uint64_t account(sim_engine *e, uint64_t t0)
{
    uint64_t t1 = sim_now_ns();
    atomic_fetch_add_explicit(&e->busy_ns, t1 - t0, memory_order_relaxed);
    if (e->kind == SIM_ENG_COMPUTE && t1 - e->published_ns > 10000000) {
        /* keep the cross-process view's busy time fresh (at most every 10 ms) */
        e->published_ns = t1;
        pthread_mutex_lock(&e->dev->mem_mu);
        sim_registry_publish(e->dev);
        pthread_mutex_unlock(&e->dev->mem_mu);
    }
    return t1;
}

static void *engine_main(void *arg)
{
    sim_engine *e = arg;
    uint64_t spin_ns = e->spin_ns;
    for (;;) {
        /* spin phase: look for work without the lock */
        uint64_t until = sim_now_ns() + spin_ns;
        unsigned i = 0;
        while (!atomic_load_explicit(&e->pending, memory_order_acquire)) {
            hwi_cpu_relax();
            if ((++i & 3) == 0) {
                if (sim_now_ns() >= until) break;
                sched_yield();
            }
        }
        pthread_mutex_lock(&e->mu);
        while (!e->head && !e->stop) {
            e->sleeping = 1;
            pthread_cond_wait(&e->cv, &e->mu);
            e->sleeping = 0;
        }
        if (!e->head && e->stop) {
            pthread_mutex_unlock(&e->mu);
            return NULL;
        }
        sim_op *op = pop_locked(e);
        pthread_mutex_unlock(&e->mu);
        /* a burst: this op and the stream's following ones handed over directly. The
         * clock is read per burst, not per op (a clock read costs ~100 ns on a VM) */
        uint64_t t0 = sim_now_ns();
        uint64_t act_t = t0;                   /* activity start of the op in hand */
        unsigned nops = 0;
        while (op) {
            sim_sched_jitter();                /* HWRT_SIM_JITTER: held before it runs */
            int part = op->type == SOP_PART;   /* a split-copy share: not a stream op, and */
            /* first touch of fresh device pages before the op's start: not its time */
            if (sim_op_prefault(e->dev, op)) act_t = 0;
            if (op->corr) {                    /* freed by sim_op_execute */
                act_t = sim_activity_run(e, op, act_t);   /* profiled: timed, reported */
            } else {
                sim_op_execute(e, op);
                act_t = 0;
            }
            if (part)
                break;
            op = sim_stream_complete(e, op);    /* the stream's next op, if it is ours */
            if (op && (++nops & 255) == 0)
                t0 = account(e, t0);
        }
        if (e->act_retired)                    /* profiled ops: report before idling */
            sim_activity_flush(e);
        account(e, t0);
    }
}

void sim_mutex_init(pthread_mutex_t *mu)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
#ifdef __USE_GNU
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
    pthread_mutex_init(mu, &a);
    pthread_mutexattr_destroy(&a);
}

void sim_engine_start(sim_engine *e, sim_dev *dev, int kind)
{
    sim_mutex_init(&e->mu);
    pthread_cond_init(&e->cv, NULL);
    e->dev = dev;
    e->kind = kind;
    e->spin_ns = spin_window();     /* on the opening thread, before the engine runs */
    e->head = e->tail = NULL;
    e->stop = 0;
    e->nact = e->act_retired = 0;
    e->act_slot = sim_activity_slot();
    e->threadless = sim_sched_det();   /* the seeded pool runs all work: no thread */
    if (e->threadless) {
        e->started = 1;
        return;
    }
    e->started = pthread_create(&e->thread, NULL, engine_main, e) == 0;
}

void sim_engine_stop(sim_engine *e)
{
    if (!e->started)
        return;
    pthread_mutex_lock(&e->mu);
    e->stop = 1;
    pthread_cond_signal(&e->cv);
    pthread_mutex_unlock(&e->mu);
    if (!e->threadless)
        pthread_join(e->thread, NULL);
    pthread_mutex_destroy(&e->mu);
    pthread_cond_destroy(&e->cv);
    e->started = 0;
}

void sim_engine_push(sim_engine *e, sim_op *op)
{
    if (sim_sched_push(e, op))      /* HWRT_SIM_DETERMINISTIC: the seeded pool runs it */
        return;
    op->enext = NULL;
    pthread_mutex_lock(&e->mu);
    if (e->tail) e->tail->enext = op;
    else e->head = op;
    e->tail = op;
    atomic_fetch_add_explicit(&e->pending, 1, memory_order_release);
    if (e->sleeping)
        pthread_cond_signal(&e->cv);
    pthread_mutex_unlock(&e->mu);
}
