/* The backend contract: what a device driver must provide to hwrt.
 *
 * One `static const hwrt_backend_ops` table per backend, registered by name in
 * registry.c. A backend provides raw device operations only; pooling, offload,
 * profiling, checking and collectives live above it. Every slot maps 1:1 onto real
 * driver calls (see docs/ARCHITECTURE.md, "The backend contract").
 *
 * Rules:
 *  - the vendor library is loaded at run time (dlopen): a missing driver makes probe()
 *    return HWRT_ERROR_UNAVAILABLE with the reason, never a crash or a link error;
 *  - vendor error codes are translated to hwrt_status in the backend, the vendor's own
 *    message kept in the error sentence (hwi_err);
 *  - slots marked optional may be NULL; the core supplies the fallback. New optional slots
 *    are appended at the end of the table and keep HWRT_BACKEND_ABI_VERSION (a table
 *    built without them reads as NULL there); a change to an existing slot bumps it;
 *  - device pointers are plain addresses as far as the core is concerned: the pool
 *    splits segments by address arithmetic, so a backend whose memory is not addressable
 *    (OpenCL buffers) hands out addresses from a reserved range and maps them back to
 *    buffer + offset itself.
 */
#ifndef HWRT_BACKEND_H
#define HWRT_BACKEND_H

#include "hwrt.h"
#include "../base/op_table.h"   /* hwrt_kernel_op: the op table, defined once */

#define HWRT_BACKEND_ABI_VERSION 1u

typedef struct hwrt_bdev hwrt_bdev;         /* a backend's open device */
typedef struct hwrt_bstream hwrt_bstream;   /* an in-order queue on a device */
typedef struct hwrt_bevent hwrt_bevent;     /* a marker in a stream, with a timestamp */

/* Activity records (optional; CUPTI's activity API, ACL's profiling data): the device
 * reports the start and end of each op it executed, keyed by a correlation id the host
 * gave the op at enqueue; times are CLOCK_MONOTONIC ns, the clock of event_timestamp_ns.
 * Delivered in batches (as CUPTI hands over filled activity buffers), on the backend's
 * own thread (an engine, a driver callback thread), so fn must be cheap and must not
 * block; recs is only valid during the call. */
typedef struct hwrt_activity {
    uint64_t correlation_id;
    uint64_t start_ns, end_ns;
} hwrt_activity;
typedef void (*hwrt_activity_fn)(void *ctx, const hwrt_activity *recs, size_t n);

/* The correlation id of the work the calling thread is enqueueing (0: none). The layer
 * above sets it around an enqueue (the profiler's dispatch hook, CUPTI-style, so no op
 * slot's signature changes); a backend with activity_enable copies it into each copy,
 * memset, kernel and host function it queues. Defined in registry.c. */
extern _Thread_local uint64_t hwi_backend_correlation;

/* One kernel launch, already validated by the op front-end (src/tensor/ops.c) against
 * the op table (src/base/op_table.h: name, arity, allowed dtypes, whether out has its
 * own dtype): pointers are device memory of the stream's device, sizes are consistent,
 * the dtype is one the table allows for op. Backends name ops with hwi_op_name(). */
typedef struct hwrt_kernel {
    hwrt_kernel_op op;
    hwrt_dtype dtype;        /* dtype of a (and b), and of out except for CAST */
    hwrt_dtype out_dtype;
    void *out;
    const void *a;
    const void *b;           /* ADD, MUL, MATMUL */
    int64_t n;               /* elements of a (elementwise, CAST, FILL: of out) */
    int64_t m, k, nn;        /* MATMUL: out[m,nn] = a[m,k] b[k,nn];
                                SUM: a viewed as [m outer, k reduced, nn inner] */
    double scalar;           /* FILL value, SCALE alpha */
} hwrt_kernel;

