/* Simulated devices: properties, opening (arena + engine threads), the device-memory
 * arena (address space reserved with MAP_NORESERVE, pages committed when touched and
 * returned with MADV_DONTNEED), and the driver-view memory figures. */
#include "sim.h"
#include "sim_registry.h"
#include "sim_sched.h"
#include "../../core/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define SIM_GRANULE ((size_t)2 << 20)     /* 2 MiB, like a GPU's large page */

static _Atomic int open_count;

int sim_open_devices(void) { return atomic_load(&open_count); }

hwrt_status sim_probe(int *count, char *reason, size_t rlen)
{
    const sim_config *c;
    if (sim_config_get(&c, reason, rlen) != HWRT_SUCCESS) {
        *count = 0;
        return HWRT_ERROR_UNAVAILABLE;
    }
    *count = c->devices;
    return HWRT_SUCCESS;
}

hwrt_status sim_device_props(int ordinal, hwrt_device_props *p)
{
    const sim_config *c;
    char reason[256];
    if (sim_config_get(&c, reason, sizeof reason) != HWRT_SUCCESS)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "sim backend: %s", reason);
    memset(p, 0, sizeof *p);
    p->device_id = ordinal;
    snprintf(p->name, sizeof p->name, "hwrt simulated NPU %d", ordinal);
    snprintf(p->backend, sizeof p->backend, "sim");
    p->total_memory = c->memory[ordinal];
    p->compute_units = c->compute_units;
    p->copy_engines = 2;
    p->simulated = 1;
    p->link_gbps = c->link_gbps;
    return HWRT_SUCCESS;
}

hwrt_status sim_device_open(int ordinal, hwrt_bdev **out)
{
    const sim_config *c;
    char reason[256];
    if (sim_config_get(&c, reason, sizeof reason) != HWRT_SUCCESS)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "sim backend: %s", reason);
    sim_dev *d = calloc(1, sizeof *d);
    if (!d)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "opening sim device %d: host out of memory",
                       ordinal);
    d->ordinal = ordinal;
    d->capacity = c->memory[ordinal] / SIM_GRANULE * SIM_GRANULE;
    d->overhead = c->overhead;
    d->arena = mmap(NULL, d->capacity, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (d->arena == MAP_FAILED) {
        free(d);
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY,
                       "opening sim device %d: cannot reserve %zu bytes of address space for its "
                       "memory; lower HWRT_SIM_MEMORY", ordinal, c->memory[ordinal]);
    }
    /* device memory comes in large pages on accelerators (2 MiB on GPUs): ask for
     * transparent huge pages so the simulated device's TLB behaves alike (advisory) */
    madvise(d->arena, d->capacity, MADV_HUGEPAGE);
    pthread_mutex_init(&d->mem_mu, NULL);
    int ok = hwi_range_init(&d->ranges, d->capacity);
    if (atomic_load(&open_count) == 0) {      /* device opens are serialized by the core */
        sim_sched_load();                     /* HWRT_SIM_DETERMINISTIC, HWRT_SIM_JITTER */
        sim_fault_load(reason, sizeof reason, 1);
    }
    d->open_ns = sim_now_ns();
    for (int i = 0; ok && i < SIM_ENG_COUNT; i++) {
        sim_engine_start(&d->engines[i], d, i);
        ok &= d->engines[i].started;
    }
    hwrt_status st = ok ? sim_registry_attach(d)
                        : hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY,
                                  "opening sim device %d: host out of memory for its address ranges "
                                  "or engine threads", ordinal);
    if (st != HWRT_SUCCESS) {
        for (int i = 0; i < SIM_ENG_COUNT; i++) sim_engine_stop(&d->engines[i]);
        munmap(d->arena, d->capacity);
        hwi_range_destroy(&d->ranges);
        free(d);
        return st;
    }
    atomic_fetch_add(&open_count, 1);
    *out = d;
    return HWRT_SUCCESS;
}

