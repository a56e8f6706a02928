/* Shared bits of the troubleshooting repros (docs/troubleshooting.md): a CHECK macro
 * that prints hwrt's sentence, and MiB formatting. Each repro prints
 *   symptom: ...   (what the user sees)
 *   hwrt: ...      (what hwrt reports)
 *   diagnosis: ... (the cause, established from hwrt's figures or errors)
 *   fix: ...       (the fix, applied, and its result)
 * and exits 0 once the diagnosis was established. */
#ifndef TS_COMMON_H
#define TS_COMMON_H

#include <hwrt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(call)                                                                  \
    do {                                                                             \
        hwrt_status st_ = (call);                                                    \
        if (st_ != HWRT_SUCCESS) {                                                   \
            fprintf(stderr, "%s failed: %s: %s\n", #call, hwrt_status_name(st_),     \
                    hwrt_last_error());                                              \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

static inline double ts_mib(size_t bytes) { return (double)bytes / (1024.0 * 1024.0); }

/* A private sim registry, so that other processes on this machine do not show up in
 * the device-wide figures of the repro (call before the first hwrt call). */
static inline void ts_private_registry(void)
{
    char name[64];
    snprintf(name, sizeof name, "/hwrt-ts-%d", (int)getpid());
    setenv("HWRT_SIM_REGISTRY", name, 0);
}

#endif
