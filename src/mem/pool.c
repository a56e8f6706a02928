/* Device memory, first version: one backend segment per block, a sorted registry of
 * live blocks for pointer lookup, and a release that waits for the streams that used
 * the block. The caching pool replaces the allocation policy behind the same calls. */
#include "pool.h"
#include "mem_events.h"
#include "../core/status.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STREAMS 8

typedef struct block {
    void *base;
    size_t size;
    int device;
    hwrt_bstream *streams[MAX_STREAMS];
    int nstreams;
} block;

typedef struct dev_figures {
    size_t allocated, reserved, peak_allocated, peak_reserved;
} dev_figures;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static block *blocks;        /* sorted by base */
static size_t nblocks, cap_blocks;
static dev_figures figs[HWI_MAX_DEVICES];

static size_t find_index(const void *p)   /* first block with base > p */
{
    size_t lo = 0, hi = nblocks;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((const char *)blocks[mid].base <= (const char *)p) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static block *lookup_locked(const void *p)
{
    size_t i = find_index(p);
    if (i == 0) return NULL;
    block *b = &blocks[i - 1];
    if ((const char *)p < (const char *)b->base + (b->size ? b->size : 1)) return b;
    return NULL;
}

hwrt_status hwi_pool_alloc(hwi_device *d, size_t bytes, hwrt_bstream *bs, void **out)
{
    const hwrt_backend_ops *ops = hwi_ops_if_selected();
    void *p;
    HWI_TRY(ops->segment_alloc(d->bdev, bytes, &p));
    pthread_mutex_lock(&mu);
    if (nblocks == cap_blocks) {
        size_t nc = cap_blocks ? cap_blocks * 2 : 64;
        block *nb = realloc(blocks, nc * sizeof *nb);
        if (!nb) {
            pthread_mutex_unlock(&mu);
            ops->segment_free(d->bdev, p, bytes);
            return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "hwrt_malloc: host out of memory for "
                           "the block registry");
        }
        blocks = nb;
        cap_blocks = nc;
    }
    size_t i = find_index(p);
    memmove(&blocks[i + 1], &blocks[i], (nblocks - i) * sizeof *blocks);
    nblocks++;
    blocks[i] = (block){.base = p, .size = bytes, .device = d->ordinal};
    if (bs) blocks[i].streams[blocks[i].nstreams++] = bs;
    dev_figures *f = &figs[d->ordinal];
    f->allocated += bytes;
    f->reserved += bytes;
    if (f->allocated > f->peak_allocated) f->peak_allocated = f->allocated;
    if (f->reserved > f->peak_reserved) f->peak_reserved = f->reserved;
    dev_figures now = *f;
    pthread_mutex_unlock(&mu);
    hwi_mem_event(HWI_MEM_ALLOC, d->ordinal, p, bytes, now.allocated, now.reserved);
    hwi_pool_report(d);
    *out = p;
    return HWRT_SUCCESS;
}

hwrt_status hwi_pool_free(void *p, const char *api)
{
    pthread_mutex_lock(&mu);
    block *b = lookup_locked(p);
    if (!b || b->base != p) {
        pthread_mutex_unlock(&mu);
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT,
                       "%s(%p): %s; pass the exact pointer hwrt_malloc returned, once", api, p,
                       b ? "the pointer is inside a block, not its start"
                         : "hwrt did not allocate this pointer (a host pointer, or already freed)");
    }
    block copy = *b;
    memmove(b, b + 1, (size_t)(&blocks[nblocks] - (b + 1)) * sizeof *b);
    nblocks--;
    figs[copy.device].allocated -= copy.size;
    figs[copy.device].reserved -= copy.size;
    dev_figures now = figs[copy.device];
    pthread_mutex_unlock(&mu);
    hwi_mem_event(HWI_MEM_FREE, copy.device, copy.base, copy.size, now.allocated, now.reserved);
    const hwrt_backend_ops *ops = hwi_ops_if_selected();
    for (int i = 0; i < copy.nstreams; i++)
        ops->stream_synchronize(copy.streams[i]);   /* faults surface at the next sync */
    hwi_device *d = hwi_device_if_open(copy.device);
    hwrt_status st = ops->segment_free(d->bdev, copy.base, copy.size);
    hwi_pool_report(d);
    return st;
}

hwrt_status hwi_pool_record_stream(void *p, hwrt_bstream *bs)
{
    pthread_mutex_lock(&mu);
    block *b = lookup_locked(p);
    hwrt_status st = HWRT_SUCCESS;
    if (!b) {
        st = hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_record_stream(%p): not a live block "
                     "allocated by hwrt", p);
    } else {
        int have = 0;
        for (int i = 0; i < b->nstreams; i++) have |= b->streams[i] == bs;
        if (!have && b->nstreams < MAX_STREAMS) b->streams[b->nstreams++] = bs;
        else if (!have) hwi_ops_if_selected()->stream_synchronize(bs);
    }
    pthread_mutex_unlock(&mu);
    return st;
}

int hwi_pool_find(const void *p, size_t bytes, hwi_block_info *out)
{
    pthread_mutex_lock(&mu);
    block *b = lookup_locked(p);
    int ok = b && (size_t)((const char *)p - (const char *)b->base) + bytes <= b->size;
    if (b && out) *out = (hwi_block_info){b->device, b->base, b->size};
    pthread_mutex_unlock(&mu);
    return ok;
}

int hwi_pool_is_device_ptr(const void *p, int *device)
{
    pthread_mutex_lock(&mu);
    block *b = lookup_locked(p);
    if (b && device) *device = b->device;
    pthread_mutex_unlock(&mu);
    return b != NULL;
}

void hwi_pool_fill_info(int device, hwrt_memory_info *info)
{
    pthread_mutex_lock(&mu);
    dev_figures f = figs[device];
    pthread_mutex_unlock(&mu);
    info->allocated = f.allocated;
    info->reserved = f.reserved;
    info->peak_allocated = f.peak_allocated;
    info->peak_reserved = f.peak_reserved;
}

hwrt_status hwi_pool_empty_cache(hwi_device *d)
{
    (void)d;            /* this first version returns each block's segment at free time */
    return HWRT_SUCCESS;
}

void hwi_pool_report(hwi_device *d)
{
    const hwrt_backend_ops *ops = hwi_ops_if_selected();
    if (!ops || !ops->report_usage) return;
    hwrt_memory_info m;
    hwi_pool_fill_info(d->ordinal, &m);
    ops->report_usage(d->bdev, m.reserved, m.allocated);
}
