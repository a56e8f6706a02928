/* Host memory. Pinned buffers are page-locked (the backend's host_alloc, else mmap +
 * mlock) and registered, so a copy can tell pinned from pageable host memory.
 *
 * Pinning is slow (page-locking every page), so with pinned_pool on (the default) a
 * freed pinned buffer is kept, still locked, in a cache by power-of-two size class and
 * handed out again for the next request of its class. Like cudaFreeHost, a free may be
 * followed by queued copies still reading the buffer: before a cached buffer is reused
 * the devices are synchronized once (unless that already happened since its free). */
#include "host_mem.h"
#include "pool.h"
#include "../base/config.h"
#include "../runtime/device_ops.h"
#include "../runtime/runtime.h"
#include "../base/log.h"
#include "../base/status.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef struct { char *base; size_t size; int pinned; size_t mapped;
                 const hwi_device *via_backend;   /* from its host_alloc (NULL: mlock'd) */
                 uint64_t freed_at; } hbuf;

enum { NCLASS = 48 };
static hbuf *cache[NCLASS];   /* cached pinned buffers per size class (stacks) */
static size_t ncache[NCLASS], capcache[NCLASS];
static uint64_t free_count, synced_upto;
static size_t cached_bytes;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static hbuf *bufs;            /* sorted by base */
static size_t nbufs, cap;

