/* OpenCL devices: probing, properties, opening (a context per device, a reserved address
 * range for its memory), driver-view memory figures, and segments (one cl_mem each)
 * at addresses of the reserved range. */
#include "ocl.h"
#include "../../base/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define OCL_GRANULE ((size_t)64 << 10)   /* address-range granule; buffers are exact */

hwrt_status ocl_probe(int *count, char *reason, size_t rlen)
{
    return ocl_load(count, reason, rlen);
}

static hwrt_status loaded_device(int ordinal, cl_platform_id *plat, cl_device_id *dev)
{
    int n;
    char reason[256];
    if (ocl_load(&n, reason, sizeof reason) != HWRT_SUCCESS)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "opencl backend: %s", reason);
    if (ordinal < 0 || ordinal >= n)
        return hwi_err(HWRT_ERROR_INVALID_DEVICE, "opencl device %d does not exist (%d device(s))",
                       ordinal, n);
    ocl_device_ids(ordinal, plat, dev);
    return HWRT_SUCCESS;
}

hwrt_status ocl_device_props(int ordinal, hwrt_device_props *p)
{
    cl_platform_id plat;
    cl_device_id dev;
    HWI_TRY(loaded_device(ordinal, &plat, &dev));
    memset(p, 0, sizeof *p);
    char name[96] = "", pname[64] = "";
    cl_ulong mem = 0;
    cl_uint cu = 0;
    ocl.GetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name - 1, name, NULL);
    ocl.GetPlatformInfo(plat, CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
    cl_int e = ocl.GetDeviceInfo(dev, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
    if (e != CL_SUCCESS)
        return ocl_err(e, "querying the memory size of opencl device %d", ordinal);
    ocl.GetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
    p->device_id = ordinal;
    snprintf(p->name, sizeof p->name, "%s (%s)", name, pname);
    snprintf(p->backend, sizeof p->backend, "opencl");
    p->total_memory = (size_t)mem;
    p->compute_units = (int)cu;
    p->copy_engines = 1;     /* OpenCL does not expose DMA engines: one in-order path */
    p->simulated = 0;
    p->link_gbps = 0;
    return HWRT_SUCCESS;
}

/* Offset between the device's profiling clock and CLOCK_MONOTONIC, so that event
 * timestamps land on the host timeline (the midpoint of a marker's round trip). */
static int64_t calibrate(ocl_dev *d)
{
    cl_int e;
    cl_command_queue q = ocl.CreateCommandQueue(d->ctx, d->dev, CL_QUEUE_PROFILING_ENABLE, &e);
    if (e != CL_SUCCESS) return 0;
    int64_t best = 0;
    uint64_t best_span = UINT64_MAX;
    for (int i = 0; i < 3; i++) {
        cl_event ev;
        uint64_t t0 = ocl_now_ns();
        if (ocl.EnqueueMarkerWithWaitList(q, 0, NULL, &ev) != CL_SUCCESS) break;
        ocl.WaitForEvents(1, &ev);
        uint64_t t1 = ocl_now_ns();
        cl_ulong end = 0;
        if (ocl.GetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) ==
                CL_SUCCESS && t1 - t0 < best_span) {
            best_span = t1 - t0;
            best = (int64_t)end - (int64_t)(t0 + (t1 - t0) / 2);
        }
        ocl.ReleaseEvent(ev);
    }
    ocl.ReleaseCommandQueue(q);
    return best;
}

void ocl_device_close(hwrt_bdev *d);

static void dev_free(ocl_dev *d)
{
    if (d->ctx) ocl.ReleaseContext(d->ctx);
    if (d->va) munmap(d->va, d->va_len);
    pthread_mutex_destroy(&d->mem_mu);
    pthread_mutex_destroy(&d->prog_mu);
    pthread_mutex_destroy(&d->host_mu);
    hwi_fault_destroy(&d->fault);
    pthread_mutex_destroy(&d->streams_mu);
    pthread_cond_destroy(&d->host_cv);
    pthread_rwlock_destroy(&d->seg_lock);
    hwi_range_destroy(&d->ranges);
    free(d->segs);
    free(d->streams);
    free(d);
}

