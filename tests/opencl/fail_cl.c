/* An OpenCL ICD loader stand-in that forwards every call to the real one
 * (libOpenCL.so.1, or FAIL_CL_REAL) and fails one chosen call, as a driver does under
 * pressure, for tests/unit/test_cov_oom.c's "cl" mode: HWRT_OPENCL_LIBRARY names this
 * module, FAIL_CL_NTH=N makes the Nth counted call fail once with CL_OUT_OF_RESOURCES
 * (an object-creating call returns NULL with that code). Counted: every call but the
 * platform/device queries, the event queries (polled: their count varies from run to
 * run) and the retain/release calls. fail_cl_calls() says how many
 * were counted so far; fail_cl_fail_next(fn, count, code) makes the next count calls of fn
 * fail with code; FAIL_CL_BACKTRACE=1 prints the failed call's stack;
 * FAIL_CL_PROFILING_FROM makes event timestamps unreadable (below);
 * fail_cl_event_status_next(st, count) makes commands report a failed execution status. Each wrapper has cl.h's own prototype, so the compiler checks it. */
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include <dlfcn.h>
#include <execinfo.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static _Atomic long calls;
static long nth = -1;
static _Atomic long fail_more;                  /* fail_cl_fail_next: calls left to fail */
static _Atomic cl_int fail_code = CL_OUT_OF_RESOURCES;
static const char *_Atomic fail_fn;              /* ... of this entry point */

