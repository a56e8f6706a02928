/* The device-wide synchronize of a backend without one (sim, opencl): device_ops.c walks
 * the device's live backend streams, pinned, while other threads create and destroy
 * streams. A stream destroyed while a synchronize holds it is finished by that
 * synchronize; every synchronize returns only after the work queued before it on every
 * stream of the device is done. Run under ASan and TSan (label concurrency). */
#include "harness.h"

#include <pthread.h>

#define ITERS 300
#define N 1024

static _Atomic int stop;

/* Streams come and go, each with work queued and a value checked after destroy. */
static void *churn(void *arg)
{
    (void)arg;
    OK(hwrt_set_device("sim", 0));
    static _Thread_local float h[N];
    for (int i = 0; i < ITERS; i++) {
        hwrt_stream s = NULL;
        OK(hwrt_stream_create(&s, 0));
        int64_t shape[1] = {N};
        hwrt_tensor t = NULL;
        OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
        OK(hwrt_op_fill(t, (double)i, s));
        OK(hwrt_stream_destroy(s));          /* its work is done when this returns */
        OK(hwrt_tensor_copy_to_host(t, h, sizeof h));
        EXPECT(h[0] == (float)i && h[N - 1] == (float)i);
        OK(hwrt_tensor_release(t));
    }
    return NULL;
}

/* A device synchronize covers the fill queued before it on another stream. */
static void *syncer(void *arg)
{
    (void)arg;
    OK(hwrt_set_device("sim", 0));
    hwrt_stream s = NULL;
    OK(hwrt_stream_create(&s, 0));
    void *d = NULL;
    OK(hwrt_malloc(&d, N * sizeof(float)));
    /* a long op on this (older, so later listed) stream keeps each synchronize holding
     * the churned streams pinned while their owners destroy them */
    int64_t big[1] = {1 << 21};
    hwrt_tensor slow = NULL;
    OK(hwrt_tensor_empty(&slow, HWRT_FLOAT32, 1, big));
    static _Thread_local float h[N];
    int rounds = 0;
    while (!atomic_load(&stop)) {
        OK(hwrt_op_fill(slow, 1.0, s));
        OK(hwrt_memset_async(d, rounds & 0x7f, N * sizeof(float), s));
        OK(hwrt_device_synchronize());
        /* the memset is done: a raw read (no stream ordering) sees it */
        OK(hwrt_memcpy(h, d, sizeof h, HWRT_MEMCPY_DEVICE_TO_HOST));
        unsigned char b = (unsigned char)(rounds & 0x7f);
        EXPECT(((unsigned char *)h)[0] == b && ((unsigned char *)h)[sizeof h - 1] == b);
        rounds++;
    }
    EXPECT(rounds > 0);
    OK(hwrt_tensor_release(slow));
    OK(hwrt_free(d));
    OK(hwrt_stream_destroy(s));
    return NULL;
}

int main(void)
{
    OK(hwrt_set_device("sim", 0));
    pthread_t c[2], y[2];
    for (int i = 0; i < 2; i++) pthread_create(&y[i], NULL, syncer, NULL);
    for (int i = 0; i < 2; i++) pthread_create(&c[i], NULL, churn, NULL);
    for (int i = 0; i < 2; i++) pthread_join(c[i], NULL);
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++) pthread_join(y[i], NULL);
    OK(hwrt_shutdown());
    printf("%d passed, %d failed\n", t_passed, t_failed);
    return t_failed ? 1 : 0;
}
