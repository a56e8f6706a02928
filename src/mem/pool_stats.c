/* What the pool tells about itself: figures, counters, tags, the JSON snapshot, the
 * out-of-memory sentence, and the leak report + teardown that hwrt_shutdown runs. */
#define _GNU_SOURCE
#include "pool_internal.h"
#include "alloc_trace.h"
#include "../base/config.h"
#include "../base/log.h"
#include "../base/status.h"
#include "../base/escape.h"
#include "../base/json.h"
#include "../runtime/device_ops.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t last_leaks, session_leaks;   /* reported at the last shutdown; since then */

size_t hwi_pool_last_leaks(void) { return last_leaks; }

static dpool *pool_of(const hwi_device *d)
{
    return d ? __atomic_load_n(&d->pool, __ATOMIC_ACQUIRE) : NULL;
}

void hwi_pool_fill_info(const hwi_device *d, hwrt_memory_info *info)
{
    dpool *dp = pool_of(d);
    if (dp) {
        pthread_mutex_lock(&dp->mu);
        hwrt_mem_stats st = dp->st;
        tc_view(dp, &st);                     /* threads' shares of the counters */
        info->allocated = (size_t)st.allocated_bytes.current;
        info->reserved = (size_t)st.reserved_bytes.current;
        info->peak_allocated = (size_t)st.allocated_bytes.peak;
        info->peak_reserved = (size_t)st.reserved_bytes.peak;
        pthread_mutex_unlock(&dp->mu);
    } else {
        info->allocated = info->reserved = info->peak_allocated = info->peak_reserved = 0;
    }
}

void hwi_pool_stats(const hwi_device *d, hwrt_mem_stats *out)
{
    dpool *dp = pool_of(d);
    if (dp) {
        pthread_mutex_lock(&dp->mu);
        *out = dp->st;
        tc_view(dp, out);
        pthread_mutex_unlock(&dp->mu);
    } else {
        memset(out, 0, sizeof *out);
    }
    int64_t msz = hwi_cfg_int(HWI_CFG_MAX_SPLIT_SIZE);
    out->max_split_size = msz ? msz : -1;
}

void hwi_pool_reset_peaks(const hwi_device *d)
{
    dpool *dp = pool_of(d);
    if (dp) {
        tc_leave_other(dp);
        pthread_mutex_lock(&dp->mu);
        /* peaks restart from exact current values; every other thread re-reads its
         * headroom (peak - current) at its next call, or its fast path would allocate up
         * to the old peaks without raising the new ones (a peak below current) */
        tc_request_flush(dp);
        /* current as hwrt_memory_stats reports it: with the shares of other threads'
         * caches (blocks they parked count as freed), or the new peak would stand above
         * the reported current with nothing allocated since */
        hwrt_mem_stats view = dp->st;
        tc_view(dp, &view);
        hwrt_stat *all[] = {&dp->st.allocation, &dp->st.segment, &dp->st.active,
                            &dp->st.inactive_split, &dp->st.allocated_bytes,
                            &dp->st.reserved_bytes, &dp->st.active_bytes,
                            &dp->st.inactive_split_bytes, &dp->st.requested_bytes};
        const hwrt_stat *now[] = {&view.allocation, &view.segment, &view.active,
                                  &view.inactive_split, &view.allocated_bytes,
                                  &view.reserved_bytes, &view.active_bytes,
                                  &view.inactive_split_bytes, &view.requested_bytes};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) all[i]->peak = now[i]->current;
        pthread_mutex_unlock(&dp->mu);
    }
}

