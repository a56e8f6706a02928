/* Status names and the thread-local error sentence. */
#ifndef HWI_STATUS_H
#define HWI_STATUS_H

#include "hwrt.h"

/* Set the calling thread's error sentence and return st (so: return hwi_err(...)). */
hwrt_status hwi_err(hwrt_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prefix the current sentence with more context ("while X: <old sentence>"). */
hwrt_status hwi_err_prefix(hwrt_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void hwi_clear_error(void);

/* Human-readable byte count into buf ("1.50 GiB"); returns buf. */
const char *hwi_fmt_bytes(char *buf, size_t len, uint64_t bytes);

#define HWI_TRY(expr) do { hwrt_status hwi_st_ = (expr); if (hwi_st_ != HWRT_SUCCESS) return hwi_st_; } while (0)

#endif
