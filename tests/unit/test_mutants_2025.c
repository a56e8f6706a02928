/* Regression tests for the survivors of issue 25's seeded mutation run (seed 2025,
 * scripts/mutation-run.sh; docs/RELIABILITY.md "Mutation score (issue 25 item 2)") that
 * the public API shows and no other suite's case fits. Each case names its mutant. */
#include "harness.h"
#include "harness_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MiB ((size_t)1 << 20)

typedef struct { const char *name; int n, zero; } mem_count;

static void mem_line(const char *line, void *arg)
{
    mem_count *c = arg;
    char kind[8], nm[64];
    unsigned th;
    int dev;
    unsigned long long t0, bytes;
    if (sscanf(line, "%7[^\t]\t%u\t%63[^\t]\t%d\t%llu\t%llu", kind, &th, nm, &dev, &t0,
               &bytes) == 6 && !strcmp(kind, "M") && !strcmp(nm, c->name)) {
        c->n++;
        c->zero += bytes == 0;
    }
}

/* Memory records named `name` in the session's raw trace under dir (raw/prof_*.tsv:
 * "M<TAB>thread<TAB>name<TAB>device<TAB>t0<TAB>bytes..."); *zero counts those of 0 bytes. */
static int mem_records(const char *dir, const char *name, int *zero)
{
    mem_count c = {.name = name};
    prof_raw_lines(dir, mem_line, &c);
    *zero = c.zero;
    return c.n;
}

/* pool.c hwi_pool_empty_cache: the release event goes to the observer (the profiler's
 * memory curve) only when something was released (`released > 0`); with `>= 0` an
 * empty_cache that gave nothing back recorded a release of 0 bytes. */
static void empty_cache_release_event(void)
{
    TEST_CASE("an empty_cache that releases nothing records no release");
    char dir[] = "/tmp/hwrt-mutants2025-XXXXXX";
    EXPECT(mkdtemp(dir) != NULL);
    OK(hwrt_set_device("sim", 0));
    void *p;
    OK(hwrt_malloc(&p, 4 * MiB));
    OK(hwrt_free(p));
    OK(hwrt_empty_cache(0));                 /* nothing cached from here on */
    OK(hwrt_profiler_start(dir));
    OK(hwrt_empty_cache(0));
    OK(hwrt_empty_cache(0));
    OK(hwrt_malloc(&p, 4 * MiB));
    OK(hwrt_free(p));
    OK(hwrt_empty_cache(0));                 /* this one gives a segment back */
    OK(hwrt_profiler_stop());
    int zero = 0;
    EXPECT(mem_records(dir, "release", &zero) == 1);
    EXPECT(zero == 0);
    EXPECT(mem_records(dir, "alloc", &zero) == 1);
    OK(hwrt_shutdown());
    remove_tree(dir);
}

/* sim_fault.c copy_dir: an injected copy fault's sentence names the copy's direction
 * (the mutant `kind == HWRT_MEMCPY_DEVICE_TO_HOST` made `!=` called a D2H copy "H2H" and a
 * D2D copy "D2H"). Each direction in a session of its own, the first copy faulting. */
static void copy_fault_names_direction(void)
{
    TEST_CASE("a copy fault names the copy's direction");
    static unsigned char host[4096];
    const struct { hwrt_memcpy_kind kind; const char *want; } dirs[] = {
        {HWRT_MEMCPY_HOST_TO_DEVICE, "H2D copy of 4096 bytes failed"},
        {HWRT_MEMCPY_DEVICE_TO_HOST, "D2H copy of 4096 bytes failed"},
        {HWRT_MEMCPY_DEVICE_TO_DEVICE, "D2D copy of 4096 bytes failed"},
    };
    for (int i = 0; i < 3; i++) {
        setenv("HWRT_SIM_FAULTS", "copy:nth=1", 1);
        OK(hwrt_set_device("sim", 0));
        void *a, *b;
        OK(hwrt_malloc(&a, sizeof host));
        OK(hwrt_malloc(&b, sizeof host));
        void *dst = dirs[i].kind == HWRT_MEMCPY_DEVICE_TO_HOST ? (void *)host : a;
        const void *src = dirs[i].kind == HWRT_MEMCPY_HOST_TO_DEVICE ? (const void *)host : b;
        FAILS(hwrt_memcpy(dst, src, sizeof host, dirs[i].kind), HWRT_ERROR_DEVICE_FAULT,
              dirs[i].want);
        OK(hwrt_device_reset(0));
        OK(hwrt_free(a));
        OK(hwrt_free(b));
        OK(hwrt_shutdown());
        unsetenv("HWRT_SIM_FAULTS");
    }
}

