/* The NCCL engine (src/distributed/nccl_engine.c) through the public API, on the test
 * doubles of libcuda (cuda_double.c, HWRT_CUDA_DOUBLE=device, two fake devices) and of
 * libnccl (nccl_double.c, which moves the ranks' data through shared memory); one process,
 * or 2 ranks under mpirun. Nothing here runs on a GPU or says how NCCL or CUDA behave: it
 * checks what hwrt does with what they answer. HWRT_COLL_ENGINE=nccl is forced, and every
 * collective that must reach NCCL is counted by the double (no silent fallback to MPI).
 *   cuda_nccl data            the four collectives' results, every dtype (AVG is NCCL's
 *                             ncclAvg: integers truncate), after a host function on the
 *                             stream, with the communicator reporting ncclInProgress
 *                             (not an error); bool refused before NCCL
 *   cuda_nccl errors          argument errors (invalid argument, invalid usage) keep the
 *                             communicator; another ends it (ncclCommAbort), naming the
 *                             communicator's own error; then every collective fails at once
 *   cuda_nccl async           an asynchronous error after a good enqueue ends it
 *   cuda_nccl setup_root      ncclGetUniqueId fails on rank 0: every rank says so; then
 *                             ncclCommDestroy fails at finalize
 *   cuda_nccl setup_init R C T  ncclCommInitRank fails with C (sentence T) on rank R only:
 *                             every rank says so, the others' communicators are aborted
 *   cuda_nccl device          a tensor on another device; finalize from the other device
 *   cuda_nccl fault           a device that cannot be made current for NCCL; one with a
 *                             sticky fault
 *   cuda_nccl version V       HWRT_NCCL_DOUBLE_VERSION as set: "ok", or the refusal V */
#include "harness.h"
#include "dtype_ref.h"

#include <dlfcn.h>
#include <string.h>
#include <time.h>

#define N 1003

static int rank, size;
static hwrt_stream S;
static void (*fail_root)(int), (*fail_init)(int), (*fail_next)(int), (*fail_destroy)(int);
static void (*async_err)(int);
static int (*live)(void), (*calls)(void), (*aborted)(void);

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

