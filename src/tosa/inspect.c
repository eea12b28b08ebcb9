/*
 * `tosac inspect`: a text summary and a JSON document describing a graph. Names, types, attribute
 * values and constant values are formatted by the shared pieces of src/ir/print.c.
 */
#include "tosac/inspect.h"

#include <inttypes.h>
#include <string.h>

#include "core/strbuf.h"
#include "ir/graph.h"
#include "ir/print.h"

/* ------------------------------------------------------------------------------------------- */
/* Totals                                                                                        */

#define N_OP_SLOTS (TOSAC_OP_COUNT + 1) /* one slot per op number, the last for unknown numbers */

typedef struct totals {
    uint64_t regions, blocks, operators, tensors, shapes, param_bytes;
    uint64_t by_op[N_OP_SLOTS];
    unsigned order[N_OP_SLOTS]; /* slots with a non-zero count: count descending, then name */
    unsigned n_order;
} totals;

static const char *slot_name(unsigned slot)
{
    return slot < TOSAC_OP_COUNT && tosac_op_valid(slot) ? tosac_op_name(slot) : "UNKNOWN";
}

static bool slot_before(const totals *t, unsigned a, unsigned b)
{
    if (t->by_op[a] != t->by_op[b]) return t->by_op[a] > t->by_op[b];
    return strcmp(slot_name(a), slot_name(b)) < 0;
}

static void count_totals(const tosac_graph *g, totals *t)
{
    memset(t, 0, sizeof *t);
    t->regions = g->n_regions;
    for (uint32_t r = 0; r < g->n_regions; r++) {
        const tosac_region *reg = g->regions[r];
        t->blocks += reg->n_blocks;
        for (uint32_t bi = 0; bi < reg->n_blocks; bi++) {
            const tosac_block *b = reg->blocks[bi];
            t->operators += b->n_nodes;
            t->tensors += b->n_tensors;
            t->shapes += b->n_shapes;
            for (uint32_t i = 0; i < b->n_tensors; i++)
                if (b->tensors[i]->data) t->param_bytes += b->tensors[i]->data_len;
            for (uint32_t i = 0; i < b->n_nodes; i++) {
                uint32_t op = b->nodes[i]->op;
                t->by_op[tosac_op_valid(op) ? op : TOSAC_OP_COUNT]++;
            }
        }
    }
    /* insertion sort of at most 77 slots */
    for (unsigned s = 0; s < N_OP_SLOTS; s++) {
        if (!t->by_op[s]) continue;
        unsigned j = t->n_order++;
        while (j > 0 && slot_before(t, s, t->order[j - 1])) {
            t->order[j] = t->order[j - 1];
            j--;
        }
        t->order[j] = s;
    }
}

/* ------------------------------------------------------------------------------------------- */
/* Text                                                                                          */

#define MAX_COLUMN 40

/* Width of what `fmt` would append for `v` (the tensor tables are aligned on it). */
static size_t text_width(void (*fmt)(tosac_strbuf *, const tosac_value *), const tosac_value *v)
{
    tosac_strbuf tmp;
    tosac_strbuf_init(&tmp);
    fmt(&tmp, v);
    size_t w = tmp.len;
    tosac_strbuf_free(&tmp);
    return w;
}

/* A value as a plain name (no '%'), marked when undeclared. */
static void fmt_operand(tosac_strbuf *sb, const tosac_value *v)
{
    if (!v) {
        tosac_strbuf_append(sb, "<null>");
        return;
    }
    tosac_fmt_name(sb, v->name);
    if (!v->declared) tosac_strbuf_append(sb, " <undeclared>");
}

/* Appends what fmt appended for v, padded with spaces to `width`. */
static void column(tosac_strbuf *sb, void (*fmt)(tosac_strbuf *, const tosac_value *), const tosac_value *v,
                   size_t width)
{
    size_t before = sb->len;
    fmt(sb, v);
    size_t w = sb->len - before;
    if (w < width) tosac_strbuf_pad(sb, ' ', width - w);
}

