/* NVML loaded at run time (base/dynlib): the loader and the monitor slot (see cuda_nvml.h). */
#define _GNU_SOURCE 1
#include "cuda_nvml.h"
#include "cuda_usage.h"
#include "../usage_board.h"
#include "../../base/dynlib.h"
#include "../../base/status.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NVML_SONAME "libnvidia-ml.so.1"

static struct {
#define HN_FIELD(name, ret, params) hn_##name##_fn name;
    HN_NVML_FUNCS(HN_FIELD)
#undef HN_FIELD
} nv;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t init_mu = PTHREAD_MUTEX_INITIALIZER;
static int loaded, inited;
static char load_why[1024];

static void load(void)
{
    static const char *const names[] = {NVML_SONAME, NULL};
    const char *lib = NVML_SONAME;
    char why[512];
    void *h = hwi_dynlib_open("HWRT_NVML_LIBRARY", names, &lib, why, sizeof why);
    if (!h) {
        snprintf(load_why, sizeof load_why, "NVML could not be loaded (%s): install the NVIDIA "
                 "driver, which ships " NVML_SONAME ", or point HWRT_NVML_LIBRARY at it", why);
        return;
    }
    enum {
#define HN_INDEX(name, ret, params) HN_AT_##name,
        HN_NVML_FUNCS(HN_INDEX)
#undef HN_INDEX
        HN_NFUNCS
    };
    hwi_dynsym syms[HN_NFUNCS] = {
#define HN_SYM(name, ret, params) {#name, (void **)&nv.name, 0, NULL},
        HN_NVML_FUNCS(HN_SYM)
#undef HN_SYM
    };
    /* Entry points a driver may lack: older drivers have no _v3 process query, no v2
     * memory query, no CUDA driver version; everything else must be there. */
    static const int optional[] = {
        HN_AT_nvmlShutdown, HN_AT_nvmlSystemGetCudaDriverVersion, HN_AT_nvmlDeviceGetPciInfo_v3,
        HN_AT_nvmlDeviceGetMemoryInfo_v2, HN_AT_nvmlDeviceGetComputeRunningProcesses_v3,
        HN_AT_nvmlDeviceGetComputeRunningProcesses,
    };
    for (size_t i = 0; i < sizeof optional / sizeof optional[0]; i++)
        syms[optional[i]].flags = HWI_DYNSYM_OPTIONAL;
    const char *missing = hwi_dynlib_resolve(h, syms, HN_NFUNCS);
    if (missing) {
        snprintf(load_why, sizeof load_why, "%s has no %s: the NVIDIA driver is too old for "
                 "hwrt's monitor (R470 or later is needed)", lib, missing);
        memset(&nv, 0, sizeof nv);
        return;
    }
    if (!nv.nvmlDeviceGetComputeRunningProcesses_v3 && !nv.nvmlDeviceGetComputeRunningProcesses) {
        snprintf(load_why, sizeof load_why, "%s has no nvmlDeviceGetComputeRunningProcesses", lib);
        memset(&nv, 0, sizeof nv);
        return;
    }
    loaded = 1;    /* kept open for the process, like the driver library itself */
}

static const char *nv_str(hn_nvmlReturn_t r)
{
    const char *s = nv.nvmlErrorString(r);
    return s ? s : "unknown NVML error";
}

/* Load and nvmlInit_v2 once; a failed init is retried by the next call (the driver may
 * come up later). */
static hwrt_status nvml_ready(void)
{
    pthread_once(&load_once, load);
    if (!loaded) return hwi_err(HWRT_ERROR_UNAVAILABLE, "cuda monitor: %s", load_why);
    pthread_mutex_lock(&init_mu);
    hn_nvmlReturn_t r = inited ? HN_NVML_SUCCESS : nv.nvmlInit_v2();
    if (r == HN_NVML_SUCCESS) inited = 1;
    pthread_mutex_unlock(&init_mu);
    if (r != HN_NVML_SUCCESS)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "cuda monitor: nvmlInit_v2 failed: %s (NVML "
                       "error %u)%s", nv_str(r), r,
                       r == HN_NVML_ERROR_DRIVER_NOT_LOADED ? "; is the NVIDIA kernel module "
                       "loaded (nvidia-smi, lsmod | grep nvidia)?" :
                       r == HN_NVML_ERROR_NO_PERMISSION ? "; this user may not open "
                       "/dev/nvidiactl" : "");
    return HWRT_SUCCESS;
}

