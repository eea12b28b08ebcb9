/* Graph rewriting helpers for the passes (see rewrite.h). */
#include "ir/rewrite.h"

#include <stdio.h>
#include <string.h>

#include "core/alloc.h"

void ir_count_uses(tosac_block *b)
{
    for (uint32_t i = 0; i < b->n_tensors; i++) b->tensors[i]->n_uses = 0, b->tensors[i]->producer = NULL;
    for (uint32_t i = 0; i < b->n_shapes; i++) b->shapes[i]->n_uses = 0, b->shapes[i]->producer = NULL;
    for (uint32_t i = 0; i < b->n_nodes; i++) {
        tosac_node *n = b->nodes[i];
        if (n->dead) continue;
        for (uint32_t k = 0; k < n->n_inputs; k++) n->inputs[k]->n_uses++;
        for (uint32_t k = 0; k < n->n_outputs; k++) n->outputs[k]->producer = n;
    }
    for (uint32_t i = 0; i < b->n_outputs; i++) b->outputs[i]->n_uses++;
}

void ir_replace_uses(tosac_block *b, tosac_value *from, tosac_value *to)
{
    if (from == to) return;
    for (uint32_t i = 0; i < b->n_nodes; i++) {
        tosac_node *n = b->nodes[i];
        if (n->dead) continue;
        for (uint32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] == from) n->inputs[k] = to, from->n_uses--, to->n_uses++;
    }
    for (uint32_t i = 0; i < b->n_outputs; i++)
        if (b->outputs[i] == from) b->outputs[i] = to, from->n_uses--, to->n_uses++;
}

static bool fresh_name(tosac_block *b, const char *prefix, char *buf, size_t cap)
{
    for (uint32_t k = b->n_tensors + b->n_shapes;; k++) {
        snprintf(buf, cap, "%s%lu", prefix, (unsigned long)k);
        if (!tosac_block_find(b, buf)) return true;
        if (k == UINT32_MAX) return false;
    }
}

tosac_value *ir_new_tensor(tosac_block *b, const char *prefix, tosac_dtype t, int rank, const int64_t *shape)
{
    char name[96];
    if (!fresh_name(b, prefix, name, sizeof name)) return NULL;
    return tosac_block_add_tensor(b, name, t, rank, shape);
}

tosac_value *ir_new_const(tosac_block *b, const char *prefix, tosac_dtype t, int rank, const int64_t *shape,
                          const void *data, size_t nbytes)
{
    char name[96];
    if (!fresh_name(b, prefix, name, sizeof name)) return NULL;
    return tosac_block_add_const(b, name, t, rank, shape, data, nbytes);
}

tosac_value *ir_new_const_adopt(tosac_block *b, const char *prefix, tosac_dtype t, int rank, const int64_t *shape,
                                const void *data, size_t nbytes)
{
    char name[96];
    if (!fresh_name(b, prefix, name, sizeof name)) return NULL;
    return tosac_block_add_const_adopt(b, name, t, rank, shape, data, nbytes);
}

tosac_value *ir_new_shape(tosac_block *b, const int64_t *values, uint32_t count)
{
    char name[96];
    if (!fresh_name(b, "shape", name, sizeof name)) return NULL;
    return tosac_block_add_const_shape(b, name, values, count);
}

tosac_node *ir_add_op(tosac_block *b, tosac_op op, uint32_t n_in, tosac_value *const *in, tosac_value *out,
                      const tosac_node *like)
{
    for (uint32_t k = 0; k < n_in; k++)
        if (!in[k]) return NULL;
    if (!out) return NULL;
    tosac_node *n = tosac_block_add_node(b, op, n_in, in, 1, &out);
    if (!n) return NULL;
    if (like && like->location && tosac_node_set_location(n, like->location) != TOSAC_OK) return NULL;
    out->producer = n;
    return n;
}

tosac_status ir_rename(tosac_block *b, tosac_value *v, const char *name)
{
    tosac_value *other = tosac_block_find(b, name);
    if (other == v) return TOSAC_OK;
    if (other) return TOSAC_ERR_INVALID_ARG;
    const char *copy = tosac_arena_strdup(&b->graph->arena, name);
    if (!copy) return TOSAC_ERR_NOMEM;
    v->name = copy;
    return tosac_block_rehash(b) ? TOSAC_OK : TOSAC_ERR_NOMEM;
}

bool ir_is_const(const tosac_value *v)
{
    return v->producer && (v->producer->op == TOSAC_OP_CONST || v->producer->op == TOSAC_OP_CONST_SHAPE) &&
           (v->data || tosac_value_nelem(v) == 0);
}

uint32_t ir_dce(tosac_block *b)
{
    ir_count_uses(b);
    uint32_t removed = 0;
    /* operators come in topological order, so one backward sweep sees every consumer first */
    for (uint32_t i = b->n_nodes; i-- > 0;) {
        tosac_node *n = b->nodes[i];
        if (n->dead) continue;
        bool used = false;
        for (uint32_t k = 0; k < n->n_outputs; k++) used |= n->outputs[k]->n_uses > 0 || n->outputs[k]->variable;
        /* stateful or control-flow operators stay */
        if (used || n->op == TOSAC_OP_VARIABLE || n->op == TOSAC_OP_VARIABLE_WRITE || n->op == TOSAC_OP_COND_IF ||
            n->op == TOSAC_OP_WHILE_LOOP || n->op == TOSAC_OP_CUSTOM)
            continue;
        n->dead = true;
        removed++;
        for (uint32_t k = 0; k < n->n_inputs; k++) n->inputs[k]->n_uses--;
    }
    return removed;
}

