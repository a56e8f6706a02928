/* The pool's thread cache (pool_tcache.h) where its fast path must step aside (issue 25
 * item 3): a full bin (8 blocks), the 2 MiB a thread may park, sizes above 64 KiB and below
 * the rounding, another stream's blocks, another device's pool, a flush asked for by
 * another thread (hwrt_empty_cache), a configuration change, blocks recorded on another
 * stream or tagged, a tensor's data passed to hwrt_free, two blocks sharing one entry of
 * the cache's address table, and peaks reset under a cached thread. Every case checks the
 * pool's counters (exact for one thread) and that no live block is handed out twice. */
#include "harness.h"
#include "harness_files.h"
#include <unistd.h>

#include <pthread.h>
#include <stdint.h>

enum { KB = 1024 };

static hwrt_mem_stats stats(int dev)
{
    hwrt_mem_stats st;
    memset(&st, 0, sizeof st);
    OK(hwrt_memory_stats(dev, &st));
    return st;
}

/* fill each block with its own byte, then read every block back */
static int distinct_and_intact(void **p, int n, size_t bytes)
{
    unsigned char *h = malloc(bytes);
    int ok = h != NULL;
    for (int i = 0; i < n && ok; i++)
        for (int j = 0; j < i; j++) ok &= p[i] != p[j];
    for (int i = 0; i < n && ok; i++) ok &= hwrt_memset_async(p[i], i + 1, bytes, NULL) == HWRT_SUCCESS;
    for (int i = 0; i < n && ok; i++) {
        ok &= hwrt_memcpy(h, p[i], bytes, HWRT_MEMCPY_DEVICE_TO_HOST) == HWRT_SUCCESS;
        ok &= h[0] == (unsigned char)(i + 1) && h[bytes - 1] == (unsigned char)(i + 1);
    }
    free(h);
    return ok;
}

static void test_bin_depth_and_park_limit(void)
{
    TEST_CASE("a full bin and the 2 MiB park limit send frees to the pool");
    hwrt_mem_stats st0 = stats(0);
    void *p[10];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 10; i++) OK(hwrt_malloc(&p[i], 4 * KB));
        EXPECT(distinct_and_intact(p, 10, 4 * KB));
        hwrt_mem_stats st = stats(0);
        EXPECT(st.allocation.current == st0.allocation.current + 10);
        EXPECT(st.allocated_bytes.current == st0.allocated_bytes.current + 10 * 4 * KB);
        for (int i = 0; i < 10; i++) OK(hwrt_free(p[i]));      /* 8 parked, 2 to the pool */
        st = stats(0);
        EXPECT(st.allocation.current == st0.allocation.current);
        EXPECT(st.requested_bytes.current == st0.requested_bytes.current);
    }
    /* 5 bins of 8 blocks of 60..64 KiB: more than 2 MiB parked would be needed */
    enum { NB = 40 };
    void *q[NB];
    size_t sz[NB];
    for (int i = 0; i < NB; i++) {
        sz[i] = (size_t)(64 - i / 8) * KB;
        OK(hwrt_malloc(&q[i], sz[i]));
    }
    for (int i = 0; i < NB; i++) OK(hwrt_free(q[i]));
    for (int i = 0; i < NB; i++) OK(hwrt_malloc(&q[i], sz[i]));
    EXPECT(distinct_and_intact(q, NB, 60 * KB));
    hwrt_mem_stats st = stats(0);
    EXPECT(st.allocation.current == st0.allocation.current + NB);
    for (int i = 0; i < NB; i++) OK(hwrt_free(q[i]));
    st = stats(0);
    EXPECT(st.allocation.current == st0.allocation.current);
    EXPECT(st.active_bytes.current == st0.active_bytes.current);
}

