/* libFuzzer harness with a host-shadow model (issue 17): the input is a program of tensor
 * work on the simulated NPU, and every result is compared with what the model says it
 * must be. Where fuzz_api.c throws hostile arguments at every entry point, this one
 * checks that valid programs get the right answer:
 *
 *  - every op (fill, add, mul, scale, relu, cast, matmul, sum) on every dtype is computed
 *    on the host too; copy_to_host (ordered, never stale) must return the model's bytes:
 *    exactly for element-wise ops, within a dtype-aware bound for matmul and sums;
 *  - offload: a small device budget with host and disk tiers, tensors made offloadable
 *    (also while a write is still queued), evicted, prefetched and fetched on demand, tier
 *    files tampered with (a byte flipped, a byte in every page, truncated, zeroed; the
 *    read-back must be the data or HWRT_ERROR_IO, never other bytes with success); when
 *    all tensors are gone every tier must be empty;
 *  - faults (HWRT_SIM_FAULTS kernel/copy/alloc from the first byte, or armed by a step
 *    for the Nth copy/kernel/allocation after it, so that it lands in a fetch or a
 *    write-back): a tensor confirmed before the fault (read back or synchronized) keeps
 *    its value through the fault and hwrt_device_reset; work since the last confirmation
 *    is re-issued after the reset and checked again;
 *  - hwrt_shutdown with live tensors, streams, events and DLPack exports, then a new
 *    session: old handles must be invalid, a stale export must not alias a new tensor,
 *    and no tier file may remain;
 *  - status: a valid call must succeed unless the model predicts its error (OUT_OF_MEMORY
 *    under a budget or an alloc fault, DEVICE_FAULT once a fault plan is armed, DEVICE_BUSY
 *    from an eviction); an invalid one must fail with INVALID_ARGUMENT;
 *  - threads mode (first byte % 4 == 2): 2-4 threads run slices of the input over shared
 *    tensors, streams and events, destroying them while others use them; any status but
 *    INTERNAL is allowed there, the sanitizers (ASan, TSan) are the oracle.
 * Every process uses a private sim registry (HWRT_SIM_REGISTRY), unlinked at exit, and
 * each input ends by checking that no tier file and no shared-memory object is left.
 * Run it under HWRT_SIM_DETERMINISTIC=<seed> (as make test and make fuzz do) and a finding
 * replays exactly. A finding aborts with "hwrt model:" and the reason.
 *
 * Built with -fsanitize=fuzzer it is a libFuzzer target (with a mutator that writes
 * weighted programs in one of HWRT_FUZZ_MUTATOR=N mutations); otherwise main() replays the
 * files or directories given, or with --random SECONDS [SEED [FIRST]] runs random inputs,
 * uniform bytes and weighted programs in turn (how the ASan and TSan builds fuzz it
 * without libFuzzer). */
#define _XOPEN_SOURCE 700
#define _DEFAULT_SOURCE 1
#include <hwrt.h>
/* The model's element loops (ref_get/ref_put over up to 128 Ki elements per tensor, the
 * comparisons, the reference ops) carry no coverage instrumentation: their comparisons
 * say nothing about the program's shape, and traced they were most of an execution's
 * time in the libFuzzer build (perf: __sanitizer_cov_trace_*cmp* 35 %). */
#if defined(__clang__)
#define NO_COV __attribute__((no_sanitize("coverage")))
#pragma clang attribute push (__attribute__((no_sanitize("coverage"))), apply_to = function)
#else
#define NO_COV
#endif
#include "half.h"
#include "../dtype_ref.h"   /* ref_get / ref_put: the tests' element access */
#if defined(__clang__)
#pragma clang attribute pop
#endif
#include "op_table.h"        /* the kernel ops (header-only list) */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { NT = 6, NS = 3, MAXEL = 512 * 256 };

/* White-box hook of the simulated NPU (src/backends/sim/sim_fault.c; the harness links
 * libhwrt.a): re-read HWRT_SIM_FAULTS and arm it now, counters restarted. The arm step
 * uses it to place a fault inside the offload transfer the next steps cause. */
int sim_fault_load(char *reason, size_t rlen, int arm);

typedef struct { const uint8_t *p; size_t n; } input;

/* --random's weighted programs: the bytes are drawn as the harness reads them (uniform
 * argument bytes, step opcodes from gen_weight) and recorded in G.buf, so that the
 * recorded input replays the same program. */
static struct {
    int on;
    uint64_t x;
    uint8_t buf[600];
    size_t len;
    int steps_left;
} G;
static unsigned gen_next(void)
{
    G.x = G.x * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)(G.x >> 33);
}
static unsigned u8(input *in)
{
    if (G.on) {
        if (G.len == sizeof G.buf) { in->n = 0; return 0; }   /* as a replay ends */
        return G.buf[G.len++] = (uint8_t)(gen_next() >> 8);
    }
    if (!in->n) return 0;
    in->n--;
    return *in->p++;
}

static int trace;
static int sched;       /* 0 deterministic (default), 1 threaded, 2 threaded + jitter */
/* HWRT_FUZZ_NO=threads,shutdown,dlpack,leaks: leave those parts out (to measure how fast
 * the rest finds its bugs while a part with a frequent finding is masked; leaks: the
 * check that the tiers are empty once every tensor is released) */
static int no_threads, no_shutdown, no_dlpack, no_leaks;
static char offload_dir[64], reg_name[64];
/* The input encoding. 3 (default): 20 steps (pressure and overlap added, the fault step
 * may overlap compute with a fetch and arms the next copies more often), offload
 * configured mostly with pinned host memory and host tiers with room.
 * HWRT_FUZZ_ENCODING=2 reads the inputs written before that (tests/fuzz/corpus-model/enc2)
 * as they were: 18 steps (arm and tamper added), small host tiers scaled to the tensors,
 * "offloadable and evicted" in one step, a reset that may synchronize first.
 * HWRT_FUZZ_ENCODING=1 reads older ones (tests/fuzz/findings): 16 steps, host tiers of
 * whole MiB. */
static int enc = 3;
static unsigned nsteps = 20;

static const uint8_t *cur_data;   /* the input being run (--random writes it on a finding) */
static size_t cur_size;
static int dump_input;
static long cur_index = -1;       /* --random: the input's number in its seed's sequence */

static void at_exit(void);

