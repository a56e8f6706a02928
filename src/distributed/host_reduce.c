/* The division that turns a SUM into an AVG, on host-addressable data. Floats divide in
 * their own precision (float16/bfloat16 through float32, rounded once); integers truncate
 * toward zero, as C does. */
#include "dist.h"
#include "../base/half.h"

#define DIV_LOOP(T) do { T *p = buf; for (size_t i = 0; i < n; i++) p[i] = (T)(p[i] / (T)by); } while (0)

void hwi_dist_divide(void *buf, size_t n, hwrt_dtype dt, int by)
{
    if (by == 1)
        return;
    switch (dt) {
    case HWRT_FLOAT32: DIV_LOOP(float); break;
    case HWRT_FLOAT64: DIV_LOOP(double); break;
    case HWRT_INT8: DIV_LOOP(int8_t); break;
    case HWRT_UINT8: DIV_LOOP(uint8_t); break;
    case HWRT_INT32: DIV_LOOP(int32_t); break;
    case HWRT_INT64: DIV_LOOP(int64_t); break;
    case HWRT_FLOAT16: {
        uint16_t *p = buf;
        for (size_t i = 0; i < n; i++) p[i] = hwi_float_to_half(hwi_half_to_float(p[i]) / (float)by);
        break;
    }
    case HWRT_BFLOAT16: {
        uint16_t *p = buf;
        for (size_t i = 0; i < n; i++) p[i] = hwi_float_to_bf16(hwi_bf16_to_float(p[i]) / (float)by);
        break;
    }
    default: break;
    }
}