static void test_sizes_out_of_range(void)
{
    TEST_CASE("above 64 KiB and below the rounding");
    hwrt_mem_stats st0 = stats(0);
    void *p[4];
    for (int round = 0; round < 3; round++) {
        OK(hwrt_malloc(&p[0], 1));
        OK(hwrt_malloc(&p[1], 65 * KB));
        OK(hwrt_malloc(&p[2], 1));
        OK(hwrt_malloc(&p[3], 64 * KB + 1));
        EXPECT(distinct_and_intact(p, 4, 1));
        hwrt_mem_stats st = stats(0);
        EXPECT(st.requested_bytes.current == st0.requested_bytes.current + 2 + 65 * KB + 64 * KB + 1);
        for (int i = 0; i < 4; i++) OK(hwrt_free(p[i]));
    }
    EXPECT(stats(0).requested_bytes.current == st0.requested_bytes.current);
}

static void test_streams(void)
{
    TEST_CASE("another stream's cached blocks are not taken");
    hwrt_stream a, b;
    OK(hwrt_stream_create(&a, 0));
    OK(hwrt_stream_create(&b, 0));
    hwrt_mem_stats st0 = stats(0);
    void *p[3];
    OK(hwrt_malloc_async(&p[0], 8 * KB, a));
    OK(hwrt_free_async(p[0], a));                  /* parked for stream a */
    OK(hwrt_malloc_async(&p[1], 8 * KB, b));       /* b: not a's block (until a is done) */
    OK(hwrt_malloc_async(&p[0], 8 * KB, a));
    OK(hwrt_malloc(&p[2], 8 * KB));                /* the default stream: neither */
    OK(hwrt_stream_synchronize(a));
    OK(hwrt_stream_synchronize(b));
    EXPECT(distinct_and_intact(p, 3, 8 * KB));
    EXPECT(stats(0).allocation.current == st0.allocation.current + 3);
    OK(hwrt_free_async(p[0], b));                  /* freed on another stream than its own */
    OK(hwrt_free_async(p[1], a));
    OK(hwrt_free(p[2]));
    OK(hwrt_stream_synchronize(a));
    OK(hwrt_stream_synchronize(b));
    EXPECT(stats(0).allocation.current == st0.allocation.current);

    TEST_CASE("a block recorded on another stream, and a tagged one, take the slow path");
    OK(hwrt_malloc_async(&p[0], 8 * KB, a));
    OK(hwrt_record_stream(p[0], b));
    OK(hwrt_free_async(p[0], a));
    OK(hwrt_malloc_async(&p[1], 8 * KB, a));
    OK(hwrt_set_alloc_tag(p[1], "cov-tag"));
    OK(hwrt_free_async(p[1], a));
    OK(hwrt_stream_synchronize(a));
    OK(hwrt_stream_synchronize(b));
    EXPECT(stats(0).allocation.current == st0.allocation.current);
    OK(hwrt_stream_destroy(a));
    OK(hwrt_stream_destroy(b));
}

static void test_tensor_data_free(void)
{
    TEST_CASE("hwrt_free of a tensor's data is refused, the tensor stays intact");
    hwrt_tensor t;
    int64_t shape[1] = {16};
    float v[16], got[16];
    for (int i = 0; i < 16; i++) v[i] = (float)i * 1.5f;
    for (int round = 0; round < 2; round++) {
        OK(hwrt_tensor_from_host(&t, HWRT_FLOAT32, 1, shape, v));
        void *d = NULL;
        OK(hwrt_tensor_data(t, &d));
        FAILS(hwrt_free(d), HWRT_ERROR_INVALID_ARGUMENT, "is the data of a live tensor");
        OK(hwrt_tensor_copy_to_host(t, got, sizeof got));
        EXPECT(memcmp(got, v, sizeof v) == 0);
        OK(hwrt_tensor_release(t));
    }
}

static void test_entry_collision(void)
{
    TEST_CASE("blocks sharing an entry of the address table");
    enum { NC = 300 };
    void **p = calloc(NC, sizeof *p);
    hwrt_mem_stats st0 = stats(0);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < NC; i++) OK(hwrt_malloc(&p[i], 512));
        EXPECT(distinct_and_intact(p, NC, 512));
        for (int i = 0; i < NC; i++) OK(hwrt_free(p[i]));
        hwrt_mem_stats st = stats(0);
        EXPECT(st.allocation.current == st0.allocation.current);
        EXPECT(st.allocated_bytes.current == st0.allocated_bytes.current);
    }
    free(p);
}

