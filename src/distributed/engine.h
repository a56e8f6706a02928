/* The collective-engine seam. An engine moves and reduces bytes between ranks; the layer
 * above (collective.c) validates tensors, orders the call after the stream's work and, for
 * engines that need host-addressable memory, stages device data through pinned buffers.
 *
 * Engines: "self" (one process), "mpi" (libhwrt_mpi.so, host memory), "nccl"
 * (nccl_engine.c, cuda) and "hccl" (hccl_engine.c, ascend). A device engine sets
 * host_memory = 0, receives device pointers and the stream, and enqueues on it instead of
 * blocking. Reduction ops are SUM/PROD/MAX/MIN for host engines (AVG is SUM + a division done
 * above them); device engines also get AVG. Host engines block and give HWRT_ERROR_DIST
 * when a peer fails or dist_timeout passes; a device engine returns once the work is
 * queued (HWRT_ERROR_DIST when its library reports an error). A group's collectives run on the
 * host engine, which made its communicator (group_create); NCCL and HCCL have the world only. */
#ifndef HWI_DIST_ENGINE_H
#define HWI_DIST_ENGINE_H

#include "../exec/stream.h"

typedef struct hwi_coll_engine {
    const char *name;
    int host_memory;      /* 1: buffers must be host-addressable */
    /* The collectives run on comm: a group's, from group_create, or NULL for the world;
     * ranks (root) are ranks of comm. */
    hwrt_status (*allreduce)(void *comm, void *buf, size_t count, hwrt_dtype dt,
                             hwrt_reduce_op op, hwi_stream *s);
    hwrt_status (*broadcast)(void *comm, void *buf, size_t bytes, int root, hwi_stream *s);
    hwrt_status (*allgather)(void *comm, const void *in, void *out, size_t bytes, hwi_stream *s);
    hwrt_status (*reduce_scatter)(void *comm, const void *in, void *out, size_t count,
                                  hwrt_dtype dt, hwrt_reduce_op op, hwi_stream *s);
    hwrt_status (*barrier)(void *comm);
    /* A communicator of the world ranks listed (its rank i is world rank ranks[i]);
     * collective over those ranks only. */
    hwrt_status (*group_create)(const int *ranks, int n, void **comm);
    hwrt_status (*group_free)(void *comm);
    hwrt_status (*finalize)(void);
} hwi_coll_engine;

extern const hwi_coll_engine hwi_engine_self;

/* Load libhwrt_mpi.so and start MPI: the engine, this rank, the world size and the MPI
 * library's version. UNAVAILABLE (with where it looked) when the plugin or libmpi is
 * missing. */
hwrt_status hwi_mpi_engine_open(const hwi_coll_engine **eng, int *rank, int *size,
                                char *version, size_t vlen);

#endif
