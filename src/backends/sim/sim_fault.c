/* Fault injection for the simulated NPU, armed by HWRT_SIM_FAULTS, so that the error
 * paths of hwrt and of its users can be tested the way real hardware fails.
 *
 * HWRT_SIM_FAULTS is a comma-separated list of clauses "kind:opt=value[:opt=value...]":
 *   alloc   a device memory allocation (segment allocation, or mapping memory into a
 *           reserved range) fails with HWRT_ERROR_OUT_OF_MEMORY at the call that asked
 *           for it (hwrt_malloc, hwrt_malloc_async, hwrt_tensor_empty, ...). Not sticky:
 *           nothing was allocated and the next allocation may succeed.
 *   copy    a queued copy (H2D, D2H, D2D) fails on its copy engine: the destination is
 *           not written and the device takes a sticky HWRT_ERROR_DEVICE_FAULT, as a DMA
 *           error does on a card.
 *   kernel  a queued kernel raises a sticky HWRT_ERROR_DEVICE_FAULT; its output is not
 *           written.
 *   stall   a host-link copy (H2D or D2H) is held on its engine for ms=M milliseconds
 *           (1..10000) before it moves its bytes: a link stall. No error.
 * Sticky faults make the device skip every later piece of work (event records still
 * complete); they surface at the next synchronizing call (hwrt_stream_synchronize,
 * hwrt_stream_query, hwrt_event_synchronize, hwrt_device_synchronize, hwrt_memcpy,
 * pageable hwrt_memcpy_async, hwrt_tensor_copy_*_host) as HWRT_ERROR_DEVICE_FAULT, and
 * are cleared by hwrt_device_reset(). Device memory survives the fault and the reset.
 * Of two faults at once (two engines) the first one is the device's, with its reason.
 *
 * Triggers (one per clause; counting the eligible calls since the clause was armed):
 *   nth=N     the Nth call only          every=N   every Nth call
 *   from=N    the Nth call and all later  p=P       each call with probability P (0..1)
 * A stall clause without a trigger stalls every host-link copy.
 * Filters and limits: dev=D counts and hits device D only; times=K stops after K hits;
 * op=NAME (kernel clauses) counts and hits only kernels of that op, named as the op table
 * names them (src/base/op_table.h: Fill, Add, Mul, Scale, Relu, Cast, MatMul, ReduceSum,
 * or the function names fill, ..., matmul, sum; case-insensitive).
 * A clause "seed=S" seeds the generator behind p= (default 1: runs are reproducible).
 * Example: "alloc:nth=3,copy:p=0.01:dev=1,kernel:nth=5:op=MatMul,stall:ms=50:every=4,seed=7".
 *
 * The variable is validated with the other HWRT_SIM_* variables whenever no sim device is
 * open, and armed (counters restarted) when the first device opens: at first use and
 * after hwrt_shutdown, which is how tests re-arm faults at run time. A malformed value
 * makes the sim backend unavailable with a reason naming the clause, like every other
 * HWRT_SIM_* variable. */
#include "sim.h"
#include "../../base/log.h"
#include "../../base/op_table.h"
#include "../../base/status.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_CLAUSES 16

enum { F_ALLOC, F_COPY, F_KERNEL, F_STALL, F_KINDS };
static const char *const kind_names[F_KINDS] = {"alloc", "copy", "kernel", "stall"};
enum { T_NONE, T_NTH, T_EVERY, T_FROM, T_PROB };

typedef struct clause {
    int kind, trigger;
    uint64_t n;               /* nth / every / from */
    double p;
    int dev;                  /* -1: every device */
    int op;                   /* kernel clauses: the hwrt_kernel_op counted, -1: every op */
    uint64_t times;           /* 0: unlimited */
    unsigned ms;              /* stall */
    uint64_t calls, hits;     /* eligible calls seen, faults injected */
    char text[64];            /* the clause as written, for sentences */
} clause;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static clause plan[MAX_CLAUSES];
static _Atomic int nplan;     /* 0: disarmed, the hot path is one load */
static uint64_t rng_state = 1;
static _Atomic uint64_t injected[F_KINDS];

