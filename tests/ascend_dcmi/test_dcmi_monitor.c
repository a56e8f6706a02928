/* The ascend backend's monitor slot (src/backends/ascend/ascend_dcmi.c) without an NPU:
 *  - the loader with DCMI absent (a named path, and the default names), with a library
 *    that is not DCMI, and with a driver whose dcmi_init fails (then retried);
 *  - the snapshot from a stand-in libdcmi.so (fake_dcmi.c, a real shared library loaded
 *    with dlopen through HWRT_DCMI_LIBRARY): devices by logical id, chip names, health,
 *    Bus-Id, HBM in MB, the DDR fallback, AICore utilisation with the compute-group flag,
 *    the process table filled to the library's 64 entries, a process query refused or
 *    failing, the card list under its older name;
 *  - the reconciliation: this process's pool figures published through the usage board
 *    (asc_dcmi_publish_usage) and merged into its DCMI entry, on the device
 *    ASCEND_RT_VISIBLE_DEVICES maps the ACL ordinal to;
 *  - the pure logic: MB to bytes, utilisation, health words, ASCEND_RT_VISIBLE_DEVICES;
 *  - hwrt-smi's table, CSV and --explain on that snapshot (tools/hwrt-smi/smi_format.c).
 * Each scenario runs in a child process: the loader runs once per process. */
#include "monitor_check.h"
#include "backends/ascend/ascend_dcmi.h"

#include <dlfcn.h>
#include <stdint.h>

static const char *fake_lib, *fake_old;
static char board[256];

static void csv(FILE *f, const hwrt_smi_snapshot *s, int unused)
{
    smi_print_device_csv(f, s, "index,name,health,pci.bus_id,memory.used,memory.total,"
                         "utilization,driver_version", (smi_csv){0, 1});
    smi_print_process_csv(f, s, "pid,device,used_memory,overhead,reserved,allocated",
                          (smi_csv){0, 0});
}

static void pure(void)
{
    TEST_CASE("pure");
    EXPECT(asc_dcmi_mb(0) == 0);
    EXPECT(asc_dcmi_mb(65536) == (size_t)65536 << 20);
    EXPECT(asc_dcmi_mb(~0ull) == SIZE_MAX);                 /* saturates, never wraps */
    EXPECT(asc_dcmi_mb(SIZE_MAX >> 20) == (SIZE_MAX >> 20) << 20);   /* the largest exact one */
    EXPECT(asc_dcmi_mb((SIZE_MAX >> 20) + 1) == SIZE_MAX);
    EXPECT(asc_dcmi_util_pct(37) == 37.0);
    EXPECT(asc_dcmi_util_pct(100) == 100.0);
    EXPECT(asc_dcmi_util_pct((1u << 9) | 55) == 0.0);       /* compute groups: npu-smi's 0 */
    EXPECT(asc_dcmi_util_pct(101) < 0);
    EXPECT(!strcmp(asc_dcmi_health(0), "OK") && !strcmp(asc_dcmi_health(1), "Warning") &&
           !strcmp(asc_dcmi_health(2), "Alarm") && !strcmp(asc_dcmi_health(3), "Critical") &&
           !strcmp(asc_dcmi_health(4), "UNKNOWN") && !strcmp(asc_dcmi_health(0xffffffffu), "UNKNOWN"));
    unsetenv("ASCEND_RT_VISIBLE_DEVICES");
    EXPECT(asc_dcmi_logic_id(0) == 0 && asc_dcmi_logic_id(5) == 5 && asc_dcmi_logic_id(-1) == -1);
    setenv("ASCEND_RT_VISIBLE_DEVICES", "4,5", 1);
    EXPECT(asc_dcmi_logic_id(0) == 4 && asc_dcmi_logic_id(1) == 5 && asc_dcmi_logic_id(2) == -1);
    setenv("ASCEND_RT_VISIBLE_DEVICES", "3, 7", 1);
    EXPECT(asc_dcmi_logic_id(1) == 7);
    setenv("ASCEND_RT_VISIBLE_DEVICES", "npu0", 1);
    EXPECT(asc_dcmi_logic_id(0) == -1);
    setenv("ASCEND_RT_VISIBLE_DEVICES", "1;2", 1);
    EXPECT(asc_dcmi_logic_id(0) == -1);
    /* a negative or out-of-range id anywhere makes the whole list invalid (the mutants
     * `||` made `&&` in the range check let "-1,3" map ordinal 1 to 3, and "2000000"
     * map ordinal 0 to 2000000) */
    setenv("ASCEND_RT_VISIBLE_DEVICES", "-1,3", 1);
    EXPECT(asc_dcmi_logic_id(1) == -1);
    setenv("ASCEND_RT_VISIBLE_DEVICES", "2000000", 1);
    EXPECT(asc_dcmi_logic_id(0) == -1);
    setenv("ASCEND_RT_VISIBLE_DEVICES", "1000000", 1);
    EXPECT(asc_dcmi_logic_id(0) == 1000000);
    unsetenv("ASCEND_RT_VISIBLE_DEVICES");
}

