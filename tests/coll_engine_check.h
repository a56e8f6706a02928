/* What the test programs of the device collective engines on the test doubles share
 * (tests/ascend/ascend_hccl.c: HCCL on the doubles of libascendcl and libhccl;
 * tests/cuda/cuda_nccl.c: NCCL on the doubles of libcuda and libnccl): the process's
 * rank, size and stream S, the hooks of the collective library's double (<lib>_double_*),
 * the ranks' values and the reductions expected of them, the checks of a tensor on the
 * host, and the checks both programs make (an allreduce or reduce_scatter that reaches the
 * library once, a broadcast of 7 bytes, every collective failing at once once the engine
 * has given up, a setup that fails on one rank, a tensor on another device). The engine's
 * names and what differs come in `coll` (coll_start fills it). Include after harness.h. */
#ifndef HWRT_TEST_COLL_ENGINE_CHECK_H
#define HWRT_TEST_COLL_ENGINE_CHECK_H

#include "dtype_ref.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define N 1003

static int rank, size;
static hwrt_stream S;
static void (*fail_root)(int), (*fail_init)(int), (*fail_next)(int), (*fail_destroy)(int);
static void (*async_err)(int);
static int (*live)(void), (*calls)(void);

static struct {
    const char *engine;         /* "HCCL" */
    const char *init;           /* the failing init entry point, "HcclCommInitRootInfo" */
    const char *result;         /* the library's result type, "HcclResult" */
    const char *given_up;       /* what follows "<engine> failed earlier (<first>" */
    int float32_by_op;          /* float32 tensors are made by a device op on S */
    void (*init_failed)(int);   /* more checks once the init failed on rank bad (or NULL) */
} coll;

/* rank r's element i: small integers, non-negative for uint8 */
static double val(hwrt_dtype dt, int r, int64_t i)
{
    double v = (double)((i * 7 + r * 13) % 61 - 30);
    return dt == HWRT_UINT8 ? v + 30 : v;
}

/* v as dtype dt stores it */
static double as(hwrt_dtype dt, double v)
{
    char b[16];
    ref_put(dt, b, 0, v);
    return ref_get(dt, b, 0);
}

/* rank's values from element base (float32 made by a device op on S, a scale by 1, where
 * coll.float32_by_op) */
static hwrt_tensor produce(hwrt_dtype dt, int64_t n, int64_t base)
{
    void *h = calloc((size_t)n, 8);
    for (int64_t i = 0; i < n; i++) ref_put(dt, h, (size_t)i, val(dt, rank, base + i));
    hwrt_tensor src = NULL, t = NULL;
    OK(hwrt_tensor_from_host(&src, dt, 1, &n, h));
    if (coll.float32_by_op && dt == HWRT_FLOAT32) {
        OK(hwrt_tensor_empty(&t, dt, 1, &n));
        OK(hwrt_op_scale(t, src, 1.0, S));
        OK(hwrt_tensor_release(src));
    } else {
        t = src;
    }
    free(h);
    return t;
}

static double combine(double a, double b, hwrt_reduce_op op)
{
    switch (op) {
    case HWRT_REDUCE_PROD: return a * b;
    case HWRT_REDUCE_MAX: return b > a ? b : a;
    case HWRT_REDUCE_MIN: return b < a ? b : a;
    default: return a + b;
    }
}

/* element i of the reduction over the ranks, as dt stores it (AVG: the sum divided) */
static double reduced(hwrt_dtype dt, int64_t i, hwrt_reduce_op op)
{
    double a = val(dt, 0, i);
    for (int q = 1; q < size; q++) a = combine(a, val(dt, q, i), op);
    return as(dt, op == HWRT_REDUCE_AVG ? a / size : a);
}

/* t (n elements) on the host equals want(dt, i, arg) */
static int equals(hwrt_tensor t, hwrt_dtype dt, int64_t n,
                  double (*want)(hwrt_dtype, int64_t, int), int arg, const char *what)
{
    void *h = calloc((size_t)n, 8);
    OK(hwrt_tensor_copy_to_host(t, h, (size_t)n * hwrt_dtype_size(dt)));
    int bad = -1;
    for (int64_t i = 0; i < n && bad < 0; i++)
        if (ref_get(dt, h, (size_t)i) != want(dt, i, arg)) bad = (int)i;
    if (bad >= 0)
        fprintf(stderr, "rank %d: %s %s: element %d is %g, want %g\n", rank, what,
                hwrt_dtype_name(dt), bad, ref_get(dt, h, (size_t)bad), want(dt, bad, arg));
    free(h);
    return bad < 0;
}

