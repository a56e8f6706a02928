/* Graph capture paths test_graph does not reach (issue 25 item 3): the 64-capture limit,
 * host syncs from a thread that is not capturing (allowed on its own eager stream, refused
 * on the capturing stream and device-wide), work queued on a capturing stream by several
 * threads, graphs of more than 64 nodes and buffers (the record grows), one buffer used by
 * several nodes with different sizes, device-to-device and device-to-pinned-host copies,
 * and hwrt_shutdown with captures still open. Every replay's data is checked. */
#include "harness.h"

#include <pthread.h>
#include <stdint.h>

enum { MAXCAP = 64, NBUF = 80, BYTES = 256 };

#define REFUSED(call, name) FAILS(call, HWRT_ERROR_NOT_PERMITTED, name " is not permitted while a graph is being captured")

static void test_capture_limit(void)
{
    TEST_CASE("64 captures at once, the 65th refused");
    hwrt_stream st[MAXCAP + 1];
    for (int i = 0; i <= MAXCAP; i++) OK(hwrt_stream_create(&st[i], 0));
    for (int i = 0; i < MAXCAP; i++) OK(hwrt_stream_begin_capture(st[i]));
    FAILS(hwrt_stream_begin_capture(st[MAXCAP]), HWRT_ERROR_NOT_PERMITTED,
          "64 captures are already in progress; end one first");
    /* the refused stream stays eager: its work runs now */
    void *d;
    unsigned char h[BYTES];
    OK(hwrt_malloc(&d, BYTES));
    OK(hwrt_memset_async(d, 0x5a, BYTES, st[MAXCAP]));
    OK(hwrt_stream_synchronize(st[MAXCAP]) == HWRT_ERROR_NOT_PERMITTED ? HWRT_SUCCESS
                                                                      : HWRT_ERROR_INTERNAL);
    hwrt_graph g;
    OK(hwrt_stream_end_capture(st[0], &g));
    size_t n = 99;
    OK(hwrt_graph_node_count(g, &n));
    EXPECT(n == 0);
    OK(hwrt_graph_destroy(g));
    /* one slot free again: the 65th stream may capture now */
    OK(hwrt_stream_begin_capture(st[MAXCAP]));
    OK(hwrt_stream_end_capture(st[MAXCAP], &g));
    OK(hwrt_graph_destroy(g));
    for (int i = 1; i < MAXCAP; i++) {
        OK(hwrt_stream_end_capture(st[i], &g));
        OK(hwrt_graph_destroy(g));
    }
    OK(hwrt_stream_synchronize(st[MAXCAP]));        /* no capture left: allowed now */
    OK(hwrt_memcpy(h, d, BYTES, HWRT_MEMCPY_DEVICE_TO_HOST));
    int all = 1;
    for (int i = 0; i < BYTES; i++) all &= h[i] == 0x5a;
    EXPECT(all);
    OK(hwrt_free(d));
    for (int i = 0; i <= MAXCAP; i++) OK(hwrt_stream_destroy(st[i]));
}

struct other_arg {
    hwrt_stream capturing, eager;
    void *dbuf;
    hwrt_status own_sync, cap_sync, dev_sync, queue;
    char cap_err[512], dev_err[512];
};

static void *other_thread(void *p)
{
    struct other_arg *a = p;
    /* this thread does not capture: its own eager stream may be synchronized */
    a->own_sync = hwrt_stream_synchronize(a->eager);
    a->cap_sync = hwrt_stream_synchronize(a->capturing);
    snprintf(a->cap_err, sizeof a->cap_err, "%s", hwrt_last_error());
    a->dev_sync = hwrt_device_synchronize();
    snprintf(a->dev_err, sizeof a->dev_err, "%s", hwrt_last_error());
    /* work this thread queues on the capturing stream is recorded, not run */
    a->queue = hwrt_memset_async(a->dbuf, 0x33, BYTES, a->capturing);
    return NULL;
}

