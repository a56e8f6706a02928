/* A CUDA driver that cannot be used means "0 devices" and the reason, never a crash, and
 * "auto" falls through to the next backend (cuda is first in auto's order). Run by CTest
 * with HWRT_CUDA_LIBRARY naming a library that does not exist, and with the toolkit's stub
 * libcuda (cuInit: CUDA_ERROR_STUB_LIBRARY), by path and through LD_LIBRARY_PATH.
 * Every argument is a fragment the reason must hold. */
#include "harness.h"

int main(int argc, char **argv)
{
    TEST_CASE("cuda unavailable");
    hwrt_backend_desc info;
    OK(hwrt_backend_info("cuda", &info));
    EXPECT(info.available == 0 && info.device_count == 0);
    for (int i = 1; i < argc; i++) {
        EXPECT(strstr(info.reason, argv[i]) != NULL);
        if (!strstr(info.reason, argv[i]))
            fprintf(stderr, "reason \"%s\" lacks \"%s\"\n", info.reason, argv[i]);
    }
    printf("cuda: %s\n", info.reason);
    int count = -1;
    OK(hwrt_device_count("cuda", &count));
    EXPECT(count == 0);
    FAILS(hwrt_set_device("cuda", 0), HWRT_ERROR_UNAVAILABLE, argc > 1 ? argv[1] : "");

    TEST_CASE("auto falls through to sim");
    OK(hwrt_set_device(NULL, 0));
    EXPECT(strcmp(hwrt_current_backend(), "sim") == 0);
    hwrt_tensor t;
    int64_t shape[1] = {4};
    float v[4];
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    OK(hwrt_op_fill(t, 2.5, NULL));
    OK(hwrt_tensor_copy_to_host(t, v, sizeof v));
    EXPECT(v[0] == 2.5f && v[3] == 2.5f);
    OK(hwrt_tensor_release(t));
    OK(hwrt_shutdown());
    return test_report();
}
