/* The simulated device's memory, modelled as accelerators manage theirs (CUDA's
 * cuMemAddressReserve/cuMemMap, Ascend's aclrtReserveMemAddress/aclrtMapMem):
 *
 * - a virtual address space SIM_VA_FACTOR times the capacity (host address space
 *   reserved with MAP_NORESERVE; host pages are committed only when touched and handed
 *   back with MADV_DONTNEED), carved into ranges first fit;
 * - physical memory as 2 MiB pages, capacity / 2 MiB of them. Capacity (less the context
 *   overhead and what other processes of the registry hold) limits only the pages in
 *   use: a segment allocation fails only when physical pages run out, never because free
 *   memory is scattered over the address space, and a reservation costs no capacity.
 *
 * Every virtual page is in one state: free (not reserved), reserved (va_reserve, not
 * backed), mapped (reserved and backed by a physical page: va_map) or segment (reserved
 * and backed in one segment_alloc). The first page of each reservation and segment is
 * marked as its head, so that frees and releases are checked to name exactly one whole
 * allocation, maps to name reserved unmapped pages and unmaps mapped ones, as drivers
 * check them. Guarded by the device's mem_mu. */
#include "sim.h"
#include "sim_registry.h"
#include "../../base/status.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define SIM_VA_FACTOR 8                /* virtual address space per byte of capacity */

enum { PG_FREE, PG_RESERVED, PG_MAPPED, PG_SEGMENT };
#define PG_HEAD 0x80                   /* first page of a reservation or segment */
#define PG_TOUCHED 0x40                /* backed page whose host memory is populated */
#define PG_STATE(b) ((b) & 0x3f)

static size_t round_up(size_t n) { return (n + SIM_PAGE - 1) / SIM_PAGE * SIM_PAGE; }

hwrt_status sim_mem_open(sim_dev *d, size_t capacity)
{
    d->capacity = capacity / SIM_PAGE * SIM_PAGE;
    /* as much address space as the host gives, up to SIM_VA_FACTOR x capacity (with
     * vm.overcommit_memory=2 MAP_NORESERVE is not honoured: fall back towards 1x) */
    for (size_t f = SIM_VA_FACTOR; f >= 1; f /= 2) {
        if (d->capacity > SIZE_MAX / f) continue;
        d->va_size = d->capacity * f;
        d->va = mmap(NULL, d->va_size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (d->va != MAP_FAILED) break;
        d->va = NULL;
    }
    if (!d->va)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY,
                       "opening sim device %d: cannot reserve %zu bytes of address space for its "
                       "memory; lower HWRT_SIM_MEMORY", d->ordinal, d->capacity);
    /* device memory comes in large pages on accelerators (2 MiB on GPUs): ask for
     * transparent huge pages so the simulated device's TLB behaves alike (advisory) */
    madvise(d->va, d->va_size, MADV_HUGEPAGE);
    d->npages = d->va_size / SIM_PAGE;
    d->pages = calloc(d->npages, 1);
    if (!d->pages || !hwi_range_init(&d->ranges, d->va_size)) {
        free(d->pages);
        munmap(d->va, d->va_size);
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "opening sim device %d: host out of "
                       "memory for its page table", d->ordinal);
    }
    pthread_mutex_init(&d->mem_mu, NULL);
    d->committed = 0;
    return HWRT_SUCCESS;
}

void sim_mem_close(sim_dev *d)
{
    munmap(d->va, d->va_size);
    pthread_mutex_destroy(&d->mem_mu);
    hwi_range_destroy(&d->ranges);
    free(d->pages);
    d->pages = NULL;
}

hwrt_status sim_mem_info(hwrt_bdev *d, size_t *free_b, size_t *total, size_t *overhead)
{
    size_t others = sim_registry_others_used(d);   /* the device is shared */
    pthread_mutex_lock(&d->mem_mu);
    size_t used = d->committed + d->overhead + others;
    pthread_mutex_unlock(&d->mem_mu);
    *total = d->capacity;
    *free_b = used < d->capacity ? d->capacity - used : 0;
    *overhead = d->overhead;
    return HWRT_SUCCESS;
}

