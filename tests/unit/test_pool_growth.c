/* Growing buffers and mid-size blocks (docs/memory.md, "How a request is served" and
 * "Smallest device", item 9), on simulated devices without context overhead:
 * - plain mode: a block freed right after the allocation of a larger one on its pool (up
 *   to twice its size, nothing freed in between) is a growing buffer (a K/V cache
 *   reallocated a little larger); after four of them, new shared segments are made of
 *   512 MiB (at most a quarter of the device), where growing buffers reuse the holes of
 *   their predecessors, and of the usual size when the device has no room for that; a
 *   request more than twice the freed block's size is no growth;
 * - expandable mode: requests of 256 KiB - 1 MiB have a range of their own, where the
 *   lowest-addressed free block that fits is taken (the small pool's range keeps best
 *   fit). */
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

/* A request on a fresh stream: a new shared segment; returns how much reserved grew. */
static size_t new_segment(hwrt_stream s, void **p)
{
    size_t before = reserved();
    OK(hwrt_malloc_async(p, 4 * MiB, s));
    return reserved() - before;
}

static void plain_growth(void)
{
    TEST_CASE("plain: shared segments grow to 512 MiB once buffers grow");
    device("4GB", "false");
    hwrt_stream s[4];
    for (int i = 0; i < 4; i++) OK(hwrt_stream_create(&s[i], 0));
    void *a, *b, *x[4];
    OK(hwrt_malloc(&a, 4 * MiB));
    EXPECT(reserved() == 64 * MiB);
    /* allocate a block more than twice the size, then free the smaller: no growth */
    for (int i = 0; i < 4; i++) {
        OK(hwrt_malloc(&b, 9 * MiB));
        OK(hwrt_free(a));
        OK(hwrt_malloc(&a, 4 * MiB));
        OK(hwrt_free(b));
    }
    EXPECT(new_segment(s[0], &x[0]) == 64 * MiB);
    /* three growths: allocate the larger, then free the smaller */
    for (int i = 1; i <= 3; i++) {
        OK(hwrt_malloc(&b, 4 * MiB + (size_t)i * 128 * KiB));
        OK(hwrt_free(a));
        a = b;
    }
    EXPECT(new_segment(s[1], &x[1]) == 64 * MiB);       /* not yet */
    OK(hwrt_malloc(&b, 4 * MiB + 4 * 128 * KiB));       /* the fourth */
    OK(hwrt_free(a));
    a = b;
    EXPECT(new_segment(s[2], &x[2]) == 512 * MiB);
    TEST_CASE("plain: the usual shared segment when the device has no room for 512 MiB");
    hwrt_memory_info mi;
    OK(hwrt_get_memory_info(0, &mi));
    void *fill;
    OK(hwrt_malloc(&fill, (mi.free - 100 * MiB) / (2 * MiB) * (2 * MiB)));
    EXPECT(new_segment(s[3], &x[3]) == 64 * MiB);
    hwrt_mem_stats st;
    OK(hwrt_memory_stats(0, &st));
    EXPECT(st.num_ooms == 0);
    OK(hwrt_free(fill));
    for (int i = 0; i < 4; i++) OK(hwrt_free(x[i]));
    OK(hwrt_free(a));
    for (int i = 0; i < 4; i++) OK(hwrt_stream_destroy(s[i]));
    OK(hwrt_empty_cache(0));
    EXPECT(reserved() == 0);
    OK(hwrt_shutdown());
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
    plain_growth();
    expandable_mid();
    return test_report();
}
