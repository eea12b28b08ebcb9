/*
 * Text form of a graph (tosac_graph_print) and the formatting pieces it shares with inspect.
 *
 *   tosa 1.0.0 (final)
 *   region "main" {
 *     block "main"(%input: INT8[1,16,16,3]) -> (%out) {
 *       %w = CONST : INT8[8,3,3,3]  // 216 bytes
 *       %s = CONST_SHAPE : shape[4] = [1,16,16,8]
 *       %out = CONV2D(%input, %w, %b, %izp, %wzp) {pad = [1,1,1,1], ...} : INT32[1,16,16,8]
 *     }
 *   }
 *
 * Tensors and shape values that are neither block inputs nor produced by an operator are listed
 * first as "%t : INT8[2]  // not produced by any operator" lines. Output is deterministic: it
 * follows the graph's own list orders only.
 */
#include "ir/print.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/encoding.h"
#include "core/fp.h"

/* ------------------------------------------------------------------------------------------- */
/* Names, dims, types                                                                            */

static bool is_plain_name(const char *s)
{
    if (!*s) return false;
    for (; *s; s++) {
        char c = *s;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                  c == '.' || c == ':' || c == '/' || c == '$' || c == '@' || c == '-';
        if (!ok) return false;
    }
    return true;
}

void tosac_fmt_name(tosac_strbuf *sb, const char *name)
{
    if (!name) {
        tosac_strbuf_append(sb, "<null>");
    } else if (is_plain_name(name)) {
        tosac_strbuf_append(sb, name);
    } else {
        tosac_strbuf_append_json_str(sb, name);
    }
}

void tosac_fmt_value_ref(tosac_strbuf *sb, const tosac_value *v)
{
    if (!v) {
        tosac_strbuf_append(sb, "<null>");
        return;
    }
    tosac_strbuf_appendc(sb, '%');
    tosac_fmt_name(sb, v->name);
    if (!v->declared) tosac_strbuf_append(sb, " <undeclared>");
}

void tosac_fmt_dims(tosac_strbuf *sb, const tosac_value *v)
{
    if (v->is_unranked) {
        tosac_strbuf_append(sb, "[*]");
        return;
    }
    tosac_strbuf_appendc(sb, '[');
    for (int32_t i = 0; i < v->rank; i++)
        tosac_strbuf_appendf(sb, "%s%" PRId64, i ? "," : "", v->shape ? v->shape[i] : (int64_t)0);
    tosac_strbuf_appendc(sb, ']');
}

static void fmt_dtype(tosac_strbuf *sb, uint32_t t)
{
    if (t < TOSAC_DTYPE_COUNT)
        tosac_strbuf_append(sb, tosac_dtype_name((tosac_dtype)t));
    else
        tosac_strbuf_appendf(sb, "DTYPE(%" PRIu32 ")", t);
}

void tosac_fmt_list(tosac_strbuf *sb, tosac_value *const *vals, uint32_t n,
                    void (*fmt)(tosac_strbuf *, const tosac_value *))
{
    for (uint32_t i = 0; i < n; i++) {
        if (i) tosac_strbuf_append(sb, ", ");
        fmt(sb, vals[i]);
    }
}

void tosac_fmt_type(tosac_strbuf *sb, const tosac_value *v)
{
    if (!v || !v->declared) {
        tosac_strbuf_appendc(sb, '?');
        return;
    }
    if (v->is_shape) {
        tosac_strbuf_appendf(sb, "shape[%" PRId64 "]", v->rank > 0 && v->shape ? v->shape[0] : (int64_t)0);
        return;
    }
    fmt_dtype(sb, (uint32_t)v->dtype);
    tosac_fmt_dims(sb, v);
    if (v->variable) tosac_strbuf_append(sb, " variable");
    if (v->variable_name) {
        tosac_strbuf_append(sb, " variable_name(");
        tosac_strbuf_append_json_str(sb, v->variable_name);
        tosac_strbuf_appendc(sb, ')');
    }
    if (v->ext_offset || v->ext_size)
        tosac_strbuf_appendf(sb, " offset(%" PRIu64 ") size(%" PRIu64 ")", v->ext_offset, v->ext_size);
}

/* ------------------------------------------------------------------------------------------- */
/* Scalars                                                                                       */

const char *tosac_nan_mode_name(int64_t v)
{
    switch (v) {
    case TOSAC_NAN_UNKNOWN: return "UNKNOWN";
    case TOSAC_NAN_PROPAGATE: return "PROPAGATE";
    case TOSAC_NAN_IGNORE: return "IGNORE";
    default: return NULL;
    }
}

