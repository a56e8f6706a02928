/* base/dynlib: the run-time loader every vendor library goes through, on real system
 * libraries (libm, libc): the environment override, the fallback list, required and
 * optional symbols, aliases, and lookups across several handles. */
#include "harness.h"
#include "base/dynlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef double (*unary_fn)(double);

static int opens, inits, fake_ndev;
static hwrt_status fake_open(char *reason, size_t len)
{
    opens++;
    snprintf(reason, len, "%s", "");
    return HWRT_SUCCESS;
}
static hwrt_status fake_init(char *reason, size_t len)
{
    inits++;
    fake_ndev = 3;
    snprintf(reason, len, "init said %d", inits);
    return HWRT_SUCCESS;
}
static hwrt_status failing_open(char *reason, size_t len)
{
    opens++;
    fake_ndev = 5;                    /* a count is not handed out after a failure */
    snprintf(reason, len, "no such runtime");
    return HWRT_ERROR_UNAVAILABLE;
}

/* 0 when hwi_dynlib_load_once behaves; the failing check's line otherwise. */
static int load_once_case(void)
{
    hwi_dynlib_once ok = HWI_DYNLIB_ONCE_INIT, bad = HWI_DYNLIB_ONCE_INIT;
    char why[64];
    int n = -1;
    for (int i = 0; i < 3; i++) {
        if (hwi_dynlib_load_once(&ok, fake_open, fake_init, &fake_ndev, &n, why, sizeof why) !=
            HWRT_SUCCESS) return __LINE__;
        if (n != 3 || strcmp(why, "init said 1") != 0) return __LINE__;
    }
    if (opens != 1 || inits != 1) return __LINE__;
    if (hwi_dynlib_load_once(&ok, fake_open, fake_init, &fake_ndev, &n, NULL, 0) != HWRT_SUCCESS)
        return __LINE__;                                  /* no reason buffer */
    for (int i = 0; i < 2; i++) {
        n = -1;
        if (hwi_dynlib_load_once(&bad, failing_open, fake_init, &fake_ndev, &n, why, sizeof why) !=
            HWRT_ERROR_UNAVAILABLE) return __LINE__;
        if (n != 0 || strcmp(why, "no such runtime") != 0) return __LINE__;
    }
    if (opens != 2 || inits != 1) return __LINE__;        /* init never runs after a failed open */
    return 0;
}

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

    TEST_CASE("many names: the list is cut at a name, the reason stays whole");
    const char *many[] = {"/nonexistent/hwrt-dynlib-test-one/libfirst-of-six.so",
                          "/nonexistent/hwrt-dynlib-test-two/libsecond-of-six.so",
                          "/nonexistent/hwrt-dynlib-test-three/libthird-of-six.so",
                          "/nonexistent/hwrt-dynlib-test-four/libfourth-of-six.so",
                          "/nonexistent/hwrt-dynlib-test-five/libfifth-of-six.so",
                          "/nonexistent/hwrt-dynlib-test-six/libsixth-of-six.so", NULL};
    char big[1024];
    EXPECT(hwi_dynlib_open(NULL, many, NULL, big, sizeof big) == NULL);
    EXPECT(strstr(big, "none of /nonexistent/hwrt-dynlib-test-one/libfirst-of-six.so, ") == big);
    EXPECT(strstr(big, "/libthird-of-six.so, ... could be loaded (dlopen: ") != NULL);
    EXPECT(strstr(big, "fourth-of-six.so,") == NULL && strstr(big, "sixth-of-six.so,") == NULL);
    EXPECT(strstr(big, "libsixth-of-six.so: cannot open") != NULL);   /* the last message */
    EXPECT(hwi_dynlib_open(NULL, none, NULL, NULL, sizeof why) == NULL);   /* no reason wanted */

    TEST_CASE("the environment override wins, and a bad one is not silently replaced");
    setenv("HWRT_TEST_DYNLIB", "/nonexistent/libx.so", 1);
    EXPECT(hwi_dynlib_open("HWRT_TEST_DYNLIB", names, NULL, why, sizeof why) == NULL);
    EXPECT(strstr(why, "HWRT_TEST_DYNLIB=/nonexistent/libx.so could not be loaded: cannot open") != NULL);
    EXPECT(hwi_dynlib_open("HWRT_TEST_DYNLIB", names, NULL, NULL, sizeof why) == NULL);
    EXPECT(strstr(why, "No such file") != NULL);             /* the loader's message */
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
    const char *libc_names[] = {"libc.so.6", NULL};
    void *libc = hwi_dynlib_open(NULL, libc_names, NULL, why, sizeof why);
    EXPECT(libc != NULL);
    void *hs[] = {NULL, libc, m};
    EXPECT(hwi_dynlib_find(hs, 3, "cos") == (void *)c);   /* libc lacks it: libm's */
    EXPECT(hwi_dynlib_find(hs, 3, "strlen") != NULL);
    EXPECT(hwi_dynlib_find(hs, 3, "hwrt_no_such_symbol") == NULL);
    EXPECT(hwi_dynlib_find(hs, 0, "cos") == NULL);
    void *libc_then_m[] = {libc, m};
    EXPECT(hwi_dynlib_find(libc_then_m, 1, "cos") == NULL);      /* only the first n */
    TEST_CASE("local by default, global with HWI_DYNLIB_GLOBAL");
    /* libcrypt (Debian's essential libcrypt1) is not in this process until opened here;
     * crypt_gensalt, not crypt, which the sanitizers' runtimes intercept */
    const char *crypt_lib[] = {"libcrypt.so.1", NULL};
    EXPECT(dlsym(RTLD_DEFAULT, "crypt_gensalt") == NULL);
    void *cr = hwi_dynlib_open(NULL, crypt_lib, NULL, why, sizeof why);
    EXPECT(cr != NULL && dlsym(cr, "crypt_gensalt") != NULL);
    EXPECT(dlsym(RTLD_DEFAULT, "crypt_gensalt") == NULL);  /* RTLD_LOCAL: not seen by others */
    EXPECT(hwi_dynlib_open_flags(NULL, crypt_lib, HWI_DYNLIB_GLOBAL, NULL, why, sizeof why) == cr);
    EXPECT(dlsym(RTLD_DEFAULT, "crypt_gensalt") != NULL);  /* RTLD_GLOBAL: seen by all */
    setenv("HWRT_TEST_DYNLIB", "/nonexistent/liby.so", 1);
    EXPECT(hwi_dynlib_open_flags("HWRT_TEST_DYNLIB", crypt_lib, HWI_DYNLIB_GLOBAL, NULL, why,
                                 sizeof why) == NULL);
    EXPECT(strstr(why, "HWRT_TEST_DYNLIB=/nonexistent/liby.so") != NULL);
    TEST_CASE("a runtime brought up once: the first attempt's status, reason and count");
    EXPECT(load_once_case() == 0);
    return test_report();
}
