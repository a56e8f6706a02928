/* hwrt public API — tensors, ops, DLPack. Include <hwrt.h>, not this file.
 *
 * A tensor is a dense, row-major, device-resident array on one device (the current
 * device at creation). Handles are reference counted: hwrt_tensor_retain adds a
 * reference, hwrt_tensor_release drops one; the memory goes back to the pool once the
 * last reference is gone and the work queued on it has finished.
 *
 * Ops are enqueued on a stream (NULL = default stream of the tensor's device) and run on
 * the device's compute engine. Operands must live on the stream's device. Shapes must
 * match exactly (no broadcasting); the sentence on a mismatch gives both shapes. */
#ifndef HWRT_TENSOR_H
#define HWRT_TENSOR_H

#include "hwrt_core.h"
#include "hwrt_exec.h"
#include "dlpack.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hwrt_tensor_s *hwrt_tensor;

typedef enum hwrt_dtype {
    HWRT_FLOAT32 = 0,
    HWRT_FLOAT16 = 1,
    HWRT_BFLOAT16 = 2,
    HWRT_FLOAT64 = 3,
    HWRT_INT8 = 4,
    HWRT_UINT8 = 5,
    HWRT_INT32 = 6,
    HWRT_INT64 = 7,
    HWRT_BOOL = 8,
    /* Carried by tensors, host copies, DLPack and the residency manager; no backend has
     * kernels for them yet, so ops and reductions refuse them (HWRT_ERROR_NOT_SUPPORTED). */
    HWRT_INT16 = 9,
    HWRT_UINT16 = 10,
    HWRT_UINT32 = 11,
    HWRT_UINT64 = 12,
    HWRT_COMPLEX64 = 13,           /* two float32: real, imaginary */
    HWRT_COMPLEX128 = 14,          /* two float64 */
    HWRT_DTYPE_COUNT = 15
} hwrt_dtype;

#define HWRT_MAX_DIMS 8

/* Bytes per element (0 for an invalid dtype) and the name ("float16", "" if invalid). */
HWRT_API size_t hwrt_dtype_size(hwrt_dtype dt);
HWRT_API const char *hwrt_dtype_name(hwrt_dtype dt);
/* Parse "float16"/"fp16"/"half", "bfloat16"/"bf16", "float32"/"float", "int16"/"short",
 * "complex64"/"cfloat", ... */
HWRT_API hwrt_status hwrt_dtype_from_name(const char *name, hwrt_dtype *out);

/* An uninitialised tensor (the seed's Tensor(shape=..., dtype=...)). ndim 0..8, every
 * extent >= 0. Errors: INVALID_ARGUMENT (dtype, ndim, negative extent, size overflow),
 * OUT_OF_MEMORY. */
HWRT_API hwrt_status hwrt_tensor_empty(hwrt_tensor *t, hwrt_dtype dt, int ndim,
                                       const int64_t *shape);
/* A tensor holding a copy of host (nbytes of the shape); the seed's Tensor(numpy).
 * Returns once host has been read (the caller may reuse it). */
HWRT_API hwrt_status hwrt_tensor_from_host(hwrt_tensor *t, hwrt_dtype dt, int ndim,
                                           const int64_t *shape, const void *host);
/* Overwrite t with bytes of host; bytes must equal t's nbytes. Ordered after all work
 * queued on t; returns once host has been read. */
HWRT_API hwrt_status hwrt_tensor_copy_from_host(hwrt_tensor t, const void *host, size_t bytes);
/* Copy t into host (bytes must equal t's nbytes). Ordered after every op queued on any
 * stream that wrote t, so the result is never stale (the seed's asnumpy()). Blocking. */
HWRT_API hwrt_status hwrt_tensor_copy_to_host(hwrt_tensor t, void *host, size_t bytes);

HWRT_API hwrt_status hwrt_tensor_retain(hwrt_tensor t);
HWRT_API hwrt_status hwrt_tensor_release(hwrt_tensor t);

/* Accessors. */
HWRT_API hwrt_status hwrt_tensor_dtype(hwrt_tensor t, hwrt_dtype *out);
HWRT_API hwrt_status hwrt_tensor_ndim(hwrt_tensor t, int *out);
/* Copies min(ndim, cap) extents into shape. */
HWRT_API hwrt_status hwrt_tensor_shape(hwrt_tensor t, int64_t *shape, int cap);
HWRT_API hwrt_status hwrt_tensor_numel(hwrt_tensor t, int64_t *out);
HWRT_API hwrt_status hwrt_tensor_nbytes(hwrt_tensor t, size_t *out);
HWRT_API hwrt_status hwrt_tensor_device(hwrt_tensor t, int *device_id);
/* Device pointer of the data (usable with hwrt_memcpy*). */
HWRT_API hwrt_status hwrt_tensor_data(hwrt_tensor t, void **dptr);

