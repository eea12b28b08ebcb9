/*
 * --emit-qdq: the FP program the quantizer started from (NHWC inside, BatchNorm folded, softmax
 * and norms decomposed), written back as an ONNX model (opset 13) with QuantizeLinear +
 * DequantizeLinear after every value the INT program holds in int8, at exactly the q-params it
 * chose, and the constants the INT program reads as int8/int32 (weights, biases, MUL operands)
 * stored as those integers + DequantizeLinear. Run in float by any ONNX runtime, its Q/DQ nodes
 * round where the INT program rounds, so the two agree up to the rounding of RESCALE against
 * float32 arithmetic: a check of the integer lowering apart from quantization noise.
 * What stays float is what the INT program computes wider: int32 accumulators, sums and
 * products consumed before any int8 rounding, and the inside of TABLE subgraphs (a TABLE is the
 * float subgraph evaluated on the 256 input codes, then quantized: exactly Q(f(DQ(x)))).
 */
#include <math.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/outfile.h"
#include "onnx.pb-c.h"
#include "ir/rewrite.h"
#include "quant/quant_internal.h"

#define OT_FLOAT ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define OT_INT8 ONNX__TENSOR_PROTO__DATA_TYPE__INT8
#define OT_INT32 ONNX__TENSOR_PROTO__DATA_TYPE__INT32
#define OT_INT64 ONNX__TENSOR_PROTO__DATA_TYPE__INT64

typedef struct em {
    tosac_arena a; /* every proto object and string */
    const tosac_block *fb;
    const tosac_quant_iomap *io;
    const quant_qdq_value *v;
    const quant_qdq_node *qn;
    tosac_diag *d;
    Onnx__NodeProto **nodes;
    size_t n_nodes, cap_nodes;
    Onnx__TensorProto **inits;
    size_t n_inits, cap_inits;
    const char **fname; /* FP value -> its float name */
    const char **qname; /* FP value -> its DequantizeLinear output (int8 form) */
    bool *const_done;   /* FP constant -> its float initializer exists */
    uint32_t uniq;
    bool nomem;
    tosac_status err; /* an error already reported (besides out of memory) */
} em;

static char *fmt(em *e, const char *f, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    char *s = tosac_arena_strdup(&e->a, buf);
    if (!s) e->nomem = true;
    return s;
}

static const char *fresh(em *e, const char *base) { return fmt(e, "%s/qdq%u", base, e->uniq++); }

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return true;
    size_t nc = *cap ? *cap * 2 : 64;
    while (nc < need) nc *= 2;
    void *q = realloc(*p, nc * elem);
    if (!q) return false;
    *p = q;
    *cap = nc;
    return true;
}

static Onnx__NodeProto *node(em *e, const char *op, size_t n_in, const char *const *in, const char *out)
{
    Onnx__NodeProto *n = tosac_arena_alloc(&e->a, sizeof *n);
    char **ins = tosac_arena_alloc(&e->a, (n_in ? n_in : 1) * sizeof *ins);
    char **outs = tosac_arena_alloc(&e->a, sizeof *outs);
    if (!n || !ins || !outs || !out || !grow((void **)&e->nodes, &e->cap_nodes, e->n_nodes + 1, sizeof *e->nodes)) {
        e->nomem = true;
        return NULL;
    }
    onnx__node_proto__init(n);
    for (size_t k = 0; k < n_in; k++) {
        if (!in[k]) {
            e->nomem = true;
            return NULL;
        }
        ins[k] = (char *)in[k];
    }
    outs[0] = (char *)out;
    n->n_input = n_in;
    n->input = ins;
    n->n_output = 1;
    n->output = outs;
    n->op_type = (char *)op;
    n->name = fmt(e, "n%zu_%s", e->n_nodes, op);
    e->nodes[e->n_nodes++] = n;
    return n;
}

static Onnx__AttributeProto *attr(em *e, Onnx__NodeProto *n, const char *name)
{
    if (!n) return NULL;
    Onnx__AttributeProto *a = tosac_arena_alloc(&e->a, sizeof *a);
    Onnx__AttributeProto **list = tosac_arena_alloc(&e->a, (n->n_attribute + 1) * sizeof *list);
    if (!a || !list) {
        e->nomem = true;
        return NULL;
    }
    onnx__attribute_proto__init(a);
    a->name = (char *)name;
    if (n->n_attribute) memcpy(list, n->attribute, n->n_attribute * sizeof *list);
    list[n->n_attribute++] = a;
    n->attribute = list;
    return a;
}

static void attr_int(em *e, Onnx__NodeProto *n, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = attr(e, n, name);
    if (!a) return;
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    a->has_i = 1;
    a->i = v;
}

static void attr_ints(em *e, Onnx__NodeProto *n, const char *name, const int64_t *v, size_t len)
{
    Onnx__AttributeProto *a = attr(e, n, name);
    int64_t *copy = a ? tosac_arena_memdup(&e->a, v, len * sizeof *v) : NULL;
    if (!copy) {
        e->nomem = true;
        return;
    }
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    a->n_ints = len;
    a->ints = copy;
}

