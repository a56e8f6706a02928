/* Offload on non-uniform, transformer-shaped weights (issue 19 item 5): per block four
 * weights D x 3D, 3D x D, D x 4D and 4D x D, 4x the device budget, auto_offload.
 *  - With the device held behind a gate (every resident weight still used by queued
 *    work), a learned step is queued without the host ever waiting for a victim: every
 *    fetch takes a block in stream order, also where the victim has another size. The
 *    code before this fix handed over only a victim of the same size and otherwise made
 *    the host wait for the victim, which behind the gate never finishes: a watchdog then
 *    opens the gate, and the test fails on it (and on the victim_waits count).
 *  - Bytes moved per learned step lie between the bound any policy must move (weights
 *    minus the budget) and the weights themselves (each weight at most once a step).
 *  - The results are bit for bit those of a run with every weight resident.
 * No timing decides a result: the watchdog only turns a hang into a failure. */
#include "harness.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

enum { D = 256, BLOCKS = 4, W = 4 * BLOCKS, B = 8, STEPS = 4 };
#include "offload_stack.h"                  /* dims, net, setup, layer, finish */

static atomic_int gate_open, opened_by_watchdog, queued;
static void gate(void *a) { (void)a; while (!atomic_load(&gate_open)) usleep(100); }

/* Opens the gate if the host has not queued the step within 20 s (it is blocked). */
static void *watchdog(void *a)
{
    (void)a;
    for (int i = 0; i < 2000 && !atomic_load(&queued); i++) usleep(10000);
    if (!atomic_load(&queued)) {
        atomic_store(&opened_by_watchdog, 1);
        atomic_store(&gate_open, 1);
    }
    return NULL;
}

/* One step: x -> h3 -> x -> h4 -> x per block (relu after every matmul); with_gate:
 * the ops are queued behind the gate (after the input's copy, which the host waits for). */
static void step(net *n, const float *x0, int sync_each, int with_gate)
{
    OK(hwrt_tensor_copy_from_host(n->x, x0, sizeof(float) * B * D));
    if (with_gate) OK(hwrt_launch_host_func(NULL, gate, NULL));
    for (int l = 0; l < W; l++) {
        layer(n, l);
        if (sync_each) OK(hwrt_stream_synchronize(NULL));
    }
}

int main(void)
{
    setenv("HWRT_SIM_MEMORY", "64MB", 1);
    setenv("HWRT_SIM_OVERHEAD", "4MB", 1);
    float *host_w[W], x0[B * D], want[B * D];
    size_t total = host_init(host_w, x0);
    EXPECT(total == 14u << 20);

    TEST_CASE("resident reference");
    OK(hwrt_set_device("sim", 0));
    net n;
    setup(&n, host_w, x0, 0);
    for (int s = 0; s < STEPS; s++) step(&n, x0, 0, 0);
    OK(hwrt_tensor_copy_to_host(n.x, want, sizeof want));
    teardown(&n);
    OK(hwrt_shutdown());

    TEST_CASE("transformer shapes, learned, device behind a gate");
    /* a 4 MiB device: weights (14 MiB) about 4x the part the activations leave */
    setenv("HWRT_SIM_MEMORY", "8MB", 1);
    size_t act = sizeof(float) * B * D * 9, budget = 4u << 20;
    setup_learned(&n, host_w, x0, 4 * total);
    step(&n, x0, 0, 0);                           /* step 0 records the order */
    OK(hwrt_device_synchronize());
    OK(hwrt_offload_step());
    step(&n, x0, 1, 0);                           /* a learned step, host in lockstep */
    OK(hwrt_device_synchronize());
    OK(hwrt_offload_step());
    hwrt_offload_stats before, after;
    OK(hwrt_offload_stats_get(&before));
    for (int s = 2; s < STEPS; s++) {
        atomic_store(&gate_open, 0);
        atomic_store(&queued, 0);
        pthread_t wd;
        EXPECT(pthread_create(&wd, NULL, watchdog, NULL) == 0);
        step(&n, x0, 0, 1);                       /* queued behind the gate */
        OK(hwrt_offload_step());
        atomic_store(&queued, 1);
        atomic_store(&gate_open, 1);
        pthread_join(wd, NULL);
        OK(hwrt_device_synchronize());
    }
    OK(hwrt_offload_stats_get(&after));
    EXPECT(!atomic_load(&opened_by_watchdog));    /* the host never blocked on a victim */
    EXPECT(after.victim_waits == before.victim_waits);
    uint64_t moved = (after.bytes_from_host - before.bytes_from_host) / (STEPS - 2);
    size_t weights_budget = budget - act;
    EXPECT(moved >= total - weights_budget);      /* no policy moves less */
    EXPECT(moved <= total);                       /* each weight at most once a step */
    fprintf(stderr, "moved %llu bytes/step, weights %zu, budget for weights %zu, host "
                "waits %llu, gate opened by the watchdog: %d\n", (unsigned long long)moved,
                total, weights_budget,
                (unsigned long long)(after.victim_waits - before.victim_waits),
                atomic_load(&opened_by_watchdog));
    finish(&n, want, host_w);                     /* the data is right, then all goes */
    return test_report();
}
