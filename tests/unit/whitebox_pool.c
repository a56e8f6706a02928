/* The device-memory pool alone, against a minimal test backend (issue 18 item 8): the
 * pool's sources, device_ops.c and base are compiled into this test (no runtime, no sim),
 * and the pool is created around an hwi_device whose ops table is defined here. The test
 * backend hands out addresses from a fixed fake range (the pool never touches device
 * memory, only addresses), keeps its own account of every live segment and mapped
 * granule, and can fail on demand: segment_alloc on its Nth call, va_map and va_unmap,
 * event_query held at NOT_READY. After every step the pool's figures are checked against
 * the expected values and against the backend's own account (reserved == what the
 * backend has handed out).
 *
 * The pool's runtime calls are defined here: hwi_on_shutdown (the test runs the hook to
 * check the leak report), hwi_device_attach (the pool is its device's part: the test
 * closes a device through it) and hwi_device_synchronize. */
#include "../../src/mem/pool.h"
#include "../../src/mem/pool_internal.h"
#include "../../src/mem/mem_events.h"
#include "../../src/runtime/device_ops.h"
#include "../../src/base/config.h"
#include "../../src/base/status.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MiB ((size_t)1 << 20)
#define FAKE_BASE ((uintptr_t)0x600000000000ull)   /* not mapped: never dereferenced */
#define GRAN (2 * MiB)

static int failures;
#define CHECK(c)                                                                      \
    do {                                                                              \
        if (!(c)) {                                                                   \
            fprintf(stderr, "%s:%d: CHECK failed: %s (last error: %s)\n", __FILE__,   \
                    __LINE__, #c, hwrt_last_error());                                 \
            failures++;                                                               \
        }                                                                             \
    } while (0)

/* ---- the test backend ---- */

#define MAXSEG 256
typedef struct { uintptr_t base; size_t bytes; int va; size_t mapped; } fseg;

static struct {
    size_t total;                  /* device memory */
    uintptr_t next;                /* bump pointer of the fake range */
    fseg seg[MAXSEG];
    int nseg;
    size_t used;                   /* plain segments + mapped granules */
    int alloc_calls, fail_alloc_at;/* segment_alloc fails on call number fail_alloc_at */
    int fail_map, fail_unmap;      /* va_map / va_unmap fail while set */
    int fail_va;                   /* va_reserve fails while set (no address space) */
    int events_stuck;              /* event_query stays NOT_READY */
    int seg_frees, bad_frees, syncs, stream_syncs;
    size_t rep_resv, rep_alloc;    /* what report_usage (the monitor) last heard */
    int reports;
} B;

struct hwrt_bstream { unsigned long submitted, completed; };
struct hwrt_bevent { hwrt_bstream *s; unsigned long seq; };

static hwrt_status t_mem_info(hwrt_bdev *d, size_t *f, size_t *t, size_t *o)
{
    (void)d;
    *t = B.total;
    *f = B.total - B.used;
    *o = 0;
    return HWRT_SUCCESS;
}

static uintptr_t take_range(size_t bytes)
{
    uintptr_t p = B.next;
    B.next += (bytes + GRAN - 1) / GRAN * GRAN + GRAN;   /* a hole between ranges */
    return p;
}

static hwrt_status t_segment_alloc(hwrt_bdev *d, size_t bytes, void **p)
{
    (void)d;
    B.alloc_calls++;
    if (B.alloc_calls == B.fail_alloc_at || B.used + bytes > B.total || B.nseg == MAXSEG)
        return hwi_err(HWRT_ERROR_OUT_OF_MEMORY, "test backend: no memory for %zu bytes", bytes);
    fseg *s = &B.seg[B.nseg++];
    *s = (fseg){take_range(bytes), bytes, 0, 0};
    B.used += bytes;
    *p = (void *)s->base;
    return HWRT_SUCCESS;
}

static fseg *find_seg(uintptr_t base, int va)
{
    for (int i = 0; i < B.nseg; i++)
        if (B.seg[i].base == base && B.seg[i].va == va) return &B.seg[i];
    return NULL;
}

static fseg *seg_containing(uintptr_t a)
{
    for (int i = 0; i < B.nseg; i++)
        if (a >= B.seg[i].base && a < B.seg[i].base + B.seg[i].bytes) return &B.seg[i];
    return NULL;
}

static void drop(fseg *s) { *s = B.seg[--B.nseg]; }

static hwrt_status t_segment_free(hwrt_bdev *d, void *p, size_t bytes)
{
    (void)d;
    fseg *s = find_seg((uintptr_t)p, 0);
    if (!s || s->bytes != bytes) {
        B.bad_frees++;
        return HWRT_ERROR_INVALID_ARGUMENT;
    }
    B.used -= bytes;
    B.seg_frees++;
    drop(s);
    return HWRT_SUCCESS;
}

static size_t t_gran(hwrt_bdev *d) { (void)d; return GRAN; }

static hwrt_status t_va_reserve(hwrt_bdev *d, size_t bytes, void **p)
{
    (void)d;
    if (B.nseg == MAXSEG || B.fail_va)
        return hwi_err(HWRT_ERROR_OUT_OF_MEMORY, "test backend: no ranges");
    fseg *s = &B.seg[B.nseg++];
    *s = (fseg){take_range(bytes), bytes, 1, 0};
    *p = (void *)s->base;
    return HWRT_SUCCESS;
}

static hwrt_status t_va_map(hwrt_bdev *d, void *a, size_t bytes)
{
    (void)d;
    fseg *s = seg_containing((uintptr_t)a);
    if (B.fail_map) return hwi_err(HWRT_ERROR_OUT_OF_MEMORY, "test backend: va_map fails");
    if (!s || !s->va || bytes % GRAN || (uintptr_t)a + bytes > s->base + s->bytes) {
        B.bad_frees++;
        return HWRT_ERROR_INVALID_ARGUMENT;
    }
    if (B.used + bytes > B.total) return hwi_err(HWRT_ERROR_OUT_OF_MEMORY, "test backend: full");
    s->mapped += bytes;
    B.used += bytes;
    return HWRT_SUCCESS;
}

static hwrt_status t_va_unmap(hwrt_bdev *d, void *a, size_t bytes)
{
    (void)d;
    if (B.fail_unmap) return hwi_err(HWRT_ERROR_DEVICE_FAULT, "test backend: va_unmap fails");
    fseg *s = seg_containing((uintptr_t)a);
    if (!s || !s->va || s->mapped < bytes) {
        B.bad_frees++;
        return HWRT_ERROR_INVALID_ARGUMENT;
    }
    s->mapped -= bytes;
    B.used -= bytes;
    return HWRT_SUCCESS;
}

static hwrt_status t_va_release(hwrt_bdev *d, void *p, size_t bytes)
{
    (void)d;
    fseg *s = find_seg((uintptr_t)p, 1);
    if (!s || s->bytes != bytes || s->mapped) {
        B.bad_frees++;
        return HWRT_ERROR_INVALID_ARGUMENT;
    }
    drop(s);
    return HWRT_SUCCESS;
}

static hwrt_status t_stream_sync(hwrt_bstream *s)
{
    B.stream_syncs++;
    s->completed = s->submitted;
    return HWRT_SUCCESS;
}

static hwrt_status t_event_create(hwrt_bdev *d, unsigned flags, hwrt_bevent **e)
{
    (void)d;
    (void)flags;
    *e = calloc(1, sizeof **e);
    return *e ? HWRT_SUCCESS : HWRT_ERROR_HOST_OUT_OF_MEMORY;
}

static void t_event_destroy(hwrt_bevent *e) { free(e); }

static hwrt_status t_event_record(hwrt_bevent *e, hwrt_bstream *s)
{
    e->s = s;
    e->seq = s->submitted;
    return HWRT_SUCCESS;
}

static hwrt_status t_event_query(hwrt_bevent *e)
{
    if (B.events_stuck || e->s->completed < e->seq) return HWRT_ERROR_NOT_READY;
    return HWRT_SUCCESS;
}

static void t_report_usage(hwrt_bdev *d, size_t reserved, size_t allocated)
{
    (void)d;
    B.rep_resv = reserved;
    B.rep_alloc = allocated;
    B.reports++;
}

static const hwrt_backend_ops test_ops = {
    .report_usage = t_report_usage,
    .name = "pooltest",
    .mem_info = t_mem_info,
    .segment_alloc = t_segment_alloc,
    .segment_free = t_segment_free,
    .va_granularity = t_gran,
    .va_reserve = t_va_reserve,
    .va_map = t_va_map,
    .va_unmap = t_va_unmap,
    .va_release = t_va_release,
    .stream_synchronize = t_stream_sync,
    .event_create = t_event_create,
    .event_destroy = t_event_destroy,
    .event_record = t_event_record,
    .event_query = t_event_query,
};

static hwi_device dev = {.id = 0, .ordinal = 0, .ops = &test_ops};
static hwrt_bstream sA, sB;

/* The device-wide synchronize the pool's slow paths call (runtime/device.c's in the
 * library, exec's streams behind it), defined here as the pool's other runtime call. */
hwrt_status hwi_device_synchronize(hwi_device *d, const char *api)
{
    (void)d;
    (void)api;
    B.syncs++;
    sA.completed = sA.submitted;
    sB.completed = sB.submitted;
    return HWRT_SUCCESS;
}

/* ---- the pool's other runtime dependencies ---- */

static hwrt_status (*shutdown_hook)(void);
void hwi_on_shutdown(int order, hwrt_status (*fn)(void))
{
    (void)order;
    shutdown_hook = fn;
}

/* The pool attaches itself to its device as a part (runtime/device.c keeps it and closes
 * it with the device); the test keeps the last one so it can close a device the same way. */
static const hwi_dev_part_ops *mem_part_ops;
void *hwi_device_attach(hwi_device *d, hwi_dev_part_kind kind, void *part,
                        const hwi_dev_part_ops *ops)
{
    (void)d;
    if (kind == HWI_PART_MEM) mem_part_ops = ops;
    return part;
}

/* ---- helpers ---- */

/* Applies "key:value,key:value" through hwrt_set_config. */
static void conf(const char *list)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(item, ':');
        if (colon) *colon = 0;
        if (!colon || hwrt_set_config(item, colon + 1) != HWRT_SUCCESS) {
            fprintf(stderr, "config \"%s\": %s\n", list, colon ? hwrt_last_error() : "no ':'");
            exit(2);
        }
    }
}

