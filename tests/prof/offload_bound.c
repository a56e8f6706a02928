/* An offload-bound program for the verdict test. It does by hand what an offload
 * manager does when the device budget is too small: every step evicts an 8 MiB block to
 * host memory and fetches it back on demand before use, and reports the evictions,
 * fetches and the time the step was stalled through hwi_prof_record_event, the entry
 * point src/offload uses. hwrt-prof must call it offload-bound and advise raising
 * offload_cpu_size and prefetching. */
#include <hwrt.h>
#include "prof/prof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_check.h"   /* CHECK(call) */

int main(void)
{
    enum { BYTES = 8 << 20, STEPS = 16 };
    CHECK(hwrt_set_device("sim", 0));
    void *host, *dev;
    CHECK(hwrt_host_alloc(&host, BYTES, HWRT_HOST_PINNED));
    memset(host, 3, BYTES);
    CHECK(hwrt_malloc(&dev, BYTES));
    for (int i = 0; i < STEPS; i++) {
        uint64_t t0 = hwi_prof_now_ns();                 /* evict: copy out, free */
        CHECK(hwrt_memcpy(host, dev, BYTES, HWRT_MEMCPY_DEVICE_TO_HOST));
        CHECK(hwrt_free(dev));
        hwi_prof_record_event(HWI_PROF_OFFLOAD_EVICT, "evict", 0, t0, hwi_prof_now_ns(), BYTES);
        uint64_t t1 = hwi_prof_now_ns();                 /* use: fetch back, blocking */
        CHECK(hwrt_malloc(&dev, BYTES));
        CHECK(hwrt_memcpy(dev, host, BYTES, HWRT_MEMCPY_HOST_TO_DEVICE));
        uint64_t t2 = hwi_prof_now_ns();
        hwi_prof_record_event(HWI_PROF_OFFLOAD_FETCH, "fetch", 0, t1, t2, BYTES);
        hwi_prof_record_event(HWI_PROF_OFFLOAD_STALL, "stall", 0, t1, t2, 0);
    }
    CHECK(hwrt_free(dev));
    CHECK(hwrt_host_free(host));
    CHECK(hwrt_shutdown());
    printf("offload_bound: %d evict/fetch rounds of %d MiB\n", STEPS, BYTES >> 20);
    return 0;
}
