/* DLPack on opencl (issue 20 item 3): device memory is kDLOpenCL with the device ordinal,
 * named as DLPack names OpenCL memory: data is the cl_mem, byte_offset the tensor's place
 * in it (the pool splits one buffer into many tensors). hwrt's own export imports again
 * without a copy; another producer's kDLOpenCL (a cl_mem of its context) is refused; the
 * host copy is kDLCPU. */
#include "harness.h"

#include <string.h>

#define N 64

static void noop_deleter(DLManagedTensorVersioned *m) { (void)m; }

int main(void)
{
    int64_t shape[1] = {N};
    float host[N], back[N];
    for (int i = 0; i < N; i++) host[i] = (float)i;
    OK(hwrt_set_device("opencl", 0));
    hwrt_tensor a = NULL, b = NULL;
    OK(hwrt_tensor_from_host(&a, HWRT_FLOAT32, 1, shape, host));
    OK(hwrt_tensor_from_host(&b, HWRT_FLOAT32, 1, shape, host));   /* same segment, later */
    void *a_data = NULL, *b_data = NULL;
    OK(hwrt_tensor_data(a, &a_data));
    OK(hwrt_tensor_data(b, &b_data));

    TEST_CASE("kDLOpenCL, device 0, (cl_mem, offset)");
    DLDevice dev = {kDLCPU, -1};
    OK(hwrt_tensor_dlpack_device(a, &dev));
    EXPECT(dev.device_type == kDLOpenCL && dev.device_id == 0);
    DLManagedTensorVersioned *da = NULL, *db = NULL;
    OK(hwrt_tensor_to_dlpack(a, &da));
    OK(hwrt_tensor_to_dlpack(b, &db));
    EXPECT(da->dl_tensor.device.device_type == kDLOpenCL);
    EXPECT(da->dl_tensor.data != NULL && da->dl_tensor.data != a_data);   /* a cl_mem */
    /* both tensors live in one pool segment: one cl_mem, offsets as far apart as the
     * hwrt addresses are */
    if (da->dl_tensor.data == db->dl_tensor.data)
        EXPECT(db->dl_tensor.byte_offset - da->dl_tensor.byte_offset ==
               (uint64_t)((char *)b_data - (char *)a_data));
    printf("a: cl_mem %p + %llu, b: cl_mem %p + %llu\n", da->dl_tensor.data,
           (unsigned long long)da->dl_tensor.byte_offset, db->dl_tensor.data,
           (unsigned long long)db->dl_tensor.byte_offset);

    TEST_CASE("own export imports without a copy");
    hwrt_tensor imp = NULL;
    void *imp_data = NULL;
    OK(hwrt_tensor_from_dlpack(&imp, da));
    OK(hwrt_tensor_data(imp, &imp_data));
    EXPECT(imp_data == a_data);
    OK(hwrt_op_fill(imp, 3.0, NULL));
    OK(hwrt_tensor_copy_to_host(a, back, sizeof back));
    EXPECT(back[0] == 3.0f && back[N - 1] == 3.0f);
    OK(hwrt_tensor_release(imp));

    TEST_CASE("another producer's cl_mem is refused, naming it");
    DLManagedTensorVersioned f = *db;                /* same fields, not hwrt's deleter */
    f.deleter = noop_deleter;
    f.manager_ctx = NULL;
    FAILS(hwrt_tensor_from_dlpack(&imp, &f), HWRT_ERROR_INVALID_ARGUMENT, "not live hwrt");
    db->deleter(db);

    TEST_CASE("host copy: kDLCPU");
    DLManagedTensorVersioned *hc = NULL;
    OK(hwrt_tensor_to_dlpack_host(b, &hc));
    EXPECT(hc->dl_tensor.device.device_type == kDLCPU && hc->flags == DLPACK_FLAG_BITMASK_IS_COPIED);
    EXPECT(memcmp(hc->dl_tensor.data, host, sizeof host) == 0);
    hc->deleter(hc);
    OK(hwrt_tensor_release(a));
    OK(hwrt_tensor_release(b));
    OK(hwrt_shutdown());
    return test_report();
}
