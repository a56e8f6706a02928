/* hwrt_smi_query: the device-wide view a backend's driver offers (NVML, DCMI, or the
 * simulated NPU's shared registry), read without opening a device. */
#include "runtime.h"
#include "device_ops.h"
#include "../base/status.h"

#include <string.h>
#include <time.h>

hwrt_status hwrt_smi_query(const char *backend, int sample_ms, hwrt_smi_snapshot *out)
{
    if (!out)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_smi_query: out is NULL");
    if (sample_ms < 0 || sample_ms > 60000)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_smi_query: sample_ms %d is out of "
                       "range 0..60000", sample_ms);
    const char *name = backend && strcmp(backend, "auto") ? backend : NULL;
    if (!name) {
        name = hwrt_current_backend();
        if (!*name) name = "sim";
    }
    HWI_TRY(hwi_backend_check("hwrt_smi_query", name, 1));
    const hwrt_backend_ops *ops = hwi_backend_find(name);
    if (!ops)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "hwrt_smi_query: the %s backend is not compiled "
                       "into this hwrt build", name);
    hwrt_status st = hwi_backend_monitor(ops, out);
    if (st != HWRT_SUCCESS)
        return hwi_err_prefix(st, "hwrt_smi_query");
    if (sample_ms == 0)
        return HWRT_SUCCESS;
    /* busy share: compute-engine busy time gained over the window, per device, where the
     * processes report it (sim); a driver that samples utilisation itself (NVML) keeps
     * its own figure from the second reading */
    uint64_t before[HWRT_SMI_MAX_DEVICES] = {0};
    for (int i = 0; i < out->nprocesses; i++) {
        before[out->processes[i].device] += out->processes[i].busy_ns;
    }
    struct timespec ts = {sample_ms / 1000, (long)(sample_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    HWI_TRY(hwi_backend_monitor(ops, out));
    uint64_t after[HWRT_SMI_MAX_DEVICES] = {0};
    for (int i = 0; i < out->nprocesses; i++)
        after[out->processes[i].device] += out->processes[i].busy_ns;
    for (int d = 0; d < out->ndevices; d++) {
        if (!after[d]) continue;   /* no process reports busy time (NVML): the driver's figure */
        double pct = after[d] > before[d] ? (double)(after[d] - before[d]) / (sample_ms * 1e6) * 100 : 0;
        out->devices[d].busy_pct = pct > 100 ? 100 : pct;
    }
    return HWRT_SUCCESS;
}
