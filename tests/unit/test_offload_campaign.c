/* Offload fault campaign (issue 15): random HWRT_SIM_FAULTS schedules (kernel, copy,
 * alloc faults and link stalls) over offload workloads on the host tier, the disk tier
 * and both, pinned and pageable, with and without the learned order. Every round must
 * end with exactly the expected data, or with a clear error (a documented status and a
 * sentence) at a documented call; never wrong data with a success status.
 *
 * A round is one session (hwrt_shutdown re-arms the faults): 2 x K offloadable tensors
 * of two shapes on a device budget smaller than them, several steps of ops on three
 * streams. A step computes B from A only (A is read, each B[k] is first overwritten,
 * then updated on one stream), so a step that met a fault is re-issued whole after the
 * documented recovery (hwrt_device_reset) and gives the same B; a host model knows every
 * element of every tensor. Reads of A in the middle of a step, of B after a step and of
 * every tensor at the end are compared with the model. Evictions, prefetches and
 * location queries are mixed in.
 *
 * Outcomes per round: exact (no error surfaced), recovered (errors surfaced at
 * documented calls, then the data was exact), error (a clear error remained at the end),
 * and the failures: WRONG (a read succeeded with wrong data), undocumented (a status or
 * sentence outside the contract), leak (tier memory left after releasing everything).
 * Faults injected per kind come from the sim's own report (HWRT_LOG_LEVEL 3, captured).
 *
 * Bounded run (CTest): 150 rounds, a few seconds. Long run: --rounds N or HWRT_OFFLOAD_CAMPAIGN_ROUNDS=N
 * (e.g. 10000), --seed S to start elsewhere, --verbose to print every round; on a terminal
 * a progress line on stderr ("round 3120/10000 (64 s) 0 wrong"), --quiet without it. */
#include "harness.h"
#include "progress.h"        /* tools/common: a progress line on a terminal */

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

enum { K = 6, STEPS = 4, NS = 3, RETRIES = 4 };
static const int64_t numel[2] = {64 * 1024, 32 * 1024};   /* 256 KiB and 128 KiB float32 */
static int group(int k) { return k < 4 ? 0 : 1; }

/* element i of a tensor is a + b * (i % 7): fill, scale and add keep that form */
typedef struct { double a, b; } model;

static uint64_t rng;
static uint64_t next(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static int pick(int n) { return (int)(next() % (uint64_t)n); }

typedef struct {
    uint64_t rounds, faulted, exact, recovered, error, wrong, undocumented, leak;
    uint64_t inj[4];                 /* alloc, copy, kernel, stall */
    uint64_t errors_seen, reads_checked, not_landed, reclaimed;
} totals;

static totals tot;
static FILE *out;                    /* the real stderr; fd 2 goes to the log capture */
static FILE *capture;
static int verbose;
static float hbuf[64 * 1024];
static char dir[] = "/tmp/hwrt-offload-campaign-XXXXXX";

typedef struct {
    hwrt_tensor A[K], B[K];
    model ma[K], mb[K];
    hwrt_stream s[NS];
    int wrong, undocumented, errors;
    char first_wrong[256];
} round_state;

static const char *api_name;         /* the call being checked, for reports */

/* A failed call: documented statuses with a sentence are fine (count them); anything
 * else is a failure of the contract. Returns 1 when the status is an error. */
static int failed(round_state *R, hwrt_status st)
{
    if (st == HWRT_SUCCESS) return 0;
    const char *e = hwrt_last_error();
    int documented = (st == HWRT_ERROR_DEVICE_FAULT || st == HWRT_ERROR_OUT_OF_MEMORY ||
                      st == HWRT_ERROR_IO || st == HWRT_ERROR_HOST_OUT_OF_MEMORY) && e && e[0];
    if (!documented) {
        if (!R->undocumented)
            fprintf(out, "  undocumented outcome of %s: %s \"%s\"\n", api_name,
                    hwrt_status_name(st), e ? e : "");
        R->undocumented++;
    }
    R->errors++;
    return 1;
}
#define CALL(R, call) (api_name = #call, failed(R, (call)))

static int read_check(round_state *R, hwrt_tensor t, int k, model m)
{
    int64_t n = numel[group(k)];
    api_name = "hwrt_tensor_copy_to_host";
    memset(hbuf, 0x7f, (size_t)n * sizeof(float));
    if (failed(R, hwrt_tensor_copy_to_host(t, hbuf, (size_t)n * sizeof(float)))) return -1;
    tot.reads_checked++;
    for (int64_t i = 0; i < n; i++) {
        float want = (float)(m.a + m.b * (double)(i % 7));
        if (hbuf[i] != want) {
            if (!R->wrong)
                snprintf(R->first_wrong, sizeof R->first_wrong, "tensor %d element %lld: %g, "
                         "want %g", k, (long long)i, hbuf[i], want);
            R->wrong++;
            return 0;
        }
    }
    return 1;
}

/* a stream busy for a while: the host queues work ahead of the device */
static void hold(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 300000};
    nanosleep(&ts, NULL);
}

