/* The data-path check of a device collective engine (NCCL on cuda, HCCL on ascend), for
 * scripts/device-check.sh; shared by tests/mpi/nccl_allreduce.c and hccl_allreduce.c,
 * which give the backend, the engine and the cases:
 *   mpirun -np 2 <prog>      (two devices or more: one rank per device)
 *   <prog>                   (one device: the engine with one rank)
 * HWRT_COLL_ENGINE=<engine> is forced, so a fallback to MPI fails instead of passing. Each
 * rank binds its device (local rank), produces its data by device work on a stream of
 * its own, runs allreduce (the given dtype x op cases), broadcast, allgather and
 * reduce_scatter on that stream, then more device work on it, and checks every element
 * on the host; the dtypes the engine refuses must fail with NOT_SUPPORTED and leave the
 * tensor as it was. 1 Mi + 3 elements (not a multiple of anything). Exit 0 on success, 1
 * on any failure, 77 (skip, with the reason) without a device of the backend or with more
 * ranks than devices. `--backend sim` runs the same checks on the simulated NPU through
 * the engine HWRT_COLL_ENGINE picks (MPI), refusals left out: the test of the program
 * itself. */
#ifndef HWRT_TEST_DEV_COLL_CHECK_H
#define HWRT_TEST_DEV_COLL_CHECK_H

#include <hwrt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N ((int64_t)(1 << 20) + 3)

static int rank, size, failures;
static const char *dcc_prog;

