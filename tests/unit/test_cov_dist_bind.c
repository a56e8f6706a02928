/* Binding a plain process (rank 0 of 1) to its device, and the auto backend's count
 * (issue 25 item 3; distributed/bind.c, runtime/runtime.c). Each case runs in a child
 * process with its own environment (the launcher's variables and the backend choice
 * are read once per process):
 * - DEVICE_ID past the backend's devices: INVALID_DEVICE naming DEVICE_ID and the count;
 * - a sim backend made unavailable (malformed HWRT_SIM_DEVICES): NO_DEVICE with its reason;
 * - the auto backend when HWRT_BACKEND names none: NO_DEVICE for "auto", and
 *   hwrt_device_count(NULL) is 0 (success); "" is no backend (INVALID_DEVICE), for
 *   hwrt_device_count and hwrt_dist_bind_device alike (only NULL and "auto" mean auto);
 *   HWRT_BACKEND=sim: NULL and "auto" count sim's devices, before any device is set, and
 *   binding to "" is still refused, leaving no device set; an unknown name is refused in
 *   a sentence that names hwrt_dist_bind_device (hwrt_device_count: itself);
 * - hwrt_dist_check_devices where the device's properties cannot be read: that error. */
#include "harness.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void device_id_too_large(void)
{
    setenv("DEVICE_ID", "5", 1);
    setenv("HWRT_SIM_DEVICES", "2", 1);
    FAILS(hwrt_dist_bind_device("sim"), HWRT_ERROR_INVALID_DEVICE,
          "DEVICE_ID=5 but backend sim has only 2 devices");
    FAILS(hwrt_dist_bind_device("sim"), HWRT_ERROR_INVALID_DEVICE, "set DEVICE_ID below 2");
    int d = -1;
    hwrt_get_device(&d);
    EXPECT(d != 5);
}

static void sim_unavailable(void)
{
    setenv("HWRT_SIM_DEVICES", "many", 1);
    FAILS(hwrt_dist_bind_device("sim"), HWRT_ERROR_NO_DEVICE,
          "backend sim has no device here: ");
    FAILS(hwrt_dist_bind_device("sim"), HWRT_ERROR_NO_DEVICE, "HWRT_SIM_DEVICES");
}

static void auto_names_nothing(void)
{
    setenv("HWRT_BACKEND", "bogus", 1);
    int n = 7;
    OK(hwrt_device_count(NULL, &n));
    EXPECT(n == 0);
    n = 7;
    OK(hwrt_device_count("auto", &n));
    EXPECT(n == 0);
    FAILS(hwrt_device_count("", &n), HWRT_ERROR_INVALID_DEVICE, "unknown backend \"\"");
    /* "auto" (NULL) is resolved first: the reason is HWRT_BACKEND's, not "auto has no device" */
    FAILS(hwrt_dist_bind_device(NULL), HWRT_ERROR_INVALID_DEVICE, "HWRT_BACKEND=\"bogus\" names no backend");
    /* "" is not auto: refused as a name, as hwrt_device_count("") is */
    FAILS(hwrt_dist_bind_device(""), HWRT_ERROR_INVALID_DEVICE, "unknown backend \"\"");
}

static void auto_is_sim(void)
{
    setenv("HWRT_BACKEND", "sim", 1);
    setenv("HWRT_SIM_DEVICES", "3", 1);
    int n = 0;
    OK(hwrt_device_count(NULL, &n));
    EXPECT(n == 3);
    n = 0;
    OK(hwrt_device_count("auto", &n));
    EXPECT(n == 3);
    /* auto would find sim here, but "" does not mean auto: refused, nothing bound */
    FAILS(hwrt_dist_bind_device(""), HWRT_ERROR_INVALID_DEVICE, "unknown backend \"\"");
    EXPECT(hwrt_current_backend()[0] == 0);
    /* the sentence names the call made (it named hwrt_backend_info, which the caller never
     * called), the rank, and the names to use */
    FAILS(hwrt_dist_bind_device("warp"), HWRT_ERROR_INVALID_DEVICE, "unknown backend \"warp\"");
    const char *e = hwrt_last_error();
    EXPECT(!strncmp(e, "hwrt_dist_bind_device: rank 0 on host ", 38));
    EXPECT(strstr(e, "hwrt_backend_info") == NULL && strstr(e, "\"auto\"") != NULL);
    if (strncmp(e, "hwrt_dist_bind_device: ", 23) || strstr(e, "hwrt_backend_info"))
        fprintf(stderr, "  bind_device(\"warp\"): %s\n", e);
    /* hwrt_device_count names itself too */
    FAILS(hwrt_device_count("warp", &n), HWRT_ERROR_INVALID_DEVICE, "hwrt_device_count: unknown backend \"warp\"");
    /* hwrt_backend_info takes no "auto" and does not offer it */
    hwrt_backend_desc bd;
    FAILS(hwrt_backend_info("warp", &bd), HWRT_ERROR_INVALID_DEVICE,
          "hwrt_backend_info: unknown backend \"warp\"; use \"cuda\", \"ascend\", \"sim\" or \"opencl\"");
    setenv("HWRT_BACKEND", "auto", 1);             /* auto: probe the backends in order */
    n = -1;
    OK(hwrt_device_count(NULL, &n));
    EXPECT(n >= 1);
}

static void check_without_props(void)
{
    setenv("HWRT_SIM_DEVICES", "many", 1);
    setenv("HWRT_BACKEND", "sim", 1);
    hwrt_status st = hwrt_dist_check_devices();
    EXPECT(st != HWRT_SUCCESS && hwrt_last_error()[0]);
    EXPECT(strstr(hwrt_last_error(), "HWRT_SIM_DEVICES") != NULL);
    if (st == HWRT_SUCCESS || !strstr(hwrt_last_error(), "HWRT_SIM_DEVICES"))
        fprintf(stderr, "  check_devices: %s: %s\n", hwrt_status_name(st), hwrt_last_error());
}

static void in_child(const char *name, void (*fn)(void))
{
    TEST_CASE(name);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        t_passed = t_failed = 0;
        fn();
        fflush(NULL);
        exit(t_failed ? 1 : 0);                    /* exit: a coverage build's counters */
    }
    int status = 0;
    EXPECT(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
    const char *launcher[] = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "RANK_ID", "RANK_SIZE",
                              "DEVICE_ID", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                              "PMI_RANK", "PMI_SIZE", "MS_WORKER_NUM", "MS_NODE_ID",
                              "HWRT_BACKEND", "HWRT_SIM_DEVICES"};
    for (size_t i = 0; i < sizeof launcher / sizeof launcher[0]; i++) unsetenv(launcher[i]);
    in_child("DEVICE_ID past the backend's devices", device_id_too_large);
    in_child("binding to an unavailable sim", sim_unavailable);
    in_child("HWRT_BACKEND names no backend", auto_names_nothing);
    in_child("HWRT_BACKEND=sim counts before any device is set", auto_is_sim);
    in_child("check_devices without readable properties", check_without_props);
    return test_report();
}
