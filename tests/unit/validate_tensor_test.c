/*
 * Validator family checks conv, pool2d, matmul, fft, argmax (check_tensor.c) and clamp, table,
 * resize, rescale (check_quant.c): every example graph of test_op_graph_b validates clean, and
 * each ERROR_IF / level rule is exercised by mutating an example graph, asserting both the
 * returned status and a phrase of the diagnostic.
 */
#include <math.h>
#include <stdlib.h>

#include "core/arena.h"
#include "core/fp.h"
#include "harness/op_graphs.h"
#include "harness/test.h"
#include "ir/graph.h"
#include "tosa/op_table.h"
#include "tosac/validate.h"

static const uint32_t k_my_ops[] = {
    TOSAC_OP_ARGMAX, TOSAC_OP_AVG_POOL2D,       TOSAC_OP_CONV2D, TOSAC_OP_CONV3D, TOSAC_OP_DEPTHWISE_CONV2D,
    TOSAC_OP_FFT2D,  TOSAC_OP_MATMUL,           TOSAC_OP_MAX_POOL2D, TOSAC_OP_RFFT2D, TOSAC_OP_TRANSPOSE_CONV2D,
    TOSAC_OP_CLAMP,  TOSAC_OP_TABLE,            TOSAC_OP_RESIZE, TOSAC_OP_RESCALE,
};
#define N_MY_OPS (sizeof k_my_ops / sizeof k_my_ops[0])

/* ------------------------------------------------------------------------------------------ */
/* helpers                                                                                      */

static tosac_validate_opts opts_8k(void) { return tosac_validate_opts_default(); }

static tosac_validate_opts opts_none(void)
{
    tosac_validate_opts o = tosac_validate_opts_default();
    o.level = TOSAC_LEVEL_NONE;
    return o;
}

static tosac_block *main_block(tosac_graph *g) { return g->regions[0]->blocks[0]; }

/* The operator under test is the last node of each example graph. */
static tosac_node *op_node(tosac_graph *g)
{
    tosac_block *b = main_block(g);
    return b->nodes[b->n_nodes - 1];
}

static tosac_value *val(tosac_graph *g, const char *name)
{
    tosac_value *v = tosac_block_find(main_block(g), name);
    if (!v) {
        fprintf(stderr, "test bug: no value '%s'\n", name);
        abort();
    }
    return v;
}

static tosac_graph *example(uint32_t op, unsigned variant)
{
    tosac_graph *g = test_op_graph_b(op, variant);
    if (!g) {
        fprintf(stderr, "test bug: no example graph for %s variant %u\n", tosac_op_name(op), variant);
        abort();
    }
    return g;
}

/* Replaces the shape of v (any rank). */
static void set_shape(tosac_graph *g, tosac_value *v, int rank, const int64_t *dims)
{
    int64_t *s = rank ? tosac_arena_alloc(&g->arena, (size_t)rank * sizeof(int64_t)) : NULL;
    if (rank && !s) abort();
    if (rank) memcpy(s, dims, (size_t)rank * sizeof(int64_t));
    v->shape = s;
    v->rank = rank;
}

static void set_dim(tosac_value *v, int i, int64_t d)
{
    if (i >= v->rank) abort();
    v->shape[i] = d;
}

/* Replaces the constant bytes of v. */
static void set_data(tosac_graph *g, tosac_value *v, const void *bytes, size_t len)
{
    v->data = len ? tosac_arena_memdup(&g->arena, bytes, len) : NULL;
    v->data_len = len;
}

static void set_ints(tosac_graph *g, unsigned id, const int32_t *v, uint32_t n)
{
    EXPECT_EQ_I(tosac_node_set_ints(op_node(g), id, v, n), TOSAC_OK);
}

static void set_int(tosac_graph *g, unsigned id, int64_t v)
{
    EXPECT_EQ_I(tosac_node_set_int(op_node(g), id, v), TOSAC_OK);
}

/* Replaces a shape constant's values (count unchanged unless n differs: then the shape value is
   resized too). */
static void set_shape_vals(tosac_graph *g, tosac_value *v, const int64_t *vals, uint32_t n)
{
    uint8_t *d = tosac_arena_alloc(&g->arena, (size_t)n * 8 + 1);
    if (!d) abort();
    for (uint32_t i = 0; i < n; i++)
        for (int k = 0; k < 8; k++) d[i * 8 + (uint32_t)k] = (uint8_t)((uint64_t)vals[i] >> (8 * k));
    v->data = d;
    v->data_len = (size_t)n * 8;
    v->shape[0] = n;
}

static bool has_msg(const tosac_diag *d, const char *phrase)
{
    for (size_t i = 0; i < tosac_diag_count(d); i++) {
        const char *m = tosac_diag_message(d, i, NULL);
        if (m && strstr(m, phrase)) return true;
    }
    return false;
}

static void dump(const tosac_diag *d)
{
    for (size_t i = 0; i < tosac_diag_count(d); i++) fprintf(stderr, "    | %s\n", tosac_diag_message(d, i, NULL));
}

/* Validates g (then destroys it) and expects status `want` and a message containing `phrase`
   (NULL: no message required). */
static void expect_at(int line, tosac_graph *g, tosac_validate_opts o, tosac_status want, const char *phrase)
{
    tosac_diag *d = tosac_diag_create();
    tosac_status s = tosac_validate(g, &o, d);
    t_checks++;
    if (s != want || (phrase && !has_msg(d, phrase))) {
        t_failures++;
        fprintf(stderr, "%s:%d: status %d (%s), expected %d (%s)%s%s%s\n", __FILE__, line, (int)s, tosac_status_str(s),
                (int)want, tosac_status_str(want), phrase ? "; wanted a message containing \"" : "",
                phrase ? phrase : "", phrase ? "\"" : "");
        dump(d);
    }
    tosac_diag_destroy(d);
    tosac_graph_destroy(g);
}
#define EXPECT_ERR(g, phrase) expect_at(__LINE__, (g), opts_8k(), TOSAC_ERR_TOSA_ERROR, (phrase))
#define EXPECT_LEVEL(g, phrase) expect_at(__LINE__, (g), opts_8k(), TOSAC_ERR_UNPREDICTABLE, (phrase))
#define EXPECT_VALID(g) expect_at(__LINE__, (g), opts_8k(), TOSAC_OK, NULL)
#define EXPECT_VALID_NONE(g) expect_at(__LINE__, (g), opts_none(), TOSAC_OK, NULL)

/* Index of the type row whose first columns are (a, b); aborts if none. */
static unsigned row_of(uint32_t op, tosac_dtype a, tosac_dtype b)
{
    unsigned n = 0;
    const tosac_type_row *rows = tosac_op_type_rows(op, &n);
    for (unsigned i = 0; i < n; i++)
        if (rows[i].t[0] == a && (b == TOSAC_DTYPE_UNKNOWN || rows[i].t[1] == b)) return i;
    fprintf(stderr, "test bug: no %s row (%s, %s)\n", tosac_op_name(op), tosac_dtype_name(a), tosac_dtype_name(b));
    abort();
}

/* ------------------------------------------------------------------------------------------ */
/* (a) every example graph is valid                                                              */

static void examples_validate_clean(void)
{
    unsigned total = 0;
    for (size_t i = 0; i < N_MY_OPS; i++) {
        unsigned n = 0;
        tosac_op_type_rows(k_my_ops[i], &n);
        EXPECT(n > 0);
        for (unsigned v = 0; v < n; v++) {
            tosac_graph *g = test_op_graph_b(k_my_ops[i], v);
            EXPECT(g != NULL);
            if (!g) continue;
            tosac_diag *d = tosac_diag_create();
            tosac_validate_opts o = opts_8k();
            tosac_status s = tosac_validate(g, &o, d);
            if (s != TOSAC_OK) {
                fprintf(stderr, "%s variant %u: %s\n", tosac_op_name(k_my_ops[i]), v, tosac_status_str(s));
                dump(d);
            }
            EXPECT_EQ_I(s, TOSAC_OK);
            EXPECT_EQ_I(tosac_diag_count(d), 0);
            o = opts_none();
            EXPECT_EQ_I(tosac_validate(g, &o, NULL), TOSAC_OK);
            tosac_diag_destroy(d);
            tosac_graph_destroy(g);
            total++;
        }
        EXPECT(test_op_graph_b(k_my_ops[i], n) == NULL);
    }
    /* conv x4, avg, fft+rfft, matmul, max, argmax, clamp, table, resize, rescale */
    EXPECT_EQ_I(total, 9 * 4 + 8 + 2 + 8 + 7 + 7 + 5 + 2 + 7 + 12);
    EXPECT(test_op_graph_b(TOSAC_OP_ADD, 0) == NULL);
    EXPECT(test_op_graph_b(0, 0) == NULL);
    EXPECT(test_op_graph_b(9999, 0) == NULL);
}

