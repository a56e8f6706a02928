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
#include <sys/mman.h>
#include <unistd.h>

static char *buf;
static size_t len;

static FILE *open_mem(void)
{
    free(buf);
    buf = NULL;
    len = 0;
    return open_memstream(&buf, &len);
}

/* json.c hwi_jw_valid reads only the len bytes it is given: num's `r->p < r->e` before a
 * leading '0' (made `<=`) and str's `r->p >= r->e` before a \u escape's hex digit (made
 * `>`) read the byte at text + len. Every prefix of these documents is validated where it
 * ends at a page boundary, the next page PROT_NONE: a read past the end is a SIGSEGV. */
static void validator_reads_only_len_bytes(void)
{
    TEST_CASE("the validator reads no byte past len (every prefix, at a page's end)");
    static const char *const docs[] = {
        "-0", "[-0, 0.5e+1]", "{\"k\": -0}", "\"\\u00e9\"", "[\"\\uABcd\", \"x\\n\"]",
        "{\"a\": [true, false, null, -12.5E-3]}", "[1e-5]", "\"\\\\\"",
    };
    long pg = sysconf(_SC_PAGESIZE);
    char *map = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
    EXPECT(map != MAP_FAILED);
    if (map == MAP_FAILED) return;
    EXPECT(mprotect(map + pg, (size_t)pg, PROT_NONE) == 0);
    int checked = 0;
    for (size_t d = 0; d < sizeof docs / sizeof docs[0]; d++) {
        size_t n = strlen(docs[d]);
        for (size_t k = 0; k <= n; k++) {
            char *p = map + pg - k;
            memcpy(p, docs[d], k);
            int at_end = hwi_jw_valid(p, k);
            char copy[128];                       /* the same bytes, with room behind them */
            memcpy(copy, docs[d], k);
            copy[k] = 0;
            EXPECT(at_end == hwi_jw_valid(copy, k));
            EXPECT(at_end == (k == n));           /* only the whole document is one */
            checked++;
        }
    }
    EXPECT(checked > 80);
    munmap(map, 2 * (size_t)pg);
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

    TEST_CASE("compact, a line per element of break_depth");
    /* "," and ":", and ",\n" after each element at depth 2 only (the profiler's export: one
     * event per line; issue 25's seed-3002 mutation run: `j->depth == j->break_depth` made
     * `!=` broke every other level instead) */
    f = open_mem();
    hwi_jw_begin(&j, f, 0);
    j.compact = 1;
    j.break_depth = 2;
    hwi_jw_obj(&j);
    hwi_jw_kint(&j, "n", 2);
    hwi_jw_key(&j, "events");
    hwi_jw_arr(&j);
    for (int e = 0; e < 3; e++) {
        hwi_jw_obj(&j);
        hwi_jw_kint(&j, "id", e);
        hwi_jw_kstr(&j, "op", "add");
        hwi_jw_close(&j);
    }
    hwi_jw_close(&j);
    hwi_jw_close(&j);
    EXPECT(hwi_jw_end(&j) == 0);
    fclose(f);
    const char *want_compact = "{\"n\":2,\"events\":[{\"id\":0,\"op\":\"add\"},\n"
                               "{\"id\":1,\"op\":\"add\"},\n{\"id\":2,\"op\":\"add\"}]}\n";
    EXPECT(!strcmp(buf, want_compact));
    if (strcmp(buf, want_compact)) printf("compact document:\n%s", buf);
    EXPECT(hwi_jw_valid(buf, len));

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

    /* the refused call itself writes nothing (issue 25, a sweep of json.c: a value without
     * a key written anyway, `return 0` made `return 1`; a key taken inside an array,
     * `depth == 0 || kind[depth - 1] != '{'` made `&&`) */
    TEST_CASE("a refused key or value writes nothing");
    for (int c = 0; c < 2; c++) {
        f = open_mem();
        hwi_jw_begin(&j, f, 0);
        if (c == 0) { hwi_jw_arr(&j); hwi_jw_key(&j, "k"); }
        else { hwi_jw_obj(&j); hwi_jw_int(&j, 1); }
        EXPECT(hwi_jw_end(&j) == -1);
        fclose(f);
        EXPECT(!strcmp(buf, c == 0 ? "[\n" : "{\n"));
        if (strcmp(buf, c == 0 ? "[\n" : "{\n")) printf("refused call %d wrote: \"%s\"\n", c, buf);
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
    TEST_CASE("the validator, every rule (issue 25 item 3)");
    const char *good2[] = {"true", "false", "null", "-0", "0.5", "1E5", "1e+5", "-2.5E-7",
                           "\"\\\" \\/ \\b\\f\\n\\r\\t \\uABcd\"", "\r\n\t [ ] ",
                           "{\"a\" : { \"b\" : [ ] } , \"c\":\"\"}", "[[[[1]]]]"};
    const char *bad2[] = {"tru", "fals", "nulll", "-", "--1", "1e", "1e+", "1.e5", "+1", ".5",
                          "\"\\u12\"", "\"\\u12G4\"", "\"\\", "\"\\\"", "{\"a\"", "{\"a\":",
                          "{\"a\":1", "{1:2}", "[1 2]", "{\"a\":1 \"b\":2}", "[1,", "]", "}",
                          "{\"a\":1]", "[1}", "\"a\" x", "\x01",
                          /* a control character does not end a string (issue 25, seed 3007:
                           * `if (c < 0x20) return 0` made `return 1` took these) */
                          "\"\t", "[\"a\n]",
                          /* nor does a bad escape, and a key is a string (a sweep of
                           * json.c: `return 0` made `return 1` at 150 and 163) */
                          "\"\\x", "[\"\\q]", "{:1}"};
    for (size_t i = 0; i < sizeof good2 / sizeof good2[0]; i++) {
        if (!hwi_jw_valid(good2[i], strlen(good2[i]))) printf("refused: %s\n", good2[i]);
        EXPECT(hwi_jw_valid(good2[i], strlen(good2[i])));
    }
    for (size_t i = 0; i < sizeof bad2 / sizeof bad2[0]; i++) {
        if (hwi_jw_valid(bad2[i], strlen(bad2[i]))) printf("accepted: %s\n", bad2[i]);
        EXPECT(!hwi_jw_valid(bad2[i], strlen(bad2[i])));
    }
    EXPECT(!hwi_jw_valid(NULL, 0));
    EXPECT(!hwi_jw_valid("\"a\0b\"", 5));           /* a NUL inside a string */
    EXPECT(hwi_jw_valid("[1] trailing", 3));          /* only len bytes are read */
    validator_reads_only_len_bytes();
    /* nesting: 512 levels are accepted, 513 are not (the reader's recursion bound) */
    static char deep[1100];
    for (int d = 512; d <= 513; d++) {
        memset(deep, '[', (size_t)d);
        memset(deep + d, ']', (size_t)d);
        EXPECT(hwi_jw_valid(deep, 2 * (size_t)d) == (d == 512));
    }

    TEST_CASE("more misuse: nothing is written past the first mistake");
    for (int c = 0; c < 9; c++) {
        f = open_mem();
        hwi_jw_begin(&j, f, 0);
        switch (c) {
        case 0: hwi_jw_key(&j, "top"); break;                       /* a key outside an object */
        case 1: hwi_jw_obj(&j); hwi_jw_key(&j, NULL); break;        /* a NULL key */
        case 2: hwi_jw_obj(&j); hwi_jw_key(&j, "a"); hwi_jw_key(&j, "b"); break;  /* two keys */
        case 3: for (int d = 0; d <= HWI_JSON_DEPTH; d++) hwi_jw_arr(&j); break;  /* too deep */
        case 4: hwi_jw_close(&j); break;                            /* close at the top */
        case 5: hwi_jw_obj(&j); hwi_jw_str(&j, "v"); break;         /* values without keys */
        case 6: hwi_jw_obj(&j); hwi_jw_num(&j, 1.5); break;
        case 7: hwi_jw_obj(&j); hwi_jw_fixed(&j, 1.5, 2); break;
        default: hwi_jw_obj(&j); hwi_jw_uint(&j, 1); break;
        }
        size_t at = (fflush(f), len);
        /* after a mistake every call is a no-op */
        hwi_jw_kstr(&j, "x", "y");
        hwi_jw_knum(&j, "n", 2);
        hwi_jw_kfixed(&j, "f", 2, 1);
        hwi_jw_kuint(&j, "u", 3);
        hwi_jw_kbool(&j, "b", 0);
        hwi_jw_arr(&j);
        hwi_jw_null(&j);
        hwi_jw_raw(&j, "[1]", 3);
        hwi_jw_close(&j);
        int rc = hwi_jw_end(&j);
        fclose(f);
        EXPECT(rc == -1);
        EXPECT(len == at + 1);                              /* only end's newline */
        if (rc != -1 || len != at + 1) printf("misuse %d: \"%s\"\n", c, buf);
    }

    TEST_CASE("numbers: integers, fractions, fixed decimals, non-finite");
    f = open_mem();
    hwi_jw_begin(&j, f, 0);
    hwi_jw_arr(&j);
    hwi_jw_num(&j, 1e15);          /* at 1e15 and above: %g, not every digit */
    hwi_jw_num(&j, -42);
    hwi_jw_fixed(&j, 2.0 / 3.0, 3);
    hwi_jw_fixed(&j, INFINITY, 3);
    hwi_jw_bool(&j, 0);
    hwi_jw_raw(&j, "  7  ", 5);
    hwi_jw_close(&j);
    EXPECT(hwi_jw_end(&j) == 0);
    fclose(f);
    EXPECT(strcmp(buf, "[1e+15, -42, 0.667, null, false, 7]\n") == 0);
    if (strcmp(buf, "[1e+15, -42, 0.667, null, false, 7]\n")) printf("numbers: %s", buf);
    free(buf);
    return test_report();
}
