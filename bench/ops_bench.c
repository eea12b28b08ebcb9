/*
 * Per-operator throughput of the runtime's kernels: builds a one-operator graph per case, runs it
 * through tosac_program_invoke and prints MAC/s (conv, matmul) or elements/s (the rest).
 *
 *   ops_bench [--seconds S] [--threads N] [--no-winograd] [FILTER]   (FILTER: substring of the case names;
 *   --no-winograd: FP32 and INT8 3x3 convolutions on the direct path, tosac_program_opts.conv_direct)
 *   ops_bench --peak [--seconds S]
 *
 * --peak prints this core's measured fp32 peak (GFLOP/s, one thread, a multiply-add counting 2):
 * a loop of independent fused multiply-adds on the widest vectors the CPU has (AVX-512, AVX2 +
 * FMA, else scalar C), which bench/vs_ort.py divides model throughput by; and, on a CPU with
 * AVX-512 VNNI, the int8 peak (GOP/s, a multiply-add counting 2): the same loop of vpdpbusd
 * (64 u8 x s8 multiply-adds each), the instruction of the int8 convolutions; on an AVX2 CPU
 * without it, of vpmaddwd + vpaddd (16 int16 multiply-adds), theirs there, and beside it the
 * saturating u8 x s8 form of onnxruntime's AVX2 kernels (vpmaddubsw, which exact kernels cannot use).
 *
 * Not a test: figures depend on the machine. Issue notes quote them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tosac/graph.h"
#include "tosac/runtime.h"

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h>
#define PEAK_X86 1
#endif

typedef struct bcase {
    const char *name;
    double work;      /* MACs or elements per invoke */
    const char *unit; /* "MAC" or "elem" */
    tosac_graph *g;
} bcase;

static uint32_t g_rng = 12345;
static uint32_t rnd(void)
{
    g_rng = g_rng * 1664525u + 1013904223u;
    return g_rng >> 8;
}

static void fill(void *p, size_t n)
{
    uint8_t *b = p;
    for (size_t i = 0; i < n; i++) b[i] = (uint8_t)rnd();
}

/* Random constant bytes valid for the type (floats within [-1, 1)). */
static tosac_value *rconst(tosac_block *b, const char *name, tosac_dtype t, int rank, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= shape[i];
    size_t bytes = (size_t)n * (t == TOSAC_DTYPE_FP32 || t == TOSAC_DTYPE_INT32 ? 4 : t == TOSAC_DTYPE_INT16 ? 2 : 1);
    uint8_t *d = malloc(bytes ? bytes : 1);
    if (t == TOSAC_DTYPE_FP32) {
        for (int64_t i = 0; i < n; i++) {
            float f = (float)((int32_t)(rnd() % 2000) - 1000) / 1000.0f;
            memcpy(d + 4 * i, &f, 4);
        }
    } else if (t == TOSAC_DTYPE_INT32) {
        for (int64_t i = 0; i < n; i++) {
            int32_t v = (int32_t)(rnd() % 2001) - 1000;
            memcpy(d + 4 * i, &v, 4);
        }
    } else {
        fill(d, bytes);
    }
    tosac_value *v = tosac_block_add_const(b, name, t, rank, shape, d, bytes);
    free(d);
    return v;
}

static tosac_value *zp(tosac_block *b, const char *name, tosac_dtype t, int64_t value)
{
    const int64_t one = 1;
    uint8_t d[4] = {(uint8_t)value, (uint8_t)(value >> 8), (uint8_t)(value >> 16), (uint8_t)(value >> 24)};
    size_t n = t == TOSAC_DTYPE_INT32 ? 4 : t == TOSAC_DTYPE_INT16 ? 2 : 1;
    if (t == TOSAC_DTYPE_FP32) memset(d, 0, 4), n = 4;
    return tosac_block_add_const(b, name, t, 1, &one, d, n);
}

static tosac_block *new_graph(bcase *c)
{
    c->g = tosac_graph_create();
    return tosac_region_add_block(tosac_graph_add_region(c->g, "main"), "main");
}

static void conv(bcase *c, tosac_op op, tosac_dtype t, int64_t H, int64_t W, int64_t IC, int64_t OC, int64_t K)
{
    tosac_block *b = new_graph(c);
    tosac_dtype acc = t == TOSAC_DTYPE_FP32 ? TOSAC_DTYPE_FP32 : TOSAC_DTYPE_INT32;
    bool dw = op == TOSAC_OP_DEPTHWISE_CONV2D;
    const int64_t in_s[] = {1, H, W, IC}, w_s[] = {OC, K, K, IC}, dw_s[] = {K, K, IC, 1}, b_s[] = {dw ? IC : OC};
    const int64_t out_s[] = {1, H, W, dw ? IC : OC};
    tosac_value *in = tosac_block_add_tensor(b, "in", t, 4, in_s);
    tosac_block_add_input(b, in);
    tosac_value *ops[5] = {in, rconst(b, "w", t, 4, dw ? dw_s : w_s), rconst(b, "bias", acc, 1, b_s),
                           zp(b, "izp", t, 0), zp(b, "wzp", t, 0)};
    tosac_value *out = tosac_block_add_tensor(b, "out", acc, 4, out_s);
    tosac_node *n = tosac_block_add_node(b, op, 5, ops, 1, &out);
    const int32_t pad[] = {(int32_t)(K / 2), (int32_t)(K / 2), (int32_t)(K / 2), (int32_t)(K / 2)}, one[] = {1, 1};
    tosac_node_set_ints(n, 0, pad, 4);
    tosac_node_set_ints(n, 1, one, 2);
    tosac_node_set_ints(n, 2, one, 2);
    tosac_node_set_int(n, 4, acc);
    tosac_block_add_output(b, out);
    c->work = (double)(H * W * (dw ? IC : OC * IC) * K * K);
    c->unit = "MAC";
}

static void matmul(bcase *c, tosac_dtype t, int64_t M, int64_t K, int64_t N)
{
    tosac_block *b = new_graph(c);
    tosac_dtype acc = t == TOSAC_DTYPE_FP32 ? TOSAC_DTYPE_FP32 : TOSAC_DTYPE_INT32;
    const int64_t a_s[] = {1, M, K}, b_s[] = {1, K, N}, o_s[] = {1, M, N};
    tosac_value *a = tosac_block_add_tensor(b, "a", t, 3, a_s);
    tosac_block_add_input(b, a);
    tosac_value *ops[4] = {a, rconst(b, "b", t, 3, b_s), zp(b, "azp", t, 0), zp(b, "bzp", t, 0)};
    tosac_value *out = tosac_block_add_tensor(b, "out", acc, 3, o_s);
    tosac_block_add_node(b, TOSAC_OP_MATMUL, 4, ops, 1, &out);
    tosac_block_add_output(b, out);
    c->work = (double)(M * K * N);
    c->unit = "MAC";
}

