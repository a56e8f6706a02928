/* Collectives on device tensors.
 *
 * Ordering with a host engine (self, MPI): "synchronize, then run". A collective first
 * waits on the host for the work queued on its stream (and on any stream that used its
 * tensors), then runs the engine in the calling thread, and returns with the result in
 * device memory. It is therefore ordered after all earlier work and before all later work
 * on the stream. Enqueuing a host
 * function instead would run MPI on a device engine thread (needing MPI_THREAD_MULTIPLE),
 * could let two streams issue collectives in different orders on different ranks, and
 * could only report a dead peer later as a sticky error, not as this call's
 * HWRT_ERROR_DIST. A device engine (NCCL, host_memory = 0) enqueues on the stream for real:
 * only the other streams that used the tensors are waited for, and the tensors are
 * recorded as used by the stream (coll_select.c picks the engine at the first call).
 *
 * Data: when the stream's device memory is host-addressable (the backend's
 * host_addressable property: sim), a host engine works on it directly, as CUDA-aware MPI
 * or NCCL work on device memory without staging; otherwise (or with dist_force_staging)
 * the data goes through pinned host buffers, D2H and H2D on the collective's stream.
 * Collectives from several threads are serialized here. */
#include "dist.h"
#include "comm_thread.h"
#include "../base/dtype.h"
#include "coll_select.h"
#include "../base/config.h"
#include "../base/status.h"
#include "../tensor/tensor.h"
#include "../offload/offload.h"
#include "../runtime/device_ops.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t coll_mu = PTHREAD_MUTEX_INITIALIZER;

void hwi_coll_lock(void) { pthread_mutex_lock(&coll_mu); }
void hwi_coll_unlock(void) { pthread_mutex_unlock(&coll_mu); }
static void *stage[2];          /* pinned staging buffers, grown on demand */
static size_t stage_len[2];
static int hook_added;

typedef struct {
    const char *api;
    hwrt_group g;               /* NULL: the world */
    void *comm;                 /* g's engine communicator (NULL: the world) */
    int grank, gsize;           /* this process's rank in g, g's size */
    hwi_stream *s;
    hwi_tensor *x;              /* the tensor written (allreduce/broadcast: also read) */
    hwi_tensor *y;              /* the tensor read by allgather / reduce_scatter */
    int direct;                 /* engine works on device memory in place */
    const hwi_coll_engine *e;   /* the engine of tensor collectives (coll_select.c) */
} coll;

/* A collective holds its tensors and stream pinned until it returns (runtime/handle.h). */
static void coll_end(coll *c)
{
    hwi_tensor_put(c->x);
    hwi_tensor_put(c->y);
    hwi_stream_put(c->s);
}
#define COLL(c) coll c __attribute__((cleanup(coll_end))) = {0}

hwrt_status hwi_dist_free_staging(void)
{
    for (int i = 0; i < 2; i++) {
        if (stage[i]) hwrt_host_free(stage[i]);
        stage[i] = NULL;
        stage_len[i] = 0;
    }
    return HWRT_SUCCESS;
}

static void describe(const hwi_tensor *t, char *buf, size_t len)
{
    size_t o = (size_t)snprintf(buf, len, "%s[", hwrt_dtype_name(t->dtype));
    for (int i = 0; i < t->ndim && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%lld", i ? "," : "", (long long)t->shape[i]);
    if (o < len) snprintf(buf + o, len - o, "]");
}

/* Resolve the group, handles and stream; tensors must live on the stream's device. */
static hwrt_status enter(coll *c, const char *api, hwrt_group g, hwrt_tensor x, hwrt_tensor y,
                         hwrt_stream sh)
{
    c->api = api;
    c->g = g;
    HWI_TRY(hwrt_dist_init());
    HWI_TRY(hwi_group_get(api, g, &c->comm, &c->grank, &c->gsize));
    HWI_TRY(hwi_tensor_resolve(x, &c->x));
    if (y) HWI_TRY(hwi_tensor_resolve(y, &c->y));
    HWI_TRY(hwi_stream_resolve_on(sh, c->x->device, &c->s));
    hwi_tensor *all[2] = {c->x, c->y};
    for (int i = 0; i < 2; i++)
        if (all[i] && all[i]->device != c->s->device)
            return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: the %stensor is on device %d but the "
                           "stream is on device %d; use a stream of device %d", api,
                           i ? "input " : c->y ? "output " : "", all[i]->device, c->s->device,
                           all[i]->device);
    HWI_TRY(hwi_host_sync_check(api, c->s));
    c->direct = hwi_dev_host_addressable(c->s->dev) && !hwi_cfg_int(HWI_CFG_DIST_FORCE_STAGING);
    /* offloaded tensors come back first, ordered on s (order() then waits for s) */
    int writes[2] = {1, 0};
    return hwi_offload_ensure(all, writes, 2, c->s);
}

