/* CUPTI's activity records turned into hwrt's (cuda_cupti.c), with no GPU: a fake
 * libcupti (fake_cupti.c, through HWRT_CUPTI_LIBRARY) hands over buffers of records the
 * test wrote at CUPTI's offsets. Checked: a kernel, memcpy and memset record matched to
 * hwrt's id by the EXTERNAL_CORRELATION record of the same CUPTI correlation id, in either
 * order and across buffers; records of other kinds and correlations of other external
 * kinds ignored; times moved onto CLOCK_MONOTONIC; activity_query NOT_READY until every
 * pushed op's record came; the pending list and the id map at their limits; disabling
 * (every kind off, a forced flush, nothing delivered after); enabling that fails
 * (UNAVAILABLE naming the CUptiResult, every kind off again). White-box: the cuda ops
 * table and cu_cupti_push/pop (no device is needed for any of it). */
#include "harness.h"
#include "backends/backend.h"
#include "backends/cuda/cuda_internal.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

extern const hwrt_backend_ops hwrt_backend_cuda;

enum { EXT = 39, KERNEL = 10, MEMCPY = 1, MEMSET = 2, CUSTOM0 = 3 };
#define TS0 1000000000ull            /* the fake's cuptiGetTimestamp */

static int (*add)(unsigned, uint64_t, uint64_t, uint32_t);
static void (*cut)(void);
static void (*fail_enable)(unsigned), (*fail_push)(int);
static int (*enabled)(unsigned), (*disables)(void), (*flushes)(int);

/* The i-th of 8000 CUPTI ids: 80 per residue mod 8192 (the map's slots) */
#define ID(i) (40000u + ((i) % 80u) * 8192u + (i) / 80u)

static hwrt_activity got[16384];
static size_t ngot, batches;

