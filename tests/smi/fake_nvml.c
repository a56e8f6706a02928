/* A fake libnvidia-ml.so.1 for test_cuda_monitor: a real shared library, loaded by hwrt
 * with dlopen through HWRT_NVML_LIBRARY, exporting the NVML entry points hwrt uses with
 * canned data. Its types are spelled out here (no nvml.h on machines without the driver).
 *
 * Two devices. Device 0, an "NVIDIA H200 (fake)" at 0000:1B:00.0: 143771 MiB total,
 * 140000 MiB free, 37% busy; processes: the calling process (1500 MiB) and pid 1
 * (200 MiB). Device 1, "NVIDIA H200 (fake) 2" at 0000:2C:00.0: 80 processes of 1 MiB with
 * pids 4000000+i (none alive), so that the first query (64 entries) is too small.
 * FAKE_NVML_MODE=nodriver makes nvmlInit_v2 fail with NVML_ERROR_DRIVER_NOT_LOADED;
 * FAKE_NVML_MODE=lost makes device 1 "fall off the bus" (NVML_ERROR_GPU_IS_LOST);
 * FAKE_NVML_MODE=nov1mem makes the v1 memory query unsupported; FAKE_NVML_MODE=samecount
 * gives device 1 200 processes and answers a too small process query with
 * NVML_ERROR_INSUFFICIENT_SIZE, leaving the count as given (a list still growing;
 * FAKE_NVML_PROCS=<n> processes instead of 200);
 * FAKE_NVML_MODE=stuck likewise, but no size is ever enough; FAKE_NVML_PID=<pid> puts
 * that process in the calling process's place. FAKE_NVML_MODE=noperm / initunknown make
 * nvmlInit_v2 fail with NVML_ERROR_NO_PERMISSION / NVML_ERROR_UNKNOWN; nomem / nomemlost
 * make device 1's memory queries fail (unknown error / GPU lost); noutil / utilerr its
 * utilisation query (not supported / unknown error). FAKE_NVML_COUNT=<n> (up to 80)
 * reports n devices, devices 2.. like device 1. Built three times: with
 * every entry point, without the _v3 process query (-DFAKE_NO_V3, a driver before R470:
 * the unversioned query answers) and without the unversioned one (-DFAKE_NO_V1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

typedef unsigned int ret_t;
typedef struct nvmlDevice_st { int index; } dev_st;
typedef struct { unsigned long long total, free, used; } mem_t;
typedef struct { unsigned int version; unsigned long long total, reserved, free, used; } mem2_t;
typedef struct { unsigned int gpu, memory; } util_t;
typedef struct { unsigned int pid; unsigned long long used; unsigned int gi, ci; } proc_t;
typedef struct { unsigned int pid; unsigned long long used; } proc1_t;
typedef struct {
    char legacy[16];
    unsigned int domain, bus, device, pci_device_id, subsys;
    char bus_id[32];
} pci_t;

static dev_st devs[80] = {{0}, {1}};
static int inited;
#define MIB (1024ull * 1024ull)

static int mode(const char *m)
{
    const char *v = getenv("FAKE_NVML_MODE");
    return v && !strcmp(v, m);
}

API ret_t nvmlInit_v2(void)
{
    if (mode("nodriver")) return 9;
    if (mode("noperm")) return 4;
    if (mode("initunknown")) return 999;
    inited = 1;
    return 0;
}
API ret_t nvmlShutdown(void) { inited = 0; return 0; }
API const char *nvmlErrorString(ret_t r)
{
    switch (r) {
    case 0: return "Success";
    case 7: return "Insufficient Size";
    case 4: return "Insufficient Permissions";
    case 9: return "Driver Not Loaded";
    case 15: return "GPU is lost";
    default: return "Unknown Error";
    }
}
API ret_t nvmlSystemGetDriverVersion(char *v, unsigned int len)
{
    if (len < 10) return 7;
    snprintf(v, len, "580.65.06");
    return 0;
}
/* FAKE_NVML_MODE=nocudaver: refused (after writing a value, as nothing forbids);
 * cudaver0: "success" with version 0 */
