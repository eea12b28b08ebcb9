/*
 * The NPU/CPU partitioner: places every operator with the target's rules (rules.c), then groups
 * the operators into segments by a topological stage number: an operator's stage is the lowest
 * one not below its same-side producers and above its other-side producers, with even stages on
 * the NPU and odd ones on the CPU. Segments are the stages in order, so every edge runs forward
 * and there is no cycle through a CPU segment; each segment is as large as its earliest start
 * allows. Placement and stages are repeated until nothing moves (operators only ever move to the
 * CPU, so this ends): a move can make a neighbour's RESCALE unfusable or a boundary tensor wide.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "ir/rewrite.h"
#include "target/target_internal.h"
#include "tosac/runtime.h"
#include "tosac/validate.h"

typedef struct part {
    place_ctx c;
    const tosac_target_info *t;
    int *rule;        /* by node: the rule that keeps it on the CPU */
    int32_t *stage;   /* by node */
    int32_t *seg_of;  /* by stage: segment index, -1 when empty */
    int32_t n_stages;
} part;

static bool is_const_node(const tosac_node *n) { return n->op == TOSAC_OP_CONST || n->op == TOSAC_OP_CONST_SHAPE; }

/* Not an int8/int16 tensor: it cannot be an NPU segment's input or output. */
static bool wide(const tosac_value *v) { return v->dtype != TOSAC_DTYPE_INT8 && v->dtype != TOSAC_DTYPE_INT16; }

static void compute_stages(part *p)
{
    const tosac_block *b = p->c.b;
    p->n_stages = 0;
    for (uint32_t k = 0; k < b->n_nodes; k++) {
        const tosac_node *n = b->nodes[k];
        if (is_const_node(n)) {
            p->stage[k] = -1;
            continue;
        }
        int side = p->c.where[k] == 1 ? 0 : 1;
        int32_t lo = side;
        for (uint32_t j = 0; j < n->n_inputs; j++) {
            const tosac_node *q = place_producer(&p->c, n->inputs[j]);
            if (!q || is_const_node(q)) continue;
            int32_t need = p->stage[q->index] + (p->c.where[q->index] != p->c.where[k]);
            if (need > lo) lo = need;
        }
        if ((lo & 1) != side) lo++;
        p->stage[k] = lo;
        if (lo + 1 > p->n_stages) p->n_stages = lo + 1;
    }
    /* an operator with a wide (int32, int48, bool) result sinks into the later stage of its
       readers when they all share one on its side: the wide tensor then stays inside a segment */
    for (uint32_t k = b->n_nodes; k-- > 0;) {
        const tosac_node *n = b->nodes[k];
        if (p->stage[k] < 0 || n->n_outputs != 1 || !wide(n->outputs[0]) || p->c.is_output[n->outputs[0]->index])
            continue;
        int32_t to = -1;
        bool ok = true;
        const tosac_value *v = n->outputs[0];
        for (uint32_t r = p->c.reader_off[v->index]; r < p->c.reader_off[v->index + 1] && ok; r++) {
            int32_t rs = p->stage[p->c.readers[r]->index];
            ok = (to < 0 || rs == to) && p->c.where[p->c.readers[r]->index] == p->c.where[k];
            to = rs;
        }
        if (ok && to > p->stage[k]) p->stage[k] = to;
    }
}

/* A wide tensor still crossing between stages: the NPU operators on either end go to the CPU. */
static bool move_wide_cuts(part *p)
{
    const tosac_block *b = p->c.b;
    bool moved = false;
    for (uint32_t k = 0; k < b->n_nodes; k++) {
        const tosac_node *n = b->nodes[k];
        for (uint32_t j = 0; j < n->n_inputs && p->stage[k] >= 0; j++) {
            const tosac_value *v = n->inputs[j];
            const tosac_node *q = place_producer(&p->c, v);
            if (v->is_shape || !wide(v) || !q || is_const_node(q) || p->stage[q->index] == p->stage[k]) continue;
            const uint32_t ends[2] = {k, q->index};
            for (int e = 0; e < 2; e++)
                if (p->c.where[ends[e]] == 1) {
                    p->c.where[ends[e]] = 0;
                    p->rule[ends[e]] = RULE_BOUNDARY_TYPE;
                    moved = true;
                }
        }
    }
    return moved;
}

