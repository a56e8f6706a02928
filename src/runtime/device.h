/* A device: one open device of one backend. It carries its backend's ops table, which only
 * device_ops.c reads (every backend call goes through hwi_dev_<slot>). */
#ifndef HWI_DEVICE_H
#define HWI_DEVICE_H

#include "../backends/backend.h"

typedef struct hwi_device {
    int ordinal;
    const hwrt_backend_ops *ops;   /* the backend this device belongs to */
    hwrt_bdev *bdev;
    hwrt_device_props props;
    struct hwi_pool *pool;         /* its memory pool (src/mem), created on first use */
} hwi_device;

#endif
