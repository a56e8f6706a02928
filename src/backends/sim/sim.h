/* The simulated NPU: internal structures shared by the sim_*.c files.
 *
 * Each device has its memory (sim_mem.c: a virtual address space far larger than the
 * capacity, physical memory as 2 MiB pages), a compute engine, an H2D and a D2H copy engine, and a host-callback engine, each a
 * thread. A stream is an in-order queue: only its head op is handed to an engine, so
 * ops of one stream run one after another while different streams overlap on different
 * engines, as on hardware. */
#ifndef SIM_H
#define SIM_H

#include "../backend.h"
#include "../range_alloc.h"
#include "../sticky_fault.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>

#define SIM_MAX_DEVICES 64

typedef struct sim_config {
    int devices;
    size_t memory[SIM_MAX_DEVICES];   /* capacity per device */
    size_t overhead;                  /* context overhead per opened device */
    double link_gbps;                 /* 0 = copies run at memcpy speed */
    double pageable_gbps;             /* bandwidth of copies from pageable memory */
    int compute_units;
    uint64_t spin_ns;                 /* adaptive spin window before a thread sleeps */
} sim_config;

/* SIM_ENG_SPLIT is no engine of the modelled device: it is a helper thread that takes half
 * of a large copy, so that one copy engine reaches the host's memory bandwidth where two
 * threads copy faster than one (docs/performance.md). */
enum { SIM_ENG_COMPUTE, SIM_ENG_H2D, SIM_ENG_D2H, SIM_ENG_HOST, SIM_ENG_SPLIT, SIM_ENG_COUNT };

/* SOP_PART: the helper's share of a split copy (sim_work.c), run by SIM_ENG_SPLIT. */
typedef enum { SOP_COPY, SOP_MEMSET, SOP_KERNEL, SOP_HOSTFN, SOP_RECORD, SOP_WAIT, SOP_PART } sim_op_type;

typedef struct sim_op sim_op;
typedef struct hwrt_bstream sim_stream;
typedef struct hwrt_bevent sim_event;
typedef struct hwrt_bdev sim_dev;

struct sim_op {
    sim_op *next;          /* stream queue */
    sim_op *enext;         /* engine queue */
    sim_op_type type;
    int engine;
    sim_stream *stream;
    uint64_t seq;          /* position in the stream */
    uint64_t corr;         /* activity correlation id (0: none; engine ops only) */
    union {
        struct { void *dst; const void *src; size_t bytes; int kind; int pinned;
                 struct split_job *job;             /* job: large copies (sim_work.c) */
                 uint64_t first_ns; } copy;         /* profiled: its first chunk began */
        struct { void *dst; int value; size_t bytes; } set;
        hwrt_kernel kernel;
        struct { hwrt_host_fn fn; void *arg; } host;
        struct { sim_event *ev; uint64_t gen; } ev;
    } u;
};

typedef struct sim_engine {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    sim_op *head, *tail;
    _Atomic int pending;
    int sleeping;
    int stop;
    int started;
    int threadless;                   /* deterministic simulation: no thread (sim_sched.c) */
    int kind;
    sim_dev *dev;
    uint64_t spin_ns;                 /* spin window, read once at start (config may reload) */
    _Atomic uint64_t busy_ns;
    uint64_t published_ns;            /* last busy-time publication (compute engine) */
    /* activity records not yet handed to the sink, and ops retired since (sim_activity.c) */
    hwrt_activity act[32];
    unsigned nact, act_retired;
    int act_slot;                     /* its retired-op counter */
} sim_engine;

struct hwrt_bdev {
    int ordinal;
    size_t capacity;
    size_t overhead;
    /* memory (sim_mem.c), guarded by mem_mu */
    char *va;                         /* virtual address space of va_size bytes */
    size_t va_size;
    unsigned char *pages;             /* state of each SIM_PAGE of it (sim_mem.c) */
    size_t npages;
    pthread_mutex_t mem_mu;
    size_t committed;                 /* bytes of physical pages in use (<= capacity) */
    hwi_range_alloc ranges;           /* free ranges of the address space */
    sim_engine engines[SIM_ENG_COUNT];
    int reg_slot;                     /* slot in the cross-process registry, -1 none */
    size_t pool_reserved, pool_allocated;   /* as reported by the pool (report_usage) */
    hwi_sticky_fault fault;           /* the first injected fault and its reason; two
                                         engines can fault at once, and the first stays */
    uint64_t open_ns;
};

struct hwrt_bstream {
    sim_dev *dev;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    sim_op *head, *tail;
    int inflight;                     /* head op is on an engine */
    int waiters;
    int blocked;                      /* head is a WAIT not yet satisfied */
    int kick_pins;                    /* kicks holding s from the blocked list (blocked_mu) */
    int listed;                       /* on the blocked list (blocked_mu): listed once */
    _Atomic uint64_t submitted, completed;
    int priority;
    /* op freelist, so that queuing an op costs no malloc: completed ops are pushed on
     * `returned` (lock-free, by whichever thread retires them); producers take the whole
     * returned list at once into `spare`, which alloc_lock guards */
    _Atomic(struct split_job *) cur_job; /* the in-flight copy's chunks, for waiters to help */
    _Atomic(sim_op *) returned;
    sim_op *spare;
    _Atomic int nspare;               /* ops in spare + returned (approximate) */
    atomic_flag alloc_lock;
};

