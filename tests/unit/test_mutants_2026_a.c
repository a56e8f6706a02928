/* Regression tests for the survivors of issue 25's fresh seeded mutation run (seed 2026,
 * COUNT 64; docs/RELIABILITY.md "Mutation score (issue 25 item 2)") that the public API
 * shows (strata mem, offload, backends/sim, tensor, exec, backends). Each case names its
 * mutant. */
#include "harness.h"
#include "harness_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MiB ((size_t)1 << 20)

/* sim_config.c parse_double: a number with anything after it is refused (the mutant
 * `end == v || *end` made `&&` read "2x" as 2 and "8GB/s" as 8). Read when no device is
 * open, so each value is set before the session's first device. */
static void sim_number_with_trailing_text(void)
{
    TEST_CASE("a sim number followed by text is refused");
    const struct { const char *var, *value; } bad[] = {
        {"HWRT_SIM_DEVICES", "2x"},
        {"HWRT_SIM_LINK_GBPS", "8GB/s"},
        {"HWRT_SIM_SPIN_US", "50us"},
    };
    for (int i = 0; i < 3; i++) {
        char want[80];
        snprintf(want, sizeof want, "%s=\"%s\" is invalid", bad[i].var, bad[i].value);
        setenv(bad[i].var, bad[i].value, 1);
        FAILS(hwrt_set_device("sim", 0), HWRT_ERROR_UNAVAILABLE, want);
        unsetenv(bad[i].var);
        OK(hwrt_set_device("sim", 0));       /* the default works again */
        OK(hwrt_shutdown());
    }
}

/* pool_stats.c snapshot_block: a block's allocation site is shown while it is live only
 * (the mutant `live && b->nsite` made `||` showed the site of a freed block, which keeps
 * its nsite until the block is reused: a snapshot blamed free memory on old callers). */
static void snapshot_site_of_live_blocks_only(void)
{
    TEST_CASE("the snapshot shows no site for a freed block");
    OK(hwrt_set_device("sim", 0));
    OK(hwrt_set_config("record_alloc_sites", "true"));
    void *p, *q;
    OK(hwrt_malloc(&p, 3 * MiB));
    OK(hwrt_malloc(&q, 1000));
    const char *path = "/tmp/hwrt_test_mutants_2026_a_snapshot.json";
    OK(hwrt_memory_snapshot(0, path));
    char *js = slurp(path);
    EXPECT(js && strstr(js, "\"site\": [") && strstr(js, "\"requested\": 1000"));
    OK(hwrt_free(p));
    OK(hwrt_free(q));
    OK(hwrt_memory_snapshot(0, path));       /* the segments stay cached, their blocks free */
    js = slurp(path);
    EXPECT(js && strstr(js, "\"blocks\"") && strstr(js, "\"free\""));
    EXPECT(js && !strstr(js, "\"site\""));
    if (js && strstr(js, "\"site\"")) fprintf(stderr, "  snapshot: %.600s\n", js);
    remove(path);
    OK(hwrt_set_config("record_alloc_sites", "false"));
    OK(hwrt_shutdown());
}

/* event.c hwrt_event_elapsed_ms: an event never recorded is refused by the API with a
 * sentence naming which one and the fix (the mutant `!a->recorded || !b->recorded` made
 * `&&` let one unrecorded event through to the backend, whose refusal names neither:
 * "the event was never recorded"). */
static void elapsed_names_the_unrecorded_event(void)
{
    TEST_CASE("elapsed_ms names the event that was never recorded");
    OK(hwrt_set_device("sim", 0));
    hwrt_event a, never;
    OK(hwrt_event_create(&a, HWRT_EVENT_DEFAULT));
    OK(hwrt_event_create(&never, HWRT_EVENT_DEFAULT));
    OK(hwrt_event_record(a, NULL));
    OK(hwrt_event_synchronize(a));
    float ms = -1;
    FAILS(hwrt_event_elapsed_ms(&ms, a, never), HWRT_ERROR_INVALID_ARGUMENT,
          "the end event was never recorded; call hwrt_event_record on both first");
    FAILS(hwrt_event_elapsed_ms(&ms, never, a), HWRT_ERROR_INVALID_ARGUMENT,
          "the start event was never recorded; call hwrt_event_record on both first");
    EXPECT(ms == -1);
    OK(hwrt_event_destroy(a));
    OK(hwrt_event_destroy(never));
    OK(hwrt_shutdown());
}

int main(void)
{
    sim_number_with_trailing_text();
    snapshot_site_of_live_blocks_only();
    elapsed_names_the_unrecorded_event();
    return test_report();
}
