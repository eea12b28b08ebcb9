/*
 * CONV2D, CONV3D, DEPTHWISE_CONV2D and TRANSPOSE_CONV2D for every type row.
 *
 * CONV2D is run as CONV3D with depth 1; TRANSPOSE_CONV2D is the same gather-form convolution with
 * its own tap mapping (output (oy, ox) takes weight (ky, kx) against input iy = (oy - out_pad_top -
 * ky) / stride_y when that divides exactly and lies inside). These three go through one path:
 * blocks of output pixels are gathered into patch rows (im2col, taps in the spec order kd, ky, kx,
 * ic) and multiplied with the weights by the GEMM micro-kernels of k_gemm.c (portable C, with
 * AVX2 / AVX-512 VNNI builds of the same code picked at run time on x86-64; identical results).
 * Bias is broadcast when it has one element. Scratch: converted weights, one patch block, the
 * block's accumulators, tap coordinates and mask (sizes from the shapes only).
 *
 * Arithmetic per row (acc_t of the spec):
 *   integer (i8 x i8, i8 x i4 -> i32; i16 x i8 -> i48): patch and weights hold (x - input_zp) and
 *     (w - weight_zp) as int16, padding taps hold 0 (they contribute nothing); sums are exact (int32
 *     partial sums over K chunks that cannot overflow, combined in int64). REQUIRE: the accumulator
 *     and acc + bias must fit acc_t (i32, or i48 = +-2^47), else UNPREDICTABLE (the reference model
 *     saturates i48 instead and does not detect i32 overflow).
 *   fp32 accumulation (fp32, fp16 and bf16 inputs): float sum from +0 in the spec order, one
 *     rounding per product and per addition; out = round_out(bias + acc) with the addition in float.
 *     This is the reference model's order and rounding. Padding taps are zeros in the patch, which
 *     adds +0 exactly; when a weight is inf or NaN (where 0 * w would be NaN) the direct path below
 *     skips padding taps instead, as the reference model does.
 *   fp16 accumulation (fp16 and fp8 inputs with acc_type FP16): every product and every running
 *     sum is rounded to fp16 (the reference model's float16 accumulator); out = round_out(bias +
 *     acc) in float. Direct path (padding taps skipped).
 *   precise mode (f64 tensors): everything in double in the same order.
 * DEPTHWISE_CONV2D runs by rows of output pixels on the row kernels (tosac_dw_row_f32 / _i8: fp32
 * with finite weights, int8 with int32 sums, any multiplier; tiles of pixels x a vector of
 * channels kept in registers over the taps), else as a direct loop vectorised across output
 * channels (taps in order ky, kx, padding taps skipped).
 */
#include <math.h>
#include <string.h>

#include "kernels/k_epilogue.h"
#include "kernels/k_gemm.h"
#include "kernels/k_idw_avx2.h"
#include "kernels/k_mve.h"
#include "kernels/k_winograd.h"
#include "kernels/kutil.h"

/* GCC vectorises the per-channel loops (unknown trip counts) only at -O3; results do not change. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

typedef enum { CK_INT, CK_F32, CK_F16ACC, CK_F64 } conv_kind;

typedef struct {
    uint32_t op;
    uint32_t isa;  /* c->isa: the variant of the row and GEMM kernels (k_gemm.h) */
    conv_kind kind;
    int64_t N, ID, IH, IW, IC, OD, OH, OW, OC;
    int64_t KD, KH, KW, T; /* taps T = KD * KH * KW */
    int64_t pd, pt, pl;    /* leading pads (TRANSPOSE_CONV2D: out_pad top/left) */
    int64_t sd, sy, sx, dd, dy, dx;
    int64_t M;     /* depthwise channel multiplier */
    int64_t K;     /* GEMM reduction length T * IC */
    int64_t chunk; /* integer: most K terms summed in int32 */
    int64_t pblk;  /* output pixels per patch block (depthwise: per call of the row kernels) */
    int64_t pblk1; /* the same on one worker (>= pblk): see conv_make_plan */
    int64_t dwrows; /* depthwise row kernels: whole output rows gathered per epilogue call */
    size_t off_dwp; /* depthwise row kernels: their patch (tosac_dw_patch_bytes) */
    bool idw;       /* int8 depthwise at AVX2 on tosac_idw_avx2_row: its packed weights at off_idw of
                       the prepared ones */
    size_t off_idw;
    /* scratch layout (byte offsets) */
    size_t off_w, off_patch, off_c, off_c64, off_coord, off_mask, total;
    size_t wbytes;  /* converted weights */
    bool wprep;     /* constant weights: converted once by prepare (conv_prep), not per run */
    bool panel;     /* integer GEMM on pair-interleaved panels (AVX-512 VNNI, or AVX2's tosac_igemm_avx2:
                       prepared weights) */
    bool fpanel;    /* fp32 GEMM on 64-column panels (AVX-512, AVX2; prepared weights) */
    bool bpanel;    /* int8: s8 x u8 panels (vpdpbusd; panel, int8 input, constant zero points, weight
                       zero point 0): patch rows of the input bytes */
    int64_t lda;    /* patch row stride: K, made even for the panels */
} conv_plan;

/* Prepared constants of the family: this header, then the converted weights at CONV_PREP_W. */
typedef struct conv_prep {
    uint32_t finite;  /* every weight is finite (the GEMM path may add padding taps' 0 * w) */
    uint32_t bias_in; /* s8 x u8 panels: the int32 bias is folded into the column corrections (no
                         sum + bias can overflow, so the REQUIRE needs no check) */
    uint32_t wino;    /* Winograd (k_winograd.h): the bytes at CONV_PREP_W are tosac_wino_prepare's */
    uint32_t iwino;   /* int8 Winograd (k_winograd.h): the bytes at CONV_PREP_W are tosac_iwino_prepare's */
} conv_prep;
/* (the weights are tosac_gemm_i16_panel's panels when conv_plan.panel, tosac_gemm_f32_panel's
   when conv_plan.fpanel, else conv_weights' form) */
#define CONV_PREP_W 64


static size_t work_size(conv_kind k)
{
    switch (k) {
    case CK_INT: return sizeof(int16_t);
    case CK_F64: return sizeof(double);
    default: return sizeof(float);
    }
}

