/* Scheduling modes of the simulated NPU for testing (sim_sched.c):
 *
 *   HWRT_SIM_DETERMINISTIC=<seed>  deterministic simulation. No engine thread runs work:
 *       ops that become ready on an engine go to one ready pool, and the seed decides which
 *       ready op runs next, when (at every enqueue and query a seeded number of ready ops
 *       run, on the calling thread, none in 1/4 to 15/16 of the calls depending on the
 *       seed; a waiting thread runs ready ops until what it waits for
 *       is done) and how long it takes (a virtual clock advanced by seeded op durations
 *       and by the link model: sim_now_ns() reads it). A single-threaded program therefore
 *       sees the same completion order, timestamps and results on every run with the same
 *       seed and input, so a finding replays exactly. Host functions run on the thread that
 *       waits, never inside an enqueue.
 *   HWRT_SIM_JITTER=<seed>  adversarial timing in the normal threaded mode: before an op
 *       runs on its engine it is held for a seeded random delay (most ops none, some up to
 *       a few ms), so completions come late as on a loaded device and missing waits and
 *       stale reads show up reliably.
 * A seed is a decimal or 0x-hex number; a malformed one gets a warning naming the variable
 * and the mode stays off. Both are read when the first sim device opens (at first use and
 * after hwrt_shutdown). */
#ifndef SIM_SCHED_H
#define SIM_SCHED_H

#include "sim.h"

/* Read both variables (first device open). */
void sim_sched_load(void);
/* Nonzero in deterministic mode. */
int sim_sched_det(void);
/* Deterministic mode: take op (ready on engine e) into the ready pool; 1 when taken. */
int sim_sched_push(sim_engine *e, sim_op *op);
/* Deterministic mode: run ready ops until done(arg) is true. */
void sim_sched_run_until(int (*done)(void *), void *arg);
/* Deterministic mode: time passes at an enqueue or a query: a seeded number of ready ops
 * run (host functions excepted when from_enqueue). No-op otherwise. */
void sim_sched_tick(int from_enqueue);
/* Deterministic mode: the virtual clock, and waiting on it (advances it); 0 otherwise. */
int sim_sched_now(uint64_t *ns);
int sim_sched_wait_until(uint64_t deadline_ns);
/* Jitter mode: hold the calling engine for the next seeded delay. No-op otherwise. */
void sim_sched_jitter(void);

#endif
