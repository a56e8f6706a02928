/* Ops: every op for float32/float16/bfloat16 (and float64, and the integer dtypes where
 * the op means something) against a host reference computed here, plus every invalid
 * combination of dtypes, shapes, axes, aliasing, handles and devices. float16/bfloat16
 * references compute in float32 and round once to the storage type (half.h). */
#include "conf.h"
#include "dtype_ref.h"   /* ref_get / ref_put */

#include <math.h>

static const hwrt_dtype floats[] = {HWRT_FLOAT32, HWRT_FLOAT16, HWRT_BFLOAT16, HWRT_FLOAT64};
static const hwrt_dtype ints[] = {HWRT_INT8, HWRT_UINT8, HWRT_INT32, HWRT_INT64};

static int is_float(hwrt_dtype dt) { return dt <= HWRT_FLOAT64; }

static double round_to(hwrt_dtype dt, double v)
{
    unsigned char tmp[8];
    ref_put(dt, tmp, 0, v);
    return ref_get(dt, tmp, 0);
}

/* What float32 arithmetic gives for the 16/32-bit float types. */
static double f32(hwrt_dtype dt, double v) { return dt == HWRT_FLOAT64 ? v : (double)(float)v; }

/* Relative precision of a dtype (one unit in the last place at 1.0). */
static double eps(hwrt_dtype dt)
{
    switch (dt) {
    case HWRT_FLOAT32: return 1.2e-7;
    case HWRT_FLOAT16: return 9.8e-4;
    case HWRT_BFLOAT16: return 7.9e-3;
    case HWRT_FLOAT64: return 2.3e-16;
    default: return 0;
    }
}

static hwrt_tensor upload(hwrt_dtype dt, int ndim, const int64_t *shape, const double *v)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    void *buf = malloc((size_t)(n ? n : 1) * 8);
    for (int64_t i = 0; i < n; i++) ref_put(dt, buf, (size_t)i, v[i]);
    hwrt_tensor t = NULL;
    OK(hwrt_tensor_from_host(&t, dt, ndim, shape, buf));
    free(buf);
    return t;
}

static hwrt_tensor empty(hwrt_dtype dt, int ndim, const int64_t *shape)
{
    hwrt_tensor t = NULL;
    OK(hwrt_tensor_empty(&t, dt, ndim, shape));
    return t;
}

static void download(hwrt_tensor t, hwrt_dtype dt, int64_t n, double *out)
{
    void *buf = malloc((size_t)(n ? n : 1) * 8);
    OK(hwrt_tensor_copy_to_host(t, buf, (size_t)n * hwrt_dtype_size(dt)));
    for (int64_t i = 0; i < n; i++) out[i] = ref_get(dt, buf, (size_t)i);
    free(buf);
}

/* One pass/fail for a whole result: |got - ref| <= rel * |ref| + abs for every element. */
static void check(const char *op, hwrt_dtype dt, const double *got, const double *ref, int64_t n,
                  double rel, double abs_tol)
{
    for (int64_t i = 0; i < n; i++) {
        if (got[i] == ref[i]) continue;                /* infinities included */
        double d = fabs(got[i] - ref[i]);
        if (!(d <= rel * fabs(ref[i]) + abs_tol)) {
            t_failed++;
            fprintf(stderr, "FAIL [ops] %s %s: element %lld is %.9g, host reference %.9g\n", op,
                    hwrt_dtype_name(dt), (long long)i, got[i], ref[i]);
            return;
        }
    }
    t_passed++;
}

static void random_values(hwrt_dtype dt, double *v, int64_t n, int small)
{
    for (int64_t i = 0; i < n; i++) {
        double x;
        if (is_float(dt)) x = conf_randf(-4.0f, 4.0f);
        else if (dt == HWRT_UINT8) x = conf_rand() % (small ? 11 : 101);
        else x = (double)(int)(conf_rand() % (small ? 21 : 101)) - (small ? 10 : 50);
        v[i] = round_to(dt, x);
    }
}

enum { EN = 257 };    /* odd length: no vector-width luck */

