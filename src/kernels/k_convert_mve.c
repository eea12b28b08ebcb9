/*
 * Helium RESCALE (k_mve.h): scale32 SINGLE / DOUBLE_ROUND rescales of int8 / int16 / int32 values
 * (signed or unsigned 8/16-bit) to int8 / int16 / int32 with constant multipliers >= 0 and shifts
 * that all lie in [32, 62] or all in [9, 31] (8-bit input) / [17, 31] (16-bit input): then no
 * REQUIRE can fail (|v| <= 2^(shift-1) for every possible value v, |result| < 2^31). int32 input
 * with shifts all in [2, 31] is taken too: the REQUIRE -2^(s-1) <= v < 2^(s-1) is then checked on
 * every value (v shifted left by 32 - s saturates exactly when it fails). Shifts of 32
 * and more: k_conv_mve.c's arithmetic (vqdmulh, or vqrdmulh with the sign fix-up, then a rounding
 * shift by -(shift - 31)). Shifts s <= 31 (where both roundings are the same): with v' = v *
 * 2^(31-s), which fits int32 because |v| <= 2^(s-1), floor((v m + 2^(s-1)) / 2^s) =
 * floor((v' m + 2^30) / 2^31) = vqrdmulh(v', m). 4 values per vector.
 *
 * The prepared bytes are the portable RESCALE's (a fused epilogue of a portable producer reads
 * them) followed by this file's tables: the header and, per channel, the multiplier and the
 * negated shift as int32; the last 8 bytes hold the tables' bytes (they are found from the end:
 * emitted C keeps only them, tosac_rescale_mve_unread) and a magic number.
 */
#include <string.h>

#include "kernels/k_mve.h"
#include "kernels/kutil.h"

#ifdef __ARM_FEATURE_MVE
#include <arm_mve.h>
#endif

#define RMVE_MAGIC 0x52564D48u

typedef struct rmve_hdr {
    int32_t nc, izp, ozp, qmin, qmax;
    int32_t dbl, in_unsigned;
    int32_t low;   /* every shift <= 31 (below) */
    int32_t check; /* int32 input with low shifts: the value REQUIRE checked */
} rmve_hdr;

static size_t rmve_a16(size_t n) { return (n + 15u) & ~(size_t)15u; }