static void text_value_list(tosac_strbuf *sb, const char *title, tosac_value *const *vals, uint32_t n)
{
    size_t wname = 0, wtype = 0;
    for (uint32_t i = 0; i < n; i++) {
        size_t w = text_width(fmt_operand, vals[i]);
        if (w > wname) wname = w;
        w = text_width(tosac_fmt_type, vals[i]);
        if (w > wtype) wtype = w;
    }
    if (wname > MAX_COLUMN) wname = MAX_COLUMN;
    if (wtype > MAX_COLUMN) wtype = MAX_COLUMN;
    tosac_strbuf_appendf(sb, "  %s (%" PRIu32 ")%s\n", title, n, n ? ":" : "");
    for (uint32_t i = 0; i < n; i++) {
        tosac_strbuf_append(sb, "    ");
        column(sb, fmt_operand, vals[i], wname);
        tosac_strbuf_append(sb, "  ");
        if (vals[i] && vals[i]->data) {
            column(sb, tosac_fmt_type, vals[i], wtype);
            int64_t ne = tosac_const_elem_count(vals[i]);
            tosac_strbuf_appendf(sb, "  const %zu byte%s", vals[i]->data_len, vals[i]->data_len == 1 ? "" : "s");
            if (ne >= 0 && ne <= TOSAC_PRINT_MAX_ELEMS) {
                tosac_strbuf_append(sb, " = ");
                tosac_fmt_const_values(sb, vals[i], TOSAC_PRINT_MAX_ELEMS, TOSAC_FMT_TEXT);
            } else if (ne < 0) {
                tosac_strbuf_append(sb, " (not decodable as the declared type)");
            }
        } else {
            tosac_fmt_type(sb, vals[i]);
        }
        tosac_strbuf_appendc(sb, '\n');
    }
}

static void text_block(tosac_strbuf *sb, const tosac_region *reg, const tosac_block *b)
{
    tosac_strbuf_append(sb, "\nregion ");
    tosac_strbuf_append_json_str(sb, reg->name);
    tosac_strbuf_append(sb, ", block ");
    tosac_strbuf_append_json_str(sb, b->name);
    tosac_strbuf_appendc(sb, '\n');
    text_value_list(sb, "inputs", b->inputs, b->n_inputs);
    text_value_list(sb, "outputs", b->outputs, b->n_outputs);
    text_value_list(sb, "tensors", b->tensors, b->n_tensors);
    text_value_list(sb, "shapes", b->shapes, b->n_shapes);
    if (b->n_undeclared) text_value_list(sb, "undeclared", b->undeclared, b->n_undeclared);

    int wi = 1;
    for (uint32_t n = b->n_nodes; n >= 10; n /= 10) wi++;
    size_t wop = 0;
    for (uint32_t i = 0; i < b->n_nodes; i++) {
        size_t w = strlen(tosac_op_name(b->nodes[i]->op));
        if (w > wop) wop = w;
    }
    tosac_strbuf_appendf(sb, "  operators (%" PRIu32 ")%s\n", b->n_nodes, b->n_nodes ? ":" : "");
    for (uint32_t i = 0; i < b->n_nodes; i++) {
        const tosac_node *n = b->nodes[i];
        const char *name = tosac_op_name(n->op);
        tosac_strbuf_appendf(sb, "    %*" PRIu32 "  %s", wi, i, name);
        if (!tosac_op_valid(n->op)) tosac_strbuf_appendf(sb, "(%" PRIu32 ")", n->op);
        tosac_strbuf_pad(sb, ' ', wop > strlen(name) ? wop - strlen(name) : 0);
        tosac_strbuf_append(sb, "  ");
        tosac_fmt_list(sb, n->inputs, n->n_inputs, fmt_operand);
        tosac_strbuf_append(sb, n->n_inputs ? " -> " : "-> ");
        tosac_fmt_list(sb, n->outputs, n->n_outputs, fmt_operand);
        size_t before = sb->len;
        tosac_strbuf_append(sb, "  ");
        tosac_fmt_attrs(sb, n, TOSAC_FMT_TEXT);
        if (sb->len == before + 2) tosac_strbuf_truncate(sb, before);
        if (n->location) {
            tosac_strbuf_append(sb, "  loc(");
            tosac_strbuf_append_json_str(sb, n->location);
            tosac_strbuf_appendc(sb, ')');
        }
        tosac_strbuf_appendc(sb, '\n');
    }
}

