/* hwrt-bench internals: timing, medians, a two-thread memcpy baseline helper, and a tiny
 * JSON writer. Every figure a subcommand prints is a median of repeats and is shown next
 * to a baseline measured in the same run (docs/performance.md). */
#ifndef HWRT_BENCH_H
#define HWRT_BENCH_H

#include <hwrt.h>

#include <stdint.h>
#include <stdio.h>
#include "bench_stats.h"   /* bench_median */

typedef struct bench_opts {
    int json;                 /* --json: machine-readable output on stdout */
    size_t max_bytes;         /* copy: largest size (default 512 MiB) */
    int quick;                /* --quick: fewer repeats (smoke runs) */
    const char *backend;      /* --backend NAME (default "auto") */
} bench_opts;

double bench_now_s(void);
/* Abort the benchmark with the hwrt error sentence when a call fails. */
void bench_check(hwrt_status st, const char *what);
#define BCHECK(call) bench_check((call), #call)

/* Two-thread memcpy baseline: a helper thread copies the second half while the caller
 * copies the first. The helper spins briefly, then sleeps, between jobs. */
void bench_memcpy2_start(void);
void bench_memcpy2(void *dst, const void *src, size_t bytes);
void bench_memcpy2_stop(void);

/* JSON writer (no nesting checks: the callers are few and simple). */
typedef struct bench_json { FILE *f; int first[16]; int depth; } bench_json;
void bj_open(bench_json *j, FILE *f, char bracket);
void bj_close(bench_json *j, char bracket);
void bj_key(bench_json *j, const char *key);      /* "key": inside an object */
void bj_next(bench_json *j);                      /* separator before a value in an array */
void bj_str(bench_json *j, const char *key, const char *v);
void bj_num(bench_json *j, const char *key, double v);

int bench_copy(const bench_opts *o, bench_json *j);
int bench_launch(const bench_opts *o, bench_json *j);

#endif
