/* hwrt's own NCCL declarations (src/distributed/nccl_api.h) against the real nccl.h
 * (and cuda.h, for the stream type NCCL takes), built only where both are found (HWRT_NCCL_INCLUDE_DIR,
 * HWRT_CUDA_INCLUDE_DIR). Every check is a _Static_assert: a mismatch fails the build,
 * naming the function, type or constant. */
#include <cuda.h>
#include <nccl.h>
#define HC_NCCL_REAL_TYPES 1
#include "distributed/nccl_api.h"

#include <stddef.h>
#include <stdio.h>

#define CHECK_FN(name, ret, params)                                                         \
    _Static_assert(__builtin_types_compatible_p(hc_##name##_fn, __typeof__(&name)),          \
                   "hwrt's declaration of " #name " differs from nccl.h / cuda.h");
HC_NCCL_FUNCS(CHECK_FN)

#define SAME_TYPE(mine, theirs)                                                              \
    _Static_assert(__builtin_types_compatible_p(mine, theirs), #mine " is not " #theirs);
SAME_TYPE(hc_ncclResult_t, ncclResult_t)
SAME_TYPE(hc_ncclRedOp_t, ncclRedOp_t)
SAME_TYPE(hc_ncclDataType_t, ncclDataType_t)
SAME_TYPE(hc_ncclComm_t, ncclComm_t)
SAME_TYPE(hc_CUstream, cudaStream_t)
SAME_TYPE(hc_CUstream, CUstream)

#define CHECK_CONST(mine, theirs) _Static_assert((mine) == (theirs), #mine " != " #theirs);
CHECK_CONST(HC_ncclSuccess, ncclSuccess)
CHECK_CONST(HC_ncclUnhandledCudaError, ncclUnhandledCudaError)
CHECK_CONST(HC_ncclSystemError, ncclSystemError)
CHECK_CONST(HC_ncclInternalError, ncclInternalError)
CHECK_CONST(HC_ncclInvalidArgument, ncclInvalidArgument)
CHECK_CONST(HC_ncclInvalidUsage, ncclInvalidUsage)
CHECK_CONST(HC_ncclRemoteError, ncclRemoteError)
CHECK_CONST(HC_ncclInProgress, ncclInProgress)
CHECK_CONST(HC_ncclSum, ncclSum)
CHECK_CONST(HC_ncclProd, ncclProd)
CHECK_CONST(HC_ncclMax, ncclMax)
CHECK_CONST(HC_ncclMin, ncclMin)
CHECK_CONST(HC_ncclAvg, ncclAvg)
CHECK_CONST(HC_ncclInt8, ncclInt8)
CHECK_CONST(HC_ncclUint8, ncclUint8)
CHECK_CONST(HC_ncclInt32, ncclInt32)
CHECK_CONST(HC_ncclUint32, ncclUint32)
CHECK_CONST(HC_ncclInt64, ncclInt64)
CHECK_CONST(HC_ncclUint64, ncclUint64)
CHECK_CONST(HC_ncclFloat16, ncclFloat16)
CHECK_CONST(HC_ncclFloat32, ncclFloat32)
CHECK_CONST(HC_ncclFloat64, ncclFloat64)
CHECK_CONST(HC_ncclBfloat16, ncclBfloat16)
CHECK_CONST(HC_NCCL_UNIQUE_ID_BYTES, NCCL_UNIQUE_ID_BYTES)
/* hwrt's reduce ops are passed to NCCL as they are (nccl_engine.c nccl_op) */
CHECK_CONST((int)HWRT_REDUCE_SUM, (int)ncclSum)
CHECK_CONST((int)HWRT_REDUCE_PROD, (int)ncclProd)
CHECK_CONST((int)HWRT_REDUCE_MAX, (int)ncclMax)
CHECK_CONST((int)HWRT_REDUCE_MIN, (int)ncclMin)
CHECK_CONST((int)HWRT_REDUCE_AVG, (int)ncclAvg)

_Static_assert(sizeof(struct hc_uniqueId_st) == sizeof(ncclUniqueId) &&
               offsetof(struct hc_uniqueId_st, internal) == offsetof(ncclUniqueId, internal) &&
               sizeof(((struct hc_uniqueId_st *)0)->internal) == sizeof(((ncclUniqueId *)0)->internal),
               "hc_uniqueId_st differs from ncclUniqueId");
/* the minimum version hwrt asks for is spelt as NCCL spells versions */
CHECK_CONST(HC_NCCL_MIN_VERSION, NCCL_VERSION(2, 12, 0))

int main(void)
{
#define COUNT_FN(name, ret, params) +1
    printf("nccl.h (NCCL %d.%d) and cuda.h (CUDA %d): %d function types, constants and "
           "layouts match\n", NCCL_MAJOR, NCCL_MINOR, CUDA_VERSION,
           0 HC_NCCL_FUNCS(COUNT_FN));
    return 0;
}
