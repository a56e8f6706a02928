/* Progress of a long run on stderr (hwrt-bench all, hwrt-bench-pool --min-capacity): one
 * line rewritten in place, "NAME: WHAT 3/9 (12 s) detail", at most 10 times a second, only
 * when stderr is a terminal and --quiet was not given, and erased at the end, so neither
 * a log file nor a pipe nor stdout (where results and JSON go) ever sees it. Also used by
 * the offload fault campaign (tests/unit/test_offload_campaign.c). */
#ifndef HWRT_TOOL_PROGRESS_H
#define HWRT_TOOL_PROGRESS_H

#include <stdio.h>

typedef struct cli_progress {
    int on;
    const char *tool, *what;
    double start, last;
    int shown;                    /* a line is on the terminal */
    FILE *out;                    /* stderr; a caller that moves fd 2 sets its own */
} cli_progress;

/* on = !quiet && isatty(2); HWRT_PROGRESS=1 forces it on (tests), =0 off. */
void cli_progress_begin(cli_progress *p, const char *tool, const char *what, int quiet);
/* done of total steps (total <= 0: unknown); detail may be NULL. */
void cli_progress_step(cli_progress *p, long done, long total, const char *detail);
void cli_progress_end(cli_progress *p);

#endif
