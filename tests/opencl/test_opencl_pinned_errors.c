/* Pinned host memory on the opencl backend when the driver refuses it (ocl_host.c
 * map_pinned; issue 25's mutation run, seed 2026): clCreateBuffer's allocation failures
 * (CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES, CL_INVALID_BUFFER_SIZE) are a
 * host out-of-memory, which hwrt_host_alloc answers by giving its cached pinned buffers
 * back and trying once more; any other CL error is reported as it is (CL_INVALID_* is a
 * hwrt bug: INTERNAL), without that retry. Run through fail_cl.c, the forwarding loader,
 * whose fail_cl_fail_next makes the next clCreateBuffer calls fail with a chosen code. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "harness.h"

#include "fail_cl_next.h"
#include <dlfcn.h>
#include <stdlib.h>

#define MiB ((size_t)1 << 20)

static fail_cl_next_fn fail_cl;
#define fail_next(n, code) fail_cl("clCreateBuffer", n, code)

int main(void)
{
    OK(hwrt_set_device("opencl", 0));
    fail_cl = fail_cl_next_lookup();
    if (!fail_cl) return 1;
    void *p = NULL, *q = NULL;
    OK(hwrt_host_alloc(&p, MiB, HWRT_HOST_PINNED));       /* the pinned context is made */
    OK(hwrt_host_free(p));                                 /* and this buffer cached */
    OK(hwrt_set_config("pinned_pool", "false"));          /* each alloc asks the driver */

    TEST_CASE("an allocation failure is a host OOM: the cache is given back, then a retry");
    static const cl_int oom[] = {CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES,
                                 CL_INVALID_BUFFER_SIZE};
    for (int i = 0; i < 3; i++) {
        fail_next(1, oom[i]);                              /* once: the retry succeeds */
        OK(hwrt_host_alloc(&q, 4 * MiB, HWRT_HOST_PINNED));
        memset(q, 0x5a, 4 * MiB);
        OK(hwrt_host_free(q));
        fail_next(2, oom[i]);                              /* twice: the caller is told */
        FAILS(hwrt_host_alloc(&q, 4 * MiB, HWRT_HOST_PINNED), HWRT_ERROR_HOST_OUT_OF_MEMORY,
              "pinned buffer of 4194304 bytes");
        EXPECT(q == NULL);
    }

    TEST_CASE("another CL error is not an OOM: reported, not retried");
    fail_next(1, CL_INVALID_VALUE);
    FAILS(hwrt_host_alloc(&q, 4 * MiB, HWRT_HOST_PINNED), HWRT_ERROR_INTERNAL,
          "pinned buffer of 4194304 bytes");
    fail_next(1, CL_INVALID_CONTEXT);
    FAILS(hwrt_host_alloc(&q, 4 * MiB, HWRT_HOST_PINNED), HWRT_ERROR_INTERNAL, "CL_INVALID_CONTEXT");

    TEST_CASE("nothing is left broken");
    OK(hwrt_host_alloc(&q, 4 * MiB, HWRT_HOST_PINNED));
    memset(q, 0xa5, 4 * MiB);
    OK(hwrt_host_free(q));

    /* the pinned memory's own context is given back when the last pinned buffer is freed,
     * not before (ocl_host.c ocl_host_free; issue 25's seed-3002 mutation run: `npins == 0`
     * made `!=` released it under a buffer still pinned, and kept it once none was) */
    TEST_CASE("the pinned context lives as long as a pinned buffer");
    long (*released)(void) = NULL;
    void *h = dlopen(getenv("HWRT_OPENCL_LIBRARY"), RTLD_NOW | RTLD_NOLOAD);
    if (h) *(void **)&released = dlsym(h, "fail_cl_released_contexts");
    EXPECT(released != NULL);
    if (released) {
        void *a = NULL, *b = NULL, *dev = NULL;
        OK(hwrt_host_alloc(&a, MiB, HWRT_HOST_PINNED));
        OK(hwrt_host_alloc(&b, MiB, HWRT_HOST_PINNED));
        long r0 = released();
        OK(hwrt_host_free(a));
        EXPECT(released() == r0);                          /* b still pinned: kept */
        memset(b, 0x3c, MiB);
        OK(hwrt_malloc(&dev, MiB));
        OK(hwrt_memcpy(dev, b, MiB, HWRT_MEMCPY_HOST_TO_DEVICE));
        memset(b, 0, MiB);
        OK(hwrt_memcpy(b, dev, MiB, HWRT_MEMCPY_DEVICE_TO_HOST));
        EXPECT(((unsigned char *)b)[0] == 0x3c && ((unsigned char *)b)[MiB - 1] == 0x3c);
        OK(hwrt_free(dev));
        OK(hwrt_host_free(b));
        EXPECT(released() == r0 + 1);                      /* the last one: given back */
        if (released() != r0 + 1) fprintf(stderr, "  %ld contexts released, want 1\n", released() - r0);
    }
    OK(hwrt_shutdown());
    return test_report();
}
