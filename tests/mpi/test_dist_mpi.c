/* Multi-process tests, run under mpirun by CTest (tests/mpi/CMakeLists.txt). One program,
 * one scenario per argv[1]:
 *   collectives  every collective x op x dtype against the host reference, with device
 *                work queued before and after on a non-default stream; once working on
 *                device memory directly, once staged through pinned host buffers
 *   duplicate    every rank on device 0 (the seed's problem 4) -> named error on all ranks
 *   range        more ranks per host than devices -> count and local rank named
 *   global       two (modelled) hosts, device = global rank -> called out
 *   devid        two (modelled) hosts, DEVICE_ID per rank: the global rank called out, a
 *                number past the devices only refused
 *   deadrank     the last rank dies; the others get HWRT_ERROR_DIST within dist_timeout
 *   joined       nothing past init: run_info_line.sh reads the info line (host count)
 * and, on the namespace hosts of tests/mpi/hosts/run_hosts.sh (real host names):
 *   hosts        every rank bound to its own host's device (local rank), in exclusive mode
 *   hostrange    node0 2 ranks, node1 3 ranks, 2 devices each -> node1 named everywhere
 *   deadhost     a host is killed while the ranks run allreduces; the others get
 *                HWRT_ERROR_DIST within dist_timeout
 *   samename     two hosts with one host name: init fails on every rank, naming it
 * HWRT_TEST_EXPECT overrides the sentence fragment that duplicate and global look for.
 * Each rank prints "N passed, M failed" and exits non-zero on any failure. */
#include "harness.h"
#include "dtype_ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HOST_LEN 64

static int rank, size;

static hwrt_tensor make(hwrt_dtype dt, int64_t n, const void *host)
{
    hwrt_tensor t = NULL;
    int64_t shape[1] = {n};
    OK(host ? hwrt_tensor_from_host(&t, dt, 1, shape, host) : hwrt_tensor_empty(&t, dt, 1, shape));
    return t;
}

/* A tensor holding rank r's reference values at elements [base, base + n), produced on
 * stream s by device work (a scale by 1 of an uploaded copy), so that a collective that
 * did not wait for s would read stale data. */
static hwrt_tensor produce(hwrt_dtype dt, int64_t n, int64_t base, hwrt_stream s, void *scratch)
{
    for (int64_t i = 0; i < n; i++) ref_store(dt, scratch, i, ref_value(dt, rank, base + i));
    hwrt_tensor src = make(dt, n, scratch);
    for (int64_t i = 0; i < n; i++) ref_store(dt, scratch, i, 99);
    hwrt_tensor t = make(dt, n, scratch);
    OK(hwrt_op_scale(t, src, 1.0, s));
    OK(hwrt_tensor_release(src));
    return t;
}

/* Copy t out through more device work on s (ordered after the collective). */
static void fetch(hwrt_tensor t, hwrt_dtype dt, int64_t n, hwrt_stream s, void *host)
{
    hwrt_tensor u = make(dt, n, NULL);
    OK(hwrt_op_scale(u, t, 1.0, s));
    OK(hwrt_tensor_copy_to_host(u, host, (size_t)n * hwrt_dtype_size(dt)));
    OK(hwrt_tensor_release(u));
}

static int compare(const char *what, hwrt_dtype dt, const void *got, int64_t n,
                   double (*want)(hwrt_dtype, int64_t, const void *), const void *ctx)
{
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double g = ref_load(dt, got, i), w = want(dt, i, ctx);
        if (g != w) {
            if (bad++ < 3)
                fprintf(stderr, "rank %d: %s %s: element %lld is %g, want %g\n", rank, what,
                        hwrt_dtype_name(dt), (long long)i, g, w);
        }
    }
    return bad;
}