/* runtime.c probe: "reports no device" is the reason of a backend whose driver loaded
 * and found no device; the mutant `&& !reason[0]` made `|| !reason[0]` gave an available
 * backend with devices that reason (hwrt_backend_desc.reason is "" when available). */
static void available_backend_has_no_reason(void)
{
    TEST_CASE("an available backend reports no reason");
    hwrt_backend_desc info;
    OK(hwrt_backend_info("sim", &info));
    EXPECT(info.available && info.device_count > 0);
    if (info.reason[0]) fprintf(stderr, "  reason: %s\n", info.reason);
    EXPECT(info.reason[0] == 0);
}

/* runtime.c hwrt_shutdown: the first device's error is the one reported (the mutant
 * `st != SUCCESS && first == SUCCESS` made `||` let device 1's later error replace
 * device 0's). A sticky kernel fault on each of the two sim devices, left unreset. */
static void shutdown_keeps_first_error(void)
{
    TEST_CASE("shutdown reports the first device's fault");
    setenv("HWRT_SIM_FAULTS", "kernel:nth=1:dev=0,kernel:nth=1:dev=1", 1);
    int64_t shape[1] = {16};
    for (int dev = 0; dev < 2; dev++) {
        OK(hwrt_set_device("sim", dev));
        hwrt_tensor t;
        OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
        OK(hwrt_op_fill(t, 1.0, NULL));
        OK(hwrt_tensor_release(t));
    }
    FAILS(hwrt_shutdown(), HWRT_ERROR_DEVICE_FAULT, "kernel:nth=1:dev=0");
    EXPECT(!strstr(hwrt_last_error(), "dev=1"));
    unsetenv("HWRT_SIM_FAULTS");
    OK(hwrt_shutdown());
}

/* res_fetch.c hwi_res_fetch: a disk fetch whose H2D copy faults reports that copy's
 * fault (the mutant `st == SUCCESS && !t->data` made `!=` replaced it with the generic
 * "did not complete"). Copy #1 uploads, #2 evicts, #3 (the fetch) faults. */
static void disk_fetch_fault_names_copy(void)
{
    TEST_CASE("a disk fetch whose copy faults names the copy");
    char dir[] = "/tmp/hwrt-mutants2025-XXXXXX";
    EXPECT(mkdtemp(dir) != NULL);
    setenv("HWRT_SIM_FAULTS", "copy:nth=3", 1);
    OK(hwrt_set_device("sim", 0));
    hwrt_offload_config c = {.enabled = 1, .max_device_memory = 16 * MiB,
                             .offload_cpu_size = 0, .offload_disk_size = 64 * MiB,
                             .offload_path = dir, .enable_pinned_mem = 1};
    OK(hwrt_set_offload_config(&c));
    enum { N = 512 * 1024 };
    static float buf[N];
    int64_t shape[1] = {N};
    for (int i = 0; i < N; i++) buf[i] = (float)i;
    hwrt_tensor a, y;
    OK(hwrt_tensor_from_host(&a, HWRT_FLOAT32, 1, shape, buf));
    OK(hwrt_tensor_set_offloadable(a, 1));
    OK(hwrt_offload_evict(a));
    OK(hwrt_tensor_empty(&y, HWRT_FLOAT32, 1, shape));
    FAILS(hwrt_op_scale(y, a, 1.0, NULL), HWRT_ERROR_DEVICE_FAULT, "H2D copy of 2097152 bytes");
    OK(hwrt_device_reset(0));
    OK(hwrt_op_scale(y, a, 1.0, NULL));
    memset(buf, 0, sizeof buf);
    OK(hwrt_tensor_copy_to_host(y, buf, sizeof buf));
    EXPECT(buf[1000] == 1000.0f && buf[N - 1] == (float)(N - 1));
    OK(hwrt_tensor_release(a));
    OK(hwrt_tensor_release(y));
    OK(hwrt_shutdown());
    unsetenv("HWRT_SIM_FAULTS");
    remove_tree(dir);
}

int main(void)
{
    empty_cache_release_event();
    copy_fault_names_direction();
    available_backend_has_no_reason();
    shutdown_keeps_first_error();
    disk_fetch_fault_names_copy();
    return test_report();
}
