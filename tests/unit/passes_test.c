/*
 * Compiler passes on hand-built TOSA graphs: each test builds the same graph twice, runs passes on
 * one copy, checks the structure the pass promises (operator counts) and that both copies compute
 * the same outputs on seeded random inputs through the runtime (bit for bit for pure data
 * movement, within float rounding where a pass re-associates arithmetic). The graphs' own meaning
 * is checked against onnxruntime by the model zoo test; here only preservation is at stake.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness/test.h"
#include "ir/graph.h"
#include "ir/rewrite.h"
#include "passes/pass.h"
#include "tosac/runtime.h"
#include "tosac/validate.h"

typedef tosac_status (*pass_fn)(pass_ctx *);

static tosac_block *new_block(tosac_graph **g)
{
    *g = tosac_graph_create();
    return tosac_region_add_block(tosac_graph_add_region(*g, "main"), "main");
}

static tosac_value *input(tosac_block *b, const char *name, int rank, const int64_t *shape)
{
    tosac_value *v = tosac_block_add_tensor(b, name, TOSAC_DTYPE_FP32, rank, shape);
    tosac_block_add_input(b, v);
    return v;
}

static uint32_t seed = 12345;
static float frand(void)
{
    seed = seed * 1664525u + 1013904223u;
    return (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static tosac_value *const_f32(tosac_block *b, int rank, const int64_t *shape, float base)
{
    float data[4096];
    int64_t n = 1;
    for (int k = 0; k < rank; k++) n *= shape[k];
    for (int64_t i = 0; i < n; i++) data[i] = base + 0.25f * (float)(i % 7) - 0.5f * (float)(i % 3);
    return ir_new_const(b, "c", TOSAC_DTYPE_FP32, rank, shape, data, (size_t)n * 4);
}

static tosac_value *op1(tosac_block *b, tosac_op op, tosac_value *x, int rank, const int64_t *shape)
{
    tosac_value *y = ir_new_tensor(b, "t", x->dtype, rank, shape);
    ir_add_op(b, op, 1, &x, y, NULL);
    return y;
}

static tosac_value *transpose(tosac_block *b, tosac_value *x, const int32_t *perm)
{
    int64_t shape[8];
    for (int k = 0; k < x->rank; k++) shape[k] = x->shape[perm[k]];
    tosac_value *y = ir_new_tensor(b, "t", x->dtype, x->rank, shape);
    tosac_node *n = ir_add_op(b, TOSAC_OP_TRANSPOSE, 1, &x, y, NULL);
    tosac_node_set_ints(n, TOSAC_ATTR_TRANSPOSE_perms, perm, (uint32_t)x->rank);
    return y;
}

static tosac_value *binary(tosac_block *b, tosac_op op, tosac_value *x, tosac_value *y)
{
    int64_t shape[8];
    for (int k = 0; k < x->rank; k++) shape[k] = x->shape[k] > y->shape[k] ? x->shape[k] : y->shape[k];
    tosac_value *out = ir_new_tensor(b, "t", x->dtype, x->rank, shape);
    if (op == TOSAC_OP_MUL) {
        int64_t one = 1;
        int8_t zero = 0;
        tosac_value *shift = ir_new_const(b, "shift", TOSAC_DTYPE_INT8, 1, &one, &zero, 1);
        tosac_value *in[3] = {x, y, shift};
        ir_add_op(b, op, 3, in, out, NULL);
    } else {
        tosac_value *in[2] = {x, y};
        ir_add_op(b, op, 2, in, out, NULL);
    }
    return out;
}

static tosac_value *clamp(tosac_block *b, tosac_value *x)
{
    tosac_value *y = op1(b, TOSAC_OP_CLAMP, x, x->rank, x->shape);
    tosac_node *n = y->producer;
    float lo = -0.5f, hi = 0.75f;
    tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_min_val, &lo, 4);
    tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_max_val, &hi, 4);
    tosac_node_set_int(n, TOSAC_ATTR_CLAMP_nan_mode, 1);
    return y;
}

static uint32_t count_op(const tosac_graph *g, tosac_op op) { return pass_count_op(g->regions[0]->blocks[0], op); }

static tosac_compile_report report;
static tosac_compile_opts opts;

/* Runs the given passes (each followed by the manager's compaction and verification). */
static bool run_passes(tosac_graph *g, const pass_fn *fns, size_t n)
{
    tosac_diag *d = tosac_diag_create();
    opts.verify_each = true;
    pass_ctx pc = {.g = g, .b = g->regions[0]->blocks[0], .d = d, .o = &opts, .r = &report};
    bool ok = ir_compact(pc.b) == TOSAC_OK;
    for (size_t k = 0; k < n && ok; k++) ok = fns[k](&pc) == TOSAC_OK && pass_step_done(&pc, "test", tosac_now_ms()) == TOSAC_OK;
    for (size_t k = 0; k < tosac_diag_count(d); k++) fprintf(stderr, "  diag: %s\n", tosac_diag_message(d, k, NULL));
    tosac_diag_destroy(d);
    return ok;
}

