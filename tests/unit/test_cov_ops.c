/* Matmul and sum on degenerate shapes (issue 25 item 3, tensor/ops.c): each refusal is
 * INVALID_ARGUMENT with its sentence and leaves out untouched; each accepted degenerate
 * case gives the mathematically right result:
 * - matmul: 1-D out, a or b; out of the wrong column count; out aliasing b; a dimension
 *   past 2^31-1 (tensors with zero elements, so nothing is allocated); an empty inner
 *   dimension gives zeros, an empty output is a no-op (regression: it was refused as
 *   aliasing, as was a cast between empty tensors, since both have data NULL);
 * - sum: over an empty axis gives zeros (every out element), of an empty tensor along
 *   axis -1 gives 0. */
#include "harness.h"

#include <stdint.h>
#include <string.h>

static hwrt_tensor filled(int ndim, const int64_t *shape, float v)
{
    hwrt_tensor t = NULL;
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, ndim, shape));
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    if (n) OK(hwrt_op_fill(t, v, NULL));
    return t;
}

static int all(hwrt_tensor t, int n, float want)
{
    float buf[64];
    if (hwrt_tensor_copy_to_host(t, buf, (size_t)n * sizeof(float)) != HWRT_SUCCESS) return 0;
    for (int i = 0; i < n; i++)
        if (buf[i] != want) return 0;
    return 1;
}

static void matmul(void)
{
    TEST_CASE("matmul refusals");
    const int64_t s23[2] = {2, 3}, s34[2] = {3, 4}, s24[2] = {2, 4}, s25[2] = {2, 5}, v3[1] = {3};
    hwrt_tensor a = filled(2, s23, 1), b = filled(2, s34, 2), out = filled(2, s24, 9);
    hwrt_tensor vec = filled(1, v3, 1), wrong = filled(2, s25, 9);
    FAILS(hwrt_op_matmul(out, vec, b, NULL), HWRT_ERROR_INVALID_ARGUMENT, "(got 1-D, 2-D, 2-D)");
    FAILS(hwrt_op_matmul(out, a, vec, NULL), HWRT_ERROR_INVALID_ARGUMENT, "(got 2-D, 1-D, 2-D)");
    FAILS(hwrt_op_matmul(vec, a, b, NULL), HWRT_ERROR_INVALID_ARGUMENT, "(got 2-D, 2-D, 1-D)");
    FAILS(hwrt_op_matmul(wrong, a, b, NULL), HWRT_ERROR_INVALID_ARGUMENT, "out must be [M,N]");
    hwrt_tensor sq = filled(2, s34, 1);
    const int64_t s33[2] = {3, 3};
    hwrt_tensor m33 = filled(2, s33, 1);
    FAILS(hwrt_op_matmul(sq, m33, sq, NULL), HWRT_ERROR_INVALID_ARGUMENT, "must not alias");
    EXPECT(all(out, 8, 9) && all(wrong, 10, 9) && all(sq, 12, 1));

    TEST_CASE("matmul dimensions past 2^31-1");
    const int64_t big = (int64_t)1 << 31;
    const int64_t a0[2] = {0, big}, b0[2] = {big, 0}, o0[2] = {0, 0};
    hwrt_tensor ea = filled(2, a0, 0), eb = filled(2, b0, 0), eo = filled(2, o0, 0);
    FAILS(hwrt_op_matmul(eo, ea, eb, NULL), HWRT_ERROR_INVALID_ARGUMENT,
          "dimensions above 2^31-1 are not supported by BLAS");
    const int64_t a00[2] = {0, 0}, bw[2] = {0, big}, ow[2] = {0, big};
    hwrt_tensor fa = filled(2, a00, 0), fb = filled(2, bw, 0), fo = filled(2, ow, 0);
    FAILS(hwrt_op_matmul(fo, fa, fb, NULL), HWRT_ERROR_INVALID_ARGUMENT, "above 2^31-1");

    TEST_CASE("matmul: an empty inner dimension gives zeros; an empty output is a no-op");
    const int64_t s20[2] = {2, 0}, s04[2] = {0, 4}, s03[2] = {0, 3};
    hwrt_tensor ka = filled(2, s20, 0), kb = filled(2, s04, 0);
    OK(hwrt_op_matmul(out, ka, kb, NULL));
    EXPECT(all(out, 8, 0));
    hwrt_tensor za = filled(2, s03, 0), zo = filled(2, s04, 0);
    OK(hwrt_op_matmul(zo, za, b, NULL));                 /* see empty_operands_do_not_alias */
    OK(hwrt_stream_synchronize(NULL));
    hwrt_tensor ts[] = {a, b, out, vec, wrong, sq, m33, ea, eb, eo, fa, fb, fo, ka, kb, za, zo};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) OK(hwrt_tensor_release(ts[i]));
}

/* Regression: empty tensors have no memory (data NULL), so two distinct empty tensors
 * compared equal as pointers: a matmul into an empty output was refused as aliasing, and
 * so was a cast between empty tensors of different dtypes (as "in-place"). */
static void empty_operands_do_not_alias(void)
{
    TEST_CASE("empty operands do not alias");
    const int64_t s03[2] = {0, 3}, s34[2] = {3, 4}, s04[2] = {0, 4}, z[1] = {0};
    hwrt_tensor a = filled(2, s03, 0), b = filled(2, s34, 1), out = filled(2, s04, 0);
    OK(hwrt_op_matmul(out, a, b, NULL));                 /* [0,3] x [3,4] = [0,4] */
    hwrt_tensor f = NULL, h = NULL;
    OK(hwrt_tensor_empty(&f, HWRT_FLOAT32, 1, z));
    OK(hwrt_tensor_empty(&h, HWRT_FLOAT16, 1, z));
    OK(hwrt_op_cast(h, f, NULL));
    OK(hwrt_stream_synchronize(NULL));
    const int64_t s22[2] = {2, 2};
    hwrt_tensor sq = filled(2, s22, 1);                  /* a real alias is still refused */
    FAILS(hwrt_op_matmul(sq, sq, sq, NULL), HWRT_ERROR_INVALID_ARGUMENT, "must not alias");
    hwrt_tensor ts[] = {a, b, out, f, h, sq};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) OK(hwrt_tensor_release(ts[i]));
}

static void sums(void)
{
    TEST_CASE("sum over an empty axis is zero everywhere");
    const int64_t s30[2] = {3, 0}, v3[1] = {3}, one[1] = {1}, zero[1] = {0};
    hwrt_tensor a = filled(2, s30, 0), out = filled(1, v3, 5);
    OK(hwrt_op_sum(out, a, 1, NULL));
    EXPECT(all(out, 3, 0));
    TEST_CASE("sum of an empty tensor, all axes");
    hwrt_tensor e = filled(1, zero, 0), o1 = filled(1, one, 5);
    OK(hwrt_op_sum(o1, e, -1, NULL));
    EXPECT(all(o1, 1, 0));
    OK(hwrt_tensor_release(a));
    OK(hwrt_tensor_release(out));
    OK(hwrt_tensor_release(e));
    OK(hwrt_tensor_release(o1));
}

int main(void)
{
    OK(hwrt_set_device("sim", 0));
    matmul();
    empty_operands_do_not_alias();
    sums();
    OK(hwrt_shutdown());
    return test_report();
}
