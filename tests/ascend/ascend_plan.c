/* What the ascend backend decides without touching ACL, checked without CANN: which aclnn
 * op and tensor shapes a kernel becomes, the ACL data types, the cubeMathType of a matmul
 * per dtype and SoC (and the refusal of every dtype aclnnMatmul lacks), the copy kinds,
 * and how ACL error codes translate into hwrt statuses. The values are CANN's published
 * ones (acl_base_rt.h, rt_error_codes.h 8.5.0), written out here, so a change in
 * ascend_api.h that the type check cannot see (it runs only where CANN's headers are)
 * fails this test. */
#include "harness.h"
#include "backends/ascend/ascend_internal.h"

static hwrt_kernel kern(hwrt_kernel_op op, hwrt_dtype dt)
{
    hwrt_kernel k;
    memset(&k, 0, sizeof k);
    k.op = op;
    k.dtype = k.out_dtype = dt;
    k.out = (void *)0x1000;
    k.a = (void *)0x2000;
    k.b = (void *)0x3000;
    return k;
}

int main(void)
{
    TEST_CASE("ACL data types");
    const struct { hwrt_dtype dt; int acl; } dts[] = {
        {HWRT_FLOAT32, 0}, {HWRT_FLOAT16, 1}, {HWRT_BFLOAT16, 27}, {HWRT_FLOAT64, 11},
        {HWRT_INT8, 2}, {HWRT_UINT8, 4}, {HWRT_INT32, 3}, {HWRT_INT64, 9}, {HWRT_BOOL, 12},
        {HWRT_INT16, 6}, {HWRT_UINT16, 7}, {HWRT_UINT32, 8}, {HWRT_UINT64, 10},
        {HWRT_COMPLEX64, 16}, {HWRT_COMPLEX128, 17},
    };
    for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) EXPECT(asc_acl_dtype(dts[i].dt) == dts[i].acl);
    EXPECT(asc_acl_dtype((hwrt_dtype)99) == -1);

    TEST_CASE("matmul cubeMathType");
    int8_t cube = 42;
    OK(asc_matmul_cube_math(HWRT_FLOAT32, "Ascend910B3", &cube));
    EXPECT(cube == 0);                       /* A2: float32 kept */
    OK(asc_matmul_cube_math(HWRT_FLOAT32, "Ascend910_9391", &cube));
    EXPECT(cube == 0);                       /* A3 */
    OK(asc_matmul_cube_math(HWRT_FLOAT32, "Ascend910A", &cube));
    EXPECT(cube == 1);                       /* 910A refuses KEEP_DTYPE for float32 */
    OK(asc_matmul_cube_math(HWRT_FLOAT32, "Ascend310P3", &cube));
    EXPECT(cube == 1);
    OK(asc_matmul_cube_math(HWRT_FLOAT32, NULL, &cube));
    EXPECT(cube == 1);                       /* unknown SoC: what every SoC accepts */
    OK(asc_matmul_cube_math(HWRT_FLOAT16, "Ascend310P3", &cube));
    EXPECT(cube == 0);
    OK(asc_matmul_cube_math(HWRT_BFLOAT16, "Ascend910B1", &cube));
    EXPECT(cube == 0);
    const hwrt_dtype refused[] = {HWRT_FLOAT64, HWRT_INT8, HWRT_UINT8, HWRT_INT32, HWRT_INT64,
                                  HWRT_BOOL, HWRT_INT16, HWRT_COMPLEX64};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        cube = 42;
        FAILS(asc_matmul_cube_math(refused[i], "Ascend910B3", &cube), HWRT_ERROR_NOT_SUPPORTED,
              hwrt_dtype_name(refused[i]));
        EXPECT(strstr(hwrt_last_error(), "float32, float16 and bfloat16") != NULL);
        EXPECT(cube == 42);
    }

    TEST_CASE("plans");
    asc_plan p;
    hwrt_kernel k = kern(HWRT_K_MATMUL, HWRT_FLOAT16);
    k.m = 3, k.k = 5, k.nn = 7;
    OK(asc_plan_kernel(&k, "Ascend910B3", &p));
    EXPECT(p.op == ASC_OP_MATMUL && p.dt == 1 && p.out_dt == 1 && p.cube_math == 0);
    EXPECT(p.a_rank == 2 && p.a_dims[0] == 3 && p.a_dims[1] == 5);
    EXPECT(p.b_rank == 2 && p.b_dims[0] == 5 && p.b_dims[1] == 7);
    EXPECT(p.out_rank == 2 && p.out_dims[0] == 3 && p.out_dims[1] == 7);
    k.dtype = k.out_dtype = HWRT_FLOAT64;   /* the op table allows it; aclnn does not */
    FAILS(asc_plan_kernel(&k, "Ascend910B3", &p), HWRT_ERROR_NOT_SUPPORTED, "float64");
    k.dtype = k.out_dtype = HWRT_FLOAT32;
    k.k = 0;                                /* an empty inner product: zeros */
    OK(asc_plan_kernel(&k, "Ascend910B3", &p));
    EXPECT(p.op == ASC_OP_ZERO && p.out_bytes == 3 * 7 * 4);
    k.k = 5, k.m = 0;
    OK(asc_plan_kernel(&k, "Ascend910B3", &p));
    EXPECT(p.op == ASC_OP_NONE);

    k = kern(HWRT_K_SUM, HWRT_BOOL);        /* [2, 3, 4] over dim 1, bool sums to int64 */
    k.out_dtype = HWRT_INT64;
    k.m = 2, k.k = 3, k.nn = 4;
    OK(asc_plan_kernel(&k, NULL, &p));
    EXPECT(p.op == ASC_OP_REDUCE_SUM && p.dt == 12 && p.out_dt == 9 && p.reduce_dim == 1);
    EXPECT(p.a_rank == 3 && p.a_dims[0] == 2 && p.a_dims[1] == 3 && p.a_dims[2] == 4);
    EXPECT(p.out_rank == 2 && p.out_dims[0] == 2 && p.out_dims[1] == 4);
    k.k = 0;
    OK(asc_plan_kernel(&k, NULL, &p));
    EXPECT(p.op == ASC_OP_ZERO && p.out_bytes == 2 * 4 * 8);

    k = kern(HWRT_K_CAST, HWRT_FLOAT32);
    k.n = 10;
    k.out_dtype = HWRT_BFLOAT16;
    OK(asc_plan_kernel(&k, NULL, &p));
    EXPECT(p.op == ASC_OP_CAST && p.dt == 0 && p.out_dt == 27 && p.a_dims[0] == 10);
    k.out_dtype = HWRT_FLOAT32;             /* same dtype: a device copy */
    OK(asc_plan_kernel(&k, NULL, &p));
    EXPECT(p.op == ASC_OP_COPY && p.out_bytes == 40);

    const struct { hwrt_kernel_op op; int want; } ew[] = {
        {HWRT_K_FILL, ASC_OP_FILL}, {HWRT_K_ADD, ASC_OP_ADD}, {HWRT_K_MUL, ASC_OP_MUL},
        {HWRT_K_SCALE, ASC_OP_MULS}, {HWRT_K_RELU, ASC_OP_RELU},
    };
    for (size_t i = 0; i < sizeof ew / sizeof ew[0]; i++) {
        k = kern(ew[i].op, HWRT_INT32);
        k.n = 6;
        OK(asc_plan_kernel(&k, NULL, &p));
        EXPECT(p.op == ew[i].want && p.dt == 3 && p.out_dt == 3 && p.a_rank == 1 &&
               p.a_dims[0] == 6 && p.out_dims[0] == 6);
        k.n = 0;
        OK(asc_plan_kernel(&k, NULL, &p));
        EXPECT(p.op == ASC_OP_NONE);
    }

    TEST_CASE("copy kinds");
    EXPECT(asc_memcpy_kind(HWRT_MEMCPY_HOST_TO_HOST) == 0);
    EXPECT(asc_memcpy_kind(HWRT_MEMCPY_HOST_TO_DEVICE) == 1);
    EXPECT(asc_memcpy_kind(HWRT_MEMCPY_DEVICE_TO_HOST) == 2);
    EXPECT(asc_memcpy_kind(HWRT_MEMCPY_DEVICE_TO_DEVICE) == 3);
    EXPECT(asc_memcpy_kind(HWRT_MEMCPY_DEFAULT) == 4);

    TEST_CASE("ACL errors");
    const struct { int code; hwrt_status st; int sticky; } errs[] = {
        {0, HWRT_SUCCESS, 0},
        {207001, HWRT_ERROR_OUT_OF_MEMORY, 0},       /* MEMORY_ALLOCATION */
        {207018, HWRT_ERROR_OUT_OF_MEMORY, 0},       /* DEVICE_OOM */
        {200000, HWRT_ERROR_OUT_OF_MEMORY, 0},       /* BAD_ALLOC */
        {207004, HWRT_ERROR_UNAVAILABLE, 0},         /* NO_DEVICE */
        {507033, HWRT_ERROR_UNAVAILABLE, 0},         /* DEV_SETUP_ERROR */
        {207000, HWRT_ERROR_NOT_SUPPORTED, 0},       /* FEATURE_NOT_SUPPORT */
        {107003, HWRT_ERROR_INTERNAL, 0},            /* STREAM_CONTEXT: an hwrt bug */
        {107002, HWRT_ERROR_INTERNAL, 0},            /* CONTEXT_NULL */
        {100000, HWRT_ERROR_INTERNAL, 0},            /* INVALID_PARAM */
        {507015, HWRT_ERROR_DEVICE_FAULT, 1},        /* AICORE_EXCEPTION */
        {507035, HWRT_ERROR_DEVICE_FAULT, 1},        /* VECTOR_CORE_EXCEPTION */
        {507014, HWRT_ERROR_DEVICE_FAULT, 1},        /* AICORE_TIMEOUT */
        {507054, HWRT_ERROR_DEVICE_FAULT, 1},        /* HBM_MULTI_BIT_ECC */
        {507046, HWRT_ERROR_DEVICE_FAULT, 0},        /* STREAM_SYNC_TIMEOUT */
    };
    for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++) {
        EXPECT(asc_translate(errs[i].code) == errs[i].st);
        EXPECT(asc_sticky(errs[i].code) == errs[i].sticky);
        if (asc_translate(errs[i].code) != errs[i].st)
            fprintf(stderr, "ACL %d -> %s\n", errs[i].code,
                    hwrt_status_name(asc_translate(errs[i].code)));
    }
    /* floating-point overflow reports of saturation mode are results, not faults */
    EXPECT(asc_overflow(207003) && asc_overflow(207016) && asc_overflow(207017));
    EXPECT(!asc_overflow(507015) && !asc_sticky(207003));
    char desc[256];
    asc_describe(507015, desc, sizeof desc);  /* without the runtime: the name and code */
    EXPECT(strstr(desc, "ACL_ERROR_RT_AICORE_EXCEPTION (507015)") != NULL);
    return test_report();
}
