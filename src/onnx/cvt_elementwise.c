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

/* Dropout without randomness: inference, or training with ratio 0. The output is the input and
   the mask all true (opsets 7-9: all ones of the data type). */
tosac_status cvt_dropout(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *t = cvt_in(c, 2), *r = cvt_in(c, 1);
    if (t && (!t->is_const || !t->i || t->numel != 1))
        return cvt_need_const(c, t, "a constant scalar (training_mode)");
    if (t && t->i[0]) {
        if (r && (!r->is_const || !r->f || r->numel != 1))
            return cvt_need_const(c, r, "a constant scalar (ratio)");
        if (!r || r->f[0] != 0.0f)
            return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "training mode with a non-zero ratio (random) is not supported");
    }
    cvt_val *v = cvt_in_req(c, 0, &s);
    if (!v) return s;
    if ((s = unary(c, TOSAC_OP_IDENTITY, true, true, true)) != TOSAC_OK) return s;
    if (c->node->n_outputs < 2 || !c->node->outputs[1][0]) return TOSAC_OK;
    tosac_dtype mdt = c->opset < 10 ? v->dt : TOSAC_DTYPE_BOOL;
    int64_t *ones = tosac_arena_alloc(&c->arena, (size_t)v->numel * 8 + 1);
    float *fones = tosac_arena_alloc(&c->arena, (size_t)v->numel * 4 + 1);
    if (!ones || !fones) return cvt_nomem(c);
    for (int64_t k = 0; k < v->numel; k++) ones[k] = 1, fones[k] = 1.0f;
    return cvt_set_out_const(c, 1, mdt, v->rank, v->shape, fones, ones);
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
    if ((s = cvt_need_type(c, x, true, true, false)) != TOSAC_OK) return s;
    double lo = -INFINITY, hi = INFINITY;
    if (c->opset < 11) {
        lo = cvt_attr_f(c, "min", -INFINITY);
        hi = cvt_attr_f(c, "max", INFINITY);
    } else {
        for (size_t k = 1; k <= 2; k++) {
            cvt_val *v = cvt_in(c, k);
            if (!v) continue;
            if (!v->is_const || (!v->f && !v->i) || v->numel != 1)
                return cvt_need_const(c, v, "a constant scalar");
            double b = v->f ? (double)v->f[0] : (double)v->i[0];
            if (k == 1) lo = b;
            else hi = b;
        }
    }
    if (lo > hi) {
        /* ONNX: all results are max */
        tosac_value *m = cvt_const_scalar(c, x->dtype, x->rank, hi);
        tosac_value *z = cvt_binary(c, TOSAC_OP_MUL, x, cvt_const_scalar(c, x->dtype, x->rank, 0.0), TOSAC_DTYPE_UNKNOWN);
        return cvt_finish(c, cvt_binary(c, TOSAC_OP_ADD, z, m, TOSAC_DTYPE_UNKNOWN), s);
    }
    tosac_value *y = cvt_clamp(c, x, (float)lo, (float)hi);
    if (y == x) y = cvt_unary(c, TOSAC_OP_IDENTITY, x);
    return cvt_finish(c, y, s);
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

static tosac_value *kconst(cvt_ctx *c, const tosac_value *like, tosac_dtype dt, double v)
{
    return like ? cvt_const_scalar(c, dt, like->rank, v) : NULL;
}

/* FP32 x truncated toward zero (ONNX's float -> int conversion), still FP32. */
static tosac_value *trunc_fp(cvt_ctx *c, tosac_value *x, tosac_status *s)
{
    tosac_value *neg = cvt_binary(c, TOSAC_OP_GREATER, kconst(c, x, TOSAC_DTYPE_FP32, 0.0), x, TOSAC_DTYPE_BOOL);
    tosac_value *up = cvt_unary(c, TOSAC_OP_CEIL, x);
    return cvt_select(c, neg, up, cvt_unary(c, TOSAC_OP_FLOOR, x), s);
}

static tosac_value *cast(cvt_ctx *c, tosac_value *x, tosac_dtype dt)
{
    tosac_value *out = x ? cvt_new(c, dt, x->rank, x->shape) : NULL;
    return cvt_op(c, TOSAC_OP_CAST, 1, &x, out) ? out : NULL;
}

