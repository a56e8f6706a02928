/* malloc+free latency of hot sizes. Every allocator runs the same loop through a
 * function pointer (so no compiler elides a malloc/free pair), interleaved within each
 * repetition so they share the machine's state; the figure is the median over
 * repetitions of ns per malloc+free pair. jemalloc and mimalloc are loaded with dlopen
 * (RTLD_LOCAL: they do not replace the process's malloc). hwrt's rows run on the sim, or
 * on the backend HWRT_BACKEND names (scripts/device-check.sh measures cuda so). */
#include "bench.h"

#include <hwrt.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct alloc_impl {
    const char *name;
    void *(*alloc)(size_t);
    void (*release)(void *);
    int present;
    char why[160];
} alloc_impl;

static hwrt_stream bench_stream;

static void *hw_alloc(size_t n)
{
    void *p = NULL;
    return hwrt_malloc(&p, n) == HWRT_SUCCESS ? p : NULL;
}
static void hw_free(void *p) { hwrt_free(p); }
static void *hw_alloc_async(size_t n)
{
    void *p = NULL;
    return hwrt_malloc_async(&p, n, bench_stream) == HWRT_SUCCESS ? p : NULL;
}
static void hw_free_async(void *p) { hwrt_free_async(p, bench_stream); }

static void load(alloc_impl *a, const char *lib, const char *m, const char *f)
{
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(a->why, sizeof a->why, "%s", dlerror());
        return;
    }
    a->alloc = (void *(*)(size_t))dlsym(h, m);
    a->release = (void (*)(void *))dlsym(h, f);
    a->present = a->alloc && a->release;
    if (!a->present) snprintf(a->why, sizeof a->why, "%s lacks %s/%s", lib, m, f);
}

enum { NA = 5, RING = 64 };

/* ns per pair: `pairs` times malloc(size) + free, or (size 0) a ring of RING live
 * blocks of mixed hot sizes replaced round-robin. */
static double run(alloc_impl *a, size_t size, long pairs)
{
    static const size_t mix[8] = {512, 4096, 1000, 65536, 200000, 1 << 20, 3 << 20, 16 << 20};
    void *(*volatile m)(size_t) = a->alloc;
    void (*volatile f)(void *) = a->release;
    void *ring[RING] = {0};
    double t0 = bench_cpu_ns();
    if (size) {
        for (long i = 0; i < pairs; i++) {
            void *p = m(size);
            f(p);
        }
    } else {
        for (long i = 0; i < pairs; i++) {
            int k = (int)(i % RING);
            if (ring[k]) f(ring[k]);
            ring[k] = m(mix[(i * 7 + i / RING) % 8]);
        }
    }
    double t = (bench_cpu_ns() - t0) / (double)pairs;
    for (int k = 0; k < RING; k++) if (ring[k]) f(ring[k]);
    return t;
}

static void print_row(const bench_opts *o, const char *label, alloc_impl *impl, double *med)
{
    double je = med[3], mi = med[4], gl = med[2];
    if (o->json) {
        hwi_jw *j = o->jw;
        hwi_jw_obj(j);
        hwi_jw_kstr(j, "size", label);
        for (int k = 0; k < NA; k++) {
            char key[32];
            snprintf(key, sizeof key, "%s_ns", impl[k].name);
            if (impl[k].present) hwi_jw_knum(j, key, med[k]);
        }
        if (impl[3].present) hwi_jw_knum(j, "hwrt_over_jemalloc", med[0] / je);
        if (impl[4].present) hwi_jw_knum(j, "hwrt_over_mimalloc", med[0] / mi);
        hwi_jw_knum(j, "hwrt_over_glibc", med[0] / gl);
        hwi_jw_close(j);
        return;
    }
    printf("%-8s", label);
    for (int k = 0; k < NA; k++) {
        if (impl[k].present) printf(" %10.1f", med[k]);
        else printf(" %10s", "-");
    }
    printf("   %7.2f  %7.2f  %7.2f\n", impl[3].present ? med[0] / je : 0,
           impl[4].present ? med[0] / mi : 0, med[0] / gl);
}

