/* The JSON writer every hwrt JSON output uses: the library's (memory snapshots) and every
 * tool's --json (tools/common links this file in; hwrt-prof, which does not link libhwrt,
 * too). A streaming writer with nesting kept on a stack: commas, the key/value pairing and
 * the closing brackets come out right by construction, strings go through hwi_json_str
 * (escape.h), and a non-finite number is written as null (JSON has no NaN/Infinity).
 * Separators are ", " and ": " (Python's json.dumps default), one document on one line;
 * compact = 1 writes "," and ":" (and break_depth a newline per element of that level).
 * Misuse (a value in an object without a key, a key in an array, an unbalanced end,
 * more than HWI_JSON_DEPTH levels) writes nothing and is reported by hwi_jw_end().
 *
 *   hwi_jw j;
 *   hwi_jw_begin(&j, stdout, 0);
 *   hwi_jw_obj(&j);
 *     hwi_jw_kstr(&j, "backend", "sim");
 *     hwi_jw_key(&j, "sizes"); hwi_jw_arr(&j); hwi_jw_int(&j, 4096); hwi_jw_close(&j);
 *   hwi_jw_close(&j);
 *   if (hwi_jw_end(&j)) ...   (0: one complete, valid document followed by a newline) */
#ifndef HWI_JSON_H
#define HWI_JSON_H

#include <stdio.h>

#define HWI_JSON_DEPTH 32

typedef struct hwi_jw {
    FILE *f;
    int html;                        /* safe inside an HTML <script> (hwi_json_str_html) */
    int depth;
    char kind[HWI_JSON_DEPTH];       /* '{' or '[' per open level */
    int count[HWI_JSON_DEPTH];       /* values (or keys) written at that level */
    int have_key;                    /* a key was written, its value is due */
    int values;                      /* top-level values written */
    int bad;                         /* misuse seen */
    int compact;                     /* "," and ":" (set after begin: large files) */
    int break_depth;                 /* with compact: a newline after each comma at this
                                        depth (one array element per line), 0 none */
} hwi_jw;

void hwi_jw_begin(hwi_jw *j, FILE *f, int html);
/* 0 when exactly one top-level value was written, every level closed and nothing misused;
 * -1 otherwise. Writes the final newline. */
int hwi_jw_end(hwi_jw *j);

void hwi_jw_obj(hwi_jw *j);          /* { */
void hwi_jw_arr(hwi_jw *j);          /* [ */
void hwi_jw_close(hwi_jw *j);        /* } or ], whichever is open */
void hwi_jw_key(hwi_jw *j, const char *key);
void hwi_jw_str(hwi_jw *j, const char *v);          /* NULL: null */
void hwi_jw_num(hwi_jw *j, double v);               /* non-finite: null */
void hwi_jw_fixed(hwi_jw *j, double v, int decimals); /* "%.*f" (timestamps); non-finite: null */
void hwi_jw_int(hwi_jw *j, long long v);
void hwi_jw_uint(hwi_jw *j, unsigned long long v);
void hwi_jw_bool(hwi_jw *j, int v);
void hwi_jw_null(hwi_jw *j);
/* A value that is already one JSON document (a child tool's --json output); text that is
 * not one complete JSON value is written as null and marks the writer bad. */
void hwi_jw_raw(hwi_jw *j, const char *text, size_t len);

/* key + value */
void hwi_jw_kstr(hwi_jw *j, const char *key, const char *v);
void hwi_jw_knum(hwi_jw *j, const char *key, double v);
void hwi_jw_kint(hwi_jw *j, const char *key, long long v);
void hwi_jw_kuint(hwi_jw *j, const char *key, unsigned long long v);
void hwi_jw_kbool(hwi_jw *j, const char *key, int v);
void hwi_jw_kfixed(hwi_jw *j, const char *key, double v, int decimals);

/* 1 when text[0..len) is exactly one JSON value (RFC 8259), surrounding spaces allowed. */
int hwi_jw_valid(const char *text, size_t len);

#endif
