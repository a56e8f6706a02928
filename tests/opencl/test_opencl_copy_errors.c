/* A device-to-device copy on the opencl backend whose clEnqueueCopyBuffer the driver
 * refuses (ocl_stream.c, the copy between two buffers; issue 25's mutation run, seed 2027:
 * the mutant `e != CL_SUCCESS` made `==` reported the refused copy as done and tracked the
 * event it never got), and a host function whose clSetEventCallback the driver refuses
 * (ocl_host.c; seed 3004: the same mutant there reported the function as queued, and the
 * stream then waited for a callback that was never set): the error is reported, the
 * function never runs, the stream reports the device's sticky fault (the work queued
 * behind the function is not run out of order) until hwrt_device_reset. Run through fail_cl.c, the forwarding loader,
 * whose fail_cl_fail_next makes the next calls of a chosen entry point fail with a chosen
 * code. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "harness.h"

#include "fail_cl_next.h"
#include <stdlib.h>

enum { N = 4096 };

static fail_cl_next_fn fail_cl;
static int ran;

static void count_run(void *arg) { ran += (int)(intptr_t)arg; }

int main(void)
{
    OK(hwrt_set_device("opencl", 0));
    fail_cl = fail_cl_next_lookup();
    if (!fail_cl) return 1;
    static unsigned char a[N], b[N];
    for (int i = 0; i < N; i++) a[i] = (unsigned char)(i * 7 + 1);
    void *src = NULL, *dst = NULL;
    OK(hwrt_malloc(&src, N));
    OK(hwrt_malloc(&dst, N));
    OK(hwrt_memcpy(src, a, N, HWRT_MEMCPY_HOST_TO_DEVICE));
    OK(hwrt_memcpy(dst, b, N, HWRT_MEMCPY_HOST_TO_DEVICE));   /* zeros */

    TEST_CASE("a refused device-to-device copy is reported, the destination untouched");
    fail_cl("clEnqueueCopyBuffer", 1, CL_OUT_OF_RESOURCES);
    FAILS(hwrt_memcpy(dst, src, N, HWRT_MEMCPY_DEVICE_TO_DEVICE), HWRT_ERROR_OUT_OF_MEMORY,
          "clEnqueueCopyBuffer of 4096 bytes");
    OK(hwrt_memcpy(b, dst, N, HWRT_MEMCPY_DEVICE_TO_HOST));
    int zero = 1;
    for (int i = 0; i < N; i++) zero &= b[i] == 0;
    EXPECT(zero);

    TEST_CASE("the next copy runs");
    OK(hwrt_memcpy(dst, src, N, HWRT_MEMCPY_DEVICE_TO_DEVICE));
    OK(hwrt_memcpy(b, dst, N, HWRT_MEMCPY_DEVICE_TO_HOST));
    EXPECT(!memcmp(a, b, N));

    OK(hwrt_free(src));
    OK(hwrt_free(dst));

    TEST_CASE("a host function the driver cannot attach: reported, never run");
    hwrt_stream s;
    OK(hwrt_stream_create(&s, 0));
    fail_cl("clSetEventCallback", 1, CL_OUT_OF_HOST_MEMORY);
    FAILS(hwrt_launch_host_func(s, count_run, (void *)(intptr_t)1),
          HWRT_ERROR_HOST_OUT_OF_MEMORY, "clSetEventCallback");
    /* the stream's barrier behind it was failed rather than left to hang the stream: the
     * work after it is not run unordered, the device says so until it is reset */
    FAILS(hwrt_stream_synchronize(s), HWRT_ERROR_DEVICE_FAULT, "sticky fault");
    EXPECT(ran == 0);
    OK(hwrt_device_reset(0));

    TEST_CASE("after the reset a host function runs");
    OK(hwrt_stream_create(&s, 0));
    OK(hwrt_launch_host_func(s, count_run, (void *)(intptr_t)10));
    OK(hwrt_stream_synchronize(s));
    EXPECT(ran == 10);
    OK(hwrt_stream_destroy(s));
    OK(hwrt_shutdown());
    return test_report();
}