static void finding(const char *fmt, const char *a, const char *b)
{
    if (dump_input) {
        FILE *f = fopen("model-finding.bin", "wb");
        if (f) {
            if (G.on) fwrite(G.buf, 1, G.len, f);
            else fwrite(cur_data, 1, cur_size, f);
            fclose(f);
        }
        fprintf(stderr, "hwrt model: random input %ld written to model-finding.bin\n", cur_index);
    }
    fprintf(stderr, "hwrt model: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, " (last error: \"%s\")\n", hwrt_last_error());
    at_exit();       /* abort skips atexit: remove the offload directory and registry now */
    abort();
}

/* ---- dtypes: the documented semantics, written again for the host (sim_kernels.c is
 * the device side; half.h gives IEEE round-to-nearest-even conversions) ---- */
static const hwrt_dtype dtypes[] = {HWRT_FLOAT32, HWRT_FLOAT16, HWRT_BFLOAT16, HWRT_FLOAT64,
                                    HWRT_INT8, HWRT_UINT8, HWRT_INT32, HWRT_INT64, HWRT_BOOL};
static size_t dsize(hwrt_dtype dt) { return hwrt_dtype_size(dt); }
NO_COV static int is_float(hwrt_dtype dt)
{
    return dt == HWRT_FLOAT32 || dt == HWRT_FLOAT16 || dt == HWRT_BFLOAT16 || dt == HWRT_FLOAT64;
}
NO_COV static int f32_math(hwrt_dtype dt) { return is_float(dt) && dt != HWRT_FLOAT64; }
NO_COV static int64_t ldi(hwrt_dtype dt, const void *p, int64_t i)
{
    return dt == HWRT_INT64 ? ((const int64_t *)p)[i] : (int64_t)ref_get(dt, p, i);
}
NO_COV static void sti_wrap(hwrt_dtype dt, void *p, int64_t i, uint64_t r)
{
    switch (dt) {
    case HWRT_INT8: ((int8_t *)p)[i] = (int8_t)r; break;
    case HWRT_UINT8: ((uint8_t *)p)[i] = (uint8_t)r; break;
    case HWRT_INT32: ((int32_t *)p)[i] = (int32_t)r; break;
    default: ((int64_t *)p)[i] = (int64_t)r; break;
    }
}
NO_COV static double eps_of(hwrt_dtype dt)
{
    switch (dt) {
    case HWRT_FLOAT16: return 0x1p-10;
    case HWRT_BFLOAT16: return 0x1p-7;
    case HWRT_FLOAT64: return 0x1p-52;
    default: return 0x1p-23;
    }
}

/* ---- the model ---- */
typedef struct {
    hwrt_tensor h;
    hwrt_dtype dt;
    int ndim;
    int64_t shape[2], n;
    size_t nb;
    unsigned char *val;   /* intended value (as if every queued op ran) */
    double *tol;          /* per element bound when approx (matmul, sum) */
    int def;              /* val is meaningful */
    int known;            /* the device must hold val */
    int approx;           /* val is a reference within tol, not exact */
    int pend;             /* written since last confirmed (read back / synchronized) */
    int off;              /* offloadable */
    int tampered;         /* a tier file was changed while this tensor was live */
    int kept;             /* confirmed when a fault was seen: it must survive it */
    int loc_reset;        /* kept and offloadable: its tier after the last reset, for triage
                           * (0 device: a fetch that never landed would show; 1 host, 2 disk:
                           * a save that never landed), -1 unknown */
    unsigned smask;       /* streams that used it since it was last joined */
} mt;

static struct {
    mt t[NT];
    hwrt_stream s[NS];     /* s[0] = NULL: the default stream */
    hwrt_event ev[NS];
    int faults;            /* a kernel/copy fault plan is armed */
    int alloc_faults;
    int capped;            /* offload budget: OOM may be predicted where memory is taken */
    int offload;
    int faulted;           /* a DEVICE_FAULT was seen and not yet reset */
    int tampered;          /* a tier file was changed: any call may report HWRT_ERROR_IO */
    char fault_why[200];   /* the sentence of the first fault seen (for findings) */
    hwrt_tensor stale;     /* a handle from before a shutdown */
    DLManagedTensorVersioned *stale_dl;
    int shutdowns;
    size_t budget;         /* the offload budget (max_device_memory) while offload is on */
} M;

static unsigned char *scratch, *scratch2;

enum { A_OOM = 1, A_FAULT = 2, A_BUSY = 4, A_IO = 8, A_INVAL = 16, A_HANDLE = 32 };

static void on_fault(const char *why);

/* Check a status against what the model allows; returns it. */
static hwrt_status chk_(hwrt_status s, unsigned allow, const char *call)
{
    if (trace) fprintf(stderr, "  %s -> %s\n", call, hwrt_status_name(s));
    if ((unsigned)s > HWRT_ERROR_INTERNAL) finding("%s: status out of range%s", call, "");
    if (s == HWRT_SUCCESS) return s;
    if (!hwrt_last_error()[0]) finding("%s: %s without a sentence", call, hwrt_status_name(s));
    if (s == HWRT_ERROR_DEVICE_FAULT && (M.faults || M.faulted)) { on_fault(hwrt_last_error()); return s; }
    if (s == HWRT_ERROR_OUT_OF_MEMORY && (allow & A_OOM) && (M.capped || M.alloc_faults)) return s;
    if (s == HWRT_ERROR_OUT_OF_MEMORY && M.alloc_faults) return s;
    if (s == HWRT_ERROR_DEVICE_BUSY && (allow & A_BUSY)) return s;
    if (s == HWRT_ERROR_IO && ((allow & A_IO) || M.tampered)) return s;
    if (s == HWRT_ERROR_INVALID_ARGUMENT && (allow & A_INVAL)) return s;
    if (s == HWRT_ERROR_INVALID_HANDLE && (allow & A_HANDLE)) return s;
    finding("%s: a valid call failed with %s, which the model does not predict", call,
            hwrt_status_name(s));
    return s;
}
#define CHK(call, allow) chk_((call), (allow), #call)

/* The device faulted: what was written since the last confirmation may not have landed. */
static void on_fault(const char *why)
{
    if (!M.faulted) snprintf(M.fault_why, sizeof M.fault_why, "%s", why);
    M.faulted = 1;
    for (int i = 0; i < NT; i++) {
        if (M.t[i].h && M.t[i].pend) M.t[i].known = 0;
        if (M.t[i].h && M.t[i].known) M.t[i].kept = 1;
    }
}

static void mt_free(mt *t)
{
    free(t->val);
    free(t->tol);
    memset(t, 0, sizeof *t);
}

static const struct { int ndim; int64_t d[2]; } shapes[] = {
    {1, {1, 0}}, {1, {7, 0}}, {2, {3, 5}}, {2, {5, 3}}, {2, {16, 16}}, {2, {64, 64}},
    {2, {300, 129}}, {2, {256, 256}}, {2, {512, 256}}, {0, {0, 0}}, {1, {0, 0}}, {2, {5, 7}}};
enum { NSHAPES = sizeof shapes / sizeof shapes[0] };

/* n small values (-8 .. 8 in halves) from seed */
NO_COV static void seeded_values(hwrt_dtype dt, unsigned char *val, int64_t n, unsigned seed)
{
    /* the 34 values, encoded once (ref_put per element was a tenth of an execution) */
    unsigned char enc_v[34][8];
    size_t es = dsize(dt);
    for (int q = 0; q < 34; q++) ref_put(dt, enc_v[q], 0, (double)(q / 2 - 8) / (q % 2 ? 2.0 : 1.0));
    uint32_t x = seed * 2654435761u + 12345u;
    for (int64_t k = 0; k < n; k++) {
        x = x * 1103515245u + 12345u;
        memcpy(val + (size_t)k * es, enc_v[(x >> 16) % 17 * 2 + ((x >> 8) & 1)], es);
    }
}

/* Make slot i a tensor of dt and shape; data: fill from the program (def), or empty. */
static int mt_new(int i, hwrt_dtype dt, int ndim, const int64_t *shape, int with_data, unsigned seed)
{
    mt *t = &M.t[i];
    if (t->h) CHK(hwrt_tensor_release(t->h), A_FAULT);
    mt_free(t);
    int64_t n = 1;
    for (int k = 0; k < ndim; k++) n *= shape[k];
    t->dt = dt;
    t->ndim = ndim;
    memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
    t->n = n;
    t->nb = (size_t)n * dsize(dt);
    t->val = calloc(1, t->nb + 8);
    t->tol = calloc((size_t)n + 1, sizeof *t->tol);
    hwrt_status s;
    if (with_data) {
        seeded_values(dt, t->val, n, seed);
        s = CHK(hwrt_tensor_from_host(&t->h, dt, ndim, shape, t->val), A_OOM);
    } else {
        s = CHK(hwrt_tensor_empty(&t->h, dt, ndim, shape), A_OOM);
    }
    if (s != HWRT_SUCCESS) { t->h = NULL; mt_free(t); return 0; }
    t->def = t->known = with_data;
    t->pend = 0;       /* from_host returned success: the copy landed */
    t->smask = 1;      /* from_host: ordered on the default stream */
    return 1;
}

/* Order stream si after every other stream that used t (events), as a correct program
 * must; t is then ordered on si alone. */
static void join(mt *t, int si)
{
    for (int j = 0; j < NS; j++) {
        if (j == si || !(t->smask & (1u << j)) || !M.ev[j]) continue;
        if (CHK(hwrt_event_record(M.ev[j], M.s[j]), A_FAULT) == HWRT_SUCCESS)
            CHK(hwrt_stream_wait_event(M.s[si], M.ev[j]), A_FAULT);
    }
    t->smask = 1u << si;
}

/* The teardown's reads collect every wrong tensor into one finding (a fault may leave
 * more than one wrong: the tensor fetched and the victim written back for it). */
static int wrong_collect;
static char wrong_all[4096];

static void wrong_flush(void)
{
    wrong_collect = 0;
    if (wrong_all[0]) finding("%s%s", wrong_all, "");
}

/* Compare t's device bytes (in buf) with the model. */
NO_COV static void compare(int i, const unsigned char *buf, const char *when)
{
    mt *t = &M.t[i];
    /* the same bytes are the same values (an exact tensor: the common case, and fast) */
    if (!t->approx && !memcmp(buf, t->val, t->nb)) return;
    for (int64_t k = 0; k < t->n; k++) {
        double g = ref_get(t->dt, buf, k), w = ref_get(t->dt, t->val, k);
        int ok;
        if (t->dt == HWRT_INT64) ok = ((const int64_t *)buf)[k] == ((const int64_t *)t->val)[k];
        else if (isnan(g) || isnan(w)) ok = (isnan(g) && isnan(w)) || (t->approx && !isfinite(w));
        else if (t->approx) ok = fabs(g - w) <= t->tol[k] || (isinf(g) && fabs(w) > 6e4 &&
                                                              t->dt == HWRT_FLOAT16) ||
                                  (!isfinite(w) && !isfinite(g));
        else ok = g == w;
        if (!ok) {
            char a[160], b[480];
            snprintf(a, sizeof a, "tensor %d (%s, %lld elements) %s: element %lld", i,
                     hwrt_dtype_name(t->dt), (long long)t->n, when, (long long)k);
            /* its history, for triage: offloadable, a tier file changed while it lived,
             * kept through a fault (and the fault's sentence) */
            static const char *const tier[] = {"", " [on the device tier at the reset]",
                                               " [on the host tier at the reset]",
                                               " [on the disk tier at the reset]"};
            snprintf(b, sizeof b, "is %.9g, the model says %.9g%s%s%s%s%s%s%s", g, w,
                     t->approx ? " (within a bound)" : "", t->off ? " [offloadable]" : "",
                     t->tampered ? " [tier file tampered]"
                     : M.tampered ? " [a tier file was tampered]" : "",
                     t->kept ? " [kept through a fault: " : "", t->kept ? M.fault_why : "",
                     t->kept ? "]" : "",
                     t->kept && t->off && t->loc_reset >= 0 && t->loc_reset <= 2
                         ? tier[t->loc_reset + 1] : "");
            if (!wrong_collect) finding("%s %s: wrong data with success", a, b);
            size_t l = strlen(wrong_all);
            snprintf(wrong_all + l, sizeof wrong_all - l, "%s%s %s: wrong data with success",
                     l ? "; " : "", a, b);
            return;
        }
    }
    if (t->approx) { memcpy(t->val, buf, t->nb); t->approx = 0; }   /* snap to the device */
}

static void read_check(int i, const char *when)
{
    mt *t = &M.t[i];
    if (!t->h) return;
    unsigned allow = A_OOM | (t->tampered ? A_IO : 0);
    hwrt_status s = CHK(hwrt_tensor_copy_to_host(t->h, scratch, t->nb), allow);
    if (s == HWRT_ERROR_IO) { t->known = 0; return; }
    if (s != HWRT_SUCCESS) return;
    if (t->known) compare(i, scratch, when);
    t->pend = 0;               /* it landed: confirmed */
    t->smask |= 1;
}

/* ---- ops: validity as documented in hwrt_tensor.h / ops.c, values as the kernels ---- */
static int same_shape(const mt *a, const mt *b)
{
    return a->ndim == b->ndim && !memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof a->shape[0]);
}

/* The ops as the runtime's op table lists them (src/base/op_table.h): K_FILL ... K_SUM,
 * named by their functions. The seed corpus encodes an op as its index there (new ops go
 * at the end); what is valid for each is modelled below on its own, from the docs. */
