/* Activity records through CUPTI's activity API (backend.h, activity_enable).
 *
 * libcupti is opened when the profiler first asks (HWRT_CUPTI_LIBRARY, else libcupti.so,
 * .so.13, .so.12 on the loader path, else the toolkit's folders); without it
 * activity_enable fails and the profiler places work with events instead.
 *
 * Correlation: each copy, memset and kernel queued with a nonzero hwi_backend_correlation
 * is bracketed by cuptiActivityPushExternalCorrelationId / Pop, so CUPTI emits an
 * EXTERNAL_CORRELATION record (CUPTI's correlation id -> hwrt's) next to the MEMCPY,
 * MEMSET or CONCURRENT_KERNEL record of the op. Buffers arrive on CUPTI's thread; records
 * are matched there and handed to the callback in one batch per buffer, with times moved
 * from CUPTI's clock onto CLOCK_MONOTONIC (an offset measured at enable). Host functions
 * and host-to-host copies, which CUPTI does not record, are reported by the backend
 * itself (cu_cupti_host_record). Records are read at the offsets cuda_api.h names, the
 * same in every record version (tests/cuda/check_cuda_api.c asserts it). */
#include "cuda_internal.h"
#include "../../base/dynlib.h"
#include "../../base/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static hcupti_api cupti;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;   /* load, enable, the tables */
static int load_state;                /* 0 not tried, 1 loaded, -1 failed */
static char load_reason[512];
static _Atomic(hwrt_activity_fn) cb_fn;
static void *_Atomic cb_ctx;
static _Atomic int active;
static int64_t clock_offset;          /* CLOCK_MONOTONIC - CUPTI's clock, ns */
static _Atomic uint64_t enqueued, retired;

#define BUF_BYTES ((size_t)1 << 20)
#define MAP_SLOTS 8192u               /* CUPTI id -> hwrt id, open addressing */
#define MAX_PENDING 4096              /* activity records whose id mapping came later */

typedef struct { uint32_t cupti; uint64_t ext; } map_slot;   /* ext 0: empty */
typedef struct { uint32_t cupti; uint64_t start, end; } pending_rec;
static map_slot map[MAP_SLOTS];
static pending_rec pending[MAX_PENDING];
static int npending;

static const char *const lib_names[] = {
    "libcupti.so", "libcupti.so.13", "libcupti.so.12", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
    "/usr/local/cuda/lib64/libcupti.so", NULL,
};

static int load_locked(void)
{
    if (load_state) return load_state > 0;
    const char *lib = lib_names[0];
    char why[384];
    void *h = hwi_dynlib_open("HWRT_CUPTI_LIBRARY", lib_names, &lib, why, sizeof why);
    if (!h) {
        snprintf(load_reason, sizeof load_reason, "CUPTI (libcupti) could not be loaded (%s); "
                 "install the CUDA toolkit's CUPTI or name it in HWRT_CUPTI_LIBRARY", why);
        load_state = -1;
        return 0;
    }
    static const hwi_dynsym syms[] = {
#define LOOK(slot, sym, ret, args) {#sym, (void **)&cupti.slot, 0, NULL},
        HCUPTI_FUNCS(LOOK, hcupti_activity)
#undef LOOK
    };
    const char *missing = hwi_dynlib_resolve(h, syms, sizeof syms / sizeof syms[0]);
    if (missing) {
        snprintf(load_reason, sizeof load_reason, "the CUPTI library %s lacks %s", lib, missing);
        load_state = -1;
        return 0;
    }
    load_state = 1;
    return 1;
}

static uint32_t rd32(const uint8_t *rec, int off) { uint32_t v; memcpy(&v, rec + off, 4); return v; }
static uint64_t rd64(const uint8_t *rec, int off) { uint64_t v; memcpy(&v, rec + off, 8); return v; }

static void map_put(uint32_t c, uint64_t ext)
{
    uint32_t i = (c * 2654435761u) % MAP_SLOTS;
    for (uint32_t n = 0; n < MAP_SLOTS; n++, i = (i + 1) % MAP_SLOTS)
        if (!map[i].ext || map[i].cupti == c) { map[i].cupti = c; map[i].ext = ext; return; }
    /* full: ids whose ops never produced a record (other libraries' pushes); start over */
    memset(map, 0, sizeof map);
    map_put(c, ext);
}

