/* The HCCL engine: collectives on ascend device memory, enqueued on the collective's own
 * stream (its aclrtStream, from the backend's stream_native slot), so they are ordered
 * after earlier work on that stream and before later work without the host waiting. The
 * shape of nccl_engine.c, on Huawei's library.
 *
 * One communicator per process, made at the first collective on the device of its
 * tensor: with that device current, rank 0 asks HCCL for the root info, the MPI engine
 * broadcasts it (after every rank said it has HCCL), and every rank calls
 * HcclCommInitRootInfo. HCCL works on the calling thread's current device and context:
 * each HCCL call runs after the backend made the stream's device current on this thread
 * (its thread_enter slot, hwi_dev_thread_enter; ACL's aclrtSetCurrentContext), so this
 * file makes no ACL call.
 *
 * Types: HCCL reduces int8, int32, int64, float16, float32 and bfloat16 (Atlas A2/A3);
 * other dtypes, PROD on bfloat16 and AVG on integers are refused before any rank calls
 * HCCL (hwi_hccl_reduce_type). HCCL has no AVG: it is SUM, then a scale by 1/ranks
 * queued on the same stream. Broadcast and allgather move bytes (INT8).
 *
 * Errors: an HCCL error gives HWRT_ERROR_DIST with HCCL's sentence. Argument errors
 * (HCCL_E_PARA, _PTR, _NOT_SUPPORT) leave the communicator usable; any other error, or
 * an asynchronous one HcclGetCommAsyncError reports after an enqueue, ends it: HCCL has
 * no abort, so the communicator is left alone (not destroyed: that could wait for peers
 * that are gone) and every later collective fails at once, as with MPI. */
#include "hccl_engine.h"
#include "dev_setup.h"
#include "../base/log.h"
#include "../base/status.h"
#include "../runtime/device_ops.h"
#include "../runtime/runtime.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const hh_hccl *hc;
static hh_HcclComm comm;
static int comm_device = -1;   /* the device the communicator was made on */
static char broken[512];       /* the failure that ended the communicator ("" while fine) */

/* Every rank loads HCCL; rank 0 makes the root info (its device is current). */
static hwrt_status make_root(int is_root, void *blob, size_t len, char *msg, size_t msglen)
{
    const hh_hccl *t = hwi_hccl_load(msg, msglen);
    if (!t) return HWRT_ERROR_UNAVAILABLE;
    if (!is_root) return HWRT_SUCCESS;
    hh_HcclResult r = t->HcclGetRootInfo((hh_HcclRootInfo *)blob);
    if (r == HH_HCCL_SUCCESS) return HWRT_SUCCESS;
    snprintf(msg, msglen, "HcclGetRootInfo failed: %s (HcclResult %d)", hwi_hccl_str(t, r), (int)r);
    return HWRT_ERROR_DIST;
}

hwrt_status hwi_hccl_exchange_root(const hwi_coll_engine *mpi, int rank, int size,
                                   hwrt_status local_st, const char *local_msg,
                                   hh_HcclRootInfo *root)
{
    return hwi_setup_share(mpi, rank, size, local_st, local_msg, "HCCL", "the root info",
                           make_root, root, sizeof *root);
}

static int argument_error(hh_HcclResult r)
{
    return r == HH_HCCL_E_PARA || r == HH_HCCL_E_PTR || r == HH_HCCL_E_NOT_SUPPORT;
}

static hwrt_status hccl_fail(const char *what, hh_HcclResult r)
{
    hh_HcclResult async = HH_HCCL_SUCCESS;
    if (comm && hc->HcclGetCommAsyncError) hc->HcclGetCommAsyncError(comm, &async);
    char msg[512], more[160] = "";
    if (async != HH_HCCL_SUCCESS && async != r)
        snprintf(more, sizeof more, "; the communicator reports: %s", hwi_hccl_str(hc, async));
    snprintf(msg, sizeof msg, "%s failed: %s (HcclResult %d)%s", what, hwi_hccl_str(hc, r),
             (int)r, more);
    if (!argument_error(r)) {
        snprintf(broken, sizeof broken, "%s", msg);
        comm = NULL;           /* left alone: HCCL has no abort */
    }
    return hwi_err(argument_error(r) && r == HH_HCCL_E_NOT_SUPPORT ? HWRT_ERROR_NOT_SUPPORTED
                                                                  : HWRT_ERROR_DIST, "%s", msg);
}

/* The stream's aclrtStream, with its device made current on this thread. */
static hwrt_status enter_dev(hwi_stream *s, hwi_device **dev, hh_aclrtStream *as)
{
    HWI_TRY(hwi_device_get(s->device, dev));
    *as = hwi_dev_stream_native(*dev, s->bs);
    if (!*as)
        return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "HCCL: the %s backend gives no native stream "
                       "for device %d; HCCL runs on ascend devices only (HWRT_COLL_ENGINE=mpi "
                       "uses MPI)", hwi_dev_backend_name(*dev), s->device);
    hwrt_status st = hwi_dev_thread_enter(*dev);
    if (st != HWRT_SUCCESS)
        return hwi_err_prefix(st, "HCCL: device %d could not be made current", s->device);
    return HWRT_SUCCESS;
}