/* FP32 x rounded to the precision of the ONNX float type `to` (the graph computes in FP32). */
static tosac_value *round_float(cvt_ctx *c, tosac_value *x, int32_t to)
{
    if (to == TOSAC_ONNX_FLOAT16) return cast(c, cast(c, x, TOSAC_DTYPE_FP16), TOSAC_DTYPE_FP32);
    if (to != TOSAC_ONNX_BFLOAT16) return x;
    /* ONNX's Cast to BFLOAT16 truncates the FP32 bit pattern (the reference implementation and
       test data of ONNX 1.12); TOSA's CAST rounds to nearest. Truncation of |x|: r = RNE(|x|), and
       when r overshoots, the next bfloat16 toward zero, which is RNE(r * (1 - 2^-8)): the product
       is exact in FP32 and closer to that value than to r. */
    tosac_value *a = cvt_unary(c, TOSAC_OP_ABS, x);
    tosac_value *r = cast(c, cast(c, a, TOSAC_DTYPE_BF16), TOSAC_DTYPE_FP32);
    tosac_value *k = cvt_const_scalar(c, TOSAC_DTYPE_FP32, x ? x->rank : 0, 1.0 - 1.0 / 256.0);
    tosac_value *p = cast(c, cast(c, cvt_binary(c, TOSAC_OP_MUL, r, k, TOSAC_DTYPE_UNKNOWN), TOSAC_DTYPE_BF16),
                          TOSAC_DTYPE_FP32);
    tosac_status s = TOSAC_OK;
    tosac_value *t = cvt_select(c, cvt_binary(c, TOSAC_OP_GREATER, r, a, TOSAC_DTYPE_BOOL), p, r, &s);
    tosac_value *z = cvt_const_scalar(c, TOSAC_DTYPE_FP32, x ? x->rank : 0, 0.0);
    tosac_value *neg = cvt_binary(c, TOSAC_OP_GREATER, z, x, TOSAC_DTYPE_BOOL);
    return cvt_select(c, neg, cvt_unary(c, TOSAC_OP_NEGATE, t), t, &s);
}

/* Value v converted to ONNX type `to`: FP32 / INT32 / BOOL inside, with the value range of `to`
   (float16 / bfloat16 precision, int8 / int16 wrap-around). */
static tosac_status cast_to(cvt_ctx *c, cvt_val *v, int32_t to)
{
    tosac_status s = TOSAC_OK;
    tosac_dtype dt = cvt_dtype_of(to);
    if (dt == TOSAC_DTYPE_UNKNOWN)
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "cast to %s is not supported", tosac_onnx_elem_name(to));
    tosac_dtype narrow = cvt_io_dtype(to);
    if (v->is_const && v->i && dt != TOSAC_DTYPE_FP32) { /* fold integer casts (shape arithmetic) */
        int64_t *buf = tosac_arena_alloc(&c->arena, (size_t)v->numel * 8 + 1);
        if (!buf) return cvt_nomem(c);
        for (int64_t k = 0; k < v->numel; k++) {
            int64_t x = v->i[k];
            uint64_t u = (uint64_t)x;
            buf[k] = dt == TOSAC_DTYPE_BOOL          ? x != 0
                     : to == TOSAC_ONNX_INT32        ? (int64_t)(int32_t)(uint32_t)u
                     : narrow == TOSAC_DTYPE_INT16   ? (int64_t)(int16_t)(uint16_t)u
                     : narrow == TOSAC_DTYPE_INT8    ? (int64_t)(int8_t)(uint8_t)u
                                                     : x;
        }
        if ((s = cvt_set_out_const(c, 0, dt, v->rank, v->shape, NULL, buf)) != TOSAC_OK) return s;
        cvt_val *o = cvt_lookup(c, c->node->outputs[0]);
        if (o) o->onnx_elem = to;
        return TOSAC_OK;
    }
    tosac_value *x = cvt_tensor(c, v, &s);
    if (!x) return s;
    if (x->dtype == TOSAC_DTYPE_BOOL && dt != TOSAC_DTYPE_BOOL) x = cast(c, x, TOSAC_DTYPE_INT32); /* no BOOL->FP CAST */
    if (x && x->dtype == TOSAC_DTYPE_FP32 && dt == TOSAC_DTYPE_BOOL) {
        /* x != 0 */
        tosac_value *eq = cvt_binary(c, TOSAC_OP_EQUAL, x, cvt_const_scalar(c, TOSAC_DTYPE_FP32, x->rank, 0.0),
                                     TOSAC_DTYPE_BOOL);
        return cvt_finish(c, cvt_unary(c, TOSAC_OP_LOGICAL_NOT, eq), s);
    }
    /* ONNX truncates toward zero; TOSA CAST rounds to nearest: truncate first */
    if (x && x->dtype == TOSAC_DTYPE_FP32 && dt == TOSAC_DTYPE_INT32) x = trunc_fp(c, x, &s);
    if (x && x->dtype != dt) x = cast(c, x, dt);
    if (dt == TOSAC_DTYPE_FP32) x = round_float(c, x, to);
    else if (narrow != dt) x = cast(c, cast(c, x, narrow), dt);
    if (x && x == v->v) x = cvt_unary(c, TOSAC_OP_IDENTITY, x);
    if ((s = cvt_finish(c, x, s)) != TOSAC_OK) return s;
    cvt_val *o = cvt_lookup(c, c->node->outputs[0]);
    if (o) o->onnx_elem = to; /* for a later CastLike */
    return TOSAC_OK;
}

