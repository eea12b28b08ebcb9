/*
 * Activation kernels: the `clamp` (CLAMP) and `table` (TABLE) families (TOSA.md §B.3).
 *
 * CLAMP: min_val/max_val are the raw little-endian bytes of one in_out_t value (i8 1 byte, i16,
 * fp16 and bf16 2, fp32 4), possibly zero-padded to 8 bytes. r = min(max(x, min_val), max_val)
 * with the spec's apply_max_s/apply_min_s (ties keep the first operand of max, the second of
 * min), so the sign of a zero result follows the spec exactly. nan_mode PROPAGATE: a NaN input
 * gives NaN; IGNORE: a NaN input gives min_val.
 *
 * TABLE: i8 -> i8 with 256 entries (out = table[in + 128]); i16 -> i32 with 513 entries and
 * linear interpolation, REQUIRE -32768 <= slope <= 32767 for every entry pair that is used.
 * Both support running in place when the element sizes match (i8).
 */
#include <math.h>
#include <string.h>

#include "core/encoding.h"
#include "kernels/k_epilogue.h"
#include "kernels/k_mve.h"
#include "kernels/kutil.h"

/* GCC vectorises the row loops (unknown trip counts) only at -O3; IEEE results do not change (no
   reassociation or contraction: ISO C mode keeps -ffp-contract=off). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif

/* ------------------------------------------------------------------------------------------ */
/* CLAMP                                                                                        */

/* Reads the attribute bytes of one value of type t: as int64 (integers) or double (FP). */
static bool k_clamp_bound(const tosac_kcall *c, unsigned id, tosac_dtype t, int64_t *iv, double *fv)
{
    if (!c->attr || !c->attr[id].present || !c->attr[id].data) return false;
    const uint8_t *p = (const uint8_t *)c->attr[id].data;
    const uint32_t len = c->attr[id].len;
    uint32_t u = 0;
    switch (t) {
    case TOSAC_DTYPE_INT8:
        if (len < 1) return false;
        *iv = tosac_sign_extend(p[0], 8);
        return true;
    case TOSAC_DTYPE_INT16:
        if (len < 2) return false;
        *iv = tosac_sign_extend(tosac_le_load(p, 2), 16);
        return true;
    case TOSAC_DTYPE_FP16:
    case TOSAC_DTYPE_BF16:
        if (len < 2) return false;
        u = (uint32_t)tosac_le_load(p, 2);
        *fv = t == TOSAC_DTYPE_FP16 ? tosac_fp16_to_fp32((uint16_t)u) : tosac_bf16_to_fp32((uint16_t)u);
        return true;
    case TOSAC_DTYPE_FP32:
        if (len < 4) return false;
        u = (uint32_t)tosac_le_load(p, 4);
        *fv = tosac_fp32_from_bits(u);
        return true;
    default: return false;
    }
}

/* y = CLAMP(x) in one pass (y may be x); compiled for the baseline, AVX2 and AVX-512 (the same
   comparisons and selects in every lane: the same bits). */
#define K_CLAMP_F32(NAME, TARGET)                                                            \
    TARGET static void NAME(const float *x, float *y, int64_t n, float lo, float hi, bool ignore) \
    {                                                                                        \
        for (int64_t i = 0; i < n; i++) {                                                    \
            const float xv = x[i];                                                           \
            const float v = xv >= lo ? xv : lo, r = v < hi ? v : hi;                         \
            y[i] = xv != xv ? (ignore ? lo : xv) : r; /* NaN */                              \
        }                                                                                    \
    }
K_CLAMP_F32(k_clamp_f32_base, )
#ifdef TOSAC_KERNEL_X86
K_CLAMP_F32(k_clamp_f32_avx2, __attribute__((target("avx2"))))
K_CLAMP_F32(k_clamp_f32_avx512, __attribute__((target("avx2,avx512f"))))
#endif
#undef K_CLAMP_F32

void tosac_clamp_f32_isa(uint32_t isa, const float *x, float *y, int64_t n, float lo, float hi, bool ignore)
{
#ifdef TOSAC_KERNEL_X86
    if (isa == TOSAC_KISA_AVX512) {
        k_clamp_f32_avx512(x, y, n, lo, hi, ignore);
        return;
    }
    if (isa == TOSAC_KISA_AVX2) {
        k_clamp_f32_avx2(x, y, n, lo, hi, ignore);
        return;
    }
#endif
    (void)isa;
    k_clamp_f32_base(x, y, n, lo, hi, ignore);
}

