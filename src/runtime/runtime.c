/* Process runtime state. Backends are selected on first use, each thread's current
 * device is one device of one of them (as in CUDA and ACL, per thread), devices open
 * lazily into one table of process-wide ids (runtime.h). */
#include "runtime.h"
#include "device_ops.h"
#include "../base/config.h"
#include "../base/log.h"
#include "../base/status.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BACKENDS 8

/* A backend in use: its devices have ids base..base+count-1. */
typedef struct used_backend {
    const hwrt_backend_ops *ops;
    int count, base;
} used_backend;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static used_backend used[MAX_BACKENDS];   /* used[0]: the process default */
static _Atomic int nused;
static int nids;                          /* ids handed out so far */
_Atomic(hwi_device *) hwi_devices[HWI_MAX_DEVICES];
__thread int hwi_cur_dev __attribute__((tls_model("initial-exec")));
__thread unsigned hwi_cur_epoch __attribute__((tls_model("initial-exec")));
_Atomic unsigned hwi_dev_epoch = 1;    /* bumped by shutdown: threads fall back to id 0 */

typedef struct { int order; hwrt_status (*fn)(void); } teardown;
static teardown teardowns[32];
static int nteardowns;

const char *hwrt_version(void) { return HWRT_VERSION_STRING; }

void hwi_on_shutdown(int order, hwrt_status (*fn)(void))
{
    pthread_mutex_lock(&lock);
    int dup = 0;
    for (int i = 0; i < nteardowns; i++)
        dup |= teardowns[i].fn == fn;
    if (!dup && nteardowns < 32)
        teardowns[nteardowns++] = (teardown){order, fn};
    pthread_mutex_unlock(&lock);
}

/* Probe one backend by name; fills count or the reason. Caller holds lock or not. */
static hwrt_status probe(const char *name, const hwrt_backend_ops **ops, int *count,
                         char *reason, size_t rlen)
{
    *ops = hwi_backend_find(name);
    *count = 0;
    if (!*ops) {
        snprintf(reason, rlen, "the %s backend is not compiled into this hwrt build", name);
        return HWRT_ERROR_UNAVAILABLE;
    }
    if (hwi_backend_abi(*ops) != HWRT_BACKEND_ABI_VERSION) {
        snprintf(reason, rlen, "backend %s has ABI version %u, hwrt expects %u", name,
                 hwi_backend_abi(*ops), HWRT_BACKEND_ABI_VERSION);
        return HWRT_ERROR_UNAVAILABLE;
    }
    reason[0] = 0;
    hwrt_status st = hwi_backend_probe(*ops, count, reason, rlen);
    if (st == HWRT_SUCCESS && *count == 0 && !reason[0])
        snprintf(reason, rlen, "the %s driver loaded but reports no device", name);
    return st;
}

/* Resolve "auto"/NULL to a backend name. */
static hwrt_status pick_auto(char *out, size_t len)
{
    const char *env = getenv("HWRT_BACKEND");
    if (env && *env && strcmp(env, "auto")) {
        if (!hwi_backend_known(env))
            return hwi_err(HWRT_ERROR_INVALID_DEVICE,
                           "HWRT_BACKEND=\"%s\" names no backend; use sim, opencl, cuda, ascend "
                           "or auto", env);
        snprintf(out, len, "%s", env);
        hwi_log(HWI_LOG_INFO, "backend auto: HWRT_BACKEND=%s", env);
        return HWRT_SUCCESS;
    }
    char reasons[1024] = "";
    for (const char *const *n = hwi_backend_names(); *n; n++) {
        if (!hwi_backend_in_auto(*n))
            continue;
        const hwrt_backend_ops *ops;
        int count;
        char reason[256];
        if (probe(*n, &ops, &count, reason, sizeof reason) == HWRT_SUCCESS && count > 0) {
            snprintf(out, len, "%s", *n);
            hwi_log(HWI_LOG_INFO, "backend auto: picked %s%s%s", *n, reasons[0] ? "; skipped " : "",
                    reasons);
            return HWRT_SUCCESS;
        }
        hwi_log(HWI_LOG_DEBUG, "backend auto: %s skipped: %s", *n, reason);
        size_t l = strlen(reasons);
        snprintf(reasons + l, sizeof reasons - l, "%s%s: %s", l ? "; " : "", *n, reason);
    }
    return hwi_err(HWRT_ERROR_NO_DEVICE, "no backend has a device (%s)", reasons);
}

