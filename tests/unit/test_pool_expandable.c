/* Expandable segments: large blocks come from one reserved address range whose 2 MiB
 * granules are mapped only while needed. Consecutive blocks are contiguous, reserved
 * grows by granules (not by 20 MiB segments), a hole is unmapped before the range grows,
 * and empty_cache unmaps everything, so device-wide used returns to the overhead. */
#include "harness.h"

#include <stdlib.h>

#define MiB ((size_t)1 << 20)

static hwrt_memory_info info(void)
{
    hwrt_memory_info mi;
    OK(hwrt_get_memory_info(0, &mi));
    return mi;
}

int main(void)
{
    setenv("HWRT_SIM_REGISTRY", "off", 1);   /* device-wide figures of this process only */
    TEST_CASE("expandable");
    OK(hwrt_set_device("sim", 0));
    OK(hwrt_set_config("expandable_segments", "true"));
    hwrt_memory_info base = info();
    char *a, *b, *c;
    OK(hwrt_malloc((void **)&a, 3 * MiB));
    EXPECT(info().reserved == 4 * MiB);                  /* two granules, not 20 MiB */
    OK(hwrt_malloc((void **)&b, 5 * MiB));
    EXPECT(b == a + 3 * MiB);                            /* same range, contiguous */
    EXPECT(info().reserved == 8 * MiB);
    EXPECT(info().used == base.used + 8 * MiB);
    OK(hwrt_free(a));                                    /* hole [0, 3 MiB): granule 0 free */
    EXPECT(info().reserved == 8 * MiB);                  /* cached */
    OK(hwrt_malloc((void **)&c, 9 * MiB));               /* must grow: unmap granule 0 first */
    EXPECT(c == b + 5 * MiB);
    hwrt_memory_info mi = info();
    EXPECT(mi.reserved == 16 * MiB);                     /* granules 1..8; 0 was unmapped */
    EXPECT(mi.allocated == 14 * MiB && mi.reserved <= mi.used);
    hwrt_mem_stats s;
    OK(hwrt_memory_stats(0, &s));
    EXPECT(s.num_device_free == 1);                      /* one unmap */
    EXPECT(s.num_alloc_retries == 0 && s.num_ooms == 0);
    char *d;
    OK(hwrt_malloc((void **)&d, 2 * MiB));               /* fits the hole again */
    EXPECT(d == a);
    OK(hwrt_free(b));
    OK(hwrt_free(c));
    OK(hwrt_free(d));
    OK(hwrt_empty_cache(0));
    mi = info();
    EXPECT(mi.reserved == 0 && mi.used == base.used);
    OK(hwrt_memory_stats(0, &s));
    EXPECT(s.segment.current == 0);
    /* a request no device could back reserves nothing (the fuzzer once made the pool
     * allocate an 8 GiB granule map for one): the OOM sentence, nothing reserved */
    void *huge = NULL;
    FAILS(hwrt_malloc(&huge, (size_t)1 << 43), HWRT_ERROR_OUT_OF_MEMORY, "8.00 TiB");
    EXPECT(info().reserved == 0);
    OK(hwrt_shutdown());
    return test_report();
}
