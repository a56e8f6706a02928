/* NCCL (libnccl.so.2), loaded at run time through base/dynlib.h; hwrt declares it itself
 * (no copied header). Where the real nccl.h and cuda.h are present at build time,
 * tests/mpi/nccl_typecheck.c checks every function type and constant below against them
 * (with HC_NCCL_REAL_TYPES: ncclUniqueId is then NCCL's own, and hc_uniqueId_st's layout
 * is compared with it). The engine makes no CUDA call: the cuda backend makes the device
 * current (its thread_enter slot) and hands over its CUstream (stream_native).
 *
 * HWRT_NCCL_LIBRARY names the library to load instead of libnccl.so.2 (a path or a
 * soname). */
#ifndef HWI_NCCL_API_H
#define HWI_NCCL_API_H

#include "hwrt.h"

#include <stddef.h>

typedef unsigned int hc_ncclResult_t;       /* ncclResult_t: non-negative enum */
#define HC_ncclSuccess 0u
#define HC_ncclUnhandledCudaError 1u
#define HC_ncclSystemError 2u
#define HC_ncclInternalError 3u
#define HC_ncclInvalidArgument 4u
#define HC_ncclInvalidUsage 5u
#define HC_ncclRemoteError 6u
#define HC_ncclInProgress 7u

typedef unsigned int hc_ncclRedOp_t;        /* ncclRedOp_t */
#define HC_ncclSum 0u
#define HC_ncclProd 1u
#define HC_ncclMax 2u
#define HC_ncclMin 3u
#define HC_ncclAvg 4u

typedef unsigned int hc_ncclDataType_t;     /* ncclDataType_t */
#define HC_ncclInt8 0u
#define HC_ncclUint8 1u
#define HC_ncclInt32 2u
#define HC_ncclUint32 3u
#define HC_ncclInt64 4u
#define HC_ncclUint64 5u
#define HC_ncclFloat16 6u
#define HC_ncclFloat32 7u
#define HC_ncclFloat64 8u
#define HC_ncclBfloat16 9u

#define HC_NCCL_UNIQUE_ID_BYTES 128
struct hc_uniqueId_st { char internal[HC_NCCL_UNIQUE_ID_BYTES]; };
#ifdef HC_NCCL_REAL_TYPES
typedef ncclUniqueId hc_ncclUniqueId;
#else
typedef struct hc_uniqueId_st hc_ncclUniqueId;
#endif

typedef struct ncclComm *hc_ncclComm_t;     /* NCCL's own opaque tags */
typedef struct CUstream_st *hc_CUstream;    /* = cudaStream_t */

/* NCCL 2.12 or later: ncclAvg (2.10), bfloat16 (2.10), ncclRemoteError (2.12). */
#define HC_NCCL_MIN_VERSION 21200

#define HC_NCCL_FUNCS(X)                                                                     \
    X(ncclGetVersion, hc_ncclResult_t, (int *version))                                       \
    X(ncclGetUniqueId, hc_ncclResult_t, (hc_ncclUniqueId *uniqueId))                         \
    X(ncclCommInitRank, hc_ncclResult_t, (hc_ncclComm_t *comm, int nranks,                   \
                                          hc_ncclUniqueId commId, int rank))                 \
    X(ncclCommDestroy, hc_ncclResult_t, (hc_ncclComm_t comm))                                \
    X(ncclCommAbort, hc_ncclResult_t, (hc_ncclComm_t comm))                                  \
    X(ncclCommGetAsyncError, hc_ncclResult_t, (hc_ncclComm_t comm,                           \
                                               hc_ncclResult_t *asyncError))                 \
    X(ncclGetErrorString, const char *, (hc_ncclResult_t result))                            \
    X(ncclAllReduce, hc_ncclResult_t, (const void *sendbuff, void *recvbuff, size_t count,   \
                                       hc_ncclDataType_t datatype, hc_ncclRedOp_t op,        \
                                       hc_ncclComm_t comm, hc_CUstream stream))              \
    X(ncclBroadcast, hc_ncclResult_t, (const void *sendbuff, void *recvbuff, size_t count,   \
                                       hc_ncclDataType_t datatype, int root,                 \
                                       hc_ncclComm_t comm, hc_CUstream stream))              \
    X(ncclAllGather, hc_ncclResult_t, (const void *sendbuff, void *recvbuff,                 \
                                       size_t sendcount, hc_ncclDataType_t datatype,         \
                                       hc_ncclComm_t comm, hc_CUstream stream))              \
    X(ncclReduceScatter, hc_ncclResult_t, (const void *sendbuff, void *recvbuff,             \
                                           size_t recvcount, hc_ncclDataType_t datatype,     \
                                           hc_ncclRedOp_t op, hc_ncclComm_t comm,            \
                                           hc_CUstream stream))                              \
    X(ncclGroupStart, hc_ncclResult_t, (void))                                               \
    X(ncclGroupEnd, hc_ncclResult_t, (void))

#define HC_TYPEDEF(name, ret, params) typedef ret (*hc_##name##_fn) params;
HC_NCCL_FUNCS(HC_TYPEDEF)
#undef HC_TYPEDEF

typedef struct hc_nccl {
#define HC_FIELD(name, ret, params) hc_##name##_fn name;
    HC_NCCL_FUNCS(HC_FIELD)
#undef HC_FIELD
    int version;                 /* ncclGetVersion: 22809 = 2.28.9 */
} hc_nccl;

/* Load libnccl.so.2 once per process: the table, or NULL with the reason in why (the
 * library and dlerror, a missing symbol, a version below HC_NCCL_MIN_VERSION). */
const hc_nccl *hwi_nccl_load(char *why, size_t len);

#endif
