/*
 * layout: the import keeps the model's layout (NCHW) and wraps every NHWC-only TOSA operator
 * (convolutions, pools, resize...) in TRANSPOSE(to NHWC) ... TRANSPOSE(back to NCHW). This pass
 * removes those pairs:
 *   1. two TRANSPOSEs in a row compose into one (nothing when the composition is the identity);
 *   2. a TRANSPOSE feeding a layout-agnostic operator (elementwise, CLAMP, CAST, reductions,
 *      CONCAT, PAD, SLICE, TILE, REVERSE) sinks below it: when every operand in the layout-carrying
 *      positions is a TRANSPOSE with the same permutation, a constant (re-laid out by a TRANSPOSE
 *      that fold_constants evaluates) or all ones, the operator runs in the inner layout (axes,
 *      paddings, starts, sizes and multiples permuted) and one TRANSPOSE follows it;
 *   3. repeated until nothing changes, so the TRANSPOSE after a convolution travels down until it
 *      meets the next convolution's input TRANSPOSE and the two cancel;
 *      A RESHAPE that only splits dimensions, or merges ones that stay adjacent and in order
 *      before the TRANSPOSE, lets it sink too (it reshapes the inner tensor instead);
 *   4. finally a TRANSPOSE that only moves size-1 dimensions becomes a RESHAPE, and RESHAPE
 *      chains collapse (the NCHW flatten after a global pool needs no data movement).
 * What is left is at the graph boundary (the model's NCHW input and output) and the model's own
 * data-dependent permutations.
 */
#include <string.h>

#include "ir/rewrite.h"
#include "passes/pass.h"

typedef enum { SINK_NONE, SINK_ELEMENTWISE, SINK_AXIS_ATTR, SINK_SHAPE_OPERANDS } sink_kind;

/* How op `op` can run in another layout; *n_e: the first *n_e inputs carry the layout
   (all of them for CONCAT: *n_e = UINT32_MAX). */
static sink_kind sink_kind_of(uint32_t op, uint32_t *n_e, unsigned *axis_attr)
{
    *n_e = 1;
    *axis_attr = 0;
    switch (op) {
    case TOSAC_OP_ABS: case TOSAC_OP_BITWISE_NOT: case TOSAC_OP_CEIL: case TOSAC_OP_CLZ: case TOSAC_OP_COS:
    case TOSAC_OP_EXP: case TOSAC_OP_FLOOR: case TOSAC_OP_LOG: case TOSAC_OP_LOGICAL_NOT: case TOSAC_OP_NEGATE:
    case TOSAC_OP_RECIPROCAL: case TOSAC_OP_RSQRT: case TOSAC_OP_SIN: case TOSAC_OP_ERF: case TOSAC_OP_SIGMOID:
    case TOSAC_OP_TANH: case TOSAC_OP_CLAMP: case TOSAC_OP_CAST: case TOSAC_OP_IDENTITY: case TOSAC_OP_TABLE:
        return SINK_ELEMENTWISE;
    case TOSAC_OP_ADD: case TOSAC_OP_SUB: case TOSAC_OP_MUL: case TOSAC_OP_MAXIMUM: case TOSAC_OP_MINIMUM:
    case TOSAC_OP_POW: case TOSAC_OP_INTDIV: case TOSAC_OP_EQUAL: case TOSAC_OP_GREATER:
    case TOSAC_OP_GREATER_EQUAL: case TOSAC_OP_LOGICAL_AND: case TOSAC_OP_LOGICAL_OR: case TOSAC_OP_LOGICAL_XOR:
    case TOSAC_OP_BITWISE_AND: case TOSAC_OP_BITWISE_OR: case TOSAC_OP_BITWISE_XOR:
    case TOSAC_OP_ARITHMETIC_RIGHT_SHIFT: case TOSAC_OP_LOGICAL_LEFT_SHIFT: case TOSAC_OP_LOGICAL_RIGHT_SHIFT:
        *n_e = 2; /* MUL's third operand is its shift */
        return SINK_ELEMENTWISE;
    case TOSAC_OP_SELECT:
        *n_e = 3;
        return SINK_ELEMENTWISE;
    case TOSAC_OP_REDUCE_ALL: *axis_attr = TOSAC_ATTR_REDUCE_ALL_axis; return SINK_AXIS_ATTR;
    case TOSAC_OP_REDUCE_ANY: *axis_attr = TOSAC_ATTR_REDUCE_ANY_axis; return SINK_AXIS_ATTR;
    case TOSAC_OP_REDUCE_MAX: *axis_attr = TOSAC_ATTR_REDUCE_MAX_axis; return SINK_AXIS_ATTR;
    case TOSAC_OP_REDUCE_MIN: *axis_attr = TOSAC_ATTR_REDUCE_MIN_axis; return SINK_AXIS_ATTR;
    case TOSAC_OP_REDUCE_PRODUCT: *axis_attr = TOSAC_ATTR_REDUCE_PRODUCT_axis; return SINK_AXIS_ATTR;
    case TOSAC_OP_REDUCE_SUM: *axis_attr = TOSAC_ATTR_REDUCE_SUM_axis; return SINK_AXIS_ATTR;
    case TOSAC_OP_REVERSE: *axis_attr = TOSAC_ATTR_REVERSE_axis; return SINK_AXIS_ATTR;
    case TOSAC_OP_CONCAT:
        *n_e = UINT32_MAX;
        *axis_attr = TOSAC_ATTR_CONCAT_axis;
        return SINK_AXIS_ATTR;
    case TOSAC_OP_PAD: case TOSAC_OP_SLICE: case TOSAC_OP_TILE:
        return SINK_SHAPE_OPERANDS;
    default:
        return SINK_NONE;
    }
}

