/* hwrt-bench-opencl: copy and launch figures of hwrt on the sim backend and on the
 * opencl backend side by side, with PoCL driven directly (clEnqueueWriteBuffer /
 * clEnqueueNDRangeKernel + clFinish) as the baseline measured in the same run, and
 * memcpy as the host's own copy speed. Medians of 7 trials; ratios against raw PoCL.
 *
 *   hwrt-bench-opencl            run everything (about half a minute on 2 cores)
 *
 * One process uses one hwrt backend at a time: sim runs first, then hwrt_shutdown(),
 * then opencl, then the raw baseline. */
#include "bench.h"

#include <hwrt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const size_t bench_sizes[BENCH_NSIZES] = {64u << 10, 1u << 20, 16u << 20};

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* About 64 MiB moved per trial, at least 4 copies. */
int bench_reps(size_t bytes)
{
    size_t r = ((size_t)64 << 20) / bytes;
    return r < 4 ? 4 : (int)r;
}

#define CHECK(call)                                                                       \
    do {                                                                                  \
        hwrt_status st_ = (call);                                                         \
        if (st_ != HWRT_SUCCESS) {                                                        \
            fprintf(stderr, "hwrt-bench-opencl: %s: %s\n", #call, hwrt_last_error());      \
            return 0;                                                                     \
        }                                                                                 \
    } while (0)

static int hwrt_copies(bench_figs *f, hwrt_stream s)
{
    for (int i = 0; i < BENCH_NSIZES; i++) {
        size_t bytes = bench_sizes[i];
        void *host, *dev;
        CHECK(hwrt_host_alloc(&host, bytes, HWRT_HOST_PINNED));
        CHECK(hwrt_malloc(&dev, bytes));
        memset(host, 1, bytes);
        double h2d[BENCH_TRIALS], d2h[BENCH_TRIALS];
        int reps = bench_reps(bytes);
        for (int t = 0; t < BENCH_TRIALS; t++) {
            double t0 = bench_now();
            for (int r = 0; r < reps; r++) {
                CHECK(hwrt_memcpy_async(dev, host, bytes, HWRT_MEMCPY_HOST_TO_DEVICE, s));
                CHECK(hwrt_stream_synchronize(s));
            }
            double t1 = bench_now();
            for (int r = 0; r < reps; r++) {
                CHECK(hwrt_memcpy_async(host, dev, bytes, HWRT_MEMCPY_DEVICE_TO_HOST, s));
                CHECK(hwrt_stream_synchronize(s));
            }
            double t2 = bench_now();
            h2d[t] = (double)bytes * reps / (t1 - t0) / 1e9;
            d2h[t] = (double)bytes * reps / (t2 - t1) / 1e9;
        }
        f->h2d_gbps[i] = bench_median(h2d, BENCH_TRIALS);
        f->d2h_gbps[i] = bench_median(d2h, BENCH_TRIALS);
        CHECK(hwrt_free(dev));
        CHECK(hwrt_host_free(host));
    }
    return 1;
}

static int hwrt_launches(bench_figs *f, hwrt_stream s)
{
    int64_t shape[1] = {BENCH_LAUNCH_N};
    hwrt_tensor o, a, b;
    CHECK(hwrt_tensor_empty(&o, HWRT_FLOAT32, 1, shape));
    CHECK(hwrt_tensor_empty(&a, HWRT_FLOAT32, 1, shape));
    CHECK(hwrt_tensor_empty(&b, HWRT_FLOAT32, 1, shape));
    CHECK(hwrt_op_fill(a, 1.0, s));
    CHECK(hwrt_op_fill(b, 2.0, s));
    double rt[BENCH_TRIALS], thr[BENCH_TRIALS];
    for (int t = -1; t < BENCH_TRIALS; t++) {           /* trial -1 warms up (compiles) */
        double t0 = bench_now();
        for (int r = 0; r < BENCH_ROUNDTRIPS; r++) {
            CHECK(hwrt_op_add(o, a, b, s));
            CHECK(hwrt_stream_synchronize(s));
        }
        double t1 = bench_now();
        for (int r = 0; r < BENCH_BURST; r++) CHECK(hwrt_op_add(o, a, b, s));
        CHECK(hwrt_stream_synchronize(s));
        double t2 = bench_now();
        if (t < 0) continue;
        rt[t] = (t1 - t0) / BENCH_ROUNDTRIPS * 1e6;
        thr[t] = (t2 - t1) / BENCH_BURST * 1e6;
    }
    f->roundtrip_us = bench_median(rt, BENCH_TRIALS);
    f->burst_us = bench_median(thr, BENCH_TRIALS);
    CHECK(hwrt_tensor_release(o));
    CHECK(hwrt_tensor_release(a));
    CHECK(hwrt_tensor_release(b));
    return 1;
}

static int run_backend(const char *name, bench_figs *f)
{
    CHECK(hwrt_set_device(name, 0));
    hwrt_stream s;
    CHECK(hwrt_stream_create(&s, 0));
    int ok = hwrt_copies(f, s) && hwrt_launches(f, s);
    CHECK(hwrt_stream_destroy(s));
    CHECK(hwrt_shutdown());
    return ok;
}

static void memcpy_figs(double *gbps)
{
    for (int i = 0; i < BENCH_NSIZES; i++) {
        size_t bytes = bench_sizes[i];
        char *a = malloc(bytes), *b = malloc(bytes);
        memset(a, 1, bytes);
        memset(b, 2, bytes);
        double v[BENCH_TRIALS];
        int reps = bench_reps(bytes);
        for (int t = 0; t < BENCH_TRIALS; t++) {
            double t0 = bench_now();
            for (int r = 0; r < reps; r++) {
                memcpy(b, a, bytes);
                __asm__ volatile("" ::"r"(b) : "memory");
            }
            v[t] = (double)bytes * reps / (bench_now() - t0) / 1e9;
        }
        gbps[i] = bench_median(v, BENCH_TRIALS);
        free(a);
        free(b);
    }
}

static void print_figs(const bench_figs *sim, const bench_figs *ocl, const bench_figs *raw,
                       const double *mc)
{
    printf("copies, pinned host memory, enqueue + synchronize (GB/s, median of %d trials)\n",
           BENCH_TRIALS);
    printf("%-14s %10s %10s %12s %10s %14s\n", "", "memcpy", "hwrt sim", "hwrt opencl",
           "raw PoCL", "opencl/raw");
    for (int i = 0; i < BENCH_NSIZES; i++) {
        char label[32];
        for (int dir = 0; dir < 2; dir++) {
            const char *d = dir ? "D2H" : "H2D";
            double s = dir ? sim->d2h_gbps[i] : sim->h2d_gbps[i];
            double o = dir ? ocl->d2h_gbps[i] : ocl->h2d_gbps[i];
            double r = dir ? raw->d2h_gbps[i] : raw->h2d_gbps[i];
            snprintf(label, sizeof label, "%s %zu KiB", d, bench_sizes[i] >> 10);
            printf("%-14s %10.2f %10.2f %12.2f %10.2f %14.2f\n", label, mc[i], s, o, r, o / r);
        }
    }
    printf("\nlaunches: add of %d float32 (us per launch, median of %d trials)\n",
           BENCH_LAUNCH_N, BENCH_TRIALS);
    printf("%-26s %10s %12s %10s %14s\n", "", "hwrt sim", "hwrt opencl", "raw PoCL",
           "opencl/raw");
    printf("%-26s %10.2f %12.2f %10.2f %14.2f\n", "launch + synchronize", sim->roundtrip_us,
           ocl->roundtrip_us, raw->roundtrip_us, ocl->roundtrip_us / raw->roundtrip_us);
    printf("%-26s %10.2f %12.2f %10.2f %14.2f\n", "burst of 200, then sync", sim->burst_us,
           ocl->burst_us, raw->burst_us, ocl->burst_us / raw->burst_us);
    printf("\n(sim figures are simulated: its link model is off unless HWRT_SIM_LINK_GBPS is "
           "set; PoCL runs on this machine's CPU)\n");
}

int main(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: hwrt-bench-opencl\n  copy and launch figures: hwrt on sim, hwrt on "
               "opencl, raw PoCL (baseline), memcpy\n");
        return 0;
    }
    bench_figs sim = {0}, ocl = {0}, raw = {0};
    double mc[BENCH_NSIZES];
    hwrt_backend_desc info;
    if (hwrt_backend_info("opencl", &info) != HWRT_SUCCESS || !info.available ||
        info.device_count == 0) {
        fprintf(stderr, "hwrt-bench-opencl: the opencl backend is unavailable: %s\n", info.reason);
        return 1;
    }
    memcpy_figs(mc);
    if (!run_backend("sim", &sim) || !run_backend("opencl", &ocl)) return 1;
    if (!bench_raw_cl(&raw)) {
        fprintf(stderr, "hwrt-bench-opencl: could not drive OpenCL directly\n");
        return 1;
    }
    print_figs(&sim, &ocl, &raw, mc);
    return 0;
}
