/* The run-time library loader (see dynlib.h). */
#include "dynlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *hwi_dynlib_open(const char *env, const char *const *names, const char **opened,
                      char *why, size_t why_len)
{
    return hwi_dynlib_open_flags(env, names, 0, opened, why, why_len);
}

void *hwi_dynlib_open_flags(const char *env, const char *const *names, unsigned flags,
                            const char **opened, char *why, size_t why_len)
{
    int mode = RTLD_NOW | (flags & HWI_DYNLIB_GLOBAL ? RTLD_GLOBAL : RTLD_LOCAL);
    const char *path = env ? getenv(env) : NULL;
    char tried[192] = "";
    const char *last = NULL;
    if (path && *path) {
        void *h = dlopen(path, mode);
        if (h) {
            if (opened) *opened = path;
            return h;
        }
        last = dlerror();
        /* the loader's message usually starts "<path>: ", which the reason has already */
        size_t plen = strlen(path);
        if (last && !strncmp(last, path, plen) && !strncmp(last + plen, ": ", 2))
            last += plen + 2;
        if (why && why_len)
            snprintf(why, why_len, "%s=%s could not be loaded: %s", env, path,
                     last ? last : "dlopen gave no message");
        return NULL;
    }
    size_t used = 0;
    int cut = 0;                      /* tried is full: it ends in "..." */
    for (size_t i = 0; names && names[i]; i++) {
        void *h = dlopen(names[i], mode);
        if (h) {
            if (opened) *opened = names[i];
            return h;
        }
        last = dlerror();
        if (cut) continue;
        /* whole names only, with room left for ", ..." */
        int w = snprintf(tried + used, sizeof tried - used, "%s%s", i ? ", " : "", names[i]);
        if (w > 0 && (size_t)w + 5 < sizeof tried - used) {
            used += (size_t)w;
        } else {
            used += (size_t)snprintf(tried + used, sizeof tried - used, "%s...", i ? ", " : "");
            cut = 1;
        }
    }
    if (why && why_len)
        snprintf(why, why_len, "none of %s could be loaded (dlopen: %s)",
                 used ? tried : "(no library named)", last ? last : "no message");
    return NULL;
}

const char *hwi_dynlib_resolve(void *h, const hwi_dynsym *syms, size_t n)
{
    const char *missing = NULL;
    for (size_t i = 0; i < n; i++) {
        void *p = dlsym(h, syms[i].name);
        if (!p && syms[i].alias) p = dlsym(h, syms[i].alias);
        *syms[i].slot = p;
        if (!p && !(syms[i].flags & HWI_DYNSYM_OPTIONAL) && !missing) missing = syms[i].name;
    }
    return missing;
}

void *hwi_dynlib_find(void *const *handles, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (!handles[i]) continue;
        void *p = dlsym(handles[i], name);
        if (p) return p;
    }
    return NULL;
}

hwrt_status hwi_dynlib_load_once(hwi_dynlib_once *o, hwi_dynlib_step open, hwi_dynlib_step init,
                                 const int *ndev, int *count, char *reason, size_t rlen)
{
    pthread_mutex_lock(&o->mu);
    if (!o->done) {
        o->status = open(o->reason, sizeof o->reason);
        if (o->status == HWRT_SUCCESS) o->status = init(o->reason, sizeof o->reason);
        o->done = 1;
    }
    hwrt_status st = o->status;
    *count = st == HWRT_SUCCESS ? *ndev : 0;
    if (reason && rlen) snprintf(reason, rlen, "%s", o->reason);
    pthread_mutex_unlock(&o->mu);
    return st;
}
