/*
 * Helium kernels of the conv family (k_mve.h): int8 CONV2D (any kernel size, stride, dilation,
 * padding) and DEPTHWISE_CONV2D (multiplier 1) with int32 results, or with the fused RESCALE /
 * CLAMP epilogue (kernel.h: tosac_kepilogue) to int8 / int16; and int8 MATMUL of one batch with a
 * constant B, run as the 1x1 convolution of A's rows (no bias; the matmul family's hooks).
 *
 * Taken when the weights, bias and zero points are constants, the RESCALE (if fused) has constant
 * multipliers >= 0 and shifts in [32, 62], and no sum can overflow (K * 255^2 + |bias| < 2^31).
 * Then no REQUIRE can fail, every product sum is exact in int32 (wrapping partial sums included)
 * and the results are the portable kernel's bits.
 *
 * CONV2D: with x the input and w the weights as stored,
 *   sum_k (x_k - izp)(w_k - wzp) + bias = sum_k x_k w_k - wzp sum_k x_k + corr,
 *   corr = bias - izp sum_k w_k + K izp wzp (prepared per output channel),
 * where a padding tap holds x = izp (it then contributes 0, as the spec's skipped tap does). The
 * patch of an output pixel (taps in the spec order ky, kx, ic) is gathered as int8 (or read in
 * place for a 1x1, stride-1, unpadded convolution) and multiplied with 4 weight rows at a time
 * (vmladava: 16 multiply-accumulates per instruction, tail-predicated).
 * DEPTHWISE_CONV2D: 4 channels per vector, the valid taps of each pixel, (x - izp) * (w - wzp)
 * with the weights prepared as int8 (w - wzp), taken when those fit int8.
 *
 * The fused RESCALE of an int32 v with shift s = 32 + t (t in [0, 30]) and multiplier m >= 0:
 *   SINGLE_ROUND: floor((v m + 2^(s-1)) / 2^s) = rshr_round(floor(v m / 2^31), t + 1)
 *   DOUBLE_ROUND: floor((v m + 2^(s-1) + sign(v) 2^30) / 2^s)
 *               = rshr_round(floor((v m + sign(v) 2^30) / 2^31), t + 1)
 * because adding a fraction below 1 to an integer numerator does not change a floor division by
 * a power of two. floor(v m / 2^31) is vqdmulh (no saturation: m >= 0), floor((v m + 2^30) / 2^31)
 * is vqrdmulh, one less for v < 0; rshr_round(q, n) = floor((q + 2^(n-1)) / 2^n) is vrshl by -n.
 */
#include <string.h>

#include "kernels/k_epilogue.h"
#include "kernels/k_mve.h"
#include "kernels/kutil.h"

#ifdef __ARM_FEATURE_MVE
#include <arm_mve.h>
#endif

#define CMVE_MAGIC 0x43564D48u /* tells the run these bytes are this file's layout */

typedef struct cmve_hdr {
    uint32_t magic;
    int32_t depthwise, matmul;
    int32_t N, IH, IW, IC, OH, OW, OC, KH, KW, sy, sx, dy, dx, pt, pl;
    int32_t K, ks;   /* reduction length; weight row stride (K rounded up to 16) */
    int32_t OCp;     /* OC rounded up to 4 (conv) or 8 (depthwise) */
    int32_t izp, wzp;
    int32_t epi, dbl; /* a fused RESCALE (DOUBLE_ROUND or not) */
    int32_t ozp;
    uint32_t off_corr, off_mult, off_shift, off_w, total;
    uint32_t scratch; /* scratch bytes */
} cmve_hdr;

static int32_t ceil_to(int32_t v, int32_t m) { return (v + m - 1) / m * m; }

/* A 1x1, stride-1, unpadded convolution: the patch of a pixel is its input row. */
static bool cmve_rows(const cmve_hdr *h)
{
    return h->KH == 1 && h->KW == 1 && h->sy == 1 && h->sx == 1 && h->pt == 0 && h->pl == 0 && h->OH == h->IH &&
           h->OW == h->IW;
}
static uint32_t align16(size_t v) { return (uint32_t)((v + 15u) & ~(size_t)15u); }
static int32_t dim(const tosac_ktensor *t, int32_t i) { return i < t->rank ? (int32_t)t->shape[i] : 1; }

