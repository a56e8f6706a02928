/* CHECK(call) for the examples, the profiler's test programs and the benchmarks: on
 * failure print the call, the status and hwrt's sentence, and exit 1. */
#ifndef EXAMPLE_CHECK_H
#define EXAMPLE_CHECK_H

#include <hwrt.h>

#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                  \
    do {                                                                             \
        hwrt_status st_ = (call);                                                    \
        if (st_ != HWRT_SUCCESS) {                                                   \
            fprintf(stderr, "%s failed: %s: %s\n", #call, hwrt_status_name(st_),     \
                    hwrt_last_error());                                              \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

#endif
