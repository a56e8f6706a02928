/* The Ascend backend (CANN's AscendCL + aclnn): structures shared by the ascend_*.c files.
 *
 * Written from CANN's published interfaces (docs/ascend.md says what was checked and what
 * only hardware can confirm). libascendcl.so is opened at run time through base/dynlib
 * (ascend_api.h declares every entry point); the op libraries are opened at the first
 * kernel. hwrt never calls aclFinalize: another user in the process (torch_npu,
 * MindSpore) may share ACL, and ACL cannot be used again after it.
 *
 * Contexts: one explicit context per device ordinal (aclrtCreateContext), created once
 * and kept for the process (pinned host memory and device properties need one before a
 * device is opened). aclrtSetDevice is reference-counted and is never called. ACL's
 * current context is per thread, and a stream may only be used from a thread whose
 * current context is the stream's (ACL_ERROR_RT_STREAM_CONTEXT, 107003): every entry
 * point that touches a device, the destroy paths and the report thread run asc_enter /
 * asc_thread_enter first.
 *
 * Errors: an ACL error is translated in asc_err(); AI Core / Vector Core exceptions and
 * timeouts, lost heartbeat, HBM ECC errors record a sticky fault on the device (hwrt's
 * own record, as ACL's recovery is not public in 8.x): every later call on it fails with
 * the first fault's sentence until device_reset finds the device healthy again. */
#ifndef HWRT_ASCEND_INTERNAL_H
#define HWRT_ASCEND_INTERNAL_H

#include "ascend_api.h"
#include "../backend.h"
#include "../sticky_fault.h"

#include <pthread.h>
#include <stdatomic.h>

extern hacl_api hacl;          /* the runtime slots are valid once asc_load() succeeded */

/* ascend_api.c: open libascendcl.so, aclInit, count devices (once per process; the
 * outcome, good or bad, is cached). HWRT_ASCEND_LIBRARY overrides the library opened. */
hwrt_status asc_load(int *count, char *reason, size_t rlen);
/* The explicit context of device ordinal (created at the first call, kept). */
hwrt_status asc_context(int ordinal, hacl_context *ctx);
/* Make ctx current on the calling thread. */
hwrt_status asc_set_context(hacl_context ctx, int ordinal);
/* "ACL_ERROR_X (n): <aclGetRecentErrMsg>" for an error (never NULL). */
void asc_describe(hacl_error r, char *buf, size_t len);
/* 1 for the errors that leave the device unusable (AI Core exception, ...). */
int asc_sticky(hacl_error r);
/* 1 for the floating-point overflow reports a synchronization may return in saturation
 * mode (207003/207016/207017): results, not faults. */
int asc_overflow(hacl_error r);
/* The hwrt_status an ACL error means (pure: tests/ascend checks the mapping). */
hwrt_status asc_translate(hacl_error r);
uint64_t asc_now_ns(void);

/* The op libraries (ascend_kernels.c loads them at the first kernel). */
hwrt_status asc_ops_load(void);

typedef struct hwrt_bdev {
    int ordinal;
    hacl_context ctx;
    char soc[64];              /* aclrtGetSocName: "Ascend910B3" */
    int prio_least, prio_greatest; /* ACL priorities: 0 highest; greatest <= least */
    size_t va_gran;            /* VMM granularity, 0: no VMM */
    size_t overhead;           /* used bytes seen at open (context + other processes) */

    /* the sticky fault: first fault's sentence; cleared only by a successful reset */
    hwi_sticky_fault fault;

    /* event timestamps: device time + offset, or ref_ns + elapsed(ref, e) without
     * aclrtEventGetTimestamp (see ascend_event.c) */
    pthread_mutex_t ts_mu;
    hacl_stream aux;           /* internal stream for reference records */
    hacl_event ref;
    uint64_t ref_ns;
    int64_t ts_offset_ns;      /* host CLOCK_MONOTONIC ns - device ns */

    /* host functions: the report thread (aclrtSubscribeReport + aclrtProcessReport) */
    pthread_mutex_t report_mu;
    pthread_t report_thread;
    int report_running;
    _Atomic int report_stop;
    uint64_t report_tid;       /* the thread's pthread_self(), ACL's threadId */

    /* VMM: the physical handle mapped at each granule of a reservation */
    pthread_mutex_t va_mu;
    struct asc_va_range *va;   /* reservations (ascend_device.c) */
} asc_dev;