/* The geometry, and whether the Helium kernel takes the call (see the file comment). */
static bool cmve_plan(const tosac_kcall *c, cmve_hdr *h)
{
    memset(h, 0, sizeof *h);
    const bool mm = c->op == TOSAC_OP_MATMUL, dw = c->op == TOSAC_OP_DEPTHWISE_CONV2D;
    if (c->op != TOSAC_OP_CONV2D && !dw && !mm) return false;
    const uint32_t nin = mm ? 4 : 5; /* MATMUL: A, B, A_zp, B_zp (no bias) */
    if (c->n_in < nin || c->n_out < 1) return false;
    const tosac_ktensor *in = &c->in[0], *w = &c->in[1], *out = &c->out[0], *bias = mm ? NULL : &c->in[2];
    const int32_t rank = mm ? 3 : 4;
    if (in->dtype != TOSAC_DTYPE_INT8 || w->dtype != TOSAC_DTYPE_INT8 || out->dtype != TOSAC_DTYPE_INT32 ||
        (bias && bias->dtype != TOSAC_DTYPE_INT32) || in->rank != rank || out->rank != rank || w->rank != rank)
        return false;
    for (uint32_t i = 1; i < nin; i++)
        if (!c->in[i].constant || !c->in[i].data || c->in[i].nelem < 1) return false;
    h->depthwise = dw, h->matmul = mm;
    if (mm) {
        /* A [1, H, C] x B [1, C, W]: a 1x1 convolution of H pixels, C channels, W outputs */
        if (dim(in, 0) != 1 || dim(w, 0) != 1) return false;
        h->N = 1, h->IH = h->OH = dim(in, 1), h->IW = h->OW = 1, h->IC = dim(in, 2), h->OC = dim(w, 2);
        h->KH = h->KW = 1, h->sy = h->sx = h->dy = h->dx = 1;
        h->K = h->IC;
        h->OCp = ceil_to(h->OC, 4);
    } else {
        h->N = dim(in, 0), h->IH = dim(in, 1), h->IW = dim(in, 2), h->IC = dim(in, 3);
        h->OH = dim(out, 1), h->OW = dim(out, 2), h->OC = dim(out, 3);
        unsigned pad = dw ? TOSAC_ATTR_DEPTHWISE_CONV2D_pad : TOSAC_ATTR_CONV2D_pad;
        unsigned str = dw ? TOSAC_ATTR_DEPTHWISE_CONV2D_stride : TOSAC_ATTR_CONV2D_stride;
        unsigned dil = dw ? TOSAC_ATTR_DEPTHWISE_CONV2D_dilation : TOSAC_ATTR_CONV2D_dilation;
        h->pt = (int32_t)tosac_kattr_at(c, pad, 0, 0), h->pl = (int32_t)tosac_kattr_at(c, pad, 2, 0);
        h->sy = (int32_t)tosac_kattr_at(c, str, 0, 1), h->sx = (int32_t)tosac_kattr_at(c, str, 1, 1);
        h->dy = (int32_t)tosac_kattr_at(c, dil, 0, 1), h->dx = (int32_t)tosac_kattr_at(c, dil, 1, 1);
        if (dw) {
            h->KH = dim(w, 0), h->KW = dim(w, 1);
            if (dim(w, 3) != 1 || h->OC != h->IC) return false; /* channel multiplier 1 only */
            /* the weights are prepared as int8 (w - wzp) */
            const int64_t wzp = tosac_kload_int(&c->in[4], 0);
            for (int64_t i = 0; i < w->nelem; i++) {
                const int64_t v = ((const int8_t *)w->data)[i] - wzp;
                if (v < INT8_MIN || v > INT8_MAX) return false;
            }
            h->K = h->KH * h->KW;
            h->OCp = ceil_to(h->OC, 8);
        } else {
            h->KH = dim(w, 1), h->KW = dim(w, 2);
            h->K = h->KH * h->KW * h->IC;
            h->OCp = ceil_to(h->OC, 4);
        }
    }
    h->ks = ceil_to(h->K, 16);
    if (h->N * h->OH * h->OW * h->OC == 0 || h->K == 0) return false;
    h->izp = (int32_t)tosac_kload_int(&c->in[mm ? 2 : 3], 0);
    h->wzp = (int32_t)tosac_kload_int(&c->in[mm ? 3 : 4], 0);
    if (h->izp < -128 || h->izp > 127 || h->wzp < -128 || h->wzp > 127) return false;
    /* no accumulator or accumulator + bias beyond int32 (the portable kernel's REQUIRE) */
    int64_t bmax = 0;
    for (int64_t i = 0; bias && i < bias->nelem; i++) {
        const int32_t bi = ((const int32_t *)bias->data)[i];
        const int64_t v = bi < 0 ? -(int64_t)bi : bi;
        if (v > bmax) bmax = v;
    }
    if ((int64_t)h->K * 65025 + bmax > INT32_MAX) return false;
    if (bias && bias->nelem != 1 && bias->nelem != h->OC) return false;
    if (c->epi) {
        const tosac_kcall *r = c->epi->rescale;
        if (!r || c->epi->out->dtype == TOSAC_DTYPE_INT32) return false;
        const tosac_ktensor *m = &r->in[1], *s = &r->in[2];
        if (m->dtype != TOSAC_DTYPE_INT32 || s->dtype != TOSAC_DTYPE_INT8 || (m->nelem != 1 && m->nelem != h->OC) ||
            s->nelem != m->nelem || !m->constant || !s->constant || !r->in[3].constant || !r->in[4].constant)
            return false;
        for (int64_t j = 0; j < m->nelem; j++) {
            int32_t mj = ((const int32_t *)m->data)[j], sj = ((const int8_t *)s->data)[j];
            if (mj < 0 || sj < 32 || sj > 62) return false;
        }
        if (tosac_kload_int(&r->in[3], 0) != 0) return false;
        int64_t rm = tosac_kattr_or(r, TOSAC_ATTR_RESCALE_rounding_mode, TOSAC_ROUND_UNKNOWN);
        if (rm != TOSAC_ROUND_SINGLE && rm != TOSAC_ROUND_DOUBLE) return false;
        h->epi = 1, h->dbl = rm == TOSAC_ROUND_DOUBLE;
        h->ozp = (int32_t)tosac_kload_int(&r->in[4], 0);
    }
    size_t o = align16(sizeof *h);
    h->off_corr = (uint32_t)o, o += align16((size_t)h->OCp * 4);
    h->off_mult = (uint32_t)o, o += align16((size_t)h->OCp * 4);
    h->off_shift = (uint32_t)o, o += align16((size_t)h->OCp); /* int8: widened by the load */
    h->off_w = (uint32_t)o;
    o += dw ? align16((size_t)h->K * (size_t)h->OCp) : align16((size_t)h->OCp * (size_t)h->ks);
    h->total = (uint32_t)o;
    /* 2 patches, interleaved, 2 result rows; one output pixel (a fully connected layer): its
       result row, and its patch unless the input row is read in place (cmve_conv) */
    if (dw)
        h->scratch = 0;
    else if (h->N * h->OH * h->OW > 1)
        h->scratch = 4 * align16((size_t)h->ks) + 2 * align16((size_t)h->OCp * 4);
    else
        h->scratch = align16((size_t)h->OCp * 4) + (cmve_rows(h) && h->K % 16 == 0 ? 0 : align16((size_t)h->ks));
    h->magic = CMVE_MAGIC;
    return true;
}

