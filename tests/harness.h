/* A minimal test harness: CHECK/EXPECT macros that count, and a closing line
 * "N passed, N failed" that CTest logs and CI reads. One process runs many cases. */
#ifndef HWRT_TEST_HARNESS_H
#define HWRT_TEST_HARNESS_H

#include <hwrt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdatomic.h>

/* atomic: test threads report too */
static _Atomic int t_passed, t_failed;
static const char *t_case = "";

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

/* A call expected to fail with status `want` and a sentence containing `frag`. */
#define FAILS(call, want, frag)                                                           \
    do {                                                                                  \
        hwrt_status st_ = (call);                                                         \
        if (st_ == (want) && strstr(hwrt_last_error(), (frag))) t_passed++;               \
        else {                                                                            \
            t_failed++;                                                                   \
            fprintf(stderr, "FAIL [%s] %s:%d: %s -> %s (want %s) \"%s\" (want \"%s\")\n", \
                    t_case, __FILE__, __LINE__, #call, hwrt_status_name(st_),             \
                    hwrt_status_name(want), hwrt_last_error(), (frag));                   \
        }                                                                                 \
    } while (0)

static int test_report(void)
{
    printf("%d passed, %d failed\n", atomic_load(&t_passed), atomic_load(&t_failed));
    return t_failed ? 1 : 0;
}

#endif
