/* Status names and the thread-local error sentence. The library never prints an error by
 * itself; the sentence waits here for hwrt_last_error(). */
#include "status.h"
#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HWI_ERR_LEN 1024

/* The sentence lives on the heap, one buffer per thread made at its first error: libhwrt
 * has initial-exec thread-locals (the hot paths'), which puts its whole TLS block in the
 * static TLS that a dlopen (Python's import) must find room for, so it stays small. */
static _Thread_local char *tls_error;
static pthread_key_t err_key;
static pthread_once_t err_once = PTHREAD_ONCE_INIT;

static void err_free(void *buf)
{
    tls_error = NULL;                     /* runs on the exiting thread itself */
    free(buf);
}

static void err_make_key(void) { pthread_key_create(&err_key, err_free); }

/* The calling thread's buffer, made on first use; NULL when the host is out of memory. */
static char *err_buf(void)
{
    if (tls_error) return tls_error;
    pthread_once(&err_once, err_make_key);
    char *b = calloc(1, HWI_ERR_LEN);
    if (!b) return NULL;
    tls_error = b;
    pthread_setspecific(err_key, b);
    return b;
}

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

/* A thread whose first error came while the host was out of memory has no buffer for
 * the sentence: it gets this one, so that no failure reads as "" (found by
 * tests/unit/test_cov_oom, issue 25). */
static _Thread_local const char *tls_no_buffer;
static const char no_buffer_msg[] =
    "the host is out of memory: this error's sentence could not be stored (the status "
    "code says what failed); free host memory and retry";

const char *hwrt_last_error(void)
{
    return tls_error ? tls_error : tls_no_buffer ? tls_no_buffer : "";
}

void hwi_clear_error(void)
{
    if (tls_error) tls_error[0] = 0;
    tls_no_buffer = NULL;
}

hwrt_status hwi_err(hwrt_status st, const char *fmt, ...)
{
    char *b = err_buf();
    if (!b) {
        tls_no_buffer = no_buffer_msg;
        return st;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, HWI_ERR_LEN, fmt, ap);
    va_end(ap);
    hwi_log(HWI_LOG_DEBUG, "%s: %s", hwrt_status_name(st), b);
    return st;
}

hwrt_status hwi_err_prefix(hwrt_status st, const char *fmt, ...)
{
    char *b = err_buf();
    if (!b) {
        tls_no_buffer = no_buffer_msg;
        return st;
    }
    char prefix[HWI_ERR_LEN], old[HWI_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, b, sizeof old);
    snprintf(b, HWI_ERR_LEN, "%s: %s", prefix, old);
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
