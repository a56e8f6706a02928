/* Groups under mpirun -np 4 (tests/mpi/CMakeLists.txt): sub-communicators of the world.
 *   - two disjoint groups, {0, 2} and {3, 1} (group ranks in list order), each created by
 *     its members only; an allreduce (SUM, MAX, AVG) in each gives the sum over the group,
 *     not the world; broadcast from a group root, allgather in group-rank order,
 *     reduce_scatter, barrier; rank queries and the group -> world translation
 *   - the groups' collectives run at the same time (no world collective in between), and
 *     a world allreduce afterwards still sums over all four
 *   - an overlapping group of three ({1, 2, 3}) while the others exist; rank 0 not in it
 *   - bad input: NULL, n 0 or 5, a rank outside the world, a rank twice, this rank not
 *     listed, members passing different lists, a root outside the group, a destroyed
 *     handle; each leaves the group usable
 * With argv[1] "subgroup-first": only a group of three's allreduce, before anything else.
 * Each rank prints "N passed, M failed" and exits non-zero on any failure. */
#include "harness.h"

#include <stdio.h>
#include <string.h>

static int rank, size;

static hwrt_tensor vec(const float *v, int64_t n)
{
    hwrt_tensor t = NULL;
    int64_t shape[1] = {n};
    OK(hwrt_tensor_from_host(&t, HWRT_FLOAT32, 1, shape, v));
    return t;
}

static void get(hwrt_tensor t, float *v, size_t n)
{
    OK(hwrt_tensor_copy_to_host(t, v, n * sizeof *v));
}

/* Ranks 1..3 (the caller is one of them): a group of the three, created by its members
 * only, sums their ranks (6), then goes. */
static void group_of_three_sums(void)
{
    const int c[3] = {1, 2, 3};
    hwrt_group h = NULL;
    OK(hwrt_group_create(c, 3, &h));
    float hv[1] = {(float)rank};
    hwrt_tensor ht = vec(hv, 1);
    OK(hwrt_group_allreduce(h, ht, HWRT_REDUCE_SUM, NULL));
    get(ht, hv, 1);
    EXPECT(hv[0] == 6.0f);
    OK(hwrt_tensor_release(ht));
    OK(hwrt_group_destroy(h));
}

