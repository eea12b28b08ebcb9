/* Converters for ONNX elementwise ops, activations, Identity/Dropout and Cast. */
#include <math.h>
#include <string.h>

#include "onnx/convert.h"

static tosac_status binary(cvt_ctx *c, tosac_op op, bool fp, bool i32, bool b, tosac_dtype out_dt, bool swap)
{
    tosac_status s = TOSAC_OK;
    tosac_value *a = cvt_in_tensor(c, 0, &s), *bb = a ? cvt_in_tensor(c, 1, &s) : NULL;
    if (!bb) return s;
    if ((s = cvt_need_type(c, a, fp, i32, b)) != TOSAC_OK) return s;
    if (a->dtype != bb->dtype) return cvt_fail(c, TOSAC_ERR_FORMAT, "operand element types differ");
    tosac_value *out = swap ? cvt_binary(c, op, bb, a, out_dt) : cvt_binary(c, op, a, bb, out_dt);
    return cvt_finish(c, out, s);
}

static tosac_status unary(cvt_ctx *c, tosac_op op, bool fp, bool i32, bool b)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_in_tensor(c, 0, &s);
    if (!x) return s;
    if ((s = cvt_need_type(c, x, fp, i32, b)) != TOSAC_OK) return s;
    return cvt_finish(c, cvt_unary(c, op, x), s);
}

tosac_status cvt_add(cvt_ctx *c) { return binary(c, TOSAC_OP_ADD, true, true, false, TOSAC_DTYPE_UNKNOWN, false); }
tosac_status cvt_sub(cvt_ctx *c) { return binary(c, TOSAC_OP_SUB, true, true, false, TOSAC_DTYPE_UNKNOWN, false); }
tosac_status cvt_mul(cvt_ctx *c) { return binary(c, TOSAC_OP_MUL, true, true, false, TOSAC_DTYPE_UNKNOWN, false); }
tosac_status cvt_pow(cvt_ctx *c) { return binary(c, TOSAC_OP_POW, true, false, false, TOSAC_DTYPE_UNKNOWN, false); }
tosac_status cvt_equal(cvt_ctx *c) { return binary(c, TOSAC_OP_EQUAL, true, true, false, TOSAC_DTYPE_BOOL, false); }
tosac_status cvt_greater(cvt_ctx *c) { return binary(c, TOSAC_OP_GREATER, true, true, false, TOSAC_DTYPE_BOOL, false); }
tosac_status cvt_less(cvt_ctx *c) { return binary(c, TOSAC_OP_GREATER, true, true, false, TOSAC_DTYPE_BOOL, true); }
tosac_status cvt_greater_equal(cvt_ctx *c)
{
    return binary(c, TOSAC_OP_GREATER_EQUAL, true, true, false, TOSAC_DTYPE_BOOL, false);
}
tosac_status cvt_less_equal(cvt_ctx *c)
{
    return binary(c, TOSAC_OP_GREATER_EQUAL, true, true, false, TOSAC_DTYPE_BOOL, true);
}
tosac_status cvt_and(cvt_ctx *c) { return binary(c, TOSAC_OP_LOGICAL_AND, false, false, true, TOSAC_DTYPE_UNKNOWN, false); }
tosac_status cvt_or(cvt_ctx *c) { return binary(c, TOSAC_OP_LOGICAL_OR, false, false, true, TOSAC_DTYPE_UNKNOWN, false); }
tosac_status cvt_xor(cvt_ctx *c) { return binary(c, TOSAC_OP_LOGICAL_XOR, false, false, true, TOSAC_DTYPE_UNKNOWN, false); }
tosac_status cvt_not(cvt_ctx *c) { return unary(c, TOSAC_OP_LOGICAL_NOT, false, false, true); }

tosac_status cvt_div(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *a = cvt_in_tensor(c, 0, &s), *b = a ? cvt_in_tensor(c, 1, &s) : NULL;
    if (!b) return s;
    if ((s = cvt_need_type(c, a, true, true, false)) != TOSAC_OK) return s;
    if (a->dtype != b->dtype) return cvt_fail(c, TOSAC_ERR_FORMAT, "operand element types differ");
    if (a->dtype == TOSAC_DTYPE_INT32) return cvt_finish(c, cvt_binary(c, TOSAC_OP_INTDIV, a, b, TOSAC_DTYPE_UNKNOWN), s);
    return cvt_finish(c, cvt_binary(c, TOSAC_OP_MUL, a, cvt_unary(c, TOSAC_OP_RECIPROCAL, b), TOSAC_DTYPE_UNKNOWN), s);
}