static void conv_make_plan(const tosac_kcall *c, conv_plan *g)
{
    memset(g, 0, sizeof *g);
    g->isa = c->isa;
    const tosac_ktensor *in = &c->in[0], *w = &c->in[1], *out = &c->out[0];
    g->op = c->op;
    g->KD = 1, g->ID = 1, g->OD = 1, g->sd = 1, g->dd = 1, g->M = 1;
    g->sy = g->sx = g->dy = g->dx = 1;
    unsigned acc_id = 4;
    switch (c->op) {
    case TOSAC_OP_CONV3D:
        g->N = tosac_kdim(in, 0), g->ID = tosac_kdim(in, 1), g->IH = tosac_kdim(in, 2), g->IW = tosac_kdim(in, 3);
        g->IC = tosac_kdim(in, 4);
        g->OD = tosac_kdim(out, 1), g->OH = tosac_kdim(out, 2), g->OW = tosac_kdim(out, 3), g->OC = tosac_kdim(out, 4);
        g->KD = tosac_kdim(w, 1), g->KH = tosac_kdim(w, 2), g->KW = tosac_kdim(w, 3);
        g->pd = tosac_kattr_at(c, TOSAC_ATTR_CONV3D_pad, 0, 0);
        g->pt = tosac_kattr_at(c, TOSAC_ATTR_CONV3D_pad, 2, 0);
        g->pl = tosac_kattr_at(c, TOSAC_ATTR_CONV3D_pad, 4, 0);
        g->sd = tosac_kattr_at(c, TOSAC_ATTR_CONV3D_stride, 0, 1);
        g->sy = tosac_kattr_at(c, TOSAC_ATTR_CONV3D_stride, 1, 1);
        g->sx = tosac_kattr_at(c, TOSAC_ATTR_CONV3D_stride, 2, 1);
        g->dd = tosac_kattr_at(c, TOSAC_ATTR_CONV3D_dilation, 0, 1);
        g->dy = tosac_kattr_at(c, TOSAC_ATTR_CONV3D_dilation, 1, 1);
        g->dx = tosac_kattr_at(c, TOSAC_ATTR_CONV3D_dilation, 2, 1);
        acc_id = TOSAC_ATTR_CONV3D_acc_type;
        break;
    case TOSAC_OP_DEPTHWISE_CONV2D:
        g->N = tosac_kdim(in, 0), g->IH = tosac_kdim(in, 1), g->IW = tosac_kdim(in, 2), g->IC = tosac_kdim(in, 3);
        g->OH = tosac_kdim(out, 1), g->OW = tosac_kdim(out, 2), g->OC = tosac_kdim(out, 3);
        g->KH = tosac_kdim(w, 0), g->KW = tosac_kdim(w, 1), g->M = tosac_kdim(w, 3);
        g->pt = tosac_kattr_at(c, TOSAC_ATTR_DEPTHWISE_CONV2D_pad, 0, 0);
        g->pl = tosac_kattr_at(c, TOSAC_ATTR_DEPTHWISE_CONV2D_pad, 2, 0);
        g->sy = tosac_kattr_at(c, TOSAC_ATTR_DEPTHWISE_CONV2D_stride, 0, 1);
        g->sx = tosac_kattr_at(c, TOSAC_ATTR_DEPTHWISE_CONV2D_stride, 1, 1);
        g->dy = tosac_kattr_at(c, TOSAC_ATTR_DEPTHWISE_CONV2D_dilation, 0, 1);
        g->dx = tosac_kattr_at(c, TOSAC_ATTR_DEPTHWISE_CONV2D_dilation, 1, 1);
        acc_id = TOSAC_ATTR_DEPTHWISE_CONV2D_acc_type;
        break;
    case TOSAC_OP_TRANSPOSE_CONV2D:
        g->N = tosac_kdim(in, 0), g->IH = tosac_kdim(in, 1), g->IW = tosac_kdim(in, 2), g->IC = tosac_kdim(in, 3);
        g->OH = tosac_kdim(out, 1), g->OW = tosac_kdim(out, 2), g->OC = tosac_kdim(out, 3);
        g->KH = tosac_kdim(w, 1), g->KW = tosac_kdim(w, 2);
        g->pt = tosac_kattr_at(c, TOSAC_ATTR_TRANSPOSE_CONV2D_out_pad, 0, 0);
        g->pl = tosac_kattr_at(c, TOSAC_ATTR_TRANSPOSE_CONV2D_out_pad, 2, 0);
        g->sy = tosac_kattr_at(c, TOSAC_ATTR_TRANSPOSE_CONV2D_stride, 0, 1);
        g->sx = tosac_kattr_at(c, TOSAC_ATTR_TRANSPOSE_CONV2D_stride, 1, 1);
        acc_id = TOSAC_ATTR_TRANSPOSE_CONV2D_acc_type;
        break;
    default: /* CONV2D */
        g->N = tosac_kdim(in, 0), g->IH = tosac_kdim(in, 1), g->IW = tosac_kdim(in, 2), g->IC = tosac_kdim(in, 3);
        g->OH = tosac_kdim(out, 1), g->OW = tosac_kdim(out, 2), g->OC = tosac_kdim(out, 3);
        g->KH = tosac_kdim(w, 1), g->KW = tosac_kdim(w, 2);
        g->pt = tosac_kattr_at(c, TOSAC_ATTR_CONV2D_pad, 0, 0);
        g->pl = tosac_kattr_at(c, TOSAC_ATTR_CONV2D_pad, 2, 0);
        g->sy = tosac_kattr_at(c, TOSAC_ATTR_CONV2D_stride, 0, 1);
        g->sx = tosac_kattr_at(c, TOSAC_ATTR_CONV2D_stride, 1, 1);
        g->dy = tosac_kattr_at(c, TOSAC_ATTR_CONV2D_dilation, 0, 1);
        g->dx = tosac_kattr_at(c, TOSAC_ATTR_CONV2D_dilation, 1, 1);
        acc_id = TOSAC_ATTR_CONV2D_acc_type;
        break;
    }
    g->T = g->KD * g->KH * g->KW;
    g->K = g->T * g->IC;
    g->lda = g->K;

    if (in->f64)
        g->kind = CK_F64;
    else if (!tosac_dtype_is_float(in->dtype))
        g->kind = CK_INT;
    else {
        int64_t acc = tosac_kattr_int(c, acc_id, 0);
        if (acc == TOSAC_DTYPE_FP16)
            g->kind = CK_F16ACC;
        else if (acc == TOSAC_DTYPE_FP32)
            g->kind = CK_F32;
        else /* absent: the row's only choice (fp8 rows accumulate in fp16) */
            g->kind = (in->dtype == TOSAC_DTYPE_FP8E4M3 || in->dtype == TOSAC_DTYPE_FP8E5M2) ? CK_F16ACC : CK_F32;
    }
    if (g->kind == CK_INT) {
        int64_t mx = in->dtype == TOSAC_DTYPE_INT16 ? 32768 : 255;
        int64_t mw = w->dtype == TOSAC_DTYPE_INT4 ? 8 : 255;
        g->chunk = tosac_gemm_i32_chunk(mx * mw);
    }

    size_t es = work_size(g->kind);
    size_t o = 0;
    if (c->op == TOSAC_OP_DEPTHWISE_CONV2D) {
        /* weights [T][C*M], one converted input row [C], accumulators [pblk][C*M] (8 bytes each):
           with vector units a row of output pixels (up to 64 KB) per call of the row kernels, and
           as many whole rows as fit per epilogue (narrow rows: its per-call setup would dominate),
           else one pixel (the scratch of the microcontroller builds) */
        int64_t cm = g->IC * g->M;
        g->wbytes = (size_t)(g->T * cm) * es;
        g->wprep = w->constant && c->in[4].constant; /* the weight zero point goes in too */
        g->pblk = 1, g->dwrows = 1;
        if (c->isa == TOSAC_KISA_AVX2 || c->isa == TOSAC_KISA_AVX512) {
            int64_t px = (int64_t)(65536u / ((size_t)(cm > 0 ? cm : 1) * 8u));
            g->pblk = px < 1 ? 1 : px > g->OW ? (g->OW > 0 ? g->OW : 1) : px;
            if (g->pblk == g->OW && g->OW > 0) g->dwrows = (int64_t)((size_t)px / (size_t)g->OW); /* 32-bit clean */
        }
        g->idw = g->wprep && c->isa == TOSAC_KISA_AVX2 && g->kind == CK_INT && in->dtype == TOSAC_DTYPE_INT8 &&
                 tosac_idw_avx2_fits(g->IC, g->M, g->KH, g->KW, g->sx, g->dx);
        if (g->idw)
            g->off_idw = tosac_kalign64(g->wbytes), g->wbytes = g->off_idw + tosac_idw_avx2_pack_bytes(g->KH, g->KW, g->IC);
        if (!g->wprep) g->off_w = o, o += tosac_kalign64(g->wbytes);
        /* (the converted input row, or tosac_idw_avx2_row's scratch) */
        const size_t xb = (size_t)g->IC * es, ib = g->idw ? tosac_idw_avx2_scratch_bytes(g->KH, g->IC) : 0;
        g->off_patch = o, o += tosac_kalign64(xb > ib ? xb : ib);
        g->off_c = o, o += tosac_kalign64((size_t)(g->dwrows * g->pblk * cm) * 8u);
        g->off_dwp = o, o += tosac_kalign64(tosac_dw_patch_bytes(g->KH, g->KW, g->sx, g->dx));
        g->total = o;
        return;
    }
    int64_t npix = g->N * g->OD * g->OH * g->OW;
    int64_t pb = (int64_t)(262144u / ((size_t)(g->K > 0 ? g->K : 1) * es));
    if (pb > 60) pb = 60;
    if (pb >= 12) pb -= pb % 12; /* whole register tiles (4 or 6 rows) */
    if (pb < 6) pb = 6;
    const bool fp_isa = c->isa == TOSAC_KISA_AVX2 || c->isa >= TOSAC_KISA_AVX512;
    const bool fp_panels = w->constant && c->in[4].constant && g->kind == CK_F32 && fp_isa;
    if (fp_panels && npix > pb) {
        /* every block streams all the weights (from L3 or memory beyond 1 MB: the late layers), so
           no small last block (49 pixels in 12-pixel blocks left one of 1): as many blocks as
           whole ones fit, evened out and rounded up to whole 6-row tiles */
        const size_t nb = (size_t)npix / (size_t)pb;
        pb = (int64_t)(((size_t)npix + nb - 1u) / nb + 5u) / 6 * 6;
    }
    if (pb > npix) pb = npix > 0 ? npix : 1;
    g->pblk = pb;
    /* on one worker, weights beyond L2 (the late layers) and patch rows of all pixels within it:
       one block, so the weights stream from memory once (7x7x512 3x3: 49 pixels, not 3 blocks
       of 18); on more, pblk, the unit the column groups split (each group builds its patch) */
    const size_t l2 = 1048576u;
    g->pblk1 = fp_panels && (size_t)(g->K * g->OC) * es > l2 && (size_t)(npix * g->K) * es <= l2 ? npix : pb;
    size_t cs = g->kind == CK_INT ? sizeof(int32_t) : es;
    g->wbytes = (size_t)(g->K * g->OC) * es;
    g->wprep = w->constant && c->in[4].constant; /* the weight zero point goes in too */
    g->panel = g->wprep && g->kind == CK_INT && (c->isa >= TOSAC_KISA_AVX512 || c->isa == TOSAC_KISA_AVX2) &&
               g->K <= g->chunk && (w->dtype == TOSAC_DTYPE_INT8 || w->dtype == TOSAC_DTYPE_INT4) &&
               c->op != TOSAC_OP_TRANSPOSE_CONV2D;
    if (g->panel)
        g->wbytes = c->isa == TOSAC_KISA_AVX2 ? tosac_igemm_avx2_panel_bytes(g->OC, g->K)
                                               : tosac_gemm_i16_panel_bytes(g->OC, g->K),
        g->lda = g->K + (g->K & 1);
    g->bpanel = g->panel && c->isa != TOSAC_KISA_AVX2 && in->dtype == TOSAC_DTYPE_INT8 && c->in[3].constant && c->in[3].nelem >= 1 &&
                c->in[4].nelem >= 1 && tosac_kload_int(&c->in[4], 0) == 0;
    if (g->bpanel) g->wbytes = tosac_gemm_u8_panel_bytes(g->OC, g->K, g->KW * g->IC), g->lda = (g->K + 3) & ~(int64_t)3;
    g->fpanel = g->wprep && g->kind == CK_F32 && fp_isa;
    if (g->fpanel) g->wbytes = tosac_gemm_f32_panel_bytes(g->OC, g->K);
    if (!g->wprep) g->off_w = o, o += tosac_kalign64(g->wbytes);
    g->off_patch = o, o += tosac_kalign64((size_t)(g->pblk1 * g->lda) * es);
    g->off_c = o, o += tosac_kalign64((size_t)(g->pblk1 * g->OC) * cs);
    if (g->kind == CK_INT && g->K > g->chunk)
        g->off_c64 = o, o += tosac_kalign64((size_t)(pb * g->OC) * sizeof(int64_t));
    g->off_coord = o, o += tosac_kalign64((size_t)(g->KD + g->KH + g->KW) * sizeof(int64_t));
    g->off_mask = o, o += tosac_kalign64((size_t)g->T);
    g->total = o;
}

static bool conv_weights(const conv_plan *g, const tosac_kcall *c, void *wbuf, int32_t wzp);

/* Whether x[0, n) are all finite: the largest magnitude's bits below those of infinity (integer
   lanes, which compilers vectorise; a float compare per element with an early exit they do not). */
static bool all_finite_f32(const float *x, int64_t n)
{
    uint32_t mx = 0;
    for (int64_t i = 0; i < n; i++) {
        uint32_t b;
        memcpy(&b, x + i, sizeof b);
        b &= 0x7fffffffu;
        mx = b > mx ? b : mx;
    }
    return mx < 0x7f800000u;
}

/* Index of weight (k, oc) in the fp working weights ([K][OC], or the panels). */
static inline size_t wf_at(const conv_plan *g, int64_t k, int64_t oc)
{
    return g->fpanel ? tosac_gemm_f32_panel_at(g->OC, g->K, k, oc) : (size_t)(k * g->OC + oc);
}

tosac_status tosac_kernel_conv_prepare(const tosac_kcall *c, tosac_kprep *sizes, void *dst)
{
    sizes->const_size = sizes->scratch_size = 0;
    sizes->unread = 0;
    if (c->isa == TOSAC_KISA_MVE) {
        if (tosac_conv_mve_prepare(c, sizes, dst)) return TOSAC_OK;
        tosac_kcall p = *c; /* (no Winograd on microcontrollers: its weights take 16/9 the flash) */
        p.flags |= TOSAC_KCALL_CONV_DIRECT;
        return tosac_mve_portable_prepare(&p, sizes, dst, tosac_kernel_conv_prepare);
    }
    if (c->n_in < 5 || c->n_out < 1) return TOSAC_OK;
    if (tosac_wino_prepare(c, sizes, dst ? (uint8_t *)dst + CONV_PREP_W : NULL)) {
        sizes->const_size += CONV_PREP_W;
        if (dst) *(conv_prep *)dst = (conv_prep){.wino = 1};
        return TOSAC_OK;
    }
    if (tosac_iwino_prepare(c, sizes, dst ? (uint8_t *)dst + CONV_PREP_W : NULL)) {
        sizes->const_size += CONV_PREP_W;
        if (dst) *(conv_prep *)dst = (conv_prep){.iwino = 1};
        return TOSAC_OK;
    }
    conv_plan g;
    conv_make_plan(c, &g);
    sizes->scratch_size = g.total;
    if (!g.wprep) return TOSAC_OK;
    sizes->const_size = CONV_PREP_W + g.wbytes;
    sizes->unread = 1u << 1; /* the weights: conv_wbuf reads the prepared ones */
    if (!dst) return TOSAC_OK;
    /* a bad zero point is the run's to report (check_zps); the bytes are then unused */
    const tosac_ktensor *wzp = &c->in[4];
    int32_t zp = wzp->constant && wzp->nelem >= 1 ? (int32_t)tosac_kload_int(wzp, 0) : 0;
    conv_prep *h = dst;
    h->wino = 0, h->iwino = 0;
    if (g.bpanel) {
        int32_t izp = (int32_t)tosac_kload_int(&c->in[3], 0);
        /* |sum| <= K * 255 * 128 (|x - zp| <= 255, |w| <= 128): with the largest bias magnitude it
           fits int32, so the bias can be subtracted with the corrections */
        const tosac_ktensor *bias = &c->in[2];
        int64_t bmax = 0;
        if (bias->constant && bias->dtype == TOSAC_DTYPE_INT32 && bias->nelem >= 1)
            for (int64_t i = 0; i < bias->nelem; i++) {
                int64_t v = ((const int32_t *)bias->data)[i];
                bmax = v < 0 ? (-v > bmax ? -v : bmax) : (v > bmax ? v : bmax);
            }
        h->bias_in = bias->constant && bias->dtype == TOSAC_DTYPE_INT32 && bias->nelem >= 1 &&
                     g.K * 255 * 128 + bmax <= INT32_MAX;
        tosac_gemm_u8_pack_panel(g.OC, g.K, g.KW * g.IC, (const int8_t *)c->in[1].data, izp,
                                 h->bias_in ? (const int32_t *)bias->data : NULL, bias->nelem == 1 ? 0 : 1,
                                 (uint8_t *)dst + CONV_PREP_W);
        h->finite = 1;
        return TOSAC_OK;
    }
    if (g.panel && c->isa == TOSAC_KISA_AVX2) {
        tosac_igemm_avx2_pack(g.OC, g.K, (const int8_t *)c->in[1].data, zp, (int32_t *)(void *)((uint8_t *)dst + CONV_PREP_W));
        h->finite = 1;
        return TOSAC_OK;
    }
    if (g.panel) {
        tosac_gemm_i16_pack_panel(g.OC, g.K, (const int8_t *)c->in[1].data, g.K, 1, zp,
                                  (int32_t *)(void *)((uint8_t *)dst + CONV_PREP_W));
        h->finite = 1;
        return TOSAC_OK;
    }
    h->finite = conv_weights(&g, c, (uint8_t *)dst + CONV_PREP_W, zp);
    return TOSAC_OK;
}

