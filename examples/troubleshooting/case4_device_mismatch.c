/* Case 4 (seed 4, problem 4): "in multi-card training some ranks report a wrong device".
 *
 * Every rank wrote set_device(device_id=0). Two processes (rank 0 = this process,
 * rank 1 = a forked child, LOCAL_RANK set as a launcher would) then share device 0 while
 * device 1 idles; hwrt-smi's process table (hwrt_smi_query) shows it. With exclusive
 * mode (HWRT_SIM_EXCLUSIVE=1, as on cards in exclusive compute mode) the second rank
 * fails at once with DEVICE_BUSY naming the holder, and a rank whose id exceeds the
 * device count gets INVALID_DEVICE naming the count. The fix: bind device = local rank. */
#define _GNU_SOURCE
#include "ts_common.h"

#include <fcntl.h>
#include <sys/wait.h>

/* Rank 1 runs as a fresh process (the repro re-executes itself: forking a process whose
 * runtime already has threads would copy held locks). argv: --rank1 USE_LOCAL EXCL RFD WFD */
static int rank1(char **argv)
{
    int use_local_rank = atoi(argv[2]), exclusive = atoi(argv[3]);
    int rfd = atoi(argv[4]), wfd = atoi(argv[5]);
    setenv("LOCAL_RANK", "1", 1);
    if (exclusive) setenv("HWRT_SIM_EXCLUSIVE", "1", 1);
    int device = use_local_rank ? atoi(getenv("LOCAL_RANK")) : 0;
    hwrt_status st = hwrt_set_device("sim", device);
    void *p = NULL;
    if (st == HWRT_SUCCESS) st = hwrt_malloc(&p, 64 << 20);
    if (st != HWRT_SUCCESS)
        printf("hwrt: rank 1: hwrt_set_device(\"sim\", %d) -> %s: %s\n", device,
               hwrt_status_name(st), hwrt_last_error());
    fflush(stdout);
    char c = st == HWRT_SUCCESS ? 'y' : 'n';
    if (write(wfd, &c, 1) != 1) return 2;
    if (read(rfd, &c, 1) != 1) return 2;
    hwrt_free(p);
    hwrt_shutdown();
    return 0;
}

/* Start rank 1, wait until it bound its device, count processes per device, let it go. */
static int run_rank1(const char *self, int use_local_rank, int exclusive, int per_dev[2])
{
    int up[2], down[2];
    fflush(stdout);
    if (pipe2(up, O_CLOEXEC) || pipe2(down, O_CLOEXEC)) exit(1);
    pid_t pid = fork();
    if (pid == 0) {                      /* the child keeps only its two ends */
        fcntl(down[0], F_SETFD, 0);
        fcntl(up[1], F_SETFD, 0);
        char a1[8], a2[8], a3[16], a4[16];
        snprintf(a1, sizeof a1, "%d", use_local_rank);
        snprintf(a2, sizeof a2, "%d", exclusive);
        snprintf(a3, sizeof a3, "%d", down[0]);
        snprintf(a4, sizeof a4, "%d", up[1]);
        execl(self, self, "--rank1", a1, a2, a3, a4, (char *)NULL);
        _exit(127);
    }
    close(up[1]);                        /* so a dead child reads as EOF, not a hang */
    close(down[0]);
    char c = 'n';
    if (read(up[0], &c, 1) != 1) c = 'n';
    static hwrt_smi_snapshot snap;
    per_dev[0] = per_dev[1] = 0;
    hwrt_status st = hwrt_smi_query("sim", 0, &snap);
    if (st == HWRT_SUCCESS)
        for (int i = 0; i < snap.ndevices && i < 2; i++) per_dev[i] = snap.devices[i].processes;
    else
        printf("hwrt: hwrt_smi_query -> %s: %s\n", hwrt_status_name(st), hwrt_last_error());
    if (snap.warnings[0]) printf("hwrt: hwrt_smi_query warnings: %s\n", snap.warnings);
    if (write(down[1], "x", 1) != 1) exit(1);
    waitpid(pid, NULL, 0);
    close(up[0]);
    close(down[1]);
    return c == 'y';
}

int main(int argc, char **argv)
{
    if (argc == 6 && !strcmp(argv[1], "--rank1")) return rank1(argv);
    const char *self = "/proc/self/exe";
    char exe[4096];
    ssize_t n = readlink(self, exe, sizeof exe - 1);
    if (n > 0) { exe[n] = 0; self = exe; }
    ts_private_registry();
    int count = 0;
    CHECK(hwrt_device_count("sim", &count));
    CHECK(hwrt_set_device("sim", 0));               /* rank 0: device 0, correct for it */
    void *p;
    CHECK(hwrt_malloc(&p, 64 << 20));
    int per_dev[2];

    int bound = run_rank1(self, 0, 0, per_dev);           /* the bug: rank 1 also binds 0 */
    printf("symptom: rank 1 ran on device 0 too (bound: %s); hwrt-smi: device 0 has %d "
           "processes, device 1 has %d\n", bound ? "yes" : "no", per_dev[0], per_dev[1]);
    int diagnosed = bound && per_dev[0] == 2 && per_dev[1] == 0;
    if (diagnosed)
        printf("diagnosis: ranks 0 and 1 both bound device 0 (device_id hardcoded): they "
               "share its memory and compute while device 1 is idle, and collectives that "
               "expect one rank per device fail or hang\n");

    int refused = !run_rank1(self, 0, 1, per_dev);        /* exclusive mode: fails fast */
    printf("hwrt: with HWRT_SIM_EXCLUSIVE=1 the second rank on device 0 %s\n",
           refused ? "was refused (above)" : "was NOT refused");
    hwrt_status st = hwrt_set_device("sim", count);  /* rank `count` on a `count`-card node */
    printf("hwrt: rank %d on a %d-device node: hwrt_set_device(\"sim\", %d) -> %s: %s\n", count,
           count, count, hwrt_status_name(st), hwrt_last_error());
    int invalid = st == HWRT_ERROR_INVALID_DEVICE;

    int fixed = run_rank1(self, 1, 1, per_dev);           /* the fix: device = LOCAL_RANK */
    printf("fix: hwrt_set_device(\"sim\", local_rank) (hwrt_dist_bind_device does it from the "
           "launcher's variables): rank 1 bound device 1 %s; device 0 has %d process, device 1 "
           "has %d, even in exclusive mode\n", fixed ? "fine" : "FAILED", per_dev[0], per_dev[1]);
    CHECK(hwrt_free(p));
    CHECK(hwrt_shutdown());
    return diagnosed && refused && invalid && fixed && per_dev[1] == 1 ? 0 : 1;
}