static void absent(void)
{
    TEST_CASE("absent");
    setenv("HWRT_DCMI_LIBRARY", "/nonexistent/libdcmi.so", 1);
    static hwrt_smi_snapshot s;
    FAILS(asc_monitor(&s), HWRT_ERROR_UNAVAILABLE, "DCMI could not be loaded");
    EXPECT(strstr(hwrt_last_error(), "/nonexistent/libdcmi.so") != NULL);
    EXPECT(strstr(hwrt_last_error(), "HWRT_DCMI_LIBRARY") != NULL);
    FAILS(asc_monitor(&s), HWRT_ERROR_UNAVAILABLE, "DCMI could not be loaded");
    FAILS(asc_monitor(NULL), HWRT_ERROR_INVALID_ARGUMENT, "out is NULL");
}

/* The default names: without the Ascend driver they fail, naming both; where the driver
 * is installed (an Ascend machine) the real libdcmi.so must load, resolve every entry
 * point and, with an NPU present, list it: the snapshot is printed for the record. */
static void absent_default(void)
{
    TEST_CASE("default_names");
    unsetenv("HWRT_DCMI_LIBRARY");
    static hwrt_smi_snapshot s;
    void *real = dlopen("libdcmi.so", RTLD_NOW | RTLD_LOCAL);
    if (!real) real = dlopen("/usr/local/dcmi/libdcmi.so", RTLD_NOW | RTLD_LOCAL);
    if (!real) {
        FAILS(asc_monitor(&s), HWRT_ERROR_UNAVAILABLE,
              "none of libdcmi.so, /usr/local/dcmi/libdcmi.so could be loaded");
        return;
    }
    hwrt_status st = asc_monitor(&s);
    printf("the driver's DCMI: %s %s\n", hwrt_status_name(st),
           st == HWRT_SUCCESS ? s.driver : hwrt_last_error());
    EXPECT(st == HWRT_SUCCESS || (st == HWRT_ERROR_UNAVAILABLE && strstr(hwrt_last_error(), "dcmi_init")));
    if (st == HWRT_SUCCESS) {
        EXPECT(access("/dev/davinci0", F_OK) != 0 || s.ndevices > 0);
        smi_print_table(stdout, &s);
    }
}

static void not_dcmi(void)
{
    TEST_CASE("not_dcmi");
    setenv("HWRT_DCMI_LIBRARY", "libm.so.6", 1);
    static hwrt_smi_snapshot s;
    FAILS(asc_monitor(&s), HWRT_ERROR_UNAVAILABLE, "libm.so.6 has no dcmi_init");
}

static void noinit(void)
{
    TEST_CASE("noinit");
    setenv("HWRT_DCMI_LIBRARY", fake_lib, 1);
    setenv("FAKE_DCMI_MODE", "noinit", 1);
    static hwrt_smi_snapshot s;
    FAILS(asc_monitor(&s), HWRT_ERROR_UNAVAILABLE, "dcmi_init failed (DCMI error -8008): no NPU");
    unsetenv("FAKE_DCMI_MODE");       /* the next call tries again */
    OK(asc_monitor(&s));
    EXPECT(s.ndevices == 2);
}

