/* DLPack import refusals and the in-place paths test_dlpack_* do not reach (issue 25
 * item 3): NULL arguments, another major version, dtypes hwrt lacks, ndim out of range or
 * no shape, strided tensors (and strides that are compact after all), read-only tensors
 * (host copies are allowed, shared memory is not), memory of another device type, an own
 * export re-imported with a shape larger than its memory. Every refusal leaves the
 * producer's tensor to the producer (its deleter is not called) and its data intact;
 * every success is checked by reading the data back. */
#include "harness.h"

#include <stdint.h>

static int deleted;
static void deleter(DLManagedTensorVersioned *self) { (void)self; deleted++; }

static DLManagedTensorVersioned host_dl(float *data, int32_t ndim, int64_t *shape)
{
    DLManagedTensorVersioned m;
    memset(&m, 0, sizeof m);
    m.version.major = DLPACK_MAJOR_VERSION;
    m.deleter = deleter;
    m.dl_tensor.data = data;
    m.dl_tensor.device = (DLDevice){kDLCPU, 0};
    m.dl_tensor.ndim = ndim;
    m.dl_tensor.dtype = (DLDataType){kDLFloat, 32, 1};
    m.dl_tensor.shape = shape;
    return m;
}

static int holds(hwrt_tensor t, const float *want, int n)
{
    float got[64];
    if (hwrt_tensor_copy_to_host(t, got, (size_t)n * sizeof *got) != HWRT_SUCCESS) return 0;
    return memcmp(got, want, (size_t)n * sizeof *got) == 0;
}

static void test_refusals(void)
{
    TEST_CASE("malformed DLPack tensors are refused, the producer keeps them");
    float v[6] = {1, 2, 3, 4, 5, 6};
    int64_t shape[2] = {2, 3};
    hwrt_tensor t = NULL;
    DLManagedTensorVersioned m = host_dl(v, 2, shape);
    deleted = 0;
    FAILS(hwrt_tensor_from_dlpack(NULL, &m), HWRT_ERROR_INVALID_ARGUMENT, "out and in are required");
    FAILS(hwrt_tensor_from_dlpack(&t, NULL), HWRT_ERROR_INVALID_ARGUMENT, "out and in are required");
    m.version.major = DLPACK_MAJOR_VERSION + 1;
    FAILS(hwrt_tensor_from_dlpack(&t, &m), HWRT_ERROR_NOT_SUPPORTED, "DLPack major version 2 is not supported");
    m = host_dl(v, 2, shape);
    m.dl_tensor.dtype = (DLDataType){kDLFloat, 32, 4};
    FAILS(hwrt_tensor_from_dlpack(&t, &m), HWRT_ERROR_NOT_SUPPORTED, "dtype code 2 bits 32 lanes 4 has no hwrt equivalent");
    m.dl_tensor.dtype = (DLDataType){kDLOpaqueHandle, 64, 1};
    FAILS(hwrt_tensor_from_dlpack(&t, &m), HWRT_ERROR_NOT_SUPPORTED, "dtype code 3 bits 64 lanes 1");
    m = host_dl(v, -1, shape);
    FAILS(hwrt_tensor_from_dlpack(&t, &m), HWRT_ERROR_INVALID_ARGUMENT, "ndim -1 is out of range 0..");
    m = host_dl(v, HWRT_MAX_DIMS + 1, shape);
    FAILS(hwrt_tensor_from_dlpack(&t, &m), HWRT_ERROR_INVALID_ARGUMENT, "is out of range 0..");
    m = host_dl(v, 2, NULL);
    FAILS(hwrt_tensor_from_dlpack(&t, &m), HWRT_ERROR_INVALID_ARGUMENT, "(or shape is NULL)");
    int64_t transposed[2] = {1, 2};               /* column-major 2x3 */
    m = host_dl(v, 2, shape);
    m.dl_tensor.strides = transposed;
    FAILS(hwrt_tensor_from_dlpack(&t, &m), HWRT_ERROR_NOT_SUPPORTED, "strided tensors are not supported");
    m = host_dl(v, 2, shape);
    m.dl_tensor.device = (DLDevice){kDLCUDA, 0};  /* the sim's memory is kDLCPU */
    FAILS(hwrt_tensor_from_dlpack(&t, &m), HWRT_ERROR_NOT_SUPPORTED, "device type 2 (device 0) is not memory of the backend in use");
    EXPECT(deleted == 0 && t == NULL);
    EXPECT(v[0] == 1 && v[5] == 6);
}

/* HWRT_MAX_DIMS dimensions are taken, one more refused (seed 3009's dlpack.c:208, `ndim >
 * HWRT_MAX_DIMS` made `>=`, refused the largest rank hwrt has) */
static void test_max_dims(void)
{
    TEST_CASE("a DLPack tensor of HWRT_MAX_DIMS dimensions is taken");
    float v[6] = {1, 2, 3, 4, 5, 6};
    int64_t shape[HWRT_MAX_DIMS + 1];
    for (int i = 0; i < HWRT_MAX_DIMS + 1; i++) shape[i] = 1;
    shape[HWRT_MAX_DIMS - 2] = 2;
    shape[HWRT_MAX_DIMS - 1] = 3;
    hwrt_tensor t = NULL;
    DLManagedTensorVersioned m = host_dl(v, HWRT_MAX_DIMS + 1, shape);
    deleted = 0;
    FAILS(hwrt_tensor_from_dlpack(&t, &m), HWRT_ERROR_INVALID_ARGUMENT, "ndim 9 is out of range 0..8");
    m = host_dl(v, HWRT_MAX_DIMS, shape);
    OK(hwrt_tensor_from_dlpack(&t, &m));
    int64_t got[HWRT_MAX_DIMS];
    int nd = 0;
    OK(hwrt_tensor_ndim(t, &nd));
    EXPECT(nd == HWRT_MAX_DIMS);
    OK(hwrt_tensor_shape(t, got, HWRT_MAX_DIMS));
    EXPECT(got[0] == 1 && got[HWRT_MAX_DIMS - 2] == 2 && got[HWRT_MAX_DIMS - 1] == 3);
    EXPECT(holds(t, v, 6));
    OK(hwrt_tensor_release(t));
    EXPECT(deleted == 1);
}

