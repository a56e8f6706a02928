/* auto_offload's prefetch window, by bytes (offload_plan.c hwi_plan_prefetch_ahead): after
 * a use, the tensors next in the learned order are fetched while the bytes in flight stay
 * within prefetch_depth times the order's mean tensor size, the edge included (depth 2,
 * tensors of one size: exactly two ahead); the first one is fetched whatever its size (a
 * tensor larger than the window still comes early, alone). Found by a sweep of
 * offload_plan.c (issue 25): `inflight + n > window` made `>=` fetched one of two, and
 * `inflight > 0` made `>= 0` fetched none of a large one. */
#include "harness.h"

enum { MiB = 1 << 20 };

static int where(hwrt_tensor t)
{
    int w = -1;
    OK(hwrt_offload_location(t, &w));
    return w;
}

static hwrt_tensor make(size_t mib)
{
    int64_t shape[1] = {(int64_t)(mib * MiB / 4)};
    hwrt_tensor t = NULL;
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    OK(hwrt_tensor_set_offloadable(t, 1));
    return t;
}

/* Learns the order t[0..n-1] (one step), then evicts them all to the host tier. */
static void learn_and_evict(hwrt_tensor *t, int n)
{
    for (int i = 0; i < n; i++) OK(hwrt_op_scale(t[i], t[i], 1.0, NULL));
    OK(hwrt_offload_step());
    OK(hwrt_device_synchronize());
    for (int i = 0; i < n; i++) OK(hwrt_offload_evict(t[i]));
    for (int i = 0; i < n; i++) EXPECT(where(t[i]) == 1);
}

/* Uses t[0] with the given depth; returns how many of t[1..n-1] came to the device. */
static int ahead_after_use(hwrt_tensor *t, int n, const char *depth)
{
    OK(hwrt_set_config("prefetch_depth", depth));
    OK(hwrt_op_scale(t[0], t[0], 1.0, NULL));
    OK(hwrt_device_synchronize());
    int on = 0;
    for (int i = 1; i < n; i++) on += where(t[i]) == 0;
    for (int i = 1; i < n; i++) EXPECT(where(t[i]) == (i <= on ? 0 : 1));   /* in order */
    for (int i = 0; i < n; i++)
        if (where(t[i]) == 0) OK(hwrt_offload_evict(t[i]));
    return on;
}

/* A fresh session: the first step after it records the order. */
static void session(void)
{
    hwrt_shutdown();
    OK(hwrt_set_device("sim", 0));
    hwrt_offload_config c = {.enabled = 1, .auto_offload = 1, .max_device_memory = 24 * MiB,
                             .offload_cpu_size = 64 * MiB, .enable_pinned_mem = 1,
                             .prefetch_depth = 2};
    OK(hwrt_set_offload_config(&c));
}

int main(void)
{
    setenv("HWRT_SIM_MEMORY", "64MB", 1);
    setenv("HWRT_SIM_OVERHEAD", "4MB", 1);
    session();

    TEST_CASE("one size: prefetch_depth tensors ahead, the window's edge included");
    hwrt_tensor u[5];
    for (int i = 0; i < 5; i++) u[i] = make(1);
    learn_and_evict(u, 5);
    EXPECT(ahead_after_use(u, 5, "2") == 2);
    EXPECT(ahead_after_use(u, 5, "1") == 1);
    EXPECT(ahead_after_use(u, 5, "3") == 3);
    EXPECT(ahead_after_use(u, 5, "0") == 0);
    for (int i = 0; i < 5; i++) OK(hwrt_tensor_release(u[i]));

    TEST_CASE("sizes of the order: a tensor larger than the window comes alone");
    /* order 1, 4, 1, 1 MiB: mean 1.75 MiB, depth 1 */
    session();
    hwrt_tensor v[4] = {make(1), make(4), make(1), make(1)};
    learn_and_evict(v, 4);
    EXPECT(ahead_after_use(v, 4, "1") == 1);
    EXPECT(ahead_after_use(v, 4, "3") == 2);         /* 5.25 MiB: 4 + 1 fit, not 4 + 1 + 1 */
    for (int i = 0; i < 4; i++) OK(hwrt_tensor_release(v[i]));

    OK(hwrt_shutdown());
    return test_report();
}
