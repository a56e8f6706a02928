/* What the raw-driver baselines share (hwrt-cuda-baseline, hwrt-ascend-baseline): the
 * command line (--quick), the timing (medians of repeated calls, a warm-up first) and the
 * JSON document's rows, so that the two tools measure and print in one way and differ
 * only in the driver calls they time:
 *
 *   {"device":"<name>","copy":[{"kind":"H2D"|"D2H","host":"pinned"|"pageable",
 *     "bytes":N,"repeats":R,"gbps_median":G},...],
 *    "launch_sync_us_median":U,"alloc":[{"size":"512B"|"1MiB"|"16MiB","<pair>_ns":T,...}]}
 *
 * The driver calls run behind a function pointer: one indirect call (a few ns) per timed
 * call, against copies of microseconds and more. */
#ifndef HWRT_TOOL_BASELINE_H
#define HWRT_TOOL_BASELINE_H

#include "cli.h"

#include <stddef.h>

/* Exit code of a tool that finds no usable driver or device (scripts/device-check.sh). */
enum { BASELINE_NO_DRIVER = 3 };

/* Parses argv (--quick, --help, --version) for a tool named `name`. Returns -1 to go on
 * (*quick set), else the exit code to return (--help, bad usage). */
int baseline_cli(const char *name, const char *about, int argc, char **argv, int *quick);

/* Median, over reps calls (after warm uncounted ones), of the seconds one call of fn(ctx)
 * takes on clock clk (CLOCK_MONOTONIC: wall time; CLOCK_THREAD_CPUTIME_ID: CPU time). */
double baseline_median_s(int clk, int warm, int reps, void (*fn)(void *ctx), void *ctx);

/* The copy sizes of a run: the largest one, for the buffers the copies use. */
size_t baseline_copy_max_bytes(int quick);

/* One copy of n bytes, complete on return: dir 0 host to device, 1 device to host; from
 * or into page-locked (pinned != 0) or pageable host memory. Exits on a driver error. */
typedef void (*baseline_copy_fn)(void *ctx, int dir, int pinned, size_t n);

/* Prints `"copy":[...],`: every size, both directions, pinned then pageable. */
void baseline_print_copies(int quick, baseline_copy_fn copy, void *ctx);

/* Prints `"launch_sync_us_median":U,`: the median of one launch + stream synchronize. */
void baseline_print_launch(int quick, void (*launch_sync)(void *ctx), void *ctx);

/* An allocation pair (allocate then free `bytes`) of the alloc rows, by its JSON key. */
typedef struct baseline_pair {
    const char *key;                               /* "cuMemAlloc_free_ns" */
    void (*run)(void *ctx, size_t bytes);
} baseline_pair;

/* Prints `"alloc":[...]`: per size, each pair's median thread CPU ns; after each pair's
 * run, done(ctx) if not NULL (a stream synchronize for stream-ordered frees). */
void baseline_print_allocs(int quick, const baseline_pair *pairs, int npairs,
                           void (*done)(void *ctx), void *ctx);

#endif
