/* Graph capture and replay: replay results equal eager results (and follow new inputs),
 * capture runs nothing, every host sync or host read inside a capture is refused with a
 * sentence naming the call, the stream stays usable after such errors, replays on another
 * stream stay ordered for hwrt_tensor_copy_to_host, and freed inputs are caught. */
#include "harness.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

enum { R = 16, C = 16, N = R * C };

static hwrt_tensor x, w, y, z, out;

static hwrt_tensor make(const float *v)
{
    hwrt_tensor t;
    int64_t shape[2] = {R, C};
    if (v) OK(hwrt_tensor_from_host(&t, HWRT_FLOAT32, 2, shape, v));
    else OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 2, shape));
    return t;
}

/* The program: out = relu(x @ w) * 0.5 + x */
static void program(hwrt_stream s)
{
    OK(hwrt_op_matmul(y, x, w, s));
    OK(hwrt_op_relu(y, y, s));
    OK(hwrt_op_scale(z, y, 0.5, s));
    OK(hwrt_op_add(out, z, x, s));
}

static int same(const float *a, const float *b)
{
    for (int i = 0; i < N; i++)
        if (fabsf(a[i] - b[i]) > 1e-4f * (1 + fabsf(a[i]))) return 0;
    return 1;
}

static atomic_int gate_open;
static void gate(void *arg) { (void)arg; while (!atomic_load(&gate_open)) usleep(100); }
static void *opener(void *arg) { (void)arg; usleep(30000); atomic_store(&gate_open, 1); return NULL; }

static void test_replay_equals_eager(hwrt_stream s)
{
    TEST_CASE("replay equals eager");
    static float xv[N], wv[N], eager[N], got[N], zeros[N];
    for (int i = 0; i < N; i++) { xv[i] = (float)(i % 7) - 3; wv[i] = (float)(i % 5) * 0.25f - 0.5f; }
    x = make(xv); w = make(wv); y = make(NULL); z = make(NULL); out = make(NULL);
    program(s);
    OK(hwrt_tensor_copy_to_host(out, eager, sizeof eager));

    OK(hwrt_op_fill(out, 0.0, s));
    OK(hwrt_stream_begin_capture(s));
    program(s);
    hwrt_graph g = NULL;
    OK(hwrt_stream_end_capture(s, &g));
    size_t nodes = 0;
    OK(hwrt_graph_node_count(g, &nodes));
    EXPECT(nodes == 4);
    OK(hwrt_tensor_copy_to_host(out, got, sizeof got));
    EXPECT(memcmp(got, zeros, sizeof zeros) == 0);      /* capturing ran nothing */

    OK(hwrt_graph_launch(g, s));
    OK(hwrt_tensor_copy_to_host(out, got, sizeof got));
    EXPECT(same(got, eager));

    /* new input, replay again: the graph reads the current contents */
    for (int i = 0; i < N; i++) xv[i] = (float)(i % 11) * 0.5f - 2;
    OK(hwrt_tensor_copy_from_host(x, xv, sizeof xv));
    OK(hwrt_graph_launch(g, s));
    OK(hwrt_tensor_copy_to_host(out, got, sizeof got));
    program(s);                                          /* eager on the same input */
    OK(hwrt_tensor_copy_to_host(out, eager, sizeof eager));
    EXPECT(same(got, eager));

    /* replay on another stream held behind a gate: copy_to_host must wait for it */
    TEST_CASE("replay on another stream stays ordered");
    hwrt_stream s2;
    OK(hwrt_stream_create(&s2, 0));
    OK(hwrt_op_fill(out, -1.0, s));
    OK(hwrt_stream_synchronize(s));          /* the replay on s2 overwrites it */
    OK(hwrt_launch_host_func(s2, gate, NULL));
    OK(hwrt_graph_launch(g, s2));
    pthread_t th;
    pthread_create(&th, NULL, opener, NULL);
    OK(hwrt_tensor_copy_to_host(out, got, sizeof got));
    pthread_join(th, NULL);
    EXPECT(same(got, eager));
    OK(hwrt_stream_destroy(s2));

    /* the graph keeps its tensors alive */
    TEST_CASE("graph retains tensors");
    OK(hwrt_tensor_release(y));
    OK(hwrt_graph_launch(g, s));
    OK(hwrt_stream_synchronize(s));
    OK(hwrt_graph_destroy(g));
    FAILS(hwrt_graph_launch(g, s), HWRT_ERROR_INVALID_HANDLE, "not a live graph");
    FAILS(hwrt_graph_destroy(g), HWRT_ERROR_INVALID_HANDLE, "not a live graph");
}

#define REFUSED(call, name) FAILS(call, HWRT_ERROR_NOT_PERMITTED, name " is not permitted while a graph is being captured")

