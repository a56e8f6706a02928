/* Output files that never write through a pre-existing symlink (header-only: the
 * profiler, memory snapshots and hwrt-prof, which does not link libhwrt, share it).
 *
 * fopen(path, "w") follows a symlink planted at path (or at path.tmp) and truncates its
 * target. Instead the data goes to a new file created next to path with O_CREAT|O_EXCL|
 * O_NOFOLLOW (mode 0666 less the umask), which cannot be anything that existed before,
 * and rename() puts it at path: rename replaces a symlink at path itself, never the file
 * it points to. Readers see the old file or the whole new one, never half of it. */
#ifndef HWI_OUT_FILE_H
#define HWI_OUT_FILE_H

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

/* Open a fresh temporary for path; its name goes to tmp. NULL with errno set on failure. */
static inline FILE *hwi_out_open(const char *path, char *tmp, size_t tmplen)
{
    static _Atomic unsigned seq;
    for (int tries = 0; tries < 100; tries++) {
        int n = snprintf(tmp, tmplen, "%s.tmp.%ld.%u", path, (long)getpid(),
                         atomic_fetch_add(&seq, 1));
        if (n < 0 || (size_t)n >= tmplen) { errno = ENAMETOOLONG; return NULL; }
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0) {
            if (errno == EEXIST) continue;    /* someone's file or link: another name */
            return NULL;
        }
        FILE *f = fdopen(fd, "w");
        if (!f) { int e = errno; close(fd); unlink(tmp); errno = e; }
        return f;
    }
    errno = EEXIST;
    return NULL;
}

/* Close f and move it to path; 0, or -1 with errno (the temporary is removed). A write
 * error seen on f (disk full) fails it too. */
static inline int hwi_out_commit(FILE *f, const char *tmp, const char *path)
{
    int bad = ferror(f);
    int e = bad ? EIO : 0;
    if (fclose(f) != 0 && !e) e = errno ? errno : EIO;
    if (!e && rename(tmp, path) != 0) e = errno;
    if (e) { unlink(tmp); errno = e; return -1; }
    return 0;
}

#endif
