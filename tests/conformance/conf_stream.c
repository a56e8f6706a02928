/* Streams and host functions: lifetime, handles, ordering within a stream, overlap
 * across streams, and the async semantics a program can observe (stale reads through
 * the wrong stream). */
#include "conf.h"

#include <pthread.h>

static void lifetime(void)
{
    CASE("stream lifetime");
    hwrt_stream s = NULL, hi = NULL;
    OK(hwrt_stream_create(&s, 0));
    OK(hwrt_stream_create(&hi, -1));                    /* priorities are accepted */
    EXPECT(s != NULL && hi != NULL && s != hi);
    OK(hwrt_stream_query(s));
    OK(hwrt_stream_synchronize(s));
    OK(hwrt_stream_synchronize(NULL));
    OK(hwrt_stream_query(NULL));
    int dev = -1;
    OK(hwrt_stream_device(s, &dev));
    EXPECT(dev == 0);
    FAILS(hwrt_stream_device(s, NULL), HWRT_ERROR_INVALID_ARGUMENT, "NULL");
    FAILS(hwrt_stream_create(NULL, 0), HWRT_ERROR_INVALID_ARGUMENT, "NULL");
    OK(hwrt_stream_destroy(hi));
    OK(hwrt_stream_destroy(s));
    /* stale, NULL and foreign handles */
    FAILS(hwrt_stream_destroy(s), HWRT_ERROR_INVALID_HANDLE, "");
    FAILS(hwrt_stream_synchronize(s), HWRT_ERROR_INVALID_HANDLE, "stream");
    FAILS(hwrt_stream_query(s), HWRT_ERROR_INVALID_HANDLE, "stream");
    FAILS(hwrt_stream_device(s, &dev), HWRT_ERROR_INVALID_HANDLE, "stream");
    FAILS(hwrt_stream_destroy(NULL), HWRT_ERROR_INVALID_HANDLE, "");
    FAILS(hwrt_stream_synchronize((hwrt_stream)(uintptr_t)0x1234), HWRT_ERROR_INVALID_HANDLE, "stream");
    FAILS(hwrt_stream_query((hwrt_stream)(uintptr_t)0xdeadbeef1), HWRT_ERROR_INVALID_HANDLE, "stream");
    hwrt_event e;
    OK(hwrt_event_create(&e, 0));
    FAILS(hwrt_stream_synchronize((hwrt_stream)(void *)e), HWRT_ERROR_INVALID_HANDLE, "stream");
    FAILS(hwrt_stream_destroy((hwrt_stream)(void *)e), HWRT_ERROR_INVALID_HANDLE, "");
    OK(hwrt_event_destroy(e));
    /* the default stream */
    hwrt_stream d = NULL;
    OK(hwrt_stream_default(&d));
    EXPECT(d != NULL);
    OK(hwrt_stream_synchronize(d));
    OK(hwrt_stream_device(d, &dev));
    EXPECT(dev == 0);
    FAILS(hwrt_stream_destroy(d), HWRT_ERROR_INVALID_HANDLE, "default");
    OK(hwrt_stream_synchronize(d));                     /* still alive */
    FAILS(hwrt_stream_default(NULL), HWRT_ERROR_INVALID_ARGUMENT, "NULL");
    if (c_ndev >= 2) {
        OK(hwrt_set_device(c_backend, 1));
        hwrt_stream d1, s1;
        OK(hwrt_stream_default(&d1));
        OK(hwrt_stream_create(&s1, 0));
        EXPECT(d1 != d);
        OK(hwrt_stream_device(d1, &dev));
        EXPECT(dev == 1);
        OK(hwrt_stream_device(s1, &dev));
        EXPECT(dev == 1);
        OK(hwrt_stream_destroy(s1));
        OK(hwrt_set_device(c_backend, 0));
    } else {
        unsupported("per-device default streams need 2 devices, backend %s has %d", c_backend,
                    c_ndev);
    }
}

typedef struct { int order[8]; int n; } trace;

static void note1(void *t) { trace *x = t; x->order[__atomic_fetch_add(&x->n, 1, __ATOMIC_SEQ_CST)] = 1; }
static void note2(void *t) { trace *x = t; x->order[__atomic_fetch_add(&x->n, 1, __ATOMIC_SEQ_CST)] = 2; }
static void note3(void *t) { trace *x = t; x->order[__atomic_fetch_add(&x->n, 1, __ATOMIC_SEQ_CST)] = 3; }

static void host_funcs(void)
{
    CASE("launch_host_func");
    hwrt_stream s;
    OK(hwrt_stream_create(&s, 0));
    trace t = {{0}, 0};
    void *d;
    OK(hwrt_malloc(&d, 1 << 20));
    OK(hwrt_launch_host_func(s, note1, &t));
    OK(hwrt_memset_async(d, 1, 1 << 20, s));
    OK(hwrt_launch_host_func(s, note2, &t));
    OK(hwrt_launch_host_func(NULL, note3, &t));         /* default stream too */
    OK(hwrt_stream_synchronize(NULL));
    OK(hwrt_stream_synchronize(s));
    EXPECT(t.n == 3);
    int pos1 = -1, pos2 = -1;
    for (int i = 0; i < t.n; i++) {
        if (t.order[i] == 1) pos1 = i;
        if (t.order[i] == 2) pos2 = i;
    }
    EXPECT(pos1 >= 0 && pos2 > pos1);                  /* in stream order */
    /* work queued after a host function waits for it to return */
    conf_gate g = {0};
    OK(hwrt_launch_host_func(s, conf_gate_fn, &g));
    OK(hwrt_memset_async(d, 2, 1 << 20, s));
    EXPECT(conf_gate_wait_entered(&g, 5000));
    conf_sleep_ms(5);
    EXPECT(hwrt_stream_query(s) == HWRT_ERROR_NOT_READY);
    conf_gate_open(&g);
    OK(hwrt_stream_synchronize(s));
    OK(hwrt_stream_query(s));
    FAILS(hwrt_launch_host_func(s, NULL, NULL), HWRT_ERROR_INVALID_ARGUMENT, "NULL");
    OK(hwrt_stream_destroy(s));
    FAILS(hwrt_launch_host_func(s, note1, &t), HWRT_ERROR_INVALID_HANDLE, "stream");
    OK(hwrt_free(d));
}

