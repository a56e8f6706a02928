/* The TEST DOUBLE of libascendcl.so, device part (HWRT_ASCEND_DOUBLE=device): one fake
 * device (HWRT_ASCEND_DOUBLE_DEVICES=n: n alike) whose memory is host memory and whose
 * streams run each op at once, in order. It exists to check the ascend backend's slot
 * logic against the rules CANN documents, and enforces them harder than a runtime would
 * (tests/ascend/ascend_slots.c):
 *   - a stream, its events and memory calls need the stream's context current on the
 *     calling thread (ACL_ERROR_RT_STREAM_CONTEXT, 107003, otherwise);
 *   - a copy or memset of 0 bytes, or count > destMax, aborts (ACL rejects them);
 *   - aclrtMemcpyAsync with a host side not from aclrtMallocHost aborts (CANN 8.0 calls it
 *     unpredictable);
 *   - aclrtFree of a pointer aclrtMalloc did not give fails with ACL_ERROR_RT_PARAM_INVALID
 *     (107000) and frees nothing; at most 256 aclrtMalloc blocks live at once;
 *   - any ACL call from inside a callback aborts (CANN forbids them there);
 *   - callbacks run only in aclrtProcessReport on the thread subscribed for the stream,
 *     and later work on the stream waits for them (ACL_CALLBACK_BLOCK);
 *   - aclrtUnmapMem takes a mapping's start only; a mapped physical handle cannot be freed;
 *     the physical handles not freed are counted (C_PHYS_LIVE); aclrtMapMem takes an
 *     injected fault (acl_double_inject); acl_double_granularity sets the granularity
 *     aclrtMemGetAllocationGranularity recommends (0: 2 MiB, the only one CANN has);
 *     acl_double_priority_range the stream priority range the device reports;
 *   - the device clock is CLOCK_MONOTONIC in microseconds plus a large offset.
 * It is not a runtime and nothing "runs on ascend" through it: no conformance or other
 * suite loads it; the tests that do are named as the double's. Hooks for the test:
 * acl_double_*. */
#include "backends/ascend/ascend_api.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define DEV_CLOCK_OFFSET_US 5000000000ull        /* the device epoch: 5000 s before ours */
#define GRANULE (2u << 20)

typedef struct dctx { int magic; int ordinal; } dctx;
typedef struct dstream {
    dctx *ctx;
    uint32_t prio;
    uint64_t sub_tid;       /* 0: not subscribed */
    int pending;            /* callbacks queued, not yet run */
} dstream;
typedef struct devent { dctx *ctx; int recorded; uint64_t us; } devent;
typedef struct dcb { hacl_callback fn; void *data; dstream *s; struct dcb *next; } dcb;
typedef struct dphys { size_t size; void *mapped_at; } dphys;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static _Thread_local dctx *cur;
static _Thread_local int in_callback;
static dctx foreign = {0x600d, 99};              /* "another library's" context */
static dcb *queue;
static int pending_all;
static int fault_code, fault_times;
static int stream_fail_code;          /* the next stream creation fails with it (0: none) */
static _Atomic int counters[8];
enum { C_MEMCPY_ASYNC, C_MEMCPY, C_MEMSET, C_CALLBACK_OK, C_CALLBACK_BAD, C_SUBSCRIBED,
       C_WRONG_CONTEXT, C_PHYS_LIVE };

static struct { void *p; size_t n; } pinned[64], devmem[256];   /* live blocks */
static struct { uintptr_t base; size_t n; void *raw; size_t rawn; } resv[16];

int acl_double_devices(void);                    /* acl_double.c */

static void die(const char *what)
{
    fprintf(stderr, "hwrt's test double of libascendcl: %s\n", what);
    abort();
}

static void enter(const char *fn)
{
    const char *m = getenv("HWRT_ASCEND_DOUBLE");
    if (!m || strcmp(m, "device")) {
        fprintf(stderr, "hwrt's test double of libascendcl: %s called without "
                "HWRT_ASCEND_DOUBLE=device\n", fn);
        abort();
    }
    if (in_callback) {
        fprintf(stderr, "hwrt's test double of libascendcl: %s called from a callback "
                "(CANN forbids ACL calls there)\n", fn);
        abort();
    }
}

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u + DEV_CLOCK_OFFSET_US;
}

