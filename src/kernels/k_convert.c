/*
 * Type-conversion kernels: the `cast` (CAST), `rescale` (RESCALE) and `identity` (IDENTITY)
 * families (TOSA.md §B.3).
 *
 * CAST
 *   int -> int   narrower: keep the low bits (two's complement wrap); wider: sign-extend.
 *   bool -> int  0/1;  int/fp -> bool: x != 0.
 *   int -> fp    one rounding to nearest even (the integer is exact in double).
 *   fp -> int    saturate to the output range (x >= max -> max, x <= min -> min), otherwise round
 *                half to even; a NaN input fails a REQUIRE (UNPREDICTABLE).
 *   fp -> fp     one rounding to nearest even from the exact value (core/fp.h): NaN stays NaN,
 *                overflow gives +-inf (fp8e4m3: NaN, the OCP non-saturating mode).
 *   Precise mode (f64 storage): FP values are read and written as double (fp -> fp copies).
 *   Typed loops cover the int8/int16/int32/bool/fp32 rows and fp16/bf16 <-> fp32; the other rows
 *   (fp8, bf16/fp16 <-> int, precise mode) use the generic per-element loaders of kutil.h.
 *
 * RESCALE follows the per-element algorithm of TOSA.md §B.3 with tosac_apply_scale_32/16. Every
 * REQUIRE failure returns TOSAC_ERR_UNPREDICTABLE. INEXACT_ROUND (EXT-INEXACTROUND) is computed as
 * the reference model does in normal mode: r = rint(float(x) * float(m) * 2^-shift), with fp32
 * arithmetic (x and m rounded to fp32, one fp32 product, an exact power-of-two scaling) and ties
 * to even; it shares the multiplier >= 0 and 2 <= shift <= 62 REQUIREs of the exact modes and
 * REQUIREs the rounded result to fit int32 (as apply_scale_16 does).
 *
 * IDENTITY copies (memmove), and does nothing when run in place.
 */
#include <math.h>
#include <string.h>

#include "kernels/kutil.h"

#define K_CHUNK 256

/*
 * Round half to even of a finite value with |v| < 2^62 (double) or |v| < 2^31 (float), using only
 * truncating conversions, so the result does not depend on the floating-point rounding mode:
 * t = trunc(v) is exact in the FP type and d = v - t is the exact fraction in (-1, 1).
 */
static inline int64_t k_rne(double v)
{
    const int64_t t = (int64_t)v;
    const double d = v - (double)t;
    return t + ((d > 0.5) - (d < -0.5)) + ((d == 0.5) - (d == -0.5)) * (t & 1);
}
static inline int32_t k_rne_f32(float v)
{
    const int32_t t = (int32_t)v;
    const float d = v - (float)t;
    return t + ((d > 0.5f) - (d < -0.5f)) + ((d == 0.5f) - (d == -0.5f)) * (t & 1);
}

/* fp -> int of CAST for a non-NaN value: saturate to [lo, hi], else round half to even. */
static inline int64_t k_fp_to_int(double v, int64_t lo, int64_t hi)
{
    if (v >= (double)hi) return hi;
    if (v <= (double)lo) return lo;
    return k_rne(v);
}

/* ------------------------------------------------------------------------------------------ */
/* CAST                                                                                         */

#define K_CAST_LOOP(TI, TO, EXPR)                  \
    do {                                           \
        const TI *x_ = (const TI *)in->data;       \
        TO *y_ = (TO *)out->data;                  \
        for (int64_t i = 0; i < n; i++) {          \
            const TI v = x_[i];                    \
            y_[i] = (EXPR);                        \
        }                                          \
    } while (0)