static hwrt_tensor produce(hwrt_dtype dt, int64_t n, int64_t base)
{
    void *h = calloc((size_t)n, 8);
    for (int64_t i = 0; i < n; i++) ref_put(dt, h, (size_t)i, val(dt, rank, base + i));
    hwrt_tensor t = NULL;
    OK(hwrt_tensor_from_host(&t, dt, 1, &n, h));
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

/* one allreduce of dt x op that reaches NCCL once and gives the reduction */
static void allreduce_ok(hwrt_dtype dt, hwrt_reduce_op op)
{
    hwrt_tensor t = produce(dt, N, 0);
    int c0 = calls();
    OK(hwrt_allreduce(t, op, S));
    EXPECT(calls() == c0 + 1);
    EXPECT(equals(t, dt, N, w_reduced, op, "allreduce"));
    OK(hwrt_tensor_release(t));
}

/* the last error is exactly "...<tail>" */
static int ends_with(const char *tail)
{
    const char *e = hwrt_last_error();
    size_t a = strlen(e), b = strlen(tail);
    int ok = a >= b && !strcmp(e + a - b, tail);
    if (!ok) fprintf(stderr, "rank %d: error \"%s\" does not end with \"%s\"\n", rank, e, tail);
    return ok;
}

static hwrt_tensor late_t;
static void late_write(void *arg)
{
    (void)arg;
    nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    float *d = NULL;
    hwrt_tensor_data(late_t, (void **)&d);      /* the double's device memory is the host's */
    for (int i = 0; i < N; i++) d[i] = (float)val(HWRT_FLOAT32, rank, i);
}

static void data(void)
{
    TEST_CASE("allreduce, every dtype");
    static const struct { hwrt_dtype dt; hwrt_reduce_op op; } cases[] = {
        {HWRT_FLOAT32, HWRT_REDUCE_SUM}, {HWRT_FLOAT32, HWRT_REDUCE_PROD},
        {HWRT_FLOAT32, HWRT_REDUCE_MAX}, {HWRT_FLOAT32, HWRT_REDUCE_MIN},
        {HWRT_FLOAT32, HWRT_REDUCE_AVG}, {HWRT_FLOAT64, HWRT_REDUCE_SUM},
        {HWRT_FLOAT64, HWRT_REDUCE_AVG}, {HWRT_FLOAT16, HWRT_REDUCE_SUM},
        {HWRT_FLOAT16, HWRT_REDUCE_AVG}, {HWRT_BFLOAT16, HWRT_REDUCE_SUM},
        {HWRT_BFLOAT16, HWRT_REDUCE_MAX}, {HWRT_INT8, HWRT_REDUCE_SUM},
        {HWRT_INT8, HWRT_REDUCE_MIN}, {HWRT_UINT8, HWRT_REDUCE_SUM},
        {HWRT_UINT8, HWRT_REDUCE_MAX}, {HWRT_INT32, HWRT_REDUCE_SUM},
        {HWRT_INT32, HWRT_REDUCE_AVG}, {HWRT_INT32, HWRT_REDUCE_PROD},
        {HWRT_INT64, HWRT_REDUCE_SUM}, {HWRT_INT64, HWRT_REDUCE_AVG}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) allreduce_ok(cases[c].dt, cases[c].op);

    TEST_CASE("stream order: after a host function on the stream");
    int64_t n = N;
    float *zero = calloc(N, sizeof *zero);
    OK(hwrt_tensor_from_host(&late_t, HWRT_FLOAT32, 1, &n, zero));
    free(zero);
    OK(hwrt_launch_host_func(S, late_write, NULL));
    OK(hwrt_allreduce(late_t, HWRT_REDUCE_SUM, S));
    EXPECT(equals(late_t, HWRT_FLOAT32, N, w_reduced, HWRT_REDUCE_SUM, "after a host function"));
    OK(hwrt_tensor_release(late_t));

    TEST_CASE("the communicator reports ncclInProgress: not an error");
    async_err(7);
    allreduce_ok(HWRT_FLOAT32, HWRT_REDUCE_SUM);
    allreduce_ok(HWRT_INT32, HWRT_REDUCE_MAX);
    async_err(0);

    TEST_CASE("bool refused before NCCL, tensor intact");
    {
        hwrt_tensor t = produce(HWRT_BOOL, N, 0);
        int c0 = calls();
        FAILS(hwrt_allreduce(t, HWRT_REDUCE_MAX, S), HWRT_ERROR_INVALID_ARGUMENT,
              "bool tensors cannot be reduced");
        EXPECT(calls() == c0);
        OK(hwrt_tensor_release(t));
    }

    TEST_CASE("broadcast");
    for (int root = 0; root < size; root++) {
        hwrt_tensor b = produce(HWRT_FLOAT32, N, 0);
        int c0 = calls();
        OK(hwrt_broadcast(b, root, S));
        EXPECT(calls() == c0 + 1);
        EXPECT(equals(b, HWRT_FLOAT32, N, w_own, root, "broadcast"));
        OK(hwrt_tensor_release(b));
    }
    hwrt_tensor b7 = produce(HWRT_INT8, 7, 0);     /* 7 bytes */
    OK(hwrt_broadcast(b7, size - 1, S));
    EXPECT(equals(b7, HWRT_INT8, 7, w_own, size - 1, "broadcast of 7 bytes"));
    OK(hwrt_tensor_release(b7));

    TEST_CASE("allgather");
    int64_t big = (int64_t)N * size;
    static const hwrt_dtype ag[] = {HWRT_INT32, HWRT_FLOAT16, HWRT_INT8};
    for (size_t c = 0; c < sizeof ag / sizeof ag[0]; c++) {
        hwrt_tensor in = produce(ag[c], N, 0), out;
        OK(hwrt_tensor_empty(&out, ag[c], 1, &big));
        int c0 = calls();
        OK(hwrt_allgather(out, in, S));
        EXPECT(calls() == c0 + 1);
        EXPECT(equals(out, ag[c], big, w_gathered, N, "allgather"));
        OK(hwrt_tensor_release(in));
        OK(hwrt_tensor_release(out));
    }

    TEST_CASE("reduce_scatter");
    static const struct { hwrt_dtype dt; hwrt_reduce_op op; } rs[] = {
        {HWRT_FLOAT32, HWRT_REDUCE_SUM}, {HWRT_FLOAT32, HWRT_REDUCE_AVG},
        {HWRT_INT32, HWRT_REDUCE_MAX}, {HWRT_INT64, HWRT_REDUCE_AVG},
        {HWRT_BFLOAT16, HWRT_REDUCE_MIN}};
    for (size_t c = 0; c < sizeof rs / sizeof rs[0]; c++) {
        hwrt_tensor rin = produce(rs[c].dt, big, 0), rout;
        OK(hwrt_tensor_empty(&rout, rs[c].dt, 1, &n));
        int c0 = calls();
        OK(hwrt_reduce_scatter(rout, rin, rs[c].op, S));
        EXPECT(calls() == c0 + 1);
        EXPECT(equals(rout, rs[c].dt, N, w_scattered, rs[c].op, "reduce_scatter"));
        OK(hwrt_tensor_release(rin));
        OK(hwrt_tensor_release(rout));
    }
}

/* an allreduce failing with status want, its error ending with tail */
static void fails_alone(hwrt_status want, const char *tail)
{
    hwrt_tensor t = produce(HWRT_FLOAT32, N, 0);
    FAILS(hwrt_allreduce(t, HWRT_REDUCE_SUM, S), want, tail);
    EXPECT(ends_with(tail));
    OK(hwrt_tensor_release(t));
}

/* every collective fails at once, naming the first failure */
static void given_up(const char *first)
{
    char want[240];
    snprintf(want, sizeof want, "NCCL failed earlier (%s); the communicator was aborted", first);
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
    fail_next(4);
    fails_alone(HWRT_ERROR_DIST, "ncclAllReduce failed: invalid argument (ncclResult 4)");
    allreduce_ok(HWRT_INT32, HWRT_REDUCE_SUM);
    async_err(7);                   /* in progress: not the communicator's error */
    fail_next(5);
    fails_alone(HWRT_ERROR_DIST, "ncclAllReduce failed: invalid usage (ncclResult 5)");
    async_err(0);
    allreduce_ok(HWRT_FLOAT32, HWRT_REDUCE_MAX);
    EXPECT(aborted() == 0 && live() == 1);

    TEST_CASE("an internal error ends it, with the communicator's own error");
    async_err(6);
    fail_next(3);
    const char *first = "ncclAllReduce failed: internal error (ncclResult 3); the communicator "
                        "reports: remote process exited or there was a network error";
    fails_alone(HWRT_ERROR_DIST, first);
    EXPECT(aborted() == 1 && live() == 0);
    async_err(0);
    given_up(first);
    OK(hwrt_dist_finalize());
    EXPECT(aborted() == 1 && live() == 0);
}

static void async(void)
{
    TEST_CASE("an asynchronous error after a good enqueue ends it");
    allreduce_ok(HWRT_FLOAT32, HWRT_REDUCE_SUM);
    async_err(6);
    int c0 = calls();
    const char *first = "ncclAllReduce failed: remote process exited or there was a network "
                        "error (ncclResult 6); the communicator reports: remote process exited "
                        "or there was a network error";
    fails_alone(HWRT_ERROR_DIST, first);
    EXPECT(calls() == c0 + 1);
    EXPECT(aborted() == 1 && live() == 0);
    given_up(first);
    OK(hwrt_dist_finalize());
}

static void setup_root(void)
{
    TEST_CASE("ncclGetUniqueId fails on rank 0");
    if (rank == 0) fail_root(3);
    char want[160];
    snprintf(want, sizeof want, "NCCL setup: rank 0 of %d cannot take part: ncclGetUniqueId "
             "failed: internal error (ncclResult 3)", size);
    int c0 = calls();
    hwrt_tensor t = produce(HWRT_FLOAT32, N, 0);
    FAILS(hwrt_allreduce(t, HWRT_REDUCE_SUM, S), HWRT_ERROR_DIST, want);
    OK(hwrt_tensor_release(t));
    EXPECT(calls() == c0 && live() == 0);
    TEST_CASE("the setup again, then ncclCommDestroy fails");
    allreduce_ok(HWRT_FLOAT32, HWRT_REDUCE_SUM);
    EXPECT(live() == 1);
    fail_destroy(3);
    FAILS(hwrt_dist_finalize(), HWRT_ERROR_DIST, "ncclCommDestroy failed: internal error "
                                                 "(ncclResult 3)");
}

static void setup_init(int bad, int code, const char *text)
{
    TEST_CASE("ncclCommInitRank fails on one rank");
    if (rank == bad) fail_init(code);
    char want[200];
    snprintf(want, sizeof want, "NCCL setup: ncclCommInitRank failed on rank %d of %d: "
             "%s (ncclResult %d)", bad, size, text, code);
    int c0 = calls();
    fails_alone(HWRT_ERROR_DIST, want);
    EXPECT(calls() == c0);
    EXPECT(live() == 0);            /* aborted where it was made */
    EXPECT(aborted() == (rank == bad ? 0 : 1));
    TEST_CASE("the setup again");
    allreduce_ok(HWRT_FLOAT32, HWRT_REDUCE_SUM);
    OK(hwrt_dist_finalize());
    EXPECT(live() == 0);
}

static void device(void)
{
    TEST_CASE("a tensor on another device");
    allreduce_ok(HWRT_FLOAT32, HWRT_REDUCE_SUM);
    int other = (rank + 1) % 2;
    OK(hwrt_set_device("cuda", other));
    hwrt_stream s1;
    OK(hwrt_stream_create(&s1, 0));
    int64_t n = N;
    hwrt_tensor t;
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, &n));
    int c0 = calls();
    char want[200];
    snprintf(want, sizeof want, "NCCL: this process's communicator is on device %d, but the "
             "tensor is on device %d", rank, other);
    FAILS(hwrt_allreduce(t, HWRT_REDUCE_SUM, s1), HWRT_ERROR_INVALID_ARGUMENT, want);
    EXPECT(calls() == c0);
    OK(hwrt_tensor_release(t));
    OK(hwrt_stream_destroy(s1));
    TEST_CASE("finalize with the other device current: destroyed on the communicator's");
    OK(hwrt_dist_finalize());
    EXPECT(live() == 0 && aborted() == 0);
}

