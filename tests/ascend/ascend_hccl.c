/* The HCCL engine (src/distributed/hccl_engine.c) through the public API, on the test
 * doubles of libascendcl (HWRT_ASCEND_DOUBLE=device, two fake devices) and of libhccl
 * (hccl_double.c, which moves the ranks' data through shared memory); one process, or
 * 2 ranks under mpirun. Nothing here runs on an NPU or says how HCCL behaves: it checks
 * what hwrt does with what HCCL answers. HWRT_COLL_ENGINE=hccl is forced, and every
 * collective that must reach HCCL is counted by the double (no silent fallback to MPI).
 *   ascend_hccl data            the four collectives' results (SUM, PROD, MAX, MIN, AVG =
 *                               SUM then a scale by 1/ranks; after a host function on the
 *                               stream), the dtypes refused before HCCL, a failed scale,
 *                               a device that cannot be made current
 *   ascend_hccl errors          argument errors keep the communicator; an internal error
 *                               ends it ("the communicator reports:" its other error)
 *   ascend_hccl async           an asynchronous error after a good enqueue ends it
 *   ascend_hccl setup_root      HcclGetRootInfo fails on rank 0: every rank says so; then
 *                               HcclCommDestroy fails at finalize
 *   ascend_hccl setup_init R C  HcclCommInitRootInfo fails with C on rank R only
 *   ascend_hccl device          a tensor on another device; finalize from device 1
 *   ascend_hccl old             a library without HcclGetErrorString / GetCommAsyncError */
#include "harness.h"

#include <dlfcn.h>
#include <string.h>
#include <time.h>

#define N 1003

static int rank, size;
static hwrt_stream S;
static void (*fail_root)(int), (*fail_init)(int), (*fail_next)(int), (*fail_destroy)(int);
static void (*async_err)(int);
static int (*live)(void), (*calls)(void);

static double val(int r, int64_t i) { return (double)((i * 7 + r * 13) % 61 - 30); }

