/* Case 1 (seed 4, problem 1): "the result read right after an op is all zeros / garbage".
 *
 * Work is asynchronous. Here the op runs on a side stream behind a long-running step
 * (a host function stands in for a slow kernel, so the repro is deterministic), and the
 * result is read with a raw hwrt_memcpy, which runs on the default stream and is not
 * ordered after the side stream: it copies the old contents. The sync checker
 * (HWRT_CHECK_SYNC=1; this repro turns it on itself) names the read and the op it
 * raced with. The fix: synchronize the producing stream before reading (or read with
 * hwrt_tensor_copy_to_host, which orders itself after every writer of the tensor). */
#include "ts_common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

enum { N = 8 * 128 };

static atomic_int go;
static void slow_step(void *arg) { (void)arg; while (!atomic_load(&go)) usleep(200); }

int main(void)
{
    CHECK(hwrt_set_device("sim", 0));
    CHECK(hwrt_set_check_sync(1));
    static float zeros[N], got[N];
    int64_t shape[2] = {8, 128};
    hwrt_tensor out;
    CHECK(hwrt_tensor_from_host(&out, HWRT_FLOAT32, 2, shape, zeros));
    void *dptr;
    CHECK(hwrt_tensor_data(out, &dptr));
    hwrt_stream side;
    CHECK(hwrt_stream_create(&side, 0));

    CHECK(hwrt_launch_host_func(side, slow_step, NULL));   /* a long step before the op */
    CHECK(hwrt_op_fill(out, 7.0, side));                   /* out = 7, queued, not run yet */
    CHECK(hwrt_memcpy(got, dptr, sizeof got, HWRT_MEMCPY_DEVICE_TO_HOST));   /* read NOW */
    printf("symptom: out[0] = %g right after the op (expected 7): %s\n", got[0],
           got[0] == 7.0f ? "correct (not reproduced)" : "stale data");

    char report[1024];
    CHECK(hwrt_diag_last_hazard(report, sizeof report));
    printf("hwrt: %llu hazard(s) reported by the sync checker; the last one:\n  %s\n",
           (unsigned long long)hwrt_diag_hazard_count(), report);
    int diagnosed = hwrt_diag_hazard_count() > 0 && strstr(report, "that Fill");
    if (diagnosed)
        printf("diagnosis: the host read (hwrt_memcpy) is not ordered after the Fill on the "
               "side stream: ops are queued asynchronously and the read ran first\n");

    atomic_store(&go, 1);
    uint64_t before = hwrt_diag_hazard_count();
    CHECK(hwrt_stream_synchronize(side));                 /* the fix */
    CHECK(hwrt_memcpy(got, dptr, sizeof got, HWRT_MEMCPY_DEVICE_TO_HOST));
    printf("fix: hwrt_stream_synchronize(side) before the read: out[0] = %g, new hazards: %llu\n",
           got[0], (unsigned long long)(hwrt_diag_hazard_count() - before));
    CHECK(hwrt_op_fill(out, 8.0, side));
    CHECK(hwrt_tensor_copy_to_host(out, got, sizeof got)); /* orders itself */
    printf("fix: or hwrt_tensor_copy_to_host, ordered after the tensor's writers: out[0] = %g\n",
           got[0]);
    int fixed = got[0] == 8.0f && hwrt_diag_hazard_count() == before;

    CHECK(hwrt_stream_destroy(side));
    CHECK(hwrt_tensor_release(out));
    CHECK(hwrt_shutdown());
    return diagnosed && fixed ? 0 : 1;
}