tosac_status cvt_cast(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s);
    return v ? cast_to(c, v, (int32_t)cvt_attr_i(c, "to", 0)) : s;
}

/* CastLike: Cast to the ONNX type of input 1 (only its type is used). */
tosac_status cvt_cast_like(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s), *like = v ? cvt_in_req(c, 1, &s) : NULL;
    return like ? cast_to(c, v, like->onnx_elem) : s;
}

/* x^n for an integer n >= 1 by repeated squaring: MULs only, exact to the rounding of each. */
static tosac_value *pow_int(cvt_ctx *c, tosac_value *x, uint64_t n)
{
    tosac_value *r = NULL, *sq = x;
    for (; n && sq; n >>= 1) {
        if (n & 1) r = r ? cvt_binary(c, TOSAC_OP_MUL, r, sq, TOSAC_DTYPE_UNKNOWN) : sq;
        if (n > 1) sq = cvt_binary(c, TOSAC_OP_MUL, sq, sq, TOSAC_DTYPE_UNKNOWN);
    }
    return r;
}

/* EXP(e * LOG(x)): IEEE pow's value for every x >= 0, 0, inf and NaN included (LOG(0) = -inf,
   LOG(<0) = NaN, which is pow's NaN for a negative base and a non-integer exponent). */
static tosac_value *pow_explog(cvt_ctx *c, tosac_value *x, double e)
{
    tosac_value *l = cvt_unary(c, TOSAC_OP_LOG, x);
    return cvt_unary(c, TOSAC_OP_EXP, cvt_binary(c, TOSAC_OP_MUL, l, kconst(c, l, TOSAC_DTYPE_FP32, e), TOSAC_DTYPE_UNKNOWN));
}

/* Largest constant integer exponent lowered to a MUL chain (at most 2 * log2 of it MULs, each
   rounded: closer than EXP/LOG, whose error grows with |e * log x|); larger ones use EXP/LOG. */
#define POW_MUL_CHAIN_MAX 1024

/* FP32 x^e for a constant e without TOSA POW (whose REQUIREs - base >= 0, not both <= 0, finite
   operands - the model's data need not meet): every form below gives ONNX's (IEEE pow's) value
   for any x, negative, zero, infinite or NaN, but for a non-integer e at x = -inf and x = -0
   (pow: |x|^e; here NaN, and RSQRT(-0) = -inf), which no SELECT fixes here: each form reads x
   alone, so the quantizer makes one TABLE of it. NULL when e has no exact form here (the caller uses pow_general). */
static tosac_value *pow_const(cvt_ctx *c, tosac_value *x, double e)
{
    if (e == 1.0) return cvt_unary(c, TOSAC_OP_IDENTITY, x);
    if (e == 0.5) return cvt_unary(c, TOSAC_OP_RECIPROCAL, cvt_unary(c, TOSAC_OP_RSQRT, x));
    if (e == -0.5) return cvt_unary(c, TOSAC_OP_RSQRT, x);
    if (e != floor(e) || fabs(e) > 1e9) return isfinite(e) && e != 0.0 ? pow_explog(c, x, e) : NULL;
    uint64_t n = (uint64_t)fabs(e);
    tosac_value *m;
    if (n <= POW_MUL_CHAIN_MAX) {
        m = pow_int(c, x, n);
    } else if (n % 2 == 0) {
        m = pow_explog(c, cvt_unary(c, TOSAC_OP_ABS, x), (double)n);
    } else { /* the odd power keeps x's sign: x * |x|^(n-1) */
        m = cvt_binary(c, TOSAC_OP_MUL, x, pow_explog(c, cvt_unary(c, TOSAC_OP_ABS, x), (double)(n - 1)),
                       TOSAC_DTYPE_UNKNOWN);
    }
    return e < 0 ? cvt_unary(c, TOSAC_OP_RECIPROCAL, m) : m;
}

static tosac_value *bool_op(cvt_ctx *c, tosac_op op, tosac_value *a, tosac_value *b)
{
    return cvt_binary(c, op, a, b, TOSAC_DTYPE_BOOL);
}

