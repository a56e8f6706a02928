/* 12000 tiny launches (a sync every 1000) for the report's level-of-detail test: 24000
 * spans (host launches and device ops), more than the page draws one by one. */
#include <hwrt.h>

#include <stdio.h>

#include "example_check.h"   /* CHECK(call) */

int main(void)
{
    CHECK(hwrt_set_device("sim", 0));
    hwrt_tensor t;
    int64_t shape[1] = {16};
    CHECK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    for (int i = 0; i < 12000; i++) {
        CHECK(hwrt_op_fill(t, (double)i, NULL));
        if ((i + 1) % 1000 == 0) CHECK(hwrt_stream_synchronize(NULL));
    }
    CHECK(hwrt_tensor_release(t));
    CHECK(hwrt_shutdown());
    printf("many_ops: 12000 fills\n");
    return 0;
}
