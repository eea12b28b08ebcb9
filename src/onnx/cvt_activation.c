/*
 * Converters for ONNX activations, normalisations, Round/Sign/Mod, variadic Sum/Mean, the
 * L1/L2/LogSum/LogSumExp reductions, ArgMax/ArgMin and the opset 1-12 Softmax/LogSoftmax
 * (rows in onnx_ops_act.def). Everything is FP32 (Mod/Sign/PRelu also INT32) and decomposed into
 * TOSA elementwise ops, REDUCE_SUM/REDUCE_MAX (keepdims) and RESHAPE.
 */
#include <math.h>
#include <string.h>

#include "onnx/convert.h"

/* ---- small helpers ---- */

static tosac_status only_fp(cvt_ctx *c, const tosac_value *x)
{
    if (x->dtype == TOSAC_DTYPE_FP32) return TOSAC_OK;
    return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "element type %s is not supported here (FP32 only)",
                    tosac_dtype_name(x->dtype));
}

/* Input 0 as an FP32 tensor (error otherwise). */
static tosac_value *fp_in0(cvt_ctx *c, tosac_status *s)
{
    tosac_value *x = cvt_in_tensor(c, 0, s);
    if (x && (*s = only_fp(c, x)) != TOSAC_OK) return NULL;
    return x;
}

/* Only output 0 is supported: any other non-empty output is an error. */
static tosac_status one_output(cvt_ctx *c)
{
    for (size_t k = 1; k < c->node->n_outputs; k++)
        if (c->node->outputs[k][0]) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "output %zu is not supported", k);
    return TOSAC_OK;
}

static tosac_value *kf(cvt_ctx *c, const tosac_value *like, double v)
{
    return like ? cvt_const_scalar(c, like->dtype, like->rank, v) : NULL;
}
static tosac_value *bin(cvt_ctx *c, tosac_op op, tosac_value *a, tosac_value *b)
{
    return cvt_binary(c, op, a, b, TOSAC_DTYPE_UNKNOWN);
}
static tosac_value *cmp(cvt_ctx *c, tosac_op op, tosac_value *a, tosac_value *b)
{
    return cvt_binary(c, op, a, b, TOSAC_DTYPE_BOOL);
}
static tosac_value *mulk(cvt_ctx *c, tosac_value *x, double k) { return bin(c, TOSAC_OP_MUL, x, kf(c, x, k)); }
static tosac_value *addk(cvt_ctx *c, tosac_value *x, double k) { return bin(c, TOSAC_OP_ADD, x, kf(c, x, k)); }

/* SELECT(p, a, b) with numpy broadcasting (cvt_select; failures are already reported). */
static tosac_value *sel(cvt_ctx *c, tosac_value *p, tosac_value *a, tosac_value *b)
{
    tosac_status s = TOSAC_OK;
    return cvt_select(c, p, a, b, &s);
}

/* Reduction over every axis marked in red (keepdims). */
static tosac_value *redn(cvt_ctx *c, tosac_op op, tosac_value *x, const bool *red)
{
    for (int a = 0; x && a < x->rank; a++)
        if (red[a]) x = cvt_reduce_axis(c, op, x, a);
    return x;
}

/* (x - mean) * rsqrt(var + eps) over the axes in red; mean and 1/stddev (keepdims) when asked. */
static tosac_value *normalize_var(cvt_ctx *c, tosac_value *x, const bool *red, float eps, tosac_value **mean,
                                  tosac_value **inv, tosac_value **variance)
{
    double count = 1;
    for (int a = 0; a < x->rank; a++)
        if (red[a]) count *= (double)x->shape[a];
    tosac_value *m = mulk(c, redn(c, TOSAC_OP_REDUCE_SUM, x, red), 1.0 / count);
    tosac_value *d = bin(c, TOSAC_OP_SUB, x, m);
    tosac_value *var = mulk(c, redn(c, TOSAC_OP_REDUCE_SUM, bin(c, TOSAC_OP_MUL, d, d), red), 1.0 / count);
    tosac_value *is = cvt_unary(c, TOSAC_OP_RSQRT, addk(c, var, eps));
    if (mean) *mean = m;
    if (inv) *inv = is;
    if (variance) *variance = var;
    return bin(c, TOSAC_OP_MUL, d, is);
}

static tosac_value *normalize(cvt_ctx *c, tosac_value *x, const bool *red, float eps, tosac_value **mean,
                              tosac_value **inv)
{
    return normalize_var(c, x, red, eps, mean, inv, NULL);
}

