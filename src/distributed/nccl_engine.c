/* The NCCL engine: collectives on cuda device memory, enqueued on the collective's own
 * stream (its CUstream, from the backend's stream_native slot), so they are ordered after
 * earlier work on that stream and before later work without the host waiting.
 *
 * One communicator per process, made at the first collective on the device of its
 * tensor: rank 0 asks NCCL for a unique id, the MPI engine broadcasts it (after every
 * rank said it has NCCL), and every rank calls ncclCommInitRank. NCCL works on the
 * calling thread's current context: each NCCL call runs after the backend made the
 * stream's device current on this thread (its thread_enter slot, hwi_dev_thread_enter),
 * so this file touches no CUDA call. An NCCL error gives HWRT_ERROR_DIST with NCCL's sentence; a communicator that
 * reports an asynchronous error is aborted (ncclCommAbort) and every later collective
 * fails at once, as with MPI. */
#include "nccl_engine.h"
#include "dev_setup.h"
#include "../base/log.h"
#include "../base/status.h"
#include "../runtime/device_ops.h"
#include "../runtime/runtime.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const hc_nccl *nc;
static hc_ncclComm_t comm;
static int comm_device = -1;   /* the device the communicator was made on */
static char broken[512];       /* the failure that ended the communicator ("" while fine) */

/* Every rank loads NCCL; rank 0 makes the id (ncclGetUniqueId needs no device). */
static hwrt_status make_id(int is_root, void *blob, size_t len, char *msg, size_t msglen)
{
    const hc_nccl *t = hwi_nccl_load(msg, msglen);
    if (!t) return HWRT_ERROR_UNAVAILABLE;
    if (!is_root) return HWRT_SUCCESS;
    hc_ncclResult_t r = t->ncclGetUniqueId((hc_ncclUniqueId *)blob);
    if (r == HC_ncclSuccess) return HWRT_SUCCESS;
    snprintf(msg, msglen, "ncclGetUniqueId failed: %s (ncclResult %u)", t->ncclGetErrorString(r), r);
    return HWRT_ERROR_DIST;
}

hwrt_status hwi_nccl_exchange_id(const hwi_coll_engine *mpi, int rank, int size,
                                 hwrt_status local_st, const char *local_msg, hc_ncclUniqueId *id)
{
    return hwi_setup_share(mpi, rank, size, local_st, local_msg, "NCCL", "the unique id",
                           make_id, id, sizeof *id);
}

static hwrt_status nccl_fail(const char *what, hc_ncclResult_t r)
{
    hc_ncclResult_t async = HC_ncclSuccess;
    if (comm) nc->ncclCommGetAsyncError(comm, &async);
    char msg[512];
    snprintf(msg, sizeof msg, "%s failed: %s (ncclResult %u)%s%s", what, nc->ncclGetErrorString(r),
             r, async != HC_ncclSuccess && async != HC_ncclInProgress ? "; the communicator "
             "reports: " : "", async != HC_ncclSuccess && async != HC_ncclInProgress ?
             nc->ncclGetErrorString(async) : "");
    /* argument errors leave the communicator usable; anything else ends it */
    if (r != HC_ncclInvalidArgument && r != HC_ncclInvalidUsage) {
        snprintf(broken, sizeof broken, "%s", msg);
        if (comm) nc->ncclCommAbort(comm);
        comm = NULL;
    }
    return hwi_err(HWRT_ERROR_DIST, "%s", msg);
}

/* The stream's CUstream, with its device made current on this thread. */
static hwrt_status enter_dev(hwi_stream *s, hc_CUstream *cs)
{
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_get(s->device, &d));
    *cs = (hc_CUstream)hwi_dev_stream_native(d, s->bs);
    if (!*cs)
        return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "NCCL: the %s backend gives no native stream "
                       "for device %d; NCCL runs on cuda devices only (HWRT_COLL_ENGINE=mpi "
                       "uses MPI)", hwi_dev_backend_name(d), s->device);
    hwrt_status st = hwi_dev_thread_enter(d);
    if (st != HWRT_SUCCESS)
        return hwi_err_prefix(st, "NCCL: device %d could not be made current", s->device);
    return HWRT_SUCCESS;
}

