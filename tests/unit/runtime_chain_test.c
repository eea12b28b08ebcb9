/*
 * Chains of elementwise operators (src/runtime/fuse.c, exec.c): whole programs whose elementwise
 * operators form chains (an INT8 residual join, SiLU and hard-swish in FP32 with [1,1,1,C] and
 * all-ones broadcast operands, SELECT / TABLE / NEGATE in INT8) give the output bytes of the same
 * program built without chains (rt_fuse_chains_off: every operator run one by one, whole tensors),
 * on 1, 2 and 3 threads and at every instruction-set level. The shapes leave a short last block.
 * A chain whose members fail REQUIREs in different blocks reports the operator that fails first in
 * execution order, as one by one. Chains that run from an fp32 convolution's epilogue (CONV2D,
 * DEPTHWISE_CONV2D, with and without a fused CLAMP) give the bytes of the operators one by one.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/test.h"
#include "ir/graph.h"
#include "kernels/kernel.h"
#include "runtime/program.h"
#include "tosac/graph.h"
#include "tosac/runtime.h"

typedef struct gb {
    tosac_graph *g;
    tosac_block *b;
    bool ok;
} gb;

static gb gb_new(void)
{
    gb x = {tosac_graph_create(), NULL, true};
    tosac_region *r = x.g ? tosac_graph_add_region(x.g, "main") : NULL;
    x.b = r ? tosac_region_add_block(r, "main") : NULL;
    x.ok = x.b != NULL;
    return x;
}

static tosac_value *chk(gb *x, tosac_value *v)
{
    if (!v) x->ok = false;
    return v;
}

static tosac_value *tensor(gb *x, const char *name, tosac_dtype t, const int64_t *dims)
{
    return x->ok ? chk(x, tosac_block_add_tensor(x->b, name, t, 4, dims)) : NULL;
}

static tosac_value *input(gb *x, const char *name, tosac_dtype t, const int64_t *dims)
{
    tosac_value *v = tensor(x, name, t, dims);
    if (v && tosac_block_add_input(x->b, v) != TOSAC_OK) x->ok = false;
    return v;
}

static void output(gb *x, tosac_value *v)
{
    if (!v || tosac_block_add_output(x->b, v) != TOSAC_OK) x->ok = false;
}

static tosac_node *node(gb *x, tosac_op op, uint32_t nin, tosac_value *const *in, tosac_value *out)
{
    tosac_node *n = x->ok ? tosac_block_add_node(x->b, op, nin, in, 1, &out) : NULL;
    if (!n) x->ok = false;
    return n;
}

/* A constant of n elements of type t from vals (little-endian bytes of each value's low bits). */
/* GCC -O3 inlines cst into callers that pass one local float with dims {1} and, not seeing n = 1,
   warns that the loop may read the local's "uninitialised" neighbours. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
static tosac_value *cst(gb *x, const char *name, tosac_dtype t, int rank, const int64_t *dims, const int64_t *vals,
                        const float *fvals)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    size_t es = t == TOSAC_DTYPE_INT8 ? 1 : t == TOSAC_DTYPE_INT16 ? 2 : 4;
    uint8_t *bytes = calloc((size_t)n, es);
    for (int64_t i = 0; i < n; i++) {
        uint32_t u;
        if (fvals)
            memcpy(&u, &fvals[i], 4);
        else
            u = (uint32_t)vals[i];
        for (size_t k = 0; k < es; k++) bytes[(size_t)i * es + k] = (uint8_t)(u >> (8 * k));
    }
    tosac_value *v = x->ok ? chk(x, tosac_block_add_const(x->b, name, t, rank, dims, bytes, (size_t)n * es)) : NULL;
    free(bytes);
    return v;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

static tosac_value *scalar(gb *x, const char *name, tosac_dtype t, int64_t v)
{
    static const int64_t one[1] = {1};
    return cst(x, name, t, 1, one, &v, NULL);
}

static void attr_int(gb *x, tosac_node *n, unsigned id, int64_t v)
{
    if (!n || tosac_node_set_int(n, id, v) != TOSAC_OK) x->ok = false;
}

static void clamp_bounds(gb *x, tosac_node *n, const void *lo, const void *hi, uint32_t len)
{
    if (!n || tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_min_val, lo, len) != TOSAC_OK ||
        tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_max_val, hi, len) != TOSAC_OK ||
        tosac_node_set_int(n, TOSAC_ATTR_CLAMP_nan_mode, len == 4 ? TOSAC_NAN_IGNORE : TOSAC_NAN_PROPAGATE) != TOSAC_OK)
        x->ok = false;
}

/* RESCALE in -> out (scale32), per channel (C = dims[3]) or per tensor. */
static void rescale(gb *x, const char *name, tosac_value *in, tosac_dtype it, tosac_value *out, tosac_dtype ot,
                    int64_t c, bool per_channel, int64_t izp, int64_t ozp, int rounding)
{
    int64_t nc = per_channel ? c : 1, mult[64], shift[64];
    char nm[64];
    for (int64_t i = 0; i < nc; i++) mult[i] = 1518500250 - 7919 * i, shift[i] = 30 + i % 4;
    tosac_value *ops[5];
    ops[0] = in;
    snprintf(nm, sizeof nm, "%s_mult", name);
    ops[1] = cst(x, nm, TOSAC_DTYPE_INT32, 1, &nc, mult, NULL);
    snprintf(nm, sizeof nm, "%s_shift", name);
    ops[2] = cst(x, nm, TOSAC_DTYPE_INT8, 1, &nc, shift, NULL);
    snprintf(nm, sizeof nm, "%s_izp", name);
    ops[3] = scalar(x, nm, it, izp);
    snprintf(nm, sizeof nm, "%s_ozp", name);
    ops[4] = scalar(x, nm, ot, ozp);
    tosac_node *n = node(x, TOSAC_OP_RESCALE, 5, ops, out);
    attr_int(x, n, TOSAC_ATTR_RESCALE_scale32, 1);
    attr_int(x, n, TOSAC_ATTR_RESCALE_rounding_mode, rounding);
    attr_int(x, n, TOSAC_ATTR_RESCALE_per_channel, per_channel);
    attr_int(x, n, TOSAC_ATTR_RESCALE_input_unsigned, 0);
    attr_int(x, n, TOSAC_ATTR_RESCALE_output_unsigned, 0);
}

static tosac_node *bin(gb *x, tosac_op op, tosac_value *a, tosac_value *b, tosac_value *out)
{
    tosac_value *in[3] = {a, b, NULL};
    if (op != TOSAC_OP_MUL) return node(x, op, 2, in, out);
    char nm[64];
    snprintf(nm, sizeof nm, "shift%p", (void *)out);
    in[2] = scalar(x, nm, TOSAC_DTYPE_INT8, 0);
    return node(x, op, 3, in, out);
}

