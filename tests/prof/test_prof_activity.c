/* Device spans from activity records (the sim backend's activity_enable slot): every work
 * item gets exactly one span, on the right work item, in stream order, between its launch
 * and the sync that waited for it. Two threads, each on its own stream, launch a mix the
 * sim runs in different ways: memsets, a 40 MiB device copy (split into chunks copied by
 * several threads), pinned and pageable copies (pageable ones block the caller), kernels,
 * host functions (on the sim's callback engine), and an event record + wait (control ops
 * the backend does not report: the wait keeps its marker). Then: a later session sees only
 * its own work, and the marker fallback (HWRT_PROFILE_MARKERS=1) still gives every launch
 * a device end.
 *
 * Attribution is checked without timing thresholds: each host function writes down when
 * it ran, and its span must contain that interval (a span shifted by one work item, or
 * swapped with the other thread's, would not).
 * usage: test_prof_activity OUTDIR */
#include "harness.h"
#include "prof/prof.h"            /* sizeof(prof_rec): the activity buffer's chunk */

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

enum { THREADS = 2, ROUNDS = 3, SCALES = 5, MAXW = 256 };
enum { PER_ROUND = 1 + 1 + 2 + SCALES + 1 + 1 + 2 }; /* memset, D2D, 2 H2D, scales, fn, D2H,
                                                        record + wait */
#define BIG ((size_t)40 << 20)    /* above the sim's split threshold (32 MiB) */
#define SMALL ((size_t)1 << 20)

#define TRY(call)                                     \
    do {                                              \
        hwrt_status st_ = (call);                     \
        if (st_ != HWRT_SUCCESS) return st_;          \
    } while (0)

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

typedef struct ran { uint64_t t0, t1; } ran;
static ran fn_ran[THREADS][ROUNDS];

static void host_fn(void *arg)
{
    ran *r = arg;
    r->t0 = now_ns();
    struct timespec d = {0, 2000000};
    nanosleep(&d, NULL);
    r->t1 = now_ns();
}

