/* The tests' own host-side element access for every hwrt dtype, as the API specifies it:
 * floats round to nearest even (through float32 for the 16-bit types), ints truncate
 * toward zero and saturate (NaN stores 0), bool stores v != 0. Shared by the conformance
 * suite and the OpenCL op tests; independent of the backends' own conversions except
 * for the half/bfloat16 bit rules (half.h). */
#ifndef HWRT_TEST_DTYPE_REF_H
#define HWRT_TEST_DTYPE_REF_H

#include <hwrt.h>
#include "../src/base/half.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

static inline double ref_sat(double v, double lo, double hi)
{
    if (isnan(v)) return 0;
    v = trunc(v);
    return v < lo ? lo : v > hi ? hi : v;
}

static inline void ref_put(hwrt_dtype dt, void *p, size_t i, double v)
{
    switch (dt) {
    case HWRT_FLOAT32: ((float *)p)[i] = (float)v; break;
    case HWRT_FLOAT16: ((uint16_t *)p)[i] = hwi_float_to_half((float)v); break;
    case HWRT_BFLOAT16: ((uint16_t *)p)[i] = hwi_float_to_bf16((float)v); break;
    case HWRT_FLOAT64: ((double *)p)[i] = v; break;
    case HWRT_INT8: ((int8_t *)p)[i] = (int8_t)ref_sat(v, -128, 127); break;
    case HWRT_UINT8: ((uint8_t *)p)[i] = (uint8_t)ref_sat(v, 0, 255); break;
    case HWRT_INT32: ((int32_t *)p)[i] = (int32_t)ref_sat(v, -2147483648.0, 2147483647.0); break;
    case HWRT_INT64:
        ((int64_t *)p)[i] = (int64_t)ref_sat(v, -9223372036854775808.0, 9223372036854774784.0);
        break;
    default: ((uint8_t *)p)[i] = v != 0; break;
    }
}

static inline double ref_get(hwrt_dtype dt, const void *p, size_t i)
{
    switch (dt) {
    case HWRT_FLOAT32: return ((const float *)p)[i];
    case HWRT_FLOAT16: return hwi_half_to_float(((const uint16_t *)p)[i]);
    case HWRT_BFLOAT16: return hwi_bf16_to_float(((const uint16_t *)p)[i]);
    case HWRT_FLOAT64: return ((const double *)p)[i];
    case HWRT_INT8: return ((const int8_t *)p)[i];
    case HWRT_UINT8: return ((const uint8_t *)p)[i];
    case HWRT_INT32: return ((const int32_t *)p)[i];
    case HWRT_INT64: return (double)((const int64_t *)p)[i];
    default: return ((const uint8_t *)p)[i] != 0;
    }
}

#endif