typedef enum {
#define K_ENUM(id, name, py, arity, dtypes, out_dtype) K_##id,
    HWI_OP_LIST(K_ENUM)
#undef K_ENUM
    K_N
} kop;
static const char *const kop_name[K_N] = {
#define K_NAME(id, name, py, arity, dtypes, out_dtype) py,
    HWI_OP_LIST(K_NAME)
#undef K_NAME
};

/* The output a valid op needs (for fresh outputs): shape and dtype; 0 when none. */
static int out_spec(kop k, const mt *a, const mt *b, int axis, hwrt_dtype *dt, int *ndim,
                    int64_t *shape)
{
    if (k == K_FILL) return 0;
    *dt = a->dt;
    *ndim = a->ndim;
    memcpy(shape, a->shape, sizeof a->shape);
    if (k == K_MATMUL) {
        if (a->ndim != 2 || b->ndim != 2) return 0;
        *ndim = 2; shape[0] = a->shape[0]; shape[1] = b->shape[1];
    } else if (k == K_SUM) {
        if (a->dt == HWRT_BOOL) *dt = HWRT_INT64;
        if (axis == -1) { *ndim = 1; shape[0] = 1; }
        else if (axis >= 0 && axis < a->ndim) {
            *ndim = a->ndim - 1;
            if (a->ndim == 2) shape[0] = a->shape[axis ? 0 : 1];
        } else return 0;
    } else if (k == K_CAST) {
        *dt = b->dt;       /* the cast's target dtype is taken from b */
    }
    return 1;
}

static int valid(kop k, const mt *o, const mt *a, const mt *b, int axis)
{
    switch (k) {
    case K_FILL: return 1;
    case K_ADD: case K_MUL:
        if (a->dt != b->dt || !same_shape(a, b)) return 0;
        /* fall through */
    case K_SCALE: case K_RELU:
        return a->dt == o->dt && same_shape(a, o) && a->dt != HWRT_BOOL;
    case K_CAST: return same_shape(a, o) && !(o == a && o->dt != a->dt);
    case K_MATMUL:
        return is_float(a->dt) && a->dt == b->dt && a->dt == o->dt && a->ndim == 2 &&
               b->ndim == 2 && o->ndim == 2 && a->shape[1] == b->shape[0] &&
               o->shape[0] == a->shape[0] && o->shape[1] == b->shape[1] && o != a && o != b;
    default: {
        hwrt_dtype odt = a->dt == HWRT_BOOL ? HWRT_INT64 : a->dt;
        if (o->dt != odt) return 0;
        if (axis == -1) return o->n == 1;
        if (axis < 0 || axis >= a->ndim || o->ndim != a->ndim - 1) return 0;
        for (int i = 0, j = 0; i < a->ndim; i++)
            if (i != axis && o->shape[j++] != a->shape[i]) return 0;
        return 1;
    }
    }
}

/* out = op(a, b) on the model (into tmp, then out: operands may alias). */
NO_COV static void model_op(kop k, mt *o, const mt *a, const mt *b, double v, int axis)
{
    unsigned char *r = scratch2;
    double *tol = o->tol;
    int approx = 0;
    if (k == K_MATMUL || k == K_SUM) memset(tol, 0, (size_t)o->n * sizeof *tol);
    if (k == K_FILL) {
        for (int64_t i = 0; i < o->n; i++) ref_put(o->dt, r, i, f32_math(o->dt) ? (float)v : v);
    } else if (k == K_MATMUL) {
        int64_t m = a->shape[0], kk = a->shape[1], n = b->shape[1];
        double e = a->dt == HWRT_FLOAT64 ? 0x1p-52 : 0x1p-23;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double acc = 0, mag = 0;
                for (int64_t q = 0; q < kk; q++) {
                    double x = ref_get(a->dt, a->val, i * kk + q), y = ref_get(b->dt, b->val, q * n + j);
                    acc += x * y;
                    mag += fabs(x * y);
                }
                ref_put(o->dt, r, i * n + j, acc);
                tol[i * n + j] = (double)(kk + 2) * e * mag + 2 * eps_of(o->dt) * fabs(acc) + 1e-300;
            }
        approx = 1;
    } else if (k == K_SUM) {
        int64_t outer = 1, red = a->n, inner = 1;
        if (axis >= 0) {
            red = a->shape[axis];
            outer = axis == 1 ? a->shape[0] : 1;
            inner = a->ndim == 2 && axis == 0 ? a->shape[1] : 1;
        }
        for (int64_t p = 0; p < outer; p++)
            for (int64_t q = 0; q < inner; q++) {
                double acc = 0, mag = 0;
                uint64_t iacc = 0;
                for (int64_t x = 0; x < red; x++) {
                    int64_t idx = (p * red + x) * inner + q;
                    if (is_float(a->dt)) { double y = ref_get(a->dt, a->val, idx); acc += y; mag += fabs(y); }
                    else iacc += (uint64_t)ldi(a->dt, a->val, idx);
                }
                int64_t oi = p * inner + q;
                if (is_float(a->dt)) {
                    ref_put(o->dt, r, oi, acc);
                    tol[oi] = (double)(red + 1) * 0x1p-52 * mag + 2 * eps_of(o->dt) * fabs(acc) + 1e-300;
                } else if (o->dt == HWRT_INT64) {
                    ((int64_t *)r)[oi] = (int64_t)iacc;
                } else {
                    ref_put(o->dt, r, oi, (double)(int64_t)iacc);
                }
            }
        approx = is_float(a->dt);
    } else if (k == K_CAST && o->dt == a->dt) {    /* a byte copy, exact for int64 too */
        memcpy(r, a->val, o->nb);
    } else if (a->dt == HWRT_FLOAT32 && o->dt == HWRT_FLOAT32 && k != K_CAST) {
        /* float32, the common case, typed: the same arithmetic as the loop below (in
         * double, rounded to float32) without ref_get/ref_put per element */
        const float *x = (const float *)a->val, *y = b ? (const float *)b->val : x;
        float *w = (float *)r;
        double alpha = (double)(float)v;
        for (int64_t i = 0; i < o->n; i++) {
            double xi = x[i];
            w[i] = (float)(k == K_ADD ? xi + y[i] : k == K_MUL ? xi * y[i]
                           : k == K_SCALE ? alpha * xi : (xi > 0 ? xi : 0));
        }
    } else {
        int ints = !is_float(a->dt) && a->dt != HWRT_BOOL;
        double alpha = f32_math(a->dt) ? (double)(float)v : v;
        for (int64_t i = 0; i < o->n; i++) {
            if (k == K_CAST) { ref_put(o->dt, r, i, ref_get(a->dt, a->val, i)); continue; }
            if (ints && (k == K_ADD || k == K_MUL)) {
                uint64_t x = (uint64_t)ldi(a->dt, a->val, i), y = (uint64_t)ldi(b->dt, b->val, i);
                sti_wrap(o->dt, r, i, k == K_MUL ? x * y : x + y);
                continue;
            }
            double x = ref_get(a->dt, a->val, i), y = (k == K_ADD || k == K_MUL) ? ref_get(b->dt, b->val, i) : 0;
            double w = k == K_ADD ? x + y : k == K_MUL ? x * y : k == K_SCALE ? alpha * x : (x > 0 ? x : 0);
            if (f32_math(a->dt)) w = (float)w;
            ref_put(o->dt, r, i, w);
        }
    }
    memcpy(o->val, r, o->nb);
    int in_def = k == K_FILL || (a->def && (!b || b->def));
    int in_known = k == K_FILL || (a->known && !a->approx && (!b || (b->known && !b->approx)));
    o->def = in_def;
    o->known = in_def && in_known;
    o->approx = approx;
}

/* o = k(a, b) on stream si (v: the fill value or scale factor, axis: the sum's), checked
 * against the model; fresh: into a new tensor in slot oi of the shape a valid op needs. */
static void run_op(kop k, int oi, int ai, int bi, int si, double v, int axis, int fresh)
{
    mt *a = &M.t[ai], *b = &M.t[bi];
    if (k != K_FILL && !a->h) return;
    if ((k == K_ADD || k == K_MUL || k == K_MATMUL || k == K_CAST) && !b->h) return;
    if (fresh) {           /* a fresh output of the shape a valid op needs */
        hwrt_dtype dt;
        int ndim;
        int64_t shape[2];
        if (k == K_FILL || !out_spec(k, a, b, axis, &dt, &ndim, shape)) return;
        if (oi == ai || oi == bi) return;
        if (k == K_ADD || k == K_MUL) { if (!same_shape(a, b) || a->dt != b->dt) b = a, bi = ai; }
        if (!mt_new(oi, dt, ndim, shape, 0, 0)) return;
    }
    mt *o = &M.t[oi];
    if (!o->h) return;
    if (k == K_MATMUL && a->ndim == 2 && b->ndim == 2 && a->shape[0] * a->shape[1] * (b->ndim ? b->shape[1] : 1) > 300000)
        return;            /* keep the model fast */
    int ok = valid(k, o, a, b, axis);
    join(o, si);
    if (k != K_FILL) join(a, si);
    if (k == K_ADD || k == K_MUL || k == K_MATMUL) join(b, si);
    hwrt_stream s = M.s[si];
    hwrt_status r;
    /* hwrt brings offloaded operands back before it validates them: under a budget an
     * invalid op may fail with OUT_OF_MEMORY first */
    unsigned allow = ok ? A_OOM : A_INVAL | A_OOM;
    switch (k) {
    case K_FILL: r = CHK(hwrt_op_fill(o->h, v, s), allow); break;
    case K_ADD: r = CHK(hwrt_op_add(o->h, a->h, b->h, s), allow); break;
    case K_MUL: r = CHK(hwrt_op_mul(o->h, a->h, b->h, s), allow); break;
    case K_SCALE: r = CHK(hwrt_op_scale(o->h, a->h, v, s), allow); break;
    case K_RELU: r = CHK(hwrt_op_relu(o->h, a->h, s), allow); break;
    case K_CAST: r = CHK(hwrt_op_cast(o->h, a->h, s), allow); break;
    case K_MATMUL: r = CHK(hwrt_op_matmul(o->h, a->h, b->h, s), allow); break;
    default: r = CHK(hwrt_op_sum(o->h, a->h, axis, s), allow); break;
    }
    if (trace) fprintf(stderr, "  op %s t%d <- t%d t%d stream %d valid %d\n", kop_name[k], oi, ai, bi, si, ok);
    if (!ok && r == HWRT_SUCCESS && o->nb)
        finding("%s: an invalid %s was accepted", kop_name[k], "op");
    if (r == HWRT_ERROR_DEVICE_FAULT) { o->known = 0; o->pend = 1; return; }
    if (r == HWRT_ERROR_IO) { o->known = 0; return; }     /* a tampered tier file */
    if (r != HWRT_SUCCESS) return;
    model_op(k, o, a, (k == K_ADD || k == K_MUL || k == K_MATMUL) ? b : NULL, v, axis);
    o->pend = 1;
    o->kept = 0;
    if (M.faulted) o->known = 0;      /* queued on a faulted device: skipped */
}

