/* Converters for ONNX neural-network ops: MatMul, Gemm, Conv, MaxPool, AveragePool,
 * GlobalAveragePool, Softmax. NCHW stays the graph layout: CONV2D and the pools get NCHW->NHWC and
 * NHWC->NCHW TRANSPOSEs around them; constant weights are permuted at compile time. */
#include <math.h>
#include <string.h>

#include "onnx/convert.h"

static const int32_t k_to_nhwc[4] = {0, 2, 3, 1}, k_to_nchw[4] = {0, 3, 1, 2};

/* MATMUL of rank-3 a [B,M,K] and b [B,K,N]. */
static tosac_value *matmul3(cvt_ctx *c, tosac_value *a, tosac_value *b)
{
    if (!a || !b) return NULL;
    int64_t shape[3] = {a->shape[0], a->shape[1], b->shape[2]};
    tosac_value *out = cvt_new(c, TOSAC_DTYPE_FP32, 3, shape);
    tosac_value *in[4] = {a, b, cvt_zp(c, TOSAC_DTYPE_FP32), cvt_zp(c, TOSAC_DTYPE_FP32)};
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
        r = matmul3(c, cvt_mk_reshape(c, a, 3, sa), cvt_mk_reshape(c, b, 3, sb));
        for (int k = 0; k < ra - 1; k++) oshape[orank++] = a->shape[k];
    } else if (ra == rb && ba == bb) {
        for (int k = 0; k < ra - 2; k++)
            if (a->shape[k] != b->shape[k]) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "batch broadcasting is not supported");
        int64_t sa[3] = {ba, M, K}, sb[3] = {ba, K, N};
        r = matmul3(c, cvt_mk_reshape(c, a, 3, sa), cvt_mk_reshape(c, b, 3, sb));
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
    tosac_value *y = matmul3(c, cvt_mk_reshape(c, a, 3, sa), cvt_mk_reshape(c, b, 3, sb));
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

/* Spatial parameters shared by Conv and the pools (2-D). pad = TOSA order {top, bottom, left, right}. */
typedef struct win2d {
    int64_t k[2], st[2], dil[2], pad[4];
} win2d;

static tosac_status get_window(cvt_ctx *c, const int64_t *in_hw, const int64_t *kernel, win2d *w, bool pool)
{
    size_t n;
    const int64_t *v;
    for (int i = 0; i < 2; i++) {
        w->k[i] = kernel[i];
        w->st[i] = w->dil[i] = 1;
    }
    if ((v = cvt_attr_ints(c, "strides", &n)) && n == 2) w->st[0] = v[0], w->st[1] = v[1];
    if ((v = cvt_attr_ints(c, "dilations", &n)) && n == 2) w->dil[0] = v[0], w->dil[1] = v[1];
    if (pool && (w->dil[0] != 1 || w->dil[1] != 1)) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "dilated pooling is not supported");
    if (cvt_attr_i(c, "ceil_mode", 0)) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "ceil_mode=1 is not supported");
    int64_t p[4] = {0, 0, 0, 0}; /* ONNX: h_begin, w_begin, h_end, w_end */
    if ((v = cvt_attr_ints(c, "pads", &n)) && n == 4) memcpy(p, v, sizeof p);
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
        tosac_value *out = cvt_new(c, x->dtype, 4, sz);
        tosac_value *in[3] = {x, cvt_shape_const(c, st, 4), cvt_shape_const(c, sz, 4)};
        return cvt_op(c, TOSAC_OP_SLICE, 3, in, out) ? out : NULL;
    }
    return x;
}

static tosac_status set_i32v(tosac_node *n, unsigned id, const int64_t *v, int count)
{
    int32_t b[4];
    for (int i = 0; i < count; i++) b[i] = (int32_t)v[i];
    return tosac_node_set_ints(n, id, b, (uint32_t)count);
}

