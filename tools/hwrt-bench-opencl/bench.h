/* hwrt-bench-opencl: shared definitions of the three measured paths (hwrt on sim, hwrt
 * on opencl, raw PoCL). Every figure is the median of BENCH_TRIALS trials. */
#ifndef HWRT_BENCH_OPENCL_H
#define HWRT_BENCH_OPENCL_H

#include <stddef.h>

enum {
    BENCH_TRIALS = 7,
    BENCH_NSIZES = 3,
    BENCH_ROUNDTRIPS = 50,     /* launch + synchronize, per trial */
    BENCH_BURST = 200,         /* launches enqueued back to back, then one synchronize */
    BENCH_LAUNCH_N = 256       /* elements of the launched add */
};

extern const size_t bench_sizes[BENCH_NSIZES];

typedef struct bench_figs {
    double h2d_gbps[BENCH_NSIZES];   /* pinned host -> device, enqueue + synchronize */
    double d2h_gbps[BENCH_NSIZES];
    double roundtrip_us;             /* one add launch + synchronize */
    double burst_us;                 /* per launch, BENCH_BURST launches then one sync */
} bench_figs;

double bench_now(void);
double bench_median(double *v, int n);
int bench_reps(size_t bytes);
/* The raw PoCL baseline; 0 if no OpenCL driver could be used. */
int bench_raw_cl(bench_figs *f);

#endif