static hwrt_status oom(sim_dev *d, size_t bytes, size_t others, const char *what)
{
    char a[32], b[32], c[32], e[32];
    return hwi_err(HWRT_ERROR_OUT_OF_MEMORY,
                   "sim device %d: %s of %s failed: %s of %s in use by this process (context "
                   "overhead included) and %s by other processes", d->ordinal, what,
                   hwi_fmt_bytes(a, sizeof a, bytes),
                   hwi_fmt_bytes(b, sizeof b, d->committed + d->overhead),
                   hwi_fmt_bytes(c, sizeof c, d->capacity), hwi_fmt_bytes(e, sizeof e, others));
}

/* The sentence of a failed hwi_range_take (HWI_RANGE_FULL or HWI_RANGE_NO_HOST_MEMORY). */
static hwrt_status no_address_space(sim_dev *d, size_t len, const char *what, int got)
{
    char a[32], b[32];
    if (got == HWI_RANGE_NO_HOST_MEMORY)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "sim device %d: %s of %s failed: host out "
                       "of memory for its address-range list", d->ordinal, what,
                       hwi_fmt_bytes(a, sizeof a, len));
    return hwi_err(HWRT_ERROR_OUT_OF_MEMORY, "sim device %d: %s of %s failed: no free range "
                   "of that size left in its %s of virtual address space (reservations and "
                   "segments hold it); release reservations or use fewer streams", d->ordinal,
                   what, hwi_fmt_bytes(a, sizeof a, len), hwi_fmt_bytes(b, sizeof b, d->va_size));
}

/* Do len more bytes of physical pages fit, counting other processes? Holds mem_mu. */
static int pages_left(sim_dev *d, size_t len, size_t others)
{
    return len <= d->capacity && d->committed + d->overhead + others + len <= d->capacity;
}

static void set_pages(sim_dev *d, size_t p0, size_t n, int state, int head)
{
    memset(d->pages + p0, state, n);
    if (head && n) d->pages[p0] |= PG_HEAD;
}

/* The first page of [p, p+len) in the address space, or an INVALID_ARGUMENT. */
static hwrt_status page_of(sim_dev *d, const void *p, size_t len, const char *what, size_t *p0)
{
    const char *c = p;
    if (!d->va || c < d->va || (size_t)(c - d->va) % SIM_PAGE || len > d->va_size ||
        (size_t)(c - d->va) > d->va_size - len)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "sim device %d: %s of %p (+%zu bytes) is "
                       "not a range of this device", d->ordinal, what, p, len);
    *p0 = (size_t)(c - d->va) / SIM_PAGE;
    return HWRT_SUCCESS;
}

/* Is [p0, p0+n) exactly one whole reservation (want RESERVED: pages reserved or mapped)
 * or segment (want SEGMENT)? */
static int whole_allocation(const sim_dev *d, size_t p0, size_t n, int want)
{
    if (!n || !(d->pages[p0] & PG_HEAD)) return 0;
    for (size_t i = p0; i < p0 + n; i++) {
        int s = PG_STATE(d->pages[i]);
        if ((i > p0 && (d->pages[i] & PG_HEAD)) ||
            (want == PG_SEGMENT ? s != PG_SEGMENT : s != PG_RESERVED && s != PG_MAPPED))
            return 0;
    }
    size_t e = p0 + n;        /* the next page must not continue this allocation */
    return e == d->npages || PG_STATE(d->pages[e]) == PG_FREE || (d->pages[e] & PG_HEAD);
}

static size_t count_state(const sim_dev *d, size_t p0, size_t n, int state)
{
    size_t k = 0;
    for (size_t i = p0; i < p0 + n; i++) k += PG_STATE(d->pages[i]) == state;
    return k;
}

/* ---- segments: address range and physical pages in one call (cuMemAlloc) ---- */