static void fresh(size_t total, const char *extra)
{
    hwi_pool_destroy(&dev);
    CHECK(B.nseg == 0 && B.used == 0);         /* the pool gave everything back */
    CHECK(B.bad_frees == 0);
    memset(&B, 0, sizeof B);
    B.total = total;
    B.next = FAKE_BASE;
    sA = (hwrt_bstream){0};
    sB = (hwrt_bstream){0};
    conf("thread_cache:false,max_split_size:0,max_device_memory:0,expandable_segments:false,"
         "garbage_collection_threshold:0,roundup_power2_divisions:0");
    if (extra) conf(extra);
}

static hwrt_mem_stats stats(void)
{
    hwrt_mem_stats s;
    hwi_pool_stats(&dev, &s);
    return s;
}

/* The figures: allocated, reserved (== what the backend handed out), and peaks. */
#define FIGURES(alloc, resv, palloc, presv)                                           \
    do {                                                                              \
        hwrt_mem_stats s_ = stats();                                                  \
        CHECK(s_.allocated_bytes.current == (int64_t)(alloc));                        \
        CHECK(s_.reserved_bytes.current == (int64_t)(resv));                          \
        CHECK(s_.allocated_bytes.peak == (int64_t)(palloc));                          \
        CHECK(s_.reserved_bytes.peak == (int64_t)(presv));                            \
        CHECK((size_t)s_.reserved_bytes.current == B.used);                           \
        hwrt_memory_info m_;                                                          \
        hwi_pool_fill_info(&dev, &m_);                                                \
        CHECK(m_.allocated == (size_t)(alloc) && m_.reserved == (size_t)(resv));      \
    } while (0)

static void *alloc_on(size_t n, hwrt_bstream *s)
{
    void *p = NULL;
    hwrt_status st = hwi_pool_alloc(&dev, n, s, &p);
    CHECK(st == HWRT_SUCCESS);
    return st == HWRT_SUCCESS ? p : NULL;
}

static void release(void *p) { CHECK(hwi_pool_free(p, "test") == HWRT_SUCCESS); }

#define ADDR(p) ((uintptr_t)(p))

/* ---- the cases ---- */

