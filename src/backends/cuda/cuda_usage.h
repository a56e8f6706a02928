/* The pool figures of hwrt processes on NVIDIA devices, for hwrt-smi in any process: the
 * cuda backend's board of src/backends/usage_board.h (HWRT_CUDA_USAGE_DIR, else
 * /dev/shm/hwrt-cuda-<uid>), a device named by its PCI location, which CUDA ordinals
 * (CUDA_VISIBLE_DEVICES, FASTEST_FIRST) and NVML indices share. */
#ifndef HWI_CUDA_USAGE_H
#define HWI_CUDA_USAGE_H

#include "hwrt.h"

#include <stddef.h>

typedef struct hwi_pci_loc {
    unsigned domain, bus, device;
} hwi_pci_loc;

/* Publish this process's pool figures for the device at loc. Best effort: a directory
 * that cannot be used leaves one warning on stderr naming it and the fix. */
void hwi_cuda_usage_publish(hwi_pci_loc loc, size_t reserved, size_t allocated);

/* hwi_usage_reconcile (usage_board.h) of NVML process p on the device at loc. */
int hwi_cuda_usage_reconcile(hwrt_smi_process *p, hwi_pci_loc loc, int device, char *why,
                             size_t whylen);

#endif
