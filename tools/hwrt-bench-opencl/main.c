/* hwrt-bench-opencl: copy and launch figures of hwrt on the sim backend and on the
 * opencl backend side by side, with PoCL driven directly (clEnqueueWriteBuffer /
 * clEnqueueNDRangeKernel + clFinish) as the baseline measured in the same run, and
 * memcpy as the host's own copy speed. Medians of 11 trials; ratios against raw PoCL.
 *
 *   hwrt-bench-opencl [--json] [--quick]   (10-20 s on 2 cores; also `hwrt-bench opencl`)
 *
 * One process uses one hwrt backend at a time: sim runs first, then hwrt_shutdown(),
 * then opencl, whose trials alternate with the raw baseline's in the same process. */
#include "bench.h"
#include "base/json.h"
#include "cli.h"

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

/* About 64 MiB moved per trial, at least 4 copies. */
int bench_reps(size_t bytes)
{
    size_t r = ((size_t)64 << 20) / bytes;
    return r < 4 ? 4 : (int)r;
}

#include "example_check.h"   /* CHECK(call) */

/* hwrt's side: one stream, pinned host and device buffers per size, three tensors. */
static hwrt_stream hs;
static void *hhost[BENCH_NSIZES], *hdev[BENCH_NSIZES];
static hwrt_tensor to, ta, tb;

static double hwrt_trial(int fig)
{
    double t0 = bench_now();
    if (fig == B_ROUNDTRIP) {
        for (int r = 0; r < BENCH_ROUNDTRIPS; r++) {
            CHECK(hwrt_op_add(to, ta, tb, hs));
            CHECK(hwrt_stream_synchronize(hs));
        }
        return (bench_now() - t0) / BENCH_ROUNDTRIPS * 1e6;
    }
    if (fig == B_BURST) {
        for (int r = 0; r < BENCH_BURST; r++) CHECK(hwrt_op_add(to, ta, tb, hs));
        CHECK(hwrt_stream_synchronize(hs));
        return (bench_now() - t0) / BENCH_BURST * 1e6;
    }
    int s = fig / 2, d2h = fig % 2;
    size_t bytes = bench_sizes[s];
    int reps = bench_reps(bytes);
    for (int r = 0; r < reps; r++) {
        if (d2h) CHECK(hwrt_memcpy_async(hhost[s], hdev[s], bytes, HWRT_MEMCPY_DEVICE_TO_HOST, hs));
        else CHECK(hwrt_memcpy_async(hdev[s], hhost[s], bytes, HWRT_MEMCPY_HOST_TO_DEVICE, hs));
        CHECK(hwrt_stream_synchronize(hs));
    }
    return (double)bytes * reps / (bench_now() - t0) / 1e9;
}

static void hwrt_open(const char *backend)
{
    CHECK(hwrt_set_device(backend, 0));
    CHECK(hwrt_stream_create(&hs, 0));
    for (int s = 0; s < BENCH_NSIZES; s++) {
        CHECK(hwrt_host_alloc(&hhost[s], bench_sizes[s], HWRT_HOST_PINNED));
        CHECK(hwrt_malloc(&hdev[s], bench_sizes[s]));
        memset(hhost[s], 1, bench_sizes[s]);
    }
    int64_t shape[1] = {BENCH_LAUNCH_N};
    CHECK(hwrt_tensor_empty(&to, HWRT_FLOAT32, 1, shape));
    CHECK(hwrt_tensor_empty(&ta, HWRT_FLOAT32, 1, shape));
    CHECK(hwrt_tensor_empty(&tb, HWRT_FLOAT32, 1, shape));
    CHECK(hwrt_op_fill(ta, 1.0, hs));
    CHECK(hwrt_op_fill(tb, 2.0, hs));
    hwrt_trial(B_ROUNDTRIP);                /* warm up: kernels compile at first launch */
}

static void hwrt_close(void)
{
    CHECK(hwrt_tensor_release(to));
    CHECK(hwrt_tensor_release(ta));
    CHECK(hwrt_tensor_release(tb));
    for (int s = 0; s < BENCH_NSIZES; s++) {
        CHECK(hwrt_free(hdev[s]));
        CHECK(hwrt_host_free(hhost[s]));
    }
    CHECK(hwrt_stream_destroy(hs));
    CHECK(hwrt_shutdown());
}

