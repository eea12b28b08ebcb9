/* Converters for ONNX neural-network ops: MatMul, Gemm, Conv (1-D, 2-D, any group), MaxPool and
 * AveragePool (1-D, 2-D, ceil_mode, dilated MaxPool), GlobalAveragePool, GlobalMaxPool, Softmax.
 * NCHW stays the graph layout: CONV2D and the pools get NCHW->NHWC and NHWC->NCHW TRANSPOSEs
 * around them (the layout pass cancels them); constant weights are permuted at compile time. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "onnx/convert.h"

static const int32_t k_to_nhwc[4] = {0, 2, 3, 1}, k_to_nchw[4] = {0, 3, 1, 2};

tosac_value *cvt_mk_slice(cvt_ctx *c, tosac_value *x, const int64_t *start, const int64_t *size)
{
    tosac_value *out = x ? cvt_new(c, x->dtype, x->rank, size) : NULL;
    tosac_value *in[3] = {x, NULL, NULL};
    in[1] = out ? cvt_shape_const(c, start, (uint32_t)x->rank) : NULL;
    in[2] = out ? cvt_shape_const(c, size, (uint32_t)x->rank) : NULL;
    return out && in[1] && in[2] && cvt_op(c, TOSAC_OP_SLICE, 3, in, out) ? out : NULL;
}

/* MATMUL of rank-3 a [B,M,K] and b [B,K,N]. */
static tosac_value *matmul3(cvt_ctx *c, tosac_value *a, tosac_value *b)
{
    if (!a || !b) return NULL;
    int64_t shape[3] = {a->shape[0], a->shape[1], b->shape[2]};
    tosac_value *out = cvt_new(c, TOSAC_DTYPE_FP32, 3, shape);
    tosac_value *in[4] = {a, b, NULL, NULL};
    in[2] = cvt_zp(c, TOSAC_DTYPE_FP32);
    in[3] = cvt_zp(c, TOSAC_DTYPE_FP32);
    return cvt_op(c, TOSAC_OP_MATMUL, 4, in, out) ? out : NULL;
}

tosac_status cvt_matmul(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *a = cvt_in_tensor(c, 0, &s), *b = a ? cvt_in_tensor(c, 1, &s) : NULL;
    if (!b) return s;
    if ((s = cvt_need_type(c, a, true, false, false)) != TOSAC_OK) return s;
    int ra = a->rank, rb = b->rank;
    if (ra < 1 || rb < 1) return cvt_fail(c, TOSAC_ERR_FORMAT, "scalar operand");
    int64_t M = ra >= 2 ? a->shape[ra - 2] : 1, K = a->shape[ra - 1];
    int64_t N = rb >= 2 ? b->shape[rb - 1] : 1, Kb = rb >= 2 ? b->shape[rb - 2] : b->shape[0];
    if (K != Kb) return cvt_fail(c, TOSAC_ERR_FORMAT, "inner dimensions differ (%lld vs %lld)", (long long)K, (long long)Kb);
    int64_t ba = 1, bb = 1;
    for (int k = 0; k < ra - 2; k++) ba *= a->shape[k];
    for (int k = 0; k < rb - 2; k++) bb *= b->shape[k];
    int64_t oshape[TOSAC_MAX_RANK];
    int orank = 0;
    tosac_value *r;
    if (bb == 1 && rb <= 2) { /* b shared: fold a's batch into M */
        int64_t sa[3] = {1, ba * M, K}, sb[3] = {1, K, N};
        tosac_value *a3 = cvt_mk_reshape(c, a, 3, sa), *b3 = cvt_mk_reshape(c, b, 3, sb);
        r = matmul3(c, a3, b3);
        for (int k = 0; k < ra - 1; k++) oshape[orank++] = a->shape[k];
    } else if (ra == rb && ba == bb) {
        for (int k = 0; k < ra - 2; k++)
            if (a->shape[k] != b->shape[k]) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "batch broadcasting is not supported");
        int64_t sa[3] = {ba, M, K}, sb[3] = {ba, K, N};
        tosac_value *a3 = cvt_mk_reshape(c, a, 3, sa), *b3 = cvt_mk_reshape(c, b, 3, sb);
        r = matmul3(c, a3, b3);
        for (int k = 0; k < ra - 1; k++) oshape[orank++] = a->shape[k];
    } else {
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "batch broadcasting is not supported");
    }
    if (rb >= 2) oshape[orank++] = N;
    if (ra == 1) { /* drop the M = 1 dimension */
        orank = 0;
        if (rb >= 2) oshape[orank++] = N;
    }
    return cvt_set_out(c, 0, r ? cvt_mk_reshape(c, r, orank, oshape) : NULL);
}

