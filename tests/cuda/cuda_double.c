/* A TEST DOUBLE of libcuda.so.1 (the CUDA driver API), never a driver: it exports the entry
 * points src/backends/cuda/cuda_api.h lists, so that the cuda backend (HWRT_CUDA_LIBRARY)
 * opens fake devices through the public API, for the NCCL engine's tests
 * (tests/cuda/cuda_nccl.c with the test double of libnccl, nccl_double.c). Nothing runs
 * "on cuda" through it: no conformance or other suite loads it, and the tests that do are
 * named as the doubles' (nccl_double_*). It presents devices only with
 * HWRT_CUDA_DOUBLE=device (cuInit answers CUDA_ERROR_NO_DEVICE otherwise), as many as
 * HWRT_CUDA_DOUBLE_DEVICES (default 1), each with 1 GiB:
 *   - device memory is host memory (cuMemAlloc), so a test reads it directly; pinned host
 *     memory is malloc'ed; VMM only with cuda_double_vmm (below), no memory pools, no kernels (cuModuleLoadData and
 *     cuLaunchKernel answer CUDA_ERROR_NOT_SUPPORTED: a test that launches one fails);
 *   - one primary context per device, current per thread; every call on memory, a stream
 *     or an event needs a current context, and a stream or event call needs the one of
 *     the stream's (event's) device: CUDA_ERROR_INVALID_CONTEXT otherwise (harder than
 *     the driver, which would often take it);
 *   - streams run each op at once, in order, except host functions (cuLaunchHostFunc):
 *     those run on a thread of the double's, and later work on their stream waits for them;
 *   - cuda_double_inject(code): the next cuStreamSynchronize fails with code; a sticky
 *     code (700 and the like) poisons the device's context: every later call on it fails
 *     with that code, as with the driver; cuda_double_fail_set_current(code, k): the
 *     k-th cuCtxSetCurrent from now (0: the next) fails with code, once;
 *     cuda_double_fail(entry, code, k): the k-th call of the entry point named (its
 *     exported name, "cuMemAlloc_v2") from now fails with code, once, doing nothing;
 *   - VMM only after cuda_double_vmm(granularity) (the attribute is 0 otherwise): an
 *     address range is mmap'ed PROT_NONE, a mapping is anonymous memory, readable once
 *     cuMemSetAccess ran; cuMemUnmap takes a whole mapping only, as the driver;
 *     cuda_double_vmm_live() counts mappings and unreleased handles.
 *   - cuda_double_clock_skew(ns): later cuEventRecord calls take their time ns off.
 * Hooks for the tests (tests/cuda/cuda_slots.c) and the NCCL double: cuda_double_*. */
#include "backends/cuda/cuda_api.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define API __attribute__((visibility("default")))
#define MAXDEV 4
#define DEV_MEM (1ull << 30)
#define CTX_MAGIC 0xc7c7
#define STREAM_MAGIC 0x5757
#define EVENT_MAGIC 0xe7e7

struct CUctx_st { int magic, ordinal, retained; unsigned poison; };
struct CUstream_st { int magic; struct CUctx_st *ctx; int pending, prio; };
struct CUevent_st { int magic; struct CUctx_st *ctx; unsigned flags; int recorded; uint64_t ns; };
typedef struct job { hcu_host_fn fn; void *data; struct CUstream_st *s; struct job *next; } job;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static struct CUctx_st ctxs[MAXDEV];
static _Thread_local struct CUctx_st *cur;
static int ndev, inited;
static unsigned inject_code;
static size_t used[MAXDEV];
static struct { void *p; size_t n; int dev; } devmem[512];
static struct { void *p; size_t n; } pinned[64];
static job *head, *tail;
static int worker_started;
static int inflight;   /* host functions queued or running */

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int sticky(unsigned r) { return r == 700 || (r >= 714 && r <= 719) || r == 214 || r == 702; }

/* the current context, which must be c's when c is given */
static hcu_result need(struct CUctx_st *c)
{
    if (!inited) return HCU_ERROR_NOT_INITIALIZED;
    if (!cur || (c && c != cur)) return HCU_ERROR_INVALID_CONTEXT;
    return cur->poison;
}
static hcu_result stream_ok(struct CUstream_st *s)
{
    if (!s || s->magic != STREAM_MAGIC) return HCU_ERROR_INVALID_HANDLE;
    return need(s->ctx);
}
/* later work on s comes after its host functions */
static void drain(struct CUstream_st *s)
{
    pthread_mutex_lock(&mu);
    while (s->pending) pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
}

