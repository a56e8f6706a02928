/* Per-thread cache of hot small blocks: the lock-free fast path of the pool.
 *
 * A thread that frees a block of <= 64 KiB it allocated itself (for the same device and
 * stream, with no other stream recorded on it, untagged) parks it in its cache instead of taking
 * the pool lock; its next request of that exact size takes it back. Stream order makes
 * that safe exactly as for the pool's own per-stream reuse. Parked blocks stay in the
 * pool's registry marked in_tc (so lookups treat them as freed) and count as freed in
 * every figure: the thread keeps its share of the counters in relaxed atomics that the
 * figure readers add up under the pool lock, so current values are exact. Peaks are
 * raised only under the lock: a fast allocation may raise the total only up to the
 * peaks recorded when the thread last took the lock (its headroom); past that it takes
 * the slow path. For one thread peaks are exact; with several, another thread's slow
 * path may use the same headroom meanwhile, so a peak may miss up to TC_MAX_BYTES per
 * thread.
 *
 * Slow paths (empty_cache, the retry before OOM, trimming, resetting the peaks) flush the
 * calling thread's cache at once and ask the other threads to flush theirs at their next call; a
 * stream's destruction does the same; destroying a pool (hwrt_shutdown) makes every
 * cache forget that pool's blocks; thread exit flushes. thread_cache:false turns the cache off (exact best fit, e.g. for tests).
 *
 * A cache holds blocks of one pool (one device) at a time; its blocks go back under that
 * pool's lock. The registry of caches has its own lock (tc_mu), taken after a pool's. */
#include "pool_tcache.h"
#include "alloc_trace.h"

#include <stdlib.h>
#include <string.h>

/* initial-exec: one pointer of static TLS, so the fast path has no __tls_get_addr call */
__thread tcache *hwi_tc __attribute__((tls_model("initial-exec")));
_Atomic uint64_t hwi_tc_flush_gen = 1;
static tcache *registry;                   /* under tc_mu */
static pthread_mutex_t tc_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

/* ---- under the lock of the cache's pool (t->dp) ---- */

/* Add a share (sign +1) into counters: allocation and active move together. */
static void apply(const tcache *t, hwrt_mem_stats *st)
{
    hwrt_stat *s[5] = {&st->allocation, &st->active, &st->allocated_bytes, &st->active_bytes,
                       &st->requested_bytes};
    static const int which[5] = {C_COUNT, C_COUNT, C_BYTES, C_BYTES, C_REQ};
    for (int i = 0; i < 5; i++) {
        int64_t a = ld((_Atomic int64_t *)&t->alloc[which[i]]);
        int64_t f = ld((_Atomic int64_t *)&t->freed[which[i]]);
        s[i]->current += a - f;
        s[i]->allocated += a;
        s[i]->freed += f;
    }
}

static int64_t room(const hwrt_stat *a, const hwrt_stat *b)
{
    int64_t x = a->peak - a->current, y = b->peak - b->current;
    return x < y ? x : y;
}

/* share is 0 here (just folded) */
static void set_headroom(tcache *t)
{
    const hwrt_mem_stats *st = &t->dp->st;
    t->headroom[C_COUNT] = room(&st->allocation, &st->active);
    t->headroom[C_BYTES] = room(&st->allocated_bytes, &st->active_bytes);
    t->headroom[C_REQ] = room(&st->requested_bytes, &st->requested_bytes);
}

/* The thread's share into the pool's counters. Until the next fold, fast allocations
 * may raise the total up to the recorded peaks (allocation and active move together). */
static void fold(tcache *t)
{
    memset(t->headroom, 0, sizeof t->headroom);
    if (!t->dp) return;
    apply(t, &t->dp->st);
    set_headroom(t);
    for (int i = 0; i < C_N; i++) {
        atomic_store_explicit(&t->alloc[i], 0, memory_order_relaxed);
        atomic_store_explicit(&t->freed[i], 0, memory_order_relaxed);
    }
}

/* Parked blocks go back to the pool's bins (already counted as freed). */
static void flush(tcache *t)
{
    fold(t);
    dpool *dp = t->dp;
    for (int i = 0; i < TC_NBINS; i++) {
        tc_bin *bin = &t->bins[i];
        while (bin->n) {
            pblock *b = bin->blk[--bin->n];
            if (!dp) continue;                 /* none: its pool forgot this cache */
            atomic_store_explicit(&b->in_tc, 0, memory_order_relaxed);
            atomic_fetch_add(&b->tc_gen, 1);
            pmap_take(dp, b->base);
            b->freed_at = ++dp->free_seq;
            pblock_coalesce_insert(b);
        }
    }
    memset(t->ents, 0, sizeof t->ents);
    t->bytes = 0;
}

