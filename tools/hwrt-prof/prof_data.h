/* hwrt-prof: the collected data, loaded from <dir>/raw/prof_NNN.tsv (see src/prof/prof_writer.c
 * for the format), with device spans derived, and the figures the exporters share. */
#ifndef HWRT_PROF_DATA_H
#define HWRT_PROF_DATA_H

#include <stdint.h>
#include <stdio.h>

#include "base/escape.h"   /* the escaping helpers (header-only: no link to libhwrt) */

enum { ENG_COMPUTE, ENG_H2D, ENG_D2H, ENG_HOST, ENG_WAIT, ENG_COUNT };
extern const char *const engine_names[ENG_COUNT];

typedef struct pthread_info { uint32_t index; long os_tid; char name[32]; } pthread_info;
typedef struct pstream_info { uint32_t id; int device; int is_default; } pstream_info;

typedef struct pfile {
    long pid;
    int session;
    char backend[32];
    uint64_t start_ns, flush_ns, events, dropped, missing;
    pthread_info *threads;
    int nthreads;
    pstream_info *streams;
    int nstreams;
} pfile;

typedef struct pop {            /* a launch (W line) */
    int file;
    uint32_t thread;
    char kind[8];               /* copy memset kernel hostfn record wait */
    const char *name;
    int device;
    uint32_t stream;
    uint64_t t0, t1, dev_end, bytes;
    uint64_t dev_start;         /* from an activity record; 0: derive it */
    int sub, pinned, failed;
    uint64_t a, b, c;
    /* derived */
    int on_device;              /* has a device span */
    int engine;
    uint64_t dstart, dend;      /* device span */
    uint64_t wait;              /* gap since the previous op on the stream ended */
    uint32_t task_id;           /* position in its stream */
} pop;

typedef struct psync { int file; uint32_t thread; const char *name; int device; uint32_t stream;
                       uint64_t t0, t1; int failed; } psync;
typedef struct pmem { int file; uint32_t thread; const char *kind; int device;
                      uint64_t t, bytes, allocated, reserved; char addr[24]; } pmem;
typedef struct pext { int file; uint32_t thread; const char *cat; const char *name; int device;
                      uint64_t t0, t1, bytes; } pext;

typedef struct prof_data {
    char dir[1024];
    pfile *files; int nfiles;
    pop *ops; size_t nops;
    psync *syncs; size_t nsyncs;
    pmem *mems; size_t nmems;
    pext *exts; size_t nexts;
    uint64_t base_ns;           /* earliest session start: time 0 of every export */
    uint64_t end_ns;            /* latest time seen */
} prof_data;

/* Load every raw file under dir/raw. Returns 0, or -1 with a sentence in err. */
int prof_load(const char *dir, prof_data *d, char *err, size_t errlen);
void prof_free(prof_data *d);

/* Relative microseconds for exports. */
static inline double rel_us(const prof_data *d, uint64_t ns)
{
    return ns >= d->base_ns ? (double)(ns - d->base_ns) / 1000.0
                            : -(double)(d->base_ns - ns) / 1000.0;
}

/* ---- figures shared by the op table, the verdict and the report ---- */

typedef struct op_stat {
    const char *name;
    const char *task_type;      /* AI_CORE, MEMCPY, MEMSET, HOST_FUNC, EVENT_WAIT */
    int device;
    uint64_t count, total_ns, min_ns, max_ns;
} op_stat;

typedef struct copy_stat {
    int device;
    const char *direction;      /* HtoD DtoH DtoD HtoH */
    int pinned;
    uint64_t count, bytes, total_ns, min_ns, max_ns;
} copy_stat;

typedef struct prof_figures {
    op_stat *ops; int nops;             /* device ops, by total time descending */
    copy_stat *copies; int ncopies;
    uint64_t device_ns;                 /* sum of device op durations (waits excluded) */
    uint64_t kernel_ns, memcpy_ns, memset_ns, hostfn_ns;
    uint64_t hd_copy_ns, pageable_ns;   /* host<->device copy time, of it pageable */
    uint64_t hd_bytes, pageable_bytes, pinned_bytes, pinned_ns;
    uint64_t busy_ns, span_ns;          /* union of device activity; first start..last end */
    uint64_t idle_ns, gaps, long_gaps, longest_gap_ns;   /* idle inside span; gaps > 100 us */
    uint64_t syncs, sync_ns;            /* host syncs and time blocked in them */
    uint64_t launches, launch_ns;       /* host launch calls and time in them */
    uint64_t host_span_ns;              /* first to last host record */
    uint64_t offload_stall_ns, offload_fetch_ns, offload_fetch_bytes, offload_evict_bytes,
             offload_events, collective_ns, collectives;
    uint64_t dropped, missing;
    uint64_t peak_allocated, peak_reserved;
} prof_figures;

void prof_compute(const prof_data *d, prof_figures *f);
void prof_figures_free(prof_figures *f);

/* The verdict: a headline and up to 8 recommendation lines. */
typedef struct prof_verdict {
    char headline[256];
    char lines[8][512];
    int nlines;
} prof_verdict;
void prof_verdict_make(const prof_figures *f, prof_verdict *v);
void prof_verdict_print(FILE *out, const prof_figures *f, const prof_verdict *v);

/* Exports (each returns 0 or -1 with err). */
int export_trace_json(const prof_data *d, const char *path, char *err, size_t errlen);
int export_csvs(const prof_data *d, const prof_figures *f, const char *dir, char *err,
                size_t errlen);
int export_report_html(const prof_data *d, const prof_figures *f, const prof_verdict *v,
                       const char *path, char *err, size_t errlen);
/* The op table of --analyze=op. */
void print_op_table(FILE *out, const prof_figures *f);

/* Helpers */
const char *task_type_of(const pop *o);
const char *copy_direction(int sub);

#endif
