/* The profiler's activity records come from one backend per session (prof_activity.c
 * enable, a static function: the file is compiled into this test, libhwrt linked
 * statically): a launch on another backend than the one whose records the session took
 * gets no correlation id, however usable the first backend's records are (issue 25's seed
 * 3011: `now == ops && usable` made `||` gave the second backend's launches ids that no
 * record would ever answer: counted as missing device times, with no marker instead). */
#include "../../src/prof/prof_activity.c"

#include "harness.h"

int main(void)
{
    static hwrt_backend_ops one, other;       /* only their addresses are compared */
    TEST_CASE("records from the backend that enabled them, not another");
    prof_activity_start(4096);
    atomic_store(&seen, &one);                 /* a launch on `one` enabled its records */
    atomic_store(&usable, 1);
    EXPECT(enable(&other) == 0);
    EXPECT(enable(&one) == 1);
    atomic_store(&usable, 0);                  /* `one` could not report them */
    EXPECT(enable(&one) == 0 && enable(&other) == 0);
    atomic_store(&seen, NULL);                 /* nothing to turn off at stop */
    prof_activity_stop();
    return test_report();
}
