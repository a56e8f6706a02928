/* Loading the OpenCL ICD loader at run time, enumerating devices across platforms, and
 * translating CL error codes into hwrt_status (the one place that does it).
 *
 * HWRT_OPENCL_LIBRARY overrides the library opened (default "libOpenCL.so.1"), so a
 * missing driver can be exercised without uninstalling anything. */
#include "ocl.h"
#include "../../base/dynlib.h"
#include "../../base/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

ocl_api ocl;

static hwi_dynlib_once once = HWI_DYNLIB_ONCE_INIT;
static int ndev;
static cl_platform_id dev_plat[OCL_MAX_DEVICES];
static cl_device_id dev_id[OCL_MAX_DEVICES];

uint64_t ocl_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static hwrt_status open_library(char *reason, size_t rlen)
{
    static const char *const names[] = {"libOpenCL.so.1", NULL};
    const char *path = names[0];
    char why[320];
    void *h = hwi_dynlib_open("HWRT_OPENCL_LIBRARY", names, &path, why, sizeof why);
    if (!h) {
        snprintf(reason, rlen, "the OpenCL ICD loader could not be loaded: %s; install "
                 "ocl-icd-libopencl1 and a driver such as pocl-opencl-icd", why);
        return HWRT_ERROR_UNAVAILABLE;
    }
    static const hwi_dynsym syms[] = {
#define OCL_SYM(n) {"cl" #n, (void **)&ocl.n, 0, NULL},
        OCL_FUNCS(OCL_SYM)
#undef OCL_SYM
    };
    const char *missing = hwi_dynlib_resolve(h, syms, sizeof syms / sizeof syms[0]);
    if (missing) {
        snprintf(reason, rlen, "the OpenCL library %s lacks %s (OpenCL 1.2 is required)", path,
                 missing);
        return HWRT_ERROR_UNAVAILABLE;
    }
    return HWRT_SUCCESS;
}

static hwrt_status enumerate(char *reason, size_t rlen)
{
    cl_platform_id plats[16];
    cl_uint np = 0;
    cl_int e = ocl.GetPlatformIDs(16, plats, &np);
    if (e == CL_PLATFORM_NOT_FOUND_KHR || (e == CL_SUCCESS && np == 0)) {
        snprintf(reason, rlen, "the OpenCL ICD loader found no platform (%s): no vendor driver "
                 "is registered in /etc/OpenCL/vendors (or OCL_ICD_VENDORS); install "
                 "pocl-opencl-icd or a GPU driver", ocl_error_name(e == CL_SUCCESS ? -1001 : e));
        return HWRT_ERROR_UNAVAILABLE;
    }
    if (e != CL_SUCCESS) {
        snprintf(reason, rlen, "clGetPlatformIDs failed: %s (%d)", ocl_error_name(e), e);
        return HWRT_ERROR_UNAVAILABLE;
    }
    ndev = 0;
    for (cl_uint p = 0; p < np && p < 16; p++) {
        cl_device_id ids[OCL_MAX_DEVICES];
        cl_uint nd = 0;
        e = ocl.GetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, OCL_MAX_DEVICES, ids, &nd);
        if (e == CL_DEVICE_NOT_FOUND) continue;       /* a platform without devices */
        if (e != CL_SUCCESS) continue;
        for (cl_uint i = 0; i < nd && ndev < OCL_MAX_DEVICES; i++) {
            dev_plat[ndev] = plats[p];
            dev_id[ndev++] = ids[i];
        }
    }
    if (ndev == 0)
        snprintf(reason, rlen, "%u OpenCL platform(s) found but none has a device", np);
    return HWRT_SUCCESS;
}

hwrt_status ocl_load(int *count, char *reason, size_t rlen)
{
    return hwi_dynlib_load_once(&once, open_library, enumerate, &ndev, count, reason, rlen);
}

void ocl_device_ids(int ordinal, cl_platform_id *plat, cl_device_id *dev)
{
    *plat = dev_plat[ordinal];
    *dev = dev_id[ordinal];
}

