/*
 * TOSA flatbuffer reader/writer: round trips (IR equal field by field, second write byte-identical)
 * for hand-built graphs and the example graph of every (op, type row); encoding details checked
 * with the byte-level reader; hostile inputs (truncations, random corruption, crafted headers,
 * lengths, offsets and values) must fail cleanly with a message.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "harness/op_graphs.h"
#include "harness/test.h"
#include "ir/graph.h"
#include "tosa/flatbuf.h"
#include "tosa/op_table.h"
#include "tosac/tosa_file.h"

/* ------------------------------------------------------------------------------------------ */
/* Helpers                                                                                      */

#define CHECKF(cond, ...)                                                  \
    do {                                                                   \
        t_checks++;                                                        \
        if (!(cond)) {                                                     \
            t_failures++;                                                  \
            fprintf(stderr, "%s:%d: %s failed: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
        }                                                                  \
    } while (0)

static void print_diag(const tosac_diag *d)
{
    for (size_t i = 0; i < tosac_diag_count(d); i++) fprintf(stderr, "  diag: %s\n", tosac_diag_message(d, i, NULL));
}

/* Last message of d, or "" */
static const char *last_msg(const tosac_diag *d)
{
    size_t n = tosac_diag_count(d);
    return n ? tosac_diag_message(d, n - 1, NULL) : "";
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void)
{
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* ------------------------------------------------------------------------------------------ */
/* Whole-IR comparison                                                                          */

static bool same_str(const char *a, const char *b) { return (!a && !b) || (a && b && !strcmp(a, b)); }

static bool same_bytes(const void *a, size_t na, const void *b, size_t nb)
{
    if (na != nb) return false;
    if (!na) return true;
    return a && b && !memcmp(a, b, na);
}

static void cmp_value(const tosac_value *a, const tosac_value *b, const char *ctx)
{
    CHECKF(same_str(a->name, b->name), "%s: name '%s' vs '%s'", ctx, a->name, b->name);
    CHECKF(a->dtype == b->dtype, "%s '%s': dtype %d vs %d", ctx, a->name, (int)a->dtype, (int)b->dtype);
    CHECKF(a->is_shape == b->is_shape && a->declared == b->declared, "%s '%s': kind", ctx, a->name);
    CHECKF(a->is_unranked == b->is_unranked && a->variable == b->variable, "%s '%s': flags", ctx, a->name);
    CHECKF(same_str(a->variable_name, b->variable_name), "%s '%s': variable_name", ctx, a->name);
    CHECKF(a->rank == b->rank, "%s '%s': rank %d vs %d", ctx, a->name, (int)a->rank, (int)b->rank);
    if (a->rank == b->rank && a->rank > 0)
        CHECKF(!memcmp(a->shape, b->shape, (size_t)a->rank * sizeof(int64_t)), "%s '%s': shape", ctx, a->name);
    CHECKF((a->data == NULL) == (b->data == NULL), "%s '%s': data presence", ctx, a->name);
    CHECKF(same_bytes(a->data, a->data_len, b->data, b->data_len), "%s '%s': data (%zu vs %zu bytes)", ctx, a->name,
           a->data_len, b->data_len);
    CHECKF(a->ext_offset == b->ext_offset && a->ext_size == b->ext_size, "%s '%s': offset/size", ctx, a->name);
    CHECKF(a->index == b->index, "%s '%s': index", ctx, a->name);
    CHECKF((a->producer == NULL) == (b->producer == NULL), "%s '%s': producer presence", ctx, a->name);
    if (a->producer && b->producer)
        CHECKF(a->producer->index == b->producer->index, "%s '%s': producer index", ctx, a->name);
}

static void cmp_operands(tosac_value *const *a, tosac_value *const *b, uint32_t n, const char *ctx)
{
    for (uint32_t i = 0; i < n; i++) {
        CHECKF(same_str(a[i]->name, b[i]->name), "%s[%u]: '%s' vs '%s'", ctx, (unsigned)i, a[i]->name, b[i]->name);
        CHECKF(a[i]->declared == b[i]->declared && a[i]->is_shape == b[i]->is_shape, "%s[%u]: kind", ctx,
               (unsigned)i);
    }
}

static void cmp_node(const tosac_node *a, const tosac_node *b, const char *ctx)
{
    CHECKF(a->op == b->op, "%s: op %u vs %u", ctx, (unsigned)a->op, (unsigned)b->op);
    CHECKF(a->attr_type == b->attr_type, "%s: attr_type %u vs %u", ctx, (unsigned)a->attr_type,
           (unsigned)b->attr_type);
    CHECKF(a->n_inputs == b->n_inputs && a->n_outputs == b->n_outputs, "%s: operand counts", ctx);
    if (a->n_inputs == b->n_inputs) cmp_operands(a->inputs, b->inputs, a->n_inputs, ctx);
    if (a->n_outputs == b->n_outputs) cmp_operands(a->outputs, b->outputs, a->n_outputs, ctx);
    CHECKF(same_str(a->location, b->location), "%s: location", ctx);
    for (unsigned id = 0; id < TOSAC_ATTR_MAX_FIELDS; id++) {
        const tosac_attr_val *x = &a->attr[id], *y = &b->attr[id];
        CHECKF(x->present == y->present, "%s: attr %u presence %d vs %d", ctx, id, x->present, y->present);
        if (!x->present || !y->present) continue;
        switch ((tosac_attr_kind)tosac_op_attr_kind(a->attr_type ? a->attr_type : a->op, id)) {
        case TOSAC_AK_I32V:
            CHECKF(same_bytes(x->data, (size_t)x->len * 4, y->data, (size_t)y->len * 4), "%s: attr %u", ctx, id);
            break;
        case TOSAC_AK_BYTES:
        case TOSAC_AK_BYTES8:
        case TOSAC_AK_STR:
            CHECKF(same_bytes(x->data, x->len, y->data, y->len), "%s: attr %u", ctx, id);
            break;
        default:
            CHECKF(x->i == y->i, "%s: attr %u = %lld vs %lld", ctx, id, (long long)x->i, (long long)y->i);
            break;
        }
    }
}

static void cmp_block(const tosac_block *a, const tosac_block *b, const char *ctx)
{
    char c[160];
    CHECKF(same_str(a->name, b->name), "%s: name", ctx);
    CHECKF(a->n_tensors == b->n_tensors, "%s: %u vs %u tensors", ctx, (unsigned)a->n_tensors, (unsigned)b->n_tensors);
    CHECKF(a->n_shapes == b->n_shapes, "%s: shapes count", ctx);
    CHECKF(a->n_undeclared == b->n_undeclared, "%s: undeclared count", ctx);
    CHECKF(a->n_nodes == b->n_nodes, "%s: %u vs %u operators", ctx, (unsigned)a->n_nodes, (unsigned)b->n_nodes);
    CHECKF(a->n_inputs == b->n_inputs && a->n_outputs == b->n_outputs, "%s: I/O counts", ctx);
    for (uint32_t i = 0; i < a->n_tensors && i < b->n_tensors; i++) {
        snprintf(c, sizeof c, "%s.tensors[%u]", ctx, (unsigned)i);
        cmp_value(a->tensors[i], b->tensors[i], c);
    }
    for (uint32_t i = 0; i < a->n_shapes && i < b->n_shapes; i++) {
        snprintf(c, sizeof c, "%s.shapes[%u]", ctx, (unsigned)i);
        cmp_value(a->shapes[i], b->shapes[i], c);
    }
    for (uint32_t i = 0; i < a->n_undeclared && i < b->n_undeclared; i++) {
        snprintf(c, sizeof c, "%s.undeclared[%u]", ctx, (unsigned)i);
        cmp_value(a->undeclared[i], b->undeclared[i], c);
    }
    if (a->n_inputs == b->n_inputs) cmp_operands(a->inputs, b->inputs, a->n_inputs, ctx);
    if (a->n_outputs == b->n_outputs) cmp_operands(a->outputs, b->outputs, a->n_outputs, ctx);
    for (uint32_t i = 0; i < a->n_nodes && i < b->n_nodes; i++) {
        snprintf(c, sizeof c, "%s.operators[%u]", ctx, (unsigned)i);
        cmp_node(a->nodes[i], b->nodes[i], c);
    }
}

static void cmp_graph(const tosac_graph *a, const tosac_graph *b, const char *ctx)
{
    CHECKF(a->ver_major == b->ver_major && a->ver_minor == b->ver_minor && a->ver_patch == b->ver_patch &&
               a->ver_draft == b->ver_draft,
           "%s: version", ctx);
    CHECKF(a->n_regions == b->n_regions, "%s: regions", ctx);
    for (uint32_t r = 0; r < a->n_regions && r < b->n_regions; r++) {
        CHECKF(same_str(a->regions[r]->name, b->regions[r]->name), "%s: region %u name", ctx, (unsigned)r);
        CHECKF(a->regions[r]->n_blocks == b->regions[r]->n_blocks, "%s: region %u blocks", ctx, (unsigned)r);
        for (uint32_t i = 0; i < a->regions[r]->n_blocks && i < b->regions[r]->n_blocks; i++) {
            char c[96];
            snprintf(c, sizeof c, "%s regions[%u].blocks[%u]", ctx, (unsigned)r, (unsigned)i);
            cmp_block(a->regions[r]->blocks[i], b->regions[r]->blocks[i], c);
        }
    }
}

/*
 * write -> read -> compare with `g` -> write -> identical bytes -> read -> compare.
 * `g` must have its producers linked. Returns true if everything held.
 */
static bool round_trip(tosac_graph *g, const char *ctx)
{
    int before = t_failures;
    tosac_diag *d = tosac_diag_create();
    uint8_t *b1 = NULL, *b2 = NULL;
    size_t n1 = 0, n2 = 0;
    tosac_graph *r1 = NULL, *r2 = NULL;
    tosac_graph_link(g);
    tosac_status st = tosac_tosa_write_mem(g, &b1, &n1, d);
    CHECKF(st == TOSAC_OK, "%s: write: %s", ctx, last_msg(d));
    if (st == TOSAC_OK) {
        st = tosac_tosa_read_mem(b1, n1, ctx, NULL, &r1, d);
        CHECKF(st == TOSAC_OK, "%s: read: %s", ctx, last_msg(d));
    }
    if (r1) {
        cmp_graph(g, r1, ctx);
        st = tosac_tosa_write_mem(r1, &b2, &n2, d);
        CHECKF(st == TOSAC_OK, "%s: rewrite: %s", ctx, last_msg(d));
        CHECKF(same_bytes(b1, n1, b2, n2), "%s: rewrite differs (%zu vs %zu bytes)", ctx, n1, n2);
        if (b2 && tosac_tosa_read_mem(b2, n2, ctx, NULL, &r2, d) == TOSAC_OK) cmp_graph(r1, r2, ctx);
    }
    tosac_graph_destroy(r1);
    tosac_graph_destroy(r2);
    tosac_buffer_free(b1, n1);
    tosac_buffer_free(b2, n2);
    tosac_diag_destroy(d);
    return t_failures == before;
}

/* ------------------------------------------------------------------------------------------ */
/* Hand-built graphs                                                                            */

/* A quantized conv block: CONST weights/bias/zps, CONV2D, RESCALE, CLAMP, RESHAPE with CONST_SHAPE. */
static tosac_graph *build_conv_graph(void)
{
    tosac_graph *g = tosac_graph_create();
    tosac_region *r = tosac_graph_add_region(g, "main");
    tosac_block *b = tosac_region_add_block(r, "main");
    int64_t in_shape[4] = {1, 4, 4, 2}, w_shape[4] = {3, 3, 3, 2}, b_shape[1] = {3}, one[1] = {1};
    int64_t acc_shape[4] = {1, 4, 4, 3}, out_shape[2] = {16, 3};
    tosac_value *x = tosac_block_add_tensor(b, "input", TOSAC_DTYPE_INT8, 4, in_shape);
    int8_t w[54];
    for (int i = 0; i < 54; i++) w[i] = (int8_t)(i * 7 - 100);
    tosac_value *wv = tosac_block_add_const(b, "weight", TOSAC_DTYPE_INT8, 4, w_shape, w, sizeof w);
    uint8_t bias[12] = {1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x10, 0x20, 0x30, 0x40};
    tosac_value *bv = tosac_block_add_const(b, "bias", TOSAC_DTYPE_INT32, 1, b_shape, bias, sizeof bias);
    int8_t izp = -3, wzp = 0;
    tosac_value *izpv = tosac_block_add_const(b, "input_zp", TOSAC_DTYPE_INT8, 1, one, &izp, 1);
    tosac_value *wzpv = tosac_block_add_const(b, "weight_zp", TOSAC_DTYPE_INT8, 1, one, &wzp, 1);
    tosac_value *acc = tosac_block_add_tensor(b, "acc", TOSAC_DTYPE_INT32, 4, acc_shape);
    tosac_value *ins[5] = {x, wv, bv, izpv, wzpv};
    tosac_node *conv = tosac_block_add_node(b, TOSAC_OP_CONV2D, 5, ins, 1, &acc);
    int32_t pad[4] = {1, 1, 1, 1}, stride[2] = {1, 1}, dil[2] = {1, 1};
    tosac_node_set_ints(conv, TOSAC_ATTR_CONV2D_pad, pad, 4);
    tosac_node_set_ints(conv, TOSAC_ATTR_CONV2D_stride, stride, 2);
    tosac_node_set_ints(conv, TOSAC_ATTR_CONV2D_dilation, dil, 2);
    tosac_node_set_int(conv, TOSAC_ATTR_CONV2D_acc_type, TOSAC_DTYPE_INT32);
    tosac_node_set_int(conv, TOSAC_ATTR_CONV2D_local_bound, 0); /* explicit false */
    tosac_node_set_location(conv, "model.onnx:Conv_0");

    int32_t mult[3] = {1073741824, 1518500250, 2147483647};
    int8_t shift[3] = {33, 34, 40};
    tosac_value *mv = tosac_block_add_const(b, "mult", TOSAC_DTYPE_INT32, 1, b_shape, mult, sizeof mult);
    tosac_value *sv = tosac_block_add_const(b, "shift", TOSAC_DTYPE_INT8, 1, b_shape, shift, sizeof shift);
    int32_t rizp = 0;
    int8_t rozp = 5;
    tosac_value *rizpv = tosac_block_add_const(b, "rs_izp", TOSAC_DTYPE_INT32, 1, one, &rizp, 4);
    tosac_value *rozpv = tosac_block_add_const(b, "rs_ozp", TOSAC_DTYPE_INT8, 1, one, &rozp, 1);
    tosac_value *q = tosac_block_add_tensor(b, "q", TOSAC_DTYPE_INT8, 4, acc_shape);
    tosac_value *rins[5] = {acc, mv, sv, rizpv, rozpv};
    tosac_node *rs = tosac_block_add_node(b, TOSAC_OP_RESCALE, 5, rins, 1, &q);
    tosac_node_set_int(rs, TOSAC_ATTR_RESCALE_scale32, 1);
    tosac_node_set_int(rs, TOSAC_ATTR_RESCALE_rounding_mode, TOSAC_ROUND_DOUBLE);
    tosac_node_set_int(rs, TOSAC_ATTR_RESCALE_per_channel, 1);

    tosac_value *c = tosac_block_add_tensor(b, "clamped", TOSAC_DTYPE_INT8, 4, acc_shape);
    tosac_node *cl = tosac_block_add_node(b, TOSAC_OP_CLAMP, 1, &q, 1, &c);
    int8_t lo = -128, hi = 100;
    tosac_node_set_bytes(cl, TOSAC_ATTR_CLAMP_min_val, &lo, 1);
    tosac_node_set_bytes(cl, TOSAC_ATTR_CLAMP_max_val, &hi, 1);
    tosac_node_set_int(cl, TOSAC_ATTR_CLAMP_nan_mode, TOSAC_NAN_PROPAGATE);

    int64_t ns[2] = {16, 3};
    tosac_value *shp = tosac_block_add_const_shape(b, "new_shape", ns, 2);
    tosac_value *y = tosac_block_add_tensor(b, "output", TOSAC_DTYPE_INT8, 2, out_shape);
    tosac_value *rsh_in[2] = {c, shp};
    tosac_block_add_node(b, TOSAC_OP_RESHAPE, 2, rsh_in, 1, &y);
    tosac_block_add_input(b, x);
    tosac_block_add_output(b, y);
    return g;
}

/* Everything else the format can carry. */
static tosac_graph *build_misc_graph(void)
{
    tosac_graph *g = tosac_graph_create();
    tosac_graph_set_version(g, 1, 1, 0, true);
    tosac_region *r = tosac_graph_add_region(g, "main");
    tosac_block *b = tosac_region_add_block(r, "main");
    int64_t s1[1] = {1}, s3[1] = {3}, s5[1] = {5}, s0[1] = {0}, s22[2] = {2, 2};
    tosac_value *cond = tosac_block_add_tensor(b, "cond", TOSAC_DTYPE_BOOL, 1, s1);
    tosac_value *a = tosac_block_add_tensor(b, "a", TOSAC_DTYPE_FP32, 2, s22);
    tosac_value *out = tosac_block_add_tensor(b, "out", TOSAC_DTYPE_FP32, 2, s22);
    /* sub-byte / odd-sized constants: padding must be dropped again on read */
    uint8_t i4[3] = {0x21, 0x43, 0x05}; /* 5 INT4 values */
    tosac_block_add_const(b, "i4", TOSAC_DTYPE_INT4, 1, s5, i4, 3);
    uint8_t i48[18] = {1, 2, 3, 4, 5, 6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0x80};
    tosac_block_add_const(b, "i48", TOSAC_DTYPE_INT48, 1, s3, i48, 18);
    uint8_t bools[3] = {1, 0, 1};
    tosac_block_add_const(b, "bools", TOSAC_DTYPE_BOOL, 1, s3, bools, 3);
    uint16_t h[3] = {0x3c00, 0xc000, 0x7e00};
    tosac_block_add_const(b, "halfs", TOSAC_DTYPE_FP16, 1, s3, h, 6);
    tosac_block_add_const(b, "empty", TOSAC_DTYPE_INT8, 1, s0, "", 0);
    float sc = 2.5f;
    tosac_block_add_const(b, "scalar", TOSAC_DTYPE_FP32, 0, NULL, &sc, 4);
    tosac_block_add_const_shape(b, "empty_shape", NULL, 0);
    /* a shape value without data (produced at run time) */
    tosac_block_add_shape(b, "dyn_shape", 4);
    /* a variable tensor with the late optional fields */
    tosac_value *var = tosac_block_add_tensor(b, "var", TOSAC_DTYPE_INT16, 2, s22);
    var->variable = true;
    var->variable_name = "state0";
    var->ext_offset = 4096;
    var->ext_size = 1ull << 33;
    tosac_value *unr = tosac_block_add_tensor(b, "unranked", TOSAC_DTYPE_FP32, 0, NULL);
    unr->is_unranked = true;
    int64_t neg[3] = {-1, 0, 2147483647};
    tosac_block_add_tensor(b, "odd_dims", TOSAC_DTYPE_FP8E5M2, 3, neg);
    tosac_block_add_tensor(b, "", TOSAC_DTYPE_UNKNOWN, 0, NULL);

    /* COND_IF naming two other regions */
    tosac_value *cin[2] = {cond, a};
    tosac_node *ci = tosac_block_add_node(b, TOSAC_OP_COND_IF, 2, cin, 1, &out);
    tosac_node_set_str(ci, TOSAC_ATTR_COND_IF_then_graph, "then_region");
    tosac_node_set_str(ci, TOSAC_ATTR_COND_IF_else_graph, "else_region");
    /* CUSTOM with strings and opaque bytes (an embedded NUL in a string is kept by length) */
    tosac_value *cout = tosac_block_add_tensor(b, "custom_out", TOSAC_DTYPE_FP32, 2, s22);
    tosac_node *cu = tosac_block_add_node(b, TOSAC_OP_CUSTOM, 1, &a, 1, &cout);
    tosac_node_set_str(cu, TOSAC_ATTR_CUSTOM_operator_name, "my.op");
    static const char dom[] = "dom\0ain";
    cu->attr[TOSAC_ATTR_CUSTOM_domain_name] = (tosac_attr_val){true, 0, dom, 7};
    uint8_t impl[5] = {0, 1, 2, 254, 255};
    tosac_node_set_bytes(cu, TOSAC_ATTR_CUSTOM_implementation_attrs, impl, 5);
    tosac_node_set_location(cu, "");
    /* an operand that is never declared (placeholder) */
    tosac_value *ph = tosac_block_get_or_placeholder(b, "undeclared_x");
    tosac_value *idout = tosac_block_add_tensor(b, "id_out", TOSAC_DTYPE_FP32, 2, s22);
    tosac_block_add_node(b, TOSAC_OP_IDENTITY, 1, &ph, 1, &idout);
    /* enum/int attributes at their extremes */
    tosac_value *am = tosac_block_add_tensor(b, "am", TOSAC_DTYPE_INT32, 1, s1);
    tosac_node *ax = tosac_block_add_node(b, TOSAC_OP_ARGMAX, 1, &a, 1, &am);
    tosac_node_set_int(ax, TOSAC_ATTR_ARGMAX_axis, INT32_MIN);
    tosac_node_set_int(ax, TOSAC_ATTR_ARGMAX_nan_mode, UINT32_MAX);
    tosac_value *tr = tosac_block_add_tensor(b, "tr", TOSAC_DTYPE_FP32, 2, s22);
    tosac_node *tp = tosac_block_add_node(b, TOSAC_OP_TRANSPOSE, 1, &a, 1, &tr);
    tosac_node_set_ints(tp, TOSAC_ATTR_TRANSPOSE_perms, NULL, 0); /* present but empty */
    tosac_value *rz = tosac_block_add_tensor(b, "rz", TOSAC_DTYPE_FP32, 2, s22);
    tosac_node *rzn = tosac_block_add_node(b, TOSAC_OP_RESIZE, 1, &a, 1, &rz);
    tosac_node_set_int(rzn, TOSAC_ATTR_RESIZE_mode, TOSAC_RESIZE_BILINEAR);
    tosac_value *ff[2] = {tosac_block_add_tensor(b, "fr", TOSAC_DTYPE_FP32, 2, s22),
                          tosac_block_add_tensor(b, "fi", TOSAC_DTYPE_FP32, 2, s22)};
    tosac_node *fft = tosac_block_add_node(b, TOSAC_OP_FFT2D, 2, (tosac_value *[]){a, a}, 2, ff);
    tosac_node_set_int(fft, TOSAC_ATTR_FFT2D_inverse, 1);
    tosac_node_set_int(fft, TOSAC_ATTR_FFT2D_local_bound, 1);
    /* an operator with no operands at all, and one whose output is also a block input */
    tosac_block_add_node(b, TOSAC_OP_VARIABLE, 0, NULL, 0, NULL);
    tosac_block_add_input(b, cond);
    tosac_block_add_input(b, a);
    tosac_block_add_output(b, out);
    tosac_block_add_output(b, a);

    tosac_region *rt = tosac_graph_add_region(g, "then_region");
    tosac_block *bt = tosac_region_add_block(rt, "then_bb");
    tosac_value *ta = tosac_block_add_tensor(bt, "a", TOSAC_DTYPE_FP32, 2, s22);
    tosac_value *to = tosac_block_add_tensor(bt, "o", TOSAC_DTYPE_FP32, 2, s22);
    tosac_block_add_node(bt, TOSAC_OP_IDENTITY, 1, &ta, 1, &to);
    tosac_block_add_input(bt, ta);
    tosac_block_add_output(bt, to);
    tosac_region *re = tosac_graph_add_region(g, "else_region");
    tosac_block *be = tosac_region_add_block(re, "else_bb");
    tosac_value *ea = tosac_block_add_tensor(be, "a", TOSAC_DTYPE_FP32, 2, s22);
    tosac_value *eo = tosac_block_add_tensor(be, "o", TOSAC_DTYPE_FP32, 2, s22);
    tosac_block_add_node(be, TOSAC_OP_NEGATE, 1, &ea, 1, &eo);
    tosac_block_add_input(be, ea);
    tosac_block_add_output(be, eo);
    /* an empty block and an empty region */
    tosac_region_add_block(re, "unused_bb");
    tosac_graph_add_region(g, "empty_region");
    return g;
}

static void round_trip_hand_built(void)
{
    tosac_graph *g = build_conv_graph();
    EXPECT(round_trip(g, "conv"));
    tosac_graph_destroy(g);
    g = build_misc_graph();
    EXPECT(round_trip(g, "misc"));
    tosac_graph_destroy(g);
    g = tosac_graph_create(); /* no regions at all */
    EXPECT(round_trip(g, "empty"));
    tosac_graph_destroy(g);
}

/* A node whose union tag is NONE is written with its op's (empty) table and read back tagged. */
static void tag_none_and_mismatch(void)
{
    tosac_graph *g = tosac_graph_create();
    tosac_block *b = tosac_region_add_block(tosac_graph_add_region(g, "main"), "main");
    tosac_value *x = tosac_block_add_tensor(b, "x", TOSAC_DTYPE_INT32, 0, NULL);
    tosac_value *y = tosac_block_add_tensor(b, "y", TOSAC_DTYPE_INT32, 0, NULL);
    tosac_node *n = tosac_block_add_node(b, TOSAC_OP_ADD, 2, (tosac_value *[]){x, x}, 1, &y);
    n->attr_type = 0;
    /* a node tagged with another op's table: fields follow the tag's table */
    tosac_node *m = tosac_block_add_node(b, TOSAC_OP_IDENTITY, 1, &x, 1, &y);
    m->attr_type = TOSAC_OP_REDUCE_SUM;
    m->attr[TOSAC_ATTR_REDUCE_SUM_axis] = (tosac_attr_val){true, 3, NULL, 0};
    tosac_diag *d = tosac_diag_create();
    uint8_t *buf;
    size_t len;
    tosac_graph *r = NULL;
    EXPECT(tosac_tosa_write_mem(g, &buf, &len, d) == TOSAC_OK);
    EXPECT(tosac_tosa_read_mem(buf, len, "tag.tosa", NULL, &r, d) == TOSAC_OK);
    if (r) {
        tosac_block *rb = r->regions[0]->blocks[0];
        EXPECT_EQ_I(rb->nodes[0]->op, TOSAC_OP_ADD);
        EXPECT_EQ_I(rb->nodes[0]->attr_type, TOSAC_OP_ADD);
        EXPECT_EQ_I(rb->nodes[1]->op, TOSAC_OP_IDENTITY);
        EXPECT_EQ_I(rb->nodes[1]->attr_type, TOSAC_OP_REDUCE_SUM);
        EXPECT(rb->nodes[1]->attr[0].present && rb->nodes[1]->attr[0].i == 3);
    }
    tosac_graph_destroy(r);
    tosac_buffer_free(buf, len);
    tosac_diag_destroy(d);
    tosac_graph_destroy(g);
}

/* ------------------------------------------------------------------------------------------ */
/* Encoding details, checked with the byte-level reader                                         */

typedef struct walk {
    fb_reader r;
    fb_table root, block;
} walk;

static bool walk_block(walk *w, const uint8_t *buf, size_t len, uint32_t region, uint32_t block)
{
    memset(w, 0, sizeof(*w));
    w->r.buf = buf;
    w->r.len = len;
    fb_vec v;
    fb_table reg;
    return fb_root(&w->r, "TOSA", &w->root) == TOSAC_OK && fb_get_vector(&w->root, 1, 4, &v, NULL) == TOSAC_OK &&
           fb_vec_table(&v, region, &reg, NULL) == TOSAC_OK && fb_get_vector(&reg, 1, 4, &v, NULL) == TOSAC_OK &&
           fb_vec_table(&v, block, &w->block, NULL) == TOSAC_OK;
}

static void encoding_details(void)
{
    tosac_graph *g = build_conv_graph();
    tosac_diag *d = tosac_diag_create();
    uint8_t *buf = NULL;
    size_t len = 0;
    EXPECT(tosac_tosa_write_mem(g, &buf, &len, d) == TOSAC_OK);
    EXPECT(!memcmp(buf + 4, "TOSA", 4));
    EXPECT_EQ_I(len % 8, 0);
    walk w;
    EXPECT(walk_block(&w, buf, len, 0, 0));
    /* Version: all four fields written explicitly */
    fb_table ver;
    bool has = false;
    EXPECT(fb_get_table(&w.root, 0, &ver, &has, NULL) == TOSAC_OK && has);
    for (unsigned id = 0; id < 4; id++) EXPECT(fb_has_field(&ver, id));
    int32_t major = -1, minor = -1, patch = -1;
    bool draft = true;
    fb_get_i32(&ver, 0, -1, &major, NULL, NULL);
    fb_get_i32(&ver, 1, -1, &minor, NULL, NULL);
    fb_get_i32(&ver, 2, -1, &patch, NULL, NULL);
    fb_get_bool(&ver, 3, true, &draft, NULL, NULL);
    EXPECT(major == 1 && minor == 0 && patch == 0 && !draft);
    /* every block vector is present, shapes included */
    for (unsigned id = 0; id <= 5; id++) EXPECT(fb_has_field(&w.block, id));
    /* tensor data: 8-aligned payload, padded to a multiple of 8 with zeros; optional fields absent */
    fb_vec tensors;
    EXPECT(fb_get_vector(&w.block, 2, 4, &tensors, NULL) == TOSAC_OK);
    unsigned with_data = 0;
    for (uint32_t i = 0; i < tensors.count; i++) {
        fb_table t;
        fb_vec data;
        EXPECT(fb_vec_table(&tensors, i, &t, NULL) == TOSAC_OK);
        EXPECT(fb_has_field(&t, 0) && fb_has_field(&t, 1) && fb_has_field(&t, 2));
        for (unsigned id = 4; id <= 8; id++) EXPECT(!fb_has_field(&t, id));
        EXPECT(fb_get_vector(&t, 3, 1, &data, NULL) == TOSAC_OK);
        if (!data.pos) continue;
        with_data++;
        EXPECT_EQ_I(data.pos % 8, 0);
        EXPECT_EQ_I(data.count % 8, 0);
        const tosac_value *v = g->regions[0]->blocks[0]->tensors[i];
        EXPECT(data.count >= v->data_len && data.count < v->data_len + 8);
        EXPECT(!memcmp(fb_vec_data(&data), v->data, v->data_len));
        for (size_t k = v->data_len; k < data.count; k++) EXPECT(fb_vec_data(&data)[k] == 0);
    }
    EXPECT_EQ_I(with_data, 8);
    /* TosaShape: rank = element count, 8-aligned int64 data */
    fb_vec shapes;
    fb_table s;
    fb_vec sd;
    uint32_t rank = 0;
    EXPECT(fb_get_vector(&w.block, 5, 4, &shapes, NULL) == TOSAC_OK && shapes.count == 1);
    EXPECT(fb_vec_table(&shapes, 0, &s, NULL) == TOSAC_OK);
    EXPECT(fb_get_u32(&s, 1, 0, &rank, NULL, NULL) == TOSAC_OK && rank == 2);
    EXPECT(fb_get_vector(&s, 2, 1, &sd, NULL) == TOSAC_OK && sd.count == 16 && sd.pos % 8 == 0);
    EXPECT(fb_le_i64(fb_vec_data(&sd)) == 16 && fb_le_i64(fb_vec_data(&sd) + 8) == 3);
    /* operators: CLAMP min/max 8-aligned; CONV2D fields; attribute tables always present */
    fb_vec ops;
    EXPECT(fb_get_vector(&w.block, 1, 4, &ops, NULL) == TOSAC_OK);
    EXPECT_EQ_I(ops.count, g->regions[0]->blocks[0]->n_nodes);
    for (uint32_t i = 0; i < ops.count; i++) {
        fb_table o, at;
        uint32_t op = 0;
        uint8_t tag = 0;
        EXPECT(fb_vec_table(&ops, i, &o, NULL) == TOSAC_OK);
        fb_get_u32(&o, 0, 0, &op, NULL, NULL);
        fb_get_u8(&o, 1, 0, &tag, NULL, NULL);
        EXPECT_EQ_I(op, tag);
        EXPECT(fb_get_table(&o, 2, &at, &has, NULL) == TOSAC_OK && has);
        EXPECT(fb_has_field(&o, 3) && fb_has_field(&o, 4));
        EXPECT(fb_has_field(&o, 5) == (op == TOSAC_OP_CONV2D));
        if (op == TOSAC_OP_CLAMP) {
            fb_vec mn, mx;
            EXPECT(fb_get_vector(&at, 0, 1, &mn, NULL) == TOSAC_OK && mn.count == 1 && mn.pos % 8 == 0);
            EXPECT(fb_get_vector(&at, 1, 1, &mx, NULL) == TOSAC_OK && mx.count == 1 && mx.pos % 8 == 0);
            EXPECT(fb_vec_u8(&mn, 0) == 0x80 && fb_vec_u8(&mx, 0) == 100);
        }
        if (op == TOSAC_OP_CONV2D) {
            fb_vec pad;
            uint32_t acc = 0;
            bool lb = true, lb_present = false;
            EXPECT(fb_get_vector(&at, 0, 4, &pad, NULL) == TOSAC_OK && pad.count == 4 && fb_vec_i32(&pad, 3) == 1);
            EXPECT(fb_get_u32(&at, 4, 0, &acc, NULL, NULL) == TOSAC_OK && acc == TOSAC_DTYPE_INT32);
            EXPECT(fb_get_bool(&at, 3, true, &lb, &lb_present, NULL) == TOSAC_OK && lb_present && !lb);
        }
        if (op == TOSAC_OP_CONST) EXPECT_EQ_I(at.vt_len, 4); /* empty table: no fields */
    }
    tosac_buffer_free(buf, len);
    tosac_diag_destroy(d);
    tosac_graph_destroy(g);
}

/* Deterministic: two writes of one graph and of two identically built graphs give equal bytes. */
static void deterministic(void)
{
    tosac_graph *g1 = build_misc_graph(), *g2 = build_misc_graph();
    uint8_t *a = NULL, *b = NULL, *c = NULL;
    size_t na = 0, nb = 0, nc = 0;
    EXPECT(tosac_tosa_write_mem(g1, &a, &na, NULL) == TOSAC_OK);
    EXPECT(tosac_tosa_write_mem(g1, &b, &nb, NULL) == TOSAC_OK);
    EXPECT(tosac_tosa_write_mem(g2, &c, &nc, NULL) == TOSAC_OK);
    EXPECT(same_bytes(a, na, b, nb) && same_bytes(a, na, c, nc));
    tosac_buffer_free(a, na);
    tosac_buffer_free(b, nb);
    tosac_buffer_free(c, nc);
    tosac_graph_destroy(g1);
    tosac_graph_destroy(g2);
}

/* ------------------------------------------------------------------------------------------ */
/* Writer errors                                                                                */

static void expect_write_error(tosac_graph *g, tosac_status want, const char *needle)
{
    tosac_diag *d = tosac_diag_create();
    uint8_t *buf = (uint8_t *)"untouched";
    size_t len = 12345;
    tosac_status st = tosac_tosa_write_mem(g, &buf, &len, d);
    CHECKF(st == want, "status %s, want %s (%s)", tosac_status_str(st), tosac_status_str(want), last_msg(d));
    CHECKF(strstr(last_msg(d), needle) != NULL, "message '%s' lacks '%s'", last_msg(d), needle);
    EXPECT(len == 12345 && !strcmp((const char *)buf, "untouched"));
    tosac_diag_destroy(d);
    tosac_graph_destroy(g);
}

static void writer_errors(void)
{
    tosac_graph *g = build_conv_graph();
    g->regions[0]->blocks[0]->nodes[2]->op = 0;
    expect_write_error(g, TOSAC_ERR_INVALID_ARG, "regions[0].blocks[0].operators[2]: operator number 0");
    g = build_conv_graph();
    g->regions[0]->blocks[0]->nodes[2]->op = 76;
    expect_write_error(g, TOSAC_ERR_INVALID_ARG, "operator number 76 is not a TOSA 1.0 operator");
    g = build_conv_graph();
    g->regions[0]->blocks[0]->nodes[2]->attr_type = 99;
    expect_write_error(g, TOSAC_ERR_INVALID_ARG, "attribute type tag 99");
    g = build_conv_graph();
    g->regions[0]->blocks[0]->tensors[0]->shape[1] = (int64_t)1 << 31;
    expect_write_error(g, TOSAC_ERR_UNSUPPORTED, "tensors[0]: tensor 'input': dimension 1 is 2147483648");
    g = build_conv_graph();
    g->regions[0]->blocks[0]->tensors[0]->shape[2] = INT32_MIN - (int64_t)1;
    expect_write_error(g, TOSAC_ERR_UNSUPPORTED, "does not fit the file's int32");
    g = build_misc_graph();
    tosac_node *ax = NULL;
    tosac_block *b = g->regions[0]->blocks[0];
    for (uint32_t i = 0; i < b->n_nodes; i++)
        if (b->nodes[i]->op == TOSAC_OP_ARGMAX) ax = b->nodes[i];
    ax->attr[TOSAC_ATTR_ARGMAX_axis].i = (int64_t)INT32_MAX + 1;
    expect_write_error(g, TOSAC_ERR_UNSUPPORTED, "attribute axis = 2147483648 does not fit int32");
    g = build_misc_graph();
    b = g->regions[0]->blocks[0];
    for (uint32_t i = 0; i < b->n_nodes; i++)
        if (b->nodes[i]->op == TOSAC_OP_ARGMAX) ax = b->nodes[i];
    ax->attr[TOSAC_ATTR_ARGMAX_nan_mode].i = -1;
    expect_write_error(g, TOSAC_ERR_UNSUPPORTED, "attribute nan_mode = -1");
    g = build_misc_graph();
    b = g->regions[0]->blocks[0];
    for (uint32_t i = 0; i < b->n_nodes; i++)
        if (b->nodes[i]->op == TOSAC_OP_ARGMAX) ax = b->nodes[i];
    ax->attr[5].present = true;
    expect_write_error(g, TOSAC_ERR_INVALID_ARG, "attribute field 5 is not a field of ArgMaxAttribute");
    g = build_conv_graph();
    g->regions[0]->blocks[0]->shapes[0]->data_len = 8;
    expect_write_error(g, TOSAC_ERR_INVALID_ARG, "shape value 'new_shape' has 8 data bytes, expected 16");
    /* bad arguments */
    tosac_diag *d = tosac_diag_create();
    uint8_t *buf;
    size_t len;
    EXPECT(tosac_tosa_write_mem(NULL, &buf, &len, d) == TOSAC_ERR_INVALID_ARG);
    EXPECT(tosac_diag_count(d) == 1);
    tosac_diag_destroy(d);
    tosac_buffer_free(NULL, 0);
}

/* ------------------------------------------------------------------------------------------ */
/* Files                                                                                        */

static char g_tmpdir[64];

static unsigned count_dir_entries(const char *dir, const char *needle)
{
    unsigned n = 0;
    DIR *dp = opendir(dir);
    if (!dp) return 0;
    struct dirent *e;
    while ((e = readdir(dp)) != NULL)
        if (strstr(e->d_name, needle)) n++;
    closedir(dp);
    return n;
}

/* Large constants (written from where they live, not copied into the builder) give the same
   bytes in a file as in memory, and read back intact; lengths with and without padding, a big
   shape value and an attribute-sized one. */
static void large_constants_file(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/big.tosa", g_tmpdir);
    tosac_graph *g = tosac_graph_create();
    tosac_block *b = tosac_region_add_block(tosac_graph_add_region(g, "main"), "main");
    static int8_t a[5003], c[8192];
    for (size_t k = 0; k < sizeof a; k++) a[k] = (int8_t)(k * 7 + 1);
    for (size_t k = 0; k < sizeof c; k++) c[k] = (int8_t)(k * 13 + 5);
    int64_t sa = (int64_t)sizeof a, sc = (int64_t)sizeof c;
    tosac_value *va = tosac_block_add_const(b, "a", TOSAC_DTYPE_INT8, 1, &sa, a, sizeof a);
    tosac_value *vc = tosac_block_add_const(b, "c", TOSAC_DTYPE_INT8, 1, &sc, c, sizeof c);
    int64_t dims[600];
    for (int k = 0; k < 600; k++) dims[k] = k + 1;
    tosac_value *vs = tosac_block_add_const_shape(b, "s", dims, 600);
    tosac_block_add_output(b, va);
    tosac_block_add_output(b, vc);
    tosac_block_add_output(b, vs);
    tosac_diag *d = tosac_diag_create();
    uint8_t *mem = NULL;
    size_t len = 0;
    EXPECT(tosac_tosa_write_mem(g, &mem, &len, d) == TOSAC_OK);
    EXPECT(tosac_tosa_write_file(g, path, d) == TOSAC_OK);
    FILE *f = fopen(path, "rb");
    uint8_t *disk = mem ? malloc(len + 1) : NULL;
    size_t got = f && disk ? fread(disk, 1, len + 1, f) : 0;
    if (f) fclose(f);
    EXPECT(got == len && disk && mem && !memcmp(disk, mem, len));
    tosac_graph *r = NULL;
    EXPECT(tosac_tosa_read_file(path, NULL, &r, d) == TOSAC_OK);
    if (r) {
        tosac_graph_link(g);
        cmp_graph(g, r, "large constants");
    }
    tosac_graph_destroy(r);
    free(disk);
    tosac_buffer_free(mem, len);
    tosac_diag_destroy(d);
    tosac_graph_destroy(g);
}

static void files(void)
{
    char path[256], missing[256];
    snprintf(path, sizeof path, "%s/conv.tosa", g_tmpdir);
    snprintf(missing, sizeof missing, "%s/no/such/dir/x.tosa", g_tmpdir);
    tosac_graph *g = build_conv_graph();
    tosac_graph *m = build_misc_graph();
    tosac_diag *d = tosac_diag_create();
    /* write, replace atomically, read back */
    EXPECT(tosac_tosa_write_file(m, path, d) == TOSAC_OK);
    EXPECT(tosac_tosa_write_file(g, path, d) == TOSAC_OK);
    EXPECT_EQ_I(count_dir_entries(g_tmpdir, ".tmp-"), 0);
    tosac_graph *r = NULL;
    EXPECT(tosac_tosa_read_file(path, NULL, &r, d) == TOSAC_OK);
    if (r) {
        tosac_graph_link(g);
        cmp_graph(g, r, "file");
    }
    tosac_graph_destroy(r);
    r = NULL;
    /* the size limit applies before the file is loaded */
    struct stat sb;
    EXPECT(stat(path, &sb) == 0);
    tosac_read_opts small = {(size_t)sb.st_size - 1, 0};
    EXPECT(tosac_tosa_read_file(path, &small, &r, d) == TOSAC_ERR_NOMEM);
    EXPECT(strstr(last_msg(d), "over the limit") != NULL);
    /* errors: no directory, a directory, a missing file */
    tosac_diag_clear(d);
    EXPECT(tosac_tosa_write_file(g, missing, d) == TOSAC_ERR_IO);
    EXPECT(strstr(last_msg(d), missing) != NULL);
    EXPECT(access(missing, F_OK) != 0);
    EXPECT(tosac_tosa_write_file(g, g_tmpdir, d) == TOSAC_ERR_IO); /* rename over a directory fails */
    EXPECT_EQ_I(count_dir_entries(g_tmpdir, ".tmp-"), 0);
    EXPECT(tosac_tosa_read_file(missing, NULL, &r, d) == TOSAC_ERR_IO);
    EXPECT(tosac_tosa_read_file(g_tmpdir, NULL, &r, d) == TOSAC_ERR_IO);
    EXPECT(r == NULL);
    /* a failing encode leaves the previous file alone */
    g->regions[0]->blocks[0]->nodes[0]->op = 200;
    EXPECT(tosac_tosa_write_file(g, path, d) == TOSAC_ERR_INVALID_ARG);
    EXPECT(tosac_tosa_read_file(path, NULL, &r, d) == TOSAC_OK);
    tosac_graph_destroy(r);
    /* an empty file */
    snprintf(path, sizeof path, "%s/empty.tosa", g_tmpdir);
    FILE *f = fopen(path, "wb");
    if (f) fclose(f);
    r = NULL;
    EXPECT(tosac_tosa_read_file(path, NULL, &r, d) == TOSAC_ERR_FORMAT);
    EXPECT(strstr(last_msg(d), "empty.tosa: not a TOSA flatbuffer (file is only 0 bytes)") != NULL);
    tosac_diag_destroy(d);
    tosac_graph_destroy(g);
    tosac_graph_destroy(m);
}

/* ------------------------------------------------------------------------------------------ */
/* Hostile input                                                                                */

/* Reads buf; on failure checks that a message was recorded. Returns the status. */
static tosac_status read_expect_msg(const uint8_t *buf, size_t len, const tosac_read_opts *o, const char *ctx)
{
    tosac_diag *d = tosac_diag_create();
    tosac_graph *g = NULL;
    tosac_status st = tosac_tosa_read_mem(buf, len, "h.tosa", o, &g, d);
    if (st != TOSAC_OK) {
        CHECKF(g == NULL, "%s: out-parameter set on failure", ctx);
        CHECKF(tosac_diag_count(d) >= 1 && !strncmp(last_msg(d), "h.tosa: ", 8), "%s: no message for %s", ctx,
               tosac_status_str(st));
    } else {
        /* whatever is accepted is a usable graph: it can be written (or refused cleanly) */
        uint8_t *out = NULL;
        size_t n = 0;
        tosac_status ws = tosac_tosa_write_mem(g, &out, &n, d);
        if (ws == TOSAC_OK) {
            tosac_graph *g2 = NULL;
            CHECKF(tosac_tosa_read_mem(out, n, "rw.tosa", NULL, &g2, d) == TOSAC_OK, "%s: rewrite unreadable: %s",
                   ctx, last_msg(d));
            tosac_graph_destroy(g2);
        }
        tosac_buffer_free(out, n);
        tosac_graph_destroy(g);
    }
    tosac_diag_destroy(d);
    return st;
}

static void truncations(void)
{
    tosac_graph *g = build_misc_graph();
    uint8_t *buf;
    size_t len;
    EXPECT(tosac_tosa_write_mem(g, &buf, &len, NULL) == TOSAC_OK);
    unsigned errors = 0, padding_only = 0;
    for (size_t n = 0; n < len; n++) {
        /* a fresh allocation of exactly n bytes so ASan sees any read past the end */
        uint8_t *t = malloc(n ? n : 1);
        memcpy(t, buf, n);
        tosac_graph *r = NULL;
        tosac_diag *d = tosac_diag_create();
        tosac_status st = tosac_tosa_read_mem(t, n, "t.tosa", NULL, &r, d);
        if (st != TOSAC_OK) {
            errors++;
            CHECKF(tosac_diag_count(d) >= 1, "truncation %zu: no message", n);
        } else {
            /* only trailing alignment padding may be cut: the graph must be complete */
            uint8_t *w = NULL;
            size_t wn = 0;
            EXPECT(tosac_tosa_write_mem(r, &w, &wn, d) == TOSAC_OK);
            CHECKF(same_bytes(w, wn, buf, len), "truncation to %zu bytes accepted but lost content", n);
            CHECKF(len - n < 8, "truncation by %zu bytes accepted", len - n);
            padding_only++;
            tosac_buffer_free(w, wn);
        }
        tosac_graph_destroy(r);
        tosac_diag_destroy(d);
        free(t);
    }
    printf("truncations: %zu tried, %u rejected, %u cut only trailing padding\n", len, errors, padding_only);
    tosac_buffer_free(buf, len);
    tosac_graph_destroy(g);
}

static void corruptions(void)
{
    tosac_graph *g = build_misc_graph();
    tosac_graph *c = build_conv_graph();
    uint8_t *bufs[2];
    size_t lens[2];
    EXPECT(tosac_tosa_write_mem(g, &bufs[0], &lens[0], NULL) == TOSAC_OK);
    EXPECT(tosac_tosa_write_mem(c, &bufs[1], &lens[1], NULL) == TOSAC_OK);
    unsigned tried = 0, rejected = 0;
    rng_state = 12345;
    for (int k = 0; k < 4000; k++) {
        int which = k & 1;
        size_t len = lens[which];
        uint8_t *t = malloc(len);
        memcpy(t, bufs[which], len);
        int nmut = (k % 4 == 0) ? 1 + (int)(rng() % 8) : 1;
        for (int m = 0; m < nmut; m++) {
            size_t pos = rng() % len;
            switch (rng() % 4) {
            case 0: t[pos] = (uint8_t)rng(); break;
            case 1: t[pos] ^= (uint8_t)(1u << (rng() % 8)); break;
            case 2: t[pos] = (rng() & 1) ? 0xff : 0x00; break;
            default: /* a 4-byte word: small, huge, or pointing elsewhere in the file */
                if (pos + 4 <= len) {
                    uint32_t v = (uint32_t)(rng() % 3 == 0 ? 0x7fffffffu + (rng() % 3) : rng() % (len + 16));
                    t[pos] = (uint8_t)v;
                    t[pos + 1] = (uint8_t)(v >> 8);
                    t[pos + 2] = (uint8_t)(v >> 16);
                    t[pos + 3] = (uint8_t)(v >> 24);
                }
                break;
            }
        }
        char ctx[48];
        snprintf(ctx, sizeof ctx, "corruption %d", k);
        if (read_expect_msg(t, len, NULL, ctx) != TOSAC_OK) rejected++;
        tried++;
        free(t);
    }
    printf("corruptions: %u tried, %u rejected, %u accepted (value changes)\n", tried, rejected, tried - rejected);
    tosac_buffer_free(bufs[0], lens[0]);
    tosac_buffer_free(bufs[1], lens[1]);
    tosac_graph_destroy(g);
    tosac_graph_destroy(c);
}

/* Hand-made files built directly with the byte-level builder. */
typedef struct hostile_opts {
    bool no_version;
    int32_t major;
    bool draft;
    uint32_t tensor_type;
    uint32_t rank;
    uint32_t op;
    uint8_t attr_tag;
    const char *tensor_name; /* may contain NUL bytes: name_len */
    size_t name_len;
    uint32_t shape_rank, shape_bytes;
    bool extra_fields;  /* unknown trailing fields in several tables (newer schema) */
    bool no_attr_table; /* a union tag without its table */
} hostile_opts;

static hostile_opts hostile_default(void)
{
    hostile_opts o = {false, 1, false, TOSAC_DTYPE_INT8, 2, TOSAC_OP_ADD, TOSAC_OP_ADD, "t", 1, 2, 16, false, false};
    return o;
}

static uint8_t *hostile_file(const hostile_opts *o, size_t *len)
{
    fb_builder b;
    fb_builder_init(&b);
    uint32_t tname = fb_create_string(&b, o->tensor_name, o->name_len);
    uint8_t dims[4 * 40] = {0};
    for (uint32_t i = 0; i < o->rank; i++) dims[4 * i] = 2;
    uint32_t tshape = fb_create_vector(&b, dims, o->rank, 4, 0);
    fb_table_begin(&b);
    fb_add_offset(&b, 0, tname);
    fb_add_offset(&b, 1, tshape);
    fb_add_u32(&b, 2, o->tensor_type);
    if (o->extra_fields) fb_add_u64(&b, 11, 0x1234);
    uint32_t tensor = fb_table_end(&b);
    uint32_t sname = fb_create_string(&b, "s", 1);
    uint8_t sdata[64] = {0};
    uint32_t sd = fb_create_vector(&b, sdata, o->shape_bytes, 1, 8);
    fb_table_begin(&b);
    fb_add_offset(&b, 0, sname);
    fb_add_u32(&b, 1, o->shape_rank);
    fb_add_offset(&b, 2, sd);
    uint32_t shape = fb_table_end(&b);
    uint32_t attr = 0;
    if (!o->no_attr_table) {
        fb_table_begin(&b);
        if (o->extra_fields) fb_add_i32(&b, 5, 99);
        attr = fb_table_end(&b);
    }
    uint32_t x = fb_create_string(&b, "t", 1);
    uint32_t ins = fb_create_offset_vector(&b, (uint32_t[]){x, x}, 2);
    uint32_t outs = fb_create_offset_vector(&b, &x, 1);
    fb_table_begin(&b);
    fb_add_u32(&b, 0, o->op);
    fb_add_u8(&b, 1, o->attr_tag);
    fb_add_offset(&b, 2, attr);
    fb_add_offset(&b, 3, ins);
    fb_add_offset(&b, 4, outs);
    if (o->extra_fields) fb_add_offset(&b, 9, x);
    uint32_t op = fb_table_end(&b);
    uint32_t opv = fb_create_offset_vector(&b, &op, 1);
    uint32_t tv = fb_create_offset_vector(&b, &tensor, 1);
    uint32_t sv = fb_create_offset_vector(&b, &shape, 1);
    uint32_t bname = fb_create_string(&b, "main", 4);
    fb_table_begin(&b);
    fb_add_offset(&b, 0, bname);
    fb_add_offset(&b, 1, opv);
    fb_add_offset(&b, 2, tv);
    fb_add_offset(&b, 5, sv);
    uint32_t blk = fb_table_end(&b);
    uint32_t bv = fb_create_offset_vector(&b, &blk, 1);
    fb_table_begin(&b);
    fb_add_offset(&b, 0, bname);
    fb_add_offset(&b, 1, bv);
    uint32_t reg = fb_table_end(&b);
    uint32_t rv = fb_create_offset_vector(&b, &reg, 1);
    uint32_t ver = 0;
    if (!o->no_version) {
        fb_table_begin(&b);
        fb_add_i32(&b, 0, o->major);
        fb_add_i32(&b, 1, 0);
        fb_add_i32(&b, 2, 0);
        fb_add_bool(&b, 3, o->draft);
        ver = fb_table_end(&b);
    }
    uint32_t sw = o->extra_fields ? fb_create_string(&b, "tosa-tools 2.0", 14) : 0;
    fb_table_begin(&b);
    fb_add_offset(&b, 0, ver);
    fb_add_offset(&b, 1, rv);
    fb_add_offset(&b, 2, sw); /* TOSA 1.1 software_version */
    uint32_t root = fb_table_end(&b);
    uint8_t *out = NULL;
    if (fb_finish(&b, root, "TOSA", &out, len) != TOSAC_OK) out = NULL;
    fb_builder_free(&b);
    return out;
}

/* Builds a hostile file, reads it, and checks status and message. */
static void expect_hostile(const hostile_opts *o, tosac_status want, const char *needle)
{
    size_t len = 0;
    uint8_t *buf = hostile_file(o, &len);
    EXPECT(buf != NULL);
    if (!buf) return;
    tosac_diag *d = tosac_diag_create();
    tosac_graph *g = NULL;
    tosac_status st = tosac_tosa_read_mem(buf, len, "h.tosa", NULL, &g, d);
    CHECKF(st == want, "status %s, want %s: %s", tosac_status_str(st), tosac_status_str(want), last_msg(d));
    if (needle) CHECKF(strstr(last_msg(d), needle) != NULL, "message '%s' lacks '%s'", last_msg(d), needle);
    if (want == TOSAC_OK) EXPECT(g != NULL);
    tosac_graph_destroy(g);
    tosac_diag_destroy(d);
    free(buf);
}

static void crafted_files(void)
{
    hostile_opts o = hostile_default();
    expect_hostile(&o, TOSAC_OK, NULL);
    o = hostile_default();
    o.extra_fields = true;
    expect_hostile(&o, TOSAC_OK, NULL);
    o = hostile_default();
    o.no_attr_table = true; /* all fields take their defaults */
    expect_hostile(&o, TOSAC_OK, NULL);
    o = hostile_default();
    o.attr_tag = 0; /* NONE: kept as 0 */
    expect_hostile(&o, TOSAC_OK, NULL);
    o = hostile_default();
    o.no_version = true;
    expect_hostile(&o, TOSAC_ERR_FORMAT, "h.tosa: missing required TosaGraph.version table");
    o = hostile_default();
    o.major = 2;
    expect_hostile(&o, TOSAC_ERR_UNSUPPORTED, "unsupported TOSA version 2.0.0");
    o = hostile_default();
    o.major = 0;
    o.draft = true;
    expect_hostile(&o, TOSAC_ERR_UNSUPPORTED, "unsupported TOSA version 0.0.0 draft");
    o = hostile_default();
    o.draft = true;
    expect_hostile(&o, TOSAC_OK, NULL);
    o = hostile_default();
    o.tensor_type = 13;
    expect_hostile(&o, TOSAC_ERR_FORMAT, "regions[0].blocks[0].tensors[0].type: tensor 't' has unknown DType 13");
    o = hostile_default();
    o.tensor_type = 0; /* UNKNOWN is a schema value: kept for the validator */
    expect_hostile(&o, TOSAC_OK, NULL);
    o = hostile_default();
    o.attr_tag = 76;
    expect_hostile(&o, TOSAC_ERR_FORMAT, "operators[0].attribute_type: unknown attribute type tag 76");
    o = hostile_default();
    o.attr_tag = 255;
    expect_hostile(&o, TOSAC_ERR_FORMAT, "unknown attribute type tag 255");
    o = hostile_default();
    o.op = 1000; /* unknown operator numbers are kept */
    expect_hostile(&o, TOSAC_OK, NULL);
    o = hostile_default();
    o.rank = 33;
    expect_hostile(&o, TOSAC_ERR_FORMAT, "tensor 't' has rank 33, more than the maximum 32");
    o = hostile_default();
    o.rank = 32;
    expect_hostile(&o, TOSAC_OK, NULL);
    o = hostile_default();
    o.shape_bytes = 12;
    expect_hostile(&o, TOSAC_ERR_FORMAT, "shapes[0].data: shape 's' has 12 data bytes, expected 16 (rank 2 x 8)");
    o = hostile_default();
    o.shape_rank = 0x80000000u; /* rank without data is allowed, rank with wrong data is not */
    expect_hostile(&o, TOSAC_ERR_FORMAT, "expected 17179869184");
    o = hostile_default();
    o.tensor_name = "a\0b";
    o.name_len = 3;
    expect_hostile(&o, TOSAC_ERR_FORMAT, "tensors[0]: tensor name contains a NUL byte");

    /* wrong identifier, too short, nothing */
    size_t len;
    o = hostile_default();
    uint8_t *buf = hostile_file(&o, &len);
    memcpy(buf + 4, "TFL3", 4);
    tosac_diag *d = tosac_diag_create();
    tosac_graph *g = NULL;
    EXPECT(tosac_tosa_read_mem(buf, len, "x.tosa", NULL, &g, d) == TOSAC_ERR_FORMAT);
    EXPECT_STREQ(last_msg(d), "x.tosa: not a TOSA flatbuffer (file identifier is 'TFL3', expected 'TOSA')");
    memcpy(buf + 4, "\x01T'\xff", 4);
    EXPECT(tosac_tosa_read_mem(buf, len, "x.tosa", NULL, &g, d) == TOSAC_ERR_FORMAT);
    EXPECT_STREQ(last_msg(d), "x.tosa: not a TOSA flatbuffer (file identifier is '\\x01T\\x27\\xff', expected 'TOSA')");
    EXPECT(tosac_tosa_read_mem(buf, 7, NULL, NULL, &g, d) == TOSAC_ERR_FORMAT);
    EXPECT_STREQ(last_msg(d), "<memory>: not a TOSA flatbuffer (file is only 7 bytes)");
    EXPECT(tosac_tosa_read_mem(NULL, 0, "n.tosa", NULL, &g, d) == TOSAC_ERR_FORMAT);
    EXPECT(tosac_tosa_read_mem(NULL, 5, "n.tosa", NULL, &g, d) == TOSAC_ERR_INVALID_ARG);
    EXPECT(tosac_tosa_read_mem(buf, len, "n.tosa", NULL, NULL, d) == TOSAC_ERR_INVALID_ARG);
    EXPECT(g == NULL);
    free(buf);

    /* a vector whose length claims 2^31 elements (and 2^32 - 1) */
    o = hostile_default();
    buf = hostile_file(&o, &len);
    walk w;
    fb_vec tv;
    EXPECT(walk_block(&w, buf, len, 0, 0) && fb_get_vector(&w.block, 2, 4, &tv, NULL) == TOSAC_OK);
    uint8_t *cnt = buf + tv.pos - 4;
    memcpy(cnt, "\x00\x00\x00\x80", 4);
    EXPECT(tosac_tosa_read_mem(buf, len, "big.tosa", NULL, &g, d) == TOSAC_ERR_FORMAT);
    EXPECT(strstr(last_msg(d), "regions[0].blocks[0].tensors: vector length past the buffer") != NULL);
    memcpy(cnt, "\xff\xff\xff\xff", 4);
    EXPECT(tosac_tosa_read_mem(buf, len, "big.tosa", NULL, &g, d) == TOSAC_ERR_FORMAT);
    /* an offset of 0 (pointing at itself) and one that would wrap around to an earlier object */
    memcpy(cnt, "\x01\x00\x00\x00", 4);
    memcpy(cnt + 4, "\x00\x00\x00\x00", 4);
    EXPECT(tosac_tosa_read_mem(buf, len, "self.tosa", NULL, &g, d) == TOSAC_ERR_FORMAT);
    EXPECT(strstr(last_msg(d), "tensors[0]: null offset") != NULL);
    uint32_t back = (uint32_t)(0u - (uint32_t)(tv.pos - 8)); /* tv.pos + back wraps to 8 in 32 bits */
    uint8_t le[4] = {(uint8_t)back, (uint8_t)(back >> 8), (uint8_t)(back >> 16), (uint8_t)(back >> 24)};
    memcpy(cnt + 4, le, 4);
    EXPECT(tosac_tosa_read_mem(buf, len, "wrap.tosa", NULL, &g, d) == TOSAC_ERR_FORMAT);
    EXPECT(strstr(last_msg(d), "offset points outside the buffer") != NULL);
    /* limits */
    memcpy(cnt, "\x01\x00\x00\x00", 4);
    free(buf);
    o = hostile_default();
    buf = hostile_file(&o, &len);
    tosac_read_opts lim = {len - 1, 0};
    EXPECT(tosac_tosa_read_mem(buf, len, "lim.tosa", &lim, &g, d) == TOSAC_ERR_NOMEM);
    EXPECT(strstr(last_msg(d), "over the limit") != NULL);
    tosac_read_opts objs = {0, 5};
    EXPECT(tosac_tosa_read_mem(buf, len, "objs.tosa", &objs, &g, d) == TOSAC_ERR_NOMEM);
    EXPECT(strstr(last_msg(d), "budget") != NULL);
    EXPECT(g == NULL);
    free(buf);
    tosac_diag_destroy(d);
}

/*
 * Sharing: every level of the tree points N times at one object, so a naive walk visits N^4
 * operands (and, with `big_name`, copies a 4 KiB tensor name N^3 times). Must fail fast.
 */
static uint8_t *shared_file(bool big_name, size_t *len)
{
    enum { N = 500 };
    static uint32_t h[N];
    static char big[4096];
    fb_builder b;
    fb_builder_init(&b);
    memset(big, 'n', sizeof big);
    uint32_t name = fb_create_string(&b, big, sizeof big);
    uint32_t sx = fb_create_string(&b, "x", 1);
    for (int i = 0; i < N; i++) h[i] = sx;
    uint32_t ins = fb_create_offset_vector(&b, h, N);
    fb_table_begin(&b);
    uint32_t attr = fb_table_end(&b);
    fb_table_begin(&b);
    fb_add_u32(&b, 0, TOSAC_OP_ADD);
    fb_add_u8(&b, 1, TOSAC_OP_ADD);
    fb_add_offset(&b, 2, attr);
    fb_add_offset(&b, 3, ins);
    uint32_t op = fb_table_end(&b);
    fb_table_begin(&b);
    fb_add_offset(&b, 0, name);
    uint32_t tensor = fb_table_end(&b);
    for (int i = 0; i < N; i++) h[i] = op;
    uint32_t ops = fb_create_offset_vector(&b, h, N);
    for (int i = 0; i < N; i++) h[i] = tensor;
    uint32_t tensors = fb_create_offset_vector(&b, h, N);
    fb_table_begin(&b);
    fb_add_offset(&b, 1, ops);
    if (big_name) fb_add_offset(&b, 2, tensors);
    uint32_t blk = fb_table_end(&b);
    for (int i = 0; i < N; i++) h[i] = blk;
    uint32_t blocks = fb_create_offset_vector(&b, h, N);
    fb_table_begin(&b);
    fb_add_offset(&b, 1, blocks);
    uint32_t reg = fb_table_end(&b);
    for (int i = 0; i < N; i++) h[i] = reg;
    uint32_t regs = fb_create_offset_vector(&b, h, N);
    fb_table_begin(&b);
    fb_add_i32(&b, 0, 1);
    fb_add_i32(&b, 1, 0);
    fb_add_i32(&b, 2, 0);
    fb_add_bool(&b, 3, false);
    uint32_t ver = fb_table_end(&b);
    fb_table_begin(&b);
    fb_add_offset(&b, 0, ver);
    fb_add_offset(&b, 1, regs);
    uint32_t root = fb_table_end(&b);
    uint8_t *buf = NULL;
    if (fb_finish(&b, root, "TOSA", &buf, len) != TOSAC_OK) buf = NULL;
    fb_builder_free(&b);
    return buf;
}

static void shared_objects(void)
{
    tosac_diag *d = tosac_diag_create();
    tosac_graph *g = NULL;
    size_t len = 0;
    uint8_t *buf = shared_file(false, &len);
    EXPECT(buf != NULL);
    /* the default object budget (file size / 4) stops the N^4 walk */
    EXPECT(tosac_tosa_read_mem(buf, len, "shared.tosa", NULL, &g, d) == TOSAC_ERR_NOMEM);
    CHECKF(strstr(last_msg(d), "shared.tosa: byte ") && strstr(last_msg(d), "object budget exhausted"), "%s",
           last_msg(d));
    tosac_free(buf, len);
    buf = shared_file(true, &len);
    EXPECT(tosac_tosa_read_mem(buf, len, "shared.tosa", NULL, &g, d) == TOSAC_ERR_NOMEM);
    /* with an unlimited object budget the copy budget still stops the 4 KiB name copies */
    tosac_read_opts many = {0, (size_t)1 << 40};
    EXPECT(tosac_tosa_read_mem(buf, len, "shared.tosa", &many, &g, d) == TOSAC_ERR_NOMEM);
    CHECKF(strstr(last_msg(d), "expand to more data than the file holds") != NULL, "%s", last_msg(d));
    EXPECT(g == NULL);
    tosac_diag_destroy(d);
    tosac_free(buf, len);
}

/* ------------------------------------------------------------------------------------------ */
/* Every (op, type row) example graph                                                           */

static void all_op_graphs(void)
{
    unsigned graphs = 0, missing = 0, failed = 0;
    for (uint32_t op = 1; op < TOSAC_OP_COUNT; op++) {
        unsigned nrows = 0;
        tosac_op_type_rows(op, &nrows);
        for (unsigned row = 0; row < nrows; row++) {
            tosac_graph *g = test_op_graph(op, row);
            if (!g) {
                fprintf(stderr, "no example graph for %s row %u\n", tosac_op_name(op), row);
                missing++;
                continue;
            }
            char ctx[64];
            snprintf(ctx, sizeof ctx, "%s_%u", tosac_op_name(op), row);
            if (round_trip(g, ctx))
                graphs++;
            else
                failed++;
            tosac_graph_destroy(g);
        }
    }
    printf("all ops: %u (op,row) graphs round-tripped, %u failed, %u missing\n", graphs, failed, missing);
    EXPECT(graphs > 0);
    EXPECT_EQ_I(missing, 0);
}

int main(void)
{
    snprintf(g_tmpdir, sizeof g_tmpdir, "/tmp/tosac_file_test_XXXXXX");
    if (!mkdtemp(g_tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(round_trip_hand_built);
    RUN(tag_none_and_mismatch);
    RUN(encoding_details);
    RUN(deterministic);
    RUN(writer_errors);
    RUN(files);
    RUN(large_constants_file);
    RUN(truncations);
    RUN(corruptions);
    RUN(crafted_files);
    RUN(shared_objects);
    RUN(all_op_graphs);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmpdir);
    (void)print_diag;
    return test_summary();
}
