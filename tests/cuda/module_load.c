/* Loading hwrt's CUDA kernels (cuda_launch.c module_get), white-box, without a GPU: the
 * driver table `hcu` filled with fakes that record what the backend asks for.
 * - a good module: cuModuleLoadData once, then cuModuleGetFunction for each of the 5
 *   kernels, in order, by name, and no more; the launch uses the function of its op; a
 *   second launch loads nothing again;
 * - a module lacking a kernel: the lookups stop at the first failure, its sentence names
 *   the kernel and the driver's error, the module is unloaded, the status is UNAVAILABLE
 *   (OUT_OF_MEMORY when the driver ran out), and the outcome is kept (no reload); only a
 *   driver refusing the PTX (INVALID_PTX, UNSUPPORTED_PTX_VERSION) gets the hint to update
 *   the driver.
 * (Issue 25's seed-2027 mutation run: `r == HCU_SUCCESS && i < CU_K_COUNT` made `||` in the
 * lookup loop went on past a failure, and past the 5 kernels; no test reached the loop.
 * Seed 3004: `r == HCU_ERROR_INVALID_PTX` made `!=` gave every other failure the hint.)
 * - a launch the driver refuses: an error naming cuLaunchKernel, the kernel and the grid;
 *   no current context: an error naming cuCtxSetCurrent; after a sticky error every
 *   launch is refused with it. */
#include "harness.h"
#include "backends/cuda/cuda_internal.h"

#include <pthread.h>

static struct hcu_mod_st { int id; } the_module;
static int loads, unloads, lookups, launches, fail_at = -1;
static hcu_result fail_with = HCU_ERROR_NOT_FOUND, load_fails_with = HCU_SUCCESS,
                  launch_fails_with = HCU_SUCCESS;
static const char *looked_up[16];
static hcu_function launched;

