/* The MPI engine: loads libhwrt_mpi.so with dlopen (libhwrt never links MPI) and adapts
 * its table to the engine seam, turning its (status, sentence) pairs into hwi_err. */
#define _GNU_SOURCE 1   /* dladdr */
#include "dist.h"
#include "mpi_plugin.h"
#include "../core/config.h"
#include "../core/status.h"

#include <dlfcn.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PLUGIN_NAME "libhwrt_mpi.so"

static const hwi_mpi_plugin *plug;
static void *plug_handle;

static double timeout_s(void) { return hwi_cfg_double(HWI_CFG_DIST_TIMEOUT); }

static hwrt_status wrap(int st, const char *err)
{
    if (st == HWRT_SUCCESS) return HWRT_SUCCESS;
    return hwi_err((hwrt_status)st, "%s", err);
}

static hwrt_status m_allreduce(void *buf, size_t count, hwrt_dtype dt, hwrt_reduce_op op,
                               hwi_stream *s)
{
    char err[1024];
    return wrap(plug->allreduce(buf, count, (int)dt, (int)op, timeout_s(), err, sizeof err), err);
}

static hwrt_status m_broadcast(void *buf, size_t bytes, int root, hwi_stream *s)
{
    char err[1024];
    return wrap(plug->broadcast(buf, bytes, root, timeout_s(), err, sizeof err), err);
}

static hwrt_status m_allgather(const void *in, void *out, size_t bytes, hwi_stream *s)
{
    char err[1024];
    return wrap(plug->allgather(in, out, bytes, timeout_s(), err, sizeof err), err);
}

static hwrt_status m_reduce_scatter(const void *in, void *out, size_t count, hwrt_dtype dt,
                                    hwrt_reduce_op op, hwi_stream *s)
{
    char err[1024];
    return wrap(plug->reduce_scatter(in, out, count, (int)dt, (int)op, timeout_s(), err,
                                     sizeof err), err);
}

static hwrt_status m_barrier(void)
{
    char err[1024];
    return wrap(plug->barrier(timeout_s(), err, sizeof err), err);
}

static hwrt_status m_finalize(void)
{
    char err[1024];
    return wrap(plug->finalize(err, sizeof err), err);
}

static const hwi_coll_engine mpi_engine = {
    .name = "mpi", .host_memory = 1,
    .allreduce = m_allreduce, .broadcast = m_broadcast, .allgather = m_allgather,
    .reduce_scatter = m_reduce_scatter, .barrier = m_barrier, .finalize = m_finalize,
};

/* Open one candidate path; on failure append dlerror() to why. RTLD_GLOBAL because Open
 * MPI's own components, loaded later by libmpi, need libmpi's symbols global. */
static void *try_open(const char *path, char *why, size_t len)
{
    dlerror();
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        const char *e = dlerror();
        size_t o = strlen(why);
        snprintf(why + o, len - o, "%s%s", o ? "; " : "", e ? e : path);
    }
    return h;
}

/* HWRT_MPI_PLUGIN, else next to libhwrt (found with dladdr), else the search path. */
static hwrt_status load_plugin(void)
{
    char why[2048] = "", path[4096];
    const char *forced = getenv("HWRT_MPI_PLUGIN");
    void *h = NULL;
    if (forced && *forced) {
        h = try_open(forced, why, sizeof why);
    } else {
        Dl_info di;
        if (dladdr((void *)hwrt_dist_init, &di) && di.dli_fname) {
            char self[4096];
            snprintf(self, sizeof self, "%s", di.dli_fname);
            snprintf(path, sizeof path, "%s/" PLUGIN_NAME, dirname(self));
            if (access(path, F_OK) == 0) h = try_open(path, why, sizeof why);
        }
        if (!h) h = try_open(PLUGIN_NAME, why, sizeof why);
    }
    if (!h)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "the MPI plugin could not be loaded (%s), so "
                       "ranks cannot communicate: build hwrt with Open MPI installed "
                       "(Debian: apt-get install libopenmpi-dev openmpi-bin) so that "
                       PLUGIN_NAME " sits next to libhwrt, or point HWRT_MPI_PLUGIN at it",
                       why);
    hwi_mpi_entry_fn entry = (hwi_mpi_entry_fn)dlsym(h, HWI_MPI_ENTRY);
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
    HWI_TRY(wrap(plug->init(rank, size, version, vlen, err, sizeof err), err));
    *eng = &mpi_engine;
    return HWRT_SUCCESS;
}
