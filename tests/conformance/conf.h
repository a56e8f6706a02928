/* The conformance suite's harness. Written against <hwrt.h> only, so that it runs
 * unchanged on every backend; the only internal header is half.h (host references for
 * float16/bfloat16). A feature the backend lacks is reported with unsupported(), which
 * prints "unsupported: <reason>" and counts it; it never counts as passed. */
#ifndef HWRT_CONF_H
#define HWRT_CONF_H

#define HARNESS_SHARED               /* counters shared by the suite's files */
#include "harness.h"
#include "half.h"

extern int c_unsupported;
extern const char *c_backend;        /* --backend NAME */
extern int c_ndev;                   /* devices of that backend */

#define CASE(name) TEST_CASE(name)

/* Print "unsupported: [case] reason" (a feature this backend lacks). */
void unsupported(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Deterministic pseudo-random data. */
uint32_t conf_rand(void);
float conf_randf(float lo, float hi);
/* Busy-wait (with short sleeps) until cond() or timeout_ms; 1 if cond became true. */
int conf_wait_until(int (*cond)(void *), void *arg, int timeout_ms);
void conf_sleep_ms(int ms);

/* A host-function gate: gate_fn blocks its stream until gate_open(). */
typedef struct conf_gate { volatile int open; volatile int entered; } conf_gate;
void conf_gate_fn(void *gate);
void conf_gate_open(conf_gate *g);
int conf_gate_wait_entered(conf_gate *g, int timeout_ms);

/* Sections (one file each). */
void conf_core(void);
void conf_device(void);
void conf_memory(void);
void conf_copy(void);
void conf_stream(void);
void conf_event(void);
void conf_tensor(void);
void conf_ops(void);
void conf_dlpack(void);
void conf_shutdown(void);

#endif
