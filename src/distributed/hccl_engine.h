/* The HCCL collective engine (hccl_engine.c) and the root-info exchange it starts with. */
#ifndef HWI_HCCL_ENGINE_H
#define HWI_HCCL_ENGINE_H

#include "dist.h"
#include "hccl_api.h"

/* The engine, once HCCL is loaded; UNAVAILABLE with the reason in why otherwise. Its
 * communicator is made at the first collective. */
hwrt_status hwi_hccl_engine_open(const hwi_coll_engine **eng, char *why, size_t len);

/* Collective over mpi (host memory): every rank loads HCCL and reports (with local_st and
 * local_msg, a failure of its own found before); rank 0 makes the root info
 * (HcclGetRootInfo, with its device current) and broadcasts it. All ranks get the same
 * verdict: the root info, or the first failing rank's sentence (UNAVAILABLE when its HCCL
 * would not load). */
hwrt_status hwi_hccl_exchange_root(const hwi_coll_engine *mpi, int rank, int size,
                                   hwrt_status local_st, const char *local_msg,
                                   hh_HcclRootInfo *root);

#endif
