/* hwrt public API — ranks, device binding and collectives. Include <hwrt.h>.
 *
 * One process per device. hwrt_dist_init reads the launcher's variables (msrun/HCCL,
 * torchrun, Open MPI, MPICH/PMI, Slurm) and, when there is more than one process, joins
 * them through MPI, loaded at run time from the plugin libhwrt_mpi.so (libhwrt itself
 * never links MPI). A plain process is rank 0 of 1 and needs no MPI at all.
 *
 * The seed's section 2.6, in C:
 *   hwrt_dist_init();
 *   printf("rank:%d, total_card:%d\n", hwrt_dist_rank(), hwrt_dist_size());
 *   hwrt_dist_bind_device("sim");          // device = LOCAL rank, checked across ranks
 *   hwrt_allreduce(t, HWRT_REDUCE_SUM, NULL);
 *   hwrt_dist_finalize();
 *
 * Collectives are called by every rank in the same order with tensors of the same dtype
 * and shape. They are stream-ordered and blocking: each runs after all work queued so far
 * on the stream s (NULL = the tensor device's default stream) and on any other stream
 * that used its tensors, and has finished, with its result in device memory, when it
 * returns; work queued afterwards sees the result. A peer that dies or stalls makes the
 * call return HWRT_ERROR_DIST after the `dist_timeout` setting (seconds, default 300;
 * hwrt_set_config("dist_timeout", "30") or env HWRT_DIST_TIMEOUT). After such an
 * error the group is unusable: every later collective fails at once with HWRT_ERROR_DIST;
 * finalize and restart the job. See docs/distributed.md. */
#ifndef HWRT_DIST_H
#define HWRT_DIST_H

#include "hwrt_core.h"
#include "hwrt_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hwrt_reduce_op {
    HWRT_REDUCE_SUM = 0,
    HWRT_REDUCE_PROD = 1,
    HWRT_REDUCE_MAX = 2,
    HWRT_REDUCE_MIN = 3,
    HWRT_REDUCE_AVG = 4     /* SUM divided by the world size (integers: truncated toward 0) */
} hwrt_reduce_op;

/* What the launcher told this process (environment only; no MPI involved). */
typedef struct hwrt_dist_info {
    char launcher[16];      /* "msrun", "torchrun", "openmpi", "pmi", "slurm" or "none" */
    int rank;               /* global rank, 0 for "none" */
    int size;               /* world size, 1 for "none" */
    int local_rank;         /* rank on this host; -1 when the launcher does not say */
    int local_size;         /* ranks on this host; -1 when the launcher does not say */
    int node_id;            /* MS_NODE_ID / SLURM_NODEID, -1 when not given */
    int device_id;          /* DEVICE_ID assigned by msrun/HCCL, -1 when not given */
    char rank_table[256];   /* RANK_TABLE_FILE, "" when not given */
} hwrt_dist_info;

/* Read the launcher variables into out, without starting anything. Precedence, first
 * match wins: Open MPI (OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK/LOCAL_SIZE), MPICH/PMI
 * (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS), torchrun (RANK, WORLD_SIZE,
 * LOCAL_RANK, LOCAL_WORLD_SIZE), msrun/HCCL (RANK_ID, RANK_SIZE, DEVICE_ID, MS_WORKER_NUM,
 * MS_NODE_ID, RANK_TABLE_FILE), Slurm (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID); none:
 * rank 0 of 1. Errors: INVALID_ARGUMENT for NULL out, or a variable that is not an
 * integer in range (rank >= size, ...): the sentence names the variable and its value. */
HWRT_API hwrt_status hwrt_dist_detect(hwrt_dist_info *out);

/* Join the group (collective when size > 1: every rank must call it). Detects the
 * launcher; with size > 1 loads libhwrt_mpi.so (next to libhwrt, else the loader's
 * search path, or the path in env HWRT_MPI_PLUGIN), initialises MPI unless the program
 * already did, checks that MPI and the launcher agree on rank and size, and learns each
 * rank's host so that local ranks are exact. Calling it again is a no-op.
 * Errors: UNAVAILABLE (plugin or libmpi missing: the sentence says which and how to get
 * it), DIST (MPI disagrees with the launcher, e.g. torchrun processes MPI cannot join,
 * or a peer did not arrive within dist_timeout), INVALID_ARGUMENT (bad variables). */
HWRT_API hwrt_status hwrt_dist_init(void);

/* Leave the group: frees staging buffers, finalizes MPI if hwrt initialised it (skipped
 * after a DIST failure, when MPI could hang in it). Collective when healthy. */
HWRT_API hwrt_status hwrt_dist_finalize(void);

/* Rank, world size and rank on this host. Before hwrt_dist_init: the launcher's values
 * (hwrt_dist_detect; 0, 1, 0 for a plain process, or when the variables are malformed). */
HWRT_API int hwrt_dist_rank(void);
HWRT_API int hwrt_dist_size(void);
HWRT_API int hwrt_dist_local_rank(void);

