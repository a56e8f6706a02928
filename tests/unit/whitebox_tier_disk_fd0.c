/* The disk tier when its file opens as descriptor 0 (a program started with stdin closed, as
 * daemons are): descriptor 0 is a file like any other (issue 25, a sweep of tier_disk.c and
 * seed 3006's open survivor; each `fd >= 0` / `fd < 0` test made `> 0` / `<= 0`):
 * - the tier opens on descriptor 0 and the regions written read back (open_file took 0
 *   for a failed open);
 * - later regions go into the same file: no descriptor is opened per write
 *   (hwi_disk_write reopened the tier at every region, leaking the last);
 * - a region given back in the middle of the file is punched out: the file's blocks
 *   drop (free_extent skipped the punch on 0);
 * - once the last region goes the tier is closed: descriptor 0 is free again
 *   (hwi_disk_close kept 0 open);
 * - a failing read, a read with a stale EINTR in errno, and a truncated file end.
 * White-box (hwi_disk_*, linked statically). */
#include "harness.h"
#include "offload/tier_disk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MB = 1 << 20 };

static int open_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.';
    if (d) closedir(d);
    return n - 1;                                   /* the directory stream's own */
}

static long long blocks_of_fd0(void)
{
    struct stat st;
    return fstat(0, &st) == 0 ? (long long)st.st_blocks : -1;
}

int main(void)
{
    char base[] = "/tmp/hwrt-tier-fd0-XXXXXX";
    EXPECT(mkdtemp(base) != NULL);
    OK(hwrt_set_config("offload_path", base));
    static unsigned char a[MB], b[MB], c[MB], back[MB];
    for (int i = 0; i < MB; i++) {
        a[i] = (unsigned char)(i * 7);
        b[i] = (unsigned char)(i * 13 + 1);
        c[i] = (unsigned char)(i * 31 + 2);
    }
    close(0);

    TEST_CASE("the tier file opens as descriptor 0 and reads back");
    hwi_disk_region ra = {0}, rb = {0}, rc = {0};
    OK(hwi_disk_write(&ra, a, MB, "test", "region a"));
    EXPECT(fcntl(0, F_GETFD) != -1);
    char link[512] = "";
    ssize_t n = readlink("/proc/self/fd/0", link, sizeof link - 1);
    link[n > 0 ? n : 0] = 0;
    EXPECT(strstr(link, "tier.bin") != NULL);
    if (!strstr(link, "tier.bin")) fprintf(stderr, "  descriptor 0 is %s\n", link);
    OK(hwi_disk_read(&ra, back, "test", "region a"));
    EXPECT(!memcmp(back, a, MB));

    TEST_CASE("later regions go into the same file");
    int fds = open_fds();
    OK(hwi_disk_write(&rb, b, MB, "test", "region b"));
    OK(hwi_disk_write(&rc, c, MB, "test", "region c"));
    EXPECT(open_fds() == fds);
    if (open_fds() != fds) fprintf(stderr, "  %d descriptors open, %d before\n", open_fds(), fds);
    OK(hwi_disk_read(&rb, back, "test", "region b"));
    EXPECT(!memcmp(back, b, MB));

    TEST_CASE("a region given back in the middle is punched out");
    long long before = blocks_of_fd0();
    hwi_disk_release(&rb);
    long long after = blocks_of_fd0();
    EXPECT(before > 0 && after >= 0 && before - after >= MB / 512);
    if (!(before - after >= MB / 512))
        fprintf(stderr, "  blocks %lld before the release, %lld after\n", before, after);
    OK(hwi_disk_read(&rc, back, "test", "region c"));
    EXPECT(!memcmp(back, c, MB));

    /* reads that fail or leave a stale EINTR in errno end (issue 25, a sweep of tier_disk.c:
     * `got < 0 && errno == EINTR` made `||`, `<= 0` or `!=` looped for ever on them); a
     * read that loops is ended by the alarm */
    alarm(30);
    TEST_CASE("a read failing with EBADF is an error, not a retry");
    int keep = dup(0), wo = open("/dev/null", O_WRONLY);
    EXPECT(keep > 0 && wo > 0 && dup2(wo, 0) == 0);
    FAILS(hwi_disk_read(&rc, back, "test", "region c"), HWRT_ERROR_IO, "Bad file descriptor");
    EXPECT(dup2(keep, 0) == 0);
    close(keep);
    close(wo);

    TEST_CASE("a stale EINTR in errno: the read completes");
    errno = EINTR;
    OK(hwi_disk_read(&rc, back, "test", "region c"));
    EXPECT(!memcmp(back, c, MB));

    TEST_CASE("a truncated file with a stale EINTR: the read ends early, an error");
    EXPECT(ftruncate(0, (off_t)rc.off + MB / 2) == 0);
    errno = EINTR;
    FAILS(hwi_disk_read(&rc, back, "test", "region c"), HWRT_ERROR_IO,
          "after 524288 of 1048576 bytes: the file ends early (it was truncated)");
    alarm(0);

    TEST_CASE("the last region gone: the tier is closed, descriptor 0 free");
    hwi_disk_release(&ra);
    hwi_disk_release(&rc);
    EXPECT(fcntl(0, F_GETFD) == -1);
    EXPECT(rmdir(base) == 0);                      /* its private directory went too */
    return test_report();
}
