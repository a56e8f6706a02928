/* The profiler API: argument and state errors, multi-threaded recording with device
 * timestamps and no losses, the dropped count at the cap, events from other subsystems
 * (hwi_prof_record_event), and the raw file's contents.
 * usage: test_prof_api OUTDIR */
#include "harness.h"
#include "prof/prof.h"

#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

enum { THREADS = 4, OPS = 1000 };

static void *worker(void *arg)
{
    (void)arg;
    hwrt_stream s;
    hwrt_tensor t;
    int64_t shape[1] = {256};
    if (hwrt_set_device("sim", 0) || hwrt_stream_create(&s, 0) ||
        hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape))
        return (void *)1;
    for (int i = 0; i < OPS; i++)
        if (hwrt_op_scale(t, t, 1.0, s)) return (void *)1;
    if (hwrt_stream_synchronize(s) || hwrt_tensor_release(t) || hwrt_stream_destroy(s))
        return (void *)1;
    return NULL;
}

static int run_threads(void)
{
    pthread_t th[THREADS];
    int bad = 0;
    for (int i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, worker, NULL);
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(th[i], &r);
        bad |= r != NULL;
    }
    return bad;
}

/* Count raw lines by their first field; also the W lines without a device time. */
static void count_raw(const char *dir, long *w, long *s, long *m, long *x, long *no_dev)
{
    char cmd[1200], line[4096];
    *w = *s = *m = *x = *no_dev = 0;
    snprintf(cmd, sizeof cmd, "cat %s/raw/prof_*.tsv", dir);
    FILE *p = popen(cmd, "r");
    while (p && fgets(line, sizeof line, p)) {
        if (line[0] == 'W') {
            (*w)++;
            char *f = line;
            for (int i = 0; i < 8 && f; i++) f = strchr(f, '\t') ? strchr(f, '\t') + 1 : NULL;
            if (f && strtoull(f, NULL, 10) == 0) (*no_dev)++;
        }
        *s += line[0] == 'S';
        *m += line[0] == 'M';
        *x += line[0] == 'X';
    }
    if (p) pclose(p);
}