char *tosac_inspect_text(const tosac_graph *g)
{
    if (!g) return NULL;
    tosac_strbuf sb;
    tosac_strbuf_init(&sb);
    tosac_strbuf_appendf(&sb, "TOSA %" PRId32 ".%" PRId32 ".%" PRId32 " (%s)\n", g->ver_major, g->ver_minor,
                         g->ver_patch, g->ver_draft ? "draft" : "final");
    for (uint32_t r = 0; r < g->n_regions; r++)
        for (uint32_t bi = 0; bi < g->regions[r]->n_blocks; bi++)
            text_block(&sb, g->regions[r], g->regions[r]->blocks[bi]);

    totals t;
    count_totals(g, &t);
    tosac_strbuf_append(&sb, "\ntotals:\n");
    tosac_strbuf_appendf(&sb, "  regions: %" PRIu64 ", blocks: %" PRIu64 "\n", t.regions, t.blocks);
    tosac_strbuf_appendf(&sb, "  operators: %" PRIu64 "\n", t.operators);
    tosac_strbuf_appendf(&sb, "  tensors: %" PRIu64 "\n", t.tensors);
    tosac_strbuf_appendf(&sb, "  shapes: %" PRIu64 "\n", t.shapes);
    tosac_strbuf_appendf(&sb, "  parameter bytes: %" PRIu64 "\n", t.param_bytes);
    tosac_strbuf_appendf(&sb, "  ops by type:%s\n", t.n_order ? "" : " none");
    size_t wop = 0;
    for (unsigned i = 0; i < t.n_order; i++) {
        size_t w = strlen(slot_name(t.order[i]));
        if (w > wop) wop = w;
    }
    for (unsigned i = 0; i < t.n_order; i++)
        tosac_strbuf_appendf(&sb, "    %-*s  %" PRIu64 "\n", (int)wop, slot_name(t.order[i]), t.by_op[t.order[i]]);
    return tosac_strbuf_take(&sb);
}

/* ------------------------------------------------------------------------------------------- */
/* JSON                                                                                          */

static void json_name_list(tosac_strbuf *sb, tosac_value *const *vals, uint32_t n)
{
    tosac_strbuf_appendc(sb, '[');
    for (uint32_t i = 0; i < n; i++) {
        if (i) tosac_strbuf_append(sb, ", ");
        tosac_strbuf_append_json_str(sb, vals[i] ? vals[i]->name : NULL);
    }
    tosac_strbuf_appendc(sb, ']');
}

static void json_values(tosac_strbuf *sb, const tosac_value *v)
{
    if (!v->data || !tosac_fmt_const_values(sb, v, TOSAC_PRINT_MAX_ELEMS, TOSAC_FMT_JSON))
        tosac_strbuf_append(sb, "null");
}

static void json_tensor(tosac_strbuf *sb, const tosac_value *v)
{
    tosac_strbuf_append(sb, "{\"name\": ");
    tosac_strbuf_append_json_str(sb, v->name);
    tosac_strbuf_append(sb, ", \"type\": ");
    tosac_strbuf_append_json_str(sb, (unsigned)v->dtype < TOSAC_DTYPE_COUNT ? tosac_dtype_name(v->dtype) : "?");
    tosac_strbuf_append(sb, ", \"shape\": ");
    if (v->is_unranked) {
        tosac_strbuf_append(sb, "null");
    } else {
        tosac_strbuf_appendc(sb, '[');
        for (int32_t i = 0; i < v->rank && v->shape; i++)
            tosac_strbuf_appendf(sb, "%s%" PRId64, i ? "," : "", v->shape[i]);
        tosac_strbuf_appendc(sb, ']');
    }
    tosac_strbuf_appendf(sb, ", \"const_bytes\": %zu, \"variable\": %s, \"variable_name\": ",
                         v->data ? v->data_len : 0, v->variable ? "true" : "false");
    tosac_strbuf_append_json_str(sb, v->variable_name);
    tosac_strbuf_append(sb, ", \"values\": ");
    json_values(sb, v);
    tosac_strbuf_appendc(sb, '}');
}

static void json_shape(tosac_strbuf *sb, const tosac_value *v)
{
    tosac_strbuf_append(sb, "{\"name\": ");
    tosac_strbuf_append_json_str(sb, v->name);
    tosac_strbuf_appendf(sb, ", \"rank\": %" PRId64 ", \"const_bytes\": %zu, \"values\": ",
                         v->rank > 0 && v->shape ? v->shape[0] : (int64_t)0, v->data ? v->data_len : 0);
    json_values(sb, v);
    tosac_strbuf_appendc(sb, '}');
}

static void json_node(tosac_strbuf *sb, const tosac_node *n)
{
    tosac_strbuf_appendf(sb, "{\"index\": %" PRIu32 ", \"op\": ", n->index);
    tosac_strbuf_append_json_str(sb, tosac_op_valid(n->op) ? tosac_op_name(n->op) : "UNKNOWN");
    tosac_strbuf_appendf(sb, ", \"opcode\": %" PRIu32 ", \"inputs\": ", n->op);
    json_name_list(sb, n->inputs, n->n_inputs);
    tosac_strbuf_append(sb, ", \"outputs\": ");
    json_name_list(sb, n->outputs, n->n_outputs);
    tosac_strbuf_append(sb, ", \"attributes\": ");
    tosac_fmt_attrs(sb, n, TOSAC_FMT_JSON);
    tosac_strbuf_append(sb, ", \"location\": ");
    tosac_strbuf_append_json_str(sb, n->location);
    tosac_strbuf_appendc(sb, '}');
}