/* FP32 x^y for run-time (or non-uniform) exponents, with IEEE pow's value everywhere. TOSA POW
   computes only the elements where its REQUIREs hold (|x| finite and > 0, y finite; the others
   get POW(1, 1)); zero, infinite and NaN operands take EXP(y * LOG|x|), which is right for them
   but for y = 0 or x = 1 (pow gives 1, also for NaN partners, and for x = -1, y = ±inf); a
   finite negative base gives NaN for a non-integer y, and a base with the sign bit set (-0 and
   -inf too) flips the sign for an odd y (±inf count as even). */
static tosac_value *pow_general(cvt_ctx *c, tosac_value *x, tosac_value *y, tosac_status *s)
{
    tosac_value *ax = cvt_unary(c, TOSAC_OP_ABS, x), *ay = cvt_unary(c, TOSAC_OP_ABS, y);
    tosac_value *zero = kconst(c, x, TOSAC_DTYPE_FP32, 0.0), *one = kconst(c, x, TOSAC_DTYPE_FP32, 1.0);
    tosac_value *inf = kconst(c, x, TOSAC_DTYPE_FP32, INFINITY);
    tosac_value *reg_x = cvt_binary(c, TOSAC_OP_LOGICAL_AND, bool_op(c, TOSAC_OP_GREATER, ax, zero),
                                    bool_op(c, TOSAC_OP_GREATER, inf, ax), TOSAC_DTYPE_UNKNOWN);
    tosac_value *reg = cvt_binary(c, TOSAC_OP_LOGICAL_AND, reg_x, bool_op(c, TOSAC_OP_GREATER, kconst(c, y, TOSAC_DTYPE_FP32, INFINITY), ay),
                                  TOSAC_DTYPE_UNKNOWN);
    tosac_value *p = cvt_binary(c, TOSAC_OP_POW, cvt_select(c, reg, ax, one, s), cvt_select(c, reg, y, one, s),
                                TOSAC_DTYPE_UNKNOWN);
    tosac_value *q = cvt_unary(c, TOSAC_OP_EXP, cvt_binary(c, TOSAC_OP_MUL, y, cvt_unary(c, TOSAC_OP_LOG, ax), TOSAC_DTYPE_UNKNOWN));
    tosac_value *m = cvt_select(c, reg, p, q, s);
    tosac_value *fy = cvt_unary(c, TOSAC_OP_FLOOR, y);
    tosac_value *yint = bool_op(c, TOSAC_OP_EQUAL, fy, y);
    tosac_value *half = cvt_binary(c, TOSAC_OP_MUL, y, kconst(c, y, TOSAC_DTYPE_FP32, 0.5), TOSAC_DTYPE_UNKNOWN);
    tosac_value *odd = cvt_binary(c, TOSAC_OP_LOGICAL_AND, yint,
                                  cvt_unary(c, TOSAC_OP_LOGICAL_NOT, bool_op(c, TOSAC_OP_EQUAL, cvt_unary(c, TOSAC_OP_FLOOR, half), half)),
                                  TOSAC_DTYPE_UNKNOWN);
    /* the sign bit: x < 0, or x = -0 (1 / -0 = -inf) */
    tosac_value *neg = cvt_binary(c, TOSAC_OP_LOGICAL_OR, bool_op(c, TOSAC_OP_GREATER, zero, x),
                                  bool_op(c, TOSAC_OP_GREATER, zero, cvt_unary(c, TOSAC_OP_RECIPROCAL, x)), TOSAC_DTYPE_UNKNOWN);
    m = cvt_select(c, cvt_binary(c, TOSAC_OP_LOGICAL_AND, neg, odd, TOSAC_DTYPE_UNKNOWN), cvt_unary(c, TOSAC_OP_NEGATE, m), m, s);
    tosac_value *neg_finite = cvt_binary(c, TOSAC_OP_LOGICAL_AND, bool_op(c, TOSAC_OP_GREATER, zero, x),
                                         bool_op(c, TOSAC_OP_GREATER, x, kconst(c, x, TOSAC_DTYPE_FP32, -INFINITY)),
                                         TOSAC_DTYPE_UNKNOWN);
    m = cvt_select(c, cvt_binary(c, TOSAC_OP_LOGICAL_AND, neg_finite, cvt_unary(c, TOSAC_OP_LOGICAL_NOT, yint), TOSAC_DTYPE_UNKNOWN),
                   kconst(c, x, TOSAC_DTYPE_FP32, NAN), m, s);
    tosac_value *minus1_inf = cvt_binary(c, TOSAC_OP_LOGICAL_AND, bool_op(c, TOSAC_OP_EQUAL, x, kconst(c, x, TOSAC_DTYPE_FP32, -1.0)),
                                         bool_op(c, TOSAC_OP_EQUAL, ay, kconst(c, y, TOSAC_DTYPE_FP32, INFINITY)), TOSAC_DTYPE_UNKNOWN);
    tosac_value *ones = cvt_binary(c, TOSAC_OP_LOGICAL_OR, bool_op(c, TOSAC_OP_EQUAL, y, kconst(c, y, TOSAC_DTYPE_FP32, 0.0)),
                                   cvt_binary(c, TOSAC_OP_LOGICAL_OR, bool_op(c, TOSAC_OP_EQUAL, x, one), minus1_inf, TOSAC_DTYPE_UNKNOWN),
                                   TOSAC_DTYPE_UNKNOWN);
    return cvt_select(c, ones, one, m, s);
}

