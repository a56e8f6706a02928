/* DCMI through base/dynlib.h: the loader and the ascend backend's monitor slot (see
 * ascend_dcmi.h). The calls follow npu-smi's own ("npu-smi info", the driver's
 * src/custom/dev_prod/user/npucli/src/npu_info.c): the card list, the chips of each card,
 * then per chip its logical id, chip info, health, PCIe info, HBM (else DDR) memory,
 * AICore utilisation and the process table. */
#include "ascend_dcmi.h"
#include "../usage_board.h"
#include "../../base/dynlib.h"
#include "../../base/status.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
#define HD_FIELD(name, ret, params, flags, alias) hd_##name##_fn name;
    HD_DCMI_FUNCS(HD_FIELD)
#undef HD_FIELD
} dc;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t init_mu = PTHREAD_MUTEX_INITIALIZER;
static int loaded, inited;
static char load_why[1024];
static const char *lib_name;

static hwi_usage_board board = HWI_USAGE_BOARD_INIT("ascend", "HWRT_ASCEND_USAGE_DIR", "DCMI");

static void load(void)
{
    static const char *const names[] = {"libdcmi.so", "/usr/local/dcmi/libdcmi.so", NULL};
    char why[768];
    void *h = hwi_dynlib_open("HWRT_DCMI_LIBRARY", names, &lib_name, why, sizeof why);
    if (!h) {
        snprintf(load_why, sizeof load_why, "DCMI could not be loaded (the Ascend driver "
                 "installs libdcmi.so in /usr/local/dcmi; mount it into containers, or point "
                 "HWRT_DCMI_LIBRARY at it): %s", why);
        return;
    }
    static const hwi_dynsym syms[] = {
#define HD_SYM(name, ret, params, flags, alias) {#name, (void **)&dc.name, flags, alias},
        HD_DCMI_FUNCS(HD_SYM)
#undef HD_SYM
    };
    const char *missing = hwi_dynlib_resolve(h, syms, sizeof syms / sizeof syms[0]);
    if (missing) {
        snprintf(load_why, sizeof load_why, "%s has no %s: not the driver's DCMI library, or "
                 "one too old for hwrt's monitor", lib_name, missing);
        memset(&dc, 0, sizeof dc);
        return;
    }
    loaded = 1;    /* kept open for the process (dynlib never closes) */
}

/* Load and dcmi_init once; a failed init is retried by the next call (the driver may
 * come up later). */
static hwrt_status dcmi_ready(void)
{
    pthread_once(&load_once, load);
    if (!loaded) return hwi_err(HWRT_ERROR_UNAVAILABLE, "ascend monitor: %s", load_why);
    pthread_mutex_lock(&init_mu);
    int r = inited ? HD_DCMI_OK : dc.dcmi_init();
    if (r == HD_DCMI_OK) inited = 1;
    pthread_mutex_unlock(&init_mu);
    if (r != HD_DCMI_OK)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "ascend monitor: dcmi_init failed (DCMI error "
                       "%d)%s", r,
                       r == HD_DCMI_ERR_CODE_OPER_NOT_PERMITTED ? ": this user may not open the "
                       "NPU management devices (/dev/davinci_manager); npu-smi needs the same"
                       : r == HD_DCMI_ERR_CODE_DEVICE_NOT_EXIST ? ": no NPU; is the driver "
                       "loaded (lsmod | grep drv_davinci)?" : "");
    return HWRT_SUCCESS;
}

size_t asc_dcmi_mb(unsigned long long mb)
{
    if (mb > (unsigned long long)(SIZE_MAX >> 20)) return SIZE_MAX;
    return (size_t)mb << 20;
}

double asc_dcmi_util_pct(unsigned int rate)
{
    if (rate & (1u << HD_DCMI_VF_FLAG_BIT)) return 0;   /* compute groups: meaningless */
    return rate > 100 ? -1 : (double)rate;
}

const char *asc_dcmi_health(unsigned int health)
{
    static const char *const words[] = {"OK", "Warning", "Alarm", "Critical"};
    return health < 4 ? words[health] : "UNKNOWN";
}