static void op_step(input *in)
{
    unsigned kb = u8(in), ob = u8(in), ab = u8(in), bb = u8(in), sb = u8(in);
    run_op((kop)(kb % K_N), (int)(ob % NT), (int)(ab % NT), (int)(bb % NT), (int)(sb % NS),
           (double)((int)(kb / 8 % 16) - 8) / ((kb & 0x80) ? 2.0 : 1.0), (int)(sb / 4 % 3) - 1,
           (ob & 0x80) != 0);
}

/* The slot an offload, fault or tamper step names: in encoding 2 the first live one from
 * i on (so that these steps act on a tensor whenever there is one). */
static int live_slot(int i)
{
    if (enc == 1) return i;
    for (int k = 0; k < NT; k++)
        if (M.t[(i + k) % NT].h) return (i + k) % NT;
    return i;
}

/* ---- offload ---- */
static void offload_config(unsigned b, unsigned c)
{
    hwrt_offload_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.enabled = 1;
    cfg.auto_offload = b & 1;
    cfg.enable_pinned_mem = (b >> 1) & 1;
    /* the budget counts the pool's segments (2 MiB for tensors up to 1 MiB) */
    cfg.max_device_memory = (size_t)(2 + c % 4 * 2) << 20;
    if (enc >= 3) {
        /* as programs that offload are configured: mostly pinned host memory (the fast
         * path, with stream-ordered write-backs), a host tier with room half of the time,
         * budgets that a few of the largest tensors fill (pressure_step) */
        static const size_t host[4] = {0, 64 << 10, 256 << 10, 1 << 20};
        static const unsigned budget_mib[4] = {2, 2, 4, 8};
        cfg.enable_pinned_mem = ((b >> 1) & 1) || (c & 32);
        cfg.max_device_memory = (size_t)budget_mib[c % 4] << 20;
        cfg.offload_cpu_size = (b & 4) ? host[c / 4 % 4] : (size_t)64 << 20;
        cfg.offload_disk_size = (b & 8) || (c & 64) ? (size_t)64 << 20 : 0;
    } else if (enc == 1) {
        cfg.offload_cpu_size = (b & 4) ? (size_t)(c / 4 % 4) << 20 : (size_t)64 << 20;
        cfg.offload_disk_size = (b & 8) ? (size_t)64 << 20 : 0;
    } else {       /* host tiers that tensors of 0 B .. 1 MiB fill, so the disk tier is used */
        static const size_t host[4] = {0, 64 << 10, 256 << 10, 1 << 20};
        cfg.offload_cpu_size = (b & 4) || (c & 128) ? host[c / 4 % 4] : (size_t)64 << 20;
        cfg.offload_disk_size = (b & 8) || (c & 64) ? (size_t)64 << 20 : 0;
    }
    cfg.offload_path = offload_dir;
    cfg.prefetch_depth = (int)(c / 16 % 4);
    if (CHK(hwrt_set_offload_config(&cfg), 0) == HWRT_SUCCESS) {
        M.offload = M.capped = 1;
        M.budget = cfg.max_device_memory;
    }
}

/* Tamper with the disk tier's files behind the runtime's back (another local user could,
 * issue 15 case 6): the files in the private offload directory and the open files whose
 * name is (or was: unlinked) in it, each once. mode: 0 flip one byte at pos/256 of the
 * file, 1 flip a byte in every 4 KiB page (every tensor's region), 2 truncate to pos/256
 * of its length, 3 zero it all. Every tensor live now may then read back with
 * HWRT_ERROR_IO; a read that succeeds must still return the data. */
static unsigned tamper_mode, tamper_pos;
static dev_t tampered_dev[16];
static ino_t tampered_ino[16];
static int ntampered;

static void tamper_fd(int fd)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size == 0) return;
    for (int i = 0; i < ntampered; i++)
        if (tampered_dev[i] == sb.st_dev && tampered_ino[i] == sb.st_ino) return;
    if (ntampered == 16) return;
    tampered_dev[ntampered] = sb.st_dev;
    tampered_ino[ntampered++] = sb.st_ino;
    off_t size = sb.st_size, at = (off_t)((uint64_t)size * tamper_pos / 256);
    unsigned char x;
    switch (tamper_mode) {
    case 0: case 1:
        for (off_t o = tamper_mode ? at % 4096 : at; o < size; o += 4096) {
            if (pread(fd, &x, 1, o) != 1) break;
            x ^= 0x5a;
            if (pwrite(fd, &x, 1, o) != 1 || !tamper_mode) break;
        }
        break;
    case 2:
        if (ftruncate(fd, at) != 0) {}
        break;
    default: {
        static const unsigned char zero[4096];
        for (off_t o = 0; o < size; o += (off_t)sizeof zero)
            if (pwrite(fd, zero, size - o < (off_t)sizeof zero ? (size_t)(size - o) : sizeof zero, o) <= 0)
                break;
        break;
    }
    }
}

static int tamper_path(const char *path, const struct stat *sb, int type, struct FTW *f)
{
    (void)sb; (void)f;
    if (type != FTW_F) return 0;
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) { tamper_fd(fd); close(fd); }
    return 0;
}

static void tamper(unsigned mode, unsigned pos)
{
    tamper_mode = mode % 4;
    tamper_pos = pos;
    ntampered = 0;
    nftw(offload_dir, tamper_path, 8, FTW_PHYS);
    /* the runtime may keep its tier file open and unlinked: reach it through /proc */
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    size_t dl = strlen(offload_dir);
    while (d && (e = readdir(d))) {
        char link[64], target[4096];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0) continue;
        target[n] = 0;
        if (strncmp(target, offload_dir, dl) || target[dl] != '/') continue;
        int fd = open(link, O_RDWR | O_CLOEXEC);
        if (fd >= 0) { tamper_fd(fd); close(fd); }
    }
    if (d) closedir(d);
    if (trace) fprintf(stderr, "  tamper mode %u pos %u: %d file(s)\n", tamper_mode, pos, ntampered);
    if (!ntampered) return;
    M.tampered = 1;
    for (int i = 0; i < NT; i++)
        if (M.t[i].h) M.t[i].tampered = 1;
}

static void offload_step(input *in)
{
    unsigned b = u8(in), ib = u8(in);
    int ti = live_slot((int)(ib % NT));
    mt *t = &M.t[ti];
    hwrt_stream s = M.s[ib / 8 % NS];
    if (!M.offload) { offload_config(b, ib); return; }
    if (!t->h && b % 6 != 5) return;
    switch (b % 6) {
    case 0: case 1:
        /* made offloadable while its last write may still be queued (issue 15 case 1) */
        if (CHK(hwrt_tensor_set_offloadable(t->h, 1), A_OOM) == HWRT_SUCCESS) t->off = 1;
        if (b % 6 == 1 && enc > 1 && t->off)       /* and evicted at once */
            CHK(hwrt_offload_evict(t->h), A_OOM | A_BUSY);
        break;
    case 2:
        if (t->off) CHK(hwrt_offload_evict(t->h), A_OOM | A_BUSY);
        break;
    case 3:
        if (t->off) { join(t, ib / 8 % NS); CHK(hwrt_offload_prefetch(t->h, s), A_OOM); }
        break;
    case 4:
        if (CHK(hwrt_tensor_set_offloadable(t->h, 0), A_OOM) == HWRT_SUCCESS) t->off = 0;
        break;
    default:
        tamper(0, 128);         /* one byte in the middle of each file */
        break;
    }
    int where = -1;
    if (trace && t->h && t->off && hwrt_offload_location(t->h, &where) == HWRT_SUCCESS)
        fprintf(stderr, "  t%d is on tier %d (0 device, 1 host, 2 disk)\n", ti, where);
}

/* Arm HWRT_SIM_FAULTS=plan now, counters restarted (the plan replaces byte 0's). */
static void arm_fault(const char *plan)
{
    char why[256] = "";
    setenv("HWRT_SIM_FAULTS", plan, 1);
    if (!sim_fault_load(why, sizeof why, 1))
        finding("arming HWRT_SIM_FAULTS=%s failed: %s", plan, why);
    if (trace) fprintf(stderr, "  armed %s\n", plan);
    if (!strncmp(plan, "alloc", 5)) M.alloc_faults = 1;
    else M.faults = 1;
}

/* ---- memory pressure and overlap, as training steps make them (input encoding 3) ---- */

/* a host function (launched by step 11 and overlap_step) */
static _Atomic int hostfn_runs;
static void hostfn_bump(void *arg) { (void)arg; atomic_fetch_add(&hostfn_runs, 1); }

/* Allocate tensors of one size class (the same byte size; one dtype, or dtypes of one
 * element size; a large shape, or one that 2-4 of them fill the budget with) until they
 * overflow the offload budget by one or two, all offloadable from creation,
 * so that the last ones push the first out: the pressure of a model's activations or
 * weights that do not all fit. Slots from fb / 4 on are reused; most tensors are filled
 * from the host, some are empty and filled by a queued op. Offload is turned on first
 * if it is off. */