/* An initializer from little-endian raw bytes (`data` is copied). */
static const char *init_raw(em *e, const char *name, int32_t dtype, int rank, const int64_t *dims, const void *data,
                            size_t nbytes)
{
    Onnx__TensorProto *t = tosac_arena_alloc(&e->a, sizeof *t);
    int64_t *dd = tosac_arena_alloc(&e->a, (rank ? (size_t)rank : 1) * sizeof *dd);
    uint8_t *raw = tosac_arena_alloc(&e->a, nbytes ? nbytes : 1);
    if (!t || !dd || !raw || !name || !grow((void **)&e->inits, &e->cap_inits, e->n_inits + 1, sizeof *e->inits)) {
        e->nomem = true;
        return NULL;
    }
    onnx__tensor_proto__init(t);
    if (rank) memcpy(dd, dims, (size_t)rank * sizeof *dd);
    if (nbytes) memcpy(raw, data, nbytes);
    t->n_dims = (size_t)rank;
    t->dims = dd;
    t->has_data_type = 1;
    t->data_type = dtype;
    t->name = (char *)name;
    t->has_raw_data = 1;
    t->raw_data.len = nbytes;
    t->raw_data.data = raw;
    e->inits[e->n_inits++] = t;
    return name;
}

/* Raw little-endian bytes of n values of width w from int64s. */
static void *pack_ints(const int64_t *v, size_t n, unsigned w)
{
    uint8_t *p = malloc(n * w + 1);
    if (!p) return NULL;
    for (size_t k = 0; k < n; k++)
        for (unsigned j = 0; j < w; j++) p[k * w + j] = (uint8_t)((uint64_t)v[k] >> (8 * j));
    return p;
}

static const char *init_ints(em *e, const char *base, int32_t dtype, int rank, const int64_t *dims, const int64_t *v,
                             size_t n)
{
    unsigned w = dtype == OT_INT8 ? 1 : dtype == OT_INT32 ? 4 : 8;
    void *raw = pack_ints(v, n, w);
    if (!raw) {
        e->nomem = true;
        return NULL;
    }
    const char *name = init_raw(e, fresh(e, base), dtype, rank, dims, raw, n * w);
    free(raw);
    return name;
}

static const char *init_floats(em *e, const char *base, int rank, const int64_t *dims, const float *v, size_t n)
{
    uint8_t *raw = malloc(n * 4 + 1);
    if (!raw) {
        e->nomem = true;
        return NULL;
    }
    for (size_t k = 0; k < n; k++) {
        uint32_t u;
        memcpy(&u, &v[k], 4);
        for (unsigned j = 0; j < 4; j++) raw[4 * k + j] = (uint8_t)(u >> (8 * j));
    }
    const char *name = init_raw(e, fresh(e, base), OT_FLOAT, rank, dims, raw, n * 4);
    free(raw);
    return name;
}

static const char *scalar_f(em *e, const char *base, float v) { return init_floats(e, base, 0, NULL, &v, 1); }

static const char *ints64(em *e, const char *base, const int64_t *v, size_t n)
{
    int64_t dim = (int64_t)n;
    return init_ints(e, base, OT_INT64, 1, &dim, v, n);
}

/* QuantizeLinear + DequantizeLinear of `in` at q (int8, per tensor): out is the dequantized value.
   The scale is the float32 nearest tosac's double scale (ONNX scales are float). */
static void qdq(em *e, const char *in, tosac_qparams q, const char *out)
{
    int64_t zp = q.zero_point;
    const char *s = scalar_f(e, "scale", (float)q.scale), *z = init_ints(e, "zp", OT_INT8, 0, NULL, &zp, 1);
    const char *mid = fresh(e, "q");
    const char *qi[3] = {in, s, z}, *di[3] = {mid, s, z};
    node(e, "QuantizeLinear", 3, qi, mid);
    node(e, "DequantizeLinear", 3, di, out);
}

/* Integer codes + DequantizeLinear (per channel along `axis` when n_scales > 1). */
static const char *dq_const(em *e, const char *base, int32_t dtype, int rank, const int64_t *dims, const int64_t *codes,
                            size_t n, const double *scales, size_t n_scales, int axis)
{
    float *sf = malloc((n_scales ? n_scales : 1) * sizeof *sf);
    int64_t *zp = calloc(n_scales ? n_scales : 1, sizeof *zp);
    const char *out = NULL;
    if (sf && zp) {
        for (size_t c = 0; c < n_scales; c++) sf[c] = (float)scales[c];
        int64_t nsd = (int64_t)n_scales;
        const char *q = init_ints(e, base, dtype, rank, dims, codes, n);
        const char *s = n_scales > 1 ? init_floats(e, "scale", 1, &nsd, sf, n_scales) : scalar_f(e, "scale", sf[0]);
        const char *z = n_scales > 1 ? init_ints(e, "zp", dtype, 1, &nsd, zp, n_scales)
                                     : init_ints(e, "zp", dtype, 0, NULL, zp, 1);
        const char *in[3] = {q, s, z};
        out = fresh(e, base);
        Onnx__NodeProto *nd = node(e, "DequantizeLinear", 3, in, out);
        if (n_scales > 1) attr_int(e, nd, "axis", axis);
    } else {
        e->nomem = true;
    }
    free(sf);
    free(zp);
    return out;
}

static tosac_status fail(em *e, const tosac_node *n, const char *why)
{
    char w[300];
    return tosac_diag_add(e->d, TOSAC_ERR_UNSUPPORTED, "--emit-qdq: op %u (%s)%s: %s", n->index, tosac_op_name(n->op),
                          quant_where(n, w, sizeof w), why);
}

static int64_t shape_at(const tosac_value *v, uint32_t k)
{
    uint64_t u = 0;
    for (unsigned j = 0; j < 8; j++) u |= (uint64_t)v->data[8 * k + j] << (8 * j);
    return (int64_t)u;
}

