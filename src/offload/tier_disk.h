/* The disk tier: one file per process that nobody else can open, holding one region per
 * tensor, each with a CRC-32C verified on every read-back.
 *
 * The file lives in a private directory made with mkdtemp (mode 0700, a random name
 * "hwrt-offload-XXXXXX") under offload_path; it is created there with
 * O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, mode 0600, and unlinked at once, so no name of it
 * exists while data is in it: another user can neither plant a symlink, nor pre-create,
 * read or edit it, and even a SIGKILL leaves no data behind (at most the empty private
 * directory). The directory goes at hwrt_shutdown and at normal exit. Reads and writes
 * loop over short counts and EINTR (regions of 2 GiB and more work); errors carry the
 * real errno text. Callers hold hwi_offload.mu. */
#ifndef HWI_TIER_DISK_H
#define HWI_TIER_DISK_H

#include <hwrt.h>
#include <stddef.h>
#include <stdint.h>

typedef struct hwi_disk_region {
    uint64_t off;                /* byte offset in the tier file */
    size_t len;                  /* bytes of data (the region is rounded up to 4 KiB) */
    uint32_t crc;                /* CRC-32C of the data as written */
    int live;
} hwi_disk_region;

/* Write n bytes of buf to region *r (allocated first when !r->live). On failure *r is
 * released (not live): the caller's other copies stay authoritative. what names the
 * tensor in errors. */
hwrt_status hwi_disk_write(hwi_disk_region *r, const void *buf, size_t n, const char *api,
                           const char *what);
/* Read region r into buf and verify its checksum: HWRT_ERROR_IO naming what and the file
 * on a mismatch or a short file, never data. */
hwrt_status hwi_disk_read(const hwi_disk_region *r, void *buf, const char *api,
                          const char *what);
/* Give region r's space back (holes are punched where the file system can). */
void hwi_disk_release(hwi_disk_region *r);
/* Close the tier file and remove the private directory (shutdown, exit). */
void hwi_disk_close(void);
/* The private directory in use ("" before the first disk write), for errors and tests. */
const char *hwi_disk_dir(void);

#endif
