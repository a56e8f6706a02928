/* What the pool tells about itself: figures, counters, tags, the JSON snapshot, the
 * out-of-memory sentence, and the leak report + teardown that hwrt_shutdown runs. */
#define _GNU_SOURCE
#include "pool_internal.h"
#include "alloc_trace.h"
#include "../base/config.h"
#include "../base/log.h"
#include "../base/status.h"
#include "../base/escape.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t last_leaks;

size_t hwi_pool_last_leaks(void) { return last_leaks; }

void hwi_pool_fill_info(int device, hwrt_memory_info *info)
{
    pthread_mutex_lock(&hwi_pool_mu);
    dpool *dp = device >= 0 && device < HWI_MAX_DEVICES ? hwi_pool_devs[device] : NULL;
    if (dp) {
        hwrt_mem_stats st = dp->st;
        tc_view(dp, &st);                     /* threads' shares of the counters */
        info->allocated = (size_t)st.allocated_bytes.current;
        info->reserved = (size_t)st.reserved_bytes.current;
        info->peak_allocated = (size_t)st.allocated_bytes.peak;
        info->peak_reserved = (size_t)st.reserved_bytes.peak;
    } else {
        info->allocated = info->reserved = info->peak_allocated = info->peak_reserved = 0;
    }
    pthread_mutex_unlock(&hwi_pool_mu);
}

void hwi_pool_stats(int device, hwrt_mem_stats *out)
{
    pthread_mutex_lock(&hwi_pool_mu);
    dpool *dp = device >= 0 && device < HWI_MAX_DEVICES ? hwi_pool_devs[device] : NULL;
    if (dp) {
        *out = dp->st;
        tc_view(dp, out);
    } else {
        memset(out, 0, sizeof *out);
    }
    pthread_mutex_unlock(&hwi_pool_mu);
    int64_t msz = hwi_cfg_int(HWI_CFG_MAX_SPLIT_SIZE);
    out->max_split_size = msz ? msz : -1;
}

void hwi_pool_reset_peaks(int device)
{
    pthread_mutex_lock(&hwi_pool_mu);
    dpool *dp = device >= 0 && device < HWI_MAX_DEVICES ? hwi_pool_devs[device] : NULL;
    if (dp) {
        tc_flush_own();                       /* peaks restart from exact current values */
        hwrt_stat *all[] = {&dp->st.allocation, &dp->st.segment, &dp->st.active,
                            &dp->st.inactive_split, &dp->st.allocated_bytes,
                            &dp->st.reserved_bytes, &dp->st.active_bytes,
                            &dp->st.inactive_split_bytes, &dp->st.requested_bytes};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) all[i]->peak = all[i]->current;
    }
    pthread_mutex_unlock(&hwi_pool_mu);
}

hwrt_status hwi_pool_set_tag(void *p, const char *tag)
{
    char *copy = tag ? strdup(tag) : NULL;
    if (tag && !copy)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "hwrt_set_alloc_tag: host out of memory");
    pthread_mutex_lock(&hwi_pool_mu);
    pblock *b = pmap_get(p);
    if (b && atomic_load_explicit(&b->in_tc, memory_order_relaxed)) b = NULL;
    if (b) {
        free(b->tag);
        b->tag = copy;
        if (hwi_alloc_trace_active())
            hwi_alloc_trace_tag(b->seg->dp->device, p, b->seg->sp->owner, copy);
    }
    pthread_mutex_unlock(&hwi_pool_mu);
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

