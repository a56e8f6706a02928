/* Work submission and execution: copies (with the link model), memsets, kernels and
 * host functions. Pageable copies block the caller until done, pinned ones do not. */
#include "sim.h"
#include "../../core/status.h"

#include <stdlib.h>
#include <string.h>

#include <sched.h>

/* Copies of at least this many bytes are split with the SIM_ENG_SPLIT helper thread. */
#define SIM_SPLIT_MIN ((size_t)8 << 20)

/* Fault injection hook (sim_fault.c): nonzero makes this op fail with that status. */
__attribute__((weak)) int sim_fault_inject(sim_dev *d, const sim_op *op, char *msg, size_t len)
{
    (void)d; (void)op; (void)msg; (void)len;
    return 0;
}

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

/* Copy with two threads: the device's split helper takes the second half while this
 * engine copies the first. A host memcpy of tens of MiB is limited by one core's
 * load/store throughput on many machines, so one thread per copy engine would model a
 * DMA engine slower than the host's memory system. Overlapping ranges stay single. */
static void copy_bytes(sim_dev *d, void *dst, const void *src, size_t n)
{
    const char *s = src;
    char *t = dst;
    if (n < SIM_SPLIT_MIN || (t < s + n && s < t + n)) {
        memmove(dst, src, n);
        return;
    }
    size_t half = (n / 2) & ~(size_t)4095;
    sim_op part = {.type = SOP_PART, .engine = SIM_ENG_SPLIT};
    part.u.copy.dst = t + half;
    part.u.copy.src = s + half;
    part.u.copy.bytes = n - half;
    atomic_init(&part.part_done, 0);
    sim_engine_push(&d->engines[SIM_ENG_SPLIT], &part);
    memcpy(t, s, half);
    unsigned i = 0;
    while (!atomic_load_explicit(&part.part_done, memory_order_acquire))
        if ((++i & 63) == 0) sched_yield();
}

void sim_op_execute(sim_engine *e, sim_op *op)
{
    sim_dev *d = e->dev;
    if (op->type == SOP_PART) {
        memcpy(op->u.copy.dst, op->u.copy.src, op->u.copy.bytes);
        return;
    }
    if (atomic_load(&d->fault))
        return;                               /* sticky fault: queued work is skipped */
    char msg[256];
    int f = sim_fault_inject(d, op, msg, sizeof msg);
    if (f) {
        memcpy(d->fault_msg, msg, sizeof d->fault_msg);
        atomic_store(&d->fault, f);
        return;
    }
    uint64_t t0;
    switch (op->type) {
    case SOP_COPY:
        t0 = sim_now_ns();
        copy_bytes(d, op->u.copy.dst, op->u.copy.src, op->u.copy.bytes);
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
