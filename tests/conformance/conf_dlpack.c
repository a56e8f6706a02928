/* DLPack: export (fields, shared memory, the reference it holds, the deleter
 * convention), import of host data (copied, deleter called at once) and of hwrt device
 * memory (shared, deleter called when the tensor goes), and every malformed input
 * (which must leave ownership with the caller: no deleter call on failure). */
#include "conf.h"

static int deleted;
static void (*export_deleter)(DLManagedTensorVersioned *);

static void counting_deleter(DLManagedTensorVersioned *m)
{
    deleted++;
    if (export_deleter) export_deleter(m);
}

typedef struct { DLManagedTensorVersioned m; int64_t shape[4], strides[4]; float data[64]; } host_dl;

static void host_deleter(DLManagedTensorVersioned *m)
{
    deleted++;
    free(m->manager_ctx);
}

static host_dl *make_host(int ndim, const int64_t *shape)
{
    host_dl *h = calloc(1, sizeof *h);
    h->m.version.major = DLPACK_MAJOR_VERSION;
    h->m.version.minor = DLPACK_MINOR_VERSION;
    h->m.manager_ctx = h;
    h->m.deleter = host_deleter;
    h->m.dl_tensor.data = h->data;
    h->m.dl_tensor.device.device_type = kDLCPU;
    h->m.dl_tensor.ndim = ndim;
    h->m.dl_tensor.dtype.code = kDLFloat;
    h->m.dl_tensor.dtype.bits = 32;
    h->m.dl_tensor.dtype.lanes = 1;
    for (int i = 0; i < ndim; i++) h->shape[i] = shape[i];
    h->m.dl_tensor.shape = h->shape;
    for (int i = 0; i < 64; i++) h->data[i] = (float)i * 0.5f - 3.0f;
    return h;
}

