/* Loading the CUDA driver at run time, counting devices, and translating CUDA errors
 * into hwrt_status (the one place that does it).
 *
 * HWRT_CUDA_LIBRARY overrides the library opened (default "libcuda.so.1"), so a missing
 * driver, or the toolkit's stub library (lib64/stubs/libcuda.so, whose cuInit returns
 * CUDA_ERROR_STUB_LIBRARY), can be exercised without touching the machine's driver. */
#include "cuda_internal.h"
#include "../../base/dynlib.h"
#include "../../base/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

hcu_api hcu;
_Atomic int cu_faulted;

static hwi_dynlib_once once = HWI_DYNLIB_ONCE_INIT;
static int ndev;

uint64_t cu_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const char *lib_name = "libcuda.so.1";   /* the library opened, for reasons */

static hwrt_status open_library(char *reason, size_t rlen)
{
    static const char *const names[] = {"libcuda.so.1", NULL};
    char why[320];
    void *h = hwi_dynlib_open("HWRT_CUDA_LIBRARY", names, &lib_name, why, sizeof why);
    if (!h) {
        snprintf(reason, rlen, "the CUDA driver could not be loaded: install the NVIDIA driver "
                 "(libcuda.so.1) or name it in HWRT_CUDA_LIBRARY (%s)", why);
        return HWRT_ERROR_UNAVAILABLE;
    }
    const char *missing = hcu_resolve(h, &hcu);
    if (missing) {
        snprintf(reason, rlen, "the CUDA driver %s lacks %s (hwrt needs a CUDA 12 driver or "
                 "newer)", lib_name, missing);
        return HWRT_ERROR_UNAVAILABLE;
    }
    return HWRT_SUCCESS;
}

static hwrt_status init_driver(char *reason, size_t rlen)
{
    const char *path = lib_name;
    hcu_result r = hcu.Init(0);
    char what[160];
    if (r == HCU_ERROR_STUB_LIBRARY) {
        cu_describe(r, what, sizeof what);
        snprintf(reason, rlen, "%s is the CUDA toolkit's stub library, not a driver (cuInit: "
                 "%s); install the NVIDIA driver and keep lib64/stubs off the loader path", path,
                 what);
        return HWRT_ERROR_UNAVAILABLE;
    }
    if (r == HCU_ERROR_NO_DEVICE) {
        snprintf(reason, rlen, "the CUDA driver found no device (cuInit: CUDA_ERROR_NO_DEVICE); "
                 "check nvidia-smi and CUDA_VISIBLE_DEVICES");
        return HWRT_ERROR_UNAVAILABLE;
    }
    if (r != HCU_SUCCESS) {
        cu_describe(r, what, sizeof what);
        snprintf(reason, rlen, "cuInit failed: %s", what);
        return HWRT_ERROR_UNAVAILABLE;
    }
    r = hcu.DeviceGetCount(&ndev);
    if (r != HCU_SUCCESS) {
        cu_describe(r, what, sizeof what);
        snprintf(reason, rlen, "cuDeviceGetCount failed: %s", what);
        return HWRT_ERROR_UNAVAILABLE;
    }
    if (ndev == 0)
        snprintf(reason, rlen, "the CUDA driver reports no device (CUDA_VISIBLE_DEVICES?)");
    return HWRT_SUCCESS;
}

hwrt_status cu_load(int *count, char *reason, size_t rlen)
{
    return hwi_dynlib_load_once(&once, open_library, init_driver, &ndev, count, reason, rlen);
}

/* Names of the codes hwrt handles, for when the driver cannot name them (the stub
 * library's cuGetErrorName fails like every other call). */
static const char *own_name(hcu_result r)
{
    switch (r) {
#define N(c) case HCU_##c: return "CUDA_" #c;
    N(SUCCESS) N(ERROR_INVALID_VALUE) N(ERROR_OUT_OF_MEMORY) N(ERROR_NOT_INITIALIZED)
    N(ERROR_DEINITIALIZED) N(ERROR_STUB_LIBRARY) N(ERROR_NO_DEVICE) N(ERROR_INVALID_DEVICE)
    N(ERROR_DEVICE_NOT_LICENSED) N(ERROR_INVALID_IMAGE) N(ERROR_INVALID_CONTEXT)
    N(ERROR_NO_BINARY_FOR_GPU) N(ERROR_ECC_UNCORRECTABLE) N(ERROR_INVALID_PTX)
    N(ERROR_UNSUPPORTED_PTX_VERSION) N(ERROR_INVALID_HANDLE) N(ERROR_NOT_FOUND)
    N(ERROR_NOT_READY) N(ERROR_ILLEGAL_ADDRESS) N(ERROR_LAUNCH_OUT_OF_RESOURCES)
    N(ERROR_LAUNCH_TIMEOUT) N(ERROR_HARDWARE_STACK_ERROR) N(ERROR_ILLEGAL_INSTRUCTION)
    N(ERROR_MISALIGNED_ADDRESS) N(ERROR_INVALID_ADDRESS_SPACE) N(ERROR_INVALID_PC)
    N(ERROR_LAUNCH_FAILED) N(ERROR_NOT_PERMITTED) N(ERROR_NOT_SUPPORTED)
    N(ERROR_SYSTEM_DRIVER_MISMATCH) N(ERROR_UNKNOWN)
#undef N
    default: return "an unknown CUDA error";
    }
}

