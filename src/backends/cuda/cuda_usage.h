/* The pool figures of hwrt processes on NVIDIA devices, for hwrt-smi in any process.
 *
 * NVML knows each process's device memory but not what hwrt's pool inside it holds. A
 * process running hwrt on cuda publishes its pool's reserved and allocated bytes per
 * device (the backend's report_usage slot calls hwi_cuda_usage_publish) as one small file
 * per (process, device) in a per-user directory: HWRT_CUDA_USAGE_DIR, else
 * /dev/shm/hwrt-cuda-<uid> (mode 0700). A device is named by its PCI location, which
 * CUDA ordinals (CUDA_VISIBLE_DEVICES, FASTEST_FIRST) and NVML indices share. Files are
 * replaced atomically (write + rename); each carries the process's start time, so a
 * reused pid never inherits a dead process's figures. Readers trust nothing: the
 * directory and files must be the user's own with modes 0700/0600, contents must parse
 * and allocated <= reserved; anything else is reported as the reason and ignored. */
#ifndef HWI_CUDA_USAGE_H
#define HWI_CUDA_USAGE_H

#include <stddef.h>

typedef struct hwi_pci_loc {
    unsigned domain, bus, device;
} hwi_pci_loc;

/* Publish this process's pool figures for the device at loc. Best effort: a directory
 * that cannot be used leaves one warning on stderr naming it and the fix. */
void hwi_cuda_usage_publish(hwi_pci_loc loc, size_t reserved, size_t allocated);

/* What process pid published for loc: 1 with the figures; 0 when it published nothing
 * (not an hwrt process), -1 when what is there was refused (why says so). */
int hwi_cuda_usage_read(int pid, hwi_pci_loc loc, size_t *reserved, size_t *allocated,
                        char *why, size_t whylen);

#endif
