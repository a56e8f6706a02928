/* NVML (libnvidia-ml.so.1), loaded with dlopen: the cuda backend's monitor slot, the
 * device-wide view nvidia-smi prints (memory used/free per device, per-process memory,
 * utilisation, driver version), read without opening a device.
 *
 * hwrt declares the subset of NVML it uses itself (no copied header). When the real
 * nvml.h is present at build time, tests/unit/nvml_typecheck.c checks every function type
 * and constant below against it (built with HN_NVML_REAL_TYPES, which makes the hn_
 * struct typedefs alias NVML's own so the function types can be compared; the hn_*_st
 * layouts are then compared field by field).
 *
 * HWRT_NVML_LIBRARY names the library to load instead of libnvidia-ml.so.1 (a path or a
 * soname; a fake in tests). */
#ifndef HWI_CUDA_NVML_H
#define HWI_CUDA_NVML_H

#include "hwrt.h"

/* Return codes (nvmlReturn_t, an enum of non-negative values: unsigned int). */
typedef unsigned int hn_nvmlReturn_t;
#define HN_NVML_SUCCESS 0u
#define HN_NVML_ERROR_UNINITIALIZED 1u
#define HN_NVML_ERROR_INVALID_ARGUMENT 2u
#define HN_NVML_ERROR_NOT_SUPPORTED 3u
#define HN_NVML_ERROR_NO_PERMISSION 4u
#define HN_NVML_ERROR_INSUFFICIENT_SIZE 7u
#define HN_NVML_ERROR_DRIVER_NOT_LOADED 9u
#define HN_NVML_ERROR_LIBRARY_NOT_FOUND 12u
#define HN_NVML_ERROR_FUNCTION_NOT_FOUND 13u
#define HN_NVML_ERROR_GPU_IS_LOST 15u
#define HN_NVML_ERROR_UNKNOWN 999u

#define HN_NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define HN_NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define HN_NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define HN_NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16
/* usedGpuMemory when the driver cannot tell (WDDM, some MIG setups) */
#define HN_NVML_VALUE_NOT_AVAILABLE_ULL 0xFFFFFFFFFFFFFFFFull

typedef struct nvmlDevice_st *hn_nvmlDevice_t;   /* NVML's own opaque tag */

