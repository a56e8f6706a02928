/* The HCCL loader and its type mapping (see hccl_api.h), through base/dynlib.h. */
#include "hccl_api.h"
#include "../base/dynlib.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static hh_hccl tab;
static int loaded;
static char why_not[1024];

static void load(void)
{
    static const char *const names[] = {"libhccl.so", NULL};
    const char *lib = NULL;
    char why[768];
    void *h = hwi_dynlib_open("HWRT_HCCL_LIBRARY", names, &lib, why, sizeof why);
    if (!h) {
        snprintf(why_not, sizeof why_not, "HCCL could not be loaded (install CANN and source "
                 "its set_env.sh, or point HWRT_HCCL_LIBRARY at libhccl.so): %s", why);
        return;
    }
    hwi_dynsym syms[] = {
#define HH_SYM(name, ret, params) {#name, (void **)&tab.name, 0, NULL},
        HH_HCCL_FUNCS(HH_SYM)
#undef HH_SYM
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
        if (!strcmp(syms[i].name, "HcclGetErrorString") ||
            !strcmp(syms[i].name, "HcclGetCommAsyncError"))
            syms[i].flags = HWI_DYNSYM_OPTIONAL;
    const char *missing = hwi_dynlib_resolve(h, syms, sizeof syms / sizeof syms[0]);
    if (missing) {
        snprintf(why_not, sizeof why_not, "%s has no %s: not an HCCL library, or one too old "
                 "for hwrt", lib, missing);
        memset(&tab, 0, sizeof tab);
        return;
    }
    tab.lib = lib;
    loaded = 1;          /* kept open for the process (dynlib never closes) */
}

const hh_hccl *hwi_hccl_load(char *why, size_t len)
{
    pthread_once(&once, load);
    if (!loaded) snprintf(why, len, "%s", why_not);
    return loaded ? &tab : NULL;
}

const char *hwi_hccl_str(const hh_hccl *h, hh_HcclResult r)
{
    static _Thread_local char buf[48];
    const char *s = h && h->HcclGetErrorString ? h->HcclGetErrorString(r) : NULL;
    if (s && *s) return s;
    snprintf(buf, sizeof buf, "HCCL error %d", (int)r);
    return buf;
}

int hwi_hccl_reduce_type(hwrt_dtype dt, hwrt_reduce_op op, char *why, size_t len)
{
    int t = -1;
    switch (dt) {
    case HWRT_FLOAT32: t = HH_HCCL_DATA_TYPE_FP32; break;
    case HWRT_FLOAT16: t = HH_HCCL_DATA_TYPE_FP16; break;
    case HWRT_BFLOAT16: t = HH_HCCL_DATA_TYPE_BFP16; break;
    case HWRT_INT8: t = HH_HCCL_DATA_TYPE_INT8; break;
    case HWRT_INT32: t = HH_HCCL_DATA_TYPE_INT32; break;
    case HWRT_INT64: t = HH_HCCL_DATA_TYPE_INT64; break;
    default: break;
    }
    if (t < 0) {
        snprintf(why, len, "HCCL does not reduce %s tensors (its reductions on Atlas A2/A3 take "
                 "int8, int32, int64, float16, float32 and bfloat16); cast first, or set "
                 "HWRT_COLL_ENGINE=mpi", hwrt_dtype_name(dt));
        return -1;
    }
    if (op == HWRT_REDUCE_PROD && dt == HWRT_BFLOAT16) {
        snprintf(why, len, "HCCL has no PROD for bfloat16; cast to float32 first, or set "
                 "HWRT_COLL_ENGINE=mpi");
        return -1;
    }
    if (op == HWRT_REDUCE_AVG && dt != HWRT_FLOAT32 && dt != HWRT_FLOAT16 &&
        dt != HWRT_BFLOAT16) {
        snprintf(why, len, "HCCL has no AVG, which hwrt makes of SUM and a scale by 1/ranks on "
                 "the stream, for float types only: for %s use SUM and divide, or set "
                 "HWRT_COLL_ENGINE=mpi", hwrt_dtype_name(dt));
        return -1;
    }
    return t;
}