/* "key": [ one item per line ] at indentation `ind` (the key's own line). */
static void json_array_lines(tosac_strbuf *sb, const char *key, size_t ind, const tosac_block *b, uint32_t n,
                             void (*item)(tosac_strbuf *, const tosac_block *, uint32_t), bool last)
{
    tosac_strbuf_pad(sb, ' ', ind);
    tosac_strbuf_appendf(sb, "\"%s\": [", key);
    for (uint32_t i = 0; i < n; i++) {
        tosac_strbuf_appendc(sb, '\n');
        tosac_strbuf_pad(sb, ' ', ind + 2);
        item(sb, b, i);
        if (i + 1 < n) tosac_strbuf_appendc(sb, ',');
    }
    if (n) {
        tosac_strbuf_appendc(sb, '\n');
        tosac_strbuf_pad(sb, ' ', ind);
    }
    tosac_strbuf_append(sb, last ? "]\n" : "],\n");
}

static void item_tensor(tosac_strbuf *sb, const tosac_block *b, uint32_t i) { json_tensor(sb, b->tensors[i]); }
static void item_shape(tosac_strbuf *sb, const tosac_block *b, uint32_t i) { json_shape(sb, b->shapes[i]); }
static void item_node(tosac_strbuf *sb, const tosac_block *b, uint32_t i) { json_node(sb, b->nodes[i]); }

static void json_block(tosac_strbuf *sb, const tosac_block *b, bool last)
{
    tosac_strbuf_append(sb, "        {\n          \"name\": ");
    tosac_strbuf_append_json_str(sb, b->name);
    tosac_strbuf_append(sb, ",\n          \"inputs\": ");
    json_name_list(sb, b->inputs, b->n_inputs);
    tosac_strbuf_append(sb, ",\n          \"outputs\": ");
    json_name_list(sb, b->outputs, b->n_outputs);
    tosac_strbuf_append(sb, ",\n");
    json_array_lines(sb, "tensors", 10, b, b->n_tensors, item_tensor, false);
    json_array_lines(sb, "shapes", 10, b, b->n_shapes, item_shape, false);
    json_array_lines(sb, "operators", 10, b, b->n_nodes, item_node, false);
    tosac_strbuf_append(sb, "          \"undeclared\": ");
    json_name_list(sb, b->undeclared, b->n_undeclared);
    tosac_strbuf_append(sb, last ? "\n        }\n" : "\n        },\n");
}

char *tosac_inspect_json(const tosac_graph *g)
{
    if (!g) return NULL;
    tosac_strbuf sb;
    tosac_strbuf_init(&sb);
    tosac_strbuf_appendf(&sb,
                         "{\n  \"version\": {\"major\": %" PRId32 ", \"minor\": %" PRId32 ", \"patch\": %" PRId32
                         ", \"draft\": %s},\n  \"regions\": [",
                         g->ver_major, g->ver_minor, g->ver_patch, g->ver_draft ? "true" : "false");
    for (uint32_t r = 0; r < g->n_regions; r++) {
        const tosac_region *reg = g->regions[r];
        tosac_strbuf_append(&sb, r ? ",\n    {\n      \"name\": " : "\n    {\n      \"name\": ");
        tosac_strbuf_append_json_str(&sb, reg->name);
        tosac_strbuf_append(&sb, ",\n      \"blocks\": [");
        if (reg->n_blocks) tosac_strbuf_appendc(&sb, '\n');
        for (uint32_t bi = 0; bi < reg->n_blocks; bi++) json_block(&sb, reg->blocks[bi], bi + 1 == reg->n_blocks);
        tosac_strbuf_append(&sb, reg->n_blocks ? "      ]\n    }" : "]\n    }");
    }
    tosac_strbuf_append(&sb, g->n_regions ? "\n  ],\n" : "],\n");

    totals t;
    count_totals(g, &t);
    tosac_strbuf_appendf(&sb,
                         "  \"totals\": {\"regions\": %" PRIu64 ", \"blocks\": %" PRIu64 ", \"operators\": %" PRIu64
                         ", \"tensors\": %" PRIu64 ", \"shapes\": %" PRIu64 ", \"parameter_bytes\": %" PRIu64
                         ", \"ops_by_type\": {",
                         t.regions, t.blocks, t.operators, t.tensors, t.shapes, t.param_bytes);
    for (unsigned i = 0; i < t.n_order; i++)
        tosac_strbuf_appendf(&sb, "%s\"%s\": %" PRIu64, i ? ", " : "", slot_name(t.order[i]), t.by_op[t.order[i]]);
    tosac_strbuf_append(&sb, "}}\n}\n");
    return tosac_strbuf_take(&sb);
}
