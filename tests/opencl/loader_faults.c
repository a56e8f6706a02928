/* A broken OpenCL installation is "0 devices" with a reason naming what is wrong, never a
 * crash, and the simulated NPU keeps working (ocl_api.c: open_library, enumerate). Run by
 * CTest once per case: argv[1] is the fragment the reason must hold, the environment
 * names the library (HWRT_OPENCL_LIBRARY: the fake loader of fake_icd.c in FAKE_OCL_MODE,
 * or libm, which has none of OpenCL's entry points). argv[2] "loaded": the loader works
 * but no platform has a device, so the backend is available with 0 devices and opening
 * one is HWRT_ERROR_NO_DEVICE with the reason; otherwise the backend is unavailable. */
#include "probe_check.h"

int main(int argc, char **argv)
{
    const char *frag = argc > 1 ? argv[1] : "?";
    int loaded = argc > 2 && !strcmp(argv[2], "loaded");
    TEST_CASE(frag);
    for (int pass = 0; pass < 2; pass++) {     /* asked again, the same answer */
        hwrt_backend_desc info;
        OK(hwrt_backend_info("opencl", &info));
        EXPECT(info.available == loaded && info.device_count == 0);
        if (!loaded) EXPECT(strstr(info.reason, frag) != NULL);
        fprintf(stderr, "available %d, reason: %s\n", info.available, info.reason);
        int count = -1;
        OK(hwrt_device_count("opencl", &count));
        EXPECT(count == 0);
        FAILS(hwrt_set_device("opencl", 0),
              loaded ? HWRT_ERROR_NO_DEVICE : HWRT_ERROR_UNAVAILABLE, frag);
        fprintf(stderr, "set_device: %s\n", hwrt_last_error());
    }
    probe_sim_still_works("sim", 2.5f);
    return test_report();
}