/* INT8 residual join: RESCALE(a), RESCALE(b) to int32, ADD, RESCALE to int8, CLAMP. */
static tosac_graph *residual(void)
{
    static const int64_t d[4] = {1, 37, 41, 13};
    gb x = gb_new();
    tosac_value *a = input(&x, "a", TOSAC_DTYPE_INT8, d), *b = input(&x, "b", TOSAC_DTYPE_INT8, d);
    tosac_value *ra = tensor(&x, "ra", TOSAC_DTYPE_INT32, d), *rb = tensor(&x, "rb", TOSAC_DTYPE_INT32, d);
    tosac_value *s = tensor(&x, "s", TOSAC_DTYPE_INT32, d), *q = tensor(&x, "q", TOSAC_DTYPE_INT8, d);
    tosac_value *y = tensor(&x, "y", TOSAC_DTYPE_INT8, d);
    rescale(&x, "ra", a, TOSAC_DTYPE_INT8, ra, TOSAC_DTYPE_INT32, d[3], false, -3, 0, TOSAC_ROUND_SINGLE);
    rescale(&x, "rb", b, TOSAC_DTYPE_INT8, rb, TOSAC_DTYPE_INT32, d[3], true, 5, 0, TOSAC_ROUND_DOUBLE);
    bin(&x, TOSAC_OP_ADD, ra, rb, s);
    rescale(&x, "rq", s, TOSAC_DTYPE_INT32, q, TOSAC_DTYPE_INT8, d[3], true, 0, 2, TOSAC_ROUND_DOUBLE);
    const int8_t lo = -100, hi = 90;
    clamp_bounds(&x, node(&x, TOSAC_OP_CLAMP, 1, &q, y), &lo, &hi, 1);
    output(&x, y);
    if (!x.ok) tosac_graph_destroy(x.g);
    return x.ok ? x.g : NULL;
}

/* FP32: SiLU (x * sigmoid(x)), then hard-swish of it (y * clamp(y + 3, 0, 6) * (1/6)) and a
   [1,1,1,C] scale, x read by two members; the SiLU result has two readers, so two chains. */
static tosac_graph *swish(void)
{
    static const int64_t d[4] = {1, 29, 31, 24}, dc[4] = {1, 1, 1, 24}, d1[4] = {1, 1, 1, 1};
    gb x = gb_new();
    tosac_value *in = input(&x, "x", TOSAC_DTYPE_FP32, d);
    float w[24];
    for (int i = 0; i < 24; i++) w[i] = 0.25f + 0.125f * (float)i;
    const float three = 3.0f, sixth = 1.0f / 6.0f;
    tosac_value *cw = cst(&x, "w", TOSAC_DTYPE_FP32, 4, dc, NULL, w), *c3 = cst(&x, "three", TOSAC_DTYPE_FP32, 4, d1, NULL, &three);
    tosac_value *c6 = cst(&x, "sixth", TOSAC_DTYPE_FP32, 4, d1, NULL, &sixth);
    const char *names[] = {"sig", "silu", "h3", "hc", "hm", "hs", "out"};
    tosac_value *t[7];
    for (int i = 0; i < 7; i++) t[i] = tensor(&x, names[i], TOSAC_DTYPE_FP32, d);
    node(&x, TOSAC_OP_SIGMOID, 1, &in, t[0]);
    bin(&x, TOSAC_OP_MUL, in, t[0], t[1]);
    bin(&x, TOSAC_OP_ADD, t[1], c3, t[2]);
    const float lo = 0.0f, hi = 6.0f;
    clamp_bounds(&x, node(&x, TOSAC_OP_CLAMP, 1, &t[2], t[3]), &lo, &hi, 4);
    bin(&x, TOSAC_OP_MUL, t[1], t[3], t[4]);
    bin(&x, TOSAC_OP_MUL, t[4], c6, t[5]);
    bin(&x, TOSAC_OP_MUL, t[5], cw, t[6]);
    output(&x, t[6]);
    if (!x.ok) tosac_graph_destroy(x.g);
    return x.ok ? x.g : NULL;
}

/* SiLU in both operand orders, SIGMOID(x) * x then y * SIGMOID(y): two chains whose pair runs as
   one row (tosac_kstrip_fuse), over rows of 37 (vector tails) and the inputs' NaN and infinities. */
static tosac_graph *silu_orders(void)
{
    static const int64_t d[4] = {1, 7, 13, 37};
    gb x = gb_new();
    tosac_value *in = input(&x, "x", TOSAC_DTYPE_FP32, d);
    const char *names[] = {"s1", "y", "s2", "out"};
    tosac_value *t[4];
    for (int i = 0; i < 4; i++) t[i] = tensor(&x, names[i], TOSAC_DTYPE_FP32, d);
    node(&x, TOSAC_OP_SIGMOID, 1, &in, t[0]);
    bin(&x, TOSAC_OP_MUL, t[0], in, t[1]);
    node(&x, TOSAC_OP_SIGMOID, 1, &t[1], t[2]);
    bin(&x, TOSAC_OP_MUL, t[1], t[2], t[3]);
    output(&x, t[3]);
    if (!x.ok) tosac_graph_destroy(x.g);
    return x.ok ? x.g : NULL;
}

/* Hard-swish twice, x * CLAMP(x * k0 + k1) as MUL, ADD, CLAMP, MUL: first with every operand
   order reversed and nan_mode IGNORE, then in the usual order with PROPAGATE; both chains run as
   one row (tosac_kstrip_fuse), over rows of 37 and the inputs' NaN and infinities. */
static tosac_graph *hswish_orders(void)
{
    static const int64_t d[4] = {1, 7, 13, 37}, d1[4] = {1, 1, 1, 1};
    gb x = gb_new();
    tosac_value *in = input(&x, "x", TOSAC_DTYPE_FP32, d);
    const float k0 = 1.0f / 6.0f, k1 = 0.5f, lo = 0.0f, hi = 1.0f;
    tosac_value *c0 = cst(&x, "k0", TOSAC_DTYPE_FP32, 4, d1, NULL, &k0), *c1 = cst(&x, "k1", TOSAC_DTYPE_FP32, 4, d1, NULL, &k1);
    const char *names[] = {"a1", "a2", "a3", "y", "b1", "b2", "b3", "out"};
    tosac_value *t[8];
    for (int i = 0; i < 8; i++) t[i] = tensor(&x, names[i], TOSAC_DTYPE_FP32, d);
    bin(&x, TOSAC_OP_MUL, c0, in, t[0]);
    bin(&x, TOSAC_OP_ADD, c1, t[0], t[1]);
    clamp_bounds(&x, node(&x, TOSAC_OP_CLAMP, 1, &t[1], t[2]), &lo, &hi, 4);
    bin(&x, TOSAC_OP_MUL, t[2], in, t[3]);
    bin(&x, TOSAC_OP_MUL, t[3], c0, t[4]);
    bin(&x, TOSAC_OP_ADD, t[4], c1, t[5]);
    tosac_node *cl = node(&x, TOSAC_OP_CLAMP, 1, &t[5], t[6]);
    clamp_bounds(&x, cl, &lo, &hi, 4);
    if (!cl || tosac_node_set_int(cl, TOSAC_ATTR_CLAMP_nan_mode, TOSAC_NAN_PROPAGATE) != TOSAC_OK) x.ok = false;
    bin(&x, TOSAC_OP_MUL, t[3], t[6], t[7]);
    output(&x, t[7]);
    if (!x.ok) tosac_graph_destroy(x.g);
    return x.ok ? x.g : NULL;
}

