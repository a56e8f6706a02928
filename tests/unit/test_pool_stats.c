/* Pool figures: after every step of a mixed allocation sequence allocated <= reserved <=
 * device-wide used and the counters agree with what is live; empty_cache lowers reserved
 * and device-wide used by exactly what was cached; peaks reset; the summary, the JSON
 * snapshot (tags, call sites) and the leak report at shutdown tell the truth. */
#include "harness.h"
#include "harness_files.h"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { NSLOT = 64 };

static int invariants_hold(int64_t live_count)
{
    hwrt_memory_info mi;
    hwrt_mem_stats s;
    if (hwrt_get_memory_info(0, &mi) != HWRT_SUCCESS || hwrt_memory_stats(0, &s) != HWRT_SUCCESS)
        return 0;
    return mi.allocated <= mi.reserved && mi.reserved <= mi.used &&
           mi.used == mi.total - mi.free && mi.reserved + mi.overhead <= mi.used &&
           s.allocation.current == live_count && s.active.current >= s.allocation.current &&
           s.requested_bytes.current <= s.allocated_bytes.current &&
           (size_t)s.allocated_bytes.current == mi.allocated &&
           s.allocated_bytes.peak >= s.allocated_bytes.current &&
           s.reserved_bytes.peak >= s.reserved_bytes.current &&
           s.inactive_split_bytes.current <= s.reserved_bytes.current - s.allocated_bytes.current;
}

static void mixed_sequence(const char *name)
{
    TEST_CASE(name);
    void *slot[NSLOT] = {0};
    int64_t live = 0;
    uint32_t x = 12345;
    int good = 1;
    for (int step = 0; step < 3000; step++) {
        x = x * 1103515245u + 12345u;
        int i = (int)((x >> 8) % NSLOT);
        if (slot[i]) {
            good &= hwrt_free(slot[i]) == HWRT_SUCCESS;
            slot[i] = NULL;
            live--;
        } else {
            size_t sz = (x >> 20) % 3 ? 1 + (x >> 12) % 200000 : ((x >> 12) % 24 + 1) << 20;
            good &= hwrt_malloc(&slot[i], sz) == HWRT_SUCCESS;
            live++;
        }
        if (!invariants_hold(live)) { good = 0; break; }
    }
    EXPECT(good);
    for (int i = 0; i < NSLOT; i++) if (slot[i]) OK(hwrt_free(slot[i]));
    EXPECT(invariants_hold(0));
}

static void empty_cache_lowers(void)
{
    TEST_CASE("empty_cache");
    hwrt_memory_info before, after;
    OK(hwrt_get_memory_info(0, &before));
    EXPECT(before.allocated == 0 && before.reserved > 0);
    OK(hwrt_empty_cache(0));
    OK(hwrt_get_memory_info(0, &after));
    EXPECT(after.reserved == 0);
    EXPECT(after.used == before.used - before.reserved);    /* the device got it back */
    EXPECT(after.used == after.overhead);
    hwrt_mem_stats s;
    OK(hwrt_memory_stats(0, &s));
    EXPECT(s.segment.current == 0 && s.num_device_free == s.num_device_alloc);
}

static void peaks(void)
{
    TEST_CASE("reset peaks");
    void *p;
    OK(hwrt_malloc(&p, 8 << 20));
    OK(hwrt_free(p));
    hwrt_memory_info mi;
    OK(hwrt_get_memory_info(0, &mi));
    EXPECT(mi.peak_allocated >= 8u << 20);
    OK(hwrt_reset_peak_memory_stats(0));
    OK(hwrt_get_memory_info(0, &mi));
    EXPECT(mi.peak_allocated == 0 && mi.peak_reserved == mi.reserved);
    FAILS(hwrt_reset_peak_memory_stats(99), HWRT_ERROR_INVALID_DEVICE, "99");
}

