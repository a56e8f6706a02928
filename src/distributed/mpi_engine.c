/* The MPI engine: loads libhwrt_mpi.so at run time (base/dynlib; libhwrt never links
 * MPI) and adapts its table to the engine seam, turning its (status, sentence) pairs
 * into hwi_err. */
#define _GNU_SOURCE 1   /* dladdr */
#include "dist.h"
#include "mpi_plugin.h"
#include "comm_thread.h"
#include "../base/log.h"
#include "../base/config.h"
#include "../base/dynlib.h"
#include "../base/sigpipe_hold.h"
#include "../base/status.h"

#include <dlfcn.h>                /* dladdr: where libhwrt is */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PLUGIN_NAME "libhwrt_mpi.so"

static const hwi_mpi_plugin *plug;
static void *plug_handle;
static int in_call;     /* the plugin enforces deadlines itself: call it directly */

static double timeout_s(void) { return hwi_cfg_double(HWI_CFG_DIST_TIMEOUT); }

static hwrt_status wrap(int st, const char *err)
{
    if (st == HWRT_SUCCESS) return HWRT_SUCCESS;
    return hwi_err((hwrt_status)st, "%s", err);
}

/* One plugin call, as a job for the communication thread. Heap-allocated: after a
 * timeout the stuck thread may still touch it, so it is then leaked, never freed. */
typedef struct {
    enum { J_ALLREDUCE, J_BCAST, J_ALLGATHER, J_REDUCE_SCATTER, J_BARRIER, J_GROUP_CREATE,
           J_GROUP_FREE } kind;
    void *comm;                /* the group's communicator, NULL: the world */
    void *buf;
    const void *in;
    size_t n;
    int dtype, op, root;
    double timeout;
    void **made;               /* J_GROUP_CREATE: where the communicator goes */
} job;

static int call_plugin(const job *j, char *err, size_t len)
{
    switch (j->kind) {
    case J_ALLREDUCE:
        return plug->allreduce(j->comm, j->buf, j->n, j->dtype, j->op, j->timeout, err, len);
    case J_BCAST: return plug->broadcast(j->comm, j->buf, j->n, j->root, j->timeout, err, len);
    case J_ALLGATHER: return plug->allgather(j->comm, j->in, j->buf, j->n, j->timeout, err, len);
    case J_REDUCE_SCATTER:
        return plug->reduce_scatter(j->comm, j->in, j->buf, j->n, j->dtype, j->op, j->timeout,
                                    err, len);
    case J_GROUP_CREATE:
        return plug->comm_create(j->in, (int)j->n, j->timeout, j->made, err, len);
    case J_GROUP_FREE: return plug->comm_free(j->comm, err, len);
    default: return plug->barrier(j->comm, j->timeout, err, len);
    }
}

/* After every plugin call: a SIGPIPE that Open MPI's TCP transport raised writing to a
 * dead peer's connection (sigpipe_hold.h) was taken; the call reports the failure. */
static void sigpipe_taken(hwi_sigpipe_hold *h, const char *what)
{
    if (hwi_sigpipe_hold_end(h))
        hwi_log(HWI_LOG_INFO, "%s: a write to a closed connection inside MPI raised SIGPIPE, "
                "which hwrt discarded so that the process lives to report the failure (a peer "
                "has probably died)", what);
}

/* On the calling thread or the communication thread: each holds SIGPIPE off itself. */
static int run_job(void *arg, char *err, size_t len)
{
    hwi_sigpipe_hold h;
    hwi_sigpipe_hold_begin(&h);
    int st = call_plugin(arg, err, len);
    sigpipe_taken(&h, "MPI collective");
    return st;
}

static hwrt_status submit(job j, const char *what)
{
    j.timeout = timeout_s();
    if (in_call) {                 /* the plugin bounds the call itself: no thread handoff */
        char err[1024];
        return wrap(run_job(&j, err, sizeof err), err);
    }
    job *h = malloc(sizeof *h);
    if (!h)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "%s: host out of memory", what);
    *h = j;
    hwrt_status st = hwi_comm_run(run_job, h, h->timeout, what);
    if (!hwi_comm_broken()) free(h);
    return st;
}

static hwrt_status m_allreduce(void *comm, void *buf, size_t count, hwrt_dtype dt,
                               hwrt_reduce_op op, hwi_stream *s)
{
    return submit((job){.kind = J_ALLREDUCE, .comm = comm, .buf = buf, .n = count,
                        .dtype = (int)dt, .op = (int)op}, "MPI allreduce");
}

static hwrt_status m_broadcast(void *comm, void *buf, size_t bytes, int root, hwi_stream *s)
{
    return submit((job){.kind = J_BCAST, .comm = comm, .buf = buf, .n = bytes, .root = root},
                  "MPI broadcast");
}

static hwrt_status m_allgather(void *comm, const void *in, void *out, size_t bytes, hwi_stream *s)
{
    return submit((job){.kind = J_ALLGATHER, .comm = comm, .in = in, .buf = out, .n = bytes},
                  "MPI allgather");
}

static hwrt_status m_reduce_scatter(void *comm, const void *in, void *out, size_t count,
                                    hwrt_dtype dt, hwrt_reduce_op op, hwi_stream *s)
{
    return submit((job){.kind = J_REDUCE_SCATTER, .comm = comm, .in = in, .buf = out,
                        .n = count, .dtype = (int)dt, .op = (int)op}, "MPI reduce_scatter");
}

