/* Destroy while in use, for every handle type (tensor, stream, event, graph): user
 * threads keep calling with a handle while another thread destroys it. What must hold
 * (docs/RELIABILITY.md, "Handle lifetime"):
 *   - no call touches freed memory (ASan/TSan runs of this test: make test);
 *   - every call either works (and then its data is right) or returns
 *     HWRT_ERROR_INVALID_HANDLE;
 *   - a call that starts after the destroy returned gets HWRT_ERROR_INVALID_HANDLE, also
 *     once a new object has taken the destroyed one's place (for a tensor "destroy" is
 *     the last release: a user's retain racing with it may be the one that comes last);
 *   - a retain racing with the last release either wins (and the tensor lives on until
 *     its release) or gets HWRT_ERROR_INVALID_HANDLE.
 * Rounds scale with HWRT_STRESS_SCALE (the sanitizer passes run fewer); argv[1] (tensor,
 * stream, event or graph) runs one kind only. */
#include "harness.h"

#include <pthread.h>
#include <sched.h>

#define USERS 4
#define N 256                          /* floats per tensor */

enum { K_TENSOR, K_STREAM, K_EVENT, K_GRAPH, K_COUNT };
static const char *const kind_name[K_COUNT] = {"tensor", "stream", "event", "graph"};

static pthread_barrier_t start_bar, end_bar;
static _Atomic int kind;               /* this round's handle type */
static _Atomic int quit;
static void *_Atomic target;           /* the handle under attack */
static _Atomic int destroyed;          /* set once the destroy call returned */
static _Atomic float fill_value;       /* what a tensor read must see */
static _Atomic long calls_ok, calls_invalid, late_ok, bad_status, bad_data;

static void note(hwrt_status st, int was_destroyed, const char *what)
{
    if (st == HWRT_SUCCESS) {
        calls_ok++;
        if (was_destroyed) {
            late_ok++;
            fprintf(stderr, "FAIL %s: succeeded with a handle destroyed before the call\n", what);
        }
    } else if (st == HWRT_ERROR_INVALID_HANDLE) {
        calls_invalid++;
    } else {
        bad_status++;
        fprintf(stderr, "FAIL %s: %s: %s\n", what, hwrt_status_name(st), hwrt_last_error());
    }
}

static void noop_fn(void *arg) { (void)arg; }

/* One user's calls on this round's handle until it is gone (and a few after). */
typedef struct {
    hwrt_stream s;                     /* the user's own stream, event, buffer, sum */
    hwrt_event ev;
    void *buf;
    hwrt_tensor sum;
} mine_t;

