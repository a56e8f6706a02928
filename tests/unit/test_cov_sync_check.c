/* The sync checker at its limits (issue 25 item 3, diag/sync_check.c), each case checking
 * the hazard count, the report's words and the data:
 * - a device-to-device copy is both a read of its source and a write of its destination:
 *   unordered with the source's writer it is a read-after-write hazard; ordered by an
 *   event, silent;
 * - nine streams read a block (eight readers are kept; the ninth takes the last place):
 *   a write on another stream with no ordering is a write-after-read hazard naming a reader;
 * - two streams read a block: a write ordered after one reader only is a write-after-read
 *   hazard with the other;
 * - waiting on an event recorded while the checker was off orders nothing it saw, and
 *   reports nothing; a pageable copy made while it was off orders the host after nothing;
 * - past 64 streams the checker tracks no more of them (no report, and the work runs);
 * - on a thread that is capturing, a host synchronization of another stream is refused
 *   by the capture (NOT_PERMITTED), and the checker records nothing for it;
 * - on another thread, a host synchronization of the capturing stream is refused too, and
 *   orders nothing: a later unordered read of what that stream had waited for is still a
 *   hazard (issue 25, seed 3004: `!enabled() || (s && s->capture) || ...` made
 *   `!enabled() && ...` took the refused sync for a real one);
 * - with offload on, the engine's internal events are forgotten as its fetches end, and
 *   a user's event still orders what it recorded. */
#include "harness.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define N 4096

static char last[1024];

static const char *last_report(void)
{
    hwrt_diag_last_hazard(last, sizeof last);
    return last;
}

/* Exactly one report since the last hwrt_diag_reset, holding f1 and (unless NULL) f2. */
static void one_hazard(const char *f1, const char *f2)
{
    uint64_t n = hwrt_diag_hazard_count();
    int has = strstr(last_report(), f1) && (!f2 || strstr(last, f2));
    EXPECT(n == 1);
    EXPECT(has);
    if (n != 1 || !has)
        fprintf(stderr, "  [%s] %llu reports, the last: %s\n", t_case, (unsigned long long)n,
                last);
}

