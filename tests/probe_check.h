/* What the tests of a backend that cannot be used share (tests/cuda/cuda_probe.c,
 * tests/ascend/ascend_probe.c, tests/opencl/loader_faults.c and missing_driver.c): the
 * reason holds the fragments CTest gives, and the simulated NPU keeps working after the
 * refusals. */
#ifndef HWRT_TEST_PROBE_CHECK_H
#define HWRT_TEST_PROBE_CHECK_H

#include "harness.h"

/* Each of frags[0..n) is in reason (each missing one said on stderr). */
static inline void probe_reason_holds(const char *reason, int n, char *const *frags)
{
    for (int i = 0; i < n; i++) {
        EXPECT(strstr(reason, frags[i]) != NULL);
        if (!strstr(reason, frags[i]))
            fprintf(stderr, "reason \"%s\" lacks \"%s\"\n", reason, frags[i]);
    }
}

/* The simulated NPU still works: selected by name, or (backend NULL) as what "auto" falls
 * through to, a fill of v read back; then hwrt_shutdown. */
static inline void probe_sim_still_works(const char *backend, float v)
{
    OK(hwrt_set_device(backend, 0));
    EXPECT(strcmp(hwrt_current_backend(), "sim") == 0);
    hwrt_tensor t;
    int64_t shape[1] = {4};
    float out[4];
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    OK(hwrt_op_fill(t, v, NULL));
    OK(hwrt_tensor_copy_to_host(t, out, sizeof out));
    EXPECT(out[0] == v && out[3] == v);
    OK(hwrt_tensor_release(t));
    OK(hwrt_shutdown());
}

#endif
