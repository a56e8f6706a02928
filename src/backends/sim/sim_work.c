/* Work submission and execution: copies (with the link model), memsets, kernels and
 * host functions. Pageable copies block the caller until done, pinned ones do not. */
#include "sim.h"
#include "../../base/status.h"

#include <stdlib.h>
#include <string.h>

#include <sched.h>

/* Copies of at least this many bytes are split with the SIM_ENG_SPLIT helper thread
 * (smaller ones tend to be cache-resident, where one thread is fastest). */
#define SIM_SPLIT_MIN ((size_t)32 << 20)

static void link_throttle(sim_dev *d, const sim_op *op, uint64_t t0)
{
    const sim_config *c;
    char r[8];
    sim_config_get(&c, r, sizeof r);
    double gbps = op->u.copy.pinned ? c->link_gbps : c->pageable_gbps;
    if (op->u.copy.kind == HWRT_MEMCPY_DEVICE_TO_DEVICE || gbps <= 0)
        return;
    (void)d;
    sim_wait_until_ns(t0 + (uint64_t)((double)op->u.copy.bytes / gbps));
}

/* Large copies. A host memcpy of tens of MiB is limited by one core's load/store
 * throughput on many machines, and on a loaded host every thread handoff can cost more
 * than the copy, so a copy engine that is one thread would model a DMA engine much
 * slower than the host's memory system. A large copy therefore carries a job: its bytes
 * cut into chunks taken from a shared cursor by the copy engine, the device's split
 * helper, and any thread blocked waiting for that stream (hwrt_stream_synchronize, a
 * pageable copy), which would otherwise sit idle. Only the in-flight head of a stream
 * publishes its job (everything before it has completed), and the op still completes on
 * its engine, in stream order. The engine closes the job after its own share and waits
 * only for chunks already being copied. Jobs are reference counted: the op, the helper
 * and each waiter that joined hold one. */
#define SIM_SPLIT_CHUNK ((size_t)1 << 20)

typedef struct split_job {
    sim_op op;                     /* the SOP_PART queued on the helper; points here */
    _Atomic size_t next;           /* cursor: offset of the next chunk to take */
    size_t n;
    char *dst;
    const char *src;
    _Atomic int active;            /* threads copying chunks right now */
    _Atomic int closed;            /* the engine is done: no new joiners */
    _Atomic int refs;
    int stamp;                     /* profiled (activity records): note when copying began */
    _Atomic uint64_t first_ns;     /* when the first chunk was taken (stamp only) */
} split_job;

static void job_unref(split_job *j)
{
    if (atomic_fetch_sub_explicit(&j->refs, 1, memory_order_acq_rel) == 1) free(j);
}

static void job_join(split_job *j)
{
    atomic_fetch_add(&j->active, 1);
    while (!atomic_load(&j->closed)) {
        size_t off = atomic_fetch_add_explicit(&j->next, SIM_SPLIT_CHUNK, memory_order_relaxed);
        if (off >= j->n) break;
        if (off == 0 && j->stamp)  /* the helper or a waiter may start before the engine */
            atomic_store_explicit(&j->first_ns, sim_now_ns(), memory_order_relaxed);
        size_t len = j->n - off < SIM_SPLIT_CHUNK ? j->n - off : SIM_SPLIT_CHUNK;
        memcpy(j->dst + off, j->src + off, len);
    }
    atomic_fetch_sub_explicit(&j->active, 1, memory_order_release);
}

/* A job for a copy worth splitting, or NULL (small, overlapping, out of memory). */
static split_job *job_new(void *dst, const void *src, size_t n)
{
    const char *s = src;
    char *t = dst;
    if (n < SIM_SPLIT_MIN || (t < s + n && s < t + n)) return NULL;
    split_job *j = malloc(sizeof *j);
    if (!j) return NULL;
    memset(&j->op, 0, sizeof j->op);
    j->op.type = SOP_PART;
    j->op.engine = SIM_ENG_SPLIT;
    j->op.u.copy.job = j;
    atomic_init(&j->next, 0);
    j->n = n;
    j->dst = t;
    j->src = s;
    atomic_init(&j->active, 0);
    atomic_init(&j->closed, 0);
    atomic_init(&j->refs, 1);      /* the op's */
    j->stamp = 0;
    atomic_init(&j->first_ns, 0);
    return j;
}

