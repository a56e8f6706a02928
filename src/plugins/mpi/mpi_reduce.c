/* Reduction of float16 / bfloat16 data for MPI: user operators over opaque 2-byte types.
 * Each step widens to float32, combines, and rounds back, as NCCL does for half types. */
#include "mpi_reduce.h"
#include "base/half.h"
#include "hwrt.h"
#include "hwrt/hwrt_dist.h"

static MPI_Datatype t_f16 = MPI_DATATYPE_NULL, t_bf16 = MPI_DATATYPE_NULL;
static MPI_Op half_ops[4] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};

static inline float combine(int op, float a, float b)
{
    switch (op) {
    case HWRT_REDUCE_SUM: return a + b;
    case HWRT_REDUCE_PROD: return a * b;
    case HWRT_REDUCE_MAX: return a != a ? a : b != b ? b : a > b ? a : b;   /* NaN wins */
    default: return a != a ? a : b != b ? b : a < b ? a : b;
    }
}

/* inout[i] = in[i] (op) inout[i]; *dt tells float16 from bfloat16. */
static void half_apply(int op, void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const uint16_t *a = in;
    uint16_t *b = inout;
    int bf = *dt == t_bf16;
    for (int i = 0; i < *len; i++) {
        float x = bf ? hwi_bf16_to_float(a[i]) : hwi_half_to_float(a[i]);
        float y = bf ? hwi_bf16_to_float(b[i]) : hwi_half_to_float(b[i]);
        float r = combine(op, x, y);
        b[i] = bf ? hwi_float_to_bf16(r) : hwi_float_to_half(r);
    }
}

static void op_sum(void *in, void *io, int *n, MPI_Datatype *dt) { half_apply(HWRT_REDUCE_SUM, in, io, n, dt); }
static void op_prod(void *in, void *io, int *n, MPI_Datatype *dt) { half_apply(HWRT_REDUCE_PROD, in, io, n, dt); }
static void op_max(void *in, void *io, int *n, MPI_Datatype *dt) { half_apply(HWRT_REDUCE_MAX, in, io, n, dt); }
static void op_min(void *in, void *io, int *n, MPI_Datatype *dt) { half_apply(HWRT_REDUCE_MIN, in, io, n, dt); }

int hwrt_mpi_types_init(void)
{
    if (t_f16 != MPI_DATATYPE_NULL)
        return 0;
    MPI_User_function *fns[4] = {op_sum, op_prod, op_max, op_min};
    if (MPI_Type_contiguous(2, MPI_BYTE, &t_f16) || MPI_Type_commit(&t_f16) ||
        MPI_Type_contiguous(2, MPI_BYTE, &t_bf16) || MPI_Type_commit(&t_bf16))
        return -1;
    for (int i = 0; i < 4; i++)
        if (MPI_Op_create(fns[i], 1, &half_ops[i]))
            return -1;
    return 0;
}

void hwrt_mpi_types_free(void)
{
    for (int i = 0; i < 4; i++)
        if (half_ops[i] != MPI_OP_NULL) MPI_Op_free(&half_ops[i]);
    if (t_f16 != MPI_DATATYPE_NULL) MPI_Type_free(&t_f16);
    if (t_bf16 != MPI_DATATYPE_NULL) MPI_Type_free(&t_bf16);
}

MPI_Datatype hwrt_mpi_type(int dtype)
{
    switch (dtype) {
    case HWRT_FLOAT32: return MPI_FLOAT;
    case HWRT_FLOAT64: return MPI_DOUBLE;
    case HWRT_FLOAT16: return t_f16;
    case HWRT_BFLOAT16: return t_bf16;
    case HWRT_INT8: return MPI_INT8_T;
    case HWRT_UINT8: return MPI_UINT8_T;
    case HWRT_INT32: return MPI_INT32_T;
    case HWRT_INT64: return MPI_INT64_T;
    default: return MPI_DATATYPE_NULL;
    }
}

MPI_Op hwrt_mpi_op(int dtype, int op)
{
    if (op < HWRT_REDUCE_SUM || op > HWRT_REDUCE_MIN)
        return MPI_OP_NULL;
    if (dtype == HWRT_FLOAT16 || dtype == HWRT_BFLOAT16)
        return half_ops[op];
    const MPI_Op ops[4] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN};
    return ops[op];
}