/* A per-channel vector [C] reshaped to [1, C, 1, ...] of the given rank. */
static tosac_value *per_channel(cvt_ctx *c, size_t i, int64_t ch, int rank, tosac_status *s)
{
    tosac_value *p = cvt_in_tensor(c, i, s);
    if (!p) return NULL;
    if (p->dtype != TOSAC_DTYPE_FP32) {
        *s = only_fp(c, p);
        return NULL;
    }
    int64_t n = 1;
    for (int k = 0; k < p->rank; k++) n *= p->shape[k];
    if (n != ch) {
        *s = cvt_fail(c, TOSAC_ERR_FORMAT, "input %zu has %lld elements, expected %lld", i, (long long)n,
                      (long long)ch);
        return NULL;
    }
    int64_t shape[TOSAC_MAX_RANK];
    for (int k = 0; k < rank; k++) shape[k] = k == 1 ? ch : 1;
    return cvt_mk_reshape(c, p, rank, shape);
}

/* ---- activations ---- */

/* alpha * (exp(x) - 1) for x <= 0, x otherwise */
static tosac_value *elu(cvt_ctx *c, tosac_value *x, float alpha)
{
    tosac_value *neg = mulk(c, addk(c, cvt_unary(c, TOSAC_OP_EXP, x), -1.0), alpha);
    return sel(c, cmp(c, TOSAC_OP_GREATER, x, kf(c, x, 0.0)), x, neg);
}

tosac_status cvt_elu(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = fp_in0(c, &s);
    if (!x) return s;
    return cvt_finish(c, elu(c, x, cvt_attr_f(c, "alpha", 1.0f)), s);
}

tosac_status cvt_selu(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = fp_in0(c, &s);
    if (!x) return s;
    float alpha = cvt_attr_f(c, "alpha", 1.67326319217681884765625f);
    float gamma = cvt_attr_f(c, "gamma", 1.05070102214813232421875f);
    return cvt_finish(c, mulk(c, elu(c, x, alpha), gamma), s);
}

/* Celu(x) = max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) */
tosac_status cvt_celu(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = fp_in0(c, &s);
    if (!x) return s;
    float alpha = cvt_attr_f(c, "alpha", 1.0f);
    if (alpha == 0.0f) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "alpha = 0 is not supported");
    tosac_value *e = mulk(c, addk(c, cvt_unary(c, TOSAC_OP_EXP, mulk(c, x, 1.0 / alpha)), -1.0), alpha);
    tosac_value *pos = cvt_clamp(c, x, 0.0f, INFINITY), *neg = cvt_clamp(c, e, -INFINITY, 0.0f);
    return cvt_finish(c, bin(c, TOSAC_OP_ADD, pos, neg), s);
}

/* HardSigmoid(x) = clamp(alpha * x + beta, 0, 1) */
tosac_status cvt_hard_sigmoid(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = fp_in0(c, &s);
    if (!x) return s;
    float alpha = cvt_attr_f(c, "alpha", 0.2f), beta = cvt_attr_f(c, "beta", 0.5f);
    return cvt_finish(c, cvt_clamp(c, addk(c, mulk(c, x, alpha), beta), 0.0f, 1.0f), s);
}

/* HardSwish(x) = x * clamp(x / 6 + 1/2, 0, 1) */
tosac_status cvt_hard_swish(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = fp_in0(c, &s);
    if (!x) return s;
    tosac_value *h = cvt_clamp(c, addk(c, mulk(c, x, 1.0 / 6.0), 0.5), 0.0f, 1.0f);
    return cvt_finish(c, bin(c, TOSAC_OP_MUL, x, h), s);
}

/* Softplus(x) = log(1 + exp(x)) = max(x, 0) + log(1 + exp(-|x|)) (no overflow) */
static tosac_value *softplus(cvt_ctx *c, tosac_value *x)
{
    tosac_value *e = cvt_unary(c, TOSAC_OP_EXP, cvt_unary(c, TOSAC_OP_NEGATE, cvt_unary(c, TOSAC_OP_ABS, x)));
    tosac_value *pos = cvt_clamp(c, x, 0.0f, INFINITY);
    return bin(c, TOSAC_OP_ADD, pos, cvt_unary(c, TOSAC_OP_LOG, addk(c, e, 1.0)));
}

tosac_status cvt_softplus(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = fp_in0(c, &s);
    if (!x) return s;
    return cvt_finish(c, softplus(c, x), s);
}