static hwrt_stream stream_of(round_state *R, int i) { return i == 0 ? NULL : R->s[i]; }

/* One step: B from A. Returns 0 when every call succeeded. */
static int step(round_state *R)
{
    int errs = R->errors;
    int nops[K], stream[K], order[3 * K], norder = 0;
    for (int k = 0; k < K; k++) {
        nops[k] = 1 + pick(3);
        stream[k] = pick(NS);
        for (int o = 0; o < nops[k]; o++) order[norder++] = k;
        R->mb[k] = (model){0, 0};
    }
    for (int i = norder - 1; i > 0; i--) {        /* interleave the chains */
        int j = pick(i + 1), x = order[i];
        order[i] = order[j];
        order[j] = x;
    }
    int done[K] = {0};
    for (int o = 0; o < norder && R->errors == errs; o++) {
        int k = order[o], g = group(k), first = !done[k]++;
        int i = pick(K), j = pick(K);
        while (group(i) != g) i = (i + 1) % K;
        while (group(j) != g) j = (j + 1) % K;
        hwrt_stream s = stream_of(R, stream[k]);
        int op = first ? pick(3) : 3 + pick(2);
        double c = pick(2) ? 2.0 : -1.0;
        switch (op) {
        case 0: {
            double v = (double)(pick(200) - 100);
            if (CALL(R, hwrt_op_fill(R->B[k], v, s))) break;
            R->mb[k] = (model){v, 0};
            break;
        }
        case 1:
            if (CALL(R, hwrt_op_scale(R->B[k], R->A[j], c, s))) break;
            R->mb[k] = (model){c * R->ma[j].a, c * R->ma[j].b};
            break;
        case 2:
            if (CALL(R, hwrt_op_add(R->B[k], R->A[i], R->A[j], s))) break;
            R->mb[k] = (model){R->ma[i].a + R->ma[j].a, R->ma[i].b + R->ma[j].b};
            break;
        case 3:
            if (CALL(R, hwrt_op_add(R->B[k], R->B[k], R->A[j], s))) break;
            R->mb[k] = (model){R->mb[k].a + R->ma[j].a, R->mb[k].b + R->ma[j].b};
            break;
        default:
            if (fabs(R->mb[k].a) > 1e5 || fabs(R->mb[k].b) > 1e5) c = -1.0;
            if (CALL(R, hwrt_op_scale(R->B[k], R->B[k], c, s))) break;
            R->mb[k] = (model){c * R->mb[k].a, c * R->mb[k].b};
            break;
        }
        /* the manager's own calls, and reads of A mid-step */
        int extra = pick(8), x = pick(K);
        int where;
        hwrt_status st;
        switch (extra) {
        case 0:
            st = hwrt_offload_evict(R->A[x]);
            if (st != HWRT_ERROR_DEVICE_BUSY) { api_name = "hwrt_offload_evict"; failed(R, st); }
            break;
        case 1: CALL(R, hwrt_offload_prefetch(R->A[x], stream_of(R, pick(NS)))); break;
        case 2: read_check(R, R->A[x], x, R->ma[x]); break;
        case 3: CALL(R, hwrt_offload_location(R->A[x], &where)); break;
        case 4: CALL(R, hwrt_launch_host_func(stream_of(R, pick(NS)), hold, NULL)); break;
        default: break;
        }
    }
    if (R->errors == errs) CALL(R, hwrt_device_synchronize());
    if (R->errors == errs)
        for (int k = 0; k < K && R->errors == errs; k++)
            if (pick(2)) read_check(R, R->B[k], k, R->mb[k]);
    if (R->errors == errs) CALL(R, hwrt_offload_step());
    return R->errors != errs;
}

