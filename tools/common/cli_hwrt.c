/* cli_hwrt_fail: in its own object, so a tool that does not link libhwrt (hwrt-prof) can
 * use the rest of the library. */
#include "cli.h"

#include <hwrt.h>

int cli_hwrt_fail(const cli_tool *t, const char *what, int status)
{
    return cli_fail(t, "%s: %s: %s", what, hwrt_status_name((hwrt_status)status),
                    hwrt_last_error());
}