hwrt_status sim_segment_alloc(hwrt_bdev *d, size_t bytes, void **dptr)
{
    size_t len = round_up(bytes ? bytes : 1);
    HWI_TRY(sim_fault_alloc(d, bytes, "segment allocation"));
    size_t off, others = sim_registry_others_used(d);
    pthread_mutex_lock(&d->mem_mu);
    hwrt_status st = HWRT_SUCCESS;
    int got;
    if (!pages_left(d, len, others)) st = oom(d, bytes, others, "segment allocation");
    else if ((got = hwi_range_take(&d->ranges, len, &off)) != HWI_RANGE_OK)
        st = no_address_space(d, len, "segment allocation", got);
    if (st == HWRT_SUCCESS) {
        set_pages(d, off / SIM_PAGE, len / SIM_PAGE, PG_SEGMENT, 1);
        d->committed += len;
        sim_registry_publish(d);
        *dptr = d->va + off;
    }
    pthread_mutex_unlock(&d->mem_mu);
    return st;
}

hwrt_status sim_segment_free(hwrt_bdev *d, void *dptr, size_t bytes)
{
    size_t len = round_up(bytes ? bytes : 1), p0;
    HWI_TRY(page_of(d, dptr, len, "segment free", &p0));
    pthread_mutex_lock(&d->mem_mu);
    if (!whole_allocation(d, p0, len / SIM_PAGE, PG_SEGMENT)) {
        pthread_mutex_unlock(&d->mem_mu);
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "sim device %d: segment free of %p (+%zu "
                       "bytes) does not name one whole segment of this device", d->ordinal,
                       dptr, bytes);
    }
    madvise(dptr, len, MADV_DONTNEED);     /* the pages go back (their contents are lost) */
    set_pages(d, p0, len / SIM_PAGE, PG_FREE, 0);
    hwi_range_give(&d->ranges, p0 * SIM_PAGE, len);
    d->committed -= len;
    sim_registry_publish(d);
    pthread_mutex_unlock(&d->mem_mu);
    return HWRT_SUCCESS;
}

/* ---- virtual memory: reserve ranges (no capacity), back pages on demand ---- */

size_t sim_va_granularity(hwrt_bdev *d) { (void)d; return SIM_PAGE; }

hwrt_status sim_va_reserve(hwrt_bdev *d, size_t bytes, void **base)
{
    size_t len = round_up(bytes ? bytes : 1), off;
    pthread_mutex_lock(&d->mem_mu);
    int got = hwi_range_take(&d->ranges, len, &off);
    if (got == HWI_RANGE_OK) set_pages(d, off / SIM_PAGE, len / SIM_PAGE, PG_RESERVED, 1);
    pthread_mutex_unlock(&d->mem_mu);
    if (got != HWI_RANGE_OK) return no_address_space(d, len, "address reservation", got);
    *base = d->va + off;
    return HWRT_SUCCESS;
}

hwrt_status sim_va_release(hwrt_bdev *d, void *base, size_t bytes)
{
    size_t len = round_up(bytes ? bytes : 1), p0, n = len / SIM_PAGE;
    HWI_TRY(page_of(d, base, len, "address release", &p0));
    pthread_mutex_lock(&d->mem_mu);
    const char *why = !whole_allocation(d, p0, n, PG_RESERVED) ? "does not name one whole reservation"
                      : count_state(d, p0, n, PG_MAPPED) ? "still has mapped pages; unmap them first"
                      : NULL;
    if (!why) {
        set_pages(d, p0, n, PG_FREE, 0);
        hwi_range_give(&d->ranges, p0 * SIM_PAGE, len);
    }
    pthread_mutex_unlock(&d->mem_mu);
    if (why)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "sim device %d: address release of %p (+%zu "
                       "bytes) %s", d->ordinal, base, bytes, why);
    return HWRT_SUCCESS;
}

