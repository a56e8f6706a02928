/* The caching pool's internal structures and functions, shared by its files (nothing
 * here is visible above src/mem): pool.c (the pool object; its header comment describes
 * the design), pool_alloc.c (allocation policy, entry points), pool_grow.c (new
 * segments, expandable mapping), pool_release.c (release and retry, empty_cache),
 * pool_events.c (cross-stream reuse), pool_free.c (free, record_stream, lookups),
 * pool_bins.c (free-block bins), pool_addr.c (their address-ordered index), pool_seg.c
 * (segments and expandable address ranges), pool_map.c (pointer registry), pool_stats.c
 * (figures, summary, snapshot, leak report), pool_tcache.c (thread caches). One hwi_pool
 * per device (hwi_device.pool); everything of a pool is guarded by its own lock
 * (hwi_pool.mu). */
#ifndef HWI_POOL_INTERNAL_H
#define HWI_POOL_INTERNAL_H

#include "pool.h"
#include "mem_events.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define POOL_ROUND ((size_t)512)                 /* every block is a multiple of this */
#define POOL_SMALL_MAX ((size_t)1 << 20)         /* requests <= 1 MiB use the small pool */
#define POOL_SMALL_SEG ((size_t)2 << 20)         /* small pool segment size */
#define POOL_LARGE_MIN_SPLIT ((size_t)1 << 20)   /* remainders of dedicated blocks must exceed this */
#define POOL_SHARED_MIN ((size_t)256 << 10)      /* plain mode: requests above it (and below the
                                                    pool's shared_below) share PK_SHARED segments */
#define POOL_OVERSIZE_SLACK ((size_t)20 << 20)   /* oversize reuse tolerance (PyTorch's) */
#define POOL_DEDICATED_SLACK ((size_t)4 << 20)   /* what a request may leave of a dedicated block */
#define POOL_EXACT_BINS 4096                     /* one bin per 512 B step up to 2 MiB */
#define POOL_NBINS (POOL_EXACT_BINS + 44 * 8)    /* + 8 sub-bins per power of two above */
#define POOL_SITE_DEPTH 6
#define PADDR_BIN POOL_NBINS                     /* pblock.bin of a block in the address index */

/* Which free blocks a request may take (each (device, stream, kind) has its own bins):
 * PK_SMALL 2 MiB segments; PK_LARGE dedicated segments (and, with expandable segments,
 * everything above 1 MiB); PK_SHARED, in plain mode the shared segments (kept apart
 * from dedicated ones), with expandable segments a range of its own for 256 KiB - 1 MiB
 * (see pool_kind_of in pool_alloc.c). */
enum { PK_SMALL, PK_LARGE, PK_SHARED };
enum { B_FREE, B_ALLOC, B_PENDING };

typedef struct pseg pseg;
typedef struct spool spool;
typedef struct hwi_pool dpool;     /* the device's pool (pool.h: hwi_pool) */

typedef struct pblock {
    /* first cache line: what the thread cache's fast path touches */
    char *base;
    size_t size;                 /* rounded size (what allocated_bytes counts) */
    size_t requested;            /* the caller's size (requested_bytes) */
    _Atomic uint64_t tc_gen;     /* bumped when the block leaves a thread's hands (never reset) */
    _Atomic int in_tc;           /* parked in a thread cache: freed for the caller, not in bins */
    int owned;                   /* a tensor's data: hwrt_free/hwrt_free_async refuse it */
    int nuses, cap_uses;         /* streams recorded with hwi_pool_record_stream */
    char *tag;
    hwrt_bstream **uses;
    /* the rest: pool bookkeeping under the lock */
    pseg *seg;
    struct pblock *prev, *next;  /* address neighbours inside the segment */
    struct pblock *fprev, *fnext;/* bin list (FREE) or pending list (PENDING) */
    struct pblock *tl, *tr;      /* children in the address index (bin == PADDR_BIN) */
    size_t tmax;                 /* address index: largest size in this subtree */
    int state;
    int bin;                     /* -1: in no index; PADDR_BIN: the address index */
    int counted;                 /* counted in inactive_split while in a bin */
    int nevs;
    uint64_t freed_at;           /* hwi free sequence when it last became free */
    hwrt_bevent **evs;           /* PENDING: events recorded on those streams at free */
    void *site[POOL_SITE_DEPTH];
    int nsite;
    uint64_t alloc_seq;          /* allocation order, for snapshots and leak reports */
} pblock;