/* fp32 -> integer with the NaN REQUIRE: NaN elements are written as 0 and reported. */
#define K_CAST_F32_INT(TO, LO, HI)                                      \
    do {                                                                \
        const float *x_ = (const float *)in->data;                      \
        TO *y_ = (TO *)out->data;                                       \
        unsigned bad_ = 0;                                              \
        for (int64_t i = 0; i < n; i++) {                               \
            const float v = x_[i];                                      \
            const int nan_ = isnan(v) != 0;                             \
            bad_ |= (unsigned)nan_;                                     \
            y_[i] = (TO)(nan_ ? 0 : (double)v >= (double)(HI) ? (HI) \
                         : (double)v <= (double)(LO) ? (LO) : k_rne_f32(v));   \
        }                                                               \
        if (bad_) return tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE, k_cast_nan_why); \
        return TOSAC_OK;                                                \
    } while (0)

static const char k_cast_nan_why[] = "CAST: REQUIRE failed: NaN input converted to an integer type";

/* Integer-like -> integer-like (BOOL, INT4 .. INT48). */
static tosac_status k_cast_int_int(tosac_kcall *c, const tosac_ktensor *in, const tosac_ktensor *out, int64_t n)
{
    const tosac_dtype ti = in->dtype, to = out->dtype;
#define K_PAIR(a, b) ((unsigned)(a) * 16u + (unsigned)(b))
    switch (K_PAIR(ti, to)) {
    case K_PAIR(TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT16): K_CAST_LOOP(int8_t, int16_t, (int16_t)v); return TOSAC_OK;
    case K_PAIR(TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT32): K_CAST_LOOP(int8_t, int32_t, (int32_t)v); return TOSAC_OK;
    case K_PAIR(TOSAC_DTYPE_INT16, TOSAC_DTYPE_INT32): K_CAST_LOOP(int16_t, int32_t, (int32_t)v); return TOSAC_OK;
    case K_PAIR(TOSAC_DTYPE_INT16, TOSAC_DTYPE_INT8):
        K_CAST_LOOP(int16_t, int8_t, tosac_ku8_to_i8((uint32_t)v));
        return TOSAC_OK;
    case K_PAIR(TOSAC_DTYPE_INT32, TOSAC_DTYPE_INT8):
        K_CAST_LOOP(int32_t, int8_t, tosac_ku8_to_i8((uint32_t)v));
        return TOSAC_OK;
    case K_PAIR(TOSAC_DTYPE_INT32, TOSAC_DTYPE_INT16):
        K_CAST_LOOP(int32_t, int16_t, tosac_ku16_to_i16((uint32_t)v));
        return TOSAC_OK;
    case K_PAIR(TOSAC_DTYPE_BOOL, TOSAC_DTYPE_INT8): K_CAST_LOOP(uint8_t, int8_t, (int8_t)(v != 0)); return TOSAC_OK;
    case K_PAIR(TOSAC_DTYPE_BOOL, TOSAC_DTYPE_INT16): K_CAST_LOOP(uint8_t, int16_t, (int16_t)(v != 0)); return TOSAC_OK;
    case K_PAIR(TOSAC_DTYPE_BOOL, TOSAC_DTYPE_INT32): K_CAST_LOOP(uint8_t, int32_t, (int32_t)(v != 0)); return TOSAC_OK;
    case K_PAIR(TOSAC_DTYPE_INT8, TOSAC_DTYPE_BOOL): K_CAST_LOOP(int8_t, uint8_t, (uint8_t)(v != 0)); return TOSAC_OK;
    case K_PAIR(TOSAC_DTYPE_INT16, TOSAC_DTYPE_BOOL): K_CAST_LOOP(int16_t, uint8_t, (uint8_t)(v != 0)); return TOSAC_OK;
    case K_PAIR(TOSAC_DTYPE_INT32, TOSAC_DTYPE_BOOL): K_CAST_LOOP(int32_t, uint8_t, (uint8_t)(v != 0)); return TOSAC_OK;
    default: break;
    }
#undef K_PAIR
    (void)c;
    /* other integer types (INT4, INT48, SHAPE, same-type): generic, wrapping to the output width */
    for (int64_t i = 0; i < n; i++) tosac_kstore_int(out, i, tosac_kload_int(in, i));
    return TOSAC_OK;
}