int asc_dcmi_logic_id(int ordinal)
{
    const char *v = getenv("ASCEND_RT_VISIBLE_DEVICES");
    if (ordinal < 0) return -1;
    if (!v || !*v) return ordinal;
    int i = 0, found = -1;
    for (const char *p = v; *p;) {          /* "4,5" or "4, 5": all of it must parse */
        char *end;
        long id = strtol(p, &end, 10);
        if (end == p || id < 0 || id > 1000000) return -1;
        if (i++ == ordinal) found = (int)id;
        p = end;
        while (*p == ' ') p++;
        if (*p == ',') p++;
        else if (*p) return -1;
    }
    return found;
}

static void board_key(int logic_id, char *buf, size_t len) { snprintf(buf, len, "npu%d", logic_id); }

void asc_dcmi_publish_usage(int ordinal, size_t reserved, size_t allocated)
{
    int id = asc_dcmi_logic_id(ordinal);
    if (id < 0) return;      /* an ACL device id the driver's numbering does not name */
    char k[32];
    board_key(id, k, sizeof k);
    hwi_usage_publish(&board, k, reserved, allocated);
}

static void driver_line(hwrt_smi_snapshot *out)
{
    char drv[HD_MAX_VER_LEN + 1] = "", api[HD_MAX_VER_LEN + 1] = "";
    if (!dc.dcmi_get_driver_version ||
        dc.dcmi_get_driver_version(drv, sizeof drv) != HD_DCMI_OK || !drv[0])
        snprintf(drv, sizeof drv, "?");
    drv[sizeof drv - 1] = 0;
    if (dc.dcmi_get_dcmi_version && dc.dcmi_get_dcmi_version(api, sizeof api) == HD_DCMI_OK && api[0]) {
        api[sizeof api - 1] = 0;
        snprintf(out->driver, sizeof out->driver, "Ascend driver %s, DCMI %s", drv, api);
    } else {
        snprintf(out->driver, sizeof out->driver, "Ascend driver %s", drv);
    }
}

/* The chips of a card: dcmi_get_device_id_in_card (npu-smi's), else the count query. */
static int chips_in_card(hwrt_smi_snapshot *out, int card)
{
    int max = 0, mcu = -1, cpu = -1;
    int r = dc.dcmi_get_device_id_in_card(card, &max, &mcu, &cpu);
    if (r != HD_DCMI_OK && dc.dcmi_get_device_num_in_card)
        r = dc.dcmi_get_device_num_in_card(card, &max);
    if (r != HD_DCMI_OK) {
        hwi_smi_warn(out, "card %d: no chip count (DCMI error %d)", card, r);
        return 0;
    }
    return max < 0 ? 0 : max;
}

static void chip_name(hwrt_smi_device *d, int card, int chip)
{
    struct hd_dcmi_chip_info ci;
    memset(&ci, 0, sizeof ci);
    if (!dc.dcmi_get_device_chip_info || dc.dcmi_get_device_chip_info(card, chip, &ci) != HD_DCMI_OK) {
        snprintf(d->name, sizeof d->name, "Ascend NPU");
        return;
    }
    ci.chip_type[sizeof ci.chip_type - 1] = 0;
    ci.chip_name[sizeof ci.chip_name - 1] = 0;
    /* "Ascend" + "910B3": the SoC name ACL reports (aclrtGetSocName) */
    snprintf(d->name, sizeof d->name, "%s%s", (const char *)ci.chip_type, (const char *)ci.chip_name);
}

/* Device memory: HBM where the chip has it (910, 910B, 910_93, 950; what npu-smi prints
 * as HBM-Usage), else DDR (memory_info_v3, which those chips refuse). */