/* ------------------------------------------------------------------------------------------ */
/* (b) conv family                                                                               */

static void conv_attribute_rules(void)
{
    tosac_graph *g;
    static const int32_t pad3[3] = {1, 1, 1}, padneg[4] = {-1, 1, 1, 1}, s0[2] = {0, 1}, d0[2] = {1, 0};

    g = example(TOSAC_OP_CONV2D, 0);
    set_ints(g, TOSAC_ATTR_CONV2D_pad, pad3, 3);
    EXPECT_ERR(g, "pad has 3 elements, expected 4");

    g = example(TOSAC_OP_CONV2D, 0);
    set_ints(g, TOSAC_ATTR_CONV2D_pad, padneg, 4);
    EXPECT_ERR(g, "pad_top -1 must be >= 0");

    g = example(TOSAC_OP_CONV2D, 0);
    set_ints(g, TOSAC_ATTR_CONV2D_stride, s0, 2);
    EXPECT_ERR(g, "stride_y 0 must be >= 1");

    g = example(TOSAC_OP_DEPTHWISE_CONV2D, 0);
    set_ints(g, TOSAC_ATTR_DEPTHWISE_CONV2D_dilation, d0, 2);
    EXPECT_ERR(g, "dilation_x 0 must be >= 1");

    g = example(TOSAC_OP_CONV2D, 0);
    op_node(g)->attr[TOSAC_ATTR_CONV2D_dilation].present = false;
    EXPECT_ERR(g, "dilation has 0 elements, expected 2");

    static const int32_t pad4[4] = {0, 0, 1, 1};
    g = example(TOSAC_OP_CONV3D, 0);
    set_ints(g, TOSAC_ATTR_CONV3D_pad, pad4, 4);
    EXPECT_ERR(g, "pad has 4 elements, expected 6");

    static const int32_t s3[3] = {1, 1, 0};
    g = example(TOSAC_OP_CONV3D, 0);
    set_ints(g, TOSAC_ATTR_CONV3D_stride, s3, 3);
    EXPECT_ERR(g, "stride_x 0 must be >= 1");
}

static void conv_shape_rules(void)
{
    tosac_graph *g;

    /* declared output height 6 instead of 5 */
    g = example(TOSAC_OP_CONV2D, 0);
    set_dim(val(g, "output"), 1, 6);
    EXPECT_ERR(g, "output shape [1,6,6,4] does not match the inferred [1,5,6,4]");

    /* stride 2 with IW 6, pads 1+1, KW 3: (6-1+2-2)/2 = 5/2 */
    static const int32_t s2[2] = {2, 2};
    g = example(TOSAC_OP_CONV2D, 0);
    set_ints(g, TOSAC_ATTR_CONV2D_stride, s2, 2);
    EXPECT_ERR(g, "output width (IW-1+pad_left+pad_right-(KW-1)*dilation_x)/stride_x = 5/2 is not an integer");

    /* kernel larger than the padded input */
    g = example(TOSAC_OP_CONV2D, 0);
    set_dim(val(g, "weight"), 1, 9);
    EXPECT_ERR(g, "is negative");

    /* bias of length 3 for OC 4 */
    g = example(TOSAC_OP_CONV2D, 0);
    set_dim(val(g, "bias"), 0, 3);
    EXPECT_ERR(g, "bias length BC 3 must equal the output channels OC 4 or be 1");

    /* weight IC 2 vs input IC 3 */
    g = example(TOSAC_OP_CONV2D, 0);
    set_dim(val(g, "weight"), 3, 2);
    EXPECT_ERR(g, "weight IC 2 does not match the input channels IC 3");

    /* batch mismatch */
    g = example(TOSAC_OP_CONV2D, 0);
    set_dim(val(g, "output"), 0, 2);
    EXPECT_ERR(g, "N 2, expected 1");

    /* wrong input rank */
    g = example(TOSAC_OP_CONV2D, 0);
    {
        const int64_t d3[3] = {5, 6, 3};
        set_shape(g, val(g, "input"), 3, d3);
    }
    EXPECT_ERR(g, "input must have rank 4 [N,IH,IW,IC], has rank 3");

    /* CONV3D output depth */
    g = example(TOSAC_OP_CONV3D, 0);
    set_dim(val(g, "output"), 1, 4);
    EXPECT_ERR(g, "OD 4, expected 3");

    /* DEPTHWISE output channels must be C*M = 6 */
    g = example(TOSAC_OP_DEPTHWISE_CONV2D, 0);
    set_dim(val(g, "output"), 3, 3);
    EXPECT_ERR(g, "C*M 3, expected 6");

    /* DEPTHWISE weight C */
    g = example(TOSAC_OP_DEPTHWISE_CONV2D, 0);
    set_dim(val(g, "weight"), 2, 1);
    EXPECT_ERR(g, "weight C 1 does not match the input channels C 3");

    /* DEPTHWISE bias */
    g = example(TOSAC_OP_DEPTHWISE_CONV2D, 0);
    set_dim(val(g, "bias"), 0, 4);
    EXPECT_ERR(g, "bias length BC 4 must equal the output channels C*M 6 or be 1");
}

static void transpose_conv_rules(void)
{
    tosac_graph *g;
    static const int32_t op_bad[4] = {-3, 0, 0, 0}, op3[3] = {0, 0, 0}, s0[2] = {1, 0};

    g = example(TOSAC_OP_TRANSPOSE_CONV2D, 0);
    set_ints(g, TOSAC_ATTR_TRANSPOSE_CONV2D_out_pad, op_bad, 4);
    EXPECT_ERR(g, "out_pad_top -3 must be > -KH (-3)");

    g = example(TOSAC_OP_TRANSPOSE_CONV2D, 0);
    set_ints(g, TOSAC_ATTR_TRANSPOSE_CONV2D_out_pad, op3, 3);
    EXPECT_ERR(g, "out_pad has 3 elements, expected 4");

    g = example(TOSAC_OP_TRANSPOSE_CONV2D, 0);
    set_ints(g, TOSAC_ATTR_TRANSPOSE_CONV2D_stride, s0, 2);
    EXPECT_ERR(g, "stride_x 0 must be >= 1");

    /* OH = (3-1)*2+0+0+3 = 7 */
    g = example(TOSAC_OP_TRANSPOSE_CONV2D, 0);
    set_dim(val(g, "output"), 1, 8);
    EXPECT_ERR(g, "OH 8, expected 7");

    /* negative out_pad (variant 1) stays valid */
    EXPECT_VALID(example(TOSAC_OP_TRANSPOSE_CONV2D, 1));

    /* output channels come from the weight OC */
    g = example(TOSAC_OP_TRANSPOSE_CONV2D, 0);
    set_dim(val(g, "weight"), 0, 4);
    EXPECT_ERR(g, "OC 5, expected 4");
}