tosac_status cvt_gemm(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *a = cvt_in_tensor(c, 0, &s), *b = a ? cvt_in_tensor(c, 1, &s) : NULL;
    if (!b) return s;
    if ((s = cvt_need_type(c, a, true, false, false)) != TOSAC_OK) return s;
    if (a->rank != 2 || b->rank != 2) return cvt_fail(c, TOSAC_ERR_FORMAT, "A and B must be rank 2");
    static const int32_t t2[2] = {1, 0};
    if (cvt_attr_i(c, "transA", 0)) a = cvt_mk_transpose(c, a, t2);
    if (cvt_attr_i(c, "transB", 0)) b = cvt_mk_transpose(c, b, t2);
    if (!a || !b) return cvt_nomem(c);
    if (a->shape[1] != b->shape[0]) return cvt_fail(c, TOSAC_ERR_FORMAT, "inner dimensions differ");
    int64_t sa[3] = {1, a->shape[0], a->shape[1]}, sb[3] = {1, b->shape[0], b->shape[1]};
    int64_t so[2] = {a->shape[0], b->shape[1]};
    tosac_value *a3 = cvt_mk_reshape(c, a, 3, sa), *b3 = cvt_mk_reshape(c, b, 3, sb);
    tosac_value *y = matmul3(c, a3, b3);
    y = y ? cvt_mk_reshape(c, y, 2, so) : NULL;
    float alpha = cvt_attr_f(c, "alpha", 1.0f), beta = cvt_attr_f(c, "beta", 1.0f);
    if (y && alpha != 1.0f)
        y = cvt_binary(c, TOSAC_OP_MUL, y, cvt_const_scalar(c, TOSAC_DTYPE_FP32, 2, alpha), TOSAC_DTYPE_UNKNOWN);
    if (y && cvt_in(c, 2) && beta != 0.0f) {
        tosac_value *cc = cvt_in_tensor(c, 2, &s);
        if (!cc) return s;
        if (beta != 1.0f)
            cc = cvt_binary(c, TOSAC_OP_MUL, cc, cvt_const_scalar(c, TOSAC_DTYPE_FP32, cc->rank, beta), TOSAC_DTYPE_UNKNOWN);
        y = cvt_binary(c, TOSAC_OP_ADD, y, cc, TOSAC_DTYPE_UNKNOWN);
    }
    return y ? cvt_set_out(c, 0, y) : (s ? s : TOSAC_ERR_FORMAT);
}

/* Spatial parameters shared by Conv and the pools, always as 2-D: a 1-D node (rank-3 input) is
 * lowered as H = 1, its attributes landing on the W axis. pad = TOSA order {top, bottom, left,
 * right}. */
typedef struct win2d {
    int64_t k[2], st[2], dil[2], pad[4];
} win2d;

/* Reads strides / dilations / pads / auto_pad / ceil_mode for `nsp` spatial axes (1 or 2) of an
 * input whose spatial size (as 2-D) is in_hw. ceil_mode (pools only) becomes extra trailing padding:
 * the output gets ceil((in + pads - eff_kernel) / stride) + 1 positions, less one when the last
 * window would start in the trailing padding (the ONNX rule, also PyTorch's and onnxruntime's). */
