/* The cuda backend's slot logic against the TEST DOUBLE of libcuda (cuda_double.c,
 * HWRT_CUDA_DOUBLE=device, 2 fake devices), calling the ops table directly as
 * tests/ascend/ascend_slots.c does for ascend: nothing here runs on a GPU, and no result
 * here says anything about CUDA hardware. What it checks is what hwrt itself must get
 * right around the driver API, with the double failing a call made without the right
 * current context (CUDA_ERROR_INVALID_CONTEXT) and failing chosen entry points on demand
 * (cuda_double_fail):
 *   - probe, properties, opening (a failure at any step of it leaves no context retained),
 *     memory figures, device memory and its errors (out of memory with its hint, anything
 *     else as a bug in hwrt), pinned host memory;
 *   - copies of every kind, pageable (landed on return) and pinned, memsets, host-to-host
 *     in stream order; their failures' sentences;
 *   - priorities clamped into the device's range [-5, 0];
 *   - stream query and sync, host functions in order, later work waiting for them;
 *   - events: record, query, sync, elapsed times, timestamps on CLOCK_MONOTONIC, events
 *     without timing;
 *   - every entry from a thread with no current context;
 *   - a sticky fault (cuda_double_inject) failing every later call on its device with its
 *     sentence, skipping host functions queued before it, the other device untouched, and
 *     no device_reset (CUDA cannot clear it);
 *   - VMM (cuda_double_vmm): one handle per granule, any run of granules unmapped, a
 *     mapping that fails half-way undone. */
#include "harness.h"
#include "backends/backend.h"
#include "backends/cuda/cuda_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

extern const hwrt_backend_ops hwrt_backend_cuda;
static const hwrt_backend_ops *B = &hwrt_backend_cuda;

/* the double's hooks */
static void (*inject)(unsigned code);
static void (*fail)(const char *entry, unsigned code, int skip);
static void (*fail_set_current)(unsigned code, int skip);
static int (*stream_priority)(const void *s);
static int (*retained)(int dev);
static int (*current_device)(void);
static void (*stream_drain)(void *s);
static int (*in_device_memory)(const void *p, size_t n, int dev);
static void (*vmm)(size_t gran);
static int (*vmm_live)(int which);
static void (*clock_skew)(int64_t ns);

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* host functions: each appends its tag to order[]; a gated one waits for the gate */
static int order[16];
static _Atomic int norder;
static _Atomic int gate_open = 1;
static _Atomic uint64_t fn_done_ns;
static void host_fn(void *arg)
{
    while (!gate_open) usleep(1000);
    struct timespec ts = {0, 20 * 1000 * 1000};   /* later work must wait for this */
    nanosleep(&ts, NULL);
    fn_done_ns = now_ns();
    int k = norder++;
    if (k < 16) order[k] = (int)(intptr_t)arg;
}

typedef struct { hwrt_bdev *d; hwrt_bstream *s; void *dev_buf; int ok, was_current; } thread_arg;

/* a thread with no current context: every entry makes the device's current */
static void *other_thread(void *p)
{
    thread_arg *a = p;
    a->was_current = current_device();
    unsigned char src[64], back[64];
    memset(src, 0x5a, sizeof src);
    memset(back, 0, sizeof back);
    hwrt_bstream *s2 = NULL;
    hwrt_bevent *e = NULL;
    a->ok = B->memcpy_async(a->s, a->dev_buf, src, 64, HWRT_MEMCPY_HOST_TO_DEVICE, 0) ==
                HWRT_SUCCESS &&
            B->stream_create(a->d, 0, &s2) == HWRT_SUCCESS &&
            B->event_create(a->d, 0, &e) == HWRT_SUCCESS &&
            B->event_record(e, a->s) == HWRT_SUCCESS &&
            B->stream_wait_event(s2, e) == HWRT_SUCCESS &&
            B->memcpy_async(s2, back, a->dev_buf, 64, HWRT_MEMCPY_DEVICE_TO_HOST, 0) ==
                HWRT_SUCCESS &&
            B->stream_query(s2) == HWRT_SUCCESS && !memcmp(src, back, 64);
    /* destroyed from here, after the context was taken away again */
    B->thread_enter(a->d);   /* (harmless) */
    if (e) B->event_destroy(e);
    if (s2) B->stream_destroy(s2);
    return NULL;
}