const char *tosac_resize_mode_name(int64_t v)
{
    switch (v) {
    case TOSAC_RESIZE_UNKNOWN: return "UNKNOWN";
    case TOSAC_RESIZE_NEAREST: return "NEAREST";
    case TOSAC_RESIZE_BILINEAR: return "BILINEAR";
    default: return NULL;
    }
}

const char *tosac_rounding_mode_name(int64_t v)
{
    switch (v) {
    case TOSAC_ROUND_UNKNOWN: return "UNKNOWN";
    case TOSAC_ROUND_SINGLE: return "SINGLE_ROUND";
    case TOSAC_ROUND_INEXACT: return "INEXACT_ROUND";
    case TOSAC_ROUND_DOUBLE: return "DOUBLE_ROUND";
    default: return NULL;
    }
}

/* An enum value: its name (quoted in JSON), or the bare number if it is outside the enum. */
static void fmt_enum(tosac_strbuf *sb, const char *name, int64_t v, tosac_fmt_style st)
{
    if (!name)
        tosac_strbuf_appendf(sb, "%" PRId64, v);
    else if (st == TOSAC_FMT_JSON)
        tosac_strbuf_appendf(sb, "\"%s\"", name);
    else
        tosac_strbuf_append(sb, name);
}

/* A float with `digits` significant digits (enough to round-trip the source format). */
static void fmt_float(tosac_strbuf *sb, double f, int digits, tosac_fmt_style st)
{
    if (isnan(f)) {
        tosac_strbuf_append(sb, st == TOSAC_FMT_JSON ? "\"NaN\"" : "nan");
        return;
    }
    if (isinf(f)) {
        if (st == TOSAC_FMT_JSON)
            tosac_strbuf_append(sb, f < 0 ? "\"-Infinity\"" : "\"Infinity\"");
        else
            tosac_strbuf_append(sb, f < 0 ? "-inf" : "inf");
        return;
    }
    char buf[64];
    int n = snprintf(buf, sizeof buf, "%.*g", digits, f);
    if (n < 0 || (size_t)n >= sizeof buf) {
        tosac_strbuf_append(sb, "0");
        return;
    }
    /* Whatever the caller's locale, write a '.' decimal point (JSON and the text form need it). */
    for (char *p = buf; *p; p++)
        if (!((*p >= '0' && *p <= '9') || *p == '-' || *p == '+' || *p == 'e' || *p == 'E')) *p = '.';
    tosac_strbuf_append(sb, buf);
    if (!strpbrk(buf, ".eE")) tosac_strbuf_append(sb, ".0"); /* "6.0", not "6": it is a float */
}

/* One decoded element. */
typedef struct elem {
    enum { ELEM_INT, ELEM_BOOL, ELEM_FLOAT } kind;
    int64_t i;
    double f;
    int digits; /* significant digits for floats */
} elem;

/* Decodes element `idx` of TOSA-encoded data of type t and `len` bytes. */
static bool decode_elem(tosac_dtype t, const uint8_t *d, size_t len, int64_t idx, elem *e)
{
    static const int k_digits[TOSAC_DTYPE_COUNT] = {
        [TOSAC_DTYPE_FP32] = 9, [TOSAC_DTYPE_FP16] = 5, [TOSAC_DTYPE_BF16] = 4,
        [TOSAC_DTYPE_FP8E4M3] = 3, [TOSAC_DTYPE_FP8E5M2] = 3,
    };
    e->i = 0;
    e->f = 0;
    e->digits = 9;
    if (tosac_dtype_is_float(t)) {
        e->kind = ELEM_FLOAT;
        e->digits = k_digits[t];
        return tosac_encoded_fp(t, d, len, (uint64_t)idx, &e->f);
    }
    e->kind = t == TOSAC_DTYPE_BOOL ? ELEM_BOOL : ELEM_INT;
    return tosac_encoded_int(t, d, len, (uint64_t)idx, &e->i);
}

static void fmt_elem(tosac_strbuf *sb, const elem *e, tosac_fmt_style st)
{
    switch (e->kind) {
    case ELEM_BOOL: tosac_strbuf_append(sb, e->i ? "true" : "false"); break;
    case ELEM_FLOAT: fmt_float(sb, e->f, e->digits, st); break;
    default: tosac_strbuf_appendf(sb, "%" PRId64, e->i); break;
    }
}

/* ------------------------------------------------------------------------------------------- */
/* Constant values                                                                               */

