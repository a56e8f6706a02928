/* hwrt-bench-prof: what profiling costs. Runs the same workload (N kernel launches on
 * the default stream, a stream sync every 1000) unprofiled and profiled, alternating
 * A B, B A ... so drift hits both alike, and reports the medians, their ratio, the cost
 * per launch, the time hwrt_profiler_stop takes to resolve and write, and the event,
 * dropped and missing-timestamp counts of every profiled round.
 *
 *   hwrt-bench-prof [--ops N] [--rounds R] [--elems E[,E...]] [--out DIR] [--markers]
 * --markers adds a third variant per round: profiled with HWRT_PROFILE_MARKERS=1, the
 * marker fallback (one backend event per launch) that backends without activity records
 * use, so both device-timestamp paths are measured against the same baseline.
 * Defaults: 100000 ops, 7 rounds of each, elements 65536 and 4096 (float32 Scale): a
 * small layer's worth of work per launch, and a launch-bound worst case.
 * Figures from the simulated NPU are labelled as such. */
#include <hwrt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "example_check.h"   /* CHECK(call) */
#include "bench_stats.h"   /* bench_median */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_s(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The workload: ops launches, a sync every 1000 and at the end. Returns wall seconds;
 * cpu[0] gets the process CPU seconds (host and engine threads) it used, cpu[1] the
 * launching thread's alone (the host-side cost, least disturbed by other processes). */
static double workload(hwrt_tensor t, long ops, double *cpu)
{
    double c0 = cpu_s(CLOCK_PROCESS_CPUTIME_ID), h0 = cpu_s(CLOCK_THREAD_CPUTIME_ID);
    double t0 = now_s();
    for (long i = 0; i < ops; i++) {
        CHECK(hwrt_op_scale(t, t, 1.0, NULL));
        if ((i + 1) % 1000 == 0) CHECK(hwrt_stream_synchronize(NULL));
    }
    CHECK(hwrt_stream_synchronize(NULL));
    double wall = now_s() - t0;
    cpu[0] = cpu_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    cpu[1] = cpu_s(CLOCK_THREAD_CPUTIME_ID) - h0;
    return wall;
}

/* What one variant measured over the rounds. */
typedef struct variant {
    const char *label;
    int profiled, markers;       /* markers: HWRT_PROFILE_MARKERS=1 (the fallback path) */
    double *wall, *cpu, *host, *start, *stop;
    uint64_t events_min, dropped, missing;
} variant;

static void run_variant(variant *v, int r, hwrt_tensor t, long ops, long elems, const char *out)
{
    double cpu[2];
    if (!v->profiled) {
        v->wall[r] = workload(t, ops, cpu);
        v->cpu[r] = cpu[0];
        v->host[r] = cpu[1];
        return;
    }
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/e%ld_r%d%s", out, elems, r, v->markers ? "_m" : "");
    if (v->markers) setenv("HWRT_PROFILE_MARKERS", "1", 1);
    double s0 = now_s();
    CHECK(hwrt_profiler_start(dir));
    v->start[r] = now_s() - s0;
    unsetenv("HWRT_PROFILE_MARKERS");
    v->wall[r] = workload(t, ops, cpu);
    v->cpu[r] = cpu[0];
    v->host[r] = cpu[1];
    s0 = now_s();
    CHECK(hwrt_profiler_stop());
    v->stop[r] = now_s() - s0;
    hwrt_profiler_stats st;
    CHECK(hwrt_profiler_get_stats(&st));
    if (st.events < v->events_min) v->events_min = st.events;
    v->dropped += st.dropped;
    v->missing += st.device_ts_missing;
}

static void report(variant *v, const variant *b, int rounds, long ops, long syncs)
{
    double *pair = calloc((size_t)rounds, sizeof *pair);    /* ratio within each round */
    for (int r = 0; r < rounds; r++) pair[r] = v->wall[r] / b->wall[r];
    double mpair = bench_median(pair, rounds);
    for (int r = 0; r < rounds; r++) pair[r] = v->cpu[r] / b->cpu[r];
    double mcpair = bench_median(pair, rounds);
    free(pair);
    double mb = bench_median(b->wall, rounds), mp = bench_median(v->wall, rounds);
    double mcb = bench_median(b->cpu, rounds), mcp = bench_median(v->cpu, rounds);
    double mhb = bench_median(b->host, rounds), mhp = bench_median(v->host, rounds);
    printf("  %s median %.4f s (%.3f us/launch)\n", v->label, mp, mp / (double)ops * 1e6);
    printf("    ratio of medians to unprofiled %.4f (%+.2f%%), %+.1f ns per launch\n", mp / mb,
           (mp / mb - 1) * 100, (mp - mb) / (double)ops * 1e9);
    printf("    median of the per-round ratios %.4f (%+.2f%%; each round ran back to back)\n",
           mpair, (mpair - 1) * 100);
    printf("    process CPU time median %.4f s, ratio of medians %.4f (%+.1f ns CPU per launch), "
           "median per-round CPU ratio %.4f\n", mcp, mcp / mcb, (mcp - mcb) / (double)ops * 1e9,
           mcpair);
    printf("    launching thread CPU time median %.4f s, ratio %.4f (%+.1f ns per launch)\n", mhp,
           mhp / mhb, (mhp - mhb) / (double)ops * 1e9);
    printf("    hwrt_profiler_start median %.4f s (first one fills the buffer pool); "
           "hwrt_profiler_stop (resolve + write %ld records) median %.4f s\n",
           bench_median(v->start, rounds), ops + syncs, bench_median(v->stop, rounds));
    printf("    events per profiled round >= %llu (expected %ld), dropped %llu, launches "
           "without device time %llu\n", (unsigned long long)v->events_min, ops + syncs,
           (unsigned long long)v->dropped, (unsigned long long)v->missing);
}

