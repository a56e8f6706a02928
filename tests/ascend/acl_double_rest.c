/* The rest of the test double of libascendcl.so (acl_double.c): every entry point of
 * ascend_api.h's list, weak, aborting with its name when called; acl_double.c's strong
 * definitions replace the three the probe calls. Parameters are left out: these never
 * return, so what they were passed does not matter. */
#include "backends/ascend/ascend_api.h"

#include <stdio.h>
#include <stdlib.h>

static void called(const char *name)
{
    fprintf(stderr, "hwrt's test double of libascendcl: %s was called; the double only "
            "answers the probe (aclInit, aclrtGetDeviceCount)\n", name);
    abort();
}

#define DOUBLE_FN(slot, sym, ret, args, flags)                                             \
    __attribute__((weak)) void sym(void);                                                  \
    __attribute__((weak)) void sym(void) { called(#sym); }
HACL_RT_FUNCS(DOUBLE_FN, hacl_physical_mem_prop)