/* Stable topological order: each live operator after the producers of its inputs, otherwise in
   the current order. Iterative DFS over producers; node->index is the visit state. */
static tosac_status topo_order(tosac_block *b, tosac_node **out, uint32_t *n_out)
{
    enum { UNSEEN = 0, OPEN = 1, DONE = 2 };
    uint32_t n = 0;
    for (uint32_t i = 0; i < b->n_nodes; i++) b->nodes[i]->index = UNSEEN;
    size_t stack_bytes;
    if (!tosac_mul_size(b->n_nodes ? b->n_nodes : 1, 2 * sizeof(uint32_t) + sizeof(tosac_node *), &stack_bytes))
        return TOSAC_ERR_NOMEM;
    tosac_node **st_node = tosac_malloc(stack_bytes);
    if (!st_node) return TOSAC_ERR_NOMEM;
    uint32_t *st_pos = (uint32_t *)(st_node + b->n_nodes);
    tosac_status s = TOSAC_OK;
    for (uint32_t i = 0; i < b->n_nodes && s == TOSAC_OK; i++) {
        tosac_node *root = b->nodes[i];
        if (root->dead || root->index != UNSEEN) continue;
        uint32_t sp = 0;
        st_node[sp] = root;
        st_pos[sp++] = 0;
        root->index = OPEN;
        while (sp) {
            tosac_node *m = st_node[sp - 1];
            uint32_t k = st_pos[sp - 1];
            if (k < m->n_inputs) {
                st_pos[sp - 1]++;
                tosac_node *p = m->inputs[k]->producer;
                if (!p || p->dead || p->block != b) continue;
                if (p->index == OPEN) {
                    s = TOSAC_ERR_INTERNAL;
                    break;
                }
                if (p->index == UNSEEN) {
                    p->index = OPEN;
                    st_node[sp] = p;
                    st_pos[sp++] = 0;
                }
                continue;
            }
            m->index = DONE;
            out[n++] = m;
            sp--;
        }
    }
    tosac_free(st_node, stack_bytes);
    *n_out = n;
    return s;
}

static uint32_t keep_values(tosac_value **list, uint32_t n)
{
    uint32_t w = 0;
    for (uint32_t i = 0; i < n; i++)
        if (list[i]->n_uses || list[i]->producer || list[i]->variable) {
            list[i]->index = w;
            list[w++] = list[i];
        }
    return w;
}

tosac_status ir_compact(tosac_block *b)
{
    ir_count_uses(b);
    size_t bytes;
    if (!tosac_mul_size(b->n_nodes ? b->n_nodes : 1, sizeof(tosac_node *), &bytes)) return TOSAC_ERR_NOMEM;
    tosac_node **order = tosac_malloc(bytes);
    if (!order) return TOSAC_ERR_NOMEM;
    uint32_t n = 0;
    tosac_status s = topo_order(b, order, &n);
    if (s == TOSAC_OK) {
        if (n) memcpy(b->nodes, order, (size_t)n * sizeof(*order));
        b->n_nodes = n;
        for (uint32_t i = 0; i < n; i++) b->nodes[i]->index = i;
    }
    tosac_free(order, bytes);
    if (s != TOSAC_OK) return s;
    /* block inputs count as referenced */
    for (uint32_t i = 0; i < b->n_inputs; i++) b->inputs[i]->n_uses++;
    b->n_tensors = keep_values(b->tensors, b->n_tensors);
    b->n_shapes = keep_values(b->shapes, b->n_shapes);
    for (uint32_t i = 0; i < b->n_inputs; i++) b->inputs[i]->n_uses--;
    return tosac_block_rehash(b) ? TOSAC_OK : TOSAC_ERR_NOMEM;
}

tosac_status ir_copy_attrs(tosac_node *dst, const tosac_node *src)
{
    for (unsigned id = 0; id < tosac_op_attr_count(src->op) && id < TOSAC_ATTR_MAX_FIELDS; id++) {
        const tosac_attr_val *a = &src->attr[id];
        if (!a->present) continue;
        tosac_status s = TOSAC_OK;
        switch (tosac_op_attr_kind(src->op, id)) {
        case TOSAC_AK_I32V: s = tosac_node_set_ints(dst, id, a->data, a->len); break;
        case TOSAC_AK_BYTES:
        case TOSAC_AK_BYTES8: s = tosac_node_set_bytes(dst, id, a->data, a->len); break;
        case TOSAC_AK_STR: s = tosac_node_set_str(dst, id, a->data); break;
        case TOSAC_AK_NONE: break;
        default: s = tosac_node_set_int(dst, id, a->i); break;
        }
        if (s != TOSAC_OK) return s;
    }
    return TOSAC_OK;
}
