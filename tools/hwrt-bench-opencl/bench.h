/* hwrt-bench-opencl: shared definitions. Each figure is measured in BENCH_TRIALS trials;
 * hwrt-on-opencl and raw PoCL trials alternate (same process, same moment), so the
 * load of a shared machine hits both alike, and their ratio is the median of the
 * per-trial ratios. */
#ifndef HWRT_BENCH_OPENCL_H
#define HWRT_BENCH_OPENCL_H

#include <stddef.h>
#include "bench_stats.h"   /* bench_median */

enum {
    BENCH_TRIALS = 11,
    BENCH_NSIZES = 3,
    BENCH_ROUNDTRIPS = 50,     /* launch + synchronize, per trial */
    BENCH_BURST = 200,         /* launches enqueued back to back, then one synchronize */
    BENCH_LAUNCH_N = 256       /* elements of the launched add */
};

/* What one trial measures: copies in GB/s, launches in us per launch. */
enum { B_H2D, B_D2H, B_ROUNDTRIP = 2 * BENCH_NSIZES, B_BURST, B_NFIGS };

extern const size_t bench_sizes[BENCH_NSIZES];

double bench_now(void);
int bench_reps(size_t bytes);

/* The raw PoCL baseline: open (0 if no OpenCL driver), one trial of figure fig
 * (B_H2D + 2*size, B_D2H + 2*size, B_ROUNDTRIP, B_BURST), close. */
int bench_raw_open(void);
double bench_raw_trial(int fig);
void bench_raw_close(void);

#endif