struct pseg {
    dpool *dp;
    spool *sp;                   /* owner: the (stream, kind) pool its free blocks go to */
    char *base;
    size_t size;                 /* bytes (address range for expandable segments) */
    size_t mapped;               /* bytes counted in reserved */
    int expandable;
    int dedicated;               /* plain large segment sized for one request (not a shared one) */
    unsigned char *gmap;         /* expandable: 1 per mapped granule */
    uint32_t *gref;              /* expandable: blocks not FREE (allocated, pending) touching
                                    each granule */
    size_t gran, ngran;
    size_t held_mapped;          /* expandable: mapped granules with gref > 0 */
    pblock *first;
    pseg *next;                  /* device's segment list */
    uint64_t created_seq;
};

struct spool {
    hwrt_bstream *owner;         /* NULL: no stream given (hwrt_malloc, tensors) */
    int kind;
    int addr_order;              /* expandable large ranges: address-ordered fit (pbin_search);
                                    set by pbin_use_addr_order, never cleared */
    pblock *aroot;               /* addr_order: every free block, in the address index */
    dpool *dp;
    spool *next;
    pblock *bins[POOL_NBINS];
    uint64_t bitmap[(POOL_NBINS + 63) / 64];
    uint64_t summary[2];         /* bit w: bitmap[w] is non-zero */
};

struct hwi_pool {
    pthread_mutex_t mu;          /* guards everything of this pool */
    hwi_device *dev;             /* the owner; every backend call goes through hwi_dev_* */
    int device;                  /* its device's process-wide id (figures, sentences, the sync hook; runtime/device.h) */
    struct hwi_pool *_Atomic next_pool;   /* every pool, for pointer lookups (pool_map.c) */
    _Atomic uintptr_t lo, hi;    /* address bounds of every segment this pool held */
    uint64_t free_seq;           /* bumped whenever a block becomes free */
    pblock *spare;               /* recycled block structs */
    pblock **slots;              /* live blocks by base (pool_map.c); NULL = empty */
    size_t nslots, nused;        /* nslots is a power of two */
    pseg **sidx;                 /* segments sorted by base (pool_map.c) */
    size_t nsidx, cap_sidx;
    spool *spools;
    spool *last;                 /* last spool used: the hot path skips the list walk */
    pseg *segs;
    pblock *pending;             /* blocks waiting for stream events */
    hwrt_bevent **evcache;       /* idle backend events for reuse */
    int nev, cap_ev;
    hwrt_mem_stats st;
    uint64_t alloc_seq;
    size_t hw_reserved;          /* highest reserved ever (not reset by reset_peaks) */
    size_t gc_need;              /* bytes the allocation asking for a collection needs */
    size_t trim_need;            /* bytes the allocation asking for a trim needs */
    size_t shared_seg, shared_below;   /* large requests below shared_below share segments */
    size_t reported_resv, reported_alloc;   /* last figures given to the monitor */
    unsigned report_skips;
};

/* What an allocation attempt asks of its caller besides its status (an out-parameter,
 * never a status): sync the device, clean up, try again. The attempt then returns
 * HWRT_ERROR_OUT_OF_MEMORY without setting the error sentence. */
typedef enum pool_want { WANT_NONE, WANT_GC, WANT_TRIM } pool_want;

static inline size_t pool_round_to(size_t n, size_t g) { return (n + g - 1) / g * g; }

/* pool.c: the device's pool object and its (stream, kind) pools. */
dpool *pool_create(hwi_device *d);            /* NULL: host OOM */
static inline dpool *pool_get(hwi_device *d)   /* the device's pool, created on first use */
{
    dpool *dp = __atomic_load_n(&d->pool, __ATOMIC_ACQUIRE);
    return dp ? dp : pool_create(d);
}
spool *pool_spool_find(dpool *dp, hwrt_bstream *bs, int kind);   /* found or made; NULL: host OOM */
static inline spool *pool_spool(dpool *dp, hwrt_bstream *bs, int kind)
{
    spool *sp = dp->last;                      /* the hot path skips the list walk */
    if (sp && sp->owner == bs && sp->kind == kind) return sp;
    return pool_spool_find(dp, bs, kind);
}
/* The profiler's view of an allocation, free or release, with the device's figures. */
void pool_mem_event(hwi_mem_event_kind kind, const hwi_device *d, const void *p, size_t bytes);

/* pool_alloc.c: allocation policy and the allocation entry points. */
/* The whole allocation of bytes on stream bs under the lock. */
hwrt_status pool_alloc_locked(dpool *dp, hwrt_bstream *bs, size_t bytes, pblock **b);
size_t pool_round_size(size_t n);
int pool_use_expandable(const dpool *dp);
int pool_kind_of(const dpool *dp, size_t rsize);
/* One attempt at a request of req bytes (rsize rounded) on stream bs, under the lock. */
hwrt_status pool_try_alloc(dpool *dp, hwrt_bstream *bs, size_t req, size_t rsize,
                           int no_gc, int no_trim, pool_want *want, pblock **out);
