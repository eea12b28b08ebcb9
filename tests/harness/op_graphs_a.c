/*
 * Example graphs for the elementwise, reduction, data-layout, scatter/gather, data-node, custom,
 * control-flow and variable operator families (see op_graphs.h): one graph per (op, type row).
 *
 * Shapes are small and odd ([2,3,5]); elementwise ops broadcast where TOSA allows it and a few
 * variants use rank 0; constants are encoded as in TOSA.md §A.6. Control flow uses the current
 * convention (then/else/cond/body graphs are regions holding one block each). Variables follow the
 * convention of check_misc.c: a TosaTensor with variable = true, declared by VARIABLE [] -> [var],
 * written by VARIABLE_WRITE [value] -> [var] and read by VARIABLE_READ [var] -> [value].
 */
#include <string.h>

#include "harness/op_graphs.h"
#include "ir/graph.h"
#include "tosa/op_table.h"

/* Graph under construction; `fail` records any builder failure. */
typedef struct gb {
    tosac_graph *g;
    tosac_block *b;
    bool fail;
} gb;

static tosac_value *chk(gb *x, tosac_value *v)
{
    if (!v) x->fail = true;
    return v;
}

static int64_t count_of(int rank, const int64_t *dims)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    return n;
}

static tosac_value *tensor(gb *x, const char *name, tosac_dtype t, int rank, const int64_t *dims)
{
    return chk(x, tosac_block_add_tensor(x->b, name, t, rank, dims));
}

static tosac_value *input(gb *x, const char *name, tosac_dtype t, int rank, const int64_t *dims)
{
    tosac_value *v = tensor(x, name, t, rank, dims);
    if (v && tosac_block_add_input(x->b, v) != TOSAC_OK) x->fail = true;
    return v;
}

static void output(gb *x, tosac_value *v)
{
    if (!v || tosac_block_add_output(x->b, v) != TOSAC_OK) x->fail = true;
}

static tosac_node *node(gb *x, tosac_op op, uint32_t nin, tosac_value *const *in, uint32_t nout, tosac_value *const *out)
{
    tosac_node *n = tosac_block_add_node(x->b, op, nin, in, nout, out);
    if (!n) x->fail = true;
    return n;
}

static void set_int(gb *x, tosac_node *n, unsigned id, int64_t v)
{
    if (!n || tosac_node_set_int(n, id, v) != TOSAC_OK) x->fail = true;
}

/* ------------------------------------------------------------------------------------------ */
/* Constant encoding (TOSA.md §A.6)                                                              */

/* Bit pattern of the small integer v in a binary floating-point format with `eb` exponent and
   `mb` mantissa bits (exact for the values used here). */
static uint32_t minifloat(int64_t v, int eb, int mb)
{
    uint32_t sign = v < 0 ? 1u : 0u;
    uint64_t a = v < 0 ? (uint64_t)(-v) : (uint64_t)v;
    if (a == 0) return sign << (eb + mb);
    int e = 63;
    while (!(a >> e)) e--;
    uint64_t frac = a - ((uint64_t)1 << e);
    uint32_t m = e >= mb ? (uint32_t)(frac >> (e - mb)) : (uint32_t)(frac << (mb - e));
    uint32_t bias = (1u << (eb - 1)) - 1;
    return (sign << (eb + mb)) | (((uint32_t)e + bias) << mb) | m;
}

