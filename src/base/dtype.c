/* Data types: sizes, names and parsing. */
#include "hwrt.h"
#include "../base/status.h"

#include <string.h>
#include <strings.h>

static const struct { size_t size; const char *name; const char *alias[3]; } info[HWRT_DTYPE_COUNT] = {
    [HWRT_FLOAT32] = {4, "float32", {"float", "fp32", "f32"}},
    [HWRT_FLOAT16] = {2, "float16", {"half", "fp16", "f16"}},
    [HWRT_BFLOAT16] = {2, "bfloat16", {"bf16", NULL, NULL}},
    [HWRT_FLOAT64] = {8, "float64", {"double", "fp64", "f64"}},
    [HWRT_INT8] = {1, "int8", {"i8", NULL, NULL}},
    [HWRT_UINT8] = {1, "uint8", {"u8", NULL, NULL}},
    [HWRT_INT32] = {4, "int32", {"int", "i32", NULL}},
    [HWRT_INT64] = {8, "int64", {"long", "i64", NULL}},
    [HWRT_BOOL] = {1, "bool", {"bool_", NULL, NULL}},
    [HWRT_INT16] = {2, "int16", {"short", "i16", NULL}},
    [HWRT_UINT16] = {2, "uint16", {"ushort", "u16", NULL}},
    [HWRT_UINT32] = {4, "uint32", {"uint", "u32", NULL}},
    [HWRT_UINT64] = {8, "uint64", {"ulong", "u64", NULL}},
    [HWRT_COMPLEX64] = {8, "complex64", {"cfloat", "c64", NULL}},
    [HWRT_COMPLEX128] = {16, "complex128", {"cdouble", "complex", "c128"}},
};

size_t hwrt_dtype_size(hwrt_dtype dt)
{
    return (unsigned)dt < HWRT_DTYPE_COUNT ? info[dt].size : 0;
}

const char *hwrt_dtype_name(hwrt_dtype dt)
{
    return (unsigned)dt < HWRT_DTYPE_COUNT ? info[dt].name : "";
}

hwrt_status hwrt_dtype_from_name(const char *name, hwrt_dtype *out)
{
    if (!name || !out)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_dtype_from_name: name and out are required");
    for (int i = 0; i < HWRT_DTYPE_COUNT; i++) {
        int hit = !strcasecmp(name, info[i].name);
        for (int j = 0; j < 3 && !hit; j++)
            hit = info[i].alias[j] && !strcasecmp(name, info[i].alias[j]);
        if (hit) { *out = (hwrt_dtype)i; return HWRT_SUCCESS; }
    }
    return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "unknown dtype \"%s\"; use float32, float16, "
                   "bfloat16, float64, int8, uint8, int16, uint16, int32, uint32, int64, uint64, "
                   "bool, complex64 or complex128", name);
}