int64_t tosac_const_elem_count(const tosac_value *v)
{
    if (!v || !v->declared || !v->data || v->is_unranked) return -1;
    tosac_dtype t = v->is_shape ? TOSAC_DTYPE_SHAPE : v->dtype;
    int64_t n = v->is_shape ? (v->rank > 0 && v->shape ? v->shape[0] : 0) : tosac_value_nelem(v);
    size_t need;
    if (n < 0 || !tosac_dtype_storage_bytes(t, n, &need) || v->data_len < need) return -1;
    return n;
}

static void fmt_byte_list(tosac_strbuf *sb, const uint8_t *d, uint32_t len)
{
    tosac_strbuf_appendc(sb, '[');
    for (uint32_t i = 0; i < len; i++) tosac_strbuf_appendf(sb, "%s%u", i ? "," : "", (unsigned)d[i]);
    tosac_strbuf_appendc(sb, ']');
}

bool tosac_fmt_const_values(tosac_strbuf *sb, const tosac_value *v, int64_t max_elems, tosac_fmt_style st)
{
    int64_t n = tosac_const_elem_count(v);
    if (n < 0 || n > max_elems) return false;
    tosac_dtype t = v->is_shape ? TOSAC_DTYPE_SHAPE : v->dtype;
    tosac_strbuf_appendc(sb, '[');
    for (int64_t i = 0; i < n; i++) {
        elem e;
        if (!decode_elem(t, v->data, v->data_len, i, &e)) break; /* cannot happen: the type was checked above */
        if (i) tosac_strbuf_appendc(sb, ',');
        fmt_elem(sb, &e, st);
    }
    tosac_strbuf_appendc(sb, ']');
    return true;
}

/* ------------------------------------------------------------------------------------------- */
/* Attributes                                                                                    */

/* CLAMP min_val/max_val: one value of the input's element type. */
static void fmt_clamp_bound(tosac_strbuf *sb, const tosac_node *n, const tosac_attr_val *a, tosac_fmt_style st)
{
    const tosac_value *in = n->n_inputs ? n->inputs[0] : NULL;
    tosac_dtype t = in && in->declared && !in->is_shape ? in->dtype : TOSAC_DTYPE_UNKNOWN;
    size_t need;
    elem e;
    if (a->data && tosac_dtype_storage_bytes(t, 1, &need) && a->len == need && decode_elem(t, a->data, a->len, 0, &e)) {
        fmt_elem(sb, &e, st);
        return;
    }
    fmt_byte_list(sb, a->data, a->data ? a->len : 0);
}

bool tosac_fmt_attr_value(tosac_strbuf *sb, const tosac_node *n, unsigned id, tosac_fmt_style st)
{
    if (!n || id >= TOSAC_ATTR_MAX_FIELDS || !n->attr[id].present) return false;
    tosac_attr_kind k = tosac_op_attr_kind(n->op, id);
    const tosac_attr_val *a = &n->attr[id];
    switch (k) {
    case TOSAC_AK_I32: tosac_strbuf_appendf(sb, "%" PRId64, a->i); break;
    case TOSAC_AK_BOOL: tosac_strbuf_append(sb, a->i ? "true" : "false"); break;
    case TOSAC_AK_DTYPE:
        if (a->i >= 0 && a->i < TOSAC_DTYPE_COUNT)
            fmt_enum(sb, tosac_dtype_name((tosac_dtype)a->i), a->i, st);
        else
            fmt_enum(sb, NULL, a->i, st);
        break;
    case TOSAC_AK_NAN: fmt_enum(sb, tosac_nan_mode_name(a->i), a->i, st); break;
    case TOSAC_AK_RESIZE: fmt_enum(sb, tosac_resize_mode_name(a->i), a->i, st); break;
    case TOSAC_AK_ROUND: fmt_enum(sb, tosac_rounding_mode_name(a->i), a->i, st); break;
    case TOSAC_AK_I32V: {
        const int32_t *p = a->data;
        tosac_strbuf_appendc(sb, '[');
        for (uint32_t i = 0; p && i < a->len; i++) {
            int32_t x;
            memcpy(&x, p + i, sizeof x);
            tosac_strbuf_appendf(sb, "%s%" PRId32, i ? "," : "", x);
        }
        tosac_strbuf_appendc(sb, ']');
        break;
    }
    case TOSAC_AK_BYTES8:
        if (n->op == TOSAC_OP_CLAMP)
            fmt_clamp_bound(sb, n, a, st);
        else
            fmt_byte_list(sb, a->data, a->data ? a->len : 0);
        break;
    case TOSAC_AK_BYTES:
        if (a->len <= TOSAC_PRINT_MAX_ELEMS)
            fmt_byte_list(sb, a->data, a->data ? a->len : 0);
        else if (st == TOSAC_FMT_JSON)
            tosac_strbuf_appendf(sb, "{\"bytes\": %" PRIu32 "}", a->len);
        else
            tosac_strbuf_appendf(sb, "<%" PRIu32 " bytes>", a->len);
        break;
    case TOSAC_AK_STR: tosac_strbuf_append_json_str(sb, a->data ? (const char *)a->data : ""); break;
    default: return false;
    }
    return true;
}

