/* hwrt public API — the device-wide view across processes (what hwrt-smi prints).
 * Include <hwrt.h>, not this file.
 *
 * Unlike hwrt_get_memory_info (this process's figures), this reads what the driver knows
 * about every process on every device, without opening a device. For the simulated NPU
 * the "driver" is a per-user shared-memory registry (/dev/shm, mode 0600) that each
 * process publishes to; entries of dead processes are reaped, corrupt or hostile
 * entries are reported in `warnings` and ignored. */
#ifndef HWRT_SMI_H
#define HWRT_SMI_H

#include "hwrt_core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HWRT_SMI_MAX_DEVICES 64
#define HWRT_SMI_MAX_PROCESSES 256

typedef struct hwrt_smi_device {
    int id;
    char name[128];
    char backend[16];
    char health[16];           /* "OK", or "FAULT" when a process reports a sticky fault */
    size_t total, used;        /* device-wide, every process included */
    double busy_pct;           /* compute-engine busy share over the sample window */
    int simulated;
    int processes;
    char bus_id[32];           /* PCI domain:bus:device.function where the driver says (NVML) */
} hwrt_smi_device;

typedef struct hwrt_smi_process {
    int pid;
    char name[32];
    int device;
    size_t used;               /* overhead + reserved + communication buffers */
    size_t overhead;           /* context and driver */
    size_t comm;               /* communication buffers */
    size_t reserved;           /* pool: allocated + cached */
    size_t allocated;          /* live blocks */
    uint64_t busy_ns;          /* compute-engine busy time so far */
    int exclusive;
} hwrt_smi_process;

typedef struct hwrt_smi_snapshot {
    int ndevices, nprocesses;
    hwrt_smi_device devices[HWRT_SMI_MAX_DEVICES];
    hwrt_smi_process processes[HWRT_SMI_MAX_PROCESSES];
    char warnings[1024];       /* corrupt or hostile entries that were ignored */
    char driver[128];          /* driver and library versions ("" where none: sim) */
} hwrt_smi_snapshot;

/* Read the device-wide view of a backend ("sim", ...; NULL/"auto" = the default).
 * busy_pct needs two readings: pass sample_ms > 0 to sample over that window.
 * Errors: INVALID_DEVICE (unknown backend), NOT_SUPPORTED (the backend's driver offers no
 * process view), UNAVAILABLE. */
HWRT_API hwrt_status hwrt_smi_query(const char *backend, int sample_ms, hwrt_smi_snapshot *out);

#ifdef __cplusplus
}
#endif
#endif /* HWRT_SMI_H */