/* Encodes n values; returns the byte count (0 on an unsupported type or a full buffer). */
static size_t encode(tosac_dtype t, const int64_t *vals, int64_t n, uint8_t *out, size_t cap)
{
    size_t need;
    if (!tosac_dtype_storage_bytes(t, n, &need) || need > cap) return 0;
    memset(out, 0, need);
    for (int64_t i = 0; i < n; i++) {
        uint64_t u = (uint64_t)vals[i];
        unsigned bytes;
        switch (t) {
        case TOSAC_DTYPE_BOOL: out[i] = vals[i] != 0; continue;
        case TOSAC_DTYPE_INT4: out[i / 2] |= (uint8_t)((u & 0x0F) << ((i & 1) ? 4 : 0)); continue;
        case TOSAC_DTYPE_INT8: bytes = 1; break;
        case TOSAC_DTYPE_INT16: bytes = 2; break;
        case TOSAC_DTYPE_INT32: bytes = 4; break;
        case TOSAC_DTYPE_INT48: bytes = 6; break;
        case TOSAC_DTYPE_SHAPE: bytes = 8; break;
        case TOSAC_DTYPE_FP32: u = minifloat(vals[i], 8, 23); bytes = 4; break;
        case TOSAC_DTYPE_FP16: u = minifloat(vals[i], 5, 10); bytes = 2; break;
        case TOSAC_DTYPE_BF16: u = minifloat(vals[i], 8, 7); bytes = 2; break;
        case TOSAC_DTYPE_FP8E4M3: u = minifloat(vals[i], 4, 3); bytes = 1; break;
        case TOSAC_DTYPE_FP8E5M2: u = minifloat(vals[i], 5, 2); bytes = 1; break;
        default: return 0;
        }
        for (unsigned k = 0; k < bytes; k++) out[(size_t)i * bytes + k] = (uint8_t)(u >> (8 * k));
    }
    return need;
}

/* A CONST tensor holding `vals` (NULL: zeros). */
static tosac_value *constant(gb *x, const char *name, tosac_dtype t, int rank, const int64_t *dims, const int64_t *vals)
{
    int64_t n = count_of(rank, dims);
    int64_t zeros[64] = {0};
    uint8_t bytes[512];
    if (n > 64) {
        x->fail = true;
        return NULL;
    }
    size_t len = encode(t, vals ? vals : zeros, n, bytes, sizeof bytes);
    if (!len) {
        x->fail = true;
        return NULL;
    }
    return chk(x, tosac_block_add_const(x->b, name, t, rank, dims, bytes, len));
}

/* A one-element [1] constant. */
static tosac_value *scalar1(gb *x, const char *name, tosac_dtype t, int64_t v)
{
    static const int64_t one[1] = {1};
    return constant(x, name, t, 1, one, &v);
}

static tosac_value *shape_const(gb *x, const char *name, const int64_t *vals, uint32_t n)
{
    return chk(x, tosac_block_add_const_shape(x->b, name, vals, n));
}

static bool begin(gb *x, const char *region, const char *block)
{
    x->fail = false;
    x->g = tosac_graph_create();
    if (!x->g) return false;
    tosac_region *r = tosac_graph_add_region(x->g, region);
    x->b = r ? tosac_region_add_block(r, block) : NULL;
    if (!x->b) x->fail = true;
    return !x->fail;
}

/* Switches to a new region with one block (control-flow sub-graphs). */
static void sub_region(gb *x, const char *region, const char *block)
{
    tosac_region *r = tosac_graph_add_region(x->g, region);
    x->b = r ? tosac_region_add_block(r, block) : NULL;
    if (!x->b) x->fail = true;
}

static tosac_graph *finish(gb *x)
{
    if (x->fail) {
        tosac_graph_destroy(x->g);
        return NULL;
    }
    return x->g;
}

static const int64_t k235[3] = {2, 3, 5};

/* ------------------------------------------------------------------------------------------ */
/* Families                                                                                      */

static void build_unary(gb *x, tosac_op op, const tosac_type_row *row, unsigned variant)
{
    tosac_dtype t = (tosac_dtype)row->t[0];
    int rank = variant % 3 == 2 ? 0 : 3;
    tosac_value *in = input(x, "x", t, rank, k235);
    tosac_value *y = tensor(x, "y", t, rank, k235);
    if (op == TOSAC_OP_NEGATE) {
        bool i8 = t == TOSAC_DTYPE_INT8;
        tosac_value *ins[3] = {in, scalar1(x, "x_zp", t, i8 ? 5 : 0), scalar1(x, "y_zp", t, i8 ? -3 : 0)};
        node(x, op, 3, ins, 1, &y);
    } else {
        node(x, op, 1, &in, 1, &y);
    }
    output(x, y);
}

