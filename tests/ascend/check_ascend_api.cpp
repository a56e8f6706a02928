/* Compiled only when CANN's headers are found at configure time (ASCEND_TOOLKIT_HOME,
 * or HWRT_ASCEND_HEADERS naming an include folder with acl/, aclnn/ and aclnnop/):
 * every entry point, constant and struct layout hwrt declares itself
 * (src/backends/ascend/ascend_api.h) is checked against the real declarations. CANN's
 * headers are C++ only, so this unit is C++. With HACL_CHECK_REAL, ascend_api.h makes
 * each enum type it names CANN's own enum, so prototypes compare exactly. A mismatch fails
 * the build of this unit; the test then also runs it, which prints what was checked. */
#include <acl/acl.h>
#include <aclnn/acl_meta.h>
#include <aclnnop/aclnn_add.h>
#include <aclnnop/aclnn_cast.h>
#include <aclnnop/aclnn_fill_scalar.h>
#include <aclnnop/aclnn_matmul.h>
#include <aclnnop/aclnn_mul.h>
#include <aclnnop/aclnn_reduce_sum.h>
#include <aclnnop/aclnn_relu.h>
/* aclnnStatus codes: opbase installs them as aclnn/opdev/op_errno.h */
#if __has_include(<aclnn/opdev/op_errno.h>)
#include <aclnn/opdev/op_errno.h>
#define HAVE_OP_ERRNO 1
#else
#define HAVE_OP_ERRNO 0
#endif

#define HACL_CHECK_REAL 1
#include "backends/ascend/ascend_api.h"

#include <cstddef>
#include <cstdio>
#include <type_traits>

