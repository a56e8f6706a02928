/* Fault injection (HWRT_SIM_FAULTS) end to end: each fault surfaces at the documented
 * call with DEVICE_FAULT / OUT_OF_MEMORY and a sentence naming it, the state stays
 * consistent (figures, other devices, handles), recovery works (hwrt_device_reset, a
 * retry, hwrt_shutdown), and no data is lost: device data written before a fault is
 * checked by checksum after it, and re-issued work gives the exact results.
 * Faults are re-armed at run time by setting the variable and calling hwrt_shutdown. */
#include "harness.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

enum { N = 4096 };
static int faults_seen;            /* injected faults that surfaced, for the report */

static void arm(const char *spec)
{
    hwrt_shutdown();
    if (spec) setenv("HWRT_SIM_FAULTS", spec, 1);
    else unsetenv("HWRT_SIM_FAULTS");
    OK(hwrt_set_device("sim", 0));
}

static uint64_t checksum(const void *p, size_t n)     /* FNV-1a */
{
    const unsigned char *c = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

static int all_equal(const float *f, int n, float v)
{
    for (int i = 0; i < n; i++)
        if (f[i] != v) return 0;
    return 1;
}

/* alloc: the failing call gets OUT_OF_MEMORY naming the injected fault; what was
 * allocated before is intact and counted; a later allocation works. Sizes are large and
 * distinct so a caching pool cannot serve them from cache. */
static void test_alloc(void)
{
    TEST_CASE("alloc");
    arm("alloc:from=3:times=2");
    enum { MB = 1 << 20 };
    void *p[4] = {0};
    static unsigned char pat[N], back[N];
    for (int i = 0; i < N; i++) pat[i] = (unsigned char)(i * 31 + 7);
    OK(hwrt_malloc(&p[0], 32 * MB));
    OK(hwrt_malloc(&p[1], 34 * MB));
    OK(hwrt_memcpy(p[0], pat, N, HWRT_MEMCPY_HOST_TO_DEVICE));
    hwrt_memory_info before, after;
    OK(hwrt_get_memory_info(0, &before));
    FAILS(hwrt_malloc(&p[2], 36 * MB), HWRT_ERROR_OUT_OF_MEMORY, "injected allocation failure");
    EXPECT(strstr(hwrt_last_error(), "alloc:from=3:times=2") != NULL);
    EXPECT(p[2] == NULL);
    faults_seen++;
    OK(hwrt_get_memory_info(0, &after));
    EXPECT(after.allocated == before.allocated);     /* the failed call changed nothing */
    /* recovery: within the clause's two hits the allocation succeeds again */
    hwrt_status st = hwrt_malloc(&p[2], 38 * MB);
    if (st != HWRT_SUCCESS) {
        EXPECT(st == HWRT_ERROR_OUT_OF_MEMORY);
        faults_seen++;
        st = hwrt_malloc(&p[2], 38 * MB);
    }
    EXPECT(st == HWRT_SUCCESS && p[2] != NULL);
    OK(hwrt_memcpy(back, p[0], N, HWRT_MEMCPY_DEVICE_TO_HOST));
    EXPECT(checksum(back, N) == checksum(pat, N));
    for (int i = 0; i < 3; i++) OK(hwrt_free(p[i]));
    /* a tensor's allocation fails the same way and leaves no tensor behind */
    /* two hits: a pool that retries once after an OOM still reports the first call */
    arm("alloc:from=1:times=2");
    hwrt_tensor t = NULL;
    int64_t shape[1] = {N};
    FAILS(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape), HWRT_ERROR_OUT_OF_MEMORY,
          "injected allocation failure");
    faults_seen++;
    if (hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape) != HWRT_SUCCESS) faults_seen++;
    else OK(hwrt_tensor_release(t));
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    OK(hwrt_tensor_release(t));
}

/* kernel: sticky until reset, on that device only; output not written; memory survives;
 * re-issued work is exact. */