static void use(int k, const mine_t *m, unsigned *seed)
{
    hwrt_stream mine = m->s;
    hwrt_event ev_mine = m->ev;
    float host[N];
    int after = 0;
    while (after < 3) {
        int was = atomic_load(&destroyed);
        void *h = atomic_load(&target);
        hwrt_status st = HWRT_SUCCESS;
        unsigned r = (*seed = *seed * 1103515245u + 12345u) >> 16;
        switch (k) {
        case K_TENSOR:
            switch (r % 5) {
            case 0:
                st = hwrt_tensor_copy_to_host(h, host, sizeof host);
                if (st == HWRT_SUCCESS)
                    for (int i = 0; i < N; i++)
                        if (host[i] != atomic_load(&fill_value)) { bad_data++; break; }
                note(st, was, "hwrt_tensor_copy_to_host");
                break;
            case 1: {
                size_t nb = 0;
                st = hwrt_tensor_nbytes(h, &nb);
                if (st == HWRT_SUCCESS && nb != sizeof host) bad_data++;
                note(st, was, "hwrt_tensor_nbytes");
                break;
            }
            case 2:
                st = hwrt_tensor_retain(h);
                note(st, was, "hwrt_tensor_retain");
                if (st == HWRT_SUCCESS) note(hwrt_tensor_release(h), 0, "hwrt_tensor_release");
                break;
            case 3: {  /* a kernel reads it on the user's stream, maybe after the release */
                st = hwrt_op_sum(m->sum, h, -1, mine);
                note(st, was, "hwrt_op_sum");
                float got = -1;
                if (st == HWRT_SUCCESS &&
                    (hwrt_tensor_copy_to_host(m->sum, &got, sizeof got) != HWRT_SUCCESS ||
                     got != N * atomic_load(&fill_value)))
                    bad_data++;
                break;
            }
            default: {
                DLManagedTensorVersioned *dl = NULL;
                st = hwrt_tensor_to_dlpack(h, &dl);
                note(st, was, "hwrt_tensor_to_dlpack");
                if (st == HWRT_SUCCESS) dl->deleter(dl);
                break;
            }
            }
            break;
        case K_STREAM:
            switch (r % 5) {
            case 0: note(hwrt_memset_async(m->buf, 1, 4096, h), was, "hwrt_memset_async"); break;
            case 1: note(hwrt_launch_host_func(h, noop_fn, NULL), was, "hwrt_launch_host_func"); break;
            case 2:
                st = hwrt_stream_query(h);
                note(st == HWRT_ERROR_NOT_READY ? HWRT_SUCCESS : st, was, "hwrt_stream_query");
                break;
            case 3: note(hwrt_stream_synchronize(h), was, "hwrt_stream_synchronize"); break;
            default:
                note(hwrt_event_record(ev_mine, h), was, "hwrt_event_record(stream)");
                break;
            }
            break;
        case K_EVENT:
            switch (r % 4) {
            case 0: note(hwrt_event_record(h, mine), was, "hwrt_event_record"); break;
            case 1:
                st = hwrt_event_query(h);
                note(st == HWRT_ERROR_NOT_READY ? HWRT_SUCCESS : st, was, "hwrt_event_query");
                break;
            case 2: note(hwrt_stream_wait_event(mine, h), was, "hwrt_stream_wait_event"); break;
            default: note(hwrt_event_synchronize(h), was, "hwrt_event_synchronize"); break;
            }
            break;
        case K_GRAPH:
            if (r % 3) {
                note(hwrt_graph_launch(h, mine), was, "hwrt_graph_launch");
            } else {
                size_t n = 0;
                st = hwrt_graph_node_count(h, &n);
                if (st == HWRT_SUCCESS && n != 2) bad_data++;
                note(st, was, "hwrt_graph_node_count");
            }
            break;
        }
        if (was) after++;
        if ((r & 7) == 0) sched_yield();
    }
    hwrt_stream_synchronize(mine);
}

static void *user(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg * 7919u + 1;
    mine_t m;
    int64_t one[1] = {1};
    OK(hwrt_stream_create(&m.s, 0));
    OK(hwrt_event_create(&m.ev, 0));
    OK(hwrt_malloc(&m.buf, 4096));
    OK(hwrt_tensor_empty(&m.sum, HWRT_FLOAT32, 1, one));
    for (;;) {
        pthread_barrier_wait(&start_bar);
        if (atomic_load(&quit)) break;
        use(atomic_load(&kind), &m, &seed);
        pthread_barrier_wait(&end_bar);
    }
    OK(hwrt_tensor_release(m.sum));
    OK(hwrt_free(m.buf));
    OK(hwrt_event_destroy(m.ev));
    OK(hwrt_stream_destroy(m.s));
    return NULL;
}

/* A new object of kind k; *extra gets what must be released after the round. */
static void *make(int k, hwrt_tensor *extra, float v)
{
    int64_t shape[1] = {N};
    float host[N];
    for (int i = 0; i < N; i++) host[i] = v;
    *extra = NULL;
    switch (k) {
    case K_TENSOR: {
        hwrt_tensor t = NULL;
        OK(hwrt_tensor_from_host(&t, HWRT_FLOAT32, 1, shape, host));
        return t;
    }
    case K_STREAM: {
        hwrt_stream s = NULL;
        OK(hwrt_stream_create(&s, 0));
        return s;
    }
    case K_EVENT: {
        hwrt_event e = NULL;
        OK(hwrt_event_create(&e, 0));
        return e;
    }
    default: {                        /* a graph that keeps a tensor it writes */
        hwrt_stream s = NULL;
        hwrt_graph g = NULL;
        OK(hwrt_stream_create(&s, 0));
        OK(hwrt_tensor_from_host(extra, HWRT_FLOAT32, 1, shape, host));
        OK(hwrt_stream_begin_capture(s));
        OK(hwrt_op_fill(*extra, v, s));
        OK(hwrt_op_scale(*extra, *extra, 1.0, s));
        OK(hwrt_stream_end_capture(s, &g));
        OK(hwrt_stream_destroy(s));
        return g;
    }
    }
}

