/* The subset of CANN's AscendCL runtime (libascendcl.so) and of the aclnn op API
 * (libnnopbase.so, libopapi_math.so / libopapi_nn.so, or the older libopapi.so) that hwrt
 * uses, declared here so that hwrt builds without CANN: CANN's own headers are C++ only
 * (acl_meta.h includes <cstdint> and uses constexpr). Types, constants and one
 * function-pointer slot per entry point, filled at run time by base/dynlib (ascend_api.c).
 * The names are hwrt's (hacl_*, HACL_*); the values are CANN's ABI as published in the
 * 8.5.0 headers (hicann/runtime include/external/acl, hicann/opbase, hicann/ops-math,
 * hicann/ops-nn; docs/ascend.md says which version they were checked against).
 *
 * tests/ascend/check_ascend_api.cpp compiles this file next to the real headers (when
 * ASCEND_TOOLKIT_HOME has them at configure time) with HACL_CHECK_REAL defined: every
 * enum type below then is CANN's own enum, so every slot's type is compared with the real
 * prototype exactly, and every constant and struct layout with the real one.
 *
 * Header-only: the baseline tool (tools/hwrt-ascend-baseline) and the test double of
 * libascendcl (tests/ascend) use it too. */
#ifndef HWRT_ASCEND_API_H
#define HWRT_ASCEND_API_H

#include <stddef.h>
#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

/* ---- types ---- */
typedef int hacl_error;                   /* aclError */
typedef int32_t hacl_nn_status;           /* aclnnStatus */
typedef void *hacl_stream;                /* aclrtStream */
typedef void *hacl_event;                 /* aclrtEvent */
typedef void *hacl_context;               /* aclrtContext */
typedef void *hacl_mem_handle;            /* aclrtDrvMemHandle */
typedef void (*hacl_callback)(void *user_data);   /* aclrtCallback */
/* aclnn objects are opaque; the struct tags are CANN's */
typedef struct aclTensor hacl_tensor;
typedef struct aclScalar hacl_scalar;
typedef struct aclIntArray hacl_int_array;
typedef struct aclOpExecutor hacl_executor;

/* CANN's enums are passed as int-sized values; hwrt names each type, and the type check
 * makes each name the real enum so that prototypes compare exactly. */
#ifdef HACL_CHECK_REAL
#define HACL_ENUM(mine, real) typedef real mine;
#else
#define HACL_ENUM(mine, real) typedef int mine;
#endif
HACL_ENUM(hacl_memcpy_kind, aclrtMemcpyKind)
HACL_ENUM(hacl_malloc_policy, aclrtMemMallocPolicy)
HACL_ENUM(hacl_mem_attr, aclrtMemAttr)
HACL_ENUM(hacl_callback_block, aclrtCallbackBlockType)
HACL_ENUM(hacl_event_status, aclrtEventRecordedStatus)
HACL_ENUM(hacl_stream_status, aclrtStreamStatus)
HACL_ENUM(hacl_granularity_option, aclrtMemGranularityOptions)
HACL_ENUM(hacl_location_type, aclrtMemLocationType)
HACL_ENUM(hacl_handle_type, aclrtMemHandleType)
HACL_ENUM(hacl_allocation_type, aclrtMemAllocationType)
HACL_ENUM(hacl_device_info, aclDeviceInfo)
HACL_ENUM(hacl_data_type, aclDataType)
HACL_ENUM(hacl_format, aclFormat)
#undef HACL_ENUM

typedef struct hacl_mem_location {        /* aclrtMemLocation */
    uint32_t id;
    hacl_location_type type;
} hacl_mem_location;

typedef struct hacl_physical_mem_prop {   /* aclrtPhysicalMemProp */
    hacl_handle_type handle_type;
    hacl_allocation_type allocation_type;
    hacl_mem_attr mem_attr;
    hacl_mem_location location;
    uint64_t reserve;
} hacl_physical_mem_prop;

