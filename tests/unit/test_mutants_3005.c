/* Regression tests for survivors of issue 25's seed-3005 mutation run (docs/RELIABILITY.md
 * "Mutation score (issue 25 item 2)") reachable through the public API. Each case names
 * its mutant and fails with it planted by hand. */
#include "harness.h"
#include "harness_files.h"

#include <stdio.h>
#include <stdlib.h>

/* sim_work.c sim_op_execute: a kernel failed by an injected fault never ran, so the
 * profiler keeps its launch without a device timestamp (the mutant `return 0` made
 * `return 1` on that path reported the failed kernel as executed, with a span) */
static void faulted_kernel_has_no_device_span(void)
{
    TEST_CASE("a kernel failed by an injected fault has no device timestamp");
    setenv("HWRT_SIM_FAULTS", "kernel:nth=1", 1);
    OK(hwrt_set_device("sim", 0));
    char dir[] = "/tmp/hwrt-mutants-3005-XXXXXX";
    EXPECT(mkdtemp(dir) != NULL);
    float v[16] = {1};
    int64_t shape[1] = {16};
    hwrt_tensor x = NULL, y = NULL;
    OK(hwrt_tensor_from_host(&x, HWRT_FLOAT32, 1, shape, v));
    OK(hwrt_tensor_empty(&y, HWRT_FLOAT32, 1, shape));
    OK(hwrt_device_synchronize());
    OK(hwrt_profiler_start(dir));
    OK(hwrt_op_scale(y, x, 2.0, NULL));               /* the first kernel: faulted */
    FAILS(hwrt_device_synchronize(), HWRT_ERROR_DEVICE_FAULT, "injected");
    OK(hwrt_device_reset(0));
    OK(hwrt_op_scale(y, x, 3.0, NULL));               /* runs */
    OK(hwrt_device_synchronize());
    OK(hwrt_profiler_stop());
    hwrt_profiler_stats st;
    OK(hwrt_profiler_get_stats(&st));
    EXPECT(st.device_ts_missing == 1);
    if (st.device_ts_missing != 1)
        fprintf(stderr, "  device_ts_missing %llu, events %llu\n",
                (unsigned long long)st.device_ts_missing, (unsigned long long)st.events);
    OK(hwrt_tensor_release(x));
    OK(hwrt_tensor_release(y));
    unsetenv("HWRT_SIM_FAULTS");
    OK(hwrt_shutdown());
    EXPECT(remove_tree(dir) == 0);
}

/* offload_api.c track_stall: a stream that waits on the device for a fetch is timed, and
 * the wait counts in stall_ms (the mutant `hwi_device_get(...) != HWRT_SUCCESS` made `==`
 * returned before timing any wait: stall_ms stayed 0). Each host-link copy is stalled
 * 30 ms by the sim's fault plan, so the wait is that long at least. */
static void fetch_wait_is_timed(void)
{
    TEST_CASE("a stream waiting for a fetch counts in stall_ms");
    setenv("HWRT_SIM_FAULTS", "stall:ms=30", 1);
    OK(hwrt_set_device("sim", 0));
    hwrt_offload_config c = {.enabled = 1, .max_device_memory = (size_t)8 << 20,
                             .offload_cpu_size = (size_t)64 << 20, .enable_pinned_mem = 1};
    OK(hwrt_set_offload_config(&c));
    enum { N = 1 << 20 };                               /* 4 MiB of float32 */
    static float host[N];
    int64_t shape[1] = {N};
    hwrt_tensor t[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < N; j++) host[j] = (float)(i + 1);
        OK(hwrt_tensor_from_host(&t[i], HWRT_FLOAT32, 1, shape, host));
        OK(hwrt_tensor_set_offloadable(t[i], 1));
    }
    OK(hwrt_device_synchronize());
    OK(hwrt_offload_evict(t[0]));
    OK(hwrt_offload_reset_stats());
    hwrt_stream s;
    OK(hwrt_stream_create(&s, 0));
    OK(hwrt_op_scale(t[0], t[0], 2.0, s));              /* fetched on the fetch stream first */
    OK(hwrt_stream_synchronize(s));
    OK(hwrt_tensor_copy_to_host(t[0], host, sizeof(float) * N));
    EXPECT(host[0] == 2.0f && host[N - 1] == 2.0f);
    hwrt_offload_stats st;
    OK(hwrt_offload_stats_get(&st));
    EXPECT(st.stall_ms > 0);
    if (!(st.stall_ms > 0)) fprintf(stderr, "  stall_ms %.3f\n", st.stall_ms);
    OK(hwrt_stream_destroy(s));
    for (int i = 0; i < 3; i++) OK(hwrt_tensor_release(t[i]));
    unsetenv("HWRT_SIM_FAULTS");
    OK(hwrt_shutdown());
}

int main(void)
{
    faulted_kernel_has_no_device_span();
    fetch_wait_is_timed();
    return test_report();
}
