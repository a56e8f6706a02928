/* The kernel ops, defined once: the op front end (src/tensor/ops.c) validates against
 * this table and names ops from it, the backends name kernels from it (error sentences,
 * fault injection's op= filter), and the Python module exposes it (hwrt._kernel_ops).
 * Adding an op is one HWI_OP_LIST row plus its front-end function and its kernels.
 *
 * Header-only list, so that code outside libhwrt (the Python module) can expand it too;
 * lookups and sentences are in op_table.c. Depends on the public dtype enum only. */
#ifndef HWI_OP_TABLE_H
#define HWI_OP_TABLE_H

#include "hwrt.h"
#include "dtype.h"

#include <stddef.h>

/* Dtype sets, one bit per hwrt_dtype. ANY is every dtype the backends have kernels for
 * (float32 .. bool, base/dtype.h: the dtypes appended after bool are carried by tensors,
 * copies and DLPack but refused by ops); FLOAT names its members. */
#define HWI_DT(d) (1u << (d))
#define HWI_DTS_ANY ((1u << (HWI_LAST_KERNEL_DTYPE + 1)) - 1u)   /* hwi_dtype_has_kernel's set */
#define HWI_DTS_NOT_BOOL (HWI_DTS_ANY & ~HWI_DT(HWRT_BOOL))
#define HWI_DTS_FLOAT (HWI_DT(HWRT_FLOAT32) | HWI_DT(HWRT_FLOAT16) | HWI_DT(HWRT_BFLOAT16) | \
                       HWI_DT(HWRT_FLOAT64))

/* X(ID, name, py, arity, dtypes, out_dtype):
 *   ID        the hwrt_kernel_op is HWRT_K_<ID>
 *   name      the kernel's name (profiler spans, error sentences, HWRT_SIM_FAULTS op=)
 *   py        the front-end function hwrt_op_<py> and the Python function hwrt.<py>
 *   arity     tensor inputs (a, b); FILL has none
 *   dtypes    the input dtypes the op accepts (CAST: any input to any output)
 *   out_dtype 1: the output has its own dtype (CAST: any; SUM: int64 for bool, else the
 *             input's); 0: the output's dtype is the input's */
#define HWI_OP_LIST(X)                                      \
    X(FILL, "Fill", "fill", 0, HWI_DTS_ANY, 0)              \
    X(ADD, "Add", "add", 2, HWI_DTS_NOT_BOOL, 0)            \
    X(MUL, "Mul", "mul", 2, HWI_DTS_NOT_BOOL, 0)            \
    X(SCALE, "Scale", "scale", 1, HWI_DTS_NOT_BOOL, 0)      \
    X(RELU, "Relu", "relu", 1, HWI_DTS_NOT_BOOL, 0)         \
    X(CAST, "Cast", "cast", 1, HWI_DTS_ANY, 1)              \
    X(MATMUL, "MatMul", "matmul", 2, HWI_DTS_FLOAT, 0)      \
    X(SUM, "ReduceSum", "sum", 1, HWI_DTS_ANY, 1)

typedef enum hwrt_kernel_op {
#define HWI_OP_ENUM(id, name, py, arity, dtypes, out_dtype) HWRT_K_##id,
    HWI_OP_LIST(HWI_OP_ENUM)
#undef HWI_OP_ENUM
    HWRT_K_COUNT
} hwrt_kernel_op;

typedef struct hwi_op_info {
    const char *name;        /* "MatMul" */
    const char *py;          /* "matmul" */
    int arity;
    unsigned dtypes;         /* HWI_DT bits */
    int out_dtype;
} hwi_op_info;

/* The row of op; NULL outside 0..HWRT_K_COUNT-1. */
const hwi_op_info *hwi_op_info_of(hwrt_kernel_op op);
/* The kernel name of op ("MatMul"); "?" outside the table. */
const char *hwi_op_name(hwrt_kernel_op op);
/* The op whose name or py name is `name` (case-insensitive); -1 if none. */
int hwi_op_from_name(const char *name);
/* 1 when op accepts dtype dt as input. */
int hwi_op_allows(hwrt_kernel_op op, hwrt_dtype dt);
/* The dtypes op accepts, for sentences: "float32, float16, bfloat16 or float64". */
void hwi_op_dtypes_str(hwrt_kernel_op op, char *buf, size_t len);
/* Every kernel name, for sentences: "Fill, Add, ..., MatMul or ReduceSum". */
void hwi_op_names_str(char *buf, size_t len);

#endif
