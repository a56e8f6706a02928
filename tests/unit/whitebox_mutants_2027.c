/* Regression tests for survivors of issue 25's seeded mutation runs (seeds 2026-2027 and
 * later; docs/RELIABILITY.md "Mutation score (issue 25 item 2)") that need libhwrt's
 * internals: libhwrt linked statically, calloc wrapped (-Wl,--wrap=calloc) so that an
 * array of device records (bind.c's dev_rec, 464 bytes) gets a poisoned record after its
 * end, nanosleep wrapped so that the sim's jitter delays are recorded instead of slept.
 * Each case names its mutant. */
#include "harness.h"
#include "backends/backend.h"
#include "backends/sim/sim.h"
#include "backends/sim/sim_sched.h"
#include "base/status.h"
#include "distributed/dist.h"
#include "exec/stream.h"
#include "runtime/handle.h"
#include "runtime/device.h"
#include "runtime/runtime.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <time.h>

/* ---- calloc with a canary record after every array of bind.c's dev_rec ---- */

#define DEV_REC_SIZE 464              /* sizeof(dev_rec) in src/distributed/bind.c */
void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);
static int canaries;                  /* arrays given a canary */
void *__wrap_calloc(size_t n, size_t size)
{
    if (size != DEV_REC_SIZE || n == 0 || n > 1024) return __real_calloc(n, size);
    unsigned char *p = __real_calloc(n + 1, size);
    if (p) {
        /* a record that failed, with a sentence of its own: read only past the end */
        int32_t bad = HWRT_ERROR_INTERNAL;
        memcpy(p + n * size, &bad, sizeof bad);
        snprintf((char *)p + n * size + 24, 440, "CANARY: a record past the array's end");
        canaries++;
    }
    return p;
}

/* device.c hwi_device_close_parts: with two parts failing, the first one's error (in
 * close order) is the device's (the mutant `st != SUCCESS && first == SUCCESS` made `||`
 * reported the last failing part's sentence instead). The parts are fakes attached to a
 * sim device in the two slots no test call has filled yet (offload, exec). */
static int closes;
static hwrt_status close_a(hwi_device *d, void *part)
{
    (void)d, (void)part;
    closes++;
    return hwi_err(HWRT_ERROR_IO, "part A: first close failed");
}
static hwrt_status close_b(hwi_device *d, void *part)
{
    (void)d, (void)part;
    closes++;
    return hwi_err(HWRT_ERROR_DEVICE_FAULT, "part B: second close failed");
}
static const hwi_dev_part_ops ops_a = {close_a, NULL}, ops_b = {close_b, NULL};

static void first_part_failure_wins(void)
{
    TEST_CASE("closing a device reports its first failing part");
    OK(hwrt_set_device("sim", 0));
    hwi_device *d = NULL;
    OK(hwi_device_current(&d));
    if (!d) return;
    static int a, b;
    EXPECT(hwi_device_part(d, HWI_PART_OFFLOAD) == NULL && hwi_device_part(d, HWI_PART_EXEC) == NULL);
    EXPECT(hwi_device_attach(d, HWI_PART_OFFLOAD, &a, &ops_a) == &a);
    EXPECT(hwi_device_attach(d, HWI_PART_EXEC, &b, &ops_b) == &b);
    FAILS(hwi_device_close_parts(d), HWRT_ERROR_IO, "part A: first close failed");
    EXPECT(closes == 2);                          /* both closed, whichever failed */
    EXPECT(hwi_device_part(d, HWI_PART_OFFLOAD) == NULL && hwi_device_part(d, HWI_PART_EXEC) == NULL);
    /* the same order through hwrt_shutdown */
    EXPECT(hwi_device_attach(d, HWI_PART_OFFLOAD, &a, &ops_a) == &a);
    EXPECT(hwi_device_attach(d, HWI_PART_EXEC, &b, &ops_b) == &b);
    FAILS(hwrt_shutdown(), HWRT_ERROR_IO, "hwrt_shutdown: part A: first close failed");
    EXPECT(closes == 4);
}

/* bind.c verdict_failed: the failing ranks are counted over the d->size records the
 * exchange gathered, and no further (the mutant `r < d->size` made `<=` read one record
 * past the calloc'd array: here the canary, counted as a third failing rank). The world is
 * faked: 3 ranks on two hosts, an engine whose allgather hands out the ranks' records. */
