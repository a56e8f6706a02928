/* The disk tier is private (issue 15, case 6): another local user can neither redirect
 * the process's writes (symlinks), nor read or edit a tensor's bytes (pre-created or
 * opened files); an edit of the file's bytes is caught by the checksum (HWRT_ERROR_IO
 * naming the tensor and the file, never data); write errors carry the real errno text;
 * a long offload_path is used in full; nothing is left behind after hwrt_shutdown, a
 * normal exit, or a SIGKILL; the default offload_path is /var/tmp.
 * Child processes (this binary, re-executed) test the exit paths. */
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { N = 512 * 1024 };                      /* 2 MiB float32 tensors */
#define MiB (1u << 20)
#define T (2 * MiB)

static int64_t shape[1] = {N};
static float buf[N];

/* A fresh session: a device budget of two tensors and a half, tiers of the sizes given. */
static void session_tiers(const char *path, size_t cpu, size_t disk, int pinned)
{
    hwrt_shutdown();
    OK(hwrt_set_device("sim", 0));
    hwrt_offload_config c = {.enabled = 1, .max_device_memory = 2 * T + T / 2,
                             .offload_cpu_size = cpu, .offload_disk_size = disk,
                             .offload_path = path, .enable_pinned_mem = pinned};
    OK(hwrt_set_offload_config(&c));
}

static void session(const char *path) { session_tiers(path, 0, 256 * MiB, 1); }

static float val(float base, int i) { return base + (float)(i % 1000); }

static hwrt_tensor make(float base)
{
    for (int i = 0; i < N; i++) buf[i] = val(base, i);
    hwrt_tensor t = NULL;
    OK(hwrt_tensor_from_host(&t, HWRT_FLOAT32, 1, shape, buf));
    OK(hwrt_tensor_set_offloadable(t, 1));
    return t;
}

/* t reads back (successfully) as scale * val(base, i) everywhere */
static int holds_scaled(hwrt_tensor t, float base, float scale)
{
    memset(buf, 0, sizeof buf);
    hwrt_status st = hwrt_tensor_copy_to_host(t, buf, sizeof buf);
    if (st != HWRT_SUCCESS) {
        fprintf(stderr, "  [%s] read failed: %s: %s\n", t_case, hwrt_status_name(st),
                hwrt_last_error());
        return 0;
    }
    for (int i = 0; i < N; i++)
        if (buf[i] != scale * val(base, i)) {
            fprintf(stderr, "  [%s] wrong data with success at [%d]: %g, want %g\n", t_case, i,
                    buf[i], scale * val(base, i));
            return 0;
        }
    return 1;
}

static int holds(hwrt_tensor t, float base) { return holds_scaled(t, base, 1.0f); }

static int where(hwrt_tensor t)
{
    int w = -1;
    OK(hwrt_offload_location(t, &w));
    return w;
}

/* Entries of path (not . and ..); files: regular files and symlinks only, recursively. */
static int count(const char *path, int files_only)
{
    DIR *d = opendir(path);
    if (!d) return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        struct stat sb;
        if (lstat(p, &sb) != 0) continue;
        if (S_ISDIR(sb.st_mode)) n += (files_only ? 0 : 1) + count(p, files_only);
        else n++;
    }
    closedir(d);
    return n;
}

static void rm_rf(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        for (struct dirent *e; (e = readdir(d));) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char p[PATH_MAX];
            snprintf(p, sizeof p, "%s/%s", path, e->d_name);
            struct stat sb;
            if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode)) rm_rf(p);
            else unlink(p);
        }
        closedir(d);
    }
    rmdir(path);
}

static void fresh_dir(char *out, size_t len, const char *base, const char *name)
{
    snprintf(out, len, "%s/%s", base, name);
    rm_rf(out);
    mkdir(out, 0755);
}

/* Three tensors on a budget of two and a half: the first goes to the disk tier. */
static void evict_one(hwrt_tensor t[3])
{
    t[0] = make(1.0f);
    t[1] = make(2.0f);
    t[2] = make(3.0f);
    EXPECT(where(t[0]) == 2);
}

static void release3(hwrt_tensor t[3])
{
    for (int k = 0; k < 3; k++) OK(hwrt_tensor_release(t[k]));
}

/* The name the tier file had in the 583322e layout, and any file this process holds open
 * under dir: what another user (or the test, standing in for one) could reach. */
