/*
 * tosac_validate: every example graph of the elementwise / layout / data-node / custom /
 * control-flow / variable families validates cleanly, rows needing extensions or profiles are
 * rejected with a message naming them, and each generic rule and family ERROR_IF has a negative
 * test asserting the status and a key phrase of the message.
 */
#include <stdlib.h>

#include "harness/op_graphs.h"
#include "harness/test.h"
#include "ir/graph.h"
#include "tosa/check.h"
#include "tosa/op_table.h"
#include "tosac/validate.h"

static tosac_diag *g_diag;

static const char *const k_my_families[] = {"unary", "binary", "select", "reduce", "cast", "const",
                                            "identity", "const_shape", "concat", "pad", "reshape", "reverse",
                                            "slice", "tile", "transpose", "gather", "scatter", "custom",
                                            "cond_if", "while_loop", "variable"};

static bool is_mine(uint32_t op)
{
    const tosac_op_info *info = tosac_op_info_get(op);
    if (!info) return false;
    for (size_t i = 0; i < sizeof k_my_families / sizeof k_my_families[0]; i++)
        if (!strcmp(info->check, k_my_families[i])) return true;
    return false;
}

static void dump_diag(void)
{
    for (size_t i = 0; i < tosac_diag_count(g_diag); i++) {
        tosac_status code;
        const char *m = tosac_diag_message(g_diag, i, &code);
        fprintf(stderr, "    [%s] %s\n", tosac_status_str(code), m);
    }
}

static tosac_status validate_with(const tosac_graph *g, const tosac_validate_opts *o)
{
    tosac_diag_clear(g_diag);
    return tosac_validate(g, o, g_diag);
}

static tosac_validate_opts opts_level(tosac_level level)
{
    tosac_validate_opts o = tosac_validate_opts_default();
    o.level = level;
    return o;
}

/* Number of messages of class `code`; code < 0 counts every non-note message. */
static size_t count_class(int code)
{
    size_t n = 0;
    for (size_t i = 0; i < tosac_diag_count(g_diag); i++) {
        tosac_status c;
        tosac_diag_message(g_diag, i, &c);
        if (code < 0 ? c != TOSAC_OK : (int)c == code) n++;
    }
    return n;
}

/* A message of class `code` (any class if code < 0) contains `needle`. */
static bool has_msg(const char *needle, int code)
{
    for (size_t i = 0; i < tosac_diag_count(g_diag); i++) {
        tosac_status c;
        const char *m = tosac_diag_message(g_diag, i, &c);
        if ((code < 0 || (int)c == code) && strstr(m, needle)) return true;
    }
    return false;
}

/* Validates g under `o` and expects status `st` and a message with `phrase` of that class. */
#define EXPECT_RESULT(g, o, st, phrase)                                                                   \
    do {                                                                                                  \
        tosac_status got_ = validate_with((g), (o));                                                      \
        int fail_ = t_failures;                                                                           \
        EXPECT_EQ_I(got_, (st));                                                                          \
        if ((st) != TOSAC_OK) EXPECT(has_msg((phrase), (st)));                                            \
        if (t_failures != fail_) {                                                                        \
            fprintf(stderr, "  (expected \"%s\")\n", (phrase));                                           \
            dump_diag();                                                                                  \
        }                                                                                                 \
    } while (0)

#define EXPECT_ERROR(g, phrase)                                                                           \
    do {                                                                                                  \
        tosac_validate_opts o_ = tosac_validate_opts_default();                                           \
        EXPECT_RESULT((g), &o_, TOSAC_ERR_TOSA_ERROR, (phrase));                                          \
    } while (0)

#define EXPECT_VALID(g)                                                                                   \
    do {                                                                                                  \
        tosac_validate_opts o_ = tosac_validate_opts_default();                                           \
        EXPECT_RESULT((g), &o_, TOSAC_OK, "");                                                            \
        EXPECT_EQ_I(count_class(-1), 0);                                                                  \
    } while (0)

/* ------------------------------------------------------------------------------------------ */
/* Graph access and small builders                                                               */

static tosac_block *main_block(tosac_graph *g) { return g->regions[0]->blocks[0]; }

/* First node of the main block with operator `op`. */
static tosac_node *find_node(tosac_graph *g, uint32_t op)
{
    tosac_block *b = main_block(g);
    for (uint32_t i = 0; i < b->n_nodes; i++)
        if (b->nodes[i]->op == op) return b->nodes[i];
    return NULL;
}

static tosac_value *find_value(tosac_graph *g, const char *name) { return tosac_block_find(main_block(g), name); }

/* Changes dims of a value in place (same rank). */
static void set_dims(tosac_value *v, const int64_t *dims)
{
    for (int32_t i = 0; i < v->rank; i++) v->shape[i] = dims[i];
}

/* Overwrites element 0..n-1 of an int64 shape value's data. */
static void set_shape_vals(tosac_value *v, const int64_t *vals, uint32_t n)
{
    uint8_t *d = (uint8_t *)v->data;
    for (uint32_t i = 0; i < n; i++)
        for (int k = 0; k < 8; k++) d[i * 8 + (uint32_t)k] = (uint8_t)((uint64_t)vals[i] >> (8 * k));
}

typedef struct bld {
    tosac_graph *g;
    tosac_block *b;
} bld;

static bld new_graph(void)
{
    bld x;
    x.g = tosac_graph_create();
    x.b = tosac_region_add_block(tosac_graph_add_region(x.g, "main"), "main");
    return x;
}

static tosac_value *in_t(bld *x, const char *name, tosac_dtype t, int rank, const int64_t *dims)
{
    tosac_value *v = tosac_block_add_tensor(x->b, name, t, rank, dims);
    tosac_block_add_input(x->b, v);
    return v;
}

static tosac_value *tens(bld *x, const char *name, tosac_dtype t, int rank, const int64_t *dims)
{
    return tosac_block_add_tensor(x->b, name, t, rank, dims);
}

static tosac_value *const_i(bld *x, const char *name, tosac_dtype t, int rank, const int64_t *dims, const int64_t *vals,
                            int64_t n)
{
    uint8_t buf[1024] = {0};
    unsigned bytes = tosac_dtype_bits(t) / 8;
    for (int64_t i = 0; i < n; i++)
        for (unsigned k = 0; k < bytes; k++) buf[i * bytes + k] = (uint8_t)((uint64_t)vals[i] >> (8 * k));
    return tosac_block_add_const(x->b, name, t, rank, dims, buf, (size_t)(n * bytes));
}

static tosac_node *op2(bld *x, tosac_op op, tosac_value *a, tosac_value *b, tosac_value *y)
{
    tosac_value *ins[2] = {a, b};
    return tosac_block_add_node(x->b, op, 2, ins, 1, &y);
}

/* ------------------------------------------------------------------------------------------ */
/* (a) every example graph of these families                                                     */

static void examples_validate(void)
{
    unsigned graphs = 0, expected = 0;
    tosac_validate_opts def = tosac_validate_opts_default();
    for (uint32_t op = 1; op < TOSAC_OP_COUNT; op++) {
        unsigned nrows = 0;
        const tosac_type_row *rows = tosac_op_type_rows(op, &nrows);
        if (is_mine(op)) expected += nrows;
        for (unsigned v = 0; v < nrows + 1; v++) {
            tosac_graph *g = test_op_graph_a(op, v);
            if (!is_mine(op) || v >= nrows) {
                EXPECT(g == NULL);
                tosac_graph_destroy(g);
                continue;
            }
            EXPECT(g != NULL);
            if (!g) {
                fprintf(stderr, "no example graph for %s row %u\n", tosac_op_name(op), v);
                continue;
            }
            graphs++;
            const tosac_type_row *row = &rows[v];
            /* default options: all profiles and extensions, level 8K */
            tosac_status st = validate_with(g, &def);
            if (st != TOSAC_OK || count_class(-1) != 0 || count_class(TOSAC_OK) != 0) {
                fprintf(stderr, "%s row %u: %s\n", tosac_op_name(op), v, tosac_status_str(st));
                dump_diag();
            }
            EXPECT_EQ_I(st, TOSAC_OK);
            EXPECT_EQ_I(count_class(-1), 0);
            EXPECT_EQ_I(count_class(TOSAC_OK), 0); /* no dead operators either */
            /* exactly what the row needs */
            tosac_validate_opts min = {row->profiles, row->extensions, TOSAC_LEVEL_8K};
            st = validate_with(g, &min);
            if (st != TOSAC_OK) {
                fprintf(stderr, "%s row %u under its own profile/extensions:\n", tosac_op_name(op), v);
                dump_diag();
            }
            EXPECT_EQ_I(st, TOSAC_OK);
            /* without its extensions: rejected, naming the first missing one */
            if (row->extensions) {
                tosac_validate_opts none = def;
                none.extensions = 0;
                unsigned bit = 0;
                while (!(row->extensions & (1u << bit))) bit++;
                char want[32] = "EXT-";
                const char *e = tosac_ext_name(bit);
                size_t k = 4;
                for (; *e && k + 1 < sizeof want; e++) want[k++] = (char)(*e >= 'a' && *e <= 'z' ? *e - 'a' + 'A' : *e);
                want[k] = '\0';
                EXPECT_RESULT(g, &none, TOSAC_ERR_TOSA_ERROR, want);
            }
            /* without its profile */
            if (row->profiles != (TOSAC_PROFILE_INT | TOSAC_PROFILE_FP)) {
                tosac_validate_opts other = def;
                other.profiles = (TOSAC_PROFILE_INT | TOSAC_PROFILE_FP) & ~row->profiles;
                EXPECT_RESULT(g, &other, TOSAC_ERR_TOSA_ERROR,
                              row->profiles == TOSAC_PROFILE_INT ? "PRO-INT" : "PRO-FP");
            }
            /* and under level none */
            tosac_validate_opts lnone = opts_level(TOSAC_LEVEL_NONE);
            EXPECT_EQ_I(validate_with(g, &lnone), TOSAC_OK);
            tosac_graph_destroy(g);
        }
    }
    EXPECT_EQ_I(graphs, expected);
    fprintf(stderr, "  %u example graphs validated\n", graphs);
}

/* ------------------------------------------------------------------------------------------ */
/* (b) generic rules                                                                             */

