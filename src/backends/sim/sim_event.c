/* Events: a record is a control op in a stream; when the stream reaches it the event
 * gets the device timestamp and its generation is marked done. A wait is a control op
 * that holds its stream until the awaited generation is done. */
#include "sim.h"
#include "sim_sched.h"
#include "../../base/status.h"

#include <sched.h>
#include <stdlib.h>

hwrt_status sim_event_create(hwrt_bdev *dev, unsigned flags, hwrt_bevent **out)
{
    sim_event *e = calloc(1, sizeof *e);
    if (!e)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "creating an event: host out of memory");
    e->dev = dev;
    e->flags = flags;
    atomic_init(&e->refs, 1);
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cv, NULL);
    *out = e;
    return HWRT_SUCCESS;
}

void sim_event_unref(sim_event *e)
{
    if (atomic_fetch_sub(&e->refs, 1) == 1) {
        pthread_mutex_destroy(&e->mu);
        pthread_cond_destroy(&e->cv);
        free(e);
    }
}

void sim_event_destroy(hwrt_bevent *e) { sim_event_unref(e); }

void sim_event_reached(sim_event *e, uint64_t gen)
{
    /* a later record may already have been reached on another stream: keep the newest
     * (compare-and-swap: two records reached at once must not move done_gen back, which
     * would leave a waiter for the newer one waiting for good) */
    uint64_t cur = atomic_load(&e->done_gen);
    if (gen < cur)
        return;
    atomic_store(&e->ts_ns, sim_now_ns());   /* CLOCK_MONOTONIC: comparable with host time */
    do {
        if (gen < cur)
            return;
    } while (!atomic_compare_exchange_weak(&e->done_gen, &cur, gen)); /* seq_cst: pairs with
                                                                     * the blocked-list re-check */
    pthread_mutex_lock(&e->mu);
    if (e->waiters)
        pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

int sim_event_done(sim_event *e, uint64_t gen)
{
    return atomic_load_explicit(&e->done_gen, memory_order_acquire) >= gen;
}

hwrt_status sim_event_record(hwrt_bevent *e, hwrt_bstream *s)
{
    sim_op *op = sim_op_new(s, SOP_RECORD, -1);
    if (!op)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "recording an event: host out of memory");
    atomic_fetch_add(&e->refs, 1);
    op->u.ev.ev = e;
    op->u.ev.gen = atomic_fetch_add(&e->gen, 1) + 1;
    sim_stream_enqueue(s, op);
    return HWRT_SUCCESS;
}

hwrt_status sim_stream_wait_event(hwrt_bstream *s, hwrt_bevent *e)
{
    uint64_t gen = atomic_load(&e->gen);
    if (sim_event_done(e, gen))
        return HWRT_SUCCESS;              /* nothing pending: no need to queue a wait */
    sim_op *op = sim_op_new(s, SOP_WAIT, -1);
    if (!op)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "waiting on an event: host out of memory");
    atomic_fetch_add(&e->refs, 1);
    op->u.ev.ev = e;
    op->u.ev.gen = gen;
    sim_stream_enqueue(s, op);
    return HWRT_SUCCESS;
}

hwrt_status sim_event_query(hwrt_bevent *e)
{
    sim_sched_tick(1);
    return sim_event_done(e, atomic_load(&e->gen)) ? sim_dev_fault_status(e->dev)
                                                   : HWRT_ERROR_NOT_READY;
}

typedef struct { sim_event *e; uint64_t gen; } gen_wait;

static int gen_done(void *arg)
{
    gen_wait *w = arg;
    return sim_event_done(w->e, w->gen);
}

hwrt_status sim_event_synchronize(hwrt_bevent *e)
{
    uint64_t gen = atomic_load(&e->gen);
    if (sim_sched_det()) {
        gen_wait w = {e, gen};
        sim_sched_run_until(gen_done, &w);
        return sim_dev_fault_status(e->dev);
    }
    for (int i = 0; i < 2000 && !sim_event_done(e, gen); i++)
        sched_yield();
    if (!sim_event_done(e, gen)) {
        pthread_mutex_lock(&e->mu);
        e->waiters++;
        while (!sim_event_done(e, gen))
            pthread_cond_wait(&e->cv, &e->mu);
        e->waiters--;
        pthread_mutex_unlock(&e->mu);
    }
    return sim_dev_fault_status(e->dev);
}

hwrt_status sim_event_timestamp_ns(hwrt_bevent *e, uint64_t *ns)
{
    uint64_t gen = atomic_load(&e->gen);
    if (gen == 0)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "the event was never recorded");
    if (!sim_event_done(e, gen))
        return hwi_err(HWRT_ERROR_NOT_READY, "the event's last record has not been reached yet");
    *ns = atomic_load(&e->ts_ns);
    return HWRT_SUCCESS;
}
