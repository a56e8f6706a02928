/* hwrt public API — diagnosis: launch_blocking and the sync checker. Include <hwrt.h>.
 *
 * launch_blocking (the PYNATIVE analogue; env HWRT_LAUNCH_BLOCKING=1, config key
 * "launch_blocking", or hwrt_set_launch_blocking): every op, copy, memset and host
 * function completes before the call that queued it returns, so a device fault is
 * reported by the call that caused it (its sentence names the op and the device)
 * instead of by a later synchronize. Slow: for debugging only.
 *
 * The sync checker (env HWRT_CHECK_SYNC=1, config key "check_sync", or
 * hwrt_set_check_sync): tracks for every device allocation the last writer and the
 * readers since (stream + position in it) and the ordering the program established
 * (events recorded and waited, host synchronizations). It reports
 *  - cross-stream hazards: a read or write on one stream of a block that another stream
 *    wrote (or read) with no event or synchronization ordering the two;
 *  - host reads (hwrt_memcpy and D2H copies) of device data whose producing work is not
 *    ordered before the read — the "stale or all-zero result" of a missing synchronize.
 * Each report names both operations, their streams, the block and the fix, goes to
 * stderr ("hwrt sync-check: ...") and is counted. Event-ordered use across streams is
 * silent. Off (the default) it costs one relaxed load per dispatched op. Scope: block
 * granularity (two streams writing disjoint halves of one allocation are reported);
 * host function bodies are not seen; a graph replay is checked node by node. */
#ifndef HWRT_DIAG_H
#define HWRT_DIAG_H

#include "hwrt_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Turn launch_blocking on (nonzero) or off, process-wide; same as
 * hwrt_set_config("launch_blocking", "1"/"0"). Never fails. */
HWRT_API hwrt_status hwrt_set_launch_blocking(int on);

/* Turn the sync checker on or off, process-wide; same as
 * hwrt_set_config("check_sync", "1"/"0"). Work queued while it was off is treated as
 * ordered (no false reports from history it did not see). Never fails. */
HWRT_API hwrt_status hwrt_set_check_sync(int on);

/* Number of hazards reported since start or the last hwrt_diag_reset. */
HWRT_API uint64_t hwrt_diag_hazard_count(void);

/* The last hazard report into buf (always NUL-terminated; "" when none).
 * Errors: INVALID_ARGUMENT for NULL buf or len 0. */
HWRT_API hwrt_status hwrt_diag_last_hazard(char *buf, size_t len);

/* Forget every tracked access and zero the hazard count. */
HWRT_API hwrt_status hwrt_diag_reset(void);

#ifdef __cplusplus
}
#endif
#endif /* HWRT_DIAG_H */
