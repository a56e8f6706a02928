/* Residency manager (see include/hwrt/hwrt_offload.h for the behaviour). The tensor
 * layer calls in at three points: before allocating device memory for a tensor
 * (make room), before an op or a host read uses tensors (ensure resident), and when a
 * tensor is released. */
#ifndef HWI_OFFLOAD_H
#define HWI_OFFLOAD_H

#include "../tensor/tensor.h"

/* 1 when memory_offload is ON. */
int hwi_offload_enabled(void);
/* Allocate device memory for a new tensor, evicting idle offloadable tensors first
 * while memory_offload is ON (plain pool allocation otherwise). */
hwrt_status hwi_offload_alloc(hwi_device *d, size_t bytes, void **out);
/* Make every tensor of ts[] resident before work on stream s uses them; writes[i] says
 * whether the work writes ts[i]. Stream-ordered: s waits for the fetches. */
hwrt_status hwi_offload_ensure(hwi_tensor *const *ts, const int *writes, int n, hwi_stream *s);
/* After work on stream s was queued that uses ts[]: remember it (eviction waits for it). */
void hwi_offload_after_use(hwi_tensor *const *ts, int n, hwi_stream *s);
/* Forget t (free its host copy and disk file). */
void hwi_offload_forget(hwi_tensor *t);

#endif
