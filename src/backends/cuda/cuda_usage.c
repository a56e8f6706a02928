/* The cuda backend's usage board (see cuda_usage.h): devices named by PCI location. */
#include "cuda_usage.h"
#include "../usage_board.h"

#include <stdio.h>

static hwi_usage_board board = HWI_USAGE_BOARD_INIT("cuda", "HWRT_CUDA_USAGE_DIR", "NVML");

static void key(hwi_pci_loc loc, char *buf, size_t len)
{
    snprintf(buf, len, "%04x_%02x_%02x", loc.domain, loc.bus, loc.device);
}

void hwi_cuda_usage_publish(hwi_pci_loc loc, size_t reserved, size_t allocated)
{
    char k[40];
    key(loc, k, sizeof k);
    hwi_usage_publish(&board, k, reserved, allocated);
}

int hwi_cuda_usage_reconcile(hwrt_smi_process *p, hwi_pci_loc loc, int device, char *why,
                             size_t whylen)
{
    char k[40];
    key(loc, k, sizeof k);
    return hwi_usage_reconcile(&board, k, device, p, why, whylen);
}