static void test_other_thread(void)
{
    TEST_CASE("host syncs and queued work from a thread that is not capturing");
    struct other_arg a = {0};
    OK(hwrt_stream_create(&a.capturing, 0));
    OK(hwrt_stream_create(&a.eager, 0));
    OK(hwrt_malloc(&a.dbuf, BYTES));
    OK(hwrt_memset_async(a.dbuf, 0x11, BYTES, a.eager));
    OK(hwrt_stream_synchronize(a.eager));
    OK(hwrt_stream_begin_capture(a.capturing));
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, other_thread, &a) == 0);
    pthread_join(t, NULL);
    EXPECT(a.own_sync == HWRT_SUCCESS);
    EXPECT(a.cap_sync == HWRT_ERROR_NOT_PERMITTED);
    EXPECT(strstr(a.cap_err, "hwrt_stream_synchronize is not permitted while a graph is being captured"));
    EXPECT(a.dev_sync == HWRT_ERROR_NOT_PERMITTED);
    EXPECT(strstr(a.dev_err, "hwrt_device_synchronize is not permitted while a graph is being captured"));
    EXPECT(a.queue == HWRT_SUCCESS);
    hwrt_graph g;
    OK(hwrt_stream_end_capture(a.capturing, &g));
    unsigned char h[BYTES];
    OK(hwrt_memcpy(h, a.dbuf, BYTES, HWRT_MEMCPY_DEVICE_TO_HOST));
    EXPECT(h[0] == 0x11 && h[BYTES - 1] == 0x11);          /* capture ran nothing */
    size_t n = 0;
    OK(hwrt_graph_node_count(g, &n));
    EXPECT(n == 1);
    OK(hwrt_graph_launch(g, a.eager));
    OK(hwrt_stream_synchronize(a.eager));
    OK(hwrt_memcpy(h, a.dbuf, BYTES, HWRT_MEMCPY_DEVICE_TO_HOST));
    int all = 1;
    for (int i = 0; i < BYTES; i++) all &= h[i] == 0x33;
    EXPECT(all);
    OK(hwrt_graph_destroy(g));
    /* no capture left: every sync is allowed again */
    OK(hwrt_device_synchronize());
    OK(hwrt_free(a.dbuf));
    OK(hwrt_stream_destroy(a.capturing));
    OK(hwrt_stream_destroy(a.eager));
}

static void test_large_graph(void)
{
    TEST_CASE("a graph of more than 64 nodes over more than 64 buffers");
    hwrt_stream s;
    OK(hwrt_stream_create(&s, 0));
    void *d[NBUF], *dst;
    OK(hwrt_malloc(&dst, BYTES));
    for (int i = 0; i < NBUF; i++) OK(hwrt_malloc(&d[i], BYTES));
    unsigned char *pin;
    OK(hwrt_host_alloc((void **)&pin, (size_t)NBUF * BYTES, HWRT_HOST_PINNED));
    memset(pin, 0, (size_t)NBUF * BYTES);
    OK(hwrt_stream_begin_capture(s));
    for (int i = 0; i < NBUF; i++) {
        /* the same buffer twice: first a part of it, then all of it */
        OK(hwrt_memset_async(d[i], 0xee, BYTES / 2, s));
        OK(hwrt_memset_async(d[i], i + 1, BYTES, s));
    }
    /* device to device, then device to pinned host */
    OK(hwrt_memcpy_async(dst, d[NBUF - 1], BYTES, HWRT_MEMCPY_DEVICE_TO_DEVICE, s));
    for (int i = 0; i < NBUF; i++)
        OK(hwrt_memcpy_async(pin + (size_t)i * BYTES, d[i], BYTES, HWRT_MEMCPY_DEVICE_TO_HOST, s));
    hwrt_graph g;
    OK(hwrt_stream_end_capture(s, &g));
    EXPECT(pin[0] == 0 && pin[(size_t)NBUF * BYTES - 1] == 0);   /* nothing ran yet */
    size_t n = 0;
    OK(hwrt_graph_node_count(g, &n));
    EXPECT(n == (size_t)(3 * NBUF + 1));
    for (int rep = 0; rep < 2; rep++) {
        memset(pin, 0, (size_t)NBUF * BYTES);
        OK(hwrt_graph_launch(g, s));
        OK(hwrt_stream_synchronize(s));
        int all = 1;
        for (int i = 0; i < NBUF; i++)
            for (int j = 0; j < BYTES; j++) all &= pin[(size_t)i * BYTES + j] == (unsigned char)(i + 1);
        EXPECT(all);
    }
    unsigned char h[BYTES];
    OK(hwrt_memcpy(h, dst, BYTES, HWRT_MEMCPY_DEVICE_TO_HOST));
    EXPECT(h[0] == NBUF && h[BYTES - 1] == NBUF);
    /* the graph checks every buffer it recorded: one freed is caught at launch */
    OK(hwrt_free(d[NBUF / 2]));
    FAILS(hwrt_graph_launch(g, s), HWRT_ERROR_INVALID_ARGUMENT, "was freed after capture");
    OK(hwrt_graph_destroy(g));
    for (int i = 0; i < NBUF; i++) if (i != NBUF / 2) OK(hwrt_free(d[i]));
    OK(hwrt_free(dst));
    OK(hwrt_host_free(pin));
    OK(hwrt_stream_destroy(s));
}