static void copy_hazards(void)
{
    TEST_CASE("a D2D copy reads its source and writes its destination");
    hwrt_stream a, b;
    OK(hwrt_stream_create(&a, 0));
    OK(hwrt_stream_create(&b, 0));
    void *src = NULL, *dst = NULL;
    OK(hwrt_malloc(&src, N));
    OK(hwrt_malloc(&dst, N));
    OK(hwrt_device_synchronize());
    OK(hwrt_diag_reset());
    OK(hwrt_memset_async(src, 7, N, a));                    /* written on a */
    OK(hwrt_memcpy_async(dst, src, N, HWRT_MEMCPY_DEVICE_TO_DEVICE, b));   /* read on b */
    one_hazard("(read after write): MemcpyDtoD", NULL);
    OK(hwrt_device_synchronize());

    /* ... and a host-to-device or device-to-device copy writes its destination: read
     * unordered on another stream, a read-after-write hazard naming the copy (issue 25's
     * seed-3002 mutation run: `k == H2D || k == D2D` made `&&` recorded no copy's write) */
    TEST_CASE("a copy's destination is a write: read unordered on another stream");
    void *hp = NULL, *other = NULL;
    OK(hwrt_host_alloc(&hp, N, HWRT_HOST_PINNED));
    OK(hwrt_malloc(&other, N));
    memset(hp, 3, N);
    OK(hwrt_device_synchronize());
    OK(hwrt_diag_reset());
    OK(hwrt_memcpy_async(dst, hp, N, HWRT_MEMCPY_HOST_TO_DEVICE, a));     /* written on a */
    OK(hwrt_memcpy_async(other, dst, N, HWRT_MEMCPY_DEVICE_TO_DEVICE, b)); /* read on b */
    one_hazard("(read after write)", "MemcpyHtoD");
    OK(hwrt_device_synchronize());
    OK(hwrt_diag_reset());
    OK(hwrt_memcpy_async(dst, src, N, HWRT_MEMCPY_DEVICE_TO_DEVICE, a));  /* written on a */
    OK(hwrt_memset_async(src, 0, N, a));                                   /* (a's own) */
    OK(hwrt_memcpy_async(other, dst, N, HWRT_MEMCPY_DEVICE_TO_DEVICE, b)); /* read on b */
    one_hazard("(read after write)", NULL);
    OK(hwrt_device_synchronize());
    OK(hwrt_host_free(hp));
    OK(hwrt_free(other));

    TEST_CASE("ordered by an event: silent, and the data arrive");
    hwrt_event e;
    OK(hwrt_event_create(&e, HWRT_EVENT_DISABLE_TIMING));
    OK(hwrt_diag_reset());
    OK(hwrt_memset_async(src, 9, N, a));
    OK(hwrt_event_record(e, a));
    OK(hwrt_stream_wait_event(b, e));
    OK(hwrt_memcpy_async(dst, src, N, HWRT_MEMCPY_DEVICE_TO_DEVICE, b));
    OK(hwrt_stream_synchronize(b));
    EXPECT(hwrt_diag_hazard_count() == 0);
    unsigned char host[N];
    OK(hwrt_memcpy(host, dst, N, HWRT_MEMCPY_DEVICE_TO_HOST));
    EXPECT(host[0] == 9 && host[N - 1] == 9);

    TEST_CASE("nine readers, then an unordered write on another stream");
    hwrt_stream r[9];
    void *outs[9];
    for (int i = 0; i < 9; i++) {
        OK(hwrt_stream_create(&r[i], 0));
        OK(hwrt_malloc(&outs[i], N));
    }
    OK(hwrt_device_synchronize());
    OK(hwrt_diag_reset());
    for (int i = 0; i < 9; i++)                              /* ordered after the sync */
        OK(hwrt_memcpy_async(outs[i], dst, N, HWRT_MEMCPY_DEVICE_TO_DEVICE, r[i]));
    EXPECT(hwrt_diag_hazard_count() == 0);
    OK(hwrt_memset_async(dst, 1, N, a));                      /* a waited for none of them */
    one_hazard("(write after read): Memset", "MemcpyDtoD");
    OK(hwrt_device_synchronize());

    /* the ninth reader takes the last place: a write ordered after the first eight is
     * unordered with the ninth (issue 25, a sweep of sync_check.c: `nreaders < MAXR` made
     * `<=` wrote the ninth past the readers into their count, which then held the ninth's
     * stream slot (0 here, so no reader was left); `readers[MAXR - 1]` made
     * `MAXR + 1` wrote it past the block's state: either way the ninth went unreported) */
    TEST_CASE("nine readers, the write ordered after the first eight");
    hwrt_event after[8];
    OK(hwrt_diag_reset());
    OK(hwrt_memset_async(outs[8], 0, N, r[8]));     /* the ninth's stream tracked first */
    for (int i = 0; i < 9; i++) {
        OK(hwrt_memcpy_async(outs[i], dst, N, HWRT_MEMCPY_DEVICE_TO_DEVICE, r[i]));
        if (i == 8) break;
        OK(hwrt_event_create(&after[i], HWRT_EVENT_DISABLE_TIMING));
        OK(hwrt_event_record(after[i], r[i]));
        OK(hwrt_stream_wait_event(a, after[i]));
    }
    EXPECT(hwrt_diag_hazard_count() == 0);
    OK(hwrt_memset_async(dst, 2, N, a));
    char ninth[96];
    snprintf(ninth, sizeof ninth, "MemcpyDtoD (op 2 on stream %p (device 0)) reads", (void *)r[8]);
    one_hazard("(write after read): Memset", ninth);
    OK(hwrt_device_synchronize());
    for (int i = 0; i < 8; i++) OK(hwrt_event_destroy(after[i]));
    for (int i = 0; i < 9; i++) {
        OK(hwrt_free(outs[i]));
        OK(hwrt_stream_destroy(r[i]));
    }

    /* a read on a second stream is kept beside the first: a write ordered after the
     * second reader only is a hazard with the first (issue 25's hunt run 4001, on_read:
     * `readers[i].s == cur->s` made `!=` replaced the first reader by the second) */
    TEST_CASE("two readers: a write ordered after the second is unordered with the first");
    void *o1 = NULL, *o2 = NULL;
    hwrt_stream c;
    OK(hwrt_stream_create(&c, 0));
    OK(hwrt_malloc(&o1, N));
    OK(hwrt_malloc(&o2, N));
    OK(hwrt_device_synchronize());
    OK(hwrt_diag_reset());
    OK(hwrt_memcpy_async(o1, dst, N, HWRT_MEMCPY_DEVICE_TO_DEVICE, a));   /* read on a */
    OK(hwrt_memcpy_async(o2, dst, N, HWRT_MEMCPY_DEVICE_TO_DEVICE, b));   /* read on b */
    OK(hwrt_event_record(e, b));
    OK(hwrt_stream_wait_event(c, e));
    EXPECT(hwrt_diag_hazard_count() == 0);
    OK(hwrt_memset_async(dst, 5, N, c));                /* after b's read, not after a's */
    one_hazard("(write after read): Memset", NULL);
    OK(hwrt_device_synchronize());
    OK(hwrt_free(o1));
    OK(hwrt_free(o2));
    OK(hwrt_stream_destroy(c));

    TEST_CASE("an event recorded while the checker was off orders nothing it saw");
    OK(hwrt_set_check_sync(0));
    hwrt_event old;
    OK(hwrt_event_create(&old, HWRT_EVENT_DISABLE_TIMING));
    OK(hwrt_event_record(old, a));
    OK(hwrt_set_check_sync(1));
    OK(hwrt_diag_reset());
    OK(hwrt_stream_wait_event(b, old));
    OK(hwrt_memset_async(dst, 3, N, b));
    OK(hwrt_stream_synchronize(b));
    EXPECT(hwrt_diag_hazard_count() == 0);
    OK(hwrt_memcpy(host, dst, N, HWRT_MEMCPY_DEVICE_TO_HOST));
    EXPECT(host[0] == 3);

    /* likewise a pageable copy made while the checker was off orders the host after
     * nothing (issue 25, a sweep of sync_check.c: in sc_post `!enabled() || capture` made
     * `&&` took it into the host's clock) */
    TEST_CASE("a pageable copy made while the checker was off orders nothing");
    OK(hwrt_diag_reset());
    OK(hwrt_memset_async(src, 4, N, a));                     /* written on a */
    OK(hwrt_set_check_sync(0));
    OK(hwrt_memcpy_async(host, dst, N, HWRT_MEMCPY_DEVICE_TO_HOST, a));   /* pageable */
    OK(hwrt_set_check_sync(1));
    OK(hwrt_memcpy_async(dst, src, N, HWRT_MEMCPY_DEVICE_TO_DEVICE, b));  /* src read on b */
    one_hazard("(read after write): MemcpyDtoD", "Memset");
    OK(hwrt_device_synchronize());
    OK(hwrt_event_destroy(old));
    OK(hwrt_event_destroy(e));
    OK(hwrt_free(src));
    OK(hwrt_free(dst));
    OK(hwrt_stream_destroy(a));
    OK(hwrt_stream_destroy(b));
}