static void *worker(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&mu);
        while (!head) pthread_cond_wait(&cv, &mu);
        job *j = head;
        head = j->next;
        if (!head) tail = NULL;
        pthread_mutex_unlock(&mu);
        j->fn(j->data);
        pthread_mutex_lock(&mu);
        j->s->pending--;
        inflight--;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
        free(j);
    }
    return NULL;
}

/* ---- hooks ---- */
API int cuda_double_current_device(void) { return cur ? cur->ordinal : -1; }
API int cuda_double_stream_device(const void *stream)
{
    const struct CUstream_st *s = stream;
    return s && s->magic == STREAM_MAGIC ? s->ctx->ordinal : -1;
}
API void cuda_double_stream_drain(void *stream) { drain(stream); }
/* 1 when [p, p + n) lies in one allocation of device dev */
API int cuda_double_in_device_memory(const void *p, size_t n, int dev)
{
    const char *c = p;
    int in = 0;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < 512 && !in; i++)
        in = devmem[i].p && devmem[i].dev == dev && c >= (char *)devmem[i].p &&
             c + n <= (char *)devmem[i].p + devmem[i].n;
    pthread_mutex_unlock(&mu);
    return in;
}
API void cuda_double_inject(unsigned code) { inject_code = code; }
API int cuda_double_stream_priority(const void *stream)
{
    const struct CUstream_st *s = stream;
    return s && s->magic == STREAM_MAGIC ? s->prio : 1000;
}
API int cuda_double_retained(int dev) { return dev >= 0 && dev < ndev ? ctxs[dev].retained : -1; }
/* the entry point named fails with code at its call `skip` calls from now, once */
static char fail_name[48];
static unsigned fail_code;
static int fail_skip;
API void cuda_double_fail(const char *entry, unsigned code, int skip)
{
    snprintf(fail_name, sizeof fail_name, "%s", entry);
    fail_code = code;
    fail_skip = skip;
}
#define FAIL_POINT()                                                                      \
    do {                                                                                  \
        if (fail_code && !strcmp(fail_name, __func__) && fail_skip-- == 0) {              \
            hcu_result f_ = fail_code;                                                    \
            fail_code = 0;                                                                \
            return f_;                                                                    \
        }                                                                                 \
    } while (0)
static size_t vmm_gran;
/* added to the time cuEventRecord takes: an event far from the ones recorded before */
static int64_t skew_ns;
API void cuda_double_clock_skew(int64_t ns) { skew_ns = ns; }
API void cuda_double_vmm(size_t granularity) { vmm_gran = granularity; }
/* the cuCtxSetCurrent call `skip` calls from now fails with code (once); 0: none armed */
static unsigned set_fail_code;
static int set_fail_skip;
API void cuda_double_fail_set_current(unsigned code, int skip)
{
    set_fail_code = code;
    set_fail_skip = skip;
}

/* ---- entry points ---- */
API hcu_result cuInit(unsigned flags)
{
    const char *m = getenv("HWRT_CUDA_DOUBLE");
    if (!m || strcmp(m, "device")) {
        fprintf(stderr, "hwrt's test double of libcuda: no devices without "
                "HWRT_CUDA_DOUBLE=device (it is not a driver)\n");
        return HCU_ERROR_NO_DEVICE;
    }
    const char *n = getenv("HWRT_CUDA_DOUBLE_DEVICES");
    ndev = n ? atoi(n) : 1;
    if (ndev < 1 || ndev > MAXDEV) ndev = 1;
    for (int i = 0; i < ndev; i++) ctxs[i] = (struct CUctx_st){CTX_MAGIC, i, 0, 0};
    inited = 1;
    return flags ? HCU_ERROR_INVALID_VALUE : HCU_SUCCESS;
}
API hcu_result cuDriverGetVersion(int *v) { *v = 13000; return HCU_SUCCESS; }

