/* Decoding single elements of the TOSA file encoding (TOSA.md §A.6), for every reader of
   constant bytes: the validator, the printer, the runtime's constant conversion. */
#ifndef TOSAC_CORE_ENCODING_H
#define TOSAC_CORE_ENCODING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/fp.h"
#include "tosac/dtype.h"

/* Little-endian unsigned load of n <= 8 bytes. */
static inline uint64_t tosac_le_load(const uint8_t *p, unsigned n)
{
    uint64_t u = 0;
    for (unsigned k = 0; k < n; k++) u |= (uint64_t)p[k] << (8 * k);
    return u;
}

/* Two's complement value of the low `bits` bits of u (1 <= bits <= 64), without
   implementation-defined conversions. */
static inline int64_t tosac_sign_extend(uint64_t u, unsigned bits)
{
    if (bits < 64) {
        u &= ((uint64_t)1 << bits) - 1;
        if (u & ((uint64_t)1 << (bits - 1))) return -(int64_t)(((uint64_t)1 << bits) - u);
        return (int64_t)u;
    }
    if (u & 0x8000000000000000ull) return -(int64_t)(~u) - 1;
    return (int64_t)u;
}

/* Element i of integer-like data (BOOL, INT4..INT48, SHAPE) of `len` bytes; false for other types
   or when the element lies outside the data. */
static inline bool tosac_encoded_int(tosac_dtype t, const uint8_t *d, size_t len, uint64_t i, int64_t *out)
{
    unsigned bytes;
    switch (t) {
    case TOSAC_DTYPE_INT4:
        if (i / 2 >= len) return false;
        *out = tosac_sign_extend((i & 1) ? (uint64_t)(d[i / 2] >> 4) : (uint64_t)(d[i / 2] & 0x0F), 4);
        return true;
    case TOSAC_DTYPE_BOOL:
        if (i >= len) return false;
        *out = d[i] != 0;
        return true;
    case TOSAC_DTYPE_INT8: bytes = 1; break;
    case TOSAC_DTYPE_INT16: bytes = 2; break;
    case TOSAC_DTYPE_INT32: bytes = 4; break;
    case TOSAC_DTYPE_INT48: bytes = 6; break;
    case TOSAC_DTYPE_SHAPE: bytes = 8; break;
    default: return false;
    }
    if (i > (uint64_t)SIZE_MAX / bytes - 1 || (i + 1) * bytes > len) return false;
    *out = tosac_sign_extend(tosac_le_load(d + i * bytes, bytes), bytes * 8);
    return true;
}

/* Element i of floating-point data (FP32, FP16, BF16, FP8E4M3, FP8E5M2) as double. */
static inline bool tosac_encoded_fp(tosac_dtype t, const uint8_t *d, size_t len, uint64_t i, double *out)
{
    unsigned bytes = t == TOSAC_DTYPE_FP32 ? 4 : (t == TOSAC_DTYPE_FP16 || t == TOSAC_DTYPE_BF16) ? 2 : 1;
    if (!tosac_dtype_is_float(t) || i > (uint64_t)SIZE_MAX / bytes - 1 || (i + 1) * bytes > len) return false;
    uint64_t u = tosac_le_load(d + i * bytes, bytes);
    switch (t) {
    case TOSAC_DTYPE_FP32: *out = tosac_fp32_from_bits((uint32_t)u); break;
    case TOSAC_DTYPE_FP16: *out = tosac_fp16_to_fp32((uint16_t)u); break;
    case TOSAC_DTYPE_BF16: *out = tosac_bf16_to_fp32((uint16_t)u); break;
    case TOSAC_DTYPE_FP8E4M3: *out = tosac_fp8e4m3_to_fp32((uint8_t)u); break;
    default: *out = tosac_fp8e5m2_to_fp32((uint8_t)u); break;
    }
    return true;
}

#endif
