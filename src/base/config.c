/* Runtime options. The whole schema lives in one table so that hwrt_set_config, the
 * HWRT_*_CONF variables and the error sentences agree on every key. */
#include "config.h"
#include "escape.h"
#include "status.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    const char *key;
    hwi_cfg_type type;
    const char *def;
    double min, max;          /* for INT/DOUBLE */
    const char *help;         /* the accepted form, for error sentences */
} cfg_desc;

static const cfg_desc schema[HWI_CFG_COUNT] = {
    [HWI_CFG_MAX_DEVICE_MEMORY] = {"max_device_memory", HWI_T_SIZE, "0", 0, 0,
                                   "a size such as \"24GB\" or \"512MB\" (0 = no cap)"},
    [HWI_CFG_MAX_SPLIT_SIZE] = {"max_split_size", HWI_T_SIZE, "0", 0, 0,
                                "a size such as \"128MB\" (0 = unlimited)"},
    [HWI_CFG_EXPANDABLE_SEGMENTS] = {"expandable_segments", HWI_T_BOOL, "0", 0, 0, "true or false"},
    [HWI_CFG_GC_THRESHOLD] = {"garbage_collection_threshold", HWI_T_DOUBLE, "0", 0, 1,
                              "a fraction between 0 and 1 (0 = off)"},
    [HWI_CFG_RECORD_ALLOC_SITES] = {"record_alloc_sites", HWI_T_BOOL, "0", 0, 0, "true or false"},
    [HWI_CFG_PINNED_POOL] = {"pinned_pool", HWI_T_BOOL, "1", 0, 0, "true or false"},
    [HWI_CFG_THREAD_CACHE] = {"thread_cache", HWI_T_BOOL, "1", 0, 0, "true or false"},
    [HWI_CFG_ROUNDUP_POWER2_DIVISIONS] = {"roundup_power2_divisions", HWI_T_INT, "0", 0, 64,
                                          "an integer 0 (off) .. 64, a power of two"},
    [HWI_CFG_MEMORY_OFFLOAD] = {"memory_offload", HWI_T_BOOL, "0", 0, 0, "ON or OFF"},
    [HWI_CFG_AUTO_OFFLOAD] = {"auto_offload", HWI_T_BOOL, "1", 0, 0, "true or false"},
    [HWI_CFG_OFFLOAD_CPU_SIZE] = {"offload_cpu_size", HWI_T_SIZE, "0", 0, 0,
                                  "a size such as \"64GB\" (0 = no host budget)"},
    [HWI_CFG_OFFLOAD_DISK_SIZE] = {"offload_disk_size", HWI_T_SIZE, "0", 0, 0,
                                   "a size such as \"100GB\" (0 = no disk tier)"},
    [HWI_CFG_OFFLOAD_PATH] = {"offload_path", HWI_T_STRING, "/var/tmp", 0, 0, "a directory path"},
    [HWI_CFG_ENABLE_PINNED_MEM] = {"enable_pinned_mem", HWI_T_BOOL, "1", 0, 0, "true or false"},
    [HWI_CFG_PREFETCH_DEPTH] = {"prefetch_depth", HWI_T_INT, "2", 0, 64, "an integer 0..64"},
    [HWI_CFG_LAUNCH_BLOCKING] = {"launch_blocking", HWI_T_BOOL, "0", 0, 0, "true or false"},
    [HWI_CFG_CHECK_SYNC] = {"check_sync", HWI_T_BOOL, "0", 0, 0, "true or false"},
    [HWI_CFG_LOG_LEVEL] = {"log_level", HWI_T_INT, "0", 0, 5,
                           "off, error, warn, info, debug or trace, or a number 0 (off) .. 5 "
                           "(trace)"},
    [HWI_CFG_DIST_TIMEOUT] = {"dist_timeout", HWI_T_DOUBLE, "300", 0.001, 1e6,
                              "seconds between 0.001 and 1000000, e.g. \"30\""},
    [HWI_CFG_DIST_FORCE_STAGING] = {"dist_force_staging", HWI_T_BOOL, "0", 0, 0, "true or false"},
};

static _Atomic int64_t ival[HWI_CFG_COUNT];
static _Atomic double dval[HWI_CFG_COUNT];
static char sval[HWI_CFG_COUNT][512];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
_Atomic uint64_t hwi_cfg_gen;    /* bumped by every change */
static pthread_once_t once = PTHREAD_ONCE_INIT;

