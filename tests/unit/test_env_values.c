/* Every environment variable hwrt reads, given a malformed value: the process must not
 * hang (each case runs in a child with a deadline), must say what is wrong (the variable,
 * the value and the accepted form, once), and must go on with the default where the
 * variable only tunes something, or fail the call that needs it with that sentence.
 *
 * The child is this program re-executed with "child ACTION ARG": it performs ACTION and
 * prints what it saw; the parent checks the child's exit and output. */
#define _GNU_SOURCE
#include "harness.h"
#include "harness_files.h"

#include <hwrt/hwrt_dist.h>
#include <hwrt/hwrt_prof.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- child side ---- */

static int child_tensor_roundtrip(void)
{
    float in[64], out[64];
    for (int i = 0; i < 64; i++) in[i] = (float)i;
    int64_t shape[1] = {64};
    hwrt_tensor t = NULL;
    if (hwrt_tensor_from_host(&t, HWRT_FLOAT32, 1, shape, in) != HWRT_SUCCESS ||
        hwrt_tensor_copy_to_host(t, out, sizeof out) != HWRT_SUCCESS) {
        printf("roundtrip failed: %s\n", hwrt_last_error());
        return 1;
    }
    hwrt_tensor_release(t);
    return memcmp(in, out, sizeof in) != 0;
}

static int child(const char *action, const char *arg, const char *want)
{
    if (!strcmp(action, "cfg")) {          /* the key keeps its default; the runtime works */
        char buf[256];
        if (hwrt_get_config(arg, buf, sizeof buf) != HWRT_SUCCESS) return 2;
        printf("cfg %s=%s\n", arg, buf);
        if (strcmp(buf, want)) return 3;
        return child_tensor_roundtrip() ? 4 : 0;
    }
    if (!strcmp(action, "work"))           /* the runtime works (the warning was checked) */
        return child_tensor_roundtrip() ? 4 : 0;
    if (!strcmp(action, "open_sim")) {     /* the default registry is shared with whatever
                                             * else runs: a busy device is its answer too */
        hwrt_status st = hwrt_set_device("sim", 0);
        printf("set_device: %s: %s\n", hwrt_status_name(st), hwrt_last_error());
        return st == HWRT_SUCCESS || st == HWRT_ERROR_DEVICE_BUSY ? 0 : 5;
    }
    if (!strcmp(action, "device_fails")) { /* backend arg must refuse with a sentence */
        hwrt_status st = hwrt_set_device(arg[0] ? arg : NULL, 0);
        printf("set_device: %s: %s\n", hwrt_status_name(st), hwrt_last_error());
        return st == HWRT_SUCCESS ? 5 : 0;
    }
    if (!strcmp(action, "backend_info")) { /* the backend reports itself unavailable */
        hwrt_backend_desc d;
        if (hwrt_backend_info(arg, &d) != HWRT_SUCCESS) return 2;
        printf("backend %s available=%d reason: %s\n", arg, d.available, d.reason);
        return d.available ? 5 : 0;
    }
    if (!strcmp(action, "detect_fails")) {
        hwrt_dist_info info;
        hwrt_status st = hwrt_dist_detect(&info);
        printf("detect: %s: %s\n", hwrt_status_name(st), hwrt_last_error());
        return st == HWRT_SUCCESS ? 5 : 0;
    }
    if (!strcmp(action, "dist_init_fails")) {
        hwrt_status st = hwrt_dist_init();
        printf("dist_init: %s: %s\n", hwrt_status_name(st), hwrt_last_error());
        return st == HWRT_SUCCESS ? 5 : 0;
    }
    if (!strcmp(action, "dist_init")) {
        hwrt_status st = hwrt_dist_init();
        if (st == HWRT_SUCCESS) st = hwrt_dist_bind_device("sim");   /* names the host */
        printf("dist_init: %s: %s\n", hwrt_status_name(st), hwrt_last_error());
        if (st != HWRT_SUCCESS) return 5;
        hwrt_dist_finalize();
        return 0;
    }
    if (!strcmp(action, "prof")) {         /* a profiling session with the variable set */
        char dir[] = "/tmp/hwrt-envtest-XXXXXX";
        if (!mkdtemp(dir)) return 2;
        hwrt_status st = hwrt_profiler_start(dir);
        int rc = st != HWRT_SUCCESS || child_tensor_roundtrip() ||
                 hwrt_profiler_stop() != HWRT_SUCCESS;
        if (rc) printf("profiler: %s\n", hwrt_last_error());
        if (remove_tree(dir) != 0) return 2;
        return rc ? 6 : 0;
    }
    return 99;
}

/* ---- parent side ---- */

typedef struct {
    const char *env[3];        /* NAME=VALUE assignments (the malformed one first) */
    const char *action, *arg, *want;
    const char *frags[4];      /* must all appear in the child's output */
    int warnings;              /* exact number of "[hwrt warn]" lines; -1: not counted */
    int need_opencl;           /* skipped where no OpenCL driver is installed */
} env_case;


