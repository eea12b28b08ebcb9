/*
 * Targets and the Ethos-U rules (src/target/): every rule is tripped by a small graph built here,
 * which then runs on the CPU with that rule named, and the same graph within the limit stays on
 * the NPU. Every artifact made is validated (PRO-INT 8K NPU segments that pass every rule), and a
 * partitioned graph runs bit-identically to the unpartitioned one. The limits come from
 * /work/shared/ETHOS_U.md, not from the code under test.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/test.h"
#include "ir/graph.h"
#include "tosac/runtime.h"
#include "tosac/target.h"
#include "tosac/validate.h"

/* ---- a tiny graph builder ------------------------------------------------------------------- */

typedef struct gb {
    tosac_graph *g;
    tosac_block *b;
    int n;
} gb;

static gb gb_new(void)
{
    gb g;
    g.g = tosac_graph_create();
    g.b = tosac_region_add_block(tosac_graph_add_region(g.g, "main"), "main");
    g.n = 0;
    return g;
}

static const char *fresh(gb *g, const char *prefix)
{
    static char buf[16][32];
    static int slot;
    char *s = buf[slot++ % 16];
    snprintf(s, 32, "%s%d", prefix, g->n++);
    return s;
}

static int64_t nel(int rank, const int64_t *sh)
{
    int64_t n = 1;
    for (int k = 0; k < rank; k++) n *= sh[k];
    return n;
}

static tosac_value *tensor(gb *g, tosac_dtype t, int rank, const int64_t *sh)
{
    return tosac_block_add_tensor(g->b, fresh(g, "t"), t, rank, sh);
}

static tosac_value *input(gb *g, tosac_dtype t, int rank, const int64_t *sh)
{
    tosac_value *v = tensor(g, t, rank, sh);
    tosac_block_add_input(g->b, v);
    return v;
}

/* A constant of `rank`/`sh` filled with `fill` (little-endian in the type's width). */
static tosac_value *cst(gb *g, tosac_dtype t, int rank, const int64_t *sh, int64_t fill)
{
    int64_t n = nel(rank, sh);
    unsigned w = tosac_dtype_bits(t) / 8;
    uint8_t *bytes = malloc((size_t)(n * w) + 1);
    for (int64_t k = 0; k < n; k++)
        for (unsigned j = 0; j < w; j++) bytes[k * w + j] = (uint8_t)((uint64_t)fill >> (8 * j));
    tosac_value *v = tosac_block_add_const(g->b, fresh(g, "c"), t, rank, sh, bytes, (size_t)(n * w));
    free(bytes);
    return v;
}

static tosac_value *scalar(gb *g, tosac_dtype t, int64_t v)
{
    const int64_t one[1] = {1};
    return cst(g, t, 1, one, v);
}

static tosac_value *shape(gb *g, int n, const int64_t *vals)
{
    return tosac_block_add_const_shape(g->b, fresh(g, "s"), vals, (uint32_t)n);
}

static tosac_node *op(gb *g, tosac_op o, int n_in, tosac_value **in, tosac_value *out)
{
    return tosac_block_add_node(g->b, o, (uint32_t)n_in, in, 1, &out);
}

/* RESCALE x -> `to` by 1/2 (per tensor), zero points 0, the input unsigned when asked. */
static tosac_value *rescale(gb *g, tosac_value *x, tosac_dtype to, bool in_unsigned)
{
    bool s32 = x->dtype != TOSAC_DTYPE_INT48;
    tosac_value *y = tensor(g, to, x->rank, x->shape);
    tosac_value *in[5] = {x, scalar(g, s32 ? TOSAC_DTYPE_INT32 : TOSAC_DTYPE_INT16, s32 ? 1 << 30 : 1 << 14),
                          scalar(g, TOSAC_DTYPE_INT8, s32 ? 31 : 15), scalar(g, x->dtype, 0), scalar(g, to, 0)};
    tosac_node *n = op(g, TOSAC_OP_RESCALE, 5, in, y);
    tosac_node_set_int(n, TOSAC_ATTR_RESCALE_scale32, s32);
    tosac_node_set_int(n, TOSAC_ATTR_RESCALE_rounding_mode, TOSAC_ROUND_SINGLE);
    tosac_node_set_int(n, TOSAC_ATTR_RESCALE_per_channel, 0);
    tosac_node_set_int(n, TOSAC_ATTR_RESCALE_input_unsigned, in_unsigned);
    tosac_node_set_int(n, TOSAC_ATTR_RESCALE_output_unsigned, 0);
    return y;
}

/* Per-channel RESCALE x -> int8 by 1/2 on each of the last dimension's channels. */
static tosac_value *rescale_pc(gb *g, tosac_value *x)
{
    const int64_t c[1] = {x->shape[x->rank - 1]};
    tosac_value *y = tensor(g, TOSAC_DTYPE_INT8, x->rank, x->shape);
    tosac_value *in[5] = {x, cst(g, TOSAC_DTYPE_INT32, 1, c, 1 << 30), cst(g, TOSAC_DTYPE_INT8, 1, c, 31),
                          scalar(g, x->dtype, 0), scalar(g, TOSAC_DTYPE_INT8, 0)};
    tosac_node *n = op(g, TOSAC_OP_RESCALE, 5, in, y);
    tosac_node_set_int(n, TOSAC_ATTR_RESCALE_scale32, 1);
    tosac_node_set_int(n, TOSAC_ATTR_RESCALE_rounding_mode, TOSAC_ROUND_SINGLE);
    tosac_node_set_int(n, TOSAC_ATTR_RESCALE_per_channel, 1);
    tosac_node_set_int(n, TOSAC_ATTR_RESCALE_input_unsigned, 0);
    tosac_node_set_int(n, TOSAC_ATTR_RESCALE_output_unsigned, 0);
    return y;
}

static void output(gb *g, tosac_value *v) { tosac_block_add_output(g->b, v); }

/* ---- partition and judge -------------------------------------------------------------------- */

static const tosac_target_info *target(const char *name)
{
    tosac_target_info buf;
    const tosac_target_info *t = NULL;
    EXPECT(tosac_target_lookup(name, &buf, &t, NULL) == TOSAC_OK);
    return t;
}

/* Partitions g for the target; checks the artifact validates; returns it (or NULL). */
static tosac_artifact *partition(tosac_graph *g, const char *tname)
{
    tosac_validate_opts vo = tosac_validate_opts_default();
    vo.level = TOSAC_LEVEL_NONE; /* some graphs break a level-8K limit on purpose */
    tosac_diag *d = tosac_diag_create();
    if (tosac_validate(g, &vo, d) != TOSAC_OK) {
        for (size_t k = 0; k < tosac_diag_count(d); k++) fprintf(stderr, "  test graph: %s\n", tosac_diag_message(d, k, NULL));
        EXPECT(!"the test graph is valid TOSA");
    }
    tosac_diag_clear(d);
    tosac_artifact *a = NULL;
    tosac_status s = tosac_artifact_partition(g, NULL, target(tname), &a, d);
    for (size_t k = 0; k < tosac_diag_count(d); k++) fprintf(stderr, "  %s\n", tosac_diag_message(d, k, NULL));
    EXPECT(s == TOSAC_OK);
    if (a) EXPECT(tosac_artifact_validate(a, NULL) == TOSAC_OK);
    tosac_diag_destroy(d);
    return a;
}

/* The placement of the first operator of type `o`: its rule (TOSAC_RULE_NONE on the NPU). */
static int rule_of(const tosac_artifact *a, tosac_op o, bool *npu)
{
    for (uint32_t k = 0; a && k < tosac_artifact_op_count(a); k++) {
        const tosac_artifact_op *x = tosac_artifact_op_at(a, k);
        if (x->op == (uint32_t)o) {
            *npu = x->npu;
            return x->rule;
        }
    }
    *npu = false;
    return -2;
}

/* The graph `g` puts its first `o` on the CPU for rule `rule` (name) on target tname. */
static void expect_cpu(tosac_graph *g, const char *tname, tosac_op o, const char *rule)
{
    tosac_artifact *a = partition(g, tname);
    bool npu = true;
    int r = rule_of(a, o, &npu);
    EXPECT(!npu);
    EXPECT_STREQ(tosac_rule_name(r), rule);
    if (r != tosac_rule_find(rule)) fprintf(stderr, "  (%s on %s: got %s)\n", tosac_op_name(o), tname, tosac_rule_name(r));
    tosac_artifact_destroy(a);
    tosac_graph_destroy(g);
}