/* Softsign(x) = x / (1 + |x|) */
tosac_status cvt_softsign(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = fp_in0(c, &s);
    if (!x) return s;
    tosac_value *r = cvt_unary(c, TOSAC_OP_RECIPROCAL, addk(c, cvt_unary(c, TOSAC_OP_ABS, x), 1.0));
    return cvt_finish(c, bin(c, TOSAC_OP_MUL, x, r), s);
}

/* Mish(x) = x * tanh(softplus(x)) */
tosac_status cvt_mish(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = fp_in0(c, &s);
    if (!x) return s;
    return cvt_finish(c, bin(c, TOSAC_OP_MUL, x, cvt_unary(c, TOSAC_OP_TANH, softplus(c, x))), s);
}

/* Gelu: 0.5 x (1 + erf(x / sqrt 2)), or with approximate="tanh"
   0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) */
tosac_status cvt_gelu(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = fp_in0(c, &s);
    if (!x) return s;
    const char *ap = cvt_attr_s(c, "approximate", "none");
    tosac_value *t;
    if (strcmp(ap, "none") == 0) {
        t = cvt_unary(c, TOSAC_OP_ERF, mulk(c, x, 0.70710678118654752440));
    } else if (strcmp(ap, "tanh") == 0) {
        tosac_value *x3 = bin(c, TOSAC_OP_MUL, bin(c, TOSAC_OP_MUL, x, x), x);
        tosac_value *in = mulk(c, bin(c, TOSAC_OP_ADD, x, mulk(c, x3, 0.044715)), 0.79788456080286535588);
        t = cvt_unary(c, TOSAC_OP_TANH, in);
    } else {
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "approximate='%s' is not supported", ap);
    }
    tosac_value *hx = mulk(c, x, 0.5);
    return cvt_finish(c, bin(c, TOSAC_OP_MUL, hx, addk(c, t, 1.0)), s);
}

/* PRelu(x) = x < 0 ? slope * x : x (slope broadcast to x) */
tosac_status cvt_prelu(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_in_tensor(c, 0, &s), *sl = x ? cvt_in_tensor(c, 1, &s) : NULL;
    if (!sl) return s;
    if (x->dtype != TOSAC_DTYPE_FP32 && x->dtype != TOSAC_DTYPE_INT32)
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "element type %s is not supported here", tosac_dtype_name(x->dtype));
    if (sl->dtype != x->dtype) return cvt_fail(c, TOSAC_ERR_FORMAT, "operand element types differ");
    tosac_value *neg = cmp(c, TOSAC_OP_GREATER, kf(c, x, 0.0), x);
    return cvt_finish(c, sel(c, neg, bin(c, TOSAC_OP_MUL, x, sl), x), s);
}

/* ThresholdedRelu(x) = x > alpha ? x : 0 */
tosac_status cvt_thresholded_relu(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = fp_in0(c, &s);
    if (!x) return s;
    float alpha = cvt_attr_f(c, "alpha", 1.0f);
    tosac_value *above = cmp(c, TOSAC_OP_GREATER, x, kf(c, x, alpha));
    return cvt_finish(c, sel(c, above, x, kf(c, x, 0.0)), s);
}

/* Sign(x) = x > 0 ? 1 : x < 0 ? -1 : x * 0 (keeps NaN) */
tosac_status cvt_sign(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_in_tensor(c, 0, &s);
    if (!x) return s;
    if (x->dtype != TOSAC_DTYPE_FP32 && x->dtype != TOSAC_DTYPE_INT32)
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "element type %s is not supported here", tosac_dtype_name(x->dtype));
    tosac_value *zero = x->dtype == TOSAC_DTYPE_FP32 ? mulk(c, x, 0.0) : kf(c, x, 0.0);
    tosac_value *is_neg = cmp(c, TOSAC_OP_GREATER, kf(c, x, 0.0), x);
    tosac_value *lt = sel(c, is_neg, kf(c, x, -1.0), zero);
    tosac_value *is_pos = cmp(c, TOSAC_OP_GREATER, x, kf(c, x, 0.0));
    return cvt_finish(c, sel(c, is_pos, kf(c, x, 1.0), lt), s);
}