static const env_case cases[] = {
    /* the option table's variables: one warning, the default, the runtime works */
    {{"HWRT_LOG_LEVEL=9"}, "cfg", "log_level", "0",
     {"HWRT_LOG_LEVEL", "\"9\"", "debug", "keeps its default"}, 1, 0},
    {{"HWRT_LOG_LEVEL=loud"}, "cfg", "log_level", "0",
     {"HWRT_LOG_LEVEL", "\"loud\"", "trace"}, 1, 0},
    {{"HWRT_LOG_LEVEL=lo\x1b[2Jud\nx"}, "cfg", "log_level", "0",   /* no escape codes, one line */
     {"HWRT_LOG_LEVEL", "\"lo?[2Jud?x\"", "trace"}, 1, 0},
    {{"HWRT_LOG_LEVEL=debug"}, "cfg", "log_level", "4", {NULL}, 0, 0},   /* names work */
    {{"HWRT_LOG_LEVEL=Trace"}, "cfg", "log_level", "5", {NULL}, 0, 0},
    {{"HWRT_LOG_LEVEL=error"}, "cfg", "log_level", "1", {NULL}, 0, 0},
    {{"HWRT_LAUNCH_BLOCKING=maybe"}, "cfg", "launch_blocking", "0",
     {"HWRT_LAUNCH_BLOCKING", "\"maybe\"", "true/false"}, 1, 0},
    {{"HWRT_CHECK_SYNC=2"}, "cfg", "check_sync", "0",
     {"HWRT_CHECK_SYNC", "\"2\"", "true/false"}, 1, 0},
    {{"HWRT_DIST_TIMEOUT=soon"}, "cfg", "dist_timeout", "300",
     {"HWRT_DIST_TIMEOUT", "\"soon\"", "seconds between"}, 1, 0},
    {{"HWRT_DIST_TIMEOUT=0"}, "cfg", "dist_timeout", "300",
     {"HWRT_DIST_TIMEOUT", "\"0\"", "seconds between"}, 1, 0},
    {{"HWRT_ALLOC_CONF=max_device_memory:lots"}, "cfg", "max_device_memory", "0",
     {"HWRT_ALLOC_CONF", "\"lots\"", "24GB"}, 1, 0},
    /* a bad entry spoils only itself: the good one after it is applied */
    {{"HWRT_ALLOC_CONF=max_split_size:huge,max_device_memory:1GB"}, "cfg", "max_device_memory",
     "1073741824", {"HWRT_ALLOC_CONF", "\"huge\"", "max_split_size"}, 1, 0},
    /* 0 bytes would mean "no cap": refused, not rounded */
    {{"HWRT_ALLOC_CONF=max_device_memory:0.4"}, "cfg", "max_device_memory", "0",
     {"HWRT_ALLOC_CONF", "\"0.4\"", "less than one byte"}, 1, 0},
    {{"HWRT_ALLOC_CONF=max_device_memory:0x40000000"}, "cfg", "max_device_memory", "0",
     {"HWRT_ALLOC_CONF", "\"0x40000000\"", "decimal"}, 1, 0},
    {{"HWRT_ALLOC_CONF=nonsense"}, "cfg", "max_device_memory", "0",
     {"HWRT_ALLOC_CONF", "nonsense", "key:value"}, 1, 0},
    {{"HWRT_ALLOC_CONF=colour:blue"}, "cfg", "max_device_memory", "0",
     {"HWRT_ALLOC_CONF", "colour", "max_device_memory"}, 1, 0},
    {{"HWRT_ALLOC_CONF=garbage_collection_threshold:2"}, "cfg", "garbage_collection_threshold",
     "0", {"HWRT_ALLOC_CONF", "\"2\"", "between 0 and 1"}, 1, 0},
    {{"HWRT_OFFLOAD_CONF=prefetch_depth:x"}, "cfg", "prefetch_depth", "2",
     {"HWRT_OFFLOAD_CONF", "\"x\"", "0..64"}, 1, 0},
    {{"HWRT_OFFLOAD_CONF=memory_offload:sometimes"}, "cfg", "memory_offload", "0",
     {"HWRT_OFFLOAD_CONF", "\"sometimes\"", "on/off"}, 1, 0},
    /* the backend choice: the call that needs a backend fails and says why */
    {{"HWRT_BACKEND=gpu9"}, "device_fails", "", NULL,
     {"HWRT_BACKEND", "\"gpu9\"", "sim, opencl"}, 0, 0},
    /* the simulated device's variables: the sim refuses to start and names the value */
    {{"HWRT_SIM_DEVICES=two"}, "device_fails", "sim", NULL, {"HWRT_SIM_DEVICES", "\"two\"", "1..64"}, 0, 0},
    {{"HWRT_SIM_DEVICES=1.5"}, "device_fails", "sim", NULL, {"HWRT_SIM_DEVICES", "whole number"}, 0, 0},
    {{"HWRT_SIM_MEMORY=big"}, "device_fails", "sim", NULL, {"HWRT_SIM_MEMORY", "\"big\"", "32GB"}, 0, 0},
    {{"HWRT_SIM_OVERHEAD=-3"}, "device_fails", "sim", NULL, {"HWRT_SIM_OVERHEAD", "\"-3\"", "300MB"}, 0, 0},
    {{"HWRT_SIM_LINK_GBPS=fast"}, "device_fails", "sim", NULL, {"HWRT_SIM_LINK_GBPS", "\"fast\"", "10000"}, 0, 0},
    /* a 4 KiB copy would take an hour / the copy time's conversion overflows */
    {{"HWRT_SIM_LINK_GBPS=1e-9"}, "device_fails", "sim", NULL,
     {"HWRT_SIM_LINK_GBPS", "\"1e-9\"", "0.01..10000"}, 0, 0},
    {{"HWRT_SIM_LINK_GBPS=1e-300"}, "device_fails", "sim", NULL,
     {"HWRT_SIM_LINK_GBPS", "\"1e-300\"", "0.01..10000"}, 0, 0},
    {{"HWRT_SIM_PAGEABLE_GBPS=1e-9"}, "device_fails", "sim", NULL,
     {"HWRT_SIM_PAGEABLE_GBPS", "\"1e-9\"", "0.01..10000"}, 0, 0},
    {{"HWRT_SIM_PAGEABLE_GBPS=-1"}, "device_fails", "sim", NULL, {"HWRT_SIM_PAGEABLE_GBPS", "\"-1\""}, 0, 0},
    {{"HWRT_SIM_COMPUTE_UNITS=0"}, "device_fails", "sim", NULL, {"HWRT_SIM_COMPUTE_UNITS", "\"0\""}, 0, 0},
    {{"HWRT_SIM_SPIN_US=x"}, "device_fails", "sim", NULL, {"HWRT_SIM_SPIN_US", "\"x\""}, 0, 0},
    {{"HWRT_SIM_FAULTS=explode"}, "device_fails", "sim", NULL, {"HWRT_SIM_FAULTS", "explode"}, 0, 0},
    /* the sim registry's: a warning, the default, the runtime works */
    {{"HWRT_SIM_EXCLUSIVE=maybe"}, "work", NULL, NULL,
     {"HWRT_SIM_EXCLUSIVE", "\"maybe\"", "true/false", "off"}, 1, 0},
    {{"HWRT_SIM_REGISTRY=a/b"}, "open_sim", NULL, NULL,
     {"HWRT_SIM_REGISTRY", "\"a/b\"", "without '/'"}, 1, 0},
    /* the profiler's */
    {{"HWRT_PROFILE_MAX_EVENTS=many"}, "prof", NULL, NULL,
     {"HWRT_PROFILE_MAX_EVENTS", "\"many\"", "whole number"}, 1, 0},
    {{"HWRT_PROFILE_BUFFER_EVENTS=-5"}, "prof", NULL, NULL,
     {"HWRT_PROFILE_BUFFER_EVENTS", "\"-5\"", "whole number"}, 1, 0},
    {{"HWRT_PROFILE_MARKERS=maybe"}, "prof", NULL, NULL,
     {"HWRT_PROFILE_MARKERS", "\"maybe\"", "true/false"}, 1, 0},
    {{"HWRT_PROFILE=/proc/hwrt-no-such-dir"}, "work", NULL, NULL,
     {"HWRT_PROFILE", "/proc/hwrt-no-such-dir", "writable"}, 1, 0},
    /* OpenCL's */
    {{"HWRT_OPENCL_LIBRARY=/nonexistent/libOpenCL.so"}, "backend_info", "opencl", NULL,
     {"/nonexistent/libOpenCL.so", "could not be loaded"}, 0, 0},
    {{"HWRT_OPENCL_FAIL_KERNEL=first"}, "device_fails", "opencl", NULL,
     {"HWRT_OPENCL_FAIL_KERNEL", "\"first\"", "number of the kernel launch"}, 0, 1},
    /* launchers' (hwrt_dist_detect refuses a launch it cannot understand) */
    {{"OMPI_COMM_WORLD_SIZE=two", "OMPI_COMM_WORLD_RANK=0"}, "detect_fails", NULL, NULL,
     {"OMPI_COMM_WORLD_SIZE", "\"two\""}, 0, 0},
    {{"OMPI_COMM_WORLD_LOCAL_RANK=-1", "OMPI_COMM_WORLD_SIZE=2", "OMPI_COMM_WORLD_RANK=0"},
     "detect_fails", NULL, NULL, {"OMPI_COMM_WORLD_LOCAL_RANK", "\"-1\""}, 0, 0},
    {{"PMI_RANK=x", "PMI_SIZE=2"}, "detect_fails", NULL, NULL, {"PMI_RANK", "\"x\""}, 0, 0},
    {{"RANK=1", "WORLD_SIZE=1"}, "detect_fails", NULL, NULL, {"RANK=1", "WORLD_SIZE=1"}, 0, 0},
    {{"LOCAL_WORLD_SIZE=0", "RANK=0", "WORLD_SIZE=2"}, "detect_fails", NULL, NULL,
     {"LOCAL_WORLD_SIZE", "\"0\""}, 0, 0},
    {{"GROUP_RANK=a", "RANK=0", "WORLD_SIZE=2"}, "detect_fails", NULL, NULL, {"GROUP_RANK", "\"a\""}, 0, 0},
    {{"RANK_SIZE=4x", "RANK_ID=0"}, "detect_fails", NULL, NULL, {"RANK_SIZE", "\"4x\""}, 0, 0},
    {{"MS_NODE_ID=?", "MS_WORKER_NUM=2"}, "detect_fails", NULL, NULL, {"MS_NODE_ID", "\"?\""}, 0, 0},
    {{"SLURM_NTASKS=0", "SLURM_PROCID=0"}, "detect_fails", NULL, NULL, {"SLURM_NTASKS", "\"0\""}, 0, 0},
    {{"SLURM_LOCALID=z", "SLURM_NTASKS=2", "SLURM_PROCID=0"}, "detect_fails", NULL, NULL,
     {"SLURM_LOCALID", "\"z\""}, 0, 0},
    {{"DEVICE_ID=npu0"}, "detect_fails", NULL, NULL, {"DEVICE_ID", "\"npu0\""}, 0, 0},
    /* hwrt_dist_init's */
    {{"HWRT_MPI_PLUGIN=/nonexistent/libhwrt_mpi.so", "OMPI_COMM_WORLD_SIZE=2",
      "OMPI_COMM_WORLD_RANK=0"}, "dist_init_fails", NULL, NULL,
     {"/nonexistent/libhwrt_mpi.so"}, 0, 0},
    {{"HWRT_DIST_HOSTNAME=hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh"},
     "dist_init", NULL, NULL, {"HWRT_DIST_HOSTNAME", "longer than"}, 1, 0},
};

