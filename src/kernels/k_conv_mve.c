/*
 * Helium kernels of the conv family (k_mve.h): int8 CONV2D (any kernel size, stride, dilation,
 * padding) and DEPTHWISE_CONV2D (multiplier 1) with int32 results, or with the fused RESCALE /
 * CLAMP epilogue (kernel.h: tosac_kepilogue) to int8 / int16.
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
 * with the weights prepared as int16 (w - wzp).
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
    int32_t depthwise;
    int32_t N, IH, IW, IC, OH, OW, OC, KH, KW, sy, sx, dy, dx, pt, pl;
    int32_t K, ks;   /* reduction length; weight row stride (K rounded up to 16) */
    int32_t OCp;     /* OC rounded up to 4 (conv) or 8 (depthwise) */
    int32_t izp, wzp;
    int32_t epi, dbl; /* a fused RESCALE (DOUBLE_ROUND or not) */
    int32_t ozp;
    uint32_t off_corr, off_mult, off_shift, off_w, total;
    uint32_t scratch; /* patch bytes (conv) */
} cmve_hdr;

static int32_t ceil_to(int32_t v, int32_t m) { return (v + m - 1) / m * m; }
static uint32_t align16(size_t v) { return (uint32_t)((v + 15u) & ~(size_t)15u); }
static int32_t dim(const tosac_ktensor *t, int32_t i) { return i < t->rank ? (int32_t)t->shape[i] : 1; }

/* The geometry, and whether the Helium kernel takes the call (see the file comment). */
static bool cmve_plan(const tosac_kcall *c, cmve_hdr *h)
{
    memset(h, 0, sizeof *h);
    if (c->op != TOSAC_OP_CONV2D && c->op != TOSAC_OP_DEPTHWISE_CONV2D) return false;
    if (c->n_in < 5 || c->n_out < 1) return false;
    const tosac_ktensor *in = &c->in[0], *w = &c->in[1], *bias = &c->in[2], *out = &c->out[0];
    if (in->dtype != TOSAC_DTYPE_INT8 || w->dtype != TOSAC_DTYPE_INT8 || out->dtype != TOSAC_DTYPE_INT32 ||
        bias->dtype != TOSAC_DTYPE_INT32 || in->rank != 4 || out->rank != 4 || w->rank != 4)
        return false;
    for (int i = 1; i < 5; i++)
        if (!c->in[i].constant || !c->in[i].data || c->in[i].nelem < 1) return false;
    const bool dw = c->op == TOSAC_OP_DEPTHWISE_CONV2D;
    h->depthwise = dw;
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
        h->K = h->KH * h->KW;
        h->OCp = ceil_to(h->OC, 8);
    } else {
        h->KH = dim(w, 1), h->KW = dim(w, 2);
        h->K = h->KH * h->KW * h->IC;
        h->OCp = ceil_to(h->OC, 4);
    }
    h->ks = ceil_to(h->K, 16);
    if (h->N * h->OH * h->OW * h->OC == 0 || h->K == 0) return false;
    h->izp = (int32_t)tosac_kload_int(&c->in[3], 0);
    h->wzp = (int32_t)tosac_kload_int(&c->in[4], 0);
    if (h->izp < -128 || h->izp > 127 || h->wzp < -128 || h->wzp > 127) return false;
    /* no accumulator or accumulator + bias beyond int32 (the portable kernel's REQUIRE) */
    int64_t bmax = 0;
    const int32_t *b = (const int32_t *)bias->data;
    for (int64_t i = 0; i < bias->nelem; i++) {
        int64_t v = b[i] < 0 ? -(int64_t)b[i] : b[i];
        if (v > bmax) bmax = v;
    }
    if ((int64_t)h->K * 65025 + bmax > INT32_MAX) return false;
    if (bias->nelem != 1 && bias->nelem != h->OC) return false;
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
    h->off_shift = (uint32_t)o, o += align16((size_t)h->OCp * 4);
    h->off_w = (uint32_t)o;
    o += dw ? align16((size_t)h->K * (size_t)h->OCp * 2) : align16((size_t)h->OCp * (size_t)h->ks);
    h->total = (uint32_t)o;
    h->scratch = (dw ? 0 : align16((size_t)h->ks)) + align16((size_t)h->OCp * 4); /* patch, int32 results */
    h->magic = CMVE_MAGIC;
    return true;
}