/* every refusal for a wrong or missing context is counted: hwrt must cause none */
static hacl_error wrong(hacl_error r)
{
    counters[C_WRONG_CONTEXT]++;
    return r;
}

static hacl_error in_ctx(const dstream *s)
{
    return cur && s && cur == s->ctx ? HACL_SUCCESS : wrong(HACL_ERROR_RT_STREAM_CONTEXT);
}

/* later work waits for the stream's callbacks (BLOCK); caller holds mu */
static void drain(dstream *s)
{
    while (s->pending) pthread_cond_wait(&cv, &mu);
}

static hacl_error take_fault(void)
{
    if (fault_times <= 0) return HACL_SUCCESS;
    fault_times--;
    return fault_code;
}

static int is_pinned(const void *p, size_t n)
{
    for (int i = 0; i < 64; i++)
        if (pinned[i].p && (const char *)p >= (char *)pinned[i].p &&
            (const char *)p + n <= (char *)pinned[i].p + pinned[i].n)
            return 1;
    return 0;
}

/* ---- hooks for tests/ascend/ascend_slots.c ---- */
void acl_double_inject(int code, int times)
{
    pthread_mutex_lock(&mu);
    fault_code = code;
    fault_times = times;
    pthread_mutex_unlock(&mu);
}
int acl_double_counter(int which) { return counters[which]; }
uint32_t acl_double_stream_priority(void *s) { return ((dstream *)s)->prio; }
void acl_double_foreign_context(void) { cur = &foreign; }
void acl_double_fail_stream(int code);
void acl_double_fail_stream(int code) { stream_fail_code = code; }
/* for hccl_double.c: the device whose context is current on this thread (-1: none) */
int acl_double_current_device(void);
int acl_double_current_device(void) { return cur && cur != &foreign ? cur->ordinal : -1; }

/* ---- contexts and the device ---- */
hacl_error aclrtCreateContext(hacl_context *c, int32_t ordinal)
{
    enter(__func__);
    if (ordinal < 0 || ordinal >= acl_double_devices()) return HACL_ERROR_RT_INVALID_DEVICEID;
    dctx *x = calloc(1, sizeof *x);
    x->magic = 0xac1;
    x->ordinal = ordinal;
    *c = cur = x;
    return HACL_SUCCESS;
}
hacl_error aclrtDestroyContext(hacl_context c) { enter(__func__); free(c); return HACL_SUCCESS; }
hacl_error aclrtSetCurrentContext(hacl_context c)
{
    enter(__func__);
    cur = c;
    return HACL_SUCCESS;
}
/* acl_double_granularity(g): the recommended VMM granularity (0: GRANULE) */
static _Atomic size_t granularity;
void acl_double_granularity(size_t g);
void acl_double_granularity(size_t g) { granularity = g; }
/* acl_double_soc(mode): 0 the SoC name as usual, 1 none (NULL), 2 an empty name: what a
 * runtime that cannot tell its SoC answers */
static _Atomic int soc_mode;
void acl_double_soc(int mode);
void acl_double_soc(int mode) { soc_mode = mode; }
const char *aclrtGetSocName(void)
{
    enter(__func__);
    if (soc_mode) return soc_mode == 1 ? NULL : "";
    return cur && cur != &foreign ? "Ascend910B3" : NULL;
}
hacl_error aclrtGetVersion(int32_t *a, int32_t *b, int32_t *c)
{
    enter(__func__);
    *a = 1, *b = 16, *c = 0;
    return HACL_SUCCESS;
}
hacl_error aclGetDeviceCapability(uint32_t dev, hacl_device_info what, int64_t *v)
{
    enter(__func__);
    *v = what == HACL_DEVICE_INFO_AI_CORE_NUM ? 24 : 0;
    return HACL_SUCCESS;
}
/* acl_double_meminfo(mode): 0 as usual; 1 aclrtGetMemInfo fails; 2 it reports more free
 * than total memory (what hwrt must not turn into an overhead) */