static hwrt_status rank_status[3] = {HWRT_SUCCESS, HWRT_ERROR_INVALID_DEVICE, HWRT_SUCCESS};
static hwrt_status fake_allgather(void *comm, const void *in, void *out, size_t bytes,
                                  hwi_stream *s)
{
    (void)comm, (void)s;
    for (int r = 0; r < 3; r++) {
        unsigned char *rec = (unsigned char *)out + (size_t)r * bytes;
        memcpy(rec, in, bytes);                   /* rank 0's, then each rank's own status */
        int32_t st = rank_status[r];
        memcpy(rec, &st, sizeof st);
        if (st != HWRT_SUCCESS)
            snprintf((char *)rec + 24, 440, "rank %d: no device %d here", r, r);
    }
    return HWRT_SUCCESS;
}

static void failed_ranks_counted_within_the_world(void)
{
    TEST_CASE("a failed binding counts the world's ranks only");
    static char hosts[3][HWI_HOST_LEN] = {"hostA", "hostA", "hostB"};
    static hwi_coll_engine eng;
    eng = hwi_engine_self;
    eng.name = "fake3";
    eng.allgather = fake_allgather;
    hwi_dist saved = hwi_dist_g;
    hwi_dist_g.rank = 0;
    hwi_dist_g.size = 3;
    hwi_dist_g.nhosts = 2;
    hwi_dist_g.hosts = hosts;
    hwi_dist_g.eng = &eng;
    int before = canaries;
    FAILS(hwi_dist_exchange_devices("hwrt_dist_bind_device", "sim", 0, HWRT_SUCCESS, ""),
          HWRT_ERROR_INVALID_DEVICE, "hwrt_dist_bind_device: 1 rank(s) could not bind a device");
    EXPECT(strstr(hwrt_last_error(), "rank 1 (host hostA) said: rank 1: no device 1 here") != NULL);
    EXPECT(strstr(hwrt_last_error(), "CANARY") == NULL);
    EXPECT(canaries == before + 1);               /* the records' array was the one wrapped */
    /* every rank bound: none counted as failed (seed 3005: the first check over the
     * records, `r < d->size` made `<=`, took the canary past the array for a failed rank) */
    TEST_CASE("every rank bound: no rank counted as failed");
    rank_status[1] = HWRT_SUCCESS;
    /* (the fake gives every rank device 0: two ranks of hostA share it, which is the
     * verdict, not a failed rank) */
    FAILS(hwi_dist_exchange_devices("hwrt_dist_bind_device", "sim", 0, HWRT_SUCCESS, ""),
          HWRT_ERROR_INVALID_DEVICE, "ranks 0, 1 on host hostA all use sim device 0");
    EXPECT(canaries == before + 2);
    rank_status[1] = HWRT_ERROR_INVALID_DEVICE;
    hwi_dist_g = saved;
}

/* ---- nanosleep recording the delays asked for, on the thread that says so ---- */

int __real_nanosleep(const struct timespec *req, struct timespec *rem);
int __wrap_nanosleep(const struct timespec *req, struct timespec *rem);
static _Thread_local int recording;
static long delays[4];                /* <100 us, <1 ms, <5 ms, longer */
int __wrap_nanosleep(const struct timespec *req, struct timespec *rem)
{
    if (!recording) return __real_nanosleep(req, rem);
    long long ns = (long long)req->tv_sec * 1000000000ll + req->tv_nsec;
    delays[ns < 100000 ? 0 : ns < 1000000 ? 1 : ns < 5000000 ? 2 : 3]++;
    return 0;
}

/* sim_sched.c sim_sched_jitter: the documented mix of delays (docs/RELIABILITY.md
 * "HWRT_SIM_JITTER": 85 % none, 11 % up to 100 us, 3.5 % up to 1 ms, 0.5 % up to 5 ms),
 * each bucket within 0.05 % over 2,000,000 seeded draws (a draw's bucket is uniform over
 * 1000 values, so moving one bucket edge by one, as the mutant `r < 995` made `<=` did,
 * moves 0.1 % of the draws: 0.4 % up to 5 ms). */
static void jitter_mix(void)
{
    TEST_CASE("the jitter's delays follow the documented mix");
    setenv("HWRT_SIM_JITTER", "20261201", 1);
    sim_sched_load();
    enum { N = 2000000 };
    recording = 1;
    for (int i = 0; i < N; i++) sim_sched_jitter();
    recording = 0;
    unsetenv("HWRT_SIM_JITTER");
    sim_sched_load();                             /* off again */
    long none = N - delays[0] - delays[1] - delays[2] - delays[3];
    const long want[4] = {N / 1000 * 850, N / 1000 * 110, N / 1000 * 35, N / 1000 * 5};
    const long got[4] = {none, delays[0], delays[1], delays[2]};
    for (int b = 0; b < 4; b++) EXPECT(labs(got[b] - want[b]) < N / 2000);
    EXPECT(delays[3] == 0);
    fprintf(stderr, "  jitter over %d draws: %ld none, %ld < 100 us, %ld < 1 ms, %ld < 5 ms, %ld longer\n",
            N, none, delays[0], delays[1], delays[2], delays[3]);
}