static const char *name_of(hcu_result r, int text)
{
    switch (r) {
    case HCU_SUCCESS: return text ? "no error" : "CUDA_SUCCESS";
    case HCU_ERROR_INVALID_VALUE: return text ? "invalid argument" : "CUDA_ERROR_INVALID_VALUE";
    case HCU_ERROR_OUT_OF_MEMORY: return text ? "out of memory" : "CUDA_ERROR_OUT_OF_MEMORY";
    case HCU_ERROR_INVALID_CONTEXT: return text ? "invalid device context" : "CUDA_ERROR_INVALID_CONTEXT";
    case HCU_ERROR_ILLEGAL_ADDRESS: return text ? "an illegal memory access was encountered"
                                                : "CUDA_ERROR_ILLEGAL_ADDRESS";
    case HCU_ERROR_NOT_SUPPORTED: return text ? "operation not supported (the test double of "
                                                "libcuda)" : "CUDA_ERROR_NOT_SUPPORTED";
    default: return NULL;
    }
}
API hcu_result cuGetErrorName(hcu_result r, const char **s)
{
    *s = name_of(r, 0);
    return *s ? HCU_SUCCESS : HCU_ERROR_INVALID_VALUE;
}
API hcu_result cuGetErrorString(hcu_result r, const char **s)
{
    *s = name_of(r, 1);
    return *s ? HCU_SUCCESS : HCU_ERROR_INVALID_VALUE;
}
API hcu_result cuDeviceGetCount(int *n)
{
    if (!inited) return HCU_ERROR_NOT_INITIALIZED;
    *n = ndev;
    return HCU_SUCCESS;
}
API hcu_result cuDeviceGet(hcu_device *d, int ord)
{
    if (!inited) return HCU_ERROR_NOT_INITIALIZED;
    if (ord < 0 || ord >= ndev) return HCU_ERROR_INVALID_DEVICE;
    *d = ord;
    return HCU_SUCCESS;
}
API hcu_result cuDeviceGetName(char *name, int len, hcu_device d)
{
    snprintf(name, (size_t)len, "hwrt's test double of libcuda, device %d", d);
    return HCU_SUCCESS;
}
API hcu_result cuDeviceTotalMem_v2(size_t *b, hcu_device d)
{
    FAIL_POINT();
    *b = DEV_MEM;
    return HCU_SUCCESS;
}
API hcu_result cuDeviceGetAttribute(int *v, unsigned a, hcu_device d)
{
    switch (a) {
    case HCU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case HCU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 1; break;
    case HCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case HCU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *v = 0xe0 + d; break;   /* no such bus in sysfs */
    case HCU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *v = 1; break;
    case HCU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: *v = vmm_gran != 0; break;
    default: *v = 0; break;
    }
    return HCU_SUCCESS;
}
API hcu_result cuDevicePrimaryCtxRetain(hcu_context *c, hcu_device d)
{
    FAIL_POINT();
    if (!inited) return HCU_ERROR_NOT_INITIALIZED;
    if (d < 0 || d >= ndev) return HCU_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&mu);
    ctxs[d].retained++;
    pthread_mutex_unlock(&mu);
    *c = &ctxs[d];
    return HCU_SUCCESS;
}
API hcu_result cuDevicePrimaryCtxRelease_v2(hcu_device d)
{
    if (d < 0 || d >= ndev || !ctxs[d].retained) return HCU_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&mu);
    ctxs[d].retained--;
    pthread_mutex_unlock(&mu);
    return HCU_SUCCESS;
}
API hcu_result cuCtxSetCurrent(hcu_context c)
{
    if (c && (c->magic != CTX_MAGIC || !c->retained)) return HCU_ERROR_INVALID_CONTEXT;
    if (set_fail_code && set_fail_skip-- == 0) {
        hcu_result r = set_fail_code;
        set_fail_code = 0;
        return r;
    }
    cur = c;
    return HCU_SUCCESS;
}
API hcu_result cuCtxSynchronize(void)
{
    FAIL_POINT();
    hcu_result r = need(NULL);
    if (r) return r;
    pthread_mutex_lock(&mu);
    while (inflight) pthread_cond_wait(&cv, &mu);  /* every host function has run */
    pthread_mutex_unlock(&mu);
    return cur->poison;
}
API hcu_result cuCtxGetStreamPriorityRange(int *least, int *greatest)
{
    FAIL_POINT();
    *least = 0;
    *greatest = -5;
    return need(NULL);
}
API hcu_result cuMemGetInfo_v2(size_t *f, size_t *t)
{
    FAIL_POINT();
    hcu_result r = need(NULL);
    if (r) return r;
    *t = DEV_MEM;
    *f = DEV_MEM - used[cur->ordinal];
    return HCU_SUCCESS;
}
API hcu_result cuMemAlloc_v2(hcu_dptr *p, size_t n)
{
    FAIL_POINT();
    hcu_result r = need(NULL);
    if (r) return r;
    if (!n) return HCU_ERROR_INVALID_VALUE;
    int d = cur->ordinal;
    if (n > DEV_MEM - used[d]) return HCU_ERROR_OUT_OF_MEMORY;
    void *m = aligned_alloc(256, (n + 255) & ~(size_t)255);
    if (!m) return HCU_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&mu);
    int i = 0;
    while (i < 512 && devmem[i].p) i++;
    if (i < 512) {
        devmem[i].p = m;
        devmem[i].n = n;
        devmem[i].dev = d;
        used[d] += n;
    }
    pthread_mutex_unlock(&mu);
    if (i == 512) {
        free(m);
        return HCU_ERROR_OUT_OF_MEMORY;
    }
    *p = (hcu_dptr)(uintptr_t)m;
    return HCU_SUCCESS;
}
API hcu_result cuMemFree_v2(hcu_dptr p)
{
    FAIL_POINT();
    hcu_result r = need(NULL);
    if (r) return r;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < 512; i++)
        if (devmem[i].p && (uintptr_t)devmem[i].p == p) {
            free(devmem[i].p);
            used[devmem[i].dev] -= devmem[i].n;
            devmem[i].p = NULL;
            pthread_mutex_unlock(&mu);
            return HCU_SUCCESS;
        }
    pthread_mutex_unlock(&mu);
    return HCU_ERROR_INVALID_VALUE;
}
#define UNSUPPORTED(name, params) \
    API hcu_result name params { return HCU_ERROR_NOT_SUPPORTED; }
