/* Converters for ONNX control flow: If (inlined for a constant condition, else COND_IF with one
 * block per branch) and Loop (WHILE_LOOP; unrolled when it has scan outputs, which needs the trip
 * count and the condition at compile time). */
#include <stdio.h>
#include <string.h>

#include "onnx/convert.h"

#define MAX_OUTER 256
#define MAX_UNROLL 4096

static const tosac_onnx_graph *graph_attr(cvt_ctx *c, const char *name)
{
    const tosac_onnx_attr *a = tosac_onnx_find_attr(c->node, name);
    return a && a->type == TOSAC_ONNX_ATTR_GRAPH ? a->g : NULL;
}

/* Output k of the node = value `name` of a converted subgraph. */
static tosac_status bind_result(cvt_ctx *c, size_t k, const char *name)
{
    if (k >= c->node->n_outputs || !c->node->outputs[k][0]) return TOSAC_OK;
    cvt_val *v = cvt_lookup(c, name);
    if (!v) return cvt_fail(c, TOSAC_ERR_FORMAT, "subgraph output '%s' is not produced", name);
    return cvt_alias(c, c->node->outputs[k], v) ? TOSAC_OK : cvt_nomem(c);
}

static bool same_sig(const tosac_value *a, const tosac_value *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank) return false;
    for (int k = 0; k < a->rank; k++)
        if (a->shape[k] != b->shape[k]) return false;
    return true;
}

/* t as an output of block blk: a tensor of its own (not an input nor an earlier output). */
static tosac_status block_output(cvt_ctx *c, tosac_block *blk, tosac_value *t)
{
    bool reuse = false;
    for (uint32_t j = 0; t && j < blk->n_inputs; j++) reuse |= blk->inputs[j] == t;
    for (uint32_t j = 0; t && j < blk->n_outputs; j++) reuse |= blk->outputs[j] == t;
    if (reuse) t = cvt_unary(c, TOSAC_OP_IDENTITY, t);
    return t && tosac_block_add_output(blk, t) == TOSAC_OK ? TOSAC_OK : cvt_nomem(c);
}

/* One COND_IF branch: a block of the current region whose inputs stand for the outer tensors
   outer[0..n) (host constants are materialised inside the block); its outputs into out[]. */
static tosac_status branch_block(cvt_ctx *c, const tosac_onnx_graph *g, const char *bname, cvt_val **outer, size_t n,
                                 cvt_val **consts, size_t nc, tosac_value **out)
{
    tosac_block *blk = tosac_region_add_block(c->b->region, bname), *main_b = c->b;
    tosac_value *saved[MAX_OUTER], *saved_c[MAX_OUTER];
    if (!blk) return cvt_nomem(c);
    tosac_status s = TOSAC_OK;
    for (size_t j = 0; j < n; j++) {
        saved[j] = outer[j]->v;
        char name[32];
        snprintf(name, sizeof name, "onnx_t%u", c->counter++);
        tosac_value *t = tosac_block_add_tensor(blk, name, saved[j]->dtype, saved[j]->rank, saved[j]->shape);
        if (!t || tosac_block_add_input(blk, t) != TOSAC_OK) s = cvt_nomem(c);
        outer[j]->v = t;
    }
    for (size_t j = 0; j < nc; j++) {
        saved_c[j] = consts[j]->v;
        consts[j]->v = NULL;
    }
    c->b = blk;
    if (s == TOSAC_OK) s = cvt_subgraph(c, g);
    for (size_t k = 0; s == TOSAC_OK && k < g->n_outputs; k++) {
        cvt_val *v = cvt_lookup(c, g->outputs[k].name);
        if (!v) {
            s = cvt_fail(c, TOSAC_ERR_FORMAT, "branch output '%s' is not produced", g->outputs[k].name);
            break;
        }
        tosac_value *t = cvt_tensor(c, v, &s);
        if (!t || (s = block_output(c, blk, t)) != TOSAC_OK) break;
        out[k] = blk->outputs[blk->n_outputs - 1];
    }
    c->b = main_b;
    for (size_t j = 0; j < n; j++) outer[j]->v = saved[j];
    for (size_t j = 0; j < nc; j++) consts[j]->v = saved_c[j];
    return s;
}

