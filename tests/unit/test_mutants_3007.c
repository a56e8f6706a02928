/* Regression tests for survivors of issue 25's seed-3007 mutation run (docs/RELIABILITY.md
 * "Mutation score (issue 25 item 2)") that need a process of their own. Each fails with its
 * mutant planted by hand.
 * - sim_registry.c open_reg: a registry object another user owns, opened as descriptor 0
 *   (stdin closed) with a stale EACCES in errno, is refused by the ownership check, which
 *   closes it (`fd < 0 && errno == EACCES && ...` made `fd <= 0` took descriptor 0 for a
 *   failed open and left it open). Needs root to give the object away; where
 *   fs.protected_regular refuses root's open of it, both paths leave 0 closed. */
#include "harness.h"
#include "backends/sim/sim_registry_layout.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void)
{
    if (geteuid() != 0) {
        fprintf(stderr, "skipped: needs root to make an object another user owns\n");
        return 77;
    }
    TEST_CASE("another user's registry opened as descriptor 0 is refused and closed");
    char name[64], path[128];
    snprintf(name, sizeof name, "hwrt-mutants-3007-%d", (int)getpid());
    snprintf(path, sizeof path, "/dev/shm/%s-v%u", name, REG_VERSION);
    int fd = open(path, O_CREAT | O_EXCL | O_RDWR, 0600);
    EXPECT(fd >= 0);
    if (fd >= 0) {
        EXPECT(fchown(fd, 4242, 4242) == 0);
        close(fd);
    }
    setenv("HWRT_SIM_REGISTRY", name, 1);
    close(0);                              /* the next descriptor is 0 */
    errno = EACCES;                        /* left by an earlier failed call */
    OK(hwrt_set_device("sim", 0));         /* runs without the registry */
    EXPECT(fcntl(0, F_GETFD) == -1);       /* nothing left open as 0 */
    unlink(path);
    OK(hwrt_shutdown());
    return test_report();
}
