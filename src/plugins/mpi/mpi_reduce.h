/* MPI datatypes and reduction operators for hwrt dtypes, float16 and bfloat16 included
 * (MPI has no 16-bit float types: they travel as 2-byte opaque types and reduce through
 * user operators that compute in float32 and round to nearest even). */
#ifndef HWRT_MPI_REDUCE_H
#define HWRT_MPI_REDUCE_H

#include <mpi.h>

/* Create the 16-bit float types and operators (once, after MPI_Init). 0 on success. */
int hwrt_mpi_types_init(void);
void hwrt_mpi_types_free(void);
/* The MPI datatype of an hwrt_dtype; MPI_DATATYPE_NULL for bool or an unknown value. */
MPI_Datatype hwrt_mpi_type(int dtype);
/* The operator for hwrt_reduce_op SUM/PROD/MAX/MIN on dtype; MPI_OP_NULL if none. */
MPI_Op hwrt_mpi_op(int dtype, int op);

#endif