/* The communicator, made at the first collective (with s's device current). */
/* local_st: whether this rank's stream and device are usable (every rank must still
 * take part in the setup, so that a failure on one is everyone's verdict, not a hang). */
static hwrt_status ensure_comm(hwi_stream *s, hwrt_status local_st)
{
    if (broken[0])
        return hwi_err(HWRT_ERROR_DIST, "NCCL failed earlier (%s); the communicator was "
                       "aborted: collectives need a new process", broken);
    if (comm) {
        HWI_TRY(local_st);
        if (s->device == comm_device) return HWRT_SUCCESS;
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "NCCL: this process's communicator is on "
                       "device %d, but the tensor is on device %d: one rank drives one device; "
                       "use device %d (hwrt_dist_bind_device)", comm_device, s->device,
                       comm_device);
    }
    hc_ncclUniqueId id;
    char local_msg[244];
    snprintf(local_msg, sizeof local_msg, "%s", local_st ? hwrt_last_error() : "");
    HWI_TRY(hwi_nccl_exchange_id(hwi_dist_g.eng, hwi_dist_g.rank, hwi_dist_g.size, local_st,
                                 local_msg, &id));
    hc_ncclComm_t c = NULL;
    hc_ncclResult_t r = nc->ncclCommInitRank(&c, hwi_dist_g.size, id, hwi_dist_g.rank);
    /* every rank learns whether all made their communicator */
    int bad = -1;
    int32_t bad_code = 0;
    hwrt_status st = hwi_setup_agree(hwi_dist_g.eng, hwi_dist_g.size,
                                     r == HC_ncclSuccess ? 0 : (int32_t)r + 1, &bad, &bad_code);
    if (st != HWRT_SUCCESS || bad >= 0) {
        if (c && r == HC_ncclSuccess) nc->ncclCommAbort(c);
        if (st != HWRT_SUCCESS) return hwi_err_prefix(st, "NCCL setup");
        hc_ncclResult_t bad_r = (hc_ncclResult_t)(bad_code - 1);
        return hwi_err(HWRT_ERROR_DIST, "NCCL setup: ncclCommInitRank failed on rank %d of %d: "
                       "%s (ncclResult %u)", bad, hwi_dist_g.size, nc->ncclGetErrorString(bad_r),
                       bad_r);
    }
    comm = c;
    comm_device = s->device;
    hwi_log(HWI_LOG_INFO, "NCCL %d.%d.%d communicator: rank %d of %d on device %d",
            nc->version / 10000, nc->version / 100 % 100, nc->version % 100, hwi_dist_g.rank,
            hwi_dist_g.size, s->device);
    return HWRT_SUCCESS;
}

static hc_ncclDataType_t nccl_type(hwrt_dtype dt)
{
    switch (dt) {
    case HWRT_FLOAT32: return HC_ncclFloat32;
    case HWRT_FLOAT16: return HC_ncclFloat16;
    case HWRT_BFLOAT16: return HC_ncclBfloat16;
    case HWRT_FLOAT64: return HC_ncclFloat64;
    case HWRT_INT8: return HC_ncclInt8;
    case HWRT_INT32: return HC_ncclInt32;
    case HWRT_INT64: return HC_ncclInt64;
    default: return HC_ncclUint8;       /* UINT8 (and bytes) */
    }
}

/* hwrt's ops map 1:1; AVG is NCCL's ncclAvg (integers: the sum divided, truncated). */
static hc_ncclRedOp_t nccl_op(hwrt_reduce_op op) { return (hc_ncclRedOp_t)op; }

typedef struct {
    enum { N_ALLREDUCE, N_BCAST, N_ALLGATHER, N_REDUCE_SCATTER } kind;
    const void *in;
    void *out;
    size_t count;
    hwrt_dtype dt;
    hwrt_reduce_op op;
    int root;
} nccl_call;