/* An fp32 convolution (op: CONV2D or DEPTHWISE_CONV2D; k x k, stride s, padding pad [top, bottom,
   left, right]) of in (dims d) to c channels; weights from a fixed sequence. */
static tosac_value *conv_sp(gb *x, const char *name, tosac_op op, tosac_value *in, const int64_t *d, int64_t c, int k, int s,
                            const int32_t *pad)
{
    const int64_t wd[4] = {op == TOSAC_OP_CONV2D ? c : k, k, op == TOSAC_OP_CONV2D ? k : d[3], op == TOSAC_OP_CONV2D ? d[3] : 1};
    const int64_t od[4] = {d[0], (d[1] - 1 + pad[0] + pad[1] - (k - 1)) / s + 1, (d[2] - 1 + pad[2] + pad[3] - (k - 1)) / s + 1, c};
    const int64_t one = 1;
    const int64_t nw = wd[0] * wd[1] * wd[2] * wd[3];
    float *w = malloc((size_t)nw * sizeof *w), *b = malloc((size_t)c * sizeof *b), zero = 0.0f;
    for (int64_t i = 0; i < nw; i++) w[i] = (float)((i * 37 + 11) % 29 - 14) / 32.0f;
    for (int64_t i = 0; i < c; i++) b[i] = (float)(i % 7) / 4.0f - 0.75f;
    char nm[64];
    tosac_value *ops[5];
    ops[0] = in;
    snprintf(nm, sizeof nm, "%s_w", name);
    ops[1] = cst(x, nm, TOSAC_DTYPE_FP32, 4, wd, NULL, w);
    snprintf(nm, sizeof nm, "%s_b", name);
    ops[2] = cst(x, nm, TOSAC_DTYPE_FP32, 1, &c, NULL, b);
    snprintf(nm, sizeof nm, "%s_izp", name);
    ops[3] = cst(x, nm, TOSAC_DTYPE_FP32, 1, &one, NULL, &zero);
    snprintf(nm, sizeof nm, "%s_wzp", name);
    ops[4] = cst(x, nm, TOSAC_DTYPE_FP32, 1, &one, NULL, &zero);
    free(w);
    free(b);
    tosac_value *out = tensor(x, name, TOSAC_DTYPE_FP32, od);
    tosac_node *n = node(x, op, 5, ops, out);
    const int32_t st[2] = {s, s}, dil[2] = {1, 1};
    if (!n || tosac_node_set_ints(n, TOSAC_ATTR_CONV2D_pad, pad, 4) != TOSAC_OK ||
        tosac_node_set_ints(n, TOSAC_ATTR_CONV2D_stride, st, 2) != TOSAC_OK ||
        tosac_node_set_ints(n, TOSAC_ATTR_CONV2D_dilation, dil, 2) != TOSAC_OK ||
        tosac_node_set_int(n, TOSAC_ATTR_CONV2D_acc_type, TOSAC_DTYPE_FP32) != TOSAC_OK)
        x->ok = false;
    return out;
}

/* The same, stride 1, padded to the input's size. */
static tosac_value *conv(gb *x, const char *name, tosac_op op, tosac_value *in, const int64_t *d, int64_t c, int k)
{
    const int32_t pd = (int32_t)(k / 2), pad[4] = {pd, pd, pd, pd};
    return conv_sp(x, name, op, in, d, c, k, 1, pad);
}

/* Chains run from a convolution's epilogue (fuse.c tails): a 3x3 CONV2D then SiLU; a depthwise
   3x3 then hard-swish (x * clamp(x / 6 + 0.5, 0, 1)); a 1x1 CONV2D with its own CLAMP, then SiLU
   times the first SiLU's result (produced earlier); two 1x1 convolutions added (the chain can
   only run from the second's epilogue). */
static tosac_graph *conv_tails(void)
{
    static const int64_t d[4] = {1, 29, 31, 24}, d1[4] = {1, 1, 1, 1};
    const int64_t c = 40, dc[4] = {1, 29, 31, 40};
    gb x = gb_new();
    tosac_value *in = input(&x, "x", TOSAC_DTYPE_FP32, d);
    const float sixth = 1.0f / 6.0f, half = 0.5f, zero = 0.0f, one = 1.0f, six = 6.0f;
    tosac_value *c6 = cst(&x, "sixth", TOSAC_DTYPE_FP32, 4, d1, NULL, &sixth), *ch = cst(&x, "half", TOSAC_DTYPE_FP32, 4, d1, NULL, &half);
    const char *names[] = {"sig", "silu", "hm", "ha", "hc", "hs", "rl", "us", "um", "um2"};
    tosac_value *t[10];
    for (int i = 0; i < 10; i++) t[i] = tensor(&x, names[i], TOSAC_DTYPE_FP32, dc);
    tosac_value *a = conv(&x, "a", TOSAC_OP_CONV2D, in, d, c, 3);
    node(&x, TOSAC_OP_SIGMOID, 1, &a, t[0]);
    bin(&x, TOSAC_OP_MUL, a, t[0], t[1]);
    tosac_value *dw = conv(&x, "dw", TOSAC_OP_DEPTHWISE_CONV2D, t[1], dc, c, 3);
    bin(&x, TOSAC_OP_MUL, dw, c6, t[2]);
    bin(&x, TOSAC_OP_ADD, t[2], ch, t[3]);
    clamp_bounds(&x, node(&x, TOSAC_OP_CLAMP, 1, &t[3], t[4]), &zero, &one, 4);
    bin(&x, TOSAC_OP_MUL, dw, t[4], t[5]);
    tosac_value *pw = conv(&x, "pw", TOSAC_OP_CONV2D, t[5], dc, c, 1);
    clamp_bounds(&x, node(&x, TOSAC_OP_CLAMP, 1, &pw, t[6]), &zero, &six, 4);
    node(&x, TOSAC_OP_SIGMOID, 1, &t[6], t[7]);
    bin(&x, TOSAC_OP_MUL, t[6], t[7], t[8]);
    bin(&x, TOSAC_OP_MUL, t[8], t[1], t[9]);
    tosac_value *p1 = conv(&x, "p1", TOSAC_OP_CONV2D, t[9], dc, c, 1), *p2 = conv(&x, "p2", TOSAC_OP_CONV2D, t[5], dc, c, 1);
    tosac_value *sum = tensor(&x, "sum", TOSAC_DTYPE_FP32, dc);
    bin(&x, TOSAC_OP_ADD, p1, p2, sum);
    output(&x, sum);
    if (!x.ok) tosac_graph_destroy(x.g);
    return x.ok ? x.g : NULL;
}

/* a * SIGMOID(a) of shape d (SiLU, a tail of the convolution that produces a). */
static tosac_value *silu(gb *x, tosac_value *a, const int64_t *d)
{
    tosac_value *sig = tensor(x, "sig", TOSAC_DTYPE_FP32, d), *m = tensor(x, "m", TOSAC_DTYPE_FP32, d);
    node(x, TOSAC_OP_SIGMOID, 1, &a, sig);
    bin(x, TOSAC_OP_MUL, a, sig, m);
    return m;
}

/* Tails of convolutions with few pixels and many channels, which split over column groups and
   run the tail once every group has stored its rows (k_conv.c late_post): x [1,7,9,128] (63
   pixels: an odd count, a short last register tile); a = 3x3 CONV2D to 320 channels (5 panel
   blocks, one group each) then SiLU; b = 1x1 CONV2D of it to 256 channels plus r = 1x1 CONV2D of
   x (the ADD runs from the second's epilogue). */
