/* hwrt-bench-pool: shared declarations of the latency, trace and min-capacity parts. */
#ifndef HWRT_BENCH_POOL_H
#define HWRT_BENCH_POOL_H

#include <stddef.h>
#include "bench_stats.h"   /* bench_median */
#include "base/json.h"

typedef struct bench_opts {
    int json;
    hwi_jw *jw;          /* with --json: the writer of the one document on stdout */
    int quiet;           /* --quiet: no progress line (--min-capacity) */
    int reps;            /* repetitions per figure; the median is reported */
    long pairs;          /* malloc+free pairs per repetition */
    const char *trace;   /* --trace FILE */
    const char *mincap;  /* --min-capacity FILE */
    const char *conf;    /* --conf "key:value,...": allocator settings for replays */
    const char *devices; /* --devices: capacities to check the trace against */
    size_t overhead;     /* --overhead: context overhead of the simulated device */
    int device;          /* --device N: rows of that device (-1: the only one there is) */
    const char *oom_snapshot;  /* --oom-snapshot PREFIX: the failing replay's memory snapshot */
} bench_opts;

int bench_latency(const bench_opts *o);
int bench_trace(const bench_opts *o);
int bench_min_capacity(const bench_opts *o);
double bench_now_ns(void);
double bench_cpu_ns(void);

/* ---- traces (trace_csv.c) ---- */
#define TRACE_MAX_STREAMS 4096
enum { OP_ALLOC, OP_FREE, OP_TAG };
typedef struct { int action; int id; size_t size; int stream; int tag; } trace_op;

typedef struct trace {
    trace_op *ops;
    size_t n, cap;
    char **names;                /* interned ids and tags */
    size_t nnames, cap_names;
    int *slots;                  /* open-addressing table of name indices, -1 empty */
    size_t nslots;
    int max_stream;
    int device;                  /* the device whose rows these are */
    size_t peak_requested;       /* highest sum of live requested bytes */
} trace;

/* Read a trace (device: keep that device's rows; -1: the file must hold one device).
 * 1, or 0 after a message naming the file, line and fault on stderr. */
int trace_load(const char *path, int device, trace *t);
void trace_release(trace *t);

typedef struct replay_opts {
    int expandable;
    size_t capacity;             /* simulated device size (0: HWRT_SIM_MEMORY as set) */
    size_t overhead;             /* its context overhead (with capacity) */
    const char *conf;            /* more allocator settings, "key:value,..." */
    const char *snapshot;        /* on failure, hwrt_memory_snapshot there; every block is
                                    tagged with its trace id (unless the trace tags it) */
} replay_opts;

typedef struct replay_result {
    size_t peak_alloc, peak_resv, peak_req;
    long long dev_allocs, dev_frees, syncs, retries;
    double ns_per_op;
    size_t failed_op;            /* the op that failed (result 0) */
    char error[1024];            /* and hwrt_last_error() */
} replay_result;

/* Replay on a fresh simulated device 0 (then hwrt_shutdown): 1 done, 0 an allocation
 * failed (r->error), -1 the replay could not be set up (message on stderr). */
int trace_replay(const trace *t, const replay_opts *ro, replay_result *r);

#endif
