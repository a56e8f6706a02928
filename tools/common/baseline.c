/* The raw-driver baselines' shared command line, timing and JSON rows (baseline.h). */
#include "baseline.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const cli_opt opts[] = {
    {"quick", 'q', CLI_NONE, NULL, "fewer sizes and repetitions (up to 64 MiB copies)"},
    {0},
};

static int on_opt(void *ctx, int key, const char *arg)
{
    (void)key, (void)arg;
    *(int *)ctx = 1;    /* the only flag: --quick */
    return CLI_OK;
}

int baseline_cli(const char *name, const char *about, int argc, char **argv, int *quick)
{
    char synopsis[64];
    snprintf(synopsis, sizeof synopsis, "%s [--quick]", name);
    const cli_tool tool = {.name = name, .synopsis = synopsis, .about = about, .opts = opts};
    int first = 0, done = 0;
    *quick = 0;
    int rc = cli_parse(&tool, argc, argv, on_opt, quick, &first, &done);
    return rc != CLI_OK || done ? rc : -1;
}

static double now_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define MAX_REPS 2001

double baseline_median_s(int clk, int warm, int reps, void (*fn)(void *ctx), void *ctx)
{
    static double t[MAX_REPS];
    if (reps > MAX_REPS) reps = MAX_REPS;
    for (int r = -warm; r < reps; r++) {
        double t0 = now_s((clockid_t)clk);
        fn(ctx);
        if (r >= 0) t[r] = now_s((clockid_t)clk) - t0;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_d);
    return reps % 2 ? t[reps / 2] : (t[reps / 2 - 1] + t[reps / 2]) / 2;
}

static const size_t copy_sizes[] = {4096, 65536, 1 << 20, 16 << 20, 64 << 20, 256 << 20,
                                    512u << 20};

static int copy_count(int quick) { return quick ? 5 : 7; }

size_t baseline_copy_max_bytes(int quick) { return copy_sizes[copy_count(quick) - 1]; }

typedef struct {
    baseline_copy_fn copy;
    void *ctx;
    int dir, pinned;
    size_t n;
} copy_call;

static void run_copy(void *p)
{
    copy_call *c = p;
    c->copy(c->ctx, c->dir, c->pinned, c->n);
}

void baseline_print_copies(int quick, baseline_copy_fn copy, void *ctx)
{
    printf("\"copy\":[");
    int first = 1;
    for (int si = 0; si < copy_count(quick); si++) {
        size_t n = copy_sizes[si];
        int reps = n >= (256u << 20) ? 11 : n >= (64u << 20) ? 21 : quick ? 21 : 51;
        for (int dir = 0; dir < 2; dir++)
            for (int pinned = 1; pinned >= 0; pinned--) {
                copy_call c = {copy, ctx, dir, pinned, n};
                double med = baseline_median_s(CLOCK_MONOTONIC, 1, reps, run_copy, &c);
                printf("%s{\"kind\":\"%s\",\"host\":\"%s\",\"bytes\":%zu,\"repeats\":%d,"
                       "\"gbps_median\":%.4f}", first ? "" : ",", dir ? "D2H" : "H2D",
                       pinned ? "pinned" : "pageable", n, reps, (double)n / med / 1e9);
                first = 0;
            }
    }
    printf("],");
}

void baseline_print_launch(int quick, void (*launch_sync)(void *ctx), void *ctx)
{
    double med = baseline_median_s(CLOCK_MONOTONIC, 50, quick ? 501 : 2001, launch_sync, ctx);
    printf("\"launch_sync_us_median\":%.3f,", med * 1e6);
}

typedef struct {
    const baseline_pair *pair;
    void *ctx;
    size_t bytes;
} pair_call;

static void run_pair(void *p)
{
    pair_call *c = p;
    c->pair->run(c->ctx, c->bytes);
}

void baseline_print_allocs(int quick, const baseline_pair *pairs, int npairs,
                           void (*done)(void *ctx), void *ctx)
{
    static const size_t sizes[] = {512, 1 << 20, 16 << 20};
    static const char *const names[] = {"512B", "1MiB", "16MiB"};
    const int reps = quick ? 101 : 401;
    printf("\"alloc\":[");
    for (int i = 0; i < 3; i++) {
        printf("%s{\"size\":\"%s\"", i ? "," : "", names[i]);
        for (int k = 0; k < npairs; k++) {
            pair_call c = {&pairs[k], ctx, sizes[i]};
            double med = baseline_median_s(CLOCK_THREAD_CPUTIME_ID, 5, reps, run_pair, &c);
            if (done) done(ctx);
            printf(",\"%s\":%.1f", pairs[k].key, med * 1e9);
        }
        printf("}");
    }
    printf("]");
}