/* Output 0 of g on seeded inputs (all inputs FP32); caller frees. NULL on failure. */
static float *evaluate(const tosac_graph *g, int64_t *n_out)
{
    tosac_program_opts po = tosac_program_opts_default();
    tosac_program *p = NULL;
    tosac_diag *d = tosac_diag_create();
    float *out = NULL;
    if (tosac_program_create(g, &po, &p, d) == TOSAC_OK) {
        seed = 777;
        for (uint32_t i = 0; i < tosac_program_input_count(p); i++) {
            tosac_tensor_info info;
            tosac_program_input_info(p, i, &info);
            float *x = tosac_program_input_ptr(p, i);
            for (int64_t k = 0; k < info.nelem; k++) x[k] = frand();
        }
        if (tosac_program_invoke(p, d) == TOSAC_OK) {
            tosac_tensor_info info;
            tosac_program_output_info(p, 0, &info);
            out = malloc((size_t)info.nelem * 4);
            memcpy(out, tosac_program_output_ptr(p, 0), (size_t)info.nelem * 4);
            *n_out = info.nelem;
        }
    }
    for (size_t k = 0; k < tosac_diag_count(d); k++) fprintf(stderr, "  diag: %s\n", tosac_diag_message(d, k, NULL));
    tosac_program_destroy(p);
    tosac_diag_destroy(d);
    return out;
}

/* max |a-b| / max |b| between the outputs of two graphs; -1 when either fails or shapes differ. */
static double compare(const tosac_graph *a, const tosac_graph *b)
{
    int64_t na = 0, nb = 0;
    float *x = evaluate(a, &na), *y = evaluate(b, &nb);
    double worst = -1;
    if (x && y && na == nb) {
        double m = 1e-30, e = 0;
        for (int64_t i = 0; i < na; i++) {
            m = fmax(m, fabs(y[i]));
            e = fmax(e, fabs((double)x[i] - y[i]));
        }
        worst = e / m;
    }
    free(x);
    free(y);
    return worst;
}

static const int32_t to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};

/* NCHW input -> [to NHWC -> CLAMP -> back] -> ADD per-channel constant -> [to NHWC -> EXP -> back] */
static tosac_graph *build_chain(void)
{
    tosac_graph *g;
    tosac_block *b = new_block(&g);
    int64_t xs[4] = {1, 3, 4, 5}, cs[4] = {1, 3, 1, 1};
    tosac_value *x = input(b, "x", 4, xs);
    tosac_value *y = transpose(b, clamp(b, transpose(b, x, to_nhwc)), to_nchw);
    y = binary(b, TOSAC_OP_ADD, y, const_f32(b, 4, cs, 0.1f));
    tosac_value *t = transpose(b, y, to_nhwc);
    y = transpose(b, op1(b, TOSAC_OP_EXP, t, 4, t->shape), to_nchw);
    tosac_block_add_output(b, y);
    return g;
}

static void test_layout_cancels_pairs(void)
{
    tosac_graph *ref = build_chain(), *g = build_chain();
    EXPECT_EQ_I(count_op(g, TOSAC_OP_TRANSPOSE), 4);
    const pass_fn fns[] = {pass_layout, pass_fold_constants, pass_dce};
    EXPECT(run_passes(g, fns, 3));
    /* the constant is re-laid out by a folded TRANSPOSE; nothing is left at run time */
    EXPECT_EQ_I(count_op(g, TOSAC_OP_TRANSPOSE), 0);
    EXPECT(compare(g, ref) == 0.0);
    tosac_graph_destroy(ref);
    tosac_graph_destroy(g);
}

