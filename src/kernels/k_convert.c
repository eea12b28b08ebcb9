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

#include "kernels/k_epilogue.h"
#include "kernels/k_gemm.h"
#include "kernels/k_mve.h"
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

TOSAC_KERNEL_NO_PREPARE(cast)

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

/* The attributes and zero points of a RESCALE call once its ERROR_IFs are checked. */
typedef struct rs_params {
    bool scale32, dbl, inexact, iu, ou;
    int64_t nc, izp, ozp, qmin, qmax;
} rs_params;

static tosac_status rs_check(const tosac_kcall *c, rs_params *r, const char **why)
{
#define RS_FAIL(S, W) return (*why = (W), (S))
    if (!c->in || !c->out || c->n_in < 5 || c->n_out < 1) RS_FAIL(TOSAC_ERR_INTERNAL, "RESCALE: missing operand");
    for (uint32_t i = 0; i < 5; i++)
        if (c->in[i].nelem < 1 || (c->in[i].constant && !c->in[i].data))
            RS_FAIL(TOSAC_ERR_INTERNAL, "RESCALE: missing operand");
    const tosac_ktensor *in = &c->in[0], *mul = &c->in[1], *shf = &c->in[2], *out = &c->out[0];
    const tosac_dtype ti = in->dtype, to = out->dtype;
    if (!k_is_rescale_in(ti) || (to != TOSAC_DTYPE_INT8 && to != TOSAC_DTYPE_INT16 && to != TOSAC_DTYPE_INT32))
        RS_FAIL(TOSAC_ERR_UNSUPPORTED, "RESCALE: unsupported element types");
    if (out->nelem != in->nelem) RS_FAIL(TOSAC_ERR_INTERNAL, "RESCALE: output shape differs from the input");
    if ((mul->dtype != TOSAC_DTYPE_INT32 && mul->dtype != TOSAC_DTYPE_INT16) || shf->dtype != TOSAC_DTYPE_INT8)
        RS_FAIL(TOSAC_ERR_UNSUPPORTED, "RESCALE: multiplier must be INT32/INT16 and shift INT8");

    r->scale32 = tosac_kattr_or(c, TOSAC_ATTR_RESCALE_scale32, 0) != 0;
    const int64_t rm = tosac_kattr_or(c, TOSAC_ATTR_RESCALE_rounding_mode, TOSAC_ROUND_UNKNOWN);
    const bool per_channel = tosac_kattr_or(c, TOSAC_ATTR_RESCALE_per_channel, 0) != 0;
    const bool iu = tosac_kattr_or(c, TOSAC_ATTR_RESCALE_input_unsigned, 0) != 0;
    const bool ou = tosac_kattr_or(c, TOSAC_ATTR_RESCALE_output_unsigned, 0) != 0;
    const bool wide_in = ti == TOSAC_DTYPE_INT32 || ti == TOSAC_DTYPE_INT48;
    r->iu = iu, r->ou = ou;

    /* ERROR_IFs the validator owns, re-checked because the kernel depends on them */
    if (rm != TOSAC_ROUND_SINGLE && rm != TOSAC_ROUND_DOUBLE && rm != TOSAC_ROUND_INEXACT)
        RS_FAIL(TOSAC_ERR_TOSA_ERROR, "RESCALE: invalid rounding_mode");
    if (r->scale32 && ti == TOSAC_DTYPE_INT48) RS_FAIL(TOSAC_ERR_TOSA_ERROR, "RESCALE: scale32 with INT48 input");
    if (!r->scale32 && rm == TOSAC_ROUND_DOUBLE) RS_FAIL(TOSAC_ERR_TOSA_ERROR, "RESCALE: DOUBLE_ROUND requires scale32");
    if ((iu && ou) || (iu && (wide_in || to == TOSAC_DTYPE_INT32)) || (ou && (wide_in || to == TOSAC_DTYPE_INT32)))
        RS_FAIL(TOSAC_ERR_TOSA_ERROR, "RESCALE: invalid input_unsigned/output_unsigned combination");
    if (r->scale32 != (mul->dtype == TOSAC_DTYPE_INT32))
        RS_FAIL(TOSAC_ERR_TOSA_ERROR, "RESCALE: multiplier type does not match scale32");
    if (per_channel && in->rank < 1) RS_FAIL(TOSAC_ERR_TOSA_ERROR, "RESCALE: per_channel with rank 0");
    r->nc = per_channel ? in->shape[in->rank - 1] : 1;
    if (r->nc < 1 || mul->nelem != r->nc || shf->nelem != r->nc)
        RS_FAIL(TOSAC_ERR_TOSA_ERROR, "RESCALE: multiplier/shift length must be NC");
    r->dbl = rm == TOSAC_ROUND_DOUBLE;
    r->inexact = rm == TOSAC_ROUND_INEXACT;
    r->izp = r->ozp = 0;
    const unsigned obits = tosac_dtype_bits(to);
    r->qmin = ou ? 0 : -((int64_t)1 << (obits - 1));
    r->qmax = ou ? ((int64_t)1 << obits) - 1 : ((int64_t)1 << (obits - 1)) - 1;
    return TOSAC_OK;
#undef RS_FAIL
}

/* The zero points (run time, or prepare for constant ones), extended as the data they describe. */
static tosac_status rs_zps(const tosac_kcall *c, rs_params *r, const char **why)
{
    const tosac_dtype ti = c->in[0].dtype, to = c->out[0].dtype;
    const unsigned ibits = tosac_dtype_bits(ti), obits = tosac_dtype_bits(to);
    int64_t izp = tosac_kload_int(&c->in[3], 0), ozp = tosac_kload_int(&c->in[4], 0);
    if (r->iu) izp &= ((int64_t)1 << ibits) - 1;
    if (r->ou) ozp &= ((int64_t)1 << obits) - 1;
    *why = "RESCALE: input_zp must be 0 for this input type";
    if (izp != 0 && !(ti == TOSAC_DTYPE_INT8 || (ti == TOSAC_DTYPE_INT16 && r->iu && izp == 32768)))
        return TOSAC_ERR_TOSA_ERROR;
    *why = "RESCALE: output_zp must be 0 for this output type";
    if (ozp != 0 && !(to == TOSAC_DTYPE_INT8 || (to == TOSAC_DTYPE_INT16 && r->ou && ozp == 32768)))
        return TOSAC_ERR_TOSA_ERROR;
    *why = NULL;
    r->izp = izp, r->ozp = ozp;
    return TOSAC_OK;
}

/*
 * Prepared RESCALE (constant multiplier, shift and zero points of a scale32 SINGLE / DOUBLE_ROUND
 * rescale of 8/16/32-bit input): a header, then per channel the multiplier, shift, round for a
 * value >= 0 and < 0, and the REQUIRE bound 2^(shift-1) on the value. `fast` is 0 when a channel
 * fails the multiplier / shift REQUIREs: the run then takes the per-element path, which reports it.
 */
typedef struct rs_prep {
    int64_t nc;
    int32_t izp, ozp, qmin, qmax;
    uint32_t fast, chunk; /* chunk: elements per scratch pass (whole channel rows) */
    uint32_t simple;      /* every shift >= 32 (no int32 value fails the range REQUIRE) and one
                             rounding constant for both signs (not DOUBLE_ROUND) */
    uint32_t width;       /* table entries: nc, or RS_WIDE for a replicated per-tensor scale */
    uint32_t hi32;        /* the int32 tables follow (x86 levels) and every channel has
                             33 <= shift <= 62 and is SINGLE_ROUND (or DOUBLE_ROUND at AVX2, dbl):
                             the hi32 form applies */
    uint32_t dbl;         /* hi32 with DOUBLE_ROUND: each product gets +-2^30 by its sign first */
    uint32_t lut;         /* an INT8 input with a per-tensor scale (x86 levels), no REQUIRE failing for
                             any of its 256 values: the results of each value follow the int32
                             tables, as int32 (256), then their bytes as four planes of 256 (plane
                             k: byte k of every result; plane 0 is TABLE's int8 table) */
    uint32_t lshift;      /* lut with int32 results that are (x - input_zp) << (lshift - 1) for every
                             signed x (a multiplier 2^30 with a shift of at most 30: the quantizer's
                             residual joins), or 0 */
    uint32_t split;       /* lut with int32 results that rs_split's int32 arithmetic gives for every
                             signed x (all 256 checked here, so no table lookup is needed) */
    int32_t mhi, mlo, mround, mshift; /* split: multiplier >> shift, its low shift bits, 2^(shift-1) */
} rs_prep;

