/* An Ascend runtime that cannot be used means "0 devices" and the reason, never a crash;
 * selecting ascend explicitly fails with that reason, and "auto" falls through to the next
 * backend (ascend comes before sim in auto's order). Run by CTest with HWRT_ASCEND_LIBRARY
 * naming a library that does not exist, libm (which lacks every ACL entry point), the
 * default name on a loader path without CANN, and the test double of libascendcl
 * (tests/ascend/acl_double.c) failing aclInit or aclrtGetDeviceCount or reporting none.
 *   ascend_probe unavailable|nodevice|env FRAGMENT...
 * unavailable: the backend is unavailable (UNAVAILABLE); nodevice: it loads but has no
 * device (NO_DEVICE); env: HWRT_BACKEND=ascend chooses it, so the default device fails
 * with the reason instead of falling through to sim. Every FRAGMENT must be in the
 * reason. */
#include "probe_check.h"

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "unavailable") && strcmp(argv[1], "nodevice") &&
                     strcmp(argv[1], "env"))) {
        fprintf(stderr, "usage: ascend_probe unavailable|nodevice|env FRAGMENT...\n");
        return 2;
    }
    if (!strcmp(argv[1], "env")) {
        TEST_CASE("HWRT_BACKEND=ascend");
        for (int i = 2; i < argc; i++)
            FAILS(hwrt_set_device(NULL, 0), HWRT_ERROR_UNAVAILABLE, argv[i]);
        EXPECT(strcmp(hwrt_current_backend(), "sim") != 0);   /* no silent fallback */
        hwrt_tensor t;
        int64_t shape[1] = {4};
        FAILS(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape), HWRT_ERROR_UNAVAILABLE, "ascend");
        OK(hwrt_shutdown());
        return test_report();
    }
    const int nodev = !strcmp(argv[1], "nodevice");
    TEST_CASE(nodev ? "ascend without devices" : "ascend unavailable");
    hwrt_backend_desc info;
    OK(hwrt_backend_info("ascend", &info));
    EXPECT(info.available == nodev && info.device_count == 0);
    EXPECT(info.reason[0] != 0);
    probe_reason_holds(info.reason, argc - 2, argv + 2);
    printf("ascend: %s\n", info.reason);
    int count = -1;
    OK(hwrt_device_count("ascend", &count));
    EXPECT(count == 0);

    TEST_CASE("selecting ascend by name");
    FAILS(hwrt_set_device("ascend", 0), nodev ? HWRT_ERROR_NO_DEVICE : HWRT_ERROR_UNAVAILABLE,
          argc > 2 ? argv[2] : "ascend");
    EXPECT(strstr(hwrt_last_error(), "ascend") != NULL);
    /* nothing was selected: the thread has no device, and asking again gives the same */
    FAILS(hwrt_set_device("ascend", 0), nodev ? HWRT_ERROR_NO_DEVICE : HWRT_ERROR_UNAVAILABLE,
          "ascend");

    TEST_CASE("auto falls through to sim");
    probe_sim_still_works(NULL, 2.5f);
    return test_report();
}