/* to NHWC -> CONCAT(axis 3) with itself -> REDUCE_SUM(axis 1) -> PAD -> SLICE -> MUL with a
   constant -> back to NCHW: every operator has layout-dependent arguments to permute. */
static tosac_graph *build_structured(void)
{
    tosac_graph *g;
    tosac_block *b = new_block(&g);
    int64_t xs[4] = {1, 2, 3, 4};
    tosac_value *x = input(b, "x", 4, xs);
    tosac_value *t = transpose(b, x, to_nhwc); /* [1,3,4,2] */
    int64_t cs[4] = {1, 3, 4, 4};
    tosac_value *cat = ir_new_tensor(b, "cat", TOSAC_DTYPE_FP32, 4, cs);
    tosac_value *cin[2] = {t, t};
    tosac_node *n = tosac_block_add_node(b, TOSAC_OP_CONCAT, 2, cin, 1, &cat);
    tosac_node_set_int(n, TOSAC_ATTR_CONCAT_axis, 3);
    int64_t rs[4] = {1, 1, 4, 4};
    tosac_value *red = op1(b, TOSAC_OP_REDUCE_SUM, cat, 4, rs);
    tosac_node_set_int(red->producer, TOSAC_ATTR_REDUCE_SUM_axis, 1);
    int64_t pads[8] = {0, 0, 1, 2, 0, 1, 2, 0}, ps[4] = {1, 4, 5, 6};
    float zero = 0.0f;
    int64_t one = 1;
    tosac_value *pin[3] = {red, ir_new_shape(b, pads, 8), ir_new_const(b, "pc", TOSAC_DTYPE_FP32, 1, &one, &zero, 4)};
    tosac_value *pad = ir_new_tensor(b, "pad", TOSAC_DTYPE_FP32, 4, ps);
    tosac_block_add_node(b, TOSAC_OP_PAD, 3, pin, 1, &pad);
    int64_t start[4] = {0, 1, 0, 2}, size[4] = {1, 3, 4, 3};
    tosac_value *sin[3] = {pad, ir_new_shape(b, start, 4), ir_new_shape(b, size, 4)};
    tosac_value *sl = ir_new_tensor(b, "slice", TOSAC_DTYPE_FP32, 4, size);
    tosac_block_add_node(b, TOSAC_OP_SLICE, 3, sin, 1, &sl);
    int64_t ms[4] = {1, 1, 1, 3};
    tosac_value *y = binary(b, TOSAC_OP_MUL, sl, const_f32(b, 4, ms, 0.5f));
    tosac_block_add_output(b, transpose(b, y, to_nchw));
    tosac_graph_link(g);
    return g;
}

static void test_layout_permutes_arguments(void)
{
    tosac_graph *ref = build_structured(), *g = build_structured();
    const pass_fn fns[] = {pass_layout, pass_fold_constants, pass_dce};
    EXPECT(run_passes(g, fns, 3));
    EXPECT_EQ_I(count_op(g, TOSAC_OP_TRANSPOSE), 0);
    EXPECT_EQ_I(count_op(g, TOSAC_OP_CONCAT), 1);
    EXPECT(compare(g, ref) == 0.0);
    tosac_graph_destroy(ref);
    tosac_graph_destroy(g);
}

/* A transpose that only moves size-1 dimensions (global pool output [1,1,1,C] back to NCHW)
   becomes a RESHAPE and merges with the flatten RESHAPE after it. */
static tosac_graph *build_flatten(void)
{
    tosac_graph *g;
    tosac_block *b = new_block(&g);
    int64_t xs[4] = {1, 1, 1, 6}, fs[2] = {1, 6};
    tosac_value *t = transpose(b, input(b, "x", 4, xs), to_nchw);
    tosac_value *in[2] = {t, ir_new_shape(b, fs, 2)};
    tosac_value *f = ir_new_tensor(b, "flat", TOSAC_DTYPE_FP32, 2, fs);
    tosac_block_add_node(b, TOSAC_OP_RESHAPE, 2, in, 1, &f);
    tosac_block_add_output(b, f);
    tosac_graph_link(g);
    return g;
}