/* An NPU stage holding only RESHAPE/IDENTITY is glue: its operators go to the CPU. */
static bool move_glue(part *p)
{
    const tosac_block *b = p->c.b;
    bool moved = false;
    for (int32_t s = 0; s < p->n_stages; s += 2) {
        bool any = false, glue = true;
        for (uint32_t k = 0; k < b->n_nodes; k++)
            if (p->stage[k] == s) {
                any = true;
                glue &= b->nodes[k]->op == TOSAC_OP_RESHAPE || b->nodes[k]->op == TOSAC_OP_IDENTITY;
            }
        if (!any || !glue) continue;
        for (uint32_t k = 0; k < b->n_nodes; k++)
            if (p->stage[k] == s) {
                p->c.where[k] = 0;
                p->rule[k] = RULE_GLUE;
                moved = true;
            }
    }
    return moved;
}

static void place(part *p)
{
    const tosac_block *b = p->c.b;
    for (uint32_t k = 0; k < b->n_nodes; k++) p->rule[k] = TOSAC_RULE_NONE;
    if (!p->c.set) {
        for (uint32_t k = 0; k < b->n_nodes; k++)
            if (p->c.where[k] == 1) p->c.where[k] = 0;
        compute_stages(p);
        return;
    }
    bool first = true, moved = true;
    while (moved) {
        moved = false;
        for (uint32_t k = 0; k < b->n_nodes; k++) {
            if (p->c.where[k] != 1) continue;
            int r = target_rule_check(&p->c, b->nodes[k], !first);
            if (r != TOSAC_RULE_NONE) {
                p->c.where[k] = 0;
                p->rule[k] = r;
                moved = true;
            }
        }
        first = false;
        compute_stages(p);
        if (!moved) moved = move_wide_cuts(p);
        if (!moved) moved = move_glue(p);
    }
}

/* ---- segment graphs -------------------------------------------------------------------------- */

/* The value `v` of the source graph in segment graph nb: created on first use (a constant with
   its CONST / CONST_SHAPE operator, anything else as a plain tensor). */
static tosac_value *seg_value(const place_ctx *c, tosac_block *nb, const tosac_value *v)
{
    tosac_value *x = tosac_block_find(nb, v->name);
    if (x) return x;
    if (v->is_shape) {
        uint32_t cnt = (uint32_t)v->shape[0];
        int64_t *vals = calloc(cnt ? cnt : 1, sizeof *vals);
        if (!vals) return NULL;
        if (v->data) memcpy(vals, v->data, (size_t)cnt * 8 < v->data_len ? (size_t)cnt * 8 : v->data_len);
        x = tosac_block_add_const_shape(nb, v->name, vals, cnt);
        free(vals);
        return x;
    }
    const tosac_node *p = place_producer(c, v);
    if (p && p->op == TOSAC_OP_CONST) return tosac_block_add_const(nb, v->name, v->dtype, v->rank, v->shape, v->data, v->data_len);
    return tosac_block_add_tensor(nb, v->name, v->dtype, v->rank, v->shape);
}

static bool fill_tensor(tosac_artifact *a, tosac_artifact_tensor *t, const tosac_value *v)
{
    t->name = tosac_arena_strdup(&a->arena, v->name);
    t->dtype = v->dtype;
    t->rank = v->rank;
    for (int32_t k = 0; k < v->rank && k < 6; k++) t->shape[k] = v->shape[k];
    t->from_segment = -1;
    t->io = t->dtype == TOSAC_DTYPE_INT16 ? TOSAC_QUANT_IO_INT16 : TOSAC_QUANT_IO_INT8;
    return t->name != NULL;
}