/*
 * rs_prep.split's result of one int8 value, in the int32 operations of the AVX2 loop
 * (kr_lut32_avx2): v = x - izp, then v * mhi + ((v * mlo + mround) >> shift) + ozp, clamped. With
 * |v| <= 255 and 8 <= shift <= 23 neither product nor sum leaves int32, and since v * mhi * 2^shift
 * is a multiple of 2^shift the floor division of v * multiplier + 2^(shift-1) splits exactly: the
 * result of apply_scale_32 (SINGLE_ROUND and DOUBLE_ROUND agree below shift 32). Prepare compares
 * all 256 values with the table anyway and uses the form only where every one agrees.
 */
static inline int64_t rs_split(const rs_prep *h, int32_t x)
{
    /* in int64 (prepare bounds the int32 lanes' values so that they do not wrap); the floor
       division of a possibly negative sum after adding 2^40, a multiple of 2^shift */
    const int64_t v = (int64_t)x - h->izp;
    const uint64_t sum = (uint64_t)(v * h->mlo + h->mround) + ((uint64_t)1 << 40);
    const int64_t r = v * h->mhi + ((int64_t)(sum >> h->mshift) - ((int64_t)1 << (40 - h->mshift))) + h->ozp;
    return r < h->qmin ? h->qmin : r > h->qmax ? h->qmax : r;
}

/* Per-channel tables, every entry int64 so that vector lanes line up (AVX-512 below); with
   rs_prep.hi32 also int32 ones: multiplier, 2^(shift-33) and shift-32 (rs_hi32). */
typedef struct rs_tabs {
    const int64_t *mult, *shift, *rpos, *rneg, *vmin, *vmax;
    const int32_t *m32, *r32, *s32;
} rs_tabs;

#define RS_NTAB 6
#define RS_NTAB32 3
#define RS_LUT_BYTES (256 * sizeof(int32_t) + 4 * 256)
#define RS_WIDE 64 /* table entries of a per-tensor scale replicated for the x86 lanes */

/* Table entries: a Helium build's prepared bytes (flash) keep a per-tensor scale single (its
   Helium kernel broadcasts it; the portable fallback takes rows of one). */
static int64_t rs_width(int64_t nc, bool replicate) { return nc == 1 && replicate ? RS_WIDE : nc; }

/* Offsets of the int64 tables, then (with32: the x86 levels) of the int32 ones; returns the size. */
static size_t rs_layout(int64_t width, bool with32, bool lut, size_t off[RS_NTAB + RS_NTAB32])
{
    size_t o = tosac_kalign64(sizeof(rs_prep));
    for (int i = 0; i < RS_NTAB; i++) off[i] = o, o += tosac_kalign64((size_t)width * sizeof(int64_t));
    for (int i = RS_NTAB; i < RS_NTAB + RS_NTAB32; i++) {
        off[i] = o;
        if (with32) o += tosac_kalign64((size_t)width * sizeof(int32_t));
    }
    return o + (lut ? RS_LUT_BYTES : 0);
}

/* rs_layout's offsets, computed directly (a fused epilogue asks for every tile). */
static rs_tabs rs_tables(const void *prep)
{
    const rs_prep *h = prep;
    const uint8_t *b = (const uint8_t *)prep + tosac_kalign64(sizeof(rs_prep));
    const size_t s64 = tosac_kalign64((size_t)h->width * sizeof(int64_t));
    const size_t s32 = tosac_kalign64((size_t)h->width * sizeof(int32_t));
#define RS_T64(i) ((const int64_t *)(const void *)(b + (i) * s64))
#define RS_T32(i) (h->hi32 ? (const int32_t *)(const void *)(b + RS_NTAB * s64 + (i) * s32) : NULL)
    return (rs_tabs){RS_T64(0), RS_T64(1), RS_T64(2), RS_T64(3), RS_T64(4), RS_T64(5), RS_T32(0), RS_T32(1), RS_T32(2)};
#undef RS_T64
#undef RS_T32
}

/* rs_prep.lut's 256 int32 results (then their byte planes), by input value + 128. */
static const int32_t *rs_lut(const void *prep)
{
    const rs_prep *h = prep;
    const size_t s64 = tosac_kalign64((size_t)h->width * sizeof(int64_t));
    const size_t s32 = tosac_kalign64((size_t)h->width * sizeof(int32_t));
    return (const int32_t *)(const void *)((const uint8_t *)prep + tosac_kalign64(sizeof(rs_prep)) + RS_NTAB * s64 +
                                           RS_NTAB32 * s32);
}

static bool rs_preparable(const tosac_kcall *c, const rs_params *r)
{
    for (int i = 1; i < 5; i++)
        if (!c->in[i].constant) return false;
    return r->scale32 && !r->inexact && c->in[0].dtype != TOSAC_DTYPE_INT48;
}

static tosac_status rs_prepare(const tosac_kcall *c, tosac_kprep *sizes, void *dst, bool replicate)
{
    rs_params r;
    const char *why;
    sizes->const_size = sizes->scratch_size = 0;
    if (rs_check(c, &r, &why) != TOSAC_OK || !rs_preparable(c, &r)) return TOSAC_OK; /* the run reports */
    size_t off[RS_NTAB + RS_NTAB32];
    const int64_t tw = rs_width(r.nc, replicate), rows = tw < 1024 ? 1024 / tw : 1;
    const bool with32 = c->isa == TOSAC_KISA_AVX2 || c->isa == TOSAC_KISA_AVX512;
    const bool lut = with32 && r.nc == 1 && c->in[0].dtype == TOSAC_DTYPE_INT8;
    sizes->const_size = rs_layout(tw, with32, lut, off);
    sizes->scratch_size = tosac_kalign64((size_t)(rows * tw) * sizeof(int32_t));
    if (!dst) return TOSAC_OK;
    uint8_t *b = dst;
    rs_prep *h = dst;
    memset(h, 0, sizeof *h);
    h->nc = r.nc;
    h->width = (uint32_t)tw;
    h->chunk = (uint32_t)(rows * tw);
    if (rs_zps(c, &r, &why) != TOSAC_OK) return TOSAC_OK; /* fast stays 0: the run reports */
    h->izp = (int32_t)r.izp, h->ozp = (int32_t)r.ozp, h->qmin = (int32_t)r.qmin, h->qmax = (int32_t)r.qmax;
    int64_t *tab[RS_NTAB];
    for (int i = 0; i < RS_NTAB; i++) tab[i] = (int64_t *)(void *)(b + off[i]);
    /* (DOUBLE_ROUND's hi32 form: the AVX2 level; AVX-512 keeps its int64 lanes) */
    bool ok = true, simple = !r.dbl, hi32 = with32 && (!r.dbl || c->isa == TOSAC_KISA_AVX2);
    for (int64_t j = 0; j < r.nc; j++) {
        const int32_t m = ((const int32_t *)c->in[1].data)[j], s0 = ((const int8_t *)c->in[2].data)[j];
        const bool good = m >= 0 && s0 >= 2 && s0 <= 62;
        const int32_t s = good ? s0 : 2;
        const int64_t lim = (int64_t)1 << (s - 1);
        ok &= good;
        simple &= s >= 32;
        hi32 &= s >= 33;
        tab[0][j] = good ? m : 0;
        tab[1][j] = s;
        tab[2][j] = tosac_scale32_round(0, s, r.dbl);
        tab[3][j] = tosac_scale32_round(-1, s, r.dbl);
        tab[4][j] = lim > -(int64_t)INT32_MIN ? INT32_MIN : -lim; /* int32 values need no check beyond */
        tab[5][j] = lim - 1 > INT32_MAX ? INT32_MAX : lim - 1;
    }
    for (int64_t j = r.nc; j < tw; j++)
        for (int i = 0; i < RS_NTAB; i++) tab[i][j] = tab[i][0];
    h->fast = ok;
    h->simple = simple;
    h->hi32 = ok && hi32;
    h->dbl = h->hi32 && r.dbl;
    if (with32) { /* zero when !hi32: the bytes stay a pure function of the call */
        int32_t *t32[RS_NTAB32];
        for (int i = 0; i < RS_NTAB32; i++) {
            t32[i] = (int32_t *)(void *)(b + off[RS_NTAB + i]);
            memset(t32[i], 0, (size_t)tw * sizeof(int32_t));
        }
        for (int64_t j = 0; h->hi32 && j < tw; j++) {
            t32[0][j] = (int32_t)tab[0][j];
            t32[1][j] = (int32_t)1 << (tab[1][j] - 33);
            t32[2][j] = (int32_t)(tab[1][j] - 32);
        }
    }
    if (lut) { /* the per-element algorithm (apply_scale_32) on every int8 value */
        int32_t *l32 = (int32_t *)(void *)(b + off[RS_NTAB + RS_NTAB32 - 1] + tosac_kalign64((size_t)tw * sizeof(int32_t)));
        uint8_t *pl = (uint8_t *)(l32 + 256);
        bool all = ok;
        for (int32_t u = 0; u < 256; u++) {
            const int32_t v = (r.iu ? u ^ 0x80 : u - 128) - (int32_t)r.izp;
            int32_t q = 0;
            all &= tosac_apply_scale_32(v, (int32_t)tab[0][0], (int32_t)tab[1][0], r.dbl, &q);
            const int64_t t = (int64_t)q + r.ozp;
            all &= t >= INT32_MIN && t <= INT32_MAX;
            l32[u] = (int32_t)(t < r.qmin ? r.qmin : t > r.qmax ? r.qmax : t);
            for (unsigned k = 0; k < 4; k++) pl[256 * k + (unsigned)u] = (uint8_t)((uint32_t)l32[u] >> (8 * k));
        }
        h->lut = all;
        for (uint32_t k = 0; all && !r.iu && c->out[0].dtype == TOSAC_DTYPE_INT32 && k < 31 && !h->lshift; k++) {
            bool eq = true;
            for (int32_t u = 0; u < 256 && eq; u++)
                eq = (int64_t)l32[u] == ((int64_t)(u - 128) - r.izp) * ((int64_t)1 << k);
            if (eq) h->lshift = k + 1;
        }
        const int32_t sh = (int32_t)tab[1][0];
        /* (|v| <= 255: no lane of 255 * (m >> s) + 255 + |ozp|, nor of 255 * (m mod 2^s) + 2^(s-1), wraps) */
        if (all && !h->lshift && !r.iu && c->out[0].dtype == TOSAC_DTYPE_INT32 && sh >= 8 && sh <= 23 &&
            r.izp >= -128 && r.izp <= 127 &&
            255 * (tab[0][0] >> sh) + 255 + (r.ozp < 0 ? -r.ozp : r.ozp) <= INT32_MAX) {
            h->mhi = (int32_t)(tab[0][0] >> sh), h->mlo = (int32_t)(tab[0][0] & ((1 << sh) - 1));
            h->mround = 1 << (sh - 1), h->mshift = sh;
            bool eq = true;
            for (int32_t u = 0; u < 256 && eq; u++) eq = rs_split(h, u - 128) == l32[u];
            h->split = eq;
        }
    }
    return TOSAC_OK;
}

