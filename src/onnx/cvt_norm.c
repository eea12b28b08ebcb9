/*
 * Normalizations without a TOSA operator of their own (rows at the end of onnx_ops.def), FP32:
 *   LRN: y = x * (bias + alpha/size * s)^-beta, s the sum of x^2 over the channel window
 *        [c - floor((size-1)/2), c + ceil((size-1)/2)]: x^2 PADded with zeros on axis 1 and the
 *        `size` channel SLICEs added; the power as EXP(-beta * LOG(.)) (its base is positive for the
 *        positive bias ONNX models use)
 *   MeanVarianceNormalization: (x - mean) * RSQRT(mean((x - mean)^2) + 1e-9) over `axes`
 *        (default 0, 2, 3), ONNX's function body.
 */
#include "onnx/convert.h"

tosac_status cvt_lrn(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_in_tensor(c, 0, &s);
    if (!x) return s;
    if ((s = cvt_need_type(c, x, true, false, false)) != TOSAC_OK) return s;
    int64_t size = cvt_attr_i(c, "size", 0);
    double alpha = cvt_attr_f(c, "alpha", 1e-4f), beta = cvt_attr_f(c, "beta", 0.75f), bias = cvt_attr_f(c, "bias", 1.0f);
    if (x->rank < 2 || size < 1 || size > 4096) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "needs a channel axis and a size >= 1");
    if (!(bias > 0)) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "bias %g is not positive", bias);
    int r = x->rank;
    int64_t lo = (size - 1) / 2, hi = size - 1 - lo, ps[TOSAC_MAX_RANK], pads[2 * TOSAC_MAX_RANK] = {0};
    for (int k = 0; k < r; k++) ps[k] = x->shape[k] + (k == 1 ? lo + hi : 0);
    pads[2] = lo;
    pads[3] = hi;
    tosac_value *sq = cvt_binary(c, TOSAC_OP_MUL, x, x, TOSAC_DTYPE_UNKNOWN), *p = sq;
    if (sq && lo + hi) {
        p = cvt_new(c, TOSAC_DTYPE_FP32, r, ps);
        tosac_value *in[3] = {sq, cvt_shape_const(c, pads, (uint32_t)(2 * r)), cvt_const_scalar(c, TOSAC_DTYPE_FP32, 1, 0.0)};
        if (!p || !in[1] || !in[2] || !cvt_op(c, TOSAC_OP_PAD, 3, in, p)) return cvt_nomem(c);
    }
    tosac_value *sum = NULL;
    for (int64_t o = 0; o < size && p; o++) {
        int64_t start[TOSAC_MAX_RANK] = {0};
        start[1] = o;
        tosac_value *sl = cvt_new(c, TOSAC_DTYPE_FP32, r, x->shape);
        tosac_value *in[3] = {p, cvt_shape_const(c, start, (uint32_t)r), cvt_shape_const(c, x->shape, (uint32_t)r)};
        if (!sl || !cvt_op(c, TOSAC_OP_SLICE, 3, in, sl)) return cvt_nomem(c);
        sum = sum ? cvt_binary(c, TOSAC_OP_ADD, sum, sl, TOSAC_DTYPE_UNKNOWN) : sl;
    }
    tosac_value *base = cvt_binary(c, TOSAC_OP_ADD,
                                   cvt_binary(c, TOSAC_OP_MUL, sum, cvt_const_scalar(c, TOSAC_DTYPE_FP32, r, alpha / (double)size),
                                              TOSAC_DTYPE_UNKNOWN),
                                   cvt_const_scalar(c, TOSAC_DTYPE_FP32, r, bias), TOSAC_DTYPE_UNKNOWN);
    tosac_value *f = cvt_unary(c, TOSAC_OP_EXP,
                               cvt_binary(c, TOSAC_OP_MUL, cvt_unary(c, TOSAC_OP_LOG, base),
                                          cvt_const_scalar(c, TOSAC_DTYPE_FP32, r, -beta), TOSAC_DTYPE_UNKNOWN));
    return cvt_finish(c, cvt_binary(c, TOSAC_OP_MUL, x, f, TOSAC_DTYPE_UNKNOWN), s);
}

tosac_status cvt_mean_variance_normalization(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_in_tensor(c, 0, &s);
    if (!x) return s;
    if ((s = cvt_need_type(c, x, true, false, false)) != TOSAC_OK) return s;
    static const int64_t k_default[3] = {0, 2, 3};
    size_t na = 0;
    const int64_t *axes = cvt_attr_ints(c, "axes", &na);
    if (!axes) {
        axes = k_default;
        na = 3;
    }
    bool on[TOSAC_MAX_RANK] = {false};
    double n = 1;
    for (size_t k = 0; k < na; k++) {
        int a;
        if ((s = cvt_axis(c, axes[k], x->rank, &a)) != TOSAC_OK) return s;
        if (!on[a]) n *= (double)x->shape[a];
        on[a] = true;
    }
    int r = x->rank;
    tosac_value *m = x;
    for (int a = 0; a < r && m; a++)
        if (on[a]) m = cvt_reduce_axis(c, TOSAC_OP_REDUCE_SUM, m, a);
    m = cvt_binary(c, TOSAC_OP_MUL, m, cvt_const_scalar(c, TOSAC_DTYPE_FP32, r, 1.0 / n), TOSAC_DTYPE_UNKNOWN);
    tosac_value *d = cvt_binary(c, TOSAC_OP_SUB, x, m, TOSAC_DTYPE_UNKNOWN);
    tosac_value *v = cvt_binary(c, TOSAC_OP_MUL, d, d, TOSAC_DTYPE_UNKNOWN);
    for (int a = 0; a < r && v; a++)
        if (on[a]) v = cvt_reduce_axis(c, TOSAC_OP_REDUCE_SUM, v, a);
    v = cvt_binary(c, TOSAC_OP_MUL, v, cvt_const_scalar(c, TOSAC_DTYPE_FP32, r, 1.0 / n), TOSAC_DTYPE_UNKNOWN);
    tosac_value *inv = cvt_unary(c, TOSAC_OP_RSQRT,
                                 cvt_binary(c, TOSAC_OP_ADD, v, cvt_const_scalar(c, TOSAC_DTYPE_FP32, r, 1e-9), TOSAC_DTYPE_UNKNOWN));
    return cvt_finish(c, cvt_binary(c, TOSAC_OP_MUL, d, inv, TOSAC_DTYPE_UNKNOWN), s);
}
