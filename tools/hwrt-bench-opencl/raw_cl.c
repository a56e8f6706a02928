/* The baseline: PoCL driven directly, without hwrt: non-blocking clEnqueueWriteBuffer /
 * clEnqueueReadBuffer from CL_MEM_ALLOC_HOST_PTR memory (what hwrt's pinned copies turn
 * into) and clSetKernelArg + clEnqueueNDRangeKernel, each followed by clFinish. The
 * ICD loader is opened with dlopen, like hwrt does (hwrt's table is internal). */
#include "bench.h"

#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include <dlfcn.h>
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

static cl_context ctx;
static cl_command_queue q;
static cl_device_id dev;
static cl_mem dbuf[BENCH_NSIZES], pbuf[BENCH_NSIZES], kbuf[3];
static void *host[BENCH_NSIZES];
static cl_program prog;
static cl_kernel kern;

int bench_raw_open(void)
{
    void *h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return 0;
#define RAW_SYM(n) if (!(*(void **)&cl.n = dlsym(h, "cl" #n))) return 0;
    RAW_FUNCS(RAW_SYM)
#undef RAW_SYM
    cl_platform_id plat;
    cl_uint np = 0;
    if (cl.GetPlatformIDs(1, &plat, &np) != CL_SUCCESS || np == 0) return 0;
    if (cl.GetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS) return 0;
    cl_int e;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)plat, 0};
    ctx = cl.CreateContext(props, 1, &dev, NULL, NULL, &e);
    if (e != CL_SUCCESS) return 0;
    q = cl.CreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &e);
    if (e != CL_SUCCESS) return 0;
    for (int s = 0; s < BENCH_NSIZES; s++) {
        dbuf[s] = cl.CreateBuffer(ctx, CL_MEM_READ_WRITE, bench_sizes[s], NULL, &e);
        if (e != CL_SUCCESS) return 0;
        pbuf[s] = cl.CreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bench_sizes[s],
                                  NULL, &e);
        if (e != CL_SUCCESS) return 0;
        host[s] = cl.EnqueueMapBuffer(q, pbuf[s], CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                      bench_sizes[s], 0, NULL, NULL, &e);
        if (e != CL_SUCCESS) return 0;
        memset(host[s], 1, bench_sizes[s]);
    }
    prog = cl.CreateProgramWithSource(ctx, 1, &kernel_src, NULL, &e);
    if (e != CL_SUCCESS || cl.BuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS) return 0;
    kern = cl.CreateKernel(prog, "add", &e);
    if (e != CL_SUCCESS) return 0;
    for (int i = 0; i < 3; i++) {
        kbuf[i] = cl.CreateBuffer(ctx, CL_MEM_READ_WRITE, BENCH_LAUNCH_N * sizeof(float), NULL, &e);
        if (e != CL_SUCCESS) return 0;
    }
    bench_raw_trial(B_ROUNDTRIP);           /* warm up: PoCL compiles at first launch */
    return 1;
}

static void launch(void)
{
    size_t n = BENCH_LAUNCH_N;
    for (cl_uint i = 0; i < 3; i++) cl.SetKernelArg(kern, i, sizeof(cl_mem), &kbuf[i]);
    cl.EnqueueNDRangeKernel(q, kern, 1, NULL, &n, NULL, 0, NULL, NULL);
}

double bench_raw_trial(int fig)
{
    double t0 = bench_now();
    if (fig == B_ROUNDTRIP) {
        for (int r = 0; r < BENCH_ROUNDTRIPS; r++) {
            launch();
            cl.Finish(q);
        }
        return (bench_now() - t0) / BENCH_ROUNDTRIPS * 1e6;
    }
    if (fig == B_BURST) {
        for (int r = 0; r < BENCH_BURST; r++) launch();
        cl.Finish(q);
        return (bench_now() - t0) / BENCH_BURST * 1e6;
    }
    int s = fig / 2, d2h = fig % 2;
    size_t bytes = bench_sizes[s];
    int reps = bench_reps(bytes);
    for (int r = 0; r < reps; r++) {
        if (d2h) cl.EnqueueReadBuffer(q, dbuf[s], CL_FALSE, 0, bytes, host[s], 0, NULL, NULL);
        else cl.EnqueueWriteBuffer(q, dbuf[s], CL_FALSE, 0, bytes, host[s], 0, NULL, NULL);
        cl.Finish(q);
    }
    return (double)bytes * reps / (bench_now() - t0) / 1e9;
}

void bench_raw_close(void)
{
    for (int s = 0; s < BENCH_NSIZES; s++) {
        cl.EnqueueUnmapMemObject(q, pbuf[s], host[s], 0, NULL, NULL);
        cl.Finish(q);
        cl.ReleaseMemObject(pbuf[s]);
        cl.ReleaseMemObject(dbuf[s]);
    }
    for (int i = 0; i < 3; i++) cl.ReleaseMemObject(kbuf[i]);
    cl.ReleaseKernel(kern);
    cl.ReleaseProgram(prog);
    cl.ReleaseCommandQueue(q);
    cl.ReleaseContext(ctx);
}
