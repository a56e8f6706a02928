/* Case 5 (seed 4, problem 5): "asnumpy() inside a GRAPH-mode construct raises".
 *
 * In hwrt a captured graph is the GRAPH-mode analogue: ops queued on a capturing stream
 * are recorded, not run, so a host read inside the captured region has nothing to read
 * and would run once at capture, not at each replay. hwrt refuses it with
 * HWRT_ERROR_NOT_PERMITTED and a sentence naming the call; the capture goes on. The fix:
 * move the read outside the captured region, after a replay. */
#include "ts_common.h"

enum { N = 8 * 128 };

int main(void)
{
    CHECK(hwrt_set_device("sim", 0));
    static float x[N], got[N];
    for (int i = 0; i < N; i++) x[i] = (float)(i % 9) - 4;
    int64_t shape[2] = {8, 128};
    hwrt_tensor in, out;
    CHECK(hwrt_tensor_from_host(&in, HWRT_FLOAT32, 2, shape, x));
    CHECK(hwrt_tensor_empty(&out, HWRT_FLOAT32, 2, shape));
    hwrt_stream s;
    CHECK(hwrt_stream_create(&s, 0));

    /* the "construct": relu then scale, with a host read in the middle (the mistake) */
    CHECK(hwrt_stream_begin_capture(s));
    CHECK(hwrt_op_relu(out, in, s));
    hwrt_status st = hwrt_tensor_copy_to_host(out, got, sizeof got);
    printf("symptom: hwrt_tensor_copy_to_host inside the captured region returned %s\n",
           hwrt_status_name(st));
    printf("hwrt: %s\n", hwrt_last_error());
    int diagnosed = st == HWRT_ERROR_NOT_PERMITTED;
    CHECK(hwrt_op_scale(out, out, 2.0, s));
    hwrt_graph g;
    CHECK(hwrt_stream_end_capture(s, &g));
    if (diagnosed)
        printf("diagnosis: a host read inside a captured graph is refused (the capture went on "
               "and the stream stays usable)\n");

    CHECK(hwrt_graph_launch(g, s));                        /* the fix: replay, then read */
    CHECK(hwrt_tensor_copy_to_host(out, got, sizeof got));
    int ok = 1;
    for (int i = 0; i < N; i++) ok &= got[i] == 2.0f * (x[i] > 0 ? x[i] : 0);
    printf("fix: read after hwrt_graph_launch, outside the captured region: %s\n",
           ok ? "correct result" : "WRONG result");
    CHECK(hwrt_graph_destroy(g));
    CHECK(hwrt_stream_destroy(s));
    CHECK(hwrt_tensor_release(in));
    CHECK(hwrt_tensor_release(out));
    CHECK(hwrt_shutdown());
    return diagnosed && ok ? 0 : 1;
}
