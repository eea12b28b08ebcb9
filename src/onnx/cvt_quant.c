/*
 * QuantizeLinear / DequantizeLinear for the TOSA-1.0+FP target: quantization is simulated in
 * floating point (fake quantization), so a QDQ model (onnxruntime's quantization tool writes
 * them) compiles to an FP program that computes what onnxruntime computes with the Q/DQ nodes
 * executed literally:
 *   QuantizeLinear:   q = clamp(round_half_even(x / s) + zp, qmin, qmax)
 *   DequantizeLinear: y = (q - zp) * s
 * The codes between a QuantizeLinear and its DequantizeLinear are an FP32 tensor holding integer
 * values (exact below 2^24), marked `codes`: only DequantizeLinear may read it (convert.c refuses
 * any other consumer and a graph output). Quantized constants (QDQ models store weights as int8
 * or uint8 initializers followed by DequantizeLinear) are dequantized at import. Scales and zero
 * points must be constants; per-tensor or per-axis (opset 13+ `axis`).
 */
#include <math.h>
#include <string.h>

#include "onnx/convert.h"

/* Code range of an ONNX integer type; false if not a supported quantized type. */
static bool code_range(int32_t elem, int64_t *lo, int64_t *hi)
{
    switch (elem) {
    case TOSAC_ONNX_INT8: *lo = -128, *hi = 127; return true;
    case TOSAC_ONNX_UINT8: *lo = 0, *hi = 255; return true;
    case TOSAC_ONNX_INT16: *lo = -32768, *hi = 32767; return true;
    case TOSAC_ONNX_UINT16: *lo = 0, *hi = 65535; return true;
    case TOSAC_ONNX_INT32: *lo = INT32_MIN, *hi = INT32_MAX; return true;
    default: return false;
    }
}

/* Integer contents of input i: decoded host constants, or the raw bytes of an initializer whose
   type the import does not decode (uint8, uint16). */
static tosac_status int_values(cvt_ctx *c, size_t i, int64_t *out, int64_t cap, int64_t *n, int32_t *elem)
{
    cvt_val *v = cvt_in(c, i);
    if (!v) return cvt_fail(c, TOSAC_ERR_FORMAT, "input %zu is missing", i);
    *elem = v->onnx_elem;
    *n = v->numel;
    if (v->numel > cap) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "input '%s' has too many elements", v->name);
    if (v->is_const && v->i) {
        memcpy(out, v->i, (size_t)v->numel * sizeof *out);
        return TOSAC_OK;
    }
    const tosac_onnx_tensor *t = v->is_const ? tosac_onnx_find_initializer(c->m->graph, v->name) : NULL;
    if (t && t->data && (t->elem_type == TOSAC_ONNX_UINT8 || t->elem_type == TOSAC_ONNX_UINT16)) {
        const uint8_t *p = t->data;
        for (int64_t k = 0; k < v->numel; k++)
            out[k] = t->elem_type == TOSAC_ONNX_UINT8 ? p[k] : (int64_t)(p[2 * k] | p[2 * k + 1] << 8);
        return TOSAC_OK;
    }
    return v->is_const ? cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "input '%s' must be a constant integer tensor", v->name)
                       : cvt_need_const(c, v, "a constant integer tensor");
}

typedef struct qdq {
    int axis;           /* -1: per tensor */
    int64_t n;          /* scale count */
    const float *scale;
    int64_t zp[4096];
    int32_t elem;       /* quantized type */
    int64_t lo, hi;
} qdq;

/* Scale (input 1), zero point (input 2, default 0 of `default_elem`) and axis for data of `rank`. */
static tosac_status read_qdq(cvt_ctx *c, int rank, const int64_t *shape, int32_t default_elem, qdq *q)
{
    cvt_val *s = cvt_in(c, 1);
    if (s && !s->is_const) return cvt_need_const(c, s, "a constant FP32 tensor (the scale)");
    if (!s || !s->f) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "the scale must be a constant FP32 tensor");
    q->scale = s->f;
    q->n = s->numel;
    q->axis = -1;
    if (s->numel != 1 || s->rank == 1) {
        if (s->rank != 1) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "block quantization is not supported");
        int64_t a = cvt_attr_i(c, "axis", 1);
        int ax;
        tosac_status st = cvt_axis(c, a, rank, &ax);
        if (st != TOSAC_OK) return st;
        if (s->numel != shape[ax])
            return cvt_fail(c, TOSAC_ERR_FORMAT, "%lld scales for axis %d of size %lld", (long long)s->numel, ax,
                            (long long)shape[ax]);
        q->axis = s->numel == 1 ? -1 : ax;
    }
    if (q->n > (int64_t)(sizeof q->zp / sizeof q->zp[0]))
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "more than %zu scales", sizeof q->zp / sizeof q->zp[0]);
    q->elem = default_elem;
    if (cvt_in(c, 2)) {
        int64_t n;
        tosac_status st = int_values(c, 2, q->zp, (int64_t)(sizeof q->zp / sizeof q->zp[0]), &n, &q->elem);
        if (st != TOSAC_OK) return st;
        if (n != q->n) return cvt_fail(c, TOSAC_ERR_FORMAT, "%lld zero points for %lld scales", (long long)n, (long long)q->n);
    } else {
        memset(q->zp, 0, sizeof q->zp);
        int64_t dt = cvt_attr_i(c, "output_dtype", 0);
        if (dt) q->elem = (int32_t)dt;
    }
    if (!code_range(q->elem, &q->lo, &q->hi))
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "quantized type %s is not supported", tosac_onnx_elem_name(q->elem));
    for (int64_t k = 0; k < q->n; k++)
        if (!(q->scale[k] > 0.0f) || !isfinite(q->scale[k]))
            return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "scale %g is not a positive finite number", (double)q->scale[k]);
    return TOSAC_OK;
}