tosac_status tosac_kernel_cast(tosac_kcall *c)
{
    if (!tosac_kio_ok(c, 1, 1)) return tosac_kfail(c, TOSAC_ERR_INTERNAL, "CAST: missing operand");
    const tosac_ktensor *in = &c->in[0], *out = &c->out[0];
    if (out->nelem != in->nelem) return tosac_kfail(c, TOSAC_ERR_INTERNAL, "CAST: output shape differs from the input");
    const tosac_dtype ti = in->dtype, to = out->dtype;
    if (!tosac_dtype_valid((uint32_t)ti) || !tosac_dtype_valid((uint32_t)to))
        return tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "CAST: unknown element type");
    const bool fi = tosac_dtype_is_float(ti), fo = tosac_dtype_is_float(to);
    const int64_t n = in->nelem;

    if (!fi && !fo) return k_cast_int_int(c, in, out, n);

    if (!fi) { /* int -> fp */
        if (to == TOSAC_DTYPE_FP32 && !out->f64) {
            switch (ti) {
            case TOSAC_DTYPE_INT8: K_CAST_LOOP(int8_t, float, (float)v); return TOSAC_OK;
            case TOSAC_DTYPE_INT16: K_CAST_LOOP(int16_t, float, (float)v); return TOSAC_OK;
            case TOSAC_DTYPE_INT32: K_CAST_LOOP(int32_t, float, tosac_fp64_to_fp32((double)v)); return TOSAC_OK;
            case TOSAC_DTYPE_BOOL: K_CAST_LOOP(uint8_t, float, v ? 1.0f : 0.0f); return TOSAC_OK;
            default: break;
            }
        }
        for (int64_t i = 0; i < n; i++) tosac_kstore_fp(out, i, (double)tosac_kload_int(in, i));
        return TOSAC_OK;
    }

    if (!fo) { /* fp -> int */
        if (ti == TOSAC_DTYPE_FP32 && !in->f64) {
            switch (to) {
            case TOSAC_DTYPE_INT8: K_CAST_F32_INT(int8_t, INT8_MIN, INT8_MAX);
            case TOSAC_DTYPE_INT16: K_CAST_F32_INT(int16_t, INT16_MIN, INT16_MAX);
            case TOSAC_DTYPE_INT32: K_CAST_F32_INT(int32_t, INT32_MIN, INT32_MAX);
            default: break;
            }
        }
        if (to == TOSAC_DTYPE_BOOL) {
            for (int64_t i = 0; i < n; i++) tosac_kstore_int(out, i, tosac_kload_fp(in, i) != 0.0);
            return TOSAC_OK;
        }
        int64_t lo, hi;
        tosac_kint_range(to, &lo, &hi);
        if (to == TOSAC_DTYPE_INT4) lo = -7; /* INT4 range is -7..7 */
        unsigned bad = 0;
        for (int64_t i = 0; i < n; i++) {
            const double v = tosac_kload_fp(in, i);
            const int nan = isnan(v) != 0;
            bad |= (unsigned)nan;
            tosac_kstore_int(out, i, nan ? 0 : k_fp_to_int(v, lo, hi));
        }
        if (bad) return tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE, k_cast_nan_why);
        return TOSAC_OK;
    }

    /* fp -> fp */
    if (!in->f64 && !out->f64) {
        if (ti == TOSAC_DTYPE_FP32 && to == TOSAC_DTYPE_FP16) {
            K_CAST_LOOP(float, uint16_t, tosac_fp32_to_fp16(v));
            return TOSAC_OK;
        }
        if (ti == TOSAC_DTYPE_FP32 && to == TOSAC_DTYPE_BF16) {
            K_CAST_LOOP(float, uint16_t, tosac_fp32_to_bf16(v));
            return TOSAC_OK;
        }
        if (ti == TOSAC_DTYPE_FP16 && to == TOSAC_DTYPE_FP32) {
            K_CAST_LOOP(uint16_t, float, tosac_fp16_to_fp32(v));
            return TOSAC_OK;
        }
        if (ti == TOSAC_DTYPE_BF16 && to == TOSAC_DTYPE_FP32) {
            K_CAST_LOOP(uint16_t, float, tosac_bf16_to_fp32(v));
            return TOSAC_OK;
        }
    }
    for (int64_t i = 0; i < n; i++) tosac_kstore_fp(out, i, tosac_kload_fp(in, i));
    return TOSAC_OK;
}

