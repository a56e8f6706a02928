/* Ascend streams (with priorities), the work queued on them (copies, memsets, host
 * functions through the report thread), device synchronize and reset. */
#include "ascend_internal.h"
#include "../../base/status.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* hwrt priorities: 0 normal, < 0 higher. ACL's: 0 is the highest, `least` the lowest
 * (7 on 8.x; honoured on 310P, "reserved, fixed" on A2/A3 per CANN's docs). hwrt's normal
 * is ACL's lowest, each step below 0 one ACL step higher, clamped. */
hwrt_status asc_stream_create(hwrt_bdev *d, int priority, hwrt_bstream **out)
{
    HWI_TRY(asc_enter(d));
    asc_stream *s = calloc(1, sizeof *s);
    if (!s)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "creating a stream: host out of memory");
    long p = (long)d->prio_least + (priority < 0 ? priority : 0);
    if (p < d->prio_greatest) p = d->prio_greatest;
    hacl_error r = hacl.CreateStreamWithConfig(&s->s, (uint32_t)p, 0);
    if (r != HACL_SUCCESS) {
        free(s);
        return asc_err(d, r, "ascend device %d: aclrtCreateStreamWithConfig(priority %ld)",
                       d->ordinal, p);
    }
    s->dev = d;
    s->priority = (int)p;
    pthread_mutex_init(&s->ws_mu, NULL);
    *out = s;
    return HWRT_SUCCESS;
}

void asc_stream_destroy(hwrt_bstream *s)
{
    asc_dev *d = s->dev;
    /* from the stream's context, or ACL refuses (107003) */
    if (asc_thread_enter(d) == HWRT_SUCCESS) {
        if (s->subscribed) hacl.UnSubscribeReport(d->report_tid, s->s);
        asc_workspace_free(s);
        hacl.DestroyStream(s->s);
    }
    pthread_mutex_destroy(&s->ws_mu);
    free(s);
}

/* A synchronization's result: the overflow reports of saturation mode are results. */
static hwrt_status sync_result(asc_dev *d, hacl_error r, const char *what)
{
    if (r == HACL_SUCCESS || asc_overflow(r)) return HWRT_SUCCESS;
    return asc_err(d, r, "ascend device %d: %s", d->ordinal, what);
}

hwrt_status asc_stream_synchronize(hwrt_bstream *s)
{
    HWI_TRY(asc_enter(s->dev));
    HWI_TRY(sync_result(s->dev, hacl.SynchronizeStream(s->s), "aclrtSynchronizeStream"));
    return asc_dev_fault(s->dev);     /* a fault seen by a host function meanwhile */
}

hwrt_status asc_stream_query(hwrt_bstream *s)
{
    asc_dev *d = s->dev;
    HWI_TRY(asc_enter(d));
    if (hacl.StreamQuery) {
        hacl_stream_status st = HACL_STREAM_STATUS_NOT_READY;
        hacl_error r = hacl.StreamQuery(s->s, &st);
        if (r != HACL_SUCCESS)
            return asc_err(d, r, "ascend device %d: aclrtStreamQuery", d->ordinal);
        return st == HACL_STREAM_STATUS_COMPLETE ? HWRT_SUCCESS : HWRT_ERROR_NOT_READY;
    }
    /* older runtimes: an event recorded now, queried */
    hacl_event e = NULL;
    hacl_event_status es = HACL_EVENT_RECORDED_STATUS_NOT_READY;
    hacl_error r = hacl.CreateEvent(&e);
    if (r == HACL_SUCCESS) r = hacl.RecordEvent(e, s->s);
    if (r == HACL_SUCCESS) r = hacl.QueryEventStatus(e, &es);
    if (e) hacl.DestroyEvent(e);
    if (r != HACL_SUCCESS)
        return asc_err(d, r, "ascend device %d: querying a stream with an event", d->ordinal);
    return es == HACL_EVENT_RECORDED_STATUS_COMPLETE ? HWRT_SUCCESS : HWRT_ERROR_NOT_READY;
}

hwrt_status asc_stream_wait_event(hwrt_bstream *s, hwrt_bevent *e)
{
    HWI_TRY(asc_enter(s->dev));
    hacl_error r = hacl.StreamWaitEvent(s->s, e->e);
    if (r != HACL_SUCCESS)
        return asc_err(s->dev, r, "ascend device %d: aclrtStreamWaitEvent (event of device %d)",
                       s->dev->ordinal, e->dev->ordinal);
    return HWRT_SUCCESS;
}

