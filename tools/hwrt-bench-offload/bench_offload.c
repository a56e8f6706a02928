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
 * Medians over steps. Stall, fetched-bytes and victim-wait figures are the last round's
 * (over all its steps, the first included).
 *   hwrt-bench-offload [--steps N] [--rounds R] [--layers L] [--hidden H] [--batch B]
 *                      [--gbps G] [--host async|sync|both] [--model mlp|transformer|all]
 *                      [--shapes D:BLOCKS,...] [--prefetch-depth K] [--pinned-only] [--json]
 * --layers/--hidden shape the MLP; --shapes the transformer stacks (default 256:8,384:4:
 * 32 and 16 weights, the largest 12% and 28% of the device budget). */
#include "offload_mlp.h"

#include <math.h>

static const char *const names[] = {"", "", "on-demand", "prefetch", "learned"};

typedef struct {
    double comp, xfer, t[5][2];
    hwrt_offload_stats st[5][2];
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
            for (int pinned = pinned_only; pinned < 2; pinned++)
                t[mode][pinned][k] = mlp_run(m, (mlp_mode)mode, pinned, NULL,
                                             &r->st[mode][pinned]);
    }
    r->comp = mlp_median(comp, rounds);
    r->xfer = mlp_median(xfer, rounds);
    for (int mode = MLP_ON_DEMAND; mode <= MLP_LEARNED; mode++)
        for (int pinned = pinned_only; pinned < 2; pinned++)
            r->t[mode][pinned] = mlp_median(t[mode][pinned], rounds);
}

static void print_json(const mlp_shape *m, const result *r, int first)
{
    double base = fmax(r->comp, r->xfer);
    printf("%s{\"host\": \"%s\", \"compute_only_ms\": %.3f, \"transfer_only_ms\": %.3f, "
           "\"modes\": [", first ? "" : ", ", m->host_sync ? "sync" : "async", r->comp * 1e3,
           r->xfer * 1e3);
    for (int mode = MLP_ON_DEMAND; mode <= MLP_LEARNED; mode++)
        for (int pinned = 1; pinned >= pinned_only; pinned--)
            printf("%s{\"mode\": \"%s\", \"pinned\": %s, \"step_ms\": %.3f, \"vs_max\": %.3f, "
                   "\"stall_ms\": %.3f, \"bytes_fetched\": %llu, \"victim_waits\": %llu}",
                   (mode == MLP_ON_DEMAND && pinned) ? "" : ", ",
                   names[mode], pinned ? "true" : "false", r->t[mode][pinned] * 1e3,
                   r->t[mode][pinned] / base, r->st[mode][pinned].stall_ms,
                   (unsigned long long)(r->st[mode][pinned].bytes_from_host +
                                        r->st[mode][pinned].bytes_from_disk),
                   (unsigned long long)r->st[mode][pinned].victim_waits);
    printf("], \"learned_vs_on_demand\": %.3f", r->t[MLP_ON_DEMAND][1] / r->t[MLP_LEARNED][1]);
    if (!pinned_only)
        printf(", \"pinned_vs_pageable\": %.3f", r->t[MLP_LEARNED][0] / r->t[MLP_LEARNED][1]);
    printf("}");
}

