/* hwrt-bench launch: what it costs to get one small op done, and how fast ops can be
 * queued.
 *  - round trip: hwrt_op_fill on a 16-element tensor + hwrt_stream_synchronize, median
 *    us; baselines in the same run: a mutex/condvar ping-pong between two threads (what a
 *    sleeping engine costs) and an atomic spin ping-pong (the floor for any handoff);
 *  - enqueue: 1e5 small fills queued back to back, ops/s with and without the final
 *    synchronize; baseline: a bare producer/consumer queue (mutex-protected list of
 *    preallocated nodes, a consumer thread popping), ops/s until all are consumed. */
#include "bench.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

/* ---- handoff baselines ---- */

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int ping, pong, stop;
    _Atomic int sping, spong, sstop;
} hb = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void *condvar_peer(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&hb.mu);
    for (;;) {
        while (hb.ping == hb.pong && !hb.stop) pthread_cond_wait(&hb.cv, &hb.mu);
        if (hb.stop) break;
        hb.pong = hb.ping;
        pthread_cond_broadcast(&hb.cv);
    }
    pthread_mutex_unlock(&hb.mu);
    return NULL;
}

/* Spin the way the sim engines and waiters do: pause, and yield every few rounds so
 * that a peer on the same core (2 shared cores) gets to run. */
static inline void relax(unsigned *k)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if ((++*k & 3) == 0) sched_yield();
}

static void *spin_peer(void *arg)
{
    (void)arg;
    unsigned i = 0;
    for (;;) {
        int p = atomic_load(&hb.sping);
        if (p != atomic_load(&hb.spong)) { atomic_store(&hb.spong, p); continue; }
        if (atomic_load(&hb.sstop)) return NULL;
        relax(&i);
    }
}

static double condvar_rt_us(int n)
{
    double *t = malloc(sizeof(double) * (size_t)n);
    pthread_t th;
    hb.ping = hb.pong = hb.stop = 0;
    pthread_create(&th, NULL, condvar_peer, NULL);
    for (int i = 0; i < n; i++) {
        double t0 = bench_now_s();
        pthread_mutex_lock(&hb.mu);
        hb.ping++;
        pthread_cond_broadcast(&hb.cv);
        while (hb.pong != hb.ping) pthread_cond_wait(&hb.cv, &hb.mu);
        pthread_mutex_unlock(&hb.mu);
        t[i] = (bench_now_s() - t0) * 1e6;
    }
    pthread_mutex_lock(&hb.mu);
    hb.stop = 1;
    pthread_cond_broadcast(&hb.cv);
    pthread_mutex_unlock(&hb.mu);
    pthread_join(th, NULL);
    double m = bench_median(t, n);
    free(t);
    return m;
}

static double spin_rt_us(int n)
{
    double *t = malloc(sizeof(double) * (size_t)n);
    pthread_t th;
    atomic_store(&hb.sping, 0);
    atomic_store(&hb.spong, 0);
    atomic_store(&hb.sstop, 0);
    pthread_create(&th, NULL, spin_peer, NULL);
    for (int i = 0; i < n; i++) {
        double t0 = bench_now_s();
        int p = atomic_fetch_add(&hb.sping, 1) + 1;
        unsigned k = 0;
        while (atomic_load(&hb.spong) != p) relax(&k);
        t[i] = (bench_now_s() - t0) * 1e6;
    }
    atomic_store(&hb.sstop, 1);
    pthread_join(th, NULL);
    double m = bench_median(t, n);
    free(t);
    return m;
}

/* ---- hwrt ---- */

static double op_sync_rt_us(hwrt_tensor t, hwrt_stream s, int n)
{
    double *v = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < 100; i++) {                        /* warm up */
        BCHECK(hwrt_op_fill(t, i, s));
        BCHECK(hwrt_stream_synchronize(s));
    }
    for (int i = 0; i < n; i++) {
        double t0 = bench_now_s();
        BCHECK(hwrt_op_fill(t, i, s));
        BCHECK(hwrt_stream_synchronize(s));
        v[i] = (bench_now_s() - t0) * 1e6;
    }
    double m = bench_median(v, n);
    free(v);
    return m;
}

/* ops/s enqueuing nops fills; *with_sync gets the rate including the final sync. */
static double enqueue_rate(hwrt_tensor t, hwrt_stream s, int nops, double *with_sync)
{
    BCHECK(hwrt_stream_synchronize(s));
    double t0 = bench_now_s();
    for (int i = 0; i < nops; i++) BCHECK(hwrt_op_fill(t, 1.0, s));
    double t1 = bench_now_s();
    BCHECK(hwrt_stream_synchronize(s));
    double t2 = bench_now_s();
    *with_sync = nops / (t2 - t0);
    return nops / (t1 - t0);
}