static double want_reduce(hwrt_dtype dt, int64_t i, const void *ctx)
{
    const int64_t *c = ctx;           /* {op, base} */
    return ref_reduce(dt, (hwrt_reduce_op)c[0], size, c[1] + i);
}
static double want_bcast(hwrt_dtype dt, int64_t i, const void *ctx)
{
    return ref_value(dt, *(const int *)ctx, i);
}
static double want_gather(hwrt_dtype dt, int64_t i, const void *ctx)
{
    int64_t n = *(const int64_t *)ctx;
    return ref_value(dt, (int)(i / n), i % n);
}

static const char *const op_names[] = {"sum", "prod", "max", "min", "avg"};

static void collectives_once(hwrt_stream s, const char *mode)
{
    /* allreduce at two sizes, the larger one (>= 64 KiB for every dtype, not divisible by
     * the rank count) taking the ring when HWRT_MPI_RING_BYTES=65536 (the np 4 test) */
    enum { N = 1000, NL = 70001, G = 37, RS = 29 };
    static unsigned char scratch[8 * 4 * NL], got[8 * 4 * NL];
    const int64_t sizes[2] = {N, NL};
    char what[96];
    for (int d = 0; d < REF_NDTYPES; d++) {
        hwrt_dtype dt = ref_dtypes[d];
        for (int op = HWRT_REDUCE_SUM; op <= HWRT_REDUCE_AVG; op++) {
            for (int k = 0; k < 2; k++) {
                snprintf(what, sizeof what, "%s allreduce %s n=%lld", mode, op_names[op],
                         (long long)sizes[k]);
                TEST_CASE(what);
                hwrt_tensor t = produce(dt, sizes[k], 0, s, scratch);
                OK(hwrt_allreduce(t, (hwrt_reduce_op)op, s));
                fetch(t, dt, sizes[k], s, got);
                int64_t ctx[2] = {op, 0};
                EXPECT(compare(what, dt, got, sizes[k], want_reduce, ctx) == 0);
                OK(hwrt_tensor_release(t));
            }

            snprintf(what, sizeof what, "%s reduce_scatter %s", mode, op_names[op]);
            TEST_CASE(what);
            hwrt_tensor in = produce(dt, (int64_t)RS * size, 0, s, scratch);
            hwrt_tensor out = make(dt, RS, NULL);
            OK(hwrt_reduce_scatter(out, in, (hwrt_reduce_op)op, s));
            fetch(out, dt, RS, s, got);
            int64_t ctx2[2] = {op, (int64_t)rank * RS};
            EXPECT(compare(what, dt, got, RS, want_reduce, ctx2) == 0);
            OK(hwrt_tensor_release(in));
            OK(hwrt_tensor_release(out));
        }
        snprintf(what, sizeof what, "%s broadcast", mode);
        TEST_CASE(what);
        int root = d % size;
        hwrt_tensor t = produce(dt, N, 0, s, scratch);
        OK(hwrt_broadcast(t, root, s));
        fetch(t, dt, N, s, got);
        EXPECT(compare(what, dt, got, N, want_bcast, &root) == 0);
        OK(hwrt_tensor_release(t));

        snprintf(what, sizeof what, "%s allgather", mode);
        TEST_CASE(what);
        hwrt_tensor in = produce(dt, G, 0, s, scratch);
        hwrt_tensor out = make(dt, (int64_t)G * size, NULL);
        OK(hwrt_allgather(out, in, s));
        fetch(out, dt, (int64_t)G * size, s, got);
        int64_t g = G;
        EXPECT(compare(what, dt, got, (int64_t)G * size, want_gather, &g) == 0);
        OK(hwrt_tensor_release(in));
        OK(hwrt_tensor_release(out));
    }
}