static int open_tier_fd(const char *dir, int flags)
{
    DIR *d = opendir("/proc/self/fd");
    int found = -1;
    for (struct dirent *e; d && (e = readdir(d)) && found < 0;) {
        char link[64], target[PATH_MAX];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0) continue;
        target[n] = 0;
        if (strstr(target, dir) == target) found = open(link, flags);
    }
    if (d) closedir(d);
    if (found >= 0) return found;
    /* not held open: a named file under dir */
    DIR *dd = opendir(dir);
    for (struct dirent *e; dd && (e = readdir(dd)) && found < 0;) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (lstat(p, &sb) == 0 && S_ISREG(sb.st_mode)) found = open(p, flags);
    }
    if (dd) closedir(dd);
    return found;
}

static void private_dir(const char *base)
{
    char dir[PATH_MAX];
    fresh_dir(dir, sizeof dir, base, "private");
    session(dir);
    hwrt_tensor t[3];
    evict_one(t);
    /* offload_path holds one entry: a 0700 directory of ours named hwrt-offload-XXXXXX,
     * itself empty (the file was unlinked at once) */
    DIR *d = opendir(dir);
    int entries = 0, ok = 0;
    char sub[PATH_MAX] = "";
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        entries++;
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        struct stat sb;
        ok = !strncmp(e->d_name, "hwrt-offload-", 13) && strlen(e->d_name) == 19 &&
             lstat(sub, &sb) == 0 && S_ISDIR(sb.st_mode) && (sb.st_mode & 0777) == 0700 &&
             sb.st_uid == getuid();
    }
    if (d) closedir(d);
    EXPECT(entries == 1 && ok);
    EXPECT(sub[0] && count(sub, 0) == 0);
    /* the open file: regular, 0600, close-on-exec, nameless */
    int found = 0;
    DIR *fds = opendir("/proc/self/fd");
    for (struct dirent *e; fds && (e = readdir(fds));) {
        char link[64], target[PATH_MAX];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0) continue;
        target[n] = 0;
        if (strstr(target, dir) != target) continue;
        int fd = atoi(e->d_name);
        struct stat sb;
        found = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (sb.st_mode & 0777) == 0600 &&
                sb.st_nlink == 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC) && strstr(target, "(deleted)");
    }
    if (fds) closedir(fds);
    EXPECT(found);
    EXPECT(holds(t[0], 1.0f));
    release3(t);
    OK(hwrt_shutdown());
    EXPECT(count(dir, 0) == 0);
}

/* Symlinks planted where 583322e put its files must not be followed. */
static void planted_symlinks(const char *base)
{
    char dir[PATH_MAX], victim[PATH_MAX];
    fresh_dir(dir, sizeof dir, base, "symlinks");
    snprintf(victim, sizeof victim, "%s/victim", base);
    FILE *f = fopen(victim, "w");
    fputs("precious", f);
    fclose(f);
    for (int k = 1; k <= 256; k++) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/hwrt-offload-%d-%d.bin", dir, (int)getpid(), k);
        EXPECT(symlink(victim, p) == 0);
    }
    session(dir);
    hwrt_tensor t[3];
    evict_one(t);
    char got[32] = "";
    f = fopen(victim, "r");
    EXPECT(f && fgets(got, sizeof got, f));
    if (f) fclose(f);
    EXPECT(!strcmp(got, "precious"));
    EXPECT(holds(t[0], 1.0f));
    release3(t);
    OK(hwrt_shutdown());
    unlink(victim);
}

/* Files pre-created (mode 0666) under the names 583322e used: never written to, so the
 * "other user" reads nothing and edits nothing that is fetched. */
static void precreated_files(const char *base)
{
    char dir[PATH_MAX];
    fresh_dir(dir, sizeof dir, base, "precreated");
    char names[256][PATH_MAX / 8];
    for (int k = 0; k < 256; k++) {
        snprintf(names[k], sizeof names[k], "%s/hwrt-offload-%d-%d.bin", dir, (int)getpid(), k + 1);
        int fd = open(names[k], O_CREAT | O_WRONLY, 0666);
        fchmod(fd, 0666);
        close(fd);
    }
    session(dir);
    hwrt_tensor t[3];
    evict_one(t);
    int leaked = 0;
    for (int k = 0; k < 256; k++) {
        int fd = open(names[k], O_RDWR);
        struct stat sb;
        if (fd >= 0 && fstat(fd, &sb) == 0 && sb.st_size > 0) {
            leaked++;                            /* readable by the other user: edit it */
            float junk[1024];
            for (int i = 0; i < 1024; i++) junk[i] = -1.0f;
            if (pwrite(fd, junk, sizeof junk, 0) < 0) perror("pwrite");
        }
        if (fd >= 0) close(fd);
    }
    EXPECT(leaked == 0);
    EXPECT(holds(t[0], 1.0f));
    release3(t);
    OK(hwrt_shutdown());
}

