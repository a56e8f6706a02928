/* Process runtime state: the backend in use, opened devices, the per-thread current
 * device, and the ordered teardown that hwrt_shutdown runs. */
#ifndef HWI_RUNTIME_H
#define HWI_RUNTIME_H

#include "device.h"

#define HWI_MAX_DEVICES 64

/* The backend in use; selects "auto" on first call. NULL + error when none works. */
hwrt_status hwi_runtime_ops(const hwrt_backend_ops **ops);
/* Like hwi_runtime_ops but never selects: NULL when no backend was chosen yet. */
const hwrt_backend_ops *hwi_ops_if_selected(void);
/* Device by ordinal of the backend in use, opened on first use. The sentence of an
 * out-of-range ordinal names the device count. */
hwrt_status hwi_device_get(int ordinal, hwi_device **out);
/* The calling thread's current device (opened on first use). */
hwrt_status hwi_device_current_slow(hwi_device **out);
/* Open device by ordinal, or NULL (never opens). */
hwi_device *hwi_device_if_open(int ordinal);

/* Inline fast path of hwi_device_current (every hwrt_malloc takes it): the thread's
 * ordinal is valid for the current shutdown epoch and its device is open. Initial-exec
 * TLS: libhwrt is a shared object, and the default model's __tls_get_addr costs ~3 ns. */
#include <stdatomic.h>
extern __thread int hwi_cur_dev __attribute__((tls_model("initial-exec")));
extern __thread unsigned hwi_cur_epoch __attribute__((tls_model("initial-exec")));
extern _Atomic unsigned hwi_dev_epoch;
extern _Atomic(hwi_device *) hwi_devices[HWI_MAX_DEVICES];

static inline hwrt_status hwi_device_current(hwi_device **out)
{
    if (__builtin_expect(hwi_cur_epoch == atomic_load_explicit(&hwi_dev_epoch, memory_order_relaxed), 1)) {
        hwi_device *d = atomic_load_explicit(&hwi_devices[hwi_cur_dev], memory_order_acquire);
        if (__builtin_expect(d != NULL, 1)) {
            *out = d;
            return HWRT_SUCCESS;
        }
    }
    return hwi_device_current_slow(out);
}
/* Number of devices of the backend in use (0 before selection). */
int hwi_device_count_selected(void);

/* Teardown hooks run by hwrt_shutdown in ascending `order` (lower first), before the
 * devices close. Registering the same fn twice is a no-op. Orders used:
 * 10 tensors/offload, 20 graphs, 30 streams/events, 40 memory pools, 50 host memory. */
void hwi_on_shutdown(int order, hwrt_status (*fn)(void));

#endif