static void test_layout_transpose_as_reshape(void)
{
    tosac_graph *ref = build_flatten(), *g = build_flatten();
    const pass_fn fns[] = {pass_layout, pass_dce};
    EXPECT(run_passes(g, fns, 2));
    EXPECT_EQ_I(count_op(g, TOSAC_OP_TRANSPOSE), 0);
    EXPECT_EQ_I(count_op(g, TOSAC_OP_RESHAPE), 1);
    EXPECT(compare(g, ref) == 0.0);
    tosac_graph_destroy(ref);
    tosac_graph_destroy(g);
}

/* NHWC [1,4,4,6] -> to NCHW -> RESHAPE [1,6,16] (flatten(2)) -> TRANSPOSE(0,2,1) -> [1,16,6]:
   the ViT patch embedding. merge_hc instead merges C and H of the NCHW view ([1,24,4]), which are
   not adjacent in NHWC: that reshape cannot absorb the transpose. */
static tosac_graph *build_patch_embed(bool merge_hc)
{
    tosac_graph *g;
    tosac_block *b = new_block(&g);
    int64_t xs[4] = {1, 4, 4, 6}, fs[3] = {1, 6, 16}, hs[3] = {1, 24, 4};
    tosac_value *t = transpose(b, input(b, "x", 4, xs), to_nchw);
    const int64_t *shape = merge_hc ? hs : fs;
    tosac_value *in[2] = {t, ir_new_shape(b, shape, 3)};
    tosac_value *f = ir_new_tensor(b, "flat", TOSAC_DTYPE_FP32, 3, shape);
    tosac_block_add_node(b, TOSAC_OP_RESHAPE, 2, in, 1, &f);
    const int32_t swap[3] = {0, 2, 1};
    tosac_block_add_output(b, transpose(b, f, swap));
    tosac_graph_link(g);
    return g;
}

static void test_layout_sinks_through_reshape(void)
{
    for (int hc = 0; hc < 2; hc++) {
        tosac_graph *ref = build_patch_embed(hc), *g = build_patch_embed(hc);
        const pass_fn fns[] = {pass_layout, pass_dce};
        EXPECT(run_passes(g, fns, 2));
        if (!hc) {
            EXPECT_EQ_I(count_op(g, TOSAC_OP_TRANSPOSE), 0);
            EXPECT_EQ_I(count_op(g, TOSAC_OP_RESHAPE), 1);
        } else {
            EXPECT_EQ_I(count_op(g, TOSAC_OP_TRANSPOSE), 2);
        }
        EXPECT(compare(g, ref) == 0.0);
        tosac_graph_destroy(ref);
        tosac_graph_destroy(g);
    }
}

/* conv output (NHWC [1,3,3,8]) -> to NCHW -> RESHAPE [1,2,4,3,3] -> TRANSPOSE(0,2,1,3,4) ->
   RESHAPE [1,8,3,3] -> to NHWC (the next conv's input): ShuffleNet's channel shuffle. */
static tosac_graph *build_shuffle(void)
{
    tosac_graph *g;
    tosac_block *b = new_block(&g);
    int64_t xs[4] = {1, 3, 3, 8}, ss[5] = {1, 2, 4, 3, 3}, cs[4] = {1, 8, 3, 3};
    tosac_value *t = transpose(b, input(b, "x", 4, xs), to_nchw);
    tosac_value *in[2] = {t, ir_new_shape(b, ss, 5)};
    tosac_value *sp = ir_new_tensor(b, "split", TOSAC_DTYPE_FP32, 5, ss);
    tosac_block_add_node(b, TOSAC_OP_RESHAPE, 2, in, 1, &sp);
    const int32_t sw[5] = {0, 2, 1, 3, 4};
    tosac_value *st = transpose(b, sp, sw);
    tosac_value *in2[2] = {st, ir_new_shape(b, cs, 4)};
    tosac_value *m = ir_new_tensor(b, "merged", TOSAC_DTYPE_FP32, 4, cs);
    tosac_block_add_node(b, TOSAC_OP_RESHAPE, 2, in2, 1, &m);
    tosac_block_add_output(b, transpose(b, m, to_nhwc));
    tosac_graph_link(g);
    return g;
}