static _Atomic int meminfo_mode;
void acl_double_meminfo(int mode);
void acl_double_meminfo(int mode) { meminfo_mode = mode; }
hacl_error aclrtGetMemInfo(hacl_mem_attr attr, size_t *free_b, size_t *total)
{
    enter(__func__);
    if (!cur || cur == &foreign) return wrong(HACL_ERROR_RT_CONTEXT_NULL);
    if (meminfo_mode == 1) return HACL_ERROR_RT_PARAM_INVALID;
    *total = 64ull << 30;
    *free_b = meminfo_mode == 2 ? 65ull << 30 : 60ull << 30;
    return HACL_SUCCESS;
}
/* acl_double_priority_range(least, greatest): the range aclrtDeviceGetStreamPriorityRange
 * reports (default 7, 0: CANN's) */
static _Atomic int32_t prio_least = 7, prio_greatest = 0;
void acl_double_priority_range(int32_t least, int32_t greatest);
void acl_double_priority_range(int32_t least, int32_t greatest)
{
    prio_least = least;
    prio_greatest = greatest;
}
hacl_error aclrtDeviceGetStreamPriorityRange(int32_t *least, int32_t *greatest)
{
    enter(__func__);
    *least = prio_least, *greatest = prio_greatest;
    return HACL_SUCCESS;
}
hacl_error aclrtSynchronizeDevice(void)
{
    enter(__func__);
    pthread_mutex_lock(&mu);
    while (pending_all) pthread_cond_wait(&cv, &mu);
    hacl_error r = take_fault();
    pthread_mutex_unlock(&mu);
    return r;
}

/* ---- memory ---- */
hacl_error aclrtMalloc(void **p, size_t n, hacl_malloc_policy pol)
{
    enter(__func__);
    if (!cur || cur == &foreign) return wrong(HACL_ERROR_RT_CONTEXT_NULL);
    if (!n) return HACL_ERROR_INVALID_PARAM;
    *p = aligned_alloc(64, (n + 32 + 63) / 64 * 64);   /* ALIGN_UP(n, 32) + 32, in 64s */
    if (!*p) return HACL_ERROR_RT_MEMORY_ALLOCATION;
    pthread_mutex_lock(&mu);
    int i = 0;
    while (i < 256 && devmem[i].p) i++;
    if (i < 256) { devmem[i].p = *p; devmem[i].n = n; }
    pthread_mutex_unlock(&mu);
    if (i == 256) {                      /* the double's capacity: 256 live blocks */
        free(*p);
        *p = NULL;
        return HACL_ERROR_RT_MEMORY_ALLOCATION;
    }
    return HACL_SUCCESS;
}
hacl_error aclrtFree(void *p)
{
    enter(__func__);
    int found = 0;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < 256; i++)
        if (devmem[i].p == p) { devmem[i].p = NULL; found = 1; }
    pthread_mutex_unlock(&mu);
    if (!found)
        return HACL_ERROR_RT_PARAM_INVALID;   /* not a block aclrtMalloc gave: the runtime's
                                                 answer, nothing freed */
    free(p);
    return HACL_SUCCESS;
}

