/* hwrt-bench-graph: launch cost per op, eager vs graph replay, measured in the same run.
 *
 * The same program of K small ops (add, relu, scale on tensors of E floats, so device
 * time is small next to launch time) is queued R times eagerly and R times as one graph
 * replay. For each repetition it times (1) the host time spent queueing — the launch
 * cost the graph is meant to cut — and (2) queueing plus stream synchronize. It prints
 * medians per op and the replay/eager ratios; the results of both paths are compared
 * so the figure is for equal work.
 *
 *   hwrt-bench-graph [--ops K] [--reps R] [--elems E]     (defaults 64, 31, 256) */
#include <hwrt.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "example_check.h"   /* CHECK(call) */
#include "bench_stats.h"   /* bench_median */
#include "base/json.h"
#include "cli.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static hwrt_tensor a, b, c;

static void program(int k, hwrt_stream s)
{
    for (int i = 0; i < k; i++) {
        switch (i % 3) {
        case 0: CHECK(hwrt_op_add(c, a, b, s)); break;
        case 1: CHECK(hwrt_op_relu(c, c, s)); break;
        default: CHECK(hwrt_op_scale(c, c, 0.5, s)); break;
        }
    }
}

static const cli_opt opts[] = {
    {"ops", 256, CLI_REQUIRED, "K", "ops per program (default 64)"},
    {"reps", 257, CLI_REQUIRED, "R", "repetitions, >= 3 (default 31)"},
    {"elems", 258, CLI_REQUIRED, "E", "floats per tensor (default 256)"},
    {"json", 259, CLI_NONE, NULL, "one JSON object on stdout"},
    {"quick", 260, CLI_NONE, NULL, "a smoke run: --ops 4 --reps 3"},
    {0},
};

static const cli_tool tool = {
    .name = "hwrt-bench-graph",
    .synopsis = "hwrt-bench-graph [--ops K] [--reps R] [--elems E] [--json]",
    .about = "Graph replay against the same ops queued eagerly, in the same run.",
    .opts = opts,
};

typedef struct { int k, reps, json; long elems; } graph_opts;

static int on_opt(void *ctx, int key, const char *arg)
{
    graph_opts *o = ctx;
    switch (key) {
    case 256: return cli_int(&tool, "--ops", arg, 1, 1 << 20, &o->k);
    case 257: return cli_int(&tool, "--reps", arg, 3, 1 << 20, &o->reps);
    case 258: return cli_long(&tool, "--elems", arg, 1, 1L << 32, &o->elems);
    case 259: o->json = 1; return CLI_OK;
    case 260: o->k = 4; o->reps = 3; return CLI_OK;
    }
    return CLI_USAGE;
}