static int query_ok(void *s) { return hwrt_stream_query((hwrt_stream)s) == HWRT_SUCCESS; }

static void overlap(void)
{
    CASE("streams overlap");
    hwrt_stream a, b;
    OK(hwrt_stream_create(&a, 0));
    OK(hwrt_stream_create(&b, 0));
    int64_t shape[1] = {4096};
    hwrt_tensor t;
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    void *d;
    OK(hwrt_malloc(&d, 1 << 20));
    static unsigned char host[1 << 20];
    conf_gate g = {0};
    OK(hwrt_launch_host_func(a, conf_gate_fn, &g));     /* A is held */
    EXPECT(conf_gate_wait_entered(&g, 5000));
    OK(hwrt_op_fill(t, 3.0, b));                         /* compute on B */
    OK(hwrt_memcpy_async(d, host, sizeof host, HWRT_MEMCPY_HOST_TO_DEVICE, b));   /* copy on B */
    EXPECT(conf_wait_until(query_ok, b, 5000));          /* B finished while A is held */
    EXPECT(hwrt_stream_query(a) == HWRT_ERROR_NOT_READY);
    conf_gate_open(&g);
    OK(hwrt_stream_synchronize(a));
    OK(hwrt_stream_destroy(a));
    OK(hwrt_stream_destroy(b));
    OK(hwrt_tensor_release(t));
    OK(hwrt_free(d));
}

/* The deterministic async test: hold stream A behind a gate, queue a write on A,
 * read the buffer raw on stream B without an event: B sees the old contents; the
 * tensor's copy_to_host (ordered after its writers) returns the new ones once the gate
 * opens; an event wait makes the raw read on B correct. */
typedef struct { hwrt_tensor t; float *out; size_t bytes; hwrt_status st; volatile int done; } reader;

static void *read_tensor(void *arg)
{
    reader *r = arg;
    hwrt_set_device(c_backend, 0);
    r->st = hwrt_tensor_copy_to_host(r->t, r->out, r->bytes);
    __atomic_store_n(&r->done, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

static void stale_reads(void)
{
    CASE("async semantics");
    enum { N = 4096 };
    static float old_vals[N], got[N];
    for (int i = 0; i < N; i++) old_vals[i] = (float)i;
    int64_t shape[1] = {N};
    hwrt_tensor t;
    OK(hwrt_tensor_from_host(&t, HWRT_FLOAT32, 1, shape, old_vals));
    void *dptr;
    OK(hwrt_tensor_data(t, &dptr));
    hwrt_stream a, b;
    OK(hwrt_stream_create(&a, 0));
    OK(hwrt_stream_create(&b, 0));
    float *pinned;
    OK(hwrt_host_alloc((void **)&pinned, sizeof got, HWRT_HOST_PINNED));
    conf_gate g = {0};
    OK(hwrt_launch_host_func(a, conf_gate_fn, &g));
    OK(hwrt_op_fill(t, 7.0, a));
    EXPECT(conf_gate_wait_entered(&g, 5000));
    OK(hwrt_memcpy_async(pinned, dptr, sizeof got, HWRT_MEMCPY_DEVICE_TO_HOST, b));
    OK(hwrt_stream_synchronize(b));
    EXPECT(memcmp(pinned, old_vals, sizeof got) == 0);      /* stale: no ordering with A */
    reader r = {t, got, sizeof got, HWRT_SUCCESS, 0};
    pthread_t th;
    pthread_create(&th, NULL, read_tensor, &r);
    conf_sleep_ms(20);
    EXPECT(!__atomic_load_n(&r.done, __ATOMIC_SEQ_CST));    /* waits behind the gate */
    conf_gate_open(&g);
    pthread_join(th, NULL);
    OK(r.st);
    int all7 = 1;
    for (int i = 0; i < N; i++) all7 &= got[i] == 7.0f;
    EXPECT(all7);
    /* with an event wait, B's raw read is correct */
    conf_gate g2 = {0};
    hwrt_event ev;
    OK(hwrt_event_create(&ev, HWRT_EVENT_DISABLE_TIMING));
    OK(hwrt_launch_host_func(a, conf_gate_fn, &g2));
    OK(hwrt_op_fill(t, 9.0, a));
    OK(hwrt_event_record(ev, a));
    OK(hwrt_stream_wait_event(b, ev));
    OK(hwrt_memcpy_async(pinned, dptr, sizeof got, HWRT_MEMCPY_DEVICE_TO_HOST, b));
    EXPECT(conf_gate_wait_entered(&g2, 5000));
    EXPECT(hwrt_stream_query(b) == HWRT_ERROR_NOT_READY);
    conf_gate_open(&g2);
    OK(hwrt_stream_synchronize(b));
    int all9 = 1;
    for (int i = 0; i < N; i++) all9 &= pinned[i] == 9.0f;
    EXPECT(all9);
    OK(hwrt_event_destroy(ev));
    OK(hwrt_host_free(pinned));
    OK(hwrt_stream_destroy(a));
    OK(hwrt_stream_destroy(b));
    OK(hwrt_tensor_release(t));
}

void conf_stream(void)
{
    lifetime();
    host_funcs();
    overlap();
    stale_reads();
}