typedef struct hwrt_bstream {
    asc_dev *dev;
    hacl_stream s;
    int priority;              /* the ACL priority it got */
    int subscribed;            /* to the device's report thread */
    pthread_mutex_t ws_mu;     /* the aclnn workspace and the subscription */
    void *ws;
    size_t ws_bytes;
} asc_stream;

typedef struct hwrt_bevent {
    asc_dev *dev;
    hacl_event e;
    unsigned flags;            /* HWRT_EVENT_* */
} asc_event;

/* Make the calling thread current on dev's context: the rule every entry point follows
 * (asc_enter, through the thread_enter slot, does it for threads hwrt does not own). */
hwrt_status asc_thread_enter(hwrt_bdev *dev);
/* asc_thread_enter, after the device's sticky fault (if any) is returned. */
hwrt_status asc_enter(asc_dev *d);
/* Translate a failed call on d into a status with "<what>: ACL_ERROR_X (n): text";
 * a sticky error is recorded as d's fault first. */
hwrt_status asc_err(asc_dev *d, hacl_error r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The sticky fault with its sentence, or SUCCESS. */
hwrt_status asc_dev_fault(asc_dev *d);
/* Anchor event timestamps against the host clock (ascend_event.c). */
hwrt_status asc_anchor(asc_dev *d);
/* ACL's aclrtMemcpyKind of a copy kind (pure). */
int asc_memcpy_kind(hwrt_memcpy_kind kind);
/* Stop the report thread (device_close). */
void asc_report_stop(asc_dev *d);

/* ---- kernels (ascend_kernels.c) ----
 * What one hwrt kernel becomes, decided without touching ACL (tests/ascend checks it):
 * the aclnn op, the shapes of its tensors, the ACL dtypes, the cubeMathType. */
enum { ASC_OP_ADD, ASC_OP_MUL, ASC_OP_MULS, ASC_OP_RELU, ASC_OP_CAST, ASC_OP_MATMUL,
       ASC_OP_REDUCE_SUM, ASC_OP_FILL, ASC_OP_COPY, ASC_OP_ZERO, ASC_OP_NONE };
typedef struct asc_plan {
    int op;                    /* ASC_OP_*; COPY: a same-dtype cast (D2D copy), ZERO:
                                  an empty reduction (out = 0), NONE: nothing to do */
    int dt, out_dt;            /* ACL data types of the inputs and of out */
    int64_t a_dims[3], b_dims[2], out_dims[2];
    int a_rank, b_rank, out_rank;
    int64_t reduce_dim;        /* REDUCE_SUM: the dimension reduced (1 of [m, k, nn]) */
    int8_t cube_math;          /* MATMUL */
    size_t out_bytes;          /* COPY / ZERO */
} asc_plan;
/* The ACL data type of an hwrt dtype, HACL_DT_UNDEFINED when ACL has none. */
int asc_acl_dtype(hwrt_dtype dt);
/* cubeMathType for a matmul of dt on soc: KEEP_DTYPE for float16/bfloat16 and, on the
 * SoCs that compute float32 in full precision (Ascend910B*, Ascend910_93*), for float32;
 * ALLOW_FP32_DOWN_PRECISION for float32 elsewhere (910A, 310P reject KEEP_DTYPE for it).
 * NOT_SUPPORTED with the sentence for every other dtype. */
hwrt_status asc_matmul_cube_math(hwrt_dtype dt, const char *soc, int8_t *cube);
hwrt_status asc_plan_kernel(const hwrt_kernel *k, const char *soc, asc_plan *p);
hwrt_status asc_kernel_launch(hwrt_bstream *s, const hwrt_kernel *k);
/* Free the stream's workspace (stream_destroy, after the stream is idle). */
void asc_workspace_free(asc_stream *s);

#endif