static void recover(round_state *R)
{
    hwrt_device_synchronize();                   /* its status is the fault we know of */
    api_name = "hwrt_device_reset";
    failed(R, hwrt_device_reset(0));
}

/* Parse what the sim and the manager logged this round (the capture is rewound). */
static void read_log(uint64_t inj[4])
{
    fflush(stderr);
    rewind(capture);
    char line[1024];
    memset(inj, 0, 4 * sizeof *inj);
    while (fgets(line, sizeof line, capture)) {
        unsigned long long a, c, k, s;
        const char *p = strstr(line, "faults injected: ");
        if (p && sscanf(p, "faults injected: alloc %llu, copy %llu, kernel %llu, stall %llu",
                        &a, &c, &k, &s) == 4) {
            inj[0] += a; inj[1] += c; inj[2] += k; inj[3] += s;
        }
        if (strstr(line, "a fetch did not land")) tot.not_landed++;
        if (strstr(line, "device copy stays authoritative")) tot.reclaimed++;
    }
    rewind(capture);
    if (ftruncate(fileno(capture), 0) != 0) perror("ftruncate");
}

/* 1-3 clauses; the first a kernel or copy fault that the round's work reaches, and half
 * the rounds with a link stall, which lets the host run ahead of the device (victims
 * still in use: stream-ordered hand-overs and write-backs) */
static void schedule(char *buf, size_t len)
{
    static const char *kinds[3] = {"kernel", "copy", "alloc"};
    int n = 1 + pick(3), o = 0;
    buf[0] = 0;
    for (int c = 0; c < n; c++) {
        int kind = c == 0 ? pick(2) : c == 1 && pick(2) ? 3 : pick(4);
        if (kind == 3) {
            o += snprintf(buf + o, len - (size_t)o, "%sstall:ms=%d:every=%d", o ? "," : "",
                          1 + pick(2), 5 + pick(20));
        } else if (pick(4) == 0) {
            o += snprintf(buf + o, len - (size_t)o, "%s%s:p=0.0%d:times=%d", o ? "," : "",
                          kinds[kind], 1 + pick(5), 1 + pick(2));
        } else {
            int range = kind == 0 ? 40 : kind == 1 ? 50 : 2;
            o += snprintf(buf + o, len - (size_t)o, "%s%s:nth=%d", o ? "," : "", kinds[kind],
                          1 + pick(range));
        }
    }
    snprintf(buf + o, len - (size_t)o, ",seed=%llu", (unsigned long long)(next() % 100000));
}

