/* The seed's hardware_op_demo.py (sections 2.1-2.4) in C, on the simulated NPU:
 * set the device, print memory in GB, round-trip an 8x128 float16 array, run async ops
 * and synchronize, free and empty the cache, print memory after. */
#include <hwrt.h>
#include "example_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static const double GB = 1024.0 * 1024.0 * 1024.0, MB = 1024.0 * 1024.0;

static void print_memory(const char *when)
{
    hwrt_memory_info m;
    CHECK(hwrt_get_memory_info(0, &m));
    printf("[%s] total %.2f GB | used (device-wide) %.2f MB | allocated %.2f MB | reserved %.2f MB"
           " | overhead %.2f MB\n", when, m.total / GB, m.used / MB, m.allocated / MB,
           m.reserved / MB, m.overhead / MB);
}

int main(void)
{
    const char *backend = getenv("HWRT_DEMO_BACKEND") ? getenv("HWRT_DEMO_BACKEND") : "sim";

    /* 2.1 device management */
    CHECK(hwrt_set_device(backend, 0));
    int dev, count;
    hwrt_device_props props;
    CHECK(hwrt_get_device(&dev));
    CHECK(hwrt_device_count(backend, &count));
    CHECK(hwrt_get_device_props(dev, &props));
    printf("hwrt %s | backend %s | current device id: %d of %d | %s%s\n", hwrt_version(),
           hwrt_current_backend(), dev, count, props.name, props.simulated ? " (simulated)" : "");
    hwrt_memory_info m;
    CHECK(hwrt_get_memory_info(0, &m));
    printf("device total memory %.2f GB\n", m.total / GB);
    printf("memory held by live tensors %.2f GB\n", m.allocated / GB);
    printf("memory held by the pool %.2f GB\n", m.reserved / GB);

    /* 2.2 host <-> device: an 8x128 float16 array, there and back */
    enum { R = 8, C = 128, N = R * C };
    float ref[N];
    unsigned short host_np[N], back_np[N], host_out[N];
    srand(42);
    for (int i = 0; i < N; i++) {
        float u1 = (rand() + 1.0f) / (RAND_MAX + 2.0f), u2 = (rand() + 1.0f) / (RAND_MAX + 2.0f);
        ref[i] = sqrtf(-2 * logf(u1)) * cosf(6.2831853f * u2);     /* randn */
    }
    hwrt_tensor tmp_src, tmp_dst;
    int64_t shape[2] = {R, C};
    CHECK(hwrt_tensor_from_host(&tmp_src, HWRT_FLOAT32, 2, shape, ref));   /* float32 -> float16 */
    CHECK(hwrt_tensor_empty(&tmp_dst, HWRT_FLOAT16, 2, shape));
    CHECK(hwrt_op_cast(tmp_dst, tmp_src, NULL));
    CHECK(hwrt_tensor_copy_to_host(tmp_dst, host_np, sizeof host_np));
    hwrt_tensor_release(tmp_src);
    hwrt_tensor_release(tmp_dst);

    hwrt_tensor dev_tensor, dev_tensor2;
    CHECK(hwrt_tensor_from_host(&dev_tensor, HWRT_FLOAT16, 2, shape, host_np));  /* Tensor(np) */
    CHECK(hwrt_tensor_copy_to_host(dev_tensor, back_np, sizeof back_np));      /* asnumpy() */
    CHECK(hwrt_tensor_empty(&dev_tensor2, HWRT_FLOAT16, 2, shape));     /* Tensor(shape, dtype) */
    CHECK(hwrt_tensor_copy_from_host(dev_tensor2, host_np, sizeof host_np));
    CHECK(hwrt_tensor_copy_to_host(dev_tensor2, host_out, sizeof host_out));
    int exact = !memcmp(host_np, back_np, sizeof host_np) && !memcmp(host_np, host_out, sizeof host_np);
    printf("round trip of an 8x128 float16 array host->device->host: %s (%d bytes compared twice)\n",
           exact ? "exact" : "MISMATCH", (int)sizeof host_np);
    if (!exact) return 1;
    print_memory("after creating 2 tensors");

    /* 2.3 async ops, then synchronize the stream */
    hwrt_tensor y;
    CHECK(hwrt_tensor_empty(&y, HWRT_FLOAT16, 2, shape));
    CHECK(hwrt_op_add(y, dev_tensor, dev_tensor2, NULL));   /* y = x + x   (enqueued) */
    CHECK(hwrt_op_relu(y, y, NULL));                        /* y = relu(y) (enqueued) */
    CHECK(hwrt_op_scale(y, y, 0.5, NULL));                  /* y = 0.5 y   (enqueued) */
    printf("3 ops enqueued; stream idle before sync: %s\n",
           hwrt_stream_query(NULL) == HWRT_SUCCESS ? "yes" : "no (work still running)");
    CHECK(hwrt_stream_synchronize(NULL));                   /* synchronize_stream() */
    printf("stream synchronized: all NPU work on it has finished\n");
    unsigned short yh[N];
    CHECK(hwrt_tensor_copy_to_host(y, yh, sizeof yh));
    hwrt_tensor t16;                                        /* check against the host */
    int ok = 1;
    CHECK(hwrt_tensor_from_host(&t16, HWRT_FLOAT16, 2, shape, host_np));
    {
        hwrt_tensor f32;
        float hf[N], yf[N];
        CHECK(hwrt_tensor_empty(&f32, HWRT_FLOAT32, 2, shape));
        CHECK(hwrt_op_cast(f32, t16, NULL));
        CHECK(hwrt_tensor_copy_to_host(f32, hf, sizeof hf));
        CHECK(hwrt_op_cast(f32, y, NULL));
        CHECK(hwrt_tensor_copy_to_host(f32, yf, sizeof yf));
        for (int i = 0; i < N; i++) ok &= yf[i] == (hf[i] > 0 ? hf[i] : 0.0f);
        hwrt_tensor_release(f32);
    }
    hwrt_tensor_release(t16);
    printf("relu(x + x) * 0.5 == relu(x) on all %d elements: %s\n", N, ok ? "yes" : "NO");
    if (!ok) return 1;
    print_memory("after ops");

    /* 2.4 release the tensors and empty the pool */
    hwrt_tensor_release(dev_tensor);
    hwrt_tensor_release(dev_tensor2);
    hwrt_tensor_release(y);
    print_memory("after releasing tensors");
    CHECK(hwrt_empty_cache(0));
    print_memory("after empty_cache");
    CHECK(hwrt_get_memory_info(0, &m));
    printf("allocated after empty_cache: %.2f MB\n", m.allocated / MB);
    CHECK(hwrt_shutdown());
    return 0;
}