static void split_and_coalesce(void)
{
    fresh(64 * MiB, NULL);
    FIGURES(0, 0, 0, 0);
    void *a = alloc_on(1000, NULL);            /* 1024 B of a 2 MiB small segment */
    CHECK(ADDR(a) == FAKE_BASE);
    FIGURES(1024, 2 * MiB, 1024, 2 * MiB);
    void *b = alloc_on(1000, NULL);            /* the split rest: right after a */
    CHECK(ADDR(b) == FAKE_BASE + 1024);
    void *c = alloc_on(512, NULL);
    CHECK(ADDR(c) == FAKE_BASE + 2048);
    FIGURES(2560, 2 * MiB, 2560, 2 * MiB);
    hwrt_mem_stats s = stats();
    CHECK(s.segment.current == 1 && s.allocation.current == 3);
    CHECK(s.requested_bytes.current == 2512);
    release(b);                                /* a hole between a and c */
    s = stats();
    /* the hole and the segment's tail are the free pieces of a split segment */
    CHECK(s.inactive_split.current == 2 &&
          s.inactive_split_bytes.current == (int64_t)(1024 + 2 * MiB - 2560));
    FIGURES(1536, 2 * MiB, 2560, 2 * MiB);
    void *d = alloc_on(2048, NULL);            /* does not fit the hole: after c */
    CHECK(ADDR(d) == FAKE_BASE + 2560);
    release(d);
    void *e = alloc_on(600, NULL);             /* best fit: the 1024 B hole */
    CHECK(ADDR(e) == FAKE_BASE + 1024);
    release(e);
    release(a);
    release(c);                                /* everything merges back into one block */
    s = stats();
    CHECK(s.inactive_split.current == 0 && s.active.current == 0);
    FIGURES(0, 2 * MiB, 3584, 2 * MiB);
    void *f = alloc_on(256 * 1024, NULL);      /* at the base: the pieces merged back */
    CHECK(ADDR(f) == FAKE_BASE && stats().segment.current == 1);
    release(f);
    CHECK(hwi_pool_empty_cache(&dev) == HWRT_SUCCESS);
    FIGURES(0, 0, 256 * 1024, 2 * MiB);
    CHECK(B.seg_frees == 1);
    /* the smallest blocks' bin (0: 512 B) is searched too (issue 25's seed-3003 mutation
     * run: pool_bins.c's `bin >= 0` made `> 0` never reused a 512 B hole) */
    void *g1 = alloc_on(512, NULL), *g2 = alloc_on(512, NULL);
    CHECK(ADDR(g2) == ADDR(g1) + 512);
    release(g1);                               /* a 512 B hole before g2 */
    void *g3 = alloc_on(300, NULL);
    CHECK(ADDR(g3) == ADDR(g1));
    release(g3);
    release(g2);
    CHECK(hwi_pool_empty_cache(&dev) == HWRT_SUCCESS);
}

static void small_large_boundary(void)
{
    fresh(256 * MiB, NULL);
    /* plain mode: the small pool serves up to 256 KiB, the shared segments above it */
    void *a = alloc_on(256 * 1024, NULL);      /* the largest small request */
    FIGURES(256 * 1024, 2 * MiB, 256 * 1024, 2 * MiB);
    CHECK(B.nseg == 1 && B.seg[0].bytes == 2 * MiB);
    void *b = alloc_on(256 * 1024 + 1, NULL);  /* the smallest shared one: a segment of */
    FIGURES(512 * 1024 + 512, 24 * MiB, 512 * 1024 + 512, 24 * MiB);   /* 80 such blocks, */
    CHECK(B.nseg == 2 && B.seg[1].bytes == 22 * MiB);                  /* 20.04 -> 22 MiB */
    void *c = alloc_on(24 * MiB, NULL);        /* above shared_below: a dedicated segment */
    CHECK(B.nseg == 3 && B.seg[2].bytes == 24 * MiB);
    hwrt_mem_stats s = stats();
    CHECK(s.segment.current == 3);
    release(a);
    release(b);
    release(c);
    void *d = alloc_on(1 * MiB + 1, NULL);     /* a shared request never takes a small block */
    CHECK(ADDR(d) == ADDR(b));
    void *e = alloc_on(128 * 1024, NULL);      /* nor a small one a shared block */
    CHECK(ADDR(e) == ADDR(a));
    release(d);
    release(e);
    FIGURES(0, 48 * MiB, 24 * MiB + 512 * 1024 + 512, 48 * MiB);
    /* growing below the peak, or with nothing cached, never synchronizes the device */
    CHECK(B.syncs == 0 && stats().num_sync_all_streams == 0);
}

static void max_split_size(void)
{
    /* (dedicated blocks: requests of shared_below, 10 MiB on this device, or more) */
    /* without the limit: a freed 16 MiB dedicated block serves a 13 MiB request, split */
    fresh(256 * MiB, NULL);
    void *a = alloc_on(16 * MiB, NULL);
    release(a);
    void *b = alloc_on(13 * MiB, NULL);
    CHECK(ADDR(b) == ADDR(a) && stats().segment.current == 1);
    FIGURES(13 * MiB, 16 * MiB, 16 * MiB, 16 * MiB);
    release(b);
    /* max_split_size 14 MiB: a request below it may not take a block at or above it */
    fresh(256 * MiB, "max_split_size:14MB");
    a = alloc_on(16 * MiB, NULL);
    release(a);
    b = alloc_on(13 * MiB, NULL);              /* a segment of its own; the cached one goes back */
    CHECK(ADDR(b) != ADDR(a) && stats().segment.current == 1 && B.seg[0].bytes == 14 * MiB);
    FIGURES(14 * MiB, 14 * MiB, 16 * MiB, 16 * MiB);   /* a 1 MiB rest is not split off */
    CHECK(stats().max_split_size == (int64_t)(14 * MiB));
    release(b);
    /* max_split_size 12 MiB: a request above it takes the block whole, unsplit */
    fresh(256 * MiB, "max_split_size:12MB");
    a = alloc_on(16 * MiB, NULL);
    release(a);
    b = alloc_on(13 * MiB, NULL);
    CHECK(ADDR(b) == ADDR(a));
    FIGURES(16 * MiB, 16 * MiB, 16 * MiB, 16 * MiB);
    CHECK(stats().inactive_split.current == 0);
    release(b);
    b = alloc_on(12 * MiB, NULL);              /* exactly max_split_size: not split either */
    CHECK(ADDR(b) == ADDR(a));
    FIGURES(16 * MiB, 16 * MiB, 16 * MiB, 16 * MiB);
    release(b);
}