TOSAC_KERNEL_NO_SCRATCH(cast)

/* ------------------------------------------------------------------------------------------ */
/* RESCALE                                                                                      */

/* Loads m input values from element `off`, sign- or zero-extended to int64. */
static void k_ld_int(const tosac_ktensor *t, int64_t off, int64_t m, bool zext, int64_t *d)
{
    switch (t->dtype) {
    case TOSAC_DTYPE_INT8: {
        const int8_t *s = (const int8_t *)t->data + off;
        if (zext)
            for (int64_t i = 0; i < m; i++) d[i] = (uint8_t)s[i];
        else
            for (int64_t i = 0; i < m; i++) d[i] = s[i];
        break;
    }
    case TOSAC_DTYPE_INT16: {
        const int16_t *s = (const int16_t *)t->data + off;
        if (zext)
            for (int64_t i = 0; i < m; i++) d[i] = (uint16_t)s[i];
        else
            for (int64_t i = 0; i < m; i++) d[i] = s[i];
        break;
    }
    case TOSAC_DTYPE_INT32: {
        const int32_t *s = (const int32_t *)t->data + off;
        for (int64_t i = 0; i < m; i++) d[i] = s[i];
        break;
    }
    default: { /* INT48 */
        const int64_t *s = (const int64_t *)t->data + off;
        for (int64_t i = 0; i < m; i++) d[i] = s[i];
        break;
    }
    }
}

/* Stores m values already clipped to the output range (u8/u16 are stored as their bit pattern). */
static void k_st_int(const tosac_ktensor *t, int64_t off, int64_t m, const int64_t *s)
{
    switch (t->dtype) {
    case TOSAC_DTYPE_INT8: {
        int8_t *d = (int8_t *)t->data + off;
        for (int64_t i = 0; i < m; i++) d[i] = tosac_ku8_to_i8((uint32_t)s[i]);
        break;
    }
    case TOSAC_DTYPE_INT16: {
        int16_t *d = (int16_t *)t->data + off;
        for (int64_t i = 0; i < m; i++) d[i] = tosac_ku16_to_i16((uint32_t)s[i]);
        break;
    }
    default: { /* INT32 */
        int32_t *d = (int32_t *)t->data + off;
        for (int64_t i = 0; i < m; i++) d[i] = (int32_t)s[i];
        break;
    }
    }
}

/* INEXACT_ROUND: rint(float(x) * float(m) * 2^-shift) in fp32, ties to even (see the file comment). */
static bool k_scale_inexact(int64_t x, int32_t m, int32_t s, int32_t *out)
{
    if (m < 0 || s < 2 || s > 62) return false;
    const float xf = tosac_fp64_to_fp32((double)x); /* |x| < 2^49: exact in double */
    const float mf = tosac_fp64_to_fp32((double)m);
    const float p = xf * mf;                         /* one fp32 rounding; |p| < 2^81, finite */
    const float q = p * tosac_fp64_to_fp32(ldexp(1.0, -s)); /* exact: a normal power of two */
    const double d = q;
    if (!(d >= (double)INT32_MIN - 0.5 && d <= (double)INT32_MAX + 0.5)) return false;
    const int64_t r = k_rne(d);
    if (r < INT32_MIN || r > INT32_MAX) return false;
    *out = (int32_t)r;
    return true;
}

static bool k_is_rescale_in(tosac_dtype t)
{
    return t == TOSAC_DTYPE_INT8 || t == TOSAC_DTYPE_INT16 || t == TOSAC_DTYPE_INT32 || t == TOSAC_DTYPE_INT48;
}

