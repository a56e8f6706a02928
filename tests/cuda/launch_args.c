/* Every launch cuda_launch.c prepares passes what the kernel's PTX entry declares: the
 * same number of parameters, each of the PTX's type (.u32 <- int, .u64 <- 64-bit integer
 * or pointer, .f32 <- float, .f64 <- double), for every op and dtype; and the grid covers
 * the work. The PTX is the embedded string the driver loads (hwi_cuda_kernels_ptx), so a
 * kernel signature changed without its launch fails here, without a GPU. White-box. */
#include "harness.h"
#include "backends/cuda/cuda_internal.h"

/* The .param kinds of entry `name` in the PTX ('i' 'l' 'f' 'd'), or -1 if absent. */
static int ptx_params(const char *name, char *kinds, int max)
{
    char head[96];
    snprintf(head, sizeof head, ".entry %s(", name);
    const char *p = strstr(hwi_cuda_kernels_ptx, head);
    if (!p) return -1;
    const char *end = strchr(p, ')');
    int n = 0;
    for (const char *q = strstr(p, ".param "); q && q < end && n < max; q = strstr(q + 1, ".param ")) {
        q += 7;
        kinds[n++] = !strncmp(q, ".u32", 4) || !strncmp(q, ".s32", 4) || !strncmp(q, ".b32", 4) ? 'i'
                     : !strncmp(q, ".f32", 4) ? 'f'
                     : !strncmp(q, ".f64", 4) ? 'd'
                     : !strncmp(q, ".u64", 4) || !strncmp(q, ".s64", 4) || !strncmp(q, ".b64", 4) ? 'l'
                                                                                             : '?';
    }
    return n;
}

static void check(const hwrt_kernel *k, const char *what)
{
    cu_launch L;
    int empty = -1;
    OK(cu_launch_prepare(k, &L, &empty));
    EXPECT(empty == 0);
    char want[16];
    int n = ptx_params(cu_kernel_name(L.which), want, 16);
    EXPECT(n == L.nargs);
    if (n != L.nargs)
        fprintf(stderr, "%s: %s takes %d parameters, the launch passes %d\n", what,
                cu_kernel_name(L.which), n, L.nargs);
    for (int i = 0; i < n && i < L.nargs; i++) {
        EXPECT(want[i] == L.kinds[i]);
        if (want[i] != L.kinds[i])
            fprintf(stderr, "%s: %s parameter %d is '%c' in the PTX, '%c' in the launch\n", what,
                    cu_kernel_name(L.which), i, want[i], L.kinds[i]);
    }
    /* the grid is the work's, no idle blocks: matmul one 16x16 tile per block, the rest
     * 256 threads a block up to 8192 blocks (grid-stride beyond) */
    if (k->op == HWRT_K_MATMUL) {
        EXPECT(L.bx == 16 && L.by == 16);
        EXPECT(L.gx == (unsigned)((k->nn + 15) / 16) && L.gy == (unsigned)((k->m + 15) / 16));
    } else {
        int64_t work = k->op == HWRT_K_SUM ? k->m * k->nn : k->n;
        int64_t blocks = (work + 255) / 256;
        EXPECT(L.bx == 256 && L.by == 1 && L.gy == 1);
        EXPECT(L.gx == (unsigned)(blocks > 8192 ? 8192 : blocks));
    }
    /* float32 elementwise ops take the fast path */
    if (k->op <= HWRT_K_RELU)
        EXPECT((L.which == CU_K_EW_F32) == (k->dtype == HWRT_FLOAT32));
}

/* a driver that names error 999 and refuses every other code */
static hcu_result fake_name(hcu_result r, const char **name)
{
    if (r != 999) { *name = "REFUSED"; return HCU_ERROR_INVALID_VALUE; }
    *name = "CUDA_ERROR_FROM_THE_DRIVER";
    return HCU_SUCCESS;
}
static hcu_result fake_text(hcu_result r, const char **text)
{
    if (r != 999) { *text = "refused"; return HCU_ERROR_INVALID_VALUE; }
    *text = "what the driver says";
    return HCU_SUCCESS;
}

