/* The launcher-variable matrix (one process, no mpirun): for each launcher, set its
 * variables and check what hwrt_dist_detect reads; precedence and malformed values; then
 * a plain process as rank 0 of 1 running every collective through the single-process
 * engine; then the failures of a multi-process launch without MPI. */
#include "harness.h"
#include "dtype_ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const all_vars[] = {
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
    "OMPI_COMM_WORLD_LOCAL_SIZE", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS",
    "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "RANK_ID",
    "RANK_SIZE", "DEVICE_ID", "MS_WORKER_NUM", "MS_NODE_ID", "RANK_TABLE_FILE",
    "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_NNODES",
    "OMPI_COMM_WORLD_NODE_RANK", NULL};

static void clear_env(void)
{
    for (int i = 0; all_vars[i]; i++) unsetenv(all_vars[i]);
}

/* "NAME=value NAME=value" */
static void set_env(const char *list)
{
    clear_env();
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *kv = strtok_r(buf, " ", &save); kv; kv = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(kv, '=');
        *eq = 0;
        setenv(kv, eq + 1, 1);
    }
}

typedef struct {
    const char *env;
    const char *launcher;
    int rank, size, local_rank, local_size, node_id, device_id;
} row;

static const row matrix[] = {
    {"", "none", 0, 1, 0, 1, -1, -1},
    {"OMPI_COMM_WORLD_RANK=5 OMPI_COMM_WORLD_SIZE=8 OMPI_COMM_WORLD_LOCAL_RANK=1 "
     "OMPI_COMM_WORLD_LOCAL_SIZE=4", "openmpi", 5, 8, 1, 4, -1, -1},
    {"PMI_RANK=3 PMI_SIZE=4 MPI_LOCALRANKID=1 MPI_LOCALNRANKS=2", "pmi", 3, 4, 1, 2, -1, -1},
    {"PMI_RANK=2 PMI_SIZE=3", "pmi", 2, 3, -1, -1, -1, -1},
    {"RANK=6 WORLD_SIZE=16 LOCAL_RANK=6 LOCAL_WORLD_SIZE=8 GROUP_RANK=0", "torchrun", 6, 16, 6, 8, 0, -1},
    {"RANK_ID=9 RANK_SIZE=16 DEVICE_ID=1 RANK_TABLE_FILE=/etc/hccl_16p.json", "msrun", 9, 16, -1, -1, -1, 1},
    {"MS_WORKER_NUM=8 MS_NODE_ID=3 DEVICE_ID=3", "msrun", 3, 8, -1, -1, -1, 3},
    {"SLURM_PROCID=7 SLURM_NTASKS=8 SLURM_LOCALID=3 SLURM_NODEID=1", "slurm", 7, 8, 3, -1, 1, -1},
    /* the multi-host forms: a process on the second of two nodes, two ranks per node */
    {"OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_LOCAL_RANK=1 "
     "OMPI_COMM_WORLD_LOCAL_SIZE=2 OMPI_COMM_WORLD_NODE_RANK=1", "openmpi", 3, 4, 1, 2, -1, -1},
    {"SLURM_PROCID=3 SLURM_NTASKS=4 SLURM_LOCALID=1 SLURM_NODEID=1 SLURM_NNODES=2",
     "slurm", 3, 4, 1, -1, 1, -1},
    {"RANK=3 WORLD_SIZE=4 LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 GROUP_RANK=1", "torchrun", 3, 4, 1, 2, 1, -1},
    {"MS_WORKER_NUM=4 MS_NODE_ID=3 DEVICE_ID=1", "msrun", 3, 4, -1, -1, -1, 1},
    {"RANK_ID=3 RANK_SIZE=4 DEVICE_ID=1 MS_NODE_ID=3 MS_WORKER_NUM=4", "msrun", 3, 4, -1, -1, -1, 1},
    /* precedence: an MPI launcher inside a Slurm allocation, torchrun inside Slurm */
    {"SLURM_PROCID=0 SLURM_NTASKS=1 OMPI_COMM_WORLD_RANK=2 OMPI_COMM_WORLD_SIZE=4", "openmpi", 2, 4, -1, -1, -1, -1},
    {"SLURM_PROCID=0 SLURM_NTASKS=2 RANK=1 WORLD_SIZE=2 LOCAL_RANK=1", "torchrun", 1, 2, 1, -1, -1, -1},
    /* ... and on the second node: mpirun's daemons were started by srun (task = node,
     * local id 0), each rank inherits its node's SLURM_* and Open MPI's own must win */
    {"SLURM_PROCID=1 SLURM_NTASKS=2 SLURM_LOCALID=0 SLURM_NODEID=1 OMPI_COMM_WORLD_RANK=3 "
     "OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_LOCAL_RANK=1 OMPI_COMM_WORLD_LOCAL_SIZE=2",
     "openmpi", 3, 4, 1, 2, -1, -1},
    {"SLURM_PROCID=1 SLURM_NTASKS=2 SLURM_LOCALID=0 SLURM_NODEID=1 RANK=3 WORLD_SIZE=4 "
     "LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 GROUP_RANK=1", "torchrun", 3, 4, 1, 2, 1, -1},
};

