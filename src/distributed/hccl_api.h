/* HCCL (libhccl.so, Huawei's collective library for Ascend NPUs), loaded at run time
 * through base/dynlib.h; hwrt declares the subset it uses itself (the CANN headers are
 * C++ only). Where the real hccl.h / hccl_types.h are present at build time,
 * tests/mpi/hccl_typecheck.cpp checks every function type and constant below against them
 * (built with HH_HCCL_REAL_TYPES, which makes the hh_ enum and struct typedefs alias
 * HCCL's own so the function types can be compared; the plain declarations are then
 * checked for the same size and values).
 *
 * The engine makes no ACL call: the ascend backend makes the device current (its
 * thread_enter slot) and hands over its aclrtStream (stream_native).
 *
 * HWRT_HCCL_LIBRARY names the library to load instead of libhccl.so (a path or a
 * soname; CANN puts it in ${ASCEND_TOOLKIT_HOME}/lib64, on LD_LIBRARY_PATH after
 * set_env.sh). */
#ifndef HWI_HCCL_API_H
#define HWI_HCCL_API_H

#include "hwrt.h"

#include <stddef.h>
#include <stdint.h>

/* HcclResult (an enum of small non-negative values) */
#define HH_HCCL_SUCCESS 0
#define HH_HCCL_E_PARA 1
#define HH_HCCL_E_PTR 2
#define HH_HCCL_E_MEMORY 3
#define HH_HCCL_E_INTERNAL 4
#define HH_HCCL_E_NOT_SUPPORT 5
#define HH_HCCL_E_NOT_FOUND 6
#define HH_HCCL_E_UNAVAIL 7
#define HH_HCCL_E_TIMEOUT 9
#define HH_HCCL_E_REMOTE 21

/* HcclReduceOp: hwrt's SUM/PROD/MAX/MIN have HCCL's values (no AVG in HCCL) */
#define HH_HCCL_REDUCE_SUM 0
#define HH_HCCL_REDUCE_PROD 1
#define HH_HCCL_REDUCE_MAX 2
#define HH_HCCL_REDUCE_MIN 3

/* HcclDataType */
#define HH_HCCL_DATA_TYPE_INT8 0
#define HH_HCCL_DATA_TYPE_INT16 1
#define HH_HCCL_DATA_TYPE_INT32 2
#define HH_HCCL_DATA_TYPE_FP16 3
#define HH_HCCL_DATA_TYPE_FP32 4
#define HH_HCCL_DATA_TYPE_INT64 5
#define HH_HCCL_DATA_TYPE_UINT64 6
#define HH_HCCL_DATA_TYPE_UINT8 7
#define HH_HCCL_DATA_TYPE_FP64 10
#define HH_HCCL_DATA_TYPE_BFP16 11

/* the root info blob rank 0 makes and every rank passes to HcclCommInitRootInfo */
#define HH_HCCL_ROOT_INFO_BYTES 4108
struct hh_rootInfo_st { char internal[HH_HCCL_ROOT_INFO_BYTES]; };

typedef void *hh_HcclComm;          /* HcclComm */
typedef void *hh_aclrtStream;       /* aclrtStream */

#ifdef HH_HCCL_REAL_TYPES           /* the type check: hccl.h is included before */
typedef HcclResult hh_HcclResult;
typedef HcclDataType hh_HcclDataType;
typedef HcclReduceOp hh_HcclReduceOp;
typedef HcclRootInfo hh_HcclRootInfo;
#else
typedef int hh_HcclResult;
typedef int hh_HcclDataType;
typedef int hh_HcclReduceOp;
typedef struct hh_rootInfo_st hh_HcclRootInfo;
#endif

/* Every HCCL entry point hwrt uses: X(name, return type, parameter list). HcclGetErrorString
 * and HcclGetCommAsyncError may be absent (older releases; the engine then says less). */
#define HH_HCCL_FUNCS(X)                                                                     \
    X(HcclGetRootInfo, hh_HcclResult, (hh_HcclRootInfo *rootInfo))                           \
    X(HcclCommInitRootInfo, hh_HcclResult, (uint32_t nRanks, const hh_HcclRootInfo *rootInfo, \
                                            uint32_t rank, hh_HcclComm *comm))               \
    X(HcclCommDestroy, hh_HcclResult, (hh_HcclComm comm))                                    \
    X(HcclGetErrorString, const char *, (hh_HcclResult code))                                \
    X(HcclGetCommAsyncError, hh_HcclResult, (hh_HcclComm comm, hh_HcclResult *asyncError))   \
    X(HcclAllReduce, hh_HcclResult, (void *sendBuf, void *recvBuf, uint64_t count,           \
                                     hh_HcclDataType dataType, hh_HcclReduceOp op,           \
                                     hh_HcclComm comm, hh_aclrtStream stream))               \
    X(HcclBroadcast, hh_HcclResult, (void *buf, uint64_t count, hh_HcclDataType dataType,    \
                                     uint32_t root, hh_HcclComm comm, hh_aclrtStream stream)) \
    X(HcclAllGather, hh_HcclResult, (void *sendBuf, void *recvBuf, uint64_t sendCount,       \
                                     hh_HcclDataType dataType, hh_HcclComm comm,             \
                                     hh_aclrtStream stream))                                 \
    X(HcclReduceScatter, hh_HcclResult, (void *sendBuf, void *recvBuf, uint64_t recvCount,   \
                                         hh_HcclDataType dataType, hh_HcclReduceOp op,       \
                                         hh_HcclComm comm, hh_aclrtStream stream))

#define HH_TYPEDEF(name, ret, params) typedef ret (*hh_##name##_fn) params;
HH_HCCL_FUNCS(HH_TYPEDEF)
#undef HH_TYPEDEF

typedef struct hh_hccl {
#define HH_FIELD(name, ret, params) hh_##name##_fn name;
    HH_HCCL_FUNCS(HH_FIELD)
#undef HH_FIELD
    const char *lib;             /* the library opened */
} hh_hccl;

/* Load libhccl.so once per process: the table, or NULL with the reason in why (the
 * library and dlerror, or a missing entry point). */
const hh_hccl *hwi_hccl_load(char *why, size_t len);

/* HCCL's sentence for r ("HCCL error N" when the library has no HcclGetErrorString). */
const char *hwi_hccl_str(const hh_hccl *h, hh_HcclResult r);

/* The HCCL data type for reductions of dt, or -1 when HCCL cannot reduce it (why says
 * which dtypes it can). Byte moves (broadcast, allgather) use INT8. */
int hwi_hccl_reduce_type(hwrt_dtype dt, hwrt_reduce_op op, char *why, size_t len);

#endif