static void stream_ordered_reuse(void)
{
    fresh(64 * MiB, NULL);
    void *keep = alloc_on(512, &sA);           /* A's segment stays in use (not trimmed) */
    void *x = alloc_on(4096, &sA);
    release(x);
    void *y = alloc_on(4096, &sB);             /* another stream's pool: not x */
    CHECK(y && ADDR(y) != ADDR(x));
    void *x2 = alloc_on(4096, &sA);            /* its own stream reuses it at once */
    CHECK(ADDR(x2) == ADDR(x));
    FIGURES(8704, 4 * MiB, 8704, 4 * MiB);
    release(y);
    /* record_stream: B uses x; freed while B's work is queued, x is not reused */
    CHECK(hwi_pool_record_stream(x2, &sB) == HWRT_SUCCESS);
    CHECK(hwi_pool_record_stream(x2, &sB) == HWRT_SUCCESS);   /* twice: one use */
    sB.submitted = 5;
    release(x2);
    hwrt_mem_stats s = stats();
    CHECK(s.active.current == 2 && s.allocation.current == 1);  /* pending: active */
    FIGURES(512, 4 * MiB, 8704, 4 * MiB);
    void *z = alloc_on(4096, &sA);
    CHECK(ADDR(z) != ADDR(x));
    release(z);
    sB.completed = 5;                          /* B's work done: x is free again */
    void *w = alloc_on(4096, &sA);
    CHECK(ADDR(w) == ADDR(x));
    CHECK(stats().active.current == 2);
    release(w);
    /* an event that never completes keeps its block out of every pool */
    void *v = alloc_on(4096, &sA);
    CHECK(hwi_pool_record_stream(v, &sB) == HWRT_SUCCESS);
    sB.submitted = 9;
    B.events_stuck = 1;
    release(v);
    sB.completed = 9;
    void *u = alloc_on(4096, &sA);
    CHECK(ADDR(u) != ADDR(v));
    release(u);
    release(keep);
    CHECK(hwi_pool_empty_cache(&dev) == HWRT_SUCCESS);   /* the pending block's segment stays */
    CHECK(stats().reserved_bytes.current == (int64_t)(2 * MiB));
    CHECK(stats().active.current == 1);
    B.events_stuck = 0;
    CHECK(hwi_pool_empty_cache(&dev) == HWRT_SUCCESS);
    FIGURES(0, 0, 8704, 4 * MiB);
    /* free_on (hwrt_free_async on another stream) records that stream first */
    void *t = alloc_on(4096, &sA);
    sB.submitted = 12;
    CHECK(hwi_pool_free_on(t, &sB, 0, "test") == HWRT_SUCCESS);
    void *t2 = alloc_on(4096, &sA);
    CHECK(ADDR(t2) != ADDR(t));
    release(t2);
    /* a destroyed stream: its blocks join the no-stream pool */
    sB.completed = 12;
    hwi_pool_stream_destroyed(&sA);
    void *n = alloc_on(4096, NULL);
    CHECK(ADDR(n) == ADDR(t));
    release(n);
    CHECK(hwi_pool_record_stream((void *)0x1234, &sB) == HWRT_ERROR_INVALID_ARGUMENT);
    /* recording the block's own stream changes nothing: reused at once, stream order */
    void *o = alloc_on(4096, &sA);
    CHECK(hwi_pool_record_stream(o, &sA) == HWRT_SUCCESS);
    sA.submitted = 3;
    release(o);
    void *o2 = alloc_on(4096, &sA);
    CHECK(ADDR(o2) == ADDR(o));
    /* a block used by B keeps B as a user when another stream is destroyed */
    static hwrt_bstream sC;
    void *q = alloc_on(4096, &sC);
    CHECK(hwi_pool_record_stream(q, &sB) == HWRT_SUCCESS);
    CHECK(hwi_pool_record_stream(q, &sA) == HWRT_SUCCESS);
    hwi_pool_stream_destroyed(&sA);            /* forgets sA's use only */
    sB.submitted = 20;
    release(q);
    void *q2 = alloc_on(4096, &sC);
    CHECK(ADDR(q2) != ADDR(q));                /* still waiting for B */
    sB.completed = 20;
    void *q3 = alloc_on(4096, &sC);
    CHECK(ADDR(q3) == ADDR(q));
    release(q2);
    release(q3);
    /* two other streams recorded: reused only once both are done */
    void *m = alloc_on(4096, &sC);
    CHECK(hwi_pool_record_stream(m, &sB) == HWRT_SUCCESS);
    CHECK(hwi_pool_record_stream(m, &sA) == HWRT_SUCCESS);
    sB.submitted = 30;
    sA.submitted = sA.completed + 1;
    release(m);
    sB.completed = 30;                         /* B done, A not */
    void *m2 = alloc_on(4096, &sC);
    CHECK(ADDR(m2) != ADDR(m));
    sA.completed = sA.submitted;
    void *m3 = alloc_on(4096, &sC);
    CHECK(ADDR(m3) == ADDR(m));
    release(m2);
    release(m3);
    hwi_pool_stream_destroyed(&sC);
    release(o2);
    sA.completed = sA.submitted;
    /* the no-stream pools that a destroyed stream's plain segments join stay best-fit ones
     * (issue 25, seed 3005: `s->expandable && kind != PK_SMALL` made `||` made them
     * address-ordered) */
    static hwrt_bstream sD;
    release(alloc_on(2 * MiB, &sD));           /* a shared segment */
    release(alloc_on(12 * MiB, &sD));          /* a dedicated one */
    hwi_pool_stream_destroyed(&sD);
    static const int kinds[3] = {PK_SMALL, PK_LARGE, PK_SHARED};
    for (int k = 0; k < 3; k++) {
        spool *sp = pool_spool(dev.pool, NULL, kinds[k]);
        CHECK(sp && !sp->addr_order);
    }
}

static void oom_empty_cache_retry(void)
{
    fresh(64 * MiB, NULL);
    void *a = alloc_on(40 * MiB, NULL);
    release(a);                                /* 40 MiB cached */
    FIGURES(0, 40 * MiB, 40 * MiB, 40 * MiB);
    int syncs = B.syncs;
    /* growing past the peak with a whole segment cached: sync, give it back first */
    void *b = alloc_on(50 * MiB, NULL);
    CHECK(b != NULL);
    CHECK(B.syncs == syncs + 1);
    hwrt_mem_stats s = stats();
    CHECK(s.num_alloc_retries == 0 && s.num_ooms == 0 && s.num_sync_all_streams == 1);
    FIGURES(50 * MiB, 50 * MiB, 50 * MiB, 50 * MiB);
    void *c = NULL;                            /* cannot fit at all: OOM, state intact */
    CHECK(hwi_pool_alloc(&dev, 30 * MiB, NULL, &c) == HWRT_ERROR_OUT_OF_MEMORY);
    CHECK(strstr(hwrt_last_error(), "out of memory on device 0") != NULL);
    CHECK(strstr(hwrt_last_error(), "30.0 MiB") != NULL || strstr(hwrt_last_error(), "30") != NULL);
    s = stats();
    CHECK(s.num_ooms == 1 && s.num_alloc_retries == 1);
    FIGURES(50 * MiB, 50 * MiB, 50 * MiB, 50 * MiB);
    release(b);                                /* the caller frees, empties, retries */
    CHECK(hwi_pool_empty_cache(&dev) == HWRT_SUCCESS);
    FIGURES(0, 0, 50 * MiB, 50 * MiB);
    c = alloc_on(30 * MiB, NULL);
    FIGURES(30 * MiB, 30 * MiB, 50 * MiB, 50 * MiB);
    release(c);
    CHECK(hwi_pool_empty_cache(&dev) == HWRT_SUCCESS);
    /* segment_alloc fails once (injected): the pool syncs and retries, and succeeds */
    B.fail_alloc_at = B.alloc_calls + 1;
    syncs = B.syncs;
    void *d = alloc_on(4096, NULL);
    CHECK(d != NULL && stats().num_alloc_retries == 2 && B.syncs == syncs + 1);
    FIGURES(4096, 2 * MiB, 50 * MiB, 50 * MiB);
    hwi_pool_reset_peaks(&dev);
    FIGURES(4096, 2 * MiB, 4096, 2 * MiB);
    release(d);
}

/* garbage_collection_threshold: only a segment the pool could give back starts a
 * collection (a device sync first); a fully used one does not (issue 25's seed-3003
 * mutation run: pool_release.c's `state == B_FREE && (...)` made `||` synchronized the
 * device on every growth past the threshold) */