static void detection_matrix(void)
{
    for (size_t k = 0; k < sizeof matrix / sizeof matrix[0]; k++) {
        const row *w = &matrix[k];
        TEST_CASE(w->env[0] ? w->env : "plain");
        set_env(w->env);
        hwrt_dist_info in;
        OK(hwrt_dist_detect(&in));
        EXPECT(!strcmp(in.launcher, w->launcher));
        EXPECT(in.rank == w->rank && in.size == w->size);
        EXPECT(in.local_rank == w->local_rank && in.local_size == w->local_size);
        EXPECT(in.node_id == w->node_id && in.device_id == w->device_id);
        if (strcmp(in.launcher, w->launcher) || in.rank != w->rank || in.local_rank != w->local_rank)
            fprintf(stderr, "  got %s rank %d/%d local %d/%d node %d device %d\n", in.launcher,
                    in.rank, in.size, in.local_rank, in.local_size, in.node_id, in.device_id);
        /* before init the queries answer from the launcher */
        EXPECT(hwrt_dist_rank() == w->rank && hwrt_dist_size() == w->size);
        EXPECT(hwrt_dist_local_rank() == (w->local_rank < 0 ? 0 : w->local_rank));
        if (strstr(w->env, "RANK_TABLE_FILE")) EXPECT(!strcmp(in.rank_table, "/etc/hccl_16p.json"));
    }
}

static void malformed(void)
{
    TEST_CASE("malformed variables");
    hwrt_dist_info in;
    set_env("RANK=abc WORLD_SIZE=2");
    FAILS(hwrt_dist_detect(&in), HWRT_ERROR_INVALID_ARGUMENT, "RANK=\"abc\"");
    set_env("RANK=4 WORLD_SIZE=4");
    FAILS(hwrt_dist_detect(&in), HWRT_ERROR_INVALID_ARGUMENT, "not below WORLD_SIZE=4");
    set_env("OMPI_COMM_WORLD_SIZE=4");
    FAILS(hwrt_dist_detect(&in), HWRT_ERROR_INVALID_ARGUMENT, "OMPI_COMM_WORLD_RANK is not");
    set_env("SLURM_PROCID=1 SLURM_NTASKS=2 SLURM_LOCALID=-1");
    FAILS(hwrt_dist_detect(&in), HWRT_ERROR_INVALID_ARGUMENT, "SLURM_LOCALID");
    /* multi-host forms, malformed */
    set_env("RANK=3 WORLD_SIZE=4 LOCAL_RANK=1 GROUP_RANK=-1");
    FAILS(hwrt_dist_detect(&in), HWRT_ERROR_INVALID_ARGUMENT, "GROUP_RANK=\"-1\"");
    set_env("SLURM_PROCID=3 SLURM_NTASKS=4 SLURM_LOCALID=1 SLURM_NODEID=node1");
    FAILS(hwrt_dist_detect(&in), HWRT_ERROR_INVALID_ARGUMENT, "SLURM_NODEID");
    set_env("RANK=3 WORLD_SIZE=4 LOCAL_RANK=2 LOCAL_WORLD_SIZE=2 GROUP_RANK=1");
    FAILS(hwrt_dist_detect(&in), HWRT_ERROR_INVALID_ARGUMENT, "LOCAL_RANK=2 is not below LOCAL_WORLD_SIZE=2");
    set_env("OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_LOCAL_RANK=2");
    FAILS(hwrt_dist_detect(&in), HWRT_ERROR_INVALID_ARGUMENT, "OMPI_COMM_WORLD_LOCAL_RANK");
    set_env("RANK=0 WORLD_SIZE=1 DEVICE_ID=x");
    FAILS(hwrt_dist_detect(&in), HWRT_ERROR_INVALID_ARGUMENT, "DEVICE_ID");
    FAILS(hwrt_dist_detect(NULL), HWRT_ERROR_INVALID_ARGUMENT, "NULL");
    EXPECT(hwrt_dist_rank() == 0 && hwrt_dist_size() == 1);   /* malformed: plain */
    clear_env();
}

static void config_key(void)
{
    TEST_CASE("dist_timeout");
    char buf[64];
    OK(hwrt_get_config("dist_timeout", buf, sizeof buf));
    EXPECT(!strcmp(buf, "300"));
    OK(hwrt_set_config("dist_timeout", "2.5"));
    OK(hwrt_get_config("dist_timeout", buf, sizeof buf));
    EXPECT(!strcmp(buf, "2.5"));
    FAILS(hwrt_set_config("dist_timeout", "-1"), HWRT_ERROR_INVALID_ARGUMENT, "seconds");
    OK(hwrt_set_config("dist_timeout", "300"));
}