static void one_round(uint64_t r)
{
    round_state R;
    memset(&R, 0, sizeof R);
    char faults[256];
    schedule(faults, sizeof faults);
    int tier = pick(3), pinned = pick(2), learned = pick(2);
    hwrt_shutdown();                             /* re-arms HWRT_SIM_FAULTS */
    setenv("HWRT_SIM_FAULTS", faults, 1);
    hwrt_status st = hwrt_set_device("sim", 0);
    hwrt_offload_config c = {.enabled = 1, .auto_offload = learned,
                             .max_device_memory = 2u << 20,
                             .offload_cpu_size = tier == 1 ? 0 : tier == 0 ? 8u << 20 : 640u << 10,
                             .offload_disk_size = tier == 0 ? 0 : 8u << 20,
                             .offload_path = dir, .enable_pinned_mem = pinned,
                             .prefetch_depth = pick(3)};
    if (st == HWRT_SUCCESS) st = hwrt_set_offload_config(&c);
    api_name = "session setup";
    if (failed(&R, st)) goto end;
    for (int s = 1; s < NS; s++)
        if (CALL(&R, hwrt_stream_create(&R.s[s], 0))) goto end;
    /* create the tensors (allocation faults land here: retry after the error) */
    for (int k = 0; k < K; k++) {
        int64_t shape[1] = {numel[group(k)]};
        for (int which = 0; which < 2; which++) {
            hwrt_tensor *t = which ? &R.B[k] : &R.A[k];
            model *m = which ? &R.mb[k] : &R.ma[k];
            *m = (model){(double)(pick(100) - 50), (double)(pick(9) - 4)};
            for (int64_t i = 0; i < shape[0]; i++) hbuf[i] = (float)(m->a + m->b * (double)(i % 7));
            int ok = 0;
            for (int tries = 0; tries < RETRIES && !ok; tries++) {
                if (!CALL(&R, hwrt_tensor_from_host(t, HWRT_FLOAT32, 1, shape, hbuf)) &&
                    !CALL(&R, hwrt_tensor_set_offloadable(*t, 1)))
                    ok = 1;
                else if (*t) {
                    hwrt_tensor_release(*t);
                    *t = NULL;
                }
                if (!ok) recover(&R);
            }
            if (!ok) goto end;
        }
    }
    for (int s = 0; s < STEPS; s++) {
        int ok = 0;
        for (int tries = 0; tries < RETRIES && !ok; tries++) {
            if (!step(&R)) ok = 1;
            else recover(&R);
        }
        if (!ok) break;                          /* a clear error stays: check A below */
        for (int k = 0; k < K; k++) {            /* commit: B becomes the new A */
            hwrt_tensor t = R.A[k];
            R.A[k] = R.B[k];
            R.B[k] = t;
            model m = R.ma[k];
            R.ma[k] = R.mb[k];
            R.mb[k] = m;
        }
    }
    /* the end: every committed tensor reads back exactly, or a clear error remains */
    int unreadable = 0;
    for (int k = 0; k < K; k++) {
        int res = -1;
        for (int tries = 0; tries < RETRIES && res < 0; tries++) {
            res = read_check(&R, R.A[k], k, R.ma[k]);
            if (res < 0) recover(&R);
        }
        unreadable += res < 0;
    }
    R.errors -= 0;
    {
        int leak = 0;
        for (int k = 0; k < K; k++) {
            if (R.A[k]) hwrt_tensor_release(R.A[k]);
            if (R.B[k]) hwrt_tensor_release(R.B[k]);
            R.A[k] = R.B[k] = NULL;
        }
        hwrt_offload_stats os;
        if (hwrt_offload_stats_get(&os) == HWRT_SUCCESS && (os.host_bytes || os.disk_bytes)) {
            leak = 1;
            fprintf(out, "  round %llu: %zu host and %zu disk tier bytes left after releasing "
                    "everything\n", (unsigned long long)r, os.host_bytes, os.disk_bytes);
        }
        tot.leak += leak;
        if (unreadable) tot.error++;
        else if (R.wrong || R.undocumented || leak) {}
        else if (R.errors) tot.recovered++;
        else tot.exact++;
    }
end:
    for (int k = 0; k < K; k++) {
        if (R.A[k]) hwrt_tensor_release(R.A[k]);
        if (R.B[k]) hwrt_tensor_release(R.B[k]);
    }
    for (int s = 1; s < NS; s++)
        if (R.s[s]) hwrt_stream_destroy(R.s[s]);
    hwrt_shutdown();                             /* the sim reports its injections here */
    uint64_t inj[4];
    read_log(inj);
    for (int i = 0; i < 4; i++) tot.inj[i] += inj[i];
    if (inj[0] + inj[1] + inj[2]) tot.faulted++;
    tot.rounds++;
    tot.errors_seen += (uint64_t)R.errors;
    tot.wrong += R.wrong ? 1 : 0;
    tot.undocumented += R.undocumented ? 1 : 0;
    if (R.wrong)
        fprintf(out, "  round %llu WRONG DATA (%s; tier %d pinned %d learned %d): %s\n",
                (unsigned long long)r, faults, tier, pinned, learned, R.first_wrong);
    if (verbose)
        fprintf(out, "round %llu: %-60s tier %d pinned %d learned %d: injected a%llu c%llu "
                "k%llu s%llu, %d errors%s\n", (unsigned long long)r, faults, tier, pinned,
                learned, (unsigned long long)inj[0], (unsigned long long)inj[1],
                (unsigned long long)inj[2], (unsigned long long)inj[3], R.errors,
                R.wrong ? ", WRONG" : "");
}

