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
 * batch is handed over). Each thread counts in its own slot (one cache line: launching
 * threads and engines never share one). */
#include "sim.h"

#include <stdalign.h>

#define SLOTS 256
typedef struct slot { alignas(64) _Atomic uint64_t sub, ret; } slot;
static slot slots[SLOTS + 1];          /* the last one is shared (fetch_add) when full */
static _Atomic int nslots;
static _Thread_local slot *tls_slot;

static struct { alignas(64) _Atomic(hwrt_activity_fn) fn; _Atomic(void *) ctx; } sink;

static slot *my_slot(int *shared)
{
    if (!tls_slot) {
        int i = atomic_fetch_add(&nslots, 1);
        tls_slot = &slots[i < SLOTS ? i : SLOTS];
    }
    *shared = tls_slot == &slots[SLOTS];
    return tls_slot;
}

/* Single writer per slot: a plain add, published with release. */
static void bump(_Atomic uint64_t *c, uint64_t n, int shared)
{
    if (shared)
        atomic_fetch_add_explicit(c, n, memory_order_release);
    else
        atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                              memory_order_release);
}

void sim_activity_submitted(void)
{
    int shared;
    slot *s = my_slot(&shared);
    bump(&s->sub, 1, shared);
}

void sim_activity_flush(sim_engine *e)
{
    hwrt_activity_fn fn = atomic_load_explicit(&sink.fn, memory_order_acquire);
    if (fn && e->nact)
        fn(atomic_load_explicit(&sink.ctx, memory_order_relaxed), e->act, e->nact);
    e->nact = 0;
    int shared;
    slot *s = my_slot(&shared);
    /* after the report: a query that sees them retired sees their records too */
    bump(&s->ret, e->act_retired, shared);
    e->act_retired = 0;
}

uint64_t sim_activity_run(sim_engine *e, sim_op *op, uint64_t start_ns)
{
    uint64_t corr = op->corr, end = 0;  /* op may be freed or reused once executed */
    if (!atomic_load_explicit(&sink.fn, memory_order_relaxed)) {
        sim_op_execute(e, op);
    } else {
        if (!start_ns) start_ns = sim_now_ns();
        int ran = sim_op_execute(e, op);   /* skipped ops (sticky fault) never ran */
        end = sim_now_ns();
        if (ran) e->act[e->nact++] = (hwrt_activity){corr, start_ns, end};
    }
    e->act_retired++;
    if (e->nact == sizeof e->act / sizeof e->act[0]) sim_activity_flush(e);
    return end;
}

hwrt_status sim_activity_enable(hwrt_activity_fn fn, void *ctx)
{
    atomic_store_explicit(&sink.ctx, ctx, memory_order_relaxed);
    atomic_store_explicit(&sink.fn, fn, memory_order_release);
    return HWRT_SUCCESS;
}

static int slots_used(void)
{
    int n = atomic_load(&nslots);
    return n < SLOTS ? n : SLOTS + 1;
}

hwrt_status sim_activity_query(void)
{
    /* counters only grow, an op retires after it was counted queued, and every `ret` is
     * read before every `sub` (a slot that appears in between adds to `sub` only): so
     * ret >= sub means every op queued before the reads retired */
    uint64_t ret = 0, sub = 0;
    for (int i = 0, n = slots_used(); i < n; i++)
        ret += atomic_load_explicit(&slots[i].ret, memory_order_acquire);
    for (int i = 0, n = slots_used(); i < n; i++)
        sub += atomic_load_explicit(&slots[i].sub, memory_order_acquire);
    return ret >= sub ? HWRT_SUCCESS : HWRT_ERROR_NOT_READY;
}
