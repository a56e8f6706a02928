/* SIGPIPE held off one thread around a call (see sigpipe_hold.h). */
#include "sigpipe_hold.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>

static int pipe_pending(void)
{
    sigset_t p;
    return sigpending(&p) == 0 && sigismember(&p, SIGPIPE) == 1;
}

void hwi_sigpipe_hold_begin(hwi_sigpipe_hold *h)
{
    struct sigaction sa;
    sigset_t only, old;
    h->held = h->was_blocked = h->was_pending = 0;
    if (sigaction(SIGPIPE, NULL, &sa) != 0 || (sa.sa_flags & SA_SIGINFO) ||
        sa.sa_handler != SIG_DFL)
        return;
    sigemptyset(&only);
    sigaddset(&only, SIGPIPE);
    if (pthread_sigmask(SIG_BLOCK, &only, &old) != 0)
        return;
    h->held = 1;
    h->was_blocked = sigismember(&old, SIGPIPE) == 1;
    h->was_pending = pipe_pending();
}

int hwi_sigpipe_hold_end(hwi_sigpipe_hold *h)
{
    if (!h->held)
        return 0;
    int taken = 0;
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, SIGPIPE);
    if (!h->was_pending && pipe_pending()) {
        const struct timespec now = {0, 0};
        int sig;
        while ((sig = sigtimedwait(&only, NULL, &now)) < 0 && errno == EINTR) {}
        taken = sig == SIGPIPE;
    }
    if (!h->was_blocked)
        pthread_sigmask(SIG_UNBLOCK, &only, NULL);
    h->held = 0;
    return taken;
}
