/* hwrt-prof: collect, export and analyze hwrt profiles, in the style of msprof.
 *
 *   hwrt-prof --application="./app args" --output=DIR   run app with HWRT_PROFILE=DIR
 *   hwrt-prof --export=on --output=DIR                  trace.json, CSVs, report.html
 *   hwrt-prof --analyze=op --output=DIR                 op table and verdict on stdout
 *
 * Options may be combined (collect, then export, then analyze) and written as
 * --opt=value or --opt value (tools/common/cli.h); --export alone means on, --export=off
 * with --application collects without exporting. */
#define _GNU_SOURCE
#include "base/out_file.h"
#include "prof_data.h"
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int mkdirs(const char *dir)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = p + 1;; s++) {
        char c = *s;
        if (c == '/' || !c) {
            *s = 0;
            if (mkdir(p, 0777) != 0 && errno != EEXIST) return -1;
            *s = c;
        }
        if (!c) return 0;
    }
}

/* Old raw files would be merged into the new run's timeline: remove them first. */
static void clear_raw(const char *raw)
{
    DIR *dp = opendir(raw);
    if (!dp) return;
    for (struct dirent *e; (e = readdir(dp));) {
        if (strncmp(e->d_name, "prof_", 5)) continue;
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", raw, e->d_name);
        unlink(p);
    }
    closedir(dp);
}

static int collect(const char *app, const char *out)
{
    char raw[PATH_MAX], abs[PATH_MAX];
    snprintf(raw, sizeof raw, "%s/raw", out);
    if (mkdirs(raw) != 0 || !realpath(out, abs)) {
        fprintf(stderr, "hwrt-prof: cannot create %s: %s\n", raw, strerror(errno));
        return 1;
    }
    clear_raw(raw);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "hwrt-prof: fork failed: %s\n", strerror(errno));
        return 1;
    }
    if (pid == 0) {
        setenv("HWRT_PROFILE", abs, 1);
        execl("/bin/sh", "sh", "-c", app, (char *)NULL);
        fprintf(stderr, "hwrt-prof: cannot run /bin/sh: %s\n", strerror(errno));
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    prof_data d;
    char err[1024];
    if (prof_load(abs, &d, err, sizeof err) != 0) {
        fprintf(stderr, "hwrt-prof: the application (exit status %d) left no profile: %s; is "
                "it linked with libhwrt?\n", code, err);
        return code ? code : 1;
    }
    uint64_t ev = 0, drop = 0;
    for (int i = 0; i < d.nfiles; i++) { ev += d.files[i].events; drop += d.files[i].dropped; }
    fprintf(stderr, "hwrt-prof: collected %llu events (%llu dropped) from %d process(es) into "
            "%s/raw; application exit status %d\n", (unsigned long long)ev,
            (unsigned long long)drop, d.nfiles, abs, code);
    prof_free(&d);
    return code;
}

static int export_all(const char *out)
{
    prof_data d;
    char err[1024], path[PATH_MAX];
    if (prof_load(out, &d, err, sizeof err) != 0) {
        fprintf(stderr, "hwrt-prof: %s\n", err);
        return 1;
    }
    prof_figures f;
    prof_verdict v;
    prof_compute(&d, &f);
    prof_verdict_make(&f, &v);
    int rc = 0;
    snprintf(path, sizeof path, "%s/trace.json", out);
    if (export_trace_json(&d, path, err, sizeof err) != 0) rc = 1;
    if (!rc && export_csvs(&d, &f, out, err, sizeof err) != 0) rc = 1;
    snprintf(path, sizeof path, "%s/report.html", out);
    if (!rc && export_report_html(&d, &f, &v, path, err, sizeof err) != 0) rc = 1;
    snprintf(path, sizeof path, "%s/verdict.txt", out);
    char tmp[1300];
    FILE *vf = rc ? NULL : hwi_out_open(path, tmp, sizeof tmp);
    if (!rc && !vf) {
        snprintf(err, sizeof err, "cannot write %s: %s", path, strerror(errno));
        rc = 1;
    }
    if (vf) {
        prof_verdict_print(vf, &f, &v);
        if (hwi_out_commit(vf, tmp, path) != 0) {
            snprintf(err, sizeof err, "writing %s failed: %s", path, strerror(errno));
            rc = 1;
        }
    }
    if (rc) fprintf(stderr, "hwrt-prof: %s\n", err);
    else
        printf("hwrt-prof: exported %zu launches, %zu syncs, %zu memory events to %s: trace.json "
               "op_summary.csv op_statistic.csv memcpy_summary.csv memory_record.csv "
               "api_statistic.csv%s report.html verdict.txt\n", d.nops, d.nsyncs, d.nmems, out,
               d.nexts ? " offload_summary.csv" : "");
    if (!rc) prof_verdict_print(stdout, &f, &v);
    prof_figures_free(&f);
    prof_free(&d);
    return rc;
}