static int32_t const_i32(const tosac_value *v, int64_t k)
{
    return (int32_t)((uint32_t)v->data[4 * k] | (uint32_t)v->data[4 * k + 1] << 8 | (uint32_t)v->data[4 * k + 2] << 16 |
                     (uint32_t)v->data[4 * k + 3] << 24);
}

/* A constant as it is, in float (or int32). */
static const char *plain_const(em *e, const tosac_value *v)
{
    if (e->const_done[v->index]) return v->name;
    int64_t n = tosac_value_nelem(v);
    if (v->dtype != TOSAC_DTYPE_FP32 && v->dtype != TOSAC_DTYPE_INT32) {
        if (!e->err)
            e->err = tosac_diag_add(e->d, TOSAC_ERR_UNSUPPORTED, "--emit-qdq: constant '%s' (%s) has no ONNX form yet",
                                    v->name, tosac_dtype_name(v->dtype));
        return NULL;
    }
    if (!init_raw(e, v->name, v->dtype == TOSAC_DTYPE_FP32 ? OT_FLOAT : OT_INT32, v->rank, v->shape, v->data,
                  (size_t)n * 4))
        return NULL;
    e->const_done[v->index] = true;
    return v->name;
}

/* Operand k of FP node n as the INT program read it: the int8 form (dequantized) unless it took
   the int32 form; constants as they are. */
static const char *operand(em *e, const tosac_node *n, uint32_t k)
{
    const tosac_value *x = n->inputs[k];
    if (ir_is_const(x)) return plain_const(e, x);
    bool wide = k < 32 && (e->qn[n->index].wide >> k & 1);
    return e->v[x->index].i8 && !wide ? e->qname[x->index] : e->fname[x->index];
}

static const char *transpose(em *e, const char *in, const int64_t *perm, int rank)
{
    const char *out = fresh(e, "t");
    attr_ints(e, node(e, "Transpose", 1, &in, out), "perm", perm, (size_t)rank);
    return out;
}

static const int64_t k_to_nchw[4] = {0, 3, 1, 2}, k_to_nhwc[4] = {0, 2, 3, 1};

static const int32_t *i32v(const tosac_node *n, unsigned id, uint32_t want)
{
    const tosac_attr_val *a = &n->attr[id];
    return a->present && a->len == want ? a->data : NULL;
}

/* TOSA's [top, bottom, left, right] as ONNX's [top, left, bottom, right]. */
static void onnx_pads(const int32_t *p, int64_t *out)
{
    out[0] = p[0];
    out[1] = p[2];
    out[2] = p[1];
    out[3] = p[3];
}

static tosac_status emit_conv(em *e, const tosac_node *n, const char *out)
{
    const tosac_value *x = n->inputs[0], *w = n->inputs[1], *b = n->inputs[2], *y = n->outputs[0];
    bool dw = n->op == TOSAC_OP_DEPTHWISE_CONV2D, tc = n->op == TOSAC_OP_TRANSPOSE_CONV2D;
    const quant_qdq_node *wv = &e->qn[n->index];
    int64_t oc = y->shape[3], nw = tosac_value_nelem(w), nb = tosac_value_nelem(b);
    if (!ir_is_const(w) || !ir_is_const(b) || w->rank != 4 || !wv->ksc || wv->nksc != (uint32_t)oc || !e->v[x->index].i8)
        return fail(e, n, "weights not quantized as the lowering records them");
    static const int32_t one[2] = {1, 1};
    const int32_t *pad = tc ? i32v(n, TOSAC_ATTR_TRANSPOSE_CONV2D_out_pad, 4) : i32v(n, TOSAC_ATTR_CONV2D_pad, 4),
                  *stride = tc ? i32v(n, TOSAC_ATTR_TRANSPOSE_CONV2D_stride, 2) : i32v(n, TOSAC_ATTR_CONV2D_stride, 2),
                  *dil = tc ? one : i32v(n, TOSAC_ATTR_CONV2D_dilation, 2);
    if (!pad || !stride || !dil) return fail(e, n, "missing pad/stride/dilation");
    /* TOSA's out_pad adds rows before/after; ONNX crops with pads and appends with output_padding */
    if (tc && (pad[0] > 0 || pad[2] > 0)) return fail(e, n, "a positive leading out_pad has no ConvTranspose form");
    /* ONNX weight layout [O, I/group, KH, KW]: OHWI -> OIHW; depthwise [KH, KW, C, M] -> [C*M, 1, KH, KW];
       ConvTranspose [I, O, KH, KW] from OHWI */
    int64_t kh = dw ? w->shape[0] : w->shape[1], kw = dw ? w->shape[1] : w->shape[2];
    int64_t ci = dw ? 1 : w->shape[3], group = dw ? w->shape[2] : 1;
    int64_t dims[4] = {tc ? ci : oc, tc ? oc : ci, kh, kw};
    int64_t *codes = malloc((size_t)nw * sizeof *codes), *bc = malloc((size_t)oc * sizeof *bc);
    double *bs = malloc((size_t)oc * sizeof *bs);
    if (!codes || !bc || !bs) {
        free(codes), free(bc), free(bs);
        return tosac_diag_add(e->d, TOSAC_ERR_NOMEM, "out of memory");
    }
    for (int64_t k = 0; k < nw; k++) {
        int64_t o, i, h, ww, src;
        if (dw) { /* k over [C*M, 1, KH, KW] */
            o = k / (kh * kw), h = k / kw % kh, ww = k % kw;
            src = (h * kw + ww) * oc + o; /* [KH, KW, C, M] flattened: channel c*M+m is last */
        } else if (tc) { /* k over [I, O, KH, KW] */
            i = k / (oc * kh * kw), o = k / (kh * kw) % oc, h = k / kw % kh, ww = k % kw;
            src = ((o * kh + h) * kw + ww) * ci + i;
        } else {
            o = k / (ci * kh * kw), i = k / (kh * kw) % ci, h = k / kw % kh, ww = k % kw;
            src = ((o * kh + h) * kw + ww) * ci + i;
        }
        tosac_qparams wq = {wv->ksc[o], 0};
        codes[k] = tosac_quant_quantize(quant_const_f32(w, src), wq, -127, 127);
    }
    double sx = e->v[x->index].q.scale;
    for (int64_t c = 0; c < oc; c++) { /* as lower_conv: int32 at s_in * s_w[c] */
        bs[c] = sx * wv->ksc[c];
        double r = nearbyint(quant_const_f32(b, nb == 1 ? 0 : c) / bs[c]);
        bc[c] = (int64_t)(r > 2147483647.0 ? 2147483647.0 : r < -2147483647.0 ? -2147483647.0 : r);
    }
    const char *wq = dq_const(e, "w", OT_INT8, 4, dims, codes, (size_t)nw, wv->ksc, (size_t)oc, tc ? 1 : 0);
    const char *bq = dq_const(e, "b", OT_INT32, 1, &oc, bc, (size_t)oc, bs, (size_t)oc, 0);
    free(codes), free(bc), free(bs);
    const char *in[3] = {transpose(e, operand(e, n, 0), k_to_nchw, 4), wq, bq}, *mid = fresh(e, "conv");
    Onnx__NodeProto *c = node(e, tc ? "ConvTranspose" : "Conv", 3, in, mid);
    int64_t p[4], s[2] = {stride[0], stride[1]}, dl[2] = {dil[0], dil[1]};
    if (tc) {
        int64_t op[2] = {pad[1] > 0 ? pad[1] : 0, pad[3] > 0 ? pad[3] : 0};
        p[0] = -pad[0], p[1] = -pad[2], p[2] = pad[1] < 0 ? -pad[1] : 0, p[3] = pad[3] < 0 ? -pad[3] : 0;
        attr_ints(e, c, "output_padding", op, 2);
    } else {
        onnx_pads(pad, p);
        attr_ints(e, c, "dilations", dl, 2);
        attr_int(e, c, "group", group);
    }
    attr_ints(e, c, "pads", p, 4);
    attr_ints(e, c, "strides", s, 2);
    const char *t = transpose(e, mid, k_to_nhwc, 4);
    node(e, "Identity", 1, &t, out);
    return TOSAC_OK;
}

