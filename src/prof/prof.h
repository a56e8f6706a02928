/* The profiler's tracer: sessions, per-thread record buffers, and the entry point other
 * subsystems (offload, collectives) use to add their own events.
 *
 * Timestamps are CLOCK_MONOTONIC nanoseconds on the host; the sim backend's device
 * timestamps use the same clock, so host and device spans share one time axis. */
#ifndef HWI_PROF_H
#define HWI_PROF_H

#include "hwrt.h"
#include "../exec/dispatch.h"   /* hwi_span_cat: layers below prof record spans through it */

#include <stdatomic.h>
#include <stdint.h>

/* Categories for hwi_prof_record_event: the span categories of exec/dispatch.h. */
typedef hwi_span_cat hwi_prof_cat;

/* Internal to libhwrt (hidden, like everything include/ does not declare): a separately
 * built plugin that wants spans would need its own entry in its ABI table. White-box
 * tests reach them by linking libhwrt.a (hwrt_static). */

/* Nonzero while a session records; a cheap check before building an event. */
extern _Atomic int hwi_prof_on;
static inline int hwi_prof_active(void)
{
    return atomic_load_explicit(&hwi_prof_on, memory_order_relaxed);
}

/* CLOCK_MONOTONIC in ns. */
uint64_t hwi_prof_now_ns(void);

/* Record a span [start_ns, end_ns] (host clock, hwi_prof_now_ns) of category cat on
 * device (-1: none) that moved `bytes` (0 if not applicable). `name` must outlive the
 * process (a string literal): it is written out when the session stops. Does nothing
 * when no session is running. Thread-safe, lock-free on the calling thread's buffer.
 * Usage (offload, around a blocking fetch):
 *     uint64_t t0 = hwi_prof_now_ns();  ...fetch...;
 *     hwi_prof_record_event(HWI_PROF_OFFLOAD_FETCH, "fetch", dev, t0, hwi_prof_now_ns(), n);
 */
void hwi_prof_record_event(hwi_prof_cat cat, const char *name, int device,
                           uint64_t start_ns, uint64_t end_ns, uint64_t bytes);

/* ---- internal to src/prof ---- */

typedef enum { PREC_WORK = 1, PREC_SYNC, PREC_MEM, PREC_EXT } prof_rec_type;

enum { PREC_F_FAILED = 1 };

typedef struct prof_rec {
    uint8_t type;          /* prof_rec_type */
    uint8_t kind;          /* work: hwi_work_kind; mem: hwi_mem_event_kind; ext: category */
    uint8_t sub;           /* copy: hwrt_memcpy_kind; kernel: hwrt_dtype */
    uint8_t pinned;        /* copy: host side page-locked */
    uint8_t flags;         /* PREC_F_FAILED */
    int16_t device;        /* -1: none / device-wide */
    uint32_t stream;       /* profiler stream id (0: none) */
    const char *name;      /* static string */
    uint64_t t0, t1;       /* host span; mem: t0 = t1 = time of the event */
    _Atomic uint64_t dev_end; /* device end of the work (0: none): the time its marker was
                              reached (written by whichever thread resolves the marker), or
                              the end of its activity record (written when joined) */
    uint64_t dev_start;    /* activity records only: device start (0: derived by readers) */
    uint64_t corr;         /* activity correlation id (0: the work has a marker, or none) */
    uint64_t bytes;        /* copy, memset, mem and ext bytes */
    uint64_t a, b, c;      /* kernel: m (or n), k, nn; mem: allocated, reserved after, addr */
} prof_rec;

/* A record slot in the calling thread's buffer, or NULL (no session; or the drop counted:
 * the cap hit, a nested call, no host memory for the buffer). Fill it, then prof_commit().
 * Between the two the session cannot finish stopping. */
prof_rec *prof_begin(void);
void prof_commit(prof_rec *r);

