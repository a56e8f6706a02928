/* The command line of every hwrt-* tool: one getopt_long parser, the shared --help and
 * --version, number and size arguments checked with a sentence naming the flag, and one
 * set of exit codes:
 *
 *   0  CLI_OK       success
 *   1  CLI_FAIL     a runtime failure (an hwrt call failed, a file could not be read)
 *   2  CLI_USAGE    bad usage (unknown flag, missing or malformed value)
 *
 * Flags take their value as `--flag=V` or `--flag V` (`-x V` / `-xV` for short ones); an
 * optional value (`-l [SEC]`) only attached or, for the short form, as the next word when
 * it is a number. `--` ends the flags. */
#ifndef HWRT_TOOL_CLI_H
#define HWRT_TOOL_CLI_H

#include <stddef.h>
#include <stdio.h>

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };
enum { CLI_NONE = 0, CLI_REQUIRED = 1, CLI_OPTIONAL = 2 };   /* getopt_long's has_arg */

typedef struct cli_opt {
    const char *name;        /* long name, without "--" */
    int key;                 /* a short option letter, or a code >= 256 for long-only */
    int arg;                 /* CLI_NONE / CLI_REQUIRED / CLI_OPTIONAL */
    const char *meta;        /* the value's name in --help ("N", "SIZE") */
    const char *help;
} cli_opt;

typedef struct cli_tool {
    const char *name;        /* "hwrt-smi" */
    const char *synopsis;    /* usage lines, each starting with the tool's name */
    const char *about;       /* one paragraph for --help */
    const cli_opt *opts;     /* terminated by an entry with name == NULL */
    const char *epilog;      /* more --help text (fields, subcommands), may be NULL */
    int operands;            /* 1: words that are not flags are allowed (cli_parse returns them) */
} cli_tool;

/* Called for each flag with its key and value (NULL when none). Returns CLI_OK, or an exit
 * code (usually from cli_usage). */
typedef int (*cli_fn)(void *ctx, int key, const char *arg);

/* Parses argv. --help / -h print the help on stdout and --version the version; both make
 * cli_parse return CLI_OK with *done = 1 (the tool then exits 0). Returns an exit code:
 * CLI_OK with *done == 0 means go on, with the first operand at argv[*first]. */
int cli_parse(const cli_tool *t, int argc, char **argv, cli_fn fn, void *ctx, int *first,
              int *done);

/* "NAME: <message>\nTry 'NAME --help'." on stderr; returns CLI_USAGE. */
int cli_usage(const cli_tool *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "NAME: <message>" on stderr; returns CLI_FAIL. */
int cli_fail(const cli_tool *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An hwrt call failed: "NAME: <what>: STATUS: <hwrt_last_error()>"; returns CLI_FAIL. */
int cli_hwrt_fail(const cli_tool *t, const char *what, int status);

/* Checked values: CLI_OK and *out set, or CLI_USAGE with a sentence naming the flag, the
 * value and the accepted range. Sizes take K/M/G/T (powers of 1024, optional "iB"/"B"). */
int cli_long(const cli_tool *t, const char *flag, const char *arg, long min, long max, long *out);
int cli_int(const cli_tool *t, const char *flag, const char *arg, int min, int max, int *out);
int cli_double(const cli_tool *t, const char *flag, const char *arg, double min, double max,
               double *out);
int cli_size(const cli_tool *t, const char *flag, const char *arg, size_t min, size_t *out);
/* One of choices (NULL-terminated): its index, or -1 after a usage message listing them
 * (the caller returns CLI_USAGE). */
int cli_choice(const cli_tool *t, const char *flag, const char *arg, const char *const *choices);

void cli_print_help(const cli_tool *t, FILE *f);
void cli_print_version(const cli_tool *t, FILE *f);

#endif
