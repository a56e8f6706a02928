/* hwrt-cuda-baseline [--quick]: raw CUDA driver baselines, one JSON object on stdout.
 *   copy:   cuMemcpyHtoDAsync / cuMemcpyDtoHAsync + cuStreamSynchronize, pinned
 *           (cuMemHostAlloc) and pageable (malloc) host memory, median GB/s per size;
 *   launch: cuLaunchKernel(hwrt_ew_f32 fill of 16 floats, as hwrt-bench launch's op) +
 *           cuStreamSynchronize, median microseconds;
 *   alloc:  cuMemAlloc+cuMemFree and cuMemAllocAsync+cuMemFreeAsync pairs, median thread
 *           CPU ns per pair (the unit of hwrt-bench-pool's latency rows).
 * HWRT_CUDA_LIBRARY names the driver (default libcuda.so.1). Exit 3: no usable driver. */
#include "cli.h"
#include "backends/cuda/cuda_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static double now_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int load(void)
{
    const char *path = getenv("HWRT_CUDA_LIBRARY");
    if (!path || !*path) path = "libcuda.so.1";
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "hwrt-cuda-baseline: %s: %s\n", path, dlerror());
        return 0;
    }
#define LOOK(slot, sym, ret, args)                                                         \
    if (!(*(void **)&cu.slot = dlsym(h, #sym))) {                                          \
        fprintf(stderr, "hwrt-cuda-baseline: %s lacks " #sym "\n", path);                  \
        return 0;                                                                          \
    }
    HCU_FUNCS(LOOK, hcu_mem_alloc_prop, hcu_mem_access_desc)
#undef LOOK
    hcu_result r = cu.Init(0);
    if (r != HCU_SUCCESS) {
        fprintf(stderr, "hwrt-cuda-baseline: cuInit failed (%u)\n", r);
        return 0;
    }
    return 1;
}

static const cli_opt opts[] = {
    {"quick", 'q', CLI_NONE, NULL, "fewer sizes and repetitions (up to 64 MiB copies)"},
    {0},
};

static const cli_tool tool = {
    .name = "hwrt-cuda-baseline",
    .synopsis = "hwrt-cuda-baseline [--quick]",
    .about = "Raw CUDA driver figures on device 0, the same-run baselines of hwrt-bench's cuda\n"
             "rows (scripts/device-check.sh): cuMemcpy*Async pinned and pageable, cuLaunchKernel\n"
             "+ cuStreamSynchronize, cuMemAlloc/cuMemFree, cuMemAllocAsync/cuMemFreeAsync, as one\n"
             "JSON document on stdout. Loads libcuda.so.1 itself (HWRT_CUDA_LIBRARY names another).",
    .opts = opts,
};

static int on_opt(void *ctx, int key, const char *arg)
{
    *(int *)ctx = 1;    /* the only flag: --quick */
    return CLI_OK;
}

int main(int argc, char **argv)
{
    int quick = 0, optind_first = 0, done = 0;
    int rc = cli_parse(&tool, argc, argv, on_opt, &quick, &optind_first, &done);
    if (rc != CLI_OK || done) return rc;
    if (!load()) return CLI_FAIL;
    hcu_device dev;
    hcu_context ctx;
    hcu_stream s;
    char name[128] = "";
    CK(cu.DeviceGet(&dev, 0));
    CK(cu.DeviceGetName(name, sizeof name - 1, dev));
    CK(cu.DevicePrimaryCtxRetain(&ctx, dev));
    CK(cu.CtxSetCurrent(ctx));
    CK(cu.StreamCreateWithPriority(&s, HCU_STREAM_NON_BLOCKING, 0));
    printf("{\"device\":\"%s\",\"copy\":[", name);

    const size_t sizes[] = {4096, 65536, 1 << 20, 16 << 20, 64 << 20, 256 << 20, 512u << 20};
    const int nsizes = quick ? 5 : 7;
    const size_t maxb = sizes[nsizes - 1];
    void *pin, *page = malloc(maxb);
    hcu_dptr d;
    CK(cu.MemHostAlloc(&pin, maxb, HCU_MEMHOSTALLOC_PORTABLE));
    CK(cu.MemAlloc(&d, maxb));
    if (!page) return 1;
    memset(page, 1, maxb);
    memset(pin, 1, maxb);
    double t[2001];
    int first = 1;
    for (int si = 0; si < nsizes; si++) {
        size_t n = sizes[si];
        int reps = n >= (256u << 20) ? 11 : n >= (64u << 20) ? 21 : quick ? 21 : 51;
        for (int dir = 0; dir < 2; dir++)
            for (int pinned = 1; pinned >= 0; pinned--) {
                void *h = pinned ? pin : page;
                for (int r = -1; r < reps; r++) {
                    double t0 = now_s(CLOCK_MONOTONIC);
                    if (dir == 0) CK(cu.MemcpyHtoDAsync(d, h, n, s));
                    else CK(cu.MemcpyDtoHAsync(h, d, n, s));
                    CK(cu.StreamSynchronize(s));
                    if (r >= 0) t[r] = now_s(CLOCK_MONOTONIC) - t0;
                }
                double med = median(t, reps);
                printf("%s{\"kind\":\"%s\",\"host\":\"%s\",\"bytes\":%zu,\"repeats\":%d,"
                       "\"gbps_median\":%.4f}", first ? "" : ",", dir ? "D2H" : "H2D",
                       pinned ? "pinned" : "pageable", n, reps, (double)n / med / 1e9);
                first = 0;
            }
    }
    printf("],");

    /* launch + sync of hwrt's own fill kernel on 16 floats */
    hcu_module mod;
    hcu_function f;
    CK(cu.ModuleLoadData(&mod, hwi_cuda_kernels_ptx));
    CK(cu.ModuleGetFunction(&f, mod, "hwrt_ew_f32"));
    int op = 0;              /* fill */
    hcu_dptr o = d, none = 0;
    long long cnt = 16;
    float val = 1.0f;
    void *args[] = {&op, &o, &none, &none, &cnt, &val};
    const int lreps = quick ? 501 : 2001;
    for (int r = -50; r < lreps; r++) {
        double t0 = now_s(CLOCK_MONOTONIC);
        CK(cu.LaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, s, args, NULL));
        CK(cu.StreamSynchronize(s));
        if (r >= 0) t[r] = now_s(CLOCK_MONOTONIC) - t0;
    }
    printf("\"launch_sync_us_median\":%.3f,\"alloc\":[", median(t, lreps) * 1e6);

    /* allocation pairs, thread CPU ns */
    const size_t asz[] = {512, 1 << 20, 16 << 20};
    const char *aname[] = {"512B", "1MiB", "16MiB"};
    const int areps = quick ? 101 : 401;
    for (int i = 0; i < 3; i++) {
        double ta[2001], tb[2001];
        for (int r = -5; r < areps; r++) {
            hcu_dptr p;
            double t0 = now_s(CLOCK_THREAD_CPUTIME_ID);
            CK(cu.MemAlloc(&p, asz[i]));
            CK(cu.MemFree(p));
            if (r >= 0) ta[r] = (now_s(CLOCK_THREAD_CPUTIME_ID) - t0) * 1e9;
        }
        for (int r = -5; r < areps; r++) {
            hcu_dptr p;
            double t0 = now_s(CLOCK_THREAD_CPUTIME_ID);
            CK(cu.MemAllocAsync(&p, asz[i], s));
            CK(cu.MemFreeAsync(p, s));
            if (r >= 0) tb[r] = (now_s(CLOCK_THREAD_CPUTIME_ID) - t0) * 1e9;
        }
        CK(cu.StreamSynchronize(s));
        printf("%s{\"size\":\"%s\",\"cuMemAlloc_free_ns\":%.1f,\"cuMemAllocAsync_free_ns\":%.1f}",
               i ? "," : "", aname[i], median(ta, areps), median(tb, areps));
    }
    printf("]}\n");
    cu.ModuleUnload(mod);
    cu.MemFree(d);
    cu.MemFreeHost(pin);
    free(page);
    cu.StreamDestroy(s);
    cu.DevicePrimaryCtxRelease(dev);
    return 0;
}
