/* Regression tests for mutation survivors of issue 25 that no other suite's case fits:
 * the expandable reservation bound (a request of the whole device still gets an
 * expandable range) and the per-stream pool cleanup (a destroyed stream's pools go with
 * it), the deterministic-mode stream wait and the small sizes' bin index. Each case
 * names the mutant it kills. */
#include "harness.h"

#include <malloc.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#define MiB ((size_t)1 << 20)

/* Does the memory snapshot of device 0 contain needle? */
static int snapshot_has(const char *needle)
{
    char path[] = "/tmp/hwrt-mutants25-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return 0;
    close(fd);
    int found = 0;
    if (hwrt_memory_snapshot(0, path) == HWRT_SUCCESS) {
        FILE *f = fopen(path, "r");
        static char text[1 << 16];
        size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
        if (f) fclose(f);
        text[n] = 0;
        found = strstr(text, needle) != NULL;
    }
    unlink(path);
    return found;
}

/* pool.c grow(): a range is reserved when it fits the device (`va <= total`); with `<`
 * a request of the whole device fell back to a plain segment. */
static void expandable_whole_device(void)
{
    TEST_CASE("expandable range of the whole device");
    setenv("HWRT_SIM_MEMORY", "64MB", 1);
    setenv("HWRT_SIM_OVERHEAD", "0", 1);
    OK(hwrt_set_device("sim", 0));
    OK(hwrt_set_config("expandable_segments", "true"));
    hwrt_memory_info mi;
    OK(hwrt_get_memory_info(0, &mi));
    EXPECT(mi.total == 64 * MiB);
    char *a;
    OK(hwrt_malloc((void **)&a, 64 * MiB - 4096));      /* rounds to the device's 64 MiB */
    EXPECT(snapshot_has("\"expandable\": true"));
    EXPECT(!snapshot_has("\"expandable\": false"));
    OK(hwrt_free(a));
    OK(hwrt_empty_cache(0));
    OK(hwrt_set_config("expandable_segments", "false"));
    OK(hwrt_shutdown());
    unsetenv("HWRT_SIM_MEMORY");
    unsetenv("HWRT_SIM_OVERHEAD");
}

/* A stream that allocated on both pools, freed, destroyed; the heap in use after it. */
static size_t stream_round(int allocate)
{
    hwrt_stream s;
    OK(hwrt_stream_create(&s, 0));
    if (allocate) {
        void *small, *large;
        OK(hwrt_malloc_async(&small, 1024, s));        /* the stream's small pool */
        OK(hwrt_malloc_async(&large, 3 * MiB, s));     /* and its large pool */
        OK(hwrt_free_async(small, s));
        OK(hwrt_free_async(large, s));
    }
    OK(hwrt_stream_destroy(s));
    OK(hwrt_empty_cache(0));
    return mallinfo2().uordblks;
}

/* pool.c hwi_pool_stream_destroyed(): the pools keyed by the destroyed stream are freed
 * once its segments moved to the NULL-stream pool (`sp->owner == bs`). With `!=` they
 * stayed (two pools of ~36 KiB) until another stream was destroyed, which freed them
 * instead of its own: so the heap in use after a stream that allocated must equal the
 * heap after a following stream that did not (no time involved). */
static void stream_pools_freed(void)
{
    TEST_CASE("a destroyed stream's pools are freed with it");
    OK(hwrt_set_device("sim", 0));
    hwrt_stream keep;
    OK(hwrt_stream_create(&keep, 0));             /* a live stream whose pool must stay */
    void *kp;
    OK(hwrt_malloc_async(&kp, 1024, keep));
    for (int r = 0; r < 4; r++) stream_round(r & 1);   /* tables and caches settle */
    size_t after_alloc = stream_round(1);
    size_t after_plain = stream_round(0);
    fprintf(stderr, "  heap after a stream that allocated %zu, after one that did not %zu\n",
            after_alloc, after_plain);
    EXPECT(after_alloc < after_plain + 16384);    /* the mutant: 140 KiB more (0 under ASan) */
    void *kq;
    OK(hwrt_malloc_async(&kq, 1024, keep));       /* the live stream's pool still works */
    EXPECT(kq == (char *)kp + 1024);              /* its segment, next to kp */
    OK(hwrt_free_async(kq, keep));
    OK(hwrt_free_async(kp, keep));
    OK(hwrt_stream_destroy(keep));
    OK(hwrt_shutdown());
}

