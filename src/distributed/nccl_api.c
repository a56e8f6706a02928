/* The NCCL loader (see nccl_api.h). */
#include "nccl_api.h"

#include <dlfcn.h>
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
    const char *env = getenv("HWRT_NCCL_LIBRARY");
    const char *lib = env && *env ? env : NCCL_SONAME;
    dlerror();
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(nccl_why, sizeof nccl_why, "NCCL could not be loaded (%s): install NCCL "
                 "(" NCCL_SONAME ") where the dynamic loader finds it, or point "
                 "HWRT_NCCL_LIBRARY at it", e ? e : lib);
        nccl_state = -1;
        return;
    }
#define HC_SYM(name, ret, params)                                                           \
    tab.name = (hc_##name##_fn)dlsym(h, #name);                                              \
    if (!tab.name) {                                                                         \
        snprintf(nccl_why, sizeof nccl_why, "%s has no %s: not an NCCL library, or one "     \
                 "older than 2.12", lib, #name);                                             \
        goto fail;                                                                           \
    }
    HC_NCCL_FUNCS(HC_SYM)
#undef HC_SYM
    if (tab.ncclGetVersion(&tab.version) != HC_ncclSuccess || tab.version < HC_NCCL_MIN_VERSION) {
        snprintf(nccl_why, sizeof nccl_why, "%s is NCCL version code %d; hwrt needs 2.12 (%d) "
                 "or later", lib, tab.version, HC_NCCL_MIN_VERSION);
        goto fail;
    }
    nccl_state = 1;       /* kept open for the process: NCCL has threads of its own */
    return;
fail:
    dlclose(h);
    memset(&tab, 0, sizeof tab);
    nccl_state = -1;
}

/* libcuda is the cuda backend's: already loaded when a cuda device is open. */
static void load_cuda(void)
{
    void *h = dlopen(CUDA_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!h) h = dlopen(CUDA_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(cuda_why, sizeof cuda_why, "the CUDA driver library could not be loaded (%s)",
                 e ? e : CUDA_SONAME);
        cuda_state = -1;
        return;
    }
#define HC_SYM(name, ret, params)                                                           \
    tab.name = (hc_##name##_fn)dlsym(h, #name);                                              \
    if (!tab.name) {                                                                         \
        snprintf(cuda_why, sizeof cuda_why, CUDA_SONAME " has no %s", #name);                \
        cuda_state = -1;                                                                     \
        return;                                                                              \
    }
    HC_CUDA_FUNCS(HC_SYM)
#undef HC_SYM
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
