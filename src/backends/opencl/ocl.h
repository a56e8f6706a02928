/* The OpenCL backend: internal structures shared by the ocl_*.c files.
 *
 * The ICD loader (libOpenCL.so.1) is opened at run time and every entry point is
 * looked up with dlsym, so hwrt neither links against OpenCL nor needs a driver to
 * start. Debian's CL/cl.h only supplies the types and constants.
 *
 * Device memory: OpenCL buffers have no addresses, but the core's pool splits segments
 * by address arithmetic. Each opened device therefore reserves an address range of its
 * memory size (PROT_NONE, never touched) and every segment is a range of it backed by
 * one cl_mem; a device pointer is mapped back to (cl_mem, byte offset) by a sorted
 * segment table, and kernels take (buffer, offset) pairs. */
#ifndef OCL_H
#define OCL_H

#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR -1001   /* cl_khr_icd, in cl_ext.h */
#endif

#include "../backend.h"
#include "../range_alloc.h"
#include "../sticky_fault.h"

#include <pthread.h>
#include <stdatomic.h>

/* Every OpenCL entry point hwrt uses; the table is filled by dlsym. */
#define OCL_FUNCS(X)                                                                       \
    X(GetPlatformIDs) X(GetPlatformInfo) X(GetDeviceIDs) X(GetDeviceInfo)                  \
    X(CreateContext) X(ReleaseContext) X(CreateCommandQueue) X(ReleaseCommandQueue)       \
    X(Flush) X(Finish) X(CreateBuffer) X(ReleaseMemObject) X(EnqueueReadBuffer)            \
    X(EnqueueWriteBuffer) X(EnqueueCopyBuffer) X(EnqueueFillBuffer) X(EnqueueMapBuffer)    \
    X(EnqueueUnmapMemObject) X(CreateProgramWithSource) X(BuildProgram)                    \
    X(GetProgramBuildInfo) X(ReleaseProgram) X(CreateKernel) X(ReleaseKernel)              \
    X(SetKernelArg) X(EnqueueNDRangeKernel) X(EnqueueMarkerWithWaitList)                   \
    X(EnqueueBarrierWithWaitList) X(CreateUserEvent) X(SetUserEventStatus)                 \
    X(SetEventCallback) X(WaitForEvents) X(GetEventInfo) X(GetEventProfilingInfo)          \
    X(RetainEvent) X(ReleaseEvent)

typedef struct ocl_api {
#define OCL_SLOT(n) __typeof__(cl##n) *n;
    OCL_FUNCS(OCL_SLOT)
#undef OCL_SLOT
} ocl_api;

extern ocl_api ocl;           /* valid once ocl_load() succeeded */

#define OCL_MAX_DEVICES 64

/* ocl_api.c: load the ICD loader and enumerate devices across platforms (once per
 * process; the outcome, good or bad, is cached). */