/* The canned figures of fake_dcmi.c, with this process's pool figures merged in. */
static void check_figures(const hwrt_smi_snapshot *sp, int old)
{
    const hwrt_smi_snapshot s = *sp;
    EXPECT(s.ndevices == 2);
    EXPECT(!strcmp(s.driver, old ? "Ascend driver ?" : "Ascend driver 25.2.0, DCMI 7.0.0"));
    const hwrt_smi_device *d0 = &s.devices[0], *d1 = &s.devices[1];
    EXPECT(d0->id == 0 && d1->id == 1);
    EXPECT(!strcmp(d0->name, "Ascend910B3") && !strcmp(d0->backend, "ascend"));
    EXPECT(!strcmp(d0->health, "OK") && !strcmp(d1->health, "Alarm"));
    EXPECT(!strcmp(d0->bus_id, "0000:C1:00.0") && !strcmp(d1->bus_id, "0000:01:00.0"));
    EXPECT(d0->total == 65536 * MIB && d0->used == 3400 * MIB && d1->used == 1200 * MIB);
    EXPECT(d0->busy_pct == 37.0 && d1->busy_pct == 0.0);
    EXPECT(d0->simulated == 0);
    EXPECT(d0->processes == 2 && d1->processes == 64);   /* all 64 the library writes */
    EXPECT(s.nprocesses == 66);
    const hwrt_smi_process *me = mon_find_pid(&s, getpid(), 0);
    EXPECT(me && me->used == 1500 * MIB);
    EXPECT(me && me->reserved == 1024 * MIB && me->allocated == 600 * MIB);
    EXPECT(me && me->overhead == 476 * MIB);              /* DCMI's figure - the pool's */
    const hwrt_smi_process *init = mon_find_pid(&s, 1, 0);
    EXPECT(init && init->used == 200 * MIB && !init->reserved && !init->overhead);
    /* published for device 0 only: not merged on device 1 */
    const hwrt_smi_process *me1 = mon_find_pid(&s, getpid(), 1);
    EXPECT(me1 && me1->used == 100 * MIB && !me1->reserved);
    const hwrt_smi_process *last = mon_find_pid(&s, 4000063, 1);
    EXPECT(last && last->used == MIB && !strcmp(last->name, "?"));
    mon_expect_warnings(&s, NULL);
}

static hwrt_smi_snapshot *published(const char *lib)
{
    setenv("HWRT_DCMI_LIBRARY", lib, 1);
    unsetenv("ASCEND_RT_VISIBLE_DEVICES");
    /* this process runs hwrt on ACL device 0: 1024 MiB reserved, 600 allocated */
    asc_dcmi_publish_usage(0, 1024 * MIB, 600 * MIB);
    static hwrt_smi_snapshot s;
    OK(asc_monitor(&s));
    return &s;
}

static void snapshot(void)
{
    TEST_CASE("snapshot");
    hwrt_smi_snapshot *sp = published(fake_lib);
    const hwrt_smi_snapshot s = *sp;
    check_figures(sp, 0);
    char *t = NULL;
    mon_print(mon_table, &s, 0, &t);
    EXPECT(strstr(t, "Ascend driver 25.2.0, DCMI 7.0.0") != NULL);
    EXPECT(strstr(t, "|   0 | Ascend910B3") != NULL);
    EXPECT(strstr(t, "| ascend  | OK     |    3400MiB /   65536MiB |  37.0% |") != NULL);
    EXPECT(strstr(t, "| ascend  | Alarm  |    1200MiB /   65536MiB |   0.0% |") != NULL);
    EXPECT(strstr(t, "device 0: Bus-Id 0000:C1:00.0") != NULL);
    EXPECT(strstr(t, "1500MiB     476MiB        1024MiB      600MiB") != NULL);
    free(t);
    mon_print(csv, &s, 0, &t);
    EXPECT(strstr(t, "0, Ascend910B3, OK, 0000:C1:00.0, 3400 MiB, 65536 MiB, 37.0 %, "
                     "\"Ascend driver 25.2.0, DCMI 7.0.0\"\n") != NULL);
    char row[128];
    snprintf(row, sizeof row, "%d, 0, 1500, 476, 1024, 600\n", (int)getpid());
    EXPECT(strstr(t, row) != NULL);
    free(t);
    mon_print(smi_print_explain, &s, getpid(), &t);
    EXPECT(strstr(t, "on device 0 uses 1500.0 MiB") != NULL);
    EXPECT(strstr(t, "     476.0 MiB  context / driver overhead") != NULL);
    EXPECT(strstr(t, "     424.0 MiB    + cached in the pool") != NULL);
    EXPECT(strstr(t, "on device 1 uses 100.0 MiB") != NULL);
    free(t);
}

