/* Deterministic simulation and adversarial timing of the simulated NPU (sim_sched.h).
 *
 * Deterministic mode replaces the engine threads as executors: sim_engine_push hands a
 * ready op (the head of its stream, or a split-copy share) to the pool here; whoever
 * calls tick or run_until picks ready ops with the seeded generator and runs them the
 * way an engine thread does (execute, then complete it on its stream, which may make the
 * stream's next op ready). Op execution is serialized by one recursive mutex, so the
 * engines' per-thread state (activity buffers) is never touched by two threads and a
 * host function may itself wait (running other ops). The pool and generator have their
 * own leaf lock, taken inside stream locks by sim_sched_push. */
#define _GNU_SOURCE 1   /* PTHREAD_MUTEX_RECURSIVE_NP initializer */
#include "sim_sched.h"
#include "../../base/log.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct { sim_engine *e; sim_op *op; } ready;

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t exec_mu = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static _Atomic int det_on, jitter_on;
static uint64_t det_rng, jitter_seed;
static _Atomic uint64_t jitter_n;
static ready *pool;
static size_t npool, cap_pool;
static _Atomic uint64_t vclock;       /* virtual ns */
static uint64_t det_seed;
static unsigned det_lazy;             /* of 16 ticks, how many run nothing: 4, 8, 12 or 15 */

static uint64_t mix(uint64_t z)       /* splitmix64 finalizer */
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t det_next(void)        /* caller holds pool_mu */
{
    return mix(det_rng += 0x9e3779b97f4a7c15ull);
}

static int parse_seed(const char *name, uint64_t *out)
{
    const char *v = getenv(name);
    if (!v || !*v) return 0;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 0);
    if (errno || end == v || *end || v[0] == '-') {
        hwi_log(HWI_LOG_WARN, "%s=\"%s\" is not a seed; expected a decimal or 0x-hex number "
                "(e.g. %s=42); the mode stays off", name, v, name);
        return 0;
    }
    *out = (uint64_t)x;
    return 1;
}

void sim_sched_load(void)
{
    uint64_t s;
    pthread_mutex_lock(&pool_mu);
    int det = parse_seed("HWRT_SIM_DETERMINISTIC", &s);
    if (det) {
        det_seed = s;
        det_rng = mix(s ^ 0x6a09e667f3bcc908ull);
        /* the seed also picks how lazy the device is: lazier ones leave more work queued
         * at every call, which is what missing waits trip over */
        det_lazy = (unsigned[]){4, 8, 12, 15}[mix(s) % 4];
        npool = 0;
        /* a fixed epoch, so that timestamps repeat too */
        atomic_store(&vclock, 1000000000ull);
    }
    atomic_store(&det_on, det);
    int jit = parse_seed("HWRT_SIM_JITTER", &s);
    if (jit) {
        jitter_seed = s;
        atomic_store(&jitter_n, 0);
    }
    atomic_store(&jitter_on, jit);
    pthread_mutex_unlock(&pool_mu);
    if (det) hwi_log(HWI_LOG_INFO, "sim: deterministic simulation, seed %llu",
                     (unsigned long long)det_seed);
    if (jit) hwi_log(HWI_LOG_INFO, "sim: timing jitter, seed %llu", (unsigned long long)s);
}

int sim_sched_det(void) { return atomic_load_explicit(&det_on, memory_order_relaxed); }

int sim_sched_push(sim_engine *e, sim_op *op)
{
    if (!sim_sched_det()) return 0;
    pthread_mutex_lock(&pool_mu);
    if (npool == cap_pool) {
        size_t nc = cap_pool ? cap_pool * 2 : 64;
        ready *np = realloc(pool, nc * sizeof *np);
        if (!np) {            /* keep going on the engine thread: correct, not repeatable */
            pthread_mutex_unlock(&pool_mu);
            return 0;
        }
        pool = np;
        cap_pool = nc;
    }
    pool[npool++] = (ready){e, op};
    pthread_mutex_unlock(&pool_mu);
    return 1;
}