tosac_status cvt_conv(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *xv = cvt_in_req(c, 0, &s), *wv = xv ? cvt_in_req(c, 1, &s) : NULL;
    if (!wv) return s;
    if (xv->rank != 4 || wv->rank != 4) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "only 2-D convolution is supported");
    if (xv->dt != TOSAC_DTYPE_FP32) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "only FLOAT convolution is supported");
    if (!wv->is_const || !wv->f)
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "input '%s' must be a constant (bind it with --bind %s=FILE.npy)",
                        wv->name, wv->name);
    int64_t C = xv->shape[1], M = wv->shape[0], Cg = wv->shape[1], KH = wv->shape[2], KW = wv->shape[3];
    int64_t G = cvt_attr_i(c, "group", 1);
    bool depthwise = G > 1 && G == C && Cg == 1 && M % C == 0;
    if (!(G == 1 && Cg == C) && !depthwise)
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "group=%lld is not supported (only 1 or depthwise)", (long long)G);
    size_t nk;
    const int64_t *ks = cvt_attr_ints(c, "kernel_shape", &nk);
    if (ks && (nk != 2 || ks[0] != KH || ks[1] != KW)) return cvt_fail(c, TOSAC_ERR_FORMAT, "kernel_shape disagrees with W");
    int64_t kern[2] = {KH, KW};
    win2d w;
    if ((s = get_window(c, xv->shape + 2, kern, &w, false)) != TOSAC_OK) return s;
    /* weights: OHWI (CONV2D) or HWCM (DEPTHWISE_CONV2D) */
    size_t nw = (size_t)wv->numel;
    float *wt = tosac_arena_alloc(&c->arena, nw * 4 + 1);
    if (!wt) return cvt_nomem(c);
    int64_t wshape[4];
    if (!depthwise) {
        wshape[0] = M, wshape[1] = KH, wshape[2] = KW, wshape[3] = C;
        for (int64_t o = 0; o < M; o++)
            for (int64_t i = 0; i < C; i++)
                for (int64_t h = 0; h < KH; h++)
                    for (int64_t x = 0; x < KW; x++)
                        wt[((o * KH + h) * KW + x) * C + i] = wv->f[((o * C + i) * KH + h) * KW + x];
    } else {
        int64_t mult = M / C;
        wshape[0] = KH, wshape[1] = KW, wshape[2] = C, wshape[3] = mult;
        for (int64_t ch = 0; ch < C; ch++)
            for (int64_t m = 0; m < mult; m++)
                for (int64_t h = 0; h < KH; h++)
                    for (int64_t x = 0; x < KW; x++)
                        wt[((h * KW + x) * C + ch) * mult + m] = wv->f[((ch * mult + m) * KH + h) * KW + x];
    }
    tosac_value *bias;
    if ((s = cvt_bias_f32(c, 2, M, &bias)) != TOSAC_OK) return s;
    tosac_value *x = cvt_tensor(c, xv, &s);
    if (!x) return s;
    x = cvt_mk_transpose(c, x, k_to_nhwc);
    int64_t ohw[2];
    if (!x || !(x = fit_window(c, x, &w, ohw))) return s ? s : TOSAC_ERR_UNSUPPORTED;
    int64_t oshape[4] = {x->shape[0], ohw[0], ohw[1], M};
    tosac_value *y = cvt_new(c, TOSAC_DTYPE_FP32, 4, oshape);
    tosac_value *in[5] = {x, cvt_const_f32(c, 4, wshape, wt), bias, cvt_zp(c, TOSAC_DTYPE_FP32),
                          cvt_zp(c, TOSAC_DTYPE_FP32)};
    tosac_op op = depthwise ? TOSAC_OP_DEPTHWISE_CONV2D : TOSAC_OP_CONV2D;
    tosac_node *n = cvt_op(c, op, 5, in, y);
    if (!n) return cvt_nomem(c);
    /* CONV2D and DEPTHWISE_CONV2D share field ids */
    if (set_i32v(n, TOSAC_ATTR_CONV2D_pad, w.pad, 4) || set_i32v(n, TOSAC_ATTR_CONV2D_stride, w.st, 2) ||
        set_i32v(n, TOSAC_ATTR_CONV2D_dilation, w.dil, 2) ||
        tosac_node_set_int(n, TOSAC_ATTR_CONV2D_local_bound, 0) ||
        tosac_node_set_int(n, TOSAC_ATTR_CONV2D_acc_type, TOSAC_DTYPE_FP32))
        return cvt_nomem(c);
    return cvt_set_out(c, 0, cvt_mk_transpose(c, y, k_to_nchw));
}