/* The communicator, made at the first collective (with s's device current). local_st:
 * whether this rank's stream and device are usable (every rank must still take part in
 * the setup, so that a failure on one is everyone's verdict, not a hang). */
static hwrt_status ensure_comm(hwi_stream *s, hwrt_status local_st)
{
    if (broken[0])
        return hwi_err(HWRT_ERROR_DIST, "HCCL failed earlier (%s); the communicator was "
                       "given up: collectives need a new process", broken);
    if (comm) {
        HWI_TRY(local_st);
        if (s->device == comm_device) return HWRT_SUCCESS;
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "HCCL: this process's communicator is on "
                       "device %d, but the tensor is on device %d: one rank drives one device; "
                       "use device %d (hwrt_dist_bind_device)", comm_device, s->device,
                       comm_device);
    }
    static hh_HcclRootInfo root;   /* 4 KiB: not on the stack */
    char local_msg[244];
    snprintf(local_msg, sizeof local_msg, "%s", local_st ? hwrt_last_error() : "");
    HWI_TRY(hwi_hccl_exchange_root(hwi_dist_g.eng, hwi_dist_g.rank, hwi_dist_g.size, local_st,
                                   local_msg, &root));
    hh_HcclComm c = NULL;
    hh_HcclResult r = hc->HcclCommInitRootInfo((uint32_t)hwi_dist_g.size, &root,
                                               (uint32_t)hwi_dist_g.rank, &c);
    /* every rank learns whether all made their communicator */
    int bad = -1;
    int32_t bad_code = 0;
    hwrt_status st = hwi_setup_agree(hwi_dist_g.eng, hwi_dist_g.size,
                                     r == HH_HCCL_SUCCESS ? 0 : (int32_t)r + 1, &bad, &bad_code);
    if (st != HWRT_SUCCESS || bad >= 0) {
        if (c && r == HH_HCCL_SUCCESS) hc->HcclCommDestroy(c);
        if (st != HWRT_SUCCESS) return hwi_err_prefix(st, "HCCL setup");
        hh_HcclResult bad_r = (hh_HcclResult)(bad_code - 1);
        return hwi_err(HWRT_ERROR_DIST, "HCCL setup: HcclCommInitRootInfo failed on rank %d of "
                       "%d: %s (HcclResult %d)", bad, hwi_dist_g.size, hwi_hccl_str(hc, bad_r),
                       (int)bad_r);
    }
    comm = c;
    comm_device = s->device;
    hwi_log(HWI_LOG_INFO, "HCCL communicator (%s): rank %d of %d on device %d", hc->lib,
            hwi_dist_g.rank, hwi_dist_g.size, s->device);
    return HWRT_SUCCESS;
}

typedef struct {
    enum { H_ALLREDUCE, H_BCAST, H_ALLGATHER, H_REDUCE_SCATTER } kind;
    const void *in;
    void *out;
    size_t count;              /* elements (reductions) or bytes (broadcast, allgather) */
    hwrt_dtype dt;
    hwrt_reduce_op op;
    int root;
} hccl_call;

/* AVG: the SUM just queued, scaled by 1/ranks on the same stream (float types only). */
static hwrt_status scale_avg(const hccl_call *k, hwi_device *d, hwi_stream *s)
{
    hwrt_kernel sk;
    memset(&sk, 0, sizeof sk);
    sk.op = HWRT_K_SCALE;
    sk.dtype = sk.out_dtype = k->dt;
    sk.out = k->out;
    sk.a = k->out;
    sk.n = (int64_t)k->count;
    sk.scalar = 1.0 / hwi_dist_g.size;
    hwrt_status st = hwi_dev_kernel_launch(d, s->bs, &sk);
    return st == HWRT_SUCCESS ? st : hwi_err_prefix(st, "HCCL AVG: the scale by 1/%d after the "
                                                    "sum", hwi_dist_g.size);
}