static tosac_graph *late_tails(void)
{
    static const int64_t d[4] = {1, 7, 9, 128}, da[4] = {1, 7, 9, 320}, db[4] = {1, 7, 9, 256};
    gb x = gb_new();
    tosac_value *in = input(&x, "x", TOSAC_DTYPE_FP32, d);
    tosac_value *m = silu(&x, conv(&x, "a", TOSAC_OP_CONV2D, in, d, 320, 3), da);
    tosac_value *b = conv(&x, "b", TOSAC_OP_CONV2D, m, da, 256, 1), *r = conv(&x, "r", TOSAC_OP_CONV2D, in, d, 256, 1);
    tosac_value *sum = tensor(&x, "sum", TOSAC_DTYPE_FP32, db);
    bin(&x, TOSAC_OP_ADD, b, r, sum);
    output(&x, sum);
    if (!x.ok) tosac_graph_destroy(x.g);
    return x.ok ? x.g : NULL;
}

/* A 1x1 CONV2D of few pixels with many weights, as in an SE block's one pixel (192 x 4160: split
   over column groups however few its multiply-adds; 4160 outputs start the threads) then SiLU, a
   tail run after every group. Of the 3 pixels the middle one holds no special input. */
static tosac_graph *one_pixel_tail(void)
{
    static const int64_t d[4] = {1, 1, 3, 192}, da[4] = {1, 1, 3, 4160};
    gb x = gb_new();
    tosac_value *in = input(&x, "x", TOSAC_DTYPE_FP32, d);
    output(&x, silu(&x, conv(&x, "a", TOSAC_OP_CONV2D, in, d, 4160, 1), da));
    if (!x.ok) tosac_graph_destroy(x.g);
    return x.ok ? x.g : NULL;
}

/* fp32 convolutions with a fused CLAMP of each form the AVX-512 panels end with (k_gemm.c
   kgf_end: NaN kept and a non-zero upper bound; NaN to a non-zero lower bound; the general
   blends for zero bounds; either of the first two with an upper bound of +inf, no min), on an input with NaN, infinities and -0: a 3x3 CONV2D to 24 channels
   (rows of 29 pixels read in place, border pixels through patch rows) then a 1x1 to 40. */
static tosac_graph *clamp_ends(int form)
{
    static const int64_t d[4] = {1, 13, 29, 24}, d24[4] = {1, 13, 29, 24}, d40[4] = {1, 13, 29, 40};
    static const float bounds[6][2] = {{0.0f, 6.0f},        {-1.0f, 6.0f}, {-3.0f, 0.0f},
                                       {0.0f, 1.0f / 0.0f}, {0.0f, 1.0f / 0.0f}, {-2.0f, 1.0f / 0.0f}};
    const bool ignore = form == 1 || form == 3 || form == 5;
    gb x = gb_new();
    tosac_value *in = input(&x, "x", TOSAC_DTYPE_FP32, d);
    tosac_value *a = conv(&x, "a", TOSAC_OP_CONV2D, in, d, 24, 3), *ac = tensor(&x, "ac", TOSAC_DTYPE_FP32, d24);
    tosac_value *ns[2] = {ac, tensor(&x, "bc", TOSAC_DTYPE_FP32, d40)};
    tosac_node *n = node(&x, TOSAC_OP_CLAMP, 1, &a, ac);
    tosac_value *b = conv(&x, "b", TOSAC_OP_CONV2D, ac, d24, 40, 1);
    tosac_node *m = node(&x, TOSAC_OP_CLAMP, 1, &b, ns[1]);
    tosac_node *cl[2] = {n, m};
    for (int i = 0; i < 2; i++)
        if (!cl[i] || tosac_node_set_bytes(cl[i], TOSAC_ATTR_CLAMP_min_val, &bounds[form][0], 4) != TOSAC_OK ||
            tosac_node_set_bytes(cl[i], TOSAC_ATTR_CLAMP_max_val, &bounds[form][1], 4) != TOSAC_OK ||
            tosac_node_set_int(cl[i], TOSAC_ATTR_CLAMP_nan_mode, ignore ? TOSAC_NAN_IGNORE : TOSAC_NAN_PROPAGATE) != TOSAC_OK)
            x.ok = false;
    output(&x, ns[1]);
    if (!x.ok) tosac_graph_destroy(x.g);
    return x.ok ? x.g : NULL;
}

/* SLICE start[4] size[4] of in into a new tensor `name`. */
static tosac_value *slice(gb *x, const char *name, tosac_value *in, const int64_t *start, const int64_t *size)
{
    char nm[64];
    tosac_value *ops[3] = {in, NULL, NULL};
    snprintf(nm, sizeof nm, "%s_start", name);
    ops[1] = x->ok ? chk(x, tosac_block_add_const_shape(x->b, nm, start, 4)) : NULL;
    snprintf(nm, sizeof nm, "%s_size", name);
    ops[2] = x->ok ? chk(x, tosac_block_add_const_shape(x->b, nm, size, 4)) : NULL;
    tosac_value *out = tensor(x, name, TOSAC_DTYPE_FP32, size);
    node(x, TOSAC_OP_SLICE, 3, ops, out);
    return out;
}

/* SLICE views (fuse.c): a = 3x3 CONV2D [1,29,31,16]; views: a[:27, :29] into a 1x1 stride-2
   CONV2D, a[:28, :30] into a 3x3 stride-2 DEPTHWISE_CONV2D padded above and left only, and
   e[:27, :29] where e = a + k is an ADD that could run in place over a (a must live on to the
   convolutions reading it); no views: a[:27, :29] into a 3x3 stride-2 CONV2D padded all round
   (it reads the dropped row and column as padding) and a[1:28, 1:30] (not at the origin). The
   results are summed. */