/* The extension's bytes after `base` bytes of the portable layout (0: not taken). */
static size_t rmve_plan(const tosac_kcall *c, rmve_hdr *h)
{
    if (c->n_in < 5 || c->n_out < 1) return 0;
    const tosac_ktensor *in = &c->in[0], *m = &c->in[1], *s = &c->in[2], *out = &c->out[0];
    for (int i = 1; i < 5; i++)
        if (!c->in[i].constant || !c->in[i].data || c->in[i].nelem < 1) return 0;
    if (in->dtype != TOSAC_DTYPE_INT8 && in->dtype != TOSAC_DTYPE_INT16 && in->dtype != TOSAC_DTYPE_INT32) return 0;
    if (out->dtype != TOSAC_DTYPE_INT8 && out->dtype != TOSAC_DTYPE_INT16 && out->dtype != TOSAC_DTYPE_INT32) return 0;
    if (!tosac_kattr_or(c, TOSAC_ATTR_RESCALE_scale32, 0) || m->dtype != TOSAC_DTYPE_INT32 || s->dtype != TOSAC_DTYPE_INT8)
        return 0;
    const int64_t rm = tosac_kattr_or(c, TOSAC_ATTR_RESCALE_rounding_mode, TOSAC_ROUND_UNKNOWN);
    if (rm != TOSAC_ROUND_SINGLE && rm != TOSAC_ROUND_DOUBLE) return 0;
    const bool per_channel = tosac_kattr_or(c, TOSAC_ATTR_RESCALE_per_channel, 0) != 0;
    const bool iu = tosac_kattr_or(c, TOSAC_ATTR_RESCALE_input_unsigned, 0) != 0;
    const bool ou = tosac_kattr_or(c, TOSAC_ATTR_RESCALE_output_unsigned, 0) != 0;
    if (per_channel && in->rank < 1) return 0;
    const int64_t nc = per_channel ? in->shape[in->rank - 1] : 1;
    if (nc < 1 || nc > INT32_MAX / 8 || m->nelem != nc || s->nelem != nc || out->nelem != in->nelem) return 0;
    if ((iu || ou) && (in->dtype == TOSAC_DTYPE_INT32 || out->dtype == TOSAC_DTYPE_INT32 || (iu && ou))) return 0;
    /* shifts all in [32, 62], or all in [lim, 31] where no value of the input type can fail the
       REQUIRE |v| <= 2^(shift-1) (|x - zp| <= 255 for 8-bit, 65535 for 16-bit input) */
    const int32_t lim = in->dtype == TOSAC_DTYPE_INT8 ? 9 : in->dtype == TOSAC_DTYPE_INT16 ? 17 : 2;
    const bool low = ((const int8_t *)s->data)[0] < 32;
    for (int64_t j = 0; j < nc; j++) {
        const int32_t mj = ((const int32_t *)m->data)[j], sj = ((const int8_t *)s->data)[j];
        if (mj < 0 || (low ? sj < lim || sj > 31 : sj < 32 || sj > 62)) return 0;
    }
    /* zero points as the portable kernel reads them (rs_zps): the unsigned ones masked; the
       ERROR_IFs on them stay the portable kernel's to report */
    const unsigned ib = tosac_dtype_bits(in->dtype), ob = tosac_dtype_bits(out->dtype);
    int64_t izp = tosac_kload_int(&c->in[3], 0), ozp = tosac_kload_int(&c->in[4], 0);
    if (iu) izp &= ((int64_t)1 << ib) - 1;
    if (ou) ozp &= ((int64_t)1 << ob) - 1;
    if (izp != 0 && !(in->dtype == TOSAC_DTYPE_INT8 || (in->dtype == TOSAC_DTYPE_INT16 && iu && izp == 32768))) return 0;
    if (ozp != 0 && !(out->dtype == TOSAC_DTYPE_INT8 || (out->dtype == TOSAC_DTYPE_INT16 && ou && ozp == 32768))) return 0;
    memset(h, 0, sizeof *h);
    h->nc = (int32_t)nc, h->izp = (int32_t)izp, h->ozp = (int32_t)ozp;
    h->qmin = ou ? 0 : ob >= 32 ? INT32_MIN : -(int32_t)(1u << (ob - 1));
    h->qmax = ou ? (int32_t)((1u << ob) - 1) : ob >= 32 ? INT32_MAX : (int32_t)((1u << (ob - 1)) - 1);
    h->dbl = rm == TOSAC_ROUND_DOUBLE && !low, h->in_unsigned = iu, h->low = low;
    h->check = low && in->dtype == TOSAC_DTYPE_INT32;
    return rmve_a16(sizeof *h) + 2 * rmve_a16((size_t)(nc + 3) / 4 * 16) + 16;
}

bool tosac_rescale_mve_prepare(const tosac_kcall *c, tosac_kprep *sizes, void *dst, size_t base)
{
    rmve_hdr h;
    const size_t ext = rmve_plan(c, &h);
    if (!ext) return false;
    const size_t off = rmve_a16(base);
    sizes->const_size = off + ext;
    sizes->unread = 0x1Eu; /* the multipliers, shifts and zero points: the tables hold them */
    sizes->scratch_size = 0; /* none for this run (the portable one then goes element by element) */
    if (!dst) return true;
    uint8_t *d = (uint8_t *)dst + off;
    memset(d, 0, ext);
    memcpy(d, &h, sizeof h);
    int32_t *mult = (int32_t *)(void *)(d + rmve_a16(sizeof h));
    int32_t *nsh = (int32_t *)(void *)(d + rmve_a16(sizeof h) + rmve_a16((size_t)(h.nc + 3) / 4 * 16));
    for (int32_t j = 0; j < h.nc; j++) {
        mult[j] = ((const int32_t *)c->in[1].data)[j];
        nsh[j] = 31 - ((const int8_t *)c->in[2].data)[j]; /* a right shift by -(shift - 31), or left */
    }
    const uint32_t tail[2] = {(uint32_t)ext, RMVE_MAGIC};
    memcpy((uint8_t *)dst + off + ext - 8, tail, sizeof tail);
    return true;
}