hwrt_status hwi_parse_size(const char *what, const char *text, uint64_t *out)
{
    if (!text || !*text)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT,
                       "%s: empty size; give bytes or a number with a unit, e.g. \"24GB\"", what);
    const char *p = text;
    while (isspace((unsigned char)*p)) p++;
    if (*p == '-')
        goto bad;
    /* decimal only: strtod would read "0x1e" as 30 and "0x1p4" as 16, easy to misread
     * next to units (docs/RELIABILITY.md) */
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: \"%s\" is hexadecimal; sizes are "
                       "decimal bytes or a decimal number with a unit, e.g. \"4096\" or \"4KB\"",
                       what, text);
    char *end;
    double v = strtod(p, &end);
    if (end == p || !isfinite(v) || v < 0)
        goto bad;
    while (isspace((unsigned char)*end)) end++;
    double mult = 1;
    if (*end) {
        static const struct { const char *u; double m; } units[] = {
            {"b", 1}, {"k", 1024.0}, {"kb", 1024.0}, {"kib", 1024.0}, {"m", 1048576.0},
            {"mb", 1048576.0}, {"mib", 1048576.0}, {"g", 1073741824.0}, {"gb", 1073741824.0},
            {"gib", 1073741824.0}, {"t", 1099511627776.0}, {"tb", 1099511627776.0},
            {"tib", 1099511627776.0}};
        size_t i;
        for (i = 0; i < sizeof units / sizeof units[0]; i++)
            if (!strcasecmp(end, units[i].u)) { mult = units[i].m; break; }
        if (i == sizeof units / sizeof units[0])
            goto bad;
    }
    double bytes = v * mult;
    if (bytes >= 18446744073709551615.0)
        goto bad;
    /* "0.4" would become 0 bytes, which means "no cap" / "off" for most sizes: the
     * opposite of a tiny value. Only a written 0 is 0. */
    if (v > 0 && bytes < 1)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: \"%s\" is less than one byte and "
                       "would round to 0, which means none / no limit; write 0 for that, or a "
                       "size of at least 1 byte such as \"1KB\"", what, text);
    *out = (uint64_t)bytes;
    return HWRT_SUCCESS;
bad:
    return hwi_err(HWRT_ERROR_INVALID_ARGUMENT,
                   "%s: \"%s\" is not a size; give bytes or a number with B, KB, MB, GB or TB "
                   "(binary multiples), e.g. \"24GB\" or \"1.5GB\"", what, text);
}

hwrt_status hwi_parse_bool(const char *what, const char *text, int *out)
{
    static const char *const yes[] = {"1", "true", "on", "yes"};
    static const char *const no[] = {"0", "false", "off", "no"};
    for (int i = 0; text && i < 4; i++) {
        if (!strcasecmp(text, yes[i])) { *out = 1; return HWRT_SUCCESS; }
        if (!strcasecmp(text, no[i])) { *out = 0; return HWRT_SUCCESS; }
    }
    return hwi_err(HWRT_ERROR_INVALID_ARGUMENT,
                   "%s: \"%s\" is not a boolean; use true/false, on/off, yes/no or 1/0",
                   what, text ? text : "(null)");
}

uint64_t hwi_env_count(const char *name, uint64_t lo, uint64_t hi, uint64_t def)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (isdigit((unsigned char)v[0]) && !*end && !errno && n >= lo && n <= hi)
        return n;
    fprintf(stderr, "[hwrt warn] %s=\"%s\" is not a whole number in %llu..%llu; using the "
            "default (%llu)\n", name, v, (unsigned long long)lo, (unsigned long long)hi,
            (unsigned long long)def);
    return def;
}

int hwi_env_flag(const char *name, int def)
{
    const char *v = getenv(name);
    int on;
    if (!v || !*v)
        return def;
    if (hwi_parse_bool(name, v, &on) == HWRT_SUCCESS)
        return on;
    fprintf(stderr, "[hwrt warn] %s=\"%s\" is not a boolean; use 1/0, true/false, on/off or "
            "yes/no; using the default (%s)\n", name, v, def ? "on" : "off");
    return def;
}

static int find_key(const char *key)
{
    for (int i = 0; i < HWI_CFG_COUNT; i++)
        if (!strcasecmp(schema[i].key, key))
            return i;
    return -1;
}