static void binary(bcase *c, tosac_op op, tosac_dtype t, int64_t n)
{
    tosac_block *b = new_graph(c);
    const int64_t s[] = {n};
    tosac_value *ops[3] = {tosac_block_add_tensor(b, "a", t, 1, s), tosac_block_add_tensor(b, "b", t, 1, s),
                           zp(b, "shift", TOSAC_DTYPE_INT8, 0)};
    tosac_block_add_input(b, ops[0]);
    tosac_block_add_input(b, ops[1]);
    tosac_value *out = tosac_block_add_tensor(b, "out", t, 1, s);
    tosac_block_add_node(b, op, op == TOSAC_OP_MUL ? 3 : 2, ops, 1, &out);
    tosac_block_add_output(b, out);
    c->work = (double)n;
    c->unit = "elem";
}

/* a [R, C] times b [1, C] (the squeeze-excite blocks' per-channel scale) */
static void binary_rows(bcase *c, tosac_op op, int64_t R, int64_t C)
{
    tosac_block *b = new_graph(c);
    const int64_t s[] = {R, C}, bs[] = {1, C};
    tosac_value *ops[3] = {tosac_block_add_tensor(b, "a", TOSAC_DTYPE_FP32, 2, s),
                           tosac_block_add_tensor(b, "b", TOSAC_DTYPE_FP32, 2, bs), zp(b, "shift", TOSAC_DTYPE_INT8, 0)};
    tosac_block_add_input(b, ops[0]);
    tosac_block_add_input(b, ops[1]);
    tosac_value *out = tosac_block_add_tensor(b, "out", TOSAC_DTYPE_FP32, 2, s);
    tosac_block_add_node(b, op, op == TOSAC_OP_MUL ? 3 : 2, ops, 1, &out);
    tosac_block_add_output(b, out);
    c->work = (double)(R * C);
    c->unit = "elem";
}

static void unary(bcase *c, tosac_op op, int64_t n)
{
    tosac_block *b = new_graph(c);
    const int64_t s[] = {n};
    tosac_value *in = tosac_block_add_tensor(b, "in", TOSAC_DTYPE_FP32, 1, s);
    tosac_block_add_input(b, in);
    tosac_value *out = tosac_block_add_tensor(b, "out", TOSAC_DTYPE_FP32, 1, s);
    tosac_block_add_node(b, op, 1, &in, 1, &out);
    tosac_block_add_output(b, out);
    c->work = (double)n;
    c->unit = "elem";
}

/* x * SIGMOID(x) of n floats (SIGMOID, then MUL by x): the runtime fuses the two into one SiLU row */
static void silu(bcase *c, int64_t n)
{
    tosac_block *b = new_graph(c);
    const int64_t s[] = {n};
    tosac_value *in = tosac_block_add_tensor(b, "in", TOSAC_DTYPE_FP32, 1, s);
    tosac_block_add_input(b, in);
    tosac_value *sig = tosac_block_add_tensor(b, "sig", TOSAC_DTYPE_FP32, 1, s);
    tosac_block_add_node(b, TOSAC_OP_SIGMOID, 1, &in, 1, &sig);
    tosac_value *ops[3] = {in, sig, zp(b, "shift", TOSAC_DTYPE_INT8, 0)};
    tosac_value *out = tosac_block_add_tensor(b, "out", TOSAC_DTYPE_FP32, 1, s);
    tosac_block_add_node(b, TOSAC_OP_MUL, 3, ops, 1, &out);
    tosac_block_add_output(b, out);
    c->work = (double)n;
    c->unit = "elem";
}

/* One RESCALE by a single scale (multiplier 1518500250, the given shift) of a [rows, cols] tensor:
   int32 -> int8 (a convolution's output) or int8 -> int32 (a residual join's input; the 256-entry
   table of results, in blocks of 8192 elements as an elementwise chain gives it). */
typedef struct {
    tosac_dtype in, out;
    int32_t izp, ozp;
    int8_t shift;
} rescale_form;
static const rescale_form RS_I32_I8 = {TOSAC_DTYPE_INT32, TOSAC_DTYPE_INT8, 0, -3, 38};
static const rescale_form RS_I8_I32 = {TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT32, -5, 0, 20};

static void rescale(bcase *c, rescale_form f, int64_t rows, int64_t cols, uint32_t rounding)
{
    tosac_block *b = new_graph(c);
    const int64_t s[] = {rows, cols}, one = 1;
    tosac_value *in = tosac_block_add_tensor(b, "in", f.in, 2, s);
    tosac_block_add_input(b, in);
    const int32_t mult = 1518500250;
    tosac_value *ops[5] = {in, tosac_block_add_const(b, "m", TOSAC_DTYPE_INT32, 1, &one, &mult, 4),
                           tosac_block_add_const(b, "s", TOSAC_DTYPE_INT8, 1, &one, &f.shift, 1),
                           zp(b, "izp", f.in, f.izp), zp(b, "ozp", f.out, f.ozp)};
    tosac_value *out = tosac_block_add_tensor(b, "out", f.out, 2, s);
    tosac_node *nd = tosac_block_add_node(b, TOSAC_OP_RESCALE, 5, ops, 1, &out);
    tosac_node_set_int(nd, TOSAC_ATTR_RESCALE_scale32, 1);
    tosac_node_set_int(nd, TOSAC_ATTR_RESCALE_rounding_mode, rounding);
    tosac_block_add_output(b, out);
    c->work = (double)(rows * cols);
    c->unit = "elem";
}

static void pool(bcase *c, tosac_op op, int64_t H, int64_t W, int64_t C)
{
    tosac_block *b = new_graph(c);
    const int64_t s[] = {1, H, W, C};
    tosac_value *in = tosac_block_add_tensor(b, "in", TOSAC_DTYPE_INT8, 4, s);
    tosac_block_add_input(b, in);
    tosac_value *ops[3] = {in, zp(b, "izp", TOSAC_DTYPE_INT8, 0), zp(b, "ozp", TOSAC_DTYPE_INT8, 0)};
    tosac_value *out = tosac_block_add_tensor(b, "out", TOSAC_DTYPE_INT8, 4, s);
    bool avg = op == TOSAC_OP_AVG_POOL2D;
    tosac_node *n = tosac_block_add_node(b, op, avg ? 3 : 1, ops, 1, &out);
    const int32_t k[] = {3, 3}, st[] = {1, 1}, pad[] = {1, 1, 1, 1};
    tosac_node_set_ints(n, 0, k, 2);
    tosac_node_set_ints(n, 1, st, 2);
    tosac_node_set_ints(n, 2, pad, 4);
    tosac_node_set_int(n, 3, avg ? TOSAC_DTYPE_INT32 : TOSAC_NAN_PROPAGATE);
    tosac_block_add_output(b, out);
    c->work = (double)(H * W * C);
    c->unit = "elem";
}

static void transpose(bcase *c, int64_t H, int64_t W, int64_t C)
{
    tosac_block *b = new_graph(c);
    const int64_t s[] = {1, H, W, C}, o[] = {1, C, H, W};
    tosac_value *in = tosac_block_add_tensor(b, "in", TOSAC_DTYPE_INT8, 4, s);
    tosac_block_add_input(b, in);
    tosac_value *out = tosac_block_add_tensor(b, "out", TOSAC_DTYPE_INT8, 4, o);
    tosac_node *n = tosac_block_add_node(b, TOSAC_OP_TRANSPOSE, 1, &in, 1, &out);
    const int32_t perm[] = {0, 3, 1, 2};
    tosac_node_set_ints(n, 0, perm, 4);
    tosac_block_add_output(b, out);
    c->work = (double)(H * W * C);
    c->unit = "elem";
}