static void test_kernel(void)
{
    TEST_CASE("kernel");
    arm("kernel:nth=2");
    static float in[N], out[N];
    for (int i = 0; i < N; i++) in[i] = (float)(i % 97) - 48.0f;
    uint64_t in_sum = checksum(in, sizeof in);
    int64_t shape[1] = {N};
    hwrt_tensor a, b, c;
    OK(hwrt_tensor_from_host(&a, HWRT_FLOAT32, 1, shape, in));
    OK(hwrt_tensor_empty(&b, HWRT_FLOAT32, 1, shape));
    OK(hwrt_tensor_empty(&c, HWRT_FLOAT32, 1, shape));
    hwrt_stream s;
    OK(hwrt_stream_create(&s, 0));
    OK(hwrt_op_scale(b, a, 2.0, s));          /* kernel 1: runs */
    OK(hwrt_op_add(c, b, a, s));              /* kernel 2: faults (enqueue succeeds) */
    OK(hwrt_op_relu(c, c, s));                /* kernel 3: skipped */
    FAILS(hwrt_stream_synchronize(s), HWRT_ERROR_DEVICE_FAULT, "kernel Add");
    EXPECT(strstr(hwrt_last_error(), "hwrt_device_reset(0)") != NULL);
    faults_seen++;
    /* sticky: every synchronizing call of device 0 reports it */
    FAILS(hwrt_stream_synchronize(s), HWRT_ERROR_DEVICE_FAULT, "injected");
    FAILS(hwrt_device_synchronize(), HWRT_ERROR_DEVICE_FAULT, "sticky fault");
    FAILS(hwrt_tensor_copy_to_host(b, out, sizeof out), HWRT_ERROR_DEVICE_FAULT, "sticky");
    EXPECT(hwrt_stream_query(s) == HWRT_ERROR_DEVICE_FAULT);
    /* device 1 is not affected */
    OK(hwrt_set_device("sim", 1));
    hwrt_tensor d1;
    OK(hwrt_tensor_from_host(&d1, HWRT_FLOAT32, 1, shape, in));
    OK(hwrt_op_scale(d1, d1, 3.0, NULL));
    OK(hwrt_tensor_copy_to_host(d1, out, sizeof out));
    int ok1 = 1;
    for (int i = 0; i < N; i++) ok1 &= out[i] == 3.0f * in[i];
    EXPECT(ok1);
    OK(hwrt_tensor_release(d1));
    OK(hwrt_set_device("sim", 0));
    /* recovery */
    OK(hwrt_device_reset(0));
    OK(hwrt_stream_synchronize(s));
    OK(hwrt_tensor_copy_to_host(a, out, sizeof out));
    EXPECT(checksum(out, sizeof out) == in_sum);       /* input survived the fault */
    OK(hwrt_tensor_copy_to_host(b, out, sizeof out));
    int okb = 1;
    for (int i = 0; i < N; i++) okb &= out[i] == 2.0f * in[i];
    EXPECT(okb);                                       /* kernel 1's result survived */
    OK(hwrt_op_add(c, b, a, s));                       /* re-issue the lost work */
    OK(hwrt_op_relu(c, c, s));
    OK(hwrt_tensor_copy_to_host(c, out, sizeof out));
    int okc = 1;
    for (int i = 0; i < N; i++) okc &= out[i] == (3.0f * in[i] > 0 ? 3.0f * in[i] : 0.0f);
    EXPECT(okc);
    OK(hwrt_stream_destroy(s));
    OK(hwrt_tensor_release(a));
    OK(hwrt_tensor_release(b));
    OK(hwrt_tensor_release(c));
}

/* copy: an async H2D fails on its engine, the destination keeps its old bytes; a
 * blocking (pageable) copy reports the fault at the call itself. */
