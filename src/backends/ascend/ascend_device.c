/* Ascend devices: probe, properties, opening (the device's context, an internal stream,
 * the timestamp reference), device memory (aclrtMalloc segments, and VMM ranges for
 * expandable segments: aclrtReserveMemAddress + aclrtMallocPhysical/aclrtMapMem per
 * granule) and pinned host memory (aclrtMallocHost). */
#include "ascend_internal.h"
#include "../../base/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

hwrt_status asc_probe(int *count, char *reason, size_t rlen)
{
    return asc_load(count, reason, rlen);
}

static void soc_name(char *buf, size_t len)
{
    const char *soc = hacl.GetSocName();     /* needs a current context */
    snprintf(buf, len, "%s", soc && *soc ? soc : "Ascend (SoC not reported)");
}

hwrt_status asc_device_props(int ordinal, hwrt_device_props *p)
{
    hacl_context ctx;
    HWI_TRY(asc_context(ordinal, &ctx));
    memset(p, 0, sizeof *p);
    char soc[64];
    soc_name(soc, sizeof soc);
    size_t free_b = 0, total = 0;
    /* ACL_HBM_MEM: on SoCs without HBM (310P) ACL reports DDR instead */
    hacl_error r = hacl.GetMemInfo(HACL_HBM_MEM, &free_b, &total);
    if (r != HACL_SUCCESS)
        return asc_err(NULL, r, "aclrtGetMemInfo(ascend device %d)", ordinal);
    int32_t ma = 0, mi = 0, pa = 0;
    if (hacl.GetVersion && hacl.GetVersion(&ma, &mi, &pa) == HACL_SUCCESS)
        snprintf(p->name, sizeof p->name, "%s (AscendCL %d.%d.%d)", soc, ma, mi, pa);
    else
        snprintf(p->name, sizeof p->name, "%s", soc);
    int64_t cores = 0;
    if (!hacl.GetDeviceCapability ||
        hacl.GetDeviceCapability((uint32_t)ordinal, HACL_DEVICE_INFO_AI_CORE_NUM, &cores) !=
            HACL_SUCCESS)
        cores = 0;
    p->device_id = ordinal;
    snprintf(p->backend, sizeof p->backend, "ascend");
    p->total_memory = total;
    p->compute_units = (int)cores;
    p->copy_engines = 1;     /* ACL does not expose DMA engines: one in-order path assumed */
    p->simulated = 0;
    p->link_gbps = 0;        /* not reported by ACL */
    return HWRT_SUCCESS;
}

/* ---- virtual memory bookkeeping: one physical handle per mapped granule, since
 * aclrtUnmapMem takes whole mappings only and the pool unmaps any run of granules ---- */
typedef struct asc_va_range {
    struct asc_va_range *next;
    uintptr_t base;
    size_t bytes;
    hacl_mem_handle *h;        /* bytes / granularity entries, NULL: not mapped */
} asc_va_range;

static hacl_physical_mem_prop device_prop(const asc_dev *d)
{
    hacl_physical_mem_prop prop;
    memset(&prop, 0, sizeof prop);
    prop.handle_type = HACL_MEM_HANDLE_TYPE_NONE;
    prop.allocation_type = HACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.mem_attr = HACL_HBM_MEM_HUGE;   /* huge pages: aclrtReserveMemAddress flags 1 */
    prop.location.type = HACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = (uint32_t)d->ordinal;
    return prop;
}

#define VA_HUGE_PAGE 1u                  /* aclrtReserveMemAddress: matches ACL_HBM_MEM_HUGE */
#define VA_DEFAULT_GRANULE (2u << 20)    /* "currently only 2M" (CANN docs) */

/* VMM when every entry point is there and a reservation of one granule works (as
 * torch_npu probes it); 0 otherwise. Context current. */
static size_t vmm_granularity(asc_dev *d)
{
    if (!hacl.ReserveMemAddress || !hacl.ReleaseMemAddress || !hacl.MallocPhysical ||
        !hacl.FreePhysical || !hacl.MapMem || !hacl.UnmapMem)
        return 0;
    size_t g = 0;
    hacl_physical_mem_prop prop = device_prop(d);
    if (!hacl.MemGetAllocationGranularity ||
        hacl.MemGetAllocationGranularity(&prop, HACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED, &g) !=
            HACL_SUCCESS || g == 0 || (g & (g - 1)))
        g = VA_DEFAULT_GRANULE;
    void *p = NULL;
    if (hacl.ReserveMemAddress(&p, g, 0, NULL, VA_HUGE_PAGE) != HACL_SUCCESS || !p)
        return 0;
    hacl.ReleaseMemAddress(p);
    return g;
}