tosac_status cvt_if(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *cv = cvt_in_req(c, 0, &s);
    if (!cv) return s;
    if (cv->dt != TOSAC_DTYPE_BOOL || cv->numel != 1)
        return cvt_fail(c, TOSAC_ERR_FORMAT, "the condition must be one bool");
    const tosac_onnx_graph *br[2] = {graph_attr(c, "then_branch"), graph_attr(c, "else_branch")};
    size_t nout = c->node->n_outputs;
    if (!br[0] || !br[1]) return cvt_fail(c, TOSAC_ERR_FORMAT, "then_branch or else_branch missing");
    if (br[0]->n_outputs != nout || br[1]->n_outputs != nout)
        return cvt_fail(c, TOSAC_ERR_FORMAT, "branches have %zu and %zu outputs for %zu node outputs", br[0]->n_outputs,
                        br[1]->n_outputs, nout);
    if (cv->is_const && cv->i) { /* known condition: the taken branch, inline */
        const tosac_onnx_graph *g = br[cv->i[0] ? 0 : 1];
        if ((s = cvt_subgraph(c, g)) != TOSAC_OK) return s;
        for (size_t k = 0; k < nout; k++)
            if ((s = bind_result(c, k, g->outputs[k].name)) != TOSAC_OK) return s;
        return TOSAC_OK;
    }
    if (nout == 0 || nout > MAX_OUTER) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "%zu outputs", nout);
    /* the outer values the branches use: tensors become COND_IF operands, constants are copied */
    cvt_val *outer[MAX_OUTER], *consts[MAX_OUTER];
    size_t n = 0, nc = 0;
    for (int b = 0; b < 2; b++)
        for (size_t k = 0; k < br[b]->n_outer_refs; k++) {
            cvt_val *v = cvt_lookup(c, br[b]->outer_refs[k]);
            if (!v) return cvt_fail(c, TOSAC_ERR_FORMAT, "value '%s' is not defined", br[b]->outer_refs[k]);
            if (v->dt == TOSAC_DTYPE_UNKNOWN)
                return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "value '%s' has element type %s, which is not supported", v->name,
                                tosac_onnx_elem_name(v->onnx_elem));
            bool seen = false;
            for (size_t j = 0; j < n; j++) seen |= outer[j] == v;
            for (size_t j = 0; j < nc; j++) seen |= consts[j] == v;
            if (seen) continue;
            if (n >= MAX_OUTER || nc >= MAX_OUTER) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "too many outer values");
            if (v->is_const) consts[nc++] = v;
            else outer[n++] = v;
        }
    tosac_value *cond = cvt_tensor(c, cv, &s);
    if (!cond) return s;
    tosac_value *outs[2][MAX_OUTER];
    char names[2][48];
    for (int b = 0; b < 2; b++) {
        snprintf(names[b], sizeof names[b], "onnx_if%u_%s", c->counter++, b ? "else" : "then");
        if ((s = branch_block(c, br[b], names[b], outer, n, consts, nc, outs[b])) != TOSAC_OK) return s;
    }
    tosac_value *ins[MAX_OUTER + 1], *res[MAX_OUTER];
    ins[0] = cond;
    for (size_t j = 0; j < n; j++) ins[1 + j] = outer[j]->v;
    for (size_t k = 0; k < nout; k++) {
        if (!same_sig(outs[0][k], outs[1][k]))
            return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "the branches give output %zu different types or shapes", k);
        if (!(res[k] = cvt_new(c, outs[0][k]->dtype, outs[0][k]->rank, outs[0][k]->shape))) return cvt_nomem(c);
    }
    tosac_node *nd = tosac_block_add_node(c->b, TOSAC_OP_COND_IF, (uint32_t)(n + 1), ins, (uint32_t)nout, res);
    if (!nd || tosac_node_set_location(nd, c->node->name) != TOSAC_OK ||
        tosac_node_set_str(nd, TOSAC_ATTR_COND_IF_then_graph, names[0]) != TOSAC_OK ||
        tosac_node_set_str(nd, TOSAC_ATTR_COND_IF_else_graph, names[1]) != TOSAC_OK)
        return cvt_nomem(c);
    for (size_t k = 0; k < nout; k++)
        if ((s = cvt_set_out(c, k, res[k])) != TOSAC_OK) return s;
    return TOSAC_OK;
}

