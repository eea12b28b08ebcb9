/*
 * Elementwise math that TOSA has no operator for (rows at the end of onnx_ops.def), FP32:
 *   Tan = SIN / COS;  Sinh, Cosh = (EXP(x) -+ EXP(-x)) / 2
 *   Asinh = sign(x) LOG(|x| + SQRT(x^2 + 1));  Acosh = LOG(x + SQRT((x - 1)(x + 1)))
 *   Atanh = LOG((1 + x) / (1 - x)) / 2
 *   Atan: |x| > 1 folded by atan(a) = pi/2 - atan(1/a), then a > tan(pi/8) by
 *         atan(a) = pi/4 + atan((a - 1)/(a + 1)), leaving |u| <= tan(pi/8) = 0.4142 for the odd
 *         Taylor series to u^15 (the next term, u^17/17, is below 2e-8); the sign put back
 *   Asin = Atan(x / SQRT((1 - x)(1 + x))) (x = +-1 gives +-inf, whose atan is +-pi/2);
 *   Acos = pi/2 - Asin
 *   IsNaN = NOT(EQUAL(x, x)); IsInf = EQUAL(x, +inf) OR EQUAL(x, -inf) (as detect_* ask)
 *   Shrink: SELECT(x < -lambd, x + bias, SELECT(x > lambd, x - bias, 0))
 * and Hardmax (the one-hot of the first maximum along an axis: ARGMAX, EQUAL with the index) and
 * EyeLike (a constant), and OneHot (EQUAL of the indices with the class index, SELECT).
 */
#include <math.h>
#include <string.h>

#include "onnx/convert.h"

#define PI 3.14159265358979323846

static tosac_value *k_of(cvt_ctx *c, const tosac_value *x, double v)
{
    return x ? cvt_const_scalar(c, TOSAC_DTYPE_FP32, x->rank, v) : NULL;
}

static tosac_value *bin(cvt_ctx *c, tosac_op op, tosac_value *a, tosac_value *b)
{
    return a && b ? cvt_binary(c, op, a, b, TOSAC_DTYPE_UNKNOWN) : NULL;
}

static tosac_value *cmp(cvt_ctx *c, tosac_op op, tosac_value *a, tosac_value *b)
{
    return a && b ? cvt_binary(c, op, a, b, TOSAC_DTYPE_BOOL) : NULL;
}

static tosac_value *sqrt_of(cvt_ctx *c, tosac_value *x)
{
    return cvt_unary(c, TOSAC_OP_RECIPROCAL, cvt_unary(c, TOSAC_OP_RSQRT, x));
}

static tosac_value *div_of(cvt_ctx *c, tosac_value *a, tosac_value *b)
{
    return bin(c, TOSAC_OP_MUL, a, cvt_unary(c, TOSAC_OP_RECIPROCAL, b));
}

/* -x where x < 0 holds for `neg`, else x. */
static tosac_value *signed_as(cvt_ctx *c, tosac_value *neg, tosac_value *x, tosac_status *s)
{
    return cvt_select(c, neg, bin(c, TOSAC_OP_MUL, x, k_of(c, x, -1.0)), x, s);
}

static tosac_value *atan_of(cvt_ctx *c, tosac_value *x, tosac_status *s)
{
    if (!x) return NULL;
    tosac_value *a = cvt_unary(c, TOSAC_OP_ABS, x);
    tosac_value *inv = cmp(c, TOSAC_OP_GREATER, a, k_of(c, x, 1.0));
    tosac_value *t = cvt_select(c, inv, cvt_unary(c, TOSAC_OP_RECIPROCAL, a), a, s);
    tosac_value *big = cmp(c, TOSAC_OP_GREATER, t, k_of(c, x, 0.41421356237309503));
    tosac_value *tm = bin(c, TOSAC_OP_SUB, t, k_of(c, x, 1.0)), *tp = bin(c, TOSAC_OP_ADD, t, k_of(c, x, 1.0));
    tosac_value *u = cvt_select(c, big, div_of(c, tm, tp), t, s);
    tosac_value *u2 = bin(c, TOSAC_OP_MUL, u, u);
    tosac_value *p = k_of(c, x, -1.0 / 15.0);
    for (int k = 6; k >= 0; k--) /* Horner in u^2 of sum (-1)^k u^(2k+1) / (2k+1) */
        p = bin(c, TOSAC_OP_ADD, bin(c, TOSAC_OP_MUL, p, u2), k_of(c, x, (k % 2 ? -1.0 : 1.0) / (2 * k + 1)));
    p = bin(c, TOSAC_OP_MUL, p, u);
    p = cvt_select(c, big, bin(c, TOSAC_OP_ADD, p, k_of(c, x, PI / 4)), p, s);
    p = cvt_select(c, inv, bin(c, TOSAC_OP_SUB, k_of(c, x, PI / 2), p), p, s);
    return signed_as(c, cmp(c, TOSAC_OP_GREATER, k_of(c, x, 0.0), x), p, s);
}