static hwrt_status one_thread(int me)
{
    hwrt_stream s;
    hwrt_tensor t;
    hwrt_event e;
    void *da, *db, *pinned, *pageable = malloc(SMALL);
    int64_t shape[1] = {4096};
    if (!pageable) return HWRT_ERROR_HOST_OUT_OF_MEMORY;
    memset(pageable, 1, SMALL);
    TRY(hwrt_set_device("sim", 0));
    TRY(hwrt_stream_create(&s, 0));
    TRY(hwrt_event_create(&e, HWRT_EVENT_DEFAULT));
    TRY(hwrt_malloc(&da, BIG));
    TRY(hwrt_malloc(&db, BIG));
    TRY(hwrt_host_alloc(&pinned, SMALL, HWRT_HOST_PINNED));
    TRY(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    TRY(hwrt_op_fill(t, 1.0, s));
    for (int r = 0; r < ROUNDS; r++) {
        TRY(hwrt_memset_async(da, r, BIG, s));
        TRY(hwrt_memcpy_async(db, da, BIG, HWRT_MEMCPY_DEVICE_TO_DEVICE, s));
        TRY(hwrt_memcpy_async(da, pinned, SMALL, HWRT_MEMCPY_HOST_TO_DEVICE, s));
        TRY(hwrt_memcpy_async(db, pageable, SMALL, HWRT_MEMCPY_HOST_TO_DEVICE, s));
        for (int k = 0; k < SCALES; k++) TRY(hwrt_op_scale(t, t, 1.0, s));
        TRY(hwrt_launch_host_func(s, host_fn, &fn_ran[me][r]));
        TRY(hwrt_memcpy_async(pageable, da, SMALL, HWRT_MEMCPY_DEVICE_TO_HOST, s));
        TRY(hwrt_event_record(e, s));
        TRY(hwrt_stream_wait_event(s, e));
    }
    TRY(hwrt_stream_synchronize(s));
    TRY(hwrt_tensor_release(t));
    TRY(hwrt_host_free(pinned));
    TRY(hwrt_free(da));
    TRY(hwrt_free(db));
    TRY(hwrt_event_destroy(e));
    TRY(hwrt_stream_destroy(s));
    free(pageable);
    return HWRT_SUCCESS;
}

static void *worker(void *arg)
{
    int me = (int)(intptr_t)arg;
    hwrt_status st = one_thread(me);
    if (st != HWRT_SUCCESS)
        fprintf(stderr, "thread %d: %s: %s\n", me, hwrt_status_name(st), hwrt_last_error());
    return (void *)(intptr_t)(st != HWRT_SUCCESS);
}

/* One W line of the raw file (prof_writer.c). */
typedef struct wline {
    char kind[16];
    unsigned thread, stream;
    unsigned long long t0, t1, dev_end, bytes, dev_start;
} wline;

typedef struct lane {            /* one launching thread's work, in launch order */
    wline w[MAXW];
    int n;
    unsigned stream;
    unsigned long long sync_end; /* end of its last hwrt_stream_synchronize */
} lane;

static int load(const char *dir, lane *lanes, int *nthreads)
{
    char cmd[1200], line[4096];
    snprintf(cmd, sizeof cmd, "cat %s/raw/prof_*.tsv", dir);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    *nthreads = 0;
    while (fgets(line, sizeof line, p)) {
        wline w = {0};
        char name[64], api[64];
        unsigned th, dev, stream, failed, sub, pin;
        unsigned long long a, b, c, t0, t1;
        if (line[0] == 'W' &&
            sscanf(line, "W\t%u\t%15s\t%63s\t%u\t%u\t%llu\t%llu\t%llu\t%llu\t%u\t%u\t%u\t%llu"
                   "\t%llu\t%llu\t%llu", &w.thread, w.kind, name, &dev, &w.stream, &w.t0, &w.t1,
                   &w.dev_end, &w.bytes, &sub, &pin, &failed, &a, &b, &c, &w.dev_start) == 16 &&
            w.thread < THREADS + 1) {
            lane *l = &lanes[w.thread];
            if (l->n < MAXW) l->w[l->n++] = w;
            l->stream = w.stream;
            if ((int)w.thread + 1 > *nthreads) *nthreads = (int)w.thread + 1;
        } else if (line[0] == 'S' &&
                   sscanf(line, "S\t%u\t%63s\t%u\t%u\t%llu\t%llu", &th, api, &dev, &stream, &t0,
                          &t1) == 6 &&
                   th < THREADS + 1 && !strcmp(api, "hwrt_stream_synchronize") &&
                   t1 > lanes[th].sync_end) {
            lanes[th].sync_end = t1;
        }
    }
    pclose(p);
    return 0;
}

static int reported(const wline *w)   /* kinds the backend reports with activity records */
{
    return strcmp(w->kind, "record") && strcmp(w->kind, "wait");
}

static void check_lane(const lane *l, int me)
{
    unsigned long long prev_end = 0;
    int fns = 0, bigs = 0, waits = 0;
    EXPECT(l->n == 1 + ROUNDS * PER_ROUND);
    EXPECT(l->sync_end > 0);
    for (int i = 0; i < l->n; i++) {
        const wline *w = &l->w[i];
        EXPECT(w->stream == l->stream);                /* one stream per thread */
        if (!strcmp(w->kind, "record")) {
            EXPECT(w->dev_end == 0 && w->dev_start == 0);   /* a user's record: no span */
            continue;
        }
        EXPECT(w->dev_end > 0);                        /* every work item has a span */
        EXPECT(w->dev_end >= prev_end);                /* in stream order */
        if (reported(w)) {
            /* done before the sync returned (the engine stamps an op's end before the
             * stream learns it completed; a marker's time is taken just after, so the
             * wait's marker is not held to this) */
            EXPECT(w->dev_end <= l->sync_end);
            /* a real start: after the launch began and the previous item ended */
            EXPECT(w->dev_start >= w->t0);
            EXPECT(w->dev_start >= prev_end);
            EXPECT(w->dev_start <= w->dev_end);
        } else {
            EXPECT(w->dev_start == 0);                 /* the wait keeps its marker */
            waits++;
        }
        if (!strcmp(w->kind, "hostfn") && fns < ROUNDS) {
            const ran *r = &fn_ran[me][fns++];
            /* the span is this host function's: it contains the time fn really ran */
            EXPECT(r->t1 > r->t0);
            EXPECT(w->dev_start <= r->t0 && r->t1 <= w->dev_end);
        }
        if (w->bytes == BIG && !strcmp(w->kind, "copy")) {
            bigs++;                                    /* one span per split copy */
            EXPECT(w->dev_end > w->dev_start);
        }
        prev_end = w->dev_end;
    }
    EXPECT(fns == ROUNDS && bigs == ROUNDS && waits == ROUNDS);
}

/* Which lane ran as worker `me`: the one whose host-function spans contain fn_ran[me]
 * (lanes are numbered by the order threads first recorded, not by worker index). */
static const lane *lane_of(const lane *lanes, int nl, int me)
{
    for (int i = 0; i < nl; i++)
        for (int k = 0; k < lanes[i].n; k++) {
            const wline *w = &lanes[i].w[k];
            if (!strcmp(w->kind, "hostfn")) {
                if (w->dev_start <= fn_ran[me][0].t0 && fn_ran[me][0].t1 <= w->dev_end)
                    return &lanes[i];
                break;                  /* its first host function is another worker's */
            }
        }
    return NULL;
}

/* The activity buffer's cap (prof_activity.c): as many chunks as the tracer's cap needs,
 * each holding 4096 * sizeof(prof_rec) / 24 records. With HWRT_PROFILE_MAX_EVENTS=1 the
 * tracer keeps one chunk (4096 records) and the activity buffer one chunk. A kernel held
 * behind a gate reports after more than a chunk of other kernels' records: it is past the
 * cap, dropped, and counted as a launch without a device time (the mutant `chunks_used <
 * cap_chunks` made `<=` in on_activity kept one chunk more, and the kernel's record). */
static atomic_int gate_open;
static void gate_fn(void *arg) { (void)arg; while (!atomic_load(&gate_open)) usleep(200); }

static void activity_cap(const char *dir)
{
    TEST_CASE("activity records past the cap are dropped and counted");
    const size_t per_chunk = PROF_CHUNK * sizeof(prof_rec) / sizeof(hwrt_activity);
    const size_t n = per_chunk + per_chunk / 2;  /* one chunk and a half: past the cap, */
    setenv("HWRT_PROFILE_MAX_EVENTS", "1", 1);   /* inside the mutant's two chunks */
    hwrt_stream a, b;
    OK(hwrt_stream_create(&a, 0));
    OK(hwrt_stream_create(&b, 0));
    hwrt_tensor t, u;
    int64_t shape[1] = {4};
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    OK(hwrt_tensor_empty(&u, HWRT_FLOAT32, 1, shape));
    atomic_store(&gate_open, 0);
    OK(hwrt_profiler_start(dir));
    OK(hwrt_launch_host_func(a, gate_fn, NULL));  /* the first records the tracer keeps */
    OK(hwrt_op_fill(t, 7.0, a));                  /* runs after the gate */
    for (size_t i = 0; i < n; i++) OK(hwrt_op_fill(u, (double)i, b));
    OK(hwrt_stream_synchronize(b));
    atomic_store(&gate_open, 1);
    OK(hwrt_stream_synchronize(a));
    OK(hwrt_profiler_stop());
    unsetenv("HWRT_PROFILE_MAX_EVENTS");
    hwrt_profiler_stats st;
    OK(hwrt_profiler_get_stats(&st));
    printf("activity cap: %zu records a chunk, %zu kernels after the gate; events %llu, "
           "dropped %llu, without a device time %llu\n", per_chunk, n,
           (unsigned long long)st.events, (unsigned long long)st.dropped,
           (unsigned long long)st.device_ts_missing);
    EXPECT(st.events == PROF_CHUNK && st.dropped > 0);
    /* the gate's host function and the kernel behind it: both reported past the cap */
    EXPECT(st.device_ts_missing == 2);
    OK(hwrt_tensor_release(t));
    OK(hwrt_tensor_release(u));
    OK(hwrt_stream_destroy(a));
    OK(hwrt_stream_destroy(b));
}

int main(int argc, char **argv)
{
    const char *out = argc > 1 ? argv[1] : "prof_activity_out";
    char clean[1100];
    snprintf(clean, sizeof clean, "rm -rf '%s'", out);   /* raw files of earlier runs */
    if (system(clean) != 0) return 1;

    TEST_CASE("activity spans");
    OK(hwrt_set_device("sim", 0));
    OK(hwrt_profiler_start(out));
    pthread_t th[THREADS];
    int bad = 0;
    for (int i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(th[i], &r);
        bad |= r != NULL;
    }
    EXPECT(!bad);
    OK(hwrt_profiler_stop());
    hwrt_profiler_stats st;
    OK(hwrt_profiler_get_stats(&st));
    EXPECT(st.dropped == 0 && st.device_ts_missing == 0);

    static lane lanes[THREADS + 1];
    int nl = 0;
    EXPECT(load(out, lanes, &nl) == 0);
    EXPECT(nl == THREADS);
    for (int me = 0; me < THREADS; me++) {
        const lane *l = lane_of(lanes, nl, me);
        EXPECT(l != NULL);
        if (l) check_lane(l, me);
    }
    EXPECT(lanes[0].stream != lanes[1].stream);

    TEST_CASE("a stopped session stamps nothing");
    /* after stop, launches carry no correlation id: nothing is recorded and a new session
     * sees only its own work */
    hwrt_tensor t;
    int64_t shape[1] = {16};
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    OK(hwrt_op_fill(t, 0.0, NULL));
    OK(hwrt_stream_synchronize(NULL));
    char dir2[1100];
    snprintf(dir2, sizeof dir2, "%s/again", out);
    OK(hwrt_profiler_start(dir2));
    OK(hwrt_op_fill(t, 1.0, NULL));
    OK(hwrt_stream_synchronize(NULL));
    OK(hwrt_profiler_stop());
    OK(hwrt_profiler_get_stats(&st));
    EXPECT(st.events == 2 && st.dropped == 0 && st.device_ts_missing == 0);
    static lane l2[THREADS + 1];
    EXPECT(load(dir2, l2, &nl) == 0);
    EXPECT(nl == 1 && l2[0].n == 1 && l2[0].w[0].dev_start >= l2[0].w[0].t0 &&
           l2[0].w[0].dev_end >= l2[0].w[0].dev_start && l2[0].w[0].dev_end <= l2[0].sync_end);

    TEST_CASE("the marker fallback");
    /* HWRT_PROFILE_MARKERS=1 gives the path backends without activity records take: every
     * item still gets a device end (from its marker), and no device start is claimed */
    char dir3[1100];
    snprintf(dir3, sizeof dir3, "%s/markers", out);
    setenv("HWRT_PROFILE_MARKERS", "1", 1);
    OK(hwrt_profiler_start(dir3));
    unsetenv("HWRT_PROFILE_MARKERS");
    for (int i = 0; i < 5; i++) OK(hwrt_op_scale(t, t, 1.0, NULL));
    OK(hwrt_stream_synchronize(NULL));
    OK(hwrt_profiler_stop());
    OK(hwrt_profiler_get_stats(&st));
    EXPECT(st.events == 6 && st.dropped == 0 && st.device_ts_missing == 0);
    static lane l3[THREADS + 1];
    EXPECT(load(dir3, l3, &nl) == 0);
    EXPECT(nl == 1 && l3[0].n == 5);
    for (int i = 0; i < l3[0].n; i++)
        EXPECT(l3[0].w[i].dev_start == 0 && l3[0].w[i].dev_end >= l3[0].w[i].t0 &&
               (i == 0 || l3[0].w[i].dev_end >= l3[0].w[i - 1].dev_end));

    OK(hwrt_tensor_release(t));

    char dir4[1100];
    snprintf(dir4, sizeof dir4, "%s/cap", out);
    activity_cap(dir4);
    OK(hwrt_shutdown());
    return test_report();
}