/* The model I/O q-params of the quantizer's sidecar for tensor `name`. */
static void io_q(const tosac_quant_iomap *io, bool output, tosac_artifact_tensor *t)
{
    uint32_t n = !io ? 0 : output ? io->n_outputs : io->n_inputs;
    const tosac_quant_io *l = !io ? NULL : output ? io->outputs : io->inputs;
    for (uint32_t k = 0; k < n; k++)
        if (!strcmp(l[k].name, t->name)) {
            t->has_q = t->has_zp = true;
            t->q = l[k].q;
            t->io = l[k].type;
        }
}

/* Segment boundary tensors keep the q-params of the model I/O they are (cut tensors inside the
   model carry their zero point only when known: the integer program does not record scales). */
static void boundary_q(const tosac_artifact *a, tosac_artifact_tensor *t)
{
    for (uint32_t k = 0; k < a->n_inputs + a->n_outputs; k++) {
        const tosac_artifact_tensor *m = k < a->n_inputs ? &a->inputs[k] : &a->outputs[k - a->n_inputs];
        if (m->has_q && !strcmp(m->name, t->name)) {
            t->has_q = t->has_zp = true;
            t->q = m->q;
            t->io = m->io;
        }
    }
}

/* What the program and the model I/O tell of a boundary tensor's q-params (qinfer.c). */
static void apply_q(tosac_artifact_tensor *t, const target_q *tq, const tosac_value *v)
{
    if (t->has_q || !tq || v->index >= v->block->n_tensors) return;
    const target_q *e = &tq[v->index];
    t->has_zp = e->has_zp;
    t->has_q = e->has_zp && e->has_scale;
    t->q = e->q;
}

