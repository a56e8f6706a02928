/* Process runtime state: the backends in use, the devices opened (one table of process-
 * wide device ids), the per-thread current device, and hwrt_shutdown.
 *
 * Device ids (device.h): a process may use several backends at once; each thread's
 * current device is one device of one backend (hwrt_set_device(backend, ordinal)), and
 * the public calls that take a device id read it as an ordinal of the calling thread's
 * backend. Internally a device is its process-wide id (hwi_device.id): the first backend
 * selected gets ids 0..n-1, equal to its ordinals; each later one the next free ids. */
#ifndef HWI_RUNTIME_H
#define HWI_RUNTIME_H

#include "device.h"

#define HWI_MAX_DEVICES 64

/* 1 once some backend was selected (until hwrt_shutdown). */
int hwi_runtime_active(void);
/* Device by process-wide id, opened on first use (selects "auto" when no backend was
 * chosen yet and id is 0). */
hwrt_status hwi_device_get(int id, hwi_device **out);
/* Device by public id: an ordinal of the calling thread's backend. The sentence of an
 * out-of-range ordinal names the device count. */
hwrt_status hwi_device_public(int ordinal, hwi_device **out);
/* The public id (ordinal in its backend) of process-wide id `id` (id itself if unknown). */
int hwi_device_ordinal(int id);
/* "device N" for process-wide id `id` (N its ordinal), "<backend> device N" while the
 * process uses several backends: for sentences that name two devices. */
typedef struct hwi_dev_label { char s[48]; } hwi_dev_label;
hwi_dev_label hwi_device_label(int id);
/* The backend `name` stands for: itself (any other name, "" included, as given: the
 * caller's lookup refuses an unknown one), or for NULL/"auto" only the calling thread's
 * backend, else the one "auto" would pick (an error with its sentence when none has a
 * device). */
hwrt_status hwi_backend_resolve(const char *name, char *out, size_t len);
/* The calling thread's current device (opened on first use). */
hwrt_status hwi_device_current_slow(hwi_device **out);
/* Open device by process-wide id, or NULL (never opens). */
hwi_device *hwi_device_if_open(int id);

/* Inline fast path of hwi_device_current (every hwrt_malloc takes it): the thread's
 * id is valid for the current shutdown epoch and its device is open. Initial-exec
 * TLS: libhwrt is a shared object, and the default model's __tls_get_addr costs ~3 ns. */
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

/* device.c: open (props + backend device) and free one device. */
hwrt_status hwi_device_open(const hwrt_backend_ops *ops, int ordinal, int id, hwi_device **out);
void hwi_device_free(hwi_device *d);

/* Teardown hooks of process-wide state, run by hwrt_shutdown in ascending `order` (lower
 * first). Registering the same fn twice is a no-op. What a device owns is not here: it
 * goes with the device (hwi_device_attach), when hwrt_shutdown closes the devices between
 * the hooks below HWI_SHUTDOWN_DEVICES and those at or above it. Orders used:
 * 10 offload manager, 20 graphs, 25 tensors (process-wide handle tables) | devices close
 * their parts (offload streams, streams, the memory pool) | 35 events and profiler, 40 the
 * allocation trace and the pools' leak summary, 45 distributed staging, 50 pinned host
 * memory; then the backend devices close. */
#define HWI_SHUTDOWN_DEVICES 30
void hwi_on_shutdown(int order, hwrt_status (*fn)(void));

#endif
