/* hwrt-bench-pool — `hwrt-bench pool`.
 *
 *   hwrt-bench-pool [--reps N] [--pairs N] [--json]
 *       malloc+free latency of hot sizes: hwrt's pool against glibc, jemalloc and
 *       mimalloc measured in the same run (medians of N repetitions, and ratios); then
 *       the shipped traces in bench/traces are replayed as with --trace.
 *   hwrt-bench-pool --trace FILE [--json]
 *       replay an allocation trace (CSV: action,id,size,stream[,tag,time_ns,device]) and
 *       report peak_allocated, peak_reserved and their ratio, with and without expandable
 *       segments. The device is simulated (HWRT_SIM_MEMORY, default here 256GB).
 *   hwrt-bench-pool --min-capacity FILE [--json] [--devices LIST] [--overhead SIZE]
 *       the smallest simulated device the trace replays on without running out of
 *       memory, per mode, as a multiple of its peak requested bytes (mincap.c).
 *   Both take --conf "key:value,..." (allocator settings, as HWRT_ALLOC_CONF) and
 *   --device N (the rows of device N of a trace HWRT_ALLOC_TRACE wrote). */
#include "bench.h"
#include "cli.h"

#include <hwrt.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* CPU time of the calling thread: on a shared machine, time the thread spent preempted
 * is not the allocator's; every allocator is measured the same way. */
double bench_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

enum { O_JSON = 256, O_TRACE, O_MINCAP, O_CONF, O_DEVICES, O_DEVICE, O_OVERHEAD, O_REPS,
       O_PAIRS, O_QUIET, O_QUICK, O_OOM_SNAPSHOT };

static const cli_opt opts[] = {
    {"json", O_JSON, CLI_NONE, NULL, "one JSON document on stdout"},
    {"reps", O_REPS, CLI_REQUIRED, "N", "latency: repetitions per figure (default 21)"},
    {"pairs", O_PAIRS, CLI_REQUIRED, "N", "latency: malloc+free pairs per repetition (default 100000)"},
    {"trace", O_TRACE, CLI_REQUIRED, "FILE", "replay an allocation trace (peak reserved vs allocated)"},
    {"min-capacity", O_MINCAP, CLI_REQUIRED, "FILE", "smallest device the trace replays on, per mode"},
    {"conf", O_CONF, CLI_REQUIRED, "K:V,..", "allocator settings for replays (as HWRT_ALLOC_CONF)"},
    {"device", O_DEVICE, CLI_REQUIRED, "N", "the rows of device N of a trace"},
    {"devices", O_DEVICES, CLI_REQUIRED, "NAME=SIZE,..", "--min-capacity: devices to try"},
    {"overhead", O_OVERHEAD, CLI_REQUIRED, "SIZE", "--min-capacity: context overhead (default 0)"},
    {"oom-snapshot", O_OOM_SNAPSHOT, CLI_REQUIRED, "PREFIX",
     "--min-capacity: memory snapshot of the replay 2 MiB below the minimum, per mode"},
    {"quiet", O_QUIET, CLI_NONE, NULL, "no progress line on stderr"},
    {"quick", O_QUICK, CLI_NONE, NULL, "a smoke run: --reps 3 --pairs 10000"},
    {0},
};

static const cli_tool tool = {
    .name = "hwrt-bench-pool",
    .synopsis = "hwrt-bench-pool [--reps N] [--pairs N] [--json]\n"
                "       hwrt-bench-pool --trace FILE [--json] [--conf K:V,..] [--device N]\n"
                "       hwrt-bench-pool --min-capacity FILE [--json] [--conf K:V,..] [--device N]\n"
                "                       [--devices NAME=SIZE,..] [--overhead SIZE] [--quiet]\n"
                "                       [--oom-snapshot PREFIX]",
    .about = "Pool latency against glibc, jemalloc and mimalloc in the same run, then the\n"
             "shipped traces replayed; or one trace (--trace, --min-capacity).",
    .opts = opts,
    .epilog = "trace CSV (HWRT_ALLOC_TRACE writes it): header action,id,size,stream and\n"
              "optionally tag,time_ns,device; action alloc|free|tag; id names the allocation;\n"
              "size in bytes (alloc); stream an integer index (0 = default)\n"
              "--min-capacity: smallest device per mode (2 MiB steps, context overhead\n"
              "--overhead, default 0), then a replay on each of --devices (default\n"
              "\"Atlas 800I A2=64GiB,H200=143771MiB\"); a progress line on a terminal\n",
};

