/* Activity records (backend.h, activity_enable): the engine that runs an op stamped with
 * a correlation id notes its device start and end in the engine's own small buffer, as a
 * device writes its timestamps into a profiling buffer (CUPTI activity records, ACL
 * profiling), and hands the buffer to the sink when it is full or the engine's burst of
 * work ends (before it idles), so the sink is called once per batch, not per op.
 * Unstamped ops, all of them while no profiler runs, cost the engine one predictable
 * branch per op and one per burst (sim_engine.c).
 *
 * One clock read per op: the engine reads the clock when an op ends (before the stream
 * learns it completed, so no sync returns before that time); an op's start is the burst
 * start for the first op an engine takes from its queue, and the previous op's end for
 * one handed over directly (sim_stream_complete), so back-to-back spans include the
 * engine's hand-over (a few hundred ns). A clock read costs ~40 ns on this project's VMs,
 * a launch-bound op ~2 us.
 *
 * activity_query compares stamped ops queued with those retired (counted when their
 * batch is handed over). */
#include "sim.h"
#include "sim_sched.h"

#include <stdalign.h>

/* Retired ops are counted per engine thread (a slot each, taken when the engine starts;
 * the last one is shared when they run out), queued ones in one counter of the launching
 * threads; each on its own cache line. No thread-locals: libhwrt's are static TLS,
 * scarce when Python dlopens it. */
#define SLOTS 256
typedef struct slot { alignas(64) _Atomic uint64_t n; } slot;
static slot retired[SLOTS + 1];
static _Atomic int nslots;
static slot submitted;

sim_act_sink sim_activity_sink;     /* read by engines (and sim_op_new: is anyone listening) */

int sim_activity_slot(void)
{
    int i = atomic_fetch_add(&nslots, 1);
    return i < SLOTS ? i : SLOTS;
}

void sim_activity_submitted(void)
{
    atomic_fetch_add_explicit(&submitted.n, 1, memory_order_relaxed);
}

void sim_activity_flush(sim_engine *e)
{
    hwrt_activity_fn fn = atomic_load_explicit(&sim_activity_sink.fn, memory_order_acquire);
    if (fn && e->nact)
        fn(atomic_load_explicit(&sim_activity_sink.ctx, memory_order_relaxed), e->act, e->nact);
    e->nact = 0;
    /* after the report: a query that sees them retired sees their records too; an engine
     * with a slot of its own is its only writer (no locked add) */
    _Atomic uint64_t *c = &retired[e->act_slot].n;
    if (e->act_slot == SLOTS)
        atomic_fetch_add_explicit(c, e->act_retired, memory_order_release);
    else
        atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + e->act_retired,
                              memory_order_release);
    e->act_retired = 0;
}

uint64_t sim_activity_run(sim_engine *e, sim_op *op, uint64_t start_ns)
{
    uint64_t corr = op->corr, end = 0;  /* a stream op: the stream keeps it until complete */
    if (!atomic_load_explicit(&sim_activity_sink.fn, memory_order_relaxed)) {
        sim_op_execute(e, op);
    } else {
        if (!start_ns) start_ns = sim_now_ns();
        int ran = sim_op_execute(e, op);   /* skipped ops (sticky fault) never ran */
        end = sim_now_ns();
        /* a split copy began with its first chunk, which the split helper or a waiting
         * thread may have taken before this engine got to the op (sim_work.c) */
        if (op->type == SOP_COPY && op->u.copy.first_ns && op->u.copy.first_ns < start_ns)
            start_ns = op->u.copy.first_ns;
        if (ran) e->act[e->nact++] = (hwrt_activity){corr, start_ns, end};
    }
    e->act_retired++;
    if (e->nact == sizeof e->act / sizeof e->act[0]) sim_activity_flush(e);
    return end;
}

hwrt_status sim_activity_enable(hwrt_activity_fn fn, void *ctx)
{
    atomic_store_explicit(&sim_activity_sink.ctx, ctx, memory_order_relaxed);
    atomic_store_explicit(&sim_activity_sink.fn, fn, memory_order_release);
    return HWRT_SUCCESS;
}

hwrt_status sim_activity_query(void)
{
    sim_sched_tick(1);
    /* counters only grow and an op is counted queued before it can retire; reading every
     * `retired` before `submitted` (a slot that appears in between adds nothing yet),
     * retired >= submitted means every op queued before the reads retired */
    int n = atomic_load(&nslots);
    n = n < SLOTS ? n : SLOTS + 1;
    uint64_t ret = 0;
    for (int i = 0; i < n; i++) ret += atomic_load_explicit(&retired[i].n, memory_order_acquire);
    uint64_t sub = atomic_load_explicit(&submitted.n, memory_order_acquire);
    return ret >= sub ? HWRT_SUCCESS : HWRT_ERROR_NOT_READY;
}
