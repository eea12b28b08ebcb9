/*
 * gen_example: writes small .tosa files built with the public graph builder and tosac's own
 * writer, for the CLI tests (tests/scripts/cli_test.sh) and the bundled example.
 *
 *   gen_example OUTDIR [NAME...]      (no NAME: all of them)
 *
 *   conv_int8      quantized conv block: CONV2D i8->i32 (pad 1) + per-channel RESCALE i32->i8 +
 *                  CLAMP (ReLU) + RESHAPE by a CONST_SHAPE; valid under PRO-INT with no extension.
 *                  examples/conv_int8.tosa is this file: `gen_example examples conv_int8`.
 *   fp32_relu6     ADD + CLAMP [0, 6] in fp32: valid under PRO-FP only.
 *   bad_shape      ADD of two INT32[2,3] declared to produce INT32[2,4]: an ERROR_IF failure.
 *   rank7          ADD of rank-7 tensors: valid at level none, an ERROR at level 8K (MAX_RANK 6).
 *   cond_if        COND_IF choosing ADD or SUB, sub-graphs in regions "then"/"else"
 *                  (EXT-CONTROLFLOW).
 *   odd_names      IDENTITY whose names and location hold quotes, backslashes, control
 *                  characters, UTF-8 and an invalid UTF-8 byte (output escaping).
 *
 * Exit status 0 on success, 1 on any failure (with a message).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tosac/graph.h"
#include "tosac/tosa_file.h"

/* ------------------------------------------------------------------------------------------- */
/* Small builder helpers: every failure sets ok = false and is reported once at the end.        */

typedef struct gen {
    tosac_graph *g;
    tosac_block *b;
    bool ok;
} gen;

static tosac_block *new_block(gen *x, const char *region, const char *block)
{
    tosac_region *r = x->g ? tosac_graph_add_region(x->g, region) : NULL;
    tosac_block *b = r ? tosac_region_add_block(r, block) : NULL;
    if (!b) x->ok = false;
    return b;
}

static bool gen_init(gen *x)
{
    x->ok = true;
    x->g = tosac_graph_create();
    x->b = new_block(x, "main", "main");
    return x->ok;
}

static tosac_value *tensor(gen *x, const char *name, tosac_dtype t, int rank, const int64_t *shape)
{
    tosac_value *v = x->ok ? tosac_block_add_tensor(x->b, name, t, rank, shape) : NULL;
    if (!v) x->ok = false;
    return v;
}

static tosac_value *input(gen *x, const char *name, tosac_dtype t, int rank, const int64_t *shape)
{
    tosac_value *v = tensor(x, name, t, rank, shape);
    if (v && tosac_block_add_input(x->b, v) != TOSAC_OK) x->ok = false;
    return v;
}

static void output(gen *x, tosac_value *v)
{
    if (!v || tosac_block_add_output(x->b, v) != TOSAC_OK) x->ok = false;
}

static tosac_value *constant(gen *x, const char *name, tosac_dtype t, int rank, const int64_t *shape,
                             const void *data, size_t nbytes)
{
    tosac_value *v = x->ok ? tosac_block_add_const(x->b, name, t, rank, shape, data, nbytes) : NULL;
    if (!v) x->ok = false;
    return v;
}

static tosac_node *node(gen *x, tosac_op op, uint32_t n_in, tosac_value *const *in, tosac_value *out)
{
    tosac_node *n = x->ok ? tosac_block_add_node(x->b, op, n_in, in, 1, &out) : NULL;
    if (!n) x->ok = false;
    return n;
}

static void attr_int(gen *x, tosac_node *n, unsigned id, int64_t v)
{
    if (n && tosac_node_set_int(n, id, v) != TOSAC_OK) x->ok = false;
}

static void attr_ints(gen *x, tosac_node *n, unsigned id, const int32_t *v, uint32_t count)
{
    if (n && tosac_node_set_ints(n, id, v, count) != TOSAC_OK) x->ok = false;
}

static void attr_bytes(gen *x, tosac_node *n, unsigned id, const void *v, uint32_t len)
{
    if (n && tosac_node_set_bytes(n, id, v, len) != TOSAC_OK) x->ok = false;
}

static void attr_str(gen *x, tosac_node *n, unsigned id, const char *s)
{
    if (n && tosac_node_set_str(n, id, s) != TOSAC_OK) x->ok = false;
}

