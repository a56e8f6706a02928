/* DLPack v1.0 interchange (DLManagedTensorVersioned).
 *
 * The DLPack device of a tensor comes from its device's backend (hwi_dev_dlpack_device):
 * sim memory is host memory (kDLCPU, read in place), opencl names a cl_mem and an offset
 * (kDLOpenCL), cuda gives kDLCUDA; a backend without the slot is kDLExtDev. Exports share
 * the memory (zero copy); hwrt_tensor_to_dlpack_host is the copy to kDLCPU. */
#include "tensor.h"
#include "../base/status.h"
#include "../mem/pool.h"
#include "../runtime/device_ops.h"
#include "../runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    DLManagedTensorVersioned m;
    hwrt_tensor tensor;            /* the reference the export holds (0 for a host copy) */
    unsigned session;              /* hwi_dev_epoch at export: hwrt_shutdown ends it */
    void *addr;                    /* hwrt's device address (dl_tensor.data may be a cl_mem) */
    int device;
    int64_t shape[HWRT_MAX_DIMS];
    char host[];                   /* a host copy's data */
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
    if (c->tensor) hwrt_tensor_release(c->tensor);
    free(c);
}

/* The DLPack device and (data, byte_offset) of t's memory, from its device's backend. */
static hwrt_status dl_place(const hwi_tensor *t, DLDevice *dev, void **data, uint64_t *off)
{
    hwi_device *d;
    HWI_TRY(hwi_device_get(t->device, &d));
    int type;
    HWI_TRY(hwi_dev_dlpack_device(d, t->data, 0, &type, data, off));
    dev->device_type = (DLDeviceType)type;
    /* host memory is one device (id 0) to every consumer */
    dev->device_id = (type == kDLCPU || type == kDLCUDAHost) ? 0 : t->device;
    return HWRT_SUCCESS;
}

hwrt_status hwrt_tensor_dlpack_device(hwrt_tensor h, DLDevice *out)
{
    if (!out)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_tensor_dlpack_device: out is NULL");
    HWI_TENSOR_REF(t);
    HWI_TRY(hwi_tensor_resolve(h, &t));
    void *data;
    uint64_t off;
    return dl_place(t, out, &data, &off);
}

static void fill_header(export_ctx *c, const hwi_tensor *t)
{
    memcpy(c->shape, t->shape, sizeof c->shape);
    c->session = atomic_load(&hwi_dev_epoch);
    c->addr = t->data;
    c->device = t->device;
    c->m.version.major = DLPACK_MAJOR_VERSION;
    c->m.version.minor = DLPACK_MINOR_VERSION;
    c->m.manager_ctx = c;
    c->m.deleter = export_deleter;
    c->m.dl_tensor.ndim = t->ndim;
    to_dl(t->dtype, &c->m.dl_tensor.dtype);
    c->m.dl_tensor.shape = c->shape;
    c->m.dl_tensor.strides = NULL;
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
    DLDevice dev;
    void *data;
    uint64_t off;
    HWI_TRY(dl_place(t, &dev, &data, &off));
    export_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "hwrt_tensor_to_dlpack: host out of memory");
    hwrt_status st = hwrt_tensor_retain(h);   /* fails if the last release went meanwhile */
    if (st != HWRT_SUCCESS) {
        free(c);
        return st;
    }
    c->tensor = h;
    fill_header(c, t);
    c->m.flags = 0;
    c->m.dl_tensor.data = data;
    c->m.dl_tensor.device = dev;
    c->m.dl_tensor.byte_offset = off;
    *out = &c->m;
    return HWRT_SUCCESS;
}

hwrt_status hwrt_tensor_to_dlpack_host(hwrt_tensor h, DLManagedTensorVersioned **out)
{
    if (!out)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_tensor_to_dlpack_host: out is NULL");
    HWI_TENSOR_REF(t);
    HWI_TRY(hwi_tensor_resolve(h, &t));
    export_ctx *c = calloc(1, sizeof *c + (t->nbytes ? t->nbytes : 1));
    if (!c)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "hwrt_tensor_to_dlpack_host: host out of "
                       "memory for a copy of %zu bytes", t->nbytes);
    hwrt_status st = hwrt_tensor_copy_to_host(h, c->host, t->nbytes);   /* ordered after writers */
    if (st != HWRT_SUCCESS) {
        free(c);
        return st;
    }
    fill_header(c, t);
    c->addr = NULL;                 /* not hwrt memory: imported again, it is copied */
    c->m.flags = DLPACK_FLAG_BITMASK_IS_COPIED;
    c->m.dl_tensor.data = c->host;
    c->m.dl_tensor.device = (DLDevice){kDLCPU, 0};
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

