/* hwrt-bench-prof: what profiling costs. Runs the same workload (N kernel launches on
 * the default stream, a stream sync every 1000) unprofiled and profiled, alternating
 * A B B A ... so drift hits both alike, and reports the medians, their ratio, the cost
 * per launch, the time hwrt_profiler_stop takes to resolve and write, and the event,
 * dropped and missing-timestamp counts of every profiled round.
 *
 *   hwrt-bench-prof [--ops N] [--rounds R] [--elems E[,E...]] [--out DIR]
 * Defaults: 100000 ops, 7 rounds of each, elements 65536 and 4096 (float32 Scale): a
 * small layer's worth of work per launch, and a launch-bound worst case.
 * Figures from the simulated NPU are labelled as such. */
#include <hwrt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call)                                                                  \
    do {                                                                             \
        hwrt_status st_ = (call);                                                    \
        if (st_ != HWRT_SUCCESS) {                                                   \
            fprintf(stderr, "%s failed: %s\n", #call, hwrt_last_error());            \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

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

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, dcmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
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

static void bench(long ops, int rounds, long elems, const char *out)
{
    hwrt_tensor t;
    int64_t shape[1] = {elems};
    CHECK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    CHECK(hwrt_op_fill(t, 1.0, NULL));
    double dummy[2];
    workload(t, ops / 10, dummy);              /* warm up engines, caches, pages */
    double *base = calloc((size_t)rounds, sizeof *base);
    double *prof = calloc((size_t)rounds, sizeof *prof);
    double *stop = calloc((size_t)rounds, sizeof *stop);
    double *start = calloc((size_t)rounds, sizeof *start);
    double *cbase = calloc((size_t)rounds, sizeof *cbase);
    double *cprof = calloc((size_t)rounds, sizeof *cprof);
    double *hbase = calloc((size_t)rounds, sizeof *hbase);
    double *hprof = calloc((size_t)rounds, sizeof *hprof);
    double cpu[2];
    uint64_t events_min = UINT64_MAX, dropped = 0, missing = 0;
    long syncs = ops / 1000 + 1;
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < 2; k++) {
            int profiled = (k == 0) == (r % 2 == 1);     /* A B, B A, A B, ... */
            if (!profiled) {
                base[r] = workload(t, ops, cpu);
                cbase[r] = cpu[0];
                hbase[r] = cpu[1];
                continue;
            }
            char dir[1024];
            snprintf(dir, sizeof dir, "%s/e%ld_r%d", out, elems, r);
            double s0 = now_s();
            CHECK(hwrt_profiler_start(dir));
            start[r] = now_s() - s0;
            prof[r] = workload(t, ops, cpu);
            cprof[r] = cpu[0];
            hprof[r] = cpu[1];
            s0 = now_s();
            CHECK(hwrt_profiler_stop());
            stop[r] = now_s() - s0;
            hwrt_profiler_stats st;
            CHECK(hwrt_profiler_get_stats(&st));
            if (st.events < events_min) events_min = st.events;
            dropped += st.dropped;
            missing += st.device_ts_missing;
        }
    }
    printf("  rounds wall s (unprofiled, profiled):");
    for (int r = 0; r < rounds; r++) printf(" (%.4f, %.4f)", base[r], prof[r]);
    printf("\n");
    double *pair = calloc((size_t)rounds, sizeof *pair);    /* ratio within each A/B pair */
    for (int r = 0; r < rounds; r++) pair[r] = prof[r] / base[r];
    double mpair = median(pair, rounds);
    free(pair);
    double mb = median(base, rounds), mp = median(prof, rounds), ms = median(stop, rounds);
    double mcb = median(cbase, rounds), mcp = median(cprof, rounds), mst = median(start, rounds);
    double mhb = median(hbase, rounds), mhp = median(hprof, rounds);
    printf("Scale float32[%ld] x %ld launches, %ld syncs, %d rounds each (simulated NPU):\n",
           elems, ops, syncs, rounds);
    printf("  unprofiled median %.4f s (%.3f us/launch)\n", mb, mb / (double)ops * 1e6);
    printf("  profiled   median %.4f s (%.3f us/launch)\n", mp, mp / (double)ops * 1e6);
    printf("  ratio of medians profiled/unprofiled %.4f (%+.2f%%), %+.1f ns per launch\n",
           mp / mb, (mp / mb - 1) * 100, (mp - mb) / (double)ops * 1e9);
    printf("  median of the per-pair ratios %.4f (%+.2f%%; each pair ran back to back)\n",
           mpair, (mpair - 1) * 100);
    printf("  process CPU time median: unprofiled %.4f s, profiled %.4f s, ratio %.4f "
           "(%+.1f ns CPU per launch)\n", mcb, mcp, mcp / mcb, (mcp - mcb) / (double)ops * 1e9);
    printf("  launching thread CPU time median: unprofiled %.4f s, profiled %.4f s, ratio %.4f "
           "(%+.1f ns per launch)\n", mhb, mhp, mhp / mhb, (mhp - mhb) / (double)ops * 1e9);
    printf("  hwrt_profiler_start median %.4f s (first one fills the buffer pool); "
           "hwrt_profiler_stop (resolve + write %ld records) median %.4f s\n", mst,
           ops + syncs, ms);
    printf("  events per profiled round >= %llu (expected %ld), dropped %llu, launches "
           "without device time %llu\n", (unsigned long long)events_min, ops + syncs,
           (unsigned long long)dropped, (unsigned long long)missing);
    free(base);
    free(start);
    free(cbase);
    free(cprof);
    free(hbase);
    free(hprof);
    free(prof);
    free(stop);
    CHECK(hwrt_tensor_release(t));
}

int main(int argc, char **argv)
{
    long ops = 100000;
    int rounds = 7;
    const char *elems = "65536,4096", *out = "/tmp/hwrt-bench-prof";
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
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ","))
        bench(ops, rounds, atol(tok), out);
    CHECK(hwrt_shutdown());
    return 0;
}