static void gc_threshold(void)
{
    fresh(64 * MiB, "garbage_collection_threshold:0.5");
    void *a = alloc_on(24 * MiB, NULL);        /* a dedicated segment, all in use */
    void *b = alloc_on(24 * MiB, NULL);        /* past 32 MiB: nothing to collect */
    CHECK(B.syncs == 0 && stats().num_sync_all_streams == 0 && B.nseg == 2);
    release(a);                                /* now a cached segment to give back */
    void *c = alloc_on(10 * MiB + 512, NULL);  /* too big for a shared segment's rest */
    CHECK(B.syncs == 1 && stats().num_sync_all_streams == 1);
    CHECK(B.seg_frees == 1);                   /* a's segment went before growing */
    release(b);
    release(c);
}

/* The collection and the trim give back only what the growth needs, oldest-freed first:
 * down to their target and no further; at exactly the threshold nothing is collected
 * (the sweep of pool_release.c: 59's `reserved > target` made `>=`, `!trim_only &&` made
 * `||` (the parameter, always 0, is gone since) and 62's `<` made `>` gave back too many
 * segments or the wrong one; 23's `<=` made `<` synchronized the device at exactly the
 * threshold). */
static void release_targets(void)
{
    /* the trim: growth past the reserved high-water mark (60 MiB here) */
    fresh(256 * MiB, NULL);
    void *x = alloc_on(60 * MiB, NULL);
    release(x);
    CHECK(hwi_pool_empty_cache(&dev) == HWRT_SUCCESS);
    void *a = alloc_on(12 * MiB, NULL);
    void *b = alloc_on(24 * MiB, NULL);
    release(a);                                /* freed first: the first to go */
    release(b);
    int syncs = B.syncs, frees = B.seg_frees;
    void *d = alloc_on(36 * MiB, NULL);        /* 72 MiB > 60: down to 60 - 36 = 24 */
    CHECK(B.syncs == syncs + 1 && B.seg_frees == frees + 1);
    FIGURES(36 * MiB, 60 * MiB, 60 * MiB, 60 * MiB);
    void *e = alloc_on(24 * MiB, NULL);        /* b's segment stayed cached */
    CHECK(ADDR(e) == ADDR(b) && B.seg_frees == frees + 1);
    release(d);
    release(e);

    /* the collection: garbage_collection_threshold 0.5 of 128 MiB, met exactly */
    fresh(128 * MiB, "garbage_collection_threshold:0.5");
    x = alloc_on(64 * MiB, NULL);              /* the high-water mark, at the threshold */
    release(x);
    CHECK(hwi_pool_empty_cache(&dev) == HWRT_SUCCESS);
    a = alloc_on(24 * MiB, NULL);
    release(a);
    syncs = B.syncs;
    frees = B.seg_frees;
    void *c = alloc_on(40 * MiB, NULL);        /* 24 + 40 = 64: not past it */
    CHECK(B.syncs == syncs && B.seg_frees == frees && stats().num_sync_all_streams == 1);
    FIGURES(40 * MiB, 64 * MiB, 64 * MiB, 64 * MiB);
    release(c);
}

static void cap(void)
{
    fresh(256 * MiB, "max_device_memory:8MB");
    void *a = alloc_on(6 * MiB, NULL);         /* the 20 MiB shared segment exceeds the cap */
    CHECK(a != NULL && B.seg[0].bytes == 6 * MiB);
    FIGURES(6 * MiB, 6 * MiB, 6 * MiB, 6 * MiB);
    void *b = NULL;
    CHECK(hwi_pool_alloc(&dev, 4 * MiB, NULL, &b) == HWRT_ERROR_OUT_OF_MEMORY);
    CHECK(strstr(hwrt_last_error(), "max_device_memory cap") != NULL);
    FIGURES(6 * MiB, 6 * MiB, 6 * MiB, 6 * MiB);
    void *c = alloc_on(1 * MiB, NULL);         /* a small segment still fits under the cap */
    FIGURES(7 * MiB, 8 * MiB, 7 * MiB, 8 * MiB);
    release(a);
    void *d = alloc_on(4 * MiB, NULL);         /* the cached 6 MiB block serves it */
    CHECK(ADDR(d) == ADDR(a));
    release(c);
    release(d);
    CHECK(stats().reserved_bytes.peak <= (int64_t)(8 * MiB));
}

static void expandable(void)
{
    fresh(256 * MiB, "expandable_segments:true");
    void *a = alloc_on(3 * MiB, NULL);         /* one range, two granules mapped */
    CHECK(a != NULL && B.nseg == 1 && B.seg[0].va);
    CHECK(B.seg[0].bytes == 128 * MiB);        /* total / 2 (the large kind) */
    FIGURES(3 * MiB, 4 * MiB, 3 * MiB, 4 * MiB);
    B.fail_map = 1;                            /* mapping fails: nothing changes */
    void *b = NULL;
    CHECK(hwi_pool_alloc(&dev, 3 * MiB, NULL, &b) == HWRT_ERROR_OUT_OF_MEMORY && !b);
    FIGURES(3 * MiB, 4 * MiB, 3 * MiB, 4 * MiB);
    CHECK(B.seg[0].mapped == 4 * MiB && stats().segment.current == 1);
    CHECK(stats().allocation.current == 1 && stats().active.current == 1);
    B.fail_map = 0;
    b = alloc_on(3 * MiB, NULL);               /* the same range grows, right after a */
    CHECK(ADDR(b) == ADDR(a) + 3 * MiB && B.nseg == 1);
    FIGURES(6 * MiB, 6 * MiB, 6 * MiB, 6 * MiB);
    release(b);
    B.fail_unmap = 1;                          /* unmapping fails: the granule stays mapped */
    CHECK(hwi_pool_empty_cache(&dev) == HWRT_SUCCESS);
    FIGURES(3 * MiB, 6 * MiB, 6 * MiB, 6 * MiB);
    B.fail_unmap = 0;
    CHECK(hwi_pool_empty_cache(&dev) == HWRT_SUCCESS);   /* granules wholly free: unmapped */
    FIGURES(3 * MiB, 4 * MiB, 6 * MiB, 6 * MiB);
    release(a);
    CHECK(hwi_pool_empty_cache(&dev) == HWRT_SUCCESS);
    FIGURES(0, 0, 6 * MiB, 6 * MiB);

    /* no address space left: a plain segment instead, shared like plain mode's (22 MiB,
     * three 7 MiB blocks), so the next 7 MiB request is served from its rest (issue 25,
     * seed 3004: `size == large_seg_size || size == shared_seg` made `&&` made it a
     * dedicated segment, keeping its rest from the request) */
    B.fail_va = 1;
    void *c = alloc_on(7 * MiB, NULL);
    CHECK(c != NULL && B.nseg == 1 && !B.seg[0].va && B.seg[0].bytes == 22 * MiB);
    void *e = alloc_on(7 * MiB, NULL);
    CHECK(e != NULL && B.nseg == 1);
    B.fail_va = 0;
    release(c);
    release(e);
    CHECK(hwi_pool_empty_cache(&dev) == HWRT_SUCCESS);
    CHECK(B.nseg == 0);
}

