/* Loading CANN's runtime at run time, the per-device contexts, and translating ACL errors
 * into hwrt_status (the one place that does it).
 *
 * HWRT_ASCEND_LIBRARY overrides the library opened (default "libascendcl.so", found
 * through LD_LIBRARY_PATH as CANN's set_env.sh sets it), so a missing runtime, or a
 * library lacking the entry points, can be exercised without CANN. */
#include "ascend_internal.h"
#include "../../base/dynlib.h"
#include "../../base/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

hacl_api hacl;

static pthread_mutex_t ctx_mu = PTHREAD_MUTEX_INITIALIZER;   /* the contexts */
static hwi_dynlib_once once = HWI_DYNLIB_ONCE_INIT;
static int ndev;

#define ASC_MAX_ORDINALS 64
static hacl_context contexts[ASC_MAX_ORDINALS];   /* under ctx_mu; kept for the process */

uint64_t asc_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const hwi_dynsym rt_syms[] = {
#define ASC_SYM(slot, sym, ret, args, flags) {#sym, (void **)&hacl.slot, flags, NULL},
    HACL_RT_FUNCS(ASC_SYM, hacl_physical_mem_prop)
#undef ASC_SYM
};

static hwrt_status open_library(char *reason, size_t rlen)
{
    static const char *const names[] = {"libascendcl.so", NULL};
    const char *opened = NULL;
    char why[200];
    void *h = hwi_dynlib_open("HWRT_ASCEND_LIBRARY", names, &opened, why, sizeof why);
    if (!h) {
        snprintf(reason, rlen, "the Ascend runtime (libascendcl.so) could not be loaded: install "
                 "CANN and source its set_env.sh, or name it in HWRT_ASCEND_LIBRARY (%s)", why);
        return HWRT_ERROR_UNAVAILABLE;
    }
    const char *missing = hwi_dynlib_resolve(h, rt_syms, sizeof rt_syms / sizeof rt_syms[0]);
    if (missing) {
        snprintf(reason, rlen, "the Ascend runtime %s lacks %s (hwrt needs CANN 8.0 or newer's "
                 "libascendcl.so)", opened, missing);
        return HWRT_ERROR_UNAVAILABLE;
    }
    return HWRT_SUCCESS;
}

static hwrt_status init_runtime(char *reason, size_t rlen)
{
    char what[200];
    /* a repeat (another ACL user in the process initialized first) is success */
    hacl_error r = hacl.Init(NULL);
    if (r != HACL_SUCCESS && r != HACL_ERROR_REPEAT_INITIALIZE) {
        asc_describe(r, what, sizeof what);
        snprintf(reason, rlen, "aclInit failed: %s; check the driver (npu-smi info) and "
                 "CANN's environment (set_env.sh)", what);
        return HWRT_ERROR_UNAVAILABLE;
    }
    uint32_t n = 0;
    r = hacl.GetDeviceCount(&n);
    if (r != HACL_SUCCESS) {
        asc_describe(r, what, sizeof what);
        snprintf(reason, rlen, "aclrtGetDeviceCount failed: %s; check npu-smi info and "
                 "ASCEND_RT_VISIBLE_DEVICES", what);
        return HWRT_ERROR_UNAVAILABLE;
    }
    ndev = n > ASC_MAX_ORDINALS ? ASC_MAX_ORDINALS : (int)n;
    if (ndev == 0)
        snprintf(reason, rlen, "the Ascend runtime reports no device (npu-smi info; "
                 "ASCEND_RT_VISIBLE_DEVICES?)");
    return HWRT_SUCCESS;
}

hwrt_status asc_load(int *count, char *reason, size_t rlen)
{
    return hwi_dynlib_load_once(&once, open_library, init_runtime, &ndev, count, reason, rlen);
}

hwrt_status asc_context(int ordinal, hacl_context *ctx)
{
    int n = 0;
    char reason[256];
    if (asc_load(&n, reason, sizeof reason) != HWRT_SUCCESS)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "the ascend backend is unavailable: %s", reason);
    if (ordinal < 0 || ordinal >= n)
        return hwi_err(HWRT_ERROR_INVALID_DEVICE, "ascend device %d does not exist (%d device(s))",
                       ordinal, n);
    pthread_mutex_lock(&ctx_mu);
    hacl_error r = HACL_SUCCESS;
    if (!contexts[ordinal]) {
        /* creates the device's resources and makes the context current on this thread */
        hacl_context c = NULL;
        r = hacl.CreateContext(&c, ordinal);
        if (r == HACL_SUCCESS) contexts[ordinal] = c;
    }
    *ctx = contexts[ordinal];
    pthread_mutex_unlock(&ctx_mu);
    if (r != HACL_SUCCESS)
        return asc_err(NULL, r, "ascend device %d: aclrtCreateContext", ordinal);
    return asc_set_context(*ctx, ordinal);
}