static void test_copy(void)
{
    TEST_CASE("copy");
    arm("copy:nth=3");
    static unsigned char old_b[N], new_b[N], back[N];
    for (int i = 0; i < N; i++) { old_b[i] = (unsigned char)i; new_b[i] = (unsigned char)(255 - i); }
    void *d, *pinned;
    OK(hwrt_malloc(&d, N));
    OK(hwrt_host_alloc(&pinned, N, HWRT_HOST_PINNED));
    OK(hwrt_memcpy(d, old_b, N, HWRT_MEMCPY_HOST_TO_DEVICE));          /* copy 1 */
    memcpy(pinned, new_b, N);
    hwrt_stream s;
    OK(hwrt_stream_create(&s, 0));
    OK(hwrt_memset_async(d, 1, 0, s));                                 /* no-op, no copy */
    OK(hwrt_memcpy_async(d, pinned, N / 2, HWRT_MEMCPY_HOST_TO_DEVICE, s)); /* copy 2 */
    OK(hwrt_memcpy_async(d, pinned, N, HWRT_MEMCPY_HOST_TO_DEVICE, s));     /* copy 3: fails */
    FAILS(hwrt_stream_synchronize(s), HWRT_ERROR_DEVICE_FAULT, "H2D copy of 4096 bytes failed");
    faults_seen++;
    FAILS(hwrt_memcpy(back, d, N, HWRT_MEMCPY_DEVICE_TO_HOST), HWRT_ERROR_DEVICE_FAULT,
          "hwrt_device_reset(0)");
    OK(hwrt_device_reset(0));
    OK(hwrt_memcpy(back, d, N, HWRT_MEMCPY_DEVICE_TO_HOST));
    /* copy 2 landed, copy 3 did not: first half new, second half old */
    EXPECT(!memcmp(back, new_b, N / 2) && !memcmp(back + N / 2, old_b + N / 2, N / 2));
    OK(hwrt_memcpy_async(d, pinned, N, HWRT_MEMCPY_HOST_TO_DEVICE, s)); /* retry */
    OK(hwrt_stream_synchronize(s));
    OK(hwrt_memcpy(back, d, N, HWRT_MEMCPY_DEVICE_TO_HOST));
    EXPECT(checksum(back, N) == checksum(new_b, N));
    OK(hwrt_stream_destroy(s));
    OK(hwrt_free(d));
    /* the blocking call that faults reports it itself */
    arm("copy:nth=1");
    OK(hwrt_malloc(&d, N));
    FAILS(hwrt_memcpy(d, new_b, N, HWRT_MEMCPY_HOST_TO_DEVICE), HWRT_ERROR_DEVICE_FAULT,
          "injected link error");
    faults_seen++;
    OK(hwrt_device_reset(0));
    OK(hwrt_memcpy(d, new_b, N, HWRT_MEMCPY_HOST_TO_DEVICE));
    OK(hwrt_memcpy(back, d, N, HWRT_MEMCPY_DEVICE_TO_HOST));
    EXPECT(checksum(back, N) == checksum(new_b, N));
    OK(hwrt_free(d));
    OK(hwrt_host_free(pinned));
}

/* launch_blocking: the op that faults reports it at its own call. */
static void test_launch_blocking(void)
{
    TEST_CASE("launch_blocking");
    arm("kernel:nth=2");
    OK(hwrt_set_config("launch_blocking", "1"));
    int64_t shape[1] = {64};
    hwrt_tensor t;
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    OK(hwrt_op_fill(t, 1.0, NULL));
    FAILS(hwrt_op_fill(t, 2.0, NULL), HWRT_ERROR_DEVICE_FAULT, "kernel Fill");
    faults_seen++;
    OK(hwrt_device_reset(0));
    OK(hwrt_set_config("launch_blocking", "0"));
    float out[64];
    OK(hwrt_tensor_copy_to_host(t, out, sizeof out));
    EXPECT(all_equal(out, 64, 1.0f));
    OK(hwrt_tensor_release(t));
}

/* hwrt_device_reset synchronizes first: work queued before the reset behind a gate is
 * settled (skipped by the fault) by the time reset returns, not left to race with it. */
static atomic_int gate_open;
static void gate(void *arg) { (void)arg; while (!atomic_load(&gate_open)) usleep(200); }
static void *opener(void *arg) { (void)arg; usleep(20000); atomic_store(&gate_open, 1); return NULL; }

static void test_reset_settles_queue(void)
{
    TEST_CASE("reset_sync");
    arm("kernel:nth=1");
    int64_t shape[1] = {64};
    float ones[64], out[64];
    for (int i = 0; i < 64; i++) ones[i] = 1.0f;
    hwrt_tensor t;
    OK(hwrt_tensor_from_host(&t, HWRT_FLOAT32, 1, shape, ones));
    atomic_store(&gate_open, 0);
    OK(hwrt_launch_host_func(NULL, gate, NULL));
    OK(hwrt_op_fill(t, 5.0, NULL));     /* faults once the gate opens */
    OK(hwrt_op_fill(t, 6.0, NULL));     /* skipped */
    pthread_t th;
    pthread_create(&th, NULL, opener, NULL);
    OK(hwrt_device_reset(0));
    pthread_join(th, NULL);
    faults_seen++;
    OK(hwrt_device_synchronize());      /* the reset cleared the fault the queue raised */
    OK(hwrt_tensor_copy_to_host(t, out, sizeof out));
    EXPECT(all_equal(out, 64, 1.0f));   /* both fills were skipped, the data is intact */
    OK(hwrt_tensor_release(t));
}