#define CHECK(call)                                                                          \
    do {                                                                                     \
        hwrt_status st_ = (call);                                                            \
        if (st_ != HWRT_SUCCESS) {                                                           \
            fprintf(stderr, "%s rank %d: %s -> %s: %s\n", dcc_prog, rank, #call,           \
                    hwrt_status_name(st_), hwrt_last_error());                               \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

/* rank r's value at element i: small integers, exact in every dtype used */
static double val(int r, int64_t i) { return (double)((i * 7 + r * 13) % 61 - 30); }

static void put(hwrt_dtype dt, void *buf, int64_t i, double v)
{
    switch (dt) {
    case HWRT_FLOAT32: ((float *)buf)[i] = (float)v; break;
    case HWRT_FLOAT64: ((double *)buf)[i] = v; break;
    case HWRT_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case HWRT_INT64: ((int64_t *)buf)[i] = (int64_t)v; break;
    case HWRT_INT8: ((int8_t *)buf)[i] = (int8_t)v; break;
    default: ((uint8_t *)buf)[i] = (uint8_t)(v + 30); break;
    }
}

static double get(hwrt_dtype dt, const void *buf, int64_t i)
{
    switch (dt) {
    case HWRT_FLOAT32: return ((const float *)buf)[i];
    case HWRT_FLOAT64: return ((const double *)buf)[i];
    case HWRT_INT32: return ((const int32_t *)buf)[i];
    case HWRT_INT64: return (double)((const int64_t *)buf)[i];
    case HWRT_INT8: return ((const int8_t *)buf)[i];
    default: return ((const uint8_t *)buf)[i] - 30.0;
    }
}

/* A tensor of n elements of rank r's values from offset base, made by a device op on s
 * (a scale by 1 of an upload), so that a collective not ordered after s reads garbage. */
static hwrt_tensor produce(hwrt_dtype dt, int64_t n, int64_t base, hwrt_stream s)
{
    void *h = malloc((size_t)n * hwrt_dtype_size(dt));
    for (int64_t i = 0; i < n; i++) put(dt, h, i, val(rank, base + i));
    hwrt_tensor src, t;
    CHECK(hwrt_tensor_from_host(&src, dt, 1, &n, h));
    CHECK(hwrt_tensor_empty(&t, dt, 1, &n));
    CHECK(hwrt_op_fill(t, 99, s));
    CHECK(hwrt_op_scale(t, src, 1.0, s));
    CHECK(hwrt_tensor_release(src));
    free(h);
    return t;
}

/* t's elements on the host, through one more device op on s after the collective. */
static void *fetch(hwrt_tensor t, hwrt_dtype dt, int64_t n, hwrt_stream s)
{
    hwrt_tensor u;
    CHECK(hwrt_tensor_empty(&u, dt, 1, &n));
    CHECK(hwrt_op_scale(u, t, 1.0, s));
    void *h = malloc((size_t)n * hwrt_dtype_size(dt));
    CHECK(hwrt_stream_synchronize(s));
    CHECK(hwrt_tensor_copy_to_host(u, h, (size_t)n * hwrt_dtype_size(dt)));
    CHECK(hwrt_tensor_release(u));
    return h;
}

static void expect(const char *what, hwrt_dtype dt, const void *h, int64_t n,
                   double (*want)(int64_t i, void *ctx), void *ctx)
{
    for (int64_t i = 0; i < n; i++) {
        double g = get(dt, h, i), w = want(i, ctx);
        if (g != w) {
            fprintf(stderr, "%s rank %d: %s %s: element %lld is %g, want %g\n", dcc_prog,
                    rank, what, hwrt_dtype_name(dt), (long long)i, g, w);
            failures++;
            return;
        }
    }
}

typedef struct { hwrt_reduce_op op; int64_t base; } red_ctx;

static double reduced(int64_t i, void *c)
{
    red_ctx *r = c;
    double acc = val(0, r->base + i);
    for (int q = 1; q < size; q++) {
        double v = val(q, r->base + i);
        switch (r->op) {
        case HWRT_REDUCE_MAX: acc = v > acc ? v : acc; break;
        case HWRT_REDUCE_MIN: acc = v < acc ? v : acc; break;
        case HWRT_REDUCE_PROD: acc *= v; break;
        default: acc += v; break;
        }
    }
    return r->op == HWRT_REDUCE_AVG ? acc / size : acc;
}

static double from_root(int64_t i, void *c) { return val(*(int *)c, i); }
static double gathered(int64_t i, void *c) { return val((int)(i / *(int64_t *)c), i % *(int64_t *)c); }

typedef struct {
    hwrt_dtype dt;
    hwrt_reduce_op op;
} dcc_case;

typedef struct {
    const char *prog;            /* for messages: "nccl_allreduce" */
    const char *backend;         /* "cuda" */
    const char *engine;          /* HWRT_COLL_ENGINE forced on that backend: "nccl" */
    const dcc_case *cases;
    size_t ncases;
    const dcc_case *refused;     /* allreduce must fail with NOT_SUPPORTED, data intact */
    size_t nrefused;
} dcc_cfg;

/* allreduce of a refused dtype/op: NOT_SUPPORTED on every rank, the tensor untouched */
static void refusal(const dcc_case *c, hwrt_stream s)
{
    int64_t n = 1000;
    hwrt_tensor t = produce(c->dt, n, 0, s);
    hwrt_status st = hwrt_allreduce(t, c->op, s);
    if (st != HWRT_ERROR_NOT_SUPPORTED) {
        fprintf(stderr, "%s rank %d: allreduce of %s (op %d) gave %s, want NOT_SUPPORTED (%s)\n",
                dcc_prog, rank, hwrt_dtype_name(c->dt), (int)c->op, hwrt_status_name(st),
                hwrt_last_error());
        failures++;
    }
    void *h = fetch(t, c->dt, n, s);
    int me = rank;                  /* this rank's own values, untouched */
    expect("refused allreduce left", c->dt, h, n, from_root, &me);
    free(h);
    CHECK(hwrt_tensor_release(t));
}

static int dcc_main(int argc, char **argv, const dcc_cfg *cfg)
{
    dcc_prog = cfg->prog;
    /* --backend sim: the same checks through whatever engine HWRT_COLL_ENGINE picks (MPI),
     * which tests this program's own expectations on machines without the device */
    const char *backend = argc == 3 && !strcmp(argv[1], "--backend") ? argv[2] : cfg->backend;
    int count = 0;
    hwrt_backend_desc desc;
    memset(&desc, 0, sizeof desc);
    if (hwrt_backend_info(backend, &desc) != HWRT_SUCCESS || !desc.available ||
        desc.device_count == 0) {
        printf("%s: SKIP: no %s device (%s)\n", cfg->prog, backend,
               desc.reason[0] ? desc.reason : hwrt_last_error());
        return 77;
    }
    count = desc.device_count;
    int dev = !strcmp(backend, cfg->backend);
    if (dev && !getenv("HWRT_COLL_ENGINE")) setenv("HWRT_COLL_ENGINE", cfg->engine, 1);
    CHECK(hwrt_dist_init());
    rank = hwrt_dist_rank();
    size = hwrt_dist_size();
    if (size > count) {
        printf("%s: SKIP: %d ranks but %d %s device(s): %s needs a device per rank (run it "
               "with -np %d, or without mpirun)\n", cfg->prog, size, count, backend,
               cfg->engine, count);
        hwrt_dist_finalize();
        return 77;
    }
    CHECK(hwrt_dist_bind_device(backend));
    hwrt_stream s;
    CHECK(hwrt_stream_create(&s, 0));

    for (size_t c = 0; c < cfg->ncases; c++) {
        hwrt_dtype dt = cfg->cases[c].dt;
        hwrt_tensor t = produce(dt, N, 0, s);
        CHECK(hwrt_allreduce(t, cfg->cases[c].op, s));
        void *h = fetch(t, dt, N, s);
        red_ctx rc = {cfg->cases[c].op, 0};
        expect(cfg->cases[c].op == HWRT_REDUCE_AVG ? "allreduce AVG" :
               cfg->cases[c].op == HWRT_REDUCE_PROD ? "allreduce PROD" : "allreduce", dt, h, N,
               reduced, &rc);
        free(h);
        CHECK(hwrt_tensor_release(t));
    }
    for (size_t c = 0; dev && c < cfg->nrefused; c++) refusal(&cfg->refused[c], s);
    /* broadcast from the last rank */
    int root = size - 1;
    hwrt_tensor b = produce(HWRT_FLOAT32, N, 0, s);
    CHECK(hwrt_broadcast(b, root, s));
    void *h = fetch(b, HWRT_FLOAT32, N, s);
    expect("broadcast", HWRT_FLOAT32, h, N, from_root, &root);
    free(h);
    CHECK(hwrt_tensor_release(b));
    /* allgather: rank q's N elements at q * N */
    int64_t big = N * size, n = N;
    hwrt_tensor in = produce(HWRT_INT32, N, 0, s), out;
    CHECK(hwrt_tensor_empty(&out, HWRT_INT32, 1, &big));
    CHECK(hwrt_allgather(out, in, s));
    h = fetch(out, HWRT_INT32, big, s);
    expect("allgather", HWRT_INT32, h, big, gathered, &n);
    free(h);
    CHECK(hwrt_tensor_release(in));
    CHECK(hwrt_tensor_release(out));
    /* reduce_scatter: rank r gets the sum of elements [r * N, (r + 1) * N) */
    hwrt_tensor rin = produce(HWRT_FLOAT32, big, 0, s), rout;
    CHECK(hwrt_tensor_empty(&rout, HWRT_FLOAT32, 1, &n));
    CHECK(hwrt_reduce_scatter(rout, rin, HWRT_REDUCE_SUM, s));
    h = fetch(rout, HWRT_FLOAT32, N, s);
    red_ctx rs = {HWRT_REDUCE_SUM, (int64_t)rank * N};
    expect("reduce_scatter", HWRT_FLOAT32, h, N, reduced, &rs);
    free(h);
    CHECK(hwrt_tensor_release(rin));
    CHECK(hwrt_tensor_release(rout));

    CHECK(hwrt_stream_destroy(s));
    CHECK(hwrt_barrier());
    CHECK(hwrt_dist_finalize());
    int d = -1;
    hwrt_get_device(&d);
    const char *eng = getenv("HWRT_COLL_ENGINE");
    printf("%s: rank %d of %d on %s device %d: %s (allreduce x%zu, %zu refusal(s), broadcast, "
           "allgather, reduce_scatter; %lld elements; HWRT_COLL_ENGINE=%s)\n", cfg->prog, rank,
           size, backend, d, failures ? "FAILED" : "ok", cfg->ncases, dev ? cfg->nrefused : 0,
           (long long)N, eng ? eng : "auto");
    return failures ? 1 : 0;
}

#endif
