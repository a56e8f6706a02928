/* Stress: several threads, each on its own device (two devices shared between them) with
 * two streams, run rounds of randomly mixed work: tensor ops hopping between streams
 * through events, raw copies (pinned H2D, D2D, D2H on another stream), memsets,
 * allocation churn with stream-ordered frees, host functions, event queries and small
 * matmuls. Every result is checked against a host mirror computed exactly (integer-valued
 * floats), so a lost ordering, a stale read or a corrupted block fails the test.
 *
 * HWRT_STRESS_SCALE (default 1) scales the number of rounds: the sanitizer runs of
 * `make test` use a fraction, since ASan/TSan slow the runtime down 5-20x. */
#include "harness.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

enum { THREADS = 4, M = 512, OPS_PER_ROUND = 40, BUF = 64 * 1024 };

static atomic_long ops_done, checks_done;

typedef struct {
    int id, device, rounds;
    uint64_t rng;
    hwrt_stream s[2];
    hwrt_event ev;
    hwrt_tensor x, y;
    double xh[M], yh[M];          /* host mirrors */
    unsigned char *pin_a, *pin_b; /* pinned host buffers */
    void *d, *d2;                 /* device buffers */
    atomic_int hostfn_count;
    int hostfn_expected;
    int fails;
} worker;

static uint64_t rnd(worker *w)
{
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return w->rng;
}

#define CALL(w, expr)                                                                      \
    do {                                                                                   \
        hwrt_status st_ = (expr);                                                          \
        atomic_fetch_add(&ops_done, 1);                                                    \
        if (st_ != HWRT_SUCCESS) {                                                         \
            if (w->fails++ < 5)                                                            \
                fprintf(stderr, "FAIL worker %d: %s -> %s: %s\n", w->id, #expr,             \
                        hwrt_status_name(st_), hwrt_last_error());                         \
        }                                                                                  \
    } while (0)

static void check(worker *w, int ok, const char *what)
{
    atomic_fetch_add(&checks_done, 1);
    if (!ok && w->fails++ < 5) fprintf(stderr, "FAIL worker %d: %s\n", w->id, what);
    EXPECT(ok);
}

static void bump(void *arg) { atomic_fetch_add((atomic_int *)arg, 1); }

/* Move x's next op to stream `to`, ordered after everything on `from` by an event. */
static void hop(worker *w, int from, int to)
{
    if (from == to) return;
    CALL(w, hwrt_event_record(w->ev, w->s[from]));
    CALL(w, hwrt_stream_wait_event(w->s[to], w->ev));
}

static void tensor_op(worker *w, int *cur)
{
    int next = (int)(rnd(w) & 1);
    hop(w, *cur, next);
    *cur = next;
    hwrt_stream s = w->s[next];
    double maxabs = 0;
    for (int i = 0; i < M; i++) maxabs = fmax(maxabs, fabs(w->xh[i]));
    int kind = maxabs > (1 << 20) ? 0 : (int)(rnd(w) % 6);
    switch (kind) {
    case 0: {
        double v = (double)(int)(rnd(w) % 21) - 10;
        CALL(w, hwrt_op_fill(w->x, v, s));
        for (int i = 0; i < M; i++) w->xh[i] = v;
        break;
    }
    case 1:
        CALL(w, hwrt_op_scale(w->x, w->x, -2.0, s));
        for (int i = 0; i < M; i++) w->xh[i] *= -2.0;
        break;
    case 2:
        CALL(w, hwrt_op_add(w->x, w->x, w->y, s));
        for (int i = 0; i < M; i++) w->xh[i] += w->yh[i];
        break;
    case 3:
        CALL(w, hwrt_op_mul(w->x, w->x, w->y, s));
        for (int i = 0; i < M; i++) w->xh[i] *= w->yh[i];
        break;
    case 4:
        CALL(w, hwrt_op_relu(w->x, w->x, s));
        for (int i = 0; i < M; i++) w->xh[i] = w->xh[i] > 0 ? w->xh[i] : 0;
        break;
    default:
        CALL(w, hwrt_launch_host_func(s, bump, &w->hostfn_count));
        w->hostfn_expected++;
        break;
    }
}

static void verify_x(worker *w)
{
    static _Thread_local float out[M];
    CALL(w, hwrt_tensor_copy_to_host(w->x, out, sizeof out));
    int ok = 1;
    for (int i = 0; i < M; i++) ok &= out[i] == (float)w->xh[i];
    check(w, ok, "tensor x differs from its host mirror");
}