/* Overwrite 4 bytes inside the tier file's first region (at 4096), behind the runtime's
 * back, as another user could. */
static void tamper_first_region(const char *dir)
{
    int fd = open_tier_fd(dir, O_RDWR);
    EXPECT(fd >= 0);
    if (fd >= 0) {
        float junk = 12345.0f;
        EXPECT(pwrite(fd, &junk, sizeof junk, 4096) == (ssize_t)sizeof junk);
        close(fd);
    }
}

/* Bytes changed behind the runtime's back: the fetch fails with HWRT_ERROR_IO naming the
 * tensor and the file, and returns no data. */
static void tampered_bytes(const char *base)
{
    char dir[PATH_MAX];
    fresh_dir(dir, sizeof dir, base, "tampered");
    session(dir);
    hwrt_tensor t[3];
    evict_one(t);
    tamper_first_region(dir);
    for (int i = 0; i < N; i++) buf[i] = 0;
    hwrt_status st = hwrt_tensor_copy_to_host(t[0], buf, sizeof buf);
    const char *e = hwrt_last_error();
    EXPECT(st == HWRT_ERROR_IO);
    EXPECT(strstr(e, "checksum") && strstr(e, "tensor 0x") && strstr(e, dir));
    EXPECT(strstr(e, "(float32[524288], 2.00 MiB)"));    /* its dtype, shape and size */
    int zero = 1;
    for (int i = 0; i < N; i++) zero &= buf[i] == 0;
    EXPECT(zero);                                /* nothing was handed out */
    EXPECT(where(t[0]) == 2);                    /* and nothing changed */
    release3(t);
    OK(hwrt_shutdown());
}

/* With a learned order (auto_offload, prefetch_depth 1) a successful use of a prefetches b,
 * the next tensor in the order; a fetch that fails (a tampered disk-tier region) starts no
 * prefetch: b stays on the disk tier (offload_api.c:129, whose `||` form prefetched after
 * the failure). */
static void no_prefetch_after_failed_fetch(const char *base)
{
    char dir[PATH_MAX], depth[32] = "", autoo[32] = "";
    fresh_dir(dir, sizeof dir, base, "learned");
    session(dir);
    OK(hwrt_get_config("prefetch_depth", depth, sizeof depth));
    OK(hwrt_get_config("auto_offload", autoo, sizeof autoo));
    OK(hwrt_set_config("auto_offload", "1"));
    OK(hwrt_set_config("prefetch_depth", "1"));
    hwrt_tensor a = make(1.0f), b = make(2.0f);
    OK(hwrt_op_scale(a, a, 1.0, NULL));          /* the step's order: a, b */
    OK(hwrt_op_scale(b, b, 1.0, NULL));
    OK(hwrt_offload_step());
    OK(hwrt_device_synchronize());
    OK(hwrt_offload_evict(a));                   /* a first: the file's first region */
    OK(hwrt_offload_evict(b));
    EXPECT(where(a) == 2 && where(b) == 2);
    /* a successful use of a, the first of the order, prefetches b (seed 3009's
     * offload_plan.c:158, `order_pos < 0` made `<= 0`, took position 0 for unknown) */
    OK(hwrt_op_scale(a, a, 1.0, NULL));
    OK(hwrt_device_synchronize());
    EXPECT(where(b) == 0);
    EXPECT(holds(a, 1.0f) && holds(b, 2.0f));
    OK(hwrt_offload_evict(b));
    EXPECT(where(a) == 0 && where(b) == 2);
    /* prefetch_depth 0 prefetches nothing (offload_plan.c `depth <= 0` made `< 0` fetched
     * one), nor does a use with auto_offload off, the order learned before or not
     * (`!learned() || order_pos < 0` made `&&`; sweep of offload_plan.c) */
    OK(hwrt_set_config("prefetch_depth", "0"));
    OK(hwrt_op_scale(a, a, 1.0, NULL));
    OK(hwrt_device_synchronize());
    EXPECT(where(b) == 2);
    OK(hwrt_set_config("prefetch_depth", "1"));
    OK(hwrt_set_config("auto_offload", "0"));
    OK(hwrt_op_scale(a, a, 1.0, NULL));
    OK(hwrt_device_synchronize());
    EXPECT(where(b) == 2);
    OK(hwrt_set_config("auto_offload", "1"));
    OK(hwrt_offload_evict(a));
    hwrt_offload_stats s0, s1;
    OK(hwrt_offload_stats_get(&s0));
    tamper_first_region(dir);
    FAILS(hwrt_op_scale(a, a, 1.0, NULL), HWRT_ERROR_IO, "checksum");
    OK(hwrt_device_synchronize());
    OK(hwrt_offload_stats_get(&s1));
    EXPECT(where(b) == 2);                       /* no prefetch after the failure */
    EXPECT(s1.fetches_from_disk == s0.fetches_from_disk);
    OK(hwrt_tensor_release(a));
    OK(hwrt_tensor_release(b));
    OK(hwrt_set_config("auto_offload", autoo));
    OK(hwrt_set_config("prefetch_depth", depth));
    OK(hwrt_shutdown());
}