static tosac_graph *slice_views(void)
{
    static const int64_t d[4] = {1, 29, 31, 24}, da[4] = {1, 29, 31, 16}, z[4] = {0, 0, 0, 0}, o1[4] = {0, 1, 1, 0};
    static const int64_t s27[4] = {1, 27, 29, 16}, s28[4] = {1, 28, 30, 16}, dq[4] = {1, 14, 15, 32}, dd[4] = {1, 14, 15, 16};
    static const int32_t p0[4] = {0, 0, 0, 0}, p1[4] = {1, 1, 1, 1}, ptl[4] = {1, 0, 1, 0};
    gb x = gb_new();
    tosac_value *in = input(&x, "x", TOSAC_DTYPE_FP32, d);
    tosac_value *a = conv(&x, "a", TOSAC_OP_CONV2D, in, d, 16, 3);
    tosac_value *v1 = slice(&x, "v1", a, z, s27), *v2 = slice(&x, "v2", a, z, s28), *n1 = slice(&x, "n1", a, z, s27);
    tosac_value *n2 = slice(&x, "n2", a, o1, s27);
    tosac_value *v3 = slice(&x, "v3", a, z, s27);
    const float kf = 0.375f;
    static const int64_t d1[4] = {1, 1, 1, 1};
    tosac_value *e = tensor(&x, "e", TOSAC_DTYPE_FP32, da);
    bin(&x, TOSAC_OP_ADD, a, cst(&x, "k", TOSAC_DTYPE_FP32, 4, d1, NULL, &kf), e);
    tosac_value *v4 = slice(&x, "v4", e, z, s27);
    tosac_value *r[6];
    r[0] = conv_sp(&x, "c1", TOSAC_OP_CONV2D, v1, s27, 32, 1, 2, p0);
    tosac_value *dw = conv_sp(&x, "c2", TOSAC_OP_DEPTHWISE_CONV2D, v2, s28, 16, 3, 2, ptl);
    r[1] = conv_sp(&x, "c2p", TOSAC_OP_CONV2D, dw, dd, 32, 1, 1, p0);
    r[2] = conv_sp(&x, "c3", TOSAC_OP_CONV2D, n1, s27, 32, 3, 2, p1);
    r[3] = conv_sp(&x, "c4", TOSAC_OP_CONV2D, n2, s27, 32, 1, 2, p0);
    r[4] = conv_sp(&x, "c5", TOSAC_OP_CONV2D, v3, s27, 32, 1, 2, p0);
    r[5] = conv_sp(&x, "c6", TOSAC_OP_CONV2D, v4, s27, 32, 1, 2, p0);
    tosac_value *sum = r[0];
    for (int i = 1; i < 6; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "sum%d", i);
        tosac_value *t = tensor(&x, nm, TOSAC_DTYPE_FP32, dq);
        bin(&x, TOSAC_OP_ADD, sum, r[i], t);
        sum = t;
    }
    output(&x, sum);
    if (!x.ok) tosac_graph_destroy(x.g);
    return x.ok ? x.g : NULL;
}

/* One squeeze-and-excitation block on m [1, h, w, c]: the mean over the pixels (two REDUCE_SUMs
   and a MUL), its SIGMOID, m times that per-channel scale (a prologue of the next convolution),
   then a 1x1 CONV2D to co channels. */
static tosac_value *se(gb *x, const char *name, tosac_value *m, const int64_t *d, int64_t co)
{
    const int64_t dh[4] = {1, 1, d[2], d[3]}, dc[4] = {1, 1, 1, d[3]};
    const float inv = 1.0f / (float)(d[1] * d[2]);
    char nm[64];
    tosac_value *t[5];
    for (int i = 0; i < 5; i++) {
        snprintf(nm, sizeof nm, "%s_%d", name, i);
        t[i] = tensor(x, nm, TOSAC_DTYPE_FP32, i == 0 ? dh : i < 4 ? dc : d);
    }
    attr_int(x, node(x, TOSAC_OP_REDUCE_SUM, 1, &m, t[0]), TOSAC_ATTR_REDUCE_SUM_axis, 1);
    attr_int(x, node(x, TOSAC_OP_REDUCE_SUM, 1, &t[0], t[1]), TOSAC_ATTR_REDUCE_SUM_axis, 2);
    snprintf(nm, sizeof nm, "%s_inv", name);
    static const int64_t d1[4] = {1, 1, 1, 1};
    bin(x, TOSAC_OP_MUL, t[1], cst(x, nm, TOSAC_DTYPE_FP32, 4, d1, NULL, &inv), t[2]);
    node(x, TOSAC_OP_SIGMOID, 1, &t[2], t[3]);
    bin(x, TOSAC_OP_MUL, m, t[3], t[4]);
    static const int32_t p0[4] = {0, 0, 0, 0};
    snprintf(nm, sizeof nm, "%s_pw", name);
    return conv_sp(x, nm, TOSAC_OP_CONV2D, t[4], d, co, 1, 1, p0);
}

/* Prologues (fuse.c): SE blocks whose scaled result only the next 1x1 CONV2D reads. a = 3x3
   CONV2D [1,29,31,40] then SiLU m (a tail); SE 1 to 40 channels with a CLAMP the convolution
   absorbs, then + m (a tail of the same convolution); a 3x3 stride-3 CONV2D to [1,10,11,256], SE 2
   to 128 channels (110 pixels: few pixel blocks, 2^21 multiply-adds, the split over column groups
   a prologue rules out). The result: the second SE's output. */
static tosac_graph *se_blocks(void)
{
    static const int64_t d[4] = {1, 29, 31, 24}, dc[4] = {1, 29, 31, 40}, d2[4] = {1, 10, 11, 256};
    static const int32_t p3[4] = {1, 0, 2, 0};
    const float zero = 0.0f, six = 6.0f;
    gb x = gb_new();
    tosac_value *in = input(&x, "x", TOSAC_DTYPE_FP32, d);
    tosac_value *a = conv(&x, "a", TOSAC_OP_CONV2D, in, d, 40, 3);
    tosac_value *t[4];
    const char *names[] = {"sig", "m", "rl", "res"};
    for (int i = 0; i < 4; i++) t[i] = tensor(&x, names[i], TOSAC_DTYPE_FP32, dc);
    node(&x, TOSAC_OP_SIGMOID, 1, &a, t[0]);
    bin(&x, TOSAC_OP_MUL, a, t[0], t[1]);
    tosac_value *p = se(&x, "se1", t[1], dc, 40);
    clamp_bounds(&x, node(&x, TOSAC_OP_CLAMP, 1, &p, t[2]), &zero, &six, 4);
    bin(&x, TOSAC_OP_ADD, t[2], t[1], t[3]);
    tosac_value *b = conv_sp(&x, "b", TOSAC_OP_CONV2D, t[3], dc, 256, 3, 3, p3);
    output(&x, se(&x, "se2", b, d2, 128));
    if (!x.ok) tosac_graph_destroy(x.g);
    return x.ok ? x.g : NULL;
}

/* Every fp32 form a chain runs strip by strip (exec.c chain_strips), in one chain over [1, h, w, c]:
   each unary op, ADD / SUB / MUL against the input, an intermediate, a [1,1,1,c] row (as either
   operand) and a [1,1,1,1] scalar, MAXIMUM / MINIMUM and CLAMP in both nan modes, NEGATE with
   zero points. c > 1024 splits rows into strips of columns; c = 1 makes the row a scalar. */