tosac_status tosac_kernel_rescale_prepare(const tosac_kcall *c, tosac_kprep *sizes, void *dst)
{
    if (c->isa == TOSAC_KISA_MVE) { /* these bytes, then the Helium kernel's tables */
        tosac_kcall p = *c;
        p.isa = TOSAC_KISA_PORTABLE;
        tosac_status st = rs_prepare(&p, sizes, dst, false);
        if (st == TOSAC_OK) tosac_rescale_mve_prepare(c, sizes, dst, sizes->const_size);
        return st;
    }
    return rs_prepare(c, sizes, dst, true);
}

#define KR_FN(name) kr_base_##name
#define KR_TARGET
#include "kernels/k_rescale_core.h"
#undef KR_FN
#undef KR_TARGET
#ifdef TOSAC_KERNEL_X86
#include <immintrin.h>

/*
 * AVX-512: k_rescale_core.h lane by lane, 8 channels at a time in int64 lanes (GCC does not
 * vectorise the per-channel C loop). tosac_scale32_core's steps: the product of two sign-extended
 * int32 (vpmuldq), + round + 2^62 as uint64, logical shift, - 2^(62-shift). Tails go through the
 * C loop. The unit test checks it against the portable build bit for bit.
 */
/* Eight lanes of the loop below: v (sign-extended int32 values) with the tables of their channels. */
#define KR512_LANES(V, MULT, SHIFT, RPOS, RNEG, VMIN, VMAX, OUT)                                              \
    {                                                                                                      \
        const __m512i v_ = (V);                                                                            \
        bad |= _mm512_cmplt_epi64_mask(v_, (VMIN)) | _mm512_cmpgt_epi64_mask(v_, (VMAX));                  \
        const __m512i rd_ = _mm512_mask_blend_epi64(_mm512_cmplt_epi64_mask(v_, zero), (RPOS), (RNEG));    \
        const __m512i u_ = _mm512_add_epi64(_mm512_add_epi64(_mm512_mul_epi32(v_, (MULT)), rd_), bias);    \
        __m512i q_ = _mm512_sub_epi64(_mm512_srlv_epi64(u_, (SHIFT)), _mm512_srlv_epi64(bias, (SHIFT)));   \
        q_ = _mm512_add_epi64(q_, vozp);                                                                   \
        bad |= _mm512_cmplt_epi64_mask(q_, imin) | _mm512_cmpgt_epi64_mask(q_, imax);                      \
        q_ = _mm512_min_epi64(_mm512_max_epi64(q_, vlo), vhi);                                             \
        _mm256_storeu_si256((__m256i *)(void *)(OUT), _mm512_cvtepi64_epi32(q_));                          \
    }

__attribute__((target("avx2,avx512f,avx512vl,avx512dq,avx512bw"))) static uint32_t
kr_avx512_rs_rows(const int32_t *restrict x, int64_t n, const rs_tabs *t, int64_t nc, int32_t ozp, int32_t lo, int32_t hi,
                  int32_t *restrict y, bool simple)
{
    const __m512i zero = _mm512_setzero_si512(), bias = _mm512_set1_epi64((int64_t)1 << 62);
    const __m512i vozp = _mm512_set1_epi64(ozp), vlo = _mm512_set1_epi64(lo), vhi = _mm512_set1_epi64(hi);
    const __m512i imin = _mm512_set1_epi64(INT32_MIN), imax = _mm512_set1_epi64(INT32_MAX);
    __mmask8 bad = 0;
    uint32_t tail_bad = 0;
#define KR512_LOAD(p) _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(p)))
    if (nc == 1 || t->mult[0] == t->mult[nc - 1]) {
        /* one scale (a per-tensor table is replicated): broadcast registers, 8 lanes at a time */
        const bool one = nc == 1;
        for (int64_t j = 1; j < nc && !one; j++)
            if (t->mult[j] != t->mult[0] || t->shift[j] != t->shift[0]) goto per_channel;
        {
            const __m512i m = _mm512_set1_epi64(t->mult[0]), s = _mm512_set1_epi64(t->shift[0]);
            const __m512i rp = _mm512_set1_epi64(t->rpos[0]), rn = _mm512_set1_epi64(t->rneg[0]);
            const __m512i mn = _mm512_set1_epi64(t->vmin[0]), mx = _mm512_set1_epi64(t->vmax[0]);
            int64_t n8 = n - n % 8;
            for (int64_t i = 0; i < n8; i += 8) KR512_LANES(KR512_LOAD(x + i), m, s, rp, rn, mn, mx, y + i)
            if (n8 < n) tail_bad |= kr_base_rs_rows(x + n8, n - n8, t, 1, ozp, lo, hi, y + n8);
            return (uint32_t)bad | tail_bad;
        }
    }
per_channel:;
    int64_t n8 = nc >= 8 ? nc - nc % 8 : 0;
    for (int64_t r = 0; r < n; r += nc) {
        if (simple) /* no range check, no sign-dependent rounding: the same lanes with fewer loads */
            for (int64_t j = 0; j < n8; j += 8) {
                const __m512i v = KR512_LOAD(x + r + j), s = _mm512_loadu_si512(t->shift + j);
                const __m512i u = _mm512_add_epi64(
                    _mm512_add_epi64(_mm512_mul_epi32(v, _mm512_loadu_si512(t->mult + j)), _mm512_loadu_si512(t->rpos + j)),
                    bias);
                __m512i q = _mm512_sub_epi64(_mm512_srlv_epi64(u, s), _mm512_srlv_epi64(bias, s));
                q = _mm512_add_epi64(q, vozp);
                bad |= _mm512_cmplt_epi64_mask(q, imin) | _mm512_cmpgt_epi64_mask(q, imax);
                q = _mm512_min_epi64(_mm512_max_epi64(q, vlo), vhi);
                _mm256_storeu_si256((__m256i *)(void *)(y + r + j), _mm512_cvtepi64_epi32(q));
            }
        else
            for (int64_t j = 0; j < n8; j += 8)
                KR512_LANES(KR512_LOAD(x + r + j), _mm512_loadu_si512(t->mult + j), _mm512_loadu_si512(t->shift + j),
                        _mm512_loadu_si512(t->rpos + j), _mm512_loadu_si512(t->rneg + j),
                        _mm512_loadu_si512(t->vmin + j), _mm512_loadu_si512(t->vmax + j), y + r + j)
        if (n8 < nc) {
            const rs_tabs tt = {t->mult + n8, t->shift + n8, t->rpos + n8, t->rneg + n8, t->vmin + n8, t->vmax + n8,
                                NULL, NULL, NULL};
            tail_bad |= kr_base_rs_rows(x + r + n8, nc - n8, &tt, nc - n8, ozp, lo, hi, y + r + n8);
        }
    }
#undef KR512_LOAD
    return (uint32_t)bad | tail_bad;
}
#undef KR512_LANES