typedef struct hwrt_backend_ops {
    uint32_t abi_version;    /* HWRT_BACKEND_ABI_VERSION */
    const char *name;

    /* Load the driver and count devices. On failure: UNAVAILABLE + reason text. */
    hwrt_status (*probe)(int *count, char *reason, size_t reason_len);
    hwrt_status (*device_props)(int ordinal, hwrt_device_props *out);
    hwrt_status (*device_open)(int ordinal, hwrt_bdev **dev);
    void (*device_close)(hwrt_bdev *dev);
    /* Driver view of the device: free and total bytes, and this process's context
     * overhead (bytes the driver holds for the context, included in total - free). */
    hwrt_status (*mem_info)(hwrt_bdev *dev, size_t *free_bytes, size_t *total_bytes,
                            size_t *overhead_bytes);

    /* Device memory segments (cuMemAlloc / aclrtMalloc / clCreateBuffer). */
    hwrt_status (*segment_alloc)(hwrt_bdev *dev, size_t bytes, void **dptr);
    hwrt_status (*segment_free)(hwrt_bdev *dev, void *dptr, size_t bytes);

    /* Optional virtual memory (cuMemAddressReserve+cuMemMap / aclrtReserveMemAddress+
     * aclrtMapMem): reserve address space once, back pieces of it with memory on demand.
     * Sizes and addresses are multiples of va_granularity(). */
    size_t (*va_granularity)(hwrt_bdev *dev);
    hwrt_status (*va_reserve)(hwrt_bdev *dev, size_t bytes, void **base);
    hwrt_status (*va_map)(hwrt_bdev *dev, void *addr, size_t bytes);
    hwrt_status (*va_unmap)(hwrt_bdev *dev, void *addr, size_t bytes);
    hwrt_status (*va_release)(hwrt_bdev *dev, void *base, size_t bytes);

    /* Optional page-locked host memory (cuMemHostAlloc / aclrtMallocHost). NULL: the
     * core uses mlock'd pages. */
    hwrt_status (*host_alloc)(size_t bytes, void **hptr);
    void (*host_free)(void *hptr, size_t bytes);

    /* Streams: in-order queues. */
    hwrt_status (*stream_create)(hwrt_bdev *dev, int priority, hwrt_bstream **s);
    void (*stream_destroy)(hwrt_bstream *s);          /* after the core synchronized it */
    hwrt_status (*stream_synchronize)(hwrt_bstream *s);
    hwrt_status (*stream_query)(hwrt_bstream *s);     /* SUCCESS or NOT_READY */
    hwrt_status (*stream_wait_event)(hwrt_bstream *s, hwrt_bevent *e);

    /* Work. host_pinned tells whether the host side is page-locked: a pageable copy
     * must not return before the host buffer has been consumed (H2D) or filled (D2H). */
    hwrt_status (*memcpy_async)(hwrt_bstream *s, void *dst, const void *src, size_t bytes,
                                hwrt_memcpy_kind kind, int host_pinned);
    hwrt_status (*memset_async)(hwrt_bstream *s, void *dptr, int value, size_t bytes);
    hwrt_status (*kernel_launch)(hwrt_bstream *s, const hwrt_kernel *k);
    /* Optional: NULL makes the core synchronize the stream and call fn inline. fn must
     * not run when the device faulted before it (the offload manager learns from that
     * whether a copy landed); sim and opencl skip it. */
    hwrt_status (*host_func)(hwrt_bstream *s, hwrt_host_fn fn, void *arg);

    /* Events with device timestamps. */
    hwrt_status (*event_create)(hwrt_bdev *dev, unsigned flags, hwrt_bevent **e);
    void (*event_destroy)(hwrt_bevent *e);
    hwrt_status (*event_record)(hwrt_bevent *e, hwrt_bstream *s);
    hwrt_status (*event_query)(hwrt_bevent *e);       /* SUCCESS or NOT_READY */
    hwrt_status (*event_synchronize)(hwrt_bevent *e);
    /* Optional (cuEventElapsedTime, for drivers without absolute timestamps); called
     * with two recorded timing events of one device (the core checks that). NULL: the
     * core derives it from event_timestamp_ns; a backend needs one of the two. */
    hwrt_status (*event_elapsed_ms)(float *ms, hwrt_bevent *start, hwrt_bevent *end);
    /* Device timestamp (ns) at which a completed event's record was reached (NOT_READY
     * before); also places work on the profiler's device timeline. */
    hwrt_status (*event_timestamp_ns)(hwrt_bevent *e, uint64_t *ns);

    /* Optional: NULL makes the core synchronize every stream it created. */
    hwrt_status (*device_synchronize)(hwrt_bdev *dev);
    /* Optional: clear a sticky fault (NULL: faults cannot be cleared). */
    hwrt_status (*device_reset)(hwrt_bdev *dev);

    /* Optional monitoring (what nvidia-smi / npu-smi read: NVML, DCMI). report_usage
     * tells the driver's monitor what this process's pool holds; monitor reads the
     * device-wide view of every process without opening a device. */
    void (*report_usage)(hwrt_bdev *dev, size_t reserved, size_t allocated);
    hwrt_status (*monitor)(hwrt_smi_snapshot *out);

    /* Optional activity records (see hwrt_activity_fn). activity_enable(fn, ctx) makes
     * the backend report, through fn, one record for every copy, memset, kernel and host
     * function enqueued with a nonzero hwi_backend_correlation that it ran, at the latest
     * when the engine that ran it goes idle; ops skipped (sticky fault) are not reported,
     * event records and waits never are. fn NULL disables: a call already under way may
     * still finish after it returns, so fn's owner must tolerate a late call.
     * Process-wide, for every device of the backend.
     * activity_query: SUCCESS once every op enqueued with a correlation id so far has
     * retired (reported or skipped), NOT_READY before; never blocks (cuptiActivityFlush).
     * NULL: the profiler places work with one event (marker) per launch instead. */
    hwrt_status (*activity_enable)(hwrt_activity_fn fn, void *ctx);
    hwrt_status (*activity_query)(void);

    /* Optional: the driver's own handle of a stream (CUstream for cuda), for libraries
     * that queue work on it themselves (NCCL). NULL, or NULL returned: none. */
    void *(*stream_native)(hwrt_bstream *s);

    /* Optional DLPack view of memory (the array API's __dlpack_device__): the DLPack
     * device type (DLDeviceType, include/hwrt/dlpack.h) through which a consumer reads
     * ptr, device memory from segment_alloc/va_map when pinned_host is 0, page-locked
     * memory from host_alloc when 1, and the (data, byte_offset) pair DLPack names it by.
     * The core sets data = ptr and byte_offset = 0 before the call, so a backend whose
     * pointers are the driver's own (CUDA: kDLCUDA / kDLCUDAHost) only sets the type;
     * OpenCL names a buffer as its cl_mem and the offset in it. NULL: kDLExtDev for
     * device memory (a consumer cannot read it) and kDLCPU for pinned host memory. */
    hwrt_status (*dlpack_device)(hwrt_bdev *dev, const void *ptr, int pinned_host,
                                 int *dl_device_type, void **data, uint64_t *byte_offset);

    /* Optional: make the calling thread current on dev (CUDA: its context made current,
     * ACL: aclrtSetCurrentContext), for libraries that work on the calling thread's
     * current device and queue on stream_native's handle themselves (NCCL, HCCL). The
     * device's sticky fault, if it has one. NULL: nothing to do (the driver has no
     * per-thread device state). */
    hwrt_status (*thread_enter)(hwrt_bdev *dev);

    /* Optional properties the core states in sentences or decides by, so that no code
     * above the backends names a backend (0 / NULL: absent).
     * host_addressable: device memory is host memory at the same address, which the CPU
     * reads and writes directly (a simulator): a host collective engine works on it in
     * place instead of staging through pinned buffers.
     * more_devices_hint: how a user gets more devices than probe reported, added to the
     * sentence of a device ordinal that does not exist. */
    int host_addressable;
    const char *more_devices_hint;
} hwrt_backend_ops;