static tosac_graph *strip_forms(int64_t h, int64_t w, int64_t c)
{
    const int64_t d[4] = {1, h, w, c}, dc[4] = {1, 1, 1, c}, d1[4] = {1, 1, 1, 1}, one = 1;
    gb x = gb_new();
    tosac_value *in = input(&x, "x", TOSAC_DTYPE_FP32, d);
    float *wv = malloc((size_t)c * sizeof *wv);
    for (int64_t i = 0; i < c; i++) wv[i] = (float)(i % 23) / 4.0f - 2.5f;
    const float s35 = 3.5f, zero = 0.0f, lo = -4.0f, hi = 6.0f;
    tosac_value *cw = cst(&x, "w", TOSAC_DTYPE_FP32, 4, dc, NULL, wv), *cs = cst(&x, "s", TOSAC_DTYPE_FP32, 4, d1, NULL, &s35);
    free(wv);
    tosac_value *zp[2] = {cst(&x, "zp1", TOSAC_DTYPE_FP32, 1, &one, NULL, &zero), cst(&x, "zp2", TOSAC_DTYPE_FP32, 1, &one, NULL, &zero)};
    int nt = 0;
    tosac_value *t = in, *u = tensor(&x, "u", TOSAC_DTYPE_FP32, d);
    node(&x, TOSAC_OP_SIGMOID, 1, &in, u);
#define STEP1(OP) (snprintf(nm, sizeof nm, "t%d", nt++), nx = tensor(&x, nm, TOSAC_DTYPE_FP32, d), nd = node(&x, OP, 1, &t, nx), t = nx)
#define STEP2(OP, A, B) (snprintf(nm, sizeof nm, "t%d", nt++), nx = tensor(&x, nm, TOSAC_DTYPE_FP32, d), nd = bin(&x, OP, A, B, nx), t = nx)
    char nm[32];
    tosac_value *nx;
    tosac_node *nd;
    STEP1(TOSAC_OP_ABS);
    STEP2(TOSAC_OP_SUB, cw, t);
    STEP2(TOSAC_OP_MAXIMUM, t, in);
    attr_int(&x, nd, TOSAC_ATTR_MAXIMUM_nan_mode, TOSAC_NAN_PROPAGATE);
    STEP2(TOSAC_OP_MINIMUM, cw, t);
    attr_int(&x, nd, TOSAC_ATTR_MINIMUM_nan_mode, TOSAC_NAN_IGNORE);
    STEP1(TOSAC_OP_TANH);
    STEP2(TOSAC_OP_MUL, t, cs);
    STEP1(TOSAC_OP_EXP);
    STEP1(TOSAC_OP_RECIPROCAL);
    snprintf(nm, sizeof nm, "t%d", nt++), nx = tensor(&x, nm, TOSAC_DTYPE_FP32, d);
    tosac_value *nin[3] = {t, zp[0], zp[1]};
    node(&x, TOSAC_OP_NEGATE, 3, nin, nx), t = nx;
    STEP2(TOSAC_OP_ADD, t, in);
    STEP1(TOSAC_OP_CLAMP);
    clamp_bounds(&x, nd, &lo, &hi, 4);
    attr_int(&x, nd, TOSAC_ATTR_CLAMP_nan_mode, TOSAC_NAN_PROPAGATE);
    STEP2(TOSAC_OP_MUL, t, u);
    STEP2(TOSAC_OP_MAXIMUM, t, cw);
    attr_int(&x, nd, TOSAC_ATTR_MAXIMUM_nan_mode, TOSAC_NAN_IGNORE);
    STEP2(TOSAC_OP_MINIMUM, in, t);
    attr_int(&x, nd, TOSAC_ATTR_MINIMUM_nan_mode, TOSAC_NAN_PROPAGATE);
    STEP1(TOSAC_OP_ERF);
    STEP1(TOSAC_OP_SIN);
    STEP2(TOSAC_OP_MUL, cs, t);
    STEP1(TOSAC_OP_COS);
    STEP2(TOSAC_OP_SUB, t, in);
    STEP1(TOSAC_OP_CEIL);
    STEP2(TOSAC_OP_ADD, cw, t);
    STEP1(TOSAC_OP_FLOOR);
    STEP1(TOSAC_OP_LOG);
    STEP1(TOSAC_OP_RSQRT);
    STEP1(TOSAC_OP_CLAMP);
    clamp_bounds(&x, nd, &lo, &hi, 4); /* (IGNORE: the NaNs of LOG and RSQRT become lo) */
    STEP2(TOSAC_OP_ADD, t, cs);
#undef STEP1
#undef STEP2
    output(&x, t);
    if (!x.ok) tosac_graph_destroy(x.g);
    return x.ok ? x.g : NULL;
}

/* INT8: NEGATE (zero points), TABLE, GREATER against a [1,1,1,C] threshold, SELECT. */
static tosac_graph *select_table(void)
{
    static const int64_t d[4] = {1, 3, 67, 101}, dc[4] = {1, 1, 1, 101}, n256 = 256;
    gb x = gb_new();
    tosac_value *a = input(&x, "a", TOSAC_DTYPE_INT8, d);
    int64_t tab[256], thr[101];
    for (int i = 0; i < 256; i++) tab[i] = (i * 73 + 5) % 256 - 128;
    for (int i = 0; i < 101; i++) thr[i] = (i * 29) % 200 - 100;
    tosac_value *ng = tensor(&x, "ng", TOSAC_DTYPE_INT8, d), *tb = tensor(&x, "tb", TOSAC_DTYPE_INT8, d);
    tosac_value *gt = tensor(&x, "gt", TOSAC_DTYPE_BOOL, d), *y = tensor(&x, "y", TOSAC_DTYPE_INT8, d);
    tosac_value *nin[3] = {a, scalar(&x, "nzp1", TOSAC_DTYPE_INT8, 3), scalar(&x, "nzp2", TOSAC_DTYPE_INT8, -7)};
    node(&x, TOSAC_OP_NEGATE, 3, nin, ng);
    tosac_value *tin[2] = {ng, cst(&x, "table", TOSAC_DTYPE_INT8, 1, &n256, tab, NULL)};
    node(&x, TOSAC_OP_TABLE, 2, tin, tb);
    tosac_value *th = cst(&x, "thr", TOSAC_DTYPE_INT8, 4, dc, thr, NULL);
    tosac_value *ai32 = tensor(&x, "a32", TOSAC_DTYPE_INT32, d), *th32 = tensor(&x, "th32", TOSAC_DTYPE_INT32, dc);
    node(&x, TOSAC_OP_CAST, 1, &a, ai32);
    node(&x, TOSAC_OP_CAST, 1, &th, th32);
    bin(&x, TOSAC_OP_GREATER, ai32, th32, gt);
    tosac_value *sin[3] = {gt, tb, a};
    node(&x, TOSAC_OP_SELECT, 3, sin, y);
    output(&x, y);
    if (!x.ok) tosac_graph_destroy(x.g);
    return x.ok ? x.g : NULL;
}

/* INT32 ADD then SUB of [300, 64]: the ADD overflows in the last block only, the SUB in the first
   block only: one by one the ADD fails first. */
static tosac_graph *overflow(void)
{
    static const int64_t d[4] = {1, 1, 300, 64};
    gb x = gb_new();
    tosac_value *a = input(&x, "a", TOSAC_DTYPE_INT32, d), *b = input(&x, "b", TOSAC_DTYPE_INT32, d);
    tosac_value *c = input(&x, "c", TOSAC_DTYPE_INT32, d);
    tosac_value *s = tensor(&x, "s", TOSAC_DTYPE_INT32, d), *y = tensor(&x, "y", TOSAC_DTYPE_INT32, d);
    bin(&x, TOSAC_OP_ADD, a, b, s);
    bin(&x, TOSAC_OP_SUB, s, c, y);
    output(&x, y);
    if (!x.ok) tosac_graph_destroy(x.g);
    return x.ok ? x.g : NULL;
}

static uint32_t rnd_state;
static int tails; /* chains run from an epilogue, summed over the programs created */
static int views; /* SLICE views, summed over the programs created */
static bool nan_levels; /* the graph's NaNs may differ in sign between levels (check_graph) */
/* the graph has SiLU rows (tosac_kstrip_fuse), whose NaN for a NaN x is x's at every level, where
   the unchained SIGMOID and MUL may give it the other sign: 1, the chained output
   matches up to the sign of its NaNs; 2, also the same bits at every level and thread count */