/* Parse and store one value; on error nothing changes. Caller holds no lock. */
static hwrt_status set_value(int k, const char *value, const char *source)
{
    const cfg_desc *d = &schema[k];
    char what[160];
    snprintf(what, sizeof what, "%s key '%s'", source, d->key);
    if (!value)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: value is NULL; expected %s", what, d->help);
    switch (d->type) {
    case HWI_T_SIZE: {
        uint64_t v;
        HWI_TRY(hwi_parse_size(what, value, &v));
        if (v > (uint64_t)INT64_MAX)
            return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: \"%s\" is too large", what, value);
        atomic_store(&ival[k], (int64_t)v);
        break;
    }
    case HWI_T_BOOL: {
        int v;
        HWI_TRY(hwi_parse_bool(what, value, &v));
        atomic_store(&ival[k], v);
        break;
    }
    case HWI_T_INT: {
        char *end;
        long long v = strtoll(value, &end, 10);
        if (k == HWI_CFG_LOG_LEVEL && (end == value || *end)) {
            static const char *const names[] = {"off", "error", "warn", "info", "debug", "trace"};
            for (int i = 0; i < 6; i++)
                if (!strcasecmp(value, names[i]) || (i == 2 && !strcasecmp(value, "warning"))) {
                    v = i;
                    end = (char *)value + strlen(value);
                }
        }
        if (end == value || *end || v < d->min || v > d->max)
            return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: \"%s\" is %s; expected %s", what,
                           value, end == value || *end ? "not a number (out of range)"
                                                       : "out of range", d->help);
        atomic_store(&ival[k], v);
        break;
    }
    case HWI_T_DOUBLE: {
        char *end;
        double v = strtod(value, &end);
        if (end == value || *end || !(v >= d->min && v <= d->max))
            return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: \"%s\" is %s; expected %s", what,
                           value, end == value || *end ? "not a number (out of range)"
                                                       : "out of range", d->help);
        atomic_store(&dval[k], v);
        break;
    }
    case HWI_T_STRING:
        if (!*value || strlen(value) >= sizeof sval[k])
            return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: \"%.64s\" is empty or too long; "
                           "expected %s of at most %zu characters", what, value, d->help,
                           sizeof sval[k] - 1);
        pthread_mutex_lock(&lock);
        snprintf(sval[k], sizeof sval[k], "%s", value);
        pthread_mutex_unlock(&lock);
        break;
    }
    atomic_fetch_add(&hwi_cfg_gen, 1);
    return HWRT_SUCCESS;
}

static hwrt_status apply_one(const char *source, const char *item)
{
    char key[128];
    const char *colon = strchr(item, ':');
    if (!colon) colon = strchr(item, '=');
    if (!colon || (size_t)(colon - item) >= sizeof key)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT,
                       "%s: entry \"%s\" is not of the form key:value", source, item);
    memcpy(key, item, (size_t)(colon - item));
    key[colon - item] = 0;
    int k = find_key(key);
    if (k < 0) {
        char keys[1024] = "";
        for (int i = 0; i < HWI_CFG_COUNT; i++)
            snprintf(keys + strlen(keys), sizeof keys - strlen(keys), "%s%s", i ? ", " : "",
                     schema[i].key);
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: unknown key '%s' in entry \"%s\"; "
                       "the keys are %s", source, key, item, keys);
    }
    return set_value(k, colon + 1, source);
}

static void load_defaults(void)
{
    for (int k = 0; k < HWI_CFG_COUNT; k++) {
        const cfg_desc *d = &schema[k];
        switch (d->type) {
        case HWI_T_DOUBLE: atomic_store(&dval[k], atof(d->def)); break;
        case HWI_T_STRING: snprintf(sval[k], sizeof sval[k], "%s", d->def); break;
        default: atomic_store(&ival[k], atoll(d->def)); break;
        }
    }
}

/* Env errors cannot be returned from here: each bad value gets one warning on stderr
 * (whatever the log level: the user asked for something that is not happening) naming
 * the variable, the value and the accepted form, and the key keeps its default. A bad
 * entry of a list spoils only itself. */
static void env_warn(const char *why_raw, int key)
{
    char why[768];                     /* the value is the environment's: no escape codes */
    hwi_term_clean(why, sizeof why, why_raw, -1);
    if (key >= 0)
        fprintf(stderr, "[hwrt warn] %s; '%s' keeps its default (%s)\n", why, schema[key].key,
                schema[key].def);
    else
        fprintf(stderr, "[hwrt warn] %s; it was ignored\n", why);
}

