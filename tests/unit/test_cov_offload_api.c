/* The offload API's refusals test_offload does not reach (issue 25 item 3): a NULL
 * config or output, an offload_path too long or naming a file, prefetch and evict of a
 * tensor that is not offloadable or was pinned back to the device, offloading a tensor
 * that wraps DLPack-imported memory. Each refusal keeps the configuration and the
 * tensor's data as they were. And the statistics of prefetches (hit or miss) and of a
 * fetch's overlap window (the uses between its victim's last use and its own). */
#include "harness.h"

#include <stdatomic.h>
#include <unistd.h>

static int holds(hwrt_tensor t, const float *want, int n)
{
    float got[64];
    if (hwrt_tensor_copy_to_host(t, got, (size_t)n * sizeof *got) != HWRT_SUCCESS) return 0;
    return memcmp(got, want, (size_t)n * sizeof *got) == 0;
}

static void noop_deleter(DLManagedTensorVersioned *self) { (void)self; }

static atomic_int gate;                     /* the stream's work waits until it is set */
static void wait_gate(void *arg)
{
    (void)arg;
    while (!atomic_load(&gate)) usleep(1000);
}

int main(void)
{
    setenv("HWRT_SIM_MEMORY", "64MB", 1);
    setenv("HWRT_SIM_OVERHEAD", "4MB", 1);
    char dir[] = "/tmp/hwrt-cov-offload-XXXXXX";
    EXPECT(mkdtemp(dir) != NULL);
    char file[600];
    snprintf(file, sizeof file, "%s/a-file", dir);
    FILE *f = fopen(file, "w");
    EXPECT(f != NULL);
    if (f) fclose(f);

    TEST_CASE("config refusals change nothing");
    hwrt_offload_config got, before;
    FAILS(hwrt_set_offload_config(NULL), HWRT_ERROR_INVALID_ARGUMENT, "cfg is NULL");
    FAILS(hwrt_get_offload_config(NULL), HWRT_ERROR_INVALID_ARGUMENT, "out is NULL");
    OK(hwrt_get_offload_config(&before));
    char longp[700];
    memset(longp, 'a', sizeof longp - 1);
    longp[0] = '/';
    longp[sizeof longp - 1] = 0;
    hwrt_offload_config bad = {.enabled = 1, .prefetch_depth = 1, .offload_path = longp};
    FAILS(hwrt_set_offload_config(&bad), HWRT_ERROR_INVALID_ARGUMENT, "is 699 bytes long; it may have at most 511");
    bad.offload_path = file;
    FAILS(hwrt_set_offload_config(&bad), HWRT_ERROR_INVALID_ARGUMENT, "is not a writable directory");
    OK(hwrt_get_offload_config(&got));
    EXPECT(got.enabled == before.enabled && got.prefetch_depth == before.prefetch_depth);
    EXPECT(got.offload_path && before.offload_path && !strcmp(got.offload_path, before.offload_path));

    OK(hwrt_set_device("sim", 0));
    hwrt_offload_config cfg = {.enabled = 1, .max_device_memory = 8u << 20,
                               .offload_cpu_size = 8u << 20, .offload_path = dir,
                               .enable_pinned_mem = 1, .prefetch_depth = 2};
    OK(hwrt_set_offload_config(&cfg));
    OK(hwrt_get_offload_config(&got));
    EXPECT(got.offload_path && !strcmp(got.offload_path, dir));

    TEST_CASE("a tensor that is not offloadable, and one pinned back");
    float v[16];
    for (int i = 0; i < 16; i++) v[i] = (float)i + 0.25f;
    int64_t shape[1] = {16};
    hwrt_tensor t;
    OK(hwrt_tensor_from_host(&t, HWRT_FLOAT32, 1, shape, v));
    hwrt_stream s;
    OK(hwrt_stream_create(&s, 0));
    FAILS(hwrt_offload_prefetch(t, s), HWRT_ERROR_INVALID_ARGUMENT, "the tensor is not offloadable; call hwrt_tensor_set_offloadable(t, 1) first");
    FAILS(hwrt_offload_evict(t), HWRT_ERROR_INVALID_ARGUMENT, "hwrt_offload_evict: the tensor is not offloadable");
    int where = -1;
    FAILS(hwrt_offload_location(t, NULL), HWRT_ERROR_INVALID_ARGUMENT, "where is NULL");
    OK(hwrt_offload_location(t, &where));
    EXPECT(where == 0);
    FAILS(hwrt_offload_stats_get(NULL), HWRT_ERROR_INVALID_ARGUMENT, "out is NULL");
    OK(hwrt_tensor_set_offloadable(t, 1));
    OK(hwrt_offload_evict(t));
    OK(hwrt_offload_location(t, &where));
    EXPECT(where == 1);
    /* made offloadable again while on the host: it stays there (issue 25, seed 3008,
     * offload_api.c:359: `st == HWRT_SUCCESS && r && !on` made `||` fetched it back) */
    OK(hwrt_tensor_set_offloadable(t, 1));
    OK(hwrt_offload_location(t, &where));
    EXPECT(where == 1);
    OK(hwrt_offload_prefetch(t, s));
    OK(hwrt_stream_synchronize(s));
    EXPECT(holds(t, v, 16));

    TEST_CASE("a landed prefetch is a hit, a tensor its op brings back a miss");
    hwrt_tensor o;
    OK(hwrt_tensor_empty(&o, HWRT_FLOAT32, 1, shape));
    hwrt_offload_stats s0, s1, s2;
    OK(hwrt_offload_evict(t));
    OK(hwrt_offload_stats_get(&s0));
    OK(hwrt_offload_prefetch(t, s));
    OK(hwrt_device_synchronize());               /* landed before its use (the fetch
                                                    runs on the device's copy engine) */
    OK(hwrt_op_scale(o, t, 2.0, s));
    OK(hwrt_stream_synchronize(s));
    OK(hwrt_offload_stats_get(&s1));
    EXPECT(s1.prefetch_hits == s0.prefetch_hits + 1);
    EXPECT(s1.prefetch_late == s0.prefetch_late);
    EXPECT(s1.prefetch_misses == s0.prefetch_misses);
    OK(hwrt_offload_evict(t));
    OK(hwrt_op_scale(o, t, 2.0, s));             /* fetched on demand */
    OK(hwrt_stream_synchronize(s));
    OK(hwrt_offload_stats_get(&s2));
    EXPECT(s2.prefetch_misses == s1.prefetch_misses + 1);
    EXPECT(s2.prefetch_hits == s1.prefetch_hits && s2.prefetch_late == s1.prefetch_late);
    float twice[16];
    for (int i = 0; i < 16; i++) twice[i] = 2.0f * v[i];
    EXPECT(holds(o, twice, 16));
    OK(hwrt_tensor_release(o));
    OK(hwrt_tensor_set_offloadable(t, 0));       /* pinned to the device */
    FAILS(hwrt_offload_evict(t), HWRT_ERROR_INVALID_ARGUMENT, "was pinned to the device with set_offloadable(t, 0)");
    OK(hwrt_offload_location(t, &where));
    EXPECT(where == 0);
    EXPECT(holds(t, v, 16));
    FAILS(hwrt_offload_prefetch(t, (hwrt_stream)(uintptr_t)0x77), HWRT_ERROR_INVALID_HANDLE, "");

    TEST_CASE("a tensor on DLPack-imported memory cannot be offloaded");
    void *d = NULL;
    OK(hwrt_tensor_data(t, &d));
    DLManagedTensorVersioned m;
    memset(&m, 0, sizeof m);
    m.version.major = DLPACK_MAJOR_VERSION;
    m.deleter = noop_deleter;
    m.dl_tensor.data = d;
    m.dl_tensor.device = (DLDevice){kDLCPU, 0};
    m.dl_tensor.ndim = 1;
    m.dl_tensor.dtype = (DLDataType){kDLFloat, 32, 1};
    m.dl_tensor.shape = shape;
    hwrt_tensor w;
    OK(hwrt_tensor_from_dlpack(&w, &m));
    FAILS(hwrt_tensor_set_offloadable(w, 1), HWRT_ERROR_NOT_SUPPORTED, "wraps DLPack-imported memory it does not own");
    EXPECT(holds(w, v, 16));
    OK(hwrt_tensor_release(w));
    OK(hwrt_tensor_release(t));
    OK(hwrt_stream_destroy(s));
    OK(hwrt_shutdown());

    TEST_CASE("a fetch into a busy victim's block: the uses in between are its window");
    /* room for two of the three offloadable 2 MiB tensors beside the output (pinned host
     * tier: a pageable copy would wait on the host for the stream); the stream's
     * work waits for a gate, so every victim is busy and hands its block over in stream
     * order: C's fetch takes A's block (LRU) and waits on the device for A's use, with B's
     * use in between (a window of 1, not exposed). 2 MiB each: a segment of its own, so
     * the budget's live and reserved figures agree */
    OK(hwrt_set_device("sim", 0));
    hwrt_offload_config small = {.enabled = 1, .max_device_memory = (6u << 20) + (256u << 10),
                                 .offload_cpu_size = 8u << 20, .enable_pinned_mem = 1,
                                 .prefetch_depth = 0};
    OK(hwrt_set_offload_config(&small));
    enum { N = 1 << 19 };                       /* floats: 2 MiB */
    static float hv[3][N], out[N];
    int64_t big[1] = {N};
    hwrt_tensor abc[3], ob;
    OK(hwrt_tensor_empty(&ob, HWRT_FLOAT32, 1, big));
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < N; i++) hv[k][i] = (float)(k * 1000 + i % 977);
        OK(hwrt_tensor_from_host(&abc[k], HWRT_FLOAT32, 1, big, hv[k]));
        OK(hwrt_tensor_set_offloadable(abc[k], 1));
    }
    OK(hwrt_stream_create(&s, 0));
    for (int k = 0; k < 3; k++) OK(hwrt_offload_evict(abc[k]));
    OK(hwrt_offload_stats_get(&s0));
    atomic_store(&gate, 0);
    OK(hwrt_launch_host_func(s, wait_gate, NULL));
    for (int k = 0; k < 3; k++) OK(hwrt_op_scale(ob, abc[k], 2.0, s));
    atomic_store(&gate, 1);
    OK(hwrt_stream_synchronize(s));
    OK(hwrt_offload_stats_get(&s1));
    EXPECT(s1.fetches_after_victim == s0.fetches_after_victim + 1);
    EXPECT(s1.fetch_window_uses == s0.fetch_window_uses + 1);
    EXPECT(s1.fetches_exposed == s0.fetches_exposed);
    EXPECT(s1.victim_waits == s0.victim_waits);
    /* C used again, resident: no fetch, so no window counted a second time */
    OK(hwrt_op_scale(ob, abc[2], 2.0, s));
    OK(hwrt_stream_synchronize(s));
    OK(hwrt_offload_stats_get(&s2));
    EXPECT(s2.fetches_after_victim == s1.fetches_after_victim);
    EXPECT(s2.fetch_window_uses == s1.fetch_window_uses);
    OK(hwrt_tensor_copy_to_host(ob, out, sizeof out));
    int right = 1;
    for (int i = 0; i < N; i++) right &= out[i] == 2.0f * hv[2][i];
    EXPECT(right);
    for (int k = 0; k < 3; k++) OK(hwrt_tensor_release(abc[k]));
    OK(hwrt_tensor_release(ob));
    OK(hwrt_stream_destroy(s));
    OK(hwrt_shutdown());
    unlink(file);
    rmdir(dir);
    return test_report();
}