static void export_roundtrip(void)
{
    CASE("dlpack export");
    float vals[12];
    for (int i = 0; i < 12; i++) vals[i] = (float)i - 5.5f;
    int64_t shape[2] = {3, 4};
    hwrt_tensor t;
    OK(hwrt_tensor_from_host(&t, HWRT_FLOAT32, 2, shape, vals));
    OK(hwrt_op_scale(t, t, 2.0, NULL));                /* pending work: export orders it */
    DLManagedTensorVersioned *m = NULL;
    OK(hwrt_tensor_to_dlpack(t, &m));
    EXPECT(m != NULL);
    if (!m) return;
    void *data;
    OK(hwrt_tensor_data(t, &data));
    const DLTensor *d = &m->dl_tensor;
    EXPECT(m->version.major == DLPACK_MAJOR_VERSION);
    EXPECT(m->deleter != NULL);
    /* the backend's DLPack device: sim memory is host memory, opencl names a cl_mem and
     * the offset in it, cuda gives device pointers; a backend without the slot kDLExtDev */
    int want = !strcmp(c_backend, "sim") ? kDLCPU : !strcmp(c_backend, "opencl") ? kDLOpenCL
             : !strcmp(c_backend, "cuda") ? kDLCUDA : kDLExtDev;
    int addressable = want != kDLOpenCL;      /* data + byte_offset is hwrt's address */
    EXPECT((int)d->device.device_type == want);
    EXPECT(d->device.device_id == 0);
    DLDevice dd;
    OK(hwrt_tensor_dlpack_device(t, &dd));
    EXPECT(dd.device_type == d->device.device_type && dd.device_id == d->device.device_id);
    if (addressable) EXPECT((char *)d->data + d->byte_offset == (char *)data);
    else EXPECT(d->data != NULL && d->data != data);
    EXPECT(d->ndim == 2 && d->shape[0] == 3 && d->shape[1] == 4);
    EXPECT(d->dtype.code == kDLFloat && d->dtype.bits == 32 && d->dtype.lanes == 1);
    EXPECT(d->strides == NULL || (d->strides[0] == 4 && d->strides[1] == 1));
    /* the export holds a reference: the memory outlives the handle */
    OK(hwrt_tensor_release(t));
    float back[12];
    OK(hwrt_memcpy(back, data, sizeof back, HWRT_MEMCPY_DEVICE_TO_HOST));
    int ok = 1;
    for (int i = 0; i < 12; i++) ok &= back[i] == vals[i] * 2.0f;
    EXPECT(ok);
    /* import it back: hwrt device memory is shared, not copied. Where DLPack's data is
     * the address, another deleter (counting calls) does not hide it; a cl_mem is known
     * only through hwrt's own export, whose release the freed memory below shows */
    export_deleter = m->deleter;
    if (addressable) m->deleter = counting_deleter;
    deleted = 0;
    hwrt_tensor u;
    OK(hwrt_tensor_from_dlpack(&u, m));
    void *udata;
    OK(hwrt_tensor_data(u, &udata));
    EXPECT(udata == data);
    EXPECT(deleted == 0);                              /* hwrt owns it until u goes */
    OK(hwrt_op_relu(u, u, NULL));
    OK(hwrt_tensor_copy_to_host(u, back, sizeof back));
    ok = 1;
    for (int i = 0; i < 12; i++) ok &= back[i] == (vals[i] > 0 ? vals[i] * 2.0f : 0.0f);
    EXPECT(ok);
    OK(hwrt_tensor_release(u));
    EXPECT(deleted == (addressable ? 1 : 0));          /* exactly once */
    /* with the last owner gone the memory went back to hwrt */
    FAILS(hwrt_memcpy(back, data, sizeof back, HWRT_MEMCPY_DEVICE_TO_HOST),
          HWRT_ERROR_INVALID_ARGUMENT, "not device memory");
    /* an export the consumer simply deletes releases the tensor */
    OK(hwrt_tensor_from_host(&t, HWRT_FLOAT32, 2, shape, vals));
    OK(hwrt_tensor_to_dlpack(t, &m));
    OK(hwrt_tensor_release(t));
    m->deleter(m);
    FAILS(hwrt_tensor_to_dlpack(t, &m), HWRT_ERROR_INVALID_HANDLE, "tensor");
    /* every dtype maps */
    const hwrt_dtype dts[] = {HWRT_FLOAT16, HWRT_BFLOAT16, HWRT_FLOAT64, HWRT_INT8, HWRT_UINT8,
                              HWRT_INT32, HWRT_INT64, HWRT_BOOL, HWRT_INT16, HWRT_UINT16,
                              HWRT_UINT32, HWRT_UINT64, HWRT_COMPLEX64, HWRT_COMPLEX128};
    const uint8_t codes[] = {kDLFloat, kDLBfloat, kDLFloat, kDLInt, kDLUInt, kDLInt, kDLInt, kDLBool,
                             kDLInt, kDLUInt, kDLUInt, kDLUInt, kDLComplex, kDLComplex};
    for (int i = 0; i < (int)(sizeof dts / sizeof dts[0]); i++) {
        int64_t s1[1] = {3};
        OK(hwrt_tensor_empty(&t, dts[i], 1, s1));
        OK(hwrt_tensor_to_dlpack(t, &m));
        EXPECT(m->dl_tensor.dtype.code == codes[i]);
        EXPECT(m->dl_tensor.dtype.bits == 8 * hwrt_dtype_size(dts[i]));
        hwrt_tensor back_t;
        OK(hwrt_tensor_from_dlpack(&back_t, m));
        hwrt_dtype got;
        OK(hwrt_tensor_dtype(back_t, &got));
        EXPECT(got == dts[i]);
        OK(hwrt_tensor_release(back_t));
        OK(hwrt_tensor_release(t));
    }
    FAILS(hwrt_tensor_to_dlpack(NULL, &m), HWRT_ERROR_INVALID_HANDLE, "tensor");
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 2, shape));
    FAILS(hwrt_tensor_to_dlpack(t, NULL), HWRT_ERROR_INVALID_ARGUMENT, "NULL");
    OK(hwrt_tensor_release(t));
}

static void import_host(void)
{
    CASE("dlpack import host");
    int64_t shape[2] = {4, 5};
    host_dl *h = make_host(2, shape);
    float expect[20];
    memcpy(expect, h->data, sizeof expect);
    deleted = 0;
    hwrt_tensor t;
    OK(hwrt_tensor_from_dlpack(&t, &h->m));
    EXPECT(deleted == 1);                              /* copied: deleter ran at once */
    float back[20];
    OK(hwrt_tensor_copy_to_host(t, back, sizeof back));
    EXPECT(memcmp(back, expect, sizeof back) == 0);
    int dev = -1;
    OK(hwrt_tensor_device(t, &dev));
    EXPECT(dev == 0);
    OK(hwrt_tensor_release(t));
    /* explicit compact strides and a byte offset are honoured */
    h = make_host(2, shape);
    h->strides[0] = 5;
    h->strides[1] = 1;
    h->m.dl_tensor.strides = h->strides;
    h->m.dl_tensor.byte_offset = 4 * sizeof(float);
    memcpy(expect, h->data + 4, sizeof expect);
    OK(hwrt_tensor_from_dlpack(&t, &h->m));
    OK(hwrt_tensor_copy_to_host(t, back, sizeof back));
    EXPECT(memcmp(back, expect, sizeof back) == 0);
    OK(hwrt_tensor_release(t));
}