/* CONCAT of parts along axis 0 in groups of at most 64 (TOSA level 8K's tensor list size). */
static tosac_value *concat0(cvt_ctx *c, tosac_value **parts, int64_t n)
{
    while (n > 1) {
        int64_t m = 0;
        for (int64_t i = 0; i < n; i += 64) {
            int64_t g = n - i < 64 ? n - i : 64;
            if (g == 1) {
                parts[m++] = parts[i];
                continue;
            }
            int64_t shape[TOSAC_MAX_RANK];
            memcpy(shape, parts[i]->shape, (size_t)parts[i]->rank * sizeof *shape);
            for (int64_t j = 1; j < g; j++) shape[0] += parts[i + j]->shape[0];
            tosac_value *out = cvt_new(c, parts[i]->dtype, parts[i]->rank, shape);
            tosac_node *nd = cvt_op(c, TOSAC_OP_CONCAT, (uint32_t)g, parts + i, out);
            if (!nd || tosac_node_set_int(nd, TOSAC_ATTR_CONCAT_axis, 0) != TOSAC_OK) return NULL;
            parts[m++] = out;
        }
        n = m;
    }
    return parts[0];
}

/* Scan output k: the per-iteration values stacked along a new axis 0. */
static tosac_status stack_scan(cvt_ctx *c, size_t k, cvt_val **vals, int64_t n)
{
    if (k >= c->node->n_outputs || !c->node->outputs[k][0]) return TOSAC_OK;
    if (n == 0) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "the loop runs no iteration: its scan outputs are empty");
    cvt_val *v0 = vals[0];
    if (v0->rank + 1 > TOSAC_MAX_RANK) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "rank too large");
    int64_t shape[TOSAC_MAX_RANK], one[TOSAC_MAX_RANK];
    shape[0] = n, one[0] = 1;
    for (int d = 0; d < v0->rank; d++) shape[d + 1] = one[d + 1] = v0->shape[d];
    bool host = true;
    for (int64_t t = 0; t < n; t++) {
        if (vals[t]->dt != v0->dt || vals[t]->numel != v0->numel || vals[t]->rank != v0->rank)
            return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "scan output %zu changes its type or shape between iterations", k);
        host &= vals[t]->is_const && (vals[t]->f || vals[t]->i);
    }
    int64_t m = v0->numel;
    if (host) {
        float *f = v0->dt == TOSAC_DTYPE_FP32 ? tosac_arena_alloc(&c->arena, (size_t)(n * m) * 4 + 1) : NULL;
        int64_t *iv = v0->dt != TOSAC_DTYPE_FP32 ? tosac_arena_alloc(&c->arena, (size_t)(n * m) * 8 + 1) : NULL;
        if (!f && !iv) return cvt_nomem(c);
        for (int64_t t = 0; t < n; t++) {
            if (f) memcpy(f + t * m, vals[t]->f, (size_t)m * 4);
            else memcpy(iv + t * m, vals[t]->i, (size_t)m * 8);
        }
        return cvt_set_out_const(c, k, v0->dt, v0->rank + 1, shape, f, iv);
    }
    tosac_value **parts = tosac_arena_alloc(&c->arena, (size_t)n * sizeof *parts + 1);
    if (!parts) return cvt_nomem(c);
    tosac_status s = TOSAC_OK;
    for (int64_t t = 0; t < n; t++) {
        tosac_value *x = cvt_tensor(c, vals[t], &s);
        if (!x) return s;
        if (!(parts[t] = cvt_mk_reshape(c, x, v0->rank + 1, one))) return cvt_nomem(c);
    }
    tosac_value *y = concat0(c, parts, n);
    return cvt_set_out(c, k, n == 1 ? cvt_unary(c, TOSAC_OP_IDENTITY, y) : y);
}

