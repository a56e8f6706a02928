/* Per-process pool figures, published as files (see usage_board.h). */
#define _GNU_SOURCE 1
#include "usage_board.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void board_dir(const hwi_usage_board *b, char *buf, size_t len)
{
    const char *env = getenv(b->env);
    if (env && *env) snprintf(buf, len, "%s", env);
    else snprintf(buf, len, "/dev/shm/hwrt-%s-%u", b->backend, (unsigned)getuid());
}

/* The directory is ours, a real directory, mode 0700. */
static int dir_ok(const hwi_usage_board *b, const char *dir, char *why, size_t len)
{
    struct stat st;
    if (lstat(dir, &st) != 0) {
        snprintf(why, len, "%s: %s", dir, strerror(errno));
        return 0;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 0777) != 0700) {
        snprintf(why, len, "%s is not a directory of user %u with mode 0700 (remove it, or set "
                 "%s to one)", dir, (unsigned)getuid(), b->env);
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

static void file_name(char *buf, size_t len, const char *dir, int pid, const char *key)
{
    snprintf(buf, len, "%s/%d-%s", dir, pid, key);
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

void hwi_usage_publish(hwi_usage_board *b, const char *key, size_t reserved, size_t allocated)
{
    char dir[3800], why[4096];
    board_dir(b, dir, sizeof dir);
    pthread_mutex_lock(&b->mu);
    if (b->state == 0) {
        if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
            snprintf(why, sizeof why, "%s: %s", dir, strerror(errno));
            b->state = -1;
        } else {
            b->state = dir_ok(b, dir, why, sizeof why) ? 1 : -1;
        }
        if (b->state < 0)
            fprintf(stderr, "[hwrt warn] %s usage board: %s; hwrt-smi will show this "
                    "process's %s figures without its pool's\n", b->backend, why, b->driver);
        else {
            sweep(dir);
            b->me_start = start_time(getpid());
        }
    }
    if (b->state == 1) {
        char path[4096], tmp[4200];
        file_name(path, sizeof path, dir, getpid(), key);
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
            char line[160];
            int n = snprintf(line, sizeof line, "hwrt-%s-usage 1 %llu %zu %zu\n", b->backend,
                             b->me_start, reserved, allocated < reserved ? allocated : reserved);
            int ok = write(fd, line, (size_t)n) == n;
            ok &= close(fd) == 0;
            if (!ok || rename(tmp, path) != 0) unlink(tmp);
        }
    }
    pthread_mutex_unlock(&b->mu);
}

int hwi_usage_read(const hwi_usage_board *b, int pid, const char *key, size_t *reserved,
                   size_t *allocated, char *why, size_t whylen)
{
    char dir[3800], path[4096];
    board_dir(b, dir, sizeof dir);
    file_name(path, sizeof path, dir, pid, key);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return 0;
        snprintf(why, whylen, "usage file %s: %s", path, strerror(errno));
        return -1;
    }
    if (!dir_ok(b, dir, why, whylen)) {
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
    char fmt[64];
    snprintf(fmt, sizeof fmt, "hwrt-%s-usage 1 %%llu %%llu %%llu\n%%n", b->backend);
    if (sscanf(buf, fmt, &t, &r, &a, &used) != 3 || used != n || a > r) {
        snprintf(why, whylen, "usage file %s failed validation and was ignored", path);
        return -1;
    }
    unsigned long long now = start_time(pid);
    if (!now || now != t) return 0;          /* another process has this pid now */
    *reserved = (size_t)r;
    *allocated = (size_t)a;
    return 1;
}

int hwi_usage_reconcile(const hwi_usage_board *b, const char *key, int device,
                        hwrt_smi_process *p, char *why, size_t whylen)
{
    size_t resv = 0, alloc = 0;
    int got = hwi_usage_read(b, p->pid, key, &resv, &alloc, why, whylen);
    if (got <= 0) return got;
    /* the pool's segments are inside the driver's figure; what is left is the context,
     * the kernels' modules and anything outside the pool */
    p->reserved = resv < p->used ? resv : p->used;
    p->allocated = alloc < p->reserved ? alloc : p->reserved;
    p->overhead = p->used - p->reserved;
    if (resv <= p->used) return 0;
    snprintf(why, whylen, "pid %d: its pool says %zu bytes reserved on device %d but %s "
             "counts %zu for it; shown clamped", p->pid, resv, device, b->driver, p->used);
    return -1;
}

void hwi_usage_proc_name(int pid, char *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", pid);
    FILE *f = fopen(path, "r");
    buf[0] = 0;
    if (f) {
        if (fgets(buf, (int)len, f)) buf[strcspn(buf, "\n")] = 0;
        fclose(f);
    }
    if (!buf[0]) snprintf(buf, len, "?");
}

void hwi_smi_warn(hwrt_smi_snapshot *out, const char *fmt, ...)
{
    size_t o = strlen(out->warnings);
    if (o >= sizeof out->warnings - 1) return;
    if (o) o += (size_t)snprintf(out->warnings + o, sizeof out->warnings - o, "; ");
    if (o >= sizeof out->warnings - 1) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->warnings + o, sizeof out->warnings - o, fmt, ap);
    va_end(ap);
}