hwrt_status ocl_device_open(int ordinal, hwrt_bdev **out)
{
    cl_platform_id plat;
    cl_device_id dev;
    HWI_TRY(loaded_device(ordinal, &plat, &dev));
    ocl_dev *d = calloc(1, sizeof *d);
    if (!d)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "opening opencl device %d: host out of "
                       "memory", ordinal);
    d->ordinal = ordinal;
    d->plat = plat;
    d->dev = dev;
    d->build_status = -1;
    pthread_mutex_init(&d->mem_mu, NULL);
    pthread_mutex_init(&d->prog_mu, NULL);
    pthread_mutex_init(&d->host_mu, NULL);
    hwi_fault_init(&d->fault);
    pthread_mutex_init(&d->streams_mu, NULL);
    pthread_cond_init(&d->host_cv, NULL);
    pthread_rwlock_init(&d->seg_lock, NULL);
    cl_ulong mem = 0, maxa = 0;
    cl_device_fp_config fp64 = 0;
    ocl.GetDeviceInfo(dev, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
    ocl.GetDeviceInfo(dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof maxa, &maxa, NULL);
    ocl.GetDeviceInfo(dev, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, NULL);
    d->total = (size_t)mem;
    d->max_alloc = (size_t)maxa;
    d->has_fp64 = fp64 != 0;
    cl_int e;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)plat, 0};
    d->ctx = ocl.CreateContext(props, 1, &dev, NULL, NULL, &e);
    if (e != CL_SUCCESS) {
        d->ctx = NULL;
        dev_free(d);
        return ocl_err(e, "opening opencl device %d: clCreateContext failed", ordinal);
    }
    d->va_len = (d->total + OCL_GRANULE - 1) / OCL_GRANULE * OCL_GRANULE;
    d->va = mmap(NULL, d->va_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (d->va == MAP_FAILED || !hwi_range_init(&d->ranges, d->va_len)) {
        if (d->va == MAP_FAILED) d->va = NULL;
        size_t len = d->va_len;
        dev_free(d);
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "opening opencl device %d: cannot reserve "
                       "%zu bytes of address space for its device pointers", ordinal, len);
    }
    d->ts_offset = calibrate(d);
    /* fault injection for tests: the Nth kernel launch on the device fails on the device
     * (its command waits on a user event that is then failed) */
    const char *fk = getenv("HWRT_OPENCL_FAIL_KERNEL");
    if (fk && *fk) {
        char *end;
        long n = strtol(fk, &end, 10);
        if (*end || n < 0 || n > 1000000000) {
            ocl_device_close(d);
            return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "HWRT_OPENCL_FAIL_KERNEL=\"%s\" is "
                           "invalid; expected the number of the kernel launch to fail (0 = "
                           "none)", fk);
        }
        d->fail_kernel_at = (int)n;
    }
    *out = d;
    return HWRT_SUCCESS;
}

void ocl_device_close(hwrt_bdev *d)
{
    ocl_host_stop(d);
    ocl_program_release(d);
    for (int i = 0; i < d->nsegs; i++)      /* segments the pool never returned */
        ocl.ReleaseMemObject(d->segs[i].mem);
    dev_free(d);
}

hwrt_status ocl_mem_info(hwrt_bdev *d, size_t *free_b, size_t *total, size_t *overhead)
{
    pthread_mutex_lock(&d->mem_mu);
    size_t used = d->committed;
    pthread_mutex_unlock(&d->mem_mu);
    *total = d->total;
    *free_b = used < d->total ? d->total - used : 0;
    *overhead = 0;          /* OpenCL reports no per-context overhead */
    return HWRT_SUCCESS;
}

/* ---- address ranges (first fit over the reserved range) ---- */

static size_t round_up(size_t n) { return (n + OCL_GRANULE - 1) / OCL_GRANULE * OCL_GRANULE; }

/* ---- segment table: address -> (cl_mem, offset) ---- */

static int seg_index(ocl_dev *d, const void *p)     /* first segment with base > p */
{
    int lo = 0, hi = d->nsegs;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (d->segs[mid].base <= (const char *)p) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

hwrt_status ocl_resolve(ocl_dev *d, const void *p, size_t bytes, cl_mem *mem, size_t *off)
{
    pthread_rwlock_rdlock(&d->seg_lock);
    int i = seg_index(d, p);
    const ocl_seg *s = i > 0 ? &d->segs[i - 1] : NULL;
    int ok = s && (size_t)((const char *)p - s->base) + bytes <= s->bytes;
    if (ok) {
        *mem = s->mem;
        *off = (size_t)((const char *)p - s->base);
    }
    pthread_rwlock_unlock(&d->seg_lock);
    if (!ok)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "opencl device %d: %p + %zu bytes is not "
                       "inside one of its buffers", d->ordinal, p, bytes);
    return HWRT_SUCCESS;
}

/* DLPack names OpenCL memory by its cl_mem and the offset in it (kDLOpenCL); pinned host
 * memory is mapped host memory, readable in place (kDLCPU). */
