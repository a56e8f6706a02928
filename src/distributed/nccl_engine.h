/* The NCCL collective engine (nccl_engine.c) and the unique-id exchange it starts with. */
#ifndef HWI_NCCL_ENGINE_H
#define HWI_NCCL_ENGINE_H

#include "dist.h"
#include "nccl_api.h"

/* The engine, once NCCL and libcuda's calls are loaded; UNAVAILABLE with the reason in
 * why otherwise. Its communicator is made at the first collective. */
hwrt_status hwi_nccl_engine_open(const hwi_coll_engine **eng, char *why, size_t len);

/* Collective over mpi (host memory): every rank loads NCCL and reports (with local_st
 * and local_msg, a failure of its own found before); rank 0 makes the unique id
 * (ncclGetUniqueId) and broadcasts it. All ranks get the same verdict: the id, or the
 * first failing rank's sentence (UNAVAILABLE when its NCCL would not load). */
hwrt_status hwi_nccl_exchange_id(const hwi_coll_engine *mpi, int rank, int size,
                                 hwrt_status local_st, const char *local_msg,
                                 hc_ncclUniqueId *id);

#endif