/* The tier file cut short behind the runtime's back (issue 25: the short-read check of a
 * disk-tier fetch): the fetch fails with HWRT_ERROR_IO saying the file ends early, hands
 * out no data and leaves the tensor on the disk tier. An alarm turns a read loop that
 * never notices the end of the file into a failure instead of a hang. */
static void truncated_file(const char *base)
{
    char dir[PATH_MAX];
    fresh_dir(dir, sizeof dir, base, "truncated");
    session(dir);
    hwrt_tensor t[3];
    evict_one(t);
    /* room on the device, so that the fetch evicts nothing (a write past the cut would
     * fill it with a hole, which the checksum, not the short-read check, catches) */
    OK(hwrt_tensor_release(t[1]));
    OK(hwrt_tensor_release(t[2]));
    int fd = open_tier_fd(dir, O_RDWR);
    EXPECT(fd >= 0);
    if (fd >= 0) {
        EXPECT(ftruncate(fd, 4096) == 0);
        close(fd);
    }
    for (int i = 0; i < N; i++) buf[i] = 0;
    alarm(20);
    hwrt_status st = hwrt_tensor_copy_to_host(t[0], buf, sizeof buf);
    alarm(0);
    const char *e = hwrt_last_error();
    EXPECT(st == HWRT_ERROR_IO);
    EXPECT(strstr(e, "ends early") && strstr(e, "tensor 0x") && strstr(e, dir));
    int zero = 1;
    for (int i = 0; i < N; i++) zero &= buf[i] == 0;
    EXPECT(zero);                                /* nothing was handed out */
    EXPECT(where(t[0]) == 2);                    /* and nothing changed */
    OK(hwrt_tensor_release(t[0]));
    OK(hwrt_shutdown());
}

/* A tier of exactly two tensors, host or disk, takes two (the sweep of res_evict.c:
 * `host_used + n <= cpu` and `disk_used + n <= disk` made `<` refused the second); a third
 * finds it full: the allocation that needed the eviction is refused, and every tensor
 * still reads back right. */
static void tier_exact_fit(const char *base)
{
    for (int disk = 0; disk < 2; disk++) {
        char dir[PATH_MAX];
        fresh_dir(dir, sizeof dir, base, disk ? "exact-disk" : "exact-host");
        session_tiers(dir, disk ? 0 : 2 * T, disk ? 2 * T : 0, 1);
        hwrt_tensor t[4];
        t[0] = make(1.0f);
        t[1] = make(2.0f);
        t[2] = make(3.0f);                       /* t0 to the tier */
        t[3] = make(4.0f);                       /* t1 to the tier: it is full */
        EXPECT(where(t[0]) == 1 + disk && where(t[1]) == 1 + disk);
        for (int i = 0; i < N; i++) buf[i] = 5.0f;
        hwrt_tensor u = NULL;                    /* no room anywhere for a fifth */
        hwrt_status st = hwrt_tensor_from_host(&u, HWRT_FLOAT32, 1, shape, buf);
        EXPECT(st == HWRT_ERROR_OUT_OF_MEMORY && u == NULL);
        EXPECT(holds(t[2], 3.0f) && holds(t[3], 4.0f));
        OK(hwrt_tensor_release(t[2]));           /* room to fetch without evicting: */
        OK(hwrt_tensor_release(t[3]));           /* the full tier takes nothing more */
        EXPECT(holds(t[0], 1.0f) && holds(t[1], 2.0f));
        OK(hwrt_tensor_release(t[0]));
        OK(hwrt_tensor_release(t[1]));
        OK(hwrt_shutdown());
    }
}

