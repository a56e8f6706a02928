/* The op set as OpenCL C, built once per context (on the first kernel launch) and kept
 * with the device. Semantics follow the sim backend's kernels (sim_kernels.c) exactly:
 *  - float32 ops in float32; float16/bfloat16 stored as bits, computed in float32 and
 *    stored with round-to-nearest-even (the same bit-level conversions as base/half.h);
 *  - the generic path reads through double and stores with the same rules as the sim:
 *    float -> int truncates toward zero and saturates, NaN -> 0, bool is "!= 0";
 *  - integer add/mul wrap (done in 64-bit unsigned arithmetic);
 *  - sums accumulate in double (floats) or int64 (integers), in the reduced axis' order.
 * Every kernel takes each operand as (buffer, byte offset): hwrt pointers into a segment
 * are a buffer plus an offset. Dtype and op codes are hwrt_dtype and hwrt_kernel_op. */
#include "ocl.h"
#include "../../base/status.h"

#include <stdio.h>
#include <string.h>

static const char *const src =
"#pragma OPENCL FP_CONTRACT OFF\n"
"#define PTR(T, b, o) ((global T *)((b) + (o)))\n"
"#define CPTR(T, b, o) ((const global T *)((b) + (o)))\n"
"float h2f(ushort h) {\n"
"  uint sign = (uint)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, man = h & 0x3ffu;\n"
"  if (e == 0) {\n"
"    if (man == 0) return as_float(sign);\n"
"    float f = (float)man * 5.9604644775390625e-8f;\n"
"    return sign ? -f : f;\n"
"  }\n"
"  if (e == 31) return as_float(sign | 0x7f800000u | (man << 13));\n"
"  return as_float(sign | ((e + 112u) << 23) | (man << 13));\n"
"}\n"
"ushort f2h(float f) {\n"
"  uint x = as_uint(f), sign = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;\n"
"  if (a >= 0x7f800000u) return (ushort)(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u));\n"
"  if (a >= 0x477ff000u) return (ushort)(sign | 0x7c00u);\n"
"  if (a < 0x38800000u) {\n"
"    if (a < 0x33000000u) return (ushort)sign;\n"
"    uint e = a >> 23, m = (a & 0x7fffffu) | 0x800000u, sh = 126u - e;\n"
"    uint r = m >> sh, rem = m & ((1u << sh) - 1u), half_ = 1u << (sh - 1u);\n"
"    if (rem > half_ || (rem == half_ && (r & 1u))) r++;\n"
"    return (ushort)(sign | r);\n"
"  }\n"
"  uint r = a - 0x38000000u, o = r >> 13, rem = r & 0x1fffu;\n"
"  if (rem > 0x1000u || (rem == 0x1000u && (o & 1u))) o++;\n"
"  return (ushort)(sign | o);\n"
"}\n"
"float b2f(ushort b) { return as_float((uint)b << 16); }\n"
"ushort f2b(float f) {\n"
"  uint x = as_uint(f);\n"
"  if ((x & 0x7fffffffu) > 0x7f800000u) return (ushort)((x >> 16) | 0x40u);\n"
"  x += 0x7fffu + ((x >> 16) & 1u);\n"
"  return (ushort)(x >> 16);\n"
"}\n"
"float ldh(const global uchar *p, int dt, size_t i) {\n"
"  ushort v = CPTR(ushort, p, 0)[i];\n"
"  return dt == 1 ? h2f(v) : b2f(v);\n"
"}\n"
"kernel void add_f32(global uchar *o, ulong oo, const global uchar *a, ulong ao,\n"
"                    const global uchar *b, ulong bo) {\n"
"  size_t i = get_global_id(0);\n"
"  PTR(float, o, oo)[i] = CPTR(float, a, ao)[i] + CPTR(float, b, bo)[i];\n"
"}\n"
"kernel void mul_f32(global uchar *o, ulong oo, const global uchar *a, ulong ao,\n"
"                    const global uchar *b, ulong bo) {\n"
"  size_t i = get_global_id(0);\n"
"  PTR(float, o, oo)[i] = CPTR(float, a, ao)[i] * CPTR(float, b, bo)[i];\n"
"}\n"
"kernel void scale_f32(global uchar *o, ulong oo, const global uchar *a, ulong ao, float s) {\n"
"  size_t i = get_global_id(0);\n"
"  PTR(float, o, oo)[i] = s * CPTR(float, a, ao)[i];\n"
"}\n"
"kernel void relu_f32(global uchar *o, ulong oo, const global uchar *a, ulong ao) {\n"
"  size_t i = get_global_id(0);\n"
"  float x = CPTR(float, a, ao)[i];\n"
"  PTR(float, o, oo)[i] = x > 0.0f ? x : 0.0f;\n"
"}\n"
/* matmul_f32 (and matmul_f64 below, from the same TILED_MATMUL macro): each work item
 * computes a 4x8 block of out with float8 (double8) arithmetic. CPU OpenCL vectorizes
 * across work items only when the body has no inner loop, so the SIMD is explicit; blocks
 * at the right or bottom edge fall back to scalar code. Every element still sums its K products in order. */