static tosac_status emit_matmul(em *e, const tosac_node *n, const char *out)
{
    const tosac_value *bm = n->inputs[1];
    const char *in[2] = {operand(e, n, 0), NULL};
    if (ir_is_const(bm)) { /* per-column int8 weights, as quant_weights made them */
        const quant_qdq_node *bv = &e->qn[n->index];
        int64_t wcols = bm->shape[bm->rank - 1], nn = tosac_value_nelem(bm);
        if (!bv->ksc || bv->nksc != (uint32_t)wcols) return fail(e, n, "constant B not quantized as weights");
        int64_t *codes = malloc((size_t)nn * sizeof *codes);
        if (!codes) return tosac_diag_add(e->d, TOSAC_ERR_NOMEM, "out of memory");
        for (int64_t k = 0; k < nn; k++) {
            tosac_qparams wq = {bv->ksc[k % wcols], 0};
            codes[k] = tosac_quant_quantize(quant_const_f32(bm, k), wq, -127, 127);
        }
        in[1] = dq_const(e, "w", OT_INT8, bm->rank, bm->shape, codes, (size_t)nn, bv->ksc, (size_t)wcols, bm->rank - 1);
        free(codes);
    } else {
        in[1] = operand(e, n, 1);
    }
    node(e, "MatMul", 2, in, out);
    return TOSAC_OK;
}

/* MUL: a constant operand the lowering read as symmetric int8 (unit_i32) is those codes; by a
   positive scalar only the int32 scale changed (no record): exact, left float. */
static const char *mul_operand(em *e, const tosac_node *n, uint32_t k)
{
    const tosac_value *c = n->inputs[k];
    const quant_qdq_node *cv = &e->qn[n->index];
    if (!ir_is_const(c) || cv->in_table || !cv->ksc || c->dtype != TOSAC_DTYPE_FP32) return operand(e, n, k);
    int64_t nn = tosac_value_nelem(c);
    int64_t *codes = malloc((size_t)(nn ? nn : 1) * sizeof *codes);
    if (!codes) return e->nomem = true, NULL;
    for (int64_t j = 0; j < nn; j++) {
        double r = nearbyint(quant_const_f32(c, j) / cv->ksc[0]);
        codes[j] = (int64_t)(r > 127 ? 127 : r < -127 ? -127 : r);
    }
    const char *name = dq_const(e, "k", OT_INT8, c->rank, c->shape, codes, (size_t)nn, cv->ksc, 1, 0);
    free(codes);
    return name;
}

/* ADD/SUB of a constant to an int32 result (a bias after MATMUL): the lowering rounds the
   constant to int32 at that result's per-channel scales (broadcast over them when it has one
   element per row); the rounding is kept, it can move the output by a step. */
