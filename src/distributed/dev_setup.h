/* The setup every device collective engine starts with (NCCL, HCCL): two collectives
 * over the host engine (MPI) that give every rank the same verdict, so that a failure on
 * one rank fails all of them instead of leaving the others waiting. */
#ifndef HWI_DIST_DEV_SETUP_H
#define HWI_DIST_DEV_SETUP_H

#include "engine.h"

/* Called on every rank that is fine so far: loads what the rank needs and, on the root
 * (is_root), writes the blob (NCCL's unique id, HCCL's root info). Non-SUCCESS with a
 * sentence in msg when the rank cannot take part. */
typedef hwrt_status (*hwi_setup_blob_fn)(int is_root, void *blob, size_t len, char *msg,
                                         size_t msglen);

/* Every rank reports (its local_st and local_msg, a failure of its own found before, or
 * what make says), then rank 0's blob is broadcast. All ranks get the same verdict: the
 * blob, or "<lib> setup: rank R of N cannot take part: <its sentence>" with that rank's
 * status. */
hwrt_status hwi_setup_share(const hwi_coll_engine *host, int rank, int size,
                            hwrt_status local_st, const char *local_msg, const char *lib,
                            const char *blob_name, hwi_setup_blob_fn make, void *blob,
                            size_t len);

/* After each rank tried to make its communicator (mine: 0 done, else its library's error
 * code + 1): every rank learns the first rank that failed (*bad_rank, -1 when none) and its
 * code (*bad_code). Fails only when the exchange itself does. */
hwrt_status hwi_setup_agree(const hwi_coll_engine *host, int size, int32_t mine,
                            int *bad_rank, int32_t *bad_code);

#endif
