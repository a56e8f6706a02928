/* The HCCL path on a machine with Ascend NPUs, for scripts/device-check.sh (see
 * dev_coll_check.h for what it checks and how it is run): HWRT_COLL_ENGINE=hccl on
 * ascend, with the dtypes HCCL reduces (Atlas A2/A3) and the ones hwrt refuses for it.
 * Exit 77 (skipped, with the reason) without an ascend device. */
#include "dev_coll_check.h"

int main(int argc, char **argv)
{
    static const dcc_case cases[] = {
        {HWRT_FLOAT32, HWRT_REDUCE_SUM}, {HWRT_INT32, HWRT_REDUCE_SUM},
        {HWRT_INT64, HWRT_REDUCE_SUM}, {HWRT_INT8, HWRT_REDUCE_MAX},
        {HWRT_INT32, HWRT_REDUCE_MIN}, {HWRT_FLOAT32, HWRT_REDUCE_PROD},
        {HWRT_FLOAT32, HWRT_REDUCE_AVG}};
    /* refused before HCCL is called: no float64 / uint8 reduction, no integer AVG */
    static const dcc_case refused[] = {
        {HWRT_FLOAT64, HWRT_REDUCE_SUM}, {HWRT_UINT8, HWRT_REDUCE_MAX},
        {HWRT_INT32, HWRT_REDUCE_AVG}};
    static const dcc_cfg cfg = {"hccl_allreduce", "ascend", "hccl", cases,
                                sizeof cases / sizeof cases[0], refused,
                                sizeof refused / sizeof refused[0]};
    return dcc_main(argc, argv, &cfg);
}
