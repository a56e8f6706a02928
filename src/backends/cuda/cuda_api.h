/* The subset of the CUDA driver API (libcuda.so.1) that hwrt uses, declared here so that
 * hwrt builds without the CUDA toolkit: types, constants and one function-pointer slot per
 * entry point, filled by dlsym from the driver (cuda_api.c). Nothing is copied from
 * cuda.h: the names are hwrt's (hcu_*, HCU_*), the values the driver's ABI. Entry points
 * are looked up by the versioned names the driver exports (cuMemAlloc_v2, ...), the ones
 * cuda.h's #defines select for CUDA 13.
 *
 * tests/cuda/check_cuda_api.c compiles this file next to the toolkit's cuda.h and checks
 * every slot's type against the real prototype and every constant and struct layout
 * against the real one (_Static_assert), whenever a toolkit is found at configure time.
 *
 * Header-only: the baseline tool (tools/hwrt-cuda-baseline) uses it too. */
#ifndef HWRT_CUDA_API_H
#define HWRT_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

/* ---- types (opaque handles keep the driver's struct tags) ---- */
typedef unsigned int hcu_result;          /* CUresult (an enum of non-negative values) */
typedef int hcu_device;                   /* CUdevice */
typedef unsigned long long hcu_dptr;      /* CUdeviceptr */
typedef struct CUctx_st *hcu_context;     /* CUcontext */
typedef struct CUstream_st *hcu_stream;   /* CUstream */
typedef struct CUevent_st *hcu_event;     /* CUevent */
typedef struct CUmod_st *hcu_module;      /* CUmodule */
typedef struct CUfunc_st *hcu_function;   /* CUfunction */
typedef unsigned long long hcu_mem_handle; /* CUmemGenericAllocationHandle */
typedef void (*hcu_host_fn)(void *user_data);   /* CUhostFn */

typedef struct hcu_mem_location {         /* CUmemLocation */
    unsigned int type;                    /* HCU_MEM_LOCATION_TYPE_* */
    int id;
} hcu_mem_location;

typedef struct hcu_mem_alloc_prop {       /* CUmemAllocationProp */
    unsigned int type;                    /* HCU_MEM_ALLOCATION_TYPE_* */
    unsigned int requested_handle_types;  /* HCU_MEM_HANDLE_TYPE_* */
    hcu_mem_location location;
    void *win32_handle_meta_data;
    struct {
        unsigned char compression_type;
        unsigned char gpu_direct_rdma_capable;
        unsigned short usage;
        unsigned char reserved[4];
    } alloc_flags;
} hcu_mem_alloc_prop;

typedef struct hcu_mem_access_desc {      /* CUmemAccessDesc */
    hcu_mem_location location;
    unsigned int flags;                   /* HCU_MEM_ACCESS_FLAGS_* */
} hcu_mem_access_desc;

/* ---- constants ---- */
enum {
    /* CUresult */
    HCU_SUCCESS = 0,
    HCU_ERROR_INVALID_VALUE = 1,
    HCU_ERROR_OUT_OF_MEMORY = 2,
    HCU_ERROR_NOT_INITIALIZED = 3,
    HCU_ERROR_DEINITIALIZED = 4,
    HCU_ERROR_STUB_LIBRARY = 34,
    HCU_ERROR_NO_DEVICE = 100,
    HCU_ERROR_INVALID_DEVICE = 101,
    HCU_ERROR_DEVICE_NOT_LICENSED = 102,
    HCU_ERROR_INVALID_IMAGE = 200,
    HCU_ERROR_INVALID_CONTEXT = 201,
    HCU_ERROR_NO_BINARY_FOR_GPU = 209,
    HCU_ERROR_ECC_UNCORRECTABLE = 214,
    HCU_ERROR_INVALID_PTX = 218,
    HCU_ERROR_UNSUPPORTED_PTX_VERSION = 222,
    HCU_ERROR_INVALID_HANDLE = 400,
    HCU_ERROR_NOT_FOUND = 500,
    HCU_ERROR_NOT_READY = 600,
    HCU_ERROR_ILLEGAL_ADDRESS = 700,
    HCU_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
    HCU_ERROR_LAUNCH_TIMEOUT = 702,
    HCU_ERROR_HARDWARE_STACK_ERROR = 714,
    HCU_ERROR_ILLEGAL_INSTRUCTION = 715,
    HCU_ERROR_MISALIGNED_ADDRESS = 716,
    HCU_ERROR_INVALID_ADDRESS_SPACE = 717,
    HCU_ERROR_INVALID_PC = 718,
    HCU_ERROR_LAUNCH_FAILED = 719,
    HCU_ERROR_NOT_PERMITTED = 800,
    HCU_ERROR_NOT_SUPPORTED = 801,
    HCU_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
    HCU_ERROR_UNKNOWN = 999,

