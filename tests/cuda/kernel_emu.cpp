// The CUDA kernels (src/backends/cuda/kernels/hwrt_kernels.cu) run on the host, checked
// against the sim backend's kernels, every op and dtype (issue 22 item 3, without a GPU).
//
// The .cu source is compiled as C++ with CUDA's few built-ins supplied here: every thread
// of a block is a real thread (std::thread), __syncthreads a barrier across them,
// __shared__ arrays one copy per block (blocks run one after another), blockIdx/threadIdx
// per thread. Launch shapes follow cuda_launch.c's, and smaller grids too, so that the
// grid-stride loops wrap. What this cannot show: the PTX the driver JITs (ptxas checks it
// assembles), timing, or anything of the device itself.
#include <pthread.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
#include <thread>

struct dim3 { unsigned x, y, z; };
static thread_local dim3 threadIdx;
static dim3 blockIdx, blockDim, gridDim;
static pthread_barrier_t block_barrier;
#define __global__
#define __device__
#define __shared__ static
static inline void __syncthreads() { pthread_barrier_wait(&block_barrier); }
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }

#include "backends/cuda/kernels/hwrt_kernels.cu"

extern "C" void ref_kernel_run(int op, int dt, int odt, void *out, const void *a, const void *b,
                               int64_t n, int64_t m, int64_t k, int64_t nn, double scalar);

// Kernels without __syncthreads: a block's threads one after another, on this thread.
template <typename F>
static void launch(dim3 grid, dim3 block, F body)
{
    gridDim = grid;
    blockDim = block;
    for (unsigned by = 0; by < grid.y; by++)
        for (unsigned bx = 0; bx < grid.x; bx++) {
            blockIdx = dim3{bx, by, 0};
            for (unsigned t = 0; t < block.x * block.y; t++) {
                threadIdx = dim3{t % block.x, t / block.x, 0};
                body();
            }
        }
}

// hwrt_matmul synchronizes its block: every thread of it a real thread.
template <typename F>
static void launch_threads(dim3 grid, dim3 block, F body)
{
    gridDim = grid;
    blockDim = block;
    unsigned nt = block.x * block.y;
    pthread_barrier_init(&block_barrier, NULL, nt);
    for (unsigned by = 0; by < grid.y; by++)
        for (unsigned bx = 0; bx < grid.x; bx++) {
            blockIdx = dim3{bx, by, 0};
            std::vector<std::thread> ts;
            for (unsigned t = 0; t < nt; t++)
                ts.emplace_back([=] { threadIdx = dim3{t % block.x, t / block.x, 0}; body(); });
            for (auto &t : ts) t.join();
        }
    pthread_barrier_destroy(&block_barrier);
}

