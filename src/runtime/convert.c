/*
 * Conversions between the TOSA data encoding (TOSA.md A.6: little-endian, INT4 packed two per
 * byte, INT48 in 6 bytes) and the runtime's execution storage (kernels/kernel.h), byte by byte so
 * that the result does not depend on the host's byte order.
 */
#include <string.h>

#include "core/encoding.h"
#include "core/fp.h"
#include "runtime/program.h"

bool rt_is_float(tosac_dtype t)
{
    return t == TOSAC_DTYPE_FP32 || t == TOSAC_DTYPE_FP16 || t == TOSAC_DTYPE_BF16 || t == TOSAC_DTYPE_FP8E4M3 ||
           t == TOSAC_DTYPE_FP8E5M2;
}

bool rt_tosa_bytes(tosac_dtype t, bool f64, int64_t nelem, size_t *out)
{
    if (nelem < 0) return false;
    if (f64 && rt_is_float(t)) return (uint64_t)nelem <= SIZE_MAX / 8 ? (*out = (size_t)nelem * 8, true) : false;
    return tosac_dtype_storage_bytes(t, nelem, out);
}

/* The host stores integers and IEEE floats little-endian, as the TOSA encoding does. */
static bool host_le(void)
{
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return true;
#else
    return false;
#endif
}

/*
 * True when `bytes` of encoded data are the execution storage as they are (the same width on a
 * little-endian host; f64_src: FP data encoded as double, in precise mode), so decoding and encoding
 * are one memcpy: a 100 MB weight file decoded element by element was a visible part of a program's
 * create.
 */
static bool same_bytes(tosac_dtype t, bool f64, bool f64_src, int64_t nelem, size_t *bytes)
{
    bool as_is;
    switch (t) {
    case TOSAC_DTYPE_INT8:
    case TOSAC_DTYPE_INT16:
    case TOSAC_DTYPE_INT32:
    case TOSAC_DTYPE_SHAPE: as_is = true; break;
    case TOSAC_DTYPE_FP32:
    case TOSAC_DTYPE_FP16:
    case TOSAC_DTYPE_BF16:
    case TOSAC_DTYPE_FP8E4M3:
    case TOSAC_DTYPE_FP8E5M2: as_is = f64 == f64_src; break;
    default: as_is = false; break; /* BOOL (normalised to 0/1), INT4 (packed), INT48 (6 bytes) */
    }
    return as_is && host_le() && rt_tosa_bytes(t, f64, nelem, bytes);
}

static void st(uint8_t *p, uint64_t u, unsigned n)
{
    for (unsigned k = 0; k < n; k++) p[k] = (uint8_t)(u >> (8 * k));
}

static double fp_to_double(tosac_dtype t, uint64_t bits)
{
    switch (t) {
    case TOSAC_DTYPE_FP32: return tosac_fp32_from_bits((uint32_t)bits);
    case TOSAC_DTYPE_FP16: return tosac_fp16_to_fp32((uint16_t)bits);
    case TOSAC_DTYPE_BF16: return tosac_bf16_to_fp32((uint16_t)bits);
    case TOSAC_DTYPE_FP8E4M3: return tosac_fp8e4m3_to_fp32((uint8_t)bits);
    case TOSAC_DTYPE_FP8E5M2: return tosac_fp8e5m2_to_fp32((uint8_t)bits);
    default: return 0.0;
    }
}

