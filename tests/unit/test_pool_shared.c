/* The pool's shared segments in plain mode (docs/memory.md, "How a request is served"
 * and "Smallest device"), on simulated devices without context overhead:
 * - requests of 256 KiB - 1 MiB share the large pool's segments instead of pinning 2 MiB
 *   small segments a few at a time: 80 blocks of 768 KiB (60 MiB) fit a 64 MiB device;
 * - the rest of a shared segment's block is split off however small (it serves the next
 *   request instead of staying inside the block);
 * - requests that share segments do not take a dedicated segment's rest, and
 *   dedicated-size requests do not take a shared segment's hole while the device has
 *   room (under pressure the retry's last resort still gives them one);
 * - a device of 2-4 GiB shares 64 MiB segments below 20 MiB, and a segment made for one
 *   64 MiB request is dedicated (kept for its size), not taken for a shared one;
 * - a shared segment is made larger to hold a whole number of its first request's blocks
 *   (14 MiB: 70 MiB, not 64 with 8 MiB no such block can use), the plain size when the
 *   device has no room for that. */
#include "harness.h"

#include <stdlib.h>

#define MiB ((size_t)1 << 20)

static hwrt_mem_stats stats(void)
{
    hwrt_mem_stats s;
    OK(hwrt_memory_stats(0, &s));
    return s;
}

static void device(const char *capacity)
{
    setenv("HWRT_SIM_MEMORY", capacity, 1);
    OK(hwrt_set_device("sim", 0));
    OK(hwrt_set_config("expandable_segments", "false"));
    OK(hwrt_set_config("thread_cache", "false"));
}

static void mid_blocks_share(void)
{
    TEST_CASE("blocks of 768 KiB share segments: 60 MiB of them fit 64 MiB");
    device("64MB");
    void *p[80];
    for (int i = 0; i < 80; i++) OK(hwrt_malloc(&p[i], 768 << 10));
    EXPECT(stats().num_ooms == 0);
    EXPECT(stats().requested_bytes.current == 80 * (768 << 10));
    hwrt_memory_info mi;
    OK(hwrt_get_memory_info(0, &mi));
    EXPECT(mi.reserved <= 64 * MiB);
    for (int i = 0; i < 80; i++) OK(hwrt_free(p[i]));
    OK(hwrt_empty_cache(0));
    EXPECT(stats().reserved_bytes.current == 0);
    OK(hwrt_shutdown());
}

static void shared_rest_split(void)
{
    TEST_CASE("a shared block's rest is split off however small");
    device("64MB");                                     /* 20 MiB shared segments below 10 MiB */
    char *a, *b, *c, *d;
    OK(hwrt_malloc((void **)&a, 6 * MiB));
    OK(hwrt_malloc((void **)&b, 6 * MiB));
    OK(hwrt_malloc((void **)&c, 7 * MiB + 512 * 1024)); /* 512 KiB of the segment left */
    EXPECT(stats().segment.current == 1);
    EXPECT(stats().allocated_bytes.current == (int64_t)(19 * MiB + 512 * 1024));
    OK(hwrt_malloc((void **)&d, 400 << 10));            /* the rest serves it */
    EXPECT(d == c + 7 * MiB + 512 * 1024 && stats().segment.current == 1);
    OK(hwrt_free(d));
    OK(hwrt_free(c));
    OK(hwrt_free(b));
    OK(hwrt_free(a));
    OK(hwrt_empty_cache(0));
    EXPECT(stats().reserved_bytes.current == 0);
    OK(hwrt_shutdown());
}

