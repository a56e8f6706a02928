/* hwrt-bench: benchmarks, each figure a median next to a baseline measured in the same
 * run (see docs/performance.md).
 *
 *   hwrt-bench copy   [--json] [--quick] [--max-size SIZE] [--backend NAME]
 *   hwrt-bench launch [--json] [--quick] [--backend NAME]
 *   hwrt-bench all    [options] [--quiet]  copy, launch, then every hwrt-bench-<name> built
 *   hwrt-bench NAME   [args]         runs the sibling executable hwrt-bench-NAME
 *
 * `hwrt-bench --help` lists the subcommands built next to it. `all --json` is one JSON
 * object: "copy", "launch" and one member per sibling (its own --json document, or null
 * when it failed, its name then in "failed"; the exit status is then 1).
 *
 * Subcommands that belong to other parts of hwrt (pool, offload, opencl, ...) are
 * separate executables named hwrt-bench-<name> in the same directory as this one, so
 * that the tool needs no rebuild when one is added. */
#include "bench.h"
#include "cli.h"
#include "progress.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Directory of this executable, for finding sibling subcommands. */
static int self_dir(char *buf, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    if (n <= 0) return 0;
    buf[n] = 0;
    char *slash = strrchr(buf, '/');
    if (!slash) return 0;
    *slash = 0;
    return 1;
}

/* Directories that may hold sibling subcommands: this tool's own (build/bin, where every
 * tool is built, or the install bindir). Returns how many were filled. */
static int sibling_dirs(char dirs[][PATH_MAX], int cap)
{
    return cap > 0 && self_dir(dirs[0], PATH_MAX);
}

static int sibling_path(const char *name, char *path, size_t len)
{
    static char dirs[64][PATH_MAX];
    int n = sibling_dirs(dirs, 64);
    for (int i = 0; i < n; i++) {
        snprintf(path, len, "%s/hwrt-bench-%s", dirs[i], name);
        if (access(path, X_OK) == 0) return 1;
    }
    snprintf(path, len, "hwrt-bench-%s", name);
    return 0;
}

static int siblings(char names[][64], int cap);

static const cli_opt opts[] = {
    {"json", 'j', CLI_NONE, NULL, "machine-readable output: one JSON document on stdout"},
    {"quick", 256, CLI_NONE, NULL, "fewer repeats (smoke runs); all: passed to every subcommand"},
    {"max-size", 257, CLI_REQUIRED, "SIZE", "copy: largest size (default 512MiB, at least 4K)"},
    {"backend", 258, CLI_REQUIRED, "NAME", "backend to measure (default: auto)"},
    {"quiet", 259, CLI_NONE, NULL, "all: no progress line on stderr"},
    {0},
};

static char epilog[4096];
static cli_tool tool = {
    .name = "hwrt-bench",
    .synopsis = "hwrt-bench SUBCOMMAND [options]",
    .about = "Benchmarks; every figure is a median next to a baseline measured in the same run\n"
             "(docs/performance.md).",
    .opts = opts,
    .epilog = epilog,
};

/* The subcommands: the built-in ones and every hwrt-bench-NAME next to this tool. */
static void make_epilog(void)
{
    char names[64][64];
    int n = siblings(names, 64), len;
    len = snprintf(epilog, sizeof epilog,
                   "subcommands:\n"
                   "  copy      H2D/D2H/D2D bandwidth, pinned and pageable, vs memcpy (1 and 2 threads)\n"
                   "  launch    op+sync round trip vs condvar/spin handoff; enqueue throughput\n"
                   "  all       copy, launch, then every subcommand below, each with --json if given\n");
    for (int i = 0; i < n && len > 0 && (size_t)len < sizeof epilog; i++)
        len += snprintf(epilog + len, sizeof epilog - (size_t)len,
                        "  %-9s hwrt-bench-%s (its own options: hwrt-bench %s --help)\n",
                        names[i], names[i], names[i]);
    if (!n && len > 0 && (size_t)len < sizeof epilog)
        snprintf(epilog + len, sizeof epilog - (size_t)len,
                 "  (no hwrt-bench-NAME subcommand is built next to this tool)\n");
}

static int exec_sibling(const char *name, int argc, char **argv)
{
    char path[PATH_MAX + 32];
    if (!sibling_path(name, path, sizeof path)) {
        make_epilog();
        return cli_usage(&tool, "unknown subcommand '%s' (no %s in this build); the "
                         "subcommands built here:\n%s", name, path, epilog);
    }
    (void)argc;
    argv[0] = path;                      /* argv[1..] are the subcommand's own arguments */
    execv(path, argv);
    return cli_fail(&tool, "cannot run %s: %s", path, strerror(errno));
}

static int on_opt(void *ctx, int key, const char *arg)
{
    bench_opts *o = ctx;
    switch (key) {
    case 'j': o->json = 1; return CLI_OK;
    case 256: o->quick = 1; return CLI_OK;
    case 257: return cli_size(&tool, "--max-size", arg, 4096, &o->max_bytes);
    case 258: o->backend = arg; return CLI_OK;
    case 259: o->quiet = 1; return CLI_OK;
    }
    return CLI_USAGE;
}

/* `all`: one sibling as a child; with --json its output (one JSON document) is embedded
 * under its name. Returns 0, or 1 when it failed. */