/* ---- constants ---- */
enum {
    /* aclError (acl_base_rt.h, error_codes/rt_error_codes.h) */
    HACL_SUCCESS = 0,
    HACL_ERROR_INVALID_PARAM = 100000,
    HACL_ERROR_UNINITIALIZE = 100001,
    HACL_ERROR_REPEAT_INITIALIZE = 100002,
    HACL_ERROR_BAD_ALLOC = 200000,
    HACL_ERROR_API_NOT_SUPPORT = 200001,
    HACL_ERROR_INVALID_DEVICE = 200002,
    HACL_ERROR_FEATURE_UNSUPPORTED = 200006,
    HACL_ERROR_INTERNAL_ERROR = 500000,
    HACL_ERROR_FAILURE = 500001,
    HACL_ERROR_RT_PARAM_INVALID = 107000,
    HACL_ERROR_RT_INVALID_DEVICEID = 107001,
    HACL_ERROR_RT_CONTEXT_NULL = 107002,
    HACL_ERROR_RT_STREAM_CONTEXT = 107003,
    HACL_ERROR_RT_THREAD_SUBSCRIBE = 107012,
    HACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000,
    HACL_ERROR_RT_MEMORY_ALLOCATION = 207001,
    HACL_ERROR_RT_AICORE_OVER_FLOW = 207003,
    HACL_ERROR_RT_NO_DEVICE = 207004,
    HACL_ERROR_RT_NO_PERMISSION = 207006,
    HACL_ERROR_RT_NO_EVENT_RESOURCE = 207007,
    HACL_ERROR_RT_NO_STREAM_RESOURCE = 207008,
    HACL_ERROR_RT_AIVEC_OVER_FLOW = 207016,
    HACL_ERROR_RT_OVER_FLOW = 207017,
    HACL_ERROR_RT_DEVICE_OOM = 207018,
    HACL_ERROR_RT_INTERNAL_ERROR = 507000,
    HACL_ERROR_RT_STREAM_NOT_COMPLETE = 507004,
    HACL_ERROR_RT_EVENT_NOT_COMPLETE = 507006,
    HACL_ERROR_RT_LOST_HEARTBEAT = 507010,
    HACL_ERROR_RT_REPORT_TIMEOUT = 507012,
    HACL_ERROR_RT_AICORE_TIMEOUT = 507014,
    HACL_ERROR_RT_AICORE_EXCEPTION = 507015,
    HACL_ERROR_RT_DEV_SETUP_ERROR = 507033,
    HACL_ERROR_RT_VECTOR_CORE_TIMEOUT = 507034,
    HACL_ERROR_RT_VECTOR_CORE_EXCEPTION = 507035,
    HACL_ERROR_RT_STREAM_SYNC_TIMEOUT = 507046,
    HACL_ERROR_RT_EVENT_SYNC_TIMEOUT = 507047,
    HACL_ERROR_RT_DEVICE_MEM_ERROR = 507053,
    HACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR = 507054,
    HACL_ERROR_RT_DRV_INTERNAL_ERROR = 507899,

    /* aclnnStatus (opdev/op_errno.h) */
    HACL_NN_SUCCESS = 0,
    HACL_NN_ERR_PARAM_NULLPTR = 161001,
    HACL_NN_ERR_PARAM_INVALID = 161002,