static hwrt_status destroy(int k, void *h)
{
    switch (k) {
    case K_TENSOR: return hwrt_tensor_release(h);
    case K_STREAM: return hwrt_stream_destroy(h);
    case K_EVENT: return hwrt_event_destroy(h);
    default: return hwrt_graph_destroy(h);
    }
}

int main(int argc, char **argv)
{
    const char *sc = getenv("HWRT_STRESS_SCALE");
    double scale = sc ? atof(sc) : 1.0;
    int base_rounds = (int)(400 * (scale > 0 ? scale : 1.0));
    if (base_rounds < 20) base_rounds = 20;
    OK(hwrt_set_device("sim", 0));
    pthread_barrier_init(&start_bar, NULL, USERS + 1);
    pthread_barrier_init(&end_bar, NULL, USERS + 1);
    pthread_t th[USERS];
    for (int i = 0; i < USERS; i++) pthread_create(&th[i], NULL, user, (void *)(uintptr_t)i);
    unsigned seed = 12345;
    for (int k = 0; k < K_COUNT; k++) {
        if (argc > 1 && strcmp(argv[1], kind_name[k])) continue;   /* one kind: argv[1] */
        TEST_CASE(kind_name[k]);
        /* a graph call's window between resolving and using is short: more rounds */
        int rounds = k == K_GRAPH ? 5 * base_rounds : base_rounds;
        long ok0 = calls_ok, inv0 = calls_invalid;
        void *prev = NULL;            /* last round's handle: must stay dead */
        for (int r = 0; r < rounds; r++) {
            hwrt_tensor extra;
            atomic_store(&fill_value, (float)(r % 97));
            void *h = make(k, &extra, (float)(r % 97));
            EXPECT(h != prev);
            atomic_store(&target, h);
            atomic_store(&destroyed, 0);
            atomic_store(&kind, k);
            pthread_barrier_wait(&start_bar);
            /* let the users get going, for a varying while, then destroy under them */
            seed = seed * 1103515245u + 12345u;
            for (volatile unsigned spin = 0; spin < ((seed >> 16) % 200000); spin++) {}
            hwrt_status st = destroy(k, h);
            EXPECT(st == HWRT_SUCCESS);
            /* a user's hwrt_tensor_retain (or DLPack export) that came first keeps the
             * tensor until its release: that one is the last */
            size_t nb;
            while (k == K_TENSOR && hwrt_tensor_nbytes(h, &nb) == HWRT_SUCCESS) sched_yield();
            atomic_store(&destroyed, 1);
            EXPECT(destroy(k, h) == HWRT_ERROR_INVALID_HANDLE);   /* twice: refused */
            pthread_barrier_wait(&end_bar);
            if (prev) {
                size_t n;
                EXPECT(k != K_TENSOR || hwrt_tensor_nbytes(prev, &n) == HWRT_ERROR_INVALID_HANDLE);
                EXPECT(k != K_STREAM || hwrt_stream_query(prev) == HWRT_ERROR_INVALID_HANDLE);
                EXPECT(k != K_EVENT || hwrt_event_query(prev) == HWRT_ERROR_INVALID_HANDLE);
                EXPECT(k != K_GRAPH || hwrt_graph_node_count(prev, &n) == HWRT_ERROR_INVALID_HANDLE);
            }
            prev = h;
            if (extra) OK(hwrt_tensor_release(extra));
        }
        printf("%s: %d rounds, %ld calls worked, %ld got INVALID_HANDLE\n", kind_name[k], rounds,
               calls_ok - ok0, calls_invalid - inv0);
        EXPECT(calls_invalid - inv0 >= rounds);        /* every user saw each destroy */
    }
    atomic_store(&quit, 1);
    pthread_barrier_wait(&start_bar);
    for (int i = 0; i < USERS; i++) pthread_join(th[i], NULL);
    TEST_CASE("totals");
    EXPECT(late_ok == 0);
    EXPECT(bad_status == 0);
    EXPECT(bad_data == 0);
    OK(hwrt_shutdown());
    return test_report();
}
