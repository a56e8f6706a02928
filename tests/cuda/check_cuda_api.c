/* Compiled only when the CUDA toolkit's cuda.h is found at configure time: every entry
 * point, constant and struct layout hwrt declares itself (src/backends/cuda/cuda_api.h)
 * is checked against the real declarations. A mismatch fails the build of this unit;
 * the test then also runs it, which prints what was checked. */
#include <cuda.h>
#ifdef HWRT_CHECK_CUPTI
#include <cupti.h>
#endif
#include "backends/cuda/cuda_api.h"

#include <stddef.h>
#include <stdio.h>

/* every slot's type is the real prototype's (cuda.h's own #defines, such as
 * cuMemAlloc -> cuMemAlloc_v2, are bypassed: the table names the versioned symbol) */
#define CHECK_FN(slot, sym, ret, args)                                                     \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&sym), ret(*) args),            \
                   #sym ": hwrt's prototype differs from cuda.h's");
HCU_FUNCS(CHECK_FN, CUmemAllocationProp, CUmemAccessDesc)
#define COUNT_FN(slot, sym, ret, args) +1
enum { N_FUNCS = 0 HCU_FUNCS(COUNT_FN, CUmemAllocationProp, CUmemAccessDesc) };

_Static_assert(__builtin_types_compatible_p(hcu_result, CUresult), "CUresult");
_Static_assert(__builtin_types_compatible_p(hcu_device, CUdevice), "CUdevice");
_Static_assert(__builtin_types_compatible_p(hcu_dptr, CUdeviceptr), "CUdeviceptr");
_Static_assert(__builtin_types_compatible_p(hcu_context, CUcontext), "CUcontext");
_Static_assert(__builtin_types_compatible_p(hcu_stream, CUstream), "CUstream");
_Static_assert(__builtin_types_compatible_p(hcu_event, CUevent), "CUevent");
_Static_assert(__builtin_types_compatible_p(hcu_module, CUmodule), "CUmodule");
_Static_assert(__builtin_types_compatible_p(hcu_function, CUfunction), "CUfunction");
_Static_assert(__builtin_types_compatible_p(hcu_mem_handle, CUmemGenericAllocationHandle), "handle");
_Static_assert(__builtin_types_compatible_p(hcu_host_fn, CUhostFn), "CUhostFn");

