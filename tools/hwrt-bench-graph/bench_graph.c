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

int main(int argc, char **argv)
{
    int k = 64, reps = 31;
    long elems = 256;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (i + 1 < argc && !strcmp(argv[i], "--ops")) k = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--reps")) reps = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--elems")) elems = atol(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--ops K] [--reps R] [--elems E] [--json]\n", argv[0]);
            return 2;
        }
    }
    if (k < 1 || reps < 3 || elems < 1) { fprintf(stderr, "hwrt-bench-graph: bad arguments\n"); return 2; }

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
        printf("{\"benchmark\": \"graph\", \"ops\": %d, \"elems\": %ld, \"reps\": %d, "
               "\"device\": \"%s\", \"simulated\": %s, \"unit\": \"ns per op, median\", "
               "\"launch\": {\"eager\": %.1f, \"replay\": %.1f, \"ratio\": %.3f}, "
               "\"queue_and_sync\": {\"eager\": %.1f, \"replay\": %.1f, \"ratio\": %.3f}, "
               "\"results_equal\": %s}\n", k, elems, reps, props.name,
               props.simulated ? "true" : "false", meq, mgq, mgq / meq, mee, mge, mge / mee,
               equal ? "true" : "false");
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
