/* The baseline: PoCL driven directly, without hwrt. The same ICD loader hwrt uses is
 * opened with dlopen (hwrt's own table is internal to libhwrt). */
#include "bench.h"

#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RAW_FUNCS(X)                                                                      \
    X(GetPlatformIDs) X(GetDeviceIDs) X(CreateContext) X(CreateCommandQueue)               \
    X(CreateBuffer) X(EnqueueWriteBuffer) X(EnqueueReadBuffer) X(EnqueueMapBuffer)         \
    X(EnqueueUnmapMemObject) X(CreateProgramWithSource) X(BuildProgram) X(CreateKernel)     \
    X(SetKernelArg) X(EnqueueNDRangeKernel) X(Finish) X(ReleaseMemObject) X(ReleaseKernel)  \
    X(ReleaseProgram) X(ReleaseCommandQueue) X(ReleaseContext)

static struct {
#define RAW_SLOT(n) __typeof__(cl##n) *n;
    RAW_FUNCS(RAW_SLOT)
#undef RAW_SLOT
} cl;

static const char *kernel_src =
    "kernel void add(global float *o, const global float *a, const global float *b) {\n"
    "  size_t i = get_global_id(0);\n"
    "  o[i] = a[i] + b[i];\n"
    "}\n";

typedef struct {
    cl_context ctx;
    cl_command_queue q;
    cl_device_id dev;
} raw_env;

static int raw_open(raw_env *env)
{
    void *h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return 0;
#define RAW_SYM(n) if (!(*(void **)&cl.n = dlsym(h, "cl" #n))) return 0;
    RAW_FUNCS(RAW_SYM)
#undef RAW_SYM
    cl_platform_id plat;
    cl_uint np = 0;
    if (cl.GetPlatformIDs(1, &plat, &np) != CL_SUCCESS || np == 0) return 0;
    if (cl.GetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &env->dev, NULL) != CL_SUCCESS) return 0;
    cl_int e;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)plat, 0};
    env->ctx = cl.CreateContext(props, 1, &env->dev, NULL, NULL, &e);
    if (e != CL_SUCCESS) return 0;
    env->q = cl.CreateCommandQueue(env->ctx, env->dev, CL_QUEUE_PROFILING_ENABLE, &e);
    return e == CL_SUCCESS;
}

/* Copy figures: non-blocking write/read from CL_MEM_ALLOC_HOST_PTR memory + clFinish,
 * exactly what hwrt's pinned copies turn into. */
static void raw_copies(raw_env *env, bench_figs *f)
{
    for (int s = 0; s < BENCH_NSIZES; s++) {
        size_t bytes = bench_sizes[s];
        cl_int e;
        cl_mem dev = cl.CreateBuffer(env->ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
        cl_mem pin = cl.CreateBuffer(env->ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes,
                                     NULL, &e);
        void *host = cl.EnqueueMapBuffer(env->q, pin, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes,
                                         0, NULL, NULL, &e);
        memset(host, 1, bytes);
        double h2d[BENCH_TRIALS], d2h[BENCH_TRIALS];
        int reps = bench_reps(bytes);
        for (int t = 0; t < BENCH_TRIALS; t++) {
            double t0 = bench_now();
            for (int r = 0; r < reps; r++) {
                cl.EnqueueWriteBuffer(env->q, dev, CL_FALSE, 0, bytes, host, 0, NULL, NULL);
                cl.Finish(env->q);
            }
            double t1 = bench_now();
            for (int r = 0; r < reps; r++) {
                cl.EnqueueReadBuffer(env->q, dev, CL_FALSE, 0, bytes, host, 0, NULL, NULL);
                cl.Finish(env->q);
            }
            double t2 = bench_now();
            h2d[t] = (double)bytes * reps / (t1 - t0) / 1e9;
            d2h[t] = (double)bytes * reps / (t2 - t1) / 1e9;
        }
        f->h2d_gbps[s] = bench_median(h2d, BENCH_TRIALS);
        f->d2h_gbps[s] = bench_median(d2h, BENCH_TRIALS);
        cl.EnqueueUnmapMemObject(env->q, pin, host, 0, NULL, NULL);
        cl.Finish(env->q);
        cl.ReleaseMemObject(pin);
        cl.ReleaseMemObject(dev);
    }
}

static void raw_launches(raw_env *env, bench_figs *f)
{
    cl_int e;
    cl_program p = cl.CreateProgramWithSource(env->ctx, 1, &kernel_src, NULL, &e);
    cl.BuildProgram(p, 1, &env->dev, "", NULL, NULL);
    cl_kernel k = cl.CreateKernel(p, "add", &e);
    size_t n = BENCH_LAUNCH_N, bytes = n * sizeof(float);
    cl_mem o = cl.CreateBuffer(env->ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
    cl_mem a = cl.CreateBuffer(env->ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
    cl_mem b = cl.CreateBuffer(env->ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
    double rt[BENCH_TRIALS], thr[BENCH_TRIALS];
    for (int t = -1; t < BENCH_TRIALS; t++) {           /* trial -1 warms up (compiles) */
        double t0 = bench_now();
        for (int r = 0; r < BENCH_ROUNDTRIPS; r++) {
            cl.SetKernelArg(k, 0, sizeof o, &o);
            cl.SetKernelArg(k, 1, sizeof a, &a);
            cl.SetKernelArg(k, 2, sizeof b, &b);
            cl.EnqueueNDRangeKernel(env->q, k, 1, NULL, &n, NULL, 0, NULL, NULL);
            cl.Finish(env->q);
        }
        double t1 = bench_now();
        for (int r = 0; r < BENCH_BURST; r++) {
            cl.SetKernelArg(k, 0, sizeof o, &o);
            cl.SetKernelArg(k, 1, sizeof a, &a);
            cl.SetKernelArg(k, 2, sizeof b, &b);
            cl.EnqueueNDRangeKernel(env->q, k, 1, NULL, &n, NULL, 0, NULL, NULL);
        }
        cl.Finish(env->q);
        double t2 = bench_now();
        if (t < 0) continue;
        rt[t] = (t1 - t0) / BENCH_ROUNDTRIPS * 1e6;
        thr[t] = (t2 - t1) / BENCH_BURST * 1e6;
    }
    f->roundtrip_us = bench_median(rt, BENCH_TRIALS);
    f->burst_us = bench_median(thr, BENCH_TRIALS);
    cl.ReleaseMemObject(o);
    cl.ReleaseMemObject(a);
    cl.ReleaseMemObject(b);
    cl.ReleaseKernel(k);
    cl.ReleaseProgram(p);
}

int bench_raw_cl(bench_figs *f)
{
    raw_env env;
    if (!raw_open(&env)) return 0;
    raw_copies(&env, f);
    raw_launches(&env, f);
    cl.ReleaseCommandQueue(env.q);
    cl.ReleaseContext(env.ctx);
    return 1;
}
