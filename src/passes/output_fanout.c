/* output_fanout: TOSA consumers (Vela, the reference model's output binding) need one distinct
   tensor per output slot. As ExecuTorch's EnsureUniqueOutputNodesPass does, a tensor that fills
   more than one slot gets an IDENTITY for every slot, the first included. Import already gives a
   repeated slot, a graph input or a constant output an IDENTITY of its own (slot names are ONNX
   names), so here a slot's source is the tensor itself or, for an IDENTITY result, its operand:
   when a source feeds several slots, the slot holding the source directly gets an IDENTITY too,
   taking the source's name while the source gets a fresh one. */
#include <stdio.h>
#include <string.h>

#include "ir/rewrite.h"
#include "passes/pass.h"

static tosac_value *slot_source(const tosac_value *t)
{
    const tosac_node *p = t->producer;
    return p && p->op == TOSAC_OP_IDENTITY ? p->inputs[0] : (tosac_value *)t;
}

tosac_status pass_output_fanout(pass_ctx *pc)
{
    tosac_block *b = pc->b;
    ir_count_uses(b);
    for (uint32_t k = 0; k < b->n_outputs; k++) {
        tosac_value *v = b->outputs[k];
        if (slot_source(v) != v) continue;
        uint32_t slots = 0;
        for (uint32_t j = 0; j < b->n_outputs; j++) slots += slot_source(b->outputs[j]) == v;
        if (slots < 2) continue;
        char fresh[160];
        snprintf(fresh, sizeof fresh, "%s_shared", v->name);
        for (uint32_t n = 1; tosac_block_find(b, fresh); n++) snprintf(fresh, sizeof fresh, "%s_shared%u", v->name, n);
        const char *slot_name = v->name;
        if (ir_rename(b, v, fresh) != TOSAC_OK) goto nomem;
        /* every slot holding v directly gets its own IDENTITY; the first takes v's old name */
        for (uint32_t j = k; j < b->n_outputs; j++) {
            if (b->outputs[j] != v) continue;
            tosac_value *out = j == k ? tosac_block_add_tensor(b, slot_name, v->dtype, v->rank, v->shape)
                                      : ir_new_tensor(b, "output", v->dtype, v->rank, v->shape);
            if (!out || !ir_add_op(b, TOSAC_OP_IDENTITY, 1, &v, out, v->producer)) goto nomem;
            b->outputs[j] = out;
        }
        pc->changes++;
    }
    for (uint32_t k = 0; k < b->n_outputs; k++) {
        const tosac_node *p = b->outputs[k]->producer;
        pc->r->identities_added += p && p->op == TOSAC_OP_IDENTITY;
    }
    return TOSAC_OK;
nomem:
    return tosac_diag_add(pc->d, TOSAC_ERR_NOMEM, "out of memory");
}
