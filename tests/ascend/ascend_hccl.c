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
 *   ascend_hccl old             a library without HcclGetErrorString / GetCommAsyncError
 * What it shares with tests/cuda/cuda_nccl.c is tests/coll_engine_check.h. */
#include "harness.h"
#include "coll_engine_check.h"

static void data(void)
{
    TEST_CASE("allreduce");
    static const coll_case cases[] = {
        {HWRT_FLOAT32, HWRT_REDUCE_SUM}, {HWRT_INT32, HWRT_REDUCE_SUM},
        {HWRT_INT64, HWRT_REDUCE_SUM}, {HWRT_INT8, HWRT_REDUCE_MAX},
        {HWRT_INT8, HWRT_REDUCE_SUM}, {HWRT_INT32, HWRT_REDUCE_MIN},
        {HWRT_FLOAT32, HWRT_REDUCE_PROD}, {HWRT_BFLOAT16, HWRT_REDUCE_SUM},
        {HWRT_FLOAT32, HWRT_REDUCE_AVG}};   /* (the ACL double scales float32 only) */
    allreduce_each(cases, sizeof cases / sizeof cases[0]);

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
    broadcast_7_bytes();

    TEST_CASE("allgather");
    hwrt_tensor in = produce(HWRT_INT32, N, 0), out;
    OK(hwrt_tensor_empty(&out, HWRT_INT32, 1, &big));
    OK(hwrt_allgather(out, in, S));
    EXPECT(equals(out, HWRT_INT32, big, w_gathered, N, "allgather"));
    OK(hwrt_tensor_release(in));
    OK(hwrt_tensor_release(out));

    TEST_CASE("reduce_scatter");
    static const coll_case rs[] = {
        {HWRT_FLOAT32, HWRT_REDUCE_SUM}, {HWRT_FLOAT32, HWRT_REDUCE_AVG}, {HWRT_INT32, HWRT_REDUCE_MAX}};
    reduce_scatter_each(rs, sizeof rs / sizeof rs[0]);

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

static void device(void)
{
    other_device("ascend", 1, 0);
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

int main(int argc, char **argv)
{
    coll.engine = "HCCL";
    coll.init = "HcclCommInitRootInfo";
    coll.result = "HcclResult";
    coll.given_up = "";
    coll.float32_by_op = 1;
    if (coll_start(argc, "HWRT_HCCL_LIBRARY", "hccl", "ascend_hccl", "ascend", NULL, NULL))
        return 2;
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
    return coll_end();
}
