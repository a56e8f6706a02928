/* Profiling sessions and the per-thread record buffers.
 *
 * Each thread appends to its own buffer (chunks of PROF_CHUNK records), so launches on
 * different threads never contend. A writer marks its buffer busy between prof_begin
 * and prof_commit; stopping clears hwi_prof_on, then waits for every busy flag to drop
 * (a Dekker-style handshake with seq_cst fences), so buffers can be written and freed
 * without a lock on the launch path. Buffers outlive their threads until the session
 * ends, so work launched by short-lived threads is kept. */
#define _GNU_SOURCE
#include "prof.h"
#include "../base/config.h"
#include "../runtime/runtime.h"
#include "../base/status.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

_Atomic int hwi_prof_on;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic unsigned session_gen;     /* bumped by each start */
static int running;
static unsigned session_no;              /* sessions started by this process */
static char out_dir[512];
static uint64_t start_ns, cap_chunks;
static _Atomic uint64_t chunks_used, dropped;
static prof_buf **bufs;
static int nbufs, capbufs;
static hwrt_profiler_stats last_stats;   /* of the last stopped session */

static _Thread_local prof_buf *tls_buf;
static _Thread_local unsigned tls_gen;

uint64_t hwi_prof_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int chunk_add(prof_buf *b)
{
    if (atomic_fetch_add(&chunks_used, 1) >= cap_chunks)
        return 0;
    prof_chunk *c = prof_chunk_get();
    if (!c)
        return 0;
    c->next = NULL;
    if (b->cur) b->cur->next = c;
    else b->first = c;
    b->cur = c;
    b->in_cur = 0;
    return 1;
}

/* The calling thread's buffer for the running session (registered under mu), or NULL:
 * the session ended, or (*oom = 1) no host memory for the buffer or its registry entry. */
static prof_buf *buf_for_thread(int *oom)
{
    unsigned gen = atomic_load_explicit(&session_gen, memory_order_acquire);
    *oom = 0;
    if (tls_buf && tls_gen == gen)
        return tls_buf;
    prof_buf *b = calloc(1, sizeof *b);
    if (!b) {
        *oom = 1;
        return NULL;
    }
    b->os_tid = (long)syscall(SYS_gettid);
    pthread_getname_np(pthread_self(), b->thread_name, sizeof b->thread_name);
    pthread_mutex_lock(&mu);
    int ok = running && gen == atomic_load(&session_gen);
    if (ok && nbufs == capbufs) {
        int nc = capbufs ? capbufs * 2 : 16;
        prof_buf **nb = realloc(bufs, (size_t)nc * sizeof *nb);
        if (nb) { bufs = nb; capbufs = nc; }
    }
    if (ok && nbufs == capbufs) *oom = 1;
    ok = ok && nbufs < capbufs;
    if (ok) {
        b->index = (uint32_t)nbufs;
        bufs[nbufs++] = b;
    }
    pthread_mutex_unlock(&mu);
    if (!ok) { free(b); return NULL; }
    tls_buf = b;
    tls_gen = gen;
    return b;
}

uint64_t prof_next_corr(void)
{
    int oom;
    prof_buf *b = buf_for_thread(&oom);
    if (!b) return 0;                      /* the launch takes a marker (prof_begin counts) */
    /* 16 bits of session, 16 of thread, 32 of launch: wraps only after 4e9 launches of one
     * thread, and a stale id can only match after 65536 sessions */
    return (uint64_t)(tls_gen & 0xffff) << 48 | (uint64_t)(b->index & 0xffff) << 32 |
           (++b->launches & 0xffffffffu);
}

prof_rec *prof_begin(void)
{
    if (!hwi_prof_active())
        return NULL;
    int oom;
    prof_buf *b = buf_for_thread(&oom);
    if (!b) {
        /* host out of memory (not the session ending): the record is lost, counted */
        if (oom && atomic_load_explicit(&hwi_prof_on, memory_order_relaxed))
            atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
        return NULL;
    }
    if (atomic_load_explicit(&b->busy, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);   /* nested */
        return NULL;
    }
    /* xchg: a full barrier, several times cheaper than mfence on AMD */
    atomic_exchange_explicit(&b->busy, 1, memory_order_seq_cst);
    if (!atomic_load_explicit(&hwi_prof_on, memory_order_relaxed)) {
        atomic_store_explicit(&b->busy, 0, memory_order_release);
        return NULL;
    }
    if ((!b->cur || b->in_cur == PROF_CHUNK) && !chunk_add(b)) {
        atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
        atomic_store_explicit(&b->busy, 0, memory_order_release);
        return NULL;
    }
    prof_rec *r = &b->cur->recs[b->in_cur];
    memset(r, 0, sizeof *r);
    return r;
}

