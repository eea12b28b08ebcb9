/* dedupe_constants: constants with the same type, shape and bytes become one (equal weights or
   tables written twice by an exporter, zero points, shift operands, ...). */
#include <string.h>

#include "core/alloc.h"
#include "ir/rewrite.h"
#include "passes/pass.h"

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const uint8_t *s = p;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 0x100000001b3ull;
    return h;
}

/* Type, shape, length and a sample of at most 64 evenly spaced bytes: weights run to hundreds of
   MB and are compared in full (memcmp, which stops at the first difference) only when all of
   that matches. */
static uint64_t const_hash(const tosac_value *v)
{
    uint64_t h = 0xcbf29ce484222325ull;
    int32_t head[2] = {(int32_t)v->dtype, v->rank};
    h = mix(h, head, sizeof head);
    if (v->rank) h = mix(h, v->shape, (size_t)v->rank * sizeof *v->shape);
    h = mix(h, &v->data_len, sizeof v->data_len);
    size_t step = v->data_len / 64 + 1;
    for (size_t i = 0; i < v->data_len; i += step) h = (h ^ v->data[i]) * 0x100000001b3ull;
    return h;
}

static bool same_const(const tosac_value *a, const tosac_value *b)
{
    if (a->dtype != b->dtype || a->is_shape != b->is_shape || a->rank != b->rank || a->data_len != b->data_len)
        return false;
    if (a->rank && memcmp(a->shape, b->shape, (size_t)a->rank * sizeof *a->shape)) return false;
    return !a->data_len || !memcmp(a->data, b->data, a->data_len);
}

tosac_status pass_dedupe_constants(pass_ctx *pc)
{
    tosac_block *b = pc->b;
    ir_count_uses(b);
    uint32_t cap = 16;
    while (cap < 2 * b->n_nodes) cap *= 2;
    size_t bytes = (size_t)cap * sizeof(tosac_value *);
    tosac_value **table = tosac_calloc(cap, sizeof(tosac_value *));
    if (!table) return tosac_diag_add(pc->d, TOSAC_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; i < b->n_nodes; i++) {
        tosac_node *n = b->nodes[i];
        if (n->dead || (n->op != TOSAC_OP_CONST && n->op != TOSAC_OP_CONST_SHAPE)) continue;
        tosac_value *v = n->outputs[0];
        /* a constant that is itself an output slot keeps its identity */
        bool is_output = false;
        for (uint32_t k = 0; k < b->n_outputs; k++) is_output |= b->outputs[k] == v;
        if (is_output || v->variable) continue;
        uint32_t j = (uint32_t)const_hash(v) & (cap - 1);
        while (table[j] && !same_const(table[j], v)) j = (j + 1) & (cap - 1);
        if (!table[j]) {
            table[j] = v;
            continue;
        }
        ir_replace_uses(b, v, table[j]);
        n->dead = true;
        pc->changes++;
        pc->r->consts_merged++;
        pc->r->dedup_bytes_saved += v->data_len;
    }
    tosac_free(table, bytes);
    return TOSAC_OK;
}
