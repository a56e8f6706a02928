/* Checked handles: slots in chunks that are never freed, so a stale handle reads a slot
 * whose generation no longer matches instead of freed memory. Lookups take no lock. */
#include "handle.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define CHUNK_BITS 12
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define MAX_CHUNKS 4096               /* 16M slots */

typedef struct {
    _Atomic uint32_t gen;             /* odd = live */
    _Atomic uint32_t type;
    _Atomic(void *) obj;
    uint32_t next_free;
} slot;

static _Atomic(slot *) chunks[MAX_CHUNKS];
static uint32_t nchunks;
static uint32_t free_head = UINT32_MAX;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

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
    uint32_t gen = atomic_load(&s->gen) + 1;   /* even -> odd: live */
    atomic_store(&s->obj, obj);
    atomic_store(&s->type, (uint32_t)type);
    atomic_store_explicit(&s->gen, gen, memory_order_release);
    pthread_mutex_unlock(&lock);
    return (void *)encode(gen, idx, (uint32_t)type);
}

static slot *lookup(const void *h, hwi_htype type, uint32_t *gen_out)
{
    uintptr_t v = (uintptr_t)h;
    if (!(v & 1u) || ((v >> 1) & 0x7f) != (uintptr_t)type)
        return NULL;
    uint32_t idx = (uint32_t)((v >> 8) & 0xffffffu);
    uint32_t gen = (uint32_t)(v >> 32);
    slot *s = slot_at(idx);
    if (!s || !(gen & 1u) || atomic_load_explicit(&s->gen, memory_order_acquire) != gen ||
        atomic_load(&s->type) != (uint32_t)type)
        return NULL;
    *gen_out = gen;
    return s;
}

void *hwi_handle_get(const void *h, hwi_htype type)
{
    uint32_t gen;
    slot *s = lookup(h, type, &gen);
    return s ? atomic_load(&s->obj) : NULL;
}

void *hwi_handle_free(const void *h, hwi_htype type)
{
    pthread_mutex_lock(&lock);
    uint32_t gen;
    slot *s = lookup(h, type, &gen);
    if (!s) { pthread_mutex_unlock(&lock); return NULL; }
    void *obj = atomic_load(&s->obj);
    atomic_store(&s->gen, gen + 1);             /* odd -> even: dead */
    atomic_store(&s->obj, NULL);
    s->next_free = free_head;
    free_head = (uint32_t)(((uintptr_t)h >> 8) & 0xffffffu);
    pthread_mutex_unlock(&lock);
    return obj;
}


uint64_t hwi_handle_drain(hwi_htype type, void (*fn)(void *obj))
{
    void **objs = NULL;
    uint64_t n = 0, cap = 0;
    pthread_mutex_lock(&lock);
    for (uint32_t c = 0; c < nchunks; c++)
        for (uint32_t i = 0; i < CHUNK_SIZE; i++) {
            slot *s = &chunks[c][i];
            uint32_t gen = atomic_load(&s->gen);
            if (!(gen & 1u) || atomic_load(&s->type) != (uint32_t)type)
                continue;
            if (n == cap) {
                uint64_t nc = cap ? cap * 2 : 64;
                void **no = realloc(objs, nc * sizeof *no);
                if (!no) break;                  /* the rest stay live: better than dangling */
                objs = no;
                cap = nc;
            }
            objs[n++] = atomic_load(&s->obj);
            atomic_store(&s->gen, gen + 1);
            atomic_store(&s->obj, NULL);
            s->next_free = free_head;
            free_head = c * CHUNK_SIZE + i;
        }
    pthread_mutex_unlock(&lock);
    for (uint64_t i = 0; i < n; i++) fn(objs[i]);
    free(objs);
    return n;
}
