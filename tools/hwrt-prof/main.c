/* hwrt-prof: collect, export and analyze hwrt profiles, in the style of msprof.
 *
 *   hwrt-prof --application="./app args" --output=DIR   run app with HWRT_PROFILE=DIR
 *   hwrt-prof --export=on --output=DIR                  trace.json, CSVs, report.html
 *   hwrt-prof --analyze=op --output=DIR                 op table and verdict on stdout
 *
 * Options may be combined (collect, then export, then analyze) and written as
 * --opt=value or --opt value. */
#define _GNU_SOURCE
#include "base/out_file.h"
#include "prof_data.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hwrt-prof --application=\"./app args\" --output=DIR   collect (runs app with "
            "HWRT_PROFILE=DIR)\n"
            "       hwrt-prof --export=on --output=DIR                  write trace.json, "
            "op_summary.csv,\n"
            "            op_statistic.csv, memcpy_summary.csv, memory_record.csv, "
            "api_statistic.csv,\n"
            "            report.html and verdict.txt into DIR\n"
            "       hwrt-prof --analyze=op --output=DIR                 print the op table and "
            "the verdict\n");
}

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
    if (strcmp(what, "op")) {
        fprintf(stderr, "hwrt-prof: --analyze=%s is not known; use --analyze=op\n", what);
        return 1;
    }
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

/* "--name=value" or "--name value"; returns the value or NULL. */
static const char *opt(int argc, char **argv, int *i, const char *name)
{
    size_t l = strlen(name);
    if (strncmp(argv[*i], name, l)) return NULL;
    if (argv[*i][l] == '=') return argv[*i] + l + 1;
    if (argv[*i][l] == 0 && *i + 1 < argc) return argv[++*i];
    return NULL;
}

int main(int argc, char **argv)
{
    const char *app = NULL, *out = NULL, *exp = NULL, *ana = NULL, *v;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { usage(stdout); return 0; }
        if ((v = opt(argc, argv, &i, "--application"))) app = v;
        else if ((v = opt(argc, argv, &i, "--output"))) out = v;
        else if ((v = opt(argc, argv, &i, "--export"))) exp = v;
        else if ((v = opt(argc, argv, &i, "--analyze"))) ana = v;
        else {
            fprintf(stderr, "hwrt-prof: unknown option \"%s\"\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (!out || !*out || (!app && !exp && !ana)) {
        fprintf(stderr, "hwrt-prof: %s\n", !out || !*out ? "--output=DIR is required"
                                                          : "nothing to do");
        usage(stderr);
        return 2;
    }
    if (exp && strcmp(exp, "on") && strcmp(exp, "off")) {
        fprintf(stderr, "hwrt-prof: --export=%s: use on or off\n", exp);
        return 2;
    }
    int rc = 0;
    if (app) rc = collect(app, out);
    if (rc == 0 && exp && !strcmp(exp, "on")) rc = export_all(out);
    if (rc == 0 && ana) rc = analyze(ana, out);
    return rc;
}
