/* The shared command line (cli.h). */
#include "cli.h"

#include <hwrt/hwrt_version.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define KEY_HELP 0x7f000001
#define KEY_VERSION 0x7f000002
#define MAX_OPTS 64

void cli_print_version(const cli_tool *t, FILE *f)
{
    fprintf(f, "%s (hwrt) %s\n", t->name, HWRT_VERSION_STRING);
}

void cli_print_help(const cli_tool *t, FILE *f)
{
    fprintf(f, "usage: %s\n", t->synopsis);
    if (t->about) fprintf(f, "\n%s\n", t->about);
    fprintf(f, "\noptions:\n");
    for (const cli_opt *o = t->opts; o && o->name; o++) {
        char left[64];
        int n = 0;
        if (o->key > 0 && o->key < 256) n = snprintf(left, sizeof left, "-%c, ", o->key);
        else n = snprintf(left, sizeof left, "    ");
        const char *m = o->meta ? o->meta : "V";
        if (o->arg == CLI_REQUIRED) snprintf(left + n, sizeof left - n, "--%s=%s", o->name, m);
        else if (o->arg == CLI_OPTIONAL) snprintf(left + n, sizeof left - n, "--%s[=%s]", o->name, m);
        else snprintf(left + n, sizeof left - n, "--%s", o->name);
        if (strlen(left) > 28) fprintf(f, "  %s\n  %-28s  %s\n", left, "", o->help ? o->help : "");
        else fprintf(f, "  %-28s  %s\n", left, o->help ? o->help : "");
    }
    fprintf(f, "  %-28s  %s\n  %-28s  %s\n", "-h, --help", "this text",
            "    --version", "the tool's and hwrt's version");
    if (t->epilog) fprintf(f, "\n%s", t->epilog);
    fprintf(f, "\nexit status: 0 success, 1 runtime failure, 2 usage error\n");
}

int cli_usage(const cli_tool *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", t->name);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry '%s --help'.\n", t->name);
    va_end(ap);
    return CLI_USAGE;
}

int cli_fail(const cli_tool *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", t->name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return CLI_FAIL;
}

/* a number at the start of s (for `-l 5` with an optional value) */
static int looks_numeric(const char *s)
{
    if (!s || !*s) return 0;
    char *end;
    errno = 0;
    strtod(s, &end);
    return *end == 0 && errno == 0;
}

int cli_parse(const cli_tool *t, int argc, char **argv, cli_fn fn, void *ctx, int *first,
              int *done)
{
    struct option lo[MAX_OPTS + 3];
    char shorts[3 * MAX_OPTS + 8];
    int nl = 0, ns = 0;
    shorts[ns++] = '+';            /* stop at the first operand (subcommands keep theirs) */
    shorts[ns++] = ':';            /* a missing value is reported as ':' */
    for (const cli_opt *o = t->opts; o && o->name && nl < MAX_OPTS; o++) {
        lo[nl++] = (struct option){o->name, o->arg, NULL, o->key};
        if (o->key > 0 && o->key < 256) {
            shorts[ns++] = (char)o->key;
            if (o->arg == CLI_REQUIRED) shorts[ns++] = ':';
            if (o->arg == CLI_OPTIONAL) { shorts[ns++] = ':'; shorts[ns++] = ':'; }
        }
    }
    shorts[ns++] = 'h';
    shorts[ns] = 0;
    lo[nl++] = (struct option){"help", no_argument, NULL, KEY_HELP};
    lo[nl++] = (struct option){"version", no_argument, NULL, KEY_VERSION};
    lo[nl] = (struct option){0};
    *done = 0;
    optind = 1;
    opterr = 0;
    int c, idx;
    while ((idx = -1, c = getopt_long(argc, argv, shorts, lo, &idx)) != -1) {
        if (c == 'h' || c == KEY_HELP) {
            cli_print_help(t, stdout);
            *done = 1;
            return CLI_OK;
        }
        if (c == KEY_VERSION) {
            cli_print_version(t, stdout);
            *done = 1;
            return CLI_OK;
        }
        const char *bad = argv[optind - 1];
        if (c == '?') {
            if (optopt && optopt < 256) return cli_usage(t, "unknown option '-%c'", optopt);
            const char *eq = strchr(bad, '=');
            for (const cli_opt *p = t->opts; eq && !strncmp(bad, "--", 2) && p && p->name; p++)
                if (strlen(p->name) == (size_t)(eq - bad - 2) && !strncmp(bad + 2, p->name, eq - bad - 2))
                    return cli_usage(t, "option '--%s' takes no value", p->name);
            return cli_usage(t, "unknown option '%s'", bad);
        }
        if (c == ':') {
            if (optopt && optopt < 256) return cli_usage(t, "option '-%c' needs a value", optopt);
            return cli_usage(t, "option '%s' needs a value", bad);
        }
        const cli_opt *o = NULL;
        for (const cli_opt *p = t->opts; p && p->name; p++)
            if (p->key == c) { o = p; break; }
        const char *arg = optarg;
        if (o && o->arg == CLI_OPTIONAL && !arg && optind < argc && looks_numeric(argv[optind]))
            arg = argv[optind++];                    /* `-l 5`, `--loop 5` */
        int rc = fn(ctx, c, arg);
        if (rc != CLI_OK) return rc;
    }
    if (optind < argc && !t->operands)
        return cli_usage(t, "unexpected argument '%s'", argv[optind]);
    *first = optind;
    return CLI_OK;
}

