/* The JSON writer (json.h). */
#include "json.h"
#include "escape.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

void hwi_jw_begin(hwi_jw *j, FILE *f, int html)
{
    memset(j, 0, sizeof *j);
    j->f = f;
    j->html = html;
}

static void sep(hwi_jw *j)
{
    if (!j->compact) fputs(", ", j->f);
    else fputs(j->depth == j->break_depth ? ",\n" : ",", j->f);
}

/* Before a value: the separator, and whether a value may stand here at all. */
static int value_ok(hwi_jw *j)
{
    if (j->bad) return 0;
    if (j->depth == 0) {
        if (j->values++) j->bad = 1;             /* one document only */
        return !j->bad;
    }
    int d = j->depth - 1;
    if (j->kind[d] == '{') {
        if (!j->have_key) { j->bad = 1; return 0; }
        j->have_key = 0;
        return 1;
    }
    if (j->count[d]++) sep(j);
    return 1;
}

void hwi_jw_key(hwi_jw *j, const char *key)
{
    if (j->bad) return;
    if (j->depth == 0 || j->kind[j->depth - 1] != '{' || j->have_key || !key) {
        j->bad = 1;
        return;
    }
    if (j->count[j->depth - 1]++) sep(j);
    hwi_json_str_mode(j->f, key, j->html);
    fputs(j->compact ? ":" : ": ", j->f);
    j->have_key = 1;
}

static void open_level(hwi_jw *j, char kind)
{
    if (!value_ok(j)) return;
    if (j->depth == HWI_JSON_DEPTH) { j->bad = 1; return; }
    j->kind[j->depth] = kind;
    j->count[j->depth] = 0;
    j->depth++;
    fputc(kind, j->f);
}

void hwi_jw_obj(hwi_jw *j) { open_level(j, '{'); }
void hwi_jw_arr(hwi_jw *j) { open_level(j, '['); }

void hwi_jw_close(hwi_jw *j)
{
    if (j->bad) return;
    if (j->depth == 0 || j->have_key) { j->bad = 1; return; }
    j->depth--;
    fputc(j->kind[j->depth] == '{' ? '}' : ']', j->f);
}

void hwi_jw_str(hwi_jw *j, const char *v)
{
    if (!v) { hwi_jw_null(j); return; }
    if (value_ok(j)) hwi_json_str_mode(j->f, v, j->html);
}

void hwi_jw_num(hwi_jw *j, double v)
{
    if (!value_ok(j)) return;
    if (!isfinite(v)) fputs("null", j->f);
    else if (v == floor(v) && fabs(v) < 1e15) fprintf(j->f, "%.0f", v);
    else fprintf(j->f, "%.6g", v);
}

void hwi_jw_fixed(hwi_jw *j, double v, int decimals)
{
    if (!value_ok(j)) return;
    if (!isfinite(v)) fputs("null", j->f);
    else fprintf(j->f, "%.*f", decimals, v);
}

void hwi_jw_int(hwi_jw *j, long long v) { if (value_ok(j)) fprintf(j->f, "%lld", v); }
void hwi_jw_uint(hwi_jw *j, unsigned long long v) { if (value_ok(j)) fprintf(j->f, "%llu", v); }
void hwi_jw_bool(hwi_jw *j, int v) { if (value_ok(j)) fputs(v ? "true" : "false", j->f); }
void hwi_jw_null(hwi_jw *j) { if (value_ok(j)) fputs("null", j->f); }

void hwi_jw_raw(hwi_jw *j, const char *text, size_t len)
{
    if (!hwi_jw_valid(text, len)) {
        hwi_jw_null(j);
        j->bad = 1;
        return;
    }
    if (!value_ok(j)) return;
    while (len && isspace((unsigned char)text[len - 1])) len--;   /* no trailing newline */
    while (len && isspace((unsigned char)*text)) { text++; len--; }
    fwrite(text, 1, len, j->f);
}