/* The collective used x (and y) on s: the offload manager may evict them after this. */
static void leave(coll *c)
{
    hwi_tensor *all[2] = {c->x, c->y};
    hwi_offload_after_use(all, 2, c->s);
}

/* Under coll_mu, after validation: the group is still alive (destroy takes coll_mu),
 * check the binding once (a world collective: on the world), pick the engine, wait for
 * earlier work. The world's engine is chosen by every rank together at the first world
 * collective (coll_select.c); a group's collectives run on the host engine, which made
 * its communicator. A device engine (NCCL) enqueues on s itself: only the other streams
 * that used the tensors are waited for, and s is not. */
static hwrt_status order(coll *c)
{
    HWI_TRY(hwi_group_get(c->api, c->g, &c->comm, &c->grank, &c->gsize));
    if (!hwi_dist_g.devices_checked && !c->g)
        HWI_TRY(hwi_dist_exchange_devices(c->api, hwrt_current_backend(), c->x->device,
                                          HWRT_SUCCESS, ""));
    if (c->g) c->e = hwi_dist_g.eng;
    else HWI_TRY(hwi_coll_engine_get(&c->e));
    if (!c->e->host_memory) {
        c->direct = 1;
        HWI_TRY(hwi_tensor_wait_except(c->x, 0, c->s, c->api));
        if (c->y) HWI_TRY(hwi_tensor_wait_except(c->y, 1, c->s, c->api));
        return HWRT_SUCCESS;
    }
    HWI_TRY(hwi_stream_sync(c->s, c->api));
    HWI_TRY(hwi_tensor_wait(c->x, 0, c->api));
    if (c->y) HWI_TRY(hwi_tensor_wait(c->y, 1, c->api));
    return HWRT_SUCCESS;
}

/* A device engine queued the collective on s: later host reads and frees wait for s. */
static void note_queued(coll *c)
{
    if (c->e->host_memory) return;
    hwi_tensor_note_use(c->x, c->s, 1);
    if (c->y) hwi_tensor_note_use(c->y, c->s, 0);
}

/* A host-addressable view of t: its memory (direct) or staging slot `slot`, filled from
 * the device when load is set. */
static hwrt_status map(coll *c, hwi_tensor *t, int slot, int load, void **buf)
{
    if (c->direct || !t->nbytes) { *buf = t->data; return HWRT_SUCCESS; }
    if (stage_len[slot] < t->nbytes) {
        if (stage[slot]) hwrt_host_free(stage[slot]);
        stage[slot] = NULL;
        stage_len[slot] = 0;
        HWI_TRY(hwrt_host_alloc(&stage[slot], t->nbytes, HWRT_HOST_PINNED));
        stage_len[slot] = t->nbytes;
        if (!hook_added) { hwi_on_shutdown(45, hwi_dist_free_staging); hook_added = 1; }
    }
    *buf = stage[slot];
    if (!load) return HWRT_SUCCESS;
    HWI_TRY(hwrt_memcpy_async(*buf, t->data, t->nbytes, HWRT_MEMCPY_DEVICE_TO_HOST, c->s->handle));
    return hwi_stream_sync(c->s, c->api);
}

/* Put a staged result back into t (no-op when direct). */
static hwrt_status unmap(coll *c, hwi_tensor *t, void *buf)
{
    if (c->direct || !t->nbytes) return HWRT_SUCCESS;
    HWI_TRY(hwrt_memcpy_async(t->data, buf, t->nbytes, HWRT_MEMCPY_HOST_TO_DEVICE, c->s->handle));
    return hwi_stream_sync(c->s, c->api);
}

/* After a timeout on the communication thread, MPI may still complete the abandoned call
 * later and write into its buffers: keep them alive for the rest of the process. */