static void pressure_step(input *in)
{
    static const hwrt_dtype cls[4][3] = {{HWRT_FLOAT64, HWRT_INT64, HWRT_FLOAT64},
                                         {HWRT_FLOAT32, HWRT_INT32, HWRT_FLOAT32},
                                         {HWRT_FLOAT16, HWRT_BFLOAT16, HWRT_FLOAT16},
                                         {HWRT_INT8, HWRT_UINT8, HWRT_BOOL}};
    static const int64_t big[3][2] = {{512, 256}, {256, 256}, {300, 129}};
    unsigned db = u8(in), sb = u8(in), fb = u8(in);
    if (!M.offload) offload_config(db >> 4, sb);
    if (!M.offload || !M.budget) return;
    unsigned c = db % 4;      /* elements large enough that NT - 1 of them overflow it */
    while (c && (size_t)MAXEL * dsize(cls[c][0]) * (NT - 1) < M.budget) c--;
    const hwrt_dtype *dts = cls[c];
    int64_t shape[2] = {big[sb % 3][0], big[sb % 3][1]};
    if (!(sb & 0x80) ||       /* sized so that 2, 3 or 4 of them fill the budget */
        M.budget / ((size_t)(shape[0] * shape[1]) * dsize(dts[0])) + 1 > NT) {
        int64_t rows = (int64_t)(M.budget / (2 + sb / 4 % 3) / dsize(dts[0]) / 256);
        shape[0] = rows < 1 ? 1 : rows > MAXEL / 256 ? MAXEL / 256 : rows;
        shape[1] = 256;
    }
    size_t nb = (size_t)(shape[0] * shape[1]) * dsize(dts[0]);
    size_t count = M.budget / nb + 1 + (fb & 1);
    if (count > NT) count = NT;
    int start = (int)(fb / 4 % NT);
    for (size_t k = 0; k < count; k++) {
        int i = (start + (int)k) % NT;
        hwrt_dtype dt = fb & 8 ? dts[(db / 4 + k) % 3] : dts[db / 4 % 3];   /* mixed or one */
        int with_data = !((fb & 2) && k % 2);
        if (!mt_new(i, dt, 2, shape, with_data, db * 7u + sb + (unsigned)k)) continue;
        if (CHK(hwrt_tensor_set_offloadable(M.t[i].h, 1), A_OOM) == HWRT_SUCCESS) M.t[i].off = 1;
        if (!with_data)              /* a queued fill on a side stream */
            run_op(K_FILL, i, i, i, 1 + (int)(k % 2), (double)((int)(fb / 16) - 8), 0, 0);
    }
}

/* Overlap compute with data movement, as a pipelined program does: allocate an output,
 * queue 1-8 ops that read tensor a, or every tensor of a's shape on the device (a
 * layer), on a stream into it, then, without waiting for them, bring back an
 * offloadable tensor that is off the device (prefetch it, read it back, or update it in
 * place; when none is, pressure_step makes some first), so that the fetch needs room
 * while a is still in use. arm: a fault plan to arm right before that fetch. */
static void overlap_step(input *in, const char *arm)
{
    static const kop reads_a[4] = {K_SCALE, K_RELU, K_CAST, K_ADD};   /* out = k(x) or x + x */
    unsigned ab = u8(in), kb = u8(in), tb = u8(in);
    int ai = live_slot((int)(ab % NT)), si = (int)(ab / 8 % NS), ti = -1;
    /* the one to bring back: off the device; when none is, there is no pressure yet:
     * make it (pressure_step, its bytes follow); else the next offloadable one */
    for (int pass = 0; pass < 3 && ti < 0; pass++) {
        if (pass == 1) { pressure_step(in); ai = live_slot((int)(ab % NT)); }
        for (int k = 1; k < NT && ti < 0 && M.t[ai].h; k++) {
            mt *u = &M.t[(ai + k) % NT];
            int where = 0;
            if (u->h && u->off &&
                (pass == 2 || (hwrt_offload_location(u->h, &where) == HWRT_SUCCESS && where)))
                ti = (ai + k) % NT;
        }
    }
    if (!M.t[ai].h) { if (arm) arm_fault(arm); return; }
    /* the output, allocated first (under pressure that evicts): a fresh tensor of a's
     * kind in a free slot, else in the last slot but a's and the one brought back */
    int oi = -1;
    for (int q = 1; q < NT && oi < 0; q++)
        if (!M.t[(ai + q) % NT].h && (ai + q) % NT != ti) oi = (ai + q) % NT;
    for (int q = NT - 1; q > 0 && oi < 0; q--)
        if ((ai + q) % NT != ti) oi = (ai + q) % NT;
    mt *a = &M.t[ai];
    if (!mt_new(oi, a->dt, a->ndim, a->shape, 0, 0)) { if (arm) arm_fault(arm); return; }
    /* what the ops read: a alone (a quarter of the time), or (a layer) every tensor of
     * a's shape on the device */
    int alone = (kb & 0xc0) == 0xc0, src[NT], nsrc = 0;
    for (int q = 0; q < NT; q++) {
        int j = (ai + q) % NT, where = 0;
        if (j == ti || j == oi || !M.t[j].h) continue;
        if (q && (alone || !same_shape(&M.t[j], a) ||
                  (M.t[j].off && (hwrt_offload_location(M.t[j].h, &where) != HWRT_SUCCESS || where))))
            continue;
        src[nsrc++] = j;
    }
    /* mostly a host function (a progress callback) goes first on that stream: the ops
     * behind it wait for the host, as on a device that is behind */
    if ((tb & 0x60) != 0x60) CHK(hwrt_launch_host_func(M.s[si], hostfn_bump, NULL), 0);
    int n = (alone ? 1 : nsrc) + (int)(kb % 8);     /* a layer reads each of them */
    for (int r = 0; r < n && M.t[oi].h; r++) {
        int j = src[r % nsrc];
        kop k = reads_a[(kb / 8 + (unsigned)r) % 4];
        if (!M.t[j].h) continue;
        if (M.t[oi].dt != M.t[j].dt) k = K_CAST;   /* into the output's dtype */
        run_op(k, oi, j, j, si, (double)((int)(kb / 32 % 4) - 2), 0, 0);
    }
    if (arm) arm_fault(arm);           /* the fault step's: for the copies the fetch makes */
    if (ti < 0 || !M.t[ti].h) return;
    mt *t = &M.t[ti];
    int ts = (int)(tb / 4 % NS);
    for (int j = 0; trace && j < NT; j++) {
        int where = -1;
        if (M.t[j].h && M.t[j].off && hwrt_offload_location(M.t[j].h, &where) == HWRT_SUCCESS)
            fprintf(stderr, "  t%d is on tier %d%s\n", j, where, j == ti ? " (brought back next)" : "");
    }
    switch (tb % 3) {
    case 0:
        if (t->off) { join(t, ts); CHK(hwrt_offload_prefetch(t->h, M.s[ts]), A_OOM); }
        break;
    case 1: read_check(ti, "read back while another tensor was in use"); break;
    default:              /* an op that updates it in place (an optimizer step) */
        run_op(tb & 0x80 ? K_RELU : K_SCALE, ti, ti, ti, ts, 2.0, 0, 0);
        break;
    }
}

/* ---- faults, reset, re-issue ---- */
static void sync_step(void)
{
    if (CHK(hwrt_device_synchronize(), 0) == HWRT_SUCCESS && !M.faulted)
        for (int i = 0; i < NT; i++) M.t[i].pend = 0;
}

static void reset_step(int sync_first)
{
    /* sync_first: hwrt_device_synchronize reports a pending fault (or confirms all) */
    if (sync_first) sync_step();
    /* a reset clears a fault no call reported yet: with a plan armed, what was written
     * since the last confirmation may have been skipped without a word */
    if (M.faults && !M.faulted) on_fault("a fault the reset cleared before any call reported it");
    if (CHK(hwrt_device_reset(0), 0) != HWRT_SUCCESS) return;
    M.faulted = 0;
    for (int i = 0; i < NT; i++) {
        mt *t = &M.t[i];
        t->loc_reset = -1;
        if (t->h && t->off && hwrt_offload_location(t->h, &t->loc_reset) != HWRT_SUCCESS)
            t->loc_reset = -1;
    }
    /* the documented recovery: re-issue what may have been lost, then check it */
    for (int i = 0; i < NT; i++) {
        mt *t = &M.t[i];
        if (!t->h || t->known || !t->def || t->approx) continue;
        if (CHK(hwrt_tensor_copy_from_host(t->h, t->val, t->nb), A_OOM) == HWRT_SUCCESS &&
            !M.faulted) {
            t->known = 1;
            t->tampered = 0;
            t->pend = 0;
            t->smask |= 1;
        }
    }
}

/* Place a fault in an offload transfer (issue 15 cases 2 and 3): arm the Nth copy,
 * kernel or allocation from here on (counters restarted; the plan replaces byte 0's),
 * then, by the second byte, prefetch, evict or read back one tensor, or leave it to the
 * next steps, so that the fault lands inside the fetch or the write-back that causes
 * (a fetch under pressure writes its victims back), not only where byte 0's plan,
 * counted from the session's start, happens to put it. */
