/* Simulated NPU configuration from the environment:
 *   HWRT_SIM_DEVICES      number of devices (1..64, default 2)
 *   HWRT_SIM_MEMORY       capacity per device, one size or a comma list ("32GB,16GB");
 *                         default 32GB
 *   HWRT_SIM_OVERHEAD     context overhead per opened device (default 300MB)
 *   HWRT_SIM_LINK_GBPS    host link bandwidth in GB/s for pinned copies, 0.01..10000
 *                         (default 0 = off)
 *   HWRT_SIM_PAGEABLE_GBPS  bandwidth for pageable copies, 0.01..10000 (default: half the
 *                         link)
 *   HWRT_SIM_COMPUTE_UNITS  reported compute units (default 32)
 *   HWRT_SIM_SPIN_US      adaptive spin window of engines and waiters (default 50)
 *   HWRT_SIM_FAULTS       fault injection plan (sim_fault.c, docs/RELIABILITY.md)
 * A bad value makes the backend unavailable with a reason naming the variable. The
 * environment is read again whenever no sim device is open. */
#include "sim.h"
#include "sim_sched.h"
#include "../../base/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static sim_config cfg;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

uint64_t sim_now_ns(void)
{
    uint64_t v;
    if (sim_sched_now(&v))            /* deterministic simulation: the virtual clock */
        return v;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void sim_wait_until_ns(uint64_t deadline)
{
    if (sim_sched_wait_until(deadline))
        return;
    for (;;) {
        uint64_t now = sim_now_ns();
        if (now >= deadline)
            return;
        uint64_t left = deadline - now;
        if (left > 200000) {          /* sleep most of a long wait, spin the tail */
            struct timespec ts = {0, (long)(left - 100000)};
            if (ts.tv_nsec >= 1000000000L) { ts.tv_sec = ts.tv_nsec / 1000000000L; ts.tv_nsec %= 1000000000L; }
            nanosleep(&ts, NULL);
        }
    }
}

static int parse_double(const char *name, double lo, double hi, double def, double *out,
                        char *reason, size_t rlen)
{
    const char *v = getenv(name);
    if (!v || !*v) { *out = def; return 1; }
    char *end;
    double d = strtod(v, &end);
    if (end == v || *end || !(d >= lo && d <= hi)) {
        snprintf(reason, rlen, "%s=\"%s\" is invalid; expected a number in %g..%g", name, v, lo, hi);
        return 0;
    }
    *out = d;
    return 1;
}

/* A link bandwidth: 0 (not modelled) or SIM_MIN_GBPS..10000 GB/s. Below that a 4 KiB copy
 * would take an hour (1e-9), or the copy time overflows its conversion (1e-300). */
#define SIM_MIN_GBPS 0.01
static int parse_gbps(const char *name, double def, double *out, char *reason, size_t rlen)
{
    if (!parse_double(name, 0, 10000, def, out, reason, rlen)) return 0;
    const char *v = getenv(name);           /* the default (half the link) is not checked */
    if (v && *v && *out > 0 && *out < SIM_MIN_GBPS) {
        snprintf(reason, rlen, "%s=\"%s\" is invalid; expected 0 (no bandwidth model) or "
                 "%g..10000 GB/s", name, v, SIM_MIN_GBPS);
        return 0;
    }
    return 1;
}

static int parse_size_env(const char *name, const char *text, size_t *out, char *reason, size_t rlen)
{
    uint64_t v;
    if (hwi_parse_size(name, text, &v) != HWRT_SUCCESS || v < (1u << 20)) {
        snprintf(reason, rlen, "%s=\"%s\" is invalid; expected a size of at least 1MB such as "
                 "\"32GB\"", name, text);
        return 0;
    }
    *out = (size_t)v;
    return 1;
}

static int load(sim_config *c, char *reason, size_t rlen)
{
    double d;
    if (!parse_double("HWRT_SIM_DEVICES", 1, SIM_MAX_DEVICES, 2, &d, reason, rlen)) return 0;
    c->devices = (int)d;
    if (d != (double)c->devices) {
        snprintf(reason, rlen, "HWRT_SIM_DEVICES must be a whole number of devices");
        return 0;
    }
    const char *mem = getenv("HWRT_SIM_MEMORY");
    if (!mem || !*mem) mem = "32GB";
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", mem);
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == SIM_MAX_DEVICES) break;
        if (!parse_size_env("HWRT_SIM_MEMORY", tok, &c->memory[n], reason, rlen)) return 0;
        n++;
    }
    if (n == 0) { snprintf(reason, rlen, "HWRT_SIM_MEMORY is empty"); return 0; }
    for (int i = n; i < SIM_MAX_DEVICES; i++) c->memory[i] = c->memory[n - 1];
    const char *ov = getenv("HWRT_SIM_OVERHEAD");
    if (ov && *ov) {
        uint64_t v;
        if (hwi_parse_size("HWRT_SIM_OVERHEAD", ov, &v) != HWRT_SUCCESS) {
            snprintf(reason, rlen, "HWRT_SIM_OVERHEAD=\"%s\" is invalid; expected a size such as "
                     "\"300MB\"", ov);
            return 0;
        }
        c->overhead = (size_t)v;
    } else {
        c->overhead = 300u << 20;
    }
    for (int i = 0; i < c->devices; i++)
        if (c->overhead >= c->memory[i]) {
            snprintf(reason, rlen, "HWRT_SIM_OVERHEAD (%zu bytes) must be below the device "
                     "capacity (%zu bytes)", c->overhead, c->memory[i]);
            return 0;
        }
    if (!parse_gbps("HWRT_SIM_LINK_GBPS", 0, &c->link_gbps, reason, rlen)) return 0;
    if (!parse_gbps("HWRT_SIM_PAGEABLE_GBPS", c->link_gbps / 2, &c->pageable_gbps, reason, rlen))
        return 0;
    if (!parse_double("HWRT_SIM_COMPUTE_UNITS", 1, 100000, 32, &d, reason, rlen)) return 0;
    c->compute_units = (int)d;
    if (!parse_double("HWRT_SIM_SPIN_US", 0, 1000000, 50, &d, reason, rlen)) return 0;
    c->spin_ns = (uint64_t)(d * 1000);
    return sim_fault_load(reason, rlen, 0);    /* validate HWRT_SIM_FAULTS (sim_fault.c) */
}

extern int sim_open_devices(void);

hwrt_status sim_config_get(const sim_config **out, char *reason, size_t rlen)
{
    pthread_mutex_lock(&mu);
    int ok = 1;
    if (sim_open_devices() == 0 || cfg.devices == 0) {
        sim_config c;
        memset(&c, 0, sizeof c);
        ok = load(&c, reason, rlen);
        /* engine threads of a device being opened read cfg: rewrite it only on a change */
        if (ok && memcmp(&cfg, &c, sizeof c)) cfg = c;
    }
    pthread_mutex_unlock(&mu);
    *out = &cfg;
    return ok ? HWRT_SUCCESS : HWRT_ERROR_UNAVAILABLE;
}
