/* CUDA devices: probe, properties, opening (the primary context), device memory
 * (cuMemAlloc segments, and VMM ranges for expandable segments: cuMemAddressReserve +
 * cuMemCreate/cuMemMap/cuMemSetAccess per granule) and pinned host memory. */
#include "cuda_internal.h"
#include "../../base/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

hwrt_status cu_probe(int *count, char *reason, size_t rlen)
{
    return cu_load(count, reason, rlen);
}

static hwrt_status loaded_device(int ordinal, hcu_device *dev)
{
    int n = 0;
    char reason[256];
    if (cu_load(&n, reason, sizeof reason) != HWRT_SUCCESS)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "the cuda backend is unavailable: %s", reason);
    if (ordinal < 0 || ordinal >= n)
        return hwi_err(HWRT_ERROR_INVALID_DEVICE, "cuda device %d does not exist (%d device(s))",
                       ordinal, n);
    hcu_result r = hcu.DeviceGet(dev, ordinal);
    if (r != HCU_SUCCESS)
        return cu_err(NULL, r, "cuDeviceGet(%d)", ordinal);
    return HWRT_SUCCESS;
}

static int attr(hcu_device dev, unsigned a)
{
    int v = 0;
    if (hcu.DeviceGetAttribute(&v, a, dev) != HCU_SUCCESS) v = 0;
    return v;
}

/* The PCIe link from sysfs (the driver API has no attribute for it): generation speed in
 * GT/s and lane count of the device's current link; 0 when not readable. */
static double pcie_link(hcu_device dev, char *desc, size_t dlen)
{
    char path[160], buf[64];
    double gts = 0;
    int width = 0;
    snprintf(path, sizeof path, "/sys/bus/pci/devices/%04x:%02x:%02x.0/current_link_speed",
             attr(dev, HCU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID), attr(dev, HCU_DEVICE_ATTRIBUTE_PCI_BUS_ID),
             attr(dev, HCU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID));
    FILE *f = fopen(path, "r");
    if (f) {
        if (fgets(buf, sizeof buf, f)) gts = strtod(buf, NULL);
        fclose(f);
    }
    char *tail = strrchr(path, '/');
    snprintf(tail, sizeof path - (size_t)(tail - path), "/current_link_width");
    f = fopen(path, "r");
    if (f) {
        if (fgets(buf, sizeof buf, f)) width = atoi(buf);
        fclose(f);
    }
    desc[0] = 0;
    if (gts <= 0 || width <= 0) return 0;
    int gen = gts >= 63 ? 6 : gts >= 31 ? 5 : gts >= 15 ? 4 : gts >= 7.9 ? 3 : gts >= 4.9 ? 2 : 1;
    snprintf(desc, dlen, ", PCIe %d.0 x%d", gen, width);
    /* GB/s per direction: 8b/10b coding up to gen 2, 128b/130b from gen 3 */
    return gts * width * (gen >= 3 ? 128.0 / 130.0 : 0.8) / 8.0;
}

