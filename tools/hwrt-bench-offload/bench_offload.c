/* hwrt-bench offload: step time of an MLP, and of transformer-shaped stacks (per block
 * four weights D x 3D, 3D x D, D x 4D, 4D x D: non-uniform sizes), whose weights are 4x
 * the simulated device's memory, for on-demand, manual prefetch and learned
 * (auto_offload) modes, pinned and pageable, next to its same-run baselines: compute
 * only (all weights resident on a large device) and transfer only (the same bytes over
 * the modelled link, no compute). The link is calibrated first so transfer time is close
 * to compute time, the case where overlap matters most. Two host behaviours are
 * measured: an asynchronous host that runs ahead of the device (graph-like, one sync per
 * step) and a synchronous host that waits for every layer (eager execution reading
 * results, PyNative-like), where only prefetching can overlap a transfer with compute.
 * Medians over steps. The counted figures (bytes fetched, prefetch hits / late / misses,
 * host waits for a victim, the pool's device-wide synchronizations: the host waiting for
 * all queued work because an allocation found no memory) and the stall (device time
 * the compute stream waited for fetches) are the last round's, per step after the first
 * (which places the weights and records the order).
 *   hwrt-bench-offload [--steps N] [--rounds R] [--layers L] [--hidden H] [--batch B]
 *                      [--gbps G] [--host async|sync|both] [--model mlp|transformer|all]
 *                      [--shapes D:BLOCKS,...] [--prefetch-depth K] [--pinned-only] [--json]
 * --layers/--hidden shape the MLP; --shapes the transformer stacks (default 256:8,384:4:
 * 32 and 16 weights, the largest 12% and 28% of the device budget). */
#include "offload_mlp.h"
#include "base/json.h"
#include "cli.h"

#include <math.h>

static const char *const names[] = {"", "", "on-demand", "prefetch", "learned"};

typedef struct {
    double comp, xfer, t[5][2];
    hwrt_offload_stats st[5][2];
    hwrt_mem_stats pool[5][2];
} result;

static int pinned_only;          /* --pinned-only: skip the pageable runs */

/* Every variant `rounds` times, interleaved (round 1 of each, then round 2, ...) so that
 * a change of machine load hits baselines and modes alike; medians over the rounds. */
static void measure(mlp_shape *m, int rounds, result *r)
{
    enum { MAXR = 15 };
    double comp[MAXR], xfer[MAXR], t[5][2][MAXR];
    for (int k = 0; k < rounds; k++) {
        comp[k] = mlp_run(m, MLP_RESIDENT, 1, NULL, NULL);
        xfer[k] = mlp_run(m, MLP_TRANSFER_ONLY, 1, NULL, NULL);
        for (int mode = MLP_ON_DEMAND; mode <= MLP_LEARNED; mode++)
            for (int pinned = pinned_only; pinned < 2; pinned++) {
                m->pool_out = &r->pool[mode][pinned];
                t[mode][pinned][k] = mlp_run(m, (mlp_mode)mode, pinned, NULL,
                                             &r->st[mode][pinned]);
                m->pool_out = NULL;
            }
    }
    r->comp = mlp_median(comp, rounds);
    r->xfer = mlp_median(xfer, rounds);
    for (int mode = MLP_ON_DEMAND; mode <= MLP_LEARNED; mode++)
        for (int pinned = pinned_only; pinned < 2; pinned++)
            r->t[mode][pinned] = mlp_median(t[mode][pinned], rounds);
}

