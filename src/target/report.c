/* The partition report: text, JSON and a DOT picture of where every operator runs and why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "target/target_internal.h"

static const char *rules_name(tosac_rule_set r) { return r == TOSAC_RULES_U55 ? "U55" : r == TOSAC_RULES_U85 ? "U85" : "no NPU"; }
static bool is_const_op(uint32_t op) { return op == TOSAC_OP_CONST || op == TOSAC_OP_CONST_SHAPE; }

/* Operators of segment seg whose note begins with `prefix`. */
static uint32_t noted(const tosac_artifact *a, uint32_t seg, const char *prefix)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < a->n_ops; k++)
        n += a->ops[k].segment == (int32_t)seg && a->ops[k].note && !strncmp(a->ops[k].note, prefix, strlen(prefix));
    return n;
}

static uint32_t standalone_rescales(const tosac_artifact *a, uint32_t seg) { return noted(a, seg, "standalone"); }
static uint32_t emulated_tables(const tosac_artifact *a, uint32_t seg) { return noted(a, seg, TABLE16_EMULATED); }

/* The sum of Vela's estimates over the NPU segments that have one (*n of them). */
static void estimate_total(const tosac_artifact *a, uint32_t *n, double *ms, uint64_t *cycles)
{
    for (uint32_t s = 0; s < a->n_segments; s++)
        if (a->segs[s].has_estimate) ++*n, *ms += a->segs[s].est_ms, *cycles += a->segs[s].est_cycles;
}

/* ", "KEY_ms": X, "KEY_cycles": Y" of an estimate, or nulls. */
static void json_estimate(tosac_strbuf *sb, const char *key, bool has, double ms, uint64_t cycles)
{
    if (has) tosac_strbuf_appendf(sb, ", \"%s_ms\": %.6f, \"%s_cycles\": %llu", key, ms, key, (unsigned long long)cycles);
    else tosac_strbuf_appendf(sb, ", \"%s_ms\": null, \"%s_cycles\": null", key, key);
}

static void verdict(tosac_strbuf *sb, const tosac_artifact *a, uint32_t seg)
{
    const tosac_artifact_segment *sg = &a->segs[seg];
    if (!sg->npu) {
        tosac_strbuf_append(sb, "runs on the CPU (tosac runtime)");
        return;
    }
    tosac_strbuf_append(sb, "Vela will accept it: every operator NPU-legal (PRO-INT level 8K, int8/int16 boundary tensors)");
    uint32_t n = standalone_rescales(a, seg);
    if (n) tosac_strbuf_appendf(sb, "; %u standalone RESCALE%s cost NPU time", n, n == 1 ? "" : "s");
    if ((n = emulated_tables(a, seg)))
        tosac_strbuf_appendf(sb, "; %u int16 TABLE%s emulated by 3 LUTs, 2 MULs and an ADD each", n, n == 1 ? "" : "s");
}

/* Distinct ONNX node names in first-use order (indices into a->ops). */
static uint32_t *onnx_nodes(const tosac_artifact *a, uint32_t *n)
{
    uint32_t *first = malloc((a->n_ops ? a->n_ops : 1) * sizeof *first);
    *n = 0;
    for (uint32_t k = 0; first && k < a->n_ops; k++) {
        const char *loc = a->ops[k].onnx_node;
        if (!loc || is_const_op(a->ops[k].op)) continue;
        bool seen = false;
        for (uint32_t j = 0; j < *n && !seen; j++) seen = !strcmp(a->ops[first[j]].onnx_node, loc);
        if (!seen) first[(*n)++] = k;
    }
    return first;
}

/* Where an ONNX node runs: "npu", "cpu" or "npu+cpu"; *rule: the first rule of its CPU operators. */
static const char *onnx_where(const tosac_artifact *a, const char *loc, int *rule)
{
    bool npu = false, cpu = false;
    *rule = TOSAC_RULE_NONE;
    for (uint32_t k = 0; k < a->n_ops; k++) {
        const tosac_artifact_op *o = &a->ops[k];
        if (is_const_op(o->op) || !o->onnx_node || strcmp(o->onnx_node, loc)) continue;
        if (o->npu) npu = true;
        else {
            cpu = true;
            if (*rule == TOSAC_RULE_NONE) *rule = o->rule;
        }
    }
    return npu && cpu ? "npu+cpu" : npu ? "npu" : "cpu";
}

