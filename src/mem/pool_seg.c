/* Segments: memory the pool holds from the backend. A plain segment is one
 * segment_alloc (cuMemAlloc / aclrtMalloc); an expandable one is an address range from
 * va_reserve (cuMemAddressReserve / aclrtReserveMemAddress) whose granules are mapped
 * (cuMemMap / aclrtMapMem) only while some block needs them, so a growing workload
 * extends one range instead of leaving holes between segments. Guarded by the pool's lock. */
#include "../base/log.h"
#include "pool_internal.h"
#include "../base/status.h"
#include "../runtime/device_ops.h"

#include <stdlib.h>
#include <string.h>

size_t pseg_granule(dpool *dp)
{
    size_t g = hwi_dev_va_granularity(dp->dev);
    return g ? g : POOL_SMALL_SEG;
}

static pblock *whole_block(pseg *s)
{
    pblock *b = pblock_new(s->dp);
    if (!b) return NULL;
    b->base = s->base;
    b->size = s->size;
    b->seg = s;
    b->state = B_FREE;
    b->bin = -1;
    return b;
}

hwrt_status pseg_new(dpool *dp, spool *sp, size_t bytes, int expandable, pseg **out)
{
    pseg *s = calloc(1, sizeof *s);
    if (!s)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "device memory pool: host out of memory");
    s->dp = dp;
    s->sp = sp;
    s->size = bytes;
    s->expandable = expandable;
    void *p = NULL;
    hwrt_status st;
    if (expandable) {
        s->gran = pseg_granule(dp);
        s->ngran = bytes / s->gran;
        s->gmap = calloc(s->ngran ? s->ngran : 1, 1);
        s->gref = calloc(s->ngran ? s->ngran : 1, sizeof *s->gref);
        st = s->gmap && s->gref ? hwi_dev_va_reserve(dp->dev, bytes, &p)
                     : hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "device memory pool: host out of memory");
    } else {
        st = hwi_dev_segment_alloc(dp->dev, bytes, &p);
    }
    if (st != HWRT_SUCCESS) {
        free(s->gmap);
        free(s->gref);
        free(s);
        return st;
    }
    s->base = p;
    s->first = whole_block(s);
    if (!s->first || !pseg_index_add(s)) {
        if (s->first) pblock_put(dp, s->first);
        if (expandable) hwi_dev_va_release(dp->dev, p, bytes);
        else hwi_dev_segment_free(dp->dev, p, bytes);
        free(s->gmap);
        free(s->gref);
        free(s);
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "device memory pool: host out of memory");
    }
    if (!expandable) {
        s->mapped = bytes;
        pool_stat_add(&dp->st.reserved_bytes, (int64_t)bytes);
        dp->st.num_device_alloc++;
    }
    pool_stat_add(&dp->st.segment, 1);
    s->created_seq = dp->alloc_seq;
    s->next = dp->segs;
    dp->segs = s;
    *out = s;
    if (hwi_log_level() >= HWI_LOG_DEBUG) {
        char a[32], b[32];
        hwi_log(HWI_LOG_DEBUG, "device %d: %s segment of %s at %p (%s pool); reserved now %s",
                dp->device, expandable ? "expandable" : "new", hwi_fmt_bytes(a, sizeof a, bytes),
                (void *)p, sp->kind == PK_SMALL ? "small" : "large",
                hwi_fmt_bytes(b, sizeof b, (uint64_t)dp->st.reserved_bytes.current));
    }
    return HWRT_SUCCESS;
}

size_t pseg_unmapped_in(pseg *s, char *p, size_t bytes)
{
    if (!s->expandable || !bytes) return 0;
    size_t g0 = (size_t)(p - s->base) / s->gran;
    size_t g1 = ((size_t)(p - s->base) + bytes + s->gran - 1) / s->gran;
    size_t n = 0;
    for (size_t g = g0; g < g1; g++) n += !s->gmap[g];
    return n * s->gran;
}

