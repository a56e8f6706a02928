/* The pool's headroom (src/mem/pool_headroom.h): the largest block an allocation of a
 * size class gets without the pool synchronizing the device. On a small simulated
 * device (2 MiB pages), a seeded sequence of tensor-block allocations and frees of
 * every size class (16-256 KiB: small segments; 0.3-3.5 MiB: shared segments; 10-13 MiB:
 * dedicated ones), each checked against the query made just before it:
 *  - headroom >= bytes: the allocation succeeds and the pool does not synchronize the
 *    device (num_sync_all_streams unchanged): the query never promises what the pool
 *    can only give after a sync;
 *  - headroom < bytes: the allocation synchronizes the device (its last resort before
 *    failing) or fails: the query does not hide room that is there;
 *  - a fresh device's headroom is its free memory (rounded down to the 2 MiB page);
 *  - on a full device two freed neighbours count as one block of their joint size, for
 *    requests of their pool's size class only.
 * Frees here have no stream users, so they complete at once. No timing decides a
 * result. */
#include "harness.h"
#include "mem/pool.h"
#include "mem/pool_headroom.h"
#include "runtime/runtime.h"

enum { NLIVE = 12, OPS = 400 };

static uint64_t syncs(void)
{
    hwrt_mem_stats st;
    OK(hwrt_memory_stats(0, &st));
    return st.num_sync_all_streams;
}

/* The seeded sequence on a fresh runtime; expandable: expandable segments. */
static void run(int expandable)
{
    OK(hwrt_set_config("expandable_segments", expandable ? "true" : "false"));
    OK(hwrt_set_device("sim", 0));
    hwi_device *d = NULL;
    OK(hwi_device_get(0, &d));

    TEST_CASE(expandable ? "expandable: a fresh device: its free memory"
                         : "a fresh device: its free memory");
    size_t fresh = hwi_pool_headroom(d, NULL, 1u << 20);
    EXPECT(fresh == (16u << 20));

    TEST_CASE(expandable ? "expandable: headroom against what the allocation does"
                         : "headroom against what the allocation does");
    void *live[NLIVE] = {0};
    unsigned seed = 2026u;
    int promised = 0, refused = 0, broken_promise = 0, hidden_room = 0;
    for (int i = 0; i < OPS; i++) {
        seed = seed * 1664525u + 1013904223u;
        int k = (int)(seed >> 8) % NLIVE;
        if (live[k]) {
            OK(hwi_pool_free(live[k], "test"));
            live[k] = NULL;
            continue;
        }
        seed = seed * 1664525u + 1013904223u;
        unsigned r = seed >> 8;
        size_t bytes = r % 4 == 0 ? (16u << 10) + (size_t)(r / 4 % (240u << 10))     /* small */
                     : r % 4 == 3 ? (10u << 20) + (size_t)(r / 4 % (3u << 20))       /* large */
                                  : (300u << 10) + (size_t)(r / 4 % (3200u << 10));  /* shared */
        size_t h = hwi_pool_headroom(d, NULL, bytes);
        uint64_t s0 = syncs();
        hwrt_status st = hwi_pool_alloc_tensor(d, bytes, &live[k]);
        int synced = syncs() != s0;
        if (st != HWRT_SUCCESS) live[k] = NULL;
        if (h >= bytes) {
            promised++;
            if (st != HWRT_SUCCESS || synced) {
                broken_promise++;
                fprintf(stderr, "op %d: %zu B with headroom %zu: status %d, synced %d\n", i,
                        bytes, h, (int)st, synced);
            }
        } else {
            refused++;
            if (st == HWRT_SUCCESS && !synced) {
                hidden_room++;
                fprintf(stderr, "op %d: %zu B with headroom %zu placed without a sync\n", i,
                        bytes, h);
            }
        }
    }
    fprintf(stderr, "%d allocations the headroom allowed, %d it refused\n", promised, refused);
    EXPECT(broken_promise == 0);
    EXPECT(hidden_room == 0);
    EXPECT(promised > 20 && refused > 20);       /* both sides were exercised */
    for (int k = 0; k < NLIVE; k++)
        if (live[k]) OK(hwi_pool_free(live[k], "test"));

    TEST_CASE(expandable ? "expandable: everything freed: the cached memory counts"
                         : "everything freed: the cached segments count");
    EXPECT(hwi_pool_headroom(d, NULL, 1u << 20) >= (2u << 20));
    OK(hwrt_set_config("expandable_segments", "false"));
    OK(hwrt_shutdown());
}

/* A full device: a freed block counts at its size, and only for the pool it is in. */
static void full_device(void)
{
    OK(hwrt_set_device("sim", 0));
    hwi_device *d = NULL;
    OK(hwi_device_get(0, &d));
    TEST_CASE("a full device: two freed neighbours count as one block");
    void *b[32] = {0};
    int n = 0;
    while (n < 32 && hwi_pool_headroom(d, NULL, 1u << 20) >= (1u << 20))
        OK(hwi_pool_alloc_tensor(d, 1u << 20, &b[n++]));
    EXPECT(n == 16);                              /* 16 MiB of 1 MiB blocks, 2 a segment */
    EXPECT(hwi_pool_headroom(d, NULL, 1u << 20) == 0);
    OK(hwi_pool_free(b[4], "test"));              /* both blocks of one 2 MiB segment */
    OK(hwi_pool_free(b[5], "test"));
    b[4] = b[5] = NULL;
    EXPECT(hwi_pool_headroom(d, NULL, 512u << 10) == (2u << 20));
    EXPECT(hwi_pool_headroom(d, NULL, 64u << 10) == 0);   /* small blocks: another pool */
    uint64_t s0 = syncs();
    void *two = NULL;
    OK(hwi_pool_alloc_tensor(d, 2u << 20, &two));
    EXPECT(syncs() == s0);
    OK(hwi_pool_free(two, "test"));
    for (int i = 0; i < n; i++)
        if (b[i]) OK(hwi_pool_free(b[i], "test"));
    OK(hwrt_shutdown());
}

int main(void)
{
    setenv("HWRT_SIM_MEMORY", "20MB", 1);
    setenv("HWRT_SIM_OVERHEAD", "4MB", 1);
    run(0);
    run(1);
    full_device();
    return test_report();
}