static void many_streams(void)
{
    TEST_CASE("past 64 streams: untracked, the work still runs");
    enum { NS = 70 };
    hwrt_stream s[NS];
    void *p = NULL;
    OK(hwrt_malloc(&p, N));
    OK(hwrt_device_synchronize());
    OK(hwrt_diag_reset());
    for (int i = 0; i < NS; i++) {
        OK(hwrt_stream_create(&s[i], 0));
        OK(hwrt_memset_async(p, i, N, s[i]));
        OK(hwrt_stream_synchronize(s[i]));               /* each ordered after the last */
    }
    EXPECT(hwrt_diag_hazard_count() == 0);
    unsigned char host[N];
    OK(hwrt_memcpy(host, p, N, HWRT_MEMCPY_DEVICE_TO_HOST));
    EXPECT(host[0] == NS - 1 && host[N - 1] == NS - 1);
    for (int i = 0; i < NS; i++) OK(hwrt_stream_destroy(s[i]));
    OK(hwrt_free(p));
}

static void sync_while_capturing(void)
{
    TEST_CASE("a host sync of another stream on the capturing thread");
    hwrt_stream cap, other;
    OK(hwrt_stream_create(&cap, 0));
    OK(hwrt_stream_create(&other, 0));
    float v[4] = {1, 2, 3, 4}, got[4] = {0};
    int64_t shape[1] = {4};
    hwrt_tensor x = NULL, y = NULL;
    OK(hwrt_tensor_from_host(&x, HWRT_FLOAT32, 1, shape, v));
    OK(hwrt_tensor_empty(&y, HWRT_FLOAT32, 1, shape));
    OK(hwrt_device_synchronize());
    OK(hwrt_diag_reset());
    OK(hwrt_stream_begin_capture(cap));
    OK(hwrt_op_scale(y, x, 2.0, cap));
    FAILS(hwrt_stream_synchronize(other), HWRT_ERROR_NOT_PERMITTED, "hwrt_stream_synchronize");
    FAILS(hwrt_device_synchronize(), HWRT_ERROR_NOT_PERMITTED, "hwrt_device_synchronize");
    hwrt_graph g = NULL;
    OK(hwrt_stream_end_capture(cap, &g));
    size_t n = 0;
    OK(hwrt_graph_node_count(g, &n));
    EXPECT(n == 1);
    OK(hwrt_graph_launch(g, cap));
    OK(hwrt_stream_synchronize(cap));
    OK(hwrt_tensor_copy_to_host(y, got, sizeof got));
    EXPECT(got[0] == 2 && got[3] == 8);
    EXPECT(hwrt_diag_hazard_count() == 0);
    OK(hwrt_graph_destroy(g));
    OK(hwrt_tensor_release(x));
    OK(hwrt_tensor_release(y));
    OK(hwrt_stream_destroy(cap));
    OK(hwrt_stream_destroy(other));
}