static const char *addsub_operand(em *e, const tosac_node *n, uint32_t k)
{
    const tosac_value *c = n->inputs[k], *x = n->inputs[1 - k];
    const quant_qdq_node *cv = &e->qn[n->index];
    bool x_wide = !ir_is_const(x) && (cv->wide >> (1 - k) & 1);
    if (!ir_is_const(c) || cv->in_table || !cv->ksc || !x_wide || c->dtype != TOSAC_DTYPE_FP32 || c->rank < 1)
        return operand(e, n, k);
    int64_t kn = tosac_value_nelem(c), klast = c->shape[c->rank - 1], nsc = cv->nksc;
    int64_t kshape[TOSAC_MAX_RANK];
    memcpy(kshape, c->shape, (size_t)c->rank * sizeof *kshape);
    if (nsc > 1 && klast == 1) kshape[c->rank - 1] = nsc;
    int64_t cn = nsc > 1 && klast == 1 ? kn * nsc : kn;
    int64_t *codes = malloc((size_t)(cn ? cn : 1) * sizeof *codes);
    if (!codes) return e->nomem = true, NULL;
    for (int64_t j = 0; j < cn; j++) {
        int64_t ch = nsc > 1 ? j % nsc : 0, src = cn == kn ? j : j / nsc;
        double r = nearbyint((double)quant_const_f32(c, src) / cv->ksc[ch]);
        codes[j] = (int64_t)(r > 1073741823.0 ? 1073741823.0 : r < -1073741823.0 ? -1073741823.0 : r);
    }
    const char *name =
        dq_const(e, "k", OT_INT32, c->rank, kshape, codes, (size_t)cn, cv->ksc, (size_t)nsc, c->rank - 1);
    free(codes);
    return name;
}

static tosac_status emit_pool(em *e, const tosac_node *n, const char *out)
{
    bool avg = n->op == TOSAC_OP_AVG_POOL2D;
    const int32_t *k = i32v(n, avg ? TOSAC_ATTR_AVG_POOL2D_kernel : TOSAC_ATTR_MAX_POOL2D_kernel, 2),
                  *s = i32v(n, avg ? TOSAC_ATTR_AVG_POOL2D_stride : TOSAC_ATTR_MAX_POOL2D_stride, 2),
                  *p = i32v(n, avg ? TOSAC_ATTR_AVG_POOL2D_pad : TOSAC_ATTR_MAX_POOL2D_pad, 4);
    if (!k || !s || !p) return fail(e, n, "missing kernel/stride/pad");
    const char *t = transpose(e, operand(e, n, 0), k_to_nchw, 4), *mid = fresh(e, "pool");
    Onnx__NodeProto *nd = node(e, avg ? "AveragePool" : "MaxPool", 1, &t, mid);
    int64_t kk[2] = {k[0], k[1]}, ss[2] = {s[0], s[1]}, pp[4];
    onnx_pads(p, pp);
    attr_ints(e, nd, "kernel_shape", kk, 2);
    attr_ints(e, nd, "strides", ss, 2);
    attr_ints(e, nd, "pads", pp, 4);
    if (avg) attr_int(e, nd, "count_include_pad", 0); /* TOSA divides by the valid taps only */
    const char *back = transpose(e, mid, k_to_nhwc, 4);
    const quant_qdq_value *yv = &e->v[n->outputs[0]->index];
    if (avg && yv->i8) {
        /* the int8 AVG_POOL2D divides by multiplying with reciprocal_scale(count), a multiplier a
           little above 2^(30+k)/count, and apply_scale's round half up: a tie rounds away from
           zero, where QuantizeLinear rounds it to even. Moving the average 1/(4 taps) of a step
           away from zero turns every tie (a multiple of 1/taps from a code) into the same code and
           moves nothing else. */
        const char *sg = fresh(e, "sign"), *bias = fresh(e, "tie");
        const char *in[2] = {sg, scalar_f(e, "tie", (float)(yv->q.scale / (4.0 * k[0] * k[1])))};
        node(e, "Sign", 1, &back, sg);
        node(e, "Mul", 2, in, bias);
        const char *add[2] = {back, bias};
        node(e, "Add", 2, add, out);
    } else {
        node(e, "Identity", 1, &back, out);
    }
    return TOSAC_OK;
}

static const char *unary_name(uint32_t op)
{
    switch (op) {
    case TOSAC_OP_SIGMOID: return "Sigmoid";
    case TOSAC_OP_TANH: return "Tanh";
    case TOSAC_OP_ERF: return "Erf";
    case TOSAC_OP_EXP: return "Exp";
    case TOSAC_OP_LOG: return "Log";
    case TOSAC_OP_ABS: return "Abs";
    case TOSAC_OP_NEGATE: return "Neg";
    case TOSAC_OP_CEIL: return "Ceil";
    case TOSAC_OP_FLOOR: return "Floor";
    case TOSAC_OP_SIN: return "Sin";
    case TOSAC_OP_COS: return "Cos";
    case TOSAC_OP_RECIPROCAL: return "Reciprocal";
    case TOSAC_OP_IDENTITY: return "Identity";
    default: return NULL;
    }
}

static const char *binary_name(uint32_t op)
{
    switch (op) {
    case TOSAC_OP_ADD: return "Add";
    case TOSAC_OP_SUB: return "Sub";
    case TOSAC_OP_MUL: return "Mul";
    case TOSAC_OP_MAXIMUM: return "Max";
    case TOSAC_OP_MINIMUM: return "Min";
    case TOSAC_OP_POW: return "Pow";
    default: return NULL;
    }
}


