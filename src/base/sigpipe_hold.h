/* SIGPIPE held off one thread for the span of a call into a library that writes to
 * sockets without MSG_NOSIGNAL (Open MPI's TCP transport). When a peer host dies, the
 * kernel resets its connections, such a write fails with EPIPE and raises SIGPIPE in the
 * writing thread; under the default disposition that kills the process before the library
 * can report the failure, so a surviving rank died instead of returning HWRT_ERROR_DIST.
 *
 * begin: only when SIGPIPE's disposition is the default (an application that ignores or
 * handles SIGPIPE keeps its choice, and its handler runs), block SIGPIPE in this thread.
 * end: a SIGPIPE that became pending during the call is taken (discarded: the write's
 * EPIPE already told the library), and SIGPIPE is unblocked if it was not blocked before.
 * Returns 1 when it discarded one. A SIGPIPE already pending at begin is left alone. */
#ifndef HWI_SIGPIPE_HOLD_H
#define HWI_SIGPIPE_HOLD_H

#include <signal.h>

typedef struct {
    int held;          /* begin blocked SIGPIPE (disposition was the default) */
    int was_blocked;   /* SIGPIPE was already in this thread's mask */
    int was_pending;   /* a SIGPIPE was already pending at begin */
} hwi_sigpipe_hold;

void hwi_sigpipe_hold_begin(hwi_sigpipe_hold *h);
int hwi_sigpipe_hold_end(hwi_sigpipe_hold *h);

#endif