static hwrt_status run(const hccl_call *k, hwi_stream *s, const char *what)
{
    int htype = HH_HCCL_DATA_TYPE_INT8;
    if (k->kind == H_ALLREDUCE || k->kind == H_REDUCE_SCATTER) {
        char why[320];
        htype = hwi_hccl_reduce_type(k->dt, k->op, why, sizeof why);
        if (htype < 0) return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "%s: %s", what, why);
    }
    hwi_device *d = NULL;
    hh_aclrtStream as = NULL;
    hwrt_status lst = enter_dev(s, &d, &as);
    hwrt_status st = ensure_comm(s, lst);
    if (st != HWRT_SUCCESS) return st;
    int hop = k->op == HWRT_REDUCE_AVG ? HH_HCCL_REDUCE_SUM : (int)k->op;
    void *in = (void *)k->in;  /* HCCL's send buffers are not const */
    hh_HcclResult r;
    switch (k->kind) {
    case H_ALLREDUCE:
        r = hc->HcclAllReduce(in, k->out, k->count, htype, hop, comm, as);
        break;
    case H_BCAST:
        r = hc->HcclBroadcast(k->out, k->count, htype, (uint32_t)k->root, comm, as);
        break;
    case H_ALLGATHER:
        r = hc->HcclAllGather(in, k->out, k->count, htype, comm, as);
        break;
    default:
        r = hc->HcclReduceScatter(in, k->out, k->count, htype, hop, comm, as);
        break;
    }
    hh_HcclResult async = HH_HCCL_SUCCESS;
    if (r == HH_HCCL_SUCCESS && hc->HcclGetCommAsyncError) hc->HcclGetCommAsyncError(comm, &async);
    if (r != HH_HCCL_SUCCESS) return hccl_fail(what, r);
    if (async != HH_HCCL_SUCCESS) return hccl_fail(what, async);
    if (k->op == HWRT_REDUCE_AVG && k->kind != H_BCAST && k->kind != H_ALLGATHER)
        return scale_avg(k, d, s);
    return HWRT_SUCCESS;
}

static hwrt_status h_allreduce(void *comm_, void *buf, size_t count, hwrt_dtype dt,
                               hwrt_reduce_op op, hwi_stream *s)
{
    hccl_call k = {.kind = H_ALLREDUCE, .in = buf, .out = buf, .count = count, .dt = dt, .op = op};
    return run(&k, s, "HcclAllReduce");
}

static hwrt_status h_broadcast(void *comm_, void *buf, size_t bytes, int root, hwi_stream *s)
{
    hccl_call k = {.kind = H_BCAST, .in = buf, .out = buf, .count = bytes, .root = root};
    return run(&k, s, "HcclBroadcast");
}

static hwrt_status h_allgather(void *comm_, const void *in, void *out, size_t bytes, hwi_stream *s)
{
    hccl_call k = {.kind = H_ALLGATHER, .in = in, .out = out, .count = bytes};
    return run(&k, s, "HcclAllGather");
}

static hwrt_status h_reduce_scatter(void *comm_, const void *in, void *out, size_t count,
                                    hwrt_dtype dt, hwrt_reduce_op op, hwi_stream *s)
{
    hccl_call k = {.kind = H_REDUCE_SCATTER, .in = in, .out = out, .count = count, .dt = dt,
                   .op = op};
    return run(&k, s, "HcclReduceScatter");
}

/* hwrt_barrier returns once every rank reached it (a host-side barrier): the host
 * engine's, as with NCCL. HcclBarrier would only order a stream. */
static hwrt_status h_barrier(void *comm_) { return hwi_dist_g.eng->barrier(comm_); }

/* Groups' collectives run on the host engine, which makes their communicators
 * (collective.c): this engine has the world's communicator only. */
static hwrt_status h_group_create(const int *ranks, int n, void **out)
{
    return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "the HCCL engine runs world collectives only; "
                   "groups use the MPI engine");
}
static hwrt_status h_group_free(void *comm_) { return HWRT_SUCCESS; }

/* The communicator goes first (its device must still be open: hwrt_dist_finalize before
 * hwrt_shutdown), destroyed with that device current; the MPI engine is finalized by the
 * caller. A communicator given up after an error is not destroyed (see above). */
static hwrt_status h_finalize(void)
{
    hwrt_status st = HWRT_SUCCESS;
    if (comm) {
        hwi_device *d = hwi_device_if_open(comm_device);
        if (d) hwi_dev_thread_enter(d);
        hh_HcclResult r = hc->HcclCommDestroy(comm);
        if (r != HH_HCCL_SUCCESS)
            st = hwi_err(HWRT_ERROR_DIST, "HcclCommDestroy failed: %s (HcclResult %d)",
                         hwi_hccl_str(hc, r), (int)r);
    }
    comm = NULL;
    comm_device = -1;
    broken[0] = 0;
    return st;
}

static const hwi_coll_engine hccl_engine = {
    .name = "hccl", .host_memory = 0,
    .allreduce = h_allreduce, .broadcast = h_broadcast, .allgather = h_allgather,
    .reduce_scatter = h_reduce_scatter, .barrier = h_barrier,
    .group_create = h_group_create, .group_free = h_group_free, .finalize = h_finalize,
};

hwrt_status hwi_hccl_engine_open(const hwi_coll_engine **eng, char *why, size_t len)
{
    const hh_hccl *t = hwi_hccl_load(why, len);
    if (!t) return HWRT_ERROR_UNAVAILABLE;
    hc = t;
    *eng = &hccl_engine;
    return HWRT_SUCCESS;
}