static tosac_status build_segments(part *p, const tosac_graph *g, const tosac_quant_iomap *io, const target_q *tq,
                                   tosac_artifact *a, tosac_diag *d)
{
    const tosac_block *b = p->c.b;
    tosac_arena *ar = &a->arena;
    p->seg_of = malloc((size_t)(p->n_stages ? p->n_stages : 1) * sizeof *p->seg_of);
    if (!p->seg_of) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    uint32_t nseg = 0;
    for (int32_t s = 0; s < p->n_stages; s++) {
        bool any = false;
        for (uint32_t k = 0; k < b->n_nodes && !any; k++) any = p->stage[k] == s;
        p->seg_of[s] = any ? (int32_t)nseg++ : -1;
    }
    a->n_segments = nseg;
    a->segs = tosac_arena_alloc(ar, (nseg ? nseg : 1) * sizeof *a->segs);
    a->n_inputs = b->n_inputs;
    a->n_outputs = b->n_outputs;
    a->inputs = tosac_arena_alloc(ar, (b->n_inputs ? b->n_inputs : 1) * sizeof *a->inputs);
    a->outputs = tosac_arena_alloc(ar, (b->n_outputs ? b->n_outputs : 1) * sizeof *a->outputs);
    if (!a->segs || !a->inputs || !a->outputs) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    for (uint32_t k = 0; k < b->n_inputs; k++) {
        if (!fill_tensor(a, &a->inputs[k], b->inputs[k])) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
        io_q(io, false, &a->inputs[k]);
        apply_q(&a->inputs[k], tq, b->inputs[k]);
    }
    for (uint32_t k = 0; k < b->n_outputs; k++) {
        if (!fill_tensor(a, &a->outputs[k], b->outputs[k])) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
        io_q(io, true, &a->outputs[k]);
        apply_q(&a->outputs[k], tq, b->outputs[k]);
    }
    /* segment of each tensor's producer (-1: model input or constant) */
    for (uint32_t si = 0; si < nseg; si++) {
        tosac_artifact_segment *sg = &a->segs[si];
        memset(sg, 0, sizeof *sg);
        int32_t stage = 0;
        while (p->seg_of[stage] != (int32_t)si) stage++;
        sg->npu = (stage & 1) == 0;
        char file[64];
        snprintf(file, sizeof file, "segment_%u_%s.tosa", si, sg->npu ? "npu" : "cpu");
        sg->file = tosac_arena_strdup(ar, file);
        tosac_graph *ng = tosac_graph_create();
        if (!ng || !sg->file) {
            tosac_graph_destroy(ng);
            return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
        }
        sg->graph = ng;
        tosac_graph_set_version(ng, g->ver_major, g->ver_minor, g->ver_patch, g->ver_draft);
        tosac_region *rg = tosac_graph_add_region(ng, "main");
        tosac_block *nb = rg ? tosac_region_add_block(rg, "main") : NULL;
        if (!nb) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
        /* inputs: tensors read here and made elsewhere, in the order of first use */
        tosac_value **ins = NULL, **outs = NULL;
        uint32_t n_in = 0, n_out = 0;
        for (uint32_t k = 0; k < b->n_nodes; k++) {
            const tosac_node *n = b->nodes[k];
            if (p->stage[k] != stage) continue;
            for (uint32_t j = 0; j < n->n_inputs; j++) {
                const tosac_value *v = n->inputs[j];
                const tosac_node *q = place_producer(&p->c, v);
                if (v->is_shape || (q && is_const_node(q)) || (q && p->stage[q->index] == stage)) continue;
                bool seen = false;
                for (uint32_t i = 0; i < n_in && !seen; i++) seen = !strcmp(ins[i]->name, v->name);
                if (seen) continue;
                tosac_value **t = realloc(ins, (n_in + 1) * sizeof *t);
                if (!t) goto oom;
                ins = t;
                ins[n_in++] = (tosac_value *)v;
            }
        }
        /* outputs: tensors made here and read elsewhere or by the model */
        for (uint32_t k = 0; k < b->n_nodes; k++) {
            const tosac_node *n = b->nodes[k];
            if (p->stage[k] != stage) continue;
            for (uint32_t j = 0; j < n->n_outputs; j++) {
                const tosac_value *v = n->outputs[j];
                bool cut = p->c.is_output[v->index];
                for (uint32_t r = p->c.reader_off[v->index]; r < p->c.reader_off[v->index + 1] && !cut; r++)
                    cut = p->stage[p->c.readers[r]->index] != stage;
                if (!cut) continue;
                tosac_value **t = realloc(outs, (n_out + 1) * sizeof *t);
                if (!t) goto oom;
                outs = t;
                outs[n_out++] = (tosac_value *)v;
            }
        }
        sg->n_inputs = n_in;
        sg->n_outputs = n_out;
        sg->inputs = tosac_arena_alloc(ar, (n_in ? n_in : 1) * sizeof *sg->inputs);
        sg->outputs = tosac_arena_alloc(ar, (n_out ? n_out : 1) * sizeof *sg->outputs);
        if (!sg->inputs || !sg->outputs) goto oom;
        for (uint32_t i = 0; i < n_in; i++) {
            tosac_value *x = seg_value(&p->c, nb, ins[i]);
            if (!x || tosac_block_add_input(nb, x) != TOSAC_OK || !fill_tensor(a, &sg->inputs[i], ins[i])) goto oom;
            const tosac_node *q = place_producer(&p->c, ins[i]);
            tosac_artifact_tensor *t = &sg->inputs[i];
            if (q) { /* an earlier segment's output */
                t->from_segment = p->seg_of[p->stage[q->index]];
                const tosac_artifact_segment *src = &a->segs[t->from_segment];
                for (uint32_t o = 0; o < src->n_outputs; o++)
                    if (!strcmp(src->outputs[o].name, t->name)) t->from_index = o;
            } else {
                for (uint32_t m = 0; m < b->n_inputs; m++)
                    if (b->inputs[m] == ins[i]) t->from_index = m;
            }
            boundary_q(a, t);
            apply_q(t, tq, ins[i]);
        }
        for (uint32_t k = 0; k < b->n_nodes; k++) {
            const tosac_node *n = b->nodes[k];
            if (p->stage[k] != stage) continue;
            tosac_value *vi[64], *vo[8];
            if (n->n_inputs > 64 || n->n_outputs > 8) {
                free(ins);
                free(outs);
                return tosac_diag_add(d, TOSAC_ERR_UNSUPPORTED, "operator %u (%s): too many operands to partition", k,
                                      tosac_op_name(n->op));
            }
            for (uint32_t j = 0; j < n->n_inputs; j++)
                if (!(vi[j] = seg_value(&p->c, nb, n->inputs[j]))) goto oom;
            for (uint32_t j = 0; j < n->n_outputs; j++)
                if (!(vo[j] = seg_value(&p->c, nb, n->outputs[j]))) goto oom;
            tosac_node *m = tosac_block_add_node(nb, (tosac_op)n->op, n->n_inputs, vi, n->n_outputs, vo);
            if (!m || ir_copy_attrs(m, n) != TOSAC_OK || (n->location && tosac_node_set_location(m, n->location) != TOSAC_OK))
                goto oom;
        }
        for (uint32_t o = 0; o < n_out; o++) {
            tosac_value *x = tosac_block_find(nb, outs[o]->name);
            if (!x || tosac_block_add_output(nb, x) != TOSAC_OK || !fill_tensor(a, &sg->outputs[o], outs[o])) goto oom;
            boundary_q(a, &sg->outputs[o]);
            apply_q(&sg->outputs[o], tq, outs[o]);
            for (uint32_t m = 0; m < b->n_outputs; m++)
                if (b->outputs[m] == outs[o]) {
                    a->outputs[m].from_segment = (int32_t)si;
                    a->outputs[m].from_index = o;
                }
        }
        tosac_graph_link(ng);
        for (uint32_t k = 0; k < nb->n_nodes; k++) sg->n_ops += !is_const_node(nb->nodes[k]);
        free(ins);
        free(outs);
        continue;
    oom:
        free(ins);
        free(outs);
        return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    }
    for (uint32_t m = 0; m < b->n_outputs; m++)
        if (a->outputs[m].from_segment < 0)
            return tosac_diag_add(d, TOSAC_ERR_UNSUPPORTED,
                                  "model output '%s' is a model input or a constant: nothing to partition",
                                  a->outputs[m].name);
    return TOSAC_OK;
}