static void build_binary(gb *x, tosac_op op, const tosac_type_row *row, unsigned variant)
{
    const tosac_op_info *info = tosac_op_info_get(op);
    tosac_dtype t = (tosac_dtype)row->t[0];
    tosac_dtype to = (tosac_dtype)row->t[info->outputs[0].tv];
    static const int64_t a1[3] = {2, 3, 5}, b1[3] = {2, 1, 5}, a2[3] = {2, 1, 5}, b2[3] = {1, 3, 5};
    int rank = variant % 3 == 2 ? 0 : 3;
    const int64_t *da = variant % 3 == 1 ? a2 : a1, *db = variant % 3 == 1 ? b2 : b1;
    tosac_value *ins[3] = {input(x, "a", t, rank, da), input(x, "b", t, rank, db), NULL};
    tosac_value *y = tensor(x, "y", to, rank, k235);
    uint32_t nin = 2;
    if (op == TOSAC_OP_MUL) {
        ins[2] = scalar1(x, "shift", TOSAC_DTYPE_INT8, t == TOSAC_DTYPE_INT32 ? 3 : 0);
        nin = 3;
    }
    tosac_node *n = node(x, op, nin, ins, 1, &y);
    if (op == TOSAC_OP_MAXIMUM || op == TOSAC_OP_MINIMUM)
        set_int(x, n, 0, variant % 2 ? TOSAC_NAN_IGNORE : TOSAC_NAN_PROPAGATE);
    if (op == TOSAC_OP_ARITHMETIC_RIGHT_SHIFT) set_int(x, n, TOSAC_ATTR_ARITHMETIC_RIGHT_SHIFT_round, variant % 2);
    output(x, y);
}

static void build_select(gb *x, const tosac_type_row *row, unsigned variant)
{
    tosac_dtype t = (tosac_dtype)row->t[0];
    static const int64_t dc[3] = {1, 3, 5}, da[3] = {2, 3, 5}, db[3] = {2, 1, 5};
    int rank = variant % 4 == 3 ? 0 : 3;
    tosac_value *ins[3] = {input(x, "cond", TOSAC_DTYPE_BOOL, rank, dc), input(x, "a", t, rank, da),
                           input(x, "b", t, rank, db)};
    tosac_value *y = tensor(x, "y", t, rank, k235);
    node(x, TOSAC_OP_SELECT, 3, ins, 1, &y);
    output(x, y);
}

static void build_reduce(gb *x, tosac_op op, const tosac_type_row *row, unsigned variant)
{
    tosac_dtype t = (tosac_dtype)row->t[0];
    int axis = (int)(variant % 3);
    int64_t od[3] = {2, 3, 5};
    od[axis] = 1;
    tosac_value *in = input(x, "x", t, 3, k235);
    tosac_value *y = tensor(x, "y", t, 3, od);
    tosac_node *n = node(x, op, 1, &in, 1, &y);
    set_int(x, n, 0, axis);
    if (op == TOSAC_OP_REDUCE_MAX || op == TOSAC_OP_REDUCE_MIN) set_int(x, n, 1, TOSAC_NAN_PROPAGATE);
    output(x, y);
}

static void build_cast(gb *x, const tosac_type_row *row, unsigned variant)
{
    int rank = variant % 5 == 4 ? 0 : 3;
    tosac_value *in = input(x, "x", (tosac_dtype)row->t[0], rank, k235);
    tosac_value *y = tensor(x, "y", (tosac_dtype)row->t[1], rank, k235);
    node(x, TOSAC_OP_CAST, 1, &in, 1, &y);
    output(x, y);
}

static void build_const(gb *x, const tosac_type_row *row, unsigned variant)
{
    tosac_dtype t = (tosac_dtype)row->t[0];
    static const int64_t d23[2] = {2, 3};
    int64_t vals[6];
    for (int i = 0; i < 6; i++) vals[i] = i - 3; /* -3..2: fits every type, INT4 included */
    if (t == TOSAC_DTYPE_BOOL)
        for (int i = 0; i < 6; i++) vals[i] = i & 1;
    if (t == TOSAC_DTYPE_INT48) vals[5] = -((int64_t)1 << 40);
    int rank = variant % 8 == 1 ? 0 : 2;
    output(x, constant(x, "k", t, rank, d23, vals));
}

