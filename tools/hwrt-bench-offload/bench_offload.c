/* hwrt-bench offload: step time of an MLP whose weights are 4x the simulated device's
 * memory, for on-demand, manual prefetch and learned (auto_offload) modes, pinned and
 * pageable, next to its same-run baselines: compute only (all weights resident on a
 * large device) and transfer only (the same bytes over the modelled link, no compute).
 * The link is calibrated first so transfer time is close to compute time, the case
 * where overlap matters most. Medians over steps; --json for machine-readable output.
 *   hwrt-bench-offload [--steps N] [--layers L] [--hidden H] [--batch B] [--gbps G] [--json] */
#include "offload_mlp.h"

#include <math.h>

int main(int argc, char **argv)
{
    mlp_shape m = {.layers = 32, .hidden = 512, .batch = 512, .steps = 6, .link_gbps = 0,
                   .device_mb = 16};
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (i + 1 < argc && !strcmp(argv[i], "--steps")) m.steps = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--layers")) m.layers = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--hidden")) m.hidden = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--batch")) m.batch = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--gbps")) m.link_gbps = atof(argv[++i]);
        else { fprintf(stderr, "unknown argument %s\n", argv[i]); return 2; }
    }
    if (m.steps < 2 || m.layers < 2 || m.hidden < 16 || m.batch < 1) {
        fprintf(stderr, "need --steps >= 2, --layers >= 2, --hidden >= 16, --batch >= 1\n");
        return 2;
    }
    size_t total = (size_t)m.layers * m.hidden * m.hidden * 4;
    m.device_mb = total / 4 >> 20;
    if (m.device_mb < 4) m.device_mb = 4;
    double t_comp = mlp_run(&m, MLP_RESIDENT, 1, NULL, NULL);
    if (m.link_gbps <= 0)           /* calibrate: transfer of all weights ~ compute time */
        m.link_gbps = (double)total / t_comp / 1e9;
    double t_xfer = mlp_run(&m, MLP_TRANSFER_ONLY, 1, NULL, NULL);
    double base = fmax(t_comp, t_xfer);
    static const char *names[] = {"", "", "on-demand", "prefetch", "learned"};
    double t[5][2];
    hwrt_offload_stats st[5][2];
    for (int mode = MLP_ON_DEMAND; mode <= MLP_LEARNED; mode++)
        for (int pinned = 0; pinned < 2; pinned++)
            t[mode][pinned] = mlp_run(&m, (mlp_mode)mode, pinned, NULL, &st[mode][pinned]);
    if (json) {
        printf("{\"weights_mb\": %zu, \"device_mb\": %zu, \"link_gbps\": %.3f, "
               "\"compute_only_ms\": %.3f, \"transfer_only_ms\": %.3f, \"modes\": [",
               total >> 20, m.device_mb, m.link_gbps, t_comp * 1e3, t_xfer * 1e3);
        for (int mode = MLP_ON_DEMAND; mode <= MLP_LEARNED; mode++)
            for (int pinned = 1; pinned >= 0; pinned--)
                printf("%s{\"mode\": \"%s\", \"pinned\": %s, \"step_ms\": %.3f, \"vs_max\": %.3f, "
                       "\"stall_ms\": %.3f}", (mode == MLP_ON_DEMAND && pinned) ? "" : ", ",
                       names[mode], pinned ? "true" : "false", t[mode][pinned] * 1e3,
                       t[mode][pinned] / base, st[mode][pinned].stall_ms);
        printf("]}\n");
        return 0;
    }
    printf("hwrt-bench offload (simulated NPU): %d-layer MLP, %zu MiB of weights on a %zu MiB "
           "device (%.1fx), batch %d, link %.2f GB/s (calibrated to compute), medians of %d steps\n",
           m.layers, total >> 20, m.device_mb, (double)(total >> 20) / m.device_mb, m.batch,
           m.link_gbps, m.steps - 1);
    printf("  %-22s %10.2f ms/step   (baseline)\n", "compute only", t_comp * 1e3);
    printf("  %-22s %10.2f ms/step   (baseline)\n", "transfer only", t_xfer * 1e3);
    for (int mode = MLP_ON_DEMAND; mode <= MLP_LEARNED; mode++)
        for (int pinned = 1; pinned >= 0; pinned--)
            printf("  %-12s %-9s %10.2f ms/step   %5.2fx max(compute, transfer)   stall %7.1f ms\n",
                   names[mode], pinned ? "pinned" : "pageable", t[mode][pinned] * 1e3,
                   t[mode][pinned] / base, st[mode][pinned].stall_ms);
    printf("  learned vs on-demand (pinned): %.2fx faster;  pinned vs pageable (learned): %.2fx\n",
           t[MLP_ON_DEMAND][1] / t[MLP_LEARNED][1], t[MLP_LEARNED][0] / t[MLP_LEARNED][1]);
    return 0;
}