/* The graph runs entirely on the NPU: one NPU segment. */
static void expect_npu(tosac_graph *g, const char *tname)
{
    tosac_artifact *a = partition(g, tname);
    EXPECT(a && tosac_artifact_segment_count(a) == 1 && tosac_artifact_segment_at(a, 0)->npu);
    for (uint32_t k = 0; a && k < tosac_artifact_op_count(a); k++)
        if (tosac_artifact_op_at(a, k)->rule != TOSAC_RULE_NONE)
            fprintf(stderr, "  %s on %s: %s off the NPU by %s\n", tname, tosac_artifact_op_at(a, k)->output,
                    tosac_op_name(tosac_artifact_op_at(a, k)->op), tosac_rule_name(tosac_artifact_op_at(a, k)->rule));
    tosac_artifact_destroy(a);
    tosac_graph_destroy(g);
}

/* ---- graphs --------------------------------------------------------------------------------- */

typedef struct conv_spec {
    tosac_op op;
    int64_t h, w, c, oc, kh, kw;
    int32_t stride, pad, dil;
    int64_t wfill;
    bool int16, dynamic_weights, two_readers;
    int64_t bias;
    bool reshaped; /* a RESHAPE between the conv and its RESCALE (read twice with two_readers) */
} conv_spec;

/* int8 (or int16) NHWC input -> conv -> RESCALE -> int8 (int16) output */
static tosac_graph *conv_graph(conv_spec s)
{
    gb g = gb_new();
    tosac_dtype at = s.int16 ? TOSAC_DTYPE_INT16 : TOSAC_DTYPE_INT8, acc = s.int16 ? TOSAC_DTYPE_INT48 : TOSAC_DTYPE_INT32;
    bool dw = s.op == TOSAC_OP_DEPTHWISE_CONV2D;
    const int64_t xs[4] = {1, s.h, s.w, s.c};
    const int64_t wsh[4] = {dw ? s.kh : s.oc, dw ? s.kw : s.kh, dw ? s.c : s.kw, dw ? 1 : s.c};
    int64_t oc = dw ? s.c : s.oc;
    const int64_t bs[1] = {oc};
    tosac_value *x = input(&g, at, 4, xs);
    tosac_value *w = s.dynamic_weights ? input(&g, TOSAC_DTYPE_INT8, 4, wsh) : cst(&g, TOSAC_DTYPE_INT8, 4, wsh, s.wfill);
    int64_t oh = (s.h + 2 * s.pad - (s.kh - 1) * s.dil - 1) / s.stride + 1, ow = (s.w + 2 * s.pad - (s.kw - 1) * s.dil - 1) / s.stride + 1;
    const int64_t ys[4] = {1, oh, ow, oc};
    tosac_value *y = tensor(&g, acc, 4, ys);
    tosac_value *in[5] = {x, w, cst(&g, acc, 1, bs, s.bias), scalar(&g, at, 0), scalar(&g, TOSAC_DTYPE_INT8, 0)};
    tosac_node *n = op(&g, s.op, 5, in, y);
    const int32_t pad[4] = {s.pad, s.pad, s.pad, s.pad}, st[2] = {s.stride, s.stride}, dl[2] = {s.dil, s.dil};
    tosac_node_set_ints(n, TOSAC_ATTR_CONV2D_pad, pad, 4);
    tosac_node_set_ints(n, TOSAC_ATTR_CONV2D_stride, st, 2);
    tosac_node_set_ints(n, TOSAC_ATTR_CONV2D_dilation, dl, 2);
    tosac_node_set_int(n, TOSAC_ATTR_CONV2D_local_bound, 0);
    tosac_node_set_int(n, TOSAC_ATTR_CONV2D_acc_type, s.int16 ? TOSAC_DTYPE_INT48 : TOSAC_DTYPE_INT32);
    if (s.reshaped) {
        const int64_t flat[2] = {1, oh * ow * oc};
        tosac_value *r = tensor(&g, acc, 2, flat), *rin[2] = {y, shape(&g, 2, flat)};
        op(&g, TOSAC_OP_RESHAPE, 2, rin, r);
        if (s.two_readers) output(&g, rescale(&g, y, at, false));
        y = r;
    }
    output(&g, rescale(&g, y, at, false));
    if (s.two_readers && !s.reshaped) output(&g, rescale(&g, y, at, false));
    return g.g;
}

static conv_spec conv(int64_t kh, int64_t kw)
{
    conv_spec s = {TOSAC_OP_CONV2D, kh, kw, 1, 2, kh, kw, 1, 0, 1, 1, false, false, false, 0, false};
    return s;
}

static tosac_graph *pool_graph(tosac_op o, int64_t n, int64_t h, int64_t w, int32_t kh, int32_t kw, int32_t stride, int32_t pad)
{
    gb g = gb_new();
    const int64_t xs[4] = {n, h, w, 1};
    tosac_value *x = input(&g, TOSAC_DTYPE_INT8, 4, xs);
    const int64_t ys[4] = {n, (h + 2 * pad - kh) / stride + 1, (w + 2 * pad - kw) / stride + 1, 1};
    tosac_value *y = tensor(&g, TOSAC_DTYPE_INT8, 4, ys);
    bool avg = o == TOSAC_OP_AVG_POOL2D;
    tosac_value *in[3] = {x, avg ? scalar(&g, TOSAC_DTYPE_INT8, 0) : NULL, avg ? scalar(&g, TOSAC_DTYPE_INT8, 0) : NULL};
    tosac_node *p = op(&g, o, avg ? 3 : 1, in, y);
    const int32_t k[2] = {kh, kw}, st[2] = {stride, stride}, pd[4] = {pad, pad, pad, pad};
    tosac_node_set_ints(p, TOSAC_ATTR_AVG_POOL2D_kernel, k, 2);
    tosac_node_set_ints(p, TOSAC_ATTR_AVG_POOL2D_stride, st, 2);
    tosac_node_set_ints(p, TOSAC_ATTR_AVG_POOL2D_pad, pd, 4);
    if (o == TOSAC_OP_AVG_POOL2D) tosac_node_set_int(p, TOSAC_ATTR_AVG_POOL2D_acc_type, TOSAC_DTYPE_INT32);
    else tosac_node_set_int(p, TOSAC_ATTR_MAX_POOL2D_nan_mode, TOSAC_NAN_PROPAGATE);
    output(&g, y);
    return g.g;
}

/* RESIZE of an int8 [1,4,4,2] map by n/d on both axes with the given offset and border. */
static tosac_graph *resize_graph(int mode, int64_t n, int64_t d, int64_t offset, int64_t border)
{
    gb g = gb_new();
    const int64_t xs[4] = {1, 4, 4, 2};
    int64_t o = (3 * n - offset + border) / d + 1;
    const int64_t ys[4] = {1, o, o, 2}, sc[4] = {n, d, n, d}, of[2] = {offset, offset}, bd[2] = {border, border};
    bool bil = mode == TOSAC_RESIZE_BILINEAR;
    tosac_value *x = input(&g, TOSAC_DTYPE_INT8, 4, xs);
    tosac_value *y = tensor(&g, bil ? TOSAC_DTYPE_INT32 : TOSAC_DTYPE_INT8, 4, ys);
    tosac_value *in[4] = {x, shape(&g, 4, sc), shape(&g, 2, of), shape(&g, 2, bd)};
    tosac_node_set_int(op(&g, TOSAC_OP_RESIZE, 4, in, y), TOSAC_ATTR_RESIZE_mode, mode);
    output(&g, bil ? rescale(&g, y, TOSAC_DTYPE_INT8, false) : y);
    return g.g;
}

/* int8 [1,4,3] -> GATHER(indices [[2,0]]) -> int8 [1,2,3] */
static tosac_graph *gather_graph(void)
{
    gb g = gb_new();
    const int64_t xs[3] = {1, 4, 3}, is[2] = {1, 2}, ys[3] = {1, 2, 3};
    tosac_value *x = input(&g, TOSAC_DTYPE_INT8, 3, xs), *y = tensor(&g, TOSAC_DTYPE_INT8, 3, ys);
    tosac_value *in[2] = {x, cst(&g, TOSAC_DTYPE_INT32, 2, is, 1)};
    op(&g, TOSAC_OP_GATHER, 2, in, y);
    output(&g, y);
    return g.g;
}

/* a [1,2,3] x b [1,3,4] of `t` -> RESCALE to t */
static tosac_graph *matmul_graph(tosac_dtype t)
{
    gb g = gb_new();
    const int64_t as[3] = {1, 2, 3}, bs[3] = {1, 3, 4}, ys[3] = {1, 2, 4};
    tosac_dtype acc = t == TOSAC_DTYPE_INT16 ? TOSAC_DTYPE_INT48 : TOSAC_DTYPE_INT32;
    tosac_value *a = input(&g, t, 3, as), *b = input(&g, t, 3, bs), *y = tensor(&g, acc, 3, ys);
    tosac_value *in[4] = {a, b, scalar(&g, t, 0), scalar(&g, t, 0)};
    op(&g, TOSAC_OP_MATMUL, 4, in, y);
    output(&g, rescale(&g, y, t, false));
    return g.g;
}