bool tosac_conv_mve_prepare(const tosac_kcall *c, tosac_kprep *sizes, void *dst)
{
    cmve_hdr h;
    if (!cmve_plan(c, &h)) return false;
    sizes->const_size = h.total;
    sizes->scratch_size = h.scratch;
    /* weights, bias and an epilogue's multipliers and shifts are folded into the prepared bytes */
    sizes->unread = (1u << 1) | (1u << 2) | (c->epi ? TOSAC_KPREP_UNREAD_EPI : 0u);
    if (!dst) return true;
    uint8_t *d = dst;
    memset(d, 0, h.total);
    memcpy(d, &h, sizeof h);
    int32_t *corr = (int32_t *)(void *)(d + h.off_corr), *mult = (int32_t *)(void *)(d + h.off_mult);
    int8_t *shift = (int8_t *)(d + h.off_shift);
    const int8_t *w = (const int8_t *)c->in[1].data;
    const tosac_ktensor *bias = h.matmul ? NULL : &c->in[2];
    const int32_t nchunk = h.ks / 16;
    for (int32_t oc = 0; oc < h.OC; oc++) {
        const int32_t b = bias ? ((const int32_t *)bias->data)[bias->nelem == 1 ? 0 : oc] : 0;
        /* slot of channel oc in the per-channel tables: depthwise groups of 8 keep the even
           channels then the odd ones (the even / odd lanes of vmullb / vmullt) */
        const int32_t slot = h.depthwise ? (oc & ~7) + ((oc & 1) ? 4 : 0) + ((oc & 7) >> 1) : oc;
        if (h.depthwise) {
            /* weights [KH][KW][C][1] as int8 (w - wzp), [C/8][tap][8] */
            int8_t *wd = (int8_t *)(d + h.off_w);
            for (int32_t t = 0; t < h.K; t++)
                wd[((size_t)(oc / 8) * (size_t)h.K + (size_t)t) * 8 + (size_t)(oc % 8)] =
                    (int8_t)(w[(size_t)t * (size_t)h.OC + (size_t)oc] - h.wzp);
            corr[slot] = b;
        } else {
            /* weights [OC][KH][KW][IC] as int8 in groups of 4 channels, chunks of 16 taps:
               [OC/4][K/16][4][16], zeros beyond K */
            int8_t *wd = (int8_t *)(d + h.off_w);
            int32_t sw = 0;
            for (int32_t k = 0; k < h.K; k++) {
                /* CONV2D [OC][KH][KW][IC]; MATMUL B [1][C][W] */
                const int8_t v = h.matmul ? w[(size_t)k * (size_t)h.OC + (size_t)oc] : w[(size_t)oc * (size_t)h.K + (size_t)k];
                wd[(((size_t)(oc / 4) * (size_t)nchunk + (size_t)(k / 16)) * 4 + (size_t)(oc % 4)) * 16 + (size_t)(k % 16)] = v;
                sw += v;
            }
            corr[slot] = b - h.izp * sw + h.K * h.izp * h.wzp;
        }
        if (h.epi) {
            const tosac_kcall *r = c->epi->rescale;
            int64_t j = r->in[1].nelem == 1 ? 0 : oc;
            mult[slot] = ((const int32_t *)r->in[1].data)[j];
            shift[slot] = (int8_t)(31 - ((const int8_t *)r->in[2].data)[j]); /* -(t + 1) */
        }
    }
    return true;
}

#ifdef __ARM_FEATURE_MVE

/* The fused RESCALE of 4 int32 lanes (file comment), + output_zp, clamped to [lo, hi]. */
__attribute__((always_inline)) static inline int32x4_t cmve_rq(int32x4_t v, int32x4_t m, int32x4_t sh, bool dbl,
                                                               int32_t ozp, int32x4_t lo, int32x4_t hi)
{
    int32x4_t q = dbl ? vaddq_s32(vqrdmulhq_s32(v, m), vshrq_n_s32(v, 31)) : vqdmulhq_s32(v, m);
    q = vaddq_n_s32(vrshlq_s32(q, sh), ozp);
    return vminq_s32(vmaxq_s32(q, lo), hi);
}