/* for acl_double_nn.c: [p, p + n) inside a live aclrtMalloc block; s usable here */
int acl_double_in_device_memory(const void *p, size_t n)
{
    int in = 0;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < 256; i++)
        if (devmem[i].p && (const char *)p >= (char *)devmem[i].p &&
            (const char *)p + n <= (char *)devmem[i].p + devmem[i].n)
            in = 1;
    pthread_mutex_unlock(&mu);
    return in;
}
int acl_double_stream_ok(void *s) { return in_ctx(s) == HACL_SUCCESS; }
hacl_error aclrtMallocHost(void **p, size_t n)
{
    enter(__func__);
    if (!cur) return wrong(HACL_ERROR_RT_CONTEXT_NULL);
    *p = aligned_alloc(64, (n + 63) / 64 * 64);
    pthread_mutex_lock(&mu);
    for (int i = 0; i < 64; i++)
        if (!pinned[i].p) { pinned[i].p = *p; pinned[i].n = n; break; }
    pthread_mutex_unlock(&mu);
    return HACL_SUCCESS;
}
hacl_error aclrtFreeHost(void *p)
{
    enter(__func__);
    pthread_mutex_lock(&mu);
    for (int i = 0; i < 64; i++)
        if (pinned[i].p == p) pinned[i].p = NULL;
    pthread_mutex_unlock(&mu);
    free(p);
    return HACL_SUCCESS;
}
hacl_error aclrtMemcpy(void *dst, size_t max, const void *src, size_t n, hacl_memcpy_kind k)
{
    enter(__func__);
    if (!n || n > max) die("aclrtMemcpy with count 0 or count > destMax");
    if (!cur || cur == &foreign) return wrong(HACL_ERROR_RT_CONTEXT_NULL);
    memmove(dst, src, n);
    counters[C_MEMCPY]++;
    return HACL_SUCCESS;
}
hacl_error aclrtMemcpyAsync(void *dst, size_t max, const void *src, size_t n, hacl_memcpy_kind k,
                            hacl_stream st)
{
    enter(__func__);
    dstream *s = st;
    if (!n || n > max) die("aclrtMemcpyAsync with count 0 or count > destMax");
    if ((k == HACL_MEMCPY_HOST_TO_DEVICE && !is_pinned(src, n)) ||
        (k == HACL_MEMCPY_DEVICE_TO_HOST && !is_pinned(dst, n)))
        die("aclrtMemcpyAsync with pageable host memory");
    if (in_ctx(s)) return HACL_ERROR_RT_STREAM_CONTEXT;
    pthread_mutex_lock(&mu);
    drain(s);
    pthread_mutex_unlock(&mu);
    memmove(dst, src, n);
    counters[C_MEMCPY_ASYNC]++;
    return HACL_SUCCESS;
}
hacl_error aclrtMemsetAsync(void *p, size_t max, int32_t v, size_t n, hacl_stream st)
{
    enter(__func__);
    dstream *s = st;
    if (!n || n > max) die("aclrtMemsetAsync with count 0 or count > maxCount");
    if (in_ctx(s)) return HACL_ERROR_RT_STREAM_CONTEXT;
    pthread_mutex_lock(&mu);
    drain(s);
    pthread_mutex_unlock(&mu);
    memset(p, v, n);
    counters[C_MEMSET]++;
    return HACL_SUCCESS;
}

/* ---- streams ---- */
hacl_error aclrtCreateStreamWithConfig(hacl_stream *out, uint32_t prio, uint32_t flag)
{
    enter(__func__);
    if (!cur || cur == &foreign) return wrong(HACL_ERROR_RT_CONTEXT_NULL);
    if (stream_fail_code) {
        hacl_error r = stream_fail_code;
        stream_fail_code = 0;
        return r;
    }
    dstream *s = calloc(1, sizeof *s);
    s->ctx = cur;
    s->prio = prio;
    *out = s;
    return HACL_SUCCESS;
}
hacl_error aclrtDestroyStream(hacl_stream st)
{
    enter(__func__);
    dstream *s = st;
    if (in_ctx(s)) return HACL_ERROR_RT_STREAM_CONTEXT;
    pthread_mutex_lock(&mu);
    drain(s);
    int sub = s->sub_tid != 0;
    pthread_mutex_unlock(&mu);
    if (sub) die("aclrtDestroyStream of a stream still subscribed to a report thread");
    free(s);
    return HACL_SUCCESS;
}
hacl_error aclrtSynchronizeStream(hacl_stream st)
{
    enter(__func__);
    dstream *s = st;
    if (in_ctx(s)) return HACL_ERROR_RT_STREAM_CONTEXT;
    pthread_mutex_lock(&mu);
    drain(s);
    hacl_error r = take_fault();
    pthread_mutex_unlock(&mu);
    return r;
}
hacl_error aclrtStreamQuery(hacl_stream st, hacl_stream_status *out)
{
    enter(__func__);
    dstream *s = st;
    if (in_ctx(s)) return HACL_ERROR_RT_STREAM_CONTEXT;
    pthread_mutex_lock(&mu);
    *out = s->pending ? HACL_STREAM_STATUS_NOT_READY : HACL_STREAM_STATUS_COMPLETE;
    pthread_mutex_unlock(&mu);
    return HACL_SUCCESS;
}
hacl_error aclrtStreamWaitEvent(hacl_stream st, hacl_event e)
{
    enter(__func__);
    return in_ctx(st);
}