/* Round half to even: f = floor(x), d = x - f; d > .5 -> f + 1; d == .5 -> f if f even else f + 1 */
tosac_status cvt_round(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = fp_in0(c, &s);
    if (!x) return s;
    tosac_value *f = cvt_unary(c, TOSAC_OP_FLOOR, x);
    tosac_value *d = bin(c, TOSAC_OP_SUB, x, f);
    tosac_value *up = addk(c, f, 1.0);
    tosac_value *even = cmp(c, TOSAC_OP_EQUAL, mulk(c, cvt_unary(c, TOSAC_OP_FLOOR, mulk(c, f, 0.5)), 2.0), f);
    tosac_value *tie = cmp(c, TOSAC_OP_EQUAL, d, kf(c, d, 0.5));
    tosac_value *half = sel(c, tie, sel(c, even, f, up), f);
    return cvt_finish(c, sel(c, cmp(c, TOSAC_OP_GREATER, d, kf(c, d, 0.5)), up, half), s);
}

/* Mod: integers via INTDIV (truncating) with a sign fix for fmod=0; floats (fmod=1 only) as
   sign(a) * (|a| - floor(|a| / |b|) * |b|), corrected into [0, |b|). */
tosac_status cvt_mod(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *a = cvt_in_tensor(c, 0, &s), *b = a ? cvt_in_tensor(c, 1, &s) : NULL;
    if (!b) return s;
    if (a->dtype != b->dtype) return cvt_fail(c, TOSAC_ERR_FORMAT, "operand element types differ");
    int64_t fm = cvt_attr_i(c, "fmod", 0);
    if (fm != 0 && fm != 1) return cvt_fail(c, TOSAC_ERR_FORMAT, "fmod must be 0 or 1");
    if (a->dtype == TOSAC_DTYPE_INT32) {
        tosac_value *r = bin(c, TOSAC_OP_SUB, a, bin(c, TOSAC_OP_MUL, cvt_binary(c, TOSAC_OP_INTDIV, a, b, TOSAC_DTYPE_UNKNOWN), b));
        if (fm == 0 && r) {
            tosac_value *rn = cmp(c, TOSAC_OP_GREATER, kf(c, r, 0.0), r);
            tosac_value *bn = cmp(c, TOSAC_OP_GREATER, kf(c, b, 0.0), b);
            tosac_value *nz = cvt_unary(c, TOSAC_OP_LOGICAL_NOT, cmp(c, TOSAC_OP_EQUAL, r, kf(c, r, 0.0)));
            tosac_value *fix = bin(c, TOSAC_OP_LOGICAL_AND, bin(c, TOSAC_OP_LOGICAL_XOR, rn, bn), nz);
            r = sel(c, fix, bin(c, TOSAC_OP_ADD, r, b), r);
        }
        return cvt_finish(c, r, s);
    }
    if (a->dtype != TOSAC_DTYPE_FP32) return only_fp(c, a);
    if (fm == 0) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "fmod=0 with floating-point inputs is not supported");
    tosac_value *aa = cvt_unary(c, TOSAC_OP_ABS, a), *ab = cvt_unary(c, TOSAC_OP_ABS, b);
    tosac_value *q = cvt_unary(c, TOSAC_OP_FLOOR, bin(c, TOSAC_OP_MUL, aa, cvt_unary(c, TOSAC_OP_RECIPROCAL, ab)));
    tosac_value *r = bin(c, TOSAC_OP_SUB, aa, bin(c, TOSAC_OP_MUL, q, ab));
    if (!r) return cvt_finish(c, NULL, s);
    tosac_value *low = cmp(c, TOSAC_OP_GREATER, kf(c, r, 0.0), r);
    r = sel(c, low, bin(c, TOSAC_OP_ADD, r, ab), r);
    tosac_value *high = cmp(c, TOSAC_OP_GREATER_EQUAL, r, ab);
    r = sel(c, high, bin(c, TOSAC_OP_SUB, r, ab), r);
    if (!r) return cvt_finish(c, NULL, s);
    tosac_value *an = cmp(c, TOSAC_OP_GREATER, kf(c, a, 0.0), a);
    return cvt_finish(c, sel(c, an, cvt_unary(c, TOSAC_OP_NEGATE, r), r), s);
}

/* ---- variadic ---- */

static tosac_status sum_mean(cvt_ctx *c, bool mean)
{
    tosac_status s = TOSAC_OK;
    tosac_value *acc = fp_in0(c, &s);
    if (!acc) return s;
    for (size_t k = 1; k < c->node->n_inputs; k++) {
        tosac_value *x = cvt_in_tensor(c, k, &s);
        if (!x) return s;
        if ((s = only_fp(c, x)) != TOSAC_OK) return s;
        acc = bin(c, TOSAC_OP_ADD, acc, x);
        if (!acc) return cvt_finish(c, NULL, s);
    }
    if (mean && c->node->n_inputs > 1) acc = mulk(c, acc, 1.0 / (double)c->node->n_inputs);
    else if (c->node->n_inputs == 1) acc = cvt_unary(c, TOSAC_OP_IDENTITY, acc);
    return cvt_finish(c, acc, s);
}
tosac_status cvt_sum(cvt_ctx *c) { return sum_mean(c, false); }
tosac_status cvt_mean(cvt_ctx *c) { return sum_mean(c, true); }