static uint64_t rng_next(void)      /* splitmix64; caller holds mu */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int parse_u64(const char *v, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (end == v || *end || errno || *v == '-' || x < lo || x > hi)
        return 0;
    *out = x;
    return 1;
}

/* One option "key=value" of clause c; returns 0 and a reason on error. */
static int parse_opt(clause *c, char *opt, char *reason, size_t rlen)
{
    char *eq = strchr(opt, '=');
    if (!eq) {
        snprintf(reason, rlen, "HWRT_SIM_FAULTS clause \"%s\": option \"%s\" has no '='; write "
                 "key=value (nth, every, from, p, dev, times, ms)", c->text, opt);
        return 0;
    }
    *eq = 0;
    const char *k = opt, *v = eq + 1;
    uint64_t u;
    int ok = 1, trig = T_NONE;
    if (!strcmp(k, "nth") || !strcmp(k, "every") || !strcmp(k, "from")) {
        ok = parse_u64(v, 1, UINT64_MAX / 2, &u);
        trig = k[0] == 'n' ? T_NTH : k[0] == 'e' ? T_EVERY : T_FROM;
        c->n = u;
    } else if (!strcmp(k, "p")) {
        char *end;
        double p = strtod(v, &end);
        ok = end != v && !*end && p >= 0 && p <= 1;
        trig = T_PROB;
        c->p = p;
    } else if (!strcmp(k, "dev")) {
        ok = parse_u64(v, 0, SIM_MAX_DEVICES - 1, &u);
        c->dev = (int)u;
    } else if (!strcmp(k, "times")) {
        ok = parse_u64(v, 1, UINT64_MAX / 2, &u);
        c->times = u;
    } else if (!strcmp(k, "op") && c->kind == F_KERNEL) {
        c->op = hwi_op_from_name(v);
        if (c->op < 0) {
            char names[160];
            hwi_op_names_str(names, sizeof names);
            snprintf(reason, rlen, "HWRT_SIM_FAULTS clause \"%s\": \"%s\" is not a kernel op; "
                     "use %s", c->text, v, names);
            return 0;
        }
    } else if (!strcmp(k, "ms") && c->kind == F_STALL) {
        ok = parse_u64(v, 1, 10000, &u);
        c->ms = (unsigned)u;
    } else {
        snprintf(reason, rlen, "HWRT_SIM_FAULTS clause \"%s\": unknown option \"%s\"; use nth, "
                 "every, from, p, dev, times%s", c->text, k,
                 c->kind == F_STALL ? ", ms" : c->kind == F_KERNEL ? ", op" : "");
        return 0;
    }
    if (!ok) {
        snprintf(reason, rlen, "HWRT_SIM_FAULTS clause \"%s\": \"%s\" is not a valid value for "
                 "%s (%s)", c->text, v, k,
                 trig == T_PROB ? "a probability 0..1" : !strcmp(k, "dev") ? "a device 0..63"
                 : !strcmp(k, "ms") ? "milliseconds 1..10000" : "a whole number >= 1");
        return 0;
    }
    if (trig != T_NONE) {
        if (c->trigger != T_NONE) {
            snprintf(reason, rlen, "HWRT_SIM_FAULTS clause \"%s\": more than one trigger; give "
                     "one of nth, every, from, p", c->text);
            return 0;
        }
        c->trigger = trig;
    }
    return 1;
}