static atomic_int gate_open;
static void *open_later(void *a) { (void)a; usleep(300000); atomic_store(&gate_open, 1); return NULL; }

/* A written victim still used by queued work is saved in stream order into a host tier
 * that this save fills exactly: the host does not wait for the victim (the sweep of
 * res_handover.c: `host_used + nbytes <=` made `<` in can_write_back_in_order made the
 * host wait for the victim's queued work instead). Without enable_pinned_mem the host
 * tier is pageable and a save blocks the host: it waits for the victim's work first
 * (`return 0` made `return 1` there saved it in order, into pinned memory). */
static void write_back_exact_fit(const char *base, int pinned)
{
    char dir[PATH_MAX];
    fresh_dir(dir, sizeof dir, base, pinned ? "inorder" : "inorder-pageable");
    session_tiers(dir, 2 * T, 0, pinned);
    hwrt_tensor a = make(1.0f);
    OK(hwrt_offload_evict(a));                   /* the host tier holds one of two */
    hwrt_tensor v = make(2.0f), p = NULL;
    OK(hwrt_tensor_empty(&p, HWRT_FLOAT32, 1, shape));   /* the budget is full */
    OK(hwrt_op_scale(v, v, 2.0, NULL));          /* v written */
    OK(hwrt_stream_synchronize(NULL));
    hwrt_stream s2;
    OK(hwrt_stream_create(&s2, 0));
    atomic_store(&gate_open, 0);
    pthread_t th;                                /* a host that waited would wait for this */
    pthread_create(&th, NULL, open_later, NULL);
    OK(hwrt_launch_host_func(NULL, harness_gate, &gate_open));
    OK(hwrt_op_add(p, v, v, NULL));              /* v busy */
    OK(hwrt_op_scale(a, a, 1.0, s2));            /* a fetched into v's block, in order */
    hwrt_offload_stats st;
    OK(hwrt_offload_stats_get(&st));
    EXPECT(st.victim_waits == (pinned ? 0u : 1u) && st.host_bytes == 2 * T);
    pthread_join(th, NULL);
    OK(hwrt_device_synchronize());
    EXPECT(holds(a, 1.0f));
    OK(hwrt_stream_destroy(s2));
    EXPECT(holds_scaled(v, 2.0f, 2.0f));
    OK(hwrt_tensor_release(a));
    OK(hwrt_tensor_release(v));
    OK(hwrt_tensor_release(p));
    OK(hwrt_shutdown());
}

/* A write the file system refuses part-way (RLIMIT_FSIZE: a short count, then EFBIG):
 * the error names the real cause, the tensor stays on the device, a retry works. */
static void write_error_text(const char *base)
{
    char dir[PATH_MAX];
    fresh_dir(dir, sizeof dir, base, "fsize");
    session(dir);
    hwrt_tensor t[2] = {make(1.0f), make(2.0f)};
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = MiB;                          /* half a tensor */
    setrlimit(RLIMIT_FSIZE, &lim);
    hwrt_status st = hwrt_offload_evict(t[0]);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", hwrt_last_error());
    setrlimit(RLIMIT_FSIZE, &old);
    EXPECT(st == HWRT_ERROR_IO);
    EXPECT(strstr(msg, strerror(EFBIG)) && !strstr(msg, "Success"));
    if (!strstr(msg, strerror(EFBIG))) fprintf(stderr, "  got: %s\n", msg);
    EXPECT(where(t[0]) == 0);
    EXPECT(holds(t[0], 1.0f));
    OK(hwrt_offload_evict(t[0]));
    EXPECT(where(t[0]) == 2);
    EXPECT(holds(t[0], 1.0f));
    OK(hwrt_tensor_release(t[0]));
    OK(hwrt_tensor_release(t[1]));
    OK(hwrt_shutdown());
}

