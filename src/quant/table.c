/*
 * TABLE generation. A single-input elementwise subgraph y = f(x) (SIGMOID, the decomposed SiLU,
 * HardSwish, GELU, ...) becomes one int8 TABLE: entry[q + 128] = quantize(f(dequantize(q))).
 * f is not re-implemented here: the FP subgraph is copied into a small program whose input holds
 * the 256 dequantized codes and run on tosac's runtime, so the table computes exactly what the
 * FP program computes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quant/quant_internal.h"
#include "tosac/runtime.h"

tosac_status tosac_quant_table_int8(tosac_qparams in, tosac_qparams out, tosac_quant_eval_fn eval, void *user,
                                    int8_t table[256], tosac_diag *d)
{
    float x[256], y[256];
    for (int q = -128; q < 128; q++) x[q + 128] = (float)tosac_quant_dequantize(q, in);
    tosac_status s = eval(user, x, y, 256, d);
    if (s != TOSAC_OK) return s;
    for (int k = 0; k < 256; k++) table[k] = (int8_t)tosac_quant_quantize(y[k], out, -128, 127);
    return TOSAC_OK;
}

tosac_status tosac_quant_table_int16(tosac_qparams in, tosac_qparams out, double lo, double hi,
                                     tosac_quant_eval_fn eval, void *user, int16_t table[513], bool *ok,
                                     tosac_diag *d)
{
    float x[513], y[513];
    for (int i = -256; i <= 256; i++) {
        double v = tosac_quant_dequantize(128 * i, in);
        x[i + 256] = (float)(v < lo ? lo : v > hi ? hi : v);
    }
    tosac_status s = eval(user, x, y, 513, d);
    if (s != TOSAC_OK) return s;
    *ok = true;
    for (int k = 0; k < 513; k++) {
        table[k] = (int16_t)tosac_quant_quantize(y[k], out, -32768, 32767);
        if (k && abs((int32_t)table[k] - table[k - 1]) > 32767) *ok = false;
    }
    return TOSAC_OK;
}

typedef struct cluster {
    const tosac_value *x, *y;
    tosac_node *const *ops;
    uint32_t n_ops;
} cluster;

/* Runs the cluster's operators on a [1,...,1,n] FP32 input (same rank as x, so that its scalar
   constants still broadcast). */
static tosac_status eval_cluster(void *user, const float *xv, float *yv, uint32_t n, tosac_diag *d)
{
    const cluster *c = user;
    int rank = c->x->rank < 1 ? 1 : c->x->rank;
    int64_t shape[TOSAC_MAX_RANK];
    for (int k = 0; k < rank; k++) shape[k] = 1;
    shape[rank - 1] = n;
    tosac_graph *g = tosac_graph_create();
    tosac_region *r = g ? tosac_graph_add_region(g, "main") : NULL;
    tosac_block *b = r ? tosac_region_add_block(r, "main") : NULL;
    tosac_value *in = b ? tosac_block_add_tensor(b, "x", TOSAC_DTYPE_FP32, rank, shape) : NULL;
    tosac_status s = in && tosac_block_add_input(b, in) == TOSAC_OK ? TOSAC_OK : TOSAC_ERR_NOMEM;
    /* values of the subgraph by name: the copies keep the FP graph's names */
    for (uint32_t i = 0; i < c->n_ops && s == TOSAC_OK; i++) {
        const tosac_node *op = c->ops[i];
        tosac_value *ins[8];
        if (op->n_inputs > 8 || op->n_outputs != 1) {
            s = tosac_diag_add(d, TOSAC_ERR_INTERNAL, "TABLE subgraph: unexpected operator shape");
            break;
        }
        for (uint32_t k = 0; k < op->n_inputs && s == TOSAC_OK; k++) {
            const tosac_value *v = op->inputs[k];
            if (v == c->x) {
                ins[k] = in;
            } else if ((ins[k] = tosac_block_find(b, v->name)) == NULL) {
                /* not yet copied: a constant (the cluster's other inputs are its own results) */
                ins[k] = tosac_block_add_const(b, v->name, v->dtype, v->rank, v->shape, v->data, v->data_len);
                if (!ins[k]) s = TOSAC_ERR_NOMEM;
            }
        }
        /* FP32, or BOOL for the comparisons of a piecewise function */
        tosac_value *o = s == TOSAC_OK ? tosac_block_add_tensor(b, op->outputs[0]->name, op->outputs[0]->dtype, rank, shape) : NULL;
        tosac_node *nn = o ? tosac_block_add_node(b, (tosac_op)op->op, op->n_inputs, ins, 1, &o) : NULL;
        if (s == TOSAC_OK && (!nn || ir_copy_attrs(nn, op) != TOSAC_OK)) s = TOSAC_ERR_NOMEM;
        if (s == TOSAC_OK && op->outputs[0] == c->y && tosac_block_add_output(b, o) != TOSAC_OK) s = TOSAC_ERR_NOMEM;
    }
    if (s == TOSAC_ERR_NOMEM) tosac_diag_add(d, s, "out of memory");
    tosac_program *p = NULL;
    if (s == TOSAC_OK) {
        tosac_graph_link(g);
        tosac_program_opts po = tosac_program_opts_default();
        po.validate.profiles = TOSAC_PROFILE_FP | TOSAC_PROFILE_INT;
        s = tosac_program_create(g, &po, &p, d);
    }
    if (s == TOSAC_OK) {
        memcpy(tosac_program_input_ptr(p, 0), xv, n * sizeof(float));
        s = tosac_program_invoke(p, d);
    }
    if (s == TOSAC_OK) memcpy(yv, tosac_program_output_ptr(p, 0), n * sizeof(float));
    tosac_program_destroy(p);
    tosac_graph_destroy(g);
    return s;
}

tosac_status quant_cluster_table(const tosac_value *x, const tosac_value *y, tosac_node *const *ops, uint32_t n_ops,
                                 tosac_qparams in, tosac_qparams out, int8_t table[256], tosac_diag *d)
{
    cluster c = {x, y, ops, n_ops};
    return tosac_quant_table_int8(in, out, eval_cluster, &c, table, d);
}

tosac_status quant_cluster_table16(const tosac_value *x, const tosac_value *y, tosac_node *const *ops, uint32_t n_ops,
                                   tosac_qparams in, tosac_qparams out, double lo, double hi, int16_t table[513],
                                   bool *ok, tosac_diag *d)
{
    cluster c = {x, y, ops, n_ops};
    return tosac_quant_table_int16(in, out, lo, hi, eval_cluster, &c, table, ok, d);
}

tosac_status quant_cluster_eval(const tosac_value *x, const tosac_value *y, tosac_node *const *ops, uint32_t n_ops,
                                const float *xv, float *yv, uint32_t n, tosac_diag *d)
{
    cluster c = {x, y, ops, n_ops};
    return eval_cluster(&c, xv, yv, n, d);
}