static const tosac_node *live_transpose(const tosac_value *v)
{
    const tosac_node *p = v->producer;
    return p && !p->dead && p->op == TOSAC_OP_TRANSPOSE && p->attr[TOSAC_ATTR_TRANSPOSE_perms].present ? p : NULL;
}

static bool is_block_input(const tosac_block *b, const tosac_value *v)
{
    for (uint32_t k = 0; k < b->n_inputs; k++)
        if (b->inputs[k] == v) return true;
    return false;
}

static const int32_t *perm_of(const tosac_node *t) { return t->attr[TOSAC_ATTR_TRANSPOSE_perms].data; }

static bool all_ones(const tosac_value *v)
{
    for (int32_t k = 0; k < v->rank; k++)
        if (v->shape[k] != 1) return false;
    return true;
}

static tosac_node *clone_node(tosac_block *b, const tosac_node *n, tosac_value *const *in, tosac_value *out)
{
    tosac_node *m = tosac_block_add_node(b, (tosac_op)n->op, n->n_inputs, in, 1, &out);
    if (!m) return NULL;
    memcpy(m->attr, n->attr, sizeof m->attr);
    m->attr_type = n->attr_type;
    m->location = n->location;
    out->producer = m;
    return m;
}

static tosac_value *add_transpose(tosac_block *b, tosac_value *x, const int32_t *perm, tosac_value *out,
                                  const tosac_node *like)
{
    if (!out) {
        int64_t shape[TOSAC_MAX_RANK];
        for (int32_t k = 0; k < x->rank; k++) shape[k] = x->shape[perm[k]];
        out = ir_new_tensor(b, "layout", x->dtype, x->rank, shape);
    }
    tosac_node *t = out ? ir_add_op(b, TOSAC_OP_TRANSPOSE, 1, &x, out, like) : NULL;
    if (!t || tosac_node_set_ints(t, TOSAC_ATTR_TRANSPOSE_perms, perm, (uint32_t)x->rank) != TOSAC_OK) return NULL;
    return out;
}

/* Decodes a CONST_SHAPE operand (int64 little endian). */
static bool shape_values(const tosac_value *v, int64_t *vals, uint32_t cap, uint32_t *n)
{
    if (!v->is_shape || !ir_is_const(v) || v->data_len % 8 || v->data_len / 8 > cap) return false;
    *n = (uint32_t)(v->data_len / 8);
    for (uint32_t i = 0; i < *n; i++) {
        uint64_t u = 0;
        for (int k = 7; k >= 0; k--) u = (u << 8) | v->data[i * 8 + (uint32_t)k];
        vals[i] = (int64_t)u;
    }
    return true;
}

