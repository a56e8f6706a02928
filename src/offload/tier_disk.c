/* The disk tier's file: a private directory, one unlinked file, a first-fit region
 * allocator, full-length I/O loops and CRC-32C checks (see tier_disk.h). */
#define _GNU_SOURCE
#include "tier_disk.h"
#include "crc32c.h"
#include "../base/config.h"
#include "../base/status.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ALIGN 4096u
#define CHUNK (1u << 30)               /* one read/write call moves at most 1 GiB */

typedef struct { uint64_t off, len; } extent;

static int fd = -1;
static char dir[PATH_MAX];             /* the private directory, "" when none */
static char file[PATH_MAX];            /* the name the file had (for sentences) */
static uint64_t file_end;              /* bytes handed out so far */
static extent *holes;                  /* free extents below file_end, sorted by offset */
static int nholes, capholes;
static size_t live_regions;
static int atexit_set;

const char *hwi_disk_dir(void) { return dir; }

static void at_exit(void) { hwi_disk_close(); }

void hwi_disk_close(void)
{
    if (fd >= 0) close(fd);
    fd = -1;
    if (dir[0]) rmdir(dir);
    dir[0] = file[0] = 0;
    file_end = 0;
    free(holes);
    holes = NULL;
    nholes = capholes = 0;
    live_regions = 0;
}

static hwrt_status open_file(const char *api)
{
    char base[512];
    hwi_cfg_string(HWI_CFG_OFFLOAD_PATH, base, sizeof base);
    if (snprintf(dir, sizeof dir, "%s/hwrt-offload-XXXXXX", base) >= (int)sizeof dir) {
        dir[0] = 0;
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: offload_path \"%.64s...\" (%zu bytes) is "
                       "too long for the disk tier's directory (at most %d bytes in all); choose "
                       "a shorter offload_path", api, base, strlen(base), PATH_MAX - 1);
    }
    if (!mkdtemp(dir)) {
        int err = errno;
        dir[0] = 0;
        return hwi_err(HWRT_ERROR_IO, "%s: cannot create the disk tier's private directory under "
                       "offload_path \"%s\": %s; make offload_path a writable directory or "
                       "choose another", api, base, strerror(err));
    }
    chmod(dir, 0700);                  /* mkdtemp made it 0700 already; umask cannot widen */
    snprintf(file, sizeof file, "%s/tier.bin", dir);
    fd = open(file, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        int err = errno;
        rmdir(dir);
        dir[0] = 0;
        return hwi_err(HWRT_ERROR_IO, "%s: cannot create the disk tier file %s: %s", api, file,
                       strerror(err));
    }
    unlink(file);                      /* nameless from now on: nobody else can open it */
    if (!atexit_set) { atexit(at_exit); atexit_set = 1; }
    return HWRT_SUCCESS;
}

static uint64_t rounded(size_t n) { return ((uint64_t)n + ALIGN - 1) / ALIGN * ALIGN; }

static int alloc_extent(uint64_t len, uint64_t *off)
{
    for (int i = 0; i < nholes; i++)
        if (holes[i].len >= len) {
            *off = holes[i].off;
            holes[i].off += len;
            holes[i].len -= len;
            if (!holes[i].len) memmove(&holes[i], &holes[i + 1], (size_t)(--nholes - i) * sizeof *holes);
            return 1;
        }
    *off = file_end;
    file_end += len;
    return 1;
}

static void free_extent(uint64_t off, uint64_t len)
{
#ifdef FALLOC_FL_PUNCH_HOLE
    if (fd >= 0) fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len);
#endif
    if (off + len == file_end) {       /* the tail: shrink, then swallow a hole before it */
        file_end = off;
        if (nholes && holes[nholes - 1].off + holes[nholes - 1].len == file_end)
            file_end = holes[--nholes].off;
        return;
    }
    int i = 0;
    while (i < nholes && holes[i].off < off) i++;
    if (i > 0 && holes[i - 1].off + holes[i - 1].len == off) {          /* merge left */
        holes[i - 1].len += len;
        if (i < nholes && holes[i - 1].off + holes[i - 1].len == holes[i].off) {
            holes[i - 1].len += holes[i].len;
            memmove(&holes[i], &holes[i + 1], (size_t)(--nholes - i) * sizeof *holes);
        }
        return;
    }
    if (i < nholes && off + len == holes[i].off) {                      /* merge right */
        holes[i].off = off;
        holes[i].len += len;
        return;
    }
    if (nholes == capholes) {
        int nc = capholes ? capholes * 2 : 16;
        extent *nh = realloc(holes, (size_t)nc * sizeof *nh);
        if (!nh) return;               /* the space is lost to this file until it closes */
        holes = nh;
        capholes = nc;
    }
    memmove(&holes[i + 1], &holes[i], (size_t)(nholes - i) * sizeof *holes);
    holes[i] = (extent){off, len};
    nholes++;
}

void hwi_disk_release(hwi_disk_region *r)
{
    if (!r->live) return;
    free_extent(r->off, rounded(r->len));
    r->live = 0;
    if (--live_regions == 0 && fd >= 0) {
        /* empty: let the next write start afresh (and under a new offload_path) */
        hwi_disk_close();
    }
}

hwrt_status hwi_disk_write(hwi_disk_region *r, const void *buf, size_t n, const char *api,
                           const char *what)
{
    if (!r->live) {
        if (fd < 0) HWI_TRY(open_file(api));
        uint64_t off;
        alloc_extent(rounded(n), &off);
        *r = (hwi_disk_region){.off = off, .len = n, .live = 1};
        live_regions++;
    }
    const char *p = buf;
    size_t done = 0;
    while (done < n) {
        size_t want = n - done < CHUNK ? n - done : CHUNK;
        ssize_t w = pwrite(fd, p + done, want, (off_t)(r->off + done));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            int err = w < 0 ? errno : ENOSPC;      /* 0 bytes written: the device is full */
            hwi_disk_release(r);
            return hwi_err(HWRT_ERROR_IO, "%s: writing %s to the disk tier file %s (in %s) "
                           "failed after %zu of %zu bytes: %s; free space under offload_path "
                           "or lower offload_disk_size", api, what, file[0] ? file : "?",
                           dir[0] ? dir : "?", done, n, strerror(err));
        }
        done += (size_t)w;
    }
    r->crc = hwi_crc32c(0, buf, n);
    return HWRT_SUCCESS;
}

hwrt_status hwi_disk_read(const hwi_disk_region *r, void *buf, const char *api, const char *what)
{
    if (!r->live || fd < 0)
        return hwi_err(HWRT_ERROR_INTERNAL, "%s: %s has no disk tier copy to read", api, what);
    char *p = buf;
    size_t done = 0, n = r->len;
    while (done < n) {
        size_t want = n - done < CHUNK ? n - done : CHUNK;
        ssize_t got = pread(fd, p + done, want, (off_t)(r->off + done));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            int err = errno;
            return hwi_err(HWRT_ERROR_IO, "%s: reading %s back from the disk tier file %s failed "
                           "after %zu of %zu bytes: %s", api, what, file, done, n,
                           got < 0 ? strerror(err) : "the file ends early (it was truncated)");
        }
        done += (size_t)got;
    }
    uint32_t c = hwi_crc32c(0, buf, n);
    if (c != r->crc)
        return hwi_err(HWRT_ERROR_IO, "%s: %s read back from the disk tier file %s does not match "
                       "its checksum (CRC-32C %08x, written %08x at offset %llu): the file was "
                       "changed or the storage corrupted it; the data is not used", api, what,
                       file, c, r->crc, (unsigned long long)r->off);
    return HWRT_SUCCESS;
}