/* Random kernel faults (p=0.2, seeded) on device 1 only, during a long computation:
 * every fault is caught at the sync, the step re-issued after a reset, and the final
 * values are exact. Device 0 runs the same steps without a single fault. */
static void test_random_with_retry(void)
{
    TEST_CASE("random");
    arm("kernel:p=0.2:dev=1,seed=42");
    enum { M = 1024, STEPS = 200 };
    int64_t shape[1] = {M};
    static float acc_h[M], out[M];
    for (int i = 0; i < M; i++) acc_h[i] = 0.0f;
    hwrt_tensor acc[2], one[2];
    for (int dev = 0; dev < 2; dev++) {
        OK(hwrt_set_device("sim", dev));
        OK(hwrt_tensor_from_host(&acc[dev], HWRT_FLOAT32, 1, shape, acc_h));
        OK(hwrt_tensor_empty(&one[dev], HWRT_FLOAT32, 1, shape));
    }
    int faults[2] = {0, 0};
    for (int step = 0; step < STEPS; step++) {
        for (int dev = 0; dev < 2; dev++) {
            OK(hwrt_set_device("sim", dev));
            for (int tries = 0; tries < 50; tries++) {
                /* a step: one = 1; acc = acc + one (two kernels; a fault in the first
                 * skips the second, a fault in the second leaves acc unchanged) */
                OK(hwrt_op_fill(one[dev], 1.0, NULL));
                OK(hwrt_op_add(acc[dev], acc[dev], one[dev], NULL));
                hwrt_status st = hwrt_device_synchronize();
                if (st == HWRT_SUCCESS) break;
                EXPECT(st == HWRT_ERROR_DEVICE_FAULT && strstr(hwrt_last_error(), "injected"));
                faults[dev]++;
                OK(hwrt_device_reset(dev));
            }
        }
    }
    for (int dev = 0; dev < 2; dev++) {
        OK(hwrt_set_device("sim", dev));
        OK(hwrt_tensor_copy_to_host(acc[dev], out, sizeof out));
        EXPECT(all_equal(out, M, (float)STEPS));
        OK(hwrt_tensor_release(acc[dev]));
        OK(hwrt_tensor_release(one[dev]));
    }
    EXPECT(faults[0] == 0);
    EXPECT(faults[1] > 0);
    faults_seen += faults[1];
    printf("random kernel faults on device 1: %d in %d steps, all recovered\n", faults[1], STEPS);
    OK(hwrt_set_device("sim", 0));
}

/* p= takes both ends of 0..1: p=0 never fires, p=1 fires at every call (the mutant
 * `p >= 0` made `> 0` refused p=0 and the sim would not start); outside them the sim
 * refuses to start, naming the clause. */
static void test_probability_ends(void)
{
    TEST_CASE("p=0 and p=1");
    int64_t shape[1] = {64};
    hwrt_tensor t;
    arm("kernel:p=0");
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    for (int i = 0; i < 50; i++) OK(hwrt_op_fill(t, (double)i, NULL));
    OK(hwrt_device_synchronize());
    OK(hwrt_tensor_release(t));
    arm("kernel:p=1");
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    for (int i = 0; i < 3; i++) {
        OK(hwrt_op_fill(t, 1.0, NULL));
        FAILS(hwrt_device_synchronize(), HWRT_ERROR_DEVICE_FAULT, "kernel:p=1");
        faults_seen++;
        OK(hwrt_device_reset(0));
    }
    OK(hwrt_tensor_release(t));
    hwrt_shutdown();
    setenv("HWRT_SIM_FAULTS", "kernel:p=1.5", 1);
    FAILS(hwrt_set_device("sim", 0), HWRT_ERROR_UNAVAILABLE, "\"1.5\" is not a valid value for p");
    setenv("HWRT_SIM_FAULTS", "kernel:p=-0.1", 1);
    FAILS(hwrt_set_device("sim", 0), HWRT_ERROR_UNAVAILABLE, "\"-0.1\" is not a valid value for p");
    arm(NULL);
}

/* dev=0 filters like any other device: a clause for device 0 neither counts nor hits the
 * kernels of device 1 (the mutant `c->dev > 0` made every device eligible, so device 1's
 * kernel was the clause's second call and faulted). */
