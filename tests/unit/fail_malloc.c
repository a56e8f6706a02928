/* LD_PRELOAD module for tests/unit/test_cov_oom.c: the host runs out of memory at one
 * chosen allocation libhwrt asks for. HWRT_FAIL_MALLOC_NTH=N fails the Nth malloc, calloc,
 * realloc, posix_memalign or aligned_alloc called from libhwrt.so itself (not from libc,
 * the test or other libraries), once; the call numbers are counted on every thread. When
 * it fails one it writes "fail_malloc: failed call N" to stderr; fail_malloc_calls()
 * says how many it counted so far, so a sweep knows where to stop.
 * HWRT_FAIL_MALLOC_BACKTRACE=1 also prints the failed call's stack. */
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static _Atomic uintptr_t lo, hi;     /* libhwrt.so's mapped range, once found */
static _Atomic long calls;
static long nth = -1;                /* -1: not read yet, 0: never fail */

static int find_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
    if (!info->dlpi_name || !strstr(info->dlpi_name, "/libhwrt.so")) return 0;
    uintptr_t a = UINTPTR_MAX, b = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        uintptr_t s = info->dlpi_addr + ph->p_vaddr;
        if (s < a) a = s;
        if (s + ph->p_memsz > b) b = s + ph->p_memsz;
    }
    atomic_store(&lo, a);
    atomic_store(&hi, b);
    return 1;
}

/* Whether this call (from return address ra) is the one to fail. */
static int should_fail(void *ra)
{
    if (nth < 0) {
        const char *e = getenv("HWRT_FAIL_MALLOC_NTH");
        nth = e ? atol(e) : 0;
    }
    if (!atomic_load(&hi)) dl_iterate_phdr(find_lib, NULL);
    uintptr_t a = (uintptr_t)ra;
    if (!atomic_load(&hi) || a < atomic_load(&lo) || a >= atomic_load(&hi)) return 0;
    long n = atomic_fetch_add(&calls, 1) + 1;
    if (n != nth) return 0;
    char msg[64];
    int len = snprintf(msg, sizeof msg, "fail_malloc: failed call %ld\n", n);
    if (write(2, msg, (size_t)len) < 0) {}
    if (getenv("HWRT_FAIL_MALLOC_BACKTRACE")) {     /* where, for a failing child */
        void *frames[16];
        backtrace_symbols_fd(frames, backtrace(frames, 16), 2);
    }
    return 1;
}

void *malloc(size_t n)
{
    if (should_fail(__builtin_return_address(0))) { errno = ENOMEM; return NULL; }
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
    if (should_fail(__builtin_return_address(0))) { errno = ENOMEM; return NULL; }
    return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
    if (should_fail(__builtin_return_address(0))) { errno = ENOMEM; return NULL; }
    return __libc_realloc(p, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    if (should_fail(__builtin_return_address(0))) return ENOMEM;
    void *p = __libc_memalign(align, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
    if (should_fail(__builtin_return_address(0))) { errno = ENOMEM; return NULL; }
    return __libc_memalign(align, n);
}

/* How many calls were counted so far (the test finds it with dlsym). */
long fail_malloc_calls(void);
long fail_malloc_calls(void) { return atomic_load(&calls); }
