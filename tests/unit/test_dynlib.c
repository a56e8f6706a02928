/* base/dynlib: the run-time loader every vendor library goes through, on real system
 * libraries (libm, libc): the environment override, the fallback list, required and
 * optional symbols, aliases, and lookups across several handles. */
#include "harness.h"
#include "base/dynlib.h"

#include <stdlib.h>
#include <string.h>

typedef double (*unary_fn)(double);

int main(void)
{
    char why[256];
    const char *opened = NULL;

    TEST_CASE("fallback list: the first that loads");
    const char *names[] = {"libhwrt-no-such-lib.so.9", "libm.so.6", NULL};
    unsetenv("HWRT_TEST_DYNLIB");
    void *m = hwi_dynlib_open("HWRT_TEST_DYNLIB", names, &opened, why, sizeof why);
    EXPECT(m != NULL);
    EXPECT(opened && !strcmp(opened, "libm.so.6"));

    TEST_CASE("nothing loads: every name tried is in the reason");
    const char *none[] = {"libhwrt-no-such-a.so", "libhwrt-no-such-b.so", NULL};
    EXPECT(hwi_dynlib_open(NULL, none, NULL, why, sizeof why) == NULL);
    EXPECT(strstr(why, "libhwrt-no-such-a.so, libhwrt-no-such-b.so") != NULL);
    EXPECT(strstr(why, "dlopen:") != NULL);

    TEST_CASE("the environment override wins, and a bad one is not silently replaced");
    setenv("HWRT_TEST_DYNLIB", "/nonexistent/libx.so", 1);
    EXPECT(hwi_dynlib_open("HWRT_TEST_DYNLIB", names, NULL, why, sizeof why) == NULL);
    EXPECT(strstr(why, "HWRT_TEST_DYNLIB=/nonexistent/libx.so") != NULL);
    setenv("HWRT_TEST_DYNLIB", "libm.so.6", 1);
    opened = NULL;
    EXPECT(hwi_dynlib_open("HWRT_TEST_DYNLIB", none, &opened, why, sizeof why) != NULL);
    EXPECT(opened && !strcmp(opened, "libm.so.6"));
    setenv("HWRT_TEST_DYNLIB", "", 1);          /* empty: as if unset */
    EXPECT(hwi_dynlib_open("HWRT_TEST_DYNLIB", names, NULL, why, sizeof why) != NULL);

    TEST_CASE("required, optional and aliased symbols");
    unary_fn c = NULL, s = NULL, newer = NULL, aliased = NULL;
    hwi_dynsym ok[] = {
        {"cos", (void **)&c, 0, NULL},
        {"hwrt_no_such_symbol_v2", (void **)&newer, HWI_DYNSYM_OPTIONAL, NULL},
        {"hwrt_no_such_symbol_v3", (void **)&aliased, 0, "sin"},
        {"sin", (void **)&s, 0, NULL},
    };
    EXPECT(hwi_dynlib_resolve(m, ok, 4) == NULL);
    EXPECT(c && c(0.0) == 1.0);
    EXPECT(newer == NULL);
    EXPECT(aliased && aliased == s && aliased(0.0) == 0.0);

    TEST_CASE("a missing required symbol is named, and later ones are still filled");
    unary_fn after = NULL, opt = (unary_fn)1;
    hwi_dynsym bad[] = {
        {"hwrt_missing_one", (void **)&newer, 0, NULL},
        {"hwrt_missing_two", (void **)&opt, HWI_DYNSYM_OPTIONAL, NULL},
        {"hwrt_missing_three", (void **)&newer, 0, NULL},
        {"tan", (void **)&after, 0, NULL},
    };
    const char *miss = hwi_dynlib_resolve(m, bad, 4);
    EXPECT(miss && !strcmp(miss, "hwrt_missing_one"));
    EXPECT(after != NULL && opt == NULL);

    TEST_CASE("one symbol across several handles");
    void *libc = hwi_dynlib_open_shared("libc.so.6");
    EXPECT(libc != NULL);
    void *hs[] = {NULL, libc, m};
    EXPECT(hwi_dynlib_find(hs, 3, "cos") == (void *)c);   /* libc lacks it: libm's */
    EXPECT(hwi_dynlib_find(hs, 3, "strlen") != NULL);
    EXPECT(hwi_dynlib_find(hs, 3, "hwrt_no_such_symbol") == NULL);
    EXPECT(hwi_dynlib_find(hs, 0, "cos") == NULL);
    return test_report();
}