static int on_opt(void *ctx, int key, const char *arg)
{
    bench_opts *o = ctx;
    switch (key) {
    case O_JSON: o->json = 1; return CLI_OK;
    case O_TRACE: o->trace = arg; return CLI_OK;
    case O_MINCAP: o->mincap = arg; return CLI_OK;
    case O_CONF: o->conf = arg; return CLI_OK;
    case O_DEVICES: o->devices = arg; return CLI_OK;
    case O_DEVICE: return cli_int(&tool, "--device", arg, 0, 1023, &o->device);
    case O_OVERHEAD: return cli_size(&tool, "--overhead", arg, 0, &o->overhead);
    case O_REPS: return cli_int(&tool, "--reps", arg, 1, 1000000, &o->reps);
    case O_PAIRS: return cli_long(&tool, "--pairs", arg, 1, 1L << 40, &o->pairs);
    case O_QUIET: o->quiet = 1; return CLI_OK;
    case O_OOM_SNAPSHOT: o->oom_snapshot = arg; return CLI_OK;
    case O_QUICK: o->reps = 3; o->pairs = 10000; return CLI_OK;
    }
    return CLI_USAGE;
}

/* libjemalloc.so.2 uses initial-exec TLS, which a dlopen after startup can only get
 * from glibc's optional static TLS reserve; when that is too small, re-run ourselves
 * once with a larger reserve (a glibc tunable) so jemalloc can be measured. */
static void ensure_jemalloc_loadable(char **argv)
{
    void *h = dlopen("libjemalloc.so.2", RTLD_NOW | RTLD_LOCAL);
    if (h || getenv("HWRT_BENCH_POOL_REEXEC")) return;
    const char *err = dlerror();
    if (!err || !strstr(err, "static TLS")) return;
    const char *old = getenv("GLIBC_TUNABLES");
    char buf[1024];
    snprintf(buf, sizeof buf, "%s%sglibc.rtld.optional_static_tls=1048576", old ? old : "",
             old ? ":" : "");
    setenv("GLIBC_TUNABLES", buf, 1);
    setenv("HWRT_BENCH_POOL_REEXEC", "1", 1);
    execv("/proc/self/exe", argv);            /* returns only on failure: go on without */
}

#ifndef HWRT_POOL_TRACES_REL
#define HWRT_POOL_TRACES_REL "../share/hwrt/traces"
#endif

/* The shipped traces: HWRT_POOL_TRACES_REL from this executable's directory (bin/ ->
 * share/hwrt/traces, in the build tree as once installed). */
static void traces_dir(char *buf, size_t len)
{
    char exe[1024];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = n > 0 ? (exe[n] = 0, strrchr(exe, '/')) : NULL;
    if (slash) *slash = 0;
    snprintf(buf, len, "%s/%s", slash ? exe : ".", HWRT_POOL_TRACES_REL);
}

/* Latency, then every shipped trace; with --json one object holding both. */
static int run_all(bench_opts *o)
{
    static const char *const traces[] = {"transformer_train.csv", "llm_serving.csv"};
    if (o->json) {
        hwi_jw_obj(o->jw);
        hwi_jw_kstr(o->jw, "benchmark", "pool");
        hwi_jw_key(o->jw, "latency");
    }
    int rc = bench_latency(o);
    if (o->json) {
        hwi_jw_key(o->jw, "traces");
        hwi_jw_arr(o->jw);
    }
    char dir[1024];
    traces_dir(dir, sizeof dir);
    for (size_t i = 0; i < sizeof traces / sizeof traces[0]; i++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, traces[i]);
        if (access(path, R_OK) != 0) continue;
        if (!o->json) printf("\n");
        fflush(stdout);
        o->trace = path;
        rc |= bench_trace(o);
    }
    o->trace = NULL;
    if (o->json) {
        hwi_jw_close(o->jw);
        hwi_jw_close(o->jw);
    }
    return rc;
}

int main(int argc, char **argv)
{
    bench_opts o = {.reps = 21, .pairs = 100000, .device = -1};
    int first, done;
    int rc = cli_parse(&tool, argc, argv, on_opt, &o, &first, &done);
    if (rc != CLI_OK || done) return rc;
    if (o.trace && o.mincap) return cli_usage(&tool, "--trace and --min-capacity exclude each other");
    setenv("HWRT_SIM_MEMORY", "256GB", 0);   /* room for a trace's peak; committed on use */
    /* replays measure this process's device alone: no figures of other processes (and
     * no exclusive-mode holder elsewhere) enter a trial */
    if (o.mincap || o.trace) setenv("HWRT_SIM_REGISTRY", "off", 1);
    else ensure_jemalloc_loadable(argv);
    hwi_jw jw;
    hwi_jw_begin(&jw, stdout, 0);
    o.jw = &jw;
    rc = o.mincap ? bench_min_capacity(&o) : o.trace ? bench_trace(&o) : run_all(&o);
    if (o.json && rc == CLI_OK && hwi_jw_end(&jw) != 0)
        return cli_fail(&tool, "the JSON output is incomplete");
    return rc;
}