static int nan_pairs;
static int prologues; /* chains run before a convolution reads their rows, summed likewise */
static int strips; /* chains run strip by strip, summed likewise */
static int pairs; /* strip members run in one row with the next (SiLU, hard-swish), summed likewise */
static const uint32_t *observe; /* the observe list of the programs run with chains (NULL: none) */
static uint32_t n_observe;
static uint32_t rnd(void)
{
    rnd_state = rnd_state * 1664525u + 1013904223u;
    return rnd_state >> 8;
}

/* Fills every input: bytes from a fixed sequence; fp32 inputs as values in [-12, 12) with a few
   specials (some beyond exp's normal range); the overflow graph's inputs as described there. */
static void fill_inputs(tosac_program *p, bool overflow_case)
{
    rnd_state = 12345;
    for (uint32_t i = 0; i < tosac_program_input_count(p); i++) {
        tosac_tensor_info in;
        tosac_program_input_info(p, i, &in);
        uint8_t *data = tosac_program_input_ptr(p, i);
        if (in.dtype == TOSAC_DTYPE_FP32) {
            float *f = (float *)(void *)data;
            for (int64_t k = 0; k < in.nelem; k++) f[k] = (float)((int32_t)(rnd() % 24000) - 12000) / 1000.0f;
            f[5] = 1.0f / 0.0f, f[77] = -1.0f / 0.0f, f[in.nelem - 1] = 0.0f / 0.0f, f[in.nelem - 2] = -0.0f;
            /* exp(-x) of these leaves the normal exponents (k_expf's two-power scaling) */
            f[19] = 95.0f, f[20] = -88.5f, f[29] = -87.9f, f[36] = 103.5f;
        } else if (overflow_case) {
            int32_t *v = (int32_t *)(void *)data;
            for (int64_t k = 0; k < in.nelem; k++) v[k] = (int32_t)(rnd() % 2001) - 1000;
            if (i < 2) v[in.nelem - 3] = i == 0 ? INT32_MAX : 7; /* a + b overflows in the last block */
            if (i < 2) v[10] = 1000;
            if (i == 2) v[10] = INT32_MIN + 5; /* s - c overflows in the first block */
        } else {
            for (size_t k = 0; k < in.nbytes; k++) data[k] = (uint8_t)rnd();
        }
    }
}

/* Runs g (chains on or off) on `threads` threads; output 0's bytes into out (n). Returns the
   status and copies the error message into err. */
static tosac_status run(const tosac_graph *g, bool chains, uint32_t threads, uint8_t *out, size_t n, bool overflow_case,
                        char *err, size_t errn, bool *had_chains)
{
    tosac_program_opts o = tosac_program_opts_default();
    o.threads = threads;
    if (chains) o.observe = observe, o.n_observe = n_observe;
    tosac_program *p = NULL;
    rt_fuse_chains_off(!chains);
    tosac_diag *d = tosac_diag_create();
    tosac_status s = tosac_program_create(g, &o, &p, d);
    rt_fuse_chains_off(false);
    for (size_t i = 0; s != TOSAC_OK && i < tosac_diag_count(d); i++) fprintf(stderr, "  %s\n", tosac_diag_message(d, i, NULL));
    tosac_diag_destroy(d);
    if (s != TOSAC_OK) return s;
    char *dump = tosac_program_dump_plan(p);
    if (had_chains) *had_chains = dump && strstr(dump, "\nchain 0: ");
    if (dump && chains) {
        const char *q = dump;
        while ((q = strstr(q, "from the epilogue of")) != NULL) q++, tails++;
        for (q = dump; (q = strstr(q, "(SLICE) read in place by")) != NULL;) q++, views++;
        for (q = dump; (q = strstr(q, "before the input rows of")) != NULL;) q++, prologues++;
        for (q = dump; (q = strstr(q, " in strips of ")) != NULL;) q++, strips++;
        for (q = dump; (q = strstr(q, " in one row with ")) != NULL;) q++, pairs++;
    }
    tosac_string_free(dump);
    EXPECT(tosac_program_threads(p) == threads || tosac_program_threads(p) == 1); /* (a build without threads) */
    fill_inputs(p, overflow_case);
    /* the result goes straight into out, poisoned first: an output a fused path forgets to
       write cannot pass on bytes a previous program left in reused memory */
    memset(out, 0x5A, n);
    EXPECT_EQ_I(tosac_program_bind_output(p, 0, out), TOSAC_OK);
    s = tosac_program_invoke(p, NULL);
    snprintf(err, errn, "%s", tosac_program_last_error(p));
    if (s == TOSAC_OK) {
        tosac_tensor_info oi;
        tosac_program_output_info(p, 0, &oi);
        EXPECT_EQ_I(oi.nbytes, n);
        EXPECT(tosac_program_output_ptr(p, 0) == out);
    }
    tosac_program_destroy(p);
    return s;
}

static void check_graph(const char *name, tosac_graph *g, size_t nbytes, int want_chains)
{
    EXPECT(g != NULL);
    if (!g) return;
    uint8_t *ref = malloc(nbytes), *got = malloc(nbytes), *lref = malloc(nbytes), *first = malloc(nbytes);
    char err[800];
    bool had = false;
    tosac_kernel_limit_isa(TOSAC_KISA_PORTABLE);
    EXPECT_EQ_I(run(g, false, 1, ref, nbytes, false, err, sizeof err, &had), TOSAC_OK);
    EXPECT(!had);
    for (uint32_t level = 0; level <= TOSAC_KISA_AVX512; level++) {
        tosac_kernel_limit_isa(level);
        /* the unchained program at this level: the same bytes as the portable one, except where
           the graph lets a NaN's sign depend on the level (nan_levels) */
        EXPECT_EQ_I(run(g, false, 1, lref, nbytes, false, err, sizeof err, &had), TOSAC_OK);
        if (!nan_levels) EXPECT(!memcmp(ref, lref, nbytes));
        memcpy(ref, lref, nbytes);
        for (uint32_t t = 1; t <= 3; t++) {
            had = false;
            EXPECT_EQ_I(run(g, true, t, got, nbytes, false, err, sizeof err, &had), TOSAC_OK);
            EXPECT(had == (want_chains > 0));
            if (nan_pairs > 1 && (level || t > 1) && memcmp(first, got, nbytes) != 0) {
                fprintf(stderr, "  %s: level %u, %u threads: chained output differs from level 0's\n", name, level, t);
                EXPECT(!"chained output differs between levels");
            }
            if (nan_pairs && !level && t == 1) memcpy(first, got, nbytes);
            if (nan_pairs) { /* NaN against NaN of either sign */
                for (size_t q = 0; q + 4 <= nbytes; q += 4) {
                    float u, v;
                    memcpy(&u, ref + q, 4), memcpy(&v, got + q, 4);
                    if (u != u && v != v) memcpy(got + q, ref + q, 4);
                }
            }
            if (memcmp(ref, got, nbytes) != 0) {
                fprintf(stderr, "  %s: level %u, %u threads: chained output differs\n", name, level, t);
                EXPECT(!"output differs");
            }
        }
    }
    tosac_kernel_limit_isa(TOSAC_KISA_AVX512);
    free(ref);
    free(got);
    free(lref);
    free(first);
    tosac_graph_destroy(g);
}

