/* The escaping helpers of base/escape.h, one per output format, and two of the library's
 * writers that use them: the memory snapshot (JSON) and the leak report (a log line), fed
 * an allocation tag with invalid UTF-8, a newline, a quote and a terminal escape. */
#include "harness.h"
#include "harness_files.h"
#include "base/escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef void (*writer)(FILE *, const char *);

static char *out_of(writer w, const char *in)
{
    static char buf[4096];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    w(f, in);
    fclose(f);
    return buf;
}

static void term16(FILE *f, const char *s) { hwi_term_str(f, s, 16); }
static void term_all(FILE *f, const char *s) { hwi_term_str(f, s, -1); }

#define EQ(w, in, want) EXPECT(!strcmp(out_of(w, in), want))

int main(void)
{
    TEST_CASE("json");
    EQ(hwi_json_str, "plain \xc3\xa9", "\"plain \xc3\xa9\"");           /* valid UTF-8 kept */
    EQ(hwi_json_str, "a\"b\\c\nd\te\x1b", "\"a\\\"b\\\\c\\nd\\te\\u001b\"");
    EQ(hwi_json_str, "x\xff" "y\xc3", "\"x\\ufffdy\\ufffd\"");           /* invalid, truncated */
    EQ(hwi_json_str, "\xc0\xaf\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"");  /* overlong, surrogate */
    EQ(hwi_json_str, "\x7f\xc2\x85", "\"\\u007f\\u0085\"");              /* DEL, C1 */
    EQ(hwi_json_str, NULL, "\"\"");
    EQ(hwi_json_str_html, "</script>&\xe2\x80\xa8", "\"\\u003c/script\\u003e\\u0026\\u2028\"");

    TEST_CASE("csv");
    EQ(hwi_csv_field, "plain", "plain");
    EQ(hwi_csv_field, "a,b", "\"a,b\"");
    EQ(hwi_csv_field, "say \"hi\"", "\"say \"\"hi\"\"\"");
    EQ(hwi_csv_field, " pad", "\" pad\"");
    EQ(hwi_csv_field, "l1\nl2\r\x1b\xff", "l1\xef\xbf\xbdl2\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");

    TEST_CASE("terminal");
    EQ(term_all, "ok \xe2\x82\xac", "ok \xe2\x82\xac");
    EQ(term_all, "\x1b[2J\n\xff\x7f\xc2\x9b\xe2\x80\xae", "?[2J?????");   /* ESC, C1 CSI, RLO */
    EQ(term16, "short", "short           ");
    EQ(term16, "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac" "0123456789abcdef",
       "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac" "0123456789a");  /* code points */
    char small[4];
    hwi_term_clean(small, sizeof small, "\xe2\x82\xac\xe2\x82\xac", -1);
    EXPECT(!strcmp(small, "\xe2\x82\xac"));                   /* never cut inside a character */

    TEST_CASE("tsv");
    const char *nasty = "a\tb\nc\rd\\e\x1b\x7f\xff";
    EQ(hwi_tsv_field, nasty, "a\\tb\\nc\\rd\\\\e\\x1b\\x7f\xff");
    char rt[64];
    snprintf(rt, sizeof rt, "%s", out_of(hwi_tsv_field, nasty));
    EXPECT(!strcmp(hwi_tsv_unescape(rt), nasty));
    snprintf(rt, sizeof rt, "odd \\q \\x0 \\x00 end\\");
    EXPECT(!strcmp(hwi_tsv_unescape(rt), "odd \\q \\x0 \\x00 end\\"));  /* kept as written */

    TEST_CASE("snapshot and leak report");
    const char *tag = "t\xff\n\"q\"\x1b[31m";
    void *p;
    OK(hwrt_set_device("sim", 0));
    OK(hwrt_malloc(&p, 1 << 20));
    OK(hwrt_set_alloc_tag(p, tag));
    char path[64];
    snprintf(path, sizeof path, "/tmp/hwrt_escape_%d.json", (int)getpid());
    OK(hwrt_memory_snapshot(0, path));
    char *snap = slurp(path);
    EXPECT(snap && strstr(snap, "\"tag\": \"t\\ufffd\\n\\\"q\\\"\\u001b[31m\""));
    EXPECT(snap && !strchr(snap, '\x1b') && !strchr(snap, '\xff'));
    unlink(path);

    /* leak p on purpose: hwrt_shutdown reports it on stderr (log level 1) */
    OK(hwrt_set_config("log_level", "1"));
    err_begin();
    hwrt_shutdown();
    char *log = err_end();
    EXPECT(log && strstr(log, "leak: device 0"));
    EXPECT(log && strstr(log, "tag \"t??\"q\"?[31m\""));
    EXPECT(log && !strchr(log, '\x1b') && !strchr(log, '\xff'));
    char *nl = log ? strstr(log, "leak: ") : NULL;
    EXPECT(nl && strchr(nl, '\n') && strstr(strchr(nl, '\n'), "never freed") == NULL);  /* one line */
    return test_report();
}