static void conv_zero_points(void)
{
    tosac_graph *g;
    const unsigned r_i8 = row_of(TOSAC_OP_CONV2D, TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT8);
    const unsigned r_i4 = row_of(TOSAC_OP_CONV2D, TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT4);
    const unsigned r_i16 = row_of(TOSAC_OP_CONV2D, TOSAC_DTYPE_INT16, TOSAC_DTYPE_INT8);
    const unsigned r_f32 = row_of(TOSAC_OP_CONV2D, TOSAC_DTYPE_FP32, TOSAC_DTYPE_FP32);
    const unsigned r_f16 = row_of(TOSAC_OP_DEPTHWISE_CONV2D, TOSAC_DTYPE_FP16, TOSAC_DTYPE_FP16);
    const unsigned r_e4 = row_of(TOSAC_OP_CONV3D, TOSAC_DTYPE_FP8E4M3, TOSAC_DTYPE_FP8E4M3);

    /* non-zero INT8 zero points are fine (the examples use them) */
    EXPECT_VALID(example(TOSAC_OP_CONV2D, r_i8));

    g = example(TOSAC_OP_CONV2D, r_i16);
    {
        const uint8_t one16[2] = {1, 0};
        set_data(g, val(g, "input_zp"), one16, 2);
    }
    EXPECT_ERR(g, "input_zp 1 must be 0 for INT16 data");

    g = example(TOSAC_OP_CONV2D, r_i4);
    {
        const uint8_t three4 = 0x03;
        set_data(g, val(g, "weight_zp"), &three4, 1);
    }
    EXPECT_ERR(g, "weight_zp 3 must be 0 for INT4 data");

    g = example(TOSAC_OP_CONV2D, r_f32);
    {
        const uint8_t onef[4] = {0x00, 0x00, 0x80, 0x3f};
        set_data(g, val(g, "input_zp"), onef, 4);
    }
    EXPECT_ERR(g, "input_zp (bits 0x3f800000) must be 0 for FP32 data");

    /* -0.0 is a zero */
    g = example(TOSAC_OP_DEPTHWISE_CONV2D, r_f16);
    {
        const uint8_t negzero[2] = {0x00, 0x80};
        set_data(g, val(g, "weight_zp"), negzero, 2);
    }
    EXPECT_VALID(g);

    g = example(TOSAC_OP_CONV3D, r_e4);
    {
        const uint8_t one_e4 = 0x38; /* 1.0 */
        set_data(g, val(g, "weight_zp"), &one_e4, 1);
    }
    EXPECT_ERR(g, "weight_zp (bits 0x38) must be 0 for FP8E4M3 data");

    /* zero point with two elements */
    g = example(TOSAC_OP_CONV2D, r_i8);
    {
        const int64_t two = 2;
        const uint8_t zz[2] = {0, 0};
        set_shape(g, val(g, "input_zp"), 1, &two);
        set_data(g, val(g, "input_zp"), zz, 2);
    }
    EXPECT_ERR(g, "input_zp must have shape [1] (exactly one element), has shape [2]");

    /* no constant data (e.g. EXT-DYNAMIC): the value rule is skipped */
    g = example(TOSAC_OP_TRANSPOSE_CONV2D, row_of(TOSAC_OP_TRANSPOSE_CONV2D, TOSAC_DTYPE_INT16, TOSAC_DTYPE_INT8));
    set_data(g, val(g, "input_zp"), NULL, 0);
    {
        tosac_diag *d = tosac_diag_create();
        tosac_validate_opts o = opts_8k();
        tosac_validate(g, &o, d);
        EXPECT(!has_msg(d, "must be 0 for"));
        tosac_diag_destroy(d);
    }
    tosac_graph_destroy(g);
}