static void two_groups(void)
{
    TEST_CASE("two groups");
    /* only the first n entries are the list: what follows differs from rank to rank and
     * must not take part in the members' comparison of their lists */
    const int a[3] = {0, 2, rank}, b[3] = {3, 1, rank};
    const int *mine = rank % 2 == 0 ? a : b;
    hwrt_group g = NULL;
    OK(hwrt_group_create(mine, 2, &g));
    int gr = -1, gs = -1, w = -1;
    OK(hwrt_group_rank(g, &gr));
    OK(hwrt_group_size(g, &gs));
    EXPECT(gs == 2 && gr == (mine[0] == rank ? 0 : 1));
    OK(hwrt_group_world_rank(g, 0, &w));
    EXPECT(w == mine[0]);
    OK(hwrt_group_world_rank(g, 1, &w));
    EXPECT(w == mine[1]);
    FAILS(hwrt_group_world_rank(g, 2, &w), HWRT_ERROR_INVALID_ARGUMENT,
          "group rank 2 is out of range: the group has 2 ranks (0..1)");
    FAILS(hwrt_group_world_rank(g, -1, &w), HWRT_ERROR_INVALID_ARGUMENT, "group rank -1");
    FAILS(hwrt_group_world_rank(g, 0, NULL), HWRT_ERROR_INVALID_ARGUMENT, "NULL");

    /* allreduce: the group's sum (world ranks 0+2 = 2, 3+1 = 4), not the world's (6) */
    float v[3] = {(float)rank, 10.0f * (float)rank, 1.0f}, got[3];
    hwrt_tensor t = vec(v, 3);
    hwrt_stream s = NULL;
    OK(hwrt_stream_create(&s, 0));
    OK(hwrt_op_scale(t, t, 1.0, s));                       /* device work queued first */
    OK(hwrt_group_allreduce(g, t, HWRT_REDUCE_SUM, s));
    get(t, got, 3);
    float sum = (float)(mine[0] + mine[1]);
    EXPECT(got[0] == sum && got[1] == 10.0f * sum && got[2] == 2.0f);
    OK(hwrt_tensor_release(t));
    t = vec(v, 3);
    OK(hwrt_group_allreduce(g, t, HWRT_REDUCE_MAX, NULL));
    get(t, got, 3);
    float mx = (float)(mine[0] > mine[1] ? mine[0] : mine[1]);
    EXPECT(got[0] == mx && got[1] == 10.0f * mx);
    OK(hwrt_tensor_release(t));
    t = vec(v, 3);
    OK(hwrt_group_allreduce(g, t, HWRT_REDUCE_AVG, NULL));   /* divided by 2, not 4 */
    get(t, got, 3);
    EXPECT(got[0] == sum / 2 && got[2] == 1.0f);
    OK(hwrt_tensor_release(t));

    /* broadcast from group rank 1 (world 2 in a, world 1 in b) */
    t = vec(v, 3);
    OK(hwrt_group_broadcast(g, t, 1, NULL));
    get(t, got, 3);
    EXPECT(got[0] == (float)mine[1] && got[1] == 10.0f * (float)mine[1]);
    FAILS(hwrt_group_broadcast(g, t, 2, NULL), HWRT_ERROR_INVALID_ARGUMENT, "group of 2");
    OK(hwrt_tensor_release(t));

    /* allgather in group-rank order; reduce_scatter gives each its block */
    float one[1] = {(float)rank}, two[2];
    hwrt_tensor in = vec(one, 1), out = vec(two, 2);
    OK(hwrt_group_allgather(g, out, in, NULL));
    get(out, two, 2);
    EXPECT(two[0] == (float)mine[0] && two[1] == (float)mine[1]);
    hwrt_tensor big4 = vec((float[4]){0, 0, 0, 0}, 4);
    FAILS(hwrt_group_allgather(g, big4, in, NULL), HWRT_ERROR_INVALID_ARGUMENT, "2 (ranks)");
    OK(hwrt_tensor_release(big4));
    float rs[2] = {(float)rank, 100.0f + (float)rank}, blk[1];
    hwrt_tensor rin = vec(rs, 2), rout = vec(blk, 1);
    OK(hwrt_group_reduce_scatter(g, rout, rin, HWRT_REDUCE_SUM, NULL));
    get(rout, blk, 1);
    EXPECT(blk[0] == (gr == 0 ? sum : 200.0f + sum));
    OK(hwrt_group_barrier(g));

    /* the world still sums over all four */
    float wv[1] = {(float)rank + 1};
    hwrt_tensor wt = vec(wv, 1);
    OK(hwrt_allreduce(wt, HWRT_REDUCE_SUM, NULL));
    get(wt, wv, 1);
    EXPECT(wv[0] == 10.0f);

    /* an overlapping group of three while g lives; rank 0 is not in it */
    if (rank != 0) group_of_three_sums();

    /* g still works after all that, then goes */
    t = vec(v, 3);
    OK(hwrt_group_allreduce(g, t, HWRT_REDUCE_SUM, NULL));
    get(t, got, 3);
    EXPECT(got[0] == sum);
    OK(hwrt_group_destroy(g));
    FAILS(hwrt_group_allreduce(g, t, HWRT_REDUCE_SUM, NULL), HWRT_ERROR_INVALID_HANDLE,
          "not a live group");
    FAILS(hwrt_group_destroy(g), HWRT_ERROR_INVALID_HANDLE, "not a live group");
    FAILS(hwrt_group_rank(g, &gr), HWRT_ERROR_INVALID_HANDLE, "not a live group");
    FAILS(hwrt_group_barrier(g), HWRT_ERROR_INVALID_HANDLE, "not a live group");
    hwrt_tensor all[] = {t, in, out, rin, rout, wt};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) OK(hwrt_tensor_release(all[i]));
    OK(hwrt_stream_destroy(s));
    /* NULL is the world */
    OK(hwrt_group_rank(NULL, &gr));
    OK(hwrt_group_size(NULL, &gs));
    EXPECT(gr == rank && gs == size);
}

