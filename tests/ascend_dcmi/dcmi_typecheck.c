/* hwrt's own DCMI declarations (src/backends/ascend/ascend_dcmi.h) against the driver's
 * dcmi_interface_api.h, built only where it is found (HWRT_DCMI_INCLUDE_DIR). Every check
 * is a _Static_assert: a mismatch fails the build, naming the function, constant, struct
 * or field. */
#include <dcmi_interface_api.h>
#define HD_DCMI_REAL_TYPES 1
#include "backends/ascend/ascend_dcmi.h"

#include <stddef.h>
#include <stdio.h>

#define CHECK_FN(name, ret, params, flags, alias)                                            \
    _Static_assert(__builtin_types_compatible_p(hd_##name##_fn, __typeof__(&name)),          \
                   "hwrt's declaration of " #name " differs from dcmi_interface_api.h");
HD_DCMI_FUNCS(CHECK_FN)
/* the older name hwrt takes when dcmi_get_card_list is absent has the same type */
_Static_assert(__builtin_types_compatible_p(hd_dcmi_get_card_list_fn,
                                            __typeof__(&dcmi_get_card_num_list)),
               "dcmi_get_card_num_list differs from dcmi_get_card_list");

#define CHECK_CONST(mine, theirs) _Static_assert((mine) == (theirs), #mine " != " #theirs);
CHECK_CONST(HD_DCMI_OK, DCMI_OK)
CHECK_CONST(HD_DCMI_ERROR_CODE_BASE, DCMI_ERROR_CODE_BASE)
CHECK_CONST(HD_DCMI_ERR_CODE_INVALID_PARAMETER, DCMI_ERR_CODE_INVALID_PARAMETER)
CHECK_CONST(HD_DCMI_ERR_CODE_OPER_NOT_PERMITTED, DCMI_ERR_CODE_OPER_NOT_PERMITTED)
CHECK_CONST(HD_DCMI_ERR_CODE_DEVICE_NOT_EXIST, DCMI_ERR_CODE_DEVICE_NOT_EXIST)
CHECK_CONST(HD_DCMI_ERR_CODE_NOT_REDAY, DCMI_ERR_CODE_NOT_REDAY)
CHECK_CONST(HD_DCMI_ERR_CODE_NOT_SUPPORT_IN_CONTAINER, DCMI_ERR_CODE_NOT_SUPPORT_IN_CONTAINER)
CHECK_CONST(HD_DCMI_ERR_CODE_NOT_SUPPORT, DCMI_ERR_CODE_NOT_SUPPORT)
CHECK_CONST(HD_DCMI_UTILIZATION_RATE_AICORE, DCMI_UTILIZATION_RATE_AICORE)
CHECK_CONST(HD_DCMI_VF_FLAG_BIT, DCMI_VF_FLAG_BIT)
CHECK_CONST(HD_MAX_CARD_NUM, MAX_CARD_NUM)
CHECK_CONST(HD_MAX_CHIP_NAME_LEN, MAX_CHIP_NAME_LEN)
CHECK_CONST(HD_MAX_VER_LEN, MAX_VER_LEN)

/* layouts: same size, every field at the same offset with the same size */
#define FIELD(mine, theirs, f)                                                               \
    _Static_assert(offsetof(struct mine, f) == offsetof(struct theirs, f) &&                 \
                   sizeof(((struct mine *)0)->f) == sizeof(((struct theirs *)0)->f),         \
                   #mine "." #f " differs from " #theirs);
#define SIZE(mine, theirs)                                                                   \
    _Static_assert(sizeof(struct mine) == sizeof(struct theirs), #mine " differs in size from " #theirs);
SIZE(hd_dcmi_chip_info, dcmi_chip_info)
FIELD(hd_dcmi_chip_info, dcmi_chip_info, chip_type)
FIELD(hd_dcmi_chip_info, dcmi_chip_info, chip_name)
FIELD(hd_dcmi_chip_info, dcmi_chip_info, chip_ver)
FIELD(hd_dcmi_chip_info, dcmi_chip_info, aicore_cnt)
SIZE(hd_dcmi_pcie_info_all, dcmi_pcie_info_all)
FIELD(hd_dcmi_pcie_info_all, dcmi_pcie_info_all, venderid)
FIELD(hd_dcmi_pcie_info_all, dcmi_pcie_info_all, deviceid)
FIELD(hd_dcmi_pcie_info_all, dcmi_pcie_info_all, domain)
FIELD(hd_dcmi_pcie_info_all, dcmi_pcie_info_all, bdf_busid)
FIELD(hd_dcmi_pcie_info_all, dcmi_pcie_info_all, bdf_deviceid)
FIELD(hd_dcmi_pcie_info_all, dcmi_pcie_info_all, bdf_funcid)
FIELD(hd_dcmi_pcie_info_all, dcmi_pcie_info_all, reserve)
SIZE(hd_dcmi_hbm_info, dcmi_hbm_info)
FIELD(hd_dcmi_hbm_info, dcmi_hbm_info, memory_size)
FIELD(hd_dcmi_hbm_info, dcmi_hbm_info, freq)
FIELD(hd_dcmi_hbm_info, dcmi_hbm_info, memory_usage)
FIELD(hd_dcmi_hbm_info, dcmi_hbm_info, temp)
FIELD(hd_dcmi_hbm_info, dcmi_hbm_info, bandwith_util_rate)
SIZE(hd_dcmi_get_memory_info_stru, dcmi_get_memory_info_stru)
FIELD(hd_dcmi_get_memory_info_stru, dcmi_get_memory_info_stru, memory_size)
FIELD(hd_dcmi_get_memory_info_stru, dcmi_get_memory_info_stru, memory_available)
FIELD(hd_dcmi_get_memory_info_stru, dcmi_get_memory_info_stru, freq)
FIELD(hd_dcmi_get_memory_info_stru, dcmi_get_memory_info_stru, hugepagesize)
FIELD(hd_dcmi_get_memory_info_stru, dcmi_get_memory_info_stru, hugepages_total)
FIELD(hd_dcmi_get_memory_info_stru, dcmi_get_memory_info_stru, hugepages_free)
FIELD(hd_dcmi_get_memory_info_stru, dcmi_get_memory_info_stru, utiliza)
FIELD(hd_dcmi_get_memory_info_stru, dcmi_get_memory_info_stru, reserve)
SIZE(hd_dcmi_proc_mem_info, dcmi_proc_mem_info)
FIELD(hd_dcmi_proc_mem_info, dcmi_proc_mem_info, proc_id)
FIELD(hd_dcmi_proc_mem_info, dcmi_proc_mem_info, proc_mem_usage)

int main(void)
{
#define COUNT_FN(name, ret, params, flags, alias) +1
    printf("dcmi_interface_api.h (%s): %d function types, the constants and 5 struct layouts "
           "match\n", HWRT_DCMI_DESC, 0 HD_DCMI_FUNCS(COUNT_FN));
    return 0;
}