static void close_dev(asc_dev *d)
{
    if (d->ctx && asc_thread_enter(d) == HWRT_SUCCESS) {
        asc_report_stop(d);
        if (d->ref) hacl.DestroyEvent(d->ref);
        if (d->aux) {
            hacl.SynchronizeStream(d->aux);
            hacl.DestroyStream(d->aux);
        }
        while (d->va) {          /* ranges the core did not release (it always should) */
            asc_va_range *v = d->va;
            d->va = v->next;
            size_t n = v->bytes / d->va_gran;
            for (size_t i = 0; i < n; i++)
                if (v->h[i]) {
                    hacl.UnmapMem((void *)(v->base + i * d->va_gran));
                    hacl.FreePhysical(v->h[i]);
                }
            hacl.ReleaseMemAddress((void *)v->base);
            free(v->h);
            free(v);
        }
    }
    /* the context stays: it is the ordinal's for the process (ascend_api.c) */
    hwi_fault_destroy(&d->fault);
    pthread_mutex_destroy(&d->ts_mu);
    pthread_mutex_destroy(&d->report_mu);
    pthread_mutex_destroy(&d->va_mu);
    free(d);
}

hwrt_status asc_device_open(int ordinal, hwrt_bdev **out)
{
    hacl_context ctx;
    HWI_TRY(asc_context(ordinal, &ctx));
    asc_dev *d = calloc(1, sizeof *d);
    if (!d)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "opening ascend device %d: host out of "
                       "memory", ordinal);
    d->ordinal = ordinal;
    d->ctx = ctx;
    hwi_fault_init(&d->fault);
    pthread_mutex_init(&d->ts_mu, NULL);
    pthread_mutex_init(&d->report_mu, NULL);
    pthread_mutex_init(&d->va_mu, NULL);
    soc_name(d->soc, sizeof d->soc);
    /* ACL priorities: 0 is the highest; 0..7 where the range cannot be asked */
    int32_t least = 7, greatest = 0;
    if (!hacl.DeviceGetStreamPriorityRange ||
        hacl.DeviceGetStreamPriorityRange(&least, &greatest) != HACL_SUCCESS || least < greatest) {
        least = 7;
        greatest = 0;
    }
    d->prio_least = least;
    d->prio_greatest = greatest;
    hacl_error r;
    hwrt_status st = HWRT_SUCCESS;
    if ((r = hacl.CreateStreamWithConfig(&d->aux, (uint32_t)least, 0)) != HACL_SUCCESS)
        st = asc_err(d, r, "ascend device %d: creating the internal stream", ordinal);
    if (st == HWRT_SUCCESS && (r = hacl.CreateEvent(&d->ref)) != HACL_SUCCESS)
        st = asc_err(d, r, "ascend device %d: creating the timestamp reference", ordinal);
    if (st == HWRT_SUCCESS) st = asc_anchor(d);
    if (st != HWRT_SUCCESS) {
        close_dev(d);
        return st;
    }
    d->va_gran = vmm_granularity(d);
    size_t free_b = 0, total = 0;
    if (hacl.GetMemInfo(HACL_HBM_MEM, &free_b, &total) == HACL_SUCCESS && total >= free_b)
        d->overhead = total - free_b;
    *out = d;
    return HWRT_SUCCESS;
}

void asc_device_close(hwrt_bdev *d)
{
    close_dev(d);
}

hwrt_status asc_mem_info(hwrt_bdev *d, size_t *free_b, size_t *total, size_t *overhead)
{
    HWI_TRY(asc_enter(d));
    hacl_error r = hacl.GetMemInfo(HACL_HBM_MEM, free_b, total);
    if (r != HACL_SUCCESS)
        return asc_err(d, r, "ascend device %d: aclrtGetMemInfo(ACL_HBM_MEM)", d->ordinal);
    *overhead = d->overhead;
    return HWRT_SUCCESS;
}

/* aclrtMalloc gives ALIGN_UP(bytes, 32) + 32 bytes at a 64-byte-aligned start; the pool's
 * pieces are on its own (larger) alignment, inside the requested size. */
