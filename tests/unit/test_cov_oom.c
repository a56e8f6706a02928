/* Host out of memory at every allocation libhwrt makes in a workload (issue 25 item 3):
 * streams, events, tensors and kernels, the pool (sync and stream-ordered), pinned host
 * memory, a captured graph and its launch, DLPack export, the memory summary and
 * snapshot, the device-wide view (hwrt_smi_query), the profiler, allocation sites, and
 * offload to a host and a disk tier (eviction, prefetch, fetch back).
 *
 * On the backend argv[1] names (default sim; CTest runs it on opencl too). With argv[2]
 * "cl" (opencl only), the k-th OpenCL call the backend makes fails instead (fail_cl.c, a
 * forwarding ICD loader named by HWRT_OPENCL_LIBRARY, FAIL_CL_NTH=k), as a driver under
 * pressure does: the same rules hold.
 * The test runs itself once per allocation: child k has the k-th malloc/calloc/realloc
 * that libhwrt.so makes fail (fail_malloc.c, LD_PRELOAD, HWRT_FAIL_MALLOC_NTH=k). In the
 * child, every call either succeeds with the right data or fails with a status and a
 * sentence (never a crash, a hang, a success with wrong data or an empty sentence); then,
 * the failure spent, the same workload runs again in the same process after
 * hwrt_shutdown and must succeed in full: one failed allocation leaves nothing broken.
 * The sweep stops at the count a child with no failure reports; at least one child must
 * have seen HWRT_ERROR_HOST_OUT_OF_MEMORY. */
#define _GNU_SOURCE
#include "harness.h"
#include "harness_files.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#if !defined(FAIL_MALLOC_LIB) || !defined(FAIL_CL_LIB)
#error "FAIL_MALLOC_LIB and FAIL_CL_LIB (the injectors' paths) must be defined"
#endif

static const char *backend = "sim";     /* argv[1]: the backend the workload runs on */
static int cl_mode;                     /* argv[2] "cl": OpenCL calls fail, not allocations */
static int host_oom_seen;               /* a call failed as injected (cl mode: any failure) */
static char snap_path[256], prof_dir[256];
enum { OFF_BYTES = 256 * 1024 };              /* each offloaded tensor */

static int host_ran;
static void host_fn(void *arg) { *(int *)arg += 1; }

/* 0: every call succeeded with the right data; 1: a call failed cleanly (status and a
 * sentence); 2: something is wrong (printed). */