/* The converted weights: prepared, or converted now into scratch. */
static const void *conv_wbuf(tosac_kcall *c, const conv_plan *g, int32_t wzp, bool *finite)
{
    if (g->wprep && c->prep) {
        *finite = ((const conv_prep *)c->prep)->finite != 0;
        return (const uint8_t *)c->prep + CONV_PREP_W;
    }
    void *w = (uint8_t *)c->scratch + g->off_w;
    *finite = conv_weights(g, c, w, wzp);
    return w;
}

/* ---- shared pieces ---------------------------------------------------------------------------- */

static tosac_status check_zps(tosac_kcall *c, int64_t *izp, int64_t *wzp)
{
    bool bad = false;
    *izp = tosac_kzp(&c->in[3], &bad);
    *wzp = tosac_kzp(&c->in[4], &bad);
    if (bad || (*izp != 0 && c->in[0].dtype != TOSAC_DTYPE_INT8))
        return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "input_zp must be 0 unless the input is i8");
    if (*wzp != 0 && c->in[1].dtype != TOSAC_DTYPE_INT8)
        return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "weight_zp must be 0 unless the weight is i8");
    return TOSAC_OK;
}

static bool acc_fits(const tosac_ktensor *out, int64_t v)
{
    if (out->dtype == TOSAC_DTYPE_INT48) return v >= -((int64_t)1 << 47) && v < ((int64_t)1 << 47);
    return v >= INT32_MIN && v <= INT32_MAX;
}

/*
 * Integer epilogue: out[i] = acc + bias[oc] for count outputs (a multiple of oc_n) starting at
 * output element o0; acc from int64 sums (acc64) or exact int32 sums (acc32). With a fused
 * epilogue (c->epi) the int32 results go through it instead (acc32, count elements, is
 * overwritten: when acc64 is given it may alias it, read before written at each index).
 */
static tosac_status int_store(tosac_kcall *c, int64_t o0, int64_t count, int64_t oc_n, const int64_t *acc64,
                              int32_t *acc32)
{
    const tosac_ktensor *out = &c->out[0], *bias = &c->in[2];
    bool bcast = bias->nelem == 1;
    if (out->dtype == TOSAC_DTYPE_INT32 && !acc64) {
        /* an exact int32 sum fits acc_t; only the bias addition can overflow (checked in the same
           pass: nothing else reads the results before the check) */
        const int32_t *b = (const int32_t *)bias->data;
        int32_t *o = c->epi ? acc32 : (int32_t *)out->data + o0;
        uint32_t bad = 0;
        /* 32-bit lanes only (GCC vectorises these, not int64 sums): the wrapped sum s overflowed
           iff its sign differs from both operands'; s is read back as int32 without an
           implementation-defined conversion */
#define K_ADD_BIAS(BJ)                                                                    \
    for (int64_t j = 0; j < oc_n; j++) {                                                  \
        const uint32_t x = (uint32_t)a[j], y = (uint32_t)(BJ), sum = x + y;               \
        bad |= ((x ^ sum) & (y ^ sum)) >> 31;                                             \
        d[j] = (int32_t)(sum & 0x7FFFFFFFu) + ((sum >> 31) ? INT32_MIN : 0);              \
    }
        for (int64_t i = 0; i < count; i += oc_n) {
            const int32_t *a = acc32 + i; /* may be d itself (fused epilogue: in place) */
            int32_t *d = o + i;
            if (bcast)
                K_ADD_BIAS(b[0])
            else
                K_ADD_BIAS(b[j])
        }
#undef K_ADD_BIAS
        if (bad) return tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE, "accumulator + bias overflows i32 (REQUIRE)");
        return c->epi ? tosac_epilogue_store(c, acc32, o0, count) : TOSAC_OK;
    }
    for (int64_t i = 0, oc = 0; i < count; i++, oc = oc + 1 == oc_n ? 0 : oc + 1) { /* oc = i % oc_n */
        int64_t a = acc64 ? acc64[i] : acc32[i];
        int64_t b = out->dtype == TOSAC_DTYPE_INT48 ? ((const int64_t *)bias->data)[bcast ? 0 : oc]
                                                    : ((const int32_t *)bias->data)[bcast ? 0 : oc];
        int64_t r = a + b;
        if (!acc_fits(out, a) || !acc_fits(out, r))
            return tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE, "accumulator overflows acc_t (REQUIRE)");
        if (c->epi)
            acc32[i] = (int32_t)r;
        else if (out->dtype == TOSAC_DTYPE_INT48)
            ((int64_t *)out->data)[o0 + i] = r;
        else
            ((int32_t *)out->data)[o0 + i] = (int32_t)r;
    }
    return c->epi ? tosac_epilogue_store(c, acc32, o0, count) : TOSAC_OK;
}

/* Bias as float (fp32 / fp16 / bf16 storage), broadcast when its length is 1. */
static float bias_f32(const tosac_ktensor *bias, int64_t oc)
{
    int64_t i = bias->nelem == 1 ? 0 : oc;
    switch (bias->dtype) {
    case TOSAC_DTYPE_FP32: return ((const float *)bias->data)[i];
    case TOSAC_DTYPE_FP16: return tosac_fp16_to_fp32(((const uint16_t *)bias->data)[i]);
    case TOSAC_DTYPE_BF16: return tosac_bf16_to_fp32(((const uint16_t *)bias->data)[i]);
    default: return (float)tosac_kload_fp(bias, i);
    }
}

/* Stores bias + acc (added in float, in place in acc) rounded once to the output type; with a
   fused CLAMP (epi) clamped and stored to the CLAMP's output instead. */
static void fp_store_f32(uint32_t isa, const tosac_ktensor *out, const tosac_ktensor *bias, int64_t o0,
                         int64_t count, int64_t oc_n, float *acc, const tosac_kepilogue *epi)
{
    const tosac_ktensor *dst = epi ? epi->out : out;
    if (bias->dtype == TOSAC_DTYPE_FP32 && !bias->f64 && dst->dtype == TOSAC_DTYPE_FP32 && !dst->f64) {
        /* the common case in one pass: the same additions and clamp (tosac_clamp_f32_row) */
        const tosac_gemm_epi ep = {(const float *)bias->data, bias->nelem == 1, epi != NULL, epi && epi->fignore,
                                   epi ? epi->flo : 0.0f, epi ? epi->fhi : 0.0f};
        tosac_gemm_bias_store_f32(isa, (float *)dst->data + o0, acc, count, oc_n, &ep);
        return;
    }
    if (bias->nelem == 1) {
        float b = bias_f32(bias, 0);
        for (int64_t i = 0; i < count; i++) acc[i] = b + acc[i];
    } else if (bias->dtype == TOSAC_DTYPE_FP32 && !bias->f64) {
        const float *b = (const float *)bias->data;
        for (int64_t i = 0; i < count; i += oc_n)
            for (int64_t j = 0; j < oc_n; j++) acc[i + j] = b[j] + acc[i + j];
    } else {
        for (int64_t i = 0, oc = 0; i < count; i++, oc = oc + 1 == oc_n ? 0 : oc + 1) /* oc = i % oc_n */
            acc[i] = bias_f32(bias, oc) + acc[i];
    }
    if (epi) {
        tosac_clamp_f32_row(acc, count, epi->flo, epi->fhi, epi->fignore);
        out = epi->out;
    }
    tosac_kstore_row_f32(out, o0, acc, count);
}

static void fp_store_f64(const tosac_ktensor *out, const tosac_ktensor *bias, int64_t o0, int64_t count,
                         int64_t oc_n, const double *acc)
{
    for (int64_t i = 0, oc = 0; i < count; i++, oc = oc + 1 == oc_n ? 0 : oc + 1) { /* oc = i % oc_n */
        double b = tosac_kload_fp(bias, bias->nelem == 1 ? 0 : oc);
        tosac_kstore_fp(out, o0 + i, b + acc[i]);
    }
}

/* ---- GEMM path: CONV2D, CONV3D, TRANSPOSE_CONV2D ----------------------------------------------- */

/*
 * Input coordinates of every kernel index for output pixel (od, oy, ox): -1 when the tap falls
 * outside the input (or, for the transposed convolution, between input samples).
 */
static void conv_coords(const conv_plan *g, int64_t od, int64_t oy, int64_t ox, int64_t *cd, int64_t *cy,
                        int64_t *cx)
{
    if (g->op == TOSAC_OP_TRANSPOSE_CONV2D) {
        cd[0] = 0;
        for (int64_t k = 0; k < g->KH; k++) {
            int64_t t = oy - g->pt - k;
            cy[k] = (t >= 0 && (size_t)t % (size_t)g->sy == 0 && (int64_t)((size_t)t / (size_t)g->sy) < g->IH)
                        ? (int64_t)((size_t)t / (size_t)g->sy)
                        : -1;
        }
        for (int64_t k = 0; k < g->KW; k++) {
            int64_t t = ox - g->pl - k;
            cx[k] = (t >= 0 && (size_t)t % (size_t)g->sx == 0 && (int64_t)((size_t)t / (size_t)g->sx) < g->IW)
                        ? (int64_t)((size_t)t / (size_t)g->sx)
                        : -1;
        }
        return;
    }
    for (int64_t k = 0; k < g->KD; k++) {
        int64_t t = od * g->sd - g->pd + k * g->dd;
        cd[k] = (t >= 0 && t < g->ID) ? t : -1;
    }
    for (int64_t k = 0; k < g->KH; k++) {
        int64_t t = oy * g->sy - g->pt + k * g->dy;
        cy[k] = (t >= 0 && t < g->IH) ? t : -1;
    }
    for (int64_t k = 0; k < g->KW; k++) {
        int64_t t = ox * g->sx - g->pl + k * g->dx;
        cx[k] = (t >= 0 && t < g->IW) ? t : -1;
    }
}

/* Converts n input elements from element src into working elements at d (patch row form). */
static void patch_copy(const conv_plan *g, const tosac_ktensor *in, void *d, int64_t src, int64_t n, int32_t izp)
{
    switch (g->kind) {
    case CK_INT:
        if (g->bpanel)
            memcpy(d, (const int8_t *)in->data + src, (size_t)n);
        else
            tosac_krow_i16(d, in, src, n, izp);
        break;
    case CK_F64: tosac_krow_f64(d, in, src, n); break;
    default: tosac_krow_f32(d, in, src, n); break;
    }
}

/* Fills n working elements of padding taps: 0, or the input zero point on s8 x u8 panels. */
static void patch_pad(const conv_plan *g, void *d, int64_t n, int32_t izp)
{
    if (g->bpanel)
        memset(d, (int)(uint8_t)izp, (size_t)n);
    else if (g->kind == CK_F64)
        for (int64_t i = 0; i < n; i++) ((double *)d)[i] = 0.0;
    else if (g->kind == CK_INT)
        memset(d, 0, (size_t)n * sizeof(int16_t));
    else
        for (int64_t i = 0; i < n; i++) ((float *)d)[i] = 0.0f;
}

