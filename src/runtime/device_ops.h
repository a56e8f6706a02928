/* Device-level wrappers: the one place that reads a backend's ops table (issue 18 item 3,
 * ggml-backend's pattern). Each hwi_dev_<slot> calls the slot of the device's backend with
 * its backend device; optional slots get their fallback here, so no caller tests a slot.
 * Backend streams and events belong to the device that made them: pass that device. */
#ifndef HWI_DEVICE_OPS_H
#define HWI_DEVICE_OPS_H

#include "device.h"

void hwi_dev_device_close(const hwi_device *d);
hwrt_status hwi_dev_mem_info(const hwi_device *d, size_t *free_bytes, size_t *total_bytes, size_t *overhead_bytes);
hwrt_status hwi_dev_segment_alloc(const hwi_device *d, size_t bytes, void **dptr);
hwrt_status hwi_dev_segment_free(const hwi_device *d, void *dptr, size_t bytes);
size_t hwi_dev_va_granularity(const hwi_device *d);
hwrt_status hwi_dev_va_reserve(const hwi_device *d, size_t bytes, void **base);
hwrt_status hwi_dev_va_map(const hwi_device *d, void *addr, size_t bytes);
hwrt_status hwi_dev_va_unmap(const hwi_device *d, void *addr, size_t bytes);
hwrt_status hwi_dev_va_release(const hwi_device *d, void *base, size_t bytes);
hwrt_status hwi_dev_host_alloc(const hwi_device *d, size_t bytes, void **hptr);
void hwi_dev_host_free(const hwi_device *d, void *hptr, size_t bytes);
hwrt_status hwi_dev_stream_create(const hwi_device *d, int priority, hwrt_bstream **s);
void hwi_dev_stream_destroy(const hwi_device *d, hwrt_bstream *s);
hwrt_status hwi_dev_stream_synchronize(const hwi_device *d, hwrt_bstream *s);
hwrt_status hwi_dev_stream_query(const hwi_device *d, hwrt_bstream *s);
hwrt_status hwi_dev_stream_wait_event(const hwi_device *d, hwrt_bstream *s, hwrt_bevent *e);
hwrt_status hwi_dev_memcpy_async(const hwi_device *d, hwrt_bstream *s, void *dst, const void *src, size_t bytes, hwrt_memcpy_kind kind, int host_pinned);
hwrt_status hwi_dev_memset_async(const hwi_device *d, hwrt_bstream *s, void *dptr, int value, size_t bytes);
hwrt_status hwi_dev_kernel_launch(const hwi_device *d, hwrt_bstream *s, const hwrt_kernel *k);
hwrt_status hwi_dev_host_func(const hwi_device *d, hwrt_bstream *s, hwrt_host_fn fn, void *arg);
hwrt_status hwi_dev_event_create(const hwi_device *d, unsigned flags, hwrt_bevent **e);
void hwi_dev_event_destroy(const hwi_device *d, hwrt_bevent *e);
hwrt_status hwi_dev_event_record(const hwi_device *d, hwrt_bevent *e, hwrt_bstream *s);
hwrt_status hwi_dev_event_query(const hwi_device *d, hwrt_bevent *e);
hwrt_status hwi_dev_event_synchronize(const hwi_device *d, hwrt_bevent *e);
hwrt_status hwi_dev_event_elapsed_ms(const hwi_device *d, float *ms, hwrt_bevent *start, hwrt_bevent *end);
hwrt_status hwi_dev_event_timestamp_ns(const hwi_device *d, hwrt_bevent *e, uint64_t *ns);
hwrt_status hwi_dev_device_synchronize(const hwi_device *d);
hwrt_status hwi_dev_device_reset(const hwi_device *d);
void hwi_dev_report_usage(const hwi_device *d, size_t reserved, size_t allocated);
hwrt_status hwi_dev_monitor(const hwi_device *d, hwrt_smi_snapshot *out);
hwrt_status hwi_dev_activity_enable(const hwi_device *d, hwrt_activity_fn fn, void *ctx);
hwrt_status hwi_dev_activity_query(const hwi_device *d);
/* The driver's handle of s (CUstream), or NULL when the backend has none. */
void *hwi_dev_stream_native(const hwi_device *d, hwrt_bstream *s);

/* DLPack device type and (data, byte_offset) of ptr (see the slot in backend.h); the
 * fallback when the backend has no slot: kDLExtDev for device memory, kDLCPU for pinned. */
hwrt_status hwi_dev_dlpack_device(const hwi_device *d, const void *ptr, int pinned_host,
                                  int *dl_device_type, void **data, uint64_t *byte_offset);

/* The name of d's backend ("sim", "opencl"). */
const char *hwi_dev_backend_name(const hwi_device *d);
/* 1 when the backend has every virtual-memory slot (expandable segments are possible). */
int hwi_dev_has_va(const hwi_device *d);

#endif