static tosac_status get_window(cvt_ctx *c, int nsp, const int64_t *in_hw, const int64_t *kernel, win2d *w, bool pool)
{
    size_t n;
    const int64_t *v;
    const int o = 2 - nsp; /* first 2-D axis the node's attributes describe */
    for (int i = 0; i < 2; i++) {
        w->k[i] = i < o ? 1 : kernel[i - o];
        w->st[i] = w->dil[i] = 1;
    }
    if ((v = cvt_attr_ints(c, "strides", &n)) && n) {
        if (n != (size_t)nsp) return cvt_fail(c, TOSAC_ERR_FORMAT, "strides must have %d entries", nsp);
        for (int i = 0; i < nsp; i++) w->st[o + i] = v[i];
    }
    if ((v = cvt_attr_ints(c, "dilations", &n)) && n) {
        if (n != (size_t)nsp) return cvt_fail(c, TOSAC_ERR_FORMAT, "dilations must have %d entries", nsp);
        for (int i = 0; i < nsp; i++) w->dil[o + i] = v[i];
    }
    for (int i = 0; i < 2; i++) {
        if (w->k[i] < 1 || w->st[i] < 1 || w->dil[i] < 1)
            return cvt_fail(c, TOSAC_ERR_FORMAT, "kernel, strides and dilations must be positive");
        if (w->k[i] == 1) w->dil[i] = 1; /* a one-tap window has no dilation to honour */
    }
    int64_t p[4] = {0, 0, 0, 0}; /* 2-D ONNX order: h_begin, w_begin, h_end, w_end */
    if ((v = cvt_attr_ints(c, "pads", &n)) && n) {
        if (n != (size_t)(2 * nsp)) return cvt_fail(c, TOSAC_ERR_FORMAT, "pads must have %d entries", 2 * nsp);
        for (int i = 0; i < nsp; i++) p[o + i] = v[i], p[2 + o + i] = v[nsp + i];
    }
    const char *ap = cvt_attr_s(c, "auto_pad", "NOTSET");
    if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
        for (int i = 0; i < 2; i++) {
            int64_t out = (in_hw[i] + w->st[i] - 1) / w->st[i];
            int64_t total = (out - 1) * w->st[i] + (w->k[i] - 1) * w->dil[i] + 1 - in_hw[i];
            if (total < 0) total = 0;
            int64_t small = total / 2, big = total - small;
            p[i] = !strcmp(ap, "SAME_UPPER") ? small : big;
            p[i + 2] = total - p[i];
        }
    } else if (!strcmp(ap, "VALID")) {
        memset(p, 0, sizeof p);
    } else if (strcmp(ap, "NOTSET")) {
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "auto_pad %s is not supported", ap);
    }
    for (int i = 0; i < 4; i++)
        if (p[i] < 0) return cvt_fail(c, TOSAC_ERR_FORMAT, "negative pads");
    if (pool && cvt_attr_i(c, "ceil_mode", 0) && !strcmp(ap, "NOTSET")) {
        for (int i = 0; i < 2; i++) {
            int64_t eff = (w->k[i] - 1) * w->dil[i] + 1, ext = in_hw[i] + p[i] + p[i + 2] - eff;
            if (ext < 0) break; /* reported by fit_window */
            int64_t out = (ext + w->st[i] - 1) / w->st[i] + 1;
            if ((out - 1) * w->st[i] >= in_hw[i] + p[i]) out--;
            int64_t extra = (out - 1) * w->st[i] + eff - (in_hw[i] + p[i] + p[i + 2]);
            if (extra > 0) p[i + 2] += extra; /* fit_window trims it back when it is not needed */
        }
    }
    w->pad[0] = p[0];
    w->pad[1] = p[2];
    w->pad[2] = p[1];
    w->pad[3] = p[3];
    return TOSAC_OK;
}

/* TOSA needs (in + pads - effective kernel) divisible by the stride: trim trailing padding, or crop
 * the input (NHWC x) when there is not enough padding to trim. Returns the output size in out_hw. */
static tosac_value *fit_window(cvt_ctx *c, tosac_value *x, win2d *w, int64_t *out_hw)
{
    int64_t crop[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        int64_t ext = x->shape[1 + i] + w->pad[2 * i] + w->pad[2 * i + 1] - ((w->k[i] - 1) * w->dil[i] + 1);
        if (ext < 0) {
            cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "kernel larger than the padded input");
            return NULL;
        }
        int64_t rem = ext % w->st[i];
        out_hw[i] = ext / w->st[i] + 1;
        int64_t t = rem < w->pad[2 * i + 1] ? rem : w->pad[2 * i + 1];
        w->pad[2 * i + 1] -= t;
        crop[i] = rem - t;
    }
    if (crop[0] || crop[1]) {
        int64_t st[4] = {0, 0, 0, 0}, sz[4] = {x->shape[0], x->shape[1] - crop[0], x->shape[2] - crop[1], x->shape[3]};
        return cvt_mk_slice(c, x, st, sz);
    }
    return x;
}

static tosac_status set_i32v(tosac_node *n, unsigned id, const int64_t *v, int count)
{
    int32_t b[4];
    for (int i = 0; i < count; i++) b[i] = (int32_t)v[i];
    return tosac_node_set_ints(n, id, b, (uint32_t)count);
}

