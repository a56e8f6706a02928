/* Regression tests for survivors of issue 25's seed-3005 mutation run (docs/RELIABILITY.md
 * "Mutation score (issue 25 item 2)") that need libhwrt's internals (linked statically).
 * Each case names its mutant and fails with it planted by hand.
 * - ocl_device.c ocl_resolve: a range that runs past the end of a buffer, or a pointer
 *   below the first one, resolves to no buffer (`s && offset + bytes <= s->bytes` made
 *   `||` took any range starting in a buffer, and read the NULL segment of a pointer below
 *   them all). Every public path checks its ranges against the pool first, so only a
 *   direct call reaches this check: the backend's own guard against a bad range;
 * - ocl_host.c pin_context_locked: pinned memory of an OpenCL installation without a
 *   device is refused (`ocl_load(...) != HWRT_SUCCESS || n == 0` made `&&` went on to
 *   make a context on device 0 of none). Only a direct call of the backend's host_alloc
 *   reaches it (hwrt_host_alloc goes through an open device); the test runs with the
 *   stand-in loader tests/opencl/fake_icd.c in its no-device mode;
 * - tensor.c hwi_tensor_wait_except: a collective on a device engine (NCCL, HCCL: it
 *   enqueues on its own stream) first waits for every other stream that wrote its input
 *   (`list[i] == except->handle` made `!=` waited only for the collective's own stream).
 *   The world is one process whose collective engine is a fake device engine that copies
 *   on the host when called, so it reads whatever the input holds at that moment. */
#include "harness.h"
#include "backends/opencl/ocl.h"
#include "distributed/dist.h"
#include "distributed/engine.h"

#include <unistd.h>

#include <stdint.h>

static void ocl_range_resolution(void)
{
    TEST_CASE("an OpenCL range resolves only inside one buffer");
    static char space[3 * 4096];
    ocl_seg segs[2] = {{space + 4096, 4096, 4000, (cl_mem)(uintptr_t)0x100},
                       {space + 8192, 4096, 4096, (cl_mem)(uintptr_t)0x200}};
    ocl_dev d;
    memset(&d, 0, sizeof d);
    pthread_rwlock_init(&d.seg_lock, NULL);
    d.segs = segs;
    d.nsegs = 2;
    cl_mem m = NULL;
    size_t off = 0;
    OK(ocl_resolve(&d, space + 4096 + 100, 3900, &m, &off));
    EXPECT(m == segs[0].mem && off == 100);
    OK(ocl_resolve(&d, space + 8192, 4096, &m, &off));
    EXPECT(m == segs[1].mem && off == 0);
    FAILS(ocl_resolve(&d, space + 4096 + 100, 3901, &m, &off), HWRT_ERROR_INVALID_ARGUMENT,
          "is not inside one of its buffers");            /* one byte past its end */
    FAILS(ocl_resolve(&d, space + 4096 + 4000, 1, &m, &off), HWRT_ERROR_INVALID_ARGUMENT,
          "is not inside one of its buffers");            /* in its range, past its bytes */
    FAILS(ocl_resolve(&d, space + 100, 1, &m, &off), HWRT_ERROR_INVALID_ARGUMENT,
          "is not inside one of its buffers");            /* below the first buffer */
    pthread_rwlock_destroy(&d.seg_lock);
}

static void pinned_without_a_device(void)
{
    TEST_CASE("pinned memory of an OpenCL installation without a device is refused");
    void *p = NULL;
    FAILS(ocl_host_alloc(4096, &p), HWRT_ERROR_UNAVAILABLE,
          "hwrt_host_alloc (opencl): 1 OpenCL platform(s) found but none has a device");
    EXPECT(p == NULL);
}

static hwrt_status copy_now(void *comm, const void *in, void *out, size_t bytes, hwi_stream *s)
{
    (void)comm, (void)s;
    memcpy(out, in, bytes);                   /* at the call: no stream order of its own */
    return HWRT_SUCCESS;
}

static void slow(void *arg)
{
    (void)arg;
    usleep(200 * 1000);                       /* the writer's stream is still busy */
}

static void device_engine_waits_for_writers(void)
{
    TEST_CASE("a device-engine collective waits for the other streams that wrote its input");
    OK(hwrt_set_device("sim", 0));
    OK(hwrt_dist_init());
    static hwi_coll_engine dev_engine;
    dev_engine = hwi_engine_self;
    dev_engine.name = "fake-device";
    dev_engine.host_memory = 0;
    dev_engine.allgather = copy_now;
    const hwi_coll_engine *saved = hwi_dist_g.coll;
    hwi_dist_g.coll = &dev_engine;
    enum { N = 1024 };
    static float host[N];
    int64_t shape[1] = {N};
    hwrt_tensor in = NULL, out = NULL;
    OK(hwrt_tensor_from_host(&in, HWRT_FLOAT32, 1, shape, host));     /* zeros */
    OK(hwrt_tensor_empty(&out, HWRT_FLOAT32, 1, shape));
    OK(hwrt_device_synchronize());
    hwrt_stream writer, coll;
    OK(hwrt_stream_create(&writer, 0));
    OK(hwrt_stream_create(&coll, 0));
    OK(hwrt_launch_host_func(writer, slow, NULL));
    OK(hwrt_op_fill(in, 7.0, writer));                  /* in: written on another stream */
    OK(hwrt_allgather(out, in, coll));
    OK(hwrt_stream_synchronize(coll));
    OK(hwrt_tensor_copy_to_host(out, host, sizeof host));
    EXPECT(host[0] == 7.0f && host[N - 1] == 7.0f);
    hwi_dist_g.coll = saved;
    OK(hwrt_stream_destroy(writer));
    OK(hwrt_stream_destroy(coll));
    OK(hwrt_tensor_release(in));
    OK(hwrt_tensor_release(out));
    OK(hwrt_dist_finalize());
    OK(hwrt_shutdown());
}

int main(void)
{
    ocl_range_resolution();
    pinned_without_a_device();
    device_engine_waits_for_writers();
    return test_report();
}