static void print_json(hwi_jw *j, const mlp_shape *m, const result *r)
{
    double base = fmax(r->comp, r->xfer);
    hwi_jw_obj(j);
    hwi_jw_kstr(j, "host", m->host_sync ? "sync" : "async");
    hwi_jw_knum(j, "compute_only_ms", r->comp * 1e3);
    hwi_jw_knum(j, "transfer_only_ms", r->xfer * 1e3);
    hwi_jw_key(j, "modes");
    hwi_jw_arr(j);
    for (int mode = MLP_ON_DEMAND; mode <= MLP_LEARNED; mode++)
        for (int pinned = 1; pinned >= pinned_only; pinned--) {
            const hwrt_offload_stats *st = &r->st[mode][pinned];
            hwi_jw_obj(j);
            hwi_jw_kstr(j, "mode", names[mode]);
            hwi_jw_kbool(j, "pinned", pinned);
            hwi_jw_knum(j, "step_ms", r->t[mode][pinned] * 1e3);
            hwi_jw_knum(j, "vs_max", r->t[mode][pinned] / base);
            const hwrt_mem_stats *ps = &r->pool[mode][pinned];
            double steps = m->steps > 1 ? m->steps - 1 : 1;
            hwi_jw_knum(j, "stall_ms_per_step", st->stall_ms / steps);
            hwi_jw_knum(j, "bytes_fetched_per_step",
                        (double)(st->bytes_from_host + st->bytes_from_disk) / steps);
            hwi_jw_knum(j, "prefetch_hits_per_step", (double)st->prefetch_hits / steps);
            hwi_jw_knum(j, "prefetch_late_per_step", (double)st->prefetch_late / steps);
            hwi_jw_knum(j, "prefetch_misses_per_step", (double)st->prefetch_misses / steps);
            hwi_jw_knum(j, "victim_waits_per_step", (double)st->victim_waits / steps);
            hwi_jw_knum(j, "fetches_after_victim_per_step", (double)st->fetches_after_victim / steps);
            hwi_jw_knum(j, "fetches_exposed_per_step", (double)st->fetches_exposed / steps);
            hwi_jw_knum(j, "fetch_window_uses_mean", st->fetches_after_victim
                        ? (double)st->fetch_window_uses / (double)st->fetches_after_victim : 0);
            hwi_jw_knum(j, "pool_device_syncs_per_step", (double)ps->num_sync_all_streams / steps);
            hwi_jw_knum(j, "pool_oom_retries_per_step", (double)ps->num_alloc_retries / steps);
            hwi_jw_close(j);
        }
    hwi_jw_close(j);
    hwi_jw_knum(j, "learned_vs_on_demand", r->t[MLP_ON_DEMAND][1] / r->t[MLP_LEARNED][1]);
    if (!pinned_only)
        hwi_jw_knum(j, "pinned_vs_pageable", r->t[MLP_LEARNED][0] / r->t[MLP_LEARNED][1]);
    hwi_jw_close(j);
}

static void print_text(const mlp_shape *m, const result *r)
{
    double base = fmax(r->comp, r->xfer);
    printf("%s host (%s):\n", m->host_sync ? "synchronous" : "asynchronous",
           m->host_sync ? "waits for every layer, as eager code that reads results"
                        : "runs ahead of the device, one sync per step");
    printf("  %-22s %10.2f ms/step   (baseline)\n", "compute only", r->comp * 1e3);
    printf("  %-22s %10.2f ms/step   (baseline)\n", "transfer only", r->xfer * 1e3);
    double steps = m->steps > 1 ? m->steps - 1 : 1;
    for (int mode = MLP_ON_DEMAND; mode <= MLP_LEARNED; mode++)
        for (int pinned = 1; pinned >= pinned_only; pinned--) {
            const hwrt_offload_stats *st = &r->st[mode][pinned];
            printf("  %-12s %-9s %10.2f ms/step   %5.2fx max(compute, transfer)\n"
                   "      per step: fetched %6.1f MiB, prefetched in time %4.1f / late %4.1f / "
                   "on demand %4.1f, stall %7.1f ms, host waited for a victim %4.1fx, pool "
                   "synchronized the device %4.1fx\n"
                   "      per step: fetches after a busy victim %4.1f, of them exposed (the victim "
                   "used right before) %4.1f, window %4.1f uses\n",
                   names[mode], pinned ? "pinned" : "pageable", r->t[mode][pinned] * 1e3,
                   r->t[mode][pinned] / base,
                   (double)(st->bytes_from_host + st->bytes_from_disk) / steps / 1048576.0,
                   (double)st->prefetch_hits / steps, (double)st->prefetch_late / steps,
                   (double)st->prefetch_misses / steps, st->stall_ms / steps,
                   (double)st->victim_waits / steps,
                   (double)r->pool[mode][pinned].num_sync_all_streams / steps,
                   (double)st->fetches_after_victim / steps, (double)st->fetches_exposed / steps,
                   st->fetches_after_victim
                       ? (double)st->fetch_window_uses / (double)st->fetches_after_victim : 0);
        }
    printf("  learned vs on-demand (pinned): %.2fx faster",
           r->t[MLP_ON_DEMAND][1] / r->t[MLP_LEARNED][1]);
    if (!pinned_only)
        printf(";  pinned vs pageable (learned): %.2fx",
               r->t[MLP_LEARNED][0] / r->t[MLP_LEARNED][1]);
    printf("\n");
}

