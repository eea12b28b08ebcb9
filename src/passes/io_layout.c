/*
 * io_layout: with --io-layout nhwc, every rank-4 graph input and output is exchanged in NHWC
 * (the model's NCHW dimensions permuted). The model's own tensor keeps its layout behind a
 * TRANSPOSE at the boundary, which the layout pass then cancels against the import's
 * TRANSPOSEs around the first and last NHWC operators, so a CNN ends up with none at all.
 * The graph input and output names stay the model's.
 */
#include <stdio.h>

#include "ir/rewrite.h"
#include "passes/pass.h"

static const int32_t k_to_nchw[4] = {0, 3, 1, 2};
static const int32_t k_to_nhwc[4] = {0, 2, 3, 1};

/* Renames v to a fresh "<name>_nchw" and returns a new tensor with v's old name and its dims
   permuted by perm. */
static tosac_value *boundary_twin(pass_ctx *pc, tosac_value *v, const int32_t *perm)
{
    const char *name = v->name;
    char fresh[256];
    snprintf(fresh, sizeof fresh, "%s_nchw", name);
    for (uint32_t k = 1; tosac_block_find(pc->b, fresh); k++) snprintf(fresh, sizeof fresh, "%s_nchw%u", name, k);
    if (ir_rename(pc->b, v, fresh) != TOSAC_OK) return NULL;
    int64_t shape[4];
    for (int k = 0; k < 4; k++) shape[k] = v->shape[perm[k]];
    return tosac_block_add_tensor(pc->b, name, v->dtype, 4, shape);
}

static tosac_node *transpose(pass_ctx *pc, tosac_value *x, tosac_value *out, const int32_t *perm)
{
    tosac_node *t = ir_add_op(pc->b, TOSAC_OP_TRANSPOSE, 1, &x, out, NULL);
    return t && tosac_node_set_ints(t, TOSAC_ATTR_TRANSPOSE_perms, perm, 4) == TOSAC_OK ? t : NULL;
}

tosac_status pass_io_layout(pass_ctx *pc)
{
    if (!pc->o->io_nhwc) return TOSAC_OK;
    tosac_block *b = pc->b;
    for (uint32_t k = 0; k < b->n_inputs; k++) {
        tosac_value *v = b->inputs[k];
        if (v->rank != 4 || v->is_shape) continue;
        tosac_value *nhwc = boundary_twin(pc, v, k_to_nhwc);
        if (!nhwc || !transpose(pc, nhwc, v, k_to_nchw)) goto nomem;
        b->inputs[k] = nhwc;
        pc->changes++;
    }
    for (uint32_t k = 0; k < b->n_outputs; k++) {
        tosac_value *v = b->outputs[k];
        if (v->rank != 4 || v->is_shape) continue;
        bool first = true; /* a tensor filling several slots is converted once */
        for (uint32_t j = 0; j < k; j++) first &= b->outputs[j] != v;
        if (!first) continue;
        tosac_value *nhwc = boundary_twin(pc, v, k_to_nhwc);
        if (!nhwc || !transpose(pc, v, nhwc, k_to_nhwc)) goto nomem;
        for (uint32_t j = k; j < b->n_outputs; j++)
            if (b->outputs[j] == v) b->outputs[j] = nhwc;
        pc->changes++;
    }
    return TOSAC_OK;
nomem:
    return tosac_diag_add(pc->d, TOSAC_ERR_NOMEM, "out of memory");
}
