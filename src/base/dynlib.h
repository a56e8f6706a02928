/* Vendor libraries opened at run time: the one loader every backend, monitor and
 * collective engine uses (libhwrt links no vendor library).
 *
 * Libraries are never closed: drivers keep threads that outlive a dlclose. Entry points
 * are described by a table of {name, slot, flags}, usually expanded from the caller's
 * X-macro list, so a missing required symbol is named in the reason and an optional one
 * (a newer entry point) just stays NULL. */
#ifndef HWI_DYNLIB_H
#define HWI_DYNLIB_H

#include "hwrt.h"

#include <pthread.h>
#include <stddef.h>

#define HWI_DYNSYM_OPTIONAL 1u   /* may be absent: the slot stays NULL */

typedef struct hwi_dynsym {
    const char *name;     /* the exported symbol */
    void **slot;          /* where its address goes */
    unsigned flags;       /* HWI_DYNSYM_* */
    const char *alias;    /* tried when name is absent (an older unversioned name), or NULL */
} hwi_dynsym;

/* Opens, RTLD_NOW | RTLD_LOCAL, the library the environment variable env names when it is
 * set and non-empty (env may be NULL), else the first of the NULL-terminated names that
 * loads. On failure returns NULL and writes into why (why_len bytes) the setting or which
 * names were tried, and the loader's last message (why may be NULL). *opened (may be
 * NULL) gets the name opened. */
void *hwi_dynlib_open(const char *env, const char *const *names, const char **opened,
                      char *why, size_t why_len);

/* hwi_dynlib_open with HWI_DYNLIB_* flags (0: as hwi_dynlib_open). */
#define HWI_DYNLIB_GLOBAL 1u     /* RTLD_GLOBAL: the library's symbols serve libraries it
                                    loads later (Open MPI's components need libmpi's) */
void *hwi_dynlib_open_flags(const char *env, const char *const *names, unsigned flags,
                            const char **opened, char *why, size_t why_len);

/* Fills every slot of syms[0..n) from h. Returns NULL when every required symbol was
 * found, else the name of the first required one missing (the rest are still tried, so
 * the optional ones are filled either way). */
const char *hwi_dynlib_resolve(void *h, const hwi_dynsym *syms, size_t n);

/* The address of name in the first of handles[0..n) (NULL entries skipped) that
 * exports it, or NULL: one op looked up across split vendor libraries. */
void *hwi_dynlib_find(void *const *handles, size_t n, const char *name);

/* A vendor runtime brought up once per process: open(reason) loads the library, then
 * init(reason) initialises it and sets the device count *ndev; every call, the first
 * included, gets that first attempt's status, reason (reason/rlen, may be NULL/0) and
 * count (0 unless it succeeded). The backends' probe goes through it. */
typedef hwrt_status (*hwi_dynlib_step)(char *reason, size_t rlen);
typedef struct hwi_dynlib_once {
    pthread_mutex_t mu;
    int done;
    hwrt_status status;
    char reason[512];
} hwi_dynlib_once;
#define HWI_DYNLIB_ONCE_INIT {PTHREAD_MUTEX_INITIALIZER, 0, HWRT_SUCCESS, ""}
hwrt_status hwi_dynlib_load_once(hwi_dynlib_once *o, hwi_dynlib_step open, hwi_dynlib_step init,
                                 const int *ndev, int *count, char *reason, size_t rlen);

#endif
