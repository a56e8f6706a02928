/* A minimal test harness: CHECK/EXPECT macros that count, and a closing line
 * "N passed, N failed" that CTest logs and CI reads. One process runs many cases.
 * A suite of several files defines HARNESS_SHARED before including it and defines the
 * counters once (HARNESS_COUNTERS in one file), as the conformance suite does. */
#ifndef HWRT_TEST_HARNESS_H
#define HWRT_TEST_HARNESS_H

#include <hwrt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

/* atomic: test threads report too */
#ifdef HARNESS_SHARED
extern _Atomic int t_passed, t_failed;
extern const char *t_case;
#define HARNESS_COUNTERS _Atomic int t_passed, t_failed; const char *t_case = ""
#else
static _Atomic int t_passed, t_failed;
static const char *t_case = "";
#endif

#define TEST_CASE(name) (t_case = (name))

#define EXPECT(cond)                                                                      \
    do {                                                                                  \
        if (cond) t_passed++;                                                             \
        else {                                                                            \
            t_failed++;                                                                   \
            fprintf(stderr, "FAIL [%s] %s:%d: %s\n", t_case, __FILE__, __LINE__, #cond);  \
        }                                                                                 \
    } while (0)

/* A call expected to succeed. */
#define OK(call)                                                                          \
    do {                                                                                  \
        hwrt_status st_ = (call);                                                         \
        if (st_ == HWRT_SUCCESS) t_passed++;                                              \
        else {                                                                            \
            t_failed++;                                                                   \
            fprintf(stderr, "FAIL [%s] %s:%d: %s -> %s: %s\n", t_case, __FILE__, __LINE__, \
                    #call, hwrt_status_name(st_), hwrt_last_error());                     \
        }                                                                                 \
    } while (0)

/* A call expected to fail with status `want` and a (non-empty) sentence containing `frag`. */
#define FAILS(call, want, frag)                                                           \
    do {                                                                                  \
        hwrt_status st_ = (call);                                                         \
        const char *e_ = hwrt_last_error();                                               \
        if (st_ == (want) && e_[0] && strstr(e_, (frag))) t_passed++;                     \
        else {                                                                            \
            t_failed++;                                                                   \
            fprintf(stderr, "FAIL [%s] %s:%d: %s -> %s (want %s) \"%s\" (want \"%s\")\n", \
                    t_case, __FILE__, __LINE__, #call, hwrt_status_name(st_),             \
                    hwrt_status_name(want), e_, (frag));                                  \
        }                                                                                 \
    } while (0)

/* A host function (hwrt_launch_host_func(s, harness_gate, &flag)) that holds its stream
 * until the atomic_int flag is set: work queued after it stays queued meanwhile. */
static inline void harness_gate(void *flag)
{
    while (!atomic_load((atomic_int *)flag)) usleep(100);
}

/* A test that sends fd 2 elsewhere to read the runtime's log keeps the sanitizers' reports
 * on the real stderr (`fd`, a dup of it), so that a race or an overflow found while the log
 * is captured is not swallowed with it (TSan halts on its first report: the test would exit
 * 66 with nothing to show). Does nothing in a build without a sanitizer. */
void __sanitizer_set_report_fd(void *fd) __attribute__((weak));
static inline void harness_sanitizer_reports_to(int fd)
{
    if (__sanitizer_set_report_fd) __sanitizer_set_report_fd((void *)(intptr_t)fd);
}

static inline int test_report(void)
{
    printf("%d passed, %d failed\n", atomic_load(&t_passed), atomic_load(&t_failed));
    return t_failed ? 1 : 0;
}

#endif