/* The op is done with its job (copied, or skipped by a fault): unpublish, drop its ref. */
static void job_finish(sim_op *op)
{
    split_job *j = op->u.copy.job;
    if (!j) return;
    atomic_store(&j->closed, 1);
    unsigned i = 0;                /* chunks being copied by others finish first */
    while (atomic_load_explicit(&j->active, memory_order_acquire))
        if ((++i & 63) == 0) sched_yield();
    sim_stream *s = op->stream;
    pthread_mutex_lock(&s->mu);
    if (atomic_load(&s->cur_job) == j) atomic_store(&s->cur_job, NULL);
    pthread_mutex_unlock(&s->mu);
    op->u.copy.first_ns = atomic_load_explicit(&j->first_ns, memory_order_relaxed);
    op->u.copy.job = NULL;
    job_unref(j);
}

static void copy_bytes(sim_op *op)
{
    split_job *j = op->u.copy.job;
    if (!j) {
        memmove(op->u.copy.dst, op->u.copy.src, op->u.copy.bytes);
        return;
    }
    job_join(j);
    job_finish(op);
}

void sim_split_start(sim_stream *s, sim_op *op)
{
    split_job *j = op->u.copy.job;
    atomic_store(&s->cur_job, j);                   /* waiters may help */
    /* Wake the helper now, in parallel with the copy engine: pushed from the engine
     * once it runs, the helper started a wake-up later, and an engine that had gone to
     * sleep delayed it by two (measured 0.4-2.4 ms on a loaded VM, docs/performance.md). */
    atomic_fetch_add(&j->refs, 1);                  /* the helper's */
    sim_engine_push(&s->dev->engines[SIM_ENG_SPLIT], &j->op);
}

void sim_split_help(sim_stream *s)
{
    if (!atomic_load_explicit(&s->cur_job, memory_order_relaxed))
        return;
    pthread_mutex_lock(&s->mu);    /* the job outlives s->cur_job only with a ref */
    split_job *j = atomic_load(&s->cur_job);
    if (j) atomic_fetch_add(&j->refs, 1);
    pthread_mutex_unlock(&s->mu);
    if (!j) return;
    if (!hwi_fault_set(&s->dev->fault)) job_join(j);
    job_unref(j);
}

/* The device memory an op will touch, populated before it runs (sim_mem_prefault). */
int sim_op_prefault(sim_dev *d, const sim_op *op)
{
    int did = 0;
    switch (op->type) {
    case SOP_COPY:
        did |= sim_mem_prefault(d, op->u.copy.dst, op->u.copy.bytes);
        did |= sim_mem_prefault(d, op->u.copy.src, op->u.copy.bytes);
        break;
    case SOP_MEMSET:
        did = sim_mem_prefault(d, op->u.set.dst, op->u.set.bytes);
        break;
    case SOP_KERNEL: {
        const hwrt_kernel *k = &op->u.kernel;
        size_t in = hwrt_dtype_size(k->dtype), out = hwrt_dtype_size(k->out_dtype);
        size_t na = (size_t)k->n, nb = (size_t)k->n, no = (size_t)k->n;
        if (k->op == HWRT_K_MATMUL) {
            na = (size_t)(k->m * k->k);
            nb = (size_t)(k->k * k->nn);
            no = (size_t)(k->m * k->nn);
        } else if (k->op == HWRT_K_SUM) {
            na = (size_t)(k->m * k->k * k->nn);
            no = (size_t)(k->m * k->nn);
        }
        did |= sim_mem_prefault(d, k->out, no * out);
        if (k->op != HWRT_K_FILL) did |= sim_mem_prefault(d, k->a, na * in);
        if (k->b) did |= sim_mem_prefault(d, k->b, nb * in);
        break;
    }
    default:
        break;
    }
    return did;
}