static void graph_structure(void)
{
    tosac_graph *g = test_op_graph_a(TOSAC_OP_ADD, 0);
    tosac_graph_set_version(g, 2, 0, 0, false);
    EXPECT_ERROR(g, "unsupported TOSA version 2.0.0");
    tosac_graph_set_version(g, 1, 1, 0, false);
    EXPECT_ERROR(g, "unsupported TOSA version 1.1.0");
    tosac_graph_set_version(g, 1, 1, 0, true); /* the reference model's own 1.1 draft files */
    EXPECT_VALID(g);
    tosac_graph_set_version(g, 1, 0, 2, true);
    EXPECT_VALID(g);
    tosac_graph_destroy(g);

    g = tosac_graph_create();
    EXPECT_ERROR(g, "has no regions");
    tosac_region *r = tosac_graph_add_region(g, "main");
    EXPECT_ERROR(g, "has no block 'main'");
    tosac_region_add_block(r, "entry");
    EXPECT_ERROR(g, "has no block 'main'");
    tosac_region_add_block(r, "main");
    EXPECT_ERROR(g, "the graph has no outputs and writes no variable"); /* an empty entry block */
    tosac_region_add_block(r, "main");
    EXPECT_ERROR(g, "two blocks named 'main'");
    tosac_graph_destroy(g);

    g = test_op_graph_a(TOSAC_OP_ADD, 0);
    tosac_region_add_block(tosac_graph_add_region(g, "main"), "other");
    EXPECT_ERROR(g, "region name 'main' is used by regions 0 and 1");
    tosac_graph_destroy(g);

    /* unreferenced blocks are still validated */
    g = test_op_graph_a(TOSAC_OP_ADD, 0);
    bld x = {g, tosac_region_add_block(tosac_graph_add_region(g, "spare"), "bb")};
    static const int64_t d2[1] = {2}, d3[1] = {3};
    op2(&x, TOSAC_OP_ADD, in_t(&x, "p", TOSAC_DTYPE_INT32, 1, d2), in_t(&x, "q", TOSAC_DTYPE_INT32, 1, d3),
        tens(&x, "r", TOSAC_DTYPE_INT32, 1, d3));
    tosac_block_add_output(x.b, tosac_block_find(x.b, "r"));
    EXPECT_ERROR(g, "region 'spare' block 'bb' op 0 (ADD) [p, q -> r]: input1 [2] and input2 [3] cannot be broadcast");
    tosac_graph_destroy(g);

    /* invalid arguments */
    EXPECT_EQ_I(validate_with(NULL, NULL), TOSAC_ERR_INVALID_ARG);
    g = test_op_graph_a(TOSAC_OP_ADD, 0);
    EXPECT_EQ_I(validate_with(g, NULL), TOSAC_OK); /* NULL options = defaults */
    tosac_validate_opts bad = tosac_validate_opts_default();
    bad.profiles = 0;
    EXPECT_EQ_I(validate_with(g, &bad), TOSAC_ERR_INVALID_ARG);
    bad = tosac_validate_opts_default();
    bad.level = (tosac_level)7;
    EXPECT_EQ_I(validate_with(g, &bad), TOSAC_ERR_INVALID_ARG);
    tosac_graph_destroy(g);
}

static void names_and_declarations(void)
{
    /* duplicate names */
    tosac_graph *g = test_op_graph_a(TOSAC_OP_ADD, 0);
    static const int64_t d4[1] = {4};
    tosac_block_add_tensor(main_block(g), "a", TOSAC_DTYPE_INT8, 1, d4);
    EXPECT_ERROR(g, "name 'a' is declared more than once");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_PAD, 1);
    tosac_block_add_tensor(main_block(g), "padding", TOSAC_DTYPE_INT8, 1, d4); /* clashes with a shape value */
    EXPECT_ERROR(g, "name 'padding' is declared more than once");
    tosac_graph_destroy(g);

    /* empty name */
    g = test_op_graph_a(TOSAC_OP_ADD, 0);
    tosac_block_add_tensor(main_block(g), "", TOSAC_DTYPE_INT8, 1, d4);
    EXPECT_ERROR(g, "has an empty name");
    tosac_graph_destroy(g);

    /* undeclared operand */
    g = test_op_graph_a(TOSAC_OP_ADD, 0);
    tosac_node *n = find_node(g, TOSAC_OP_ADD);
    n->inputs[1] = tosac_block_get_or_placeholder(main_block(g), "ghost");
    EXPECT_ERROR(g, "input 'ghost' is not a tensor or shape of block 'main'");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_ADD, 0);
    n = find_node(g, TOSAC_OP_ADD);
    n->outputs[0] = tosac_block_get_or_placeholder(main_block(g), "phantom");
    EXPECT_ERROR(g, "output 'phantom' is not a tensor or shape of block 'main'");
    tosac_graph_destroy(g);

    /* an operand that belongs to another block */
    g = test_op_graph_a(TOSAC_OP_ADD, 0);
    tosac_block *other = tosac_region_add_block(g->regions[0], "other");
    tosac_value *alien = tosac_block_add_tensor(other, "alien", TOSAC_DTYPE_INT32, 3, (const int64_t[]){2, 1, 5});
    find_node(g, TOSAC_OP_ADD)->inputs[1] = alien;
    EXPECT_ERROR(g, "input 'alien' is not a tensor or shape of block 'main'");
    tosac_graph_destroy(g);

    /* block inputs/outputs must be tensors */
    g = test_op_graph_a(TOSAC_OP_PAD, 1);
    tosac_block_add_input(main_block(g), find_value(g, "padding"));
    EXPECT_ERROR(g, "block input 'padding' is a shape value");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_PAD, 1);
    tosac_block_add_output(main_block(g), find_value(g, "padding"));
    EXPECT_ERROR(g, "block output 'padding' is a shape value");
    tosac_graph_destroy(g);

    /* unranked tensors, zero and absurd dims */
    g = test_op_graph_a(TOSAC_OP_ADD, 0);
    find_value(g, "b")->is_unranked = true;
    EXPECT_ERROR(g, "tensor 'b' is unranked");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_ADD, 0);
    find_value(g, "b")->shape[2] = 0;
    EXPECT_ERROR(g, "dimension 2 of 'b' is 0");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_ADD, 0);
    set_dims(find_value(g, "a"), (const int64_t[]){INT64_MAX, INT64_MAX, INT64_MAX});
    set_dims(find_value(g, "y"), (const int64_t[]){INT64_MAX, INT64_MAX, INT64_MAX});
    set_dims(find_value(g, "b"), (const int64_t[]){INT64_MAX, 1, INT64_MAX});
    EXPECT_RESULT(g, NULL, TOSAC_ERR_UNPREDICTABLE, "MAX_LOG2_SIZE"); /* valid shapes, just far too big */
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_ADD, 0);
    find_value(g, "a")->dtype = TOSAC_DTYPE_UNKNOWN;
    EXPECT_ERROR(g, "tensor 'a' has no valid element type");
    tosac_graph_destroy(g);
}

static void producers_and_order(void)
{
    /* use before definition */
    tosac_graph *g = test_op_graph_a(TOSAC_OP_CONCAT, 0);
    bld x = {g, main_block(g)};
    tosac_value *y = find_value(g, "y");
    static const int64_t dz[3] = {2, 8, 5};
    tosac_value *z = tens(&x, "z", TOSAC_DTYPE_BOOL, 3, dz);
    tosac_block_add_node(x.b, TOSAC_OP_LOGICAL_NOT, 1, &z, 1, &y); /* consumes z, produced later */
    tosac_value *a = find_value(g, "a");
    tosac_block_add_node(x.b, TOSAC_OP_IDENTITY, 1, &a, 1, &z);
    EXPECT_ERROR(g, "input 'z' is used before it is produced by op 2");
    EXPECT(has_msg("output 'y' is already produced by op 0", TOSAC_ERR_TOSA_ERROR));
    tosac_graph_destroy(g);

    /* consumed value without producer; unreachable block output */
    g = test_op_graph_a(TOSAC_OP_ADD, 0);
    x = (bld){g, main_block(g)};
    find_node(g, TOSAC_OP_ADD)->inputs[1] = tens(&x, "w", TOSAC_DTYPE_INT32, 3, (const int64_t[]){2, 1, 5});
    tosac_block_add_output(x.b, tens(&x, "lost", TOSAC_DTYPE_INT32, 1, (const int64_t[]){3}));
    EXPECT_ERROR(g, "input 'w' is neither a block input nor produced by any operator");
    EXPECT(has_msg("block output 'lost' is not reachable", TOSAC_ERR_TOSA_ERROR));
    tosac_graph_destroy(g);

    /* a block input must not be produced */
    g = test_op_graph_a(TOSAC_OP_ADD, 0);
    x = (bld){g, main_block(g)};
    tosac_value *b = find_value(g, "b");
    tosac_block_add_node(x.b, TOSAC_OP_IDENTITY, 1, &b, 1, &b);
    EXPECT_ERROR(g, "output 'b' is a block input and cannot be produced");
    tosac_graph_destroy(g);

    /* dead operators are notes, not errors */
    g = test_op_graph_a(TOSAC_OP_ADD, 0);
    x = (bld){g, main_block(g)};
    a = find_value(g, "a");
    tosac_value *dead = tens(&x, "unused", TOSAC_DTYPE_INT32, 3, (const int64_t[]){2, 3, 5});
    tosac_block_add_node(x.b, TOSAC_OP_ABS, 1, &a, 1, &dead);
    EXPECT_EQ_I(validate_with(g, NULL), TOSAC_OK);
    EXPECT(has_msg("block 'main' op 1 (ABS) [a -> unused]: no result of this operator is used", TOSAC_OK));
    EXPECT_EQ_I(count_class(-1), 0);
    tosac_graph_destroy(g);

    /* NULL operand and missing operand list (hostile IR) */
    g = test_op_graph_a(TOSAC_OP_ADD, 0);
    find_node(g, TOSAC_OP_ADD)->inputs[0] = NULL;
    EXPECT_ERROR(g, "input 0 (input1) is missing");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_ADD, 0);
    find_node(g, TOSAC_OP_ADD)->inputs = NULL;
    EXPECT_ERROR(g, "operand list is missing");
    tosac_graph_destroy(g);
}