static void elementwise_one(hwrt_dtype dt)
{
    int64_t shape[2] = {1, EN};
    double a[EN], b[EN], got[EN], ref[EN];
    int small = !is_float(dt);
    random_values(dt, a, EN, small);
    random_values(dt, b, EN, small);
    hwrt_tensor ta = upload(dt, 2, shape, a), tb = upload(dt, 2, shape, b);
    hwrt_tensor out = empty(dt, 2, shape);
    double rel = eps(dt), tol = is_float(dt) ? 0 : 0;
    /* fill */
    double fv = is_float(dt) ? -2.71875 : 7;
    OK(hwrt_op_fill(out, fv, NULL));
    download(out, dt, EN, got);
    for (int i = 0; i < EN; i++) ref[i] = round_to(dt, fv);
    check("fill", dt, got, ref, EN, 0, 0);
    /* add, mul */
    OK(hwrt_op_add(out, ta, tb, NULL));
    download(out, dt, EN, got);
    for (int i = 0; i < EN; i++) ref[i] = round_to(dt, f32(dt, a[i] + b[i]));
    check("add", dt, got, ref, EN, rel, tol);
    OK(hwrt_op_mul(out, ta, tb, NULL));
    download(out, dt, EN, got);
    for (int i = 0; i < EN; i++) ref[i] = round_to(dt, f32(dt, a[i] * b[i]));
    check("mul", dt, got, ref, EN, rel, tol);
    /* scale */
    double alpha = is_float(dt) ? -1.75 : 3;
    OK(hwrt_op_scale(out, ta, alpha, NULL));
    download(out, dt, EN, got);
    for (int i = 0; i < EN; i++) ref[i] = round_to(dt, f32(dt, alpha * a[i]));
    check("scale", dt, got, ref, EN, rel, tol);
    /* relu */
    OK(hwrt_op_relu(out, ta, NULL));
    download(out, dt, EN, got);
    for (int i = 0; i < EN; i++) ref[i] = a[i] > 0 ? a[i] : 0;
    check("relu", dt, got, ref, EN, 0, 0);
    /* out aliasing an input: a = a + b in place */
    OK(hwrt_op_add(ta, ta, tb, NULL));
    download(ta, dt, EN, got);
    for (int i = 0; i < EN; i++) ref[i] = round_to(dt, f32(dt, a[i] + b[i]));
    check("add in place", dt, got, ref, EN, rel, tol);
    OK(hwrt_tensor_release(ta));
    OK(hwrt_tensor_release(tb));
    OK(hwrt_tensor_release(out));
}

static void elementwise(void)
{
    CASE("elementwise ops");
    for (size_t i = 0; i < 4; i++) elementwise_one(floats[i]);
    for (size_t i = 0; i < 4; i++) elementwise_one(ints[i]);
    /* bool: fill only */
    int64_t shape[1] = {5};
    hwrt_tensor t = empty(HWRT_BOOL, 1, shape);
    double got[5], ref[5] = {1, 1, 1, 1, 1};
    OK(hwrt_op_fill(t, 0.25, NULL));
    download(t, HWRT_BOOL, 5, got);
    check("fill", HWRT_BOOL, got, ref, 5, 0, 0);
    FAILS(hwrt_op_add(t, t, t, NULL), HWRT_ERROR_INVALID_ARGUMENT, "bool");
    FAILS(hwrt_op_relu(t, t, NULL), HWRT_ERROR_INVALID_ARGUMENT, "bool");
    OK(hwrt_tensor_release(t));
}

