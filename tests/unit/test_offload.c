/* Offload: results identical with and without offload; random evict/fetch cycles across
 * the host and disk tiers keep every tensor's checksum; a tensor used by queued work is
 * never evicted; full tiers give the OOM sentence naming every tier; bad config values
 * give clear errors. */
#include "harness.h"

#include <stdatomic.h>
#include <unistd.h>

enum { N = 256 * 1024, T = 12 };             /* 1 MiB tensors, 12 of them on a 6 MiB budget */

static atomic_int gate_open;

static uint64_t checksum(const float *v, int n)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; i++) { uint32_t u; memcpy(&u, &v[i], 4); h = (h ^ u) * 1099511628211ull; }
    return h;
}

/* A tensor read on more streams than it has use slots (HWI_RES_USES, 4; issue 25:
 * res_uses.c:15 looked one slot past them, which the sanitizer stage's bounds check
 * reports): five streams read v, the default stream's copy holding slot 0 and streams 0-2
 * slots 1-3; the fifth use, queued last behind a gate of its own stream, takes slot 0 over.
 * While it is queued v stays busy; afterwards every result and v itself are right. (The
 * sim's compute engine runs ops in the order they were queued, so only the last-queued
 * stream can be held back while the others finish.) */
static void five_streams(const int64_t *shape, const float *src)
{
    enum { S = 5, late = S - 1 };
    static float back[N];
    atomic_int open[S];
    hwrt_stream ss[S];
    hwrt_tensor v, o[S];
    OK(hwrt_tensor_from_host(&v, HWRT_FLOAT32, 1, shape, src));
    OK(hwrt_tensor_set_offloadable(v, 1));
    for (int k = 0; k < S; k++) {
        atomic_init(&open[k], 0);
        OK(hwrt_stream_create(&ss[k], 0));
        OK(hwrt_tensor_empty(&o[k], HWRT_FLOAT32, 1, shape));
        OK(hwrt_op_fill(o[k], (double)k, ss[k]));
        OK(hwrt_launch_host_func(ss[k], harness_gate, &open[k]));
        OK(hwrt_op_add(o[k], o[k], v, ss[k]));
    }
    for (int k = 0; k < S; k++)
        if (k != late) atomic_store(&open[k], 1);
    for (int k = 0; k < S; k++)
        if (k != late) OK(hwrt_stream_synchronize(ss[k]));
    FAILS(hwrt_offload_evict(v), HWRT_ERROR_DEVICE_BUSY, "still used by queued work");
    atomic_store(&open[late], 1);
    for (int k = 0; k < S; k++) OK(hwrt_stream_synchronize(ss[k]));
    OK(hwrt_offload_evict(v));
    for (int k = 0; k < S; k++) {
        OK(hwrt_tensor_copy_to_host(o[k], back, sizeof back));
        int same = 1;
        for (int i = 0; i < N; i++) same &= back[i] == (float)k + src[i];
        EXPECT(same);
        OK(hwrt_tensor_release(o[k]));
        OK(hwrt_stream_destroy(ss[k]));
    }
    OK(hwrt_tensor_copy_to_host(v, back, sizeof back));
    EXPECT(!memcmp(back, src, sizeof back));
    OK(hwrt_tensor_release(v));
}