/* Registry (registry.c). */
const hwrt_backend_ops *hwi_backend_find(const char *name);
/* 1 if hwrt knows the name (even when that backend is not compiled in). */
int hwi_backend_known(const char *name);
/* HWRT_SUCCESS if hwrt knows name; else HWRT_ERROR_INVALID_DEVICE with the sentence
 * "CALLER: unknown backend "NAME"; use "cuda", ... (or "auto": with_auto)", caller NULL:
 * no prefix. */
hwrt_status hwi_backend_check(const char *caller, const char *name, int with_auto);
/* 1 if "auto" may pick it. */
int hwi_backend_in_auto(const char *name);
/* Names of every backend hwrt knows, in "auto" preference order, NULL-terminated. */
const char *const *hwi_backend_names(void);

/* A copy's direction in words, for a backend's sentence of a failed copy. */
static inline const char *hwi_memcpy_kind_name(hwrt_memcpy_kind kind)
{
    switch (kind) {
    case HWRT_MEMCPY_HOST_TO_DEVICE: return "host to device";
    case HWRT_MEMCPY_DEVICE_TO_HOST: return "device to host";
    case HWRT_MEMCPY_DEVICE_TO_DEVICE: return "device to device";
    case HWRT_MEMCPY_HOST_TO_HOST: return "host to host";
    default: return "inferred";
    }
}

#endif