static void casts(void)
{
    CASE("cast");
    static const double vals[] = {-300.7, -128.5, -3.7, -0.5, 0, 0.5, 1, 3.7, 127.9, 255.5,
                                  300.2, 65504, 1e10, -1e10, 0.1, 1024.25};
    enum { NV = sizeof vals / sizeof vals[0] };
    const hwrt_dtype dts[] = {HWRT_FLOAT32, HWRT_FLOAT16, HWRT_BFLOAT16, HWRT_FLOAT64, HWRT_INT8,
                              HWRT_UINT8, HWRT_INT32, HWRT_INT64, HWRT_BOOL};
    int64_t shape[1] = {NV};
    for (size_t i = 0; i < 9; i++)
        for (size_t j = 0; j < 9; j++) {
            hwrt_dtype from = dts[i], to = dts[j];
            double src[NV], got[NV], ref[NV];
            for (int k = 0; k < NV; k++) src[k] = round_to(from, vals[k]);
            hwrt_tensor a = upload(from, 1, shape, src), out = empty(to, 1, shape);
            OK(hwrt_op_cast(out, a, NULL));
            download(out, to, NV, got);
            for (int k = 0; k < NV; k++) ref[k] = round_to(to, src[k]);
            char name[64];
            snprintf(name, sizeof name, "cast %s ->", hwrt_dtype_name(from));
            check(name, to, got, ref, NV, 0, 0);
            OK(hwrt_tensor_release(a));
            OK(hwrt_tensor_release(out));
        }
    /* spot checks of the rules themselves */
    double f[4] = {-3.7, 3.7, 300.0, -300.0}, got[4];
    int64_t s4[1] = {4};
    hwrt_tensor a = upload(HWRT_FLOAT32, 1, s4, f), o = empty(HWRT_INT8, 1, s4);
    OK(hwrt_op_cast(o, a, NULL));
    download(o, HWRT_INT8, 4, got);
    EXPECT(got[0] == -3 && got[1] == 3 && got[2] == 127 && got[3] == -128);
    OK(hwrt_tensor_release(o));
    OK(hwrt_op_cast(a, a, NULL));                      /* same dtype in place is a copy */
    download(a, HWRT_FLOAT32, 4, got);
    EXPECT(got[0] == (float)-3.7 && got[3] == -300.0);
    OK(hwrt_tensor_release(a));
}

static void matmul_one(hwrt_dtype dt, int64_t m, int64_t k, int64_t n)
{
    int64_t sa[2] = {m, k}, sb[2] = {k, n}, so[2] = {m, n};
    double *a = malloc(sizeof(double) * (size_t)(m * k + 1)), *b = malloc(sizeof(double) * (size_t)(k * n + 1));
    double *got = malloc(sizeof(double) * (size_t)(m * n + 1)), *ref = malloc(sizeof(double) * (size_t)(m * n + 1));
    random_values(dt, a, m * k, 0);
    random_values(dt, b, k * n, 0);
    hwrt_tensor ta = upload(dt, 2, sa, a), tb = upload(dt, 2, sb, b), to = empty(dt, 2, so);
    hwrt_status st = hwrt_op_matmul(to, ta, tb, NULL);
    if (st == HWRT_ERROR_NOT_SUPPORTED && dt == HWRT_FLOAT64 && !strcmp(c_backend, "ascend")) {
        /* aclnnMatmul has no float64 (docs/ascend.md): refused, as documented */
        EXPECT(strstr(hwrt_last_error(), "float64") != NULL);
        unsupported("matmul of float64 on %s: %s", c_backend, hwrt_last_error());
        OK(hwrt_tensor_release(ta));
        OK(hwrt_tensor_release(tb));
        OK(hwrt_tensor_release(to));
        free(a); free(b); free(got); free(ref);
        return;
    }
    OK(st);
    download(to, dt, m * n, got);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double acc = 0;
            for (int64_t x = 0; x < k; x++) acc += a[i * k + x] * b[x * n + j];
            ref[i * n + j] = round_to(dt, acc);
        }
    /* accumulation order may differ: allow K roundings of float32 (float64 for float64)
     * on terms up to 16, plus one rounding to the storage type */
    double acc_eps = dt == HWRT_FLOAT64 ? 2.3e-16 : 1.2e-7;
    check("matmul", dt, got, ref, m * n, eps(dt), (double)k * 16.0 * acc_eps * 4);
    OK(hwrt_tensor_release(ta));
    OK(hwrt_tensor_release(tb));
    OK(hwrt_tensor_release(to));
    free(a); free(b); free(got); free(ref);
}