int cli_long(const cli_tool *t, const char *flag, const char *arg, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = arg ? strtol(arg, &end, 10) : 0;
    if (!arg || !*arg || *end || errno || v < min || v > max)
        return cli_usage(t, "%s '%s' is not an integer in %ld..%ld", flag, arg ? arg : "", min,
                         max);
    *out = v;
    return CLI_OK;
}

int cli_int(const cli_tool *t, const char *flag, const char *arg, int min, int max, int *out)
{
    long v;
    int rc = cli_long(t, flag, arg, min, max, &v);
    if (rc == CLI_OK) *out = (int)v;
    return rc;
}

int cli_double(const cli_tool *t, const char *flag, const char *arg, double min, double max,
               double *out)
{
    char *end;
    errno = 0;
    double v = arg ? strtod(arg, &end) : 0;
    if (!arg || !*arg || *end || errno || !isfinite(v) || v < min || v > max)
        return cli_usage(t, "%s '%s' is not a number in %g..%g", flag, arg ? arg : "", min, max);
    *out = v;
    return CLI_OK;
}

int cli_size(const cli_tool *t, const char *flag, const char *arg, size_t min, size_t *out)
{
    char *end;
    errno = 0;
    double v = arg ? strtod(arg, &end) : -1;
    double m = 1;
    if (arg && !errno && end != arg) {
        switch (*end) {
        case 'k': case 'K': m = 1024.0; end++; break;
        case 'm': case 'M': m = 1024.0 * 1024; end++; break;
        case 'g': case 'G': m = 1024.0 * 1024 * 1024; end++; break;
        case 't': case 'T': m = 1024.0 * 1024 * 1024 * 1024; end++; break;
        }
        if (m > 1 && *end == 'i') end++;
        if (*end == 'B' || *end == 'b') end++;
    }
    if (!arg || errno || end == arg || *end || !(v >= 0) || v * m < (double)min ||
        v * m > (double)SIZE_MAX / 2)
        return cli_usage(t, "%s '%s' is not a size of at least %zu bytes (e.g. 4096, 64K, "
                         "512MiB, 2G)", flag, arg ? arg : "", min);
    *out = (size_t)(v * m);
    return CLI_OK;
}

int cli_choice(const cli_tool *t, const char *flag, const char *arg, const char *const *choices)
{
    char list[256] = "";
    for (int i = 0; choices[i]; i++) {
        if (arg && !strcmp(arg, choices[i])) return i;
        size_t n = strlen(list);
        snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", choices[i]);
    }
    cli_usage(t, "%s '%s' is not one of: %s", flag, arg ? arg : "", list);
    return -1;
}
