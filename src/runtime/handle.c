/* Checked, pinned handles: slots in chunks that are never freed, so a stale handle reads
 * a slot whose generation no longer matches instead of freed memory. Acquire and put
 * take no lock: one compare-and-swap / one atomic subtraction on the slot's state, which
 * packs the generation with the reference count so that "still live?" and "pin it" are
 * one step (a destroy cannot slip between them). */
#include "handle.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define CHUNK_BITS 12
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define MAX_CHUNKS 4096               /* 16M slots */

/* A slot whose dead generation reaches this is retired instead of reused: a handle
 * holds 32 bits of generation, so reuse past it would wrap and let a handle from 2^31
 * lives ago match a live object. Costs one slot per 2^31 destroys. (Tests of the
 * retirement build handle.c with a small value.) */
#ifndef HWI_HANDLE_RETIRE_GEN
#define HWI_HANDLE_RETIRE_GEN 0xFFFFFFF0u
#endif

typedef struct {
    _Atomic uint64_t state;           /* generation << 32 | references; odd generation = live */
    _Atomic uint32_t type;
    _Atomic(void *) obj;
    uint32_t next_free;
} slot;

static _Atomic(slot *) chunks[MAX_CHUNKS];
static uint32_t nchunks;
static uint32_t free_head = UINT32_MAX;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(hwi_handle_dtor) dtors[HWI_H_TYPES];

#define GEN(st) ((uint32_t)((st) >> 32))
#define REFS(st) ((uint32_t)(st))

/* handle = gen (32 bits) << 32 | index (24 bits) << 8 | type << 1 | 1 (never NULL) */
static inline uintptr_t encode(uint32_t gen, uint32_t idx, uint32_t type)
{
    return ((uintptr_t)gen << 32) | ((uintptr_t)idx << 8) | ((uintptr_t)type << 1) | 1u;
}

static slot *slot_at(uint32_t idx)
{
    uint32_t c = idx >> CHUNK_BITS;
    if (c >= MAX_CHUNKS) return NULL;
    slot *ch = atomic_load_explicit(&chunks[c], memory_order_acquire);
    return ch ? &ch[idx & (CHUNK_SIZE - 1)] : NULL;
}

void hwi_handle_set_dtor(hwi_htype type, hwi_handle_dtor fn)
{
    atomic_store(&dtors[(unsigned)type % HWI_H_TYPES], fn);
}

void *hwi_handle_new(hwi_htype type, void *obj)
{
    pthread_mutex_lock(&lock);
    if (free_head == UINT32_MAX) {
        if (nchunks == MAX_CHUNKS) { pthread_mutex_unlock(&lock); return NULL; }
        slot *ch = calloc(CHUNK_SIZE, sizeof *ch);
        if (!ch) { pthread_mutex_unlock(&lock); return NULL; }
        for (uint32_t i = 0; i < CHUNK_SIZE; i++)
            ch[i].next_free = (i + 1 < CHUNK_SIZE) ? nchunks * CHUNK_SIZE + i + 1 : UINT32_MAX;
        atomic_store_explicit(&chunks[nchunks], ch, memory_order_release);
        free_head = nchunks * CHUNK_SIZE;
        nchunks++;
    }
    uint32_t idx = free_head;
    slot *s = slot_at(idx);
    free_head = s->next_free;
    uint32_t gen = GEN(atomic_load(&s->state)) + 1;    /* even -> odd: live */
    atomic_store(&s->obj, obj);
    atomic_store(&s->type, (uint32_t)type);
    atomic_store_explicit(&s->state, (uint64_t)gen << 32 | 1u, memory_order_release);
    pthread_mutex_unlock(&lock);
    return (void *)encode(gen, idx, (uint32_t)type);
}

/* The slot h names and the generation it claims, or NULL for a malformed handle. */
static slot *decode(const void *h, hwi_htype type, uint32_t *gen)
{
    uintptr_t v = (uintptr_t)h;
    if (!(v & 1u) || ((v >> 1) & 0x7f) != (uintptr_t)type)
        return NULL;
    *gen = (uint32_t)(v >> 32);
    if (!(*gen & 1u))
        return NULL;
    return slot_at((uint32_t)((v >> 8) & 0xffffffu));
}

/* The last reference went (generation dead, count 0): free the object, then the slot
 * (back to the free list unless it is retired). */
