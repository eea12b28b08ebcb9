/*
 * --emit-qdq FILE.onnx (docs/QUANT.md): the program tosac quantized, as an ONNX model with tosac's
 * chosen q-params as QuantizeLinear/DequantizeLinear nodes, so that any ONNX tool simulates
 * exactly what was chosen (onnxruntime with graph optimisations off executes Q/DQ literally).
 *
 * The model written is the FP graph the quantizer started from (BatchNorm folded, NHWC inside,
 * softmax and norms decomposed), op by op, with:
 *   - Q -> DQ (int8, per tensor, tosac's scale as float32 and zero point) after every value that
 *     the INT program holds in int8, graph inputs and outputs included;
 *   - convolution and MATMUL weights as int8 initializers (tosac's codes) read by a per-channel
 *     DequantizeLinear, biases as int32 initializers at s_in * s_w read by DequantizeLinear;
 *   - constant operands (a LayerNorm's gamma, an added bias) with the values the INT program
 *     computes with (quantized to int8, or to int32 at an accumulator's scale);
 *   - everything else in float: values the INT program keeps in int32 (accumulators, sums) or
 *     inside a TABLE (its FP subgraph is what the table samples).
 * NHWC convolutions and pools are wrapped in Transposes to ONNX's NCHW. Graph inputs and outputs
 * keep their names, shapes and float type. Written to a temporary file and renamed: no partial
 * file on error. The protobuf wire format is written directly (a few message types).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/rewrite.h"
#include "quant/quant_internal.h"

/* ---- protobuf wire format ----------------------------------------------------------------- */

typedef struct pb {
    uint8_t *p;
    size_t n, cap;
    bool oom;
} pb;

static void pb_raw(pb *b, const void *d, size_t n)
{
    if (b->oom) return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n) cap *= 2;
        uint8_t *q = realloc(b->p, cap);
        if (!q) {
            b->oom = true;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, d, n);
    b->n += n;
}