static tosac_value *asin_of(cvt_ctx *c, tosac_value *x, tosac_status *s)
{
    tosac_value *one = k_of(c, x, 1.0);
    tosac_value *q = bin(c, TOSAC_OP_MUL, bin(c, TOSAC_OP_SUB, one, x), bin(c, TOSAC_OP_ADD, one, x));
    return atan_of(c, div_of(c, x, sqrt_of(c, q)), s);
}

typedef enum { M_TAN, M_SINH, M_COSH, M_ASINH, M_ACOSH, M_ATANH, M_ATAN, M_ASIN, M_ACOS } math_fn;

static tosac_status math(cvt_ctx *c, math_fn f)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_in_tensor(c, 0, &s);
    if (!x) return s;
    if ((s = cvt_need_type(c, x, true, false, false)) != TOSAC_OK) return s;
    tosac_value *y = NULL, *one = k_of(c, x, 1.0), *half = k_of(c, x, 0.5);
    switch (f) {
    case M_TAN: y = div_of(c, cvt_unary(c, TOSAC_OP_SIN, x), cvt_unary(c, TOSAC_OP_COS, x)); break;
    case M_SINH:
    case M_COSH: {
        tosac_value *e = cvt_unary(c, TOSAC_OP_EXP, x);
        tosac_value *en = cvt_unary(c, TOSAC_OP_EXP, bin(c, TOSAC_OP_MUL, x, k_of(c, x, -1.0)));
        y = bin(c, TOSAC_OP_MUL, bin(c, f == M_SINH ? TOSAC_OP_SUB : TOSAC_OP_ADD, e, en), half);
        break;
    }
    case M_ASINH: {
        tosac_value *a = cvt_unary(c, TOSAC_OP_ABS, x);
        tosac_value *r = sqrt_of(c, bin(c, TOSAC_OP_ADD, bin(c, TOSAC_OP_MUL, x, x), one));
        y = signed_as(c, cmp(c, TOSAC_OP_GREATER, k_of(c, x, 0.0), x),
                      cvt_unary(c, TOSAC_OP_LOG, bin(c, TOSAC_OP_ADD, a, r)), &s);
        break;
    }
    case M_ACOSH: {
        tosac_value *q = bin(c, TOSAC_OP_MUL, bin(c, TOSAC_OP_SUB, x, one), bin(c, TOSAC_OP_ADD, x, one));
        y = cvt_unary(c, TOSAC_OP_LOG, bin(c, TOSAC_OP_ADD, x, sqrt_of(c, q)));
        break;
    }
    case M_ATANH:
        y = bin(c, TOSAC_OP_MUL,
                cvt_unary(c, TOSAC_OP_LOG, div_of(c, bin(c, TOSAC_OP_ADD, one, x), bin(c, TOSAC_OP_SUB, one, x))), half);
        break;
    case M_ATAN: y = atan_of(c, x, &s); break;
    case M_ASIN: y = asin_of(c, x, &s); break;
    case M_ACOS: y = bin(c, TOSAC_OP_SUB, k_of(c, x, PI / 2), asin_of(c, x, &s)); break;
    }
    return cvt_finish(c, y, s);
}

tosac_status cvt_tan(cvt_ctx *c) { return math(c, M_TAN); }
tosac_status cvt_sinh(cvt_ctx *c) { return math(c, M_SINH); }
tosac_status cvt_cosh(cvt_ctx *c) { return math(c, M_COSH); }
tosac_status cvt_asinh(cvt_ctx *c) { return math(c, M_ASINH); }
tosac_status cvt_acosh(cvt_ctx *c) { return math(c, M_ACOSH); }
tosac_status cvt_atanh(cvt_ctx *c) { return math(c, M_ATANH); }
tosac_status cvt_atan(cvt_ctx *c) { return math(c, M_ATAN); }
tosac_status cvt_asin(cvt_ctx *c) { return math(c, M_ASIN); }
tosac_status cvt_acos(cvt_ctx *c) { return math(c, M_ACOS); }

