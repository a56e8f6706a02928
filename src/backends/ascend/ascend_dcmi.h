/* DCMI (libdcmi.so, the driver's management library that npu-smi is built on), loaded at
 * run time through base/dynlib.h: the ascend backend's monitor slot, the device-wide view
 * npu-smi prints (per NPU: chip name, health, Bus-Id, AICore utilisation, HBM used/total;
 * per process: its device memory; the driver version), read without opening a device or
 * initialising ACL.
 *
 * hwrt declares the subset of DCMI it uses itself (no copied header). When the real
 * dcmi_interface_api.h is present at build time (/usr/local/dcmi, or
 * -DHWRT_DCMI_INCLUDE_DIR), tests/ascend_dcmi/dcmi_typecheck.c checks every function type,
 * constant and struct layout below against it (built with HD_DCMI_REAL_TYPES, which makes
 * the hd_*_t typedefs alias DCMI's own structs so the function types can be compared; the
 * hd_dcmi_* layouts are then compared field by field).
 *
 * HWRT_DCMI_LIBRARY names the library to load instead of libdcmi.so (a path or a soname;
 * the driver installs it in /usr/local/dcmi, which containers mount as it is).
 *
 * Pitfalls (the driver's source, src/custom/dev_prod/user/dcmi): the process query takes
 * no capacity and writes up to HD_DCMI_MAX_PROC_NUM_IN_DEVICE entries, so its buffer has
 * that many; HBM and DDR figures are MB (MiB), process memory is bytes; utilisation can
 * carry the compute-group flag bit HD_DCMI_VF_FLAG_BIT, whose figure npu-smi shows as 0. */
#ifndef HWI_ASCEND_DCMI_H
#define HWI_ASCEND_DCMI_H

#include "hwrt.h"

#include <stddef.h>

#define HD_DCMI_OK 0
#define HD_DCMI_ERROR_CODE_BASE (-8000)
#define HD_DCMI_ERR_CODE_INVALID_PARAMETER (HD_DCMI_ERROR_CODE_BASE - 1)
#define HD_DCMI_ERR_CODE_OPER_NOT_PERMITTED (HD_DCMI_ERROR_CODE_BASE - 2)
#define HD_DCMI_ERR_CODE_DEVICE_NOT_EXIST (HD_DCMI_ERROR_CODE_BASE - 8)
#define HD_DCMI_ERR_CODE_NOT_REDAY (HD_DCMI_ERROR_CODE_BASE - 12)          /* DCMI's spelling */
#define HD_DCMI_ERR_CODE_NOT_SUPPORT_IN_CONTAINER (HD_DCMI_ERROR_CODE_BASE - 13)
#define HD_DCMI_ERR_CODE_NOT_SUPPORT (HD_DCMI_ERROR_CODE_BASE - 255)

#define HD_DCMI_UTILIZATION_RATE_AICORE 2    /* npu-smi's "AICore(%)" */
#define HD_DCMI_VF_FLAG_BIT 9
#define HD_MAX_CARD_NUM 64                   /* dcmi_get_card_list's list */
#define HD_MAX_CHIP_NAME_LEN 32
#define HD_MAX_VER_LEN 255                   /* version strings (without the NUL) */
#define HD_DCMI_MAX_PROC_NUM_IN_DEVICE 64    /* dcmi_common.h MAX_PROC_NUM_IN_DEVICE */

struct hd_dcmi_chip_info {
    unsigned char chip_type[HD_MAX_CHIP_NAME_LEN];   /* "Ascend" */
    unsigned char chip_name[HD_MAX_CHIP_NAME_LEN];   /* "910B3" */
    unsigned char chip_ver[HD_MAX_CHIP_NAME_LEN];
    unsigned int aicore_cnt;
};
struct hd_dcmi_pcie_info_all {
    unsigned int venderid, subvenderid, deviceid, subdeviceid;
    int domain;
    unsigned int bdf_busid, bdf_deviceid, bdf_funcid;
    unsigned char reserve[32];
};
struct hd_dcmi_hbm_info {                            /* sizes in MB */
    unsigned long long memory_size;
    unsigned int freq;
    unsigned long long memory_usage;
    int temp;
    unsigned int bandwith_util_rate;
};
struct hd_dcmi_get_memory_info_stru {                /* DDR; sizes in MB */
    unsigned long long memory_size;
    unsigned long long memory_available;
    unsigned int freq;
    unsigned long hugepagesize;
    unsigned long hugepages_total;
    unsigned long hugepages_free;
    unsigned int utiliza;
    unsigned char reserve[60];
};
struct hd_dcmi_proc_mem_info {
    int proc_id;
    unsigned long proc_mem_usage;                    /* bytes */
};

