/* HWRT_ALLOC_TRACE: recording and replay.
 * - a session's allocations, tags and frees (two streams, a stream-ordered free on the
 *   other stream, a block left live until hwrt_shutdown) come out as rows in pool order,
 *   balanced, with requested sizes and stream indices; a second session appends;
 * - a symbolic link or a FIFO at the path is refused (the link's target is untouched,
 *   the FIFO does not hang the program) and allocation goes on;
 * - hwrt-bench-pool --min-capacity replays the recorded file and finds the smallest
 *   device for it: between its peak requested bytes and that plus the 2 MiB pages. */
#include "harness.h"
#include "harness_files.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MiB ((size_t)1 << 20)

static char dir[] = "/tmp/hwrt-alloc-trace-XXXXXX";
static char path[256];

static void session(void)
{
    hwrt_stream s;
    void *a, *b, *c, *kept;
    OK(hwrt_set_device("sim", 0));
    OK(hwrt_stream_create(&s, 0));
    OK(hwrt_malloc(&a, 1000));
    OK(hwrt_malloc_async(&b, 5 * MiB, s));
    OK(hwrt_set_alloc_tag(b, "kv,cache"));
    OK(hwrt_malloc(&c, 64));
    OK(hwrt_malloc(&kept, 3 * MiB));
    OK(hwrt_free(a));
    OK(hwrt_free_async(c, s));                 /* freed on the other stream */
    OK(hwrt_free_async(b, s));
    OK(hwrt_stream_destroy(s));
    (void)kept;                                /* left for hwrt_shutdown to free */
    OK(hwrt_shutdown());
}

static void records(void)
{
    TEST_CASE("rows of a session");
    setenv("HWRT_ALLOC_TRACE", path, 1);
    session();
    char *t = slurp(path);
    EXPECT(t != NULL);
    if (!t) return;
    EXPECT(!strncmp(t, "action,id,size,stream,tag,time_ns,device\n", 41));
    EXPECT(count(t, "\nalloc,") == 4);
    EXPECT(count(t, "\nfree,") == 4);          /* the live block's free row at shutdown */
    EXPECT(count(t, "\ntag,") == 1);
    EXPECT(strstr(t, ",1000,0,,") != NULL);    /* requested size, default stream */
    EXPECT(strstr(t, ",5242880,1,,") != NULL); /* the created stream is index 1 */
    EXPECT(strstr(t, ",,1,kv_cache,") != NULL);/* tag row, the comma replaced */
    char id[64];                               /* c: allocated on 0, freed on 1 */
    const char *r = strstr(t, ",64,0,,");
    EXPECT(r != NULL);
    if (r) {
        const char *s = r;
        while (s > t && s[-1] != ',') s--;
        snprintf(id, sizeof id, "free,%.*s,,1,", (int)(r - s), s);
        EXPECT(strstr(t, id) != NULL);
    }
    TEST_CASE("a second session appends");
    session();
    t = slurp(path);
    EXPECT(t && count(t, "action,") == 1 && count(t, "\nalloc,") == 8 && count(t, "\nfree,") == 8);
}

static void refuses_unsafe_paths(void)
{
    TEST_CASE("a symbolic link is not followed");
    char target[300], link[300];
    snprintf(target, sizeof target, "%s/target", dir);
    snprintf(link, sizeof link, "%s/link.csv", dir);
    FILE *f = fopen(target, "w");
    EXPECT(f != NULL);
    if (f) { fputs("precious\n", f); fclose(f); }
    EXPECT(symlink(target, link) == 0);
    setenv("HWRT_ALLOC_TRACE", link, 1);
    session();                                 /* a warning, and allocation goes on */
    char *t = slurp(target);
    EXPECT(t && !strcmp(t, "precious\n"));

    TEST_CASE("a FIFO is refused without hanging");
    char fifo[300];
    snprintf(fifo, sizeof fifo, "%s/fifo.csv", dir);
    EXPECT(mkfifo(fifo, 0600) == 0);
    setenv("HWRT_ALLOC_TRACE", fifo, 1);
    session();
    unsetenv("HWRT_ALLOC_TRACE");
    unlink(fifo);
    unlink(link);
    unlink(target);
}

static void replays(void)
{
    TEST_CASE("min-capacity of a recorded trace");
#ifndef HWRT_BENCH_POOL
    EXPECT(!"built without tools/hwrt-bench-pool");
    return;
#else
    char cmd[1024];
    char snap[300], snapfile[320];
    snprintf(snap, sizeof snap, "%s/oom", dir);
    snprintf(snapfile, sizeof snapfile, "%s.plain.json", snap);
    snprintf(cmd, sizeof cmd, "%s --min-capacity %s --devices tiny=4MiB,card=64MiB --oom-snapshot %s",
             HWRT_BENCH_POOL, path, snap);
    FILE *p = popen(cmd, "r");
    EXPECT(p != NULL);
    if (!p) return;
    char out[8192];
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    EXPECT(pclose(p) == 0);
    /* peak requested: 1000 + 5 MiB + 64 + 3 MiB live at once = 8.0 MiB + 1064 B; plain
     * mode holds them in a 2 MiB small segment, a 20 MiB segment (5 MiB) and the 3 MiB
     * one shares it: min 22 MiB; expandable maps 2 + 8 MiB (pages): min 10 MiB */
    EXPECT(strstr(out, "peak requested 8.0 MiB") != NULL);
    EXPECT(strstr(out, "fits on tiny (0.0 GiB): plain NO, expandable NO") != NULL);
    EXPECT(strstr(out, "fits on card (0.1 GiB): plain yes, expandable yes") != NULL);
    const char *e = strstr(out, "\nexpandable ");
    double mib = 0;
    EXPECT(e && sscanf(e, "\nexpandable %lf", &mib) == 1 && mib >= 8.0 && mib <= 12.0);
    /* --oom-snapshot: the plain replay 2 MiB below its minimum, its blocks named by the
     * trace's ids (the recorded addresses) or tags */
    EXPECT(strstr(out, "plain: memory snapshot at") != NULL);
    const char *js = slurp(snapfile);          /* its static buffer (2 MiB) */
    EXPECT(js && strstr(js, "\"segments\"") && strstr(js, "\"tag\": \"0x"));
    unlink(snapfile);
    snprintf(snapfile, sizeof snapfile, "%s.expandable.json", snap);
    unlink(snapfile);
    if (t_failed) fprintf(stderr, "%s\n", out);
#endif
}

int main(void)
{
    setenv("HWRT_SIM_REGISTRY", "off", 1);
    setenv("HWRT_SIM_DEVICES", "1", 1);
    EXPECT(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/trace.csv", dir);
    records();
    refuses_unsafe_paths();
    replays();
    unlink(path);
    rmdir(dir);
    return test_report();
}
