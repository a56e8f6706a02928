/* Regression tests for survivors of issue 25's seed-3007 mutation run (docs/RELIABILITY.md
 * "Mutation score (issue 25 item 2)") that need libhwrt's internals (linked statically).
 * Each case names its mutant; each fails with it planted by hand.
 * - dispatch.c hwi_dispatch_per_work: 1 only while a hook that wants every work item (the
 *   profiler's) is installed (`return 0` made `return 1` replayed every captured graph
 *   node by node, as under the profiler, losing the one-batch launch). */
#include "harness.h"
#include "exec/dispatch.h"

#include <stdlib.h>
#include <unistd.h>

int main(void)
{
    OK(hwrt_set_device("sim", 0));
    char dir[] = "/tmp/hwrt-wb3007-XXXXXX";
    EXPECT(mkdtemp(dir) != NULL);

    TEST_CASE("a graph is replayed node by node only while the profiler runs");
    EXPECT(hwi_dispatch_per_work() == 0);          /* the sync checker's hook: not per work */
    OK(hwrt_profiler_start(dir));
    EXPECT(hwi_dispatch_per_work() == 1);
    OK(hwrt_profiler_stop());
    EXPECT(hwi_dispatch_per_work() == 0);

    OK(hwrt_shutdown());
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    EXPECT(system(cmd) == 0);
    return test_report();
}
