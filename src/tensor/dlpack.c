/* DLPack v1.0 interchange (DLManagedTensorVersioned). */
#include "tensor.h"
#include "../base/status.h"
#include "../mem/pool.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    DLManagedTensorVersioned m;
    hwrt_tensor tensor;            /* the reference the export holds */
    unsigned session;              /* hwi_dev_epoch at export: hwrt_shutdown ends it */
    int64_t shape[HWRT_MAX_DIMS];
} export_ctx;

static int to_dl(hwrt_dtype dt, DLDataType *o)
{
    static const DLDataType map[HWRT_DTYPE_COUNT] = {
        [HWRT_FLOAT32] = {kDLFloat, 32, 1}, [HWRT_FLOAT16] = {kDLFloat, 16, 1},
        [HWRT_BFLOAT16] = {kDLBfloat, 16, 1}, [HWRT_FLOAT64] = {kDLFloat, 64, 1},
        [HWRT_INT8] = {kDLInt, 8, 1}, [HWRT_UINT8] = {kDLUInt, 8, 1},
        [HWRT_INT32] = {kDLInt, 32, 1}, [HWRT_INT64] = {kDLInt, 64, 1},
        [HWRT_BOOL] = {kDLBool, 8, 1}, [HWRT_INT16] = {kDLInt, 16, 1},
        [HWRT_UINT16] = {kDLUInt, 16, 1}, [HWRT_UINT32] = {kDLUInt, 32, 1},
        [HWRT_UINT64] = {kDLUInt, 64, 1}, [HWRT_COMPLEX64] = {kDLComplex, 64, 1},
        [HWRT_COMPLEX128] = {kDLComplex, 128, 1}};
    if ((unsigned)dt >= HWRT_DTYPE_COUNT) return 0;
    *o = map[dt];
    return 1;
}

static int from_dl(DLDataType d, hwrt_dtype *out)
{
    for (int i = 0; i < HWRT_DTYPE_COUNT; i++) {
        DLDataType m;
        to_dl((hwrt_dtype)i, &m);
        if (m.code == d.code && m.bits == d.bits && d.lanes == 1) { *out = (hwrt_dtype)i; return 1; }
    }
    if (d.code == kDLUInt && d.bits == 8 && d.lanes == 1) { *out = HWRT_UINT8; return 1; }
    return 0;
}

static void export_deleter(DLManagedTensorVersioned *self)
{
    export_ctx *c = (export_ctx *)self;
    hwrt_tensor_release(c->tensor);
    free(c);
}

hwrt_status hwrt_tensor_to_dlpack(hwrt_tensor h, DLManagedTensorVersioned **out)
{
    if (!out)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_tensor_to_dlpack: out is NULL");
    HWI_TENSOR_REF(t);
    HWI_TRY(hwi_tensor_resolve(h, &t));
    /* the consumer reads without knowing our streams: finish the writers first; an
     * exported tensor stays on the device */
    if (t->offload) HWI_TRY(hwrt_tensor_set_offloadable(h, 0));
    HWI_TRY(hwi_tensor_wait(t, 1, "hwrt_tensor_to_dlpack"));
    export_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "hwrt_tensor_to_dlpack: host out of memory");
    hwrt_status st = hwrt_tensor_retain(h);   /* fails if the last release went meanwhile */
    if (st != HWRT_SUCCESS) {
        free(c);
        return st;
    }
    c->tensor = h;
    c->session = atomic_load(&hwi_dev_epoch);
    memcpy(c->shape, t->shape, sizeof c->shape);
    c->m.version.major = DLPACK_MAJOR_VERSION;
    c->m.version.minor = DLPACK_MINOR_VERSION;
    c->m.manager_ctx = c;
    c->m.deleter = export_deleter;
    c->m.flags = 0;
    c->m.dl_tensor.data = t->data;
    c->m.dl_tensor.device.device_type = kDLExtDev;
    c->m.dl_tensor.device.device_id = t->device;
    c->m.dl_tensor.ndim = t->ndim;
    to_dl(t->dtype, &c->m.dl_tensor.dtype);
    c->m.dl_tensor.shape = c->shape;
    c->m.dl_tensor.strides = NULL;
    c->m.dl_tensor.byte_offset = 0;
    *out = &c->m;
    return HWRT_SUCCESS;
}

static int compact(const DLTensor *t)
{
    if (!t->strides) return 1;
    int64_t expect = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->shape[i] != 1 && t->strides[i] != expect) return 0;
        expect *= t->shape[i];
    }
    return 1;
}

hwrt_status hwrt_tensor_from_dlpack(hwrt_tensor *out, DLManagedTensorVersioned *in)
{
    const char *api = "hwrt_tensor_from_dlpack";
    if (!out || !in)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: out and in are required", api);
    if (in->version.major != DLPACK_MAJOR_VERSION)
        return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "%s: DLPack major version %u is not supported "
                       "(hwrt speaks %d.x)", api, in->version.major, DLPACK_MAJOR_VERSION);
    /* one of our own exports from before an hwrt_shutdown: its memory went back with
     * that session, and may be another tensor's by now */
    if (in->deleter == export_deleter &&
        ((export_ctx *)in->manager_ctx)->session != atomic_load(&hwi_dev_epoch))
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: this DLPack tensor was exported by hwrt "
                       "before hwrt_shutdown(); its memory was released with that session. "
                       "Export the tensor again in this session (or copy it to the host before "
                       "shutting down)", api);
    const DLTensor *t = &in->dl_tensor;
    hwrt_dtype dt;
    if (!from_dl(t->dtype, &dt))
        return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "%s: dtype code %u bits %u lanes %u has no hwrt "
                       "equivalent", api, t->dtype.code, t->dtype.bits, t->dtype.lanes);
    if (t->ndim < 0 || t->ndim > HWRT_MAX_DIMS || (t->ndim && !t->shape))
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: ndim %d is out of range 0..%d (or shape "
                       "is NULL)", api, t->ndim, HWRT_MAX_DIMS);
    if (!compact(t))
        return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "%s: strided tensors are not supported; pass a "
                       "compact row-major tensor (e.g. numpy.ascontiguousarray)", api);
    /* an empty tensor may come with data == NULL: no arithmetic on a null pointer */
    char *data = t->data ? (char *)t->data + t->byte_offset : NULL;
    if (t->device.device_type == kDLCPU || t->device.device_type == kDLCUDAHost) {
        HWI_TRY(hwrt_tensor_from_host(out, dt, t->ndim, t->shape, data));
        if (in->deleter) in->deleter(in);
        return HWRT_SUCCESS;
    }
    if (t->device.device_type == kDLExtDev) {
        hwi_block_info b;
        size_t bytes = hwrt_dtype_size(dt);
        for (int i = 0; i < t->ndim; i++) bytes *= (size_t)t->shape[i];
        if (!hwi_pool_find(data, bytes ? bytes : 1, &b) || b.device != t->device.device_id)
            return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: kDLExtDev data %p (+%zu bytes) is not "
                           "live hwrt device memory on device %d", api, (void *)data, bytes,
                           t->device.device_id);
        return hwi_tensor_wrap(dt, t->ndim, t->shape, b.device, data, in, out);
    }
    return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "%s: device type %d is not supported; hwrt imports "
                   "kDLCPU, kDLCUDAHost and its own kDLExtDev memory", api,
                   (int)t->device.device_type);
}
