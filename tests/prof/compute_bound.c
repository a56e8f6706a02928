/* A compute-bound program for the verdict test: one pinned upload, then MatMuls on
 * device-resident data, one sync and one small read-back. hwrt-prof must call it
 * compute-bound and give no copy advice. */
#include <hwrt.h>

#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                  \
    do {                                                                             \
        hwrt_status st_ = (call);                                                    \
        if (st_ != HWRT_SUCCESS) {                                                   \
            fprintf(stderr, "%s failed: %s\n", #call, hwrt_last_error());            \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

int main(void)
{
    enum { N = 256, STEPS = 24 };
    CHECK(hwrt_set_device("sim", 0));
    float *host;
    CHECK(hwrt_host_alloc((void **)&host, sizeof(float) * N * N, HWRT_HOST_PINNED));
    for (int i = 0; i < N * N; i++) host[i] = (float)(i % 7) * 0.01f;
    hwrt_tensor a, b, c;
    int64_t shape[2] = {N, N};
    CHECK(hwrt_tensor_empty(&a, HWRT_FLOAT32, 2, shape));
    CHECK(hwrt_tensor_empty(&b, HWRT_FLOAT32, 2, shape));
    CHECK(hwrt_tensor_empty(&c, HWRT_FLOAT32, 2, shape));
    void *pa;
    CHECK(hwrt_tensor_data(a, &pa));
    CHECK(hwrt_memcpy_async(pa, host, sizeof(float) * N * N, HWRT_MEMCPY_HOST_TO_DEVICE, NULL));
    CHECK(hwrt_op_fill(b, 0.5, NULL));
    for (int i = 0; i < STEPS; i++) {
        CHECK(hwrt_op_matmul(c, a, b, NULL));
        CHECK(hwrt_op_matmul(a, c, b, NULL));
    }
    CHECK(hwrt_stream_synchronize(NULL));
    float out[16];
    void *pc;
    CHECK(hwrt_tensor_data(c, &pc));
    CHECK(hwrt_memcpy(out, pc, sizeof out, HWRT_MEMCPY_DEVICE_TO_HOST));
    CHECK(hwrt_tensor_release(a));
    CHECK(hwrt_tensor_release(b));
    CHECK(hwrt_tensor_release(c));
    CHECK(hwrt_host_free(host));
    CHECK(hwrt_shutdown());
    printf("compute_bound: %d MatMuls of %dx%d\n", 2 * STEPS, N, N);
    return 0;
}
