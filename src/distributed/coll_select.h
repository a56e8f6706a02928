/* Which engine runs the collectives on tensors: the device backend's own collective
 * library when every rank can load it (NCCL on cuda devices, HCCL on ascend devices), else
 * MPI (the fallback); HWRT_COLL_ENGINE=auto|mpi|nccl|hccl overrides. Chosen at the first
 * collective (the device backend is known by then), by all ranks together. */
#ifndef HWI_COLL_SELECT_H
#define HWI_COLL_SELECT_H

#include "dist.h"

#include <stdint.h>

enum { HWI_COLL_AUTO = 0, HWI_COLL_MPI = 1, HWI_COLL_NCCL = 2, HWI_COLL_HCCL = 3 };

/* HWRT_COLL_ENGINE: unset, "" or "auto", "mpi", "nccl", "hccl"; INVALID_ARGUMENT naming
 * the value and the accepted ones otherwise. */
hwrt_status hwi_coll_want(int *want);

/* One rank's say: what it wants, which device engine its backend has (HWI_COLL_NCCL for
 * cuda, HWI_COLL_HCCL for ascend, 0 for none) and whether it can run the engine it would
 * use (why not, if not). */
typedef struct hwi_coll_vote {
    int32_t want, can, dev;
    char why[240];
} hwi_coll_vote;
void hwi_coll_vote_local(int want, const char *backend, hwi_coll_vote *v);

/* The verdict from every rank's vote (all ranks compute the same): *use (HWI_COLL_MPI,
 * _NCCL or _HCCL), and msg saying why. Errors: UNAVAILABLE when a device engine is
 * required and a rank cannot run it, INVALID_ARGUMENT when ranks require different
 * engines. */
hwrt_status hwi_coll_decide(const hwi_coll_vote *v, int n, int *use, char *msg, size_t len);

/* The engine for tensor collectives (hwi_dist_g.coll), chosen at the first call. */
hwrt_status hwi_coll_engine_get(const hwi_coll_engine **out);

#endif
