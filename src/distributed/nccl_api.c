/* The NCCL loader (see nccl_api.h). */
#include "nccl_api.h"
#include "../base/dynlib.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCCL_SONAME "libnccl.so.2"
#define CUDA_SONAME "libcuda.so.1"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static hc_nccl tab;
static int nccl_state, cuda_state;      /* 0 not tried, 1 loaded, -1 failed */
static char nccl_why[1024], cuda_why[512];

static void load_nccl(void)
{
    static const char *const names[] = {NCCL_SONAME, NULL};
    const char *lib = NCCL_SONAME;
    char why[512];
    void *h = hwi_dynlib_open("HWRT_NCCL_LIBRARY", names, &lib, why, sizeof why);
    if (!h) {
        snprintf(nccl_why, sizeof nccl_why, "NCCL could not be loaded (%s): install NCCL "
                 "(" NCCL_SONAME ") where the dynamic loader finds it, or point "
                 "HWRT_NCCL_LIBRARY at it", why);
        nccl_state = -1;
        return;
    }
    static const hwi_dynsym syms[] = {
#define HC_SYM(name, ret, params) {#name, (void **)&tab.name, 0, NULL},
        HC_NCCL_FUNCS(HC_SYM)
#undef HC_SYM
    };
    const char *missing = hwi_dynlib_resolve(h, syms, sizeof syms / sizeof syms[0]);
    if (missing) {
        snprintf(nccl_why, sizeof nccl_why, "%s has no %s: not an NCCL library, or one older "
                 "than 2.12", lib, missing);
        goto fail;
    }
    if (tab.ncclGetVersion(&tab.version) != HC_ncclSuccess || tab.version < HC_NCCL_MIN_VERSION) {
        snprintf(nccl_why, sizeof nccl_why, "%s is NCCL version code %d; hwrt needs 2.12 (%d) "
                 "or later", lib, tab.version, HC_NCCL_MIN_VERSION);
        goto fail;
    }
    nccl_state = 1;       /* kept open for the process: NCCL has threads of its own */
    return;
fail:
    memset(&tab, 0, sizeof tab);
    nccl_state = -1;
}

/* libcuda is the cuda backend's: already loaded when a cuda device is open. */
static void load_cuda(void)
{
    char why[384];
    void *h = hwi_dynlib_open_shared(CUDA_SONAME, why, sizeof why);
    if (!h) {
        snprintf(cuda_why, sizeof cuda_why, "the CUDA driver library could not be loaded (%s)",
                 why);
        cuda_state = -1;
        return;
    }
    static const hwi_dynsym syms[] = {
#define HC_SYM(name, ret, params) {#name, (void **)&tab.name, 0, NULL},
        HC_CUDA_FUNCS(HC_SYM)
#undef HC_SYM
    };
    const char *missing = hwi_dynlib_resolve(h, syms, sizeof syms / sizeof syms[0]);
    if (missing) {
        snprintf(cuda_why, sizeof cuda_why, CUDA_SONAME " has no %s", missing);
        cuda_state = -1;
        return;
    }
    cuda_state = 1;
}

const hc_nccl *hwi_nccl_load(int need_cuda, char *why, size_t len)
{
    pthread_mutex_lock(&mu);
    if (!nccl_state) load_nccl();
    if (nccl_state > 0 && need_cuda && !cuda_state) load_cuda();
    const char *fail = nccl_state < 0 ? nccl_why : need_cuda && cuda_state < 0 ? cuda_why : NULL;
    if (fail) snprintf(why, len, "%s", fail);
    pthread_mutex_unlock(&mu);
    return fail ? NULL : &tab;
}
