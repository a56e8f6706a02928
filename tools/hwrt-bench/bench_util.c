/* hwrt-bench helpers: clock, median, the two-thread memcpy baseline, JSON. */
#include "bench.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void bench_check(hwrt_status st, const char *what)
{
    if (st == HWRT_SUCCESS) return;
    /* hwrt's sentence names the call and the value; `what` says which step it was */
    fprintf(stderr, "hwrt-bench: %s: %s: %s\n", what, hwrt_status_name(st), hwrt_last_error());
    exit(1);
}

/* ---- two-thread memcpy ---- */

static struct {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    _Atomic unsigned job, done;
    int sleeping, stop;
    void *dst;
    const void *src;
    size_t bytes;
} h2 = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void *helper(void *arg)
{
    (void)arg;
    unsigned seen = 0;
    for (;;) {
        double until = bench_now_s() + 50e-6;      /* spin 50 us, like the sim engines */
        while (atomic_load(&h2.job) == seen && bench_now_s() < until) sched_yield();
        pthread_mutex_lock(&h2.mu);
        while (atomic_load(&h2.job) == seen && !h2.stop) {
            h2.sleeping = 1;
            pthread_cond_wait(&h2.cv, &h2.mu);
            h2.sleeping = 0;
        }
        int stop = h2.stop && atomic_load(&h2.job) == seen;
        pthread_mutex_unlock(&h2.mu);
        if (stop) return NULL;
        seen = atomic_load(&h2.job);
        memcpy(h2.dst, h2.src, h2.bytes);
        atomic_store(&h2.done, seen);
    }
}

void bench_memcpy2_start(void)
{
    h2.stop = 0;
    atomic_store(&h2.job, 0);
    atomic_store(&h2.done, 0);
    if (pthread_create(&h2.th, NULL, helper, NULL) != 0) {
        fprintf(stderr, "hwrt-bench: cannot start the memcpy helper thread\n");
        exit(1);
    }
}

void bench_memcpy2(void *dst, const void *src, size_t bytes)
{
    size_t half = bytes / 2 & ~(size_t)63;
    h2.dst = (char *)dst + half;
    h2.src = (const char *)src + half;
    h2.bytes = bytes - half;
    pthread_mutex_lock(&h2.mu);
    unsigned job = atomic_load(&h2.job) + 1;
    atomic_store(&h2.job, job);
    if (h2.sleeping) pthread_cond_signal(&h2.cv);
    pthread_mutex_unlock(&h2.mu);
    memcpy(dst, src, half);
    while (atomic_load(&h2.done) != job) sched_yield();
}

void bench_memcpy2_stop(void)
{
    pthread_mutex_lock(&h2.mu);
    h2.stop = 1;
    pthread_cond_signal(&h2.cv);
    pthread_mutex_unlock(&h2.mu);
    pthread_join(h2.th, NULL);
}