static void test_forbidden_in_capture(hwrt_stream s)
{
    TEST_CASE("host sync in capture");
    static float host[N], got[N];
    hwrt_stream other;
    hwrt_event ev;
    OK(hwrt_stream_create(&other, 0));
    OK(hwrt_event_create(&ev, 0));
    OK(hwrt_event_record(ev, other));
    void *dbuf;
    OK(hwrt_malloc(&dbuf, sizeof host));

    OK(hwrt_stream_begin_capture(s));
    FAILS(hwrt_stream_begin_capture(s), HWRT_ERROR_NOT_PERMITTED, "already capturing");
    OK(hwrt_op_fill(out, 2.0, s));
    REFUSED(hwrt_tensor_copy_to_host(out, got, sizeof got), "hwrt_tensor_copy_to_host");
    EXPECT(strstr(hwrt_last_error(), "Move hwrt_tensor_copy_to_host outside the captured region"));
    REFUSED(hwrt_tensor_copy_from_host(x, host, sizeof host), "hwrt_tensor_copy_from_host");
    REFUSED(hwrt_memcpy(host, dbuf, sizeof host, HWRT_MEMCPY_DEVICE_TO_HOST), "hwrt_memcpy");
    REFUSED(hwrt_memcpy(dbuf, host, sizeof host, HWRT_MEMCPY_HOST_TO_DEVICE), "hwrt_memcpy");
    REFUSED(hwrt_stream_synchronize(s), "hwrt_stream_synchronize");
    REFUSED(hwrt_stream_synchronize(other), "hwrt_stream_synchronize");
    REFUSED(hwrt_device_synchronize(), "hwrt_device_synchronize");
    REFUSED(hwrt_event_synchronize(ev), "hwrt_event_synchronize");
    hwrt_tensor t2;
    int64_t shape[2] = {R, C};
    REFUSED(hwrt_tensor_from_host(&t2, HWRT_FLOAT32, 2, shape, host), "hwrt_tensor_from_host");
    FAILS(hwrt_memcpy_async(dbuf, host, sizeof host, HWRT_MEMCPY_HOST_TO_DEVICE, s),
          HWRT_ERROR_NOT_PERMITTED, "pageable");
    FAILS(hwrt_stream_destroy(s), HWRT_ERROR_NOT_PERMITTED, "capturing");
    /* event recorded in the capture: an eager stream cannot wait for it */
    OK(hwrt_event_record(ev, s));
    FAILS(hwrt_stream_wait_event(other, ev), HWRT_ERROR_NOT_PERMITTED, "recorded inside the graph");
    /* another event, recorded outside: waiting for it is allowed while the capture has a
     * record node (issue 25, seed 3004: the check's `&&` made `||` refused it) */
    hwrt_event ev2;
    OK(hwrt_event_create(&ev2, 0));
    OK(hwrt_event_record(ev2, other));
    OK(hwrt_stream_wait_event(other, ev2));
    OK(hwrt_event_destroy(ev2));
    OK(hwrt_op_scale(out, out, 3.0, s));                  /* the capture goes on */
    FAILS(hwrt_stream_end_capture(s, NULL), HWRT_ERROR_INVALID_ARGUMENT, "out is NULL");
    hwrt_graph g;
    OK(hwrt_stream_end_capture(s, &g));
    FAILS(hwrt_stream_end_capture(s, &g), HWRT_ERROR_NOT_PERMITTED, "not capturing");
    size_t nodes = 0;
    OK(hwrt_graph_node_count(g, &nodes));
    EXPECT(nodes == 3);                                   /* fill, record, scale */

    TEST_CASE("stream usable after capture errors");
    OK(hwrt_op_fill(out, 1.0, s));
    OK(hwrt_stream_synchronize(s));
    OK(hwrt_graph_launch(g, s));
    OK(hwrt_stream_wait_event(other, ev));                /* now a real record */
    OK(hwrt_tensor_copy_to_host(out, got, sizeof got));
    int all6 = 1;
    for (int i = 0; i < N; i++) all6 &= got[i] == 6.0f;
    EXPECT(all6);
    OK(hwrt_device_synchronize());
    OK(hwrt_graph_destroy(g));

    TEST_CASE("pinned copies are captured; freed buffers are caught");
    float *pin;
    OK(hwrt_host_alloc((void **)&pin, sizeof host, HWRT_HOST_PINNED));
    for (int i = 0; i < N; i++) pin[i] = (float)i;
    OK(hwrt_stream_begin_capture(s));
    OK(hwrt_memcpy_async(dbuf, pin, sizeof host, HWRT_MEMCPY_HOST_TO_DEVICE, s));
    OK(hwrt_memcpy_async(host, dbuf, sizeof host, HWRT_MEMCPY_DEVICE_TO_HOST, s) == HWRT_ERROR_NOT_PERMITTED
           ? HWRT_SUCCESS : HWRT_ERROR_INTERNAL);        /* pageable destination: refused */
    OK(hwrt_stream_end_capture(s, &g));
    OK(hwrt_graph_launch(g, s));
    OK(hwrt_stream_synchronize(s));          /* hwrt_memcpy runs on the default stream */
    OK(hwrt_memcpy(got, dbuf, sizeof got, HWRT_MEMCPY_DEVICE_TO_HOST));
    EXPECT(memcmp(got, pin, sizeof got) == 0);
    OK(hwrt_free(dbuf));
    FAILS(hwrt_graph_launch(g, s), HWRT_ERROR_INVALID_ARGUMENT, "was freed after capture");
    OK(hwrt_graph_destroy(g));
    OK(hwrt_host_free(pin));
    OK(hwrt_event_destroy(ev));
    OK(hwrt_stream_destroy(other));
}

