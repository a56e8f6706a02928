/* A missing OpenCL driver means "0 devices" and the reason, never a crash, and the other
 * backends keep working. Run by CTest twice: with HWRT_OPENCL_LIBRARY naming a library
 * that does not exist (no ICD loader), and with OCL_ICD_VENDORS naming an empty folder
 * (a loader without any vendor driver). argv[1] is the fragment the reason must hold. */
#include "probe_check.h"

int main(int argc, char **argv)
{
    const char *frag = argc > 1 ? argv[1] : "";
    TEST_CASE("missing driver");
    hwrt_backend_desc info;
    OK(hwrt_backend_info("opencl", &info));
    EXPECT(info.available == 0 && info.device_count == 0);
    probe_reason_holds(info.reason, 1, (char *const[]){(char *)frag});
    int count = -1;
    OK(hwrt_device_count("opencl", &count));
    EXPECT(count == 0);
    FAILS(hwrt_set_device("opencl", 0), HWRT_ERROR_UNAVAILABLE, frag);
    /* the simulated NPU is unaffected */
    probe_sim_still_works("sim", 1.5f);
    return test_report();
}