const char *ocl_error_name(cl_int code)
{
    switch (code) {
#define N(c) case c: return #c;
    N(CL_SUCCESS) N(CL_DEVICE_NOT_FOUND) N(CL_DEVICE_NOT_AVAILABLE) N(CL_COMPILER_NOT_AVAILABLE)
    N(CL_MEM_OBJECT_ALLOCATION_FAILURE) N(CL_OUT_OF_RESOURCES) N(CL_OUT_OF_HOST_MEMORY)
    N(CL_PROFILING_INFO_NOT_AVAILABLE) N(CL_MEM_COPY_OVERLAP) N(CL_IMAGE_FORMAT_MISMATCH)
    N(CL_IMAGE_FORMAT_NOT_SUPPORTED) N(CL_BUILD_PROGRAM_FAILURE) N(CL_MAP_FAILURE)
    N(CL_MISALIGNED_SUB_BUFFER_OFFSET) N(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    N(CL_COMPILE_PROGRAM_FAILURE) N(CL_LINKER_NOT_AVAILABLE) N(CL_LINK_PROGRAM_FAILURE)
    N(CL_DEVICE_PARTITION_FAILED) N(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) N(CL_INVALID_VALUE)
    N(CL_INVALID_DEVICE_TYPE) N(CL_INVALID_PLATFORM) N(CL_INVALID_DEVICE) N(CL_INVALID_CONTEXT)
    N(CL_INVALID_QUEUE_PROPERTIES) N(CL_INVALID_COMMAND_QUEUE) N(CL_INVALID_HOST_PTR)
    N(CL_INVALID_MEM_OBJECT) N(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) N(CL_INVALID_IMAGE_SIZE)
    N(CL_INVALID_SAMPLER) N(CL_INVALID_BINARY) N(CL_INVALID_BUILD_OPTIONS)
    N(CL_INVALID_PROGRAM) N(CL_INVALID_PROGRAM_EXECUTABLE) N(CL_INVALID_KERNEL_NAME)
    N(CL_INVALID_KERNEL_DEFINITION) N(CL_INVALID_KERNEL) N(CL_INVALID_ARG_INDEX)
    N(CL_INVALID_ARG_VALUE) N(CL_INVALID_ARG_SIZE) N(CL_INVALID_KERNEL_ARGS)
    N(CL_INVALID_WORK_DIMENSION) N(CL_INVALID_WORK_GROUP_SIZE) N(CL_INVALID_WORK_ITEM_SIZE)
    N(CL_INVALID_GLOBAL_OFFSET) N(CL_INVALID_EVENT_WAIT_LIST) N(CL_INVALID_EVENT)
    N(CL_INVALID_OPERATION) N(CL_INVALID_GL_OBJECT) N(CL_INVALID_BUFFER_SIZE)
    N(CL_INVALID_MIP_LEVEL) N(CL_INVALID_GLOBAL_WORK_SIZE) N(CL_INVALID_PROPERTY)
    N(CL_INVALID_IMAGE_DESCRIPTOR) N(CL_INVALID_COMPILER_OPTIONS) N(CL_INVALID_LINKER_OPTIONS)
    N(CL_INVALID_DEVICE_PARTITION_COUNT) N(CL_PLATFORM_NOT_FOUND_KHR)
#undef N
    default: return "an unknown OpenCL error";
    }
}

/* Which hwrt_status a CL error means. CL_INVALID_* codes can only come from a hwrt bug:
 * the core validates every user argument before a backend sees it. */
static hwrt_status translate(cl_int code)
{
    switch (code) {
    case CL_SUCCESS: return HWRT_SUCCESS;
    case CL_OUT_OF_HOST_MEMORY: return HWRT_ERROR_HOST_OUT_OF_MEMORY;
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_RESOURCES:
    case CL_INVALID_BUFFER_SIZE: return HWRT_ERROR_OUT_OF_MEMORY;
    case CL_DEVICE_NOT_FOUND:
    case CL_DEVICE_NOT_AVAILABLE:
    case CL_COMPILER_NOT_AVAILABLE:
    case CL_PLATFORM_NOT_FOUND_KHR: return HWRT_ERROR_UNAVAILABLE;
    case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST: return HWRT_ERROR_DEVICE_FAULT;
    case CL_PROFILING_INFO_NOT_AVAILABLE: return HWRT_ERROR_NOT_SUPPORTED;
    default: return code > 0 ? HWRT_ERROR_DEVICE_FAULT : HWRT_ERROR_INTERNAL;
    }
}

hwrt_status ocl_err(cl_int code, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    hwrt_status st = translate(code);
    const char *hint = st == HWRT_ERROR_OUT_OF_MEMORY ? "; free device memory or allocate less"
                       : st == HWRT_ERROR_INTERNAL   ? "; this is a bug in hwrt's OpenCL backend"
                                                     : "";
    return hwi_err(st, "%s: OpenCL error %s (%d)%s", what, ocl_error_name(code), (int)code, hint);
}