bool tosac_conv_mve_prepare(const tosac_kcall *c, tosac_kprep *sizes, void *dst)
{
    cmve_hdr h;
    if (!cmve_plan(c, &h)) return false;
    sizes->const_size = h.total;
    sizes->scratch_size = h.scratch;
    if (!dst) return true;
    uint8_t *d = dst;
    memset(d, 0, h.total);
    memcpy(d, &h, sizeof h);
    int32_t *corr = (int32_t *)(void *)(d + h.off_corr), *mult = (int32_t *)(void *)(d + h.off_mult);
    int32_t *shift = (int32_t *)(void *)(d + h.off_shift);
    const int8_t *w = (const int8_t *)c->in[1].data;
    const tosac_ktensor *bias = &c->in[2];
    for (int32_t oc = 0; oc < h.OC; oc++) {
        int32_t b = ((const int32_t *)bias->data)[bias->nelem == 1 ? 0 : oc];
        if (h.depthwise) {
            /* weights [KH][KW][C][1] as int16 (w - wzp), [tap][OCp] */
            int16_t *wd = (int16_t *)(void *)(d + h.off_w);
            for (int32_t t = 0; t < h.K; t++) wd[(size_t)t * (size_t)h.OCp + (size_t)oc] = (int16_t)(w[(size_t)t * (size_t)h.OC + (size_t)oc] - h.wzp);
            corr[oc] = b;
        } else {
            /* weights [OC][KH][KW][IC] as int8 rows of ks (zeros beyond K) */
            int8_t *wd = (int8_t *)(d + h.off_w) + (size_t)oc * (size_t)h.ks;
            int32_t sw = 0;
            for (int32_t k = 0; k < h.K; k++) wd[k] = w[(size_t)oc * (size_t)h.K + (size_t)k], sw += wd[k];
            corr[oc] = b - h.izp * sw + h.K * h.izp * h.wzp;
        }
        if (h.epi) {
            const tosac_kcall *r = c->epi->rescale;
            int64_t j = r->in[1].nelem == 1 ? 0 : oc;
            mult[oc] = ((const int32_t *)r->in[1].data)[j];
            shift[oc] = -(((const int8_t *)r->in[2].data)[j] - 31); /* -(t + 1) */
        }
    }
    return true;
}

#ifdef __ARM_FEATURE_MVE

/* acc[0..n) (int32, corr already added) through the fused RESCALE and clamp, stored as the
   epilogue output's int8 / int16 at element `off`. */
static void cmve_requant(const cmve_hdr *h, const int32_t *acc, const int32_t *mult, const int32_t *shift, int32_t n,
                         int32_t lo, int32_t hi, const tosac_ktensor *out, size_t off)
{
    const bool i8 = out->dtype == TOSAC_DTYPE_INT8;
    int8_t *o8 = (int8_t *)out->data + off;
    int16_t *o16 = (int16_t *)out->data + off;
    for (int32_t i = 0; i < n; i += 4) {
        mve_pred16_t p = vctp32q((uint32_t)(n - i));
        int32x4_t v = vld1q_s32(acc + i);
        int32x4_t q;
        if (h->dbl)
            q = vaddq_s32(vqrdmulhq_s32(v, vld1q_s32(mult + i)), vshrq_n_s32(v, 31));
        else
            q = vqdmulhq_s32(v, vld1q_s32(mult + i));
        q = vrshlq_s32(q, vld1q_s32(shift + i));
        q = vminq_s32(vmaxq_s32(vaddq_n_s32(q, h->ozp), vdupq_n_s32(lo)), vdupq_n_s32(hi));
        if (i8)
            vstrbq_p_s32(o8 + i, q, p);
        else
            vstrhq_p_s32(o16 + i, q, p);
    }
}