/* Remove and return c's hwrt id, 0 if unknown. Deletion re-inserts the rest of the run. */
static uint64_t map_take(uint32_t c)
{
    uint32_t i = (c * 2654435761u) % MAP_SLOTS;
    for (uint32_t n = 0; n < MAP_SLOTS && map[i].ext; n++, i = (i + 1) % MAP_SLOTS) {
        if (map[i].cupti != c) continue;
        uint64_t ext = map[i].ext;
        map[i].ext = 0;
        for (uint32_t j = (i + 1) % MAP_SLOTS; map[j].ext; j = (j + 1) % MAP_SLOTS) {
            map_slot s = map[j];
            map[j].ext = 0;
            map_put(s.cupti, s.ext);
        }
        return ext;
    }
    return 0;
}

static void deliver(const hwrt_activity *recs, size_t n)
{
    if (!n) return;
    hwrt_activity_fn fn = atomic_load(&cb_fn);
    if (fn) fn(atomic_load(&cb_ctx), recs, n);
    atomic_fetch_add(&retired, n);
}

static void buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, BUF_BYTES);
    *size = *buffer ? BUF_BYTES : 0;
    *max_records = 0;
}

static void add_record(hwrt_activity *out, size_t *n, uint64_t ext, uint64_t start, uint64_t end)
{
    out[*n].correlation_id = ext;
    out[*n].start_ns = (uint64_t)((int64_t)start + clock_offset);
    out[*n].end_ns = (uint64_t)((int64_t)end + clock_offset);
    ++*n;
}

/* On CUPTI's thread: no CUDA call is made here. */
static void buffer_completed(hcu_context ctx, uint32_t stream_id, uint8_t *buffer, size_t size,
                             size_t valid)
{
    size_t cap = valid / 32 + 1, n = 0;   /* every activity record is larger than 32 bytes */
    hwrt_activity *out = malloc(cap * sizeof *out);
    hcupti_activity *r = NULL;
    pthread_mutex_lock(&mu);
    while (out && buffer && cupti.ActivityGetNextRecord(buffer, valid, &r) == HCUPTI_SUCCESS) {
        const uint8_t *rec = (const uint8_t *)r;
        int corr_off = -1;
        switch (r->kind) {
        case HCUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
            if (rd32(rec, HCUPTI_OFF_EXT_KIND) != HCUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) break;
            uint32_t c = rd32(rec, HCUPTI_OFF_EXT_CORRELATION);
            uint64_t ext = rd64(rec, HCUPTI_OFF_EXT_ID);
            int matched = 0;
            for (int i = 0; i < npending && !matched; i++)
                if (pending[i].cupti == c && n < cap) {
                    add_record(out, &n, ext, pending[i].start, pending[i].end);
                    pending[i] = pending[--npending];
                    matched = 1;
                }
            if (!matched) map_put(c, ext);
            break;
        }
        case HCUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: corr_off = HCUPTI_OFF_KERNEL_CORRELATION; break;
        case HCUPTI_ACTIVITY_KIND_MEMCPY: corr_off = HCUPTI_OFF_MEMCPY_CORRELATION; break;
        case HCUPTI_ACTIVITY_KIND_MEMSET: corr_off = HCUPTI_OFF_MEMSET_CORRELATION; break;
        default: break;
        }
        if (corr_off < 0 || n >= cap) continue;
        uint32_t c = rd32(rec, corr_off);
        uint64_t start = rd64(rec, HCUPTI_OFF_START), end = rd64(rec, HCUPTI_OFF_END);
        uint64_t ext = map_take(c);
        if (ext) {
            add_record(out, &n, ext, start, end);
        } else {
            /* its mapping may come in a later buffer; the oldest unmatched (another
             * library's work, never correlated) make room */
            if (npending == MAX_PENDING) memmove(pending, pending + 1, --npending * sizeof *pending);
            pending[npending++] = (pending_rec){c, start, end};
        }
    }
    pthread_mutex_unlock(&mu);
    deliver(out, n);
    free(out);
    free(buffer);
}

