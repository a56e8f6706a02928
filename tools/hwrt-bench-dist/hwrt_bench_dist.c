/* hwrt-bench-dist: allreduce (float32 SUM, in place) through hwrt on device tensors
 * against raw MPI on host buffers of the same size, in the same run:
 *   raw MPI_Allreduce, host    the baseline: a malloc'd host buffer
 *   raw MPI_Allreduce, device  the same call on the tensor's own (sim) device memory, the
 *                              bytes hwrt hands to MPI: isolates hwrt's overhead
 *   hwrt_allreduce             device-direct (sim memory is host-addressable)
 *   hwrt_allreduce staged      dist_force_staging: D2H + MPI + H2D through pinned buffers
 * The variants take turns op by op (each op after a barrier) so that load from other
 * processes hits them alike; an op's time is the slowest rank's; figures are medians over
 * ops, which a few ops stalled by the scheduler on a busy machine do not move.
 * algbw = bytes / time; busbw = algbw * 2 (n - 1) / n (the ring's traffic per rank).
 *
 *   mpirun --allow-run-as-root --oversubscribe -np 2 ./build/bin/hwrt-bench-dist
 * Options: --sizes 1MiB,64MiB, --reps N (ops per variant: default 200; above 4 MiB a
 * 25th of it, at least 8), --json (one object: a row per size and variant). */
#include <hwrt.h>
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "bench_stats.h"   /* bench_median */
#include "base/json.h"
#include "cli.h"

#define CHECK(call)                                                                  \
    do {                                                                             \
        hwrt_status st_ = (call);                                                    \
        if (st_ != HWRT_SUCCESS) {                                                   \
            fprintf(stderr, "%s failed: %s: %s\n", #call, hwrt_status_name(st_),     \
                    hwrt_last_error());                                              \
            MPI_Abort(MPI_COMM_WORLD, 1);                                            \
        }                                                                            \
    } while (0)

enum { V_RAW, V_RAW_DEV, V_HWRT, V_HWRT_STAGED, NV };
static const char *const vname[NV] = {"raw MPI_Allreduce, host", "raw MPI_Allreduce, device",
                                      "hwrt_allreduce", "hwrt_allreduce staged"};

typedef struct {
    float *host;
    hwrt_tensor t;
    size_t n;
} bufs;

