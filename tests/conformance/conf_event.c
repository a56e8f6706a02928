/* Events: record, query, synchronize, wait across streams, device-side elapsed time,
 * and every misuse (flags, never recorded, timing disabled, stale handles, devices). */
#include "conf.h"

#include <math.h>

static void sleep_fn(void *ms) { conf_sleep_ms(*(int *)ms); }

static void basics(void)
{
    CASE("event basics");
    hwrt_event e, nt;
    OK(hwrt_event_create(&e, HWRT_EVENT_DEFAULT));
    OK(hwrt_event_create(&nt, HWRT_EVENT_DISABLE_TIMING));
    OK(hwrt_event_query(e));                           /* never recorded: complete */
    OK(hwrt_event_synchronize(e));
    FAILS(hwrt_event_create(NULL, 0), HWRT_ERROR_INVALID_ARGUMENT, "NULL");
    hwrt_event bad;
    FAILS(hwrt_event_create(&bad, 0x8), HWRT_ERROR_INVALID_ARGUMENT, "flags");
    hwrt_stream s;
    OK(hwrt_stream_create(&s, 0));
    conf_gate g = {0};
    OK(hwrt_launch_host_func(s, conf_gate_fn, &g));
    OK(hwrt_event_record(e, s));
    OK(hwrt_event_record(nt, NULL));
    EXPECT(conf_gate_wait_entered(&g, 5000));
    EXPECT(hwrt_event_query(e) == HWRT_ERROR_NOT_READY);
    conf_gate_open(&g);
    OK(hwrt_event_synchronize(e));
    OK(hwrt_event_query(e));
    OK(hwrt_event_synchronize(nt));
    /* re-recording: the event tracks its latest record */
    conf_gate g2 = {0};
    OK(hwrt_launch_host_func(s, conf_gate_fn, &g2));
    OK(hwrt_event_record(e, s));
    EXPECT(conf_gate_wait_entered(&g2, 5000));
    EXPECT(hwrt_event_query(e) == HWRT_ERROR_NOT_READY);
    conf_gate_open(&g2);
    OK(hwrt_event_synchronize(e));
    OK(hwrt_stream_destroy(s));
    FAILS(hwrt_event_record(e, s), HWRT_ERROR_INVALID_HANDLE, "stream");
    FAILS(hwrt_stream_wait_event(s, e), HWRT_ERROR_INVALID_HANDLE, "stream");
    OK(hwrt_event_destroy(e));
    OK(hwrt_event_destroy(nt));
    /* stale and foreign event handles */
    float ms;
    FAILS(hwrt_event_destroy(e), HWRT_ERROR_INVALID_HANDLE, "");
    FAILS(hwrt_event_query(e), HWRT_ERROR_INVALID_HANDLE, "event");
    FAILS(hwrt_event_synchronize(e), HWRT_ERROR_INVALID_HANDLE, "event");
    FAILS(hwrt_event_record(e, NULL), HWRT_ERROR_INVALID_HANDLE, "event");
    FAILS(hwrt_stream_wait_event(NULL, e), HWRT_ERROR_INVALID_HANDLE, "event");
    FAILS(hwrt_event_elapsed_ms(&ms, e, e), HWRT_ERROR_INVALID_HANDLE, "event");
    FAILS(hwrt_event_query(NULL), HWRT_ERROR_INVALID_HANDLE, "event");
    FAILS(hwrt_event_destroy(NULL), HWRT_ERROR_INVALID_HANDLE, "");
    hwrt_stream ds;
    OK(hwrt_stream_default(&ds));
    FAILS(hwrt_event_query((hwrt_event)(void *)ds), HWRT_ERROR_INVALID_HANDLE, "event");
}