API ret_t nvmlSystemGetCudaDriverVersion(int *v)
{
    *v = mode("nocudaver") ? 12040 : mode("cudaver0") ? 0 : 13000;
    return mode("nocudaver") ? 3 : 0;
}
/* FAKE_NVML_COUNT, at most 80; 2 without it */
static unsigned int device_count(void)
{
    const char *c = getenv("FAKE_NVML_COUNT");
    unsigned int n = c ? (unsigned)atoi(c) : 2;
    return n > 80 ? 80 : n;
}
API ret_t nvmlDeviceGetCount_v2(unsigned int *n)
{
    if (!inited) return 1;
    *n = device_count();
    return 0;
}
API ret_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, dev_st **d)
{
    if (!inited || i >= device_count()) return 2;
    if (i == 1 && mode("lost")) return 15;
    devs[i].index = (int)i;
    *d = &devs[i];
    return 0;
}
API ret_t nvmlDeviceGetName(dev_st *d, char *name, unsigned int len)
{
    snprintf(name, len, d->index ? "NVIDIA H200 (fake) 2" : "NVIDIA H200 (fake)");
    return 0;
}
API ret_t nvmlDeviceGetPciInfo_v3(dev_st *d, pci_t *p)
{
    memset(p, 0, sizeof *p);
    p->domain = 0;
    p->bus = d->index ? 0x2c : 0x1b;
    p->device = 0;
    snprintf(p->bus_id, sizeof p->bus_id, "00000000:%02X:00.0", p->bus);
    snprintf(p->legacy, sizeof p->legacy, "0000:%02X:00.0", p->bus);
    return 0;
}
/* nomem / nomemlost: device 1's memory queries fail (unknown error / GPU lost), else 0 */
static ret_t memory_fault(const dev_st *d)
{
    return d->index != 1 ? 0 : mode("nomem") ? 999 : mode("nomemlost") ? 15 : 0;
}
API ret_t nvmlDeviceGetMemoryInfo(dev_st *d, mem_t *m)
{
    if (mode("nov1mem")) return 3;       /* NOT_SUPPORTED: hwrt must take the v2 query */
    if (memory_fault(d)) return memory_fault(d);
    m->total = 143771 * MIB;
    m->free = d->index ? 143000 * MIB : 140000 * MIB;
    m->used = m->total - m->free;
    return 0;
}
API ret_t nvmlDeviceGetMemoryInfo_v2(dev_st *d, mem2_t *m)
{
    if (m->version != (unsigned)(sizeof *m | 2u << 24)) return 2;   /* NVML checks it */
    if (memory_fault(d)) return memory_fault(d);
    m->total = 143771 * MIB;
    m->reserved = 500 * MIB;
    m->free = d->index ? 143000 * MIB : 140000 * MIB;
    m->used = m->total - m->free - m->reserved;
    return 0;
}
API ret_t nvmlDeviceGetUtilizationRates(dev_st *d, util_t *u)
{
    if (d->index == 1 && mode("noutil")) return 3;
    if (d->index == 1 && mode("utilerr")) return 999;
    u->gpu = d->index ? 0 : 37;
    u->memory = d->index ? 0 : 12;
    return 0;
}
/* The canned process list: pid and bytes of entry i of device d. */
static unsigned int have(dev_st *d)
{
    const char *n = getenv("FAKE_NVML_PROCS");     /* samecount's list, 200 without it */
    return !d->index ? 2 : mode("samecount") ? (n ? (unsigned)atoi(n) : 200)
                         : mode("stuck") ? 1000000 : 80;
}
/* a too small query: the count needed, unless a mode leaves it as given */
static ret_t too_small(unsigned int *n, unsigned int have_n)
{
    if (!mode("samecount") && !mode("stuck")) *n = have_n;
    return 7;
}
static void proc_at(dev_st *d, unsigned int i, unsigned int *pid, unsigned long long *used)
{
    if (d->index) {
        *pid = 4000000 + i;
        *used = MIB;
    } else {
        const char *who = getenv("FAKE_NVML_PID");   /* another process than the caller */
        *pid = i ? 1 : who ? (unsigned)atoi(who) : (unsigned)getpid();
        *used = i ? 200 * MIB : 1500 * MIB;
    }
}

#ifndef FAKE_NO_V3
API ret_t nvmlDeviceGetComputeRunningProcesses_v3(dev_st *d, unsigned int *n, proc_t *p)
{
    unsigned int have_n = have(d);
    if (*n < have_n) return too_small(n, have_n);
    *n = have_n;
    for (unsigned int i = 0; i < have_n; i++) {
        memset(&p[i], 0, sizeof p[i]);
        p[i].gi = p[i].ci = 0xFFFFFFFFu;
        proc_at(d, i, &p[i].pid, &p[i].used);
    }
    return 0;
}
#endif

#ifndef FAKE_NO_V1
API ret_t nvmlDeviceGetComputeRunningProcesses(dev_st *d, unsigned int *n, proc1_t *p)
{
#ifdef FAKE_NO_V3                /* a driver before R470: this is the only process query */
    unsigned int have_n = have(d);
    if (*n < have_n) return too_small(n, have_n);
    *n = have_n;
    for (unsigned int i = 0; i < have_n; i++) proc_at(d, i, &p[i].pid, &p[i].used);
    return 0;
#else
    return 3;    /* hwrt prefers the _v3 query: it must not get here */
#endif
}
#endif