"#define TILED_MATMUL(T, T8, ZERO, NAME) \\\n"
"kernel void NAME(global uchar *o, ulong oo, const global uchar *a, ulong ao,    \\\n"
"                       const global uchar *b, ulong bo, int K, int N, int M) {  \\\n"
"  size_t j0 = get_global_id(0) * 8, i0 = get_global_id(1) * 4;                  \\\n"
"  const global T *A = CPTR(T, a, ao), *B = CPTR(T, b, bo);                      \\\n"
"  global T *O = PTR(T, o, oo);                                                  \\\n"
"  if (j0 + 8 <= (size_t)N && i0 + 4 <= (size_t)M) {                             \\\n"
"    T8 c0 = ZERO, c1 = ZERO, c2 = ZERO, c3 = ZERO;                              \\\n"
"    for (int p = 0; p < K; p++) {                                               \\\n"
"      T8 r = vload8(0, B + (size_t)p * N + j0);                                 \\\n"
"      c0 += A[i0 * K + p] * r;                                                  \\\n"
"      c1 += A[(i0 + 1) * K + p] * r;                                            \\\n"
"      c2 += A[(i0 + 2) * K + p] * r;                                            \\\n"
"      c3 += A[(i0 + 3) * K + p] * r;                                            \\\n"
"    }                                                                           \\\n"
"    vstore8(c0, 0, O + i0 * N + j0);                                            \\\n"
"    vstore8(c1, 0, O + (i0 + 1) * N + j0);                                      \\\n"
"    vstore8(c2, 0, O + (i0 + 2) * N + j0);                                      \\\n"
"    vstore8(c3, 0, O + (i0 + 3) * N + j0);                                      \\\n"
"    return;                                                                     \\\n"
"  }                                                                             \\\n"
"  for (size_t i = i0; i < i0 + 4 && i < (size_t)M; i++)                         \\\n"
"    for (size_t j = j0; j < j0 + 8 && j < (size_t)N; j++) {                     \\\n"
"      T acc = ZERO;                                                             \\\n"
"      for (int p = 0; p < K; p++) acc += A[i * K + p] * B[(size_t)p * N + j];   \\\n"
"      O[i * N + j] = acc;                                                       \\\n"
"    }                                                                           \\\n"
"}\n"
"TILED_MATMUL(float, float8, 0.0f, matmul_f32)\n"
/* 8 float16 / bfloat16 values to float32 at once: the same bit-level rules as h2f/b2f */
"float8 h2f8(ushort8 h, int dt) {\n"
"  uint8 u = convert_uint8(h);\n"
"  if (dt != 1) return as_float8(u << 16);\n"
"  uint8 sign = (u & 0x8000u) << 16, e = (u >> 10) & 0x1fu, man = u & 0x3ffu;\n"
"  float8 normal = as_float8(sign | ((e + 112u) << 23) | (man << 13));\n"
"  float8 infnan = as_float8(sign | 0x7f800000u | (man << 13));\n"
"  float8 sub = as_float8(as_uint8(convert_float8(man) * 5.9604644775390625e-8f) | sign);\n"
"  return select(select(normal, infnan, e == 31u), sub, e == 0u);\n"
"}\n"
"void st8h(global ushort *o, float8 v, int dt) {\n"
"  float t[8];\n"
"  vstore8(v, 0, t);\n"
"  for (int q = 0; q < 8; q++) o[q] = dt == 1 ? f2h(t[q]) : f2b(t[q]);\n"
"}\n"
/* float16/bfloat16 matmul: 4x8 blocks like matmul_f32, operands converted to float32 on
 * load, float32 accumulation, one round-to-nearest-even store per element */