/* Make the calling thread's current device the one this rank owns on its host: DEVICE_ID
 * when msrun/HCCL assigned one, else the LOCAL rank (never the global rank, which is
 * wrong on every node but the first). Collective when size > 1: ranks exchange host and
 * device, so that every rank gets the same verdict. Errors (the sentence names ranks,
 * hosts, devices, counts and the fix):
 *  - INVALID_DEVICE: the ordinal is past the device count (names the count and the local
 *    rank; a DEVICE_ID equal to the global rank is called out as the global rank used
 *    where the local one belongs), or two ranks on one host would share a device, or
 *    another rank failed to bind (every rank fails together);
 *  - UNAVAILABLE / NO_DEVICE from the backend; DIST when a peer does not arrive.
 * `backend`: "sim", "opencl", "cuda", "ascend", or NULL / "auto" (the thread's backend,
 * else the one "auto" picks); any other name, "" included, is INVALID_DEVICE.
 * Calls hwrt_dist_init first if needed. */
HWRT_API hwrt_status hwrt_dist_bind_device(const char *backend);

/* Collective check that no two ranks on one host use the same device (the calling
 * thread's current device): the seed's problem 4, every rank writing device_id=0. Runs
 * automatically, once, in hwrt_dist_bind_device or else in the first collective.
 * Errors: INVALID_DEVICE naming the host, the device and the ranks sharing it, and the
 * fix (hwrt_dist_bind_device, or hwrt_set_device with hwrt_dist_local_rank()). */
HWRT_API hwrt_status hwrt_dist_check_devices(void);

/* In-place allreduce of t over all ranks. dtypes: float32, float16, bfloat16, float64,
 * int8, uint8, int32, int64 (float16/bfloat16 reduce in float32, rounded per step).
 * Errors: INVALID_ARGUMENT (bool dtype, bad op), NOT_SUPPORTED (a dtype without
 * reduction kernels: int16, uint16, uint32, uint64, complex64, complex128),
 * INVALID_HANDLE, NOT_PERMITTED (graph capture: a collective waits on the host), DIST
 * (peer failure or timeout). */
HWRT_API hwrt_status hwrt_allreduce(hwrt_tensor t, hwrt_reduce_op op, hwrt_stream s);
/* t on every rank becomes root's t. Any dtype. Errors: INVALID_ARGUMENT (root outside
 * 0..size-1), DIST. */
HWRT_API hwrt_status hwrt_broadcast(hwrt_tensor t, int root, hwrt_stream s);
/* out = the ranks' in, concatenated in rank order: out has size x in's elements, same
 * dtype (any shape with that element count, e.g. [size, ...in]). */
HWRT_API hwrt_status hwrt_allgather(hwrt_tensor out, hwrt_tensor in, hwrt_stream s);
/* out = this rank's block of the reduction of the ranks' in: in has size x out's
 * elements, same dtype; rank r gets elements [r*n, (r+1)*n) of the reduced in. */
HWRT_API hwrt_status hwrt_reduce_scatter(hwrt_tensor out, hwrt_tensor in, hwrt_reduce_op op,
                                         hwrt_stream s);
/* Block until every rank has called it (host only; does not wait for device work).
 * Errors: DIST. */
HWRT_API hwrt_status hwrt_barrier(void);

/* ---- Groups: collectives over a subset of the ranks ----
 * A group is a sub-communicator of the world: on the MPI engine an MPI communicator of
 * its ranks (MPI_Comm_create_group), so its collectives involve only its members and
 * collectives of disjoint groups run at the same time. */
typedef struct hwrt_group_s *hwrt_group;

/* A group of the world ranks listed (1 to world-size distinct ranks), whose rank i is
 * world rank ranks[i]. Collective over the listed ranks only: each calls it with the same
 * list, members create their common groups in the same order, and other ranks do not
 * call it. Lists with the same ranks in other orders are refused on every member; a
 * listed rank that never calls it leaves the others waiting until dist_timeout (DIST).
 * Errors: INVALID_ARGUMENT (NULL, n out of range, a rank outside the world or listed
 * twice, this process not in the list, the members' lists in different orders), DIST. */
HWRT_API hwrt_status hwrt_group_create(const int *ranks, int n, hwrt_group *out);
/* Collective over the group's members; the handle is invalid afterwards. */
HWRT_API hwrt_status hwrt_group_destroy(hwrt_group g);
/* This process's rank in g (0..size-1), g's size, and the world rank of g's rank
 * group_rank. g NULL: the world. INVALID_HANDLE for a destroyed group. */
HWRT_API hwrt_status hwrt_group_rank(hwrt_group g, int *rank);
HWRT_API hwrt_status hwrt_group_size(hwrt_group g, int *size);
HWRT_API hwrt_status hwrt_group_world_rank(hwrt_group g, int group_rank, int *world_rank);
/* The collectives above on group g (NULL: the world, as the plain calls), called by every
 * member of g: root is a rank of g, allgather/reduce_scatter sizes count g's ranks, AVG
 * divides by g's size. */
HWRT_API hwrt_status hwrt_group_allreduce(hwrt_group g, hwrt_tensor t, hwrt_reduce_op op,
                                          hwrt_stream s);
HWRT_API hwrt_status hwrt_group_broadcast(hwrt_group g, hwrt_tensor t, int root, hwrt_stream s);
HWRT_API hwrt_status hwrt_group_allgather(hwrt_group g, hwrt_tensor out, hwrt_tensor in,
                                          hwrt_stream s);
HWRT_API hwrt_status hwrt_group_reduce_scatter(hwrt_group g, hwrt_tensor out, hwrt_tensor in,
                                               hwrt_reduce_op op, hwrt_stream s);
HWRT_API hwrt_status hwrt_group_barrier(hwrt_group g);

#ifdef __cplusplus
}
#endif
#endif /* HWRT_DIST_H */
