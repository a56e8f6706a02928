/* Residency manager internals shared by the manager's files (residency.c and res_*.c:
 * evict/fetch/write-back and the settling of their outcomes; their own shared parts are
 * in res_internal.h), offload_plan.c (learned order, prefetch, victim choice) and
 * offload_api.c (public calls). The state machine is described in docs/offload.md. */
#ifndef HWI_RESIDENCY_H
#define HWI_RESIDENCY_H

#include "offload.h"
#include "tier_disk.h"
#include "../exec/event.h"

enum { HWI_LOC_DEVICE = 0, HWI_LOC_HOST = 1, HWI_LOC_DISK = 2 };

/* A copy between tiers queued on one of the manager's streams, whose success is learned
 * on the device timeline: a host function queued right after the copy sets `landed`
 * (backends skip host functions when the device faulted before them), and `done` is
 * recorded after that function. Once `done` is reached the outcome is known: landed, or
 * the copy (or work it waited for) failed. Work that uses the copy's result waits for
 * `done`, so it never ran when the copy did not land. */
typedef struct hwi_xfer {
    _Atomic int landed;
    int settled;                 /* fetch: outcome applied (it stays as the ready marker) */
    int abandoned;               /* never fully queued: counts as done, not landed */
    const hwi_device *dev;       /* the device of done */
    hwrt_bevent *done;
    hwi_event done_ev;           /* dispatch's view of done (the sync checker's key) */
    void *block;                 /* fetch: the block it fills; write-back: the block it reads */
    struct hwi_xfer *after;      /* write-back: the owner's fetch, unsettled when it was queued */
    int fresh_host;              /* write-back: its host buffer was allocated for it */
    struct hwi_xfer *next;       /* retired list */
} hwi_xfer;

/* The last work queued on a tensor, one event per stream that used it. */
#define HWI_RES_USES 4
typedef struct hwi_res_use {
    hwrt_stream s;               /* the stream recorded on (NULL: free slot) */
    hwrt_bevent *ev;
    hwi_event view;
} hwi_res_use;

typedef struct hwi_resident {
    hwi_tensor *t;
    int loc;                     /* where the authoritative data is: t->data's block
                                    (DEVICE) or the host/disk copy */
    int pinned_to_device;        /* set_offloadable(t, 0) after being offloadable */
    void *host;                  /* host-tier buffer (a clean copy when has_host) */
    int host_pinned;
    int has_host, has_disk;      /* copies that held the data when last written */
    int dirty;                   /* the device copy is newer than the host/disk copies */
    hwi_disk_region disk;        /* disk tier copy (has_disk) */
    uint64_t last_use;           /* LRU tick (uses and fetches) */
    uint64_t use_no;             /* the uses of offloadable tensors so far (MGR.uses) at
                                    its last use: the clock of the overlap window */
    int order_pos;               /* position in the learned order, -1 unknown */
    hwi_xfer *fetch;             /* the fetch that filled t->data (pending or settled) */
    hwi_xfer *wb;                /* a stream-ordered write-back in flight: t->data is NULL,
                                    the data is in wb->block (lent to another tensor's
                                    fetch) until the write-back lands */
    hwi_res_use use[HWI_RES_USES];
    int prefetched;
    uint64_t wait_use;           /* the last use (use_no) of the victims whose memory the
                                    pending fetch waits for on the device; 0: none */
    int window_pending;          /* a fetch whose window is counted at the next use */
    int hole_block;              /* its block is of its own size, smaller than the learned
                                    size class, made where no class block fitted */
} hwi_resident;

typedef struct hwi_offload_mgr {
    pthread_mutex_t mu;
    hwi_resident **list;
    int n, cap;
    uint64_t tick;
    uint64_t uses;               /* uses of offloadable tensors (fetches not counted) */
    size_t host_used, disk_used;
    hwrt_offload_stats stats;
    /* learned order (auto_offload) */
    hwi_resident **order;
    int norder, cap_order;
    int recording, steps, cursor;
    void *staging;               /* pinned bounce buffer for the disk tier */
    size_t staging_size;
    int unsettled;               /* copies in flight whose outcome is not applied yet */
    int horizon;                 /* > 0 while prefetching (learned order): victims must be
                                    used later than this many uses ahead */
    uint64_t victim_use;         /* while a fetch makes room: see wait_use */
    hwi_xfer *retired;           /* xfers nobody needs, freed once done */
} hwi_offload_mgr;

extern hwi_offload_mgr hwi_offload;

/* residency.c and res_*.c (callers hold hwi_offload.mu) */
/* The manager's fetch stream on device (made by a fetch before; offload's device part). */
hwi_stream *hwi_res_fetch_stream(int device);
hwrt_status hwi_res_evict(hwi_resident *r, const char *api);
/* Bring r's data to the device on the fetch stream (r->fetch marks its end); a pending
 * write-back of r is waited for first. */
hwrt_status hwi_res_fetch(hwi_resident *r, hwi_tensor *const *keep, int nkeep,
                          const char *api);
int hwi_res_idle(const hwi_resident *r);
/* Record the event behind view on s (record != 0), or make s wait for it, through the
 * dispatch point, so the sync checker, the profiler and capture see the manager's
 * ordering like a user's own events. */
