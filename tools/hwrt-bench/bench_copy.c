/* hwrt-bench copy: H2D, D2H and D2D bandwidth, pinned and pageable host memory, 4 KiB up
 * to 512 MiB. Each size is measured against two baselines in the same run and in the same
 * loop (repeats interleaved, so load from other processes hits all of them alike):
 * single-thread memcpy and a two-thread memcpy of the same size between the same host
 * buffers. The ratio is the hwrt copy's median bandwidth over the better baseline. */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

enum { C_MEMCPY1, C_MEMCPY2, C_H2D_PIN, C_H2D_PAGE, C_D2H_PIN, C_D2H_PAGE, C_D2D, C_COUNT };

static const struct { const char *kind, *host; } cols[C_COUNT] = {
    {"memcpy", "1 thread"}, {"memcpy", "2 threads"}, {"H2D", "pinned"}, {"H2D", "pageable"},
    {"D2H", "pinned"}, {"D2H", "pageable"}, {"D2D", "-"}};

typedef struct {
    char *pin, *page;           /* host: pinned and pageable, max bytes each */
    char *d0, *d1;              /* device */
    hwrt_stream s;
} bufs;

static void copy_once(bufs *b, int c, size_t n)
{
    switch (c) {
    case C_MEMCPY1: memcpy(b->page, b->pin, n); return;
    case C_MEMCPY2: bench_memcpy2(b->page, b->pin, n); return;
    case C_H2D_PIN: BCHECK(hwrt_memcpy_async(b->d0, b->pin, n, HWRT_MEMCPY_HOST_TO_DEVICE, b->s)); break;
    case C_H2D_PAGE: BCHECK(hwrt_memcpy_async(b->d0, b->page, n, HWRT_MEMCPY_HOST_TO_DEVICE, b->s)); break;
    case C_D2H_PIN: BCHECK(hwrt_memcpy_async(b->pin, b->d0, n, HWRT_MEMCPY_DEVICE_TO_HOST, b->s)); break;
    case C_D2H_PAGE: BCHECK(hwrt_memcpy_async(b->page, b->d0, n, HWRT_MEMCPY_DEVICE_TO_HOST, b->s)); break;
    case C_D2D: BCHECK(hwrt_memcpy_async(b->d1, b->d0, n, HWRT_MEMCPY_DEVICE_TO_DEVICE, b->s)); break;
    }
    BCHECK(hwrt_stream_synchronize(b->s));
}

/* Repeats: enough bytes per size to be stable, bounded so the run stays under ~60 s. */
static int repeats(size_t n, int quick)
{
    size_t r = ((size_t)1 << 30) / n;
    int lo = quick ? 3 : n >= ((size_t)256 << 20) ? 11 : n >= ((size_t)64 << 20) ? 31 : 7;
    int hi = quick ? 21 : 201;
    return r < (size_t)lo ? lo : r > (size_t)hi ? hi : (int)r;
}

/* Fills med_gbps with each column's median GB/s, and paired[c] with the median over
 * repeats of column c / the better memcpy of the same repeat (interleaved sizes only:
 * pairing samples taken moments apart cancels load that drifts between repeats; for
 * the others it is the ratio of medians). */
static void measure(bufs *b, size_t n, int reps, double med_gbps[C_COUNT], double paired[C_COUNT])
{
    double *t = malloc(sizeof(double) * (size_t)reps * C_COUNT);
    if (!t) { fprintf(stderr, "hwrt-bench: out of memory\n"); exit(1); }
    for (int c = 0; c < C_COUNT; c++) copy_once(b, c, n);           /* warm up */
    /* large copies: repeats interleaved across columns (load from other processes hits
     * every column alike), in a new shuffled order each repeat: device memory is host
     * RAM here, and the first copy to read the device buffer after the H2D columns wrote
     * it pays for moving those lines between CPUs' caches (measured: with a fixed order
     * that was always D2H pinned, 0.76-0.87x; swapped with D2H pageable, the cost moved
     * with it), so no column may always sit in that place. Small ones: one column at a
     * time, so each measures a warm path (its engine still spinning) rather than an
     * engine wake-up. */
    int interleave = n >= ((size_t)4 << 20);
    int order[C_COUNT];
    unsigned seed = 12345u + (unsigned)(n >> 20);
    for (int i = 0; i < reps * C_COUNT; i++) {
        if (interleave && i % C_COUNT == 0) {      /* Fisher-Yates, fixed seed per size */
            for (int k = 0; k < C_COUNT; k++) order[k] = k;
            for (int k = C_COUNT - 1; k > 0; k--) {
                seed = seed * 1103515245u + 12345u;
                int j = (int)((seed >> 16) % (unsigned)(k + 1)), x = order[k];
                order[k] = order[j];
                order[j] = x;
            }
        }
        int c = interleave ? order[i % C_COUNT] : i / reps, r = interleave ? i / C_COUNT : i % reps;
        double t0 = bench_now_s();
        copy_once(b, c, n);
        t[c * reps + r] = (double)n / (bench_now_s() - t0) / 1e9;
    }
    for (int c = 0; c < C_COUNT; c++) med_gbps[c] = bench_median(&t[c * reps], reps);
    double best = med_gbps[C_MEMCPY1] > med_gbps[C_MEMCPY2] ? med_gbps[C_MEMCPY1] : med_gbps[C_MEMCPY2];
    double *q = malloc(sizeof(double) * (size_t)reps);
    for (int c = 0; c < C_COUNT; c++) {
        paired[c] = med_gbps[c] / best;
        if (!interleave || !q) continue;
        for (int r = 0; r < reps; r++) {
            double m1 = t[C_MEMCPY1 * reps + r], m2 = t[C_MEMCPY2 * reps + r];
            q[r] = t[c * reps + r] / (m1 > m2 ? m1 : m2);
        }
        paired[c] = bench_median(q, reps);
    }
    free(q);
    free(t);
}

