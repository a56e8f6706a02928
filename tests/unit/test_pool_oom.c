/* The max_device_memory cap, the retry path and the out-of-memory sentence.
 * - Under a 64 MiB cap a cached 40 MiB block cannot serve 50 MiB: growing past the peak,
 *   the pool syncs and gives the cached segment back first, and the allocation succeeds
 *   (no failed attempt, no retry, no OOM).
 * - Two live 40 MiB blocks do not fit: OUT_OF_MEMORY with the breakdown and the fix.
 * - Without a cap, the device's own limit gives the same sentence, state intact.
 * - garbage_collection_threshold gives cached segments back before growing past it.
 * - Bad values of the pool keys are rejected with the key and the accepted form. */
#include "harness.h"

#include <stdlib.h>

static hwrt_mem_stats stats(void)
{
    hwrt_mem_stats s;
    OK(hwrt_memory_stats(0, &s));
    return s;
}

static void retry_path(void)
{
    TEST_CASE("growing past the peak frees the cache first");
    void *a, *b;
    OK(hwrt_malloc(&a, 40 << 20));
    OK(hwrt_free(a));
    EXPECT(stats().reserved_bytes.current == 40 << 20);   /* cached */
    int64_t syncs = stats().num_sync_all_streams;
    OK(hwrt_malloc(&b, 50 << 20));       /* 40 + 50 > the 40 MiB peak (and the cap): trim */
    hwrt_mem_stats s = stats();
    EXPECT(s.num_alloc_retries == 0);                      /* no failure to retry after */
    EXPECT(s.num_sync_all_streams == syncs + 1);
    EXPECT(s.num_ooms == 0);
    EXPECT(s.num_device_free == 1);
    EXPECT(s.reserved_bytes.current == 50 << 20);
    OK(hwrt_free(b));
}

static void cap_oom(void)
{
    TEST_CASE("cap and OOM text");
    void *a, *b = (void *)1;
    OK(hwrt_empty_cache(0));
    OK(hwrt_malloc(&a, 40 << 20));
    int64_t retries = stats().num_alloc_retries;
    FAILS(hwrt_malloc(&b, 40 << 20), HWRT_ERROR_OUT_OF_MEMORY, "out of memory on device 0");
    const char *e = hwrt_last_error();
    EXPECT(strstr(e, "tried to allocate 40.00 MiB") != NULL);
    EXPECT(strstr(e, "allocated by hwrt 40.00 MiB") != NULL);
    EXPECT(strstr(e, "reserved but unallocated 0 B") != NULL);
    EXPECT(strstr(e, "max_device_memory cap 64.00 MiB") != NULL);
    EXPECT(strstr(e, "device total") != NULL && strstr(e, "free ") != NULL);
    EXPECT(strstr(e, "raise max_device_memory") != NULL);
    EXPECT(b == NULL);
    hwrt_mem_stats s = stats();
    EXPECT(s.num_ooms == 1);
    EXPECT(s.num_alloc_retries == retries + 1);            /* it retried before failing */
    EXPECT(s.allocation.current == 1);                     /* state intact */
    OK(hwrt_free(a));
}

static void device_oom(void)
{
    TEST_CASE("device OOM");
    OK(hwrt_set_config("max_device_memory", "0"));
    void *a, *b;
    OK(hwrt_malloc(&a, 600 << 20));
    FAILS(hwrt_malloc(&b, 600 << 20), HWRT_ERROR_OUT_OF_MEMORY, "tried to allocate 600.00 MiB");
    EXPECT(strstr(hwrt_last_error(), "device total 1.00 GiB") != NULL);
    EXPECT(strstr(hwrt_last_error(), "max_device_memory cap none") != NULL);
    OK(hwrt_free(a));
    OK(hwrt_malloc(&b, 600 << 20));                        /* the cached block serves it */
    OK(hwrt_free(b));
}

static void garbage_collection(void)
{
    TEST_CASE("garbage_collection_threshold");
    OK(hwrt_empty_cache(0));
    OK(hwrt_set_config("max_device_memory", "64MB"));
    OK(hwrt_set_config("garbage_collection_threshold", "0.5"));   /* 32 MiB */
    hwrt_mem_stats before = stats();
    void *a, *b;
    OK(hwrt_malloc(&a, 20 << 20));
    OK(hwrt_free(a));                                      /* 20 MiB cached */
    OK(hwrt_malloc(&b, 24 << 20));                         /* 44 MiB > 32: collect first */
    hwrt_mem_stats s = stats();
    EXPECT(s.reserved_bytes.current == 24 << 20);
    EXPECT(s.num_device_free == before.num_device_free + 1);
    EXPECT(s.num_alloc_retries == before.num_alloc_retries);   /* not a retry */
    EXPECT(s.num_ooms == before.num_ooms);
    OK(hwrt_free(b));
    OK(hwrt_set_config("garbage_collection_threshold", "0"));
    OK(hwrt_set_config("max_device_memory", "0"));
}

static void bad_config(void)
{
    TEST_CASE("bad pool keys");
    FAILS(hwrt_set_config("max_device_memory", "lots"), HWRT_ERROR_INVALID_ARGUMENT,
          "max_device_memory");
    FAILS(hwrt_set_config("garbage_collection_threshold", "1.5"), HWRT_ERROR_INVALID_ARGUMENT,
          "between 0 and 1");
    FAILS(hwrt_set_config("expandable_segments", "maybe"), HWRT_ERROR_INVALID_ARGUMENT,
          "expandable_segments");
}

int main(void)
{
    setenv("HWRT_SIM_REGISTRY", "off", 1);   /* device-wide figures of this process only */
    setenv("HWRT_SIM_MEMORY", "1GB", 1);
    setenv("HWRT_SIM_DEVICES", "1", 1);
    setenv("HWRT_ALLOC_CONF", "max_device_memory:64MB,expandable_segments:false", 1);
    OK(hwrt_set_device("sim", 0));
    char v[64];
    OK(hwrt_get_config("max_device_memory", v, sizeof v));   /* from HWRT_ALLOC_CONF */
    EXPECT(!strcmp(v, "67108864"));
    retry_path();
    cap_oom();
    device_oom();
    garbage_collection();
    bad_config();
    OK(hwrt_shutdown());
    return test_report();
}