static int workload(void)
{
    int rc = 0;
    hwrt_stream s = NULL, s2 = NULL;
    hwrt_event e0 = NULL, e1 = NULL;
    hwrt_tensor a = NULL, b = NULL, c = NULL, r = NULL;
    hwrt_graph g = NULL;
    void *d = NULL, *da = NULL, *h = NULL;
    DLManagedTensorVersioned *dl = NULL;
    hwrt_tensor off[4] = {NULL, NULL, NULL, NULL};
    int offload_on = 0, sync_on = 0;
    hwrt_group grp = NULL;
    int64_t shape[2] = {8, 8};
    float v[64];
#define STEP(call)                                                                        \
    do {                                                                                  \
        hwrt_status st_ = (call);                                                         \
        if (st_ != HWRT_SUCCESS) {                                                        \
            if (st_ == HWRT_ERROR_HOST_OUT_OF_MEMORY || cl_mode) host_oom_seen = 1;       \
            if (!hwrt_last_error()[0]) {                                                  \
                fprintf(stderr, "%s -> %s with no sentence\n", #call, hwrt_status_name(st_)); \
                rc = 2;                                                                   \
            } else {                                                                      \
                fprintf(stderr, "%s -> %s: %s\n", #call, hwrt_status_name(st_),          \
                        hwrt_last_error());                                               \
                rc = 1;                                                                   \
            }                                                                             \
            goto out;                                                                     \
        }                                                                                 \
    } while (0)
#define CHECK_DATA(cond)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "wrong data: %s\n", #cond);                                   \
            rc = 2;                                                                       \
            goto out;                                                                     \
        }                                                                                 \
    } while (0)
    host_ran = 0;
    STEP(hwrt_set_device(backend, 0));
    STEP(hwrt_stream_create(&s, 0));
    STEP(hwrt_event_create(&e0, 0));
    STEP(hwrt_event_create(&e1, 0));
    STEP(hwrt_tensor_empty(&a, HWRT_FLOAT32, 2, shape));
    STEP(hwrt_tensor_empty(&b, HWRT_FLOAT32, 2, shape));
    STEP(hwrt_tensor_empty(&c, HWRT_FLOAT32, 2, shape));
    STEP(hwrt_event_record(e0, s));
    STEP(hwrt_op_fill(a, 2.0, s));
    STEP(hwrt_op_fill(b, 3.0, s));
    STEP(hwrt_op_matmul(c, a, b, s));          /* 8 * 2 * 3 = 48 */
    STEP(hwrt_event_record(e1, s));
    STEP(hwrt_event_synchronize(e1));
    STEP(hwrt_tensor_copy_to_host(c, v, sizeof v));
    CHECK_DATA(v[0] == 48.0f && v[63] == 48.0f);

    /* the pool: synchronous and stream-ordered, pinned host memory, a copy through it */
    STEP(hwrt_malloc(&d, 4096));
    STEP(hwrt_malloc_async(&da, 1 << 20, s));
    STEP(hwrt_set_alloc_tag(da, "oom-sweep"));
    STEP(hwrt_host_alloc(&h, 4096, HWRT_HOST_PINNED));
    memset(h, 0x5a, 4096);
    STEP(hwrt_memcpy_async(da, h, 4096, HWRT_MEMCPY_HOST_TO_DEVICE, s));
    STEP(hwrt_memset_async(d, 0, 4096, s));
    STEP(hwrt_memcpy_async(d, da, 4096, HWRT_MEMCPY_DEVICE_TO_DEVICE, s));
    STEP(hwrt_stream_synchronize(s));
    memset(h, 0, 4096);
    STEP(hwrt_memcpy(h, d, 4096, HWRT_MEMCPY_DEVICE_TO_HOST));
    CHECK_DATA(((unsigned char *)h)[0] == 0x5a && ((unsigned char *)h)[4095] == 0x5a);
    STEP(hwrt_free_async(da, s));
    da = NULL;

    /* a captured graph of 70 kernels, an event recorded and waited for, a pinned copy and
     * a memset; a stream outside the capture may not wait for the captured record; the
     * graph launched twice */
    STEP(hwrt_stream_create(&s2, 0));
    STEP(hwrt_stream_begin_capture(s));
    hwrt_status cst = HWRT_SUCCESS;
    for (int i = 0; i < 70 && cst == HWRT_SUCCESS; i++) cst = hwrt_op_scale(c, a, 5.0, s);
    if (cst == HWRT_SUCCESS) cst = hwrt_event_record(e0, s);
    if (cst == HWRT_SUCCESS) cst = hwrt_stream_wait_event(s, e0);
    if (cst == HWRT_SUCCESS) cst = hwrt_memcpy_async(d, h, 4096, HWRT_MEMCPY_HOST_TO_DEVICE, s);
    if (cst == HWRT_SUCCESS) cst = hwrt_memset_async(d, 0x11, 16, s);
    if (cst == HWRT_SUCCESS) {
        hwrt_status wst = hwrt_stream_wait_event(s2, e0);
        /* (the sentence's own buffer may be the allocation that fails: then it says so) */
        const char *why = hwrt_last_error();
        if (wst != HWRT_ERROR_NOT_PERMITTED ||
            (!strstr(why, "inside the graph") && !strstr(why, "the host is out of memory"))) {
            fprintf(stderr, "waiting outside the capture: %s: %s\n", hwrt_status_name(wst),
                    hwrt_last_error());
            rc = 2;
        }
    }
    hwrt_graph cg = NULL;
    hwrt_status est = hwrt_stream_end_capture(s, &cg);   /* ends the capture either way */
    g = cg;
    STEP(cst);
    STEP(est);
    size_t nodes = 0;
    STEP(hwrt_graph_node_count(g, &nodes));
    CHECK_DATA(nodes == 74);
    STEP(hwrt_graph_launch(g, s));
    STEP(hwrt_graph_launch(g, s));
    STEP(hwrt_stream_synchronize(s));
    STEP(hwrt_tensor_copy_to_host(c, v, sizeof v));
    CHECK_DATA(v[0] == 10.0f && v[63] == 10.0f);
    unsigned char chk[32];
    STEP(hwrt_memcpy(chk, d, sizeof chk, HWRT_MEMCPY_DEVICE_TO_HOST));
    CHECK_DATA(chk[0] == 0x11 && chk[15] == 0x11 && chk[16] == 0x5a && chk[31] == 0x5a);

    /* DLPack export, memory reports, profiler, device-wide view */
    STEP(hwrt_tensor_to_dlpack(b, &dl));
    CHECK_DATA(dl && dl->dl_tensor.ndim == 2 && dl->dl_tensor.shape[1] == 8);
    dl->deleter(dl);
    dl = NULL;
    char summary[4096];
    STEP(hwrt_memory_summary(0, summary, sizeof summary));
    CHECK_DATA(strlen(summary) > 0);
    STEP(hwrt_memory_snapshot(0, snap_path));
    hwrt_mem_stats ms;
    STEP(hwrt_memory_stats(0, &ms));
    CHECK_DATA(ms.allocated_bytes.current >= 4096 && ms.allocation.current >= 4);
    if (!strcmp(backend, "sim")) {             /* the device-wide view of the sim */
        hwrt_smi_snapshot snap;
        STEP(hwrt_smi_query("sim", 0, &snap));
        CHECK_DATA(snap.ndevices >= 1);
    }
    STEP(hwrt_empty_cache(0));

    /* timing events, a host function, a collective on the single-process world and on a
     * group of it, with the sync checker on */
    STEP(hwrt_set_config("check_sync", "true"));
    sync_on = 1;
    float elapsed = -1;
    STEP(hwrt_event_record(e0, s));
    STEP(hwrt_launch_host_func(s, host_fn, &host_ran));
    STEP(hwrt_op_add(c, a, b, s));
    STEP(hwrt_event_record(e1, s));
    STEP(hwrt_event_synchronize(e1));
    STEP(hwrt_event_elapsed_ms(&elapsed, e0, e1));
    CHECK_DATA(elapsed >= 0 && host_ran == 1);
    host_ran = 0;
    STEP(hwrt_allreduce(c, HWRT_REDUCE_SUM, s));
    STEP(hwrt_broadcast(c, 0, s));
    int world[1] = {0};
    STEP(hwrt_group_create(world, 1, &grp));
    STEP(hwrt_group_allreduce(grp, c, HWRT_REDUCE_MAX, s));
    STEP(hwrt_allgather(b, c, s));
    STEP(hwrt_stream_synchronize(s));
    STEP(hwrt_tensor_copy_to_host(b, v, sizeof v));
    CHECK_DATA(v[0] == 5.0f && v[63] == 5.0f);
    STEP(hwrt_group_destroy(grp));
    grp = NULL;
    STEP(hwrt_set_config("check_sync", "false"));
    sync_on = 0;

    /* the profiler over a few ops, and the allocation sites in a snapshot */
    STEP(hwrt_set_config("record_alloc_sites", "true"));
    STEP(hwrt_profiler_start(prof_dir));
    int64_t rs[1] = {8};
    hwrt_status pst = hwrt_tensor_empty(&r, HWRT_FLOAT32, 1, rs);
    if (pst == HWRT_SUCCESS) pst = hwrt_op_relu(c, a, s);
    if (pst == HWRT_SUCCESS) pst = hwrt_op_sum(r, a, 0, s);
    if (pst == HWRT_SUCCESS) pst = hwrt_stream_synchronize(s);
    hwrt_status sst = hwrt_profiler_stop();      /* stops either way */
    STEP(pst);
    STEP(sst);
    STEP(hwrt_tensor_copy_to_host(r, v, 8 * sizeof(float)));
    CHECK_DATA(v[0] == 16.0f && v[7] == 16.0f);
    hwrt_profiler_stats ps;
    STEP(hwrt_profiler_get_stats(&ps));
    CHECK_DATA(!ps.running && ps.events >= 2);
    STEP(hwrt_memory_snapshot(0, snap_path));
    STEP(hwrt_set_config("record_alloc_sites", "false"));

    /* offload: a device budget of two tensors for four, a host and a disk tier; each
     * tensor evicted and fetched back with its own values */
    {
        hwrt_offload_config oc = {.enabled = 1, .max_device_memory = 2 * OFF_BYTES + OFF_BYTES / 2,
                                  .offload_cpu_size = OFF_BYTES + OFF_BYTES / 2,
                                  .offload_disk_size = 8 * OFF_BYTES, .offload_path = "/tmp",
                                  .enable_pinned_mem = 1, .prefetch_depth = 2};
        STEP(hwrt_set_offload_config(&oc));
        offload_on = 1;
        int64_t os[1] = {OFF_BYTES / 4};
        for (int i = 0; i < 4; i++) {
            STEP(hwrt_tensor_empty(&off[i], HWRT_FLOAT32, 1, os));
            STEP(hwrt_tensor_set_offloadable(off[i], 1));
            STEP(hwrt_op_fill(off[i], 10.0 + i, s));
            STEP(hwrt_stream_synchronize(s));
        }
        STEP(hwrt_offload_evict(off[0]));
        STEP(hwrt_offload_prefetch(off[0], s));
        STEP(hwrt_offload_step());
        for (int i = 3; i >= 0; i--) {
            float x[2];
            STEP(hwrt_op_scale(off[i], off[i], 1.0, s));      /* used on the device */
            STEP(hwrt_stream_synchronize(s));
            static float back[OFF_BYTES / 4];
            STEP(hwrt_tensor_copy_to_host(off[i], back, sizeof back));
            x[0] = back[0];
            x[1] = back[OFF_BYTES / 4 - 1];
            CHECK_DATA(x[0] == 10.0f + i && x[1] == 10.0f + i);
        }
        /* again without waiting: the victims are busy and hand their blocks over in
         * stream order; never more on the device than the budget */
        for (int i = 3; i >= 0; i--) STEP(hwrt_op_scale(off[i], off[i], 2.0, s));
        STEP(hwrt_stream_synchronize(s));
        for (int i = 0; i < 4; i++) {
            static float back[OFF_BYTES / 4];
            STEP(hwrt_tensor_copy_to_host(off[i], back, sizeof back));
            CHECK_DATA(back[0] == 2 * (10.0f + i) && back[OFF_BYTES / 4 - 1] == 2 * (10.0f + i));
        }
        hwrt_offload_stats ost;
        STEP(hwrt_offload_stats_get(&ost));
        CHECK_DATA(ost.device_bytes <= ost.device_budget);
        CHECK_DATA(ost.evictions_to_host + ost.evictions_to_disk + ost.clean_evictions > 0);
    }
