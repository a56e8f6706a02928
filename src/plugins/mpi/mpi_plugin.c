/* libhwrt_mpi.so: MPI as hwrt's collective engine across processes and nodes.
 *
 * The collectives use MPI's own blocking calls (Open MPI's tuned algorithms, the fastest
 * it has), except large allreduces, which use a ring over polled point-to-point messages
 * (mpi_ring.c). A blocking call would wait forever for a dead peer, so each one runs
 * under a deadline: in the caller's thread through Open MPI's progress hook
 * (mpi_deadline.c), or, where that hook is missing, on libhwrt's communication thread,
 * which the caller waits for with the deadline (src/distributed/comm_thread.c). The communicator
 * uses MPI_ERRORS_RETURN, so MPI failures come back as HWRT_ERROR_DIST with MPI's text.
 * After a failure the plugin refuses every later call ("broken") and does not call
 * MPI_Finalize, which could wait for the dead. */
#include "distributed/mpi_plugin.h"
#include "mpi_reduce.h"
#include "mpi_ring.h"
#include "mpi_deadline.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MPI_Comm comm = MPI_COMM_NULL;    /* the world (a duplicate of MPI_COMM_WORLD) */
static int started_mpi;      /* we called MPI_Init_thread, so we finalize */
static int broken;           /* a call failed or timed out: refuse the rest */
static char broken_why[512];

static int fail(char *err, size_t len, int st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t len, int st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return st;
}

static int mpi_fail(char *err, size_t len, const char *what, int rc)
{
    char msg[MPI_MAX_ERROR_STRING];
    int n = 0;
    if (MPI_Error_string(rc, msg, &n) != MPI_SUCCESS) snprintf(msg, sizeof msg, "code %d", rc);
    broken = 1;
    snprintf(broken_why, sizeof broken_why, "%s failed: %s", what, msg);
    return fail(err, len, HWRT_ERROR_DIST, "MPI %s failed: %s; a peer rank has probably died "
                "(check the other ranks' output); the group is now unusable: finalize and "
                "restart the job", what, msg);
}

static int refuse(char *err, size_t len, const char *what)
{
    if (comm == MPI_COMM_NULL)
        return fail(err, len, HWRT_ERROR_DIST, "MPI %s: the MPI engine is not initialised; "
                    "call hwrt_dist_init first", what);
    return fail(err, len, HWRT_ERROR_DIST, "MPI %s refused: an earlier collective failed (%s); "
                "the group is unusable: finalize and restart the job", what, broken_why);
}

/* A collective passed its deadline: the group is unusable from now on. */
static int timed_out(const char *what, double timeout, char *err, size_t len)
{
    broken = 1;
    snprintf(broken_why, sizeof broken_why, "%s timed out after %.1f s", what, timeout);
    return fail(err, len, HWRT_ERROR_DIST, "MPI %s did not complete within dist_timeout = %.1f s: "
                "a peer rank has died or is stuck before this collective (every rank must call "
                "the same collectives in the same order); the group is now unusable: finalize "
                "and restart the job, or raise dist_timeout (hwrt_set_config or "
                "HWRT_DIST_TIMEOUT) if ranks are legitimately that slow", what, timeout);
}

/* Poll n requests until all are done, an MPI error, or the deadline (MPI_Wtime). */
int hwrt_mpi_waitall(int n, MPI_Request *q, const char *what, double deadline, double timeout,
                     char *err, size_t len)
{
    for (unsigned spin = 0;; spin++) {
        int done = 0;
        int rc = MPI_Testall(n, q, &done, MPI_STATUSES_IGNORE);
        if (rc != MPI_SUCCESS)
            return mpi_fail(err, len, what, rc);
        if (done)
            return HWRT_SUCCESS;
        if ((spin & 63) == 0 && MPI_Wtime() > deadline)
            break;
    }
    return timed_out(what, timeout, err, len);
}

int hwrt_mpi_fail(char *err, size_t len, const char *what, int rc) { return mpi_fail(err, len, what, rc); }

