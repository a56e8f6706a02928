/* Per-process pool figures on NVIDIA devices, published as files (see cuda_usage.h). */
#define _GNU_SOURCE 1
#include "cuda_usage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "hwrt-cuda-usage 1"

static void board_dir(char *buf, size_t len)
{
    const char *env = getenv("HWRT_CUDA_USAGE_DIR");
    if (env && *env) snprintf(buf, len, "%s", env);
    else snprintf(buf, len, "/dev/shm/hwrt-cuda-%u", (unsigned)getuid());
}

/* The directory is ours, a real directory, mode 0700. */
static int dir_ok(const char *dir, char *why, size_t len)
{
    struct stat st;
    if (lstat(dir, &st) != 0) {
        snprintf(why, len, "%s: %s", dir, strerror(errno));
        return 0;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 0777) != 0700) {
        snprintf(why, len, "%s is not a directory of user %u with mode 0700 (remove it, or set "
                 "HWRT_CUDA_USAGE_DIR to one)", dir, (unsigned)getuid());
        return 0;
    }
    return 1;
}

/* Start time of pid (clock ticks since boot, /proc/<pid>/stat field 22); 0 if unknown. */
static unsigned long long start_time(int pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');          /* the name may hold spaces and parentheses */
    if (!p) return 0;
    unsigned long long v = 0;
    /* after ") ": state(3) ... starttime(22): skip 19 fields */
    p++;
    for (int field = 3; field < 22 && p; field++) p = strchr(p + 1, ' ');
    if (!p || sscanf(p, " %llu", &v) != 1) return 0;
    return v;
}

static void file_name(char *buf, size_t len, const char *dir, int pid, hwi_pci_loc loc)
{
    snprintf(buf, len, "%s/%d-%04x_%02x_%02x", dir, pid, loc.domain, loc.bus, loc.device);
}

/* Files of processes that are gone (their pid is free). */
static void sweep(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end != '-' || pid <= 0) continue;
        if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    }
    closedir(d);
}

void hwi_cuda_usage_publish(hwi_pci_loc loc, size_t reserved, size_t allocated)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static int state;            /* 0 not tried, 1 usable, -1 unusable (warned once) */
    static unsigned long long me_start;
    char dir[3800], why[4096];
    board_dir(dir, sizeof dir);
    pthread_mutex_lock(&mu);
    if (state == 0) {
        if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
            snprintf(why, sizeof why, "%s: %s", dir, strerror(errno));
            state = -1;
        } else {
            state = dir_ok(dir, why, sizeof why) ? 1 : -1;
        }
        if (state < 0)
            fprintf(stderr, "[hwrt warn] cuda usage board: %s; hwrt-smi will show this "
                    "process's NVML figures without its pool's\n", why);
        else {
            sweep(dir);
            me_start = start_time(getpid());
        }
    }
    if (state == 1) {
        char path[4096], tmp[4200];
        file_name(path, sizeof path, dir, getpid(), loc);
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
            char line[160];
            int n = snprintf(line, sizeof line, MAGIC " %llu %zu %zu\n", me_start, reserved,
                             allocated < reserved ? allocated : reserved);
            int ok = write(fd, line, (size_t)n) == n;
            ok &= close(fd) == 0;
            if (!ok || rename(tmp, path) != 0) unlink(tmp);
        }
    }
    pthread_mutex_unlock(&mu);
}

int hwi_cuda_usage_read(int pid, hwi_pci_loc loc, size_t *reserved, size_t *allocated,
                        char *why, size_t whylen)
{
    char dir[3800], path[4096];
    board_dir(dir, sizeof dir);
    file_name(path, sizeof path, dir, pid, loc);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return 0;
        snprintf(why, whylen, "usage file %s: %s", path, strerror(errno));
        return -1;
    }
    if (!dir_ok(dir, why, whylen)) {
        close(fd);
        return -1;
    }
    struct stat st;
    char buf[256];
    ssize_t n = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == getuid() &&
        (st.st_mode & 0777) == 0600)
        n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n < 0) {
        snprintf(why, whylen, "usage file %s is not a regular file of user %u with mode 0600",
                 path, (unsigned)getuid());
        return -1;
    }
    buf[n] = 0;
    unsigned long long t, r, a;
    int used = 0;
    if (sscanf(buf, MAGIC " %llu %llu %llu\n%n", &t, &r, &a, &used) != 3 || used != n ||
        a > r) {
        snprintf(why, whylen, "usage file %s failed validation and was ignored", path);
        return -1;
    }
    unsigned long long now = start_time(pid);
    if (!now || now != t) return 0;          /* another process has this pid now */
    *reserved = (size_t)r;
    *allocated = (size_t)a;
    return 1;
}