static double memcpy_trial(int s)
{
    size_t bytes = bench_sizes[s];
    char *a = malloc(bytes), *b = malloc(bytes);
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    int reps = bench_reps(bytes);
    double t0 = bench_now();
    for (int r = 0; r < reps; r++) {
        memcpy(b, a, bytes);
        __asm__ volatile("" ::"r"(b) : "memory");
    }
    double v = (double)bytes * reps / (bench_now() - t0) / 1e9;
    free(a);
    free(b);
    return v;
}

static int ntrials = BENCH_TRIALS;
static double sim_v[BENCH_TRIALS][B_NFIGS], ocl_v[BENCH_TRIALS][B_NFIGS];
static double raw_v[BENCH_TRIALS][B_NFIGS], mc_v[BENCH_TRIALS][BENCH_NSIZES];

static double med(double v[][B_NFIGS], int fig)
{
    double col[BENCH_TRIALS];
    for (int t = 0; t < ntrials; t++) col[t] = v[t][fig];
    return bench_median(col, ntrials);
}

static double ratio(int fig)        /* median of per-trial opencl / raw */
{
    double col[BENCH_TRIALS];
    for (int t = 0; t < ntrials; t++) col[t] = ocl_v[t][fig] / raw_v[t][fig];
    return bench_median(col, ntrials);
}

static void print_figs(void)
{
    printf("copies from/to pinned host memory, enqueue + synchronize: GB/s, median of %d "
           "trials\n(ratio: median of per-trial hwrt-opencl / raw-PoCL, higher is better)\n",
           ntrials);
    printf("%-14s %9s %9s %12s %9s %12s\n", "", "memcpy", "hwrt sim", "hwrt opencl",
           "raw PoCL", "opencl/raw");
    for (int s = 0; s < BENCH_NSIZES; s++)
        for (int d = 0; d < 2; d++) {
            double col[BENCH_TRIALS];
            for (int t = 0; t < ntrials; t++) col[t] = mc_v[t][s];
            char label[32];
            snprintf(label, sizeof label, "%s %zu KiB", d ? "D2H" : "H2D", bench_sizes[s] >> 10);
            int f = 2 * s + d;
            printf("%-14s %9.2f %9.2f %12.2f %9.2f %12.2f\n", label,
                   bench_median(col, ntrials), med(sim_v, f), med(ocl_v, f), med(raw_v, f),
                   ratio(f));
        }
    printf("\nlaunches of an add of %d float32: us per launch, median of %d trials\n"
           "(ratio: median of per-trial hwrt-opencl / raw-PoCL, lower is better)\n",
           BENCH_LAUNCH_N, ntrials);
    printf("%-26s %9s %12s %9s %12s\n", "", "hwrt sim", "hwrt opencl", "raw PoCL", "opencl/raw");
    const char *names[2] = {"launch + synchronize", "burst of 200, then sync"};
    for (int i = 0; i < 2; i++) {
        int f = B_ROUNDTRIP + i;
        printf("%-26s %9.2f %12.2f %9.2f %12.2f\n", names[i], med(sim_v, f), med(ocl_v, f),
               med(raw_v, f), ratio(f));
    }
    printf("\n(sim figures are simulated: its link model is off unless HWRT_SIM_LINK_GBPS is "
           "set; PoCL runs on this machine's CPU)\n");
}

static double mc_med(int s)
{
    double col[BENCH_TRIALS];
    for (int t = 0; t < ntrials; t++) col[t] = mc_v[t][s];
    return bench_median(col, ntrials);
}