static void operator_rules(void)
{
    /* unknown operator number */
    tosac_graph *g = test_op_graph_a(TOSAC_OP_ADD, 0);
    find_node(g, TOSAC_OP_ADD)->op = 99;
    EXPECT_ERROR(g, "op 0 (UNKNOWN) [a, b -> y]: unknown operator number 99");
    tosac_graph_destroy(g);

    /* attribute union tag */
    g = test_op_graph_a(TOSAC_OP_ADD, 0);
    tosac_node *n = find_node(g, TOSAC_OP_ADD);
    n->attr_type = 16;
    EXPECT_ERROR(g, "attribute union tag 16 (ArithmeticRightShiftAttribute) does not match the operator, expected 15");
    n->attr_type = 0; /* NONE is fine for an op whose attribute table is empty */
    EXPECT_VALID(g);
    n->attr_type = 200;
    EXPECT_ERROR(g, "attribute union tag 200 is unknown");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_MAXIMUM, 0);
    find_node(g, TOSAC_OP_MAXIMUM)->attr_type = 0;
    EXPECT_ERROR(g, "attribute union tag is NONE (0), expected 26 (MaximumAttribute)");
    tosac_graph_destroy(g);

    /* operand counts */
    g = test_op_graph_a(TOSAC_OP_ADD, 0);
    find_node(g, TOSAC_OP_ADD)->n_inputs = 1;
    EXPECT_ERROR(g, "has 1 inputs, expected 2");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_ADD, 0);
    find_node(g, TOSAC_OP_ADD)->n_outputs = 0;
    EXPECT_ERROR(g, "has 0 outputs, expected 1");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_CONCAT, 0);
    find_node(g, TOSAC_OP_CONCAT)->n_inputs = 0;
    EXPECT_ERROR(g, "has 0 inputs, expected at least 1");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_COND_IF, 0);
    find_node(g, TOSAC_OP_COND_IF)->n_inputs = 0;
    EXPECT_ERROR(g, "has 0 inputs, expected at least 1");
    tosac_graph_destroy(g);

    /* compile-time-constant operands (EXT-DYNAMIC lifts the rule; the default options leave it out) */
    tosac_validate_opts nodyn = tosac_validate_opts_default();
    tosac_validate_opts dyn = nodyn;
    dyn.extensions |= TOSAC_EXT_DYNAMIC;
    g = test_op_graph_a(TOSAC_OP_NEGATE, 0); /* INT8 */
    bld x = {g, main_block(g)};
    n = find_node(g, TOSAC_OP_NEGATE);
    n->inputs[1] = in_t(&x, "runtime_zp", TOSAC_DTYPE_INT8, 1, (const int64_t[]){1});
    EXPECT_RESULT(g, &nodyn, TOSAC_ERR_TOSA_ERROR,
                  "input 'runtime_zp' (input1_zp) must be a compile-time-constant tensor produced by CONST unless "
                  "EXT-DYNAMIC is enabled (it is a block input)");
    EXPECT_RESULT(g, &dyn, TOSAC_OK, "");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_MUL, 2); /* shift computed by an operator */
    x = (bld){g, main_block(g)};
    n = find_node(g, TOSAC_OP_MUL);
    tosac_value *s_in = in_t(&x, "s_in", TOSAC_DTYPE_INT8, 1, (const int64_t[]){1});
    tosac_value *s_out = tens(&x, "s_out", TOSAC_DTYPE_INT8, 1, (const int64_t[]){1});
    tosac_block_add_node(x.b, TOSAC_OP_IDENTITY, 1, &s_in, 1, &s_out);
    n->inputs[2] = s_out;
    EXPECT_RESULT(g, &nodyn, TOSAC_ERR_TOSA_ERROR, "input 's_out' (shift) must be a compile-time-constant tensor produced by CONST unless EXT-DYNAMIC is "
                  "enabled (it is produced by IDENTITY)");
    tosac_graph_destroy(g);

    /* shape operands */
    g = test_op_graph_a(TOSAC_OP_RESHAPE, 1);
    x = (bld){g, main_block(g)};
    n = find_node(g, TOSAC_OP_RESHAPE);
    n->inputs[1] = const_i(&x, "shape_tensor", TOSAC_DTYPE_INT32, 1, (const int64_t[]){1}, (const int64_t[]){30}, 1);
    EXPECT_ERROR(g, "input 'shape_tensor' (shape) must be a shape value, not a tensor");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_RESHAPE, 1);
    x = (bld){g, main_block(g)};
    n = find_node(g, TOSAC_OP_RESHAPE);
    n->inputs[1] = tosac_block_add_shape(x.b, "runtime_shape", 1); /* a shape value without CONST_SHAPE */
    EXPECT_RESULT(g, &nodyn, TOSAC_ERR_TOSA_ERROR, "input 'runtime_shape' (shape) must be a shape value produced by CONST_SHAPE");
    n->inputs[1] = find_value(g, "shape");
    n->inputs[0] = find_value(g, "shape");
    EXPECT_ERROR(g, "input 'shape' (input1) must be a tensor, not a shape value");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_CONST_SHAPE, 0);
    n = find_node(g, TOSAC_OP_CONST_SHAPE);
    n->outputs[0] = find_value(g, "x");
    EXPECT_ERROR(g, "output 'x' (output) must be a shape value, not a tensor");
    tosac_graph_destroy(g);

    /* type-support rows */
    g = test_op_graph_a(TOSAC_OP_ADD, 0);
    find_value(g, "b")->dtype = TOSAC_DTYPE_INT8;
    EXPECT_ERROR(g, "no type-support row of ADD accepts (INT32, INT8 -> INT32); rows: (i32) (fp16) (fp32) (bf16)");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_EQUAL, 0);
    find_value(g, "y")->dtype = TOSAC_DTYPE_INT32;
    EXPECT_ERROR(g, "no type-support row of EQUAL accepts (INT32, INT32 -> INT32)");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_SELECT, 1);
    find_value(g, "cond")->dtype = TOSAC_DTYPE_INT8;
    EXPECT_ERROR(g, "no type-support row of SELECT");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_MUL, 0); /* shift must be INT8 */
    find_value(g, "shift")->dtype = TOSAC_DTYPE_INT16;
    EXPECT_ERROR(g, "no type-support row of MUL");
    tosac_graph_destroy(g);

    /* output shape */
    g = test_op_graph_a(TOSAC_OP_ADD, 0);
    set_dims(find_value(g, "y"), (const int64_t[]){2, 3, 4});
    EXPECT_ERROR(g, "output shape [2,3,4] does not match the broadcast shape [2,3,5]");
    tosac_graph_destroy(g);
}

/* CONV2D i8 x i8 with an acc_type attribute (the conv family itself is checked elsewhere). */
static tosac_graph *conv_graph(int64_t acc)
{
    bld x = new_graph();
    static const int64_t din[4] = {1, 5, 5, 2}, dw[4] = {3, 3, 3, 2}, db[1] = {3}, d1[1] = {1}, dy[4] = {1, 3, 3, 3};
    int64_t wv[54] = {0}, bv[3] = {0}, zero = 0;
    tosac_value *ins[5] = {in_t(&x, "x", TOSAC_DTYPE_INT8, 4, din), const_i(&x, "w", TOSAC_DTYPE_INT8, 4, dw, wv, 54),
                           const_i(&x, "bias", TOSAC_DTYPE_INT32, 1, db, bv, 3),
                           const_i(&x, "x_zp", TOSAC_DTYPE_INT8, 1, d1, &zero, 1),
                           const_i(&x, "w_zp", TOSAC_DTYPE_INT8, 1, d1, &zero, 1)};
    tosac_value *y = tens(&x, "y", TOSAC_DTYPE_INT32, 4, dy);
    tosac_node *n = tosac_block_add_node(x.b, TOSAC_OP_CONV2D, 5, ins, 1, &y);
    static const int32_t pad[4] = {0, 0, 0, 0}, one2[2] = {1, 1};
    tosac_node_set_ints(n, TOSAC_ATTR_CONV2D_pad, pad, 4);
    tosac_node_set_ints(n, TOSAC_ATTR_CONV2D_stride, one2, 2);
    tosac_node_set_ints(n, TOSAC_ATTR_CONV2D_dilation, one2, 2);
    tosac_node_set_int(n, TOSAC_ATTR_CONV2D_acc_type, acc);
    tosac_block_add_output(x.b, y);
    return x.g;
}

static void acc_type_rule(void)
{
    tosac_graph *g = conv_graph(TOSAC_DTYPE_INT48);
    EXPECT_ERROR(g, "acc_type INT48 (6) does not match the operand types; allowed: INT32");
    tosac_graph_destroy(g);
    g = conv_graph(TOSAC_DTYPE_UNKNOWN);
    EXPECT_ERROR(g, "acc_type UNKNOWN (0)");
    tosac_graph_destroy(g);
    g = conv_graph(TOSAC_DTYPE_INT32);
    tosac_validate_opts o = tosac_validate_opts_default();
    tosac_status st = validate_with(g, &o);
    EXPECT(!has_msg("acc_type", -1));
    EXPECT(!has_msg("type-support", -1));
    (void)st; /* the rest of CONV2D is the conv family's business */
    tosac_graph_destroy(g);
}

