/* Opt-in logging. The level is a config key (log_level) seeded from HWRT_LOG_LEVEL.
 * One line per message, written with one call (lines of several threads do not mix):
 *   [hwrt info] 4711 +0.012s device 0 opened: hwrt simulated NPU 0 (sim, simulated), ...
 * level, process id, seconds since the process's first message; the text is cleaned for
 * a terminal (control characters of names and environment values become '?'). */
#include "log.h"
#include "config.h"
#include "escape.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int hwi_log_level(void) { return (int)hwi_cfg_int(HWI_CFG_LOG_LEVEL); }

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void hwi_log(int level, const char *fmt, ...)
{
    if (level > hwi_log_level() || level <= HWI_LOG_OFF)
        return;
    static const char *const tag[] = {"", "error", "warn", "info", "debug", "trace"};
    static _Atomic uint64_t t0;
    uint64_t now = now_ns(), zero = 0;
    atomic_compare_exchange_strong(&t0, &zero, now);
    uint64_t since = now - atomic_load(&t0);
    char raw[1536], clean[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    hwi_term_clean(clean, sizeof clean, raw, -1);
    char line[2200];
    int n = snprintf(line, sizeof line, "[hwrt %s] %ld +%llu.%03llus %s\n",
                     tag[level > HWI_LOG_TRACE ? HWI_LOG_TRACE : level], (long)getpid(),
                     (unsigned long long)(since / 1000000000u),
                     (unsigned long long)(since / 1000000u % 1000u), clean);
    if (n > (int)sizeof line - 1) {
        n = (int)sizeof line - 1;
        line[n - 1] = '\n';
    }
    fwrite(line, 1, (size_t)n, stderr);
}