/* Rank 0 of 1: every collective works without MPI (the result is the rank's own data). */
static void single_process(void)
{
    TEST_CASE("plain process");
    clear_env();
    OK(hwrt_dist_init());
    EXPECT(hwrt_dist_rank() == 0 && hwrt_dist_size() == 1 && hwrt_dist_local_rank() == 0);
    OK(hwrt_dist_bind_device("sim"));
    for (int staged = 0; staged < 2; staged++) {
        OK(hwrt_set_config("dist_force_staging", staged ? "1" : "0"));
        for (int d = 0; d < REF_NDTYPES; d++) {
            hwrt_dtype dt = ref_dtypes[d];
            unsigned char h[8 * 64], g[8 * 64];
            for (int i = 0; i < 64; i++) ref_store(dt, h, i, ref_value(dt, 0, i));
            int64_t n64[1] = {64}, n32[1] = {32};
            hwrt_tensor t, o, half;
            OK(hwrt_tensor_from_host(&t, dt, 1, n64, h));
            for (int op = 0; op <= HWRT_REDUCE_AVG; op++) OK(hwrt_allreduce(t, (hwrt_reduce_op)op, NULL));
            OK(hwrt_broadcast(t, 0, NULL));
            OK(hwrt_tensor_empty(&o, dt, 1, n64));
            OK(hwrt_allgather(o, t, NULL));
            OK(hwrt_tensor_copy_to_host(o, g, 64 * hwrt_dtype_size(dt)));
            EXPECT(!memcmp(g, h, 64 * hwrt_dtype_size(dt)));
            OK(hwrt_reduce_scatter(o, t, HWRT_REDUCE_MAX, NULL));
            OK(hwrt_tensor_copy_to_host(o, g, 64 * hwrt_dtype_size(dt)));
            EXPECT(!memcmp(g, h, 64 * hwrt_dtype_size(dt)));
            OK(hwrt_tensor_empty(&half, dt, 1, n32));
            FAILS(hwrt_allgather(half, t, NULL), HWRT_ERROR_INVALID_ARGUMENT, "1 (ranks) x 64");
            FAILS(hwrt_broadcast(t, 1, NULL), HWRT_ERROR_INVALID_ARGUMENT, "root 1");
            OK(hwrt_tensor_release(t));
            OK(hwrt_tensor_release(o));
            OK(hwrt_tensor_release(half));
        }
    }
    /* sim's memory is host-addressable (its backend property): the engine reduces it in
     * place, and only dist_force_staging adds the D2H and H2D copies (profiled launches) */
    TEST_CASE("in place on host-addressable memory, staged when forced");
    float one[256] = {0};
    int64_t n256[1] = {256};
    hwrt_tensor t;
    OK(hwrt_tensor_from_host(&t, HWRT_FLOAT32, 1, n256, one));
    uint64_t events[2] = {0, 0};
    for (int staged = 0; staged < 2; staged++) {
        OK(hwrt_set_config("dist_force_staging", staged ? "1" : "0"));
        char dir[] = "/tmp/hwrt-direct-XXXXXX", rm[64];
        EXPECT(mkdtemp(dir) != NULL);
        OK(hwrt_profiler_start(dir));
        OK(hwrt_allreduce(t, HWRT_REDUCE_SUM, NULL));
        hwrt_profiler_stats st;
        OK(hwrt_profiler_get_stats(&st));
        events[staged] = st.events;
        OK(hwrt_profiler_stop());
        snprintf(rm, sizeof rm, "rm -rf %s", dir);
        EXPECT(system(rm) == 0);
    }
    EXPECT(events[0] > 0 && events[1] >= events[0] + 2);
    if (!(events[1] >= events[0] + 2))
        fprintf(stderr, "profiled records: in place %llu, staged %llu\n",
                (unsigned long long)events[0], (unsigned long long)events[1]);
    OK(hwrt_tensor_release(t));
    OK(hwrt_set_config("dist_force_staging", "0"));
    OK(hwrt_barrier());
    OK(hwrt_dist_finalize());
}

/* torchrun-style variables with WORLD_SIZE 2 but no MPI launcher. */
static void multi_without_mpi(void)
{
    TEST_CASE("missing plugin");
    set_env("RANK=0 WORLD_SIZE=2 LOCAL_RANK=0");
    setenv("HWRT_MPI_PLUGIN", "/nonexistent/libhwrt_mpi.so", 1);
    FAILS(hwrt_dist_init(), HWRT_ERROR_UNAVAILABLE, "MPI plugin could not be loaded");
    EXPECT(strstr(hwrt_last_error(), "/nonexistent/libhwrt_mpi.so") != NULL);
    unsetenv("HWRT_MPI_PLUGIN");
    TEST_CASE("torchrun processes MPI cannot join");
    FAILS(hwrt_dist_init(), HWRT_ERROR_DIST, "not started by an MPI launcher");
    EXPECT(strstr(hwrt_last_error(), "torchrun launcher says rank 0 of 2") != NULL);
    clear_env();
}

int main(int argc, char **argv)
{
    detection_matrix();
    malformed();
    config_key();
    single_process();
    if (argc < 2 || strcmp(argv[1], "--no-mpi"))
        multi_without_mpi();
    int rc = test_report();
    hwrt_shutdown();
    return rc;
}