/* The values of a shape operand (CONST_SHAPE). */
static bool shape_vals(const tosac_value *v, int64_t *out, uint32_t max, uint32_t *n)
{
    if (!v->is_shape || !v->data || v->rank != 1 || v->shape[0] > max || v->data_len < (size_t)v->shape[0] * 8) return false;
    *n = (uint32_t)v->shape[0];
    for (uint32_t k = 0; k < *n; k++) out[k] = shape_at(v, k);
    return true;
}

static tosac_status emit_node(em *e, const tosac_node *n, const char *out)
{
    const char *op;
    int64_t sv[2 * TOSAC_MAX_RANK], sv2[2 * TOSAC_MAX_RANK];
    uint32_t ns, ns2;
    const tosac_value *x = n->inputs[0];
    switch (n->op) {
    case TOSAC_OP_CONV2D:
    case TOSAC_OP_DEPTHWISE_CONV2D:
    case TOSAC_OP_TRANSPOSE_CONV2D: return emit_conv(e, n, out);
    case TOSAC_OP_MATMUL: return emit_matmul(e, n, out);
    case TOSAC_OP_AVG_POOL2D:
    case TOSAC_OP_MAX_POOL2D: return emit_pool(e, n, out);
    case TOSAC_OP_CLAMP: {
        const char *in[3] = {NULL, NULL, NULL};
        in[0] = operand(e, n, 0);
        in[1] = scalar_f(e, "min", quant_attr_f32(n, TOSAC_ATTR_CLAMP_min_val, -INFINITY));
        in[2] = scalar_f(e, "max", quant_attr_f32(n, TOSAC_ATTR_CLAMP_max_val, INFINITY));
        node(e, "Clip", 3, in, out);
        return TOSAC_OK;
    }
    case TOSAC_OP_RSQRT: {
        const char *in = operand(e, n, 0), *mid = fresh(e, "sqrt");
        node(e, "Sqrt", 1, &in, mid);
        node(e, "Reciprocal", 1, &mid, out);
        return TOSAC_OK;
    }
    case TOSAC_OP_REDUCE_SUM:
    case TOSAC_OP_REDUCE_MAX:
    case TOSAC_OP_REDUCE_MIN: {
        int64_t axis = n->attr[0].i; /* axis is field 0 of every reduction */
        const char *in[2] = {operand(e, n, 0), NULL};
        Onnx__NodeProto *nd;
        if (n->op == TOSAC_OP_REDUCE_SUM) { /* opset 13: axes is an input for ReduceSum only */
            in[1] = ints64(e, "axes", &axis, 1);
            nd = node(e, "ReduceSum", 2, in, out);
        } else {
            nd = node(e, n->op == TOSAC_OP_REDUCE_MAX ? "ReduceMax" : "ReduceMin", 1, in, out);
            attr_ints(e, nd, "axes", &axis, 1);
        }
        attr_int(e, nd, "keepdims", 1);
        return TOSAC_OK;
    }
    case TOSAC_OP_RESHAPE: {
        if (!shape_vals(n->inputs[1], sv, 2 * TOSAC_MAX_RANK, &ns)) return fail(e, n, "shape is not a constant");
        const char *in[2] = {NULL, NULL};
        in[0] = operand(e, n, 0);
        in[1] = ints64(e, "shape", sv, ns);
        node(e, "Reshape", 2, in, out);
        return TOSAC_OK;
    }
    case TOSAC_OP_TRANSPOSE: {
        const int32_t *p = i32v(n, TOSAC_ATTR_TRANSPOSE_perms, (uint32_t)x->rank);
        if (!p) return fail(e, n, "bad perms");
        for (int32_t k = 0; k < x->rank; k++) sv[k] = p[k];
        const char *in = operand(e, n, 0);
        attr_ints(e, node(e, "Transpose", 1, &in, out), "perm", sv, (size_t)x->rank);
        return TOSAC_OK;
    }
    case TOSAC_OP_CONCAT: {
        const char **in = malloc(n->n_inputs * sizeof *in);
        if (!in) return tosac_diag_add(e->d, TOSAC_ERR_NOMEM, "out of memory");
        for (uint32_t k = 0; k < n->n_inputs; k++) in[k] = operand(e, n, k);
        attr_int(e, node(e, "Concat", n->n_inputs, in, out), "axis", n->attr[TOSAC_ATTR_CONCAT_axis].i);
        free(in);
        return TOSAC_OK;
    }
    case TOSAC_OP_SLICE: {
        if (!shape_vals(n->inputs[1], sv, TOSAC_MAX_RANK, &ns) || !shape_vals(n->inputs[2], sv2, TOSAC_MAX_RANK, &ns2) ||
            ns != ns2)
            return fail(e, n, "start/size are not constants");
        int64_t axes[TOSAC_MAX_RANK];
        for (uint32_t k = 0; k < ns; k++) {
            sv2[k] += sv[k];
            axes[k] = k;
        }
        const char *in[4] = {NULL, NULL, NULL, NULL};
        in[0] = operand(e, n, 0);
        in[1] = ints64(e, "starts", sv, ns);
        in[2] = ints64(e, "ends", sv2, ns);
        in[3] = ints64(e, "axes", axes, ns);
        node(e, "Slice", 4, in, out);
        return TOSAC_OK;
    }
    case TOSAC_OP_REVERSE: { /* Slice backwards along the axis */
        int64_t st = -1, en = INT64_MIN, ax = n->attr[TOSAC_ATTR_REVERSE_axis].i, step = -1;
        const char *in[5] = {NULL, NULL, NULL, NULL, NULL};
        in[0] = operand(e, n, 0);
        in[1] = ints64(e, "starts", &st, 1);
        in[2] = ints64(e, "ends", &en, 1);
        in[3] = ints64(e, "axes", &ax, 1);
        in[4] = ints64(e, "steps", &step, 1);
        node(e, "Slice", 5, in, out);
        return TOSAC_OK;
    }
    case TOSAC_OP_TILE: {
        if (!shape_vals(n->inputs[1], sv, TOSAC_MAX_RANK, &ns)) return fail(e, n, "multiples are not constants");
        const char *in[2] = {NULL, NULL};
        in[0] = operand(e, n, 0);
        in[1] = ints64(e, "repeats", sv, ns);
        node(e, "Tile", 2, in, out);
        return TOSAC_OK;
    }
    case TOSAC_OP_PAD: {
        const tosac_value *pc = n->inputs[2];
        if (!shape_vals(n->inputs[1], sv, 2 * TOSAC_MAX_RANK, &ns) || ns != 2 * (uint32_t)x->rank || !ir_is_const(pc) ||
            pc->dtype != TOSAC_DTYPE_FP32)
            return fail(e, n, "padding and pad value must be constants");
        for (int32_t k = 0; k < x->rank; k++) { /* [b0, a0, b1, a1, ...] -> [b0, b1, ..., a0, a1, ...] */
            sv2[k] = sv[2 * k];
            sv2[x->rank + k] = sv[2 * k + 1];
        }
        const char *in[3] = {NULL, NULL, NULL};
        in[0] = operand(e, n, 0);
        in[1] = ints64(e, "pads", sv2, ns);
        in[2] = scalar_f(e, "pad", quant_const_f32(pc, 0));
        node(e, "Pad", 3, in, out);
        return TOSAC_OK;
    }
    case TOSAC_OP_GATHER: { /* values [N,K,C], indices [N,W] -> [N,W,C]: GatherElements on axis 1 */
        const tosac_value *ix = n->inputs[1], *y = n->outputs[0];
        if (!ir_is_const(ix) || ix->dtype != TOSAC_DTYPE_INT32 || x->rank != 3 || ix->rank != 2)
            return fail(e, n, "only constant indices are supported");
        int64_t nn = y->shape[0], ww = y->shape[1], cc = y->shape[2], tot = nn * ww * cc;
        int64_t *iv = malloc((size_t)(tot ? tot : 1) * sizeof *iv);
        if (!iv) return tosac_diag_add(e->d, TOSAC_ERR_NOMEM, "out of memory");
        for (int64_t k = 0; k < tot; k++) iv[k] = const_i32(ix, k / cc);
        const char *in[2] = {NULL, NULL};
        in[0] = operand(e, n, 0);
        in[1] = init_ints(e, "indices", OT_INT64, 3, y->shape, iv, (size_t)tot);
        free(iv);
        attr_int(e, node(e, "GatherElements", 2, in, out), "axis", 1);
        return TOSAC_OK;
    }
    default: break;
    }
    if ((op = unary_name(n->op)) != NULL) {
        const char *in = operand(e, n, 0);
        node(e, op, 1, &in, out);
        return TOSAC_OK;
    }
    if ((op = binary_name(n->op)) != NULL) { /* MUL's shift operand (0 for FP) is dropped */
        const char *in[2];
        for (uint32_t k = 0; k < 2; k++)
            in[k] = n->op == TOSAC_OP_MUL                               ? mul_operand(e, n, k)
                    : n->op == TOSAC_OP_ADD || n->op == TOSAC_OP_SUB ? addsub_operand(e, n, k)
                                                                      : operand(e, n, k);
        node(e, op, 2, in, out);
        return TOSAC_OK;
    }
    return fail(e, n, "no ONNX form for this operator yet");
}

