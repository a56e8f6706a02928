/* Cross-stream reuse: a block other streams used (hwi_pool_record_stream) gets a backend
 * event per such stream when it is freed and stays PENDING until they have all
 * completed; idle events are cached for reuse. A destroyed stream's cached blocks join
 * its device's NULL-stream pool. Guarded by the pool's lock. */
#include "alloc_trace.h"
#include "../base/status.h"
#include "../runtime/device_ops.h"
#include "pool_internal.h"

#include <stdlib.h>

static hwrt_bevent *event_get(dpool *dp)
{
    if (dp->nev) return dp->evcache[--dp->nev];
    hwrt_bevent *e = NULL;
    if (hwi_dev_event_create(dp->dev, 0, &e) != HWRT_SUCCESS) return NULL;
    return e;
}

static void event_put(dpool *dp, hwrt_bevent *e)
{
    if (dp->nev == dp->cap_ev) {
        int nc = dp->cap_ev ? dp->cap_ev * 2 : 16;
        hwrt_bevent **n = realloc(dp->evcache, (size_t)nc * sizeof *n);
        if (!n) { hwi_dev_event_destroy(dp->dev, e); return; }
        dp->evcache = n;
        dp->cap_ev = nc;
    }
    dp->evcache[dp->nev++] = e;
}

/* Move PENDING blocks whose events have all completed to the free bins. */
void pool_process_events(dpool *dp)
{
    for (pblock *b = dp->pending, *n; b; b = n) {
        n = b->fnext;
        while (b->nevs && hwi_dev_event_query(dp->dev, b->evs[b->nevs - 1]) != HWRT_ERROR_NOT_READY)
            event_put(dp, b->evs[--b->nevs]);   /* done (or faulted: it will not run) */
        if (b->nevs) continue;
        if (b->fprev) b->fprev->fnext = b->fnext;
        else dp->pending = b->fnext;
        if (b->fnext) b->fnext->fprev = b->fprev;
        b->fnext = b->fprev = NULL;
        pool_make_free(b);
    }
}

void pool_record_events(dpool *dp, pblock *b)
{
    b->nevs = 0;
    for (int i = 0; i < b->nuses; i++) {
        hwrt_bevent *e = event_get(dp);
        if (!e) { hwi_dev_stream_synchronize(dp->dev, b->uses[i]); continue; }  /* cannot defer: wait */
        if (hwi_dev_event_record(dp->dev, e, b->uses[i]) != HWRT_SUCCESS) { event_put(dp, e); continue; }
        b->evs[b->nevs++] = e;
    }
    b->nuses = 0;
}

/* Under the lock: stream bs (not b's own) uses the live block b. */
hwrt_status pool_add_use(pblock *b, hwrt_bstream *bs)
{
    for (int i = 0; i < b->nuses; i++)
        if (b->uses[i] == bs) return HWRT_SUCCESS;
    if (b->nuses == b->cap_uses) {
        int nc = b->cap_uses ? b->cap_uses * 2 : 4;
        hwrt_bstream **u = realloc(b->uses, (size_t)nc * sizeof *u);
        hwrt_bevent **e = u ? realloc(b->evs, (size_t)nc * sizeof *e) : NULL;
        if (u) b->uses = u;
        if (e) { b->evs = e; b->cap_uses = nc; }
    }
    if (b->nuses == b->cap_uses)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "hwrt_record_stream: host out of memory");
    b->uses[b->nuses++] = bs;
    return HWRT_SUCCESS;
}

/* The stream's work is done (exec synchronized it): its cached blocks join the
 * NULL-stream pool of its device, and no block keeps it as a user. */
void hwi_pool_stream_destroyed(hwrt_bstream *bs)
{
    hwi_alloc_trace_stream_gone(bs);
    for (dpool *dp = pool_list_first(); dp;
         dp = atomic_load_explicit(&dp->next_pool, memory_order_acquire)) {
        pthread_mutex_lock(&dp->mu);
        tc_request_flush(dp);                  /* caches keyed by bs give their blocks back */
        for (pseg *s = dp->segs; s; s = s->next) {
            for (pblock *b = s->first; b; b = b->next)
                for (int k = 0; k < b->nuses; k++)
                    if (b->uses[k] == bs) b->uses[k--] = b->uses[--b->nuses];
            if (s->sp->owner != bs) continue;
            spool *to = pool_spool(dp, NULL, s->sp->kind);
            if (!to) continue;                 /* host OOM: keep it under the old key */
            spool *from = s->sp;
            if (s->expandable && to->kind != PK_SMALL) pbin_use_addr_order(to);
            for (pblock *b = s->first; b; b = b->next)
                if (b->state == B_FREE) pbin_remove(from, b);
            s->sp = to;
            for (pblock *b = s->first; b; b = b->next)
                if (b->state == B_FREE) pbin_insert(to, b);
        }
        for (spool **pp = &dp->spools; *pp;) {
            spool *sp = *pp;
            int used = 0;
            for (pseg *s = dp->segs; s && !used; s = s->next) used = s->sp == sp;
            if (sp->owner == bs && !used) { *pp = sp->next; free(sp); }
            else pp = &sp->next;
        }
        dp->last = NULL;
        pthread_mutex_unlock(&dp->mu);
    }
}
