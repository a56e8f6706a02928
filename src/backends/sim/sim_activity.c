/* Activity records (backend.h, activity_enable): the engine that runs an op stamped with
 * a correlation id reads the clock before and after it and reports both to the sink,
 * as a device writes its own timestamps into a profiling buffer (CUPTI activity records,
 * ACL profiling). Unstamped ops, all of them while no profiler runs, cost the engine one
 * predictable branch (sim_engine.c).
 *
 * activity_query counts stamped ops queued against those retired; the two counters sit
 * on their own cache lines, so launching threads and engines never share one. */
#include "sim.h"

#include <stdalign.h>

/* one cache line each: the sink is read by engines, `submitted` written by launching
 * threads, `retired` by engines (a shared line would bounce between them every op) */
static struct { alignas(64) _Atomic(hwrt_activity_fn) fn; _Atomic(void *) ctx; } sink;
static struct { alignas(64) _Atomic uint64_t n; } submitted, retired;

void sim_activity_submitted(void)
{
    atomic_fetch_add_explicit(&submitted.n, 1, memory_order_relaxed);
}

void sim_activity_run(sim_engine *e, sim_op *op)
{
    uint64_t corr = op->corr;          /* op may be freed or reused once executed */
    hwrt_activity_fn fn = atomic_load_explicit(&sink.fn, memory_order_acquire);
    if (!fn) {
        sim_op_execute(e, op);
    } else {
        void *ctx = atomic_load_explicit(&sink.ctx, memory_order_relaxed);
        uint64_t t0 = sim_now_ns();
        if (sim_op_execute(e, op))     /* skipped ops (sticky fault) never ran */
            fn(ctx, corr, t0, sim_now_ns());
    }
    /* after the report: a query that sees it retired sees its record too */
    atomic_fetch_add_explicit(&retired.n, 1, memory_order_release);
}

hwrt_status sim_activity_enable(hwrt_activity_fn fn, void *ctx)
{
    atomic_store_explicit(&sink.ctx, ctx, memory_order_relaxed);
    atomic_store_explicit(&sink.fn, fn, memory_order_release);
    return HWRT_SUCCESS;
}

hwrt_status sim_activity_query(void)
{
    uint64_t r = atomic_load_explicit(&retired.n, memory_order_acquire);
    return r >= atomic_load_explicit(&submitted.n, memory_order_acquire) ? HWRT_SUCCESS
                                                                        : HWRT_ERROR_NOT_READY;
}
