/* Opt-in logging to stderr: HWRT_LOG_LEVEL, a name or a number (0 off, 1 error, 2 warn,
 * 3 info, 4 debug, 5 trace). info: backend selection, device open, OOM retries, collectives
 * set-up; debug: segments reserved and released, offload moves, every error sentence
 * (docs/troubleshooting.md, "Logs"). A caller that formats costly arguments checks
 * hwi_log_level() first. */
#ifndef HWI_LOG_H
#define HWI_LOG_H

enum { HWI_LOG_OFF = 0, HWI_LOG_ERROR = 1, HWI_LOG_WARN = 2, HWI_LOG_INFO = 3, HWI_LOG_DEBUG = 4,
       HWI_LOG_TRACE = 5 };

int hwi_log_level(void);
void hwi_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