static void test_residual(void) { check_graph("residual", residual(), 37 * 41 * 13, 1); }
static void test_swish(void)
{
    nan_pairs = 1;
    nan_levels = true; /* (x's NaN through SIGMOID and MUL: the MUL rows' operand order, which
                          differs between levels with clang) */
    check_graph("swish", swish(), 29 * 31 * 24 * 4, 1);
    nan_levels = false;
    nan_pairs = 0;
}
static void test_silu_orders(void)
{
    pairs = 0;
    nan_pairs = 2;
    nan_levels = true; /* (the unchained MUL's NaN sign) */
    check_graph("silu_orders", silu_orders(), 7 * 13 * 37 * 4, 1);
    nan_levels = false;
    nan_pairs = 0;
    EXPECT_EQ_I(pairs, 2 * 3 * (TOSAC_KISA_AVX512 + 1));
}
static void test_hswish_orders(void)
{
    pairs = 0;
    check_graph("hswish_orders", hswish_orders(), 7 * 13 * 37 * 4, 1);
    EXPECT_EQ_I(pairs, 2 * 3 * 3 * (TOSAC_KISA_AVX512 + 1)); /* three links before the last, twice */
}
static void test_select_table(void) { check_graph("select_table", select_table(), 3 * 67 * 101, 1); }
static void test_conv_tails(void)
{
    tails = strips = 0;
    nan_pairs = 1;
    check_graph("conv_tails", conv_tails(), 29 * 31 * 40 * 4, 1);
    nan_pairs = 0;
    EXPECT_EQ_I(tails, 4 * 3 * (TOSAC_KISA_AVX512 + 1)); /* SiLU, hard-swish, SIGMOID-MUL, ADD: every program */
    EXPECT_EQ_I(strips, 3 * 3 * (TOSAC_KISA_AVX512 + 1)); /* all but the lone ADD */
}

/* Strips of whole rows, of part of a row, and with a scalar for the row operand. */
static void test_strip_forms(void)
{
    static const int64_t dims[3][3] = {{3, 5, 1100}, {29, 31, 40}, {37, 41, 1}};
    nan_levels = true; /* (NaNs from LOG and RSQRT of negative values before the last CLAMP) */
    for (int i = 0; i < 3; i++) {
        strips = 0;
        check_graph("strip_forms", strip_forms(dims[i][0], dims[i][1], dims[i][2]), (size_t)(dims[i][0] * dims[i][1] * dims[i][2]) * 4, 1);
        EXPECT_EQ_I(strips, 3 * (TOSAC_KISA_AVX512 + 1));
    }
    nan_levels = false;
}

static void test_late_tails(void)
{
    nan_pairs = 1;
    check_graph("late_tails", late_tails(), 7 * 9 * 256 * 4, 1);
    nan_pairs = 0;
}
static void test_one_pixel_tail(void)
{
    nan_levels = true; /* (the outer pixels' outputs are NaN, whose sign the unchained programs give
                          differently at the portable and vector levels) */
    nan_pairs = 1;
    check_graph("one_pixel_tail", one_pixel_tail(), 3 * 4160 * 4, 1);
    nan_pairs = 0;
    nan_levels = false;
}
static void test_clamp_ends(void)
{
    for (int form = 0; form < 6; form++) check_graph("clamp_ends", clamp_ends(form), 13 * 29 * 40 * 4, 0);
}

/* The views give the bytes of the SLICEs run (no views without chains: rt_fuse_chains_off). */
static void test_slice_views(void)
{
    views = 0;
    check_graph("slice_views", slice_views(), 14 * 15 * 32 * 4, 1);
    EXPECT_EQ_I(views, 4 * 3 * (TOSAC_KISA_AVX512 + 1)); /* v1 .. v4 in every program */
}

/* With an observe list naming v1 and the sum of the first two results, v1 is no view (its SLICE
   runs and writes it); the other views stay. */
static void test_slice_views_observed(void)
{
    tosac_graph *g = slice_views();
    EXPECT(g != NULL);
    if (!g) return;
    const tosac_block *b = g->regions[0]->blocks[0];
    static uint32_t list[2];
    n_observe = 0;
    for (uint32_t i = 0; i < b->n_tensors; i++)
        if (!strcmp(b->tensors[i]->name, "v1") || !strcmp(b->tensors[i]->name, "sum1")) list[n_observe++] = b->tensors[i]->index;
    EXPECT_EQ_I(n_observe, 2);
    observe = list;
    views = 0;
    check_graph("slice_views_observed", g, 14 * 15 * 32 * 4, 1);
    EXPECT_EQ_I(views, 3 * 3 * (TOSAC_KISA_AVX512 + 1));
    observe = NULL, n_observe = 0;
}

/* The prologues give the bytes of the MULs run alone, at every level (see nan_levels). */
static void test_se_blocks(void)
{
    tails = prologues = 0;
    nan_levels = true; /* (the input's NaN reaches every channel's mean: the unchained programs
                          differ in NaN signs between the portable and the AVX2 level) */
    nan_pairs = 1;
    check_graph("se_blocks", se_blocks(), 10 * 11 * 128 * 4, 1);
    nan_pairs = 0;
    nan_levels = false;
    /* per program: the two SE MULs (the mean's MUL feeds a SIGMOID, no convolution) */
    EXPECT_EQ_I(prologues, 2 * 3 * (TOSAC_KISA_AVX512 + 1));
    EXPECT_EQ_I(tails, 2 * 3 * (TOSAC_KISA_AVX512 + 1)); /* SiLU, the ADD */
}

static void test_first_failure(void)
{
    tosac_graph *g = overflow();
    EXPECT(g != NULL);
    if (!g) return;
    const size_t n = 300 * 64 * 4;
    uint8_t *buf = malloc(n);
    char ref[800], got[800];
    bool had = false;
    EXPECT_EQ_I(run(g, false, 1, buf, n, true, ref, sizeof ref, &had), TOSAC_ERR_UNPREDICTABLE);
    EXPECT(strstr(ref, "(ADD)") && strstr(ref, "ADD: REQUIRE"));
    for (uint32_t t = 1; t <= 3; t++) {
        EXPECT_EQ_I(run(g, true, t, buf, n, true, got, sizeof got, &had), TOSAC_ERR_UNPREDICTABLE);
        EXPECT(had);
        if (strcmp(ref, got) != 0) {
            fprintf(stderr, "  %u threads: '%s' instead of '%s'\n", t, got, ref);
            EXPECT(!"a different failure reported");
        }
    }
    free(buf);
    tosac_graph_destroy(g);
}

int main(void)
{
    RUN(test_residual);
    RUN(test_swish);
    RUN(test_silu_orders);
    RUN(test_hswish_orders);
    RUN(test_select_table);
    RUN(test_conv_tails);
    RUN(test_strip_forms);
    RUN(test_late_tails);
    RUN(test_one_pixel_tail);
    RUN(test_clamp_ends);
    RUN(test_slice_views);
    RUN(test_slice_views_observed);
    RUN(test_se_blocks);
    RUN(test_first_failure);
    return test_summary();
}
