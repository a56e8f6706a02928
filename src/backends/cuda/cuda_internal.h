/* The CUDA backend: structures shared by the cuda_*.c files.
 *
 * libcuda.so.1 (the driver) is opened at run time; every entry point is looked up with
 * dlsym (cuda_api.h declares them), so hwrt neither links against CUDA nor needs it to
 * start. One primary context per device (cuDevicePrimaryCtxRetain, shared with any
 * CUDA runtime user in the process), made current on the calling thread at every entry
 * point that touches the device. Device pointers are real CUdeviceptrs (unified
 * addressing), so the core's pool splits segments by plain address arithmetic.
 *
 * Errors: a CUDA error is translated in cu_err(); the sticky ones (illegal address,
 * launch failure, ...) poison the context for the rest of the process, as CUDA has
 * them: the device's fault is recorded and every later call on it fails with it.
 * There is no device_reset: recovery needs a new process. */
#ifndef HWRT_CUDA_INTERNAL_H
#define HWRT_CUDA_INTERNAL_H

#include "cuda_usage.h"
#include "cuda_api.h"
#include "../backend.h"
#include "../sticky_fault.h"

#include <pthread.h>
#include <stdatomic.h>

extern hcu_api hcu;            /* valid once cu_load() succeeded */

/* cuda_api.c: open the driver and count devices (once per process; the outcome, good or
 * bad, is cached). HWRT_CUDA_LIBRARY overrides the library opened. */
hwrt_status cu_load(int *count, char *reason, size_t rlen);
/* "CUDA_ERROR_X (n): text" for an error (never NULL). */
void cu_describe(hcu_result r, char *buf, size_t len);
/* 1 for the errors that leave the context unusable (CUDA's sticky errors). */
int cu_sticky(hcu_result r);
uint64_t cu_now_ns(void);
/* 1 once any device had a sticky fault (activity_query stops waiting for its ops). */
extern _Atomic int cu_faulted;

/* CUPTI (cuda_cupti.c). Around an enqueue: push returns the correlation id it pushed
 * (0: none, not profiling), pop takes it and whether the op was queued. Host work that
 * CUPTI does not see: begin at enqueue, record when it ran (or was skipped: ran 0). */
uint64_t cu_cupti_push(void);
void cu_cupti_pop(uint64_t pushed, int queued);
uint64_t cu_cupti_host_begin(void);
void cu_cupti_host_record(uint64_t id, uint64_t start_ns, uint64_t end_ns, int ran);
hwrt_status cu_activity_enable(hwrt_activity_fn fn, void *ctx);
hwrt_status cu_activity_query(void);

/* Kernel functions of the embedded PTX module (cuda_launch.c). */
enum { CU_K_EW_F32, CU_K_EW, CU_K_CAST, CU_K_MATMUL, CU_K_SUM, CU_K_COUNT };

typedef struct hwrt_bdev {
    int ordinal;
    hcu_device dev;
    hcu_context ctx;           /* the primary context, retained */
    int prio_least, prio_greatest; /* cuCtxGetStreamPriorityRange (greatest <= least) */
    size_t va_gran;            /* VMM granularity, 0: no VMM */
    size_t overhead;           /* used bytes seen at open (context + other processes) */
    hwi_pci_loc pci;           /* where NVML and the usage files name it (cuda_usage.h) */

    /* the sticky fault: first sticky error's sentence; never cleared */
    hwi_sticky_fault fault;

    /* event timestamps: ns = ref_ns + elapsed(ref, e); re-anchored when far away, since
     * cuEventElapsedTime's float loses resolution beyond seconds */
    pthread_mutex_t ts_mu;
    hcu_stream aux;            /* internal stream for reference records */
    hcu_event ref;
    uint64_t ref_ns;

    pthread_mutex_t mod_mu;    /* loads the kernel module once */
    hcu_module mod;
    hcu_function fn[CU_K_COUNT];
    int mod_status;            /* -1: not loaded yet, else the hwrt_status of the load */
    char mod_msg[512];
} cu_dev;

typedef struct hwrt_bstream {
    cu_dev *dev;
    hcu_stream s;
    int priority;              /* the CUDA priority it got (clamped) */
} cu_stream;

typedef struct hwrt_bevent {
    cu_dev *dev;
    hcu_event e;
    unsigned flags;            /* HWRT_EVENT_* */
} cu_event;

/* Make d's context current on this thread; the device's sticky fault if it has one. */
hwrt_status cu_enter(cu_dev *d);
/* Translate a failed call on d into a status with "<what>: CUDA_ERROR_X (n): text";
 * a sticky error is recorded as d's fault first. */
hwrt_status cu_err(cu_dev *d, hcu_result r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The sticky fault with its sentence, or SUCCESS. */
hwrt_status cu_dev_fault(cu_dev *d);
/* Primary context of device 0, for host allocations made before any device was opened. */
hwrt_status cu_host_ctx(void);

/* One launch, prepared without touching the driver: the function, the grid, and the
 * parameters (args[i] points into the struct, so it must not move; kinds[i] is 'i' int32,
 * 'l' 64-bit integer or pointer, 'f' float, 'd' double: tests/cuda/launch_args.c checks
 * them against the PTX's .param lists). */
typedef struct cu_launch {
    int which;                 /* CU_K_* */
    unsigned gx, gy, bx, by;
    int nargs;
    void *args[8];
    char kinds[8];
    int op, dt, odt;
    void *o;
    const void *a, *b;
    int64_t n, m, k, nn;
    float fs;
    double ds;
} cu_launch;
/* SUCCESS with *empty = 1 when there is nothing to run (no element); NOT_SUPPORTED when
 * the shape exceeds the kernel's grid. */
hwrt_status cu_launch_prepare(const hwrt_kernel *k, cu_launch *L, int *empty);
const char *cu_kernel_name(int which);
hwrt_status cu_kernel_launch(hwrt_bstream *s, const hwrt_kernel *k);
void cu_module_release(cu_dev *d);
extern const char hwi_cuda_kernels_ptx[];   /* cuda_kernels_ptx.c (generated) */

#endif
