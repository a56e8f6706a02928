/* The pool's figures on a device that has not allocated yet, and alloc tags set, replaced,
 * cleared and refused (issue 25 item 3): stats are zeros, a peak reset and a snapshot of
 * such a device succeed (the snapshot says no blocks), a tag on a pointer hwrt did not
 * hand out is refused with a sentence, and the snapshot shows the tag a block has now. */
#include "harness.h"
#include "harness_files.h"

#include <unistd.h>

int main(void)
{
    OK(hwrt_set_device("sim", 0));
    char path[] = "/tmp/hwrt_cov_pool_stats_XXXXXX";
    int fd = mkstemp(path);
    EXPECT(fd >= 0);
    if (fd >= 0) close(fd);

    TEST_CASE("a device with no allocation yet");
    hwrt_mem_stats st;
    memset(&st, 0xff, sizeof st);
    OK(hwrt_memory_stats(1, &st));
    EXPECT(st.allocation.current == 0 && st.allocation.peak == 0 && st.reserved_bytes.current == 0);
    OK(hwrt_reset_peak_memory_stats(1));
    OK(hwrt_memory_snapshot(1, path));
    char *j = slurp(path);
    EXPECT(j && strstr(j, "\"segments\": []") != NULL);
    if (j && !strstr(j, "\"segments\": []")) fprintf(stderr, "snapshot: %.400s\n", j);

    TEST_CASE("alloc tags: set, replaced, cleared, refused");
    void *p;
    OK(hwrt_malloc(&p, 4096));
    OK(hwrt_set_alloc_tag(p, "cov-first"));
    OK(hwrt_set_alloc_tag(p, "cov-second"));
    OK(hwrt_memory_snapshot(0, path));
    j = slurp(path);
    EXPECT(j && strstr(j, "cov-second") && !strstr(j, "cov-first"));
    OK(hwrt_set_alloc_tag(p, NULL));
    OK(hwrt_memory_snapshot(0, path));
    j = slurp(path);
    EXPECT(j && !strstr(j, "cov-second"));
    int host;
    FAILS(hwrt_set_alloc_tag(&host, "x"), HWRT_ERROR_INVALID_ARGUMENT, "not the start of a live block from hwrt_malloc");
    FAILS(hwrt_set_alloc_tag((char *)p + 16, "x"), HWRT_ERROR_INVALID_ARGUMENT, "not the start of a live block");
    OK(hwrt_free(p));
    FAILS(hwrt_set_alloc_tag(p, "x"), HWRT_ERROR_INVALID_ARGUMENT, "freed");
    OK(hwrt_memory_stats(0, &st));
    EXPECT(st.allocation.current == 0);
    unlink(path);
    OK(hwrt_shutdown());
    return test_report();
}