static void test_channel_shuffle(void)
{
    tosac_graph *ref = build_shuffle(), *g = build_shuffle();
    const pass_fn fns[] = {pass_channel_shuffle, pass_layout, pass_dce};
    EXPECT(run_passes(g, fns, 3));
    /* one rank-4 transpose of the two channel factors is all that is left */
    EXPECT_EQ_I(count_op(g, TOSAC_OP_TRANSPOSE), 1);
    const tosac_block *b = g->regions[0]->blocks[0];
    for (uint32_t i = 0; i < b->n_nodes; i++)
        if (b->nodes[i]->op == TOSAC_OP_TRANSPOSE) {
            const int32_t *p = b->nodes[i]->attr[TOSAC_ATTR_TRANSPOSE_perms].data;
            EXPECT(b->nodes[i]->outputs[0]->rank == 4 && p[0] == 0 && p[1] == 1 && p[2] == 3 && p[3] == 2);
        }
    EXPECT(compare(g, ref) == 0.0);
    tosac_graph_destroy(ref);
    tosac_graph_destroy(g);
}

/* x -> SLICE (crop) -> to NHWC -> EXP: the transpose moves up to read the graph input. */
static tosac_graph *build_crop(void)
{
    tosac_graph *g;
    tosac_block *b = new_block(&g);
    int64_t xs[4] = {1, 3, 6, 6}, start[4] = {0, 0, 0, 0}, size[4] = {1, 3, 5, 5};
    tosac_value *x = input(b, "x", 4, xs);
    tosac_value *in[3] = {x, ir_new_shape(b, start, 4), ir_new_shape(b, size, 4)};
    tosac_value *sl = ir_new_tensor(b, "crop", TOSAC_DTYPE_FP32, 4, size);
    tosac_block_add_node(b, TOSAC_OP_SLICE, 3, in, 1, &sl);
    tosac_value *t = transpose(b, sl, to_nhwc);
    tosac_block_add_output(b, op1(b, TOSAC_OP_EXP, t, 4, t->shape));
    tosac_graph_link(g);
    return g;
}

static void test_layout_hoists_to_input(void)
{
    tosac_graph *ref = build_crop(), *g = build_crop();
    const pass_fn fns[] = {pass_layout, pass_dce};
    EXPECT(run_passes(g, fns, 2));
    const tosac_block *b = g->regions[0]->blocks[0];
    EXPECT_EQ_I(count_op(g, TOSAC_OP_TRANSPOSE), 1);
    uint32_t i = 0;
    while (i < b->n_nodes && b->nodes[i]->op == TOSAC_OP_CONST_SHAPE) i++;
    EXPECT(i < b->n_nodes && b->nodes[i]->op == TOSAC_OP_TRANSPOSE && b->nodes[i]->inputs[0] == b->inputs[0]);
    EXPECT(compare(g, ref) == 0.0);
    tosac_graph_destroy(ref);
    tosac_graph_destroy(g);
}

static void test_io_layout_nhwc(void)
{
    tosac_graph *g = build_chain();
    opts.io_nhwc = true;
    const pass_fn fns[] = {pass_io_layout, pass_layout, pass_fold_constants, pass_dce};
    EXPECT(run_passes(g, fns, 4));
    opts.io_nhwc = false;
    tosac_block *b = g->regions[0]->blocks[0];
    EXPECT_EQ_I(count_op(g, TOSAC_OP_TRANSPOSE), 0);
    EXPECT_STREQ(b->inputs[0]->name, "x");
    EXPECT(b->inputs[0]->shape[1] == 4 && b->inputs[0]->shape[3] == 3);
    EXPECT(b->outputs[0]->shape[1] == 4 && b->outputs[0]->shape[3] == 3);
    tosac_graph_destroy(g);
}

