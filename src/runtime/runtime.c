/* Process runtime state. One backend per process (until hwrt_shutdown), devices opened
 * lazily, the current device per thread as in CUDA and ACL. */
#include "runtime.h"
#include "../base/config.h"
#include "../base/log.h"
#include "../base/status.h"
#include "../exec/stream.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(const hwrt_backend_ops *) cur_ops;
static int dev_count;
_Atomic(hwi_device *) hwi_devices[HWI_MAX_DEVICES];
__thread int hwi_cur_dev __attribute__((tls_model("initial-exec")));
__thread unsigned hwi_cur_epoch __attribute__((tls_model("initial-exec")));
_Atomic unsigned hwi_dev_epoch = 1;    /* bumped by shutdown: threads fall back to dev 0 */

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
    if ((*ops)->abi_version != HWRT_BACKEND_ABI_VERSION) {
        snprintf(reason, rlen, "backend %s has ABI version %u, hwrt expects %u", name,
                 (*ops)->abi_version, HWRT_BACKEND_ABI_VERSION);
        return HWRT_ERROR_UNAVAILABLE;
    }
    reason[0] = 0;
    hwrt_status st = (*ops)->probe(count, reason, rlen);
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

/* Select a backend. Caller holds lock. */
static hwrt_status select_locked(const char *name)
{
    char buf[32];
    if (!name || !strcmp(name, "auto")) {
        const hwrt_backend_ops *cur = atomic_load(&cur_ops);
        if (cur)
            return HWRT_SUCCESS;
        HWI_TRY(pick_auto(buf, sizeof buf));
        name = buf;
    }
    if (!hwi_backend_known(name))
        return hwi_err(HWRT_ERROR_INVALID_DEVICE,
                       "unknown backend \"%s\"; use \"sim\", \"opencl\", \"cuda\", \"ascend\" or "
                       "\"auto\"", name);
    const hwrt_backend_ops *cur = atomic_load(&cur_ops);
    if (cur) {
        if (!strcmp(cur->name, name))
            return HWRT_SUCCESS;
        return hwi_err(HWRT_ERROR_NOT_PERMITTED,
                       "this process already uses the %s backend; it cannot switch to %s while "
                       "resources are live: call hwrt_shutdown() first", cur->name, name);
    }
    const hwrt_backend_ops *ops;
    int count;
    char reason[256];
    hwrt_status st = probe(name, &ops, &count, reason, sizeof reason);
    if (st != HWRT_SUCCESS)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "backend %s is unavailable: %s", name, reason);
    if (count == 0)
        return hwi_err(HWRT_ERROR_NO_DEVICE, "backend %s has no device: %s", name, reason);
    dev_count = count < HWI_MAX_DEVICES ? count : HWI_MAX_DEVICES;
    atomic_store(&cur_ops, ops);
    hwi_log(HWI_LOG_INFO, "backend %s selected, %d device(s)", name, dev_count);
    return HWRT_SUCCESS;
}

hwrt_status hwi_runtime_ops(const hwrt_backend_ops **ops)
{
    const hwrt_backend_ops *o = atomic_load(&cur_ops);
    if (!o) {
        pthread_mutex_lock(&lock);
        hwrt_status st = select_locked(NULL);
        pthread_mutex_unlock(&lock);
        if (st != HWRT_SUCCESS)
            return st;
        o = atomic_load(&cur_ops);
    }
    *ops = o;
    return HWRT_SUCCESS;
}

const hwrt_backend_ops *hwi_ops_if_selected(void) { return atomic_load(&cur_ops); }

int hwi_device_count_selected(void) { return atomic_load(&cur_ops) ? dev_count : 0; }

hwi_device *hwi_device_if_open(int ordinal)
{
    if (ordinal < 0 || ordinal >= HWI_MAX_DEVICES)
        return NULL;
    return atomic_load_explicit(&hwi_devices[ordinal], memory_order_acquire);
}

static hwrt_status bad_ordinal(int ordinal)
{
    const hwrt_backend_ops *o = atomic_load(&cur_ops);
    return hwi_err(HWRT_ERROR_INVALID_DEVICE,
                   "device %d does not exist: backend %s has %d device(s), valid ids are 0..%d%s",
                   ordinal, o ? o->name : "?", dev_count, dev_count - 1,
                   o && !strcmp(o->name, "sim") ? " (set HWRT_SIM_DEVICES for more simulated "
                                                  "devices)" : "");
}