UNSUPPORTED(cuMemAllocAsync, (hcu_dptr *p, size_t n, hcu_stream s))
UNSUPPORTED(cuMemFreeAsync, (hcu_dptr p, hcu_stream s))

/* ---- VMM (cuda_double_vmm): a handle is a size and two flags; its memory is the mapping's */
typedef struct { size_t n; int mapped, released; } vhandle;
static struct { uintptr_t p; size_t n; vhandle *h; int access; } maps[256];
static int handles_live;
API int cuda_double_vmm_live(int which)   /* 0: mappings, 1: handles not yet freed */
{
    int k = 0;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < 256; i++) k += maps[i].p != 0;
    if (which) k = handles_live;
    pthread_mutex_unlock(&mu);
    return k;
}
API hcu_result cuMemGetAllocationGranularity(size_t *g, const hcu_mem_alloc_prop *p, unsigned f)
{
    FAIL_POINT();
    if (!vmm_gran) return HCU_ERROR_NOT_SUPPORTED;
    if (!p || p->location.type != HCU_MEM_LOCATION_TYPE_DEVICE) return HCU_ERROR_INVALID_VALUE;
    *g = vmm_gran;
    return HCU_SUCCESS;
}
API hcu_result cuMemAddressReserve(hcu_dptr *out, size_t n, size_t a, hcu_dptr b, unsigned long long f)
{
    FAIL_POINT();
    hcu_result r = need(NULL);
    if (r) return r;
    if (!vmm_gran || !n || n % vmm_gran) return HCU_ERROR_INVALID_VALUE;
    size_t al = a > vmm_gran ? a : vmm_gran;
    char *m = mmap(NULL, n + al, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return HCU_ERROR_OUT_OF_MEMORY;
    uintptr_t base = ((uintptr_t)m + al - 1) & ~(uintptr_t)(al - 1);
    if (base > (uintptr_t)m) munmap(m, base - (uintptr_t)m);
    munmap((char *)base + n, (uintptr_t)m + n + al - base - n);
    *out = base;
    return HCU_SUCCESS;
}
API hcu_result cuMemAddressFree(hcu_dptr p, size_t n)
{
    FAIL_POINT();
    pthread_mutex_lock(&mu);
    for (int i = 0; i < 256; i++)
        if (maps[i].p && maps[i].p >= p && maps[i].p < p + n) {
            pthread_mutex_unlock(&mu);
            return HCU_ERROR_INVALID_VALUE;   /* still mapped: the driver refuses too */
        }
    pthread_mutex_unlock(&mu);
    return munmap((void *)(uintptr_t)p, n) ? HCU_ERROR_INVALID_VALUE : HCU_SUCCESS;
}
API hcu_result cuMemCreate(hcu_mem_handle *h, size_t n, const hcu_mem_alloc_prop *p, unsigned long long f)
{
    FAIL_POINT();
    hcu_result r = need(NULL);
    if (r) return r;
    if (!vmm_gran || !n || n % vmm_gran || !p || p->type != HCU_MEM_ALLOCATION_TYPE_PINNED)
        return HCU_ERROR_INVALID_VALUE;
    vhandle *v = calloc(1, sizeof *v);
    if (!v) return HCU_ERROR_OUT_OF_MEMORY;
    v->n = n;
    pthread_mutex_lock(&mu);
    handles_live++;
    pthread_mutex_unlock(&mu);
    *h = (hcu_mem_handle)(uintptr_t)v;
    return HCU_SUCCESS;
}
static void handle_put(vhandle *v)   /* under mu */
{
    if (v->released && !v->mapped) {
        handles_live--;
        free(v);
    }
}
API hcu_result cuMemRelease(hcu_mem_handle h)
{
    FAIL_POINT();
    vhandle *v = (vhandle *)(uintptr_t)h;
    pthread_mutex_lock(&mu);
    v->released = 1;
    handle_put(v);
    pthread_mutex_unlock(&mu);
    return HCU_SUCCESS;
}
API hcu_result cuMemMap(hcu_dptr p, size_t n, size_t o, hcu_mem_handle h, unsigned long long f)
{
    FAIL_POINT();
    vhandle *v = (vhandle *)(uintptr_t)h;
    if (!v || o || n != v->n || p % vmm_gran) return HCU_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&mu);
    int i = 0;
    while (i < 256 && maps[i].p) i++;
    for (int k = 0; k < 256; k++)
        if (maps[k].p && maps[k].p < p + n && p < maps[k].p + maps[k].n) i = 256;   /* overlap */
    if (i == 256 || v->mapped ||
        mmap((void *)(uintptr_t)p, n, PROT_NONE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) ==
            MAP_FAILED) {
        pthread_mutex_unlock(&mu);
        return HCU_ERROR_INVALID_VALUE;
    }
    maps[i].p = p;
    maps[i].n = n;
    maps[i].h = v;
    maps[i].access = 0;
    v->mapped = 1;
    pthread_mutex_unlock(&mu);
    return HCU_SUCCESS;
}
API hcu_result cuMemSetAccess(hcu_dptr p, size_t n, const hcu_mem_access_desc *d, size_t c)
{
    FAIL_POINT();
    if (!d || c != 1 || d->flags != HCU_MEM_ACCESS_FLAGS_PROT_READWRITE) return HCU_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&mu);
    int i = 0;
    while (i < 256 && !(maps[i].p && maps[i].p == p && maps[i].n == n)) i++;
    hcu_result r = i < 256 && !mprotect((void *)(uintptr_t)p, n, PROT_READ | PROT_WRITE)
                       ? HCU_SUCCESS : HCU_ERROR_INVALID_VALUE;
    if (!r) maps[i].access = 1;
    pthread_mutex_unlock(&mu);
    return r;
}
API hcu_result cuMemUnmap(hcu_dptr p, size_t n)
{
    FAIL_POINT();
    pthread_mutex_lock(&mu);
    int i = 0;
    while (i < 256 && !(maps[i].p && maps[i].p == p && maps[i].n == n)) i++;   /* whole ones */
    if (i == 256) {
        pthread_mutex_unlock(&mu);
        return HCU_ERROR_INVALID_VALUE;
    }
    mmap((void *)(uintptr_t)p, n, PROT_NONE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
         -1, 0);   /* back to reserved: the contents are gone */
    maps[i].h->mapped = 0;
    handle_put(maps[i].h);
    maps[i].p = 0;
    pthread_mutex_unlock(&mu);
    return HCU_SUCCESS;
}
UNSUPPORTED(cuModuleLoadData, (hcu_module *m, const void *image))
UNSUPPORTED(cuModuleUnload, (hcu_module m))
UNSUPPORTED(cuModuleGetFunction, (hcu_function *f, hcu_module m, const char *name))
UNSUPPORTED(cuLaunchKernel, (hcu_function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                             unsigned by, unsigned bz, unsigned sh, hcu_stream s, void **a, void **e))