static void matmuls(void)
{
    CASE("matmul");
    for (size_t i = 0; i < 4; i++) {
        matmul_one(floats[i], 5, 7, 3);
        matmul_one(floats[i], 33, 65, 17);
        matmul_one(floats[i], 1, 1, 1);
    }
    /* K = 0: the product is zero */
    int64_t sa[2] = {2, 0}, sb[2] = {0, 3}, so[2] = {2, 3};
    hwrt_tensor a = empty(HWRT_FLOAT32, 2, sa), b = empty(HWRT_FLOAT32, 2, sb);
    hwrt_tensor o = empty(HWRT_FLOAT32, 2, so);
    OK(hwrt_op_fill(o, 5.0, NULL));
    OK(hwrt_op_matmul(o, a, b, NULL));
    double got[6], zero[6] = {0};
    download(o, HWRT_FLOAT32, 6, got);
    check("matmul K=0", HWRT_FLOAT32, got, zero, 6, 0, 0);
    OK(hwrt_tensor_release(a));
    OK(hwrt_tensor_release(b));
    OK(hwrt_tensor_release(o));
}

static void sum_one(hwrt_dtype dt)
{
    int64_t shape[3] = {3, 4, 5};
    double v[60], got[60], ref[60];
    random_values(dt, v, 60, 1);
    if (!is_float(dt))                     /* sums of 60 stay within int8/uint8 */
        for (int i = 0; i < 60; i++) v[i] = (double)(conf_rand() % 5) - (dt == HWRT_UINT8 ? 0 : 2);
    if (dt == HWRT_BOOL)
        for (int i = 0; i < 60; i++) v[i] = conf_rand() & 1;
    hwrt_tensor a = upload(dt, 3, shape, v);
    hwrt_dtype odt = dt == HWRT_BOOL ? HWRT_INT64 : dt;
    double rel = is_float(dt) ? eps(dt) : 0, abs_tol = is_float(dt) ? 60 * 4 * 1.2e-7 : 0;
    /* everything */
    int64_t one[1] = {1};
    hwrt_tensor o = empty(odt, 1, one);
    OK(hwrt_op_sum(o, a, -1, NULL));
    download(o, odt, 1, got);
    double total = 0;
    for (int i = 0; i < 60; i++) total += v[i];
    ref[0] = round_to(odt, total);
    check("sum all", dt, got, ref, 1, rel, abs_tol);
    OK(hwrt_tensor_release(o));
    /* each axis */
    for (int axis = 0; axis < 3; axis++) {
        int64_t os[2];
        for (int i = 0, j = 0; i < 3; i++)
            if (i != axis) os[j++] = shape[i];
        o = empty(odt, 2, os);
        OK(hwrt_op_sum(o, a, axis, NULL));
        int64_t on = os[0] * os[1];
        download(o, odt, on, got);
        for (int64_t i = 0; i < on; i++) ref[i] = 0;
        for (int x = 0; x < 3; x++)
            for (int y = 0; y < 4; y++)
                for (int z = 0; z < 5; z++) {
                    int idx[3] = {x, y, z}, oi[2];
                    for (int i = 0, j = 0; i < 3; i++)
                        if (i != axis) oi[j++] = idx[i];
                    ref[oi[0] * os[1] + oi[1]] += v[(x * 4 + y) * 5 + z];
                }
        for (int64_t i = 0; i < on; i++) ref[i] = round_to(odt, ref[i]);
        char name[32];
        snprintf(name, sizeof name, "sum axis %d", axis);
        check(name, dt, got, ref, on, rel, abs_tol);
        OK(hwrt_tensor_release(o));
    }
    OK(hwrt_tensor_release(a));
}

static void sums(void)
{
    CASE("sum");
    for (size_t i = 0; i < 4; i++) sum_one(floats[i]);
    for (size_t i = 0; i < 4; i++) sum_one(ints[i]);
    sum_one(HWRT_BOOL);
}