/* The offset of this file's tables in c's prepared bytes, SIZE_MAX when they are not there. */
static size_t rmve_tables(const tosac_kcall *c)
{
    uint32_t tail[2];
    if (!c->prep || c->prep_size < 16) return SIZE_MAX;
    memcpy(tail, (const uint8_t *)c->prep + c->prep_size - 8, sizeof tail);
    return tail[1] == RMVE_MAGIC && tail[0] <= c->prep_size ? c->prep_size - tail[0] : SIZE_MAX;
}

bool tosac_rescale_mve_owns(const tosac_kcall *c) { return rmve_tables(c) != SIZE_MAX; }

size_t tosac_rescale_mve_unread(const tosac_kcall *c)
{
    const size_t off = rmve_tables(c);
    return off == SIZE_MAX ? 0 : off;
}

tosac_status tosac_kernel_rescale_mve(tosac_kcall *c)
{
    tosac_status st;
    return tosac_rescale_mve_run(c, &st) ? st
                                         : tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "RESCALE: constants not prepared for Helium");
}

#ifdef __ARM_FEATURE_MVE

__attribute__((always_inline)) static inline int32x4_t rmve_load(const tosac_ktensor *t, bool iu, size_t i,
                                                                 mve_pred16_t p)
{
    switch (t->dtype) {
    case TOSAC_DTYPE_INT8:
        return iu ? vreinterpretq_s32_u32(vldrbq_z_u32((const uint8_t *)t->data + i, p))
                  : vldrbq_z_s32((const int8_t *)t->data + i, p);
    case TOSAC_DTYPE_INT16:
        return iu ? vreinterpretq_s32_u32(vldrhq_z_u32((const uint16_t *)t->data + i, p))
                  : vldrhq_z_s32((const int16_t *)t->data + i, p);
    default: return vldrwq_z_s32((const int32_t *)t->data + i, p);
    }
}

__attribute__((always_inline)) static inline void rmve_store(const tosac_ktensor *t, size_t i, int32x4_t v,
                                                             mve_pred16_t p)
{
    switch (t->dtype) {
    case TOSAC_DTYPE_INT8: vstrbq_p_s32((int8_t *)t->data + i, v, p); break;
    case TOSAC_DTYPE_INT16: vstrhq_p_s32((int16_t *)t->data + i, v, p); break;
    default: vstrwq_p_s32((int32_t *)t->data + i, v, p); break;
    }
}

/* (dbl constant in each expansion) */
__attribute__((always_inline)) static inline int32x4_t rmve_scale(int32x4_t v, int32x4_t m, int32x4_t sh, bool dbl,
                                                                  bool low)
{
    if (low) return vqrdmulhq_s32(vshlq_s32(v, sh), m);
    const int32x4_t q = dbl ? vaddq_s32(vqrdmulhq_s32(v, m), vshrq_n_s32(v, 31)) : vqdmulhq_s32(v, m);
    return vrshlq_s32(q, sh);
}

/* The lanes of v (int32, shift 31 - nsh) failing the value REQUIRE, as a non-zero lane of the result. */
__attribute__((always_inline)) static inline int32x4_t rmve_bad(int32x4_t v, int32x4_t nsh)
{
    const int32x4_t s = vaddq_n_s32(nsh, 1);
    return veorq_s32(vqshlq_s32(v, s), vshlq_s32(v, s));
}