/*
 * Gathers the patch row of output pixel `pix` (flat index over N, OD, OH, OW) into `row` (K working
 * elements, zero for invalid taps) and its tap mask (1 = inside) into `mask`. Kernel columns whose
 * inputs are consecutive columns (dilation 1) are converted in one run.
 */
static void conv_patch(const conv_plan *g, const tosac_kcall *c, int64_t pix, void *row, uint8_t *mask,
                       int64_t *coord, int32_t izp)
{
    size_t t = (size_t)pix; /* pixel indices fit size_t: native-width division on 32-bit targets */
    int64_t ox = (int64_t)(t % (size_t)g->OW);
    t /= (size_t)g->OW;
    int64_t oy = (int64_t)(t % (size_t)g->OH);
    t /= (size_t)g->OH;
    int64_t od = (int64_t)(t % (size_t)g->OD), n = (int64_t)(t / (size_t)g->OD);
    int64_t *cd = coord, *cy = coord + g->KD, *cx = cy + g->KH;
    conv_coords(g, od, oy, ox, cd, cy, cx);
    const tosac_ktensor *in = &c->in[0];
    const size_t es = g->bpanel ? 1u : work_size(g->kind);
    int64_t IC = g->IC, tap = 0;
    for (int64_t kd = 0; kd < g->KD; kd++)
        for (int64_t ky = 0; ky < g->KH; ky++) {
            const bool rowok = cd[kd] >= 0 && cy[ky] >= 0;
            const int64_t base = rowok ? ((n * g->ID + cd[kd]) * g->IH + cy[ky]) * g->IW : 0;
            for (int64_t kx = 0; kx < g->KW;) {
                uint8_t *d = (uint8_t *)row + (size_t)(tap * IC) * es;
                if (!rowok || cx[kx] < 0) {
                    mask[tap++] = 0;
                    patch_pad(g, d, IC, izp);
                    kx++;
                    continue;
                }
                int64_t e = kx + 1;
                while (e < g->KW && cx[e] == cx[e - 1] + 1) e++;
                for (int64_t k = kx; k < e; k++) mask[tap++] = 1;
                patch_copy(g, in, d, (base + cx[kx]) * IC, (e - kx) * IC, izp);
                kx = e;
            }
        }
}

/* n bytes from s to d: runs of 8 to 128 bytes (a stem's kernel row: 9 to 21 floats) as 8- or
   16-byte pieces from both ends (overlapping in the middle) held in registers; a memcpy call per run,
   or fixed-size copies through the stack, made im2col most of a stem's time. Runs of up to 512
   bytes (3 x 16 to 3 x 42 floats: resnet8, squeezenet's fire modules) as 128-byte pieces, the last
   one ending at n. No loops: a compiler turns a copy loop back into a memcpy call. */
typedef uint8_t conv_v16 __attribute__((vector_size(16)));
#define CR_LD(v, off)                                                                                    \
    conv_v16 v;                                                                                          \
    memcpy(&v, s + (off), 16)
#define CR_ST(v, off) memcpy(d + (off), &v, 16)
static inline void copy_run_128(uint8_t *restrict d, const uint8_t *restrict s, size_t n)
{
    if (n < 8 || n > 128) {
        memcpy(d, s, n);
    } else if (n < 16) {
        uint64_t a, b;
        memcpy(&a, s, 8), memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8), memcpy(d + n - 8, &b, 8);
    } else if (n <= 32) {
        CR_LD(a, 0);
        CR_LD(b, n - 16);
        CR_ST(a, 0), CR_ST(b, n - 16);
    } else if (n <= 64) {
        CR_LD(a, 0);
        CR_LD(b, 16);
        CR_LD(e, n - 32);
        CR_LD(f, n - 16);
        CR_ST(a, 0), CR_ST(b, 16), CR_ST(e, n - 32), CR_ST(f, n - 16);
    } else {
        CR_LD(a, 0);
        CR_LD(b, 16);
        CR_LD(e, 32);
        CR_LD(f, 48);
        CR_LD(g, n - 64);
        CR_LD(h, n - 48);
        CR_LD(x, n - 32);
        CR_LD(y, n - 16);
        CR_ST(a, 0), CR_ST(b, 16), CR_ST(e, 32), CR_ST(f, 48);
        CR_ST(g, n - 64), CR_ST(h, n - 48), CR_ST(x, n - 32), CR_ST(y, n - 16);
    }
}
#undef CR_LD
#undef CR_ST
static inline void copy_run(uint8_t *restrict d, const uint8_t *restrict s, size_t n)
{
    if (n <= 128 || n > 512) {
        copy_run_128(d, s, n);
        return;
    }
    copy_run_128(d, s, 128);
    if (n > 256) copy_run_128(d + 128, s + 128, 128);
    if (n > 384) copy_run_128(d + 256, s + 256, 128);
    copy_run_128(d + n - 128, s + n - 128, 128);
}

/*
 * The patch rows of output pixels p0 .. p0 + pn - 1 into patch (rows lda working elements apart,
 * the elements beyond K zero). A pixel whose taps all lie inside the input (CONV2D / CONV3D,
 * dilation 1 along x) takes its KD x KH runs of KW * IC consecutive input elements without the
 * per-tap coordinates: on a stem (IC = 3, K = 27 or 147) those made im2col most of the time.
 */
static void conv_patch_block(const conv_plan *g, const tosac_kcall *c, int64_t p0, int64_t pn, uint8_t *patch,
                             uint8_t *mask, int64_t *coord, int32_t izp)
{
    const tosac_ktensor *in = &c->in[0];
    const size_t pes = g->bpanel ? 1u : work_size(g->kind); /* bytes per patch element */
    const bool same = g->bpanel || (g->kind == CK_F32 && in->dtype == TOSAC_DTYPE_FP32 && !in->f64);
    const bool fast = g->op != TOSAC_OP_TRANSPOSE_CONV2D && g->dx == 1;
    /* int8 runs into int16 patch rows shorter than tosac_krow_i16's vector loop pays off for: a
       stem's (IC = 3) runs of 9 or 21 elements inline, without the call and its type switch */
    const bool short_i8 = g->kind == CK_INT && !g->bpanel && in->dtype == TOSAC_DTYPE_INT8 && g->KW * g->IC < 32;
    /* the geometry in locals: the copies store through byte pointers, which may alias *g */
    const int64_t IC = g->IC, run = g->KW * IC, K = g->K, lda = g->lda;
    const int64_t ID = g->ID, IH = g->IH, IW = g->IW, OD = g->OD, OH = g->OH, OW = g->OW, KD = g->KD, KH = g->KH;
    const int64_t KW = g->KW;
    const int64_t sd = g->sd, sy = g->sy, sx = g->sx, dd = g->dd, dy = g->dy, pd = g->pd, pt = g->pt, pl = g->pl;
    const int64_t xlast = (g->KW - 1), ylast = (KH - 1) * dy, dlast = (KD - 1) * dd;
    const size_t runb = (size_t)run * pes, ystep = (size_t)(dy * IW * IC), dstep = (size_t)(dd * IH * IW * IC);
    size_t t = (size_t)p0; /* native-width division on 32-bit targets */
    int64_t ox = (int64_t)(t % (size_t)OW);
    t /= (size_t)OW;
    int64_t oy = (int64_t)(t % (size_t)OH);
    t /= (size_t)OH;
    int64_t od = (int64_t)(t % (size_t)OD), n = (int64_t)(t / (size_t)OD);
    for (int64_t i = 0; i < pn; i++) {
        uint8_t *prow = patch + (size_t)(i * lda) * pes;
        const int64_t id0 = od * sd - pd, iy0 = oy * sy - pt, ix0 = ox * sx - pl;
        if (fast && id0 >= 0 && id0 + dlast < ID && iy0 >= 0 && iy0 + ylast < IH && ix0 >= 0 && ix0 + xlast < IW) {
            uint8_t *d = prow;
            const size_t src0 = (size_t)((((n * ID + id0) * IH + iy0) * IW + ix0) * IC);
            for (int64_t kd = 0; kd < KD; kd++)
                for (int64_t ky = 0; ky < KH; ky++, d += runb) {
                    const size_t src = src0 + (size_t)kd * dstep + (size_t)ky * ystep;
                    if (same)
                        copy_run(d, (const uint8_t *)in->data + src * pes, runb);
                    else if (short_i8) /* a stem's few elements: no call, no type switch */
                        for (int64_t e = 0; e < run; e++)
                            ((int16_t *)(void *)d)[e] = (int16_t)(((const int8_t *)in->data)[src + (size_t)e] - izp);
                    else
                        patch_copy(g, in, d, (int64_t)src, run, izp);
                }
        } else if (fast && same) {
            /* a border pixel: per kernel row, the padding before and after one run of the columns
               inside the input (the mask is the direct path's, which never comes here) */
            const int pv = g->bpanel ? (int)(uint8_t)izp : 0; /* fp32 +0 is all zero bytes */
            const int64_t kxa = ix0 < 0 ? -ix0 : 0, kxe = IW - ix0 < KW ? IW - ix0 : KW;
            const size_t lead = (size_t)(kxa * IC) * pes, mid = kxe > kxa ? (size_t)((kxe - kxa) * IC) * pes : 0;
            uint8_t *d = prow;
            for (int64_t kd = 0; kd < KD; kd++)
                for (int64_t ky = 0; ky < KH; ky++, d += runb) {
                    const int64_t id = id0 + kd * dd, iy = iy0 + ky * dy;
                    if (id < 0 || id >= ID || iy < 0 || iy >= IH || !mid) {
                        memset(d, pv, runb);
                        continue;
                    }
                    const size_t src = (size_t)((((n * ID + id) * IH + iy) * IW + ix0 + kxa) * IC);
                    if (lead) memset(d, pv, lead);
                    copy_run(d + lead, (const uint8_t *)in->data + src * pes, mid);
                    if (lead + mid < runb) memset(d + lead + mid, pv, runb - lead - mid);
                }
        } else {
            conv_patch(g, c, p0 + i, prow, mask, coord, izp);
        }
        /* the panels' row length (a multiple of 2 or 4): weights 0 there */
        if (lda > K) memset(prow + (size_t)K * pes, 0, (size_t)(lda - K) * pes);
        if (++ox == OW) {
            ox = 0;
            if (++oy == OH) {
                oy = 0;
                if (++od == OD) od = 0, n++;
            }
        }
    }
}

/* Weights of the op as the working matrix: int16 [OC][K] (dot form) or fp [K][OC] (axpy form);
   depthwise [T][C*M]. Returns whether every weight is finite. */
