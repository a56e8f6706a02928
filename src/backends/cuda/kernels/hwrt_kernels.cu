// hwrt's op set (backend.h hwrt_kernel_op) as CUDA C, with the sim backend's semantics
// (src/backends/sim/sim_kernels.c): float16/bfloat16 compute in float32, integers
// saturate on cast (NaN -> 0), integer add/mul wrap, sums accumulate in double (floats)
// or 64-bit integers. Plain CUDA C (no headers, no intrinsics beyond the language), so
// it compiles for any sm_70+; the dtype codes are hwrt_dtype's.
//
// Compiled to PTX by scripts/gen-cuda-ptx.sh into ../cuda_kernels_ptx.c (committed).

typedef unsigned long long u64;
typedef long long i64;

enum { F32 = 0, F16 = 1, BF16 = 2, F64 = 3, I8 = 4, U8 = 5, I32 = 6, I64 = 7, BOOL = 8 };
enum { K_FILL, K_ADD, K_MUL, K_SCALE, K_RELU, K_CAST, K_MATMUL, K_SUM };

__device__ static float f32_from_bits(unsigned u) { return __int_as_float((int)u); }
__device__ static unsigned bits_from_f32(float f) { return (unsigned)__float_as_int(f); }

__device__ static float half_to_float(unsigned short h)
{
    unsigned sign = (unsigned)(h & 0x8000u) << 16;
    unsigned exp = (h >> 10) & 0x1fu;
    unsigned man = h & 0x3ffu;
    if (exp == 0) {
        if (man == 0) return f32_from_bits(sign);
        float f = (float)man * 5.9604644775390625e-8f;
        return sign ? -f : f;
    }
    if (exp == 31) return f32_from_bits(sign | 0x7f800000u | (man << 13));
    return f32_from_bits(sign | ((exp + 112u) << 23) | (man << 13));
}

__device__ static unsigned short float_to_half(float f)
{
    unsigned x = bits_from_f32(f);
    unsigned sign = (x >> 16) & 0x8000u;
    unsigned absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u)
        return (unsigned short)(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0));
    if (absx >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u);
    if (absx < 0x38800000u) {
        if (absx < 0x33000000u) return (unsigned short)sign;
        unsigned e = absx >> 23;
        unsigned m = (absx & 0x7fffffu) | 0x800000u;
        unsigned shift = 126u - e;
        unsigned r = m >> shift;
        unsigned rem = m & ((1u << shift) - 1u);
        unsigned half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1u))) r++;
        return (unsigned short)(sign | r);
    }
    unsigned r = absx - 0x38000000u;
    unsigned out = r >> 13;
    unsigned rem = r & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (out & 1u))) out++;
    return (unsigned short)(sign | out);
}

__device__ static float bf16_to_float(unsigned short b) { return f32_from_bits((unsigned)b << 16); }

__device__ static unsigned short float_to_bf16(float f)
{
    unsigned x = bits_from_f32(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (unsigned short)(x >> 16);
}

__device__ static double load(const void *p, int dt, i64 i)
{
    switch (dt) {
    case F32: return ((const float *)p)[i];
    case F16: return half_to_float(((const unsigned short *)p)[i]);
    case BF16: return bf16_to_float(((const unsigned short *)p)[i]);
    case F64: return ((const double *)p)[i];
    case I8: return ((const signed char *)p)[i];
    case U8: return ((const unsigned char *)p)[i];
    case I32: return ((const int *)p)[i];
    case I64: return (double)((const i64 *)p)[i];
    case BOOL: return ((const unsigned char *)p)[i] != 0;
    default: return 0;
    }
}

__device__ static double sat(double v, double lo, double hi)
{
    if (v != v) return 0;
    v = trunc(v);
    return v < lo ? lo : v > hi ? hi : v;
}

__device__ static void store(void *p, int dt, i64 i, double v)
{
    switch (dt) {
    case F32: ((float *)p)[i] = (float)v; break;
    case F16: ((unsigned short *)p)[i] = float_to_half((float)v); break;
    case BF16: ((unsigned short *)p)[i] = float_to_bf16((float)v); break;
    case F64: ((double *)p)[i] = v; break;
    case I8: ((signed char *)p)[i] = (signed char)sat(v, -128, 127); break;
    case U8: ((unsigned char *)p)[i] = (unsigned char)sat(v, 0, 255); break;
    case I32: ((int *)p)[i] = (int)sat(v, -2147483648.0, 2147483647.0); break;
    case I64: ((i64 *)p)[i] = (i64)sat(v, -9223372036854775808.0, 9223372036854774784.0); break;
    case BOOL: ((unsigned char *)p)[i] = v != 0; break;
    default: break;
    }
}

__device__ static i64 load_int(const void *p, int dt, i64 i)
{
    switch (dt) {
    case I8: return ((const signed char *)p)[i];
    case U8: return ((const unsigned char *)p)[i];
    case I32: return ((const int *)p)[i];
    case I64: return ((const i64 *)p)[i];
    case BOOL: return ((const unsigned char *)p)[i] != 0;
    default: return 0;
    }
}

__device__ static void store_wrap(void *p, int dt, i64 i, u64 r)
{
    switch (dt) {
    case I8: ((signed char *)p)[i] = (signed char)r; break;
    case U8: ((unsigned char *)p)[i] = (unsigned char)r; break;
    case I32: ((int *)p)[i] = (int)r; break;
    default: ((i64 *)p)[i] = (i64)r; break;
    }
}

#define GRID_STRIDE(i, n)                                                                  \
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < (n);                      \
         i += (i64)blockDim.x * gridDim.x)