static void fault_step(input *in)
{
    static const char *const kinds[] = {"copy", "kernel", "alloc", "copy"};
    /* encoding 3: copies 5/8 (offload moves data by copies), kernels 1/4, allocations 1/8 */
    static const char *const kinds3[] = {"copy", "kernel", "alloc", "copy",
                                         "copy", "kernel", "copy", "copy"};
    unsigned b = u8(in), ib = u8(in);
    char plan[48];
    /* encoding 3: the next copy or the one after it more often (the first copy a fetch
     * under pressure makes is its victim's write-back, the second its own) */
    unsigned nth = enc >= 3 ? (b / 8 % 8 < 4 ? 1 : b / 8 % 8 < 6 ? 2 : 3 + b / 8 % 2)
                            : 1 + b / 4 % 4;
    snprintf(plan, sizeof plan, "%s:nth=%u", enc >= 3 ? kinds3[b % 8] : kinds[b % 4], nth);
    /* encoding 3: or overlap compute with a fetch (overlap_step, its bytes follow), the
     * fault armed after the compute is queued, right before the fetch */
    if (enc >= 3 && ib / 32 >= 4) { overlap_step(in, plan); return; }
    arm_fault(plan);
    int i = live_slot((int)(ib % NT)), si = (int)(ib / 8 % NS);
    mt *t = &M.t[i];
    if (!t->h) return;
    switch (ib / 32 % 4) {
    case 1:         /* a fetch: of the first offloadable tensor from i on that is off the device */
        for (int k = 0; k < NT; k++) {
            mt *u = &M.t[(i + k) % NT];
            int where = 0;
            if (u->h && u->off && hwrt_offload_location(u->h, &where) == HWRT_SUCCESS && where) {
                t = u;
                break;
            }
        }
        if (t->off) { join(t, si); CHK(hwrt_offload_prefetch(t->h, M.s[si]), A_OOM); }
        break;
    case 2:
        if (t->off) CHK(hwrt_offload_evict(t->h), A_OOM | A_BUSY);
        break;
    case 3: read_check(i, "read back after a fault was armed"); break;
    default: break;
    }
}

/* ---- shutdown with live objects ---- */
static int count_files(const char *p, const struct stat *sb, int type, struct FTW *f)
{
    (void)p; (void)sb; (void)f;
    return type == FTW_F || type == FTW_SL;     /* stops at the first */
}

static void check_no_tier_files(const char *when)
{
    if (nftw(offload_dir, count_files, 8, FTW_PHYS) > 0)
        finding("a tier file is left in the offload directory %s %s", offload_dir, when);
}

static void sessions_objects(void)
{
    M.s[0] = NULL;
    for (int j = 1; j < NS; j++)
        if (CHK(hwrt_stream_create(&M.s[j], 0), 0) != HWRT_SUCCESS) M.s[j] = NULL;
    for (int j = 0; j < NS; j++)
        if (CHK(hwrt_event_create(&M.ev[j], 0), 0) != HWRT_SUCCESS) M.ev[j] = NULL;
}

static void shutdown_step(input *in)
{
    unsigned b = u8(in);
    if (M.shutdowns++ >= 3) return;
    /* keep a DLPack export across it (issue 16 case 5) and one tensor handle */
    mt *t = &M.t[b % NT];
    if (t->h && (b & 8)) {
        DLManagedTensorVersioned *m = NULL;
        if (CHK(hwrt_tensor_to_dlpack(t->h, &m), A_OOM) == HWRT_SUCCESS) {
            if (M.stale_dl) M.stale_dl->deleter(M.stale_dl);
            M.stale_dl = m;
        }
    }
    M.stale = t->h;
    hwrt_status s = hwrt_shutdown();         /* live tensors, streams, events, exports */
    if (s != HWRT_SUCCESS && s != HWRT_ERROR_DEVICE_FAULT)
        finding("hwrt_shutdown with live objects: %s%s", hwrt_status_name(s), "");
    if (s == HWRT_ERROR_DEVICE_FAULT && !M.faults && !M.faulted)
        finding("hwrt_shutdown: %s without a fault plan%s", hwrt_status_name(s), "");
    check_no_tier_files("after hwrt_shutdown with live tensors");
    for (int i = 0; i < NT; i++) mt_free(&M.t[i]);
    M.faulted = 0;
    M.tampered = 0;            /* the tier and its files went with the session */
    M.offload = M.capped = 0;
    hwrt_set_device("sim", 0);
    sessions_objects();
    if (b & 16) offload_config(b >> 5, b);
    else {
        hwrt_offload_config off;
        memset(&off, 0, sizeof off);
        CHK(hwrt_set_offload_config(&off), 0);
    }
    /* a new session: nothing of the old one may resolve */
    size_t nb;
    if (M.stale && hwrt_tensor_nbytes(M.stale, &nb) == HWRT_SUCCESS)
        finding("a tensor handle from before hwrt_shutdown still resolves%s%s", "", "");
}

/* A stale export imported in the new session must not alias a live tensor. */
static void stale_import_step(void)
{
    if (!M.stale_dl || !M.shutdowns) return;
    DLManagedTensorVersioned *m = M.stale_dl;
    M.stale_dl = NULL;
    hwrt_tensor x = NULL;
    if (hwrt_tensor_from_dlpack(&x, m) != HWRT_SUCCESS) { m->deleter(m); return; }
    if (hwrt_op_fill(x, 77.0, NULL) == HWRT_SUCCESS) {
        hwrt_device_synchronize();
        for (int i = 0; i < NT; i++) read_check(i, "after a write through a stale DLPack import");
    }
    hwrt_tensor_release(x);
}


/* A weighted program's next step: the steps of a training step that does not fit
 * (pressure, queued compute, bringing back what was evicted, a fault in the transfer that
 * causes, a changed tier file) drawn more often than the rest. Returns the opcode byte
 * (op plus a random multiple of nsteps), op in *op. */
static const uint8_t gen_weight[20] = {
    2, 1,       /* 0-1 a tensor */          3, 2, 1,    /* 2-4 an op */
    2, 1,       /* 5-6 read back */         1,          /* 7 copy from host */
    2, 2,       /* 8-9 offload */           1,          /* 10 synchronize */
    2,          /* 11 reset, host fn */     1,          /* 12 release */
    1, 1, 1,    /* 13-15 shutdown, stale import, streams */
    5,          /* 16 a fault (in an overlap half of the time) */
    2,          /* 17 tamper */             4,          /* 18 pressure */
    5};         /* 19 overlap */
static uint8_t gen_opcode(unsigned *op)
{
    unsigned sum = 0, r, k;
    for (k = 0; k < nsteps; k++) sum += gen_weight[k];
    r = gen_next() % sum;
    for (k = 0; r >= gen_weight[k]; k++) r -= gen_weight[k];
    *op = k;
    return (uint8_t)(k + nsteps * (gen_next() % ((256 - k + nsteps - 1) / nsteps)));
}

#ifdef HWRT_LIBFUZZER
/* The libFuzzer build's mutator: one in HWRT_FUZZ_MUTATOR (default 2) of the mutations
 * writes a fresh weighted program (as --random's), the rest are libFuzzer's own. Here the bytes are written
 * ahead of the run, so each step's argument bytes are counted from the step table (the
 * overlap's pressure bytes assumed when no pressure step came before): a miscount only
 * shifts the steps after it. HWRT_FUZZ_MUTATOR=libfuzzer leaves libFuzzer's alone. */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    static int every = -1;     /* 0: libFuzzer's alone */
    if (every < 0) {
        const char *m = getenv("HWRT_FUZZ_MUTATOR");
        every = !m ? 2 : !strcmp(m, "libfuzzer") ? 0 : atoi(m) > 0 ? atoi(m) : 2;
    }
    if (!every || enc != 3 || seed % (unsigned)every || max_size < 16)
        return LLVMFuzzerMutate(data, size, max_size);
    static const uint8_t nargs[20] = {3, 3, 5, 5, 5, 1, 1, 1, 2, 2, 0, 1, 1, 1, 0, 1, 2, 2, 3, 3};
    G.x = seed * 0x9E3779B97F4A7C15ull + 1;
    size_t n = 0, cap = max_size < sizeof G.buf ? max_size : sizeof G.buf;
    for (int k = 0; k < 3; k++) data[n++] = (uint8_t)(gen_next() >> 8);
    if (data[0] % 4 == 2) data[0] ^= 1;          /* not the threads mode */
    int steps = 6 + (int)(gen_next() % 35), pressure = 0;
    while (steps-- > 0 && n < cap) {
        unsigned op;
        data[n++] = gen_opcode(&op);
        unsigned na = nargs[op];
        if (op == 16 || op == 19) {
            size_t at = n;
            for (unsigned k = 0; k < na && n < cap; k++) data[n++] = (uint8_t)(gen_next() >> 8);
            if (op == 19 || (n > at + 1 && data[at + 1] / 32 >= 4))   /* an overlap */
                na = (op == 16 ? 3 : 0) + (pressure ? 0 : 3);
            else na = 0;
            pressure = 1;
        } else if (op == 18) pressure = 1;
        for (unsigned k = 0; k < na && n < cap; k++) data[n++] = (uint8_t)(gen_next() >> 8);
    }
    (void)size;
    return n;
}
#endif

