/* Smaller guards (issue 16, case 8):
 *   - a host function that synchronizes (its own stream, the device, an event) gets
 *     HWRT_ERROR_NOT_PERMITTED instead of waiting for itself forever;
 *   - a size that rounds to 0 bytes ("0.4", where 0 means "no cap") and hexadecimal
 *     sizes are refused with a sentence;
 *   - memory snapshots and the profiler's raw files replace a symlink planted at their
 *     path (or at the old PATH.tmp) instead of writing through it. */
#define _GNU_SOURCE
#include "harness.h"
#include "harness_files.h"

#include <hwrt/hwrt_prof.h>

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static hwrt_stream own;
static hwrt_event ev;
static hwrt_status st_stream, st_device, st_event, st_destroy, st_copy;
static char msg[512];

static void syncing_fn(void *arg)
{
    (void)arg;
    st_stream = hwrt_stream_synchronize(own);
    snprintf(msg, sizeof msg, "%s", hwrt_last_error());
    st_device = hwrt_device_synchronize();
    st_event = hwrt_event_synchronize(ev);
    st_destroy = hwrt_stream_destroy(own);
    float x = 0;
    int64_t one[1] = {1};
    hwrt_tensor t = NULL;
    st_copy = hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, one);
    if (st_copy == HWRT_SUCCESS) st_copy = hwrt_tensor_copy_to_host(t, &x, sizeof x);
    if (t) hwrt_tensor_release(t);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void host_fn_sync(void)
{
    TEST_CASE("host_fn_syncs_itself");
    OK(hwrt_stream_create(&own, 0));
    OK(hwrt_event_create(&ev, 0));
    OK(hwrt_event_record(ev, own));
    OK(hwrt_launch_host_func(own, syncing_fn, NULL));
    OK(hwrt_event_record(ev, own));       /* recorded after the host function */
    double t0 = now_s();
    while (hwrt_stream_query(own) == HWRT_ERROR_NOT_READY) {
        if (now_s() - t0 > 20) {          /* 583322e: it waits for itself for good */
            fprintf(stderr, "FAIL [host_fn_syncs_itself]: the host function still runs after "
                    "20 s (it waits for itself)\n");
            _exit(1);
        }
        usleep(1000);
    }
    EXPECT(st_stream == HWRT_ERROR_NOT_PERMITTED);
    EXPECT(strstr(msg, "hwrt_stream_synchronize") && strstr(msg, "host function"));
    EXPECT(st_device == HWRT_ERROR_NOT_PERMITTED);
    EXPECT(st_event == HWRT_ERROR_NOT_PERMITTED);
    EXPECT(st_destroy == HWRT_ERROR_NOT_PERMITTED);
    EXPECT(st_copy == HWRT_ERROR_NOT_PERMITTED);
    /* outside the host function all of it works again */
    OK(hwrt_stream_synchronize(own));
    OK(hwrt_device_synchronize());
    OK(hwrt_event_destroy(ev));
    OK(hwrt_stream_destroy(own));
}

static void sizes(void)
{
    TEST_CASE("sizes");
    char buf[64];
    FAILS(hwrt_set_config("max_device_memory", "0.4"), HWRT_ERROR_INVALID_ARGUMENT, "\"0.4\"");
    FAILS(hwrt_set_config("max_device_memory", "0.4"), HWRT_ERROR_INVALID_ARGUMENT,
          "less than one byte");
    FAILS(hwrt_set_config("offload_cpu_size", "0.9B"), HWRT_ERROR_INVALID_ARGUMENT,
          "less than one byte");
    FAILS(hwrt_set_config("max_split_size", "0x100000"), HWRT_ERROR_INVALID_ARGUMENT,
          "hexadecimal");
    FAILS(hwrt_set_config("max_split_size", "0X10MB"), HWRT_ERROR_INVALID_ARGUMENT,
          "hexadecimal");
    OK(hwrt_get_config("max_device_memory", buf, sizeof buf));
    EXPECT(!strcmp(buf, "0"));                   /* refused values changed nothing */
    OK(hwrt_get_config("max_split_size", buf, sizeof buf));
    EXPECT(!strcmp(buf, "0"));
    OK(hwrt_set_config("max_split_size", "0.5KB"));   /* 512 bytes: fine */
    OK(hwrt_get_config("max_split_size", buf, sizeof buf));
    EXPECT(!strcmp(buf, "512"));
    OK(hwrt_set_config("max_split_size", "0"));
    OK(hwrt_set_config("max_split_size", "01024"));   /* leading zero: decimal */
    OK(hwrt_get_config("max_split_size", buf, sizeof buf));
    EXPECT(!strcmp(buf, "1024"));
    OK(hwrt_set_config("max_split_size", "0"));
}

static void write_file(const char *p, const char *s)
{
    FILE *f = fopen(p, "w");
    if (f) { fputs(s, f); fclose(f); }
}

static int file_is(const char *p, const char *s)
{
    char buf[64] = "";
    FILE *f = fopen(p, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return !strcmp(buf, s);
}

static int regular_nonempty(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

static void out_files(void)
{
    TEST_CASE("no_write_through_symlinks");
    char dir[] = "/tmp/hwrt-guards-XXXXXX";
    if (!mkdtemp(dir)) { EXPECT(0); return; }
    char victim[128], snap[128], snap_tmp[160], raw[128], link[256];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    write_file(victim, "precious");
    snprintf(snap, sizeof snap, "%s/snapshot.json", dir);
    snprintf(snap_tmp, sizeof snap_tmp, "%s/snapshot.json.tmp", dir);
    EXPECT(symlink(victim, snap) == 0);
    EXPECT(symlink(victim, snap_tmp) == 0);
    void *p = NULL;
    OK(hwrt_malloc(&p, 4096));
    OK(hwrt_memory_snapshot(0, snap));
    EXPECT(file_is(victim, "precious"));
    EXPECT(regular_nonempty(snap));
    /* the profiler's raw file of this process, sessions 0..3, and their .tmp */
    snprintf(raw, sizeof raw, "%s/prof", dir);
    EXPECT(mkdir(raw, 0700) == 0);
    snprintf(link, sizeof link, "%s/raw", raw);
    EXPECT(mkdir(link, 0700) == 0);
    for (int s = 0; s < 4; s++) {
        snprintf(link, sizeof link, "%s/raw/prof_%ld_%d.tsv", raw, (long)getpid(), s);
        EXPECT(symlink(victim, link) == 0);
        snprintf(link, sizeof link, "%s/raw/prof_%ld_%d.tsv.tmp", raw, (long)getpid(), s);
        EXPECT(symlink(victim, link) == 0);
    }
    OK(hwrt_profiler_start(raw));
    OK(hwrt_memset_async(p, 1, 4096, NULL));
    OK(hwrt_device_synchronize());
    OK(hwrt_profiler_stop());
    EXPECT(file_is(victim, "precious"));
    int written = 0;
    for (int s = 0; s < 4; s++) {
        snprintf(link, sizeof link, "%s/raw/prof_%ld_%d.tsv", raw, (long)getpid(), s);
        written += regular_nonempty(link);
    }
    EXPECT(written == 1);
    OK(hwrt_free(p));
    EXPECT(remove_tree(dir) == 0);
}

int main(void)
{
    OK(hwrt_set_device("sim", 0));
    sizes();
    out_files();
    host_fn_sync();
    OK(hwrt_shutdown());
    return test_report();
}