/* A new block of the current region with one input per value of sig[0..n) (same type and shape). */
static tosac_block *state_block(cvt_ctx *c, tosac_value *const *sig, size_t n, tosac_value **in)
{
    char name[48];
    snprintf(name, sizeof name, "onnx_loop%u", c->counter++);
    tosac_block *blk = tosac_region_add_block(c->b->region, name);
    for (size_t j = 0; blk && j < n; j++) {
        snprintf(name, sizeof name, "onnx_t%u", c->counter++);
        in[j] = tosac_block_add_tensor(blk, name, sig[j]->dtype, sig[j]->rank, sig[j]->shape);
        if (!in[j] || tosac_block_add_input(blk, in[j]) != TOSAC_OK) return NULL;
    }
    return blk;
}

/* Value `name` standing for tensor t. */
static cvt_val *bind_tensor(cvt_ctx *c, const char *name, tosac_value *t)
{
    cvt_val tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.v = t;
    tmp.dt = t->dtype;
    tmp.rank = t->rank;
    for (int k = 0; k < t->rank; k++) tmp.shape[k] = t->shape[k];
    tmp.onnx_elem = t->dtype == TOSAC_DTYPE_FP32 ? TOSAC_ONNX_FLOAT : t->dtype == TOSAC_DTYPE_BOOL ? TOSAC_ONNX_BOOL
                                                                                                : TOSAC_ONNX_INT32;
    return cvt_alias(c, name, &tmp);
}

/* Loop whose trip count or condition is only known at run time, without scan outputs: a
   WHILE_LOOP over the state [iteration, trip count, condition, loop-carried values..., outer
   tensors the body reads...]; the cond block tests iteration < trip count and the condition, the
   body block is the ONNX body (iteration + 1, the rest passed through). */