/* The backend that owns process-wide id `id`, or NULL. Reads `used` (set under lock,
 * entries never change until shutdown). */
static used_backend *backend_of(int id)
{
    int n = atomic_load(&nused);
    for (int i = 0; i < n; i++)
        if (id >= used[i].base && id < used[i].base + used[i].count)
            return &used[i];
    return NULL;
}

/* The calling thread's current id (id 0, the default backend's device 0, until set). */
static int current_id(void)
{
    if (hwi_cur_epoch != atomic_load(&hwi_dev_epoch)) {
        hwi_cur_epoch = atomic_load(&hwi_dev_epoch);
        hwi_cur_dev = 0;
    }
    return hwi_cur_dev;
}

/* The calling thread's backend (NULL before any was selected). */
static used_backend *thread_backend(void)
{
    used_backend *b = backend_of(current_id());
    return b ? b : atomic_load(&nused) ? &used[0] : NULL;
}

static hwrt_status bad_ordinal(const used_backend *b, int ordinal)
{
    const char *hint = hwi_backend_more_devices_hint(b->ops);
    return hwi_err(HWRT_ERROR_INVALID_DEVICE,
                   "device %d does not exist: backend %s has %d device(s), valid ids are "
                   "0..%d%s%s%s", ordinal, hwi_backend_name(b->ops), b->count, b->count - 1,
                   *hint ? " (" : "", hint, *hint ? ")" : "");
}

/* Select a backend (add it to those in use), NULL/"auto": the thread's backend, or the
 * "auto" choice when none is in use. A backend not in use yet is added only when
 * `ordinal` (-1: any) is one of its devices, so a bad call changes nothing. Caller
 * holds lock. */
static hwrt_status select_locked(const char *name, int ordinal, used_backend **out)
{
    char buf[32];
    if (!name || !strcmp(name, "auto")) {
        used_backend *b = thread_backend();
        if (b) { *out = b; return HWRT_SUCCESS; }
        HWI_TRY(pick_auto(buf, sizeof buf));
        name = buf;
    }
    HWI_TRY(hwi_backend_check(NULL, name, 1));
    int n = atomic_load(&nused);
    for (int i = 0; i < n; i++)
        if (!strcmp(hwi_backend_name(used[i].ops), name)) { *out = &used[i]; return HWRT_SUCCESS; }
    const hwrt_backend_ops *ops;
    int count;
    char reason[256];
    hwrt_status st = probe(name, &ops, &count, reason, sizeof reason);
    if (st != HWRT_SUCCESS)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "backend %s is unavailable: %s", name, reason);
    if (count == 0)
        return hwi_err(HWRT_ERROR_NO_DEVICE, "backend %s has no device: %s", name, reason);
    if (n == MAX_BACKENDS || nids == HWI_MAX_DEVICES)   /* before the clamp: never "0 devices" */
        return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "backend %s: this process already has %d "
                       "devices open over %d backends, hwrt's limit; call hwrt_shutdown() first",
                       name, nids, n);
    if (count > HWI_MAX_DEVICES - nids) count = HWI_MAX_DEVICES - nids;
    if (ordinal >= 0 && ordinal >= count)
        return bad_ordinal(&(used_backend){ops, count, 0}, ordinal);
    used[n] = (used_backend){ops, count, nids};
    nids += count;
    atomic_store(&nused, n + 1);
    hwi_log(HWI_LOG_INFO, "backend %s selected, %d device(s), ids %d..%d", name, count,
            used[n].base, used[n].base + count - 1);
    *out = &used[n];
    return HWRT_SUCCESS;
}

int hwi_runtime_active(void) { return atomic_load(&nused) > 0; }


hwi_device *hwi_device_if_open(int id)
{
    if (id < 0 || id >= HWI_MAX_DEVICES)
        return NULL;
    return atomic_load_explicit(&hwi_devices[id], memory_order_acquire);
}