static hwrt_stream capturing;
static hwrt_status other_thread_sync;

static void *sync_capturing(void *arg)
{
    (void)arg;
    other_thread_sync = hwrt_stream_synchronize(capturing);
    return NULL;
}

static void sync_of_capturing_stream_elsewhere(void)
{
    TEST_CASE("a host sync of the capturing stream on another thread orders nothing");
    hwrt_stream a, b;
    hwrt_event e;
    OK(hwrt_stream_create(&a, 0));
    OK(hwrt_stream_create(&b, 0));
    OK(hwrt_stream_create(&capturing, 0));
    OK(hwrt_event_create(&e, 0));
    void *x = NULL, *y = NULL;
    OK(hwrt_malloc(&x, N));
    OK(hwrt_malloc(&y, N));
    OK(hwrt_device_synchronize());
    OK(hwrt_diag_reset());
    OK(hwrt_memset_async(x, 5, N, a));                       /* written on a */
    OK(hwrt_event_record(e, a));
    OK(hwrt_stream_wait_event(capturing, e));                /* capturing is after it */
    OK(hwrt_stream_begin_capture(capturing));
    OK(hwrt_memset_async(y, 1, N, capturing));
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, sync_capturing, NULL) == 0);
    pthread_join(t, NULL);
    EXPECT(other_thread_sync == HWRT_ERROR_NOT_PERMITTED);
    hwrt_graph g = NULL;
    OK(hwrt_stream_end_capture(capturing, &g));
    OK(hwrt_memcpy_async(y, x, N, HWRT_MEMCPY_DEVICE_TO_DEVICE, b));   /* x read on b */
    one_hazard("(read after write)", NULL);
    OK(hwrt_device_synchronize());
    OK(hwrt_graph_destroy(g));
    OK(hwrt_event_destroy(e));
    OK(hwrt_free(x));
    OK(hwrt_free(y));
    OK(hwrt_stream_destroy(a));
    OK(hwrt_stream_destroy(b));
    OK(hwrt_stream_destroy(capturing));
}

/* A new float32 tensor of N / 4 elements. */
static hwrt_tensor vec(void)
{
    int64_t shape[1] = {N / 4};
    hwrt_tensor t = NULL;
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    return t;
}

/* A released tensor's block is forgotten, and no other (issue 25, a sweep of
 * sync_check.c: in hwi_sync_check_forget `blocks[i].base == base` made `!=` forgot every
 * other block; `i < nblocks` made `<=` matched the entry left past the end by the last
 * forget, so a block released a second time, unused, dropped the last live entry). */