static void summary_snapshot_tags(void)
{
    TEST_CASE("summary, snapshot, tags");
    OK(hwrt_set_config("record_alloc_sites", "true"));
    void *kv, *act;
    OK(hwrt_malloc(&kv, 3 << 20));
    OK(hwrt_malloc(&act, 1000));
    OK(hwrt_set_alloc_tag(kv, "kv_cache \"layer 0\""));
    FAILS(hwrt_set_alloc_tag((char *)kv + 8, "x"), HWRT_ERROR_INVALID_ARGUMENT, "interior");
    char buf[4096];
    OK(hwrt_memory_summary(0, buf, sizeof buf));
    EXPECT(strstr(buf, "Allocated memory") && strstr(buf, "Reserved memory") &&
           strstr(buf, "simulated"));
    char small[64];
    OK(hwrt_memory_summary(0, small, sizeof small));       /* truncated, terminated */
    EXPECT(strlen(small) == sizeof small - 1);
    const char *path = "/tmp/hwrt_test_pool_snapshot.json";
    OK(hwrt_memory_snapshot(0, path));
    char *js = slurp(path);
    EXPECT(js && strstr(js, "\"segments\"") && strstr(js, "\"blocks\""));
    EXPECT(js && strstr(js, "\"tag\": \"kv_cache \\\"layer 0\\\"\""));
    EXPECT(js && strstr(js, "\"site\": [") && strstr(js, "hwrt_malloc+0x") &&
           strstr(js, "test_pool_stats+0x"));
    EXPECT(js && strstr(js, "\"requested\": 1000"));
    remove(path);
    FAILS(hwrt_memory_snapshot(0, "/nonexistent-dir/x.json"), HWRT_ERROR_IO, "nonexistent-dir");
    OK(hwrt_free(act));
    /* kv stays live: the leak report at shutdown lists it and frees it */
}

static void two_devices(void)
{
    TEST_CASE("per-device pools");
    hwrt_mem_stats s0, s1;
    OK(hwrt_memory_stats(0, &s0));
    OK(hwrt_set_device("sim", 1));
    void *p;
    OK(hwrt_malloc(&p, 5 << 20));
    OK(hwrt_memory_stats(1, &s1));
    EXPECT(s1.allocation.current == 1 && s1.allocated_bytes.current == 5 << 20);
    hwrt_mem_stats again;
    OK(hwrt_memory_stats(0, &again));
    EXPECT(again.allocation.current == s0.allocation.current &&
           again.reserved_bytes.current == s0.reserved_bytes.current);
    OK(hwrt_free(p));
    OK(hwrt_empty_cache(1));
    hwrt_memory_info mi;
    OK(hwrt_get_memory_info(1, &mi));
    EXPECT(mi.reserved == 0 && mi.used == mi.overhead);
    OK(hwrt_set_device("sim", 0));
}

int main(void)
{
    setenv("HWRT_SIM_REGISTRY", "off", 1);   /* device-wide figures of this process only */
    OK(hwrt_set_device("sim", 0));
    mixed_sequence("invariants");
    empty_cache_lowers();
    OK(hwrt_set_config("expandable_segments", "true"));
    mixed_sequence("invariants, expandable");
    OK(hwrt_empty_cache(0));
    hwrt_memory_info mi;
    OK(hwrt_get_memory_info(0, &mi));
    EXPECT(mi.reserved == 0 && mi.used == mi.overhead);
    OK(hwrt_set_config("expandable_segments", "false"));
    peaks();
    two_devices();
    summary_snapshot_tags();
    TEST_CASE("leak report");
    OK(hwrt_set_config("log_level", "1"));
    err_begin();
    OK(hwrt_shutdown());
    char *txt = err_end();
    EXPECT(txt && strstr(txt, "leak: device 0: block") && strstr(txt, "3.00 MiB"));
    EXPECT(txt && strstr(txt, "kv_cache \"layer 0\"") &&
           strstr(txt, "allocated at 0x") && strstr(txt, "(test_pool_stats+0x"));
    EXPECT(txt && strstr(txt, "1 device block leaked"));
    OK(hwrt_set_device("sim", 0));                         /* usable again, from scratch */
    OK(hwrt_get_memory_info(0, &mi));
    EXPECT(mi.reserved == 0 && mi.allocated == 0);
    OK(hwrt_shutdown());
    return test_report();
}
