/* Backends and devices: probing, selection, ordinals, properties, sync and reset. */
#include "conf.h"

#include <pthread.h>

static void backends(void)
{
    CASE("backend_info");
    const char *names[] = {"sim", "opencl", "cuda", "ascend"};
    for (size_t i = 0; i < 4; i++) {
        hwrt_backend_desc d;
        memset(&d, 0x55, sizeof d);
        OK(hwrt_backend_info(names[i], &d));
        EXPECT(!strcmp(d.name, names[i]));
        /* available with devices, or unavailable with a reason: never silent */
        EXPECT(d.available ? d.device_count >= 0 : (d.device_count == 0 && d.reason[0]));
        if (!d.available) printf("  (backend %s unavailable: %s)\n", names[i], d.reason);
    }
    hwrt_backend_desc d;
    FAILS(hwrt_backend_info("tpu9000", &d), HWRT_ERROR_INVALID_DEVICE, "tpu9000");
    FAILS(hwrt_backend_info(NULL, &d), HWRT_ERROR_INVALID_DEVICE, "null");
    FAILS(hwrt_backend_info(c_backend, NULL), HWRT_ERROR_INVALID_ARGUMENT, "NULL");
    OK(hwrt_backend_info(c_backend, &d));
    EXPECT(d.available && d.device_count == c_ndev);
}

static void selection(void)
{
    CASE("set_device");
    char want[64];
    snprintf(want, sizeof want, "%d device", c_ndev);
    FAILS(hwrt_set_device(c_backend, c_ndev), HWRT_ERROR_INVALID_DEVICE, want);
    FAILS(hwrt_set_device(c_backend, -1), HWRT_ERROR_INVALID_DEVICE, want);
    FAILS(hwrt_set_device(c_backend, 1 << 20), HWRT_ERROR_INVALID_DEVICE, want);
    FAILS(hwrt_set_device("tpu9000", 0), HWRT_ERROR_INVALID_DEVICE, "tpu9000");
    /* another backend while this one is in use: this thread's device becomes that
     * backend's (backends are per thread), and setting ours again brings it back */
    const char *other = strcmp(c_backend, "sim") ? "sim" : "opencl";
    hwrt_backend_desc od;
    OK(hwrt_backend_info(other, &od));
    if (od.available && od.device_count > 0) {
        OK(hwrt_set_device(other, 0));
        EXPECT(!strcmp(hwrt_current_backend(), other));
        int odev = -1;
        OK(hwrt_get_device(&odev));
        EXPECT(odev == 0);
        OK(hwrt_set_device(c_backend, 0));
    } else {
        FAILS(hwrt_set_device(other, 0), HWRT_ERROR_UNAVAILABLE, other);
    }
    EXPECT(!strcmp(hwrt_current_backend(), c_backend));
    int dev = -1;
    OK(hwrt_set_device(c_backend, 0));
    OK(hwrt_get_device(&dev));
    EXPECT(dev == 0);
    FAILS(hwrt_get_device(NULL), HWRT_ERROR_INVALID_ARGUMENT, "NULL");
    /* "auto" keeps the backend in use */
    OK(hwrt_set_device("auto", 0));
    OK(hwrt_set_device(NULL, 0));
    EXPECT(!strcmp(hwrt_current_backend(), c_backend));
    if (c_ndev >= 2) {
        OK(hwrt_set_device(c_backend, c_ndev - 1));
        OK(hwrt_get_device(&dev));
        EXPECT(dev == c_ndev - 1);
        OK(hwrt_set_device(c_backend, 0));
    } else {
        unsupported("switching devices needs 2 devices, backend %s has %d", c_backend, c_ndev);
    }
    /* a failed set_device leaves the current device as it was */
    hwrt_set_device(c_backend, c_ndev + 3);
    OK(hwrt_get_device(&dev));
    EXPECT(dev == 0);
}

static void *thread_device(void *arg)
{
    int *dev = arg;
    hwrt_get_device(dev);                 /* each thread starts on device 0 */
    return NULL;
}

static void per_thread(void)
{
    CASE("current device per thread");
    if (c_ndev < 2) {
        unsupported("per-thread devices need 2 devices, backend %s has %d", c_backend, c_ndev);
        return;
    }
    OK(hwrt_set_device(c_backend, 1));
    int other = -1;
    pthread_t th;
    pthread_create(&th, NULL, thread_device, &other);
    pthread_join(th, NULL);
    EXPECT(other == 0);
    int mine = -1;
    OK(hwrt_get_device(&mine));
    EXPECT(mine == 1);
    OK(hwrt_set_device(c_backend, 0));
}

static void counts_and_props(void)
{
    CASE("device_count");
    int n = -1;
    OK(hwrt_device_count(c_backend, &n));
    EXPECT(n == c_ndev);
    n = -1;
    OK(hwrt_device_count(NULL, &n));
    EXPECT(n == c_ndev);
    OK(hwrt_device_count("auto", &n));
    EXPECT(n == c_ndev);
    FAILS(hwrt_device_count(c_backend, NULL), HWRT_ERROR_INVALID_ARGUMENT, "NULL");
    FAILS(hwrt_device_count("tpu9000", &n), HWRT_ERROR_INVALID_DEVICE, "tpu9000");
    CASE("get_device_props");
    for (int i = 0; i < c_ndev; i++) {
        hwrt_device_props p;
        memset(&p, 0, sizeof p);
        OK(hwrt_get_device_props(i, &p));
        EXPECT(p.device_id == i);
        EXPECT(p.name[0] != 0);
        EXPECT(!strcmp(p.backend, c_backend));
        EXPECT(p.total_memory > 0);
        EXPECT(p.compute_units > 0);
        EXPECT(p.copy_engines >= 0);
        EXPECT(p.link_gbps >= 0);
        EXPECT(p.simulated == !strcmp(c_backend, "sim"));
    }
    hwrt_device_props p;
    char want[64];
    snprintf(want, sizeof want, "%d device", c_ndev);
    FAILS(hwrt_get_device_props(c_ndev, &p), HWRT_ERROR_INVALID_DEVICE, want);
    FAILS(hwrt_get_device_props(-3, &p), HWRT_ERROR_INVALID_DEVICE, want);
    FAILS(hwrt_get_device_props(0, NULL), HWRT_ERROR_INVALID_ARGUMENT, "NULL");
}

static void sync_and_reset(void)
{
    CASE("device_synchronize");
    OK(hwrt_device_synchronize());
    CASE("device_reset");
    hwrt_status st = hwrt_device_reset(0);
    if (st == HWRT_ERROR_NOT_SUPPORTED)
        unsupported("hwrt_device_reset: %s", hwrt_last_error());
    else
        OK(st);
    char want[64];
    snprintf(want, sizeof want, "%d device", c_ndev);
    FAILS(hwrt_device_reset(c_ndev), HWRT_ERROR_INVALID_DEVICE, want);
    OK(hwrt_device_synchronize());
}

void conf_device(void)
{
    backends();
    selection();
    per_thread();
    counts_and_props();
    sync_and_reset();
}