static double w_reduced(hwrt_dtype dt, int64_t i, int op) { return reduced(dt, i, (hwrt_reduce_op)op); }
static double w_own(hwrt_dtype dt, int64_t i, int r) { return val(dt, r, i); }
static double w_gathered(hwrt_dtype dt, int64_t i, int n) { return val(dt, (int)(i / n), i % n); }
static double w_scattered(hwrt_dtype dt, int64_t i, int op)
{
    return reduced(dt, rank * (int64_t)N + i, (hwrt_reduce_op)op);
}

/* a dtype x op case */
typedef struct { hwrt_dtype dt; hwrt_reduce_op op; } coll_case;

/* one allreduce of dt x op that reaches the library once and gives the reduction */
static void allreduce_ok(hwrt_dtype dt, hwrt_reduce_op op)
{
    hwrt_tensor t = produce(dt, N, 0);
    int c0 = calls();
    OK(hwrt_allreduce(t, op, S));
    EXPECT(calls() == c0 + 1);
    EXPECT(equals(t, dt, N, w_reduced, op, "allreduce"));
    OK(hwrt_tensor_release(t));
}

/* one reduce_scatter of dt x op that reaches the library once and gives the reduction */
static void reduce_scatter_ok(hwrt_dtype dt, hwrt_reduce_op op)
{
    int64_t n = N, big = (int64_t)N * size;
    hwrt_tensor rin = produce(dt, big, 0), rout;
    OK(hwrt_tensor_empty(&rout, dt, 1, &n));
    int c0 = calls();
    OK(hwrt_reduce_scatter(rout, rin, op, S));
    EXPECT(calls() == c0 + 1);
    EXPECT(equals(rout, dt, N, w_scattered, op, "reduce_scatter"));
    OK(hwrt_tensor_release(rin));
    OK(hwrt_tensor_release(rout));
}

/* allreduce_ok, reduce_scatter_ok of each of the n cases */
static void allreduce_each(const coll_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++) allreduce_ok(c[i].dt, c[i].op);
}
static void reduce_scatter_each(const coll_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++) reduce_scatter_ok(c[i].dt, c[i].op);
}

/* a broadcast of 7 bytes from the last rank */
static void broadcast_7_bytes(void)
{
    hwrt_tensor b7 = produce(HWRT_INT8, 7, 0);     /* 7 bytes */
    OK(hwrt_broadcast(b7, size - 1, S));
    EXPECT(equals(b7, HWRT_INT8, 7, w_own, size - 1, "broadcast of 7 bytes"));
    OK(hwrt_tensor_release(b7));
}

/* late_t, written by a host function on the stream (late_write) after a nap */
static hwrt_tensor late_t;
static void late_write(void *arg)
{
    (void)arg;
    nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    float *d = NULL;
    hwrt_tensor_data(late_t, (void **)&d);      /* the double's device memory is the host's */
    for (int i = 0; i < N; i++) d[i] = (float)val(HWRT_FLOAT32, rank, i);
}

/* every collective fails at once, naming the first failure */
static void given_up(const char *first)
{
    char want[240];
    snprintf(want, sizeof want, "%s failed earlier (%s%s", coll.engine, first, coll.given_up);
    int64_t n = N, big = (int64_t)N * size;
    hwrt_tensor t = produce(HWRT_FLOAT32, big, 0), o;
    OK(hwrt_tensor_empty(&o, HWRT_FLOAT32, 1, &n));
    int c0 = calls();
    FAILS(hwrt_allreduce(t, HWRT_REDUCE_SUM, S), HWRT_ERROR_DIST, want);
    FAILS(hwrt_broadcast(t, 0, S), HWRT_ERROR_DIST, want);
    FAILS(hwrt_allgather(t, o, S), HWRT_ERROR_DIST, want);
    FAILS(hwrt_reduce_scatter(o, t, HWRT_REDUCE_SUM, S), HWRT_ERROR_DIST, want);
    EXPECT(calls() == c0);
    OK(hwrt_tensor_release(t));
    OK(hwrt_tensor_release(o));
}