#ifdef HD_DCMI_REAL_TYPES           /* the type check: dcmi_interface_api.h is included before */
typedef struct dcmi_chip_info hd_chip_info_t;
typedef struct dcmi_pcie_info_all hd_pcie_info_t;
typedef struct dcmi_hbm_info hd_hbm_info_t;
typedef struct dcmi_get_memory_info_stru hd_memory_info_t;
typedef struct dcmi_proc_mem_info hd_proc_mem_info_t;
#else
typedef struct hd_dcmi_chip_info hd_chip_info_t;
typedef struct hd_dcmi_pcie_info_all hd_pcie_info_t;
typedef struct hd_dcmi_hbm_info hd_hbm_info_t;
typedef struct hd_dcmi_get_memory_info_stru hd_memory_info_t;
typedef struct hd_dcmi_proc_mem_info hd_proc_mem_info_t;
#endif

/* Every DCMI entry point hwrt uses: X(name, return type, parameter list, flags, alias).
 * Optional ones (flags 1) may be absent: the figure is then missing, with a warning. */
#define HD_DCMI_FUNCS(X)                                                                     \
    X(dcmi_init, int, (void), 0, NULL)                                                       \
    X(dcmi_get_card_list, int, (int *card_num, int *card_list, int list_len), 0,             \
      "dcmi_get_card_num_list")                                                              \
    X(dcmi_get_device_id_in_card, int, (int card_id, int *device_id_max, int *mcu_id,        \
                                        int *cpu_id), 0, NULL)                               \
    X(dcmi_get_device_num_in_card, int, (int card_id, int *device_num), 1, NULL)             \
    X(dcmi_get_device_logic_id, int, (int *device_logic_id, int card_id, int device_id), 0,  \
      NULL)                                                                                  \
    X(dcmi_get_device_chip_info, int, (int card_id, int device_id,                           \
                                       hd_chip_info_t *chip_info), 1, NULL)        \
    X(dcmi_get_device_pcie_info_v2, int, (int card_id, int device_id,                        \
                                          hd_pcie_info_t *pcie_info), 1, NULL) \
    X(dcmi_get_device_health, int, (int card_id, int device_id, unsigned int *health), 1,    \
      NULL)                                                                                  \
    X(dcmi_get_device_hbm_info, int, (int card_id, int device_id,                            \
                                      hd_hbm_info_t *hbm_info), 1, NULL)           \
    X(dcmi_get_device_memory_info_v3, int, (int card_id, int device_id,                      \
                                            hd_memory_info_t *memory_info), \
      1, NULL)                                                                               \
    X(dcmi_get_device_resource_info, int, (int card_id, int device_id,                       \
                                           hd_proc_mem_info_t *proc_info,          \
                                           int *proc_num), 1, NULL)                          \
    X(dcmi_get_device_utilization_rate, int, (int card_id, int device_id, int input_type,    \
                                              unsigned int *utilization_rate), 1, NULL)      \
    X(dcmi_get_driver_version, int, (char *driver_ver, unsigned int len), 1, NULL)           \
    X(dcmi_get_dcmi_version, int, (char *dcmi_ver, unsigned int len), 1, NULL)

/* Function pointer types: hd_<name>_fn. */
#define HD_DCMI_TYPEDEF(name, ret, params, flags, alias) typedef ret (*hd_##name##_fn) params;
HD_DCMI_FUNCS(HD_DCMI_TYPEDEF)
#undef HD_DCMI_TYPEDEF

/* The ascend backend's monitor slot: every NPU chip DCMI sees, by the driver's logical
 * id (the id ACL numbers devices by when ASCEND_RT_VISIBLE_DEVICES is unset): chip name
 * ("Ascend910B3"), health ("OK", "Warning", "Alarm", "Critical"), PCI Bus-Id, HBM used /
 * total (DDR where the chip has no HBM), AICore utilisation, and every process on it with
 * its device memory; processes that run hwrt on ascend also get their pool's figures
 * (reserved, allocated; overhead = DCMI's figure - reserved) from the usage board.
 * UNAVAILABLE with the reason when DCMI cannot be loaded or initialised; figures a driver
 * refuses are missing, each with a warning in out->warnings. */
hwrt_status asc_monitor(hwrt_smi_snapshot *out);

/* What this process's pool holds on ACL device `ordinal`, for hwrt-smi in any process (the
 * backend's report_usage calls it). The device is named by the driver's logical id:
 * ordinal itself, or the ordinal-th entry of ASCEND_RT_VISIBLE_DEVICES when that is set. */
void asc_dcmi_publish_usage(int ordinal, size_t reserved, size_t allocated);

/* The driver's logical id of ACL device ordinal (see above); -1 when
 * ASCEND_RT_VISIBLE_DEVICES is set but has no valid ordinal-th entry. */
int asc_dcmi_logic_id(int ordinal);

/* Pure helpers, exposed for tests/ascend_dcmi: bytes of n MB (saturating); a DCMI
 * utilisation reading as a percentage (the compute-group flag gives 0, as in npu-smi;
 * -1 for an impossible value); npu-smi's health word for a dcmi_get_device_health
 * value. */
size_t asc_dcmi_mb(unsigned long long mb);
double asc_dcmi_util_pct(unsigned int rate);
const char *asc_dcmi_health(unsigned int health);

#endif