static float bf2f(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void put(hwrt_dtype dt, void *b, int64_t i, double v)
{
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    switch (dt) {
    case HWRT_FLOAT32: ((float *)b)[i] = f; break;
    case HWRT_FLOAT64: ((double *)b)[i] = v; break;
    case HWRT_INT32: ((int32_t *)b)[i] = (int32_t)v; break;
    case HWRT_INT64: ((int64_t *)b)[i] = (int64_t)v; break;
    case HWRT_INT8: ((int8_t *)b)[i] = (int8_t)v; break;
    case HWRT_UINT8: ((uint8_t *)b)[i] = (uint8_t)(v + 30); break;
    default: ((uint16_t *)b)[i] = (uint16_t)(u >> 16); break;   /* bfloat16, float16 bits */
    }
}

static double get(hwrt_dtype dt, const void *b, int64_t i)
{
    switch (dt) {
    case HWRT_FLOAT32: return ((const float *)b)[i];
    case HWRT_FLOAT64: return ((const double *)b)[i];
    case HWRT_INT32: return ((const int32_t *)b)[i];
    case HWRT_INT64: return (double)((const int64_t *)b)[i];
    case HWRT_INT8: return ((const int8_t *)b)[i];
    case HWRT_UINT8: return ((const uint8_t *)b)[i] - 30.0;
    default: return bf2f(((const uint16_t *)b)[i]);
    }
}

/* rank's values from element base; float32 made by a device op on S (a scale by 1) */
static hwrt_tensor produce(hwrt_dtype dt, int64_t n, int64_t base)
{
    void *h = calloc((size_t)n, 8);
    for (int64_t i = 0; i < n; i++) put(dt, h, i, val(rank, base + i));
    hwrt_tensor src = NULL, t = NULL;
    OK(hwrt_tensor_from_host(&src, dt, 1, &n, h));
    if (dt == HWRT_FLOAT32) {
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

static double reduced(int64_t i, hwrt_reduce_op op)
{
    double a = val(0, i);
    for (int q = 1; q < size; q++) a = combine(a, val(q, i), op);
    return op == HWRT_REDUCE_AVG ? a / size : a;
}

/* t (n elements) on the host equals want(i, arg) */
static int equals(hwrt_tensor t, hwrt_dtype dt, int64_t n, double (*want)(int64_t, int),
                  int arg, const char *what)
{
    void *h = calloc((size_t)n, 8);
    OK(hwrt_tensor_copy_to_host(t, h, (size_t)n * hwrt_dtype_size(dt)));
    int bad = -1;
    for (int64_t i = 0; i < n && bad < 0; i++)
        if (get(dt, h, i) != want(i, arg)) bad = (int)i;
    if (bad >= 0)
        fprintf(stderr, "rank %d: %s %s: element %d is %g, want %g\n", rank, what,
                hwrt_dtype_name(dt), bad, get(dt, h, bad), want(bad, arg));
    free(h);
    return bad < 0;
}

static double w_reduced(int64_t i, int op) { return reduced(i, (hwrt_reduce_op)op); }
static double w_own(int64_t i, int r) { return val(r, i); }
static double w_gathered(int64_t i, int n) { return val((int)(i / n), i % n); }
static double w_scattered(int64_t i, int op) { return reduced(rank * (int64_t)N + i, (hwrt_reduce_op)op); }

/* one allreduce of dt x op that reaches HCCL once and gives the reduction */
static void allreduce_ok(hwrt_dtype dt, hwrt_reduce_op op)
{
    hwrt_tensor t = produce(dt, N, 0);
    int c0 = calls();
    OK(hwrt_allreduce(t, op, S));
    EXPECT(calls() == c0 + 1);
    EXPECT(equals(t, dt, N, w_reduced, op, "allreduce"));
    OK(hwrt_tensor_release(t));
}

static hwrt_tensor late_t;
static void late_write(void *arg)
{
    (void)arg;
    nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    float *d = NULL;
    hwrt_tensor_data(late_t, (void **)&d);      /* the double's device memory is the host's */
    for (int i = 0; i < N; i++) d[i] = (float)val(rank, i);
}

static void data(void)
{
    TEST_CASE("allreduce");
    static const struct { hwrt_dtype dt; hwrt_reduce_op op; } cases[] = {
        {HWRT_FLOAT32, HWRT_REDUCE_SUM}, {HWRT_INT32, HWRT_REDUCE_SUM},
        {HWRT_INT64, HWRT_REDUCE_SUM}, {HWRT_INT8, HWRT_REDUCE_MAX},
        {HWRT_INT8, HWRT_REDUCE_SUM}, {HWRT_INT32, HWRT_REDUCE_MIN},
        {HWRT_FLOAT32, HWRT_REDUCE_PROD}, {HWRT_BFLOAT16, HWRT_REDUCE_SUM},
        {HWRT_FLOAT32, HWRT_REDUCE_AVG}};   /* (the ACL double scales float32 only) */
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) allreduce_ok(cases[c].dt, cases[c].op);

    TEST_CASE("stream order: after a host function on the stream");
    int64_t n = N;
    OK(hwrt_tensor_empty(&late_t, HWRT_FLOAT32, 1, &n));
    OK(hwrt_op_fill(late_t, 0, S));
    OK(hwrt_launch_host_func(S, late_write, NULL));
    OK(hwrt_allreduce(late_t, HWRT_REDUCE_SUM, S));
    EXPECT(equals(late_t, HWRT_FLOAT32, N, w_reduced, HWRT_REDUCE_SUM, "after a host function"));
    OK(hwrt_tensor_release(late_t));

    TEST_CASE("refused before HCCL, tensor intact");
    static const struct { hwrt_dtype dt; hwrt_reduce_op op; const char *why; } no[] = {
        {HWRT_FLOAT64, HWRT_REDUCE_SUM, "HcclAllReduce: HCCL does not reduce float64 tensors"},
        {HWRT_UINT8, HWRT_REDUCE_MAX, "HcclAllReduce: HCCL does not reduce uint8 tensors"},
        {HWRT_BFLOAT16, HWRT_REDUCE_PROD, "HcclAllReduce: HCCL has no PROD for bfloat16"},
        {HWRT_INT32, HWRT_REDUCE_AVG, "HcclAllReduce: HCCL has no AVG, which hwrt makes of SUM "
                                      "and a scale by 1/ranks on the stream, for float types "
                                      "only: for int32 use SUM"},
        {HWRT_INT8, HWRT_REDUCE_AVG, "for int8 use SUM"},
        {HWRT_INT64, HWRT_REDUCE_AVG, "for int64 use SUM"}};
    for (size_t c = 0; c < sizeof no / sizeof no[0]; c++) {
        hwrt_tensor t = produce(no[c].dt, N, 0);
        int c0 = calls();
        FAILS(hwrt_allreduce(t, no[c].op, S), HWRT_ERROR_NOT_SUPPORTED, no[c].why);
        EXPECT(calls() == c0);
        EXPECT(equals(t, no[c].dt, N, w_own, rank, "refused allreduce left"));
        OK(hwrt_tensor_release(t));
    }
    int64_t big = (int64_t)N * size;
    hwrt_tensor rin = produce(HWRT_INT32, big, 0), rout;
    OK(hwrt_tensor_empty(&rout, HWRT_INT32, 1, &n));
    FAILS(hwrt_reduce_scatter(rout, rin, HWRT_REDUCE_AVG, S), HWRT_ERROR_NOT_SUPPORTED,
          "HcclReduceScatter: HCCL has no AVG");
    OK(hwrt_tensor_release(rin));
    OK(hwrt_tensor_release(rout));

    TEST_CASE("broadcast");
    for (int root = 0; root < size; root++) {
        hwrt_tensor b = produce(HWRT_FLOAT32, N, 0);
        OK(hwrt_broadcast(b, root, S));
        EXPECT(equals(b, HWRT_FLOAT32, N, w_own, root, "broadcast"));
        OK(hwrt_tensor_release(b));
    }
    hwrt_tensor b7 = produce(HWRT_INT8, 7, 0);     /* 7 bytes */
    OK(hwrt_broadcast(b7, size - 1, S));
    EXPECT(equals(b7, HWRT_INT8, 7, w_own, size - 1, "broadcast of 7 bytes"));
    OK(hwrt_tensor_release(b7));

    TEST_CASE("allgather");
    hwrt_tensor in = produce(HWRT_INT32, N, 0), out;
    OK(hwrt_tensor_empty(&out, HWRT_INT32, 1, &big));
    OK(hwrt_allgather(out, in, S));
    EXPECT(equals(out, HWRT_INT32, big, w_gathered, N, "allgather"));
    OK(hwrt_tensor_release(in));
    OK(hwrt_tensor_release(out));

    TEST_CASE("reduce_scatter");
    static const struct { hwrt_dtype dt; hwrt_reduce_op op; } rs[] = {
        {HWRT_FLOAT32, HWRT_REDUCE_SUM}, {HWRT_FLOAT32, HWRT_REDUCE_AVG}, {HWRT_INT32, HWRT_REDUCE_MAX}};
    for (size_t c = 0; c < sizeof rs / sizeof rs[0]; c++) {
        rin = produce(rs[c].dt, big, 0);
        OK(hwrt_tensor_empty(&rout, rs[c].dt, 1, &n));
        int c0 = calls();
        OK(hwrt_reduce_scatter(rout, rin, rs[c].op, S));
        EXPECT(calls() == c0 + 1);
        EXPECT(equals(rout, rs[c].dt, N, w_scattered, rs[c].op, "reduce_scatter"));
        OK(hwrt_tensor_release(rin));
        OK(hwrt_tensor_release(rout));
    }

    TEST_CASE("AVG: the scale fails");
    void *acl = dlopen(getenv("HWRT_ASCEND_LIBRARY"), RTLD_NOW);
    void (*fail_create)(int) = acl ? (void (*)(int))dlsym(acl, "acl_double_fail_create") : NULL;
    EXPECT(fail_create != NULL);
    if (fail_create) {
        hwrt_tensor t = produce(HWRT_FLOAT32, N, 0);
        char want[64];
        snprintf(want, sizeof want, "HCCL AVG: the scale by 1/%d after the sum", size);
        fail_create(1);
        hwrt_status st = hwrt_allreduce(t, HWRT_REDUCE_AVG, S);
        EXPECT(st != HWRT_SUCCESS && strstr(hwrt_last_error(), want));
        if (!strstr(hwrt_last_error(), want)) fprintf(stderr, "  got: %s\n", hwrt_last_error());
        OK(hwrt_tensor_release(t));
        allreduce_ok(HWRT_FLOAT32, HWRT_REDUCE_SUM);     /* the communicator is fine */
    }

    TEST_CASE("a device with a sticky fault cannot be made current: nothing reaches HCCL");
    void (*inject)(int, int) = acl ? (void (*)(int, int))dlsym(acl, "acl_double_inject") : NULL;
    EXPECT(inject != NULL);
    if (inject) {
        hwrt_tensor t = produce(HWRT_FLOAT32, N, 0);
        inject(507015, 1);                 /* ACL_ERROR_RT_AICORE_EXCEPTION, sticky */
        FAILS(hwrt_stream_synchronize(S), HWRT_ERROR_DEVICE_FAULT, "507015");
        int c0 = calls();
        char want[64];
        snprintf(want, sizeof want, "HCCL: device %d could not be made current", rank);
        FAILS(hwrt_allreduce(t, HWRT_REDUCE_SUM, S), HWRT_ERROR_DEVICE_FAULT, want);
        EXPECT(calls() == c0);
        OK(hwrt_device_reset(rank));
        OK(hwrt_tensor_release(t));
        allreduce_ok(HWRT_FLOAT32, HWRT_REDUCE_SUM);
    }
}

/* an allreduce failing with status want and sentence frag, which never mentions the
 * communicator's own error unless also */
static void fails_alone(hwrt_status want, const char *frag)
{
    hwrt_tensor t = produce(HWRT_FLOAT32, N, 0);
    FAILS(hwrt_allreduce(t, HWRT_REDUCE_SUM, S), want, frag);
    EXPECT(!strstr(hwrt_last_error(), "the communicator reports"));
    OK(hwrt_tensor_release(t));
}

/* every collective fails at once, naming the first failure */
static void given_up(const char *first)
{
    char want[160];
    snprintf(want, sizeof want, "HCCL failed earlier (%s", first);
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

static void errors(void)
{
    TEST_CASE("argument errors keep the communicator");
    allreduce_ok(HWRT_FLOAT32, HWRT_REDUCE_SUM);
    fail_next(1);
    fails_alone(HWRT_ERROR_DIST, "HcclAllReduce failed: parameter error (HcclResult 1)");
    allreduce_ok(HWRT_INT32, HWRT_REDUCE_SUM);
    fail_next(2);
    fails_alone(HWRT_ERROR_DIST, "HcclAllReduce failed: empty pointer (HcclResult 2)");
    allreduce_ok(HWRT_FLOAT32, HWRT_REDUCE_MAX);
    fail_next(5);
    fails_alone(HWRT_ERROR_NOT_SUPPORTED, "HcclAllReduce failed: not supported (HcclResult 5)");
    allreduce_ok(HWRT_FLOAT32, HWRT_REDUCE_SUM);
    /* float16: hwrt lets it through, the double refuses it (HCCL_E_NOT_SUPPORT) */
    hwrt_tensor h = produce(HWRT_FLOAT16, N, 0);
    FAILS(hwrt_allreduce(h, HWRT_REDUCE_SUM, S), HWRT_ERROR_NOT_SUPPORTED,
          "HcclAllReduce failed: not supported (HcclResult 5)");
    OK(hwrt_tensor_release(h));
    allreduce_ok(HWRT_INT8, HWRT_REDUCE_MIN);

    TEST_CASE("an internal error ends it, with the communicator's own error");
    async_err(21);
    fail_next(4);
    hwrt_tensor t = produce(HWRT_FLOAT32, N, 0);
    FAILS(hwrt_allreduce(t, HWRT_REDUCE_SUM, S), HWRT_ERROR_DIST,
          "HcclAllReduce failed: internal error (HcclResult 4); the communicator reports: "
          "error cqe (a remote rank failed)");
    OK(hwrt_tensor_release(t));
    async_err(0);
    given_up("HcclAllReduce failed: internal error (HcclResult 4); the communicator reports");
    OK(hwrt_dist_finalize());
    EXPECT(live() == 1);            /* given up: left alone, not destroyed */
}

static void async(void)
{
    TEST_CASE("an asynchronous error after a good enqueue ends it");
    allreduce_ok(HWRT_FLOAT32, HWRT_REDUCE_SUM);
    async_err(21);
    int c0 = calls();
    fails_alone(HWRT_ERROR_DIST, "HcclAllReduce failed: error cqe (a remote rank failed) "
                                 "(HcclResult 21)");
    EXPECT(calls() == c0 + 1);
    given_up("HcclAllReduce failed: error cqe");
    OK(hwrt_dist_finalize());
    EXPECT(live() == 1);
}

static void setup_root(void)
{
    TEST_CASE("HcclGetRootInfo fails on rank 0");
    if (rank == 0) fail_root(4);
    char want[160];
    snprintf(want, sizeof want, "HCCL setup: rank 0 of %d cannot take part: HcclGetRootInfo "
             "failed: internal error (HcclResult 4)", size);
    int c0 = calls();
    fails_alone(HWRT_ERROR_DIST, want);
    EXPECT(calls() == c0 && live() == 0);
    TEST_CASE("the setup again, then HcclCommDestroy fails");
    allreduce_ok(HWRT_FLOAT32, HWRT_REDUCE_SUM);
    EXPECT(live() == 1);
    fail_destroy(4);
    FAILS(hwrt_dist_finalize(), HWRT_ERROR_DIST, "HcclCommDestroy failed: internal error "
                                                 "(HcclResult 4)");
}

static void setup_init(int bad, int code, const char *text)
{
    TEST_CASE("HcclCommInitRootInfo fails on one rank");
    if (rank == bad) fail_init(code);
    char want[200];
    snprintf(want, sizeof want, "HCCL setup: HcclCommInitRootInfo failed on rank %d of %d: "
             "%s (HcclResult %d)", bad, size, text, code);
    int c0 = calls();
    fails_alone(HWRT_ERROR_DIST, want);
    EXPECT(calls() == c0);
    EXPECT(live() == 0);            /* destroyed where it was made */
    TEST_CASE("the setup again");
    allreduce_ok(HWRT_FLOAT32, HWRT_REDUCE_SUM);
    OK(hwrt_dist_finalize());
    EXPECT(live() == 0);
}

static void device(void)
{
    TEST_CASE("a tensor on another device");
    allreduce_ok(HWRT_FLOAT32, HWRT_REDUCE_SUM);
    OK(hwrt_set_device("ascend", 1));
    hwrt_stream s1;
    OK(hwrt_stream_create(&s1, 0));
    int64_t n = N;
    hwrt_tensor t;
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, &n));
    int c0 = calls();
    FAILS(hwrt_allreduce(t, HWRT_REDUCE_SUM, s1), HWRT_ERROR_INVALID_ARGUMENT,
          "HCCL: this process's communicator is on device 0, but the tensor is on device 1");
    EXPECT(calls() == c0);
    OK(hwrt_tensor_release(t));
    OK(hwrt_stream_destroy(s1));
    TEST_CASE("finalize with device 1 current: destroyed on device 0");
    OK(hwrt_dist_finalize());
    EXPECT(live() == 0);
}

static void old(void)
{
    TEST_CASE("no HcclGetErrorString, no HcclGetCommAsyncError");
    allreduce_ok(HWRT_FLOAT32, HWRT_REDUCE_SUM);
    fail_next(4);
    fails_alone(HWRT_ERROR_DIST, "HcclAllReduce failed: HCCL error 4 (HcclResult 4)");
    given_up("HcclAllReduce failed: HCCL error 4");
    OK(hwrt_dist_finalize());
}

#define HOOK(v, name) (*(void **)&v = dlsym(h, name))
int main(int argc, char **argv)
{
    void *h = dlopen(getenv("HWRT_HCCL_LIBRARY"), RTLD_NOW);
    if (!h || !HOOK(fail_root, "hccl_double_fail_root") || !HOOK(fail_init, "hccl_double_fail_init") ||
        !HOOK(fail_next, "hccl_double_fail_next") || !HOOK(fail_destroy, "hccl_double_fail_destroy") ||
        !HOOK(async_err, "hccl_double_async") || !HOOK(live, "hccl_double_live") ||
        !HOOK(calls, "hccl_double_calls") || argc < 2) {
        fprintf(stderr, "usage: HWRT_HCCL_LIBRARY=<the test double of libhccl> ascend_hccl "
                "<scenario> (%s)\n", h ? "no hooks" : dlerror());
        return 2;
    }
    OK(hwrt_dist_init());
    rank = hwrt_dist_rank();
    size = hwrt_dist_size();
    OK(hwrt_dist_bind_device("ascend"));
    OK(hwrt_stream_create(&S, 0));
    const char *s = argv[1];
    if (!strcmp(s, "data")) {
        data();
        OK(hwrt_barrier());
        OK(hwrt_dist_finalize());
        EXPECT(live() == 0);
    } else if (!strcmp(s, "errors")) errors();
    else if (!strcmp(s, "async")) async();
    else if (!strcmp(s, "setup_root")) setup_root();
    else if (!strcmp(s, "setup_init") && argc == 5) setup_init(atoi(argv[2]), atoi(argv[3]), argv[4]);
    else if (!strcmp(s, "device")) device();
    else if (!strcmp(s, "old")) old();
    else {
        fprintf(stderr, "ascend_hccl: no scenario %s\n", s);
        return 2;
    }
    hwrt_stream_destroy(S);
    hwrt_shutdown();
    printf("rank %d of %d: ", rank, size);
    return test_report();
}
