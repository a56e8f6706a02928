/* The simulated NPU's kernels: plain C on the compute engine thread, matmul through
 * BLAS (OpenBLAS). float16/bfloat16 compute in float32, as NPU vector units do. */
#include "sim.h"
#include "../../base/half.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double load(const void *p, hwrt_dtype dt, int64_t i)
{
    switch (dt) {
    case HWRT_FLOAT32: return ((const float *)p)[i];
    case HWRT_FLOAT16: return hwi_half_to_float(((const uint16_t *)p)[i]);
    case HWRT_BFLOAT16: return hwi_bf16_to_float(((const uint16_t *)p)[i]);
    case HWRT_FLOAT64: return ((const double *)p)[i];
    case HWRT_INT8: return ((const int8_t *)p)[i];
    case HWRT_UINT8: return ((const uint8_t *)p)[i];
    case HWRT_INT32: return ((const int32_t *)p)[i];
    case HWRT_INT64: return (double)((const int64_t *)p)[i];
    case HWRT_BOOL: return ((const uint8_t *)p)[i] != 0;
    default: return 0;
    }
}

static double sat(double v, double lo, double hi)
{
    if (isnan(v)) return 0;
    v = trunc(v);
    return v < lo ? lo : v > hi ? hi : v;
}

static void store(void *p, hwrt_dtype dt, int64_t i, double v)
{
    switch (dt) {
    case HWRT_FLOAT32: ((float *)p)[i] = (float)v; break;
    case HWRT_FLOAT16: ((uint16_t *)p)[i] = hwi_float_to_half((float)v); break;
    case HWRT_BFLOAT16: ((uint16_t *)p)[i] = hwi_float_to_bf16((float)v); break;
    case HWRT_FLOAT64: ((double *)p)[i] = v; break;
    case HWRT_INT8: ((int8_t *)p)[i] = (int8_t)sat(v, -128, 127); break;
    case HWRT_UINT8: ((uint8_t *)p)[i] = (uint8_t)sat(v, 0, 255); break;
    case HWRT_INT32: ((int32_t *)p)[i] = (int32_t)sat(v, -2147483648.0, 2147483647.0); break;
    case HWRT_INT64: ((int64_t *)p)[i] = (int64_t)sat(v, -9223372036854775808.0, 9223372036854774784.0); break;
    case HWRT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    default: break;
    }
}

static int is_int(hwrt_dtype dt) { return dt >= HWRT_INT8 && dt <= HWRT_INT64; }

/* Integer add/mul wrap like C unsigned arithmetic does on hardware; done in int64. */
static void int_binary(const hwrt_kernel *k, int mul)
{
    for (int64_t i = 0; i < k->n; i++) {
        int64_t x = (int64_t)load(k->a, k->dtype, i), y = (int64_t)load(k->b, k->dtype, i);
        if (k->dtype == HWRT_INT64) {
            x = ((const int64_t *)k->a)[i];
            y = ((const int64_t *)k->b)[i];
        }
        uint64_t r = mul ? (uint64_t)x * (uint64_t)y : (uint64_t)x + (uint64_t)y;
        switch (k->dtype) {
        case HWRT_INT8: ((int8_t *)k->out)[i] = (int8_t)r; break;
        case HWRT_UINT8: ((uint8_t *)k->out)[i] = (uint8_t)r; break;
        case HWRT_INT32: ((int32_t *)k->out)[i] = (int32_t)r; break;
        default: ((int64_t *)k->out)[i] = (int64_t)r; break;
        }
    }
}