/* ---- events: Ex is "not supported" here, so the plain ones are the fallback taken ---- */
hacl_error aclrtCreateEventExWithFlag(hacl_event *e, uint32_t flag)
{
    enter(__func__);
    return HACL_ERROR_RT_FEATURE_NOT_SUPPORT;
}
hacl_error aclrtCreateEvent(hacl_event *out)
{
    enter(__func__);
    if (!cur || cur == &foreign) return wrong(HACL_ERROR_RT_CONTEXT_NULL);
    devent *e = calloc(1, sizeof *e);
    e->ctx = cur;
    *out = e;
    return HACL_SUCCESS;
}
hacl_error aclrtDestroyEvent(hacl_event e)
{
    enter(__func__);
    if (!cur || cur != ((devent *)e)->ctx) return wrong(HACL_ERROR_RT_CONTEXT_NULL);
    free(e);
    return HACL_SUCCESS;
}
/* acl_double_fail_record(code): the next aclrtRecordEvent fails with it (0: none) */
static _Atomic int record_fail_code;
void acl_double_fail_record(int code);
void acl_double_fail_record(int code) { record_fail_code = code; }
hacl_error aclrtRecordEvent(hacl_event ev, hacl_stream st)
{
    enter(__func__);
    devent *e = ev;
    dstream *s = st;
    if (in_ctx(s)) return HACL_ERROR_RT_STREAM_CONTEXT;
    int fail = atomic_exchange(&record_fail_code, 0);
    if (fail) return fail;
    pthread_mutex_lock(&mu);
    drain(s);
    e->recorded = 1;
    e->us = now_us();
    pthread_mutex_unlock(&mu);
    return HACL_SUCCESS;
}
hacl_error aclrtQueryEventStatus(hacl_event ev, hacl_event_status *st)
{
    enter(__func__);
    *st = ((devent *)ev)->recorded ? HACL_EVENT_RECORDED_STATUS_COMPLETE
                                   : HACL_EVENT_RECORDED_STATUS_NOT_READY;
    return HACL_SUCCESS;
}
hacl_error aclrtSynchronizeEvent(hacl_event ev)
{
    enter(__func__);
    pthread_mutex_lock(&mu);
    hacl_error r = take_fault();
    pthread_mutex_unlock(&mu);
    return r;
}
hacl_error aclrtEventElapsedTime(float *ms, hacl_event a, hacl_event b)
{
    enter(__func__);
    devent *x = a, *y = b;
    if (!x->recorded || !y->recorded) return 107006;
    if (y->us < x->us) return 107007;
    *ms = (float)(y->us - x->us) / 1000.0f;
    return HACL_SUCCESS;
}
hacl_error aclrtEventGetTimestamp(hacl_event ev, uint64_t *us)
{
    enter(__func__);
    devent *e = ev;
    if (!e->recorded) return 107006;
    *us = e->us;
    return HACL_SUCCESS;
}

