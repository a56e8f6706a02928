/* A command that really fails in the driver (HWRT_OPENCL_FAIL_KERNEL=3: the third kernel
 * launch waits on a user event that is then failed): the fault is reported by the next
 * synchronization with the CL error's name, stays sticky until hwrt_device_reset, and
 * the device computes correctly afterwards. Run by CTest with that variable set. */
#include "harness.h"

int main(void)
{
    TEST_CASE("fault");
    OK(hwrt_set_device("opencl", 0));
    int64_t shape[1] = {256};
    float host[256];
    hwrt_tensor a, b;
    OK(hwrt_tensor_empty(&a, HWRT_FLOAT32, 1, shape));
    OK(hwrt_tensor_empty(&b, HWRT_FLOAT32, 1, shape));
    hwrt_event before, after;
    OK(hwrt_event_create(&before, 0));
    OK(hwrt_event_create(&after, 0));
    OK(hwrt_op_fill(a, 1.0, NULL));                          /* launch 1 */
    OK(hwrt_op_scale(b, a, 3.0, NULL));                      /* launch 2 */
    OK(hwrt_event_record(before, NULL));
    OK(hwrt_op_add(b, b, a, NULL));                          /* launch 3: fails */
    OK(hwrt_event_record(after, NULL));
    FAILS(hwrt_device_synchronize(), HWRT_ERROR_DEVICE_FAULT, "OpenCL command failed");
    TEST_CASE("sticky");
    /* as on the sim, every later query reports the fault, even of work done before it */
    FAILS(hwrt_event_query(before), HWRT_ERROR_DEVICE_FAULT, "execution status");
    FAILS(hwrt_stream_synchronize(NULL), HWRT_ERROR_DEVICE_FAULT, "hwrt_device_reset(0)");
    FAILS(hwrt_event_synchronize(after), HWRT_ERROR_DEVICE_FAULT, "sticky");
    OK(hwrt_op_fill(a, 5.0, NULL));                          /* launch 4: runs, but... */
    FAILS(hwrt_stream_synchronize(NULL), HWRT_ERROR_DEVICE_FAULT, "sticky");
    EXPECT(hwrt_tensor_copy_to_host(a, host, sizeof host) == HWRT_ERROR_DEVICE_FAULT);

    TEST_CASE("reset");
    OK(hwrt_device_reset(0));
    OK(hwrt_device_synchronize());
    OK(hwrt_event_query(after));                   /* acknowledged by the reset */
    hwrt_stream s;
    OK(hwrt_stream_create(&s, 0));
    OK(hwrt_stream_wait_event(s, after));          /* no new fault from the old failure */
    OK(hwrt_op_fill(a, 2.0, s));
    OK(hwrt_op_add(b, a, a, s));
    OK(hwrt_stream_synchronize(s));
    OK(hwrt_tensor_copy_to_host(b, host, sizeof host));
    EXPECT(host[0] == 4.0f && host[255] == 4.0f);
    OK(hwrt_stream_destroy(s));
    OK(hwrt_event_destroy(before));
    OK(hwrt_event_destroy(after));
    OK(hwrt_tensor_release(a));
    OK(hwrt_tensor_release(b));
    OK(hwrt_shutdown());
    return test_report();
}