static void conv_levels(void)
{
    tosac_graph *g;
    /* dilation_y*KH = 8192*2 > 8192: OH = (8200-1-8192)/1+1 = 8 */
    for (int lvl = 0; lvl < 2; lvl++) {
        g = example(TOSAC_OP_CONV2D, 0);
        const int64_t in[4] = {1, 8200, 1, 3}, w[4] = {4, 2, 1, 3}, out[4] = {1, 8, 1, 4};
        static const int32_t pad0[4] = {0, 0, 0, 0}, dil[2] = {8192, 1};
        set_shape(g, val(g, "input"), 4, in);
        set_shape(g, val(g, "weight"), 4, w);
        set_shape(g, val(g, "output"), 4, out);
        set_ints(g, TOSAC_ATTR_CONV2D_pad, pad0, 4);
        set_ints(g, TOSAC_ATTR_CONV2D_dilation, dil, 2);
        if (lvl)
            EXPECT_LEVEL(g, "dilation_y*KH = 8192*2 exceeds MAX_KERNEL 8192 (level 8K)");
        else
            EXPECT_VALID_NONE(g);
    }
    /* pad_top 9000 */
    for (int lvl = 0; lvl < 2; lvl++) {
        g = example(TOSAC_OP_CONV2D, 0);
        static const int32_t pad[4] = {9000, 1, 1, 1};
        set_ints(g, TOSAC_ATTR_CONV2D_pad, pad, 4);
        set_dim(val(g, "output"), 1, 5 + 8999);
        if (lvl)
            EXPECT_LEVEL(g, "pad_top 9000 exceeds MAX_KERNEL 8192 (level 8K)");
        else
            EXPECT_VALID_NONE(g);
    }
    /* CONV3D pad_d0 9000: OD = (4-1+9000-(2-1))/1+1 = 9003 */
    for (int lvl = 0; lvl < 2; lvl++) {
        g = example(TOSAC_OP_CONV3D, 0);
        static const int32_t pad[6] = {9000, 0, 1, 1, 1, 1};
        set_ints(g, TOSAC_ATTR_CONV3D_pad, pad, 6);
        set_dim(val(g, "output"), 1, 9003);
        if (lvl)
            EXPECT_LEVEL(g, "pad_d0 9000 exceeds MAX_KERNEL 8192 (level 8K)");
        else
            EXPECT_VALID_NONE(g);
    }
    /* DEPTHWISE_CONV2D dilation_x*KW = 3000*3 = 9000: OW = (6-1+2-2*3000)/1+1 is negative, so widen IW */
    for (int lvl = 0; lvl < 2; lvl++) {
        g = example(TOSAC_OP_DEPTHWISE_CONV2D, 0);
        static const int32_t dil[2] = {1, 3000};
        set_ints(g, TOSAC_ATTR_DEPTHWISE_CONV2D_dilation, dil, 2);
        set_dim(val(g, "input"), 2, 6000);
        set_dim(val(g, "output"), 2, 6000 - 1 + 2 - 2 * 3000 + 1);
        if (lvl)
            EXPECT_LEVEL(g, "dilation_x*KW = 3000*3 exceeds MAX_KERNEL 8192 (level 8K)");
        else
            EXPECT_VALID_NONE(g);
    }
    /* TRANSPOSE_CONV2D KH 8193 and stride 8193 */
    for (int lvl = 0; lvl < 2; lvl++) {
        g = example(TOSAC_OP_TRANSPOSE_CONV2D, 0);
        const int64_t w[4] = {5, 8193, 3, 2}, out[4] = {1, 2 * 8193 + 8193, 9, 5};
        static const int32_t st[2] = {8193, 2};
        set_shape(g, val(g, "weight"), 4, w);
        set_shape(g, val(g, "output"), 4, out);
        set_ints(g, TOSAC_ATTR_TRANSPOSE_CONV2D_stride, st, 2);
        if (lvl) {
            tosac_diag *d = tosac_diag_create();
            tosac_validate_opts o = opts_8k();
            EXPECT_EQ_I(tosac_validate(g, &o, d), TOSAC_ERR_UNPREDICTABLE);
            EXPECT(has_msg(d, "KH 8193 exceeds MAX_KERNEL 8192 (level 8K)"));
            EXPECT(has_msg(d, "stride_y 8193 exceeds MAX_STRIDE 8192 (level 8K)"));
            tosac_diag_destroy(d);
            tosac_graph_destroy(g);
        } else {
            EXPECT_VALID_NONE(g);
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* pooling                                                                                       */

static void pool_rules(void)
{
    tosac_graph *g;
    static const int32_t pad_big[4] = {3, 1, 1, 1}, k0[2] = {0, 3}, k3[3] = {3, 3, 3}, padneg[4] = {1, 1, -1, 1};

    /* AVG variant 0: input [1,7,7,3], kernel [3,3], stride [2,2], pad [1,1,1,1] */
    g = example(TOSAC_OP_AVG_POOL2D, 0);
    set_ints(g, TOSAC_ATTR_AVG_POOL2D_pad, pad_big, 4);
    EXPECT_ERR(g, "pad_top 3 must be smaller than kernel_y 3");

    g = example(TOSAC_OP_AVG_POOL2D, 0);
    set_ints(g, TOSAC_ATTR_AVG_POOL2D_kernel, k0, 2);
    EXPECT_ERR(g, "kernel_y 0 must be >= 1");

    g = example(TOSAC_OP_MAX_POOL2D, 0);
    set_ints(g, TOSAC_ATTR_MAX_POOL2D_kernel, k3, 3);
    EXPECT_ERR(g, "kernel has 3 elements, expected 2");

    g = example(TOSAC_OP_MAX_POOL2D, 0);
    set_ints(g, TOSAC_ATTR_MAX_POOL2D_pad, padneg, 4);
    EXPECT_ERR(g, "pad_left -1 must be >= 0");

    g = example(TOSAC_OP_AVG_POOL2D, 0);
    set_dim(val(g, "output"), 2, 3);
    EXPECT_ERR(g, "output shape [1,4,3,3] does not match the inferred [1,4,4,3]");

    g = example(TOSAC_OP_MAX_POOL2D, 1); /* [2,6,5,4] -> [2,3,5,4] */
    set_dim(val(g, "output"), 3, 5);
    EXPECT_ERR(g, "C 5, expected 4");

    /* stride 2 over (7+1+1-3) = 6 is fine; stride 4 is not an integer */
    static const int32_t s4[2] = {4, 2};
    g = example(TOSAC_OP_AVG_POOL2D, 0);
    set_ints(g, TOSAC_ATTR_AVG_POOL2D_stride, s4, 2);
    EXPECT_ERR(g, "output height (IH+pad_top+pad_bottom-kernel_y)/stride_y = 6/4 is not an integer");

    /* zero points: INT16 must be 0, INT8 may be anything */
    g = example(TOSAC_OP_AVG_POOL2D, row_of(TOSAC_OP_AVG_POOL2D, TOSAC_DTYPE_INT16, TOSAC_DTYPE_UNKNOWN));
    {
        const uint8_t m1[2] = {0xff, 0xff};
        set_data(g, val(g, "output_zp"), m1, 2);
    }
    EXPECT_ERR(g, "output_zp -1 must be 0 for INT16 data");

    /* nan_mode absent (UNKNOWN) */
    g = example(TOSAC_OP_MAX_POOL2D, 0);
    op_node(g)->attr[TOSAC_ATTR_MAX_POOL2D_nan_mode].present = false;
    EXPECT_ERR(g, "nan_mode UNKNOWN (0) is not a valid NaN propagation mode");

    g = example(TOSAC_OP_MAX_POOL2D, 0);
    set_int(g, TOSAC_ATTR_MAX_POOL2D_nan_mode, 7);
    EXPECT_ERR(g, "nan_mode out of range (7)");

    /* rank */
    g = example(TOSAC_OP_MAX_POOL2D, 0);
    {
        const int64_t d5[5] = {1, 1, 7, 7, 3};
        set_shape(g, val(g, "output"), 5, d5);
    }
    EXPECT_ERR(g, "output must have rank 4");
}

static void pool_levels(void)
{
    tosac_graph *g;
    /* kernel 8193: input [1,8193,1,1] -> [1,1,1,1] */
    for (int lvl = 0; lvl < 2; lvl++) {
        g = example(TOSAC_OP_MAX_POOL2D, 0);
        const int64_t in[4] = {1, 8193, 1, 1}, out[4] = {1, 1, 1, 1};
        static const int32_t k[2] = {8193, 1}, s[2] = {1, 1}, p[4] = {0, 0, 0, 0};
        set_shape(g, val(g, "input"), 4, in);
        set_shape(g, val(g, "output"), 4, out);
        set_ints(g, TOSAC_ATTR_MAX_POOL2D_kernel, k, 2);
        set_ints(g, TOSAC_ATTR_MAX_POOL2D_stride, s, 2);
        set_ints(g, TOSAC_ATTR_MAX_POOL2D_pad, p, 4);
        if (lvl)
            EXPECT_LEVEL(g, "kernel_y 8193 exceeds MAX_KERNEL 8192 (level 8K)");
        else
            EXPECT_VALID_NONE(g);
    }
    /* stride 9000: input [1,9001,1,1], kernel 1 -> OH 2 */
    for (int lvl = 0; lvl < 2; lvl++) {
        g = example(TOSAC_OP_AVG_POOL2D, 0);
        const int64_t in[4] = {1, 9001, 1, 3}, out[4] = {1, 2, 1, 3};
        static const int32_t k[2] = {1, 1}, s[2] = {9000, 1}, p[4] = {0, 0, 0, 0};
        set_shape(g, val(g, "input"), 4, in);
        set_shape(g, val(g, "output"), 4, out);
        set_ints(g, TOSAC_ATTR_AVG_POOL2D_kernel, k, 2);
        set_ints(g, TOSAC_ATTR_AVG_POOL2D_stride, s, 2);
        set_ints(g, TOSAC_ATTR_AVG_POOL2D_pad, p, 4);
        if (lvl)
            EXPECT_LEVEL(g, "stride_y 9000 exceeds MAX_STRIDE 8192 (level 8K)");
        else
            EXPECT_VALID_NONE(g);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* MATMUL, FFT, ARGMAX                                                                           */

static void matmul_rules(void)
{
    tosac_graph *g;
    g = example(TOSAC_OP_MATMUL, 0); /* A [2,3,5] B [2,5,4] */
    set_dim(val(g, "B"), 1, 6);
    EXPECT_ERR(g, "B rows C 6 do not match A columns C 5");

    g = example(TOSAC_OP_MATMUL, 0);
    set_dim(val(g, "B"), 0, 1);
    EXPECT_ERR(g, "B batch N 1 does not match A batch N 2");

    g = example(TOSAC_OP_MATMUL, 0);
    set_dim(val(g, "output"), 2, 5);
    EXPECT_ERR(g, "output shape [2,3,5] does not match the inferred [2,3,4]");

    g = example(TOSAC_OP_MATMUL, 0);
    {
        const int64_t d2[2] = {3, 5};
        set_shape(g, val(g, "A"), 2, d2);
    }
    EXPECT_ERR(g, "A must have rank 3 [N,H,C], has rank 2");

    g = example(TOSAC_OP_MATMUL, row_of(TOSAC_OP_MATMUL, TOSAC_DTYPE_INT16, TOSAC_DTYPE_INT48));
    {
        const uint8_t two[2] = {2, 0};
        set_data(g, val(g, "A_zp"), two, 2);
    }
    EXPECT_ERR(g, "A_zp 2 must be 0 for INT16 data");

    g = example(TOSAC_OP_MATMUL, row_of(TOSAC_OP_MATMUL, TOSAC_DTYPE_BF16, TOSAC_DTYPE_FP32));
    {
        const uint8_t one_bf[2] = {0x80, 0x3f};
        set_data(g, val(g, "B_zp"), one_bf, 2);
    }
    EXPECT_ERR(g, "B_zp (bits 0x3f80) must be 0 for BF16 data");
}

static void fft_rules(void)
{
    tosac_graph *g;
    const int64_t bad[3] = {1, 6, 4};

    g = example(TOSAC_OP_FFT2D, 0); /* [1,8,4] */
    set_shape(g, val(g, "input_real"), 3, bad);
    set_shape(g, val(g, "input_imag"), 3, bad);
    set_shape(g, val(g, "output_real"), 3, bad);
    set_shape(g, val(g, "output_imag"), 3, bad);
    EXPECT_ERR(g, "input height H 6 is not a power of two");

    g = example(TOSAC_OP_FFT2D, 0);
    set_dim(val(g, "input_imag"), 2, 8);
    EXPECT_ERR(g, "input_imag shape [1,8,8] does not match input_real shape [1,8,4]");

    g = example(TOSAC_OP_FFT2D, 0);
    set_dim(val(g, "output_imag"), 0, 2);
    EXPECT_ERR(g, "output_imag shape [2,8,4] does not match output_real shape [1,8,4]");

    g = example(TOSAC_OP_RFFT2D, 0); /* [2,4,8] -> [2,4,5] */
    set_dim(val(g, "output_real"), 2, 8);
    EXPECT_ERR(g, "output_real shape [2,4,8] does not match the inferred [2,4,5]");

    g = example(TOSAC_OP_RFFT2D, 0);
    set_dim(val(g, "input_real"), 2, 12);
    EXPECT_ERR(g, "input width W 12 is not a power of two");

    /* level: H 16384 */
    for (int lvl = 0; lvl < 2; lvl++) {
        g = example(TOSAC_OP_FFT2D, 0);
        const int64_t big[3] = {1, 16384, 2};
        set_shape(g, val(g, "input_real"), 3, big);
        set_shape(g, val(g, "input_imag"), 3, big);
        set_shape(g, val(g, "output_real"), 3, big);
        set_shape(g, val(g, "output_imag"), 3, big);
        if (lvl)
            EXPECT_LEVEL(g, "H 16384 exceeds MAX_KERNEL 8192 (level 8K)");
        else
            EXPECT_VALID_NONE(g);
    }
}

static void argmax_rules(void)
{
    tosac_graph *g;
    g = example(TOSAC_OP_ARGMAX, 0); /* [2,3,4] axis 0 -> [3,4] */
    set_int(g, TOSAC_ATTR_ARGMAX_axis, 3);
    EXPECT_ERR(g, "axis 3 is out of range for input rank 3");

    g = example(TOSAC_OP_ARGMAX, 0);
    set_int(g, TOSAC_ATTR_ARGMAX_axis, -1);
    EXPECT_ERR(g, "axis -1 is out of range");

    g = example(TOSAC_OP_ARGMAX, 0);
    {
        const int64_t d3[3] = {1, 3, 4};
        set_shape(g, val(g, "output"), 3, d3);
    }
    EXPECT_ERR(g, "output rank 3 must be input rank - 1 = 2");

    g = example(TOSAC_OP_ARGMAX, 1); /* axis 1 -> [2,4] */
    set_dim(val(g, "output"), 1, 3);
    EXPECT_ERR(g, "output shape [2,3] does not match the inferred [2,4]");

    g = example(TOSAC_OP_ARGMAX, 0);
    op_node(g)->attr[TOSAC_ATTR_ARGMAX_nan_mode].present = false;
    EXPECT_ERR(g, "nan_mode UNKNOWN");

    g = example(TOSAC_OP_ARGMAX, 0);
    set_shape(g, val(g, "input"), 0, NULL);
    EXPECT_ERR(g, "input must have rank >= 1");
}

/* ------------------------------------------------------------------------------------------ */
/* CLAMP, TABLE                                                                                  */

static void clamp_rules(void)
{
    tosac_graph *g;
    const unsigned r_i8 = row_of(TOSAC_OP_CLAMP, TOSAC_DTYPE_INT8, TOSAC_DTYPE_UNKNOWN);
    const unsigned r_i16 = row_of(TOSAC_OP_CLAMP, TOSAC_DTYPE_INT16, TOSAC_DTYPE_UNKNOWN);
    const unsigned r_f16 = row_of(TOSAC_OP_CLAMP, TOSAC_DTYPE_FP16, TOSAC_DTYPE_UNKNOWN);
    const unsigned r_f32 = row_of(TOSAC_OP_CLAMP, TOSAC_DTYPE_FP32, TOSAC_DTYPE_UNKNOWN);
    const unsigned r_bf = row_of(TOSAC_OP_CLAMP, TOSAC_DTYPE_BF16, TOSAC_DTYPE_UNKNOWN);
    tosac_node *n;

    g = example(TOSAC_OP_CLAMP, r_i8);
    n = op_node(g);
    {
        const uint8_t lo = 50, hi = 10;
        tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_min_val, &lo, 1);
        tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_max_val, &hi, 1);
    }
    EXPECT_ERR(g, "max_val 10 is smaller than min_val 50");

    /* i8 bytes are signed: min -1 (0xff) <= max 1 */
    g = example(TOSAC_OP_CLAMP, r_i8);
    n = op_node(g);
    {
        const uint8_t lo = 0xff, hi = 1;
        tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_min_val, &lo, 1);
        tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_max_val, &hi, 1);
    }
    EXPECT_VALID(g);

    g = example(TOSAC_OP_CLAMP, r_i16);
    n = op_node(g);
    {
        const uint8_t lo[2] = {0x00, 0x01}, hi[2] = {0xff, 0xff}; /* 256 > -1 */
        tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_min_val, lo, 2);
        tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_max_val, hi, 2);
    }
    EXPECT_ERR(g, "max_val -1 is smaller than min_val 256");

    g = example(TOSAC_OP_CLAMP, r_i8);
    n = op_node(g);
    {
        const uint8_t lo[2] = {0, 0};
        tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_min_val, lo, 2);
    }
    EXPECT_ERR(g, "min_val has 2 bytes, expected 1 (one INT8 value");

    g = example(TOSAC_OP_CLAMP, r_f32);
    op_node(g)->attr[TOSAC_ATTR_CLAMP_max_val].present = false;
    EXPECT_ERR(g, "max_val has 0 bytes, expected 4");

    /* the conformance generator's form: one value zero-padded to 8 bytes */
    g = example(TOSAC_OP_CLAMP, r_i16);
    n = op_node(g);
    {
        const uint8_t lo[8] = {0x18, 0xfc, 0, 0, 0, 0, 0, 0}, hi[8] = {0xd0, 0x07, 0, 0, 0, 0, 0, 0}; /* -1000, 2000 */
        tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_min_val, lo, 8);
        tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_max_val, hi, 8);
    }
    EXPECT_VALID(g);
    g = example(TOSAC_OP_CLAMP, r_i16);
    n = op_node(g);
    {
        const uint8_t lo[8] = {0xd0, 0x07, 0, 0, 0, 0, 0, 0}, hi[8] = {0x18, 0xfc, 0, 0, 0, 0, 0, 0};
        tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_min_val, lo, 8);
        tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_max_val, hi, 8);
    }
    EXPECT_ERR(g, "max_val -1000 is smaller than min_val 2000");
    /* an fp64 6.0 written for an fp32 CLAMP: 8 bytes whose padding is not zero */
    g = example(TOSAC_OP_CLAMP, r_f32);
    n = op_node(g);
    {
        const uint8_t d6[8] = {0, 0, 0, 0, 0, 0, 0x18, 0x40};
        tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_max_val, d6, 8);
    }
    EXPECT_ERR(g, "max_val has 8 bytes, expected 4 (one FP32 value, optionally zero-padded to 8 bytes)");

    g = example(TOSAC_OP_CLAMP, r_f32);
    n = op_node(g);
    {
        const uint8_t nan[4] = {0x00, 0x00, 0xc0, 0x7f};
        tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_min_val, nan, 4);
    }
    EXPECT_ERR(g, "min_val is NaN");

    g = example(TOSAC_OP_CLAMP, r_f16);
    n = op_node(g);
    {
        const uint8_t two[2] = {0x00, 0x40}, one[2] = {0x00, 0x3c};
        tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_min_val, two, 2);
        tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_max_val, one, 2);
    }
    EXPECT_ERR(g, "max_val 1 is smaller than min_val 2");

    /* fp16 -inf .. +inf, and -0 == +0 */
    g = example(TOSAC_OP_CLAMP, r_f16);
    n = op_node(g);
    {
        const uint8_t ninf[2] = {0x00, 0xfc}, pinf[2] = {0x00, 0x7c};
        tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_min_val, ninf, 2);
        tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_max_val, pinf, 2);
    }
    EXPECT_VALID(g);
    g = example(TOSAC_OP_CLAMP, r_bf);
    n = op_node(g);
    {
        const uint8_t pz[2] = {0x00, 0x00}, nz[2] = {0x00, 0x80};
        tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_min_val, pz, 2);
        tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_max_val, nz, 2);
    }
    EXPECT_VALID(g);

    /* bf16 NaN */
    g = example(TOSAC_OP_CLAMP, r_bf);
    n = op_node(g);
    {
        const uint8_t nan[2] = {0xc1, 0x7f};
        tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_max_val, nan, 2);
    }
    EXPECT_ERR(g, "max_val is NaN");

    g = example(TOSAC_OP_CLAMP, r_i8);
    set_int(g, TOSAC_ATTR_CLAMP_nan_mode, 0);
    EXPECT_ERR(g, "nan_mode UNKNOWN");

    g = example(TOSAC_OP_CLAMP, r_i8);
    set_dim(val(g, "output"), 0, 4);
    EXPECT_ERR(g, "output shape [4,4] does not match the input shape [3,4]");
}