static hwrt_status last_ref(slot *s, uint32_t idx, uint32_t dead_gen, void (*fn)(void *))
{
    void *obj = atomic_load(&s->obj);
    hwi_handle_dtor d = atomic_load(&dtors[atomic_load(&s->type) % HWI_H_TYPES]);
    pthread_mutex_lock(&lock);
    atomic_store(&s->obj, NULL);
    if (dead_gen < HWI_HANDLE_RETIRE_GEN) {
        s->next_free = free_head;
        free_head = idx;
    }
    pthread_mutex_unlock(&lock);
    if (fn) { fn(obj); return HWRT_SUCCESS; }
    return d ? d(obj) : HWRT_SUCCESS;
}

void *hwi_handle_acquire(const void *h, hwi_htype type)
{
    uint32_t gen;
    slot *s = decode(h, type, &gen);
    if (!s)
        return NULL;
    uint64_t st = atomic_load_explicit(&s->state, memory_order_acquire);
    do {
        if (GEN(st) != gen)
            return NULL;
    } while (!atomic_compare_exchange_weak_explicit(&s->state, &st, st + 1,
                                                    memory_order_acq_rel, memory_order_acquire));
    if (atomic_load(&s->type) != (uint32_t)type) {      /* a forged type bit */
        hwi_handle_put(h);
        return NULL;
    }
    return atomic_load(&s->obj);
}

void hwi_handle_pin(const void *h)
{
    slot *s = slot_at((uint32_t)(((uintptr_t)h >> 8) & 0xffffffu));
    if (s) atomic_fetch_add(&s->state, 1);
}

hwrt_status hwi_handle_put(const void *h)
{
    uint32_t idx = (uint32_t)(((uintptr_t)h >> 8) & 0xffffffu);
    slot *s = slot_at(idx);
    if (!s)
        return HWRT_SUCCESS;
    uint64_t prev = atomic_fetch_sub_explicit(&s->state, 1, memory_order_acq_rel);
    if (REFS(prev) != 1)
        return HWRT_SUCCESS;
    return last_ref(s, idx, GEN(prev), NULL);
}

/* Make h dead and drop the handle's reference; 1 if this call did it. *gone is set when
 * that was the last reference (the caller frees through last_ref). */
static int kill_slot(slot *s, uint32_t gen, int *gone)
{
    uint64_t st = atomic_load_explicit(&s->state, memory_order_acquire);
    uint64_t next;
    do {
        if (GEN(st) != gen)
            return 0;
        next = ((uint64_t)(gen + 1) << 32) | (REFS(st) - 1);
    } while (!atomic_compare_exchange_weak_explicit(&s->state, &st, next,
                                                    memory_order_acq_rel, memory_order_acquire));
    *gone = REFS(next) == 0;
    return 1;
}

int hwi_handle_kill(const void *h, hwi_htype type, hwrt_status *st)
{
    uint32_t gen;
    slot *s = decode(h, type, &gen);
    int gone = 0;
    if (st) *st = HWRT_SUCCESS;
    if (!s || atomic_load(&s->type) != (uint32_t)type || !kill_slot(s, gen, &gone))
        return 0;
    if (gone) {
        hwrt_status r = last_ref(s, (uint32_t)(((uintptr_t)h >> 8) & 0xffffffu), gen + 1, NULL);
        if (st) *st = r;
    }
    return 1;
}

int hwi_handle_live(const void *h, hwi_htype type)
{
    uint32_t gen;
    slot *s = decode(h, type, &gen);
    return s && GEN(atomic_load(&s->state)) == gen && atomic_load(&s->type) == (uint32_t)type;
}

uint64_t hwi_handle_drain(hwi_htype type, void (*fn)(void *obj))
{
    uint64_t n = 0;
    pthread_mutex_lock(&lock);
    uint32_t nc = nchunks;
    pthread_mutex_unlock(&lock);
    for (uint32_t c = 0; c < nc; c++)
        for (uint32_t i = 0; i < CHUNK_SIZE; i++) {
            slot *s = slot_at(c * CHUNK_SIZE + i);
            uint64_t st = atomic_load(&s->state);
            int gone = 0;
            if (!(GEN(st) & 1u) || atomic_load(&s->type) != (uint32_t)type ||
                !kill_slot(s, GEN(st), &gone))
                continue;
            n++;
            if (gone) last_ref(s, c * CHUNK_SIZE + i, GEN(st) + 1, fn);
        }
    return n;
}