static void op_errors(void)
{
    CASE("op errors");
    int64_t s23[2] = {2, 3}, s32[2] = {3, 2}, s6[1] = {6}, s22[2] = {2, 2};
    hwrt_tensor a = empty(HWRT_FLOAT32, 2, s23), b = empty(HWRT_FLOAT32, 2, s32);
    hwrt_tensor c = empty(HWRT_FLOAT16, 2, s23), flat = empty(HWRT_FLOAT32, 1, s6);
    hwrt_tensor i32 = empty(HWRT_INT32, 2, s23), i32b = empty(HWRT_INT32, 2, s32);
    hwrt_tensor o22 = empty(HWRT_FLOAT32, 2, s22), i22 = empty(HWRT_INT32, 2, s22);
    OK(hwrt_op_fill(a, 1, NULL));
    /* shapes: the sentence names both */
    FAILS(hwrt_op_add(a, a, b, NULL), HWRT_ERROR_INVALID_ARGUMENT, "float32[2,3] vs float32[3,2]");
    FAILS(hwrt_op_mul(flat, a, a, NULL), HWRT_ERROR_INVALID_ARGUMENT, "[6]");
    FAILS(hwrt_op_relu(b, a, NULL), HWRT_ERROR_INVALID_ARGUMENT, "[3,2]");
    FAILS(hwrt_op_scale(flat, a, 2.0, NULL), HWRT_ERROR_INVALID_ARGUMENT, "shapes differ");
    FAILS(hwrt_op_cast(flat, c, NULL), HWRT_ERROR_INVALID_ARGUMENT, "shapes differ");
    /* dtypes */
    FAILS(hwrt_op_add(a, a, c, NULL), HWRT_ERROR_INVALID_ARGUMENT, "float16");
    FAILS(hwrt_op_relu(c, a, NULL), HWRT_ERROR_INVALID_ARGUMENT, "dtypes differ");
    FAILS(hwrt_op_matmul(i22, i32, i32b, NULL), HWRT_ERROR_INVALID_ARGUMENT, "int32");
    FAILS(hwrt_op_matmul(o22, a, i32b, NULL), HWRT_ERROR_INVALID_ARGUMENT, "dtypes differ");
    /* matmul shapes and aliasing */
    FAILS(hwrt_op_matmul(o22, a, a, NULL), HWRT_ERROR_INVALID_ARGUMENT, "inner");
    FAILS(hwrt_op_matmul(o22, flat, b, NULL), HWRT_ERROR_INVALID_ARGUMENT, "2-D");
    FAILS(hwrt_op_matmul(a, a, b, NULL), HWRT_ERROR_INVALID_ARGUMENT, "[M,N]");
    hwrt_tensor sq = empty(HWRT_FLOAT32, 2, s22);
    FAILS(hwrt_op_matmul(sq, sq, o22, NULL), HWRT_ERROR_INVALID_ARGUMENT, "alias");
    /* sum axes and output dtype */
    int64_t one[1] = {1}, s3[1] = {3};
    hwrt_tensor o1 = empty(HWRT_FLOAT32, 1, one), o3 = empty(HWRT_FLOAT32, 1, s3);
    hwrt_tensor o1i = empty(HWRT_INT32, 1, one);
    FAILS(hwrt_op_sum(o3, a, 2, NULL), HWRT_ERROR_INVALID_ARGUMENT, "axis 2");
    FAILS(hwrt_op_sum(o3, a, -2, NULL), HWRT_ERROR_INVALID_ARGUMENT, "axis -2");
    FAILS(hwrt_op_sum(o3, a, -1, NULL), HWRT_ERROR_INVALID_ARGUMENT, "one element");
    FAILS(hwrt_op_sum(o1i, a, -1, NULL), HWRT_ERROR_INVALID_ARGUMENT, "float32");
    FAILS(hwrt_op_sum(o1, a, 0, NULL), HWRT_ERROR_INVALID_ARGUMENT, "summed axis");
    OK(hwrt_op_sum(o3, a, 0, NULL));                     /* [2,3] over axis 0 is [3] */
    /* stale handles and streams */
    hwrt_tensor dead = empty(HWRT_FLOAT32, 2, s23);
    OK(hwrt_tensor_release(dead));
    FAILS(hwrt_op_fill(dead, 1, NULL), HWRT_ERROR_INVALID_HANDLE, "tensor");
    FAILS(hwrt_op_add(a, dead, a, NULL), HWRT_ERROR_INVALID_HANDLE, "tensor");
    FAILS(hwrt_op_add(a, a, dead, NULL), HWRT_ERROR_INVALID_HANDLE, "tensor");
    FAILS(hwrt_op_matmul(o22, dead, b, NULL), HWRT_ERROR_INVALID_HANDLE, "tensor");
    FAILS(hwrt_op_sum(o1, dead, -1, NULL), HWRT_ERROR_INVALID_HANDLE, "tensor");
    FAILS(hwrt_op_cast(dead, a, NULL), HWRT_ERROR_INVALID_HANDLE, "tensor");
    FAILS(hwrt_op_scale(a, NULL, 1, NULL), HWRT_ERROR_INVALID_HANDLE, "tensor");
    FAILS(hwrt_op_relu(NULL, a, NULL), HWRT_ERROR_INVALID_HANDLE, "tensor");
    hwrt_stream s;
    OK(hwrt_stream_create(&s, 0));
    OK(hwrt_stream_destroy(s));
    FAILS(hwrt_op_fill(a, 1, s), HWRT_ERROR_INVALID_HANDLE, "stream");
    /* the failed calls changed nothing */
    double got[6], ones[6] = {1, 1, 1, 1, 1, 1};
    download(a, HWRT_FLOAT32, 6, got);
    check("after errors", HWRT_FLOAT32, got, ones, 6, 0, 0);
    hwrt_tensor all[] = {a, b, c, flat, i32, i32b, o22, i22, sq, o1, o3, o1i};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) OK(hwrt_tensor_release(all[i]));
}