out:
    if (grp) hwrt_group_destroy(grp);
    if (sync_on) hwrt_set_config("check_sync", "false");
    for (int i = 0; i < 4; i++)
        if (off[i]) hwrt_tensor_release(off[i]);
    if (offload_on) {
        hwrt_offload_config oc = {.enabled = 0, .offload_path = "/tmp", .enable_pinned_mem = 1,
                                  .prefetch_depth = 2};
        if (hwrt_set_offload_config(&oc) != HWRT_SUCCESS) {
            fprintf(stderr, "turning offload off: %s\n", hwrt_last_error());
            rc = 2;
        }
    }
    hwrt_set_config("record_alloc_sites", "false");
    if (dl) dl->deleter(dl);
    if (g) hwrt_graph_destroy(g);
    if (h) hwrt_host_free(h);
    if (da) hwrt_free(da);
    if (d) hwrt_free(d);
    if (a) hwrt_tensor_release(a);
    if (b) hwrt_tensor_release(b);
    if (c) hwrt_tensor_release(c);
    if (r) hwrt_tensor_release(r);
    if (e0) hwrt_event_destroy(e0);
    if (e1) hwrt_event_destroy(e1);
    if (s) {
        hwrt_stream_synchronize(s);
        hwrt_stream_destroy(s);
    }
    if (s2) hwrt_stream_destroy(s2);
    hwrt_shutdown();
    /* the pinned buffer went back to the system, cached or not (the seed-3011 mutant of
     * host_mem.c to_cache, `return 0` made `return 1` where the cache cannot grow, lost
     * it still mapped and locked); on the sim its pages are hwrt's own mapping (OpenCL's
     * come from the driver's allocator, which may keep them) */
    unsigned char vec[1];
    if (h && !strcmp(backend, "sim") && !(mincore(h, 4096, vec) != 0 && errno == ENOMEM)) {
        fprintf(stderr, "the pinned buffer %p is still mapped after hwrt_host_free and "
                "hwrt_shutdown\n", h);
        rc = 2;
    }
    return rc;