void prof_commit(prof_rec *r)
{
    prof_buf *b = tls_buf;
    (void)r;
    b->in_cur++;
    atomic_store_explicit(&b->count, atomic_load_explicit(&b->count, memory_order_relaxed) + 1,
                          memory_order_release);
    atomic_store_explicit(&b->busy, 0, memory_order_release);
}

/* Wait until no thread is between prof_begin and prof_commit (after hwi_prof_on = 0). */
static void wait_writers_locked(void)
{
    atomic_thread_fence(memory_order_seq_cst);
    for (int i = 0; i < nbufs; i++) {
        uint64_t until = hwi_prof_now_ns() + 1000000000ull;
        while (atomic_load_explicit(&bufs[i]->busy, memory_order_acquire) &&
               hwi_prof_now_ns() < until)
            sched_yield();
    }
}

static uint64_t events_locked(void)
{
    uint64_t n = 0;
    for (int i = 0; i < nbufs; i++) n += atomic_load(&bufs[i]->count);
    return n;
}

/* Launches without a device time: marker failures and activity records not found. */
static uint64_t missing_now(void)
{
    return prof_markers_missing() + prof_activity_missing();
}

/* Write every record so far to the session's raw file, device spans from activity
 * records joined in first (deadline: how long to wait for the backend to report the
 * work still in flight). Caller holds mu. */
static hwrt_status flush_locked(uint64_t deadline_ns)
{
    prof_activity_drain(deadline_ns);
    prof_activity_join(bufs, nbufs);
    char path[700], header[1024];
    snprintf(path, sizeof path, "%s/raw/prof_%ld_%u.tsv", out_dir, (long)getpid(), session_no);
    snprintf(header, sizeof header,
             "#hwrt-prof\t1\n#pid\t%ld\n#session\t%u\n#backend\t%s\n#clock\tCLOCK_MONOTONIC\n"
             "#start_ns\t%llu\n#flush_ns\t%llu\n#events\t%llu\n#dropped\t%llu\n"
             "#device_ts_missing\t%llu\n",
             (long)getpid(), session_no, prof_markers_backend(), (unsigned long long)start_ns,
             (unsigned long long)hwi_prof_now_ns(), (unsigned long long)events_locked(),
             (unsigned long long)atomic_load(&dropped), (unsigned long long)missing_now());
    return prof_write_raw(path, bufs, nbufs, header);
}

static hwrt_status make_dirs(const char *dir)
{
    char p[700];
    snprintf(p, sizeof p, "%s/raw", dir);
    for (char *s = p + 1; ; s++) {
        char c = *s;
        if (c == '/' || c == 0) {
            *s = 0;
            if (mkdir(p, 0777) != 0 && errno != EEXIST)
                return hwi_err(HWRT_ERROR_IO, "hwrt_profiler_start: cannot create directory "
                               "\"%s\": %s; give a writable output directory", p,
                               strerror(errno));
            *s = c;
        }
        if (!c) break;
    }
    if (access(p, W_OK) != 0)
        return hwi_err(HWRT_ERROR_IO, "hwrt_profiler_start: directory \"%s\" is not writable: "
                       "%s; give a writable output directory", p, strerror(errno));
    return HWRT_SUCCESS;
}

static uint64_t cap_from_env(void)
{
    uint64_t n = hwi_env_count("HWRT_PROFILE_MAX_EVENTS", 1, 1ull << 40, 4000000ull);
    return (n + PROF_CHUNK - 1) / PROF_CHUNK;
}

static hwrt_status shutdown_hook(void);
static void at_exit(void);

/* fork(): the child starts with no records of its own, so its raw file (written at its
 * exit) does not repeat the parent's; the lock is held across fork so that the child
 * never inherits it locked by a thread that does not exist there. */
static void fork_prepare(void) { pthread_mutex_lock(&mu); }
static void fork_parent(void) { pthread_mutex_unlock(&mu); }
static void fork_child(void)
{
    bufs = NULL;                       /* the parent's buffers stay the parent's */
    nbufs = capbufs = 0;
    atomic_store(&chunks_used, 0);
    atomic_store(&dropped, 0);
    atomic_fetch_add(&session_gen, 1);
    pthread_mutex_unlock(&mu);
}

