/* hwrt-bench offload: step time of an MLP whose weights are 4x the simulated device's
 * memory, for on-demand, manual prefetch and learned (auto_offload) modes, pinned and
 * pageable, next to its same-run baselines: compute only (all weights resident on a
 * large device) and transfer only (the same bytes over the modelled link, no compute).
 * The link is calibrated first so transfer time is close to compute time, the case
 * where overlap matters most. Two host behaviours are measured: an asynchronous host
 * that runs ahead of the device (graph-like, one sync per step) and a synchronous host
 * that waits for every layer (eager execution reading results, PyNative-like), where
 * only prefetching can overlap a transfer with compute. Medians over steps.
 * Stall figures are the last round's.
 *   hwrt-bench-offload [--steps N] [--rounds R] [--layers L] [--hidden H] [--batch B]
 *                      [--gbps G] [--host async|sync|both] [--json] */
#include "offload_mlp.h"

#include <math.h>

static const char *const names[] = {"", "", "on-demand", "prefetch", "learned"};

typedef struct {
    double comp, xfer, t[5][2];
    hwrt_offload_stats st[5][2];
} result;

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
            for (int pinned = 0; pinned < 2; pinned++)
                t[mode][pinned][k] = mlp_run(m, (mlp_mode)mode, pinned, NULL,
                                             &r->st[mode][pinned]);
    }
    r->comp = mlp_median(comp, rounds);
    r->xfer = mlp_median(xfer, rounds);
    for (int mode = MLP_ON_DEMAND; mode <= MLP_LEARNED; mode++)
        for (int pinned = 0; pinned < 2; pinned++)
            r->t[mode][pinned] = mlp_median(t[mode][pinned], rounds);
}

static void print_json(const mlp_shape *m, const result *r, int first)
{
    double base = fmax(r->comp, r->xfer);
    printf("%s{\"host\": \"%s\", \"compute_only_ms\": %.3f, \"transfer_only_ms\": %.3f, "
           "\"modes\": [", first ? "" : ", ", m->host_sync ? "sync" : "async", r->comp * 1e3,
           r->xfer * 1e3);
    for (int mode = MLP_ON_DEMAND; mode <= MLP_LEARNED; mode++)
        for (int pinned = 1; pinned >= 0; pinned--)
            printf("%s{\"mode\": \"%s\", \"pinned\": %s, \"step_ms\": %.3f, \"vs_max\": %.3f, "
                   "\"stall_ms\": %.3f}", (mode == MLP_ON_DEMAND && pinned) ? "" : ", ",
                   names[mode], pinned ? "true" : "false", r->t[mode][pinned] * 1e3,
                   r->t[mode][pinned] / base, r->st[mode][pinned].stall_ms);
    printf("], \"learned_vs_on_demand\": %.3f, \"pinned_vs_pageable\": %.3f}",
           r->t[MLP_ON_DEMAND][1] / r->t[MLP_LEARNED][1], r->t[MLP_LEARNED][0] / r->t[MLP_LEARNED][1]);
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
        for (int pinned = 1; pinned >= 0; pinned--)
            printf("  %-12s %-9s %10.2f ms/step   %5.2fx max(compute, transfer)   stall %7.1f ms\n",
                   names[mode], pinned ? "pinned" : "pageable", r->t[mode][pinned] * 1e3,
                   r->t[mode][pinned] / base, r->st[mode][pinned].stall_ms);
    printf("  learned vs on-demand (pinned): %.2fx faster;  pinned vs pageable (learned): %.2fx\n",
           r->t[MLP_ON_DEMAND][1] / r->t[MLP_LEARNED][1], r->t[MLP_LEARNED][0] / r->t[MLP_LEARNED][1]);
}

int main(int argc, char **argv)
{
    mlp_shape m = {.layers = 32, .hidden = 512, .batch = 512, .steps = 6, .link_gbps = 0,
                   .device_mb = 16};
    int json = 0, want_async = 1, want_sync = 1, rounds = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (i + 1 < argc && !strcmp(argv[i], "--steps")) m.steps = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--rounds")) rounds = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--layers")) m.layers = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--hidden")) m.hidden = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--batch")) m.batch = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--gbps")) m.link_gbps = atof(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--host")) {
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
    size_t total = (size_t)m.layers * m.hidden * m.hidden * 4;
    m.device_mb = total / 4 >> 20;
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
    if (json) {
        printf("{\"weights_mb\": %zu, \"device_mb\": %zu, \"link_gbps\": %.3f, \"hosts\": [",
               total >> 20, m.device_mb, m.link_gbps);
        for (int s = 0, first = 1; s < 2; s++) {
            m.host_sync = s;
            if (!(s ? want_sync : want_async)) continue;
            print_json(&m, &r[s], first);
            first = 0;
        }
        printf("]}\n");
        return 0;
    }
    printf("hwrt-bench offload (simulated NPU): %d-layer MLP, %zu MiB of weights on a %zu MiB "
           "device (%.1fx), batch %d, link %.2f GB/s (calibrated to compute); each figure the median "
           "over %d interleaved rounds of a run's median step of %d\n",
           m.layers, total >> 20, m.device_mb, (double)(total >> 20) / m.device_mb, m.batch,
           m.link_gbps, rounds, m.steps - 1);
    for (int s = 0; s < 2; s++) {
        m.host_sync = s;
        if (s ? want_sync : want_async) print_text(&m, &r[s]);
    }
    return 0;
}