/* One workload: the device budget a quarter of its weights (plus the transformer's
 * activations), the link calibrated (unless
 * --gbps) so transfer of all weights takes about the compute time, then every host. */
static void run_workload(mlp_shape m, int rounds, int want_async, int want_sync, hwi_jw *json)
{
    size_t total = mlp_total_bytes(&m);
    m.device_mb = total / 4 >> 20;
    /* the transformer's activations (B x D twice, B x 3D, B x 4D) come on top, so its
     * weights get a quarter of their size too */
    if (m.transformer) m.device_mb += ((size_t)m.batch * m.hidden * 9 * 4 + (1 << 20) - 1) >> 20;
    if (m.device_mb < 4) m.device_mb = 4;
    if (m.link_gbps <= 0) {          /* calibrate: transfer of all weights ~ compute time */
        double t_comp = mlp_run(&m, MLP_RESIDENT, 1, NULL, NULL);
        m.link_gbps = (double)total / t_comp / 1e9;
        /* the sim takes 0.01..10000 GB/s (HWRT_SIM_LINK_GBPS): a tiny or slow calibration
         * run (small --hidden on a loaded machine) can land below that */
        if (m.link_gbps < 0.01) m.link_gbps = 0.01;
        if (m.link_gbps > 10000) m.link_gbps = 10000;
    }
    result r[2];
    for (int s = 0; s < 2; s++) {
        m.host_sync = s;
        if (s ? want_sync : want_async) measure(&m, rounds, &r[s]);
    }
    char what[96];
    if (m.transformer)
        snprintf(what, sizeof what, "transformer D=%d, %d blocks", m.hidden, m.layers / 4);
    else
        snprintf(what, sizeof what, "%d-layer MLP", m.layers);
    if (json) {
        hwi_jw_obj(json);
        hwi_jw_kstr(json, "workload", what);
        hwi_jw_kstr(json, "model", m.transformer ? "transformer" : "mlp");
        hwi_jw_kint(json, "hidden", m.hidden);
        hwi_jw_kint(json, "weights", m.layers);
        hwi_jw_kuint(json, "weights_mb", total >> 20);
        hwi_jw_kuint(json, "device_mb", m.device_mb);
        hwi_jw_knum(json, "link_gbps", m.link_gbps);
        hwi_jw_key(json, "hosts");
        hwi_jw_arr(json);
        for (int s = 0; s < 2; s++) {
            m.host_sync = s;
            if (s ? want_sync : want_async) print_json(json, &m, &r[s]);
        }
        hwi_jw_close(json);
        hwi_jw_close(json);
        return;
    }
    printf("hwrt-bench offload (simulated NPU): %s, %zu MiB of weights on a %zu MiB device "
           "(%.1fx with activations), batch %d, link %.2f GB/s (calibrated to compute), prefetch_depth %d; each "
           "figure the median over %d interleaved rounds of a run's median step of %d\n",
           what, total >> 20, m.device_mb, (double)(total >> 20) / m.device_mb, m.batch,
           m.link_gbps, m.prefetch_depth ? m.prefetch_depth : 2, rounds, m.steps - 1);
    for (int s = 0; s < 2; s++) {
        m.host_sync = s;
        if (s ? want_sync : want_async) print_text(&m, &r[s]);
    }
}