tosac_status cvt_isnan(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_in_tensor(c, 0, &s);
    if (!x) return s;
    if ((s = cvt_need_type(c, x, true, false, false)) != TOSAC_OK) return s;
    return cvt_finish(c, cvt_unary(c, TOSAC_OP_LOGICAL_NOT, cmp(c, TOSAC_OP_EQUAL, x, x)), s);
}

tosac_status cvt_isinf(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_in_tensor(c, 0, &s);
    if (!x) return s;
    if ((s = cvt_need_type(c, x, true, false, false)) != TOSAC_OK) return s;
    bool pos = cvt_attr_i(c, "detect_positive", 1) != 0, neg = cvt_attr_i(c, "detect_negative", 1) != 0;
    tosac_value *p = cmp(c, TOSAC_OP_EQUAL, x, k_of(c, x, INFINITY));
    tosac_value *n = cmp(c, TOSAC_OP_EQUAL, x, k_of(c, x, -INFINITY));
    tosac_value *y = pos && neg ? bin(c, TOSAC_OP_LOGICAL_OR, p, n) : pos ? p : neg ? n
                                : cmp(c, TOSAC_OP_EQUAL, x, k_of(c, x, NAN)); /* all false, NaN never equals */
    return cvt_finish(c, y, s);
}

tosac_status cvt_shrink(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_in_tensor(c, 0, &s);
    if (!x) return s;
    if ((s = cvt_need_type(c, x, true, false, false)) != TOSAC_OK) return s;
    double lambd = cvt_attr_f(c, "lambd", 0.5f), bias = cvt_attr_f(c, "bias", 0.0f);
    tosac_value *hi = cvt_select(c, cmp(c, TOSAC_OP_GREATER, x, k_of(c, x, lambd)),
                                 bin(c, TOSAC_OP_SUB, x, k_of(c, x, bias)), k_of(c, x, 0.0), &s);
    tosac_value *y = cvt_select(c, cmp(c, TOSAC_OP_GREATER, k_of(c, x, -lambd), x),
                                bin(c, TOSAC_OP_ADD, x, k_of(c, x, bias)), hi, &s);
    return cvt_finish(c, y, s);
}

/* Hardmax-13: 1 at the first maximum along `axis`, 0 elsewhere. */
tosac_status cvt_hardmax(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_in_tensor(c, 0, &s);
    if (!x) return s;
    if ((s = cvt_need_type(c, x, true, false, false)) != TOSAC_OK) return s;
    int axis;
    if ((s = cvt_axis(c, cvt_attr_i(c, "axis", -1), x->rank, &axis)) != TOSAC_OK) return s;
    int64_t oshape[TOSAC_MAX_RANK], kshape[TOSAC_MAX_RANK], ishape[TOSAC_MAX_RANK], n = x->shape[axis];
    int orank = 0;
    for (int a = 0; a < x->rank; a++) {
        kshape[a] = a == axis ? 1 : x->shape[a];
        ishape[a] = a == axis ? n : 1;
        if (a != axis) oshape[orank++] = x->shape[a];
    }
    tosac_value *idx = cvt_new(c, TOSAC_DTYPE_INT32, orank, oshape);
    tosac_node *op = cvt_op(c, TOSAC_OP_ARGMAX, 1, &x, idx);
    if (!op || tosac_node_set_int(op, TOSAC_ATTR_ARGMAX_axis, axis) != TOSAC_OK ||
        tosac_node_set_int(op, TOSAC_ATTR_ARGMAX_nan_mode, 1) != TOSAC_OK)
        return cvt_nomem(c);
    int32_t *iota = (int32_t *)cvt_const_buffer(c, (size_t)n);
    if (!iota) return cvt_nomem(c);
    for (int64_t k = 0; k < n; k++) iota[k] = (int32_t)k;
    tosac_value *hit = cmp(c, TOSAC_OP_EQUAL, cvt_mk_reshape(c, idx, x->rank, kshape),
                           cvt_const_i32(c, x->rank, ishape, iota));
    return cvt_finish(c, cvt_select(c, hit, k_of(c, x, 1.0), k_of(c, x, 0.0), &s), s);
}

