/*
 * The one implementation of TOSA's integer scaling helpers (TOSA.md §B.3), shared by every kernel.
 * No implementation-defined C: right shifts of negative values go through tosac_asr64, products
 * are formed in int64 within the ranges the spec's REQUIREs guarantee, and every REQUIRE is
 * checked and reported to the caller (false = UNPREDICTABLE).
 */
#ifndef TOSAC_KERNELS_QUANT_MATH_H
#define TOSAC_KERNELS_QUANT_MATH_H

#include <stdbool.h>
#include <stdint.h>

/* Arithmetic (floor) right shift of a signed 64-bit value, 0 <= s <= 63. */
static inline int64_t tosac_asr64(int64_t x, unsigned s) { return x < 0 ? ~(~x >> s) : x >> s; }

/* Count of leading zeros of a 32-bit pattern; 32 for 0. */
static inline int32_t tosac_clz32(uint32_t x)
{
    if (x == 0) return 32;
    int32_t n = 0;
    while (!(x & 0x80000000u)) {
        x <<= 1;
        n++;
    }
    return n;
}

/* Clamps to [lo, hi]. */
static inline int64_t tosac_sat64(int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : x > hi ? hi : x; }

/* Wraps to the low `bits` bits, sign-extended (two's complement); 1 <= bits <= 64. */
static inline int64_t tosac_wrap(int64_t x, unsigned bits)
{
    if (bits >= 64) return x;
    uint64_t m = ((uint64_t)1 << bits) - 1, u = (uint64_t)x & m, sign = (uint64_t)1 << (bits - 1);
    return u & sign ? -(int64_t)((~u & m) + 1) : (int64_t)u;
}

/*
 * The arithmetic of apply_scale_32 once its REQUIREs hold (multiplier >= 0, 2 <= shift <= 62,
 * -2^(shift-1) <= value < 2^(shift-1)): floor((value * multiplier + round) / 2^shift) with round
 * from tosac_scale32_round. value * multiplier + round lies in (-2^62, 2^63), so adding 2^62 makes
 * it non-negative and the floor division an unsigned shift (2^62 is a multiple of 2^shift): no
 * signed shift, and loops over it vectorise (kernels keep round and shift per channel).
 */
static inline int64_t tosac_scale32_round(int32_t value, int32_t shift, bool double_round)
{
    int64_t round = (int64_t)1 << (shift - 1);
    if (double_round && shift > 31) round += value >= 0 ? ((int64_t)1 << 30) : -((int64_t)1 << 30);
    return round;
}
static inline int32_t tosac_scale32_core(int32_t value, int32_t multiplier, int64_t round, uint32_t shift)
{
    uint64_t u = (uint64_t)((int64_t)value * multiplier + round) + ((uint64_t)1 << 62);
    return (int32_t)(int64_t)((u >> shift) - ((uint64_t)1 << (62 - shift))); /* |r| < 2^31 */
}

/*
 * apply_scale_32(value, multiplier, shift, double_round): REQUIRE multiplier >= 0,
 * 2 <= shift <= 62, -2^(shift-1) <= value < 2^(shift-1). Returns false if a REQUIRE fails.
 */
static inline bool tosac_apply_scale_32(int32_t value, int32_t multiplier, int32_t shift, bool double_round,
                                        int32_t *out)
{
    if (multiplier < 0 || shift < 2 || shift > 62) return false;
    int64_t lim = (int64_t)1 << (shift - 1);
    if ((int64_t)value < -lim || (int64_t)value >= lim) return false;
    *out = tosac_scale32_core(value, multiplier, tosac_scale32_round(value, shift, double_round), (uint32_t)shift);
    return true;
}

/*
 * apply_scale_16(value:i48, multiplier:i16, shift): REQUIRE multiplier >= 0, 2 <= shift <= 62 and
 * the result fits int32. Returns false if a REQUIRE fails.
 */
static inline bool tosac_apply_scale_16(int64_t value, int32_t multiplier, int32_t shift, int32_t *out)
{
    if (multiplier < 0 || multiplier > INT16_MAX || shift < 2 || shift > 62) return false;
    if (value < -((int64_t)1 << 47) || value >= ((int64_t)1 << 47)) return false;
    int64_t r = tosac_asr64(value * multiplier + ((int64_t)1 << (shift - 1)), (unsigned)shift);
    if (r < INT32_MIN || r > INT32_MAX) return false;
    *out = (int32_t)r;
    return true;
}

/* reciprocal_scale(count > 0) for AVG_POOL2D: multiplier in [2^30, 2^31), shift = 30 + k. */
static inline void tosac_reciprocal_scale(uint32_t count, int32_t *multiplier, int32_t *shift)
{
    int32_t k = 32 - tosac_clz32(count - 1);
    /* m = ((2^30 + 1) << k) / count by long division over the k zero bits, 32-bit operations only (a
       per-pixel call; count <= INT32_MAX keeps 2 * r below 2^32) */
    const uint32_t a = (UINT32_C(1) << 30) + 1;
    uint32_t m = a / count, r = a % count;
    for (int32_t b = 0; b < k; b++) {
        m <<= 1, r <<= 1;
        if (r >= count) r -= count, m++;
    }
    *multiplier = (int32_t)m;
    *shift = 30 + k;
}

#endif