hwrt_status sim_va_map(hwrt_bdev *d, void *addr, size_t bytes)
{
    size_t len = round_up(bytes ? bytes : 1), p0, n = len / SIM_PAGE;
    HWI_TRY(page_of(d, addr, len, "map", &p0));
    HWI_TRY(sim_fault_alloc(d, bytes, "mapping memory"));
    size_t others = sim_registry_others_used(d);
    pthread_mutex_lock(&d->mem_mu);
    hwrt_status st = HWRT_SUCCESS;
    if (count_state(d, p0, n, PG_RESERVED) != n)
        st = hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "sim device %d: map of %p (+%zu bytes): "
                     "every page must be reserved and not mapped yet", d->ordinal, addr, bytes);
    else if (!pages_left(d, len, others))
        st = oom(d, len, others, "mapping memory");
    if (st == HWRT_SUCCESS) {
        for (size_t i = p0; i < p0 + n; i++)
            d->pages[i] = (unsigned char)((d->pages[i] & PG_HEAD) | PG_MAPPED);
        d->committed += len;
        sim_registry_publish(d);
    }
    pthread_mutex_unlock(&d->mem_mu);
    return st;
}

hwrt_status sim_va_unmap(hwrt_bdev *d, void *addr, size_t bytes)
{
    size_t len = round_up(bytes ? bytes : 1), p0, n = len / SIM_PAGE;
    HWI_TRY(page_of(d, addr, len, "unmap", &p0));
    pthread_mutex_lock(&d->mem_mu);
    int ok = count_state(d, p0, n, PG_MAPPED) == n;
    if (ok) {
        madvise(addr, len, MADV_DONTNEED);
        for (size_t i = p0; i < p0 + n; i++)
            d->pages[i] = (unsigned char)((d->pages[i] & PG_HEAD) | PG_RESERVED);
        d->committed -= len;
        sim_registry_publish(d);
    }
    pthread_mutex_unlock(&d->mem_mu);
    if (!ok)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "sim device %d: unmap of %p (+%zu bytes): "
                       "every page must be mapped", d->ordinal, addr, bytes);
    return HWRT_SUCCESS;
}

/* First touch. The host pages behind a simulated device page are committed when first
 * written; a kernel that writes fresh memory would pay those page faults inside its own
 * execution, and the profiler would show them as device time (a fill of 64 MiB took
 * 140 ms, mostly faults). A real device's memory is backed when it is allocated. The
 * engines call this before timing an op: mapped or segment pages of [p, p+len) not yet
 * touched are populated (MADV_POPULATE_WRITE) and marked, so each page pays once, and
 * only when it is first used, as before. Pointers outside the device are ignored. */
int sim_mem_prefault(sim_dev *d, const void *p, size_t len)
{
    uintptr_t base = (uintptr_t)d->va, a = (uintptr_t)p;
    if (!p || !len || a < base || a - base >= d->va_size) return 0;
    size_t off = a - base, p0 = off / SIM_PAGE;
    size_t p1 = len > d->va_size - off ? d->npages : (off + len - 1) / SIM_PAGE + 1;
    int did = 0;
    pthread_mutex_lock(&d->mem_mu);
    for (size_t i = p0; i < p1;) {
        int s = PG_STATE(d->pages[i]);
        if ((d->pages[i] & PG_TOUCHED) || (s != PG_MAPPED && s != PG_SEGMENT)) {
            i++;
            continue;
        }
        size_t e = i;
        while (e < p1 && !(d->pages[e] & PG_TOUCHED) &&
               (PG_STATE(d->pages[e]) == PG_MAPPED || PG_STATE(d->pages[e]) == PG_SEGMENT))
            e++;
#ifdef MADV_POPULATE_WRITE
        madvise(d->va + i * SIM_PAGE, (e - i) * SIM_PAGE, MADV_POPULATE_WRITE);
#endif
        for (size_t k = i; k < e; k++) d->pages[k] |= PG_TOUCHED;
        did = 1;
        i = e;
    }
    pthread_mutex_unlock(&d->mem_mu);
    return did;
}