static void import_errors(void)
{
    CASE("dlpack import errors");
    int64_t shape[2] = {4, 5};
    hwrt_tensor t;
    host_dl *h = make_host(2, shape);
    deleted = 0;
    FAILS(hwrt_tensor_from_dlpack(NULL, &h->m), HWRT_ERROR_INVALID_ARGUMENT, "");
    FAILS(hwrt_tensor_from_dlpack(&t, NULL), HWRT_ERROR_INVALID_ARGUMENT, "");
    h->m.version.major = 9;
    FAILS(hwrt_tensor_from_dlpack(&t, &h->m), HWRT_ERROR_NOT_SUPPORTED, "version 9");
    h->m.version.major = DLPACK_MAJOR_VERSION;
    h->m.dl_tensor.dtype.lanes = 4;
    FAILS(hwrt_tensor_from_dlpack(&t, &h->m), HWRT_ERROR_NOT_SUPPORTED, "lanes 4");
    h->m.dl_tensor.dtype.lanes = 1;
    h->m.dl_tensor.dtype.code = kDLComplex;
    FAILS(hwrt_tensor_from_dlpack(&t, &h->m), HWRT_ERROR_NOT_SUPPORTED, "dtype");
    h->m.dl_tensor.dtype.code = kDLFloat;
    h->strides[0] = 1;                                  /* column-major: not compact */
    h->strides[1] = 4;
    h->m.dl_tensor.strides = h->strides;
    FAILS(hwrt_tensor_from_dlpack(&t, &h->m), HWRT_ERROR_NOT_SUPPORTED, "strided");
    h->m.dl_tensor.strides = NULL;
    h->m.dl_tensor.ndim = 9;
    FAILS(hwrt_tensor_from_dlpack(&t, &h->m), HWRT_ERROR_INVALID_ARGUMENT, "ndim 9");
    h->m.dl_tensor.ndim = 2;
    /* another vendor's device memory is refused; on cuda, kDLCUDA memory of another library
     * is imported in place (src/tensor/dlpack.c), so Vulkan stands in for "another vendor" */
    int foreign = strcmp(c_backend, "cuda") ? kDLCUDA : kDLVulkan;
    h->m.dl_tensor.device.device_type = foreign;
    FAILS(hwrt_tensor_from_dlpack(&t, &h->m), HWRT_ERROR_NOT_SUPPORTED,
          foreign == kDLCUDA ? "device type 2" : "device type 7");
    h->m.dl_tensor.device.device_type = kDLExtDev;      /* not this backend's type */
    if (strcmp(c_backend, "sim") && strcmp(c_backend, "opencl") && strcmp(c_backend, "cuda")) {
        /* a backend without a DLPack type: kDLExtDev is its own, the memory is not */
        FAILS(hwrt_tensor_from_dlpack(&t, &h->m), HWRT_ERROR_INVALID_ARGUMENT, "not live hwrt");
    } else {
        FAILS(hwrt_tensor_from_dlpack(&t, &h->m), HWRT_ERROR_NOT_SUPPORTED, "device type 12");
    }
    if (!strcmp(c_backend, "opencl")) {                 /* claims to be a cl_mem: it is not */
        h->m.dl_tensor.device.device_type = kDLOpenCL;
        FAILS(hwrt_tensor_from_dlpack(&t, &h->m), HWRT_ERROR_INVALID_ARGUMENT, "not live hwrt");
    }
    h->m.dl_tensor.device.device_type = kDLCPU;
    EXPECT(deleted == 0);                               /* failures leave ownership with us */
    OK(hwrt_tensor_from_dlpack(&t, &h->m));             /* repaired: accepted */
    EXPECT(deleted == 1);
    OK(hwrt_tensor_release(t));
    /* device memory of the wrong extent */
    int64_t s4[1] = {4};
    hwrt_tensor small;
    OK(hwrt_tensor_empty(&small, HWRT_FLOAT32, 1, s4));
    DLManagedTensorVersioned *m;
    OK(hwrt_tensor_to_dlpack(small, &m));
    m->dl_tensor.shape[0] = 400;
    FAILS(hwrt_tensor_from_dlpack(&t, m), HWRT_ERROR_INVALID_ARGUMENT, "not live hwrt");
    m->dl_tensor.shape[0] = 4;
    m->deleter(m);
    OK(hwrt_tensor_release(small));
}

void conf_dlpack(void)
{
    export_roundtrip();
    import_host();
    import_errors();
}