static void test_dev0_filter(void)
{
    TEST_CASE("dev=0 filter");
    arm("kernel:nth=2:dev=0");
    int64_t shape[1] = {64};
    float out[64];
    hwrt_tensor t[2];
    for (int dev = 0; dev < 2; dev++) {
        OK(hwrt_set_device("sim", dev));
        OK(hwrt_tensor_empty(&t[dev], HWRT_FLOAT32, 1, shape));
        OK(hwrt_op_fill(t[dev], 2.0, NULL));
        OK(hwrt_device_synchronize());
    }
    OK(hwrt_tensor_copy_to_host(t[1], out, sizeof out));
    EXPECT(all_equal(out, 64, 2.0f));
    OK(hwrt_set_device("sim", 0));                 /* device 0's second kernel faults */
    OK(hwrt_op_fill(t[0], 3.0, NULL));
    FAILS(hwrt_device_synchronize(), HWRT_ERROR_DEVICE_FAULT, "injected");
    faults_seen++;
    OK(hwrt_device_reset(0));
    for (int dev = 0; dev < 2; dev++) {
        OK(hwrt_set_device("sim", dev));
        OK(hwrt_tensor_release(t[dev]));
    }
    OK(hwrt_set_device("sim", 0));
    /* dev= names a device the sim can have, 0..63 (seed 3012's sim_fault.c:116 survivor,
     * the bound made SIM_MAX_DEVICES + 1, took 64 and 65) */
    hwrt_shutdown();
    setenv("HWRT_SIM_FAULTS", "kernel:nth=1:dev=64", 1);
    FAILS(hwrt_set_device("sim", 0), HWRT_ERROR_UNAVAILABLE, "\"64\" is not a valid value for dev");
    arm("kernel:nth=1:dev=63");                     /* the last one is taken */
}

/* stall: every host-link copy is held; ordering through events stays right. */
static void test_stall(void)
{
    TEST_CASE("stall");
    arm("stall:ms=20:every=2");
    static unsigned char a[N], b[N];
    for (int i = 0; i < N; i++) a[i] = (unsigned char)(i ^ 0x5a);
    void *d, *pin;
    OK(hwrt_malloc(&d, N));
    OK(hwrt_host_alloc(&pin, N, HWRT_HOST_PINNED));
    memcpy(pin, a, N);
    hwrt_stream s1, s2;
    hwrt_event e;
    OK(hwrt_stream_create(&s1, 0));
    OK(hwrt_stream_create(&s2, 0));
    OK(hwrt_event_create(&e, 0));
    for (int round = 0; round < 4; round++) {
        OK(hwrt_memset_async(d, 0, N, s1));
        OK(hwrt_memcpy_async(d, pin, N, HWRT_MEMCPY_HOST_TO_DEVICE, s1));   /* stalled */
        OK(hwrt_event_record(e, s1));
        OK(hwrt_stream_wait_event(s2, e));
        OK(hwrt_memcpy_async(b, d, N, HWRT_MEMCPY_DEVICE_TO_HOST, s2));     /* after it */
        OK(hwrt_stream_synchronize(s2));
        EXPECT(!memcmp(a, b, N));
    }
    OK(hwrt_event_destroy(e));
    OK(hwrt_stream_destroy(s1));
    OK(hwrt_stream_destroy(s2));
    OK(hwrt_free(d));
    OK(hwrt_host_free(pin));
}

/* Two engines fault at once: a copy held by a link stall on its engine (past the check
 * for a sticky fault) faults after a kernel on the compute engine did. The device keeps
 * the first reason, the kernel's, whole: the copy's fault does not overwrite it (it did,
 * unsynchronized with the kernel's: a data race on the reason that the offload fault
 * campaign found under TSan). */
static void test_two_engines_fault(void)
{
    TEST_CASE("two engines fault at once");
    arm("stall:ms=300:nth=1,copy:nth=1,kernel:nth=1");
    void *d, *pin;
    OK(hwrt_malloc(&d, N));
    OK(hwrt_host_alloc(&pin, N, HWRT_HOST_PINNED));
    hwrt_stream s1;
    OK(hwrt_stream_create(&s1, 0));
    OK(hwrt_memcpy_async(d, pin, N, HWRT_MEMCPY_HOST_TO_DEVICE, s1));   /* stalls, faults */
    usleep(50000);                               /* the copy engine holds it by now */
    hwrt_tensor t;
    int64_t shape[1] = {N / 4};
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    OK(hwrt_op_fill(t, 1.0, NULL));              /* faults at once, during the stall */
    FAILS(hwrt_stream_synchronize(s1), HWRT_ERROR_DEVICE_FAULT, "kernel Fill");
    EXPECT(!strstr(hwrt_last_error(), "copy of"));
    FAILS(hwrt_device_synchronize(), HWRT_ERROR_DEVICE_FAULT, "kernel Fill");
    OK(hwrt_device_reset(0));
    faults_seen += 2;
    OK(hwrt_tensor_release(t));
    OK(hwrt_stream_destroy(s1));
    OK(hwrt_free(d));
    OK(hwrt_host_free(pin));
}

