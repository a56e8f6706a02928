/* A TEST DOUBLE of libascendcl.so, never a runtime: it exports every entry point
 * src/backends/ascend/ascend_api.h lists so that hwrt's loader resolves it; the probe's
 * calls answer as HWRT_ASCEND_DOUBLE says:
 *   init_fail   aclInit fails with ACL_ERROR_RT_DEV_SETUP_ERROR (507033), as a machine
 *               whose device cannot be opened does ("TsdOpen failed")
 *   count_fail  aclInit succeeds, aclrtGetDeviceCount fails (ACL_ERROR_RT_NO_DEVICE)
 *   repeat      aclInit reports ACL_ERROR_REPEAT_INITIALIZE (another ACL user in the
 *               process initialized first: success) and there are 0 devices
 *   device      one fake device (acl_double_device.c), for tests/ascend/ascend_slots.c,
 *               ascend_ops.c (the backend's ops table directly) and ascend_hccl.c (the
 *               HCCL engine with the test double of libhccl, hccl_double.c);
 *               HWRT_ASCEND_DOUBLE_DEVICES=n (1 to 8) makes n such devices
 * In the other modes every entry point but these three aborts, naming itself: the probe
 * must not call it (acl_double_rest.c, and acl_double_device.c's check of the mode). No
 * suite that reports results "on ascend" loads the double. */
#include "backends/ascend/ascend_api.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *mode(void)
{
    const char *m = getenv("HWRT_ASCEND_DOUBLE");
    return m ? m : "";
}

static const char *recent;
int acl_double_devices(void);

hacl_error aclInit(const char *config)
{
    (void)config;
    if (!strcmp(mode(), "init_fail")) {
        recent = "TsdOpen failed (hwrt's test double of libascendcl)";
        return HACL_ERROR_RT_DEV_SETUP_ERROR;
    }
    if (!strcmp(mode(), "repeat")) return HACL_ERROR_REPEAT_INITIALIZE;
    return HACL_SUCCESS;
}

hacl_error aclrtGetDeviceCount(uint32_t *count)
{
    if (!strcmp(mode(), "count_fail")) {
        recent = "no device (hwrt's test double of libascendcl)";
        return HACL_ERROR_RT_NO_DEVICE;
    }
    *count = !strcmp(mode(), "device") ? (uint32_t)acl_double_devices() : 0;
    return HACL_SUCCESS;
}

/* HWRT_ASCEND_DOUBLE_DEVICES: the fake devices of the device mode (1 unless 2 to 8) */
int acl_double_devices(void)
{
    const char *v = getenv("HWRT_ASCEND_DOUBLE_DEVICES");
    int n = v ? atoi(v) : 1;
    return n >= 1 && n <= 8 ? n : 1;
}

const char *aclGetRecentErrMsg(void)
{
    return recent;
}