/* acc[0..n) through the fused epilogue (dbl, i8 constant in each expansion), full vectors first. */
__attribute__((always_inline)) static inline void cmve_rq_row(const int32_t *acc, const int32_t *mult,
                                                              const int8_t *shift, int32_t n, int32_t ozp,
                                                              int32x4_t lo, int32x4_t hi, void *out, const bool dbl,
                                                              const bool i8)
{
    int8_t *o8 = out;
    int16_t *o16 = out;
    const int32_t n4 = n & ~3;
    int32_t i = 0;
    for (; i < n4; i += 4) {
        const int32x4_t q = cmve_rq(vld1q_s32(acc + i), vld1q_s32(mult + i), vldrbq_s32(shift + i), dbl, ozp, lo, hi);
        if (i8)
            vstrbq_s32(o8 + i, q);
        else
            vstrhq_s32(o16 + i, q);
    }
    if (i < n) {
        const mve_pred16_t p = vctp32q((uint32_t)(n - i));
        const int32x4_t q = cmve_rq(vld1q_s32(acc + i), vld1q_s32(mult + i), vldrbq_s32(shift + i), dbl, ozp, lo, hi);
        if (i8)
            vstrbq_p_s32(o8 + i, q, p);
        else
            vstrhq_p_s32(o16 + i, q, p);
    }
}

/* acc[0..n) (int32: the sums with corr added) stored as int32, or through the fused epilogue as
   the epilogue output's int8 / int16, at element `off`. */
static tosac_status cmve_store(tosac_kcall *c, const cmve_hdr *h, const uint8_t *prep, int32_t *acc, int32_t n,
                               size_t off)
{
    /* the runtime runs the operators one by one when it observes them (tosac_program_set_op_callback):
       a call prepared with its epilogue may come without it (the reverse: tosac_conv_mve_run) */
    if (!c->epi) {
        int32_t *o = (int32_t *)c->out[0].data + off;
        for (int32_t i = 0; i < n; i += 4) vst1q_p_s32(o + i, vld1q_s32(acc + i), vctp32q((uint32_t)(n - i)));
        return TOSAC_OK;
    }
    const int32_t *mult = (const int32_t *)(const void *)(prep + h->off_mult);
    const int8_t *shift = (const int8_t *)(prep + h->off_shift);
    const tosac_ktensor *out = c->epi->out;
    const int32x4_t lo = vdupq_n_s32(c->epi->lo), hi = vdupq_n_s32(c->epi->hi);
    if (out->dtype == TOSAC_DTYPE_INT8) {
        int8_t *o = (int8_t *)out->data + off;
        if (h->dbl)
            cmve_rq_row(acc, mult, shift, n, h->ozp, lo, hi, o, true, true);
        else
            cmve_rq_row(acc, mult, shift, n, h->ozp, lo, hi, o, false, true);
    } else {
        int16_t *o = (int16_t *)out->data + off;
        if (h->dbl)
            cmve_rq_row(acc, mult, shift, n, h->ozp, lo, hi, o, true, false);
        else
            cmve_rq_row(acc, mult, shift, n, h->ozp, lo, hi, o, false, false);
    }
    return TOSAC_OK;
}

static void cmve_copy(int8_t *d, const int8_t *s, int32_t m)
{
    for (int32_t i = 0; i < m; i += 16) {
        const mve_pred16_t p = vctp8q((uint32_t)(m - i));
        vst1q_p_s8(d + i, vld1q_z_s8(s + i, p), p);
    }
}
static void cmve_fill(int8_t *d, int8x16_t v, int32_t m)
{
    for (int32_t i = 0; i < m; i += 16) vst1q_p_s8(d + i, v, vctp8q((uint32_t)(m - i)));
}

/* Gathers the int8 patch of output pixel (n, oy, ox): taps (ky, kx, ic), izp where padded. */
static void cmve_patch(const cmve_hdr *h, const int8_t *x, int32_t n, int32_t oy, int32_t ox, int8_t *patch)
{
    const int32_t IC = h->IC, KW = h->KW;
    const int8x16_t zp = vdupq_n_s8((int8_t)h->izp);
    const int32_t ix0 = ox * h->sx - h->pl;
    /* valid taps kx0 <= kx < kx1 of a row */
    int32_t kx0 = 0, kx1 = KW;
    while (kx0 < kx1 && ix0 + kx0 * h->dx < 0) kx0++;
    while (kx1 > kx0 && ix0 + (kx1 - 1) * h->dx >= h->IW) kx1--;
    int8_t *d = patch;
    for (int32_t ky = 0; ky < h->KH; ky++, d += KW * IC) {
        const int32_t iy = oy * h->sy - h->pt + ky * h->dy;
        if (iy < 0 || iy >= h->IH) {
            cmve_fill(d, zp, KW * IC);
            continue;
        }
        const int8_t *row = x + ((size_t)n * (size_t)h->IH + (size_t)iy) * (size_t)h->IW * (size_t)IC;
        if (kx0 > 0) cmve_fill(d, zp, kx0 * IC);
        if (h->dx == 1) /* the valid taps are contiguous in the input */
            cmve_copy(d + kx0 * IC, row + (size_t)(ix0 + kx0) * (size_t)IC, (kx1 - kx0) * IC);
        else
            for (int32_t kx = kx0; kx < kx1; kx++)
                cmve_copy(d + kx * IC, row + (size_t)(ix0 + kx * h->dx) * (size_t)IC, IC);
        if (kx1 < KW) cmve_fill(d + kx1 * IC, zp, (KW - kx1) * IC);
    }
}

/* The patch of an interior pixel (no padding tap) whose rows of taps are contiguous runs of seg
   bytes (dilation 1 along x): full vectors, then one predicated copy (ptail) per row. */
