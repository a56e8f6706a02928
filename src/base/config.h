/* Runtime options: one schema for every key (type, default, accepted form), values set
 * through hwrt_set_config, HWRT_ALLOC_CONF, HWRT_OFFLOAD_CONF and a few single env
 * variables. Modules read values with hwi_cfg_*; reads are lock-free. */
#ifndef HWI_CONFIG_H
#define HWI_CONFIG_H

#include "hwrt.h"

#include <stdatomic.h>
#include <stdint.h>

typedef enum hwi_cfg_key {
    /* allocator */
    HWI_CFG_MAX_DEVICE_MEMORY,
    HWI_CFG_MAX_SPLIT_SIZE,
    HWI_CFG_EXPANDABLE_SEGMENTS,
    HWI_CFG_GC_THRESHOLD,
    HWI_CFG_RECORD_ALLOC_SITES,
    HWI_CFG_PINNED_POOL,
    HWI_CFG_THREAD_CACHE,
    HWI_CFG_ROUNDUP_POWER2_DIVISIONS,
    /* offload */
    HWI_CFG_MEMORY_OFFLOAD,
    HWI_CFG_AUTO_OFFLOAD,
    HWI_CFG_OFFLOAD_CPU_SIZE,
    HWI_CFG_OFFLOAD_DISK_SIZE,
    HWI_CFG_OFFLOAD_PATH,
    HWI_CFG_ENABLE_PINNED_MEM,
    HWI_CFG_PREFETCH_DEPTH,
    /* execution */
    HWI_CFG_LAUNCH_BLOCKING,
    HWI_CFG_CHECK_SYNC,
    HWI_CFG_LOG_LEVEL,
    /* distributed (src/distributed) */
    HWI_CFG_DIST_TIMEOUT,
    HWI_CFG_DIST_FORCE_STAGING,
    HWI_CFG_COUNT
} hwi_cfg_key;

typedef enum { HWI_T_SIZE, HWI_T_BOOL, HWI_T_INT, HWI_T_DOUBLE, HWI_T_STRING } hwi_cfg_type;

int64_t hwi_cfg_int(hwi_cfg_key k);      /* sizes, bools (0/1) and ints */
double hwi_cfg_double(hwi_cfg_key k);
/* Copies a string value into buf. */
void hwi_cfg_string(hwi_cfg_key k, char *buf, size_t len);
/* Bumped on every successful set; lets modules cache derived state. */
uint64_t hwi_cfg_generation(void);
/* The generation without loading the configuration first (0 before it is loaded): for
 * hot paths that compare against a generation they got from hwi_cfg_generation. */
extern _Atomic uint64_t hwi_cfg_gen;
static inline uint64_t hwi_cfg_generation_peek(void)
{
    return atomic_load_explicit(&hwi_cfg_gen, memory_order_relaxed);
}

/* Parsers shared by every place that reads a size or a bool from text.
 * On failure they return INVALID_ARGUMENT with a sentence naming `what` and the form. */
hwrt_status hwi_parse_size(const char *what, const char *text, uint64_t *out);
hwrt_status hwi_parse_bool(const char *what, const char *text, int *out);

/* Environment variables outside the option table (the profiler's, the sim registry's):
 * unset or empty gives def silently; a bad value gives one warning on stderr naming the
 * variable, the value and the accepted form, and def. */
uint64_t hwi_env_count(const char *name, uint64_t lo, uint64_t hi, uint64_t def);
int hwi_env_flag(const char *name, int def);

#endif