/* sim_activity.c sim_activity_query: once the engines have taken every per-engine slot of
 * retired-op counters (256, for good: engines take one when they start) the ones started
 * later share the last, and a query reads all 257 (the mutant `SLOTS + 1` made `SLOTS - 1`
 * missed the shared slot: the profiler's query said NOT_READY for good). */
extern const hwrt_backend_ops hwrt_backend_sim;
static _Atomic size_t activity_records;
static void count_activity(void *ctx, const hwrt_activity *recs, size_t n)
{
    (void)ctx, (void)recs;
    activity_records += n;
}

static void activity_past_the_slots(void)
{
    TEST_CASE("the activity query counts the engines past the 256 slots");
    const hwrt_backend_ops *B = &hwrt_backend_sim;
    int n = 0;
    char reason[256];
    OK(B->probe(&n, reason, sizeof reason));
    for (int i = 0; i < 60; i++) {                /* 5 engines a device: 300 slots asked */
        hwrt_bdev *d = NULL;
        OK(B->device_open(0, &d));
        if (d) B->device_close(d);
    }
    OK(B->activity_enable(count_activity, NULL));
    hwrt_bdev *d = NULL;
    hwrt_bstream *s = NULL;
    void *seg = NULL;
    OK(B->device_open(0, &d));
    if (!d) return;
    OK(B->stream_create(d, 0, &s));
    OK(B->segment_alloc(d, 1 << 20, &seg));
    hwi_backend_correlation = 4242;
    OK(B->memset_async(s, seg, 1, 4096));
    hwi_backend_correlation = 0;
    OK(B->stream_synchronize(s));
    /* reported at the latest when the engine goes idle: wait for that, 10 s at most */
    hwrt_status st = HWRT_ERROR_NOT_READY;
    for (int i = 0; i < 1000 && (st = B->activity_query()) == HWRT_ERROR_NOT_READY; i++) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    EXPECT(st == HWRT_SUCCESS && activity_records == 1);
    if (st != HWRT_SUCCESS || activity_records != 1)
        fprintf(stderr, "  activity query %s, %zu records\n", hwrt_status_name(st),
                (size_t)activity_records);
    OK(B->activity_enable(NULL, NULL));
    OK(B->segment_free(d, seg, 1 << 20));
    B->stream_destroy(s);
    B->device_close(d);
}

/* sim_work.c sim_op_prefault: before a kernel is timed, the pages of its output and of
 * every input it reads (a, b; a fill reads none) are populated, so that first-touch page
 * faults are not counted as device time (the mutant `k->op != HWRT_K_FILL` made `==` left
 * the first input untouched: only residency and timings showed it). Checked with mincore
 * on untouched segments, for an elementwise op, a matmul and a sum. */
static size_t resident(const void *p, size_t len)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), n = (len + pg - 1) / pg, r = 0;
    unsigned char *v = malloc(n);
    if (!v || mincore((void *)p, len, v) != 0) { free(v); return (size_t)-1; }
    for (size_t i = 0; i < n; i++) r += (v[i] & 1) ? pg : 0;
    free(v);
    return r;
}