hwrt_status ocl_load(int *count, char *reason, size_t rlen);
/* Platform and device of an ordinal (after ocl_load succeeded). */
void ocl_device_ids(int ordinal, cl_platform_id *plat, cl_device_id *dev);
const char *ocl_error_name(cl_int code);
/* Translate a CL error into a hwrt_status with a sentence "<what>: <CL_NAME> (<code>)..." */
hwrt_status ocl_err(cl_int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint64_t ocl_now_ns(void);

/* ---- devices and memory (ocl_device.c) ---- */

typedef struct ocl_seg {
    char *base;              /* address in the reserved range */
    size_t len;              /* range length (granule multiple) */
    size_t bytes;            /* buffer size */
    cl_mem mem;
} ocl_seg;

typedef struct ocl_hostjob ocl_hostjob;

enum {
    OCL_K_ADD_F32, OCL_K_MUL_F32, OCL_K_SCALE_F32, OCL_K_RELU_F32, OCL_K_MATMUL_F32,
    OCL_K_MATMUL_HALF, OCL_K_EW, OCL_K_CAST, OCL_K_SUM, OCL_K_MATMUL_F64, OCL_K_COUNT
};

typedef struct hwrt_bdev {
    int ordinal;
    cl_platform_id plat;
    cl_device_id dev;
    cl_context ctx;
    size_t total;            /* CL_DEVICE_GLOBAL_MEM_SIZE */
    size_t max_alloc;        /* CL_DEVICE_MAX_MEM_ALLOC_SIZE */
    int has_fp64;
    int64_t ts_offset;       /* device profiling clock minus host CLOCK_MONOTONIC */

    char *va;                /* reserved address range, never touched */
    size_t va_len;
    pthread_mutex_t mem_mu;
    size_t committed;        /* bytes of live buffers */
    hwi_range_alloc ranges;          /* free address ranges of the reservation */
    pthread_rwlock_t seg_lock;
    ocl_seg *segs;           /* sorted by base */
    int nsegs, cap_segs;

    pthread_mutex_t prog_mu; /* builds the program once; serializes set-arg + enqueue */
    cl_program prog;
    cl_kernel kernels[OCL_K_COUNT];
    int build_status;        /* -1: not built yet, else the hwrt_status of the build */
    char build_msg[512];

    /* sticky fault: the first failed command's sentence, until device_reset */
    hwi_sticky_fault fault;
    _Atomic unsigned epoch;  /* bumped by device_reset: older failures are acknowledged */
    int fail_kernel_at;      /* HWRT_OPENCL_FAIL_KERNEL: fault injection, 0 = off */
    _Atomic int launches;
    /* streams of the device, for device_reset */
    pthread_mutex_t streams_mu;
    struct hwrt_bstream **streams;
    int nstreams, cap_streams;

    /* host thread: runs host functions and completes user events */
    pthread_mutex_t host_mu;
    pthread_cond_t host_cv;
    ocl_hostjob *host_head, *host_tail;
    pthread_t host_thread;
    int host_started, host_stop;
} ocl_dev;

/* Map [p, p+bytes) to its buffer and offset; INVALID_ARGUMENT if it is no segment's. */
hwrt_status ocl_resolve(ocl_dev *d, const void *p, size_t bytes, cl_mem *mem, size_t *off);

/* ---- streams and events ---- */

typedef struct hwrt_bstream {
    ocl_dev *dev;
    cl_command_queue q;
    pthread_mutex_t enq_mu;  /* held across an enqueue and its tracking, so that `last`
                                is the newest command and multi-command sequences (host
                                functions) stay contiguous when threads share a stream */
    pthread_mutex_t mu;      /* guards `last` only: queries never wait for an enqueue */
    cl_event last;           /* last command enqueued (NULL: none yet) */
    unsigned last_epoch;     /* the device's epoch when `last` was enqueued */
    int priority;
} ocl_stream;

typedef struct hwrt_bevent {
    ocl_dev *dev;
    unsigned flags;
    pthread_mutex_t mu;
    cl_event ev;             /* marker of the last record (NULL: never recorded) */
    unsigned epoch;          /* the device's epoch when it was recorded */
} ocl_event;

/* Take ownership of ev as the stream's newest command and flush the queue. */
void ocl_stream_track(ocl_stream *s, cl_event ev);
/* Status of a command's event: SUCCESS, NOT_READY, or DEVICE_FAULT. A failed command
 * makes the device's fault sticky (naming the CL error) unless it was enqueued before
 * the last device_reset (epoch older than the device's): then it counts as done. */
hwrt_status ocl_event_status(ocl_dev *d, cl_event ev, unsigned epoch, const char *what);
/* The sticky fault with its sentence, or SUCCESS. */
hwrt_status ocl_dev_fault(ocl_dev *d);

/* ---- host thread (ocl_host.c) ---- */

struct ocl_hostjob {
    ocl_hostjob *next;
    hwrt_host_fn fn;         /* NULL: only complete `user` */
    void *arg;
    cl_event user;           /* completed once fn returned */
    cl_event marker;         /* released by the host thread */
    int failed;              /* the work before it failed: skip fn, fail `user` */
    ocl_dev *dev;
};

/* Queue job on its device's host thread once `after` completes (callback). */
hwrt_status ocl_host_after(ocl_dev *d, cl_event after, ocl_hostjob *job);
void ocl_host_stop(ocl_dev *d);
hwrt_status ocl_host_alloc(size_t bytes, void **hptr);
void ocl_host_free(void *hptr, size_t bytes);

/* ---- kernels (ocl_program.c, ocl_launch.c) ---- */

/* Build the program once per context; SUCCESS when the kernels are ready. */
hwrt_status ocl_program_get(ocl_dev *d);
void ocl_program_release(ocl_dev *d);
hwrt_status ocl_kernel_launch(hwrt_bstream *s, const hwrt_kernel *k);

#endif