    /* aclrtMemcpyKind */
    HACL_MEMCPY_HOST_TO_HOST = 0,
    HACL_MEMCPY_HOST_TO_DEVICE = 1,
    HACL_MEMCPY_DEVICE_TO_HOST = 2,
    HACL_MEMCPY_DEVICE_TO_DEVICE = 3,
    HACL_MEMCPY_DEFAULT = 4,
    /* aclrtMemMallocPolicy, aclrtMemAttr */
    HACL_MEM_MALLOC_HUGE_FIRST = 0,
    HACL_HBM_MEM = 1,
    HACL_HBM_MEM_HUGE = 4,
    /* aclrtCallbackBlockType, aclrtEventRecordedStatus, aclrtStreamStatus */
    HACL_CALLBACK_BLOCK = 1,
    HACL_EVENT_RECORDED_STATUS_NOT_READY = 0,
    HACL_EVENT_RECORDED_STATUS_COMPLETE = 1,
    HACL_STREAM_STATUS_COMPLETE = 0,
    HACL_STREAM_STATUS_NOT_READY = 1,
    /* VMM: aclrtMemLocationType, aclrtMemHandleType, aclrtMemAllocationType,
     * aclrtMemGranularityOptions */
    HACL_MEM_LOCATION_TYPE_DEVICE = 1,
    HACL_MEM_HANDLE_TYPE_NONE = 0,
    HACL_MEM_ALLOCATION_TYPE_PINNED = 0,
    HACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED = 1,
    /* aclDeviceInfo */
    HACL_DEVICE_INFO_AI_CORE_NUM = 0,
    /* aclDataType, aclFormat */
    HACL_DT_UNDEFINED = -1,
    HACL_FLOAT = 0,
    HACL_FLOAT16 = 1,
    HACL_INT8 = 2,
    HACL_INT32 = 3,
    HACL_UINT8 = 4,
    HACL_INT16 = 6,
    HACL_UINT16 = 7,
    HACL_UINT32 = 8,
    HACL_INT64 = 9,
    HACL_UINT64 = 10,
    HACL_DOUBLE = 11,
    HACL_BOOL = 12,
    HACL_COMPLEX64 = 16,
    HACL_COMPLEX128 = 17,
    HACL_BF16 = 27,
    HACL_FORMAT_ND = 2,
};

/* #defines of acl_rt.h (unsigned flags) */
#define HACL_EVENT_SYNC 0x00000001u
#define HACL_EVENT_TIME_LINE 0x00000008u
#define HACL_STREAM_FAST_LAUNCH 0x00000001u

/* cubeMathType of aclnnMatmul (aclnn_matmul.h's documentation; plain int8_t values) */
enum {
    HACL_CUBE_KEEP_DTYPE = 0,
    HACL_CUBE_ALLOW_FP32_DOWN_PRECISION = 1,
};

/* ---- entry points: X(slot, symbol, return type, parameter list, flags) ----
 * flags 0: required; HWI_DYNSYM_OPTIONAL (1): a newer entry point, the slot may stay NULL.
 * The runtime (libascendcl.so). PROP is the physical-memory property type: hwrt's here,
 * CANN's in the type check. */
