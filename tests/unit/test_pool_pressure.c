/* The pool under pressure on a full device (64 MiB, no context overhead), plain segments:
 * - the last resort before OOM: a free block of another stream's pool (in a segment that
 *   cannot be given back, a live block holds it) serves a request on stream B, with B
 *   recorded on it, so the owner stream reuses it only after B's work on it is done;
 * - a request on the default stream (which cannot be recorded) does not take it: OOM
 *   with the breakdown, state intact;
 * - a small request takes a free block of its own stream's large pool when no small
 *   segment can be had. */
#include "harness.h"

#include <stdlib.h>

#define MiB ((size_t)1 << 20)

static hwrt_mem_stats stats(void)
{
    hwrt_mem_stats s;
    OK(hwrt_memory_stats(0, &s));
    return s;
}

static void other_streams_blocks(void)
{
    TEST_CASE("another stream's free block as the last resort");
    hwrt_stream a, b;
    OK(hwrt_stream_create(&a, 0));
    OK(hwrt_stream_create(&b, 0));
    char *a1, *a2, *a3, *big, *x = NULL, *y = (char *)1;
    OK(hwrt_malloc_async((void **)&a1, 5 * MiB, a));    /* one shared 20 MiB segment of a */
    OK(hwrt_malloc_async((void **)&a2, 5 * MiB, a));
    OK(hwrt_malloc_async((void **)&a3, 5 * MiB, a));
    OK(hwrt_free_async(a2, a));
    OK(hwrt_free_async(a3, a));                          /* a1 live, 15 MiB free after it */
    OK(hwrt_malloc_async((void **)&big, 44 * MiB, b));   /* the device is full: 20 + 44 */
    int64_t ooms = stats().num_ooms;
    FAILS(hwrt_malloc((void **)&y, 8 * MiB), HWRT_ERROR_OUT_OF_MEMORY, "out of memory on device 0");
    EXPECT(y == NULL && stats().num_ooms == ooms + 1);   /* the default stream: not a's block */
    OK(hwrt_malloc_async((void **)&x, 8 * MiB, b));      /* b: a's free 15 MiB serves it */
    EXPECT(x == a2);
    EXPECT(stats().num_ooms == ooms + 1);
    hwrt_memory_info mi;
    OK(hwrt_get_memory_info(0, &mi));
    EXPECT(mi.used == 64 * MiB);
    /* freed on b, the block waits for b's work before a may take it again */
    int v = 7;
    OK(hwrt_memcpy_async(x, &v, sizeof v, HWRT_MEMCPY_HOST_TO_DEVICE, b));
    OK(hwrt_free_async(x, b));
    OK(hwrt_stream_synchronize(b));
    char *again;
    OK(hwrt_malloc_async((void **)&again, 8 * MiB, a));
    EXPECT(again == a2);                                 /* back in a's pool */
    OK(hwrt_free_async(again, a));
    OK(hwrt_free_async(a1, a));
    OK(hwrt_free_async(big, b));
    OK(hwrt_stream_destroy(a));
    OK(hwrt_stream_destroy(b));
    OK(hwrt_empty_cache(0));
    EXPECT(stats().reserved_bytes.current == 0);
}

static void other_kind(void)
{
    TEST_CASE("the large pool's free block for a small request");
    char *a1, *a2, *a3, *big, *x = NULL;
    OK(hwrt_malloc((void **)&a1, 5 * MiB));             /* one shared 20 MiB segment */
    OK(hwrt_malloc((void **)&a2, 5 * MiB));
    OK(hwrt_malloc((void **)&a3, 5 * MiB));
    OK(hwrt_free(a2));
    OK(hwrt_free(a3));
    OK(hwrt_malloc((void **)&big, 44 * MiB));           /* the device is full */
    int64_t ooms = stats().num_ooms;
    OK(hwrt_malloc((void **)&x, 128 << 10));            /* no 2 MiB small segment left */
    EXPECT(x == a2 && stats().num_ooms == ooms);
    OK(hwrt_free(x));
    OK(hwrt_free(a1));
    OK(hwrt_free(big));
    OK(hwrt_empty_cache(0));
    EXPECT(stats().reserved_bytes.current == 0);
}

int main(void)
{
    setenv("HWRT_SIM_REGISTRY", "off", 1);
    setenv("HWRT_SIM_MEMORY", "64MB", 1);
    setenv("HWRT_SIM_OVERHEAD", "0", 1);
    setenv("HWRT_SIM_DEVICES", "1", 1);
    OK(hwrt_set_device("sim", 0));
    OK(hwrt_set_config("expandable_segments", "false"));
    OK(hwrt_set_config("thread_cache", "false"));
    other_streams_blocks();
    other_kind();
    OK(hwrt_shutdown());
    return test_report();
}