API hcu_result cuMemHostAlloc(void **p, size_t n, unsigned flags)
{
    FAIL_POINT();
    hcu_result r = need(NULL);
    if (r) return r;
    void *m = malloc(n ? n : 1);
    pthread_mutex_lock(&mu);
    int i = 0;
    while (i < 64 && pinned[i].p) i++;
    if (i < 64 && m) {
        pinned[i].p = m;
        pinned[i].n = n;
    }
    pthread_mutex_unlock(&mu);
    if (i == 64 || !m) {
        free(m);
        return HCU_ERROR_OUT_OF_MEMORY;
    }
    *p = m;
    return HCU_SUCCESS;
}
API hcu_result cuMemFreeHost(void *p)
{
    pthread_mutex_lock(&mu);
    for (int i = 0; i < 64; i++)
        if (pinned[i].p && pinned[i].p == p) {
            free(p);
            pinned[i].p = NULL;
            pthread_mutex_unlock(&mu);
            return HCU_SUCCESS;
        }
    pthread_mutex_unlock(&mu);
    return HCU_ERROR_INVALID_VALUE;
}
API hcu_result cuPointerGetAttribute(void *out, unsigned a, hcu_dptr p)
{
    if (a != HCU_POINTER_ATTRIBUTE_MEMORY_TYPE) return HCU_ERROR_INVALID_VALUE;
    unsigned t = 0;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < 512 && !t; i++)
        if (devmem[i].p && p >= (uintptr_t)devmem[i].p && p < (uintptr_t)devmem[i].p + devmem[i].n)
            t = HCU_MEMORYTYPE_DEVICE;
    for (int i = 0; i < 64 && !t; i++)
        if (pinned[i].p && p >= (uintptr_t)pinned[i].p && p < (uintptr_t)pinned[i].p + pinned[i].n)
            t = HCU_MEMORYTYPE_HOST;
    pthread_mutex_unlock(&mu);
    if (!t) return HCU_ERROR_INVALID_VALUE;
    *(unsigned *)out = t;
    return HCU_SUCCESS;
}