hwrt_status hwi_pool_set_tag(void *p, const char *tag)
{
    char *copy = tag ? strdup(tag) : NULL;
    if (tag && !copy)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "hwrt_set_alloc_tag: host out of memory");
    pseg *s = NULL;
    dpool *dp = pool_lock_containing(p, &s);
    pblock *b = dp ? pmap_get(dp, p) : NULL;
    if (b && atomic_load_explicit(&b->in_tc, memory_order_relaxed)) b = NULL;
    if (b) {
        free(b->tag);
        b->tag = copy;
        if (hwi_alloc_trace_active())
            hwi_alloc_trace_tag(dp->device, p, b->seg->sp->owner, copy);
    }
    if (dp) pthread_mutex_unlock(&dp->mu);
    if (!b) {
        free(copy);
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_set_alloc_tag(%p): not the start of a "
                       "live block from hwrt_malloc (a host pointer, an interior pointer, or "
                       "freed)", p);
    }
    return HWRT_SUCCESS;
}

/* "symbol+0x1f (libfoo.so)" or the bare address. */
static void site_text(void *pc, char *buf, size_t len)
{
    Dl_info di;
    if (dladdr(pc, &di) && di.dli_fname) {
        const char *lib = strrchr(di.dli_fname, '/');
        lib = lib ? lib + 1 : di.dli_fname;
        if (di.dli_sname)
            snprintf(buf, len, "%s+0x%zx (%s)", di.dli_sname,
                     (size_t)((char *)pc - (char *)di.dli_saddr), lib);
        else
            snprintf(buf, len, "%p (%s+0x%zx)", pc, lib,
                     (size_t)((char *)pc - (char *)di.dli_fbase));
    } else {
        snprintf(buf, len, "%p", pc);
    }
}

static const char *state_name(const pblock *b)
{
    if (b->state == B_ALLOC && atomic_load_explicit(&b->in_tc, memory_order_relaxed))
        return "thread_cached";
    return b->state == B_ALLOC ? "allocated" : b->state == B_PENDING ? "pending_stream_events" : "free";
}

static void snapshot_block(hwi_jw *j, const pblock *b)
{
    char addr[32];
    snprintf(addr, sizeof addr, "%p", (void *)b->base);
    hwi_jw_obj(j);
    hwi_jw_kstr(j, "address", addr);
    hwi_jw_kuint(j, "size", b->size);
    hwi_jw_kstr(j, "state", state_name(b));
    int live = b->state == B_ALLOC && !atomic_load_explicit(&b->in_tc, memory_order_relaxed);
    if (live) {
        hwi_jw_kuint(j, "requested", b->requested);
        hwi_jw_kuint(j, "alloc_seq", (unsigned long long)b->alloc_seq);
    }
    if (b->tag) hwi_jw_kstr(j, "tag", b->tag);
    if (live && b->nsite) {
        hwi_jw_key(j, "site");
        hwi_jw_arr(j);
        for (int i = 0; i < b->nsite; i++) {
            char t[256];
            site_text(b->site[i], t, sizeof t);
            hwi_jw_str(j, t);
        }
        hwi_jw_close(j);
    }
    hwi_jw_close(j);
}

static void snapshot_segment(hwi_jw *j, const pseg *s)
{
    char addr[32];
    snprintf(addr, sizeof addr, "%p", (void *)s->base);
    hwi_jw_obj(j);
    hwi_jw_kstr(j, "address", addr);
    hwi_jw_kuint(j, "size", s->size);
    hwi_jw_kuint(j, "mapped", s->mapped);
    hwi_jw_kstr(j, "pool", s->sp->kind == PK_SMALL ? "small" : "large");
    hwi_jw_kbool(j, "expandable", s->expandable);
    if (s->sp->owner) {
        snprintf(addr, sizeof addr, "%p", (void *)s->sp->owner);
        hwi_jw_kstr(j, "stream", addr);
    } else {
        hwi_jw_kstr(j, "stream", NULL);
    }
    hwi_jw_key(j, "blocks");
    hwi_jw_arr(j);
    for (const pblock *b = s->first; b; b = b->next) snapshot_block(j, b);
    hwi_jw_close(j);
    hwi_jw_close(j);
}