static const size_t dsize[9] = {4, 2, 2, 8, 1, 1, 4, 8, 1};
static const char *dname[9] = {"float32", "float16", "bfloat16", "float64", "int8", "uint8",
                               "int32", "int64", "bool"};
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next() { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

// values that reach every branch: fractions, negatives, out-of-range for casts, NaN, inf
static double pick()
{
    static const double special[] = {NAN, INFINITY, -INFINITY, 1e10, -1e20, 65520.0, 3e38,
                                     -0.0, 0.5, 2.5, -128.5, 255.5, 2147483648.0};
    uint64_t r = next();
    if (r % 8 == 0) return special[(r >> 8) % (sizeof special / sizeof special[0])];
    return ((double)(int64_t)(r >> 11) / (double)(1ull << 52)) * 600.0 - 300.0 + (double)((r >> 3) % 5);
}

static void fill_random(std::vector<unsigned char> &v, int dt, int64_t n)
{
    v.assign((size_t)n * dsize[dt] + 8, 0);
    for (int64_t i = 0; i < n; i++) {
        double x = pick();
        uint64_t r = next();
        void *p = v.data();
        switch (dt) {
        case F32: ((float *)p)[i] = (float)x; break;
        case F16: ((unsigned short *)p)[i] = float_to_half((float)x); break;
        case BF16: ((unsigned short *)p)[i] = float_to_bf16((float)x); break;
        case F64: ((double *)p)[i] = x; break;
        case I8: case U8: ((unsigned char *)p)[i] = (unsigned char)r; break;
        case I32: ((unsigned *)p)[i] = (unsigned)r; break;
        case I64: ((uint64_t *)p)[i] = r; break;
        case BOOL: ((unsigned char *)p)[i] = (unsigned char)(r % 3 == 0 ? 0 : r % 3); break;
        }
    }
}

static int checks, failed_checks;

// exact bytes, or for matmul a tolerance (the sim uses BLAS, another summation order)
static void compare(const char *what, int dt, const std::vector<unsigned char> &got,
                    const std::vector<unsigned char> &want, int64_t n, double tol)
{
    checks++;
    for (int64_t i = 0; i < n; i++) {
        double g = load(got.data(), dt, i), w = load(want.data(), dt, i);
        int same = memcmp(got.data() + i * dsize[dt], want.data() + i * dsize[dt], dsize[dt]) == 0;
        if (same || (g != g && w != w)) continue;
        if (tol > 0 && fabs(g - w) <= tol * (1 + fabs(w))) continue;
        if (++failed_checks <= 20)
            fprintf(stderr, "FAIL %s %s: element %lld is %.17g, the sim gives %.17g\n", what,
                    dname[dt], (long long)i, g, w);
        return;
    }
}

static void elementwise(int op, int dt, int64_t n, double scalar, unsigned grid)
{
    std::vector<unsigned char> a, b, got, want;
    fill_random(a, dt, n);
    fill_random(b, dt, n);
    got.assign((size_t)n * dsize[dt] + 8, 0xcd);
    want = got;
    ref_kernel_run(op, dt, dt, want.data(), a.data(), b.data(), n, 0, 0, 0, scalar);
    void *o = got.data();
    const void *pa = a.data(), *pb = b.data();
    if (dt == F32)
        launch({grid, 1, 1}, {256, 1, 1}, [&] {
            hwrt_ew_f32(op, (float *)o, (const float *)pa, (const float *)pb, n, (float)scalar);
        });
    else
        launch({grid, 1, 1}, {256, 1, 1}, [&] { hwrt_ew(op, dt, o, pa, pb, n, scalar); });
    static const char *on[] = {"fill", "add", "mul", "scale", "relu"};
    compare(on[op], dt, got, want, n, 0);
}

static void cast(int dt, int odt, int64_t n)
{
    std::vector<unsigned char> a, got, want;
    fill_random(a, dt, n);
    got.assign((size_t)n * dsize[odt] + 8, 0xcd);
    want = got;
    ref_kernel_run(K_CAST, dt, odt, want.data(), a.data(), NULL, n, 0, 0, 0, 0);
    void *o = got.data();
    const void *pa = a.data();
    launch({2, 1, 1}, {256, 1, 1}, [&] { hwrt_cast(dt, odt, o, pa, n); });
    char what[64];
    snprintf(what, sizeof what, "cast %s ->", dname[dt]);
    compare(what, odt, got, want, n, 0);
}

static void matmul(int dt, int64_t m, int64_t k, int64_t nn)
{
    std::vector<unsigned char> a, b, got, want;
    fill_random(a, dt, m * k);
    fill_random(b, dt, k * nn);
    // finite, moderate inputs: NaN/inf placement would differ only by summation order
    for (int64_t i = 0; i < m * k; i++) store(a.data(), dt, i, (double)((int64_t)(next() % 17) - 8) * 0.25);
    for (int64_t i = 0; i < k * nn; i++) store(b.data(), dt, i, (double)((int64_t)(next() % 17) - 8) * 0.5);
    got.assign((size_t)(m * nn) * dsize[dt] + 8, 0xcd);
    want = got;
    ref_kernel_run(K_MATMUL, dt, dt, want.data(), a.data(), b.data(), 0, m, k, nn, 0);
    void *o = got.data();
    const void *pa = a.data(), *pb = b.data();
    launch_threads({(unsigned)((nn + 15) / 16), (unsigned)((m + 15) / 16), 1}, {16, 16, 1},
           [&] { hwrt_matmul(dt, o, pa, pb, m, k, nn); });
    compare("matmul", dt, got, want, m * nn, dt == F64 ? 1e-12 : 1e-6);
}

static void sum(int dt, int64_t m, int64_t k, int64_t nn)
{
    int odt = dt == BOOL ? I64 : dt;
    std::vector<unsigned char> a, got, want;
    fill_random(a, dt, m * k * nn);
    got.assign((size_t)(m * nn) * dsize[odt] + 8, 0xcd);
    want = got;
    ref_kernel_run(K_SUM, dt, odt, want.data(), a.data(), NULL, 0, m, k, nn, 0);
    void *o = got.data();
    const void *pa = a.data();
    launch({3, 1, 1}, {64, 1, 1}, [&] { hwrt_sum(dt, odt, o, pa, m, k, nn); });
    compare("sum", odt, got, want, m * nn, 0);
}

int main()
{
    for (int dt = 0; dt < 9; dt++) {
        for (int op = K_FILL; op <= K_RELU; op++) {
            if (dt == BOOL && op != K_FILL) continue;
            elementwise(op, dt, 1000, op == K_FILL ? -3.75 : 1.5, 1);   // grid-stride wraps
            elementwise(op, dt, 300, op == K_FILL ? 1e10 : -0.3, 2);     // cuda_launch.c's grid
        }
        for (int odt = 0; odt < 9; odt++) cast(dt, odt, 700);
        if (dt != BOOL) {
            matmul(dt, 17, 33, 19);   // partial tiles on every side
            matmul(dt, 1, 1, 1);
        }
        sum(dt, 3, 7, 5);
        sum(dt, 1, 100, 1);
    }
    printf("%d comparisons with the sim's kernels, %d failed\n", checks, failed_checks);
    return failed_checks ? 1 : 0;
}