/* Take a seeded choice of the ready ops (host functions skipped when no_host); 0: none. */
static int take(ready *out, int no_host)
{
    pthread_mutex_lock(&pool_mu);
    size_t n = 0;
    for (size_t i = 0; i < npool; i++) n += !(no_host && pool[i].op->type == SOP_HOSTFN);
    if (!n) { pthread_mutex_unlock(&pool_mu); return 0; }
    size_t k = (size_t)(det_next() % n), i = 0;
    for (;; i++)
        if (!(no_host && pool[i].op->type == SOP_HOSTFN) && k-- == 0) break;
    *out = pool[i];
    /* keep the pool's order a function of its history: shift, not swap */
    memmove(pool + i, pool + i + 1, (npool - i - 1) * sizeof *pool);
    npool--;
    /* time the op takes: a seeded base, plus the link model for copies (sim_work.c) */
    uint64_t d = 200 + det_next() % 20000;
    if (out->op->type == SOP_COPY) d += out->op->u.copy.bytes / 8;   /* ~8 GB/s */
    atomic_fetch_add(&vclock, d);
    atomic_fetch_add_explicit(&out->e->busy_ns, d, memory_order_relaxed);
    pthread_mutex_unlock(&pool_mu);
    return 1;
}

/* Run one ready op as its engine thread would (sim_engine.c, engine_main). */
static void run(ready r)
{
    sim_op *op = r.op;
    int part = op->type == SOP_PART;
    if (op->corr) sim_activity_run(r.e, op, 0);
    else sim_op_execute(r.e, op);
    if (!part) {
        sim_op *next = sim_stream_complete(r.e, op);
        if (next) sim_sched_push(r.e, next);
    }
    if (r.e->act_retired) sim_activity_flush(r.e);
}

static int step(int no_host)
{
    pthread_mutex_lock(&exec_mu);
    ready r;
    int got = take(&r, no_host);
    if (got) run(r);
    pthread_mutex_unlock(&exec_mu);
    return got;
}

void sim_sched_run_until(int (*done)(void *), void *arg)
{
    unsigned idle = 0;
    while (!done(arg)) {
        if (step(0)) { idle = 0; continue; }
        /* nothing ready: another thread runs the op we wait for (or a stream waits on an
         * event no one will record: a hang the caller asked for) */
        if (++idle == 100000)
            hwi_log(HWI_LOG_WARN, "sim: deterministic simulation: a wait has nothing to run "
                    "(seed %llu)", (unsigned long long)det_seed);
        sched_yield();
    }
}

void sim_sched_tick(int from_enqueue)
{
    if (!sim_sched_det()) return;
    pthread_mutex_lock(&pool_mu);
    uint64_t x = det_next();
    pthread_mutex_unlock(&pool_mu);
    /* det_lazy/16 of the time nothing completes; else 1..4 ops */
    int n = (x % 16) < det_lazy ? 0 : 1 + (int)((x >> 4) % 4);
    for (int i = 0; i < n && step(from_enqueue); i++) {}
}

int sim_sched_now(uint64_t *ns)
{
    if (!sim_sched_det()) return 0;
    *ns = atomic_load(&vclock);
    return 1;
}

int sim_sched_wait_until(uint64_t deadline)
{
    if (!sim_sched_det()) return 0;
    uint64_t now = atomic_load(&vclock);
    while (now < deadline && !atomic_compare_exchange_weak(&vclock, &now, deadline)) {}
    return 1;
}

void sim_sched_jitter(void)
{
    if (!atomic_load_explicit(&jitter_on, memory_order_relaxed)) return;
    uint64_t x = mix(jitter_seed ^ mix(atomic_fetch_add(&jitter_n, 1) + 1));
    unsigned r = (unsigned)(x % 1000);
    uint64_t ns;
    /* 85% no delay; 11% up to 100 us; 3.5% up to 1 ms; 0.5% up to 5 ms */
    if (r < 850) return;
    else if (r < 960) ns = (x >> 10) % 100000;
    else if (r < 995) ns = 100000 + (x >> 10) % 900000;
    else ns = 1000000 + (x >> 10) % 4000000;
    struct timespec ts = {0, (long)ns};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}