static void test_host_imports(void)
{
    TEST_CASE("host tensors: copied, read-only ones too; strides of size-1 dims ignored");
    float v[6] = {1, 2, 3, 4, 5, 6};
    int64_t shape[2] = {2, 3}, strides[2] = {3, 1};
    hwrt_tensor t;
    DLManagedTensorVersioned m = host_dl(v, 2, shape);
    m.dl_tensor.strides = strides;                /* explicit, compact */
    m.flags = DLPACK_FLAG_BITMASK_READ_ONLY;      /* a copy is made: allowed */
    deleted = 0;
    OK(hwrt_tensor_from_dlpack(&t, &m));
    EXPECT(deleted == 1);                         /* the producer's tensor is released */
    EXPECT(holds(t, v, 6));
    v[0] = 100;                                   /* a copy: not shared */
    float orig[6] = {1, 2, 3, 4, 5, 6};
    EXPECT(holds(t, orig, 6));
    OK(hwrt_tensor_release(t));

    int64_t shape3[3] = {2, 1, 3}, strides3[3] = {3, 777, 1};
    m = host_dl(orig, 3, shape3);
    m.dl_tensor.strides = strides3;               /* a size-1 dim's stride means nothing */
    m.deleter = NULL;                             /* no deleter: nothing to call */
    OK(hwrt_tensor_from_dlpack(&t, &m));
    EXPECT(holds(t, orig, 6));
    int64_t got_shape[HWRT_MAX_DIMS];
    int nd = 0;
    OK(hwrt_tensor_ndim(t, &nd));
    OK(hwrt_tensor_shape(t, got_shape, HWRT_MAX_DIMS));
    EXPECT(nd == 3 && got_shape[0] == 2 && got_shape[1] == 1 && got_shape[2] == 3);
    OK(hwrt_tensor_release(t));
}

static void test_device_memory(void)
{
    TEST_CASE("device memory: shared in place, never when read-only");
    float v[6] = {1, 2, 3, 4, 5, 6}, w[6] = {7, 8, 9, 10, 11, 12};
    int64_t shape[2] = {2, 3};
    hwrt_tensor src, t;
    OK(hwrt_tensor_from_host(&src, HWRT_FLOAT32, 2, shape, v));
    void *d = NULL;
    OK(hwrt_tensor_data(src, &d));
    /* a producer that hands out the sim's memory by hand (kDLCPU: the sim's arena) */
    DLManagedTensorVersioned m = host_dl(d, 2, shape);
    m.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    deleted = 0;
    FAILS(hwrt_tensor_from_dlpack(&t, &m), HWRT_ERROR_NOT_SUPPORTED, "flagged read-only and hwrt tensors are writable");
    EXPECT(deleted == 0);
    m.flags = 0;
    OK(hwrt_tensor_from_dlpack(&t, &m));
    OK(hwrt_tensor_copy_from_host(t, w, sizeof w));   /* shared: src sees it */
    EXPECT(holds(src, w, 6));
    OK(hwrt_tensor_release(t));
    EXPECT(deleted == 1);                         /* released with the import */

    TEST_CASE("an own export: read-only, and a shape larger than its memory");
    DLManagedTensorVersioned *ex = NULL;
    OK(hwrt_tensor_to_dlpack(src, &ex));
    ex->flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
    FAILS(hwrt_tensor_from_dlpack(&t, ex), HWRT_ERROR_NOT_SUPPORTED, "flagged read-only");
    ex->flags &= ~(uint64_t)DLPACK_FLAG_BITMASK_READ_ONLY;
    int64_t big[2] = {2, 1 << 20};
    int64_t *own = ex->dl_tensor.shape;
    ex->dl_tensor.shape = big;
    FAILS(hwrt_tensor_from_dlpack(&t, ex), HWRT_ERROR_INVALID_ARGUMENT, "is not live hwrt device memory on device 0");
    ex->dl_tensor.shape = own;
    OK(hwrt_tensor_from_dlpack(&t, ex));          /* the export is intact after both */
    EXPECT(holds(t, w, 6));
    OK(hwrt_tensor_release(t));

    TEST_CASE("NULL outputs and dead handles");
    DLDevice dev;
    FAILS(hwrt_tensor_dlpack_device(src, NULL), HWRT_ERROR_INVALID_ARGUMENT, "out is NULL");
    FAILS(hwrt_tensor_to_dlpack(src, NULL), HWRT_ERROR_INVALID_ARGUMENT, "");
    OK(hwrt_tensor_dlpack_device(src, &dev));
    EXPECT(dev.device_type == kDLCPU && dev.device_id == 0);
    OK(hwrt_tensor_release(src));
    FAILS(hwrt_tensor_dlpack_device(src, &dev), HWRT_ERROR_INVALID_HANDLE, "");
    FAILS(hwrt_tensor_to_dlpack(src, &ex), HWRT_ERROR_INVALID_HANDLE, "");
    FAILS(hwrt_tensor_to_dlpack_host(src, &ex), HWRT_ERROR_INVALID_HANDLE, "");
}

int main(void)
{
    OK(hwrt_set_device("sim", 0));
    test_refusals();
    test_max_dims();
    test_host_imports();
    test_device_memory();
    OK(hwrt_shutdown());
    return test_report();
}