/* int8/int16 [1,8] -> TABLE -> int8 / (int32 -> RESCALE by 2^-shift -> int16) */
static tosac_graph *table_graph(tosac_dtype t, int shift)
{
    gb g = gb_new();
    bool i16 = t == TOSAC_DTYPE_INT16;
    const int64_t xs[2] = {1, 8}, ts[1] = {i16 ? 513 : 256};
    tosac_value *x = input(&g, t, 2, xs), *y = tensor(&g, i16 ? TOSAC_DTYPE_INT32 : TOSAC_DTYPE_INT8, 2, xs);
    tosac_value *in[2] = {x, cst(&g, t, 1, ts, 3)};
    op(&g, TOSAC_OP_TABLE, 2, in, y);
    if (!i16) {
        output(&g, y);
        return g.g;
    }
    tosac_value *z = tensor(&g, TOSAC_DTYPE_INT16, 2, xs);
    tosac_value *rin[5] = {y, scalar(&g, TOSAC_DTYPE_INT32, 1 << 30), scalar(&g, TOSAC_DTYPE_INT8, 30 + shift),
                           scalar(&g, TOSAC_DTYPE_INT32, 0), scalar(&g, TOSAC_DTYPE_INT16, 0)};
    tosac_node *n = op(&g, TOSAC_OP_RESCALE, 5, rin, z);
    tosac_node_set_int(n, TOSAC_ATTR_RESCALE_scale32, 1);
    tosac_node_set_int(n, TOSAC_ATTR_RESCALE_rounding_mode, TOSAC_ROUND_SINGLE);
    tosac_node_set_int(n, TOSAC_ATTR_RESCALE_per_channel, 0);
    tosac_node_set_int(n, TOSAC_ATTR_RESCALE_input_unsigned, 0);
    tosac_node_set_int(n, TOSAC_ATTR_RESCALE_output_unsigned, 0);
    output(&g, z);
    return g.g;
}

/* The note of the first operator of type o and the verdict of segment 0 in the JSON report. */
static void expect_note(tosac_graph *g, const char *tname, tosac_op o, const char *note_prefix, const char *json_part)
{
    tosac_artifact *a = partition(g, tname);
    EXPECT(a && tosac_artifact_segment_count(a) == 1 && tosac_artifact_segment_at(a, 0)->npu);
    const char *note = NULL;
    for (uint32_t k = 0; a && k < tosac_artifact_op_count(a) && !note; k++) {
        const tosac_artifact_op *x = tosac_artifact_op_at(a, k);
        if (x->op == (uint32_t)o) note = x->note ? x->note : "";
    }
    EXPECT(note && (note_prefix ? !strncmp(note, note_prefix, strlen(note_prefix)) : !*note));
    if (note && note_prefix && strncmp(note, note_prefix, strlen(note_prefix))) fprintf(stderr, "  note: %s\n", note);
    char *json = a ? tosac_artifact_report_json(a) : NULL;
    EXPECT(json && strstr(json, json_part));
    tosac_string_free(json);
    tosac_artifact_destroy(a);
    tosac_graph_destroy(g);
}

/* int8 x -> unary op `o` (one int attribute, or an int list) -> output of type yt */
static tosac_graph *unary_graph(tosac_op o, int rank, const int64_t *xs, const int64_t *ys, int yrank, tosac_dtype yt,
                                unsigned attr, int64_t attr_v, const int32_t *list, uint32_t n_list)
{
    gb g = gb_new();
    tosac_value *x = input(&g, TOSAC_DTYPE_INT8, rank, xs), *y = tensor(&g, yt, yrank, ys);
    tosac_node *n = op(&g, o, 1, &x, y);
    if (list) tosac_node_set_ints(n, attr, list, n_list);
    else if (attr != ~0u) tosac_node_set_int(n, attr, attr_v);
    if (o == TOSAC_OP_ARGMAX) tosac_node_set_int(n, TOSAC_ATTR_ARGMAX_nan_mode, TOSAC_NAN_PROPAGATE);
    output(&g, y);
    return g.g;
}

/* int8 -> RESCALE to int32 -> op(x, const 1) or op(x) (one int attribute; axis >= 0: that axis
   is reduced to 1) -> `yt` -> RESCALE to int8 when yt is int32 */
static tosac_graph *int32_graph(tosac_op o, int rank, const int64_t *xs, bool binary, unsigned attr, int64_t attr_v,
                                int axis, tosac_dtype yt)
{
    gb g = gb_new();
    tosac_value *x = rescale(&g, input(&g, TOSAC_DTYPE_INT8, rank, xs), TOSAC_DTYPE_INT32, false);
    int64_t ys[6];
    for (int k = 0; k < rank; k++) ys[k] = k == axis ? 1 : xs[k];
    tosac_value *y = tensor(&g, yt, rank, ys);
    tosac_value *in[2] = {x, binary ? cst(&g, TOSAC_DTYPE_INT32, rank, xs, 1) : NULL};
    tosac_node *n = op(&g, o, binary ? 2 : 1, in, y);
    if (attr != ~0u) tosac_node_set_int(n, attr, attr_v);
    if (o == TOSAC_OP_REDUCE_MAX) tosac_node_set_int(n, TOSAC_ATTR_REDUCE_MAX_nan_mode, TOSAC_NAN_PROPAGATE);
    output(&g, yt == TOSAC_DTYPE_INT32 ? rescale(&g, y, TOSAC_DTYPE_INT8, false) : y);
    return g.g;
}

/* ---- the rules, one by one ------------------------------------------------------------------ */

static void test_conv_kernel(void)
{
    expect_cpu(conv_graph(conv(65, 1)), "ethos-u55-128", TOSAC_OP_CONV2D, "CONV_KERNEL"); /* ky <= 64 */
    expect_cpu(conv_graph(conv(8, 513)), "ethos-u55-128", TOSAC_OP_CONV2D, "CONV_KERNEL"); /* kx*ky = 4104 */
    expect_npu(conv_graph(conv(64, 64)), "ethos-u55-128");                                 /* 4096 */
    expect_npu(conv_graph(conv(65, 1)), "ethos-u85-256");                                  /* U55 only */
}

static void test_conv_stride(void)
{
    conv_spec s = conv(3, 3);
    s.h = s.w = 17;
    s.stride = 4;
    s.pad = 1;
    expect_cpu(conv_graph(s), "ethos-u55-64", TOSAC_OP_CONV2D, "CONV_STRIDE");
    s.h = s.w = 19;
    s.pad = 0;
    expect_npu(conv_graph(s), "ethos-u55-64");
    /* a depthwise: no unrolling in Vela, so only a stride that never applies (a 1x1 output) */
    s.op = TOSAC_OP_DEPTHWISE_CONV2D;
    expect_cpu(conv_graph(s), "ethos-u55-64", TOSAC_OP_DEPTHWISE_CONV2D, "CONV_STRIDE");
    expect_npu(conv_graph(s), "ethos-u85-256");
    s.h = s.w = 3;
    expect_npu(conv_graph(s), "ethos-u55-64");
}

static void test_conv_weight_sum(void)
{
    conv_spec s = conv(3, 3);
    s.c = 7282; /* 9 * 7282 = 65538 taps of 127 > 127*65536 */
    s.oc = 1;
    s.wfill = 127;
    expect_cpu(conv_graph(s), "ethos-u85-128", TOSAC_OP_CONV2D, "CONV_WEIGHT_SUM");
    s.c = 7281;
    expect_npu(conv_graph(s), "ethos-u85-128");
}

static void test_conv_weights_const(void)
{
    conv_spec s = conv(3, 3);
    s.dynamic_weights = true;
    expect_cpu(conv_graph(s), "ethos-u55-128", TOSAC_OP_CONV2D, "CONV_WEIGHTS_CONST");
    expect_npu(conv_graph(s), "ethos-u85-128"); /* U85 decomposes a dynamic-weight CONV2D */
    s.op = TOSAC_OP_DEPTHWISE_CONV2D;
    expect_cpu(conv_graph(s), "ethos-u65-256", TOSAC_OP_DEPTHWISE_CONV2D, "CONV_WEIGHTS_CONST");
}

