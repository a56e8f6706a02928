/* Work submission and execution: copies (with the link model), memsets, kernels and
 * host functions. Pageable copies block the caller until done, pinned ones do not. */
#include "sim.h"
#include "../../core/status.h"

#include <stdlib.h>
#include <string.h>

sim_op *sim_op_new(sim_op_type type, int engine)
{
    sim_op *op = malloc(sizeof *op);
    if (op) {
        op->type = type;
        op->engine = engine;
    }
    return op;
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

void sim_op_execute(sim_engine *e, sim_op *op)
{
    sim_dev *d = e->dev;
    if (atomic_load(&d->fault))
        return;                               /* sticky fault: queued work is skipped */
    char msg[256];
    int f = sim_fault_inject(d, op, msg, sizeof msg);
    if (f) {
        memcpy(d->fault_msg, msg, sizeof d->fault_msg);
        atomic_store(&d->fault, f);
        return;
    }
    uint64_t t0 = sim_now_ns();
    switch (op->type) {
    case SOP_COPY:
        memmove(op->u.copy.dst, op->u.copy.src, op->u.copy.bytes);
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
    sim_op *op = sim_op_new(SOP_COPY, engine);
    if (!op)
        return oom_op("hwrt_memcpy_async");
    op->u.copy.dst = dst;
    op->u.copy.src = src;
    op->u.copy.bytes = bytes;
    op->u.copy.kind = kind;
    op->u.copy.pinned = host_pinned;
    uint64_t seq = sim_stream_enqueue(s, op);     /* op may be freed from here on */
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
    sim_op *op = sim_op_new(SOP_MEMSET, SIM_ENG_COMPUTE);
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
    sim_op *op = sim_op_new(SOP_KERNEL, SIM_ENG_COMPUTE);
    if (!op)
        return oom_op("kernel launch");
    op->u.kernel = *k;
    sim_stream_enqueue(s, op);
    return HWRT_SUCCESS;
}

hwrt_status sim_host_func(hwrt_bstream *s, hwrt_host_fn fn, void *arg)
{
    sim_op *op = sim_op_new(SOP_HOSTFN, SIM_ENG_HOST);
    if (!op)
        return oom_op("hwrt_launch_host_func");
    op->u.host.fn = fn;
    op->u.host.arg = arg;
    sim_stream_enqueue(s, op);
    return HWRT_SUCCESS;
}
