/*
 * fold_constants: an operator whose inputs are all constants (CONST / CONST_SHAPE) is evaluated
 * at compile time and replaced by a CONST: weights re-laid out by the import (OIHW -> OHWI,
 * Gemm's transB) or by the layout pass, reshaped biases, broadcast scalars...
 *
 * The evaluation runs the operator through the runtime (a one-operator program), so folding
 * computes exactly what the program would have computed at run time: there is one executor and
 * no second copy of the operator semantics. (This makes src/passes depend on src/runtime, on
 * purpose; quantization calibration does the same.)
 *
 * Not folded: control flow, variables and CUSTOM; results larger than both their inputs and
 * 64 KiB (a broadcast or TILE of a small constant is cheaper to compute than to store).
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "ir/rewrite.h"
#include "passes/pass.h"
#include "tosac/runtime.h"

#define SMALL_RESULT (64u * 1024u)

static bool foldable(const tosac_node *n)
{
    switch (n->op) {
    case TOSAC_OP_CONST: case TOSAC_OP_CONST_SHAPE: case TOSAC_OP_COND_IF: case TOSAC_OP_WHILE_LOOP:
    case TOSAC_OP_VARIABLE: case TOSAC_OP_VARIABLE_READ: case TOSAC_OP_VARIABLE_WRITE: case TOSAC_OP_CUSTOM:
        return false;
    default:
        break;
    }
    if (n->n_outputs != 1 || n->n_inputs == 0 || n->outputs[0]->is_shape) return false;
    size_t in_bytes = 0;
    for (uint32_t k = 0; k < n->n_inputs; k++) {
        if (!ir_is_const(n->inputs[k])) return false;
        in_bytes += n->inputs[k]->data_len;
    }
    int64_t ne = tosac_value_nelem(n->outputs[0]);
    if (ne <= 0) return false;
    /* bytes bound on the widest storage (8) keeps the estimate conservative */
    return (uint64_t)ne * 8u <= (in_bytes > SMALL_RESULT ? in_bytes : SMALL_RESULT) * 2u;
}

/* Runs n on its constant inputs (read in place); *data (*len bytes, allocated from arena: the
   graph's, which keeps it) receives the TOSA-encoded result. */
static tosac_status evaluate(const tosac_node *n, tosac_arena *arena, uint8_t **data, size_t *len, tosac_diag *d)
{
    tosac_graph *g = tosac_graph_create();
    tosac_region *r = g ? tosac_graph_add_region(g, "main") : NULL;
    tosac_block *b = r ? tosac_region_add_block(r, "main") : NULL;
    tosac_status s = b ? TOSAC_OK : TOSAC_ERR_NOMEM;
    tosac_value *in[64];
    if (n->n_inputs > 64) s = TOSAC_ERR_UNSUPPORTED;
    for (uint32_t k = 0; k < n->n_inputs && s == TOSAC_OK; k++) {
        const tosac_value *v = n->inputs[k];
        char name[16];
        snprintf(name, sizeof name, "in%u", k);
        tosac_value *c = NULL;
        if (v->is_shape) {
            c = tosac_block_add_shape(b, name, (uint32_t)v->shape[0]);
            tosac_node *p = c ? tosac_block_add_node(b, TOSAC_OP_CONST_SHAPE, 0, NULL, 1, &c) : NULL;
            if (p) c->data = v->data, c->data_len = v->data_len, c->producer = p;
            else c = NULL;
        } else { /* the operand's bytes themselves: they outlive the mini graph */
            c = tosac_block_add_const_adopt(b, name, v->dtype, v->rank, v->shape, v->data, v->data_len);
        }
        in[k] = c;
        if (!c) s = TOSAC_ERR_NOMEM;
    }
    const tosac_value *o = n->outputs[0];
    tosac_value *out = s == TOSAC_OK ? tosac_block_add_tensor(b, "out", o->dtype, o->rank, o->shape) : NULL;
    tosac_node *m = out ? tosac_block_add_node(b, (tosac_op)n->op, n->n_inputs, in, 1, &out) : NULL;
    if (s == TOSAC_OK && (!m || tosac_block_add_output(b, out) != TOSAC_OK)) s = TOSAC_ERR_NOMEM;
    tosac_program *p = NULL;
    if (s == TOSAC_OK) {
        memcpy(m->attr, n->attr, sizeof m->attr);
        m->attr_type = n->attr_type;
        tosac_program_opts po = tosac_program_opts_default();
        po.borrow_constants = true; /* the mini graph outlives the program: no copy of the weights */
        s = tosac_program_create(g, &po, &p, d);
    }
    if (s == TOSAC_OK) s = tosac_program_invoke(p, d);
    if (s == TOSAC_OK) {
        tosac_tensor_info info;
        s = tosac_program_output_info(p, 0, &info);
        *len = info.tosa_bytes;
        uint8_t none;
        *data = s == TOSAC_OK && *len ? tosac_arena_alloc_uninit(arena, *len) : NULL;
        if (s == TOSAC_OK && *len && !*data) s = TOSAC_ERR_NOMEM;
        if (s == TOSAC_OK) s = tosac_program_get_output_tosa(p, 0, *len ? (void *)*data : &none, *len, len);
        if (!*len) *data = NULL;
    }
    tosac_program_destroy(p);
    tosac_graph_destroy(g);
    return s;
}

tosac_status pass_fold_constants(pass_ctx *pc)
{
    tosac_block *b = pc->b;
    ir_count_uses(b);
    /* operators are in topological order and folded results are constants at once, so one sweep
       folds whole constant subgraphs */
    uint32_t n0 = b->n_nodes;
    for (uint32_t i = 0; i < n0; i++) {
        tosac_node *n = b->nodes[i];
        if (n->dead || !foldable(n)) continue;
        tosac_value *out = n->outputs[0];
        if (n->op == TOSAC_OP_RESHAPE || n->op == TOSAC_OP_IDENTITY) {
            /* same bytes under another shape: the result shares the (immutable) constant data */
            const tosac_value *x = n->inputs[0];
            n->dead = true;
            tosac_node *c = tosac_block_add_node(b, TOSAC_OP_CONST, 0, NULL, 1, &out);
            if (!c) return tosac_diag_add(pc->d, TOSAC_ERR_NOMEM, "out of memory");
            c->location = n->location;
            out->data = x->data;
            out->data_len = x->data_len;
            out->producer = c;
            pc->changes++;
            continue;
        }
        tosac_diag *d = tosac_diag_create();
        if (!d) return tosac_diag_add(pc->d, TOSAC_ERR_NOMEM, "out of memory");
        uint8_t *data = NULL;
        size_t len = 0;
        tosac_status s = evaluate(n, &pc->g->arena, &data, &len, d);
        tosac_diag_destroy(d);
        if (s == TOSAC_ERR_NOMEM) return tosac_diag_add(pc->d, s, "out of memory");
        /* an operator the runtime refuses on these constants (ERROR_IF, UNPREDICTABLE) stays:
           the validator or the run reports it with the model's context */
        if (s != TOSAC_OK) continue;
        n->dead = true;
        tosac_node *c = tosac_block_add_node(b, TOSAC_OP_CONST, 0, NULL, 1, &out);
        if (!c) return tosac_diag_add(pc->d, TOSAC_ERR_NOMEM, "out of memory");
        c->location = n->location;
        out->data = data;
        out->data_len = len;
        out->producer = c;
        pc->changes++;
    }
    return TOSAC_OK;
}
