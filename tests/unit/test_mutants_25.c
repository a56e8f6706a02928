/* Regression tests for mutation survivors of issue 25 that no other suite's case fits:
 * the expandable reservation bound (a request of the whole device still gets an
 * expandable range), ... Each case names the mutant it kills. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MiB ((size_t)1 << 20)

/* Does the memory snapshot of device 0 contain needle? */
static int snapshot_has(const char *needle)
{
    char path[] = "/tmp/hwrt-mutants25-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return 0;
    close(fd);
    int found = 0;
    if (hwrt_memory_snapshot(0, path) == HWRT_SUCCESS) {
        FILE *f = fopen(path, "r");
        static char text[1 << 16];
        size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
        if (f) fclose(f);
        text[n] = 0;
        found = strstr(text, needle) != NULL;
    }
    unlink(path);
    return found;
}

/* pool.c grow(): a range is reserved when it fits the device (`va <= total`); with `<`
 * a request of the whole device fell back to a plain segment. */
static void expandable_whole_device(void)
{
    TEST_CASE("expandable range of the whole device");
    setenv("HWRT_SIM_MEMORY", "64MB", 1);
    setenv("HWRT_SIM_OVERHEAD", "0", 1);
    OK(hwrt_set_device("sim", 0));
    OK(hwrt_set_config("expandable_segments", "true"));
    hwrt_memory_info mi;
    OK(hwrt_get_memory_info(0, &mi));
    EXPECT(mi.total == 64 * MiB);
    char *a;
    OK(hwrt_malloc((void **)&a, 64 * MiB - 4096));      /* rounds to the device's 64 MiB */
    EXPECT(snapshot_has("\"expandable\": true"));
    EXPECT(!snapshot_has("\"expandable\": false"));
    OK(hwrt_free(a));
    OK(hwrt_empty_cache(0));
    OK(hwrt_set_config("expandable_segments", "false"));
    OK(hwrt_shutdown());
    unsetenv("HWRT_SIM_MEMORY");
    unsetenv("HWRT_SIM_OVERHEAD");
}

int main(void)
{
    setenv("HWRT_SIM_REGISTRY", "off", 1);   /* device-wide figures of this process only */
    OK(hwrt_set_config("thread_cache", "false"));
    expandable_whole_device();
    return test_report();
}
