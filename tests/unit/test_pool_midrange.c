/* Mid-size blocks with expandable segments (docs/memory.md, "Expandable segments" and
 * "Smallest device", item 9), on a simulated device without context overhead: requests
 * of 256 KiB - 1 MiB have a range of their own, where the lowest-addressed free block
 * that fits is taken (K/V buffers of short sequences pack as large blocks do), while the
 * small pool's range keeps best fit. */
#include "harness.h"

#include <stdlib.h>

#define MiB ((size_t)1 << 20)
#define KiB ((size_t)1 << 10)

static size_t reserved(void)
{
    hwrt_mem_stats s;
    OK(hwrt_memory_stats(0, &s));
    return (size_t)s.reserved_bytes.current;
}

static void device(const char *capacity, const char *expandable)
{
    setenv("HWRT_SIM_MEMORY", capacity, 1);
    OK(hwrt_set_device("sim", 0));
    OK(hwrt_set_config("expandable_segments", expandable));
    OK(hwrt_set_config("thread_cache", "false"));
}

static void expandable_mid(void)
{
    TEST_CASE("expandable: 256 KiB - 1 MiB blocks take the lowest-addressed fit in their range");
    device("8GB", "true");
    char *a, *b, *c, *d, *p, *small;
    OK(hwrt_malloc((void **)&a, 1 * MiB));
    OK(hwrt_malloc((void **)&b, 300 * KiB));
    OK(hwrt_malloc((void **)&c, 600 * KiB));
    OK(hwrt_malloc((void **)&d, 300 * KiB));
    EXPECT(b == a + 1 * MiB && d > c);
    OK(hwrt_free(a));                                   /* a 1 MiB hole, lowest */
    OK(hwrt_free(c));                                   /* a 600 KiB hole: the best fit */
    OK(hwrt_malloc((void **)&p, 520 * KiB));
    EXPECT(p == a);                                     /* first fit, not best fit (c) */
    hwrt_mem_stats st;
    OK(hwrt_memory_stats(0, &st));
    EXPECT(st.segment.current == 1);
    OK(hwrt_malloc((void **)&small, 64 * KiB));         /* the small pool: another range */
    OK(hwrt_memory_stats(0, &st));
    EXPECT(st.segment.current == 2);
    EXPECT(small < a || small >= d + 300 * KiB);
    OK(hwrt_free(small));
    OK(hwrt_free(p));
    OK(hwrt_free(b));
    OK(hwrt_free(d));
    OK(hwrt_empty_cache(0));
    EXPECT(reserved() == 0);
    OK(hwrt_shutdown());
}

int main(void)
{
    setenv("HWRT_SIM_REGISTRY", "off", 1);
    setenv("HWRT_SIM_OVERHEAD", "0", 1);
    setenv("HWRT_SIM_DEVICES", "1", 1);
    expandable_mid();
    return test_report();
}