static bool conv_weights(const conv_plan *g, const tosac_kcall *c, void *wbuf, int32_t wzp)
{
    const tosac_ktensor *w = &c->in[1];
    int64_t K = g->K, OC = g->OC;
    bool finite = true;
    if (g->op == TOSAC_OP_DEPTHWISE_CONV2D) {
        /* weights [KH][KW][C][M] are already [T][C*M] */
        int64_t n = g->T * g->IC * g->M;
        if (g->kind == CK_INT) {
            tosac_krow_i16((int16_t *)wbuf, w, 0, n, wzp);
            if (g->idw) tosac_idw_avx2_pack(g->KH, g->KW, g->IC, (const int16_t *)wbuf, (uint8_t *)wbuf + g->off_idw);
        } else if (g->kind == CK_F64)
            tosac_krow_f64((double *)wbuf, w, 0, n);
        else {
            /* the row kernels add padding taps (0 * w) when every weight is finite */
            tosac_krow_f32((float *)wbuf, w, 0, n);
            finite = all_finite_f32(wbuf, n);
        }
        return finite;
    }
    if (g->kind == CK_INT) {
        tosac_krow_i16((int16_t *)wbuf, w, 0, OC * K, wzp);
        return true;
    }
    if (g->kind == CK_F64) {
        double *d = (double *)wbuf, tmp[64];
        for (int64_t oc = 0; oc < OC; oc++)
            for (int64_t k0 = 0; k0 < K; k0 += 64) {
                int64_t m = K - k0 < 64 ? K - k0 : 64;
                tosac_krow_f64(tmp, w, oc * K + k0, m);
                for (int64_t i = 0; i < m; i++) {
                    double v = tmp[i];
                    if (v - v != 0.0) finite = false;
                    d[(k0 + i) * OC + oc] = v;
                }
            }
        return finite;
    }
    /* 16 output channels at a time, so that each k's stores fill 64-byte lines (two runs of 8:
       the panels are blocks of 64 columns, the last one rounded up to 8, so a run of 8 never
       leaves its block). The panels' columns beyond OC get the zero rows of the last run. */
    float *d = (float *)wbuf, tmp[16][64];
    for (int64_t oc0 = 0; oc0 < OC; oc0 += 16) {
        int64_t no = OC - oc0 < 16 ? OC - oc0 : 16;
        for (int64_t k0 = 0; k0 < K; k0 += 64) {
            int64_t m = K - k0 < 64 ? K - k0 : 64;
            for (int64_t o = 0; o < 16; o++) {
                if (o < no) {
                    tosac_krow_f32(tmp[o], w, (oc0 + o) * K + k0, m);
                    finite = all_finite_f32(tmp[o], m) && finite;
                } else {
                    memset(tmp[o], 0, (size_t)m * sizeof(float));
                }
            }
            for (int64_t h = 0; h < no; h += 8) {
                int64_t nw = g->fpanel ? 8 : (no - h < 8 ? no - h : 8);
                /* both layouts step by a fixed stride from k to k + 1 within a column */
                const size_t at = wf_at(g, k0, oc0 + h), st = wf_at(g, k0 + 1, oc0 + h) - at;
                for (int64_t i = 0; i < m; i++) {
                    float *run = d + at + (size_t)i * st;
                    for (int64_t o = 0; o < nw; o++) run[o] = tmp[h + o][i];
                }
            }
        }
    }
    return finite;
}

/*
 * Direct floating-point path for one patch row: skips padding taps; acc[oc] in the spec order
 * (taps, then ic) with the accumulation type's rounding, vectorised across output channels.
 */
static void conv_direct_f32(const conv_plan *g, const float *row, const uint8_t *mask, const float *wt, float *acc)
{
    int64_t IC = g->IC, OC = g->OC;
    bool f16 = g->kind == CK_F16ACC;
    for (int64_t oc = 0; oc < OC; oc++) acc[oc] = 0.0f;
    for (int64_t tap = 0; tap < g->T; tap++) {
        if (!mask[tap]) continue;
        for (int64_t i = 0; i < IC; i++) {
            float x = row[tap * IC + i];
            const float *w = wt + (tap * IC + i) * OC;
            if (f16) {
                tosac_axpy_f16acc(g->isa, acc, x, w, OC);
            } else if (g->fpanel) {
                for (int64_t oc = 0; oc < OC; oc++) {
                    float p = x * wt[wf_at(g, tap * IC + i, oc)];
                    acc[oc] = acc[oc] + p;
                }
            } else {
                for (int64_t oc = 0; oc < OC; oc++) {
                    float p = x * w[oc];
                    acc[oc] = acc[oc] + p;
                }
            }
        }
    }
}

static void conv_direct_f64(const conv_plan *g, const double *row, const uint8_t *mask, const double *wt,
                            double *acc)
{
    int64_t IC = g->IC, OC = g->OC;
    for (int64_t oc = 0; oc < OC; oc++) acc[oc] = 0.0;
    for (int64_t tap = 0; tap < g->T; tap++) {
        if (!mask[tap]) continue;
        for (int64_t i = 0; i < IC; i++) {
            double x = row[tap * IC + i];
            const double *w = wt + (tap * IC + i) * OC;
            for (int64_t oc = 0; oc < OC; oc++) {
                double p = x * w[oc];
                acc[oc] = acc[oc] + p;
            }
        }
    }
}

/* Blocks of output pixels as a parallel-for task (kernel.h): each range uses its worker's scratch. */
typedef struct conv_task {
    tosac_kcall *c;
    const conv_plan *g;
    int32_t izp;
    const void *wbuf;
    bool direct, pointwise, rows; /* rows: a 1x1 stride-1 unpadded convolution (patch = input rows) */
    bool fused;                   /* fp32 panels that add the bias, clamp and store the output (ep) */
    bool implicit;                /* fused CONV2D whose inside pixels read the input (conv_implicit) */
    int64_t xa, xb;               /* implicit: the output columns whose kernel columns all lie inside */
    bool u8cols;                  /* s8 x u8 panels with the bias in the sums: column groups possible */
    bool rqon;                    /* u8cols and the panels apply the fused RESCALE (rq) themselves */
    bool iend;                    /* AVX2 int16 panels (tosac_igemm_avx2) that add the int32 bias ... */
    bool irq;                     /* ... and apply the fused RESCALE (rq) */
    bool icols;                   /* iend storing the outputs themselves: column groups possible */
    tosac_gemm_rq rq;
    tosac_gemm_epi ep;
    int64_t pblk;   /* output pixels per block at most (the plan's, or whole output rows of it) */
    int64_t unit;   /* pixel blocks are whole units (register tiles' rows, or output rows) ... */
    size_t units, nblk; /* ... units of them spread evenly over nblk blocks (conv_span) */
    int64_t ng, gw; /* tasks per pixel block, each over gw output channels (a multiple of 64) */
    bool late_post; /* column groups with a tail: its rows run once every group has stored them */
    tosac_status st[TOSAC_KMAX_WORKERS]; /* each worker's first failure */
} conv_task;

/* Output channels j0 .. j0 + gw - 1 of pn fused rows from A (in segments sg, or the whole rows when
   NULL) on the fp32 panels into out. */
static void conv_fpanel_group(const conv_task *t, int64_t pn, const float *A, int64_t lda, float *out, int64_t j0,
                              const tosac_gemm_seg *sg, int64_t nsg)
{
    const conv_plan *g = t->g;
    const int64_t jn = g->OC - j0 < t->gw ? g->OC - j0 : t->gw;
    tosac_gemm_epi ep = t->ep;
    if (!ep.bcast) ep.bias += j0;
    const tosac_gemm_seg whole = {0, 0, g->K};
    /* the blocks before column j0 are whole (64 columns): its block starts j0 * K floats in */
    tosac_gemm_f32_panel_seg(g->isa, pn, jn, g->K, sg ? sg : &whole, sg ? nsg : 1, A, lda, (const float *)t->wbuf + j0 * g->K,
                             out + j0, g->OC, &ep);
}

/* conv_fpanel_group, or for int8 the s8 x u8 panels (into the outputs with the fused RESCALE, else
   int32 sums): rows in segments (kernel rows skipped as inputs equal to the zero point), or whole. */
static void conv_seg_group(const conv_task *t, int64_t pn, const void *A, int64_t lda, void *out, int64_t j0,
                           const tosac_gemm_seg *sg, int64_t nsg)
{
    const conv_plan *g = t->g;
    if (!g->bpanel) {
        conv_fpanel_group(t, pn, (const float *)A, lda, (float *)out, j0, sg, nsg);
        return;
    }
    const tosac_gemm_seg whole = {0, 0, g->K};
    tosac_gemm_u8_panel_seg(pn, g->OC, g->K, sg ? g->KW * g->IC : g->K, sg ? sg : &whole, sg ? nsg : 1,
                            (const int8_t *)A, lda, t->wbuf, out, g->OC, j0, j0 + t->gw, t->rqon ? &t->rq : NULL);
}

/*
 * Output pixels p0 .. p0 + pn - 1 (into out, es bytes an element) of a fused fp32 CONV2D, or an
 * int8 one on s8 x u8 panels, with dilation 1 along x, without im2col where it can: the pixels of
 * an output row whose kernel columns all lie inside the input (columns xa .. xb - 1) read it in
 * place, one segment per kernel row inside the input (its KW x IC consecutive elements; a row's
 * next pixel sx x IC elements on). Kernel rows in the padding are skipped, which gives the bits of
 * adding their 0 x w (fp32: finite weights, and a sum from +0 never becomes -0; int8: the panels
 * count them as zero-point inputs). With tmp, the border pixels of the whole block go through
 * patch rows together, into tmp and then to their places (one run of full-height tiles, not a
 * short tile per row end); without, each border run goes through patch rows on its own.
 */
static void conv_implicit(const conv_task *t, int64_t p0, int64_t pn, void *patch, uint8_t *mask, int64_t *coord,
                          void *out, size_t es, void *tmp, int64_t j0)
{
    const conv_plan *g = t->g;
    const tosac_kcall *c = t->c;
    const int64_t OW = g->OW, OH = g->OH, IC = g->IC, IH = g->IH, IW = g->IW, KH = g->KH, run = g->KW * IC;
    const int64_t xa = t->xa, xb = t->xb, lda = g->sx * IC, OC = g->OC;
    const size_t ies = g->bpanel ? 1u : sizeof(float); /* input and patch elements */
    size_t q = (size_t)p0; /* native-width division on 32-bit targets */
    int64_t ox = (int64_t)(q % (size_t)OW);
    q /= (size_t)OW;
    int64_t oy = (int64_t)(q % (size_t)OH), n = (int64_t)(q / (size_t)OH);
    int64_t nb = 0; /* border pixels gathered so far (patch rows) */
    for (int64_t i = 0; i < pn;) {
        const bool inside = ox >= xa && ox < xb;
        int64_t cnt = inside ? xb - ox : ox < xa ? xa - ox : OW - ox + xa;
        if (cnt > pn - i) cnt = pn - i;
        if (inside) {
            tosac_gemm_seg sg[TOSAC_GEMM_MAX_SEG];
            int64_t ns = 0;
            for (int64_t ky = 0; ky < KH; ky++) {
                const int64_t iy = oy * g->sy - g->pt + ky * g->dy;
                if (iy >= 0 && iy < IH) sg[ns++] = (tosac_gemm_seg){iy * IW * IC, ky * run, run};
            }
            const uint8_t *A = (const uint8_t *)c->in[0].data + (size_t)((n * IH * IW + ox * g->sx - g->pl) * IC) * ies;
            conv_seg_group(t, cnt, A, lda, (uint8_t *)out + (size_t)(i * OC) * es, j0, sg, ns);
        } else if (tmp) {
            conv_patch_block(g, c, p0 + i, cnt, (uint8_t *)patch + (size_t)(nb * g->lda) * ies, mask, coord, t->izp);
            nb += cnt;
        } else {
            conv_patch_block(g, c, p0 + i, cnt, patch, mask, coord, t->izp);
            conv_seg_group(t, cnt, patch, g->lda, (uint8_t *)out + (size_t)(i * OC) * es, j0, NULL, 0);
        }
        i += cnt, ox += cnt;
        while (ox >= OW) {
            ox -= OW;
            if (++oy == OH) oy = 0, n++;
        }
    }
    if (!nb) return;
    conv_seg_group(t, nb, patch, g->lda, tmp, j0, NULL, 0);
    /* the border pixels in the order gathered: the same walk once more */
    const int64_t jn = OC - j0 < t->gw ? OC - j0 : t->gw;
    ox = (int64_t)((size_t)p0 % (size_t)OW);
    for (int64_t i = 0, b = 0; i < pn; i++) {
        if (ox < xa || ox >= xb)
            memcpy((uint8_t *)out + (size_t)(i * OC + j0) * es, (uint8_t *)tmp + (size_t)((b++) * OC + j0) * es, (size_t)jn * es);
        if (++ox == OW) ox = 0;
    }
}

/* Pixels p0 .. p0 + pn - 1 of block blk: whole units spread evenly over the blocks (the last unit
   may be short), so that no block, and no worker's share, is left much smaller or larger. */
static void conv_span(const conv_task *t, size_t blk, int64_t npix, int64_t *p0, int64_t *pn)
{
    size_t u0, un;
    tosac_keven_part(t->units, t->nblk, blk, &u0, &un);
    const int64_t b = (int64_t)u0 * t->unit, e = (int64_t)(u0 + un) * t->unit;
    *p0 = b;
    *pn = (e < npix ? e : npix) - b;
}