static void step(input *in)
{
    unsigned op;
    if (G.on) {
        uint8_t b = gen_opcode(&op);
        if (G.len == sizeof G.buf) { in->n = 0; return; }
        G.buf[G.len++] = b;
    } else {
        op = u8(in) % nsteps;
    }
    if (trace) fprintf(stderr, "step %u\n", op);
    switch (op) {
    case 0: case 1: {
        unsigned ib = u8(in), db = u8(in), sb = u8(in);
        int si = (int)(sb % NSHAPES);
        int i = (int)(ib % NT);
        if (mt_new(i, dtypes[db % 9], shapes[si].ndim, shapes[si].d, !(ib & 0x80), sb * 131u + db) &&
            enc > 1 && M.offload && (ib & 0x40) &&      /* offloadable from the start */
            CHK(hwrt_tensor_set_offloadable(M.t[i].h, 1), A_OOM) == HWRT_SUCCESS)
            M.t[i].off = 1;
        break;
    }
    case 2: case 3: case 4: op_step(in); break;
    case 5: case 6: read_check((int)(u8(in) % NT), "read back"); break;
    case 7: {
        mt *t = &M.t[u8(in) % NT];
        if (!t->h || !t->def) break;
        /* copy_from_host: ordered after every queued use of t */
        if (CHK(hwrt_tensor_copy_from_host(t->h, t->val, t->nb), A_OOM) == HWRT_SUCCESS) {
            t->known = !M.faulted && !t->approx;
            t->pend = 0;       /* blocking and successful: it landed */
            t->tampered = 0;
            t->kept = 0;
            t->smask |= 1;
        }
        break;
    }
    case 8: case 9: offload_step(in); break;
    case 10: sync_step(); break;
    case 11: {
        unsigned b = u8(in);
        if (b & 1) { reset_step(enc > 1 && (b & 2)); break; }
        int si = (int)(b / 4 % NS);
        if (b & 2) CHK(hwrt_stream_synchronize(M.s[si]), 0);
        else CHK(hwrt_launch_host_func(M.s[si], hostfn_bump, NULL), 0);
        break;
    }
    case 12: {
        int i = (int)(u8(in) % NT);
        if (M.t[i].h) CHK(hwrt_tensor_release(M.t[i].h), 0);
        mt_free(&M.t[i]);
        break;
    }
    case 13: if (!no_shutdown) shutdown_step(in); else u8(in); break;
    case 14: if (!no_dlpack) stale_import_step(); break;
    case 16: fault_step(in); break;
    case 18: pressure_step(in); break;
    case 19: overlap_step(in, NULL); break;
    case 17: {
        /* tamper with the tier file of a live offloaded tensor: t is evicted first */
        unsigned b = u8(in), ib = u8(in);
        mt *t = &M.t[live_slot((int)(ib % NT))];
        if (t->h && t->off) CHK(hwrt_offload_evict(t->h), A_OOM | A_BUSY);
        tamper(b % 4, b / 4 * 4 + 2);
        break;
    }
    default: {
        /* streams: a new one in a slot (the old one destroyed with work queued) */
        int j = 1 + (int)(u8(in) % (NS - 1));
        if (M.s[j]) CHK(hwrt_stream_destroy(M.s[j]), 0);
        M.s[j] = NULL;
        if (CHK(hwrt_stream_create(&M.s[j], 0), 0) != HWRT_SUCCESS) M.s[j] = NULL;
        for (int i = 0; i < NT; i++)
            if (M.t[i].smask & (1u << j)) M.t[i].smask = (M.t[i].smask & ~(1u << j)) | 1;
        break;
    }
    }
}

/* A short offload session after the input's last shutdown: anything the input left behind
 * (residency records, planner state) is used here, so the input that leaves it fails,
 * not a later one (a finding must replay from its own input). */
static void probe_session(void)
{
    memset(&M, 0, sizeof M);
    unsetenv("HWRT_SIM_FAULTS");
    hwrt_set_device("sim", 0);
    sessions_objects();
    offload_config(0, 0);
    static const int64_t sh[2] = {16, 16};
    for (int i = 0; i < 3; i++)
        if (mt_new(i, HWRT_FLOAT32, 2, sh, 1, (unsigned)i))
            CHK(hwrt_tensor_set_offloadable(M.t[i].h, 1), A_OOM);
    for (int i = 0; i < 3; i++)
        if (M.t[i].h) CHK(hwrt_offload_evict(M.t[i].h), A_OOM | A_BUSY);
    if (M.t[0].h && M.t[1].h && M.t[2].h &&
        CHK(hwrt_op_add(M.t[2].h, M.t[0].h, M.t[1].h, NULL), A_OOM) == HWRT_SUCCESS)
        model_op(K_ADD, &M.t[2], &M.t[0], &M.t[1], 0, 0);
    for (int i = 0; i < 3; i++) read_check(i, "in a session after the input's last shutdown");
    for (int i = 0; i < NT; i++) {
        if (M.t[i].h) CHK(hwrt_tensor_release(M.t[i].h), 0);
        mt_free(&M.t[i]);
    }
    for (int j = 1; j < NS; j++) if (M.s[j]) hwrt_stream_destroy(M.s[j]);
    for (int j = 0; j < NS; j++) if (M.ev[j]) hwrt_event_destroy(M.ev[j]);
    memset(M.s, 0, sizeof M.s);
    memset(M.ev, 0, sizeof M.ev);
    if (hwrt_shutdown() != HWRT_SUCCESS)
        finding("hwrt_shutdown after a clean session: %s%s", hwrt_last_error(), "");
    check_no_tier_files("after the probe session");
}

/* ---- end of an input: every tier empty once all is released, nothing left behind ---- */
static void teardown(void)
{
    /* under a fault plan: synchronize (a pending fault is reported) and reset first, so
     * that the reads fetch what was offloaded after the recovery */
    if (M.faulted || M.faults) reset_step(1);
    wrong_collect = 1;
    wrong_all[0] = 0;
    for (int i = 0; i < NT; i++) read_check(i, "at the end");
    wrong_flush();
    /* a fault the reads met: recover as documented and read everything again */
    if (M.faulted) {
        reset_step(0);
        wrong_collect = 1;
        for (int i = 0; i < NT; i++) read_check(i, "at the end, after a reset");
        wrong_flush();
    }
    for (int i = 0; i < NT; i++) {
        if (M.t[i].h) CHK(hwrt_tensor_release(M.t[i].h), 0);
        mt_free(&M.t[i]);
    }
    if (M.offload) {
        hwrt_device_synchronize();
        hwrt_offload_stats os;
        if (CHK(hwrt_offload_stats_get(&os), 0) == HWRT_SUCCESS && !no_leaks &&
            (os.host_bytes || os.disk_bytes || os.device_bytes)) {
            char a[96];
            snprintf(a, sizeof a, "device %zu, host %zu, disk %zu bytes", os.device_bytes,
                     os.host_bytes, os.disk_bytes);
            finding("every offloadable tensor was released but the tiers still hold %s%s", a, "");
        }
    }
    if (M.stale_dl) { M.stale_dl->deleter(M.stale_dl); M.stale_dl = NULL; }
    for (int j = 1; j < NS; j++) if (M.s[j]) hwrt_stream_destroy(M.s[j]);
    for (int j = 0; j < NS; j++) if (M.ev[j]) hwrt_event_destroy(M.ev[j]);
    memset(M.s, 0, sizeof M.s);
    memset(M.ev, 0, sizeof M.ev);
    hwrt_status s = hwrt_shutdown();
    if (s != HWRT_SUCCESS && s != HWRT_ERROR_DEVICE_FAULT)
        finding("hwrt_shutdown: %s%s", hwrt_status_name(s), "");
    check_no_tier_files("after hwrt_shutdown");
    /* nothing of this session survives into the next (residency records, tier bytes):
     * checked here, so the input that leaves them is the one that fails */
    hwrt_offload_stats os;
    if (hwrt_offload_stats_get(&os) == HWRT_SUCCESS && !no_leaks &&
        (os.host_bytes || os.disk_bytes || os.device_bytes)) {
        char a[96];
        snprintf(a, sizeof a, "device %zu, host %zu, disk %zu bytes", os.device_bytes,
                 os.host_bytes, os.disk_bytes);
        finding("after hwrt_shutdown the offload tiers still hold %s%s", a, "");
    }
    hwrt_shutdown();
    probe_session();
    /* no shared-memory object of this process but its registry */
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    char mine[80];
    snprintf(mine, sizeof mine, "%s", reg_name + 1);
    while (d && (e = readdir(d)))
        if (!strncmp(e->d_name, mine, strlen(mine)) && !strstr(e->d_name, "-v"))
            finding("a shared-memory object is left behind: /dev/shm/%s%s", e->d_name, "");
    if (d) closedir(d);
}

/* ---- threads mode ---- */
typedef struct { input in; int id; } thr_arg;
static _Atomic(hwrt_tensor) T_t[NT];
static _Atomic(hwrt_stream) T_s[NS];
static _Atomic(hwrt_event) T_e[NS];