static void released_blocks(void)
{
    TEST_CASE("a released tensor's block is forgotten, no other");
    hwrt_stream a, b;
    OK(hwrt_stream_create(&a, 0));
    OK(hwrt_stream_create(&b, 0));
    hwrt_tensor x = vec(), y = vec(), z = vec(), out = vec();
    OK(hwrt_device_synchronize());
    OK(hwrt_diag_reset());
    OK(hwrt_op_fill(x, 1.0, a));                             /* x, then y, written on a */
    OK(hwrt_op_fill(y, 2.0, a));
    OK(hwrt_tensor_release(z));                              /* never used */
    OK(hwrt_op_scale(out, x, 2.0, b));                       /* x read on b: unordered */
    one_hazard("(read after write): Scale", "that Fill");
    OK(hwrt_device_synchronize());

    TEST_CASE("a block released twice, the second time unused, leaves the others");
    hwrt_tensor w = vec(), w2;
    void *wdata = NULL, *w2data = NULL;
    OK(hwrt_tensor_data(w, &wdata));
    OK(hwrt_diag_reset());
    OK(hwrt_op_fill(x, 3.0, a));                             /* entries: x (a), w (default) */
    OK(hwrt_op_fill(w, 4.0, NULL));
    OK(hwrt_tensor_release(w));                              /* w forgotten: x left */
    OK(hwrt_stream_synchronize(NULL));                       /* w's block free (not a's) */
    w2 = vec();                                              /* w's block again */
    OK(hwrt_tensor_data(w2, &w2data));
    EXPECT(w2data == wdata);
    OK(hwrt_tensor_release(w2));                             /* the same base, unused */
    OK(hwrt_op_scale(out, x, 2.0, b));                       /* x read on b: unordered */
    one_hazard("(read after write): Scale", "that Fill");
    OK(hwrt_device_synchronize());
    OK(hwrt_tensor_release(x));
    OK(hwrt_tensor_release(y));
    OK(hwrt_tensor_release(out));
    OK(hwrt_stream_destroy(a));
    OK(hwrt_stream_destroy(b));
}

/* The offload engine's internal events are forgotten when their fetch or use ends; a
 * user's event is kept (issue 25, a sweep of sync_check.c: in
 * hwi_sync_check_forget_event `events[i].handle == handle` made `!=` forgot every other
 * event, so a stream waiting for the user's event read unordered). */
static void offload_events(void)
{
    TEST_CASE("offload's internal events are forgotten, a user's event is kept");
    hwrt_offload_config cfg = {.enabled = 1, .offload_cpu_size = 8u << 20,
                               .enable_pinned_mem = 1, .prefetch_depth = 2};
    OK(hwrt_set_offload_config(&cfg));
    hwrt_stream a, b, c;
    OK(hwrt_stream_create(&a, 0));
    OK(hwrt_stream_create(&b, 0));
    OK(hwrt_stream_create(&c, 0));
    hwrt_tensor x = vec(), t = vec(), out = vec(), tout = vec();
    OK(hwrt_op_fill(t, 5.0, c));
    OK(hwrt_tensor_set_offloadable(t, 1));
    OK(hwrt_device_synchronize());
    hwrt_event e;
    OK(hwrt_event_create(&e, HWRT_EVENT_DISABLE_TIMING));
    OK(hwrt_offload_evict(t));            /* t comes back (a fetch) and is used on c */
    OK(hwrt_op_scale(tout, t, 2.0, c));
    OK(hwrt_stream_synchronize(c));
    OK(hwrt_diag_reset());
    OK(hwrt_op_fill(x, 6.0, a));
    OK(hwrt_event_record(e, a));                             /* the user's event */
    OK(hwrt_offload_evict(t));            /* clean: dropped, its fetch's event forgotten */
    OK(hwrt_stream_wait_event(b, e));
    OK(hwrt_op_scale(out, x, 2.0, b));                       /* ordered by e only */
    OK(hwrt_stream_synchronize(b));
    EXPECT(hwrt_diag_hazard_count() == 0);
    if (hwrt_diag_hazard_count()) fprintf(stderr, "  the last report: %s\n", last_report());
    float got[N / 4];
    OK(hwrt_tensor_copy_to_host(out, got, sizeof got));
    EXPECT(got[0] == 12.0f && got[N / 4 - 1] == 12.0f);
    OK(hwrt_tensor_copy_to_host(tout, got, sizeof got));
    EXPECT(got[0] == 10.0f && got[N / 4 - 1] == 10.0f);
    OK(hwrt_device_synchronize());
    OK(hwrt_event_destroy(e));
    OK(hwrt_tensor_release(x));
    OK(hwrt_tensor_release(t));
    OK(hwrt_tensor_release(out));
    OK(hwrt_tensor_release(tout));
    OK(hwrt_stream_destroy(a));
    OK(hwrt_stream_destroy(b));
    OK(hwrt_stream_destroy(c));
    cfg.enabled = 0;
    OK(hwrt_set_offload_config(&cfg));
}

int main(void)
{
    OK(hwrt_set_device("sim", 0));
    OK(hwrt_set_check_sync(1));
    copy_hazards();
    many_streams();
    released_blocks();
    sync_while_capturing();
    sync_of_capturing_stream_elsewhere();
    offload_events();
    OK(hwrt_set_check_sync(0));
    OK(hwrt_shutdown());
    return test_report();
}
