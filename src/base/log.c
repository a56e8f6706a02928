/* Opt-in logging. The level is a config key (log_level) seeded from HWRT_LOG_LEVEL. */
#include "log.h"
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

int hwi_log_level(void) { return (int)hwi_cfg_int(HWI_CFG_LOG_LEVEL); }

void hwi_log(int level, const char *fmt, ...)
{
    if (level > hwi_log_level())
        return;
    static const char *const tag[] = {"", "error", "warn", "info", "debug", "trace"};
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "[hwrt %s] ", tag[level]);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