/* 1M float32 elements: MPI's large-message algorithms, and the default stream. */
static void large_allreduce(void)
{
    TEST_CASE("large allreduce");
    int64_t n = 1 << 20;
    float *h = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) h[i] = (float)ref_value(HWRT_FLOAT32, rank, i);
    hwrt_tensor t = make(HWRT_FLOAT32, n, h);
    OK(hwrt_allreduce(t, HWRT_REDUCE_SUM, NULL));
    OK(hwrt_tensor_copy_to_host(t, h, (size_t)n * 4));
    int64_t ctx[2] = {HWRT_REDUCE_SUM, 0};
    EXPECT(compare("large allreduce", HWRT_FLOAT32, h, n, want_reduce, ctx) == 0);
    OK(hwrt_tensor_release(t));
    free(h);
}

/* A tensor evicted to host memory by the offload manager comes back before the
 * collective reads it. */
static void offloaded_allreduce(void)
{
    TEST_CASE("offloaded tensor");
    int64_t n = 4096;
    float h[4096];
    for (int64_t i = 0; i < n; i++) h[i] = (float)ref_value(HWRT_FLOAT32, rank, i);
    OK(hwrt_set_config("memory_offload", "ON"));
    OK(hwrt_set_config("offload_cpu_size", "16MB"));
    hwrt_tensor t = make(HWRT_FLOAT32, n, h);
    OK(hwrt_tensor_set_offloadable(t, 1));
    OK(hwrt_offload_evict(t));
    int off = -1;
    OK(hwrt_offload_location(t, &off));
    EXPECT(off == 1);                                     /* really in the host tier */
    OK(hwrt_allreduce(t, HWRT_REDUCE_SUM, NULL));
    OK(hwrt_tensor_copy_to_host(t, h, sizeof h));
    int where = -1;
    OK(hwrt_offload_location(t, &where));
    EXPECT(where == 0);                                   /* it came back to the device */
    int64_t ctx[2] = {HWRT_REDUCE_SUM, 0};
    EXPECT(compare("offloaded allreduce", HWRT_FLOAT32, h, n, want_reduce, ctx) == 0);
    OK(hwrt_tensor_release(t));
    OK(hwrt_set_config("memory_offload", "OFF"));
}

static void bad_arguments(void)
{
    TEST_CASE("bad arguments");
    hwrt_tensor a = make(HWRT_FLOAT32, 8, NULL), b = make(HWRT_FLOAT32, 8, NULL);
    hwrt_tensor c = make(HWRT_BOOL, 8, NULL);
    FAILS(hwrt_broadcast(a, size, NULL), HWRT_ERROR_INVALID_ARGUMENT, "is not a rank");
    FAILS(hwrt_allgather(a, b, NULL), HWRT_ERROR_INVALID_ARGUMENT, "must have");
    FAILS(hwrt_allreduce(c, HWRT_REDUCE_SUM, NULL), HWRT_ERROR_INVALID_ARGUMENT, "bool");
    {   /* a dtype without reduction kernels is refused; broadcast moves its bytes */
        uint64_t v[4] = {rank + 1u, UINT64_MAX - (uint64_t)rank, 3, (uint64_t)1 << 63};
        hwrt_tensor u = make(HWRT_UINT64, 4, v);
        FAILS(hwrt_allreduce(u, HWRT_REDUCE_SUM, NULL), HWRT_ERROR_NOT_SUPPORTED, "uint64 tensors");
        FAILS(hwrt_allreduce(u, HWRT_REDUCE_MAX, NULL), HWRT_ERROR_NOT_SUPPORTED, "float32");
        OK(hwrt_broadcast(u, size - 1, NULL));
        uint64_t got[4] = {0};
        OK(hwrt_tensor_copy_to_host(u, got, sizeof got));
        EXPECT(got[0] == (uint64_t)size && got[1] == UINT64_MAX - (uint64_t)(size - 1) &&
               got[2] == 3 && got[3] == (uint64_t)1 << 63);
        OK(hwrt_tensor_release(u));
    }
    FAILS(hwrt_allreduce(a, (hwrt_reduce_op)9, NULL), HWRT_ERROR_INVALID_ARGUMENT, "op 9");
    FAILS(hwrt_allreduce(NULL, HWRT_REDUCE_SUM, NULL), HWRT_ERROR_INVALID_HANDLE, "not a live");
    /* a stream of another device than the tensor's */
    int dev = 0, count = 0;
    OK(hwrt_get_device(&dev));
    OK(hwrt_device_count("sim", &count));
    if (count > 1) {
        hwrt_stream other = NULL;
        OK(hwrt_set_device("sim", (dev + 1) % count));
        OK(hwrt_stream_create(&other, 0));
        FAILS(hwrt_allreduce(a, HWRT_REDUCE_SUM, other), HWRT_ERROR_INVALID_ARGUMENT,
              "the tensor is on device");
        OK(hwrt_stream_destroy(other));
        OK(hwrt_set_device("sim", dev));
    }
    OK(hwrt_tensor_release(a));
    OK(hwrt_tensor_release(b));
    OK(hwrt_tensor_release(c));
}