hwrt_status hwrt_profiler_start(const char *output_dir)
{
    if (!output_dir || !*output_dir)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_profiler_start: output_dir is %s; "
                       "give a directory for the raw files", output_dir ? "empty" : "NULL");
    if (strlen(output_dir) >= sizeof out_dir - 40)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_profiler_start: output_dir is %zu "
                       "characters long; at most %zu are accepted", strlen(output_dir),
                       sizeof out_dir - 41);
    pthread_mutex_lock(&mu);
    if (running) {
        hwrt_status st = hwi_err(HWRT_ERROR_NOT_PERMITTED, "hwrt_profiler_start: a session is "
                                 "already running, writing to \"%s\"; call hwrt_profiler_stop "
                                 "first", out_dir);
        pthread_mutex_unlock(&mu);
        return st;
    }
    hwrt_status st = make_dirs(output_dir);
    if (st == HWRT_SUCCESS) prof_pool_fill();
    if (st == HWRT_SUCCESS) st = prof_hook_install();
    if (st != HWRT_SUCCESS) { pthread_mutex_unlock(&mu); return st; }
    snprintf(out_dir, sizeof out_dir, "%s", output_dir);
    session_no++;
    cap_chunks = cap_from_env();
    atomic_store(&chunks_used, 0);
    atomic_store(&dropped, 0);
    prof_markers_reset_missing();
    prof_activity_start(cap_chunks * PROF_CHUNK);
    start_ns = hwi_prof_now_ns();
    running = 1;
    atomic_fetch_add(&session_gen, 1);
    atomic_store(&hwi_prof_on, 1);
    static int exit_registered;
    int reg = !exit_registered;
    exit_registered = 1;
    pthread_mutex_unlock(&mu);
    hwi_on_shutdown(35, shutdown_hook);
    if (reg) {
        atexit(at_exit);
        pthread_atfork(fork_prepare, fork_parent, fork_child);
    }
    return HWRT_SUCCESS;
}

static void free_bufs_locked(void)
{
    for (int i = 0; i < nbufs; i++) {
        for (prof_chunk *c = bufs[i]->first, *n; c; c = n) {
            n = c->next;
            prof_chunk_put(c);
        }
        free(bufs[i]);
    }
    free(bufs);
    bufs = NULL;
    nbufs = capbufs = 0;
}

static void fill_stats_locked(hwrt_profiler_stats *s)
{
    memset(s, 0, sizeof *s);
    s->running = running;
    s->events = events_locked();
    s->dropped = atomic_load(&dropped);
    s->device_ts_missing = missing_now();
    s->threads = (uint64_t)nbufs;
    snprintf(s->output_dir, sizeof s->output_dir, "%s", out_dir);
}

/* End the session: stop recording, resolve device times, write, optionally free. */
static hwrt_status finish_locked(uint64_t wait_ns, int release)
{
    atomic_store(&hwi_prof_on, 0);
    prof_hook_remove();
    wait_writers_locked();
    prof_markers_drain(hwi_prof_now_ns() + wait_ns, release);
    hwrt_status st = flush_locked(hwi_prof_now_ns() + wait_ns);
    prof_activity_stop();
    running = 0;
    fill_stats_locked(&last_stats);
    if (release) free_bufs_locked();
    return st;
}

hwrt_status hwrt_profiler_stop(void)
{
    pthread_mutex_lock(&mu);
    if (!running) {
        pthread_mutex_unlock(&mu);
        return hwi_err(HWRT_ERROR_NOT_PERMITTED, "hwrt_profiler_stop: no profiling session is "
                       "running; start one with hwrt_profiler_start or HWRT_PROFILE=dir");
    }
    hwrt_status st = finish_locked(10000000000ull, 1);
    pthread_mutex_unlock(&mu);
    return st;
}

hwrt_status hwrt_profiler_get_stats(hwrt_profiler_stats *out)
{
    if (!out)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_profiler_get_stats: out is NULL");
    pthread_mutex_lock(&mu);
    if (running) fill_stats_locked(out);
    else *out = last_stats;
    pthread_mutex_unlock(&mu);
    return HWRT_SUCCESS;
}

/* hwrt_shutdown: devices are about to close, so resolve the markers and give their
 * events back, and write what was recorded so far (the session keeps running). */
static hwrt_status shutdown_hook(void)
{
    pthread_mutex_lock(&mu);
    hwrt_status st = HWRT_SUCCESS;
    if (running) {
        prof_markers_drain(hwi_prof_now_ns() + 10000000000ull, 1);
        st = flush_locked(hwi_prof_now_ns() + 10000000000ull);
    } else {
        prof_markers_drain(hwi_prof_now_ns(), 1);   /* events of a stopped session */
    }
    pthread_mutex_unlock(&mu);
    return st;
}

/* Process exit: write the session; the buffers go with the process. */
static void at_exit(void)
{
    pthread_mutex_lock(&mu);
    if (running && finish_locked(5000000000ull, 0) != HWRT_SUCCESS)
        fprintf(stderr, "[hwrt warn] profiler: %s\n", hwrt_last_error());
    pthread_mutex_unlock(&mu);
}

/* HWRT_PROFILE=dir: profile an unmodified program from the moment libhwrt is loaded. */
__attribute__((constructor)) static void env_start(void)
{
    const char *dir = getenv("HWRT_PROFILE");
    if (!dir || !*dir)
        return;
    if (hwrt_profiler_start(dir) != HWRT_SUCCESS)
        fprintf(stderr, "[hwrt warn] HWRT_PROFILE=%s ignored: %s\n", dir, hwrt_last_error());
}