void cu_describe(hcu_result r, char *buf, size_t len)
{
    const char *name = NULL, *text = NULL;
    if (hcu.GetErrorName && hcu.GetErrorName(r, &name) != HCU_SUCCESS) name = NULL;
    if (hcu.GetErrorString && hcu.GetErrorString(r, &text) != HCU_SUCCESS) text = NULL;
    snprintf(buf, len, "%s (%u)%s%s", name ? name : own_name(r), r, text ? ": " : "",
             text ? text : "");
}

int cu_sticky(hcu_result r)
{
    switch (r) {
    case HCU_ERROR_ILLEGAL_ADDRESS:
    case HCU_ERROR_LAUNCH_TIMEOUT:
    case HCU_ERROR_HARDWARE_STACK_ERROR:
    case HCU_ERROR_ILLEGAL_INSTRUCTION:
    case HCU_ERROR_MISALIGNED_ADDRESS:
    case HCU_ERROR_INVALID_ADDRESS_SPACE:
    case HCU_ERROR_INVALID_PC:
    case HCU_ERROR_LAUNCH_FAILED:
    case HCU_ERROR_ECC_UNCORRECTABLE:
        return 1;
    default:
        return 0;
    }
}

/* Which hwrt_status a CUDA error means. Invalid-argument errors can only come from a bug
 * in hwrt: the core validates every user argument before a backend sees it. */
static hwrt_status translate(hcu_result r)
{
    if (cu_sticky(r)) return HWRT_ERROR_DEVICE_FAULT;
    switch (r) {
    case HCU_SUCCESS: return HWRT_SUCCESS;
    case HCU_ERROR_OUT_OF_MEMORY: return HWRT_ERROR_OUT_OF_MEMORY;
    case HCU_ERROR_NOT_READY: return HWRT_ERROR_NOT_READY;
    case HCU_ERROR_NOT_SUPPORTED: return HWRT_ERROR_NOT_SUPPORTED;
    case HCU_ERROR_NOT_PERMITTED: return HWRT_ERROR_NOT_PERMITTED;
    case HCU_ERROR_NO_DEVICE:
    case HCU_ERROR_STUB_LIBRARY:
    case HCU_ERROR_NOT_INITIALIZED:
    case HCU_ERROR_DEINITIALIZED:
    case HCU_ERROR_SYSTEM_DRIVER_MISMATCH:
    case HCU_ERROR_DEVICE_NOT_LICENSED:
    case HCU_ERROR_NO_BINARY_FOR_GPU:
    case HCU_ERROR_UNSUPPORTED_PTX_VERSION: return HWRT_ERROR_UNAVAILABLE;
    case HCU_ERROR_INVALID_DEVICE: return HWRT_ERROR_INVALID_DEVICE;
    case HCU_ERROR_LAUNCH_OUT_OF_RESOURCES: return HWRT_ERROR_OUT_OF_MEMORY;
    default: return HWRT_ERROR_INTERNAL;
    }
}

hwrt_status cu_dev_fault(cu_dev *d)
{
    char msg[256];
    hwrt_status st = hwi_fault_read(&d->fault, msg, sizeof msg);
    if (st == HWRT_SUCCESS)
        return HWRT_SUCCESS;
    return hwi_err(st, "cuda device %d has a sticky fault: %s; CUDA cannot "
                   "clear it: the process must exit and a new one start (work queued after the "
                   "fault was not run)", d->ordinal, msg);
}

hwrt_status cu_err(cu_dev *d, hcu_result r, const char *fmt, ...)
{
    char what[384], desc[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    cu_describe(r, desc, sizeof desc);
    if (d && cu_sticky(r)) {
        if (hwi_fault_record(&d->fault, desc, what))
            atomic_store(&cu_faulted, 1);
        return cu_dev_fault(d);
    }
    hwrt_status st = translate(r);
    const char *hint = st == HWRT_ERROR_OUT_OF_MEMORY ? "; free device memory or allocate less"
                       : st == HWRT_ERROR_INTERNAL   ? "; this is a bug in hwrt's CUDA backend"
                                                     : "";
    return hwi_err(st, "%s: %s%s", what, desc, hint);
}

hwrt_status cu_enter(cu_dev *d)
{
    HWI_TRY(cu_dev_fault(d));
    hcu_result r = hcu.CtxSetCurrent(d->ctx);
    if (r != HCU_SUCCESS)
        return cu_err(d, r, "cuda device %d: cuCtxSetCurrent", d->ordinal);
    return HWRT_SUCCESS;
}