hwrt_status ocl_dlpack_device(hwrt_bdev *dev, const void *ptr, int pinned_host,
                              int *dl_device_type, void **data, uint64_t *byte_offset)
{
    if (pinned_host) {
        *dl_device_type = kDLCPU;
        return HWRT_SUCCESS;
    }
    *dl_device_type = kDLOpenCL;
    if (!ptr) return HWRT_SUCCESS;          /* an empty tensor has no buffer */
    cl_mem mem;
    size_t off;
    HWI_TRY(ocl_resolve((ocl_dev *)dev, ptr, 1, &mem, &off));
    *data = (void *)mem;
    *byte_offset = off;
    return HWRT_SUCCESS;
}

static hwrt_status oom(ocl_dev *d, size_t bytes, const char *why)
{
    char a[32], b[32], c[32];
    return hwi_err(HWRT_ERROR_OUT_OF_MEMORY, "opencl device %d: allocating %s failed: %s (%s of "
                   "%s in use by this process)", d->ordinal, hwi_fmt_bytes(a, sizeof a, bytes),
                   why, hwi_fmt_bytes(b, sizeof b, d->committed),
                   hwi_fmt_bytes(c, sizeof c, d->total));
}

static int seg_insert(ocl_dev *d, ocl_seg s)
{
    pthread_rwlock_wrlock(&d->seg_lock);
    if (d->nsegs == d->cap_segs) {
        int nc = d->cap_segs ? d->cap_segs * 2 : 32;
        ocl_seg *ns = realloc(d->segs, (size_t)nc * sizeof *ns);
        if (!ns) { pthread_rwlock_unlock(&d->seg_lock); return 0; }
        d->segs = ns;
        d->cap_segs = nc;
    }
    int i = seg_index(d, s.base);
    memmove(&d->segs[i + 1], &d->segs[i], (size_t)(d->nsegs - i) * sizeof *d->segs);
    d->segs[i] = s;
    d->nsegs++;
    pthread_rwlock_unlock(&d->seg_lock);
    return 1;
}

hwrt_status ocl_segment_alloc(hwrt_bdev *d, size_t bytes, void **dptr)
{
    size_t want = bytes ? bytes : 1, len = round_up(want), off;
    if (want > d->max_alloc)
        return oom(d, want, "larger than the device's largest buffer "
                   "(CL_DEVICE_MAX_MEM_ALLOC_SIZE)");
    pthread_mutex_lock(&d->mem_mu);
    int got = d->committed + want > d->total ? HWI_RANGE_FULL
              : hwi_range_take(&d->ranges, len, &off);
    if (got != HWI_RANGE_OK) {
        hwrt_status st = got == HWI_RANGE_FULL ? oom(d, want, "the device memory is used up")
                         : hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "opencl device %d: allocating "
                                   "%zu bytes failed: host out of memory for its address-range "
                                   "list", d->ordinal, want);
        pthread_mutex_unlock(&d->mem_mu);
        return st;
    }
    d->committed += want;
    pthread_mutex_unlock(&d->mem_mu);
    cl_int e;
    cl_mem m = ocl.CreateBuffer(d->ctx, CL_MEM_READ_WRITE, want, NULL, &e);
    if (e == CL_SUCCESS && !seg_insert(d, (ocl_seg){d->va + off, len, want, m})) {
        ocl.ReleaseMemObject(m);
        e = CL_OUT_OF_HOST_MEMORY;
    }
    if (e != CL_SUCCESS) {
        pthread_mutex_lock(&d->mem_mu);
        hwi_range_give(&d->ranges, off, len);
        d->committed -= want;
        pthread_mutex_unlock(&d->mem_mu);
        return ocl_err(e, "opencl device %d: clCreateBuffer of %zu bytes", d->ordinal, want);
    }
    *dptr = d->va + off;
    return HWRT_SUCCESS;
}

hwrt_status ocl_segment_free(hwrt_bdev *d, void *dptr, size_t bytes)
{
    pthread_rwlock_wrlock(&d->seg_lock);
    int i = seg_index(d, dptr);
    if (i == 0 || d->segs[i - 1].base != dptr) {
        pthread_rwlock_unlock(&d->seg_lock);
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "opencl device %d: segment free of %p "
                       "(%zu bytes): not the start of a buffer of this device", d->ordinal,
                       dptr, bytes);
    }
    ocl_seg s = d->segs[i - 1];
    memmove(&d->segs[i - 1], &d->segs[i], (size_t)(d->nsegs - i) * sizeof *d->segs);
    d->nsegs--;
    pthread_rwlock_unlock(&d->seg_lock);
    /* OpenCL keeps the buffer alive until commands still using it have finished */
    ocl.ReleaseMemObject(s.mem);
    pthread_mutex_lock(&d->mem_mu);
    hwi_range_give(&d->ranges, (size_t)(s.base - d->va), s.len);
    d->committed -= s.bytes;
    pthread_mutex_unlock(&d->mem_mu);
    return HWRT_SUCCESS;
}
