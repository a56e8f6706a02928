/* hwrt-bench-pool: shared declarations of the latency and trace parts. */
#ifndef HWRT_BENCH_POOL_H
#define HWRT_BENCH_POOL_H

#include <stddef.h>
#include "bench_stats.h"   /* bench_median */

typedef struct bench_opts {
    int json;
    int reps;            /* repetitions per figure; the median is reported */
    long pairs;          /* malloc+free pairs per repetition */
    const char *trace;   /* --trace FILE */
} bench_opts;

int bench_latency(const bench_opts *o);
int bench_trace(const bench_opts *o);
double bench_now_ns(void);
double bench_cpu_ns(void);

#endif