static void level_rules(void)
{
    /* rank > MAX_RANK: ERROR, not a LEVEL_CHECK (docs/CONFORMANCE.md) */
    bld x = new_graph();
    static const int64_t d7[7] = {1, 2, 1, 3, 1, 1, 2};
    tosac_value *a = in_t(&x, "a", TOSAC_DTYPE_INT32, 7, d7), *b = in_t(&x, "b", TOSAC_DTYPE_INT32, 7, d7);
    tosac_value *y = tens(&x, "y", TOSAC_DTYPE_INT32, 7, d7);
    op2(&x, TOSAC_OP_ADD, a, b, y);
    tosac_block_add_output(x.b, y);
    tosac_validate_opts k8 = opts_level(TOSAC_LEVEL_8K), none = opts_level(TOSAC_LEVEL_NONE);
    EXPECT_RESULT(x.g, &k8, TOSAC_ERR_TOSA_ERROR, "tensor 'a' has rank 7 > MAX_RANK 6");
    EXPECT_RESULT(x.g, &none, TOSAC_OK, "");
    tosac_graph_destroy(x.g);

    /* tensor size */
    x = new_graph();
    static const int64_t big[2] = {65536, 32768}; /* 2^31 bytes */
    a = in_t(&x, "a", TOSAC_DTYPE_INT8, 2, big);
    y = tens(&x, "y", TOSAC_DTYPE_INT8, 2, big);
    tosac_block_add_node(x.b, TOSAC_OP_IDENTITY, 1, &a, 1, &y);
    tosac_block_add_output(x.b, y);
    EXPECT_RESULT(x.g, &k8, TOSAC_ERR_UNPREDICTABLE, "tensor 'a' (INT8) occupies 2^31 bytes or more");
    EXPECT_RESULT(x.g, &none, TOSAC_OK, "");
    set_dims(a, (const int64_t[]){65536, 32767});
    set_dims(y, (const int64_t[]){65536, 32767});
    EXPECT_RESULT(x.g, &k8, TOSAC_OK, "");
    tosac_graph_destroy(x.g);

    /* MAX_TENSOR_LIST_SIZE */
    x = new_graph();
    tosac_value *ins[65];
    char name[16];
    for (int i = 0; i < 65; i++) {
        snprintf(name, sizeof name, "t%d", i);
        ins[i] = in_t(&x, name, TOSAC_DTYPE_INT8, 1, (const int64_t[]){1});
    }
    y = tens(&x, "y", TOSAC_DTYPE_INT8, 1, (const int64_t[]){65});
    tosac_block_add_node(x.b, TOSAC_OP_CONCAT, 65, ins, 1, &y);
    tosac_block_add_output(x.b, y);
    EXPECT_RESULT(x.g, &k8, TOSAC_ERR_UNPREDICTABLE, "input list input1 has 65 tensors > MAX_TENSOR_LIST_SIZE 64");
    EXPECT_RESULT(x.g, &none, TOSAC_OK, "");
    find_node(x.g, TOSAC_OP_CONCAT)->n_inputs = 64;
    y->shape[0] = 64;
    EXPECT_RESULT(x.g, &k8, TOSAC_OK, "");
    tosac_graph_destroy(x.g);
}

/* main: COND_IF(c, [c, x]) -> y; level k (1..depth) in region "lvl<k>": the same again, the
   innermost level computes IDENTITY(x). COND_IF operators sit at nesting 0..depth-1. */
static tosac_graph *nested_if(int depth)
{
    bld x = new_graph();
    static const int64_t d1[1] = {1}, d3[1] = {3};
    char next[16];
    for (int k = 0; k <= depth; k++) {
        if (k > 0) {
            char rn[16];
            snprintf(rn, sizeof rn, "lvl%d", k);
            x.b = tosac_region_add_block(tosac_graph_add_region(x.g, rn), "bb");
        }
        tosac_value *c = in_t(&x, "c", TOSAC_DTYPE_BOOL, 1, d1), *v = in_t(&x, "x", TOSAC_DTYPE_INT32, 1, d3);
        tosac_value *y = tens(&x, "y", TOSAC_DTYPE_INT32, 1, d3);
        if (k < depth) {
            tosac_value *ins[3] = {c, c, v};
            tosac_node *n = tosac_block_add_node(x.b, TOSAC_OP_COND_IF, 3, ins, 1, &y);
            snprintf(next, sizeof next, "lvl%d", k + 1);
            tosac_node_set_str(n, TOSAC_ATTR_COND_IF_then_graph, next);
            tosac_node_set_str(n, TOSAC_ATTR_COND_IF_else_graph, next);
        } else {
            tosac_block_add_node(x.b, TOSAC_OP_IDENTITY, 1, &v, 1, &y);
        }
        tosac_block_add_output(x.b, y);
    }
    return x.g;
}

static tosac_block *block_named(tosac_graph *g, const char *region)
{
    for (uint32_t r = 0; r < g->n_regions; r++)
        if (!strcmp(g->regions[r]->name, region)) return g->regions[r]->blocks[0];
    return NULL;
}

static void control_flow(void)
{
    tosac_validate_opts k8 = opts_level(TOSAC_LEVEL_8K), none = opts_level(TOSAC_LEVEL_NONE);
    /* nesting */
    tosac_graph *g = nested_if(6);
    EXPECT_RESULT(g, &k8, TOSAC_OK, "");
    tosac_graph_destroy(g);
    g = nested_if(8);
    EXPECT_RESULT(g, &k8, TOSAC_ERR_UNPREDICTABLE,
                  "region 'lvl6' block 'bb' op 0 (COND_IF) [c, c, x -> y]: control flow nested 7 deep; this operator "
                  "would exceed MAX_NESTING 6");
    EXPECT_RESULT(g, &none, TOSAC_OK, "");
    tosac_graph_destroy(g);
    g = nested_if(300); /* deeper than MAX_NESTING of level none, and than the recursion cap */
    EXPECT_RESULT(g, &none, TOSAC_ERR_UNPREDICTABLE, "MAX_NESTING 256");
    tosac_graph_destroy(g);

    /* then/else graph names */
    g = test_op_graph_a(TOSAC_OP_COND_IF, 0);
    tosac_node *n = find_node(g, TOSAC_OP_COND_IF);
    tosac_node_set_str(n, TOSAC_ATTR_COND_IF_then_graph, "nowhere");
    EXPECT_ERROR(g, "then_graph 'nowhere' names no region and no block of region 'main'");
    n->attr[TOSAC_ATTR_COND_IF_else_graph].present = false;
    EXPECT_ERROR(g, "else_graph is not set");
    tosac_graph_destroy(g);

    /* older convention: the names are blocks of the current region */
    bld x = new_graph();
    static const int64_t d1[1] = {1}, d3[1] = {3};
    tosac_value *ins[2] = {in_t(&x, "c", TOSAC_DTYPE_BOOL, 0, NULL), in_t(&x, "x", TOSAC_DTYPE_INT32, 1, d3)};
    tosac_value *y = tens(&x, "y", TOSAC_DTYPE_INT32, 1, d3);
    n = tosac_block_add_node(x.b, TOSAC_OP_COND_IF, 2, ins, 1, &y);
    tosac_node_set_str(n, TOSAC_ATTR_COND_IF_then_graph, "then_bb");
    tosac_node_set_str(n, TOSAC_ATTR_COND_IF_else_graph, "else_bb");
    tosac_block_add_output(x.b, y);
    const char *names[2] = {"then_bb", "else_bb"};
    for (int k = 0; k < 2; k++) {
        x.b = tosac_region_add_block(x.g->regions[0], names[k]);
        tosac_value *a = in_t(&x, "a", TOSAC_DTYPE_INT32, 1, d3), *r = tens(&x, "r", TOSAC_DTYPE_INT32, 1, d3);
        tosac_block_add_node(x.b, k ? TOSAC_OP_IDENTITY : TOSAC_OP_ABS, 1, &a, 1, &r);
        tosac_block_add_output(x.b, r);
    }
    EXPECT_VALID(x.g);
    /* the referenced blocks are validated as part of the graph */
    tosac_region_find_block(x.g->regions[0], "else_bb")->nodes[0]->op = TOSAC_OP_NEGATE;
    EXPECT_ERROR(x.g, "block 'else_bb' op 0 (NEGATE) [a -> r]: has 1 inputs, expected 3");
    tosac_graph_destroy(x.g);

    /* condition and branch signatures */
    g = test_op_graph_a(TOSAC_OP_COND_IF, 0);
    find_value(g, "cond")->shape[0] = 2;
    EXPECT_ERROR(g, "condition 'cond' [2] must have exactly one element (has 2)");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_COND_IF, 0);
    x = (bld){g, block_named(g, "then_region")};
    in_t(&x, "extra", TOSAC_DTYPE_INT32, 1, d1);
    EXPECT_ERROR(g, "then_graph block 'then_bb' has 2 inputs but input_list has 1 tensors");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_COND_IF, 0);
    x = (bld){g, block_named(g, "else_region")};
    tosac_value *r = tosac_block_find(x.b, "r"), *a = tosac_block_find(x.b, "a");
    r->dtype = TOSAC_DTYPE_FP32;
    a->dtype = TOSAC_DTYPE_FP32;
    EXPECT_ERROR(g, "output_list[0] 'y' (INT32 [2,3]) does not match else_graph block 'else_bb' output[0] 'r' (FP32 [2,3])");
    EXPECT(has_msg("input_list[0] 'x' (INT32 [2,3]) does not match else_graph block 'else_bb' input[0] 'a' (FP32 [2,3])",
                   TOSAC_ERR_TOSA_ERROR));
    tosac_graph_destroy(g);

    /* WHILE_LOOP signatures */
    g = test_op_graph_a(TOSAC_OP_WHILE_LOOP, 0);
    set_dims(find_value(g, "y"), (const int64_t[]){3, 2});
    EXPECT_ERROR(g, "output_list[1] 'y' (INT32 [3,2]) must have the type and shape of input_list[1] 'x' (INT32 [2,3])");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_WHILE_LOOP, 0);
    x = (bld){g, block_named(g, "cond_region")};
    tosac_block_add_output(x.b, tosac_block_find(x.b, "i"));
    EXPECT_ERROR(g, "cond_graph block 'cond_bb' has 2 outputs; it must have exactly one BOOL output");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_WHILE_LOOP, 0);
    x = (bld){g, block_named(g, "cond_region")};
    x.b->outputs[0] = tosac_block_find(x.b, "x");
    EXPECT_ERROR(g, "cond_graph block 'cond_bb' output 'x' (INT32 [2,3]) must be a BOOL tensor with one element");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_WHILE_LOOP, 0);
    x = (bld){g, block_named(g, "body_region")};
    x.b->outputs[1] = tosac_block_find(x.b, "i_next");
    EXPECT_ERROR(g, "input_list[1] 'x' (INT32 [2,3]) does not match body_graph block 'body_bb' output[1] 'i_next' (INT32 [])");
    tosac_graph_destroy(g);

    /* self-referencing WHILE_LOOP body: reported, not followed forever */
    g = test_op_graph_a(TOSAC_OP_WHILE_LOOP, 0);
    x = (bld){g, block_named(g, "body_region")};
    tosac_value *loop_in[2] = {tosac_block_find(x.b, "i_next"), tosac_block_find(x.b, "x_next")};
    tosac_value *loop_out[2] = {tens(&x, "i2", TOSAC_DTYPE_INT32, 0, NULL), tens(&x, "x2", TOSAC_DTYPE_INT32, 2, (const int64_t[]){2, 3})};
    n = tosac_block_add_node(x.b, TOSAC_OP_WHILE_LOOP, 2, loop_in, 2, loop_out);
    tosac_node_set_str(n, TOSAC_ATTR_WHILE_LOOP_cond_graph, "cond_region");
    tosac_node_set_str(n, TOSAC_ATTR_WHILE_LOOP_body_graph, "body_region");
    x.b->outputs[0] = loop_out[0];
    x.b->outputs[1] = loop_out[1];
    EXPECT_ERROR(g, "region 'body_region' block 'body_bb' op 3 (WHILE_LOOP) [i_next, x_next -> i2, x2]: body_graph "
                    "'body_region' refers back to block 'body_bb', which is already being executed (recursive control "
                    "flow is not allowed)");
    tosac_graph_destroy(g);
    /* COND_IF whose branch is the main block itself */
    g = test_op_graph_a(TOSAC_OP_COND_IF, 0);
    tosac_node_set_str(find_node(g, TOSAC_OP_COND_IF), TOSAC_ATTR_COND_IF_then_graph, "main");
    EXPECT_ERROR(g, "recursive control flow is not allowed");
    tosac_graph_destroy(g);

    /* sub-blocks may name values of the enclosing block (the reference serializer does this for
       constants used inside a WHILE_LOOP body); they stay undeclared in the sub-block */
    g = test_op_graph_a(TOSAC_OP_WHILE_LOOP, 0);
    x = (bld){g, main_block(g)};
    int64_t two = 2;
    const_i(&x, "step", TOSAC_DTYPE_INT32, 0, NULL, &two, 1); /* op 2, after the WHILE_LOOP (op 1) */
    tosac_block *body = block_named(g, "body_region");
    tosac_node *inc = body->nodes[1]; /* ADD i + one */
    EXPECT_EQ_I(inc->op, TOSAC_OP_ADD);
    inc->inputs[1] = tosac_block_get_or_placeholder(body, "step");
    EXPECT_ERROR(g, "region 'body_region' block 'body_bb' op 1 (ADD) [i, step -> i_next]: input 'step' of enclosing block "
                    "'main' is produced by op 2, after the control-flow operator op 1 that runs this block");
    /* move the constant before the loop: now fine, and the constant counts as used */
    tosac_node *k = x.b->nodes[2];
    x.b->nodes[2] = x.b->nodes[1];
    x.b->nodes[1] = k;
    x.b->nodes[1]->index = 1;
    x.b->nodes[2]->index = 2;
    EXPECT_VALID(g);
    EXPECT(!has_msg("[-> step]", TOSAC_OK));           /* used by the body */
    EXPECT(has_msg("op 0 (CONST) [-> one]", TOSAC_OK)); /* the body's own constant is now dead */
    inc->inputs[1] = tosac_block_get_or_placeholder(body, "nothing_anywhere");
    EXPECT_ERROR(g, "input 'nothing_anywhere' is not a tensor or shape of block 'body_bb'");
    tosac_graph_destroy(g);

    /* without EXT-CONTROLFLOW */
    g = test_op_graph_a(TOSAC_OP_WHILE_LOOP, 0);
    tosac_validate_opts o = tosac_validate_opts_default();
    o.extensions &= ~(uint32_t)TOSAC_EXT_CONTROLFLOW;
    EXPECT_RESULT(g, &o, TOSAC_ERR_TOSA_ERROR, "WHILE_LOOP requires EXT-CONTROLFLOW, which is not enabled");
    tosac_graph_destroy(g);
}

