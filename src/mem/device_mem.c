/* Public device-memory calls that need no stream: hwrt_malloc, hwrt_free, tags and the
 * memory figures (info, stats, summary table, JSON snapshot). */
#include "pool.h"
#include "host_mem.h"
#include "../runtime/device_ops.h"
#include "../base/out_file.h"
#include "../base/status.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

hwrt_status hwrt_malloc(void **dptr, size_t bytes)
{
    if (!dptr)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_malloc: dptr is NULL");
    *dptr = NULL;
    if (bytes == 0)
        return HWRT_SUCCESS;
    if (bytes > ((size_t)1 << 62))
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT,
                       "hwrt_malloc: %zu bytes is not a valid size (overflowed computation?)", bytes);
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_current(&d));
    hwrt_status st = hwi_pool_alloc(d, bytes, NULL, dptr);
    return st == HWRT_SUCCESS ? st : hwi_err_prefix(st, "hwrt_malloc");
}

hwrt_status hwrt_free(void *dptr)
{
    if (!dptr)
        return HWRT_SUCCESS;
    return hwi_pool_free_user(dptr, "hwrt_free");
}

hwrt_status hwrt_set_alloc_tag(void *dptr, const char *tag)
{
    return hwi_pool_set_tag(dptr, tag);
}

hwrt_status hwrt_get_memory_info(int device_id, hwrt_memory_info *out)
{
    if (!out)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_get_memory_info: out is NULL");
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_public(device_id, &d));
    memset(out, 0, sizeof *out);
    size_t free_b, total, overhead;
    HWI_TRY(hwi_dev_mem_info(d, &free_b, &total, &overhead));
    out->total = total;
    out->free = free_b;
    out->used = total - free_b;
    out->overhead = overhead;
    hwi_pool_fill_info(d, out);
    return HWRT_SUCCESS;
}

hwrt_status hwrt_memory_stats(int device_id, hwrt_mem_stats *out)
{
    if (!out)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_memory_stats: out is NULL");
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_public(device_id, &d));
    hwi_pool_stats(d, out);
    return HWRT_SUCCESS;
}

hwrt_status hwrt_reset_peak_memory_stats(int device_id)
{
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_public(device_id, &d));
    hwi_pool_reset_peaks(d);
    return HWRT_SUCCESS;
}

hwrt_status hwrt_empty_cache(int device_id)
{
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_public(device_id, &d));
    return hwi_pool_empty_cache(d);
}

/* ---- the summary table ---- */

typedef struct { char *buf; size_t len, at; } out_buf;

static void put(out_buf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out_buf *o, const char *fmt, ...)
{
    if (o->at >= o->len) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->at, o->len - o->at, fmt, ap);
    va_end(ap);
    if (n > 0) o->at += (size_t)n;
}

static void row_bytes(out_buf *o, const char *name, const hwrt_stat *s)
{
    char c[32], p[32], a[32], f[32];
    put(o, "| %-24s | %12s | %12s | %12s | %12s |\n", name,
        hwi_fmt_bytes(c, sizeof c, (uint64_t)s->current), hwi_fmt_bytes(p, sizeof p, (uint64_t)s->peak),
        hwi_fmt_bytes(a, sizeof a, (uint64_t)s->allocated), hwi_fmt_bytes(f, sizeof f, (uint64_t)s->freed));
}

static void row_count(out_buf *o, const char *name, const hwrt_stat *s)
{
    put(o, "| %-24s | %12lld | %12lld | %12lld | %12lld |\n", name, (long long)s->current,
        (long long)s->peak, (long long)s->allocated, (long long)s->freed);
}

hwrt_status hwrt_memory_summary(int device_id, char *buf, size_t len)
{
    if (!buf || !len)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_memory_summary: buf is NULL or len is 0");
    buf[0] = 0;
    hwrt_mem_stats s;
    hwrt_memory_info mi;
    HWI_TRY(hwrt_memory_stats(device_id, &s));
    HWI_TRY(hwrt_get_memory_info(device_id, &mi));
    hwrt_device_props props;
    HWI_TRY(hwrt_get_device_props(device_id, &props));
    out_buf o = {buf, len, 0};
    const char *rule = "|==========================|==============|==============|==============|==============|\n";
    const char *thin = "|--------------------------|--------------|--------------|--------------|--------------|\n";
    put(&o, "%s| hwrt memory summary, device %d (%s%s)\n%s", rule, device_id, props.backend,
        props.simulated ? ", simulated figures" : "", rule);
    put(&o, "| %-24s | %12s | %12s | %12s | %12s |\n%s", "Metric", "Cur Usage", "Peak Usage",
        "Tot Alloc", "Tot Freed", thin);
    row_bytes(&o, "Allocated memory", &s.allocated_bytes);
    row_bytes(&o, "Active memory", &s.active_bytes);
    row_bytes(&o, "Requested memory", &s.requested_bytes);
    row_bytes(&o, "Reserved memory", &s.reserved_bytes);
    row_bytes(&o, "Non-releasable memory", &s.inactive_split_bytes);
    put(&o, "%s", thin);
    row_count(&o, "Allocations", &s.allocation);
    row_count(&o, "Active allocs", &s.active);
    row_count(&o, "Segments", &s.segment);
    row_count(&o, "Non-releasable allocs", &s.inactive_split);
    put(&o, "%s", thin);
    char t[32], f[32], u[32], ov[32], ms[32], hc[32];
    put(&o, "| Device total %s, free %s, used %s (context overhead %s); pinned host cache %s\n",
        hwi_fmt_bytes(t, sizeof t, mi.total), hwi_fmt_bytes(f, sizeof f, mi.free),
        hwi_fmt_bytes(u, sizeof u, mi.used), hwi_fmt_bytes(ov, sizeof ov, mi.overhead),
        hwi_fmt_bytes(hc, sizeof hc, hwi_host_cached_bytes()));
    put(&o, "| OOMs %lld, alloc retries %lld, device allocs %lld, device frees %lld, "
        "device syncs %lld, max_split_size %s\n%s",
        (long long)s.num_ooms, (long long)s.num_alloc_retries, (long long)s.num_device_alloc,
        (long long)s.num_device_free, (long long)s.num_sync_all_streams,
        s.max_split_size < 0 ? "unlimited" : hwi_fmt_bytes(ms, sizeof ms, (uint64_t)s.max_split_size),
        rule);
    return HWRT_SUCCESS;
}

hwrt_status hwrt_memory_snapshot(int device_id, const char *path)
{
    if (!path || !*path)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_memory_snapshot: path is NULL or empty");
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_public(device_id, &d));
    char tmp[4200];
    FILE *f = hwi_out_open(path, tmp, sizeof tmp);    /* never through a planted symlink */
    if (!f)
        return hwi_err(HWRT_ERROR_IO, "hwrt_memory_snapshot: cannot open \"%s\" for writing: %s",
                       path, strerror(errno));
    hwrt_status st = hwi_pool_snapshot(d, f);
    if (st != HWRT_SUCCESS) {
        fclose(f);
        unlink(tmp);
        return st;
    }
    if (hwi_out_commit(f, tmp, path) != 0)
        return hwi_err(HWRT_ERROR_IO, "hwrt_memory_snapshot: writing \"%s\" failed: %s", path,
                       strerror(errno));
    return HWRT_SUCCESS;
}