static void scenario_collectives(void)
{
    TEST_CASE("bind");
    OK(hwrt_dist_bind_device("sim"));
    int dev = -1;
    OK(hwrt_get_device(&dev));
    EXPECT(dev == hwrt_dist_local_rank());
    hwrt_stream s = NULL;
    OK(hwrt_stream_create(&s, 0));
    collectives_once(s, "direct");
    OK(hwrt_set_config("dist_force_staging", "true"));
    collectives_once(s, "staged");
    OK(hwrt_set_config("dist_force_staging", "false"));
    large_allreduce();
    offloaded_allreduce();
    bad_arguments();
    TEST_CASE("barrier");
    OK(hwrt_barrier());
    OK(hwrt_stream_destroy(s));
}

/* Every rank hard-codes device 0: the check (explicit, or in the first collective) names
 * the ranks, the host and the device on every rank. hwrt_dist_bind_device then fixes it. */
static void scenario_duplicate(void)
{
    TEST_CASE("duplicate device");
    OK(hwrt_set_device("sim", 0));
    hwrt_tensor t = make(HWRT_FLOAT32, 4, NULL);
    OK(hwrt_op_fill(t, 1.0, NULL));
    char want[64];
    snprintf(want, sizeof want, "ranks 0, 1%s", size > 2 ? ", 2" : "");
    if (getenv("HWRT_TEST_EXPECT")) snprintf(want, sizeof want, "%s", getenv("HWRT_TEST_EXPECT"));
    FAILS(hwrt_allreduce(t, HWRT_REDUCE_SUM, NULL), HWRT_ERROR_INVALID_DEVICE, want);
    EXPECT(strstr(hwrt_last_error(), "sim device 0") != NULL);
    EXPECT(strstr(hwrt_last_error(), "hwrt_dist_bind_device") != NULL);
    FAILS(hwrt_dist_check_devices(), HWRT_ERROR_INVALID_DEVICE, "problem 4");
    OK(hwrt_tensor_release(t));
    OK(hwrt_dist_bind_device("sim"));
    OK(hwrt_dist_check_devices());
    t = make(HWRT_FLOAT32, 4, NULL);
    OK(hwrt_op_fill(t, 1.0, NULL));
    OK(hwrt_allreduce(t, HWRT_REDUCE_SUM, NULL));
    float h[4];
    OK(hwrt_tensor_copy_to_host(t, h, sizeof h));
    EXPECT(h[0] == (float)size && h[3] == (float)size);
    OK(hwrt_tensor_release(t));
}

/* Run with more ranks on one host than `backend` has devices there (sim: HWRT_SIM_DEVICES=2
 * and 4 ranks; opencl: PoCL's one CPU device and 2 ranks). The sentence names the count,
 * the local rank, and the backend's own way to more devices (never the sim's setting for
 * another backend). */
