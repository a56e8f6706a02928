/* hwrt-ascend-baseline [--quick]: raw AscendCL baselines on device 0, one JSON object on
 * stdout, in the shape of hwrt-cuda-baseline's:
 *   copy:   H2D / D2H of pinned memory (aclrtMallocHost) with aclrtMemcpyAsync +
 *           aclrtSynchronizeStream; of pageable memory (malloc) with the synchronous
 *           aclrtMemcpy (async copies of pageable memory are what CANN calls
 *           unpredictable, and what hwrt does for them); median GB/s per size;
 *   launch: aclnnInplaceFillScalarGetWorkspaceSize + aclnnInplaceFillScalar on 16 floats
 *           (hwrt-bench launch's op) + aclrtSynchronizeStream, median microseconds;
 *   alloc:  aclrtMalloc + aclrtFree pairs, median thread CPU ns per pair (the unit of
 *           hwrt-bench-pool's latency rows).
 * HWRT_ASCEND_LIBRARY names libascendcl (default libascendcl.so). Exit 3: no usable
 * runtime or device. */
#include "cli.h"
#include "base/dynlib.h"
#include "backends/ascend/ascend_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static hacl_api acl;

#define CK(call)                                                                           \
    do {                                                                                   \
        hacl_error r_ = (call);                                                            \
        if (r_ != HACL_SUCCESS) {                                                          \
            const char *m_ = acl.GetRecentErrMsg ? acl.GetRecentErrMsg() : NULL;           \
            fprintf(stderr, "hwrt-ascend-baseline: %s failed: %d %s\n", #call, r_,         \
                    m_ ? m_ : "");                                                         \
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
    static const char *const rt[] = {"libascendcl.so", NULL};
    static const char *const nnb[] = {"libnnopbase.so", NULL};
    static const char *const math[] = {"libopapi_math.so", NULL};
    static const char *const legacy[] = {"libopapi.so", NULL};
    static const hwi_dynsym rt_syms[] = {
#define SYM(slot, sym, ret, args, flags) {#sym, (void **)&acl.slot, flags, NULL},
        HACL_RT_FUNCS(SYM, hacl_physical_mem_prop)
    };
    static const hwi_dynsym nn_syms[] = {HACL_NN_FUNCS(SYM)};
#undef SYM
    char why[256];
    void *h = hwi_dynlib_open("HWRT_ASCEND_LIBRARY", rt, NULL, why, sizeof why);
    const char *missing = h ? hwi_dynlib_resolve(h, rt_syms, sizeof rt_syms / sizeof *rt_syms)
                            : NULL;
    if (!h || missing) {
        fprintf(stderr, "hwrt-ascend-baseline: %s%s\n", h ? "libascendcl lacks " : why,
                h ? missing : "");
        return 0;
    }
    void *ops[3] = {hwi_dynlib_open(NULL, math, NULL, NULL, 0),
                    hwi_dynlib_open(NULL, legacy, NULL, NULL, 0),
                    hwi_dynlib_open(NULL, nnb, NULL, why, sizeof why)};
    if (!ops[2] || hwi_dynlib_resolve(ops[2], nn_syms, sizeof nn_syms / sizeof *nn_syms)) {
        fprintf(stderr, "hwrt-ascend-baseline: libnnopbase: %s\n", ops[2] ? "symbols" : why);
        return 0;
    }
    *(void **)&acl.Fill = hwi_dynlib_find(ops, 3, "aclnnInplaceFillScalarGetWorkspaceSize");
    *(void **)&acl.FillRun = hwi_dynlib_find(ops, 3, "aclnnInplaceFillScalar");
    if (!acl.Fill || !acl.FillRun) {
        fprintf(stderr, "hwrt-ascend-baseline: no aclnnInplaceFillScalar in libopapi*\n");
        return 0;
    }
    hacl_error r = acl.Init(NULL);
    uint32_t n = 0;
    if ((r != HACL_SUCCESS && r != HACL_ERROR_REPEAT_INITIALIZE) ||
        acl.GetDeviceCount(&n) != HACL_SUCCESS || n == 0) {
        fprintf(stderr, "hwrt-ascend-baseline: aclInit %d, %u device(s)\n", r, n);
        return 0;
    }
    return 1;
}

static const cli_opt opts[] = {
    {"quick", 'q', CLI_NONE, NULL, "fewer sizes and repetitions (up to 64 MiB copies)"},
    {0},
};

static const cli_tool tool = {
    .name = "hwrt-ascend-baseline",
    .synopsis = "hwrt-ascend-baseline [--quick]",
    .about = "Raw AscendCL figures on device 0, the same-run baselines of hwrt-bench's ascend\n"
             "rows (scripts/device-check.sh): aclrtMemcpyAsync pinned and aclrtMemcpy pageable,\n"
             "aclnnInplaceFillScalar + aclrtSynchronizeStream, aclrtMalloc/aclrtFree, as one\n"
             "JSON document on stdout. Loads libascendcl.so itself (HWRT_ASCEND_LIBRARY names\n"
             "another).",
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
    if (!load()) return 3;
    hacl_context ctx;
    hacl_stream s;
    CK(acl.CreateContext(&ctx, 0));
    CK(acl.SetCurrentContext(ctx));
    CK(acl.CreateStreamWithConfig(&s, 0, 0));
    const char *soc = acl.GetSocName();
    printf("{\"device\":\"%s\",\"copy\":[", soc ? soc : "?");

    const size_t sizes[] = {4096, 65536, 1 << 20, 16 << 20, 64 << 20, 256 << 20, 512u << 20};
    const int nsizes = quick ? 5 : 7;
    const size_t maxb = sizes[nsizes - 1];
    void *pin, *page = malloc(maxb), *d;
    CK(acl.MallocHost(&pin, maxb));
    CK(acl.Malloc(&d, maxb, HACL_MEM_MALLOC_HUGE_FIRST));
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
                for (int r = -1; r < reps; r++) {
                    double t0 = now_s(CLOCK_MONOTONIC);
                    if (pinned) {
                        if (dir == 0) CK(acl.MemcpyAsync(d, n, pin, n, HACL_MEMCPY_HOST_TO_DEVICE, s));
                        else CK(acl.MemcpyAsync(pin, n, d, n, HACL_MEMCPY_DEVICE_TO_HOST, s));
                        CK(acl.SynchronizeStream(s));
                    } else if (dir == 0) {
                        CK(acl.Memcpy(d, n, page, n, HACL_MEMCPY_HOST_TO_DEVICE));
                    } else {
                        CK(acl.Memcpy(page, n, d, n, HACL_MEMCPY_DEVICE_TO_HOST));
                    }
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

    /* aclnn fill of 16 floats, both phases each time (the executor is single-use) */
    int64_t dims[1] = {16}, strides[1] = {1};
    hacl_tensor *tt = acl.CreateTensor(dims, 1, HACL_FLOAT, strides, 0, HACL_FORMAT_ND, dims, 1, d);
    float one = 1.0f;
    hacl_scalar *sc = acl.CreateScalar(&one, HACL_FLOAT);
    if (!tt || !sc) {
        fprintf(stderr, "hwrt-ascend-baseline: aclCreateTensor/aclCreateScalar failed\n");
        return 1;
    }
    void *ws = NULL;
    size_t ws_cap = 0;
    const int lreps = quick ? 501 : 2001;
    for (int r = -50; r < lreps; r++) {
        double t0 = now_s(CLOCK_MONOTONIC);
        uint64_t wsb = 0;
        hacl_executor *ex = NULL;
        hacl_nn_status ns = acl.Fill(tt, sc, &wsb, &ex);
        if (ns == HACL_NN_SUCCESS && wsb > ws_cap) {
            if (ws) acl.Free(ws);
            CK(acl.Malloc(&ws, (size_t)wsb, HACL_MEM_MALLOC_HUGE_FIRST));
            ws_cap = (size_t)wsb;
        }
        if (ns == HACL_NN_SUCCESS) ns = acl.FillRun(wsb ? ws : NULL, wsb, ex, s);
        if (ns != HACL_NN_SUCCESS) {
            fprintf(stderr, "hwrt-ascend-baseline: aclnnInplaceFillScalar: %d\n", (int)ns);
            return 1;
        }
        CK(acl.SynchronizeStream(s));
        if (r >= 0) t[r] = now_s(CLOCK_MONOTONIC) - t0;
    }
    printf("\"launch_sync_us_median\":%.3f,\"alloc\":[", median(t, lreps) * 1e6);
    acl.DestroyTensor(tt);
    acl.DestroyScalar(sc);

    /* allocation pairs, thread CPU ns */
    const size_t asz[] = {512, 1 << 20, 16 << 20};
    const char *aname[] = {"512B", "1MiB", "16MiB"};
    const int areps = quick ? 101 : 401;
    for (int i = 0; i < 3; i++) {
        double ta[2001];
        for (int r = -5; r < areps; r++) {
            void *p;
            double t0 = now_s(CLOCK_THREAD_CPUTIME_ID);
            CK(acl.Malloc(&p, asz[i], HACL_MEM_MALLOC_HUGE_FIRST));
            CK(acl.Free(p));
            if (r >= 0) ta[r] = (now_s(CLOCK_THREAD_CPUTIME_ID) - t0) * 1e9;
        }
        printf("%s{\"size\":\"%s\",\"aclrtMalloc_free_ns\":%.1f}", i ? "," : "", aname[i],
               median(ta, areps));
    }
    printf("]}\n");
    if (ws) acl.Free(ws);
    acl.Free(d);
    acl.FreeHost(pin);
    free(page);
    acl.DestroyStream(s);
    acl.DestroyContext(ctx);
    return 0;
}