/* Stream registry and device markers (prof_markers.c). */
typedef struct hwi_stream hwi_stream;
typedef struct prof_stream prof_stream;
/* The profiler's state for s (registered on first use; never freed), or NULL when out
 * of host memory. */
prof_stream *prof_stream_get(hwi_stream *s);
uint32_t prof_stream_id(const prof_stream *p);
/* Queue a marker after the work just submitted on s; its device time lands in
 * r->dev_end once reached. Cheap: it recycles events and resolves reached markers. */
void prof_marker_attach(prof_stream *p, hwi_stream *s, prof_rec *r);
/* Resolve every pending marker, waiting until deadline_ns (host clock) at most; with
 * destroy, give every backend event back too (before devices close). */
void prof_markers_drain(uint64_t deadline_ns, int destroy);
/* Append the "#stream" lines of the raw file to f (a FILE *). */
void prof_markers_describe(void *f);
/* Launches kept without a device time (backend without timestamps, timeouts). */
uint64_t prof_markers_missing(void);
void prof_markers_reset_missing(void);
/* Name of the backend seen on the launch path ("" before the first launch). */
const char *prof_markers_backend(void);

/* Activity records (prof_activity.c): device spans the backend reports itself (slot
 * activity_enable), keyed by a correlation id given at launch; the marker path above is
 * the fallback for backends without the slot and for work the backend does not report
 * (event waits, host functions run inline). */
typedef struct hwi_work hwi_work;
typedef struct prof_buf prof_buf;
/* A fresh correlation id for a launch on this thread (prof_tracer.c): session number,
 * the thread's buffer index and its launch count, so ids never repeat across sessions;
 * 0 when the thread has no buffer (no session, out of memory). */
uint64_t prof_next_corr(void);
/* A session starts (cap: most records kept; beyond it the launches count as missing). */
void prof_activity_start(uint64_t cap);
/* For the launch of w on this thread: enable the backend's records if not yet done and
 * set hwi_backend_correlation to a fresh id, returned; 0 when w must use a marker. */
uint64_t prof_activity_correlate(const hwi_work *w);
/* Wait until the backend has reported every correlated op, or deadline_ns (host clock). */
void prof_activity_drain(uint64_t deadline_ns);
/* Copy each record's start/end into the work record with its id (every committed record
 * of bufs); launches with an id but no record are counted in prof_activity_missing. */
void prof_activity_join(prof_buf *const *bufs, int nbufs);
uint64_t prof_activity_missing(void);      /* as of the last join */
/* The session ends: the backend stops reporting, the records' memory goes back. */
void prof_activity_stop(void);

/* Dispatch hook and memory observer (prof_hook.c). */
hwrt_status prof_hook_install(void);
void prof_hook_remove(void);

/* Raw file writer (prof_writer.c): every committed record of every thread buffer. */
typedef struct prof_buf prof_buf;
hwrt_status prof_write_raw(const char *path, prof_buf *const *bufs, int nbufs,
                           const char *header);

/* Thread buffers, as the writer walks them. */
#define PROF_CHUNK 4096
typedef struct prof_chunk {
    struct prof_chunk *next;
    prof_rec recs[PROF_CHUNK];
} prof_chunk;

/* The pool of pre-touched chunks (prof_pool.c). */
prof_chunk *prof_chunk_get(void);          /* from the pool, else freshly mapped */
void prof_chunk_put(prof_chunk *c);        /* back to the pool, or unmapped past the reserve */
size_t prof_pool_reserve(void);            /* chunks to keep: HWRT_PROFILE_BUFFER_EVENTS */
void prof_pool_fill(void);                 /* touch chunks up to the reserve */

struct prof_buf {
    prof_chunk *first, *cur;
    _Atomic size_t count;        /* committed records in all chunks */
    size_t in_cur;               /* slots used in cur */
    _Atomic int busy;            /* between prof_begin and prof_commit */
    uint32_t index;              /* host thread number in the session */
    uint32_t launches;           /* correlation ids given (prof_next_corr) */
    long os_tid;
    char thread_name[32];
};

#endif
