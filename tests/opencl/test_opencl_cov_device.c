/* Opening opencl devices that cannot be opened (issue 25 item 3, ocl_device.c): an
 * ordinal past the platform's devices is INVALID_DEVICE naming the count (the runtime
 * refuses it before the backend); a malformed
 * HWRT_OPENCL_FAIL_KERNEL (not a number, negative, past 10^9) is INVALID_ARGUMENT naming
 * the value, and leaves no device half open: with the variable fixed (10^9, the largest
 * taken: no kernel of this test fails) the device opens and computes. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    unsetenv("HWRT_OPENCL_FAIL_KERNEL");
    int n = 0;
    OK(hwrt_device_count("opencl", &n));
    EXPECT(n >= 1);

    TEST_CASE("an ordinal past the devices");
    char want[96];
    snprintf(want, sizeof want, "device %d does not exist: backend opencl has %d device(s)", n + 3, n);
    FAILS(hwrt_set_device("opencl", n + 3), HWRT_ERROR_INVALID_DEVICE, want);

    TEST_CASE("malformed HWRT_OPENCL_FAIL_KERNEL");
    const char *bad[] = {"x", "3k", "-1", "2000000000", "1000000001"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("HWRT_OPENCL_FAIL_KERNEL", bad[i], 1);
        snprintf(want, sizeof want, "HWRT_OPENCL_FAIL_KERNEL=\"%s\" is invalid", bad[i]);
        FAILS(hwrt_set_device("opencl", 0), HWRT_ERROR_INVALID_ARGUMENT, want);
    }

    TEST_CASE("fixed, the device opens and computes");
    setenv("HWRT_OPENCL_FAIL_KERNEL", "1000000000", 1);   /* the largest taken: 10^9 */
    OK(hwrt_set_device("opencl", 0));
    float v[5] = {1, -2, 3, -4, 5}, got[5] = {0};
    int64_t shape[1] = {5};
    hwrt_tensor x = NULL, y = NULL;
    OK(hwrt_tensor_from_host(&x, HWRT_FLOAT32, 1, shape, v));
    OK(hwrt_tensor_empty(&y, HWRT_FLOAT32, 1, shape));
    OK(hwrt_op_relu(y, x, NULL));
    OK(hwrt_tensor_copy_to_host(y, got, sizeof got));
    EXPECT(got[0] == 1 && got[1] == 0 && got[2] == 3 && got[3] == 0 && got[4] == 5);
    OK(hwrt_tensor_release(x));
    OK(hwrt_tensor_release(y));
    OK(hwrt_shutdown());
    unsetenv("HWRT_OPENCL_FAIL_KERNEL");
    return test_report();
}
