/* A device collective engine (NCCL's and HCCL's kind: host_memory 0, work queued on the
 * stream, the call returns at once) stood in for by a fake whose collectives queue a host
 * function that waits 200 ms and then writes the result into the device buffer. After each
 * collective returns, a host read of the written tensor (hwrt_tensor_copy_to_host, no
 * stream named) must wait for the collective's stream and see the result: collective.c
 * notes the tensor as written on that stream (note_queued). Seed 3008's collective.c:247
 * (broadcast's `st == HWRT_SUCCESS && c.x->nbytes` made `!=`) read the old contents. The
 * four collectives of the world are checked; the engine is installed into libhwrt's
 * distributed state (linked statically) after a one-process hwrt_dist_init(). */
#include "harness.h"
#include "distributed/dist.h"

#include <string.h>
#include <time.h>

#define N 1024

static hwrt_stream S;

typedef struct { float *dst; size_t n; float v; } job;
static job jobs[8];
static int njobs;

static void late_write(void *arg)
{
    job *j = arg;
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    for (size_t i = 0; i < j->n; i++) j->dst[i] = j->v;
}

/* Queue the late write of n floats of value v on S (the collective's stream). */
static hwrt_status queue(void *dst, size_t n, float v)
{
    job *j = &jobs[njobs++ % 8];
    *j = (job){dst, n, v};
    return hwrt_launch_host_func(S, late_write, j);
}

static hwrt_status f_allreduce(void *comm, void *buf, size_t count, hwrt_dtype dt,
                               hwrt_reduce_op op, hwi_stream *s)
{
    (void)comm; (void)dt; (void)op; (void)s;
    return queue(buf, count, 11);
}
static hwrt_status f_broadcast(void *comm, void *buf, size_t bytes, int root, hwi_stream *s)
{
    (void)comm; (void)root; (void)s;
    return queue(buf, bytes / sizeof(float), 22);
}
static hwrt_status f_allgather(void *comm, const void *in, void *out, size_t bytes, hwi_stream *s)
{
    (void)comm; (void)in; (void)s;
    return queue(out, bytes / sizeof(float), 33);
}
static hwrt_status f_reduce_scatter(void *comm, const void *in, void *out, size_t count,
                                    hwrt_dtype dt, hwrt_reduce_op op, hwi_stream *s)
{
    (void)comm; (void)in; (void)dt; (void)op; (void)s;
    return queue(out, count, 44);
}

static const hwi_coll_engine fake = {
    .name = "fake-device", .host_memory = 0, .allreduce = f_allreduce,
    .broadcast = f_broadcast, .allgather = f_allgather, .reduce_scatter = f_reduce_scatter,
};

static hwrt_tensor filled(float v)
{
    static float host[N];
    for (int i = 0; i < N; i++) host[i] = v;
    hwrt_tensor t = NULL;
    int64_t shape[1] = {N};
    OK(hwrt_tensor_from_host(&t, HWRT_FLOAT32, 1, shape, host));
    return t;
}

/* A host read of t right after the collective returned: every element is want. */
static void read_sees(hwrt_tensor t, float want)
{
    static float got[N];
    OK(hwrt_tensor_copy_to_host(t, got, sizeof got));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += got[i] != want;
    EXPECT(bad == 0);
    if (bad) fprintf(stderr, "  %d of %d elements not %g (element 0: %g)\n", bad, N, want, got[0]);
}

int main(void)
{
    OK(hwrt_set_device("sim", 0));
    OK(hwrt_dist_init());
    EXPECT(hwrt_dist_size() == 1);
    OK(hwrt_stream_create(&S, 0));
    OK(hwrt_device_synchronize());
    hwi_dist_g.coll = &fake;        /* the engine chosen at the first collective */

    TEST_CASE("broadcast");
    hwrt_tensor a = filled(1);
    OK(hwrt_broadcast(a, 0, S));
    read_sees(a, 22);

    TEST_CASE("allreduce");
    hwrt_tensor b = filled(2);
    OK(hwrt_allreduce(b, HWRT_REDUCE_SUM, S));
    read_sees(b, 11);

    TEST_CASE("allgather");
    hwrt_tensor in = filled(3), out = filled(4);
    OK(hwrt_allgather(out, in, S));
    read_sees(out, 33);

    TEST_CASE("reduce_scatter");
    hwrt_tensor big = filled(5), small = filled(6);
    OK(hwrt_reduce_scatter(small, big, HWRT_REDUCE_SUM, S));
    read_sees(small, 44);

    OK(hwrt_stream_synchronize(S));
    hwi_dist_g.coll = NULL;
    hwrt_tensor all[] = {a, b, in, out, big, small};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) OK(hwrt_tensor_release(all[i]));
    OK(hwrt_stream_destroy(S));
    OK(hwrt_dist_finalize());
    OK(hwrt_shutdown());
    return test_report();
}