static void cmve_patch_rows(const cmve_hdr *h, const int8_t *x, int32_t n, int32_t iy0, int32_t ix0, int8_t *patch,
                            mve_pred16_t ptail)
{
    const int32_t seg = h->KW * h->IC, full = (seg - 1) / 16;
    const size_t rs = (size_t)h->dy * (size_t)h->IW * (size_t)h->IC;
    const int8_t *src = x + (((size_t)n * (size_t)h->IH + (size_t)iy0) * (size_t)h->IW + (size_t)ix0) * (size_t)h->IC;
    for (int32_t ky = 0; ky < h->KH; ky++, src += rs, patch += seg) {
        for (int32_t i = 0; i < full; i++) vst1q_s8(patch + 16 * i, vld1q_s8(src + 16 * i));
        vstrbq_p_s8(patch + 16 * full, vld1q_z_s8(src + 16 * full, ptail), ptail);
    }
}

/* The patch of output pixel `pix` (flat over N, OH, OW) into `patch`. */
static void cmve_gather(const cmve_hdr *h, const int8_t *x, int32_t pix, int8_t *patch)
{
    const int32_t hw = h->OH * h->OW, n = pix / hw, oy = pix % hw / h->OW, ox = pix % h->OW;
    const int32_t iy0 = oy * h->sy - h->pt, ix0 = ox * h->sx - h->pl, seg = h->KW * h->IC;
    if (h->dx == 1 && iy0 >= 0 && iy0 + (h->KH - 1) * h->dy < h->IH && ix0 >= 0 && ix0 + h->KW <= h->IW)
        cmve_patch_rows(h, x, n, iy0, ix0, patch, vctp8q((uint32_t)(seg - (seg - 1) / 16 * 16)));
    else
        cmve_patch(h, x, n, oy, ox, patch);
}

/* -wzp * sum_k x[k] (the weight zero point's term of the file comment) */
static int32_t cmve_wzp_term(const cmve_hdr *h, const int8_t *x)
{
    if (!h->wzp) return 0;
    int32_t sx = 0;
    for (int32_t k = 0; k < h->K; k += 16) {
        const mve_pred16_t p = vctp8q((uint32_t)(h->K - k));
        sx = vaddvaq_p_s8(sx, vld1q_z_s8(x + k, p), p);
    }
    return -h->wzp * sx;
}

/*
 * Interleaves the patches of two pixels for cmve_dot2: [K/16][pixel][16], zero beyond K (the
 * weights are zero there too, so the dot products need no predication).
 */
static void cmve_interleave(const int8_t *x0, const int8_t *x1, int32_t K, int8_t *ip)
{
    for (int32_t k = 0; k < K; k += 16, ip += 32) {
        const mve_pred16_t p = vctp8q((uint32_t)(K - k));
        vst1q_s8(ip, vld1q_z_s8(x0 + k, p));
        vst1q_s8(ip + 16, vld1q_z_s8(x1 + k, p));
    }
}

/*
 * Two output pixels (interleaved patches ip) against every group of 4 weight rows: acc0 / acc1[oc]
 * = corr[oc] + adj + sum_k x[k] w[oc][k]. Per 16 taps: 2 patch loads and 4 weight loads from two
 * pointers (patches and groups are interleaved), 8 vmladava.
 */
__attribute__((noinline)) static void cmve_dot2(const cmve_hdr *h, const int8_t *ip, const int8_t *w, const int32_t *corr, int32_t adj0,
                      int32_t adj1, int32_t *acc0, int32_t *acc1)
{
    const int32_t nc = h->ks / 16;
    for (int32_t oc = 0; oc < h->OCp; oc += 4) {
        /* vmladava accumulates into even registers only (r0, r2, ..., r14): GCC cannot keep 8
           accumulators there and spills in the loop, so the loop is written out, with the
           accumulators pinned: 16 instructions per 128 multiply-accumulates */
        register int32_t a0 __asm("r0") = corr[oc] + adj0, a1 __asm("r2") = corr[oc + 1] + adj0;
        register int32_t a2 __asm("r4") = corr[oc + 2] + adj0, a3 __asm("r6") = corr[oc + 3] + adj0;
        register int32_t b0 __asm("r8") = corr[oc] + adj1, b1 __asm("r10") = corr[oc + 1] + adj1;
        register int32_t b2 __asm("r12") = corr[oc + 2] + adj1, b3 __asm("lr") = corr[oc + 3] + adj1;
        register const int8_t *p __asm("r1") = ip;
        register const int8_t *wp __asm("r3") = w;
        register int32_t n __asm("r5") = nc;
        __asm volatile("1:\n"
                       "vldrb.8 q1, [%[p], #16]\n"
                       "vldrb.8 q0, [%[p]], #32\n"
                       "vldrb.8 q2, [%[w]]\n"
                       "vldrb.8 q3, [%[w], #16]\n"
                       "vmladava.s8 %[a0], q0, q2\n"
                       "vmladava.s8 %[b0], q1, q2\n"
                       "vldrb.8 q2, [%[w], #32]\n"
                       "vmladava.s8 %[a1], q0, q3\n"
                       "vmladava.s8 %[b1], q1, q3\n"
                       "vldrb.8 q3, [%[w], #48]\n"
                       "vmladava.s8 %[a2], q0, q2\n"
                       "vmladava.s8 %[b2], q1, q2\n"
                       "adds %[w], #64\n"
                       "vmladava.s8 %[a3], q0, q3\n"
                       "vmladava.s8 %[b3], q1, q3\n"
                       "subs %[n], #1\n"
                       "bne 1b\n"
                       : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [b0] "+r"(b0), [b1] "+r"(b1),
                         [b2] "+r"(b2), [b3] "+r"(b3), [p] "+r"(p), [w] "+r"(wp), [n] "+r"(n)
                       :
                       : "q0", "q1", "q2", "q3", "cc", "memory");
        w = wp;
        acc0[oc] = a0, acc0[oc + 1] = a1, acc0[oc + 2] = a2, acc0[oc + 3] = a3;
        acc1[oc] = b0, acc1[oc + 1] = b1, acc1[oc + 2] = b2, acc1[oc + 3] = b3;
    }
}

