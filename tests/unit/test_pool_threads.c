/* Several threads allocate and free small blocks at once, on two devices (two pools,
 * each with its own lock), and a quarter of the blocks are freed by another thread than
 * the one that allocated them (through a shared mailbox, also across devices). Each block is filled with its owner's byte pattern and checked before it is
 * freed, so a block handed to two owners at once shows up as corrupted data. At the
 * end nothing is live, the figures add up, and once the threads have exited (their
 * caches flushed) empty_cache returns every segment. */
#include "harness.h"

#include <stdlib.h>

#include <pthread.h>
#include <stdatomic.h>

enum { THREADS = 4, STEPS = 4000, SLOTS = 32, BOX = 64 };

static void *_Atomic mailbox[BOX];
static atomic_int bad, failures;

static int check(void *p, size_t n, unsigned char v)
{
    unsigned char buf[4096];
    size_t k = n < sizeof buf ? n : sizeof buf;
    if (hwrt_memcpy(buf, p, k, HWRT_MEMCPY_DEVICE_TO_HOST) != HWRT_SUCCESS) return 0;
    for (size_t i = 0; i < k; i++) if (buf[i] != v) return 0;
    return 1;
}

static void release(void *p)
{
    if (hwrt_free(p) != HWRT_SUCCESS) atomic_fetch_add(&failures, 1);
}

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    /* even threads on device 0, odd ones on device 1: two pools, each with its own lock;
     * the mailbox hands blocks across devices, so frees find their pool by address */
    if (hwrt_set_device("sim", id % 2) != HWRT_SUCCESS) { atomic_fetch_add(&failures, 1); return NULL; }
    void *slot[SLOTS] = {0};
    size_t size[SLOTS] = {0};
    uint32_t x = 777u * (uint32_t)(id + 1);
    unsigned char pat = (unsigned char)(0x10 + id);
    for (int step = 0; step < STEPS; step++) {
        x = x * 1664525u + 1013904223u;
        int i = (int)((x >> 10) % SLOTS);
        if (slot[i]) {
            if (!check(slot[i], size[i], pat)) atomic_fetch_add(&bad, 1);
            if ((x >> 4) % 4 == 0) {          /* hand it to whoever empties the mailbox */
                void *old = atomic_exchange(&mailbox[(x >> 20) % BOX], slot[i]);
                if (old) release(old);
            } else {
                release(slot[i]);
            }
            slot[i] = NULL;
        } else {
            size[i] = 512u * (1 + (x >> 16) % 16);
            if (hwrt_malloc(&slot[i], size[i]) != HWRT_SUCCESS ||
                hwrt_memset_async(slot[i], pat, size[i], NULL) != HWRT_SUCCESS ||
                hwrt_stream_synchronize(NULL) != HWRT_SUCCESS)
                atomic_fetch_add(&failures, 1);
        }
    }
    for (int i = 0; i < SLOTS; i++) if (slot[i]) release(slot[i]);
    return NULL;
}

int main(void)
{
    setenv("HWRT_SIM_REGISTRY", "off", 1);   /* device-wide figures of this process only */
    setenv("HWRT_SIM_DEVICES", "2", 1);
    TEST_CASE("threads");
    OK(hwrt_set_device("sim", 0));
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < BOX; i++) {
        void *p = atomic_exchange(&mailbox[i], NULL);
        if (p) release(p);
    }
    EXPECT(atomic_load(&failures) == 0);
    EXPECT(atomic_load(&bad) == 0);
    for (int dev = 0; dev < 2; dev++) {
        hwrt_mem_stats s;
        OK(hwrt_memory_stats(dev, &s));
        EXPECT(s.allocation.current == 0 && s.allocated_bytes.current == 0 &&
               s.requested_bytes.current == 0 && s.active.current == 0);
        EXPECT(s.allocation.allocated == s.allocation.freed && s.allocation.allocated > 0);
        EXPECT(s.allocated_bytes.peak <= s.reserved_bytes.peak);
        OK(hwrt_empty_cache(dev));
        hwrt_memory_info mi;
        OK(hwrt_get_memory_info(dev, &mi));
        EXPECT(mi.reserved == 0 && mi.used == mi.overhead);
    }
    OK(hwrt_shutdown());
    return test_report();
}
