/* DLPack at the edges of the tensor's life (issue 25 item 3; tensor/dlpack.c, tensor.c),
 * on the sim (whose device memory is host memory: kDLCPU), each case checking the data,
 * the status and the producer's deleter:
 * - exporting an offloadable tensor that was evicted: fetched back and pinned there (a
 *   later evict is refused, naming the pin), the export reads its data;
 * - a host copy of an empty tensor; a host copy while the device has a sticky fault:
 *   DEVICE_FAULT, nothing exported, and after hwrt_device_reset it works;
 * - importing kDLCUDAHost memory (copied, the producer's deleter called at once), an
 *   empty kDLCPU tensor with data NULL, kDLExtDev memory of no device (NOT_SUPPORTED);
 * - an in-place import left alive at hwrt_shutdown: its producer's deleter is called
 *   once, by the shutdown. */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

static int deleted;
static void count_delete(DLManagedTensorVersioned *m) { deleted++; (void)m; }

static DLManagedTensorVersioned host_tensor(int device_type, void *data, int64_t *shape, int n)
{
    DLManagedTensorVersioned m;
    memset(&m, 0, sizeof m);
    m.version.major = DLPACK_MAJOR_VERSION;
    m.deleter = count_delete;
    m.dl_tensor.data = data;
    m.dl_tensor.device = (DLDevice){(DLDeviceType)device_type, 0};
    m.dl_tensor.ndim = 1;
    m.dl_tensor.dtype = (DLDataType){kDLFloat, 32, 1};
    shape[0] = n;
    m.dl_tensor.shape = shape;
    return m;
}

static void export_offloaded(void)
{
    TEST_CASE("exporting an evicted offloadable tensor");
    hwrt_offload_config c = {.enabled = 1, .max_device_memory = 64 << 20,
                             .offload_cpu_size = 64 << 20, .enable_pinned_mem = 1};
    OK(hwrt_set_offload_config(&c));
    float v[1000];
    for (int i = 0; i < 1000; i++) v[i] = (float)i * 0.5f;
    int64_t shape[1] = {1000};
    hwrt_tensor t = NULL;
    OK(hwrt_tensor_from_host(&t, HWRT_FLOAT32, 1, shape, v));
    OK(hwrt_tensor_set_offloadable(t, 1));
    OK(hwrt_offload_evict(t));
    int where = -1;
    OK(hwrt_offload_location(t, &where));
    EXPECT(where == 1);
    DLManagedTensorVersioned *m = NULL;
    OK(hwrt_tensor_to_dlpack(t, &m));
    EXPECT(m && m->dl_tensor.device.device_type == kDLCPU);
    if (m) EXPECT(!memcmp(m->dl_tensor.data, v, sizeof v));
    OK(hwrt_offload_location(t, &where));
    EXPECT(where == 0);
    FAILS(hwrt_offload_evict(t), HWRT_ERROR_INVALID_ARGUMENT, "pinned to the device");
    OK(hwrt_offload_location(t, &where));
    EXPECT(where == 0);
    if (m) m->deleter(m);
    OK(hwrt_tensor_release(t));
    c.enabled = 0;
    OK(hwrt_set_offload_config(&c));
}