void tosac_clamp_f32_row(float *x, int64_t n, float lo, float hi, bool ignore) { tosac_clamp_f32_isa(0, x, x, n, lo, hi, ignore); }

bool tosac_clamp_f32_bounds(const tosac_kcall *clamp, float *lo, float *hi, bool *ignore)
{
    int64_t iv;
    double flo, fhi;
    if (clamp->in[0].dtype != TOSAC_DTYPE_FP32 || clamp->in[0].f64 || clamp->out[0].dtype != TOSAC_DTYPE_FP32 ||
        clamp->out[0].f64 || !k_clamp_bound(clamp, TOSAC_ATTR_CLAMP_min_val, TOSAC_DTYPE_FP32, &iv, &flo) ||
        !k_clamp_bound(clamp, TOSAC_ATTR_CLAMP_max_val, TOSAC_DTYPE_FP32, &iv, &fhi) || isnan(flo) || isnan(fhi) ||
        fhi < flo)
        return false;
    *lo = (float)flo, *hi = (float)fhi;
    *ignore = tosac_kattr_or(clamp, TOSAC_ATTR_CLAMP_nan_mode, TOSAC_NAN_PROPAGATE) == TOSAC_NAN_IGNORE;
    return true;
}

bool tosac_clamp_int_bounds(const tosac_kcall *clamp, int32_t *lo, int32_t *hi)
{
    const tosac_dtype t = clamp->in[0].dtype;
    int64_t ilo, ihi;
    double f;
    if ((t != TOSAC_DTYPE_INT8 && t != TOSAC_DTYPE_INT16) || clamp->out[0].dtype != t ||
        !k_clamp_bound(clamp, TOSAC_ATTR_CLAMP_min_val, t, &ilo, &f) ||
        !k_clamp_bound(clamp, TOSAC_ATTR_CLAMP_max_val, t, &ihi, &f) || ihi < ilo)
        return false;
    *lo = (int32_t)ilo, *hi = (int32_t)ihi;
    return true;
}

tosac_status tosac_kernel_clamp(tosac_kcall *c)
{
    tosac_status mst;
    if (c->isa == TOSAC_KISA_MVE && tosac_clamp_mve_run(c, &mst)) return mst;
    if (!tosac_kio_ok(c, 1, 1)) return tosac_kfail(c, TOSAC_ERR_INTERNAL, "CLAMP: missing operand");
    const tosac_ktensor *in = &c->in[0], *out = &c->out[0];
    const tosac_dtype t = in->dtype;
    if (out->dtype != t || out->nelem != in->nelem || out->f64 != in->f64)
        return tosac_kfail(c, TOSAC_ERR_INTERNAL, "CLAMP: output shape or type differs from the input");
    int64_t ilo = 0, ihi = 0;
    double flo = 0.0, fhi = 0.0;
    if (!k_clamp_bound(c, TOSAC_ATTR_CLAMP_min_val, t, &ilo, &flo) ||
        !k_clamp_bound(c, TOSAC_ATTR_CLAMP_max_val, t, &ihi, &fhi))
        return tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "CLAMP: min_val/max_val missing or not of the input type");
    const int64_t n = in->nelem;

    switch (t) {
    case TOSAC_DTYPE_INT8: {
        if (ihi < ilo) return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "CLAMP: max_val < min_val");
        const int8_t lo = (int8_t)ilo, hi = (int8_t)ihi;
        const int8_t *x = (const int8_t *)in->data;
        int8_t *y = (int8_t *)out->data;
        for (int64_t i = 0; i < n; i++) {
            const int8_t v = x[i] >= lo ? x[i] : lo;
            y[i] = v < hi ? v : hi;
        }
        return TOSAC_OK;
    }
    case TOSAC_DTYPE_INT16: {
        if (ihi < ilo) return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "CLAMP: max_val < min_val");
        const int16_t lo = (int16_t)ilo, hi = (int16_t)ihi;
        const int16_t *x = (const int16_t *)in->data;
        int16_t *y = (int16_t *)out->data;
        for (int64_t i = 0; i < n; i++) {
            const int16_t v = x[i] >= lo ? x[i] : lo;
            y[i] = v < hi ? v : hi;
        }
        return TOSAC_OK;
    }
    case TOSAC_DTYPE_FP32:
    case TOSAC_DTYPE_FP16:
    case TOSAC_DTYPE_BF16: break;
    default: return tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "CLAMP: unsupported element type");
    }

    if (isnan(flo) || isnan(fhi)) return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "CLAMP: min_val or max_val is NaN");
    if (fhi < flo) return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "CLAMP: max_val < min_val");
    const bool ignore = tosac_kattr_or(c, TOSAC_ATTR_CLAMP_nan_mode, TOSAC_NAN_PROPAGATE) == TOSAC_NAN_IGNORE;
    if (t == TOSAC_DTYPE_FP32 && !in->f64) {
        /* the bounds are fp32 values, so float arithmetic is exact here */
        tosac_clamp_f32_isa(c->isa, (const float *)in->data, (float *)out->data, n, (float)flo, (float)fhi, ignore);
        return TOSAC_OK;
    }
    /* fp16 / bf16 storage and precise mode: every candidate result is a value of the type */
    for (int64_t i = 0; i < n; i++) {
        const double xv = tosac_kload_fp(in, i);
        double r;
        if (isnan(xv)) {
            r = ignore ? flo : xv;
        } else {
            const double v = xv >= flo ? xv : flo;
            r = v < fhi ? v : fhi;
        }
        tosac_kstore_fp(out, i, r);
    }
    return TOSAC_OK;
}