hwrt_status hwi_res_event(hwi_event *view, hwrt_bevent *be, hwi_stream *s, int record);
/* Make s wait for r's pending fetch (no-op without one). */
hwrt_status hwi_res_wait_ready(hwi_resident *r, hwi_stream *s);
/* Note work on s that uses r: r is not idle until it is done. */
hwrt_status hwi_res_note_use(hwi_resident *r, hwi_stream *s);
/* Block until r's queued work and pending fetch are done (so it can be evicted). */
hwrt_status hwi_res_wait_idle(hwi_resident *r);
/* Block until r's copies in flight (and with uses, its queued work) are done: release
 * waits for the copies only (the tensor layer frees the block in stream order),
 * shutdown for everything. */
void hwi_res_quiesce(hwi_resident *r, int uses);
/* Apply the outcome of every copy that is done: a landed fetch makes the device copy
 * valid; a failed one drops it (the host/disk copy stays authoritative); a landed
 * write-back makes the host copy clean; a failed one gives the block back to its owner. */
void hwi_res_settle(void);
/* Free r's tier copies and events (after hwi_res_quiesce and a settle). */
void hwi_res_free_copies(hwi_resident *r);
/* Free retired xfers; block: wait for those still in flight. */
void hwi_res_free_retired(int block);
size_t hwi_res_budget(int device);
/* Do `bytes` more fit the budget, and can the pool place a tensor block of `bytes`
 * without synchronizing the device (hwi_pool_headroom)? Offload makes room until both
 * hold. */
int hwi_res_fits(int device, size_t bytes);
hwrt_status hwi_res_tier_oom(int device, size_t bytes, const char *api);
/* Device memory for a tensor's data: make room (evicting), allocate, and on a
 * device-level OOM evict more. order: the stream that first writes the memory (the
 * fetch stream), or NULL; with it, a victim still used by queued work whose block
 * holds `bytes` hands over its block in that stream's order instead of the host waiting
 * for it. */
hwrt_status hwi_res_alloc(hwi_device *d, size_t bytes, hwi_tensor *const *keep, int nkeep,
                          hwi_stream *order, const char *api, void **out);
double hwi_res_ms_since(uint64_t t0_ns);
uint64_t hwi_res_now_ns(void);
/* "tensor 0x... (float32[4,8], 128 B)" for sentences. */
const char *hwi_res_describe(const hwi_tensor *t, char *buf, size_t len);

/* offload_plan.c (callers hold hwi_offload.mu) */
void hwi_plan_note_use(hwi_resident *r);
/* The best victim: the farthest next use along the learned order, else the least
 * recently used. Idle ones only, or (busy_ok) also those still used by queued work;
 * NULL if none. */
hwi_resident *hwi_plan_pick_victim(int device, hwi_tensor *const *keep, int nkeep, int busy_ok);
/* Take the busy victim `busy` (its block handed over in stream order, the fetch waiting
 * on the device for its last use) rather than the idle one? With a learned order only
 * when the idle one is needed within the prefetch window (prefetch_depth + 1 uses
 * ahead) and busy later: an idle victim lets the fetch start at once, which keeps the
 * link busy, while the busy one would hold the fetch until its last use has run. */
int hwi_plan_prefer_busy(const hwi_resident *busy, const hwi_resident *idle);
/* A victim whose device block can hold `bytes`, for a stream-ordered hand-over (it may
 * still be used by queued work): outside the prefetch window the smaller block, then
 * the oldest last use (the device frees it first, so the copy starts earliest); within
 * it the farthest next use; NULL if none. */
hwi_resident *hwi_plan_pick_handover(int device, size_t bytes, hwi_tensor *const *keep,
                                     int nkeep);
/* Usable bytes of the device block holding r's data (at least r's size). */
size_t hwi_res_block_bytes(const hwi_resident *r);
/* Prefetch the tensors used after r; keep[] (the current op's operands) stay resident. */
void hwi_plan_prefetch_ahead(hwi_resident *r, hwi_tensor *const *keep, int nkeep);
void hwi_plan_forget(hwi_resident *r);
/* Bytes of the device block a fetch of r takes: with a learned order, a tensor of at
 * least half the order's largest size gets a block of the largest size, so any such
 * victim's block can be handed over to any such fetch in stream order (one size class);
 * else r's size. */
size_t hwi_plan_block_bytes(const hwi_resident *r);
/* Bytes the fetch of r asks for: its block (hwi_plan_block_bytes), or, where the pool
 * cannot place a class block while r's own size fits a hole the class does not (the rest
 * of a segment: at D = 384 the 1.75 MiB next to a 2.25 MiB activation in its 4 MiB
 * segment) or a victim's block made for such a hole holds it, r's own size (*hole set):
 * more tensors stay on the device, and the class blocks stay for the tensors that need
 * them (blocks of other sizes, a recording step's, still become class blocks, so a
 * class-size fetch finds a class block to take in stream order). The prefetch asks for
 * room for the same size: checking for a class block only, it gave up on every tensor
 * that goes to a hole, which the op then fetched on demand. keep: the tensors that stay. */
size_t hwi_plan_fetch_bytes(const hwi_resident *r, hwi_tensor *const *keep, int nkeep,
                            int *hole);

#endif