static void snapshot_block(FILE *f, const pblock *b, int first)
{
    fprintf(f, "%s\n        {\"address\": \"%p\", \"size\": %zu, \"state\": \"%s\"", first ? "" : ",",
            (void *)b->base, b->size, state_name(b));
    int live = b->state == B_ALLOC && !atomic_load_explicit(&b->in_tc, memory_order_relaxed);
    if (live)
        fprintf(f, ", \"requested\": %zu, \"alloc_seq\": %llu", b->requested,
                (unsigned long long)b->alloc_seq);
    if (b->tag) {
        fputs(", \"tag\": ", f);
        hwi_json_str(f, b->tag);
    }
    if (live && b->nsite) {
        fputs(", \"site\": [", f);
        for (int i = 0; i < b->nsite; i++) {
            char t[256];
            site_text(b->site[i], t, sizeof t);
            if (i) fputs(", ", f);
            hwi_json_str(f, t);
        }
        fputc(']', f);
    }
    fputc('}', f);
}

static void snapshot_segment(FILE *f, const pseg *s, int first)
{
    fprintf(f, "%s\n    {\"address\": \"%p\", \"size\": %zu, \"mapped\": %zu, \"pool\": \"%s\", "
            "\"expandable\": %s, \"stream\": ", first ? "" : ",", (void *)s->base, s->size,
            s->mapped, s->sp->kind == PK_SMALL ? "small" : "large",
            s->expandable ? "true" : "false");
    if (s->sp->owner) fprintf(f, "\"%p\"", (void *)s->sp->owner);
    else fputs("null", f);
    fputs(", \"blocks\": [", f);
    int i = 0;
    for (const pblock *b = s->first; b; b = b->next) snapshot_block(f, b, i++ == 0);
    fputs("]}", f);
}

hwrt_status hwi_pool_snapshot(int device, void *file)
{
    FILE *f = file;
    pthread_mutex_lock(&hwi_pool_mu);
    dpool *dp = device >= 0 && device < HWI_MAX_DEVICES ? hwi_pool_devs[device] : NULL;
    hwrt_mem_stats z = {0}, *st = &z;
    if (dp) {
        z = dp->st;
        tc_view(dp, &z);
    }
    fprintf(f, "{\n  \"device\": %d,\n  \"backend\": \"%s\",\n  \"record_alloc_sites\": %s,\n",
            dp ? hwi_device_ordinal(device) : device, dp ? dp->dev->props.backend : "none",
            hwi_cfg_int(HWI_CFG_RECORD_ALLOC_SITES) ? "true" : "false");
    fprintf(f, "  \"allocated_bytes\": %lld,\n  \"reserved_bytes\": %lld,\n  \"active_bytes\": %lld,\n"
            "  \"requested_bytes\": %lld,\n  \"peak_allocated_bytes\": %lld,\n"
            "  \"peak_reserved_bytes\": %lld,\n  \"segments\": [",
            (long long)st->allocated_bytes.current, (long long)st->reserved_bytes.current,
            (long long)st->active_bytes.current, (long long)st->requested_bytes.current,
            (long long)st->allocated_bytes.peak, (long long)st->reserved_bytes.peak);
    int i = 0;
    for (const pseg *s = dp ? dp->segs : NULL; s; s = s->next) snapshot_segment(f, s, i++ == 0);
    fputs("\n  ]\n}\n", f);
    pthread_mutex_unlock(&hwi_pool_mu);
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

/* ---- leak report and teardown (hwrt_shutdown, order 40: after streams, before
 * host memory and the devices) ---- */

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
                last_leaks++;
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
    free(dp);
}

hwrt_status hwi_pool_teardown(void);
hwrt_status hwi_pool_teardown(void)
{
    pthread_mutex_lock(&hwi_pool_mu);
    last_leaks = 0;
    tc_reset_all();
    for (int i = 0; i < HWI_MAX_DEVICES; i++) {
        if (!hwi_pool_devs[i]) continue;
        teardown_device(hwi_pool_devs[i]);
        hwi_pool_devs[i] = NULL;
    }
    pmap_clear();
    hwi_alloc_trace_close();
    pthread_mutex_unlock(&hwi_pool_mu);
    if (last_leaks)
        hwi_log(HWI_LOG_ERROR, "hwrt_shutdown: %zu device block%s leaked (listed above)",
                last_leaks, last_leaks == 1 ? "" : "s");
    return HWRT_SUCCESS;
}