hwrt_status pseg_map_range(pseg *s, char *p, size_t bytes, size_t cap)
{
    if (!s->expandable || !bytes) return HWRT_SUCCESS;
    dpool *dp = s->dp;
    size_t g0 = (size_t)(p - s->base) / s->gran;
    size_t g1 = ((size_t)(p - s->base) + bytes + s->gran - 1) / s->gran;
    for (size_t g = g0; g < g1;) {
        if (s->gmap[g]) { g++; continue; }
        size_t e = g;
        while (e < g1 && !s->gmap[e]) e++;
        size_t len = (e - g) * s->gran;
        if (cap && (size_t)dp->st.reserved_bytes.current + len > cap)
            return hwi_err(HWRT_ERROR_OUT_OF_MEMORY, "the max_device_memory cap is reached");
        HWI_TRY(hwi_dev_va_map(dp->dev, s->base + g * s->gran, len));
        memset(s->gmap + g, 1, e - g);
        for (size_t k = g; k < e; k++) s->held_mapped += s->gref[k] != 0;
        s->mapped += len;
        pool_stat_add(&dp->st.reserved_bytes, (int64_t)len);
        dp->st.num_device_alloc++;
        g = e;
    }
    return HWRT_SUCCESS;
}

static size_t unmap_granules(pseg *s, size_t g0, size_t g1)
{
    size_t total = 0;
    for (size_t g = g0; g < g1;) {
        const unsigned char *m = memchr(s->gmap + g, 1, g1 - g);   /* the next mapped one */
        if (!m) break;
        g = (size_t)(m - s->gmap);
        size_t e = g;
        while (e < g1 && s->gmap[e]) e++;
        size_t len = (e - g) * s->gran;
        if (hwi_dev_va_unmap(s->dp->dev, s->base + g * s->gran, len) == HWRT_SUCCESS) {
            memset(s->gmap + g, 0, e - g);
            for (size_t k = g; k < e; k++) s->held_mapped -= s->gref[k] != 0;
            s->mapped -= len;
            total += len;
            pool_stat_sub(&s->dp->st.reserved_bytes, (int64_t)len);
            s->dp->st.num_device_free++;
        }
        g = e;
    }
    return total;
}

size_t pseg_trim_block(pblock *b)
{
    pseg *s = b->seg;
    if (!s->expandable || b->state != B_FREE || !pseg_has_idle_pages(s)) return 0;
    size_t off = (size_t)(b->base - s->base);
    size_t g0 = (off + s->gran - 1) / s->gran, g1 = (off + b->size) / s->gran;
    return g0 < g1 ? unmap_granules(s, g0, g1) : 0;
}

/* Count b in (up 1) or out of (-1) the granules it touches. */
static void hold(pblock *b, int up)
{
    pseg *s = b->seg;
    if (!s->expandable || !b->size) return;
    size_t off = (size_t)(b->base - s->base);
    size_t g1 = (off + b->size + s->gran - 1) / s->gran;
    for (size_t g = off / s->gran; g < g1; g++) {
        uint32_t was = s->gref[g];
        s->gref[g] = up ? was + 1 : was - 1;
        if (s->gmap[g] && (up ? was == 0 : was == 1)) s->held_mapped += up ? 1 : (size_t)-1;
    }
}

void pseg_hold(pblock *b) { hold(b, 1); }

void pseg_unhold(pblock *b) { hold(b, 0); }

int pseg_has_idle_pages(const pseg *s)
{
    return s->expandable && s->mapped / s->gran > s->held_mapped;
}

/* The segment is one free block, already out of the bins. */
void pseg_release(pseg *s)
{
    dpool *dp = s->dp;
    if (s->expandable) {
        unmap_granules(s, 0, s->ngran);
        hwi_dev_va_release(dp->dev, s->base, s->size);
    } else {
        hwi_dev_segment_free(dp->dev, s->base, s->size);
        pool_stat_sub(&dp->st.reserved_bytes, (int64_t)s->size);
        dp->st.num_device_free++;
    }
    if (hwi_log_level() >= HWI_LOG_DEBUG) {
        char a[32], b[32];
        hwi_log(HWI_LOG_DEBUG, "device %d: %s segment of %s at %p released; reserved now %s",
                dp->device, s->expandable ? "expandable" : "the", hwi_fmt_bytes(a, sizeof a, s->size),
                (void *)s->base, hwi_fmt_bytes(b, sizeof b, (uint64_t)dp->st.reserved_bytes.current));
    }
    pool_stat_sub(&dp->st.segment, 1);
    pseg_index_del(s);
    for (pseg **pp = &dp->segs; *pp; pp = &(*pp)->next)
        if (*pp == s) { *pp = s->next; break; }
    for (pblock *b = s->first, *n; b; b = n) {
        n = b->next;
        pblock_put(dp, b);
    }
    free(s->gmap);
    free(s->gref);
    free(s);
}
