/*
 * Software conversions between the TOSA floating-point storage formats.
 *
 * Everything works on bit patterns with integer arithmetic, so the results do not depend on the
 * host's rounding mode, on FTZ/DAZ settings or on how the compiler converts between float types.
 * `float` and `double` must be IEEE binary32/binary64 (checked at compile time in fp.c).
 *
 * Narrowing conversions round to nearest, ties to even, with one rounding step, and keep
 * subnormals. NaN inputs give a quiet NaN of the same sign; for the IEEE-style targets (fp16,
 * bf16, fp32, fp8e5m2) the top payload bits are kept and the quiet bit is set. Overflow:
 *   fp16, bf16, fp32, fp8e5m2: +-inf;
 *   fp8e4m3 (OCP E4M3FN, no infinity, max 448): NaN (0x7F / 0xFF), the OCP non-saturating mode,
 *   which is what TOSA CAST specifies. Infinite inputs also become NaN for E4M3.
 * The `_sat` variants are the OCP saturating mode: overflow and +-inf give +-max finite.
 *
 * Widening conversions are exact. fp16, bf16 and E5M2 NaN bit patterns are widened bit for bit
 * (sign and payload kept, a signalling NaN stays signalling); an E4M3 NaN becomes the fp32 quiet
 * NaN 0x7FC00000 with its sign.
 */
#ifndef TOSAC_CORE_FP_H
#define TOSAC_CORE_FP_H

#include <stdint.h>
#include <string.h>

/* Bit-pattern access without aliasing problems. */
static inline uint32_t tosac_fp32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
static inline float tosac_fp32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static inline uint64_t tosac_fp64_bits(double f)
{
    uint64_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
static inline double tosac_fp64_from_bits(uint64_t u)
{
    double f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* IEEE binary16. */
uint16_t tosac_fp32_to_fp16(float f);
float tosac_fp16_to_fp32(uint16_t h);
/* bfloat16 (the upper 16 bits of a binary32). */
uint16_t tosac_fp32_to_bf16(float f);
float tosac_bf16_to_fp32(uint16_t h);
/* OCP FP8 E4M3 (E4M3FN: bias 7, no inf, NaN = S.1111.111, max 448, min subnormal 2^-9). */
uint8_t tosac_fp32_to_fp8e4m3(float f);
uint8_t tosac_fp32_to_fp8e4m3_sat(float f);
float tosac_fp8e4m3_to_fp32(uint8_t b);
/* OCP FP8 E5M2 (bias 15, IEEE-like: inf 0x7C, NaN 0x7D..0x7F, max 57344, min subnormal 2^-16). */
uint8_t tosac_fp32_to_fp8e5m2(float f);
uint8_t tosac_fp32_to_fp8e5m2_sat(float f);
float tosac_fp8e5m2_to_fp32(uint8_t b);

/* From binary64 with a single rounding (no double rounding through fp32). */
float tosac_fp64_to_fp32(double f);
uint16_t tosac_fp64_to_fp16(double f);
uint16_t tosac_fp64_to_bf16(double f);
uint8_t tosac_fp64_to_fp8e4m3(double f);
uint8_t tosac_fp64_to_fp8e5m2(double f);

#endif