/* The quantizer's RESCALE of int32 sums (shape sh) to int8 (single rounding, zero points 0 / -3):
   per channel with n > 1 multipliers and shifts, else per tensor. */
static tosac_value *rescale_to_i8(tosac_block *b, tosac_value *in, const int64_t sh[4], int64_t n, const int32_t *mult,
                                  const int8_t *shift)
{
    tosac_value *rops[5] = {in, tosac_block_add_const(b, "m", TOSAC_DTYPE_INT32, 1, &n, mult, (size_t)n * 4),
                            tosac_block_add_const(b, "s", TOSAC_DTYPE_INT8, 1, &n, shift, (size_t)n),
                            zp(b, "rizp", TOSAC_DTYPE_INT32, 0), zp(b, "rozp", TOSAC_DTYPE_INT8, -3)};
    tosac_value *q = tosac_block_add_tensor(b, "q", TOSAC_DTYPE_INT8, 4, sh);
    tosac_node *r = tosac_block_add_node(b, TOSAC_OP_RESCALE, 5, rops, 1, &q);
    tosac_node_set_int(r, TOSAC_ATTR_RESCALE_scale32, 1);
    tosac_node_set_int(r, TOSAC_ATTR_RESCALE_rounding_mode, TOSAC_ROUND_SINGLE);
    tosac_node_set_int(r, TOSAC_ATTR_RESCALE_per_channel, n > 1);
    return q;
}

/* CONV2D with stride s and pads [top, bottom, left, right] (stems, narrow and odd channel counts);
   with q (int8): followed by a per-channel RESCALE to int8 (shifts 38 to 41), which the runtime fuses
   into the convolution as it does in a quantized model */
static void conv_sq(bcase *c, tosac_dtype t, int64_t H, int64_t W, int64_t IC, int64_t OC, int64_t K, int32_t s,
                    const int32_t pad[4], bool q)
{
    tosac_block *b = new_graph(c);
    tosac_dtype acc = t == TOSAC_DTYPE_FP32 ? TOSAC_DTYPE_FP32 : TOSAC_DTYPE_INT32;
    const int64_t OH = (H + pad[0] + pad[1] - K) / s + 1, OW = (W + pad[2] + pad[3] - K) / s + 1;
    const int64_t in_s[] = {1, H, W, IC}, w_s[] = {OC, K, K, IC}, b_s[] = {OC}, out_s[] = {1, OH, OW, OC};
    tosac_value *in = tosac_block_add_tensor(b, "in", t, 4, in_s);
    tosac_block_add_input(b, in);
    tosac_value *ops[5] = {in, rconst(b, "w", t, 4, w_s), rconst(b, "bias", acc, 1, b_s), zp(b, "izp", t, 0),
                           zp(b, "wzp", t, 0)};
    tosac_value *out = tosac_block_add_tensor(b, "out", acc, 4, out_s);
    tosac_node *n = tosac_block_add_node(b, TOSAC_OP_CONV2D, 5, ops, 1, &out);
    const int32_t st[] = {s, s}, one[] = {1, 1};
    tosac_node_set_ints(n, 0, pad, 4);
    tosac_node_set_ints(n, 1, st, 2);
    tosac_node_set_ints(n, 2, one, 2);
    tosac_node_set_int(n, 4, acc);
    if (q) {
        int32_t *mult = malloc((size_t)OC * sizeof *mult);
        int8_t *shift = malloc((size_t)OC);
        for (int64_t j = 0; j < OC; j++) mult[j] = (int32_t)(0x40000000u + rnd() % 0x3FFFFFFFu), shift[j] = (int8_t)(38 + rnd() % 4);
        out = rescale_to_i8(b, out, out_s, OC, mult, shift);
        free(mult), free(shift);
    }
    tosac_block_add_output(b, out);
    c->work = (double)(OH * OW * OC * IC * K * K);
    c->unit = "MAC";
}

static void conv_s(bcase *c, tosac_dtype t, int64_t H, int64_t W, int64_t IC, int64_t OC, int64_t K, int32_t s,
                   const int32_t pad[4])
{
    conv_sq(c, t, H, W, IC, OC, K, s, pad, false);
}

/*
 * DEPTHWISE_CONV2D (multiplier 1) as the zoo's models have it: H x W x C input, K x K kernel,
 * stride s, padding K/2 before and, with stride 2, one less after (TOSA's exact output size);
 * int8 through a fused per-tensor RESCALE to int8 (the quantizer's form), fp32 with its bias.
 */
static void dwconv(bcase *c, tosac_dtype t, int64_t H, int64_t W, int64_t C, int64_t K, int64_t s)
{
    tosac_block *b = new_graph(c);
    bool i8 = t == TOSAC_DTYPE_INT8;
    tosac_dtype acc = i8 ? TOSAC_DTYPE_INT32 : TOSAC_DTYPE_FP32;
    int32_t p0 = (int32_t)(K / 2), p1 = (int32_t)(K / 2 - (s - 1));
    int64_t OH = (H + p0 + p1 - K) / s + 1, OW = (W + p0 + p1 - K) / s + 1;
    const int64_t in_s[] = {1, H, W, C}, w_s[] = {K, K, C, 1}, b_s[] = {C}, out_s[] = {1, OH, OW, C};
    tosac_value *in = tosac_block_add_tensor(b, "in", t, 4, in_s);
    tosac_block_add_input(b, in);
    tosac_value *ops[5] = {in, rconst(b, "w", t, 4, w_s), rconst(b, "bias", acc, 1, b_s), zp(b, "izp", t, i8 ? -5 : 0),
                           zp(b, "wzp", t, 0)};
    tosac_value *out = tosac_block_add_tensor(b, "out", acc, 4, out_s);
    tosac_node *n = tosac_block_add_node(b, TOSAC_OP_DEPTHWISE_CONV2D, 5, ops, 1, &out);
    const int32_t pad[] = {p0, p1, p0, p1}, st[] = {(int32_t)s, (int32_t)s}, dil[] = {1, 1};
    tosac_node_set_ints(n, 0, pad, 4);
    tosac_node_set_ints(n, 1, st, 2);
    tosac_node_set_ints(n, 2, dil, 2);
    tosac_node_set_int(n, 4, acc);
    if (i8) {
        const int32_t mult = 1518500250;
        const int8_t shift = 45;
        out = rescale_to_i8(b, out, out_s, 1, &mult, &shift);
    }
    tosac_block_add_output(b, out);
    c->work = (double)(OH * OW * C * K * K);
    c->unit = "MAC";
}

/* The non-convolution layers of the zoo's models: a 3x3 stride-2 unpadded pool of type t
   (squeezenet), an NCHW input to NHWC, a spatial REDUCE_SUM (SE blocks), a channel CONCAT. */