static void location(gen *x, tosac_node *n, const char *text)
{
    if (n && tosac_node_set_location(n, text) != TOSAC_OK) x->ok = false;
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int k = 0; k < 4; k++) p[k] = (uint8_t)(v >> (8 * k));
}

static void put_f32(uint8_t *p, float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    put_le32(p, u);
}

/* ------------------------------------------------------------------------------------------- */
/* The graphs                                                                                    */

static tosac_graph *build_conv_int8(gen *x)
{
    const int64_t s_in[] = {1, 8, 8, 3}, s_w[] = {4, 3, 3, 3}, s_c[] = {4}, s_1[] = {1}, s_acc[] = {1, 8, 8, 4};
    const int64_t s_flat[] = {1, 256};
    tosac_value *in = input(x, "input", TOSAC_DTYPE_INT8, 4, s_in);

    int8_t w[4 * 3 * 3 * 3];
    uint32_t seed = 12345;
    for (size_t i = 0; i < sizeof w; i++) {
        seed = seed * 1664525u + 1013904223u; /* fixed LCG: the file is reproducible */
        w[i] = (int8_t)((int)((seed >> 24) % 255u) - 127);
    }
    const int32_t bias_v[4] = {100, -50, 0, 25};
    uint8_t bias[16], mult[16];
    for (int i = 0; i < 4; i++) put_le32(bias + 4 * i, (uint32_t)bias_v[i]);
    const uint32_t mult_v[4] = {1073741824u, 1276901417u, 1518500250u, 1805811301u};
    for (int i = 0; i < 4; i++) put_le32(mult + 4 * i, mult_v[i]);
    const int8_t shift[4] = {38, 38, 39, 39}, izp = -128, wzp = 0, ozp = -128;
    const uint8_t acc_zp[4] = {0, 0, 0, 0};

    tosac_value *wt = constant(x, "weight", TOSAC_DTYPE_INT8, 4, s_w, w, sizeof w);
    tosac_value *b = constant(x, "bias", TOSAC_DTYPE_INT32, 1, s_c, bias, sizeof bias);
    tosac_value *vizp = constant(x, "input_zp", TOSAC_DTYPE_INT8, 1, s_1, &izp, 1);
    tosac_value *vwzp = constant(x, "weight_zp", TOSAC_DTYPE_INT8, 1, s_1, &wzp, 1);
    tosac_value *acc = tensor(x, "conv_acc", TOSAC_DTYPE_INT32, 4, s_acc);
    tosac_value *conv_in[] = {in, wt, b, vizp, vwzp};
    tosac_node *conv = node(x, TOSAC_OP_CONV2D, 5, conv_in, acc);
    const int32_t pad[4] = {1, 1, 1, 1}, one2[2] = {1, 1};
    attr_ints(x, conv, TOSAC_ATTR_CONV2D_pad, pad, 4);
    attr_ints(x, conv, TOSAC_ATTR_CONV2D_stride, one2, 2);
    attr_ints(x, conv, TOSAC_ATTR_CONV2D_dilation, one2, 2);
    attr_int(x, conv, TOSAC_ATTR_CONV2D_local_bound, 0);
    attr_int(x, conv, TOSAC_ATTR_CONV2D_acc_type, TOSAC_DTYPE_INT32);
    location(x, conv, "conv_int8.py:12 (conv)");

    tosac_value *vm = constant(x, "rescale_multiplier", TOSAC_DTYPE_INT32, 1, s_c, mult, sizeof mult);
    tosac_value *vs = constant(x, "rescale_shift", TOSAC_DTYPE_INT8, 1, s_c, shift, sizeof shift);
    tosac_value *vrizp = constant(x, "rescale_input_zp", TOSAC_DTYPE_INT32, 1, s_1, acc_zp, 4);
    tosac_value *vrozp = constant(x, "rescale_output_zp", TOSAC_DTYPE_INT8, 1, s_1, &ozp, 1);
    tosac_value *q = tensor(x, "requantized", TOSAC_DTYPE_INT8, 4, s_acc);
    tosac_value *resc_in[] = {acc, vm, vs, vrizp, vrozp};
    tosac_node *resc = node(x, TOSAC_OP_RESCALE, 5, resc_in, q);
    attr_int(x, resc, TOSAC_ATTR_RESCALE_scale32, 1);
    attr_int(x, resc, TOSAC_ATTR_RESCALE_rounding_mode, TOSAC_ROUND_SINGLE);
    attr_int(x, resc, TOSAC_ATTR_RESCALE_per_channel, 1);
    attr_int(x, resc, TOSAC_ATTR_RESCALE_input_unsigned, 0);
    attr_int(x, resc, TOSAC_ATTR_RESCALE_output_unsigned, 0);

    tosac_value *relu = tensor(x, "relu", TOSAC_DTYPE_INT8, 4, s_acc);
    tosac_node *clamp = node(x, TOSAC_OP_CLAMP, 1, &q, relu);
    const int8_t lo = -128, hi = 127; /* ReLU: the output zero point is -128 */
    attr_bytes(x, clamp, TOSAC_ATTR_CLAMP_min_val, &lo, 1);
    attr_bytes(x, clamp, TOSAC_ATTR_CLAMP_max_val, &hi, 1);
    attr_int(x, clamp, TOSAC_ATTR_CLAMP_nan_mode, TOSAC_NAN_PROPAGATE);

    tosac_value *shape = NULL;
    if (x->ok && !(shape = tosac_block_add_const_shape(x->b, "flat_shape", s_flat, 2))) x->ok = false;
    tosac_value *out = tensor(x, "output", TOSAC_DTYPE_INT8, 2, s_flat);
    tosac_value *resh_in[] = {relu, shape};
    node(x, TOSAC_OP_RESHAPE, 2, resh_in, out);
    output(x, out);
    return x->g;
}