/* A guarded call's result: SUCCESS, an MPI error, or the deadline. */
static int result(int rc, const char *what, double timeout, char *err, size_t len)
{
    if (rc == MPI_SUCCESS) return HWRT_SUCCESS;
    if (rc != HWRT_MPI_TIMED_OUT) return mpi_fail(err, len, what, rc);
    return timed_out(what, timeout, err, len);
}

static int check_count(size_t count, const char *what, char *err, size_t len)
{
    if (count > (size_t)INT_MAX)
        return fail(err, len, HWRT_ERROR_NOT_SUPPORTED, "MPI %s of %zu elements exceeds MPI's "
                    "int count limit (%d); split the tensor into smaller pieces", what, count,
                    INT_MAX);
    return HWRT_SUCCESS;
}

/* The communicator of a call: a sub-communicator from p_comm_create, or the world. */
static MPI_Comm pick(void *sub) { return sub ? *(MPI_Comm *)sub : comm; }

static int p_init(int *rank, int *size, int *thread_level_ok, int *in_call_deadline,
                  char *version, size_t vlen, char *err, size_t len)
{
    int inited = 0, finalized = 0, rc;
    MPI_Finalized(&finalized);
    if (finalized)
        return fail(err, len, HWRT_ERROR_DIST, "MPI was already finalized in this process (by "
                    "hwrt_dist_finalize or the program), and MPI cannot be initialised twice: "
                    "join the group once per process");
    MPI_Initialized(&inited);
    if (!inited) {
        int provided;
        rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
        if (rc != MPI_SUCCESS)
            return fail(err, len, HWRT_ERROR_DIST, "MPI_Init_thread failed (code %d)", rc);
        started_mpi = 1;
    }
    if (comm == MPI_COMM_NULL) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        if ((rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm)) != MPI_SUCCESS)
            return mpi_fail(err, len, "Comm_dup", rc);
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        if (hwrt_mpi_types_init())
            return fail(err, len, HWRT_ERROR_DIST, "MPI: creating the float16/bfloat16 types "
                        "and operators failed");
    }
    *in_call_deadline = hwrt_mpi_deadline_init();
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    *thread_level_ok = level >= MPI_THREAD_SERIALIZED;
    MPI_Comm_rank(comm, rank);
    MPI_Comm_size(comm, size);
    int n = 0;
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Get_library_version(v, &n);
    for (int i = 0; i < n; i++) if (v[i] == '\n' || v[i] == ',') { v[i] = 0; break; }
    snprintf(version, vlen, "%s", v);
    return HWRT_SUCCESS;
}

static int p_finalize(char *err, size_t len)
{
    if (comm == MPI_COMM_NULL || broken)
        return HWRT_SUCCESS;      /* after a failure MPI_Finalize could wait for the dead */
    hwrt_mpi_types_free();
    MPI_Comm_free(&comm);
    comm = MPI_COMM_NULL;
    if (started_mpi) {
        int rc = MPI_Finalize();
        started_mpi = 0;
        if (rc != MPI_SUCCESS)
            return fail(err, len, HWRT_ERROR_DIST, "MPI_Finalize failed (code %d)", rc);
    }
    return HWRT_SUCCESS;
}

/* The MPI datatype and operator of a reduction, or INVALID_ARGUMENT naming them. */
static int type_op(int dtype, int op, const char *what, MPI_Datatype *t, MPI_Op *o, char *err,
                   size_t len)
{
    *t = hwrt_mpi_type(dtype);
    *o = hwrt_mpi_op(dtype, op);
    if (*t == MPI_DATATYPE_NULL || *o == MPI_OP_NULL)
        return fail(err, len, HWRT_ERROR_INVALID_ARGUMENT, "MPI %s: no MPI type/operator for "
                    "dtype %d, op %d", what, dtype, op);
    return 0;
}