static void pool_s2(bcase *c, tosac_op op, tosac_dtype t, int64_t H, int64_t W, int64_t C)
{
    tosac_block *b = new_graph(c);
    const int64_t s[] = {1, H, W, C}, o[] = {1, (H - 3) / 2 + 1, (W - 3) / 2 + 1, C};
    tosac_value *in = tosac_block_add_tensor(b, "in", t, 4, s);
    tosac_block_add_input(b, in);
    tosac_value *ops[3] = {in, zp(b, "izp", t, 0), zp(b, "ozp", t, 0)};
    tosac_value *out = tosac_block_add_tensor(b, "out", t, 4, o);
    bool avg = op == TOSAC_OP_AVG_POOL2D;
    tosac_node *n = tosac_block_add_node(b, op, avg ? 3 : 1, ops, 1, &out);
    const int32_t k[] = {3, 3}, st[] = {2, 2}, pad[] = {0, 0, 0, 0};
    tosac_node_set_ints(n, 0, k, 2);
    tosac_node_set_ints(n, 1, st, 2);
    tosac_node_set_ints(n, 2, pad, 4);
    tosac_node_set_int(n, 3, avg ? (t == TOSAC_DTYPE_FP32 ? TOSAC_DTYPE_FP32 : TOSAC_DTYPE_INT32) : TOSAC_NAN_PROPAGATE);
    tosac_block_add_output(b, out);
    c->work = (double)(o[1] * o[2] * C);
    c->unit = "elem";
}

static void transpose_in(bcase *c, int64_t C, int64_t H, int64_t W)
{
    tosac_block *b = new_graph(c);
    const int64_t s[] = {1, C, H, W}, o[] = {1, H, W, C};
    tosac_value *in = tosac_block_add_tensor(b, "in", TOSAC_DTYPE_FP32, 4, s);
    tosac_block_add_input(b, in);
    tosac_value *out = tosac_block_add_tensor(b, "out", TOSAC_DTYPE_FP32, 4, o);
    tosac_node *n = tosac_block_add_node(b, TOSAC_OP_TRANSPOSE, 1, &in, 1, &out);
    const int32_t perm[] = {0, 2, 3, 1};
    tosac_node_set_ints(n, 0, perm, 4);
    tosac_block_add_output(b, out);
    c->work = (double)(H * W * C);
    c->unit = "elem";
}

static void reduce_sum(bcase *c, int64_t H, int64_t W, int64_t C)
{
    tosac_block *b = new_graph(c);
    const int64_t s[] = {1, H, W, C}, o[] = {1, 1, W, C};
    tosac_value *in = tosac_block_add_tensor(b, "in", TOSAC_DTYPE_FP32, 4, s);
    tosac_block_add_input(b, in);
    tosac_value *out = tosac_block_add_tensor(b, "out", TOSAC_DTYPE_FP32, 4, o);
    tosac_node *n = tosac_block_add_node(b, TOSAC_OP_REDUCE_SUM, 1, &in, 1, &out);
    tosac_node_set_int(n, 0, 1);
    tosac_block_add_output(b, out);
    c->work = (double)(H * W * C);
    c->unit = "elem";
}

static void concat(bcase *c, int64_t H, int64_t W, int64_t C)
{
    tosac_block *b = new_graph(c);
    const int64_t s[] = {1, H, W, C}, o[] = {1, H, W, 2 * C};
    tosac_value *ins[2] = {tosac_block_add_tensor(b, "a", TOSAC_DTYPE_FP32, 4, s),
                           tosac_block_add_tensor(b, "b", TOSAC_DTYPE_FP32, 4, s)};
    tosac_block_add_input(b, ins[0]);
    tosac_block_add_input(b, ins[1]);
    tosac_value *out = tosac_block_add_tensor(b, "out", TOSAC_DTYPE_FP32, 4, o);
    tosac_node *n = tosac_block_add_node(b, TOSAC_OP_CONCAT, 2, ins, 1, &out);
    tosac_node_set_int(n, 0, 3);
    tosac_block_add_output(b, out);
    c->work = (double)(H * W * 2 * C);
    c->unit = "elem";
}

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double now(void) { return clock_s(CLOCK_MONOTONIC); }
/* CPU time of the process: on a shared machine, time spent waiting for a core is not counted
   (the figure of a one-thread run that other processes do not slow down) */
static double cpu_now(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }

/*
 * Peak loops: 12 independent accumulators in named variables (kept in registers; more than
 * latency x throughput of any current FMA unit), `iters` rounds; returns a sum so the work is not
 * optimised away. FLOPs: iters * 12 * lanes * 2.
 */
#define PEAK_BODY(FMA, SET1, ADD)                                                                        \
    V a0 = SET1(0.f), a1 = SET1(1.f), a2 = SET1(2.f), a3 = SET1(3.f), a4 = SET1(4.f), a5 = SET1(5.f);    \
    V a6 = SET1(6.f), a7 = SET1(7.f), a8 = SET1(8.f), a9 = SET1(9.f), a10 = SET1(10.f), a11 = SET1(11.f); \
    const V x = SET1(0.999f), y = SET1(1e-4f);                                                           \
    for (long k = 0; k < iters; k++) {                                                                   \
        a0 = FMA(a0, x, y), a1 = FMA(a1, x, y), a2 = FMA(a2, x, y), a3 = FMA(a3, x, y);                  \
        a4 = FMA(a4, x, y), a5 = FMA(a5, x, y), a6 = FMA(a6, x, y), a7 = FMA(a7, x, y);                  \
        a8 = FMA(a8, x, y), a9 = FMA(a9, x, y), a10 = FMA(a10, x, y), a11 = FMA(a11, x, y);              \
    }                                                                                                    \
    a0 = ADD(ADD(ADD(a0, a1), ADD(a2, a3)), ADD(ADD(a4, a5), ADD(a6, a7)));                              \
    a0 = ADD(a0, ADD(ADD(a8, a9), ADD(a10, a11)));