void *asc_stream_native(hwrt_bstream *s)
{
    return s->s;
}

/* ---- copies and memsets ---- */

/* ACL's copy of a kind (pure: tests/ascend checks it). */
int asc_memcpy_kind(hwrt_memcpy_kind kind)
{
    switch (kind) {
    case HWRT_MEMCPY_HOST_TO_DEVICE: return HACL_MEMCPY_HOST_TO_DEVICE;
    case HWRT_MEMCPY_DEVICE_TO_HOST: return HACL_MEMCPY_DEVICE_TO_HOST;
    case HWRT_MEMCPY_DEVICE_TO_DEVICE: return HACL_MEMCPY_DEVICE_TO_DEVICE;
    case HWRT_MEMCPY_HOST_TO_HOST: return HACL_MEMCPY_HOST_TO_HOST;
    default: return HACL_MEMCPY_DEFAULT;
    }
}

/* Zero bytes is never handed to ACL (count 0 is an error there), destMax is the count.
 * Pageable host memory is never handed to aclrtMemcpyAsync (CANN 8.0 calls that
 * unpredictable; 8.5 synchronizes only when the driver can tell): the stream is
 * synchronized, so the copy stays in stream order, and the synchronous aclrtMemcpy runs,
 * which returns once the host buffer was read or written, as backend.h requires.
 * Host to host is a memmove in stream order. */
hwrt_status asc_memcpy_async(hwrt_bstream *s, void *dst, const void *src, size_t bytes,
                             hwrt_memcpy_kind kind, int host_pinned)
{
    asc_dev *d = s->dev;
    HWI_TRY(asc_enter(d));
    if (bytes == 0) return HWRT_SUCCESS;
    const hacl_memcpy_kind k = asc_memcpy_kind(kind);
    const int sync = kind == HWRT_MEMCPY_HOST_TO_HOST ||
                     (!host_pinned && kind != HWRT_MEMCPY_DEVICE_TO_DEVICE);
    hacl_error r = HACL_SUCCESS;
    if (sync) {
        r = hacl.SynchronizeStream(s->s);
        if (asc_overflow(r)) r = HACL_SUCCESS;
        if (r == HACL_SUCCESS) {
            if (kind == HWRT_MEMCPY_HOST_TO_HOST) memmove(dst, src, bytes);
            else r = hacl.Memcpy(dst, bytes, src, bytes, k);
        }
    } else {
        r = hacl.MemcpyAsync(dst, bytes, src, bytes, k, s->s);
    }
    if (r != HACL_SUCCESS)
        return asc_err(d, r, "ascend device %d: %s copy of %zu bytes (%p -> %p, %s host memory)",
                       d->ordinal, hwi_memcpy_kind_name(kind), bytes, src, dst,
                       host_pinned ? "pinned" : "pageable");
    return HWRT_SUCCESS;
}

hwrt_status asc_memset_async(hwrt_bstream *s, void *dptr, int value, size_t bytes)
{
    HWI_TRY(asc_enter(s->dev));
    if (bytes == 0) return HWRT_SUCCESS;
    hacl_error r = hacl.MemsetAsync(dptr, bytes, (int32_t)(unsigned char)value, bytes, s->s);
    if (r != HACL_SUCCESS)
        return asc_err(s->dev, r, "ascend device %d: aclrtMemsetAsync(%p, %d, %zu bytes)",
                       s->dev->ordinal, dptr, value, bytes);
    return HWRT_SUCCESS;
}

/* ---- host functions: the report-thread pattern ----
 * One thread per device loops on aclrtProcessReport; ACL runs the callbacks of every
 * stream subscribed to it (aclrtSubscribeReport with its pthread_self()) on it. The thread
 * makes the device's context current first, as CANN's sample does. The callback makes no
 * ACL call (CANN forbids allocation, free, synchronization and launches there). */

#define REPORT_TIMEOUT_MS 100