/* An offload_path of ~500 bytes is used in full; one past the limit is a clear error. */
static void long_path(const char *base)
{
    char dir[PATH_MAX];
    fresh_dir(dir, sizeof dir, base, "long");
    char comp[51];
    memset(comp, 'd', 50);
    comp[50] = 0;
    while (strlen(dir) + 51 < 500) {
        strcat(dir, "/");
        strcat(dir, comp);
        mkdir(dir, 0755);
    }
    EXPECT(strlen(dir) > 480);
    session(dir);
    hwrt_tensor t[3];
    evict_one(t);
    EXPECT(count(dir, 0) == 1);                  /* the private directory is in it */
    EXPECT(holds(t[0], 1.0f));
    release3(t);
    char too[700];
    snprintf(too, sizeof too, "%s/%s/%s", dir, comp, comp);
    hwrt_offload_config c = {.enabled = 1, .offload_path = too};
    FAILS(hwrt_set_offload_config(&c), HWRT_ERROR_INVALID_ARGUMENT, "bytes long");
    OK(hwrt_shutdown());
}

/* A child process evicts to the disk tier, then exits without hwrt_shutdown or is
 * killed with SIGKILL: no tier file (or, after exit, directory) may be left. */
static void child_exit(const char *base, const char *mode)
{
    char dir[PATH_MAX];
    fresh_dir(dir, sizeof dir, base, mode);
    int pfd[2];
    EXPECT(pipe(pfd) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pfd[1], 1);
        execl("/proc/self/exe", "test_offload_disk", "--child", mode, dir, (char *)NULL);
        _exit(127);
    }
    close(pfd[1]);
    char line[16] = "";
    ssize_t n = read(pfd[0], line, sizeof line - 1);
    EXPECT(n > 0 && !strncmp(line, "ready", 5));
    if (!strcmp(mode, "kill")) kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    close(pfd[0]);
    EXPECT(count(dir, 1) == 0);                  /* no data anywhere below offload_path */
    if (!strcmp(mode, "exit")) EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0 && count(dir, 0) == 0);
}

static int child(const char *mode, const char *dir)
{
    setenv("HWRT_SIM_MEMORY", "64MB", 1);
    setenv("HWRT_SIM_OVERHEAD", "4MB", 1);
    session(dir);
    hwrt_tensor t[3];
    evict_one(t);
    if (t_failed) return 1;
    printf("ready\n");
    fflush(stdout);
    if (!strcmp(mode, "kill")) pause();
    return 0;                                    /* exit with the tensors alive */
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--child")) return child(argv[2], argv[3]);
    TEST_CASE("default offload_path");
    hwrt_offload_config c;
    OK(hwrt_get_offload_config(&c));
    EXPECT(!strcmp(c.offload_path, "/var/tmp"));

    setenv("HWRT_SIM_MEMORY", "64MB", 1);
    setenv("HWRT_SIM_OVERHEAD", "4MB", 1);
    char base[] = "/tmp/hwrt-offload-disk-XXXXXX";
    if (!mkdtemp(base)) { perror("mkdtemp"); return 1; }
    TEST_CASE("6 private directory, nameless 0600 file");
    private_dir(base);
    TEST_CASE("6 planted symlinks are not followed");
    planted_symlinks(base);
    TEST_CASE("6 pre-created files are not used");
    precreated_files(base);
    TEST_CASE("6 edited bytes fail the checksum");
    tampered_bytes(base);
    TEST_CASE("25 a truncated tier file is noticed");
    truncated_file(base);
    TEST_CASE("25 a learned prefetch after a use, none after a failed fetch");
    no_prefetch_after_failed_fetch(base);
    TEST_CASE("25 a tier of exactly two tensors takes two");
    tier_exact_fit(base);
    TEST_CASE("25 an in-order write-back that fills the host tier exactly");
    write_back_exact_fit(base, 1);
    TEST_CASE("25 no in-order write-back into a pageable host tier");
    write_back_exact_fit(base, 0);
    TEST_CASE("6 write errors carry the errno text");
    write_error_text(base);
    TEST_CASE("6 long offload_path used in full");
    long_path(base);
    TEST_CASE("6 nothing left after exit without shutdown");
    child_exit(base, "exit");
    TEST_CASE("6 no data left after SIGKILL");
    child_exit(base, "kill");
    hwrt_shutdown();
    rm_rf(base);
    return test_report();
}
