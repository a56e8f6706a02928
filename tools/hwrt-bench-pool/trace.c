/* --trace: fragmentation of the pool on a recorded allocation sequence (trace_csv.c reads
 * and replays it), on a device that never fills: replayed twice, plain and with
 * expandable segments, reporting peak reserved against peak allocated. */
#include "bench.h"

#include <hwrt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_result(const bench_opts *o, const char *mode, const replay_result *r)
{
    double ratio = (double)r->peak_resv / (double)r->peak_alloc;
    double rreq = (double)r->peak_resv / (double)r->peak_req;
    if (o->json) {
        hwi_jw *j = o->jw;
        hwi_jw_obj(j);
        hwi_jw_kstr(j, "mode", mode);
        hwi_jw_kuint(j, "peak_allocated", r->peak_alloc);
        hwi_jw_kuint(j, "peak_reserved", r->peak_resv);
        hwi_jw_knum(j, "ratio", ratio);
        hwi_jw_kuint(j, "peak_requested", r->peak_req);
        hwi_jw_knum(j, "reserved_over_requested", rreq);
        hwi_jw_kint(j, "device_allocs", r->dev_allocs);
        hwi_jw_kint(j, "device_frees", r->dev_frees);
        hwi_jw_kint(j, "device_syncs", r->syncs);
        hwi_jw_kint(j, "alloc_retries", r->retries);
        hwi_jw_knum(j, "cpu_ns_per_op", r->ns_per_op);
        hwi_jw_close(j);
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
    if (!trace_load(o->trace, o->device, &t)) { trace_release(&t); return 1; }
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
        hwi_jw_obj(o->jw);
        hwi_jw_kstr(o->jw, "benchmark", "pool_trace");
        hwi_jw_kstr(o->jw, "trace", o->trace);
        hwi_jw_kuint(o->jw, "events", t.n);
        hwi_jw_key(o->jw, "results");
        hwi_jw_arr(o->jw);
    } else {
        printf("hwrt-bench pool --trace %s: %zu events, %zu ids and tags, %d extra streams (simulated device)\n",
               o->trace, t.n, t.nnames, t.max_stream);
        printf("%-11s %14s %14s %8s %14s %8s %9s %9s %7s %8s\n", "mode", "peak_alloc_MiB",
               "peak_resv_MiB", "ratio", "peak_req_MiB", "resv/req", "dev_alloc", "dev_free",
               "syncs", "cpu_ns/op");
    }
    print_result(o, "plain", &plain);
    print_result(o, "expandable", &exp);
    double rp = (double)plain.peak_resv / (double)plain.peak_alloc;
    double re = (double)exp.peak_resv / (double)exp.peak_alloc;
    int met = rp <= 1.10 && re <= 1.03;
    if (o->json) {
        hwi_jw_close(o->jw);
        hwi_jw_key(o->jw, "targets");
        hwi_jw_obj(o->jw);
        hwi_jw_knum(o->jw, "plain", 1.10);
        hwi_jw_knum(o->jw, "expandable", 1.03);
        hwi_jw_close(o->jw);
        hwi_jw_kbool(o->jw, "met", met);
        hwi_jw_close(o->jw);
    }
    else
        printf("targets: ratio <= 1.10 plain, <= 1.03 expandable: %s\n", met ? "met" : "NOT met");
    trace_release(&t);
    return 0;
}