static void test_fold_constants_transpose(void)
{
    tosac_graph *g;
    tosac_block *b = new_block(&g);
    int64_t cs[2] = {2, 3};
    const float v[6] = {1, 2, 3, 4, 5, 6};
    tosac_value *c = ir_new_const(b, "c", TOSAC_DTYPE_FP32, 2, cs, v, sizeof v);
    const int32_t perm[2] = {1, 0};
    tosac_value *t = transpose(b, c, perm);
    tosac_value *x = input(b, "x", 2, t->shape);
    tosac_block_add_output(b, binary(b, TOSAC_OP_ADD, x, t));
    tosac_graph_link(g);
    const pass_fn fns[] = {pass_fold_constants, pass_dce};
    EXPECT(run_passes(g, fns, 2));
    EXPECT_EQ_I(count_op(g, TOSAC_OP_TRANSPOSE), 0);
    EXPECT(ir_is_const(t) && t->data_len == 24);
    const float want[6] = {1, 4, 2, 5, 3, 6}; /* the 3x2 transpose, written out */
    EXPECT(t->data && !memcmp(t->data, want, 24));
    tosac_graph_destroy(g);
}

static void test_dedupe_constants(void)
{
    tosac_graph *g;
    tosac_block *b = new_block(&g);
    int64_t s[2] = {2, 3};
    tosac_value *x = input(b, "x", 2, s);
    tosac_value *c1 = const_f32(b, 2, s, 1.0f), *c2 = const_f32(b, 2, s, 1.0f), *c3 = const_f32(b, 2, s, 2.0f);
    tosac_value *y = binary(b, TOSAC_OP_ADD, binary(b, TOSAC_OP_ADD, binary(b, TOSAC_OP_ADD, x, c1), c2), c3);
    tosac_block_add_output(b, y);
    tosac_graph_link(g);
    memset(&report, 0, sizeof report);
    const pass_fn fns[] = {pass_dedupe_constants, pass_dce};
    EXPECT(run_passes(g, fns, 2));
    EXPECT_EQ_I(count_op(g, TOSAC_OP_CONST), 2);
    EXPECT_EQ_I(report.consts_merged, 1);
    EXPECT(report.dedup_bytes_saved == 24);
    tosac_graph_destroy(g);
}

static void test_output_fanout(void)
{
    tosac_graph *g;
    tosac_block *b = new_block(&g);
    int64_t s[1] = {4};
    tosac_value *y = op1(b, TOSAC_OP_EXP, input(b, "x", 1, s), 1, s);
    ir_rename(b, y, "y");
    tosac_value *z = op1(b, TOSAC_OP_ABS, y, 1, s);
    tosac_block_add_output(b, y);
    tosac_block_add_output(b, y);
    tosac_block_add_output(b, z);
    tosac_graph_link(g);
    memset(&report, 0, sizeof report);
    const pass_fn fns[] = {pass_output_fanout};
    EXPECT(run_passes(g, fns, 1));
    /* both slots of y get their own IDENTITY; z, a distinct tensor, none */
    EXPECT_EQ_I(count_op(g, TOSAC_OP_IDENTITY), 2);
    EXPECT_EQ_I(report.identities_added, 2);
    EXPECT(b->outputs[0] != b->outputs[1] && b->outputs[2] == z);
    EXPECT_STREQ(b->outputs[0]->name, "y");
    tosac_graph_destroy(g);
}