static void test_conv_int16(void)
{
    conv_spec s = conv(3, 3);
    s.int16 = true;
    expect_npu(conv_graph(s), "ethos-u55-128"); /* (i16, i8, i48) + a RESCALE that fuses */
    s.two_readers = true;                       /* the INT48 result read twice: no fusion */
    expect_cpu(conv_graph(s), "ethos-u55-128", TOSAC_OP_CONV2D, "CONV_INT16_RESCALE");
    s.two_readers = false;
    s.bias = 1ll << 40;
    expect_cpu(conv_graph(s), "ethos-u85-256", TOSAC_OP_CONV2D, "CONV_BIAS_40BIT");
    s.bias = (1ll << 39) - 1;
    expect_npu(conv_graph(s), "ethos-u85-256");
}

static void test_rescale_int48(void)
{
    conv_spec s = conv(3, 3);
    s.int16 = true;
    s.two_readers = true;
    /* the conv leaves the NPU; its INT48 RESCALEs then cannot fuse into it */
    tosac_graph *g = conv_graph(s);
    tosac_artifact *a = partition(g, "ethos-u55-128");
    uint32_t n = 0;
    for (uint32_t k = 0; a && k < tosac_artifact_op_count(a); k++) {
        const tosac_artifact_op *o = tosac_artifact_op_at(a, k);
        if (o->op != TOSAC_OP_RESCALE) continue;
        EXPECT(!o->npu);
        EXPECT_STREQ(tosac_rule_name(o->rule), "RESCALE_INT48");
        n++;
    }
    EXPECT_EQ_I(n, 2);
    tosac_artifact_destroy(a);
    tosac_graph_destroy(g);
}

/* RESCALE x -> `to` by m / 2^sh (per tensor), input zero point zi, output zero point 0. */
static tosac_value *rescale_by(gb *g, tosac_value *x, tosac_dtype to, int64_t m, int64_t sh, int64_t zi)
{
    tosac_value *y = tensor(g, to, x->rank, x->shape);
    tosac_value *in[5] = {x, scalar(g, TOSAC_DTYPE_INT32, m), scalar(g, TOSAC_DTYPE_INT8, sh), scalar(g, x->dtype, zi),
                          scalar(g, to, 0)};
    tosac_node *n = op(g, TOSAC_OP_RESCALE, 5, in, y);
    tosac_node_set_int(n, TOSAC_ATTR_RESCALE_scale32, 1);
    tosac_node_set_int(n, TOSAC_ATTR_RESCALE_rounding_mode, TOSAC_ROUND_SINGLE);
    tosac_node_set_int(n, TOSAC_ATTR_RESCALE_per_channel, 0);
    tosac_node_set_int(n, TOSAC_ATTR_RESCALE_input_unsigned, 0);
    tosac_node_set_int(n, TOSAC_ATTR_RESCALE_output_unsigned, 0);
    return y;
}

/* The RESCALE notes follow Vela 5.1.0's fusion (ETHOS_U.md §2 RESCALE, gio:1309-1672, c55:101-199):
   the residual ADD int8 a, b -> RESCALE(i32) each -> ADD -> RESCALE(i8 by 0.375). Expected per
   case, from the U55 rules: the input scales 2^30/2^11 = 2^19 and 2^29/2^11 = 2^18 are the
   "advanced" form (they differ, the larger is 2^19): all three fuse into one ADD (the compound
   fuse). Both 2^19: neither the advanced (equal scales) nor the 16-bit form (2^19 > 2^15) holds,
   so nothing fuses into the ADD, and its output RESCALE on 32-bit inputs needs a power-of-two
   factor: all three stand alone. b a constant int32 instead of a RESCALE: the two inputs would
   have different types, so a's RESCALE stands alone, and the output one fuses only with a
   power-of-two factor. */
