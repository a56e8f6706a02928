/* hwrt-cuda-baseline [--quick]: raw CUDA driver baselines, one JSON object on stdout.
 *   copy:   cuMemcpyHtoDAsync / cuMemcpyDtoHAsync + cuStreamSynchronize, pinned
 *           (cuMemHostAlloc) and pageable (malloc) host memory, median GB/s per size;
 *   launch: cuLaunchKernel(hwrt_ew_f32 fill of 16 floats, as hwrt-bench launch's op) +
 *           cuStreamSynchronize, median microseconds;
 *   alloc:  cuMemAlloc+cuMemFree and cuMemAllocAsync+cuMemFreeAsync pairs, median thread
 *           CPU ns per pair (the unit of hwrt-bench-pool's latency rows).
 * HWRT_CUDA_LIBRARY names the driver (default libcuda.so.1). Exit 3: no usable driver.
 * The command line, timing and JSON rows are tools/common/baseline.h's. */
#include "baseline.h"
#include "base/dynlib.h"
#include "backends/cuda/cuda_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char hwi_cuda_kernels_ptx[];
static hcu_api cu;

#define CK(call)                                                                           \
    do {                                                                                   \
        hcu_result r_ = (call);                                                            \
        if (r_ != HCU_SUCCESS) {                                                           \
            const char *n_ = "?";                                                          \
            if (cu.GetErrorName) cu.GetErrorName(r_, &n_);                                 \
            fprintf(stderr, "hwrt-cuda-baseline: %s failed: %s (%u)\n", #call, n_, r_);    \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

/* The driver through base/dynlib and hcu_resolve, as the backend loads it. */
static int load(void)
{
    static const char *const names[] = {"libcuda.so.1", NULL};
    const char *path = "libcuda.so.1";
    char why[320];
    void *h = hwi_dynlib_open("HWRT_CUDA_LIBRARY", names, &path, why, sizeof why);
    if (!h) {
        fprintf(stderr, "hwrt-cuda-baseline: %s\n", why);
        return 0;
    }
    const char *missing = hcu_resolve(h, &cu);
    if (missing) {
        fprintf(stderr, "hwrt-cuda-baseline: %s lacks %s\n", path, missing);
        return 0;
    }
    hcu_result r = cu.Init(0);
    if (r != HCU_SUCCESS) {
        const char *n = "?";
        if (cu.GetErrorName) cu.GetErrorName(r, &n);
        fprintf(stderr, "hwrt-cuda-baseline: cuInit failed: %s (%u)\n", n, r);
        return 0;
    }
    return 1;
}

static const char about[] =
    "Raw CUDA driver figures on device 0, the same-run baselines of hwrt-bench's cuda\n"
    "rows (scripts/device-check.sh): cuMemcpy*Async pinned and pageable, cuLaunchKernel\n"
    "+ cuStreamSynchronize, cuMemAlloc/cuMemFree, cuMemAllocAsync/cuMemFreeAsync, as one\n"
    "JSON document on stdout. Loads libcuda.so.1 itself (HWRT_CUDA_LIBRARY names another).";

typedef struct {
    hcu_stream s;
    hcu_dptr d;
    void *pin, *page;
    hcu_function f;
    void **args;
} run;

static void copy(void *ctx, int dir, int pinned, size_t n)
{
    run *b = ctx;
    void *h = pinned ? b->pin : b->page;
    if (dir == 0) CK(cu.MemcpyHtoDAsync(b->d, h, n, b->s));
    else CK(cu.MemcpyDtoHAsync(h, b->d, n, b->s));
    CK(cu.StreamSynchronize(b->s));
}

static void launch_sync(void *ctx)
{
    run *b = ctx;
    CK(cu.LaunchKernel(b->f, 1, 1, 1, 256, 1, 1, 0, b->s, b->args, NULL));
    CK(cu.StreamSynchronize(b->s));
}

static void alloc_free(void *ctx, size_t bytes)
{
    (void)ctx;
    hcu_dptr p;
    CK(cu.MemAlloc(&p, bytes));
    CK(cu.MemFree(p));
}

static void alloc_free_async(void *ctx, size_t bytes)
{
    run *b = ctx;
    hcu_dptr p;
    CK(cu.MemAllocAsync(&p, bytes, b->s));
    CK(cu.MemFreeAsync(p, b->s));
}

static void synchronize(void *ctx)
{
    CK(cu.StreamSynchronize(((run *)ctx)->s));
}

int main(int argc, char **argv)
{
    int quick;
    int rc = baseline_cli("hwrt-cuda-baseline", about, argc, argv, &quick);
    if (rc >= 0) return rc;
    if (!load()) return BASELINE_NO_DRIVER;
    hcu_device dev;
    hcu_context ctx;
    run b = {0};
    char name[128] = "";
    CK(cu.DeviceGet(&dev, 0));
    CK(cu.DeviceGetName(name, sizeof name - 1, dev));
    CK(cu.DevicePrimaryCtxRetain(&ctx, dev));
    CK(cu.CtxSetCurrent(ctx));
    CK(cu.StreamCreateWithPriority(&b.s, HCU_STREAM_NON_BLOCKING, 0));
    const size_t maxb = baseline_copy_max_bytes(quick);
    b.page = malloc(maxb);
    if (!b.page) return 1;
    CK(cu.MemHostAlloc(&b.pin, maxb, HCU_MEMHOSTALLOC_PORTABLE));
    CK(cu.MemAlloc(&b.d, maxb));
    memset(b.page, 1, maxb);
    memset(b.pin, 1, maxb);
    printf("{\"device\":\"%s\",", name);
    baseline_print_copies(quick, copy, &b);

    /* launch + sync of hwrt's own fill kernel on 16 floats */
    hcu_module mod;
    CK(cu.ModuleLoadData(&mod, hwi_cuda_kernels_ptx));
    CK(cu.ModuleGetFunction(&b.f, mod, "hwrt_ew_f32"));
    int op = 0;              /* fill */
    hcu_dptr o = b.d, none = 0;
    long long cnt = 16;
    float val = 1.0f;
    void *args[] = {&op, &o, &none, &none, &cnt, &val};
    b.args = args;
    baseline_print_launch(quick, launch_sync, &b);

    /* allocation pairs, thread CPU ns */
    static const baseline_pair pairs[] = {{"cuMemAlloc_free_ns", alloc_free},
                                          {"cuMemAllocAsync_free_ns", alloc_free_async}};
    baseline_print_allocs(quick, pairs, 2, synchronize, &b);
    printf("}\n");
    cu.ModuleUnload(mod);
    cu.MemFree(b.d);
    cu.MemFreeHost(b.pin);
    free(b.page);
    cu.StreamDestroy(b.s);
    cu.DevicePrimaryCtxRelease(dev);
    return 0;
}
