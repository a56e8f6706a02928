/* The profiler's pending-marker bound (src/prof/prof_markers.c MAX_PENDING, 1 << 22 per
 * stream): a stream held by a host function while 4 Mi + 96 kernels are queued behind it,
 * profiled with markers (HWRT_PROFILE_MARKERS=1) and a record cap above the bound
 * (HWRT_PROFILE_MAX_EVENTS; the default 4,000,000 never reaches it). The launches past
 * the bound keep their records but get no device time, and each is counted in
 * device_ts_missing. Issue 25's mutant at prof_markers.c:122 (`return 0` made `return 1`
 * at the bound) wrote them over the oldest pending markers, uncounted (missing 0).
 * ~8 s and 2.2 GiB on the sim backend: label large, alone. */
#include "harness.h"
#include "harness_files.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_PENDING ((long)1 << 22)

static atomic_int gate_open;
static void gate(void *a) { (void)a; while (!atomic_load(&gate_open)) usleep(100); }

int main(void)
{
    TEST_CASE("markers past the pending bound are counted missing");
    char dir[] = "/tmp/hwrt-prof-cap-XXXXXX";
    EXPECT(mkdtemp(dir) != NULL);
    setenv("HWRT_PROFILE_MARKERS", "1", 1);
    setenv("HWRT_PROFILE_MAX_EVENTS", "5000000", 1);
    OK(hwrt_set_device("sim", 0));
    int64_t shape[1] = {1};
    hwrt_tensor t;
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    OK(hwrt_profiler_start(dir));
    OK(hwrt_launch_host_func(NULL, gate, NULL));   /* marker 1: pending until the gate */
    const long extra = 96, n = MAX_PENDING - 1 + extra;
    long bad = 0;
    for (long i = 0; i < n; i++)
        bad += hwrt_op_fill(t, (double)(i & 7), NULL) != HWRT_SUCCESS;
    EXPECT(bad == 0);
    EXPECT(hwrt_stream_query(NULL) == HWRT_ERROR_NOT_READY);   /* all still pending */
    atomic_store(&gate_open, 1);
    OK(hwrt_device_synchronize());
    OK(hwrt_profiler_stop());
    hwrt_profiler_stats s;
    OK(hwrt_profiler_get_stats(&s));
    if (s.device_ts_missing != (uint64_t)extra)
        fprintf(stderr, "  device_ts_missing %llu, want %ld\n",
                (unsigned long long)s.device_ts_missing, extra);
    EXPECT(s.device_ts_missing == (uint64_t)extra);
    EXPECT(s.dropped == 0 && s.events >= (uint64_t)n + 1);
    float v = -1;
    OK(hwrt_tensor_copy_to_host(t, &v, sizeof v));
    EXPECT(v == (float)((n - 1) & 7));
    OK(hwrt_tensor_release(t));
    OK(hwrt_shutdown());
    remove_tree(dir);
    return test_report();
}