hwrt_status hwi_pool_snapshot(const hwi_device *d, void *file)
{
    FILE *f = file;
    dpool *dp = pool_of(d);
    hwrt_mem_stats z = {0}, *st = &z;
    if (dp) {
        pthread_mutex_lock(&dp->mu);
        z = dp->st;
        tc_view(dp, &z);
    }
    hwi_jw j;
    hwi_jw_begin(&j, f, 0);
    hwi_jw_obj(&j);
    hwi_jw_kint(&j, "device", d->ordinal);
    hwi_jw_kstr(&j, "backend", hwi_dev_backend_name(d));
    hwi_jw_kbool(&j, "record_alloc_sites", (int)hwi_cfg_int(HWI_CFG_RECORD_ALLOC_SITES));
    hwi_jw_kint(&j, "allocated_bytes", (long long)st->allocated_bytes.current);
    hwi_jw_kint(&j, "reserved_bytes", (long long)st->reserved_bytes.current);
    hwi_jw_kint(&j, "active_bytes", (long long)st->active_bytes.current);
    hwi_jw_kint(&j, "requested_bytes", (long long)st->requested_bytes.current);
    hwi_jw_kint(&j, "peak_allocated_bytes", (long long)st->allocated_bytes.peak);
    hwi_jw_kint(&j, "peak_reserved_bytes", (long long)st->reserved_bytes.peak);
    hwi_jw_key(&j, "segments");
    hwi_jw_arr(&j);
    for (const pseg *s = dp ? dp->segs : NULL; s; s = s->next) snapshot_segment(&j, s);
    hwi_jw_close(&j);
    hwi_jw_close(&j);
    int bad = hwi_jw_end(&j);
    if (dp) pthread_mutex_unlock(&dp->mu);
    if (bad) return hwi_err(HWRT_ERROR_INTERNAL, "hwrt_memory_snapshot: the JSON writer was misused");
    return ferror(f) ? hwi_err(HWRT_ERROR_IO, "hwrt_memory_snapshot: write error") : HWRT_SUCCESS;
}

/* ---- the out-of-memory sentence ---- */

hwrt_status hwi_pool_oom(dpool *dp, size_t req, size_t rsize, const char *cause);
hwrt_status hwi_pool_oom(dpool *dp, size_t req, size_t rsize, const char *cause)
{
    char why[256];
    snprintf(why, sizeof why, "%s", cause ? cause : "");
    size_t freeb = 0, total = 0, ovh = 0;
    hwi_dev_mem_info(dp->dev, &freeb, &total, &ovh);
    size_t alloc = (size_t)dp->st.allocated_bytes.current;
    size_t resv = (size_t)dp->st.reserved_bytes.current;
    size_t used = total - freeb, other = used > resv + ovh ? used - resv - ovh : 0;
    size_t cap = (size_t)hwi_cfg_int(HWI_CFG_MAX_DEVICE_MEMORY);
    char a[7][32], capt[64];
    if (cap) snprintf(capt, sizeof capt, "%s", hwi_fmt_bytes(a[6], sizeof a[6], cap));
    else snprintf(capt, sizeof capt, "none");
    return hwi_err(HWRT_ERROR_OUT_OF_MEMORY,
        "out of memory on device %d: tried to allocate %s (%zu bytes requested); device total %s, "
        "free %s; allocated by hwrt %s, reserved but unallocated %s (cached after a device sync "
        "and retry: fragmentation), max_device_memory cap %s, context overhead %s, other "
        "processes %s; cause: %s. Free tensors you no longer need, lower the batch size, %s"
        "or raise max_device_memory (hwrt_set_config / HWRT_ALLOC_CONF)",
        dp->device, hwi_fmt_bytes(a[0], sizeof a[0], rsize), req,
        hwi_fmt_bytes(a[1], sizeof a[1], total), hwi_fmt_bytes(a[2], sizeof a[2], freeb),
        hwi_fmt_bytes(a[3], sizeof a[3], alloc), hwi_fmt_bytes(a[4], sizeof a[4], resv - alloc),
        capt, hwi_fmt_bytes(a[5], sizeof a[5], ovh), other ? hwi_fmt_bytes(a[6], sizeof a[6], other) : "0 B",
        why, resv - alloc > rsize / 4 ? "set HWRT_ALLOC_CONF=expandable_segments:true or "
                                         "max_split_size:<size> against fragmentation, " : "");
}

