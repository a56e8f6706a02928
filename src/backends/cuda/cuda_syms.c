/* The CUDA driver's entry points into an hcu_api table (cuda_api.h), for the backend
 * (cuda_api.c) and hwrt-cuda-baseline alike. Depends on base/dynlib only. */
#include "cuda_api.h"
#include "../../base/dynlib.h"

const char *hcu_resolve(void *h, hcu_api *api)
{
    enum {
#define HCU_INDEX(slot, sym, ret, args) HCU_AT_##slot,
        HCU_FUNCS(HCU_INDEX, hcu_mem_alloc_prop, hcu_mem_access_desc)
#undef HCU_INDEX
        HCU_NFUNCS
    };
    hwi_dynsym syms[HCU_NFUNCS] = {
#define HCU_SYM(slot, sym, ret, args) {#sym, (void **)&api->slot, 0, NULL},
        HCU_FUNCS(HCU_SYM, hcu_mem_alloc_prop, hcu_mem_access_desc)
#undef HCU_SYM
    };
    /* cuEventElapsedTime_v2 is CUDA 12.8+; older drivers have the same call unversioned */
    syms[HCU_AT_EventElapsedTime].alias = "cuEventElapsedTime";
    return hwi_dynlib_resolve(h, syms, HCU_NFUNCS);
}