/*
 * kr_avx512_rs_rows in 4 int64 lanes (AVX2 has no 64-bit compare-to-mask, min or max: compares
 * and blends), every shift and rounding mode, REQUIREs included; the generic C loop it replaces
 * stayed scalar with GCC (7.7 ns per element for a DOUBLE_ROUND or a16w8 RESCALE, Zen 3).
 */
#define KR256_LANES(V, MULT, SHIFT, RPOS, RNEG, VMIN, VMAX, OUT)                                              \
    {                                                                                                      \
        const __m256i v_ = (V);                                                                            \
        bad = _mm256_or_si256(bad, _mm256_or_si256(_mm256_cmpgt_epi64((VMIN), v_), _mm256_cmpgt_epi64(v_, (VMAX)))); \
        const __m256i rd_ = _mm256_castpd_si256(                                                           \
            _mm256_blendv_pd(_mm256_castsi256_pd(RPOS), _mm256_castsi256_pd(RNEG), _mm256_castsi256_pd(v_))); \
        const __m256i u_ = _mm256_add_epi64(_mm256_add_epi64(_mm256_mul_epi32(v_, (MULT)), rd_), bias);    \
        __m256i q_ = _mm256_sub_epi64(_mm256_srlv_epi64(u_, (SHIFT)), _mm256_srlv_epi64(bias, (SHIFT)));   \
        q_ = _mm256_add_epi64(q_, vozp);                                                                   \
        bad = _mm256_or_si256(bad, _mm256_or_si256(_mm256_cmpgt_epi64(imin, q_), _mm256_cmpgt_epi64(q_, imax))); \
        q_ = _mm256_castpd_si256(_mm256_blendv_pd(_mm256_castsi256_pd(q_), _mm256_castsi256_pd(vlo),       \
                                                  _mm256_castsi256_pd(_mm256_cmpgt_epi64(vlo, q_))));      \
        q_ = _mm256_castpd_si256(_mm256_blendv_pd(_mm256_castsi256_pd(q_), _mm256_castsi256_pd(vhi),       \
                                                  _mm256_castsi256_pd(_mm256_cmpgt_epi64(q_, vhi))));      \
        _mm_storeu_si128((__m128i *)(void *)(OUT),                                                         \
                         _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(q_, low)));                    \
    }

__attribute__((target("avx2"))) static uint32_t kr_avx2_rs_rows(const int32_t *restrict x, int64_t n, const rs_tabs *t,
                                                              int64_t nc, int32_t ozp, int32_t lo, int32_t hi,
                                                              int32_t *restrict y)
{
    const __m256i bias = _mm256_set1_epi64x((int64_t)1 << 62), low = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    const __m256i vozp = _mm256_set1_epi64x(ozp), vlo = _mm256_set1_epi64x(lo), vhi = _mm256_set1_epi64x(hi);
    const __m256i imin = _mm256_set1_epi64x(INT32_MIN), imax = _mm256_set1_epi64x(INT32_MAX);
    __m256i bad = _mm256_setzero_si256();
    uint32_t tail_bad = 0;
#define KR256_LOAD(p) _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define KR256_TAB(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
    bool one = true; /* one scale (a per-tensor table is replicated): broadcast registers */
    for (int64_t j = 1; j < nc && one; j++) one = t->mult[j] == t->mult[0] && t->shift[j] == t->shift[0];
    if (one) {
        const __m256i m = _mm256_set1_epi64x(t->mult[0]), sh = _mm256_set1_epi64x(t->shift[0]);
        const __m256i rp = _mm256_set1_epi64x(t->rpos[0]), rn = _mm256_set1_epi64x(t->rneg[0]);
        const __m256i mn = _mm256_set1_epi64x(t->vmin[0]), mx = _mm256_set1_epi64x(t->vmax[0]);
        const int64_t n4 = n - n % 4;
        for (int64_t i = 0; i < n4; i += 4) KR256_LANES(KR256_LOAD(x + i), m, sh, rp, rn, mn, mx, y + i)
        if (n4 < n) tail_bad |= kr_base_rs_rows(x + n4, n - n4, t, 1, ozp, lo, hi, y + n4);
        return (uint32_t)_mm256_movemask_epi8(bad) | tail_bad;
    }
    const int64_t n4 = nc - nc % 4;
    for (int64_t r = 0; r < n; r += nc) {
        for (int64_t j = 0; j < n4; j += 4)
            KR256_LANES(KR256_LOAD(x + r + j), KR256_TAB(t->mult + j), KR256_TAB(t->shift + j), KR256_TAB(t->rpos + j),
                        KR256_TAB(t->rneg + j), KR256_TAB(t->vmin + j), KR256_TAB(t->vmax + j), y + r + j)
        if (n4 < nc) {
            const rs_tabs tt = {t->mult + n4, t->shift + n4, t->rpos + n4, t->rneg + n4, t->vmin + n4, t->vmax + n4,
                                NULL, NULL, NULL};
            tail_bad |= kr_base_rs_rows(x + r + n4, nc - n4, &tt, nc - n4, ozp, lo, hi, y + r + n4);
        }
    }
#undef KR256_LOAD
#undef KR256_TAB
    return (uint32_t)_mm256_movemask_epi8(bad) | tail_bad;
}
#undef KR256_LANES

/*
 * The hi32 form (rs_prep.hi32: SINGLE_ROUND, 33 <= shift <= 62; DOUBLE_ROUND too at AVX2,
 * kr256_prod) in int32 lanes. With H the high
 * half floor(v*m / 2^32) of the product, floor((v*m + 2^(shift-1)) / 2^shift) is
 * (H + 2^(shift-33)) >> (shift-32) exactly: 2^(shift-1) is a multiple of 2^32, so the low half
 * never carries into the quotient (nested floor division). No REQUIRE can fail: every int32 value
 * is within +-2^(shift-1), |H| <= 2^30, and the result plus a 8/16-bit zero point fits int32.
 * H of 16 lanes: the signed 32x32 products of the even lanes and, shifted down, of the odd ones.
 * `uniform`: one scale (the replicated per-tensor tables), the whole of x in one pass.
 */
/* Stores the lanes k of v (within the output range) as `ob`-byte elements at y + i. */
__attribute__((target("avx2,avx512f,avx512vl,avx512dq,avx512bw"))) static inline void
kr512_store(void *y, int64_t i, unsigned ob, __mmask16 k, __m512i v)
{
    if (ob == 1)
        _mm512_mask_cvtepi32_storeu_epi8((int8_t *)y + i, k, v);
    else if (ob == 2)
        _mm512_mask_cvtepi32_storeu_epi16((int16_t *)y + i, k, v);
    else
        _mm512_mask_storeu_epi32((int32_t *)y + i, k, v);
}

/* Writes `ob`-byte results (the bit patterns of values within the output range: an unsigned
   range's too) straight to y. */