hwrt_status cu_device_props(int ordinal, hwrt_device_props *p)
{
    hcu_device dev;
    HWI_TRY(loaded_device(ordinal, &dev));
    memset(p, 0, sizeof *p);
    char name[96] = "", link[32];
    size_t mem = 0;
    hcu.DeviceGetName(name, sizeof name - 1, dev);
    hcu_result r = hcu.DeviceTotalMem(&mem, dev);
    if (r != HCU_SUCCESS)
        return cu_err(NULL, r, "cuDeviceTotalMem(cuda device %d)", ordinal);
    p->link_gbps = pcie_link(dev, link, sizeof link);
    p->device_id = ordinal;
    snprintf(p->name, sizeof p->name, "%s (sm_%d%d%s)", name,
             attr(dev, HCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
             attr(dev, HCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR), link);
    snprintf(p->backend, sizeof p->backend, "cuda");
    p->total_memory = mem;
    p->compute_units = attr(dev, HCU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    p->copy_engines = attr(dev, HCU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT);
    p->simulated = 0;
    return HWRT_SUCCESS;
}

static hcu_mem_alloc_prop device_prop(const cu_dev *d)
{
    hcu_mem_alloc_prop prop;
    memset(&prop, 0, sizeof prop);
    prop.type = HCU_MEM_ALLOCATION_TYPE_PINNED;
    prop.requested_handle_types = HCU_MEM_HANDLE_TYPE_NONE;
    prop.location.type = HCU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = d->dev;
    return prop;
}

static void close_dev(cu_dev *d)
{
    if (d->ctx) {
        hcu.CtxSetCurrent(d->ctx);
        cu_module_release(d);
        if (d->ref) hcu.EventDestroy(d->ref);
        if (d->aux) hcu.StreamDestroy(d->aux);
        hcu.DevicePrimaryCtxRelease(d->dev);
    }
    hwi_fault_destroy(&d->fault);
    pthread_mutex_destroy(&d->ts_mu);
    pthread_mutex_destroy(&d->mod_mu);
    free(d);
}

/* Anchor event timestamps: record the reference event on the idle aux stream between two
 * host clock reads; the device reached it in between (the midpoint is used). */
hwrt_status cu_anchor(cu_dev *d)
{
    uint64_t t0 = cu_now_ns();
    hcu_result r = hcu.EventRecord(d->ref, d->aux);
    if (r == HCU_SUCCESS) r = hcu.EventSynchronize(d->ref);
    if (r != HCU_SUCCESS)
        return cu_err(d, r, "cuda device %d: recording the timestamp reference", d->ordinal);
    d->ref_ns = t0 + (cu_now_ns() - t0) / 2;
    return HWRT_SUCCESS;
}

hwrt_status cu_device_open(int ordinal, hwrt_bdev **out)
{
    hcu_device dev;
    HWI_TRY(loaded_device(ordinal, &dev));
    cu_dev *d = calloc(1, sizeof *d);
    if (!d)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "opening cuda device %d: host out of memory",
                       ordinal);
    d->ordinal = ordinal;
    d->dev = dev;
    d->mod_status = -1;
    hwi_fault_init(&d->fault);
    pthread_mutex_init(&d->ts_mu, NULL);
    pthread_mutex_init(&d->mod_mu, NULL);
    hcu_result r = hcu.DevicePrimaryCtxRetain(&d->ctx, dev);
    if (r != HCU_SUCCESS) {
        d->ctx = NULL;
        close_dev(d);
        return cu_err(NULL, r, "cuda device %d: cuDevicePrimaryCtxRetain (is the device in "
                      "exclusive-process mode and used by another process?)", ordinal);
    }
    hwrt_status st = cu_enter(d);
    if (st == HWRT_SUCCESS && (r = hcu.CtxGetStreamPriorityRange(&d->prio_least,
                                                                  &d->prio_greatest)))
        st = cu_err(d, r, "cuda device %d: cuCtxGetStreamPriorityRange", ordinal);
    if (st == HWRT_SUCCESS && (r = hcu.StreamCreateWithPriority(&d->aux, HCU_STREAM_NON_BLOCKING,
                                                                 d->prio_least)))
        st = cu_err(d, r, "cuda device %d: creating the internal stream", ordinal);
    if (st == HWRT_SUCCESS && (r = hcu.EventCreate(&d->ref, HCU_EVENT_DEFAULT)))
        st = cu_err(d, r, "cuda device %d: creating the timestamp reference", ordinal);
    if (st == HWRT_SUCCESS) st = cu_anchor(d);
    if (st != HWRT_SUCCESS) {
        close_dev(d);
        return st;
    }
    if (attr(dev, HCU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)) {
        hcu_mem_alloc_prop prop = device_prop(d);
        size_t g = 0;
        if (hcu.MemGetAllocationGranularity(&g, &prop, HCU_MEM_ALLOC_GRANULARITY_MINIMUM) ==
            HCU_SUCCESS)
            d->va_gran = g;
    }
    size_t free_b = 0, total = 0;
    if (hcu.MemGetInfo(&free_b, &total) == HCU_SUCCESS && total >= free_b)
        d->overhead = total - free_b;
    d->pci = (hwi_pci_loc){(unsigned)attr(dev, HCU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID),
                           (unsigned)attr(dev, HCU_DEVICE_ATTRIBUTE_PCI_BUS_ID),
                           (unsigned)attr(dev, HCU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)};
    *out = d;
    return HWRT_SUCCESS;
}

/* What this process's pool holds, for hwrt-smi in any process (cuda_usage.c): NVML sees
 * only the device-wide figure. */
void cu_report_usage(hwrt_bdev *d, size_t reserved, size_t allocated)
{
    hwi_cuda_usage_publish(d->pci, reserved, allocated);
}

void cu_device_close(hwrt_bdev *d)
{
    close_dev(d);
}

hwrt_status cu_mem_info(hwrt_bdev *d, size_t *free_b, size_t *total, size_t *overhead)
{
    HWI_TRY(cu_enter(d));
    hcu_result r = hcu.MemGetInfo(free_b, total);
    if (r != HCU_SUCCESS)
        return cu_err(d, r, "cuda device %d: cuMemGetInfo", d->ordinal);
    *overhead = d->overhead;
    return HWRT_SUCCESS;
}

hwrt_status cu_segment_alloc(hwrt_bdev *d, size_t bytes, void **dptr)
{
    HWI_TRY(cu_enter(d));
    hcu_dptr p = 0;
    hcu_result r = hcu.MemAlloc(&p, bytes);
    if (r != HCU_SUCCESS)
        return cu_err(d, r, "cuda device %d: cuMemAlloc(%zu bytes)", d->ordinal, bytes);
    *dptr = (void *)(uintptr_t)p;
    return HWRT_SUCCESS;
}

hwrt_status cu_segment_free(hwrt_bdev *d, void *dptr, size_t bytes)
{
    HWI_TRY(cu_enter(d));
    hcu_result r = hcu.MemFree((hcu_dptr)(uintptr_t)dptr);
    if (r != HCU_SUCCESS)
        return cu_err(d, r, "cuda device %d: cuMemFree(%p, %zu bytes)", d->ordinal, dptr, bytes);
    return HWRT_SUCCESS;
}

/* ---- virtual memory ---- */

size_t cu_va_granularity(hwrt_bdev *d)
{
    return d->va_gran;
}

hwrt_status cu_va_reserve(hwrt_bdev *d, size_t bytes, void **base)
{
    if (!d->va_gran)
        return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "cuda device %d has no virtual memory management "
                       "(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED is 0)", d->ordinal);
    HWI_TRY(cu_enter(d));
    hcu_dptr p = 0;
    hcu_result r = hcu.MemAddressReserve(&p, bytes, d->va_gran, 0, 0);
    if (r != HCU_SUCCESS)
        return cu_err(d, r, "cuda device %d: cuMemAddressReserve(%zu bytes)", d->ordinal, bytes);
    *base = (void *)(uintptr_t)p;
    return HWRT_SUCCESS;
}