static tosac_status pool(cvt_ctx *c, bool is_max)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_in_tensor(c, 0, &s);
    if (!x) return s;
    if ((s = cvt_need_type(c, x, true, false, false)) != TOSAC_OK) return s;
    if (x->rank != 4) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "only 2-D pooling is supported");
    if (c->node->n_outputs > 1 && c->node->outputs[1][0])
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "the Indices output is not supported");
    if (cvt_attr_i(c, "storage_order", 0)) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "storage_order=1 is not supported");
    size_t nk;
    const int64_t *ks = cvt_attr_ints(c, "kernel_shape", &nk);
    if (!ks || nk != 2) return cvt_fail(c, TOSAC_ERR_FORMAT, "kernel_shape must have 2 entries");
    win2d w;
    if ((s = get_window(c, x->shape + 2, ks, &w, true)) != TOSAC_OK) return s;
    x = cvt_mk_transpose(c, x, k_to_nhwc);
    if (!x) return cvt_nomem(c);
    bool include_pad = !is_max && cvt_attr_i(c, "count_include_pad", 0);
    if (include_pad && (w.pad[0] || w.pad[1] || w.pad[2] || w.pad[3])) {
        int64_t pads[8] = {0, 0, w.pad[0], w.pad[1], w.pad[2], w.pad[3], 0, 0};
        int64_t ps[4] = {x->shape[0], x->shape[1] + w.pad[0] + w.pad[1], x->shape[2] + w.pad[2] + w.pad[3], x->shape[3]};
        tosac_value *px = cvt_new(c, x->dtype, 4, ps);
        tosac_value *in[3] = {x, cvt_shape_const(c, pads, 8), cvt_const_scalar(c, TOSAC_DTYPE_FP32, 1, 0.0)};
        if (!cvt_op(c, TOSAC_OP_PAD, 3, in, px)) return cvt_nomem(c);
        x = px;
        memset(w.pad, 0, sizeof w.pad);
    }
    for (int i = 0; i < 2; i++)
        if (w.pad[2 * i] >= w.k[i] || w.pad[2 * i + 1] >= w.k[i])
            return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "padding not smaller than the kernel");
    int64_t ohw[2];
    if (!(x = fit_window(c, x, &w, ohw))) return TOSAC_ERR_UNSUPPORTED;
    int64_t oshape[4] = {x->shape[0], ohw[0], ohw[1], x->shape[3]};
    tosac_value *y = cvt_new(c, TOSAC_DTYPE_FP32, 4, oshape);
    tosac_node *n;
    if (is_max) {
        n = cvt_op(c, TOSAC_OP_MAX_POOL2D, 1, &x, y);
        if (!n || set_i32v(n, TOSAC_ATTR_MAX_POOL2D_kernel, w.k, 2) || set_i32v(n, TOSAC_ATTR_MAX_POOL2D_stride, w.st, 2) ||
            set_i32v(n, TOSAC_ATTR_MAX_POOL2D_pad, w.pad, 4))
            return cvt_nomem(c);
    } else {
        tosac_value *in[3] = {x, cvt_zp(c, TOSAC_DTYPE_FP32), cvt_zp(c, TOSAC_DTYPE_FP32)};
        n = cvt_op(c, TOSAC_OP_AVG_POOL2D, 3, in, y);
        if (!n || set_i32v(n, TOSAC_ATTR_AVG_POOL2D_kernel, w.k, 2) || set_i32v(n, TOSAC_ATTR_AVG_POOL2D_stride, w.st, 2) ||
            set_i32v(n, TOSAC_ATTR_AVG_POOL2D_pad, w.pad, 4) ||
            tosac_node_set_int(n, TOSAC_ATTR_AVG_POOL2D_acc_type, TOSAC_DTYPE_FP32))
            return cvt_nomem(c);
    }
    return cvt_set_out(c, 0, cvt_mk_transpose(c, y, k_to_nchw));
}

tosac_status cvt_max_pool(cvt_ctx *c) { return pool(c, true); }
tosac_status cvt_average_pool(cvt_ctx *c) { return pool(c, false); }

tosac_status cvt_global_average_pool(cvt_ctx *c)
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
        y = cvt_reduce_axis(c, TOSAC_OP_REDUCE_SUM, y, k);
    }
    y = cvt_binary(c, TOSAC_OP_MUL, y, cvt_const_scalar(c, TOSAC_DTYPE_FP32, x->rank, 1.0 / n), TOSAC_DTYPE_UNKNOWN);
    return y ? cvt_set_out(c, 0, y) : cvt_nomem(c);
}

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
