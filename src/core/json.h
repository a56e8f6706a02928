/* A JSON string literal written to a stream: quotes, backslash and control characters
 * escaped (NULL writes ""). Header-only, so the tools that read hwrt's files without
 * linking libhwrt (hwrt-prof) use the same escaping as the library and hwrt-smi. */
#ifndef HWI_JSON_H
#define HWI_JSON_H

#include <stdio.h>

static inline void hwi_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

#endif
