/* DLPack devices (issue 20 item 3): the device type comes from the backend. sim memory is
 * host memory, exported as kDLCPU (device 0) and read in place; a host copy is kDLCPU and
 * flagged copied, outlives hwrt_shutdown and imports as a copy; the import shares what it
 * can (own exports, the sim's own memory presented as kDLCPU) and refuses device types of
 * another backend and read-only tensors it would share, naming them. */
#include "harness.h"

#include <string.h>

#define N 256

/* a foreign producer's tensor: the deleter counts its calls */
static int foreign_deleted;
static void foreign_deleter(DLManagedTensorVersioned *m) { (void)m; foreign_deleted++; }

static DLManagedTensorVersioned foreign(void *data, int type, int id, int64_t *shape)
{
    DLManagedTensorVersioned m;
    memset(&m, 0, sizeof m);
    m.version.major = 1;
    m.deleter = foreign_deleter;
    m.dl_tensor.data = data;
    m.dl_tensor.device.device_type = (DLDeviceType)type;
    m.dl_tensor.device.device_id = id;
    m.dl_tensor.ndim = 1;
    m.dl_tensor.dtype = (DLDataType){kDLFloat, 32, 1};
    m.dl_tensor.shape = shape;
    return m;
}

int main(void)
{
    int64_t shape[1] = {N};
    float host[N], back[N];
    for (int i = 0; i < N; i++) host[i] = (float)i;
    OK(hwrt_set_device("sim", 0));
    hwrt_tensor a = NULL;
    OK(hwrt_tensor_from_host(&a, HWRT_FLOAT32, 1, shape, host));
    void *a_data = NULL;
    OK(hwrt_tensor_data(a, &a_data));

    TEST_CASE("sim export: kDLCPU, device 0, the tensor's own memory");
    DLDevice dev = {kDLExtDev, -1};
    OK(hwrt_tensor_dlpack_device(a, &dev));
    EXPECT(dev.device_type == kDLCPU && dev.device_id == 0);
    DLManagedTensorVersioned *dl = NULL;
    OK(hwrt_tensor_to_dlpack(a, &dl));
    EXPECT(dl->dl_tensor.device.device_type == kDLCPU && dl->dl_tensor.device.device_id == 0);
    EXPECT(dl->dl_tensor.data == a_data && dl->dl_tensor.byte_offset == 0);
    EXPECT(dl->flags == 0 && dl->version.major == 1);
    float *p = dl->dl_tensor.data;
    EXPECT(p[7] == 7.0f);
    p[7] = -1.0f;                                    /* a consumer's write, in place */
    OK(hwrt_tensor_copy_to_host(a, back, sizeof back));
    EXPECT(back[7] == -1.0f);
    p[7] = 7.0f;

    TEST_CASE("own export imports without a copy; read-only is refused");
    hwrt_tensor imp = NULL;
    void *imp_data = NULL;
    dl->flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
    FAILS(hwrt_tensor_from_dlpack(&imp, dl), HWRT_ERROR_NOT_SUPPORTED, "read-only");
    dl->flags = 0;
    OK(hwrt_tensor_from_dlpack(&imp, dl));
    OK(hwrt_tensor_data(imp, &imp_data));
    EXPECT(imp_data == a_data);
    OK(hwrt_tensor_release(imp));

    TEST_CASE("sim memory presented by another producer as kDLCPU is shared");
    DLManagedTensorVersioned f = foreign(a_data, kDLCPU, 0, shape);
    foreign_deleted = 0;
    OK(hwrt_tensor_from_dlpack(&imp, &f));
    OK(hwrt_tensor_data(imp, &imp_data));
    EXPECT(imp_data == a_data && foreign_deleted == 0);
    OK(hwrt_tensor_release(imp));
    EXPECT(foreign_deleted == 1);

    TEST_CASE("plain host memory as kDLCPU is copied; the producer is released at once");
    float other[N];
    memcpy(other, host, sizeof other);
    f = foreign(other, kDLCPU, 0, shape);
    foreign_deleted = 0;
    OK(hwrt_tensor_from_dlpack(&imp, &f));
    EXPECT(foreign_deleted == 1);
    OK(hwrt_tensor_data(imp, &imp_data));
    EXPECT(imp_data != (void *)other);
    other[3] = 99.0f;
    OK(hwrt_tensor_copy_to_host(imp, back, sizeof back));
    EXPECT(back[3] == 3.0f);
    OK(hwrt_tensor_release(imp));

    TEST_CASE("another backend's device type is refused, naming it");
    f = foreign(a_data, kDLCUDA, 0, shape);
    foreign_deleted = 0;
    imp = NULL;
    FAILS(hwrt_tensor_from_dlpack(&imp, &f), HWRT_ERROR_NOT_SUPPORTED, "device type 2");
    EXPECT(imp == NULL && foreign_deleted == 0);
    f = foreign(a_data, kDLExtDev, 0, shape);
    FAILS(hwrt_tensor_from_dlpack(&imp, &f), HWRT_ERROR_NOT_SUPPORTED, "device type 12");

    TEST_CASE("host copy: kDLCPU, copied, independent, outlives hwrt_shutdown");
    DLManagedTensorVersioned *hc = NULL;
    FAILS(hwrt_tensor_to_dlpack_host(a, NULL), HWRT_ERROR_INVALID_ARGUMENT, "out is NULL");
    OK(hwrt_tensor_to_dlpack_host(a, &hc));
    EXPECT(hc->dl_tensor.device.device_type == kDLCPU && hc->dl_tensor.device.device_id == 0);
    EXPECT(hc->flags == DLPACK_FLAG_BITMASK_IS_COPIED);
    EXPECT(hc->dl_tensor.data != a_data);
    EXPECT(hc->dl_tensor.dtype.code == kDLFloat && hc->dl_tensor.dtype.bits == 32);
    EXPECT(hc->dl_tensor.ndim == 1 && hc->dl_tensor.shape[0] == N);
    EXPECT(memcmp(hc->dl_tensor.data, host, sizeof host) == 0);
    OK(hwrt_op_fill(a, 5.0, NULL));                  /* later writes do not reach the copy */
    OK(hwrt_tensor_copy_to_host(a, back, sizeof back));
    EXPECT(back[0] == 5.0f && ((float *)hc->dl_tensor.data)[0] == 0.0f);
    OK(hwrt_tensor_release(a));
    OK(hwrt_shutdown());
    EXPECT(((float *)hc->dl_tensor.data)[N - 1] == (float)(N - 1));
    OK(hwrt_set_device("sim", 0));
    OK(hwrt_tensor_from_dlpack(&imp, hc));           /* a copy onto the device */
    OK(hwrt_tensor_copy_to_host(imp, back, sizeof back));
    EXPECT(memcmp(back, host, sizeof host) == 0);
    OK(hwrt_tensor_release(imp));
    OK(hwrt_shutdown());
    return test_report();
}