static void on_records(void *ctx, const hwrt_activity *recs, size_t n)
{
    EXPECT(ctx == &ngot);
    for (size_t i = 0; i < n && ngot < sizeof got / sizeof got[0]; i++) got[ngot++] = recs[i];
    batches++;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void flush(void)
{
    cut();
    ngot = batches = 0;
    hwrt_backend_cuda.activity_query();
}

static const hwrt_activity *find(uint64_t id)
{
    for (size_t i = 0; i < ngot; i++)
        if (got[i].correlation_id == id) return &got[i];
    return NULL;
}

int main(int argc, char **argv)
{
    void *h = dlopen(argc > 1 ? argv[1] : getenv("HWRT_CUPTI_LIBRARY"), RTLD_NOW);
    EXPECT(h != NULL);
    if (!h) return test_report();
    add = (int (*)(unsigned, uint64_t, uint64_t, uint32_t))dlsym(h, "fake_cupti_add");
    cut = (void (*)(void))dlsym(h, "fake_cupti_cut");
    fail_enable = (void (*)(unsigned))dlsym(h, "fake_cupti_fail_enable");
    fail_push = (void (*)(int))dlsym(h, "fake_cupti_fail_push");
    enabled = (int (*)(unsigned))dlsym(h, "fake_cupti_enabled");
    disables = (int (*)(void))dlsym(h, "fake_cupti_disables");
    flushes = (int (*)(int))dlsym(h, "fake_cupti_flushes");

    TEST_CASE("enable");
    uint64_t t0 = mono_ns();
    OK(hwrt_backend_cuda.activity_enable(on_records, &ngot));
    uint64_t t1 = mono_ns();
    EXPECT(enabled(EXT) && enabled(KERNEL) && enabled(MEMCPY) && enabled(MEMSET));
    EXPECT(hwrt_backend_cuda.activity_query() == HWRT_SUCCESS);      /* nothing queued */

    TEST_CASE("activity_query waits for the records of pushed ops");
    hwi_backend_correlation = 500;
    uint64_t p = cu_cupti_push();
    EXPECT(p == 500);
    cu_cupti_pop(p, 1);
    hwi_backend_correlation = 0;
    EXPECT(cu_cupti_push() == 0);                    /* no id: nothing pushed */
    hwi_backend_correlation = 499;
    fail_push(1);
    p = cu_cupti_push();
    EXPECT(p == 0);                                  /* CUPTI refused: not pushed */
    cu_cupti_pop(p, 1);                              /* so not popped, not waited for */
    fail_push(0);
    hwi_backend_correlation = 0;
    EXPECT(cu_cupti_host_begin() == 0);              /* no id: not waited for */
    EXPECT(hwrt_backend_cuda.activity_query() == HWRT_ERROR_NOT_READY);
    EXPECT(add(EXT, CUSTOM0, 500, 50));
    EXPECT(add(KERNEL, TS0 + 1, TS0 + 2, 50));
    flush();
    EXPECT(ngot == 1 && find(500));
    EXPECT(hwrt_backend_cuda.activity_query() == HWRT_SUCCESS);
    hwi_backend_correlation = 501;                   /* a host function's own record */
    uint64_t hid = cu_cupti_host_begin();
    EXPECT(hid == 501);
    EXPECT(hwrt_backend_cuda.activity_query() == HWRT_ERROR_NOT_READY);
    ngot = 0;
    cu_cupti_host_record(hid, 7, 9, 1);
    EXPECT(ngot == 1 && got[0].correlation_id == 501 && got[0].start_ns == 7 && got[0].end_ns == 9);
    EXPECT(hwrt_backend_cuda.activity_query() == HWRT_SUCCESS);
    hid = cu_cupti_host_begin();                     /* skipped: retired, no record */
    ngot = 0;
    cu_cupti_host_record(hid, 0, 0, 0);
    EXPECT(ngot == 0 && hwrt_backend_cuda.activity_query() == HWRT_SUCCESS);
    hwi_backend_correlation = 0;

    TEST_CASE("records matched by the external correlation, in one buffer");
    EXPECT(add(EXT, CUSTOM0, 100, 5));
    EXPECT(add(KERNEL, TS0 + 2000, TS0 + 3000, 5));
    EXPECT(add(EXT, CUSTOM0, 101, 6));
    EXPECT(add(MEMCPY, TS0 + 4000, TS0 + 4500, 6));
    EXPECT(add(EXT, CUSTOM0, 102, 7));
    EXPECT(add(MEMSET, TS0 + 5000, TS0 + 5100, 7));
    EXPECT(add(EXT, 1, 103, 8));                     /* another external kind: not ours */
    EXPECT(add(KERNEL, TS0 + 6000, TS0 + 7000, 8));
    EXPECT(add(77, TS0, TS0 + 1, 5));                /* a kind hwrt did not enable */
    flush();
    EXPECT(ngot == 3 && batches == 1);
    const hwrt_activity *k = find(100), *c = find(101), *s = find(102);
    EXPECT(k && c && s && !find(103));
    if (k && c && s) {
        EXPECT(k->end_ns - k->start_ns == 1000);
        EXPECT(c->end_ns - c->start_ns == 500 && s->end_ns - s->start_ns == 100);
        EXPECT(c->start_ns - k->start_ns == 2000 && s->start_ns - k->start_ns == 3000);
        /* CUPTI's TS0 was read between t0 and t1: +2000 ns on CLOCK_MONOTONIC */
        EXPECT(k->start_ns >= t0 + 2000 && k->start_ns <= t1 + 2000);
    }

    TEST_CASE("a record before its correlation, which comes in the next buffer");
    EXPECT(add(KERNEL, TS0 + 10000, TS0 + 10400, 9));
    EXPECT(add(MEMCPY, TS0 + 11000, TS0 + 11200, 10));
    flush();
    EXPECT(ngot == 0);                               /* pending: no id for 9 or 10 yet */
    EXPECT(add(EXT, CUSTOM0, 110, 10));
    EXPECT(add(EXT, CUSTOM0, 109, 9));
    flush();
    EXPECT(ngot == 2 && find(109) && find(110));
    if (find(109)) EXPECT(find(109)->end_ns - find(109)->start_ns == 400);
    if (find(110)) EXPECT(find(110)->end_ns - find(110)->start_ns == 200);
    EXPECT(add(EXT, CUSTOM0, 111, 10));              /* matched once only */
    EXPECT(add(EXT, CUSTOM0, 112, 9));
    EXPECT(add(MEMCPY, TS0 + 11000, TS0 + 11200, 11));
    flush();
    EXPECT(ngot == 0);

    TEST_CASE("4096 records waiting: the oldest makes room");
    for (uint32_t i = 0; i < 4097; i++) EXPECT(add(KERNEL, TS0, TS0 + 1 + i, 20000 + i));
    flush();
    EXPECT(ngot == 0);
    EXPECT(add(EXT, CUSTOM0, 700, 20000));           /* dropped: no record */
    EXPECT(add(EXT, CUSTOM0, 701, 20001));
    EXPECT(add(EXT, CUSTOM0, 702, 24096));
    flush();
    EXPECT(ngot == 2 && !find(700) && find(701) && find(702));
    if (find(702)) EXPECT(find(702)->end_ns - find(702)->start_ns == 4097);

    TEST_CASE("8000 ids at once, then their records: every one matched");
    /* 100 slots' worth of ids, 80 to a slot (ids 8192 apart land in one slot): long runs,
     * taken from the middle in another order than they were put */
    for (uint32_t i = 0; i < 8000; i++) {
        if (!add(EXT, CUSTOM0, 100000 + i, ID(i))) {
            cut();
            EXPECT(add(EXT, CUSTOM0, 100000 + i, ID(i)));
        }
    }
    flush();
    EXPECT(ngot == 0);
    for (uint32_t q = 0; q < 8000; q++) {
        uint32_t i = (q * 2333u) % 8000u;            /* every i once (2333 is prime to 8000) */
        EXPECT(add(KERNEL, TS0, TS0 + 1 + i, ID(i)));
    }
    flush();
    EXPECT(ngot == 8000);
    int right = ngot == 8000;
    for (size_t i = 0; i < ngot; i++)
        right &= got[i].correlation_id == 100000 + (got[i].end_ns - got[i].start_ns - 1);
    EXPECT(right);

    TEST_CASE("8193 ids without records: the map starts over and still matches");
    for (uint32_t i = 0; i < 8193; i++) {
        if (!add(EXT, CUSTOM0, 200000 + i, 80000 + i)) {
            cut();
            EXPECT(add(EXT, CUSTOM0, 200000 + i, 80000 + i));
        }
    }
    EXPECT(add(KERNEL, TS0, TS0 + 5, 80000 + 8192));  /* the id that started it over */
    EXPECT(add(KERNEL, TS0, TS0 + 6, 80000));          /* forgotten: waits */
    flush();
    EXPECT(ngot == 1 && find(200000 + 8192));

    TEST_CASE("disable: every kind off, a forced flush, nothing delivered after");
    int d0 = disables(), f0 = flushes(1);
    EXPECT(add(EXT, CUSTOM0, 900, 90));
    EXPECT(add(KERNEL, TS0, TS0 + 1, 90));
    cut();
    ngot = 0;
    OK(hwrt_backend_cuda.activity_enable(NULL, NULL));
    EXPECT(disables() == d0 + 4 && flushes(1) == f0 + 1);
    EXPECT(!enabled(EXT) && !enabled(KERNEL) && !enabled(MEMCPY) && !enabled(MEMSET));
    EXPECT(ngot == 0);
    hwi_backend_correlation = 901;
    EXPECT(cu_cupti_push() == 0);                    /* inactive: nothing pushed */
    EXPECT(cu_cupti_host_begin() == 0);              /* nor waited for */
    hwi_backend_correlation = 0;
    EXPECT(hwrt_backend_cuda.activity_query() == HWRT_SUCCESS);
    OK(hwrt_backend_cuda.activity_enable(NULL, NULL));   /* again: harmless */
    EXPECT(disables() == d0 + 4);

    TEST_CASE("enabling fails: UNAVAILABLE naming the CUptiResult, every kind off");
    fail_enable(MEMSET);
    d0 = disables();
    FAILS(hwrt_backend_cuda.activity_enable(on_records, &ngot), HWRT_ERROR_UNAVAILABLE,
          "CUptiResult 1");
    EXPECT(!enabled(EXT) && !enabled(KERNEL) && !enabled(MEMCPY));
    EXPECT(disables() == d0 + 4);                    /* each of the four kinds, once */
    EXPECT(hwrt_backend_cuda.activity_query() == HWRT_SUCCESS);
    fail_enable(0);
    OK(hwrt_backend_cuda.activity_enable(on_records, &ngot));   /* fixed: enables */
    EXPECT(add(EXT, CUSTOM0, 1000, 3));
    EXPECT(add(KERNEL, TS0, TS0 + 8, 3));
    flush();
    EXPECT(ngot == 1 && find(1000));
    OK(hwrt_backend_cuda.activity_enable(NULL, NULL));
    return test_report();
}