/* A buffer a graph only reads as a copy's source (device to host, device to device) is one
 * of its inputs too: freed after capture, the launch refuses (seed 3009's capture.c:65,
 * `D2H || D2D` made `&&`, recorded no copy source and replayed from freed memory). */
static void test_copy_sources_checked(void)
{
    TEST_CASE("a copy's device source freed after capture is caught at launch");
    hwrt_stream s;
    OK(hwrt_stream_create(&s, 0));
    void *a, *b, *c;
    OK(hwrt_malloc(&a, BYTES));
    OK(hwrt_malloc(&b, BYTES));
    OK(hwrt_malloc(&c, BYTES));
    OK(hwrt_memset_async(a, 7, BYTES, s));
    OK(hwrt_memset_async(b, 9, BYTES, s));
    unsigned char *pin;
    OK(hwrt_host_alloc((void **)&pin, BYTES, HWRT_HOST_PINNED));
    hwrt_graph to_host, to_dev;
    OK(hwrt_stream_begin_capture(s));
    OK(hwrt_memcpy_async(pin, a, BYTES, HWRT_MEMCPY_DEVICE_TO_HOST, s));
    OK(hwrt_stream_end_capture(s, &to_host));
    OK(hwrt_stream_begin_capture(s));
    OK(hwrt_memcpy_async(c, b, BYTES, HWRT_MEMCPY_DEVICE_TO_DEVICE, s));
    OK(hwrt_stream_end_capture(s, &to_dev));
    OK(hwrt_graph_launch(to_host, s));
    OK(hwrt_graph_launch(to_dev, s));
    OK(hwrt_stream_synchronize(s));
    unsigned char h[BYTES];
    OK(hwrt_memcpy(h, c, BYTES, HWRT_MEMCPY_DEVICE_TO_HOST));
    EXPECT(pin[0] == 7 && pin[BYTES - 1] == 7 && h[0] == 9 && h[BYTES - 1] == 9);
    OK(hwrt_free(a));
    OK(hwrt_free(b));
    char want[160];
    snprintf(want, sizeof want, "device pointer %p used by the graph (device 0) was freed after capture", a);
    FAILS(hwrt_graph_launch(to_host, s), HWRT_ERROR_INVALID_ARGUMENT, want);
    snprintf(want, sizeof want, "device pointer %p used by the graph (device 0) was freed after capture", b);
    FAILS(hwrt_graph_launch(to_dev, s), HWRT_ERROR_INVALID_ARGUMENT, want);
    OK(hwrt_graph_destroy(to_host));
    OK(hwrt_graph_destroy(to_dev));
    OK(hwrt_free(c));
    OK(hwrt_host_free(pin));
    OK(hwrt_stream_destroy(s));
}

static void test_shutdown_mid_capture(void)
{
    TEST_CASE("hwrt_shutdown with captures open drops them");
    hwrt_stream a, b;
    OK(hwrt_stream_create(&a, 0));
    OK(hwrt_stream_create(&b, 0));
    void *d;
    OK(hwrt_malloc(&d, BYTES));
    OK(hwrt_stream_begin_capture(a));
    OK(hwrt_stream_begin_capture(b));
    OK(hwrt_memset_async(d, 1, BYTES, a));
    REFUSED(hwrt_device_synchronize(), "hwrt_device_synchronize");
    OK(hwrt_shutdown());
    /* the library comes back with no capture left: host syncs are allowed */
    OK(hwrt_set_device("sim", 0));
    OK(hwrt_device_synchronize());
    hwrt_stream s;
    OK(hwrt_stream_create(&s, 0));
    hwrt_graph g;
    FAILS(hwrt_stream_end_capture(s, &g), HWRT_ERROR_NOT_PERMITTED, "not capturing");
    OK(hwrt_stream_begin_capture(s));
    OK(hwrt_stream_end_capture(s, &g));
    OK(hwrt_graph_destroy(g));
    OK(hwrt_stream_destroy(s));
}

int main(void)
{
    OK(hwrt_set_device("sim", 0));
    test_capture_limit();
    test_other_thread();
    test_large_graph();
    test_copy_sources_checked();
    test_shutdown_mid_capture();
    OK(hwrt_shutdown());
    return test_report();
}
