/* Deadline guard for blocking MPI calls (see mpi_deadline.h). */
#define _GNU_SOURCE 1
#include "mpi_deadline.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int (*progress_cb_t)(void);
static int (*reg)(progress_cb_t), (*unreg)(progress_cb_t);
static int registered;

static __thread sigjmp_buf *armed;
static __thread uint64_t deadline_ns;
static __thread unsigned turns;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Runs in every progress-loop turn of every thread; only an armed thread can jump. The
 * clock is read every 256th turn: on some virtual machines clock_gettime is a system call,
 * and reading it on every turn slowed MPI's own progress loop measurably. */
static int progress_cb(void)
{
    sigjmp_buf *j = armed;
    if (j && (++turns & 255) == 0 && now_ns() > deadline_ns) {
        armed = NULL;
        siglongjmp(*j, 1);
    }
    return 0;
}

static int warned;

int hwrt_mpi_deadline_init(void)
{
    const char *off = getenv("HWRT_MPI_PROGRESS_HOOK");
    if (off && *off && strcmp(off, "0") && strcmp(off, "1") && !warned) {
        warned = 1;
        fprintf(stderr, "[hwrt warn] HWRT_MPI_PROGRESS_HOOK=\"%s\" is neither 0 (off) nor 1 "
                "(on); using the default (1)\n", off);
    }
    if (off && !strcmp(off, "0"))
        return 0;
    if (registered)
        return 1;
    reg = (int (*)(progress_cb_t))dlsym(RTLD_DEFAULT, "opal_progress_register");
    unreg = (int (*)(progress_cb_t))dlsym(RTLD_DEFAULT, "opal_progress_unregister");
    if (!reg || !unreg || reg(progress_cb) != 0)
        return 0;
    registered = 1;
    return 1;
}

void hwrt_mpi_deadline_fini(void)
{
    if (registered) unreg(progress_cb);
    registered = 0;
}

void hwrt_mpi_deadline_arm(sigjmp_buf *jb, double timeout)
{
    if (!registered) return;
    deadline_ns = now_ns() + (uint64_t)(timeout * 1e9);
    armed = jb;
}

void hwrt_mpi_deadline_disarm(void) { armed = NULL; }