static int p_allreduce(void *sub, void *buf, size_t count, int dtype, int op, double timeout,
                       char *err, size_t len)
{
    if (broken || comm == MPI_COMM_NULL) return refuse(err, len, "allreduce");
    int st = check_count(count, "allreduce", err, len);
    MPI_Datatype t;
    MPI_Op o;
    if (!st) st = type_op(dtype, op, "allreduce", &t, &o, err, len);
    if (st) return st;
    MPI_Comm c = pick(sub);
    int tsize = 0, nranks = 1;
    MPI_Type_size(t, &tsize);
    MPI_Comm_size(c, &nranks);
    if (count * (size_t)tsize >= hwrt_mpi_ring_min_bytes() && count >= (size_t)nranks)
        return hwrt_mpi_ring_allreduce(c, buf, (int)count, t, o, timeout, err, len);
    volatile int rc = MPI_SUCCESS;
    HWRT_MPI_GUARDED(rc, timeout, MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, t, o, c));
    return result(rc, "allreduce", timeout, err, len);
}

static int p_broadcast(void *sub, void *buf, size_t bytes, int root, double timeout, char *err,
                       size_t len)
{
    if (broken || comm == MPI_COMM_NULL) return refuse(err, len, "broadcast");
    int st = check_count(bytes, "broadcast (bytes)", err, len);
    if (st) return st;
    volatile int rc = MPI_SUCCESS;
    HWRT_MPI_GUARDED(rc, timeout, MPI_Bcast(buf, (int)bytes, MPI_BYTE, root, pick(sub)));
    return result(rc, "broadcast", timeout, err, len);
}

static int p_allgather(void *sub, const void *in, void *out, size_t bytes, double timeout,
                       char *err, size_t len)
{
    if (broken || comm == MPI_COMM_NULL) return refuse(err, len, "allgather");
    int st = check_count(bytes, "allgather (bytes per rank)", err, len);
    if (st) return st;
    volatile int rc = MPI_SUCCESS;
    HWRT_MPI_GUARDED(rc, timeout, MPI_Allgather(in, (int)bytes, MPI_BYTE, out, (int)bytes,
                                                MPI_BYTE, pick(sub)));
    return result(rc, "allgather", timeout, err, len);
}

static int p_reduce_scatter(void *sub, const void *in, void *out, size_t count, int dtype,
                            int op, double timeout, char *err, size_t len)
{
    if (broken || comm == MPI_COMM_NULL) return refuse(err, len, "reduce_scatter");
    int st = check_count(count, "reduce_scatter", err, len);
    MPI_Datatype t;
    MPI_Op o;
    if (!st) st = type_op(dtype, op, "reduce_scatter", &t, &o, err, len);
    if (st) return st;
    volatile int rc = MPI_SUCCESS;
    HWRT_MPI_GUARDED(rc, timeout, MPI_Reduce_scatter_block(in, out, (int)count, t, o,
                                                           pick(sub)));
    return result(rc, "reduce_scatter", timeout, err, len);
}

static int p_barrier(void *sub, double timeout, char *err, size_t len)
{
    if (broken || comm == MPI_COMM_NULL) return refuse(err, len, "barrier");
    volatile int rc = MPI_SUCCESS;
    HWRT_MPI_GUARDED(rc, timeout, MPI_Barrier(pick(sub)));
    return result(rc, "barrier", timeout, err, len);
}

/* The tag of MPI_Comm_create_group: creations are serialized per process and members
 * create their groups in the same order, so one tag serves them all. */
#define GROUP_TAG 0x6877

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int position(const int *ranks, int n, int r)
{
    for (int i = 0; i < n; i++) if (ranks[i] == r) return i;
    return -1;
}

/* FNV-1a of the list as given (order included). */
static unsigned long long list_hash(const int *ranks, int n)
{
    unsigned long long h = 1469598103934665603ull;
    for (int i = 0; i < n; i++)
        for (int b = 0; b < 4; b++) {
            h ^= ((unsigned)ranks[i] >> (8 * b)) & 0xffu;
            h *= 1099511628211ull;
        }
    return h;
}

/* The members build the communicator of the *sorted* list (the same on every member when
 * the sets agree, so lists that differ only in order cannot leave MPI waiting), compare
 * their lists as given over it, then order it as the list says (MPI_Comm_split with the
 * position as key): rank i of the result is world rank ranks[i]. */