/* every slot's type is the real prototype's */
#define CHECK_FN(slot, sym, ret, args, flags)                                              \
    static_assert(std::is_same<decltype(&sym), ret(*) args>::value,                        \
                  #sym ": hwrt's prototype differs from CANN's");
HACL_RT_FUNCS(CHECK_FN, aclrtPhysicalMemProp)
HACL_NN_FUNCS(CHECK_FN)
#define CHECK_OP(slot, ws_sym, run_sym, args)                                              \
    static_assert(std::is_same<decltype(&ws_sym), hacl_nn_status(*) args>::value,          \
                  #ws_sym ": hwrt's prototype differs from CANN's");                       \
    static_assert(std::is_same<decltype(&run_sym), hacl_nn_status(*) HACL_OP_RUN_ARGS>::value, \
                  #run_sym ": hwrt's prototype differs from CANN's");
HACL_OP_FUNCS(CHECK_OP)
#define COUNT_FN(slot, sym, ret, args, flags) +1
#define COUNT_OP(slot, ws_sym, run_sym, args) +2
enum { N_FUNCS = 0 HACL_RT_FUNCS(COUNT_FN, aclrtPhysicalMemProp) HACL_NN_FUNCS(COUNT_FN) HACL_OP_FUNCS(COUNT_OP) };

/* the handle and scalar types */
static_assert(std::is_same<hacl_error, aclError>::value, "aclError");
static_assert(std::is_same<hacl_nn_status, aclnnStatus>::value, "aclnnStatus");
static_assert(std::is_same<hacl_stream, aclrtStream>::value, "aclrtStream");
static_assert(std::is_same<hacl_event, aclrtEvent>::value, "aclrtEvent");
static_assert(std::is_same<hacl_context, aclrtContext>::value, "aclrtContext");
static_assert(std::is_same<hacl_mem_handle, aclrtDrvMemHandle>::value, "aclrtDrvMemHandle");
static_assert(std::is_same<hacl_callback, aclrtCallback>::value, "aclrtCallback");
static_assert(std::is_same<hacl_tensor, aclTensor>::value, "aclTensor");
static_assert(std::is_same<hacl_scalar, aclScalar>::value, "aclScalar");
static_assert(std::is_same<hacl_int_array, aclIntArray>::value, "aclIntArray");
static_assert(std::is_same<hacl_executor, aclOpExecutor>::value, "aclOpExecutor");

/* the C build declares every enum as int: each real enum must be passed as an int */
#define INT_ENUM(real)                                                                     \
    static_assert(sizeof(real) == sizeof(int) && alignof(real) == alignof(int),            \
                  #real " is not int-sized");
INT_ENUM(aclrtMemcpyKind) INT_ENUM(aclrtMemMallocPolicy) INT_ENUM(aclrtMemAttr)
INT_ENUM(aclrtCallbackBlockType) INT_ENUM(aclrtEventRecordedStatus) INT_ENUM(aclrtStreamStatus)
INT_ENUM(aclrtMemGranularityOptions) INT_ENUM(aclrtMemLocationType) INT_ENUM(aclrtMemHandleType)
INT_ENUM(aclrtMemAllocationType) INT_ENUM(aclDeviceInfo) INT_ENUM(aclDataType) INT_ENUM(aclFormat)

/* struct layouts */
#define SAME_FIELD(mine, real, fm, fr)                                                     \
    static_assert(offsetof(mine, fm) == offsetof(real, fr) &&                              \
                  sizeof(((mine *)0)->fm) == sizeof(((real *)0)->fr), #real "." #fr);
static_assert(sizeof(hacl_mem_location) == sizeof(aclrtMemLocation), "aclrtMemLocation size");
SAME_FIELD(hacl_mem_location, aclrtMemLocation, id, id)
SAME_FIELD(hacl_mem_location, aclrtMemLocation, type, type)
static_assert(sizeof(hacl_physical_mem_prop) == sizeof(aclrtPhysicalMemProp), "aclrtPhysicalMemProp size");
SAME_FIELD(hacl_physical_mem_prop, aclrtPhysicalMemProp, handle_type, handleType)
SAME_FIELD(hacl_physical_mem_prop, aclrtPhysicalMemProp, allocation_type, allocationType)
SAME_FIELD(hacl_physical_mem_prop, aclrtPhysicalMemProp, mem_attr, memAttr)
SAME_FIELD(hacl_physical_mem_prop, aclrtPhysicalMemProp, location, location)
SAME_FIELD(hacl_physical_mem_prop, aclrtPhysicalMemProp, reserve, reserve)

/* every constant: HACL_x == ACL_x (aclnn's: ACLNN_x) */
#define CONSTANTS(X)                                                                       \
    X(HACL_SUCCESS, ACL_SUCCESS) X(HACL_ERROR_INVALID_PARAM, ACL_ERROR_INVALID_PARAM)      \
    X(HACL_ERROR_UNINITIALIZE, ACL_ERROR_UNINITIALIZE)                                     \
    X(HACL_ERROR_REPEAT_INITIALIZE, ACL_ERROR_REPEAT_INITIALIZE)                           \
    X(HACL_ERROR_BAD_ALLOC, ACL_ERROR_BAD_ALLOC)                                           \
    X(HACL_ERROR_API_NOT_SUPPORT, ACL_ERROR_API_NOT_SUPPORT)                               \
    X(HACL_ERROR_INVALID_DEVICE, ACL_ERROR_INVALID_DEVICE)                                 \
    X(HACL_ERROR_FEATURE_UNSUPPORTED, ACL_ERROR_FEATURE_UNSUPPORTED)                       \
    X(HACL_ERROR_INTERNAL_ERROR, ACL_ERROR_INTERNAL_ERROR)                                 \
    X(HACL_ERROR_FAILURE, ACL_ERROR_FAILURE)                                               \
    X(HACL_ERROR_RT_PARAM_INVALID, ACL_ERROR_RT_PARAM_INVALID)                             \
    X(HACL_ERROR_RT_INVALID_DEVICEID, ACL_ERROR_RT_INVALID_DEVICEID)                       \
    X(HACL_ERROR_RT_CONTEXT_NULL, ACL_ERROR_RT_CONTEXT_NULL)                               \
    X(HACL_ERROR_RT_STREAM_CONTEXT, ACL_ERROR_RT_STREAM_CONTEXT)                           \
    X(HACL_ERROR_RT_THREAD_SUBSCRIBE, ACL_ERROR_RT_THREAD_SUBSCRIBE)                       \
    X(HACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_FEATURE_NOT_SUPPORT)                 \
    X(HACL_ERROR_RT_MEMORY_ALLOCATION, ACL_ERROR_RT_MEMORY_ALLOCATION)                     \
    X(HACL_ERROR_RT_AICORE_OVER_FLOW, ACL_ERROR_RT_AICORE_OVER_FLOW)                       \
    X(HACL_ERROR_RT_NO_DEVICE, ACL_ERROR_RT_NO_DEVICE)                                     \
    X(HACL_ERROR_RT_NO_PERMISSION, ACL_ERROR_RT_NO_PERMISSION)                             \
    X(HACL_ERROR_RT_NO_EVENT_RESOURCE, ACL_ERROR_RT_NO_EVENT_RESOURCE)                     \
    X(HACL_ERROR_RT_NO_STREAM_RESOURCE, ACL_ERROR_RT_NO_STREAM_RESOURCE)                   \
    X(HACL_ERROR_RT_AIVEC_OVER_FLOW, ACL_ERROR_RT_AIVEC_OVER_FLOW)                         \
    X(HACL_ERROR_RT_OVER_FLOW, ACL_ERROR_RT_OVER_FLOW)                                     \
    X(HACL_ERROR_RT_DEVICE_OOM, ACL_ERROR_RT_DEVICE_OOM)                                   \
    X(HACL_ERROR_RT_INTERNAL_ERROR, ACL_ERROR_RT_INTERNAL_ERROR)                           \
    X(HACL_ERROR_RT_STREAM_NOT_COMPLETE, ACL_ERROR_RT_STREAM_NOT_COMPLETE)                 \
    X(HACL_ERROR_RT_EVENT_NOT_COMPLETE, ACL_ERROR_RT_EVENT_NOT_COMPLETE)                   \
    X(HACL_ERROR_RT_LOST_HEARTBEAT, ACL_ERROR_RT_LOST_HEARTBEAT)                           \
    X(HACL_ERROR_RT_REPORT_TIMEOUT, ACL_ERROR_RT_REPORT_TIMEOUT)                           \
    X(HACL_ERROR_RT_AICORE_TIMEOUT, ACL_ERROR_RT_AICORE_TIMEOUT)                           \
    X(HACL_ERROR_RT_AICORE_EXCEPTION, ACL_ERROR_RT_AICORE_EXCEPTION)                       \
    X(HACL_ERROR_RT_DEV_SETUP_ERROR, ACL_ERROR_RT_DEV_SETUP_ERROR)                         \
    X(HACL_ERROR_RT_VECTOR_CORE_TIMEOUT, ACL_ERROR_RT_VECTOR_CORE_TIMEOUT)                 \
    X(HACL_ERROR_RT_VECTOR_CORE_EXCEPTION, ACL_ERROR_RT_VECTOR_CORE_EXCEPTION)             \
    X(HACL_ERROR_RT_STREAM_SYNC_TIMEOUT, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)                 \
    X(HACL_ERROR_RT_EVENT_SYNC_TIMEOUT, ACL_ERROR_RT_EVENT_SYNC_TIMEOUT)                   \
    X(HACL_ERROR_RT_DEVICE_MEM_ERROR, ACL_ERROR_RT_DEVICE_MEM_ERROR)                       \
    X(HACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR, ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR)         \
    X(HACL_ERROR_RT_DRV_INTERNAL_ERROR, ACL_ERROR_RT_DRV_INTERNAL_ERROR)                   \
    X(HACL_MEMCPY_HOST_TO_HOST, ACL_MEMCPY_HOST_TO_HOST)                                   \
    X(HACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_HOST_TO_DEVICE)                               \
    X(HACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_DEVICE_TO_HOST)                               \
    X(HACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_DEVICE)                           \
    X(HACL_MEMCPY_DEFAULT, ACL_MEMCPY_DEFAULT)                                             \
    X(HACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_MALLOC_HUGE_FIRST) X(HACL_HBM_MEM, ACL_HBM_MEM)  \
    X(HACL_HBM_MEM_HUGE, ACL_HBM_MEM_HUGE) X(HACL_CALLBACK_BLOCK, ACL_CALLBACK_BLOCK)      \
    X(HACL_EVENT_RECORDED_STATUS_NOT_READY, ACL_EVENT_RECORDED_STATUS_NOT_READY)           \
    X(HACL_EVENT_RECORDED_STATUS_COMPLETE, ACL_EVENT_RECORDED_STATUS_COMPLETE)             \
    X(HACL_STREAM_STATUS_COMPLETE, ACL_STREAM_STATUS_COMPLETE)                             \
    X(HACL_STREAM_STATUS_NOT_READY, ACL_STREAM_STATUS_NOT_READY)                           \
    X(HACL_MEM_LOCATION_TYPE_DEVICE, ACL_MEM_LOCATION_TYPE_DEVICE)                         \
    X(HACL_MEM_HANDLE_TYPE_NONE, ACL_MEM_HANDLE_TYPE_NONE)                                 \
    X(HACL_MEM_ALLOCATION_TYPE_PINNED, ACL_MEM_ALLOCATION_TYPE_PINNED)                     \
    X(HACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED, ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED) \
    X(HACL_DEVICE_INFO_AI_CORE_NUM, ACL_DEVICE_INFO_AI_CORE_NUM)                           \
    X(HACL_DT_UNDEFINED, ACL_DT_UNDEFINED) X(HACL_FLOAT, ACL_FLOAT)                        \
    X(HACL_FLOAT16, ACL_FLOAT16) X(HACL_INT8, ACL_INT8) X(HACL_INT32, ACL_INT32)           \
    X(HACL_UINT8, ACL_UINT8) X(HACL_INT16, ACL_INT16) X(HACL_UINT16, ACL_UINT16)           \
    X(HACL_UINT32, ACL_UINT32) X(HACL_INT64, ACL_INT64) X(HACL_UINT64, ACL_UINT64)         \
    X(HACL_DOUBLE, ACL_DOUBLE) X(HACL_BOOL, ACL_BOOL) X(HACL_COMPLEX64, ACL_COMPLEX64)     \
    X(HACL_COMPLEX128, ACL_COMPLEX128) X(HACL_BF16, ACL_BF16)                              \
    X(HACL_FORMAT_ND, ACL_FORMAT_ND) X(HACL_EVENT_SYNC, ACL_EVENT_SYNC)                    \
    X(HACL_EVENT_TIME_LINE, ACL_EVENT_TIME_LINE) X(HACL_STREAM_FAST_LAUNCH, ACL_STREAM_FAST_LAUNCH)
#define CHECK_CONST(mine, real) static_assert((long long)(mine) == (long long)(real), #real);
CONSTANTS(CHECK_CONST)
#if HAVE_OP_ERRNO
#define NN_CONSTANTS(X)                                                                    \
    X(HACL_NN_SUCCESS, ACLNN_SUCCESS) X(HACL_NN_ERR_PARAM_NULLPTR, ACLNN_ERR_PARAM_NULLPTR) \
    X(HACL_NN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_INVALID)
NN_CONSTANTS(CHECK_CONST)
#else
#define NN_CONSTANTS(X)
#endif
#define COUNT_CONST(mine, real) +1
enum { N_CONSTANTS = 0 CONSTANTS(COUNT_CONST) NN_CONSTANTS(COUNT_CONST) };

int main()
{
    std::printf("ascend_api.h matches CANN's headers (ACL %d.%d.%d): %d entry points, "
                "%d constants%s, 2 structs, 13 enum types\n", ACL_MAJOR_VERSION,
                ACL_MINOR_VERSION, ACL_PATCH_VERSION, (int)N_FUNCS, (int)N_CONSTANTS,
                HAVE_OP_ERRNO ? "" : " (aclnn/opdev/op_errno.h absent: aclnnStatus codes unchecked)");
    return 0;
}