static tosac_status record_ops(part *p, tosac_artifact *a, tosac_diag *d)
{
    const tosac_block *b = p->c.b;
    a->n_ops = b->n_nodes;
    a->ops = tosac_arena_alloc(&a->arena, (b->n_nodes ? b->n_nodes : 1) * sizeof *a->ops);
    if (!a->ops) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    for (uint32_t k = 0; k < b->n_nodes; k++) {
        const tosac_node *n = b->nodes[k];
        tosac_artifact_op *o = &a->ops[k];
        o->index = k;
        o->op = n->op;
        o->output = n->n_outputs ? tosac_arena_strdup(&a->arena, n->outputs[0]->name) : "";
        o->onnx_node = n->location ? tosac_arena_strdup(&a->arena, n->location) : NULL;
        o->segment = p->stage[k] < 0 ? -1 : p->seg_of[p->stage[k]];
        o->npu = p->c.where[k] == 1;
        o->rule = p->rule[k];
        if (o->npu) o->note = target_op_note(&p->c, n);
        if (!o->output) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    }
    return TOSAC_OK;
}

tosac_status tosac_artifact_partition(const tosac_graph *g, const tosac_quant_iomap *io, const tosac_target_info *t,
                                      tosac_artifact **out, tosac_diag *d)
{
    if (!g || !t || !out) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_artifact_partition: NULL argument");
    if (g->n_regions != 1 || g->regions[0]->n_blocks != 1)
        return tosac_diag_add(d, TOSAC_ERR_UNSUPPORTED,
                              "partitioning a program with control-flow blocks is not supported (%u regions)",
                              g->n_regions);
    const tosac_block *b = g->regions[0]->blocks[0];
    for (uint32_t k = 0; k < b->n_tensors; k++)
        if (b->tensors[k]->variable)
            return tosac_diag_add(d, TOSAC_ERR_UNSUPPORTED, "partitioning a program with variables is not supported ('%s')",
                                  b->tensors[k]->name);
    part p;
    memset(&p, 0, sizeof p);
    p.t = t;
    tosac_artifact *a = artifact_new();
    tosac_status s = TOSAC_OK;
    if (!a || !place_ctx_init(&p.c, b, target_rule_bits(t->rules))) s = tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    if (s == TOSAC_OK) {
        a->target = *t;
        /* a TOSA spec string target names the caller's string: keep a copy */
        a->target.name = tosac_arena_strdup(&a->arena, t->name);
        a->target.tosa_spec = tosac_arena_strdup(&a->arena, t->tosa_spec ? t->tosa_spec : t->name);
        if (!a->target.name || !a->target.tosa_spec) s = tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    }
    if (s == TOSAC_OK) {
        p.rule = malloc((b->n_nodes ? b->n_nodes : 1) * sizeof *p.rule);
        p.stage = malloc((b->n_nodes ? b->n_nodes : 1) * sizeof *p.stage);
        if (!p.rule || !p.stage) s = tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    }
    target_q *tq = NULL;
    if (s == TOSAC_OK) {
        place(&p);
        tq = malloc((b->n_tensors ? b->n_tensors : 1) * sizeof *tq);
        if (tq) target_infer_q(&p.c, io, tq);
        s = build_segments(&p, g, io, tq, a, d);
    }
    free(tq);
    if (s == TOSAC_OK) s = record_ops(&p, a, d);
    if (s == TOSAC_OK) s = artifact_measure(a, d);
    if (s == TOSAC_OK) {
        tosac_diag *vd = tosac_diag_create();
        if (tosac_artifact_validate(a, vd) != TOSAC_OK) {
            for (size_t k = 0; k < tosac_diag_count(vd); k++) tosac_diag_add(d, TOSAC_ERR_INTERNAL, "%s", tosac_diag_message(vd, k, NULL));
            s = tosac_diag_add(d, TOSAC_ERR_INTERNAL, "a partitioned segment does not validate (a tosac bug)");
        }
        tosac_diag_destroy(vd);
    }
    place_ctx_free(&p.c);
    free(p.rule);
    free(p.stage);
    free(p.seg_of);
    if (s != TOSAC_OK) {
        tosac_artifact_destroy(a);
        return s;
    }
    *out = a;
    return TOSAC_OK;
}