static int run_one(const bench_opts *o, hwi_jw *j, const char *path, const char *name)
{
    char cmd[PATH_MAX + 64];
    /* siblings have their own options; they all take --json and --quick */
    snprintf(cmd, sizeof cmd, "'%s'%s%s", path, o->json ? " --json" : "", o->quick ? " --quick" : "");
    fflush(stdout);
    if (!o->json) {
        printf("\n== %s\n", name);
        fflush(stdout);
        if (system(cmd) == 0) return 0;
        printf("(%s failed)\n", name);
        return 1;
    }
    FILE *p = popen(cmd, "r");
    hwi_jw_key(j, name);
    if (!p) {
        hwi_jw_null(j);
        return 1;
    }
    char *text = NULL;
    size_t len = 0, cap = 0, n;
    char buf[4096];
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) {
        if (len + n + 1 > cap) {
            cap = (len + n + 1) * 2;
            char *t = realloc(text, cap);
            if (!t) break;
            text = t;
        }
        memcpy(text + len, buf, n);
        len += n;
    }
    int status = pclose(p);
    int ok = status == 0 && text && hwi_jw_valid(text, len);
    if (ok) hwi_jw_raw(j, text, len);
    else hwi_jw_null(j);
    if (!ok && status == 0)
        fprintf(stderr, "hwrt-bench: %s --json wrote no valid JSON document\n", name);
    free(text);
    return !ok;
}

/* Names (NAME of hwrt-bench-NAME) of the sibling subcommands, sorted. */
static int siblings(char names[][64], int cap)
{
    static char dirs[1][PATH_MAX];
    int n = 0;
    if (!sibling_dirs(dirs, 1)) return 0;
    DIR *d = opendir(dirs[0]);
    struct dirent *e;
    while (d && (e = readdir(d)) && n < cap) {
        if (strncmp(e->d_name, "hwrt-bench-", 11) || strlen(e->d_name) >= 64 + 11) continue;
        char path[2 * PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dirs[0], e->d_name);
        if (access(path, X_OK)) continue;
        snprintf(names[n++], 64, "%s", e->d_name + 11);
    }
    if (d) closedir(d);
    for (int i = 1; i < n; i++)          /* insertion sort: a stable, readable order */
        for (int k = i; k > 0 && strcmp(names[k - 1], names[k]) > 0; k--) {
            char t[64];
            memcpy(t, names[k], 64);
            memcpy(names[k], names[k - 1], 64);
            memcpy(names[k - 1], t, 64);
        }
    return n;
}

int main(int argc, char **argv)
{
    make_epilog();
    if (argc < 2) return cli_usage(&tool, "a subcommand is needed (copy, launch, all, ...)");
    const char *cmd = argv[1];
    if (cmd[0] == '-') {                 /* --help, --version, or a misplaced flag */
        int first, done;
        int rc = cli_parse(&tool, argc, argv, on_opt, &(bench_opts){0}, &first, &done);
        if (rc != CLI_OK || done) return rc;
        return cli_usage(&tool, "a subcommand comes first: hwrt-bench SUBCOMMAND [options]");
    }
    int is_copy = !strcmp(cmd, "copy"), is_launch = !strcmp(cmd, "launch");
    int is_all = !strcmp(cmd, "all");
    if (!is_copy && !is_launch && !is_all)
        return exec_sibling(cmd, argc - 1, argv + 1);
    bench_opts o = {.max_bytes = (size_t)512 << 20, .backend = "auto"};
    int first, done;
    int rc = cli_parse(&tool, argc - 1, argv + 1, on_opt, &o, &first, &done);
    if (rc != CLI_OK || done) return rc;
    hwrt_status st = hwrt_set_device(o.backend, 0);
    if (st != HWRT_SUCCESS) {
        char what[128];
        snprintf(what, sizeof what, "selecting backend '%s', device 0", o.backend);
        return cli_hwrt_fail(&tool, what, st);
    }
    char names[64][64];
    int nsib = is_all ? siblings(names, 64) : 0, failed = 0;
    cli_progress prog;
    /* progress only where it is not mixed into the results on one terminal */
    cli_progress_begin(&prog, "hwrt-bench", cmd, o.quiet || (!o.json && isatty(STDOUT_FILENO)));
    long step = 0, steps = (is_copy || is_all) + (is_launch || is_all) + nsib;
    hwi_jw j;
    hwi_jw_begin(&j, stdout, 0);
    if (o.json && is_all) {
        hwi_jw_obj(&j);
        hwi_jw_kstr(&j, "backend", hwrt_current_backend());
    }
    if (is_copy || is_all) {
        cli_progress_step(&prog, step++, steps, "copy");
        if (is_all && o.json) hwi_jw_key(&j, "copy");
        bench_copy(&o, &j);
    }
    if (is_launch || is_all) {
        cli_progress_step(&prog, step++, steps, "launch");
        if (is_all && o.json) hwi_jw_key(&j, "launch");
        if (is_all && !o.json) printf("\n");
        bench_launch(&o, &j);
    }
    BCHECK(hwrt_shutdown());
    char failed_names[64][64];
    for (int i = 0; i < nsib; i++) {
        char path[PATH_MAX + 32];
        cli_progress_step(&prog, step++, steps, names[i]);
        if (!sibling_path(names[i], path, sizeof path)) continue;
        if (run_one(&o, &j, path, names[i])) memcpy(failed_names[failed++], names[i], 64);
    }
    cli_progress_step(&prog, step, steps, "done");
    cli_progress_end(&prog);
    if (o.json && is_all) {
        hwi_jw_key(&j, "failed");
        hwi_jw_arr(&j);
        for (int i = 0; i < failed; i++) hwi_jw_str(&j, failed_names[i]);
        hwi_jw_close(&j);
        hwi_jw_close(&j);
    }
    if (o.json && hwi_jw_end(&j) != 0) return cli_fail(&tool, "the JSON output is incomplete");
    for (int i = 0; i < failed; i++)
        fprintf(stderr, "hwrt-bench: subcommand %s failed\n", failed_names[i]);
    return failed ? CLI_FAIL : CLI_OK;
}