static void old_names(void)
{
    TEST_CASE("old_names");     /* dcmi_get_card_num_list only; no version queries */
    check_figures(published(fake_old), 1);
}

static void ddr(void)
{
    TEST_CASE("ddr");
    setenv("FAKE_DCMI_MODE", "nohbm", 1);
    hwrt_smi_snapshot *s = published(fake_lib);
    EXPECT(s->devices[0].total == 8192 * MIB && s->devices[0].used == 2192 * MIB);
    EXPECT(s->warnings[0] == 0);
}

static void noproc(void)
{
    TEST_CASE("noproc");
    setenv("FAKE_DCMI_MODE", "noproc", 1);
    hwrt_smi_snapshot *s = published(fake_lib);
    EXPECT(s->ndevices == 2 && s->nprocesses == 0 && s->devices[0].used == 3400 * MIB);
    EXPECT(strstr(s->warnings, "reports no per-process memory here") != NULL);
    const char *w = strstr(s->warnings, "reports no per-process memory");
    EXPECT(w && !strstr(w + 1, "reports no per-process memory"));   /* once, not per device */
}

static void procfail(void)
{
    TEST_CASE("procfail");
    setenv("FAKE_DCMI_MODE", "procfail", 1);
    hwrt_smi_snapshot *s = published(fake_lib);
    EXPECT(s->nprocesses == 2 && s->devices[1].processes == 0);
    EXPECT(strstr(s->warnings, "device 1: no process list (DCMI error -8005)") != NULL);
}

static void idle(void)
{
    TEST_CASE("idle");           /* a chip without processes: nothing to warn about */
    setenv("FAKE_DCMI_MODE", "idle", 1);
    hwrt_smi_snapshot *s = published(fake_lib);
    EXPECT(s->nprocesses == 2 && s->devices[1].processes == 0 && s->warnings[0] == 0);
}

static void overcount(void)
{
    TEST_CASE("overcount");      /* more than the library's table holds: not trusted */
    setenv("FAKE_DCMI_MODE", "overcount", 1);
    hwrt_smi_snapshot *s = published(fake_lib);
    EXPECT(s->nprocesses == 2 && s->devices[1].processes == 0);
    EXPECT(strstr(s->warnings, "device 1: DCMI reports 65 processes (at most 64 fit") != NULL);
}

static void lid64(void)
{
    TEST_CASE("lid64");          /* a logical id hwrt-smi cannot index: left out, said */
    setenv("FAKE_DCMI_MODE", "lid64", 1);
    hwrt_smi_snapshot *s = published(fake_lib);
    EXPECT(s->ndevices == 1 && s->devices[0].id == 0 && s->nprocesses == 2);
    EXPECT(strstr(s->warnings, "card 3 chip 0: a logical id outside 0..63 (DCMI error 0, "
                               "logical id 64); not shown") != NULL);
}

/* ascend_dcmi.c chip: a negative logical id is refused even when DCMI reports success
 * (the seed-2026 mutant `r != HD_DCMI_OK || lid < 0` made `&&` showed it as device -1) */