static void elementwise(const hwrt_kernel *k)
{
    const int64_t n = k->n;
    if (k->dtype == HWRT_FLOAT32) {           /* the hot path, vectorizable */
        float *o = k->out;
        const float *a = k->a, *b = k->b;
        const float s = (float)k->scalar;
        switch (k->op) {
        case HWRT_K_FILL: for (int64_t i = 0; i < n; i++) o[i] = s; return;
        case HWRT_K_ADD: for (int64_t i = 0; i < n; i++) o[i] = a[i] + b[i]; return;
        case HWRT_K_MUL: for (int64_t i = 0; i < n; i++) o[i] = a[i] * b[i]; return;
        case HWRT_K_SCALE: for (int64_t i = 0; i < n; i++) o[i] = s * a[i]; return;
        case HWRT_K_RELU: for (int64_t i = 0; i < n; i++) o[i] = a[i] > 0 ? a[i] : 0.0f; return;
        default: break;
        }
    }
    if (is_int(k->dtype) && (k->op == HWRT_K_ADD || k->op == HWRT_K_MUL)) {
        int_binary(k, k->op == HWRT_K_MUL);
        return;
    }
    /* generic path: floats compute in float32 semantics (exact in double, then rounded
     * once to float32 and once to the storage type), float64 in double, ints in double
     * (exact for these ops' int32 range) */
    const int f32_math = k->dtype == HWRT_FLOAT16 || k->dtype == HWRT_BFLOAT16 ||
                         k->dtype == HWRT_FLOAT32;
    const double alpha = f32_math ? (double)(float)k->scalar : k->scalar;
    for (int64_t i = 0; i < n; i++) {
        if (k->op == HWRT_K_CAST) {
            store(k->out, k->out_dtype, i, load(k->a, k->dtype, i));
            continue;
        }
        double x = k->op == HWRT_K_FILL ? 0 : load(k->a, k->dtype, i);
        double y = (k->op == HWRT_K_ADD || k->op == HWRT_K_MUL) ? load(k->b, k->dtype, i) : 0;
        double v;
        switch (k->op) {
        case HWRT_K_FILL: v = k->scalar; break;
        case HWRT_K_ADD: v = x + y; break;
        case HWRT_K_MUL: v = x * y; break;
        case HWRT_K_SCALE: v = alpha * x; break;
        default: v = x > 0 ? x : 0; break;       /* RELU */
        }
        if (f32_math) v = (float)v;
        store(k->out, k->dtype, i, v);
    }
}

static float *to_f32(const void *p, hwrt_dtype dt, int64_t n)
{
    float *f = malloc((size_t)n * sizeof *f);
    if (f)
        for (int64_t i = 0; i < n; i++) f[i] = (float)load(p, dt, i);
    return f;
}

static void matmul(const hwrt_kernel *k)
{
    const int m = (int)k->m, kk = (int)k->k, n = (int)k->nn;
    if (k->dtype == HWRT_FLOAT32) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, kk, 1.0f, k->a, kk, k->b, n,
                    0.0f, k->out, n);
        return;
    }
    if (k->dtype == HWRT_FLOAT64) {
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, kk, 1.0, k->a, kk, k->b, n,
                    0.0, k->out, n);
        return;
    }
    float *a = to_f32(k->a, k->dtype, k->m * k->k), *b = to_f32(k->b, k->dtype, k->k * k->nn);
    float *c = malloc((size_t)(k->m * k->nn) * sizeof *c);
    if (a && b && c) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, kk, 1.0f, a, kk, b, n, 0.0f,
                    c, n);
        for (int64_t i = 0; i < k->m * k->nn; i++) store(k->out, k->dtype, i, c[i]);
    }
    free(a); free(b); free(c);
}

/* a viewed as [outer m][reduced k][inner nn]; out is [m][nn]. Floats accumulate in double,
 * integers in int64 (exact below 2^63). */
static void sum(const hwrt_kernel *k)
{
    for (int64_t o = 0; o < k->m; o++)
        for (int64_t in = 0; in < k->nn; in++) {
            double acc = 0;
            uint64_t iacc = 0;      /* wraps like the hardware's adders, no UB */
            for (int64_t r = 0; r < k->k; r++) {
                int64_t idx = (o * k->k + r) * k->nn + in;
                if (k->dtype == HWRT_INT64) iacc += (uint64_t)((const int64_t *)k->a)[idx];
                else if (is_int(k->dtype) || k->dtype == HWRT_BOOL) iacc += (uint64_t)(int64_t)load(k->a, k->dtype, idx);
                else acc += load(k->a, k->dtype, idx);
            }
            int64_t oi = o * k->nn + in;
            if (k->dtype == HWRT_INT64) ((int64_t *)k->out)[oi] = (int64_t)iacc;
            else store(k->out, k->out_dtype, oi, (is_int(k->dtype) || k->dtype == HWRT_BOOL) ? (double)(int64_t)iacc : acc);
        }
}

void sim_kernel_run(const hwrt_kernel *k)
{
    switch (k->op) {
    case HWRT_K_MATMUL: matmul(k); break;
    case HWRT_K_SUM: sum(k); break;
    default: elementwise(k); break;
    }
}