static int analyze(const char *what, const char *out)
{
    prof_data d;
    char err[1024];
    if (prof_load(out, &d, err, sizeof err) != 0) {
        fprintf(stderr, "hwrt-prof: %s\n", err);
        return 1;
    }
    prof_figures f;
    prof_verdict v;
    prof_compute(&d, &f);
    prof_verdict_make(&f, &v);
    print_op_table(stdout, &f);
    prof_verdict_print(stdout, &f, &v);
    prof_figures_free(&f);
    prof_free(&d);
    return 0;
}

enum { O_APP = 256, O_OUT, O_EXPORT, O_ANALYZE };

static const cli_opt opts[] = {
    {"application", O_APP, CLI_REQUIRED, "\"./app args\"", "collect: run app with HWRT_PROFILE=DIR"},
    {"output", O_OUT, CLI_REQUIRED, "DIR", "the profile directory (required)"},
    {"export", O_EXPORT, CLI_OPTIONAL, "on|off", "write trace.json, the CSVs, report.html and "
                                                 "verdict.txt into DIR (alone: on)"},
    {"analyze", O_ANALYZE, CLI_REQUIRED, "op", "print the op table and the verdict"},
    {0},
};

static const cli_tool tool = {
    .name = "hwrt-prof",
    .synopsis = "hwrt-prof --application=\"./app args\" --output=DIR   collect\n"
                "       hwrt-prof --export[=on] --output=DIR               export\n"
                "       hwrt-prof --analyze=op --output=DIR                analyze",
    .about = "Collect, export and analyze hwrt profiles, in the style of msprof. The steps\n"
             "combine: collect, then export, then analyze.",
    .opts = opts,
    .epilog = "export writes trace.json, op_summary.csv, op_statistic.csv, memcpy_summary.csv,\n"
              "memory_record.csv, api_statistic.csv, report.html and verdict.txt into DIR\n",
};

typedef struct { const char *app, *out, *ana; int exp; } prof_opts;

static int on_opt(void *ctx, int key, const char *arg)
{
    prof_opts *o = ctx;
    switch (key) {
    case O_APP: o->app = arg; return CLI_OK;
    case O_OUT: o->out = arg; return CLI_OK;
    case O_EXPORT: {
        static const char *const onoff[] = {"off", "on", NULL};
        o->exp = arg ? cli_choice(&tool, "--export", arg, onoff) : 1;
        return o->exp < 0 ? CLI_USAGE : CLI_OK;
    }
    case O_ANALYZE: {
        static const char *const what[] = {"op", NULL};
        if (cli_choice(&tool, "--analyze", arg, what) < 0) return CLI_USAGE;
        o->ana = arg;
        return CLI_OK;
    }
    }
    return CLI_USAGE;
}

int main(int argc, char **argv)
{
    prof_opts o = {.exp = -1};
    int first, done;
    int rc = cli_parse(&tool, argc, argv, on_opt, &o, &first, &done);
    if (rc != CLI_OK || done) return rc;
    if (!o.out || !*o.out) return cli_usage(&tool, "--output=DIR is required");
    if (!o.app && o.exp != 1 && !o.ana)
        return cli_usage(&tool, o.exp == 0 ? "nothing to do: --export=off exports nothing "
                         "(use it with --application to collect only)" : "nothing to do: give "
                         "--application, --export or --analyze");
    if (o.app) rc = collect(o.app, o.out);
    if (rc == 0 && o.exp == 1) rc = export_all(o.out);
    if (rc == 0 && o.ana) rc = analyze(o.ana, o.out);
    return rc;
}