/* Max/Min are variadic. */
static tosac_status variadic(cvt_ctx *c, tosac_op op)
{
    tosac_status s = TOSAC_OK;
    tosac_value *acc = cvt_in_tensor(c, 0, &s);
    if (!acc) return s;
    if ((s = cvt_need_type(c, acc, true, true, false)) != TOSAC_OK) return s;
    for (size_t k = 1; k < c->node->n_inputs; k++) {
        tosac_value *x = cvt_in_tensor(c, k, &s);
        if (!x) return s;
        if (x->dtype != acc->dtype) return cvt_fail(c, TOSAC_ERR_FORMAT, "operand element types differ");
        acc = cvt_binary(c, op, acc, x, TOSAC_DTYPE_UNKNOWN);
        if (!acc) return s != TOSAC_OK ? s : TOSAC_ERR_FORMAT;
    }
    if (c->node->n_inputs == 1) acc = cvt_unary(c, TOSAC_OP_IDENTITY, acc);
    return cvt_finish(c, acc, s);
}
tosac_status cvt_max(cvt_ctx *c) { return variadic(c, TOSAC_OP_MAXIMUM); }
tosac_status cvt_min(cvt_ctx *c) { return variadic(c, TOSAC_OP_MINIMUM); }

tosac_status cvt_where(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *p = cvt_in_tensor(c, 0, &s), *a = p ? cvt_in_tensor(c, 1, &s) : NULL, *b = a ? cvt_in_tensor(c, 2, &s) : NULL;
    if (!b) return s;
    if (p->dtype != TOSAC_DTYPE_BOOL || a->dtype != b->dtype)
        return cvt_fail(c, TOSAC_ERR_FORMAT, "bad operand element types");
    tosac_value *out = cvt_select(c, p, a, b, &s);
    return cvt_finish(c, out, s);
}

tosac_status cvt_abs(cvt_ctx *c) { return unary(c, TOSAC_OP_ABS, true, true, false); }
tosac_status cvt_neg(cvt_ctx *c) { return unary(c, TOSAC_OP_NEGATE, true, true, false); }
tosac_status cvt_exp(cvt_ctx *c) { return unary(c, TOSAC_OP_EXP, true, false, false); }
tosac_status cvt_log(cvt_ctx *c) { return unary(c, TOSAC_OP_LOG, true, false, false); }
tosac_status cvt_reciprocal(cvt_ctx *c) { return unary(c, TOSAC_OP_RECIPROCAL, true, false, false); }
tosac_status cvt_floor(cvt_ctx *c) { return unary(c, TOSAC_OP_FLOOR, true, false, false); }
tosac_status cvt_ceil(cvt_ctx *c) { return unary(c, TOSAC_OP_CEIL, true, false, false); }
tosac_status cvt_sin(cvt_ctx *c) { return unary(c, TOSAC_OP_SIN, true, false, false); }
tosac_status cvt_cos(cvt_ctx *c) { return unary(c, TOSAC_OP_COS, true, false, false); }
tosac_status cvt_erf(cvt_ctx *c) { return unary(c, TOSAC_OP_ERF, true, false, false); }
tosac_status cvt_sigmoid(cvt_ctx *c) { return unary(c, TOSAC_OP_SIGMOID, true, false, false); }
tosac_status cvt_tanh(cvt_ctx *c) { return unary(c, TOSAC_OP_TANH, true, false, false); }
tosac_status cvt_identity(cvt_ctx *c) { return unary(c, TOSAC_OP_IDENTITY, true, true, true); }

tosac_status cvt_dropout(cvt_ctx *c)
{
    if (c->node->n_outputs > 1 && c->node->outputs[1][0])
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "the mask output is not supported");
    cvt_val *t = cvt_in(c, 2);
    if (t && (!t->is_const || (t->numel && t->i && t->i[0])))
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "training mode is not supported");
    return unary(c, TOSAC_OP_IDENTITY, true, true, true);
}

/* Sqrt(x) = RECIPROCAL(RSQRT(x)) */
tosac_status cvt_sqrt(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_in_tensor(c, 0, &s);
    if (!x) return s;
    if ((s = cvt_need_type(c, x, true, false, false)) != TOSAC_OK) return s;
    return cvt_finish(c, cvt_unary(c, TOSAC_OP_RECIPROCAL, cvt_unary(c, TOSAC_OP_RSQRT, x)), s);
}

tosac_status cvt_relu(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_in_tensor(c, 0, &s);
    if (!x) return s;
    if ((s = cvt_need_type(c, x, true, false, false)) != TOSAC_OK) return s;
    return cvt_finish(c, cvt_clamp(c, x, 0.0f, INFINITY), s);
}

/* Clip: bounds from attributes (opset < 11) or constant inputs 1 and 2. */
tosac_status cvt_clip(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_in_tensor(c, 0, &s);
    if (!x) return s;
    if ((s = cvt_need_type(c, x, true, false, false)) != TOSAC_OK) return s;
    float lo = -INFINITY, hi = INFINITY;
    if (c->opset < 11) {
        lo = cvt_attr_f(c, "min", lo);
        hi = cvt_attr_f(c, "max", hi);
    } else {
        for (size_t k = 1; k <= 2; k++) {
            cvt_val *v = cvt_in(c, k);
            if (!v) continue;
            if (!v->is_const || !v->f || v->numel != 1)
                return cvt_fail(c, TOSAC_ERR_UNSUPPORTED,
                                "input '%s' must be a constant scalar (bind it with --bind %s=FILE.npy)", v->name,
                                v->name);
            if (k == 1) lo = v->f[0];
            else hi = v->f[0];
        }
    }
    if (lo > hi) {
        /* ONNX: all results are max */
        tosac_value *m = cvt_const_scalar(c, TOSAC_DTYPE_FP32, x->rank, hi);
        tosac_value *z = cvt_binary(c, TOSAC_OP_MUL, x, cvt_const_scalar(c, TOSAC_DTYPE_FP32, x->rank, 0.0),
                                    TOSAC_DTYPE_UNKNOWN);
        return cvt_finish(c, cvt_binary(c, TOSAC_OP_ADD, z, m, TOSAC_DTYPE_UNKNOWN), s);
    }
    return cvt_finish(c, cvt_clamp(c, x, lo, hi), s);
}

