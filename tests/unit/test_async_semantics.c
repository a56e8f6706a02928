/* The async semantics are real: stream A is held behind a host-function gate, a write
 * to a tensor is queued on A, and a raw D2H copy on stream B (no event) sees the OLD
 * contents; hwrt_tensor_copy_to_host of the same tensor returns the NEW contents once
 * the gate opens; and an event wait makes the raw read on B correct. Deterministic: the
 * gate, not timing, decides the order. Runs on the backend named by argv[1] (default sim;
 * tests/opencl registers it for opencl too). */
#include "harness.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

enum { N = 4096 };

static atomic_int gate_open;
static atomic_int gate_entered;

static void gate(void *arg)
{
    (void)arg;
    atomic_store(&gate_entered, 1);
    while (!atomic_load(&gate_open)) usleep(100);
}

static const char *backend = "sim";

typedef struct { hwrt_tensor t; float *out; hwrt_status st; atomic_int done; } reader;

static void *read_tensor(void *arg)
{
    reader *r = arg;
    OK(hwrt_set_device(backend, 0));
    r->st = hwrt_tensor_copy_to_host(r->t, r->out, N * sizeof(float));
    atomic_store(&r->done, 1);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1) backend = argv[1];
    TEST_CASE("async");
    OK(hwrt_set_device(backend, 0));
    static float old_vals[N], host[N], got[N];
    for (int i = 0; i < N; i++) old_vals[i] = (float)i;
    hwrt_tensor t;
    int64_t shape[1] = {N};
    OK(hwrt_tensor_from_host(&t, HWRT_FLOAT32, 1, shape, old_vals));
    void *dptr;
    OK(hwrt_tensor_data(t, &dptr));

    hwrt_stream a, b;
    OK(hwrt_stream_create(&a, 0));
    OK(hwrt_stream_create(&b, 0));
    float *pinned;
    OK(hwrt_host_alloc((void **)&pinned, N * sizeof(float), HWRT_HOST_PINNED));

    /* A: gate, then overwrite t with 7.0 */
    OK(hwrt_launch_host_func(a, gate, NULL));
    OK(hwrt_op_fill(t, 7.0, a));
    while (!atomic_load(&gate_entered)) usleep(50);
    EXPECT(hwrt_stream_query(a) == HWRT_ERROR_NOT_READY);

    /* B: raw read without any ordering: must see the old contents */
    OK(hwrt_memcpy_async(pinned, dptr, N * sizeof(float), HWRT_MEMCPY_DEVICE_TO_HOST, b));
    OK(hwrt_stream_synchronize(b));
    EXPECT(memcmp(pinned, old_vals, sizeof old_vals) == 0);
    EXPECT(hwrt_stream_query(a) == HWRT_ERROR_NOT_READY);

    /* copy_to_host is ordered after the writer: it blocks until the gate opens */
    reader r = {.t = t, .out = got};
    pthread_t th;
    pthread_create(&th, NULL, read_tensor, &r);
    usleep(20000);
    EXPECT(atomic_load(&r.done) == 0);          /* still waiting behind the gate */
    atomic_store(&gate_open, 1);
    pthread_join(th, NULL);
    OK(r.st);
    int all7 = 1;
    for (int i = 0; i < N; i++) all7 &= got[i] == 7.0f;
    EXPECT(all7);

    /* an event wait makes the raw read on B correct */
    atomic_store(&gate_open, 0);
    atomic_store(&gate_entered, 0);
    hwrt_event ev;
    OK(hwrt_event_create(&ev, HWRT_EVENT_DEFAULT));
    OK(hwrt_launch_host_func(a, gate, NULL));
    OK(hwrt_op_fill(t, 9.0, a));
    OK(hwrt_event_record(ev, a));
    OK(hwrt_stream_wait_event(b, ev));
    OK(hwrt_memcpy_async(pinned, dptr, N * sizeof(float), HWRT_MEMCPY_DEVICE_TO_HOST, b));
    while (!atomic_load(&gate_entered)) usleep(50);
    EXPECT(hwrt_stream_query(b) == HWRT_ERROR_NOT_READY);   /* B waits for A's event */
    EXPECT(hwrt_event_query(ev) == HWRT_ERROR_NOT_READY);
    atomic_store(&gate_open, 1);
    OK(hwrt_stream_synchronize(b));
    int all9 = 1;
    for (int i = 0; i < N; i++) all9 &= pinned[i] == 9.0f;
    EXPECT(all9);
    OK(hwrt_event_query(ev));

    (void)host;
    OK(hwrt_event_destroy(ev));
    OK(hwrt_host_free(pinned));
    OK(hwrt_stream_destroy(a));
    OK(hwrt_stream_destroy(b));
    OK(hwrt_tensor_release(t));
    OK(hwrt_shutdown());
    return test_report();
}
