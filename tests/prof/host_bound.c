/* A host-bound program for the verdict test: the device copies 64 KiB and runs one tiny
 * kernel per step while the host spends 20 ms on its own work, so the device is idle ~99%
 * of the run and its little time is mostly copies. hwrt-prof must call it host-bound
 * (device mostly idle), not copy-bound (issue 20 item 6). */
#include <hwrt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "example_check.h"   /* CHECK(call) */

int main(void)
{
    enum { BYTES = 64 << 10, STEPS = 20 };
    CHECK(hwrt_set_device("sim", 0));
    void *host, *dev;
    CHECK(hwrt_host_alloc(&host, BYTES, HWRT_HOST_PINNED));
    memset(host, 1, BYTES);
    CHECK(hwrt_malloc(&dev, BYTES));
    hwrt_tensor t;
    int64_t shape[1] = {16};
    CHECK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    for (int i = 0; i < STEPS; i++) {
        CHECK(hwrt_memcpy_async(dev, host, BYTES, HWRT_MEMCPY_HOST_TO_DEVICE, NULL));
        CHECK(hwrt_op_fill(t, (double)i, NULL));
        CHECK(hwrt_stream_synchronize(NULL));
        struct timespec ts = {0, 20 * 1000 * 1000};     /* the host's own work */
        nanosleep(&ts, NULL);
    }
    CHECK(hwrt_tensor_release(t));
    CHECK(hwrt_free(dev));
    CHECK(hwrt_host_free(host));
    CHECK(hwrt_shutdown());
    printf("host_bound: %d steps of a 64 KiB copy and 20 ms of host work\n", STEPS);
    return 0;
}
