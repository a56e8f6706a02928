/* The usage board (src/backends/usage_board.c) as its readers and publishers meet it,
 * on a board of its own ("covtest", HWRT_COVTEST_USAGE_DIR; issue 25 item 3):
 * - publishing: the default directory /dev/shm/hwrt-covtest-<uid> is made 0700 and the
 *   figures read back (allocated clamped to reserved); a directory that cannot be made,
 *   one of mode 0755, a plain file in its place: one warning naming it and the fix, no
 *   file written, and no second warning;
 * - reading: nothing published (0); a symbolic link, a file of mode 0644 or of another
 *   user, a directory in the file's place, a board directory that went 0755: refused (-1)
 *   with the reason; contents of another board, with trailing bytes, allocated above
 *   reserved: "failed validation"; a start time that is not the process's (pid reused)
 *   or a dead pid: 0;
 * - reconciling with a driver's figure: overhead = used - reserved; a pool figure above
 *   the driver's is clamped, with a sentence naming both;
 * - the sweep at a publisher's first publish keeps names that are not "<pid>-..." and
 *   live processes' files, and removes dead ones'; process names; warnings cut at the end.
 * Runs as any user; the other-user case only as root. */
#include "harness.h"
#include "backends/usage_board.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define ENV "HWRT_COVTEST_USAGE_DIR"
static char base[] = "/tmp/hwrt-cov-board-XXXXXX";
static char board[300];

static hwi_usage_board fresh(void)
{
    hwi_usage_board b = HWI_USAGE_BOARD_INIT("covtest", ENV, "FAKEDRV");
    return b;
}

static int exists(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0;
}

static void put(const char *name, const char *text, mode_t mode)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", board, name);
    FILE *f = fopen(p, "w");
    if (f) { fputs(text, f); fclose(f); }
    chmod(p, mode);
}