static hwrt_status run(const nccl_call *k, hwi_stream *s, const char *what)
{
    hc_CUstream cs = NULL;
    hwrt_status lst = enter_dev(s, &cs);
    hwrt_status st = ensure_comm(s, lst);
    if (st == HWRT_SUCCESS) {
        hc_ncclResult_t r;
        switch (k->kind) {
        case N_ALLREDUCE:
            r = nc->ncclAllReduce(k->in, k->out, k->count, nccl_type(k->dt), nccl_op(k->op), comm, cs);
            break;
        case N_BCAST:
            r = nc->ncclBroadcast(k->in, k->out, k->count, HC_ncclUint8, k->root, comm, cs);
            break;
        case N_ALLGATHER:
            r = nc->ncclAllGather(k->in, k->out, k->count, HC_ncclUint8, comm, cs);
            break;
        default:
            r = nc->ncclReduceScatter(k->in, k->out, k->count, nccl_type(k->dt), nccl_op(k->op),
                                      comm, cs);
            break;
        }
        hc_ncclResult_t async = HC_ncclSuccess;
        if (r == HC_ncclSuccess) nc->ncclCommGetAsyncError(comm, &async);
        if (r != HC_ncclSuccess) st = nccl_fail(what, r);
        else if (async != HC_ncclSuccess && async != HC_ncclInProgress) st = nccl_fail(what, async);
    }
    return st;
}

static hwrt_status n_allreduce(void *comm_, void *buf, size_t count, hwrt_dtype dt, hwrt_reduce_op op,
                               hwi_stream *s)
{
    nccl_call k = {.kind = N_ALLREDUCE, .in = buf, .out = buf, .count = count, .dt = dt, .op = op};
    return run(&k, s, "ncclAllReduce");
}

static hwrt_status n_broadcast(void *comm_, void *buf, size_t bytes, int root, hwi_stream *s)
{
    nccl_call k = {.kind = N_BCAST, .in = buf, .out = buf, .count = bytes, .root = root};
    return run(&k, s, "ncclBroadcast");
}

static hwrt_status n_allgather(void *comm_, const void *in, void *out, size_t bytes, hwi_stream *s)
{
    nccl_call k = {.kind = N_ALLGATHER, .in = in, .out = out, .count = bytes};
    return run(&k, s, "ncclAllGather");
}

static hwrt_status n_reduce_scatter(void *comm_, const void *in, void *out, size_t count, hwrt_dtype dt,
                                    hwrt_reduce_op op, hwi_stream *s)
{
    nccl_call k = {.kind = N_REDUCE_SCATTER, .in = in, .out = out, .count = count, .dt = dt,
                   .op = op};
    return run(&k, s, "ncclReduceScatter");
}

static hwrt_status n_barrier(void *comm_) { return hwi_dist_g.eng->barrier(comm_); }

/* Groups' collectives run on the host engine, which makes their communicators
 * (collective.c): this engine has the world's communicator only. */
static hwrt_status n_group_create(const int *ranks, int n, void **out)
{
    return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "the NCCL engine runs world collectives only; "
                   "groups use the MPI engine");
}
static hwrt_status n_group_free(void *comm_) { return HWRT_SUCCESS; }

/* The communicator goes first (its device must still be open: hwrt_dist_finalize before
 * hwrt_shutdown), destroyed with that device current; the MPI engine is finalized by the
 * caller. */
static hwrt_status n_finalize(void)
{
    hwrt_status st = HWRT_SUCCESS;
    if (comm) {
        hwi_device *d = hwi_device_if_open(comm_device);
        if (d) hwi_dev_thread_enter(d);
        hc_ncclResult_t r = nc->ncclCommDestroy(comm);
        if (r != HC_ncclSuccess)
            st = hwi_err(HWRT_ERROR_DIST, "ncclCommDestroy failed: %s (ncclResult %u)",
                         nc->ncclGetErrorString(r), r);
    }
    comm = NULL;
    comm_device = -1;
    broken[0] = 0;
    return st;
}

static const hwi_coll_engine nccl_engine = {
    .name = "nccl", .host_memory = 0,
    .allreduce = n_allreduce, .broadcast = n_broadcast, .allgather = n_allgather,
    .reduce_scatter = n_reduce_scatter, .barrier = n_barrier,
    .group_create = n_group_create, .group_free = n_group_free, .finalize = n_finalize,
};

hwrt_status hwi_nccl_engine_open(const hwi_coll_engine **eng, char *why, size_t len)
{
    const hc_nccl *t = hwi_nccl_load(why, len);
    if (!t) return HWRT_ERROR_UNAVAILABLE;
    nc = t;
    *eng = &nccl_engine;
    return HWRT_SUCCESS;
}
