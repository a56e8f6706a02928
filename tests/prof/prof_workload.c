/* The profiler's known workload: a fixed sequence of launches, syncs and allocations
 * whose profile check_export.py checks exactly (counts, bytes, order). Keep the two in
 * step. With a directory argument it profiles itself through hwrt_profiler_start/stop;
 * without, it relies on HWRT_PROFILE (zero-code-change collection).
 *
 * On device 0, default stream unless noted:
 *   2 hwrt_malloc of 1 MiB (d_a, d_b), 3 tensors float32 [256,256] (256 KiB each)
 *   3 MemcpyHtoD pinned 1 MiB, 2 MemcpyHtoD pageable 1 MiB
 *   1 Memset 512 KiB, 1 MemcpyDtoD 256 KiB
 *   2 Fill, 2 MatMul [256x256x256], 1 Add
 *   hwrt_stream_synchronize(default)
 *   EventRecord on default; EventWait on stream 2; Memset 256 KiB on stream 2
 *   hwrt_stream_synchronize(stream 2)
 *   MemcpyDtoH pinned 1 MiB (async), MemcpyDtoH pageable 1 MiB (hwrt_memcpy, blocking)
 *   hwrt_device_synchronize
 *   5 frees (3 tensors, d_a, d_b) */
#include <hwrt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_check.h"   /* CHECK(call) */

enum { MiB = 1 << 20, KiB = 1 << 10 };

int main(int argc, char **argv)
{
    if (argc > 1) CHECK(hwrt_profiler_start(argv[1]));
    CHECK(hwrt_set_device("sim", 0));
    hwrt_stream s2;
    CHECK(hwrt_stream_create(&s2, 0));
    void *d_a, *d_b, *h_pin;
    CHECK(hwrt_malloc(&d_a, MiB));
    CHECK(hwrt_malloc(&d_b, MiB));
    CHECK(hwrt_host_alloc(&h_pin, MiB, HWRT_HOST_PINNED));
    char *h_page = malloc(MiB);
    memset(h_pin, 1, MiB);
    memset(h_page, 2, MiB);
    for (int i = 0; i < 3; i++)
        CHECK(hwrt_memcpy_async(d_a, h_pin, MiB, HWRT_MEMCPY_HOST_TO_DEVICE, NULL));
    for (int i = 0; i < 2; i++)
        CHECK(hwrt_memcpy_async(d_b, h_page, MiB, HWRT_MEMCPY_HOST_TO_DEVICE, NULL));
    CHECK(hwrt_memset_async(d_b, 0, 512 * KiB, NULL));
    CHECK(hwrt_memcpy_async(d_b, d_a, 256 * KiB, HWRT_MEMCPY_DEVICE_TO_DEVICE, NULL));
    hwrt_tensor x, y, z;
    int64_t shape[2] = {256, 256};
    CHECK(hwrt_tensor_empty(&x, HWRT_FLOAT32, 2, shape));
    CHECK(hwrt_tensor_empty(&y, HWRT_FLOAT32, 2, shape));
    CHECK(hwrt_tensor_empty(&z, HWRT_FLOAT32, 2, shape));
    CHECK(hwrt_op_fill(x, 1.0, NULL));
    CHECK(hwrt_op_fill(y, 2.0, NULL));
    CHECK(hwrt_op_matmul(z, x, y, NULL));
    CHECK(hwrt_op_matmul(z, x, y, NULL));
    CHECK(hwrt_op_add(z, z, x, NULL));
    CHECK(hwrt_stream_synchronize(NULL));
    hwrt_event e;
    CHECK(hwrt_event_create(&e, HWRT_EVENT_DEFAULT));
    CHECK(hwrt_event_record(e, NULL));
    CHECK(hwrt_stream_wait_event(s2, e));
    CHECK(hwrt_memset_async(d_a, 0, 256 * KiB, s2));
    CHECK(hwrt_stream_synchronize(s2));
    CHECK(hwrt_memcpy_async(h_pin, d_a, MiB, HWRT_MEMCPY_DEVICE_TO_HOST, NULL));
    CHECK(hwrt_memcpy(h_page, d_b, MiB, HWRT_MEMCPY_DEVICE_TO_HOST));
    CHECK(hwrt_device_synchronize());
    CHECK(hwrt_tensor_release(x));
    CHECK(hwrt_tensor_release(y));
    CHECK(hwrt_tensor_release(z));
    CHECK(hwrt_free(d_a));
    CHECK(hwrt_free(d_b));
    CHECK(hwrt_event_destroy(e));
    CHECK(hwrt_stream_destroy(s2));
    CHECK(hwrt_host_free(h_pin));
    free(h_page);
    if (argc > 1) CHECK(hwrt_profiler_stop());
    CHECK(hwrt_shutdown());
    puts("prof_workload: done");
    return 0;
}
