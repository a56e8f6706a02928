/* A deadline for blocking MPI calls made in the caller's own thread.
 *
 * MPI's blocking collectives are its fastest, but wait forever for a dead peer. With
 * Open MPI, a callback registered with opal_progress_register runs inside every blocking
 * call's progress loop; once the armed deadline has passed it jumps (siglongjmp) back to
 * the guarded call site, which reports HWRT_ERROR_DIST. The interrupted call's state is
 * abandoned with it: the plugin is then "broken" and never calls MPI again (no
 * MPI_Finalize either). Without the hook (another MPI, or HWRT_MPI_PROGRESS_HOOK=0),
 * hwrt_mpi_deadline_init returns 0 and libhwrt runs the calls on its communication thread
 * instead, waiting for them with the deadline there. */
#ifndef HWRT_MPI_DEADLINE_H
#define HWRT_MPI_DEADLINE_H

#include <setjmp.h>

/* After MPI_Init: 1 when calls can be guarded in the caller's thread. */
int hwrt_mpi_deadline_init(void);
void hwrt_mpi_deadline_fini(void);
void hwrt_mpi_deadline_arm(sigjmp_buf *jb, double timeout);
void hwrt_mpi_deadline_disarm(void);

#define HWRT_MPI_TIMED_OUT (-1)

/* rc = call, or HWRT_MPI_TIMED_OUT when the deadline interrupted it. */
#define HWRT_MPI_GUARDED(rc, timeout, call)                                               \
    do {                                                                                  \
        sigjmp_buf jb_;                                                                   \
        if (sigsetjmp(jb_, 0)) { (rc) = HWRT_MPI_TIMED_OUT; break; }                      \
        hwrt_mpi_deadline_arm(&jb_, (timeout));                                           \
        (rc) = (call);                                                                    \
        hwrt_mpi_deadline_disarm();                                                       \
    } while (0)

#endif
