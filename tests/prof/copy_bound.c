/* A copy-bound program for the verdict test: every step moves 8 MiB to the device and
 * back through pageable host memory around a tiny kernel (the seed's anti-pattern:
 * copies inside the loop). hwrt-prof must call it copy-bound and advise pinned memory
 * and fewer copies. */
#include <hwrt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_check.h"   /* CHECK(call) */

int main(void)
{
    enum { BYTES = 8 << 20, STEPS = 12 };
    CHECK(hwrt_set_device("sim", 0));
    char *host = malloc(BYTES);                /* pageable on purpose */
    memset(host, 1, BYTES);
    void *dev;
    CHECK(hwrt_malloc(&dev, BYTES));
    hwrt_tensor t;
    int64_t shape[1] = {1024};
    CHECK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    CHECK(hwrt_op_fill(t, -1.0, NULL));
    for (int i = 0; i < STEPS; i++) {
        CHECK(hwrt_memcpy_async(dev, host, BYTES, HWRT_MEMCPY_HOST_TO_DEVICE, NULL));
        CHECK(hwrt_op_relu(t, t, NULL));
        CHECK(hwrt_memcpy(host, dev, BYTES, HWRT_MEMCPY_DEVICE_TO_HOST));
    }
    CHECK(hwrt_tensor_release(t));
    CHECK(hwrt_free(dev));
    free(host);
    CHECK(hwrt_shutdown());
    printf("copy_bound: %d steps of 2 x %d MiB pageable copies\n", STEPS, BYTES >> 20);
    return 0;
}