static void host_copies(void)
{
    TEST_CASE("a host copy of an empty tensor");
    int64_t zero[1] = {0};
    hwrt_tensor e = NULL;
    OK(hwrt_tensor_empty(&e, HWRT_FLOAT32, 1, zero));
    DLManagedTensorVersioned *m = NULL;
    OK(hwrt_tensor_to_dlpack_host(e, &m));
    EXPECT(m && m->dl_tensor.ndim == 1 && m->dl_tensor.shape[0] == 0 &&
           (m->flags & DLPACK_FLAG_BITMASK_IS_COPIED) && m->dl_tensor.data);
    if (m) m->deleter(m);

    TEST_CASE("a host copy while the device has a sticky fault");
    float v[16] = {0};
    int64_t shape[1] = {16};
    hwrt_tensor t = NULL;
    OK(hwrt_tensor_from_host(&t, HWRT_FLOAT32, 1, shape, v));
    OK(hwrt_device_synchronize());
    setenv("HWRT_SIM_FAULTS", "kernel:nth=1", 1);    /* armed at the next device open */
    OK(hwrt_tensor_release(t));
    OK(hwrt_tensor_release(e));
    OK(hwrt_shutdown());
    OK(hwrt_set_device("sim", 0));
    OK(hwrt_tensor_from_host(&t, HWRT_FLOAT32, 1, shape, v));
    OK(hwrt_op_fill(t, 3.0, NULL));                   /* faults: the device skips on */
    DLManagedTensorVersioned sentinel;
    m = &sentinel;                                    /* must stay as it is */
    FAILS(hwrt_tensor_to_dlpack_host(t, &m), HWRT_ERROR_DEVICE_FAULT, "hwrt_device_reset");
    EXPECT(m == &sentinel);
    OK(hwrt_device_reset(0));
    OK(hwrt_op_fill(t, 4.0, NULL));
    m = NULL;
    OK(hwrt_tensor_to_dlpack_host(t, &m));
    EXPECT(m && ((float *)m->dl_tensor.data)[15] == 4.0f);
    if (m) m->deleter(m);
    OK(hwrt_tensor_release(t));
    unsetenv("HWRT_SIM_FAULTS");
    OK(hwrt_shutdown());
    OK(hwrt_set_device("sim", 0));
}

static void imports(void)
{
    TEST_CASE("kDLCUDAHost memory is copied, its producer released at once");
    float v[8] = {1, 2, 3, 4, 5, 6, 7, 8}, got[8] = {0};
    int64_t shape[1];
    DLManagedTensorVersioned m = host_tensor(kDLCUDAHost, v, shape, 8);
    hwrt_tensor t = NULL;
    deleted = 0;
    OK(hwrt_tensor_from_dlpack(&t, &m));
    EXPECT(deleted == 1);
    v[0] = 100;                                       /* the producer's memory: not shared */
    OK(hwrt_tensor_copy_to_host(t, got, sizeof got));
    EXPECT(got[0] == 1 && got[7] == 8);
    OK(hwrt_tensor_release(t));

    TEST_CASE("an empty kDLCPU tensor with data NULL");
    m = host_tensor(kDLCPU, NULL, shape, 0);
    deleted = 0;
    OK(hwrt_tensor_from_dlpack(&t, &m));
    EXPECT(deleted == 1);
    int64_t numel = -1;
    OK(hwrt_tensor_numel(t, &numel));
    EXPECT(numel == 0);
    OK(hwrt_tensor_release(t));

    TEST_CASE("kDLExtDev memory of no device");
    m = host_tensor(kDLExtDev, v, shape, 8);
    m.dl_tensor.device.device_id = 99;
    deleted = 0;
    t = NULL;
    FAILS(hwrt_tensor_from_dlpack(&t, &m), HWRT_ERROR_NOT_SUPPORTED,
          "device type 12 (device 99) is not memory of the backend in use");
    EXPECT(t == NULL && deleted == 0);
}

static void leaked_import(void)
{
    TEST_CASE("an in-place import alive at hwrt_shutdown");
    float v[32];
    for (int i = 0; i < 32; i++) v[i] = (float)i;
    int64_t shape[1] = {32};
    hwrt_tensor t = NULL, u = NULL;
    OK(hwrt_tensor_from_host(&t, HWRT_FLOAT32, 1, shape, v));
    DLManagedTensorVersioned *m = NULL;
    OK(hwrt_tensor_to_dlpack(t, &m));
    if (!m) return;
    int64_t s2[1];
    DLManagedTensorVersioned w = host_tensor(kDLCPU, m->dl_tensor.data, s2, 32);  /* the arena */
    deleted = 0;
    OK(hwrt_tensor_from_dlpack(&u, &w));
    EXPECT(deleted == 0);                             /* shared: the producer holds it */
    float got[32] = {0};
    OK(hwrt_tensor_copy_to_host(u, got, sizeof got));
    EXPECT(got[31] == 31);
    OK(hwrt_shutdown());                              /* u, t and the export left alive */
    EXPECT(deleted == 1);
    m->deleter(m);                                    /* after the session: frees only */
}

int main(void)
{
    setenv("HWRT_SIM_DEVICES", "1", 1);
    unsetenv("HWRT_SIM_FAULTS");
    OK(hwrt_set_device("sim", 0));
    export_offloaded();
    host_copies();
    imports();
    leaked_import();
    return test_report();
}