int main(int argc, char **argv)
{
    uint64_t rounds = 150, seed = 1;
    int quiet = 0;
    const char *env = getenv("HWRT_OFFLOAD_CAMPAIGN_ROUNDS");
    if (env && *env) rounds = strtoull(env, NULL, 10);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--verbose")) verbose = 1;
        else if (!strcmp(argv[i], "--quiet")) quiet = 1;
        else {
            fprintf(stderr, "usage: %s [--rounds N] [--seed S] [--verbose] [--quiet]\n", argv[0]);
            return 2;
        }
    }
    rng = seed * 0x2545F4914F6CDD1Dull;
    setenv("HWRT_SIM_MEMORY", "64MB", 1);
    setenv("HWRT_SIM_OVERHEAD", "4MB", 1);
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    cli_progress prog;            /* decided on the real stderr, before fd 2 is captured */
    cli_progress_begin(&prog, "offload campaign", "round", quiet || verbose);
    /* capture the log (fd 2) to count injections; keep the real stderr for reports */
    out = fdopen(dup(2), "w");
    setvbuf(out, NULL, _IOLBF, 0);
    capture = tmpfile();
    if (!out || !capture) { perror("campaign"); return 1; }
    harness_sanitizer_reports_to(fileno(out));
    dup2(fileno(capture), 2);
    prog.out = out;
    OK(hwrt_set_config("log_level", "3"));
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (uint64_t r = 0; r < rounds; r++) {
        one_round(r);
        char wrong[48];
        snprintf(wrong, sizeof wrong, "%llu wrong", (unsigned long long)tot.wrong);
        cli_progress_step(&prog, (long)(r + 1), (long)rounds, wrong);
        if (!verbose && !prog.on && rounds >= 1000 && (r + 1) % 1000 == 0)
            fprintf(out, "  %llu rounds, %llu wrong so far\n", (unsigned long long)(r + 1),
                    (unsigned long long)tot.wrong);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    cli_progress_end(&prog);
    dup2(fileno(out), 2);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("offload fault campaign: %llu rounds (seed %llu) in %.1f s, %llu faulted\n",
           (unsigned long long)tot.rounds, (unsigned long long)seed, secs,
           (unsigned long long)tot.faulted);
    printf("  faults injected: kernel %llu, copy %llu, alloc %llu, link stall %llu\n",
           (unsigned long long)tot.inj[2], (unsigned long long)tot.inj[1],
           (unsigned long long)tot.inj[0], (unsigned long long)tot.inj[3]);
    printf("  outcomes: exact %llu, recovered %llu, clear error %llu | wrong data %llu, "
           "undocumented %llu, leak %llu\n", (unsigned long long)tot.exact,
           (unsigned long long)tot.recovered, (unsigned long long)tot.error,
           (unsigned long long)tot.wrong, (unsigned long long)tot.undocumented,
           (unsigned long long)tot.leak);
    printf("  errors surfaced at documented calls %llu, reads checked %llu, fetches that did "
           "not land %llu, write-backs undone %llu\n", (unsigned long long)tot.errors_seen,
           (unsigned long long)tot.reads_checked, (unsigned long long)tot.not_landed,
           (unsigned long long)tot.reclaimed);
    TEST_CASE("campaign");
    EXPECT(tot.wrong == 0);
    EXPECT(tot.undocumented == 0);
    EXPECT(tot.leak == 0);
    EXPECT(tot.exact + tot.recovered + tot.error == tot.rounds);
    EXPECT(tot.faulted * 10 >= tot.rounds * 8);  /* the schedules do hit */
    unsetenv("HWRT_SIM_FAULTS");
    rmdir(dir);
    return test_report();
}
