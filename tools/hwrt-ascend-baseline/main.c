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
 * HWRT_ASCEND_LIBRARY names libascendcl (default libascendcl.so), HWRT_ASCEND_OPAPI_LIBRARY
 * and HWRT_ASCEND_NNOPBASE_LIBRARY the op libraries, as for the backend. Exit 3: no usable
 * runtime or device. The command line, timing and JSON rows are tools/common/baseline.h's. */
#include "baseline.h"
#include "base/dynlib.h"
#include "backends/ascend/ascend_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    void *ops[3] = {hwi_dynlib_open("HWRT_ASCEND_OPAPI_LIBRARY", math, NULL, NULL, 0),
                    hwi_dynlib_open(NULL, legacy, NULL, NULL, 0),
                    hwi_dynlib_open("HWRT_ASCEND_NNOPBASE_LIBRARY", nnb, NULL, why, sizeof why)};
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

static const char about[] =
    "Raw AscendCL figures on device 0, the same-run baselines of hwrt-bench's ascend\n"
    "rows (scripts/device-check.sh): aclrtMemcpyAsync pinned and aclrtMemcpy pageable,\n"
    "aclnnInplaceFillScalar + aclrtSynchronizeStream, aclrtMalloc/aclrtFree, as one\n"
    "JSON document on stdout. Loads libascendcl.so itself (HWRT_ASCEND_LIBRARY names\n"
    "another).";

typedef struct {
    hacl_stream s;
    void *d, *pin, *page;
    hacl_tensor *t;
    hacl_scalar *sc;
    void *ws;                  /* the fill's workspace, grown on demand */
    size_t ws_cap;
} run;

static void copy(void *ctx, int dir, int pinned, size_t n)
{
    run *b = ctx;
    if (pinned) {
        if (dir == 0) CK(acl.MemcpyAsync(b->d, n, b->pin, n, HACL_MEMCPY_HOST_TO_DEVICE, b->s));
        else CK(acl.MemcpyAsync(b->pin, n, b->d, n, HACL_MEMCPY_DEVICE_TO_HOST, b->s));
        CK(acl.SynchronizeStream(b->s));
    } else if (dir == 0) {
        CK(acl.Memcpy(b->d, n, b->page, n, HACL_MEMCPY_HOST_TO_DEVICE));
    } else {
        CK(acl.Memcpy(b->page, n, b->d, n, HACL_MEMCPY_DEVICE_TO_HOST));
    }
}

/* Both phases each time (the executor is single-use), then a stream synchronize. */
static void launch_sync(void *ctx)
{
    run *b = ctx;
    uint64_t wsb = 0;
    hacl_executor *ex = NULL;
    hacl_nn_status ns = acl.Fill(b->t, b->sc, &wsb, &ex);
    if (ns == HACL_NN_SUCCESS && wsb > b->ws_cap) {
        if (b->ws) acl.Free(b->ws);
        CK(acl.Malloc(&b->ws, (size_t)wsb, HACL_MEM_MALLOC_HUGE_FIRST));
        b->ws_cap = (size_t)wsb;
    }
    if (ns == HACL_NN_SUCCESS) ns = acl.FillRun(wsb ? b->ws : NULL, wsb, ex, b->s);
    if (ns != HACL_NN_SUCCESS) {
        fprintf(stderr, "hwrt-ascend-baseline: aclnnInplaceFillScalar: %d\n", (int)ns);
        exit(1);
    }
    CK(acl.SynchronizeStream(b->s));
}

static void alloc_free(void *ctx, size_t bytes)
{
    (void)ctx;
    void *p;
    CK(acl.Malloc(&p, bytes, HACL_MEM_MALLOC_HUGE_FIRST));
    CK(acl.Free(p));
}

int main(int argc, char **argv)
{
    int quick;
    int rc = baseline_cli("hwrt-ascend-baseline", about, argc, argv, &quick);
    if (rc >= 0) return rc;
    if (!load()) return BASELINE_NO_DRIVER;
    hacl_context ctx;
    run b = {0};
    CK(acl.CreateContext(&ctx, 0));
    CK(acl.SetCurrentContext(ctx));
    CK(acl.CreateStreamWithConfig(&b.s, 0, 0));
    const size_t maxb = baseline_copy_max_bytes(quick);
    b.page = malloc(maxb);
    if (!b.page) return 1;
    CK(acl.MallocHost(&b.pin, maxb));
    CK(acl.Malloc(&b.d, maxb, HACL_MEM_MALLOC_HUGE_FIRST));
    memset(b.page, 1, maxb);
    memset(b.pin, 1, maxb);
    const char *soc = acl.GetSocName();
    printf("{\"device\":\"%s\",", soc ? soc : "?");
    baseline_print_copies(quick, copy, &b);

    /* aclnn fill of 16 floats */
    int64_t dims[1] = {16}, strides[1] = {1};
    b.t = acl.CreateTensor(dims, 1, HACL_FLOAT, strides, 0, HACL_FORMAT_ND, dims, 1, b.d);
    float one = 1.0f;
    b.sc = acl.CreateScalar(&one, HACL_FLOAT);
    if (!b.t || !b.sc) {
        fprintf(stderr, "hwrt-ascend-baseline: aclCreateTensor/aclCreateScalar failed\n");
        return 1;
    }
    baseline_print_launch(quick, launch_sync, &b);
    acl.DestroyTensor(b.t);
    acl.DestroyScalar(b.sc);

    /* allocation pairs, thread CPU ns */
    static const baseline_pair pairs[] = {{"aclrtMalloc_free_ns", alloc_free}};
    baseline_print_allocs(quick, pairs, 1, NULL, &b);
    printf("}\n");
    if (b.ws) acl.Free(b.ws);
    acl.Free(b.d);
    acl.FreeHost(b.pin);
    free(b.page);
    acl.DestroyStream(b.s);
    acl.DestroyContext(ctx);
    return 0;
}
