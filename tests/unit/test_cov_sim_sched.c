/* The sim's deterministic scheduler and jitter seeds (issue 25 item 3, sim_sched.c):
 * - HWRT_SIM_DETERMINISTIC and HWRT_SIM_JITTER that are not seeds (negative, trailing
 *   characters, past 64 bits, not a number): a warning naming the variable and value,
 *   the mode off, and the device works;
 * - a hex seed turns deterministic simulation on: a stall fault (HWRT_SIM_FAULTS
 *   stall:ms=250) advances the virtual clock instead of sleeping, so a timed copy takes
 *   at least 250 ms of device time, the data arrive, and a second run with the same seed
 *   measures the same time to the microsecond. */
#include "harness.h"
#include "harness_files.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void round_trip(void)
{
    sim_round_trip();
    OK(hwrt_shutdown());
}

static void malformed_seeds(void)
{
    const char *vars[] = {"HWRT_SIM_DETERMINISTIC", "HWRT_SIM_JITTER"};
    const char *bad[] = {"-1", "12abc", "99999999999999999999999", "seed", "0x"};
    for (int v = 0; v < 2; v++)
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            TEST_CASE("a value that is not a seed");
            setenv(vars[v], bad[i], 1);
            char *e = stderr_of(round_trip);
            char want[128];
            snprintf(want, sizeof want, "%s=\"%s\" is not a seed; expected a decimal or 0x-hex "
                     "number", vars[v], bad[i]);
            EXPECT(strstr(e, want) != NULL);
            EXPECT(strstr(e, "the mode stays off") != NULL);
            if (!strstr(e, want)) fprintf(stderr, "stderr: %s\n", e);
            unsetenv(vars[v]);
        }
}

/* A copy stalled 250 ms on its engine, timed by events: device milliseconds. */
static float stalled_copy_ms(void)
{
    OK(hwrt_set_device("sim", 0));
    hwrt_stream s = NULL;
    hwrt_event a = NULL, b = NULL;
    OK(hwrt_stream_create(&s, 0));
    OK(hwrt_event_create(&a, HWRT_EVENT_DEFAULT));
    OK(hwrt_event_create(&b, HWRT_EVENT_DEFAULT));
    float in[256], out[256] = {0}, ms = -1;
    for (int i = 0; i < 256; i++) in[i] = (float)i / 4;
    void *p = NULL;
    OK(hwrt_malloc(&p, sizeof in));
    OK(hwrt_event_record(a, s));
    OK(hwrt_memcpy_async(p, in, sizeof in, HWRT_MEMCPY_HOST_TO_DEVICE, s));
    OK(hwrt_event_record(b, s));
    OK(hwrt_stream_synchronize(s));
    OK(hwrt_event_elapsed_ms(&ms, a, b));
    OK(hwrt_memcpy(out, p, sizeof out, HWRT_MEMCPY_DEVICE_TO_HOST));
    EXPECT(!memcmp(in, out, sizeof in));
    OK(hwrt_free(p));
    OK(hwrt_event_destroy(a));
    OK(hwrt_event_destroy(b));
    OK(hwrt_stream_destroy(s));
    OK(hwrt_shutdown());
    return ms;
}

static void deterministic_stall(void)
{
    TEST_CASE("deterministic simulation: a stall advances the virtual clock");
    setenv("HWRT_SIM_DETERMINISTIC", "0x2a", 1);
    setenv("HWRT_SIM_FAULTS", "stall:ms=250", 1);
    float first = stalled_copy_ms(), second = stalled_copy_ms();
    EXPECT(first >= 250.0f);
    EXPECT(first == second);                  /* the same seed, the same device time */
    if (first < 250.0f || first != second) fprintf(stderr, "  %f ms, then %f ms\n", first, second);
    unsetenv("HWRT_SIM_FAULTS");
    unsetenv("HWRT_SIM_DETERMINISTIC");
}

int main(void)
{
    setenv("HWRT_SIM_DEVICES", "1", 1);
    setenv("HWRT_LOG_LEVEL", "2", 1);           /* warnings */
    malformed_seeds();
    deterministic_stall();
    return test_report();
}