int main(int argc, char **argv)
{
    graph_opts o = {.k = 64, .reps = 31, .elems = 256};
    int first, done;
    int rc = cli_parse(&tool, argc, argv, on_opt, &o, &first, &done);
    if (rc != CLI_OK || done) return rc;
    int k = o.k, reps = o.reps, json = o.json;
    long elems = o.elems;

    CHECK(hwrt_set_device(NULL, 0));
    hwrt_device_props props;
    CHECK(hwrt_get_device_props(0, &props));
    float *host = malloc((size_t)elems * sizeof *host), *r1 = malloc((size_t)elems * sizeof *r1),
          *r2 = malloc((size_t)elems * sizeof *r2);
    for (long i = 0; i < elems; i++) host[i] = (float)(i % 13) - 6;
    int64_t shape[1] = {elems};
    CHECK(hwrt_tensor_from_host(&a, HWRT_FLOAT32, 1, shape, host));
    CHECK(hwrt_tensor_from_host(&b, HWRT_FLOAT32, 1, shape, host));
    CHECK(hwrt_tensor_empty(&c, HWRT_FLOAT32, 1, shape));
    hwrt_stream s;
    CHECK(hwrt_stream_create(&s, 0));

    hwrt_graph g;
    CHECK(hwrt_stream_begin_capture(s));
    program(k, s);
    CHECK(hwrt_stream_end_capture(s, &g));

    double *eq = malloc((size_t)reps * sizeof *eq), *ee = malloc((size_t)reps * sizeof *ee);
    double *gq = malloc((size_t)reps * sizeof *gq), *ge = malloc((size_t)reps * sizeof *ge);
    program(k, s);                                   /* warm up both paths */
    CHECK(hwrt_graph_launch(g, s));
    CHECK(hwrt_stream_synchronize(s));
    for (int r = 0; r < reps; r++) {                 /* interleaved: same conditions */
        double t0 = now_ns();
        program(k, s);
        double t1 = now_ns();
        CHECK(hwrt_stream_synchronize(s));
        double t2 = now_ns();
        eq[r] = (t1 - t0) / k;
        ee[r] = (t2 - t0) / k;
        t0 = now_ns();
        CHECK(hwrt_graph_launch(g, s));
        t1 = now_ns();
        CHECK(hwrt_stream_synchronize(s));
        t2 = now_ns();
        gq[r] = (t1 - t0) / k;
        ge[r] = (t2 - t0) / k;
    }
    /* equal work: one more of each from the same inputs gives the same result */
    program(k, s);
    CHECK(hwrt_tensor_copy_to_host(c, r1, (size_t)elems * sizeof *r1));
    CHECK(hwrt_graph_launch(g, s));
    CHECK(hwrt_tensor_copy_to_host(c, r2, (size_t)elems * sizeof *r2));
    int equal = !memcmp(r1, r2, (size_t)elems * sizeof *r1);

    double meq = bench_median(eq, reps), mgq = bench_median(gq, reps);
    double mee = bench_median(ee, reps), mge = bench_median(ge, reps);
    if (json) {
        hwi_jw j;
        hwi_jw_begin(&j, stdout, 0);
        hwi_jw_obj(&j);
        hwi_jw_kstr(&j, "benchmark", "graph");
        hwi_jw_kint(&j, "ops", k);
        hwi_jw_kint(&j, "elems", elems);
        hwi_jw_kint(&j, "reps", reps);
        hwi_jw_kstr(&j, "device", props.name);
        hwi_jw_kbool(&j, "simulated", props.simulated);
        hwi_jw_kstr(&j, "unit", "ns per op, median");
        hwi_jw_key(&j, "launch");
        hwi_jw_obj(&j);
        hwi_jw_knum(&j, "eager", meq);
        hwi_jw_knum(&j, "replay", mgq);
        hwi_jw_knum(&j, "ratio", mgq / meq);
        hwi_jw_close(&j);
        hwi_jw_key(&j, "queue_and_sync");
        hwi_jw_obj(&j);
        hwi_jw_knum(&j, "eager", mee);
        hwi_jw_knum(&j, "replay", mge);
        hwi_jw_knum(&j, "ratio", mge / mee);
        hwi_jw_close(&j);
        hwi_jw_kbool(&j, "results_equal", equal);
        hwi_jw_close(&j);
        if (hwi_jw_end(&j)) equal = 0;
    } else {
        printf("hwrt-bench-graph: %d ops of %ld floats, %d repetitions, device \"%s\"%s\n", k, elems,
               reps, props.name, props.simulated ? " (simulated)" : "");
        printf("  launch cost per op (host time queueing), median:\n");
        printf("    eager ops          %8.0f ns/op   (baseline)\n", meq);
        printf("    graph replay       %8.0f ns/op   ratio replay/eager %.2f\n", mgq, mgq / meq);
        printf("  queue + synchronize per op, median:\n");
        printf("    eager ops          %8.0f ns/op   (baseline)\n", mee);
        printf("    graph replay       %8.0f ns/op   ratio replay/eager %.2f\n", mge, mge / mee);
        printf("  results equal: %s\n", equal ? "yes" : "NO");
    }

    CHECK(hwrt_graph_destroy(g));
    CHECK(hwrt_stream_destroy(s));
    CHECK(hwrt_tensor_release(a));
    CHECK(hwrt_tensor_release(b));
    CHECK(hwrt_tensor_release(c));
    CHECK(hwrt_shutdown());
    free(host); free(r1); free(r2); free(eq); free(ee); free(gq); free(ge);
    return equal ? 0 : 1;
}