/* EyeLike: ones on the k-th diagonal of a 2-D shape, of `dtype` (default: the input's type). */
tosac_status cvt_eye_like(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s);
    if (!v) return s;
    if (v->rank != 2) return cvt_fail(c, TOSAC_ERR_FORMAT, "the input must be 2-D");
    int64_t elem = cvt_attr_i(c, "dtype", v->onnx_elem), k = cvt_attr_i(c, "k", 0);
    tosac_dtype dt = cvt_dtype_of((int32_t)elem);
    if (dt == TOSAC_DTYPE_UNKNOWN) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "output type %lld is not supported", (long long)elem);
    int64_t rows = v->shape[0], cols = v->shape[1], n = rows * cols;
    float *f = dt == TOSAC_DTYPE_FP32 ? cvt_const_buffer(c, (size_t)n) : NULL;
    int64_t *iv = dt != TOSAC_DTYPE_FP32 ? tosac_arena_alloc(&c->arena, (size_t)n * sizeof *iv) : NULL;
    if (!f && !iv) return cvt_nomem(c);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            if (f) f[i * cols + j] = j - i == k ? 1.0f : 0.0f;
            else iv[i * cols + j] = j - i == k;
        }
    return cvt_set_out_const(c, 0, dt, 2, v->shape, f, iv);
}

/* OneHot-11: out[..., k, ...] = indices[...] == k (negative indices counted from depth) ? on : off,
   with k on `axis`; depth and values [off, on] constant, float indices truncated as ONNX does. */
tosac_status cvt_one_hot(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *idx = cvt_in_tensor(c, 0, &s);
    cvt_val *dv = idx ? cvt_in_req(c, 1, &s) : NULL, *vv = dv ? cvt_in_req(c, 2, &s) : NULL;
    if (!vv) return s;
    if ((s = cvt_need_type(c, idx, true, true, false)) != TOSAC_OK) return s;
    if (!dv->is_const) return cvt_need_const(c, dv, "a constant");
    if (!vv->is_const) return cvt_need_const(c, vv, "a constant");
    if (dv->numel != 1 || vv->numel != 2 || (!dv->f && !dv->i) || (!vv->f && !vv->i))
        return cvt_fail(c, TOSAC_ERR_FORMAT, "depth must be one number and values two");
    double depth_f = dv->f ? dv->f[0] : (double)dv->i[0];
    int64_t depth = (int64_t)depth_f;
    if (depth < 1 || depth > (1 << 24)) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "depth %g is not supported", depth_f);
    int r = idx->rank + 1, axis;
    if ((s = cvt_axis(c, cvt_attr_i(c, "axis", -1), r, &axis)) != TOSAC_OK) return s;
    if (idx->dtype == TOSAC_DTYPE_FP32) { /* toward zero, then INT32 */
        tosac_value *t = cvt_select(c, cmp(c, TOSAC_OP_GREATER, k_of(c, idx, 0.0), idx), cvt_unary(c, TOSAC_OP_CEIL, idx),
                                    cvt_unary(c, TOSAC_OP_FLOOR, idx), &s);
        tosac_value *ti = t ? cvt_new(c, TOSAC_DTYPE_INT32, t->rank, t->shape) : NULL;
        if (!ti || !cvt_op(c, TOSAC_OP_CAST, 1, &t, ti)) return s != TOSAC_OK ? s : cvt_nomem(c);
        idx = ti;
    }
    idx = cvt_wrap_index(c, idx, depth, &s);
    if (!idx) return s != TOSAC_OK ? s : cvt_nomem(c);
    int64_t kshape[TOSAC_MAX_RANK], ishape[TOSAC_MAX_RANK];
    if (r > TOSAC_MAX_RANK) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "rank too large");
    for (int a = 0, j = 0; a < r; a++) {
        kshape[a] = a == axis ? 1 : idx->shape[j++];
        ishape[a] = a == axis ? depth : 1;
    }
    int32_t *iota = (int32_t *)cvt_const_buffer(c, (size_t)depth);
    if (!iota) return cvt_nomem(c);
    for (int64_t k = 0; k < depth; k++) iota[k] = (int32_t)k;
    tosac_value *hit = cmp(c, TOSAC_OP_EQUAL, cvt_mk_reshape(c, idx, r, kshape), cvt_const_i32(c, r, ishape, iota));
    tosac_dtype dt = vv->dt;
    if (dt != TOSAC_DTYPE_FP32 && dt != TOSAC_DTYPE_INT32)
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "values of type %s are not supported", tosac_dtype_name(dt));
    double off = vv->f ? vv->f[0] : (double)vv->i[0], on = vv->f ? vv->f[1] : (double)vv->i[1];
    tosac_value *y = cvt_select(c, hit, cvt_const_scalar(c, dt, r, on), cvt_const_scalar(c, dt, r, off), &s);
    return cvt_finish(c, y, s);
}