/* NHWC CONV2D -> MUL [1,1,1,OC] -> ADD [1,1,1,OC] -> SUB [1,1,1,1], and DEPTHWISE -> MUL. */
static tosac_graph *build_conv_bn(bool depthwise)
{
    tosac_graph *g;
    tosac_block *b = new_block(&g);
    int64_t xs[4] = {1, 5, 5, 3};
    tosac_value *x = input(b, "x", 4, xs);
    int64_t oc = depthwise ? 6 : 4;
    int64_t ws_conv[4] = {4, 3, 3, 3}, ws_dw[4] = {3, 3, 3, 2}, os[4] = {1, 3, 3, oc}, one = 1;
    tosac_value *w = const_f32(b, 4, depthwise ? ws_dw : ws_conv, 0.2f);
    tosac_value *bias = const_f32(b, 1, &oc, -0.3f);
    float zero = 0;
    tosac_value *zp = ir_new_const(b, "zp", TOSAC_DTYPE_FP32, 1, &one, &zero, 4);
    tosac_value *in[5] = {x, w, bias, zp, zp};
    tosac_value *y = ir_new_tensor(b, "conv", TOSAC_DTYPE_FP32, 4, os);
    tosac_node *n = ir_add_op(b, depthwise ? TOSAC_OP_DEPTHWISE_CONV2D : TOSAC_OP_CONV2D, 5, in, y, NULL);
    const int32_t pad[4] = {0, 0, 0, 0}, st[2] = {1, 1}, dil[2] = {1, 1};
    unsigned base = depthwise ? TOSAC_ATTR_DEPTHWISE_CONV2D_pad : TOSAC_ATTR_CONV2D_pad;
    tosac_node_set_ints(n, base, pad, 4);
    tosac_node_set_ints(n, base + 1, st, 2);
    tosac_node_set_ints(n, base + 2, dil, 2);
    tosac_node_set_int(n, depthwise ? TOSAC_ATTR_DEPTHWISE_CONV2D_acc_type : TOSAC_ATTR_CONV2D_acc_type,
                       TOSAC_DTYPE_FP32);
    int64_t cs[4] = {1, 1, 1, oc}, ones[4] = {1, 1, 1, 1};
    y = binary(b, TOSAC_OP_MUL, y, const_f32(b, 4, cs, 1.5f));
    if (!depthwise) {
        y = binary(b, TOSAC_OP_ADD, const_f32(b, 4, cs, 0.25f), y);
        y = binary(b, TOSAC_OP_SUB, y, const_f32(b, 4, ones, 0.125f));
    }
    tosac_block_add_output(b, op1(b, TOSAC_OP_TANH, y, 4, os));
    tosac_graph_link(g);
    return g;
}

static void test_fold_conv_affine(void)
{
    for (int dw = 0; dw < 2; dw++) {
        tosac_graph *ref = build_conv_bn(dw), *g = build_conv_bn(dw);
        const pass_fn fns[] = {pass_fold_conv_affine, pass_dce};
        EXPECT(run_passes(g, fns, 2));
        EXPECT_EQ_I(count_op(g, TOSAC_OP_MUL) + count_op(g, TOSAC_OP_ADD) + count_op(g, TOSAC_OP_SUB), 0);
        double e = compare(g, ref);
        EXPECT(e >= 0 && e < 1e-6);
        tosac_graph_destroy(ref);
        tosac_graph_destroy(g);
    }
}

/* The folded weights take over the convolution's own weight bytes, scaled in place; weights that
   another operator reads, or whose bytes another constant shares, are left as they were. */
static void test_fold_conv_affine_in_place(void)
{
    for (int share = 0; share < 3; share++) { /* 0 sole owner, 1 a second reader, 2 shared bytes */
        tosac_graph *ref = build_conv_bn(false), *g = build_conv_bn(false);
        tosac_block *b = g->regions[0]->blocks[0];
        tosac_value *w = NULL;
        for (uint32_t i = 0; i < b->n_nodes; i++)
            if (b->nodes[i]->op == TOSAC_OP_CONV2D) w = b->nodes[i]->inputs[1];
        const uint8_t *bytes = w->data;
        size_t len = w->data_len;
        uint8_t *before = malloc(len);
        memcpy(before, bytes, len);
        tosac_value *other = share == 1 ? w
                             : share == 2 ? tosac_block_add_const_adopt(b, "alias", w->dtype, w->rank, w->shape, bytes, len)
                                          : NULL;
        if (other) tosac_block_add_output(b, op1(b, TOSAC_OP_ABS, other, other->rank, other->shape));
        const pass_fn fns[] = {pass_fold_conv_affine, pass_dce};
        EXPECT(run_passes(g, fns, 2));
        EXPECT_EQ_I(count_op(g, TOSAC_OP_MUL) + count_op(g, TOSAC_OP_ADD) + count_op(g, TOSAC_OP_SUB), 0);
        double e = compare(g, ref);
        EXPECT(e >= 0 && e < 1e-6);
        const tosac_value *nw = NULL;
        for (uint32_t i = 0; i < b->n_nodes; i++)
            if (b->nodes[i]->op == TOSAC_OP_CONV2D) nw = b->nodes[i]->inputs[1];
        EXPECT(nw && (nw->data == bytes) == (share == 0));
        EXPECT((memcmp(before, bytes, len) == 0) == (share != 0));
        free(before);
        tosac_graph_destroy(ref);
        tosac_graph_destroy(g);
    }
}

