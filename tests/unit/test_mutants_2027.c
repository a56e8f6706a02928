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

/* capture.c check_eager_wait: while another stream captures, an eager stream may wait for
 * an event recorded eagerly (issue 25's seed-3002 mutation run: the scan's
 * `i < MAX_ACTIVE && st == HWRT_SUCCESS` made `||` never ended when no capture held the
 * event: it ran past the 64 capture slots). */
static void eager_wait_beside_a_capture(void)
{
    TEST_CASE("an eager wait for an eager event while another stream captures");
    OK(hwrt_set_device("sim", 0));
    hwrt_stream cap, a, b;
    hwrt_event e;
    void *x = NULL;
    unsigned char h[256];
    OK(hwrt_stream_create(&cap, 0));
    OK(hwrt_stream_create(&a, 0));
    OK(hwrt_stream_create(&b, 0));
    OK(hwrt_event_create(&e, 0));
    OK(hwrt_malloc(&x, sizeof h));
    OK(hwrt_stream_begin_capture(cap));
    OK(hwrt_memset_async(x, 0x11, sizeof h, a));
    OK(hwrt_event_record(e, a));
    OK(hwrt_stream_wait_event(b, e));             /* recorded outside any capture: fine */
    OK(hwrt_memset_async(x, 0x22, sizeof h, b));  /* ordered after a's memset */
    hwrt_graph g = NULL;
    OK(hwrt_stream_end_capture(cap, &g));         /* host syncs wait for the capture's end */
    if (g) OK(hwrt_graph_destroy(g));
    OK(hwrt_stream_synchronize(b));
    OK(hwrt_memcpy(h, x, sizeof h, HWRT_MEMCPY_DEVICE_TO_HOST));
    EXPECT(h[0] == 0x22 && h[sizeof h - 1] == 0x22);
    OK(hwrt_free(x));
    OK(hwrt_event_destroy(e));
    OK(hwrt_stream_destroy(a));
    OK(hwrt_stream_destroy(b));
    OK(hwrt_stream_destroy(cap));
    OK(hwrt_shutdown());
}

/* tensor.c shape check: the element count may reach 2^60 on the way (a zero extent later
 * makes the tensor empty); one more is an overflow (issue 25's seed-3002 mutation run:
 * `n > 2^60 / shape[i]` made `>=` refused a count of exactly 2^60). */
static void element_count_at_the_limit(void)
{
    TEST_CASE("an element count of exactly 2^60 on the way is taken");
    OK(hwrt_set_device("sim", 0));
    hwrt_tensor t = NULL;
    const int64_t at[3] = {(int64_t)1 << 30, (int64_t)1 << 30, 0};
    OK(hwrt_tensor_empty(&t, HWRT_UINT8, 3, at));
    int64_t n = -1;
    if (t) {
        OK(hwrt_tensor_numel(t, &n));
        EXPECT(n == 0);
        OK(hwrt_tensor_release(t));
    }
    const int64_t past[3] = {((int64_t)1 << 30) + 1, (int64_t)1 << 30, 0};
    t = NULL;
    FAILS(hwrt_tensor_empty(&t, HWRT_UINT8, 3, past), HWRT_ERROR_INVALID_ARGUMENT,
          "the shape's element count overflows (dimension 1 = 1073741824)");
    OK(hwrt_shutdown());
}

int main(void)
{
    unsetenv("HWRT_SIM_FAULTS");
    fault_plan_of_the_buffer_length();
    sim_config_kept_while_open();
    eager_wait_beside_a_capture();
    element_count_at_the_limit();
    return test_report();
}