/* The single value of a constant exponent every element of which is equal and which broadcasts
   into x's shape (the result then has x's shape); false otherwise. */
static bool uniform_exponent(const cvt_val *y, const tosac_value *x, double *e)
{
    if (!y || !y->is_const || y->numel < 1 || y->rank > x->rank) return false;
    for (int k = 0; k < y->rank; k++) {
        int64_t d = y->shape[y->rank - 1 - k];
        if (d != 1 && d != x->shape[x->rank - 1 - k]) return false;
    }
    double v0 = y->f ? y->f[0] : (double)y->i[0];
    for (int64_t k = 1; k < y->numel; k++)
        if ((y->f ? y->f[k] : (double)y->i[k]) != v0) return false;
    *e = v0;
    return true;
}

/* Pow(x, y) = x^y in the base's type. FP32 base: a constant exponent lowers to MUL chains,
   RECIPROCAL, RSQRT or EXP/LOG (pow_const), anything else to pow_general. Integer base: computed
   in FP32, rounded when the result is within a few ulps of an integer, else truncated. */
tosac_status cvt_pow(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_in_tensor(c, 0, &s), *y = x ? cvt_in_tensor(c, 1, &s) : NULL;
    if (!y) return s;
    if ((s = cvt_need_type(c, x, true, true, false)) != TOSAC_OK || (s = cvt_need_type(c, y, true, true, false)) != TOSAC_OK)
        return s;
    tosac_value *a = x->dtype == TOSAC_DTYPE_FP32 ? x : cast(c, x, TOSAC_DTYPE_FP32);
    tosac_value *b = y->dtype == TOSAC_DTYPE_FP32 ? y : cast(c, y, TOSAC_DTYPE_FP32);
    if (!a || !b) return cvt_nomem(c);
    double e;
    tosac_value *r = NULL;
    if (uniform_exponent(cvt_in(c, 1), a, &e)) {
        if (e == 0.0) { /* x^0 = 1 for every x, NaN included */
            float *ones = cvt_const_buffer(c, (size_t)cvt_numel(a->rank, a->shape));
            if (!ones) return cvt_nomem(c);
            for (int64_t k = 0; k < cvt_numel(a->rank, a->shape); k++) ones[k] = 1.0f;
            r = cvt_const_f32_adopt(c, a->rank, a->shape, ones);
        } else {
            r = pow_const(c, a, e);
        }
    }
    if (!r && s == TOSAC_OK) r = pow_general(c, a, b, &s);
    if (!r || x->dtype == TOSAC_DTYPE_FP32) return cvt_finish(c, r, s);
    tosac_value *near = cvt_unary(c, TOSAC_OP_FLOOR, cvt_binary(c, TOSAC_OP_ADD, r, kconst(c, r, TOSAC_DTYPE_FP32, 0.5),
                                                               TOSAC_DTYPE_UNKNOWN));
    tosac_value *err = cvt_unary(c, TOSAC_OP_ABS, cvt_binary(c, TOSAC_OP_SUB, r, near, TOSAC_DTYPE_UNKNOWN));
    tosac_value *mag = cvt_unary(c, TOSAC_OP_ABS, r);
    tosac_value *tol =
        cvt_binary(c, TOSAC_OP_MUL, mag, kconst(c, r, TOSAC_DTYPE_FP32, 1.0 / (1 << 18)), TOSAC_DTYPE_UNKNOWN);
    tosac_value *exact = cvt_binary(c, TOSAC_OP_GREATER_EQUAL, tol, err, TOSAC_DTYPE_BOOL);
    r = cvt_select(c, exact, near, trunc_fp(c, r, &s), &s);
    return cvt_finish(c, cast(c, r, TOSAC_DTYPE_INT32), s);
}