static void *report_main(void *p)
{
    asc_dev *d = p;
    asc_thread_enter(d);
    while (!atomic_load(&d->report_stop)) {
        hacl_error r = hacl.ProcessReport(REPORT_TIMEOUT_MS);
        if (r == HACL_SUCCESS || r == HACL_ERROR_RT_REPORT_TIMEOUT) continue;
        /* no subscription yet (107012) or an error: do not spin */
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static hwrt_status report_start(asc_dev *d)
{
    pthread_mutex_lock(&d->report_mu);
    int rc = 0;
    if (!d->report_running) {
        atomic_store(&d->report_stop, 0);
        rc = pthread_create(&d->report_thread, NULL, report_main, d);
        if (rc == 0) {
            d->report_tid = (uint64_t)d->report_thread;   /* its pthread_self() */
            d->report_running = 1;
        }
    }
    pthread_mutex_unlock(&d->report_mu);
    if (rc)
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "ascend device %d: starting the report "
                       "thread for host functions failed (pthread_create: %s)", d->ordinal,
                       strerror(rc));
    return HWRT_SUCCESS;
}

void asc_report_stop(asc_dev *d)
{
    pthread_mutex_lock(&d->report_mu);
    int running = d->report_running;
    d->report_running = 0;
    pthread_mutex_unlock(&d->report_mu);
    if (!running) return;
    atomic_store(&d->report_stop, 1);
    pthread_join(d->report_thread, NULL);
}

typedef struct host_job {
    hwrt_host_fn fn;
    void *arg;
    asc_dev *dev;
} host_job;

/* On the report thread. fn does not run once the device has a sticky fault (backend.h). */
static void run_host_job(void *p)
{
    host_job *j = p;
    if (!hwi_fault_set(&j->dev->fault)) j->fn(j->arg);
    free(j);
}

hwrt_status asc_host_func(hwrt_bstream *s, hwrt_host_fn fn, void *arg)
{
    asc_dev *d = s->dev;
    HWI_TRY(asc_enter(d));
    HWI_TRY(report_start(d));
    hacl_error r = HACL_SUCCESS;
    pthread_mutex_lock(&s->ws_mu);          /* one subscription per stream */
    if (!s->subscribed) {
        r = hacl.SubscribeReport(d->report_tid, s->s);
        s->subscribed = r == HACL_SUCCESS;
    }
    pthread_mutex_unlock(&s->ws_mu);
    if (r != HACL_SUCCESS)
        return asc_err(d, r, "ascend device %d: aclrtSubscribeReport", d->ordinal);
    host_job *j = malloc(sizeof *j);
    if (!j) return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "ascend: host out of memory for a job");
    j->fn = fn;
    j->arg = arg;
    j->dev = d;
    /* BLOCK: later work on the stream waits for fn, as a host function requires */
    r = hacl.LaunchCallback(run_host_job, j, HACL_CALLBACK_BLOCK, s->s);
    if (r != HACL_SUCCESS) {
        free(j);
        return asc_err(d, r, "ascend device %d: aclrtLaunchCallback", d->ordinal);
    }
    return HWRT_SUCCESS;
}

/* ---- the device ---- */

hwrt_status asc_device_synchronize(hwrt_bdev *d)
{
    HWI_TRY(asc_enter(d));
    HWI_TRY(sync_result(d, hacl.SynchronizeDevice(), "aclrtSynchronizeDevice"));
    return asc_dev_fault(d);
}

/* Whether ACL reports a fault once or on every later synchronization is not documented
 * for 8.x (docs/ascend.md). The reset synchronizes the device twice: the first call may
 * still report the fault; when the second succeeds the device runs work again, so hwrt's
 * record is cleared and the timestamp reference re-anchored. Otherwise the fault stays
 * and recovery needs a new process (aclrtResetDevice would free every allocation of the
 * context under hwrt's pool). */
hwrt_status asc_device_reset(hwrt_bdev *d)
{
    HWI_TRY(asc_thread_enter(d));
    if (!hwi_fault_set(&d->fault)) return HWRT_SUCCESS;
    hacl.SynchronizeDevice();
    hacl_error r = hacl.SynchronizeDevice();
    if (r != HACL_SUCCESS && !asc_overflow(r)) {
        char desc[256];
        asc_describe(r, desc, sizeof desc);
        hwrt_status st = asc_dev_fault(d);
        return hwi_err_prefix(st, "hwrt_device_reset(%d) could not recover the device (a "
                              "second aclrtSynchronizeDevice still fails: %s)", d->ordinal,
                              desc);
    }
    hwi_fault_clear(&d->fault);
    pthread_mutex_lock(&d->ts_mu);
    hwrt_status st = asc_anchor(d);
    pthread_mutex_unlock(&d->ts_mu);
    return st;
}
