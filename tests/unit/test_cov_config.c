/* Configuration parsing (src/base/config.c), issue 25 item 3: every malformed value is
 * refused with INVALID_ARGUMENT and a sentence naming the key, the value and the accepted
 * form, and leaves the option as it was; through the environment (HWRT_ALLOC_CONF,
 * HWRT_OFFLOAD_CONF, HWRT_LOG_LEVEL, ...), a bad entry warns once on stderr, keeps that
 * key's default and spoils nothing else. The environment is read once, at the first
 * option read, so it is set here before any hwrt call (stderr goes to a file meanwhile). */
#include "harness.h"
#include "harness_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char got[600];

static const char *get(const char *key)
{
    if (hwrt_get_config(key, got, sizeof got) != HWRT_SUCCESS) return "(error)";
    return got;
}

/* hwrt_set_config(key, value) fails naming frag and leaves key's value as it was. */
#define REFUSED(key, value, frag)                                                        \
    do {                                                                                 \
        char before_[600];                                                               \
        snprintf(before_, sizeof before_, "%s", get(key));                               \
        FAILS(hwrt_set_config(key, value), HWRT_ERROR_INVALID_ARGUMENT, frag);           \
        EXPECT(strcmp(get(key), before_) == 0);                                          \
    } while (0)

int main(void)
{
    char long_list[2049];              /* 2048 characters: one more than a list takes */
    memset(long_list, 'x', sizeof long_list - 1);
    long_list[sizeof long_list - 1] = 0;
    /* keys of 128 characters and more are no key (a 128-byte buffer); 127 is an unknown one
     * (a sweep of config.c: `>= sizeof key` made `>`, and `!colon || ...` made `&&`) */
    char k128[129], k127[128], alloc_conf[600];
    memset(k128, 'k', 128), k128[128] = 0;
    memset(k127, 'q', 127), k127[127] = 0;
    snprintf(alloc_conf, sizeof alloc_conf, " max_split_size:128MB, ,nokey, bogus_key:1, "
             "pinned_pool:maybe,max_device_memory:lots,max_device_memory=3GB,%s:1,%s:1", k128,
             k127);
    setenv("HWRT_ALLOC_CONF", alloc_conf, 1);
    setenv("HWRT_OFFLOAD_CONF", long_list, 1);
    setenv("HWRT_LOG_LEVEL", "loud", 1);
    setenv("HWRT_DIST_TIMEOUT", "0", 1);
    setenv("HWRT_CHECK_SYNC", "perhaps", 1);
    setenv("HWRT_LAUNCH_BLOCKING", "", 1);               /* empty: not set */
    err_begin();
    char buf[64];
    hwrt_status first = hwrt_get_config("max_split_size", buf, sizeof buf);
    const char *warns = err_end();

    TEST_CASE("environment: good entries apply, bad ones warn and keep the default");
    EXPECT(first == HWRT_SUCCESS && strcmp(buf, "134217728") == 0);
    EXPECT(strcmp(get("max_device_memory"), "3221225472") == 0);
    EXPECT(strcmp(get("pinned_pool"), "1") == 0);
    EXPECT(strcmp(get("log_level"), "0") == 0);
    EXPECT(strcmp(get("dist_timeout"), "300") == 0);
    EXPECT(strcmp(get("check_sync"), "0") == 0);
    EXPECT(strcmp(get("launch_blocking"), "0") == 0);
    static const char *const want[] = {
        "HWRT_ALLOC_CONF: entry \"nokey\" is not of the form key:value; it was ignored",
        "HWRT_ALLOC_CONF: unknown key 'bogus_key' in entry \"bogus_key:1\"; the keys are "
        "max_device_memory, max_split_size",
        "\"maybe\" is not a boolean; use true/false, on/off, yes/no or 1/0; 'pinned_pool' keeps "
        "its default (1)",
        "\"lots\" is not a size; give bytes or a number with B, KB, MB, GB or TB (binary "
        "multiples), e.g. \"24GB\" or \"1.5GB\"; 'max_device_memory' keeps its default (0)",
        "HWRT_OFFLOAD_CONF is longer than 2047 characters",
        "HWRT_LOG_LEVEL key 'log_level': \"loud\" is not a number (out of range); expected off, "
        "error, warn",
        "HWRT_DIST_TIMEOUT key 'dist_timeout': \"0\" is out of range; expected seconds between "
        "0.001 and 1000000",
        "HWRT_CHECK_SYNC key 'check_sync': \"perhaps\" is not a boolean",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        if (!strstr(warns, want[i])) fprintf(stderr, "missing warning: %s\n", want[i]);
        EXPECT(strstr(warns, want[i]) != NULL);
    }
    char w128[300], w127[300];
    snprintf(w128, sizeof w128, "entry \"%s:1\" is not of the form key:value", k128);
    snprintf(w127, sizeof w127, "unknown key '%s'", k127);
    EXPECT(strstr(warns, w128) != NULL);
    EXPECT(strstr(warns, w127) != NULL);
    EXPECT(strstr(warns, "HWRT_LAUNCH_BLOCKING") == NULL);
    if (t_failed) fprintf(stderr, "warnings were:\n%s", warns);

    TEST_CASE("hwrt_set_config: keys");
    FAILS(hwrt_set_config(NULL, "1"), HWRT_ERROR_INVALID_ARGUMENT, "key is NULL");
    FAILS(hwrt_set_config("no_such_key", "1"), HWRT_ERROR_INVALID_ARGUMENT,
          "unknown key 'no_such_key'");
    REFUSED("max_split_size", NULL, "hwrt_set_config key 'max_split_size': value is NULL; "
            "expected a size such as \"128MB\"");
    OK(hwrt_set_config("MAX_SPLIT_SIZE", "256mb"));      /* keys are case-insensitive */
    EXPECT(strcmp(get("max_split_size"), "268435456") == 0);

    TEST_CASE("sizes");
    REFUSED("max_split_size", "", "empty size");
    REFUSED("max_split_size", "  -5MB", "\"  -5MB\" is not a size");
    REFUSED("max_split_size", "0x10", "is hexadecimal");
    REFUSED("max_split_size", "abc", "\"abc\" is not a size");
    REFUSED("max_split_size", "12 parsecs", "\"12 parsecs\" is not a size");
    REFUSED("max_split_size", "inf", "\"inf\" is not a size");
    /* not a number (issue 25, seed 3007: `!isfinite(v) || v < 0` made `&&` took "nan"
     * and "nanGB" as sizes, converting NaN to an integer) */
    REFUSED("max_split_size", "nan", "\"nan\" is not a size");
    REFUSED("max_split_size", "nanGB", "\"nanGB\" is not a size");
    REFUSED("max_split_size", "1e30TB", "\"1e30TB\" is not a size");
    /* 2^64 bytes exactly: converted to an integer it would read 0, no limit (a sweep of
     * config.c, thirteenth session: `bytes >= 2^64` made `>` took it) */
    REFUSED("max_split_size", "16777216TB", "\"16777216TB\" is not a size");
    REFUSED("max_split_size", "18446744073709551616", "is not a size");
    REFUSED("max_split_size", "0.4", "less than one byte");
    REFUSED("max_split_size", "9.3e18", "\"9.3e18\" is too large");
    static const struct { const char *in, *out; } sizes[] = {
        {"1.5 GB", "1610612736"}, {"4kib", "4096"}, {"2K", "2048"}, {"3m", "3145728"},
        {"1MiB", "1048576"}, {"1g", "1073741824"}, {"1GiB", "1073741824"}, {"1t", "1099511627776"},
        {"2TB", "2199023255552"}, {"1TiB", "1099511627776"}, {"512b", "512"}, {" 7", "7"},
        {"0", "0"}, {"1", "1"}, {"1b", "1"}, {"1.5", "1"}};   /* one byte is a size */
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        OK(hwrt_set_config("max_split_size", sizes[i].in));
        if (strcmp(get("max_split_size"), sizes[i].out))
            fprintf(stderr, "size \"%s\" read as %s, want %s\n", sizes[i].in, got, sizes[i].out);
        EXPECT(strcmp(get("max_split_size"), sizes[i].out) == 0);
    }

    TEST_CASE("booleans, integers, fractions, strings");
    REFUSED("thread_cache", "maybe", "\"maybe\" is not a boolean");
    OK(hwrt_set_config("thread_cache", "NO"));
    EXPECT(strcmp(get("thread_cache"), "0") == 0);
    OK(hwrt_set_config("thread_cache", "Yes"));
    EXPECT(strcmp(get("thread_cache"), "1") == 0);
    REFUSED("roundup_power2_divisions", "65", "\"65\" is out of range; expected an integer 0");
    REFUSED("roundup_power2_divisions", "-1", "\"-1\" is out of range");
    REFUSED("roundup_power2_divisions", "8x", "\"8x\" is not a number");
    OK(hwrt_set_config("roundup_power2_divisions", "8"));
    EXPECT(strcmp(get("roundup_power2_divisions"), "8") == 0);
    OK(hwrt_set_config("roundup_power2_divisions", "0"));
    OK(hwrt_set_config("log_level", "warning"));
    EXPECT(strcmp(get("log_level"), "2") == 0);
    OK(hwrt_set_config("log_level", "TRACE"));
    EXPECT(strcmp(get("log_level"), "5") == 0);
    REFUSED("log_level", "6", "\"6\" is out of range");
    REFUSED("log_level", "chatty", "\"chatty\" is not a number");
    /* the level names are log_level's only (a sweep of config.c: `k == LOG_LEVEL && ...`
     * made `||` took "warn" as 2 for every integer key) */
    REFUSED("prefetch_depth", "warn", "\"warn\" is not a number");
    REFUSED("roundup_power2_divisions", "off", "\"off\" is not a number");
    OK(hwrt_set_config("log_level", "off"));
    EXPECT(strcmp(get("log_level"), "0") == 0);
    REFUSED("garbage_collection_threshold", "1.5", "\"1.5\" is out of range; expected a fraction");
    REFUSED("garbage_collection_threshold", "nan", "\"nan\" is out of range");
    REFUSED("garbage_collection_threshold", "half", "\"half\" is not a number");
    REFUSED("garbage_collection_threshold", "0.5x", "\"0.5x\" is not a number");
    OK(hwrt_set_config("garbage_collection_threshold", "0.75"));
    EXPECT(strcmp(get("garbage_collection_threshold"), "0.75") == 0);
    OK(hwrt_set_config("garbage_collection_threshold", "0"));
    char longpath[600];
    memset(longpath, 'p', sizeof longpath - 1);
    longpath[sizeof longpath - 1] = 0;
    REFUSED("offload_path", "", "is empty or too long; expected a directory path of at most 511");
    REFUSED("offload_path", longpath, "is empty or too long");
    longpath[512] = 0;                 /* 512 characters: no room for the terminator */
    REFUSED("offload_path", longpath, "is empty or too long");
    longpath[511] = 0;
    OK(hwrt_set_config("offload_path", longpath));
    EXPECT(strcmp(get("offload_path"), longpath) == 0);
    OK(hwrt_set_config("offload_path", "/tmp"));
    EXPECT(strcmp(get("offload_path"), "/tmp") == 0);

    TEST_CASE("hwrt_get_config");
    char small[4];
    FAILS(hwrt_get_config(NULL, small, sizeof small), HWRT_ERROR_INVALID_ARGUMENT,
          "key and buf must be given");
    FAILS(hwrt_get_config("offload_path", NULL, 8), HWRT_ERROR_INVALID_ARGUMENT,
          "key and buf must be given");
    FAILS(hwrt_get_config("offload_path", small, 0), HWRT_ERROR_INVALID_ARGUMENT,
          "key and buf must be given");
    FAILS(hwrt_get_config("nope", small, sizeof small), HWRT_ERROR_INVALID_ARGUMENT,
          "unknown key 'nope'");
    FAILS(hwrt_get_config("offload_path", small, sizeof small), HWRT_ERROR_INVALID_ARGUMENT,
          "buffer of 4 bytes is too small for 'offload_path' (needs 5)");
    FAILS(hwrt_get_config("dist_timeout", small, 3), HWRT_ERROR_INVALID_ARGUMENT,
          "buffer of 3 bytes is too small for 'dist_timeout' (needs 4)");
    FAILS(hwrt_get_config("max_device_memory", small, sizeof small), HWRT_ERROR_INVALID_ARGUMENT,
          "(needs 11)");
    OK(hwrt_shutdown());
    return test_report();
}
