/* The caching pool's internal structures, shared by pool.c (allocation policy),
 * pool_seg.c (segments and expandable address ranges), pool_stats.c (figures, summary,
 * snapshot, leak report) and pool_map.c (pointer registry). One hwi_pool per device
 * (hwi_device.pool); everything of a pool is guarded by its own lock (hwi_pool.mu);
 * nothing here is visible above src/mem. */
#ifndef HWI_POOL_INTERNAL_H
#define HWI_POOL_INTERNAL_H

#include "pool.h"

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

/* Which free blocks a request may take (each (device, stream, kind) has its own bins):
 * PK_SMALL 2 MiB segments; PK_LARGE dedicated segments (and, with expandable segments,
 * everything above 1 MiB); PK_SHARED, plain mode only, the shared segments (kept apart
 * from dedicated ones, see kind_of in pool.c). */
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
    int state;
    int bin;
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
    size_t gran, ngran;
    pblock *first;
    pseg *next;                  /* device's segment list */
    uint64_t created_seq;
};

struct spool {
    hwrt_bstream *owner;         /* NULL: no stream given (hwrt_malloc, tensors) */
    int kind;
    int addr_order;              /* expandable large ranges: address-ordered fit (pbin_search) */
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
void pseg_release(pseg *s);

/* pool.c helpers used by the other pool files. */
void pool_stat_add(hwrt_stat *s, int64_t n);
void pool_stat_sub(hwrt_stat *s, int64_t n);
pblock *pblock_new(dpool *dp);
void pblock_put(dpool *dp, pblock *b);
void pblock_spare_free(dpool *dp);
void pbin_insert(spool *sp, pblock *b);
void pbin_remove(spool *sp, pblock *b);
/* The free block a request of size takes: best fit, or, in a pool of expandable ranges
 * (addr_order), the lowest-addressed acceptable one (top: the highest). */
pblock *pbin_search(spool *sp, size_t size, size_t msz, int top);
pblock *pblock_coalesce_insert(pblock *b);
void pblock_split(pblock *b, size_t size);
/* Cut b (out of the bins) to its last size bytes; the front goes back to the bins. */
void pblock_split_high(pblock *b, size_t size);
int pblock_is_split(const pblock *b);

/* pool.c and pool_bins.c: the allocation policy as pool_headroom.c reads it (under the
 * lock): the request's rounding and kind, settling completed frees, the most reserved
 * may grow for a request of rsize without the pool synchronizing the device first (the
 * high-water and garbage-collection rules: in plain mode 0 or SIZE_MAX, as the segment
 * grow asks for first decides; with expandable segments the bytes of pages), and
 * whether b would be handed out for a request of size. */
size_t pool_round_size(size_t n);
int pool_kind_of(const dpool *dp, size_t rsize);
void pool_process_events(dpool *dp);
size_t pool_unsynced_growth(dpool *dp, size_t rsize, size_t cap);
int pbin_acceptable(const pblock *b, size_t size, size_t msz);

#endif