hwrt_status cu_va_release(hwrt_bdev *d, void *base, size_t bytes)
{
    HWI_TRY(cu_enter(d));
    hcu_result r = hcu.MemAddressFree((hcu_dptr)(uintptr_t)base, bytes);
    if (r != HCU_SUCCESS)
        return cu_err(d, r, "cuda device %d: cuMemAddressFree(%p, %zu bytes)", d->ordinal, base,
                      bytes);
    return HWRT_SUCCESS;
}

/* Each granule is its own allocation (cuMemCreate), mapped and then released: the mapping
 * keeps the memory, cuMemUnmap frees it. cuMemUnmap only takes whole mappings, and the
 * pool unmaps any run of granules, so granules are the unit both ways. */
static void unmap_granules(cu_dev *d, hcu_dptr a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        hcu.MemUnmap(a + i * d->va_gran, d->va_gran);
}

hwrt_status cu_va_map(hwrt_bdev *d, void *addr, size_t bytes)
{
    HWI_TRY(cu_enter(d));
    if (!d->va_gran || bytes % d->va_gran || (uintptr_t)addr % d->va_gran)
        return hwi_err(HWRT_ERROR_INTERNAL, "cuda device %d: va_map(%p, %zu bytes) is not a "
                       "multiple of the granularity %zu; this is a bug in hwrt", d->ordinal, addr,
                       bytes, d->va_gran);
    const hcu_dptr base = (hcu_dptr)(uintptr_t)addr;
    const size_t n = bytes / d->va_gran;
    hcu_mem_alloc_prop prop = device_prop(d);
    hcu_mem_access_desc acc;
    memset(&acc, 0, sizeof acc);
    acc.location = prop.location;
    acc.flags = HCU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    for (size_t i = 0; i < n; i++) {
        hcu_dptr a = base + i * d->va_gran;
        hcu_mem_handle h = 0;
        const char *call = "cuMemCreate";
        hcu_result r = hcu.MemCreate(&h, d->va_gran, &prop, 0);
        if (r == HCU_SUCCESS) {
            call = "cuMemMap";
            r = hcu.MemMap(a, d->va_gran, 0, h, 0);
            hcu.MemRelease(h);          /* the mapping holds the memory from here on */
            if (r == HCU_SUCCESS) {
                call = "cuMemSetAccess";
                r = hcu.MemSetAccess(a, d->va_gran, &acc, 1);
                if (r != HCU_SUCCESS) hcu.MemUnmap(a, d->va_gran);
            }
        }
        if (r != HCU_SUCCESS) {
            unmap_granules(d, base, i);
            return cu_err(d, r, "cuda device %d: %s for %zu bytes at %p (mapping %zu bytes)",
                          d->ordinal, call, d->va_gran, (void *)(uintptr_t)a, bytes);
        }
    }
    return HWRT_SUCCESS;
}

