/*
 * channel_shuffle: ShuffleNet-style channel permutations written for NCHW,
 *     RESHAPE [N,C,H,W] -> [N,f1..fk,H,W], TRANSPOSE permuting only the fi, RESHAPE back to [N,C,H,W],
 * become the same permutation in NHWC between boundary TRANSPOSEs:
 *     TRANSPOSE to NHWC, RESHAPE [N,H*W,f1..fk], TRANSPOSE of the fi, RESHAPE [N,H,W,C], TRANSPOSE to NCHW.
 * The layout pass then cancels the outer two against their neighbours, leaving one rank-(k+2)
 * TRANSPOSE of the channel factors (NHWC -> NHCW for k = 2, a form NPUs support) instead of the
 * three TRANSPOSEs that sinking alone would leave around an NCHW shuffle.
 */
#include <string.h>

#include "ir/rewrite.h"
#include "passes/pass.h"

static tosac_node *sole_user(tosac_block *b, const tosac_value *v, tosac_op op)
{
    if (v->n_uses != 1) return NULL;
    for (uint32_t k = 0; k < b->n_outputs; k++)
        if (b->outputs[k] == v) return NULL;
    for (uint32_t i = 0; i < b->n_nodes; i++) {
        tosac_node *m = b->nodes[i];
        if (!m->dead && m->n_inputs && m->inputs[0] == v) return m->op == (uint32_t)op ? m : NULL;
    }
    return NULL;
}

static tosac_value *reshape(tosac_block *b, tosac_value *x, int rank, const int64_t *shape, tosac_value *out,
                            const tosac_node *like)
{
    tosac_value *shp = ir_new_shape(b, shape, (uint32_t)rank);
    if (!out) out = shp ? ir_new_tensor(b, "shuffle", x->dtype, rank, shape) : NULL;
    tosac_value *in[2] = {x, shp};
    return out && ir_add_op(b, TOSAC_OP_RESHAPE, 2, in, out, like) ? out : NULL;
}

static tosac_value *transpose(tosac_block *b, tosac_value *x, const int32_t *perm, tosac_value *out,
                              const tosac_node *like)
{
    if (!out) {
        int64_t shape[TOSAC_MAX_RANK];
        for (int32_t k = 0; k < x->rank; k++) shape[k] = x->shape[perm[k]];
        out = ir_new_tensor(b, "shuffle", x->dtype, x->rank, shape);
    }
    tosac_node *t = out ? ir_add_op(b, TOSAC_OP_TRANSPOSE, 1, &x, out, like) : NULL;
    return t && tosac_node_set_ints(t, TOSAC_ATTR_TRANSPOSE_perms, perm, (uint32_t)x->rank) == TOSAC_OK ? out : NULL;
}

/* r1 = RESHAPE(a [N,C,H,W] -> [N,f1..fk,H,W]); its sole user a TRANSPOSE of the fi only; whose
   sole user a RESHAPE back to [N,C,H,W]. */
static bool rewrite(pass_ctx *pc, tosac_node *r1, tosac_status *s)
{
    tosac_block *b = pc->b;
    tosac_value *a = r1->inputs[0], *split = r1->outputs[0];
    int32_t k = split->rank - 3;
    if (a->rank != 4 || k < 2 || a->dtype != split->dtype) return false;
    if (split->shape[0] != a->shape[0] || split->shape[k + 1] != a->shape[2] || split->shape[k + 2] != a->shape[3])
        return false;
    tosac_node *t = sole_user(b, split, TOSAC_OP_TRANSPOSE);
    if (!t || !t->attr[TOSAC_ATTR_TRANSPOSE_perms].present) return false;
    const int32_t *perm = t->attr[TOSAC_ATTR_TRANSPOSE_perms].data;
    if (perm[0] != 0 || perm[k + 1] != k + 1 || perm[k + 2] != k + 2) return false;
    tosac_node *r2 = sole_user(b, t->outputs[0], TOSAC_OP_RESHAPE);
    if (!r2) return false;
    tosac_value *out = r2->outputs[0];
    if (out->rank != 4 || memcmp(out->shape, a->shape, 4 * sizeof *a->shape)) return false;

    static const int32_t to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};
    int64_t inner[TOSAC_MAX_RANK], nhwc[4] = {a->shape[0], a->shape[2], a->shape[3], a->shape[1]};
    int32_t iperm[TOSAC_MAX_RANK];
    inner[0] = a->shape[0];
    inner[1] = a->shape[2] * a->shape[3];
    iperm[0] = 0;
    iperm[1] = 1;
    for (int32_t q = 0; q < k; q++) inner[2 + q] = split->shape[1 + q], iperm[2 + q] = 2 + perm[1 + q] - 1;
    r2->dead = true;
    t->dead = true;
    r1->dead = true;
    out->producer = NULL;
    tosac_value *v = transpose(b, a, to_nhwc, NULL, r1);
    v = v ? reshape(b, v, k + 2, inner, NULL, r1) : NULL;
    v = v ? transpose(b, v, iperm, NULL, t) : NULL;
    v = v ? reshape(b, v, 4, nhwc, NULL, r2) : NULL;
    if (!v || !transpose(b, v, to_nchw, out, r2)) {
        *s = tosac_diag_add(pc->d, TOSAC_ERR_NOMEM, "out of memory");
        return false;
    }
    return true;
}

tosac_status pass_channel_shuffle(pass_ctx *pc)
{
    tosac_block *b = pc->b;
    ir_count_uses(b);
    tosac_status s = TOSAC_OK;
    uint32_t n0 = b->n_nodes;
    for (uint32_t i = 0; i < n0 && s == TOSAC_OK; i++) {
        tosac_node *n = b->nodes[i];
        if (!n->dead && n->op == TOSAC_OP_RESHAPE && rewrite(pc, n, &s)) pc->changes++;
    }
    return s;
}