static void scenario_range(const char *backend)
{
    TEST_CASE("ordinal past the device count");
    int count = 0;
    OK(hwrt_device_count(backend, &count));
    EXPECT(count > 0 && count < size);       /* the scenario needs more ranks than devices */
    hwrt_status st = hwrt_dist_bind_device(backend);
    EXPECT(st == HWRT_ERROR_INVALID_DEVICE);
    const char *e = hwrt_last_error();
    char want[64];
    snprintf(want, sizeof want, "backend %s has only %d devices", backend, count);
    EXPECT(strstr(e, want) != NULL);
    /* ranks from `count` on report themselves; the others quote rank `count` */
    snprintf(want, sizeof want, "local rank %d of %d", rank >= count ? rank : count, size);
    EXPECT(strstr(e, want) != NULL);
    EXPECT(rank >= count || strstr(e, "could not bind") != NULL);
    snprintf(want, sizeof want, "or give the host %d devices", size);
    EXPECT(strstr(e, want) != NULL);
    if (!strcmp(backend, "sim"))
        EXPECT(strstr(e, "(set HWRT_SIM_DEVICES for more simulated devices)") != NULL);
    else
        EXPECT(strstr(e, "HWRT_SIM") == NULL);
    if (st != HWRT_ERROR_INVALID_DEVICE || !strstr(e, want))
        fprintf(stderr, "rank %d got: %s\n", rank, e);
}

/* Run as two modelled hosts (HWRT_DIST_HOSTNAME) of 2 ranks, HWRT_SIM_DEVICES=4. */
static void scenario_global(void)
{
    TEST_CASE("global rank as device");
    EXPECT(hwrt_dist_local_rank() == rank % 2);
    OK(hwrt_set_device("sim", rank));              /* the seed's set_device(rank) */
    FAILS(hwrt_dist_check_devices(), HWRT_ERROR_INVALID_DEVICE, "GLOBAL rank");
    const char *want = getenv("HWRT_TEST_EXPECT") ? getenv("HWRT_TEST_EXPECT") : "rank 2 on host nodeB";
    EXPECT(strstr(hwrt_last_error(), want) != NULL);
    EXPECT(strstr(hwrt_last_error(), "local rank 0") != NULL);
    OK(hwrt_dist_bind_device("sim"));
    int dev = -1;
    OK(hwrt_get_device(&dev));
    EXPECT(dev == rank % 2);
}

/* Two modelled hosts of 2 ranks, HWRT_SIM_DEVICES=2, DEVICE_ID set per rank by the
 * launch (0, 1, 2, 7): rank 2, whose DEVICE_ID is its global rank, is told that the device
 * is its local rank; rank 3's (7) is only too large; ranks 0 and 1 stop with them, quoting
 * rank 2 (issue
 * 25's hunt run 4001, bind.c: `dev_id == d->rank` made `!=` swapped the two sentences). */
static void scenario_devid(void)
{
    TEST_CASE("DEVICE_ID per rank");
    const char *v = getenv("DEVICE_ID");
    int id = v ? atoi(v) : -1;
    EXPECT(id == (rank < 3 ? rank : 7));
    if (rank < 2) {                   /* their devices exist, but two ranks failed: all stop */
        FAILS(hwrt_dist_bind_device("sim"), HWRT_ERROR_INVALID_DEVICE,
              "2 rank(s) could not bind a device, so every rank stops here");
        EXPECT(strstr(hwrt_last_error(), "rank 2 (host nodeB) said: hwrt_dist_bind_device: "
                      "DEVICE_ID=2 is rank 2's GLOBAL rank") != NULL);
    } else if (rank == 2) {
        FAILS(hwrt_dist_bind_device("sim"), HWRT_ERROR_INVALID_DEVICE,
              "DEVICE_ID=2 is rank 2's GLOBAL rank, but it is local rank 0 of 2 on host nodeB");
        EXPECT(strstr(hwrt_last_error(), "Set DEVICE_ID=0 (or unset it)") != NULL);
    } else {
        FAILS(hwrt_dist_bind_device("sim"), HWRT_ERROR_INVALID_DEVICE,
              "DEVICE_ID=7 but backend sim has only 2 devices on host nodeB (0..1); rank 3 is "
              "local rank 1 there");
    }
}