/* a copy or memset on s: in order after s's host functions, at once */
static hcu_result copy(void *dst, const void *src, size_t n, hcu_stream s)
{
    hcu_result r = stream_ok(s);
    if (r) return r;
    drain(s);
    memmove(dst, src, n);
    return HCU_SUCCESS;
}
API hcu_result cuMemcpyHtoDAsync_v2(hcu_dptr d, const void *h, size_t n, hcu_stream s)
{
    FAIL_POINT();
    return copy((void *)(uintptr_t)d, h, n, s);
}
API hcu_result cuMemcpyDtoHAsync_v2(void *h, hcu_dptr d, size_t n, hcu_stream s)
{
    FAIL_POINT();
    return copy(h, (const void *)(uintptr_t)d, n, s);
}
API hcu_result cuMemcpyDtoDAsync_v2(hcu_dptr d, hcu_dptr src, size_t n, hcu_stream s)
{
    FAIL_POINT();
    return copy((void *)(uintptr_t)d, (const void *)(uintptr_t)src, n, s);
}
API hcu_result cuMemcpyAsync(hcu_dptr d, hcu_dptr src, size_t n, hcu_stream s)
{
    FAIL_POINT();
    return copy((void *)(uintptr_t)d, (const void *)(uintptr_t)src, n, s);
}
API hcu_result cuMemsetD8Async(hcu_dptr d, unsigned char v, size_t n, hcu_stream s)
{
    FAIL_POINT();
    hcu_result r = stream_ok(s);
    if (r) return r;
    drain(s);
    memset((void *)(uintptr_t)d, v, n);
    return HCU_SUCCESS;
}

/* *out = a new object of size bytes, a copy of init, in the current context */
static hcu_result make(void **out, const void *init, size_t size)
{
    hcu_result r = need(NULL);
    if (r) return r;
    void *o = calloc(1, size);
    if (!o) return HCU_ERROR_OUT_OF_MEMORY;
    memcpy(o, init, size);
    *out = o;
    return HCU_SUCCESS;
}