static void print_text(const mlp_shape *m, const result *r)
{
    double base = fmax(r->comp, r->xfer);
    printf("%s host (%s):\n", m->host_sync ? "synchronous" : "asynchronous",
           m->host_sync ? "waits for every layer, as eager code that reads results"
                        : "runs ahead of the device, one sync per step");
    printf("  %-22s %10.2f ms/step   (baseline)\n", "compute only", r->comp * 1e3);
    printf("  %-22s %10.2f ms/step   (baseline)\n", "transfer only", r->xfer * 1e3);
    for (int mode = MLP_ON_DEMAND; mode <= MLP_LEARNED; mode++)
        for (int pinned = 1; pinned >= pinned_only; pinned--)
            printf("  %-12s %-9s %10.2f ms/step   %5.2fx max(compute, transfer)   stall %7.1f ms"
                   "   fetched %6.1f MiB/step   host waited for a victim %4.1fx/step\n",
                   names[mode], pinned ? "pinned" : "pageable", r->t[mode][pinned] * 1e3,
                   r->t[mode][pinned] / base, r->st[mode][pinned].stall_ms,
                   (double)(r->st[mode][pinned].bytes_from_host +
                            r->st[mode][pinned].bytes_from_disk) / m->steps / 1048576.0,
                   (double)r->st[mode][pinned].victim_waits / m->steps);
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
static void run_workload(mlp_shape m, int rounds, int want_async, int want_sync, int json,
                         int first)
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
        printf("%s{\"workload\": \"%s\", \"model\": \"%s\", \"hidden\": %d, \"weights\": %d, "
               "\"weights_mb\": %zu, \"device_mb\": %zu, \"link_gbps\": %.3f, \"hosts\": [",
               first ? "" : ", ", what, m.transformer ? "transformer" : "mlp", m.hidden,
               m.layers, total >> 20, m.device_mb, m.link_gbps);
        for (int s = 0, f = 1; s < 2; s++) {
            m.host_sync = s;
            if (!(s ? want_sync : want_async)) continue;
            print_json(&m, &r[s], f);
            f = 0;
        }
        printf("]}");
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

int main(int argc, char **argv)
{
    mlp_shape m = {.layers = 32, .hidden = 512, .batch = 512, .steps = 6, .link_gbps = 0,
                   .device_mb = 16};
    int json = 0, want_async = 1, want_sync = 1, rounds = 3, want_mlp = 1, want_xf = 1;
    const char *shapes = "256:8,384:4";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--pinned-only")) pinned_only = 1;
        else if (i + 1 < argc && !strcmp(argv[i], "--steps")) m.steps = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--rounds")) rounds = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--layers")) m.layers = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--hidden")) m.hidden = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--batch")) m.batch = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--gbps")) m.link_gbps = atof(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--shapes")) shapes = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--prefetch-depth")) {
            m.prefetch_depth = atoi(argv[++i]);
            if (m.prefetch_depth < 1 || m.prefetch_depth > 64) {
                fprintf(stderr, "--prefetch-depth %s: use 1..64\n", argv[i]);
                return 2;
            }
        } else if (i + 1 < argc && !strcmp(argv[i], "--model")) {
            const char *h = argv[++i];
            want_mlp = !strcmp(h, "mlp") || !strcmp(h, "all");
            want_xf = !strcmp(h, "transformer") || !strcmp(h, "all");
            if (!want_mlp && !want_xf) {
                fprintf(stderr, "--model %s: use mlp, transformer or all\n", h);
                return 2;
            }
        } else if (i + 1 < argc && !strcmp(argv[i], "--host")) {
            const char *h = argv[++i];
            want_async = !strcmp(h, "async") || !strcmp(h, "both");
            want_sync = !strcmp(h, "sync") || !strcmp(h, "both");
            if (!want_async && !want_sync) {
                fprintf(stderr, "--host %s: use async, sync or both\n", h);
                return 2;
            }
        } else {
            fprintf(stderr, "unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    if (m.steps < 2 || m.layers < 2 || m.hidden < 16 || m.batch < 1 || rounds < 1 || rounds > 15) {
        fprintf(stderr, "need --steps >= 2, --rounds 1..15, --layers >= 2, --hidden >= 16, "
                "--batch >= 1\n");
        return 2;
    }
    /* every shape is parsed before anything is measured */
    enum { MAXS = 8 };
    int sd[MAXS], sb[MAXS], ns = 0;
    for (const char *p = shapes; want_xf && *p;) {
        char *e;
        long d = strtol(p, &e, 10), b = 0;
        if (*e == ':') b = strtol(e + 1, &e, 10);
        if (ns == MAXS || d < 16 || d > 8192 || b < 1 || b > 256 || (*e && *e != ',')) {
            fprintf(stderr, "--shapes %s: give up to %d entries D:BLOCKS (D 16..8192, BLOCKS "
                    "1..256), comma-separated, e.g. 256:8,384:4\n", shapes, MAXS);
            return 2;
        }
        sd[ns] = (int)d;
        sb[ns++] = (int)b;
        p = *e ? e + 1 : e;
    }
    int first = 1;
    if (json) printf("{\"workloads\": [");
    if (want_mlp) {
        run_workload(m, rounds, want_async, want_sync, json, first);
        first = 0;
    }
    for (int i = 0; i < ns; i++) {
        mlp_shape x = m;
        x.transformer = 1;
        x.hidden = sd[i];
        x.layers = 4 * sb[i];
        run_workload(x, rounds, want_async, want_sync, json, first);
        first = 0;
    }
    if (json) printf("]}\n");
    return 0;
}