#ifdef PEAK_X86
__attribute__((target("avx512f"))) static float peak_avx512(long iters)
{
    typedef __m512 V;
    PEAK_BODY(_mm512_fmadd_ps, _mm512_set1_ps, _mm512_add_ps)
    return _mm512_reduce_add_ps(a0);
}
__attribute__((target("avx2,fma"))) static float peak_avx2(long iters)
{
    typedef __m256 V;
    PEAK_BODY(_mm256_fmadd_ps, _mm256_set1_ps, _mm256_add_ps)
    float v[8];
    _mm256_storeu_ps(v, a0);
    return v[0];
}
/* 12 independent vpdpbusd chains (64 multiply-adds each per round) */
#define DP(acc) acc = _mm512_dpbusd_epi32(acc, x, y)
__attribute__((target("avx512f,avx512vnni"))) static float peak_vnni(long iters)
{
    __m512i a0 = _mm512_set1_epi32(0), a1 = _mm512_set1_epi32(1), a2 = _mm512_set1_epi32(2), a3 = _mm512_set1_epi32(3);
    __m512i a4 = _mm512_set1_epi32(4), a5 = _mm512_set1_epi32(5), a6 = _mm512_set1_epi32(6), a7 = _mm512_set1_epi32(7);
    __m512i a8 = _mm512_set1_epi32(8), a9 = _mm512_set1_epi32(9), a10 = _mm512_set1_epi32(10);
    __m512i a11 = _mm512_set1_epi32(11);
    const __m512i x = _mm512_set1_epi32(0x01020304), y = _mm512_set1_epi32(0x01FF0201);
    for (long k = 0; k < iters; k++) {
        DP(a0), DP(a1), DP(a2), DP(a3), DP(a4), DP(a5), DP(a6), DP(a7), DP(a8), DP(a9), DP(a10), DP(a11);
        __asm__("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5)); /* no hoisting */
        __asm__("" : "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));
    }
#undef DP
    a0 = _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(a0, a1), _mm512_add_epi32(a2, a3)),
                          _mm512_add_epi32(_mm512_add_epi32(a4, a5), _mm512_add_epi32(a6, a7)));
    a0 = _mm512_add_epi32(a0, _mm512_add_epi32(_mm512_add_epi32(a8, a9), _mm512_add_epi32(a10, a11)));
    return (float)_mm512_reduce_add_epi32(a0);
}
/* 12 independent chains of one int32 AVX2 step STEP(acc) (no common product to hoist: each
   step reads its own chain), summed at the end */
