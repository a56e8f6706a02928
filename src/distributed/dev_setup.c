/* The device engines' setup exchanges (see dev_setup.h). */
#include "dev_setup.h"
#include "../base/status.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What each rank says before the blob is broadcast. */
typedef struct {
    int32_t status;
    char msg[244];
} setup_vote;

hwrt_status hwi_setup_share(const hwi_coll_engine *host, int rank, int size,
                            hwrt_status local_st, const char *local_msg, const char *lib,
                            const char *blob_name, hwi_setup_blob_fn make, void *blob,
                            size_t len)
{
    setup_vote me = {local_st, ""};
    memset(blob, 0, len);
    if (local_st != HWRT_SUCCESS)
        snprintf(me.msg, sizeof me.msg, "%s", local_msg);
    else
        me.status = make(rank == 0, blob, len, me.msg, sizeof me.msg);
    setup_vote *all = calloc((size_t)size, sizeof *all);
    if (!all) return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "%s setup: host out of memory", lib);
    hwrt_status st = host->allgather(NULL, &me, all, sizeof me, NULL);
    if (st != HWRT_SUCCESS) {
        free(all);
        return hwi_err_prefix(st, "%s setup: ranks could not report over MPI", lib);
    }
    for (int r = 0; r < size; r++)
        if (all[r].status != HWRT_SUCCESS) {
            all[r].msg[sizeof all[r].msg - 1] = 0;
            st = hwi_err((hwrt_status)all[r].status, "%s setup: rank %d of %d cannot take "
                         "part: %s", lib, r, size, all[r].msg);
            free(all);
            return st;
        }
    free(all);
    st = host->broadcast(NULL, blob, len, 0, NULL);
    if (st != HWRT_SUCCESS) return hwi_err_prefix(st, "%s setup: broadcasting %s", lib, blob_name);
    return HWRT_SUCCESS;
}

hwrt_status hwi_setup_agree(const hwi_coll_engine *host, int size, int32_t mine,
                            int *bad_rank, int32_t *bad_code)
{
    *bad_rank = -1;
    *bad_code = 0;
    int32_t *all = calloc((size_t)size, sizeof *all);
    if (!all) return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "communicator setup: host out of memory");
    hwrt_status st = host->allgather(NULL, &mine, all, sizeof mine, NULL);
    for (int i = 0; st == HWRT_SUCCESS && i < size && *bad_rank < 0; i++)
        if (all[i]) {
            *bad_rank = i;
            *bad_code = all[i];
        }
    free(all);
    return st;
}
