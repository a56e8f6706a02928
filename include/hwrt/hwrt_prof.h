/* hwrt public API — profiling. Include <hwrt.h>, not this file.
 *
 * The profiler records, at the single dispatch point every piece of device work passes:
 *  - host spans of API calls: each launch (from entry to return, so a pageable copy's
 *    blocking is included) and each host-blocking synchronize (time blocked in it);
 *  - device execution per engine and stream with device timestamps: kernels by name,
 *    Memcpy HtoD/DtoH/DtoD with bytes and pinned/pageable host side, Memset, host
 *    functions, event waits;
 *  - device memory allocations and frees with the pool's allocated/reserved figures;
 *  - offload evictions/fetches/stalls and collectives, reported by those subsystems.
 * Records go to per-thread buffers (no lock shared between threads on the launch path)
 * and are written as raw text files under <output_dir>/raw/ when the session stops,
 * at hwrt_shutdown() and at process exit. `hwrt-prof --export=on --output=<dir>` turns
 * them into trace.json (Chrome Trace Event Format, loads in Perfetto), msprof-style
 * CSV files and report.html; `hwrt-prof --analyze=op --output=<dir>` prints an op table
 * and a verdict. See docs/profiling.md.
 *
 * Zero-code-change collection: with HWRT_PROFILE=<dir> in the environment, a session
 * starts when libhwrt is loaded and is written at hwrt_shutdown() and at exit
 * (`hwrt-prof --application="./app args" --output=<dir>` sets it for you).
 * HWRT_PROFILE_MAX_EVENTS caps the records kept in memory (default 4000000, about
 * 64 bytes each); records beyond the cap are counted as dropped, never silently lost.
 */
#ifndef HWRT_PROF_H
#define HWRT_PROF_H

#include "hwrt_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Start a profiling session writing to output_dir (created, with parents, if missing).
 * Not blocking. Errors: INVALID_ARGUMENT (NULL or empty dir), IO (the directory cannot
 * be created or written; the sentence names the path and the reason), NOT_PERMITTED (a
 * session is already running, e.g. one started by HWRT_PROFILE; the sentence names its
 * directory). Thread-safe. */
HWRT_API hwrt_status hwrt_profiler_start(const char *output_dir);

/* Stop the running session: waits (up to 10 s) for the device timestamps of work
 * already queued, then writes <output_dir>/raw/prof_<pid>_<n>.tsv. Blocking.
 * Errors: NOT_PERMITTED (no session is running), IO (the file could not be written).
 * Thread-safe. */
HWRT_API hwrt_status hwrt_profiler_stop(void);

/* Counters of the running (or the last stopped) session. */
typedef struct hwrt_profiler_stats {
    int running;                 /* 1 while a session is running */
    uint64_t events;             /* records kept (launches, syncs, memory, offload, ...) */
    uint64_t dropped;            /* records not kept: HWRT_PROFILE_MAX_EVENTS reached, or no
                                    host memory for a thread's buffer or a chunk */
    uint64_t device_ts_missing;  /* launches kept without a device timestamp */
    uint64_t threads;            /* host threads that recorded */
    char output_dir[512];
} hwrt_profiler_stats;

/* Fill *out (INVALID_ARGUMENT when out is NULL). Not blocking; thread-safe. */
HWRT_API hwrt_status hwrt_profiler_get_stats(hwrt_profiler_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* HWRT_PROF_H */
