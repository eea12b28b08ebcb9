/*
 * Pre-quantized ONNX models (QDQ, docs/QUANT.md): the model's own scales instead of calibration.
 *
 * The ONNX import simulates QuantizeLinear/DequantizeLinear in FP32 (src/onnx/cvt_quant.c), so a
 * Q -> DQ pair on an activation x is, in the FP graph, the chain
 *     MUL(x, 1/s) -> CAST int32 -> CAST fp32 -> ADD zp -> CLAMP [lo, hi] -> SUB zp -> MUL s  = y
 * and a DequantizeLinear of an int8 graph input is CAST fp32 -> SUB zp -> MUL s. The passes keep
 * these chains whole (fold_conv_affine leaves a MUL that feeds a CAST to int32 alone; the layout
 * pass only moves transposes through them). Each chain tells the quantizer that x and y are int8
 * at (s, zp) (uint8 codes [0, 255] become the same reals in int8 with zp - 128), and the lowering
 * turns the chain into no operator at all: y is x's int8 form at those q-params (a conv
 * accumulator is rescaled straight to them).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/rewrite.h"
#include "quant/quant_internal.h"

/* The single consumer of v, or NULL. */
static tosac_node *only_use(const uint32_t *uses, tosac_node *const *consumer, const tosac_value *v)
{
    return uses[v->index] == 1 ? consumer[v->index] : NULL;
}

/* The value every element of the FP32 constant c holds (false when c is not a constant or its
   elements differ: a per-axis activation quantization). */
static bool uniform(const tosac_value *c, double *v)
{
    if (!ir_is_const(c) || c->dtype != TOSAC_DTYPE_FP32) return false;
    int64_t n = tosac_value_nelem(c);
    if (n < 1) return false;
    *v = quant_const_f32(c, 0);
    for (int64_t k = 1; k < n; k++)
        if (quant_const_f32(c, k) != *v) return false;
    return true;
}

/* The constant operand of a binary op whose other operand is `x`. */
static const tosac_value *other(const tosac_node *n, const tosac_value *x)
{
    return n->n_inputs >= 2 ? (n->inputs[0] == x ? n->inputs[1] : n->inputs[1] == x ? n->inputs[0] : NULL) : NULL;
}

static bool is_op(const tosac_node *n, uint32_t op) { return n && n->op == op && n->n_outputs == 1; }

/* Follows SUB zp -> MUL s from the fp32 codes `c` (the DequantizeLinear); on success *last is the
   MUL and *zp, *s the constants. */
static bool dequant_tail(const uint32_t *uses, tosac_node *const *cons, const tosac_value *c,
                         tosac_node **sub, tosac_node **last, double *zp, double *s)
{
    *sub = only_use(uses, cons, c);
    if (!is_op(*sub, TOSAC_OP_SUB) || (*sub)->inputs[0] != c || !uniform((*sub)->inputs[1], zp)) return false;
    *last = only_use(uses, cons, (*sub)->outputs[0]);
    const tosac_value *sc = *last ? other(*last, (*sub)->outputs[0]) : NULL;
    return is_op(*last, TOSAC_OP_MUL) && sc && uniform(sc, s) && *s > 0;
}

/* Records chain nodes[0..n) from x to y at (s, zp) of a code range [lo, hi]. */
static tosac_status record(quant_fixed *f, tosac_node **nodes, uint32_t n, const tosac_value *x,
                           double s, double zp, double lo, double hi, tosac_diag *d)
{
    tosac_node *last = nodes[n - 1];
    char w[300];
    int32_t shift;
    if (lo == 0 && hi == 255) shift = -128;
    else if (lo == -128 && hi == 127) shift = 0;
    else
        return tosac_diag_add(d, TOSAC_ERR_UNSUPPORTED,
                              "QuantizeLinear/DequantizeLinear%s: codes in [%g, %g]: only int8 and uint8 activations can "
                              "be folded into an INT8 program",
                              quant_where(last, w, sizeof w), lo, hi);
    if (zp != nearbyint(zp) || zp < lo || zp > hi)
        return tosac_diag_add(d, TOSAC_ERR_UNSUPPORTED, "QuantizeLinear/DequantizeLinear%s: zero point %g is not a code",
                              quant_where(last, w, sizeof w), zp);
    tosac_qparams q = {.scale = s, .zero_point = (int32_t)zp + shift};
    const tosac_value *y = last->outputs[0];
    f->has[x->index] = f->has[y->index] = true;
    f->q[x->index] = f->q[y->index] = q;
    for (uint32_t k = 0; k + 1 < n; k++) f->in_chain[nodes[k]->index] = true;
    f->chain_in[last->index] = (int32_t)x->index;
    f->n_chains++;
    return TOSAC_OK;
}

