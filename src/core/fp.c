/* Software float conversions on bit patterns (see fp.h for the exact rules). */
#include "core/fp.h"

#include <float.h>

_Static_assert(sizeof(float) == 4 && FLT_RADIX == 2 && FLT_MANT_DIG == 24 && FLT_MAX_EXP == 128,
               "float must be IEEE binary32");
_Static_assert(sizeof(double) == 8 && DBL_MANT_DIG == 53 && DBL_MAX_EXP == 1024,
               "double must be IEEE binary64");

#define F64_EXP_MASK 0x7FFu
#define F64_MANT_MASK UINT64_C(0x000FFFFFFFFFFFFF)

/* Exact binary32 -> binary64 on bit patterns (NaN payload moves to the top of the fraction). */
static uint64_t f32bits_to_f64bits(uint32_t u)
{
    const uint64_t sign = (uint64_t)(u >> 31) << 63;
    const uint32_t e = (u >> 23) & 0xFFu;
    uint32_t m = u & 0x7FFFFFu;
    if (e == 0xFFu) return sign | UINT64_C(0x7FF0000000000000) | ((uint64_t)m << 29);
    if (e == 0) {
        if (m == 0) return sign;
        int E = -126; /* subnormal: value = m * 2^-149; normalise so that bit 23 is set */
        while (!(m & 0x800000u)) {
            m <<= 1;
            E--;
        }
        m &= 0x7FFFFFu;
        return sign | ((uint64_t)(E + 1023) << 52) | ((uint64_t)m << 29);
    }
    return sign | ((uint64_t)(e - 127u + 1023u) << 52) | ((uint64_t)m << 29);
}

/*
 * Rounds a binary64 bit pattern to a narrow format with `ebits` exponent and `mbits` fraction bits
 * (bias 2^(ebits-1)-1), round to nearest even, one rounding step, subnormals kept.
 * fn: E4M3FN-style format (no inf, only S.1..1.1..1 is NaN, the top exponent holds normal values);
 * otherwise IEEE-style (top exponent = inf/NaN). sat: overflow and inf give max finite.
 */
static uint32_t narrow_from_f64bits(uint64_t x, unsigned ebits, unsigned mbits, int fn, int sat)
{
    const uint32_t emax = (1u << ebits) - 1u;
    const uint32_t mmax = (1u << mbits) - 1u;
    const int bias = (1 << (ebits - 1)) - 1;
    const uint32_t sign = (uint32_t)(x >> 63) << (ebits + mbits);
    const uint32_t maxfin = fn ? (emax << mbits) | (mmax - 1u) : ((emax - 1u) << mbits) | mmax;
    const uint32_t qnan = fn ? (emax << mbits) | mmax : (emax << mbits) | (1u << (mbits - 1));
    const uint32_t over = sat ? maxfin : fn ? qnan : emax << mbits;
    const unsigned e = (unsigned)(x >> 52) & F64_EXP_MASK;
    const uint64_t m = x & F64_MANT_MASK;

    if (e == F64_EXP_MASK) {
        if (m == 0) return sign | over; /* infinity */
        if (fn) return sign | qnan;
        return sign | qnan | (uint32_t)(m >> (52 - mbits)); /* keep the top payload bits, quiet */
    }
    /* Zero, or a binary64 subnormal (< 2^-1022): below half of every target's smallest subnormal. */
    if (e == 0) return sign;

    const int E = (int)e - 1023; /* value = sig * 2^(E-52) */
    if (E > bias + 1) return sign | over; /* >= 2^(bias+2): beyond every finite value */
    const int emin = 1 - bias;
    const int Eq = E > emin ? E : emin; /* binade whose ulp applies (subnormals share emin's) */
    const uint64_t sig = m | (UINT64_C(1) << 52);
    const int shift = Eq - (int)mbits - (E - 52); /* bits of sig below the target ulp; >= 52-mbits */
    if (shift >= 64) return sign; /* value < 2^-11 ulp */
    uint64_t r = sig >> shift;
    const uint64_t rem = sig & ((UINT64_C(1) << shift) - 1u);
    const uint64_t half = UINT64_C(1) << (shift - 1);
    if (rem > half || (rem == half && (r & 1u))) r++;
    /*
     * For normals r is in [2^mbits, 2^(mbits+1)]: adding it to (biased exponent - 1) << mbits sets
     * the exponent field and lets a carry from rounding move to the next binade. For subnormals the
     * biased exponent is 0 and r < 2^mbits (or == 2^mbits: rounded up to the smallest normal).
     */
    const uint64_t bits = ((uint64_t)(Eq + bias - 1) << mbits) + r;
    if (bits > maxfin) return sign | over;
    return sign | (uint32_t)bits;
}

