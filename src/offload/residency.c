/* Residency manager: evictions through the D2H engine to the host tier (pinned when
 * enable_pinned_mem) or to the disk tier's file, fetches through the H2D engine,
 * stream-ordered so compute waits on the device and not on the host.
 *
 * The rule every transition follows: a tensor's location and clean state change only
 * once the copy that justifies them has completed successfully. A synchronous copy (an
 * eviction the host waits for, a disk fetch) is judged by its stream's synchronization;
 * an asynchronous one (a host-tier fetch, a stream-ordered write-back) is an hwi_xfer
 * whose outcome hwi_res_settle applies when its `done` event is reached. Until then the
 * previous copy stays authoritative.
 *
 * The manager's parts (declared in res_internal.h): res_engine.c (its streams and
 * events), res_uses.c (the last work queued on a tensor; idle), res_xfer.c (copies
 * whose outcome is learned on the device), res_settle.c (applying those outcomes),
 * res_evict.c (evictions the host waits for), res_handover.c (stream-ordered
 * eviction), res_alloc.c (making room), res_fetch.c (fetches). This file: the manager,
 * its time and naming helpers, and the budget. */
#include "res_internal.h"
#include "../base/config.h"
#include "../base/status.h"
#include "../mem/pool_headroom.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

hwi_offload_mgr hwi_offload = {.mu = PTHREAD_MUTEX_INITIALIZER};

uint64_t hwi_res_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double hwi_res_ms_since(uint64_t t0) { return (double)(hwi_res_now_ns() - t0) / 1e6; }

const char *hwi_res_describe(const hwi_tensor *t, char *buf, size_t len)
{
    char shape[96] = "", size[32];
    for (int i = 0; i < t->ndim; i++)
        snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld", i ? "," : "",
                 (long long)t->shape[i]);
    snprintf(buf, len, "tensor %p (%s[%s], %s)", (void *)t->handle, hwrt_dtype_name(t->dtype),
             shape, hwi_fmt_bytes(size, sizeof size, t->nbytes));
    return buf;
}

/* ---- budget ---- */

/* The device commits memory in pages and the pool keeps segments: blocks of 1-4 MiB
 * next to activations in segments of their own can leave it unable to place a block
 * that the budget still has room for, and then the allocation's last resort
 * synchronizes the whole device (the host waits for all queued work) and releases the
 * cache before it fails. So room is made until the pool itself can place the block. */
int hwi_res_fits(int device, size_t bytes)
{
    hwrt_memory_info m;
    hwi_device *d = hwi_device_if_open(device);
    if (!d || hwrt_get_memory_info(device, &m) != HWRT_SUCCESS) return 0;
    return m.allocated + bytes <= hwi_res_budget(device) &&
           hwi_pool_headroom(d, NULL, bytes) >= bytes;
}

size_t hwi_res_budget(int device)
{
    size_t cap = (size_t)hwi_cfg_int(HWI_CFG_MAX_DEVICE_MEMORY);
    hwrt_memory_info m;
    if (hwrt_get_memory_info(device, &m) != HWRT_SUCCESS)
        return cap;
    size_t dev = m.total - m.overhead;
    return cap && cap < dev ? cap : dev;
}

hwrt_status hwi_res_tier_oom(int device, size_t bytes, const char *api)
{
    char a[32], b[32], c[32], d[32], e[32], f[32], g[32];
    hwrt_memory_info m = {0};
    hwrt_get_memory_info(device, &m);
    MGR.stats.device_budget = hwi_res_budget(device);
    return hwi_err(HWRT_ERROR_OUT_OF_MEMORY,
                   "%s: cannot place %s on device %d: every tier is full — device %s allocated of "
                   "a %s budget (no idle offloadable tensor left to evict), host tier %s of "
                   "offload_cpu_size %s, disk tier %s of offload_disk_size %s; raise "
                   "offload_cpu_size or offload_disk_size, mark more tensors offloadable, or "
                   "lower the batch size", api, hwi_fmt_bytes(a, sizeof a, bytes), device,
                   hwi_fmt_bytes(b, sizeof b, m.allocated),
                   hwi_fmt_bytes(c, sizeof c, hwi_res_budget(device)),
                   hwi_fmt_bytes(d, sizeof d, MGR.host_used),
                   hwi_fmt_bytes(e, sizeof e, (size_t)hwi_cfg_int(HWI_CFG_OFFLOAD_CPU_SIZE)),
                   hwi_fmt_bytes(f, sizeof f, MGR.disk_used),
                   hwi_fmt_bytes(g, sizeof g, (size_t)hwi_cfg_int(HWI_CFG_OFFLOAD_DISK_SIZE)));
}
