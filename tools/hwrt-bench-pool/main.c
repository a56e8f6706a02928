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

static void usage(FILE *f)
{
    fprintf(f, "usage: hwrt-bench-pool [--reps N] [--pairs N] [--json]\n"
               "       hwrt-bench-pool --trace FILE [--json] [--conf K:V,..] [--device N]\n"
               "       hwrt-bench-pool --min-capacity FILE [--json] [--conf K:V,..] [--device N]\n"
               "                       [--devices NAME=SIZE,..] [--overhead SIZE]\n"
               "trace CSV (HWRT_ALLOC_TRACE writes it): header action,id,size,stream and\n"
               "optionally tag,time_ns,device; action alloc|free|tag; id names the allocation;\n"
               "size in bytes (alloc); stream an integer index (0 = default)\n"
               "--min-capacity: smallest device per mode (2 MiB steps, context overhead\n"
               "--overhead, default 0), then a replay on each of --devices (default\n"
               "\"Atlas 800I A2=64GiB,H200=143771MiB\")\n");
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
    if (o->json) printf("{\n\"benchmark\": \"pool\",\n\"latency\": ");
    int rc = bench_latency(o);
    if (o->json) printf(",\n\"traces\": [\n");
    int first = 1;
    char dir[1024];
    traces_dir(dir, sizeof dir);
    for (size_t i = 0; i < sizeof traces / sizeof traces[0]; i++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, traces[i]);
        if (access(path, R_OK) != 0) continue;
        if (o->json && !first) printf(",\n");
        if (!o->json) printf("\n");
        fflush(stdout);
        o->trace = path;
        rc |= bench_trace(o);
        first = 0;
    }
    o->trace = NULL;
    if (o->json) printf("]\n}\n");
    return rc;
}

int main(int argc, char **argv)
{
    bench_opts o = {.reps = 21, .pairs = 100000, .device = -1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--json")) o.json = 1;
        else if (!strcmp(a, "--trace") && i + 1 < argc) o.trace = argv[++i];
        else if (!strcmp(a, "--min-capacity") && i + 1 < argc) o.mincap = argv[++i];
        else if (!strcmp(a, "--conf") && i + 1 < argc) o.conf = argv[++i];
        else if (!strcmp(a, "--devices") && i + 1 < argc) o.devices = argv[++i];
        else if (!strcmp(a, "--device") && i + 1 < argc) o.device = atoi(argv[++i]);
        else if (!strcmp(a, "--overhead") && i + 1 < argc) {
            if (!bench_parse_size(argv[++i], &o.overhead)) {
                fprintf(stderr, "hwrt-bench-pool: --overhead '%s' is not a size (e.g. 300MiB)\n", argv[i]);
                return 2;
            }
        }
        else if (!strcmp(a, "--reps") && i + 1 < argc) o.reps = atoi(argv[++i]);
        else if (!strcmp(a, "--pairs") && i + 1 < argc) o.pairs = atol(argv[++i]);
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        else {
            fprintf(stderr, "hwrt-bench-pool: unknown or incomplete argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (o.reps < 1 || o.pairs < 1) {
        fprintf(stderr, "hwrt-bench-pool: --reps and --pairs must be positive\n");
        return 2;
    }
    setenv("HWRT_SIM_MEMORY", "256GB", 0);   /* room for a trace's peak; committed on use */
    if (o.device < -1 || o.device > 1023) {
        fprintf(stderr, "hwrt-bench-pool: --device must be 0 .. 1023\n");
        return 2;
    }
    /* replays measure this process's device alone: no figures of other processes (and
     * no exclusive-mode holder elsewhere) enter a trial */
    if (o.mincap || o.trace) setenv("HWRT_SIM_REGISTRY", "off", 1);
    if (o.mincap) return bench_min_capacity(&o);
    if (o.trace) return bench_trace(&o);
    ensure_jemalloc_loadable(argv);
    return run_all(&o);
}
