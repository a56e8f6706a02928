/* The pool figures of hwrt processes, for hwrt-smi in any process: the reconciliation of
 * a driver's per-process memory (NVML, DCMI) with what hwrt's pool inside that process
 * holds (the seed's problem 6).
 *
 * A driver knows each process's device memory but not what hwrt's pool inside it holds.
 * A process running hwrt publishes its pool's reserved and allocated bytes per device
 * (the backend's report_usage slot calls hwi_usage_publish) as one small file per
 * (process, device) in a per-user directory of the backend's board: $<env>, else
 * /dev/shm/hwrt-<backend>-<uid> (mode 0700). A device is named by a key both sides derive
 * from the driver (cuda: the PCI location; ascend: the driver's logical id). Files are
 * replaced atomically (write + rename); each carries the process's start time, so a
 * reused pid never inherits a dead process's figures. Readers trust nothing: the
 * directory and files must be the user's own with modes 0700/0600, contents must parse
 * and allocated <= reserved; anything else is reported as the reason and ignored. */
#ifndef HWI_USAGE_BOARD_H
#define HWI_USAGE_BOARD_H

#include "hwrt.h"

#include <pthread.h>
#include <stddef.h>

typedef struct hwi_usage_board {
    const char *backend;       /* "cuda": the directory's and the files' magic name */
    const char *env;           /* "HWRT_CUDA_USAGE_DIR": overrides the directory */
    const char *driver;        /* "NVML": for the warning when the board is unusable */
    /* publisher state, one per process (initialise with HWI_USAGE_BOARD_INIT) */
    pthread_mutex_t mu;
    int state;                 /* 0 not tried, 1 usable, -1 unusable (warned once) */
    unsigned long long me_start;
} hwi_usage_board;
#define HWI_USAGE_BOARD_INIT(backend, env, driver) \
    {backend, env, driver, PTHREAD_MUTEX_INITIALIZER, 0, 0}

/* Publish this process's pool figures for the device named key (letters, digits, '_').
 * Best effort: a directory that cannot be used leaves one warning on stderr naming it
 * and the fix. */
void hwi_usage_publish(hwi_usage_board *b, const char *key, size_t reserved, size_t allocated);

/* What process pid published for key: 1 with the figures; 0 when it published nothing
 * (not an hwrt process), -1 when what is there was refused (why says so). */
int hwi_usage_read(const hwi_usage_board *b, int pid, const char *key, size_t *reserved,
                   size_t *allocated, char *why, size_t whylen);

/* The reconciliation of one process's driver figure (p->used, set by the caller) with
 * what it published for key: p->reserved and p->allocated from its pool (clamped to
 * p->used) and p->overhead = p->used - reserved (context, kernels, anything outside the
 * pool). 0 when done or when it published nothing; -1 with a sentence in why for the
 * caller's warnings (refused file, or a pool figure above the driver's, shown clamped). */
int hwi_usage_reconcile(const hwi_usage_board *b, const char *key, int device,
                        hwrt_smi_process *p, char *why, size_t whylen);

/* The process's name as the kernel has it (its pid namespace's /proc), "?" if unknown. */
void hwi_usage_proc_name(int pid, char *buf, size_t len);

/* Append a sentence to out->warnings ("; " between), cut at its size. */
void hwi_smi_warn(hwrt_smi_snapshot *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