/* Hand out b (out of the bins): split off the rest, map what it needs, count it. */
hwrt_status pool_hand_out(dpool *dp, pblock *b, size_t req, size_t rsize, int no_gc,
                          int no_trim, pool_want *want, pblock **out);
/* b (out of the bins) keeps only its last rsize bytes when hand_out would split it. */
void pool_place_at_end(pblock *b, size_t rsize, size_t msz);

/* pool_grow.c: new memory. */
size_t pool_device_total(dpool *dp);
/* A fresh segment (or expandable range) for sp; its whole-range block, out of the bins. */
hwrt_status pool_grow(dpool *dp, spool *sp, size_t rsize, size_t cap, int no_gc, int no_trim,
                      pool_want *want, pblock **out);
/* Map what an expandable block needs; *want asks the caller to sync and clean first. */
hwrt_status pool_map_block(dpool *dp, pblock *b, size_t cap, int no_gc, int no_trim,
                           pool_want *want);

/* pool_release.c: release and retry under pressure. */
int pool_gc_wanted(dpool *dp, size_t need, size_t cap);
int pool_trimmable(dpool *dp);
/* Release cached memory freed before snap, down to target reserved (SIZE_MAX: all). */
void pool_release_cached(dpool *dp, uint64_t snap, size_t target);
/* Synchronize the device with the lock released; *snap: the free sequence before it. */
hwrt_status pool_sync_unlocked(dpool *dp, const char *api, uint64_t *snap);
/* After a failed first attempt (st, want) of pool_alloc_locked (pool_alloc.c): sync,
 * release, retry, the last resort, OOM. */
hwrt_status pool_alloc_retry(dpool *dp, hwrt_bstream *bs, size_t bytes, size_t rsize,
                             hwrt_status st, pool_want want, pblock **b);

/* pool_events.c: cross-stream reuse. */
/* Move PENDING blocks whose events have all completed to the free bins. */
void pool_process_events(dpool *dp);
/* At free: an event on each stream recorded on b (b->evs); uses cleared. */
void pool_record_events(dpool *dp, pblock *b);
/* Stream bs (not b's own) uses the live block b. */
hwrt_status pool_add_use(pblock *b, hwrt_bstream *bs);

/* pool_stats.c: the OOM status and sentence (requested, device, pool breakdown, cause). */
hwrt_status hwi_pool_oom(dpool *dp, size_t req, size_t rsize, const char *cause);

/* pool_tcache.c: per-thread cache of hot small blocks (see there). */
/* Before taking dp's lock: the calling thread's cache, when it holds blocks of another
 * pool, gives them back to that pool (under that pool's lock). */
void tc_leave_other(dpool *dp);
void tc_slow_enter(dpool *dp, hwrt_bstream *bs);       /* under dp's lock */
void tc_note_alloc(dpool *dp, hwrt_bstream *bs, pblock *b);
/* Under dp's lock: the calling thread's cache, if it is dp's, gives its blocks back. */
void tc_flush_own(dpool *dp);
/* Under dp's lock: every thread's cache flushes at its next pool call; the calling
 * thread's at once when it is dp's. */
void tc_request_flush(dpool *dp);
void tc_view(const dpool *dp, hwrt_mem_stats *st);
/* dp is being destroyed: every cache of dp forgets its blocks and shares. */
void tc_forget_pool(dpool *dp);

/* pool_map.c: live blocks by base address, segments by range (per pool, under its
 * lock), and the list of every pool. */
int pmap_put(dpool *dp, pblock *b);
pblock *pmap_take(dpool *dp, const void *base);
pblock *pmap_get(dpool *dp, const void *base);
int pseg_index_add(pseg *s);
void pseg_index_del(pseg *s);
pseg *pseg_index_find(dpool *dp, const void *p);
void pmap_clear(dpool *dp);
void pool_list_add(dpool *dp);
void pool_list_del(dpool *dp);
dpool *pool_list_first(void);
/* The pool whose segments contain p, returned LOCKED (its segment in *seg), or NULL. */
dpool *pool_lock_containing(const void *p, pseg **seg);

