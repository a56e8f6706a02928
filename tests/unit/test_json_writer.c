/* The JSON writer (src/base/json.h) every --json output and the library's JSON use:
 * documents it writes parse (hwi_jw_valid, and /usr/bin/python3's json in tests/smi and
 * tests/install), strings are escaped, non-finite numbers become null, and misuse (a value
 * without its key, a key in an array, unbalanced or extra closes, two documents, an
 * embedded child output that is not JSON) is reported rather than written as broken JSON. */
#include "harness.h"
#include "base/json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static char *buf;
static size_t len;

static FILE *open_mem(void)
{
    free(buf);
    buf = NULL;
    len = 0;
    return open_memstream(&buf, &len);
}

int main(void)
{
    hwi_jw j;
    FILE *f;

    TEST_CASE("a nested document");
    f = open_mem();
    hwi_jw_begin(&j, f, 0);
    hwi_jw_obj(&j);
    hwi_jw_kstr(&j, "name", "a \"quoted\"\n\tname \xff");
    hwi_jw_knum(&j, "nan", NAN);
    hwi_jw_knum(&j, "inf", -INFINITY);
    hwi_jw_knum(&j, "half", 0.5);
    hwi_jw_knum(&j, "big", 4294967296.0);
    hwi_jw_kint(&j, "neg", -3);
    hwi_jw_kuint(&j, "u", 18446744073709551615ull);
    hwi_jw_kbool(&j, "t", 1);
    hwi_jw_kstr(&j, "null", NULL);
    hwi_jw_key(&j, "list");
    hwi_jw_arr(&j);
    hwi_jw_int(&j, 1);
    hwi_jw_obj(&j);
    hwi_jw_close(&j);
    hwi_jw_arr(&j);
    hwi_jw_close(&j);
    hwi_jw_raw(&j, " {\"child\": [1, 2.5e3, \"x\"]}\n", 28);
    hwi_jw_close(&j);
    hwi_jw_close(&j);
    EXPECT(hwi_jw_end(&j) == 0);
    fclose(f);
    printf("%s", buf);
    EXPECT(hwi_jw_valid(buf, len));
    EXPECT(strstr(buf, "\"nan\": null, \"inf\": null, \"half\": 0.5, \"big\": 4294967296") != NULL);
    EXPECT(strstr(buf, "\\\"quoted\\\"\\n\\tname") != NULL);
    EXPECT(strstr(buf, "\"u\": 18446744073709551615") != NULL);
    EXPECT(strstr(buf, "[1, {}, [], {\"child\": [1, 2.5e3, \"x\"]}]") != NULL);

    TEST_CASE("misuse is reported");
    struct { const char *what; int steps; } cases[] = {
        {"value without key", 1}, {"key in array", 2}, {"unclosed", 3}, {"extra close", 4},
        {"two documents", 5}, {"raw not JSON", 6}, {"close after key", 7}, {"nothing", 8}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        f = open_mem();
        hwi_jw_begin(&j, f, 0);
        switch (cases[c].steps) {
        case 1: hwi_jw_obj(&j); hwi_jw_int(&j, 1); hwi_jw_close(&j); break;
        case 2: hwi_jw_arr(&j); hwi_jw_key(&j, "k"); hwi_jw_close(&j); break;
        case 3: hwi_jw_obj(&j); break;
        case 4: hwi_jw_arr(&j); hwi_jw_close(&j); hwi_jw_close(&j); break;
        case 5: hwi_jw_int(&j, 1); hwi_jw_int(&j, 2); break;
        case 6: hwi_jw_arr(&j); hwi_jw_raw(&j, "{\"a\":", 5); hwi_jw_close(&j); break;
        case 7: hwi_jw_obj(&j); hwi_jw_key(&j, "k"); hwi_jw_close(&j); break;
        default: break;
        }
        int rc = hwi_jw_end(&j);
        fclose(f);
        if (rc != -1) printf("case '%s' not reported: %s\n", cases[c].what, buf);
        EXPECT(rc == -1);
    }

    TEST_CASE("the validator");
    const char *good[] = {"0", "-1.5e-3", "\"\\u00e9\"", "[]", "{}", " [1, {\"a\": [null, true]}] ",
                          "\"tab\\t\""};
    const char *bad[] = {"", "01", "1.", "[1,]", "{\"a\" 1}", "{\"a\":1,}", "nul", "\"\t\"",
                         "[1] [2]", "{a:1}", "\"\\x\"", "NaN", "[", "\"abc"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) EXPECT(hwi_jw_valid(good[i], strlen(good[i])));
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (hwi_jw_valid(bad[i], strlen(bad[i]))) printf("accepted: %s\n", bad[i]);
        EXPECT(!hwi_jw_valid(bad[i], strlen(bad[i])));
    }
    free(buf);
    return test_report();
}
