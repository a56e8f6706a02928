/* hwrt's own NVML declarations (src/backends/cuda/cuda_nvml.h) against the real nvml.h,
 * built only where nvml.h is found (HWRT_NVML_INCLUDE_DIR). Every check is a
 * _Static_assert: a mismatch fails the build, naming the function, struct or constant. */
/* the unversioned names as the library exports them (nvml.h otherwise maps them to _v3) */
#define NVML_NO_UNVERSIONED_FUNC_DEFS 1
#include <nvml.h>
#define HN_NVML_REAL_TYPES 1
#include "backends/cuda/cuda_nvml.h"

#include <stddef.h>
#include <stdio.h>

/* Function types: hn_<name>_fn must be the type of a pointer to NVML's <name>. */
#define CHECK_FN(name, ret, params)                                                         \
    _Static_assert(__builtin_types_compatible_p(hn_##name##_fn, __typeof__(&name)),          \
                   "hwrt's declaration of " #name " differs from nvml.h");
HN_NVML_FUNCS(CHECK_FN)

_Static_assert(__builtin_types_compatible_p(hn_nvmlReturn_t, nvmlReturn_t),
               "nvmlReturn_t is not an unsigned int enum");
_Static_assert(__builtin_types_compatible_p(hn_nvmlDevice_t, nvmlDevice_t), "nvmlDevice_t");

/* Constants. */
#define CHECK_CONST(mine, theirs) _Static_assert((mine) == (theirs), #mine " != " #theirs);
CHECK_CONST(HN_NVML_SUCCESS, NVML_SUCCESS)
CHECK_CONST(HN_NVML_ERROR_UNINITIALIZED, NVML_ERROR_UNINITIALIZED)
CHECK_CONST(HN_NVML_ERROR_INVALID_ARGUMENT, NVML_ERROR_INVALID_ARGUMENT)
CHECK_CONST(HN_NVML_ERROR_NOT_SUPPORTED, NVML_ERROR_NOT_SUPPORTED)
CHECK_CONST(HN_NVML_ERROR_NO_PERMISSION, NVML_ERROR_NO_PERMISSION)
CHECK_CONST(HN_NVML_ERROR_INSUFFICIENT_SIZE, NVML_ERROR_INSUFFICIENT_SIZE)
CHECK_CONST(HN_NVML_ERROR_DRIVER_NOT_LOADED, NVML_ERROR_DRIVER_NOT_LOADED)
CHECK_CONST(HN_NVML_ERROR_LIBRARY_NOT_FOUND, NVML_ERROR_LIBRARY_NOT_FOUND)
CHECK_CONST(HN_NVML_ERROR_FUNCTION_NOT_FOUND, NVML_ERROR_FUNCTION_NOT_FOUND)
CHECK_CONST(HN_NVML_ERROR_GPU_IS_LOST, NVML_ERROR_GPU_IS_LOST)
CHECK_CONST(HN_NVML_ERROR_UNKNOWN, NVML_ERROR_UNKNOWN)
CHECK_CONST(HN_NVML_DEVICE_NAME_V2_BUFFER_SIZE, NVML_DEVICE_NAME_V2_BUFFER_SIZE)
CHECK_CONST(HN_NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE, NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE)
CHECK_CONST(HN_NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE, NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE)
CHECK_CONST(HN_NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE, NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE)
CHECK_CONST(HN_NVML_VALUE_NOT_AVAILABLE_ULL, (unsigned long long)NVML_VALUE_NOT_AVAILABLE)
CHECK_CONST(HN_NVML_MEMORY_V2, nvmlMemory_v2)

/* Struct layouts: hwrt's hn_*_st (what hwrt compiles with) against NVML's, field by field. */
#define SAME_SIZE(mine, theirs) _Static_assert(sizeof(struct mine) == sizeof(theirs), #mine " size");
#define SAME_FIELD(mine, theirs, f)                                                          \
    _Static_assert(offsetof(struct mine, f) == offsetof(theirs, f) &&                        \
                   sizeof(((struct mine *)0)->f) == sizeof(((theirs *)0)->f),               \
                   #mine "." #f " differs from nvml.h");
SAME_SIZE(hn_nvmlMemory_st, nvmlMemory_t)
SAME_FIELD(hn_nvmlMemory_st, nvmlMemory_t, total)
SAME_FIELD(hn_nvmlMemory_st, nvmlMemory_t, free)
SAME_FIELD(hn_nvmlMemory_st, nvmlMemory_t, used)
SAME_SIZE(hn_nvmlMemory_v2_st, nvmlMemory_v2_t)
SAME_FIELD(hn_nvmlMemory_v2_st, nvmlMemory_v2_t, version)
SAME_FIELD(hn_nvmlMemory_v2_st, nvmlMemory_v2_t, total)
SAME_FIELD(hn_nvmlMemory_v2_st, nvmlMemory_v2_t, reserved)
SAME_FIELD(hn_nvmlMemory_v2_st, nvmlMemory_v2_t, free)
SAME_FIELD(hn_nvmlMemory_v2_st, nvmlMemory_v2_t, used)
SAME_SIZE(hn_nvmlUtilization_st, nvmlUtilization_t)
SAME_FIELD(hn_nvmlUtilization_st, nvmlUtilization_t, gpu)
SAME_FIELD(hn_nvmlUtilization_st, nvmlUtilization_t, memory)
SAME_SIZE(hn_nvmlProcessInfo_st, nvmlProcessInfo_t)
SAME_FIELD(hn_nvmlProcessInfo_st, nvmlProcessInfo_t, pid)
SAME_FIELD(hn_nvmlProcessInfo_st, nvmlProcessInfo_t, usedGpuMemory)
SAME_FIELD(hn_nvmlProcessInfo_st, nvmlProcessInfo_t, gpuInstanceId)
SAME_FIELD(hn_nvmlProcessInfo_st, nvmlProcessInfo_t, computeInstanceId)
SAME_SIZE(hn_nvmlProcessInfo_v1_st, nvmlProcessInfo_v1_t)
SAME_FIELD(hn_nvmlProcessInfo_v1_st, nvmlProcessInfo_v1_t, pid)
SAME_FIELD(hn_nvmlProcessInfo_v1_st, nvmlProcessInfo_v1_t, usedGpuMemory)
SAME_SIZE(hn_nvmlPciInfo_st, nvmlPciInfo_t)
SAME_FIELD(hn_nvmlPciInfo_st, nvmlPciInfo_t, busIdLegacy)
SAME_FIELD(hn_nvmlPciInfo_st, nvmlPciInfo_t, domain)
SAME_FIELD(hn_nvmlPciInfo_st, nvmlPciInfo_t, bus)
SAME_FIELD(hn_nvmlPciInfo_st, nvmlPciInfo_t, device)
SAME_FIELD(hn_nvmlPciInfo_st, nvmlPciInfo_t, pciDeviceId)
SAME_FIELD(hn_nvmlPciInfo_st, nvmlPciInfo_t, pciSubSystemId)
SAME_FIELD(hn_nvmlPciInfo_st, nvmlPciInfo_t, busId)

int main(void)
{
#define COUNT_FN(name, ret, params) +1
    printf("nvml.h (NVML API %d): %d function types, constants and struct layouts match\n",
           NVML_API_VERSION, 0 HN_NVML_FUNCS(COUNT_FN));
    return 0;
}