TOSAC_KERNEL_NO_PREPARE(clamp)

/* ------------------------------------------------------------------------------------------ */
/* TABLE                                                                                        */

#ifdef TOSAC_KERNEL_X86
#include <immintrin.h>
/* i8 TABLE, 64 elements at a time: vpermi2b looks up 128-entry halves by the low 7 bits of
   x + 128, the top bit picks the half (AVX-512 VBMI; Zen 4, Ice Lake and later). */
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) static void kt_i8_vbmi(const int8_t *x, int64_t n,
                                                                            const int8_t *tb, int8_t *y)
{
    const __m512i t0 = _mm512_loadu_si512(tb), t1 = _mm512_loadu_si512(tb + 64);
    const __m512i t2 = _mm512_loadu_si512(tb + 128), t3 = _mm512_loadu_si512(tb + 192);
    const __m512i flip = _mm512_set1_epi8(-128);
    for (int64_t i = 0; i < n; i += 64) {
        const __mmask64 m = n - i >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << (n - i)) - 1;
        const __m512i u = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, x + i), flip);
        const __m512i r = _mm512_mask_blend_epi8(_mm512_movepi8_mask(u), _mm512_permutex2var_epi8(t0, u, t1),
                                                 _mm512_permutex2var_epi8(t2, u, t3));
        _mm512_mask_storeu_epi8(y + i, m, r);
    }
}
#define KT_VBMI 1
/* i8 TABLE at AVX2, 32 elements at a time: vpshufb looks up each 16-entry block of the table by
   the low 4 bits of x + 128 and the lanes whose high 4 bits name that block take its result. */
__attribute__((target("avx2"))) static void kt_i8_avx2(const int8_t *x, int64_t n, const int8_t *tb, int8_t *y)
{
    __m256i t[16];
    for (int h = 0; h < 16; h++) t[h] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(tb + 16 * h)));
    const __m256i flip = _mm256_set1_epi8(-128), low = _mm256_set1_epi8(15);
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m256i u = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(x + i)), flip);
        const __m256i lo = _mm256_and_si256(u, low), hi = _mm256_and_si256(_mm256_srli_epi16(u, 4), low);
        __m256i r = _mm256_shuffle_epi8(t[0], lo);
        for (int h = 1; h < 16; h++)
            r = _mm256_blendv_epi8(r, _mm256_shuffle_epi8(t[h], lo), _mm256_cmpeq_epi8(hi, _mm256_set1_epi8((char)h)));
        _mm256_storeu_si256((__m256i *)(void *)(y + i), r);
    }
    for (; i < n; i++) y[i] = tb[(int32_t)x[i] + 128];
}
#endif