__attribute__((target("avx2,avx512f,avx512vl,avx512dq,avx512bw"))) static void
kr_avx512_hi32(const int32_t *x, int64_t n, const rs_tabs *t, int64_t nc, bool uniform, int32_t ozp, int32_t lo,
               int32_t hi, void *y, unsigned ob)
{
    const __m512i vozp = _mm512_set1_epi32(ozp), vlo = _mm512_set1_epi32(lo), vhi = _mm512_set1_epi32(hi);
#define KR512_HI32(V, M, MO, R, S)                                                                           \
    _mm512_min_epi32(                                                                                    \
        _mm512_max_epi32(                                                                                \
            _mm512_add_epi32(                                                                            \
                _mm512_srav_epi32(                                                                       \
                    _mm512_add_epi32(_mm512_mask_blend_epi32(                                            \
                                         0xAAAA, _mm512_srli_epi64(_mm512_mul_epi32((V), (M)), 32),      \
                                         _mm512_mul_epi32(_mm512_srli_epi64((V), 32), (MO))),            \
                                     (R)),                                                               \
                    (S)),                                                                                \
                vozp),                                                                                   \
            vlo),                                                                                        \
        vhi)
    if (uniform) {
        const __m512i m = _mm512_set1_epi32(t->m32[0]), r = _mm512_set1_epi32(t->r32[0]);
        const __m512i s = _mm512_set1_epi32(t->s32[0]), mo = _mm512_srli_epi64(m, 32);
        int64_t i = 0;
        if (ob == 1 && ozp >= INT8_MIN && ozp <= INT8_MAX && lo >= INT8_MIN && hi <= INT8_MAX && lo <= hi) {
            /* 64 int8 results per store, narrowed in registers (the narrowing stores are slow on
               Zen 4): the saturations of tosac_gemm_u8_panel's packed epilogue (k_gemm.c), whose
               reasoning gives the bytes of clamping y + zp in int32 */
            const __m512i z16 = _mm512_set1_epi16((int16_t)ozp), l8 = _mm512_set1_epi8((char)lo);
            const __m512i h8 = _mm512_set1_epi8((char)hi);
            const __m512i order = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
#define KR512_SC(V)                                                                                      \
    _mm512_srav_epi32(_mm512_add_epi32(_mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(_mm512_mul_epi32((V), m), 32), \
                                                               _mm512_mul_epi32(_mm512_srli_epi64((V), 32), mo)), \
                                       r),                                                               \
                      s)
            for (; i + 64 <= n; i += 64) {
                const __m512i a = _mm512_adds_epi16(
                    _mm512_packs_epi32(KR512_SC(_mm512_loadu_si512(x + i)), KR512_SC(_mm512_loadu_si512(x + i + 16))), z16);
                const __m512i b = _mm512_adds_epi16(_mm512_packs_epi32(KR512_SC(_mm512_loadu_si512(x + i + 32)),
                                                                       KR512_SC(_mm512_loadu_si512(x + i + 48))),
                                                    z16);
                const __m512i v = _mm512_permutexvar_epi32(order, _mm512_packs_epi16(a, b));
                _mm512_storeu_si512((int8_t *)y + i, _mm512_min_epi8(_mm512_max_epi8(v, l8), h8));
            }
#undef KR512_SC
        }
        for (; i + 16 <= n; i += 16) kr512_store(y, i, ob, 0xFFFF, KR512_HI32(_mm512_loadu_si512(x + i), m, mo, r, s));
        if (i < n) {
            const __mmask16 k = (__mmask16)((1u << (n - i)) - 1);
            kr512_store(y, i, ob, k, KR512_HI32(_mm512_maskz_loadu_epi32(k, x + i), m, mo, r, s));
        }
        return;
    }
    /* a vector of channels' tables at a time, over every row (the small layers' rows are one or
       two vectors) */
    for (int64_t j = 0; j < nc; j += 16) {
        const __mmask16 k = nc - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (nc - j)) - 1);
        const __m512i m = _mm512_maskz_loadu_epi32(k, t->m32 + j), mo = _mm512_srli_epi64(m, 32);
        const __m512i r = _mm512_maskz_loadu_epi32(k, t->r32 + j), s = _mm512_maskz_loadu_epi32(k, t->s32 + j);
        for (int64_t row = j; row < n; row += nc)
            kr512_store(y, row, ob, k, KR512_HI32(_mm512_maskz_loadu_epi32(k, x + row), m, mo, r, s));
    }
#undef KR512_HI32
}

/* Stores the first cnt (<= 8) lanes of v, values within [lo, hi] of the output, at element i of y
   as ob-byte elements: narrowed by packs, so exactly where [lo, hi] lies within int16 (ob 2) or
   within int8 (us false) or uint8 (us: stored as its bit patterns) for ob 1. */
__attribute__((target("avx2"))) static inline void kr256_put(void *y, int64_t i, unsigned ob, bool us, __m256i v,
                                                            int64_t cnt)
{
    uint8_t b[32];
    uint8_t *d = cnt == 8 ? (uint8_t *)y + (size_t)i * ob : b; /* whole vectors straight to y */
    if (ob == 4) {
        _mm256_storeu_si256((__m256i *)(void *)d, v);
    } else {
        const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
        if (ob == 2)
            _mm_storeu_si128((__m128i *)(void *)d, w);
        else
            _mm_storel_epi64((__m128i *)(void *)d, us ? _mm_packus_epi16(w, w) : _mm_packs_epi16(w, w));
    }
    if (cnt < 8) memcpy((uint8_t *)y + (size_t)i * ob, b, (size_t)cnt * ob);
}

/* A signed 32 x 32 product of 64-bit lanes, with DOUBLE_ROUND's +2^30 (a product >= 0) or -2^30
   (below 0) added: the sign of v * m is that of v for m > 0, and for m = 0 either addend gives 0,
   since 2^(shift-1) +- 2^30 lies within (0, 2^shift) for shift >= 33. */
__attribute__((target("avx2"), always_inline)) static inline __m256i kr256_prod(__m256i v, __m256i m, bool dbl)
{
    const __m256i p = _mm256_mul_epi32(v, m);
    if (!dbl) return p;
    const __m256d up = _mm256_castsi256_pd(_mm256_set1_epi64x((int64_t)1 << 30));
    const __m256d dn = _mm256_castsi256_pd(_mm256_set1_epi64x(-((int64_t)1 << 30)));
    return _mm256_add_epi64(p, _mm256_castpd_si256(_mm256_blendv_pd(up, dn, _mm256_castsi256_pd(p))));
}

/* kr_avx512_hi32 in 8 lanes, into ob-byte elements (kr256_put), with DOUBLE_ROUND (dbl) too;
   channel tails through the portable loop. */
__attribute__((target("avx2"), always_inline)) static inline void kr_avx2_hi32_body(const int32_t *x, int64_t n,
                                                                                   const rs_tabs *t, int64_t nc,
                                                                                   bool uniform, int32_t ozp, int32_t lo,
                                                                                   int32_t hi, void *y, unsigned ob,
                                                                                   bool us, bool dbl)
{
    const __m256i vozp = _mm256_set1_epi32(ozp), vlo = _mm256_set1_epi32(lo), vhi = _mm256_set1_epi32(hi);
#define KR256_HI32(V, M, MO, R, S)                                                                               \
    _mm256_min_epi32(                                                                                        \
        _mm256_max_epi32(                                                                                    \
            _mm256_add_epi32(                                                                                \
                _mm256_srav_epi32(                                                                           \
                    _mm256_add_epi32(_mm256_blend_epi32(_mm256_srli_epi64(kr256_prod((V), (M), dbl), 32),    \
                                                        kr256_prod(_mm256_srli_epi64((V), 32), (MO), dbl),   \
                                                        0xAA),                                               \
                                     (R)),                                                                   \
                    (S)),                                                                                    \
                vozp),                                                                                       \
            vlo),                                                                                            \
        vhi)
#define KR256_LD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define KR256_ST(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), (v))
    int64_t n8 = uniform ? n - n % 8 : nc - nc % 8;
    if (uniform) {
        const __m256i m = _mm256_set1_epi32(t->m32[0]), r = _mm256_set1_epi32(t->r32[0]);
        const __m256i s = _mm256_set1_epi32(t->s32[0]), mo = _mm256_srli_epi64(m, 32);
        if (ob == 4)
            for (int64_t i = 0; i < n8; i += 8) KR256_ST((int32_t *)y + i, KR256_HI32(KR256_LD(x + i), m, mo, r, s));
        else
            for (int64_t i = 0; i < n8; i += 8) kr256_put(y, i, ob, us, KR256_HI32(KR256_LD(x + i), m, mo, r, s), 8);
        if (n8 < n) {
            int32_t tmp[8] = {0};
            kr_base_rs_rows(x + n8, n - n8, t, 1, ozp, lo, hi, tmp);
            kr256_put(y, n8, ob, us, KR256_LD(tmp), n - n8);
        }
        return;
    }
    for (int64_t row = 0; row < n; row += nc) {
        for (int64_t j = 0; j < n8; j += 8) {
            const __m256i m = KR256_LD(t->m32 + j);
            kr256_put(y, row + j, ob, us,
                      KR256_HI32(KR256_LD(x + row + j), m, _mm256_srli_epi64(m, 32), KR256_LD(t->r32 + j),
                                 KR256_LD(t->s32 + j)),
                      8);
        }
        if (n8 < nc) {
            const rs_tabs tt = {t->mult + n8, t->shift + n8, t->rpos + n8, t->rneg + n8, t->vmin + n8, t->vmax + n8,
                                NULL, NULL, NULL};
            int32_t tmp[8] = {0};
            kr_base_rs_rows(x + row + n8, nc - n8, &tt, nc - n8, ozp, lo, hi, tmp);
            kr256_put(y, row + n8, ob, us, KR256_LD(tmp), nc - n8);
        }
    }
#undef KR256_HI32
#undef KR256_LD
#undef KR256_ST
}

