/* Copies and memsets: the pointers are checked against what hwrt knows (device blocks,
 * pinned host buffers) before anything is queued, so a wrong kind or an out-of-range
 * size is a clear error instead of a device fault. */
#include "dispatch.h"
#include "../base/status.h"
#include "../mem/host_mem.h"
#include "../mem/pool.h"

#include <stdint.h>


/* Check that [p, p+bytes) lies in one live device block (b: p's lookup); *dev gets its
 * device. */
static hwrt_status check_device_range(const char *api, const char *side, const void *p,
                                      size_t bytes, const hwi_block_info *lb, int *dev)
{
    hwi_block_info b = *lb;
    if (hwi_block_covers(&b, p, bytes)) {
        *dev = b.device;
        return HWRT_SUCCESS;
    }
    if (b.base)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT,
                       "%s: the %s range %p + %zu bytes runs past the end of its device block "
                       "(%p, %zu bytes, device %d) by %zu bytes; copy fewer bytes", api, side, p,
                       bytes, b.base, b.size, b.device,
                       /* in integers: p + bytes may pass the end of the address space */
                       (size_t)((uintptr_t)p - (uintptr_t)b.base) + bytes - b.size);
    return hwi_err(HWRT_ERROR_INVALID_ARGUMENT,
                   "%s: the %s pointer %p is not device memory from hwrt (a host pointer, or "
                   "freed); allocate it with hwrt_malloc or fix the copy kind", api, side, p);
}

static hwrt_status check_host(const char *api, const char *side, const void *p,
                              const hwi_block_info *b)
{
    int dev = b->device;
    if (dev >= 0)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT,
                       "%s: the %s pointer %p is device memory (device %d) but the copy kind says "
                       "host; use the matching HWRT_MEMCPY_* kind or HWRT_MEMCPY_DEFAULT", api,
                       side, p, dev);
    return HWRT_SUCCESS;
}

/* Validate and build the copy work; resolves DEFAULT and picks the device. */
static hwrt_status prepare(const char *api, void *dst, const void *src, size_t bytes,
                           hwrt_memcpy_kind kind, hwi_work *w, int *device)
{
    if ((unsigned)kind > HWRT_MEMCPY_DEFAULT)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: copy kind %d is not a hwrt_memcpy_kind",
                       api, (int)kind);
    if (!dst || !src)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: %s pointer is NULL", api,
                       !dst ? "the destination" : "the source");
    /* one pool lookup per pointer serves the kind and both checks */
    hwi_block_info dl, sl;
    hwi_pool_lookup(dst, &dl);
    hwi_pool_lookup(src, &sl);
    if (kind == HWRT_MEMCPY_DEFAULT) {
        int a = dl.device >= 0, b = sl.device >= 0;
        kind = a ? (b ? HWRT_MEMCPY_DEVICE_TO_DEVICE : HWRT_MEMCPY_HOST_TO_DEVICE)
                 : (b ? HWRT_MEMCPY_DEVICE_TO_HOST : HWRT_MEMCPY_HOST_TO_HOST);
    }
    int dd = -1, sd = -1;
    int dst_dev = kind == HWRT_MEMCPY_HOST_TO_DEVICE || kind == HWRT_MEMCPY_DEVICE_TO_DEVICE;
    int src_dev = kind == HWRT_MEMCPY_DEVICE_TO_HOST || kind == HWRT_MEMCPY_DEVICE_TO_DEVICE;
    HWI_TRY(dst_dev ? check_device_range(api, "destination", dst, bytes, &dl, &dd)
                    : check_host(api, "destination", dst, &dl));
    HWI_TRY(src_dev ? check_device_range(api, "source", src, bytes, &sl, &sd)
                    : check_host(api, "source", src, &sl));
    if (dd >= 0 && sd >= 0 && dd != sd)
        return hwi_err(HWRT_ERROR_NOT_SUPPORTED,
                       "%s: copy from %s to %s: peer copies are not supported; "
                       "copy through host memory", api, hwi_device_label(sd).s,
                       hwi_device_label(dd).s);
    *device = dd >= 0 ? dd : sd;
    w->kind = HWI_WORK_COPY;
    w->name = kind == HWRT_MEMCPY_HOST_TO_DEVICE   ? "MemcpyHtoD"
              : kind == HWRT_MEMCPY_DEVICE_TO_HOST ? "MemcpyDtoH"
              : kind == HWRT_MEMCPY_DEVICE_TO_DEVICE ? "MemcpyDtoD" : "MemcpyHtoH";
    w->u.copy.dst = dst;
    w->u.copy.src = src;
    w->u.copy.bytes = bytes;
    w->u.copy.kind = kind;
    w->u.copy.pinned = kind == HWRT_MEMCPY_HOST_TO_DEVICE   ? hwi_host_is_pinned(src, bytes)
                       : kind == HWRT_MEMCPY_DEVICE_TO_HOST ? hwi_host_is_pinned(dst, bytes)
                                                            : 1;
    return HWRT_SUCCESS;
}

hwrt_status hwrt_memcpy_async(void *dst, const void *src, size_t bytes, hwrt_memcpy_kind kind,
                              hwrt_stream h)
{
    HWI_STREAM_REF(s);
    HWI_TRY(hwi_stream_resolve(h, &s));
    if (bytes == 0)
        return HWRT_SUCCESS;
    hwi_work w = {0};
    int device;
    HWI_TRY(prepare("hwrt_memcpy_async", dst, src, bytes, kind, &w, &device));
    if (device >= 0 && device != s->device)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT,
                       "hwrt_memcpy_async: the device memory is on %s but the stream is on "
                       "%s; use a stream of that device", hwi_device_label(device).s,
                       hwi_device_label(s->device).s);
    w.stream = s;
    return hwi_dispatch(&w);
}

hwrt_status hwrt_memcpy(void *dst, const void *src, size_t bytes, hwrt_memcpy_kind kind)
{
    if (bytes == 0)
        return HWRT_SUCCESS;
    hwi_work w = {0};
    int device;
    HWI_TRY(prepare("hwrt_memcpy", dst, src, bytes, kind, &w, &device));
    HWI_STREAM_REF(s);
    if (device >= 0) HWI_TRY(hwi_stream_default(device, &s));
    else HWI_TRY(hwi_stream_resolve(NULL, &s));
    HWI_TRY(hwi_host_sync_check("hwrt_memcpy", s));
    w.stream = s;
    HWI_TRY(hwi_dispatch(&w));
    return hwi_stream_sync(s, "hwrt_memcpy");
}

hwrt_status hwrt_memset_async(void *dptr, int value, size_t bytes, hwrt_stream h)
{
    HWI_STREAM_REF(s);
    HWI_TRY(hwi_stream_resolve(h, &s));
    if (bytes == 0)
        return HWRT_SUCCESS;
    if (!dptr)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_memset_async: dptr is NULL");
    int device;
    hwi_block_info b;
    hwi_pool_lookup(dptr, &b);
    HWI_TRY(check_device_range("hwrt_memset_async", "destination", dptr, bytes, &b, &device));
    if (device != s->device)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_memset_async: the memory is on %s "
                       "but the stream is on %s", hwi_device_label(device).s,
                       hwi_device_label(s->device).s);
    hwi_work w = {.kind = HWI_WORK_MEMSET, .stream = s, .name = "Memset"};
    w.u.set.dst = dptr;
    w.u.set.value = value;
    w.u.set.bytes = bytes;
    return hwi_dispatch(&w);
}