void tosac_ktable_i8(const int8_t *x, int64_t n, const int8_t *tb, int8_t *y, uint32_t isa)
{
#ifdef KT_VBMI
    if (isa == TOSAC_KISA_AVX512 && __builtin_cpu_supports("avx512vbmi")) {
        kt_i8_vbmi(x, n, tb, y);
        return;
    }
    if (isa == TOSAC_KISA_AVX2) {
        kt_i8_avx2(x, n, tb, y);
        return;
    }
#endif
    (void)isa;
    for (int64_t i = 0; i < n; i++) y[i] = tb[(int32_t)x[i] + 128];
}

/* Pieces of KT_PIECE elements of an i8 TABLE as a parallel-for task (kernel.h). */
#define KT_PIECE 65536
typedef struct kt_task {
    const int8_t *x, *tb;
    int8_t *y;
    int64_t n;
    uint32_t isa;
} kt_task;

static void kt_i8_range(void *ctx, uint32_t worker, size_t b0, size_t b1)
{
    const kt_task *t = ctx;
    (void)worker;
    const int64_t i0 = (int64_t)b0 * KT_PIECE, i1 = (int64_t)b1 * KT_PIECE < t->n ? (int64_t)b1 * KT_PIECE : t->n;
    tosac_ktable_i8(t->x + i0, i1 - i0, t->tb, t->y + i0, t->isa);
}

tosac_status tosac_kernel_table(tosac_kcall *c)
{
    tosac_status mst;
    if (c->isa == TOSAC_KISA_MVE && tosac_table_mve_run(c, &mst)) return mst;
    if (!tosac_kio_ok(c, 2, 1)) return tosac_kfail(c, TOSAC_ERR_INTERNAL, "TABLE: missing operand");
    const tosac_ktensor *in = &c->in[0], *tab = &c->in[1], *out = &c->out[0];
    if (out->nelem != in->nelem)
        return tosac_kfail(c, TOSAC_ERR_INTERNAL, "TABLE: output shape differs from the input");
    const int64_t n = in->nelem;

    if (in->dtype == TOSAC_DTYPE_INT8) {
        if (tab->dtype != TOSAC_DTYPE_INT8 || out->dtype != TOSAC_DTYPE_INT8)
            return tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "TABLE: INT8 input needs an INT8 table and output");
        if (tab->nelem != 256) return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "TABLE: INT8 table must have 256 entries");
        kt_task t = {(const int8_t *)in->data, (const int8_t *)tab->data, (int8_t *)out->data, n, c->isa};
        tosac_kparallel_for(c, kt_i8_range, &t, (size_t)((n + KT_PIECE - 1) / KT_PIECE));
        return TOSAC_OK;
    }
    if (in->dtype == TOSAC_DTYPE_INT16) {
        if (tab->dtype != TOSAC_DTYPE_INT16 || out->dtype != TOSAC_DTYPE_INT32)
            return tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "TABLE: INT16 input needs an INT16 table and INT32 output");
        if (tab->nelem != 513) return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "TABLE: INT16 table must have 513 entries");
        const int16_t *x = (const int16_t *)in->data, *tb = (const int16_t *)tab->data;
        int32_t *y = (int32_t *)out->data;
        unsigned bad = 0;
        for (int64_t i = 0; i < n; i++) {
            const int32_t v = (int32_t)x[i] + 32768; /* 0 .. 65535 */
            const int32_t idx = v >> 7;              /* 0 .. 511 */
            const int32_t frac = v & 0x7F;           /* == in & 0x7F */
            const int32_t base = tb[idx], next = tb[idx + 1];
            const int32_t slope = next - base;
            bad |= (slope < INT16_MIN) | (slope > INT16_MAX);
            y[i] = base * 128 + slope * frac; /* |.| < 2^23: fits */
        }
        if (bad) return tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE, "TABLE: REQUIRE -32768 <= slope <= 32767 failed");
        return TOSAC_OK;
    }
    return tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "TABLE: unsupported element type");
}

TOSAC_KERNEL_NO_PREPARE(table)