static void abandon(coll *c, hwrt_status st)
{
    if (st != HWRT_ERROR_DIST || !hwi_comm_broken())
        return;
    hwrt_tensor_retain(c->x->handle);
    if (c->y) hwrt_tensor_retain(c->y->handle);
    for (int i = 0; i < 2; i++) {      /* leaked on purpose */
        stage[i] = NULL;
        stage_len[i] = 0;
    }
}

static hwrt_status check_reduce(const char *api, const hwi_tensor *t, hwrt_reduce_op op)
{
    if ((unsigned)op > HWRT_REDUCE_AVG)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: op %d is not a hwrt_reduce_op (SUM 0, "
                       "PROD 1, MAX 2, MIN 3, AVG 4)", api, (int)op);
    if (t->dtype == HWRT_BOOL)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: bool tensors cannot be reduced; cast to "
                       "uint8 (MAX = any, MIN = all)", api);
    if (!hwi_dtype_has_kernel(t->dtype))
        return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "%s: %s tensors cannot be reduced (no reduction "
                       "kernel for that dtype); reductions run on float32, float16, bfloat16, "
                       "float64, int8, uint8, int32, int64", api, hwrt_dtype_name(t->dtype));
    return HWRT_SUCCESS;
}

static hwrt_status run_reduce(coll *c, hwrt_reduce_op op, void *out, const void *in, size_t n)
{
    const hwi_coll_engine *e = c->e;
    /* host engines: AVG is SUM + a division here; device engines take AVG themselves */
    int host_avg = op == HWRT_REDUCE_AVG && e->host_memory;
    hwrt_reduce_op eop = host_avg ? HWRT_REDUCE_SUM : op;
    hwrt_status st = in ? e->reduce_scatter(c->comm, in, out, n, c->x->dtype, eop, c->s)
                        : e->allreduce(c->comm, out, n, c->x->dtype, eop, c->s);
    if (st == HWRT_SUCCESS && host_avg)
        hwi_dist_divide(out, n, c->x->dtype, c->gsize);
    if (st == HWRT_SUCCESS) note_queued(c);
    return st;
}

hwrt_status hwrt_group_allreduce(hwrt_group g, hwrt_tensor t, hwrt_reduce_op op, hwrt_stream s)
{
    COLL(c);
    HWI_TRY(enter(&c, g ? "hwrt_group_allreduce" : "hwrt_allreduce", g, t, NULL, s));
    HWI_TRY(check_reduce(c.api, c.x, op));
    pthread_mutex_lock(&coll_mu);
    void *buf = NULL;
    hwrt_status st = order(&c);
    if (st == HWRT_SUCCESS) st = map(&c, c.x, 0, 1, &buf);
    if (st == HWRT_SUCCESS && c.x->nbytes) st = run_reduce(&c, op, buf, NULL, (size_t)c.x->numel);
    abandon(&c, st);
    if (st == HWRT_SUCCESS) st = unmap(&c, c.x, buf);
    leave(&c);
    pthread_mutex_unlock(&coll_mu);
    return st;
}

hwrt_status hwrt_group_broadcast(hwrt_group g, hwrt_tensor t, int root, hwrt_stream s)
{
    COLL(c);
    HWI_TRY(enter(&c, g ? "hwrt_group_broadcast" : "hwrt_broadcast", g, t, NULL, s));
    if (root < 0 || root >= c.gsize)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: root %d is not a rank of this group "
                       "of %d (0..%d)", c.api, root, c.gsize, c.gsize - 1);
    pthread_mutex_lock(&coll_mu);
    void *buf = NULL;
    hwrt_status st = order(&c);
    int is_root = root == c.grank;
    if (st == HWRT_SUCCESS) st = map(&c, c.x, 0, is_root, &buf);
    if (st == HWRT_SUCCESS && c.x->nbytes) st = c.e->broadcast(c.comm, buf, c.x->nbytes, root, c.s);
    if (st == HWRT_SUCCESS && c.x->nbytes) note_queued(&c);
    abandon(&c, st);
    if (st == HWRT_SUCCESS && !is_root) st = unmap(&c, c.x, buf);
    leave(&c);
    pthread_mutex_unlock(&coll_mu);
    return st;
}