/* ---- normalisations ---- */

/* BatchNormalization-14 training_mode: normalised with the batch statistics (mean and population
   variance over every axis but 1); outputs 1 and 2 are the running statistics updated with
   momentum. */
static tosac_status batch_norm_training(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    for (size_t k = 3; k < c->node->n_outputs; k++)
        if (c->node->outputs[k][0]) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "output %zu is not supported", k);
    tosac_value *x = fp_in0(c, &s);
    if (!x) return s;
    if (x->rank < 2) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "input rank %d is not supported", x->rank);
    float eps = cvt_attr_f(c, "epsilon", 1e-5f), mom = cvt_attr_f(c, "momentum", 0.9f);
    int64_t ch = x->shape[1];
    tosac_value *p[4];
    for (size_t k = 0; k < 4; k++)
        if (!(p[k] = per_channel(c, k + 1, ch, x->rank, &s))) return cvt_finish(c, NULL, s);
    bool red[TOSAC_MAX_RANK] = {false};
    for (int a = 0; a < x->rank; a++) red[a] = a != 1;
    tosac_value *mean = NULL, *var = NULL;
    tosac_value *y = bin(c, TOSAC_OP_ADD, bin(c, TOSAC_OP_MUL, normalize_var(c, x, red, eps, &mean, NULL, &var), p[0]), p[1]);
    if ((s = cvt_finish(c, y, s)) != TOSAC_OK) return s;
    tosac_value *stat[2] = {mean, var};
    for (size_t k = 0; k < 2; k++) {
        if (c->node->n_outputs <= k + 1 || !c->node->outputs[k + 1][0]) continue;
        tosac_value *old = mulk(c, p[2 + k], mom);
        tosac_value *r = bin(c, TOSAC_OP_ADD, old, mulk(c, stat[k], 1.0 - (double)mom));
        if ((s = cvt_set_out(c, k + 1, cvt_mk_reshape(c, r, 1, &ch))) != TOSAC_OK) return s;
    }
    return TOSAC_OK;
}

tosac_status cvt_batch_norm(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    if (c->opset >= 14 && cvt_attr_i(c, "training_mode", 0) != 0) return batch_norm_training(c);
    if ((s = one_output(c)) != TOSAC_OK) return s;
    if (c->opset < 9 && cvt_attr_i(c, "spatial", 1) != 1)
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "spatial=0 is not supported");
    tosac_value *x = fp_in0(c, &s);
    if (!x) return s;
    if (x->rank < 2) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "input rank %d is not supported", x->rank);
    float eps = cvt_attr_f(c, "epsilon", 1e-5f);
    int64_t ch = x->shape[1];
    cvt_val *p[4];
    bool all_const = true;
    for (size_t k = 0; k < 4; k++) {
        p[k] = cvt_in_req(c, k + 1, &s);
        if (!p[k]) return s;
        if (p[k]->dt != TOSAC_DTYPE_FP32) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "input %zu is not FP32", k + 1);
        if (p[k]->numel != ch)
            return cvt_fail(c, TOSAC_ERR_FORMAT, "input %zu has %lld elements, expected %lld", k + 1,
                            (long long)p[k]->numel, (long long)ch);
        all_const = all_const && p[k]->is_const && p[k]->f;
    }
    int64_t shape[TOSAC_MAX_RANK];
    for (int k = 0; k < x->rank; k++) shape[k] = k == 1 ? ch : 1;
    if (all_const) { /* y = x * A + B with A = scale / sqrt(var + eps), B = bias - mean * A */
        float *fa = tosac_arena_alloc(&c->arena, (size_t)ch * 8 + 8);
        if (!fa) return cvt_nomem(c);
        float *fb = fa + ch;
        for (int64_t k = 0; k < ch; k++) {
            double av = (double)p[0]->f[k] / sqrt((double)p[3]->f[k] + (double)eps);
            fa[k] = (float)av;
            fb[k] = (float)((double)p[1]->f[k] - (double)p[2]->f[k] * av);
        }
        tosac_value *xa = bin(c, TOSAC_OP_MUL, x, cvt_const_f32(c, x->rank, shape, fa));
        tosac_value *y = bin(c, TOSAC_OP_ADD, xa, cvt_const_f32(c, x->rank, shape, fb));
        return cvt_finish(c, y, s);
    }
    tosac_value *t[4];
    for (size_t k = 0; k < 4; k++) {
        t[k] = cvt_mk_reshape(c, cvt_tensor(c, p[k], &s), x->rank, shape);
        if (!t[k]) return cvt_finish(c, NULL, s);
    }
    tosac_value *a = bin(c, TOSAC_OP_MUL, t[0], cvt_unary(c, TOSAC_OP_RSQRT, addk(c, t[3], eps)));
    tosac_value *y = bin(c, TOSAC_OP_ADD, bin(c, TOSAC_OP_MUL, bin(c, TOSAC_OP_SUB, x, t[2]), a), t[1]);
    return cvt_finish(c, y, s);
}