__attribute__((target("avx2"))) static void kr_avx2_hi32(const int32_t *x, int64_t n, const rs_tabs *t, int64_t nc,
                                                       bool uniform, int32_t ozp, int32_t lo, int32_t hi, void *y,
                                                       unsigned ob, bool us, bool dbl)
{
    if (dbl)
        kr_avx2_hi32_body(x, n, t, nc, uniform, ozp, lo, hi, y, ob, us, true);
    else
        kr_avx2_hi32_body(x, n, t, nc, uniform, ozp, lo, hi, y, ob, us, false);
}

/*
 * rs_prep.lut with 16- or 32-bit results (`ob` bytes; the int32 inputs of a residual join): each
 * byte of the results is a TABLE lookup in its plane, 64 elements per vpermi2b pair (AVX-512
 * VBMI), and the planes are interleaved back into elements with unpacks. The unpacks work within
 * 128-bit lanes, so the input bytes are first permuted (4-byte blocks for 32-bit results, 8-byte
 * for 16-bit) such that the interleaved vectors come out in element order.
 */
/* Plane K's bytes of the results of u (the permuted input + 128; top: its top bits). */
#define KR_LUT_PLANE(K)                                                                                  \
    _mm512_mask_blend_epi8(top, _mm512_permutex2var_epi8(t##K##0, u, t##K##1),                           \
                           _mm512_permutex2var_epi8(t##K##2, u, t##K##3))
#define KR_LUT_TABLES(K)                                                                                 \
    const __m512i t##K##0 = _mm512_loadu_si512(planes + 256 * K), t##K##1 = _mm512_loadu_si512(planes + 256 * K + 64), \
                  t##K##2 = _mm512_loadu_si512(planes + 256 * K + 128),                                  \
                  t##K##3 = _mm512_loadu_si512(planes + 256 * K + 192)

/* 16-bit results: block d = 2L + q (128-bit lane L of unpacked vector q) takes input block 4q + L. */
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) static void kr_lut16_vbmi(const int8_t *x, int64_t n,
                                                                                  const uint8_t *planes, int16_t *y)
{
    KR_LUT_TABLES(0);
    KR_LUT_TABLES(1);
    const __m512i flip = _mm512_set1_epi8(-128), perm = _mm512_set_epi64(7, 3, 6, 2, 5, 1, 4, 0);
    for (int64_t i = 0; i < n; i += 64) {
        const int64_t r = n - i;
        const __mmask64 m = r >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << r) - 1;
        const __m512i u = _mm512_permutexvar_epi64(perm, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, x + i), flip));
        const __mmask64 top = _mm512_movepi8_mask(u);
        const __m512i b0 = KR_LUT_PLANE(0), b1 = KR_LUT_PLANE(1);
        const __m512i q0 = _mm512_unpacklo_epi8(b0, b1), q1 = _mm512_unpackhi_epi8(b0, b1);
        if (r >= 64) {
            _mm512_storeu_si512(y + i, q0);
            _mm512_storeu_si512(y + i + 32, q1);
        } else {
            const int64_t c1 = r > 32 ? r - 32 : 0;
            _mm512_mask_storeu_epi16(y + i, r >= 32 ? 0xFFFFFFFFu : (__mmask32)(((uint64_t)1 << r) - 1), q0);
            _mm512_mask_storeu_epi16(y + i + 32, (__mmask32)(((uint64_t)1 << c1) - 1), q1);
        }
    }
}

/* 32-bit results: block d = 4L + q takes input block 4q + L. */
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) static void kr_lut32_vbmi(const int8_t *x, int64_t n,
                                                                                  const uint8_t *planes, int32_t *y)
{
    KR_LUT_TABLES(0);
    KR_LUT_TABLES(1);
    KR_LUT_TABLES(2);
    KR_LUT_TABLES(3);
    const __m512i flip = _mm512_set1_epi8(-128);
    const __m512i perm = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
    for (int64_t i = 0; i < n; i += 64) {
        const int64_t r = n - i;
        const __mmask64 m = r >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << r) - 1;
        const __m512i u = _mm512_permutexvar_epi32(perm, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, x + i), flip));
        const __mmask64 top = _mm512_movepi8_mask(u);
        const __m512i b0 = KR_LUT_PLANE(0), b1 = KR_LUT_PLANE(1), b2 = KR_LUT_PLANE(2), b3 = KR_LUT_PLANE(3);
        const __m512i lo01 = _mm512_unpacklo_epi8(b0, b1), hi01 = _mm512_unpackhi_epi8(b0, b1);
        const __m512i lo23 = _mm512_unpacklo_epi8(b2, b3), hi23 = _mm512_unpackhi_epi8(b2, b3);
        const __m512i q0 = _mm512_unpacklo_epi16(lo01, lo23), q1 = _mm512_unpackhi_epi16(lo01, lo23);
        const __m512i q2 = _mm512_unpacklo_epi16(hi01, hi23), q3 = _mm512_unpackhi_epi16(hi01, hi23);
        if (r >= 64) {
            _mm512_storeu_si512(y + i, q0);
            _mm512_storeu_si512(y + i + 16, q1);
            _mm512_storeu_si512(y + i + 32, q2);
            _mm512_storeu_si512(y + i + 48, q3);
        } else {
#define KR_LUT_TAIL(J, Q)                                                                                \
    _mm512_mask_storeu_epi32(y + i + 16 * J, (__mmask16)((1u << (r - 16 * J < 0 ? 0 : r - 16 * J > 16 ? 16 : r - 16 * J)) - 1), Q)
            KR_LUT_TAIL(0, q0);
            KR_LUT_TAIL(1, q1);
            KR_LUT_TAIL(2, q2);
            KR_LUT_TAIL(3, q3);
#undef KR_LUT_TAIL
        }
    }
}
#undef KR_LUT_PLANE
#undef KR_LUT_TABLES

/* rs_prep.lshift's results: (x - izp) << k, 16 a vector (no table lookups) */
__attribute__((target("avx512f,avx512bw,avx512vl"))) static void kr_shift32_avx512(const int8_t *x, int64_t n,
                                                                                   int32_t izp, uint32_t k, int32_t *y)
{
    const __m512i zp = _mm512_set1_epi32(izp), sh = _mm512_set1_epi32((int32_t)k);
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1u);
        const __m512i v = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, x + i));
        _mm512_mask_storeu_epi32(y + i, m, _mm512_sllv_epi32(_mm512_sub_epi32(v, zp), sh));
    }
}
#endif

#ifdef TOSAC_KERNEL_X86
/* rs_prep.lshift's results at AVX2: (x - izp) << k, 32 a step (the int32 results of the int8
   RESCALEs ahead of a residual ADD; the table lookups were most of their time); rs_prep.split's
   (the joins' other input: a multiplier that is no power of two, shift 12) 8 a step in int32
   (rs_split: two vpmulld instead of a vpgatherdd of 8 table entries); the tail from the table
   (l32: the same values). Else the table's int32 results by gathers, 8 a step. */
__attribute__((target("avx2"))) static void kr_lut32_avx2(const int8_t *x, int64_t n, const rs_prep *h,
                                                          const int32_t *l32, int32_t *y)
{
    const uint32_t lshift = h->lshift;
    const __m256i zp = _mm256_set1_epi32(h->izp), off = _mm256_set1_epi32(128);
    const __m128i sh = _mm_cvtsi32_si128((int)(lshift ? lshift - 1u : 0u));
    int64_t i = 0;
    if (h->split) {
        const __m256i mh = _mm256_set1_epi32(h->mhi), ml = _mm256_set1_epi32(h->mlo), rd = _mm256_set1_epi32(h->mround);
        const __m256i oz = _mm256_set1_epi32(h->ozp), lo = _mm256_set1_epi32(h->qmin), hi = _mm256_set1_epi32(h->qmax);
        const __m128i ms = _mm_cvtsi32_si128(h->mshift);
        for (; i + 8 <= n; i += 8) {
            const __m256i v = _mm256_sub_epi32(
                _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(x + i))), zp);
            const __m256i lw = _mm256_sra_epi32(_mm256_add_epi32(_mm256_mullo_epi32(v, ml), rd), ms);
            const __m256i q = _mm256_add_epi32(_mm256_add_epi32(_mm256_mullo_epi32(v, mh), lw), oz);
            _mm256_storeu_si256((__m256i *)(void *)(y + i), _mm256_min_epi32(_mm256_max_epi32(q, lo), hi));
        }
    } else if (lshift)
        for (; i + 32 <= n; i += 32) {
            const __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(x + i));
            const __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(x + i + 16));
