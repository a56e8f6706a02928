/* Case 2 (seed 4, problem 2): "after deleting tensors the device monitor shows no drop".
 *
 * Released blocks go back to hwrt's caching pool, not to the device: allocated drops,
 * reserved (and the device-wide used a monitor shows) does not, so the next allocation
 * is fast. hwrt_empty_cache hands the cached segments back to the device. This repro
 * prints the figures before, after the release and after hwrt_empty_cache, from
 * hwrt_get_memory_info (this process) and hwrt_smi_query (the device-wide view that
 * hwrt-smi prints). */
#include "ts_common.h"

enum { NT = 4 };
#define ELEMS ((int64_t)4 * 1024 * 1024)      /* float32 elements: 16 MiB per tensor */

typedef struct { size_t allocated, reserved, used, smi_used; } figures;

static figures measure(const char *when)
{
    hwrt_memory_info m;
    CHECK(hwrt_get_memory_info(0, &m));
    figures f = {m.allocated, m.reserved, m.used, 0};
    static hwrt_smi_snapshot snap;
    if (hwrt_smi_query("sim", 0, &snap) == HWRT_SUCCESS && snap.ndevices > 0)
        f.smi_used = snap.devices[0].used;
    printf("  %-28s allocated %8.1f MiB | reserved %8.1f MiB | used (device-wide) %8.1f MiB"
           " | hwrt-smi used %8.1f MiB\n", when, ts_mib(f.allocated), ts_mib(f.reserved),
           ts_mib(f.used), ts_mib(f.smi_used));
    return f;
}

int main(void)
{
    ts_private_registry();
    CHECK(hwrt_set_device("sim", 0));
    printf("hwrt: memory figures of device 0 (simulated)\n");
    figures f0 = measure("start");
    hwrt_tensor t[NT];
    int64_t shape[1] = {ELEMS};
    for (int i = 0; i < NT; i++) {
        CHECK(hwrt_tensor_empty(&t[i], HWRT_FLOAT32, 1, shape));
        CHECK(hwrt_op_fill(t[i], 1.0, NULL));
    }
    CHECK(hwrt_device_synchronize());
    figures f1 = measure("4 tensors of 16 MiB");
    for (int i = 0; i < NT; i++) CHECK(hwrt_tensor_release(t[i]));   /* "del tensor" */
    figures f2 = measure("after hwrt_tensor_release");
    size_t cached = f2.reserved - f2.allocated;
    printf("symptom: after releasing every tensor, device-wide used is %.1f MiB (%.1f MiB with "
           "the tensors, %.1f MiB at start)\n", ts_mib(f2.used), ts_mib(f1.used), ts_mib(f0.used));
    if (cached > 0)
        printf("diagnosis: allocated fell to %.1f MiB but the pool keeps %.1f MiB reserved (cached "
               "for reuse): the device monitor counts reserved memory, so it does not drop\n",
               ts_mib(f2.allocated), ts_mib(cached));
    else
        printf("diagnosis: this pool returned the blocks at release (reserved = allocated = "
               "%.1f MiB), so used already dropped; with a caching pool the cached bytes "
               "would stay reserved until hwrt_empty_cache\n", ts_mib(f2.allocated));
    CHECK(hwrt_empty_cache(0));
    figures f3 = measure("after hwrt_empty_cache(0)");
    printf("fix: hwrt_empty_cache(0): reserved %.1f -> %.1f MiB, device-wide used %.1f -> %.1f MiB "
           "(debugging only: in training it defeats the pool's reuse)\n", ts_mib(f2.reserved),
           ts_mib(f3.reserved), ts_mib(f2.used), ts_mib(f3.used));
    int ok = f3.allocated == f0.allocated && f3.reserved <= f2.reserved &&
             f3.reserved == f3.allocated && f3.used <= f2.used && f1.allocated > f2.allocated;
    CHECK(hwrt_shutdown());
    return ok ? 0 : 1;
}