int main(void)
{
    setenv("HWRT_SIM_MEMORY", "64MB", 1);
    setenv("HWRT_SIM_OVERHEAD", "4MB", 1);
    char dir[] = "/tmp/hwrt-offload-test-XXXXXX";
    EXPECT(mkdtemp(dir) != NULL);

    TEST_CASE("bad config");
    hwrt_offload_config bad = {.enabled = 1, .prefetch_depth = 99};
    FAILS(hwrt_set_offload_config(&bad), HWRT_ERROR_INVALID_ARGUMENT, "prefetch_depth 99");
    /* the bounds of the documented range 0..64 (issue 25: 64 was rejected by a survivor) */
    hwrt_offload_config edge = {.enabled = 0, .prefetch_depth = 64}, got;
    OK(hwrt_set_offload_config(&edge));
    OK(hwrt_get_offload_config(&got));
    EXPECT(got.prefetch_depth == 64);
    edge.prefetch_depth = 0;
    OK(hwrt_set_offload_config(&edge));
    OK(hwrt_get_offload_config(&got));
    EXPECT(got.prefetch_depth == 0);
    edge.prefetch_depth = 65;
    FAILS(hwrt_set_offload_config(&edge), HWRT_ERROR_INVALID_ARGUMENT, "prefetch_depth 65");
    edge.prefetch_depth = -1;
    FAILS(hwrt_set_offload_config(&edge), HWRT_ERROR_INVALID_ARGUMENT, "prefetch_depth -1");
    OK(hwrt_get_offload_config(&got));
    EXPECT(got.prefetch_depth == 0);             /* a refused config changes nothing */
    OK(hwrt_set_config("prefetch_depth", "2"));  /* back to the default */
    bad.prefetch_depth = 1;
    bad.offload_path = "/nonexistent/dir";
    FAILS(hwrt_set_offload_config(&bad), HWRT_ERROR_INVALID_ARGUMENT, "not a writable directory");
    FAILS(hwrt_set_config("offload_cpu_size", "lots"), HWRT_ERROR_INVALID_ARGUMENT, "offload_cpu_size");
    FAILS(hwrt_set_config("memory_offload", "maybe"), HWRT_ERROR_INVALID_ARGUMENT, "not a boolean");
    OK(hwrt_set_config("memory_offload", "OFF"));

    OK(hwrt_set_device("sim", 0));
    hwrt_offload_config cfg = {.enabled = 1, .max_device_memory = 6u << 20,
                               .offload_cpu_size = 5u << 20, .offload_disk_size = 64u << 20,
                               .offload_path = dir, .enable_pinned_mem = 1, .prefetch_depth = 2};
    OK(hwrt_set_offload_config(&cfg));

    TEST_CASE("checksums across tiers");
    static float host[T][N], back[N];
    uint64_t sum[T];
    hwrt_tensor t[T];
    int64_t shape[1] = {N};
    for (int k = 0; k < T; k++) {
        for (int i = 0; i < N; i++) host[k][i] = (float)(k * 1000 + i % 977);
        sum[k] = checksum(host[k], N);
        OK(hwrt_tensor_from_host(&t[k], HWRT_FLOAT32, 1, shape, host[k]));
        OK(hwrt_tensor_set_offloadable(t[k], 1));
    }
    hwrt_offload_stats st;
    OK(hwrt_offload_stats_get(&st));
    EXPECT(st.evictions_to_host > 0);
    EXPECT(st.evictions_to_disk > 0);             /* host tier (5 MiB) overflowed to files */
    unsigned seed = 7;
    for (int round = 0; round < 200; round++) {
        seed = seed * 1103515245u + 12345u;
        int k = (int)((seed >> 8) % T);
        if ((seed >> 20) & 1) {
            int where;
            OK(hwrt_offload_location(t[k], &where));
            if (where == 0) OK(hwrt_offload_evict(t[k]));
        } else {
            OK(hwrt_tensor_copy_to_host(t[k], back, sizeof back));
            EXPECT(checksum(back, N) == sum[k]);
        }
    }
    /* modify on the device, evict, read back: the change survives (dirty eviction) */
    OK(hwrt_op_scale(t[0], t[0], 2.0, NULL));
    OK(hwrt_stream_synchronize(NULL));
    OK(hwrt_offload_evict(t[0]));
    OK(hwrt_tensor_copy_to_host(t[0], back, sizeof back));
    EXPECT(back[5] == 2.0f * host[0][5]);

    TEST_CASE("identical with and without offload");
    hwrt_tensor acc;
    OK(hwrt_tensor_empty(&acc, HWRT_FLOAT32, 1, shape));
    OK(hwrt_op_fill(acc, 0.0, NULL));
    for (int k = 1; k < T; k++) OK(hwrt_op_add(acc, acc, t[k], NULL));
    OK(hwrt_tensor_copy_to_host(acc, back, sizeof back));
    int same = 1;
    for (int i = 0; i < N; i++) {
        float want = 0;
        for (int k = 1; k < T; k++) want += host[k][i];
        same &= back[i] == want;
    }
    EXPECT(same);

    TEST_CASE("busy tensor is never evicted");
    hwrt_stream s;
    OK(hwrt_stream_create(&s, 0));
    OK(hwrt_launch_host_func(s, harness_gate, &gate_open));
    OK(hwrt_op_scale(t[3], t[3], 1.0, s));        /* queued behind the gate */
    FAILS(hwrt_offload_evict(t[3]), HWRT_ERROR_DEVICE_BUSY, "still used by queued work");
    atomic_store(&gate_open, 1);
    OK(hwrt_stream_synchronize(s));
    OK(hwrt_offload_evict(t[3]));
    OK(hwrt_stream_destroy(s));

    TEST_CASE("full tiers");
    hwrt_offload_config tiny = cfg;
    tiny.offload_cpu_size = 0;
    tiny.offload_disk_size = 0;
    OK(hwrt_set_offload_config(&tiny));
    hwrt_tensor big;
    int64_t bshape[1] = {8 * N};                  /* 8 MiB > the 6 MiB budget */
    FAILS(hwrt_tensor_empty(&big, HWRT_FLOAT32, 1, bshape), HWRT_ERROR_OUT_OF_MEMORY,
          "every tier is full");
    EXPECT(strstr(hwrt_last_error(), "host tier") && strstr(hwrt_last_error(), "disk tier"));
    OK(hwrt_tensor_copy_to_host(t[5], back, sizeof back));     /* still works */
    EXPECT(checksum(back, N) == sum[5]);

    TEST_CASE("every operand offloadable, learned order");
    OK(hwrt_set_offload_config(&cfg));
    OK(hwrt_set_config("auto_offload", "true"));
    for (int step = 0; step < 3; step++) {        /* h = h + t[k], h itself offloadable */
        hwrt_tensor h;
        OK(hwrt_tensor_from_host(&h, HWRT_FLOAT32, 1, shape, host[0]));
        OK(hwrt_tensor_set_offloadable(h, 1));
        for (int k = 1; k < T; k++) {
            hwrt_tensor o;
            OK(hwrt_tensor_empty(&o, HWRT_FLOAT32, 1, shape));
            OK(hwrt_op_add(o, h, t[k], NULL));
            OK(hwrt_tensor_release(h));
            h = o;
        }
        OK(hwrt_tensor_copy_to_host(h, back, sizeof back));
        int ok = 1;
        for (int i = 0; i < N; i++) {            /* same order of float adds as the device */
            float want = host[0][i];
            for (int k = 1; k < T; k++) want += host[k][i];
            ok &= back[i] == want;
        }
        EXPECT(ok);
        OK(hwrt_tensor_release(h));
        OK(hwrt_offload_step());
    }

    for (int k = 0; k < T; k++) OK(hwrt_tensor_release(t[k]));
    OK(hwrt_tensor_release(acc));
    OK(hwrt_offload_stats_get(&st));
    EXPECT(st.host_bytes == 0 && st.disk_bytes == 0);

    /* With the device held behind a gate, every resident tensor is still used by queued
     * work: fetches must take victims' blocks in stream order, clean ones at once and
     * written ones after a write-back on the D2H engine (the host never waits; waiting
     * here would hang, as the gate opens only after the loop), and the sync checker,
     * seeing the manager's events through dispatch, must find no hazard. */
    TEST_CASE("stream-ordered eviction, no host wait, no false hazards");
    hwrt_offload_config roomy = cfg;
    roomy.offload_cpu_size = 64u << 20;
    roomy.auto_offload = 0;
    OK(hwrt_set_offload_config(&roomy));
    OK(hwrt_set_config("auto_offload", "false"));
    OK(hwrt_set_check_sync(1));
    OK(hwrt_diag_reset());
    enum { U = 8 };
    hwrt_tensor u[U], acc2;
    for (int k = 0; k < U; k++) {
        OK(hwrt_tensor_from_host(&u[k], HWRT_FLOAT32, 1, shape, host[k]));
        OK(hwrt_tensor_set_offloadable(u[k], 1));
    }
    OK(hwrt_tensor_empty(&acc2, HWRT_FLOAT32, 1, shape));
    OK(hwrt_op_fill(acc2, 0.0, NULL));
    for (int k = 0; k < U; k++) OK(hwrt_op_add(acc2, acc2, u[k], NULL));   /* all get host copies */
    OK(hwrt_stream_synchronize(NULL));
    hwrt_offload_stats before, after;
    OK(hwrt_offload_stats_get(&before));
    atomic_store(&gate_open, 0);
    alarm(60);                                    /* a host wait would hang: fail instead */
    OK(hwrt_launch_host_func(NULL, harness_gate, &gate_open));
    for (int pass = 0; pass < 2; pass++)                   /* reads: clean victims */
        for (int k = 0; k < U; k++) OK(hwrt_op_add(acc2, acc2, u[k], NULL));
    for (int k = 0; k < U; k++) {                          /* writes: victims saved first */
        OK(hwrt_op_scale(u[k], u[k], 2.0, NULL));
        OK(hwrt_op_add(acc2, acc2, u[k], NULL));
    }
    atomic_store(&gate_open, 1);
    alarm(0);
    OK(hwrt_tensor_copy_to_host(acc2, back, sizeof back));
    int good = 1;
    for (int i = 0; i < N; i++) {
        float want = 0;
        for (int pass = 0; pass < 3; pass++)
            for (int k = 0; k < U; k++) want += host[k][i];
        for (int k = 0; k < U; k++) want += 2.0f * host[k][i];
        good &= back[i] == want;
    }
    EXPECT(good);
    for (int k = 0; k < U; k++) {                          /* the written data survived */
        OK(hwrt_tensor_copy_to_host(u[k], back, sizeof back));
        int same2 = 1;
        for (int i = 0; i < N; i++) same2 &= back[i] == 2.0f * host[k][i];
        EXPECT(same2);
    }
    OK(hwrt_offload_stats_get(&after));
    EXPECT(after.clean_evictions - before.clean_evictions >= U);
    EXPECT(after.evictions_to_host > before.evictions_to_host);   /* written-back victims */
    EXPECT(hwrt_diag_hazard_count() == 0);
    for (int k = 0; k < U; k++) OK(hwrt_tensor_release(u[k]));
    OK(hwrt_tensor_release(acc2));
    OK(hwrt_set_check_sync(0));

    TEST_CASE("more streams than use slots");
    five_streams(shape, host[4]);
    OK(hwrt_shutdown());
    rmdir(dir);
    return test_report();
}
