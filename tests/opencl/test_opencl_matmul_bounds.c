/* The OpenCL matmul kernels write out[M, N] and nothing after it. The output is made a
 * whole number of the pool's 512-byte blocks, so its last row ends where the next block,
 * a guard tensor allocated right after it, begins; M is not a multiple of the kernels' 4
 * rows, so the last rows take the edge path. Every dtype's kernel must leave the guard as
 * it was and compute out exactly (small integers and halves: exact in every float type).
 * Issue 25's seeded mutation run: the half kernel's edge loop `i < (size_t)M` made `<=`
 * (src/backends/opencl/ocl_program.c) wrote row M into the next tensor, unnoticed. */
#include "harness.h"
#include "dtype_ref.h"

#include <math.h>
#include <stdint.h>

static void one(hwrt_dtype dt, size_t esize, int64_t M, int64_t K)
{
    const int64_t N = (int64_t)(512 / esize);        /* one row = one 512-byte block */
    char name[96];
    snprintf(name, sizeof name, "matmul %s %lldx%lldx%lld leaves the next tensor alone",
             hwrt_dtype_name(dt), (long long)M, (long long)K, (long long)N);
    TEST_CASE(name);
    int64_t sa[2] = {M, K}, sb[2] = {K, N}, so[2] = {M, N}, sg[1] = {N};
    void *ha = calloc((size_t)(M * K), 8), *hb = calloc((size_t)(K * N), 8);
    for (int64_t i = 0; i < M * K; i++) ref_put(dt, ha, i, (double)((i * 5) % 9 - 4) * 0.5);
    for (int64_t i = 0; i < K * N; i++) ref_put(dt, hb, i, (double)((i * 3) % 7 - 3) * 0.25);
    hwrt_tensor a = NULL, b = NULL, o = NULL, g = NULL;
    /* out and guard first, from a fresh segment: the earlier cases' blocks went back */
    OK(hwrt_device_synchronize());
    OK(hwrt_empty_cache(0));
    OK(hwrt_tensor_empty(&o, dt, 2, so));
    OK(hwrt_tensor_empty(&g, dt, 1, sg));
    OK(hwrt_tensor_from_host(&a, dt, 2, sa, ha));
    OK(hwrt_tensor_from_host(&b, dt, 2, sb, hb));
    void *po = NULL, *pg = NULL;
    OK(hwrt_tensor_data(o, &po));
    OK(hwrt_tensor_data(g, &pg));
    /* the premise: the guard is the block right after out */
    EXPECT((char *)pg == (char *)po + (size_t)(M * N) * esize);
    OK(hwrt_op_fill(g, 7.0, NULL));
    OK(hwrt_op_matmul(o, a, b, NULL));
    unsigned char *got = calloc((size_t)(M * N), esize), *guard = calloc((size_t)N, esize);
    OK(hwrt_tensor_copy_to_host(o, got, (size_t)(M * N) * esize));
    OK(hwrt_tensor_copy_to_host(g, guard, (size_t)N * esize));
    int exact = 1, kept = 1;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double want = 0;
            for (int64_t p = 0; p < K; p++)
                want += ref_get(dt, ha, i * K + p) * ref_get(dt, hb, p * N + j);
            exact &= ref_get(dt, got, i * N + j) == want;
        }
    for (int64_t j = 0; j < N; j++) kept &= ref_get(dt, guard, j) == 7.0;
    EXPECT(exact);
    EXPECT(kept);
    free(ha);
    free(hb);
    free(got);
    free(guard);
    hwrt_tensor_release(a);
    hwrt_tensor_release(b);
    hwrt_tensor_release(o);
    hwrt_tensor_release(g);
}

int main(void)
{
    OK(hwrt_set_device("opencl", 0));
    const hwrt_dtype dts[] = {HWRT_FLOAT32, HWRT_FLOAT16, HWRT_BFLOAT16, HWRT_FLOAT64};
    const size_t es[] = {4, 2, 2, 8};
    const int64_t ms[] = {1, 3, 5};
    for (int d = 0; d < 4; d++)
        for (int m = 0; m < 3; m++) one(dts[d], es[d], ms[m], 3);
    OK(hwrt_shutdown());
    return test_report();
}
