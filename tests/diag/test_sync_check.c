/* The sync checker flags planted hazards (read after write, write after write, write
 * after read across streams; a host read of data another stream is still producing;
 * a graph replay read without ordering), naming both operations, and stays silent on
 * correct code: same-stream order, event-ordered cross-stream use, stream/device/event
 * synchronization, hwrt_tensor_copy_to_host, destroyed streams, reused blocks.
 * Planted hazards are made harmless on the device: the first stream is held behind a
 * host-function gate until the second one has finished, an order the checker cannot see
 * (so it reports) but the hardware, and TSan, do. */
#include "harness.h"

#include <stdatomic.h>
#include <unistd.h>

static atomic_int gate_open;
static void gate(void *arg) { (void)arg; while (!atomic_load(&gate_open)) usleep(100); }

static void hold(hwrt_stream s)
{
    atomic_store(&gate_open, 0);
    OK(hwrt_launch_host_func(s, gate, NULL));
}

/* let the held stream go once `other` is done */
static void release(hwrt_stream other)
{
    OK(hwrt_stream_synchronize(other));
    atomic_store(&gate_open, 1);
    OK(hwrt_device_synchronize());
}

enum { N = 1024 };

static hwrt_tensor mk(void)
{
    static float zero[N];
    hwrt_tensor t;
    int64_t shape[1] = {N};
    OK(hwrt_tensor_from_host(&t, HWRT_FLOAT32, 1, shape, zero));
    return t;
}

static char last[1024];

/* Expect exactly `n` new reports since the last call, the last one containing frags. */
static void expect_reports(uint64_t *seen, uint64_t n, const char *f1, const char *f2)
{
    uint64_t now = hwrt_diag_hazard_count();
    EXPECT(now - *seen == n);
    if (now - *seen != n)
        fprintf(stderr, "  [%s] expected %llu new reports, got %llu\n", t_case,
                (unsigned long long)n, (unsigned long long)(now - *seen));
    *seen = now;
    if (!n) return;
    OK(hwrt_diag_last_hazard(last, sizeof last));
    EXPECT(strstr(last, f1) != NULL);
    EXPECT(strstr(last, f2) != NULL);
}