static void *real(const char *name)
{
    static void *h;
    if (!h) {
        const char *p = getenv("FAIL_CL_REAL");
        h = dlopen(p && *p ? p : "libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!h) { fprintf(stderr, "fail_cl: %s\n", dlerror()); abort(); }
    }
    void *f = dlsym(h, name);
    if (!f) { fprintf(stderr, "fail_cl: no %s\n", name); abort(); }
    return f;
}

static int fail_now(const char *fn)
{
    if (nth < 0) {
        const char *e = getenv("FAIL_CL_NTH");
        nth = e ? atol(e) : 0;
    }
    long n = atomic_fetch_add(&calls, 1) + 1;
    const char *only = atomic_load(&fail_fn);
    long more = only && !strcmp(only, fn) ? atomic_load(&fail_more) : 0;
    while (more > 0 && !atomic_compare_exchange_weak(&fail_more, &more, more - 1)) {}
    if (more <= 0 && n != nth) return 0;
    char msg[64];
    int len = snprintf(msg, sizeof msg, "fail_cl: failed call %ld\n", n);
    if (write(2, msg, (size_t)len) < 0) {}
    if (getenv("FAIL_CL_BACKTRACE")) {         /* where, for a failing child */
        void *frames[12];
        backtrace_symbols_fd(frames, backtrace(frames, 12), 2);
    }
    return 1;
}

long fail_cl_calls(void);
long fail_cl_calls(void) { return atomic_load(&calls); }
/* The next `count` calls of entry point fn (e.g. "clCreateBuffer") fail with `code`: a
 * test's own choice of call and error (FAIL_CL_NTH's failure then has that code too). */
void fail_cl_fail_next(const char *fn, long count, cl_int code);
void fail_cl_fail_next(const char *fn, long count, cl_int code)
{
    atomic_store(&fail_code, code);
    atomic_store(&fail_fn, fn);
    atomic_store(&fail_more, count);
}

#define R(name) static __typeof__(name) *r_; if (!r_) r_ = (__typeof__(name) *)real(#name)
#define ERR atomic_load(&fail_code)
/* a counted call returning cl_int */
#define INT_CALL(name, ...) R(name); if (fail_now(#name)) return ERR; return r_(__VA_ARGS__)
/* a counted call returning an object, with its error code through errcode_ret */
#define OBJ_CALL(name, errp, ...)                                                          \
    R(name);                                                                               \
    if (fail_now(#name)) { if (errp) *(errp) = ERR; return NULL; }                              \
    return r_(__VA_ARGS__)
/* not counted */
#define PASS(name, ...) R(name); return r_(__VA_ARGS__)

cl_int clGetPlatformIDs(cl_uint n, cl_platform_id *p, cl_uint *np) { PASS(clGetPlatformIDs, n, p, np); }
cl_int clGetPlatformInfo(cl_platform_id p, cl_platform_info i, size_t s, void *v, size_t *r)
{ PASS(clGetPlatformInfo, p, i, s, v, r); }
cl_int clGetDeviceIDs(cl_platform_id p, cl_device_type t, cl_uint n, cl_device_id *d, cl_uint *nd)
{ PASS(clGetDeviceIDs, p, t, n, d, nd); }
cl_int clGetDeviceInfo(cl_device_id d, cl_device_info i, size_t s, void *v, size_t *r)
{ PASS(clGetDeviceInfo, d, i, s, v, r); }
cl_context clCreateContext(const cl_context_properties *p, cl_uint n, const cl_device_id *d,
                           void (CL_CALLBACK *f)(const char *, const void *, size_t, void *),
                           void *u, cl_int *e)
{ OBJ_CALL(clCreateContext, e, p, n, d, f, u, e); }
/* fail_cl_released_contexts(): clReleaseContext calls so far (a test's check that a
 * context is given back when, and only when, its last user is gone) */
static _Atomic long released_contexts;
long fail_cl_released_contexts(void);
long fail_cl_released_contexts(void) { return atomic_load(&released_contexts); }
cl_int clReleaseContext(cl_context c)
{
    atomic_fetch_add(&released_contexts, 1);
    PASS(clReleaseContext, c);
}
cl_command_queue clCreateCommandQueue(cl_context c, cl_device_id d, cl_command_queue_properties p,
                                      cl_int *e)
{ OBJ_CALL(clCreateCommandQueue, e, c, d, p, e); }
cl_int clReleaseCommandQueue(cl_command_queue q) { PASS(clReleaseCommandQueue, q); }
cl_int clFlush(cl_command_queue q) { INT_CALL(clFlush, q); }
cl_int clFinish(cl_command_queue q) { INT_CALL(clFinish, q); }
cl_mem clCreateBuffer(cl_context c, cl_mem_flags f, size_t s, void *h, cl_int *e)
{ OBJ_CALL(clCreateBuffer, e, c, f, s, h, e); }
cl_int clReleaseMemObject(cl_mem m) { PASS(clReleaseMemObject, m); }
cl_int clEnqueueReadBuffer(cl_command_queue q, cl_mem m, cl_bool b, size_t o, size_t s, void *p,
                           cl_uint n, const cl_event *w, cl_event *e)
{ INT_CALL(clEnqueueReadBuffer, q, m, b, o, s, p, n, w, e); }
cl_int clEnqueueWriteBuffer(cl_command_queue q, cl_mem m, cl_bool b, size_t o, size_t s,
                            const void *p, cl_uint n, const cl_event *w, cl_event *e)
{ INT_CALL(clEnqueueWriteBuffer, q, m, b, o, s, p, n, w, e); }
cl_int clEnqueueCopyBuffer(cl_command_queue q, cl_mem a, cl_mem b, size_t oa, size_t ob, size_t s,
                           cl_uint n, const cl_event *w, cl_event *e)
{ INT_CALL(clEnqueueCopyBuffer, q, a, b, oa, ob, s, n, w, e); }
cl_int clEnqueueFillBuffer(cl_command_queue q, cl_mem m, const void *p, size_t ps, size_t o, size_t s,
                           cl_uint n, const cl_event *w, cl_event *e)
{ INT_CALL(clEnqueueFillBuffer, q, m, p, ps, o, s, n, w, e); }
void *clEnqueueMapBuffer(cl_command_queue q, cl_mem m, cl_bool b, cl_map_flags f, size_t o, size_t s,
                         cl_uint n, const cl_event *w, cl_event *ev, cl_int *e)
{ OBJ_CALL(clEnqueueMapBuffer, e, q, m, b, f, o, s, n, w, ev, e); }
cl_int clEnqueueUnmapMemObject(cl_command_queue q, cl_mem m, void *p, cl_uint n, const cl_event *w,
                               cl_event *e)
{ INT_CALL(clEnqueueUnmapMemObject, q, m, p, n, w, e); }
cl_program clCreateProgramWithSource(cl_context c, cl_uint n, const char **s, const size_t *l,
                                     cl_int *e)
{ OBJ_CALL(clCreateProgramWithSource, e, c, n, s, l, e); }
cl_int clBuildProgram(cl_program p, cl_uint n, const cl_device_id *d, const char *o,
                      void (CL_CALLBACK *f)(cl_program, void *), void *u)
{ INT_CALL(clBuildProgram, p, n, d, o, f, u); }
cl_int clGetProgramBuildInfo(cl_program p, cl_device_id d, cl_program_build_info i, size_t s,
                             void *v, size_t *r)
{ PASS(clGetProgramBuildInfo, p, d, i, s, v, r); }
cl_int clReleaseProgram(cl_program p) { PASS(clReleaseProgram, p); }
cl_kernel clCreateKernel(cl_program p, const char *n, cl_int *e) { OBJ_CALL(clCreateKernel, e, p, n, e); }
cl_int clReleaseKernel(cl_kernel k) { PASS(clReleaseKernel, k); }
cl_int clSetKernelArg(cl_kernel k, cl_uint i, size_t s, const void *v) { INT_CALL(clSetKernelArg, k, i, s, v); }
cl_int clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint d, const size_t *o,
                              const size_t *g, const size_t *l, cl_uint n, const cl_event *w,
                              cl_event *e)
{ INT_CALL(clEnqueueNDRangeKernel, q, k, d, o, g, l, n, w, e); }
cl_int clEnqueueMarkerWithWaitList(cl_command_queue q, cl_uint n, const cl_event *w, cl_event *e)
{ INT_CALL(clEnqueueMarkerWithWaitList, q, n, w, e); }
cl_int clEnqueueBarrierWithWaitList(cl_command_queue q, cl_uint n, const cl_event *w, cl_event *e)
{ INT_CALL(clEnqueueBarrierWithWaitList, q, n, w, e); }
cl_event clCreateUserEvent(cl_context c, cl_int *e) { OBJ_CALL(clCreateUserEvent, e, c, e); }
cl_int clSetUserEventStatus(cl_event e, cl_int s) { INT_CALL(clSetUserEventStatus, e, s); }
cl_int clSetEventCallback(cl_event e, cl_int t, void (CL_CALLBACK *f)(cl_event, cl_int, void *),
                          void *u)
{ INT_CALL(clSetEventCallback, e, t, f, u); }
cl_int clWaitForEvents(cl_uint n, const cl_event *l) { INT_CALL(clWaitForEvents, n, l); }
/* fail_cl_event_status_next(st, count): the next count queries of an event's
 * CL_EVENT_COMMAND_EXECUTION_STATUS answer st, as a driver answers for a command that
 * failed on the device (a negative status: an error code, or -1, which drivers use as a
 * generic failure) */
static _Atomic long status_more;
static _Atomic cl_int status_code;
void fail_cl_event_status_next(cl_int st, long count);
void fail_cl_event_status_next(cl_int st, long count)
{
    atomic_store(&status_code, st);
    atomic_store(&status_more, count);
}
cl_int clGetEventInfo(cl_event e, cl_event_info i, size_t s, void *v, size_t *r)
{
    if (i == CL_EVENT_COMMAND_EXECUTION_STATUS && v && s >= sizeof(cl_int)) {
        long more = atomic_load(&status_more);
        while (more > 0 && !atomic_compare_exchange_weak(&status_more, &more, more - 1)) {}
        if (more > 0) {
            *(cl_int *)v = atomic_load(&status_code);
            if (r) *r = sizeof(cl_int);
            return CL_SUCCESS;
        }
    }
    PASS(clGetEventInfo, e, i, s, v, r);
}
/* FAIL_CL_PROFILING_FROM=N: the Nth CL_PROFILING_COMMAND_END query and every later one
 * fail with CL_PROFILING_INFO_NOT_AVAILABLE (the first ones are a device's clock
 * calibration at open: 3 per device) */
cl_int clGetEventProfilingInfo(cl_event e, cl_profiling_info i, size_t s, void *v, size_t *r)
{
    static _Atomic long ends;
    const char *from = getenv("FAIL_CL_PROFILING_FROM");
    if (i == CL_PROFILING_COMMAND_END && from && atomic_fetch_add(&ends, 1) + 1 >= atol(from))
        return CL_PROFILING_INFO_NOT_AVAILABLE;
    PASS(clGetEventProfilingInfo, e, i, s, v, r);
}
cl_int clRetainEvent(cl_event e) { PASS(clRetainEvent, e); }
cl_int clReleaseEvent(cl_event e) { PASS(clReleaseEvent, e); }