static tosac_graph *build_fp32_relu6(gen *x)
{
    const int64_t s[] = {2, 2};
    tosac_value *a = input(x, "a", TOSAC_DTYPE_FP32, 2, s);
    tosac_value *b = input(x, "b", TOSAC_DTYPE_FP32, 2, s);
    tosac_value *sum = tensor(x, "sum", TOSAC_DTYPE_FP32, 2, s);
    tosac_value *add_in[] = {a, b};
    node(x, TOSAC_OP_ADD, 2, add_in, sum);
    tosac_value *out = tensor(x, "out", TOSAC_DTYPE_FP32, 2, s);
    tosac_node *clamp = node(x, TOSAC_OP_CLAMP, 1, &sum, out);
    uint8_t lo[4], hi[4];
    put_f32(lo, 0.0f);
    put_f32(hi, 6.0f);
    attr_bytes(x, clamp, TOSAC_ATTR_CLAMP_min_val, lo, 4);
    attr_bytes(x, clamp, TOSAC_ATTR_CLAMP_max_val, hi, 4);
    attr_int(x, clamp, TOSAC_ATTR_CLAMP_nan_mode, TOSAC_NAN_PROPAGATE);
    output(x, out);
    return x->g;
}

static tosac_graph *build_bad_shape(gen *x)
{
    const int64_t s[] = {2, 3}, s_bad[] = {2, 4};
    tosac_value *a = input(x, "a", TOSAC_DTYPE_INT32, 2, s);
    tosac_value *b = input(x, "b", TOSAC_DTYPE_INT32, 2, s);
    tosac_value *out = tensor(x, "sum", TOSAC_DTYPE_INT32, 2, s_bad);
    tosac_value *in[] = {a, b};
    node(x, TOSAC_OP_ADD, 2, in, out);
    output(x, out);
    return x->g;
}

static tosac_graph *build_rank7(gen *x)
{
    const int64_t s[] = {1, 1, 1, 1, 1, 1, 2};
    tosac_value *a = input(x, "a", TOSAC_DTYPE_INT32, 7, s);
    tosac_value *b = input(x, "b", TOSAC_DTYPE_INT32, 7, s);
    tosac_value *out = tensor(x, "sum", TOSAC_DTYPE_INT32, 7, s);
    tosac_value *in[] = {a, b};
    node(x, TOSAC_OP_ADD, 2, in, out);
    output(x, out);
    return x->g;
}