static Onnx__ValueInfoProto *value_info(em *e, const char *name, const tosac_value *v)
{
    Onnx__ValueInfoProto *vi = tosac_arena_alloc(&e->a, sizeof *vi);
    Onnx__TypeProto *tp = tosac_arena_alloc(&e->a, sizeof *tp);
    Onnx__TypeProto__Tensor *tt = tosac_arena_alloc(&e->a, sizeof *tt);
    Onnx__TensorShapeProto *sp = tosac_arena_alloc(&e->a, sizeof *sp);
    Onnx__TensorShapeProto__Dimension **dims = tosac_arena_alloc(&e->a, ((size_t)v->rank + 1) * sizeof *dims);
    if (!vi || !tp || !tt || !sp || !dims) return e->nomem = true, NULL;
    onnx__value_info_proto__init(vi);
    onnx__type_proto__init(tp);
    onnx__type_proto__tensor__init(tt);
    onnx__tensor_shape_proto__init(sp);
    for (int32_t k = 0; k < v->rank; k++) {
        dims[k] = tosac_arena_alloc(&e->a, sizeof **dims);
        if (!dims[k]) return e->nomem = true, NULL;
        onnx__tensor_shape_proto__dimension__init(dims[k]);
        dims[k]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        dims[k]->dim_value = v->shape[k];
    }
    sp->n_dim = (size_t)v->rank;
    sp->dim = dims;
    tt->has_elem_type = 1;
    tt->elem_type = OT_FLOAT;
    tt->shape = sp;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    vi->name = (char *)name;
    vi->type = tp;
    return vi;
}

