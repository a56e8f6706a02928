/* The one dispatch point's fallbacks (issue 25 item 3, runtime/device_ops.c), white-box:
 * device_ops.c compiled into the test around a "bare" backend defined here, which has
 * only the required slots (sim and opencl fill every optional one, so these paths never
 * run under them). Each wrapper of an optional slot must do what backend.h promises:
 * - no virtual memory: granularity 0, reserve/map/unmap/release UNAVAILABLE naming the
 *   backend, hwi_dev_has_va false unless all five slots are there;
 * - no pinned host memory: UNAVAILABLE, free a no-op, has_host_alloc needs both slots;
 * - host functions without the slot: run in order after the stream drained, not at all
 *   when the stream faulted (its status returned);
 * - elapsed time from two timestamps, a timestamp failure passed on;
 * - device synchronize without the slot: every live stream synchronized, the first
 *   failure returned; a stream destroyed while that synchronize holds it is destroyed by
 *   the synchronize, once; a stream the list does not know is destroyed at once;
 * - no reset (NOT_SUPPORTED), no monitor, no activity records (UNAVAILABLE, also with
 *   only one of the two slots), no native stream (NULL), no thread_enter (SUCCESS), no
 *   usage report, no DLPack slot (kDLExtDev for device memory, kDLCPU for pinned), no
 *   hint (""). */
#include "harness.h"
#include "runtime/device_ops.h"

#include <stdlib.h>
#include <string.h>

struct hwrt_bstream { int id, synced, destroyed; hwrt_status sync_status; };
struct hwrt_bevent { uint64_t ns; hwrt_status st; };

static int order[16], norder;
static hwi_device dev;
static hwrt_bstream *victim;          /* destroyed from inside a synchronize */
static int destroyed_total;

static hwrt_status b_stream_create(hwrt_bdev *d, int prio, hwrt_bstream **s)
{
    static int next;
    (void)d; (void)prio;
    *s = calloc(1, sizeof **s);
    (*s)->id = ++next;
    return HWRT_SUCCESS;
}
static void b_stream_destroy(hwrt_bstream *s) { s->destroyed++; destroyed_total++; }
static hwrt_status b_stream_sync(hwrt_bstream *s)
{
    s->synced++;
    order[norder++] = 100 + s->id;
    if (victim && victim != s) {              /* another thread's destroy, meanwhile */
        hwrt_bstream *v = victim;
        victim = NULL;
        hwi_dev_stream_destroy(&dev, v);
        EXPECT(v->destroyed == 0);            /* pinned: only marked */
    }
    return s->sync_status;
}
static hwrt_status b_ts(hwrt_bevent *e, uint64_t *ns) { *ns = e->ns; return e->st; }

static const hwrt_backend_ops bare = {
    .abi_version = HWRT_BACKEND_ABI_VERSION, .name = "bare",
    .stream_create = b_stream_create, .stream_destroy = b_stream_destroy,
    .stream_synchronize = b_stream_sync, .event_timestamp_ns = b_ts,
};

static void fn_mark(void *arg) { order[norder++] = *(int *)arg; }

static size_t b_gran(hwrt_bdev *d) { (void)d; return 4096; }
static hwrt_status b_va(hwrt_bdev *d, size_t n, void **p) { (void)d; (void)n; (void)p; return HWRT_SUCCESS; }
static hwrt_status b_va2(hwrt_bdev *d, void *a, size_t n) { (void)d; (void)a; (void)n; return HWRT_SUCCESS; }
static hwrt_status b_halloc(size_t n, void **p) { (void)n; *p = NULL; return HWRT_SUCCESS; }
static void b_hfree(void *p, size_t n) { (void)p; (void)n; }
static hwrt_status b_act_enable(hwrt_activity_fn fn, void *ctx) { (void)fn; (void)ctx; return HWRT_SUCCESS; }
static hwrt_status b_act_query(void) { return HWRT_SUCCESS; }