static void setup(bufs *b, size_t max)
{
    BCHECK(hwrt_host_alloc((void **)&b->pin, max, HWRT_HOST_PINNED));
    BCHECK(hwrt_host_alloc((void **)&b->page, max, HWRT_HOST_DEFAULT));
    BCHECK(hwrt_malloc((void **)&b->d0, max));
    BCHECK(hwrt_malloc((void **)&b->d1, max));
    BCHECK(hwrt_stream_create(&b->s, 0));
    memset(b->pin, 1, max);                 /* first touch outside the timed loops */
    memset(b->page, 2, max);
    BCHECK(hwrt_memset_async(b->d0, 3, max, b->s));
    BCHECK(hwrt_memset_async(b->d1, 4, max, b->s));
    BCHECK(hwrt_stream_synchronize(b->s));
}

static void teardown(bufs *b)
{
    BCHECK(hwrt_stream_destroy(b->s));
    BCHECK(hwrt_free(b->d0));
    BCHECK(hwrt_free(b->d1));
    BCHECK(hwrt_host_free(b->pin));
    BCHECK(hwrt_host_free(b->page));
}

static void print_size(size_t n, char *buf, size_t len)
{
    if (n >= (1u << 20)) snprintf(buf, len, "%zu MiB", n >> 20);
    else snprintf(buf, len, "%zu KiB", n >> 10);
}

static void emit(const bench_opts *o, hwi_jw *j, size_t n, int reps, const double g[C_COUNT],
                 const double paired[C_COUNT])
{
    double best = g[C_MEMCPY1] > g[C_MEMCPY2] ? g[C_MEMCPY1] : g[C_MEMCPY2];
    char sz[32];
    print_size(n, sz, sizeof sz);
    if (!o->json) {
        printf("%8s %5d %8.2f %8.2f", sz, reps, g[C_MEMCPY1], g[C_MEMCPY2]);
        for (int c = C_H2D_PIN; c < C_COUNT; c++)
            printf(" %8.2f %5.2fx %5.2fx", g[c], g[c] / best, paired[c]);
        printf("\n");
        return;
    }
    for (int c = C_H2D_PIN; c < C_COUNT; c++) {
        hwi_jw_obj(j);
        hwi_jw_kstr(j, "kind", cols[c].kind);
        hwi_jw_kstr(j, "host", cols[c].host);
        hwi_jw_knum(j, "bytes", (double)n);
        hwi_jw_knum(j, "repeats", reps);
        hwi_jw_knum(j, "gbps_median", g[c]);
        hwi_jw_knum(j, "memcpy_1thread_gbps", g[C_MEMCPY1]);
        hwi_jw_knum(j, "memcpy_2thread_gbps", g[C_MEMCPY2]);
        hwi_jw_knum(j, "ratio_vs_best_memcpy", g[c] / best);
        hwi_jw_knum(j, "ratio_paired_median", paired[c]);
        hwi_jw_close(j);
    }
}

int bench_copy(const bench_opts *o, hwi_jw *j)
{
    hwrt_device_props p;
    BCHECK(hwrt_get_device_props(0, &p));
    bufs b;
    setup(&b, o->max_bytes);
    bench_memcpy2_start();
    if (o->json) {
        hwi_jw_obj(j);
        hwi_jw_kstr(j, "device", p.name);
        hwi_jw_knum(j, "simulated", p.simulated);
        hwi_jw_knum(j, "link_gbps", p.link_gbps);
        hwi_jw_key(j, "rows");
        hwi_jw_arr(j);
    } else {
        printf("copy bandwidth on %s (%s%s), GB/s medians; ratio = hwrt median / best memcpy "
               "median of the same size, same run; paired = median over repeats of hwrt / best "
               "memcpy of the same repeat\n", p.name, p.backend, p.simulated ? ", simulated" : "");
        printf("%8s %5s %8s %8s", "size", "reps", "memcpy1", "memcpy2");
        for (int c = C_H2D_PIN; c < C_COUNT; c++)
            printf(" %8s %6s %6s", c == C_D2D ? "D2D" : c == C_H2D_PIN ? "H2Dpin" : c == C_H2D_PAGE
                   ? "H2Dpage" : c == C_D2H_PIN ? "D2Hpin" : "D2Hpage", "ratio", "paired");
        printf("\n");
    }
    for (size_t n = 4096; n <= o->max_bytes; n = n * 4 > o->max_bytes && n < o->max_bytes
                                                    ? o->max_bytes : n * 4) {
        double g[C_COUNT], paired[C_COUNT];
        int reps = repeats(n, o->quick);
        measure(&b, n, reps, g, paired);
        emit(o, j, n, reps, g, paired);
        fflush(stdout);
    }
    if (o->json) {
        hwi_jw_close(j);
        hwi_jw_close(j);
    }
    bench_memcpy2_stop();
    teardown(&b);
    return 0;
}
