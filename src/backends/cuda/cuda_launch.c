/* Kernels: the embedded PTX module (cuda_kernels_ptx.c, from kernels/hwrt_kernels.cu),
 * JIT-compiled by the driver once per device (cuModuleLoadData), and one cuLaunchKernel
 * per op. */
#include "cuda_internal.h"
#include "../../base/status.h"

#include <stdio.h>
#include <string.h>

static const char *const fn_names[CU_K_COUNT] = {
    [CU_K_EW_F32] = "hwrt_ew_f32", [CU_K_EW] = "hwrt_ew", [CU_K_CAST] = "hwrt_cast",
    [CU_K_MATMUL] = "hwrt_matmul", [CU_K_SUM] = "hwrt_sum",
};

/* Load the module once; its outcome (good or bad) is kept. Context current. */
static hwrt_status module_get(cu_dev *d)
{
    pthread_mutex_lock(&d->mod_mu);
    if (d->mod_status < 0) {
        hcu_result r = hcu.ModuleLoadData(&d->mod, hwi_cuda_kernels_ptx);
        const char *what = "cuModuleLoadData (JIT of the embedded PTX)";
        for (int i = 0; r == HCU_SUCCESS && i < CU_K_COUNT; i++) {
            r = hcu.ModuleGetFunction(&d->fn[i], d->mod, fn_names[i]);
            what = fn_names[i];
        }
        if (r == HCU_SUCCESS) {
            d->mod_status = HWRT_SUCCESS;
        } else {
            char desc[256];
            cu_describe(r, desc, sizeof desc);
            snprintf(d->mod_msg, sizeof d->mod_msg, "cuda device %d: loading hwrt's kernels "
                     "failed at %s: %s%s", d->ordinal, what, desc,
                     r == HCU_ERROR_UNSUPPORTED_PTX_VERSION || r == HCU_ERROR_INVALID_PTX
                         ? " (the driver is older than the PTX ISA 7.8 the kernels need: "
                           "update the NVIDIA driver to CUDA 12.0 or newer)"
                         : "");
            d->mod_status = r == HCU_ERROR_OUT_OF_MEMORY ? HWRT_ERROR_OUT_OF_MEMORY
                                                         : HWRT_ERROR_UNAVAILABLE;
            if (d->mod) hcu.ModuleUnload(d->mod);
            d->mod = NULL;
        }
    }
    hwrt_status st = (hwrt_status)d->mod_status;
    pthread_mutex_unlock(&d->mod_mu);
    if (st != HWRT_SUCCESS) return hwi_err(st, "%s", d->mod_msg);
    return HWRT_SUCCESS;
}

void cu_module_release(cu_dev *d)
{
    if (d->mod) hcu.ModuleUnload(d->mod);
    d->mod = NULL;
    d->mod_status = -1;
}

#define EW_THREADS 256u
#define MAX_BLOCKS 8192u      /* grid-stride beyond: enough to fill any current GPU */
#define TILE 16u              /* hwrt_matmul's tile */

static unsigned blocks_for(int64_t n)
{
    int64_t b = (n + EW_THREADS - 1) / EW_THREADS;
    return b > MAX_BLOCKS ? MAX_BLOCKS : (unsigned)b;
}

hwrt_status cu_kernel_launch(hwrt_bstream *s, const hwrt_kernel *k)
{
    cu_dev *d = s->dev;
    HWI_TRY(cu_enter(d));
    HWI_TRY(module_get(d));
    int op = (int)k->op, dt = (int)k->dtype, odt = (int)k->out_dtype;
    void *o = k->out;
    const void *a = k->a, *b = k->b;
    int64_t n = k->n, m = k->m, kk = k->k, nn = k->nn;
    float fs = (float)k->scalar;
    double ds = k->scalar;
    int which;
    unsigned gx, gy = 1, bx = EW_THREADS, by = 1;
    void *args[8];
    switch (k->op) {
    case HWRT_K_MATMUL:
        if (m == 0 || nn == 0) return HWRT_SUCCESS;
        if ((m + TILE - 1) / TILE > 65535 || (nn + TILE - 1) / TILE > 0x7fffffff)
            return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "cuda: matmul with %lld rows exceeds the "
                           "kernel's grid (at most %u rows)", (long long)m, 65535u * TILE);
        which = CU_K_MATMUL;
        gx = (unsigned)((nn + TILE - 1) / TILE);
        gy = (unsigned)((m + TILE - 1) / TILE);
        bx = by = TILE;
        args[0] = &dt; args[1] = &o; args[2] = &a; args[3] = &b;
        args[4] = &m; args[5] = &kk; args[6] = &nn;
        break;
    case HWRT_K_SUM:
        if (m * nn == 0) return HWRT_SUCCESS;
        which = CU_K_SUM;
        gx = blocks_for(m * nn);
        args[0] = &dt; args[1] = &odt; args[2] = &o; args[3] = &a;
        args[4] = &m; args[5] = &kk; args[6] = &nn;
        break;
    case HWRT_K_CAST:
        if (n == 0) return HWRT_SUCCESS;
        which = CU_K_CAST;
        gx = blocks_for(n);
        args[0] = &dt; args[1] = &odt; args[2] = &o; args[3] = &a; args[4] = &n;
        break;
    default:
        if (n == 0) return HWRT_SUCCESS;
        gx = blocks_for(n);
        if (k->dtype == HWRT_FLOAT32) {
            which = CU_K_EW_F32;
            args[0] = &op; args[1] = &o; args[2] = &a; args[3] = &b; args[4] = &n; args[5] = &fs;
        } else {
            which = CU_K_EW;
            args[0] = &op; args[1] = &dt; args[2] = &o; args[3] = &a; args[4] = &b;
            args[5] = &n; args[6] = &ds;
        }
        break;
    }
    uint64_t corr = cu_cupti_push();
    hcu_result r = hcu.LaunchKernel(d->fn[which], gx, gy, 1, bx, by, 1, 0, s->s, args, NULL);
    cu_cupti_pop(corr, r == HCU_SUCCESS);
    if (r != HCU_SUCCESS)
        return cu_err(d, r, "cuda device %d: cuLaunchKernel(%s, grid %ux%u, block %ux%u)",
                      d->ordinal, fn_names[which], gx, gy, bx, by);
    return HWRT_SUCCESS;
}