/*
 * One output pixel (patch x, zero or anything multiplied by zero weights up to ks) against every
 * group of 4 weight rows: acc[oc] = corr[oc] + adj + sum_k x[k] w[oc][k]. Per 16 taps: 1 patch
 * load, 4 weight loads, 4 vmladava.
 */
__attribute__((noinline)) static void cmve_dot1(const cmve_hdr *h, const int8_t *x, const int8_t *w, const int32_t *corr,
                                                int32_t adj, int32_t *acc)
{
    const int32_t nc = h->ks / 16;
    for (int32_t oc = 0; oc < h->OCp; oc += 4) {
        /* (accumulators in even registers, as cmve_dot2) */
        register int32_t a0 __asm("r0") = corr[oc] + adj, a1 __asm("r2") = corr[oc + 1] + adj;
        register int32_t a2 __asm("r4") = corr[oc + 2] + adj, a3 __asm("r6") = corr[oc + 3] + adj;
        register const int8_t *p __asm("r1") = x;
        register const int8_t *wp __asm("r3") = w;
        register int32_t n __asm("r5") = nc;
        __asm volatile("1:\n"
                       "vldrb.8 q0, [%[p]], #16\n"
                       "vldrb.8 q2, [%[w]]\n"
                       "vldrb.8 q3, [%[w], #16]\n"
                       "vmladava.s8 %[a0], q0, q2\n"
                       "vldrb.8 q2, [%[w], #32]\n"
                       "vmladava.s8 %[a1], q0, q3\n"
                       "vldrb.8 q3, [%[w], #48]\n"
                       "vmladava.s8 %[a2], q0, q2\n"
                       "adds %[w], #64\n"
                       "vmladava.s8 %[a3], q0, q3\n"
                       "subs %[n], #1\n"
                       "bne 1b\n"
                       : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [p] "+r"(p), [w] "+r"(wp),
                         [n] "+r"(n)
                       :
                       : "q0", "q2", "q3", "cc", "memory");
        w = wp;
        acc[oc] = a0, acc[oc + 1] = a1, acc[oc + 2] = a2, acc[oc + 3] = a3;
    }
}

static tosac_status cmve_conv(tosac_kcall *c, const cmve_hdr *h)
{
    const uint8_t *prep = c->prep;
    const int8_t *x = (const int8_t *)c->in[0].data, *w = (const int8_t *)(const void *)(prep + h->off_w);
    const int32_t *corr = (const int32_t *)(const void *)(prep + h->off_corr);
    const bool rows = cmve_rows(h);
    const int32_t npix = h->N * h->OH * h->OW;
    if (npix == 1) { /* the scratch of cmve_plan: the result row, then the patch if gathered */
        int32_t *acc = c->scratch;
        const int8_t *r = x;
        if (!rows || h->K % 16) {
            int8_t *patch = (int8_t *)c->scratch + align16((size_t)h->OCp * 4);
            cmve_fill(patch, vdupq_n_s8(0), h->ks);
            if (rows)
                cmve_copy(patch, x, h->K);
            else
                cmve_gather(h, x, 0, patch);
            r = patch;
        }
        cmve_dot1(h, r, w, corr, cmve_wzp_term(h, r), acc);
        return cmve_store(c, h, prep, acc, h->OC, 0);
    }
    int8_t *patch0 = c->scratch, *patch1 = patch0 + align16((size_t)h->ks), *ip = patch1 + align16((size_t)h->ks);
    int32_t *acc0 = (int32_t *)(void *)(ip + 2 * align16((size_t)h->ks)), *acc1 = acc0 + h->OCp;
    for (int32_t pix = 0; pix < npix; pix += 2) {
        const int32_t q = pix + 1 < npix ? pix + 1 : pix; /* an odd last pixel is computed twice */
        const int8_t *r0 = x + (size_t)pix * (size_t)h->IC, *r1 = x + (size_t)q * (size_t)h->IC;
        if (!rows) {
            cmve_gather(h, x, pix, patch0);
            cmve_gather(h, x, q, patch1);
            r0 = patch0, r1 = patch1;
        }
        cmve_interleave(r0, r1, h->K, ip);
        cmve_dot2(h, ip, w, corr, cmve_wzp_term(h, r0), cmve_wzp_term(h, r1), acc0, acc1);
        tosac_status st = cmve_store(c, h, prep, acc0, h->OC, (size_t)pix * (size_t)h->OC);
        if (st == TOSAC_OK && q != pix) st = cmve_store(c, h, prep, acc1, h->OC, (size_t)q * (size_t)h->OC);
        if (st != TOSAC_OK) return st;
    }
    return TOSAC_OK;
}

/*
 * Depthwise, 8 channels per group: (x - izp) as int16 lanes times the weights (int8, widened by
 * the load), the even lanes' products (vmullb) and the odd lanes' (vmullt) summed in two int32
 * vectors over the valid taps; the prepared tables hold each group's even channels then its odd ones, and narrowing
 * (vmovnb / vmovnt) puts the results back in channel order.
 */