enum { O_JSON = 256, O_QUICK, O_STEPS, O_ROUNDS, O_LAYERS, O_HIDDEN, O_BATCH, O_GBPS, O_HOST,
       O_MODEL, O_SHAPES, O_DEPTH, O_PINNED_ONLY };

static const cli_opt opts[] = {
    {"steps", O_STEPS, CLI_REQUIRED, "N", "steps per run, >= 2 (default 6)"},
    {"rounds", O_ROUNDS, CLI_REQUIRED, "R", "interleaved rounds, 1..15 (default 3)"},
    {"layers", O_LAYERS, CLI_REQUIRED, "L", "MLP layers, >= 2 (default 32)"},
    {"hidden", O_HIDDEN, CLI_REQUIRED, "H", "MLP hidden size, >= 16 (default 512)"},
    {"batch", O_BATCH, CLI_REQUIRED, "B", "batch, >= 1 (default 512)"},
    {"gbps", O_GBPS, CLI_REQUIRED, "G", "link speed (default: calibrated to compute)"},
    {"host", O_HOST, CLI_REQUIRED, "async|sync|both", "host behaviours to measure (default both)"},
    {"model", O_MODEL, CLI_REQUIRED, "mlp|transformer|all", "workloads (default all)"},
    {"shapes", O_SHAPES, CLI_REQUIRED, "D:BLOCKS,...", "transformer stacks (default 256:8,384:4)"},
    {"prefetch-depth", O_DEPTH, CLI_REQUIRED, "K", "offload prefetch_depth, 1..64 (default 2)"},
    {"pinned-only", O_PINNED_ONLY, CLI_NONE, NULL, "skip the pageable runs"},
    {"json", O_JSON, CLI_NONE, NULL, "one JSON object on stdout"},
    {"quick", O_QUICK, CLI_NONE, NULL, "a smoke run: --steps 2 --rounds 1 --layers 4 --hidden 64 "
                                       "--batch 8 --shapes 64:1"},
    {0},
};

static const cli_tool tool = {
    .name = "hwrt-bench-offload",
    .synopsis = "hwrt-bench-offload [--steps N] [--rounds R] [--layers L] [--hidden H] [--batch B]\n"
                "                          [--gbps G] [--host async|sync|both]\n"
                "                          [--model mlp|transformer|all] [--shapes D:BLOCKS,...]\n"
                "                          [--prefetch-depth K] [--pinned-only] [--json]",
    .about = "Step time of an MLP and of transformer-shaped stacks (non-uniform weights) whose\n"
             "weights are 4x the simulated device's memory, per offload mode, next to\n"
             "compute-only and transfer-only baselines of the same run.",
    .opts = opts,
};

typedef struct {
    mlp_shape *m;
    int json, want_async, want_sync, rounds, want_mlp, want_xf;
    const char *shapes;
} offload_opts;