#define HACL_RT_FUNCS(X, PROP)                                                                 \
    X(Init, aclInit, hacl_error, (const char *), 0)                                        \
    X(GetDeviceCount, aclrtGetDeviceCount, hacl_error, (uint32_t *), 0)                    \
    X(CreateContext, aclrtCreateContext, hacl_error, (hacl_context *, int32_t), 0)         \
    X(DestroyContext, aclrtDestroyContext, hacl_error, (hacl_context), 0)                  \
    X(SetCurrentContext, aclrtSetCurrentContext, hacl_error, (hacl_context), 0)            \
    X(GetSocName, aclrtGetSocName, const char *, (void), 0)                                \
    X(GetRecentErrMsg, aclGetRecentErrMsg, const char *, (void), 0)                        \
    X(SynchronizeDevice, aclrtSynchronizeDevice, hacl_error, (void), 0)                    \
    X(GetMemInfo, aclrtGetMemInfo, hacl_error, (hacl_mem_attr, size_t *, size_t *), 0)     \
    X(Malloc, aclrtMalloc, hacl_error, (void **, size_t, hacl_malloc_policy), 0)           \
    X(Free, aclrtFree, hacl_error, (void *), 0)                                            \
    X(MallocHost, aclrtMallocHost, hacl_error, (void **, size_t), 0)                       \
    X(FreeHost, aclrtFreeHost, hacl_error, (void *), 0)                                    \
    X(Memcpy, aclrtMemcpy, hacl_error,                                                     \
      (void *, size_t, const void *, size_t, hacl_memcpy_kind), 0)                         \
    X(MemcpyAsync, aclrtMemcpyAsync, hacl_error,                                           \
      (void *, size_t, const void *, size_t, hacl_memcpy_kind, hacl_stream), 0)            \
    X(MemsetAsync, aclrtMemsetAsync, hacl_error,                                           \
      (void *, size_t, int32_t, size_t, hacl_stream), 0)                                   \
    X(CreateStreamWithConfig, aclrtCreateStreamWithConfig, hacl_error,                     \
      (hacl_stream *, uint32_t, uint32_t), 0)                                              \
    X(DestroyStream, aclrtDestroyStream, hacl_error, (hacl_stream), 0)                     \
    X(SynchronizeStream, aclrtSynchronizeStream, hacl_error, (hacl_stream), 0)             \
    X(StreamWaitEvent, aclrtStreamWaitEvent, hacl_error, (hacl_stream, hacl_event), 0)     \
    X(CreateEvent, aclrtCreateEvent, hacl_error, (hacl_event *), 0)                        \
    X(DestroyEvent, aclrtDestroyEvent, hacl_error, (hacl_event), 0)                        \
    X(RecordEvent, aclrtRecordEvent, hacl_error, (hacl_event, hacl_stream), 0)             \
    X(QueryEventStatus, aclrtQueryEventStatus, hacl_error,                                 \
      (hacl_event, hacl_event_status *), 0)                                                \
    X(SynchronizeEvent, aclrtSynchronizeEvent, hacl_error, (hacl_event), 0)                \
    X(EventElapsedTime, aclrtEventElapsedTime, hacl_error,                                 \
      (float *, hacl_event, hacl_event), 0)                                                \
    X(SubscribeReport, aclrtSubscribeReport, hacl_error, (uint64_t, hacl_stream), 0)       \
    X(UnSubscribeReport, aclrtUnSubscribeReport, hacl_error, (uint64_t, hacl_stream), 0)   \
    X(LaunchCallback, aclrtLaunchCallback, hacl_error,                                     \
      (hacl_callback, void *, hacl_callback_block, hacl_stream), 0)                        \
    X(ProcessReport, aclrtProcessReport, hacl_error, (int32_t), 0)                         \
    X(GetDeviceCapability, aclGetDeviceCapability, hacl_error,                             \
      (uint32_t, hacl_device_info, int64_t *), 1)                                          \
    X(GetVersion, aclrtGetVersion, hacl_error, (int32_t *, int32_t *, int32_t *), 1)       \
    X(StreamQuery, aclrtStreamQuery, hacl_error, (hacl_stream, hacl_stream_status *), 1)   \
    X(DeviceGetStreamPriorityRange, aclrtDeviceGetStreamPriorityRange, hacl_error,         \
      (int32_t *, int32_t *), 1)                                                           \
    X(CreateEventExWithFlag, aclrtCreateEventExWithFlag, hacl_error,                       \
      (hacl_event *, uint32_t), 1)                                                         \
    X(EventGetTimestamp, aclrtEventGetTimestamp, hacl_error, (hacl_event, uint64_t *), 1)  \
    X(MemGetAllocationGranularity, aclrtMemGetAllocationGranularity, hacl_error,           \
      (PROP *, hacl_granularity_option, size_t *), 1)                                  \
    X(ReserveMemAddress, aclrtReserveMemAddress, hacl_error,                               \
      (void **, size_t, size_t, void *, uint64_t), 1)                                      \
    X(ReleaseMemAddress, aclrtReleaseMemAddress, hacl_error, (void *), 1)                  \
    X(MallocPhysical, aclrtMallocPhysical, hacl_error,                                     \
      (hacl_mem_handle *, size_t, const PROP *, uint64_t), 1)                          \
    X(FreePhysical, aclrtFreePhysical, hacl_error, (hacl_mem_handle), 1)                   \
    X(MapMem, aclrtMapMem, hacl_error, (void *, size_t, size_t, hacl_mem_handle, uint64_t), 1) \
    X(UnmapMem, aclrtUnmapMem, hacl_error, (void *), 1)