tosac_status cvt_instance_norm(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = fp_in0(c, &s);
    if (!x) return s;
    if (x->rank < 3) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "input rank %d is not supported", x->rank);
    float eps = cvt_attr_f(c, "epsilon", 1e-5f);
    tosac_value *sc = per_channel(c, 1, x->shape[1], x->rank, &s);
    tosac_value *bi = sc ? per_channel(c, 2, x->shape[1], x->rank, &s) : NULL;
    if (!bi) return cvt_finish(c, NULL, s);
    bool red[TOSAC_MAX_RANK] = {false};
    for (int a = 2; a < x->rank; a++) red[a] = true;
    tosac_value *n = normalize(c, x, red, eps, NULL, NULL);
    return cvt_finish(c, bin(c, TOSAC_OP_ADD, bin(c, TOSAC_OP_MUL, n, sc), bi), s);
}

tosac_status cvt_layer_norm(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = fp_in0(c, &s);
    if (!x) return s;
    if (x->rank == 0) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "scalar input is not supported");
    int axis;
    if ((s = cvt_axis(c, cvt_attr_i(c, "axis", -1), x->rank, &axis)) != TOSAC_OK) return s;
    float eps = cvt_attr_f(c, "epsilon", 1e-5f);
    tosac_value *sc = cvt_in_tensor(c, 1, &s);
    if (!sc) return s;
    if ((s = only_fp(c, sc)) != TOSAC_OK) return s;
    tosac_value *bi = NULL;
    if (cvt_in(c, 2)) {
        bi = cvt_in_tensor(c, 2, &s);
        if (!bi) return s;
        if ((s = only_fp(c, bi)) != TOSAC_OK) return s;
    }
    bool red[TOSAC_MAX_RANK] = {false};
    for (int a = axis; a < x->rank; a++) red[a] = true;
    tosac_value *m = NULL, *inv = NULL;
    tosac_value *y = bin(c, TOSAC_OP_MUL, normalize(c, x, red, eps, &m, &inv), sc);
    if (bi) y = bin(c, TOSAC_OP_ADD, y, bi);
    if (!y) return cvt_finish(c, NULL, s);
    if (y->rank != x->rank || memcmp(y->shape, x->shape, (size_t)x->rank * sizeof *x->shape) != 0)
        return cvt_fail(c, TOSAC_ERR_FORMAT, "Scale/B do not broadcast to the input shape");
    if ((s = cvt_set_out(c, 0, y)) != TOSAC_OK) return s;
    if ((s = cvt_set_out(c, 1, m)) != TOSAC_OK) return s;
    return cvt_set_out(c, 2, inv);
}

tosac_status cvt_group_norm(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = fp_in0(c, &s);
    if (!x) return s;
    if (x->rank < 2) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "input rank %d is not supported", x->rank);
    int64_t g = cvt_attr_i(c, "num_groups", 0), ch = x->shape[1];
    if (g <= 0 || ch % g != 0)
        return cvt_fail(c, TOSAC_ERR_FORMAT, "num_groups=%lld does not divide %lld channels", (long long)g, (long long)ch);
    float eps = cvt_attr_f(c, "epsilon", 1e-5f);
    bool per_group = c->opset < 21; /* opset 18: scale/bias [G]; 21: [C] */
    int64_t pn = per_group ? g : ch;
    int64_t sp = 1;
    for (int a = 2; a < x->rank; a++) sp *= x->shape[a];
    int64_t gshape[3] = {x->shape[0], g, ch / g * sp};
    tosac_value *xg = cvt_mk_reshape(c, x, 3, gshape);
    if (!xg) return cvt_finish(c, NULL, s);
    bool red[TOSAC_MAX_RANK] = {false, false, true};
    tosac_value *n = normalize(c, xg, red, eps, NULL, NULL);
    int rank = per_group ? 3 : x->rank;
    tosac_value *sc = per_channel(c, 1, pn, rank, &s);
    tosac_value *bi = sc ? per_channel(c, 2, pn, rank, &s) : NULL;
    if (!bi || !n) return cvt_finish(c, NULL, s);
    if (!per_group) n = cvt_mk_reshape(c, n, x->rank, x->shape);
    tosac_value *y = bin(c, TOSAC_OP_ADD, bin(c, TOSAC_OP_MUL, n, sc), bi);
    if (per_group && y) y = cvt_mk_reshape(c, y, x->rank, x->shape);
    return cvt_finish(c, y, s);
}

