/* The ascend backend's kernel path (aclnn's two phases, the descriptors, the per-stream
 * workspace) against the TEST DOUBLE of libascendcl and aclnn (acl_double_device.c,
 * acl_double_nn.c: float32 computed plainly on host memory), calling the ops table
 * directly. Nothing here runs on an NPU or says anything about CANN's kernels; it checks
 * what hwrt hands aclnn: contiguous ND descriptors of the right shapes and dtypes, every
 * one destroyed, each executor run once with the workspace phase 1 asked for (grown when
 * an op asks for more), KEEP_DTYPE for a float32 matmul on Ascend910B3, ReduceSum of
 * [m, k, nn] over dimension 1; a dtype the op refuses in phase 1 is NOT_SUPPORTED with the
 * op, the dtypes and the SoC named; a descriptor aclnn cannot create (the double's
 * acl_double_fail_create) is HOST_OUT_OF_MEMORY before phase 1, nothing left behind. */
#include "harness.h"
#include "backends/backend.h"

#include <dlfcn.h>
#include <math.h>

extern const hwrt_backend_ops hwrt_backend_ascend;
static const hwrt_backend_ops *B = &hwrt_backend_ascend;

static int (*live)(void);
static int (*runs)(void);
static void (*ask_workspace)(uint64_t bytes);
static void (*fail_create)(int nth);
static int (*phase1s)(void);

static hwrt_bstream *s;
static float *dev;                  /* device memory: a 64 Ki float segment */

static void put(int64_t at, const float *v, size_t n)
{
    OK(B->memcpy_async(s, dev + at, v, n * sizeof *v, HWRT_MEMCPY_HOST_TO_DEVICE, 0));
}

static void get(int64_t at, float *v, size_t n)
{
    OK(B->memcpy_async(s, v, dev + at, n * sizeof *v, HWRT_MEMCPY_DEVICE_TO_HOST, 0));
}

static hwrt_kernel kern(hwrt_kernel_op op, int64_t n)
{
    hwrt_kernel k;
    memset(&k, 0, sizeof k);
    k.op = op;
    k.dtype = k.out_dtype = HWRT_FLOAT32;
    k.a = dev;
    k.b = dev + 1024;
    k.out = dev + 2048;
    k.n = n;
    return k;
}