#undef STEP
#undef CHECK_DATA
}

/* The injector's count of calls so far: fail_malloc.so (preloaded) or fail_cl.so (loaded
 * by the OpenCL backend as its ICD loader). */
static long injected_calls(void)
{
    long (*calls)(void) = NULL;
    if (!cl_mode) {
        calls = (long (*)(void))dlsym(RTLD_DEFAULT, "fail_malloc_calls");
    } else {
        void *h = dlopen(FAIL_CL_LIB, RTLD_NOW | RTLD_NOLOAD);
        if (h) calls = (long (*)(void))dlsym(h, "fail_cl_calls");
    }
    if (!calls) {
        fprintf(stderr, "the injector %s is not loaded\n", cl_mode ? FAIL_CL_LIB : FAIL_MALLOC_LIB);
        return -1;
    }
    return calls();
}

static int child(void)
{
    alarm(30);                               /* a hang fails the child */
    long k = atol(getenv(cl_mode ? "FAIL_CL_NTH" : "HWRT_FAIL_MALLOC_NTH"));
    int first = workload();
    long c1 = injected_calls();
    if (c1 < 0) return 1;
    int second = workload();
    fprintf(stderr, "child: first-run calls %ld\n", c1);
    /* the call counted k may come in the second run (threads make the count vary a
     * little): then that run is the one allowed a clean failure */
    int ok2 = k <= c1 ? second == 0 : second != 2;
    if (!ok2) fprintf(stderr, "the workload after the failure: %d (want 0)\n", second);
    return first == 2 || !ok2 ? 1 : (host_oom_seen ? 3 : 0);
}