static tosac_status loop_while(cvt_ctx *c, const tosac_onnx_graph *body, cvt_val *mv, cvt_val *cv, cvt_val **init,
                               size_t nv)
{
    tosac_status s = TOSAC_OK;
    cvt_val *outer[MAX_OUTER], *consts[MAX_OUTER];
    size_t n = 0, nc = 0;
    for (size_t k = 0; k < body->n_outer_refs; k++) {
        cvt_val *v = cvt_lookup(c, body->outer_refs[k]);
        if (!v) return cvt_fail(c, TOSAC_ERR_FORMAT, "value '%s' is not defined", body->outer_refs[k]);
        if (v->dt == TOSAC_DTYPE_UNKNOWN)
            return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "value '%s' has element type %s, which is not supported", v->name,
                            tosac_onnx_elem_name(v->onnx_elem));
        if (n >= MAX_OUTER || nc >= MAX_OUTER) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "too many outer values");
        if (v->is_const) consts[nc++] = v;
        else outer[n++] = v;
    }
    size_t ns = 3 + nv + n;
    if (ns > MAX_OUTER) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "too many loop values");
    tosac_value *st[MAX_OUTER], *cin[MAX_OUTER], *bin[MAX_OUTER], *res[MAX_OUTER];
    st[0] = cvt_const_scalar(c, TOSAC_DTYPE_INT32, 0, 0);
    st[1] = mv ? cvt_tensor(c, mv, &s) : cvt_const_scalar(c, TOSAC_DTYPE_INT32, 0, INT32_MAX);
    st[2] = !st[1] ? NULL : cv ? cvt_tensor(c, cv, &s) : cvt_const_scalar(c, TOSAC_DTYPE_BOOL, 0, 1);
    for (size_t j = 0; j < nv && st[2]; j++) st[3 + j] = cvt_tensor(c, init[j], &s);
    for (size_t j = 0; j < n; j++) st[3 + nv + j] = outer[j]->v;
    for (size_t j = 0; j < ns; j++)
        if (!st[j]) return s != TOSAC_OK ? s : cvt_nomem(c);
    if (cvt_numel(st[1]->rank, st[1]->shape) != 1 || cvt_numel(st[2]->rank, st[2]->shape) != 1)
        return cvt_fail(c, TOSAC_ERR_FORMAT, "the trip count and the condition must have one element");
    tosac_block *main_b = c->b, *cb = state_block(c, st, ns, cin), *bb = cb ? state_block(c, st, ns, bin) : NULL;
    if (!bb) return cvt_nomem(c);
    /* cond block: iteration < trip count && condition, one BOOL */
    c->b = cb;
    tosac_value *more = cvt_binary(c, TOSAC_OP_GREATER, cin[1], cin[0], TOSAC_DTYPE_BOOL);
    more = cvt_binary(c, TOSAC_OP_LOGICAL_AND, more, cin[2], TOSAC_DTYPE_BOOL);
    if (!more || tosac_block_add_output(cb, more) != TOSAC_OK) s = s != TOSAC_OK ? s : cvt_nomem(c);
    /* body block: the ONNX body on the block inputs (outer constants are materialised inside) */
    tosac_value *saved[MAX_OUTER], *saved_c[MAX_OUTER];
    for (size_t j = 0; j < n; j++) saved[j] = outer[j]->v, outer[j]->v = bin[3 + nv + j];
    for (size_t j = 0; j < nc; j++) saved_c[j] = consts[j]->v, consts[j]->v = NULL;
    c->b = bb;
    if (s == TOSAC_OK && (!bind_tensor(c, body->inputs[0].name, bin[0]) || !bind_tensor(c, body->inputs[1].name, bin[2])))
        s = cvt_nomem(c);
    for (size_t j = 0; j < nv && s == TOSAC_OK; j++)
        if (!bind_tensor(c, body->inputs[2 + j].name, bin[3 + j])) s = cvt_nomem(c);
    if (s == TOSAC_OK) s = cvt_subgraph(c, body);
    if (s == TOSAC_OK) {
        s = block_output(c, bb, cvt_binary(c, TOSAC_OP_ADD, bin[0], cvt_const_scalar(c, TOSAC_DTYPE_INT32, 0, 1),
                                           TOSAC_DTYPE_UNKNOWN));
        if (s == TOSAC_OK) s = block_output(c, bb, bin[1]);
    }
    for (size_t j = 0; j < 1 + nv && s == TOSAC_OK; j++) {
        cvt_val *v = cvt_lookup(c, body->outputs[j].name);
        tosac_value *t = v ? cvt_tensor(c, v, &s) : NULL;
        if (!v) s = cvt_fail(c, TOSAC_ERR_FORMAT, "body output '%s' is not produced", body->outputs[j].name);
        if (!t) break;
        tosac_value *want = st[2 + j];
        if (j == 0 && t->dtype == TOSAC_DTYPE_BOOL && cvt_numel(t->rank, t->shape) == 1)
            t = cvt_mk_reshape(c, t, want->rank, want->shape);
        if (!t || !same_sig(t, want)) {
            s = s != TOSAC_OK ? s : cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "loop value %zu changes its type or shape in the body", j);
            break;
        }
        s = block_output(c, bb, t);
    }
    for (size_t j = 0; j < n && s == TOSAC_OK; j++) s = block_output(c, bb, bin[3 + nv + j]);
    c->b = main_b;
    for (size_t j = 0; j < n; j++) outer[j]->v = saved[j];
    for (size_t j = 0; j < nc; j++) consts[j]->v = saved_c[j];
    if (s != TOSAC_OK) return s;
    for (size_t j = 0; j < ns; j++)
        if (!(res[j] = cvt_new(c, st[j]->dtype, st[j]->rank, st[j]->shape))) return cvt_nomem(c);
    tosac_node *nd = tosac_block_add_node(c->b, TOSAC_OP_WHILE_LOOP, (uint32_t)ns, st, (uint32_t)ns, res);
    if (!nd || tosac_node_set_location(nd, c->node->name) != TOSAC_OK ||
        tosac_node_set_str(nd, TOSAC_ATTR_WHILE_LOOP_cond_graph, cb->name) != TOSAC_OK ||
        tosac_node_set_str(nd, TOSAC_ATTR_WHILE_LOOP_body_graph, bb->name) != TOSAC_OK)
        return cvt_nomem(c);
    for (size_t j = 0; j < nv; j++)
        if ((s = cvt_set_out(c, j, res[3 + j])) != TOSAC_OK) return s;
    return TOSAC_OK;
}

