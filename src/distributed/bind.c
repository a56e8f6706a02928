/* Device binding, and the seed's problem 4 made impossible to miss: every rank reports its
 * host and device, and all ranks reach the same verdict, so a bad binding stops the whole
 * job with one clear sentence instead of a hang or a wrong-device error on a few ranks. */
#include "dist.h"
#include "../base/status.h"
#include "../runtime/device_ops.h"
#include "../runtime/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int32_t status;          /* the rank's own binding result */
    int32_t device;
    char backend[16];
    char msg[440];           /* its sentence when status != SUCCESS */
} dev_rec;

/* Local rank of rank r, from the host table. */
static int local_of(const hwi_dist *d, int r)
{
    int l = 0;
    for (int q = 0; q < r; q++) l += !strncmp(d->hosts[q], d->hosts[r], HWI_HOST_LEN);
    return l;
}

/* Some rank failed to bind: that rank keeps its own sentence, the others name it. */
static hwrt_status verdict_failed(const char *api, const hwi_dist *d, const dev_rec *recs)
{
    int first = -1, nfail = 0;
    for (int r = 0; r < d->size; r++)
        if (recs[r].status != HWRT_SUCCESS) { nfail++; if (first < 0) first = r; }
    const dev_rec *mine = &recs[d->rank];
    if (mine->status != HWRT_SUCCESS)
        return hwi_err((hwrt_status)mine->status, "%s", mine->msg);
    return hwi_err(HWRT_ERROR_INVALID_DEVICE, "%s: %d rank(s) could not bind a device, so every "
                   "rank stops here rather than hang in a collective; rank %d (host %s) said: %s",
                   api, nfail, first, d->hosts[first], recs[first].msg);
}

/* Two ranks of one host on one device: the first such group, with its ranks. */
static hwrt_status verdict_shared(const char *api, const hwi_dist *d, const dev_rec *recs)
{
    for (int r = 0; r < d->size; r++) {
        char ranks[256];
        int n = 0, o = snprintf(ranks, sizeof ranks, "%d", r);
        for (int q = r + 1; q < d->size; q++) {
            if (recs[q].device != recs[r].device || strcmp(recs[q].backend, recs[r].backend) ||
                strncmp(d->hosts[q], d->hosts[r], HWI_HOST_LEN))
                continue;
            if (o < (int)sizeof ranks - 16) o += snprintf(ranks + o, sizeof ranks - (size_t)o, ", %d", q);
            n++;
        }
        if (n)
            return hwi_err(HWRT_ERROR_INVALID_DEVICE, "%s: ranks %s on host %s all use %s device "
                           "%d, but each rank needs a device of its own (the seed's problem 4: "
                           "device_id hard-coded to one value). Fix: call "
                           "hwrt_dist_bind_device(\"%s\") on every rank (device = local rank), or "
                           "hwrt_set_device(\"%s\", hwrt_dist_local_rank())", api, ranks,
                           d->hosts[r], recs[r].backend, recs[r].device, recs[r].backend,
                           recs[r].backend);
    }
    return HWRT_SUCCESS;
}

/* On a multi-host job, device == global rank != local rank is set_device(rank) where
 * set_device(local_rank) belongs: right on the first node only. */
static hwrt_status verdict_global(const char *api, const hwi_dist *d, const dev_rec *recs)
{
    if (d->nhosts < 2)
        return HWRT_SUCCESS;
    for (int r = 0; r < d->size; r++) {
        int l = local_of(d, r);
        if (recs[r].device == r && l != r)
            return hwi_err(HWRT_ERROR_INVALID_DEVICE, "%s: rank %d on host %s uses %s device %d, "
                           "its GLOBAL rank, but it is local rank %d on that host: on a job of %d "
                           "hosts the device is the local rank (set_device(rank) is only right on "
                           "the first node). Fix: hwrt_dist_bind_device(\"%s\"), or "
                           "hwrt_set_device(\"%s\", hwrt_dist_local_rank())", api, r, d->hosts[r],
                           recs[r].backend, r, l, d->nhosts, recs[r].backend, recs[r].backend);
    }
    return HWRT_SUCCESS;
}