/* ------------------------------------------------------------------------------------------ */
/* (b) family ERROR_IFs                                                                          */

static void elementwise_rules(void)
{
    /* broadcasting */
    tosac_graph *g = test_op_graph_a(TOSAC_OP_ADD, 0);
    set_dims(find_value(g, "b"), (const int64_t[]){2, 4, 5});
    EXPECT_ERROR(g, "op 0 (ADD) [a, b -> y]: input1 [2,3,5] and input2 [2,4,5] cannot be broadcast: dimension 1 is 3 vs 4");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_SUB, 1); /* a [2,1,5], b [1,3,5] */
    EXPECT_VALID(g);
    set_dims(find_value(g, "y"), (const int64_t[]){2, 1, 5});
    EXPECT_ERROR(g, "output shape [2,1,5] does not match the broadcast shape [2,3,5]");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_ADD, 0);
    find_value(g, "b")->rank = 2;
    EXPECT_ERROR(g, "input2 has rank 2 but the output has rank 3 (broadcasting needs equal ranks");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_GREATER_EQUAL, 0);
    set_dims(find_value(g, "a"), (const int64_t[]){2, 3, 4});
    EXPECT_ERROR(g, "op 0 (GREATER_EQUAL) [a, b -> y]: input1 [2,3,4] and input2 [2,1,5] cannot be broadcast");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_EQUAL, 2); /* rank 0 */
    EXPECT_VALID(g);
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_EQUAL, 0);
    find_value(g, "y")->rank = 2;
    EXPECT_ERROR(g, "input1 has rank 3 but the output has rank 2");
    tosac_graph_destroy(g);

    /* SELECT: three-way broadcast */
    g = test_op_graph_a(TOSAC_OP_SELECT, 0);
    set_dims(find_value(g, "cond"), (const int64_t[]){1, 4, 5});
    EXPECT_ERROR(g, "input1 [1,4,5] and input2 [2,3,5] cannot be broadcast");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_SELECT, 0);
    set_dims(find_value(g, "b"), (const int64_t[]){3, 1, 5});
    EXPECT_ERROR(g, "input2 [2,3,5] and input3 [3,1,5] cannot be broadcast: dimension 0 is 2 vs 3");
    tosac_graph_destroy(g);

    /* MUL shift */
    g = test_op_graph_a(TOSAC_OP_MUL, 2); /* i32, shift 3 */
    EXPECT_VALID(g);
    ((uint8_t *)find_value(g, "shift")->data)[0] = 64;
    EXPECT_ERROR(g, "shift 64 is outside [0, 63]");
    ((uint8_t *)find_value(g, "shift")->data)[0] = 0xFF; /* -1 */
    EXPECT_ERROR(g, "shift -1 is outside [0, 63]");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_MUL, 0); /* i8 */
    ((uint8_t *)find_value(g, "shift")->data)[0] = 2;
    EXPECT_RESULT(g, NULL, TOSAC_ERR_UNPREDICTABLE, "REQUIRE failed: shift is 2 but must be 0 unless in_t is INT32");
    find_value(g, "shift")->shape[0] = 2;
    EXPECT_ERROR(g, "shift 'shift' must have shape [1]");
    tosac_graph_destroy(g);

    /* NEGATE zero points */
    g = test_op_graph_a(TOSAC_OP_NEGATE, 1); /* i16 */
    ((uint8_t *)find_value(g, "x_zp")->data)[0] = 7;
    EXPECT_ERROR(g, "input1_zp 'x_zp' is 7 but must be 0 for INT16 data");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_NEGATE, 4); /* fp32 */
    ((uint8_t *)find_value(g, "y_zp")->data)[3] = 0x3F; /* 0.5 */
    EXPECT_ERROR(g, "output_zp 'y_zp' must be 0 for FP32 data");
    ((uint8_t *)find_value(g, "y_zp")->data)[3] = 0x80; /* -0.0 is zero */
    EXPECT_VALID(g);
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_NEGATE, 0); /* i8: non-zero zero points are fine */
    EXPECT_VALID(g);
    find_value(g, "x_zp")->shape[0] = 3;
    EXPECT_ERROR(g, "input1_zp 'x_zp' must have shape [1] (exactly one element), has shape [3]");
    tosac_graph_destroy(g);

    /* nan_mode */
    g = test_op_graph_a(TOSAC_OP_MINIMUM, 1);
    find_node(g, TOSAC_OP_MINIMUM)->attr[0].i = 0;
    EXPECT_ERROR(g, "nan_mode 0 is not a valid NaN propagation mode");
    find_node(g, TOSAC_OP_MINIMUM)->attr[0].present = false;
    EXPECT_ERROR(g, "nan_mode 0 is not a valid NaN propagation mode");
    tosac_graph_destroy(g);

    /* unary, CAST and IDENTITY shapes */
    g = test_op_graph_a(TOSAC_OP_EXP, 1);
    set_dims(find_value(g, "y"), (const int64_t[]){2, 5, 3});
    EXPECT_ERROR(g, "output shape [2,5,3] must equal the input1 shape [2,3,5]");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_CLZ, 0);
    find_value(g, "y")->rank = 2;
    EXPECT_ERROR(g, "output shape [2,3] must equal the input1 shape [2,3,5]");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_CAST, 0);
    set_dims(find_value(g, "y"), (const int64_t[]){2, 3, 1});
    EXPECT_ERROR(g, "op 0 (CAST) [x -> y]: output shape [2,3,1] must equal the input shape [2,3,5]");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_IDENTITY, 0);
    set_dims(find_value(g, "y"), (const int64_t[]){2, 3, 6});
    EXPECT_ERROR(g, "output shape [2,3,6] must equal the input1 shape [2,3,5]");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_CAST, 0);
    find_value(g, "y")->dtype = TOSAC_DTYPE_BOOL; /* bool -> bool is not a CAST row */
    EXPECT_ERROR(g, "no type-support row of CAST accepts (BOOL -> BOOL)");
    tosac_graph_destroy(g);
}