static void my_host(char *buf)
{
    memset(buf, 0, HOST_LEN);
    if (gethostname(buf, HOST_LEN - 1) != 0) snprintf(buf, HOST_LEN, "?");
}

/* Every rank's host name, gathered through hwrt itself (uint8 tensors). */
static void gather_hosts(char (*hosts)[HOST_LEN])
{
    char me[HOST_LEN];
    my_host(me);
    hwrt_tensor in = make(HWRT_UINT8, HOST_LEN, me), out = make(HWRT_UINT8, (int64_t)HOST_LEN * size, NULL);
    OK(hwrt_allgather(out, in, NULL));
    OK(hwrt_tensor_copy_to_host(out, hosts, (size_t)HOST_LEN * size));
    OK(hwrt_tensor_release(in));
    OK(hwrt_tensor_release(out));
}

/* Namespace hosts, each with its own simulated devices and its own registry (a /dev/shm of
 * its own), HWRT_SIM_EXCLUSIVE=1: each rank binds its host's device = its local rank; a
 * device the other local rank holds is refused, the same ordinal on another host is not. */
static void scenario_hosts(void)
{
    TEST_CASE("local ranks across hosts");
    hwrt_dist_info info;
    OK(hwrt_dist_detect(&info));
    EXPECT(!strcmp(info.launcher, "openmpi"));   /* also inside a Slurm allocation */
    OK(hwrt_dist_bind_device("sim"));
    int dev = -1, count = 0;
    OK(hwrt_get_device(&dev));
    OK(hwrt_device_count("sim", &count));
    char (*hosts)[HOST_LEN] = calloc((size_t)size, HOST_LEN);
    gather_hosts(hosts);
    int local = 0, local_size = 0, nhosts = 0;
    for (int r = 0; r < size; r++) {
        int same = !strcmp(hosts[r], hosts[rank]), first = 1;
        local_size += same;
        local += same && r < rank;
        for (int q = 0; q < r; q++) first &= strcmp(hosts[q], hosts[r]) != 0;
        nhosts += first;
    }
    const char *want_hosts = getenv("HWRT_TEST_HOSTS");
    EXPECT(want_hosts && nhosts == atoi(want_hosts));
    EXPECT(hwrt_dist_local_rank() == local && dev == local);
    EXPECT(info.local_rank == local);            /* Open MPI's own word agrees */
    printf("HOSTS rank %d host %s local_rank %d of %d device %d of %d (%d hosts)\n", rank,
           hosts[rank], hwrt_dist_local_rank(), local_size, dev, count, nhosts);

    TEST_CASE("exclusive devices are per host");
    if (count > 1 && local_size > 1) {
        int other = (dev + 1) % count;
        FAILS(hwrt_set_device("sim", other), HWRT_ERROR_DEVICE_BUSY, "held");
        OK(hwrt_set_device("sim", dev));
    }
    hwrt_tensor t = make(HWRT_INT32, 64, NULL);
    OK(hwrt_op_fill(t, (double)(rank + 1), NULL));
    OK(hwrt_allreduce(t, HWRT_REDUCE_SUM, NULL));
    int32_t h[64];
    OK(hwrt_tensor_copy_to_host(t, h, sizeof h));
    EXPECT(h[0] == size * (size + 1) / 2 && h[63] == h[0]);
    OK(hwrt_tensor_release(t));
    free(hosts);
}

/* node0 runs 2 ranks, node1 3 (ranks 2, 3, 4), 2 devices each: rank 4 is local rank 2 of
 * 3 on node1; every rank stops with that host named. */