hwrt_status hwi_device_get(int id, hwi_device **out)
{
    hwi_device *d = hwi_device_if_open(id);
    if (d) { *out = d; return HWRT_SUCCESS; }
    pthread_mutex_lock(&lock);
    used_backend *b = NULL;
    hwrt_status st = HWRT_SUCCESS;
    if (!atomic_load(&nused) && id == 0)
        st = select_locked(NULL, -1, &b);          /* first use: "auto" */
    b = st == HWRT_SUCCESS ? backend_of(id) : NULL;
    if (st == HWRT_SUCCESS && !b)
        st = hwi_err(HWRT_ERROR_INVALID_DEVICE, "device id %d does not exist in this process "
                     "(%d device(s) over the backends in use)", id, nids);
    d = st == HWRT_SUCCESS ? atomic_load(&hwi_devices[id]) : NULL;
    if (st == HWRT_SUCCESS && !d) {
        st = hwi_device_open(b->ops, id - b->base, id, &d);
        if (st == HWRT_SUCCESS)
            atomic_store_explicit(&hwi_devices[id], d, memory_order_release);
    }
    pthread_mutex_unlock(&lock);
    if (st == HWRT_SUCCESS) *out = d;
    return st;
}

/* The calling thread's backend ("auto" when none is in use) and a check that ordinal is
 * one of its devices. */
static hwrt_status thread_ordinal(int ordinal, used_backend **out)
{
    pthread_mutex_lock(&lock);
    hwrt_status st = select_locked(NULL, -1, out);
    pthread_mutex_unlock(&lock);
    HWI_TRY(st);
    if (ordinal < 0 || ordinal >= (*out)->count)
        return bad_ordinal(*out, ordinal);
    return HWRT_SUCCESS;
}

hwrt_status hwi_device_public(int ordinal, hwi_device **out)
{
    used_backend *b = NULL;
    HWI_TRY(thread_ordinal(ordinal, &b));
    return hwi_device_get(b->base + ordinal, out);
}

int hwi_device_ordinal(int id)
{
    used_backend *b = backend_of(id);
    return b ? id - b->base : id;
}

hwi_dev_label hwi_device_label(int id)
{
    hwi_dev_label l;
    used_backend *b = backend_of(id);
    if (b && atomic_load(&nused) > 1)
        snprintf(l.s, sizeof l.s, "%s device %d", hwi_backend_name(b->ops), id - b->base);
    else
        snprintf(l.s, sizeof l.s, "device %d", b ? id - b->base : id);
    return l;
}

hwrt_status hwi_device_current_slow(hwi_device **out) { return hwi_device_get(current_id(), out); }

hwrt_status hwrt_set_device(const char *backend, int device_id)
{
    pthread_mutex_lock(&lock);
    used_backend *b = NULL;
    hwrt_status st = select_locked(backend, device_id, &b);
    pthread_mutex_unlock(&lock);
    HWI_TRY(st);
    if (device_id < 0 || device_id >= b->count)
        return bad_ordinal(b, device_id);
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_get(b->base + device_id, &d));
    current_id();
    hwi_cur_dev = d->id;
    return HWRT_SUCCESS;
}

hwrt_status hwrt_get_device(int *device_id)
{
    if (!device_id)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_get_device: device_id is NULL");
    int id = current_id();
    used_backend *b = backend_of(id);
    *device_id = b ? id - b->base : 0;
    return HWRT_SUCCESS;
}

const char *hwrt_current_backend(void)
{
    used_backend *b = thread_backend();
    return b ? hwi_backend_name(b->ops) : "";
}

hwrt_status hwi_backend_resolve(const char *name, char *out, size_t len)
{
    if (name && strcmp(name, "auto")) {            /* "" is a name (unknown), not auto */
        snprintf(out, len, "%s", name);
        return HWRT_SUCCESS;
    }
    used_backend *cur = thread_backend();
    if (cur) {
        snprintf(out, len, "%s", hwi_backend_name(cur->ops));
        return HWRT_SUCCESS;
    }
    return pick_auto(out, len);
}