static void reduction_rules(void)
{
    tosac_graph *g = test_op_graph_a(TOSAC_OP_REDUCE_SUM, 0); /* axis 0: [2,3,5] -> [1,3,5] */
    tosac_node *n = find_node(g, TOSAC_OP_REDUCE_SUM);
    n->attr[0].i = 3;
    EXPECT_ERROR(g, "axis 3 is out of range for input rank 3");
    n->attr[0].i = -1;
    EXPECT_ERROR(g, "axis -1 is out of range for input rank 3");
    n->attr[0].i = 1;
    EXPECT_ERROR(g, "output dimension 1 (the reduced axis) is 3, must be 1");
    EXPECT(has_msg("output shape [1,3,5] must equal the input shape [2,3,5] except at axis 1", TOSAC_ERR_TOSA_ERROR));
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_REDUCE_ALL, 0);
    find_value(g, "y")->rank = 2;
    EXPECT_ERROR(g, "output rank 2 must equal the input rank 3");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_REDUCE_MAX, 1);
    find_node(g, TOSAC_OP_REDUCE_MAX)->attr[1].i = 3;
    EXPECT_ERROR(g, "nan_mode 3 is not a valid NaN propagation mode");
    tosac_graph_destroy(g);
}

static void data_node_rules(void)
{
    /* CONST data length */
    tosac_graph *g = test_op_graph_a(TOSAC_OP_CONST, 4); /* INT4 [2,3] = 3 bytes */
    tosac_value *k = find_value(g, "k");
    EXPECT_EQ_I(k->data_len, 3);
    k->data_len = 8; /* zero padding to a multiple of 8 is accepted */
    EXPECT_VALID(g);
    k->data_len = 2;
    EXPECT_ERROR(g, "constant 'k' has 2 data bytes but INT4 [2,3] encodes to 3 bytes");
    k->data = NULL;
    EXPECT_ERROR(g, "constant 'k' has no data");
    k->ext_size = 3; /* stored outside the flatbuffer */
    EXPECT_VALID(g);
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_CONST, 5); /* INT48 */
    find_value(g, "k")->data_len -= 6;
    EXPECT_ERROR(g, "encodes to 36 bytes");
    tosac_graph_destroy(g);

    /* CONST_SHAPE data length and level */
    g = test_op_graph_a(TOSAC_OP_CONST_SHAPE, 0);
    tosac_value *s = find_value(g, "new_shape");
    s->data_len = 12;
    EXPECT_ERROR(g, "shape value 'new_shape' has 12 data bytes but its 2 elements need 16");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_CONST_SHAPE, 0);
    bld x = {g, main_block(g)};
    static const int64_t huge[1] = {(int64_t)1 << 40};
    tosac_value *big = tosac_block_add_const_shape(x.b, "big", huge, 1);
    tosac_value *t = in_t(&x, "t", TOSAC_DTYPE_INT8, 1, (const int64_t[]){1});
    tosac_value *ty = tens(&x, "ty", TOSAC_DTYPE_INT8, 1, (const int64_t[]){1});
    tosac_value *tins[2] = {t, big};
    tosac_block_add_node(x.b, TOSAC_OP_TILE, 2, tins, 1, &ty);
    tosac_block_add_output(x.b, ty);
    EXPECT_RESULT(g, NULL, TOSAC_ERR_TOSA_ERROR, "output shape [1] does not match [1099511627776]");
    EXPECT(has_msg("element 0 of shape value 'big' is 1099511627776, outside [-2^31, 2^31 - 1] (MAX_LOG2_SIZE)",
                   TOSAC_ERR_UNPREDICTABLE));
    tosac_graph_destroy(g);
}

static void layout_rules(void)
{
    /* CONCAT */
    tosac_graph *g = test_op_graph_a(TOSAC_OP_CONCAT, 0); /* a[2,3,5] b[2,4,5] c[2,1,5] axis 1 -> [2,8,5] */
    tosac_node *n = find_node(g, TOSAC_OP_CONCAT);
    n->attr[0].i = 3;
    EXPECT_ERROR(g, "axis 3 is out of range for rank 3");
    n->attr[0].i = 1;
    find_value(g, "y")->shape[1] = 9;
    EXPECT_ERROR(g, "output dimension 1 is 9 but the inputs along the axis sum to 8");
    find_value(g, "y")->shape[1] = 8;
    find_value(g, "b")->shape[2] = 6;
    EXPECT_ERROR(g, "input1[1] 'b' shape [2,4,6] differs from the output shape [2,8,5] outside axis 1");
    find_value(g, "b")->shape[2] = 5;
    find_value(g, "c")->rank = 2;
    EXPECT_ERROR(g, "input1[2] 'c' has rank 2 but the output has rank 3");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_CONCAT, 1);
    find_value(g, "a")->dtype = TOSAC_DTYPE_INT16;
    EXPECT_ERROR(g, "no type-support row of CONCAT accepts (INT16, INT8 -> INT8)");
    tosac_graph_destroy(g);

    /* PAD */
    g = test_op_graph_a(TOSAC_OP_PAD, 2); /* [2,3,5] padding [0,1,2,0,1,1] -> [3,5,7] */
    EXPECT_VALID(g);
    tosac_value *pad = find_value(g, "padding");
    set_shape_vals(pad, (const int64_t[]){0, 1, -2, 4, 1, 1}, 6);
    EXPECT_ERROR(g, "padding of dimension 1 is [-2, 4]; padding must be >= 0");
    set_shape_vals(pad, (const int64_t[]){0, 1, 2, 1, 1, 1}, 6);
    EXPECT_ERROR(g, "output shape [3,5,7] does not match [3,6,7] (padding before + input + padding after)");
    set_shape_vals(pad, (const int64_t[]){0, 1, 2, 0, 1, 1}, 6);
    pad->shape[0] = 4;
    pad->data_len = 32;
    EXPECT_ERROR(g, "padding 'padding' has 4 elements, expected 6");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_PAD, 0);
    find_value(g, "pad_const")->rank = 0;
    EXPECT_ERROR(g, "pad_const 'pad_const' must have shape [1]");
    tosac_graph_destroy(g);

    /* RESHAPE */
    g = test_op_graph_a(TOSAC_OP_RESHAPE, 0); /* [2,3,5] -> shape [5,6] */
    set_shape_vals(find_value(g, "shape"), (const int64_t[]){6, 5}, 2);
    EXPECT_ERROR(g, "output shape [5,6] does not match [6,5] (the shape operand)");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_RESHAPE, 0);
    set_dims(find_value(g, "y"), (const int64_t[]){5, 7});
    set_shape_vals(find_value(g, "shape"), (const int64_t[]){5, 7}, 2);
    EXPECT_ERROR(g, "input [2,3,5] has 30 elements but output [5,7] has 35 (RESHAPE keeps the element count)");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_RESHAPE, 1); /* -> [30] */
    find_value(g, "y")->rank = 2;
    find_value(g, "y")->shape = (int64_t[]){5, 6};
    EXPECT_ERROR(g, "shape 'shape' has 1 elements, expected 2 (one per output dimension)");
    find_value(g, "y")->rank = 1;
    find_value(g, "y")->shape = NULL; /* hostile: rank 1 without dims */
    EXPECT_EQ_I(validate_with(g, NULL), TOSAC_ERR_TOSA_ERROR);
    tosac_graph_destroy(g);

    /* REVERSE */
    g = test_op_graph_a(TOSAC_OP_REVERSE, 2);
    find_node(g, TOSAC_OP_REVERSE)->attr[0].i = 3;
    EXPECT_ERROR(g, "axis 3 is out of range for input rank 3");
    find_node(g, TOSAC_OP_REVERSE)->attr[0].i = 2;
    set_dims(find_value(g, "y"), (const int64_t[]){2, 3, 4});
    EXPECT_ERROR(g, "op 0 (REVERSE) [x -> y]: output shape [2,3,4] must equal the input shape [2,3,5]");
    tosac_graph_destroy(g);

    /* SLICE: x[4,5,6] start [1,0,2] size [2,5,3] */
    g = test_op_graph_a(TOSAC_OP_SLICE, 3);
    EXPECT_VALID(g);
    tosac_value *start = find_value(g, "start"), *size = find_value(g, "size");
    set_shape_vals(start, (const int64_t[]){-1, 0, 2}, 3);
    EXPECT_ERROR(g, "start[0] is -1; start must be >= 0");
    set_shape_vals(start, (const int64_t[]){1, 0, 2}, 3);
    set_shape_vals(size, (const int64_t[]){2, 0, 3}, 3);
    EXPECT_ERROR(g, "size[1] is 0; size must be >= 1");
    set_shape_vals(size, (const int64_t[]){2, 5, 5}, 3);
    EXPECT_ERROR(g, "start[2] + size[2] = 2 + 5 exceeds input dimension 6");
    set_shape_vals(size, (const int64_t[]){2, 5, INT64_MAX}, 3);
    EXPECT_ERROR(g, "start[2] + size[2] = 2 + 9223372036854775807 exceeds input dimension 6");
    set_shape_vals(size, (const int64_t[]){3, 5, 3}, 3);
    EXPECT_ERROR(g, "output shape [2,5,3] does not match [3,5,3] (the size operand)");
    tosac_graph_destroy(g);

    /* TILE: x[2,3,1] multiples [1,2,5] -> [2,6,5] */
    g = test_op_graph_a(TOSAC_OP_TILE, 5);
    tosac_value *mult = find_value(g, "multiples");
    set_shape_vals(mult, (const int64_t[]){1, 0, 5}, 3);
    EXPECT_ERROR(g, "multiples[1] is 0; multiples must be >= 1");
    set_shape_vals(mult, (const int64_t[]){1, 2, 4}, 3);
    EXPECT_ERROR(g, "output shape [2,6,5] does not match [2,6,4] (input dimension x multiples)");
    set_shape_vals(mult, (const int64_t[]){INT64_MAX, 2, 5}, 3);
    EXPECT_ERROR(g, "tiled size of dimension 0 overflows");
    tosac_graph_destroy(g);

    /* TRANSPOSE: [2,3,5] perms [2,0,1] -> [5,2,3] */
    g = test_op_graph_a(TOSAC_OP_TRANSPOSE, 6);
    n = find_node(g, TOSAC_OP_TRANSPOSE);
    int32_t *perms = (int32_t *)n->attr[0].data;
    perms[1] = 2;
    EXPECT_ERROR(g, "perms is not a permutation: 2 appears twice");
    perms[1] = 3;
    EXPECT_ERROR(g, "perms[1] = 3 is out of range [0, 3)");
    perms[1] = 1;
    perms[2] = 0;
    EXPECT_ERROR(g, "output shape [5,2,3] does not match [5,3,2] (output[i] = input[perms[i]])");
    n->attr[0].len = 2;
    EXPECT_ERROR(g, "perms has 2 entries, expected one per input dimension (3)");
    tosac_graph_destroy(g);

    /* GATHER values[2,5,3] indices[2,4] -> [2,4,3]; SCATTER */
    g = test_op_graph_a(TOSAC_OP_GATHER, 0);
    find_value(g, "indices")->shape[0] = 3;
    EXPECT_ERROR(g, "indices batch N is 3 but values has N = 2");
    find_value(g, "indices")->shape[0] = 2;
    find_value(g, "y")->shape[2] = 4;
    EXPECT_ERROR(g, "output shape [2,4,4] does not match [2,4,3]");
    find_value(g, "values")->rank = 2;
    EXPECT_ERROR(g, "values [N,K,C] 'values' has rank 2, expected 3");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_GATHER, 0);
    find_value(g, "indices")->dtype = TOSAC_DTYPE_INT16;
    EXPECT_ERROR(g, "no type-support row of GATHER accepts (INT8, INT16 -> INT8)");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_SCATTER, 6);
    find_value(g, "x")->shape[1] = 5;
    EXPECT_ERROR(g, "input shape [2,5,3] does not match [2,4,3] ([N,W,C] from values_in and indices)");
    find_value(g, "x")->shape[1] = 4;
    find_value(g, "values_out")->shape[1] = 4;
    EXPECT_ERROR(g, "output shape [2,4,3] does not match [2,5,3] (values_out has the shape of values_in)");
    tosac_graph_destroy(g);
}