static void conv_blocks(void *ctx, uint32_t worker, size_t b0, size_t b1)
{
    conv_task *t = ctx;
    tosac_kcall *c = t->c;
    const conv_plan *g = t->g;
    const void *wbuf = t->wbuf;
    const int32_t izp = t->izp;
    const bool direct = t->direct, pointwise = t->pointwise, rows = t->rows;
    uint8_t *sc = (uint8_t *)c->scratch + (size_t)worker * c->scratch_size;
    void *patch = sc + g->off_patch, *cbuf = sc + g->off_c;
    int64_t *coord = (int64_t *)(void *)(sc + g->off_coord);
    uint8_t *mask = sc + g->off_mask;
    int64_t K = g->K, OC = g->OC, npix = g->N * g->OD * g->OH * g->OW;

    for (size_t task = b0; task < b1 && t->st[worker] == TOSAC_OK; task++) {
        const size_t blk = task / (size_t)t->ng; /* 32-bit clean */
        const int64_t j0 = (int64_t)(task - blk * (size_t)t->ng) * t->gw;
        int64_t p0, pn;
        conv_span(t, blk, npix, &p0, &pn);
        const int64_t o0 = p0 * OC;
        float *fout = t->fused ? (float *)(c->epi ? c->epi->out : &c->out[0])->data + p0 * OC : (float *)cbuf;
        if (rows) tosac_epilogue_pre(c, worker, p0, pn); /* (input row p is output row p) */
        if (direct) {
            /* one pixel at a time, padding taps skipped */
            for (int64_t i = 0; i < pn; i++) {
                conv_patch(g, c, p0 + i, patch, mask, coord, izp);
                if (g->kind == CK_F64) {
                    conv_direct_f64(g, (const double *)patch, mask, (const double *)wbuf, (double *)cbuf + i * OC);
                } else {
                    conv_direct_f32(g, (const float *)patch, mask, (const float *)wbuf, (float *)cbuf + i * OC);
                }
            }
        } else if (pointwise) {
            /* a 1x1, stride 1, unpadded fp32 convolution is a GEMM on the input rows themselves */
            const float *xr = (const float *)c->in[0].data + p0 * K;
            if (t->fused)
                conv_fpanel_group(t, pn, xr, K, fout, j0, NULL, 0);
            else if (g->fpanel)
                tosac_gemm_f32_panel(g->isa, pn, OC, K, xr, K, (const float *)wbuf, fout, OC, NULL);
            else
                tosac_gemm_f32(g->isa, pn, OC, K, xr, K, (const float *)wbuf, OC, (float *)cbuf, OC);
        } else if (t->implicit && g->bpanel) { /* into the outputs (fused RESCALE) or the int32 sums */
            if (t->rqon) /* (the border pixels' results through cbuf, which holds pblk x OC int32) */
                conv_implicit(t, p0, pn, patch, mask, coord, (uint8_t *)c->epi->out->data + (size_t)o0 * t->rq.ob,
                              t->rq.ob, cbuf, j0);
            else
                conv_implicit(t, p0, pn, patch, mask, coord, cbuf, sizeof(int32_t), NULL, j0);
        } else if (t->implicit) {
            conv_implicit(t, p0, pn, patch, mask, coord, fout, sizeof(float), cbuf, j0);
        } else {
            const void *A = patch;
            if (rows && g->bpanel && g->lda == K) { /* the input rows are the patch rows */
                A = (const int8_t *)c->in[0].data + p0 * K;
            } else if (rows && g->kind == CK_INT && g->lda == K) { /* every pixel's row at once */
                tosac_krow_i16((int16_t *)patch, &c->in[0], p0 * K, pn * K, izp);
            } else {
                conv_patch_block(g, c, p0, pn, patch, mask, coord, izp);
            }
            if (t->rqon) { /* the fused RESCALE in the tiles: the outputs themselves */
                tosac_gemm_u8_panel(pn, OC, K, A, g->lda, wbuf, (uint8_t *)c->epi->out->data + (size_t)o0 * t->rq.ob,
                                    OC, j0, j0 + t->gw, &t->rq);
            } else if (g->bpanel && c->prep) {
                tosac_gemm_u8_panel(pn, OC, K, A, g->lda, wbuf, cbuf, OC, j0, j0 + t->gw, NULL);
            } else if (g->panel && c->prep && g->isa == TOSAC_KISA_AVX2) {
                /* the tiles end the sums: into the outputs (fused RESCALE, or int32 results without an
                   epilogue), else int32 results + bias into cbuf for the epilogue */
                const tosac_ktensor *bias = &c->in[2];
                const bool bc = bias->nelem == 1;
                void *dst = t->irq ? (void *)((uint8_t *)c->epi->out->data + (size_t)(o0 + j0) * t->rq.ob)
                            : t->iend && !c->epi ? (void *)((int32_t *)c->out[0].data + o0 + j0)
                                                 : cbuf;
                /* a column group (icols): its panel blocks of 16 columns, bias and RESCALE tables */
                const int64_t jn = OC - j0 < t->gw ? OC - j0 : t->gw;
                const tosac_gemm_rq rq = t->irq ? tosac_gemm_rq_from(t->rq, j0) : t->rq;
                if (tosac_igemm_avx2(pn, jn, K, (const int16_t *)patch, g->lda,
                                     (const int32_t *)(const void *)((const uint8_t *)wbuf +
                                                                     tosac_igemm_avx2_panel_bytes(j0, K)),
                                     dst, OC, t->iend ? (const int32_t *)bias->data + (bc ? 0 : j0) : NULL, bc,
                                     t->irq ? &rq : NULL)) {
                    t->st[worker] = tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE, "accumulator + bias overflows i32 (REQUIRE)");
                    continue;
                }
            } else if (g->panel && c->prep) {
                tosac_gemm_i16_panel(pn, OC, K, (const int16_t *)patch, g->lda, (const int32_t *)wbuf, (int32_t *)cbuf, OC);
            } else if (g->kind == CK_INT) {
                if (K <= g->chunk) {
                    tosac_gemm_i16(g->isa, pn, OC, K, (const int16_t *)patch, K, (const int16_t *)wbuf, K, (int32_t *)cbuf, OC);
                } else {
                    int64_t *c64 = (int64_t *)(void *)(sc + g->off_c64);
                    int32_t *c32 = (int32_t *)cbuf;
                    for (int64_t i = 0; i < pn * OC; i++) c64[i] = 0;
                    for (int64_t k0 = 0; k0 < K; k0 += g->chunk) {
                        int64_t kn = K - k0 < g->chunk ? K - k0 : g->chunk;
                        tosac_gemm_i16(g->isa, pn, OC, kn, (const int16_t *)patch + k0, K, (const int16_t *)wbuf + k0, K, c32,
                                       OC);
                        for (int64_t i = 0; i < pn * OC; i++) c64[i] += c32[i];
                    }
                }
            } else if (g->kind == CK_F64) {
                tosac_gemm_f64(pn, OC, K, (const double *)patch, K, (const double *)wbuf, OC, (double *)cbuf, OC);
            } else if (t->fused) {
                conv_fpanel_group(t, pn, (const float *)patch, K, fout, j0, NULL, 0);
            } else if (g->fpanel) {
                tosac_gemm_f32_panel(g->isa, pn, OC, K, (const float *)patch, K, (const float *)wbuf, fout, OC, NULL);
            } else {
                tosac_gemm_f32(g->isa, pn, OC, K, (const float *)patch, K, (const float *)wbuf, OC, (float *)cbuf, OC);
            }
        }
        /* epilogue */
        if (t->rqon || (t->iend && !c->epi) || t->irq) {
            /* the panels stored the outputs */
        } else if (t->iend) {
            tosac_status st = tosac_epilogue_store(c, (int32_t *)cbuf, o0, pn * OC);
            if (st != TOSAC_OK) t->st[worker] = st;
        } else if (g->kind == CK_INT && g->bpanel && ((const conv_prep *)c->prep)->bias_in) {
            /* the sums already hold the bias and cannot have overflowed */
            const int64_t jn = OC - j0 < t->gw ? OC - j0 : t->gw;
            if (c->epi) {
                tosac_status st = jn == OC ? tosac_epilogue_store(c, (int32_t *)cbuf, o0, pn * OC)
                                           : tosac_epilogue_store_cols(c, (int32_t *)cbuf, OC, o0, pn, j0, jn);
                if (st != TOSAC_OK) t->st[worker] = st;
            } else {
                for (int64_t p = 0; p < pn; p++)
                    memcpy((int32_t *)c->out[0].data + o0 + p * OC + j0, (int32_t *)cbuf + p * OC + j0,
                           (size_t)jn * sizeof(int32_t));
            }
        } else if (g->kind == CK_INT) {
            const int64_t *c64 = K > g->chunk ? (const int64_t *)(const void *)(sc + g->off_c64) : NULL;
            tosac_status st = int_store(c, o0, pn * OC, OC, c64, (int32_t *)cbuf);
            if (st != TOSAC_OK) t->st[worker] = st;
        } else if (g->kind == CK_F64) {
            fp_store_f64(&c->out[0], &c->in[2], o0, pn * OC, OC, (const double *)cbuf);
        } else if (!t->fused) {
            fp_store_f32(g->isa, &c->out[0], &c->in[2], o0, pn * OC, OC, (float *)cbuf, c->epi);
        }
        if (!t->late_post) tosac_epilogue_post(c, worker, p0, pn);
    }
}