    /* CUdevice_attribute */
    HCU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    HCU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    HCU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
    HCU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
    HCU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT = 40,
    HCU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
    HCU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
    HCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    HCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    HCU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 102,
    HCU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115,

    /* CUmemAllocationType, CUmemLocationType, CUmemAllocationHandleType,
     * CUmemAccess_flags, CUmemAllocationGranularity_flags */
    HCU_MEM_ALLOCATION_TYPE_PINNED = 1,
    HCU_MEM_LOCATION_TYPE_DEVICE = 1,
    HCU_MEM_HANDLE_TYPE_NONE = 0,
    HCU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3,
    HCU_MEM_ALLOC_GRANULARITY_MINIMUM = 0,

    /* cuMemHostAlloc flags, CUstream_flags, CUevent_flags */
    HCU_MEMHOSTALLOC_PORTABLE = 1,
    HCU_STREAM_NON_BLOCKING = 1,
    HCU_EVENT_DEFAULT = 0,
    HCU_EVENT_DISABLE_TIMING = 2,
    HCU_EVENT_WAIT_DEFAULT = 0,

    /* CUmemorytype (the kinds of a copy's two sides), CUpointer_attribute */
    HCU_MEMORYTYPE_HOST = 1,
    HCU_MEMORYTYPE_DEVICE = 2,
    HCU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
};

/* ---- entry points: X(slot, driver symbol, return type, parameter list) ----
 * PROP and ACCESS are the allocation-property and access-descriptor types: hwrt's here,
 * cuda.h's in the type check. */
