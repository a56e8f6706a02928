/* The usage board's sweep (src/backends/usage_board.c, here the cuda backend's board of
 * src/backends/cuda/cuda_usage.c): a process's first publish
 * removes the files of processes that are gone and keeps every live process's files,
 * whatever order the directory lists them in. Files of dead and live processes are made
 * alternately (a live one follows a dead one in any listing order), so a stale errno
 * (ESRCH from a dead pid's kill(pid, 0)) must not condemn a live process's file: the
 * mutant of issue 25's seeded run that made `kill(...) != 0 && errno == ESRCH` `||`
 * removed them. Without a GPU: the board is plain files. */
#include "harness.h"
#include "backends/cuda/cuda_usage.h"
#include "backends/usage_board.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 8

static char board[256];
/* a reader of the cuda board (the same directory and file format as cuda_usage.c's) */
static hwi_usage_board reader = HWI_USAGE_BOARD_INIT("cuda", "HWRT_CUDA_USAGE_DIR", "NVML");

static void make_file(char *path, size_t len, int pid, unsigned bus)
{
    snprintf(path, len, "%s/%d-0000_%02x_00", board, pid, bus);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "hwrt-cuda-usage 1 0 %d %d\n", 1 << 20, 1 << 19);
        fclose(f);
    }
    chmod(path, 0600);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

int main(void)
{
    snprintf(board, sizeof board, "/tmp/hwrt-test-cuda-sweep-%d", (int)getpid());
    mkdir(board, 0700);
    setenv("HWRT_CUDA_USAGE_DIR", board, 1);

    TEST_CASE("the first publish sweeps the dead processes' files only");
    char live[N][512], dead[N][512];
    for (int i = 0; i < N; i++) {
        pid_t c = fork();
        if (c == 0) _exit(0);
        EXPECT(c > 0 && waitpid(c, NULL, 0) == c);      /* c's pid is free now */
        make_file(live[i], sizeof live[i], (int)getpid(), 0x40 + (unsigned)i);
        make_file(dead[i], sizeof dead[i], (int)c, 0x1b);
    }
    for (int i = 0; i < N; i++) EXPECT(exists(live[i]) && exists(dead[i]));
    hwi_cuda_usage_publish((hwi_pci_loc){0, 0x1b, 0}, 1024, 512);
    for (int i = 0; i < N; i++) {
        EXPECT(exists(live[i]));
        EXPECT(!exists(dead[i]));
    }
    size_t resv = 0, alloc = 0;
    char why[512] = "";
    EXPECT(hwi_usage_read(&reader, (int)getpid(), "0000_1b_00", &resv, &alloc, why,
                          sizeof why) == 1);
    EXPECT(resv == 1024 && alloc == 512);
    if (why[0]) fprintf(stderr, "why: %s\n", why);

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", board);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", board);
    return test_report();
}
