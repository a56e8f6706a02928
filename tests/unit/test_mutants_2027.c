/* Regression tests for survivors of issue 25's seeded mutation runs (seeds 2027 and later;
 * docs/RELIABILITY.md "Mutation score (issue 25 item 2)") reachable through the public API.
 * Each case names its mutant. */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

/* sim_fault.c sim_fault_load: a fault plan of 1023 characters is read whole, one of 1024
 * (the buffer's size) is refused naming the limit (the mutant `strlen(env) >= sizeof buf`
 * made `>` cut a plan of exactly 1024 characters to 1023 and ran what was left: here a
 * valid seed, so the device opened with a plan other than the one asked for). */
static void fault_plan_of_the_buffer_length(void)
{
    TEST_CASE("a fault plan of 1024 characters is refused, 1023 are read");
    char plan[1100];
    /* "seed=" and zeros: valid at any length; cut by one it is still valid */
    memset(plan, '0', sizeof plan);
    memcpy(plan, "seed=", 5);
    plan[1023] = 0;
    setenv("HWRT_SIM_FAULTS", plan, 1);
    OK(hwrt_set_device("sim", 0));
    OK(hwrt_shutdown());
    plan[1023] = '1';
    plan[1024] = 0;                               /* 1024 characters: seed=000...01 */
    setenv("HWRT_SIM_FAULTS", plan, 1);
    FAILS(hwrt_set_device("sim", 0), HWRT_ERROR_UNAVAILABLE,
          "HWRT_SIM_FAULTS is longer than 1023 characters");
    unsetenv("HWRT_SIM_FAULTS");
    OK(hwrt_set_device("sim", 0));                /* the next open reads the environment again */
    OK(hwrt_shutdown());
}

/* sim_config.c sim_config_get: the sim's configuration is read while no sim device is
 * open, and kept while one is: the environment changed under an open device changes
 * nothing until the next first open (the mutant `cfg.devices == 0` made `!=` reread it at
 * every call: an open device's backend changed its device count, and failed outright once
 * the environment held a bad value). */
static void sim_config_kept_while_open(void)
{
    TEST_CASE("the sim's configuration is kept while a device is open");
    setenv("HWRT_SIM_DEVICES", "2", 1);
    int n = 0;
    OK(hwrt_set_device("sim", 0));
    OK(hwrt_device_count("sim", &n));
    EXPECT(n == 2);
    setenv("HWRT_SIM_DEVICES", "3", 1);
    OK(hwrt_device_count("sim", &n));
    EXPECT(n == 2);                               /* read at the first open, kept */
    setenv("HWRT_SIM_DEVICES", "many", 1);
    OK(hwrt_device_count("sim", &n));
    EXPECT(n == 2);
    OK(hwrt_set_device("sim", 1));                /* the second device opens as configured */
    hwrt_device_props p;
    OK(hwrt_get_device_props(1, &p));
    OK(hwrt_shutdown());
    setenv("HWRT_SIM_DEVICES", "3", 1);           /* no device open: read again */
    OK(hwrt_device_count("sim", &n));
    EXPECT(n == 3);
    unsetenv("HWRT_SIM_DEVICES");
}

int main(void)
{
    unsetenv("HWRT_SIM_FAULTS");
    fault_plan_of_the_buffer_length();
    sim_config_kept_while_open();
    return test_report();
}