hwrt_status hwi_device_get(int ordinal, hwi_device **out)
{
    hwi_device *d = hwi_device_if_open(ordinal);
    if (d) { *out = d; return HWRT_SUCCESS; }
    const hwrt_backend_ops *ops;
    HWI_TRY(hwi_runtime_ops(&ops));
    if (ordinal < 0 || ordinal >= dev_count)
        return bad_ordinal(ordinal);
    pthread_mutex_lock(&lock);
    d = atomic_load(&hwi_devices[ordinal]);
    hwrt_status st = HWRT_SUCCESS;
    if (!d) {
        d = calloc(1, sizeof *d);
        if (!d) {
            st = hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "opening device %d: host out of memory",
                         ordinal);
        } else {
            d->ordinal = ordinal;
            d->ops = ops;
            st = ops->device_props(ordinal, &d->props);
            if (st == HWRT_SUCCESS)
                st = ops->device_open(ordinal, &d->bdev);
            if (st == HWRT_SUCCESS && hwi_log_level() >= HWI_LOG_INFO) {
                char mem[32];
                hwi_log(HWI_LOG_INFO, "device %d opened: %s (%s%s), %s of memory, %d compute "
                        "unit(s), %d copy engine(s)", ordinal, d->props.name, ops->name,
                        d->props.simulated ? ", simulated" : "",
                        hwi_fmt_bytes(mem, sizeof mem, d->props.total_memory),
                        d->props.compute_units, d->props.copy_engines);
            }
            if (st == HWRT_SUCCESS)
                atomic_store_explicit(&hwi_devices[ordinal], d, memory_order_release);
            else {
                free(d);
                d = NULL;
            }
        }
    }
    pthread_mutex_unlock(&lock);
    if (st == HWRT_SUCCESS) *out = d;
    return st;
}

static int current_ordinal(void)
{
    if (hwi_cur_epoch != atomic_load(&hwi_dev_epoch)) {
        hwi_cur_epoch = atomic_load(&hwi_dev_epoch);
        hwi_cur_dev = 0;
    }
    return hwi_cur_dev;
}

hwrt_status hwi_device_current_slow(hwi_device **out) { return hwi_device_get(current_ordinal(), out); }

hwrt_status hwrt_set_device(const char *backend, int device_id)
{
    pthread_mutex_lock(&lock);
    hwrt_status st = select_locked(backend);
    pthread_mutex_unlock(&lock);
    HWI_TRY(st);
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_get(device_id, &d));
    current_ordinal();
    hwi_cur_dev = device_id;
    return HWRT_SUCCESS;
}

hwrt_status hwrt_get_device(int *device_id)
{
    if (!device_id)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_get_device: device_id is NULL");
    *device_id = current_ordinal();
    return HWRT_SUCCESS;
}

const char *hwrt_current_backend(void)
{
    const hwrt_backend_ops *o = atomic_load(&cur_ops);
    return o ? o->name : "";
}

hwrt_status hwrt_backend_info(const char *backend, hwrt_backend_desc *out)
{
    if (!out)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_backend_info: out is NULL");
    if (!backend || !hwi_backend_known(backend))
        return hwi_err(HWRT_ERROR_INVALID_DEVICE,
                       "hwrt_backend_info: unknown backend \"%s\"; use sim, opencl, cuda or ascend",
                       backend ? backend : "(null)");
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
    const hwrt_backend_ops *cur = atomic_load(&cur_ops);
    if ((!backend || !strcmp(backend, "auto")) && cur) {
        *count = dev_count;
        return HWRT_SUCCESS;
    }
    char name[32];
    if (!backend || !strcmp(backend, "auto")) {
        if (pick_auto(name, sizeof name) != HWRT_SUCCESS) { *count = 0; return HWRT_SUCCESS; }
        backend = name;
    }
    hwrt_backend_desc info;
    HWI_TRY(hwrt_backend_info(backend, &info));
    *count = info.device_count;
    return HWRT_SUCCESS;
}

hwrt_status hwrt_get_device_props(int device_id, hwrt_device_props *out)
{
    if (!out)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_get_device_props: out is NULL");
    const hwrt_backend_ops *ops;
    HWI_TRY(hwi_runtime_ops(&ops));
    if (device_id < 0 || device_id >= dev_count)
        return bad_ordinal(device_id);
    return ops->device_props(device_id, out);
}

hwrt_status hwrt_device_reset(int device_id)
{
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_get(device_id, &d));
    const hwrt_backend_ops *ops = atomic_load(&cur_ops);
    if (!ops->device_reset)
        return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "backend %s cannot reset device %d", ops->name,
                       device_id);
    /* as documented: synchronize first, so work queued before the reset is settled
     * (skipped by the fault) instead of racing with it; its fault status is expected */
    hwrt_status st = hwi_streams_sync_device(device_id, "hwrt_device_reset");
    if (st == HWRT_ERROR_NOT_PERMITTED)
        return st;
    return ops->device_reset(d->bdev);
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
    for (int i = 0; i < n; i++) {
        hwrt_status st = t[i].fn();
        if (st != HWRT_SUCCESS && first == HWRT_SUCCESS) {
            first = st;
            snprintf(first_msg, sizeof first_msg, "%s", hwrt_last_error());
        }
    }
    pthread_mutex_lock(&lock);
    const hwrt_backend_ops *ops = atomic_load(&cur_ops);
    for (int i = 0; i < HWI_MAX_DEVICES; i++) {
        hwi_device *d = atomic_exchange(&hwi_devices[i], NULL);
        if (d) {
            ops->device_close(d->bdev);
            free(d);
        }
    }
    atomic_store(&cur_ops, NULL);
    dev_count = 0;
    atomic_fetch_add(&hwi_dev_epoch, 1);
    pthread_mutex_unlock(&lock);
    if (first != HWRT_SUCCESS)
        return hwi_err(first, "hwrt_shutdown: %s", first_msg);
    return HWRT_SUCCESS;
}