static int p_comm_create(const int *ranks, int n, double timeout, void **out, char *err,
                         size_t len)
{
    if (broken || comm == MPI_COMM_NULL) return refuse(err, len, "comm_create");
    int me;
    MPI_Comm_rank(comm, &me);
    const int pos = position(ranks, n, me);
    int *sorted = malloc((size_t)n * sizeof *sorted);
    MPI_Comm *nc = malloc(sizeof *nc);
    unsigned long long (*all)[2] = malloc((size_t)n * sizeof *all);
    if (!sorted || !nc || !all || pos < 0) {
        free(sorted); free(nc); free(all);
        return pos < 0 ? fail(err, len, HWRT_ERROR_INVALID_ARGUMENT, "MPI comm_create: world "
                              "rank %d is not in the list", me)
                       : fail(err, len, HWRT_ERROR_HOST_OUT_OF_MEMORY, "MPI comm_create: host "
                              "out of memory");
    }
    memcpy(sorted, ranks, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_int);
    MPI_Group world_g, sub_g;
    int rc = MPI_Comm_group(comm, &world_g);
    if (rc == MPI_SUCCESS) {
        rc = MPI_Group_incl(world_g, n, sorted, &sub_g);
        MPI_Group_free(&world_g);
    }
    free(sorted);
    if (rc != MPI_SUCCESS) { free(nc); free(all); return mpi_fail(err, len, "Group_incl", rc); }
    MPI_Comm byset = MPI_COMM_NULL;
    volatile int vrc = MPI_SUCCESS;
    HWRT_MPI_GUARDED(vrc, timeout, MPI_Comm_create_group(comm, sub_g, GROUP_TAG, &byset));
    int st = result(vrc, "Comm_create_group", timeout, err, len);
    if (st) {            /* after a timeout MPI may still use them: leaked */
        if (vrc != HWRT_MPI_TIMED_OUT) { free(nc); free(all); MPI_Group_free(&sub_g); }
        return st;
    }
    MPI_Group_free(&sub_g);
    MPI_Comm_set_errhandler(byset, MPI_ERRORS_RETURN);
    unsigned long long mine[2] = {(unsigned long long)n, list_hash(ranks, n)};
    HWRT_MPI_GUARDED(vrc, timeout, MPI_Allgather(mine, 2, MPI_UNSIGNED_LONG_LONG, all, 2,
                                                 MPI_UNSIGNED_LONG_LONG, byset));
    st = result(vrc, "comm_create (list check)", timeout, err, len);
    for (int r = 0; !st && r < n; r++)
        if (all[r][0] != mine[0] || all[r][1] != mine[1])
            st = fail(err, len, HWRT_ERROR_INVALID_ARGUMENT, "the members of the group passed "
                      "different lists (the same ranks in another order); every member must "
                      "pass the same list, in the same order");
    free(all);
    if (!st) {
        HWRT_MPI_GUARDED(vrc, timeout, MPI_Comm_split(byset, 0, pos, nc));
        st = result(vrc, "Comm_split", timeout, err, len);
    }
    if (vrc == HWRT_MPI_TIMED_OUT) return st;   /* leaked, as above */
    MPI_Comm_free(&byset);
    if (st) { free(nc); return st; }
    MPI_Comm_set_errhandler(*nc, MPI_ERRORS_RETURN);
    *out = nc;
    return HWRT_SUCCESS;
}

static int p_comm_free(void *sub, char *err, size_t len)
{
    MPI_Comm *c = sub;
    if (!c) return HWRT_SUCCESS;
    int rc = broken ? MPI_SUCCESS : MPI_Comm_free(c);   /* after a failure: leave MPI alone */
    free(c);
    if (rc != MPI_SUCCESS) return mpi_fail(err, len, "Comm_free", rc);
    return HWRT_SUCCESS;
}

static const hwi_mpi_plugin table = {
    .abi = HWI_MPI_ABI,
    .init = p_init,
    .finalize = p_finalize,
    .allreduce = p_allreduce,
    .broadcast = p_broadcast,
    .allgather = p_allgather,
    .reduce_scatter = p_reduce_scatter,
    .barrier = p_barrier,
    .comm_create = p_comm_create,
    .comm_free = p_comm_free,
};

__attribute__((visibility("default"))) const hwi_mpi_plugin *hwrt_mpi_plugin(uint32_t abi)
{
    return abi == HWI_MPI_ABI ? &table : NULL;
}