static tosac_status conv_gemm_run(tosac_kcall *c, const conv_plan *g, int32_t izp, int32_t wzp)
{
    conv_task t = {.c = c, .g = g, .izp = izp, .st = {TOSAC_OK}};
    bool finite;
    t.wbuf = conv_wbuf(c, g, wzp, &finite); /* shared by the workers (worker 0's scratch when not prepared) */
    t.direct = g->kind == CK_F16ACC || !finite;
    t.rows = g->op != TOSAC_OP_TRANSPOSE_CONV2D && g->T == 1 && g->sd == 1 && g->sy == 1 && g->sx == 1 && g->pd == 0 &&
             g->pt == 0 && g->pl == 0 && g->ID == g->OD && g->IH == g->OH && g->IW == g->OW;
    t.pointwise = t.rows && g->kind == CK_F32 && c->in[0].dtype == TOSAC_DTYPE_FP32;
    const tosac_ktensor *bias = &c->in[2], *dst = c->epi ? c->epi->out : &c->out[0];
    t.fused = g->fpanel && !t.direct && bias->dtype == TOSAC_DTYPE_FP32 && !bias->f64 &&
              dst->dtype == TOSAC_DTYPE_FP32 && !dst->f64;
    if (t.fused) {
        t.ep.bias = (const float *)bias->data, t.ep.bcast = bias->nelem == 1;
        t.ep.clamp = c->epi != NULL, t.ep.ignore = c->epi && c->epi->fignore;
        t.ep.lo = c->epi ? c->epi->flo : 0.0f, t.ep.hi = c->epi ? c->epi->fhi : 0.0f;
    }
    /* read in place: CONV2D on fp32 input, dilation 1 along x, kernel rows in segments, rows of
       at least 8 pixels (a block's border pixels go through patch rows together), and at most 64
       output channels, where im2col costs most per multiply-add: with more, the short tiles at
       the ends of the rows (each streams its block of weights from L2 for a few rows) cost more
       than the patch rows (28x28x128 3x3: 56 -> 49 GMAC/s; 32x32x16 3x3: 37 -> 46; rows of 8
       and 16: 8x8x64 3x3 53 -> 60, 16x16x32 49 -> 54, best invokes) */
    t.u8cols = g->bpanel && c->prep && !t.direct && ((const conv_prep *)c->prep)->bias_in;
    /* int8 on s8 x u8 panels: kernel rows of whole quads of bytes (the panels' K steps), rows wide
       enough for whole register tiles (8x8x64 3x3: 168 -> 150 GMAC/s in place; 32x32x16 3x3: 70 -> 95);
       with the fused RESCALE, whose border pixels go through patch rows together, rows of 7 or
       more (7x7x512 3x3: 224 -> 241, 14x14x256: 227 -> 239, 8x8x64: 191 -> 204, best invokes) */
    t.rqon = t.u8cols && c->epi && tosac_epilogue_rq(c, &t.rq);
    /* AVX2 int16 panels: the bias and the fused RESCALE (its hi32 form) in the tiles where the
       results are int32 (i8 x i8 / i4; i16 inputs accumulate in i48) */
    t.iend = g->panel && c->prep && g->isa == TOSAC_KISA_AVX2 && !t.direct && c->out[0].dtype == TOSAC_DTYPE_INT32 &&
             bias->dtype == TOSAC_DTYPE_INT32;
    t.irq = t.iend && c->epi && tosac_epilogue_rq(c, &t.rq);
    t.icols = t.iend && (t.irq || !c->epi);
    const bool u8seg = t.u8cols && !t.rows && (g->KW * g->IC) % 4 == 0 && g->OW >= (t.rqon ? 7 : 24);
    if (((t.fused && !t.pointwise && g->OW >= 8 && g->OC <= 64 && c->in[0].dtype == TOSAC_DTYPE_FP32 &&
          !c->in[0].f64) ||
         u8seg) &&
        g->op == TOSAC_OP_CONV2D && g->dx == 1 && g->KH <= TOSAC_GEMM_MAX_SEG) {
        t.xa = (int64_t)(((size_t)g->pl + (size_t)g->sx - 1u) / (size_t)g->sx); /* first ox * sx >= pl */
        const int64_t last = g->IW - g->KW + g->pl; /* ox * sx <= last: the kernel's last column inside */
        t.xb = last < 0 ? 0 : (int64_t)((size_t)last / (size_t)g->sx) + 1;
        if (t.xb > g->OW) t.xb = g->OW;
        t.implicit = t.xa < t.xb;
    }
    int64_t npix = g->N * g->OD * g->OH * g->OW;
    /* (only where a task outweighs waking a worker, about a microsecond: at least 2^18
       multiply-adds in all, 5 us on one core, or 2^15 weights, which one core streams from
       memory or L3 in about as long: the SE blocks' 1x1 convolutions of one pixel, each core then
       keeping its columns' weights in its own L2) */
    const bool split = npix * g->K * g->OC >= ((int64_t)1 << 18) || g->K * g->OC >= ((int64_t)1 << 15);
    const size_t workers = split ? (size_t)tosac_kworkers(c) : 1u;
    t.pblk = workers > 1 ? g->pblk : g->pblk1;
    t.unit = t.pblk >= 6 ? 6 : 1; /* the fp32 panels' widest register tiles' rows */
    if (t.implicit && t.pblk >= g->OW) {
        /* whole output rows per block: every inside run whole (no short tiles where a block ends
           in the middle of a row) and the block's border pixels in one run of patch rows */
        t.pblk = (int64_t)((size_t)t.pblk / (size_t)g->OW) * g->OW;
        t.unit = g->OW;
    }
    const size_t units = ((size_t)npix + (size_t)t.unit - 1u) / (size_t)t.unit;
    const size_t per_blk = (size_t)t.pblk / (size_t)t.unit; /* units a block holds at most */
    size_t nblk = npix <= t.pblk ? 1u : (units + per_blk - 1u) / per_blk;
    /* few pixel blocks for the workers (the late layers of a network: 49 pixels, 2048 channels):
       each block also splits over groups of 64-column panel blocks of equal width, fused fp32
       outputs, int8 panels whose sums hold the bias (whose epilogue takes column ranges) and the
       AVX2 int16 panels that store the outputs themselves only.
       A tail then runs on a block's rows after every group (a second parallel-for); a prologue
       would run once per group, so it keeps whole rows. Any split computes each output the same
       way. */
    t.ng = 1, t.gw = g->OC;
    const size_t want = workers * 4u;
    if ((t.fused || t.u8cols || t.icols) && workers > 1 && nblk < want && g->OC > 64 && !(c->epi && c->epi->pre)) {
        const size_t nb64 = ((size_t)g->OC + 63u) / 64u, per = (want + nblk - 1) / nblk;
        size_t ng = nb64; /* the fewest groups of equal width that give every worker its tasks */
        for (size_t d = per; d < nb64; d++)
            if (nb64 % d == 0) {
                ng = d;
                break;
            }
        t.gw = (int64_t)(nb64 / ng) * 64;
        t.ng = (int64_t)ng;
        t.late_post = c->epi && c->epi->post;
    }
    /* at least 2 tasks per worker where the convolution is worth splitting, and while the tasks
       are few a multiple of the workers (any convolution already in several blocks), so that no
       worker waits for another's last task (blocks of at least 12 pixels where the plan's allow;
       each block streams the weights once more) */
    const size_t nw = tosac_kworkers(c);
    if (nw > 1 && (workers > 1 || nblk > 1)) {
        const size_t ng = (size_t)t.ng, most = (size_t)npix / 12u > nblk ? (size_t)npix / 12u : nblk;
        size_t nb = nblk * ng < 2u * workers ? (2u * workers + ng - 1u) / ng : nblk;
        while (nb * ng < 8u * nw && (nb * ng) % nw && nb < most) nb++;
        nblk = nb < most ? nb : most;
        if (nblk > units) nblk = units;
    }
    t.units = units, t.nblk = nblk;
    tosac_kparallel_for(c, conv_blocks, &t, nblk * (size_t)t.ng);
    for (uint32_t w = 0; w < tosac_kworkers(c); w++)
        if (t.st[w] != TOSAC_OK) return t.st[w];
    if (t.late_post) {
        /* as many pieces as the convolution's tasks: at most a few blocks of the tail chain each */
        tosac_epilogue_post_late(c, (size_t)npix, nblk * (size_t)t.ng);
    }
    return TOSAC_OK;
}

/* ---- DEPTHWISE_CONV2D -------------------------------------------------------------------------- */

/* Output rows (n, oy) of a depthwise convolution, each in nb blocks of bw pixels, as a parallel-for
   task (kernel.h) over N * OH * nb blocks. */
typedef struct dw_task {
    tosac_kcall *c;
    const conv_plan *g;
    int32_t izp;
    const void *wbuf;
    bool wide;
    bool finite; /* every weight is finite (the fp32 row kernels add padding taps) */
    bool idw;    /* tosac_idw_avx2_row (conv_plan.idw, int32 bias and results) ... */
    bool irq;    /* ... with the fused RESCALE (rq) */
    tosac_gemm_rq rq;
    int64_t nb, bw;
    tosac_status st[TOSAC_KMAX_WORKERS]; /* each worker's first failure */
} dw_task;

/* The int32 results sum + bias of the row kernels (bad: an addition overflowed) through the fused
   epilogue or into the output. */
static tosac_status dw_int_end(tosac_kcall *c, int64_t o0, int64_t count, int32_t *acc, uint32_t bad)
{
    if (bad) return tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE, "accumulator + bias overflows i32 (REQUIRE)");
    if (c->epi) return tosac_epilogue_store(c, acc, o0, count);
    memcpy((int32_t *)c->out[0].data + o0, acc, (size_t)count * sizeof *acc);
    return TOSAC_OK;
}