#define TCHK(call) do { hwrt_status s_ = (call); \
    if ((unsigned)s_ >= HWRT_ERROR_INTERNAL) finding("threads: %s -> %s", #call, hwrt_status_name(s_)); \
    if (s_ && s_ != HWRT_ERROR_NOT_READY && !hwrt_last_error()[0]) finding("threads: %s: %s without a sentence", #call, hwrt_status_name(s_)); \
} while (0)

static void *thr_main(void *p)
{
    thr_arg *a = p;
    input *in = &a->in;
    static const int64_t sh[2] = {64, 64};
    float host[64 * 64];
    while (in->n) {
        unsigned op = u8(in) % 12, x = u8(in);
        int i = (int)(x % NT), j = (int)(x / 8 % NS);
        hwrt_tensor t = atomic_load(&T_t[i]), t2 = atomic_load(&T_t[(i + 1) % NT]);
        hwrt_stream s = atomic_load(&T_s[j]);
        hwrt_event e = atomic_load(&T_e[j]);
        switch (op) {
        case 0: { hwrt_tensor n = NULL;
            if (hwrt_tensor_empty(&n, HWRT_FLOAT32, 2, sh) == HWRT_SUCCESS) {
                hwrt_tensor old = atomic_exchange(&T_t[i], n);
                if (old) TCHK(hwrt_tensor_release(old));
            } break; }
        case 1: TCHK(hwrt_op_fill(t, (double)x, s)); break;
        case 2: TCHK(hwrt_op_add(t, t, t2, s)); break;
        case 3: TCHK(hwrt_op_matmul(t2, t, t, s)); break;
        case 4: TCHK(hwrt_tensor_copy_to_host(t, host, sizeof host)); break;
        case 5: {     /* destroy while others may use it */
            hwrt_tensor old = atomic_exchange(&T_t[i], NULL);
            if (old) TCHK(hwrt_tensor_release(old));
            break; }
        case 6: TCHK(hwrt_event_record(e, s)); TCHK(hwrt_stream_wait_event(atomic_load(&T_s[(j + 1) % NS]), e)); break;
        case 7: {
            if (x & 1) { hwrt_stream old = atomic_exchange(&T_s[j], NULL), n = NULL;
                if (old) TCHK(hwrt_stream_destroy(old));
                if (hwrt_stream_create(&n, 0) == HWRT_SUCCESS) {
                    old = atomic_exchange(&T_s[j], n);
                    if (old) TCHK(hwrt_stream_destroy(old));
                }
            } else { hwrt_event old = atomic_exchange(&T_e[j], NULL), n = NULL;
                if (old) TCHK(hwrt_event_destroy(old));
                if (hwrt_event_create(&n, 0) == HWRT_SUCCESS) {
                    old = atomic_exchange(&T_e[j], n);
                    if (old) TCHK(hwrt_event_destroy(old));
                }
            }
            break; }
        case 8: TCHK(hwrt_stream_synchronize(s)); break;
        case 9: TCHK(hwrt_event_synchronize(e)); TCHK(hwrt_event_query(e)); break;
        case 10:
            if (x & 64) TCHK(hwrt_tensor_set_offloadable(t, 1));
            else if (hwrt_tensor_retain(t) == HWRT_SUCCESS) TCHK(hwrt_tensor_release(t));
            break;
        default: TCHK(hwrt_launch_host_func(s, hostfn_bump, NULL)); TCHK(hwrt_stream_query(s)); break;
        }
    }
    return NULL;
}

static void threads_mode(input *in)
{
    int n = 2 + (int)(u8(in) % 3);
    static const int64_t sh[2] = {64, 64};
    for (int i = 0; i < NT; i++) {
        hwrt_tensor t = NULL;
        hwrt_tensor_empty(&t, HWRT_FLOAT32, 2, sh);
        atomic_store(&T_t[i], t);
    }
    for (int j = 0; j < NS; j++) {
        hwrt_stream s = NULL;
        hwrt_event e = NULL;
        if (j) hwrt_stream_create(&s, 0);
        hwrt_event_create(&e, 0);
        atomic_store(&T_s[j], s);
        atomic_store(&T_e[j], e);
    }
    pthread_t th[4];
    thr_arg args[4];
    size_t per = in->n / (size_t)n;
    for (int k = 0; k < n; k++) {
        args[k].in.p = in->p + per * (size_t)k;
        args[k].in.n = k == n - 1 ? in->n - per * (size_t)k : per;
        args[k].id = k;
        if (pthread_create(&th[k], NULL, thr_main, &args[k]) != 0) { n = k; break; }
    }
    for (int k = 0; k < n; k++) pthread_join(th[k], NULL);
    hwrt_device_synchronize();
    for (int i = 0; i < NT; i++) { hwrt_tensor t = atomic_exchange(&T_t[i], NULL); if (t) hwrt_tensor_release(t); }
    for (int j = 0; j < NS; j++) {
        hwrt_stream s = atomic_exchange(&T_s[j], NULL);
        hwrt_event e = atomic_exchange(&T_e[j], NULL);
        if (s) hwrt_stream_destroy(s);
        if (e) hwrt_event_destroy(e);
    }
    hwrt_status s = hwrt_shutdown();
    if (s != HWRT_SUCCESS) finding("threads: hwrt_shutdown: %s%s", hwrt_status_name(s), "");
}

/* ---- driver ---- */
static int rm_one(const char *p, const struct stat *sb, int type, struct FTW *f)
{
    (void)sb; (void)type; (void)f;
    remove(p);
    return 0;
}
static void at_exit(void)
{
    nftw(offload_dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
    char name[96];
    for (int v = 1; v <= 9; v++) {     /* the registry's layout version is in its name */
        snprintf(name, sizeof name, "%s-v%d", reg_name, v);
        shm_unlink(name);
    }
}

static const char *const fault_plans[] = {"kernel:nth=%u", "copy:nth=%u", "copy:nth=%u,kernel:nth=%u",
                                          "alloc:nth=%u", "copy:p=0.05,seed=%u"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int init;
    if (!init) {
        init = 1;
        trace = getenv("HWRT_FUZZ_TRACE") != NULL;
        setenv("HWRT_SIM_DEVICES", "1", 1);
        setenv("HWRT_SIM_MEMORY", "64MB", 1);
        setenv("HWRT_SIM_OVERHEAD", "4MB", 1);
        snprintf(reg_name, sizeof reg_name, "/hwrt-fuzz-model-%d", (int)getpid());
        setenv("HWRT_SIM_REGISTRY", reg_name + 1, 1);
        const char *ev = getenv("HWRT_FUZZ_ENCODING");
        if (ev && !strcmp(ev, "1")) { enc = 1; nsteps = 16; }
        if (ev && !strcmp(ev, "2")) { enc = 2; nsteps = 18; }
        const char *no = getenv("HWRT_FUZZ_NO");
        no_threads = no && strstr(no, "threads");
        no_shutdown = no && strstr(no, "shutdown");
        no_dlpack = no && strstr(no, "dlpack");
        no_leaks = no && strstr(no, "leaks");
        const char *sm = getenv("HWRT_FUZZ_SCHED");
        sched = !sm || !strcmp(sm, "det") ? 0 : !strcmp(sm, "jitter") ? 2 : 1;
        unsetenv("HWRT_SIM_DETERMINISTIC");
        unsetenv("HWRT_SIM_JITTER");
        snprintf(offload_dir, sizeof offload_dir, "/tmp/hwrt-fuzz-model-XXXXXX");
        if (!mkdtemp(offload_dir)) { perror("mkdtemp"); abort(); }
        atexit(at_exit);
        scratch = malloc((size_t)MAXEL * 8 + 64);
        scratch2 = malloc((size_t)MAXEL * 8 + 64);
        hwrt_set_config("log_level", trace ? "3" : "0");
    }
    input in = {data, size};
    cur_data = data;
    cur_size = size;
    if (G.on) in.n = 1;       /* the bytes come from the generator (u8) */
    unsigned b0 = u8(&in), b1 = u8(&in), b2 = u8(&in);
    if (G.on && b0 % 4 == 2) G.buf[0] = (uint8_t)(b0 ^= 1);   /* threads mode: not lazily */
    /* the schedule is part of the input: the third byte seeds the deterministic
     * simulation (HWRT_FUZZ_SCHED=threaded or jitter runs the threaded engines instead) */
    if (sched == 0) {
        char seed[16];
        snprintf(seed, sizeof seed, "%u", 1 + b2);
        setenv("HWRT_SIM_DETERMINISTIC", seed, 1);
    } else if (sched == 2) {
        char seed[16];
        snprintf(seed, sizeof seed, "%u", 1 + b2);
        setenv("HWRT_SIM_JITTER", seed, 1);
    }
    memset(&M, 0, sizeof M);
    char plan[96] = "";
    if (b0 % 4 == 3) {
        const char *f = fault_plans[b0 / 4 % 5];
        snprintf(plan, sizeof plan, f, 1 + b1 % 24, 1 + b1 / 24 % 8);
        M.faults = b0 / 4 % 5 != 3;
        M.alloc_faults = !M.faults;
        setenv("HWRT_SIM_FAULTS", plan, 1);
    } else {
        unsetenv("HWRT_SIM_FAULTS");
    }
    hwrt_set_device("sim", 0);
    hwrt_set_config("log_level", trace ? "3" : "0");
    if (b0 & 0x80) offload_config(b0 >> 4, b1);
    else {                    /* the configuration outlives sessions: start from "off" */
        hwrt_offload_config off;
        memset(&off, 0, sizeof off);
        CHK(hwrt_set_offload_config(&off), 0);
    }
    if (b0 % 4 == 2 && !no_threads) {
        threads_mode(&in);
        probe_session();
        return 0;
    }
    sessions_objects();
    int steps = 0;
    while (in.n && steps++ < 120) {
        if (G.on && G.steps_left-- <= 0) break;    /* a replay ends where the bytes do */
        step(&in);
    }
    teardown();
    return 0;
}

#ifndef HWRT_LIBFUZZER
static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); return 1; }
    static uint8_t buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
    return 0;
}

int main(int argc, char **argv)
{
    int files = 0, bad = 0;
    if (argc >= 3 && !strcmp(argv[1], "--random")) {
        /* random programs for a bounded time: fuzzing where libFuzzer is not linked */
        /* --random SECONDS [SEED [FIRST]]: inputs FIRST, FIRST+1, ... of SEED's sequence
         * (time_to_find.sh goes on after a finding from the next one). Every other input
         * is uniform bytes, the others weighted programs (G, step()); a finding writes
         * the input to model-finding.bin and names its number. */
        double secs = atof(argv[2]);
        uint64_t seed = argc >= 4 ? strtoull(argv[3], NULL, 0) : 1;
        long first = argc >= 5 ? atol(argv[4]) : 0;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        static uint8_t buf[600];
        dump_input = 1;
        for (cur_index = 0;; cur_index++) {
            size_t n = 64 + (size_t)(seed % 500);
            for (size_t i = 0; i < n; i++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                buf[i] = (uint8_t)(seed >> 56);
            }
            if (cur_index < first) continue;
            if (cur_index % 2) {          /* weighted: 6-40 steps, seeded by these bytes */
                G.on = 1;
                G.len = 0;
                memcpy(&G.x, buf, sizeof G.x);
                G.steps_left = 6 + (int)(buf[8] % 35);
                LLVMFuzzerTestOneInput(NULL, 0);
                G.on = 0;
            } else {
                LLVMFuzzerTestOneInput(buf, n);
            }
            files++;
            clock_gettime(CLOCK_MONOTONIC, &t1);
            if ((double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9 >= secs) break;
        }
        printf("hwrt model fuzz: %d random inputs ran without a finding\n", files);
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) { perror(argv[i]); return 1; }
        if (!S_ISDIR(st.st_mode)) { bad |= replay_file(argv[i]); files++; continue; }
        DIR *d = opendir(argv[i]);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            size_t nl = strlen(e->d_name);
            if (e->d_name[0] == '.' || (nl > 3 && !strcmp(e->d_name + nl - 3, ".md"))) continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            struct stat fst;
            if (stat(path, &fst) == 0 && S_ISDIR(fst.st_mode)) continue;
            bad |= replay_file(path);
            files++;
        }
        if (d) closedir(d);
    }
    printf("hwrt model fuzz replay: %d inputs ran without a finding\n", files);
    return bad || files == 0;
}
#endif