tosac_status tosac_kernel_rescale(tosac_kcall *c)
{
    if (!tosac_kio_ok(c, 5, 1)) return tosac_kfail(c, TOSAC_ERR_INTERNAL, "RESCALE: missing operand");
    const tosac_ktensor *in = &c->in[0], *mul = &c->in[1], *shf = &c->in[2], *out = &c->out[0];
    const tosac_dtype ti = in->dtype, to = out->dtype;
    if (!k_is_rescale_in(ti) || (to != TOSAC_DTYPE_INT8 && to != TOSAC_DTYPE_INT16 && to != TOSAC_DTYPE_INT32))
        return tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "RESCALE: unsupported element types");
    if (out->nelem != in->nelem)
        return tosac_kfail(c, TOSAC_ERR_INTERNAL, "RESCALE: output shape differs from the input");
    if ((mul->dtype != TOSAC_DTYPE_INT32 && mul->dtype != TOSAC_DTYPE_INT16) || shf->dtype != TOSAC_DTYPE_INT8)
        return tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "RESCALE: multiplier must be INT32/INT16 and shift INT8");

    const bool scale32 = tosac_kattr_or(c, TOSAC_ATTR_RESCALE_scale32, 0) != 0;
    const int64_t rm = tosac_kattr_or(c, TOSAC_ATTR_RESCALE_rounding_mode, TOSAC_ROUND_UNKNOWN);
    const bool per_channel = tosac_kattr_or(c, TOSAC_ATTR_RESCALE_per_channel, 0) != 0;
    const bool iu = tosac_kattr_or(c, TOSAC_ATTR_RESCALE_input_unsigned, 0) != 0;
    const bool ou = tosac_kattr_or(c, TOSAC_ATTR_RESCALE_output_unsigned, 0) != 0;
    const bool wide_in = ti == TOSAC_DTYPE_INT32 || ti == TOSAC_DTYPE_INT48;

    /* ERROR_IFs the validator owns, re-checked because the kernel depends on them */
    if (rm != TOSAC_ROUND_SINGLE && rm != TOSAC_ROUND_DOUBLE && rm != TOSAC_ROUND_INEXACT)
        return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "RESCALE: invalid rounding_mode");
    if (scale32 && ti == TOSAC_DTYPE_INT48)
        return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "RESCALE: scale32 with INT48 input");
    if (!scale32 && rm == TOSAC_ROUND_DOUBLE)
        return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "RESCALE: DOUBLE_ROUND requires scale32");
    if ((iu && ou) || (iu && (wide_in || to == TOSAC_DTYPE_INT32)) || (ou && (wide_in || to == TOSAC_DTYPE_INT32)))
        return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "RESCALE: invalid input_unsigned/output_unsigned combination");
    if (scale32 != (mul->dtype == TOSAC_DTYPE_INT32))
        return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "RESCALE: multiplier type does not match scale32");
    if (per_channel && in->rank < 1) return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "RESCALE: per_channel with rank 0");
    const int64_t nc = per_channel ? in->shape[in->rank - 1] : 1;
    if (nc < 1 || mul->nelem != nc || shf->nelem != nc)
        return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "RESCALE: multiplier/shift length must be NC");

    /* zero points, extended as the data they describe */
    const unsigned ibits = tosac_dtype_bits(ti), obits = tosac_dtype_bits(to);
    int64_t izp = tosac_kload_int(&c->in[3], 0), ozp = tosac_kload_int(&c->in[4], 0);
    if (iu) izp &= ((int64_t)1 << ibits) - 1;
    if (ou) ozp &= ((int64_t)1 << obits) - 1;
    if (izp != 0 && !(ti == TOSAC_DTYPE_INT8 || (ti == TOSAC_DTYPE_INT16 && iu && izp == 32768)))
        return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "RESCALE: input_zp must be 0 for this input type");
    if (ozp != 0 && !(to == TOSAC_DTYPE_INT8 || (to == TOSAC_DTYPE_INT16 && ou && ozp == 32768)))
        return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "RESCALE: output_zp must be 0 for this output type");
    const int64_t qmin = ou ? 0 : -((int64_t)1 << (obits - 1));
    const int64_t qmax = ou ? ((int64_t)1 << obits) - 1 : ((int64_t)1 << (obits - 1)) - 1;

    const int32_t *m32 = mul->dtype == TOSAC_DTYPE_INT32 ? (const int32_t *)mul->data : NULL;
    const int16_t *m16 = mul->dtype == TOSAC_DTYPE_INT16 ? (const int16_t *)mul->data : NULL;
    const int8_t *sh = (const int8_t *)shf->data;
    const bool dbl = rm == TOSAC_ROUND_DOUBLE, inexact = rm == TOSAC_ROUND_INEXACT;

    int64_t buf[K_CHUNK];
    const int64_t n = in->nelem;
    int64_t ch = 0;
    unsigned bad = 0;
    /* One loop per scaling mode; the channel (multiplier, shift) advances along the last dim. */
