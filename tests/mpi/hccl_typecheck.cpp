// hwrt's own HCCL declarations (src/distributed/hccl_api.h) against the real hccl.h and
// hccl_types.h. The vendor headers are C++ only (file-scope const uint32_t array sizes),
// so this check is C++; every check is a static_assert: a mismatch fails the build,
// naming the function, type or constant. HWRT_HCCL_HEADER names the header to include
// (CANN: <hccl/hccl.h> under ${ASCEND_TOOLKIT_HOME}/include; torch_npu's vendored copy:
// "third_party/hccl/inc/hccl/hccl.h" from its root).
#ifndef HWRT_HCCL_HEADER
#define HWRT_HCCL_HEADER <hccl/hccl.h>
#endif
#include HWRT_HCCL_HEADER

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <type_traits>

#define HH_HCCL_REAL_TYPES 1
#include "distributed/hccl_api.h"

#define CHECK_FN(name, ret, params)                                                          \
    static_assert(std::is_same<hh_##name##_fn, decltype(&name)>::value,                      \
                  "hwrt's declaration of " #name " differs from hccl.h");
HH_HCCL_FUNCS(CHECK_FN)

// the plain build (no vendor header) declares the enums as int: the same size and sign
static_assert(sizeof(HcclResult) == sizeof(int) && sizeof(HcclDataType) == sizeof(int) &&
              sizeof(HcclReduceOp) == sizeof(int), "HCCL's enums are not int-sized");
static_assert(std::is_same<HcclComm, void *>::value, "HcclComm is not void *");
static_assert(std::is_same<aclrtStream, void *>::value, "aclrtStream is not void *");
static_assert(sizeof(struct hh_rootInfo_st) == sizeof(HcclRootInfo) &&
              offsetof(struct hh_rootInfo_st, internal) == offsetof(HcclRootInfo, internal) &&
              sizeof(((struct hh_rootInfo_st *)0)->internal) == sizeof(((HcclRootInfo *)0)->internal),
              "hh_rootInfo_st differs from HcclRootInfo");

#define CHECK_CONST(mine, theirs) static_assert((long)(mine) == (long)(theirs), #mine " != " #theirs);
CHECK_CONST(HH_HCCL_ROOT_INFO_BYTES, HCCL_ROOT_INFO_BYTES)
CHECK_CONST(HH_HCCL_SUCCESS, HCCL_SUCCESS)
CHECK_CONST(HH_HCCL_E_PARA, HCCL_E_PARA)
CHECK_CONST(HH_HCCL_E_PTR, HCCL_E_PTR)
CHECK_CONST(HH_HCCL_E_MEMORY, HCCL_E_MEMORY)
CHECK_CONST(HH_HCCL_E_INTERNAL, HCCL_E_INTERNAL)
CHECK_CONST(HH_HCCL_E_NOT_SUPPORT, HCCL_E_NOT_SUPPORT)
CHECK_CONST(HH_HCCL_E_NOT_FOUND, HCCL_E_NOT_FOUND)
CHECK_CONST(HH_HCCL_E_UNAVAIL, HCCL_E_UNAVAIL)
CHECK_CONST(HH_HCCL_E_TIMEOUT, HCCL_E_TIMEOUT)
CHECK_CONST(HH_HCCL_E_REMOTE, HCCL_E_REMOTE)
CHECK_CONST(HH_HCCL_REDUCE_SUM, HCCL_REDUCE_SUM)
CHECK_CONST(HH_HCCL_REDUCE_PROD, HCCL_REDUCE_PROD)
CHECK_CONST(HH_HCCL_REDUCE_MAX, HCCL_REDUCE_MAX)
CHECK_CONST(HH_HCCL_REDUCE_MIN, HCCL_REDUCE_MIN)
CHECK_CONST(HH_HCCL_DATA_TYPE_INT8, HCCL_DATA_TYPE_INT8)
CHECK_CONST(HH_HCCL_DATA_TYPE_INT16, HCCL_DATA_TYPE_INT16)
CHECK_CONST(HH_HCCL_DATA_TYPE_INT32, HCCL_DATA_TYPE_INT32)
CHECK_CONST(HH_HCCL_DATA_TYPE_FP16, HCCL_DATA_TYPE_FP16)
CHECK_CONST(HH_HCCL_DATA_TYPE_FP32, HCCL_DATA_TYPE_FP32)
CHECK_CONST(HH_HCCL_DATA_TYPE_INT64, HCCL_DATA_TYPE_INT64)
CHECK_CONST(HH_HCCL_DATA_TYPE_UINT64, HCCL_DATA_TYPE_UINT64)
CHECK_CONST(HH_HCCL_DATA_TYPE_UINT8, HCCL_DATA_TYPE_UINT8)
CHECK_CONST(HH_HCCL_DATA_TYPE_FP64, HCCL_DATA_TYPE_FP64)
CHECK_CONST(HH_HCCL_DATA_TYPE_BFP16, HCCL_DATA_TYPE_BFP16)
// hwrt's SUM/PROD/MAX/MIN are passed to HCCL as they are (hccl_engine.c)
CHECK_CONST(HWRT_REDUCE_SUM, HCCL_REDUCE_SUM)
CHECK_CONST(HWRT_REDUCE_PROD, HCCL_REDUCE_PROD)
CHECK_CONST(HWRT_REDUCE_MAX, HCCL_REDUCE_MAX)
CHECK_CONST(HWRT_REDUCE_MIN, HCCL_REDUCE_MIN)

int main()
{
#define COUNT_FN(name, ret, params) +1
    std::printf("hccl.h (%s): %d function types, the enums, constants and the root info "
                "layout match\n", HWRT_HCCL_DESC, 0 HH_HCCL_FUNCS(COUNT_FN));
    return 0;
}
