/* A command the OpenCL driver reports as failed (a negative CL_EVENT_COMMAND_EXECUTION_STATUS)
 * makes the device's fault sticky, in a sentence that gives the status and its CL error
 * name, except for -1, which drivers use as a generic failure status (not
 * CL_DEVICE_NOT_FOUND); hwrt_device_reset clears it (ocl_stream.c note_failure; issue 25's
 * seed-2027 mutation run: `st == -1 ? "" : ocl_error_name(st)` made `!=` lost the name).
 * Run through fail_cl.c, the forwarding loader, whose fail_cl_event_status_next makes the
 * next status queries answer a chosen status. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "harness.h"
#include "fail_cl_next.h"

enum { N = 4096 };

int main(void)
{
    OK(hwrt_set_device("opencl", 0));
    fail_cl_status_next_fn status_next = fail_cl_status_next_lookup();
    if (!status_next) return 1;
    static unsigned char a[N], b[N];
    for (int i = 0; i < N; i++) a[i] = (unsigned char)(i * 7 + 1);
    void *x = NULL;
    OK(hwrt_malloc(&x, N));
    OK(hwrt_memcpy(x, a, N, HWRT_MEMCPY_HOST_TO_DEVICE));

    TEST_CASE("a command failed with CL_OUT_OF_RESOURCES: the fault names the error");
    status_next(CL_OUT_OF_RESOURCES, 1000);
    FAILS(hwrt_memcpy(b, x, N, HWRT_MEMCPY_DEVICE_TO_HOST), HWRT_ERROR_DEVICE_FAULT,
          "an OpenCL command failed (execution status -5, CL_OUT_OF_RESOURCES)");
    status_next(0, 0);
    FAILS(hwrt_device_synchronize(), HWRT_ERROR_DEVICE_FAULT, "execution status -5, CL_OUT_OF_RESOURCES)");
    OK(hwrt_device_reset(0));

    TEST_CASE("a command failed with the generic status -1: no CL error name");
    status_next(-1, 1000);
    FAILS(hwrt_memcpy(b, x, N, HWRT_MEMCPY_DEVICE_TO_HOST), HWRT_ERROR_DEVICE_FAULT,
          "an OpenCL command failed (execution status -1)");
    EXPECT(strstr(hwrt_last_error(), "CL_DEVICE_NOT_FOUND") == NULL);
    status_next(0, 0);
    OK(hwrt_device_reset(0));

    TEST_CASE("after the reset, commands run");
    OK(hwrt_memcpy(b, x, N, HWRT_MEMCPY_DEVICE_TO_HOST));
    EXPECT(!memcmp(a, b, N));
    OK(hwrt_free(x));
    OK(hwrt_shutdown());
    return test_report();
}
