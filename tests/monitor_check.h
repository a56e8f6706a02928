/* What the backends' monitor-slot tests share (tests/smi/test_cuda_monitor.c on a fake
 * NVML, tests/ascend_dcmi/test_dcmi_monitor.c on a fake DCMI): finding a process in a
 * snapshot, checking its warnings, hwrt-smi's printers into a string, each scenario in a child process (a
 * backend's loader runs once per process), and the per-run usage board folder. */
#ifndef HWRT_TEST_MONITOR_CHECK_H
#define HWRT_TEST_MONITOR_CHECK_H

#include "harness.h"
#include "../tools/hwrt-smi/smi_format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB ((size_t)1 << 20)

/* The snapshot's entry of process pid on device dev, or NULL. */
static inline const hwrt_smi_process *mon_find_pid(const hwrt_smi_snapshot *s, int pid, int dev)
{
    for (int i = 0; i < s->nprocesses; i++)
        if (s->processes[i].pid == pid && s->processes[i].device == dev) return &s->processes[i];
    return NULL;
}

/* The snapshot's warnings are exactly want (NULL: none), printed when they are not. */
static inline void mon_expect_warnings(const hwrt_smi_snapshot *s, const char *want)
{
    int ok = !strcmp(s->warnings, want ? want : "");
    EXPECT(ok);
    if (!ok) fprintf(stderr, "warnings: %.200s\n", s->warnings);
}

/* What fn(f, s, arg) prints, in *buf (the caller frees it); returns *buf. */
static inline char *mon_print(void (*fn)(FILE *, const hwrt_smi_snapshot *, int),
                              const hwrt_smi_snapshot *s, int arg, char **buf)
{
    size_t len = 0;
    FILE *f = open_memstream(buf, &len);
    fn(f, s, arg);
    fclose(f);
    return *buf;
}

/* hwrt-smi's table, in mon_print's shape. */
static inline void mon_table(FILE *f, const hwrt_smi_snapshot *s, int unused)
{
    (void)unused;
    smi_print_table(f, s);
}

/* Scenario fn in a child process: one passed check when all its checks passed, else one
 * failed check named after the scenario. */
static inline void mon_run(const char *name, void (*fn)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        t_passed = t_failed = 0;
        fn();
        fflush(NULL);
        _exit(t_failed ? 1 : 0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) t_passed++;
    else {
        t_failed++;
        fprintf(stderr, "FAIL scenario %s (status %d)\n", name, status);
    }
}

/* A fresh usage-board folder /tmp/hwrt-test-<what>-<pid> in board, named by env_name. */
static inline void mon_board_make(char *board, size_t len, const char *what, const char *env_name)
{
    snprintf(board, len, "/tmp/hwrt-test-%s-%d", what, (int)getpid());
    mkdir(board, 0700);
    setenv(env_name, board, 1);
}

static inline void mon_board_remove(const char *board)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s", board);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", board);
}

#endif
