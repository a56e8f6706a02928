/* --min-capacity: the smallest simulated device on which a trace replays without running
 * out of memory, per mode (plain segments, expandable segments), found by bisection in
 * 2 MiB steps (the device's page), each trial a fresh device; reported in bytes and as
 * a multiple of the trace's peak of live requested bytes. Then each named device
 * (--devices; by default an Atlas 800I A2 card and an H200) is tried directly. */
#include "bench.h"
#include "progress.h"

#include <hwrt.h>

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GRANULE ((size_t)2 << 20)
#define MAX_DEVICES 16

typedef struct { char name[64]; size_t capacity; int fits[2]; } named_device;

/* npu-smi reports 65536 MB of HBM on an Atlas 800I A2's NPU, nvidia-smi 143771 MiB on an H200 */
static const char *const default_devices = "Atlas 800I A2=64GiB,H200=143771MiB";

static int bench_parse_size(const char *s, size_t *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v >= 0)) return 0;
    while (*end == ' ') end++;
    double m = 1;
    switch (tolower((unsigned char)*end)) {
    case 'k': m = 1024.0; end++; break;
    case 'm': m = 1048576.0; end++; break;
    case 'g': m = 1073741824.0; end++; break;
    case 't': m = 1099511627776.0; end++; break;
    default: break;
    }
    if (m > 1 && tolower((unsigned char)*end) == 'i') end++;
    if (tolower((unsigned char)*end) == 'b') end++;
    if (*end || v * m > 4.0e18) return 0;
    *out = (size_t)(v * m);
    return 1;
}

static int parse_devices(const char *list, named_device *d, int *n)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
    *n = 0;
    char *save = NULL;
    for (char *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        if (*n == MAX_DEVICES) break;
        char *eq = strchr(it, '=');
        const char *size = eq ? eq + 1 : it;
        if (!bench_parse_size(size, &d[*n].capacity) || d[*n].capacity < GRANULE) {
            fprintf(stderr, "hwrt-bench-pool: --devices item '%s': expected SIZE or NAME=SIZE, "
                    "e.g. \"H200=141GiB\"\n", it);
            return 0;
        }
        if (eq) *eq = 0;
        snprintf(d[*n].name, sizeof d[*n].name, "%s", eq ? it : size);
        (*n)++;
    }
    return 1;
}

typedef struct {
    size_t min_capacity;          /* 0: no fit up to the search limit */
    size_t limit;
    int trials;
    size_t fail_capacity;         /* largest failing size tried, and why */
    char fail_error[1024];
} mode_result;

static cli_progress progress;     /* a line per trial on a terminal (progress.h) */
static long ntrials;

/* 1 fits, 0 out of memory (r->error), -1 setup error. */
static int trial(const trace *t, const bench_opts *o, int expandable, size_t cap, replay_result *r)
{
    replay_opts ro = {.expandable = expandable, .capacity = cap, .overhead = o->overhead,
                      .conf = o->conf};
    char detail[96];
    snprintf(detail, sizeof detail, "%s, trying %.0f MiB", expandable ? "expandable" : "plain",
             (double)cap / 1048576.0);
    cli_progress_step(&progress, ++ntrials, 0, detail);
    return trace_replay(t, &ro, r);
}

static int bisect(const trace *t, const bench_opts *o, int expandable, mode_result *m)
{
    memset(m, 0, sizeof *m);
    replay_result r;
    size_t need = t->peak_requested + o->overhead;
    /* in granules: below lo the peak cannot fit at all; find a hi that fits */
    size_t lo = (need + GRANULE - 1) / GRANULE - 1, hi = lo + 1 + lo / 4;
    size_t limit = 64 * (lo + 1);
    m->limit = limit * GRANULE;
    for (;;) {
        int ok = trial(t, o, expandable, hi * GRANULE, &r);
        m->trials++;
        if (ok < 0) return 0;
        if (ok) break;
        lo = hi;
        m->fail_capacity = hi * GRANULE;
        snprintf(m->fail_error, sizeof m->fail_error, "op %zu: %s", r.failed_op, r.error);
        if (hi >= limit) return 1;              /* no fit: min_capacity stays 0 */
        hi = hi * 2 > limit ? limit : hi * 2;
    }
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        int ok = trial(t, o, expandable, mid * GRANULE, &r);
        m->trials++;
        if (ok < 0) return 0;
        if (ok) {
            hi = mid;
        } else {
            lo = mid;
            m->fail_capacity = mid * GRANULE;
            snprintf(m->fail_error, sizeof m->fail_error, "op %zu: %s", r.failed_op, r.error);
        }
    }
    m->min_capacity = hi * GRANULE;
    return 1;
}

static double over_peak(const trace *t, const bench_opts *o, size_t cap)
{
    return (double)(cap - o->overhead) / (double)t->peak_requested;
}