#define HCU_FUNCS(X, PROP, ACCESS)                                                         \
    X(Init, cuInit, hcu_result, (unsigned int))                                            \
    X(DriverGetVersion, cuDriverGetVersion, hcu_result, (int *))                           \
    X(GetErrorName, cuGetErrorName, hcu_result, (hcu_result, const char **))               \
    X(GetErrorString, cuGetErrorString, hcu_result, (hcu_result, const char **))           \
    X(DeviceGetCount, cuDeviceGetCount, hcu_result, (int *))                               \
    X(DeviceGet, cuDeviceGet, hcu_result, (hcu_device *, int))                             \
    X(DeviceGetName, cuDeviceGetName, hcu_result, (char *, int, hcu_device))               \
    X(DeviceTotalMem, cuDeviceTotalMem_v2, hcu_result, (size_t *, hcu_device))             \
    X(DeviceGetAttribute, cuDeviceGetAttribute, hcu_result, (int *, unsigned int, hcu_device)) \
    X(DevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, hcu_result,                        \
      (hcu_context *, hcu_device))                                                         \
    X(DevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2, hcu_result, (hcu_device))     \
    X(CtxSetCurrent, cuCtxSetCurrent, hcu_result, (hcu_context))                           \
    X(CtxSynchronize, cuCtxSynchronize, hcu_result, (void))                                \
    X(CtxGetStreamPriorityRange, cuCtxGetStreamPriorityRange, hcu_result, (int *, int *))  \
    X(MemGetInfo, cuMemGetInfo_v2, hcu_result, (size_t *, size_t *))                       \
    X(MemAlloc, cuMemAlloc_v2, hcu_result, (hcu_dptr *, size_t))                           \
    X(MemFree, cuMemFree_v2, hcu_result, (hcu_dptr))                                       \
    X(MemAllocAsync, cuMemAllocAsync, hcu_result, (hcu_dptr *, size_t, hcu_stream))        \
    X(MemFreeAsync, cuMemFreeAsync, hcu_result, (hcu_dptr, hcu_stream))                    \
    X(MemAddressReserve, cuMemAddressReserve, hcu_result,                                  \
      (hcu_dptr *, size_t, size_t, hcu_dptr, unsigned long long))                          \
    X(MemAddressFree, cuMemAddressFree, hcu_result, (hcu_dptr, size_t))                    \
    X(MemCreate, cuMemCreate, hcu_result,                                                  \
      (hcu_mem_handle *, size_t, const PROP *, unsigned long long))                        \
    X(MemRelease, cuMemRelease, hcu_result, (hcu_mem_handle))                              \
    X(MemMap, cuMemMap, hcu_result,                                                        \
      (hcu_dptr, size_t, size_t, hcu_mem_handle, unsigned long long))                      \
    X(MemUnmap, cuMemUnmap, hcu_result, (hcu_dptr, size_t))                                \
    X(MemSetAccess, cuMemSetAccess, hcu_result, (hcu_dptr, size_t, const ACCESS *, size_t)) \
    X(MemGetAllocationGranularity, cuMemGetAllocationGranularity, hcu_result,              \
      (size_t *, const PROP *, unsigned int))                                              \
    X(MemHostAlloc, cuMemHostAlloc, hcu_result, (void **, size_t, unsigned int))           \
    X(MemFreeHost, cuMemFreeHost, hcu_result, (void *))                                    \
    X(PointerGetAttribute, cuPointerGetAttribute, hcu_result, (void *, unsigned int, hcu_dptr)) \
    X(MemcpyHtoDAsync, cuMemcpyHtoDAsync_v2, hcu_result,                                   \
      (hcu_dptr, const void *, size_t, hcu_stream))                                        \
    X(MemcpyDtoHAsync, cuMemcpyDtoHAsync_v2, hcu_result, (void *, hcu_dptr, size_t, hcu_stream)) \
    X(MemcpyDtoDAsync, cuMemcpyDtoDAsync_v2, hcu_result,                                   \
      (hcu_dptr, hcu_dptr, size_t, hcu_stream))                                            \
    X(MemcpyAsync, cuMemcpyAsync, hcu_result, (hcu_dptr, hcu_dptr, size_t, hcu_stream))    \
    X(MemsetD8Async, cuMemsetD8Async, hcu_result, (hcu_dptr, unsigned char, size_t, hcu_stream)) \
    X(StreamCreateWithPriority, cuStreamCreateWithPriority, hcu_result,                    \
      (hcu_stream *, unsigned int, int))                                                   \
    X(StreamDestroy, cuStreamDestroy_v2, hcu_result, (hcu_stream))                         \
    X(StreamSynchronize, cuStreamSynchronize, hcu_result, (hcu_stream))                    \
    X(StreamQuery, cuStreamQuery, hcu_result, (hcu_stream))                                \
    X(StreamWaitEvent, cuStreamWaitEvent, hcu_result, (hcu_stream, hcu_event, unsigned int)) \
    X(LaunchHostFunc, cuLaunchHostFunc, hcu_result, (hcu_stream, hcu_host_fn, void *))     \
    X(EventCreate, cuEventCreate, hcu_result, (hcu_event *, unsigned int))                 \
    X(EventDestroy, cuEventDestroy_v2, hcu_result, (hcu_event))                            \
    X(EventRecord, cuEventRecord, hcu_result, (hcu_event, hcu_stream))                     \
    X(EventQuery, cuEventQuery, hcu_result, (hcu_event))                                   \
    X(EventSynchronize, cuEventSynchronize, hcu_result, (hcu_event))                       \
    X(EventElapsedTime, cuEventElapsedTime_v2, hcu_result, (float *, hcu_event, hcu_event)) \
    X(ModuleLoadData, cuModuleLoadData, hcu_result, (hcu_module *, const void *))          \
    X(ModuleUnload, cuModuleUnload, hcu_result, (hcu_module))                              \
    X(ModuleGetFunction, cuModuleGetFunction, hcu_result,                                  \
      (hcu_function *, hcu_module, const char *))                                          \
    X(LaunchKernel, cuLaunchKernel, hcu_result,                                            \
      (hcu_function, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,  \
       unsigned int, unsigned int, hcu_stream, void **, void **))

