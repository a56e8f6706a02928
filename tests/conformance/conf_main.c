/* hwrt-conformance --backend NAME [--only SECTION]
 * Runs every section against one backend and ends with "N passed, N failed, N unsupported".
 * Exit status: 0 all passed, 1 a failure, 77 the backend is not available here. */
#include "conf.h"

#include <stdarg.h>
#include <time.h>

HARNESS_COUNTERS;
int c_unsupported;
const char *c_backend = "sim";
int c_ndev;

void unsupported(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("unsupported: [%s] ", t_case);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    c_unsupported++;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

uint32_t conf_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

float conf_randf(float lo, float hi)
{
    return lo + (hi - lo) * (float)(conf_rand() & 0xffffff) / (float)0x1000000;
}

void conf_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int conf_wait_until(int (*cond)(void *), void *arg, int timeout_ms)
{
    for (int i = 0; i < timeout_ms * 10; i++) {
        if (cond(arg)) return 1;
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    return cond(arg);
}

void conf_gate_fn(void *arg)
{
    conf_gate *g = arg;
    __atomic_store_n(&g->entered, 1, __ATOMIC_SEQ_CST);
    while (!__atomic_load_n(&g->open, __ATOMIC_SEQ_CST)) conf_sleep_ms(1);
}

void conf_gate_open(conf_gate *g) { __atomic_store_n(&g->open, 1, __ATOMIC_SEQ_CST); }

static int entered(void *g) { return __atomic_load_n(&((conf_gate *)g)->entered, __ATOMIC_SEQ_CST); }

int conf_gate_wait_entered(conf_gate *g, int timeout_ms) { return conf_wait_until(entered, g, timeout_ms); }

static const struct { const char *name; void (*fn)(void); } sections[] = {
    {"core", conf_core},     {"device", conf_device}, {"memory", conf_memory},
    {"copy", conf_copy},     {"stream", conf_stream}, {"event", conf_event},
    {"tensor", conf_tensor}, {"ops", conf_ops},       {"dlpack", conf_dlpack},
    {"shutdown", conf_shutdown},
};

int main(int argc, char **argv)
{
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--backend") && i + 1 < argc) c_backend = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else {
            fprintf(stderr, "usage: hwrt-conformance --backend NAME [--only SECTION]\n");
            return 2;
        }
    }
    hwrt_backend_desc d;
    if (hwrt_backend_info(c_backend, &d) != HWRT_SUCCESS) {
        fprintf(stderr, "hwrt-conformance: %s\n", hwrt_last_error());
        return 2;
    }
    if (!d.available || d.device_count == 0) {
        printf("unsupported: backend %s is not available here: %s\n", c_backend, d.reason);
        return 77;
    }
    c_ndev = d.device_count;
    printf("conformance of backend %s (%d device(s))\n", c_backend, c_ndev);
    if (hwrt_set_device(c_backend, 0) != HWRT_SUCCESS) {
        fprintf(stderr, "hwrt-conformance: hwrt_set_device(%s, 0): %s\n", c_backend,
                hwrt_last_error());
        return 1;
    }
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        if (only && strcmp(only, sections[i].name)) continue;
        int f0 = t_failed, p0 = t_passed;
        CASE(sections[i].name);
        sections[i].fn();
        printf("  %-9s %4d passed, %d failed\n", sections[i].name, t_passed - p0, t_failed - f0);
        fflush(stdout);
    }
    hwrt_shutdown();
    printf("%d passed, %d failed, %d unsupported\n", t_passed, t_failed, c_unsupported);
    return t_failed ? 1 : 0;
}
