/* Which dtypes the backends have kernels for. Every hwrt_dtype is carried by tensors,
 * host copies, DLPack and the residency manager; ops and reductions run only on these
 * (the sim's and OpenCL's kernels are written for exactly this set). */
#ifndef HWI_BASE_DTYPE_H
#define HWI_BASE_DTYPE_H

#include "hwrt.h"

/* The last dtype with kernels: those before it in the enum have them too, and those
 * appended after it (int16 .. complex128) do not. */
#define HWI_LAST_KERNEL_DTYPE HWRT_BOOL

static inline int hwi_dtype_has_kernel(hwrt_dtype dt)
{
    return (unsigned)dt <= HWI_LAST_KERNEL_DTYPE;
}

/* For error messages: the dtypes hwi_dtype_has_kernel accepts. */
#define HWI_KERNEL_DTYPES "float32, float16, bfloat16, float64, int8, uint8, int32, int64, bool"

#endif