static int on_opt(void *ctx, int key, const char *arg)
{
    offload_opts *o = ctx;
    switch (key) {
    case O_JSON: o->json = 1; return CLI_OK;
    case O_PINNED_ONLY: pinned_only = 1; return CLI_OK;
    case O_QUICK:
        o->m->steps = 2; o->rounds = 1; o->m->layers = 4; o->m->hidden = 64; o->m->batch = 8;
        o->shapes = "64:1";
        return CLI_OK;
    case O_STEPS: return cli_int(&tool, "--steps", arg, 2, 1000000, &o->m->steps);
    case O_ROUNDS: return cli_int(&tool, "--rounds", arg, 1, 15, &o->rounds);
    case O_LAYERS: return cli_int(&tool, "--layers", arg, 2, 100000, &o->m->layers);
    case O_HIDDEN: return cli_int(&tool, "--hidden", arg, 16, 1 << 16, &o->m->hidden);
    case O_BATCH: return cli_int(&tool, "--batch", arg, 1, 1 << 20, &o->m->batch);
    case O_GBPS: return cli_double(&tool, "--gbps", arg, 0.01, 10000, &o->m->link_gbps);
    case O_DEPTH: return cli_int(&tool, "--prefetch-depth", arg, 1, 64, &o->m->prefetch_depth);
    case O_SHAPES: o->shapes = arg; return CLI_OK;
    case O_HOST: {
        static const char *const hosts[] = {"async", "sync", "both", NULL};
        int h = cli_choice(&tool, "--host", arg, hosts);
        if (h < 0) return CLI_USAGE;
        o->want_async = h != 1;
        o->want_sync = h != 0;
        return CLI_OK;
    }
    case O_MODEL: {
        static const char *const models[] = {"mlp", "transformer", "all", NULL};
        int h = cli_choice(&tool, "--model", arg, models);
        if (h < 0) return CLI_USAGE;
        o->want_mlp = h != 1;
        o->want_xf = h != 0;
        return CLI_OK;
    }
    }
    return CLI_USAGE;
}

int main(int argc, char **argv)
{
    mlp_shape m = {.layers = 32, .hidden = 512, .batch = 512, .steps = 6, .link_gbps = 0,
                   .device_mb = 16};
    offload_opts o = {.m = &m, .want_async = 1, .want_sync = 1, .rounds = 3, .want_mlp = 1,
                      .want_xf = 1, .shapes = "256:8,384:4"};
    int first_arg, done;
    int rc = cli_parse(&tool, argc, argv, on_opt, &o, &first_arg, &done);
    if (rc != CLI_OK || done) return rc;
    int want_async = o.want_async, want_sync = o.want_sync, rounds = o.rounds;
    int want_mlp = o.want_mlp, want_xf = o.want_xf;
    const char *shapes = o.shapes;
    /* every shape is parsed before anything is measured */
    enum { MAXS = 8 };
    int sd[MAXS], sb[MAXS], ns = 0;
    for (const char *p = shapes; want_xf && *p;) {
        char *e;
        long d = strtol(p, &e, 10), b = 0;
        if (*e == ':') b = strtol(e + 1, &e, 10);
        if (ns == MAXS || d < 16 || d > 8192 || b < 1 || b > 256 || (*e && *e != ','))
            return cli_usage(&tool, "--shapes '%s': give up to %d entries D:BLOCKS (D 16..8192, "
                             "BLOCKS 1..256), comma-separated, e.g. 256:8,384:4", shapes, MAXS);
        sd[ns] = (int)d;
        sb[ns++] = (int)b;
        p = *e ? e + 1 : e;
    }
    hwi_jw jw, *json = NULL;
    if (o.json) {
        json = &jw;
        hwi_jw_begin(json, stdout, 0);
        hwi_jw_obj(json);
        hwi_jw_key(json, "workloads");
        hwi_jw_arr(json);
    }
    if (want_mlp) run_workload(m, rounds, want_async, want_sync, json);
    for (int i = 0; i < ns; i++) {
        mlp_shape x = m;
        x.transformer = 1;
        x.hidden = sd[i];
        x.layers = 4 * sb[i];
        run_workload(x, rounds, want_async, want_sync, json);
    }
    if (json) {
        hwi_jw_close(json);
        hwi_jw_close(json);
        if (hwi_jw_end(json)) return cli_fail(&tool, "the JSON output is incomplete");
    }
    return CLI_OK;
}
