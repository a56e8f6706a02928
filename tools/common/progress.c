/* Progress lines on a terminal (progress.h). */
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void cli_progress_begin(cli_progress *p, const char *tool, const char *what, int quiet)
{
    memset(p, 0, sizeof *p);
    const char *force = getenv("HWRT_PROGRESS");
    p->on = !quiet && (force && *force ? *force == '1' : isatty(STDERR_FILENO));
    p->tool = tool;
    p->what = what;
    p->start = now_s();
    p->last = -1;
    p->out = stderr;
}

void cli_progress_step(cli_progress *p, long done, long total, const char *detail)
{
    if (!p->on) return;
    double t = now_s();
    if (p->last >= 0 && t - p->last < 0.1 && !(total > 0 && done >= total)) return;
    p->last = t;
    char line[160];
    int n = total > 0 ? snprintf(line, sizeof line, "%s: %s %ld/%ld (%.0f s)", p->tool, p->what,
                                 done, total, t - p->start)
                      : snprintf(line, sizeof line, "%s: %s %ld (%.0f s)", p->tool, p->what, done,
                                 t - p->start);
    if (detail && n > 0 && (size_t)n < sizeof line)
        snprintf(line + n, sizeof line - (size_t)n, " %s", detail);
    /* \r, the line, then erase what a longer previous line left (ECMA-48 EL) */
    fprintf(p->out, "\r%s\033[K", line);
    fflush(p->out);
    p->shown = 1;
}

void cli_progress_end(cli_progress *p)
{
    if (p->on && p->shown) {
        fputs("\r\033[K", p->out);
        fflush(p->out);
    }
    p->shown = 0;
}