/* A 1-D node's rank-3 [N, C, L] operand as [N, C, 1, L] (and back with to3d). */
static tosac_value *to2d(cvt_ctx *c, tosac_value *x)
{
    int64_t s[4] = {x->shape[0], x->shape[1], 1, x->shape[2]};
    return cvt_mk_reshape(c, x, 4, s);
}

static tosac_value *to3d(cvt_ctx *c, tosac_value *y)
{
    if (!y) return NULL;
    int64_t s[3] = {y->shape[0], y->shape[1], y->shape[3]};
    return cvt_mk_reshape(c, y, 3, s);
}

/* One CONV2D / DEPTHWISE_CONV2D of NHWC x with constant weights w (OHWI / HWCM) and bias. */
static tosac_value *conv_op(cvt_ctx *c, bool depthwise, tosac_value *x, tosac_value *w, tosac_value *bias,
                            const win2d *win, const int64_t *ohw, int64_t m)
{
    int64_t oshape[4] = {x->shape[0], ohw[0], ohw[1], m};
    tosac_value *y = cvt_new(c, TOSAC_DTYPE_FP32, 4, oshape);
    tosac_value *in[5] = {x, w, bias, NULL, NULL};
    in[3] = cvt_zp(c, TOSAC_DTYPE_FP32);
    in[4] = cvt_zp(c, TOSAC_DTYPE_FP32);
    if (!y || !in[3] || !in[4]) return NULL;
    tosac_node *n = cvt_op(c, depthwise ? TOSAC_OP_DEPTHWISE_CONV2D : TOSAC_OP_CONV2D, 5, in, y);
    /* CONV2D and DEPTHWISE_CONV2D share field ids */
    if (!n || set_i32v(n, TOSAC_ATTR_CONV2D_pad, win->pad, 4) || set_i32v(n, TOSAC_ATTR_CONV2D_stride, win->st, 2) ||
        set_i32v(n, TOSAC_ATTR_CONV2D_dilation, win->dil, 2) || tosac_node_set_int(n, TOSAC_ATTR_CONV2D_local_bound, 0) ||
        tosac_node_set_int(n, TOSAC_ATTR_CONV2D_acc_type, TOSAC_DTYPE_FP32))
        return NULL;
    return y;
}

tosac_value *cvt_concat_axis(cvt_ctx *c, tosac_value **parts, int64_t n, int axis)
{
    while (n > 1) {
        int64_t m = 0;
        for (int64_t i = 0; i < n; i += 64) {
            uint32_t k = (uint32_t)(n - i < 64 ? n - i : 64);
            int64_t shape[TOSAC_MAX_RANK];
            memcpy(shape, parts[i]->shape, (size_t)parts[i]->rank * sizeof *shape);
            for (uint32_t j = 1; j < k; j++) shape[axis] += parts[i + j]->shape[axis];
            tosac_value *out = k > 1 ? cvt_new(c, parts[i]->dtype, parts[i]->rank, shape) : parts[i];
            if (!out) return NULL;
            if (k > 1) {
                tosac_node *nd = cvt_op(c, TOSAC_OP_CONCAT, k, parts + i, out);
                if (!nd || tosac_node_set_int(nd, TOSAC_ATTR_CONCAT_axis, axis) != TOSAC_OK) return NULL;
            }
            parts[m++] = out;
        }
        n = m;
    }
    return parts[0];
}

/* Conv: 1-D (as H = 1) and 2-D; group 1 is one CONV2D, group = channels with a channel multiplier
 * one DEPTHWISE_CONV2D, any other group count one CONV2D per group on a SLICE of the channels,
 * joined by CONCAT. */