/* "      CONV2D 52, RESCALE 60, ..." for the operators of a segment, in first-use order. */
static void op_counts(tosac_strbuf *sb, const tosac_artifact_segment *sg)
{
    const tosac_block *b = sg->graph->regions[0]->blocks[0];
    uint32_t count[TOSAC_OP_COUNT] = {0};
    for (uint32_t k = 0; k < b->n_nodes; k++)
        if (b->nodes[k]->op < TOSAC_OP_COUNT && !is_const_op(b->nodes[k]->op)) count[b->nodes[k]->op]++;
    bool first = true;
    for (uint32_t k = 0; k < b->n_nodes; k++) {
        uint32_t op = b->nodes[k]->op;
        if (op >= TOSAC_OP_COUNT || !count[op]) continue;
        tosac_strbuf_appendf(sb, "%s%s %u", first ? "      " : ", ", tosac_op_name(op), count[op]);
        count[op] = 0;
        first = false;
    }
    if (!first) tosac_strbuf_append(sb, "\n");
}

char *tosac_artifact_report_text(const tosac_artifact *a)
{
    const tosac_target_info *t = &a->target;
    tosac_strbuf sb;
    tosac_strbuf_init(&sb);
    tosac_strbuf_appendf(&sb, "target %s: %s; %s rules", t->name, t->tosa_spec, rules_name(t->rules));
    if (t->macs)
        tosac_strbuf_appendf(&sb, ", %u MACs, Vela --accelerator-config=%s --system-config=%s --memory-mode=%s", t->macs,
                             t->accelerator, t->system_config, t->memory_mode);
    tosac_strbuf_append(&sb, "\n");
    uint32_t npu = 0, cpu = 0, consts = 0;
    for (uint32_t k = 0; k < a->n_ops; k++) {
        if (is_const_op(a->ops[k].op)) consts++;
        else if (a->ops[k].npu) npu++;
        else cpu++;
    }
    if (a->n_ops)
        tosac_strbuf_appendf(&sb, "operators: %u on the NPU (%.1f%%), %u on the CPU, %u constants\n", npu,
                             npu + cpu ? 100.0 * npu / (npu + cpu) : 0.0, cpu, consts);
    uint32_t nn = 0, nc = 0, ne = 0;
    double ms = 0;
    uint64_t cycles = 0;
    for (uint32_t s = 0; s < a->n_segments; s++) nn += a->segs[s].npu, nc += !a->segs[s].npu;
    estimate_total(a, &ne, &ms, &cycles);
    tosac_strbuf_appendf(&sb, "segments: %u (%u NPU, %u CPU)\n", a->n_segments, nn, nc);
    if (ne)
        tosac_strbuf_appendf(&sb, "Vela's estimate: %.3f ms, %llu cycles for %u of %u NPU segment%s (not the CPU segments)\n", ms,
                             (unsigned long long)cycles, ne, nn, nn == 1 ? "" : "s");
    for (uint32_t s = 0; s < a->n_segments; s++) {
        const tosac_artifact_segment *sg = &a->segs[s];
        tosac_strbuf_appendf(&sb, "  %u %s %-22s %5u operators  %2u in  %2u out  arena %llu B  constants %llu B\n", s,
                             sg->npu ? "NPU" : "CPU", sg->file, sg->n_ops, sg->n_inputs, sg->n_outputs,
                             (unsigned long long)sg->arena_bytes, (unsigned long long)sg->const_bytes);
        tosac_strbuf_append(&sb, "      ");
        verdict(&sb, a, s);
        tosac_strbuf_append(&sb, "\n");
        if (sg->has_estimate)
            tosac_strbuf_appendf(&sb, "      Vela's estimate: %.3f ms, %llu cycles\n", sg->est_ms,
                                 (unsigned long long)sg->est_cycles);
        op_counts(&sb, sg);
        for (uint32_t k = 0; k < sg->n_inputs; k++) {
            const tosac_artifact_tensor *x = &sg->inputs[k];
            if (x->from_segment < 0) tosac_strbuf_appendf(&sb, "      in  %s <- model input %u\n", x->name, x->from_index);
            else tosac_strbuf_appendf(&sb, "      in  %s <- segment %d output %u\n", x->name, x->from_segment, x->from_index);
        }
    }
    if (cpu) {
        tosac_strbuf_append(&sb, "kept off the NPU:\n");
        for (uint32_t k = 0; k < a->n_ops; k++) {
            const tosac_artifact_op *o = &a->ops[k];
            if (o->npu || is_const_op(o->op)) continue;
            tosac_strbuf_appendf(&sb, "  op %u %s -> %s", o->index, tosac_op_name(o->op), o->output);
            if (o->onnx_node) tosac_strbuf_appendf(&sb, " (ONNX node '%s')", o->onnx_node);
            tosac_strbuf_appendf(&sb, ": %s: %s\n", o->rule >= 0 ? tosac_rule_name(o->rule) : "NO_NPU",
                                 o->rule >= 0 ? tosac_rule_text(o->rule) : "the target has no NPU");
        }
    }
    uint32_t n_onnx = 0, *first = onnx_nodes(a, &n_onnx);
    if (n_onnx) tosac_strbuf_append(&sb, "ONNX nodes:\n");
    for (uint32_t j = 0; first && j < n_onnx; j++) {
        int rule;
        const char *loc = a->ops[first[j]].onnx_node, *w = onnx_where(a, loc, &rule);
        tosac_strbuf_appendf(&sb, "  %-7s %s", w, loc);
        if (rule != TOSAC_RULE_NONE) tosac_strbuf_appendf(&sb, "  [%s]", tosac_rule_name(rule));
        tosac_strbuf_append(&sb, "\n");
    }
    free(first);
    if (a->n_ops) tosac_strbuf_append(&sb, "operators:\n");
    for (uint32_t k = 0; k < a->n_ops; k++) {
        const tosac_artifact_op *o = &a->ops[k];
        if (is_const_op(o->op)) continue;
        tosac_strbuf_appendf(&sb, "  %5u %-22s seg %-3d %s  %s", o->index, tosac_op_name(o->op), o->segment,
                             o->npu ? "NPU" : "CPU", o->output);
        if (o->rule >= 0) tosac_strbuf_appendf(&sb, "  [%s]", tosac_rule_name(o->rule));
        if (o->note) tosac_strbuf_appendf(&sb, "  (%s)", o->note);
        tosac_strbuf_append(&sb, "\n");
    }
    return tosac_strbuf_take(&sb);
}

