/* hwrt-bench-prof: what profiling costs. Runs the same workload (N kernel launches on
 * the default stream, a stream sync every 1000) unprofiled and profiled, alternating
 * A B, B A ... so drift hits both alike, and reports the medians, their ratio, the cost
 * per launch, the time hwrt_profiler_stop takes to resolve and write, and the event,
 * dropped and missing-timestamp counts of every profiled round.
 *
 *   hwrt-bench-prof [--ops N] [--rounds R] [--elems E[,E...]] [--out DIR] [--markers] [--json]
 * --json: one JSON object, a member per element count with every variant's figures.
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
#include "base/json.h"
#include "cli.h"

static hwi_jw *jw;          /* --json: the document on stdout; NULL: text */

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
    if (jw) {
        hwi_jw_obj(jw);
        hwi_jw_kstr(jw, "variant", v->label);
        hwi_jw_knum(jw, "wall_median_s", mp);
        hwi_jw_knum(jw, "us_per_launch", mp / (double)ops * 1e6);
        hwi_jw_knum(jw, "ratio_of_medians", mp / mb);
        hwi_jw_knum(jw, "ns_per_launch_added", (mp - mb) / (double)ops * 1e9);
        hwi_jw_knum(jw, "median_round_ratio", mpair);
        hwi_jw_knum(jw, "cpu_median_s", mcp);
        hwi_jw_knum(jw, "cpu_ratio_of_medians", mcp / mcb);
        hwi_jw_knum(jw, "median_round_cpu_ratio", mcpair);
        hwi_jw_knum(jw, "launch_thread_cpu_median_s", mhp);
        hwi_jw_knum(jw, "launch_thread_cpu_ratio", mhp / mhb);
        hwi_jw_knum(jw, "start_median_s", bench_median(v->start, rounds));
        hwi_jw_knum(jw, "stop_median_s", bench_median(v->stop, rounds));
        hwi_jw_kuint(jw, "events_min", v->events_min);
        hwi_jw_kint(jw, "events_expected", ops + syncs);
        hwi_jw_kuint(jw, "dropped", v->dropped);
        hwi_jw_kuint(jw, "without_device_time", v->missing);
        hwi_jw_close(jw);
        return;
    }
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
    double mb = bench_median(v[0].wall, rounds), mcb = bench_median(v[0].cpu, rounds);
    if (jw) {
        hwi_jw_obj(jw);
        hwi_jw_kint(jw, "elems", elems);
        hwi_jw_kint(jw, "launches", ops);
        hwi_jw_kint(jw, "syncs", syncs);
        hwi_jw_kint(jw, "rounds", rounds);
        hwi_jw_kbool(jw, "simulated", 1);
        hwi_jw_knum(jw, "unprofiled_wall_median_s", mb);
        hwi_jw_knum(jw, "unprofiled_cpu_median_s", mcb);
        hwi_jw_key(jw, "variants");
        hwi_jw_arr(jw);
        for (int i = 1; i < nv; i++) report(&v[i], &v[0], rounds, ops, syncs);
        hwi_jw_close(jw);
        hwi_jw_close(jw);
    } else {
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
    printf("  unprofiled median %.4f s (%.3f us/launch), process CPU median %.4f s\n", mb,
           mb / (double)ops * 1e6, mcb);
    for (int i = 1; i < nv; i++) report(&v[i], &v[0], rounds, ops, syncs);
    }
    for (int i = 0; i < nv; i++) {
        free(v[i].wall); free(v[i].cpu); free(v[i].host); free(v[i].start); free(v[i].stop);
    }
    CHECK(hwrt_tensor_release(t));
}

static const cli_opt opts[] = {
    {"ops", 256, CLI_REQUIRED, "N", "launches per round, >= 1000 (default 100000)"},
    {"rounds", 257, CLI_REQUIRED, "R", "rounds of each variant (default 7)"},
    {"elems", 258, CLI_REQUIRED, "E[,E...]", "float32 elements per launch (default 65536,4096)"},
    {"out", 259, CLI_REQUIRED, "DIR", "where the profiled rounds write (default /tmp/hwrt-bench-prof)"},
    {"markers", 260, CLI_NONE, NULL, "also the marker fallback path (HWRT_PROFILE_MARKERS=1)"},
    {"json", 261, CLI_NONE, NULL, "one JSON object on stdout"},
    {"quick", 262, CLI_NONE, NULL, "a smoke run: --ops 1000 --rounds 1 --elems 64"},
    {0},
};

static const cli_tool tool = {
    .name = "hwrt-bench-prof",
    .synopsis = "hwrt-bench-prof [--ops N] [--rounds R] [--elems E[,E...]] [--out DIR] [--markers]\n"
                "                       [--json]",
    .about = "What profiling costs: the same workload unprofiled and profiled, alternating.",
    .opts = opts,
};

typedef struct { long ops; int rounds, markers, json; const char *elems, *out; } prof_opts;

static int on_opt(void *ctx, int key, const char *arg)
{
    prof_opts *o = ctx;
    switch (key) {
    case 256: return cli_long(&tool, "--ops", arg, 1000, 1L << 40, &o->ops);
    case 257: return cli_int(&tool, "--rounds", arg, 1, 1000, &o->rounds);
    case 258: o->elems = arg; return CLI_OK;
    case 259: o->out = arg; return CLI_OK;
    case 260: o->markers = 1; return CLI_OK;
    case 261: o->json = 1; return CLI_OK;
    case 262: o->ops = 1000; o->rounds = 1; o->elems = "64"; return CLI_OK;
    }
    return CLI_USAGE;
}

int main(int argc, char **argv)
{
    prof_opts o = {.ops = 100000, .rounds = 7, .elems = "65536,4096",
                   .out = "/tmp/hwrt-bench-prof"};
    int first, done;
    int rc = cli_parse(&tool, argc, argv, on_opt, &o, &first, &done);
    if (rc != CLI_OK || done) return rc;
    long ops = o.ops;
    int rounds = o.rounds, markers = o.markers;
    const char *elems = o.elems, *out = o.out;
    long counts[32];
    int ncounts = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", elems);
    char *save = NULL;      /* strtok_r: hwrt's threads may use strtok meanwhile */
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (ncounts == 32) return cli_usage(&tool, "--elems lists at most 32 counts");
        if (cli_long(&tool, "--elems", tok, 1, 1L << 32, &counts[ncounts]) != CLI_OK) return CLI_USAGE;
        ncounts++;
    }
    if (!ncounts) return cli_usage(&tool, "--elems '%s' names no count", elems);
    hwrt_profiler_stats st;
    CHECK(hwrt_profiler_get_stats(&st));
    if (st.running) {
        return cli_usage(&tool, "unset HWRT_PROFILE; the benchmark starts and stops its own "
                         "sessions");
    }
    CHECK(hwrt_set_device("sim", 0));
    hwi_jw j;
    if (o.json) {
        hwi_jw_begin(&j, stdout, 0);
        jw = &j;
        hwi_jw_obj(jw);
        hwi_jw_kstr(jw, "benchmark", "profiler overhead");
        hwi_jw_key(jw, "workloads");
        hwi_jw_arr(jw);
    }
    for (int i = 0; i < ncounts; i++) bench(ops, rounds, counts[i], out, markers);
    CHECK(hwrt_shutdown());
    if (jw) {
        hwi_jw_close(jw);
        hwi_jw_close(jw);
        if (hwi_jw_end(jw)) return cli_fail(&tool, "the JSON output is incomplete");
    }
    return CLI_OK;
}
