/* A device: one open device of one backend, and everything the process keeps on it.
 *
 * It carries its backend's ops table, which only device_ops.c reads (every backend call
 * goes through hwi_dev_<slot>), and the backend streams made on it (device_ops.c lists
 * them: the device-wide synchronize of a backend without one walks them).
 *
 * The layers above keep their per-device state in parts the device points to (the
 * runtime includes none of them): each layer attaches its part on first use with
 * hwi_device_attach, and closing the device calls each part's close, upper layers first,
 * before the backend device closes. A part may also give the device-wide synchronize
 * that everyone below it uses (exec's: checked against capture, seen by the profiler).
 *
 * Ids: `ordinal` is the device's number within its backend (what the public API calls a
 * device id); `id` is unique in the process (the slot in the runtime's table, what the
 * internal int "device" fields hold). The first backend a process uses gets ids equal to
 * its ordinals; a second one's devices follow (docs/ARCHITECTURE.md, "Device ids"). */
#ifndef HWI_DEVICE_H
#define HWI_DEVICE_H

#include "../backends/backend.h"

#include <pthread.h>
#include <stdatomic.h>

typedef struct hwi_device hwi_device;

/* The parts, in close order (upper layers first). */
typedef enum hwi_dev_part_kind {
    HWI_PART_OFFLOAD,    /* src/offload: the residency manager's evict and fetch streams */
    HWI_PART_EXEC,       /* src/exec: the default stream and the live streams */
    HWI_PART_MEM,        /* src/mem: the device's memory pool (hwi_device.pool) */
    HWI_PART_COUNT
} hwi_dev_part_kind;

typedef struct hwi_dev_part_ops {
    /* Release everything the part holds on d; the part is freed by it. */
    hwrt_status (*close)(hwi_device *d, void *part);
    /* Optional: block until every piece of work queued on d so far has finished. */
    hwrt_status (*synchronize)(hwi_device *d, void *part, const char *api);
} hwi_dev_part_ops;

typedef struct hwi_dev_bstream hwi_dev_bstream;   /* device_ops.c */

struct hwi_device {
    int id;                        /* process-wide (see above) */
    int ordinal;                   /* within the backend */
    const hwrt_backend_ops *ops;   /* the backend this device belongs to */
    hwrt_bdev *bdev;
    hwrt_device_props props;
    struct hwi_pool *pool;         /* its memory pool (src/mem), created on first use */
    pthread_mutex_t mu;            /* parts being attached, the backend stream list */
    _Atomic(void *) part[HWI_PART_COUNT];
    const hwi_dev_part_ops *part_ops[HWI_PART_COUNT];
    hwi_dev_bstream *bstreams;     /* live backend streams (device_ops.c) */
};

/* The part `kind` of d, or NULL while none is attached (lock-free). */
static inline void *hwi_device_part(hwi_device *d, hwi_dev_part_kind kind)
{
    return atomic_load_explicit(&d->part[kind], memory_order_acquire);
}
/* Attach part (made by the caller) unless another thread attached one first: returns the
 * part in place (part itself, or the winner's; the caller then frees its own). */
void *hwi_device_attach(hwi_device *d, hwi_dev_part_kind kind, void *part,
                        const hwi_dev_part_ops *ops);
/* Close every part of d, upper layers first (first failure returned). The parts are
 * detached: a later use attaches fresh ones. */
hwrt_status hwi_device_close_parts(hwi_device *d);
/* Device-wide synchronize: the one a part gives (exec's), else the backend's
 * (hwi_dev_device_synchronize). */
hwrt_status hwi_device_synchronize(hwi_device *d, const char *api);

#endif
