/* The device object (device.h): opening and closing one device of one backend, the parts
 * the layers above attach to it, and the device-wide public calls. */
#include "device_ops.h"
#include "runtime.h"
#include "../base/log.h"
#include "../base/status.h"

#include <stdio.h>
#include <stdlib.h>

hwrt_status hwi_device_open(const hwrt_backend_ops *ops, int ordinal, int id, hwi_device **out)
{
    hwi_device *d = calloc(1, sizeof *d);
    if (!d)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "opening device %d: host out of memory",
                       ordinal);
    d->id = id;
    d->ordinal = ordinal;
    d->ops = ops;
    pthread_mutex_init(&d->mu, NULL);
    hwrt_status st = hwi_backend_device_props(ops, ordinal, &d->props);
    if (st == HWRT_SUCCESS)
        st = hwi_backend_device_open(ops, ordinal, &d->bdev);
    if (st != HWRT_SUCCESS) {
        pthread_mutex_destroy(&d->mu);
        free(d);
        return st;
    }
    if (hwi_log_level() >= HWI_LOG_INFO) {
        char mem[32];
        char ids[32] = "";
        if (id != ordinal) snprintf(ids, sizeof ids, " (process-wide id %d)", id);
        hwi_log(HWI_LOG_INFO, "device %d opened: %s (%s%s), %s of memory, %d compute "
                "unit(s), %d copy engine(s)%s", ordinal, d->props.name, hwi_backend_name(ops),
                d->props.simulated ? ", simulated" : "",
                hwi_fmt_bytes(mem, sizeof mem, d->props.total_memory),
                d->props.compute_units, d->props.copy_engines, ids);
    }
    *out = d;
    return HWRT_SUCCESS;
}

void hwi_device_free(hwi_device *d)
{
    hwi_dev_device_close(d);
    pthread_mutex_destroy(&d->mu);
    free(d);
}

void *hwi_device_attach(hwi_device *d, hwi_dev_part_kind kind, void *part,
                        const hwi_dev_part_ops *ops)
{
    pthread_mutex_lock(&d->mu);
    void *cur = atomic_load(&d->part[kind]);
    if (!cur) {
        d->part_ops[kind] = ops;
        atomic_store_explicit(&d->part[kind], part, memory_order_release);
        cur = part;
    }
    pthread_mutex_unlock(&d->mu);
    return cur;
}

hwrt_status hwi_device_close_parts(hwi_device *d)
{
    hwrt_status first = HWRT_SUCCESS;
    char msg[1024] = "";
    for (int k = 0; k < HWI_PART_COUNT; k++) {
        pthread_mutex_lock(&d->mu);
        void *part = atomic_exchange(&d->part[k], NULL);
        const hwi_dev_part_ops *po = d->part_ops[k];
        pthread_mutex_unlock(&d->mu);
        if (!part) continue;
        hwrt_status st = po->close(d, part);
        if (st != HWRT_SUCCESS && first == HWRT_SUCCESS) {
            first = st;
            snprintf(msg, sizeof msg, "%s", hwrt_last_error());
        }
    }
    if (first != HWRT_SUCCESS)
        return hwi_err(first, "%s", msg);
    return HWRT_SUCCESS;
}

hwrt_status hwi_device_synchronize(hwi_device *d, const char *api)
{
    for (int k = 0; k < HWI_PART_COUNT; k++) {
        void *part = hwi_device_part(d, (hwi_dev_part_kind)k);
        if (part && d->part_ops[k]->synchronize)
            return d->part_ops[k]->synchronize(d, part, api);
    }
    hwrt_status st = hwi_dev_device_synchronize(d);
    if (st != HWRT_SUCCESS)
        return hwi_err_prefix(st, "%s", api);
    return HWRT_SUCCESS;
}

/* ---- public API ---- */

hwrt_status hwrt_device_synchronize(void)
{
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_current(&d));
    return hwi_device_synchronize(d, "hwrt_device_synchronize");
}

hwrt_status hwrt_device_reset(int device_id)
{
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_public(device_id, &d));
    /* as documented: synchronize first, so work queued before the reset is settled
     * (skipped by the fault) instead of racing with it; its fault status is expected */
    hwrt_status st = hwi_device_synchronize(d, "hwrt_device_reset");
    if (st == HWRT_ERROR_NOT_PERMITTED)
        return st;
    return hwi_dev_device_reset(d);
}