/* ---- Softmax / LogSoftmax, opsets 1-12: the input is coerced to 2-D [N, D] at axis ---- */

static tosac_status softmax_v1(cvt_ctx *c, bool log)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = fp_in0(c, &s);
    if (!x) return s;
    if (x->rank == 0) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "scalar input is not supported");
    int64_t ax = cvt_attr_i(c, "axis", 1);
    if (ax == x->rank) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "axis %lld (empty inner dimension) is not supported", (long long)ax);
    int axis;
    if ((s = cvt_axis(c, ax, x->rank, &axis)) != TOSAC_OK) return s;
    int64_t sh[2] = {1, 1};
    for (int a = 0; a < x->rank; a++) sh[a < axis ? 0 : 1] *= x->shape[a];
    tosac_value *x2 = cvt_mk_reshape(c, x, 2, sh);
    tosac_value *d = bin(c, TOSAC_OP_SUB, x2, cvt_reduce_axis(c, TOSAC_OP_REDUCE_MAX, x2, 1));
    tosac_value *e = cvt_unary(c, TOSAC_OP_EXP, d);
    tosac_value *sum = cvt_reduce_axis(c, TOSAC_OP_REDUCE_SUM, e, 1);
    tosac_value *y = log ? bin(c, TOSAC_OP_SUB, d, cvt_unary(c, TOSAC_OP_LOG, sum))
                         : bin(c, TOSAC_OP_MUL, e, cvt_unary(c, TOSAC_OP_RECIPROCAL, sum));
    return cvt_finish(c, y ? cvt_mk_reshape(c, y, x->rank, x->shape) : NULL, s);
}
tosac_status cvt_softmax_v1(cvt_ctx *c) { return softmax_v1(c, false); }
tosac_status cvt_log_softmax_v1(cvt_ctx *c) { return softmax_v1(c, true); }

/* ---- ReduceL1 / L2 / LogSum / LogSumExp ---- */

typedef enum { R_L1, R_L2, R_LOGSUM, R_LOGSUMEXP } rkind;

static tosac_status reduce_x(cvt_ctx *c, rkind k)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = fp_in0(c, &s);
    if (!x) return s;
    if (x->rank == 0) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "reduction of a scalar");
    const int64_t *axes;
    int64_t n;
    if ((s = cvt_axes_arg(c, 18, &axes, &n)) != TOSAC_OK) return s;
    bool keep = cvt_attr_i(c, "keepdims", 1) != 0;
    bool red[TOSAC_MAX_RANK] = {false};
    if (n == 0) {
        if (cvt_attr_i(c, "noop_with_empty_axes", 0))
            return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "noop_with_empty_axes=1 with empty axes is not supported");
        for (int a = 0; a < x->rank; a++) red[a] = true;
    }
    for (int64_t j = 0; j < n; j++) {
        int a;
        if ((s = cvt_axis(c, axes[j], x->rank, &a)) != TOSAC_OK) return s;
        red[a] = true;
    }
    int64_t oshape[TOSAC_MAX_RANK];
    int orank = 0;
    for (int a = 0; a < x->rank; a++) {
        if (red[a] && x->shape[a] == 0) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "empty reductions are not supported");
        if (!red[a]) oshape[orank++] = x->shape[a];
        else if (keep) oshape[orank++] = 1;
    }
    tosac_value *y;
    switch (k) {
    case R_L1: y = redn(c, TOSAC_OP_REDUCE_SUM, cvt_unary(c, TOSAC_OP_ABS, x), red); break;
    case R_L2:
        y = redn(c, TOSAC_OP_REDUCE_SUM, bin(c, TOSAC_OP_MUL, x, x), red);
        y = cvt_unary(c, TOSAC_OP_RECIPROCAL, cvt_unary(c, TOSAC_OP_RSQRT, y));
        break;
    case R_LOGSUM: y = cvt_unary(c, TOSAC_OP_LOG, redn(c, TOSAC_OP_REDUCE_SUM, x, red)); break;
    default: { /* max + log(sum(exp(x - max))); a -inf max (all -inf) would give NaN: use 0 there */
        tosac_value *m = redn(c, TOSAC_OP_REDUCE_MAX, x, red);
        tosac_value *fin = cmp(c, TOSAC_OP_EQUAL, m, kf(c, m, -INFINITY));
        m = sel(c, fin, kf(c, m, 0.0), m);
        tosac_value *e = cvt_unary(c, TOSAC_OP_EXP, bin(c, TOSAC_OP_SUB, x, m));
        y = bin(c, TOSAC_OP_ADD, m, cvt_unary(c, TOSAC_OP_LOG, redn(c, TOSAC_OP_REDUCE_SUM, e, red)));
    }
    }
    if (y && !keep) y = cvt_mk_reshape(c, y, orank, oshape);
    return cvt_finish(c, y, s);
}
tosac_status cvt_reduce_l1(cvt_ctx *c) { return reduce_x(c, R_L1); }
tosac_status cvt_reduce_l2(cvt_ctx *c) { return reduce_x(c, R_L2); }
tosac_status cvt_reduce_log_sum(cvt_ctx *c) { return reduce_x(c, R_LOGSUM); }
tosac_status cvt_reduce_log_sum_exp(cvt_ctx *c) { return reduce_x(c, R_LOGSUMEXP); }

