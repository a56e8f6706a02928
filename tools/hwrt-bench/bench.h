/* hwrt-bench internals: timing, medians and a two-thread memcpy baseline helper; JSON
 * goes through the shared writer (src/base/json.h). Every figure a subcommand prints is a median of repeats and is shown next
 * to a baseline measured in the same run (docs/performance.md). */
#ifndef HWRT_BENCH_H
#define HWRT_BENCH_H

#include <hwrt.h>

#include <stdint.h>
#include <stdio.h>
#include "bench_stats.h"   /* bench_median */
#include "base/json.h"

typedef struct bench_opts {
    int json;                 /* --json: machine-readable output on stdout */
    size_t max_bytes;         /* copy: largest size (default 512 MiB) */
    int quick;                /* --quick: fewer repeats (smoke runs) */
    const char *backend;      /* --backend NAME (default "auto") */
    int quiet;                /* --quiet: no progress line on stderr */
} bench_opts;

double bench_now_s(void);
/* Abort the benchmark (exit 1) with the hwrt error sentence when a call fails; `what`
 * names the step in words ("allocating the copy buffers"). */
void bench_check(hwrt_status st, const char *what);
#define BCHECK(call) bench_check((call), "an hwrt call failed")

/* Two-thread memcpy baseline: a helper thread copies the second half while the caller
 * copies the first. The helper spins briefly, then sleeps, between jobs. */
void bench_memcpy2_start(void);
void bench_memcpy2(void *dst, const void *src, size_t bytes);
void bench_memcpy2_stop(void);

int bench_copy(const bench_opts *o, hwi_jw *j);
int bench_launch(const bench_opts *o, hwi_jw *j);

#endif
