/* --trace: fragmentation of the pool on a recorded allocation sequence (trace_csv.c reads
 * and replays it), on a device that never fills: replayed twice, plain and with
 * expandable segments, reporting peak reserved against peak allocated. */
#include "bench.h"

#include <hwrt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_result(const bench_opts *o, const char *mode, const replay_result *r, int last)
{
    double ratio = (double)r->peak_resv / (double)r->peak_alloc;
    double rreq = (double)r->peak_resv / (double)r->peak_req;
    if (o->json) {
        printf("    {\"mode\": \"%s\", \"peak_allocated\": %zu, \"peak_reserved\": %zu, "
               "\"ratio\": %.4f, \"peak_requested\": %zu, \"reserved_over_requested\": %.4f, "
               "\"device_allocs\": %lld, \"device_frees\": %lld, \"device_syncs\": %lld, "
               "\"alloc_retries\": %lld, \"cpu_ns_per_op\": %.1f}%s\n", mode, r->peak_alloc,
               r->peak_resv, ratio, r->peak_req, rreq, r->dev_allocs, r->dev_frees, r->syncs,
               r->retries, r->ns_per_op, last ? "" : ",");
        return;
    }
    printf("%-11s %14.1f %14.1f %8.4f %14.1f %8.4f %9lld %9lld %7lld %8.1f\n", mode,
           (double)r->peak_alloc / 1048576.0, (double)r->peak_resv / 1048576.0, ratio,
           (double)r->peak_req / 1048576.0, rreq, r->dev_allocs, r->dev_frees, r->syncs,
           r->ns_per_op);
}

int bench_trace(const bench_opts *o)
{
    trace t;
    if (!trace_load(o->trace, o->device, &t)) { trace_release(&t); return 2; }
    replay_result plain, exp;
    replay_opts ro_p = {.conf = o->conf}, ro_x = {.expandable = 1, .conf = o->conf};
    int a = trace_replay(&t, &ro_p, &plain), b = a < 0 ? -1 : trace_replay(&t, &ro_x, &exp);
    if (a <= 0 || b <= 0) {
        if (a == 0 || b == 0)
            fprintf(stderr, "hwrt-bench-pool: %s replay failed at op %zu: %s\n", a == 0 ? "plain" : "expandable",
                    a == 0 ? plain.failed_op : exp.failed_op, a == 0 ? plain.error : exp.error);
        trace_release(&t);
        return 1;
    }
    if (o->json) {
        printf("{\n  \"benchmark\": \"pool_trace\",\n  \"trace\": \"%s\",\n  \"events\": %zu,\n"
               "  \"results\": [\n", o->trace, t.n);
    } else {
        printf("hwrt-bench pool --trace %s: %zu events, %zu ids and tags, %d extra streams (simulated device)\n",
               o->trace, t.n, t.nnames, t.max_stream);
        printf("%-11s %14s %14s %8s %14s %8s %9s %9s %7s %8s\n", "mode", "peak_alloc_MiB",
               "peak_resv_MiB", "ratio", "peak_req_MiB", "resv/req", "dev_alloc", "dev_free",
               "syncs", "cpu_ns/op");
    }
    print_result(o, "plain", &plain, 0);
    print_result(o, "expandable", &exp, 1);
    double rp = (double)plain.peak_resv / (double)plain.peak_alloc;
    double re = (double)exp.peak_resv / (double)exp.peak_alloc;
    int met = rp <= 1.10 && re <= 1.03;
    if (o->json)
        printf("  ],\n  \"targets\": {\"plain\": 1.10, \"expandable\": 1.03},\n  \"met\": %s\n}\n",
               met ? "true" : "false");
    else
        printf("targets: ratio <= 1.10 plain, <= 1.03 expandable: %s\n", met ? "met" : "NOT met");
    trace_release(&t);
    return 0;
}