int bench_latency(const bench_opts *o)
{
    const char *backend = getenv("HWRT_BACKEND");
    if (!backend || !*backend) backend = "sim";
    if (hwrt_set_device(backend, 0) != HWRT_SUCCESS || hwrt_stream_create(&bench_stream, 0)) {
        fprintf(stderr, "hwrt-bench-pool: %s\n", hwrt_last_error());
        return 1;
    }
    alloc_impl impl[NA] = {
        {"hwrt", hw_alloc, hw_free, 1, ""},
        {"hwrt_async", hw_alloc_async, hw_free_async, 1, ""},
        {"glibc", malloc, free, 1, ""},
        {"jemalloc", 0, 0, 0, ""},
        {"mimalloc", 0, 0, 0, ""},
    };
    load(&impl[3], "libjemalloc.so.2", "malloc", "free");
    load(&impl[4], "libmimalloc.so.2", "mi_malloc", "mi_free");
    static const size_t sizes[] = {512, 4096, 65536, 1 << 20, 16 << 20, 0};
    static const char *const labels[] = {"512B", "4KiB", "64KiB", "1MiB", "16MiB", "mixed"};
    enum { NS = sizeof sizes / sizeof sizes[0] };
    double *t = calloc((size_t)NS * NA * (size_t)o->reps, sizeof *t);
    for (int k = 0; k < NA; k++) if (impl[k].present) run(&impl[k], 4096, 10000);  /* warm */
    for (int r = 0; r < o->reps; r++)
        for (int s = 0; s < NS; s++)
            for (int k = 0; k < NA; k++)
                if (impl[k].present)
                    t[((size_t)s * NA + (size_t)k) * (size_t)o->reps + (size_t)r] =
                        run(&impl[k], sizes[s], sizes[s] && sizes[s] < (1u << 20) ? o->pairs : o->pairs / 10);
    int ok = impl[3].present;
    double worst = 0;
    if (o->json) {
        char unit[96];
        snprintf(unit, sizeof unit, "thread CPU ns per malloc+free pair, median of %d", o->reps);
        hwi_jw_obj(o->jw);
        hwi_jw_kstr(o->jw, "benchmark", "pool_latency");
        hwi_jw_kstr(o->jw, "backend", backend);
        hwi_jw_kstr(o->jw, "unit", unit);
        hwi_jw_key(o->jw, "rows");
        hwi_jw_arr(o->jw);
    }
    else {
        printf("hwrt-bench pool: malloc+free latency, thread CPU ns per pair, median of %d runs "
               "of %ld pairs\n", o->reps, o->pairs);
        printf("(hwrt: the %s backend's device pool; same run, same machine)\n", backend);
        printf("%-8s %10s %10s %10s %10s %10s   %7s  %7s  %7s\n", "size", "hwrt", "hwrt_async",
               "glibc", "jemalloc", "mimalloc", "hw/je", "hw/mi", "hw/glibc");
    }
    for (int s = 0; s < NS; s++) {
        double med[NA] = {0};
        for (int k = 0; k < NA; k++)
            if (impl[k].present)
                med[k] = bench_median(&t[((size_t)s * NA + (size_t)k) * (size_t)o->reps], o->reps);
        print_row(o, labels[s], impl, med);
        if (sizes[s] && impl[3].present && med[0] / med[3] > worst) worst = med[0] / med[3];
    }
    ok = ok && worst <= 3.0;
    if (o->json) {
        hwi_jw_close(o->jw);
        hwi_jw_knum(o->jw, "worst_hot_hwrt_over_jemalloc", worst);
        hwi_jw_knum(o->jw, "target", 3.0);
        hwi_jw_kbool(o->jw, "met", ok);
        hwi_jw_close(o->jw);
    }
    else {
        for (int k = 3; k < NA; k++)
            if (!impl[k].present) printf("%s not measured: %s\n", impl[k].name, impl[k].why);
        printf("worst hot-size hwrt/jemalloc ratio: %.2f (target <= 3.00): %s\n", worst,
               ok ? "met" : "NOT met");
    }
    free(t);
    hwrt_stream_destroy(bench_stream);
    hwrt_shutdown();
    return 0;
}
