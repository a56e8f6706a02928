/* Simulated devices: properties, opening (memory, sim_mem.c, and engine threads),
 * reset. */
#include "sim.h"
#include "sim_registry.h"
#include "sim_sched.h"
#include "../../base/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    d->overhead = c->overhead;
    hwi_fault_init(&d->fault);
    hwrt_status mst = sim_mem_open(d, c->memory[ordinal]);
    if (mst != HWRT_SUCCESS) {
        hwi_fault_destroy(&d->fault);
        free(d);
        return mst;
    }
    int ok = 1;
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
                                  "opening sim device %d: host out of memory for its engine threads",
                                  ordinal);
    if (st != HWRT_SUCCESS) {
        for (int i = 0; i < SIM_ENG_COUNT; i++) sim_engine_stop(&d->engines[i]);
        sim_mem_close(d);
        hwi_fault_destroy(&d->fault);
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
    sim_mem_close(d);
    hwi_fault_destroy(&d->fault);
    free(d);
    if (atomic_fetch_sub(&open_count, 1) == 1)
        sim_fault_report();
}

hwrt_status sim_device_reset(hwrt_bdev *d)
{
    hwi_fault_clear(&d->fault);
    return HWRT_SUCCESS;
}
