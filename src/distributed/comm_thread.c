/* The communication thread (see comm_thread.h). One job at a time: the caller posts it,
 * the thread runs it, the caller waits on a condition variable with a deadline. Both
 * sides spin briefly before sleeping, because collectives tend to come back to back and a
 * sleeping thread costs a wake-up (tens of microseconds) on each handoff. */
#include "comm_thread.h"
#include "../base/status.h"
#include "../base/spin.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define SPIN_NS 200000     /* how long either side polls before it sleeps */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;     /* serializes callers */
static pthread_mutex_t qmu = PTHREAD_MUTEX_INITIALIZER;    /* guards the slot */
static pthread_cond_t qcv;                                 /* CLOCK_MONOTONIC */
static pthread_t th;
static int started, quit;
static unsigned base_seq;     /* jobs posted before this thread started */
static _Atomic unsigned posted, finished;                  /* job sequence numbers */
static _Atomic int stuck;
static hwi_comm_fn job_fn;
static void *job_arg;
static int job_st;
static char job_err[1024];

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Spin up to SPIN_NS for *v == want, then report whether it got there. */
static int spin_for(_Atomic unsigned *v, unsigned want)
{
    uint64_t end = now_ns() + SPIN_NS;
    for (unsigned i = 0; atomic_load_explicit(v, memory_order_acquire) != want; i++) {
        if ((i & 63) == 63 && now_ns() > end) return 0;
        hwi_cpu_relax();
    }
    return 1;
}

static void *loop(void *unused)
{
    unsigned seen = base_seq;
    for (;;) {
        if (!spin_for(&posted, seen + 1)) {
            pthread_mutex_lock(&qmu);
            while (atomic_load(&posted) == seen && !quit) pthread_cond_wait(&qcv, &qmu);
            int q = quit && atomic_load(&posted) == seen;
            pthread_mutex_unlock(&qmu);
            if (q) return NULL;
        }
        seen++;
        job_err[0] = 0;
        job_st = job_fn(job_arg, job_err, sizeof job_err);
        pthread_mutex_lock(&qmu);
        atomic_store_explicit(&finished, seen, memory_order_release);
        pthread_cond_broadcast(&qcv);
        pthread_mutex_unlock(&qmu);
    }
}

static hwrt_status start(void)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&qcv, &a);
    pthread_condattr_destroy(&a);
    quit = 0;
    base_seq = atomic_load(&posted);   /* read here: the thread may start late */
    if (pthread_create(&th, NULL, loop, NULL) != 0)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "hwrt_dist: cannot start the "
                       "communication thread");
    started = 1;
    return HWRT_SUCCESS;
}

/* Wait for job `seq` until the deadline; 1 when it finished. */
static int wait_done(unsigned seq, uint64_t deadline)
{
    if (spin_for(&finished, seq)) return 1;
    struct timespec ts = {(time_t)(deadline / 1000000000ull), (long)(deadline % 1000000000ull)};
    pthread_mutex_lock(&qmu);
    int rc = 0;
    while (atomic_load(&finished) != seq && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&qcv, &qmu, &ts);
    int ok = atomic_load(&finished) == seq;
    pthread_mutex_unlock(&qmu);
    return ok;
}

hwrt_status hwi_comm_run(hwi_comm_fn fn, void *arg, double timeout, const char *what)
{
    pthread_mutex_lock(&mu);
    if (atomic_load(&stuck)) {
        pthread_mutex_unlock(&mu);
        return hwi_err(HWRT_ERROR_DIST, "%s refused: an earlier collective timed out and its MPI "
                       "call never returned; the group is unusable: finalize and restart the "
                       "job", what);
    }
    hwrt_status st = started ? HWRT_SUCCESS : start();
    if (st != HWRT_SUCCESS) { pthread_mutex_unlock(&mu); return st; }
    job_fn = fn;
    job_arg = arg;
    unsigned seq = atomic_load(&posted) + 1;
    pthread_mutex_lock(&qmu);
    atomic_store_explicit(&posted, seq, memory_order_release);
    pthread_cond_broadcast(&qcv);
    pthread_mutex_unlock(&qmu);
    uint64_t deadline = now_ns() + (uint64_t)(timeout * 1e9);
    if (!wait_done(seq, deadline)) {
        atomic_store(&stuck, 1);
        pthread_mutex_unlock(&mu);
        return hwi_err(HWRT_ERROR_DIST, "%s did not complete within dist_timeout = %.1f s: a peer "
                       "rank has died or is stuck before this collective (every rank must call "
                       "the same collectives in the same order); the group is now unusable: "
                       "finalize and restart the job, or raise dist_timeout (hwrt_set_config or "
                       "HWRT_DIST_TIMEOUT) if ranks are legitimately that slow", what, timeout);
    }
    st = (hwrt_status)job_st;
    if (st != HWRT_SUCCESS) hwi_err(st, "%s", job_err);
    pthread_mutex_unlock(&mu);
    return st;
}

int hwi_comm_broken(void) { return atomic_load(&stuck); }

void hwi_comm_stop(void)
{
    pthread_mutex_lock(&mu);
    if (started && !atomic_load(&stuck)) {
        pthread_mutex_lock(&qmu);
        quit = 1;
        pthread_cond_broadcast(&qcv);
        pthread_mutex_unlock(&qmu);
        pthread_join(th, NULL);
        pthread_cond_destroy(&qcv);
        started = 0;
    }
    pthread_mutex_unlock(&mu);
}