/* ---- validation ------------------------------------------------------------------------------ */

static bool same_tensor(const tosac_artifact_tensor *x, const tosac_artifact_tensor *y)
{
    if (x->dtype != y->dtype || x->rank != y->rank) return false;
    for (int32_t k = 0; k < x->rank && k < 6; k++)
        if (x->shape[k] != y->shape[k]) return false;
    return true;
}

tosac_status tosac_artifact_validate(const tosac_artifact *a, tosac_diag *d)
{
    tosac_status s = TOSAC_OK;
    const tosac_target_info *t = &a->target;
    for (uint32_t si = 0; si < a->n_segments; si++) {
        const tosac_artifact_segment *sg = &a->segs[si];
        tosac_validate_opts vo = tosac_validate_opts_default();
        if (sg->npu) {
            vo.profiles = TOSAC_PROFILE_INT;
            vo.extensions = t->extensions;
            vo.level = TOSAC_LEVEL_8K;
        } else {
            vo.profiles = TOSAC_PROFILE_INT | TOSAC_PROFILE_FP;
            vo.extensions = TOSAC_EXT_ALL & ~(uint32_t)TOSAC_EXT_DYNAMIC;
            vo.level = TOSAC_LEVEL_NONE;
        }
        tosac_diag *vd = tosac_diag_create();
        if (tosac_validate(sg->graph, &vo, vd) != TOSAC_OK) {
            for (size_t k = 0; k < tosac_diag_count(vd); k++)
                tosac_diag_add(d, TOSAC_ERR_TOSA_ERROR, "%s: %s", sg->file, tosac_diag_message(vd, k, NULL));
            s = tosac_diag_add(d, TOSAC_ERR_TOSA_ERROR, "%s: not a valid %s program", sg->file,
                               sg->npu ? "TOSA-1.0 PRO-INT level 8K" : "TOSA-1.0");
        }
        tosac_diag_destroy(vd);
        const tosac_block *b = sg->graph->regions[0]->blocks[0];
        if (sg->npu) { /* every operator must stay on the NPU when the segment is judged alone */
            place_ctx c;
            if (!place_ctx_init(&c, b, target_rule_bits(t->rules))) {
                place_ctx_free(&c);
                return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
            }
            if (!c.set) s = tosac_diag_add(d, TOSAC_ERR_TOSA_ERROR, "%s: an NPU segment for a target without an NPU", sg->file);
            for (uint32_t k = 0; k < b->n_nodes && c.set; k++) {
                if (c.where[k] != 1) continue;
                int r = target_rule_check(&c, b->nodes[k], false);
                if (r != TOSAC_RULE_NONE)
                    s = tosac_diag_add(d, TOSAC_ERR_TOSA_ERROR, "%s: operator %u (%s, output '%s') breaks rule %s: %s",
                                       sg->file, k, tosac_op_name(b->nodes[k]->op),
                                       b->nodes[k]->n_outputs ? b->nodes[k]->outputs[0]->name : "", tosac_rule_name(r),
                                       tosac_rule_text(r));
            }
            for (uint32_t k = 0; k < b->n_inputs + b->n_outputs; k++) {
                const tosac_value *v = k < b->n_inputs ? b->inputs[k] : b->outputs[k - b->n_inputs];
                if (v->dtype != TOSAC_DTYPE_INT8 && v->dtype != TOSAC_DTYPE_INT16)
                    s = tosac_diag_add(d, TOSAC_ERR_TOSA_ERROR, "%s: boundary tensor '%s' is %s, not int8/int16",
                                       sg->file, v->name, tosac_dtype_name(v->dtype));
            }
            place_ctx_free(&c);
        }
        if (b->n_inputs != sg->n_inputs || b->n_outputs != sg->n_outputs)
            s = tosac_diag_add(d, TOSAC_ERR_TOSA_ERROR, "%s: %u inputs and %u outputs, the manifest says %u and %u",
                               sg->file, b->n_inputs, b->n_outputs, sg->n_inputs, sg->n_outputs);
        for (uint32_t k = 0; k < sg->n_inputs; k++) {
            const tosac_artifact_tensor *x = &sg->inputs[k], *src = NULL;
            if (x->from_segment < 0) src = x->from_index < a->n_inputs ? &a->inputs[x->from_index] : NULL;
            else if ((uint32_t)x->from_segment < si && x->from_index < a->segs[x->from_segment].n_outputs)
                src = &a->segs[x->from_segment].outputs[x->from_index];
            if (!src || !same_tensor(x, src))
                s = tosac_diag_add(d, TOSAC_ERR_TOSA_ERROR,
                                   "%s: input '%s' does not come from a model input or an earlier segment output of "
                                   "its type and shape",
                                   sg->file, x->name);
        }
    }
    for (uint32_t k = 0; k < a->n_outputs; k++) {
        const tosac_artifact_tensor *o = &a->outputs[k];
        if (o->from_segment < 0 || (uint32_t)o->from_segment >= a->n_segments ||
            o->from_index >= a->segs[o->from_segment].n_outputs ||
            !same_tensor(o, &a->segs[o->from_segment].outputs[o->from_index]))
            s = tosac_diag_add(d, TOSAC_ERR_TOSA_ERROR, "model output '%s' does not come from a segment output of its type and shape",
                               o->name);
    }
    return s;
}
