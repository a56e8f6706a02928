/* The simulated device's memory as pages behind a larger address space (sim_mem.c),
 * seen through the pool on a 64 MiB device with no context overhead:
 * - free memory scattered over the address space still serves a large segment (only
 *   physical pages limit it, not a contiguous free range of the capacity);
 * - expandable reservations cost no capacity: 15 streams, each with its own reserved
 *   range, map 4 MiB apiece, 60 MiB of the 64;
 * - memory is used in 2 MiB pages: 1 byte takes a page, 3 MiB two (expandable);
 * - the capacity is the limit: 32 small segments fill the device, one more block fails
 *   with the breakdown, and succeeds once a block is free again. */
#include "harness.h"

#include <stdlib.h>

#define MiB ((size_t)1 << 20)

static size_t used(void)
{
    hwrt_memory_info mi;
    OK(hwrt_get_memory_info(0, &mi));
    return mi.used;
}

static void scattered_free_memory(void)
{
    TEST_CASE("a segment from scattered free pages");
    OK(hwrt_set_config("expandable_segments", "false"));
    void *p[6];
    for (int i = 0; i < 6; i++) OK(hwrt_malloc(&p[i], 10 * MiB));   /* 60 MiB, 6 segments */
    for (int i = 1; i < 6; i += 2) OK(hwrt_free(p[i]));
    OK(hwrt_empty_cache(0));                    /* three 10 MiB holes and a 4 MiB tail */
    EXPECT(used() == 30 * MiB);
    void *big = NULL;
    OK(hwrt_malloc(&big, 24 * MiB));            /* 54 of 64 MiB: fits in pages */
    EXPECT(used() == 54 * MiB);
    OK(hwrt_free(big));
    for (int i = 0; i < 6; i += 2) OK(hwrt_free(p[i]));
    OK(hwrt_empty_cache(0));
    EXPECT(used() == 0);
}

static void reservations_cost_nothing(void)
{
    TEST_CASE("expandable reservations charge no capacity");
    OK(hwrt_set_config("expandable_segments", "true"));
    hwrt_stream s[15];
    void *p[15];
    for (int i = 0; i < 15; i++) {
        OK(hwrt_stream_create(&s[i], 0));
        OK(hwrt_malloc_async(&p[i], 3 * MiB, s[i]));   /* a range per stream, 2 pages mapped */
    }
    EXPECT(used() == 60 * MiB);
    hwrt_memory_info mi;
    OK(hwrt_get_memory_info(0, &mi));
    EXPECT(mi.reserved == 60 * MiB && mi.free == 4 * MiB);
    for (int i = 0; i < 15; i++) {
        OK(hwrt_free_async(p[i], s[i]));
        OK(hwrt_stream_destroy(s[i]));
    }
    OK(hwrt_empty_cache(0));
    EXPECT(used() == 0);
}

static void pages_of_two_mib(void)
{
    TEST_CASE("memory in 2 MiB pages");
    OK(hwrt_set_config("expandable_segments", "true"));
    void *a, *b;
    OK(hwrt_malloc(&a, 1));
    EXPECT(used() == 2 * MiB);
    OK(hwrt_malloc(&b, 3 * MiB));
    EXPECT(used() == 6 * MiB);
    OK(hwrt_free(a));
    OK(hwrt_free(b));
    OK(hwrt_empty_cache(0));
    EXPECT(used() == 0);
}

static void capacity_is_the_limit(void)
{
    TEST_CASE("capacity limits physical pages");
    OK(hwrt_set_config("expandable_segments", "false"));
    void *p[64], *extra = (void *)1;
    for (int i = 0; i < 64; i++) OK(hwrt_malloc(&p[i], MiB));   /* 20 MiB shared segments, then 2 MiB ones */
    EXPECT(used() == 64 * MiB);
    FAILS(hwrt_malloc(&extra, MiB), HWRT_ERROR_OUT_OF_MEMORY, "out of memory on device 0");
    EXPECT(extra == NULL);
    OK(hwrt_free(p[7]));
    OK(hwrt_malloc(&extra, MiB));               /* the cached segment serves it */
    OK(hwrt_free(extra));
    for (int i = 0; i < 64; i++) if (i != 7) OK(hwrt_free(p[i]));
    OK(hwrt_empty_cache(0));
    EXPECT(used() == 0);
}

int main(void)
{
    setenv("HWRT_SIM_REGISTRY", "off", 1);   /* device-wide figures of this process only */
    setenv("HWRT_SIM_MEMORY", "64MB", 1);
    setenv("HWRT_SIM_OVERHEAD", "0", 1);
    setenv("HWRT_SIM_DEVICES", "1", 1);
    OK(hwrt_set_device("sim", 0));
    OK(hwrt_set_config("thread_cache", "false"));
    scattered_free_memory();
    reservations_cost_nothing();
    pages_of_two_mib();
    capacity_is_the_limit();
    OK(hwrt_shutdown());
    return test_report();
}
