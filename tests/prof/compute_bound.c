/* A compute-bound program for the verdict test: MatMuls on data made on the device, one
 * sync and one small pinned read-back. hwrt-prof must call it compute-bound and give no
 * copy advice. The MatMuls are large enough (512^3) that an engine's wake-up latency on a
 * loaded machine, which lands in the first copy's device span, cannot outweigh them. */
#include <hwrt.h>

#include <stdio.h>
#include <stdlib.h>

#include "example_check.h"   /* CHECK(call) */

int main(void)
{
    enum { N = 512, STEPS = 12 };
    CHECK(hwrt_set_device("sim", 0));
    hwrt_tensor a, b, c;
    int64_t shape[2] = {N, N};
    CHECK(hwrt_tensor_empty(&a, HWRT_FLOAT32, 2, shape));
    CHECK(hwrt_tensor_empty(&b, HWRT_FLOAT32, 2, shape));
    CHECK(hwrt_tensor_empty(&c, HWRT_FLOAT32, 2, shape));
    CHECK(hwrt_op_fill(a, 0.01, NULL));             /* data made on the device */
    CHECK(hwrt_op_fill(b, 0.5, NULL));
    for (int i = 0; i < STEPS; i++) {
        CHECK(hwrt_op_matmul(c, a, b, NULL));
        CHECK(hwrt_op_matmul(a, c, b, NULL));
    }
    CHECK(hwrt_stream_synchronize(NULL));
    float *out;                                     /* one small pinned read-back */
    CHECK(hwrt_host_alloc((void **)&out, 16 * sizeof(float), HWRT_HOST_PINNED));
    void *pc;
    CHECK(hwrt_tensor_data(c, &pc));
    CHECK(hwrt_memcpy(out, pc, 16 * sizeof(float), HWRT_MEMCPY_DEVICE_TO_HOST));
    CHECK(hwrt_host_free(out));
    CHECK(hwrt_tensor_release(a));
    CHECK(hwrt_tensor_release(b));
    CHECK(hwrt_tensor_release(c));
    CHECK(hwrt_shutdown());
    printf("compute_bound: %d MatMuls of %dx%d\n", 2 * STEPS, N, N);
    return 0;
}