static size_t upper(const void *p)
{
    size_t lo = 0, hi = nbufs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (bufs[mid].base <= (const char *)p) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

int hwi_host_is_pinned(const void *p, size_t bytes)
{
    pthread_mutex_lock(&mu);
    size_t i = upper(p);
    int ok = i > 0 && bufs[i - 1].pinned &&
             (const char *)p + bytes <= bufs[i - 1].base + bufs[i - 1].size;
    pthread_mutex_unlock(&mu);
    return ok;
}

static int add(hbuf b)
{
    pthread_mutex_lock(&mu);
    if (nbufs == cap) {
        size_t nc = cap ? cap * 2 : 32;
        hbuf *nb = realloc(bufs, nc * sizeof *nb);
        if (!nb) { pthread_mutex_unlock(&mu); return 0; }
        bufs = nb;
        cap = nc;
    }
    size_t i = upper(b.base);
    memmove(&bufs[i + 1], &bufs[i], (nbufs - i) * sizeof *bufs);
    bufs[i] = b;
    nbufs++;
    pthread_mutex_unlock(&mu);
    return 1;
}

static void release(hbuf b)
{
    if (b.via_backend)
        hwi_dev_host_free(b.via_backend, b.base, b.mapped);
    else if (b.pinned) {
        munlock(b.base, b.mapped);
        munmap(b.base, b.mapped);
    } else
        free(b.base);
}

/* The class of `bytes` (4 KiB << class), NCLASS above the largest: not cached, and not
 * rounded (*rounded is then bytes). */
static int size_class(size_t bytes, size_t *rounded)
{
    int c = 12;                               /* 4 KiB minimum */
    while (c < NCLASS + 11 && ((size_t)1 << c) < bytes) c++;
    if (((size_t)1 << c) < bytes) {
        *rounded = bytes;
        return NCLASS;
    }
    *rounded = (size_t)1 << c;
    return c - 12;
}

/* Give every cached pinned buffer back to the system (caller holds no lock). */
static void flush_cache(void)
{
    for (int c = 0; c < NCLASS; c++) {
        pthread_mutex_lock(&mu);
        size_t n = ncache[c];
        hbuf *list = cache[c];
        cache[c] = NULL;
        ncache[c] = capcache[c] = 0;
        for (size_t i = 0; i < n; i++) cached_bytes -= list[i].mapped;
        pthread_mutex_unlock(&mu);
        for (size_t i = 0; i < n; i++) release(list[i]);
        free(list);
    }
}

static hwrt_status host_teardown(void)
{
    flush_cache();
    return HWRT_SUCCESS;
}

/* A cached pinned buffer of the class of `bytes`, made safe to reuse; 0 if none. */
static int from_cache(size_t bytes, hbuf *out)
{
    size_t rounded;
    int c = size_class(bytes, &rounded);
    if (c >= NCLASS) return 0;
    pthread_mutex_lock(&mu);
    int got = ncache[c] > 0;
    if (got) {
        *out = cache[c][--ncache[c]];
        cached_bytes -= out->mapped;
    }
    uint64_t snap = free_count;
    int need_sync = got && out->freed_at > synced_upto;
    pthread_mutex_unlock(&mu);
    if (need_sync) {                          /* queued copies may still read it */
        for (int i = 0; i < HWI_MAX_DEVICES; i++) {
            hwi_device *d = hwi_device_if_open(i);
            if (d) hwi_device_synchronize(d, "hwrt_host_alloc");
        }
        pthread_mutex_lock(&mu);
        if (snap > synced_upto) synced_upto = snap;
        pthread_mutex_unlock(&mu);
    }
    if (got) out->size = bytes;
    return got;
}

static int to_cache(hbuf b)
{
    size_t rounded;
    int c = size_class(b.mapped, &rounded);
    if (!b.pinned || c >= NCLASS || rounded != b.mapped || !hwi_cfg_int(HWI_CFG_PINNED_POOL))
        return 0;
    pthread_mutex_lock(&mu);
    if (ncache[c] == capcache[c]) {
        size_t nc = capcache[c] ? capcache[c] * 2 : 8;
        hbuf *n = realloc(cache[c], nc * sizeof *n);
        if (!n) { pthread_mutex_unlock(&mu); return 0; }
        cache[c] = n;
        capcache[c] = nc;
    }
    b.freed_at = ++free_count;
    cache[c][ncache[c]++] = b;
    cached_bytes += b.mapped;
    pthread_mutex_unlock(&mu);
    hwi_on_shutdown(50, host_teardown);
    return 1;
}

size_t hwi_host_cached_bytes(void)
{
    pthread_mutex_lock(&mu);
    size_t n = cached_bytes;
    pthread_mutex_unlock(&mu);
    return n;
}

static hwrt_status pin_new(hbuf *b)
{
    /* the calling thread's backend pins it when it can (the buffer remembers which) */
    hwi_device *d = NULL;
    if (hwi_runtime_active() && hwi_device_current(&d) == HWRT_SUCCESS && hwi_dev_has_host_alloc(d)) {
        void *p;
        HWI_TRY(hwi_dev_host_alloc(d, b->mapped, &p));
        b->base = p;
        b->via_backend = d;
        return HWRT_SUCCESS;
    }
    void *p = mmap(NULL, b->mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY,
                       "hwrt_host_alloc: cannot map %zu bytes of host memory", b->mapped);
    madvise(p, b->mapped, MADV_HUGEPAGE);   /* fewer TLB misses for the copy engines */
    /* Without CAP_IPC_LOCK a large mlock fails on RLIMIT_MEMLOCK. The buffer still
     * behaves as pinned towards hwrt's copy engines, which is what the simulated NPU
     * models; say so once. */
    static int warned;
    if (mlock(p, b->mapped) != 0 && !warned) {
        warned = 1;
        hwi_log(HWI_LOG_WARN, "hwrt_host_alloc: could not page-lock %zu bytes "
                "(RLIMIT_MEMLOCK, see `ulimit -l`); the buffer is treated as pinned "
                "but the kernel may swap it", b->mapped);
    }
    b->base = p;
    return HWRT_SUCCESS;
}

hwrt_status hwrt_host_alloc(void **hptr, size_t bytes, unsigned flags)
{
    if (!hptr)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_host_alloc: hptr is NULL");
    if (flags & ~(unsigned)HWRT_HOST_PINNED)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_host_alloc: flags 0x%x are unknown; "
                       "use HWRT_HOST_DEFAULT or HWRT_HOST_PINNED", flags);
    *hptr = NULL;
    if (bytes == 0)
        return HWRT_SUCCESS;
    hbuf b = {.size = bytes, .mapped = bytes, .pinned = (flags & HWRT_HOST_PINNED) != 0};
    if (b.pinned && hwi_cfg_int(HWI_CFG_PINNED_POOL)) {
        size_t rounded;
        if (size_class(bytes, &rounded) < NCLASS) b.mapped = rounded;
        if (from_cache(bytes, &b)) goto registered;
    }
    if (b.pinned) {
        hwrt_status st = pin_new(&b);
        if (st == HWRT_ERROR_HOST_OUT_OF_MEMORY) {    /* cached pinned memory first */
            flush_cache();
            st = pin_new(&b);
        }
        HWI_TRY(st);
    } else {
        b.base = malloc(bytes);
        if (!b.base)
            return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY,
                           "hwrt_host_alloc: malloc of %zu bytes failed", bytes);
    }
registered:
    if (!add(b)) {
        release(b);
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "hwrt_host_alloc: host out of memory");
    }
    *hptr = b.base;
    return HWRT_SUCCESS;
}

hwrt_status hwrt_host_free(void *hptr)
{
    if (!hptr)
        return HWRT_SUCCESS;
    pthread_mutex_lock(&mu);
    size_t i = upper(hptr);
    if (i == 0 || bufs[i - 1].base != hptr) {
        pthread_mutex_unlock(&mu);
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT,
                       "hwrt_host_free(%p): not a buffer from hwrt_host_alloc (or freed twice); "
                       "device memory goes to hwrt_free", hptr);
    }
    hbuf b = bufs[i - 1];
    memmove(&bufs[i - 1], &bufs[i], (nbufs - i) * sizeof *bufs);
    nbufs--;
    pthread_mutex_unlock(&mu);
    if (!to_cache(b)) release(b);
    return HWRT_SUCCESS;
}