/* big must hold size x small's elements, same dtype (allgather: out is the big one). */
static hwrt_status check_sizes(const coll *c, const hwi_tensor *big, const char *big_is,
                               const hwi_tensor *small, const char *small_is)
{
    char sb[128], ss[128];
    describe(big, sb, sizeof sb);
    describe(small, ss, sizeof ss);
    int n = c->gsize;
    if (big->dtype != small->dtype)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: dtypes differ: %s %s, %s %s; use one "
                       "dtype", c->api, big_is, sb, small_is, ss);
    if (big->numel != small->numel * n)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: the %s %s has %lld elements but must "
                       "have %d (ranks) x %lld (the elements of the %s %s) = %lld", c->api,
                       big_is, sb, (long long)big->numel, n, (long long)small->numel, small_is,
                       ss, (long long)small->numel * n);
    return HWRT_SUCCESS;
}

hwrt_status hwrt_group_allgather(hwrt_group g, hwrt_tensor out, hwrt_tensor in, hwrt_stream s)
{
    COLL(c);
    HWI_TRY(enter(&c, g ? "hwrt_group_allgather" : "hwrt_allgather", g, out, in, s));
    HWI_TRY(check_sizes(&c, c.x, "output", c.y, "input"));
    pthread_mutex_lock(&coll_mu);
    void *ob = NULL, *ib = NULL;
    hwrt_status st = order(&c);
    if (st == HWRT_SUCCESS) st = map(&c, c.y, 1, 1, &ib);
    if (st == HWRT_SUCCESS) st = map(&c, c.x, 0, 0, &ob);
    if (st == HWRT_SUCCESS && c.x->nbytes) st = c.e->allgather(c.comm, ib, ob, c.y->nbytes, c.s);
    if (st == HWRT_SUCCESS && c.x->nbytes) note_queued(&c);
    abandon(&c, st);
    if (st == HWRT_SUCCESS) st = unmap(&c, c.x, ob);
    leave(&c);
    pthread_mutex_unlock(&coll_mu);
    return st;
}

hwrt_status hwrt_group_reduce_scatter(hwrt_group g, hwrt_tensor out, hwrt_tensor in,
                                      hwrt_reduce_op op, hwrt_stream s)
{
    COLL(c);
    HWI_TRY(enter(&c, g ? "hwrt_group_reduce_scatter" : "hwrt_reduce_scatter", g, out, in, s));
    HWI_TRY(check_reduce(c.api, c.y, op));
    HWI_TRY(check_sizes(&c, c.y, "input", c.x, "output"));
    pthread_mutex_lock(&coll_mu);
    void *ob = NULL, *ib = NULL;
    hwrt_status st = order(&c);
    if (st == HWRT_SUCCESS) st = map(&c, c.y, 1, 1, &ib);
    if (st == HWRT_SUCCESS) st = map(&c, c.x, 0, 0, &ob);
    if (st == HWRT_SUCCESS && c.x->nbytes) st = run_reduce(&c, op, ob, ib, (size_t)c.x->numel);
    abandon(&c, st);
    if (st == HWRT_SUCCESS) st = unmap(&c, c.x, ob);
    leave(&c);
    pthread_mutex_unlock(&coll_mu);
    return st;
}

hwrt_status hwrt_group_barrier(hwrt_group g)
{
    HWI_TRY(hwrt_dist_init());
    const char *api = g ? "hwrt_group_barrier" : "hwrt_barrier";
    void *comm;
    int r, n;
    HWI_TRY(hwi_group_get(api, g, &comm, &r, &n));
    pthread_mutex_lock(&coll_mu);
    hwrt_status st = hwi_group_get(api, g, &comm, &r, &n);
    if (st == HWRT_SUCCESS) st = hwi_dist_g.eng->barrier(comm);
    pthread_mutex_unlock(&coll_mu);
    return st;
}

/* The world's collectives: the group ones on the world. */
hwrt_status hwrt_allreduce(hwrt_tensor t, hwrt_reduce_op op, hwrt_stream s)
{
    return hwrt_group_allreduce(NULL, t, op, s);
}

hwrt_status hwrt_broadcast(hwrt_tensor t, int root, hwrt_stream s)
{
    return hwrt_group_broadcast(NULL, t, root, s);
}

hwrt_status hwrt_allgather(hwrt_tensor out, hwrt_tensor in, hwrt_stream s)
{
    return hwrt_group_allgather(NULL, out, in, s);
}

hwrt_status hwrt_reduce_scatter(hwrt_tensor out, hwrt_tensor in, hwrt_reduce_op op, hwrt_stream s)
{
    return hwrt_group_reduce_scatter(NULL, out, in, op, s);
}

hwrt_status hwrt_barrier(void) { return hwrt_group_barrier(NULL); }