/* Per-channel constant [1,..,n,..,1] (or a scalar) from n floats. */
static tosac_value *channel_const(cvt_ctx *c, const qdq *q, int rank, const float *vals)
{
    int64_t shape[TOSAC_MAX_RANK];
    for (int k = 0; k < rank; k++) shape[k] = k == q->axis ? q->n : 1;
    return cvt_const_f32(c, rank, shape, vals);
}

tosac_status cvt_quantize_linear(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *xv = cvt_in_req(c, 0, &s);
    if (!xv) return s;
    if (xv->dt != TOSAC_DTYPE_FP32) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "input must be floating point");
    qdq q;
    if ((s = read_qdq(c, xv->rank, xv->shape, TOSAC_ONNX_UINT8, &q)) != TOSAC_OK) return s;
    tosac_value *x = cvt_tensor(c, xv, &s);
    if (!x) return s;
    float *inv = tosac_arena_alloc(&c->arena, (size_t)q.n * 2 * sizeof(float) + 1);
    if (!inv) return cvt_nomem(c);
    float *zp = inv + q.n;
    for (int64_t k = 0; k < q.n; k++) inv[k] = 1.0f / q.scale[k], zp[k] = (float)q.zp[k];
    /* x / s as x * (1/s): TOSA has no FP division; the two can differ in the last bit, which moves
       a code only when x/s is within one rounding of a tie */
    tosac_value *t = cvt_binary(c, TOSAC_OP_MUL, x, channel_const(c, &q, xv->rank, inv), TOSAC_DTYPE_UNKNOWN);
    /* round half to even: CAST to INT32 rounds that way (and saturates), CAST back is exact */
    tosac_value *r = t ? cvt_new(c, TOSAC_DTYPE_INT32, t->rank, t->shape) : NULL;
    if (r && !cvt_op(c, TOSAC_OP_CAST, 1, &t, r)) r = NULL;
    tosac_value *rf = r ? cvt_new(c, TOSAC_DTYPE_FP32, r->rank, r->shape) : NULL;
    if (rf && !cvt_op(c, TOSAC_OP_CAST, 1, &r, rf)) rf = NULL;
    tosac_value *y = rf ? cvt_binary(c, TOSAC_OP_ADD, rf, channel_const(c, &q, xv->rank, zp), TOSAC_DTYPE_UNKNOWN) : NULL;
    y = cvt_clamp(c, y, (float)q.lo, (float)q.hi);
    if (!y) return cvt_nomem(c);
    if ((s = cvt_set_out(c, 0, y)) != TOSAC_OK) return s;
    cvt_val *out = cvt_lookup(c, c->node->outputs[0]);
    out->codes = true;
    out->onnx_elem = q.elem;
    return TOSAC_OK;
}

tosac_status cvt_dequantize_linear(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *xv = cvt_in_req(c, 0, &s);
    if (!xv) return s;
    qdq q;
    if ((s = read_qdq(c, xv->rank, xv->shape, xv->onnx_elem, &q)) != TOSAC_OK) return s;
    if (xv->is_const && !xv->v && !xv->codes) {
        /* a quantized constant (weights, int32 bias): dequantized now, as onnxruntime does it:
           float(q - zp) * s */
        int64_t *codes = tosac_arena_alloc(&c->arena, (size_t)xv->numel * sizeof *codes + 1);
        float *f = tosac_arena_alloc(&c->arena, (size_t)xv->numel * sizeof *f + 1);
        if (!codes || !f) return cvt_nomem(c);
        int64_t n;
        int32_t elem;
        if ((s = int_values(c, 0, codes, xv->numel, &n, &elem)) != TOSAC_OK) return s;
        int64_t inner = 1, ch = q.axis < 0 ? 1 : xv->shape[q.axis];
        for (int k = q.axis < 0 ? xv->rank : q.axis + 1; k < xv->rank; k++) inner *= xv->shape[k];
        for (int64_t k = 0; k < n; k++) {
            int64_t j = q.axis < 0 ? 0 : (k / inner) % ch;
            f[k] = (float)(codes[k] - q.zp[j]) * q.scale[j];
        }
        return cvt_set_out_const(c, 0, TOSAC_DTYPE_FP32, xv->rank, xv->shape, f, NULL);
    }
    tosac_value *x = cvt_tensor(c, xv, &s);
    if (!x) return s;
    if (!xv->codes) {
        /* integer data from outside (an int8 graph input): to FP32 first */
        if (x->dtype == TOSAC_DTYPE_FP32) return cvt_fail(c, TOSAC_ERR_FORMAT, "input is not quantized data");
        tosac_value *xf = cvt_new(c, TOSAC_DTYPE_FP32, x->rank, x->shape);
        if (!xf || !cvt_op(c, TOSAC_OP_CAST, 1, &x, xf)) return cvt_nomem(c);
        x = xf;
    }
    float *zp = tosac_arena_alloc(&c->arena, (size_t)q.n * sizeof(float) + 1);
    if (!zp) return cvt_nomem(c);
    for (int64_t k = 0; k < q.n; k++) zp[k] = (float)q.zp[k];
    tosac_value *d = cvt_binary(c, TOSAC_OP_SUB, x, channel_const(c, &q, xv->rank, zp), TOSAC_DTYPE_UNKNOWN);
    tosac_value *y = d ? cvt_binary(c, TOSAC_OP_MUL, d, channel_const(c, &q, xv->rank, q.scale), TOSAC_DTYPE_UNKNOWN) : NULL;
    return cvt_finish(c, y, s);
}
