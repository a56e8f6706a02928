/* Public diagnosis switches and the checker's report queries (hwrt_diag.h). The
 * switches are config keys, so the env variables, HWRT_*_CONF and hwrt_set_config
 * reach the same state. */
#include "sync_check.h"
#include "../base/status.h"

hwrt_status hwrt_set_launch_blocking(int on)
{
    return hwrt_set_config("launch_blocking", on ? "1" : "0");
}

hwrt_status hwrt_set_check_sync(int on)
{
    return hwrt_set_config("check_sync", on ? "1" : "0");
}

uint64_t hwrt_diag_hazard_count(void)
{
    return hwi_sync_check_hazards();
}

hwrt_status hwrt_diag_last_hazard(char *buf, size_t len)
{
    if (!buf || !len)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_diag_last_hazard: buf is NULL or len "
                       "is 0");
    hwi_sync_check_last(buf, len);
    return HWRT_SUCCESS;
}

hwrt_status hwrt_diag_reset(void)
{
    hwi_sync_check_reset();
    return HWRT_SUCCESS;
}