static void variable_rules(void)
{
    /* the example: VARIABLE [] -> [state]; VARIABLE_WRITE [x] -> [state]; VARIABLE_READ [state] -> [y] */
    tosac_graph *g = test_op_graph_a(TOSAC_OP_VARIABLE_READ, 2); /* FP32 */
    EXPECT_VALID(g);
    set_dims(find_value(g, "y"), (const int64_t[]){3, 2});
    EXPECT_ERROR(g, "op 2 (VARIABLE_READ) [state -> y]: output1 'y' (FP32 [3,2]) must have the type and shape of variable "
                    "'state' (FP32 [2,3])");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_VARIABLE_WRITE, 0); /* INT8 */
    find_value(g, "x")->dtype = TOSAC_DTYPE_FP16;
    EXPECT_ERROR(g, "input1 'x' (FP16 [2,3]) must have the type and shape of variable 'state' (INT8 [2,3])");
    tosac_graph_destroy(g);
    /* no outputs: an ERROR unless a variable is written (that is what the graph computes) */
    g = test_op_graph_a(TOSAC_OP_VARIABLE_WRITE, 0);
    g->regions[0]->blocks[0]->n_outputs = 0;
    EXPECT_VALID(g);
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_ADD, 0);
    g->regions[0]->blocks[0]->n_outputs = 0;
    EXPECT_ERROR(g, "block 'main': the graph has no outputs and writes no variable: it computes nothing");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_VARIABLE, 1);
    find_value(g, "state")->variable = false;
    EXPECT_ERROR(g, "op 0 (VARIABLE) [-> state]: 'state' is not a variable tensor");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_VARIABLE, 1);
    find_value(g, "state")->data_len = 5;
    EXPECT_ERROR(g, "initial value of variable 'state' has 5 bytes but FP16 [2,3] encodes to 12 bytes");
    tosac_graph_destroy(g);

    /* element types: the variable decides the row */
    g = test_op_graph_a(TOSAC_OP_VARIABLE, 0);
    find_value(g, "state")->dtype = TOSAC_DTYPE_INT32;
    find_value(g, "state")->data = NULL;
    find_value(g, "x")->dtype = TOSAC_DTYPE_INT32;
    find_value(g, "y")->dtype = TOSAC_DTYPE_INT32;
    EXPECT_ERROR(g, "variable 'state' has element type INT32; no type-support row of VARIABLE accepts it (rows: INT8, FP16, FP32)");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_VARIABLE, 2); /* FP32 needs PRO-FP */
    tosac_validate_opts o = tosac_validate_opts_default();
    o.profiles = TOSAC_PROFILE_INT;
    EXPECT_RESULT(g, &o, TOSAC_ERR_TOSA_ERROR, "VARIABLE with (FP32) requires PRO-FP, which is not enabled");
    o = tosac_validate_opts_default();
    o.extensions &= ~(uint32_t)TOSAC_EXT_VARIABLE;
    EXPECT_RESULT(g, &o, TOSAC_ERR_TOSA_ERROR, "requires EXT-VARIABLE");
    tosac_graph_destroy(g);

    /* declarations and operand conventions */
    g = test_op_graph_a(TOSAC_OP_VARIABLE, 0);
    bld x = {g, main_block(g)};
    tosac_value *state = find_value(g, "state");
    tosac_block_add_node(x.b, TOSAC_OP_VARIABLE, 0, NULL, 1, &state);
    EXPECT_ERROR(g, "variable 'state' is declared twice (also by op 0)");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_VARIABLE, 0);
    tosac_node *rd = find_node(g, TOSAC_OP_VARIABLE_READ);
    rd->n_inputs = 0;
    EXPECT_ERROR(g, "has 0 inputs and 1 outputs; VARIABLE_READ takes the variable tensor as its input");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_VARIABLE, 0);
    tosac_node *wr = find_node(g, TOSAC_OP_VARIABLE_WRITE); /* alternative form [var, value] -> [] */
    tosac_value *wins[2] = {find_value(g, "state"), find_value(g, "x")};
    wr->inputs = wins;
    wr->n_inputs = 2;
    wr->n_outputs = 0;
    EXPECT_VALID(g);
    wins[0] = find_value(g, "x");
    wins[1] = find_value(g, "state");
    EXPECT_ERROR(g, "'x' is not a variable tensor");
    tosac_graph_destroy(g);
    g = test_op_graph_a(TOSAC_OP_VARIABLE, 0);
    find_node(g, TOSAC_OP_VARIABLE_READ)->inputs[0] = find_value(g, "x");
    EXPECT_ERROR(g, "op 2 (VARIABLE_READ) [x -> y]: 'x' is not a variable tensor");
    tosac_graph_destroy(g);

    /* the reference model's form: no VARIABLE operator, IDENTITY operators with the
       VariableRead/VariableWrite attribute tags, the variable read before it is written */
    x = new_graph();
    static const int64_t d23[2] = {2, 3};
    state = tens(&x, "Variable_0", TOSAC_DTYPE_FP32, 2, d23);
    state->variable = true;
    state->variable_name = "lstm/Variable";
    tosac_value *in = in_t(&x, "in", TOSAC_DTYPE_FP32, 2, d23);
    tosac_value *old = tens(&x, "old", TOSAC_DTYPE_FP32, 2, d23), *sum = tens(&x, "sum", TOSAC_DTYPE_FP32, 2, d23);
    tosac_node *r = tosac_block_add_node(x.b, TOSAC_OP_IDENTITY, 1, &state, 1, &old);
    r->attr_type = TOSAC_OP_VARIABLE_READ;
    op2(&x, TOSAC_OP_ADD, old, in, sum);
    tosac_node *w = tosac_block_add_node(x.b, TOSAC_OP_IDENTITY, 1, &sum, 1, &state);
    w->attr_type = TOSAC_OP_VARIABLE_WRITE;
    tosac_block_add_output(x.b, sum);
    EXPECT_VALID(x.g);
    r->inputs[0] = in;
    EXPECT_ERROR(x.g, "attribute union tag 74 (VariableReadAttribute) does not match the operator, expected 68");
    tosac_graph_destroy(x.g);
}

static void custom_rules(void)
{
    tosac_graph *g = test_op_graph_a(TOSAC_OP_CUSTOM, 0);
    EXPECT_VALID(g);
    tosac_validate_opts k8 = opts_level(TOSAC_LEVEL_8K);
    bld x = {g, main_block(g)};
    tosac_value *outs[70];
    char name[16];
    for (int i = 0; i < 70; i++) {
        snprintf(name, sizeof name, "o%d", i);
        outs[i] = tens(&x, name, TOSAC_DTYPE_INT8, 1, (const int64_t[]){1});
        tosac_block_add_output(x.b, outs[i]);
    }
    tosac_value *a = find_value(g, "a");
    tosac_block_add_node(x.b, TOSAC_OP_CUSTOM, 1, &a, 70, outs)->attr_type = TOSAC_OP_CUSTOM;
    EXPECT_RESULT(g, &k8, TOSAC_ERR_UNPREDICTABLE, "output list output_list has 70 tensors > MAX_TENSOR_LIST_SIZE 64");
    tosac_graph_destroy(g);
}

/* ------------------------------------------------------------------------------------------ */
/* Hostile IR: mutated example graphs must never crash the validator (run under ASan/UBSan)       */

static unsigned g_mutations;

static void run_mutant(tosac_graph *g)
{
    tosac_validate_opts k8 = opts_level(TOSAC_LEVEL_8K), none = opts_level(TOSAC_LEVEL_NONE);
    tosac_status a = validate_with(g, &k8);
    tosac_status b = validate_with(g, &none);
    EXPECT(a == TOSAC_OK || a == TOSAC_ERR_TOSA_ERROR || a == TOSAC_ERR_UNPREDICTABLE);
    EXPECT(b == TOSAC_OK || b == TOSAC_ERR_TOSA_ERROR || b == TOSAC_ERR_UNPREDICTABLE);
    g_mutations++;
}