#define SAME_FIELD(mine, real, fm, fr)                                                     \
    _Static_assert(offsetof(mine, fm) == offsetof(real, fr) &&                             \
                   sizeof(((mine *)0)->fm) == sizeof(((real *)0)->fr), #real "." #fr);
_Static_assert(sizeof(hcu_mem_location) == sizeof(CUmemLocation), "CUmemLocation size");
SAME_FIELD(hcu_mem_location, CUmemLocation, type, type)
SAME_FIELD(hcu_mem_location, CUmemLocation, id, id)
_Static_assert(sizeof(hcu_mem_alloc_prop) == sizeof(CUmemAllocationProp), "CUmemAllocationProp size");
SAME_FIELD(hcu_mem_alloc_prop, CUmemAllocationProp, type, type)
SAME_FIELD(hcu_mem_alloc_prop, CUmemAllocationProp, requested_handle_types, requestedHandleTypes)
SAME_FIELD(hcu_mem_alloc_prop, CUmemAllocationProp, location, location)
SAME_FIELD(hcu_mem_alloc_prop, CUmemAllocationProp, win32_handle_meta_data, win32HandleMetaData)
SAME_FIELD(hcu_mem_alloc_prop, CUmemAllocationProp, alloc_flags, allocFlags)
SAME_FIELD(hcu_mem_alloc_prop, CUmemAllocationProp, alloc_flags.compression_type, allocFlags.compressionType)
SAME_FIELD(hcu_mem_alloc_prop, CUmemAllocationProp, alloc_flags.gpu_direct_rdma_capable, allocFlags.gpuDirectRDMACapable)
SAME_FIELD(hcu_mem_alloc_prop, CUmemAllocationProp, alloc_flags.usage, allocFlags.usage)
SAME_FIELD(hcu_mem_alloc_prop, CUmemAllocationProp, alloc_flags.reserved, allocFlags.reserved)
_Static_assert(sizeof(hcu_mem_access_desc) == sizeof(CUmemAccessDesc), "CUmemAccessDesc size");
SAME_FIELD(hcu_mem_access_desc, CUmemAccessDesc, location, location)
SAME_FIELD(hcu_mem_access_desc, CUmemAccessDesc, flags, flags)

/* every constant hwrt uses: HCU_x == CU_x (or CUDA_x for results) */
#define CONSTANTS(X)                                                                       \
    X(HCU_SUCCESS, CUDA_SUCCESS) X(HCU_ERROR_INVALID_VALUE, CUDA_ERROR_INVALID_VALUE)      \
    X(HCU_ERROR_OUT_OF_MEMORY, CUDA_ERROR_OUT_OF_MEMORY)                                   \
    X(HCU_ERROR_NOT_INITIALIZED, CUDA_ERROR_NOT_INITIALIZED)                               \
    X(HCU_ERROR_DEINITIALIZED, CUDA_ERROR_DEINITIALIZED)                                   \
    X(HCU_ERROR_STUB_LIBRARY, CUDA_ERROR_STUB_LIBRARY)                                     \
    X(HCU_ERROR_NO_DEVICE, CUDA_ERROR_NO_DEVICE)                                           \
    X(HCU_ERROR_INVALID_DEVICE, CUDA_ERROR_INVALID_DEVICE)                                 \
    X(HCU_ERROR_DEVICE_NOT_LICENSED, CUDA_ERROR_DEVICE_NOT_LICENSED)                       \
    X(HCU_ERROR_INVALID_IMAGE, CUDA_ERROR_INVALID_IMAGE)                                   \
    X(HCU_ERROR_INVALID_CONTEXT, CUDA_ERROR_INVALID_CONTEXT)                               \
    X(HCU_ERROR_NO_BINARY_FOR_GPU, CUDA_ERROR_NO_BINARY_FOR_GPU)                           \
    X(HCU_ERROR_ECC_UNCORRECTABLE, CUDA_ERROR_ECC_UNCORRECTABLE)                           \
    X(HCU_ERROR_INVALID_PTX, CUDA_ERROR_INVALID_PTX)                                       \
    X(HCU_ERROR_UNSUPPORTED_PTX_VERSION, CUDA_ERROR_UNSUPPORTED_PTX_VERSION)               \
    X(HCU_ERROR_INVALID_HANDLE, CUDA_ERROR_INVALID_HANDLE)                                 \
    X(HCU_ERROR_NOT_FOUND, CUDA_ERROR_NOT_FOUND) X(HCU_ERROR_NOT_READY, CUDA_ERROR_NOT_READY) \
    X(HCU_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_ILLEGAL_ADDRESS)                               \
    X(HCU_ERROR_LAUNCH_OUT_OF_RESOURCES, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)               \
    X(HCU_ERROR_LAUNCH_TIMEOUT, CUDA_ERROR_LAUNCH_TIMEOUT)                                 \
    X(HCU_ERROR_HARDWARE_STACK_ERROR, CUDA_ERROR_HARDWARE_STACK_ERROR)                     \
    X(HCU_ERROR_ILLEGAL_INSTRUCTION, CUDA_ERROR_ILLEGAL_INSTRUCTION)                       \
    X(HCU_ERROR_MISALIGNED_ADDRESS, CUDA_ERROR_MISALIGNED_ADDRESS)                         \
    X(HCU_ERROR_INVALID_ADDRESS_SPACE, CUDA_ERROR_INVALID_ADDRESS_SPACE)                   \
    X(HCU_ERROR_INVALID_PC, CUDA_ERROR_INVALID_PC)                                         \
    X(HCU_ERROR_LAUNCH_FAILED, CUDA_ERROR_LAUNCH_FAILED)                                   \
    X(HCU_ERROR_NOT_PERMITTED, CUDA_ERROR_NOT_PERMITTED)                                   \
    X(HCU_ERROR_NOT_SUPPORTED, CUDA_ERROR_NOT_SUPPORTED)                                   \
    X(HCU_ERROR_SYSTEM_DRIVER_MISMATCH, CUDA_ERROR_SYSTEM_DRIVER_MISMATCH)                 \
    X(HCU_ERROR_UNKNOWN, CUDA_ERROR_UNKNOWN)                                               \
    X(HCU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK) \
    X(HCU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) \
    X(HCU_DEVICE_ATTRIBUTE_PCI_BUS_ID, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)                     \
    X(HCU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)               \
    X(HCU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT)     \
    X(HCU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING)     \
    X(HCU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)               \
    X(HCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) \
    X(HCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) \
    X(HCU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,                            \
      CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)                             \
    X(HCU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) \
    X(HCU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_ALLOCATION_TYPE_PINNED)                       \
    X(HCU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_LOCATION_TYPE_DEVICE)                           \
    X(HCU_MEM_HANDLE_TYPE_NONE, CU_MEM_HANDLE_TYPE_NONE)                                   \
    X(HCU_MEM_ACCESS_FLAGS_PROT_READWRITE, CU_MEM_ACCESS_FLAGS_PROT_READWRITE)             \
    X(HCU_MEM_ALLOC_GRANULARITY_MINIMUM, CU_MEM_ALLOC_GRANULARITY_MINIMUM)                 \
    X(HCU_MEMHOSTALLOC_PORTABLE, CU_MEMHOSTALLOC_PORTABLE)                                 \
    X(HCU_STREAM_NON_BLOCKING, CU_STREAM_NON_BLOCKING)                                     \
    X(HCU_EVENT_DEFAULT, CU_EVENT_DEFAULT) X(HCU_EVENT_DISABLE_TIMING, CU_EVENT_DISABLE_TIMING) \
    X(HCU_EVENT_WAIT_DEFAULT, CU_EVENT_WAIT_DEFAULT)                                       \
    X(HCU_MEMORYTYPE_HOST, CU_MEMORYTYPE_HOST) X(HCU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_DEVICE) \
    X(HCU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
#define CHECK_CONST(mine, real) _Static_assert((long long)(mine) == (long long)(real), #real);
CONSTANTS(CHECK_CONST)
#define COUNT_CONST(mine, real) +1
enum { N_CONSTS = 0 CONSTANTS(COUNT_CONST) };

#ifdef HWRT_CHECK_CUPTI
/* CUPTI: prototypes, constants, and the record offsets in every record version */
HCUPTI_FUNCS(CHECK_FN, CUpti_Activity)
enum { N_CUPTI = 0 HCUPTI_FUNCS(COUNT_FN, CUpti_Activity) };
_Static_assert(__builtin_types_compatible_p(hcupti_result, CUptiResult), "CUptiResult");
_Static_assert(__builtin_types_compatible_p(hcupti_buffer_requested, CUpti_BuffersCallbackRequestFunc), "request");
_Static_assert(__builtin_types_compatible_p(hcupti_buffer_completed, CUpti_BuffersCallbackCompleteFunc), "complete");
_Static_assert(offsetof(CUpti_Activity, kind) == offsetof(hcupti_activity, kind), "CUpti_Activity.kind");
#define CUPTI_CONSTANTS(X)                                                                 \
    X(HCUPTI_SUCCESS, CUPTI_SUCCESS) X(HCUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY) \
    X(HCUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_MEMSET)                             \
    X(HCUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)       \
    X(HCUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) \
    X(HCUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)   \
    X(HCUPTI_ACTIVITY_FLAG_FLUSH_FORCED, CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)
CUPTI_CONSTANTS(CHECK_CONST)
#define REC(T, CORR)                                                                       \
    _Static_assert(offsetof(T, start) == HCUPTI_OFF_START && offsetof(T, end) == HCUPTI_OFF_END && \
                   offsetof(T, correlationId) == CORR, #T);
REC(CUpti_ActivityKernel4, HCUPTI_OFF_KERNEL_CORRELATION)
REC(CUpti_ActivityKernel5, HCUPTI_OFF_KERNEL_CORRELATION)
REC(CUpti_ActivityKernel6, HCUPTI_OFF_KERNEL_CORRELATION)
REC(CUpti_ActivityKernel7, HCUPTI_OFF_KERNEL_CORRELATION)
REC(CUpti_ActivityKernel8, HCUPTI_OFF_KERNEL_CORRELATION)
REC(CUpti_ActivityKernel9, HCUPTI_OFF_KERNEL_CORRELATION)
REC(CUpti_ActivityKernel10, HCUPTI_OFF_KERNEL_CORRELATION)
REC(CUpti_ActivityMemcpy, HCUPTI_OFF_MEMCPY_CORRELATION)
REC(CUpti_ActivityMemcpy3, HCUPTI_OFF_MEMCPY_CORRELATION)
REC(CUpti_ActivityMemcpy4, HCUPTI_OFF_MEMCPY_CORRELATION)
REC(CUpti_ActivityMemcpy5, HCUPTI_OFF_MEMCPY_CORRELATION)
REC(CUpti_ActivityMemcpy6, HCUPTI_OFF_MEMCPY_CORRELATION)
REC(CUpti_ActivityMemset, HCUPTI_OFF_MEMSET_CORRELATION)
REC(CUpti_ActivityMemset2, HCUPTI_OFF_MEMSET_CORRELATION)
REC(CUpti_ActivityMemset3, HCUPTI_OFF_MEMSET_CORRELATION)
REC(CUpti_ActivityMemset4, HCUPTI_OFF_MEMSET_CORRELATION)
_Static_assert(offsetof(CUpti_ActivityExternalCorrelation, externalKind) == HCUPTI_OFF_EXT_KIND &&
               offsetof(CUpti_ActivityExternalCorrelation, externalId) == HCUPTI_OFF_EXT_ID &&
               offsetof(CUpti_ActivityExternalCorrelation, correlationId) == HCUPTI_OFF_EXT_CORRELATION,
               "CUpti_ActivityExternalCorrelation");
#endif

int main(void)
{
    printf("cuda_api.h matches cuda.h (CUDA_VERSION %d): %d entry points, %d constants, "
           "3 struct layouts, 10 handle types\n", CUDA_VERSION, (int)N_FUNCS, (int)N_CONSTS);
#ifdef HWRT_CHECK_CUPTI
    printf("and cupti.h (CUPTI_API_VERSION %d): %d entry points, 7 constants, 16 activity "
           "record versions\n", CUPTI_API_VERSION, (int)N_CUPTI);
#else
    printf("cupti.h was not found: the CUPTI declarations are not checked\n");
#endif
    return 0;
}