/* aclnn's objects (libnnopbase.so; the opapi libraries depend on it). */
#define HACL_NN_FUNCS(X)                                                                   \
    X(CreateTensor, aclCreateTensor, hacl_tensor *,                                        \
      (const int64_t *, uint64_t, hacl_data_type, const int64_t *, int64_t, hacl_format,   \
       const int64_t *, uint64_t, void *), 0)                                              \
    X(DestroyTensor, aclDestroyTensor, hacl_nn_status, (const hacl_tensor *), 0)           \
    X(CreateScalar, aclCreateScalar, hacl_scalar *, (void *, hacl_data_type), 0)           \
    X(DestroyScalar, aclDestroyScalar, hacl_nn_status, (const hacl_scalar *), 0)           \
    X(CreateIntArray, aclCreateIntArray, hacl_int_array *, (const int64_t *, uint64_t), 0) \
    X(DestroyIntArray, aclDestroyIntArray, hacl_nn_status, (const hacl_int_array *), 0)

/* The ops, phase 1 (workspace size; builds the single-use executor). Phase 2 of each is
 * X(<slot>Run, aclnn<Op>, ...) with HACL_OP_RUN_ARGS. Looked up across libopapi_math,
 * libopapi_nn, libopapi and libnnopbase (hwi_dynlib_find). */
#define HACL_OP_RUN_ARGS (void *, uint64_t, hacl_executor *, hacl_stream)
#define HACL_OP_FUNCS(X)                                                                   \
    X(Add, aclnnAddGetWorkspaceSize, aclnnAdd,                                             \
      (const hacl_tensor *, const hacl_tensor *, const hacl_scalar *, hacl_tensor *,       \
       uint64_t *, hacl_executor **))                                                      \
    X(Mul, aclnnMulGetWorkspaceSize, aclnnMul,                                             \
      (const hacl_tensor *, const hacl_tensor *, hacl_tensor *, uint64_t *, hacl_executor **)) \
    X(Muls, aclnnMulsGetWorkspaceSize, aclnnMuls,                                          \
      (const hacl_tensor *, const hacl_scalar *, hacl_tensor *, uint64_t *, hacl_executor **)) \
    X(Relu, aclnnReluGetWorkspaceSize, aclnnRelu,                                          \
      (const hacl_tensor *, const hacl_tensor *, uint64_t *, hacl_executor **))            \
    X(Cast, aclnnCastGetWorkspaceSize, aclnnCast,                                          \
      (const hacl_tensor *, hacl_data_type, hacl_tensor *, uint64_t *, hacl_executor **))  \
    X(Matmul, aclnnMatmulGetWorkspaceSize, aclnnMatmul,                                    \
      (const hacl_tensor *, const hacl_tensor *, hacl_tensor *, int8_t, uint64_t *,        \
       hacl_executor **))                                                                  \
    X(ReduceSum, aclnnReduceSumGetWorkspaceSize, aclnnReduceSum,                           \
      (const hacl_tensor *, const hacl_int_array *, bool, hacl_data_type, hacl_tensor *,   \
       uint64_t *, hacl_executor **))                                                      \
    X(Fill, aclnnInplaceFillScalarGetWorkspaceSize, aclnnInplaceFillScalar,                \
      (hacl_tensor *, const hacl_scalar *, uint64_t *, hacl_executor **))

typedef struct hacl_api {
#define HACL_SLOT(slot, sym, ret, args, flags) ret(*slot) args;
    HACL_RT_FUNCS(HACL_SLOT, hacl_physical_mem_prop)
    HACL_NN_FUNCS(HACL_SLOT)
#undef HACL_SLOT
#define HACL_OP_SLOT(slot, ws_sym, run_sym, args)                                          \
    hacl_nn_status(*slot) args;                                                            \
    hacl_nn_status(*slot##Run) HACL_OP_RUN_ARGS;
    HACL_OP_FUNCS(HACL_OP_SLOT)
#undef HACL_OP_SLOT
} hacl_api;

#endif