static void test_config_and_devices(void)
{
    TEST_CASE("a configuration change and another device");
    hwrt_mem_stats st0 = stats(0);
    void *p[2];
    OK(hwrt_malloc(&p[0], 16 * KB));
    OK(hwrt_free(p[0]));                                  /* parked */
    OK(hwrt_set_config("thread_cache", "false"));
    OK(hwrt_malloc(&p[0], 16 * KB));
    OK(hwrt_malloc(&p[1], 16 * KB));
    EXPECT(distinct_and_intact(p, 2, 16 * KB));
    OK(hwrt_free(p[0]));
    OK(hwrt_free(p[1]));
    EXPECT(stats(0).allocation.current == st0.allocation.current);
    OK(hwrt_set_config("thread_cache", "true"));
    OK(hwrt_malloc(&p[0], 16 * KB));
    OK(hwrt_free(p[0]));
    OK(hwrt_malloc(&p[0], 16 * KB));

    hwrt_mem_stats s1 = stats(1);
    OK(hwrt_set_device("sim", 1));
    OK(hwrt_malloc(&p[1], 16 * KB));                      /* device 1's pool */
    OK(hwrt_free(p[0]));                                  /* device 0's block from device 1 */
    OK(hwrt_free(p[1]));
    OK(hwrt_malloc(&p[1], 16 * KB));
    EXPECT(distinct_and_intact(&p[1], 1, 16 * KB));
    EXPECT(stats(1).allocation.current == s1.allocation.current + 1);
    OK(hwrt_free(p[1]));
    EXPECT(stats(1).allocation.current == s1.allocation.current);
    OK(hwrt_set_device("sim", 0));
    EXPECT(stats(0).allocation.current == st0.allocation.current);
}

/* a worker parks blocks, the main thread empties the cache (asking every thread to flush),
 * then resets the peaks: the worker's next calls must leave counters and peaks exact */
static pthread_barrier_t bar;
struct wk { void *p[8]; int ok; int64_t peak_after; };

static void *worker(void *arg)
{
    struct wk *w = arg;
    w->ok = hwrt_set_device("sim", 0) == HWRT_SUCCESS;
    for (int i = 0; i < 8; i++) w->ok &= hwrt_malloc(&w->p[i], 2 * KB) == HWRT_SUCCESS;
    for (int i = 0; i < 8; i++) w->ok &= hwrt_free(w->p[i]) == HWRT_SUCCESS;   /* parked */
    pthread_barrier_wait(&bar);          /* main: hwrt_empty_cache */
    pthread_barrier_wait(&bar);
    for (int i = 0; i < 4; i++) w->ok &= hwrt_malloc(&w->p[i], 2 * KB) == HWRT_SUCCESS;
    w->ok &= distinct_and_intact(w->p, 4, 2 * KB);
    for (int i = 0; i < 4; i++) w->ok &= hwrt_free(w->p[i]) == HWRT_SUCCESS;
    pthread_barrier_wait(&bar);          /* main: hwrt_reset_peak_memory_stats */
    pthread_barrier_wait(&bar);
    w->ok &= hwrt_malloc(&w->p[0], 2 * KB) == HWRT_SUCCESS;
    w->ok &= hwrt_malloc(&w->p[1], 2 * KB) == HWRT_SUCCESS;
    pthread_barrier_wait(&bar);          /* main: reads the peak */
    pthread_barrier_wait(&bar);
    w->ok &= hwrt_free(w->p[0]) == HWRT_SUCCESS;
    w->ok &= hwrt_free(w->p[1]) == HWRT_SUCCESS;
    return NULL;
}