#define PEAK_AVX2_INT(name, STEP, ...)                                                                   \
    __attribute__((target("avx2"))) static float name(long iters)                                       \
    {                                                                                                    \
        __m256i a0 = _mm256_set1_epi32(0), a1 = _mm256_set1_epi32(1), a2 = _mm256_set1_epi32(2);         \
        __m256i a3 = _mm256_set1_epi32(3), a4 = _mm256_set1_epi32(4), a5 = _mm256_set1_epi32(5);         \
        __m256i a6 = _mm256_set1_epi32(6), a7 = _mm256_set1_epi32(7), a8 = _mm256_set1_epi32(8);         \
        __m256i a9 = _mm256_set1_epi32(9), a10 = _mm256_set1_epi32(10), a11 = _mm256_set1_epi32(11);     \
        __VA_ARGS__                                                                                      \
        for (long k = 0; k < iters; k++) {                                                               \
            STEP(a0), STEP(a1), STEP(a2), STEP(a3), STEP(a4), STEP(a5);                                  \
            STEP(a6), STEP(a7), STEP(a8), STEP(a9), STEP(a10), STEP(a11);                                \
            __asm__("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5));                    \
            __asm__("" : "+x"(a6), "+x"(a7), "+x"(a8), "+x"(a9), "+x"(a10), "+x"(a11));                  \
        }                                                                                                \
        a0 = _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a2, a3)),      \
                              _mm256_add_epi32(_mm256_add_epi32(a4, a5), _mm256_add_epi32(a6, a7)));     \
        a0 = _mm256_add_epi32(a0, _mm256_add_epi32(_mm256_add_epi32(a8, a9), _mm256_add_epi32(a10, a11))); \
        return (float)_mm256_extract_epi32(a0, 0);                                                       \
    }
/* vpmaddwd + vpaddd (16 int16 multiply-adds): the form of the int8 convolutions on a CPU without
   VNNI (exact, where vpmaddubsw would saturate) */
#define MW(acc) acc = _mm256_add_epi32(acc, _mm256_madd_epi16(acc, y))
PEAK_AVX2_INT(peak_madd, MW, const __m256i y = _mm256_set1_epi32(0x0001FFFF);)
#undef MW
/* vpmaddubsw + vpmaddwd (by ones) + vpaddd (32 u8 x s8 multiply-adds): the form of onnxruntime's
   u8s8 kernels on AVX2, whose int16 pair sums saturate. The kernels cannot use it (their results
   are exact); printed as the bound such a kernel works against. */
#define MB(acc) acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(acc, y), one))
PEAK_AVX2_INT(peak_maddubs, MB, const __m256i y = _mm256_set1_epi32(0x01FF0201), one = _mm256_set1_epi16(1);)
#undef MB
#endif
static float scalar_fma(float a, float x, float y) { return a * x + y; }
static float scalar_set1(float v) { return v; }
static float scalar_add(float a, float b) { return a + b; }
static float peak_scalar(long iters)
{
    typedef float V;
    PEAK_BODY(scalar_fma, scalar_set1, scalar_add)
    return a0;
}
/* Best of several timed runs of fn, in G multiply-adds per second (a shared machine only ever
   lowers a figure). */
static double best_rate(float (*fn)(long), double macs_per_iter, double seconds)
{
    long iters = 1000000;
    double best = 0, t0 = now();
    volatile float sink = 0;
    while (now() - t0 < seconds || best == 0) {
        double a = now();
        sink += fn(iters);
        double dt = now() - a;
        double r = (double)iters * macs_per_iter / dt / 1e9;
        if (r > best) best = r;
    }
    (void)sink;
    return best;
}

static int run_peak(double seconds)
{
    int lanes = 1;
    float (*fn)(long) = peak_scalar;
#ifdef PEAK_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        fn = peak_avx512, lanes = 16;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        fn = peak_avx2, lanes = 8;
#endif
    printf("peak fp32 %.2f GFLOP/s (%d-lane FMA, one thread)\n", 2 * best_rate(fn, 12.0 * lanes, seconds), lanes);
#ifdef PEAK_X86
    if (__builtin_cpu_supports("avx512vnni"))
        printf("peak int8 %.2f GOP/s (vpdpbusd, one thread)\n", 2 * best_rate(peak_vnni, 12.0 * 64, seconds));
    else if (__builtin_cpu_supports("avx2")) {
        printf("peak int8 %.2f GOP/s (vpmaddwd, one thread)\n", 2 * best_rate(peak_madd, 12.0 * 16, seconds));
        printf("saturating u8 x s8 form %.2f GOP/s (vpmaddubsw + vpmaddwd, one thread; not exact, not used)\n",
               2 * best_rate(peak_maddubs, 12.0 * 32, seconds));
    }
#endif
    return 0;
}

int main(int argc, char **argv)
{
    double seconds = 0.5;
    const char *filter = NULL;
    bool peak = false;
    tosac_program_opts opts = tosac_program_opts_default();
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            opts.threads = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-winograd"))
            opts.conv_direct = true;
        else if (!strcmp(argv[i], "--peak"))
            peak = true;
        else
            filter = argv[i];
    }
    if (peak) return run_peak(seconds);
    bcase cases[192];
    int n = 0;
#define CASE(NAME, CALL)                       \
    do {                                       \
        memset(&cases[n], 0, sizeof cases[n]); \
        cases[n].name = NAME;                  \
        bcase *c = &cases[n++];                \
        CALL;                                  \
    } while (0)
    CASE("conv2d_i8_56x56x64_3x3x64", conv(c, TOSAC_OP_CONV2D, TOSAC_DTYPE_INT8, 56, 56, 64, 64, 3));
    CASE("conv2d_fp32_56x56x64_3x3x64", conv(c, TOSAC_OP_CONV2D, TOSAC_DTYPE_FP32, 56, 56, 64, 64, 3));
    CASE("conv2d_i8_28x28x128_1x1x128", conv(c, TOSAC_OP_CONV2D, TOSAC_DTYPE_INT8, 28, 28, 128, 128, 1));
    CASE("depthwise_i8_112x112x32_3x3", conv(c, TOSAC_OP_DEPTHWISE_CONV2D, TOSAC_DTYPE_INT8, 112, 112, 32, 32, 3));
    CASE("depthwise_fp32_112x112x32_3x3", conv(c, TOSAC_OP_DEPTHWISE_CONV2D, TOSAC_DTYPE_FP32, 112, 112, 32, 32, 3));
    CASE("matmul_i8_256x256x256", matmul(c, TOSAC_DTYPE_INT8, 256, 256, 256));
    CASE("matmul_fp32_256x256x256", matmul(c, TOSAC_DTYPE_FP32, 256, 256, 256));
    CASE("add_i32_1M", binary(c, TOSAC_OP_ADD, TOSAC_DTYPE_INT32, 1 << 20));
    CASE("add_fp32_1M", binary(c, TOSAC_OP_ADD, TOSAC_DTYPE_FP32, 1 << 20));
    CASE("mul_fp32_1M", binary(c, TOSAC_OP_MUL, TOSAC_DTYPE_FP32, 1 << 20));
    CASE("mul_fp32_3136x16_by_row", binary_rows(c, TOSAC_OP_MUL, 3136, 16));
    CASE("mul_fp32_196x96_by_row", binary_rows(c, TOSAC_OP_MUL, 196, 96));
    CASE("mul_fp32_49x576_by_row", binary_rows(c, TOSAC_OP_MUL, 49, 576));
    CASE("rescale_i32_to_i8_1M", rescale(c, RS_I32_I8, 1, 1 << 20, TOSAC_ROUND_DOUBLE));
    CASE("rescale_single_i32_to_i8_1M", rescale(c, RS_I32_I8, 1, 1 << 20, TOSAC_ROUND_SINGLE));
    CASE("sigmoid_fp32_1M", unary(c, TOSAC_OP_SIGMOID, 1 << 20));
    CASE("exp_fp32_1M", unary(c, TOSAC_OP_EXP, 1 << 20));
    CASE("tanh_fp32_1M", unary(c, TOSAC_OP_TANH, 1 << 20));
    CASE("sigmoid_fp32_64K", unary(c, TOSAC_OP_SIGMOID, 1 << 16));
    CASE("silu_fp32_64K", silu(c, 1 << 16));
    CASE("avg_pool_i8_56x56x64_3x3", pool(c, TOSAC_OP_AVG_POOL2D, 56, 56, 64));
    CASE("max_pool_i8_56x56x64_3x3", pool(c, TOSAC_OP_MAX_POOL2D, 56, 56, 64));
    CASE("transpose_i8_nhwc_to_nchw_56x56x64", transpose(c, 56, 56, 64));
    static const int32_t p1010[] = {1, 0, 1, 0}, p1111[] = {1, 1, 1, 1}, p3232[] = {3, 2, 3, 2}, p0101[] = {0, 1, 0, 1}, p0[] = {0, 0, 0, 0};
    CASE("conv2d_fp32_96x96x3_3x3s2x8", conv_s(c, TOSAC_DTYPE_FP32, 96, 96, 3, 8, 3, 2, p1010));
    CASE("conv2d_i8_96x96x3_3x3s2x8", conv_s(c, TOSAC_DTYPE_INT8, 96, 96, 3, 8, 3, 2, p1010));
    CASE("conv2d_fp32_224x224x3_3x3s2x16", conv_s(c, TOSAC_DTYPE_FP32, 224, 224, 3, 16, 3, 2, p0101));
    CASE("conv2d_fp32_224x224x3_7x7s2x64", conv_s(c, TOSAC_DTYPE_FP32, 224, 224, 3, 64, 7, 2, p3232));
    CASE("conv2d_fp32_56x56x128_3x3s2x128", conv_s(c, TOSAC_DTYPE_FP32, 56, 56, 128, 128, 3, 2, p0101));
    CASE("conv2d_i8_224x224x3_7x7s2x64", conv_s(c, TOSAC_DTYPE_INT8, 224, 224, 3, 64, 7, 2, p3232));
    CASE("conv2d_i8_223x223x3_3x3s2x64", conv_s(c, TOSAC_DTYPE_INT8, 223, 223, 3, 64, 3, 2, p0));
    CASE("conv2d_i8_55x55x16_3x3x64", conv_s(c, TOSAC_DTYPE_INT8, 55, 55, 16, 64, 3, 1, p1111));
    CASE("conv2d_fp32_32x32x16_3x3x16", conv_s(c, TOSAC_DTYPE_FP32, 32, 32, 16, 16, 3, 1, p1111));
    CASE("conv2d_i8_32x32x16_3x3x16", conv_s(c, TOSAC_DTYPE_INT8, 32, 32, 16, 16, 3, 1, p1111));
    CASE("conv2d_fp32_55x55x128_1x1x16", conv_s(c, TOSAC_DTYPE_FP32, 55, 55, 128, 16, 1, 1, p0));
    CASE("conv2d_fp32_28x28x40_1x1x120", conv_s(c, TOSAC_DTYPE_FP32, 28, 28, 40, 120, 1, 1, p0));
    CASE("conv2d_i8_28x28x40_1x1x120", conv_s(c, TOSAC_DTYPE_INT8, 28, 28, 40, 120, 1, 1, p0));
    CASE("conv2d_fp32_7x7x512_1x1x2048", conv_s(c, TOSAC_DTYPE_FP32, 7, 7, 512, 2048, 1, 1, p0));
    /* the zoo's depthwise layers (mobilenet_v1_025, mobilenet_v3_small, mobilenet_v2, efficientnet_b0) */
#define DW_CASES(T, TN)                                                                                        \
    CASE("dw_" TN "_48x48x8_3x3", dwconv(c, T, 48, 48, 8, 3, 1));                                           \
    CASE("dw_" TN "_48x48x16_3x3s2", dwconv(c, T, 48, 48, 16, 3, 2));                                        \
    CASE("dw_" TN "_6x6x128_3x3", dwconv(c, T, 6, 6, 128, 3, 1));                                            \
    CASE("dw_" TN "_56x56x72_3x3s2", dwconv(c, T, 56, 56, 72, 3, 2));                                        \
    CASE("dw_" TN "_28x28x88_3x3", dwconv(c, T, 28, 28, 88, 3, 1));                                          \
    CASE("dw_" TN "_14x14x240_5x5", dwconv(c, T, 14, 14, 240, 5, 1));                                        \
    CASE("dw_" TN "_7x7x576_5x5", dwconv(c, T, 7, 7, 576, 5, 1));                                            \
    CASE("dw_" TN "_56x56x144_3x3", dwconv(c, T, 56, 56, 144, 3, 1));                                        \
    CASE("dw_" TN "_56x56x144_5x5s2", dwconv(c, T, 56, 56, 144, 5, 2));                                      \
    CASE("dw_" TN "_14x14x672_5x5", dwconv(c, T, 14, 14, 672, 5, 1));                                      \
    CASE("dw_" TN "_112x112x32_3x3", dwconv(c, T, 112, 112, 32, 3, 1));                                      \
    CASE("dw_" TN "_56x56x144_3x3s2", dwconv(c, T, 56, 56, 144, 3, 2));                                      \
    CASE("dw_" TN "_7x7x1152_5x5", dwconv(c, T, 7, 7, 1152, 5, 1));
    DW_CASES(TOSAC_DTYPE_FP32, "fp32")
    DW_CASES(TOSAC_DTYPE_INT8, "i8")
#undef DW_CASES
    /* resnet50's and squeezenet1_1's fp32 convolutions beyond the 56x56 one: late 3x3 layers (7x7 and
       14x14 pixels), layer4's stride-2 3x3, 1x1 layers, the stride-2 1x1 shortcuts (after the
       compiler's SLICE to an odd size) and the fire modules' squeeze / expand shapes */
    CASE("conv2d_fp32_7x7x512_3x3x512", conv_s(c, TOSAC_DTYPE_FP32, 7, 7, 512, 512, 3, 1, p1111));
    CASE("conv2d_fp32_14x14x256_3x3x256", conv_s(c, TOSAC_DTYPE_FP32, 14, 14, 256, 256, 3, 1, p1111));
    CASE("conv2d_fp32_28x28x128_3x3x128", conv_s(c, TOSAC_DTYPE_FP32, 28, 28, 128, 128, 3, 1, p1111));
    CASE("conv2d_fp32_14x14x256_3x3s2x512", conv_s(c, TOSAC_DTYPE_FP32, 14, 14, 256, 512, 3, 2, p1010));
    CASE("conv2d_fp32_56x56x64_1x1x256", conv_s(c, TOSAC_DTYPE_FP32, 56, 56, 64, 256, 1, 1, p0));
    CASE("conv2d_fp32_14x14x1024_1x1x256", conv_s(c, TOSAC_DTYPE_FP32, 14, 14, 1024, 256, 1, 1, p0));
    CASE("conv2d_fp32_55x55x256_1x1s2x512", conv_s(c, TOSAC_DTYPE_FP32, 55, 55, 256, 512, 1, 2, p0));
    CASE("conv2d_fp32_13x13x1024_1x1s2x2048", conv_s(c, TOSAC_DTYPE_FP32, 13, 13, 1024, 2048, 1, 2, p0));
    CASE("conv2d_fp32_55x55x16_3x3x64", conv_s(c, TOSAC_DTYPE_FP32, 55, 55, 16, 64, 3, 1, p1111));
    CASE("conv2d_fp32_27x27x32_3x3x128", conv_s(c, TOSAC_DTYPE_FP32, 27, 27, 32, 128, 3, 1, p1111));
    CASE("conv2d_fp32_13x13x64_3x3x256", conv_s(c, TOSAC_DTYPE_FP32, 13, 13, 64, 256, 3, 1, p1111));
    CASE("conv2d_fp32_13x13x48_3x3x192", conv_s(c, TOSAC_DTYPE_FP32, 13, 13, 48, 192, 3, 1, p1111));
    CASE("conv2d_fp32_13x13x512_1x1x64", conv_s(c, TOSAC_DTYPE_FP32, 13, 13, 512, 64, 1, 1, p0));
    CASE("conv2d_fp32_13x13x64_1x1x256", conv_s(c, TOSAC_DTYPE_FP32, 13, 13, 64, 256, 1, 1, p0));
    CASE("matmul_fp32_1x576x1024", matmul(c, TOSAC_DTYPE_FP32, 1, 576, 1024));
    CASE("matmul_fp32_1x1280x1000", matmul(c, TOSAC_DTYPE_FP32, 1, 1280, 1000));
    CASE("matmul_i8_1x1024x1000", matmul(c, TOSAC_DTYPE_INT8, 1, 1024, 1000));
    CASE("max_pool_fp32_111x111x64_3x3s2", pool_s2(c, TOSAC_OP_MAX_POOL2D, TOSAC_DTYPE_FP32, 111, 111, 64));
    CASE("max_pool_i8_111x111x64_3x3s2", pool_s2(c, TOSAC_OP_MAX_POOL2D, TOSAC_DTYPE_INT8, 111, 111, 64));
    CASE("avg_pool_fp32_111x111x64_3x3s2", pool_s2(c, TOSAC_OP_AVG_POOL2D, TOSAC_DTYPE_FP32, 111, 111, 64));
    CASE("transpose_fp32_nchw_to_nhwc_3x224x224", transpose_in(c, 3, 224, 224));
    CASE("reduce_sum_fp32_112x112x32_axis1", reduce_sum(c, 112, 112, 32));
    CASE("concat_fp32_55x55x64x2", concat(c, 55, 55, 64));
    CASE("rescale_i8_to_i32_32x256", rescale(c, RS_I8_I32, 32, 256, TOSAC_ROUND_SINGLE));
    /* narrow fp32 layers: resnet8's (16-64 channels, its stem), squeezenet1_1's squeeze to 16,
       mobilenet_v3_small's 1x1 layers */
    CASE("conv2d_fp32_16x16x32_3x3x32", conv_s(c, TOSAC_DTYPE_FP32, 16, 16, 32, 32, 3, 1, p1111));
    CASE("conv2d_fp32_8x8x64_3x3x64", conv_s(c, TOSAC_DTYPE_FP32, 8, 8, 64, 64, 3, 1, p1111));
    CASE("conv2d_fp32_32x32x3_3x3x16", conv_s(c, TOSAC_DTYPE_FP32, 32, 32, 3, 16, 3, 1, p1111));
    CASE("conv2d_fp32_55x55x64_1x1x16", conv_s(c, TOSAC_DTYPE_FP32, 55, 55, 64, 16, 1, 1, p0));
    CASE("conv2d_fp32_13x13x384_1x1x16", conv_s(c, TOSAC_DTYPE_FP32, 13, 13, 384, 16, 1, 1, p0));
    CASE("conv2d_fp32_56x56x16_1x1x72", conv_s(c, TOSAC_DTYPE_FP32, 56, 56, 16, 72, 1, 1, p0));
    CASE("conv2d_fp32_28x28x88_1x1x24", conv_s(c, TOSAC_DTYPE_FP32, 28, 28, 88, 24, 1, 1, p0));
    CASE("conv2d_fp32_14x14x240_1x1x40", conv_s(c, TOSAC_DTYPE_FP32, 14, 14, 240, 40, 1, 1, p0));
    CASE("conv2d_fp32_7x7x576_1x1x96", conv_s(c, TOSAC_DTYPE_FP32, 7, 7, 576, 96, 1, 1, p0));
    /* int8 convolutions with their per-channel RESCALE (fused), as in resnet50, resnet8, squeezenet */
#define QCASE(NAME, H, W, IC, OC, K, S, P) CASE("conv2d_i8q_" NAME, conv_sq(c, TOSAC_DTYPE_INT8, H, W, IC, OC, K, S, P, true))
    QCASE("56x56x64_3x3x64", 56, 56, 64, 64, 3, 1, p1111);
    QCASE("56x56x64_1x1x256", 56, 56, 64, 256, 1, 1, p0);
    QCASE("14x14x256_3x3x256", 14, 14, 256, 256, 3, 1, p1111);
    QCASE("7x7x512_3x3x512", 7, 7, 512, 512, 3, 1, p1111);
    QCASE("14x14x1024_1x1x256", 14, 14, 1024, 256, 1, 1, p0);
    QCASE("32x32x3_3x3x16", 32, 32, 3, 16, 3, 1, p1111);
    QCASE("32x32x16_3x3x16", 32, 32, 16, 16, 3, 1, p1111);
    QCASE("16x16x32_3x3x32", 16, 16, 32, 32, 3, 1, p1111);
    QCASE("8x8x64_3x3x64", 8, 8, 64, 64, 3, 1, p1111);
    QCASE("55x55x16_3x3x64", 55, 55, 16, 64, 3, 1, p1111);
    QCASE("13x13x64_1x1x256", 13, 13, 64, 256, 1, 1, p0);
    QCASE("27x27x32_3x3x128", 27, 27, 32, 128, 3, 1, p1111);
    QCASE("13x13x48_3x3x192", 13, 13, 48, 192, 3, 1, p1111);
    QCASE("13x13x64_3x3x256", 13, 13, 64, 256, 3, 1, p1111);
    /* the rest of resnet50's int8 convolutions (stem, 1x1 reductions and expansions, strided 3x3) */
    QCASE("224x224x3_7x7s2x64", 224, 224, 3, 64, 7, 2, p3232);
    QCASE("56x56x64_1x1x64", 56, 56, 64, 64, 1, 1, p0);
    QCASE("56x56x256_1x1x64", 56, 56, 256, 64, 1, 1, p0);
    QCASE("56x56x256_1x1x128", 56, 56, 256, 128, 1, 1, p0);
    QCASE("56x56x128_3x3s2x128", 56, 56, 128, 128, 3, 2, p1010);
    QCASE("28x28x128_1x1x512", 28, 28, 128, 512, 1, 1, p0);
    QCASE("28x28x512_1x1x128", 28, 28, 512, 128, 1, 1, p0);
    QCASE("28x28x128_3x3x128", 28, 28, 128, 128, 3, 1, p1111);
    QCASE("14x14x256_1x1x1024", 14, 14, 256, 1024, 1, 1, p0);
    QCASE("7x7x2048_1x1x512", 7, 7, 2048, 512, 1, 1, p0);
    QCASE("7x7x512_1x1x2048", 7, 7, 512, 2048, 1, 1, p0);
#undef QCASE
    /* FP32 1x1 layers, efficientnet_b0's (K and N not multiples of 64) and resnet50's that widen 4x */
#define PWCASE(H, IC, OC) CASE("pw_fp32_" #H "x" #H "x" #IC "_1x1x" #OC, conv_s(c, TOSAC_DTYPE_FP32, H, H, IC, OC, 1, 1, p0))
    PWCASE(112, 32, 16);
    PWCASE(112, 16, 96);
    PWCASE(56, 96, 24);
    PWCASE(56, 24, 144);
    PWCASE(56, 144, 24);
    PWCASE(28, 144, 40);
    PWCASE(28, 40, 240);
    PWCASE(28, 240, 40);
    PWCASE(14, 240, 80);
    PWCASE(14, 80, 480);
    PWCASE(14, 480, 80);
    PWCASE(14, 480, 112);
    PWCASE(14, 112, 672);
    PWCASE(14, 672, 112);
    PWCASE(7, 672, 192);
    PWCASE(7, 192, 1152);
    PWCASE(7, 1152, 192);
    PWCASE(7, 1152, 320);
    PWCASE(7, 320, 1280);
    PWCASE(28, 16, 96);
    PWCASE(56, 64, 256);
    PWCASE(56, 64, 64);
    PWCASE(28, 128, 512);
    PWCASE(14, 256, 1024);
#undef PWCASE
#undef CASE
    printf("%-36s %12s %14s %12s %14s %12s %14s\n", "case", "us/invoke", "throughput", "cpu us", "per cpu s", "best us",
           "best");
    int failures = 0;
    for (int k = 0; k < n; k++) {
        bcase *c = &cases[k];
        if (filter && !strstr(c->name, filter)) {
            tosac_graph_destroy(c->g);
            continue;
        }
        tosac_diag *d = tosac_diag_create();
        tosac_program *p = NULL;
        if (tosac_program_create(c->g, &opts, &p, d) != TOSAC_OK) {
            printf("%-36s cannot create: %s\n", c->name, tosac_diag_count(d) ? tosac_diag_message(d, 0, NULL) : "?");
            failures++;
            tosac_diag_destroy(d);
            tosac_graph_destroy(c->g);
            continue;
        }
        for (uint32_t i = 0; i < tosac_program_input_count(p); i++) {
            tosac_tensor_info info;
            tosac_program_input_info(p, i, &info);
            uint8_t *ptr = tosac_program_input_ptr(p, i);
            if (info.dtype == TOSAC_DTYPE_FP32) {
                for (int64_t e = 0; e < info.nelem; e++) {
                    float f = (float)((int32_t)(rnd() % 2000) - 1000) / 100.0f;
                    memcpy(ptr + 4 * e, &f, 4);
                }
            } else if (info.dtype == TOSAC_DTYPE_INT32) { /* small values: no REQUIRE overflow */
                for (int64_t e = 0; e < info.nelem; e++) {
                    int32_t v = (int32_t)(rnd() % 20001) - 10000;
                    memcpy(ptr + 4 * e, &v, 4);
                }
            } else {
                fill(ptr, info.nbytes);
            }
        }
        tosac_status s = tosac_program_invoke(p, d); /* warm-up */
        long iters = 0;
        double t0 = now(), t = t0, c0 = cpu_now(), best = 1e30;
        while (s == TOSAC_OK && (t - t0 < seconds || iters < 3)) {
            double a = t;
            s = tosac_program_invoke(p, d);
            iters++;
            t = now();
            if (t - a < best) best = t - a;
        }
        if (s != TOSAC_OK) {
            printf("%-36s invoke failed: %s\n", c->name, tosac_diag_count(d) ? tosac_diag_message(d, 0, NULL) : "?");
            failures++;
        } else {
            double per = (t - t0) / (double)iters, cpu = (cpu_now() - c0) / (double)iters;
            printf("%-36s %12.1f %10.2f G%s/s %12.1f %10.2f G%s/s %12.1f %10.2f G%s/s\n", c->name, per * 1e6,
                   c->work / per / 1e9, c->unit, cpu * 1e6, c->work / cpu / 1e9, c->unit, best * 1e6,
                   c->work / best / 1e9, c->unit);
        }
        tosac_program_destroy(p);
        tosac_diag_destroy(d);
        tosac_graph_destroy(c->g);
    }
    return failures ? 1 : 0;
}