static void virtual_memory_and_host(void)
{
    TEST_CASE("no virtual memory, no pinned host memory");
    void *p = &dev;
    EXPECT(hwi_dev_va_granularity(&dev) == 0);
    FAILS(hwi_dev_va_reserve(&dev, 4096, &p), HWRT_ERROR_UNAVAILABLE,
          "the bare backend has no virtual memory");
    FAILS(hwi_dev_va_map(&dev, p, 4096), HWRT_ERROR_UNAVAILABLE, "no virtual memory");
    FAILS(hwi_dev_va_unmap(&dev, p, 4096), HWRT_ERROR_UNAVAILABLE, "no virtual memory");
    FAILS(hwi_dev_va_release(&dev, p, 4096), HWRT_ERROR_UNAVAILABLE, "no virtual memory");
    FAILS(hwi_dev_host_alloc(&dev, 64, &p), HWRT_ERROR_UNAVAILABLE,
          "the bare backend has no pinned host memory");
    hwi_dev_host_free(&dev, p, 64);           /* a no-op, no crash */
    EXPECT(!hwi_dev_has_host_alloc(&dev));

    TEST_CASE("hwi_dev_has_va needs all five slots");
    hwrt_backend_ops o = bare;
    hwi_device d = dev;
    d.ops = &o;
    EXPECT(!hwi_dev_has_va(&d));
    o.va_granularity = b_gran;
    EXPECT(!hwi_dev_has_va(&d));
    o.va_reserve = b_va;
    EXPECT(!hwi_dev_has_va(&d));
    o.va_map = b_va2;
    EXPECT(!hwi_dev_has_va(&d));
    o.va_unmap = b_va2;
    EXPECT(!hwi_dev_has_va(&d));
    o.va_release = b_va2;
    EXPECT(hwi_dev_has_va(&d));
    EXPECT(hwi_dev_va_granularity(&d) == 4096);
    o.host_alloc = b_halloc;
    EXPECT(!hwi_dev_has_host_alloc(&d));      /* and host_free */
    o.host_free = b_hfree;
    EXPECT(hwi_dev_has_host_alloc(&d));
}

static void host_functions_and_time(void)
{
    TEST_CASE("a host function without the slot runs after the stream drained");
    hwrt_bstream *s = NULL;
    OK(hwi_dev_stream_create(&dev, 0, &s));
    int mark = 7;
    norder = 0;
    OK(hwi_dev_host_func(&dev, s, fn_mark, &mark));
    EXPECT(norder == 2 && order[0] == 100 + s->id && order[1] == 7);
    EXPECT(!hwi_dev_has_host_func(&dev));

    TEST_CASE("not at all on a faulted stream");
    s->sync_status = HWRT_ERROR_DEVICE_FAULT;
    norder = 0;
    EXPECT(hwi_dev_host_func(&dev, s, fn_mark, &mark) == HWRT_ERROR_DEVICE_FAULT);
    EXPECT(norder == 1);                      /* the sync only */
    s->sync_status = HWRT_SUCCESS;
    hwi_dev_stream_destroy(&dev, s);
    EXPECT(s->destroyed == 1);
    free(s);

    TEST_CASE("elapsed time from timestamps");
    hwrt_bevent a = {1000000, HWRT_SUCCESS}, b = {3500000, HWRT_SUCCESS};
    float ms = 0;
    OK(hwi_dev_event_elapsed_ms(&dev, &ms, &a, &b));
    EXPECT(ms == 2.5f);
    OK(hwi_dev_event_elapsed_ms(&dev, &ms, &b, &a));
    EXPECT(ms == -2.5f);
    b.st = HWRT_ERROR_NOT_READY;
    EXPECT(hwi_dev_event_elapsed_ms(&dev, &ms, &a, &b) == HWRT_ERROR_NOT_READY);
    a.st = HWRT_ERROR_INVALID_HANDLE;
    EXPECT(hwi_dev_event_elapsed_ms(&dev, &ms, &a, &b) == HWRT_ERROR_INVALID_HANDLE);
}