static int parse_clause(char *text, clause *c, char *reason, size_t rlen)
{
    memset(c, 0, sizeof *c);
    c->dev = -1;
    c->op = -1;
    snprintf(c->text, sizeof c->text, "%s", text);
    char *save = NULL, *kind = strtok_r(text, ":", &save);
    c->kind = -1;
    for (int i = 0; kind && i < F_KINDS; i++)
        if (!strcmp(kind, kind_names[i])) c->kind = i;
    if (c->kind < 0) {
        snprintf(reason, rlen, "HWRT_SIM_FAULTS clause \"%s\": unknown fault kind; use alloc, "
                 "copy, kernel or stall (e.g. \"kernel:nth=5\")", c->text);
        return 0;
    }
    for (char *o = strtok_r(NULL, ":", &save); o; o = strtok_r(NULL, ":", &save))
        if (!parse_opt(c, o, reason, rlen)) return 0;
    if (c->kind == F_STALL && !c->ms) {
        snprintf(reason, rlen, "HWRT_SIM_FAULTS clause \"%s\": a stall needs ms=M "
                 "(milliseconds 1..10000)", c->text);
        return 0;
    }
    if (c->kind != F_STALL && c->trigger == T_NONE) {
        snprintf(reason, rlen, "HWRT_SIM_FAULTS clause \"%s\": no trigger; add nth=N, every=N, "
                 "from=N or p=P", c->text);
        return 0;
    }
    if (c->trigger == T_NONE) { c->trigger = T_EVERY; c->n = 1; }
    return 1;
}

int sim_fault_load(char *reason, size_t rlen, int arm)
{
    const char *env = getenv("HWRT_SIM_FAULTS");
    clause next[MAX_CLAUSES];
    int n = 0;
    uint64_t seed = 1;
    if (env && *env) {
        char buf[1024];
        if (strlen(env) >= sizeof buf) {
            snprintf(reason, rlen, "HWRT_SIM_FAULTS is longer than %zu characters", sizeof buf - 1);
            return 0;
        }
        snprintf(buf, sizeof buf, "%s", env);
        char *save = NULL;
        for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (!strncmp(t, "seed=", 5)) {
                if (!parse_u64(t + 5, 0, UINT64_MAX, &seed)) {
                    snprintf(reason, rlen, "HWRT_SIM_FAULTS: \"%s\" is not a seed; write seed=S "
                             "with a whole number S", t);
                    return 0;
                }
                continue;
            }
            if (n == MAX_CLAUSES) {
                snprintf(reason, rlen, "HWRT_SIM_FAULTS has more than %d clauses", MAX_CLAUSES);
                return 0;
            }
            if (!parse_clause(t, &next[n], reason, rlen)) return 0;
            n++;
        }
    }
    if (!arm)
        return 1;
    pthread_mutex_lock(&mu);
    memcpy(plan, next, (size_t)n * sizeof *plan);
    rng_state = seed;
    atomic_store(&nplan, n);
    pthread_mutex_unlock(&mu);
    for (int i = 0; i < F_KINDS; i++) atomic_store(&injected[i], 0);
    if (n) hwi_log(HWI_LOG_INFO, "sim: HWRT_SIM_FAULTS armed with %d clause(s): %s", n, env);
    return 1;
}

/* Count one eligible call of `kind` on device dev (a kernel: of op, else -1); the first
 * clause that fires wins. Returns the clause index or -1; *ms gets the stall of a stall
 * clause. */
static int fire(int kind, int dev, int op, unsigned *ms, char *text, size_t tlen)
{
    if (!atomic_load_explicit(&nplan, memory_order_relaxed))
        return -1;
    int hit = -1;
    pthread_mutex_lock(&mu);
    int n = atomic_load(&nplan);
    for (int i = 0; i < n && hit < 0; i++) {
        clause *c = &plan[i];
        if (c->kind != kind || (c->dev >= 0 && c->dev != dev) || (c->op >= 0 && c->op != op))
            continue;
        uint64_t k = ++c->calls;
        int f = c->trigger == T_NTH     ? k == c->n
                : c->trigger == T_EVERY ? k % c->n == 0
                : c->trigger == T_FROM  ? k >= c->n
                : (double)(rng_next() >> 11) * 0x1.0p-53 < c->p;
        if (f && (!c->times || c->hits < c->times)) {
            c->hits++;
            hit = i;
            if (ms) *ms = c->ms;
            snprintf(text, tlen, "%s", c->text);
        }
    }
    pthread_mutex_unlock(&mu);
    if (hit >= 0) atomic_fetch_add(&injected[kind], 1);
    return hit;
}