/* ---- ArgMax / ArgMin (ArgMin = ARGMAX of NEGATE); select_last_index via REVERSE ---- */

static tosac_status arg(cvt_ctx *c, bool is_min)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_in_tensor(c, 0, &s);
    if (!x) return s;
    if (x->dtype != TOSAC_DTYPE_FP32)
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "element type %s is not supported here (FP32 only)",
                        tosac_dtype_name(x->dtype));
    if (x->rank == 0) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "scalar input is not supported");
    int axis;
    if ((s = cvt_axis(c, cvt_attr_i(c, "axis", 0), x->rank, &axis)) != TOSAC_OK) return s;
    bool keep = cvt_attr_i(c, "keepdims", 1) != 0;
    int64_t last = cvt_attr_i(c, "select_last_index", 0);
    if (last != 0 && last != 1) return cvt_fail(c, TOSAC_ERR_FORMAT, "select_last_index must be 0 or 1");
    int64_t len = x->shape[axis];
    if (len == 0) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "empty axis is not supported");
    if (is_min) x = cvt_unary(c, TOSAC_OP_NEGATE, x);
    if (x && last) {
        tosac_value *r = cvt_new(c, x->dtype, x->rank, x->shape);
        tosac_node *n = cvt_op(c, TOSAC_OP_REVERSE, 1, &x, r);
        if (!n || tosac_node_set_int(n, TOSAC_ATTR_REVERSE_axis, axis) != TOSAC_OK) return cvt_nomem(c);
        x = r;
    }
    if (!x) return cvt_finish(c, NULL, s);
    int64_t oshape[TOSAC_MAX_RANK], kshape[TOSAC_MAX_RANK];
    int orank = 0;
    for (int a = 0; a < x->rank; a++) {
        kshape[a] = a == axis ? 1 : x->shape[a];
        if (a != axis) oshape[orank++] = x->shape[a];
    }
    tosac_value *y = cvt_new(c, TOSAC_DTYPE_INT32, orank, oshape);
    tosac_node *n = cvt_op(c, TOSAC_OP_ARGMAX, 1, &x, y);
    if (!n || tosac_node_set_int(n, TOSAC_ATTR_ARGMAX_axis, axis) != TOSAC_OK ||
        tosac_node_set_int(n, TOSAC_ATTR_ARGMAX_nan_mode, 1) != TOSAC_OK)
        return cvt_nomem(c);
    if (last) y = bin(c, TOSAC_OP_SUB, cvt_const_scalar(c, TOSAC_DTYPE_INT32, orank, (double)(len - 1)), y);
    if (y && keep) y = cvt_mk_reshape(c, y, x->rank, kshape);
    return cvt_finish(c, y, s);
}
tosac_status cvt_argmax(cvt_ctx *c) { return arg(c, false); }
tosac_status cvt_argmin(cvt_ctx *c) { return arg(c, true); }