hwrt_status asc_segment_alloc(hwrt_bdev *d, size_t bytes, void **dptr)
{
    HWI_TRY(asc_enter(d));
    void *p = NULL;
    hacl_error r = hacl.Malloc(&p, bytes, HACL_MEM_MALLOC_HUGE_FIRST);
    if (r != HACL_SUCCESS)
        return asc_err(d, r, "ascend device %d: aclrtMalloc(%zu bytes)", d->ordinal, bytes);
    *dptr = p;
    return HWRT_SUCCESS;
}

/* aclrtFree does not synchronize: the core frees a segment only once no queued work uses
 * it (its pool's stream-ordered reuse rules). */
hwrt_status asc_segment_free(hwrt_bdev *d, void *dptr, size_t bytes)
{
    HWI_TRY(asc_thread_enter(d));    /* frees stay possible on a faulted device */
    hacl_error r = hacl.Free(dptr);
    if (r != HACL_SUCCESS)
        return asc_err(d, r, "ascend device %d: aclrtFree(%p, %zu bytes)", d->ordinal, dptr,
                       bytes);
    return HWRT_SUCCESS;
}

/* ---- virtual memory ---- */

size_t asc_va_granularity(hwrt_bdev *d)
{
    return d->va_gran;
}

static asc_va_range *va_find(asc_dev *d, uintptr_t a, size_t bytes)
{
    for (asc_va_range *v = d->va; v; v = v->next)
        if (a >= v->base && a - v->base <= v->bytes && bytes <= v->bytes - (a - v->base))
            return v;
    return NULL;
}

hwrt_status asc_va_reserve(hwrt_bdev *d, size_t bytes, void **base)
{
    if (!d->va_gran)
        return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "ascend device %d has no virtual memory "
                       "management (aclrtReserveMemAddress is missing or refused a reservation)",
                       d->ordinal);
    HWI_TRY(asc_enter(d));
    asc_va_range *v = calloc(1, sizeof *v);
    hacl_mem_handle *h = calloc(bytes / d->va_gran + 1, sizeof *h);
    if (!v || !h) {
        free(v);
        free(h);
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "ascend: host out of memory for a "
                       "reservation's records");
    }
    void *p = NULL;
    /* alignment 0 and no address hint: what 8.x accepts */
    hacl_error r = hacl.ReserveMemAddress(&p, bytes, 0, NULL, VA_HUGE_PAGE);
    if (r != HACL_SUCCESS) {
        free(v);
        free(h);
        return asc_err(d, r, "ascend device %d: aclrtReserveMemAddress(%zu bytes)", d->ordinal,
                       bytes);
    }
    v->base = (uintptr_t)p;
    v->bytes = bytes;
    v->h = h;
    pthread_mutex_lock(&d->va_mu);
    v->next = d->va;
    d->va = v;
    pthread_mutex_unlock(&d->va_mu);
    *base = p;
    return HWRT_SUCCESS;
}

hwrt_status asc_va_release(hwrt_bdev *d, void *base, size_t bytes)
{
    HWI_TRY(asc_thread_enter(d));
    pthread_mutex_lock(&d->va_mu);
    asc_va_range **pp = &d->va;
    while (*pp && (*pp)->base != (uintptr_t)base) pp = &(*pp)->next;
    asc_va_range *v = *pp;
    if (v) *pp = v->next;
    pthread_mutex_unlock(&d->va_mu);
    if (!v)
        return hwi_err(HWRT_ERROR_INTERNAL, "ascend device %d: va_release(%p) of no reservation; "
                       "this is a bug in hwrt", d->ordinal, base);
    hacl_error r = hacl.ReleaseMemAddress(base);
    free(v->h);
    free(v);
    if (r != HACL_SUCCESS)
        return asc_err(d, r, "ascend device %d: aclrtReleaseMemAddress(%p, %zu bytes)",
                       d->ordinal, base, bytes);
    return HWRT_SUCCESS;
}

static void unmap_granules(asc_dev *d, asc_va_range *v, uintptr_t a, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t gi = (a - v->base) / d->va_gran + i;
        if (!v->h[gi]) continue;
        hacl.UnmapMem((void *)(v->base + gi * d->va_gran));
        hacl.FreePhysical(v->h[gi]);
        v->h[gi] = NULL;
    }
}