static void load_env(void)
{
    static const struct { const char *env; int key; } single[] = {
        {"HWRT_LAUNCH_BLOCKING", HWI_CFG_LAUNCH_BLOCKING},
        {"HWRT_CHECK_SYNC", HWI_CFG_CHECK_SYNC},
        {"HWRT_LOG_LEVEL", HWI_CFG_LOG_LEVEL},
        {"HWRT_DIST_TIMEOUT", HWI_CFG_DIST_TIMEOUT},
    };
    for (size_t i = 0; i < sizeof single / sizeof single[0]; i++) {
        const char *v = getenv(single[i].env);
        if (v && *v && set_value(single[i].key, v, single[i].env) != HWRT_SUCCESS)
            env_warn(hwrt_last_error(), single[i].key);
    }
    static const char *const lists[] = {"HWRT_ALLOC_CONF", "HWRT_OFFLOAD_CONF"};
    for (int i = 0; i < 2; i++) {
        const char *v = getenv(lists[i]);
        char buf[2048];
        if (!v || !*v)
            continue;
        if (strlen(v) >= sizeof buf) {
            char why[160];
            snprintf(why, sizeof why, "%s is longer than %zu characters (a list of key:value "
                     "entries separated by commas)", lists[i], sizeof buf - 1);
            env_warn(why, -1);
            continue;
        }
        snprintf(buf, sizeof buf, "%s", v);
        char *save = NULL;
        for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
            while (isspace((unsigned char)*item)) item++;
            if (!*item || apply_one(lists[i], item) == HWRT_SUCCESS)
                continue;
            const char *colon = strpbrk(item, ":=");
            char key[128] = "";
            if (colon && (size_t)(colon - item) < sizeof key) memcpy(key, item, (size_t)(colon - item));
            env_warn(hwrt_last_error(), key[0] ? find_key(key) : -1);
        }
    }
}

/* Set while the calling thread loads the configuration: anything that reads an option
 * meanwhile (an error sentence asks for the log level) gets the defaults loaded so far
 * instead of re-entering pthread_once, which would wait for itself forever. */
static _Thread_local int loading;

static void init_once(void)
{
    loading = 1;
    load_defaults();
    load_env();
    loading = 0;
}

static atomic_int ready;

/* Every read of an option comes through here (the dispatch path and the pool's fast
 * path included): one relaxed-acquire load once initialised, pthread_once only before. */
static inline void ensure(void)
{
    if (__builtin_expect(!atomic_load_explicit(&ready, memory_order_acquire), 0)) {
        if (loading)
            return;
        pthread_once(&once, init_once);
        atomic_store_explicit(&ready, 1, memory_order_release);
    }
}

int64_t hwi_cfg_int(hwi_cfg_key k) { ensure(); return atomic_load(&ival[k]); }
double hwi_cfg_double(hwi_cfg_key k) { ensure(); return atomic_load(&dval[k]); }
uint64_t hwi_cfg_generation(void) { ensure(); return atomic_load(&hwi_cfg_gen); }

void hwi_cfg_string(hwi_cfg_key k, char *buf, size_t len)
{
    ensure();
    pthread_mutex_lock(&lock);
    snprintf(buf, len, "%s", sval[k]);
    pthread_mutex_unlock(&lock);
}

hwrt_status hwrt_set_config(const char *key, const char *value)
{
    ensure();
    if (!key)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_set_config: key is NULL");
    int k = find_key(key);
    if (k < 0)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT,
                       "hwrt_set_config: unknown key '%s'; see hwrt_set_config in hwrt_core.h "
                       "for the keys (e.g. max_device_memory, memory_offload)", key);
    return set_value(k, value, "hwrt_set_config");
}

hwrt_status hwrt_get_config(const char *key, char *buf, size_t len)
{
    ensure();
    if (!key || !buf || !len)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_get_config: key and buf must be given");
    int k = find_key(key);
    if (k < 0)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_get_config: unknown key '%s'", key);
    int n;
    switch (schema[k].type) {
    case HWI_T_DOUBLE: n = snprintf(buf, len, "%g", hwi_cfg_double(k)); break;
    case HWI_T_STRING: {
        char tmp[512];
        hwi_cfg_string(k, tmp, sizeof tmp);
        n = snprintf(buf, len, "%s", tmp);
        break;
    }
    default: n = snprintf(buf, len, "%lld", (long long)hwi_cfg_int(k)); break;
    }
    if (n < 0 || (size_t)n >= len)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT,
                       "hwrt_get_config: buffer of %zu bytes is too small for '%s' (needs %d)",
                       len, key, n + 1);
    return HWRT_SUCCESS;
}
