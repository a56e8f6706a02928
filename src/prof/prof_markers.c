/* Device timestamps for launches, the fallback path: on a backend without activity
 * records (prof_activity.c), and for event waits, after each piece of work the hook
 * records a backend event (a marker) on the same stream; the time the device reached it
 * is the work's end on the device timeline. A stream is in order, so a work item starts when the previous
 * one on its stream ended or when it was submitted, whichever is later: one marker per
 * item gives both ends (the exporter derives the start), at half the cost of two.
 *
 * Markers are resolved lazily: each attach first harvests up to a few reached markers at
 * the head of the stream's queue and recycles their events, so a steady stream keeps
 * about as many events as it has work in flight and never blocks the launching thread. */
#include "prof.h"
#include "../exec/stream.h"
#include "../runtime/device_ops.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct pend { hwrt_bevent *ev; prof_rec *rec; } pend;

struct prof_stream {
    const void *handle;          /* the hwrt_stream handle: unique over the process */
    uint32_t id;
    int device;
    int is_default;
    const hwi_device *dev;       /* the device the events belong to */
    unsigned epoch;              /* hwi_dev_epoch when registered: dev is valid while equal */
    pthread_mutex_t mu;
    pend *q;                     /* ring of pending markers, oldest at qhead */
    size_t qhead, qlen, qcap;
    hwrt_bevent **freev;         /* recycled events */
    size_t nfree, capfree;
};

#define HARVEST_PER_ATTACH 4
#define MAX_PENDING ((size_t)1 << 22)

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static prof_stream **all;
static size_t nall, capall;
static _Atomic uint64_t missing;
static _Atomic(const char *) backend_name;

static _Thread_local struct { const void *h; prof_stream *p; } cache[4];
static _Thread_local unsigned cache_next;

/* The stream's device is still open (no hwrt_shutdown since it was registered). */
static int live(const prof_stream *p) { return p->epoch == atomic_load(&hwi_dev_epoch); }

static prof_stream *registry_find_or_add(hwi_stream *s)
{
    pthread_mutex_lock(&reg_mu);
    for (size_t i = 0; i < nall; i++)
        if (all[i]->handle == (const void *)s->handle) {
            pthread_mutex_unlock(&reg_mu);
            return all[i];
        }
    prof_stream *p = NULL;
    if (nall == capall) {
        size_t nc = capall ? capall * 2 : 16;
        prof_stream **na = realloc(all, nc * sizeof *na);
        if (na) { all = na; capall = nc; }
    }
    if (nall < capall && (p = calloc(1, sizeof *p))) {
        p->handle = s->handle;
        p->id = (uint32_t)nall + 1;
        p->device = s->device;
        p->is_default = s->is_default;
        p->dev = s->dev;
        p->epoch = atomic_load(&hwi_dev_epoch);
        pthread_mutex_init(&p->mu, NULL);
        all[nall++] = p;
    }
    pthread_mutex_unlock(&reg_mu);
    if (p) atomic_store(&backend_name, hwi_dev_backend_name(p->dev));
    return p;
}

prof_stream *prof_stream_get(hwi_stream *s)
{
    for (int i = 0; i < 4; i++)
        if (cache[i].h == (const void *)s->handle && cache[i].p) return cache[i].p;
    prof_stream *p = registry_find_or_add(s);
    if (p) {
        unsigned k = cache_next++ & 3;
        cache[k].h = s->handle;
        cache[k].p = p;
    }
    return p;
}

uint32_t prof_stream_id(const prof_stream *p) { return p ? p->id : 0; }

/* Resolve the head marker if reached (or if force); returns 0 when it is still pending. */
static int resolve_head_locked(prof_stream *p, int force)
{
    pend *e = &p->q[p->qhead];
    if (!force && hwi_dev_event_query(p->dev, e->ev) == HWRT_ERROR_NOT_READY)
        return 0;
    uint64_t ts = 0;
    if (!force && hwi_dev_event_timestamp_ns(p->dev, e->ev, &ts) == HWRT_SUCCESS && ts)
        atomic_store_explicit(&e->rec->dev_end, ts, memory_order_relaxed);
    else
        atomic_fetch_add(&missing, 1);
    if (!force && p->nfree < p->capfree) p->freev[p->nfree++] = e->ev;
    else hwi_dev_event_destroy(p->dev, e->ev);   /* a pending event is never reused */
    p->qhead = (p->qhead + 1) % p->qcap;
    p->qlen--;
    return 1;
}