int main(void)
{
    void *dbl = dlopen(getenv("HWRT_CUDA_LIBRARY"), RTLD_NOW);
    if (!dbl) { fprintf(stderr, "the test double: %s\n", dlerror()); return 1; }
    *(void **)&inject = dlsym(dbl, "cuda_double_inject");
    *(void **)&fail = dlsym(dbl, "cuda_double_fail");
    *(void **)&fail_set_current = dlsym(dbl, "cuda_double_fail_set_current");
    *(void **)&stream_priority = dlsym(dbl, "cuda_double_stream_priority");
    *(void **)&retained = dlsym(dbl, "cuda_double_retained");
    *(void **)&current_device = dlsym(dbl, "cuda_double_current_device");
    *(void **)&stream_drain = dlsym(dbl, "cuda_double_stream_drain");
    *(void **)&in_device_memory = dlsym(dbl, "cuda_double_in_device_memory");
    *(void **)&vmm = dlsym(dbl, "cuda_double_vmm");
    *(void **)&vmm_live = dlsym(dbl, "cuda_double_vmm_live");
    *(void **)&clock_skew = dlsym(dbl, "cuda_double_clock_skew");
    if (!inject || !fail || !fail_set_current || !stream_priority || !retained ||
        !current_device || !stream_drain || !in_device_memory || !vmm || !vmm_live || !clock_skew) {
        fprintf(stderr, "HWRT_CUDA_LIBRARY is not the test double of libcuda\n");
        return 1;
    }

    TEST_CASE("probe and props");
    int n = 0;
    char reason[256];
    OK(B->probe(&n, reason, sizeof reason));
    EXPECT(n == 2);
    hwrt_device_props props;
    OK(B->device_props(1, &props));
    EXPECT(!strcmp(props.name, "hwrt's test double of libcuda, device 1 (sm_90)"));
    EXPECT(props.total_memory == (1ull << 30) && props.compute_units == 1 &&
           props.device_id == 1 && props.link_gbps == 0);
    EXPECT(!strcmp(props.backend, "cuda") && !props.simulated);
    FAILS(B->device_props(2, &props), HWRT_ERROR_INVALID_DEVICE,
          "cuda device 2 does not exist (2 device(s))");
    FAILS(B->device_props(-1, &props), HWRT_ERROR_INVALID_DEVICE, "cuda device -1 does not exist");
    fail("cuDeviceTotalMem_v2", 999, 0);
    FAILS(B->device_props(0, &props), HWRT_ERROR_INTERNAL,
          "cuDeviceTotalMem(cuda device 0): CUDA_ERROR_UNKNOWN (999); this is a bug");

    TEST_CASE("pinned host memory when device 0's context cannot be had");
    void *h = NULL;
    fail("cuDevicePrimaryCtxRetain", 101, 0);    /* CUDA_ERROR_INVALID_DEVICE */
    FAILS(B->host_alloc(64, &h), HWRT_ERROR_INVALID_DEVICE,
          "cuda: making device 0's context current for pinned host memory");
    EXPECT(retained(0) == 0);

    TEST_CASE("opening: a failure at any step leaves nothing retained");
    hwrt_bdev *d = NULL;
    FAILS(B->device_open(2, &d), HWRT_ERROR_INVALID_DEVICE, "(2 device(s))");
    struct { const char *entry; unsigned code; hwrt_status want; const char *frag; } steps[] = {
        {"cuDevicePrimaryCtxRetain", 101, HWRT_ERROR_INVALID_DEVICE, "exclusive-process mode"},
        {"cuCtxGetStreamPriorityRange", 999, HWRT_ERROR_INTERNAL,
         "cuda device 0: cuCtxGetStreamPriorityRange: CUDA_ERROR_UNKNOWN (999)"},
        {"cuStreamCreateWithPriority", 2, HWRT_ERROR_OUT_OF_MEMORY,
         "cuda device 0: creating the internal stream: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory"},
        {"cuEventCreate", 2, HWRT_ERROR_OUT_OF_MEMORY, "creating the timestamp reference"},
        {"cuEventRecord", 999, HWRT_ERROR_INTERNAL, "recording the timestamp reference"},
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        fail(steps[i].entry, steps[i].code, 0);
        d = NULL;
        FAILS(B->device_open(0, &d), steps[i].want, steps[i].frag);
        EXPECT(d == NULL && retained(0) == 0);
    }
    fail_set_current(201, 0);                     /* CUDA_ERROR_INVALID_CONTEXT */
    FAILS(B->device_open(0, &d), HWRT_ERROR_INTERNAL,
          "cuda device 0: cuCtxSetCurrent: CUDA_ERROR_INVALID_CONTEXT (201)");
    EXPECT(retained(0) == 0);

    TEST_CASE("open, memory figures");
    d = NULL;
    OK(B->device_open(0, &d));
    if (!d) return test_report();
    EXPECT(retained(0) == 1 && B->va_granularity(d) == 0);
    size_t fr = 0, tot = 0, over = 1;
    OK(B->mem_info(d, &fr, &tot, &over));
    EXPECT(tot == (1ull << 30) && fr == tot && over == 0);
    fail("cuMemGetInfo_v2", 999, 0);
    FAILS(B->mem_info(d, &fr, &tot, &over), HWRT_ERROR_INTERNAL, "cuda device 0: cuMemGetInfo");
    FAILS(B->va_reserve(d, 1 << 21, &h), HWRT_ERROR_NOT_SUPPORTED,
          "cuda device 0 has no virtual memory management");

    TEST_CASE("device memory");
    void *a = NULL, *b = NULL;
    OK(B->segment_alloc(d, 1 << 20, &a));
    OK(B->segment_alloc(d, 4096, &b));
    EXPECT(a && b && in_device_memory(a, 1 << 20, 0) && !in_device_memory(a, 1, 1));
    OK(B->mem_info(d, &fr, &tot, &over));
    EXPECT(fr == tot - (1 << 20) - 4096);
    void *big = NULL;
    FAILS(B->segment_alloc(d, 2ull << 30, &big), HWRT_ERROR_OUT_OF_MEMORY,
          "cuda device 0: cuMemAlloc(2147483648 bytes): CUDA_ERROR_OUT_OF_MEMORY (2): out of "
          "memory; free device memory or allocate less");
    EXPECT(big == NULL);
    fail("cuMemAlloc_v2", 2, 0);
    FAILS(B->segment_alloc(d, 64, &big), HWRT_ERROR_OUT_OF_MEMORY, "cuMemAlloc(64 bytes)");
    fail("cuMemFree_v2", 1, 0);
    FAILS(B->segment_free(d, b, 4096), HWRT_ERROR_INTERNAL, "bytes): CUDA_ERROR_INVALID_VALUE (1)");
    OK(B->segment_free(d, b, 4096));             /* (the failed free freed nothing) */
    FAILS(B->segment_free(d, b, 4096), HWRT_ERROR_INTERNAL, "4096 bytes): CUDA_ERROR_INVALID_VALUE");
    OK(B->mem_info(d, &fr, &tot, &over));
    EXPECT(fr == tot - (1 << 20));

    TEST_CASE("pinned host memory");
    unsigned char *pin = NULL;
    OK(B->host_alloc(256, (void **)&pin));
    EXPECT(pin != NULL && retained(0) == 2);     /* the device's and the host allocations' */
    fail("cuMemHostAlloc", 2, 0);
    FAILS(B->host_alloc(64, &h), HWRT_ERROR_HOST_OUT_OF_MEMORY,
          "cuMemHostAlloc(64 bytes): out of page-locked host memory");
    fail("cuMemHostAlloc", 999, 0);
    FAILS(B->host_alloc(64, &h), HWRT_ERROR_INTERNAL, "cuMemHostAlloc(64 bytes): CUDA_ERROR_UNKNOWN (999)");

    TEST_CASE("priorities clamped into [-5, 0]");
    int prios[][2] = {{0, 0}, {-2, -2}, {-5, -5}, {-100, -5}, {7, 0}};
    for (size_t i = 0; i < 5; i++) {
        hwrt_bstream *s = NULL;
        OK(B->stream_create(d, prios[i][0], &s));
        if (!s) continue;
        EXPECT(s->priority == prios[i][1] && stream_priority(B->stream_native(s)) == prios[i][1]);
        B->stream_destroy(s);
    }
    hwrt_bstream *sx = NULL;
    fail("cuStreamCreateWithPriority", 2, 0);
    FAILS(B->stream_create(d, -100, &sx), HWRT_ERROR_OUT_OF_MEMORY,
          "cuStreamCreateWithPriority(priority -5)");

    TEST_CASE("copies and memsets");
    hwrt_bstream *s = NULL;
    OK(B->stream_create(d, 0, &s));
    if (!s) return test_report();
    unsigned char src[256], dst[256];
    for (int i = 0; i < 256; i++) src[i] = (unsigned char)i;
    OK(B->memcpy_async(s, a, src, 256, HWRT_MEMCPY_HOST_TO_DEVICE, 0));
    memset(src, 0, sizeof src);                   /* pageable: read before the call returned */
    EXPECT(((unsigned char *)a)[255] == 255 && ((unsigned char *)a)[7] == 7);
    OK(B->memcpy_async(s, (char *)a + 4096, a, 256, HWRT_MEMCPY_DEVICE_TO_DEVICE, 0));
    OK(B->memset_async(s, (char *)a + 4096 + 16, 0xab, 8));
    memset(dst, 0, sizeof dst);
    OK(B->memcpy_async(s, dst, (char *)a + 4096, 256, HWRT_MEMCPY_DEVICE_TO_HOST, 0));
    EXPECT(dst[15] == 15 && dst[16] == 0xab && dst[23] == 0xab && dst[24] == 24 && dst[255] == 255);
    OK(B->memcpy_async(s, pin, a, 256, HWRT_MEMCPY_DEFAULT, 1));
    OK(B->stream_synchronize(s));
    EXPECT(pin[100] == 100);
    memset(pin, 0x11, 256);
    OK(B->memcpy_async(s, (char *)a + 8192, pin, 256, HWRT_MEMCPY_HOST_TO_DEVICE, 1));
    OK(B->stream_synchronize(s));
    EXPECT(((unsigned char *)a)[8192 + 255] == 0x11);
    /* host to host: in stream order, after a host function before it */
    norder = 0;
    OK(B->host_func(s, host_fn, (void *)1));
    uint64_t t0 = now_ns();
    unsigned char hh[4] = {1, 2, 3, 4}, hd[4] = {0};
    OK(B->memcpy_async(s, hd, hh, 4, HWRT_MEMCPY_HOST_TO_HOST, 0));
    EXPECT(norder == 1 && hd[3] == 4 && now_ns() - t0 >= 15u * 1000 * 1000);
    /* failures: the kind, size and host memory named */
    fail("cuMemcpyHtoDAsync_v2", 1, 0);
    FAILS(B->memcpy_async(s, a, src, 64, HWRT_MEMCPY_HOST_TO_DEVICE, 0), HWRT_ERROR_INTERNAL,
          "copy of 64 bytes");
    EXPECT(strstr(hwrt_last_error(), "pageable host memory): CUDA_ERROR_INVALID_VALUE") != NULL);
    fail("cuMemcpyDtoHAsync_v2", 2, 0);
    FAILS(B->memcpy_async(s, pin, a, 32, HWRT_MEMCPY_DEVICE_TO_HOST, 1), HWRT_ERROR_OUT_OF_MEMORY,
          "pinned host memory): CUDA_ERROR_OUT_OF_MEMORY");
    fail("cuMemcpyDtoDAsync_v2", 1, 0);
    FAILS(B->memcpy_async(s, b, a, 32, HWRT_MEMCPY_DEVICE_TO_DEVICE, 0), HWRT_ERROR_INTERNAL,
          "copy of 32 bytes");
    fail("cuMemcpyAsync", 1, 0);
    FAILS(B->memcpy_async(s, pin, a, 16, HWRT_MEMCPY_DEFAULT, 1), HWRT_ERROR_INTERNAL,
          "copy of 16 bytes");
    fail("cuStreamSynchronize", 999, 0);          /* the pageable copy's wait */
    FAILS(B->memcpy_async(s, dst, a, 8, HWRT_MEMCPY_DEVICE_TO_HOST, 0), HWRT_ERROR_INTERNAL,
          "copy of 8 bytes");
    fail("cuStreamSynchronize", 999, 0);          /* host to host: nothing copied */
    hd[0] = 0;
    FAILS(B->memcpy_async(s, hd, hh, 4, HWRT_MEMCPY_HOST_TO_HOST, 0), HWRT_ERROR_INTERNAL,
          "copy of 4 bytes");
    EXPECT(hd[0] == 0);
    fail("cuMemsetD8Async", 1, 0);
    FAILS(B->memset_async(s, a, 7, 12), HWRT_ERROR_INTERNAL, "cuMemsetD8Async(");
    EXPECT(strstr(hwrt_last_error(), ", 7, 12 bytes)") != NULL);

    TEST_CASE("host functions: in order, later work waits, query and sync");
    norder = 0;
    gate_open = 0;
    OK(B->host_func(s, host_fn, (void *)1));
    OK(B->host_func(s, host_fn, (void *)2));
    EXPECT(B->stream_query(s) == HWRT_ERROR_NOT_READY);
    gate_open = 1;
    OK(B->memset_async(s, a, 0x33, 4));           /* after both */
    EXPECT(norder == 2 && order[0] == 1 && order[1] == 2);
    OK(B->stream_query(s));
    fail("cuStreamQuery", 999, 0);
    FAILS(B->stream_query(s), HWRT_ERROR_INTERNAL, "cuda device 0: cuStreamQuery");
    fail("cuStreamSynchronize", 2, 0);
    FAILS(B->stream_synchronize(s), HWRT_ERROR_OUT_OF_MEMORY, "cuda device 0: cuStreamSynchronize");
    OK(B->host_func(s, host_fn, (void *)3));
    OK(B->device_synchronize(d));
    EXPECT(norder == 3 && order[2] == 3);
    fail("cuCtxSynchronize", 999, 0);
    FAILS(B->device_synchronize(d), HWRT_ERROR_INTERNAL, "cuda device 0: cuCtxSynchronize");
    fail("cuLaunchHostFunc", 2, 0);
    FAILS(B->host_func(s, host_fn, (void *)4), HWRT_ERROR_OUT_OF_MEMORY, "cuLaunchHostFunc");
    OK(B->device_synchronize(d));
    EXPECT(norder == 3);                          /* the refused one never runs */

    TEST_CASE("events");
    hwrt_bevent *e0 = NULL, *e1 = NULL, *ent = NULL;
    OK(B->event_create(d, 0, &e0));
    OK(B->event_create(d, 0, &e1));
    OK(B->event_create(d, HWRT_EVENT_DISABLE_TIMING, &ent));
    if (!e0 || !e1 || !ent) return test_report();
    float ms = -1;
    EXPECT(B->event_elapsed_ms(&ms, e0, e1) == HWRT_ERROR_NOT_READY);   /* never recorded */
    uint64_t before = now_ns();
    OK(B->event_record(e0, s));
    OK(B->host_func(s, host_fn, (void *)5));
    OK(B->event_record(e1, s));                   /* after the 20 ms host function */
    uint64_t after = now_ns();
    OK(B->event_query(e1));
    OK(B->event_synchronize(e1));
    OK(B->event_elapsed_ms(&ms, e0, e1));
    EXPECT(ms >= 15.0f && ms < 5000.0f);
    uint64_t ts0 = 0, ts1 = 0;
    OK(B->event_timestamp_ns(e0, &ts0));
    OK(B->event_timestamp_ns(e1, &ts1));
    EXPECT(ts0 + 1000000 >= before && ts1 <= after + 1000000 && ts1 > ts0);
    EXPECT(ts1 - ts0 >= 15u * 1000 * 1000);
    FAILS(B->event_timestamp_ns(ent, &ts0), HWRT_ERROR_NOT_SUPPORTED, "HWRT_EVENT_DISABLE_TIMING");
    OK(B->event_record(ent, s));
    FAILS(B->event_elapsed_ms(&ms, e0, ent), HWRT_ERROR_INTERNAL, "cuEventElapsedTime");
    fail("cuEventQuery", 600, 0);                 /* CUDA_ERROR_NOT_READY */
    EXPECT(B->event_query(e1) == HWRT_ERROR_NOT_READY);
    fail("cuEventQuery", 999, 0);
    FAILS(B->event_query(e1), HWRT_ERROR_INTERNAL, "cuda device 0: cuEventQuery");
    fail("cuEventSynchronize", 999, 0);
    FAILS(B->event_synchronize(e1), HWRT_ERROR_INTERNAL, "cuda device 0: cuEventSynchronize");
    fail("cuEventRecord", 999, 0);
    FAILS(B->event_record(e1, s), HWRT_ERROR_INTERNAL, "cuda device 0: cuEventRecord");
    fail("cuEventCreate", 2, 0);
    hwrt_bevent *ex = NULL;
    FAILS(B->event_create(d, 0, &ex), HWRT_ERROR_OUT_OF_MEMORY, "cuda device 0: cuEventCreate");
    EXPECT(ex == NULL);
    /* a timestamp whose distance from the reference is not ready yet */
    fail("cuEventElapsedTime_v2", 600, 0);
    EXPECT(B->event_timestamp_ns(e1, &ts1) == HWRT_ERROR_NOT_READY);
    /* an event 20 s from the reference: float milliseconds that far lose microseconds, so
     * the reference moves up to now and the timestamp is the host's time of the record */
    clock_skew(20000000000ll);
    hwrt_bevent *ef = NULL;
    OK(B->event_create(d, 0, &ef));
    if (ef) {
        uint64_t b0 = now_ns(), tf = 0;
        OK(B->event_record(ef, s));
        OK(B->event_timestamp_ns(ef, &tf));
        EXPECT(tf + 1000000 >= b0 && tf <= now_ns() + 1000000);
        if (!(tf + 1000000 >= b0 && tf <= now_ns() + 1000000))
            fprintf(stderr, "  timestamp %llu, host %llu\n", (unsigned long long)tf,
                    (unsigned long long)b0);
        clock_skew(40000000000ll);                /* 20 s from the new reference */
        OK(B->event_record(ef, s));
        fail("cuEventRecord", 999, 0);            /* when moving it fails, that is said */
        FAILS(B->event_timestamp_ns(ef, &tf), HWRT_ERROR_INTERNAL, "recording the timestamp reference");
        fail("", 0, 0);                           /* (disarmed if it was not reached) */
        B->event_destroy(ef);
    }
    clock_skew(0);
    OK(B->stream_wait_event(s, e0));
    fail("cuStreamWaitEvent", 999, 0);
    FAILS(B->stream_wait_event(s, e0), HWRT_ERROR_INTERNAL,
          "cuda device 0: cuStreamWaitEvent (event of device 0)");

    TEST_CASE("another thread, no context current on it");
    thread_arg ta = {d, s, (char *)a + 12288, 0, 0};
    pthread_t th;
    if (pthread_create(&th, NULL, other_thread, &ta) == 0) {
        pthread_join(th, NULL);
        EXPECT(ta.was_current == -1 && ta.ok);
    } else EXPECT(0);
    /* a thread whose cuCtxSetCurrent fails: the entry fails, naming it */
    fail_set_current(201, 0);
    FAILS(B->stream_synchronize(s), HWRT_ERROR_INTERNAL, "cuCtxSetCurrent");
    OK(B->stream_synchronize(s));

    TEST_CASE("VMM: a granule per handle, any run unmapped, a failed map undone");
    const size_t G = 64 << 10;
    vmm(G);
    hwrt_bdev *dv = NULL;
    OK(B->device_open(0, &dv));
    if (dv) {
        EXPECT(B->va_granularity(dv) == G);
        char *base = NULL;
        OK(B->va_reserve(dv, 4 * G, (void **)&base));
        EXPECT(base && (uintptr_t)base % G == 0);
        OK(B->va_map(dv, base, 4 * G));
        EXPECT(vmm_live(0) == 4 && vmm_live(1) == 4);
        if (vmm_live(0) == 4) {
            memset(base, 0x42, 4 * G);            /* readable and writable */
            EXPECT(base[4 * G - 1] == 0x42);
        }
        OK(B->va_unmap(dv, base + G, 2 * G));     /* the middle two */
        EXPECT(vmm_live(0) == 2 && vmm_live(1) == 2);
        if (vmm_live(0) == 2) EXPECT(base[0] == 0x42 && base[3 * G] == 0x42);
        FAILS(B->va_map(dv, base + G, G + 1), HWRT_ERROR_INTERNAL, "is not a multiple of the granularity");
        FAILS(B->va_map(dv, base + 1, G), HWRT_ERROR_INTERNAL, "this is a bug in hwrt");
        fail("cuMemSetAccess", 999, 1);           /* the second granule's */
        FAILS(B->va_map(dv, base + G, 2 * G), HWRT_ERROR_INTERNAL, "cuMemSetAccess for 65536 bytes");
        EXPECT(vmm_live(0) == 2 && vmm_live(1) == 2);
        fail("cuMemMap", 2, 1);
        FAILS(B->va_map(dv, base + G, 2 * G), HWRT_ERROR_OUT_OF_MEMORY, "cuMemMap for 65536 bytes");
        EXPECT(vmm_live(0) == 2 && vmm_live(1) == 2);
        fail("cuMemCreate", 2, 0);
        FAILS(B->va_map(dv, base + G, 2 * G), HWRT_ERROR_OUT_OF_MEMORY, "cuMemCreate for 65536 bytes");
        EXPECT(vmm_live(0) == 2 && vmm_live(1) == 2);
        OK(B->va_map(dv, base + G, 2 * G));
        EXPECT(vmm_live(0) == 4);
        fail("cuMemUnmap", 999, 2);
        FAILS(B->va_unmap(dv, base, 4 * G), HWRT_ERROR_INTERNAL, "cuMemUnmap(");
        EXPECT(vmm_live(0) == 2);
        OK(B->va_unmap(dv, base + 2 * G, 2 * G));
        EXPECT(vmm_live(0) == 0 && vmm_live(1) == 0);
        fail("cuMemAddressFree", 999, 0);
        FAILS(B->va_release(dv, base, 4 * G), HWRT_ERROR_INTERNAL, "cuMemAddressFree(");
        OK(B->va_release(dv, base, 4 * G));
        fail("cuMemAddressReserve", 2, 0);
        FAILS(B->va_reserve(dv, 4 * G, (void **)&base), HWRT_ERROR_OUT_OF_MEMORY,
              "cuMemAddressReserve(262144 bytes)");
        B->device_close(dv);
    }
    fail("cuMemGetAllocationGranularity", 999, 0);
    dv = NULL;
    OK(B->device_open(0, &dv));                   /* opens, without VMM */
    if (dv) {
        EXPECT(B->va_granularity(dv) == 0);
        B->device_close(dv);
    }

    TEST_CASE("a sticky fault on device 1: every later call fails, device 0 untouched");
    hwrt_bdev *d1 = NULL;
    OK(B->device_open(1, &d1));                   /* with VMM, still on */
    vmm(0);
    if (!d1) return test_report();
    hwrt_bstream *s1 = NULL, *s1b = NULL;
    OK(B->stream_create(d1, 0, &s1));
    OK(B->stream_create(d1, 0, &s1b));
    if (!s1 || !s1b) return test_report();
    void *a1 = NULL;
    OK(B->segment_alloc(d1, 4096, &a1));
    norder = 0;
    gate_open = 0;
    OK(B->host_func(s1b, host_fn, (void *)6));    /* queued before the fault, running */
    OK(B->host_func(s1b, host_fn, (void *)7));    /* queued before the fault, not yet run */
    usleep(20000);                                /* the first has started: it waits at the gate */
    inject(700);                                  /* CUDA_ERROR_ILLEGAL_ADDRESS */
    FAILS(B->stream_synchronize(s1), HWRT_ERROR_DEVICE_FAULT,
          "cuda device 1 has a sticky fault: CUDA_ERROR_ILLEGAL_ADDRESS (700)");
    const char *rest = "CUDA cannot clear it: the process must exit";
    EXPECT(strstr(hwrt_last_error(), rest) && strstr(hwrt_last_error(), "cuStreamSynchronize"));
    gate_open = 1;
    stream_drain(B->stream_native(s1b));
    EXPECT(norder == 1 && order[0] == 6);         /* the second was skipped */
    void *a2 = NULL;
    FAILS(B->segment_alloc(d1, 64, &a2), HWRT_ERROR_DEVICE_FAULT, "CUDA_ERROR_ILLEGAL_ADDRESS (700)");
    FAILS(B->memset_async(s1, a1, 0, 64), HWRT_ERROR_DEVICE_FAULT, "cuda device 1 has a sticky fault");
    FAILS(B->stream_query(s1), HWRT_ERROR_DEVICE_FAULT, "cuda device 1 has a sticky fault");
    FAILS(B->host_func(s1, host_fn, (void *)8), HWRT_ERROR_DEVICE_FAULT, "sticky fault");
    FAILS(B->mem_info(d1, &fr, &tot, &over), HWRT_ERROR_DEVICE_FAULT, "sticky fault");
    FAILS(B->thread_enter(d1), HWRT_ERROR_DEVICE_FAULT, "sticky fault");
    {   /* every other entry too, none reaching the driver */
        hwrt_bstream *sn = NULL;
        hwrt_bevent *en = NULL;
        void *va = NULL;
        float fms = 0;
        uint64_t tsn = 0;
        unsigned char hb[8];
        const char *f = "cuda device 1 has a sticky fault";
        FAILS(B->stream_create(d1, 0, &sn), HWRT_ERROR_DEVICE_FAULT, f);
        FAILS(B->event_create(d1, 0, &en), HWRT_ERROR_DEVICE_FAULT, f);
        FAILS(B->memcpy_async(s1, hb, a1, 8, HWRT_MEMCPY_DEVICE_TO_HOST, 0), HWRT_ERROR_DEVICE_FAULT, f);
        FAILS(B->device_synchronize(d1), HWRT_ERROR_DEVICE_FAULT, f);
        FAILS(B->segment_free(d1, a1, 4096), HWRT_ERROR_DEVICE_FAULT, f);
        FAILS(B->va_reserve(d1, 64 << 10, &va), HWRT_ERROR_DEVICE_FAULT, f);
        FAILS(B->va_map(d1, a1, 64 << 10), HWRT_ERROR_DEVICE_FAULT, f);
        FAILS(B->va_unmap(d1, a1, 64 << 10), HWRT_ERROR_DEVICE_FAULT, f);
        FAILS(B->va_release(d1, a1, 64 << 10), HWRT_ERROR_DEVICE_FAULT, f);
        EXPECT(sn == NULL && en == NULL && va == NULL);
        /* an event of the faulted device, and a stream of device 0 waiting on it */
        hwrt_bevent ev1 = {d1, NULL, 0};
        FAILS(B->event_query(&ev1), HWRT_ERROR_DEVICE_FAULT, f);
        FAILS(B->event_synchronize(&ev1), HWRT_ERROR_DEVICE_FAULT, f);
        FAILS(B->event_elapsed_ms(&fms, &ev1, &ev1), HWRT_ERROR_DEVICE_FAULT, f);
        FAILS(B->event_timestamp_ns(&ev1, &tsn), HWRT_ERROR_DEVICE_FAULT, f);
        FAILS(B->event_record(&ev1, s1), HWRT_ERROR_DEVICE_FAULT, f);
        FAILS(B->stream_wait_event(s1, e0), HWRT_ERROR_DEVICE_FAULT, f);
    }
    EXPECT(a2 == NULL && norder == 1);
    EXPECT(B->device_reset == NULL);              /* recovery is a new process */
    /* device 0 goes on */
    OK(B->memset_async(s, a, 0x77, 16));
    OK(B->stream_synchronize(s));
    EXPECT(((unsigned char *)a)[15] == 0x77);
    B->stream_destroy(s1);
    B->stream_destroy(s1b);
    B->device_close(d1);
    EXPECT(retained(1) == 0);

    TEST_CASE("closing");
    B->event_destroy(e0);
    B->event_destroy(e1);
    B->event_destroy(ent);
    B->stream_destroy(s);
    OK(B->segment_free(d, a, 1 << 20));
    B->host_free(pin, 256);
    B->device_close(d);
    EXPECT(retained(0) == 1);                     /* pinned memory's context is kept */
    return test_report();
}