/* ---- leak report and teardown (hwi_pool_destroy when the device closes, or
 * hwrt_shutdown's order 40: after streams, before host memory and the devices) ---- */

static void report_leak(const dpool *dp, const pblock *b)
{
    char sz[32], site[256] = "unknown (set record_alloc_sites:true)";
    if (b->nsite) {
        int i = 0;                /* skip frames inside libhwrt: show the caller */
        Dl_info self, di;
        int have_self = dladdr((void *)report_leak, &self);
        while (have_self && i + 1 < b->nsite && dladdr(b->site[i], &di) &&
               di.dli_fbase == self.dli_fbase)
            i++;
        site_text(b->site[i], site, sizeof site);
    }
    char tag[256];                /* the application's text: no control bytes in the log */
    hwi_term_clean(tag, sizeof tag, b->tag, -1);
    hwi_log(HWI_LOG_ERROR, "leak: device %d: block %p of %s (%zu bytes requested), tag \"%s\", "
            "allocated at %s, never freed; hwrt_shutdown frees it", dp->device, (void *)b->base,
            hwi_fmt_bytes(sz, sizeof sz, b->size), b->requested, tag, site);
}

static void teardown_device(dpool *dp)
{
    for (pblock *b = dp->pending; b; b = b->fnext)
        for (int i = 0; i < b->nevs; i++) hwi_dev_event_destroy(dp->dev, b->evs[i]);
    for (pseg *s = dp->segs; s; s = s->next)
        for (pblock *b = s->first; b; b = b->next)
            if (b->state == B_ALLOC && !atomic_load_explicit(&b->in_tc, memory_order_relaxed)) {
                session_leaks++;
                report_leak(dp, b);
                if (hwi_alloc_trace_active())  /* freed here: the trace stays balanced */
                    hwi_alloc_trace_free(dp->device, b->base, b->seg->sp->owner, b->tag);
            }
    while (dp->segs) {
        pseg *s = dp->segs;
        /* collapse to one free block so pseg_release sees a whole free segment */
        for (pblock *b = s->first; b; b = b->next) b->state = B_FREE, b->bin = -1;
        pseg_release(s);
    }
    for (int i = 0; i < dp->nev; i++) hwi_dev_event_destroy(dp->dev, dp->evcache[i]);
    free(dp->evcache);
    while (dp->spools) {
        spool *n = dp->spools->next;
        free(dp->spools);
        dp->spools = n;
    }
    pmap_clear(dp);
    pblock_spare_free(dp);
}

static void destroy(dpool *dp)
{
    pool_list_del(dp);
    pthread_mutex_lock(&dp->mu);
    tc_forget_pool(dp);
    teardown_device(dp);
    pthread_mutex_unlock(&dp->mu);
    pthread_mutex_destroy(&dp->mu);
    free(dp);
}

void hwi_pool_destroy(hwi_device *d)
{
    dpool *dp = __atomic_exchange_n(&d->pool, NULL, __ATOMIC_ACQ_REL);
    if (dp) destroy(dp);
}

hwrt_status hwi_pool_teardown(void)
{
    for (dpool *dp; (dp = pool_list_first());) {   /* pools no device close took */
        __atomic_store_n(&dp->dev->pool, NULL, __ATOMIC_RELEASE);
        destroy(dp);
    }
    hwi_alloc_trace_close();
    last_leaks = session_leaks;
    session_leaks = 0;
    if (last_leaks)
        hwi_log(HWI_LOG_ERROR, "hwrt_shutdown: %zu device block%s leaked (listed above)",
                last_leaks, last_leaks == 1 ? "" : "s");
    return HWRT_SUCCESS;
}