struct hn_nvmlMemory_st {
    unsigned long long total, free, used;
};
struct hn_nvmlMemory_v2_st {
    unsigned int version;          /* HN_NVML_MEMORY_V2 */
    unsigned long long total, reserved, free, used;
};
/* NVML_STRUCT_VERSION(Memory, 2): sizeof | 2 << 24 */
#define HN_NVML_MEMORY_V2 ((unsigned int)(sizeof(struct hn_nvmlMemory_v2_st) | (2u << 24)))
struct hn_nvmlUtilization_st {
    unsigned int gpu, memory;      /* percent over the driver's last sample period */
};
/* nvmlProcessInfo_t of ..._v3 (nvmlProcessInfo_v2_st) */
struct hn_nvmlProcessInfo_st {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
};
/* nvmlProcessInfo_v1_t of the unversioned call (drivers before R470) */
struct hn_nvmlProcessInfo_v1_st {
    unsigned int pid;
    unsigned long long usedGpuMemory;
};
struct hn_nvmlPciInfo_st {
    char busIdLegacy[HN_NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[HN_NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
};

#ifdef HN_NVML_REAL_TYPES            /* the type check: nvml.h is included before */
typedef nvmlMemory_t hn_nvmlMemory_t;
typedef nvmlMemory_v2_t hn_nvmlMemory_v2_t;
typedef nvmlUtilization_t hn_nvmlUtilization_t;
typedef nvmlProcessInfo_t hn_nvmlProcessInfo_t;
typedef nvmlProcessInfo_v1_t hn_nvmlProcessInfo_v1_t;
typedef nvmlPciInfo_t hn_nvmlPciInfo_t;
#else
typedef struct hn_nvmlMemory_st hn_nvmlMemory_t;
typedef struct hn_nvmlMemory_v2_st hn_nvmlMemory_v2_t;
typedef struct hn_nvmlUtilization_st hn_nvmlUtilization_t;
typedef struct hn_nvmlProcessInfo_st hn_nvmlProcessInfo_t;
typedef struct hn_nvmlProcessInfo_v1_st hn_nvmlProcessInfo_v1_t;
typedef struct hn_nvmlPciInfo_st hn_nvmlPciInfo_t;
#endif

/* Every NVML entry point hwrt uses: X(name, return type, parameter list). Entries whose
 * name ends in an "optional" marker below may be absent (older drivers). */
#define HN_NVML_FUNCS(X)                                                                     \
    X(nvmlInit_v2, hn_nvmlReturn_t, (void))                                                  \
    X(nvmlShutdown, hn_nvmlReturn_t, (void))                                                 \
    X(nvmlErrorString, const char *, (hn_nvmlReturn_t result))                               \
    X(nvmlSystemGetDriverVersion, hn_nvmlReturn_t, (char *version, unsigned int length))     \
    X(nvmlSystemGetCudaDriverVersion, hn_nvmlReturn_t, (int *cudaDriverVersion))             \
    X(nvmlDeviceGetCount_v2, hn_nvmlReturn_t, (unsigned int *deviceCount))                   \
    X(nvmlDeviceGetHandleByIndex_v2, hn_nvmlReturn_t, (unsigned int index,                  \
                                                       hn_nvmlDevice_t *device))             \
    X(nvmlDeviceGetName, hn_nvmlReturn_t, (hn_nvmlDevice_t device, char *name,               \
                                           unsigned int length))                             \
    X(nvmlDeviceGetPciInfo_v3, hn_nvmlReturn_t, (hn_nvmlDevice_t device,                     \
                                                 hn_nvmlPciInfo_t *pci))                     \
    X(nvmlDeviceGetMemoryInfo, hn_nvmlReturn_t, (hn_nvmlDevice_t device,                     \
                                                 hn_nvmlMemory_t *memory))                   \
    X(nvmlDeviceGetMemoryInfo_v2, hn_nvmlReturn_t, (hn_nvmlDevice_t device,                  \
                                                    hn_nvmlMemory_v2_t *memory))             \
    X(nvmlDeviceGetUtilizationRates, hn_nvmlReturn_t, (hn_nvmlDevice_t device,               \
                                                       hn_nvmlUtilization_t *utilization))   \
    X(nvmlDeviceGetComputeRunningProcesses_v3, hn_nvmlReturn_t,                              \
      (hn_nvmlDevice_t device, unsigned int *infoCount, hn_nvmlProcessInfo_t *infos))        \
    X(nvmlDeviceGetComputeRunningProcesses, hn_nvmlReturn_t,                                 \
      (hn_nvmlDevice_t device, unsigned int *infoCount, hn_nvmlProcessInfo_v1_t *infos))

/* Function pointer types: hn_<name>_fn. */
#define HN_NVML_TYPEDEF(name, ret, params) typedef ret (*hn_##name##_fn) params;
HN_NVML_FUNCS(HN_NVML_TYPEDEF)
#undef HN_NVML_TYPEDEF

/* The cuda backend's monitor slot: every NVIDIA device NVML sees (index, name, PCI bus id,
 * memory used/total, GPU utilisation), every compute process on each with its device
 * memory, and the driver version in out->driver. Processes that run hwrt on cuda also get
 * their pool's figures (reserved, allocated; overhead = NVML's figure - reserved) from
 * cuda_usage.c. UNAVAILABLE with the reason when NVML cannot be loaded or initialised. */
hwrt_status hwi_cuda_nvml_monitor(hwrt_smi_snapshot *out);

#endif