static void test_flush_and_peaks(void)
{
    TEST_CASE("a flush asked for by another thread, and peaks reset under a cached thread");
    hwrt_mem_stats st0 = stats(0);
    struct wk w;
    memset(&w, 0, sizeof w);
    pthread_barrier_init(&bar, NULL, 2);
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, worker, &w) == 0);
    pthread_barrier_wait(&bar);
    OK(hwrt_empty_cache(0));
    pthread_barrier_wait(&bar);
    pthread_barrier_wait(&bar);
    hwrt_mem_stats st = stats(0);
    EXPECT(st.allocation.current == st0.allocation.current);
    OK(hwrt_reset_peak_memory_stats(0));
    st = stats(0);
    if (st.allocation.peak != st.allocation.current)
        fprintf(stderr, "peak %lld current %lld bytes peak %lld current %lld\n", (long long)st.allocation.peak, (long long)st.allocation.current, (long long)st.allocated_bytes.peak, (long long)st.allocated_bytes.current);
    EXPECT(st.allocation.peak == st.allocation.current);
    pthread_barrier_wait(&bar);
    pthread_barrier_wait(&bar);
    st = stats(0);
    EXPECT(st.allocation.current == st0.allocation.current + 2);
    EXPECT(st.allocation.peak >= st.allocation.current);          /* never below current */
    EXPECT(st.allocated_bytes.peak >= st.allocated_bytes.current);
    pthread_barrier_wait(&bar);
    pthread_join(t, NULL);
    EXPECT(w.ok);
    pthread_barrier_destroy(&bar);
    st = stats(0);
    EXPECT(st.allocation.current == st0.allocation.current);
    EXPECT(st.requested_bytes.current == st0.requested_bytes.current);
}

typedef struct { char field[64]; long n; } field_count;

static void field_line(const char *line, void *arg)
{
    field_count *c = arg;
    c->n += strstr(line, c->field) != NULL;
}

/* the profiler observes allocations: every block handed out and taken back is one
 * record, also those the thread cache serves. Counts the records of raw/prof_*.tsv
 * whose fields include `name`. */
static long count_records(const char *dir, const char *name)
{
    field_count c = {.n = 0};
    snprintf(c.field, sizeof c.field, "\t%s\t", name);
    return prof_raw_lines(dir, field_line, &c) > 0 ? c.n : -1;
}

static void test_observer(void)
{
    TEST_CASE("an allocation observer sees cached blocks too");
    hwrt_stream a;
    OK(hwrt_stream_create(&a, 0));
    hwrt_mem_stats st0 = stats(0);
    void *p[12];
    char dir[] = "/tmp/hwrt_cov_tcache_XXXXXX";
    EXPECT(mkdtemp(dir) != NULL);
    OK(hwrt_profiler_start(dir));
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 10; i++) OK(hwrt_malloc(&p[i], 3 * KB));
        OK(hwrt_malloc(&p[10], 100 * KB));
        OK(hwrt_malloc_async(&p[11], 3 * KB, a));
        EXPECT(distinct_and_intact(p, 11, 3 * KB));
        for (int i = 0; i <= 10; i++) OK(hwrt_free(p[i]));
        OK(hwrt_free_async(p[11], a));
        OK(hwrt_free(p[0]) == HWRT_ERROR_INVALID_ARGUMENT ? HWRT_SUCCESS : HWRT_ERROR_INTERNAL);
        hwrt_tensor t;
        int64_t shape[1] = {256};
        OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
        void *d = NULL;
        OK(hwrt_tensor_data(t, &d));
        FAILS(hwrt_free(d), HWRT_ERROR_INVALID_ARGUMENT, "is the data of a live tensor");
        OK(hwrt_tensor_release(t));
        OK(hwrt_stream_synchronize(a));
        OK(hwrt_device_synchronize());
    }
    OK(hwrt_profiler_stop());
    long na = count_records(dir, "alloc"), nf = count_records(dir, "free");
    if (na != 3 * 13 || nf != 3 * 13) fprintf(stderr, "alloc records %ld, free records %ld\n", na, nf);
    EXPECT(na == 3 * 13 && nf == 3 * 13);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    EXPECT(system(cmd) == 0);
    hwrt_mem_stats st = stats(0);
    EXPECT(st.allocation.current == st0.allocation.current);
    EXPECT(st.requested_bytes.current == st0.requested_bytes.current);
    OK(hwrt_stream_destroy(a));
}

int main(void)
{
    OK(hwrt_set_device("sim", 0));
    test_bin_depth_and_park_limit();
    test_sizes_out_of_range();
    test_streams();
    test_tensor_data_free();
    test_entry_collision();
    test_config_and_devices();
    test_flush_and_peaks();
    test_observer();
    OK(hwrt_shutdown());
    return test_report();
}