static void fault(void)
{
    void *cu = dlopen(getenv("HWRT_CUDA_LIBRARY"), RTLD_NOW);
    void (*inject)(unsigned) = cu ? (void (*)(unsigned))dlsym(cu, "cuda_double_inject") : NULL;
    void (*fail_set)(unsigned, int) =
        cu ? (void (*)(unsigned, int))dlsym(cu, "cuda_double_fail_set_current") : NULL;
    EXPECT(inject != NULL && fail_set != NULL);
    if (!inject || !fail_set) return;
    TEST_CASE("the device cannot be made current for NCCL: nothing reaches it");
    allreduce_ok(HWRT_FLOAT32, HWRT_REDUCE_SUM);
    char want[64];
    snprintf(want, sizeof want, "NCCL: device %d could not be made current", rank);
    /* the k-th cuCtxSetCurrent of the collective fails: the engine's is one of them (every
     * rank fails the same one, so no rank is left waiting in NCCL) */
    int found = 0;
    for (int k = 0; k < 32 && !found; k++) {
        hwrt_tensor t = produce(HWRT_FLOAT32, N, 0);
        int c0 = calls();
        fail_set(800, k);              /* CUDA_ERROR_NOT_PERMITTED: not sticky */
        hwrt_status st = hwrt_allreduce(t, HWRT_REDUCE_SUM, S);
        fail_set(0, 0);
        if (st == HWRT_SUCCESS) {
            OK(hwrt_stream_synchronize(S));
            OK(hwrt_tensor_release(t));
            break;
        }
        if (strstr(hwrt_last_error(), want)) {
            found = 1;
            EXPECT(st == HWRT_ERROR_NOT_PERMITTED && strstr(hwrt_last_error(), "cuCtxSetCurrent"));
            EXPECT(calls() == c0);
        }
        OK(hwrt_tensor_release(t));
    }
    EXPECT(found);
    allreduce_ok(HWRT_INT32, HWRT_REDUCE_SUM);     /* the communicator is fine */

    TEST_CASE("a device with a sticky fault: nothing reaches NCCL");
    hwrt_tensor t = produce(HWRT_FLOAT32, N, 0);
    inject(700);                       /* CUDA_ERROR_ILLEGAL_ADDRESS, sticky */
    FAILS(hwrt_stream_synchronize(S), HWRT_ERROR_DEVICE_FAULT, "CUDA_ERROR_ILLEGAL_ADDRESS");
    int c0 = calls();
    FAILS(hwrt_allreduce(t, HWRT_REDUCE_SUM, S), HWRT_ERROR_DEVICE_FAULT, "has a sticky fault");
    EXPECT(calls() == c0);
    hwrt_tensor_release(t);
    hwrt_dist_finalize();
}

