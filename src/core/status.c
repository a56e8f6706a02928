/* Status names and the thread-local error sentence. The library never prints an error by
 * itself; the sentence waits here for hwrt_last_error(). */
#include "status.h"
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define HWI_ERR_LEN 1024

static _Thread_local char tls_error[HWI_ERR_LEN];

static const char *const names[] = {
    [HWRT_SUCCESS] = "HWRT_SUCCESS",
    [HWRT_ERROR_INVALID_ARGUMENT] = "HWRT_ERROR_INVALID_ARGUMENT",
    [HWRT_ERROR_INVALID_DEVICE] = "HWRT_ERROR_INVALID_DEVICE",
    [HWRT_ERROR_NO_DEVICE] = "HWRT_ERROR_NO_DEVICE",
    [HWRT_ERROR_UNAVAILABLE] = "HWRT_ERROR_UNAVAILABLE",
    [HWRT_ERROR_OUT_OF_MEMORY] = "HWRT_ERROR_OUT_OF_MEMORY",
    [HWRT_ERROR_HOST_OUT_OF_MEMORY] = "HWRT_ERROR_HOST_OUT_OF_MEMORY",
    [HWRT_ERROR_NOT_READY] = "HWRT_ERROR_NOT_READY",
    [HWRT_ERROR_INVALID_HANDLE] = "HWRT_ERROR_INVALID_HANDLE",
    [HWRT_ERROR_NOT_SUPPORTED] = "HWRT_ERROR_NOT_SUPPORTED",
    [HWRT_ERROR_NOT_PERMITTED] = "HWRT_ERROR_NOT_PERMITTED",
    [HWRT_ERROR_DEVICE_BUSY] = "HWRT_ERROR_DEVICE_BUSY",
    [HWRT_ERROR_DEVICE_FAULT] = "HWRT_ERROR_DEVICE_FAULT",
    [HWRT_ERROR_DIST] = "HWRT_ERROR_DIST",
    [HWRT_ERROR_IO] = "HWRT_ERROR_IO",
    [HWRT_ERROR_INTERNAL] = "HWRT_ERROR_INTERNAL",
};

const char *hwrt_status_name(hwrt_status st)
{
    if ((unsigned)st < sizeof names / sizeof names[0] && names[st])
        return names[st];
    return "HWRT_STATUS_UNKNOWN";
}

const char *hwrt_last_error(void) { return tls_error; }

void hwi_clear_error(void) { tls_error[0] = 0; }

hwrt_status hwi_err(hwrt_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tls_error, sizeof tls_error, fmt, ap);
    va_end(ap);
    hwi_log(HWI_LOG_DEBUG, "%s: %s", hwrt_status_name(st), tls_error);
    return st;
}

hwrt_status hwi_err_prefix(hwrt_status st, const char *fmt, ...)
{
    char prefix[HWI_ERR_LEN], old[HWI_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, tls_error, sizeof old);
    snprintf(tls_error, sizeof tls_error, "%s: %s", prefix, old);
    return st;
}

const char *hwi_fmt_bytes(char *buf, size_t len, uint64_t b)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024.0 && u < 4) { v /= 1024.0; u++; }
    if (u == 0) snprintf(buf, len, "%llu B", (unsigned long long)b);
    else snprintf(buf, len, "%.2f %s", v, unit[u]);
    return buf;
}