/* A fault left unreset is reported by hwrt_shutdown, and the next session is clean. */
static void test_shutdown_reports(void)
{
    TEST_CASE("shutdown");
    arm("kernel:nth=1");
    int64_t shape[1] = {16};
    hwrt_tensor t;
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    OK(hwrt_op_fill(t, 1.0, NULL));
    OK(hwrt_tensor_release(t));
    FAILS(hwrt_shutdown(), HWRT_ERROR_DEVICE_FAULT, "kernel Fill");
    faults_seen++;
    unsetenv("HWRT_SIM_FAULTS");
    OK(hwrt_set_device("sim", 0));
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    OK(hwrt_op_fill(t, 4.0, NULL));
    float out[16];
    OK(hwrt_tensor_copy_to_host(t, out, sizeof out));
    EXPECT(all_equal(out, 16, 4.0f));
    OK(hwrt_tensor_release(t));
}

/* kernel:op=NAME: only kernels of that op (the op table's names) count and fault; the
 * others around them run and give exact results. A name outside the table makes the sim
 * unavailable with a sentence naming the clause and the valid names. */
static void test_kernel_op_filter(void)
{
    TEST_CASE("kernel op filter");
    arm("kernel:nth=2:op=matmul");
    enum { M = 8 };
    static float ha[M * M], hc[M * M];
    for (int i = 0; i < M * M; i++) ha[i] = (float)(i % 5);
    int64_t shape[2] = {M, M};
    hwrt_tensor a, c;
    OK(hwrt_tensor_from_host(&a, HWRT_FLOAT32, 2, shape, ha));
    OK(hwrt_tensor_empty(&c, HWRT_FLOAT32, 2, shape));
    OK(hwrt_op_add(c, a, a, NULL));           /* not MatMul: not counted */
    OK(hwrt_op_matmul(c, a, a, NULL));        /* MatMul 1: runs */
    OK(hwrt_op_relu(c, c, NULL));             /* not counted */
    OK(hwrt_tensor_copy_to_host(c, hc, sizeof hc));
    int exact = 1;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < M; j++) {
            float v = 0;
            for (int k = 0; k < M; k++) v += ha[i * M + k] * ha[k * M + j];
            exact &= hc[i * M + j] == v;
        }
    EXPECT(exact);
    OK(hwrt_op_scale(c, a, 2.0, NULL));
    OK(hwrt_op_matmul(c, a, a, NULL));        /* MatMul 2: faults */
    FAILS(hwrt_device_synchronize(), HWRT_ERROR_DEVICE_FAULT, "kernel MatMul (float32");
    EXPECT(strstr(hwrt_last_error(), "op=matmul") != NULL);
    faults_seen++;
    OK(hwrt_device_reset(0));
    OK(hwrt_tensor_release(a));
    OK(hwrt_tensor_release(c));
    hwrt_shutdown();
    setenv("HWRT_SIM_FAULTS", "kernel:nth=1:op=Conv2D", 1);
    FAILS(hwrt_set_device("sim", 0), HWRT_ERROR_UNAVAILABLE, "\"Conv2D\" is not a kernel op");
    EXPECT(strstr(hwrt_last_error(), "MatMul or ReduceSum") != NULL);
    setenv("HWRT_SIM_FAULTS", "copy:nth=1:op=Add", 1);       /* op= is for kernel clauses */
    FAILS(hwrt_set_device("sim", 0), HWRT_ERROR_UNAVAILABLE, "unknown option \"op\"");
}

int main(void)
{
    setenv("HWRT_SIM_DEVICES", "2", 1);
    setenv("HWRT_SIM_MEMORY", "1GB", 1);
    test_alloc();
    test_kernel();
    test_kernel_op_filter();
    test_copy();
    test_launch_blocking();
    test_reset_settles_queue();
    test_random_with_retry();
    test_dev0_filter();
    test_probability_ends();
    test_stall();
    test_two_engines_fault();
    test_shutdown_reports();
    arm(NULL);
    OK(hwrt_shutdown());
    printf("faults injected and surfaced: %d, every one recovered with data intact\n", faults_seen);
    return test_report();
}
