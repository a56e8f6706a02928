/* The OpenCL failure-injection tests' way to fail_cl.c's fail_cl_fail_next and
 * fail_cl_event_status_next: the library
 * HWRT_OPENCL_LIBRARY names (already loaded by hwrt_set_device("opencl", ...)). NULL, with
 * a line on stderr, when that library is not fail_cl.c. */
#ifndef HWRT_TEST_FAIL_CL_NEXT_H
#define HWRT_TEST_FAIL_CL_NEXT_H

#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef void (*fail_cl_next_fn)(const char *fn, long count, cl_int code);
typedef void (*fail_cl_status_next_fn)(cl_int status, long count);

/* The symbol `name` of the loaded HWRT_OPENCL_LIBRARY, NULL (with a line on stderr) when
 * that library is not fail_cl.c. */
static inline void *fail_cl_sym(const char *name)
{
    const char *lib = getenv("HWRT_OPENCL_LIBRARY");
    void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
    void *f = h ? dlsym(h, name) : NULL;
    if (!f)
        fprintf(stderr, "HWRT_OPENCL_LIBRARY (%s) is not tests/opencl/fail_cl.c\n", lib ? lib : "unset");
    return f;
}

static inline fail_cl_next_fn fail_cl_next_lookup(void)
{
    fail_cl_next_fn f = NULL;
    *(void **)&f = fail_cl_sym("fail_cl_fail_next");
    return f;
}

/* fail_cl_event_status_next: the next status queries answer `status` */
static inline fail_cl_status_next_fn fail_cl_status_next_lookup(void)
{
    fail_cl_status_next_fn f = NULL;
    *(void **)&f = fail_cl_sym("fail_cl_event_status_next");
    return f;
}

#endif