static void table_rules(void)
{
    tosac_graph *g;
    g = example(TOSAC_OP_TABLE, 0);
    set_dim(val(g, "table"), 0, 255);
    EXPECT_ERR(g, "table has 255 elements, expected TABLE_SIZE 256 for INT8 input");

    g = example(TOSAC_OP_TABLE, 1);
    set_dim(val(g, "table"), 0, 512);
    EXPECT_ERR(g, "table has 512 elements, expected TABLE_SIZE 513 for INT16 input");

    g = example(TOSAC_OP_TABLE, 0);
    {
        const int64_t d2[2] = {16, 16};
        set_shape(g, val(g, "table"), 2, d2);
    }
    EXPECT_ERR(g, "table must have shape [256]");

    g = example(TOSAC_OP_TABLE, 1);
    set_dim(val(g, "output"), 1, 4);
    EXPECT_ERR(g, "output shape [2,4] does not match the input shape [2,5]");
}

/* ------------------------------------------------------------------------------------------ */
/* RESIZE                                                                                        */

/* variant 0: input [1,4,5,2], scale [4,2,4,2], offset [-1,-1], border [1,1] -> [1,8,10,2] */
static tosac_graph *resize_with(const int64_t *scale, const int64_t *offset, const int64_t *border)
{
    tosac_graph *g = example(TOSAC_OP_RESIZE, 0);
    if (scale) set_shape_vals(g, val(g, "scale"), scale, 4);
    if (offset) set_shape_vals(g, val(g, "offset"), offset, 2);
    if (border) set_shape_vals(g, val(g, "border"), border, 2);
    return g;
}