/* Compute processes of one device: the _v3 query, else the unversioned one, with a
 * buffer grown to the count NVML asks for. *n = 0 and a warning on failure. */
static void device_processes(hwrt_smi_snapshot *out, int index, hn_nvmlDevice_t dev,
                             int have_loc, hwi_pci_loc loc)
{
    unsigned int cap = 64, n = 0;
    hn_nvmlProcessInfo_t *v3 = NULL;
    hn_nvmlProcessInfo_v1_t *v1 = NULL;
    hn_nvmlReturn_t r = HN_NVML_ERROR_INSUFFICIENT_SIZE;
    for (int tries = 0; tries < 4 && r == HN_NVML_ERROR_INSUFFICIENT_SIZE; tries++) {
        free(v3);
        free(v1);
        v3 = NULL;
        v1 = NULL;
        n = cap;
        if (nv.nvmlDeviceGetComputeRunningProcesses_v3) {
            v3 = calloc(cap, sizeof *v3);
            r = v3 ? nv.nvmlDeviceGetComputeRunningProcesses_v3(dev, &n, v3) : HN_NVML_ERROR_UNKNOWN;
        } else {
            v1 = calloc(cap, sizeof *v1);
            r = v1 ? nv.nvmlDeviceGetComputeRunningProcesses(dev, &n, v1) : HN_NVML_ERROR_UNKNOWN;
        }
        if (r == HN_NVML_ERROR_INSUFFICIENT_SIZE) cap = n > cap ? n + 8 : cap * 2;
    }
    if (r != HN_NVML_SUCCESS) {
        hwi_smi_warn(out, "device %d: no process list: %s", index, v3 || v1 ? nv_str(r) : "host out of memory");
        n = 0;
    }
    hwrt_smi_device *d = &out->devices[index];
    for (unsigned int i = 0; i < n && out->nprocesses < HWRT_SMI_MAX_PROCESSES; i++) {
        unsigned int pid = v3 ? v3[i].pid : v1[i].pid;
        unsigned long long used = v3 ? v3[i].usedGpuMemory : v1[i].usedGpuMemory;
        hwrt_smi_process *p = &out->processes[out->nprocesses++];
        p->pid = (int)pid;
        p->device = index;
        hwi_usage_proc_name(p->pid, p->name, sizeof p->name);
        if (used == HN_NVML_VALUE_NOT_AVAILABLE_ULL) {
            hwi_smi_warn(out, "device %d: the driver does not report pid %u's memory", index, pid);
            used = 0;
        }
        p->used = (size_t)used;
        d->processes++;
        char why[512] = "";
        if (have_loc && hwi_cuda_usage_reconcile(p, loc, index, why, sizeof why) < 0)
            hwi_smi_warn(out, "%s", why);
    }
    free(v3);
    free(v1);
}

