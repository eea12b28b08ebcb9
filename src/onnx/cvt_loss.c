/*
 * Loss operators (rows at the end of onnx_ops.def): NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss (LogSoftmax over the class axis, then the same loss).
 *
 * With classes on axis 1 of x [N, C, d1..dk] and targets t [N, d1..dk] (run-time INT32), the
 * class pick is a one-hot mask EQUAL(t, iota) with iota [1, C, 1..] the class index:
 *   picked = REDUCE_SUM(SELECT(mask, x, 0), axis 1),  w = REDUCE_SUM(SELECT(mask, weight, 0), axis 1)
 *   loss = -picked * w, and w = 0 where t == ignore_index (a target outside 0..C-1 selects nothing)
 * reduction "none" keeps [N, d1..dk]; "sum" adds everything; "mean" divides that sum by the sum of
 * w, as ONNX defines it (the weighted mean over the targets not ignored).
 */
#include <string.h>

#include "onnx/convert.h"

/* Sum of x over every axis, as a rank-0 tensor. */
static tosac_value *sum_all(cvt_ctx *c, tosac_value *x)
{
    for (int k = 0; x && k < x->rank; k++) x = cvt_reduce_axis(c, TOSAC_OP_REDUCE_SUM, x, k);
    return cvt_mk_reshape(c, x, 0, NULL);
}

/* The loss of log-probabilities x (inputs 1, 2 of the node: targets, optional weights); sets
   output 0. */
static tosac_status nll(cvt_ctx *c, tosac_value *x)
{
    tosac_status s = TOSAC_OK;
    tosac_value *t = cvt_in_tensor(c, 1, &s);
    if (!x || !t) return s != TOSAC_OK ? s : cvt_nomem(c);
    if ((s = cvt_need_type(c, x, true, false, false)) != TOSAC_OK) return s;
    if ((s = cvt_need_type(c, t, false, true, false)) != TOSAC_OK) return s;
    int r = x->rank;
    if (r < 2 || t->rank != r - 1 || t->shape[0] != x->shape[0])
        return cvt_fail(c, TOSAC_ERR_FORMAT, "the target must have the input's shape without the class axis 1");
    for (int k = 2; k < r; k++)
        if (t->shape[k - 1] != x->shape[k])
            return cvt_fail(c, TOSAC_ERR_FORMAT, "the target must have the input's shape without the class axis 1");
    const char *red = cvt_attr_s(c, "reduction", "mean");
    if (strcmp(red, "none") && strcmp(red, "sum") && strcmp(red, "mean"))
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "reduction '%s' is not one of none, sum, mean", red);
    int64_t C = x->shape[1], shape[TOSAC_MAX_RANK], cls[TOSAC_MAX_RANK];
    for (int k = 0; k < r; k++) {
        shape[k] = k == 1 ? 1 : x->shape[k];
        cls[k] = k == 1 ? C : 1;
    }
    int32_t *iota = (int32_t *)cvt_const_buffer(c, (size_t)C);
    if (!iota) return cvt_nomem(c);
    for (int64_t k = 0; k < C; k++) iota[k] = (int32_t)k;
    tosac_value *te = cvt_mk_reshape(c, t, r, shape);
    tosac_value *mask = cvt_binary(c, TOSAC_OP_EQUAL, te, cvt_const_i32(c, r, cls, iota), TOSAC_DTYPE_BOOL);
    tosac_value *zero = cvt_const_scalar(c, TOSAC_DTYPE_FP32, r, 0.0);
    tosac_value *picked = cvt_reduce_axis(c, TOSAC_OP_REDUCE_SUM, cvt_select(c, mask, x, zero, &s), 1);
    cvt_val *wv = cvt_in(c, 2);
    tosac_value *wt = wv ? cvt_tensor(c, wv, &s) : cvt_const_scalar(c, TOSAC_DTYPE_FP32, r, 1.0);
    if (wt && wv && (wt->rank != 1 || wt->shape[0] != C))
        return cvt_fail(c, TOSAC_ERR_FORMAT, "the weight must have one entry per class (%lld)", (long long)C);
    if (wt && wv) wt = cvt_mk_reshape(c, wt, r, cls);
    tosac_value *w = cvt_reduce_axis(c, TOSAC_OP_REDUCE_SUM, cvt_select(c, mask, wt, zero, &s), 1);
    int64_t ignore = cvt_attr_i(c, "ignore_index", INT64_MIN);
    if (ignore != INT64_MIN && ignore >= INT32_MIN && ignore <= INT32_MAX) {
        tosac_value *skip = cvt_binary(c, TOSAC_OP_EQUAL, te, cvt_const_scalar(c, TOSAC_DTYPE_INT32, r, (double)ignore),
                                       TOSAC_DTYPE_BOOL);
        w = cvt_select(c, skip, zero, w, &s);
    }
    tosac_value *loss = cvt_binary(c, TOSAC_OP_MUL, cvt_binary(c, TOSAC_OP_MUL, picked, w, TOSAC_DTYPE_UNKNOWN),
                                   cvt_const_scalar(c, TOSAC_DTYPE_FP32, r, -1.0), TOSAC_DTYPE_UNKNOWN);
    tosac_value *y;
    if (!strcmp(red, "none")) {
        y = cvt_mk_reshape(c, loss, t->rank, t->shape);
    } else {
        y = sum_all(c, loss);
        if (!strcmp(red, "mean"))
            y = cvt_binary(c, TOSAC_OP_MUL, y, cvt_unary(c, TOSAC_OP_RECIPROCAL, sum_all(c, w)), TOSAC_DTYPE_UNKNOWN);
    }
    return cvt_finish(c, y, s);
}

tosac_status cvt_nll_loss(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_in_tensor(c, 0, &s);
    return x ? nll(c, x) : s;
}

/* LogSoftmax over the class axis (x - max - log(sum(exp(x - max)))), then the loss; output 1 is
   the log-probabilities. */
tosac_status cvt_sce_loss(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_in_tensor(c, 0, &s);
    if (!x) return s;
    if ((s = cvt_need_type(c, x, true, false, false)) != TOSAC_OK) return s;
    if (x->rank < 2) return cvt_fail(c, TOSAC_ERR_FORMAT, "scores need a class axis 1");
    tosac_value *d = cvt_binary(c, TOSAC_OP_SUB, x, cvt_reduce_axis(c, TOSAC_OP_REDUCE_MAX, x, 1), TOSAC_DTYPE_UNKNOWN);
    tosac_value *sum = cvt_reduce_axis(c, TOSAC_OP_REDUCE_SUM, cvt_unary(c, TOSAC_OP_EXP, d), 1);
    tosac_value *logp = cvt_binary(c, TOSAC_OP_SUB, d, cvt_unary(c, TOSAC_OP_LOG, sum), TOSAC_DTYPE_UNKNOWN);
    if (!logp) return cvt_nomem(c);
    if (c->node->n_outputs > 1 && c->node->outputs[1][0] && (s = cvt_set_out(c, 1, logp)) != TOSAC_OK) return s;
    return nll(c, logp);
}