/* Rule 2 for RESHAPE(TRANSPOSE_P(x)): when the reshape only splits dimensions of y = T_P(x) and
   merges runs of them that are also adjacent and in order in x, it can be done on x first:
   RESHAPE(x -> x2) then TRANSPOSE(P2). Size-1 dimensions are ignored when grouping and parked at
   the end of x2. (The ViT patch embedding: conv output to NCHW, flatten(2), transpose(1,2)
   becomes a plain reshape of the NHWC conv output.) */
static bool try_sink_reshape(pass_ctx *pc, tosac_node *n, tosac_status *s)
{
    tosac_block *b = pc->b;
    const tosac_node *t = live_transpose(n->inputs[0]);
    if (!t) return false;
    const int32_t *P = perm_of(t);
    const tosac_value *x = t->inputs[0], *out = n->outputs[0];
    int32_t r = x->rank, ro = out->rank;
    /* non-1 dims of y (as x indices, in y order) and of the output */
    int32_t yk[TOSAC_MAX_RANK], oj[TOSAC_MAX_RANK], ny = 0, no = 0;
    for (int32_t k = 0; k < r; k++)
        if (x->shape[P[k]] != 1) yk[ny++] = P[k];
    for (int32_t j = 0; j < ro; j++)
        if (out->shape[j] != 1) oj[no++] = j;
    /* groups: y dims [ya, yb) <-> output dims [oa, ob) with equal products */
    int32_t gy[TOSAC_MAX_RANK + 1], go[TOSAC_MAX_RANK + 1], ng = 0;
    int32_t i = 0, j = 0;
    while (i < ny && j < no) {
        int64_t pi = x->shape[yk[i]], po = out->shape[oj[j]];
        gy[ng] = i++;
        go[ng] = j++;
        while (pi != po) {
            if (pi < po && i < ny) pi *= x->shape[yk[i++]];
            else if (po < pi && j < no) po *= out->shape[oj[j++]];
            else return false;
        }
        ng++;
    }
    if (i != ny || j != no) return false;
    gy[ng] = ny;
    go[ng] = no;
    /* a merged run must be adjacent and increasing among x's non-1 dims */
    int32_t rank_in_x[TOSAC_MAX_RANK], c = 0;
    for (int32_t a = 0; a < r; a++) rank_in_x[a] = x->shape[a] != 1 ? c++ : -1;
    for (int32_t g = 0; g < ng; g++)
        for (int32_t q = gy[g] + 1; q < gy[g + 1]; q++)
            if (rank_in_x[yk[q]] != rank_in_x[yk[q - 1]] + 1) return false;
    /* x2: the groups' output dims, groups in x order, then the output's size-1 dims */
    int64_t x2[TOSAC_MAX_RANK];
    int32_t pos_of_outdim[TOSAC_MAX_RANK], n2 = 0;
    for (int32_t a = 0; a < r; a++) {
        if (x->shape[a] == 1) continue;
        for (int32_t g = 0; g < ng; g++)
            if (yk[gy[g]] == a)
                for (int32_t q = go[g]; q < go[g + 1]; q++) pos_of_outdim[oj[q]] = n2, x2[n2++] = out->shape[oj[q]];
    }
    int32_t P2[TOSAC_MAX_RANK];
    for (int32_t jj = 0; jj < ro; jj++) {
        if (out->shape[jj] == 1) x2[n2] = 1, P2[jj] = n2++;
        else P2[jj] = pos_of_outdim[jj];
    }
    if (n2 != ro) return false;
    tosac_value *src = t->inputs[0];
    bool same = src->rank == ro;
    for (int32_t k = 0; same && k < ro; k++) same = src->shape[k] == x2[k];
    if (!same) {
        tosac_value *shp = ir_new_shape(b, x2, (uint32_t)ro);
        tosac_value *in[2] = {src, shp};
        tosac_value *r2 = shp ? ir_new_tensor(b, "layout", src->dtype, ro, x2) : NULL;
        if (!r2 || !ir_add_op(b, TOSAC_OP_RESHAPE, 2, in, r2, n)) goto nomem;
        src = r2;
    }
    tosac_value *o = n->outputs[0];
    n->dead = true;
    o->producer = NULL;
    if (!add_transpose(b, src, P2, o, n)) goto nomem;
    return true;
nomem:
    *s = tosac_diag_add(pc->d, TOSAC_ERR_NOMEM, "out of memory");
    return false;
}