/* int16, uint16, uint32, uint64, complex64, complex128 are carried (created, copied,
 * shared) but no backend has kernels for them: every op refuses them, naming the op, the
 * operand, the dtype and the dtypes ops run on, and leaves the data as it was. */
static void ops_without_kernels(void)
{
    CASE("ops on dtypes without kernels");
    const hwrt_dtype dts[] = {HWRT_INT16, HWRT_UINT16, HWRT_UINT32, HWRT_UINT64,
                              HWRT_COMPLEX64, HWRT_COMPLEX128};
    int64_t s22[2] = {2, 2}, one[1] = {1};
    hwrt_tensor f = empty(HWRT_FLOAT32, 2, s22), f1 = empty(HWRT_FLOAT32, 1, one);
    OK(hwrt_op_fill(f, 1, NULL));
    for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
        hwrt_dtype dt = dts[i];
        const char *name = hwrt_dtype_name(dt);
        unsigned char src[4 * 16], got[4 * 16];
        size_t nb = 4 * hwrt_dtype_size(dt);
        for (size_t k = 0; k < nb; k++) src[k] = (unsigned char)(k * 29 + 3);
        hwrt_tensor t, u = empty(dt, 2, s22), o1 = empty(dt, 1, one);
        OK(hwrt_tensor_from_host(&t, dt, 2, s22, src));
        FAILS(hwrt_op_fill(t, 1, NULL), HWRT_ERROR_NOT_SUPPORTED, "hwrt_op_fill: the output");
        FAILS(hwrt_op_add(u, t, t, NULL), HWRT_ERROR_NOT_SUPPORTED, name);
        FAILS(hwrt_op_add(u, t, t, NULL), HWRT_ERROR_NOT_SUPPORTED, "hwrt_op_add");
        FAILS(hwrt_op_add(u, t, t, NULL), HWRT_ERROR_NOT_SUPPORTED, "ops run on float32");
        FAILS(hwrt_op_mul(u, t, t, NULL), HWRT_ERROR_NOT_SUPPORTED, name);
        FAILS(hwrt_op_scale(u, t, 2, NULL), HWRT_ERROR_NOT_SUPPORTED, name);
        FAILS(hwrt_op_relu(u, t, NULL), HWRT_ERROR_NOT_SUPPORTED, name);
        FAILS(hwrt_op_cast(f, t, NULL), HWRT_ERROR_NOT_SUPPORTED, "input a");
        FAILS(hwrt_op_cast(t, f, NULL), HWRT_ERROR_NOT_SUPPORTED, "the output");
        FAILS(hwrt_op_matmul(u, t, t, NULL), HWRT_ERROR_NOT_SUPPORTED, name);
        FAILS(hwrt_op_sum(o1, t, -1, NULL), HWRT_ERROR_NOT_SUPPORTED, name);
        FAILS(hwrt_op_sum(f1, t, -1, NULL), HWRT_ERROR_NOT_SUPPORTED, "input a");
        memset(got, 0, sizeof got);
        OK(hwrt_tensor_copy_to_host(t, got, nb));
        EXPECT(!memcmp(src, got, nb));                  /* nothing was written */
        OK(hwrt_op_cast(u, t, NULL));                   /* the same dtype: a byte copy */
        memset(got, 0, sizeof got);
        OK(hwrt_tensor_copy_to_host(u, got, nb));
        EXPECT(!memcmp(src, got, nb));
        OK(hwrt_op_cast(t, t, NULL));                   /* in place: nothing to do */
        OK(hwrt_tensor_release(t));
        OK(hwrt_tensor_release(u));
        OK(hwrt_tensor_release(o1));
    }
    OK(hwrt_tensor_release(f));
    OK(hwrt_tensor_release(f1));
    /* a same-dtype cast copies the bytes: int64 values beyond 2^53 survive it (they went
     * through double before) */
    int64_t big[2] = {(INT64_C(1) << 62) + 1, -(INT64_C(1) << 60) - 3}, back[2] = {0, 0};
    int64_t two[1] = {2};
    hwrt_tensor x, y = empty(HWRT_INT64, 1, two);
    OK(hwrt_tensor_from_host(&x, HWRT_INT64, 1, two, big));
    OK(hwrt_op_cast(y, x, NULL));
    OK(hwrt_tensor_copy_to_host(y, back, sizeof back));
    EXPECT(back[0] == big[0] && back[1] == big[1]);
    OK(hwrt_tensor_release(x));
    OK(hwrt_tensor_release(y));
}