/* Child k runs with its own sim registry (several run at once, and the machine's default
 * registry is other programs' too) and its own stderr file. */
typedef struct { pid_t pid; long k; char err[96], reg[96]; } kid;

static int spawn_child(const char *self, long k, kid *c)
{
    char nth[64], pre[512], who[64], regenv[128];
    if (cl_mode) {
        snprintf(nth, sizeof nth, "FAIL_CL_NTH=%ld", k);
        snprintf(pre, sizeof pre, "HWRT_OPENCL_LIBRARY=%s", FAIL_CL_LIB);
    } else {
        snprintf(nth, sizeof nth, "HWRT_FAIL_MALLOC_NTH=%ld", k);
        snprintf(pre, sizeof pre, "LD_PRELOAD=%s", FAIL_MALLOC_LIB);
    }
    c->k = k;
    snprintf(c->err, sizeof c->err, "/tmp/hwrt-oom-sweep-%d-%ld.err", (int)getpid(), k);
    snprintf(c->reg, sizeof c->reg, "hwrt-oom-sweep-%d-%ld", (int)getpid(), k);
    snprintf(regenv, sizeof regenv, "HWRT_SIM_REGISTRY=%s", c->reg);
    snprintf(who, sizeof who, "HWRT_OOM_SWEEP_CHILD=%s", backend);
    char *env[256];
    int n = 0;
    for (char **p = environ; *p && n < 250; p++)
        if (strncmp(*p, "HWRT_FAIL_MALLOC_NTH=", 21) && strncmp(*p, "LD_PRELOAD=", 11) &&
            strncmp(*p, "FAIL_CL_NTH=", 12) && strncmp(*p, "HWRT_OPENCL_LIBRARY=", 20) &&
            strncmp(*p, "HWRT_SIM_REGISTRY=", 18))
            env[n++] = *p;
    env[n++] = nth;
    env[n++] = pre;
    env[n++] = who;
    env[n++] = regenv;
    env[n] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, c->err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    char *argv[] = {(char *)self, (char *)backend, cl_mode ? "cl" : NULL, NULL};
    int e = posix_spawn(&c->pid, self, &fa, NULL, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    return e ? -1 : 0;
}

/* Child c ended with wait status ws: its exit code (-signal if killed), and the count of
 * calls the injector saw when asked (k = 0). Its files go. */
static int finish_child(kid *c, int ws, long *count)
{
    int code = WIFEXITED(ws) ? WEXITSTATUS(ws) : -WTERMSIG(ws);
    FILE *f = fopen(c->err, "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        long n;
        if (count && sscanf(line, "child: first-run calls %ld", &n) == 1) *count = n;
        if (code == 1 || code < 0) fprintf(stderr, "  child %ld: %s", c->k, line);
    }
    if (f) fclose(f);
    unlink(c->err);
    char shm[160];
    snprintf(shm, sizeof shm, "/dev/shm/%s-v3", c->reg);      /* REG_VERSION 3 */
    unlink(shm);
    return code;
}

int main(int argc, char **argv)
{
    snprintf(snap_path, sizeof snap_path, "/tmp/hwrt-oom-sweep-%d.json", (int)getpid());
    snprintf(prof_dir, sizeof prof_dir, "/tmp/hwrt-oom-sweep-%d.prof", (int)getpid());
    if (argc > 1) backend = argv[1];
    cl_mode = argc > 2 && !strcmp(argv[2], "cl");
    if (getenv("HWRT_OOM_SWEEP_CHILD")) {
        int rc = child();
        unlink(snap_path);
        if (remove_tree(prof_dir) != 0) rc = 1;
        return rc;
    }
    TEST_CASE("the workload without a failure");
    long total = -1;
    kid first;
    int ws = 0;
    EXPECT(spawn_child(argv[0], 0, &first) == 0);
    waitpid(first.pid, &ws, 0);
    EXPECT(finish_child(&first, ws, &total) == 0);
    printf("libhwrt made %ld %s in the workload\n", total,
           cl_mode ? "OpenCL calls (counted)" : "host allocations");
    EXPECT(total > 50);

    TEST_CASE(cl_mode ? "OpenCL calls fail once" : "each allocation fails once");
    long limit = total > 0 ? total : 0, children = 0;
    /* every allocation; OpenCL calls (over a thousand: the graph's launches repeat the
     * same call sites) every one of the first 40 (device and stream setup), then a
     * sample of about 150 evenly spread */
    long step = cl_mode && limit > 190 ? (limit - 40) / 150 : 1;
    int oom_children = 0, bad = 0, running = 0;
    enum { AT_ONCE = 4 };                  /* children mostly wait (PoCL starting): 4 at once */
    kid kids[AT_ONCE];
    long k = 1;
    while (k <= limit || running) {
        if (k <= limit && running < AT_ONCE) {
            if (spawn_child(argv[0], k, &kids[running]) == 0) running++;
            else bad++;
            children++;
            k += k <= 40 ? 1 : step;
            continue;
        }
        pid_t pid = waitpid(-1, &ws, 0);
        int i = 0;
        while (i < running && kids[i].pid != pid) i++;
        if (i == running) continue;            /* not one of ours */
        int code = finish_child(&kids[i], ws, NULL);
        if (code == 3) oom_children++;
        else if (code != 0) {
            fprintf(stderr, "FAIL: with call %ld failing the child exited %d\n", kids[i].k, code);
            bad++;
        }
        kids[i] = kids[--running];
    }
    printf("%ld children: %d saw %s, %d failed\n", children, oom_children,
           cl_mode ? "a call fail cleanly" : "HWRT_ERROR_HOST_OUT_OF_MEMORY", bad);
    EXPECT(bad == 0);
    EXPECT(oom_children > 0);
    return test_report();
}
