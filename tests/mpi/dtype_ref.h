/* Host reference for the distributed tests: a value every rank can compute for any rank,
 * element and dtype, and conversions between dtypes and double. Values are small
 * integers so that every reduction over <= 4 ranks is exact in every dtype, float16 and
 * bfloat16 included: a mismatch is a wrong result, never rounding. */
#ifndef HWRT_TEST_DTYPE_REF_H
#define HWRT_TEST_DTYPE_REF_H

#include <hwrt.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "base/half.h"

static const hwrt_dtype ref_dtypes[] = {HWRT_FLOAT32, HWRT_FLOAT16, HWRT_BFLOAT16, HWRT_FLOAT64,
                                        HWRT_INT32, HWRT_INT64, HWRT_INT8, HWRT_UINT8};
#define REF_NDTYPES ((int)(sizeof ref_dtypes / sizeof ref_dtypes[0]))

/* The value rank r holds at element i: in [-3, 3] (unsigned: [0, 3]), never 0 for PROD's
 * sake at most of the positions. */
static inline double ref_value(hwrt_dtype dt, int r, int64_t i)
{
    int v = (int)((r * 3 + i * 5 + 1) % 7) - 3;
    return dt == HWRT_UINT8 ? (double)abs(v) : (double)v;
}

static inline void ref_store(hwrt_dtype dt, void *buf, int64_t i, double v)
{
    switch (dt) {
    case HWRT_FLOAT32: ((float *)buf)[i] = (float)v; break;
    case HWRT_FLOAT64: ((double *)buf)[i] = v; break;
    case HWRT_FLOAT16: ((uint16_t *)buf)[i] = hwi_float_to_half((float)v); break;
    case HWRT_BFLOAT16: ((uint16_t *)buf)[i] = hwi_float_to_bf16((float)v); break;
    case HWRT_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case HWRT_INT64: ((int64_t *)buf)[i] = (int64_t)v; break;
    case HWRT_INT8: ((int8_t *)buf)[i] = (int8_t)v; break;
    case HWRT_UINT8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
    default: break;
    }
}

static inline double ref_load(hwrt_dtype dt, const void *buf, int64_t i)
{
    switch (dt) {
    case HWRT_FLOAT32: return ((const float *)buf)[i];
    case HWRT_FLOAT64: return ((const double *)buf)[i];
    case HWRT_FLOAT16: return hwi_half_to_float(((const uint16_t *)buf)[i]);
    case HWRT_BFLOAT16: return hwi_bf16_to_float(((const uint16_t *)buf)[i]);
    case HWRT_INT32: return ((const int32_t *)buf)[i];
    case HWRT_INT64: return (double)((const int64_t *)buf)[i];
    case HWRT_INT8: return ((const int8_t *)buf)[i];
    case HWRT_UINT8: return ((const uint8_t *)buf)[i];
    default: return NAN;
    }
}

static inline int ref_is_int(hwrt_dtype dt)
{
    return dt == HWRT_INT32 || dt == HWRT_INT64 || dt == HWRT_INT8 || dt == HWRT_UINT8;
}

/* The reduction of element i over `size` ranks, as hwrt defines it (AVG = SUM / size,
 * integers truncated toward zero). */
static inline double ref_reduce(hwrt_dtype dt, hwrt_reduce_op op, int size, int64_t i)
{
    double acc = ref_value(dt, 0, i);
    for (int r = 1; r < size; r++) {
        double v = ref_value(dt, r, i);
        switch (op) {
        case HWRT_REDUCE_PROD: acc *= v; break;
        case HWRT_REDUCE_MAX: acc = v > acc ? v : acc; break;
        case HWRT_REDUCE_MIN: acc = v < acc ? v : acc; break;
        default: acc += v; break;
        }
    }
    if (op == HWRT_REDUCE_AVG)
        acc = ref_is_int(dt) ? trunc(acc / size) : acc / size;
    return acc;
}

#endif