static void run_one(int v, bufs *b)
{
    switch (v) {
    case V_RAW:
        MPI_Allreduce(MPI_IN_PLACE, b->host, (int)b->n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case V_RAW_DEV: {
        void *d = NULL;
        CHECK(hwrt_tensor_data(b->t, &d));
        MPI_Allreduce(MPI_IN_PLACE, d, (int)b->n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
    }
    default:
        CHECK(hwrt_allreduce(b->t, HWRT_REDUCE_SUM, NULL));
        break;
    }
}

/* Seconds of one op of variant v after a barrier, on this rank (the slowest rank's time is
 * taken later, for all samples at once, so that no extra message sits in the timing). */
static double one_op(int v, bufs *b)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    run_one(v, b);
    return MPI_Wtime() - t0;
}
static int json;                 /* --json: one object, a row per size and variant */
static hwi_jw jw;

static void bench_size(size_t bytes, int reps, int rank, int size)
{
    bufs b = {.n = bytes / sizeof(float)};
    b.host = calloc(b.n, sizeof(float));       /* zeros: repeated sums stay finite */
    int64_t shape[1] = {(int64_t)b.n};
    CHECK(hwrt_tensor_from_host(&b.t, HWRT_FLOAT32, 1, shape, b.host));
    if (bytes > (4u << 20)) reps = reps / 25 > 8 ? reps / 25 : 8;   /* large: fewer samples */
    double *samples[NV];
    for (int v = 0; v < NV; v++) {
        samples[v] = calloc((size_t)reps, sizeof(double));
        CHECK(hwrt_set_config("dist_force_staging", v == V_HWRT_STAGED ? "1" : "0"));
        one_op(v, &b);                         /* warm-up: buffers, connections */
    }
    /* op by op, the variants in turn (rotated), so that every variant meets the same load */
    for (int r = 0; r < reps; r++)
        for (int k = 0; k < NV; k++) {
            int v = (k + r) % NV;
            CHECK(hwrt_set_config("dist_force_staging", v == V_HWRT_STAGED ? "1" : "0"));
            samples[v][r] = one_op(v, &b);
        }
    for (int v = 0; v < NV; v++)
        MPI_Allreduce(MPI_IN_PLACE, samples[v], reps, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && json) {
        double med[NV];
        for (int v = 0; v < NV; v++) med[v] = bench_median(samples[v], reps);
        for (int v = 0; v < NV; v++) {
            hwi_jw_obj(&jw);
            hwi_jw_kuint(&jw, "bytes", bytes);
            hwi_jw_kstr(&jw, "variant", vname[v]);
            hwi_jw_knum(&jw, "median_ms", med[v] * 1e3);
            hwi_jw_knum(&jw, "algbw_gbps", bytes / med[v] / 1e9);
            hwi_jw_knum(&jw, "vs_raw", med[V_RAW] / med[v]);
            hwi_jw_close(&jw);
        }
    } else if (rank == 0) {
        double med[NV];
        printf("\nallreduce float32 sum, %zu bytes (%.0f MiB), %d ranks, %d ops per variant\n",
               bytes, bytes / 1048576.0, size, reps);
        printf("  %-28s %12s %12s %12s %10s\n", "variant", "median ms", "algbw GB/s", "busbw GB/s",
               "vs raw");
        for (int v = 0; v < NV; v++) med[v] = bench_median(samples[v], reps);
        for (int v = 0; v < NV; v++) {
            double alg = bytes / med[v] / 1e9;
            printf("  %-28s %12.3f %12.2f %12.2f %9.2fx\n", vname[v], med[v] * 1e3, alg,
                   alg * 2.0 * (size - 1) / size, med[V_RAW] / med[v]);
        }
        printf("  ratio hwrt_allreduce / raw MPI_Allreduce algbw: %.2fx vs host buffer (target "
               ">= 0.9x), %.2fx vs the same device memory\n", med[V_RAW] / med[V_HWRT],
               med[V_RAW_DEV] / med[V_HWRT]);
    }
    for (int v = 0; v < NV; v++) free(samples[v]);
    CHECK(hwrt_tensor_release(b.t));
    free(b.host);
}

static const cli_opt opts[] = {
    {"sizes", 256, CLI_REQUIRED, "LIST", "message sizes, comma-separated (default 1MiB,64MiB)"},
    {"reps", 257, CLI_REQUIRED, "N", "ops per variant (default 200; large sizes 1/25th, >= 8)"},
    {"json", 258, CLI_NONE, NULL, "one JSON object on stdout (rank 0)"},
    {"quick", 259, CLI_NONE, NULL, "a smoke run: --sizes 4096 --reps 5"},
    {0},
};

static const cli_tool tool = {
    .name = "hwrt-bench-dist",
    .synopsis = "mpirun -n N hwrt-bench-dist [--sizes LIST] [--reps N] [--json]",
    .about = "Allreduce through hwrt next to raw MPI_Allreduce in the same run.",
    .opts = opts,
};

typedef struct { const char *sizes; int reps; size_t bytes[64]; int nsizes; } dist_opts;

static int on_opt(void *ctx, int key, const char *arg)
{
    dist_opts *o = ctx;
    if (key == 258) { json = 1; return CLI_OK; }
    if (key == 259) { o->bytes[0] = 4096; o->nsizes = 1; o->reps = 5; return CLI_OK; }
    if (key == 257) return cli_int(&tool, "--reps", arg, 1, 1 << 24, &o->reps);
    char list[512];
    snprintf(list, sizeof list, "%s", arg);
    o->nsizes = 0;
    char *save = NULL;
    for (char *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
        if (o->nsizes == 64) return cli_usage(&tool, "--sizes lists at most 64 sizes");
        if (cli_size(&tool, "--sizes", s, sizeof(float), &o->bytes[o->nsizes]) != CLI_OK)
            return CLI_USAGE;
        o->nsizes++;
    }
    if (!o->nsizes) return cli_usage(&tool, "--sizes '%s' names no size", arg);
    return CLI_OK;
}

int main(int argc, char **argv)
{
    dist_opts o = {.reps = 200, .bytes = {1u << 20, 64u << 20}, .nsizes = 2};
    int first, done;
    int rc = cli_parse(&tool, argc, argv, on_opt, &o, &first, &done);
    if (rc != CLI_OK || done) return rc;
    /* The program owns MPI; hwrt joins the running library. SERIALIZED because hwrt calls
     * MPI from its communication thread (one call at a time). */
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    CHECK(hwrt_dist_init());
    CHECK(hwrt_dist_bind_device("sim"));
    int rank = hwrt_dist_rank(), size = hwrt_dist_size();
    hwi_jw_begin(&jw, stdout, 0);
    if (rank == 0 && json) {
        hwi_jw_obj(&jw);
        hwi_jw_kstr(&jw, "benchmark", "allreduce float32 sum");
        hwi_jw_kint(&jw, "ranks", size);
        hwi_jw_kstr(&jw, "backend", hwrt_current_backend());
        hwi_jw_key(&jw, "rows");
        hwi_jw_arr(&jw);
    } else if (rank == 0)
        printf("hwrt-bench-dist: %d ranks, backend %s (simulated device memory, host-addressable)"
               "; medians of interleaved ops; same-run baselines\n", size,
               hwrt_current_backend());
    for (int i = 0; i < o.nsizes; i++) bench_size(o.bytes[i], o.reps, rank, size);
    if (rank == 0 && json) {
        hwi_jw_close(&jw);
        hwi_jw_close(&jw);
        rc = hwi_jw_end(&jw) ? CLI_FAIL : CLI_OK;
    }
    CHECK(hwrt_dist_finalize());   /* leaves MPI to the program */
    hwrt_shutdown();
    MPI_Finalize();
    return rc;
}
