/* base/escape.h on malformed and borderline input, each output compared byte for byte
 * (issue 25 item 3): UTF-8 sequences at every boundary of hwi_utf8_next (the last valid
 * and first invalid lead bytes, overlong 3- and 4-byte forms, surrogates, U+10FFFF and
 * past it, truncation), what each writer makes of them (JSON, HTML-safe JSON with U+2028
 * and U+2029, CSV quoting for a trailing space, the terminal's bidi controls and a
 * buffer too small, TSV's DEL), hex digits of both cases, and hwi_tsv_unescape's
 * malformed escapes (kept as written). */
#include "harness.h"
#include "base/escape.h"

#include <stdio.h>
#include <string.h>

typedef void (*writer)(FILE *, const char *);

static char *out_of(writer w, const char *in)
{
    static char buf[4096];
    memset(buf, 0, sizeof buf);
    FILE *f = fmemopen(buf, sizeof buf, "w");
    w(f, in);
    fclose(f);
    return buf;
}

static void html(FILE *f, const char *s) { hwi_json_str_html(f, s); }
static void term8(FILE *f, const char *s) { hwi_term_str(f, s, 8); }

#define SAME(got, want)                                                                  \
    do {                                                                                 \
        const char *g_ = (got), *w_ = (want);                                            \
        EXPECT(!strcmp(g_, w_));                                                         \
        if (strcmp(g_, w_)) fprintf(stderr, "  got \"%s\", want \"%s\"\n", g_, w_);       \
    } while (0)

static void utf8_boundaries(void)
{
    TEST_CASE("hwi_utf8_next at each boundary");
    struct { const char *s; int n; uint32_t cp; } tc[] = {
        {"\x7f", 1, 0x7f},
        {"\xc1\x80", 0, 0},                 /* overlong 2-byte lead */
        {"\xc2\x80", 2, 0x80},
        {"\xdf\xbf", 2, 0x7ff},
        {"\xe0\x9f\xbf", 0, 0},             /* overlong 3-byte (U+07FF) */
        {"\xe0\xa0\x80", 3, 0x800},
        {"\xed\x9f\xbf", 3, 0xd7ff},
        {"\xed\xa0\x80", 0, 0},             /* surrogate U+D800 */
        {"\xed\xbf\xbf", 0, 0},             /* surrogate U+DFFF */
        {"\xee\x80\x80", 3, 0xe000},
        {"\xef\xbf\xbf", 3, 0xffff},
        {"\xf0\x8f\xbf\xbf", 0, 0},         /* overlong 4-byte (U+FFFF) */
        {"\xf0\x90\x80\x80", 4, 0x10000},
        {"\xf4\x8f\xbf\xbf", 4, 0x10ffff},
        {"\xf4\x90\x80\x80", 0, 0},         /* U+110000 */
        {"\xf5\x80\x80\x80", 0, 0},         /* no such lead byte */
        {"\xff", 0, 0},
        {"\xe2\x82", 0, 0},                 /* truncated at the NUL */
        {"\xe2\x28\xa1", 0, 0},             /* a continuation byte missing */
    };
    for (size_t i = 0; i < sizeof tc / sizeof tc[0]; i++) {
        uint32_t cp = 0xdeadbeef;
        int n = hwi_utf8_next((const unsigned char *)tc[i].s, &cp);
        EXPECT(n == tc[i].n && (!n || cp == tc[i].cp));
        if (n != tc[i].n) fprintf(stderr, "  case %zu: %d, want %d\n", i, n, tc[i].n);
    }
}