/* Stores n int32 results (acc + bias) or runs the fused epilogue on them. */
static void cmve_store(const tosac_kcall *c, const cmve_hdr *h, const uint8_t *prep, int32_t *acc, int32_t n,
                       size_t off)
{
    if (h->epi) {
        cmve_requant(h, acc, (const int32_t *)(const void *)(prep + h->off_mult),
                     (const int32_t *)(const void *)(prep + h->off_shift), n, c->epi->lo, c->epi->hi, c->epi->out, off);
    } else {
        int32_t *o = (int32_t *)c->out[0].data + off;
        for (int32_t i = 0; i < n; i += 4) vst1q_p_s32(o + i, vld1q_s32(acc + i), vctp32q((uint32_t)(n - i)));
    }
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
        cmve_fill(d, zp, kx0 * IC);
        if (h->dx == 1) /* the valid taps are contiguous in the input */
            cmve_copy(d + kx0 * IC, row + (size_t)(ix0 + kx0) * (size_t)IC, (kx1 - kx0) * IC);
        else
            for (int32_t kx = kx0; kx < kx1; kx++)
                cmve_copy(d + kx * IC, row + (size_t)(ix0 + kx * h->dx) * (size_t)IC, IC);
        cmve_fill(d + kx1 * IC, zp, (KW - kx1) * IC);
    }
}

/* acc[oc] = corr[oc] + sum_k patch[k] w[oc][k] - wzp sum_k patch[k], four weight rows at a time. */
static void cmve_dot(const cmve_hdr *h, const int8_t *patch, const int8_t *w, const int32_t *corr, int32_t *acc)
{
    const int32_t K = h->K, ks = h->ks, K16 = K & ~15;
    int32_t adj = 0;
    if (h->wzp) {
        int32_t sx = 0;
        for (int32_t k = 0; k < K; k += 16) {
            const mve_pred16_t p = vctp8q((uint32_t)(K - k));
            sx = vaddvaq_p_s8(sx, vld1q_z_s8(patch + k, p), p);
        }
        adj = -h->wzp * sx;
    }
    const mve_pred16_t pt = vctp8q((uint32_t)(K - K16));
    for (int32_t oc = 0; oc < h->OCp; oc += 4) {
        const int8_t *w0 = w + (size_t)oc * (size_t)ks, *w1 = w0 + ks, *w2 = w1 + ks, *w3 = w2 + ks;
        int32_t a0 = corr[oc] + adj, a1 = corr[oc + 1] + adj, a2 = corr[oc + 2] + adj, a3 = corr[oc + 3] + adj;
        for (int32_t k = 0; k < K16; k += 16) {
            const int8x16_t xv = vld1q_s8(patch + k);
            a0 = vmladavaq_s8(a0, xv, vld1q_s8(w0 + k));
            a1 = vmladavaq_s8(a1, xv, vld1q_s8(w1 + k));
            a2 = vmladavaq_s8(a2, xv, vld1q_s8(w2 + k));
            a3 = vmladavaq_s8(a3, xv, vld1q_s8(w3 + k));
        }
        if (K16 < K) { /* weight rows are zero beyond K: only the patch load is predicated */
            const int8x16_t xv = vld1q_z_s8(patch + K16, pt);
            a0 = vmladavaq_s8(a0, xv, vld1q_s8(w0 + K16));
            a1 = vmladavaq_s8(a1, xv, vld1q_s8(w1 + K16));
            a2 = vmladavaq_s8(a2, xv, vld1q_s8(w2 + K16));
            a3 = vmladavaq_s8(a3, xv, vld1q_s8(w3 + K16));
        }
        acc[oc] = a0, acc[oc + 1] = a1, acc[oc + 2] = a2, acc[oc + 3] = a3;
    }
}

static void cmve_conv(tosac_kcall *c, const cmve_hdr *h)
{
    const uint8_t *prep = c->prep;
    const int8_t *x = (const int8_t *)c->in[0].data, *w = (const int8_t *)(const void *)(prep + h->off_w);
    const int32_t *corr = (const int32_t *)(const void *)(prep + h->off_corr);
    int8_t *patch = c->scratch;
    int32_t *acc = (int32_t *)(void *)((uint8_t *)c->scratch + align16((size_t)h->ks));
    const bool rows = h->KH == 1 && h->KW == 1 && h->sy == 1 && h->sx == 1 && h->pt == 0 && h->pl == 0 &&
                      h->OH == h->IH && h->OW == h->IW;
    size_t pix = 0;
    for (int32_t n = 0; n < h->N; n++)
        for (int32_t oy = 0; oy < h->OH; oy++)
            for (int32_t ox = 0; ox < h->OW; ox++, pix++) {
                const int8_t *row = x + pix * (size_t)h->IC;
                if (!rows) cmve_patch(h, x, n, oy, ox, patch), row = patch;
                cmve_dot(h, row, w, corr, acc);
                cmve_store(c, h, prep, acc, h->OC, pix * (size_t)h->OC);
            }
}