hwrt_status asc_va_map(hwrt_bdev *d, void *addr, size_t bytes)
{
    HWI_TRY(asc_enter(d));
    const uintptr_t base = (uintptr_t)addr;
    pthread_mutex_lock(&d->va_mu);
    asc_va_range *v = d->va_gran && !(bytes % d->va_gran) && !(base % d->va_gran)
                          ? va_find(d, base, bytes) : NULL;
    if (!v) {
        pthread_mutex_unlock(&d->va_mu);
        return hwi_err(HWRT_ERROR_INTERNAL, "ascend device %d: va_map(%p, %zu bytes) is not "
                       "granules (%zu bytes) of a reservation; this is a bug in hwrt",
                       d->ordinal, addr, bytes, d->va_gran);
    }
    hacl_physical_mem_prop prop = device_prop(d);
    const size_t n = bytes / d->va_gran;
    hwrt_status st = HWRT_SUCCESS;
    for (size_t i = 0; i < n; i++) {
        uintptr_t a = base + i * d->va_gran;
        size_t gi = (a - v->base) / d->va_gran;
        hacl_mem_handle h = NULL;
        const char *call = "aclrtMallocPhysical";
        hacl_error r = hacl.MallocPhysical(&h, d->va_gran, &prop, 0);
        if (r == HACL_SUCCESS) {
            call = "aclrtMapMem";
            r = hacl.MapMem((void *)a, d->va_gran, 0, h, 0);
            if (r != HACL_SUCCESS) hacl.FreePhysical(h);
        }
        if (r != HACL_SUCCESS) {
            unmap_granules(d, v, base, i);
            st = asc_err(d, r, "ascend device %d: %s for %zu bytes at %p (mapping %zu bytes)",
                         d->ordinal, call, d->va_gran, (void *)a, bytes);
            break;
        }
        v->h[gi] = h;
    }
    pthread_mutex_unlock(&d->va_mu);
    return st;
}

hwrt_status asc_va_unmap(hwrt_bdev *d, void *addr, size_t bytes)
{
    HWI_TRY(asc_thread_enter(d));
    const uintptr_t base = (uintptr_t)addr;
    pthread_mutex_lock(&d->va_mu);
    asc_va_range *v = d->va_gran ? va_find(d, base, bytes) : NULL;
    hwrt_status st = HWRT_SUCCESS;
    for (size_t off = 0; v && off < bytes; off += d->va_gran) {
        size_t gi = (base + off - v->base) / d->va_gran;
        if (!v->h[gi]) continue;
        hacl_error r = hacl.UnmapMem((void *)(base + off));
        if (r != HACL_SUCCESS) {
            st = asc_err(d, r, "ascend device %d: aclrtUnmapMem(%p)", d->ordinal,
                         (void *)(base + off));
            break;
        }
        r = hacl.FreePhysical(v->h[gi]);
        v->h[gi] = NULL;
        if (r != HACL_SUCCESS) {
            st = asc_err(d, r, "ascend device %d: aclrtFreePhysical (granule at %p)", d->ordinal,
                         (void *)(base + off));
            break;
        }
    }
    pthread_mutex_unlock(&d->va_mu);
    if (!v)
        return hwi_err(HWRT_ERROR_INTERNAL, "ascend device %d: va_unmap(%p, %zu bytes) outside "
                       "every reservation; this is a bug in hwrt", d->ordinal, addr, bytes);
    return st;
}

/* ---- pinned host memory: under device 0's context (ACL needs a current one) ---- */

hwrt_status asc_host_alloc(size_t bytes, void **hptr)
{
    hacl_context ctx;
    HWI_TRY(asc_context(0, &ctx));
    hacl_error r = hacl.MallocHost(hptr, bytes);
    if (r == HACL_ERROR_RT_MEMORY_ALLOCATION || r == HACL_ERROR_BAD_ALLOC)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "aclrtMallocHost(%zu bytes): out of "
                       "page-locked host memory; pin less or raise the memlock limit", bytes);
    if (r != HACL_SUCCESS)
        return asc_err(NULL, r, "aclrtMallocHost(%zu bytes)", bytes);
    return HWRT_SUCCESS;
}

void asc_host_free(void *hptr, size_t bytes)
{
    hacl_context ctx;
    if (asc_context(0, &ctx) == HWRT_SUCCESS) hacl.FreeHost(hptr);
}