__attribute__((always_inline)) static inline void cmve_dw_taps(const int8_t *xr, const int8_t *wr, int32_t rows,
                                                               int32_t cols, size_t xrow, size_t xtap, int32_t wrow,
                                                               int16x8_t izp, mve_pred16_t p, bool tail,
                                                               int32x4_t *ae, int32x4_t *ao)
{
    int32x4_t e = *ae, o = *ao;
    if (!tail) {
        if (rows < 1 || cols < 1) return;
        /* every valid tap, 8 instructions per tap (GCC spilled izp and the strides in C) */
        const int8_t *x = xr;
        const int8_t *w = wr;
        const size_t xra = xrow - (size_t)cols * xtap, wra = (size_t)(wrow - cols * 8);
        int32_t r = rows;
        __asm volatile("1:\n"
                       "wls lr, %[n], 3f\n"
                       "2:\n"
                       "vldrb.s16 q0, [%[x]]\n"
                       "add %[x], %[xs]\n"
                       "vldrb.s16 q1, [%[w]], #8\n"
                       "vsub.i16 q0, q0, %q[z]\n"
                       "vmullb.s16 q2, q0, q1\n"
                       "vmullt.s16 q3, q0, q1\n"
                       "vadd.i32 %q[e], %q[e], q2\n"
                       "vadd.i32 %q[o], %q[o], q3\n"
                       "le lr, 2b\n"
                       "3:\n"
                       "add %[x], %[xra]\n"
                       "add %[w], %[wra]\n"
                       "subs %[r], #1\n"
                       "bne 1b\n"
                       : [e] "+w"(e), [o] "+w"(o), [x] "+l"(x), [w] "+l"(w), [r] "+r"(r)
                       : [n] "r"(cols), [xs] "r"(xtap), [z] "w"(izp), [xra] "r"(xra), [wra] "r"(wra)
                       : "q0", "q1", "q2", "q3", "lr", "cc", "memory");
        *ae = e, *ao = o;
        return;
    }
    for (int32_t ky = 0; ky < rows; ky++, xr += xrow, wr += wrow) {
        const int8_t *xt = xr;
        const int8_t *wt = wr;
        for (int32_t kx = 0; kx < cols; kx++, xt += xtap, wt += 8) {
            const int16x8_t xv = vsubq_s16(vldrbq_z_s16(xt, p), izp);
            const int16x8_t wv = vldrbq_s16(wt);
            e = vaddq_s32(e, vmullbq_int_s16(xv, wv));
            o = vaddq_s32(o, vmulltq_int_s16(xv, wv));
        }
    }
    *ae = e, *ao = o;
}

/* (epi, dbl, i8 are constants in each expansion: no branch on them per channel group) */
__attribute__((always_inline)) static inline void cmve_dw_impl(tosac_kcall *c, const cmve_hdr *h, const bool epi,
                                                               const bool dbl, const bool i8)
{
    const uint8_t *prep = c->prep;
    const int8_t *x = (const int8_t *)c->in[0].data;
    const int8_t *w = (const int8_t *)(prep + h->off_w);
    const int32_t *corr = (const int32_t *)(const void *)(prep + h->off_corr);
    const int32_t *mult = (const int32_t *)(const void *)(prep + h->off_mult);
    const int8_t *shift = (const int8_t *)(prep + h->off_shift);
    const int32_t C = h->IC, T = h->K, KW = h->KW;
    const int16x8_t izp = vdupq_n_s16((int16_t)h->izp);
    const int32_t ozp = h->ozp;
    const int32x4_t lo = vdupq_n_s32(epi ? c->epi->lo : 0), hi = vdupq_n_s32(epi ? c->epi->hi : 0);
    void *outp = epi ? c->epi->out->data : c->out[0].data;
    const size_t xrow = (size_t)h->dy * (size_t)h->IW * (size_t)C, xtap = (size_t)h->dx * (size_t)C;
    const uint32x4_t lane2 = vmulq_n_u32(vidupq_n_u32(0, 1), 2); /* 0, 2, 4, 6 */
    const int32x4_t slane2 = vreinterpretq_s32_u32(lane2);
    size_t pix = 0;
    for (int32_t n = 0; n < h->N; n++)
        for (int32_t oy = 0; oy < h->OH; oy++) {
            const int32_t iy0 = oy * h->sy - h->pt;
            int32_t ky0 = 0, ky1 = h->KH;
            while (ky0 < ky1 && iy0 + ky0 * h->dy < 0) ky0++;
            while (ky1 > ky0 && iy0 + (ky1 - 1) * h->dy >= h->IH) ky1--;
            for (int32_t ox = 0; ox < h->OW; ox++, pix++) {
                const int32_t ix0 = ox * h->sx - h->pl;
                int32_t kx0 = 0, kx1 = KW;
                while (kx0 < kx1 && ix0 + kx0 * h->dx < 0) kx0++;
                while (kx1 > kx0 && ix0 + (kx1 - 1) * h->dx >= h->IW) kx1--;
                const int8_t *xb = x + (((size_t)n * (size_t)h->IH + (size_t)(iy0 + ky0 * h->dy)) * (size_t)h->IW +
                                        (size_t)(ix0 + kx0 * h->dx)) * (size_t)C;
                const int32_t rows = ky1 - ky0, cols = kx1 - kx0, t0 = ky0 * KW + kx0;
                for (int32_t ch = 0; ch < C; ch += 8) {
                    const mve_pred16_t p = vctp16q((uint32_t)(C - ch));
                    int32x4_t ae = vld1q_s32(corr + ch), ao = vld1q_s32(corr + ch + 4);
                    const int8_t *wr = w + ((size_t)(ch / 8) * (size_t)T + (size_t)t0) * 8;
                    if (ch + 8 <= C)
                        cmve_dw_taps(xb + ch, wr, rows, cols, xrow, xtap, KW * 8, izp, p, false, &ae, &ao);
                    else
                        cmve_dw_taps(xb + ch, wr, rows, cols, xrow, xtap, KW * 8, izp, p, true, &ae, &ao);
                    const size_t o = pix * (size_t)C + (size_t)ch;
                    if (!epi) { /* int32 results: the even lanes to channels ch, ch + 2, ... */
                        const int32_t left = C - ch;
                        int32_t *o32 = (int32_t *)outp + o;
                        vstrwq_scatter_shifted_offset_p_s32(o32, lane2, ae, vcmpltq_n_s32(slane2, left));
                        vstrwq_scatter_shifted_offset_p_s32(o32 + 1, lane2, ao, vcmpltq_n_s32(vaddq_n_s32(slane2, 1), left));
                        continue;
                    }
                    const int32x4_t qe = cmve_rq(ae, vld1q_s32(mult + ch), vldrbq_s32(shift + ch), dbl, ozp, lo, hi);
                    const int32x4_t qo = cmve_rq(ao, vld1q_s32(mult + ch + 4), vldrbq_s32(shift + ch + 4), dbl, ozp, lo, hi);
                    int16x8_t r = vmovnbq_s32(vdupq_n_s16(0), qe);
                    r = vmovntq_s32(r, qo);
                    if (i8)
                        vstrbq_p_s16((int8_t *)outp + o, r, p);
                    else
                        vst1q_p_s16((int16_t *)outp + o, r, p);
                }
            }
        }
}