/* Tries rule 2 on n; true when n was rewritten (false with *s set on failure). */
static bool try_sink(pass_ctx *pc, tosac_node *n, tosac_status *s)
{
    tosac_block *b = pc->b;
    uint32_t n_e;
    unsigned axis_attr;
    if (n->op == TOSAC_OP_RESHAPE) return try_sink_reshape(pc, n, s);
    sink_kind kind = sink_kind_of(n->op, &n_e, &axis_attr);
    if (kind == SINK_NONE || n->n_outputs != 1) return false;
    tosac_value *out = n->outputs[0];
    int32_t rank = out->rank;
    if (rank < 2) return false;
    if (n_e > n->n_inputs) n_e = n->n_inputs;
    const int32_t *P = NULL;
    for (uint32_t e = 0; e < n_e; e++) {
        tosac_value *u = n->inputs[e];
        if (u->rank != rank) return false;
        const tosac_node *t = live_transpose(u);
        if (t) {
            if (P && memcmp(P, perm_of(t), (size_t)rank * sizeof *P)) return false;
            P = perm_of(t);
        } else if (!(ir_is_const(u) && !u->is_shape) && !all_ones(u)) {
            return false;
        }
    }
    if (!P) return false;
    int32_t Q[TOSAC_MAX_RANK]; /* inverse of P */
    for (int32_t k = 0; k < rank; k++) Q[P[k]] = k;

    tosac_value *in[TOSAC_MAX_RANK + 8];
    tosac_value **inp = n->n_inputs <= TOSAC_MAX_RANK + 8 ? in : tosac_arena_alloc(&pc->g->arena, n->n_inputs * sizeof *inp);
    if (!inp) goto nomem;
    for (uint32_t k = 0; k < n->n_inputs; k++) {
        tosac_value *u = n->inputs[k];
        if (k < n_e) {
            const tosac_node *t = live_transpose(u);
            if (t) u = t->inputs[0];
            else if (!all_ones(u) && !(u = add_transpose(b, u, Q, NULL, n))) goto nomem;
        } else if (kind == SINK_SHAPE_OPERANDS && u->is_shape && !(n->op == TOSAC_OP_PAD && k == 2)) {
            /* PAD: [before, after] per axis; SLICE start/size and TILE multiples: one per axis */
            int64_t vals[2 * TOSAC_MAX_RANK], nv[2 * TOSAC_MAX_RANK];
            uint32_t cnt;
            if (!shape_values(u, vals, 2 * TOSAC_MAX_RANK, &cnt)) return false;
            uint32_t per = cnt == (uint32_t)rank ? 1 : cnt == 2u * (uint32_t)rank ? 2 : 0;
            if (!per) return false;
            for (int32_t a = 0; a < rank; a++)
                for (uint32_t j = 0; j < per; j++) nv[(uint32_t)P[a] * per + j] = vals[(uint32_t)a * per + j];
            if (!(u = ir_new_shape(b, nv, cnt))) goto nomem;
        }
        inp[k] = u;
    }
    int64_t shape[TOSAC_MAX_RANK];
    for (int32_t k = 0; k < rank; k++) shape[P[k]] = out->shape[k];
    tosac_value *inner = ir_new_tensor(b, "layout", out->dtype, rank, shape);
    tosac_node *m = inner ? clone_node(b, n, inp, inner) : NULL;
    if (!m) goto nomem;
    if (kind == SINK_AXIS_ATTR) m->attr[axis_attr].i = P[n->attr[axis_attr].i];
    n->dead = true;
    out->producer = NULL;
    if (!add_transpose(b, inner, P, out, n)) goto nomem;
    return true;
nomem:
    *s = tosac_diag_add(pc->d, TOSAC_ERR_NOMEM, "out of memory");
    return false;
}

