/* hwrt's 64 device ids, all taken by one backend (HWRT_SIM_DEVICES=64): another backend
 * (opencl) is refused with NOT_SUPPORTED naming the limit and the fix, with an ordinal
 * and without one, and is not registered (no backend of 0 devices: the sim devices keep
 * their plain labels and work); after hwrt_shutdown() the same opencl device opens. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void sim_still_works(void)
{
    float v[3] = {1, 2, 3}, got[3] = {0};
    int64_t shape[1] = {3};
    hwrt_tensor t = NULL;
    OK(hwrt_set_device("sim", 63));
    OK(hwrt_tensor_from_host(&t, HWRT_FLOAT32, 1, shape, v));
    OK(hwrt_tensor_copy_to_host(t, got, sizeof got));
    EXPECT(got[0] == 1 && got[2] == 3);
    OK(hwrt_tensor_release(t));
    EXPECT(!strcmp(hwrt_current_backend(), "sim"));
}

int main(void)
{
    setenv("HWRT_SIM_DEVICES", "64", 1);
    int n = 0;
    OK(hwrt_device_count("sim", &n));
    EXPECT(n == 64);

    TEST_CASE("64 sim devices, then opencl");
    sim_still_works();
    const char *want = "backend opencl: this process already has 64 devices open over 1 "
                       "backends, hwrt's limit; call hwrt_shutdown() first";
    FAILS(hwrt_set_device("opencl", 0), HWRT_ERROR_NOT_SUPPORTED, want);
    FAILS(hwrt_set_device("opencl", -1), HWRT_ERROR_NOT_SUPPORTED, want);
    FAILS(hwrt_set_device("opencl", 0), HWRT_ERROR_NOT_SUPPORTED, want);   /* still refused */

    TEST_CASE("the refusal registered nothing");
    sim_still_works();
    hwrt_tensor t = NULL;
    int64_t shape[1] = {1 << 20};
    OK(hwrt_set_device("sim", 5));
    EXPECT(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape) == HWRT_SUCCESS);
    OK(hwrt_tensor_release(t));
    FAILS(hwrt_set_device("sim", 64), HWRT_ERROR_INVALID_DEVICE,
          "device 64 does not exist: backend sim has 64 device(s), valid ids are 0..63");

    TEST_CASE("after shutdown, opencl opens");
    hwrt_shutdown();
    OK(hwrt_set_device("opencl", 0));
    EXPECT(!strcmp(hwrt_current_backend(), "opencl"));
    return test_report();
}