tosac_status cvt_conv(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *xv = cvt_in_req(c, 0, &s), *wv = xv ? cvt_in_req(c, 1, &s) : NULL;
    if (!wv) return s;
    if ((xv->rank != 4 && xv->rank != 3) || wv->rank != xv->rank)
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "only 1-D and 2-D convolution is supported");
    if (xv->dt != TOSAC_DTYPE_FP32) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "only FLOAT convolution is supported");
    if (!wv->is_const || !wv->f) return cvt_need_const(c, wv, "a constant");
    const int nsp = xv->rank - 2;
    int64_t C = xv->shape[1], M = wv->shape[0], Cg = wv->shape[1];
    int64_t KH = nsp == 2 ? wv->shape[2] : 1, KW = wv->shape[xv->rank - 1];
    int64_t G = cvt_attr_i(c, "group", 1);
    if (G < 1 || C % G || M % G || Cg * G != C)
        return cvt_fail(c, TOSAC_ERR_FORMAT, "group=%lld does not fit %lld input channels, %lld outputs and W's %lld "
                        "channels per group", (long long)G, (long long)C, (long long)M, (long long)Cg);
    bool depthwise = G > 1 && G == C; /* Cg == 1: one DEPTHWISE_CONV2D with multiplier M / C */
    size_t nk;
    const int64_t *ks = cvt_attr_ints(c, "kernel_shape", &nk);
    if (ks && (nk != (size_t)nsp || memcmp(ks, wv->shape + 2, (size_t)nsp * sizeof *ks)))
        return cvt_fail(c, TOSAC_ERR_FORMAT, "kernel_shape disagrees with W");
    int64_t in_hw[2] = {nsp == 2 ? xv->shape[2] : 1, xv->shape[xv->rank - 1]};
    win2d w;
    if ((s = get_window(c, nsp, in_hw, wv->shape + 2, &w, false)) != TOSAC_OK) return s;
    /* Weights: OHWI (CONV2D; I = channels per group, the groups' filters one after another) or
     * HWCM (DEPTHWISE_CONV2D), permuted once straight into the graph's arena and adopted as the
     * constants (no second copy of what may be 100 MB). */
    size_t nw = (size_t)wv->numel;
    float *wt = cvt_const_buffer(c, nw);
    if (!wt) return cvt_nomem(c);
    if (!depthwise) {
        /* per output channel, a [Cg][KH*KW] -> [KH*KW][Cg] transpose: written in order, read
         * from a block that stays in L1; a 1x1 kernel is a plain copy */
        size_t k2 = (size_t)(KH * KW), cg = (size_t)Cg;
        if (k2 == 1) {
            memcpy(wt, wv->f, nw * 4);
        } else {
            for (size_t o = 0; o < (size_t)M; o++) {
                const float *src = wv->f + o * cg * k2;
                float *dst = wt + o * cg * k2;
                for (size_t k = 0; k < k2; k++)
                    for (size_t i = 0; i < cg; i++) *dst++ = src[i * k2 + k];
            }
        }
    } else {
        int64_t mult = M / C;
        for (int64_t ch = 0; ch < C; ch++)
            for (int64_t m = 0; m < mult; m++)
                for (int64_t h = 0; h < KH; h++)
                    for (int64_t x = 0; x < KW; x++)
                        wt[((h * KW + x) * C + ch) * mult + m] = wv->f[((ch * mult + m) * KH + h) * KW + x];
    }
    int64_t Gc = depthwise ? 1 : G, Mg = M / Gc; /* CONV2Ds to emit, outputs of each */
    tosac_value *wc[64], **wcs = Gc <= 64 ? wc : tosac_malloc((size_t)Gc * sizeof *wcs);
    if (!wcs) return cvt_nomem(c);
    bool ok = true;
    for (int64_t g = 0; g < Gc && ok; g++) {
        int64_t ws[4] = {Mg, KH, KW, Cg};
        if (depthwise) ws[0] = KH, ws[1] = KW, ws[2] = C, ws[3] = M / C;
        ok = (wcs[g] = cvt_const_f32_adopt(c, 4, ws, wt + (size_t)(g * Mg * KH * KW * Cg))) != NULL;
    }
    tosac_value *bias = NULL, *x = NULL, *y = NULL;
    int64_t ohw[2];
    if (!ok) goto out;
    if ((s = cvt_bias_f32(c, 2, M, &bias)) != TOSAC_OK) goto out;
    if (!(x = cvt_tensor(c, xv, &s))) goto out;
    if (nsp == 1 && !(x = to2d(c, x))) goto out;
    if (!(x = cvt_mk_transpose(c, x, k_to_nhwc))) goto out;
    if (!(x = fit_window(c, x, &w, ohw))) {
        if (!s) s = TOSAC_ERR_UNSUPPORTED; /* fit_window reported it */
        goto out;
    }
    if (Gc == 1) {
        y = conv_op(c, depthwise, x, wcs[0], bias, &w, ohw, M);
    } else {
        /* the groups' outputs reuse wcs[] as CONCAT operands once each weight has been used */
        for (int64_t g = 0; g < Gc; g++) {
            int64_t xs[4] = {0, 0, 0, g * Cg}, xz[4] = {x->shape[0], x->shape[1], x->shape[2], Cg};
            int64_t bs = g * Mg, bz = Mg;
            tosac_value *bg = cvt_new(c, TOSAC_DTYPE_FP32, 1, &bz);
            tosac_value *bin[3] = {bias, NULL, NULL};
            bin[1] = cvt_shape_const(c, &bs, 1);
            bin[2] = cvt_shape_const(c, &bz, 1);
            tosac_value *xg = cvt_mk_slice(c, x, xs, xz);
            if (!bg || !bin[1] || !bin[2] || !xg || !cvt_op(c, TOSAC_OP_SLICE, 3, bin, bg) ||
                !(wcs[g] = conv_op(c, false, xg, wcs[g], bg, &w, ohw, Mg)))
                goto out;
        }
        y = cvt_concat_axis(c, wcs, Gc, 3);
    }
    if (y && (y = cvt_mk_transpose(c, y, k_to_nchw)) && nsp == 1) y = to3d(c, y);
