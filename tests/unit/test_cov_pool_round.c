/* The pool's size rounding and garbage collection against the device's own size (issue
 * 25 item 3, mem/pool.c), checked through hwrt_memory_stats:
 * - roundup_power2_divisions 4: 9000 bytes round up to a quarter step (10240, not the
 *   plain 9216), 70000 to 81920, a power of two stays itself, sizes up to 512 x 4 round
 *   to 512 as without the setting;
 * - garbage_collection_threshold with no max_device_memory: the device's capacity is the
 *   limit; a cached segment is given back before growing past it; a segment that still
 *   holds a live block is not, and the pool grows (no OOM, nothing freed). */
#include "harness.h"

#include <stdlib.h>

#define MiB ((size_t)1 << 20)

static hwrt_mem_stats stats(void)
{
    hwrt_mem_stats s;
    OK(hwrt_memory_stats(0, &s));
    return s;
}

static void rounding(void)
{
    TEST_CASE("roundup_power2_divisions 4");
    OK(hwrt_set_config("thread_cache", "0"));            /* every block through the pool */
    OK(hwrt_set_config("roundup_power2_divisions", "4"));
    const size_t req[] = {9000, 70000, 65536, 2000, 1 << 20};
    const size_t want[] = {10240, 81920, 65536, 2048, 1 << 20};
    for (int i = 0; i < 5; i++) {
        hwrt_mem_stats b = stats();
        void *p = NULL;
        OK(hwrt_malloc(&p, req[i]));
        hwrt_mem_stats a = stats();
        EXPECT(a.allocated_bytes.current - b.allocated_bytes.current == (int64_t)want[i]);
        EXPECT(a.requested_bytes.current - b.requested_bytes.current == (int64_t)req[i]);
        if (a.allocated_bytes.current - b.allocated_bytes.current != (int64_t)want[i])
            fprintf(stderr, "  %zu -> %lld, want %zu\n", req[i],
                    (long long)(a.allocated_bytes.current - b.allocated_bytes.current), want[i]);
        OK(hwrt_free(p));
    }
    OK(hwrt_set_config("roundup_power2_divisions", "0"));
    void *p = NULL;
    hwrt_mem_stats b = stats();
    OK(hwrt_malloc(&p, 9000));
    EXPECT(stats().allocated_bytes.current - b.allocated_bytes.current == 9216);
    OK(hwrt_free(p));
}

static void collection_against_the_device(void)
{
    TEST_CASE("garbage collection with the device's capacity as the limit");
    OK(hwrt_empty_cache(0));
    OK(hwrt_set_config("max_device_memory", "0"));
    OK(hwrt_set_config("garbage_collection_threshold", "0.5"));   /* of 128 MiB */
    hwrt_mem_stats before = stats();
    void *a = NULL, *b = NULL;
    OK(hwrt_malloc(&a, 40 * MiB));
    OK(hwrt_free(a));                                       /* 40 MiB cached */
    OK(hwrt_malloc(&b, 30 * MiB));                          /* 70 > 64: collect first */
    hwrt_mem_stats s = stats();
    EXPECT(s.reserved_bytes.current == (int64_t)(30 * MiB));
    EXPECT(s.num_device_free == before.num_device_free + 1);
    EXPECT(s.num_ooms == before.num_ooms && s.num_alloc_retries == before.num_alloc_retries);
    OK(hwrt_free(b));

    TEST_CASE("a segment holding a live block is not collected: the pool grows");
    OK(hwrt_empty_cache(0));
    OK(hwrt_set_config("garbage_collection_threshold", "0.01"));  /* 1.28 MiB */
    void *x = NULL, *y = NULL, *big = NULL;
    OK(hwrt_malloc(&x, 1024));                              /* one small segment */
    OK(hwrt_malloc(&y, 1024));
    OK(hwrt_free(x));                                       /* y keeps it */
    before = stats();
    OK(hwrt_malloc(&big, 4 * MiB));
    s = stats();
    EXPECT(s.num_device_free == before.num_device_free);
    EXPECT(s.reserved_bytes.current >= before.reserved_bytes.current + (int64_t)(4 * MiB));
    EXPECT(s.num_device_alloc == before.num_device_alloc + 1);   /* grew by one segment */
    EXPECT(s.num_ooms == before.num_ooms);
    int v = 0x5a5a5a5a, got = 0;
    OK(hwrt_memcpy(y, &v, sizeof v, HWRT_MEMCPY_HOST_TO_DEVICE));
    OK(hwrt_memcpy(&got, y, sizeof got, HWRT_MEMCPY_DEVICE_TO_HOST));
    EXPECT(got == v);
    OK(hwrt_free(y));
    OK(hwrt_free(big));
    OK(hwrt_set_config("garbage_collection_threshold", "0"));
}

int main(void)
{
    setenv("HWRT_SIM_DEVICES", "1", 1);
    setenv("HWRT_SIM_MEMORY", "128MB", 1);
    setenv("HWRT_SIM_OVERHEAD", "0", 1);
    OK(hwrt_set_device("sim", 0));
    rounding();
    collection_against_the_device();
    OK(hwrt_shutdown());
    return test_report();
}
