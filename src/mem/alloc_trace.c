/* The allocation trace recorder (HWRT_ALLOC_TRACE; see alloc_trace.h). Rows:
 *   action,id,size,stream,tag,time_ns,device
 * action alloc|free|tag; id the block's address (unique among live blocks of the
 * process); size the requested bytes (alloc rows); stream 0 for the default stream and
 * 1.. for the others in order of first use; tag as hwrt_set_alloc_tag gave it (',' and
 * line breaks become '_'); time_ns since the trace was opened. Guarded by trace_mu (taken
 * inside a pool's lock, so each device's rows are in its pool's order). */
#include "alloc_trace.h"
#include "../base/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_STREAMS 4095                    /* hwrt-bench pool reads indices 0 .. 4095 */

_Atomic int hwi_alloc_trace_on;
static FILE *out;
static int sessions;                        /* sessions that opened the file so far */
static int write_failed;
static unsigned long long rows;
static uint64_t t0;
static hwrt_bstream *streams[MAX_STREAMS + 1];   /* index -> stream; 0 is NULL */
static int hi;                              /* highest index given out */
static char path[4096];
static pthread_mutex_t trace_mu = PTHREAD_MUTEX_INITIALIZER;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* O_NOFOLLOW: a symbolic link planted at the path is refused, not followed; O_NONBLOCK
 * so that a FIFO there cannot hang the open; then only a regular file is accepted. */
static FILE *open_safely(const char *p, int append, char *why, size_t wlen)
{
    int fd = open(p, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK |
                  (append ? O_APPEND : 0), 0644);
    if (fd < 0) {
        snprintf(why, wlen, "%s", errno == ELOOP ? "it is a symbolic link, which is not followed"
                                  : errno == ENXIO ? "it is a FIFO or socket, not a regular file"
                                  : strerror(errno));
        return NULL;
    }
    struct stat st;
    int flags = fcntl(fd, F_GETFL);
    const char *bad = fstat(fd, &st) != 0 ? strerror(errno)
                    : !S_ISREG(st.st_mode) ? "it is not a regular file"
                    : !append && ftruncate(fd, 0) != 0 ? strerror(errno)
                    : flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 ? strerror(errno)
                    : NULL;
    FILE *f = bad ? NULL : fdopen(fd, append ? "a" : "w");
    if (!f) {
        snprintf(why, wlen, "%s", bad ? bad : strerror(errno));
        close(fd);
        return NULL;
    }
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    return f;
}

/* A program that exits without hwrt_shutdown (Python does) still gets its rows. */
static void flush_at_exit(void)
{
    pthread_mutex_lock(&trace_mu);
    if (out) fflush(out);
    pthread_mutex_unlock(&trace_mu);
}

static void trace_open(void)
{
    if (out) return;
    const char *p = getenv("HWRT_ALLOC_TRACE");
    if (!p || !*p) return;
    if (strlen(p) >= sizeof path) {
        fprintf(stderr, "[hwrt warn] HWRT_ALLOC_TRACE: the path is longer than %zu bytes; no "
                "allocation trace is written\n", sizeof path - 1);
        return;
    }
    /* a later session appends to the file the first one started (if it is still that one) */
    int append = sessions > 0 && !strcmp(path, p);
    char why[256];
    FILE *f = open_safely(p, append, why, sizeof why);
    if (!f) {
        fprintf(stderr, "[hwrt warn] HWRT_ALLOC_TRACE=\"%s\" cannot be written: %s; no allocation "
                "trace is written (name a regular file in a directory you can write)\n", p, why);
        return;
    }
    snprintf(path, sizeof path, "%s", p);
    if (!append) {
        fputs("action,id,size,stream,tag,time_ns,device\n", f);
        t0 = now_ns();
        rows = 0;
        write_failed = 0;
    }
    if (!sessions) atexit(flush_at_exit);
    sessions++;
    memset(streams, 0, sizeof streams);
    hi = 0;
    out = f;
    atomic_store(&hwi_alloc_trace_on, 1);
}

void hwi_alloc_trace_open(void)
{
    pthread_mutex_lock(&trace_mu);
    trace_open();
    pthread_mutex_unlock(&trace_mu);
}

static int stream_index(hwrt_bstream *bs)
{
    if (!bs) return 0;
    int free_slot = 0;
    for (int i = 1; i <= hi; i++) {
        if (streams[i] == bs) return i;
        if (!streams[i] && !free_slot) free_slot = i;
    }
    if (!free_slot && hi == MAX_STREAMS) return MAX_STREAMS;   /* more live streams than indices */
    if (!free_slot) free_slot = ++hi;
    streams[free_slot] = bs;
    return free_slot;
}

static void row_locked(const char *action, int device, const void *p, size_t size, int with_size,
                hwrt_bstream *bs, const char *tag)
{
    if (!out) return;
    char t[256] = "";
    if (tag) {
        snprintf(t, sizeof t, "%s", tag);
        for (char *c = t; *c; c++)
            if (*c == ',' || *c == '\n' || *c == '\r') *c = '_';
    }
    char sz[32] = "";
    if (with_size) snprintf(sz, sizeof sz, "%zu", size);
    if (fprintf(out, "%s,%p,%s,%d,%s,%llu,%d\n", action, p, sz, stream_index(bs), t,
                (unsigned long long)(now_ns() - t0), device) < 0 && !write_failed) {
        write_failed = errno ? errno : EIO;
        hwi_log(HWI_LOG_ERROR, "HWRT_ALLOC_TRACE \"%s\": writing failed after %llu rows: %s; the "
                "trace is incomplete", path, rows, strerror(write_failed));
    }
    rows++;
}

static void row(const char *action, int device, const void *p, size_t size, int with_size,
                hwrt_bstream *bs, const char *tag)
{
    pthread_mutex_lock(&trace_mu);
    row_locked(action, device, p, size, with_size, bs, tag);
    pthread_mutex_unlock(&trace_mu);
}

void hwi_alloc_trace_alloc(int device, const void *p, size_t requested, hwrt_bstream *owner)
{
    row("alloc", device, p, requested, 1, owner, NULL);
}

void hwi_alloc_trace_free(int device, const void *p, hwrt_bstream *on, const char *tag)
{
    row("free", device, p, 0, 0, on, tag);
}

void hwi_alloc_trace_tag(int device, const void *p, hwrt_bstream *owner, const char *tag)
{
    row("tag", device, p, 0, 0, owner, tag);
}

void hwi_alloc_trace_stream_gone(hwrt_bstream *bs)
{
    pthread_mutex_lock(&trace_mu);
    for (int i = 1; i <= hi && bs; i++)
        if (streams[i] == bs) streams[i] = NULL;
    pthread_mutex_unlock(&trace_mu);
}

static void trace_close(void)
{
    if (!out) return;
    atomic_store(&hwi_alloc_trace_on, 0);
    if (fclose(out) != 0 && !write_failed)
        hwi_log(HWI_LOG_ERROR, "HWRT_ALLOC_TRACE \"%s\": closing failed after %llu rows: %s; the "
                "trace may be incomplete", path, rows, strerror(errno));
    out = NULL;
}

void hwi_alloc_trace_close(void)
{
    pthread_mutex_lock(&trace_mu);
    trace_close();
    pthread_mutex_unlock(&trace_mu);
}