/* The cache's blocks back to its pool, under that pool's lock; it then belongs to none. */
static void leave(tcache *t)
{
    dpool *dp = t->dp;
    if (!dp) return;
    pthread_mutex_lock(&dp->mu);
    flush(t);
    pthread_mutex_lock(&tc_mu);
    t->dp = NULL;
    t->owner = NULL;
    pthread_mutex_unlock(&tc_mu);
    pthread_mutex_unlock(&dp->mu);
}

static void thread_exit(void *arg)
{
    tcache *t = arg;
    leave(t);
    pthread_mutex_lock(&tc_mu);
    for (tcache **pp = &registry; *pp; pp = &(*pp)->next)
        if (*pp == t) { *pp = t->next; break; }
    pthread_mutex_unlock(&tc_mu);
    free(t);
}

static void make_key(void) { pthread_key_create(&key, thread_exit); }

void tc_leave_other(dpool *dp)
{
    tcache *t = hwi_tc;
    if (t && t->dp && t->dp != dp) leave(t);
}

void tc_slow_enter(dpool *dp, hwrt_bstream *bs)
{
    tcache *t = hwi_tc;
    if (!t) {
        pthread_once(&key_once, make_key);
        t = calloc(1, sizeof *t);
        if (!t) return;
        hwi_tc = t;
        pthread_setspecific(key, t);
        pthread_mutex_lock(&tc_mu);
        t->next = registry;
        registry = t;
        pthread_mutex_unlock(&tc_mu);
    }
    if (t->dp && t->dp != dp) {                /* tc_leave_other was not called: stay off */
        t->enabled = 0;
        return;
    }
    uint64_t fg = atomic_load(&hwi_tc_flush_gen);
    if (t->flush_gen != fg || t->dp != dp || t->owner != bs) {
        flush(t);                              /* a new key, or a flush was asked for */
        t->flush_gen = fg;
        pthread_mutex_lock(&tc_mu);
        t->dp = dp;
        t->owner = bs;
        pthread_mutex_unlock(&tc_mu);
        t->device = dp->device;
        fold(t);                               /* the headroom of the new key */
    } else {
        fold(t);                               /* the pool's counters become exact */
    }
    t->cfg_gen = hwi_cfg_generation();
    t->enabled = hwi_cfg_int(HWI_CFG_THREAD_CACHE) && !hwi_cfg_int(HWI_CFG_RECORD_ALLOC_SITES) &&
                 !hwi_alloc_trace_active();   /* a trace records every event in pool order */
}

void tc_note_alloc(dpool *dp, hwrt_bstream *bs, pblock *b)
{
    tcache *t = hwi_tc;
    if (t && t->dp == dp) set_headroom(t);     /* the slow allocation moved current */
    if (!t || !t->enabled || t->dp != dp || t->owner != bs || b->size > TC_MAX_SIZE) return;
    t->ents[ent_of(b->base)] = (tc_ent){b, atomic_load(&b->tc_gen), b->size};
}

void tc_flush_own(dpool *dp)
{
    if (hwi_tc && hwi_tc->dp == dp) flush(hwi_tc);
}

void tc_request_flush(dpool *dp)
{
    atomic_fetch_add(&hwi_tc_flush_gen, 1);
    tc_flush_own(dp);
}

void tc_view(const dpool *dp, hwrt_mem_stats *st)
{
    pthread_mutex_lock(&tc_mu);
    for (tcache *t = registry; t; t = t->next)
        if (t->dp == dp) apply(t, st);
    pthread_mutex_unlock(&tc_mu);
}

/* dp is destroyed (hwrt_shutdown): its caches forget its blocks and shares. */
void tc_forget_pool(dpool *dp)
{
    pthread_mutex_lock(&tc_mu);
    for (tcache *t = registry; t; t = t->next) {
        if (t->dp != dp) continue;
        for (int i = 0; i < C_N; i++) {
            atomic_store(&t->alloc[i], 0);
            atomic_store(&t->freed[i], 0);
        }
        memset(t->bins, 0, sizeof t->bins);
        memset(t->ents, 0, sizeof t->ents);
        t->bytes = 0;
        t->dp = NULL;
        t->owner = NULL;
    }
    pthread_mutex_unlock(&tc_mu);
}
