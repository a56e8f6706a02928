/* A stream destroyed after it waited for an event must not stay on the simulated
 * device's blocked list: the next kick (any event reached anywhere) would lock and
 * advance freed memory. The list keeps a stream whose WAIT was satisfied between its two
 * looks at the event (a record reached while the wait was being queued), so the test
 * races records against waits many times, destroying the waiting stream each round, while
 * another thread keeps kicking. Found by the API fuzzer under ASan; run under ASan (make
 * test) a leftover entry is a heap-use-after-free report; without it, a hang or a crash. */
#include "harness.h"

#include <pthread.h>
#include <time.h>

static _Atomic int stop;

static void spin_fn(void *arg)
{
    unsigned n = (unsigned)(uintptr_t)arg;
    for (volatile unsigned i = 0; i < n; i++) {}
}

/* Keeps events being reached (each reach kicks the blocked list). */
static void *kicker(void *arg)
{
    (void)arg;
    hwrt_stream s;
    hwrt_event e;
    if (hwrt_stream_create(&s, 0) != HWRT_SUCCESS || hwrt_event_create(&e, 0) != HWRT_SUCCESS)
        return NULL;
    while (!atomic_load(&stop)) {
        hwrt_event_record(e, s);
        hwrt_stream_wait_event(s, e);
        hwrt_stream_synchronize(s);
    }
    hwrt_event_destroy(e);
    hwrt_stream_destroy(s);
    return NULL;
}

static void *racer(void *arg)
{
    int rounds = (int)(intptr_t)arg;
    hwrt_stream a;
    hwrt_event e;
    OK(hwrt_stream_create(&a, 0));
    OK(hwrt_event_create(&e, 0));
    for (int i = 0; i < rounds; i++) {
        hwrt_stream b;
        OK(hwrt_stream_create(&b, 0));
        /* the record is reached on an engine thread at a varying moment, close to the
         * moment the wait below is queued */
        OK(hwrt_launch_host_func(a, spin_fn, (void *)(uintptr_t)((i * 37) % 400)));
        OK(hwrt_event_record(e, a));
        OK(hwrt_stream_wait_event(b, e));
        OK(hwrt_stream_destroy(b));          /* synchronizes b, then frees it */
    }
    OK(hwrt_stream_synchronize(a));
    OK(hwrt_event_destroy(e));
    OK(hwrt_stream_destroy(a));
    return NULL;
}

int main(void)
{
    TEST_CASE("destroyed_stream_leaves_blocked_list");
    const char *scale = getenv("HWRT_STRESS_SCALE");
    double f = scale ? atof(scale) : 1.0;
    int rounds = (int)(20000 * (f > 0 ? f : 1.0));
    OK(hwrt_set_device("sim", 0));
    pthread_t k, r[2];
    pthread_create(&k, NULL, kicker, NULL);
    for (int i = 0; i < 2; i++) pthread_create(&r[i], NULL, racer, (void *)(intptr_t)rounds);
    for (int i = 0; i < 2; i++) pthread_join(r[i], NULL);
    atomic_store(&stop, 1);
    pthread_join(k, NULL);
    OK(hwrt_device_synchronize());
    OK(hwrt_shutdown());
    return test_report();
}
