/* hwrt-bench: benchmarks, each figure a median next to a baseline measured in the same
 * run (see docs/performance.md).
 *
 *   hwrt-bench copy   [--json] [--quick] [--max-size SIZE] [--backend NAME]
 *   hwrt-bench launch [--json] [--quick] [--backend NAME]
 *   hwrt-bench all    [options]      copy, launch, then every hwrt-bench-<name> built
 *   hwrt-bench NAME   [args]         runs the sibling executable hwrt-bench-NAME
 *
 * Subcommands that belong to other parts of hwrt (pool, offload, opencl, ...) are
 * separate executables named hwrt-bench-<name> in the same directory as this one, so
 * that the tool needs no rebuild when one is added. */
#include "bench.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: hwrt-bench <copy|launch|all|NAME> [--json] [--quick] [--max-size SIZE]"
               " [--backend NAME]\n"
               "  copy    H2D/D2H/D2D bandwidth, pinned and pageable, vs memcpy (1 and 2 threads)\n"
               "  launch  op+sync round trip vs condvar/spin handoff; enqueue throughput\n"
               "  all     copy, launch, then every hwrt-bench-NAME built next to this tool\n"
               "  NAME    runs hwrt-bench-NAME (e.g. pool, offload, opencl) if it was built\n");
}

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

static int exec_sibling(const char *name, int argc, char **argv)
{
    char path[PATH_MAX + 32];
    if (!sibling_path(name, path, sizeof path)) {
        fprintf(stderr, "hwrt-bench: subcommand '%s' is not built in this hwrt build (no %s); "
                "known here: copy, launch, all\n", name, path);
        return 2;
    }
    argv[0] = path;                      /* argv[1..] are the subcommand's own arguments */
    execv(path, argv);
    fprintf(stderr, "hwrt-bench: cannot run %s: %s\n", path, strerror(errno));
    return 2;
}

static int parse(int argc, char **argv, bench_opts *o)
{
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) o->json = 1;
        else if (!strcmp(argv[i], "--quick")) o->quick = 1;
        else if (!strcmp(argv[i], "--backend") && i + 1 < argc) o->backend = argv[++i];
        else if (!strcmp(argv[i], "--max-size") && i + 1 < argc) {
            char *end;
            double v = strtod(argv[++i], &end);
            double m = (*end == 'G' || *end == 'g') ? 1 << 30 : (*end == 'M' || *end == 'm')
                       ? 1 << 20 : (*end == 'K' || *end == 'k') ? 1 << 10 : 1;
            if (v * m < 4096) { fprintf(stderr, "hwrt-bench: --max-size must be >= 4K\n"); return 0; }
            o->max_bytes = (size_t)(v * m);
        } else {
            fprintf(stderr, "hwrt-bench: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 0;
        }
    }
    return 1;
}

/* `all`: run every sibling subcommand, each as a child; with --json its output (one JSON
 * value) is embedded under its name. */
static void run_one(const bench_opts *o, bench_json *j, const char *path, const char *name)
{
    char cmd[PATH_MAX + 64];
    /* siblings have their own options: the only one they all share is --json */
    snprintf(cmd, sizeof cmd, "'%s'%s", path, o->json ? " --json" : "");
    fflush(stdout);
    if (!o->json) {
        printf("\n== %s\n", name);
        fflush(stdout);
        if (system(cmd) != 0) printf("(%s failed)\n", name);
        return;
    }
    FILE *p = popen(cmd, "r");
    if (!p) return;
    bj_key(j, name);
    char buf[4096];
    size_t n, total = 0;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) { fwrite(buf, 1, n, stdout); total += n; }
    if (pclose(p) != 0 || total == 0) printf("%snull", total ? "," : "");
}

/* `all`: run every sibling subcommand once, each as a child; with --json its output (one
 * JSON value) is embedded under its name. */
static void run_siblings(const bench_opts *o, bench_json *j)
{
    static char dirs[64][PATH_MAX];
    char seen[64][64];
    int nseen = 0, n = sibling_dirs(dirs, 64);
    for (int i = 0; i < n; i++) {
        DIR *d = opendir(dirs[i]);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (strncmp(e->d_name, "hwrt-bench-", 11) || strlen(e->d_name) >= 64) continue;
            int dup = 0;
            for (int k = 0; k < nseen; k++) dup |= !strcmp(seen[k], e->d_name);
            char path[2 * PATH_MAX];
            snprintf(path, sizeof path, "%s/%s", dirs[i], e->d_name);
            if (dup || access(path, X_OK) || nseen == 64) continue;
            snprintf(seen[nseen++], 64, "%s", e->d_name);
            run_one(o, j, path, e->d_name + 11);
        }
        if (d) closedir(d);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *cmd = argv[1];
    int is_copy = !strcmp(cmd, "copy"), is_launch = !strcmp(cmd, "launch");
    int is_all = !strcmp(cmd, "all");
    if (!is_copy && !is_launch && !is_all)
        return exec_sibling(cmd, argc - 1, argv + 1);
    bench_opts o = {.max_bytes = (size_t)512 << 20, .backend = "auto"};
    if (!parse(argc, argv, &o)) return 2;
    BCHECK(hwrt_set_device(o.backend, 0));
    bench_json j = {.f = stdout};
    if (o.json && is_all) { bj_open(&j, stdout, '{'); bj_str(&j, "backend", hwrt_current_backend()); }
    if (is_copy || is_all) {
        if (is_all && o.json) bj_key(&j, "copy");
        else if (o.json) j.depth = 0;
        bench_copy(&o, &j);
    }
    if (is_launch || is_all) {
        if (is_all && o.json) bj_key(&j, "launch");
        else if (o.json) j.depth = 0;
        if (is_all && !o.json) printf("\n");
        bench_launch(&o, &j);
    }
    BCHECK(hwrt_shutdown());
    if (is_all) run_siblings(&o, &j);
    if (o.json && is_all) bj_close(&j, '}');
    return 0;
}
