/* The record chunk pool.
 *
 * Chunk memory is touched before a session needs it and reused by later sessions.
 * Measured on this project's VMs (nested virtualization): the first write to a fresh
 * page costs ~15 us, so writing records into new memory costs 340-600 ns each, into
 * reused memory ~6 ns. hwrt_profiler_start therefore fills a pool of touched chunks
 * (HWRT_PROFILE_BUFFER_EVENTS records, default 262144), stopping returns the chunks to
 * it, and only a session that outgrows the pool maps more while recording. */
#include "prof.h"
#include "../base/config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static prof_chunk *pool;
static size_t pool_n;

static prof_chunk *chunk_map(void)
{
    void *p = mmap(NULL, sizeof(prof_chunk), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    memset(p, 0, sizeof(prof_chunk));          /* touch every page now */
    return p;
}

prof_chunk *prof_chunk_get(void)
{
    pthread_mutex_lock(&pool_mu);
    prof_chunk *c = pool;
    if (c) { pool = c->next; pool_n--; }
    pthread_mutex_unlock(&pool_mu);
    return c ? c : chunk_map();
}

void prof_chunk_put(prof_chunk *c)
{
    size_t keep = prof_pool_reserve();
    pthread_mutex_lock(&pool_mu);
    int kept = pool_n < keep;
    if (kept) { c->next = pool; pool = c; pool_n++; }
    pthread_mutex_unlock(&pool_mu);
    if (!kept) munmap(c, sizeof *c);
}

/* read once: every chunk put asks, and a bad value is reported once */
size_t prof_pool_reserve(void)
{
    static _Atomic size_t chunks = SIZE_MAX;
    size_t c = atomic_load_explicit(&chunks, memory_order_relaxed);
    if (c == SIZE_MAX) {
        uint64_t n = hwi_env_count("HWRT_PROFILE_BUFFER_EVENTS", 0, 1ull << 40, 262144ull);
        size_t mine = (size_t)((n + PROF_CHUNK - 1) / PROF_CHUNK);
        if (atomic_compare_exchange_strong(&chunks, &c, mine)) c = mine;
    }
    return c;
}

void prof_pool_fill(void)
{
    size_t want = prof_pool_reserve();
    for (;;) {
        pthread_mutex_lock(&pool_mu);
        size_t have = pool_n;
        pthread_mutex_unlock(&pool_mu);
        if (have >= want) return;
        prof_chunk *c = chunk_map();
        if (!c) return;
        prof_chunk_put(c);
    }
}