/* an allreduce failing with status want and sentence frag, and the file's own check of the
 * last error */
static void fails_alone(hwrt_status want, const char *frag);

/* the init fails with code (sentence text) on rank bad only: every rank says so, and
 * nothing is left; then the setup again */
static void setup_init(int bad, int code, const char *text)
{
    static char name[80];
    snprintf(name, sizeof name, "%s fails on one rank", coll.init);
    TEST_CASE(name);
    if (rank == bad) fail_init(code);
    char want[200];
    snprintf(want, sizeof want, "%s setup: %s failed on rank %d of %d: %s (%s %d)", coll.engine,
             coll.init, bad, size, text, coll.result, code);
    int c0 = calls();
    fails_alone(HWRT_ERROR_DIST, want);
    EXPECT(calls() == c0);
    EXPECT(live() == 0);            /* destroyed (aborted) where it was made */
    if (coll.init_failed) coll.init_failed(bad);
    TEST_CASE("the setup again");
    allreduce_ok(HWRT_FLOAT32, HWRT_REDUCE_SUM);
    OK(hwrt_dist_finalize());
    EXPECT(live() == 0);
}

/* after a good allreduce, a tensor on device other (backend's), with the communicator on
 * device comm_dev: refused before the library */
static void other_device(const char *backend, int other, int comm_dev)
{
    TEST_CASE("a tensor on another device");
    allreduce_ok(HWRT_FLOAT32, HWRT_REDUCE_SUM);
    OK(hwrt_set_device(backend, other));
    hwrt_stream s1;
    OK(hwrt_stream_create(&s1, 0));
    int64_t n = N;
    hwrt_tensor t;
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, &n));
    int c0 = calls();
    char want[200];
    snprintf(want, sizeof want, "%s: this process's communicator is on device %d, but the "
             "tensor is on device %d", coll.engine, comm_dev, other);
    FAILS(hwrt_allreduce(t, HWRT_REDUCE_SUM, s1), HWRT_ERROR_INVALID_ARGUMENT, want);
    EXPECT(calls() == c0);
    OK(hwrt_tensor_release(t));
    OK(hwrt_stream_destroy(s1));
}

/* the hooks of the double of lib ("hccl") that the variable env names (and extra, the
 * hook named extra_name, unless NULL), a scenario (argc 2 or more), then the engine's process
 * set up on backend: 0, or 2 with the usage of prog */
static int coll_start(int argc, const char *env, const char *lib, const char *prog,
                      const char *backend, void **extra, const char *extra_name)
{
    char hook[64];
    void *h = dlopen(getenv(env), RTLD_NOW);
    struct { void **fn; const char *name; } hooks[] = {
        {(void **)&fail_root, "fail_root"}, {(void **)&fail_init, "fail_init"},
        {(void **)&fail_next, "fail_next"}, {(void **)&fail_destroy, "fail_destroy"},
        {(void **)&async_err, "async"}, {(void **)&live, "live"},
        {(void **)&calls, "calls"}, {extra, extra_name}};
    int ok = h != NULL;
    for (size_t i = 0; ok && i < sizeof hooks / sizeof hooks[0]; i++) {
        if (!hooks[i].fn) continue;
        snprintf(hook, sizeof hook, "%s_double_%s", lib, hooks[i].name);
        ok = (*hooks[i].fn = dlsym(h, hook)) != NULL;
    }
    if (!ok || argc < 2) {
        fprintf(stderr, "usage: %s=<the test double of lib%s> %s <scenario> (%s)\n", env, lib,
                prog, h ? "no hooks" : dlerror());
        return 2;
    }
    OK(hwrt_dist_init());
    rank = hwrt_dist_rank();
    size = hwrt_dist_size();
    OK(hwrt_dist_bind_device(backend));
    OK(hwrt_stream_create(&S, 0));
    return 0;
}

/* the end of a scenario: the process's report */
static int coll_end(void)
{
    hwrt_stream_destroy(S);
    hwrt_shutdown();
    printf("rank %d of %d: ", rank, size);
    return test_report();
}

#endif