/* Exact widening of a narrow format with ebits <= 5 (every value is a binary32 normal or zero). */
static uint32_t widen_to_f32bits(uint32_t b, unsigned ebits, unsigned mbits, int fn)
{
    const uint32_t emax = (1u << ebits) - 1u;
    const uint32_t mmax = (1u << mbits) - 1u;
    const int bias = (1 << (ebits - 1)) - 1;
    const uint32_t sign = ((b >> (ebits + mbits)) & 1u) << 31;
    const uint32_t e = (b >> mbits) & emax;
    uint32_t m = b & mmax;

    if (fn) {
        if (e == emax && m == mmax) return sign | 0x7FC00000u;
    } else if (e == emax) {
        return sign | 0x7F800000u | (m << (23 - mbits)); /* inf, or NaN bit for bit */
    }
    if (e == 0) {
        if (m == 0) return sign;
        int E = 1 - bias; /* subnormal: m * 2^(1-bias-mbits); normalise so that bit mbits is set */
        while (!(m & (1u << mbits))) {
            m <<= 1;
            E--;
        }
        return sign | ((uint32_t)(E + 127) << 23) | ((m & mmax) << (23 - mbits));
    }
    return sign | ((uint32_t)((int)e - bias + 127) << 23) | (m << (23 - mbits));
}

uint16_t tosac_fp32_to_fp16(float f)
{
    return (uint16_t)narrow_from_f64bits(f32bits_to_f64bits(tosac_fp32_bits(f)), 5, 10, 0, 0);
}

float tosac_fp16_to_fp32(uint16_t h) { return tosac_fp32_from_bits(widen_to_f32bits(h, 5, 10, 0)); }

uint16_t tosac_fp32_to_bf16(float f)
{
    uint32_t u = tosac_fp32_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x0040u); /* quiet NaN */
    /* Round to nearest even on the low 16 bits; cannot wrap (largest input 0xFF800000). */
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

float tosac_bf16_to_fp32(uint16_t h) { return tosac_fp32_from_bits((uint32_t)h << 16); }

uint8_t tosac_fp32_to_fp8e4m3(float f)
{
    return (uint8_t)narrow_from_f64bits(f32bits_to_f64bits(tosac_fp32_bits(f)), 4, 3, 1, 0);
}

uint8_t tosac_fp32_to_fp8e4m3_sat(float f)
{
    return (uint8_t)narrow_from_f64bits(f32bits_to_f64bits(tosac_fp32_bits(f)), 4, 3, 1, 1);
}

float tosac_fp8e4m3_to_fp32(uint8_t b) { return tosac_fp32_from_bits(widen_to_f32bits(b, 4, 3, 1)); }

uint8_t tosac_fp32_to_fp8e5m2(float f)
{
    return (uint8_t)narrow_from_f64bits(f32bits_to_f64bits(tosac_fp32_bits(f)), 5, 2, 0, 0);
}

uint8_t tosac_fp32_to_fp8e5m2_sat(float f)
{
    return (uint8_t)narrow_from_f64bits(f32bits_to_f64bits(tosac_fp32_bits(f)), 5, 2, 0, 1);
}

float tosac_fp8e5m2_to_fp32(uint8_t b) { return tosac_fp32_from_bits(widen_to_f32bits(b, 5, 2, 0)); }

float tosac_fp64_to_fp32(double f)
{
    return tosac_fp32_from_bits(narrow_from_f64bits(tosac_fp64_bits(f), 8, 23, 0, 0));
}

uint16_t tosac_fp64_to_fp16(double f) { return (uint16_t)narrow_from_f64bits(tosac_fp64_bits(f), 5, 10, 0, 0); }

uint16_t tosac_fp64_to_bf16(double f) { return (uint16_t)narrow_from_f64bits(tosac_fp64_bits(f), 8, 7, 0, 0); }

uint8_t tosac_fp64_to_fp8e4m3(double f) { return (uint8_t)narrow_from_f64bits(tosac_fp64_bits(f), 4, 3, 1, 0); }

uint8_t tosac_fp64_to_fp8e5m2(double f) { return (uint8_t)narrow_from_f64bits(tosac_fp64_bits(f), 5, 2, 0, 0); }