"kernel void matmul_half(global uchar *o, ulong oo, const global uchar *a, ulong ao,\n"
"                        const global uchar *b, ulong bo, int K, int N, int dt, int M) {\n"
"  size_t j0 = get_global_id(0) * 8, i0 = get_global_id(1) * 4;\n"
"  const global uchar *A = a + ao;\n"
"  const global ushort *B = CPTR(ushort, b, bo);\n"
"  global ushort *O = PTR(ushort, o, oo);\n"
"  if (j0 + 8 <= (size_t)N && i0 + 4 <= (size_t)M) {\n"
"    float8 c0 = 0.0f, c1 = 0.0f, c2 = 0.0f, c3 = 0.0f;\n"
"    for (int p = 0; p < K; p++) {\n"
"      float8 r = h2f8(vload8(0, B + (size_t)p * N + j0), dt);\n"
"      c0 += ldh(A, dt, i0 * K + p) * r;\n"
"      c1 += ldh(A, dt, (i0 + 1) * K + p) * r;\n"
"      c2 += ldh(A, dt, (i0 + 2) * K + p) * r;\n"
"      c3 += ldh(A, dt, (i0 + 3) * K + p) * r;\n"
"    }\n"
"    st8h(O + i0 * N + j0, c0, dt);\n"
"    st8h(O + (i0 + 1) * N + j0, c1, dt);\n"
"    st8h(O + (i0 + 2) * N + j0, c2, dt);\n"
"    st8h(O + (i0 + 3) * N + j0, c3, dt);\n"
"    return;\n"
"  }\n"
"  for (size_t i = i0; i < i0 + 4 && i < (size_t)M; i++)\n"
"    for (size_t j = j0; j < j0 + 8 && j < (size_t)N; j++) {\n"
"      float acc = 0.0f;\n"
"      for (int p = 0; p < K; p++)\n"
"        acc += ldh(A, dt, i * (size_t)K + p) * ldh((const global uchar *)B, dt, (size_t)p * N + j);\n"
"      O[i * N + j] = dt == 1 ? f2h(acc) : f2b(acc);\n"
"    }\n"
"}\n"
"#ifdef HWRT_FP64\n"
"#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
"double ld(const global uchar *p, int dt, size_t i) {\n"
"  switch (dt) {\n"
"  case 0: return CPTR(float, p, 0)[i];\n"
"  case 1: return h2f(CPTR(ushort, p, 0)[i]);\n"
"  case 2: return b2f(CPTR(ushort, p, 0)[i]);\n"
"  case 3: return CPTR(double, p, 0)[i];\n"
"  case 4: return CPTR(char, p, 0)[i];\n"
"  case 5: return CPTR(uchar, p, 0)[i];\n"
"  case 6: return CPTR(int, p, 0)[i];\n"
"  case 7: return (double)CPTR(long, p, 0)[i];\n"
"  case 8: return CPTR(uchar, p, 0)[i] != 0;\n"
"  }\n"
"  return 0;\n"
"}\n"
"double sat(double v, double lo, double hi) {\n"
"  if (isnan(v)) return 0;\n"
"  v = trunc(v);\n"
"  return v < lo ? lo : v > hi ? hi : v;\n"
"}\n"
"void st(global uchar *p, int dt, size_t i, double v) {\n"
"  switch (dt) {\n"
"  case 0: PTR(float, p, 0)[i] = (float)v; break;\n"
"  case 1: PTR(ushort, p, 0)[i] = f2h((float)v); break;\n"
"  case 2: PTR(ushort, p, 0)[i] = f2b((float)v); break;\n"
"  case 3: PTR(double, p, 0)[i] = v; break;\n"
"  case 4: PTR(char, p, 0)[i] = (char)sat(v, -128.0, 127.0); break;\n"
"  case 5: PTR(uchar, p, 0)[i] = (uchar)sat(v, 0.0, 255.0); break;\n"
"  case 6: PTR(int, p, 0)[i] = (int)sat(v, -2147483648.0, 2147483647.0); break;\n"
"  case 7: PTR(long, p, 0)[i] = (long)sat(v, -9223372036854775808.0, 9223372036854774784.0); break;\n"
"  case 8: PTR(uchar, p, 0)[i] = v != 0; break;\n"
"  }\n"
"}\n"
/* integer add/mul: wrap like the sim's uint64 arithmetic, truncated to the type */
"void int_binary(global uchar *o, const global uchar *a, const global uchar *b, int dt,\n"
"                size_t i, int mul) {\n"
"  ulong x = dt == 7 ? (ulong)CPTR(long, a, 0)[i] : (ulong)(long)ld(a, dt, i);\n"
"  ulong y = dt == 7 ? (ulong)CPTR(long, b, 0)[i] : (ulong)(long)ld(b, dt, i);\n"
"  ulong r = mul ? x * y : x + y;\n"
"  switch (dt) {\n"
"  case 4: PTR(char, o, 0)[i] = (char)(uchar)r; break;\n"
"  case 5: PTR(uchar, o, 0)[i] = (uchar)r; break;\n"
"  case 6: PTR(int, o, 0)[i] = (int)(uint)r; break;\n"
"  default: PTR(long, o, 0)[i] = (long)r; break;\n"
"  }\n"
"}\n"
/* op: 1 add, 2 mul, 3 scale, 4 relu (hwrt_kernel_op) */
"kernel void ew(global uchar *o, ulong oo, const global uchar *a, ulong ao,\n"
"               const global uchar *b, ulong bo, int op, int dt, double scalar) {\n"
"  size_t i = get_global_id(0);\n"
"  global uchar *O = o + oo;\n"
"  const global uchar *A = a + ao, *B = b + bo;\n"
"  if (dt >= 4 && dt <= 7 && (op == 1 || op == 2)) { int_binary(O, A, B, dt, i, op == 2); return; }\n"
"  int f32m = dt <= 2;\n"
"  double alpha = f32m ? (double)(float)scalar : scalar;\n"
"  double x = ld(A, dt, i), y = (op == 1 || op == 2) ? ld(B, dt, i) : 0.0, v;\n"
"  switch (op) {\n"
"  case 1: v = x + y; break;\n"
"  case 2: v = x * y; break;\n"
"  case 3: v = alpha * x; break;\n"
"  default: v = x > 0 ? x : 0; break;\n"
"  }\n"
"  if (f32m) v = (double)(float)v;\n"
"  st(O, dt, i, v);\n"
"}\n"
"kernel void cast(global uchar *o, ulong oo, const global uchar *a, ulong ao, int dt, int odt) {\n"
"  size_t i = get_global_id(0);\n"
"  st(o + oo, odt, i, ld(a + ao, dt, i));\n"
"}\n"
"kernel void sum(global uchar *o, ulong oo, const global uchar *a, ulong ao, int dt, int odt,\n"
"                ulong K, ulong NN) {\n"
"  size_t in = get_global_id(0), ou = get_global_id(1), oi = ou * NN + in;\n"
"  const global uchar *A = a + ao;\n"
"  global uchar *O = o + oo;\n"
"  if (dt >= 4) {\n"
"    ulong acc = 0;\n"
"    for (ulong r = 0; r < K; r++) {\n"
"      size_t idx = (ou * K + r) * NN + in;\n"
"      acc += dt == 7 ? (ulong)CPTR(long, A, 0)[idx] : (ulong)(long)ld(A, dt, idx);\n"
"    }\n"
"    if (dt == 7) PTR(long, O, 0)[oi] = (long)acc;\n"
"    else st(O, odt, oi, (double)(long)acc);\n"
"    return;\n"
"  }\n"
"  double acc = 0;\n"
"  for (ulong r = 0; r < K; r++) acc += ld(A, dt, (ou * K + r) * NN + in);\n"
"  st(O, odt, oi, acc);\n"
"}\n"
"TILED_MATMUL(double, double8, 0.0, matmul_f64)\n"
"#endif\n";

