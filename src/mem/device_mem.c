/* Public device-memory calls that need no stream: hwrt_malloc, hwrt_free and the
 * memory figures. */
#include "pool.h"
#include "../core/status.h"

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
    return hwi_pool_alloc(d, bytes, NULL, dptr);
}

hwrt_status hwrt_free(void *dptr)
{
    if (!dptr)
        return HWRT_SUCCESS;
    return hwi_pool_free(dptr, "hwrt_free");
}

hwrt_status hwrt_get_memory_info(int device_id, hwrt_memory_info *out)
{
    if (!out)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_get_memory_info: out is NULL");
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_get(device_id, &d));
    memset(out, 0, sizeof *out);
    size_t free_b, total, overhead;
    HWI_TRY(hwi_ops_if_selected()->mem_info(d->bdev, &free_b, &total, &overhead));
    out->total = total;
    out->free = free_b;
    out->used = total - free_b;
    out->overhead = overhead;
    hwi_pool_fill_info(device_id, out);
    return HWRT_SUCCESS;
}

hwrt_status hwrt_empty_cache(int device_id)
{
    hwi_device *d = NULL;
    HWI_TRY(hwi_device_get(device_id, &d));
    return hwi_pool_empty_cache(d);
}