static tosac_status cmve_depthwise(tosac_kcall *c, const cmve_hdr *h)
{
    if (!c->epi) { /* int32 results (an epilogue prepared for may be absent: see cmve_store) */
        cmve_dw_impl(c, h, false, false, false);
        return TOSAC_OK;
    }
    const bool i8 = c->epi->out->dtype == TOSAC_DTYPE_INT8;
    if (h->dbl)
        i8 ? cmve_dw_impl(c, h, true, true, true) : cmve_dw_impl(c, h, true, true, false);
    else
        i8 ? cmve_dw_impl(c, h, true, false, true) : cmve_dw_impl(c, h, true, false, false);
    return TOSAC_OK;
}

/* The header of c's prepared bytes, NULL when they are not this file's layout. */
static const cmve_hdr *cmve_header(const tosac_kcall *c)
{
    const cmve_hdr *h = c->prep;
    return h && c->prep_size >= sizeof *h && h->magic == CMVE_MAGIC ? h : NULL;
}

bool tosac_conv_mve_run(tosac_kcall *c, tosac_status *st)
{
    const cmve_hdr *h = cmve_header(c);
    if (!h) return false;
    if (c->epi && !h->epi) {
        /* an epilogue not prepared for: the int32 results, then the portable epilogue over them */
        tosac_kcall u = *c;
        u.epi = NULL;
        *st = h->depthwise ? cmve_depthwise(&u, h) : cmve_conv(&u, h);
        if (*st == TOSAC_OK) *st = tosac_epilogue_store(c, c->out[0].data, 0, c->out[0].nelem);
        c->why = u.why;
        return true;
    }
    *st = h->depthwise ? cmve_depthwise(c, h) : cmve_conv(c, h);
    return true;
}

/* The Helium-only entries (k_mve.h): one per kernel, so that an image links only those it calls,
   none of the portable epilogue (an owned call's epilogue is in its prepared bytes). */
tosac_status tosac_kernel_conv_mve(tosac_kcall *c)
{
    const cmve_hdr *h = cmve_header(c);
    return h && !h->depthwise && (!c->epi || h->epi)
               ? cmve_conv(c, h)
               : tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "conv: constants not prepared for Helium");
}

tosac_status tosac_kernel_depthwise_mve(tosac_kcall *c)
{
    const cmve_hdr *h = cmve_header(c);
    return h && h->depthwise && (!c->epi || h->epi)
               ? cmve_depthwise(c, h)
               : tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "DEPTHWISE_CONV2D: constants not prepared for Helium");
}

tosac_status tosac_kernel_matmul_mve(tosac_kcall *c)
{
    const cmve_hdr *h = cmve_header(c);
    return h && h->matmul && (!c->epi || h->epi)
               ? cmve_conv(c, h)
               : tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "MATMUL: constants not prepared for Helium");
}

#else

bool tosac_conv_mve_run(tosac_kcall *c, tosac_status *st)
{
    const cmve_hdr *h = c->prep;
    if (!h || c->prep_size < sizeof *h || h->magic != CMVE_MAGIC) return false;
    *st = tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "conv: constants prepared for Helium (MVE) on a build without it");
    return true;
}

static tosac_status cmve_entry(tosac_kcall *c)
{
    tosac_status st;
    return tosac_conv_mve_run(c, &st) ? st : tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "conv: constants not prepared for Helium");
}
tosac_status tosac_kernel_conv_mve(tosac_kcall *c) { return cmve_entry(c); }
tosac_status tosac_kernel_depthwise_mve(tosac_kcall *c) { return cmve_entry(c); }
tosac_status tosac_kernel_matmul_mve(tosac_kcall *c) { return cmve_entry(c); }

#endif

bool tosac_conv_mve_owns(const tosac_kcall *c)
{
    const cmve_hdr *h = c->prep;
    return h && c->prep_size >= sizeof *h && h->magic == CMVE_MAGIC;
}