static void build_identity(gb *x, const tosac_type_row *row, unsigned variant)
{
    tosac_dtype t = (tosac_dtype)row->t[0];
    int rank = variant % 4 == 1 ? 0 : 3;
    tosac_value *in = input(x, "x", t, rank, k235);
    tosac_value *y = tensor(x, "y", t, rank, k235);
    node(x, TOSAC_OP_IDENTITY, 1, &in, 1, &y);
    output(x, y);
}

/* CONST_SHAPE feeding a RESHAPE (shape values cannot be block outputs). */
static void build_const_shape(gb *x)
{
    static const int64_t d23[2] = {2, 3}, d32[2] = {3, 2};
    tosac_value *ins[2] = {input(x, "x", TOSAC_DTYPE_INT8, 2, d23), shape_const(x, "new_shape", d32, 2)};
    tosac_value *y = tensor(x, "y", TOSAC_DTYPE_INT8, 2, d32);
    node(x, TOSAC_OP_RESHAPE, 2, ins, 1, &y);
    output(x, y);
}

static void build_concat(gb *x, const tosac_type_row *row, unsigned variant)
{
    tosac_dtype t = (tosac_dtype)row->t[0];
    tosac_value *y;
    if (variant % 2) {
        static const int64_t da[2] = {1, 3}, db[2] = {2, 3}, dy[2] = {3, 3};
        tosac_value *ins[2] = {input(x, "a", t, 2, da), input(x, "b", t, 2, db)};
        y = tensor(x, "y", t, 2, dy);
        set_int(x, node(x, TOSAC_OP_CONCAT, 2, ins, 1, &y), TOSAC_ATTR_CONCAT_axis, 0);
    } else {
        static const int64_t da[3] = {2, 3, 5}, db[3] = {2, 4, 5}, dc[3] = {2, 1, 5}, dy[3] = {2, 8, 5};
        tosac_value *ins[3] = {input(x, "a", t, 3, da), input(x, "b", t, 3, db), input(x, "c", t, 3, dc)};
        y = tensor(x, "y", t, 3, dy);
        set_int(x, node(x, TOSAC_OP_CONCAT, 3, ins, 1, &y), TOSAC_ATTR_CONCAT_axis, 1);
    }
    output(x, y);
}

static void build_pad(gb *x, const tosac_type_row *row)
{
    tosac_dtype t = (tosac_dtype)row->t[0];
    static const int64_t pads[6] = {0, 1, 2, 0, 1, 1}, dy[3] = {3, 5, 7};
    tosac_value *ins[3] = {input(x, "x", t, 3, k235), shape_const(x, "padding", pads, 6), scalar1(x, "pad_const", t, 0)};
    tosac_value *y = tensor(x, "y", t, 3, dy);
    node(x, TOSAC_OP_PAD, 3, ins, 1, &y);
    output(x, y);
}

static void build_reshape(gb *x, const tosac_type_row *row, unsigned variant)
{
    tosac_dtype t = (tosac_dtype)row->t[0];
    static const int64_t d56[2] = {5, 6}, d30[1] = {30};
    bool flat = variant % 2;
    tosac_value *ins[2] = {input(x, "x", t, 3, k235), shape_const(x, "shape", flat ? d30 : d56, flat ? 1 : 2)};
    tosac_value *y = tensor(x, "y", t, flat ? 1 : 2, flat ? d30 : d56);
    node(x, TOSAC_OP_RESHAPE, 2, ins, 1, &y);
    output(x, y);
}

static void build_reverse(gb *x, const tosac_type_row *row, unsigned variant)
{
    tosac_dtype t = (tosac_dtype)row->t[0];
    tosac_value *in = input(x, "x", t, 3, k235);
    tosac_value *y = tensor(x, "y", t, 3, k235);
    set_int(x, node(x, TOSAC_OP_REVERSE, 1, &in, 1, &y), TOSAC_ATTR_REVERSE_axis, variant % 3);
    output(x, y);
}