/* Ops. out may alias an input. Integer dtypes are accepted where meaningful (all but
 * matmul, which takes float32/float16/bfloat16/float64); bool only for fill and cast.
 * int16, uint16, uint32, uint64, complex64 and complex128 have no kernels: every op
 * refuses an operand of them with NOT_SUPPORTED, except a cast to the same dtype. */
HWRT_API hwrt_status hwrt_op_fill(hwrt_tensor out, double value, hwrt_stream s);
HWRT_API hwrt_status hwrt_op_add(hwrt_tensor out, hwrt_tensor a, hwrt_tensor b, hwrt_stream s);
HWRT_API hwrt_status hwrt_op_mul(hwrt_tensor out, hwrt_tensor a, hwrt_tensor b, hwrt_stream s);
/* out = alpha * a */
HWRT_API hwrt_status hwrt_op_scale(hwrt_tensor out, hwrt_tensor a, double alpha, hwrt_stream s);
HWRT_API hwrt_status hwrt_op_relu(hwrt_tensor out, hwrt_tensor a, hwrt_stream s);
/* out (its own dtype) = a converted elementwise; same shape. Floats round to nearest
 * even; float -> int truncates toward zero and saturates. The same dtype (any dtype) is
 * a byte-exact device copy. */
HWRT_API hwrt_status hwrt_op_cast(hwrt_tensor out, hwrt_tensor a, hwrt_stream s);
/* out[M,N] = a[M,K] @ b[K,N], all 2-D, same float dtype, accumulated in float32 (float64
 * for float64) through BLAS. */
HWRT_API hwrt_status hwrt_op_matmul(hwrt_tensor out, hwrt_tensor a, hwrt_tensor b, hwrt_stream s);
/* Sum of a along axis (out has that axis removed), or of all elements when axis == -1
 * (out has one element). Floats accumulate in float32/float64, ints in int64. */
HWRT_API hwrt_status hwrt_op_sum(hwrt_tensor out, hwrt_tensor a, int axis, hwrt_stream s);

/* DLPack (v1.0, DLManagedTensorVersioned). Export shares t's memory (zero copy): the
 * exported tensor holds a reference to t until its deleter runs. The DLPack device is the
 * backend's: sim memory is host memory, so kDLCPU (device_id 0, read in place until
 * hwrt_shutdown); opencl is kDLOpenCL with data = the cl_mem and byte_offset inside it;
 * cuda is kDLCUDA with the device ordinal; any other backend kDLExtDev. The export is
 * ordered after all queued work on t (hwrt synchronizes the writers first). */
HWRT_API hwrt_status hwrt_tensor_to_dlpack(hwrt_tensor t, DLManagedTensorVersioned **out);
/* A copy of t in host memory as kDLCPU (flags DLPACK_FLAG_BITMASK_IS_COPIED), ordered
 * after t's writers; it holds no reference to t and stays valid after hwrt_shutdown. */
HWRT_API hwrt_status hwrt_tensor_to_dlpack_host(hwrt_tensor t, DLManagedTensorVersioned **out);
/* The DLPack device hwrt_tensor_to_dlpack would give t (__dlpack_device__). */
HWRT_API hwrt_status hwrt_tensor_dlpack_device(hwrt_tensor t, DLDevice *out);
/* Import. Shared without a copy: hwrt's own exports; host memory that is an hwrt device's
 * (a sim tensor read back as kDLCPU); memory of the backend's DLPack type that hwrt handed
 * out, and, for kDLCUDA, another library's device memory. Copied onto the current device:
 * any other kDLCPU or kDLCUDAHost data. Refused (NOT_SUPPORTED): other device types, and a
 * read-only tensor that would be shared (hwrt tensors are writable). On success hwrt owns
 * `in` and calls its deleter when done (at once for a copied import). Strided inputs must
 * be compact row-major. Errors: INVALID_ARGUMENT / NOT_SUPPORTED naming the field. */
HWRT_API hwrt_status hwrt_tensor_from_dlpack(hwrt_tensor *t, DLManagedTensorVersioned *in);

#ifdef __cplusplus
}
#endif
#endif /* HWRT_TENSOR_H */