/* Packs the model and writes it to a temporary file renamed over path at the end. */
static tosac_status write_model(em *e, const char *path)
{
    const tosac_block *fb = e->fb;
    Onnx__ValueInfoProto **ins = tosac_arena_alloc(&e->a, (fb->n_inputs + 1) * sizeof *ins),
                         **outs = tosac_arena_alloc(&e->a, (fb->n_outputs + 1) * sizeof *outs);
    Onnx__GraphProto gp;
    Onnx__ModelProto mp;
    Onnx__OperatorSetIdProto ops;
    Onnx__OperatorSetIdProto *opsp = &ops;
    if (!ins || !outs) return tosac_diag_add(e->d, TOSAC_ERR_NOMEM, "out of memory");
    for (uint32_t k = 0; k < fb->n_inputs; k++) ins[k] = value_info(e, fb->inputs[k]->name, fb->inputs[k]);
    for (uint32_t k = 0; k < fb->n_outputs; k++) outs[k] = value_info(e, fb->outputs[k]->name, fb->outputs[k]);
    if (e->nomem) return tosac_diag_add(e->d, TOSAC_ERR_NOMEM, "out of memory");
    onnx__graph_proto__init(&gp);
    gp.name = "tosac_qdq";
    gp.n_node = e->n_nodes;
    gp.node = e->nodes;
    gp.n_initializer = e->n_inits;
    gp.initializer = e->inits;
    gp.n_input = fb->n_inputs;
    gp.input = ins;
    gp.n_output = fb->n_outputs;
    gp.output = outs;
    onnx__operator_set_id_proto__init(&ops);
    ops.domain = "";
    ops.has_version = 1;
    ops.version = 13;
    onnx__model_proto__init(&mp);
    mp.has_ir_version = 1;
    mp.ir_version = 7; /* the IR version of opset 13 */
    mp.n_opset_import = 1;
    mp.opset_import = &opsp;
    mp.producer_name = "tosac --emit-qdq";
    mp.graph = &gp;
    size_t len = onnx__model_proto__get_packed_size(&mp);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf) return tosac_diag_add(e->d, TOSAC_ERR_NOMEM, "out of memory");
    onnx__model_proto__pack(&mp, buf);
    tosac_status s = tosac_outfile_write_bytes(path, buf, len, e->d);
    free(buf);
    return s;
}

tosac_status quant_emit_qdq(const tosac_block *fb, const tosac_quant_iomap *io, const quant_qdq_value *v,
                            const quant_qdq_node *nodes, const char *path, tosac_diag *d)
{
    em e;
    memset(&e, 0, sizeof e);
    tosac_arena_init(&e.a);
    e.fb = fb;
    e.io = io;
    e.v = v;
    e.qn = nodes;
    e.d = d;
    uint32_t nt = fb->n_tensors ? fb->n_tensors : 1;
    e.fname = calloc(nt, sizeof *e.fname);
    e.qname = calloc(nt, sizeof *e.qname);
    e.const_done = calloc(nt, sizeof *e.const_done);
    tosac_status s = e.fname && e.qname && e.const_done ? TOSAC_OK : tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    /* names: graph inputs and outputs keep theirs (an output is the DequantizeLinear's result) */
    for (uint32_t k = 0; k < fb->n_tensors && s == TOSAC_OK; k++) {
        const tosac_value *x = fb->tensors[k];
        bool is_out = false;
        for (uint32_t j = 0; j < fb->n_outputs; j++) is_out |= fb->outputs[j] == x;
        e.fname[k] = is_out ? fmt(&e, "%s/float", x->name) : x->name;
        e.qname[k] = is_out ? x->name : fmt(&e, "%s/dq", x->name);
    }
    for (uint32_t k = 0; k < fb->n_inputs && s == TOSAC_OK; k++) {
        const tosac_value *x = fb->inputs[k];
        for (uint32_t j = 0; j < fb->n_outputs; j++)
            if (fb->outputs[j] == x) s = tosac_diag_add(d, TOSAC_ERR_UNSUPPORTED, "--emit-qdq: input '%s' is also an output", x->name);
        if (s == TOSAC_OK && !v[x->index].i8)
            s = tosac_diag_add(d, TOSAC_ERR_INTERNAL, "--emit-qdq: input '%s' has no int8 form", x->name);
        if (s == TOSAC_OK) qdq(&e, e.fname[x->index], io->inputs[k].q, e.qname[x->index]);
    }
    for (uint32_t i = 0; i < fb->n_nodes && s == TOSAC_OK; i++) {
        const tosac_node *n = fb->nodes[i];
        if (n->op == TOSAC_OP_CONST || n->op == TOSAC_OP_CONST_SHAPE || n->dead) continue;
        if (n->n_outputs != 1) {
            s = fail(&e, n, "several outputs");
            break;
        }
        const tosac_value *y = n->outputs[0];
        s = emit_node(&e, n, e.fname[y->index]);
        if (s == TOSAC_OK && v[y->index].i8) qdq(&e, e.fname[y->index], v[y->index].q, e.qname[y->index]);
        if (s == TOSAC_OK && e.err) s = e.err;
        if (s == TOSAC_OK && e.nomem) s = tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    }
    for (uint32_t k = 0; k < fb->n_outputs && s == TOSAC_OK; k++)
        if (!v[fb->outputs[k]->index].i8)
            s = tosac_diag_add(d, TOSAC_ERR_INTERNAL, "--emit-qdq: output '%s' has no int8 form", fb->outputs[k]->name);
    if (s == TOSAC_OK) s = write_model(&e, path);
    free(e.nodes);
    free(e.inits);
    free(e.fname);
    free(e.qname);
    free(e.const_done);
    tosac_arena_deinit(&e.a);
    return s;
}
