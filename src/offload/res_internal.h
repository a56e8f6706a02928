/* The residency manager's files among themselves (residency.c's list); callers hold
 * hwi_offload.mu. What the rest of offload uses is in residency.h. */
#ifndef HWI_RES_INTERNAL_H
#define HWI_RES_INTERNAL_H

#include "residency.h"
#include "../runtime/runtime.h"

#define MGR hwi_offload

/* res_engine.c */
/* Make the manager's streams on device (evict, fetch) if not made yet. */
hwrt_status hwi_res_engine_streams(int device);
hwi_stream *hwi_res_evict_stream(int device);
/* The device a tensor's events belong to (open while the tensor lives). */
const hwi_device *hwi_res_tdev(const hwi_tensor *t);
hwrt_status hwi_res_new_event(int device, hwrt_bevent **out);
/* Has the device reached e (done, or it will never run)? */
int hwi_res_reached(const hwi_device *d, hwrt_bevent *e);

/* res_uses.c */
void hwi_res_wait_uses(const hwi_resident *r);
/* s waits for every use of r (before something else writes r's block). */
hwrt_status hwi_res_order_after_uses(hwi_resident *r, hwi_stream *s);

/* res_xfer.c */
hwrt_status hwi_xfer_new(int device, void *block, hwi_xfer **out);
/* Queue the confirmation and the done record on s, after the copy; on failure the
 * xfer is abandoned once s has drained. */
hwrt_status hwi_xfer_close(hwi_xfer *x, hwi_stream *s);
int hwi_xfer_done(const hwi_xfer *x);
void hwi_xfer_wait(const hwi_xfer *x);
void hwi_xfer_free(hwi_xfer *x);
/* Nobody needs x any more, but its confirmation may still run: free it once done. */
void hwi_xfer_retire(hwi_xfer *x);

/* res_settle.c */
/* Where r's data is when it is off the device: the host tier if it has a copy there. */
int hwi_res_off_device(const hwi_resident *r);
/* r's fetch is done: confirm it, or drop the block it never filled. */
void hwi_res_resolve_fetch(hwi_resident *r);

/* res_evict.c */
/* The pinned bounce buffer of the disk tier, at least bytes long. */
hwrt_status hwi_res_staging(size_t bytes);

/* res_handover.c */
/* Stream-ordered eviction of v into a fetch of `bytes` first written by `order`: 1 and
 * v's block in *out, or 0 (the caller waits for a victim instead). */
int hwi_res_hand_over(hwi_resident *v, size_t bytes, hwi_stream *order, void **out);

#endif