static void scenario_hostrange(void)
{
    TEST_CASE("ordinal past the device count on one host");
    hwrt_status st = hwrt_dist_bind_device("sim");
    EXPECT(st == HWRT_ERROR_INVALID_DEVICE);
    const char *e = hwrt_last_error();
    EXPECT(strstr(e, rank == 4 ? "rank 4 is local rank 2 of 3 on host node1"
                               : "rank 4 (host node1) said") != NULL);
    EXPECT(strstr(e, "only 2 devices") != NULL);
    if (st != HWRT_ERROR_INVALID_DEVICE || !strstr(e, "node1"))
        fprintf(stderr, "rank %d got: %s\n", rank, e);
    printf("HOSTRANGE rank %d: %s\n", rank, e);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The last rank dies after the group formed; the others must not hang. */
static void scenario_deadrank(void)
{
    TEST_CASE("dead rank");
    OK(hwrt_set_config("dist_timeout", "2"));
    OK(hwrt_dist_bind_device("sim"));
    hwrt_tensor t = make(HWRT_FLOAT32, 1 << 16, NULL);
    OK(hwrt_op_fill(t, 1.0, NULL));
    OK(hwrt_allreduce(t, HWRT_REDUCE_SUM, NULL));         /* everyone alive */
    if (rank == size - 1) {
        fflush(NULL);
        _exit(0);                                          /* dies without a word */
    }
    double t0 = now_s();
    FAILS(hwrt_allreduce(t, HWRT_REDUCE_SUM, NULL), HWRT_ERROR_DIST, "dist_timeout");
    double waited = now_s() - t0;
    /* a functional bound (it returned instead of hanging), far above the 2 s timeout */
    EXPECT(waited < 60.0);
    FAILS(hwrt_barrier(), HWRT_ERROR_DIST, "earlier collective");
    OK(hwrt_tensor_release(t));
    OK(hwrt_dist_finalize());                              /* skips MPI_Finalize */
    printf("DEADRANK-OK rank %d returned HWRT_ERROR_DIST after %.1f s\n", rank, waited);
}

/* Run on the namespace hosts: every rank reports DEADHOST-READY, then runs allreduces
 * until one fails. The harness kills the host named by HWRT_TEST_DOOMED_HOST meanwhile
 * (cable pulled, every process on it SIGKILLed); the others must return HWRT_ERROR_DIST
 * within dist_timeout (HWRT_DIST_TIMEOUT in the hosts' environment) of their last
 * completed allreduce (or sooner, with MPI's error), and refuse later collectives at once. */
static void scenario_deadhost(void)
{
    TEST_CASE("dead host");
    char host[HOST_LEN], timeout[32];
    my_host(host);
    OK(hwrt_get_config("dist_timeout", timeout, sizeof timeout));
    OK(hwrt_dist_bind_device("sim"));
    hwrt_tensor t = make(HWRT_FLOAT32, 1 << 16, NULL);
    OK(hwrt_op_fill(t, (double)rank, NULL));
    OK(hwrt_allreduce(t, HWRT_REDUCE_MAX, NULL));          /* everyone alive */
    printf("DEADHOST-READY rank %d host %s\n", rank, host);
    fflush(stdout);
    double start = now_s(), last = start;
    long done = 0;
    hwrt_status st;
    /* MAX keeps the values at size - 1; a run with no death ends after 120 s and fails */
    while ((st = hwrt_allreduce(t, HWRT_REDUCE_MAX, NULL)) == HWRT_SUCCESS && last - start < 120) {
        last = now_s();
        done++;
    }
    double waited = now_s() - last;
    /* the deadline, or sooner MPI's own error where its TCP transport saw the connection
     * reset (a write to it failed with EPIPE: the process must not die of that SIGPIPE) */
    const char *why = strstr(hwrt_last_error(), "dist_timeout") ? "its deadline"
                      : strstr(hwrt_last_error(), "a peer rank has probably died") ? "an MPI error"
                      : NULL;
    EXPECT(st == HWRT_ERROR_DIST && why);
    if (st != HWRT_ERROR_DIST)
        fprintf(stderr, "rank %d: allreduce -> %s after %ld ok: %s\n", rank,
                hwrt_status_name(st), done, hwrt_last_error());
    EXPECT(waited < 60.0);             /* it returned: a functional bound, not a timing */
    EXPECT(done > 0);                  /* the host died mid-loop, not before it */
    FAILS(hwrt_barrier(), HWRT_ERROR_DIST, "earlier collective");
    OK(hwrt_tensor_release(t));
    OK(hwrt_dist_finalize());
    printf("DEADHOST-OK rank %d host %s returned HWRT_ERROR_DIST (%s) %.1f s after its last of "
           "%ld allreduces (dist_timeout %s s)\n", rank, host, why ? why : "?", waited, done,
           timeout);
}

/* node1 answers to node0 as well: Open MPI's local ranks (0, 1 on each machine) disagree
 * with the host names (0..3 on "node0"); init must say so on every rank, not bind 4 ranks
 * to one "host" of 2 devices. */
static int scenario_samename(hwrt_status st)
{
    TEST_CASE("two machines, one host name");
    rank = atoi(getenv("OMPI_COMM_WORLD_RANK") ? getenv("OMPI_COMM_WORLD_RANK") : "-1");
    EXPECT(st == HWRT_ERROR_DIST);
    EXPECT(strstr(hwrt_last_error(), "rank 2 is local rank 0 by its openmpi launcher but 2 by "
                                     "host names: 4 ranks report host name 'node0'") != NULL);
    EXPECT(strstr(hwrt_last_error(), "HWRT_DIST_HOSTNAME") != NULL);
    printf("SAMENAME rank %d: %s: %s\n", rank, hwrt_status_name(st), hwrt_last_error());
    FAILS(hwrt_dist_init(), HWRT_ERROR_DIST, "");        /* refused again, no crash */
    return test_report();
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "collectives";
    hwrt_status st = hwrt_dist_init();
    if (!strcmp(mode, "samename")) return scenario_samename(st);
    if (st != HWRT_SUCCESS) {
        fprintf(stderr, "hwrt_dist_init: %s: %s\n", hwrt_status_name(st), hwrt_last_error());
        return 1;
    }
    rank = hwrt_dist_rank();
    size = hwrt_dist_size();
    if (!strcmp(mode, "collectives")) scenario_collectives();
    else if (!strcmp(mode, "duplicate")) scenario_duplicate();
    else if (!strcmp(mode, "range")) scenario_range(argc > 2 ? argv[2] : "sim");
    else if (!strcmp(mode, "global")) scenario_global();
    else if (!strcmp(mode, "devid")) scenario_devid();
    else if (!strcmp(mode, "deadrank")) scenario_deadrank();
    else if (!strcmp(mode, "hosts")) scenario_hosts();
    else if (!strcmp(mode, "hostrange")) scenario_hostrange();
    else if (!strcmp(mode, "deadhost")) scenario_deadhost();
    else if (!strcmp(mode, "joined")) TEST_CASE("joined");
    else { fprintf(stderr, "unknown scenario %s\n", mode); return 2; }
    if (!strcmp(mode, "deadrank") || !strcmp(mode, "deadhost")) {
        int rc = test_report();
        fflush(NULL);
        /* MPI cannot be finalized with a dead peer; a dead-rank survivor still runs the
         * exit handlers (a coverage build's counters are written there) */
        if (!strcmp(mode, "deadrank")) exit(rc);
        _exit(rc);
    }
    TEST_CASE("finalize");
    OK(hwrt_dist_finalize());
    /* hwrt started MPI and finalized it: a second join is refused, not a crash */
    FAILS(hwrt_dist_init(), HWRT_ERROR_DIST, "already finalized");
    int rc = test_report();
    hwrt_shutdown();
    return rc;
}