static void device_synchronize(void)
{
    TEST_CASE("device synchronize without the slot: every stream, first failure");
    hwrt_bstream *s[3];
    for (int i = 0; i < 3; i++) OK(hwi_dev_stream_create(&dev, 0, &s[i]));
    OK(hwi_dev_device_synchronize(&dev));
    for (int i = 0; i < 3; i++) EXPECT(s[i]->synced == 1);
    s[1]->sync_status = HWRT_ERROR_DEVICE_FAULT;
    EXPECT(hwi_dev_device_synchronize(&dev) == HWRT_ERROR_DEVICE_FAULT);
    for (int i = 0; i < 3; i++) EXPECT(s[i]->synced == 2);   /* all of them, still */
    s[2]->sync_status = HWRT_ERROR_INVALID_HANDLE;        /* two failures: one of them */
    hwrt_status st = hwi_dev_device_synchronize(&dev);
    EXPECT(st == HWRT_ERROR_DEVICE_FAULT || st == HWRT_ERROR_INVALID_HANDLE);
    for (int i = 0; i < 3; i++) EXPECT(s[i]->synced == 3);
    s[1]->sync_status = s[2]->sync_status = HWRT_SUCCESS;

    TEST_CASE("a stream destroyed during the synchronize is destroyed by it, once");
    victim = s[0];
    int before = destroyed_total;
    OK(hwi_dev_device_synchronize(&dev));
    EXPECT(victim == NULL);
    EXPECT(s[0]->destroyed == 1 && destroyed_total == before + 1);
    OK(hwi_dev_device_synchronize(&dev));     /* it is gone from the list */
    EXPECT(s[0]->synced <= 4 && s[1]->synced == 5 && s[2]->synced == 5);
    hwi_dev_stream_destroy(&dev, s[1]);
    hwi_dev_stream_destroy(&dev, s[2]);
    EXPECT(s[1]->destroyed == 1 && s[2]->destroyed == 1);

    TEST_CASE("a stream the list does not know is destroyed at once");
    hwrt_bstream stray = {.id = 99};
    hwi_dev_stream_destroy(&dev, &stray);
    EXPECT(stray.destroyed == 1);
    OK(hwi_dev_device_synchronize(&dev));     /* no streams left */
    for (int i = 0; i < 3; i++) free(s[i]);
}

static void other_slots(void)
{
    TEST_CASE("no reset, monitor, activity, native stream, thread_enter, DLPack, hint");
    FAILS(hwi_dev_device_reset(&dev), HWRT_ERROR_NOT_SUPPORTED,
          "backend bare cannot reset device 3");
    hwrt_smi_snapshot *snap = calloc(1, sizeof *snap);
    FAILS(hwi_backend_monitor(&bare, snap), HWRT_ERROR_NOT_SUPPORTED,
          "the bare backend's driver offers no device-wide process view");
    free(snap);
    FAILS(hwi_dev_activity_enable(&dev, NULL, NULL), HWRT_ERROR_UNAVAILABLE,
          "the bare backend has no activity records");
    FAILS(hwi_dev_activity_query(&dev), HWRT_ERROR_UNAVAILABLE, "no activity records");
    EXPECT(!hwi_backend_has_activity(&bare));
    hwrt_backend_ops o = bare;
    o.activity_enable = b_act_enable;         /* one of the two: still none */
    EXPECT(!hwi_backend_has_activity(&o));
    FAILS(hwi_backend_activity_enable(&o, NULL, NULL), HWRT_ERROR_UNAVAILABLE, "no activity");
    o.activity_enable = NULL;
    o.activity_query = b_act_query;
    FAILS(hwi_backend_activity_enable(&o, NULL, NULL), HWRT_ERROR_UNAVAILABLE, "no activity");
    OK(hwi_backend_activity_query(&o));
    o.activity_enable = b_act_enable;
    EXPECT(hwi_backend_has_activity(&o));
    OK(hwi_backend_activity_enable(&o, NULL, NULL));
    hwrt_bstream s = {.id = 5};
    EXPECT(hwi_dev_stream_native(&dev, &s) == NULL);
    OK(hwi_dev_thread_enter(&dev));
    hwi_dev_report_usage(&dev, 1 << 20, 1 << 19);   /* nothing to report to */
    int type = -1;
    void *data = NULL;
    uint64_t off = 7;
    char mem[16];
    OK(hwi_dev_dlpack_device(&dev, mem, 0, &type, &data, &off));
    EXPECT(type == kDLExtDev && data == mem && off == 0);
    OK(hwi_dev_dlpack_device(&dev, mem + 4, 1, &type, &data, &off));
    EXPECT(type == kDLCPU && data == mem + 4 && off == 0);
    EXPECT(!strcmp(hwi_backend_more_devices_hint(&bare), ""));
    EXPECT(!strcmp(hwi_dev_backend_name(&dev), "bare") && !strcmp(hwi_backend_name(&bare), "bare"));
    EXPECT(hwi_backend_abi(&bare) == HWRT_BACKEND_ABI_VERSION);
    EXPECT(!hwi_dev_host_addressable(&dev));
}

int main(void)
{
    memset(&dev, 0, sizeof dev);
    dev.id = 3;
    dev.ordinal = 3;
    dev.ops = &bare;
    pthread_mutex_init(&dev.mu, NULL);
    virtual_memory_and_host();
    host_functions_and_time();
    device_synchronize();
    other_slots();
    return test_report();
}