/* sim_stream.c seq_done(): under HWRT_SIM_DETERMINISTIC a wait runs ready ops until the
 * stream's completed sequence number reaches the one waited for (`>=`); with `>` the
 * wait for the last op ran on for good, as nothing after it would ever complete. The
 * seeded schedule is repeatable: seed 1 leaves work queued when synchronize is called.
 * An alarm turns that hang into a failure. */
static void deterministic_sync(void)
{
    TEST_CASE("a deterministic-mode synchronize returns when the last op completed");
    setenv("HWRT_SIM_DETERMINISTIC", "1", 1);
    OK(hwrt_set_device("sim", 0));
    hwrt_stream s;
    OK(hwrt_stream_create(&s, 0));
    unsigned char *d, host[4096];
    OK(hwrt_malloc((void **)&d, sizeof host));
    for (int i = 0; i < 100; i++) OK(hwrt_memset_async(d, i, sizeof host, s));
    EXPECT(hwrt_stream_query(s) == HWRT_ERROR_NOT_READY);   /* work left for the wait */
    alarm(20);
    OK(hwrt_stream_synchronize(s));
    alarm(0);
    OK(hwrt_stream_query(s));
    OK(hwrt_memcpy(host, d, sizeof host, HWRT_MEMCPY_DEVICE_TO_HOST));
    int all = 1;
    for (size_t i = 0; i < sizeof host; i++) all &= host[i] == 99;
    EXPECT(all);                                  /* the last memset's bytes */
    OK(hwrt_free(d));
    OK(hwrt_stream_destroy(s));
    OK(hwrt_shutdown());
    unsetenv("HWRT_SIM_DETERMINISTIC");
}

/* pool_bins.c bin_of(): small sizes go to exact bins `size / 512 - 1`; with `+ 1` the
 * largest two exact sizes land in the first sorted bins of the large sizes, where every
 * block counts against the search's bound of 256 tries. So: 300 free blocks of
 * 2 MiB - 512 B (kept apart by live separators) and one free block of 2 MiB + 200 KiB;
 * a request of 2 MiB + 100 KiB must get that block, not a fresh segment. */
static void bins_keep_exact_sizes_apart(void)
{
    TEST_CASE("exact-size bins stay out of the sorted large bins");
    setenv("HWRT_SIM_MEMORY", "4GB", 1);
    OK(hwrt_set_device("sim", 0));
    OK(hwrt_set_config("thread_cache", "false"));
    enum { NB = 300 };
    static void *blk[NB], *sep[NB];
    void *x, *xsep;
    OK(hwrt_malloc(&x, 2 * MiB + 200 * 1024));
    OK(hwrt_malloc(&xsep, 3 * MiB / 2));
    for (int i = 0; i < NB; i++) {
        OK(hwrt_malloc(&blk[i], 2 * MiB - 512));
        OK(hwrt_malloc(&sep[i], 3 * MiB / 2));
    }
    for (int i = 0; i < NB; i++) OK(hwrt_free(blk[i]));
    OK(hwrt_free(x));
    hwrt_mem_stats st;
    OK(hwrt_memory_stats(0, &st));
    int64_t reserved = st.reserved_bytes.current;
    void *y;
    OK(hwrt_malloc(&y, 2 * MiB + 100 * 1024));
    EXPECT(y == x);                               /* the cached block that fits */
    OK(hwrt_memory_stats(0, &st));
    EXPECT(st.reserved_bytes.current == reserved);
    OK(hwrt_free(y));
    for (int i = 0; i < NB; i++) OK(hwrt_free(sep[i]));
    OK(hwrt_free(xsep));
    OK(hwrt_shutdown());
    unsetenv("HWRT_SIM_MEMORY");
}

int main(void)
{
    setenv("HWRT_SIM_REGISTRY", "off", 1);   /* device-wide figures of this process only */
    OK(hwrt_set_config("thread_cache", "false"));
    expandable_whole_device();
    stream_pools_freed();
    deterministic_sync();
    bins_keep_exact_sizes_apart();
    return test_report();
}
