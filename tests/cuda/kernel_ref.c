/* The reference side of test_cuda_kernels_emulated: the sim backend's kernels
 * (sim_kernel_run), called with a plain-C signature the C++ emulator can declare. */
#include "backends/sim/sim.h"

void ref_kernel_run(int op, int dt, int odt, void *out, const void *a, const void *b, int64_t n,
                    int64_t m, int64_t k, int64_t nn, double scalar);

void ref_kernel_run(int op, int dt, int odt, void *out, const void *a, const void *b, int64_t n,
                    int64_t m, int64_t k, int64_t nn, double scalar)
{
    hwrt_kernel kk = {.op = (hwrt_kernel_op)op, .dtype = (hwrt_dtype)dt, .out_dtype = (hwrt_dtype)odt,
                      .out = out, .a = a, .b = b, .n = n, .m = m, .k = k, .nn = nn,
                      .scalar = scalar};
    sim_kernel_run(&kk);
}