tosac_status quant_qdq_find(const tosac_block *b, quant_fixed *f, tosac_diag *d)
{
    memset(f, 0, sizeof *f);
    uint32_t nt = b->n_tensors, nn = b->n_nodes;
    uint32_t *uses = calloc(nt ? nt : 1, sizeof *uses);
    tosac_node **cons = calloc(nt ? nt : 1, sizeof *cons);
    f->has = calloc(nt ? nt : 1, sizeof *f->has);
    f->q = calloc(nt ? nt : 1, sizeof *f->q);
    f->in_chain = calloc(nn ? nn : 1, sizeof *f->in_chain);
    f->chain_in = malloc((nn ? nn : 1) * sizeof *f->chain_in);
    tosac_status s = TOSAC_OK;
    if (!uses || !cons || !f->has || !f->q || !f->in_chain || !f->chain_in)
        s = tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; i < nn && s == TOSAC_OK; i++) {
        f->chain_in[i] = -1;
        for (uint32_t k = 0; k < b->nodes[i]->n_inputs; k++) {
            const tosac_value *v = b->nodes[i]->inputs[k];
            if (v->is_shape) continue;
            uses[v->index]++;
            cons[v->index] = b->nodes[i];
        }
    }
    for (uint32_t k = 0; k < b->n_outputs && s == TOSAC_OK; k++) uses[b->outputs[k]->index] += 2; /* never "only" */
    for (uint32_t i = 0; i < nn && s == TOSAC_OK; i++) {
        tosac_node *c1 = b->nodes[i];
        if (!is_op(c1, TOSAC_OP_CAST) || c1->outputs[0]->dtype != TOSAC_DTYPE_FP32) continue;
        const tosac_value *in = c1->inputs[0];
        double zp, sc;
        tosac_node *sub, *last;
        if (in->dtype == TOSAC_DTYPE_INT8 && !in->producer) {
            /* DequantizeLinear of an int8 graph input */
            bool graph_input = false;
            for (uint32_t k = 0; k < b->n_inputs; k++) graph_input |= b->inputs[k] == in;
            if (graph_input && uses[in->index] == 1 &&
                dequant_tail(uses, cons, c1->outputs[0], &sub, &last, &zp, &sc)) {
                tosac_node *nodes[3] = {c1, sub, last};
                s = record(f, nodes, 3, in, sc, zp, -128, 127, d);
            }
            continue;
        }
        /* QuantizeLinear -> DequantizeLinear: c1 is the CAST back to fp32 */
        tosac_node *c0 = in->producer;
        if (in->dtype != TOSAC_DTYPE_INT32 || !is_op(c0, TOSAC_OP_CAST) || uses[in->index] != 1) continue;
        tosac_node *m0 = c0->inputs[0]->producer;
        if (!is_op(m0, TOSAC_OP_MUL) || uses[c0->inputs[0]->index] != 1) continue;
        const tosac_value *x = ir_is_const(m0->inputs[1]) ? m0->inputs[0] : m0->inputs[1];
        const tosac_value *ic = other(m0, x);
        tosac_node *add = only_use(uses, cons, c1->outputs[0]);
        tosac_node *clamp = add ? only_use(uses, cons, add->outputs[0]) : NULL;
        double inv, zp_a;
        if (!ic || !is_op(add, TOSAC_OP_ADD) || !uniform(other(add, c1->outputs[0]), &zp_a) ||
            !is_op(clamp, TOSAC_OP_CLAMP) || !dequant_tail(uses, cons, clamp->outputs[0], &sub, &last, &zp, &sc))
            continue;
        char w[300];
        if (!uniform(ic, &inv) || zp_a != zp || fabs(inv * sc - 1.0) > 1e-6) {
            s = tosac_diag_add(d, TOSAC_ERR_UNSUPPORTED,
                               "QuantizeLinear/DequantizeLinear%s: only per-tensor activation quantization with the "
                               "same scale and zero point on both sides can be folded into an INT8 program",
                               quant_where(last, w, sizeof w));
            break;
        }
        float lo = quant_attr_f32(clamp, TOSAC_ATTR_CLAMP_min_val, 0),
              hi = quant_attr_f32(clamp, TOSAC_ATTR_CLAMP_max_val, 0);
        tosac_node *nodes[7] = {m0, c0, c1, add, clamp, sub, last};
        s = record(f, nodes, 7, x, sc, zp, lo, hi, d);
    }
    /* back through the layout operators the passes put in front of a chain (a graph input's
       NCHW -> NHWC TRANSPOSE): their input takes the chain's q-params, so the model's input
       quantization is the program's */
    for (uint32_t i = nn; i-- > 0 && s == TOSAC_OK;) {
        const tosac_node *n = b->nodes[i];
        if ((n->op == TOSAC_OP_TRANSPOSE || n->op == TOSAC_OP_RESHAPE || n->op == TOSAC_OP_IDENTITY) &&
            f->has[n->outputs[0]->index] && !f->has[n->inputs[0]->index] && uses[n->inputs[0]->index] == 1 &&
            !ir_is_const(n->inputs[0])) {
            f->has[n->inputs[0]->index] = true;
            f->q[n->inputs[0]->index] = f->q[n->outputs[0]->index];
        }
    }
    free(uses);
    free(cons);
    if (s != TOSAC_OK) quant_fixed_free(f);
    return s;
}

void quant_fixed_free(quant_fixed *f)
{
    free(f->has);
    free(f->q);
    free(f->in_chain);
    free(f->chain_in);
    memset(f, 0, sizeof *f);
}

bool tosac_quant_has_qdq(const tosac_graph *fp)
{
    const tosac_block *b = quant_main_block(fp);
    quant_fixed f;
    tosac_diag *d = tosac_diag_create();
    bool any = b && d && quant_qdq_find(b, &f, d) == TOSAC_OK && f.n_chains > 0;
    if (b && d) quant_fixed_free(&f);
    tosac_diag_destroy(d);
    return any;
}