/* Raw copies: pinned H2D on s0, D2D on s0, event, D2H on s1, compare. */
static void copy_round(worker *w)
{
    size_t n = 1 + rnd(w) % BUF;
    size_t off = rnd(w) % (BUF - n + 1);
    unsigned char seed = (unsigned char)rnd(w);
    for (size_t i = 0; i < n; i++) w->pin_a[i] = (unsigned char)(seed + i * 3);
    int value = (int)(rnd(w) & 0xff);
    CALL(w, hwrt_memset_async(w->d2, value, BUF, w->s[0]));
    CALL(w, hwrt_memcpy_async(w->d, w->pin_a, n, HWRT_MEMCPY_HOST_TO_DEVICE, w->s[0]));
    CALL(w, hwrt_memcpy_async((char *)w->d2 + off, w->d, n, HWRT_MEMCPY_DEVICE_TO_DEVICE, w->s[0]));
    CALL(w, hwrt_event_record(w->ev, w->s[0]));
    CALL(w, hwrt_stream_wait_event(w->s[1], w->ev));
    CALL(w, hwrt_memcpy_async(w->pin_b, w->d2, BUF, HWRT_MEMCPY_DEVICE_TO_HOST, w->s[1]));
    CALL(w, hwrt_stream_synchronize(w->s[1]));
    int ok = 1;
    for (size_t i = 0; i < BUF; i++) {
        unsigned char want = (i >= off && i < off + n) ? (unsigned char)(seed + (i - off) * 3)
                                                       : (unsigned char)value;
        ok &= w->pin_b[i] == want;
    }
    check(w, ok, "copy chain H2D -> D2D -> D2H (other stream, event-ordered) lost bytes");
}

/* Allocation churn: blocks of random sizes written, read back, freed stream-ordered. */
static void alloc_round(worker *w)
{
    void *p[4];
    size_t sz[4];
    for (int i = 0; i < 4; i++) {
        sz[i] = 1 + rnd(w) % (256 * 1024);
        CALL(w, hwrt_malloc_async(&p[i], sz[i], w->s[i & 1]));
        CALL(w, hwrt_memset_async(p[i], 0x40 + i, sz[i], w->s[i & 1]));
    }
    for (int i = 0; i < 4; i++) {
        unsigned char tail[2];
        CALL(w, hwrt_stream_synchronize(w->s[i & 1]));
        CALL(w, hwrt_memcpy(tail, (char *)p[i] + sz[i] - 1, 1, HWRT_MEMCPY_DEVICE_TO_HOST));
        check(w, tail[0] == 0x40 + i, "a fresh block's last byte was not written");
        CALL(w, hwrt_free_async(p[i], w->s[i & 1]));
    }
}

static void matmul_round(worker *w)
{
    int m = 1 + (int)(rnd(w) % 8), k = 1 + (int)(rnd(w) % 8), n = 1 + (int)(rnd(w) % 8);
    float a[64], b[64], c[64];
    for (int i = 0; i < m * k; i++) a[i] = (float)((int)(rnd(w) % 7) - 3);
    for (int i = 0; i < k * n; i++) b[i] = (float)((int)(rnd(w) % 7) - 3);
    hwrt_tensor ta, tb, tc;
    int64_t sa[2] = {m, k}, sb[2] = {k, n}, sc[2] = {m, n};
    CALL(w, hwrt_tensor_from_host(&ta, HWRT_FLOAT32, 2, sa, a));
    CALL(w, hwrt_tensor_from_host(&tb, HWRT_FLOAT32, 2, sb, b));
    CALL(w, hwrt_tensor_empty(&tc, HWRT_FLOAT32, 2, sc));
    CALL(w, hwrt_op_matmul(tc, ta, tb, w->s[rnd(w) & 1]));
    CALL(w, hwrt_tensor_copy_to_host(tc, c, (size_t)(m * n) * sizeof(float)));
    int ok = 1;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float sum = 0;
            for (int q = 0; q < k; q++) sum += a[i * k + q] * b[q * n + j];
            ok &= c[i * n + j] == sum;
        }
    check(w, ok, "matmul result");
    CALL(w, hwrt_tensor_release(ta));
    CALL(w, hwrt_tensor_release(tb));
    CALL(w, hwrt_tensor_release(tc));
}

