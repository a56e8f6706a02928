/* Stream-ordered allocation: device blocks tied to a stream (the pool's stream-ordered
 * side, hwrt_malloc_async / hwrt_free_async / hwrt_record_stream). It lives in exec, above
 * the pool, because a public stream handle resolves here. */
#include "stream.h"
#include "../base/status.h"
#include "../mem/pool.h"

hwrt_status hwrt_malloc_async(void **dptr, size_t bytes, hwrt_stream h)
{
    if (!dptr)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_malloc_async: dptr is NULL");
    *dptr = NULL;
    HWI_STREAM_REF(s);
    HWI_TRY(hwi_stream_resolve(h, &s));
    if (bytes == 0)
        return HWRT_SUCCESS;
    if (bytes > ((size_t)1 << 62))
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_malloc_async: %zu bytes is not a valid "
                       "size (overflowed computation?)", bytes);
    return hwi_pool_alloc(s->dev, bytes, s->bs, dptr);
}

hwrt_status hwrt_record_stream(void *dptr, hwrt_stream h)
{
    HWI_STREAM_REF(s);
    HWI_TRY(hwi_stream_resolve(h, &s));
    hwi_block_info b;
    if (!hwi_pool_find(dptr, 1, &b) && !hwi_pool_is_device_ptr(dptr, NULL))
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_record_stream(%p): not device memory "
                       "allocated by hwrt", dptr);
    if (hwi_pool_find(dptr, 1, &b) && b.device != s->device)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_record_stream: the block is on %s "
                       "but the stream is on %s", hwi_device_label(b.device).s,
                       hwi_device_label(s->device).s);
    return hwi_pool_record_stream(dptr, s->bs);
}

hwrt_status hwrt_free_async(void *dptr, hwrt_stream h)
{
    if (!dptr)
        return HWRT_SUCCESS;
    HWI_STREAM_REF(s);
    HWI_TRY(hwi_stream_resolve(h, &s));
    return hwi_pool_free_on(dptr, s->bs, s->device, "hwrt_free_async");
}
