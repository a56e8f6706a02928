/* Device-level wrappers: the one place that reads a backend's ops table (issue 18 item 3,
 * ggml-backend's pattern). Each hwi_dev_<slot> calls the slot of the device's backend with
 * its backend device; optional slots get their fallback here, so no caller tests a slot.
 * Backend streams and events belong to the device that made them: pass that device.
 * Fallbacks: host_func synchronizes the stream and calls fn inline (not at all after a
 * fault); event_elapsed_ms derives from two timestamps; device_synchronize synchronizes
 * every live stream of the device (hwi_dev_stream_create lists them). */
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
hwrt_status hwi_dev_activity_enable(const hwi_device *d, hwrt_activity_fn fn, void *ctx);
hwrt_status hwi_dev_activity_query(const hwi_device *d);
/* The driver's handle of s (CUstream), or NULL when the backend has none. */
void *hwi_dev_stream_native(const hwi_device *d, hwrt_bstream *s);
/* Make the calling thread current on d (backend.h's thread_enter); SUCCESS when the
 * backend has no per-thread device state. */
hwrt_status hwi_dev_thread_enter(const hwi_device *d);

/* DLPack device type and (data, byte_offset) of ptr (see the slot in backend.h); the
 * fallback when the backend has no slot: kDLExtDev for device memory, kDLCPU for pinned. */
hwrt_status hwi_dev_dlpack_device(const hwi_device *d, const void *ptr, int pinned_host,
                                  int *dl_device_type, void **data, uint64_t *byte_offset);

/* Backend-level calls, before a device is open (selection, hwi_device_open). */
hwrt_status hwi_backend_probe(const hwrt_backend_ops *ops, int *count, char *reason, size_t len);
hwrt_status hwi_backend_device_props(const hwrt_backend_ops *ops, int ordinal,
                                     hwrt_device_props *out);
hwrt_status hwi_backend_device_open(const hwrt_backend_ops *ops, int ordinal, hwrt_bdev **out);
/* The backend's device-wide view (hwrt-smi), read without opening a device. */
hwrt_status hwi_backend_monitor(const hwrt_backend_ops *ops, hwrt_smi_snapshot *out);

/* Activity records are process-wide per backend (backend.h): the profiler keeps the
 * backend (d->ops, as a key it never reads) and calls these with it. */
hwrt_status hwi_backend_activity_enable(const hwrt_backend_ops *ops, hwrt_activity_fn fn,
                                        void *ctx);
hwrt_status hwi_backend_activity_query(const hwrt_backend_ops *ops);
int hwi_backend_has_activity(const hwrt_backend_ops *ops);
/* 1 when host functions run on the backend's own thread (else inline: the fallback). */
int hwi_dev_has_host_func(const hwi_device *d);

/* The backend's name, in static storage (valid after the device closed). */
const char *hwi_dev_backend_name(const hwi_device *d);
/* A backend table's name and ABI version (selection, sentences), before any device opens. */
const char *hwi_backend_name(const hwrt_backend_ops *ops);
uint32_t hwi_backend_abi(const hwrt_backend_ops *ops);

/* 1 when the device's memory is host memory the CPU reads and writes in place. */
int hwi_dev_host_addressable(const hwi_device *d);
/* How a user gets more devices of the backend, for a sentence ("" when it has no way). */
const char *hwi_backend_more_devices_hint(const hwrt_backend_ops *ops);

/* 1 when the backend has every virtual-memory slot (expandable segments are possible). */
int hwi_dev_has_va(const hwi_device *d);
/* 1 when the backend pins host memory itself (else the pinned host pool mlocks pages). */
int hwi_dev_has_host_alloc(const hwi_device *d);

#endif
