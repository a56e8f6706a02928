/* The disk tier failing under the residency manager (issue 25 item 3; offload/tier_disk.c,
 * res_evict.c, res_fetch.c), each failure an HWRT_ERROR_IO naming the cause with the tensor kept on the
 * device, its data intact, and the tier usable once the cause is gone:
 * - offload_path removed after hwrt_set_offload_config: the private directory cannot be
 *   made ("No such file or directory", naming offload_path);
 * - the file size limit (RLIMIT_FSIZE, SIGXFSZ ignored) reached by a first eviction
 *   ("File too large", how far it got) and by the rewrite of a region a tensor already
 *   had (its stale region is given up: disk_bytes drops back). */
#include "harness.h"
#include "harness_files.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

enum { N = 256 * 1024 };                      /* 1 MiB float32 tensors */
#define MiB ((size_t)1 << 20)

static int64_t shape[1] = {N};
static float buf[N];
static char base[] = "/tmp/hwrt-cov-tier-XXXXXX";
static char path[300];

static void configure(void)
{
    hwrt_offload_config c = {.enabled = 1, .max_device_memory = 64 * MiB,
                             .offload_cpu_size = 0, .offload_disk_size = 64 * MiB,
                             .offload_path = path, .enable_pinned_mem = 1};
    OK(hwrt_set_offload_config(&c));
}

static hwrt_tensor make(float v)
{
    for (int i = 0; i < N; i++) buf[i] = v + (float)(i % 97);
    hwrt_tensor t = NULL;
    OK(hwrt_tensor_from_host(&t, HWRT_FLOAT32, 1, shape, buf));
    OK(hwrt_tensor_set_offloadable(t, 1));
    return t;
}

static int holds(hwrt_tensor t, float v)
{
    memset(buf, 0, sizeof buf);
    if (hwrt_tensor_copy_to_host(t, buf, sizeof buf) != HWRT_SUCCESS) return 0;
    for (int i = 0; i < N; i++)
        if (buf[i] != v + (float)(i % 97)) return 0;
    return 1;
}

static int where(hwrt_tensor t)
{
    int w = -1;
    OK(hwrt_offload_location(t, &w));
    return w;
}

static size_t disk_bytes(void)
{
    hwrt_offload_stats s;
    OK(hwrt_offload_stats_get(&s));
    return s.disk_bytes;
}

static void path_removed(void)
{
    TEST_CASE("offload_path removed after it was configured");
    OK(hwrt_set_device("sim", 0));
    configure();
    hwrt_tensor t = make(1);
    EXPECT(rmdir(path) == 0);
    char want[400];
    snprintf(want, sizeof want, "cannot create the disk tier's private directory under "
             "offload_path \"%s\": No such file or directory", path);
    FAILS(hwrt_offload_evict(t), HWRT_ERROR_IO, want);
    EXPECT(where(t) == 0 && holds(t, 1));
    EXPECT(mkdir(path, 0700) == 0);
    OK(hwrt_offload_evict(t));                     /* the tier works again */
    EXPECT(where(t) == 2 && holds(t, 1));
    OK(hwrt_tensor_release(t));
    OK(hwrt_shutdown());
}

static void size_limit(void)
{
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_IGN);
    OK(hwrt_set_device("sim", 0));
    configure();

    TEST_CASE("a first eviction past the file size limit");
    hwrt_tensor t = make(2);
    lim = old;
    lim.rlim_cur = MiB / 2;
    setrlimit(RLIMIT_FSIZE, &lim);
    FAILS(hwrt_offload_evict(t), HWRT_ERROR_IO, "File too large");
    FAILS(hwrt_offload_evict(t), HWRT_ERROR_IO, "of 1048576 bytes");
    setrlimit(RLIMIT_FSIZE, &old);
    EXPECT(where(t) == 0 && holds(t, 2));
    EXPECT(disk_bytes() == 0);
    OK(hwrt_offload_evict(t));
    EXPECT(where(t) == 2 && disk_bytes() == MiB);

    TEST_CASE("rewriting a region it had, past the limit");
    EXPECT(holds(t, 2));                           /* fetched back: the disk copy stays */
    EXPECT(where(t) == 0);
    hwrt_tensor u = NULL;
    OK(hwrt_tensor_empty(&u, HWRT_FLOAT32, 1, shape));
    OK(hwrt_op_fill(u, 5, NULL));
    OK(hwrt_op_add(t, t, u, NULL));                /* written: the disk copy is stale */
    OK(hwrt_stream_synchronize(NULL));
    lim.rlim_cur = 1;
    setrlimit(RLIMIT_FSIZE, &lim);
    FAILS(hwrt_offload_evict(t), HWRT_ERROR_IO, "File too large");
    setrlimit(RLIMIT_FSIZE, &old);
    EXPECT(where(t) == 0 && holds(t, 7));          /* 2 + 5 */
    EXPECT(disk_bytes() == 0);                     /* the stale region is given up */
    OK(hwrt_offload_evict(t));
    EXPECT(where(t) == 2 && holds(t, 7));
    OK(hwrt_tensor_release(u));
    OK(hwrt_tensor_release(t));
    OK(hwrt_shutdown());
    signal(SIGXFSZ, SIG_DFL);
}

/* A hole left by a released region is reused when it fits exactly: the file does not
 * grow (issue 25's seed-3003 mutation run: tier_disk.c's `holes[i].len >= len` made `>`
 * appended every region after an exact hole; the file size limit shows where it went). */
static void exact_hole(void)
{
    TEST_CASE("a region fitting a hole exactly goes into it, the file does not grow");
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_IGN);
    OK(hwrt_set_device("sim", 0));
    configure();
    hwrt_tensor a = make(3), b = make(4), c = make(5);
    OK(hwrt_offload_evict(a));                     /* [0, 1 MiB) */
    OK(hwrt_offload_evict(b));                     /* [1, 2 MiB) */
    OK(hwrt_tensor_release(a));                    /* a hole of 1 MiB at 0 */
    EXPECT(disk_bytes() == MiB);
    lim = old;
    lim.rlim_cur = 2 * MiB;                        /* no write past the file's end */
    setrlimit(RLIMIT_FSIZE, &lim);
    OK(hwrt_offload_evict(c));
    setrlimit(RLIMIT_FSIZE, &old);
    EXPECT(where(c) == 2 && disk_bytes() == 2 * MiB);
    EXPECT(holds(c, 5) && holds(b, 4));
    OK(hwrt_tensor_release(b));
    OK(hwrt_tensor_release(c));
    OK(hwrt_shutdown());
    signal(SIGXFSZ, SIG_DFL);
}

int main(void)
{
    setenv("HWRT_SIM_DEVICES", "1", 1);
    if (!mkdtemp(base)) { perror("mkdtemp"); return 1; }
    snprintf(path, sizeof path, "%s/tier", base);
    mkdir(path, 0700);
    path_removed();
    size_limit();
    exact_hole();
    remove_tree(base);
    return test_report();
}