/* Expandable large ranges (docs/memory.md, "Expandable segments"): half the device of
 * address space, the lowest-addressed free block that fits (address-ordered first fit,
 * not the best fit), requests of a shared segment's size (20 MiB on this device) or
 * more from the top of the range, and, under pressure, the placement that needs the
 * fewest new pages. */
static void expandable_placement(void)
{
    fresh(256 * MiB, "expandable_segments:true");
    void *a = alloc_on(6 * MiB, NULL);
    void *b = alloc_on(2 * MiB, NULL);
    void *c = alloc_on(3 * MiB, NULL);
    void *d = alloc_on(2 * MiB, NULL);
    CHECK(B.nseg == 1 && B.seg[0].va && B.seg[0].bytes == 128 * MiB);
    CHECK(ADDR(a) == B.seg[0].base && ADDR(b) == ADDR(a) + 6 * MiB);
    CHECK(ADDR(c) == ADDR(b) + 2 * MiB && ADDR(d) == ADDR(c) + 3 * MiB);
    release(a);
    release(c);                                /* holes: 6 MiB at the bottom, 3 MiB above */
    void *e = alloc_on(3 * MiB, NULL);         /* the lowest hole, not the exact one */
    CHECK(ADDR(e) == ADDR(a));
    void *f = alloc_on(3 * MiB, NULL);         /* the rest of it */
    CHECK(ADDR(f) == ADDR(a) + 3 * MiB);
    void *big = alloc_on(24 * MiB, NULL);      /* from the top of the range */
    CHECK(ADDR(big) == B.seg[0].base + (128 - 24) * MiB && B.nseg == 1);
    /* 12 pages for it, 7 below, less the page wholly inside c's hole, unmapped first
     * (growing past the peak) */
    FIGURES(34 * MiB, 36 * MiB, 34 * MiB, 36 * MiB);
    release(big);
    release(e);
    release(f);
    release(b);
    release(d);
    CHECK(hwi_pool_empty_cache(&dev) == HWRT_SUCCESS);
    FIGURES(0, 0, 34 * MiB, 36 * MiB);

    /* under pressure: the lowest hole needs a page the full device cannot give; a hole
     * between live blocks lies in a page they keep mapped, and serves the request */
    fresh(16 * MiB, "expandable_segments:true");
    void *x = alloc_on(2 * MiB, NULL);         /* [0, 2): page 0 */
    void *y = alloc_on(2 * MiB + 256 * 1024, NULL);         /* [2, 4.25): pages 1, 2 */
    void *z = alloc_on(MiB + 512 * 1024, NULL);             /* [4.25, 5.75): page 2 */
    void *w = alloc_on(MiB + 256 * 1024, NULL);             /* [5.75, 7): pages 2, 3 */
    CHECK(B.nseg == 1 && B.seg[0].bytes == 8 * MiB && ADDR(w) == ADDR(x) + 5 * MiB + 768 * 1024);
    release(x);
    release(z);
    CHECK(hwi_pool_empty_cache(&dev) == HWRT_SUCCESS);      /* page 0 unmapped */
    CHECK(B.used == 6 * MiB);
    B.total = B.used;                          /* the device is full */
    int64_t retries = stats().num_alloc_retries, ooms = stats().num_ooms;
    void *r = alloc_on(MiB + 512 * 1024, NULL);
    CHECK(ADDR(r) == ADDR(z) && stats().num_ooms == ooms && stats().num_alloc_retries == retries + 1);
    CHECK(B.used == 6 * MiB);
    release(r);
    release(y);
    release(w);
    B.total = 16 * MiB;
}

/* Brute force over the pool's own lists: the lowest-addressed free block of the
 * NULL-stream large pool with at least n bytes (address order: older range first). */
static pblock *lowest_free(size_t n)
{
    dpool *dp = dev.pool;
    pblock *best = NULL;
    for (pseg *s = dp->segs; s; s = s->next) {
        if (!s->expandable || s->sp->owner || s->sp->kind != PK_LARGE) continue;
        for (pblock *b = s->first; b; b = b->next)
            if (b->state == B_FREE && b->size >= n &&
                (!best || s->created_seq < best->seg->created_seq ||
                 (s == best->seg && b->base < best->base)))
                best = b;
    }
    return best;
}

/* Brute force: does some expandable range hold a mapped page no allocated or pending
 * block touches (what trimming could unmap)? */
static int idle_pages_brute(void)
{
    for (pseg *s = dev.pool->segs; s; s = s->next) {
        if (!s->expandable) continue;
        for (size_t g = 0; g < s->ngran; g++) {
            if (!s->gmap[g]) continue;
            int touched = 0;
            for (pblock *b = s->first; b && !touched; b = b->next)
                touched = b->state != B_FREE && (size_t)(b->base - s->base) < (g + 1) * s->gran &&
                          (size_t)(b->base - s->base) + b->size > g * s->gran;
            if (!touched) return 1;
        }
    }
    return 0;
}

static int idle_pages_fast(void)
{
    for (pseg *s = dev.pool->segs; s; s = s->next)
        if (pseg_has_idle_pages(s)) return 1;
    return 0;
}

/* The address index of expandable large ranges: the lowest-addressed free block that
 * fits, however many free blocks there are (the scan before it gave up after 256 and
 * took the lowest of those seen), and the O(1) idle-page count against a brute force
 * after every step of a random workload. */
static void address_index(void)
{
    fresh((size_t)4 << 30, "expandable_segments:true");
    enum { N = 600 };
    static void *p[N];
    size_t sz = MiB + 512 * 1024;
    for (int i = 0; i < N; i++) p[i] = alloc_on(sz, NULL);
    CHECK(ADDR(p[N - 1]) == ADDR(p[0]) + (size_t)(N - 1) * sz);
    for (int i = 0; i < N; i += 2) release(p[i]);   /* 300 holes, lowest freed first */
    void *q = alloc_on(sz, NULL);
    CHECK(ADDR(q) == ADDR(p[0]));                   /* the lowest hole, not a late one */
    release(q);
    for (int i = 1; i < N; i += 2) release(p[i]);
    CHECK(hwi_pool_empty_cache(&dev) == HWRT_SUCCESS);

    /* a random workload: every allocation takes the brute force's lowest fit */
    static struct { void *p; size_t n; } live[256];
    int nlive = 0, bad_place = 0, bad_idle = 0;
    unsigned x = 12345;
    for (int step = 0; step < 3000; step++) {
        x = x * 1103515245u + 12345u;
        if (nlive < 256 && (nlive < 8 || (x >> 16) % 3)) {
            size_t n = (size_t)(MiB + 512 + ((x >> 8) % (7 * MiB)));
            size_t r = (n + 511) & ~(size_t)511;
            pblock *want = lowest_free(r);
            uintptr_t expect = want ? ADDR(want->base) : 0;
            void *a = alloc_on(n, NULL);
            if (!a) break;
            if (want && ADDR(a) != expect) bad_place++;
            live[nlive].p = a;
            live[nlive++].n = n;
        } else {
            int k = (int)((x >> 4) % (unsigned)nlive);
            release(live[k].p);
            live[k] = live[--nlive];
        }
        if ((x >> 20) % 64 == 0) CHECK(hwi_pool_empty_cache(&dev) == HWRT_SUCCESS);
        if (idle_pages_fast() != idle_pages_brute()) bad_idle++;
    }
    CHECK(bad_place == 0);
    CHECK(bad_idle == 0);
    while (nlive) release(live[--nlive].p);
    CHECK(hwi_pool_empty_cache(&dev) == HWRT_SUCCESS);
    CHECK(!idle_pages_fast() && !idle_pages_brute());
}

