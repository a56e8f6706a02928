/* Regression tests for survivors of issue 25's seed-3006 mutation run (docs/RELIABILITY.md
 * "Mutation score (issue 25 item 2)") that need a process of their own. Each fails with its
 * mutant planted by hand.
 * - sim_registry.c refuse: the descriptor of a registry that is refused (here one another
 *   process left with mode 0644) is closed, also when it is 0, as in a daemon that closed
 *   its standard input (`fd >= 0` made `fd > 0` leaked it). */
#include "harness.h"
#include "backends/sim/sim_registry_layout.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void)
{
    TEST_CASE("a refused registry opened as descriptor 0 is closed");
    char name[64], path[128];
    snprintf(name, sizeof name, "hwrt-mutants-3006-%d", (int)getpid());
    snprintf(path, sizeof path, "/dev/shm/%s-v%u", name, REG_VERSION);
    int fd = open(path, O_CREAT | O_EXCL | O_RDWR, 0644);
    EXPECT(fd >= 0);
    if (fd >= 0) {
        fchmod(fd, 0644);                  /* whatever the umask: readable by others */
        close(fd);
    }
    setenv("HWRT_SIM_REGISTRY", name, 1);
    close(0);                              /* the next descriptor is 0 */
    OK(hwrt_set_device("sim", 0));         /* runs without the registry */
    EXPECT(fcntl(0, F_GETFD) == -1);       /* nothing left open as 0 */
    unlink(path);
    OK(hwrt_shutdown());
    return test_report();
}
