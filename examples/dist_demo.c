/* The seed's section 2.6 in C: join the group, print rank and world size, bind this
 * rank's device (the LOCAL rank, checked across ranks: the seed's problem 4), and check
 * one allreduce against the value every rank can compute on the host.
 *
 *   ./build/examples/dist_demo                                   (rank 0 of 1)
 *   mpirun --allow-run-as-root --oversubscribe -np 2 ./build/examples/dist_demo
 * and on several hosts: docs/distributed.md, "Several hosts". */
#include <hwrt.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define CHECK(call)                                                                  \
    do {                                                                             \
        hwrt_status st_ = (call);                                                    \
        if (st_ != HWRT_SUCCESS) {                                                   \
            fprintf(stderr, "rank %d: %s failed: %s: %s\n", hwrt_dist_rank(), #call, \
                    hwrt_status_name(st_), hwrt_last_error());                       \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

int main(void)
{
    CHECK(hwrt_dist_init());                                  /* init() */
    int rank = hwrt_dist_rank(), world_size = hwrt_dist_size();
    printf("rank:%d, total_card:%d\n", rank, world_size);     /* get_rank / get_group_size */
    CHECK(hwrt_dist_bind_device("sim"));                      /* set_device("Ascend", rank) */
    int dev = -1;
    CHECK(hwrt_get_device(&dev));

    enum { N = 1024 };
    float host[N];
    for (int i = 0; i < N; i++) host[i] = (float)(rank + 1) * (float)(i % 7);
    hwrt_tensor t;
    int64_t shape[1] = {N};
    CHECK(hwrt_tensor_from_host(&t, HWRT_FLOAT32, 1, shape, host));
    CHECK(hwrt_op_scale(t, t, 2.0, NULL));                    /* device work before it */
    CHECK(hwrt_allreduce(t, HWRT_REDUCE_SUM, NULL));          /* ordered after the scale */
    CHECK(hwrt_tensor_copy_to_host(t, host, sizeof host));

    /* sum over ranks of 2 * (r + 1) * (i % 7) = (i % 7) * size * (size + 1) */
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += host[i] != (float)(i % 7) * (float)(world_size * (world_size + 1));
    char node[64] = "?";
    gethostname(node, sizeof node - 1);
    printf("rank:%d host:%s device:%d local_rank:%d allreduce %s\n", rank, node, dev,
           hwrt_dist_local_rank(), bad ? "WRONG" : "ok");
    CHECK(hwrt_tensor_release(t));
    CHECK(hwrt_dist_finalize());
    CHECK(hwrt_shutdown());
    return bad ? 1 : 0;
}
