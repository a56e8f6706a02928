/* The C ABI between libhwrt (src/distributed) and the MPI plugin libhwrt_mpi.so
 * (src/plugins/mpi), which is the only hwrt code linked with MPI. libhwrt loads it with
 * dlopen and calls hwrt_mpi_plugin(HWI_MPI_ABI) for this table.
 *
 * Buffers are host-addressable memory. Every call that can fail returns an hwrt_status
 * value (as int) and writes a full sentence into err[errlen]. init and finalize run on
 * the thread that calls hwrt_dist_init/finalize. The collectives block for at most their
 * timeout when init reported in_call_deadline; otherwise libhwrt runs them on its
 * communication thread and waits for them with the deadline. An MPI error or a timeout
 * gives HWRT_ERROR_DIST and makes every later call fail at once. */
#ifndef HWI_MPI_PLUGIN_H
#define HWI_MPI_PLUGIN_H

#include "hwrt.h"

#define HWI_MPI_ABI 2u
#define HWI_MPI_ENTRY "hwrt_mpi_plugin"

typedef struct hwi_mpi_plugin {
    uint32_t abi;
    /* MPI_Init_thread(SERIALIZED) unless MPI is already initialised; duplicates
     * MPI_COMM_WORLD with MPI_ERRORS_RETURN. Fills rank, size, whether MPI's thread level
     * allows calls from another thread (>= SERIALIZED), whether the collectives enforce
     * their timeout themselves in the caller's thread (Open MPI progress hook; if not,
     * libhwrt must run them on its communication thread), and the version. */
    int (*init)(int *rank, int *size, int *thread_level_ok, int *in_call_deadline,
                char *version, size_t vlen, char *err, size_t errlen);
    /* Frees the communicator and finalizes MPI if init started it and nothing failed. */
    int (*finalize)(char *err, size_t errlen);
    /* The collectives run on comm: one from comm_create, or NULL for the world. */
    /* In place over buf; dtype is an hwrt_dtype (not bool), op SUM/PROD/MAX/MIN. */
    int (*allreduce)(void *comm, void *buf, size_t count, int dtype, int op, double timeout,
                     char *err, size_t errlen);
    /* root is a rank of comm */
    int (*broadcast)(void *comm, void *buf, size_t bytes, int root, double timeout, char *err,
                     size_t errlen);
    /* out holds size * bytes: rank r's in at out + r * bytes. */
    int (*allgather)(void *comm, const void *in, void *out, size_t bytes, double timeout,
                     char *err, size_t errlen);
    /* in holds size * count elements; out gets this rank's count reduced elements. */
    int (*reduce_scatter)(void *comm, const void *in, void *out, size_t count, int dtype, int op,
                          double timeout, char *err, size_t errlen);
    int (*barrier)(void *comm, double timeout, char *err, size_t errlen);
    /* A sub-communicator of the world whose rank i is world rank ranks[i] (distinct, n >=
     * 1): collective over those ranks only, which pass the same list
     * (MPI_Comm_create_group); the others do not call it. */
    int (*comm_create)(const int *ranks, int n, double timeout, void **comm, char *err,
                       size_t errlen);
    /* Frees a communicator from comm_create (every member frees its own). */
    int (*comm_free)(void *comm, char *err, size_t errlen);
} hwi_mpi_plugin;

typedef const hwi_mpi_plugin *(*hwi_mpi_entry_fn)(uint32_t abi);

#endif