int main(void)
{
    TEST_CASE("launch parameters match the PTX");
    static char buf[64];
    for (int dt = 0; dt < HWRT_DTYPE_COUNT; dt++)
        for (int op = 0; op < HWRT_K_COUNT; op++) {
            hwrt_kernel k = {.op = (hwrt_kernel_op)op, .dtype = (hwrt_dtype)dt,
                             .out_dtype = (hwrt_dtype)dt, .out = buf, .a = buf, .b = buf,
                             .n = 1023, .m = 31, .k = 7, .nn = 17, .scalar = 2.5};
            char what[64];
            snprintf(what, sizeof what, "op %d dtype %s", op, hwrt_dtype_name((hwrt_dtype)dt));
            check(&k, what);
            k.n = 3000000;            /* beyond 8192 full blocks */
            k.m = 1000;
            k.nn = 4000;
            check(&k, what);
        }
    TEST_CASE("nothing to run");
    hwrt_kernel e = {.op = HWRT_K_ADD, .dtype = HWRT_FLOAT32, .n = 0};
    cu_launch L;
    int empty = 0;
    OK(cu_launch_prepare(&e, &L, &empty));
    EXPECT(empty == 1);
    e = (hwrt_kernel){.op = HWRT_K_MATMUL, .dtype = HWRT_FLOAT32, .m = 5, .k = 3, .nn = 0};
    OK(cu_launch_prepare(&e, &L, &empty));
    EXPECT(empty == 1);
    TEST_CASE("a matmul beyond the grid");
    e = (hwrt_kernel){.op = HWRT_K_MATMUL, .dtype = HWRT_FLOAT32, .m = 65535ll * 16 + 1, .k = 1, .nn = 1};
    FAILS(cu_launch_prepare(&e, &L, &empty), HWRT_ERROR_NOT_SUPPORTED, "exceeds the kernel's grid");
    /* the largest grids taken (issue 25's seed-3001 mutation run: `> 65535` made `>=`
     * refused 65535 row tiles): 65535 tiles of rows, 2^31 - 1 tiles of columns */
    TEST_CASE("a matmul of the largest grid");
    e = (hwrt_kernel){.op = HWRT_K_MATMUL, .dtype = HWRT_FLOAT32, .m = 65535ll * 16, .k = 1, .nn = 1};
    OK(cu_launch_prepare(&e, &L, &empty));
    EXPECT(L.gy == 65535 && L.gx == 1 && empty == 0);
    e = (hwrt_kernel){.op = HWRT_K_MATMUL, .dtype = HWRT_FLOAT32, .m = 1, .k = 1, .nn = 0x7fffffffll * 16};
    OK(cu_launch_prepare(&e, &L, &empty));
    EXPECT(L.gx == 0x7fffffffu && L.gy == 1);
    e.nn = 0x7fffffffll * 16 + 1;
    FAILS(cu_launch_prepare(&e, &L, &empty), HWRT_ERROR_NOT_SUPPORTED, "exceeds the kernel's grid");
    /* (issue 25's seed-3003 mutation run: `which >= 0 && which < CU_K_COUNT` made `||`
     * read the name table outside its ends) */
    TEST_CASE("a kernel index outside the table is named \"?\"");
    for (int w = 0; w < CU_K_COUNT; w++) EXPECT(strcmp(cu_kernel_name(w), "?") != 0);
    EXPECT(!strcmp(cu_kernel_name(-1), "?"));
    EXPECT(!strcmp(cu_kernel_name(CU_K_COUNT), "?"));
    EXPECT(!strcmp(cu_kernel_name(-2147483647 - 1), "?"));
    /* (issue 25's seed-3003 mutation run: cuda_api.c cu_err's `st == HWRT_ERROR_INTERNAL`
     * made `!=` called every other failure a bug in hwrt and a bug none) */
    TEST_CASE("a CUDA error's hint follows its status");
    FAILS(cu_err(NULL, HCU_ERROR_INVALID_VALUE, "cuda: a call"), HWRT_ERROR_INTERNAL,
          "cuda: a call: CUDA_ERROR_INVALID_VALUE (1); this is a bug in hwrt's CUDA backend");
    FAILS(cu_err(NULL, HCU_ERROR_OUT_OF_MEMORY, "cuda: a call"), HWRT_ERROR_OUT_OF_MEMORY,
          "; free device memory or allocate less");
    EXPECT(strstr(hwrt_last_error(), "bug") == NULL);
    FAILS(cu_err(NULL, HCU_ERROR_NOT_SUPPORTED, "cuda: a call"), HWRT_ERROR_NOT_SUPPORTED,
          "cuda: a call: CUDA_ERROR_NOT_SUPPORTED (801)");
    EXPECT(strstr(hwrt_last_error(), "bug") == NULL && strstr(hwrt_last_error(), "; ") == NULL);

    /* the driver's own name and text of an error where it gives them, hwrt's where it
     * refuses (issue 25, a sweep of cuda_api.c: in cu_describe `GetErrorName(...) !=
     * HCU_SUCCESS` made `==` dropped the driver's words and kept a refusal's) */
    TEST_CASE("a CUDA error described in the driver's words");
    hcu.GetErrorName = fake_name;
    hcu.GetErrorString = fake_text;
    char d[256];
    cu_describe((hcu_result)999, d, sizeof d);
    EXPECT(!strcmp(d, "CUDA_ERROR_FROM_THE_DRIVER (999): what the driver says"));
    cu_describe(HCU_ERROR_INVALID_VALUE, d, sizeof d);      /* both refused: hwrt's name */
    EXPECT(!strcmp(d, "CUDA_ERROR_INVALID_VALUE (1)"));
    if (strcmp(d, "CUDA_ERROR_INVALID_VALUE (1)")) fprintf(stderr, "  described: %s\n", d);
    hcu.GetErrorName = NULL;
    hcu.GetErrorString = NULL;
    return test_report();
}