/* Rule 1 on a TRANSPOSE n whose input is a TRANSPOSE. */
static bool try_compose(pass_ctx *pc, tosac_node *n, tosac_status *s)
{
    const int32_t *Q = perm_of(n);
    int32_t rank = n->outputs[0]->rank;
    bool ident = true;
    for (int32_t k = 0; k < rank; k++) ident &= Q[k] == k;
    const tosac_node *t = live_transpose(n->inputs[0]);
    if (!t && !ident) return false;
    tosac_value *x = n->inputs[0];
    int32_t R[TOSAC_MAX_RANK];
    if (t) {
        x = t->inputs[0];
        const int32_t *P = perm_of(t);
        ident = true;
        for (int32_t k = 0; k < rank; k++) R[k] = P[Q[k]], ident &= R[k] == k;
    }
    tosac_value *out = n->outputs[0];
    n->dead = true;
    out->producer = NULL;
    if (ident) {
        /* a block output keeps its own tensor (and name) through an IDENTITY */
        bool is_output = false;
        for (uint32_t k = 0; k < pc->b->n_outputs; k++) is_output |= pc->b->outputs[k] == out;
        if (!is_output) {
            ir_replace_uses(pc->b, out, x);
            return true;
        }
        if (!ir_add_op(pc->b, TOSAC_OP_IDENTITY, 1, &x, out, n)) goto nomem;
        return true;
    }
    if (!add_transpose(pc->b, x, R, out, n)) goto nomem;
    return true;
nomem:
    *s = tosac_diag_add(pc->d, TOSAC_ERR_NOMEM, "out of memory");
    return false;
}

/* Rule 4: a TRANSPOSE that keeps the order of the non-1 dimensions is a RESHAPE. */
static bool reshape_like(const tosac_node *t)
{
    const int32_t *P = perm_of(t);
    const tosac_value *x = t->inputs[0];
    int32_t last = -1;
    for (int32_t k = 0; k < x->rank; k++) {
        if (x->shape[P[k]] == 1) continue;
        if (P[k] < last) return false;
        last = P[k];
    }
    return true;
}

static tosac_status to_reshapes(pass_ctx *pc)
{
    tosac_block *b = pc->b;
    uint32_t n0 = b->n_nodes;
    for (uint32_t i = 0; i < n0; i++) {
        tosac_node *n = b->nodes[i];
        if (n->dead || n->op != TOSAC_OP_TRANSPOSE || !reshape_like(n)) continue;
        tosac_value *x = n->inputs[0], *out = n->outputs[0];
        /* look through a RESHAPE feeding this one: a single RESHAPE from the original value */
        const tosac_node *p = x->producer;
        if (p && !p->dead && p->op == TOSAC_OP_RESHAPE) x = p->inputs[0];
        n->dead = true;
        out->producer = NULL;
        tosac_value *shp = ir_new_shape(b, out->shape, (uint32_t)out->rank);
        tosac_value *in[2] = {x, shp};
        if (!shp || !ir_add_op(b, TOSAC_OP_RESHAPE, 2, in, out, n)) goto nomem;
        pc->changes++;
    }
    /* RESHAPE(RESHAPE(x)) -> RESHAPE(x); RESHAPE to the input's own shape -> x */
    ir_count_uses(b);
    n0 = b->n_nodes;
    for (uint32_t i = 0; i < n0; i++) {
        tosac_node *n = b->nodes[i];
        if (n->dead || n->op != TOSAC_OP_RESHAPE) continue;
        const tosac_node *p = n->inputs[0]->producer;
        if (p && !p->dead && p->op == TOSAC_OP_RESHAPE) {
            n->inputs[0]->n_uses--;
            n->inputs[0] = p->inputs[0];
            n->inputs[0]->n_uses++;
            pc->changes++;
        }
        tosac_value *x = n->inputs[0], *out = n->outputs[0];
        bool same = x->rank == out->rank && (!x->rank || !memcmp(x->shape, out->shape, (size_t)x->rank * 8));
        bool is_output = false;
        for (uint32_t k = 0; k < b->n_outputs; k++) is_output |= b->outputs[k] == out;
        if (same && !is_output) {
            n->dead = true;
            ir_replace_uses(b, out, x);
            pc->changes++;
        }
    }
    return TOSAC_OK;
nomem:
    return tosac_diag_add(pc->d, TOSAC_ERR_NOMEM, "out of memory");
}

/* Rule 5 (after 1-3 have settled): a TRANSPOSE below a chain of single-use layout-agnostic
   operators that starts at a graph input moves up to that input: the chain runs in the transposed
   layout instead. Done by putting the identity pair TRANSPOSE_Q(TRANSPOSE_P(v)) in front of the
   chain and sinking its second half down this chain only, where it cancels the original. (A
   global rule 2 would sink the TRANSPOSE straight back.) SqueezeNet crops its input for the first
   convolution: its input TRANSPOSE then is the program's first operator, not the second. */