static void kernel_inputs_prefaulted(void)
{
    TEST_CASE("a kernel's output and inputs are populated before it is timed");
    const hwrt_backend_ops *B = &hwrt_backend_sim;
    const size_t M2 = (size_t)2 << 20;            /* SIM_PAGE */
    hwrt_bdev *d = NULL;
    OK(B->device_open(0, &d));
    if (!d) return;
    struct { hwrt_kernel_op op; int64_t n, m, k, nn; int has_b; } ks[] = {
        {HWRT_K_ADD, 1 << 20, 0, 0, 0, 1},        /* 4 MiB each */
        {HWRT_K_MATMUL, 0, 512, 1024, 512, 1},    /* a, b: 2 MiB; out 1 MiB */
        {HWRT_K_SUM, 0, 512, 1024, 2, 0},         /* a: 4 MiB; out 4 KiB */
        {HWRT_K_FILL, 1 << 20, 0, 0, 0, 0},       /* out only */
    };
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        char *a = NULL, *b = NULL, *o = NULL;
        OK(B->segment_alloc(d, 4 * M2, (void **)&a));
        OK(B->segment_alloc(d, 4 * M2, (void **)&b));
        OK(B->segment_alloc(d, 4 * M2, (void **)&o));
        if (!a || !b || !o) break;
        EXPECT(resident(a, 4 * M2) == 0 && resident(b, 4 * M2) == 0 && resident(o, 4 * M2) == 0);
        sim_op op;
        memset(&op, 0, sizeof op);
        op.type = SOP_KERNEL;
        hwrt_kernel *k = &op.u.kernel;
        k->op = ks[i].op;
        k->dtype = k->out_dtype = HWRT_FLOAT32;
        k->n = ks[i].n, k->m = ks[i].m, k->k = ks[i].k, k->nn = ks[i].nn;
        k->out = o;
        k->a = ks[i].op == HWRT_K_FILL ? NULL : a;
        k->b = ks[i].has_b ? b : NULL;
        size_t na = ks[i].op == HWRT_K_MATMUL ? (size_t)(ks[i].m * ks[i].k)
                    : ks[i].op == HWRT_K_SUM ? (size_t)(ks[i].m * ks[i].k * ks[i].nn) : (size_t)ks[i].n;
        size_t nb = ks[i].op == HWRT_K_MATMUL ? (size_t)(ks[i].k * ks[i].nn) : (size_t)ks[i].n;
        size_t no = ks[i].op == HWRT_K_MATMUL || ks[i].op == HWRT_K_SUM
                    ? (size_t)(ks[i].m * ks[i].nn) : (size_t)ks[i].n;
        size_t pa = k->a ? (na * 4 + M2 - 1) / M2 * M2 : 0, pb = k->b ? (nb * 4 + M2 - 1) / M2 * M2 : 0;
        size_t po = (no * 4 + M2 - 1) / M2 * M2;
        EXPECT(sim_op_prefault(d, &op) == 1);
        EXPECT(resident(o, 4 * M2) == po);
        EXPECT(resident(a, 4 * M2) == pa);
        EXPECT(resident(b, 4 * M2) == pb);
        if (resident(a, 4 * M2) != pa || resident(b, 4 * M2) != pb || resident(o, 4 * M2) != po)
            fprintf(stderr, "  kernel %d: resident a %zu (want %zu), b %zu (%zu), out %zu (%zu)\n",
                    (int)ks[i].op, resident(a, 4 * M2), pa, resident(b, 4 * M2), pb,
                    resident(o, 4 * M2), po);
        EXPECT(sim_op_prefault(d, &op) == 0);     /* once */
        OK(B->segment_free(d, a, 4 * M2));
        OK(B->segment_free(d, b, 4 * M2));
        OK(B->segment_free(d, o, 4 * M2));
    }
    B->device_close(d);
}

/* sim_stream.c:109 (seed 3003) `nspare >= SIM_SPARE_OPS` made `>`: a stream kept one
 * retired op more than its cap of spares (1 << 17, sim_stream.c). A stream held by a host
 * function queues more ops than the cap; once all have run it keeps exactly the cap. */
#define SPARE_CAP (1 << 17)
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int gate_open;
static void gate(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&gate_mu);
    while (!gate_open) pthread_cond_wait(&gate_cv, &gate_mu);
    pthread_mutex_unlock(&gate_mu);
}

static void spare_ops_capped(void)
{
    TEST_CASE("a stream keeps at most its cap of spare ops");
    OK(hwrt_set_device("sim", 0));
    hwrt_stream s;
    OK(hwrt_stream_create(&s, 0));
    void *buf = NULL;
    OK(hwrt_malloc(&buf, 64));
    gate_open = 0;
    OK(hwrt_launch_host_func(s, gate, NULL));     /* everything after it waits */
    hwrt_status st = HWRT_SUCCESS;
    for (int i = 0; i < SPARE_CAP + 16 && st == HWRT_SUCCESS; i++)
        st = hwrt_memset_async(buf, i & 0xff, 64, s);
    OK(st);
    pthread_mutex_lock(&gate_mu);
    gate_open = 1;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
    OK(hwrt_stream_synchronize(s));
    hwi_stream *hs = hwi_handle_acquire(s, HWI_H_STREAM);
    EXPECT(hs != NULL);
    if (hs) {
        int spares = atomic_load(&hs->bs->nspare);
        EXPECT(spares == SPARE_CAP);
        if (spares != SPARE_CAP) fprintf(stderr, "  spare ops %d, cap %d\n", spares, SPARE_CAP);
        hwi_handle_put(s);
    }
    unsigned char h[64];
    OK(hwrt_memcpy(h, buf, sizeof h, HWRT_MEMCPY_DEVICE_TO_HOST));
    EXPECT(h[0] == ((SPARE_CAP + 15) & 0xff) && h[63] == h[0]);   /* the last memset */
    OK(hwrt_free(buf));
    OK(hwrt_stream_destroy(s));
    OK(hwrt_shutdown());
}

int main(void)
{
    setenv("HWRT_SIM_DEVICES", "1", 1);
    first_part_failure_wins();
    failed_ranks_counted_within_the_world();
    jitter_mix();
    activity_past_the_slots();
    kernel_inputs_prefaulted();
    spare_ops_capped();
    return test_report();
}