API hcu_result cuStreamCreateWithPriority(hcu_stream *out, unsigned flags, int prio)
{
    FAIL_POINT();
    return make((void **)out, &(struct CUstream_st){STREAM_MAGIC, cur, 0, prio}, sizeof **out);
}
API hcu_result cuStreamDestroy_v2(hcu_stream s)
{
    if (!s || s->magic != STREAM_MAGIC) return HCU_ERROR_INVALID_HANDLE;
    hcu_result r = need(s->ctx);
    if (r && r != s->ctx->poison) return r;
    drain(s);
    s->magic = 0;
    free(s);
    return HCU_SUCCESS;
}
API hcu_result cuStreamSynchronize(hcu_stream s)
{
    FAIL_POINT();
    hcu_result r = stream_ok(s);
    if (r) return r;
    drain(s);
    if (inject_code) {
        r = inject_code;
        inject_code = 0;
        if (sticky(r)) s->ctx->poison = r;
    }
    return r;
}
API hcu_result cuStreamQuery(hcu_stream s)
{
    FAIL_POINT();
    hcu_result r = stream_ok(s);
    if (r) return r;
    pthread_mutex_lock(&mu);
    int busy = s->pending;
    pthread_mutex_unlock(&mu);
    return busy ? HCU_ERROR_NOT_READY : HCU_SUCCESS;
}
API hcu_result cuStreamWaitEvent(hcu_stream s, hcu_event e, unsigned flags)
{
    FAIL_POINT();
    hcu_result r = stream_ok(s);
    if (r) return r;
    return e && e->magic == EVENT_MAGIC ? HCU_SUCCESS : HCU_ERROR_INVALID_HANDLE;
}
API hcu_result cuLaunchHostFunc(hcu_stream s, hcu_host_fn fn, void *data)
{
    FAIL_POINT();
    hcu_result r = stream_ok(s);
    if (r) return r;
    job *j = malloc(sizeof *j);
    if (!j) return HCU_ERROR_OUT_OF_MEMORY;
    *j = (job){fn, data, s, NULL};
    pthread_mutex_lock(&mu);
    if (!worker_started) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker, NULL)) {
            pthread_mutex_unlock(&mu);
            free(j);
            return HCU_ERROR_OUT_OF_MEMORY;
        }
        pthread_detach(t);
        worker_started = 1;
    }
    s->pending++;
    inflight++;
    if (tail) tail->next = j;
    else head = j;
    tail = j;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    return HCU_SUCCESS;
}

API hcu_result cuEventCreate(hcu_event *out, unsigned flags)
{
    FAIL_POINT();
    return make((void **)out, &(struct CUevent_st){EVENT_MAGIC, cur, flags, 0, 0}, sizeof **out);
}
API hcu_result cuEventDestroy_v2(hcu_event e)
{
    if (!e || e->magic != EVENT_MAGIC) return HCU_ERROR_INVALID_HANDLE;
    e->magic = 0;
    free(e);
    return HCU_SUCCESS;
}
API hcu_result cuEventRecord(hcu_event e, hcu_stream s)
{
    FAIL_POINT();
    hcu_result r = stream_ok(s);
    if (r) return r;
    if (!e || e->magic != EVENT_MAGIC || e->ctx != s->ctx) return HCU_ERROR_INVALID_HANDLE;
    drain(s);
    e->recorded = 1;
    e->ns = now_ns() + (uint64_t)skew_ns;
    return HCU_SUCCESS;
}
static hcu_result event_ok(hcu_event e)
{
    if (!e || e->magic != EVENT_MAGIC) return HCU_ERROR_INVALID_HANDLE;
    return need(e->ctx);
}
API hcu_result cuEventQuery(hcu_event e)
{
    FAIL_POINT();
    return event_ok(e);
}
API hcu_result cuEventSynchronize(hcu_event e)
{
    FAIL_POINT();
    return event_ok(e);
}
API hcu_result cuEventElapsedTime_v2(float *ms, hcu_event a, hcu_event b)
{
    FAIL_POINT();
    hcu_result r = event_ok(a);
    if (!r) r = event_ok(b);
    if (r) return r;
    if ((a->flags | b->flags) & HCU_EVENT_DISABLE_TIMING) return HCU_ERROR_INVALID_HANDLE;
    if (!a->recorded || !b->recorded) return HCU_ERROR_NOT_READY;
    *ms = (float)(((double)b->ns - (double)a->ns) / 1e6);
    return HCU_SUCCESS;
}