hwrt_status hwi_dist_exchange_devices(const char *api, const char *backend, int device,
                                      hwrt_status local_st, const char *local_msg)
{
    hwi_dist *d = &hwi_dist_g;
    if (d->size == 1) {
        if (local_st != HWRT_SUCCESS) return hwi_err(local_st, "%s", local_msg);
        d->devices_checked = 1;
        return HWRT_SUCCESS;
    }
    dev_rec me = {.status = local_st, .device = device};
    snprintf(me.backend, sizeof me.backend, "%s", backend ? backend : "");
    snprintf(me.msg, sizeof me.msg, "%s", local_st ? local_msg : "");
    dev_rec *recs = calloc((size_t)d->size, sizeof *recs);
    if (!recs)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "%s: host out of memory", api);
    hwrt_status st = d->eng->allgather(NULL, &me, recs, sizeof me, NULL);
    if (st == HWRT_SUCCESS) {
        int failed = 0;
        for (int r = 0; r < d->size; r++) failed |= recs[r].status != HWRT_SUCCESS;
        if (failed) st = verdict_failed(api, d, recs);
        else if ((st = verdict_shared(api, d, recs)) == HWRT_SUCCESS)
            st = verdict_global(api, d, recs);
    } else {
        hwi_err_prefix(st, "%s: exchanging devices", api);
    }
    free(recs);
    if (st == HWRT_SUCCESS) d->devices_checked = 1;
    return st;
}

/* The device this rank should own, or a sentence saying why there is none (naming the
 * backend "auto" stands for, and that backend's way to more devices). */
static hwrt_status pick_device(const char *backend, int *want)
{
    const hwi_dist *d = &hwi_dist_g;
    char host[HWI_HOST_LEN];
    hwi_dist_hostname(host, sizeof host);
    char bname[32];
    hwrt_status st = hwi_backend_resolve(backend, bname, sizeof bname);
    if (st != HWRT_SUCCESS)
        return hwi_err_prefix(st, "hwrt_dist_bind_device: rank %d on host %s", d->rank, host);
    st = hwi_backend_check(NULL, bname, 1);
    if (st != HWRT_SUCCESS)
        return hwi_err_prefix(st, "hwrt_dist_bind_device: rank %d on host %s", d->rank, host);
    int count = 0, dev_id = d->info.device_id;
    *want = dev_id >= 0 ? dev_id : d->local_rank;
    HWI_TRY(hwrt_device_count(bname, &count));
    if (count == 0) {
        hwrt_backend_desc bd;
        int known = hwrt_backend_info(bname, &bd);
        return hwi_err(HWRT_ERROR_NO_DEVICE, "hwrt_dist_bind_device: rank %d on host %s: backend "
                       "%s has no device here%s%s", d->rank, host, bname,
                       known == HWRT_SUCCESS && !bd.available ? ": " : "",
                       known == HWRT_SUCCESS && !bd.available ? bd.reason : "");
    }
    if (*want < count)
        return HWRT_SUCCESS;
    if (dev_id >= 0 && dev_id == d->rank && d->rank != d->local_rank)
        return hwi_err(HWRT_ERROR_INVALID_DEVICE, "hwrt_dist_bind_device: DEVICE_ID=%d is rank %d's "
                       "GLOBAL rank, but it is local rank %d of %d on host %s, where backend %s has "
                       "%d devices: the device is the local rank. Set DEVICE_ID=%d (or unset it)",
                       dev_id, d->rank, d->local_rank, d->local_size, host, bname, count,
                       d->local_rank);
    if (dev_id >= 0)
        return hwi_err(HWRT_ERROR_INVALID_DEVICE, "hwrt_dist_bind_device: DEVICE_ID=%d but backend "
                       "%s has only %d devices on host %s (0..%d); rank %d is local rank %d there: "
                       "set DEVICE_ID below %d", dev_id, bname, count, host, count - 1, d->rank,
                       d->local_rank, count);
    const hwrt_backend_ops *ops = hwi_backend_find(bname);
    const char *hint = ops ? hwi_backend_more_devices_hint(ops) : "";
    return hwi_err(HWRT_ERROR_INVALID_DEVICE, "hwrt_dist_bind_device: rank %d is local rank %d of "
                   "%d on host %s, but backend %s has only %d devices there (0..%d): start at most "
                   "%d ranks per host (mpirun --map-by ppr:%d:node) or give the host %d "
                   "devices%s%s%s",
                   d->rank, d->local_rank, d->local_size, host, bname, count, count - 1, count,
                   count, d->local_size, *hint ? " (" : "", hint, *hint ? ")" : "");
}

hwrt_status hwrt_dist_bind_device(const char *backend)
{
    HWI_TRY(hwrt_dist_init());
    int want = -1;
    hwrt_status st = pick_device(backend, &want);
    if (st == HWRT_SUCCESS) st = hwrt_set_device(backend, want);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", st ? hwrt_last_error() : "");
    return hwi_dist_exchange_devices("hwrt_dist_bind_device", hwrt_current_backend(), want, st,
                                     msg);
}

hwrt_status hwrt_dist_check_devices(void)
{
    HWI_TRY(hwrt_dist_init());
    int dev = 0;
    hwrt_device_props p;
    hwrt_status st = hwrt_get_device(&dev);
    if (st == HWRT_SUCCESS) st = hwrt_get_device_props(dev, &p);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", st ? hwrt_last_error() : "");
    return hwi_dist_exchange_devices("hwrt_dist_check_devices", st ? "" : p.backend, dev, st, msg);
}