out:
    if (wcs != wc) tosac_free(wcs, (size_t)Gc * sizeof *wcs);
    return cvt_finish(c, y, s);
}

/* Dilated max pooling, which MAX_POOL2D cannot express: the input (NHWC) is padded with -inf, each
 * kernel tap is one SLICE of the positions it visits at stride 1, the taps are combined with
 * MAXIMUM, and a 1x1 MAX_POOL2D with the node's strides keeps every stride-th position. */
static tosac_value *dilated_max_pool(cvt_ctx *c, tosac_value *x, const win2d *w, tosac_status *s)
{
    int64_t ohw[2], span[2];
    for (int i = 0; i < 2; i++) {
        int64_t ext = x->shape[1 + i] + w->pad[2 * i] + w->pad[2 * i + 1] - ((w->k[i] - 1) * w->dil[i] + 1);
        if (ext < 0) {
            *s = cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "kernel larger than the padded input");
            return NULL;
        }
        ohw[i] = ext / w->st[i] + 1;
        span[i] = (ohw[i] - 1) * w->st[i] + 1;
    }
    if (w->pad[0] || w->pad[1] || w->pad[2] || w->pad[3]) {
        int64_t pads[8] = {0, 0, w->pad[0], w->pad[1], w->pad[2], w->pad[3], 0, 0};
        int64_t ps[4] = {x->shape[0], x->shape[1] + w->pad[0] + w->pad[1], x->shape[2] + w->pad[2] + w->pad[3],
                         x->shape[3]};
        tosac_value *px = cvt_new(c, x->dtype, 4, ps);
        tosac_value *in[3] = {x, NULL, NULL};
        in[1] = cvt_shape_const(c, pads, 8);
        in[2] = cvt_const_scalar(c, TOSAC_DTYPE_FP32, 1, -INFINITY);
        if (!px || !in[1] || !in[2] || !cvt_op(c, TOSAC_OP_PAD, 3, in, px)) return NULL;
        x = px;
    }
    tosac_value *acc = NULL;
    for (int64_t i = 0; i < w->k[0]; i++)
        for (int64_t j = 0; j < w->k[1]; j++) {
            int64_t st[4] = {0, i * w->dil[0], j * w->dil[1], 0}, sz[4] = {x->shape[0], span[0], span[1], x->shape[3]};
            tosac_value *tap = cvt_mk_slice(c, x, st, sz);
            if (!tap) return NULL;
            acc = acc ? cvt_binary(c, TOSAC_OP_MAXIMUM, acc, tap, TOSAC_DTYPE_UNKNOWN) : tap;
            if (!acc) return NULL;
        }
    if (w->st[0] == 1 && w->st[1] == 1) return acc;
    int64_t oshape[4] = {x->shape[0], ohw[0], ohw[1], x->shape[3]}, one[2] = {1, 1}, zero[4] = {0, 0, 0, 0};
    tosac_value *y = cvt_new(c, TOSAC_DTYPE_FP32, 4, oshape);
    tosac_node *n = y ? cvt_op(c, TOSAC_OP_MAX_POOL2D, 1, &acc, y) : NULL;
    if (!n || set_i32v(n, TOSAC_ATTR_MAX_POOL2D_kernel, one, 2) || set_i32v(n, TOSAC_ATTR_MAX_POOL2D_stride, w->st, 2) ||
        set_i32v(n, TOSAC_ATTR_MAX_POOL2D_pad, zero, 4))
        return NULL;
    return y;
}

