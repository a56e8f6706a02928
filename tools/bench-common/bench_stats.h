/* Statistics shared by the hwrt-bench programs. */
#ifndef HWRT_BENCH_STATS_H
#define HWRT_BENCH_STATS_H

/* Median of v[0..n) (the mean of the middle two when n is even; 0 when n <= 0). v is
 * left in its order: callers pair samples of the same round by index. */
double bench_median(const double *v, int n);

#endif