static const unsigned kinds[] = {HCUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                 HCUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                 HCUPTI_ACTIVITY_KIND_MEMCPY, HCUPTI_ACTIVITY_KIND_MEMSET};

hwrt_status cu_activity_enable(hwrt_activity_fn fn, void *ctx)
{
    pthread_mutex_lock(&mu);
    if (!fn) {
        if (atomic_load(&active)) {
            atomic_store(&active, 0);
            for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
                cupti.ActivityDisable(kinds[i]);
            atomic_store(&cb_fn, NULL);
            pthread_mutex_unlock(&mu);
            cupti.ActivityFlushAll(HCUPTI_ACTIVITY_FLAG_FLUSH_FORCED);   /* calls back: unlocked */
            return HWRT_SUCCESS;
        }
        pthread_mutex_unlock(&mu);
        return HWRT_SUCCESS;
    }
    if (!load_locked()) {
        pthread_mutex_unlock(&mu);
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "cuda activity records: %s", load_reason);
    }
    hcupti_result r = HCUPTI_SUCCESS;
    if (!atomic_load(&active)) {
        r = cupti.ActivityRegisterCallbacks(buffer_requested, buffer_completed);
        for (size_t i = 0; r == HCUPTI_SUCCESS && i < sizeof kinds / sizeof kinds[0]; i++)
            r = cupti.ActivityEnable(kinds[i]);
        uint64_t t0 = cu_now_ns(), ts = 0;
        if (r == HCUPTI_SUCCESS) r = cupti.GetTimestamp(&ts);
        uint64_t t1 = cu_now_ns();
        clock_offset = (int64_t)(t0 + (t1 - t0) / 2) - (int64_t)ts;
        if (r != HCUPTI_SUCCESS)
            for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
                cupti.ActivityDisable(kinds[i]);
    }
    if (r == HCUPTI_SUCCESS) {
        atomic_store(&enqueued, 0);
        atomic_store(&retired, 0);
        npending = 0;
        memset(map, 0, sizeof map);
        atomic_store(&cb_ctx, ctx);
        atomic_store(&cb_fn, fn);
        atomic_store(&active, 1);
    }
    pthread_mutex_unlock(&mu);
    if (r != HCUPTI_SUCCESS)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "cuda activity records: enabling CUPTI's activity "
                       "API failed (CUptiResult %u: no usable driver, or another profiler holds "
                       "CUPTI)", r);
    return HWRT_SUCCESS;
}

hwrt_status cu_activity_query(void)
{
    if (!atomic_load(&active)) return HWRT_SUCCESS;
    cupti.ActivityFlushAll(0);        /* hands over completed buffers, does not wait for work */
    if (atomic_load(&cu_faulted)) return HWRT_SUCCESS;   /* ops behind a fault never run */
    return atomic_load(&retired) >= atomic_load(&enqueued) ? HWRT_SUCCESS : HWRT_ERROR_NOT_READY;
}

uint64_t cu_cupti_push(void)
{
    uint64_t id = hwi_backend_correlation;
    if (!id || !atomic_load(&active)) return 0;
    if (cupti.ActivityPushExternalCorrelationId(HCUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id) !=
        HCUPTI_SUCCESS)
        return 0;
    return id;
}

void cu_cupti_pop(uint64_t pushed, int queued)
{
    if (!pushed) return;
    uint64_t last = 0;
    cupti.ActivityPopExternalCorrelationId(HCUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
    if (queued) atomic_fetch_add(&enqueued, 1);
}

uint64_t cu_cupti_host_begin(void)
{
    uint64_t id = hwi_backend_correlation;
    if (!id || !atomic_load(&active)) return 0;
    atomic_fetch_add(&enqueued, 1);
    return id;
}

void cu_cupti_host_record(uint64_t id, uint64_t start_ns, uint64_t end_ns, int ran)
{
    if (!id) return;
    if (!ran) {                       /* skipped: retired without a record */
        atomic_fetch_add(&retired, 1);
        return;
    }
    hwrt_activity a = {.correlation_id = id, .start_ns = start_ns, .end_ns = end_ns};
    deliver(&a, 1);
}