#define K_RS_LOOP(MUL, SCALE)                                                        \
    for (int64_t i = 0; i < m; i++) {                                             \
        const int64_t x = buf[i] - izp;                                           \
        const int32_t mult = (MUL);                                               \
        const int32_t s = sh[ch];                                                 \
        if (++ch == nc) ch = 0;                                                   \
        int32_t r = 0;                                                            \
        const bool ok = (SCALE);                                                  \
        const int64_t v = (int64_t)r + ozp;                                       \
        bad |= (unsigned)!ok | (unsigned)((v < INT32_MIN) | (v > INT32_MAX));     \
        buf[i] = v < qmin ? qmin : v > qmax ? qmax : v;                           \
    }
    for (int64_t i0 = 0; i0 < n; i0 += K_CHUNK) {
        const int64_t m = n - i0 < K_CHUNK ? n - i0 : K_CHUNK;
        k_ld_int(in, i0, m, iu, buf);
        if (inexact) {
            K_RS_LOOP(m32 ? m32[ch] : m16[ch], k_scale_inexact(x, mult, s, &r))
        } else if (scale32) {
            /* x is within int32 for every legal input type (i8/i16/i32 minus a zero point) */
            K_RS_LOOP(m32[ch], x >= INT32_MIN && x <= INT32_MAX && tosac_apply_scale_32((int32_t)x, mult, s, dbl, &r))
        } else {
            K_RS_LOOP(m16[ch], tosac_apply_scale_16(x, mult, s, &r))
        }
        if (bad)
            return tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE,
                               "RESCALE: REQUIRE failed (multiplier >= 0, 2 <= shift <= 62, value within "
                               "+-2^(shift-1), scaled result and result + output_zp fit INT32)");
        k_st_int(out, i0, m, buf);
    }
#undef K_RS_LOOP
    return TOSAC_OK;
}

TOSAC_KERNEL_NO_SCRATCH(rescale)

/* ------------------------------------------------------------------------------------------ */
/* IDENTITY                                                                                     */

tosac_status tosac_kernel_identity(tosac_kcall *c)
{
    if (!tosac_kio_ok(c, 1, 1)) return tosac_kfail(c, TOSAC_ERR_INTERNAL, "IDENTITY: missing operand");
    const tosac_ktensor *in = &c->in[0], *out = &c->out[0];
    const size_t e = tosac_exec_elem_size(in->dtype, in->f64);
    if (e == 0 || out->nelem != in->nelem || tosac_exec_elem_size(out->dtype, out->f64) != e)
        return tosac_kfail(c, TOSAC_ERR_INTERNAL, "IDENTITY: output shape or type differs from the input");
    if (out->data != in->data) memmove(out->data, in->data, (size_t)in->nelem * e);
    return TOSAC_OK;
}

TOSAC_KERNEL_NO_SCRATCH(identity)