static void build_slice(gb *x, const tosac_type_row *row)
{
    tosac_dtype t = (tosac_dtype)row->t[0];
    static const int64_t din[3] = {4, 5, 6}, start[3] = {1, 0, 2}, size[3] = {2, 5, 3};
    tosac_value *ins[3] = {input(x, "x", t, 3, din), shape_const(x, "start", start, 3), shape_const(x, "size", size, 3)};
    tosac_value *y = tensor(x, "y", t, 3, size);
    node(x, TOSAC_OP_SLICE, 3, ins, 1, &y);
    output(x, y);
}

static void build_tile(gb *x, const tosac_type_row *row)
{
    tosac_dtype t = (tosac_dtype)row->t[0];
    static const int64_t din[3] = {2, 3, 1}, mult[3] = {1, 2, 5}, dy[3] = {2, 6, 5};
    tosac_value *ins[2] = {input(x, "x", t, 3, din), shape_const(x, "multiples", mult, 3)};
    tosac_value *y = tensor(x, "y", t, 3, dy);
    node(x, TOSAC_OP_TILE, 2, ins, 1, &y);
    output(x, y);
}

static void build_transpose(gb *x, const tosac_type_row *row)
{
    tosac_dtype t = (tosac_dtype)row->t[0];
    static const int32_t perms[3] = {2, 0, 1};
    static const int64_t dy[3] = {5, 2, 3};
    tosac_value *in = input(x, "x", t, 3, k235);
    tosac_value *y = tensor(x, "y", t, 3, dy);
    tosac_node *n = node(x, TOSAC_OP_TRANSPOSE, 1, &in, 1, &y);
    if (!n || tosac_node_set_ints(n, TOSAC_ATTR_TRANSPOSE_perms, perms, 3) != TOSAC_OK) x->fail = true;
    output(x, y);
}

static void build_gather(gb *x, const tosac_type_row *row)
{
    tosac_dtype t = (tosac_dtype)row->t[1], ti = (tosac_dtype)row->t[0];
    static const int64_t dv[3] = {2, 5, 3}, di[2] = {2, 4}, dy[3] = {2, 4, 3};
    tosac_value *ins[2] = {input(x, "values", t, 3, dv), input(x, "indices", ti, 2, di)};
    tosac_value *y = tensor(x, "y", t, 3, dy);
    node(x, TOSAC_OP_GATHER, 2, ins, 1, &y);
    output(x, y);
}

static void build_scatter(gb *x, const tosac_type_row *row)
{
    tosac_dtype t = (tosac_dtype)row->t[1], ti = (tosac_dtype)row->t[0];
    static const int64_t dv[3] = {2, 5, 3}, di[2] = {2, 4}, dx[3] = {2, 4, 3};
    tosac_value *ins[3] = {input(x, "values_in", t, 3, dv), input(x, "indices", ti, 2, di), input(x, "x", t, 3, dx)};
    tosac_value *y = tensor(x, "values_out", t, 3, dv);
    node(x, TOSAC_OP_SCATTER, 3, ins, 1, &y);
    output(x, y);
}

static void build_custom(gb *x)
{
    static const int64_t d23[2] = {2, 3};
    tosac_value *ins[2] = {input(x, "a", TOSAC_DTYPE_FP32, 2, d23), input(x, "b", TOSAC_DTYPE_INT8, 3, k235)};
    tosac_value *y = tensor(x, "y", TOSAC_DTYPE_FP32, 2, d23);
    tosac_node *n = node(x, TOSAC_OP_CUSTOM, 2, ins, 1, &y);
    static const uint8_t impl[3] = {'k', '=', '1'};
    if (!n || tosac_node_set_str(n, TOSAC_ATTR_CUSTOM_operator_name, "my_op") != TOSAC_OK ||
        tosac_node_set_str(n, TOSAC_ATTR_CUSTOM_domain_name, "com.example") != TOSAC_OK ||
        tosac_node_set_bytes(n, TOSAC_ATTR_CUSTOM_implementation_attrs, impl, sizeof impl) != TOSAC_OK)
        x->fail = true;
    output(x, y);
}