char *tosac_artifact_report_json(const tosac_artifact *a)
{
    const tosac_target_info *t = &a->target;
    tosac_strbuf sb;
    tosac_strbuf_init(&sb);
    tosac_strbuf_append(&sb, "{\n  \"format\": \"tosac-partition-report\",\n  \"version\": 1,\n  \"target\": ");
    tosac_strbuf_append_json_str(&sb, t->name);
    uint32_t npu = 0, cpu = 0;
    for (uint32_t k = 0; k < a->n_ops; k++)
        if (!is_const_op(a->ops[k].op)) npu += a->ops[k].npu, cpu += !a->ops[k].npu;
    tosac_strbuf_appendf(&sb, ",\n  \"npu_operators\": %u,\n  \"cpu_operators\": %u", npu, cpu);
    uint32_t ne = 0;
    double ms = 0;
    uint64_t cycles = 0;
    estimate_total(a, &ne, &ms, &cycles);
    json_estimate(&sb, "vela_npu", ne > 0, ms, cycles);
    tosac_strbuf_append(&sb, ",\n  \"segments\": [");
    for (uint32_t s = 0; s < a->n_segments; s++) {
        const tosac_artifact_segment *sg = &a->segs[s];
        tosac_strbuf_appendf(&sb, "%s\n    {\"index\": %u, \"file\": ", s ? "," : "", s);
        tosac_strbuf_append_json_str(&sb, sg->file);
        tosac_strbuf_appendf(&sb, ", \"runs_on\": \"%s\", \"operators\": %u, \"standalone_rescales\": %u, "
                                  "\"emulated_int16_tables\": %u, \"arena_bytes\": %llu, \"constant_bytes\": %llu, "
                                  "\"verdict\": ",
                             sg->npu ? "npu" : "cpu", sg->n_ops, standalone_rescales(a, s), emulated_tables(a, s),
                             (unsigned long long)sg->arena_bytes, (unsigned long long)sg->const_bytes);
        tosac_strbuf tv;
        tosac_strbuf_init(&tv);
        verdict(&tv, a, s);
        char *v = tosac_strbuf_take(&tv);
        tosac_strbuf_append_json_str(&sb, v ? v : "");
        tosac_string_free(v);
        json_estimate(&sb, "vela", sg->has_estimate, sg->est_ms, sg->est_cycles);
        tosac_strbuf_append(&sb, "}");
    }
    tosac_strbuf_append(&sb, "\n  ],\n  \"operators\": [");
    bool firstop = true;
    for (uint32_t k = 0; k < a->n_ops; k++) {
        const tosac_artifact_op *o = &a->ops[k];
        if (is_const_op(o->op)) continue;
        tosac_strbuf_appendf(&sb, "%s\n    {\"index\": %u, \"op\": \"%s\", \"output\": ", firstop ? "" : ",", o->index,
                             tosac_op_name(o->op));
        firstop = false;
        tosac_strbuf_append_json_str(&sb, o->output);
        tosac_strbuf_append(&sb, ", \"onnx_node\": ");
        if (o->onnx_node) tosac_strbuf_append_json_str(&sb, o->onnx_node);
        else tosac_strbuf_append(&sb, "null");
        tosac_strbuf_appendf(&sb, ", \"segment\": %d, \"runs_on\": \"%s\", \"rule\": ", o->segment, o->npu ? "npu" : "cpu");
        if (o->rule >= 0) {
            tosac_strbuf_append_json_str(&sb, tosac_rule_name(o->rule));
            tosac_strbuf_append(&sb, ", \"reason\": ");
            tosac_strbuf_append_json_str(&sb, tosac_rule_text(o->rule));
        } else {
            tosac_strbuf_append(&sb, "null, \"reason\": null");
        }
        if (o->note) {
            tosac_strbuf_append(&sb, ", \"note\": ");
            tosac_strbuf_append_json_str(&sb, o->note);
        }
        tosac_strbuf_append(&sb, "}");
    }
    tosac_strbuf_append(&sb, "\n  ],\n  \"onnx_nodes\": [");
    uint32_t n_onnx = 0, *first = onnx_nodes(a, &n_onnx);
    for (uint32_t j = 0; first && j < n_onnx; j++) {
        int rule;
        const char *loc = a->ops[first[j]].onnx_node, *w = onnx_where(a, loc, &rule);
        tosac_strbuf_append(&sb, j ? ",\n    {\"name\": " : "\n    {\"name\": ");
        tosac_strbuf_append_json_str(&sb, loc);
        tosac_strbuf_appendf(&sb, ", \"runs_on\": \"%s\", \"rule\": ", w);
        if (rule >= 0) tosac_strbuf_append_json_str(&sb, tosac_rule_name(rule));
        else tosac_strbuf_append(&sb, "null");
        tosac_strbuf_append(&sb, "}");
    }
    free(first);
    tosac_strbuf_append(&sb, "\n  ]\n}\n");
    return tosac_strbuf_take(&sb);
}