static void elapsed(void)
{
    CASE("event elapsed time");
    hwrt_event a, b, nt, never;
    OK(hwrt_event_create(&a, 0));
    OK(hwrt_event_create(&b, 0));
    OK(hwrt_event_create(&nt, HWRT_EVENT_DISABLE_TIMING));
    OK(hwrt_event_create(&never, 0));
    hwrt_stream s;
    OK(hwrt_stream_create(&s, 0));
    static int ms30 = 30;
    conf_gate g = {0};
    OK(hwrt_event_record(a, s));
    OK(hwrt_launch_host_func(s, conf_gate_fn, &g));
    OK(hwrt_launch_host_func(s, sleep_fn, &ms30));
    OK(hwrt_event_record(b, s));
    OK(hwrt_event_record(nt, s));
    float ms = -1;
    EXPECT(conf_gate_wait_entered(&g, 5000));
    FAILS(hwrt_event_elapsed_ms(&ms, a, b), HWRT_ERROR_NOT_READY, "");   /* b is pending */
    conf_gate_open(&g);
    OK(hwrt_event_synchronize(b));
    OK(hwrt_event_elapsed_ms(&ms, a, b));
    EXPECT(ms >= 25.0f && ms < 5000.0f);
    float back = 0;
    OK(hwrt_event_elapsed_ms(&back, b, a));             /* reversed: same magnitude */
    EXPECT(fabsf(back) >= 25.0f && fabsf(back) < 5000.0f);
    float zero = -1;
    OK(hwrt_event_elapsed_ms(&zero, a, a));
    EXPECT(zero == 0.0f);
    FAILS(hwrt_event_elapsed_ms(NULL, a, b), HWRT_ERROR_INVALID_ARGUMENT, "NULL");
    FAILS(hwrt_event_elapsed_ms(&ms, a, never), HWRT_ERROR_INVALID_ARGUMENT, "never recorded");
    FAILS(hwrt_event_elapsed_ms(&ms, never, b), HWRT_ERROR_INVALID_ARGUMENT, "never recorded");
    FAILS(hwrt_event_elapsed_ms(&ms, a, nt), HWRT_ERROR_INVALID_ARGUMENT, "DISABLE_TIMING");
    OK(hwrt_stream_destroy(s));
    OK(hwrt_event_destroy(a));
    OK(hwrt_event_destroy(b));
    OK(hwrt_event_destroy(nt));
    OK(hwrt_event_destroy(never));
}

static void waits(void)
{
    CASE("stream_wait_event");
    hwrt_stream a, b;
    OK(hwrt_stream_create(&a, 0));
    OK(hwrt_stream_create(&b, 0));
    hwrt_event e;
    OK(hwrt_event_create(&e, HWRT_EVENT_DISABLE_TIMING));
    OK(hwrt_stream_wait_event(b, e));                  /* never recorded: no wait */
    OK(hwrt_stream_synchronize(b));
    conf_gate g = {0};
    OK(hwrt_launch_host_func(a, conf_gate_fn, &g));
    OK(hwrt_event_record(e, a));
    OK(hwrt_stream_wait_event(b, e));
    void *d;
    OK(hwrt_malloc(&d, 4096));
    OK(hwrt_memset_async(d, 1, 4096, b));
    EXPECT(conf_gate_wait_entered(&g, 5000));
    conf_sleep_ms(5);
    EXPECT(hwrt_stream_query(b) == HWRT_ERROR_NOT_READY);
    /* destroying the event does not release the pending wait early or crash */
    OK(hwrt_event_destroy(e));
    conf_sleep_ms(5);
    EXPECT(hwrt_stream_query(b) == HWRT_ERROR_NOT_READY);
    conf_gate_open(&g);
    OK(hwrt_stream_synchronize(b));
    OK(hwrt_stream_query(a));
    OK(hwrt_free(d));
    OK(hwrt_stream_destroy(a));
    OK(hwrt_stream_destroy(b));
}

static void cross_device(void)
{
    CASE("events across devices");
    if (c_ndev < 2) {
        unsupported("cross-device events need 2 devices, backend %s has %d", c_backend, c_ndev);
        return;
    }
    hwrt_event e0, e1;
    OK(hwrt_event_create(&e0, 0));
    OK(hwrt_event_record(e0, NULL));
    OK(hwrt_set_device(c_backend, 1));
    OK(hwrt_event_create(&e1, 0));
    hwrt_stream s1;
    OK(hwrt_stream_create(&s1, 0));
    FAILS(hwrt_event_record(e0, s1), HWRT_ERROR_INVALID_ARGUMENT, "device 0");
    OK(hwrt_event_record(e1, s1));
    hwrt_status st = hwrt_stream_wait_event(s1, e0);   /* a wait across devices */
    if (st == HWRT_ERROR_NOT_SUPPORTED)
        unsupported("waiting on another device's event: %s", hwrt_last_error());
    else
        OK(st);
    OK(hwrt_stream_synchronize(s1));
    OK(hwrt_event_synchronize(e0));
    float ms;
    FAILS(hwrt_event_elapsed_ms(&ms, e0, e1), HWRT_ERROR_INVALID_ARGUMENT, "device");
    OK(hwrt_stream_destroy(s1));
    OK(hwrt_event_destroy(e1));
    OK(hwrt_set_device(c_backend, 0));
    OK(hwrt_event_destroy(e0));
}

void conf_event(void)
{
    basics();
    elapsed();
    waits();
    cross_device();
}