#define HOOK(v, name) (*(void **)&v = dlsym(h, name))
int main(int argc, char **argv)
{
    void *h = dlopen(getenv("HWRT_NCCL_LIBRARY"), RTLD_NOW);
    if (!h || !HOOK(fail_root, "nccl_double_fail_root") || !HOOK(fail_init, "nccl_double_fail_init") ||
        !HOOK(fail_next, "nccl_double_fail_next") || !HOOK(fail_destroy, "nccl_double_fail_destroy") ||
        !HOOK(async_err, "nccl_double_async") || !HOOK(live, "nccl_double_live") ||
        !HOOK(calls, "nccl_double_calls") || !HOOK(aborted, "nccl_double_aborted") || argc < 2) {
        fprintf(stderr, "usage: HWRT_NCCL_LIBRARY=<the test double of libnccl> cuda_nccl "
                "<scenario> (%s)\n", h ? "no hooks" : dlerror());
        return 2;
    }
    OK(hwrt_dist_init());
    rank = hwrt_dist_rank();
    size = hwrt_dist_size();
    OK(hwrt_dist_bind_device("cuda"));
    OK(hwrt_stream_create(&S, 0));
    const char *s = argv[1];
    if (!strcmp(s, "data")) {
        data();
        OK(hwrt_barrier());
        OK(hwrt_dist_finalize());
        EXPECT(live() == 0 && aborted() == 0);
    } else if (!strcmp(s, "errors")) errors();
    else if (!strcmp(s, "async")) async();
    else if (!strcmp(s, "setup_root")) setup_root();
    else if (!strcmp(s, "setup_init") && argc == 5) setup_init(atoi(argv[2]), atoi(argv[3]), argv[4]);
    else if (!strcmp(s, "device")) device();
    else if (!strcmp(s, "fault")) fault();
    else if (!strcmp(s, "version") && argc == 3) {
        TEST_CASE("the version NCCL reports");
        hwrt_tensor t = produce(HWRT_FLOAT32, N, 0);
        if (!strcmp(argv[2], "ok")) {
            OK(hwrt_allreduce(t, HWRT_REDUCE_SUM, S));
            EXPECT(calls() == 1);
        } else {
            FAILS(hwrt_allreduce(t, HWRT_REDUCE_SUM, S), HWRT_ERROR_UNAVAILABLE, argv[2]);
            EXPECT(calls() == 0);
        }
        OK(hwrt_tensor_release(t));
        OK(hwrt_dist_finalize());
        EXPECT(live() == 0);
    } else {
        fprintf(stderr, "cuda_nccl: no scenario %s\n", s);
        return 2;
    }
    hwrt_stream_destroy(S);
    hwrt_shutdown();
    printf("rank %d of %d: ", rank, size);
    return test_report();
}
