/* hwrt_shutdown: synchronizes and releases everything; handles from before are stale
 * afterwards (INVALID_HANDLE, never a crash), and the library starts again from scratch. */
#include "conf.h"

static void bump(void *n) { __atomic_fetch_add((int *)n, 1, __ATOMIC_SEQ_CST); }

void conf_shutdown(void)
{
    CASE("shutdown");
    hwrt_stream s;
    hwrt_event e;
    hwrt_tensor t;
    int64_t shape[1] = {64};
    static int ran;
    OK(hwrt_stream_create(&s, 0));
    OK(hwrt_event_create(&e, 0));
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    OK(hwrt_op_fill(t, 1.0, s));
    OK(hwrt_launch_host_func(s, bump, &ran));
    OK(hwrt_event_record(e, s));
    OK(hwrt_shutdown());                          /* waits for the queued work */
    EXPECT(__atomic_load_n(&ran, __ATOMIC_SEQ_CST) == 1);
    EXPECT(!strcmp(hwrt_current_backend(), ""));
    FAILS(hwrt_stream_synchronize(s), HWRT_ERROR_INVALID_HANDLE, "stream");
    FAILS(hwrt_stream_destroy(s), HWRT_ERROR_INVALID_HANDLE, "");
    FAILS(hwrt_event_query(e), HWRT_ERROR_INVALID_HANDLE, "event");
    FAILS(hwrt_event_destroy(e), HWRT_ERROR_INVALID_HANDLE, "");
    FAILS(hwrt_tensor_release(t), HWRT_ERROR_INVALID_HANDLE, "tensor");
    FAILS(hwrt_op_fill(t, 2.0, NULL), HWRT_ERROR_INVALID_HANDLE, "tensor");
    /* a second shutdown with nothing open is fine */
    OK(hwrt_shutdown());
    /* and the library starts again */
    OK(hwrt_set_device(c_backend, 0));
    EXPECT(!strcmp(hwrt_current_backend(), c_backend));
    float v[64];
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    OK(hwrt_op_fill(t, 5.0, NULL));
    OK(hwrt_tensor_copy_to_host(t, v, sizeof v));
    EXPECT(v[0] == 5.0f && v[63] == 5.0f);
    OK(hwrt_tensor_release(t));
    hwrt_memory_info m;
    OK(hwrt_get_memory_info(0, &m));
    EXPECT(m.allocated == 0);
}
