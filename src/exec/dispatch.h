/* The single dispatch point. Every piece of device work (copy, memset, kernel, host
 * function, event record or wait) goes through hwi_dispatch, where the profiler, the
 * sync checker, graph capture and launch_blocking hook in. Host-blocking calls pass
 * hwi_host_sync_check first, so capture can forbid them. */
#ifndef HWI_DISPATCH_H
#define HWI_DISPATCH_H

#include "stream.h"

typedef struct hwi_event hwi_event;

typedef enum hwi_work_kind {
    HWI_WORK_COPY, HWI_WORK_MEMSET, HWI_WORK_KERNEL, HWI_WORK_HOST_FUNC,
    HWI_WORK_EVENT_RECORD, HWI_WORK_EVENT_WAIT
} hwi_work_kind;

typedef struct hwi_work {
    hwi_work_kind kind;
    hwi_stream *stream;
    const char *name;            /* "MatMul", "MemcpyHtoD", "Memset", ... */
    /* set by a pre hook that took the work over (graph capture records it instead):
     * hwi_dispatch then reports success without submitting it; cleared by hwi_dispatch */
    int consumed;
    union {
        struct { void *dst; const void *src; size_t bytes; hwrt_memcpy_kind kind; int pinned; } copy;
        struct { void *dst; int value; size_t bytes; } set;
        hwrt_kernel kernel;
        struct { hwrt_host_fn fn; void *arg; } host;
        struct { hwi_event *ev; } event;
    } u;
} hwi_work;

/* Spans that layers below the profiler record on the host timeline (offload's evictions,
 * fetches and stalls) with hwi_dispatch_span; the profiler's hook receives them. The
 * values are stable: the profiler writes them into its raw files. */
typedef enum hwi_span_cat {
    HWI_PROF_OFFLOAD_EVICT = 1,   /* device -> host/disk, bytes moved */
    HWI_PROF_OFFLOAD_FETCH = 2,   /* host/disk -> device on demand, bytes moved */
    HWI_PROF_OFFLOAD_PREFETCH = 3,/* fetch ahead of use */
    HWI_PROF_OFFLOAD_STALL = 4,   /* time a caller was blocked waiting for residency */
    HWI_PROF_COLLECTIVE = 5,      /* a collective (name: "AllReduce", ...), bytes per rank */
    HWI_PROF_USER = 6             /* anything else worth a span on the host timeline */
} hwi_span_cat;

typedef struct hwi_hook {
    /* before submission; a status other than SUCCESS rejects the work; SUCCESS with
     * w->consumed set takes it over (no submission, later hooks are not called) */
    hwrt_status (*pre)(void *ctx, hwi_work *w);
    /* after submission (not called for consumed or rejected work) */
    void (*post)(void *ctx, const hwi_work *w, hwrt_status st);
    /* before a host-blocking call on s (s NULL: device-wide); non-SUCCESS forbids it */
    hwrt_status (*host_sync)(void *ctx, const char *api, hwi_stream *s);
    void *ctx;
    /* optional: after the host-blocking call that host_sync allowed has returned with
     * st (the profiler measures time blocked in syncs with the pair) */
    void (*host_sync_end)(void *ctx, const char *api, hwi_stream *s, hwrt_status st);
    /* nonzero: the hook must see every piece of work, so while it is installed graph
     * replay dispatches node by node through the hooks (the profiler) */
    int per_work;
    /* optional: the block at base is being freed (the pool orders its reuse, so a new
     * allocation at that address starts with no history), or an internal event
     * (hwi_event.internal) is going away; the sync checker drops what it knew of them */
    void (*forget)(void *ctx, const void *base);
    void (*forget_event)(void *ctx, const void *handle);
    /* optional: a span [start_ns, end_ns] (CLOCK_MONOTONIC) of category cat on device
     * (-1: none) that moved bytes; name is a string literal */
    void (*span)(void *ctx, hwi_span_cat cat, const char *name, int device,
                 uint64_t start_ns, uint64_t end_ns, uint64_t bytes);
} hwi_hook;

/* Hooks are few and long-lived (one per subsystem); adding twice is a no-op. */
hwrt_status hwi_dispatch_add_hook(const hwi_hook *h);
void hwi_dispatch_remove_hook(const hwi_hook *h);

/* Tell the hooks that the block at base is being freed / the internal event with this
 * handle is going away (the layers above exec call these: tensors, offload). */
void hwi_dispatch_forget(const void *base);
void hwi_dispatch_forget_event(const void *handle);
/* Hand a span to the hooks (the profiler records it while a session runs). */
void hwi_dispatch_span(hwi_span_cat cat, const char *name, int device, uint64_t start_ns,
                       uint64_t end_ns, uint64_t bytes);
/* 1 while an installed hook has per_work set. */
int hwi_dispatch_per_work(void);

hwrt_status hwi_dispatch(hwi_work *w);
/* Submit to the backend, bypassing hooks (graph replay uses it). */
hwrt_status hwi_dispatch_submit(const hwi_work *w);
/* Free the closures of host functions queued on s that never ran (skipped by a device
 * fault); called once the backend stream is destroyed, so none can run any more. */
void hwi_dispatch_drop_host_calls(hwi_stream *s);
hwrt_status hwi_host_sync_check(const char *api, hwi_stream *s);
/* NOT_PERMITTED when called from a host function (hwrt_launch_host_func): a host-blocking
 * call there would wait for itself. hwi_host_sync_check includes it. */
hwrt_status hwi_host_fn_check(const char *api);
/* Tell the hooks that a host-blocking call checked with hwi_host_sync_check returned. */
void hwi_host_sync_end(const char *api, hwi_stream *s, hwrt_status st);

#endif
