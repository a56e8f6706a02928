/* A CUDA driver that cannot be used means "0 devices" and the reason, never a crash, and
 * "auto" falls through to the next backend (cuda is first in auto's order). Run by CTest
 * with HWRT_CUDA_LIBRARY naming a library that does not exist, and with the toolkit's stub
 * libcuda (cuInit: CUDA_ERROR_STUB_LIBRARY), by path and through LD_LIBRARY_PATH.
 * Every argument is a fragment the reason must hold. */
#include "probe_check.h"

int main(int argc, char **argv)
{
    TEST_CASE("cuda unavailable");
    hwrt_backend_desc info;
    OK(hwrt_backend_info("cuda", &info));
    EXPECT(info.available == 0 && info.device_count == 0);
    probe_reason_holds(info.reason, argc - 1, argv + 1);
    printf("cuda: %s\n", info.reason);
    int count = -1;
    OK(hwrt_device_count("cuda", &count));
    EXPECT(count == 0);
    FAILS(hwrt_set_device("cuda", 0), HWRT_ERROR_UNAVAILABLE, argc > 1 ? argv[1] : "");

    TEST_CASE("auto falls through to sim");
    probe_sim_still_works(NULL, 2.5f);
    return test_report();
}