static void chip_memory(hwrt_smi_snapshot *out, hwrt_smi_device *d, int card, int chip)
{
    struct hd_dcmi_hbm_info hbm;
    memset(&hbm, 0, sizeof hbm);
    int r = dc.dcmi_get_device_hbm_info ? dc.dcmi_get_device_hbm_info(card, chip, &hbm)
                                        : HD_DCMI_ERR_CODE_NOT_SUPPORT;
    if (r == HD_DCMI_OK && hbm.memory_size) {
        d->total = asc_dcmi_mb(hbm.memory_size);
        d->used = asc_dcmi_mb(hbm.memory_usage < hbm.memory_size ? hbm.memory_usage
                                                                 : hbm.memory_size);
        return;
    }
    struct hd_dcmi_get_memory_info_stru ddr;
    memset(&ddr, 0, sizeof ddr);
    int r2 = dc.dcmi_get_device_memory_info_v3 ? dc.dcmi_get_device_memory_info_v3(card, chip, &ddr)
                                               : HD_DCMI_ERR_CODE_NOT_SUPPORT;
    if (r2 == HD_DCMI_OK && ddr.memory_size) {
        d->total = asc_dcmi_mb(ddr.memory_size);
        d->used = asc_dcmi_mb(ddr.memory_available < ddr.memory_size
                                  ? ddr.memory_size - ddr.memory_available : 0);
        return;
    }
    hwi_smi_warn(out, "device %d: no memory figures (HBM query: DCMI error %d, DDR query: %d)",
                 d->id, r, r2);
}

/* The process table of one chip: the library writes up to
 * HD_DCMI_MAX_PROC_NUM_IN_DEVICE entries whatever the caller's array holds (it takes no
 * capacity), so the buffer has exactly that many. */
static void chip_processes(hwrt_smi_snapshot *out, hwrt_smi_device *d, int card, int chip,
                           int *unsupported)
{
    if (!dc.dcmi_get_device_resource_info) {
        *unsupported = 1;
        return;
    }
    static struct hd_dcmi_proc_mem_info procs[HD_DCMI_MAX_PROC_NUM_IN_DEVICE];
    memset(procs, 0, sizeof procs);
    int n = 0;
    int r = dc.dcmi_get_device_resource_info(card, chip, procs, &n);
    if (r == HD_DCMI_ERR_CODE_NOT_SUPPORT || r == HD_DCMI_ERR_CODE_NOT_SUPPORT_IN_CONTAINER) {
        *unsupported = 1;
        return;
    }
    if (r != HD_DCMI_OK) {
        /* also when a process exits between the library's pid and memory queries */
        hwi_smi_warn(out, "device %d: no process list (DCMI error %d)", d->id, r);
        return;
    }
    if (n < 0 || n > HD_DCMI_MAX_PROC_NUM_IN_DEVICE) {
        hwi_smi_warn(out, "device %d: DCMI reports %d processes (at most %d fit its table); "
                     "the list is ignored", d->id, n, HD_DCMI_MAX_PROC_NUM_IN_DEVICE);
        return;
    }
    char key[32];
    board_key(d->id, key, sizeof key);
    for (int i = 0; i < n; i++) {
        if (procs[i].proc_id <= 0) continue;
        if (out->nprocesses >= HWRT_SMI_MAX_PROCESSES) {
            hwi_smi_warn(out, "more than %d processes: the rest are not shown", HWRT_SMI_MAX_PROCESSES);
            return;
        }
        hwrt_smi_process *p = &out->processes[out->nprocesses++];
        p->pid = procs[i].proc_id;
        p->device = d->id;
        p->used = (size_t)procs[i].proc_mem_usage;          /* bytes */
        hwi_usage_proc_name(p->pid, p->name, sizeof p->name);
        d->processes++;
        char why[512] = "";
        if (hwi_usage_reconcile(&board, key, d->id, p, why, sizeof why) < 0)
            hwi_smi_warn(out, "%s", why);
    }
}

static int already(const hwrt_smi_snapshot *out, int id)
{
    for (int i = 0; i < out->ndevices; i++)
        if (out->devices[i].id == id) return 1;
    return 0;
}