/* Depthwise: 4 channels per vector over the valid taps; acc kept in registers per channel group. */
static void cmve_depthwise(tosac_kcall *c, const cmve_hdr *h, int32_t *acc)
{
    const uint8_t *prep = c->prep;
    const int8_t *x = (const int8_t *)c->in[0].data;
    const int16_t *w = (const int16_t *)(const void *)(prep + h->off_w);
    const int32_t *corr = (const int32_t *)(const void *)(prep + h->off_corr);
    const int32_t C = h->IC, Cp = h->OCp;
    const int32x4_t izp = vdupq_n_s32(h->izp);
    size_t pix = 0;
    for (int32_t n = 0; n < h->N; n++)
        for (int32_t oy = 0; oy < h->OH; oy++) {
            const int32_t iy0 = oy * h->sy - h->pt;
            int32_t ky0 = 0, ky1 = h->KH;
            while (ky0 < ky1 && iy0 + ky0 * h->dy < 0) ky0++;
            while (ky1 > ky0 && iy0 + (ky1 - 1) * h->dy >= h->IH) ky1--;
            for (int32_t ox = 0; ox < h->OW; ox++, pix++) {
                const int32_t ix0 = ox * h->sx - h->pl;
                int32_t kx0 = 0, kx1 = h->KW;
                while (kx0 < kx1 && ix0 + kx0 * h->dx < 0) kx0++;
                while (kx1 > kx0 && ix0 + (kx1 - 1) * h->dx >= h->IW) kx1--;
                const int8_t *xb = x + (((size_t)n * (size_t)h->IH + (size_t)(iy0 + ky0 * h->dy)) * (size_t)h->IW +
                                        (size_t)(ix0 + kx0 * h->dx)) * (size_t)C;
                const int16_t *wb = w + (size_t)(ky0 * h->KW + kx0) * (size_t)Cp;
                const size_t xrow = (size_t)h->dy * (size_t)h->IW * (size_t)C, xtap = (size_t)h->dx * (size_t)C;
                for (int32_t ch = 0; ch < C; ch += 4) {
                    const mve_pred16_t p = vctp32q((uint32_t)(C - ch));
                    int32x4_t a = vld1q_s32(corr + ch);
                    const int8_t *xr = xb + ch;
                    const int16_t *wr = wb + ch;
                    for (int32_t ky = ky0; ky < ky1; ky++, xr += xrow, wr += (size_t)h->KW * (size_t)Cp) {
                        const int8_t *xt = xr;
                        const int16_t *wt = wr;
                        for (int32_t kx = kx0; kx < kx1; kx++, xt += xtap, wt += Cp) {
                            const int32x4_t xv = vsubq_s32(vldrbq_z_s32(xt, p), izp);
                            a = vaddq_s32(a, vmulq_s32(xv, vldrhq_s32(wt)));
                        }
                    }
                    vst1q_s32(acc + ch, a);
                }
                cmve_store(c, h, prep, acc, C, pix * (size_t)C);
            }
        }
}

bool tosac_conv_mve_run(tosac_kcall *c, tosac_status *st)
{
    const cmve_hdr *h = c->prep;
    if (!h || c->prep_size < sizeof *h || h->magic != CMVE_MAGIC) return false;
    *st = TOSAC_OK;
    if (h->depthwise) {
        cmve_depthwise(c, h, c->scratch);
    } else {
        cmve_conv(c, h);
    }
    return true;
}

#else

bool tosac_conv_mve_run(tosac_kcall *c, tosac_status *st)
{
    const cmve_hdr *h = c->prep;
    if (!h || c->prep_size < sizeof *h || h->magic != CMVE_MAGIC) return false;
    *st = tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "conv: constants prepared for Helium (MVE) on a build without it");
    return true;
}

#endif
