/* hwrt_event_synchronize when the driver's clWaitForEvents itself fails while the event's
 * command has not run (its stream held by a host function): an error naming
 * clWaitForEvents, never NOT_READY (a synchronize never answers that: the caller would
 * wait again, for ever); the same event then synchronizes once the stream moves (issue 25,
 * seed 3009: ocl_event.c's `we != CL_SUCCESS` made `==` answered NOT_READY); and when the
 * command itself failed, the fault's sentence, not the failed wait's. Run through fail_cl.c,
 * the forwarding loader (fail_cl_fail_next, fail_cl_event_status_next). Also: a host
 * function's completion that the driver refuses for a while is set again. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "harness.h"
#include "fail_cl_next.h"

#include <stdatomic.h>
#include <time.h>

static atomic_int gate;

static void hold(void *arg)
{
    (void)arg;
    while (!atomic_load(&gate)) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

int main(void)
{
    OK(hwrt_set_device("opencl", 0));
    fail_cl_next_fn fail_next = fail_cl_next_lookup();
    if (!fail_next) return 1;
    hwrt_stream s = NULL;
    hwrt_event e = NULL;
    OK(hwrt_stream_create(&s, 0));
    OK(hwrt_event_create(&e, 0));

    TEST_CASE("clWaitForEvents fails before the event's command ran");
    OK(hwrt_launch_host_func(s, hold, NULL));
    OK(hwrt_event_record(e, s));
    EXPECT(hwrt_event_query(e) == HWRT_ERROR_NOT_READY);
    fail_next("clWaitForEvents", 1, CL_OUT_OF_RESOURCES);
    hwrt_status st = hwrt_event_synchronize(e);
    EXPECT(st != HWRT_SUCCESS && st != HWRT_ERROR_NOT_READY);
    EXPECT(strstr(hwrt_last_error(), "clWaitForEvents in hwrt_event_synchronize") != NULL);
    EXPECT(strstr(hwrt_last_error(), "CL_OUT_OF_RESOURCES") != NULL);
    printf("event synchronize: %s: %s\n", hwrt_status_name(st), hwrt_last_error());

    TEST_CASE("the stream moves: the event synchronizes");
    atomic_store(&gate, 1);
    OK(hwrt_event_synchronize(e));
    OK(hwrt_event_query(e));
    OK(hwrt_stream_synchronize(s));

    TEST_CASE("a host function's completion refused by the driver for a while is set again");
    /* clSetUserEventStatus failing 5 times (out of resources): asked again every
     * millisecond, so the stream moves on (the sweep of ocl_host.c: 33's `!= CL_SUCCESS`
     * made `==` gave up at the first refusal and every later wait hung) */
    atomic_store(&gate, 1);
    fail_next("clSetUserEventStatus", 5, CL_OUT_OF_RESOURCES);
    OK(hwrt_launch_host_func(s, hold, NULL));
    OK(hwrt_event_record(e, s));
    OK(hwrt_event_synchronize(e));
    OK(hwrt_stream_synchronize(s));

    TEST_CASE("a failed command: the fault's sentence, not the failed wait's");
    /* the driver reports the command failed and, as it does then, clWaitForEvents fails
     * with CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST: the fault names the command's
     * status (ocl_event.c:78's `&&` made `||` put the wait's error in its place) */
    fail_cl_status_next_fn status_next = fail_cl_status_next_lookup();
    EXPECT(status_next != NULL);
    if (status_next) {
        OK(hwrt_event_record(e, s));
        status_next(CL_OUT_OF_RESOURCES, 1000);
        fail_next("clWaitForEvents", 1, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
        FAILS(hwrt_event_synchronize(e), HWRT_ERROR_DEVICE_FAULT,
              "execution status -5, CL_OUT_OF_RESOURCES)");
        EXPECT(strstr(hwrt_last_error(), "clWaitForEvents") == NULL);
        status_next(0, 0);
        OK(hwrt_device_reset(0));
    }
    OK(hwrt_event_destroy(e));
    OK(hwrt_stream_destroy(s));
    OK(hwrt_shutdown());
    return test_report();
}
