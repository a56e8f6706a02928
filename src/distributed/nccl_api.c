/* The NCCL loader (see nccl_api.h), through base/dynlib.h. */
#include "nccl_api.h"
#include "../base/dynlib.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define NCCL_SONAME "libnccl.so.2"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static hc_nccl tab;
static int loaded;
static char why_not[1024];

static void load(void)
{
    static const char *const names[] = {NCCL_SONAME, NULL};
    const char *lib = NULL;
    char why[768];
    void *h = hwi_dynlib_open("HWRT_NCCL_LIBRARY", names, &lib, why, sizeof why);
    if (!h) {
        snprintf(why_not, sizeof why_not, "NCCL could not be loaded: %s; install NCCL "
                 "(" NCCL_SONAME ") where the dynamic loader finds it, or point "
                 "HWRT_NCCL_LIBRARY at it", why);
        return;
    }
    static const hwi_dynsym syms[] = {
#define HC_SYM(name, ret, params) {#name, (void **)&tab.name, 0, NULL},
        HC_NCCL_FUNCS(HC_SYM)
#undef HC_SYM
    };
    const char *missing = hwi_dynlib_resolve(h, syms, sizeof syms / sizeof syms[0]);
    if (missing) {
        snprintf(why_not, sizeof why_not, "%s has no %s: not an NCCL library, or one older "
                 "than 2.12", lib, missing);
    } else if (tab.ncclGetVersion(&tab.version) != HC_ncclSuccess ||
               tab.version < HC_NCCL_MIN_VERSION) {
        snprintf(why_not, sizeof why_not, "%s is NCCL version code %d; hwrt needs 2.12 (%d) or "
                 "later", lib, tab.version, HC_NCCL_MIN_VERSION);
    } else {
        loaded = 1;       /* kept open for the process: NCCL has threads of its own */
        return;
    }
    memset(&tab, 0, sizeof tab);   /* (the library stays open: dynlib never closes) */
}

const hc_nccl *hwi_nccl_load(char *why, size_t len)
{
    pthread_once(&once, load);
    if (!loaded) snprintf(why, len, "%s", why_not);
    return loaded ? &tab : NULL;
}
