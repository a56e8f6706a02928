/* Choosing the collective engine (see coll_select.h). */
#include "coll_select.h"
#include "hccl_engine.h"
#include "nccl_engine.h"
#include "../base/log.h"
#include "../base/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const want_names[] = {"auto", "mpi", "nccl", "hccl"};
static const char *const lib_names[] = {"", "MPI", "NCCL", "HCCL"};

/* The device engine of a backend, and the backend each device engine runs on. */
static int dev_engine_of(const char *backend)
{
    if (backend && !strcmp(backend, "cuda")) return HWI_COLL_NCCL;
    if (backend && !strcmp(backend, "ascend")) return HWI_COLL_HCCL;
    return 0;
}
static const char *backend_of_engine(int e) { return e == HWI_COLL_NCCL ? "cuda" : "ascend"; }

hwrt_status hwi_coll_want(int *want)
{
    const char *v = getenv("HWRT_COLL_ENGINE");
    *want = HWI_COLL_AUTO;
    if (!v || !*v) return HWRT_SUCCESS;
    for (int i = 0; i < (int)(sizeof want_names / sizeof want_names[0]); i++)
        if (!strcmp(v, want_names[i])) {
            *want = i;
            return HWRT_SUCCESS;
        }
    return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "HWRT_COLL_ENGINE=\"%.64s\" names no collective "
                   "engine; use auto (NCCL on cuda devices, HCCL on ascend devices, else MPI), "
                   "mpi, nccl or hccl", v);
}

void hwi_coll_vote_local(int want, const char *backend, hwi_coll_vote *v)
{
    memset(v, 0, sizeof *v);
    v->want = want;
    v->dev = dev_engine_of(backend);
    if (want == HWI_COLL_MPI) {
        snprintf(v->why, sizeof v->why, "HWRT_COLL_ENGINE=mpi");
        return;
    }
    int e = want == HWI_COLL_AUTO ? v->dev : want;    /* the engine this rank would run */
    const char *b = backend && *backend ? backend : "not selected";
    if (!e) {
        snprintf(v->why, sizeof v->why, "the device backend is %s, and NCCL runs on cuda "
                 "devices only, HCCL on ascend devices only", b);
        return;
    }
    if (e != v->dev) {
        snprintf(v->why, sizeof v->why, "the device backend is %s, and %s runs on %s devices "
                 "only", b, lib_names[e], backend_of_engine(e));
        return;
    }
    const hwi_coll_engine *eng;
    v->can = (e == HWI_COLL_NCCL ? hwi_nccl_engine_open(&eng, v->why, sizeof v->why)
                                 : hwi_hccl_engine_open(&eng, v->why, sizeof v->why)) == HWRT_SUCCESS;
}

/* The name of the engine rank r would run, for sentences. */
static const char *lib_of(const hwi_coll_vote *v)
{
    int e = v->want > HWI_COLL_MPI ? v->want : v->dev;
    return e ? lib_names[e] : "NCCL or HCCL";
}