void tosac_fmt_attrs(tosac_strbuf *sb, const tosac_node *n, tosac_fmt_style st)
{
    unsigned shown = 0;
    for (unsigned id = 0; n && id < TOSAC_ATTR_MAX_FIELDS; id++) {
        const char *name = tosac_op_attr_name(n->op, id);
        if (!name || !n->attr[id].present || tosac_op_attr_kind(n->op, id) == TOSAC_AK_NONE) continue;
        tosac_strbuf_append(sb, shown ? ", " : "{");
        if (st == TOSAC_FMT_JSON) {
            tosac_strbuf_append_json_str(sb, name);
            tosac_strbuf_append(sb, ": ");
        } else {
            tosac_strbuf_appendf(sb, "%s = ", name);
        }
        tosac_fmt_attr_value(sb, n, id, st);
        shown++;
    }
    if (shown)
        tosac_strbuf_appendc(sb, '}');
    else if (st == TOSAC_FMT_JSON)
        tosac_strbuf_append(sb, "{}");
}

/* ------------------------------------------------------------------------------------------- */
/* The printer                                                                                   */

/* " = [values]" for small constants; otherwise the data size goes into the end-of-line comment. */
static void fmt_const_suffix(tosac_strbuf *sb, const tosac_value *v, tosac_strbuf *comment)
{
    if (!v->data) {
        tosac_strbuf_append(comment, "no data");
        return;
    }
    int64_t n = tosac_const_elem_count(v);
    if (n >= 0 && n <= TOSAC_PRINT_MAX_ELEMS) {
        tosac_strbuf_append(sb, " = ");
        tosac_fmt_const_values(sb, v, TOSAC_PRINT_MAX_ELEMS, TOSAC_FMT_TEXT);
        return;
    }
    tosac_strbuf_appendf(comment, "%zu byte%s", v->data_len, v->data_len == 1 ? "" : "s");
    if (n < 0) tosac_strbuf_append(comment, ", not decodable as the declared type");
}

static void print_op_name(tosac_strbuf *sb, uint32_t op)
{
    if (tosac_op_valid(op))
        tosac_strbuf_append(sb, tosac_op_name(op));
    else
        tosac_strbuf_appendf(sb, "UNKNOWN_OP(%" PRIu32 ")", op);
}

static void print_node(tosac_strbuf *sb, const tosac_node *n)
{
    tosac_strbuf comment;
    tosac_strbuf_init(&comment);
    tosac_strbuf_pad(sb, ' ', 4);
    tosac_fmt_list(sb, n->outputs, n->n_outputs, tosac_fmt_value_ref);
    if (n->n_outputs) tosac_strbuf_append(sb, " = ");
    print_op_name(sb, n->op);
    bool is_const = n->op == TOSAC_OP_CONST || n->op == TOSAC_OP_CONST_SHAPE;
    if (n->n_inputs || !is_const) {
        tosac_strbuf_appendc(sb, '(');
        tosac_fmt_list(sb, n->inputs, n->n_inputs, tosac_fmt_value_ref);
        tosac_strbuf_appendc(sb, ')');
    }
    if (n->attr_type != 0 && n->attr_type != n->op) {
        tosac_strbuf_appendf(sb, " attribute_type(%u)", (unsigned)n->attr_type);
    }
    size_t before = sb->len;
    tosac_strbuf_appendc(sb, ' ');
    tosac_fmt_attrs(sb, n, TOSAC_FMT_TEXT);
    if (sb->len == before + 1) tosac_strbuf_truncate(sb, before); /* no attributes */
    if (n->n_outputs) {
        tosac_strbuf_append(sb, " : ");
        tosac_fmt_list(sb, n->outputs, n->n_outputs, tosac_fmt_type);
    }
    if (is_const && n->n_outputs == 1 && n->outputs[0] && n->outputs[0]->declared)
        fmt_const_suffix(sb, n->outputs[0], &comment);
    if (n->location) {
        tosac_strbuf_append(sb, " loc(");
        tosac_strbuf_append_json_str(sb, n->location);
        tosac_strbuf_appendc(sb, ')');
    }
    if (comment.failed) sb->failed = true;
    if (comment.len) {
        tosac_strbuf_append(sb, "  // ");
        tosac_strbuf_append(sb, comment.data);
    }
    tosac_strbuf_appendc(sb, '\n');
    tosac_strbuf_free(&comment);
}