static void kinds_apart(void)
{
    TEST_CASE("shared and dedicated segments serve their own kind of request");
    device("64MB");                                     /* dedicated from 10 MiB */
    char *big, *s1, *s2, *hold, *r;
    OK(hwrt_malloc((void **)&big, 12 * MiB));
    OK(hwrt_free(big));
    int64_t frees = stats().num_device_free;
    OK(hwrt_malloc((void **)&s1, 5 * MiB));             /* a shared request: not the 12 MiB block, */
    EXPECT(stats().num_device_free == frees + 1);       /* which goes back (growing past the peak) */
    EXPECT(stats().segment.current == 1 && stats().reserved_bytes.current == 20 * MiB);
    OK(hwrt_free(s1));
    OK(hwrt_malloc((void **)&hold, 2 * MiB));           /* the shared segment's base */
    OK(hwrt_malloc((void **)&s1, 9 * MiB));
    OK(hwrt_malloc((void **)&s2, 8 * MiB));
    EXPECT(s1 == hold + 2 * MiB && s2 == s1 + 9 * MiB);
    OK(hwrt_free(s1));
    OK(hwrt_free(s2));                                  /* an 18 MiB hole after hold */
    OK(hwrt_malloc((void **)&r, 12 * MiB));             /* the device has room: a segment of its own */
    EXPECT(r != s1 && stats().segment.current == 2);
    OK(hwrt_free(r));
    TEST_CASE("under pressure a dedicated-size request takes a shared hole");
    char *fill;
    OK(hwrt_empty_cache(0));                            /* 20 MiB reserved: the shared one */
    EXPECT(stats().reserved_bytes.current == 20 * MiB);
    OK(hwrt_malloc((void **)&fill, 44 * MiB));          /* the device is full */
    int64_t ooms = stats().num_ooms;
    OK(hwrt_malloc((void **)&r, 12 * MiB));             /* the last resort: the 18 MiB hole */
    EXPECT(r == s1 && stats().num_ooms == ooms);
    OK(hwrt_free(r));
    OK(hwrt_free(fill));
    OK(hwrt_free(hold));
    OK(hwrt_empty_cache(0));
    EXPECT(stats().reserved_bytes.current == 0);
    OK(hwrt_shutdown());
}

static void mid_device(void)
{
    TEST_CASE("a 3 GiB device shares 64 MiB segments below 20 MiB");
    device("3GB");
    void *a, *b;
    OK(hwrt_malloc(&a, 8 * MiB));                       /* 64 MiB hold 8 of them */
    OK(hwrt_malloc(&b, 12 * MiB));
    EXPECT(stats().segment.current == 1);
    EXPECT(stats().reserved_bytes.current == 64 * MiB);
    EXPECT((char *)b == (char *)a + 8 * MiB);
    OK(hwrt_free(a));
    OK(hwrt_free(b));
    OK(hwrt_empty_cache(0));
    TEST_CASE("a shared segment holds a whole number of its first request's blocks");
    /* 64 MiB would hold four 14 MiB blocks and leave 8 MiB that a fifth cannot use: the
     * segment is made 70 MiB, five of them */
    void *k[5];
    for (int i = 0; i < 5; i++) OK(hwrt_malloc(&k[i], 14 * MiB));
    EXPECT(stats().segment.current == 1);
    EXPECT(stats().reserved_bytes.current == 70 * MiB);
    EXPECT((char *)k[4] == (char *)k[0] + 56 * MiB);
    for (int i = 0; i < 5; i++) OK(hwrt_free(k[i]));
    OK(hwrt_empty_cache(0));
    TEST_CASE("a device without room for the larger shared segment gets the plain one");
    void *fill, *m;
    hwrt_memory_info mi;
    OK(hwrt_get_memory_info(0, &mi));
    OK(hwrt_malloc(&fill, (mi.free - 66 * MiB) / (2 * MiB) * (2 * MiB)));
    OK(hwrt_get_memory_info(0, &mi));
    size_t left = mi.free;                              /* 66-68 MiB: not 70 */
    EXPECT(left >= 66 * MiB && left < 70 * MiB);
    OK(hwrt_malloc(&m, 14 * MiB));
    EXPECT(stats().num_ooms == 0);
    OK(hwrt_get_memory_info(0, &mi));
    EXPECT(mi.free == left - 64 * MiB);                 /* a 64 MiB shared segment */
    OK(hwrt_free(m));
    OK(hwrt_free(fill));
    OK(hwrt_shutdown());
}

static void dedicated_of_shared_size(void)
{
    TEST_CASE("a 64 MiB request's segment is dedicated, not shared, though of that size");
    device("8GB");
    void *a, *b;
    OK(hwrt_malloc(&a, 64 * MiB));
    OK(hwrt_free(a));
    OK(hwrt_malloc(&b, 24 * MiB));                      /* would leave 40 MiB: not carved, */
    EXPECT(stats().reserved_bytes.current == 24 * MiB); /* the cached 64 MiB goes back */
    OK(hwrt_free(b));
    OK(hwrt_shutdown());
}

int main(void)
{
    setenv("HWRT_SIM_REGISTRY", "off", 1);
    setenv("HWRT_SIM_OVERHEAD", "0", 1);
    setenv("HWRT_SIM_DEVICES", "1", 1);
    mid_blocks_share();
    shared_rest_split();
    kinds_apart();
    mid_device();
    dedicated_of_shared_size();
    return test_report();
}