int main(int argc, char **argv)
{
    const char *out = argc > 1 ? argv[1] : "prof_api_out";
    char dir[1024], dir2[1024];
    snprintf(dir, sizeof dir, "%s/threads", out);
    snprintf(dir2, sizeof dir2, "%s/cap", out);
    hwrt_profiler_stats st;
    char clean[1100];
    snprintf(clean, sizeof clean, "rm -rf '%s'", out);   /* raw files of earlier runs */
    if (system(clean) != 0) return 1;

    TEST_CASE("errors");
    FAILS(hwrt_profiler_start(NULL), HWRT_ERROR_INVALID_ARGUMENT, "output_dir is NULL");
    FAILS(hwrt_profiler_start(""), HWRT_ERROR_INVALID_ARGUMENT, "output_dir is empty");
    FAILS(hwrt_profiler_stop(), HWRT_ERROR_NOT_PERMITTED, "no profiling session is running");
    FAILS(hwrt_profiler_start("/proc/hwrt-no-such/dir"), HWRT_ERROR_IO, "cannot create directory");
    FAILS(hwrt_profiler_get_stats(NULL), HWRT_ERROR_INVALID_ARGUMENT, "out is NULL");
    OK(hwrt_profiler_get_stats(&st));
    EXPECT(!st.running);

    TEST_CASE("threads");
    OK(hwrt_profiler_start(dir));
    FAILS(hwrt_profiler_start(dir2), HWRT_ERROR_NOT_PERMITTED, dir);
    EXPECT(run_threads() == 0);
    uint64_t t0 = hwi_prof_now_ns();
    hwi_prof_record_event(HWI_PROF_OFFLOAD_FETCH, "fetch", 0, t0, t0 + 1000, 4096);
    hwi_prof_record_event(HWI_PROF_COLLECTIVE, "AllReduce", 0, t0, t0 + 2000, 1 << 20);
    OK(hwrt_profiler_get_stats(&st));
    EXPECT(st.running && st.dropped == 0);
    /* per thread: OPS launches, 1 sync, 1 alloc, 1 free; plus the 2 external events */
    EXPECT(st.events == THREADS * (OPS + 3) + 2);
    EXPECT(st.threads == THREADS + 1);
    OK(hwrt_profiler_stop());
    OK(hwrt_profiler_get_stats(&st));
    EXPECT(!st.running && st.device_ts_missing == 0 && st.events == THREADS * (OPS + 3) + 2);
    long w, s, m, x, no_dev;
    count_raw(dir, &w, &s, &m, &x, &no_dev);
    EXPECT(w == THREADS * OPS && s == THREADS && m == 2 * THREADS && x == 2 && no_dev == 0);
    if (w != THREADS * OPS || no_dev)
        fprintf(stderr, "raw: W %ld S %ld M %ld X %ld, W without device time %ld\n", w, s, m,
                x, no_dev);

    TEST_CASE("stopped sessions record nothing");
    EXPECT(run_threads() == 0);
    hwrt_profiler_stats after;
    OK(hwrt_profiler_get_stats(&after));
    EXPECT(after.events == st.events);

    TEST_CASE("cap and dropped count");
    setenv("HWRT_PROFILE_MAX_EVENTS", "100", 1);     /* one chunk (4096 records) */
    OK(hwrt_profiler_start(dir2));
    EXPECT(run_threads() == 0);
    OK(hwrt_profiler_stop());
    OK(hwrt_profiler_get_stats(&st));
    EXPECT(st.events + st.dropped == THREADS * (OPS + 3));
    EXPECT(st.dropped > 0 && st.events <= 4096);
    count_raw(dir2, &w, &s, &m, &x, &no_dev);
    EXPECT((uint64_t)(w + s + m + x) == st.events);
    char hdr[1200];
    snprintf(hdr, sizeof hdr, "grep -q '^#dropped\t%llu$' %s/raw/prof_*.tsv",
             (unsigned long long)st.dropped, dir2);
    EXPECT(system(hdr) == 0);
    unsetenv("HWRT_PROFILE_MAX_EVENTS");

    TEST_CASE("offload's evictions and fetches reach the profile");
    snprintf(dir2, sizeof dir2, "%s/offload", out);
    {
        hwrt_offload_config oc = {.enabled = 1, .offload_cpu_size = 64 << 20,
                                  .prefetch_depth = 2};
        OK(hwrt_set_device("sim", 0));
        OK(hwrt_set_offload_config(&oc));
        hwrt_tensor ot;
        int64_t shape[1] = {1 << 16};
        OK(hwrt_tensor_empty(&ot, HWRT_FLOAT32, 1, shape));
        OK(hwrt_tensor_set_offloadable(ot, 1));
        OK(hwrt_op_fill(ot, 3.0, NULL));
        OK(hwrt_device_synchronize());
        OK(hwrt_profiler_start(dir2));
        OK(hwrt_offload_evict(ot));                     /* an evict span */
        int where = -1;
        OK(hwrt_offload_location(ot, &where));
        EXPECT(where == 1);
        OK(hwrt_op_scale(ot, ot, 2.0, NULL));           /* a fetch span, then the op */
        OK(hwrt_device_synchronize());
        OK(hwrt_profiler_stop());
        count_raw(dir2, &w, &s, &m, &x, &no_dev);
        EXPECT(x >= 2);
        if (x < 2) fprintf(stderr, "offload: %ld spans recorded (want evict + fetch)\n", x);
        char q[1300];
        snprintf(q, sizeof q, "grep -q 'evict' %s/raw/prof_*.tsv && grep -q 'fetch from host' "
                 "%s/raw/prof_*.tsv", dir2, dir2);
        EXPECT(system(q) == 0);
        OK(hwrt_tensor_release(ot));
        oc.enabled = 0;
        OK(hwrt_set_offload_config(&oc));
    }

    TEST_CASE("graph replays are profiled node by node");
    snprintf(dir2, sizeof dir2, "%s/graph", out);
    {
        hwrt_stream gs;
        hwrt_tensor gt;
        hwrt_graph g;
        int64_t shape[1] = {1024};
        OK(hwrt_set_device("sim", 0));
        OK(hwrt_stream_create(&gs, 0));
        OK(hwrt_tensor_empty(&gt, HWRT_FLOAT32, 1, shape));
        OK(hwrt_profiler_start(dir2));
        OK(hwrt_stream_begin_capture(gs));
        OK(hwrt_op_fill(gt, 1.0, gs));
        OK(hwrt_op_scale(gt, gt, 2.0, gs));
        OK(hwrt_op_relu(gt, gt, gs));
        OK(hwrt_stream_end_capture(gs, &g));
        OK(hwrt_graph_launch(g, gs));
        OK(hwrt_graph_launch(g, gs));
        OK(hwrt_stream_synchronize(gs));
        OK(hwrt_profiler_stop());
        count_raw(dir2, &w, &s, &m, &x, &no_dev);
        EXPECT(w == 6 && no_dev == 0);    /* 2 replays x 3 nodes; the capture launches none */
        if (w != 6) fprintf(stderr, "graph: %ld launches recorded\n", w);
        OK(hwrt_graph_destroy(g));
        OK(hwrt_tensor_release(gt));
        OK(hwrt_stream_destroy(gs));
    }

    TEST_CASE("stream-ordered allocations report their frees");
    snprintf(dir2, sizeof dir2, "%s/async", out);
    {
        hwrt_stream as;
        OK(hwrt_set_device("sim", 0));
        OK(hwrt_stream_create(&as, 0));
        OK(hwrt_profiler_start(dir2));
        for (int i = 0; i < 3; i++) {
            void *p = NULL;
            OK(hwrt_malloc_async(&p, 4096, as));
            OK(hwrt_memset_async(p, 0, 4096, as));
            OK(hwrt_free_async(p, as));
        }
        OK(hwrt_stream_synchronize(as));
        OK(hwrt_profiler_stop());
        count_raw(dir2, &w, &s, &m, &x, &no_dev);
        EXPECT(m == 6 && w == 3 && no_dev == 0);
        if (m != 6) fprintf(stderr, "async: %ld memory events (want 3 alloc + 3 free)\n", m);
        OK(hwrt_stream_destroy(as));
    }

    TEST_CASE("shutdown with a session running");
    snprintf(dir2, sizeof dir2, "%s/shutdown", out);
    OK(hwrt_profiler_start(dir2));
    EXPECT(run_threads() == 0);
    OK(hwrt_shutdown());             /* resolves markers and writes, the session goes on */
    count_raw(dir2, &w, &s, &m, &x, &no_dev);
    EXPECT(w == THREADS * OPS && no_dev == 0);
    EXPECT(run_threads() == 0);      /* a fresh runtime after shutdown is profiled too */
    OK(hwrt_profiler_stop());
    count_raw(dir2, &w, &s, &m, &x, &no_dev);
    EXPECT(w == 2 * THREADS * OPS && no_dev == 0);
    OK(hwrt_shutdown());
    return test_report();
}