/* y = cond ? x + x : x - x, branches in regions "then_region" / "else_region". */
static void build_cond_if(gb *x, unsigned variant)
{
    static const int64_t d23[2] = {2, 3}, one[1] = {1};
    tosac_value *ins[2] = {input(x, "cond", TOSAC_DTYPE_BOOL, variant % 2 ? 0 : 1, one),
                           input(x, "x", TOSAC_DTYPE_INT32, 2, d23)};
    tosac_value *y = tensor(x, "y", TOSAC_DTYPE_INT32, 2, d23);
    tosac_node *n = node(x, TOSAC_OP_COND_IF, 2, ins, 1, &y);
    if (!n || tosac_node_set_str(n, TOSAC_ATTR_COND_IF_then_graph, "then_region") != TOSAC_OK ||
        tosac_node_set_str(n, TOSAC_ATTR_COND_IF_else_graph, "else_region") != TOSAC_OK)
        x->fail = true;
    output(x, y);
    static const char *const regions[2] = {"then_region", "else_region"};
    static const char *const blocks[2] = {"then_bb", "else_bb"};
    for (int k = 0; k < 2; k++) {
        sub_region(x, regions[k], blocks[k]);
        if (x->fail) return;
        tosac_value *a = input(x, "a", TOSAC_DTYPE_INT32, 2, d23);
        tosac_value *r = tensor(x, "r", TOSAC_DTYPE_INT32, 2, d23);
        tosac_value *aa[2] = {a, a};
        node(x, k == 0 ? TOSAC_OP_ADD : TOSAC_OP_SUB, 2, aa, 1, &r);
        output(x, r);
    }
}

/* for (i = 0; i < 3; i++) x = x + x; loop state (i, x). */
static void build_while_loop(gb *x)
{
    static const int64_t d23[2] = {2, 3};
    int64_t zero = 0;
    tosac_value *ins[2] = {constant(x, "i0", TOSAC_DTYPE_INT32, 0, NULL, &zero), input(x, "x", TOSAC_DTYPE_INT32, 2, d23)};
    tosac_value *outs[2] = {tensor(x, "i_final", TOSAC_DTYPE_INT32, 0, NULL), tensor(x, "y", TOSAC_DTYPE_INT32, 2, d23)};
    tosac_node *n = node(x, TOSAC_OP_WHILE_LOOP, 2, ins, 2, outs);
    if (!n || tosac_node_set_str(n, TOSAC_ATTR_WHILE_LOOP_cond_graph, "cond_region") != TOSAC_OK ||
        tosac_node_set_str(n, TOSAC_ATTR_WHILE_LOOP_body_graph, "body_region") != TOSAC_OK)
        x->fail = true;
    output(x, outs[1]);

    sub_region(x, "cond_region", "cond_bb");
    if (x->fail) return;
    int64_t limit = 3, inc = 1;
    tosac_value *ci = input(x, "i", TOSAC_DTYPE_INT32, 0, NULL);
    input(x, "x", TOSAC_DTYPE_INT32, 2, d23);
    tosac_value *cmp[2] = {constant(x, "limit", TOSAC_DTYPE_INT32, 0, NULL, &limit), ci};
    tosac_value *go = tensor(x, "go", TOSAC_DTYPE_BOOL, 0, NULL);
    node(x, TOSAC_OP_GREATER, 2, cmp, 1, &go);
    output(x, go);

    sub_region(x, "body_region", "body_bb");
    if (x->fail) return;
    tosac_value *bi = input(x, "i", TOSAC_DTYPE_INT32, 0, NULL);
    tosac_value *bx = input(x, "x", TOSAC_DTYPE_INT32, 2, d23);
    tosac_value *add1[2] = {bi, constant(x, "one", TOSAC_DTYPE_INT32, 0, NULL, &inc)};
    tosac_value *i2 = tensor(x, "i_next", TOSAC_DTYPE_INT32, 0, NULL);
    node(x, TOSAC_OP_ADD, 2, add1, 1, &i2);
    tosac_value *add2[2] = {bx, bx};
    tosac_value *x2 = tensor(x, "x_next", TOSAC_DTYPE_INT32, 2, d23);
    node(x, TOSAC_OP_ADD, 2, add2, 1, &x2);
    output(x, i2);
    output(x, x2);
}