/* ---- callbacks: the report-thread pattern ---- */
hacl_error aclrtSubscribeReport(uint64_t tid, hacl_stream st)
{
    enter(__func__);
    dstream *s = st;
    if (in_ctx(s)) return HACL_ERROR_RT_STREAM_CONTEXT;
    pthread_mutex_lock(&mu);
    s->sub_tid = tid;
    counters[C_SUBSCRIBED]++;
    pthread_mutex_unlock(&mu);
    return HACL_SUCCESS;
}
hacl_error aclrtUnSubscribeReport(uint64_t tid, hacl_stream st)
{
    enter(__func__);
    dstream *s = st;
    if (in_ctx(s)) return HACL_ERROR_RT_STREAM_CONTEXT;
    pthread_mutex_lock(&mu);
    if (s->sub_tid != tid) die("aclrtUnSubscribeReport with another thread id");
    s->sub_tid = 0;
    counters[C_SUBSCRIBED]--;
    pthread_mutex_unlock(&mu);
    return HACL_SUCCESS;
}
hacl_error aclrtLaunchCallback(hacl_callback fn, void *data, hacl_callback_block block,
                               hacl_stream st)
{
    enter(__func__);
    dstream *s = st;
    if (in_ctx(s)) return HACL_ERROR_RT_STREAM_CONTEXT;
    if (block != HACL_CALLBACK_BLOCK) die("a host function launched without ACL_CALLBACK_BLOCK");
    pthread_mutex_lock(&mu);
    if (!s->sub_tid) {
        pthread_mutex_unlock(&mu);
        return HACL_ERROR_RT_THREAD_SUBSCRIBE;
    }
    dcb *c = calloc(1, sizeof *c), **tail = &queue;
    c->fn = fn, c->data = data, c->s = s;
    while (*tail) tail = &(*tail)->next;
    *tail = c;
    s->pending++;
    pending_all++;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    return HACL_SUCCESS;
}
hacl_error aclrtProcessReport(int32_t timeout_ms)
{
    enter(__func__);
    if (timeout_ms == 0 || timeout_ms < -1) return HACL_ERROR_INVALID_PARAM;
    const uint64_t me = (uint64_t)pthread_self();
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_nsec += (long)timeout_ms * 1000000L;
    dl.tv_sec += dl.tv_nsec / 1000000000L;
    dl.tv_nsec %= 1000000000L;
    pthread_mutex_lock(&mu);
    for (;;) {
        dcb **pp = &queue;
        while (*pp && (*pp)->s->sub_tid != me) pp = &(*pp)->next;
        if (*pp) {
            dcb *c = *pp;
            *pp = c->next;
            pthread_mutex_unlock(&mu);
            counters[cur == c->s->ctx ? C_CALLBACK_OK : C_CALLBACK_BAD]++;
            in_callback = 1;
            c->fn(c->data);
            in_callback = 0;
            pthread_mutex_lock(&mu);
            c->s->pending--;
            pending_all--;
            pthread_cond_broadcast(&cv);
            pthread_mutex_unlock(&mu);
            free(c);
            return HACL_SUCCESS;
        }
        if (pthread_cond_timedwait(&cv, &mu, &dl)) break;
    }
    pthread_mutex_unlock(&mu);
    return HACL_ERROR_RT_REPORT_TIMEOUT;
}