static void *run(void *arg)
{
    worker *w = arg;
    CALL(w, hwrt_set_device("sim", w->device));
    for (int i = 0; i < 2; i++) CALL(w, hwrt_stream_create(&w->s[i], 0));
    CALL(w, hwrt_event_create(&w->ev, HWRT_EVENT_DISABLE_TIMING));
    int64_t shape[1] = {M};
    float init[M];
    for (int i = 0; i < M; i++) {
        w->yh[i] = (double)((int)(rnd(w) % 3) - 1 + (i % 2));   /* -1..2 */
        init[i] = (float)w->yh[i];
        w->xh[i] = 1;
    }
    CALL(w, hwrt_tensor_from_host(&w->y, HWRT_FLOAT32, 1, shape, init));
    for (int i = 0; i < M; i++) init[i] = 1;
    CALL(w, hwrt_tensor_from_host(&w->x, HWRT_FLOAT32, 1, shape, init));
    CALL(w, hwrt_host_alloc((void **)&w->pin_a, BUF, HWRT_HOST_PINNED));
    CALL(w, hwrt_host_alloc((void **)&w->pin_b, BUF, HWRT_HOST_PINNED));
    CALL(w, hwrt_malloc(&w->d, BUF));
    CALL(w, hwrt_malloc(&w->d2, BUF));
    int cur = 0;
    for (int r = 0; r < w->rounds; r++) {
        for (int i = 0; i < OPS_PER_ROUND / 2; i++)
            tensor_op(w, &cur);
        verify_x(w);
        switch (rnd(w) % 4) {
        case 0: copy_round(w); break;
        case 1: alloc_round(w); break;
        case 2: matmul_round(w); break;
        default:
            CALL(w, hwrt_event_record(w->ev, w->s[cur]));
            CALL(w, hwrt_event_synchronize(w->ev));
            check(w, hwrt_event_query(w->ev) == HWRT_SUCCESS, "event complete after sync");
            atomic_fetch_add(&ops_done, 1);
            break;
        }
    }
    for (int i = 0; i < 2; i++) CALL(w, hwrt_stream_synchronize(w->s[i]));
    check(w, atomic_load(&w->hostfn_count) == w->hostfn_expected, "host functions all ran once");
    CALL(w, hwrt_tensor_release(w->x));
    CALL(w, hwrt_tensor_release(w->y));
    CALL(w, hwrt_free(w->d));
    CALL(w, hwrt_free(w->d2));
    CALL(w, hwrt_host_free(w->pin_a));
    CALL(w, hwrt_host_free(w->pin_b));
    CALL(w, hwrt_event_destroy(w->ev));
    for (int i = 0; i < 2; i++) CALL(w, hwrt_stream_destroy(w->s[i]));
    return NULL;
}

/* Lifecycle: sessions that abandon resources (as a crashing training script would) and
 * end with hwrt_shutdown, which must succeed and leave a runtime that works from scratch.
 * Under ASan, LeakSanitizer then checks at exit that nothing hwrt allocated leaked. */
static void lifecycle(int cycles)
{
    TEST_CASE("lifecycle");
    for (int c = 0; c < cycles; c++) {
        for (int dev = 0; dev < 2; dev++) {
            OK(hwrt_set_device("sim", dev));
            void *keep, *drop, *host;
            hwrt_stream s;
            hwrt_event e;
            hwrt_tensor t;
            int64_t shape[1] = {256};
            OK(hwrt_malloc(&keep, 4096 + (size_t)c));
            OK(hwrt_malloc(&drop, 1 << 20));
            OK(hwrt_stream_create(&s, 0));
            OK(hwrt_event_create(&e, 0));
            OK(hwrt_host_alloc(&host, 4096, (unsigned)(c & 1)));
            OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
            OK(hwrt_op_fill(t, (double)c, s));
            OK(hwrt_memset_async(keep, c, 4096, s));
            OK(hwrt_event_record(e, s));
            OK(hwrt_free(drop));
            if (c % 2) {          /* odd cycles clean up half, even ones abandon all */
                OK(hwrt_tensor_release(t));
                OK(hwrt_event_destroy(e));
                OK(hwrt_host_free(host));
            }
        }
        OK(hwrt_shutdown());
    }
    float out[16];
    hwrt_tensor t;
    int64_t shape[1] = {16};
    OK(hwrt_set_device("sim", 1));
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    OK(hwrt_op_fill(t, 3.0, NULL));
    OK(hwrt_tensor_copy_to_host(t, out, sizeof out));
    int ok = 1;
    for (int i = 0; i < 16; i++) ok &= out[i] == 3.0f;
    EXPECT(ok);
    OK(hwrt_tensor_release(t));
    OK(hwrt_shutdown());
}

int main(void)
{
    setenv("HWRT_SIM_DEVICES", "2", 1);
    setenv("HWRT_SIM_MEMORY", "1GB", 1);
    const char *sc = getenv("HWRT_STRESS_SCALE");
    double scale = sc && *sc ? atof(sc) : 1.0;
    if (!(scale > 0)) scale = 1.0;
    int rounds = (int)(700 * scale);
    if (rounds < 5) rounds = 5;
    static worker w[THREADS];
    pthread_t th[THREADS];
    TEST_CASE("stress");
    OK(hwrt_set_device("sim", 0));
    for (int i = 0; i < THREADS; i++) {
        w[i].id = i;
        w[i].device = i % 2;
        w[i].rounds = rounds;
        w[i].rng = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
        pthread_create(&th[i], NULL, run, &w[i]);
    }
    int fails = 0;
    long hostfns = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        fails += w[i].fails;
        hostfns += atomic_load(&w[i].hostfn_count);
    }
    EXPECT(fails == 0);
    OK(hwrt_shutdown());
    lifecycle(rounds / 35 + 2);
    printf("stress: %d threads, 2 devices, 2 streams each, %d rounds each: %ld operations, "
           "%ld results verified, %ld host functions ran, %d failures\n", THREADS, rounds,
           atomic_load(&ops_done), atomic_load(&checks_done), hostfns, fails);
    return test_report();
}