int main(void)
{
    void *dbl = dlopen(getenv("HWRT_ASCEND_LIBRARY"), RTLD_NOW);
    if (!dbl) { fprintf(stderr, "the test double: %s\n", dlerror()); return 1; }
    *(void **)&live = dlsym(dbl, "acl_double_live");
    *(void **)&runs = dlsym(dbl, "acl_double_runs");
    *(void **)&ask_workspace = dlsym(dbl, "acl_double_workspace");
    *(void **)&fail_create = dlsym(dbl, "acl_double_fail_create");
    *(void **)&phase1s = dlsym(dbl, "acl_double_phase1s");
    if (!live || !runs || !ask_workspace || !fail_create || !phase1s) {
        fprintf(stderr, "HWRT_ASCEND_LIBRARY is not the test double with aclnn\n");
        return 1;
    }
    hwrt_bdev *d = NULL;
    OK(B->device_open(0, &d));
    OK(B->stream_create(d, 0, &s));
    void *seg = NULL;
    OK(B->segment_alloc(d, 64 << 12, &seg));
    dev = seg;

    const float a[6] = {1, -2, 3, -4, 5, -6}, b[6] = {10, 20, 30, 40, 50, 60};
    float o[6];
    put(0, a, 6);
    put(1024, b, 6);

    TEST_CASE("elementwise");
    hwrt_kernel k = kern(HWRT_K_ADD, 6);
    OK(B->kernel_launch(s, &k));
    get(2048, o, 6);
    EXPECT(o[0] == 11 && o[5] == 54);
    k = kern(HWRT_K_MUL, 6);
    OK(B->kernel_launch(s, &k));
    get(2048, o, 6);
    EXPECT(o[1] == -40 && o[5] == -360);
    k = kern(HWRT_K_SCALE, 6);
    k.scalar = 0.5;
    OK(B->kernel_launch(s, &k));
    get(2048, o, 6);
    EXPECT(o[0] == 0.5f && o[3] == -2);
    k = kern(HWRT_K_RELU, 6);
    OK(B->kernel_launch(s, &k));
    get(2048, o, 6);
    EXPECT(o[0] == 1 && o[1] == 0 && o[4] == 5 && o[5] == 0);
    k = kern(HWRT_K_FILL, 6);
    k.scalar = 2.25;
    OK(B->kernel_launch(s, &k));
    get(2048, o, 6);
    EXPECT(o[0] == 2.25f && o[5] == 2.25f);
    k = kern(HWRT_K_CAST, 6);
    k.out_dtype = HWRT_INT32;
    OK(B->kernel_launch(s, &k));
    int32_t oi[6];
    OK(B->memcpy_async(s, oi, dev + 2048, sizeof oi, HWRT_MEMCPY_DEVICE_TO_HOST, 0));
    EXPECT(oi[0] == 1 && oi[1] == -2 && oi[5] == -6);

    TEST_CASE("matmul and sum");
    k = kern(HWRT_K_MATMUL, 0);             /* [2,3] x [3,2] */
    k.m = 2, k.k = 3, k.nn = 2;
    OK(B->kernel_launch(s, &k));
    get(2048, o, 4);
    /* a = [[1,-2,3],[-4,5,-6]], b = [[10,20],[30,40],[50,60]] */
    EXPECT(o[0] == 100 && o[1] == 120 && o[2] == -190 && o[3] == -240);
    k = kern(HWRT_K_SUM, 0);                /* [1, 3, 2] over the 3 */
    k.m = 1, k.k = 3, k.nn = 2;
    OK(B->kernel_launch(s, &k));
    get(2048, o, 2);
    EXPECT(o[0] == 1 + 3 + 5 && o[1] == -2 - 4 - 6);

    TEST_CASE("workspace: phase 1's size, grown");
    int r0 = runs();
    ask_workspace(3000);                    /* the double checks the buffer and its size */
    k = kern(HWRT_K_ADD, 6);
    OK(B->kernel_launch(s, &k));
    ask_workspace(5u << 20);                /* more than the first buffer: grown */
    OK(B->kernel_launch(s, &k));
    ask_workspace(100);                     /* less: the same buffer */
    OK(B->kernel_launch(s, &k));
    ask_workspace(0);
    EXPECT(runs() == r0 + 3);
    get(2048, o, 6);
    EXPECT(o[0] == 11);

    TEST_CASE("refusals");
    k = kern(HWRT_K_ADD, 6);
    k.dtype = k.out_dtype = HWRT_INT8;      /* the double's "SoC" lacks it */
    FAILS(B->kernel_launch(s, &k), HWRT_ERROR_NOT_SUPPORTED, "aclnnAddGetWorkspaceSize");
    EXPECT(strstr(hwrt_last_error(), "int8") && strstr(hwrt_last_error(), "Ascend910B3") &&
           strstr(hwrt_last_error(), "161002"));
    k = kern(HWRT_K_MATMUL, 0);
    k.m = 2, k.k = 3, k.nn = 2;
    k.dtype = k.out_dtype = HWRT_FLOAT64;
    FAILS(B->kernel_launch(s, &k), HWRT_ERROR_NOT_SUPPORTED, "aclnnMatmul takes float32");
    /* a cast names its input and output dtypes (ascend_kernels.c nn_err: the output is
     * out_dtype for a cast and a sum, dtype otherwise) */
    k = kern(HWRT_K_CAST, 6);
    k.out_dtype = HWRT_FLOAT16;             /* the double casts float32 to int32 only */
    FAILS(B->kernel_launch(s, &k), HWRT_ERROR_NOT_SUPPORTED, "for Cast of float32 -> float16");
    k = kern(HWRT_K_SUM, 0);
    k.m = 1, k.k = 3, k.nn = 2;
    k.out_dtype = HWRT_INT32;               /* ReduceSum's dtype must be out's float32 */
    FAILS(B->kernel_launch(s, &k), HWRT_ERROR_NOT_SUPPORTED, "of float32 -> int32");

    TEST_CASE("a descriptor aclnn cannot create: HOST_OUT_OF_MEMORY, nothing run or left");
    /* each op's descriptors (out, a, b, its scalar, ReduceSum's dims), the nth failing in
     * turn (issue 25's seed-2027 mutation run: each `||` of the check in ascend_kernels.c
     * made `&&` let a NULL descriptor through to phase 1) */
    static const struct { hwrt_kernel_op op; int n; } creates[] = {
        {HWRT_K_ADD, 4}, {HWRT_K_MUL, 3}, {HWRT_K_SCALE, 3}, {HWRT_K_RELU, 2},
        {HWRT_K_CAST, 2}, {HWRT_K_MATMUL, 3}, {HWRT_K_SUM, 3}, {HWRT_K_FILL, 2}};
    for (size_t c = 0; c < sizeof creates / sizeof creates[0]; c++) {
        k = kern(creates[c].op, 6);
        if (k.op == HWRT_K_CAST) k.out_dtype = HWRT_INT32;
        if (k.op == HWRT_K_MATMUL) k.n = 0, k.m = 2, k.k = 3, k.nn = 2;
        if (k.op == HWRT_K_SUM) k.n = 0, k.m = 1, k.k = 3, k.nn = 2;
        for (int nth = 1; nth <= creates[c].n; nth++) {
            int p0 = phase1s(), runs0 = runs();
            fail_create(nth);
            hwrt_status st = B->kernel_launch(s, &k);
            EXPECT(st == HWRT_ERROR_HOST_OUT_OF_MEMORY &&
                   strstr(hwrt_last_error(), "ascend: creating the aclnn descriptors of "));
            EXPECT(phase1s() == p0 && runs() == runs0 && live() == 0);
            if (st != HWRT_ERROR_HOST_OUT_OF_MEMORY || phase1s() != p0 || live())
                fprintf(stderr, "  op %d, creation %d failing: %s \"%s\", %d phase 1 calls, %d "
                        "objects left\n", (int)k.op, nth, hwrt_status_name(st), hwrt_last_error(),
                        phase1s() - p0, live());
        }
        fail_create(creates[c].n + 1);            /* one past the op's descriptors: runs */
        OK(B->kernel_launch(s, &k));
        fail_create(0);
    }

    TEST_CASE("every descriptor and executor released");
    EXPECT(live() == 0);
    if (live()) fprintf(stderr, "%d aclnn objects left\n", live());

    OK(B->stream_synchronize(s));
    OK(B->segment_free(d, seg, 64 << 12));
    B->stream_destroy(s);
    B->device_close(d);
    return test_report();
}