/* pool_seg.c: backend segments and expandable ranges. */
size_t pseg_granule(dpool *dp);
hwrt_status pseg_new(dpool *dp, spool *sp, size_t bytes, int expandable, pseg **out);
/* Map every granule that [p, p+bytes) touches; counts into reserved. */
hwrt_status pseg_map_range(pseg *s, char *p, size_t bytes, size_t cap);
/* Bytes of granules [p, p+bytes) would need mapped. */
size_t pseg_unmapped_in(pseg *s, char *p, size_t bytes);
/* Unmap granules fully inside the free block b; returns bytes unmapped. */
size_t pseg_trim_block(pblock *b);
/* b (of an expandable range) stops being free / becomes free again: the granules it
 * touches count it (pseg_hold), or no longer (pseg_unhold). No-ops for plain segments. */
void pseg_hold(pblock *b);
void pseg_unhold(pblock *b);
/* Does s hold a mapped granule that no live or pending block touches (one trimming
 * could unmap)? O(1). */
int pseg_has_idle_pages(const pseg *s);
void pseg_release(pseg *s);

/* pool_bins.c: free-block bins and block bookkeeping. */
static inline void pool_stat_add(hwrt_stat *s, int64_t n)
{
    s->current += n;
    s->allocated += n;
    if (s->current > s->peak) s->peak = s->current;
}
static inline void pool_stat_sub(hwrt_stat *s, int64_t n)
{
    s->current -= n;
    s->freed += n;
}
pblock *pblock_new(dpool *dp);
void pblock_put(dpool *dp, pblock *b);
void pblock_spare_free(dpool *dp);
void pbin_insert(spool *sp, pblock *b);
void pbin_remove(spool *sp, pblock *b);
/* The free block a request of size takes: best fit, or, in a pool of expandable ranges
 * (addr_order), the lowest-addressed acceptable one (top: the highest). */
pblock *pbin_search(spool *sp, size_t size, size_t msz, int top);
/* sp keeps its free blocks in address order from now on (its blocks move there). */
void pbin_use_addr_order(spool *sp);
/* Would the pool hand out b for a request of size bytes (max_split_size msz)? */
int pblock_acceptable(const pblock *b, size_t size, size_t msz);

/* pool_addr.c: the address-ordered index of an addr_order pool's free blocks. */
void paddr_insert(spool *sp, pblock *b);
void paddr_remove(spool *sp, pblock *b);
/* The lowest-addressed acceptable block of at least size (top: the highest), or NULL. */
pblock *paddr_search(spool *sp, size_t size, size_t msz, int top);
pblock *pblock_coalesce_insert(pblock *b);
void pblock_split(pblock *b, size_t size);
/* Cut b (out of the bins) to its last size bytes; the front goes back to the bins. */
void pblock_split_high(pblock *b, size_t size);
int pblock_is_split(const pblock *b);

/* Small helpers of several pool files, inline for their hot paths. */

/* Under the lock: should the monitor hear about dp now? Every change of reserved (what
 * a device monitor shows as used); allocated once it moved by max(64 MiB, reserved/8),
 * or otherwise every 1024th locked call that moved it, so hot loops do not publish on
 * every call. The thread caches' shares (<= 2 MiB per thread) are not included. */
static inline int pool_report_due(dpool *dp, size_t *resv, size_t *alloc)
{
    *resv = (size_t)dp->st.reserved_bytes.current;
    *alloc = (size_t)dp->st.allocated_bytes.current;
    if (*resv == dp->reported_resv && *alloc == dp->reported_alloc) return 0;
    size_t moved = *alloc > dp->reported_alloc ? *alloc - dp->reported_alloc
                                               : dp->reported_alloc - *alloc;
    size_t step = *resv / 8 > ((size_t)64 << 20) ? *resv / 8 : (size_t)64 << 20;
    if (*resv == dp->reported_resv && moved < step && ++dp->report_skips < 1024) return 0;
    dp->report_skips = 0;
    dp->reported_resv = *resv;
    dp->reported_alloc = *alloc;
    return 1;
}

/* A block becomes free: active drops, it merges with free neighbours. freed_at was set
 * when the caller freed it (a PENDING block keeps that time: a device sync begun after
 * it covers its owner stream's work, and its events have completed). */
static inline void pool_make_free(pblock *b)
{
    dpool *dp = b->seg->dp;
    pool_stat_sub(&dp->st.active, 1);
    pool_stat_sub(&dp->st.active_bytes, (int64_t)b->size);
    if (b->seg->expandable) pseg_unhold(b);
    pblock_coalesce_insert(b);
}

/* For pool_headroom.c (under the lock): the most reserved may grow for a request of
 * rsize without the pool synchronizing the device first (the high-water and
 * garbage-collection rules: in plain mode 0 or SIZE_MAX, as the segment grow asks for
 * first decides; with expandable segments the bytes of pages; pool_grow.c). */
size_t pool_unsynced_growth(dpool *dp, size_t rsize, size_t cap);

#endif