static hwrt_status m_barrier(void *comm)
{
    return submit((job){.kind = J_BARRIER, .comm = comm}, "MPI barrier");
}

/* The list and the result slot live in the caller's frame: after a timeout the stuck
 * call may still write the slot, so the communication thread gets a heap copy of both,
 * in one block. */
typedef struct {
    void *made;                /* where the communicator goes */
    int list[];
} group_args;

static hwrt_status m_group_create(const int *ranks, int n, void **comm)
{
    group_args *a = malloc(sizeof *a + (size_t)n * sizeof a->list[0]);
    if (!a) return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "MPI group create: host out of memory");
    memcpy(a->list, ranks, (size_t)n * sizeof a->list[0]);
    a->made = NULL;
    hwrt_status st = submit((job){.kind = J_GROUP_CREATE, .in = a->list, .n = (size_t)n,
                                  .made = &a->made}, "MPI group create");
    if (hwi_comm_broken()) return st;         /* the stuck thread may still use it */
    *comm = a->made;
    free(a);
    return st;
}

static hwrt_status m_group_free(void *comm)
{
    return submit((job){.kind = J_GROUP_FREE, .comm = comm}, "MPI group free");
}

/* On the calling thread (MPI_Finalize belongs to the thread that initialised MPI); not
 * after a timeout, when the communication thread is stuck inside MPI. */
static hwrt_status m_finalize(void)
{
    if (hwi_comm_broken())
        return HWRT_SUCCESS;
    hwi_comm_stop();
    char err[1024];
    hwi_sigpipe_hold h;
    hwi_sigpipe_hold_begin(&h);
    int st = plug->finalize(err, sizeof err);
    sigpipe_taken(&h, "MPI finalize");
    return wrap(st, err);
}

static const hwi_coll_engine mpi_engine = {
    .name = "mpi", .host_memory = 1,
    .allreduce = m_allreduce, .broadcast = m_broadcast, .allgather = m_allgather,
    .reduce_scatter = m_reduce_scatter, .barrier = m_barrier, .group_create = m_group_create,
    .group_free = m_group_free, .finalize = m_finalize,
};

/* HWRT_MPI_PLUGIN, else next to libhwrt (found with dladdr), else the search path; the
 * reason names each that failed. RTLD_GLOBAL because Open MPI's own components, loaded
 * later by libmpi, need libmpi's symbols global. */
static hwrt_status load_plugin(void)
{
    char why[2048] = "", beside[4096] = "";
    Dl_info di;
    if (dladdr((void *)hwrt_dist_init, &di) && di.dli_fname) {
        char self[4096];
        snprintf(self, sizeof self, "%s", di.dli_fname);
        snprintf(beside, sizeof beside, "%s/" PLUGIN_NAME, dirname(self));
        if (access(beside, F_OK) != 0) beside[0] = 0;
    }
    const char *next_to_self[] = {beside, NULL}, *on_search_path[] = {PLUGIN_NAME, NULL};
    const char *forced = getenv("HWRT_MPI_PLUGIN");
    void *h = hwi_dynlib_open_flags("HWRT_MPI_PLUGIN", beside[0] ? next_to_self : on_search_path,
                                    HWI_DYNLIB_GLOBAL, NULL, why, sizeof why);
    if (!h && beside[0] && !(forced && *forced)) {
        size_t o = strlen(why);
        snprintf(why + o, sizeof why - o, "; ");
        o = strlen(why);
        h = hwi_dynlib_open_flags(NULL, on_search_path, HWI_DYNLIB_GLOBAL, NULL, why + o,
                                  sizeof why - o);
    }
    if (!h)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "the MPI plugin could not be loaded (%s), so "
                       "ranks cannot communicate: build hwrt with Open MPI installed "
                       "(Debian: apt-get install libopenmpi-dev openmpi-bin) so that "
                       PLUGIN_NAME " sits next to libhwrt, or point HWRT_MPI_PLUGIN at it",
                       why);
    hwi_mpi_entry_fn entry = (hwi_mpi_entry_fn)hwi_dynlib_find(&h, 1, HWI_MPI_ENTRY);
    const hwi_mpi_plugin *p = entry ? entry(HWI_MPI_ABI) : NULL;
    if (!p) {
        dlclose(h);
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "the MPI plugin that was loaded has no %s for "
                       "ABI %u (a plugin from another hwrt version?): rebuild hwrt",
                       HWI_MPI_ENTRY, HWI_MPI_ABI);
    }
    plug = p;
    plug_handle = h;   /* kept open for the process: libmpi cannot be unloaded safely */
    return HWRT_SUCCESS;
}

hwrt_status hwi_mpi_engine_open(const hwi_coll_engine **eng, int *rank, int *size,
                                char *version, size_t vlen)
{
    if (!plug) HWI_TRY(load_plugin());
    char err[1024];
    int threads_ok = 0;
    hwi_sigpipe_hold h;
    hwi_sigpipe_hold_begin(&h);
    int st = plug->init(rank, size, &threads_ok, &in_call, version, vlen, err, sizeof err);
    sigpipe_taken(&h, "MPI init");
    HWI_TRY(wrap(st, err));
    if (!threads_ok && !in_call)
        hwi_log(HWI_LOG_WARN, "MPI was initialised below MPI_THREAD_SERIALIZED; hwrt calls MPI "
                "from its communication thread, one call at a time (initialise MPI with "
                "MPI_Init_thread(..., MPI_THREAD_SERIALIZED, ...) to be within the standard)");
    *eng = &mpi_engine;
    return HWRT_SUCCESS;
}
