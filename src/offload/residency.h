/* Residency manager internals shared by residency.c (evict/fetch), offload_plan.c
 * (learned order, prefetch, victim choice) and offload_api.c (public calls). */
#ifndef HWI_RESIDENCY_H
#define HWI_RESIDENCY_H

#include "offload.h"
#include "../exec/event.h"

enum { HWI_LOC_DEVICE = 0, HWI_LOC_HOST = 1, HWI_LOC_DISK = 2 };

typedef struct hwi_resident {
    hwi_tensor *t;
    int loc;                     /* where the valid data is when not on the device */
    int pinned_to_device;        /* set_offloadable(t, 0) after being offloadable */
    void *host;                  /* host copy (valid when has_host) */
    int host_pinned;
    int has_host, has_disk;      /* clean copies that exist */
    int dirty;                   /* device copy written since the clean copies were made */
    char path[512];              /* disk tier file */
    uint64_t last_use;           /* LRU tick */
    int order_pos;               /* position in the learned order, -1 unknown */
    hwrt_bevent *ready;          /* pending fetch (prefetch) completion, or NULL */
    hwrt_bevent *used;           /* recorded after the last op that used the tensor */
    int prefetched;
    /* dispatch's view of ready and used (keys for the sync checker, see hwi_res_order) */
    hwi_event ready_ev, used_ev;
} hwi_resident;

typedef struct hwi_offload_mgr {
    pthread_mutex_t mu;
    hwi_resident **list;
    int n, cap;
    uint64_t tick;
    size_t host_used, disk_used;
    hwrt_offload_stats stats;
    hwi_stream *evict_stream[HWI_MAX_DEVICES], *fetch_stream[HWI_MAX_DEVICES];
    /* learned order (auto_offload) */
    hwi_resident **order;
    int norder, cap_order;
    int recording, steps, cursor;
    void *staging;               /* pinned bounce buffer for the disk tier */
    size_t staging_size;
    uint64_t file_seq;
} hwi_offload_mgr;

extern hwi_offload_mgr hwi_offload;

/* residency.c (callers hold hwi_offload.mu) */
hwrt_status hwi_res_evict(hwi_resident *r, const char *api);
hwrt_status hwi_res_fetch(hwi_resident *r, hwi_stream *wait_on, hwi_tensor *const *keep,
                          int nkeep, const char *api);
int hwi_res_idle(const hwi_resident *r);
/* Record r's ready or used event on s (record != 0), or make s wait for it, through the
 * dispatch point, so the sync checker, the profiler and capture see the manager's
 * ordering like a user's own events. */
typedef enum { HWI_RES_READY, HWI_RES_USED } hwi_res_event;
hwrt_status hwi_res_order(hwi_resident *r, hwi_res_event which, hwi_stream *s, int record);
/* Block until r's last use and pending fetch are done (so it can be evicted). */
hwrt_status hwi_res_wait_idle(hwi_resident *r);
size_t hwi_res_budget(int device);
hwrt_status hwi_res_tier_oom(int device, size_t bytes, const char *api);
/* Device memory for a tensor's data: make room (evicting), allocate, and on a
 * device-level OOM evict more. order: the stream that first writes the memory (the
 * fetch stream), or NULL; with it, a same-size victim still used by queued work hands
 * over its block in that stream's order instead of the host waiting for it. */
hwrt_status hwi_res_alloc(hwi_device *d, size_t bytes, hwi_tensor *const *keep, int nkeep,
                          hwi_stream *order, const char *api, void **out);
double hwi_res_ms_since(uint64_t t0_ns);
uint64_t hwi_res_now_ns(void);

/* offload_plan.c (callers hold hwi_offload.mu) */
void hwi_plan_note_use(hwi_resident *r);
hwi_resident *hwi_plan_pick_victim(int device, hwi_tensor *const *keep, int nkeep, int busy_ok);
/* Prefetch the tensors used after r; keep[] (the current op's operands) stay resident. */
void hwi_plan_prefetch_ahead(hwi_resident *r, hwi_tensor *const *keep, int nkeep);
void hwi_plan_forget(hwi_resident *r);

#endif