static void ops_on_streams(void)
{
    CASE("ops across streams and devices");
    int64_t shape[1] = {1000};
    hwrt_tensor x = empty(HWRT_FLOAT32, 1, shape), y = empty(HWRT_FLOAT32, 1, shape);
    hwrt_stream s1, s2;
    OK(hwrt_stream_create(&s1, 0));
    OK(hwrt_stream_create(&s2, 0));
    /* a chain on s1, a reader on s2 after an event: no host sync in between */
    hwrt_event e;
    OK(hwrt_event_create(&e, HWRT_EVENT_DISABLE_TIMING));
    OK(hwrt_op_fill(x, 2.0, s1));
    OK(hwrt_op_scale(x, x, 3.0, s1));
    OK(hwrt_event_record(e, s1));
    OK(hwrt_stream_wait_event(s2, e));
    OK(hwrt_op_add(y, x, x, s2));
    double got[1000], ref[1000];
    download(y, HWRT_FLOAT32, 1000, got);         /* ordered after s2, its writer */
    for (int i = 0; i < 1000; i++) ref[i] = 12.0;
    check("fill/scale on s1, add on s2", HWRT_FLOAT32, got, ref, 1000, 0, 0);
    OK(hwrt_event_destroy(e));
    OK(hwrt_stream_destroy(s1));
    OK(hwrt_stream_destroy(s2));
    if (c_ndev >= 2) {
        OK(hwrt_set_device(c_backend, 1));
        hwrt_stream s1d;
        OK(hwrt_stream_create(&s1d, 0));
        hwrt_tensor z = empty(HWRT_FLOAT32, 1, shape);
        FAILS(hwrt_op_add(z, x, x, NULL), HWRT_ERROR_INVALID_ARGUMENT, "device 0");
        FAILS(hwrt_op_fill(x, 1.0, s1d), HWRT_ERROR_INVALID_ARGUMENT, "device 1");
        OK(hwrt_op_fill(z, 4.0, s1d));
        OK(hwrt_set_device(c_backend, 0));
        download(z, HWRT_FLOAT32, 1000, got);     /* reading device 1 from device 0 is fine */
        for (int i = 0; i < 1000; i++) ref[i] = 4.0;
        check("fill on device 1", HWRT_FLOAT32, got, ref, 1000, 0, 0);
        OK(hwrt_tensor_release(z));
        OK(hwrt_stream_destroy(s1d));
    } else {
        unsupported("ops on a second device need 2 devices, backend %s has %d", c_backend, c_ndev);
    }
    OK(hwrt_tensor_release(x));
    OK(hwrt_tensor_release(y));
}

void conf_ops(void)
{
    elementwise();
    casts();
    matmuls();
    sums();
    op_errors();
    ops_without_kernels();
    ops_on_streams();
}