static int opencl_available(void)
{
    hwrt_backend_desc d;
    return hwrt_backend_info("opencl", &d) == HWRT_SUCCESS && d.available;
}

/* Run one case in a child; 1 if it behaved. The child's output is read while it runs,
 * and it is killed at the deadline: a hang is a failure, not a stuck test. */
static int run_case(const char *self, const env_case *c)
{
    int fds[2];
    if (pipe(fds) != 0) return 0;
    pid_t pid = fork();
    if (pid < 0) return 0;
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        for (int i = 0; i < 3 && c->env[i]; i++) putenv((char *)c->env[i]);
        execl(self, self, "child", c->action, c->arg ? c->arg : "", c->want ? c->want : "",
              (char *)NULL);
        _exit(98);
    }
    close(fds[1]);
    char out[16384];
    size_t len = 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int hung = 0;
    for (;;) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double left = 30.0 - ((double)(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9);
        if (left <= 0) { hung = 1; kill(pid, SIGKILL); break; }
        struct pollfd p = {fds[0], POLLIN, 0};
        int r = poll(&p, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) continue;
        ssize_t n = read(fds[0], out + len, sizeof out - 1 - len);
        if (n <= 0) break;                   /* EOF: the child is done (or closed its fds) */
        len += (size_t)n;
        if (len == sizeof out - 1) break;
    }
    out[len] = 0;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    int ok = !hung && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    for (int i = 0; i < 4 && c->frags[i]; i++) ok = ok && strstr(out, c->frags[i]);
    if (c->warnings >= 0) ok = ok && count(out, "[hwrt warn]") == c->warnings;
    if (!ok)
        fprintf(stderr, "FAIL %s (%s %s): %s, exit %d, %d warning(s); output:\n%s\n", c->env[0],
                c->action, c->arg ? c->arg : "", hung ? "HUNG (killed after 30 s)" : "ran",
                WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status),
                count(out, "[hwrt warn]"), out);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && !strcmp(argv[1], "child"))
        return child(argv[2], argv[3], argv[4]);
    int have_ocl = opencl_available();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const env_case *c = &cases[i];
        TEST_CASE(c->env[0]);
        if (c->need_opencl && !have_ocl) {
            printf("skipped %s: no OpenCL driver\n", c->env[0]);
            continue;
        }
        EXPECT(run_case("/proc/self/exe", c));
    }
    return test_report();
}