hwrt_status sim_fault_alloc(sim_dev *d, size_t bytes, const char *what)
{
    char text[64];
    if (fire(F_ALLOC, d->ordinal, -1, NULL, text, sizeof text) < 0)
        return HWRT_SUCCESS;
    hwi_log(HWI_LOG_INFO, "sim: injected allocation failure on device %d (%s)", d->ordinal, text);
    return hwi_err(HWRT_ERROR_OUT_OF_MEMORY, "sim device %d: %s of %zu bytes failed: injected "
                   "allocation failure (HWRT_SIM_FAULTS clause \"%s\"); nothing was allocated, "
                   "free memory or retry", d->ordinal, what, bytes, text);
}

static const char *copy_dir(int kind)
{
    return kind == HWRT_MEMCPY_HOST_TO_DEVICE ? "H2D" : kind == HWRT_MEMCPY_DEVICE_TO_HOST ? "D2H"
           : kind == HWRT_MEMCPY_DEVICE_TO_DEVICE ? "D2D" : "H2H";
}

static int64_t kernel_elems(const hwrt_kernel *k)
{
    return k->op == HWRT_K_MATMUL ? k->m * k->nn : k->op == HWRT_K_SUM ? k->m * k->k * k->nn : k->n;
}

/* Engine-thread hook, called by sim_op_execute before it runs op: a nonzero status
 * becomes the device's sticky fault with msg as its reason. Stalls sleep here. */
int sim_fault_inject(sim_dev *d, const sim_op *op, char *msg, size_t len)
{
    char text[64];
    if (op->type == SOP_COPY) {
        int host_link = op->u.copy.kind == HWRT_MEMCPY_HOST_TO_DEVICE ||
                        op->u.copy.kind == HWRT_MEMCPY_DEVICE_TO_HOST;
        unsigned ms = 0;
        if (host_link && fire(F_STALL, d->ordinal, -1, &ms, text, sizeof text) >= 0) {
            sim_wait_until_ns(sim_now_ns() + (uint64_t)ms * 1000000u);   /* virtual when
                                                                            deterministic */
        }
        if (fire(F_COPY, d->ordinal, -1, NULL, text, sizeof text) >= 0) {
            snprintf(msg, len, "%s copy of %zu bytes failed on its copy engine: injected link "
                     "error (HWRT_SIM_FAULTS clause \"%s\"), the destination was not written",
                     copy_dir(op->u.copy.kind), op->u.copy.bytes, text);
            hwi_log(HWI_LOG_INFO, "sim: device %d: %s", d->ordinal, msg);
            return HWRT_ERROR_DEVICE_FAULT;
        }
    } else if (op->type == SOP_KERNEL) {
        if (fire(F_KERNEL, d->ordinal, (int)op->u.kernel.op, NULL, text, sizeof text) >= 0) {
            snprintf(msg, len, "kernel %s (%s, %lld elements) raised an injected fault "
                     "(HWRT_SIM_FAULTS clause \"%s\"), its output was not written",
                     hwi_op_name(op->u.kernel.op), hwrt_dtype_name(op->u.kernel.dtype),
                     (long long)kernel_elems(&op->u.kernel),
                     text);
            hwi_log(HWI_LOG_INFO, "sim: device %d: %s", d->ordinal, msg);
            return HWRT_ERROR_DEVICE_FAULT;
        }
    }
    return 0;
}

/* Faults injected per kind since arming (for logs at shutdown). */
void sim_fault_report(void)
{
    if (!atomic_load(&nplan)) return;
    hwi_log(HWI_LOG_INFO, "sim: faults injected: alloc %llu, copy %llu, kernel %llu, stall %llu",
            (unsigned long long)atomic_load(&injected[F_ALLOC]),
            (unsigned long long)atomic_load(&injected[F_COPY]),
            (unsigned long long)atomic_load(&injected[F_KERNEL]),
            (unsigned long long)atomic_load(&injected[F_STALL]));
}
