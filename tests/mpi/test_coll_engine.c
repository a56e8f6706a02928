/* The collective engine's selection and NCCL's unique-id exchange, without a GPU. One
 * program, one scenario per argv[1]:
 *   decide      (one process) the verdict from ranks' votes, and this rank's vote with
 *               the cuda backend when NCCL cannot be loaded (HWRT_NCCL_LIBRARY) and when it can
 *   badvalue    (one process) HWRT_COLL_ENGINE=bogus: hwrt_dist_init fails, naming it
 *   forcednccl1 (one process) HWRT_COLL_ENGINE=nccl on sim: the collective fails, saying why
 * under mpirun (sim backend):
 *   auto        collectives run on MPI; the log says why NCCL was not chosen
 *   forcedmpi   HWRT_COLL_ENGINE=mpi: MPI, the log says so
 *   forcednccl  HWRT_COLL_ENGINE=nccl: the first collective fails on every rank with the
 *               reason, the tensor is left as it was, and nothing hangs
 *   mixed       rank 0 mpi, rank 1 nccl: every rank fails, naming both
 *   uniqueid    real ncclGetUniqueId on rank 0 (NCCL makes ids without a GPU), broadcast
 *               over the MPI plugin: every rank holds the same, non-zero id
 *   uniqueid_fail  HWRT_NCCL_LIBRARY=/nonexistent on rank 1 only: every rank fails
 *               naming rank 1 and the path
 *   uniqueid_localfail  rank 1 reports a failure of its own: every rank fails with it
 *   forcedhccl  HWRT_COLL_ENGINE=hccl on sim: every rank fails with the reason
 *   rootinfo    HCCL's root info made on rank 0 by a stand-in libhccl.so (fake_hccl.c:
 *               no device, random bytes) and broadcast over the MPI plugin: every rank
 *               holds the same 4108 bytes; a second exchange gives new ones
 *   rootinfo_fail  HWRT_HCCL_LIBRARY=/nonexistent on rank 1 only: every rank fails
 *               naming rank 1 and the path
 * Each process prints "N passed, M failed" and exits non-zero on any failure. */
#include "harness.h"
#include "distributed/coll_select.h"
#include "distributed/hccl_engine.h"
#include "distributed/nccl_engine.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

static int rank, size;

/* Run fn with stderr captured; returns what it wrote (caller frees). */
static char *captured(void (*fn)(void))
{
    char path[] = "/tmp/hwrt-coll-engine-XXXXXX";
    int fd = mkstemp(path);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    fn();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    off_t n = lseek(fd, 0, SEEK_END);
    char *buf = calloc(1, (size_t)n + 1);
    if (pread(fd, buf, (size_t)n, 0) < 0) buf[0] = 0;
    close(fd);
    unlink(path);
    fputs(buf, stderr);            /* still shown in the test's log */
    return buf;
}

static hwrt_status last_st;

static void one_allreduce(void)
{
    float v[4] = {1, 2, 3, (float)rank};
    int64_t shape[1] = {4};
    hwrt_tensor t = NULL;
    OK(hwrt_tensor_from_host(&t, HWRT_FLOAT32, 1, shape, v));
    last_st = hwrt_allreduce(t, HWRT_REDUCE_SUM, NULL);
    float out[4];
    OK(hwrt_tensor_copy_to_host(t, out, sizeof out));
    if (last_st == HWRT_SUCCESS) {
        EXPECT(out[0] == size && out[1] == 2 * size && out[2] == 3 * size);
        EXPECT(out[3] == (float)(size * (size - 1) / 2));
    } else {
        EXPECT(out[0] == 1 && out[1] == 2 && out[2] == 3 && out[3] == (float)rank);  /* intact */
    }
    OK(hwrt_tensor_release(t));
}

