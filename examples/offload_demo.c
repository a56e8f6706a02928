/* The seed's offload_demo (section 2.5): a model whose weights are 4x the simulated
 * device's memory runs inference with memory_offload ON, matches a fully resident run on
 * a large device bit for bit, and reports throughput for on-demand, prefetch and learned
 * modes, pinned vs pageable, with the link model on. */
#include "offload_mlp.h"

int main(int argc, char **argv)
{
    mlp_shape m = {.layers = 32, .hidden = 512, .batch = 256, .steps = 4, .link_gbps = 4,
                   .device_mb = 8};
    if (argc > 1) m.steps = atoi(argv[1]) > 1 ? atoi(argv[1]) : 2;
    size_t total = (size_t)m.layers * m.hidden * m.hidden * 4;
    printf("MLP: %d layers of %dx%d float32 = %zu MB of weights; simulated device %zu MB "
           "(%.1fx smaller); link %.0f GB/s\n", m.layers, m.hidden, m.hidden, total >> 20,
           m.device_mb, (double)total / (m.device_mb << 20), m.link_gbps);
    size_t on = (size_t)m.batch * m.hidden;
    float *ref = malloc(on * 4), *got = malloc(on * 4);
    double t_res = mlp_run(&m, MLP_RESIDENT, 1, ref, NULL);
    double t_xfer = mlp_run(&m, MLP_TRANSFER_ONLY, 1, NULL, NULL);
    printf("%-28s %8.2f ms/step\n", "compute only (resident)", t_res * 1e3);
    printf("%-28s %8.2f ms/step\n", "transfer only (pinned)", t_xfer * 1e3);
    static const char *names[] = {"", "", "on-demand", "prefetch (manual)", "learned (auto_offload)"};
    int all_equal = 1;
    for (int mode = MLP_ON_DEMAND; mode <= MLP_LEARNED; mode++)
        for (int pinned = 1; pinned >= 0; pinned--) {
            hwrt_offload_stats st;
            memset(got, 0, on * 4);
            double t = mlp_run(&m, (mlp_mode)mode, pinned, got, &st);
            int eq = !memcmp(ref, got, on * 4);
            all_equal &= eq;
            char label[64];
            snprintf(label, sizeof label, "%s, %s", names[mode], pinned ? "pinned" : "pageable");
            printf("%-36s %8.2f ms/step  %.2fx of max(compute,transfer)  fetched %llu MB  "
                   "prefetch hits %llu late %llu misses %llu  stall %.1f ms  %s\n", label,
                   t * 1e3, t / (t_res > t_xfer ? t_res : t_xfer),
                   (unsigned long long)((st.bytes_from_host + st.bytes_from_disk) >> 20),
                   (unsigned long long)st.prefetch_hits, (unsigned long long)st.prefetch_late,
                   (unsigned long long)st.prefetch_misses, st.stall_ms,
                   eq ? "bit-identical to resident" : "MISMATCH");
        }
    free(ref);
    free(got);
    printf("results %s\n", all_equal ? "identical with and without offload" : "DIFFER");
    return all_equal ? 0 : 1;
}
