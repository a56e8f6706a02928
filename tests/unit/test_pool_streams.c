/* Stream-safe reuse. Stream A is held behind a host-function gate and will read block q
 * (a D2H copy) once the gate opens; q is then freed on its own stream B. If the pool
 * handed q out again before A's read ran, the new owner's memset on B (which is not
 * gated) would overwrite q and A's read would return the new bytes: the test checks the
 * bytes A read. It also shows that free never blocks (a watchdog opens the gate if it
 * did, and the test fails), that same-stream reuse is immediate, and that q is reused
 * once A's work is done. Deterministic: the gate decides the order, not timing. */
#include "harness.h"

#include <stdlib.h>

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

enum { N = 1 << 16 };

static atomic_int gate_open, gate_entered, watchdog_fired, done;

static void gate(void *arg)
{
    (void)arg;
    atomic_store(&gate_entered, 1);
    while (!atomic_load(&gate_open)) usleep(100);
}

static void *watchdog(void *arg)
{
    (void)arg;
    for (int i = 0; i < 300 && !atomic_load(&done); i++) usleep(10000);
    if (!atomic_load(&done)) {
        atomic_store(&watchdog_fired, 1);
        atomic_store(&gate_open, 1);
    }
    return NULL;
}

static int all_bytes(const unsigned char *p, size_t n, unsigned char v)
{
    for (size_t i = 0; i < n; i++) if (p[i] != v) return 0;
    return 1;
}

int main(void)
{
    setenv("HWRT_SIM_REGISTRY", "off", 1);   /* device-wide figures of this process only */
    TEST_CASE("stream-safe reuse");
    OK(hwrt_set_device("sim", 0));
    hwrt_stream a, b;
    OK(hwrt_stream_create(&a, 0));
    OK(hwrt_stream_create(&b, 0));
    unsigned char *host;
    OK(hwrt_host_alloc((void **)&host, N, HWRT_HOST_PINNED));
    memset(host, 0, N);

    void *q;
    OK(hwrt_malloc_async(&q, N, b));
    OK(hwrt_memset_async(q, 0x11, N, b));
    OK(hwrt_stream_synchronize(b));

    pthread_t wd;
    pthread_create(&wd, NULL, watchdog, NULL);
    OK(hwrt_launch_host_func(a, gate, NULL));          /* A: gate, then read q */
    OK(hwrt_memcpy_async(host, q, N, HWRT_MEMCPY_DEVICE_TO_HOST, a));
    OK(hwrt_record_stream(q, a));
    while (!atomic_load(&gate_entered)) usleep(50);

    OK(hwrt_free_async(q, b));                          /* must not block on A */
    EXPECT(!atomic_load(&watchdog_fired));
    hwrt_mem_stats s;
    OK(hwrt_memory_stats(0, &s));
    EXPECT(s.active.current == 1);                      /* q waits for A's event */
    EXPECT(s.allocation.current == 0);

    void *r;
    OK(hwrt_malloc_async(&r, N, b));                    /* same size, same stream */
    EXPECT(r != q);
    OK(hwrt_memset_async(r, 0x22, N, b));               /* would clobber q if r == q */
    OK(hwrt_stream_synchronize(b));
    EXPECT(hwrt_stream_query(a) == HWRT_ERROR_NOT_READY);

    /* same-stream reuse is immediate: r freed on b comes back for the next b request */
    OK(hwrt_free_async(r, b));
    void *r2;
    OK(hwrt_malloc_async(&r2, N, b));
    EXPECT(r2 == r);

    atomic_store(&gate_open, 1);
    OK(hwrt_stream_synchronize(a));
    EXPECT(all_bytes(host, N, 0x11));                   /* A read q's own bytes */

    /* A is done: q is reusable now, and the next request of its size gets it */
    void *r3;
    OK(hwrt_malloc_async(&r3, N, b));
    EXPECT(r3 == q);
    OK(hwrt_memory_stats(0, &s));
    EXPECT(s.active.current == 2 && s.allocation.current == 2);

    /* a block of stream b is not handed to stream a's allocations while cached */
    OK(hwrt_free_async(r3, b));
    void *ra;
    OK(hwrt_malloc_async(&ra, N, a));
    EXPECT(ra != q);
    OK(hwrt_free_async(ra, a));
    OK(hwrt_free_async(r2, b));

    /* a block still waiting for another stream's event is freed by empty_cache too:
     * the device sync covers it */
    void *pend;
    OK(hwrt_malloc(&pend, 3 << 20));
    OK(hwrt_record_stream(pend, a));
    OK(hwrt_launch_host_func(a, gate, NULL));           /* the gate is open: returns */
    OK(hwrt_free(pend));
    OK(hwrt_empty_cache(0));
    hwrt_memory_info mi;
    OK(hwrt_get_memory_info(0, &mi));
    EXPECT(mi.reserved == 0 && mi.allocated == 0);

    /* destroying a stream folds its cache into the no-stream pool */
    OK(hwrt_stream_destroy(a));
    OK(hwrt_stream_destroy(b));
    void *any;
    OK(hwrt_malloc(&any, N));
    EXPECT(hwrt_memcpy(host, any, N, HWRT_MEMCPY_DEVICE_TO_HOST) == HWRT_SUCCESS);
    OK(hwrt_free(any));

    atomic_store(&done, 1);
    pthread_join(wd, NULL);
    OK(hwrt_host_free(host));
    OK(hwrt_shutdown());
    return test_report();
}