/* The calling thread's current context. aclrtSetCurrentContext is not reference-counted
 * (aclrtSetDevice is, and hwrt never calls it), so it is called at every entry point
 * rather than skipped when a per-thread cache says the context is already current: the
 * cache would be stale after another ACL user on the thread (torch_npu, MindSpore)
 * switched contexts in between, and the call only sets ACL's thread-local pointer. */
hwrt_status asc_set_context(hacl_context ctx, int ordinal)
{
    hacl_error r = hacl.SetCurrentContext(ctx);
    if (r != HACL_SUCCESS)
        return asc_err(NULL, r, "ascend device %d: aclrtSetCurrentContext", ordinal);
    return HWRT_SUCCESS;
}

hwrt_status asc_thread_enter(hwrt_bdev *d)
{
    return asc_set_context(d->ctx, d->ordinal);
}

hwrt_status asc_enter(asc_dev *d)
{
    HWI_TRY(asc_dev_fault(d));
    return asc_thread_enter(d);
}

/* Names of the codes hwrt handles (acl_base_rt.h, rt_error_codes.h). */
static const char *own_name(hacl_error r)
{
    switch (r) {
#define N(c) case HACL_##c: return "ACL_" #c;
    N(SUCCESS) N(ERROR_INVALID_PARAM) N(ERROR_UNINITIALIZE) N(ERROR_REPEAT_INITIALIZE)
    N(ERROR_BAD_ALLOC) N(ERROR_API_NOT_SUPPORT) N(ERROR_INVALID_DEVICE)
    N(ERROR_FEATURE_UNSUPPORTED) N(ERROR_INTERNAL_ERROR) N(ERROR_FAILURE)
    N(ERROR_RT_PARAM_INVALID) N(ERROR_RT_INVALID_DEVICEID) N(ERROR_RT_CONTEXT_NULL)
    N(ERROR_RT_STREAM_CONTEXT) N(ERROR_RT_THREAD_SUBSCRIBE) N(ERROR_RT_FEATURE_NOT_SUPPORT)
    N(ERROR_RT_MEMORY_ALLOCATION) N(ERROR_RT_AICORE_OVER_FLOW) N(ERROR_RT_NO_DEVICE)
    N(ERROR_RT_NO_PERMISSION) N(ERROR_RT_NO_EVENT_RESOURCE) N(ERROR_RT_NO_STREAM_RESOURCE)
    N(ERROR_RT_AIVEC_OVER_FLOW) N(ERROR_RT_OVER_FLOW) N(ERROR_RT_DEVICE_OOM)
    N(ERROR_RT_INTERNAL_ERROR) N(ERROR_RT_STREAM_NOT_COMPLETE) N(ERROR_RT_EVENT_NOT_COMPLETE)
    N(ERROR_RT_LOST_HEARTBEAT) N(ERROR_RT_REPORT_TIMEOUT) N(ERROR_RT_AICORE_TIMEOUT)
    N(ERROR_RT_AICORE_EXCEPTION) N(ERROR_RT_DEV_SETUP_ERROR) N(ERROR_RT_VECTOR_CORE_TIMEOUT)
    N(ERROR_RT_VECTOR_CORE_EXCEPTION) N(ERROR_RT_STREAM_SYNC_TIMEOUT)
    N(ERROR_RT_EVENT_SYNC_TIMEOUT) N(ERROR_RT_DEVICE_MEM_ERROR)
    N(ERROR_RT_HBM_MULTI_BIT_ECC_ERROR) N(ERROR_RT_DRV_INTERNAL_ERROR)
#undef N
    default: return "an ACL error";
    }
}

