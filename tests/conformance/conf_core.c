/* Status names, version, the error sentence, configuration keys and values. */
#include "conf.h"

static void status_names(void)
{
    CASE("status_name");
    static const struct { hwrt_status st; const char *name; } names[] = {
        {HWRT_SUCCESS, "HWRT_SUCCESS"},
        {HWRT_ERROR_INVALID_ARGUMENT, "HWRT_ERROR_INVALID_ARGUMENT"},
        {HWRT_ERROR_INVALID_DEVICE, "HWRT_ERROR_INVALID_DEVICE"},
        {HWRT_ERROR_NO_DEVICE, "HWRT_ERROR_NO_DEVICE"},
        {HWRT_ERROR_UNAVAILABLE, "HWRT_ERROR_UNAVAILABLE"},
        {HWRT_ERROR_OUT_OF_MEMORY, "HWRT_ERROR_OUT_OF_MEMORY"},
        {HWRT_ERROR_HOST_OUT_OF_MEMORY, "HWRT_ERROR_HOST_OUT_OF_MEMORY"},
        {HWRT_ERROR_NOT_READY, "HWRT_ERROR_NOT_READY"},
        {HWRT_ERROR_INVALID_HANDLE, "HWRT_ERROR_INVALID_HANDLE"},
        {HWRT_ERROR_NOT_SUPPORTED, "HWRT_ERROR_NOT_SUPPORTED"},
        {HWRT_ERROR_NOT_PERMITTED, "HWRT_ERROR_NOT_PERMITTED"},
        {HWRT_ERROR_DEVICE_BUSY, "HWRT_ERROR_DEVICE_BUSY"},
        {HWRT_ERROR_DEVICE_FAULT, "HWRT_ERROR_DEVICE_FAULT"},
        {HWRT_ERROR_DIST, "HWRT_ERROR_DIST"},
        {HWRT_ERROR_IO, "HWRT_ERROR_IO"},
        {HWRT_ERROR_INTERNAL, "HWRT_ERROR_INTERNAL"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        EXPECT(!strcmp(hwrt_status_name(names[i].st), names[i].name));
    EXPECT(hwrt_status_name((hwrt_status)999) != NULL);
    EXPECT(hwrt_status_name((hwrt_status)-1) != NULL);
    EXPECT(strcmp(hwrt_status_name((hwrt_status)999), "HWRT_SUCCESS") != 0);
}

static void version_and_error(void)
{
    CASE("version");
    const char *v = hwrt_version();
    int a, b, c;
    EXPECT(v && sscanf(v, "%d.%d.%d", &a, &b, &c) == 3);
    CASE("last_error");
    EXPECT(hwrt_last_error() != NULL);
    FAILS(hwrt_set_config("no_such_key", "1"), HWRT_ERROR_INVALID_ARGUMENT, "no_such_key");
    EXPECT(strlen(hwrt_last_error()) > 20);          /* a sentence, not a code */
}

static void config_roundtrip(const char *key, const char *set, const char *want)
{
    char buf[256];
    OK(hwrt_set_config(key, set));
    OK(hwrt_get_config(key, buf, sizeof buf));
    if (strcmp(buf, want)) {
        t_failed++;
        fprintf(stderr, "FAIL [config] %s set \"%s\": read \"%s\", want \"%s\"\n", key, set, buf,
                want);
    } else {
        t_passed++;
    }
}

static void config_keys(void)
{
    CASE("config");
    char old[256], buf[256];
    /* sizes, in every accepted form */
    OK(hwrt_get_config("max_split_size", old, sizeof old));
    config_roundtrip("max_split_size", "128MB", "134217728");
    config_roundtrip("max_split_size", "1.5GB", "1610612736");
    config_roundtrip("max_split_size", "4096", "4096");
    config_roundtrip("max_split_size", "2kb", "2048");
    FAILS(hwrt_set_config("max_split_size", "12XB"), HWRT_ERROR_INVALID_ARGUMENT, "12XB");
    FAILS(hwrt_set_config("max_split_size", "-5MB"), HWRT_ERROR_INVALID_ARGUMENT, "max_split_size");
    FAILS(hwrt_set_config("max_split_size", ""), HWRT_ERROR_INVALID_ARGUMENT, "max_split_size");
    OK(hwrt_get_config("max_split_size", buf, sizeof buf));
    EXPECT(!strcmp(buf, "2048"));                 /* the old value stays in force */
    OK(hwrt_set_config("max_split_size", old));
    /* booleans */
    const char *bools[] = {"expandable_segments", "record_alloc_sites", "auto_offload",
                           "enable_pinned_mem", "launch_blocking", "check_sync",
                           "memory_offload"};
    for (size_t i = 0; i < sizeof bools / sizeof bools[0]; i++) {
        OK(hwrt_get_config(bools[i], old, sizeof old));
        config_roundtrip(bools[i], "true", "1");
        config_roundtrip(bools[i], "OFF", "0");
        config_roundtrip(bools[i], "yes", "1");
        config_roundtrip(bools[i], "0", "0");
        FAILS(hwrt_set_config(bools[i], "maybe"), HWRT_ERROR_INVALID_ARGUMENT, "maybe");
        OK(hwrt_set_config(bools[i], old));
    }
    /* the seed's ON/OFF form */
    config_roundtrip("memory_offload", "ON", "1");
    config_roundtrip("memory_offload", "OFF", "0");
    /* integers and fractions with ranges */
    config_roundtrip("prefetch_depth", "4", "4");
    FAILS(hwrt_set_config("prefetch_depth", "65"), HWRT_ERROR_INVALID_ARGUMENT, "65");
    FAILS(hwrt_set_config("prefetch_depth", "two"), HWRT_ERROR_INVALID_ARGUMENT, "two");
    config_roundtrip("prefetch_depth", "2", "2");
    config_roundtrip("log_level", "0", "0");
    FAILS(hwrt_set_config("log_level", "9"), HWRT_ERROR_INVALID_ARGUMENT, "log_level");
    config_roundtrip("garbage_collection_threshold", "0.5", "0.5");
    FAILS(hwrt_set_config("garbage_collection_threshold", "1.5"), HWRT_ERROR_INVALID_ARGUMENT,
          "garbage_collection_threshold");
    config_roundtrip("garbage_collection_threshold", "0", "0");
    /* sizes and strings of the offload tier */
    OK(hwrt_get_config("offload_path", old, sizeof old));
    config_roundtrip("offload_path", "/tmp/hwrt-conf", "/tmp/hwrt-conf");
    OK(hwrt_set_config("offload_path", old));
    config_roundtrip("offload_cpu_size", "1GB", "1073741824");
    config_roundtrip("offload_cpu_size", "0", "0");
    config_roundtrip("offload_disk_size", "0", "0");
    config_roundtrip("max_device_memory", "0", "0");
    /* bad keys, NULLs, buffers */
    FAILS(hwrt_set_config("max_device_memoryy", "1GB"), HWRT_ERROR_INVALID_ARGUMENT,
          "max_device_memoryy");
    FAILS(hwrt_set_config(NULL, "1"), HWRT_ERROR_INVALID_ARGUMENT, "NULL");
    FAILS(hwrt_set_config("max_split_size", NULL), HWRT_ERROR_INVALID_ARGUMENT, "max_split_size");
    FAILS(hwrt_get_config("nope", buf, sizeof buf), HWRT_ERROR_INVALID_ARGUMENT, "nope");
    FAILS(hwrt_get_config("max_split_size", NULL, 8), HWRT_ERROR_INVALID_ARGUMENT, "buf");
    OK(hwrt_set_config("offload_cpu_size", "1GB"));
    FAILS(hwrt_get_config("offload_cpu_size", buf, 4), HWRT_ERROR_INVALID_ARGUMENT, "too small");
    OK(hwrt_set_config("offload_cpu_size", "0"));
}

void conf_core(void)
{
    status_names();
    version_and_error();
    config_keys();
}