char *tosac_artifact_report_dot(const tosac_artifact *a)
{
    tosac_strbuf sb;
    tosac_strbuf_init(&sb);
    tosac_strbuf_append(&sb, "digraph partition {\n  rankdir=TB;\n  node [shape=box, style=filled, fontsize=10];\n");
    for (uint32_t s = 0; s < a->n_segments; s++) {
        const tosac_artifact_segment *sg = &a->segs[s];
        const char *fill = sg->npu ? "#9ecae1" : "#fdae6b";
        tosac_strbuf_appendf(&sb, "  subgraph cluster_%u {\n    label=\"segment %u (%s)\"; style=filled; color=\"%s\";\n", s,
                             s, sg->npu ? "NPU" : "CPU", sg->npu ? "#deebf7" : "#fee6ce");
        const tosac_block *b = sg->graph->regions[0]->blocks[0];
        for (uint32_t k = 0; k < b->n_nodes; k++) {
            const tosac_node *n = b->nodes[k];
            if (is_const_op(n->op) || !n->n_outputs) continue;
            tosac_strbuf_append(&sb, "    ");
            tosac_strbuf_append_json_str(&sb, n->outputs[0]->name);
            tosac_strbuf_appendf(&sb, " [label=\"%s\", fillcolor=\"%s\"];\n", tosac_op_name(n->op), fill);
        }
        tosac_strbuf_append(&sb, "  }\n");
    }
    /* edges: each operator from the first output of its operands' producers (inside the segment
       or across a boundary, found by tensor name) */
    for (uint32_t s = 0; s < a->n_segments; s++) {
        const tosac_block *b = a->segs[s].graph->regions[0]->blocks[0];
        for (uint32_t k = 0; k < b->n_nodes; k++) {
            const tosac_node *n = b->nodes[k];
            if (is_const_op(n->op) || !n->n_outputs) continue;
            for (uint32_t j = 0; j < n->n_inputs; j++) {
                const tosac_value *v = n->inputs[j];
                if (v->is_shape || (v->producer && is_const_op(v->producer->op))) continue;
                const char *from = v->producer && v->producer->n_outputs ? v->producer->outputs[0]->name : v->name;
                if (!v->producer) { /* a segment input: the producing segment names the same tensor */
                    bool model = false;
                    for (uint32_t m = 0; m < a->n_inputs; m++) model |= !strcmp(a->inputs[m].name, v->name);
                    if (model) {
                        tosac_strbuf_append(&sb, "  ");
                        tosac_strbuf_append_json_str(&sb, v->name);
                        tosac_strbuf_append(&sb, " [shape=ellipse, fillcolor=white];\n");
                    }
                }
                tosac_strbuf_append(&sb, "  ");
                tosac_strbuf_append_json_str(&sb, from);
                tosac_strbuf_append(&sb, " -> ");
                tosac_strbuf_append_json_str(&sb, n->outputs[0]->name);
                tosac_strbuf_append(&sb, ";\n");
            }
        }
    }
    tosac_strbuf_append(&sb, "}\n");
    return tosac_strbuf_take(&sb);
}