static void dw_rows(void *ctx, uint32_t worker, size_t r0, size_t r1)
{
    dw_task *t = ctx;
    tosac_kcall *c = t->c;
    const conv_plan *g = t->g;
    const int32_t izp = t->izp;
    const void *wbuf = t->wbuf;
    const bool wide = t->wide;
    uint8_t *sc = (uint8_t *)c->scratch + (size_t)worker * c->scratch_size;
    const tosac_ktensor *in = &c->in[0];
    int64_t C = g->IC, M = g->M, CM = C * M;
    void *xrow = sc + g->off_patch, *acc = sc + g->off_c;

    /* fp32 (finite weights) or int8 with int32 sums: the row kernels (k_gemm.h), pblk pixels a call;
       fp32 with an fp32 bias and result straight into the output, a row a call */
    const bool rowk = (g->kind == CK_F32 && in->dtype == TOSAC_DTYPE_FP32 && t->finite) ||
                      (g->kind == CK_INT && !wide && in->dtype == TOSAC_DTYPE_INT8);
    const tosac_ktensor *bias = &c->in[2], *dst = c->epi ? c->epi->out : &c->out[0];
    const tosac_gemm_epi ep = {(const float *)bias->data, bias->nelem == 1, c->epi != NULL, c->epi && c->epi->fignore,
                               c->epi ? c->epi->flo : 0.0f, c->epi ? c->epi->fhi : 0.0f};
    const bool fend = rowk && g->kind == CK_F32 && bias->dtype == TOSAC_DTYPE_FP32 && !bias->f64 &&
                      dst->dtype == TOSAC_DTYPE_FP32 && !dst->f64;
    /* int8 with int32 results: the row kernels add the bias too (and flag the REQUIRE) */
    const bool iend = rowk && g->kind == CK_INT && bias->dtype == TOSAC_DTYPE_INT32 && c->out[0].dtype == TOSAC_DTYPE_INT32;
    uint32_t bad = 0;
    int64_t held = 0, h0 = 0, hq = 0; /* rows whose sums wait in acc for one epilogue call; the first's output
                                         and pixel */
    for (size_t task = r0; task < r1 && t->st[worker] == TOSAC_OK; task++) {
        size_t row = task / (size_t)t->nb; /* 32-bit clean */
        int64_t n = (int64_t)(row / (size_t)g->OH), oy = (int64_t)(row % (size_t)g->OH);
        int64_t bx0 = (int64_t)(task - row * (size_t)t->nb) * t->bw, bx1 = bx0 + t->bw < g->OW ? bx0 + t->bw : g->OW;
        const int64_t q0 = (n * g->OH + oy) * g->OW + bx0; /* the task's first output pixel (row of epi->post) */
        if (t->idw) {
            /* into the outputs (fused RESCALE, or int32 results without an epilogue), else through
               acc, pblk pixels at a time, to the epilogue */
            tosac_idw_geom geo = {.x = (const int8_t *)in->data + n * g->IH * g->IW * C, .scratch = xrow, .C = C,
                                  .IH = g->IH, .IW = g->IW, .KH = g->KH, .KW = g->KW, .sy = g->sy, .sx = g->sx,
                                  .dy = g->dy, .pt = g->pt, .pl = g->pl, .oy = oy, .zp = izp,
                                  .bias = (const int32_t *)bias->data, .bcast = bias->nelem == 1,
                                  .rq = t->irq ? &t->rq : NULL};
            const bool direct = t->irq || !c->epi;
            uint32_t ibad = 0;
            tosac_status st = TOSAC_OK;
            for (int64_t ox0 = bx0; ox0 < bx1 && st == TOSAC_OK; ox0 += direct ? bx1 - bx0 : g->pblk) {
                geo.ox0 = ox0, geo.n = direct || bx1 - ox0 < g->pblk ? bx1 - ox0 : g->pblk;
                const int64_t o0 = ((n * g->OH + oy) * g->OW + ox0) * CM;
                void *o = t->irq ? (void *)((uint8_t *)c->epi->out->data + (size_t)o0 * t->rq.ob)
                          : !c->epi ? (void *)((int32_t *)c->out[0].data + o0)
                                    : acc;
                ibad |= tosac_idw_avx2_row(&geo, (const uint8_t *)wbuf + g->off_idw, o);
                if (ibad)
                    st = tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE, "accumulator + bias overflows i32 (REQUIRE)");
                else if (!direct)
                    st = tosac_epilogue_store(c, (int32_t *)acc, o0, geo.n * CM);
            }
            if (st != TOSAC_OK) t->st[worker] = st;
            tosac_epilogue_post(c, worker, q0, bx1 - bx0);
            continue;
        }
        if (rowk) {
            int64_t iy0 = oy * g->sy - g->pt, ky0 = 0, ky1 = g->KH; /* the kernel rows inside the input */
            while (ky0 < ky1 && iy0 + ky0 * g->dy < 0) ky0++;
            while (ky1 > ky0 && iy0 + (ky1 - 1) * g->dy >= g->IH) ky1--;
            tosac_dw_geom geo = {.C = C, .M = M, .KW = g->KW, .IW = g->IW, .sx = g->sx, .dx = g->dx, .pl = g->pl,
                                 .nky = ky1 - ky0, .ystep = g->IW * C * g->dy, .patch = sc + g->off_dwp,
                                 .ibias = iend ? (const int32_t *)bias->data : NULL, .ibcast = bias->nelem == 1, .bad = &bad};
            int64_t xoff = ky1 > ky0 ? (n * g->IH + iy0 + ky0 * g->dy) * g->IW * C : 0, woff = ky0 * g->KW * CM;
            const float *xf = (const float *)in->data + xoff, *wf = (const float *)wbuf + woff;
            const int8_t *xi = (const int8_t *)in->data + xoff;
            const int16_t *wi = (const int16_t *)wbuf + woff;
            if (fend) {
                geo.ox0 = bx0, geo.n = bx1 - bx0, geo.ep = &ep;
                tosac_dw_row_f32(g->isa, (float *)dst->data + q0 * CM, xf, wf, &geo);
                tosac_epilogue_post(c, worker, q0, bx1 - bx0);
                continue;
            }
            if (g->dwrows > 1 && t->nb == 1) {
                /* whole rows (pblk == OW): rows r0.. are consecutive in the output */
                geo.ox0 = 0, geo.n = g->OW;
                if (held == 0) h0 = q0 * CM, hq = q0;
                int64_t a0 = held * g->OW * CM;
                if (g->kind == CK_F32)
                    tosac_dw_row_f32(g->isa, (float *)acc + a0, xf, wf, &geo);
                else
                    tosac_dw_row_i8(g->isa, (int32_t *)acc + a0, xi, wi, &geo, izp);
                if (++held < g->dwrows && task + 1 < r1) continue;
                int64_t count = held * g->OW * CM;
                if (g->kind == CK_F32) {
                    fp_store_f32(g->isa, &c->out[0], &c->in[2], h0, count, CM, (float *)acc, c->epi);
                    tosac_epilogue_post(c, worker, hq, held * g->OW);
                } else {
                    tosac_status st = iend ? dw_int_end(c, h0, count, (int32_t *)acc, bad)
                                           : int_store(c, h0, count, CM, NULL, (int32_t *)acc);
                    if (st != TOSAC_OK) t->st[worker] = st;
                }
                held = 0;
                continue;
            }
            for (int64_t ox0 = bx0; ox0 < bx1; ox0 += g->pblk) {
                geo.ox0 = ox0, geo.n = bx1 - ox0 < g->pblk ? bx1 - ox0 : g->pblk;
                int64_t o0 = ((n * g->OH + oy) * g->OW + ox0) * CM;
                if (g->kind == CK_F32) {
                    tosac_dw_row_f32(g->isa, (float *)acc, xf, wf, &geo);
                    fp_store_f32(g->isa, &c->out[0], &c->in[2], o0, geo.n * CM, CM, (float *)acc, c->epi);
                } else {
                    tosac_dw_row_i8(g->isa, (int32_t *)acc, xi, wi, &geo, izp);
                    tosac_status st = iend ? dw_int_end(c, o0, geo.n * CM, (int32_t *)acc, bad)
                                           : int_store(c, o0, geo.n * CM, CM, NULL, (int32_t *)acc);
                    if (st != TOSAC_OK) {
                        t->st[worker] = st;
                        break;
                    }
                }
            }
            tosac_epilogue_post(c, worker, q0, bx1 - bx0);
            continue;
        }
        for (int64_t ox = bx0; ox < bx1; ox++) {
            int64_t o0 = ((n * g->OH + oy) * g->OW + ox) * CM;
            int32_t *a32 = (int32_t *)acc;
            int64_t *a64 = (int64_t *)acc;
            float *af = (float *)acc;
            double *ad = (double *)acc;
            for (int64_t i = 0; i < CM; i++) {
                if (g->kind == CK_INT) {
                    if (wide)
                        a64[i] = 0;
                    else
                        a32[i] = 0;
                } else if (g->kind == CK_F64) {
                    ad[i] = 0.0;
                } else {
                    af[i] = 0.0f;
                }
            }
            for (int64_t ky = 0; ky < g->KH; ky++) {
                int64_t iy = oy * g->sy - g->pt + ky * g->dy;
                if (iy < 0 || iy >= g->IH) continue;
                for (int64_t kx = 0; kx < g->KW; kx++) {
                    int64_t ix = ox * g->sx - g->pl + kx * g->dx;
                    if (ix < 0 || ix >= g->IW) continue;
                    int64_t src = ((n * g->IH + iy) * g->IW + ix) * C, tap = ky * g->KW + kx;
                    if (g->kind == CK_INT && !wide && in->dtype == TOSAC_DTYPE_INT8) {
                        const int16_t *wr = (const int16_t *)wbuf + tap * CM;
                        const int8_t *xr = (const int8_t *)in->data + src;
                        for (int64_t ch = 0; ch < C; ch++) {
                            int32_t xv = xr[ch] - izp;
                            for (int64_t m = 0; m < M; m++) a32[ch * M + m] += xv * wr[ch * M + m];
                        }
                    } else if (g->kind == CK_INT) {
                        const int16_t *wr = (const int16_t *)wbuf + tap * CM;
                        int16_t *xr = (int16_t *)xrow;
                        tosac_krow_i16(xr, in, src, C, izp);
                        if (wide) {
                            for (int64_t ch = 0; ch < C; ch++)
                                for (int64_t m = 0; m < M; m++) a64[ch * M + m] += (int64_t)xr[ch] * wr[ch * M + m];
                        } else if (M == 1) {
                            for (int64_t ch = 0; ch < C; ch++) a32[ch] += (int32_t)xr[ch] * wr[ch];
                        } else {
                            for (int64_t ch = 0; ch < C; ch++) {
                                int32_t xv = xr[ch];
                                for (int64_t m = 0; m < M; m++) a32[ch * M + m] += xv * wr[ch * M + m];
                            }
                        }
                    } else if (g->kind == CK_F64) {
                        const double *wr = (const double *)wbuf + tap * CM;
                        double *xr = (double *)xrow;
                        tosac_krow_f64(xr, in, src, C);
                        for (int64_t ch = 0; ch < C; ch++)
                            for (int64_t m = 0; m < M; m++) {
                                double p = xr[ch] * wr[ch * M + m];
                                ad[ch * M + m] = ad[ch * M + m] + p;
                            }
                    } else {
                        const float *wr = (const float *)wbuf + tap * CM;
                        const float *xr = (const float *)in->data + src;
                        if (in->dtype != TOSAC_DTYPE_FP32) {
                            tosac_krow_f32((float *)xrow, in, src, C);
                            xr = (const float *)xrow;
                        }
                        if (g->kind == CK_F16ACC && M == 1) {
                            tosac_dw_acc_f16(g->isa, af, xr, wr, C);
                        } else if (g->kind == CK_F16ACC) {
                            for (int64_t ch = 0; ch < C; ch++)
                                for (int64_t m = 0; m < M; m++) {
                                    float p = tosac_round_fp16(xr[ch] * wr[ch * M + m]);
                                    af[ch * M + m] = tosac_round_fp16(af[ch * M + m] + p);
                                }
                        } else {
                            for (int64_t ch = 0; ch < C; ch++)
                                for (int64_t m = 0; m < M; m++) af[ch * M + m] = fmaf(xr[ch], wr[ch * M + m], af[ch * M + m]);
                        }
                    }
                }
            }
            tosac_status st = TOSAC_OK;
            if (g->kind == CK_INT)
                st = int_store(c, o0, CM, CM, wide ? a64 : NULL, a32);
            else if (g->kind == CK_F64)
                fp_store_f64(&c->out[0], &c->in[2], o0, CM, CM, ad);
            else
                fp_store_f32(g->isa, &c->out[0], &c->in[2], o0, CM, CM, af, c->epi);
            if (st != TOSAC_OK) {
                t->st[worker] = st;
                break;
            }
        }
        tosac_epilogue_post(c, worker, q0, bx1 - bx0);
    }
}

static tosac_status dw_run(tosac_kcall *c, const conv_plan *g, int32_t izp, int32_t wzp)
{
    dw_task t = {.c = c, .g = g, .izp = izp, .nb = 1, .bw = g->OW, .st = {TOSAC_OK}};
    t.wbuf = conv_wbuf(c, g, wzp, &t.finite); /* shared by the workers (worker 0's scratch when not prepared) */
    int64_t mx = c->in[0].dtype == TOSAC_DTYPE_INT16 ? 32768 : 255;
    t.wide = g->kind == CK_INT && g->T * mx * 255 > INT32_MAX;
    const tosac_ktensor *bias = &c->in[2];
    t.idw = g->idw && c->prep && !t.wide && c->in[0].dtype == TOSAC_DTYPE_INT8 && bias->dtype == TOSAC_DTYPE_INT32 &&
            c->out[0].dtype == TOSAC_DTYPE_INT32;
    t.irq = t.idw && c->epi && tosac_epilogue_rq(c, &t.rq);
    /* few rows (the 7x7 layers): halves of rows too, in whole tiles of 4 pixels, so that the
       workers get equal shares */
    int64_t rows = g->N * g->OH;
    if (rows < 4 * (int64_t)tosac_kworkers(c) && g->OW >= 6) t.bw = (g->OW + 7) / 8 * 4, t.nb = (int64_t)(((size_t)g->OW + (size_t)t.bw - 1) / (size_t)t.bw);
    tosac_kparallel_for(c, dw_rows, &t, (size_t)(rows * t.nb));
    for (uint32_t w = 0; w < tosac_kworkers(c); w++)
        if (t.st[w] != TOSAC_OK) return t.st[w];
    return TOSAC_OK;
}

/* ---- entry ------------------------------------------------------------------------------------ */

tosac_status tosac_kernel_conv(tosac_kcall *c)
{
    if (c->isa == TOSAC_KISA_MVE) {
        tosac_status st;
        return tosac_conv_mve_run(c, &st) ? st : tosac_mve_portable(c, tosac_kernel_conv);
    }
    if (c->n_in < 5 || c->n_out < 1) return tosac_kfail(c, TOSAC_ERR_INTERNAL, "conv: operand count");
    int64_t izp, wzp;
    tosac_status st = check_zps(c, &izp, &wzp);
    if (st != TOSAC_OK) return st;
    if (c->prep && ((const conv_prep *)c->prep)->wino) return tosac_wino_run(c, (const uint8_t *)c->prep + CONV_PREP_W);
    if (c->prep && ((const conv_prep *)c->prep)->iwino)
        return tosac_iwino_run(c, (const uint8_t *)c->prep + CONV_PREP_W, (int32_t)izp);
    conv_plan g;
    conv_make_plan(c, &g);
    if (c->scratch_size < g.total) return tosac_kfail(c, TOSAC_ERR_INTERNAL, "conv: scratch too small");
    if (g.wprep && !c->prep) return tosac_kfail(c, TOSAC_ERR_INTERNAL, "conv: the prepared weights are missing");
    if (g.N * g.OD * g.OH * g.OW * g.OC == 0) return TOSAC_OK;
    if (c->op == TOSAC_OP_DEPTHWISE_CONV2D) return dw_run(c, &g, (int32_t)izp, (int32_t)wzp);
    return conv_gemm_run(c, &g, (int32_t)izp, (int32_t)wzp);
}
