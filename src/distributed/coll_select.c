/* Choosing the collective engine (see coll_select.h). */
#include "coll_select.h"
#include "nccl_engine.h"
#include "../base/log.h"
#include "../base/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const want_names[] = {"auto", "mpi", "nccl"};

hwrt_status hwi_coll_want(int *want)
{
    const char *v = getenv("HWRT_COLL_ENGINE");
    *want = HWI_COLL_AUTO;
    if (!v || !*v) return HWRT_SUCCESS;
    for (int i = 0; i < 3; i++)
        if (!strcmp(v, want_names[i])) {
            *want = i;
            return HWRT_SUCCESS;
        }
    return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "HWRT_COLL_ENGINE=\"%.64s\" names no collective "
                   "engine; use auto (NCCL on cuda devices, else MPI), mpi or nccl", v);
}

void hwi_coll_vote_local(int want, const char *backend, hwi_coll_vote *v)
{
    memset(v, 0, sizeof *v);
    v->want = want;
    if (want == HWI_COLL_MPI) {
        snprintf(v->why, sizeof v->why, "HWRT_COLL_ENGINE=mpi");
        return;
    }
    if (!backend || strcmp(backend, "cuda")) {
        snprintf(v->why, sizeof v->why, "the device backend is %s, and NCCL runs on cuda devices "
                 "only", backend && *backend ? backend : "not selected");
        return;
    }
    const hwi_coll_engine *e;
    v->can = hwi_nccl_engine_open(&e, v->why, sizeof v->why) == HWRT_SUCCESS;
}

hwrt_status hwi_coll_decide(const hwi_coll_vote *v, int n, int *use_nccl, char *msg, size_t len)
{
    int mpi_rank = -1, nccl_rank = -1, cannot = -1;
    for (int r = 0; r < n; r++) {
        if (v[r].want == HWI_COLL_MPI && mpi_rank < 0) mpi_rank = r;
        if (v[r].want == HWI_COLL_NCCL && nccl_rank < 0) nccl_rank = r;
        if (!v[r].can && v[r].want != HWI_COLL_MPI && cannot < 0) cannot = r;
    }
    *use_nccl = 0;
    if (mpi_rank >= 0 && nccl_rank >= 0)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "rank %d sets HWRT_COLL_ENGINE=mpi but rank "
                       "%d sets nccl: every rank must use the same engine; set one value on "
                       "all ranks", mpi_rank, nccl_rank);
    if (mpi_rank >= 0) {
        snprintf(msg, len, "mpi (HWRT_COLL_ENGINE=mpi on rank %d)", mpi_rank);
        return HWRT_SUCCESS;
    }
    if (cannot >= 0) {
        char why[sizeof v->why];
        memcpy(why, v[cannot].why, sizeof why);
        why[sizeof why - 1] = 0;
        if (nccl_rank >= 0)
            return hwi_err(HWRT_ERROR_UNAVAILABLE, "HWRT_COLL_ENGINE=nccl, but rank %d of %d "
                           "cannot run NCCL: %s (unset HWRT_COLL_ENGINE to fall back to MPI)",
                           cannot, n, why);
        snprintf(msg, len, "mpi (auto: rank %d of %d cannot run NCCL: %s)", cannot, n, why);
        return HWRT_SUCCESS;
    }
    *use_nccl = 1;
    snprintf(msg, len, "nccl (%s: every rank has NCCL on a cuda device)",
             nccl_rank >= 0 ? "HWRT_COLL_ENGINE=nccl" : "auto");
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
    if (d->size == 1 && want != HWI_COLL_NCCL) {   /* one process: nothing to move */
        *out = d->coll = d->eng;
        return HWRT_SUCCESS;
    }
    /* (HWRT_COLL_ENGINE=nccl with one process runs NCCL with one rank: the whole path on a
     * machine with one GPU) */
    hwi_coll_vote me, *all = calloc((size_t)d->size, sizeof *all);
    if (!all) return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "choosing the collective engine: "
                             "host out of memory");
    hwi_coll_vote_local(want, hwrt_current_backend(), &me);
    hwrt_status st = d->eng->allgather(NULL, &me, all, sizeof me, NULL);
    int use_nccl = 0;
    char msg[512] = "";
    if (st == HWRT_SUCCESS) st = hwi_coll_decide(all, d->size, &use_nccl, msg, sizeof msg);
    else hwi_err_prefix(st, "choosing the collective engine");
    free(all);
    HWI_TRY(st);
    const hwi_coll_engine *e = d->eng;
    if (use_nccl) {
        char why[256];
        HWI_TRY(hwi_nccl_engine_open(&e, why, sizeof why));   /* loaded by the vote */
    }
    /* a cuda job that falls back to MPI stages through host memory: say so louder */
    int level = !use_nccl && !strcmp(hwrt_current_backend(), "cuda") && want != HWI_COLL_MPI
                    ? HWI_LOG_WARN : HWI_LOG_INFO;
    hwi_log(level, "collective engine: %s", msg);
    *out = d->coll = e;
    return HWRT_SUCCESS;
}
