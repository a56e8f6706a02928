/* A stand-in libdcmi.so for test_dcmi_monitor: a real shared library, loaded by hwrt with
 * dlopen through HWRT_DCMI_LIBRARY, exporting the DCMI entry points hwrt uses with canned
 * data, its types spelled out here (no driver header on this machine). It behaves as the
 * driver's source does where that matters: the process query takes no capacity and
 * writes as many entries as there are processes, up to 64.
 *
 * Two cards (ids 0 and 3), one chip each, logical ids 0 and 1, both "Ascend" "910B3":
 *   chip of card 0: health 0 (OK), Bus-Id 0000:C1:00.0, HBM 65536 MB of which 3400 used,
 *     AICore 37 %; processes: the calling process (FAKE_DCMI_PID overrides it) with
 *     1500 MiB and pid 1 with 200 MiB.
 *   chip of card 3: health 2 (Alarm), Bus-Id 0000:01:00.0, HBM 65536 MB of which 1200
 *     used, AICore 55 % with the compute-group flag (npu-smi shows 0); 64 processes: the
 *     calling process with 100 MiB, then 4000001.. with 1 MiB each (none alive).
 * FAKE_DCMI_MODE: "noinit" dcmi_init fails (-8008, no device); "nohbm" the HBM query is
 * unsupported and the DDR one answers (8192 MB, 6000 available); "noproc" the process
 * query is unsupported (-8255, as in containers); "procfail" it fails on card 3 (-8005);
 * "idle" card 3's chip has no process; "overcount" card 3's query claims 65 processes;
 * "lid64" card 3's chip has logical id 64 (beyond hwrt-smi's 64 devices); "lidneg" it has
 * logical id -1 with a success status; "verfail" the DCMI version
 * query fails (-8005) after writing a version; "cardneg" the card list reports -1 cards
 * with a success status.
 * Built twice: as is, and with -DFAKE_OLD_NAMES (the card list under its older name
 * dcmi_get_card_num_list only, and no version queries). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))
#define MB (1024ul * 1024ul)

struct chip_info { unsigned char type[32], name[32], ver[32]; unsigned int aicore_cnt; };
struct pcie_all { unsigned int ven, subven, dev, subdev; int domain; unsigned int bus, device, func; unsigned char rsv[32]; };
struct hbm { unsigned long long size; unsigned int freq; unsigned long long usage; int temp; unsigned int bw; };
struct ddr { unsigned long long size, avail; unsigned int freq; unsigned long hp_size, hp_total, hp_free; unsigned int util; unsigned char rsv[60]; };
struct proc { int pid; unsigned long mem; };

static int inited;

static int mode(const char *m)
{
    const char *v = getenv("FAKE_DCMI_MODE");
    return v && !strcmp(v, m);
}

static int chip_of(int card, int dev)
{
    if (dev != 0) return -1;
    return card == 0 ? 0 : card == 3 ? 1 : -1;
}
#define CHIP(card, dev)                                                                      \
    int c = chip_of(card, dev);                                                              \
    if (!inited) return -8012;                                                               \
    if (c < 0) return -8007

static int me(void)
{
    const char *v = getenv("FAKE_DCMI_PID");
    return v ? atoi(v) : (int)getpid();
}

API int dcmi_init(void)
{
    if (mode("noinit")) return -8008;
    inited = 1;
    return 0;
}

static int card_list(int *n, int *list, int len)
{
    if (!inited) return -8012;
    if (len < 2) return -8001;
    if (mode("cardneg")) {              /* a count no card list has, with success */
        *n = -1;
        return 0;
    }
    *n = 2;
    list[0] = 0;
    list[1] = 3;
    return 0;
}
#ifdef FAKE_OLD_NAMES
API int dcmi_get_card_num_list(int *n, int *list, int len) { return card_list(n, list, len); }
#else
API int dcmi_get_card_list(int *n, int *list, int len) { return card_list(n, list, len); }
API int dcmi_get_driver_version(char *v, unsigned int len)
{
    snprintf(v, len, "25.2.0");
    return 0;
}
API int dcmi_get_dcmi_version(char *v, unsigned int len)
{
    snprintf(v, len, "7.0.0");
    return mode("verfail") ? -8005 : 0;
}
#endif

API int dcmi_get_device_id_in_card(int card, int *max, int *mcu, int *cpu)
{
    if (!inited) return -8012;
    if (card != 0 && card != 3) return -8007;
    *max = 1;
    *mcu = -1;
    *cpu = -1;
    return 0;
}
API int dcmi_get_device_num_in_card(int card, int *n) { *n = 1; return 0; }
API int dcmi_get_device_logic_id(int *lid, int card, int dev)
{
    CHIP(card, dev);
    *lid = c == 1 && mode("lid64") ? 64 : c == 1 && mode("lidneg") ? -1 : c;
    return 0;
}
API int dcmi_get_device_chip_info(int card, int dev, struct chip_info *ci)
{
    CHIP(card, dev);
    memset(ci, 0, sizeof *ci);
    strcpy((char *)ci->type, "Ascend");
    strcpy((char *)ci->name, "910B3");
    strcpy((char *)ci->ver, "V1");
    ci->aicore_cnt = 20;
    return 0;
}
API int dcmi_get_device_pcie_info_v2(int card, int dev, struct pcie_all *p)
{
    CHIP(card, dev);
    memset(p, 0, sizeof *p);
    p->domain = 0;
    p->bus = c == 0 ? 0xC1 : 0x01;
    return 0;
}
API int dcmi_get_device_health(int card, int dev, unsigned int *h)
{
    CHIP(card, dev);
    *h = c == 0 ? 0 : 2;
    return 0;
}
API int dcmi_get_device_hbm_info(int card, int dev, struct hbm *h)
{
    CHIP(card, dev);
    if (mode("nohbm")) return -8255;
    memset(h, 0, sizeof *h);
    h->size = 65536;
    h->usage = c == 0 ? 3400 : 1200;
    return 0;
}
API int dcmi_get_device_memory_info_v3(int card, int dev, struct ddr *m)
{
    CHIP(card, dev);
    if (!mode("nohbm")) return -8255;      /* as on 910B: HBM only */
    memset(m, 0, sizeof *m);
    m->size = 8192;
    m->avail = 6000;
    return 0;
}
API int dcmi_get_device_utilization_rate(int card, int dev, int type, unsigned int *rate)
{
    CHIP(card, dev);
    if (type != 2) return -8001;
    *rate = c == 0 ? 37 : (1u << 9) | 55;
    return 0;
}
API int dcmi_get_device_resource_info(int card, int dev, struct proc *p, int *n)
{
    CHIP(card, dev);
    if (mode("noproc")) return -8255;
    if (mode("procfail") && c == 1) return -8005;
    if (mode("idle") && c == 1) {
        *n = 0;
        return 0;
    }
    if (c == 0) {
        p[0].pid = me();
        p[0].mem = 1500 * MB;
        p[1].pid = 1;
        p[1].mem = 200 * MB;
        *n = 2;
        return 0;
    }
    p[0].pid = me();
    p[0].mem = 100 * MB;
    for (int i = 1; i < 64; i++) {        /* the library's limit: MAX_PROC_NUM_IN_DEVICE */
        p[i].pid = 4000000 + i;
        p[i].mem = MB;
    }
    *n = mode("overcount") ? 65 : 64;
    return 0;
}