/* Baseline for enqueue: a bare work queue (mutex-protected list, preallocated nodes) with
 * a consumer thread popping as the producer pushes; ops/s until all are consumed. */
typedef struct qnode { struct qnode *next; } qnode;
static struct {
    pthread_mutex_t mu;
    qnode *head, *tail;
    _Atomic int consumed;
    int total;
} bq = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void *consumer(void *arg)
{
    (void)arg;
    unsigned k = 0;
    while (atomic_load(&bq.consumed) < bq.total) {
        pthread_mutex_lock(&bq.mu);
        qnode *n = bq.head;
        if (n) {
            bq.head = n->next;
            if (!bq.head) bq.tail = NULL;
        }
        pthread_mutex_unlock(&bq.mu);
        if (n) atomic_fetch_add(&bq.consumed, 1);
        else relax(&k);
    }
    return NULL;
}

static double queue_rate(int nops)
{
    qnode *nodes = calloc((size_t)nops, sizeof *nodes);
    bq.head = bq.tail = NULL;
    bq.total = nops;
    atomic_store(&bq.consumed, 0);
    pthread_t th;
    pthread_create(&th, NULL, consumer, NULL);
    double t0 = bench_now_s();
    for (int i = 0; i < nops; i++) {
        nodes[i].next = NULL;
        pthread_mutex_lock(&bq.mu);
        if (bq.tail) bq.tail->next = &nodes[i];
        else bq.head = &nodes[i];
        bq.tail = &nodes[i];
        pthread_mutex_unlock(&bq.mu);
    }
    pthread_join(th, NULL);
    double r = nops / (bench_now_s() - t0);
    free(nodes);
    return r;
}

int bench_launch(const bench_opts *o, hwi_jw *j)
{
    const int n_rt = o->quick ? 2000 : 20000, n_cv = o->quick ? 500 : 4000;
    const int nops = 100000, reps = o->quick ? 3 : 7;
    hwrt_tensor t;
    int64_t shape[1] = {16};
    BCHECK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    hwrt_stream s;
    BCHECK(hwrt_stream_create(&s, 0));
    double cv = condvar_rt_us(n_cv), spin = spin_rt_us(n_rt);
    double rt = op_sync_rt_us(t, s, n_rt);
    double enq[16], enq_sync[16], mrate[16];
    for (int r = 0; r < reps; r++) {
        enq[r] = enqueue_rate(t, s, nops, &enq_sync[r]);
        mrate[r] = queue_rate(nops);
    }
    double e = bench_median(enq, reps), es = bench_median(enq_sync, reps);
    double mr = bench_median(mrate, reps);
    if (o->json) {
        hwi_jw_obj(j);
        hwi_jw_knum(j, "op_sync_roundtrip_us_median", rt);
        hwi_jw_knum(j, "condvar_handoff_roundtrip_us_median", cv);
        hwi_jw_knum(j, "spin_handoff_roundtrip_us_median", spin);
        hwi_jw_knum(j, "roundtrip_ratio_vs_condvar", rt / cv);
        hwi_jw_knum(j, "roundtrip_ratio_vs_spin", rt / spin);
        hwi_jw_knum(j, "enqueue_ops", nops);
        hwi_jw_knum(j, "enqueue_ops_per_s_median", e);
        hwi_jw_knum(j, "enqueue_with_sync_ops_per_s_median", es);
        hwi_jw_knum(j, "baseline_mutex_queue_ops_per_s_median", mr);
        hwi_jw_knum(j, "enqueue_ratio_vs_queue", es / mr);
        hwi_jw_knum(j, "repeats", reps);
        hwi_jw_close(j);
    } else {
        printf("launch: op (fill, 16 x f32) + stream sync round trip, median of %d\n", n_rt);
        printf("  hwrt op+sync        %8.2f us\n", rt);
        printf("  condvar handoff     %8.2f us   (hwrt / condvar = %.2fx)\n", cv, rt / cv);
        printf("  spin handoff        %8.2f us   (hwrt / spin    = %.2fx)\n", spin, rt / spin);
        printf("launch: enqueue %d fills, median of %d\n", nops, reps);
        printf("  enqueue only        %8.2f M ops/s\n", e / 1e6);
        printf("  enqueue + sync      %8.2f M ops/s\n", es / 1e6);
        printf("  bare mutex queue    %8.2f M ops/s  (baseline: push + consumer thread pop;"
               " hwrt enqueue+sync / queue = %.2fx)\n", mr / 1e6, es / mr);
    }
    BCHECK(hwrt_stream_destroy(s));
    BCHECK(hwrt_tensor_release(t));
    return 0;
}