static tosac_status pool(cvt_ctx *c, bool is_max)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_in_tensor(c, 0, &s);
    if (!x) return s;
    if ((s = cvt_need_type(c, x, true, false, false)) != TOSAC_OK) return s;
    if (x->rank != 4 && x->rank != 3) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "only 1-D and 2-D pooling is supported");
    if (c->node->n_outputs > 1 && c->node->outputs[1][0])
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "the Indices output is not supported");
    if (cvt_attr_i(c, "storage_order", 0)) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "storage_order=1 is not supported");
    const int nsp = x->rank - 2;
    size_t nk;
    const int64_t *ks = cvt_attr_ints(c, "kernel_shape", &nk);
    if (!ks || nk != (size_t)nsp) return cvt_fail(c, TOSAC_ERR_FORMAT, "kernel_shape must have %d entries", nsp);
    int64_t in_hw[2] = {nsp == 2 ? x->shape[2] : 1, x->shape[x->rank - 1]};
    win2d w;
    if ((s = get_window(c, nsp, in_hw, ks, &w, true)) != TOSAC_OK) return s;
    bool dilated = w.dil[0] != 1 || w.dil[1] != 1;
    if (dilated && !is_max) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "dilated average pooling is not supported");
    if (nsp == 1 && !(x = to2d(c, x))) return cvt_nomem(c);
    x = cvt_mk_transpose(c, x, k_to_nhwc);
    if (!x) return cvt_nomem(c);
    tosac_value *y;
    if (dilated) {
        if (!(y = dilated_max_pool(c, x, &w, &s))) return cvt_finish(c, NULL, s);
        y = cvt_mk_transpose(c, y, k_to_nchw);
        return cvt_finish(c, nsp == 1 ? to3d(c, y) : y, TOSAC_OK);
    }
    /* count_include_pad: zeros made explicit by a PAD count in the divisor; only ceil_mode's extra
     * trailing positions stay TOSA padding, outside the divisor as in onnxruntime and PyTorch. */
    bool include_pad = !is_max && cvt_attr_i(c, "count_include_pad", 0);
    if (include_pad && (w.pad[0] || w.pad[1] || w.pad[2] || w.pad[3])) {
        int64_t ext[4] = {0, 0, 0, 0};
        if (cvt_attr_i(c, "ceil_mode", 0)) {
            /* get_window added ceil's extra positions to the trailing pads; keep them apart */
            size_t n;
            const int64_t *v = cvt_attr_ints(c, "pads", &n);
            int64_t p[4] = {0, 0, 0, 0};
            if (v && n == (size_t)(2 * nsp))
                for (int i = 0; i < nsp; i++) p[2 - nsp + i] = v[i], p[4 - nsp + i] = v[nsp + i];
            ext[1] = w.pad[1] - p[2];
            ext[3] = w.pad[3] - p[3];
            w.pad[1] = p[2];
            w.pad[3] = p[3];
        }
        int64_t pads[8] = {0, 0, w.pad[0], w.pad[1], w.pad[2], w.pad[3], 0, 0};
        int64_t ps[4] = {x->shape[0], x->shape[1] + w.pad[0] + w.pad[1], x->shape[2] + w.pad[2] + w.pad[3], x->shape[3]};
        tosac_value *px = cvt_new(c, x->dtype, 4, ps);
        tosac_value *in[3] = {x, NULL, NULL};
        in[1] = cvt_shape_const(c, pads, 8);
        in[2] = cvt_const_scalar(c, TOSAC_DTYPE_FP32, 1, 0.0);
        if (!px || !in[1] || !in[2] || !cvt_op(c, TOSAC_OP_PAD, 3, in, px)) return cvt_nomem(c);
        x = px;
        memcpy(w.pad, ext, sizeof w.pad);
    }
    for (int i = 0; i < 2; i++)
        if (w.pad[2 * i] >= w.k[i] || w.pad[2 * i + 1] >= w.k[i])
            return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "padding not smaller than the kernel");
    int64_t ohw[2];
    if (!(x = fit_window(c, x, &w, ohw))) return TOSAC_ERR_UNSUPPORTED;
    int64_t oshape[4] = {x->shape[0], ohw[0], ohw[1], x->shape[3]};
    y = cvt_new(c, TOSAC_DTYPE_FP32, 4, oshape);
    tosac_node *n;
    if (is_max) {
        n = cvt_op(c, TOSAC_OP_MAX_POOL2D, 1, &x, y);
        if (!n || set_i32v(n, TOSAC_ATTR_MAX_POOL2D_kernel, w.k, 2) || set_i32v(n, TOSAC_ATTR_MAX_POOL2D_stride, w.st, 2) ||
            set_i32v(n, TOSAC_ATTR_MAX_POOL2D_pad, w.pad, 4))
            return cvt_nomem(c);
    } else {
        tosac_value *in[3] = {x, NULL, NULL};
        in[1] = cvt_zp(c, TOSAC_DTYPE_FP32);
        in[2] = cvt_zp(c, TOSAC_DTYPE_FP32);
        n = cvt_op(c, TOSAC_OP_AVG_POOL2D, 3, in, y);
        if (!n || set_i32v(n, TOSAC_ATTR_AVG_POOL2D_kernel, w.k, 2) || set_i32v(n, TOSAC_ATTR_AVG_POOL2D_stride, w.st, 2) ||
            set_i32v(n, TOSAC_ATTR_AVG_POOL2D_pad, w.pad, 4) ||
            tosac_node_set_int(n, TOSAC_ATTR_AVG_POOL2D_acc_type, TOSAC_DTYPE_FP32))
            return cvt_nomem(c);
    }
    y = cvt_mk_transpose(c, y, k_to_nchw);
    return cvt_finish(c, nsp == 1 ? to3d(c, y) : y, TOSAC_OK);
}

