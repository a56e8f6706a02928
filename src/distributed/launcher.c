/* Launcher detection: which program started this process and what rank it was given.
 * Environment only; nothing is started here (hwrt_dist_detect). */
#include "../base/status.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One launcher's variable names; NULL where it has none. */
typedef struct {
    const char *name;
    const char *rank, *rank_alt;     /* rank_alt is read when rank is absent */
    const char *size, *size_alt;
    const char *local_rank, *local_size, *node_id;
} launcher_vars;

/* Most specific first: an MPI launcher sets its variables per process, while Slurm's
 * SLURM_PROCID is inherited unchanged by everything an sbatch script starts. */
static const launcher_vars launchers[] = {
    {"openmpi", "OMPI_COMM_WORLD_RANK", NULL, "OMPI_COMM_WORLD_SIZE", NULL,
     "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", NULL},
    {"pmi", "PMI_RANK", NULL, "PMI_SIZE", NULL, "MPI_LOCALRANKID", "MPI_LOCALNRANKS", NULL},
    {"torchrun", "RANK", NULL, "WORLD_SIZE", NULL, "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK"},
    {"msrun", "RANK_ID", "MS_NODE_ID", "RANK_SIZE", "MS_WORKER_NUM", NULL, NULL, NULL},
    {"slurm", "SLURM_PROCID", NULL, "SLURM_NTASKS", NULL, "SLURM_LOCALID", NULL, "SLURM_NODEID"},
};

static const char *env(const char *name) { return name ? getenv(name) : NULL; }

/* Parse variable `name` as an integer in [lo, hi]; absent -> *out = dflt. */
static hwrt_status env_int(const char *name, int lo, int hi, int dflt, int *out)
{
    const char *v = env(name);
    if (!v || !*v) { *out = dflt; return HWRT_SUCCESS; }
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_dist_detect: %s=\"%s\" is not an integer "
                       "in %d..%d; fix the launch script (or unset it for a single process)",
                       name, v, lo, hi);
    *out = (int)x;
    return HWRT_SUCCESS;
}

/* The variable to read: a if set, else b if set, else a (named in messages). */
static const char *first_set(const char *a, const char *b)
{
    return !(env(a) && *env(a)) && env(b) && *env(b) ? b : a;
}

static hwrt_status read_launcher(const launcher_vars *l, hwrt_dist_info *o)
{
    const char *rv = first_set(l->rank, l->rank_alt), *sv = first_set(l->size, l->size_alt);
    snprintf(o->launcher, sizeof o->launcher, "%s", l->name);
    HWI_TRY(env_int(sv, 1, INT_MAX, 1, &o->size));
    HWI_TRY(env_int(rv, 0, INT_MAX, 0, &o->rank));
    if (env(sv) && !env(rv) && o->size > 1)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_dist_detect: %s launch: %s=%d is set "
                       "but %s is not; every process needs its rank", l->name, sv, o->size, rv);
    if (o->rank >= o->size)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_dist_detect: %s=%d is not below %s=%d "
                       "(ranks run 0..size-1)", rv, o->rank, sv, o->size);
    HWI_TRY(env_int(l->local_size, 1, o->size, -1, &o->local_size));
    HWI_TRY(env_int(l->local_rank, 0, o->rank, -1, &o->local_rank));
    if (o->local_size > 0 && o->local_rank >= o->local_size)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_dist_detect: %s=%d is not below %s=%d",
                       l->local_rank, o->local_rank, l->local_size, o->local_size);
    HWI_TRY(env_int(l->node_id, 0, INT_MAX, -1, &o->node_id));
    return HWRT_SUCCESS;
}

hwrt_status hwrt_dist_detect(hwrt_dist_info *out)
{
    if (!out)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_dist_detect: out is NULL");
    hwrt_dist_info o = {.launcher = "none", .rank = 0, .size = 1, .local_rank = -1,
                        .local_size = -1, .node_id = -1, .device_id = -1};
    for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++) {
        const launcher_vars *l = &launchers[i];
        if (!env(first_set(l->size, l->size_alt)) && !env(first_set(l->rank, l->rank_alt)))
            continue;
        HWI_TRY(read_launcher(l, &o));
        break;
    }
    if (!strcmp(o.launcher, "none")) {
        o.local_rank = 0;
        o.local_size = 1;
    }
    /* DEVICE_ID and RANK_TABLE_FILE come from msrun/HCCL rank-table launches, but a
     * script may export them under any launcher: honour them wherever they are. */
    HWI_TRY(env_int("DEVICE_ID", 0, 1 << 20, -1, &o.device_id));
    const char *table = env("RANK_TABLE_FILE");
    snprintf(o.rank_table, sizeof o.rank_table, "%s", table ? table : "");
    *out = o;
    return HWRT_SUCCESS;
}