/* The DLPack type of device memory on device `ordinal` of the backend in use, or -1. */
static int backend_type(int ordinal)
{
    hwi_device *d;
    void *data;
    uint64_t off;
    int type;
    if (hwi_device_get(ordinal, &d) != HWRT_SUCCESS) return -1;
    if (hwi_dev_dlpack_device(d, NULL, 0, &type, &data, &off) != HWRT_SUCCESS) return -1;
    return type;
}

static hwrt_status read_only(const char *api)
{
    return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "%s: the DLPack tensor is flagged read-only and "
                   "hwrt tensors are writable; import a copy (copy=True from the producer, or "
                   "copy it to the host first)", api);
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
    if (in->deleter == export_deleter && ((export_ctx *)in->manager_ctx)->addr &&
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
    size_t bytes = hwrt_dtype_size(dt);
    for (int i = 0; i < t->ndim; i++) bytes *= (size_t)t->shape[i];
    /* one of our own exports: its hwrt address is known whatever DLPack calls it (a
     * cl_mem for opencl), so it is shared again */
    if (in->deleter == export_deleter && ((export_ctx *)in->manager_ctx)->addr) {
        export_ctx *c = in->manager_ctx;
        hwi_block_info b;
        if (!hwi_pool_find(c->addr, bytes ? bytes : 1, &b) || b.device != c->device)
            return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: the export's memory %p (+%zu bytes "
                           "for its shape now) is not live hwrt device memory on device %d",
                           api, c->addr, bytes, c->device);
        if (in->flags & DLPACK_FLAG_BITMASK_READ_ONLY)
            return read_only(api);
        return hwi_tensor_wrap(dt, t->ndim, t->shape, c->device, c->addr, in, out);
    }
    /* an empty tensor may come with data == NULL: no arithmetic on a null pointer */
    char *data = t->data ? (char *)t->data + t->byte_offset : NULL;
    hwi_block_info b;
    int type = t->device.device_type;
    if (type == kDLCPU || type == kDLCUDAHost) {
        /* host memory that is an hwrt device's own (the sim's arena) is shared in place */
        if (type == kDLCPU && data && hwi_pool_find(data, bytes ? bytes : 1, &b) &&
            backend_type(b.device) == kDLCPU) {
            if (in->flags & DLPACK_FLAG_BITMASK_READ_ONLY) return read_only(api);
            return hwi_tensor_wrap(dt, t->ndim, t->shape, b.device, data, in, out);
        }
        HWI_TRY(hwrt_tensor_from_host(out, dt, t->ndim, t->shape, data));
        if (in->deleter) in->deleter(in);
        return HWRT_SUCCESS;
    }
    int mine = backend_type(t->device.device_id);
    if (mine < 0 || mine != type)
        return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "%s: device type %d (device %d) is not memory "
                       "of the backend in use (its devices are DLPack type %d); hwrt imports "
                       "kDLCPU, kDLCUDAHost and its own backend's device memory", api, type,
                       (int)t->device.device_id, mine);
    if (in->flags & DLPACK_FLAG_BITMASK_READ_ONLY) return read_only(api);
    if (data && hwi_pool_find(data, bytes ? bytes : 1, &b)) {
        if (b.device != t->device.device_id)
            return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: data %p is hwrt memory of device %d, "
                           "not of device %d as the DLPack tensor says", api, (void *)data,
                           b.device, (int)t->device.device_id);
        return hwi_tensor_wrap(dt, t->ndim, t->shape, b.device, data, in, out);
    }
    /* another library's memory on our device: only where DLPack's data is a plain device
     * address the backend's kernels can use (kDLCUDA, in the process's primary context);
     * kDLExtDev and kDLOpenCL (a cl_mem of another context) are not */
    if (type == kDLCUDA)
        return hwi_tensor_wrap(dt, t->ndim, t->shape, t->device.device_id, data, in, out);
    return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: device type %d data %p (+%zu bytes) is not "
                   "live hwrt device memory on device %d; hwrt shares only memory it handed out "
                   "for this device type", api, type, (void *)data, bytes,
                   (int)t->device.device_id);
}