static void lidneg(void)
{
    TEST_CASE("lidneg");
    setenv("FAKE_DCMI_MODE", "lidneg", 1);
    hwrt_smi_snapshot *s = published(fake_lib);
    EXPECT(s->ndevices == 1 && s->devices[0].id == 0 && s->nprocesses == 2);
    EXPECT(strstr(s->warnings, "card 3 chip 0: a logical id outside 0..63 (DCMI error 0, "
                               "logical id -1); not shown") != NULL);
}

/* ascend_dcmi.c driver_line: a DCMI version query that fails names no DCMI version, even
 * if it wrote one (the seed-2027 mutant `== HD_DCMI_OK && api[0]` made `||` showed it) */
static void verfail(void)
{
    TEST_CASE("verfail");
    setenv("FAKE_DCMI_MODE", "verfail", 1);
    hwrt_smi_snapshot *s = published(fake_lib);
    EXPECT(s->ndevices == 2);
    EXPECT(!strcmp(s->driver, "Ascend driver 25.2.0"));
    if (strcmp(s->driver, "Ascend driver 25.2.0")) fprintf(stderr, "  driver: \"%s\"\n", s->driver);
}

/* ascend_dcmi.c asc_monitor: a card count out of range is not trusted, and said (the
 * seed-3012 mutant `ncards < 0 || ncards > HD_MAX_CARD_NUM` made `&&` said nothing) */
static void cardneg(void)
{
    TEST_CASE("cardneg");
    setenv("FAKE_DCMI_MODE", "cardneg", 1);
    hwrt_smi_snapshot *s = published(fake_lib);
    EXPECT(s->ndevices == 0 && s->nprocesses == 0);
    EXPECT(strstr(s->warnings, "DCMI reports -1 cards") != NULL);
}

/* ACL device 0 is the driver's logical device 1 when ASCEND_RT_VISIBLE_DEVICES=1 */
static void visible(void)
{
    TEST_CASE("visible");
    setenv("HWRT_DCMI_LIBRARY", fake_lib, 1);
    setenv("ASCEND_RT_VISIBLE_DEVICES", "1", 1);
    asc_dcmi_publish_usage(0, 50 * MIB, 10 * MIB);
    static hwrt_smi_snapshot s;
    OK(asc_monitor(&s));
    const hwrt_smi_process *me1 = mon_find_pid(&s, getpid(), 1), *me0 = mon_find_pid(&s, getpid(), 0);
    EXPECT(me1 && me1->reserved == 50 * MIB && me1->allocated == 10 * MIB &&
           me1->overhead == 50 * MIB);
    EXPECT(me0 && me0->reserved == 0);
    /* the pool says more than DCMI counts: clamped, with a warning */
    asc_dcmi_publish_usage(0, 300 * MIB, 10 * MIB);
    OK(asc_monitor(&s));
    me1 = mon_find_pid(&s, getpid(), 1);
    EXPECT(me1 && me1->reserved == 100 * MIB && me1->overhead == 0);
    EXPECT(strstr(s.warnings, "its pool says 314572800 bytes reserved on device 1 but DCMI "
                              "counts 104857600") != NULL);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_dcmi_monitor FAKE_DCMI FAKE_DCMI_OLD_NAMES\n");
        return 2;
    }
    fake_lib = argv[1];
    fake_old = argv[2];
    mon_board_make(board, sizeof board, "ascend-usage", "HWRT_ASCEND_USAGE_DIR");
    mon_run("pure", pure);
    mon_run("absent", absent);
    mon_run("absent_default", absent_default);
    mon_run("not_dcmi", not_dcmi);
    mon_run("noinit", noinit);
    mon_run("snapshot", snapshot);
    mon_run("old_names", old_names);
    mon_run("ddr", ddr);
    mon_run("noproc", noproc);
    mon_run("procfail", procfail);
    mon_run("visible", visible);
    mon_run("idle", idle);
    mon_run("overcount", overcount);
    mon_run("lid64", lid64);
    mon_run("lidneg", lidneg);
    mon_run("verfail", verfail);
    mon_run("cardneg", cardneg);
    mon_board_remove(board);
    return test_report();
}