static void bad_input(void)
{
    TEST_CASE("group bad input");
    hwrt_group g = NULL;
    const int me[1] = {rank}, out5[5] = {0, 1, 2, 3, 0}, far[2] = {rank, 4};
    const int twice[2] = {rank, rank}, other[1] = {(rank + 1) % 4};
    FAILS(hwrt_group_create(NULL, 1, &g), HWRT_ERROR_INVALID_ARGUMENT, "required");
    FAILS(hwrt_group_create(me, 1, NULL), HWRT_ERROR_INVALID_ARGUMENT, "required");
    FAILS(hwrt_group_create(me, 0, &g), HWRT_ERROR_INVALID_ARGUMENT, "n 0");
    FAILS(hwrt_group_create(out5, 5, &g), HWRT_ERROR_INVALID_ARGUMENT, "n 5");
    FAILS(hwrt_group_create(far, 2, &g), HWRT_ERROR_INVALID_ARGUMENT, "ranks[1] = 4");
    FAILS(hwrt_group_create(twice, 2, &g), HWRT_ERROR_INVALID_ARGUMENT, "listed twice");
    FAILS(hwrt_group_create(other, 1, &g), HWRT_ERROR_INVALID_ARGUMENT, "not in the list");
    EXPECT(g == NULL);
    /* a group of one is fine */
    OK(hwrt_group_create(me, 1, &g));
    float v[1] = {(float)rank};
    int64_t shape[1] = {1};
    hwrt_tensor t;
    OK(hwrt_tensor_from_host(&t, HWRT_FLOAT32, 1, shape, v));
    OK(hwrt_group_allreduce(g, t, HWRT_REDUCE_SUM, NULL));
    OK(hwrt_tensor_copy_to_host(t, v, sizeof v));
    EXPECT(v[0] == (float)rank);
    OK(hwrt_tensor_release(t));
    OK(hwrt_group_destroy(g));
    /* the members of {0, 1} and {2, 3} pass their pair in different orders: refused on
     * every member, and the world goes on */
    int pair[2] = {rank & ~1, rank | 1};
    if (rank & 1) { int x = pair[0]; pair[0] = pair[1]; pair[1] = x; }
    g = NULL;
    FAILS(hwrt_group_create(pair, 2, &g), HWRT_ERROR_INVALID_ARGUMENT, "different lists");
    EXPECT(g == NULL);
    if (rank & 1) { int x = pair[0]; pair[0] = pair[1]; pair[1] = x; }
    OK(hwrt_group_create(pair, 2, &g));                 /* the same list: fine */
    OK(hwrt_group_destroy(g));
    OK(hwrt_barrier());
}

/* argv "subgroup-first": no device binding and no world collective before a group's: the
 * devices are checked by world collectives only, so ranks 1..3 reduce in their group while
 * rank 0 goes straight to finalize (seed 3009's collective.c:122 `&& !c->g` made `||` had
 * the three wait in a world exchange that rank 0 never joins). */
static void subgroup_first(void)
{
    TEST_CASE("a group of three reduces before any world collective");
    if (rank != 0) group_of_three_sums();
}

int main(int argc, char **argv)
{
    hwrt_status st = hwrt_dist_init();
    if (st != HWRT_SUCCESS) {
        fprintf(stderr, "hwrt_dist_init: %s: %s\n", hwrt_status_name(st), hwrt_last_error());
        return 1;
    }
    rank = hwrt_dist_rank();
    size = hwrt_dist_size();
    if (size != 4) {
        fprintf(stderr, "test_dist_groups needs 4 ranks (mpirun -np 4), got %d\n", size);
        return 2;
    }
    if (argc > 1 && !strcmp(argv[1], "subgroup-first")) {
        subgroup_first();
    } else {
        OK(hwrt_dist_bind_device("sim"));
        two_groups();
        bad_input();
    }
    TEST_CASE("finalize");
    OK(hwrt_dist_finalize());
    int rc = test_report();
    hwrt_shutdown();
    return rc;
}