static void bench(long ops, int rounds, long elems, const char *out, int markers)
{
    hwrt_tensor t;
    int64_t shape[1] = {elems};
    CHECK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    CHECK(hwrt_op_fill(t, 1.0, NULL));
    double dummy[2];
    workload(t, ops / 10, dummy);              /* warm up engines, caches, pages */
    variant v[3] = {{"unprofiled", 0, 0, NULL, NULL, NULL, NULL, NULL, UINT64_MAX, 0, 0},
                    {"profiled", 1, 0, NULL, NULL, NULL, NULL, NULL, UINT64_MAX, 0, 0},
                    {"profiled, markers (fallback path)", 1, 1, NULL, NULL, NULL, NULL, NULL,
                     UINT64_MAX, 0, 0}};
    int nv = markers ? 3 : 2;
    for (int i = 0; i < nv; i++) {
        double **arrs[5] = {&v[i].wall, &v[i].cpu, &v[i].host, &v[i].start, &v[i].stop};
        for (int k = 0; k < 5; k++) *arrs[k] = calloc((size_t)rounds, sizeof(double));
    }
    long syncs = ops / 1000 + 1;
    for (int r = 0; r < rounds; r++)          /* A B (C), (C) B A, ...: drift hits all alike */
        for (int k = 0; k < nv; k++)
            run_variant(&v[r % 2 ? nv - 1 - k : k], r, t, ops, elems, out);
    printf("  rounds wall s (");
    for (int i = 0; i < nv; i++) printf("%s%s", i ? ", " : "", v[i].label);
    printf("):");
    for (int r = 0; r < rounds; r++) {
        printf(" (");
        for (int i = 0; i < nv; i++) printf("%s%.4f", i ? ", " : "", v[i].wall[r]);
        printf(")");
    }
    printf("\nScale float32[%ld] x %ld launches, %ld syncs, %d rounds each (simulated NPU):\n",
           elems, ops, syncs, rounds);
    double mb = bench_median(v[0].wall, rounds), mcb = bench_median(v[0].cpu, rounds);
    printf("  unprofiled median %.4f s (%.3f us/launch), process CPU median %.4f s\n", mb,
           mb / (double)ops * 1e6, mcb);
    for (int i = 1; i < nv; i++) report(&v[i], &v[0], rounds, ops, syncs);
    for (int i = 0; i < nv; i++) {
        free(v[i].wall); free(v[i].cpu); free(v[i].host); free(v[i].start); free(v[i].stop);
    }
    CHECK(hwrt_tensor_release(t));
}

int main(int argc, char **argv)
{
    long ops = 100000;
    int rounds = 7;
    const char *elems = "65536,4096", *out = "/tmp/hwrt-bench-prof";
    int markers = 0;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--markers")) {
            markers = 1;
            for (int k = i; k + 1 < argc; k++) argv[k] = argv[k + 1];
            argc--;
        }
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--ops")) ops = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--elems")) elems = argv[i + 1];
        else if (!strcmp(argv[i], "--out")) out = argv[i + 1];
        else { fprintf(stderr, "unknown option %s\n", argv[i]); return 2; }
    }
    if (ops < 1000 || rounds < 1) {
        fprintf(stderr, "hwrt-bench-prof: --ops must be >= 1000 and --rounds >= 1\n");
        return 2;
    }
    hwrt_profiler_stats st;
    CHECK(hwrt_profiler_get_stats(&st));
    if (st.running) {
        fprintf(stderr, "hwrt-bench-prof: unset HWRT_PROFILE; the benchmark starts and stops "
                "its own sessions\n");
        return 2;
    }
    CHECK(hwrt_set_device("sim", 0));
    char buf[256];
    snprintf(buf, sizeof buf, "%s", elems);
    char *save = NULL;      /* strtok_r: hwrt's threads may use strtok meanwhile */
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        bench(ops, rounds, atol(tok), out, markers);
    CHECK(hwrt_shutdown());
    return 0;
}