static void writers(void)
{
    TEST_CASE("JSON: invalid sequences become U+FFFD escapes, valid ones stay");
    SAME(out_of(hwi_json_str, "a\xed\xa0\x80z"), "\"a\\ufffd\\ufffd\\ufffdz\"");
    SAME(out_of(hwi_json_str, "\xf4\x8f\xbf\xbf\xf4\x90\x80\x80"),
         "\"\xf4\x8f\xbf\xbf\\ufffd\\ufffd\\ufffd\\ufffd\"");
    SAME(out_of(hwi_json_str, "\x7f\xc2\x85\xc2\xa0"), "\"\\u007f\\u0085\xc2\xa0\"");
    SAME(out_of(hwi_json_str, NULL), "\"\"");

    TEST_CASE("HTML-safe JSON: <, >, &, U+2028, U+2029 escaped; U+2027 kept");
    SAME(out_of(html, "<a>&\xe2\x80\xa8\xe2\x80\xa9\xe2\x80\xa7"),
         "\"\\u003ca\\u003e\\u0026\\u2028\\u2029\xe2\x80\xa7\"");
    SAME(out_of(hwi_json_str, "\xe2\x80\xa8"), "\"\xe2\x80\xa8\"");   /* plain JSON keeps it */

    TEST_CASE("CSV: quoted for a trailing or leading space, controls and bad bytes replaced");
    SAME(out_of(hwi_csv_field, "tail "), "\"tail \"");
    SAME(out_of(hwi_csv_field, " lead"), "\" lead\"");
    SAME(out_of(hwi_csv_field, "mid dle"), "mid dle");
    SAME(out_of(hwi_csv_field, ""), "");
    SAME(out_of(hwi_csv_field, NULL), "");
    SAME(out_of(hwi_csv_field, "a\rb\xc0"), "a\xef\xbf\xbd" "b\xef\xbf\xbd");

    TEST_CASE("terminal: bidi controls, C1, bad bytes as '?', width and padding");
    SAME(out_of(term8, "\xe2\x81\xa6x\xe2\x81\xa9\xe2\x80\xaa\xe2\x80\xae\xe2\x81\xa5"),
         "?x???\xe2\x81\xa5  ");            /* U+2066, U+2069, U+202A, U+202E; U+2065 kept */
    SAME(out_of(term8, "\xc2\x9b[2J\xf5!"), "?[2J?!  ");
    SAME(out_of(term8, "123456789"), "12345678");
    char small[4];
    EXPECT(hwi_term_clean(small, sizeof small, "\xe2\x82\xac\xe2\x82\xac", -1) == 1);
    SAME(small, "\xe2\x82\xac");            /* cut at a code point, NUL-terminated */
    EXPECT(hwi_term_clean(small, 1, "abc", -1) == 0 && small[0] == 0);
    EXPECT(hwi_term_clean(small, 0, "abc", -1) == 0);
    EXPECT(hwi_term_clean(small, sizeof small, NULL, 3) == 0 && small[0] == 0);

    TEST_CASE("TSV: DEL and controls as \\xHH, round trip");
    SAME(out_of(hwi_tsv_field, "a\x7f" "b"), "a\\x7fb");
    SAME(out_of(hwi_tsv_field, "q\\\x01"), "q\\\\\\x01");
    SAME(out_of(hwi_tsv_field, NULL), "");
    char rt[64];
    snprintf(rt, sizeof rt, "%s", out_of(hwi_tsv_field, "x\x1f\x7f\ty"));
    SAME(hwi_tsv_unescape(rt), "x\x1f\x7f\ty");
}

static void hex_and_unescape(void)
{
    TEST_CASE("hex digits of both cases, and not");
    const char *digits = "09afAF";
    const int want[] = {0, 9, 10, 15, 10, 15};
    for (int i = 0; i < 6; i++) EXPECT(hwi_hex_digit(digits[i]) == want[i]);
    const char *not_hex = "/:`gG@";
    for (int i = 0; i < 6; i++) EXPECT(hwi_hex_digit(not_hex[i]) == -1);

    TEST_CASE("hwi_tsv_unescape: valid escapes of either case, malformed ones kept");
    char s[64];
    snprintf(s, sizeof s, "\\x4A\\x4a\\x0D");
    SAME(hwi_tsv_unescape(s), "JJ\r");
    const char *kept[] = {"\\x", "\\xG1", "\\x1", "\\x1G", "\\x00", "\\q", "end\\"};
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
        snprintf(s, sizeof s, "%s", kept[i]);
        SAME(hwi_tsv_unescape(s), kept[i]);
    }
}

int main(void)
{
    utf8_boundaries();
    writers();
    hex_and_unescape();
    return test_report();
}