/* A tensor or shape value that no operator produces and that is not a block input. */
static void print_orphan(tosac_strbuf *sb, const tosac_value *v)
{
    tosac_strbuf comment;
    tosac_strbuf_init(&comment);
    tosac_strbuf_pad(sb, ' ', 4);
    tosac_fmt_value_ref(sb, v);
    tosac_strbuf_append(sb, " : ");
    tosac_fmt_type(sb, v);
    if (v->data) {
        fmt_const_suffix(sb, v, &comment);
        tosac_strbuf_append(&comment, ", ");
    }
    tosac_strbuf_append(&comment, "not produced by any operator");
    if (comment.failed) sb->failed = true;
    tosac_strbuf_append(sb, "  // ");
    tosac_strbuf_append(sb, comment.data ? comment.data : "");
    tosac_strbuf_appendc(sb, '\n');
    tosac_strbuf_free(&comment);
}

/* Marks which of the block's tensors (defined[0..n_tensors)) and shapes (after them) are defined. */
static void mark_defined(const tosac_block *b, const tosac_value *v, uint8_t *defined)
{
    if (!v || v->block != b || !v->declared) return;
    if (v->is_shape) {
        if (v->index < b->n_shapes && b->shapes[v->index] == v) defined[b->n_tensors + v->index] = 1;
    } else if (v->index < b->n_tensors && b->tensors[v->index] == v) {
        defined[v->index] = 1;
    }
}

static void print_block(tosac_strbuf *sb, const tosac_block *b)
{
    tosac_strbuf_append(sb, "  block ");
    tosac_strbuf_append_json_str(sb, b->name);
    tosac_strbuf_appendc(sb, '(');
    for (uint32_t i = 0; i < b->n_inputs; i++) {
        if (i) tosac_strbuf_append(sb, ", ");
        tosac_fmt_value_ref(sb, b->inputs[i]);
        tosac_strbuf_append(sb, ": ");
        tosac_fmt_type(sb, b->inputs[i]);
    }
    tosac_strbuf_append(sb, ") -> (");
    tosac_fmt_list(sb, b->outputs, b->n_outputs, tosac_fmt_value_ref);
    tosac_strbuf_append(sb, ") {\n");

    size_t n_vals = (size_t)b->n_tensors + b->n_shapes;
    uint8_t *defined = n_vals ? tosac_calloc(n_vals, 1) : NULL;
    if (n_vals && !defined) {
        sb->failed = true;
        return;
    }
    for (uint32_t i = 0; i < b->n_inputs; i++) mark_defined(b, b->inputs[i], defined);
    for (uint32_t i = 0; i < b->n_nodes; i++)
        for (uint32_t o = 0; o < b->nodes[i]->n_outputs; o++) mark_defined(b, b->nodes[i]->outputs[o], defined);
    for (uint32_t i = 0; i < b->n_tensors; i++)
        if (!defined[i]) print_orphan(sb, b->tensors[i]);
    for (uint32_t i = 0; i < b->n_shapes; i++)
        if (!defined[b->n_tensors + i]) print_orphan(sb, b->shapes[i]);
    tosac_free(defined, n_vals);

    for (uint32_t i = 0; i < b->n_nodes; i++) print_node(sb, b->nodes[i]);
    tosac_strbuf_append(sb, "  }\n");
}

char *tosac_graph_print(const tosac_graph *g)
{
    if (!g) return NULL;
    tosac_strbuf sb;
    tosac_strbuf_init(&sb);
    tosac_strbuf_appendf(&sb, "tosa %" PRId32 ".%" PRId32 ".%" PRId32 " (%s)\n", g->ver_major, g->ver_minor,
                         g->ver_patch, g->ver_draft ? "draft" : "final");
    for (uint32_t r = 0; r < g->n_regions; r++) {
        const tosac_region *reg = g->regions[r];
        tosac_strbuf_append(&sb, "region ");
        tosac_strbuf_append_json_str(&sb, reg->name);
        tosac_strbuf_append(&sb, " {\n");
        for (uint32_t bi = 0; bi < reg->n_blocks; bi++) print_block(&sb, reg->blocks[bi]);
        tosac_strbuf_append(&sb, "}\n");
    }
    return tosac_strbuf_take(&sb);
}