void rt_decode(tosac_dtype t, bool f64, bool src_f64, const uint8_t *src, int64_t nelem, void *dst)
{
    bool fl = rt_is_float(t);
    size_t bytes;
    if (same_bytes(t, f64, src_f64, nelem, &bytes)) {
        if (bytes) memcpy(dst, src, bytes);
        return;
    }
    if (fl && f64) {
        double *o = dst;
        unsigned w = src_f64 ? 8 : tosac_dtype_bits(t) / 8;
        for (int64_t i = 0; i < nelem; i++) {
            uint64_t u = tosac_le_load(src + (size_t)i * w, w);
            o[i] = src_f64 ? tosac_fp64_from_bits(u) : fp_to_double(t, u);
        }
        return;
    }
    switch (t) {
    case TOSAC_DTYPE_BOOL:
        for (int64_t i = 0; i < nelem; i++) ((uint8_t *)dst)[i] = src[i] != 0;
        break;
    case TOSAC_DTYPE_INT4:
        for (int64_t i = 0; i < nelem; i++) {
            uint8_t b = src[i / 2];
            ((int8_t *)dst)[i] = (int8_t)tosac_sign_extend((i & 1) ? (uint64_t)(b >> 4) : (uint64_t)(b & 0x0F), 4);
        }
        break;
    case TOSAC_DTYPE_INT8:
        for (int64_t i = 0; i < nelem; i++) ((int8_t *)dst)[i] = (int8_t)tosac_sign_extend(src[i], 8);
        break;
    case TOSAC_DTYPE_INT16:
        for (int64_t i = 0; i < nelem; i++)
            ((int16_t *)dst)[i] = (int16_t)tosac_sign_extend(tosac_le_load(src + (size_t)i * 2, 2), 16);
        break;
    case TOSAC_DTYPE_INT32:
        for (int64_t i = 0; i < nelem; i++)
            ((int32_t *)dst)[i] = (int32_t)tosac_sign_extend(tosac_le_load(src + (size_t)i * 4, 4), 32);
        break;
    case TOSAC_DTYPE_INT48:
        for (int64_t i = 0; i < nelem; i++)
            ((int64_t *)dst)[i] = tosac_sign_extend(tosac_le_load(src + (size_t)i * 6, 6), 48);
        break;
    case TOSAC_DTYPE_SHAPE:
        for (int64_t i = 0; i < nelem; i++)
            ((int64_t *)dst)[i] = tosac_sign_extend(tosac_le_load(src + (size_t)i * 8, 8), 64);
        break;
    case TOSAC_DTYPE_FP32:
        for (int64_t i = 0; i < nelem; i++)
            ((float *)dst)[i] = tosac_fp32_from_bits((uint32_t)tosac_le_load(src + (size_t)i * 4, 4));
        break;
    case TOSAC_DTYPE_FP16:
    case TOSAC_DTYPE_BF16:
        for (int64_t i = 0; i < nelem; i++) ((uint16_t *)dst)[i] = (uint16_t)tosac_le_load(src + (size_t)i * 2, 2);
        break;
    case TOSAC_DTYPE_FP8E4M3:
    case TOSAC_DTYPE_FP8E5M2:
        memcpy(dst, src, (size_t)nelem);
        break;
    default: break;
    }
}

void rt_encode(tosac_dtype t, bool f64, const void *src, int64_t nelem, uint8_t *dst)
{
    size_t bytes;
    if (same_bytes(t, f64, f64, nelem, &bytes)) {
        if (bytes) memcpy(dst, src, bytes);
        return;
    }
    if (f64 && rt_is_float(t)) {
        for (int64_t i = 0; i < nelem; i++) st(dst + (size_t)i * 8, tosac_fp64_bits(((const double *)src)[i]), 8);
        return;
    }
    switch (t) {
    case TOSAC_DTYPE_BOOL:
        for (int64_t i = 0; i < nelem; i++) dst[i] = ((const uint8_t *)src)[i] != 0;
        break;
    case TOSAC_DTYPE_INT4: {
        size_t nb = (size_t)(nelem + 1) / 2;
        memset(dst, 0, nb);
        for (int64_t i = 0; i < nelem; i++) {
            uint8_t nib = (uint8_t)((uint8_t)((const int8_t *)src)[i] & 0x0F);
            dst[i / 2] |= (uint8_t)((i & 1) ? nib << 4 : nib);
        }
        break;
    }
    case TOSAC_DTYPE_INT8:
    case TOSAC_DTYPE_FP8E4M3:
    case TOSAC_DTYPE_FP8E5M2:
        memcpy(dst, src, (size_t)nelem);
        break;
    case TOSAC_DTYPE_INT16:
        for (int64_t i = 0; i < nelem; i++) st(dst + (size_t)i * 2, (uint64_t)(int64_t)((const int16_t *)src)[i], 2);
        break;
    case TOSAC_DTYPE_FP16:
    case TOSAC_DTYPE_BF16:
        for (int64_t i = 0; i < nelem; i++) st(dst + (size_t)i * 2, ((const uint16_t *)src)[i], 2);
        break;
    case TOSAC_DTYPE_INT32:
        for (int64_t i = 0; i < nelem; i++) st(dst + (size_t)i * 4, (uint64_t)(int64_t)((const int32_t *)src)[i], 4);
        break;
    case TOSAC_DTYPE_FP32:
        for (int64_t i = 0; i < nelem; i++) st(dst + (size_t)i * 4, tosac_fp32_bits(((const float *)src)[i]), 4);
        break;
    case TOSAC_DTYPE_INT48:
        for (int64_t i = 0; i < nelem; i++) st(dst + (size_t)i * 6, (uint64_t)((const int64_t *)src)[i], 6);
        break;
    case TOSAC_DTYPE_SHAPE:
        for (int64_t i = 0; i < nelem; i++) st(dst + (size_t)i * 8, (uint64_t)((const int64_t *)src)[i], 8);
        break;
    default: break;
    }
}