static void harvest_locked(prof_stream *p, size_t max)
{
    while (p->qlen && max-- && resolve_head_locked(p, 0)) {}
}

static int grow_locked(prof_stream *p)
{
    if (p->qlen == p->qcap) {
        if (p->qcap >= MAX_PENDING) return 0;
        size_t nc = p->qcap ? p->qcap * 2 : 64;
        pend *nq = malloc(nc * sizeof *nq);
        if (!nq) return 0;
        for (size_t i = 0; i < p->qlen; i++) nq[i] = p->q[(p->qhead + i) % p->qcap];
        free(p->q);
        p->q = nq;
        p->qhead = 0;
        p->qcap = nc;
    }
    if (p->capfree < p->qcap) {   /* room to recycle every pending event */
        hwrt_bevent **nf = realloc(p->freev, p->qcap * sizeof *nf);
        if (!nf) return 0;
        p->freev = nf;
        p->capfree = p->qcap;
    }
    return 1;
}

void prof_marker_attach(prof_stream *p, hwi_stream *s, prof_rec *r)
{
    if (!p || !live(p)) {
        atomic_fetch_add(&missing, 1);
        return;
    }
    pthread_mutex_lock(&p->mu);
    harvest_locked(p, HARVEST_PER_ATTACH);
    hwrt_bevent *ev = NULL;
    if (!grow_locked(p)) goto fail;
    if (p->nfree) ev = p->freev[--p->nfree];
    else if (hwi_dev_event_create(p->dev, 0, &ev) != HWRT_SUCCESS) goto fail;
    if (hwi_dev_event_record(p->dev, ev, s->bs) != HWRT_SUCCESS) {
        p->freev[p->nfree++] = ev;
        goto fail;
    }
    p->q[(p->qhead + p->qlen) % p->qcap] = (pend){ev, r};
    p->qlen++;
    pthread_mutex_unlock(&p->mu);
    return;
fail:
    pthread_mutex_unlock(&p->mu);
    atomic_fetch_add(&missing, 1);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void drain_one(prof_stream *p, uint64_t deadline_ns, int destroy)
{
    pthread_mutex_lock(&p->mu);
    while (p->qlen) {
        if (resolve_head_locked(p, 0)) continue;
        if (now_ns() >= deadline_ns) {      /* hung device: give up, count them */
            while (p->qlen) resolve_head_locked(p, 1);
            break;
        }
        pthread_mutex_unlock(&p->mu);
        sched_yield();
        pthread_mutex_lock(&p->mu);
    }
    if (destroy) {
        for (size_t i = 0; i < p->nfree; i++) hwi_dev_event_destroy(p->dev, p->freev[i]);
        p->nfree = 0;
    }
    pthread_mutex_unlock(&p->mu);
}

void prof_markers_drain(uint64_t deadline_ns, int destroy)
{
    pthread_mutex_lock(&reg_mu);
    size_t n = nall;
    pthread_mutex_unlock(&reg_mu);
    for (size_t i = 0; i < n; i++) {
        pthread_mutex_lock(&reg_mu);
        prof_stream *p = all[i];
        pthread_mutex_unlock(&reg_mu);
        if (live(p)) drain_one(p, deadline_ns, destroy);
    }
}

void prof_markers_describe(void *f)
{
    pthread_mutex_lock(&reg_mu);
    for (size_t i = 0; i < nall; i++)
        fprintf((FILE *)f, "#stream\t%u\t%d\t%d\n", all[i]->id, all[i]->device,
                all[i]->is_default);
    pthread_mutex_unlock(&reg_mu);
}

uint64_t prof_markers_missing(void) { return atomic_load(&missing); }
void prof_markers_reset_missing(void) { atomic_store(&missing, 0); }

const char *prof_markers_backend(void)
{
    const char *n = atomic_load(&backend_name);
    return n ? n : "";
}