#define KR_SH(v, o) _mm256_storeu_si256((__m256i *)(void *)(y + i + (o)), _mm256_sll_epi32(_mm256_sub_epi32(_mm256_cvtepi8_epi32(v), zp), sh))
            KR_SH(a, 0);
            KR_SH(_mm_srli_si128(a, 8), 8);
            KR_SH(b, 16);
            KR_SH(_mm_srli_si128(b, 8), 24);
#undef KR_SH
        }
    else
        for (; i + 8 <= n; i += 8) {
            const __m128i a = _mm_loadl_epi64((const __m128i *)(const void *)(x + i));
            const __m256i ix = _mm256_add_epi32(_mm256_cvtepi8_epi32(a), off);
            _mm256_storeu_si256((__m256i *)(void *)(y + i), _mm256_i32gather_epi32(l32, ix, 4));
        }
    for (; i < n; i++) y[i] = l32[(int32_t)x[i] + 128];
}
#endif

/* rs_prep.lut's results of the int8 values s[0..m) as `out`'s type at element i0. */
static void rs_lut_store(const rs_prep *h, const int8_t *s, int64_t m, const tosac_ktensor *out, int64_t i0, uint32_t isa)
{
    const int32_t *l32 = rs_lut(h);
    const uint8_t *planes = (const uint8_t *)(l32 + 256);
    const unsigned ob = out->dtype == TOSAC_DTYPE_INT8 ? 1u : out->dtype == TOSAC_DTYPE_INT16 ? 2u : 4u;
    if (ob == 1) {
        tosac_ktable_i8(s, m, (const int8_t *)planes, (int8_t *)out->data + i0, isa);
        return;
    }
#ifdef TOSAC_KERNEL_X86
    if (isa == TOSAC_KISA_AVX512 && ob == 4 && h->lshift) {
        kr_shift32_avx512(s, m, h->izp, h->lshift - 1, (int32_t *)out->data + i0);
        return;
    }
    if (isa == TOSAC_KISA_AVX512 && __builtin_cpu_supports("avx512vbmi")) {
        if (ob == 2)
            kr_lut16_vbmi(s, m, planes, (int16_t *)out->data + i0);
        else
            kr_lut32_vbmi(s, m, planes, (int32_t *)out->data + i0);
        return;
    }
    if (isa == TOSAC_KISA_AVX2 && ob == 4) {
        kr_lut32_avx2(s, m, h, l32, (int32_t *)out->data + i0);
        return;
    }
#endif
    if (ob == 2) {
        int16_t *d = (int16_t *)out->data + i0;
        for (int64_t i = 0; i < m; i++) d[i] = tosac_ku16_to_i16((uint32_t)l32[(int32_t)s[i] + 128]);
    } else {
        int32_t *d = (int32_t *)out->data + i0;
        for (int64_t i = 0; i < m; i++) d[i] = l32[(int32_t)s[i] + 128];
    }
}

static uint32_t rs_rows(uint32_t isa, const int32_t *x, int64_t n, const rs_tabs *t, int64_t nc, int32_t ozp, int32_t lo,
                        int32_t hi, int32_t *y, bool simple)
{
    (void)simple;
#ifdef TOSAC_KERNEL_X86
    if (isa >= TOSAC_KISA_AVX512) return kr_avx512_rs_rows(x, n, t, nc, ozp, lo, hi, y, simple);
    if (isa >= TOSAC_KISA_AVX2) return kr_avx2_rs_rows(x, n, t, nc, ozp, lo, hi, y);
#endif
    (void)isa;
    return kr_base_rs_rows(x, n, t, nc, ozp, lo, hi, y);
}

/* rs_tables from channel j0 on (a per-tensor scale's are the same for every channel). */
static rs_tabs rs_tables_from(const rs_prep *h, int64_t j0)
{
    rs_tabs t = rs_tables(h);
    if (h->nc == 1 || j0 == 0) return t;
    t.mult += j0, t.shift += j0, t.rpos += j0, t.rneg += j0, t.vmin += j0, t.vmax += j0;
    if (h->hi32) t.m32 += j0, t.r32 += j0, t.s32 += j0;
    return t;
}

/* x (values minus input_zp, rows of nc channels from channel j0: h->nc and 0 for whole rows) -> y,
   in the variant c->isa picks. A per-tensor scale's tables may be replicated (rs_width): rows of
   that width, then single ones. */
static uint32_t rs_apply(const tosac_kcall *c, const int32_t *x, int64_t n, int64_t j0, int64_t nc, int32_t lo,
                         int32_t hi, int32_t *y)
{
    const rs_prep *h = c->prep;
    const rs_tabs t = rs_tables_from(h, j0);
    const uint32_t isa = c->isa == TOSAC_KISA_MVE ? TOSAC_KISA_PORTABLE : c->isa; /* (kernel.h) */
#ifdef TOSAC_KERNEL_X86
    if (h->hi32 && isa >= TOSAC_KISA_AVX2) { /* (no REQUIRE can fail) */
        if (isa >= TOSAC_KISA_AVX512)
            kr_avx512_hi32(x, n, &t, nc, h->nc == 1, h->ozp, lo, hi, y, 4);
        else
            kr_avx2_hi32(x, n, &t, nc, h->nc == 1, h->ozp, lo, hi, y, 4, false, h->dbl);
        return 0;
    }
#endif
    if (h->nc > 1) return rs_rows(isa, x, n, &t, nc, h->ozp, lo, hi, y, h->simple);
    const int64_t w = h->width;
    int64_t nw = n - (int64_t)((size_t)n % (size_t)w);
    uint32_t bad = nw ? rs_rows(isa, x, nw, &t, w, h->ozp, lo, hi, y, h->simple) : 0;
    if (nw < n) bad |= rs_rows(isa, x + nw, n - nw, &t, 1, h->ozp, lo, hi, y + nw, h->simple);
    return bad;
}

/* The conversion loops below vectorise with GCC at -O3 only (code generation only). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("O3")
#endif

/* Stores int32 values already within t's range; an unsigned range (u8/u16) as bit patterns. */
static void rs_store(const tosac_ktensor *t, int64_t off, int64_t m, const int32_t *s, bool is_unsigned)
{
    switch (t->dtype) {
    case TOSAC_DTYPE_INT8: {
        int8_t *d = (int8_t *)t->data + off;
        if (is_unsigned)
            for (int64_t i = 0; i < m; i++) d[i] = tosac_ku8_to_i8((uint32_t)s[i]);
        else
            for (int64_t i = 0; i < m; i++) d[i] = (int8_t)s[i];
        break;
    }
    case TOSAC_DTYPE_INT16: {
        int16_t *d = (int16_t *)t->data + off;
        if (is_unsigned)
            for (int64_t i = 0; i < m; i++) d[i] = tosac_ku16_to_i16((uint32_t)s[i]);
        else
            for (int64_t i = 0; i < m; i++) d[i] = (int16_t)s[i];
        break;
    }
    default: memcpy((int32_t *)t->data + off, s, (size_t)m * sizeof(int32_t)); break;
    }
}

/* rs_apply, then the results stored at element `off` of out (tmp: n int32 of room, may be x);
   the AVX-512 and AVX2 hi32 forms write out directly. */
static uint32_t rs_apply_store(const tosac_kcall *c, const int32_t *x, int64_t n, int64_t j0, int64_t nc, int32_t lo,
                               int32_t hi, int32_t *tmp, const tosac_ktensor *out, int64_t off, bool is_unsigned)
{
#ifdef TOSAC_KERNEL_X86
    const rs_prep *h = c->prep;
    if (h->hi32 && c->isa == TOSAC_KISA_AVX512) {
        const rs_tabs t = rs_tables_from(h, j0);
        const unsigned ob = out->dtype == TOSAC_DTYPE_INT8 ? 1u : out->dtype == TOSAC_DTYPE_INT16 ? 2u : 4u;
        kr_avx512_hi32(x, n, &t, nc, h->nc == 1, h->ozp, lo, hi, (uint8_t *)out->data + (size_t)off * ob, ob);
        return 0;
    }
    if (h->hi32 && c->isa == TOSAC_KISA_AVX2) {
        /* narrowed in registers where [lo, hi] lies within int16, int8 or uint8 (kr256_put) */
        const unsigned ob = out->dtype == TOSAC_DTYPE_INT8 ? 1u : out->dtype == TOSAC_DTYPE_INT16 ? 2u : 4u;
        const int32_t smin = ob == 1 ? INT8_MIN : INT16_MIN, smax = ob == 1 ? INT8_MAX : INT16_MAX;
        const bool sg = ob == 4 || (lo >= smin && hi <= smax), un = ob == 1 && lo >= 0 && hi <= UINT8_MAX;
        if (sg || un) {
            const rs_tabs t = rs_tables_from(h, j0);
            kr_avx2_hi32(x, n, &t, nc, h->nc == 1, h->ozp, lo, hi, (uint8_t *)out->data + (size_t)off * ob, ob, !sg,
                         h->dbl);
            return 0;
        }
    }
#endif
    const uint32_t bad = rs_apply(c, x, n, j0, nc, lo, hi, tmp);
    if (!bad) rs_store(out, off, n, tmp, is_unsigned);
    return bad;
}