/* Plain mode on a device of 2 GiB or more (shared segments of 64 MiB below 20 MiB): a
 * dedicated request whose rounding to the 2 MiB granule would waste half a granule or
 * more gets a segment for two of its size, and the second one is served from it. */
static void dedicated_pairs(void)
{
    fresh((size_t)4 << 30, NULL);
    void *a = alloc_on(20 * MiB + 1024, NULL);     /* 22 MiB alone: 2 MiB - 1 KiB wasted */
    CHECK(B.nseg == 1 && B.seg[0].bytes == 42 * MiB);
    void *b = alloc_on(20 * MiB + 1024, NULL);     /* the run's next block: the same segment */
    CHECK(B.nseg == 1 && ADDR(b) == ADDR(a) + 20 * MiB + 1024);
    void *c = alloc_on(21 * MiB + 512 * 1024, NULL);   /* 0.5 MiB wasted: a segment of its own */
    CHECK(B.nseg == 2 && B.seg[1].bytes == 22 * MiB);
    void *d = alloc_on(40 * MiB + 1024, NULL);     /* two would not fit in 64 MiB */
    CHECK(B.nseg == 3 && B.seg[2].bytes == 42 * MiB);
    release(a);
    release(b);
    release(c);
    release(d);
    CHECK(hwi_pool_empty_cache(&dev) == HWRT_SUCCESS);
    CHECK(B.nseg == 0);
}

static void lookups_and_tags(void)
{
    fresh(64 * MiB, NULL);
    char *a = alloc_on(3000, NULL);
    hwi_block_info bi;
    CHECK(hwi_pool_lookup(a + 100, &bi) == 1 && bi.device == 0 && bi.base == a && bi.size == 3000);
    CHECK(hwi_pool_find(a + 100, 2900, &bi) == 1);
    CHECK(hwi_pool_find(a + 100, 2901, &bi) == 0 && bi.base == a);   /* runs past the end */
    CHECK(hwi_block_covers(&bi, a, 3000) && !hwi_block_covers(&bi, a, 3001));
    CHECK(hwi_pool_lookup(a + 4096, &bi) == 1 && bi.base == NULL);   /* device, not live */
    int local;
    CHECK(hwi_pool_lookup(&local, &bi) == 0 && bi.device == -1);
    CHECK(hwi_pool_is_device_ptr(a + 5000, &local) && local == 0);
    CHECK(hwi_pool_free(a + 1, "test") == HWRT_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(hwrt_last_error(), "inside a block") != NULL);
    CHECK(hwi_pool_set_tag(a, "weights") == HWRT_SUCCESS);
    CHECK(hwi_pool_set_tag(a + 1, "x") == HWRT_ERROR_INVALID_ARGUMENT);
    FILE *f = tmpfile();
    CHECK(f && hwi_pool_snapshot(&dev, f) == HWRT_SUCCESS);
    if (f) {
        char buf[4096] = "";
        rewind(f);
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = 0;
        CHECK(strstr(buf, "\"backend\": \"pooltest\"") != NULL);
        CHECK(strstr(buf, "\"address\": \"0x600000000000\", \"size\": 2097152") != NULL);
        CHECK(strstr(buf, "\"tag\": \"weights\"") != NULL);
        CHECK(strstr(buf, "\"requested\": 3000") != NULL);
        fclose(f);
    }
    void *t = NULL;                            /* a tensor's data: hwrt_free refuses it */
    CHECK(hwi_pool_alloc_tensor(&dev, 512, &t) == HWRT_SUCCESS);
    CHECK(hwi_pool_free_user(t, "hwrt_free") == HWRT_ERROR_INVALID_ARGUMENT);
    CHECK(hwi_pool_free(t, "test") == HWRT_SUCCESS);
    release(a);
    CHECK(hwi_pool_free(a, "test") == HWRT_ERROR_INVALID_ARGUMENT);  /* twice */
    CHECK(hwi_pool_lookup(a, &bi) == 1 && bi.base == NULL);
}

static void thread_cache_figures(void)
{
    fresh(64 * MiB, "thread_cache:true");
    void *a = alloc_on(512, NULL);
    release(a);                                /* parked in this thread's cache */
    FIGURES(0, 2 * MiB, 512, 2 * MiB);
    hwi_block_info bi;
    CHECK(hwi_pool_lookup(a, &bi) == 1 && bi.base == NULL);   /* parked: not live */
    for (int i = 0; i < 1000; i++) {
        void *p = alloc_on(512, NULL);
        CHECK(ADDR(p) == ADDR(a));
        release(p);
    }
    hwrt_mem_stats s = stats();
    CHECK(s.allocation.allocated == 1001 && s.allocation.freed == 1001);
    FIGURES(0, 2 * MiB, 512, 2 * MiB);
    void *b = alloc_on(4096, NULL);
    void *c = alloc_on(4096, NULL);
    FIGURES(8192, 2 * MiB, 8192, 2 * MiB);
    release(b);
    release(c);
    CHECK(hwi_pool_empty_cache(&dev) == HWRT_SUCCESS);   /* parked blocks come back first */
    FIGURES(0, 0, 8192, 2 * MiB);
}

static struct { int n; hwi_mem_event_kind kind; const void *p; size_t bytes, alloc, resv; } EV;
static void observer(hwi_mem_event_kind kind, int device, const void *p, size_t bytes,
                     size_t allocated, size_t reserved)
{
    CHECK(device == 0);
    EV.n++;
    EV.kind = kind;
    EV.p = p;
    EV.bytes = bytes;
    EV.alloc = allocated;
    EV.resv = reserved;
}

/* The monitor (report_usage) hears every change of reserved; the profiler's observer
 * gets one event per successful allocation and free, with the figures after it. */