typedef struct hcu_api {
#define HCU_SLOT(slot, sym, ret, args) ret(*slot) args;
    HCU_FUNCS(HCU_SLOT, hcu_mem_alloc_prop, hcu_mem_access_desc)
#undef HCU_SLOT
} hcu_api;

/* Every slot of api from the driver library h (dlopen'ed; cuEventElapsedTime_v2 falls
 * back to the unversioned name of drivers before CUDA 12.8): NULL, or the name of the
 * first symbol missing (cuda_syms.c; the backend and hwrt-cuda-baseline both load so). */
const char *hcu_resolve(void *h, hcu_api *api);

/* ---- CUPTI's activity API (libcupti, dlopen; cuda_cupti.c) ---- */
typedef unsigned int hcupti_result;       /* CUptiResult */
typedef struct hcupti_activity {          /* CUpti_Activity: every record starts with it */
    unsigned int kind;                    /* HCUPTI_ACTIVITY_KIND_* */
} hcupti_activity;
typedef void (*hcupti_buffer_requested)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*hcupti_buffer_completed)(hcu_context ctx, uint32_t stream_id, uint8_t *buffer,
                                        size_t size, size_t valid_size);

enum {
    HCUPTI_SUCCESS = 0,
    HCUPTI_ACTIVITY_KIND_MEMCPY = 1,
    HCUPTI_ACTIVITY_KIND_MEMSET = 2,
    HCUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL = 10,
    HCUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION = 39,
    HCUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 = 3,
    HCUPTI_ACTIVITY_FLAG_FLUSH_FORCED = 1,
};

/* Byte offsets of the fields hwrt reads in activity records. CUPTI appends fields to new
 * record versions, so these are the same in every version of a kind (the type check
 * asserts it for CUpti_ActivityKernel4..10, Memcpy..Memcpy6, Memset..Memset4). */
enum {
    HCUPTI_OFF_START = 16,                /* uint64_t start (ns, CUPTI's clock) */
    HCUPTI_OFF_END = 24,                  /* uint64_t end */
    HCUPTI_OFF_KERNEL_CORRELATION = 92,   /* uint32_t correlationId, kernel records */
    HCUPTI_OFF_MEMCPY_CORRELATION = 44,   /* memcpy and memset records */
    HCUPTI_OFF_MEMSET_CORRELATION = 44,
    HCUPTI_OFF_EXT_KIND = 4,              /* CUpti_ActivityExternalCorrelation.externalKind */
    HCUPTI_OFF_EXT_ID = 8,                /* .externalId (uint64_t) */
    HCUPTI_OFF_EXT_CORRELATION = 16,      /* .correlationId (uint32_t) */
};

/* X(slot, symbol, return type, parameters); ACT is the record type (CUpti_Activity in the
 * type check). */
#define HCUPTI_FUNCS(X, ACT)                                                                \
    X(GetTimestamp, cuptiGetTimestamp, hcupti_result, (uint64_t *))                        \
    X(ActivityEnable, cuptiActivityEnable, hcupti_result, (unsigned int))                  \
    X(ActivityDisable, cuptiActivityDisable, hcupti_result, (unsigned int))                \
    X(ActivityRegisterCallbacks, cuptiActivityRegisterCallbacks, hcupti_result,            \
      (hcupti_buffer_requested, hcupti_buffer_completed))                                  \
    X(ActivityGetNextRecord, cuptiActivityGetNextRecord, hcupti_result,                    \
      (uint8_t *, size_t, ACT **))                                                         \
    X(ActivityFlushAll, cuptiActivityFlushAll, hcupti_result, (uint32_t))                  \
    X(ActivityPushExternalCorrelationId, cuptiActivityPushExternalCorrelationId,           \
      hcupti_result, (unsigned int, uint64_t))                                             \
    X(ActivityPopExternalCorrelationId, cuptiActivityPopExternalCorrelationId,             \
      hcupti_result, (unsigned int, uint64_t *))

typedef struct hcupti_api {
#define HCUPTI_SLOT(slot, sym, ret, args) ret(*slot) args;
    HCUPTI_FUNCS(HCUPTI_SLOT, hcupti_activity)
#undef HCUPTI_SLOT
} hcupti_api;

#endif