static const char rs_require[] = "RESCALE: REQUIRE failed (multiplier >= 0, 2 <= shift <= 62, value within "
                                 "+-2^(shift-1), scaled result and result + output_zp fit INT32)";

/* The prepared path: chunks of whole channel rows through scratch. */
/* Chunks of whole channel rows (rs_prep.chunk elements) as a parallel-for task (kernel.h). */
typedef struct rs_task {
    tosac_kcall *c;
    bool iu;
    uint32_t bad[TOSAC_KMAX_WORKERS]; /* per worker: a REQUIRE failed */
} rs_task;

static void rs_chunks(void *ctx, uint32_t worker, size_t b0, size_t b1)
{
    rs_task *t = ctx;
    tosac_kcall *c = t->c;
    const rs_prep *h = c->prep;
    const tosac_ktensor *in = &c->in[0];
    const bool iu = t->iu;
    int32_t *buf = (int32_t *)(void *)((uint8_t *)c->scratch + (size_t)worker * c->scratch_size);
    const int64_t n = in->nelem, ch = h->chunk;
    const int32_t izp = h->izp;
    for (size_t b = b0; b < b1 && !t->bad[worker]; b++) {
        const int64_t i0 = (int64_t)b * ch, m = n - i0 < ch ? n - i0 : ch;
        if (h->lut && in->dtype == TOSAC_DTYPE_INT8) { /* (u8 inputs: the table is by bit pattern) */
            rs_lut_store(h, (const int8_t *)in->data + i0, m, &c->out[0], i0, c->isa);
            continue;
        }
        switch (in->dtype) {
        case TOSAC_DTYPE_INT8: {
            const int8_t *s = (const int8_t *)in->data + i0;
            if (iu)
                for (int64_t i = 0; i < m; i++) buf[i] = (int32_t)(uint8_t)s[i] - izp;
            else
                for (int64_t i = 0; i < m; i++) buf[i] = (int32_t)s[i] - izp;
            break;
        }
        case TOSAC_DTYPE_INT16: {
            const int16_t *s = (const int16_t *)in->data + i0;
            if (iu)
                for (int64_t i = 0; i < m; i++) buf[i] = (int32_t)(uint16_t)s[i] - izp;
            else
                for (int64_t i = 0; i < m; i++) buf[i] = (int32_t)s[i] - izp;
            break;
        }
        default: break; /* INT32: izp is 0, read in place */
        }
        const int32_t *x = in->dtype == TOSAC_DTYPE_INT32 ? (const int32_t *)in->data + i0 : buf;
        t->bad[worker] |= rs_apply_store(c, x, m, 0, h->nc, h->qmin, h->qmax, buf, &c->out[0], i0, h->qmin == 0);
    }
}

static tosac_status rs_run_fast(tosac_kcall *c)
{
    const rs_prep *h = c->prep;
    rs_task t = {c, tosac_kattr_or(c, TOSAC_ATTR_RESCALE_input_unsigned, 0) != 0, {0}};
    const int64_t n = c->in[0].nelem, ch = h->chunk;
    tosac_kparallel_for(c, rs_chunks, &t, ((size_t)n + (size_t)ch - 1) / (size_t)ch);
    for (uint32_t w = 0; w < tosac_kworkers(c); w++)
        if (t.bad[w]) return tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE, rs_require);
    return TOSAC_OK;
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

bool tosac_rescale_fusable(const tosac_kcall *rescale, int32_t *lo, int32_t *hi)
{
    rs_params r;
    const char *why;
    if (rs_check(rescale, &r, &why) != TOSAC_OK || !rs_preparable(rescale, &r) || r.ou ||
        rescale->in[0].dtype != TOSAC_DTYPE_INT32 || rescale->out[0].dtype == TOSAC_DTYPE_INT32)
        return false;
    *lo = (int32_t)r.qmin, *hi = (int32_t)r.qmax;
    return true;
}

static const char rs_fused_require[] = "fused RESCALE: REQUIRE failed (multiplier >= 0, 2 <= shift <= 62, value "
                                       "within +-2^(shift-1), input_zp 0)";

tosac_status tosac_epilogue_store(tosac_kcall *c, int32_t *acc, int64_t off, int64_t n)
{
    const tosac_kepilogue *e = c->epi;
    const rs_prep *h = e->rescale->prep;
    /* (a fused RESCALE has a signed output) */
    if (!h || !h->fast || h->izp != 0 ||
        rs_apply_store(e->rescale, acc, n, 0, h->nc, e->lo, e->hi, acc, e->out, off, false))
        return tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE, rs_fused_require);
    return TOSAC_OK;
}

bool tosac_epilogue_rq(const tosac_kcall *c, tosac_gemm_rq *rq)
{
    const tosac_kepilogue *e = c->epi;
    const rs_prep *h = e && e->rescale ? e->rescale->prep : NULL;
    const tosac_dtype ot = e ? e->out->dtype : TOSAC_DTYPE_INT32;
    /* (the tiles' end is SINGLE_ROUND's: DOUBLE_ROUND goes through rs_apply_store) */
    if (!h || !h->hi32 || h->dbl || h->izp != 0 ||
        (e->rescale->isa != TOSAC_KISA_AVX512 && e->rescale->isa != TOSAC_KISA_AVX2) ||
        (ot != TOSAC_DTYPE_INT8 && ot != TOSAC_DTYPE_INT16))
        return false;
    const rs_tabs t = rs_tables(h);
    *rq = (tosac_gemm_rq){t.m32, t.r32, t.s32, h->nc == 1, h->ozp, e->lo, e->hi, ot == TOSAC_DTYPE_INT8 ? 1u : 2u};
    return true;
}

tosac_status tosac_epilogue_store_cols(tosac_kcall *c, int32_t *acc, int64_t ld, int64_t off, int64_t rows, int64_t j0,
                                       int64_t jn)
{
    const tosac_kepilogue *e = c->epi;
    const rs_prep *h = e->rescale->prep;
    bool bad = !h || !h->fast || h->izp != 0;
    for (int64_t p = 0; p < rows && !bad; p++) /* one row's columns at a time (the tables from j0) */
        bad = rs_apply_store(e->rescale, acc + p * ld + j0, jn, j0, jn, e->lo, e->hi, acc + p * ld + j0, e->out,
                             off + p * ld + j0, false);
    return bad ? tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE, rs_fused_require) : TOSAC_OK;
}

tosac_status tosac_kernel_rescale(tosac_kcall *c)
{
    if (c->isa == TOSAC_KISA_MVE) {
        tosac_status mst;
        return tosac_rescale_mve_run(c, &mst) ? mst : tosac_mve_portable(c, tosac_kernel_rescale);
    }
    rs_params rp;
    const char *why = NULL;
    if (!tosac_kio_ok(c, 5, 1)) return tosac_kfail(c, TOSAC_ERR_INTERNAL, "RESCALE: missing operand");
    tosac_status st = rs_check(c, &rp, &why);
    if (st == TOSAC_OK) st = rs_zps(c, &rp, &why);
    if (st != TOSAC_OK) return tosac_kfail(c, st, why);
    /* (bytes prepared for Helium come without the scratch: tosac_rescale_mve_prepare) */
    const rs_prep *hp = c->prep;
    if (hp && hp->fast && c->scratch && c->scratch_size >= (size_t)hp->chunk * sizeof(int32_t)) return rs_run_fast(c);

    const tosac_ktensor *in = &c->in[0], *mul = &c->in[1], *shf = &c->in[2], *out = &c->out[0];
    const int64_t nc = rp.nc, izp = rp.izp, ozp = rp.ozp, qmin = rp.qmin, qmax = rp.qmax;
    const bool iu = rp.iu, scale32 = rp.scale32;
    const int32_t *m32 = mul->dtype == TOSAC_DTYPE_INT32 ? (const int32_t *)mul->data : NULL;
    const int16_t *m16 = mul->dtype == TOSAC_DTYPE_INT16 ? (const int16_t *)mul->data : NULL;
    const int8_t *sh = (const int8_t *)shf->data;
    const bool dbl = rp.dbl, inexact = rp.inexact;
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
                               rs_require);
        k_st_int(out, i0, m, buf);
    }
#undef K_RS_LOOP
    return TOSAC_OK;
}


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

TOSAC_KERNEL_NO_PREPARE(identity)
