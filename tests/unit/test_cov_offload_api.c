/* The offload API's refusals test_offload does not reach (issue 25 item 3): a NULL
 * config or output, an offload_path too long or naming a file, prefetch and evict of a
 * tensor that is not offloadable or was pinned back to the device, offloading a tensor
 * that wraps DLPack-imported memory. Each refusal keeps the configuration and the
 * tensor's data as they were. */
#include "harness.h"

#include <unistd.h>

static int holds(hwrt_tensor t, const float *want, int n)
{
    float got[64];
    if (hwrt_tensor_copy_to_host(t, got, (size_t)n * sizeof *got) != HWRT_SUCCESS) return 0;
    return memcmp(got, want, (size_t)n * sizeof *got) == 0;
}

static void noop_deleter(DLManagedTensorVersioned *self) { (void)self; }

int main(void)
{
    setenv("HWRT_SIM_MEMORY", "64MB", 1);
    setenv("HWRT_SIM_OVERHEAD", "4MB", 1);
    char dir[] = "/tmp/hwrt-cov-offload-XXXXXX";
    EXPECT(mkdtemp(dir) != NULL);
    char file[600];
    snprintf(file, sizeof file, "%s/a-file", dir);
    FILE *f = fopen(file, "w");
    EXPECT(f != NULL);
    if (f) fclose(f);

    TEST_CASE("config refusals change nothing");
    hwrt_offload_config got, before;
    FAILS(hwrt_set_offload_config(NULL), HWRT_ERROR_INVALID_ARGUMENT, "cfg is NULL");
    FAILS(hwrt_get_offload_config(NULL), HWRT_ERROR_INVALID_ARGUMENT, "out is NULL");
    OK(hwrt_get_offload_config(&before));
    char longp[700];
    memset(longp, 'a', sizeof longp - 1);
    longp[0] = '/';
    longp[sizeof longp - 1] = 0;
    hwrt_offload_config bad = {.enabled = 1, .prefetch_depth = 1, .offload_path = longp};
    FAILS(hwrt_set_offload_config(&bad), HWRT_ERROR_INVALID_ARGUMENT, "is 699 bytes long; it may have at most 511");
    bad.offload_path = file;
    FAILS(hwrt_set_offload_config(&bad), HWRT_ERROR_INVALID_ARGUMENT, "is not a writable directory");
    OK(hwrt_get_offload_config(&got));
    EXPECT(got.enabled == before.enabled && got.prefetch_depth == before.prefetch_depth);
    EXPECT(got.offload_path && before.offload_path && !strcmp(got.offload_path, before.offload_path));

    OK(hwrt_set_device("sim", 0));
    hwrt_offload_config cfg = {.enabled = 1, .max_device_memory = 8u << 20,
                               .offload_cpu_size = 8u << 20, .offload_path = dir,
                               .enable_pinned_mem = 1, .prefetch_depth = 2};
    OK(hwrt_set_offload_config(&cfg));
    OK(hwrt_get_offload_config(&got));
    EXPECT(got.offload_path && !strcmp(got.offload_path, dir));

    TEST_CASE("a tensor that is not offloadable, and one pinned back");
    float v[16];
    for (int i = 0; i < 16; i++) v[i] = (float)i + 0.25f;
    int64_t shape[1] = {16};
    hwrt_tensor t;
    OK(hwrt_tensor_from_host(&t, HWRT_FLOAT32, 1, shape, v));
    hwrt_stream s;
    OK(hwrt_stream_create(&s, 0));
    FAILS(hwrt_offload_prefetch(t, s), HWRT_ERROR_INVALID_ARGUMENT, "the tensor is not offloadable; call hwrt_tensor_set_offloadable(t, 1) first");
    FAILS(hwrt_offload_evict(t), HWRT_ERROR_INVALID_ARGUMENT, "hwrt_offload_evict: the tensor is not offloadable");
    int where = -1;
    FAILS(hwrt_offload_location(t, NULL), HWRT_ERROR_INVALID_ARGUMENT, "where is NULL");
    OK(hwrt_offload_location(t, &where));
    EXPECT(where == 0);
    FAILS(hwrt_offload_stats_get(NULL), HWRT_ERROR_INVALID_ARGUMENT, "out is NULL");
    OK(hwrt_tensor_set_offloadable(t, 1));
    OK(hwrt_offload_evict(t));
    OK(hwrt_offload_location(t, &where));
    EXPECT(where == 1);
    OK(hwrt_offload_prefetch(t, s));
    OK(hwrt_stream_synchronize(s));
    OK(hwrt_tensor_set_offloadable(t, 0));       /* pinned to the device */
    FAILS(hwrt_offload_evict(t), HWRT_ERROR_INVALID_ARGUMENT, "was pinned to the device with set_offloadable(t, 0)");
    OK(hwrt_offload_location(t, &where));
    EXPECT(where == 0);
    EXPECT(holds(t, v, 16));
    FAILS(hwrt_offload_prefetch(t, (hwrt_stream)(uintptr_t)0x77), HWRT_ERROR_INVALID_HANDLE, "");

    TEST_CASE("a tensor on DLPack-imported memory cannot be offloaded");
    void *d = NULL;
    OK(hwrt_tensor_data(t, &d));
    DLManagedTensorVersioned m;
    memset(&m, 0, sizeof m);
    m.version.major = DLPACK_MAJOR_VERSION;
    m.deleter = noop_deleter;
    m.dl_tensor.data = d;
    m.dl_tensor.device = (DLDevice){kDLCPU, 0};
    m.dl_tensor.ndim = 1;
    m.dl_tensor.dtype = (DLDataType){kDLFloat, 32, 1};
    m.dl_tensor.shape = shape;
    hwrt_tensor w;
    OK(hwrt_tensor_from_dlpack(&w, &m));
    FAILS(hwrt_tensor_set_offloadable(w, 1), HWRT_ERROR_NOT_SUPPORTED, "wraps DLPack-imported memory it does not own");
    EXPECT(holds(w, v, 16));
    OK(hwrt_tensor_release(w));
    OK(hwrt_tensor_release(t));
    OK(hwrt_stream_destroy(s));
    OK(hwrt_shutdown());
    unlink(file);
    rmdir(dir);
    return test_report();
}