/* MATMUL [1,2,4] x const [1,4,3] -> RESHAPE [2,3] -> ADD bias [1,3] -> MUL [1,3] -> SUB [1,1] (a
   Gemm and an inference BatchNormalization1d); with_bn false: the Gemm alone. */
static tosac_graph *build_gemm_bn(bool with_bn)
{
    tosac_graph *g;
    tosac_block *b = new_block(&g);
    int64_t xs[3] = {1, 2, 4}, ws[3] = {1, 4, 3}, ys[3] = {1, 2, 3}, rs[2] = {2, 3}, cs[2] = {1, 3}, ones[2] = {1, 1}, one = 1;
    tosac_value *x = input(b, "x", 3, xs);
    float zero = 0;
    tosac_value *zp = ir_new_const(b, "zp", TOSAC_DTYPE_FP32, 1, &one, &zero, 4);
    tosac_value *in[4] = {x, const_f32(b, 3, ws, 0.3f), zp, zp};
    tosac_value *y = ir_new_tensor(b, "mm", TOSAC_DTYPE_FP32, 3, ys);
    ir_add_op(b, TOSAC_OP_MATMUL, 4, in, y, NULL);
    tosac_value *r = ir_new_tensor(b, "r", TOSAC_DTYPE_FP32, 2, rs), *rin[2] = {y, ir_new_shape(b, rs, 2)};
    ir_add_op(b, TOSAC_OP_RESHAPE, 2, rin, r, NULL);
    r = binary(b, TOSAC_OP_ADD, r, const_f32(b, 2, cs, -0.2f));
    if (with_bn) r = binary(b, TOSAC_OP_SUB, binary(b, TOSAC_OP_MUL, r, const_f32(b, 2, cs, 1.25f)), const_f32(b, 2, ones, 0.5f));
    tosac_block_add_output(b, op1(b, TOSAC_OP_TANH, r, 2, rs));
    tosac_graph_link(g);
    return g;
}

static void test_fold_gemm_bn(void)
{
    tosac_graph *ref = build_gemm_bn(true), *g = build_gemm_bn(true);
    const pass_fn fns[] = {pass_fold_conv_affine, pass_dce};
    EXPECT(run_passes(g, fns, 2));
    EXPECT_EQ_I(count_op(g, TOSAC_OP_MUL) + count_op(g, TOSAC_OP_SUB), 0);
    EXPECT_EQ_I(count_op(g, TOSAC_OP_ADD), 1);
    EXPECT_EQ_I(count_op(g, TOSAC_OP_MATMUL), 1);
    double e = compare(g, ref);
    EXPECT(e >= 0 && e < 1e-6);
    tosac_graph_destroy(ref);
    tosac_graph_destroy(g);
    /* the Gemm's bias alone is left as it is */
    g = build_gemm_bn(false);
    EXPECT(run_passes(g, fns, 2));
    EXPECT_EQ_I(count_op(g, TOSAC_OP_ADD), 1);
    const tosac_block *b = g->regions[0]->blocks[0];
    for (uint32_t i = 0; i < b->n_nodes; i++)
        if (b->nodes[i]->op == TOSAC_OP_MATMUL) EXPECT(strncmp(b->nodes[i]->inputs[1]->name, "folded", 6) != 0);
    tosac_graph_destroy(g);
}

int main(void)
{
    RUN(test_layout_cancels_pairs);
    RUN(test_layout_permutes_arguments);
    RUN(test_layout_transpose_as_reshape);
    RUN(test_layout_sinks_through_reshape);
    RUN(test_channel_shuffle);
    RUN(test_layout_hoists_to_input);
    RUN(test_io_layout_nhwc);
    RUN(test_fold_constants_transpose);
    RUN(test_dedupe_constants);
    RUN(test_output_fanout);
    RUN(test_fold_conv_affine);
    RUN(test_fold_conv_affine_in_place);
    RUN(test_fold_gemm_bn);
    return test_summary();
}
