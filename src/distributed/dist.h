/* Distributed state shared by src/distributed: who we are, where every rank runs, the engine. */
#ifndef HWI_DIST_H
#define HWI_DIST_H

#include "engine.h"

#define HWI_HOST_LEN 64

typedef struct hwi_dist {
    int inited;
    hwrt_dist_info info;           /* what the launcher said */
    int rank, size, local_rank, local_size, nhosts;
    char (*hosts)[HWI_HOST_LEN];   /* host of every rank (size entries) */
    const hwi_coll_engine *eng;    /* host engine: self or MPI (exchanges, barrier) */
    const hwi_coll_engine *coll;   /* tensor collectives: eng or NCCL (coll_select.c) */
    char mpi_version[128];
    int devices_checked;           /* hwrt_dist_check_devices passed once */
} hwi_dist;

/* The process's state; only valid when inited. Guarded by hwi_dist_lock for init,
 * finalize and the one-time device check (collectives are issued by one thread). */
extern hwi_dist hwi_dist_g;
void hwi_dist_lock(void);
void hwi_dist_unlock(void);

/* This process's host identity: env HWRT_DIST_HOSTNAME, else gethostname(). */
void hwi_dist_hostname(char *buf, size_t len);

/* Collective: every rank reports (device, its local status and sentence); all get the
 * same verdict (a rank that failed, two ranks on one host with one device, a global rank
 * used as the device on a multi-host job). */
hwrt_status hwi_dist_exchange_devices(const char *api, const char *backend, int device,
                                      hwrt_status local_st, const char *local_msg);

/* Release the pinned staging buffers of collective.c. */
hwrt_status hwi_dist_free_staging(void);

/* The group a collective runs on (group.c): its engine communicator, this process's rank
 * in it and its size; g NULL is the world (communicator NULL). INVALID_HANDLE, naming api,
 * for a group not alive. Collectives resolve under hwi_coll_lock, which group destroy
 * takes too, so a communicator is never freed under a running collective. */
hwrt_status hwi_group_get(const char *api, hwrt_group g, void **comm, int *rank, int *size);
/* Forget every group (hwrt_dist_finalize; MPI finalization takes their communicators). */
void hwi_group_drop_all(void);
/* The lock that serializes collectives (collective.c). */
void hwi_coll_lock(void);
void hwi_coll_unlock(void);

/* buf[i] /= by for n elements of dt (AVG); integers truncate toward zero. */
void hwi_dist_divide(void *buf, size_t n, hwrt_dtype dt, int by);

#endif