void sim_device_close(hwrt_bdev *d)
{
    for (int i = 0; i < SIM_ENG_COUNT; i++)
        sim_engine_stop(&d->engines[i]);
    sim_registry_detach(d);        /* after the engines: they publish into the slot */
    munmap(d->arena, d->capacity);
    pthread_mutex_destroy(&d->mem_mu);
    hwi_range_destroy(&d->ranges);
    free(d);
    if (atomic_fetch_sub(&open_count, 1) == 1)
        sim_fault_report();
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

/* ---- address-range allocator over the arena (first fit, granule aligned) ---- */

static size_t round_up(size_t n) { return (n + SIM_GRANULE - 1) / SIM_GRANULE * SIM_GRANULE; }

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

/* Does len more fit on the device, counting other processes? Caller holds mem_mu. */
static int fits(sim_dev *d, size_t len, size_t others)
{
    return len <= d->capacity && d->committed + d->overhead + others + len <= d->capacity;
}

hwrt_status sim_segment_alloc(hwrt_bdev *d, size_t bytes, void **dptr)
{
    size_t len = round_up(bytes ? bytes : 1);
    HWI_TRY(sim_fault_alloc(d, bytes, "segment allocation"));
    size_t off, others = sim_registry_others_used(d);
    pthread_mutex_lock(&d->mem_mu);
    if (!fits(d, len, others) || !hwi_range_take(&d->ranges, len, &off)) {
        hwrt_status st = oom(d, bytes, others, "segment allocation");
        pthread_mutex_unlock(&d->mem_mu);
        return st;
    }
    d->committed += len;
    sim_registry_publish(d);
    pthread_mutex_unlock(&d->mem_mu);
    *dptr = d->arena + off;
    return HWRT_SUCCESS;
}

static hwrt_status check_range(sim_dev *d, void *p, size_t len, const char *what)
{
    char *c = p;
    if (c < d->arena || c + len > d->arena + d->capacity || (size_t)(c - d->arena) % SIM_GRANULE)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "sim device %d: %s of %p (+%zu bytes) is not "
                       "a range of this device", d->ordinal, what, p, len);
    return HWRT_SUCCESS;
}

hwrt_status sim_segment_free(hwrt_bdev *d, void *dptr, size_t bytes)
{
    size_t len = round_up(bytes ? bytes : 1);
    HWI_TRY(check_range(d, dptr, len, "segment free"));
    madvise(dptr, len, MADV_DONTNEED);     /* decommit: the pages go back to the host */
    pthread_mutex_lock(&d->mem_mu);
    hwi_range_give(&d->ranges, (size_t)((char *)dptr - d->arena), len);
    d->committed -= len;
    sim_registry_publish(d);
    pthread_mutex_unlock(&d->mem_mu);
    return HWRT_SUCCESS;
}

/* ---- virtual memory: reserve address ranges, commit pieces on demand ---- */

size_t sim_va_granularity(hwrt_bdev *d) { (void)d; return SIM_GRANULE; }

hwrt_status sim_va_reserve(hwrt_bdev *d, size_t bytes, void **base)
{
    size_t len = round_up(bytes), off;
    pthread_mutex_lock(&d->mem_mu);
    int ok = hwi_range_take(&d->ranges, len, &off);
    pthread_mutex_unlock(&d->mem_mu);
    if (!ok)
        return hwi_err(HWRT_ERROR_OUT_OF_MEMORY, "sim device %d: no %zu bytes of address space "
                       "left to reserve", d->ordinal, len);
    *base = d->arena + off;
    return HWRT_SUCCESS;
}

hwrt_status sim_va_release(hwrt_bdev *d, void *base, size_t bytes)
{
    size_t len = round_up(bytes);
    HWI_TRY(check_range(d, base, len, "address release"));
    pthread_mutex_lock(&d->mem_mu);
    hwi_range_give(&d->ranges, (size_t)((char *)base - d->arena), len);
    pthread_mutex_unlock(&d->mem_mu);
    return HWRT_SUCCESS;
}

hwrt_status sim_va_map(hwrt_bdev *d, void *addr, size_t bytes)
{
    size_t len = round_up(bytes);
    HWI_TRY(check_range(d, addr, len, "map"));
    HWI_TRY(sim_fault_alloc(d, bytes, "mapping memory"));
    size_t others = sim_registry_others_used(d);
    pthread_mutex_lock(&d->mem_mu);
    if (!fits(d, len, others)) {
        hwrt_status st = oom(d, len, others, "mapping memory");
        pthread_mutex_unlock(&d->mem_mu);
        return st;
    }
    d->committed += len;
    sim_registry_publish(d);
    pthread_mutex_unlock(&d->mem_mu);
    return HWRT_SUCCESS;
}

hwrt_status sim_va_unmap(hwrt_bdev *d, void *addr, size_t bytes)
{
    size_t len = round_up(bytes);
    HWI_TRY(check_range(d, addr, len, "unmap"));
    madvise(addr, len, MADV_DONTNEED);
    pthread_mutex_lock(&d->mem_mu);
    d->committed -= len;
    sim_registry_publish(d);
    pthread_mutex_unlock(&d->mem_mu);
    return HWRT_SUCCESS;
}

hwrt_status sim_device_reset(hwrt_bdev *d)
{
    atomic_store(&d->fault, 0);
    d->fault_msg[0] = 0;
    return HWRT_SUCCESS;
}
