/* The host side of the OpenCL backend:
 *  - a host thread per device that runs host functions (and completes user events for
 *    waits across contexts). A CL event callback only queues the job: callbacks run on
 *    driver threads, where a long user function or a CL call could stall the driver;
 *  - pinned host memory as CL_MEM_ALLOC_HOST_PTR buffers mapped into the process, in a
 *    context of its own (pinned memory is not tied to a device in hwrt's API). */
#include "ocl.h"
#include "../../base/status.h"

#include <stdlib.h>
#include <time.h>

static void *host_main(void *arg)
{
    ocl_dev *d = arg;
    pthread_mutex_lock(&d->host_mu);
    for (;;) {
        while (!d->host_head && !d->host_stop)
            pthread_cond_wait(&d->host_cv, &d->host_mu);
        ocl_hostjob *j = d->host_head;
        if (!j) break;                         /* stop requested and nothing queued */
        d->host_head = j->next;
        if (!d->host_head) d->host_tail = NULL;
        pthread_mutex_unlock(&d->host_mu);
        if (j->fn && !j->failed)
            j->fn(j->arg);
        /* work queued after the function waits on this user event; a failure before the
         * function fails everything after it, as a sticky fault would */
        cl_int done = j->failed ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_COMPLETE;
        /* the queue cannot move past an unset user event: a driver refusing it for a while
         * (out of resources) is asked again rather than left to hang every later wait
         * (found by opencl_test_cov_cl_faults, issue 25) */
        for (int tries = 0; ocl.SetUserEventStatus(j->user, done) != CL_SUCCESS && tries < 1000;
             tries++) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
        ocl.ReleaseEvent(j->user);
        if (j->marker) ocl.ReleaseEvent(j->marker);
        free(j);
        pthread_mutex_lock(&d->host_mu);
    }
    pthread_mutex_unlock(&d->host_mu);
    return NULL;
}

static void CL_CALLBACK on_complete(cl_event ev, cl_int status, void *arg)
{
    (void)ev;
    ocl_hostjob *j = arg;
    ocl_dev *d = j->dev;
    j->failed = status < 0;
    j->next = NULL;
    pthread_mutex_lock(&d->host_mu);
    if (d->host_tail) d->host_tail->next = j;
    else d->host_head = j;
    d->host_tail = j;
    pthread_cond_signal(&d->host_cv);
    pthread_mutex_unlock(&d->host_mu);
}

hwrt_status ocl_host_after(ocl_dev *d, cl_event after, ocl_hostjob *job)
{
    pthread_mutex_lock(&d->host_mu);
    if (!d->host_started) {
        d->host_stop = 0;
        if (pthread_create(&d->host_thread, NULL, host_main, d) != 0) {
            pthread_mutex_unlock(&d->host_mu);
            return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "opencl device %d: cannot start the "
                           "host-function thread", d->ordinal);
        }
        d->host_started = 1;
    }
    pthread_mutex_unlock(&d->host_mu);
    job->dev = d;
    cl_int e = ocl.SetEventCallback(after, CL_COMPLETE, on_complete, job);
    if (e != CL_SUCCESS)
        return ocl_err(e, "opencl device %d: clSetEventCallback", d->ordinal);
    return HWRT_SUCCESS;
}

void ocl_host_stop(ocl_dev *d)
{
    pthread_mutex_lock(&d->host_mu);
    int started = d->host_started;
    d->host_stop = 1;
    pthread_cond_signal(&d->host_cv);
    pthread_mutex_unlock(&d->host_mu);
    if (started) pthread_join(d->host_thread, NULL);
    d->host_started = 0;
}

/* ---- pinned host memory ---- */

typedef struct pinned { void *p; size_t bytes; cl_mem mem; } pinned;

static pthread_mutex_t pin_mu = PTHREAD_MUTEX_INITIALIZER;
static cl_context pin_ctx;
static cl_command_queue pin_q;
static pinned *pins;
static int npins, cap_pins;

static hwrt_status pin_context_locked(void)
{
    if (pin_ctx) return HWRT_SUCCESS;
    int n;
    char reason[256];
    if (ocl_load(&n, reason, sizeof reason) != HWRT_SUCCESS || n == 0)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "hwrt_host_alloc (opencl): %s", reason);
    cl_platform_id plat;
    cl_device_id dev;
    ocl_device_ids(0, &plat, &dev);
    cl_int e;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)plat, 0};
    cl_context c = ocl.CreateContext(props, 1, &dev, NULL, NULL, &e);
    if (e != CL_SUCCESS)
        return ocl_err(e, "hwrt_host_alloc (opencl): clCreateContext for pinned memory");
    cl_command_queue q = ocl.CreateCommandQueue(c, dev, 0, &e);
    if (e != CL_SUCCESS) {
        ocl.ReleaseContext(c);
        return ocl_err(e, "hwrt_host_alloc (opencl): clCreateCommandQueue for pinned memory");
    }
    pin_ctx = c;
    pin_q = q;
    return HWRT_SUCCESS;
}

static hwrt_status map_pinned(size_t bytes, pinned *out)
{
    cl_int e;
    cl_mem m = ocl.CreateBuffer(pin_ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &e);
    if (e != CL_SUCCESS) {
        if (e == CL_MEM_OBJECT_ALLOCATION_FAILURE || e == CL_OUT_OF_RESOURCES ||
            e == CL_INVALID_BUFFER_SIZE) e = CL_OUT_OF_HOST_MEMORY;
        return ocl_err(e, "hwrt_host_alloc: pinned buffer of %zu bytes (CL_MEM_ALLOC_HOST_PTR)",
                       bytes);
    }
    void *p = ocl.EnqueueMapBuffer(pin_q, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0,
                                   NULL, NULL, &e);
    if (e != CL_SUCCESS) {
        ocl.ReleaseMemObject(m);
        return ocl_err(e, "hwrt_host_alloc: mapping a pinned buffer of %zu bytes", bytes);
    }
    *out = (pinned){p, bytes, m};
    return HWRT_SUCCESS;
}

hwrt_status ocl_host_alloc(size_t bytes, void **hptr)
{
    pthread_mutex_lock(&pin_mu);
    hwrt_status st = pin_context_locked();
    pinned pb;
    if (st == HWRT_SUCCESS && npins == cap_pins) {
        int nc = cap_pins ? cap_pins * 2 : 16;
        pinned *np = realloc(pins, (size_t)nc * sizeof *np);
        if (np) { pins = np; cap_pins = nc; }
        else st = hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "hwrt_host_alloc: host out of memory");
    }
    if (st == HWRT_SUCCESS) st = map_pinned(bytes, &pb);
    if (st == HWRT_SUCCESS) {
        pins[npins++] = pb;
        *hptr = pb.p;
    }
    pthread_mutex_unlock(&pin_mu);
    return st;
}

void ocl_host_free(void *hptr, size_t bytes)
{
    (void)bytes;
    pthread_mutex_lock(&pin_mu);
    for (int i = 0; i < npins; i++) {
        if (pins[i].p != hptr) continue;
        ocl.EnqueueUnmapMemObject(pin_q, pins[i].mem, hptr, 0, NULL, NULL);
        ocl.Finish(pin_q);
        ocl.ReleaseMemObject(pins[i].mem);
        pins[i] = pins[--npins];
        break;
    }
    if (npins == 0 && pin_ctx) {          /* nothing pinned: give the context back */
        ocl.ReleaseCommandQueue(pin_q);
        ocl.ReleaseContext(pin_ctx);
        pin_ctx = NULL;
        pin_q = NULL;
    }
    pthread_mutex_unlock(&pin_mu);
}