/* One sub-graph block "name" in its own region: out = op(a, b) on INT32[2]. */
static void build_branch(gen *x, const char *name, tosac_op op)
{
    const int64_t s[] = {2};
    tosac_block *main_block = x->b;
    x->b = new_block(x, name, name);
    if (x->ok) {
        tosac_value *a = input(x, "a", TOSAC_DTYPE_INT32, 1, s);
        tosac_value *b = input(x, "b", TOSAC_DTYPE_INT32, 1, s);
        tosac_value *out = tensor(x, "result", TOSAC_DTYPE_INT32, 1, s);
        tosac_value *in[] = {a, b};
        node(x, op, 2, in, out);
        output(x, out);
    }
    x->b = main_block;
}

static tosac_graph *build_cond_if(gen *x)
{
    const int64_t s[] = {2};
    tosac_value *cond = input(x, "cond", TOSAC_DTYPE_BOOL, 0, NULL);
    tosac_value *a = input(x, "a", TOSAC_DTYPE_INT32, 1, s);
    tosac_value *b = input(x, "b", TOSAC_DTYPE_INT32, 1, s);
    tosac_value *out = tensor(x, "out", TOSAC_DTYPE_INT32, 1, s);
    tosac_value *in[] = {cond, a, b};
    tosac_node *n = node(x, TOSAC_OP_COND_IF, 3, in, out);
    attr_str(x, n, TOSAC_ATTR_COND_IF_then_graph, "then");
    attr_str(x, n, TOSAC_ATTR_COND_IF_else_graph, "else");
    output(x, out);
    build_branch(x, "then", TOSAC_OP_ADD);
    build_branch(x, "else", TOSAC_OP_SUB);
    return x->g;
}

static tosac_graph *build_odd_names(gen *x)
{
    const int64_t s[] = {4};
    tosac_value *in = input(x, "in \"quoted\" \\ back\tslash", TOSAC_DTYPE_INT8, 1, s);
    tosac_value *out = tensor(x, "out/caf\xc3\xa9\x01\n", TOSAC_DTYPE_INT8, 1, s);
    tosac_node *n = node(x, TOSAC_OP_IDENTITY, 1, &in, out);
    location(x, n, "line1\nline2 \xff bad byte, \xe2\x82\xac euro");
    output(x, out);
    return x->g;
}

static const struct {
    const char *name;
    tosac_graph *(*build)(gen *);
} k_examples[] = {
    {"conv_int8", build_conv_int8}, {"fp32_relu6", build_fp32_relu6}, {"bad_shape", build_bad_shape},
    {"rank7", build_rank7},         {"cond_if", build_cond_if},       {"odd_names", build_odd_names},
};
#define N_EXAMPLES (sizeof k_examples / sizeof k_examples[0])

static int write_example(const char *dir, size_t k)
{
    gen x;
    gen_init(&x);
    if (x.ok) k_examples[k].build(&x);
    if (!x.ok) {
        fprintf(stderr, "gen_example: building %s failed\n", k_examples[k].name);
        tosac_graph_destroy(x.g);
        return 1;
    }
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/%s.tosa", dir, k_examples[k].name);
    if (n < 0 || (size_t)n >= sizeof path) {
        fprintf(stderr, "gen_example: output path too long\n");
        tosac_graph_destroy(x.g);
        return 1;
    }
    tosac_diag *d = tosac_diag_create();
    tosac_status s = tosac_tosa_write_file(x.g, path, d);
    for (size_t i = 0; i < tosac_diag_count(d); i++)
        fprintf(stderr, "gen_example: %s\n", tosac_diag_message(d, i, NULL));
    tosac_diag_destroy(d);
    tosac_graph_destroy(x.g);
    if (s != TOSAC_OK) {
        fprintf(stderr, "gen_example: writing %s failed: %s\n", path, tosac_status_str(s));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: gen_example OUTDIR [NAME...]\nnames:");
        for (size_t k = 0; k < N_EXAMPLES; k++) fprintf(stderr, " %s", k_examples[k].name);
        fprintf(stderr, "\n");
        return 1;
    }
    int rc = 0;
    if (argc == 2) {
        for (size_t k = 0; k < N_EXAMPLES; k++) rc |= write_example(argv[1], k);
        return rc;
    }
    for (int i = 2; i < argc; i++) {
        size_t k = 0;
        while (k < N_EXAMPLES && strcmp(k_examples[k].name, argv[i]) != 0) k++;
        if (k == N_EXAMPLES) {
            fprintf(stderr, "gen_example: unknown example '%s'\n", argv[i]);
            rc = 1;
            continue;
        }
        rc |= write_example(argv[1], k);
    }
    return rc;
}