/* LeakyRelu(x) = MAXIMUM(x, alpha * x) for 0 <= alpha <= 1, else SELECT(x > 0, x, alpha * x). */
tosac_status cvt_leaky_relu(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_in_tensor(c, 0, &s);
    if (!x) return s;
    if ((s = cvt_need_type(c, x, true, false, false)) != TOSAC_OK) return s;
    float alpha = cvt_attr_f(c, "alpha", 0.01f);
    tosac_value *ax = cvt_binary(c, TOSAC_OP_MUL, x, cvt_const_scalar(c, TOSAC_DTYPE_FP32, x->rank, alpha),
                                 TOSAC_DTYPE_UNKNOWN);
    tosac_value *pos = cvt_binary(c, TOSAC_OP_GREATER, x, cvt_const_scalar(c, TOSAC_DTYPE_FP32, x->rank, 0.0),
                                  TOSAC_DTYPE_BOOL);
    if (!ax || !pos) return cvt_nomem(c);
    tosac_value *out = cvt_new(c, x->dtype, x->rank, x->shape);
    tosac_value *in[3] = {pos, x, ax};
    return cvt_finish(c, cvt_op(c, TOSAC_OP_SELECT, 3, in, out) ? out : NULL, s);
}

tosac_status cvt_cast(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s);
    if (!v) return s;
    int64_t to = cvt_attr_i(c, "to", 0);
    tosac_dtype dt = cvt_dtype_of((int32_t)to);
    if (dt == TOSAC_DTYPE_UNKNOWN)
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "cast to %s is not supported", tosac_onnx_elem_name((int32_t)to));
    if (v->is_const && v->i && dt != TOSAC_DTYPE_FP32) { /* fold integer casts (shape arithmetic) */
        int64_t *buf = tosac_arena_alloc(&c->arena, (size_t)v->numel * 8 + 1);
        if (!buf) return cvt_nomem(c);
        for (int64_t k = 0; k < v->numel; k++) buf[k] = dt == TOSAC_DTYPE_BOOL ? v->i[k] != 0 : v->i[k];
        if (to == TOSAC_ONNX_INT32)
            for (int64_t k = 0; k < v->numel; k++) buf[k] = (int32_t)(uint32_t)(uint64_t)buf[k];
        return cvt_set_out_const(c, 0, dt, v->rank, v->shape, NULL, buf);
    }
    tosac_value *x = cvt_tensor(c, v, &s);
    if (!x) return s;
    if (x->dtype == dt) return cvt_finish(c, cvt_unary(c, TOSAC_OP_IDENTITY, x), s);
    if (x->dtype == TOSAC_DTYPE_FP32 && dt == TOSAC_DTYPE_BOOL) {
        /* x != 0 */
        tosac_value *eq = cvt_binary(c, TOSAC_OP_EQUAL, x, cvt_const_scalar(c, TOSAC_DTYPE_FP32, x->rank, 0.0),
                                     TOSAC_DTYPE_BOOL);
        return cvt_finish(c, cvt_unary(c, TOSAC_OP_LOGICAL_NOT, eq), s);
    }
    if (x->dtype == TOSAC_DTYPE_FP32 && dt == TOSAC_DTYPE_INT32) {
        /* ONNX truncates toward zero; TOSA CAST rounds to nearest: truncate first */
        tosac_value *fl = cvt_unary(c, TOSAC_OP_FLOOR, x), *ce = cvt_unary(c, TOSAC_OP_CEIL, x);
        tosac_value *neg = cvt_binary(c, TOSAC_OP_GREATER, cvt_const_scalar(c, TOSAC_DTYPE_FP32, x->rank, 0.0), x,
                                      TOSAC_DTYPE_BOOL);
        if (!fl || !ce || !neg) return cvt_nomem(c);
        tosac_value *tr = cvt_new(c, x->dtype, x->rank, x->shape);
        tosac_value *in[3] = {neg, ce, fl};
        if (!cvt_op(c, TOSAC_OP_SELECT, 3, in, tr)) return cvt_nomem(c);
        x = tr;
    }
    tosac_value *out = cvt_new(c, dt, x->rank, x->shape);
    return cvt_finish(c, cvt_op(c, TOSAC_OP_CAST, 1, &x, out) ? out : NULL, s);
}