/* One chip: its row and its processes. */
static void chip(hwrt_smi_snapshot *out, int card, int c, int *no_procs)
{
    int lid = -1;
    int r = dc.dcmi_get_device_logic_id(&lid, card, c);
    if (r != HD_DCMI_OK || lid < 0 || lid >= HWRT_SMI_MAX_DEVICES || already(out, lid)) {
        hwi_smi_warn(out, "card %d chip %d: %s (DCMI error %d, logical id %d); not shown", card,
                     c, r != HD_DCMI_OK ? "no logical id" : lid < 0 || lid >= HWRT_SMI_MAX_DEVICES
                     ? "a logical id outside 0..63" : "a logical id seen twice", r, lid);
        return;
    }
    if (out->ndevices >= HWRT_SMI_MAX_DEVICES) return;
    hwrt_smi_device *d = &out->devices[out->ndevices++];
    d->id = lid;
    snprintf(d->backend, sizeof d->backend, "ascend");
    chip_name(d, card, c);
    unsigned int health = 0;
    if (dc.dcmi_get_device_health && dc.dcmi_get_device_health(card, c, &health) == HD_DCMI_OK)
        snprintf(d->health, sizeof d->health, "%s", asc_dcmi_health(health));
    else
        snprintf(d->health, sizeof d->health, "UNKNOWN");
    struct hd_dcmi_pcie_info_all pci;
    memset(&pci, 0, sizeof pci);
    if (dc.dcmi_get_device_pcie_info_v2 &&
        dc.dcmi_get_device_pcie_info_v2(card, c, &pci) == HD_DCMI_OK)
        snprintf(d->bus_id, sizeof d->bus_id, "%04X:%02X:%02X.%X", (unsigned)pci.domain,
                 pci.bdf_busid, pci.bdf_deviceid, pci.bdf_funcid);   /* npu-smi's Bus-Id */
    chip_memory(out, d, card, c);
    unsigned int rate = 0;
    r = dc.dcmi_get_device_utilization_rate
            ? dc.dcmi_get_device_utilization_rate(card, c, HD_DCMI_UTILIZATION_RATE_AICORE, &rate)
            : HD_DCMI_ERR_CODE_NOT_SUPPORT;
    double pct = r == HD_DCMI_OK ? asc_dcmi_util_pct(rate) : 0;
    if (r == HD_DCMI_OK && pct < 0)
        hwi_smi_warn(out, "device %d: DCMI reports AICore utilisation %u%%; not shown", lid, rate);
    else if (r != HD_DCMI_OK && r != HD_DCMI_ERR_CODE_NOT_SUPPORT)
        hwi_smi_warn(out, "device %d: no AICore utilisation (DCMI error %d)", lid, r);
    d->busy_pct = pct > 0 ? pct : 0;
    chip_processes(out, d, card, c, no_procs);
}

hwrt_status asc_monitor(hwrt_smi_snapshot *out)
{
    if (!out) return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "ascend monitor: out is NULL");
    HWI_TRY(dcmi_ready());
    memset(out, 0, sizeof *out);
    int ncards = 0, cards[HD_MAX_CARD_NUM];
    memset(cards, 0, sizeof cards);
    int r = dc.dcmi_get_card_list(&ncards, cards, HD_MAX_CARD_NUM);
    if (r != HD_DCMI_OK)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "ascend monitor: dcmi_get_card_list failed (DCMI "
                       "error %d)", r);
    driver_line(out);
    if (ncards < 0 || ncards > HD_MAX_CARD_NUM) {
        hwi_smi_warn(out, "DCMI reports %d cards; the first %d are shown", ncards, HD_MAX_CARD_NUM);
        ncards = ncards < 0 ? 0 : HD_MAX_CARD_NUM;
    }
    int no_procs = 0;
    for (int i = 0; i < ncards; i++) {
        int n = chips_in_card(out, cards[i]);
        for (int c = 0; c < n; c++) chip(out, cards[i], c, &no_procs);
    }
    if (no_procs)
        hwi_smi_warn(out, "this driver reports no per-process memory here "
                     "(dcmi_get_device_resource_info: not supported, as in VMs, containers and "
                     "on Atlas 350); the process table is empty");
    return HWRT_SUCCESS;
}