/* (dbl, low, check constant in each expansion); returns non-zero when a value failed the REQUIRE */
__attribute__((always_inline)) static inline bool rmve_rows(const tosac_kcall *c, const rmve_hdr *h,
                                                            const int32_t *mult, const int32_t *nsh, const bool dbl,
                                                            const bool low, const bool check)
{
    uint32x4_t bad = vdupq_n_u32(0);
    const tosac_ktensor *in = &c->in[0], *out = &c->out[0];
    const size_t n = (size_t)in->nelem, nc = (size_t)h->nc;
    const bool iu = h->in_unsigned;
    const int32x4_t lo = vdupq_n_s32(h->qmin), hi = vdupq_n_s32(h->qmax), izp = vdupq_n_s32(h->izp);
    const int32_t ozp = h->ozp;
    if (nc == 1) {
        const int32x4_t m = vdupq_n_s32(mult[0]), s = vdupq_n_s32(nsh[0]);
        for (size_t i = 0; i < n; i += 4) {
            const mve_pred16_t p = vctp32q((uint32_t)(n - i < 4 ? n - i : 4));
            const int32x4_t v = vsubq_s32(rmve_load(in, iu, i, p), izp);
            if (check) bad = vorrq_u32(bad, vreinterpretq_u32_s32(rmve_bad(v, s)));
            const int32x4_t q = vminq_s32(vmaxq_s32(vaddq_n_s32(rmve_scale(v, m, s, dbl, low), ozp), lo), hi);
            rmve_store(out, i, q, p);
        }
        return vmaxvq_u32(0, bad) != 0;
    }
    for (size_t r = 0; r < n; r += nc)
        for (size_t j = 0; j < nc; j += 4) {
            const mve_pred16_t p = vctp32q((uint32_t)(nc - j < 4 ? nc - j : 4));
            const int32x4_t v = vsubq_s32(rmve_load(in, iu, r + j, p), izp);
            const int32x4_t m = vld1q_s32(mult + j), s = vld1q_s32(nsh + j);
            if (check) bad = vorrq_u32(bad, vreinterpretq_u32_s32(rmve_bad(v, s))); /* (inactive lanes: 0) */
            const int32x4_t q = vminq_s32(vmaxq_s32(vaddq_n_s32(rmve_scale(v, m, s, dbl, low), ozp), lo), hi);
            rmve_store(out, r + j, q, p);
        }
    return vmaxvq_u32(0, bad) != 0;
}

bool tosac_rescale_mve_run(tosac_kcall *c, tosac_status *st)
{
    const size_t off = rmve_tables(c);
    if (off == SIZE_MAX) return false;
    const uint8_t *d = (const uint8_t *)c->prep + off;
    rmve_hdr h;
    memcpy(&h, d, sizeof h);
    const int32_t *mult = (const int32_t *)(const void *)(d + rmve_a16(sizeof h));
    const int32_t *nsh = (const int32_t *)(const void *)(d + rmve_a16(sizeof h) + rmve_a16((size_t)(h.nc + 3) / 4 * 16));
    bool bad = false;
    if (h.check)
        bad = rmve_rows(c, &h, mult, nsh, false, true, true);
    else if (h.low)
        rmve_rows(c, &h, mult, nsh, false, true, false);
    else if (h.dbl)
        rmve_rows(c, &h, mult, nsh, true, false, false);
    else
        rmve_rows(c, &h, mult, nsh, false, false, false);
    *st = bad ? tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE, "RESCALE: REQUIRE failed (value within 2^(shift-1))") : TOSAC_OK;
    return true;
}

#else

bool tosac_rescale_mve_run(tosac_kcall *c, tosac_status *st)
{
    (void)c, (void)st;
    return false; /* the portable kernel reads its own part of the prepared bytes */
}

#endif
