/* A DLPack export that outlives hwrt_shutdown must not import in the next session: its
 * memory went back with the old session and typically belongs to a new tensor by then
 * (same pool, same addresses), so importing it would alias that tensor and writes
 * through the import would change it. Handles from before the shutdown are stale too. */
#include "harness.h"

#define N 1024

static void fill(float *v, float x)
{
    for (int i = 0; i < N; i++) v[i] = x;
}

int main(void)
{
    int64_t shape[1] = {N};
    float host[N], back[N];
    TEST_CASE("session 1: export");
    OK(hwrt_set_device("sim", 0));
    hwrt_tensor a = NULL;
    fill(host, 1.0f);
    OK(hwrt_tensor_from_host(&a, HWRT_FLOAT32, 1, shape, host));
    DLManagedTensorVersioned *dl = NULL;
    OK(hwrt_tensor_to_dlpack(a, &dl));
    void *old_data = dl->dl_tensor.data;
    OK(hwrt_tensor_release(a));           /* the export keeps it */
    OK(hwrt_shutdown());

    TEST_CASE("session 2: import the stale export");
    OK(hwrt_set_device("sim", 0));
    hwrt_tensor b = NULL;
    fill(host, 2.0f);
    OK(hwrt_tensor_from_host(&b, HWRT_FLOAT32, 1, shape, host));
    void *b_data = NULL;
    OK(hwrt_tensor_data(b, &b_data));
    printf("old export data %p, new tensor data %p%s\n", old_data, b_data,
           old_data == b_data ? " (same memory)" : "");
    hwrt_tensor imp = NULL;
    FAILS(hwrt_tensor_from_dlpack(&imp, dl), HWRT_ERROR_INVALID_ARGUMENT, "hwrt_shutdown");
    EXPECT(imp == NULL);
    int consumed = imp != NULL;
    if (imp) {                            /* 583322e: the import aliases b */
        OK(hwrt_op_fill(imp, 7.0, NULL));
        hwrt_tensor_release(imp);         /* and took dl over */
    }
    OK(hwrt_tensor_copy_to_host(b, back, sizeof back));
    EXPECT(back[0] == 2.0f && back[N - 1] == 2.0f);   /* b is untouched */
    /* the handle of a is stale, not b's */
    size_t nb;
    FAILS(hwrt_tensor_nbytes(a, &nb), HWRT_ERROR_INVALID_HANDLE, "not a live tensor");
    /* the consumer may still call the deleter: harmless */
    if (!consumed) dl->deleter(dl);
    OK(hwrt_tensor_copy_to_host(b, back, sizeof back));
    EXPECT(back[0] == 2.0f);

    TEST_CASE("session 2: a fresh export imports");
    DLManagedTensorVersioned *dl2 = NULL;
    OK(hwrt_tensor_to_dlpack(b, &dl2));
    OK(hwrt_tensor_from_dlpack(&imp, dl2));   /* takes ownership of dl2 */
    OK(hwrt_tensor_release(imp));
    OK(hwrt_tensor_release(b));
    OK(hwrt_shutdown());
    return test_report();
}
