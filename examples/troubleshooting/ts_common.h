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
#include "../example_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>


static inline double ts_mib(size_t bytes) { return (double)bytes / (1024.0 * 1024.0); }

/* A private sim registry, so that other processes on this machine do not show up in
 * the device-wide figures of the repro (call before the first hwrt call; a registry
 * already chosen by the environment, e.g. by CTest, is kept). ts_registry_cleanup
 * removes the private one at exit. */
static char ts_registry[64];

static inline void ts_registry_cleanup(void)
{
    if (ts_registry[0]) shm_unlink(ts_registry);
}

static inline void ts_private_registry(void)
{
    if (getenv("HWRT_SIM_REGISTRY")) return;
    snprintf(ts_registry, sizeof ts_registry, "/hwrt-ts-%d", (int)getpid());
    setenv("HWRT_SIM_REGISTRY", ts_registry, 1);
    atexit(ts_registry_cleanup);
}

#endif