int main(void)
{
    OK(hwrt_set_device("sim", 0));
    OK(hwrt_set_check_sync(1));
    OK(hwrt_diag_reset());
    uint64_t seen = 0;
    hwrt_stream a, b;
    OK(hwrt_stream_create(&a, 0));
    OK(hwrt_stream_create(&b, 0));
    hwrt_event e;
    OK(hwrt_event_create(&e, 0));
    hwrt_tensor t = mk(), u = mk(), out = mk();
    void *tdata;
    OK(hwrt_tensor_data(t, &tdata));
    static float host[N];

    TEST_CASE("correct: same stream, then events");
    OK(hwrt_op_fill(t, 1.0, a));
    OK(hwrt_op_add(out, t, u, a));
    OK(hwrt_event_record(e, a));
    OK(hwrt_stream_wait_event(b, e));
    OK(hwrt_op_scale(u, out, 2.0, b));                   /* reads out after a's Add: ordered */
    OK(hwrt_op_fill(t, 3.0, b));                         /* writes t after a's reads: ordered */
    expect_reports(&seen, 0, "", "");
    OK(hwrt_stream_synchronize(b));                      /* a may touch t and u again */

    TEST_CASE("correct: synchronize, copy_to_host");
    OK(hwrt_op_fill(t, 4.0, a));
    OK(hwrt_stream_synchronize(a));
    OK(hwrt_op_relu(out, t, b));
    OK(hwrt_op_fill(u, 5.0, a));
    OK(hwrt_tensor_copy_to_host(u, host, sizeof host));  /* waits for u's writer itself */
    EXPECT(host[0] == 5.0f);
    OK(hwrt_op_fill(t, 6.0, a));
    OK(hwrt_device_synchronize());
    OK(hwrt_op_add(out, t, t, b));
    OK(hwrt_op_fill(u, 7.0, a));
    OK(hwrt_event_record(e, a));
    OK(hwrt_event_synchronize(e));
    OK(hwrt_memcpy(host, tdata, sizeof host, HWRT_MEMCPY_DEVICE_TO_HOST)); /* after device sync */
    OK(hwrt_op_mul(out, u, u, b));
    OK(hwrt_stream_synchronize(b));
    expect_reports(&seen, 0, "", "");

    TEST_CASE("planted: read after write across streams");
    hold(a);
    OK(hwrt_op_fill(t, 8.0, a));
    OK(hwrt_op_add(out, t, u, b));                       /* no event: hazard */
    expect_reports(&seen, 1, "cross-stream hazard (read after write): Add", "that Fill");
    release(b);

    TEST_CASE("planted: write after write, write after read");
    hold(a);
    OK(hwrt_op_fill(t, 9.0, a));
    OK(hwrt_op_fill(t, 10.0, b));
    expect_reports(&seen, 1, "(write after write): Fill", "that Fill");
    release(b);
    hold(b);
    OK(hwrt_op_relu(out, u, a));                         /* a reads u */
    OK(hwrt_op_fill(u, 1.0, b));                         /* b overwrites it unordered */
    expect_reports(&seen, 1, "(write after read): Fill", "that Relu");
    release(a);

    TEST_CASE("planted: host read of data still being produced");
    hold(a);
    OK(hwrt_op_fill(t, 11.0, a));
    OK(hwrt_memcpy(host, tdata, sizeof host, HWRT_MEMCPY_DEVICE_TO_HOST));
    expect_reports(&seen, 1, "host read of unsynchronized device data: hwrt_memcpy (MemcpyDtoH",
                   "that Fill");
    EXPECT(strstr(last, "hwrt_tensor_copy_to_host orders itself") != NULL);
    EXPECT(host[0] != 11.0f);                            /* and it really was stale */
    release(b);

    TEST_CASE("graph replay is checked node by node");
    hwrt_graph g;
    OK(hwrt_stream_begin_capture(a));
    OK(hwrt_op_scale(t, u, 2.0, a));
    OK(hwrt_stream_end_capture(a, &g));
    expect_reports(&seen, 0, "", "");                    /* capturing ran nothing */
    OK(hwrt_graph_launch(g, a));
    OK(hwrt_event_record(e, a));
    OK(hwrt_stream_wait_event(b, e));
    OK(hwrt_op_relu(out, t, b));
    expect_reports(&seen, 0, "", "");
    OK(hwrt_stream_synchronize(b));                      /* the replay may write t again */
    hold(a);
    OK(hwrt_graph_launch(g, a));
    OK(hwrt_op_relu(out, t, b));
    expect_reports(&seen, 1, "(read after write): Relu", "that Scale");
    release(b);
    OK(hwrt_graph_destroy(g));

    TEST_CASE("correct: destroyed stream, reused blocks");
    hwrt_stream c;
    OK(hwrt_stream_create(&c, 0));
    OK(hwrt_op_fill(t, 12.0, c));
    OK(hwrt_stream_destroy(c));                          /* synchronizes c */
    OK(hwrt_op_relu(out, t, b));
    for (int i = 0; i < 4; i++) {                        /* same size: the block comes back */
        hwrt_tensor v = mk();
        OK(hwrt_op_fill(v, (double)i, i % 2 ? a : b));
        OK(hwrt_tensor_release(v));
    }
    expect_reports(&seen, 0, "", "");

    TEST_CASE("off: nothing is tracked");
    OK(hwrt_set_check_sync(0));
    hold(a);
    OK(hwrt_op_fill(t, 13.0, a));
    OK(hwrt_op_relu(out, t, b));
    expect_reports(&seen, 0, "", "");
    release(b);
    FAILS(hwrt_diag_last_hazard(NULL, 4), HWRT_ERROR_INVALID_ARGUMENT, "buf is NULL");
    OK(hwrt_diag_reset());
    EXPECT(hwrt_diag_hazard_count() == 0);

    OK(hwrt_tensor_release(t));
    OK(hwrt_tensor_release(u));
    OK(hwrt_tensor_release(out));
    OK(hwrt_event_destroy(e));
    OK(hwrt_stream_destroy(a));
    OK(hwrt_stream_destroy(b));
    OK(hwrt_shutdown());
    return test_report();
}