static void pb_varint(pb *b, uint64_t v)
{
    uint8_t t[10];
    size_t n = 0;
    do {
        t[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    pb_raw(b, t, n);
}

static void pb_int(pb *b, unsigned field, int64_t v)
{
    pb_varint(b, (uint64_t)field << 3);
    pb_varint(b, (uint64_t)v);
}

static void pb_bytes(pb *b, unsigned field, const void *d, size_t n)
{
    pb_varint(b, (uint64_t)field << 3 | 2);
    pb_varint(b, n);
    pb_raw(b, d, n);
}

static void pb_str(pb *b, unsigned field, const char *s) { pb_bytes(b, field, s, strlen(s)); }

/* Appends message m as field `field` of b and empties m. */
static void pb_msg(pb *b, unsigned field, pb *m)
{
    b->oom |= m->oom;
    pb_bytes(b, field, m->p, m->n);
    m->n = 0;
    m->oom = false;
}

/* ONNX TensorProto data types */
enum { OX_FLOAT = 1, OX_INT8 = 3, OX_INT32 = 6, OX_INT64 = 7 };

/* ---- the model ------------------------------------------------------------------------------ */

typedef struct emit {
    const tosac_block *fb;
    const quant_map_entry **ent; /* FP value index -> its map entry, or NULL */
    double *const *wsc;          /* FP value index -> per-channel weight scales, or NULL */
    float *const *cq;            /* FP value index -> a constant as the INT program quantized it, or NULL */
    pb graph, node, attr, tmp;
    uint32_t counter;
    bool *inited; /* FP value index -> initializer written */
    char **alias; /* FP value index -> the name its uses read (a quantized graph input's DQ), or NULL */
    tosac_diag *d;
    tosac_status s;
} emit;

static const char *fresh(emit *e, const char *base, char *buf, size_t size)
{
    snprintf(buf, size, "%.200s__%u", base, e->counter++);
    return buf;
}

static void tensor(emit *e, const char *name, int type, int rank, const int64_t *dims, const void *data, size_t nbytes)
{
    pb *t = &e->tmp;
    for (int k = 0; k < rank; k++) pb_int(t, 1, dims[k]);
    pb_int(t, 2, type);
    pb_str(t, 8, name);
    pb_bytes(t, 9, data, nbytes);
    pb_msg(&e->graph, 5, t);
}

static void scalar_init(emit *e, const char *name, int type, double v)
{
    uint8_t bytes[4];
    if (type == OX_FLOAT) {
        float f = (float)v;
        memcpy(bytes, &f, 4);
    } else {
        bytes[0] = (uint8_t)(int8_t)v;
    }
    tensor(e, name, type, 0, NULL, bytes, type == OX_FLOAT ? 4 : 1);
}

static void ints_init(emit *e, const char *name, const int64_t *v, int n)
{
    int64_t dim = n;
    tensor(e, name, OX_INT64, 1, &dim, v, (size_t)n * 8);
}

static void attr_int(emit *e, const char *name, int64_t v)
{
    pb_str(&e->attr, 1, name);
    pb_int(&e->attr, 20, 2);
    pb_int(&e->attr, 3, v);
    pb_msg(&e->node, 5, &e->attr);
}

static void attr_ints(emit *e, const char *name, const int64_t *v, int n)
{
    pb_str(&e->attr, 1, name);
    pb_int(&e->attr, 20, 7);
    for (int k = 0; k < n; k++) pb_int(&e->attr, 8, v[k]);
    pb_msg(&e->node, 5, &e->attr);
}

/* Ends the node being built (attributes already added): inputs, output, op type. */
static void node(emit *e, const char *op, int n_in, const char *const *in, const char *out)
{
    for (int k = 0; k < n_in; k++) pb_str(&e->node, 1, in[k] ? in[k] : "");
    pb_str(&e->node, 2, out);
    pb_str(&e->node, 3, out);
    pb_str(&e->node, 4, op);
    pb_msg(&e->graph, 1, &e->node);
}

static void value_info(pb *g, pb *t, unsigned field, const tosac_value *v)
{
    pb shape = {0}, tt = {0}, dim = {0};
    for (int k = 0; k < v->rank; k++) {
        pb_int(&dim, 1, v->shape[k]);
        pb_msg(&shape, 1, &dim);
    }
    pb_int(&tt, 1, OX_FLOAT);
    pb_msg(&tt, 2, &shape);
    pb type = {0};
    pb_msg(&type, 1, &tt);
    pb_str(t, 1, v->name);
    pb_msg(t, 2, &type);
    pb_msg(g, field, t);
    g->oom |= shape.oom || tt.oom || dim.oom || type.oom;
    free(shape.p);
    free(tt.p);
    free(dim.p);
    free(type.p);
}

static tosac_status fail(emit *e, const tosac_node *n, const char *why)
{
    char w[300];
    if (e->s == TOSAC_OK)
        e->s = tosac_diag_add(e->d, TOSAC_ERR_UNSUPPORTED, "--emit-qdq: op %u (%s)%s: %s", n ? n->index : 0,
                              n ? tosac_op_name(n->op) : "?", quant_where(n, w, sizeof w), why);
    return e->s;
}

/* The ONNX name of FP value v as an operand: a quantized graph input is read after its Q/DQ
   ("<name>__in"); constants become initializers on first use. */
static const char *operand(emit *e, const tosac_value *v, const tosac_node *n)
{
    if (!ir_is_const(v)) return e->alias[v->index] ? e->alias[v->index] : v->name;
    if (v->dtype != TOSAC_DTYPE_FP32) return fail(e, n, "a non-FP32 constant operand"), v->name;
    if (!e->inited[v->index]) {
        e->inited[v->index] = true;
        /* the values the INT program computes with (a gamma quantized to int8, a bias at an
           accumulator's scale), else the constant itself */
        if (e->cq[v->index])
            tensor(e, v->name, OX_FLOAT, v->rank, v->shape, e->cq[v->index], (size_t)tosac_value_nelem(v) * 4);
        else
            tensor(e, v->name, OX_FLOAT, v->rank, v->shape, v->data, v->data_len);
    }
    return v->name;
}

/* Where op n writes value y: y's name, or a temporary the Q/DQ pair then turns into y. */
static const char *out_name(emit *e, const tosac_value *y, char *buf, size_t size)
{
    const quant_map_entry *m = e->ent[y->index];
    if (!m || m->i32) return y->name;
    snprintf(buf, size, "%.200s__f", y->name);
    return buf;
}

/* Q -> DQ at y's int8 q-params from `from` to `to` (y's name when NULL; nothing when y has no
   int8 form). */
static void qdq(emit *e, const tosac_value *y, const char *from, const char *to)
{
    const quant_map_entry *m = e->ent[y->index];
    if (!m || m->i32) return;
    char s[256], z[256], q[256];
    snprintf(s, sizeof s, "%.200s__scale", y->name);
    snprintf(z, sizeof z, "%.200s__zp", y->name);
    snprintf(q, sizeof q, "%.200s__q", y->name);
    scalar_init(e, s, OX_FLOAT, m->q.scale);
    scalar_init(e, z, OX_INT8, m->q.zero_point);
    const char *qi[3] = {from, s, z}, *di[3] = {q, s, z};
    node(e, "QuantizeLinear", 3, qi, q);
    node(e, "DequantizeLinear", 3, di, to ? to : y->name);
}

static void transpose(emit *e, const char *in, const char *out, const int64_t *perm, int rank)
{
    attr_ints(e, "perm", perm, rank);
    node(e, "Transpose", 1, &in, out);
}

static const int64_t TO_NCHW[4] = {0, 3, 1, 2}, TO_NHWC[4] = {0, 2, 3, 1};

/* int8 weight codes (in ONNX order: element k of the ONNX tensor is TOSA element src[k]) and
   their per-channel DequantizeLinear on `axis` (chan[k]: the channel of ONNX element k). */
static const char *weights(emit *e, const tosac_node *n, const tosac_value *w, int rank, const int64_t *dims,
                           const int64_t *src, const int64_t *chan, int64_t count, int64_t nch, int axis)
{
    const double *sw = e->wsc[w->index];
    if (!sw) return fail(e, n, "no weight scales recorded"), "";
    int8_t *codes = malloc((size_t)(count ? count : 1));
    float *sc = malloc((size_t)nch * sizeof *sc);
    int8_t *zp = calloc((size_t)nch, 1);
    char wq[256], ws[256], wz[256];
    static char name[256];
    if (!codes || !sc || !zp) {
        free(codes), free(sc), free(zp);
        e->s = tosac_diag_add(e->d, TOSAC_ERR_NOMEM, "out of memory");
        return "";
    }
    for (int64_t k = 0; k < count; k++) {
        tosac_qparams q = {sw[chan[k]], 0};
        codes[k] = (int8_t)tosac_quant_quantize(quant_const_f32(w, src[k]), q, -127, 127);
    }
    for (int64_t c = 0; c < nch; c++) sc[c] = (float)sw[c];
    snprintf(wq, sizeof wq, "%.200s__wq", w->name);
    snprintf(ws, sizeof ws, "%.200s__ws", w->name);
    snprintf(wz, sizeof wz, "%.200s__wzp", w->name);
    snprintf(name, sizeof name, "%.200s__w%u", w->name, e->counter++);
    tensor(e, wq, OX_INT8, rank, dims, codes, (size_t)count);
    tensor(e, ws, OX_FLOAT, 1, &nch, sc, (size_t)nch * 4);
    tensor(e, wz, OX_INT8, 1, &nch, zp, (size_t)nch);
    attr_int(e, "axis", axis);
    const char *in[3] = {wq, ws, wz};
    node(e, "DequantizeLinear", 3, in, name);
    free(codes);
    free(sc);
    free(zp);
    return name;
}

/* int32 bias at s_in * s_w[c] through DequantizeLinear, as the INT program's bias. */
static const char *bias(emit *e, const tosac_node *n, const tosac_value *b, const tosac_value *x, const tosac_value *w,
                        int64_t oc, char *name, size_t size)
{
    const quant_map_entry *mx = e->ent[x->index];
    const double *sw = e->wsc[w->index];
    if (!mx || mx->i32 || !sw) return fail(e, n, "the input has no int8 form"), "";
    int64_t nb = tosac_value_nelem(b);
    int32_t *codes = malloc((size_t)oc * 4);
    float *sc = malloc((size_t)oc * 4);
    int32_t *zp = calloc((size_t)oc, 4);
    if (!codes || !sc || !zp) {
        free(codes), free(sc), free(zp);
        e->s = tosac_diag_add(e->d, TOSAC_ERR_NOMEM, "out of memory");
        return "";
    }
    for (int64_t c = 0; c < oc; c++) {
        double s = mx->q.scale * sw[c];
        double r = nearbyint(quant_const_f32(b, nb == 1 ? 0 : c) / s);
        codes[c] = (int32_t)(r > 2147483647.0 ? 2147483647.0 : r < -2147483647.0 ? -2147483647.0 : r);
        sc[c] = (float)s;
    }
    char bq[256], bs[256], bz[256];
    snprintf(bq, sizeof bq, "%.200s__bq", b->name);
    snprintf(bs, sizeof bs, "%.200s__bs", b->name);
    snprintf(bz, sizeof bz, "%.200s__bzp", b->name);
    fresh(e, b->name, name, size);
    tensor(e, bq, OX_INT32, 1, &oc, codes, (size_t)oc * 4);
    tensor(e, bs, OX_FLOAT, 1, &oc, sc, (size_t)oc * 4);
    tensor(e, bz, OX_INT32, 1, &oc, zp, (size_t)oc * 4);
    attr_int(e, "axis", 0);
    const char *in[3] = {bq, bs, bz};
    node(e, "DequantizeLinear", 3, in, name);
    free(codes);
    free(sc);
    free(zp);
    return name;
}

static void conv(emit *e, const tosac_node *n, const char *y)
{
    const tosac_value *x = n->inputs[0], *w = n->inputs[1];
    bool dw = n->op == TOSAC_OP_DEPTHWISE_CONV2D;
    if (!ir_is_const(w) || !ir_is_const(n->inputs[2]) || w->rank != 4) {
        fail(e, n, "weights and bias must be constants");
        return;
    }
    /* TOSA OHWI [OC,KH,KW,IC] -> ONNX OIHW; depthwise [KH,KW,C,M] -> [C*M,1,KH,KW] */
    int64_t KH = dw ? w->shape[0] : w->shape[1], KW = dw ? w->shape[1] : w->shape[2];
    int64_t IC = dw ? 1 : w->shape[3], OC = dw ? w->shape[2] * w->shape[3] : w->shape[0], M = dw ? w->shape[3] : 1;
    int64_t count = OC * IC * KH * KW, dims[4] = {OC, IC, KH, KW};
    int64_t *src = malloc((size_t)count * 8), *chan = malloc((size_t)count * 8);
    if (!src || !chan) {
        free(src), free(chan);
        e->s = tosac_diag_add(e->d, TOSAC_ERR_NOMEM, "out of memory");
        return;
    }
    for (int64_t o = 0, k = 0; o < OC; o++)
        for (int64_t i = 0; i < IC; i++)
            for (int64_t h = 0; h < KH; h++)
                for (int64_t v = 0; v < KW; v++, k++) {
                    src[k] = dw ? ((h * KW + v) * (OC / M) + o / M) * M + o % M : ((o * KH + h) * KW + v) * IC + i;
                    chan[k] = o;
                }
    char wn[256], bn[256], xt[256], yt[256];
    snprintf(wn, sizeof wn, "%s", weights(e, n, w, 4, dims, src, chan, count, OC, 0));
    free(src);
    free(chan);
    const char *bname = bias(e, n, n->inputs[2], x, w, OC, bn, sizeof bn);
    fresh(e, x->name, xt, sizeof xt);
    fresh(e, y, yt, sizeof yt);
    transpose(e, operand(e, x, n), xt, TO_NCHW, 4);
    const int32_t *pad = n->attr[TOSAC_ATTR_CONV2D_pad].data, *st = n->attr[TOSAC_ATTR_CONV2D_stride].data,
                  *dl = n->attr[TOSAC_ATTR_CONV2D_dilation].data;
    int64_t pads[4] = {pad[0], pad[2], pad[1], pad[3]}, strides[2] = {st[0], st[1]}, dil[2] = {dl[0], dl[1]};
    int64_t ks[2] = {KH, KW};
    attr_ints(e, "pads", pads, 4);
    attr_ints(e, "strides", strides, 2);
    attr_ints(e, "dilations", dil, 2);
    attr_ints(e, "kernel_shape", ks, 2);
    attr_int(e, "group", dw ? OC / M : 1);
    const char *in[3] = {xt, wn, bname};
    node(e, "Conv", 3, in, yt);
    transpose(e, yt, y, TO_NHWC, 4);
}

static void pool(emit *e, const tosac_node *n, const char *y)
{
    bool avg = n->op == TOSAC_OP_AVG_POOL2D;
    const tosac_value *x = n->inputs[0];
    const int32_t *k = n->attr[TOSAC_ATTR_AVG_POOL2D_kernel].data, *st = n->attr[TOSAC_ATTR_AVG_POOL2D_stride].data,
                  *pad = n->attr[TOSAC_ATTR_AVG_POOL2D_pad].data;
    char xt[256], yt[256];
    fresh(e, x->name, xt, sizeof xt);
    fresh(e, y, yt, sizeof yt);
    transpose(e, operand(e, x, n), xt, TO_NCHW, 4);
    int64_t ks[2] = {k[0], k[1]}, strides[2] = {st[0], st[1]}, pads[4] = {pad[0], pad[2], pad[1], pad[3]};
    attr_ints(e, "kernel_shape", ks, 2);
    attr_ints(e, "strides", strides, 2);
    attr_ints(e, "pads", pads, 4);
    if (avg) attr_int(e, "count_include_pad", 0); /* TOSA divides by the valid count */
    const char *in = xt;
    node(e, avg ? "AveragePool" : "MaxPool", 1, &in, yt);
    transpose(e, yt, y, TO_NHWC, 4);
}

/* The int64 values of a shape operand. */
static int shape_values(const tosac_value *v, int64_t *out, int cap)
{
    int n = v->is_shape ? (int)v->shape[0] : 0;
    if (n > cap || v->data_len < (size_t)n * 8) return -1;
    for (int k = 0; k < n; k++) {
        uint64_t u = 0;
        for (int j = 0; j < 8; j++) u |= (uint64_t)v->data[8 * k + j] << (8 * j);
        out[k] = (int64_t)u;
    }
    return n;
}

static float attr_f32(const tosac_node *n, unsigned id)
{
    float f = 0;
    if (n->attr[id].present && n->attr[id].len >= 4) memcpy(&f, n->attr[id].data, 4);
    return f;
}

static void op(emit *e, const tosac_node *n)
{
    const tosac_value *y = n->outputs[0];
    char ob[256], c1[256], c2[256];
    const char *yn = out_name(e, y, ob, sizeof ob);
    if (n->op == TOSAC_OP_CONV2D || n->op == TOSAC_OP_DEPTHWISE_CONV2D) { /* weights and bias: their own forms */
        conv(e, n, yn);
        qdq(e, y, yn, NULL);
        return;
    }
    /* operands the ONNX op reads (a MUL's shift, a pool's zero points and a weight matrix are not) */
    bool two = n->n_inputs > 1 && !n->inputs[1]->is_shape &&
               !(n->op == TOSAC_OP_MATMUL && ir_is_const(n->inputs[1])) && n->op != TOSAC_OP_AVG_POOL2D &&
               n->op != TOSAC_OP_PAD && n->op != TOSAC_OP_GATHER && n->op != TOSAC_OP_NEGATE;
    const char *a = n->n_inputs > 0 && !n->inputs[0]->is_shape ? operand(e, n->inputs[0], n) : NULL;
    const char *b = two ? operand(e, n->inputs[1], n) : NULL;
    const char *ab[2] = {a, b};
    static const struct {
        uint32_t op;
        const char *onnx;
        int n_in;
    } simple[] = {
        {TOSAC_OP_ADD, "Add", 2},         {TOSAC_OP_SUB, "Sub", 2},           {TOSAC_OP_MUL, "Mul", 2},
        {TOSAC_OP_MAXIMUM, "Max", 2},     {TOSAC_OP_MINIMUM, "Min", 2},       {TOSAC_OP_POW, "Pow", 2},
        {TOSAC_OP_SIGMOID, "Sigmoid", 1}, {TOSAC_OP_TANH, "Tanh", 1},         {TOSAC_OP_EXP, "Exp", 1},
        {TOSAC_OP_LOG, "Log", 1},         {TOSAC_OP_RECIPROCAL, "Reciprocal", 1}, {TOSAC_OP_ERF, "Erf", 1},
        {TOSAC_OP_ABS, "Abs", 1},         {TOSAC_OP_NEGATE, "Neg", 1},        {TOSAC_OP_FLOOR, "Floor", 1},
        {TOSAC_OP_CEIL, "Ceil", 1},       {TOSAC_OP_SIN, "Sin", 1},           {TOSAC_OP_COS, "Cos", 1},
        {TOSAC_OP_IDENTITY, "Identity", 1},
    };
    for (size_t k = 0; k < sizeof simple / sizeof simple[0]; k++)
        if (simple[k].op == n->op) {
            node(e, simple[k].onnx, simple[k].n_in, ab, yn);
            qdq(e, y, yn, NULL);
            return;
        }
    int64_t v[2 * TOSAC_MAX_RANK];
    switch (n->op) {
    case TOSAC_OP_AVG_POOL2D:
    case TOSAC_OP_MAX_POOL2D: pool(e, n, yn); break;
    case TOSAC_OP_MATMUL:
        if (ir_is_const(n->inputs[1])) { /* weights: int8 per output column */
            const tosac_value *w = n->inputs[1];
            int64_t cnt = tosac_value_nelem(w), cols = w->shape[w->rank - 1];
            int64_t *src = malloc((size_t)cnt * 8), *chan = malloc((size_t)cnt * 8);
            if (!src || !chan) {
                free(src), free(chan);
                e->s = tosac_diag_add(e->d, TOSAC_ERR_NOMEM, "out of memory");
                return;
            }
            for (int64_t k = 0; k < cnt; k++) src[k] = k, chan[k] = k % cols;
            snprintf(c1, sizeof c1, "%s", weights(e, n, w, w->rank, w->shape, src, chan, cnt, cols, w->rank - 1));
            free(src);
            free(chan);
            ab[1] = c1;
        }
        node(e, "MatMul", 2, ab, yn);
        break;
    case TOSAC_OP_RSQRT:
        fresh(e, y->name, c1, sizeof c1);
        node(e, "Sqrt", 1, ab, c1);
        ab[0] = c1;
        node(e, "Reciprocal", 1, ab, yn);
        break;
    case TOSAC_OP_CLAMP: {
        fresh(e, y->name, c1, sizeof c1);
        fresh(e, y->name, c2, sizeof c2);
        scalar_init(e, c1, OX_FLOAT, attr_f32(n, TOSAC_ATTR_CLAMP_min_val));
        scalar_init(e, c2, OX_FLOAT, attr_f32(n, TOSAC_ATTR_CLAMP_max_val));
        const char *in[3] = {a, c1, c2};
        node(e, "Clip", 3, in, yn);
        break;
    }
    case TOSAC_OP_REDUCE_SUM:
    case TOSAC_OP_REDUCE_MAX:
    case TOSAC_OP_REDUCE_MIN: {
        v[0] = n->attr[0].i; /* axis is field 0 of all three */
        attr_int(e, "keepdims", 1);
        if (n->op == TOSAC_OP_REDUCE_SUM) { /* opset 13: axes is an input of ReduceSum only */
            fresh(e, y->name, c1, sizeof c1);
            ints_init(e, c1, v, 1);
            const char *in[2] = {a, c1};
            node(e, "ReduceSum", 2, in, yn);
        } else {
            attr_ints(e, "axes", v, 1);
            node(e, n->op == TOSAC_OP_REDUCE_MAX ? "ReduceMax" : "ReduceMin", 1, ab, yn);
        }
        break;
    }
    case TOSAC_OP_RESHAPE: {
        int r = shape_values(n->inputs[1], v, TOSAC_MAX_RANK);
        if (r < 0) return (void)fail(e, n, "unexpected shape operand");
        fresh(e, y->name, c1, sizeof c1);
        ints_init(e, c1, v, r);
        const char *in[2] = {a, c1};
        node(e, "Reshape", 2, in, yn);
        break;
    }
    case TOSAC_OP_TRANSPOSE: {
        const int32_t *p = n->attr[TOSAC_ATTR_TRANSPOSE_perms].data;
        for (int k = 0; k < y->rank; k++) v[k] = p[k];
        transpose(e, a, yn, v, y->rank);
        break;
    }
    case TOSAC_OP_CONCAT: {
        const char **in = malloc(n->n_inputs * sizeof *in);
        if (!in) return (void)(e->s = tosac_diag_add(e->d, TOSAC_ERR_NOMEM, "out of memory"));
        for (uint32_t k = 0; k < n->n_inputs; k++) in[k] = operand(e, n->inputs[k], n);
        attr_int(e, "axis", n->attr[TOSAC_ATTR_CONCAT_axis].i);
        node(e, "Concat", (int)n->n_inputs, in, yn);
        free(in);
        break;
    }
    case TOSAC_OP_PAD: {
        int r = shape_values(n->inputs[1], v, 2 * TOSAC_MAX_RANK), rank = r / 2;
        int64_t pads[2 * TOSAC_MAX_RANK];
        if (r < 0 || !ir_is_const(n->inputs[2])) return (void)fail(e, n, "unexpected padding operands");
        for (int k = 0; k < rank; k++) pads[k] = v[2 * k], pads[rank + k] = v[2 * k + 1];
        fresh(e, y->name, c1, sizeof c1);
        ints_init(e, c1, pads, r);
        fresh(e, y->name, c2, sizeof c2);
        scalar_init(e, c2, OX_FLOAT, quant_const_f32(n->inputs[2], 0));
        const char *in[3] = {a, c1, c2};
        node(e, "Pad", 3, in, yn);
        break;
    }
    case TOSAC_OP_SLICE: {
        int64_t sz[TOSAC_MAX_RANK];
        int r = shape_values(n->inputs[1], v, TOSAC_MAX_RANK);
        if (r < 0 || shape_values(n->inputs[2], sz, TOSAC_MAX_RANK) != r) return (void)fail(e, n, "unexpected operands");
        for (int k = 0; k < r; k++) sz[k] += v[k];
        char c3[256];
        fresh(e, y->name, c1, sizeof c1);
        fresh(e, y->name, c2, sizeof c2);
        fresh(e, y->name, c3, sizeof c3);
        ints_init(e, c1, v, r);
        ints_init(e, c2, sz, r);
        for (int k = 0; k < r; k++) v[k] = k;
        ints_init(e, c3, v, r);
        const char *in[4] = {a, c1, c2, c3};
        node(e, "Slice", 4, in, yn);
        break;
    }
    case TOSAC_OP_TILE: {
        int r = shape_values(n->inputs[1], v, TOSAC_MAX_RANK);
        if (r < 0) return (void)fail(e, n, "unexpected multiples");
        fresh(e, y->name, c1, sizeof c1);
        ints_init(e, c1, v, r);
        const char *in[2] = {a, c1};
        node(e, "Tile", 2, in, yn);
        break;
    }
    case TOSAC_OP_GATHER: { /* values [N,K,C], indices [N,W] -> GatherND(batch_dims 1) on [N,W,1] */
        const tosac_value *ix = n->inputs[1];
        if (!ir_is_const(ix) || ix->dtype != TOSAC_DTYPE_INT32 || ix->rank != 2)
            return (void)fail(e, n, "only constant indices");
        int64_t cnt = tosac_value_nelem(ix), dims[3] = {ix->shape[0], ix->shape[1], 1};
        int64_t *iv = malloc((size_t)(cnt ? cnt : 1) * 8);
        if (!iv) return (void)(e->s = tosac_diag_add(e->d, TOSAC_ERR_NOMEM, "out of memory"));
        for (int64_t k = 0; k < cnt; k++) {
            uint32_t u = 0;
            for (int j = 0; j < 4; j++) u |= (uint32_t)ix->data[4 * k + j] << (8 * j);
            iv[k] = (int32_t)u;
        }
        fresh(e, y->name, c1, sizeof c1);
        tensor(e, c1, OX_INT64, 3, dims, iv, (size_t)cnt * 8);
        free(iv);
        attr_int(e, "batch_dims", 1);
        const char *in[2] = {a, c1};
        node(e, "GatherND", 2, in, yn);
        break;
    }
    default: fail(e, n, "no ONNX form for this operator in --emit-qdq"); return;
    }
    qdq(e, y, yn, NULL);
}

tosac_status quant_emit_qdq(const tosac_graph *fp, const quant_map_entry *map, uint32_t n_map, double *const *wsc,
                            float *const *cq, const char *path, tosac_diag *d)
{
    const tosac_block *fb = quant_main_block(fp);
    emit e;
    memset(&e, 0, sizeof e);
    e.fb = fb;
    e.wsc = wsc;
    e.cq = cq;
    e.d = d;
    e.ent = calloc(fb->n_tensors ? fb->n_tensors : 1, sizeof *e.ent);
    e.inited = calloc(fb->n_tensors ? fb->n_tensors : 1, 1);
    e.alias = calloc(fb->n_tensors ? fb->n_tensors : 1, sizeof *e.alias);
    if (!e.ent || !e.inited || !e.alias) e.s = tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    for (uint32_t k = 0; k < n_map && e.s == TOSAC_OK; k++) e.ent[map[k].fp] = &map[k];
    pb_str(&e.graph, 2, "tosac_qdq");
    for (uint32_t i = 0; i < fb->n_inputs && e.s == TOSAC_OK; i++) {
        const tosac_value *v = fb->inputs[i];
        if (v->dtype != TOSAC_DTYPE_FP32) {
            e.s = tosac_diag_add(d, TOSAC_ERR_UNSUPPORTED, "--emit-qdq: input '%s' is not FP32", v->name);
            break;
        }
        value_info(&e.graph, &e.tmp, 11, v);
        if (!e.ent[v->index] || e.ent[v->index]->i32) continue;
        size_t len = strlen(v->name) + 8;
        if (!(e.alias[v->index] = malloc(len))) {
            e.s = tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
            break;
        }
        snprintf(e.alias[v->index], len, "%s__in", v->name);
        qdq(&e, v, v->name, e.alias[v->index]); /* the rest of the graph reads "<name>__in" */
    }
    for (uint32_t i = 0; i < fb->n_nodes && e.s == TOSAC_OK; i++) {
        const tosac_node *n = fb->nodes[i];
        if (n->op == TOSAC_OP_CONST || n->op == TOSAC_OP_CONST_SHAPE) continue;
        op(&e, n);
    }
    for (uint32_t i = 0; i < fb->n_outputs && e.s == TOSAC_OK; i++) value_info(&e.graph, &e.tmp, 12, fb->outputs[i]);
    pb model = {0}, opset = {0};
    pb_int(&model, 1, 8); /* IR version 8: opset 13 */
    pb_str(&model, 2, "tosac");
    pb_msg(&model, 7, &e.graph);
    pb_str(&opset, 1, "");
    pb_int(&opset, 2, 13);
    pb_msg(&model, 8, &opset);
    if (e.s == TOSAC_OK && (model.oom || e.graph.oom || e.node.oom || e.attr.oom || e.tmp.oom))
        e.s = tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    if (e.s == TOSAC_OK) {
        size_t len = strlen(path) + 8;
        char *tmp = malloc(len);
        FILE *f = tmp ? (snprintf(tmp, len, "%s.tmp", path), fopen(tmp, "wb")) : NULL;
        bool ok = f && fwrite(model.p, 1, model.n, f) == model.n;
        if (f && fclose(f) != 0) ok = false;
        if (ok && rename(tmp, path) != 0) ok = false;
        if (!ok) {
            if (tmp) remove(tmp);
            e.s = tosac_diag_add(d, TOSAC_ERR_IO, "%s: cannot write the QDQ model", path);
        }
        free(tmp);
    }
    free(model.p);
    free(opset.p);
    free(e.graph.p);
    free(e.node.p);
    free(e.attr.p);
    free(e.tmp.p);
    for (uint32_t k = 0; e.alias && k < fb->n_tensors; k++) free(e.alias[k]);
    free(e.alias);
    free(e.ent);
    free(e.inited);
    return e.s;
}