void asc_describe(hacl_error r, char *buf, size_t len)
{
    /* the calling thread's recent message, NULL when there is none */
    const char *msg = hacl.GetRecentErrMsg ? hacl.GetRecentErrMsg() : NULL;
    snprintf(buf, len, "%s (%d)%s%.160s", own_name(r), r, msg && *msg ? ": " : "",
             msg && *msg ? msg : "");
}

int asc_sticky(hacl_error r)
{
    switch (r) {
    case HACL_ERROR_RT_AICORE_EXCEPTION:
    case HACL_ERROR_RT_AICORE_TIMEOUT:
    case HACL_ERROR_RT_VECTOR_CORE_EXCEPTION:
    case HACL_ERROR_RT_VECTOR_CORE_TIMEOUT:
    case HACL_ERROR_RT_LOST_HEARTBEAT:
    case HACL_ERROR_RT_DEVICE_MEM_ERROR:
    case HACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR:
        return 1;
    default:
        return 0;
    }
}

int asc_overflow(hacl_error r)
{
    return r == HACL_ERROR_RT_AICORE_OVER_FLOW || r == HACL_ERROR_RT_AIVEC_OVER_FLOW ||
           r == HACL_ERROR_RT_OVER_FLOW;
}

/* Invalid-parameter and context errors can only come from a bug in hwrt: the core
 * validates every user argument before a backend sees it. */
hwrt_status asc_translate(hacl_error r)
{
    if (r == HACL_SUCCESS) return HWRT_SUCCESS;
    if (asc_sticky(r)) return HWRT_ERROR_DEVICE_FAULT;
    switch (r) {
    case HACL_ERROR_RT_MEMORY_ALLOCATION:
    case HACL_ERROR_RT_DEVICE_OOM:
    case HACL_ERROR_BAD_ALLOC:
    case HACL_ERROR_RT_NO_EVENT_RESOURCE:
    case HACL_ERROR_RT_NO_STREAM_RESOURCE: return HWRT_ERROR_OUT_OF_MEMORY;
    case HACL_ERROR_RT_NO_DEVICE:
    case HACL_ERROR_RT_DEV_SETUP_ERROR:
    case HACL_ERROR_UNINITIALIZE: return HWRT_ERROR_UNAVAILABLE;
    case HACL_ERROR_INVALID_DEVICE:
    case HACL_ERROR_RT_INVALID_DEVICEID: return HWRT_ERROR_INVALID_DEVICE;
    case HACL_ERROR_RT_FEATURE_NOT_SUPPORT:
    case HACL_ERROR_API_NOT_SUPPORT:
    case HACL_ERROR_FEATURE_UNSUPPORTED: return HWRT_ERROR_NOT_SUPPORTED;
    case HACL_ERROR_RT_NO_PERMISSION: return HWRT_ERROR_NOT_PERMITTED;
    case HACL_ERROR_RT_STREAM_NOT_COMPLETE:
    case HACL_ERROR_RT_EVENT_NOT_COMPLETE: return HWRT_ERROR_NOT_READY;
    case HACL_ERROR_RT_STREAM_SYNC_TIMEOUT:
    case HACL_ERROR_RT_EVENT_SYNC_TIMEOUT: return HWRT_ERROR_DEVICE_FAULT;
    default: return HWRT_ERROR_INTERNAL;
    }
}

hwrt_status asc_dev_fault(asc_dev *d)
{
    char msg[256];
    hwrt_status st = hwi_fault_read(&d->fault, msg, sizeof msg);
    if (st == HWRT_SUCCESS)
        return HWRT_SUCCESS;
    return hwi_err(st, "ascend device %d has a sticky fault: %s; call "
                   "hwrt_device_reset(%d) to try to recover it, or start a new process (work "
                   "queued after the fault was not run)", d->ordinal, msg, d->ordinal);
}

hwrt_status asc_err(asc_dev *d, hacl_error r, const char *fmt, ...)
{
    char what[384], desc[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    asc_describe(r, desc, sizeof desc);
    if (d && asc_sticky(r)) {
        hwi_fault_record(&d->fault, desc, what);
        return asc_dev_fault(d);
    }
    hwrt_status st = asc_translate(r);
    const char *hint = st == HWRT_ERROR_OUT_OF_MEMORY ? "; free device memory or allocate less"
                       : st == HWRT_ERROR_INTERNAL   ? "; this is a bug in hwrt's ascend backend"
                                                     : "";
    return hwi_err(st, "%s: %s%s", what, desc, hint);
}
