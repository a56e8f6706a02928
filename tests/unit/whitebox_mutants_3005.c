/* Regression tests for survivors of issue 25's seed-3005 mutation run (docs/RELIABILITY.md
 * "Mutation score (issue 25 item 2)") that need libhwrt's internals (linked statically).
 * Each case names its mutant and fails with it planted by hand.
 * - ocl_device.c ocl_resolve: a range that runs past the end of a buffer, or a pointer
 *   below the first one, resolves to no buffer (`s && offset + bytes <= s->bytes` made
 *   `||` took any range starting in a buffer, and read the NULL segment of a pointer below
 *   them all). Every public path checks its ranges against the pool first, so only a
 *   direct call reaches this check: the backend's own guard against a bad range;
 * - ocl_host.c pin_context_locked: pinned memory of an OpenCL installation without a
 *   device is refused (`ocl_load(...) != HWRT_SUCCESS || n == 0` made `&&` went on to
 *   make a context on device 0 of none). Only a direct call of the backend's host_alloc
 *   reaches it (hwrt_host_alloc goes through an open device); the test runs with the
 *   stand-in loader tests/opencl/fake_icd.c in its no-device mode. */
#include "harness.h"
#include "backends/opencl/ocl.h"

#include <stdint.h>

static void ocl_range_resolution(void)
{
    TEST_CASE("an OpenCL range resolves only inside one buffer");
    static char space[3 * 4096];
    ocl_seg segs[2] = {{space + 4096, 4096, 4000, (cl_mem)(uintptr_t)0x100},
                       {space + 8192, 4096, 4096, (cl_mem)(uintptr_t)0x200}};
    ocl_dev d;
    memset(&d, 0, sizeof d);
    pthread_rwlock_init(&d.seg_lock, NULL);
    d.segs = segs;
    d.nsegs = 2;
    cl_mem m = NULL;
    size_t off = 0;
    OK(ocl_resolve(&d, space + 4096 + 100, 3900, &m, &off));
    EXPECT(m == segs[0].mem && off == 100);
    OK(ocl_resolve(&d, space + 8192, 4096, &m, &off));
    EXPECT(m == segs[1].mem && off == 0);
    FAILS(ocl_resolve(&d, space + 4096 + 100, 3901, &m, &off), HWRT_ERROR_INVALID_ARGUMENT,
          "is not inside one of its buffers");            /* one byte past its end */
    FAILS(ocl_resolve(&d, space + 4096 + 4000, 1, &m, &off), HWRT_ERROR_INVALID_ARGUMENT,
          "is not inside one of its buffers");            /* in its range, past its bytes */
    FAILS(ocl_resolve(&d, space + 100, 1, &m, &off), HWRT_ERROR_INVALID_ARGUMENT,
          "is not inside one of its buffers");            /* below the first buffer */
    pthread_rwlock_destroy(&d.seg_lock);
}

static void pinned_without_a_device(void)
{
    TEST_CASE("pinned memory of an OpenCL installation without a device is refused");
    void *p = NULL;
    FAILS(ocl_host_alloc(4096, &p), HWRT_ERROR_UNAVAILABLE,
          "hwrt_host_alloc (opencl): 1 OpenCL platform(s) found but none has a device");
    EXPECT(p == NULL);
}

int main(void)
{
    ocl_range_resolution();
    pinned_without_a_device();
    return test_report();
}