static unsigned long long my_start(void)
{
    char buf[1024];
    FILE *f = fopen("/proc/self/stat", "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    if (!p) return 0;
    p++;
    for (int field = 3; field < 22 && p; field++) p = strchr(p + 1, ' ');
    unsigned long long v = 0;
    return p && sscanf(p, " %llu", &v) == 1 ? v : 0;
}

/* stderr of fn() into a file, returned */
static char *captured(void (*fn)(void *), void *arg)
{
    static char text[8192];
    char p[400];
    snprintf(p, sizeof p, "%s/stderr.txt", base);
    fflush(stderr);
    int saved = dup(2), fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    close(fd);
    fn(arg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    FILE *f = fopen(p, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    text[n] = 0;
    unlink(p);
    return text;
}

static void publish_twice(void *arg)
{
    hwi_usage_board *b = arg;
    hwi_usage_publish(b, "dev0", 4096, 1024);
    hwi_usage_publish(b, "dev0", 8192, 2048);
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p++) n++;
    return n;
}

static void publishing(void)
{
    size_t r = 0, a = 0;
    char why[512] = "";
    TEST_CASE("the default directory is made 0700, the figures read back");
    setenv(ENV, "", 1);                                     /* empty: the default */
    char dflt[128];
    snprintf(dflt, sizeof dflt, "/dev/shm/hwrt-covtest-%u", (unsigned)getuid());
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dflt);
    if (system(cmd) != 0) fprintf(stderr, "could not clear %s\n", dflt);
    hwi_usage_board b = fresh();
    hwi_usage_publish(&b, "dev_0", 1 << 20, 3 << 20);      /* allocated above reserved */
    struct stat st;
    EXPECT(stat(dflt, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700);
    EXPECT(hwi_usage_read(&b, getpid(), "dev_0", &r, &a, why, sizeof why) == 1);
    EXPECT(r == 1 << 20 && a == 1 << 20);                   /* clamped */
    EXPECT(hwi_usage_read(&b, getpid(), "dev_1", &r, &a, why, sizeof why) == 0);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dflt);

    TEST_CASE("a directory that cannot be made: one warning, nothing written");
    char p[400];
    snprintf(p, sizeof p, "%s/no/such", base);
    setenv(ENV, p, 1);
    b = fresh();
    char *e = captured(publish_twice, &b);
    EXPECT(count(e, "[hwrt warn] covtest usage board: ") == 1);
    EXPECT(strstr(e, "/no/such: No such file or directory; hwrt-smi will show this process's "
                  "FAKEDRV figures without its pool's") != NULL);
    EXPECT(!exists(p));

    TEST_CASE("a directory of mode 0755 is refused");
    snprintf(p, sizeof p, "%s/open", base);
    mkdir(p, 0755);
    chmod(p, 0755);
    setenv(ENV, p, 1);
    b = fresh();
    e = captured(publish_twice, &b);
    EXPECT(count(e, "is not a directory of user") == 1);
    EXPECT(strstr(e, "with mode 0700 (remove it, or set " ENV " to one)") != NULL);
    char f[500];
    snprintf(f, sizeof f, "%s/%d-dev0", p, (int)getpid());
    EXPECT(!exists(f));

    TEST_CASE("a plain file in the directory's place is refused");
    snprintf(p, sizeof p, "%s/plain", base);
    FILE *pf = fopen(p, "w");
    if (pf) fclose(pf);
    setenv(ENV, p, 1);
    b = fresh();
    e = captured(publish_twice, &b);
    EXPECT(count(e, "is not a directory of user") == 1);

    if (getuid() == 0) {
        TEST_CASE("a directory of another user is refused");
        snprintf(p, sizeof p, "%s/theirs", base);
        mkdir(p, 0700);
        EXPECT(chown(p, 65534, 65534) == 0);
        setenv(ENV, p, 1);
        b = fresh();
        e = captured(publish_twice, &b);
        EXPECT(count(e, "is not a directory of user 0 with mode 0700") == 1);
    }
    setenv(ENV, board, 1);

    TEST_CASE("a file that cannot be written or put in place: nothing published");
    char d1[500], d2[500], inner[600];
    snprintf(d1, sizeof d1, "%s/%d-blocked.tmp", board, (int)getpid());
    snprintf(d2, sizeof d2, "%s/%d-taken", board, (int)getpid());
    snprintf(inner, sizeof inner, "%s/x", d2);
    mkdir(d1, 0700);                                        /* the temporary's name */
    mkdir(d2, 0700);                                        /* the file's name, not empty */
    FILE *xf = fopen(inner, "w");
    if (xf) fclose(xf);
    b = fresh();
    hwi_usage_publish(&b, "blocked", 100, 50);
    hwi_usage_publish(&b, "taken", 100, 50);
    EXPECT(hwi_usage_read(&b, getpid(), "blocked", &r, &a, why, sizeof why) == 0);
    EXPECT(hwi_usage_read(&b, getpid(), "taken", &r, &a, why, sizeof why) == -1);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", d2);
    EXPECT(!exists(tmp));                                   /* the temporary is removed */
    EXPECT(exists(inner));
}

static void reading(void)
{
    hwi_usage_board b = fresh();
    size_t r = 7, a = 7;
    char why[600], line[160];
    int me = (int)getpid();
    unsigned long long t = my_start();
    EXPECT(t != 0);
    char name[64];

    TEST_CASE("a symbolic link is not followed");
    snprintf(line, sizeof line, "hwrt-covtest-usage 1 %llu 100 50\n", t);
    put("target", line, 0600);
    char lp[500], tp[500];
    snprintf(tp, sizeof tp, "%s/target", board);
    snprintf(lp, sizeof lp, "%s/%d-lnk", board, me);
    EXPECT(symlink(tp, lp) == 0);
    EXPECT(hwi_usage_read(&b, me, "lnk", &r, &a, why, sizeof why) == -1);
    EXPECT(strstr(why, "-lnk: Too many levels of symbolic links") != NULL);

    TEST_CASE("a file of mode 0644 is refused");
    snprintf(name, sizeof name, "%d-wide", me);
    put(name, line, 0644);
    EXPECT(hwi_usage_read(&b, me, "wide", &r, &a, why, sizeof why) == -1);
    EXPECT(strstr(why, "is not a regular file of user") && strstr(why, "with mode 0600"));

    TEST_CASE("a directory in the file's place is refused");
    char dp[500];
    snprintf(dp, sizeof dp, "%s/%d-dir", board, me);
    mkdir(dp, 0700);
    EXPECT(hwi_usage_read(&b, me, "dir", &r, &a, why, sizeof why) == -1);
    EXPECT(strstr(why, "is not a regular file") != NULL);

    if (getuid() == 0) {
        TEST_CASE("a file of another user is refused");
        snprintf(name, sizeof name, "%d-other", me);
        put(name, line, 0600);
        char op[500];
        snprintf(op, sizeof op, "%s/%s", board, name);
        EXPECT(chown(op, 65534, 65534) == 0);
        EXPECT(hwi_usage_read(&b, me, "other", &r, &a, why, sizeof why) == -1);
        EXPECT(strstr(why, "is not a regular file of user 0 with mode 0600") != NULL);
    }

    TEST_CASE("contents that fail validation");
    const char *bad[] = {"hwrt-cuda-usage 1 %llu 100 50\n", "hwrt-covtest-usage 1 %llu 100 50\nx",
                         "hwrt-covtest-usage 1 %llu 100 101\n", "hwrt-covtest-usage 2 %llu 1 1\n",
                         "hwrt-covtest-usage 1 %llu 100\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(line, sizeof line, bad[i], t);
        snprintf(name, sizeof name, "%d-bad%zu", me, i);
        put(name, line, 0600);
        char key[16];
        snprintf(key, sizeof key, "bad%zu", i);
        why[0] = 0;
        EXPECT(hwi_usage_read(&b, me, key, &r, &a, why, sizeof why) == -1);
        EXPECT(strstr(why, "failed validation and was ignored") != NULL);
        if (!strstr(why, "failed validation")) fprintf(stderr, "case %zu: %s\n", i, why);
    }
    EXPECT(r == 7 && a == 7);                               /* untouched */

    TEST_CASE("another process's start time, or a dead pid: nothing published");
    snprintf(line, sizeof line, "hwrt-covtest-usage 1 %llu 100 50\n", t + 1);
    snprintf(name, sizeof name, "%d-reused", me);
    put(name, line, 0600);
    EXPECT(hwi_usage_read(&b, me, "reused", &r, &a, why, sizeof why) == 0);
    pid_t c = fork();
    if (c == 0) _exit(0);
    waitpid(c, NULL, 0);
    snprintf(line, sizeof line, "hwrt-covtest-usage 1 %llu 100 50\n", t);
    snprintf(name, sizeof name, "%d-gone", (int)c);
    put(name, line, 0600);
    EXPECT(hwi_usage_read(&b, (int)c, "gone", &r, &a, why, sizeof why) == 0);
    EXPECT(r == 7 && a == 7);

    TEST_CASE("a board directory that went 0755 is refused by readers");
    snprintf(name, sizeof name, "%d-good", me);
    snprintf(line, sizeof line, "hwrt-covtest-usage 1 %llu 100 50\n", t);
    put(name, line, 0600);
    EXPECT(hwi_usage_read(&b, me, "good", &r, &a, why, sizeof why) == 1 && r == 100 && a == 50);
    chmod(board, 0755);
    EXPECT(hwi_usage_read(&b, me, "good", &r, &a, why, sizeof why) == -1);
    EXPECT(strstr(why, "is not a directory of user") != NULL);
    chmod(board, 0700);

    TEST_CASE("reconciling with the driver's figure");
    hwrt_smi_process p = {.pid = me, .used = 1000};
    EXPECT(hwi_usage_reconcile(&b, "good", 0, &p, why, sizeof why) == 0);
    EXPECT(p.reserved == 100 && p.allocated == 50 && p.overhead == 900);
    hwrt_smi_process q = {.pid = me, .used = 60};
    why[0] = 0;
    EXPECT(hwi_usage_reconcile(&b, "good", 3, &q, why, sizeof why) == -1);
    EXPECT(q.reserved == 60 && q.allocated == 50 && q.overhead == 0);
    char want[200];
    snprintf(want, sizeof want, "pid %d: its pool says 100 bytes reserved on device 3 but "
             "FAKEDRV counts 60 for it; shown clamped", me);
    EXPECT(strstr(why, want) != NULL);
    hwrt_smi_process z = {.pid = me, .used = 5, .reserved = 9};
    EXPECT(hwi_usage_reconcile(&b, "none", 0, &z, why, sizeof why) == 0 && z.reserved == 9);
}

static void sweeping(void)
{
    TEST_CASE("the first publish sweeps dead processes' files, keeps the rest");
    pid_t c = fork();
    if (c == 0) _exit(0);
    waitpid(c, NULL, 0);
    char dead[64], live[64];
    snprintf(dead, sizeof dead, "%d-k", (int)c);
    snprintf(live, sizeof live, "%d-k", (int)getppid());
    const char *keep[] = {"foo", "0-k", "12x-k", live};
    for (size_t i = 0; i < 4; i++) put(keep[i], "x", 0600);
    put(dead, "x", 0600);
    hwi_usage_board b = fresh();
    hwi_usage_publish(&b, "k", 10, 5);
    char p[600];
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", board, keep[i]);
        EXPECT(exists(p));
    }
    snprintf(p, sizeof p, "%s/%s", board, dead);
    EXPECT(!exists(p));
    size_t r = 0, a = 0;
    char why[300];
    EXPECT(hwi_usage_read(&b, getpid(), "k", &r, &a, why, sizeof why) == 1 && r == 10 && a == 5);

    TEST_CASE("process names, warnings cut at the end");
    char nm[32];
    hwi_usage_proc_name(getpid(), nm, sizeof nm);
    EXPECT(!strncmp(nm, "test_cov_usage_", 15));
    hwi_usage_proc_name((int)c, nm, sizeof nm);
    EXPECT(!strcmp(nm, "?"));
    static hwrt_smi_snapshot snap;
    memset(&snap, 0, sizeof snap);
    hwi_smi_warn(&snap, "first %d", 1);
    hwi_smi_warn(&snap, "second");
    EXPECT(!strcmp(snap.warnings, "first 1; second"));
    for (int i = 0; i < 200; i++) hwi_smi_warn(&snap, "warning number %d", i);
    EXPECT(strlen(snap.warnings) == sizeof snap.warnings - 1);
    EXPECT(!strncmp(snap.warnings, "first 1; second; warning number 0", 33));
}

int main(void)
{
    if (!mkdtemp(base)) { perror("mkdtemp"); return 1; }
    snprintf(board, sizeof board, "%s/board", base);
    mkdir(board, 0700);
    setenv(ENV, board, 1);
    publishing();
    reading();
    sweeping();
    char cmd[400];
    chmod(board, 0700);
    snprintf(cmd, sizeof cmd, "rm -rf %s", base);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", base);
    return test_report();
}
