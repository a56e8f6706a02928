/* Writing untrusted strings (thread names, allocation tags, op names, process names from
 * the sim registry) into hwrt's outputs: one escaping helper per output format, shared by
 * every writer of that format. Header-only, so the tools that read hwrt's files without
 * linking libhwrt (hwrt-prof) use the same code as the library and hwrt-smi.
 *
 *   hwi_json_str       a JSON string literal: '"', '\\' and control characters escaped,
 *                      invalid UTF-8 replaced by U+FFFD, so the document stays valid JSON.
 *   hwi_json_str_html  the same, safe inside an HTML <script> too: '<', '>', '&', U+2028
 *                      and U+2029 escaped as \uXXXX.
 *   hwi_csv_field      one CSV field per RFC 4180: quoted (inner '"' doubled) when it holds
 *                      ',', '"' or leading/trailing spaces; control characters (CR and LF
 *                      included: one record per line, always) and invalid UTF-8 replaced by
 *                      U+FFFD.
 *   hwi_term_str       text for a terminal: control characters (C0, DEL, C1), bidi
 *                      overrides and invalid UTF-8 replaced by '?'; at most `width` code
 *                      points, padded with spaces to `width` (width < 0: as is, no pad).
 *   hwi_term_clean     hwi_term_str into a buffer (for log sentences).
 *   hwi_tsv_field      a field of a tab-separated line (the profiler's raw file): '\\',
 *                      TAB, LF, CR as \\ \t \n \r, other control bytes as \xHH; lossless,
 *                      hwi_tsv_unescape reverses it in place. */
#ifndef HWI_ESCAPE_H
#define HWI_ESCAPE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Length (1..4) of the valid UTF-8 sequence at s, with its code point in *cp; 0 when the
 * bytes at s are not valid UTF-8 (overlong, surrogate, > U+10FFFF, truncated). */
static inline int hwi_utf8_next(const unsigned char *s, uint32_t *cp)
{
    unsigned c = s[0];
    if (c < 0x80) { *cp = c; return 1; }
    int n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
          : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (!n) return 0;
    uint32_t v = c & (0x7fu >> n);
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;       /* also stops at the terminating NUL */
        v = (v << 6) | (s[i] & 0x3fu);
    }
    if (n == 3 && (v < 0x800 || (v >= 0xd800 && v <= 0xdfff))) return 0;  /* overlong, surrogate */
    if (n == 4 && (v < 0x10000 || v > 0x10ffff)) return 0;
    *cp = v;
    return n;
}

/* Code points no output should carry raw: C0, DEL, C1. */
static inline int hwi_is_control(uint32_t cp) { return cp < 0x20 || (cp >= 0x7f && cp < 0xa0); }

static inline void hwi_json_str_mode(FILE *f, const char *str, int html)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    fputc('"', f);
    while (*s) {
        uint32_t cp;
        int n = hwi_utf8_next(s, &cp);
        if (!n) { fputs("\\ufffd", f); s++; continue; }
        if (cp == '"' || cp == '\\') fprintf(f, "\\%c", (int)cp);
        else if (cp == '\n') fputs("\\n", f);
        else if (cp == '\t') fputs("\\t", f);
        else if (hwi_is_control(cp) || (html && (cp == '<' || cp == '>' || cp == '&' ||
                                                 cp == 0x2028 || cp == 0x2029)))
            fprintf(f, "\\u%04x", (unsigned)cp);
        else fwrite(s, 1, (size_t)n, f);
        s += n;
    }
    fputc('"', f);
}
static inline void hwi_json_str(FILE *f, const char *s) { hwi_json_str_mode(f, s, 0); }
static inline void hwi_json_str_html(FILE *f, const char *s) { hwi_json_str_mode(f, s, 1); }

static inline void hwi_csv_field(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)(str ? str : ""), *e = s;
    int quote = *s == ' ';
    for (; *e; e++) quote |= *e == ',' || *e == '"';
    quote |= e > s && e[-1] == ' ';
    if (quote) fputc('"', f);
    while (*s) {
        uint32_t cp;
        int n = hwi_utf8_next(s, &cp);
        if (!n || hwi_is_control(cp)) fputs("\xef\xbf\xbd", f);    /* U+FFFD */
        else if (cp == '"') fputs("\"\"", f);
        else fwrite(s, 1, (size_t)n, f);
        s += n ? n : 1;
    }
    if (quote) fputc('"', f);
}

/* The terminal form of str into out (NUL-terminated, cut at a code point); returns the
 * code points written. At most `width` code points when width >= 0. */
static inline int hwi_term_clean(char *out, size_t len, const char *str, int width)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    size_t o = 0;
    int cps = 0;
    while (*s && (width < 0 || cps < width)) {
        uint32_t cp;
        int n = hwi_utf8_next(s, &cp);
        int bad = !n || hwi_is_control(cp) || (cp >= 0x202a && cp <= 0x202e) ||
                  (cp >= 0x2066 && cp <= 0x2069);           /* bidi embeddings, overrides */
        size_t need = bad ? 1 : (size_t)n;
        if (o + need >= len) break;
        if (bad) out[o++] = '?';
        else for (int i = 0; i < n; i++) out[o++] = (char)s[i];
        s += n ? n : 1;
        cps++;
    }
    if (len) out[o < len ? o : len - 1] = 0;
    return cps;
}

static inline void hwi_term_str(FILE *f, const char *str, int width)
{
    char buf[1024];
    int cps = hwi_term_clean(buf, sizeof buf, str, width);
    fputs(buf, f);
    for (; cps < width; cps++) fputc(' ', f);
}

static inline void hwi_tsv_field(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)(str ? str : ""), *p = s;
    while (*p >= 0x20 && *p != '\\' && *p != 0x7f) p++;
    if (!*p) { fputs((const char *)s, f); return; }     /* the common case: nothing to escape */
    for (; *s; s++) {
        if (*s == '\\') fputs("\\\\", f);
        else if (*s == '\t') fputs("\\t", f);
        else if (*s == '\n') fputs("\\n", f);
        else if (*s == '\r') fputs("\\r", f);
        else if (*s < 0x20 || *s == 0x7f) fprintf(f, "\\x%02x", *s);
        else fputc(*s, f);
    }
}

static inline int hwi_hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Reverse hwi_tsv_field in place; an unknown escape is kept as written. */
static inline char *hwi_tsv_unescape(char *s)
{
    char *o = s;
    for (const char *p = s; *p; p++) {
        if (*p != '\\' || !p[1]) { *o++ = *p; continue; }
        char c = p[1];
        int h, l;
        if (c == '\\' || c == 't' || c == 'n' || c == 'r') {
            *o++ = c == 't' ? '\t' : c == 'n' ? '\n' : c == 'r' ? '\r' : '\\';
            p++;
        } else if (c == 'x' && (h = hwi_hex_digit(p[2])) >= 0 && p[3] &&
                   (l = hwi_hex_digit(p[3])) >= 0 && (h || l)) {
            *o++ = (char)(h * 16 + l);
            p += 3;
        } else {
            *o++ = *p;
        }
    }
    *o = 0;
    return s;
}

#endif