static const char *const knames[OCL_K_COUNT] = {
    [OCL_K_ADD_F32] = "add_f32", [OCL_K_MUL_F32] = "mul_f32", [OCL_K_SCALE_F32] = "scale_f32",
    [OCL_K_RELU_F32] = "relu_f32", [OCL_K_MATMUL_F32] = "matmul_f32",
    [OCL_K_MATMUL_HALF] = "matmul_half", [OCL_K_EW] = "ew", [OCL_K_CAST] = "cast",
    [OCL_K_SUM] = "sum", [OCL_K_MATMUL_F64] = "matmul_f64"};

/* Kernels that need double precision (the generic path reads through double). */
static int needs_fp64(int k) { return k >= OCL_K_EW; }

static hwrt_status build_locked(ocl_dev *d)
{
    cl_int e;
    cl_program p = ocl.CreateProgramWithSource(d->ctx, 1, (const char **)&src, NULL, &e);
    if (e != CL_SUCCESS)
        return ocl_err(e, "opencl device %d: clCreateProgramWithSource", d->ordinal);
    const char *opts = d->has_fp64 ? "-cl-std=CL1.2 -DHWRT_FP64=1" : "-cl-std=CL1.2";
    e = ocl.BuildProgram(p, 1, &d->dev, opts, NULL, NULL);
    if (e != CL_SUCCESS) {
        char log[400] = "";
        ocl.GetProgramBuildInfo(p, d->dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        ocl.ReleaseProgram(p);
        return ocl_err(e, "opencl device %d: building hwrt's kernels failed (build log: %.300s)",
                       d->ordinal, log);
    }
    for (int k = 0; k < OCL_K_COUNT; k++) {
        if (needs_fp64(k) && !d->has_fp64) continue;
        d->kernels[k] = ocl.CreateKernel(p, knames[k], &e);
        if (e != CL_SUCCESS) {
            /* released here, so forgotten: ocl_program_release must not release them again */
            d->kernels[k] = NULL;
            for (int j = 0; j < k; j++) {
                if (d->kernels[j]) ocl.ReleaseKernel(d->kernels[j]);
                d->kernels[j] = NULL;
            }
            ocl.ReleaseProgram(p);
            return ocl_err(e, "opencl device %d: clCreateKernel(%s)", d->ordinal, knames[k]);
        }
    }
    d->prog = p;
    return HWRT_SUCCESS;
}

/* Called with prog_mu held. The outcome of the first build is kept: a failed build is
 * reported again, with its sentence, rather than retried at every launch. */
hwrt_status ocl_program_get(ocl_dev *d)
{
    if (d->build_status < 0) {
        hwrt_status st = build_locked(d);
        d->build_status = (int)st;
        if (st != HWRT_SUCCESS)
            snprintf(d->build_msg, sizeof d->build_msg, "%s", hwrt_last_error());
    }
    if (d->build_status != HWRT_SUCCESS)
        return hwi_err((hwrt_status)d->build_status, "%s", d->build_msg);
    return HWRT_SUCCESS;
}

void ocl_program_release(ocl_dev *d)
{
    for (int k = 0; k < OCL_K_COUNT; k++)
        if (d->kernels[k]) ocl.ReleaseKernel(d->kernels[k]);
    if (d->prog) ocl.ReleaseProgram(d->prog);
    d->prog = NULL;
}