/* Loop. With scan outputs, the trip count and the condition must be known at compile time (after
   each iteration's folding): the body is converted once per iteration with the iteration number,
   the condition and the loop-carried values bound to its inputs. Without, a WHILE_LOOP. */
tosac_status cvt_loop(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    const tosac_onnx_graph *body = graph_attr(c, "body");
    if (!body) return cvt_fail(c, TOSAC_ERR_FORMAT, "body missing");
    size_t nin = c->node->n_inputs, nv = nin >= 2 ? nin - 2 : 0, nout = c->node->n_outputs;
    if (nin < 2 || body->n_inputs != nv + 2 || body->n_outputs < nv + 1 || nout != body->n_outputs - 1 || nout < nv)
        return cvt_fail(c, TOSAC_ERR_FORMAT, "inputs and outputs do not match the body");
    size_t nscan = nout - nv;
    if (nv > MAX_OUTER || nscan > MAX_OUTER) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "too many loop values");
    cvt_val *mv = cvt_in(c, 0), *cv = cvt_in(c, 1);
    cvt_val *cur[MAX_OUTER + 1];
    for (size_t j = 0; j < nv; j++)
        if (!(cur[j] = cvt_in_req(c, 2 + j, &s))) return s;
    /* scan outputs grow with the iterations: static shapes need the trip count, and the unrolled
       loop; without them the loop stays a loop */
    if (nscan == 0) return loop_while(c, body, mv, cv, cur, nv);
    if (mv && (!mv->is_const || !mv->i || mv->numel != 1))
        return cvt_need_const(c, mv, "a constant trip count (the loop has scan outputs)");
    if (cv && (!cv->is_const || !cv->i || cv->numel != 1))
        return cvt_need_const(c, cv, "a constant condition (the loop has scan outputs)");
    int64_t trips = mv ? mv->i[0] : -1;
    bool cond = !cv || cv->i[0] != 0;
    cvt_val **scans = NULL;
    if (nscan) {
        scans = tosac_arena_alloc(&c->arena, nscan * MAX_UNROLL * sizeof *scans + 1);
        if (!scans) return cvt_nomem(c);
    }
    int64_t it = 0;
    for (; cond && (trips < 0 || it < trips); it++) {
        if (it >= MAX_UNROLL) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "more than %d iterations", MAX_UNROLL);
        int64_t itv = it, one = 1;
        if ((s = cvt_const_val(c, body->inputs[0].name, TOSAC_DTYPE_INT32, 0, NULL, NULL, &itv)) != TOSAC_OK ||
            (s = cvt_const_val(c, body->inputs[1].name, TOSAC_DTYPE_BOOL, 0, NULL, NULL, &one)) != TOSAC_OK)
            return s;
        for (size_t j = 0; j < nv; j++)
            if (!cvt_alias(c, body->inputs[2 + j].name, cur[j])) return cvt_nomem(c);
        if ((s = cvt_subgraph(c, body)) != TOSAC_OK) return s;
        cvt_val *co = cvt_lookup(c, body->outputs[0].name);
        if (!co || co->dt != TOSAC_DTYPE_BOOL || co->numel != 1)
            return cvt_fail(c, TOSAC_ERR_FORMAT, "the body's condition output is not one bool");
        if (!co->is_const || !co->i)
            return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "the loop condition is not known at compile time");
        cond = co->i[0] != 0;
        for (size_t j = 0; j < nv + nscan; j++) {
            cvt_val *v = cvt_lookup(c, body->outputs[1 + j].name);
            if (!v) return cvt_fail(c, TOSAC_ERR_FORMAT, "body output '%s' is not produced", body->outputs[1 + j].name);
            if (j < nv) cur[j] = v;
            else scans[(j - nv) * MAX_UNROLL + it] = v;
        }
    }
    for (size_t j = 0; j < nv; j++)
        if (c->node->outputs[j][0] && !cvt_alias(c, c->node->outputs[j], cur[j])) return cvt_nomem(c);
    for (size_t k = 0; k < nscan; k++)
        if ((s = stack_scan(c, nv + k, scans + k * MAX_UNROLL, it)) != TOSAC_OK) return s;
    return TOSAC_OK;
}