static void test_rescale_notes(void)
{
    static const struct {
        int64_t mb; /* b's multiplier (shift 11); 0: b is a constant */
        int64_t m3; /* the output RESCALE's multiplier (shift 31) */
        const char *want[3];
    } cases[] = {
        {1 << 29, 3 << 28, {"fused into its reader as input scaling", "fused into its reader as input scaling",
                            "fused into its producer as output scaling"}},
        {1 << 30, 3 << 28, {"standalone", "standalone", "standalone: int32 input rewritten into MULs, one per channel group (gio:867-982)"}},
        {0, 3 << 28, {"standalone", NULL, "standalone: int32 input rewritten into MULs, one per channel group (gio:867-982)"}},
        {0, 1 << 29, {"standalone", NULL, "fused into its producer as output scaling"}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gb g = gb_new();
        const int64_t xs[2] = {1, 8};
        tosac_value *a = rescale_by(&g, input(&g, TOSAC_DTYPE_INT8, 2, xs), TOSAC_DTYPE_INT32, 1 << 30, 11, 3);
        tosac_value *b = cases[c].mb ? rescale_by(&g, input(&g, TOSAC_DTYPE_INT8, 2, xs), TOSAC_DTYPE_INT32, cases[c].mb, 11, -5)
                                     : cst(&g, TOSAC_DTYPE_INT32, 2, xs, 5);
        tosac_value *in[2] = {a, b}, *y = tensor(&g, TOSAC_DTYPE_INT32, 2, xs);
        op(&g, TOSAC_OP_ADD, 2, in, y);
        tosac_value *z = tensor(&g, TOSAC_DTYPE_INT8, 2, xs);
        tosac_value *rin[5] = {y, scalar(&g, TOSAC_DTYPE_INT32, cases[c].m3), scalar(&g, TOSAC_DTYPE_INT8, 31),
                               scalar(&g, TOSAC_DTYPE_INT32, 0), scalar(&g, TOSAC_DTYPE_INT8, 0)};
        tosac_node *r = op(&g, TOSAC_OP_RESCALE, 5, rin, z);
        tosac_node_set_int(r, TOSAC_ATTR_RESCALE_scale32, 1);
        tosac_node_set_int(r, TOSAC_ATTR_RESCALE_rounding_mode, TOSAC_ROUND_SINGLE);
        tosac_node_set_int(r, TOSAC_ATTR_RESCALE_per_channel, 0);
        tosac_node_set_int(r, TOSAC_ATTR_RESCALE_input_unsigned, 0);
        tosac_node_set_int(r, TOSAC_ATTR_RESCALE_output_unsigned, 0);
        output(&g, z);
        tosac_artifact *art = partition(g.g, "ethos-u55-128");
        const char *notes[3] = {NULL, NULL, NULL};
        int n = 0;
        for (uint32_t k = 0; art && k < tosac_artifact_op_count(art); k++) {
            const tosac_artifact_op *o = tosac_artifact_op_at(art, k);
            if (o->op != TOSAC_OP_RESCALE || n >= 3) continue;
            if (n == 1 && !cases[c].mb) n++; /* no RESCALE for b */
            notes[n++] = o->note;
        }
        for (int k = 0; k < 3; k++)
            if (cases[c].want[k]) EXPECT_STREQ(notes[k], cases[c].want[k]);
        tosac_artifact_destroy(art);
        tosac_graph_destroy(g.g);
    }
}

/* Vela removes a RESHAPE before fusing (gio:1689-1758): conv -> RESHAPE -> RESCALE fuses into the
   conv; when the conv's result is also read elsewhere Vela keeps a copy, and the RESCALE, reading
   a data-layout operator, stands alone. */
static void test_rescale_through_reshape(void)
{
    for (int twice = 0; twice < 2; twice++) {
        conv_spec s = conv(3, 3);
        s.reshaped = true;
        s.two_readers = twice;
        tosac_graph *g = conv_graph(s);
        tosac_artifact *a = partition(g, "ethos-u55-128");
        const char *last = NULL;
        for (uint32_t k = 0; a && k < tosac_artifact_op_count(a); k++)
            if (tosac_artifact_op_at(a, k)->op == TOSAC_OP_RESCALE) last = tosac_artifact_op_at(a, k)->note;
        EXPECT_STREQ(last, twice ? "standalone: int32 input rewritten into MULs, one per channel group (gio:867-982)"
                                 : "fused into its producer as output scaling");
        tosac_artifact_destroy(a);
        tosac_graph_destroy(g);
    }
}

/* A per-channel RESCALE fuses into a conv; standalone from int8 it would be an AvgPool NOP, which
   takes per-tensor scaling only (U55). Two broadcast inputs cost an ADD(0) on U55: a note. */
static void test_per_channel_broadcast(void)
{
    const int64_t xs[3] = {1, 4, 8};
    gb g = gb_new();
    output(&g, rescale_pc(&g, input(&g, TOSAC_DTYPE_INT8, 3, xs)));
    expect_cpu(g.g, "ethos-u55-128", TOSAC_OP_RESCALE, "RESCALE_PER_CHANNEL");
    g = gb_new();
    output(&g, rescale_pc(&g, input(&g, TOSAC_DTYPE_INT8, 3, xs)));
    expect_npu(g.g, "ethos-u85-256");
    g = gb_new();
    output(&g, rescale_pc(&g, rescale(&g, input(&g, TOSAC_DTYPE_INT8, 3, xs), TOSAC_DTYPE_INT32, false)));
    expect_npu(g.g, "ethos-u55-128"); /* int32 in: rewritten into MULs */
    g = gb_new();
    const int64_t as[3] = {1, 1, 8}, bs[3] = {1, 4, 1}, ys[3] = {1, 4, 8};
    tosac_value *in[2] = {rescale(&g, input(&g, TOSAC_DTYPE_INT8, 3, as), TOSAC_DTYPE_INT32, false),
                          rescale(&g, input(&g, TOSAC_DTYPE_INT8, 3, bs), TOSAC_DTYPE_INT32, false)};
    tosac_value *y = tensor(&g, TOSAC_DTYPE_INT32, 3, ys);
    op(&g, TOSAC_OP_ADD, 2, in, y);
    output(&g, rescale(&g, y, TOSAC_DTYPE_INT8, false));
    tosac_artifact *a = partition(g.g, "ethos-u55-128");
    bool npu = false;
    EXPECT(rule_of(a, TOSAC_OP_ADD, &npu) == TOSAC_RULE_NONE && npu);
    for (uint32_t k = 0; a && k < tosac_artifact_op_count(a); k++)
        if (tosac_artifact_op_at(a, k)->op == TOSAC_OP_ADD)
            EXPECT_STREQ(tosac_artifact_op_at(a, k)->note, "both inputs broadcast: Vela first materialises one with an ADD(0)");
    tosac_artifact_destroy(a);
    tosac_graph_destroy(g.g);
}

static void test_pools(void)
{
    const char *u55 = "ethos-u55-128";
    expect_cpu(pool_graph(TOSAC_OP_AVG_POOL2D, 1, 16, 16, 9, 9, 1, 1), u55, TOSAC_OP_AVG_POOL2D, "AVG_POOL_PAD_KERNEL");
    expect_npu(pool_graph(TOSAC_OP_AVG_POOL2D, 1, 16, 16, 8, 8, 1, 1), u55);
    expect_npu(pool_graph(TOSAC_OP_AVG_POOL2D, 1, 16, 16, 9, 9, 1, 0), u55); /* no padding: 81 taps */
    expect_npu(pool_graph(TOSAC_OP_AVG_POOL2D, 1, 16, 16, 9, 9, 1, 1), "ethos-u85-256");
    expect_cpu(pool_graph(TOSAC_OP_AVG_POOL2D, 2, 4, 4, 2, 2, 1, 0), u55, TOSAC_OP_AVG_POOL2D, "AVG_POOL_BATCH");
    expect_cpu(pool_graph(TOSAC_OP_AVG_POOL2D, 1, 18, 18, 2, 2, 4, 0), u55, TOSAC_OP_AVG_POOL2D, "POOL_STRIDE");
    expect_npu(pool_graph(TOSAC_OP_AVG_POOL2D, 1, 17, 17, 2, 2, 3, 0), u55);
    expect_cpu(pool_graph(TOSAC_OP_MAX_POOL2D, 1, 257, 1, 257, 1, 1, 0), u55, TOSAC_OP_MAX_POOL2D, "POOL_KERNEL");
    expect_npu(pool_graph(TOSAC_OP_MAX_POOL2D, 1, 256, 1, 256, 1, 1, 0), u55);
    expect_cpu(pool_graph(TOSAC_OP_AVG_POOL2D, 1, 1, 65537, 1, 1, 1, 0), u55, TOSAC_OP_AVG_POOL2D, "POOL_AXIS");
    expect_npu(pool_graph(TOSAC_OP_AVG_POOL2D, 1, 1, 65536, 1, 1, 1, 0), u55);
    expect_cpu(pool_graph(TOSAC_OP_MAX_POOL2D, 1, 8193, 1, 8193, 1, 1, 0), "ethos-u85-256", TOSAC_OP_MAX_POOL2D, "LEVEL_8K");
}

static void test_resize(void)
{
    const char *u55 = "ethos-u55-128";
    /* 2x nearest: half-pixel (n 4, d 2, offset -1, border 1) passes, offset -2 / border 0 not */
    expect_npu(resize_graph(TOSAC_RESIZE_NEAREST, 4, 2, -1, 1), u55);
    expect_cpu(resize_graph(TOSAC_RESIZE_NEAREST, 4, 2, -2, 0), u55, TOSAC_OP_RESIZE, "RESIZE_MODE");
    expect_npu(resize_graph(TOSAC_RESIZE_NEAREST, 4, 2, -2, 0), "ethos-u85-128");
    expect_cpu(resize_graph(TOSAC_RESIZE_NEAREST, 6, 2, -2, 2), u55, TOSAC_OP_RESIZE, "RESIZE_SCALE"); /* 3x */
    expect_npu(resize_graph(TOSAC_RESIZE_NEAREST, 8, 2, -3, 3), u55); /* 4x half-pixel */
    expect_cpu(resize_graph(TOSAC_RESIZE_BILINEAR, 4, 2, -1, 1), u55, TOSAC_OP_RESIZE, "RESIZE_MODE");
    expect_npu(resize_graph(TOSAC_RESIZE_BILINEAR, 4, 2, -1, 1), "ethos-u85-512");
}

static void test_u55_ops(void)
{
    expect_cpu(gather_graph(), "ethos-u55-32", TOSAC_OP_GATHER, "U55_UNSUPPORTED_OP");
    expect_cpu(gather_graph(), "ethos-u65-512", TOSAC_OP_GATHER, "U55_UNSUPPORTED_OP");
    expect_npu(gather_graph(), "ethos-u85-2048");
    expect_cpu(matmul_graph(TOSAC_DTYPE_INT16), "ethos-u55-128", TOSAC_OP_MATMUL, "MATMUL_INT16");
    expect_npu(matmul_graph(TOSAC_DTYPE_INT8), "ethos-u55-128");
    expect_npu(matmul_graph(TOSAC_DTYPE_INT16), "ethos-u85-128");
    expect_npu(table_graph(TOSAC_DTYPE_INT8, 0), "ethos-u55-128");
}

/* An int16 TABLE runs on U55 (Vela 5.1.0's RewriteTable, gio:1759-1870): as the native 16-bit LUT
   when the RESCALE of its int32 result is exactly the LUT's 2^-7 output shift (it fuses), else
   emulated with 3 LUTs, 2 MULs and an ADD (the report counts it); U85 needs no note. */
static void test_table16(void)
{
    expect_note(table_graph(TOSAC_DTYPE_INT16, 7), "ethos-u55-128", TOSAC_OP_TABLE, "int16 TABLE: the native 16-bit LUT",
                "\"emulated_int16_tables\": 0,");
    expect_note(table_graph(TOSAC_DTYPE_INT16, 6), "ethos-u65-256", TOSAC_OP_TABLE,
                "int16 TABLE emulated: Vela emulates it with 3 LUTs, 2 MULs and an ADD", "\"emulated_int16_tables\": 1,");
    expect_note(table_graph(TOSAC_DTYPE_INT16, 1), "ethos-u55-32", TOSAC_OP_TABLE, "int16 TABLE emulated",
                "1 int16 TABLE emulated by 3 LUTs, 2 MULs and an ADD each");
    expect_note(table_graph(TOSAC_DTYPE_INT16, 6), "ethos-u85-128", TOSAC_OP_TABLE, NULL, "\"emulated_int16_tables\": 0,");
}

static void test_layout_ops(void)
{
    const char *u55 = "ethos-u55-128";
    const int64_t x4[4] = {1, 4, 4, 2};
    unsigned ax = TOSAC_ATTR_REVERSE_axis;
    expect_cpu(unary_graph(TOSAC_OP_REVERSE, 4, x4, x4, 4, TOSAC_DTYPE_INT8, ax, 3, NULL, 0), u55, TOSAC_OP_REVERSE, "REVERSE_U55");
    expect_npu(unary_graph(TOSAC_OP_REVERSE, 4, x4, x4, 4, TOSAC_DTYPE_INT8, ax, 1, NULL, 0), u55);
    expect_npu(unary_graph(TOSAC_OP_REVERSE, 4, x4, x4, 4, TOSAC_DTYPE_INT8, ax, 3, NULL, 0), "ethos-u85-128");
    /* int8 rank-5 transpose: over 65536 elements it needs rank <= 4 */
    const int64_t big[5] = {1, 2, 2, 2, 20000}, bigt[5] = {1, 2, 2, 20000, 2}, small[5] = {1, 2, 2, 2, 3},
                  smallt[5] = {1, 2, 2, 3, 2};
    const int32_t perm[5] = {0, 1, 2, 4, 3};
    unsigned pa = TOSAC_ATTR_TRANSPOSE_perms;
    expect_cpu(unary_graph(TOSAC_OP_TRANSPOSE, 5, big, bigt, 5, TOSAC_DTYPE_INT8, pa, 0, perm, 5), u55, TOSAC_OP_TRANSPOSE,
               "TRANSPOSE_U55");
    expect_npu(unary_graph(TOSAC_OP_TRANSPOSE, 5, small, smallt, 5, TOSAC_DTYPE_INT8, pa, 0, perm, 5), u55);
    expect_npu(unary_graph(TOSAC_OP_TRANSPOSE, 5, big, bigt, 5, TOSAC_DTYPE_INT8, pa, 0, perm, 5), "ethos-u85-128");
    /* casts: none to bool on U55 (a bool output is a wide boundary on U85), none down from int32 */
    expect_cpu(unary_graph(TOSAC_OP_CAST, 4, x4, x4, 4, TOSAC_DTYPE_BOOL, ~0u, 0, NULL, 0), u55, TOSAC_OP_CAST, "U55_BOOL");
    expect_cpu(unary_graph(TOSAC_OP_CAST, 4, x4, x4, 4, TOSAC_DTYPE_BOOL, ~0u, 0, NULL, 0), "ethos-u85-128", TOSAC_OP_CAST,
               "BOUNDARY_TYPE");
    expect_npu(unary_graph(TOSAC_OP_CAST, 4, x4, x4, 4, TOSAC_DTYPE_INT16, ~0u, 0, NULL, 0), u55);
    expect_cpu(int32_graph(TOSAC_OP_CAST, 4, x4, false, ~0u, 0, -1, TOSAC_DTYPE_INT8), u55, TOSAC_OP_CAST, "CAST_U55");
    /* ARGMAX: U55 reduces C <= 127; U85 any axis up to 2^15 */
    const int64_t am[4] = {1, 1, 4, 200}, amy[3] = {1, 1, 4}, am85[4] = {1, 1, 1, 40000}, am85y[3] = {1, 1, 1};
    unsigned aa = TOSAC_ATTR_ARGMAX_axis;
    expect_cpu(unary_graph(TOSAC_OP_ARGMAX, 4, am, amy, 3, TOSAC_DTYPE_INT32, aa, 3, NULL, 0), u55, TOSAC_OP_ARGMAX, "ARGMAX_U55");
    expect_cpu(unary_graph(TOSAC_OP_ARGMAX, 4, am85, am85y, 3, TOSAC_DTYPE_INT32, aa, 3, NULL, 0), "ethos-u85-128",
               TOSAC_OP_ARGMAX, "ARGMAX_U85");
}

static void test_elementwise(void)
{
    const char *u55 = "ethos-u55-128";
    const int64_t x4[4] = {1, 4, 4, 2};
    unsigned rnd = TOSAC_ATTR_ARITHMETIC_RIGHT_SHIFT_round;
    expect_cpu(int32_graph(TOSAC_OP_ARITHMETIC_RIGHT_SHIFT, 4, x4, true, rnd, 0, -1, TOSAC_DTYPE_INT32), u55,
               TOSAC_OP_ARITHMETIC_RIGHT_SHIFT, "SHIFT_ROUND");
    expect_npu(int32_graph(TOSAC_OP_ARITHMETIC_RIGHT_SHIFT, 4, x4, true, rnd, 1, -1, TOSAC_DTYPE_INT32), u55);
    expect_npu(int32_graph(TOSAC_OP_LOGICAL_LEFT_SHIFT, 4, x4, true, ~0u, 0, -1, TOSAC_DTYPE_INT32), u55);
    {
        gb g = gb_new();
        tosac_value *in[2] = {input(&g, TOSAC_DTYPE_INT8, 4, x4), input(&g, TOSAC_DTYPE_INT8, 4, x4)};
        tosac_value *y = tensor(&g, TOSAC_DTYPE_INT8, 4, x4);
        op(&g, TOSAC_OP_LOGICAL_LEFT_SHIFT, 2, in, y);
        output(&g, y);
        expect_cpu(g.g, u55, TOSAC_OP_LOGICAL_LEFT_SHIFT, "ELEMENTWISE_TYPE");
    }
    const int64_t big[4] = {1, 65537, 1, 1}, ok[4] = {1, 65536, 1, 1};
    unsigned ra = TOSAC_ATTR_REDUCE_SUM_axis;
    expect_cpu(int32_graph(TOSAC_OP_REDUCE_SUM, 4, big, false, ra, 1, 1, TOSAC_DTYPE_INT32), "ethos-u85-256",
               TOSAC_OP_REDUCE_SUM, "REDUCE_SUM_AXES");
    expect_npu(int32_graph(TOSAC_OP_REDUCE_SUM, 4, ok, false, ra, 1, 1, TOSAC_DTYPE_INT32), "ethos-u85-256");
    expect_cpu(int32_graph(TOSAC_OP_REDUCE_MAX, 4, x4, false, TOSAC_ATTR_REDUCE_MAX_axis, 3, 3, TOSAC_DTYPE_INT32), u55,
               TOSAC_OP_REDUCE_MAX, "REDUCE_MINMAX_TYPE");
    expect_npu(int32_graph(TOSAC_OP_REDUCE_MAX, 4, x4, false, TOSAC_ATTR_REDUCE_MAX_axis, 3, 3, TOSAC_DTYPE_INT32),
               "ethos-u85-256");
    {   /* a floating-point operator never reaches the NPU */
        gb g = gb_new();
        tosac_value *in[2] = {input(&g, TOSAC_DTYPE_FP32, 4, x4), input(&g, TOSAC_DTYPE_FP32, 4, x4)};
        tosac_value *y = tensor(&g, TOSAC_DTYPE_FP32, 4, x4);
        op(&g, TOSAC_OP_ADD, 2, in, y);
        output(&g, y);
        expect_cpu(g.g, "ethos-u85-2048", TOSAC_OP_ADD, "FLOAT_TYPE");
    }
    {   /* rank 7 */
        gb g = gb_new();
        const int64_t x2[2] = {1, 2}, x7[7] = {1, 1, 1, 1, 1, 1, 2};
        tosac_value *x = input(&g, TOSAC_DTYPE_INT8, 2, x2), *m = tensor(&g, TOSAC_DTYPE_INT8, 7, x7),
                    *y = tensor(&g, TOSAC_DTYPE_INT8, 2, x2);
        tosac_value *in1[2] = {x, shape(&g, 7, x7)};
        op(&g, TOSAC_OP_RESHAPE, 2, in1, m);
        tosac_value *in2[2] = {m, shape(&g, 2, x2)};
        op(&g, TOSAC_OP_RESHAPE, 2, in2, y);
        output(&g, y);
        expect_cpu(g.g, "ethos-u85-256", TOSAC_OP_RESHAPE, "RANK");
    }
}

static void test_matmul_conv_axes(void)
{
    gb g = gb_new();
    const int64_t as[3] = {1, 1, 65537}, bs[3] = {1, 65537, 1}, ys[3] = {1, 1, 1};
    tosac_value *in[4] = {input(&g, TOSAC_DTYPE_INT8, 3, as), input(&g, TOSAC_DTYPE_INT8, 3, bs),
                          scalar(&g, TOSAC_DTYPE_INT8, 0), scalar(&g, TOSAC_DTYPE_INT8, 0)};
    tosac_value *y = tensor(&g, TOSAC_DTYPE_INT32, 3, ys);
    op(&g, TOSAC_OP_MATMUL, 4, in, y);
    output(&g, rescale(&g, y, TOSAC_DTYPE_INT8, false));
    expect_cpu(g.g, "ethos-u55-128", TOSAC_OP_MATMUL, "MATMUL_AXIS");
    conv_spec s = conv(1, 1);
    s.c = 65537;
    s.oc = 1;
    expect_cpu(conv_graph(s), "ethos-u55-128", TOSAC_OP_CONV2D, "CONV_AXIS");
    s.c = 65536;
    expect_npu(conv_graph(s), "ethos-u55-128");
}

/* CONV3D (not on U55) and TRANSPOSE_CONV2D strides. */
static void test_conv3d_tconv(void)
{
    for (int k = 0; k < 2; k++) {
        gb g = gb_new();
        const int64_t xs[5] = {1, 2, 4, 4, 2}, ws[5] = {3, 1, 3, 3, 2}, bs[1] = {3}, ys[5] = {1, 2, 2, 2, 3};
        tosac_value *in[5] = {input(&g, TOSAC_DTYPE_INT8, 5, xs), cst(&g, TOSAC_DTYPE_INT8, 5, ws, 1),
                              cst(&g, TOSAC_DTYPE_INT32, 1, bs, 0), scalar(&g, TOSAC_DTYPE_INT8, 0),
                              scalar(&g, TOSAC_DTYPE_INT8, 0)};
        tosac_value *y = tensor(&g, TOSAC_DTYPE_INT32, 5, ys);
        tosac_node *n = op(&g, TOSAC_OP_CONV3D, 5, in, y);
        const int32_t pad[6] = {0}, st[3] = {1, 1, 1}, dl[3] = {1, 1, 1};
        tosac_node_set_ints(n, TOSAC_ATTR_CONV3D_pad, pad, 6);
        tosac_node_set_ints(n, TOSAC_ATTR_CONV3D_stride, st, 3);
        tosac_node_set_ints(n, TOSAC_ATTR_CONV3D_dilation, dl, 3);
        tosac_node_set_int(n, TOSAC_ATTR_CONV3D_local_bound, 0);
        tosac_node_set_int(n, TOSAC_ATTR_CONV3D_acc_type, TOSAC_DTYPE_INT32);
        output(&g, rescale(&g, y, TOSAC_DTYPE_INT8, false));
        if (k) expect_npu(g.g, "ethos-u85-256");
        else expect_cpu(g.g, "ethos-u55-256", TOSAC_OP_CONV3D, "CONV3D_U55");
    }
    for (int stride = 2; stride <= 3; stride++) {
        gb g = gb_new();
        const int64_t xs[4] = {1, 4, 4, 2}, ws[4] = {3, 3, 3, 2}, bs[1] = {3};
        const int64_t ys[4] = {1, 3 * stride + 3, 3 * stride + 3, 3};
        tosac_value *in[5] = {input(&g, TOSAC_DTYPE_INT8, 4, xs), cst(&g, TOSAC_DTYPE_INT8, 4, ws, 1),
                              cst(&g, TOSAC_DTYPE_INT32, 1, bs, 0), scalar(&g, TOSAC_DTYPE_INT8, 0),
                              scalar(&g, TOSAC_DTYPE_INT8, 0)};
        tosac_value *y = tensor(&g, TOSAC_DTYPE_INT32, 4, ys);
        tosac_node *n = op(&g, TOSAC_OP_TRANSPOSE_CONV2D, 5, in, y);
        const int32_t op4[4] = {0}, st[2] = {stride, stride};
        tosac_node_set_ints(n, TOSAC_ATTR_TRANSPOSE_CONV2D_out_pad, op4, 4);
        tosac_node_set_ints(n, TOSAC_ATTR_TRANSPOSE_CONV2D_stride, st, 2);
        tosac_node_set_int(n, TOSAC_ATTR_TRANSPOSE_CONV2D_local_bound, 0);
        tosac_node_set_int(n, TOSAC_ATTR_TRANSPOSE_CONV2D_acc_type, TOSAC_DTYPE_INT32);
        output(&g, rescale(&g, y, TOSAC_DTYPE_INT8, false));
        if (stride == 2) expect_npu(g.g, "ethos-u55-128");
        else expect_cpu(g.g, "ethos-u55-128", TOSAC_OP_TRANSPOSE_CONV2D, "TRANSPOSE_CONV_STRIDE");
    }
}

static void test_rescale_u16(void)
{
    const int64_t xs[2] = {1, 8};
    for (int k = 0; k < 2; k++) {
        gb g = gb_new();
        output(&g, rescale(&g, input(&g, TOSAC_DTYPE_INT16, 2, xs), TOSAC_DTYPE_INT8, k == 0));
        if (k) expect_npu(g.g, "ethos-u85-256");
        else expect_cpu(g.g, "ethos-u85-256", TOSAC_OP_RESCALE, "RESCALE_U16_U85");
    }
}

/* x -> RESCALE -> GATHER -> RESHAPE -> GATHER -> RESCALE -> y: on U55 the RESHAPE between the two
   CPU GATHERs is glue and joins them; NPU, CPU, NPU segments. */
static tosac_graph *chain_graph(void)
{
    gb g = gb_new();
    const int64_t xs[3] = {1, 4, 3}, i1[2] = {1, 2}, g1[3] = {1, 2, 3}, r1[3] = {1, 3, 2}, i2[2] = {1, 2}, g2[3] = {1, 2, 2};
    tosac_value *x = rescale(&g, input(&g, TOSAC_DTYPE_INT8, 3, xs), TOSAC_DTYPE_INT8, false);
    tosac_value *a = tensor(&g, TOSAC_DTYPE_INT8, 3, g1), *b = tensor(&g, TOSAC_DTYPE_INT8, 3, r1),
                *c = tensor(&g, TOSAC_DTYPE_INT8, 3, g2);
    tosac_value *in1[2] = {x, cst(&g, TOSAC_DTYPE_INT32, 2, i1, 2)};
    op(&g, TOSAC_OP_GATHER, 2, in1, a);
    tosac_value *in2[2] = {a, shape(&g, 3, r1)};
    op(&g, TOSAC_OP_RESHAPE, 2, in2, b);
    tosac_value *in3[2] = {b, cst(&g, TOSAC_DTYPE_INT32, 2, i2, 1)};
    op(&g, TOSAC_OP_GATHER, 2, in3, c);
    output(&g, rescale(&g, c, TOSAC_DTYPE_INT8, false));
    return g.g;
}

/* The whole graph on tosac's runtime: the reference the artifact must match bit for bit. */
static void run_whole(const tosac_graph *g, const int8_t *x, size_t nx, int8_t *y, size_t ny)
{
    tosac_program_opts o = tosac_program_opts_default();
    tosac_program *p = NULL;
    EXPECT(tosac_program_create(g, &o, &p, NULL) == TOSAC_OK);
    if (!p) return;
    EXPECT(tosac_program_set_input_tosa(p, 0, x, nx, NULL) == TOSAC_OK);
    EXPECT(tosac_program_invoke(p, NULL) == TOSAC_OK);
    EXPECT(tosac_program_get_output_tosa(p, 0, y, ny, NULL) == TOSAC_OK);
    tosac_program_destroy(p);
}

static int hook_calls;
static tosac_status count_npu(void *user, const tosac_artifact *a, uint32_t seg, const void *const *in, const size_t *in_n,
                              void *const *out, const size_t *out_n, tosac_diag *d)
{
    hook_calls++;
    EXPECT(tosac_artifact_segment_at(a, seg)->npu);
    return tosac_artifact_run_segment(user, a, seg, in, in_n, out, out_n, d);
}

static void test_chain(void)
{
    tosac_graph *g = chain_graph();
    tosac_artifact *a = partition(g, "ethos-u55-128");
    EXPECT_EQ_I(a ? tosac_artifact_segment_count(a) : 0, 3);
    bool npu;
    EXPECT_STREQ(tosac_rule_name(rule_of(a, TOSAC_OP_RESHAPE, &npu)), "GLUE");
    for (uint32_t k = 0; a && k < tosac_artifact_segment_count(a); k++)
        EXPECT(tosac_artifact_segment_at(a, k)->npu == (k != 1));
    int8_t x[12], y0[4], y1[4], y2[4];
    for (int k = 0; k < 12; k++) x[k] = (int8_t)(k * 37 - 100);
    run_whole(g, x, sizeof x, y0, sizeof y0);
    const void *in[1] = {x};
    size_t in_n[1] = {sizeof x}, out_n[1] = {sizeof y1};
    void *out[1] = {y1};
    hook_calls = 0;
    EXPECT(a && tosac_artifact_run(a, in, in_n, out, out_n, count_npu, NULL, NULL, NULL) == TOSAC_OK);
    EXPECT_EQ_I(hook_calls, 2);
    EXPECT(!memcmp(y0, y1, sizeof y0));
    /* written, read back, run again */
    char dir[] = "/tmp/tosac_target_testXXXXXX";
    EXPECT(mkdtemp(dir) != NULL);
    char out_dir[64], file[96];
    snprintf(out_dir, sizeof out_dir, "%s/art", dir);
    EXPECT(a && tosac_artifact_write(a, out_dir, NULL) == TOSAC_OK);
    EXPECT(tosac_artifact_is_dir(out_dir));
    EXPECT(a && tosac_artifact_write(a, out_dir, NULL) == TOSAC_OK); /* replaces a previous artifact */
    snprintf(file, sizeof file, "%s/plain", dir);
    FILE *f = fopen(file, "w");
    if (f) fclose(f);
    EXPECT(a && tosac_artifact_write(a, file, NULL) == TOSAC_ERR_INVALID_ARG); /* not an artifact: refused */
    tosac_artifact *b = NULL;
    EXPECT(tosac_artifact_read(out_dir, &b, NULL) == TOSAC_OK);
    EXPECT(b && tosac_artifact_validate(b, NULL) == TOSAC_OK);
    out[0] = y2;
    EXPECT(b && tosac_artifact_run(b, in, in_n, out, out_n, NULL, NULL, NULL, NULL) == TOSAC_OK);
    EXPECT(!memcmp(y0, y2, sizeof y0));
    tosac_artifact_destroy(b);
    {   /* a manifest whose first segment reads a later one's output is refused */
        snprintf(file, sizeof file, "%s/manifest.json", out_dir);
        FILE *mf = fopen(file, "rb");
        char text[16384];
        size_t len = mf ? fread(text, 1, sizeof text - 1, mf) : 0;
        if (mf) fclose(mf);
        text[len] = '\0';
        char *at = strstr(text, "{\"model_input\": 0}");
        EXPECT(at != NULL);
        if (at) {
            char bad[16500];
            snprintf(bad, sizeof bad, "%.*s{\"segment\": 1, \"output\": 0}%s", (int)(at - text), text,
                     at + strlen("{\"model_input\": 0}"));
            mf = fopen(file, "wb");
            if (mf) {
                fputs(bad, mf);
                fclose(mf);
            }
            b = NULL;
            EXPECT(tosac_artifact_read(out_dir, &b, NULL) == TOSAC_ERR_FORMAT && !b);
            EXPECT(a && tosac_artifact_write(a, out_dir, NULL) == TOSAC_ERR_INVALID_ARG); /* no longer an artifact */
            mf = fopen(file, "wb");
            if (mf) {
                fputs(text, mf);
                fclose(mf);
            }
        }
    }
    const char *names[] = {"manifest.json", "partition_report.txt", "partition_report.json", "segment_0_npu.tosa",
                           "segment_1_cpu.tosa", "segment_2_npu.tosa"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        snprintf(file, sizeof file, "%s/%s", out_dir, names[k]);
        EXPECT(access(file, R_OK) == 0);
        remove(file);
    }
    rmdir(out_dir);
    snprintf(file, sizeof file, "%s/plain", dir);
    remove(file);
    rmdir(dir);
    tosac_artifact_destroy(a);
    {   /* q-params across the cuts: x at scale 0.5, each RESCALE multiplies codes by 2^30 / 2^31,
           so the real scale doubles: 1.0 after the first, kept by GATHER and RESHAPE */
        tosac_quant_io qin = {.name = "t0", .type = TOSAC_QUANT_IO_INT8, .q = {0.5, 0}, .rank = 3};
        tosac_quant_iomap io = {.n_inputs = 1, .n_outputs = 0, .inputs = &qin, .outputs = NULL};
        tosac_artifact *q = NULL;
        EXPECT(tosac_artifact_partition(g, &io, target("ethos-u55-128"), &q, NULL) == TOSAC_OK);
        const tosac_artifact_segment *s1 = q ? tosac_artifact_segment_at(q, 1) : NULL;
        EXPECT(s1 && s1->n_inputs == 1 && s1->inputs[0].has_q && s1->inputs[0].q.scale == 1.0 &&
               s1->inputs[0].q.zero_point == 0);
        EXPECT(s1 && s1->n_outputs == 1 && s1->outputs[0].has_q && s1->outputs[0].q.scale == 1.0);
        EXPECT(q && tosac_artifact_output(q, 0)->has_q && tosac_artifact_output(q, 0)->q.scale == 2.0);
        tosac_artifact_destroy(q);
    }
    /* U85 runs it all; Cortex-M55 has no NPU: one CPU segment */
    expect_npu(chain_graph(), "ethos-u85-256");
    a = partition(g, "cortex-m55");
    EXPECT(a && tosac_artifact_segment_count(a) == 1 && !tosac_artifact_segment_at(a, 0)->npu);
    tosac_artifact_destroy(a);
    {   /* a spec-string target: no rules, one CPU segment, its name kept by the artifact */
        char spec[32] = "TOSA-1.0+INT";
        tosac_target_info buf;
        const tosac_target_info *t = NULL;
        EXPECT(tosac_target_lookup(spec, &buf, &t, NULL) == TOSAC_OK);
        a = NULL;
        EXPECT(t && tosac_artifact_partition(g, NULL, t, &a, NULL) == TOSAC_OK);
        memset(spec, 0, sizeof spec);
        EXPECT(a && tosac_artifact_segment_count(a) == 1 && !tosac_artifact_segment_at(a, 0)->npu);
        EXPECT_STREQ(a ? tosac_artifact_target(a)->name : NULL, "TOSA-1.0+INT");
        tosac_artifact_destroy(a);
    }
    tosac_graph_destroy(g);
}

static void test_targets(void)
{
    EXPECT_EQ_I(tosac_target_count(), 12);
    const tosac_target_info *t = target("ETHOS-U55-128");
    EXPECT(t && t->device && t->rules == TOSAC_RULES_U55 && t->macs == 128);
    EXPECT(t && (t->lowering & TOSAC_LOWER_NO_INT16_MATMUL) && (t->lowering & TOSAC_LOWER_FC_AS_CONV2D));
    EXPECT_STREQ(t ? t->tosa_spec : NULL, "TOSA-1.0+INT+int16+int4+u55");
    EXPECT_STREQ(t ? t->memory_mode : NULL, "Shared_Sram");
    t = target("ethos-u65-512");
    EXPECT(t && t->rules == TOSAC_RULES_U55 && t->macs == 512);
    EXPECT_STREQ(t ? t->system_config : NULL, "Ethos_U65_High_End");
    EXPECT_STREQ(t ? t->memory_mode : NULL, "Dedicated_Sram_384KB");
    t = target("ethos-u85-2048");
    EXPECT(t && t->rules == TOSAC_RULES_U85 && !(t->lowering & TOSAC_LOWER_NO_INT16_MATMUL));
    EXPECT(t && (t->extensions & TOSAC_EXT_CONTROLFLOW));
    EXPECT_STREQ(t ? t->tosa_spec : NULL, "TOSA-1.0+INT+int16+int4+cf");
    EXPECT_STREQ(t ? t->system_config : NULL, "Ethos_U85_SYS_DRAM_Mid");
    t = target("cortex-m55");
    EXPECT(t && t->device && t->rules == TOSAC_RULES_NONE && !t->macs && t->profiles == TOSAC_PROFILE_INT);
    tosac_target_info buf;
    const tosac_target_info *s = NULL;
    EXPECT(tosac_target_lookup("TOSA-1.0+INT+int16", &buf, &s, NULL) == TOSAC_OK);
    EXPECT(s == &buf && !buf.device && buf.profiles == TOSAC_PROFILE_INT && buf.extensions == TOSAC_EXT_INT16);
    EXPECT(tosac_target_lookup("ethos-u55-512", &buf, &s, NULL) == TOSAC_ERR_INVALID_ARG);
    /* every rule names its source in ETHOS_U.md or REFERENCE_SYSTEM.md */
    for (int k = 0; k < tosac_rule_count(); k++) {
        const char *txt = tosac_rule_text(k);
        EXPECT(!strncmp(txt, "ETHOS_U.md §", 13) || !strncmp(txt, "REFERENCE_SYSTEM.md §", 22));
        EXPECT_EQ_I(tosac_rule_find(tosac_rule_name(k)), k);
    }
}

int main(void)
{
    RUN(test_targets);
    RUN(test_conv_kernel);
    RUN(test_conv_stride);
    RUN(test_conv_weight_sum);
    RUN(test_conv_weights_const);
    RUN(test_conv_int16);
    RUN(test_rescale_int48);
    RUN(test_rescale_notes);
    RUN(test_table16);
    RUN(test_rescale_through_reshape);
    RUN(test_per_channel_broadcast);
    RUN(test_pools);
    RUN(test_resize);
    RUN(test_u55_ops);
    RUN(test_layout_ops);
    RUN(test_elementwise);
    RUN(test_matmul_conv_axes);
    RUN(test_conv3d_tconv);
    RUN(test_rescale_u16);
    RUN(test_chain);
    return test_summary();
}