static void test_misuse(hwrt_stream s)
{
    TEST_CASE("misuse");
    hwrt_graph g;
    FAILS(hwrt_stream_end_capture(s, &g), HWRT_ERROR_NOT_PERMITTED, "not capturing");
    FAILS(hwrt_graph_launch((hwrt_graph)(uintptr_t)0x1234, s), HWRT_ERROR_INVALID_HANDLE, "not a live graph");
    FAILS(hwrt_graph_launch(NULL, s), HWRT_ERROR_INVALID_HANDLE, "not a live graph");
    FAILS(hwrt_stream_begin_capture((hwrt_stream)(uintptr_t)0x99), HWRT_ERROR_INVALID_HANDLE, "not a live stream");
    /* empty capture, nested launch into a capture, launch on another device */
    OK(hwrt_stream_begin_capture(s));
    OK(hwrt_stream_end_capture(s, &g));
    size_t n = 1;
    OK(hwrt_graph_node_count(g, &n));
    EXPECT(n == 0);
    OK(hwrt_graph_launch(g, s));
    OK(hwrt_graph_destroy(g));

    OK(hwrt_stream_begin_capture(s));
    OK(hwrt_op_fill(out, 4.0, s));
    OK(hwrt_op_relu(out, out, s));
    OK(hwrt_stream_end_capture(s, &g));
    hwrt_graph outer;
    OK(hwrt_stream_begin_capture(s));
    OK(hwrt_graph_launch(g, s));
    OK(hwrt_graph_launch(g, s));
    OK(hwrt_stream_end_capture(s, &outer));
    OK(hwrt_graph_node_count(outer, &n));
    EXPECT(n == 4);
    OK(hwrt_graph_launch(outer, s));

    int count = 0;
    OK(hwrt_device_count("sim", &count));
    if (count >= 2) {
        OK(hwrt_set_device("sim", 1));
        hwrt_stream s1;
        OK(hwrt_stream_create(&s1, 0));
        FAILS(hwrt_graph_launch(g, s1), HWRT_ERROR_INVALID_ARGUMENT, "captured on device 0");
        OK(hwrt_stream_destroy(s1));
        OK(hwrt_set_device("sim", 0));
    }
    /* launch_blocking replays node by node and still gives the same result */
    OK(hwrt_set_config("launch_blocking", "1"));
    OK(hwrt_graph_launch(g, s));
    OK(hwrt_set_config("launch_blocking", "0"));
    float got[N];
    OK(hwrt_tensor_copy_to_host(out, got, sizeof got));
    EXPECT(got[0] == 4.0f && got[N - 1] == 4.0f);
    OK(hwrt_graph_destroy(g));
    /* events recorded only inside a capture time the replay */
    hwrt_event e1, e2;
    OK(hwrt_event_create(&e1, 0));
    OK(hwrt_event_create(&e2, 0));
    OK(hwrt_stream_begin_capture(s));
    OK(hwrt_event_record(e1, s));
    OK(hwrt_op_fill(out, 6.0, s));
    OK(hwrt_event_record(e2, s));
    OK(hwrt_stream_end_capture(s, &g));
    OK(hwrt_graph_launch(g, s));
    OK(hwrt_event_synchronize(e2));
    float ms = -1;
    OK(hwrt_event_elapsed_ms(&ms, e1, e2));
    EXPECT(ms >= 0);
    OK(hwrt_graph_destroy(g));
    OK(hwrt_event_destroy(e1));
    OK(hwrt_event_destroy(e2));
    /* a graph left undestroyed and a capture left open are cleaned up by shutdown */
    OK(hwrt_stream_begin_capture(s));
    OK(hwrt_op_fill(out, 5.0, s));
}

int main(void)
{
    OK(hwrt_set_device("sim", 0));
    hwrt_stream s;
    OK(hwrt_stream_create(&s, 0));
    test_replay_equals_eager(s);
    test_forbidden_in_capture(s);
    test_misuse(s);
    OK(hwrt_tensor_release(x));
    OK(hwrt_tensor_release(w));
    OK(hwrt_tensor_release(z));
    OK(hwrt_tensor_release(out));
    OK(hwrt_shutdown());
    /* and the library works again afterwards */
    OK(hwrt_set_device("sim", 0));
    OK(hwrt_stream_synchronize(NULL));
    OK(hwrt_shutdown());
    return test_report();
}