/* ---- VMM ---- */
hacl_error aclrtMemGetAllocationGranularity(hacl_physical_mem_prop *p, hacl_granularity_option o,
                                            size_t *g)
{
    enter(__func__);
    *g = granularity ? granularity : GRANULE;
    return HACL_SUCCESS;
}
hacl_error aclrtReserveMemAddress(void **out, size_t n, size_t align, void *hint, uint64_t flags)
{
    enter(__func__);
    if (align || hint || flags != 1 || !n) return HACL_ERROR_INVALID_PARAM;
    size_t rawn = n + GRANULE;
    void *raw = mmap(NULL, rawn, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) return HACL_ERROR_RT_MEMORY_ALLOCATION;
    uintptr_t b = ((uintptr_t)raw + GRANULE - 1) / GRANULE * GRANULE;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < 16; i++)
        if (!resv[i].base) {
            resv[i].base = b, resv[i].n = n, resv[i].raw = raw, resv[i].rawn = rawn;
            break;
        }
    pthread_mutex_unlock(&mu);
    *out = (void *)b;
    return HACL_SUCCESS;
}
/* mappings: start -> handle, one slot per granule of the reservation */
static dphys *mapped[16][512];
static int resv_of(uintptr_t a)
{
    for (int i = 0; i < 16; i++)
        if (resv[i].base && a >= resv[i].base && a < resv[i].base + resv[i].n) return i;
    return -1;
}
hacl_error aclrtReleaseMemAddress(void *p)
{
    enter(__func__);
    pthread_mutex_lock(&mu);
    int i = resv_of((uintptr_t)p);
    hacl_error r = HACL_SUCCESS;
    if (i < 0 || resv[i].base != (uintptr_t)p) r = HACL_ERROR_RT_PARAM_INVALID;
    for (int g = 0; r == HACL_SUCCESS && g < 512; g++)
        if (mapped[i][g]) r = HACL_ERROR_RT_PARAM_INVALID;      /* still mapped */
    if (r == HACL_SUCCESS) {
        munmap(resv[i].raw, resv[i].rawn);
        resv[i].base = 0;
    }
    pthread_mutex_unlock(&mu);
    return r;
}
hacl_error aclrtMallocPhysical(hacl_mem_handle *h, size_t n, const hacl_physical_mem_prop *p,
                               uint64_t flags)
{
    enter(__func__);
    if (flags || p->location.type != HACL_MEM_LOCATION_TYPE_DEVICE ||
        p->mem_attr != HACL_HBM_MEM_HUGE || n % GRANULE)
        return HACL_ERROR_INVALID_PARAM;
    dphys *x = calloc(1, sizeof *x);
    x->size = n;
    *h = x;
    counters[C_PHYS_LIVE]++;
    return HACL_SUCCESS;
}
hacl_error aclrtFreePhysical(hacl_mem_handle h)
{
    enter(__func__);
    if (((dphys *)h)->mapped_at) return HACL_ERROR_RT_PARAM_INVALID;
    free(h);
    counters[C_PHYS_LIVE]--;
    return HACL_SUCCESS;
}
hacl_error aclrtMapMem(void *p, size_t n, size_t off, hacl_mem_handle h, uint64_t flags)
{
    enter(__func__);
    dphys *x = h;
    uintptr_t a = (uintptr_t)p;
    pthread_mutex_lock(&mu);
    int i = resv_of(a);
    hacl_error r = take_fault();
    if (r == HACL_SUCCESS && (i < 0 || off || flags || n != x->size || x->mapped_at || a % GRANULE ||
        a + n > resv[i].base + resv[i].n))
        r = HACL_ERROR_RT_PARAM_INVALID;
    for (size_t g = 0; r == HACL_SUCCESS && g < n / GRANULE; g++)
        if (mapped[i][(a - resv[i].base) / GRANULE + g]) r = HACL_ERROR_RT_PARAM_INVALID;
    if (r == HACL_SUCCESS) {
        mprotect(p, n, PROT_READ | PROT_WRITE);
        x->mapped_at = p;
        for (size_t g = 0; g < n / GRANULE; g++) mapped[i][(a - resv[i].base) / GRANULE + g] = x;
    }
    pthread_mutex_unlock(&mu);
    return r;
}
hacl_error aclrtUnmapMem(void *p)
{
    enter(__func__);
    uintptr_t a = (uintptr_t)p;
    pthread_mutex_lock(&mu);
    int i = resv_of(a);
    dphys *x = i >= 0 ? mapped[i][(a - resv[i].base) / GRANULE] : NULL;
    hacl_error r = HACL_SUCCESS;
    if (!x || x->mapped_at != p) r = HACL_ERROR_RT_PARAM_INVALID;   /* not a mapping's start */
    if (r == HACL_SUCCESS) {
        for (size_t g = 0; g < x->size / GRANULE; g++) mapped[i][(a - resv[i].base) / GRANULE + g] = NULL;
        madvise(p, x->size, MADV_DONTNEED);
        mprotect(p, x->size, PROT_NONE);
        x->mapped_at = NULL;
    }
    pthread_mutex_unlock(&mu);
    return r;
}