static hcu_result f_load(hcu_module *m, const void *image)
{
    loads++;
    EXPECT(image == hwi_cuda_kernels_ptx);
    if (load_fails_with != HCU_SUCCESS) return load_fails_with;
    *m = (hcu_module)&the_module;
    return HCU_SUCCESS;
}
static hcu_result f_unload(hcu_module m)
{
    EXPECT(m == (hcu_module)&the_module);
    unloads++;
    return HCU_SUCCESS;
}
static hcu_result f_get(hcu_function *f, hcu_module m, const char *name)
{
    EXPECT(m == (hcu_module)&the_module);
    if (lookups < 16) looked_up[lookups] = name;
    int i = lookups++;
    if (i == fail_at) return fail_with;
    *f = (hcu_function)(uintptr_t)(0x1000 + i);
    return HCU_SUCCESS;
}
static hcu_result ctx_fails_with = HCU_SUCCESS;
static hcu_result f_ctx(hcu_context c) { (void)c; return ctx_fails_with; }
static hcu_result f_launch(hcu_function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                           unsigned by, unsigned bz, unsigned shm, hcu_stream s, void **args,
                           void **extra)
{
    (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shm, (void)s, (void)args;
    (void)extra;
    launches++;
    launched = f;
    return launch_fails_with;
}

static void fresh(cu_dev *d)
{
    memset(d, 0, sizeof *d);
    pthread_mutex_init(&d->mod_mu, NULL);
    d->mod_status = -1;
    loads = unloads = lookups = launches = 0;
    memset(looked_up, 0, sizeof looked_up);
    launched = NULL;
}

static hwrt_kernel fill(void)
{
    static float out[16];
    hwrt_kernel k;
    memset(&k, 0, sizeof k);
    k.op = HWRT_K_FILL;
    k.dtype = k.out_dtype = HWRT_FLOAT32;
    k.out = out;
    k.n = 16;
    k.scalar = 1;
    return k;
}

int main(void)
{
    hcu.ModuleLoadData = f_load;
    hcu.ModuleUnload = f_unload;
    hcu.ModuleGetFunction = f_get;
    hcu.CtxSetCurrent = f_ctx;
    hcu.LaunchKernel = f_launch;
    static const char *const names[5] = {"hwrt_ew_f32", "hwrt_ew", "hwrt_cast", "hwrt_matmul",
                                         "hwrt_sum"};
    cu_dev d;
    cu_stream s = {&d, NULL, 0};
    hwrt_kernel k = fill();
    cu_launch L;
    int empty = 0;
    OK(cu_launch_prepare(&k, &L, &empty));

    TEST_CASE("a good module: each kernel looked up once, by name, in order");
    fresh(&d);
    OK(cu_kernel_launch(&s, &k));
    EXPECT(loads == 1 && lookups == 5 && unloads == 0 && launches == 1);
    for (int i = 0; i < 5 && i < lookups; i++) {
        EXPECT(looked_up[i] && !strcmp(looked_up[i], names[i]));
        EXPECT(d.fn[i] == (hcu_function)(uintptr_t)(0x1000 + i));
    }
    EXPECT(launched == d.fn[L.which] && launched != NULL);
    OK(cu_kernel_launch(&s, &k));                 /* loaded once: nothing looked up again */
    EXPECT(loads == 1 && lookups == 5 && launches == 2);

    TEST_CASE("a module lacking a kernel: the lookups stop there, named, kept");
    fresh(&d);
    fail_at = 2;                                  /* hwrt_cast */
    FAILS(cu_kernel_launch(&s, &k), HWRT_ERROR_UNAVAILABLE,
          "cuda device 0: loading hwrt's kernels failed at hwrt_cast: CUDA_ERROR_NOT_FOUND (500)");
    EXPECT(loads == 1 && lookups == 3 && unloads == 1 && launches == 0);
    EXPECT(d.mod == NULL);
    FAILS(cu_kernel_launch(&s, &k), HWRT_ERROR_UNAVAILABLE, "failed at hwrt_cast");
    EXPECT(loads == 1 && lookups == 3 && launches == 0);   /* the outcome is kept */
    EXPECT(!strstr(hwrt_last_error(), "update the NVIDIA driver"));   /* not a PTX refusal */

    TEST_CASE("the driver out of memory at the last lookup: OUT_OF_MEMORY");
    fresh(&d);
    fail_at = 4;                                  /* hwrt_sum */
    fail_with = HCU_ERROR_OUT_OF_MEMORY;
    FAILS(cu_kernel_launch(&s, &k), HWRT_ERROR_OUT_OF_MEMORY, "failed at hwrt_sum");
    EXPECT(loads == 1 && lookups == 5 && unloads == 1 && launches == 0);
    EXPECT(!strstr(hwrt_last_error(), "update the NVIDIA driver"));

    TEST_CASE("a driver refusing the PTX: the sentence says to update the driver");
    const hcu_result refusals[2] = {HCU_ERROR_INVALID_PTX, HCU_ERROR_UNSUPPORTED_PTX_VERSION};
    for (int i = 0; i < 2; i++) {
        fresh(&d);
        load_fails_with = refusals[i];
        FAILS(cu_kernel_launch(&s, &k), HWRT_ERROR_UNAVAILABLE,
              "failed at cuModuleLoadData (JIT of the embedded PTX)");
        EXPECT(strstr(hwrt_last_error(), "update the NVIDIA driver to CUDA 12.0 or newer"));
        EXPECT(loads == 1 && lookups == 0 && unloads == 0 && launches == 0);
    }

    /* issue 25, a sweep of cuda_launch.c: `if (r != HCU_SUCCESS)` after cuLaunchKernel made
     * `==` returned success for a refused launch (cu_err of a success is a success) */
    TEST_CASE("a launch the driver refuses: an error naming cuLaunchKernel and the kernel");
    fresh(&d);
    load_fails_with = HCU_SUCCESS;
    fail_at = -1;
    launch_fails_with = HCU_ERROR_INVALID_VALUE;
    FAILS(cu_kernel_launch(&s, &k), HWRT_ERROR_INTERNAL,
          "cuda device 0: cuLaunchKernel(hwrt_ew_f32, grid 1x1, block 256x1)");
    EXPECT(strstr(hwrt_last_error(), "CUDA_ERROR_INVALID_VALUE") != NULL);
    EXPECT(loads == 1 && launches == 1);
    launch_fails_with = HCU_SUCCESS;
    OK(cu_kernel_launch(&s, &k));                 /* not sticky: the next one runs */
    EXPECT(launches == 2);

    /* issue 25, a sweep of cuda_api.c: cu_enter's `r != HCU_SUCCESS` made `==` went on
     * with no current context; cu_dev_fault's `st == HWRT_SUCCESS` made `!=` hid a sticky
     * fault */
    TEST_CASE("no current context: the launch fails, naming cuCtxSetCurrent");
    ctx_fails_with = HCU_ERROR_INVALID_CONTEXT;
    FAILS(cu_kernel_launch(&s, &k), HWRT_ERROR_INTERNAL,
          "cuda device 0: cuCtxSetCurrent: CUDA_ERROR_INVALID_CONTEXT (201)");
    EXPECT(launches == 2);
    ctx_fails_with = HCU_SUCCESS;
    TEST_CASE("a sticky error: the device refuses every later launch");
    FAILS(cu_err(&d, HCU_ERROR_ILLEGAL_ADDRESS, "cuda device 0: a kernel"),
          HWRT_ERROR_DEVICE_FAULT, "CUDA_ERROR_ILLEGAL_ADDRESS (700)");
    FAILS(cu_kernel_launch(&s, &k), HWRT_ERROR_DEVICE_FAULT,
          "cuda device 0 has a sticky fault: CUDA_ERROR_ILLEGAL_ADDRESS (700)");
    EXPECT(launches == 2);
    return test_report();
}