static void scenario_engine(const char *want_log, hwrt_status want_st, const char *want_err)
{
    OK(hwrt_dist_init());
    rank = hwrt_dist_rank();
    size = hwrt_dist_size();
    OK(hwrt_dist_bind_device("sim"));
    char *log = captured(one_allreduce);
    EXPECT(last_st == want_st);
    if (want_err) EXPECT(last_st != HWRT_SUCCESS && strstr(hwrt_last_error(), want_err) != NULL);
    if (want_err && !strstr(hwrt_last_error(), want_err)) fprintf(stderr, "error: %s\n", hwrt_last_error());
    if (want_log) EXPECT(strstr(log, want_log) != NULL);
    free(log);
    if (want_st != HWRT_SUCCESS) {
        /* the same verdict again, at once: no rank is left inside a collective */
        one_allreduce();
        EXPECT(last_st == want_st);
    }
    OK(hwrt_barrier());
    OK(hwrt_dist_finalize());
}

static void decide(const char *real_nccl)
{
    TEST_CASE("decide");
    hwi_coll_vote v[3];
    int use = -1;
    char msg[512];
    memset(v, 0, sizeof v);
    for (int i = 0; i < 3; i++) {
        v[i].can = 1;
        v[i].dev = HWI_COLL_NCCL;
    }
    OK(hwi_coll_decide(v, 3, &use, msg, sizeof msg));
    EXPECT(use == HWI_COLL_NCCL && strstr(msg, "nccl (auto: every rank has NCCL on a cuda device)"));
    v[2].can = 0;
    snprintf(v[2].why, sizeof v[2].why, "no libnccl here");
    OK(hwi_coll_decide(v, 3, &use, msg, sizeof msg));
    EXPECT(use == HWI_COLL_MPI && strstr(msg, "rank 2 of 3 cannot run NCCL: no libnccl here"));
    v[0].want = HWI_COLL_NCCL;
    FAILS(hwi_coll_decide(v, 3, &use, msg, sizeof msg), HWRT_ERROR_UNAVAILABLE,
          "HWRT_COLL_ENGINE=nccl, but rank 2 of 3 cannot run NCCL: no libnccl here");
    v[1].want = HWI_COLL_MPI;
    FAILS(hwi_coll_decide(v, 3, &use, msg, sizeof msg), HWRT_ERROR_INVALID_ARGUMENT,
          "rank 1 sets HWRT_COLL_ENGINE=mpi but rank 0 sets nccl");
    v[0].want = HWI_COLL_AUTO;
    OK(hwi_coll_decide(v, 3, &use, msg, sizeof msg));
    EXPECT(use == HWI_COLL_MPI && strstr(msg, "HWRT_COLL_ENGINE=mpi on rank 1"));

    TEST_CASE("decide_hccl");
    memset(v, 0, sizeof v);
    for (int i = 0; i < 3; i++) {
        v[i].can = 1;
        v[i].dev = HWI_COLL_HCCL;
    }
    OK(hwi_coll_decide(v, 3, &use, msg, sizeof msg));
    EXPECT(use == HWI_COLL_HCCL && strstr(msg, "hccl (auto: every rank has HCCL on an ascend device)"));
    v[1].want = HWI_COLL_HCCL;
    OK(hwi_coll_decide(v, 3, &use, msg, sizeof msg));
    EXPECT(use == HWI_COLL_HCCL && strstr(msg, "hccl (HWRT_COLL_ENGINE=hccl"));
    v[2].want = HWI_COLL_NCCL;      /* two device engines required */
    FAILS(hwi_coll_decide(v, 3, &use, msg, sizeof msg), HWRT_ERROR_INVALID_ARGUMENT,
          "rank 1 sets HWRT_COLL_ENGINE=hccl but rank 2 sets nccl");
    v[2].want = HWI_COLL_AUTO;
    v[0].can = 0;
    snprintf(v[0].why, sizeof v[0].why, "HCCL could not be loaded: no libhccl.so here");
    FAILS(hwi_coll_decide(v, 3, &use, msg, sizeof msg), HWRT_ERROR_UNAVAILABLE,
          "HWRT_COLL_ENGINE=hccl, but rank 0 of 3 cannot run HCCL: HCCL could not be loaded");
    v[1].want = HWI_COLL_AUTO;       /* auto: falls back to MPI, saying why */
    OK(hwi_coll_decide(v, 3, &use, msg, sizeof msg));
    EXPECT(use == HWI_COLL_MPI && strstr(msg, "mpi (auto: rank 0 of 3 cannot run HCCL: HCCL could "
                                              "not be loaded: no libhccl.so here)"));
    v[0].can = 1;                    /* every rank can, but on two backends */
    v[2].dev = HWI_COLL_NCCL;
    OK(hwi_coll_decide(v, 3, &use, msg, sizeof msg));
    EXPECT(use == HWI_COLL_MPI && strstr(msg, "rank 0 runs on ascend devices but rank 2 on cuda"));

    TEST_CASE("vote");
    hwi_coll_vote me;
    hwi_coll_vote_local(HWI_COLL_AUTO, "sim", &me);
    EXPECT(!me.can && strstr(me.why, "the device backend is sim"));
    EXPECT(me.dev == 0 && strstr(me.why, "NCCL runs on cuda devices only, HCCL on ascend"));
    hwi_coll_vote_local(HWI_COLL_MPI, "cuda", &me);
    EXPECT(!me.can && strstr(me.why, "HWRT_COLL_ENGINE=mpi"));
    hwi_coll_vote_local(HWI_COLL_HCCL, "cuda", &me);
    EXPECT(!me.can && me.dev == HWI_COLL_NCCL &&
           strstr(me.why, "the device backend is cuda, and HCCL runs on ascend devices only"));
    hwi_coll_vote_local(HWI_COLL_NCCL, "ascend", &me);
    EXPECT(!me.can && me.dev == HWI_COLL_HCCL &&
           strstr(me.why, "the device backend is ascend, and NCCL runs on cuda devices only"));
    /* the cuda backend with NCCL absent: the loader's reason names the library */
    pid_t pid = fork();
    if (pid == 0) {
        t_passed = t_failed = 0;
        setenv("HWRT_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1);
        hwi_coll_vote_local(HWI_COLL_AUTO, "cuda", &me);
        EXPECT(!me.can && strstr(me.why, "NCCL could not be loaded") &&
               strstr(me.why, "/nonexistent/libnccl.so.2") && strstr(me.why, "HWRT_NCCL_LIBRARY"));
        if (me.can || !strstr(me.why, "/nonexistent")) fprintf(stderr, "why: %s\n", me.why);
        exit(t_failed ? 1 : 0);   /* exit: a coverage build writes the child's counters */
    }
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* the ascend backend with HCCL absent: the loader's reason names the library */
    pid = fork();
    if (pid == 0) {
        t_passed = t_failed = 0;
        setenv("HWRT_HCCL_LIBRARY", "/nonexistent/libhccl.so", 1);
        hwi_coll_vote_local(HWI_COLL_AUTO, "ascend", &me);
        EXPECT(!me.can && me.dev == HWI_COLL_HCCL && strstr(me.why, "HCCL could not be loaded") &&
               strstr(me.why, "/nonexistent/libhccl.so") && strstr(me.why, "HWRT_HCCL_LIBRARY"));
        if (me.can || !strstr(me.why, "/nonexistent")) fprintf(stderr, "why: %s\n", me.why);
        exit(t_failed ? 1 : 0);   /* exit: a coverage build writes the child's counters */
    }
    waitpid(pid, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* the default name: without CANN it fails the same way; with CANN (an Ascend machine
     * after set_env.sh) the real libhccl.so must resolve every entry point hwrt uses */
    pid = fork();
    if (pid == 0) {
        t_passed = t_failed = 0;
        unsetenv("HWRT_HCCL_LIBRARY");
        void *real = dlopen("libhccl.so", RTLD_NOW | RTLD_LOCAL);
        hwi_coll_vote_local(HWI_COLL_AUTO, "ascend", &me);
        if (real)
            EXPECT(me.can);
        else
            EXPECT(!me.can && strstr(me.why, "none of libhccl.so could be loaded") &&
                   strstr(me.why, "set_env.sh"));
        printf("ascend vote with the default name (%s): can=%d (%s)\n",
               real ? "CANN's libhccl.so is here" : "no CANN", me.can, me.why);
        fflush(stdout);
        exit(t_failed ? 1 : 0);   /* exit: a coverage build writes the child's counters */
    }
    waitpid(pid, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* a library that is not HCCL: the first missing entry point is named */
    pid = fork();
    if (pid == 0) {
        t_passed = t_failed = 0;
        setenv("HWRT_HCCL_LIBRARY", "libm.so.6", 1);
        char why[512] = "";
        EXPECT(hwi_hccl_load(why, sizeof why) == NULL);
        EXPECT(strstr(why, "libm.so.6 has no HcclGetRootInfo: not an HCCL library") != NULL);
        if (!strstr(why, "HcclGetRootInfo")) fprintf(stderr, "why: %s\n", why);
        exit(t_failed ? 1 : 0);   /* exit: a coverage build writes the child's counters */
    }
    waitpid(pid, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    TEST_CASE("hccl_types");
    char why[320];
    struct { hwrt_dtype dt; hwrt_reduce_op op; int want; const char *refusal; } tc[] = {
        {HWRT_FLOAT32, HWRT_REDUCE_SUM, HH_HCCL_DATA_TYPE_FP32, NULL},
        {HWRT_FLOAT16, HWRT_REDUCE_MAX, HH_HCCL_DATA_TYPE_FP16, NULL},
        {HWRT_BFLOAT16, HWRT_REDUCE_AVG, HH_HCCL_DATA_TYPE_BFP16, NULL},
        {HWRT_INT8, HWRT_REDUCE_MIN, HH_HCCL_DATA_TYPE_INT8, NULL},
        {HWRT_INT32, HWRT_REDUCE_PROD, HH_HCCL_DATA_TYPE_INT32, NULL},
        {HWRT_INT64, HWRT_REDUCE_SUM, HH_HCCL_DATA_TYPE_INT64, NULL},
        {HWRT_FLOAT64, HWRT_REDUCE_SUM, -1, "HCCL does not reduce float64 tensors"},
        {HWRT_UINT8, HWRT_REDUCE_MAX, -1, "HCCL does not reduce uint8 tensors"},
        {HWRT_BFLOAT16, HWRT_REDUCE_PROD, -1, "HCCL has no PROD for bfloat16"},
        {HWRT_INT32, HWRT_REDUCE_AVG, -1, "for int32 use SUM and divide"},
    };
    for (size_t i = 0; i < sizeof tc / sizeof tc[0]; i++) {
        why[0] = 0;
        int t = hwi_hccl_reduce_type(tc[i].dt, tc[i].op, why, sizeof why);
        EXPECT(t == tc[i].want);
        if (tc[i].refusal) EXPECT(strstr(why, tc[i].refusal) && strstr(why, "HWRT_COLL_ENGINE=mpi"));
        if (t != tc[i].want) fprintf(stderr, "case %zu: %d (%s)\n", i, t, why);
    }

    /* the real NCCL loads, and a cuda rank can then run it: the engine needs no CUDA
     * call of its own (the backend's thread_enter makes the device current) */
    if (real_nccl && *real_nccl) {
        pid = fork();
        if (pid == 0) {
            t_passed = t_failed = 0;
            setenv("HWRT_NCCL_LIBRARY", real_nccl, 1);
            char nwhy[256] = "";
            EXPECT(hwi_nccl_load(nwhy, sizeof nwhy) != NULL);
            hwi_coll_vote_local(HWI_COLL_AUTO, "cuda", &me);
            EXPECT(me.can);
            printf("real NCCL, cuda vote: can=%d (%s)\n", me.can, me.why);
            fflush(stdout);
            exit(t_failed ? 1 : 0);   /* exit: a coverage build writes the child's counters */
        }
        waitpid(pid, &status, 0);
        EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
}

static void rootinfo(int expect_fail)
{
    OK(hwrt_dist_init());
    rank = hwrt_dist_rank();
    size = hwrt_dist_size();
    static hh_HcclRootInfo root, root2, *all;
    hwrt_status st = hwi_hccl_exchange_root(hwi_dist_g.eng, rank, size, HWRT_SUCCESS, "", &root);
    if (expect_fail) {
        EXPECT(st == HWRT_ERROR_UNAVAILABLE);
        EXPECT(strstr(hwrt_last_error(), "HCCL setup: rank 1 of 2 cannot take part: HCCL could "
                      "not be loaded") != NULL);
        EXPECT(strstr(hwrt_last_error(), "/nonexistent/libhccl.so") != NULL);
        if (st == HWRT_SUCCESS || !strstr(hwrt_last_error(), "rank 1"))
            fprintf(stderr, "rank %d: %s\n", rank, hwrt_last_error());
    } else {
        OK(st);
        int nonzero = 0;
        for (int i = 0; i < HH_HCCL_ROOT_INFO_BYTES; i++) nonzero |= root.internal[i];
        EXPECT(nonzero);
        all = calloc((size_t)size, sizeof *all);
        OK(hwi_dist_g.eng->allgather(NULL, &root, all, sizeof root, NULL));
        for (int r = 1; r < size; r++) EXPECT(!memcmp(&all[0], &all[r], sizeof root));
        free(all);
        OK(hwi_hccl_exchange_root(hwi_dist_g.eng, rank, size, HWRT_SUCCESS, "", &root2));
        EXPECT(memcmp(&root, &root2, sizeof root) != 0);
    }
    OK(hwrt_barrier());
    OK(hwrt_dist_finalize());
}

static void uniqueid(int expect_fail)
{
    OK(hwrt_dist_init());
    rank = hwrt_dist_rank();
    size = hwrt_dist_size();
    hc_ncclUniqueId id;
    if (expect_fail == 2) {        /* rank 1 failed on its own before (its stream, its context) */
        hwrt_status st = hwi_nccl_exchange_id(hwi_dist_g.eng, rank, size,
                                              rank == 1 ? HWRT_ERROR_NOT_SUPPORTED : HWRT_SUCCESS,
                                              rank == 1 ? "no native stream here" : "", &id);
        EXPECT(st == HWRT_ERROR_NOT_SUPPORTED);
        EXPECT(strstr(hwrt_last_error(), "rank 1 of 2 cannot take part: no native stream here") != NULL);
        OK(hwrt_barrier());
        OK(hwrt_dist_finalize());
        return;
    }
    hwrt_status st = hwi_nccl_exchange_id(hwi_dist_g.eng, rank, size, HWRT_SUCCESS, "", &id);
    if (expect_fail) {
        EXPECT(st == HWRT_ERROR_UNAVAILABLE);
        EXPECT(strstr(hwrt_last_error(), "rank 1 of 2 cannot take part") != NULL);
        EXPECT(strstr(hwrt_last_error(), "/nonexistent/libnccl.so.2") != NULL);
        if (st == HWRT_SUCCESS || !strstr(hwrt_last_error(), "rank 1"))
            fprintf(stderr, "rank %d: %s\n", rank, hwrt_last_error());
    } else {
        OK(st);
        int nonzero = 0;
        for (int i = 0; i < HC_NCCL_UNIQUE_ID_BYTES; i++) nonzero |= id.internal[i];
        EXPECT(nonzero);
        /* every rank got rank 0's id: gather them all and compare */
        hc_ncclUniqueId *all = calloc((size_t)size, sizeof *all);
        OK(hwi_dist_g.eng->allgather(NULL, &id, all, sizeof id, NULL));
        for (int r = 1; r < size; r++) EXPECT(!memcmp(&all[0], &all[r], sizeof id));
        free(all);
        /* a second exchange makes a fresh id (ncclGetUniqueId is not a constant) */
        hc_ncclUniqueId id2;
        OK(hwi_nccl_exchange_id(hwi_dist_g.eng, rank, size, HWRT_SUCCESS, "", &id2));
        EXPECT(memcmp(&id, &id2, sizeof id) != 0);
    }
    OK(hwrt_barrier());
    OK(hwrt_dist_finalize());
}

int main(int argc, char **argv)
{
    const char *s = argc > 1 ? argv[1] : "";
    if (!strcmp(s, "decide")) decide(argc > 2 ? argv[2] : NULL);
    else if (!strcmp(s, "badvalue")) {
        TEST_CASE("badvalue");
        setenv("HWRT_COLL_ENGINE", "bogus", 1);
        FAILS(hwrt_dist_init(), HWRT_ERROR_INVALID_ARGUMENT,
              "HWRT_COLL_ENGINE=\"bogus\" names no collective engine; use auto");
        unsetenv("HWRT_COLL_ENGINE");
        OK(hwrt_dist_init());        /* nothing was left half-done */
        OK(hwrt_dist_finalize());
    } else if (!strcmp(s, "auto")) {
        TEST_CASE("auto");
        scenario_engine("collective engine: mpi (auto: rank 0 of 2 cannot run NCCL or HCCL: the "
                        "device backend is sim", HWRT_SUCCESS, NULL);
    } else if (!strcmp(s, "forcedmpi")) {
        TEST_CASE("forcedmpi");
        scenario_engine("collective engine: mpi (HWRT_COLL_ENGINE=mpi on rank 0)", HWRT_SUCCESS, NULL);
    } else if (!strcmp(s, "forcednccl")) {
        TEST_CASE("forcednccl");
        scenario_engine(NULL, HWRT_ERROR_UNAVAILABLE, "HWRT_COLL_ENGINE=nccl, but rank 0 of 2 "
                        "cannot run NCCL: the device backend is sim");
    } else if (!strcmp(s, "forcednccl1")) {
        TEST_CASE("forcednccl1");     /* one process: NCCL with one rank, refused on sim */
        setenv("HWRT_COLL_ENGINE", "nccl", 1);
        scenario_engine(NULL, HWRT_ERROR_UNAVAILABLE, "HWRT_COLL_ENGINE=nccl, but rank 0 of 1 "
                        "cannot run NCCL: the device backend is sim");
    } else if (!strcmp(s, "forcedhccl")) {
        TEST_CASE("forcedhccl");
        scenario_engine(NULL, HWRT_ERROR_UNAVAILABLE, "HWRT_COLL_ENGINE=hccl, but rank 0 of 2 "
                        "cannot run HCCL: the device backend is sim, and HCCL runs on ascend "
                        "devices only");
    } else if (!strcmp(s, "rootinfo")) {
        TEST_CASE("rootinfo");
        rootinfo(0);
    } else if (!strcmp(s, "rootinfo_fail")) {
        TEST_CASE("rootinfo_fail");
        rootinfo(1);
    } else if (!strcmp(s, "mixed")) {
        TEST_CASE("mixed");
        scenario_engine(NULL, HWRT_ERROR_INVALID_ARGUMENT,
                        "rank 0 sets HWRT_COLL_ENGINE=mpi but rank 1 sets nccl");
    } else if (!strcmp(s, "uniqueid")) {
        TEST_CASE("uniqueid");
        uniqueid(0);
    } else if (!strcmp(s, "uniqueid_localfail")) {
        TEST_CASE("uniqueid_localfail");
        uniqueid(2);
    } else if (!strcmp(s, "uniqueid_fail")) {
        TEST_CASE("uniqueid_fail");
        uniqueid(1);
    } else {
        fprintf(stderr, "usage: test_coll_engine decide [libnccl]|badvalue|auto|forcedmpi|"
                "forcednccl|forcednccl1|forcedhccl|mixed|uniqueid|uniqueid_fail|"
                "uniqueid_localfail|rootinfo|rootinfo_fail\n");
        return 2;
    }
    return test_report();
}
