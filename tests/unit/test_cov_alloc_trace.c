/* HWRT_ALLOC_TRACE's refusals and write failures (issue 25 item 3, alloc_trace.c):
 * - an empty value records nothing; a path of 4096 bytes or more, a missing directory,
 *   a directory, a character device: a warning naming why, no file, allocation goes on;
 * - the file hits its size limit (RLIMIT_FSIZE, SIGXFSZ ignored) while rows are written
 *   (more than the 1 MiB buffer): one error naming "writing failed" and the row count,
 *   and no second one at close; with rows still in the buffer at close: "closing failed";
 * - a tag's ',', '\n' and '\r' become '_'; a destroyed stream's index is given to the
 *   next new stream.
 * Each case checks the file and what was printed on stderr (into a pipe), with
 * HWRT_LOG_LEVEL=1 (errors). */
#include "harness.h"
#include "harness_files.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/hwrt-cov-trace-XXXXXX";

/* a session that allocates and frees (n pairs), the data checked */
static void session(int n)
{
    OK(hwrt_set_device("sim", 0));
    void *p = NULL;
    for (int i = 0; i < n; i++) {
        OK(hwrt_malloc(&p, 256 + (size_t)(i % 7) * 64));
        OK(hwrt_free(p));
    }
    sim_round_trip();
    OK(hwrt_shutdown());
}

static void refused_paths(void)
{
    char p[300];
    TEST_CASE("an empty HWRT_ALLOC_TRACE records nothing");
    setenv("HWRT_ALLOC_TRACE", "", 1);
    err_begin();
    session(2);
    EXPECT(strstr(err_end(), "HWRT_ALLOC_TRACE") == NULL);

    TEST_CASE("a path of 4096 bytes is refused");
    static char longp[5000];
    snprintf(longp, sizeof longp, "%s/", dir);
    size_t o = strlen(longp);
    memset(longp + o, 'a', 4096 - o);
    longp[4096] = 0;
    setenv("HWRT_ALLOC_TRACE", longp, 1);
    err_begin();
    session(2);
    char *e = err_end();
    EXPECT(strstr(e, "the path is longer than 4095 bytes") != NULL);

    TEST_CASE("a missing directory is refused");
    snprintf(p, sizeof p, "%s/no/such/dir.csv", dir);
    setenv("HWRT_ALLOC_TRACE", p, 1);
    err_begin();
    session(2);
    e = err_end();
    EXPECT(strstr(e, "cannot be written: No such file or directory") != NULL);
    EXPECT(strstr(e, "name a regular file") != NULL);
    EXPECT(access(p, F_OK) != 0);

    TEST_CASE("a directory is refused");
    setenv("HWRT_ALLOC_TRACE", dir, 1);
    err_begin();
    session(2);
    e = err_end();
    EXPECT(strstr(e, "cannot be written: Is a directory") != NULL);

    TEST_CASE("a character device is refused");
    setenv("HWRT_ALLOC_TRACE", "/dev/null", 1);
    err_begin();
    session(2);
    e = err_end();
    EXPECT(strstr(e, "\"/dev/null\" cannot be written: it is not a regular file") != NULL);
    unsetenv("HWRT_ALLOC_TRACE");
}

static void size_limit(void)
{
    char p[300];
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_IGN);                /* writes past the limit fail with EFBIG */

    TEST_CASE("the file reaches its size limit while rows are written");
    snprintf(p, sizeof p, "%s/full.csv", dir);
    setenv("HWRT_ALLOC_TRACE", p, 1);
    lim = old;
    lim.rlim_cur = 64 * 1024;
    setrlimit(RLIMIT_FSIZE, &lim);
    err_begin();
    session(12000);                         /* ~24000 rows: past the 1 MiB buffer */
    char *e = err_end();
    setrlimit(RLIMIT_FSIZE, &old);
    EXPECT(count(e, "writing failed after ") == 1);
    EXPECT(strstr(e, "File too large; the trace is incomplete") != NULL);
    EXPECT(strstr(e, "closing failed") == NULL);   /* one report per trace */
    struct stat st;
    EXPECT(stat(p, &st) == 0 && st.st_size <= 64 * 1024);

    TEST_CASE("the rows still buffered at close do not fit");
    snprintf(p, sizeof p, "%s/close.csv", dir);
    setenv("HWRT_ALLOC_TRACE", p, 1);
    lim.rlim_cur = 16;                       /* not even the header */
    setrlimit(RLIMIT_FSIZE, &lim);
    err_begin();
    session(10);                             /* 22 rows: all in the buffer until close */
    e = err_end();
    setrlimit(RLIMIT_FSIZE, &old);
    EXPECT(strstr(e, "writing failed") == NULL);
    EXPECT(strstr(e, "closing failed after 22 rows: File too large") != NULL);
    signal(SIGXFSZ, SIG_DFL);
    unsetenv("HWRT_ALLOC_TRACE");
}

static void rows_of_tags_and_streams(void)
{
    char p[300];
    TEST_CASE("tags are sanitized, a gone stream's index is reused");
    snprintf(p, sizeof p, "%s/rows.csv", dir);
    setenv("HWRT_ALLOC_TRACE", p, 1);
    OK(hwrt_set_device("sim", 0));
    hwrt_stream a, b, c;
    void *x, *y, *z;
    OK(hwrt_stream_create(&a, 0));
    OK(hwrt_stream_create(&b, 0));
    OK(hwrt_malloc_async(&x, 4096, a));      /* a: index 1 */
    OK(hwrt_malloc_async(&y, 8192, b));      /* b: index 2 */
    OK(hwrt_set_alloc_tag(y, "k,v\ncache\rx"));
    OK(hwrt_free_async(x, a));
    OK(hwrt_stream_synchronize(a));
    OK(hwrt_stream_destroy(a));              /* index 1 is free again */
    OK(hwrt_stream_create(&c, 0));
    OK(hwrt_malloc_async(&z, 12288, c));     /* c takes index 1, not 3 */
    OK(hwrt_free_async(z, c));
    OK(hwrt_free_async(y, b));
    OK(hwrt_stream_synchronize(b));
    OK(hwrt_stream_synchronize(c));
    OK(hwrt_stream_destroy(b));
    OK(hwrt_stream_destroy(c));
    OK(hwrt_shutdown());
    unsetenv("HWRT_ALLOC_TRACE");
    char *t = slurp(p);
    EXPECT(t != NULL);
    if (!t) return;
    EXPECT(strstr(t, ",4096,1,,") != NULL);
    EXPECT(strstr(t, ",8192,2,,") != NULL);
    EXPECT(strstr(t, ",12288,1,,") != NULL);
    EXPECT(strstr(t, ",,2,k_v_cache_x,") != NULL);
    EXPECT(strchr(t, '\r') == NULL);
}

int main(void)
{
    setenv("HWRT_SIM_DEVICES", "1", 1);
    setenv("HWRT_LOG_LEVEL", "1", 1);          /* errors: the write failures */
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    refused_paths();
    size_limit();
    rows_of_tags_and_streams();
    remove_tree(dir);
    return test_report();
}