static void mutate_value(tosac_graph *g, tosac_value *v)
{
    if (!v) return;
    static const int64_t dims[] = {INT64_MAX, INT64_MIN, 0, -1, 1, 2, 65536, (int64_t)1 << 32};
    int64_t saved[TOSAC_MAX_RANK];
    for (int32_t i = 0; i < v->rank; i++) saved[i] = v->shape[i];
    for (size_t k = 0; k < sizeof dims / sizeof dims[0]; k++) {
        for (int32_t i = 0; i < v->rank; i++) {
            v->shape[i] = dims[k];
            run_mutant(g);
            v->shape[i] = saved[i];
        }
        for (int32_t i = 0; i < v->rank; i++) v->shape[i] = dims[k];
        run_mutant(g);
        for (int32_t i = 0; i < v->rank; i++) v->shape[i] = saved[i];
    }
    tosac_dtype dt = v->dtype;
    for (int t = 0; t <= TOSAC_DTYPE_COUNT; t++) {
        v->dtype = (tosac_dtype)t;
        run_mutant(g);
    }
    v->dtype = dt;
    const uint8_t *data = v->data;
    size_t len = v->data_len;
    v->data = NULL;
    run_mutant(g);
    v->data = data;
    for (size_t l = 0; l < len; l += (len > 16 ? len / 4 : 1)) {
        v->data_len = l;
        run_mutant(g);
    }
    v->data_len = len;
    int32_t rank = v->rank;
    for (int32_t r = 0; r < rank; r++) {
        v->rank = r;
        run_mutant(g);
    }
    v->rank = rank;
    v->variable = !v->variable;
    run_mutant(g);
    v->variable = !v->variable;
    v->is_unranked = true;
    run_mutant(g);
    v->is_unranked = false;
}

static void mutate_node(tosac_graph *g, tosac_node *n)
{
    for (uint32_t i = 0; i < n->n_inputs; i++) mutate_value(g, n->inputs[i]);
    for (uint32_t i = 0; i < n->n_outputs; i++) mutate_value(g, n->outputs[i]);
    uint32_t op = n->op;
    uint8_t tag = n->attr_type;
    tosac_attr_val attrs[TOSAC_ATTR_MAX_FIELDS];
    memcpy(attrs, n->attr, sizeof attrs);
    for (uint32_t o = 0; o <= TOSAC_OP_COUNT + 1; o++) {
        if (tosac_op_valid(o) && !is_mine(o)) continue; /* other families are fuzzed by their owners */
        n->op = o;
        n->attr_type = (uint8_t)o;
        run_mutant(g);
        /* as read from a file whose attribute table does not fit the op: no fields */
        memset(n->attr, 0, sizeof attrs);
        run_mutant(g);
        memcpy(n->attr, attrs, sizeof attrs);
    }
    n->op = op;
    n->attr_type = tag;
    static const int64_t ints[] = {INT64_MIN, -1, 0, 1, 2, 3, 31, 64, INT64_MAX};
    for (unsigned id = 0; id < TOSAC_ATTR_MAX_FIELDS; id++) {
        tosac_attr_val saved = n->attr[id];
        for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
            n->attr[id].present = true;
            n->attr[id].i = ints[k];
            run_mutant(g);
        }
        n->attr[id].data = NULL;
        n->attr[id].len = 7;
        run_mutant(g);
        n->attr[id] = saved;
        for (uint32_t l = 0; saved.data && l < saved.len; l++) {
            n->attr[id].len = l;
            run_mutant(g);
        }
        n->attr[id] = saved;
    }
    uint32_t ni = n->n_inputs, no = n->n_outputs;
    for (uint32_t k = 0; k < ni; k++) {
        n->n_inputs = k;
        run_mutant(g);
    }
    n->n_inputs = ni;
    for (uint32_t k = 0; k < no; k++) {
        n->n_outputs = k;
        run_mutant(g);
    }
    n->n_outputs = no;
    /* swap operands around */
    for (uint32_t i = 0; i + 1 < ni; i++) {
        tosac_value *t = n->inputs[i];
        n->inputs[i] = n->inputs[i + 1];
        n->inputs[i + 1] = t;
        run_mutant(g);
        n->inputs[i + 1] = n->inputs[i];
        n->inputs[i] = t;
    }
    if (ni && no) {
        tosac_value *t = n->inputs[0];
        n->inputs[0] = n->outputs[0];
        run_mutant(g);
        n->inputs[0] = t;
    }
}

static void hostile_graphs(void)
{
    g_mutations = 0;
    for (uint32_t op = 1; op < TOSAC_OP_COUNT; op++) {
        if (!is_mine(op)) continue;
        unsigned nrows = 0;
        tosac_op_type_rows(op, &nrows);
        /* two rows per op keep the run short; every row is covered by examples_validate */
        for (unsigned v = 0; v < nrows && v < 2; v++) {
            tosac_graph *g = test_op_graph_a(op, v);
            if (!g) continue;
            for (uint32_t r = 0; r < g->n_regions; r++)
                for (uint32_t bi = 0; bi < g->regions[r]->n_blocks; bi++) {
                    tosac_block *b = g->regions[r]->blocks[bi];
                    for (uint32_t k = 0; k < b->n_nodes; k++) mutate_node(g, b->nodes[k]);
                }
            tosac_graph_destroy(g);
        }
    }
    fprintf(stderr, "  %u mutated graphs validated without incident\n", g_mutations);
}

/* The check.h helpers used by every family. */
static void helpers(void)
{
    bld x = new_graph();
    static const uint8_t i4[3] = {0x7F, 0x08, 0xA1}; /* low nibble first: F,7 | 8,0 | 1,A */
    tosac_value *v = tosac_block_add_const(x.b, "i4", TOSAC_DTYPE_INT4, 1, (const int64_t[]){6}, i4, 3);
    int64_t got, want4[6] = {-1, 7, -8, 0, 1, -6};
    for (int i = 0; i < 6; i++) {
        EXPECT(tosac_const_get_i64(v, i, &got));
        EXPECT_EQ_I(got, want4[i]);
    }
    EXPECT(!tosac_const_get_i64(v, 6, &got));
    EXPECT(!tosac_const_get_i64(v, -1, &got));
    v->data_len = 2; /* elements 4 and 5 are outside the data */
    EXPECT(tosac_const_get_i64(v, 3, &got));
    EXPECT(!tosac_const_get_i64(v, 4, &got));

    static const uint8_t i48[12] = {0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80};
    v = tosac_block_add_const(x.b, "i48", TOSAC_DTYPE_INT48, 1, (const int64_t[]){2}, i48, 12);
    EXPECT(tosac_const_get_i64(v, 0, &got));
    EXPECT_EQ_I(got, -2);
    EXPECT(tosac_const_get_i64(v, 1, &got));
    EXPECT_EQ_I(got, -((int64_t)1 << 47));

    static const uint8_t b8[3] = {0, 1, 7};
    v = tosac_block_add_const(x.b, "b", TOSAC_DTYPE_BOOL, 1, (const int64_t[]){3}, b8, 3);
    EXPECT(tosac_const_get_i64(v, 2, &got));
    EXPECT_EQ_I(got, 1);
    static const uint8_t i16[4] = {0x00, 0x80, 0xFF, 0x7F};
    v = tosac_block_add_const(x.b, "h", TOSAC_DTYPE_INT16, 1, (const int64_t[]){2}, i16, 4);
    EXPECT(tosac_const_get_i64(v, 0, &got));
    EXPECT_EQ_I(got, -32768);
    EXPECT(tosac_const_get_i64(v, 1, &got));
    EXPECT_EQ_I(got, 32767);
    static const uint8_t f32[4] = {0, 0, 0x80, 0x3F};
    v = tosac_block_add_const(x.b, "f", TOSAC_DTYPE_FP32, 1, (const int64_t[]){1}, f32, 4);
    EXPECT(!tosac_const_get_i64(v, 0, &got)); /* floating point is not decoded */

    static const int64_t sv[3] = {INT64_MIN, -1, INT64_MAX};
    v = tosac_block_add_const_shape(x.b, "s", sv, 3);
    for (int i = 0; i < 3; i++) {
        EXPECT(tosac_const_get_i64(v, i, &got));
        EXPECT_EQ_I(got, sv[i]);
    }
    EXPECT(!tosac_const_get_i64(in_t(&x, "no_data", TOSAC_DTYPE_INT8, 0, NULL), 0, &got));

    char buf[64];
    tosac_value *t = tens(&x, "t", TOSAC_DTYPE_INT8, 3, (const int64_t[]){2, 3, 5});
    EXPECT_STREQ(tosac_shape_str(t, buf, sizeof buf), "[2,3,5]");
    EXPECT_STREQ(tosac_shape_str(tens(&x, "r0", TOSAC_DTYPE_INT8, 0, NULL), buf, sizeof buf), "[]");
    EXPECT_STREQ(tosac_shape_str(NULL, buf, sizeof buf), "?");
    EXPECT_STREQ(tosac_shape_str(t, buf, 6), "[2...");
    EXPECT_EQ_I(tosac_check_nelem(t), 30);
    EXPECT_EQ_I(tosac_check_nelem(tens(&x, "r0b", TOSAC_DTYPE_INT8, 0, NULL)), 1);
    tosac_value *huge = tens(&x, "huge", TOSAC_DTYPE_INT8, 3, (const int64_t[]){INT64_MAX, 2, 1});
    EXPECT_EQ_I(tosac_check_nelem(huge), -1);
    EXPECT_EQ_I(tosac_check_nelem(NULL), -1);
    EXPECT(tosac_same_shape(t, tens(&x, "t2", TOSAC_DTYPE_FP32, 3, (const int64_t[]){2, 3, 5})));
    EXPECT(!tosac_same_shape(t, huge));
    EXPECT(!tosac_same_shape(t, NULL));
    tosac_graph_destroy(x.g);

    tosac_validate_opts o = tosac_validate_opts_default();
    EXPECT_EQ_I(o.profiles, TOSAC_PROFILE_INT | TOSAC_PROFILE_FP);
    EXPECT_EQ_I(o.extensions, TOSAC_EXT_ALL & ~(uint32_t)TOSAC_EXT_DYNAMIC);
    EXPECT_EQ_I(o.level, TOSAC_LEVEL_8K);
}

int main(void)
{
    g_diag = tosac_diag_create();
    RUN(helpers);
    RUN(examples_validate);
    RUN(graph_structure);
    RUN(names_and_declarations);
    RUN(producers_and_order);
    RUN(operator_rules);
    RUN(acc_type_rule);
    RUN(level_rules);
    RUN(control_flow);
    RUN(elementwise_rules);
    RUN(reduction_rules);
    RUN(data_node_rules);
    RUN(layout_rules);
    RUN(variable_rules);
    RUN(custom_rules);
    RUN(hostile_graphs);
    tosac_diag_destroy(g_diag);
    return test_summary();
}
