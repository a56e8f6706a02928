/* The profiler's per-thread buffer registry (src/prof/prof_tracer.c buf_for_thread)
 * when the registry cannot grow: realloc is wrapped (-Wl,--wrap=realloc, libhwrt linked
 * statically) so that the registries' first growth (16 entries, from NULL) fails during one op
 * (the profiler's stream registry grows the same way and fails too: its markers count
 * as missing).
 * The thread's record is then not kept and nothing is registered; issue 25's mutant at
 * prof_tracer.c:82 (`ok && nbufs < capbufs` made `||`) stored the buffer into the NULL
 * registry (a crash). The next record, with realloc working again, registers the thread. */
#include "harness.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void *__real_realloc(void *p, size_t n);
static atomic_int fail_next, fired;

void *__wrap_realloc(void *p, size_t n)
{
    if (!p && n == 16 * sizeof(void *) && atomic_load(&fail_next)) {
        atomic_fetch_add(&fired, 1);
        return NULL;
    }
    return __real_realloc(p, n);
}

int main(void)
{
    TEST_CASE("a thread whose buffer cannot be registered records nothing");
    char dir[] = "/tmp/hwrt-wb-tracer-XXXXXX";
    EXPECT(mkdtemp(dir) != NULL);
    OK(hwrt_set_device("sim", 0));
    int64_t shape[1] = {1024};
    hwrt_tensor t;
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    OK(hwrt_op_fill(t, 0.0, NULL));          /* the default stream exists from here on */
    OK(hwrt_device_synchronize());
    OK(hwrt_profiler_start(dir));
    hwrt_profiler_stats s;
    atomic_store(&fail_next, 1);
    OK(hwrt_op_fill(t, 1.0, NULL));          /* its record: the registry cannot grow */
    atomic_store(&fail_next, 0);
    EXPECT(atomic_load(&fired) >= 1);
    OK(hwrt_profiler_get_stats(&s));
    EXPECT(s.threads == 0);
    OK(hwrt_op_fill(t, 2.0, NULL));          /* realloc works again: registered */
    OK(hwrt_device_synchronize());
    OK(hwrt_profiler_get_stats(&s));
    EXPECT(s.threads == 1 && s.events >= 1);
    OK(hwrt_profiler_stop());
    float out[1024];
    OK(hwrt_tensor_copy_to_host(t, out, sizeof out));
    EXPECT(out[0] == 2.0f && out[1023] == 2.0f);
    OK(hwrt_tensor_release(t));
    OK(hwrt_shutdown());
    char cmd[100];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return test_report();
}