hwrt_status hwrt_backend_info(const char *backend, hwrt_backend_desc *out)
{
    if (!out)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_backend_info: out is NULL");
    HWI_TRY(hwi_backend_check("hwrt_backend_info", backend, 0));
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", backend);
    const hwrt_backend_ops *ops;
    hwrt_status st = probe(backend, &ops, &out->device_count, out->reason, sizeof out->reason);
    out->available = st == HWRT_SUCCESS;
    if (!out->available)
        out->device_count = 0;
    return HWRT_SUCCESS;
}

hwrt_status hwrt_device_count(const char *backend, int *count)
{
    if (!count)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_device_count: count is NULL");
    used_backend *cur = thread_backend();
    if ((!backend || !strcmp(backend, "auto")) && cur) {
        *count = cur->count;
        return HWRT_SUCCESS;
    }
    char name[32];
    if (!backend || !strcmp(backend, "auto")) {
        if (pick_auto(name, sizeof name) != HWRT_SUCCESS) { *count = 0; return HWRT_SUCCESS; }
        backend = name;
    }
    HWI_TRY(hwi_backend_check("hwrt_device_count", backend, 1));
    hwrt_backend_desc info;
    HWI_TRY(hwrt_backend_info(backend, &info));
    *count = info.device_count;
    return HWRT_SUCCESS;
}

hwrt_status hwrt_get_device_props(int device_id, hwrt_device_props *out)
{
    if (!out)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_get_device_props: out is NULL");
    used_backend *b = NULL;
    HWI_TRY(thread_ordinal(device_id, &b));
    return hwi_backend_device_props(b->ops, device_id, out);
}

/* Run the hooks with order in [lo, hi); keeps the first failure's sentence. */
static void run_teardowns(const teardown *t, int n, int lo, int hi, hwrt_status *first,
                          char *msg, size_t len)
{
    for (int i = 0; i < n; i++) {
        if (t[i].order < lo || t[i].order >= hi) continue;
        hwrt_status st = t[i].fn();
        if (st != HWRT_SUCCESS && *first == HWRT_SUCCESS) {
            *first = st;
            snprintf(msg, len, "%s", hwrt_last_error());
        }
    }
}

hwrt_status hwrt_shutdown(void)
{
    pthread_mutex_lock(&lock);
    teardown t[32];
    int n = nteardowns;
    memcpy(t, teardowns, sizeof t);
    pthread_mutex_unlock(&lock);
    /* stable sort by order: teardowns registered by lower layers run after upper ones */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && t[j - 1].order > t[j].order; j--) {
            teardown x = t[j]; t[j] = t[j - 1]; t[j - 1] = x;
        }
    hwrt_status first = HWRT_SUCCESS;
    char first_msg[1024] = "";
    run_teardowns(t, n, -1000000, HWI_SHUTDOWN_DEVICES, &first, first_msg, sizeof first_msg);
    /* each device releases what it owns (upper layers' parts first) */
    for (int i = 0; i < HWI_MAX_DEVICES; i++) {
        hwi_device *d = hwi_device_if_open(i);
        hwrt_status st = d ? hwi_device_close_parts(d) : HWRT_SUCCESS;
        if (st != HWRT_SUCCESS && first == HWRT_SUCCESS) {
            first = st;
            snprintf(first_msg, sizeof first_msg, "%s", hwrt_last_error());
        }
    }
    run_teardowns(t, n, HWI_SHUTDOWN_DEVICES, 1000000, &first, first_msg, sizeof first_msg);
    pthread_mutex_lock(&lock);
    for (int i = 0; i < HWI_MAX_DEVICES; i++) {
        hwi_device *d = atomic_exchange(&hwi_devices[i], NULL);
        if (d) hwi_device_free(d);
    }
    atomic_store(&nused, 0);
    memset(used, 0, sizeof used);
    nids = 0;
    atomic_fetch_add(&hwi_dev_epoch, 1);
    pthread_mutex_unlock(&lock);
    if (first != HWRT_SUCCESS)
        return hwi_err(first, "hwrt_shutdown: %s", first_msg);
    return HWRT_SUCCESS;
}