hwrt_status hwi_coll_decide(const hwi_coll_vote *v, int n, int *use, char *msg, size_t len)
{
    int mpi_rank = -1, dev_rank = -1, cannot = -1, other = -1;
    for (int r = 0; r < n; r++) {
        if (v[r].want == HWI_COLL_MPI && mpi_rank < 0) mpi_rank = r;
        if (v[r].want > HWI_COLL_MPI) {
            if (dev_rank < 0) dev_rank = r;
            else if (v[r].want != v[dev_rank].want && other < 0) other = r;
        }
        if (!v[r].can && v[r].want != HWI_COLL_MPI && cannot < 0) cannot = r;
    }
    *use = HWI_COLL_MPI;
    if (mpi_rank >= 0 && dev_rank >= 0)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "rank %d sets HWRT_COLL_ENGINE=mpi but rank "
                       "%d sets %s: every rank must use the same engine; set one value on "
                       "all ranks", mpi_rank, dev_rank, want_names[v[dev_rank].want]);
    if (other >= 0)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "rank %d sets HWRT_COLL_ENGINE=%s but rank "
                       "%d sets %s: every rank must use the same engine; set one value on all "
                       "ranks", dev_rank, want_names[v[dev_rank].want], other,
                       want_names[v[other].want]);
    if (mpi_rank >= 0) {
        snprintf(msg, len, "mpi (HWRT_COLL_ENGINE=mpi on rank %d)", mpi_rank);
        return HWRT_SUCCESS;
    }
    if (cannot >= 0) {
        char why[sizeof v->why];
        memcpy(why, v[cannot].why, sizeof why);
        why[sizeof why - 1] = 0;
        if (dev_rank >= 0)
            return hwi_err(HWRT_ERROR_UNAVAILABLE, "HWRT_COLL_ENGINE=%s, but rank %d of %d "
                           "cannot run %s: %s (unset HWRT_COLL_ENGINE to fall back to MPI)",
                           want_names[v[dev_rank].want], cannot, n, lib_of(&v[cannot]), why);
        snprintf(msg, len, "mpi (auto: rank %d of %d cannot run %s: %s)", cannot, n,
                 lib_of(&v[cannot]), why);
        return HWRT_SUCCESS;
    }
    /* every rank can run its device engine: the same one everywhere? */
    for (int r = 1; r < n; r++)
        if (v[r].dev != v[0].dev) {
            snprintf(msg, len, "mpi (auto: rank 0 runs on %s devices but rank %d on %s devices; "
                     "a device engine needs one backend on every rank)",
                     backend_of_engine(v[0].dev), r, backend_of_engine(v[r].dev));
            return HWRT_SUCCESS;
        }
    *use = v[0].dev;
    snprintf(msg, len, "%s (%s: every rank has %s on a%s %s device)", want_names[*use],
             dev_rank >= 0 ? (*use == HWI_COLL_NCCL ? "HWRT_COLL_ENGINE=nccl"
                                                     : "HWRT_COLL_ENGINE=hccl") : "auto",
             lib_names[*use], *use == HWI_COLL_HCCL ? "n" : "", backend_of_engine(*use));
    return HWRT_SUCCESS;
}

hwrt_status hwi_coll_engine_get(const hwi_coll_engine **out)
{
    hwi_dist *d = &hwi_dist_g;
    if (d->coll) {
        *out = d->coll;
        return HWRT_SUCCESS;
    }
    int want;
    HWI_TRY(hwi_coll_want(&want));
    if (d->size == 1 && want <= HWI_COLL_MPI) {   /* one process: nothing to move */
        *out = d->coll = d->eng;
        return HWRT_SUCCESS;
    }
    /* (HWRT_COLL_ENGINE=nccl or hccl with one process runs the device engine with one
     * rank: the whole path on a machine with one device) */
    hwi_coll_vote me, *all = calloc((size_t)d->size, sizeof *all);
    if (!all) return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "choosing the collective engine: "
                             "host out of memory");
    hwi_coll_vote_local(want, hwrt_current_backend(), &me);
    hwrt_status st = d->eng->allgather(NULL, &me, all, sizeof me, NULL);
    int use = HWI_COLL_MPI;
    char msg[512] = "";
    if (st == HWRT_SUCCESS) st = hwi_coll_decide(all, d->size, &use, msg, sizeof msg);
    else hwi_err_prefix(st, "choosing the collective engine");
    free(all);
    HWI_TRY(st);
    const hwi_coll_engine *e = d->eng;
    char why[256];
    if (use == HWI_COLL_NCCL) HWI_TRY(hwi_nccl_engine_open(&e, why, sizeof why));   /* loaded by the vote */
    if (use == HWI_COLL_HCCL) HWI_TRY(hwi_hccl_engine_open(&e, why, sizeof why));
    /* a device job that falls back to MPI stages through host memory: say so louder */
    int level = use == HWI_COLL_MPI && me.dev && want != HWI_COLL_MPI ? HWI_LOG_WARN : HWI_LOG_INFO;
    hwi_log(level, "collective engine: %s", msg);
    *out = d->coll = e;
    return HWRT_SUCCESS;
}
