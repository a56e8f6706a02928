/* hwrt_smi_query (src/runtime/monitor.c), issue 25 item 3: bad arguments are refused with
 * their sentences; "auto" and NULL mean the backend in use (sim when none is); a backend
 * known but not built in (ascend) is UNAVAILABLE; a backend whose driver offers no
 * process view is refused, not answered with zeros; over a sampling window, this
 * process's busy share is measured from the work it does meanwhile and stays in 0..100. */
#include "harness.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static volatile int stop;

static void *worker(void *arg)
{
    hwrt_tensor a = arg;
    while (!stop) {
        if (hwrt_op_scale(a, a, 1.0, NULL) != HWRT_SUCCESS) break;
        if (hwrt_stream_synchronize(NULL) != HWRT_SUCCESS) break;
    }
    return NULL;
}

int main(void)
{
    char reg[64];
    snprintf(reg, sizeof reg, "hwrt-cov-monitor-%d", (int)getpid());
    setenv("HWRT_SIM_REGISTRY", reg, 1);      /* this test's own view, no one else's */
    hwrt_smi_snapshot s;

    TEST_CASE("bad arguments");
    FAILS(hwrt_smi_query("sim", 0, NULL), HWRT_ERROR_INVALID_ARGUMENT, "out is NULL");
    FAILS(hwrt_smi_query("sim", -1, &s), HWRT_ERROR_INVALID_ARGUMENT,
          "sample_ms -1 is out of range 0..60000");
    FAILS(hwrt_smi_query("sim", 60001, &s), HWRT_ERROR_INVALID_ARGUMENT, "sample_ms 60001");
    FAILS(hwrt_smi_query("tpu", 0, &s), HWRT_ERROR_INVALID_DEVICE, "unknown backend \"tpu\"");
    /* the sentence names the backends to use, from the registry's table */
    FAILS(hwrt_smi_query("tpu", 0, &s), HWRT_ERROR_INVALID_DEVICE,
          "hwrt_smi_query: unknown backend \"tpu\"; use \"cuda\", \"ascend\", \"sim\", \"opencl\" or \"auto\"");
    /* a backend compiled in whose monitor library is missing (DCMI pointed at no file) */
    setenv("HWRT_DCMI_LIBRARY", "/nonexistent/libdcmi.so", 1);
    FAILS(hwrt_smi_query("ascend", 0, &s), HWRT_ERROR_UNAVAILABLE,
          "ascend monitor: DCMI could not be loaded");
    unsetenv("HWRT_DCMI_LIBRARY");

    TEST_CASE("auto and NULL: the backend in use, sim by default");
    OK(hwrt_smi_query(NULL, 0, &s));
    EXPECT(s.ndevices >= 1 && s.nprocesses == 0);
    OK(hwrt_smi_query("auto", 0, &s));
    EXPECT(s.ndevices >= 1);

    TEST_CASE("busy share over a window");
    OK(hwrt_set_device("sim", 0));
    hwrt_tensor a;
    int64_t shape[2] = {256, 256};
    OK(hwrt_tensor_empty(&a, HWRT_FLOAT32, 2, shape));
    OK(hwrt_op_fill(a, 1.0, NULL));
    pthread_t th;
    pthread_create(&th, NULL, worker, a);
    OK(hwrt_smi_query("auto", 200, &s));      /* the backend in use: sim */
    stop = 1;
    pthread_join(th, NULL);
    EXPECT(s.nprocesses == 1 && s.processes[0].pid == (int)getpid());
    EXPECT(s.devices[0].busy_pct > 0 && s.devices[0].busy_pct <= 100);
    printf("busy %.1f%% over 200 ms\n", s.devices[0].busy_pct);
    OK(hwrt_smi_query("sim", 1, &s));         /* idle now: a low share, still in range */
    EXPECT(s.devices[0].busy_pct >= 0 && s.devices[0].busy_pct <= 100);
    OK(hwrt_tensor_release(a));
    OK(hwrt_shutdown());

    TEST_CASE("a backend without a process view");
    setenv("HWRT_OPENCL_LIBRARY", "/nonexistent/libOpenCL.so.1", 1);
    FAILS(hwrt_smi_query("opencl", 0, &s), HWRT_ERROR_NOT_SUPPORTED,
          "the opencl backend's driver offers no device-wide process view");
    char path[128];
    snprintf(path, sizeof path, "/dev/shm/%s-v3", reg);
    unlink(path);
    return test_report();
}