int bench_min_capacity(const bench_opts *o)
{
    named_device dev[MAX_DEVICES];
    int ndev = 0;
    if (!parse_devices(o->devices ? o->devices : default_devices, dev, &ndev)) return 2;
    trace t;
    if (!trace_load(o->mincap, o->device, &t)) { trace_release(&t); return 1; }
    cli_progress_begin(&progress, "hwrt-bench-pool", "min-capacity: trial", o->quiet);
    ntrials = 0;
    static const char *const modes[2] = {"plain", "expandable"};
    static const double targets[2] = {1.03, 1.01};
    mode_result m[2];
    char snap[2][1100] = {"", ""};
    for (int k = 0; k < 2; k++) {
        if (!bisect(&t, o, k, &m[k])) { cli_progress_end(&progress); trace_release(&t); return 1; }
        /* --oom-snapshot: the replay 2 MiB below the minimum once more, snapshot at its
         * failure (when that size was tried: below the peak requested nothing is) */
        if (o->oom_snapshot && m[k].min_capacity && m[k].fail_capacity == m[k].min_capacity - GRANULE) {
            snprintf(snap[k], sizeof snap[k], "%s.%s.json", o->oom_snapshot, modes[k]);
            replay_opts ro = {.expandable = k, .capacity = m[k].fail_capacity,
                              .overhead = o->overhead, .conf = o->conf, .snapshot = snap[k]};
            replay_result r;
            if (trace_replay(&t, &ro, &r) != 0) snap[k][0] = 0;
        }
    }
    for (int i = 0; i < ndev; i++)
        for (int k = 0; k < 2; k++) {
            replay_result r;
            int ok = dev[i].capacity > o->overhead ? trial(&t, o, k, dev[i].capacity, &r) : 0;
            if (ok < 0) { cli_progress_end(&progress); trace_release(&t); return 1; }
            dev[i].fits[k] = ok;
        }
    cli_progress_end(&progress);
    int met = 1;
    for (int k = 0; k < 2; k++)
        met &= m[k].min_capacity && over_peak(&t, o, m[k].min_capacity) <= targets[k];
    if (o->json) {
        hwi_jw *j = o->jw;
        hwi_jw_obj(j);
        hwi_jw_kstr(j, "benchmark", "pool_min_capacity");
        hwi_jw_kstr(j, "trace", o->mincap);
        hwi_jw_kint(j, "device", t.device);
        hwi_jw_kuint(j, "events", t.n);
        hwi_jw_kuint(j, "peak_requested", t.peak_requested);
        hwi_jw_kuint(j, "context_overhead", o->overhead);
        hwi_jw_kuint(j, "step", GRANULE);
        hwi_jw_kstr(j, "conf", o->conf ? o->conf : "");
        hwi_jw_key(j, "results");
        hwi_jw_arr(j);
        for (int k = 0; k < 2; k++) {
            hwi_jw_obj(j);
            hwi_jw_kstr(j, "mode", modes[k]);
            hwi_jw_kbool(j, "fits", m[k].min_capacity != 0);
            hwi_jw_kuint(j, "min_capacity", m[k].min_capacity);
            hwi_jw_knum(j, "over_peak_requested",
                        m[k].min_capacity ? over_peak(&t, o, m[k].min_capacity) : 0.0);
            hwi_jw_kint(j, "trials", m[k].trials);
            hwi_jw_kuint(j, "largest_failing", m[k].fail_capacity);
            hwi_jw_kstr(j, "failure", m[k].fail_error);
            if (o->oom_snapshot) hwi_jw_kstr(j, "oom_snapshot", snap[k]);
            hwi_jw_close(j);
        }
        hwi_jw_close(j);
        hwi_jw_key(j, "devices");
        hwi_jw_arr(j);
        for (int i = 0; i < ndev; i++) {
            hwi_jw_obj(j);
            hwi_jw_kstr(j, "name", dev[i].name);
            hwi_jw_kuint(j, "capacity", dev[i].capacity);
            hwi_jw_kbool(j, "plain", dev[i].fits[0]);
            hwi_jw_kbool(j, "expandable", dev[i].fits[1]);
            hwi_jw_close(j);
        }
        hwi_jw_close(j);
        hwi_jw_key(j, "targets");
        hwi_jw_obj(j);
        hwi_jw_knum(j, "plain", targets[0]);
        hwi_jw_knum(j, "expandable", targets[1]);
        hwi_jw_close(j);
        hwi_jw_kbool(j, "met", met);
        hwi_jw_close(j);
        trace_release(&t);
        return 0;
    }
    printf("hwrt-bench pool --min-capacity %s: %zu events, device %d, peak requested %.1f MiB, "
           "context overhead %.1f MiB%s%s\n", o->mincap, t.n, t.device,
           (double)t.peak_requested / 1048576.0, (double)o->overhead / 1048576.0,
           o->conf ? ", conf " : "", o->conf ? o->conf : "");
    printf("%-11s %17s %12s %7s  %s\n", "mode", "min_capacity_MiB", "x_peak_req", "trials",
           "2 MiB less fails with");
    for (int k = 0; k < 2; k++) {
        if (m[k].min_capacity)
            printf("%-11s %17.1f %12.4f %7d  %s\n", modes[k], (double)m[k].min_capacity / 1048576.0,
                   over_peak(&t, o, m[k].min_capacity), m[k].trials,
                   m[k].fail_capacity ? m[k].fail_error : "(below the peak requested)");
        else
            printf("%-11s %17s %12s %7d  no fit up to %.1f MiB: %s\n", modes[k], "-", "-",
                   m[k].trials, (double)m[k].limit / 1048576.0, m[k].fail_error);
    }
    for (int k = 0; k < 2; k++)
        if (snap[k][0]) printf("%s: memory snapshot at %.1f MiB in %s\n", modes[k],
                               (double)m[k].fail_capacity / 1048576.0, snap[k]);
    for (int i = 0; i < ndev; i++)
        printf("fits on %s (%.1f GiB): plain %s, expandable %s\n", dev[i].name,
               (double)dev[i].capacity / 1073741824.0, dev[i].fits[0] ? "yes" : "NO",
               dev[i].fits[1] ? "yes" : "NO");
    printf("targets: <= %.2fx plain, <= %.2fx expandable: %s\n", targets[0], targets[1],
           met ? "met" : "NOT met");
    trace_release(&t);
    return 0;
}