tosac_status cvt_max_pool(cvt_ctx *c) { return pool(c, true); }
tosac_status cvt_average_pool(cvt_ctx *c) { return pool(c, false); }

/* GlobalAveragePool / GlobalMaxPool: one REDUCE per spatial axis (any rank >= 3), the sum scaled
 * by 1/N. */
static tosac_status global_pool(cvt_ctx *c, bool is_max)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_in_tensor(c, 0, &s);
    if (!x) return s;
    if ((s = cvt_need_type(c, x, true, false, false)) != TOSAC_OK) return s;
    if (x->rank < 3) return cvt_fail(c, TOSAC_ERR_FORMAT, "rank must be at least 3");
    double n = 1;
    tosac_value *y = x;
    for (int k = 2; k < x->rank; k++) {
        n *= (double)x->shape[k];
        y = cvt_reduce_axis(c, is_max ? TOSAC_OP_REDUCE_MAX : TOSAC_OP_REDUCE_SUM, y, k);
    }
    if (!is_max)
        y = cvt_binary(c, TOSAC_OP_MUL, y, cvt_const_scalar(c, TOSAC_DTYPE_FP32, x->rank, 1.0 / n), TOSAC_DTYPE_UNKNOWN);
    return y ? cvt_set_out(c, 0, y) : cvt_nomem(c);
}

tosac_status cvt_global_average_pool(cvt_ctx *c) { return global_pool(c, false); }
tosac_status cvt_global_max_pool(cvt_ctx *c) { return global_pool(c, true); }

/* Softmax / LogSoftmax (opset 13+) along one axis: d = x - max(x), e = exp(d), sum = sum(e). */
static tosac_status softmax(cvt_ctx *c, bool log)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_in_tensor(c, 0, &s);
    if (!x) return s;
    if ((s = cvt_need_type(c, x, true, false, false)) != TOSAC_OK) return s;
    int axis;
    if ((s = cvt_axis(c, cvt_attr_i(c, "axis", -1), x->rank, &axis)) != TOSAC_OK) return s;
    tosac_value *d = cvt_binary(c, TOSAC_OP_SUB, x, cvt_reduce_axis(c, TOSAC_OP_REDUCE_MAX, x, axis), TOSAC_DTYPE_UNKNOWN);
    tosac_value *e = cvt_unary(c, TOSAC_OP_EXP, d);
    tosac_value *sum = cvt_reduce_axis(c, TOSAC_OP_REDUCE_SUM, e, axis);
    tosac_value *y = log ? cvt_binary(c, TOSAC_OP_SUB, d, cvt_unary(c, TOSAC_OP_LOG, sum), TOSAC_DTYPE_UNKNOWN)
                         : cvt_binary(c, TOSAC_OP_MUL, e, cvt_unary(c, TOSAC_OP_RECIPROCAL, sum), TOSAC_DTYPE_UNKNOWN);
    return y ? cvt_set_out(c, 0, y) : cvt_nomem(c);
}

tosac_status cvt_softmax(cvt_ctx *c) { return softmax(c, false); }
tosac_status cvt_log_softmax(cvt_ctx *c) { return softmax(c, true); }
