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

int main(void)
{
    faulted_kernel_has_no_device_span();
    return test_report();
}
