/* Case 6 (seed 4, problem 6): "the device monitor shows much more memory in use than
 * get_memory_info's figures".
 *
 * The two count different things. `used` is device-wide (what hwrt-smi / npu-smi show):
 * the driver context, communication buffers and every byte the pool holds, plus other
 * processes. `allocated` is live tensors only, `reserved` what the pool holds. The gap
 * used - reserved is the context overhead (and other processes): real memory, but not
 * tensors. For OOM headroom look at used/free; for your own tensors at allocated. */
#include "ts_common.h"

int main(void)
{
    ts_private_registry();
    CHECK(hwrt_set_device("sim", 0));
    hwrt_tensor t;
    int64_t shape[2] = {1024, 1024};
    CHECK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 2, shape));          /* 4 MiB of tensors */
    CHECK(hwrt_op_fill(t, 0.0, NULL));
    CHECK(hwrt_device_synchronize());

    hwrt_memory_info m;
    CHECK(hwrt_get_memory_info(0, &m));
    static hwrt_smi_snapshot snap;
    CHECK(hwrt_smi_query("sim", 0, &snap));
    size_t smi_used = snap.ndevices > 0 ? snap.devices[0].used : 0;
    printf("symptom: hwrt-smi shows %.1f MiB used on device 0, hwrt_get_memory_info shows "
           "allocated %.1f MiB\n", ts_mib(smi_used), ts_mib(m.allocated));
    printf("hwrt: hwrt_get_memory_info(0): total %.1f MiB | used (device-wide) %.1f MiB | "
           "reserved %.1f MiB | allocated %.1f MiB | overhead %.1f MiB\n", ts_mib(m.total),
           ts_mib(m.used), ts_mib(m.reserved), ts_mib(m.allocated), ts_mib(m.overhead));
    for (int i = 0; i < snap.nprocesses; i++)
        if (snap.processes[i].device == 0)
            printf("hwrt: hwrt-smi process %d (%s): used %.1f MiB = overhead %.1f + comm %.1f + "
                   "reserved %.1f MiB (allocated %.1f MiB)\n", snap.processes[i].pid,
                   snap.processes[i].name, ts_mib(snap.processes[i].used),
                   ts_mib(snap.processes[i].overhead), ts_mib(snap.processes[i].comm),
                   ts_mib(snap.processes[i].reserved), ts_mib(snap.processes[i].allocated));
    size_t gap = m.used - m.reserved;
    size_t others = gap > m.overhead ? gap - m.overhead : 0;
    printf("diagnosis: used - reserved = %.1f MiB = context overhead %.1f MiB%s%.1f MiB: the "
           "driver context (and communication buffers) are device memory the monitor counts, "
           "but not tensors; reserved - allocated = %.1f MiB is the pool's cache\n", ts_mib(gap),
           ts_mib(m.overhead), " + other processes and driver rounding ", ts_mib(others),
           ts_mib(m.reserved - m.allocated));
    printf("fix: nothing is leaking. For OOM headroom read used/free (free = %.1f MiB); for "
           "this program's tensors read allocated; hwrt-smi --explain prints this breakdown\n",
           ts_mib(m.free));
    int ok = m.used >= m.reserved + m.overhead && m.overhead > 0 && m.reserved >= m.allocated;
    CHECK(hwrt_tensor_release(t));
    CHECK(hwrt_shutdown());
    return ok ? 0 : 1;
}