static void monitor_and_events(void)
{
    fresh(64 * MiB, NULL);
    void *a = alloc_on(1000, NULL);
    CHECK(B.reports == 1 && B.rep_resv == 2 * MiB && B.rep_alloc == 1024);
    /* reserved unchanged, allocated moving a little: every 1024th locked call tells */
    for (int i = 0; i < 1100; i++) release(alloc_on(512, NULL));
    CHECK(B.reports == 2 && B.rep_resv == 2 * MiB);
    CHECK(B.rep_alloc == 1024 || B.rep_alloc == 1536);
    release(a);
    CHECK(hwi_pool_empty_cache(&dev) == HWRT_SUCCESS);
    CHECK(B.rep_resv == 0 && B.rep_alloc == 0);
    hwi_mem_events_set(observer);
    char *b = alloc_on(3000, NULL);
    CHECK(EV.n == 1 && EV.kind == HWI_MEM_ALLOC && EV.p == b && EV.bytes == 3000);
    CHECK(EV.alloc == 3072 && EV.resv == 2 * MiB);
    void *c = NULL;
    CHECK(hwi_pool_alloc(&dev, 100 * MiB, NULL, &c) == HWRT_ERROR_OUT_OF_MEMORY);
    CHECK(EV.n == 1);                          /* a failed allocation is no event */
    CHECK(hwi_pool_free(b + 512, "test") == HWRT_ERROR_INVALID_ARGUMENT);
    CHECK(EV.n == 1);
    release(b);
    CHECK(EV.n == 2 && EV.kind == HWI_MEM_FREE && EV.p == b && EV.bytes == 3000);
    CHECK(EV.alloc == 0 && EV.resv == 2 * MiB);
    void *t = NULL;
    CHECK(hwi_pool_alloc_tensor(&dev, 700, &t) == HWRT_SUCCESS);
    CHECK(EV.n == 3 && EV.kind == HWI_MEM_ALLOC && EV.bytes == 700);
    CHECK(hwi_pool_free_user(t, "hwrt_free") == HWRT_ERROR_INVALID_ARGUMENT && EV.n == 3);
    CHECK(hwi_pool_free(t, "test") == HWRT_SUCCESS && EV.n == 4);
    hwi_mem_events_set(NULL);
}

/* Two devices, two pools: each its own figures and lock; their address ranges
 * interleave (one fake range for both), so a lookup must find the right pool among
 * several whose bounds contain the pointer; a thread's cache follows it from one
 * device to the other without mixing their blocks. */
static void two_devices(void)
{
    fresh(256 * MiB, "thread_cache:true");
    static hwi_device dev1 = {.id = 1, .ordinal = 1, .ops = &test_ops};
    void *a0 = alloc_on(512, NULL);
    void *a1 = NULL;
    CHECK(hwi_pool_alloc(&dev1, 512, NULL, &a1) == HWRT_SUCCESS);
    void *b0 = alloc_on(2 * MiB, NULL);        /* dev's large segment after dev1's small one */
    void *b1 = NULL;
    CHECK(hwi_pool_alloc(&dev1, 4096, NULL, &b1) == HWRT_SUCCESS);
    void *c1 = NULL;                           /* dev1's bounds now span dev's segment of b0 */
    CHECK(hwi_pool_alloc(&dev1, 2 * MiB, NULL, &c1) == HWRT_SUCCESS);
    CHECK(ADDR(a1) < ADDR(b0) && ADDR(b0) < ADDR(c1));
    CHECK(dev.pool && dev1.pool && dev.pool != dev1.pool);
    hwi_block_info bi;
    CHECK(hwi_pool_lookup(a1, &bi) && bi.device == 1 && bi.base == a1);
    CHECK(hwi_pool_lookup(b0, &bi) && bi.device == 0 && bi.base == b0);
    CHECK(hwi_pool_lookup(b1, &bi) && bi.device == 1 && bi.base == b1);
    hwrt_mem_stats s0 = stats(), s1;
    hwi_pool_stats(&dev1, &s1);
    CHECK(s0.allocated_bytes.current == (int64_t)(512 + 2 * MiB) && s0.segment.current == 2);
    CHECK(s1.allocated_bytes.current == (int64_t)(512 + 4096 + 2 * MiB) && s1.segment.current == 2);
    for (int i = 0; i < 100; i++) {            /* the cache moves between the pools */
        void *p0 = alloc_on(512, NULL), *p1 = NULL;
        CHECK(hwi_pool_alloc(&dev1, 512, NULL, &p1) == HWRT_SUCCESS);
        CHECK(hwi_pool_lookup(p0, &bi) && bi.device == 0);
        CHECK(hwi_pool_lookup(p1, &bi) && bi.device == 1);
        release(p0);
        release(p1);
    }
    s0 = stats();
    hwi_pool_stats(&dev1, &s1);
    CHECK(s0.allocated_bytes.current == (int64_t)(512 + 2 * MiB) && s0.allocation.current == 2);
    CHECK(s1.allocated_bytes.current == (int64_t)(512 + 4096 + 2 * MiB) && s1.allocation.current == 3);
    CHECK(hwi_pool_lookup(c1, &bi) && bi.device == 1 && bi.base == c1);
    release(a1);
    release(b1);
    release(c1);
    CHECK(mem_part_ops && mem_part_ops->close);
    if (mem_part_ops) mem_part_ops->close(&dev1, dev1.pool);   /* closing dev1: its segments go back; dev's stay */
    CHECK(dev1.pool == NULL && hwi_pool_last_leaks() == 0);
    CHECK(B.nseg == 2 && (size_t)stats().reserved_bytes.current == B.used);
    CHECK(hwi_pool_lookup(a1, &bi) == 0);
    CHECK(hwi_pool_lookup(a0, &bi) && bi.device == 0 && bi.base == a0);
    release(a0);
    release(b0);
}

static void leak_report(void)
{
    fresh(64 * MiB, NULL);
    void *a = alloc_on(700, NULL);
    (void)a;
    CHECK(shutdown_hook != NULL);
    if (shutdown_hook) CHECK(shutdown_hook() == HWRT_SUCCESS);
    CHECK(hwi_pool_last_leaks() == 1);
    CHECK(dev.pool == NULL && B.nseg == 0 && B.used == 0 && B.bad_frees == 0);
    hwi_block_info bi;
    CHECK(hwi_pool_lookup(a, &bi) == 0);       /* the pool is gone from the lookup list */
}

int main(void)
{
    split_and_coalesce();
    small_large_boundary();
    max_split_size();
    stream_ordered_reuse();
    oom_empty_cache_retry();
    gc_threshold();
    release_targets();
    cap();
    expandable();
    expandable_placement();
    address_index();
    dedicated_pairs();
    lookups_and_tags();
    thread_cache_figures();
    monitor_and_events();
    two_devices();
    leak_report();
    fresh(64 * MiB, NULL);
    if (failures) {
        fprintf(stderr, "whitebox_pool: %d check(s) failed\n", failures);
        return 1;
    }
    printf("whitebox_pool: all checks passed\n");
    return 0;
}
