/* Regression tests for the survivors of issue 25's fresh seeded mutation run (seed 2026,
 * COUNT 64; scripts/mutation-run.sh; docs/RELIABILITY.md "Mutation score (issue 25 item 2)"),
 * strata backends/ascend, backends/cuda, backends/opencl, base, diag, distributed,
 * plugins/mpi, prof, runtime, that no other suite's case fits. Each case names its mutant. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* config.c set_value: a double option's range is inclusive at both ends
 * (`v >= d->min && v <= d->max`; `<= max` made `<` refused the documented maximum). */
static void double_options_take_their_bounds(void)
{
    TEST_CASE("a double option takes both ends of its range");
    char got[64];
    OK(hwrt_set_config("garbage_collection_threshold", "1"));
    OK(hwrt_get_config("garbage_collection_threshold", got, sizeof got));
    EXPECT(!strcmp(got, "1"));
    OK(hwrt_set_config("garbage_collection_threshold", "0"));
    OK(hwrt_get_config("garbage_collection_threshold", got, sizeof got));
    EXPECT(!strcmp(got, "0"));
    OK(hwrt_set_config("dist_timeout", "1000000"));
    OK(hwrt_get_config("dist_timeout", got, sizeof got));
    EXPECT(!strcmp(got, "1e+06"));
    OK(hwrt_set_config("dist_timeout", "0.001"));
    OK(hwrt_get_config("dist_timeout", got, sizeof got));
    EXPECT(!strcmp(got, "0.001"));
    FAILS(hwrt_set_config("dist_timeout", "1000000.5"), HWRT_ERROR_INVALID_ARGUMENT,
          "out of range");
    FAILS(hwrt_set_config("garbage_collection_threshold", "1.0001"), HWRT_ERROR_INVALID_ARGUMENT,
          "out of range");
    OK(hwrt_set_config("dist_timeout", "300"));
}

int main(void)
{
    double_options_take_their_bounds();
    return test_report();
}
