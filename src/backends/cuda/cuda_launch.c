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

const char *cu_kernel_name(int which)
{
    return which >= 0 && which < CU_K_COUNT ? fn_names[which] : "?";
}

/* the parameter's kind follows from the C type passed, so what is checked is what is sent */
#define ARG(field)                                                                         \
    (L->args[L->nargs] = &L->field,                                                        \
     L->kinds[L->nargs++] = _Generic(L->field, int: 'i', int64_t: 'l', void *: 'l',        \
                                     const void *: 'l', float: 'f', double: 'd'))

hwrt_status cu_launch_prepare(const hwrt_kernel *k, cu_launch *L, int *empty)
{
    memset(L, 0, sizeof *L);
    L->op = (int)k->op;
    L->dt = (int)k->dtype;
    L->odt = (int)k->out_dtype;
    L->o = k->out;
    L->a = k->a;
    L->b = k->b;
    L->n = k->n;
    L->m = k->m;
    L->k = k->k;
    L->nn = k->nn;
    L->fs = (float)k->scalar;
    L->ds = k->scalar;
    L->gy = 1;
    L->bx = EW_THREADS;
    L->by = 1;
    switch (k->op) {
    case HWRT_K_MATMUL:
        *empty = L->m == 0 || L->nn == 0;
        if ((L->m + TILE - 1) / TILE > 65535 || (L->nn + TILE - 1) / TILE > 0x7fffffff)
            return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "cuda: matmul with %lld rows exceeds the "
                           "kernel's grid (at most %u rows)", (long long)L->m, 65535u * TILE);
        L->which = CU_K_MATMUL;
        L->gx = (unsigned)((L->nn + TILE - 1) / TILE);
        L->gy = (unsigned)((L->m + TILE - 1) / TILE);
        L->bx = L->by = TILE;
        ARG(dt); ARG(o); ARG(a); ARG(b); ARG(m); ARG(k); ARG(nn);
        break;
    case HWRT_K_SUM:
        *empty = L->m * L->nn == 0;
        L->which = CU_K_SUM;
        L->gx = blocks_for(L->m * L->nn);
        ARG(dt); ARG(odt); ARG(o); ARG(a); ARG(m); ARG(k); ARG(nn);
        break;
    case HWRT_K_CAST:
        *empty = L->n == 0;
        L->which = CU_K_CAST;
        L->gx = blocks_for(L->n);
        ARG(dt); ARG(odt); ARG(o); ARG(a); ARG(n);
        break;
    default:
        *empty = L->n == 0;
        L->gx = blocks_for(L->n);
        if (k->dtype == HWRT_FLOAT32) {
            L->which = CU_K_EW_F32;
            ARG(op); ARG(o); ARG(a); ARG(b); ARG(n); ARG(fs);
        } else {
            L->which = CU_K_EW;
            ARG(op); ARG(dt); ARG(o); ARG(a); ARG(b); ARG(n);
            ARG(ds);
        }
        break;
    }
    return HWRT_SUCCESS;
}

hwrt_status cu_kernel_launch(hwrt_bstream *s, const hwrt_kernel *k)
{
    cu_dev *d = s->dev;
    cu_launch L;
    int empty = 0;
    HWI_TRY(cu_enter(d));
    HWI_TRY(cu_launch_prepare(k, &L, &empty));
    if (empty) return HWRT_SUCCESS;
    HWI_TRY(module_get(d));
    uint64_t corr = cu_cupti_push();
    hcu_result r = hcu.LaunchKernel(d->fn[L.which], L.gx, L.gy, 1, L.bx, L.by, 1, 0, s->s, L.args,
                                    NULL);
    cu_cupti_pop(corr, r == HCU_SUCCESS);
    if (r != HCU_SUCCESS)
        return cu_err(d, r, "cuda device %d: cuLaunchKernel(%s, grid %ux%u, block %ux%u)",
                      d->ordinal, fn_names[L.which], L.gx, L.gy, L.bx, L.by);
    return HWRT_SUCCESS;
}
