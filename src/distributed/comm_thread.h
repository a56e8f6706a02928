/* The communication thread, the fallback deadline for MPI libraries without the progress
 * hook the plugin uses (src/plugins/mpi/mpi_deadline.h), or with HWRT_MPI_PROGRESS_HOOK=0:
 * hwrt's MPI calls run there, blocking, while the caller waits for them with a deadline.
 * MPI's blocking collectives are its fastest, but they wait forever for a dead peer;
 * running them on this thread lets the caller give up after dist_timeout with
 * HWRT_ERROR_DIST. Each call costs two thread handoffs, which is why it is the fallback. A timed-out call leaves
 * the thread stuck inside MPI: the group is then marked broken and every later call
 * fails at once (the thread is abandoned, never joined). The same pattern as PyTorch's
 * ProcessGroupMPI worker thread. */
#ifndef HWI_COMM_THREAD_H
#define HWI_COMM_THREAD_H

#include "hwrt.h"

/* A job: returns an hwrt_status and writes its sentence into err. */
typedef int (*hwi_comm_fn)(void *arg, char *err, size_t errlen);

/* Run fn(arg) on the communication thread (started on first use) and wait at most
 * timeout seconds. Returns fn's status (its sentence set with hwi_err), or
 * HWRT_ERROR_DIST when the deadline passes or the thread is stuck from an earlier
 * timeout. Calls are serialized. */
hwrt_status hwi_comm_run(hwi_comm_fn fn, void *arg, double timeout, const char *what);
/* 1 once a call timed out (the thread may be stuck in MPI). */
int hwi_comm_broken(void);
/* Stop and join the thread when it is idle (not after a timeout: it is left alone). */
void hwi_comm_stop(void);

#endif
