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
 *   cuda_nccl version V       HWRT_NCCL_DOUBLE_VERSION as set: "ok", or the refusal V
 * What it shares with tests/ascend/ascend_hccl.c is tests/coll_engine_check.h. */
#include "harness.h"
#include "coll_engine_check.h"

static int (*aborted)(void);

/* the last error is exactly "...<tail>" */
static int ends_with(const char *tail)
{
    const char *e = hwrt_last_error();
    size_t a = strlen(e), b = strlen(tail);
    int ok = a >= b && !strcmp(e + a - b, tail);
    if (!ok) fprintf(stderr, "rank %d: error \"%s\" does not end with \"%s\"\n", rank, e, tail);
    return ok;
}

static void data(void)
{
    TEST_CASE("allreduce, every dtype");
    static const coll_case cases[] = {
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
    allreduce_each(cases, sizeof cases / sizeof cases[0]);

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
    broadcast_7_bytes();

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
    static const coll_case rs[] = {
        {HWRT_FLOAT32, HWRT_REDUCE_SUM}, {HWRT_FLOAT32, HWRT_REDUCE_AVG},
        {HWRT_INT32, HWRT_REDUCE_MAX}, {HWRT_INT64, HWRT_REDUCE_AVG},
        {HWRT_BFLOAT16, HWRT_REDUCE_MIN}};
    reduce_scatter_each(rs, sizeof rs / sizeof rs[0]);
}

/* an allreduce failing with status want, its error ending with tail */
static void fails_alone(hwrt_status want, const char *tail)
{
    hwrt_tensor t = produce(HWRT_FLOAT32, N, 0);
    FAILS(hwrt_allreduce(t, HWRT_REDUCE_SUM, S), want, tail);
    EXPECT(ends_with(tail));
    OK(hwrt_tensor_release(t));
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

/* the others' communicators are aborted */
static void init_failed(int bad) { EXPECT(aborted() == (rank == bad ? 0 : 1)); }

static void device(void)
{
    other_device("cuda", (rank + 1) % 2, rank);
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

int main(int argc, char **argv)
{
    coll.engine = "NCCL";
    coll.init = "ncclCommInitRank";
    coll.result = "ncclResult";
    coll.given_up = "); the communicator was aborted";
    coll.init_failed = init_failed;
    if (coll_start(argc, "HWRT_NCCL_LIBRARY", "nccl", "cuda_nccl", "cuda", (void **)&aborted,
                   "aborted"))
        return 2;
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
    return coll_end();
}
