/* float16 / bfloat16 <-> float32 conversions (round to nearest even), shared by the sim
 * kernels, the host references in tests and the tensor layer. Header-only. */
#ifndef HWI_HALF_H
#define HWI_HALF_H

#include <stdint.h>
#include <string.h>

static inline float hwi_f32_from_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t hwi_bits_from_f32(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

static inline float hwi_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0) {
        if (man == 0) return hwi_f32_from_bits(sign);
        /* subnormal: value = man * 2^-24 */
        float f = (float)man * 5.9604644775390625e-8f;
        return sign ? -f : f;
    }
    if (exp == 31)
        return hwi_f32_from_bits(sign | 0x7f800000u | (man << 13));
    return hwi_f32_from_bits(sign | ((exp + 112u) << 23) | (man << 13));
}

static inline uint16_t hwi_float_to_half(float f)
{
    uint32_t x = hwi_bits_from_f32(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u)                       /* inf or nan */
        return (uint16_t)(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0));
    if (absx >= 0x477ff000u)                       /* rounds to >= 65520: overflow to inf */
        return (uint16_t)(sign | 0x7c00u);
    if (absx < 0x38800000u) {                      /* below 2^-14: subnormal or zero */
        if (absx < 0x33000000u) return (uint16_t)sign;   /* < 2^-25 rounds to 0 */
        uint32_t e = absx >> 23;
        uint32_t m = (absx & 0x7fffffu) | 0x800000u;
        /* value = m * 2^(e-150); in units of 2^-24 that is m >> (126 - e) */
        uint32_t shift = 126u - e;
        uint32_t r = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1u);
        uint32_t half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1u))) r++;
        return (uint16_t)(sign | r);
    }
    uint32_t r = absx - 0x38000000u;               /* rebias exponent 127 -> 15 */
    uint32_t out = r >> 13;
    uint32_t rem = r & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (out & 1u))) out++;
    return (uint16_t)(sign | out);
}

static inline float hwi_bf16_to_float(uint16_t b) { return hwi_f32_from_bits((uint32_t)b << 16); }

static inline uint16_t hwi_float_to_bf16(float f)
{
    uint32_t x = hwi_bits_from_f32(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)           /* nan stays nan */
        return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

#endif