/* One JSON object (what `hwrt-bench all --json` embeds under "opencl"). */
static int print_json(void)
{
    hwi_jw j;
    hwi_jw_begin(&j, stdout, 0);
    hwi_jw_obj(&j);
    hwi_jw_kint(&j, "trials", ntrials);
    hwi_jw_kbool(&j, "sim_simulated", 1);
    hwi_jw_key(&j, "copy");
    hwi_jw_arr(&j);
    for (int s = 0; s < BENCH_NSIZES; s++)
        for (int d = 0; d < 2; d++) {
            int f = 2 * s + d;
            hwi_jw_obj(&j);
            hwi_jw_kstr(&j, "dir", d ? "D2H" : "H2D");
            hwi_jw_kuint(&j, "bytes", bench_sizes[s]);
            hwi_jw_knum(&j, "memcpy_gbps", mc_med(s));
            hwi_jw_knum(&j, "sim_gbps", med(sim_v, f));
            hwi_jw_knum(&j, "opencl_gbps", med(ocl_v, f));
            hwi_jw_knum(&j, "raw_pocl_gbps", med(raw_v, f));
            hwi_jw_knum(&j, "opencl_over_raw", ratio(f));
            hwi_jw_close(&j);
        }
    hwi_jw_close(&j);
    hwi_jw_key(&j, "launch");
    hwi_jw_obj(&j);
    const char *names[2] = {"roundtrip_us", "burst_us"};
    for (int i = 0; i < 2; i++) {
        int f = B_ROUNDTRIP + i;
        hwi_jw_key(&j, names[i]);
        hwi_jw_obj(&j);
        hwi_jw_knum(&j, "sim", med(sim_v, f));
        hwi_jw_knum(&j, "opencl", med(ocl_v, f));
        hwi_jw_knum(&j, "raw_pocl", med(raw_v, f));
        hwi_jw_knum(&j, "opencl_over_raw", ratio(f));
        hwi_jw_close(&j);
    }
    hwi_jw_close(&j);
    hwi_jw_kint(&j, "launch_elements", BENCH_LAUNCH_N);
    hwi_jw_kint(&j, "burst", BENCH_BURST);
    hwi_jw_close(&j);
    return hwi_jw_end(&j);
}

static const cli_opt opts[] = {
    {"json", 256, CLI_NONE, NULL, "one JSON object on stdout"},
    {"quick", 257, CLI_NONE, NULL, "5 trials instead of the default"},
    {0},
};

static const cli_tool tool = {
    .name = "hwrt-bench-opencl",
    .synopsis = "hwrt-bench-opencl [--json] [--quick]",
    .about = "Copy and launch figures: hwrt on sim, hwrt on opencl, raw PoCL (the baseline,\n"
             "same run) and memcpy.",
    .opts = opts,
};

static int on_opt(void *ctx, int key, const char *arg)
{
    (void)arg;
    if (key == 256) *(int *)ctx = 1;
    else if (key == 257) ntrials = 5;
    return CLI_OK;
}

int main(int argc, char **argv)
{
    int json = 0, first, done;
    int rc = cli_parse(&tool, argc, argv, on_opt, &json, &first, &done);
    if (rc != CLI_OK || done) return rc;
    hwrt_backend_desc info;
    if (hwrt_backend_info("opencl", &info) != HWRT_SUCCESS || !info.available ||
        info.device_count == 0) {
        return cli_fail(&tool, "the opencl backend is unavailable: %s", info.reason);
    }
    hwrt_open("sim");
    for (int t = 0; t < ntrials; t++) {
        for (int f = 0; f < B_NFIGS; f++) sim_v[t][f] = hwrt_trial(f);
        for (int s = 0; s < BENCH_NSIZES; s++) mc_v[t][s] = memcpy_trial(s);
    }
    hwrt_close();
    hwrt_open("opencl");
    if (!bench_raw_open()) {
        return cli_fail(&tool, "could not drive OpenCL directly");
    }
    for (int t = 0; t < ntrials; t++)
        for (int f = 0; f < B_NFIGS; f++) {     /* alternate: both see the same load */
            ocl_v[t][f] = hwrt_trial(f);
            raw_v[t][f] = bench_raw_trial(f);
        }
    bench_raw_close();
    hwrt_close();
    if (json) return print_json() ? cli_fail(&tool, "the JSON output is incomplete") : CLI_OK;
    print_figs();
    return CLI_OK;
}