// The float32 fast path: fill, add, mul, scale, relu.
extern "C" __global__ void hwrt_ew_f32(int op, float *o, const float *a, const float *b,
                                       i64 n, float s)
{
    GRID_STRIDE(i, n) {
        switch (op) {
        case K_FILL: o[i] = s; break;
        case K_ADD: o[i] = a[i] + b[i]; break;
        case K_MUL: o[i] = a[i] * b[i]; break;
        case K_SCALE: o[i] = s * a[i]; break;
        default: o[i] = a[i] > 0 ? a[i] : 0.0f; break;
        }
    }
}

// Every dtype: elementwise ops as the sim computes them.
extern "C" __global__ void hwrt_ew(int op, int dt, void *o, const void *a, const void *b,
                                   i64 n, double scalar)
{
    const int is_int = dt >= I8 && dt <= I64;
    const int f32_math = dt == F16 || dt == BF16 || dt == F32;
    const double alpha = f32_math ? (double)(float)scalar : scalar;
    GRID_STRIDE(i, n) {
        if (is_int && (op == K_ADD || op == K_MUL)) {
            u64 x = (u64)load_int(a, dt, i), y = (u64)load_int(b, dt, i);
            store_wrap(o, dt, i, op == K_MUL ? x * y : x + y);
            continue;
        }
        double x = op == K_FILL ? 0 : load(a, dt, i);
        double y = (op == K_ADD || op == K_MUL) ? load(b, dt, i) : 0;
        double v;
        switch (op) {
        case K_FILL: v = scalar; break;
        case K_ADD: v = x + y; break;
        case K_MUL: v = x * y; break;
        case K_SCALE: v = alpha * x; break;
        default: v = x > 0 ? x : 0; break;
        }
        if (f32_math) v = (float)v;
        store(o, dt, i, v);
    }
}

extern "C" __global__ void hwrt_cast(int dt, int out_dt, void *o, const void *a, i64 n)
{
    GRID_STRIDE(i, n) store(o, out_dt, i, load(a, dt, i));
}

// out[m,n] = a[m,k] b[k,n], 16x16 tiles in shared memory; float accumulation except for
// float64 (the sim uses sgemm for every dtype but float64).
#define TILE 16
extern "C" __global__ void hwrt_matmul(int dt, void *o, const void *a, const void *b, i64 m,
                                       i64 k, i64 n)
{
    __shared__ double ta[TILE][TILE];
    __shared__ double tb[TILE][TILE];
    const i64 row = (i64)blockIdx.y * TILE + threadIdx.y;
    const i64 col = (i64)blockIdx.x * TILE + threadIdx.x;
    double accd = 0;
    float accf = 0;
    for (i64 t = 0; t < k; t += TILE) {
        i64 ac = t + threadIdx.x, br = t + threadIdx.y;
        ta[threadIdx.y][threadIdx.x] = (row < m && ac < k) ? load(a, dt, row * k + ac) : 0;
        tb[threadIdx.y][threadIdx.x] = (br < k && col < n) ? load(b, dt, br * n + col) : 0;
        __syncthreads();
        for (int j = 0; j < TILE; j++) {
            if (dt == F64) accd += ta[threadIdx.y][j] * tb[j][threadIdx.x];
            else accf += (float)ta[threadIdx.y][j] * (float)tb[j][threadIdx.x];
        }
        __syncthreads();
    }
    if (row < m && col < n) store(o, dt, row * n + col, dt == F64 ? accd : (double)accf);
}

// a viewed as [m outer][k reduced][n inner]; out[m][n] of out_dt.
extern "C" __global__ void hwrt_sum(int dt, int out_dt, void *o, const void *a, i64 m, i64 k,
                                    i64 n)
{
    const int is_int = (dt >= I8 && dt <= I64) || dt == BOOL;
    GRID_STRIDE(idx, m * n) {
        i64 outer = idx / n, inner = idx % n;
        double acc = 0;
        u64 iacc = 0;
        for (i64 r = 0; r < k; r++) {
            i64 src = (outer * k + r) * n + inner;
            if (is_int) iacc += (u64)load_int(a, dt, src);
            else acc += load(a, dt, src);
        }
        if (dt == I64) ((i64 *)o)[idx] = (i64)iacc;
        else store(o, out_dt, idx, is_int ? (double)(i64)iacc : acc);
    }
}