static void resize_rules(void)
{
    tosac_graph *g;
    {
        /* scale_y_d 64 >= 16*4; height is then also non-integer, but the rule must be named */
        const int64_t s[4] = {4, 64, 4, 2};
        EXPECT_ERR(resize_with(s, NULL, NULL), "scale_y_d 64 must be < 16*scale_y_n = 64");
    }
    {
        const int64_t s[4] = {4, 2, 0, 2};
        EXPECT_ERR(resize_with(s, NULL, NULL), "scale_x_n 0 must be > 0");
    }
    {
        const int64_t s[4] = {4, -2, 4, 2};
        EXPECT_ERR(resize_with(s, NULL, NULL), "scale_y_d -2 must be > 0");
    }
    {
        const int64_t s[4] = {4096, 2, 4, 2};
        EXPECT_ERR(resize_with(s, NULL, NULL), "scale_y_n 4096 exceeds 2048");
    }
    {
        const int64_t o[2] = {-5, -1};
        EXPECT_ERR(resize_with(NULL, o, NULL), "offset_y -5 must be in [-scale_y_n, 16*scale_y_n) = [-4, 64)");
    }
    {
        const int64_t o[2] = {-1, 64};
        EXPECT_ERR(resize_with(NULL, o, NULL), "offset_x 64 must be in");
    }
    {
        const int64_t b[2] = {1, 4};
        EXPECT_ERR(resize_with(NULL, NULL, b), "border_x 4 must be in [-16*scale_x_n, scale_x_n) = [-64, 4)");
    }
    {
        const int64_t b[2] = {-65, 1};
        EXPECT_ERR(resize_with(NULL, NULL, b), "border_y -65 must be in");
    }
    {
        /* border_y 2: ((4-1)*4+1+2)/2 = 15/2 */
        const int64_t b[2] = {2, 1};
        EXPECT_ERR(resize_with(NULL, NULL, b), "= 15/2 is not an integer");
    }
    g = example(TOSAC_OP_RESIZE, 0);
    set_dim(val(g, "output"), 2, 9);
    EXPECT_ERR(g, "output shape [1,8,9,2] does not match the inferred [1,8,10,2]");

    g = example(TOSAC_OP_RESIZE, 0);
    set_dim(val(g, "output"), 3, 3);
    EXPECT_ERR(g, "output channels C 3 do not match the input channels C 2");

    g = example(TOSAC_OP_RESIZE, 0);
    {
        const int64_t three[3] = {4, 2, 4};
        set_shape_vals(g, val(g, "scale"), three, 3);
    }
    EXPECT_ERR(g, "scale has 3 values, expected 4");

    g = example(TOSAC_OP_RESIZE, 0);
    op_node(g)->attr[TOSAC_ATTR_RESIZE_mode].present = false;
    EXPECT_ERR(g, "mode UNKNOWN (0) is not a valid resize mode");

    /* row 0 is i8 -> i32: NEAREST needs i8 -> i8 */
    g = example(TOSAC_OP_RESIZE, row_of(TOSAC_OP_RESIZE, TOSAC_DTYPE_INT16, TOSAC_DTYPE_INT8));
    set_int(g, TOSAC_ATTR_RESIZE_mode, TOSAC_RESIZE_NEAREST);
    EXPECT_ERR(g, "mode NEAREST requires the output type to equal the input type INT8, not INT32");

    /* FP rows accept both modes */
    g = example(TOSAC_OP_RESIZE, row_of(TOSAC_OP_RESIZE, TOSAC_DTYPE_FP32, TOSAC_DTYPE_FP32));
    set_int(g, TOSAC_ATTR_RESIZE_mode, TOSAC_RESIZE_BILINEAR);
    EXPECT_VALID(g);

    /* 16384 limit: input [1,4,16384,2] with scale_x 1/1 */
    g = example(TOSAC_OP_RESIZE, 0);
    {
        const int64_t s[4] = {4, 2, 1, 1}, o[2] = {-1, 0}, b[2] = {1, 0};
        const int64_t in[4] = {1, 4, 16384, 2}, out[4] = {1, 8, 16384, 2};
        set_shape_vals(g, val(g, "scale"), s, 4);
        set_shape_vals(g, val(g, "offset"), o, 2);
        set_shape_vals(g, val(g, "border"), b, 2);
        set_shape(g, val(g, "input"), 4, in);
        set_shape(g, val(g, "output"), 4, out);
    }
    EXPECT_ERR(g, "max(OH,OW,IH,IW) = IW 16384 must be < 16384");

    /* level MAX_SCALE: 2048/1 > 256 under 8K, fine under none (2048) */
    for (int lvl = 0; lvl < 2; lvl++) {
        g = example(TOSAC_OP_RESIZE, 0);
        const int64_t s[4] = {2048, 1, 1, 1}, z[2] = {0, 0};
        const int64_t in[4] = {1, 2, 2, 2}, out[4] = {1, 2049, 2, 2};
        set_shape_vals(g, val(g, "scale"), s, 4);
        set_shape_vals(g, val(g, "offset"), z, 2);
        set_shape_vals(g, val(g, "border"), z, 2);
        set_shape(g, val(g, "input"), 4, in);
        set_shape(g, val(g, "output"), 4, out);
        if (lvl)
            EXPECT_LEVEL(g, "scale_y_n/scale_y_d = 2048/1 exceeds MAX_SCALE 256 (level 8K)");
        else
            EXPECT_VALID_NONE(g);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* RESCALE                                                                                       */

static unsigned rescale_row(tosac_dtype in, tosac_dtype out) { return row_of(TOSAC_OP_RESCALE, in, out); }

static void rescale_flag_rules(void)
{
    tosac_graph *g;
    const unsigned i8i8 = rescale_row(TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT8);
    const unsigned i8i32 = rescale_row(TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT32);
    const unsigned i32i8 = rescale_row(TOSAC_DTYPE_INT32, TOSAC_DTYPE_INT8);
    const unsigned i32i32 = rescale_row(TOSAC_DTYPE_INT32, TOSAC_DTYPE_INT32);
    const unsigned i48i8 = rescale_row(TOSAC_DTYPE_INT48, TOSAC_DTYPE_INT8);

    g = example(TOSAC_OP_RESCALE, i8i8);
    op_node(g)->attr[TOSAC_ATTR_RESCALE_rounding_mode].present = false;
    EXPECT_ERR(g, "rounding_mode UNKNOWN (0) is not valid");

    g = example(TOSAC_OP_RESCALE, i8i8);
    set_int(g, TOSAC_ATTR_RESCALE_rounding_mode, 4);
    EXPECT_ERR(g, "rounding_mode out of range (4)");

    /* scale32 with INT48 input (the multiplier then has the wrong type too) */
    /* scale32 with INT48 input (with an INT32 multiplier, so that the type row still matches) */
    g = example(TOSAC_OP_RESCALE, i48i8);
    set_int(g, TOSAC_ATTR_RESCALE_scale32, 1);
    {
        const uint8_t m[4] = {0, 0, 0, 0x40};
        val(g, "multiplier")->dtype = TOSAC_DTYPE_INT32;
        set_data(g, val(g, "multiplier"), m, 4);
    }
    EXPECT_ERR(g, "scale32 must be false for INT48 input");

    g = example(TOSAC_OP_RESCALE, i48i8);
    set_int(g, TOSAC_ATTR_RESCALE_rounding_mode, TOSAC_ROUND_DOUBLE);
    EXPECT_ERR(g, "rounding_mode DOUBLE_ROUND requires scale32 to be true");

    g = example(TOSAC_OP_RESCALE, i8i8);
    set_int(g, TOSAC_ATTR_RESCALE_input_unsigned, 1);
    set_int(g, TOSAC_ATTR_RESCALE_output_unsigned, 1);
    EXPECT_ERR(g, "input_unsigned and output_unsigned cannot both be true");

    g = example(TOSAC_OP_RESCALE, i8i32);
    set_int(g, TOSAC_ATTR_RESCALE_input_unsigned, 1);
    EXPECT_ERR(g, "input_unsigned is not allowed with INT32 output");

    g = example(TOSAC_OP_RESCALE, i32i8);
    set_int(g, TOSAC_ATTR_RESCALE_output_unsigned, 1);
    EXPECT_ERR(g, "output_unsigned is not allowed with INT32 input");

    g = example(TOSAC_OP_RESCALE, i48i8);
    set_int(g, TOSAC_ATTR_RESCALE_output_unsigned, 1);
    EXPECT_ERR(g, "output_unsigned is not allowed with INT48 input");

    g = example(TOSAC_OP_RESCALE, i32i8);
    set_int(g, TOSAC_ATTR_RESCALE_input_unsigned, 1);
    EXPECT_ERR(g, "input_unsigned is not allowed for INT32 input");

    g = example(TOSAC_OP_RESCALE, i48i8);
    set_int(g, TOSAC_ATTR_RESCALE_input_unsigned, 1);
    EXPECT_ERR(g, "input_unsigned is not allowed for INT48 input");

    g = example(TOSAC_OP_RESCALE, i8i32);
    set_int(g, TOSAC_ATTR_RESCALE_output_unsigned, 1);
    EXPECT_ERR(g, "output_unsigned is not allowed for INT32 output");

    /* extensions */
    {
        tosac_validate_opts o = opts_8k();
        o.extensions &= ~(uint32_t)TOSAC_EXT_DOUBLEROUND;
        g = example(TOSAC_OP_RESCALE, i8i32); /* DOUBLE_ROUND */
        expect_at(__LINE__, g, o, TOSAC_ERR_TOSA_ERROR,
                  "rounding_mode DOUBLE_ROUND requires extension EXT-DOUBLEROUND, which is not enabled");
        o = opts_8k();
        o.extensions &= ~(uint32_t)TOSAC_EXT_INEXACTROUND;
        g = example(TOSAC_OP_RESCALE, i32i32); /* INEXACT_ROUND */
        expect_at(__LINE__, g, o, TOSAC_ERR_TOSA_ERROR, "requires extension EXT-INEXACTROUND");
        /* SINGLE_ROUND needs neither */
        o.extensions &= ~(uint32_t)TOSAC_EXT_DOUBLEROUND;
        expect_at(__LINE__, example(TOSAC_OP_RESCALE, i8i8), o, TOSAC_OK, NULL);
    }
}

static void rescale_shape_rules(void)
{
    tosac_graph *g;
    const unsigned i8i32 = rescale_row(TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT32);   /* per_channel, [2,3,4] */
    const unsigned i8i8 = rescale_row(TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT8);     /* [2,3,4] */
    const unsigned i32i32 = rescale_row(TOSAC_DTYPE_INT32, TOSAC_DTYPE_INT32); /* rank 0 */

    g = example(TOSAC_OP_RESCALE, i32i32);
    set_int(g, TOSAC_ATTR_RESCALE_per_channel, 1);
    EXPECT_ERR(g, "per_channel requires an input of rank >= 1");

    g = example(TOSAC_OP_RESCALE, i8i32);
    set_dim(val(g, "multiplier"), 0, 3);
    EXPECT_ERR(g, "multiplier has 3 elements, expected 4 (per_channel: the last input dim)");

    g = example(TOSAC_OP_RESCALE, i8i32);
    set_dim(val(g, "shift"), 0, 1);
    EXPECT_ERR(g, "shift has 1 elements, expected 4");

    g = example(TOSAC_OP_RESCALE, i8i8);
    set_dim(val(g, "shift"), 0, 2);
    EXPECT_ERR(g, "shift has 2 elements, expected 1 (per_channel false)");

    g = example(TOSAC_OP_RESCALE, i8i8);
    set_int(g, TOSAC_ATTR_RESCALE_per_channel, 1);
    EXPECT_ERR(g, "multiplier has 1 elements, expected 4");

    g = example(TOSAC_OP_RESCALE, i8i8);
    set_dim(val(g, "output"), 2, 5);
    EXPECT_ERR(g, "output shape [2,3,5] does not match the input shape [2,3,4]");

    g = example(TOSAC_OP_RESCALE, i8i8);
    {
        const int64_t d2[2] = {1, 1};
        set_shape(g, val(g, "multiplier"), 2, d2);
    }
    EXPECT_ERR(g, "multiplier must have rank 1 [NC], has shape [1,1]");
}

static void rescale_zero_points(void)
{
    tosac_graph *g;
    const unsigned i16i32 = rescale_row(TOSAC_DTYPE_INT16, TOSAC_DTYPE_INT32);
    const unsigned u16i8 = rescale_row(TOSAC_DTYPE_INT16, TOSAC_DTYPE_INT8);  /* input_unsigned, zp 32768 */
    const unsigned i16u16 = rescale_row(TOSAC_DTYPE_INT16, TOSAC_DTYPE_INT16); /* output_unsigned, zp 32768 */
    const unsigned i32i8 = rescale_row(TOSAC_DTYPE_INT32, TOSAC_DTYPE_INT8);
    const unsigned i48i16 = rescale_row(TOSAC_DTYPE_INT48, TOSAC_DTYPE_INT16);
    const unsigned u8i16 = rescale_row(TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT16);

    g = example(TOSAC_OP_RESCALE, i16i32);
    {
        const uint8_t five[2] = {5, 0};
        set_data(g, val(g, "input_zp"), five, 2);
    }
    EXPECT_ERR(g, "input_zp 5 must be 0 for INT16 input");

    /* signed i16 with the 32768 pattern is still an error */
    g = example(TOSAC_OP_RESCALE, u16i8);
    set_int(g, TOSAC_ATTR_RESCALE_input_unsigned, 0);
    EXPECT_ERR(g, "input_zp -32768 must be 0 for INT16 input");

    g = example(TOSAC_OP_RESCALE, u16i8);
    {
        const uint8_t hundred[2] = {100, 0};
        set_data(g, val(g, "input_zp"), hundred, 2);
    }
    EXPECT_ERR(g, "input_zp 100 must be 0 or 32768 for unsigned INT16 input");

    g = example(TOSAC_OP_RESCALE, i16u16);
    {
        const uint8_t v[2] = {0xff, 0xff}; /* u16 65535 */
        set_data(g, val(g, "output_zp"), v, 2);
    }
    EXPECT_ERR(g, "output_zp 65535 must be 0 or 32768 for unsigned INT16 output");

    g = example(TOSAC_OP_RESCALE, i32i8);
    {
        const uint8_t v[4] = {1, 0, 0, 0};
        set_data(g, val(g, "input_zp"), v, 4);
    }
    EXPECT_ERR(g, "input_zp 1 must be 0 for INT32 input");

    g = example(TOSAC_OP_RESCALE, i48i16);
    {
        const uint8_t v[6] = {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff}; /* -2 */
        set_data(g, val(g, "input_zp"), v, 6);
    }
    EXPECT_ERR(g, "input_zp -2 must be 0 for INT48 input");

    g = example(TOSAC_OP_RESCALE, i16i32);
    {
        const uint8_t v[4] = {0, 1, 0, 0};
        set_data(g, val(g, "output_zp"), v, 4);
    }
    EXPECT_ERR(g, "output_zp 256 must be 0 for INT32 output");

    /* u8 any value, i8 any value */
    g = example(TOSAC_OP_RESCALE, u8i16);
    {
        const uint8_t v = 200;
        set_data(g, val(g, "input_zp"), &v, 1);
    }
    EXPECT_VALID(g);

    g = example(TOSAC_OP_RESCALE, u8i16);
    {
        const int64_t two = 2;
        set_shape(g, val(g, "input_zp"), 1, &two);
    }
    EXPECT_ERR(g, "input_zp must have shape [1]");
}

/* ------------------------------------------------------------------------------------------ */
/* hostile graphs: nothing may crash, errors are reported                                        */

static void hostile_graphs(void)
{
    tosac_graph *g;
    /* absurd dims: overflow in the output formulas */
    g = example(TOSAC_OP_CONV2D, 0);
    {
        const int64_t in[4] = {1, INT64_MAX, INT64_MAX - 1, 3}, w[4] = {4, INT64_MAX, 3, 3};
        static const int32_t dil[2] = {INT32_MAX, INT32_MAX}, pad[4] = {INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX};
        set_shape(g, val(g, "input"), 4, in);
        set_shape(g, val(g, "weight"), 4, w);
        set_ints(g, TOSAC_ATTR_CONV2D_dilation, dil, 2);
        set_ints(g, TOSAC_ATTR_CONV2D_pad, pad, 4);
    }
    EXPECT_ERR(g, NULL);

    g = example(TOSAC_OP_TRANSPOSE_CONV2D, 0);
    {
        const int64_t in[4] = {1, INT64_MAX, INT64_MIN, 2};
        static const int32_t st[2] = {INT32_MAX, INT32_MAX}, op[4] = {INT32_MIN, INT32_MAX, INT32_MIN, INT32_MAX};
        set_shape(g, val(g, "input"), 4, in);
        set_ints(g, TOSAC_ATTR_TRANSPOSE_CONV2D_stride, st, 2);
        set_ints(g, TOSAC_ATTR_TRANSPOSE_CONV2D_out_pad, op, 4);
    }
    EXPECT_ERR(g, NULL);

    g = example(TOSAC_OP_RESIZE, 0);
    {
        const int64_t s[4] = {INT64_MAX, 1, INT64_MIN, -1};
        const int64_t o[2] = {INT64_MIN, INT64_MAX}, b[2] = {INT64_MAX, INT64_MIN};
        const int64_t in[4] = {1, INT64_MAX, 3, 2};
        set_shape_vals(g, val(g, "scale"), s, 4);
        set_shape_vals(g, val(g, "offset"), o, 2);
        set_shape_vals(g, val(g, "border"), b, 2);
        set_shape(g, val(g, "input"), 4, in);
    }
    EXPECT_ERR(g, NULL);

    g = example(TOSAC_OP_RESIZE, 0);
    {
        const int64_t s[4] = {2048, 1, 2048, 1}, o[2] = {-2048, -2048}, b[2] = {-32768, -32768};
        const int64_t in[4] = {1, INT64_MAX, INT64_MAX / 2, 2};
        set_shape_vals(g, val(g, "scale"), s, 4);
        set_shape_vals(g, val(g, "offset"), o, 2);
        set_shape_vals(g, val(g, "border"), b, 2);
        set_shape(g, val(g, "input"), 4, in);
    }
    EXPECT_ERR(g, NULL);

    /* missing constant data everywhere */
    g = example(TOSAC_OP_RESIZE, 0);
    set_data(g, val(g, "scale"), NULL, 0);
    set_data(g, val(g, "offset"), NULL, 0);
    set_data(g, val(g, "border"), NULL, 0);
    {
        tosac_diag *d = tosac_diag_create();
        tosac_validate_opts o = opts_8k();
        tosac_validate(g, &o, d); /* the generic checks may object to constants without data; no crash */
        EXPECT(!has_msg(d, "scale_y"));
        tosac_diag_destroy(d);
    }
    tosac_graph_destroy(g);

    /* rank 0 everywhere */
    static const uint32_t ops[] = {TOSAC_OP_CONV2D,    TOSAC_OP_CONV3D, TOSAC_OP_DEPTHWISE_CONV2D,
                                   TOSAC_OP_TRANSPOSE_CONV2D, TOSAC_OP_AVG_POOL2D, TOSAC_OP_MAX_POOL2D,
                                   TOSAC_OP_MATMUL,    TOSAC_OP_FFT2D,  TOSAC_OP_RFFT2D,
                                   TOSAC_OP_ARGMAX,    TOSAC_OP_CLAMP,  TOSAC_OP_TABLE,
                                   TOSAC_OP_RESIZE,    TOSAC_OP_RESCALE};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        g = example(ops[i], 0);
        tosac_node *n = op_node(g);
        for (uint32_t k = 0; k < n->n_inputs; k++)
            if (!n->inputs[k]->is_shape) set_shape(g, n->inputs[k], 0, NULL);
        for (uint32_t k = 0; k < n->n_outputs; k++) set_shape(g, n->outputs[k], 0, NULL);
        for (unsigned k = 0; k < TOSAC_ATTR_MAX_FIELDS; k++) n->attr[k].present = false;
        tosac_validate_opts o = opts_8k();
        EXPECT_EQ_I(tosac_validate(g, &o, NULL), TOSAC_ERR_TOSA_ERROR);
        tosac_graph_destroy(g);
    }

    /* operands with huge ranks where the ops expect small ones */
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        g = example(ops[i], 0);
        tosac_node *n = op_node(g);
        int64_t dims[6] = {1, 1, 1, 1, 1, 1};
        for (uint32_t k = 0; k < n->n_inputs; k++)
            if (!n->inputs[k]->is_shape) set_shape(g, n->inputs[k], 6, dims);
        for (uint32_t k = 0; k < n->n_outputs; k++) set_shape(g, n->outputs[k], 6, dims);
        tosac_validate_opts o = opts_none();
        tosac_status s = tosac_validate(g, &o, NULL);
        EXPECT_EQ_I(s, ops[i] == TOSAC_OP_CLAMP ? TOSAC_OK : TOSAC_ERR_TOSA_ERROR); /* CLAMP is rank-agnostic */
        tosac_graph_destroy(g);
    }
}

int main(void)
{
    RUN(examples_validate_clean);
    RUN(conv_attribute_rules);
    RUN(conv_shape_rules);
    RUN(transpose_conv_rules);
    RUN(conv_zero_points);
    RUN(conv_levels);
    RUN(pool_rules);
    RUN(pool_levels);
    RUN(matmul_rules);
    RUN(fft_rules);
    RUN(argmax_rules);
    RUN(clamp_rules);
    RUN(table_rules);
    RUN(resize_rules);
    RUN(rescale_flag_rules);
    RUN(rescale_shape_rules);
    RUN(rescale_zero_points);
    RUN(hostile_graphs);
    return test_summary();
}
