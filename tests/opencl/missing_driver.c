/* A missing OpenCL driver means "0 devices" and the reason, never a crash, and the other
 * backends keep working. Run by CTest twice: with HWRT_OPENCL_LIBRARY naming a library
 * that does not exist (no ICD loader), and with OCL_ICD_VENDORS naming an empty folder
 * (a loader without any vendor driver). argv[1] is the fragment the reason must hold. */
#include "harness.h"

int main(int argc, char **argv)
{
    const char *frag = argc > 1 ? argv[1] : "";
    TEST_CASE("missing driver");
    hwrt_backend_desc info;
    OK(hwrt_backend_info("opencl", &info));
    EXPECT(info.available == 0 && info.device_count == 0);
    EXPECT(strstr(info.reason, frag) != NULL);
    if (!strstr(info.reason, frag))
        fprintf(stderr, "reason: %s\n", info.reason);
    int count = -1;
    OK(hwrt_device_count("opencl", &count));
    EXPECT(count == 0);
    FAILS(hwrt_set_device("opencl", 0), HWRT_ERROR_UNAVAILABLE, frag);
    /* the simulated NPU is unaffected */
    OK(hwrt_set_device("sim", 0));
    hwrt_tensor t;
    int64_t shape[1] = {4};
    float v[4];
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    OK(hwrt_op_fill(t, 1.5, NULL));
    OK(hwrt_tensor_copy_to_host(t, v, sizeof v));
    EXPECT(v[0] == 1.5f && v[3] == 1.5f);
    OK(hwrt_tensor_release(t));
    OK(hwrt_shutdown());
    return test_report();
}