void hwi_jw_kstr(hwi_jw *j, const char *k, const char *v) { hwi_jw_key(j, k); hwi_jw_str(j, v); }
void hwi_jw_knum(hwi_jw *j, const char *k, double v) { hwi_jw_key(j, k); hwi_jw_num(j, v); }
void hwi_jw_kint(hwi_jw *j, const char *k, long long v) { hwi_jw_key(j, k); hwi_jw_int(j, v); }
void hwi_jw_kuint(hwi_jw *j, const char *k, unsigned long long v) { hwi_jw_key(j, k); hwi_jw_uint(j, v); }
void hwi_jw_kbool(hwi_jw *j, const char *k, int v) { hwi_jw_key(j, k); hwi_jw_bool(j, v); }
void hwi_jw_kfixed(hwi_jw *j, const char *k, double v, int decimals)
{
    hwi_jw_key(j, k);
    hwi_jw_fixed(j, v, decimals);
}

int hwi_jw_end(hwi_jw *j)
{
    fputc('\n', j->f);
    return j->bad || j->depth || j->values != 1 ? -1 : 0;
}

/* ---- validation (a recursive-descent reader that builds nothing) ---- */

typedef struct { const char *p, *e; int depth; } rd;

static void ws(rd *r)
{
    while (r->p < r->e && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')) r->p++;
}

static int lit(rd *r, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(r->e - r->p) < n || memcmp(r->p, w, n)) return 0;
    r->p += n;
    return 1;
}

static int str(rd *r)
{
    if (r->p >= r->e || *r->p != '"') return 0;
    r->p++;
    while (r->p < r->e) {
        unsigned char c = (unsigned char)*r->p++;
        if (c == '"') return 1;
        if (c < 0x20) return 0;
        if (c == '\\') {
            if (r->p >= r->e) return 0;
            char x = *r->p++;
            if (x == 'u') {
                for (int i = 0; i < 4; i++)
                    if (r->p >= r->e || !isxdigit((unsigned char)*r->p++)) return 0;
            } else if (!strchr("\"\\/bfnrt", x) || !x) {
                return 0;
            }
        }
    }
    return 0;
}

static int digits(rd *r)
{
    const char *s = r->p;
    while (r->p < r->e && isdigit((unsigned char)*r->p)) r->p++;
    return r->p > s;
}

static int num(rd *r)
{
    if (r->p < r->e && *r->p == '-') r->p++;
    if (r->p < r->e && *r->p == '0') r->p++;
    else if (!digits(r)) return 0;
    if (r->p < r->e && *r->p == '.') { r->p++; if (!digits(r)) return 0; }
    if (r->p < r->e && (*r->p == 'e' || *r->p == 'E')) {
        r->p++;
        if (r->p < r->e && (*r->p == '+' || *r->p == '-')) r->p++;
        if (!digits(r)) return 0;
    }
    return 1;
}

static int value(rd *r)
{
    ws(r);
    if (r->p >= r->e || ++r->depth > 512) return 0;
    int ok;
    char c = *r->p;
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        r->p++;
        ws(r);
        ok = 1;
        if (r->p < r->e && *r->p == close) r->p++;
        else {
            for (;;) {
                if (c == '{') {
                    ws(r);
                    if (!str(r)) { ok = 0; break; }
                    ws(r);
                    if (r->p >= r->e || *r->p++ != ':') { ok = 0; break; }
                }
                if (!value(r)) { ok = 0; break; }
                ws(r);
                if (r->p < r->e && *r->p == ',') { r->p++; continue; }
                if (r->p < r->e && *r->p == close) { r->p++; break; }
                ok = 0;
                break;
            }
        }
    } else if (c == '"') ok = str(r);
    else if (c == 't') ok = lit(r, "true");
    else if (c == 'f') ok = lit(r, "false");
    else if (c == 'n') ok = lit(r, "null");
    else ok = num(r);
    r->depth--;
    return ok;
}

int hwi_jw_valid(const char *text, size_t len)
{
    if (!text) return 0;
    rd r = {text, text + len, 0};
    if (!value(&r)) return 0;
    ws(&r);
    return r.p == r.e;
}