int sim_op_execute(sim_engine *e, sim_op *op)
{
    sim_dev *d = e->dev;
    if (op->type == SOP_PART) {    /* the helper's share of a large copy */
        split_job *j = op->u.copy.job;
        if (!hwi_fault_set(&d->fault)) job_join(j);   /* like a waiter (sim_split_help) */
        job_unref(j);              /* may free op: the caller must not touch it */
        return 1;
    }
    if (hwi_fault_set(&d->fault)) {
        if (op->type == SOP_COPY) job_finish(op);
        return 0;                             /* sticky fault: queued work is skipped */
    }
    char msg[256];
    int f = sim_fault_inject(d, op, msg, sizeof msg);
    if (f) {
        hwi_fault_record(&d->fault, msg, NULL);   /* the first of two at once stays */
        if (op->type == SOP_COPY) job_finish(op);
        return 0;
    }
    uint64_t t0;
    switch (op->type) {
    case SOP_COPY:
        t0 = sim_now_ns();
        copy_bytes(op);
        link_throttle(d, op, t0);
        break;
    case SOP_MEMSET:
        memset(op->u.set.dst, op->u.set.value, op->u.set.bytes);
        break;
    case SOP_KERNEL:
        sim_kernel_run(&op->u.kernel);
        break;
    case SOP_HOSTFN:
        op->u.host.fn(op->u.host.arg);
        break;
    default:
        break;
    }
    return 1;
}

static hwrt_status oom_op(const char *what)
{
    return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "%s: host out of memory for the work item", what);
}

hwrt_status sim_memcpy_async(hwrt_bstream *s, void *dst, const void *src, size_t bytes,
                             hwrt_memcpy_kind kind, int host_pinned)
{
    int engine = kind == HWRT_MEMCPY_HOST_TO_DEVICE   ? SIM_ENG_H2D
                 : kind == HWRT_MEMCPY_DEVICE_TO_HOST ? SIM_ENG_D2H
                                                      : SIM_ENG_COMPUTE;
    sim_op *op = sim_op_new(s, SOP_COPY, engine);
    if (!op)
        return oom_op("hwrt_memcpy_async");
    op->u.copy.dst = dst;
    op->u.copy.src = src;
    op->u.copy.bytes = bytes;
    op->u.copy.kind = kind;
    op->u.copy.pinned = host_pinned;
    op->u.copy.job = job_new(dst, src, bytes);
    op->u.copy.first_ns = 0;
    if (op->u.copy.job) op->u.copy.job->stamp = op->corr != 0;
    uint64_t seq = sim_stream_enqueue(s, op);     /* op may be retired and reused from here */
    int host_side = kind == HWRT_MEMCPY_HOST_TO_DEVICE || kind == HWRT_MEMCPY_DEVICE_TO_HOST;
    if (host_side && !host_pinned) {
        /* pageable: the driver stages through its own buffer, so the call returns only
         * once the host memory has been consumed or filled */
        sim_stream_wait_seq(s, seq);
        return sim_dev_fault_status(s->dev);
    }
    return HWRT_SUCCESS;
}

hwrt_status sim_memset_async(hwrt_bstream *s, void *dptr, int value, size_t bytes)
{
    sim_op *op = sim_op_new(s, SOP_MEMSET, SIM_ENG_COMPUTE);
    if (!op)
        return oom_op("hwrt_memset_async");
    op->u.set.dst = dptr;
    op->u.set.value = value;
    op->u.set.bytes = bytes;
    sim_stream_enqueue(s, op);
    return HWRT_SUCCESS;
}

hwrt_status sim_kernel_launch(hwrt_bstream *s, const hwrt_kernel *k)
{
    sim_op *op = sim_op_new(s, SOP_KERNEL, SIM_ENG_COMPUTE);
    if (!op)
        return oom_op("kernel launch");
    op->u.kernel = *k;
    sim_stream_enqueue(s, op);
    return HWRT_SUCCESS;
}

hwrt_status sim_host_func(hwrt_bstream *s, hwrt_host_fn fn, void *arg)
{
    sim_op *op = sim_op_new(s, SOP_HOSTFN, SIM_ENG_HOST);
    if (!op)
        return oom_op("hwrt_launch_host_func");
    op->u.host.fn = fn;
    op->u.host.arg = arg;
    sim_stream_enqueue(s, op);
    return HWRT_SUCCESS;
}
