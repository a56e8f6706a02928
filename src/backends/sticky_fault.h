/* A device's sticky fault, for backends whose driver poisons a context for good after
 * some errors (CUDA's illegal address, Ascend's AI core exception, a failed OpenCL
 * command that later commands waited on): the first such error is recorded with its
 * sentence, and every later call on the device fails with it until the backend clears it
 * (device_reset, where the driver allows). Shared by the cuda, ascend and opencl
 * backends; the sentence around it is the backend's. */
#ifndef HWI_STICKY_FAULT_H
#define HWI_STICKY_FAULT_H

#include "hwrt.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

typedef struct hwi_sticky_fault {
    _Atomic int status;        /* hwrt_status, 0 = healthy */
    pthread_mutex_t mu;        /* guards msg */
    char msg[256];
} hwi_sticky_fault;

void hwi_fault_init(hwi_sticky_fault *f);
void hwi_fault_destroy(hwi_sticky_fault *f);
/* 1 once a fault is recorded (a lock-free check for hot paths). */
static inline int hwi_fault_set(hwi_sticky_fault *f) { return atomic_load(&f->status) != 0; }
/* Record HWRT_ERROR_DEVICE_FAULT as "<desc>, seen by <what>" (what NULL: "<desc>") unless
 * a fault is recorded already (the first one stays); 1 when this call recorded it. */
int hwi_fault_record(hwi_sticky_fault *f, const char *desc, const char *what);
/* HWRT_SUCCESS when healthy; else the fault's status and its sentence copied to msg. */
hwrt_status hwi_fault_read(hwi_sticky_fault *f, char *msg, size_t len);
/* Back to healthy (after a successful recovery). */
void hwi_fault_clear(hwi_sticky_fault *f);

#endif
