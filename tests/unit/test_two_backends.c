/* Two backends in one process at once (issue 18 item 7): one thread on sim device 0,
 * another on opencl device 0 (PoCL), each with its own current backend, pool and
 * streams. Both run the same rounds concurrently: copies there and back, an op, events
 * and their elapsed time, and the memory figures of their own device, which the other
 * thread's allocations must not move. A pointer or an event of one backend's device
 * used on the other's is refused. Needs PoCL: without it the test fails with the reason
 * (label opencl). */
#include "harness.h"

#include <pthread.h>

#define ROUNDS 6
#define N 4096                          /* floats per buffer */

typedef struct {
    const char *backend;
    float base;                         /* the thread's own data pattern */
    size_t extra;                       /* bytes it allocates to move its figures */
    void *dptr;                         /* a live device block, for the other thread */
    hwrt_event ev;                      /* a recorded event, for the other thread */
} worker;

static worker W[2];
static pthread_barrier_t bar;

static void one_round(worker *w, int round, hwrt_stream s)
{
    static _Thread_local float host[N], back[N];
    for (int i = 0; i < N; i++) host[i] = w->base + (float)(round * N + i);
    /* copies: H2D, D2D, D2H on the thread's stream */
    void *a = NULL, *b = NULL;
    OK(hwrt_malloc(&a, N * sizeof(float)));
    OK(hwrt_malloc(&b, N * sizeof(float)));
    OK(hwrt_memcpy_async(a, host, sizeof host, HWRT_MEMCPY_HOST_TO_DEVICE, s));
    OK(hwrt_memcpy_async(b, a, sizeof host, HWRT_MEMCPY_DEVICE_TO_DEVICE, s));
    OK(hwrt_memcpy_async(back, b, sizeof back, HWRT_MEMCPY_DEVICE_TO_HOST, s));
    OK(hwrt_stream_synchronize(s));
    EXPECT(!memcmp(back, host, sizeof host));
    OK(hwrt_free(a));
    OK(hwrt_free(b));

    /* an op between two events: out = x * 2 + x */
    int64_t shape[1] = {N};
    hwrt_tensor x = NULL, y = NULL, out = NULL;
    OK(hwrt_tensor_from_host(&x, HWRT_FLOAT32, 1, shape, host));
    OK(hwrt_tensor_empty(&y, HWRT_FLOAT32, 1, shape));
    OK(hwrt_tensor_empty(&out, HWRT_FLOAT32, 1, shape));
    hwrt_event e0 = NULL, e1 = NULL;
    OK(hwrt_event_create(&e0, HWRT_EVENT_DEFAULT));
    OK(hwrt_event_create(&e1, HWRT_EVENT_DEFAULT));
    OK(hwrt_event_record(e0, s));
    OK(hwrt_op_scale(y, x, 2.0, s));
    OK(hwrt_op_add(out, y, x, s));
    OK(hwrt_event_record(e1, s));
    OK(hwrt_event_synchronize(e1));
    EXPECT(hwrt_event_query(e1) == HWRT_SUCCESS);
    float ms = -1;
    OK(hwrt_event_elapsed_ms(&ms, e0, e1));
    EXPECT(ms >= 0);
    OK(hwrt_tensor_copy_to_host(out, back, sizeof back));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += back[i] != host[i] * 3.0f;
    EXPECT(bad == 0);
    int tdev = -1;
    OK(hwrt_tensor_device(out, &tdev));
    EXPECT(tdev == 0);
    OK(hwrt_event_destroy(e0));
    OK(hwrt_event_destroy(e1));
    OK(hwrt_tensor_release(x));
    OK(hwrt_tensor_release(y));
    OK(hwrt_tensor_release(out));
}

static void *run(void *arg)
{
    worker *w = arg;
    OK(hwrt_set_device(w->backend, 0));
    EXPECT(!strcmp(hwrt_current_backend(), w->backend));
    int dev = -1;
    OK(hwrt_get_device(&dev));
    EXPECT(dev == 0);
    hwrt_device_props p;
    OK(hwrt_get_device_props(0, &p));
    EXPECT(!strcmp(p.backend, w->backend));
    hwrt_stream s = NULL;
    OK(hwrt_stream_create(&s, 0));
    int sdev = -1;
    OK(hwrt_stream_device(s, &sdev));
    EXPECT(sdev == 0);
    pthread_barrier_wait(&bar);          /* both backends are live from here on */

    for (int r = 0; r < ROUNDS; r++) one_round(w, r, s);

    /* memory figures: this device's pool only; the other thread allocates meanwhile */
    hwrt_mem_stats before, after;
    OK(hwrt_memory_stats(0, &before));
    void *big = NULL;
    OK(hwrt_malloc(&big, w->extra));
    OK(hwrt_memory_stats(0, &after));
    EXPECT(after.allocated_bytes.current - before.allocated_bytes.current == (int64_t)w->extra);
    hwrt_memory_info mi;
    OK(hwrt_get_memory_info(0, &mi));
    EXPECT(mi.allocated >= w->extra && mi.total > 0);

    /* hand a block and a recorded event to the other thread */
    w->dptr = big;
    OK(hwrt_event_create(&w->ev, HWRT_EVENT_DEFAULT));
    OK(hwrt_event_record(w->ev, s));
    OK(hwrt_event_synchronize(w->ev));
    pthread_barrier_wait(&bar);
    worker *o = &W[w == &W[0]];
    float h[16];
    /* the other backend's memory is not this device's: refused, nothing queued */
    FAILS(hwrt_memcpy_async(h, o->dptr, sizeof h, HWRT_MEMCPY_DEVICE_TO_HOST, s),
          HWRT_ERROR_INVALID_ARGUMENT, o == &W[1] ?
          "on opencl device 0 but the stream is on sim device 0" :
          "on sim device 0 but the stream is on opencl device 0");
    FAILS(hwrt_event_record(o->ev, s), HWRT_ERROR_INVALID_ARGUMENT, o == &W[1] ?
          "belongs to opencl device 0 but the stream to sim device 0" :
          "belongs to sim device 0 but the stream to opencl device 0");
    float ms;
    FAILS(hwrt_event_elapsed_ms(&ms, w->ev, o->ev), HWRT_ERROR_INVALID_ARGUMENT,
          "do not compare");
    OK(hwrt_device_synchronize());
    pthread_barrier_wait(&bar);
    OK(hwrt_event_destroy(w->ev));
    OK(hwrt_free(big));
    OK(hwrt_stream_destroy(s));
    return NULL;
}

int main(void)
{
    hwrt_backend_desc d;
    OK(hwrt_backend_info("opencl", &d));
    if (!d.available) {
        fprintf(stderr, "FAIL: the opencl backend is unavailable: %s\n", d.reason);
        return 1;
    }
    W[0] = (worker){.backend = "sim", .base = 1.0f, .extra = (size_t)3 << 20};
    W[1] = (worker){.backend = "opencl", .base = -5000.0f, .extra = (size_t)5 << 20};
    pthread_barrier_init(&bar, NULL, 2);
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, run, &W[i]);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&bar);

    /* the main thread never chose: it is on the first backend selected, device 0 */
    const char *first = hwrt_current_backend();
    EXPECT(!strcmp(first, "sim") || !strcmp(first, "opencl"));
    hwrt_mem_stats st;
    OK(hwrt_memory_stats(0, &st));
    EXPECT(st.allocated_bytes.current == 0);
    OK(hwrt_shutdown());
    EXPECT(!strcmp(hwrt_current_backend(), ""));
    printf("%d passed, %d failed\n", t_passed, t_failed);
    return t_failed ? 1 : 0;
}
