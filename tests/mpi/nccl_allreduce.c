/* The NCCL path on a machine with NVIDIA GPUs, for scripts/device-check.sh (see
 * dev_coll_check.h for what it checks and how it is run): HWRT_COLL_ENGINE=nccl on cuda.
 * Exit 77 (skipped, with the reason) without a cuda device. */
#include "dev_coll_check.h"

int main(int argc, char **argv)
{
    static const dcc_case cases[] = {
        {HWRT_FLOAT32, HWRT_REDUCE_SUM}, {HWRT_FLOAT64, HWRT_REDUCE_SUM},
        {HWRT_INT32, HWRT_REDUCE_SUM}, {HWRT_INT64, HWRT_REDUCE_SUM},
        {HWRT_INT8, HWRT_REDUCE_MAX}, {HWRT_UINT8, HWRT_REDUCE_MIN},
        {HWRT_FLOAT32, HWRT_REDUCE_AVG}};
    static const dcc_cfg cfg = {"nccl_allreduce", "cuda", "nccl", cases,
                                sizeof cases / sizeof cases[0], NULL, 0};
    return dcc_main(argc, argv, &cfg);
}