struct hwrt_bevent {
    sim_dev *dev;
    unsigned flags;
    _Atomic int refs;                 /* the handle + each pending WAIT op */
    _Atomic uint64_t gen;             /* number of records issued */
    _Atomic uint64_t done_gen;        /* last record reached */
    _Atomic uint64_t ts_ns;           /* device time of that record */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int waiters;
};

/* sim_mem.c: the device's memory. SIM_PAGE: physical page and mapping granule. */
#define SIM_PAGE ((size_t)2 << 20)
hwrt_status sim_mem_open(sim_dev *d, size_t capacity);   /* sets capacity, va, pages */
/* Populate the untouched device pages of [p, p+len) before an op is timed (first touch
 * is not device time); 1 when it did work. */
int sim_mem_prefault(sim_dev *d, const void *p, size_t len);
void sim_mem_close(sim_dev *d);

/* sim_config.c */
hwrt_status sim_config_get(const sim_config **cfg, char *reason, size_t rlen);
uint64_t sim_now_ns(void);
void sim_wait_until_ns(uint64_t deadline);

/* sim_engine.c */
/* Stream and engine locks are held for a few instructions by a producer and an engine
 * thread at once: an adaptive mutex spins briefly instead of going to futex sleep. */
void sim_mutex_init(pthread_mutex_t *mu);
void sim_engine_start(sim_engine *e, sim_dev *dev, int kind);
void sim_engine_stop(sim_engine *e);
void sim_engine_push(sim_engine *e, sim_op *op);

/* sim_stream.c */
/* Queue op on s; returns its sequence number (op may be retired and reused at once). */
uint64_t sim_stream_enqueue(sim_stream *s, sim_op *op);
/* Called by engine e after running op, the head of its stream. Returns the stream's next
 * op when it is for e and e has nothing else queued: e runs it directly, skipping its
 * queue (one lock round trip less per op); else NULL. */
sim_op *sim_stream_complete(sim_engine *e, sim_op *op);
/* An op for stream s from its freelist (malloc when empty); NULL when out of memory. */
sim_op *sim_op_new(sim_stream *s, sim_op_type type, int engine);
/* Wait until the stream has completed op number seq (spin first, then sleep). */
void sim_stream_wait_seq(sim_stream *s, uint64_t seq);
hwrt_status sim_dev_fault_status(sim_dev *d);

/* sim_event.c */
void sim_event_reached(sim_event *e, uint64_t gen);
int sim_event_done(sim_event *e, uint64_t gen);
void sim_event_unref(sim_event *e);

/* sim_work.c */
/* Run op on e; 0 when it was skipped (sticky fault, or an injected fault by this op). */
int sim_op_execute(sim_engine *e, sim_op *op);
/* Populate the device pages op will touch (first touch is not device time); 1 if any. */
int sim_op_prefault(sim_dev *d, const sim_op *op);

/* sim_activity.c: activity records (backend.h, activity_enable). sim_op_new stamps engine
 * ops with the thread's correlation id and counts them; the engine runs a stamped op
 * with sim_activity_run: start_ns is when the engine took it (0: unknown, read now);
 * returns the op's end time (0 when nothing was reported), the next op's start if the
 * engine runs that one directly. */
typedef struct sim_act_sink {
    alignas(64) _Atomic(hwrt_activity_fn) fn;   /* NULL: no activity records wanted */
    _Atomic(void *) ctx;
} sim_act_sink;
extern sim_act_sink sim_activity_sink;
void sim_activity_submitted(void);
int sim_activity_slot(void);          /* a retired-op counter for an engine thread */
uint64_t sim_activity_run(sim_engine *e, sim_op *op, uint64_t start_ns);
/* Hand e's pending records to the sink and count its ops retired (before e goes idle). */
void sim_activity_flush(sim_engine *e);
hwrt_status sim_activity_enable(hwrt_activity_fn fn, void *ctx);
hwrt_status sim_activity_query(void);

/* A thread waiting for s helps copy the chunks of its in-flight large copy (sim_work.c). */
void sim_split_help(sim_stream *s);
/* A large copy became the in-flight head of s (caller holds s->mu): publish its chunks
 * to waiters and hand a share to the device's split helper. */
void sim_split_start(sim_stream *s, sim_op *op);

/* sim_fault.c (HWRT_SIM_FAULTS): parse the environment (0 + reason when malformed) and,
 * with arm set, make it the plan (when the first device opens),
 * the allocation hook (OUT_OF_MEMORY + sentence when an injected failure fires), the
 * engine hook (nonzero: the op faults, msg says why; stalls sleep inside) and a log line
 * of what was injected. */
int sim_fault_load(char *reason, size_t rlen, int arm);
hwrt_status sim_fault_alloc(sim_dev *d, size_t bytes, const char *what);
int sim_fault_inject(sim_dev *d, const sim_op *op, char *msg, size_t len);
void sim_fault_report(void);

/* sim_kernels.c */
void sim_kernel_run(const hwrt_kernel *k);

/* sim_stream.c: blocked-stream wakeups after an event was reached */
void sim_kick_blocked(void);
void sim_mark_blocked(sim_stream *s);
/* Take s off the blocked list for good and wait for kicks still holding it (destroy). */
void sim_unlist_blocked(sim_stream *s);

#endif
