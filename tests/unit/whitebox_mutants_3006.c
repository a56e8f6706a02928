/* Regression tests for survivors of issue 25's seed-3006 mutation run (docs/RELIABILITY.md
 * "Mutation score (issue 25 item 2)") that need libhwrt's internals (linked statically).
 * Each case names its mutant; each fails with it planted by hand.
 * - ocl_device.c ocl_segment_alloc: a request of exactly CL_DEVICE_MAX_MEM_ALLOC_SIZE
 *   bytes is allowed, one byte more is not (`want > d->max_alloc` made `>=` refused the
 *   largest buffer the device allows). The device is the real OpenCL driver's (PoCL here);
 *   its limit is lowered to 1 MiB in the backend's record so that the sizes stay small. */
#include "harness.h"
#include "backends/opencl/ocl.h"

extern const hwrt_backend_ops hwrt_backend_opencl;
static const hwrt_backend_ops *B = &hwrt_backend_opencl;

int main(void)
{
    TEST_CASE("a buffer of exactly CL_DEVICE_MAX_MEM_ALLOC_SIZE bytes is allowed");
    int n = 0;
    char reason[256] = "";
    if (B->probe(&n, reason, sizeof reason) != HWRT_SUCCESS || n < 1) {
        fprintf(stderr, "no OpenCL device: %s\n", reason);
        return 77;                                     /* skipped (CTest SKIP_RETURN_CODE) */
    }
    hwrt_bdev *d = NULL;
    OK(B->device_open(0, &d));
    if (!d) return test_report();
    size_t saved = d->max_alloc;
    d->max_alloc = (size_t)1 << 20;
    void *p = NULL;
    OK(B->segment_alloc(d, (size_t)1 << 20, &p));
    if (p) OK(B->segment_free(d, p, (size_t)1 << 20));
    FAILS(B->segment_alloc(d, ((size_t)1 << 20) + 1, &p), HWRT_ERROR_OUT_OF_MEMORY,
          "CL_DEVICE_MAX_MEM_ALLOC_SIZE");
    d->max_alloc = saved;
    B->device_close(d);
    return test_report();
}