/* VARIABLE [] -> [state]; VARIABLE_WRITE [x] -> [state]; VARIABLE_READ [state] -> [y]. */
static void build_variable(gb *x, const tosac_type_row *row)
{
    tosac_dtype t = (tosac_dtype)row->t[0];
    static const int64_t d23[2] = {2, 3};
    tosac_value *state = tensor(x, "state", t, 2, d23);
    if (state) {
        static const int64_t init[6] = {1, 2, 3, 4, 5, 6};
        uint8_t bytes[64];
        size_t len = encode(t, init, 6, bytes, sizeof bytes);
        state->variable = true;
        state->variable_name = "model/state";
        state->data = len ? tosac_arena_memdup(&x->g->arena, bytes, len) : NULL;
        state->data_len = len;
        if (!state->data) x->fail = true;
    }
    tosac_value *in = input(x, "x", t, 2, d23);
    tosac_value *y = tensor(x, "y", t, 2, d23);
    node(x, TOSAC_OP_VARIABLE, 0, NULL, 1, &state);
    node(x, TOSAC_OP_VARIABLE_WRITE, 1, &in, 1, &state);
    node(x, TOSAC_OP_VARIABLE_READ, 1, &state, 1, &y);
    output(x, y);
}

/* ------------------------------------------------------------------------------------------ */

static const char *const k_families[] = {"unary", "binary", "select", "reduce", "cast", "const",
                                         "identity", "const_shape", "concat", "pad", "reshape", "reverse",
                                         "slice", "tile", "transpose", "gather", "scatter", "custom",
                                         "cond_if", "while_loop", "variable"};

tosac_graph *test_op_graph_a(uint32_t op, unsigned variant)
{
    const tosac_op_info *info = tosac_op_info_get(op);
    if (!info) return NULL;
    bool mine = false;
    for (size_t i = 0; i < sizeof k_families / sizeof k_families[0]; i++)
        if (!strcmp(info->check, k_families[i])) mine = true;
    unsigned nrows = 0;
    const tosac_type_row *rows = tosac_op_type_rows(op, &nrows);
    if (!mine || !rows || variant >= nrows) return NULL;
    const tosac_type_row *row = &rows[variant];
    gb x;
    if (!begin(&x, "main", "main")) return finish(&x);
    const char *f = info->check;
    tosac_op o = (tosac_op)op;
    if (!strcmp(f, "unary")) build_unary(&x, o, row, variant);
    else if (!strcmp(f, "binary")) build_binary(&x, o, row, variant);
    else if (!strcmp(f, "select")) build_select(&x, row, variant);
    else if (!strcmp(f, "reduce")) build_reduce(&x, o, row, variant);
    else if (!strcmp(f, "cast")) build_cast(&x, row, variant);
    else if (!strcmp(f, "const")) build_const(&x, row, variant);
    else if (!strcmp(f, "identity")) build_identity(&x, row, variant);
    else if (!strcmp(f, "const_shape")) build_const_shape(&x);
    else if (!strcmp(f, "concat")) build_concat(&x, row, variant);
    else if (!strcmp(f, "pad")) build_pad(&x, row);
    else if (!strcmp(f, "reshape")) build_reshape(&x, row, variant);
    else if (!strcmp(f, "reverse")) build_reverse(&x, row, variant);
    else if (!strcmp(f, "slice")) build_slice(&x, row);
    else if (!strcmp(f, "tile")) build_tile(&x, row);
    else if (!strcmp(f, "transpose")) build_transpose(&x, row);
    else if (!strcmp(f, "gather")) build_gather(&x, row);
    else if (!strcmp(f, "scatter")) build_scatter(&x, row);
    else if (!strcmp(f, "custom")) build_custom(&x);
    else if (!strcmp(f, "cond_if")) build_cond_if(&x, variant);
    else if (!strcmp(f, "while_loop")) build_while_loop(&x);
    else build_variable(&x, row);
    return finish(&x);
}