static void driver_line(hwrt_smi_snapshot *out)
{
    char ver[HN_NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = "";
    int cuda = 0;
    if (nv.nvmlSystemGetDriverVersion(ver, sizeof ver) != HN_NVML_SUCCESS) snprintf(ver, sizeof ver, "?");
    if (nv.nvmlSystemGetCudaDriverVersion &&
        nv.nvmlSystemGetCudaDriverVersion(&cuda) == HN_NVML_SUCCESS && cuda > 0)
        snprintf(out->driver, sizeof out->driver, "NVIDIA driver %s, CUDA %d.%d", ver,
                 cuda / 1000, cuda % 1000 / 10);
    else
        snprintf(out->driver, sizeof out->driver, "NVIDIA driver %s", ver);
}

/* Device-wide memory: v1's used is total - free (driver reservation included); the
 * v2 query is the fallback for drivers that refuse v1. */
static hn_nvmlReturn_t device_memory(hn_nvmlDevice_t dev, hwrt_smi_device *d)
{
    hn_nvmlMemory_t m;
    hn_nvmlReturn_t r = nv.nvmlDeviceGetMemoryInfo(dev, &m);
    if (r == HN_NVML_SUCCESS) {
        d->total = (size_t)m.total;
        d->used = (size_t)(m.total > m.free ? m.total - m.free : 0);
        return r;
    }
    if (!nv.nvmlDeviceGetMemoryInfo_v2) return r;
    hn_nvmlMemory_v2_t m2;
    memset(&m2, 0, sizeof m2);
    m2.version = HN_NVML_MEMORY_V2;
    hn_nvmlReturn_t r2 = nv.nvmlDeviceGetMemoryInfo_v2(dev, &m2);
    if (r2 != HN_NVML_SUCCESS) return r;
    d->total = (size_t)m2.total;
    d->used = (size_t)(m2.total > m2.free ? m2.total - m2.free : 0);
    return r2;
}

hwrt_status hwi_cuda_nvml_monitor(hwrt_smi_snapshot *out)
{
    if (!out) return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "cuda monitor: out is NULL");
    HWI_TRY(nvml_ready());
    memset(out, 0, sizeof *out);
    unsigned int count = 0;
    hn_nvmlReturn_t r = nv.nvmlDeviceGetCount_v2(&count);
    if (r != HN_NVML_SUCCESS)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "cuda monitor: nvmlDeviceGetCount_v2 failed: %s "
                       "(NVML error %u)", nv_str(r), r);
    driver_line(out);
    if (count > HWRT_SMI_MAX_DEVICES) {
        hwi_smi_warn(out, "NVML sees %u devices; the first %d are shown", count, HWRT_SMI_MAX_DEVICES);
        count = HWRT_SMI_MAX_DEVICES;
    }
    out->ndevices = (int)count;
    for (unsigned int i = 0; i < count; i++) {
        hwrt_smi_device *d = &out->devices[i];
        d->id = (int)i;
        snprintf(d->backend, sizeof d->backend, "cuda");
        snprintf(d->health, sizeof d->health, "OK");
        hn_nvmlDevice_t dev = NULL;
        r = nv.nvmlDeviceGetHandleByIndex_v2(i, &dev);
        if (r != HN_NVML_SUCCESS) {
            snprintf(d->name, sizeof d->name, "?");
            snprintf(d->health, sizeof d->health, r == HN_NVML_ERROR_GPU_IS_LOST ? "LOST" : "ERROR");
            hwi_smi_warn(out, "device %u: %s", i, nv_str(r));
            continue;
        }
        char name[HN_NVML_DEVICE_NAME_V2_BUFFER_SIZE] = "";
        if (nv.nvmlDeviceGetName(dev, name, sizeof name) != HN_NVML_SUCCESS) snprintf(name, sizeof name, "?");
        snprintf(d->name, sizeof d->name, "%s", name);
        hn_nvmlPciInfo_t pci;
        memset(&pci, 0, sizeof pci);
        int have_loc = nv.nvmlDeviceGetPciInfo_v3 &&
                       nv.nvmlDeviceGetPciInfo_v3(dev, &pci) == HN_NVML_SUCCESS;
        hwi_pci_loc loc = {pci.domain, pci.bus, pci.device};
        if (have_loc) {
            pci.busId[sizeof pci.busId - 1] = 0;
            snprintf(d->bus_id, sizeof d->bus_id, "%s", pci.busId);
        }
        r = device_memory(dev, d);
        if (r != HN_NVML_SUCCESS) {
            snprintf(d->health, sizeof d->health, r == HN_NVML_ERROR_GPU_IS_LOST ? "LOST" : "ERROR");
            hwi_smi_warn(out, "device %u: no memory figures: %s", i, nv_str(r));
        }
        hn_nvmlUtilization_t u;
        r = nv.nvmlDeviceGetUtilizationRates(dev, &u);
        if (r == HN_NVML_SUCCESS) d->busy_pct = u.gpu > 100 ? 100 : u.gpu;
        else if (r != HN_NVML_ERROR_NOT_SUPPORTED) hwi_smi_warn(out, "device %u: no utilisation: %s", i, nv_str(r));
        device_processes(out, (int)i, dev, have_loc, loc);
    }
    return HWRT_SUCCESS;
}
