/* Host memory. Pinned buffers are page-locked (the backend's host_alloc, else mmap +
 * mlock) and registered, so a copy can tell pinned from pageable host memory. */
#include "host_mem.h"
#include "../core/runtime.h"
#include "../core/log.h"
#include "../core/status.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef struct { char *base; size_t size; int pinned; int via_backend; } hbuf;

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
    const hwrt_backend_ops *ops = hwi_ops_if_selected();
    if (b.via_backend && ops && ops->host_free)
        ops->host_free(b.base, b.size);
    else if (b.pinned) {
        munlock(b.base, b.size);
        munmap(b.base, b.size);
    } else
        free(b.base);
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
    hbuf b = {.size = bytes, .pinned = (flags & HWRT_HOST_PINNED) != 0};
    if (b.pinned) {
        const hwrt_backend_ops *ops = hwi_ops_if_selected();
        if (ops && ops->host_alloc) {
            void *p;
            HWI_TRY(ops->host_alloc(bytes, &p));
            b.base = p;
            b.via_backend = 1;
        } else {
            void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED)
                return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY,
                               "hwrt_host_alloc: cannot map %zu bytes of host memory", bytes);
            /* Without CAP_IPC_LOCK a large mlock fails on RLIMIT_MEMLOCK. The buffer
             * still behaves as pinned towards hwrt's copy engines, which is what the
             * simulated NPU models; say so once. */
            static int warned;
            if (mlock(p, bytes) != 0 && !warned) {
                warned = 1;
                hwi_log(HWI_LOG_WARN, "hwrt_host_alloc: could not page-lock %zu bytes "
                        "(RLIMIT_MEMLOCK, see `ulimit -l`); the buffer is treated as pinned "
                        "but the kernel may swap it", bytes);
            }
            b.base = p;
        }
    } else {
        b.base = malloc(bytes);
        if (!b.base)
            return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY,
                           "hwrt_host_alloc: malloc of %zu bytes failed", bytes);
    }
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
    release(b);
    return HWRT_SUCCESS;
}