hwrt_status cu_va_unmap(hwrt_bdev *d, void *addr, size_t bytes)
{
    HWI_TRY(cu_enter(d));
    const hcu_dptr base = (hcu_dptr)(uintptr_t)addr;
    for (size_t off = 0; off < bytes; off += d->va_gran) {
        hcu_result r = hcu.MemUnmap(base + off, d->va_gran);
        if (r != HCU_SUCCESS)
            return cu_err(d, r, "cuda device %d: cuMemUnmap(%p, %zu bytes)", d->ordinal,
                          (void *)(uintptr_t)(base + off), d->va_gran);
    }
    return HWRT_SUCCESS;
}

/* ---- pinned host memory ---- */

static pthread_mutex_t host_mu = PTHREAD_MUTEX_INITIALIZER;
static hcu_context host_ctx;

hwrt_status cu_host_ctx(void)
{
    pthread_mutex_lock(&host_mu);
    hcu_result r = HCU_SUCCESS;
    if (!host_ctx) {
        hcu_device dev;
        hwrt_status st = loaded_device(0, &dev);
        if (st != HWRT_SUCCESS) {
            pthread_mutex_unlock(&host_mu);
            return st;
        }
        /* retained for the process's lifetime: pinned memory outlives device handles */
        r = hcu.DevicePrimaryCtxRetain(&host_ctx, dev);
        if (r != HCU_SUCCESS) host_ctx = NULL;
    }
    hcu_context c = host_ctx;
    pthread_mutex_unlock(&host_mu);
    if (r == HCU_SUCCESS) r = hcu.CtxSetCurrent(c);
    if (r != HCU_SUCCESS)
        return cu_err(NULL, r, "cuda: making device 0's context current for pinned host memory");
    return HWRT_SUCCESS;
}

hwrt_status cu_host_alloc(size_t bytes, void **hptr)
{
    HWI_TRY(cu_host_ctx());
    /* portable: pinned for every context, so any device's copies see it as pinned */
    hcu_result r = hcu.MemHostAlloc(hptr, bytes, HCU_MEMHOSTALLOC_PORTABLE);
    if (r == HCU_ERROR_OUT_OF_MEMORY)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "cuMemHostAlloc(%zu bytes): out of "
                       "page-locked host memory; pin less or raise the memlock limit", bytes);
    if (r != HCU_SUCCESS)
        return cu_err(NULL, r, "cuMemHostAlloc(%zu bytes)", bytes);
    return HWRT_SUCCESS;
}

void cu_host_free(void *hptr, size_t bytes)
{
    if (cu_host_ctx() == HWRT_SUCCESS) hcu.MemFreeHost(hptr);
}