#define HOIST_MAX_CHAIN 16
static bool try_hoist(pass_ctx *pc, tosac_node *n, tosac_status *s)
{
    tosac_block *b = pc->b;
    tosac_value *v = n->inputs[0];
    tosac_node *chain[HOIST_MAX_CHAIN];
    uint32_t len = 0;
    while (len < HOIST_MAX_CHAIN) {
        tosac_node *f = v->producer;
        if (!f || f->dead || v->n_uses != 1 || f->n_outputs != 1) break;
        uint32_t n_e;
        unsigned axis_attr;
        if (f->op == TOSAC_OP_TRANSPOSE || sink_kind_of(f->op, &n_e, &axis_attr) == SINK_NONE) break;
        if (n_e > f->n_inputs) n_e = f->n_inputs;
        tosac_value *u = NULL;
        uint32_t dyn = 0;
        for (uint32_t e = 0; e < n_e; e++)
            if (!(ir_is_const(f->inputs[e]) && !f->inputs[e]->is_shape) && !all_ones(f->inputs[e])) u = f->inputs[e], dyn++;
        if (dyn != 1 || u->rank != v->rank) break;
        chain[len++] = f;
        v = u;
    }
    if (!len || !is_block_input(b, v)) return false;
    const int32_t *P = perm_of(n);
    int32_t Q[TOSAC_MAX_RANK];
    for (int32_t k = 0; k < v->rank; k++) Q[P[k]] = k;
    tosac_value *z = add_transpose(b, v, P, NULL, n);
    tosac_value *back = z ? add_transpose(b, z, Q, NULL, n) : NULL;
    if (!back) {
        *s = tosac_diag_add(pc->d, TOSAC_ERR_NOMEM, "out of memory");
        return false;
    }
    tosac_node *first = chain[len - 1];
    for (uint32_t k = 0; k < first->n_inputs; k++)
        if (first->inputs[k] == v) first->inputs[k] = back;
    /* each chain operator now reads TRANSPOSE_Q(...): sink it through, first to last */
    for (uint32_t k = len; k-- > 0;)
        if (!try_sink(pc, chain[k], s)) return *s == TOSAC_OK; /* cannot happen: checked above */
    return try_compose(pc, n, s);
}

/* Rules 1-3 to a fixed point. */
static tosac_status sink_all(pass_ctx *pc)
{
    tosac_block *b = pc->b;
    tosac_status s = TOSAC_OK;
    /* every rewrite moves a TRANSPOSE strictly down a finite DAG; the budget only guards bugs */
    uint64_t budget = 64u * (uint64_t)b->n_nodes + 1024u;
    for (bool changed = true; changed && budget && s == TOSAC_OK;) {
        changed = false;
        ir_count_uses(b);
        uint32_t n0 = b->n_nodes;
        for (uint32_t i = 0; i < n0 && budget && s == TOSAC_OK; i++) {
            tosac_node *n = b->nodes[i];
            if (n->dead) continue;
            bool did = n->op == TOSAC_OP_TRANSPOSE ? try_compose(pc, n, &s) : try_sink(pc, n, &s);
            if (did) {
                changed = true;
                budget--;
                pc->changes++;
            }
        }
        ir_dce(b);
        if (s == TOSAC_OK) s = ir_compact(b);
    }
    return s;
}

tosac_status pass_layout(pass_ctx *pc)
{
    tosac_block *b = pc->b;
    tosac_status s = sink_all(pc);
    if (s != TOSAC_OK) return s;
    ir_count_uses(b);
    uint32_t n0 = b->n_nodes;
    for (uint32_t i = 0; i < n0 && s == TOSAC_OK; i++) {
        tosac_node *n = b->nodes[i];
        if (!n->dead && n->op == TOSAC_OP_TRANSPOSE && try_hoist(pc, n, &s)) pc->changes++;
    }
    ir_dce(b);
    if (s == TOSAC_OK) s = ir_compact(b);
    if (s != TOSAC_OK) return s;
    return to_reshapes(pc);
}
