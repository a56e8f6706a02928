/* Regression tests for the survivors of issue 25's fresh seeded mutation run (seed 2026,
 * COUNT 64; docs/RELIABILITY.md "Mutation score (issue 25 item 2)") that need libhwrt's
 * internals (linked statically). Each case names its mutant. */
#include "harness.h"
#include "harness_files.h"
#include "backends/usage_board.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* usage_board.c hwi_usage_publish: any descriptor open() returns is used, 0 included (the
 * mutant `fd >= 0` made `fd > 0` published nothing, and leaked the descriptor and the .tmp
 * file, in a process started with its standard input closed, as daemons are). */
static void publish_with_stdin_closed(void)
{
    TEST_CASE("a process without stdin publishes its usage");
    char dir[] = "/tmp/hwrt-mutants2026a-XXXXXX";
    EXPECT(mkdtemp(dir) != NULL);
    setenv("HWRT_TEST_USAGE_DIR", dir, 1);
    hwi_usage_board w = HWI_USAGE_BOARD_INIT("test", "HWRT_TEST_USAGE_DIR", "TEST");
    hwi_usage_board r = HWI_USAGE_BOARD_INIT("test", "HWRT_TEST_USAGE_DIR", "TEST");
    int saved = dup(0);
    EXPECT(saved > 0);
    close(0);                                /* fd 0 is the lowest free descriptor now */
    hwi_usage_publish(&w, "dev_0", 4096, 1024);
    int fd = open("/dev/null", O_RDONLY);    /* the publish closed what it opened */
    EXPECT(fd == 0);
    if (fd >= 0) close(fd);
    dup2(saved, 0);
    close(saved);
    size_t resv = 0, alloc = 0;
    char why[512] = "";
    EXPECT(hwi_usage_read(&r, (int)getpid(), "dev_0", &resv, &alloc, why, sizeof why) == 1);
    EXPECT(resv == 4096 && alloc == 1024);
    if (why[0]) fprintf(stderr, "  why: %s\n", why);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s/%d-dev_0.tmp", dir, (int)getpid());
    EXPECT(access(tmp, F_OK) != 0);          /* no temporary file left behind */
    remove_tree(dir);
    unsetenv("HWRT_TEST_USAGE_DIR");
}


int main(void)
{
    publish_with_stdin_closed();
    return test_report();
}
