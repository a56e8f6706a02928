/* Ring allreduce over non-blocking point-to-point messages, polled against a deadline. */
#ifndef HWRT_MPI_RING_H
#define HWRT_MPI_RING_H

#include <mpi.h>
#include <stddef.h>

/* From this many bytes on, allreduce uses the ring; below, MPI's blocking MPI_Allreduce.
 * Default 16 MiB; env HWRT_MPI_RING_BYTES overrides it (0 = always the ring, a huge
 * value = never), read once. */
size_t hwrt_mpi_ring_min_bytes(void);

int hwrt_mpi_ring_allreduce(MPI_Comm comm, void *buf, int count, MPI_Datatype t, MPI_Op o,
                            double timeout, char *err, size_t len);
void hwrt_mpi_ring_free(void);

/* mpi_plugin.c: poll requests until done / error / deadline; turn an MPI code into
 * HWRT_ERROR_DIST with its text. Both mark the plugin broken on failure. */
int hwrt_mpi_waitall(int n, MPI_Request *q, const char *what, double deadline, double timeout,
                     char *err, size_t len);
int hwrt_mpi_fail(char *err, size_t len, const char *what, int rc);

#endif
