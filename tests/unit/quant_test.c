/*
 * INT8 quantization math (src/quant/qparams.c) against values computed here independently from
 * the formulas (long double and exact integer reasoning), TABLE generation, and the quantizer on
 * small hand-built FP graphs (structure, validity for PRO-INT, values close to FP).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "harness/test.h"
#include "ir/graph.h"
#include "kernels/quant_math.h"
#include "tosac/quant.h"
#include "tosac/runtime.h"
#include "tosac/validate.h"

/* round half to even of a non-negative long double, without the library's rounding */
static int64_t rhe(long double v)
{
    long double f = floorl(v);
    long double frac = v - f;
    int64_t i = (int64_t)f;
    if (frac > 0.5L) return i + 1;
    if (frac < 0.5L) return i;
    return (i & 1) ? i + 1 : i;
}

/* The reference: scale = mant * 2^e with mant in [0.5, 1) found by doubling/halving (exact in
   long double), then ExecuTorch's rules. */
static bool ref_multiplier_bits(double scale, int bits, int32_t *m_out, int32_t *s_out)
{
    long double mant = scale;
    int e = 0;
    while (mant >= 1.0L) mant /= 2, e++;
    while (mant < 0.5L) mant *= 2, e--;
    int64_t one = (int64_t)1 << bits;
    int64_t m = rhe(mant * (long double)one);
    if (m == one) m /= 2, e++;
    int64_t s = bits - e;
    if (s > 62) m = s - 62 < 63 ? m >> (s - 62) : 0, s = 62;
    if (s < 2) return false;
    *m_out = (int32_t)m;
    *s_out = (int32_t)s;
    return true;
}

static bool ref_multiplier(double scale, int32_t *m_out, int32_t *s_out)
{
    return ref_multiplier_bits(scale, 31, m_out, s_out);
}

static void test_multiplier_known(void)
{
    int32_t m = 0, s = 0;
    EXPECT(tosac_quant_multiplier(1.0, &m, &s));
    EXPECT_EQ_I(m, 1 << 30);
    EXPECT_EQ_I(s, 30);
    EXPECT(tosac_quant_multiplier(0.75, &m, &s));
    EXPECT_EQ_I(m, 3 << 29);
    EXPECT_EQ_I(s, 31);
    /* mant*2^31 rounds up to 2^31: halved, exponent bumped */
    EXPECT(tosac_quant_multiplier(1.0 - ldexp(1.0, -40), &m, &s));
    EXPECT_EQ_I(m, 1 << 30);
    EXPECT_EQ_I(s, 30);
    EXPECT(tosac_quant_multiplier(ldexp(1.0 - ldexp(1.0, -33), -10), &m, &s));
    EXPECT_EQ_I(m, 1 << 30);
    EXPECT_EQ_I(s, 40);
    /* a tie exactly half way between two multipliers goes to the even one */
    EXPECT(tosac_quant_multiplier(0.5 + ldexp(1.0, -32), &m, &s)); /* mant*2^31 = 2^30 + 0.5 */
    EXPECT_EQ_I(m, 1 << 30);
    EXPECT(tosac_quant_multiplier(0.5 + 3 * ldexp(1.0, -32), &m, &s)); /* 2^30 + 1.5 */
    EXPECT_EQ_I(m, (1 << 30) + 2);
    /* shift capped at 62: 2^-40 = 0.5 * 2^-39 -> shift 70 -> multiplier 2^30 >> 8 */
    EXPECT(tosac_quant_multiplier(ldexp(1.0, -40), &m, &s));
    EXPECT_EQ_I(s, 62);
    EXPECT_EQ_I(m, 1 << 22);
    /* so small that every multiplier bit is shifted out (a fuzzer found the shift of 64 or more
       this used to make): multiplier 0, the result is the zero point */
    EXPECT(tosac_quant_multiplier(ldexp(1.0, -110), &m, &s));
    EXPECT_EQ_I(s, 62);
    EXPECT_EQ_I(m, 0);
    /* too large (shift < 2), not positive, not finite */
    EXPECT(!tosac_quant_multiplier(ldexp(1.0, 29), &m, &s));
    EXPECT(tosac_quant_multiplier(ldexp(1.0, 29) - 1, &m, &s));
    EXPECT_EQ_I(s, 2);
    EXPECT(!tosac_quant_multiplier(0.0, &m, &s));
    EXPECT(!tosac_quant_multiplier(-1.0, &m, &s));
    EXPECT(!tosac_quant_multiplier(INFINITY, &m, &s));
    EXPECT(!tosac_quant_multiplier(NAN, &m, &s));
}

static void test_multiplier_sweep(void)
{
    uint64_t st = 12345;
    for (int i = 0; i < 200000; i++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        double e = -45.0 + (double)(st >> 40) / (double)(1ull << 24) * 73.0; /* 2^-45 .. 2^28 */
        double scale = exp2(e);
        int32_t m, s, rm, rs;
        bool ok = tosac_quant_multiplier(scale, &m, &s), rok = ref_multiplier(scale, &rm, &rs);
        EXPECT(ok == rok);
        if (!ok || !rok) continue;
        EXPECT_EQ_I(m, rm);
        EXPECT_EQ_I(s, rs);
        EXPECT(s >= 2 && s <= 62 && m >= 0);
        if (s < 62) { /* m * 2^-s within half a multiplier step of the scale */
            long double err = fabsl(ldexpl((long double)m, -s) - (long double)scale);
            EXPECT(err <= ldexpl(0.5L, -s));
            EXPECT(m >= (1 << 30));
        }
        /* and apply_scale_32 then scales an int8-sized value as the real scale does */
        if (s >= 9) { /* 100 within apply_scale_32's input range */
            int32_t x = 100, r = 0;
            EXPECT(tosac_apply_scale_32(x, m, s, false, &r));
            EXPECT(fabs((double)r - x * scale) <= 0.5 + ldexp(x, -s) + 1e-9);
        }
    }
}

static void test_quantize(void)
{
    tosac_qparams q = {0.5, 0};
    EXPECT_EQ_I(tosac_quant_quantize(0.25, q, -128, 127), 0);  /* 0.5 -> 0 (even) */
    EXPECT_EQ_I(tosac_quant_quantize(0.75, q, -128, 127), 2);  /* 1.5 -> 2 */
    EXPECT_EQ_I(tosac_quant_quantize(1.25, q, -128, 127), 2);  /* 2.5 -> 2 */
    EXPECT_EQ_I(tosac_quant_quantize(-0.75, q, -128, 127), -2);
    EXPECT_EQ_I(tosac_quant_quantize(-1.25, q, -128, 127), -2);
    EXPECT_EQ_I(tosac_quant_quantize(1000, q, -128, 127), 127);
    EXPECT_EQ_I(tosac_quant_quantize(-1000, q, -128, 127), -128);
    EXPECT_EQ_I(tosac_quant_quantize(-INFINITY, q, -128, 127), -128);
    EXPECT_EQ_I(tosac_quant_quantize(1000, q, -127, 127), 127);
    EXPECT_EQ_I(tosac_quant_quantize(-1000, q, -127, 127), -127);
    tosac_qparams z = {0.1, -20};
    EXPECT_EQ_I(tosac_quant_quantize(NAN, z, -128, 127), -20);
    EXPECT_EQ_I(tosac_quant_quantize(0.0, z, -128, 127), -20);
    EXPECT_EQ_I(tosac_quant_quantize(1.0, z, -128, 127), -10);
    for (int v = -128; v < 128; v++) /* dequantize then quantize is the identity */
        EXPECT_EQ_I(tosac_quant_quantize(tosac_quant_dequantize(v, z), z, -128, 127), v);
    EXPECT(fabs(tosac_quant_dequantize(-10, z) - 1.0) < 1e-12);
}

static void test_choose(void)
{
    tosac_qparams q = tosac_quant_choose_act(-1.0, 3.0); /* scale 4/255, zp -128 - rhe(-63.75) */
    EXPECT(q.scale == 4.0 / 255.0);
    EXPECT_EQ_I(q.zero_point, -64);
    q = tosac_quant_choose_act(0.5, 2.0); /* min' = 0 */
    EXPECT(q.scale == 2.0 / 255.0);
    EXPECT_EQ_I(q.zero_point, -128);
    q = tosac_quant_choose_act(-2.0, -1.0); /* max' = 0: -128 - (-255) = 127, 0 at the top */
    EXPECT(q.scale == 2.0 / 255.0);
    EXPECT_EQ_I(q.zero_point, 127);
    q = tosac_quant_choose_act(-1.0, 1.0); /* rhe(-127.5) = -128 -> zp 0 */
    EXPECT_EQ_I(q.zero_point, 0);
    q = tosac_quant_choose_act(0.0, 0.0); /* eps floor */
    EXPECT(q.scale == TOSAC_QUANT_EPS);
    EXPECT_EQ_I(q.zero_point, -128);
    q = tosac_quant_choose_act(-1e-9, 1e-9);
    EXPECT(q.scale == TOSAC_QUANT_EPS);
    EXPECT_EQ_I(q.zero_point, -128);
    /* zero is exactly representable whatever the range */
    for (int k = 1; k < 200; k++) {
        double lo = -0.37 * k, hi = 0.91 * (200 - k);
        q = tosac_quant_choose_act(lo, hi);
        EXPECT(q.zero_point >= -128 && q.zero_point <= 127);
        EXPECT(tosac_quant_dequantize(q.zero_point, q) == 0.0);
        EXPECT(fabs(tosac_quant_dequantize(-128, q) - lo) <= q.scale / 2 + 1e-12);
    }
    EXPECT(tosac_quant_choose_weight(127.0) == 1.0);
    EXPECT(tosac_quant_choose_weight(0.0) == TOSAC_QUANT_EPS);
    EXPECT(tosac_quant_choose_weight(2.54) == 2.54 / 127.0);
}

static tosac_status eval_identity(void *u, const float *x, float *y, uint32_t n, tosac_diag *d)
{
    (void)u, (void)d;
    memcpy(y, x, n * sizeof *y);
    return TOSAC_OK;
}
static tosac_status eval_sigmoid(void *u, const float *x, float *y, uint32_t n, tosac_diag *d)
{
    (void)u, (void)d;
    for (uint32_t k = 0; k < n; k++) y[k] = 1.0f / (1.0f + expf(-x[k]));
    return TOSAC_OK;
}

static void test_table(void)
{
    int8_t t[256];
    tosac_diag *d = tosac_diag_create();
    tosac_qparams a = {0.05, 3};
    EXPECT(tosac_quant_table_int8(a, a, eval_identity, NULL, t, d) == TOSAC_OK);
    for (int k = 0; k < 256; k++) EXPECT_EQ_I(t[k], k - 128);
    /* requantization: q' = rhe(0.5 (q - 3)) - 10; power-of-two scales keep the ties exact in float */
    a.scale = 0.25;
    tosac_qparams b = {0.5, -10};
    EXPECT(tosac_quant_table_int8(a, b, eval_identity, NULL, t, d) == TOSAC_OK);
    for (int q = -128; q < 128; q++) {
        long double v = 0.5L * (q - 3);
        int64_t r = v < 0 ? -rhe(-v) : rhe(v);
        r -= 10;
        EXPECT_EQ_I(t[q + 128], r < -128 ? -128 : r > 127 ? 127 : r);
    }
    tosac_qparams o = {1.0 / 256.0, -128};
    EXPECT(tosac_quant_table_int8(a, o, eval_sigmoid, NULL, t, d) == TOSAC_OK);
    for (int q = -128; q < 128; q++) {
        long double sg = 1.0L / (1.0L + expl(-(long double)a.scale * (q - 3)));
        long double v = sg * 256.0L;
        int64_t r = rhe(v) - 128;
        /* float evaluation may differ only where the value sits on a rounding tie */
        EXPECT(llabs((long long)(t[q + 128] - (r > 127 ? 127 : r))) <= (fabsl(v - floorl(v) - 0.5L) < 1e-4L ? 1 : 0));
    }
    tosac_diag_destroy(d);
}

/* y = CLAMP(x, lo, hi), NaN propagated */
static void add_clamp(tosac_block *b, tosac_value *x, tosac_value *y, float lo, float hi)
{
    tosac_node *c = tosac_block_add_node(b, TOSAC_OP_CLAMP, 1, &x, 1, &y);
    tosac_node_set_bytes(c, 0, &lo, 4);
    tosac_node_set_bytes(c, 1, &hi, 4);
    tosac_node_set_int(c, 2, TOSAC_NAN_PROPAGATE);
}

/* A hand-built FP graph: x[1,4,4,8] -> SIGMOID -> MUL(x, .) (SiLU) -> y, and z = CLAMP(x, 0, 6). */
static tosac_graph *silu_graph(void)
{
    tosac_graph *g = tosac_graph_create();
    tosac_block *b = tosac_region_add_block(tosac_graph_add_region(g, "main"), "main");
    int64_t sh[4] = {1, 4, 4, 8}, one = 1;
    tosac_value *x = tosac_block_add_tensor(b, "x", TOSAC_DTYPE_FP32, 4, sh);
    tosac_value *s = tosac_block_add_tensor(b, "s", TOSAC_DTYPE_FP32, 4, sh);
    tosac_value *y = tosac_block_add_tensor(b, "y", TOSAC_DTYPE_FP32, 4, sh);
    tosac_value *z = tosac_block_add_tensor(b, "z", TOSAC_DTYPE_FP32, 4, sh);
    int8_t zero = 0;
    tosac_value *shift = tosac_block_add_const(b, "shift", TOSAC_DTYPE_INT8, 1, &one, &zero, 1);
    tosac_block_add_input(b, x);
    tosac_block_add_node(b, TOSAC_OP_SIGMOID, 1, &x, 1, &s);
    tosac_value *mi[3] = {x, s, shift};
    tosac_block_add_node(b, TOSAC_OP_MUL, 3, mi, 1, &y);
    add_clamp(b, x, z, 0, 6);
    tosac_block_add_output(b, y);
    tosac_block_add_output(b, z);
    tosac_graph_link(g);
    return g;
}

/* g quantized with 8 seeded random calibration samples; the result must be valid for PRO-INT
   alone (checked here). NULL when quantization fails. */
static tosac_graph *quantize_checked(const tosac_graph *g, uint64_t seed, tosac_quant_iomap **io, tosac_diag *d)
{
    tosac_graph *q = NULL;
    tosac_quant_opts o;
    memset(&o, 0, sizeof o);
    o.n_random = 8;
    o.seed = seed;
    EXPECT(tosac_quantize(g, &o, &q, io, d) == TOSAC_OK);
    for (size_t k = 0; k < tosac_diag_count(d); k++) printf("  %s\n", tosac_diag_message(d, k, NULL));
    if (!q) return NULL;
    tosac_validate_opts vo = tosac_validate_opts_default();
    vo.profiles = TOSAC_PROFILE_INT;
    EXPECT(tosac_validate(q, &vo, d) == TOSAC_OK);
    return q;
}

static void test_quantize_graph(void)
{
    tosac_graph *g = silu_graph();
    tosac_diag *d = tosac_diag_create();
    tosac_quant_iomap *io = NULL;
    tosac_graph *q = quantize_checked(g, 1, &io, d);
    if (!q) goto out;
    const tosac_block *b = q->regions[0]->blocks[0];
    int tables = 0, floats = 0;
    for (uint32_t k = 0; k < b->n_nodes; k++) tables += b->nodes[k]->op == TOSAC_OP_TABLE;
    for (uint32_t k = 0; k < b->n_tensors; k++) floats += b->tensors[k]->dtype == TOSAC_DTYPE_FP32;
    EXPECT_EQ_I(tables, 1); /* SIGMOID + MUL: one TABLE; the CLAMP is integer */
    EXPECT_EQ_I(floats, 0);
    EXPECT_EQ_I(io->n_inputs, 1);
    EXPECT_EQ_I(io->n_outputs, 2);
    EXPECT_STREQ(io->inputs[0].name, "x");
    EXPECT(io->outputs[1].q.zero_point == -128); /* CLAMP(0, 6) output: range starts at 0 */
    /* run it: dequantized results within a couple of output steps of SiLU and ReLU6 */
    tosac_program *p = NULL;
    tosac_program_opts po = tosac_program_opts_default();
    EXPECT(tosac_program_create(q, &po, &p, d) == TOSAC_OK);
    if (p) {
        int8_t *in = tosac_program_input_ptr(p, 0);
        float xs[128];
        for (int k = 0; k < 128; k++) {
            xs[k] = -3.0f + 6.0f * (float)k / 127.0f;
            in[k] = (int8_t)tosac_quant_quantize(xs[k], io->inputs[0].q, -128, 127);
        }
        EXPECT(tosac_program_invoke(p, d) == TOSAC_OK);
        const int8_t *y = tosac_program_output_ptr(p, 0), *z = tosac_program_output_ptr(p, 1);
        for (int k = 0; k < 128; k++) {
            double xq = tosac_quant_dequantize(in[k], io->inputs[0].q);
            double silu = xq / (1 + exp(-xq)), relu6 = xq < 0 ? 0 : xq > 6 ? 6 : xq;
            EXPECT(fabs(tosac_quant_dequantize(y[k], io->outputs[0].q) - silu) <= 0.51 * io->outputs[0].q.scale + 1e-6);
            EXPECT(fabs(tosac_quant_dequantize(z[k], io->outputs[1].q) - relu6) <= 1.01 * io->outputs[1].q.scale);
        }
        tosac_program_destroy(p);
    }
    /* no calibration data: refused */
    tosac_graph *q2 = NULL;
    tosac_quant_iomap *io2 = NULL;
    tosac_quant_opts none;
    memset(&none, 0, sizeof none);
    EXPECT(tosac_quantize(g, &none, &q2, &io2, d) == TOSAC_ERR_INVALID_ARG);
    EXPECT(!q2 && !io2);
out:
    tosac_quant_iomap_free(io);
    tosac_graph_destroy(q);
    tosac_graph_destroy(g);
    tosac_diag_destroy(d);
}

/* REDUCE_MAX (softmax's max) and GATHER (a ViT's class token) keep the int8 codes of their input:
   x[1,4,8] -> REDUCE_MAX(axis 2) -> m[1,4,1], and GATHER(x, [3, 0]) -> t[1,2,8]. Both outputs
   must carry x's q-params and the exact codes (the max of the codes, the gathered rows), with no
   RESCALE in the program. */
static void test_quantize_max_gather(void)
{
    tosac_graph *g = tosac_graph_create();
    tosac_block *b = tosac_region_add_block(tosac_graph_add_region(g, "main"), "main");
    int64_t sx[3] = {1, 4, 8}, sm[3] = {1, 4, 1}, st[3] = {1, 2, 8}, si[2] = {1, 2};
    int32_t idx[2] = {3, 0};
    tosac_value *x = tosac_block_add_tensor(b, "x", TOSAC_DTYPE_FP32, 3, sx);
    tosac_value *m = tosac_block_add_tensor(b, "m", TOSAC_DTYPE_FP32, 3, sm);
    tosac_value *t = tosac_block_add_tensor(b, "t", TOSAC_DTYPE_FP32, 3, st);
    tosac_value *iv = tosac_block_add_const(b, "idx", TOSAC_DTYPE_INT32, 2, si, idx, sizeof idx);
    tosac_block_add_input(b, x);
    tosac_node *rm = tosac_block_add_node(b, TOSAC_OP_REDUCE_MAX, 1, &x, 1, &m);
    tosac_node_set_int(rm, TOSAC_ATTR_REDUCE_MAX_axis, 2);
    tosac_node_set_int(rm, TOSAC_ATTR_REDUCE_MAX_nan_mode, TOSAC_NAN_PROPAGATE);
    tosac_value *gi[2] = {x, iv};
    tosac_block_add_node(b, TOSAC_OP_GATHER, 2, gi, 1, &t);
    tosac_block_add_output(b, m);
    tosac_block_add_output(b, t);
    tosac_graph_link(g);

    tosac_diag *d = tosac_diag_create();
    tosac_quant_iomap *io = NULL;
    tosac_graph *q = quantize_checked(g, 3, &io, d);
    if (!q) goto out;
    const tosac_block *qb = q->regions[0]->blocks[0];
    int rescales = 0, maxes = 0, gathers = 0;
    for (uint32_t k = 0; k < qb->n_nodes; k++) {
        rescales += qb->nodes[k]->op == TOSAC_OP_RESCALE;
        maxes += qb->nodes[k]->op == TOSAC_OP_REDUCE_MAX && qb->nodes[k]->outputs[0]->dtype == TOSAC_DTYPE_INT8;
        gathers += qb->nodes[k]->op == TOSAC_OP_GATHER && qb->nodes[k]->outputs[0]->dtype == TOSAC_DTYPE_INT8;
    }
    EXPECT_EQ_I(rescales, 0);
    EXPECT_EQ_I(maxes, 1);
    EXPECT_EQ_I(gathers, 1);
    EXPECT(io->outputs[0].q.scale == io->inputs[0].q.scale && io->outputs[0].q.zero_point == io->inputs[0].q.zero_point);
    EXPECT(io->outputs[1].q.scale == io->inputs[0].q.scale && io->outputs[1].q.zero_point == io->inputs[0].q.zero_point);
    tosac_program *p = NULL;
    tosac_program_opts po = tosac_program_opts_default();
    EXPECT(tosac_program_create(q, &po, &p, d) == TOSAC_OK);
    if (p) {
        int8_t *in = tosac_program_input_ptr(p, 0);
        for (int k = 0; k < 32; k++) in[k] = (int8_t)((k * 37 + 11) % 256 - 128);
        EXPECT(tosac_program_invoke(p, d) == TOSAC_OK);
        const int8_t *mo = tosac_program_output_ptr(p, 0), *to = tosac_program_output_ptr(p, 1);
        for (int r = 0; r < 4; r++) {
            int8_t want = in[8 * r];
            for (int c = 1; c < 8; c++) want = in[8 * r + c] > want ? in[8 * r + c] : want;
            EXPECT_EQ_I(mo[r], want);
        }
        for (int c = 0; c < 8; c++) {
            EXPECT_EQ_I(to[c], in[8 * 3 + c]);
            EXPECT_EQ_I(to[8 + c], in[c]);
        }
        tosac_program_destroy(p);
    }
out:
    tosac_quant_iomap_free(io);
    tosac_graph_destroy(q);
    tosac_graph_destroy(g);
    tosac_diag_destroy(d);
}

/* ---- calibration histograms: percentile and mse -------------------------------------------- */

/* splitmix-style uniform in [0, 1) and a Laplace sample: heavy tails, as activations have */
static double unif(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) / 9007199254740992.0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The bin layout, checked from its definition: 32 log-spaced bins per octave on each side. */
static void test_hist_bins(void)
{
    EXPECT_EQ_I(tosac_quant_hist_bin(0.0f), TOSAC_QUANT_HIST_ZERO);
    EXPECT_EQ_I(tosac_quant_hist_bin(-0.0f), TOSAC_QUANT_HIST_ZERO);
    EXPECT_EQ_I(tosac_quant_hist_bin(1e-9f), TOSAC_QUANT_HIST_ZERO); /* below 2^-24 */
    EXPECT_EQ_I(tosac_quant_hist_bin(NAN), TOSAC_QUANT_HIST_BINS);
    /* 1.0 = 2^0: octave 24 (from 2^-24), first sub-bin: 24*32 + 1 above zero */
    EXPECT_EQ_I(tosac_quant_hist_bin(1.0f), TOSAC_QUANT_HIST_ZERO + 24 * 32 + 1);
    EXPECT_EQ_I(tosac_quant_hist_bin(-1.0f), TOSAC_QUANT_HIST_ZERO - (24 * 32 + 1));
    EXPECT_EQ_I(tosac_quant_hist_bin(1.5f), TOSAC_QUANT_HIST_ZERO + 24 * 32 + 17); /* 1 + 16/32 */
    EXPECT_EQ_I(tosac_quant_hist_bin(1e30f), TOSAC_QUANT_HIST_BINS - 1);
    EXPECT_EQ_I(tosac_quant_hist_bin(-INFINITY), 0);
    /* every value lies in the edges of its bin, and bins ascend with the value */
    uint64_t st = 7;
    for (int i = 0; i < 20000; i++) {
        double v = (unif(&st) - 0.5) * exp2(40.0 * unif(&st) - 20.0);
        uint32_t b = tosac_quant_hist_bin((float)v);
        double lo, hi;
        tosac_quant_hist_edges(b, &lo, &hi);
        float f = (float)v;
        if (fabsf(f) < ldexpf(1.0f, -24)) { /* below the first octave: counted as zero */
            EXPECT_EQ_I(b, TOSAC_QUANT_HIST_ZERO);
            continue;
        }
        EXPECT(b < TOSAC_QUANT_HIST_BINS && lo <= f && f < hi);
        EXPECT(hi - lo <= fabs(f) / 32.0 + 1e-12); /* resolution: 1/32 of an octave */
        float g = f * 1.1f;
        EXPECT(f > 0 ? tosac_quant_hist_bin(g) >= b : tosac_quant_hist_bin(g) <= b);
    }
}

static void fill_hist(uint64_t *h, const double *v, int n)
{
    memset(h, 0, TOSAC_QUANT_HIST_BINS * sizeof *h);
    for (int k = 0; k < n; k++) h[tosac_quant_hist_bin((float)v[k])]++;
}

static void test_hist_percentile(void)
{
    enum { N = 200000 };
    double *v = malloc(N * sizeof *v), *sorted = malloc(N * sizeof *sorted);
    uint64_t *h = malloc(TOSAC_QUANT_HIST_BINS * sizeof *h);
    if (!v || !sorted || !h) {
        EXPECT(false);
        goto out;
    }
    uint64_t st = 99;
    double mn = INFINITY, mx = -INFINITY;
    for (int k = 0; k < N; k++) {
        double u = unif(&st);
        /* asymmetric Laplace: a longer positive tail */
        v[k] = u < 0.5 ? 0.5 * log(2 * u + 1e-300) : -2.0 * log(2 * (1 - u));
        /* small magnitudes become exact zeros (as after a ReLU): fewer non-empty bins keep the
           exhaustive mse search below fast, and zeros must cost nothing */
        v[k] = fabs(v[k]) < 0.05 ? 0.0 : (double)(float)v[k];
        mn = fmin(mn, v[k]);
        mx = fmax(mx, v[k]);
        sorted[k] = v[k];
    }
    qsort(sorted, N, sizeof *sorted, cmp_double);
    fill_hist(h, v, N);
    double lo, hi;
    tosac_quant_hist_range(h, TOSAC_QUANT_CALIB_PERCENTILE, mn, mx, &lo, &hi);
    /* the exact 0.01th / 99.99th percentiles, from the sorted values; the histogram answer is
       within the width of their bin (2^-5 of an octave, ~2.2%) */
    double plo = sorted[(int)(1e-4 * N)], phi = sorted[(int)((1 - 1e-4) * N) - 1];
    EXPECT(fabs(lo - plo) <= fabs(plo) * 0.023);
    EXPECT(fabs(hi - phi) <= fabs(phi) * 0.023);
    EXPECT(lo > mn && hi < mx); /* and it clips both tails */
    /* minmax gives the observed range back */
    tosac_quant_hist_range(h, TOSAC_QUANT_CALIB_MINMAX, mn, mx, &lo, &hi);
    EXPECT(lo == mn && hi == mx);

    /* mse: compare with an exhaustive search over every pair of bin edges, with the error computed
       here from the definition (not with tosac_quant_hist_mse) */
    tosac_quant_hist_range(h, TOSAC_QUANT_CALIB_MSE, mn, mx, &lo, &hi);
    uint32_t bmn = tosac_quant_hist_bin((float)mn), bmx = tosac_quant_hist_bin((float)mx);
    double best = INFINITY;
    /* the non-empty bins (centers and counts), so that the search below stays around a second */
    uint32_t nz = 0;
    double *cc = malloc(TOSAC_QUANT_HIST_BINS * sizeof *cc), *cn = malloc(TOSAC_QUANT_HIST_BINS * sizeof *cn);
    if (!cc || !cn) {
        EXPECT(false);
        free(cc);
        free(cn);
        goto out;
    }
    for (uint32_t k = 0; k < TOSAC_QUANT_HIST_BINS; k++) {
        double el, eh;
        if (!h[k] || k == TOSAC_QUANT_HIST_ZERO) continue; /* zero is exact: no error */
        tosac_quant_hist_edges(k, &el, &eh);
        cc[nz] = 0.5 * (el + eh);
        cn[nz++] = (double)h[k];
    }
    for (uint32_t i = bmn; i <= TOSAC_QUANT_HIST_ZERO; i++)
        for (uint32_t j = TOSAC_QUANT_HIST_ZERO; j <= bmx; j++) {
            double a, b, el, eh;
            tosac_quant_hist_edges(i, &el, &eh);
            a = i == bmn ? mn : el;
            tosac_quant_hist_edges(j, &el, &eh);
            b = j == bmx ? mx : eh;
            double e = 0, step = (b - a) / 255.0;
            for (uint32_t k = 0; k < nz; k++) {
                double c = cc[k];
                e += cn[k] * (c > b ? (c - b) * (c - b) : c < a ? (c - a) * (c - a) : step * step / 12.0);
            }
            best = fmin(best, e);
        }
    free(cc);
    free(cn);
    double got = tosac_quant_hist_mse(h, lo, hi);
    EXPECT(got <= best * (1 + 1e-9));
    EXPECT(lo >= mn && hi <= mx && hi < mx); /* the long tail is clipped */
    /* deterministic */
    double lo2, hi2;
    tosac_quant_hist_range(h, TOSAC_QUANT_CALIB_MSE, mn, mx, &lo2, &hi2);
    EXPECT(lo2 == lo && hi2 == hi);
    /* int16 (--a16w8): a 128x finer step inside the range makes clipping dearer, so mse keeps a
       range at least as wide, strictly wider here; percentile does not depend on the width */
    tosac_quant_hist_range16(h, TOSAC_QUANT_CALIB_MSE, true, mn, mx, &lo2, &hi2);
    EXPECT(lo2 <= lo && hi2 >= hi && (lo2 < lo || hi2 > hi) && lo2 >= mn && hi2 <= mx);
    /* and percentile cuts the thinner int16 tails (6 of the 200000 values each side: between
       the neighbouring sorted values up to a bin width; the lower tail is negative here) */
    tosac_quant_hist_range16(h, TOSAC_QUANT_CALIB_PERCENTILE, true, mn, mx, &lo2, &hi2);
    int r16 = (int)(TOSAC_QUANT_PERCENTILE_TAIL16 * N);
    EXPECT(lo2 >= sorted[r16 - 1] * 1.023 && lo2 <= sorted[r16] * 0.977);
    EXPECT(hi2 >= sorted[N - r16 - 1] * 0.977 && hi2 <= sorted[N - r16] * 1.023);
    double p8lo, p8hi;
    tosac_quant_hist_range(h, TOSAC_QUANT_CALIB_PERCENTILE, mn, mx, &p8lo, &p8hi);
    EXPECT(lo2 < p8lo && hi2 > p8hi && lo2 >= mn && hi2 <= mx);
out:
    free(v);
    free(sorted);
    free(h);
}

/* The report's SQNR: 10 log10(sum x^2 / sum (x - x')^2), checked on the quantized SiLU graph
   against the same sums computed here from the INT program's own outputs. */
static void test_sqnr(void)
{
    EXPECT(fabs(tosac_quant_sqnr_db(100.0, 1.0) - 20.0) < 1e-12);
    EXPECT(fabs(tosac_quant_sqnr_db(2.0, 1.0) - 3.0102999566398120) < 1e-12);
    EXPECT(isinf(tosac_quant_sqnr_db(1.0, 0.0)));
    EXPECT(tosac_quant_sqnr_db(0.0, 0.0) == 0.0);

    tosac_graph *g = silu_graph(), *q = NULL;
    tosac_diag *d = tosac_diag_create();
    tosac_quant_iomap *io = NULL;
    tosac_quant_report *r = NULL;
    tosac_quant_opts o;
    memset(&o, 0, sizeof o);
    enum { NS = 3, NE = 128 };
    static float data[NS][NE];
    const float *ptrs[NS];
    for (int s2 = 0; s2 < NS; s2++) {
        for (int k = 0; k < NE; k++) data[s2][k] = (float)(-4.0 + 8.0 * ((k * 37 + s2 * 11) % NE) / (NE - 1));
        ptrs[s2] = data[s2];
    }
    o.n_samples = NS;
    o.data = ptrs;
    EXPECT(tosac_quantize_report(g, &o, &q, &io, &r, d) == TOSAC_OK);
    if (!r || !q) goto out;
    EXPECT_EQ_I(r->n_samples, NS);
    /* worst first */
    for (uint32_t k = 1; k < r->n_layers; k++) EXPECT(r->layers[k - 1].sqnr_db <= r->layers[k].sqnr_db);
    /* the outputs y (SiLU) and z (ReLU6) are in the report: recompute their sums */
    tosac_program *p = NULL;
    tosac_program_opts po = tosac_program_opts_default();
    EXPECT(tosac_program_create(q, &po, &p, d) == TOSAC_OK);
    long double sig[2] = {0, 0}, noise[2] = {0, 0};
    for (int s2 = 0; p && s2 < NS; s2++) {
        int8_t *in = tosac_program_input_ptr(p, 0);
        for (int k = 0; k < NE; k++) in[k] = (int8_t)tosac_quant_quantize(data[s2][k], io->inputs[0].q, -128, 127);
        EXPECT(tosac_program_invoke(p, d) == TOSAC_OK);
        for (int o2 = 0; o2 < 2; o2++) {
            const int8_t *yq = tosac_program_output_ptr(p, (uint32_t)o2);
            for (int k = 0; k < NE; k++) {
                float x = data[s2][k];
                /* the FP graph's own float results: SIGMOID then MUL, and CLAMP */
                float ref = o2 == 0 ? x * (1.0f / (1.0f + expf(-x))) : (x < 0 ? 0.0f : x > 6 ? 6.0f : x);
                long double dq = (long double)io->outputs[o2].q.scale * (yq[k] - io->outputs[o2].q.zero_point);
                sig[o2] += (long double)ref * ref;
                noise[o2] += ((long double)ref - dq) * ((long double)ref - dq);
            }
        }
    }
    tosac_program_destroy(p);
    int found = 0;
    for (uint32_t k = 0; k < r->n_layers; k++) {
        int o2 = !strcmp(r->layers[k].name, "y") ? 0 : !strcmp(r->layers[k].name, "z") ? 1 : -1;
        if (o2 < 0) continue;
        found++;
        EXPECT_EQ_I((int)r->layers[k].n, NS * NE);
        /* float sigmoid vs the runtime's: allow a relative 1e-3 on the noise sum */
        EXPECT(fabsl((long double)r->layers[k].signal - sig[o2]) <= sig[o2] * 1e-5L);
        EXPECT(fabsl((long double)r->layers[k].noise - noise[o2]) <= noise[o2] * 1e-3L + 1e-9L);
        double want = 10.0 * log10((double)(sig[o2] / noise[o2]));
        EXPECT(fabs(r->layers[k].sqnr_db - want) < 0.01);
    }
    EXPECT_EQ_I(found, 2);
out:
    tosac_quant_report_free(r);
    tosac_quant_iomap_free(io);
    tosac_graph_destroy(q);
    tosac_graph_destroy(g);
    tosac_diag_destroy(d);
}

/* The int32 conv output the op callback of an INT program saw last (every operator one by one). */
typedef struct conv_seen {
    const tosac_program *p;
    int32_t acc[5 * 5 * 6];
    int found;
} conv_seen;

static void on_conv(void *user, uint32_t op_index, uint32_t op, uint64_t ns)
{
    (void)ns;
    conv_seen *cs = user;
    if (op != TOSAC_OP_CONV2D) return;
    tosac_tensor_info info;
    const void *data = NULL;
    if (tosac_program_op_output(cs->p, op_index, 0, &info, &data) == TOSAC_OK && info.dtype == TOSAC_DTYPE_INT32 &&
        info.nelem == (int64_t)(sizeof cs->acc / sizeof cs->acc[0]) && data) {
        memcpy(cs->acc, data, sizeof cs->acc);
        cs->found++;
    }
}

/* A value compared in its int32 form (a convolution's result before a ReLU6: the CLAMP takes the
   accumulator, RESCALE fused, so the result has no int8 form of its own): its sums are
   those of the FP convolution (computed here in double) against the INT program's accumulators
   times the per-channel real scale s_x * absmax(w_c) / 127 (docs/QUANT.md), or one scale with
   --per-tensor. Six channels whose weights differ by up to 4^5, so that a wrong channel's scale
   shows; 150 elements a sample, so the channel runs are not all multiples of 4. */
static void test_report_int32(void)
{
    enum { NS = 4, HW = 25, C = 6 };
    const int64_t dx[4] = {1, 5, 5, C}, dw[4] = {C, 1, 1, C}, db[1] = {C}, one[1] = {1};
    static float w[C * C], bias[C], data[NS][HW * C];
    const float zero = 0.0f;
    for (int o = 0; o < C; o++) {
        bias[o] = (float)(o % 3 - 1) / 8.0f;
        for (int i = 0; i < C; i++) w[o * C + i] = (float)((o * 7 + i * 5) % 11 - 5) / 4.0f * (float)(1 << (2 * o)) / 64.0f;
    }
    const float *ptrs[NS];
    for (int s2 = 0; s2 < NS; s2++) {
        for (int k = 0; k < HW * C; k++) data[s2][k] = (float)(-2.0 + 4.0 * ((k * 53 + s2 * 17) % 149) / 148.0);
        ptrs[s2] = data[s2];
    }
    for (int per_tensor = 0; per_tensor < 2; per_tensor++) {
        tosac_graph *g = tosac_graph_create(), *q = NULL;
        tosac_block *b = tosac_region_add_block(tosac_graph_add_region(g, "main"), "main");
        tosac_value *x = tosac_block_add_tensor(b, "x", TOSAC_DTYPE_FP32, 4, dx);
        tosac_value *a = tosac_block_add_tensor(b, "a", TOSAC_DTYPE_FP32, 4, dx);
        tosac_value *y = tosac_block_add_tensor(b, "y", TOSAC_DTYPE_FP32, 4, dx);
        tosac_block_add_input(b, x);
        tosac_value *ci[5] = {x, tosac_block_add_const(b, "w", TOSAC_DTYPE_FP32, 4, dw, w, sizeof w),
                              tosac_block_add_const(b, "b", TOSAC_DTYPE_FP32, 1, db, bias, sizeof bias),
                              tosac_block_add_const(b, "izp", TOSAC_DTYPE_FP32, 1, one, &zero, 4),
                              tosac_block_add_const(b, "wzp", TOSAC_DTYPE_FP32, 1, one, &zero, 4)};
        tosac_node *n = tosac_block_add_node(b, TOSAC_OP_CONV2D, 5, ci, 1, &a);
        static const int32_t pad[4] = {0, 0, 0, 0}, st[2] = {1, 1}, dil[2] = {1, 1};
        tosac_node_set_ints(n, TOSAC_ATTR_CONV2D_pad, pad, 4);
        tosac_node_set_ints(n, TOSAC_ATTR_CONV2D_stride, st, 2);
        tosac_node_set_ints(n, TOSAC_ATTR_CONV2D_dilation, dil, 2);
        tosac_node_set_int(n, TOSAC_ATTR_CONV2D_acc_type, TOSAC_DTYPE_FP32);
        add_clamp(b, a, y, 0, 6);
        tosac_block_add_output(b, y);
        tosac_graph_link(g);

        tosac_diag *d = tosac_diag_create();
        tosac_quant_iomap *io = NULL;
        tosac_quant_report *r = NULL;
        tosac_quant_opts o;
        memset(&o, 0, sizeof o);
        o.n_samples = NS;
        o.data = ptrs;
        o.per_tensor = per_tensor;
        EXPECT(tosac_quantize_report(g, &o, &q, &io, &r, d) == TOSAC_OK);
        const tosac_quant_layer *la = NULL;
        for (uint32_t k = 0; r && k < r->n_layers; k++)
            if (!strcmp(r->layers[k].name, "a")) la = &r->layers[k];
        EXPECT(la && la->int32);
        /* the real scale of each channel's accumulator */
        double sw[C], all = 0;
        for (int o2 = 0; o2 < C; o2++) {
            double m = 0;
            for (int i = 0; i < C; i++) m = fmax(m, fabs((double)w[o2 * C + i]));
            sw[o2] = m / 127.0, all = fmax(all, m / 127.0);
        }
        conv_seen cs = {NULL, {0}, 0};
        tosac_program *p = NULL;
        tosac_program_opts po = tosac_program_opts_default();
        if (la && la->int32 && tosac_program_create(q, &po, &p, d) == TOSAC_OK) {
            cs.p = p;
            tosac_program_set_op_callback(p, on_conv, &cs);
            double sig = 0, noise = 0, sx = io->inputs[0].q.scale;
            for (int s2 = 0; s2 < NS; s2++) {
                int8_t *in = tosac_program_input_ptr(p, 0);
                for (int k = 0; k < HW * C; k++)
                    in[k] = (int8_t)tosac_quant_quantize(data[s2][k], io->inputs[0].q, -128, 127);
                EXPECT(tosac_program_invoke(p, d) == TOSAC_OK);
                for (int px = 0; px < HW; px++)
                    for (int o2 = 0; o2 < C; o2++) {
                        double ref = bias[o2];
                        for (int i = 0; i < C; i++) ref += (double)data[s2][px * C + i] * w[o2 * C + i];
                        double dq = cs.acc[px * C + o2] * sx * (per_tensor ? all : sw[o2]);
                        sig += ref * ref;
                        noise += (ref - dq) * (ref - dq);
                    }
            }
            EXPECT_EQ_I(cs.found, NS);
            EXPECT_EQ_I((int)la->n, NS * HW * C);
            /* the FP program rounds the sums to float: a relative 1e-5 on the signal, 1e-3 on the noise */
            EXPECT(fabs(la->signal - sig) <= sig * 1e-5);
            EXPECT(fabs(la->noise - noise) <= noise * 1e-3);
            EXPECT(noise > 0);
        }
        tosac_program_destroy(p);
        tosac_quant_report_free(r);
        tosac_quant_iomap_free(io);
        tosac_graph_destroy(q);
        tosac_graph_destroy(g);
        tosac_diag_destroy(d);
    }
}

/* The report from the FP values the calibration stored (a = x + x stored, its ReLU6 z read as a
   clamped) is the one from FP runs in the report itself (a bound that keeps no sample, or two of
   five), and both match the sums computed here from the INT program's outputs. */
static void test_report_kept(void)
{
    tosac_graph *g = tosac_graph_create();
    tosac_block *b = tosac_region_add_block(tosac_graph_add_region(g, "main"), "main");
    int64_t sh[4] = {1, 4, 4, 8};
    tosac_value *x = tosac_block_add_tensor(b, "x", TOSAC_DTYPE_FP32, 4, sh);
    tosac_value *a = tosac_block_add_tensor(b, "a", TOSAC_DTYPE_FP32, 4, sh);
    tosac_value *z = tosac_block_add_tensor(b, "z", TOSAC_DTYPE_FP32, 4, sh);
    tosac_block_add_input(b, x);
    tosac_value *ai[2] = {x, x};
    tosac_block_add_node(b, TOSAC_OP_ADD, 2, ai, 1, &a);
    add_clamp(b, a, z, 0, 6);
    tosac_block_add_output(b, a);
    tosac_block_add_output(b, z);
    tosac_graph_link(g);
    enum { NS = 5, NE = 128 };
    static float data[NS][NE];
    const float *ptrs[NS];
    for (int s2 = 0; s2 < NS; s2++) {
        for (int k = 0; k < NE; k++) data[s2][k] = (float)(-5.0 + 9.0 * ((k * 29 + s2 * 13) % NE) / (NE - 1));
        ptrs[s2] = data[s2];
    }
    /* 3 floats a sample per element: a, and the outputs a and z */
    const size_t bounds[3] = {0, 1, 2 * 3 * NE * sizeof(float)};
    tosac_quant_report *r[3] = {NULL, NULL, NULL};
    tosac_graph *q[3] = {NULL, NULL, NULL};
    tosac_quant_iomap *io[3] = {NULL, NULL, NULL};
    tosac_diag *d = tosac_diag_create();
    for (int k = 0; k < 3; k++) {
        tosac_quant_opts o;
        memset(&o, 0, sizeof o);
        o.n_samples = NS;
        o.data = ptrs;
        o.report_keep_bytes = bounds[k];
        EXPECT(tosac_quantize_report(g, &o, &q[k], &io[k], &r[k], d) == TOSAC_OK);
        if (!r[k]) goto out;
    }
    for (int k = 1; k < 3; k++) {
        EXPECT_EQ_I(r[k]->n_layers, r[0]->n_layers);
        EXPECT(r[k]->output_sqnr_db == r[0]->output_sqnr_db);
        for (uint32_t j = 0; j < r[0]->n_layers && j < r[k]->n_layers; j++) {
            EXPECT(!strcmp(r[k]->layers[j].name, r[0]->layers[j].name));
            EXPECT(r[k]->layers[j].signal == r[0]->layers[j].signal && r[k]->layers[j].noise == r[0]->layers[j].noise);
            EXPECT(r[k]->layers[j].n == r[0]->layers[j].n);
        }
    }
    /* a and z against the INT program's outputs (both are int8 outputs of the program) */
    tosac_program *p = NULL;
    tosac_program_opts po = tosac_program_opts_default();
    EXPECT(tosac_program_create(q[0], &po, &p, d) == TOSAC_OK);
    double sig[2] = {0, 0}, noise[2] = {0, 0};
    for (int s2 = 0; p && s2 < NS; s2++) {
        int8_t *in = tosac_program_input_ptr(p, 0);
        for (int k = 0; k < NE; k++) in[k] = (int8_t)tosac_quant_quantize(data[s2][k], io[0]->inputs[0].q, -128, 127);
        EXPECT(tosac_program_invoke(p, d) == TOSAC_OK);
        for (int o2 = 0; o2 < 2; o2++) {
            const int8_t *yq = tosac_program_output_ptr(p, (uint32_t)o2);
            for (int k = 0; k < NE; k++) {
                float v = data[s2][k] + data[s2][k];
                double ref = o2 == 0 ? v : v < 0 ? 0.0 : v > 6 ? 6.0 : v;
                double dq = io[0]->outputs[o2].q.scale * (yq[k] - io[0]->outputs[o2].q.zero_point);
                sig[o2] += ref * ref;
                noise[o2] += (ref - dq) * (ref - dq);
            }
        }
    }
    tosac_program_destroy(p);
    int found = 0;
    for (uint32_t k = 0; k < r[0]->n_layers; k++) {
        int o2 = !strcmp(r[0]->layers[k].name, "a") ? 0 : !strcmp(r[0]->layers[k].name, "z") ? 1 : -1;
        if (o2 < 0) continue;
        found++;
        EXPECT_EQ_I((int)r[0]->layers[k].n, NS * NE);
        EXPECT(fabs(r[0]->layers[k].signal - sig[o2]) <= sig[o2] * 1e-12);
        EXPECT(fabs(r[0]->layers[k].noise - noise[o2]) <= noise[o2] * 1e-9 + 1e-12);
    }
    EXPECT_EQ_I(found, 2);
out:
    for (int k = 0; k < 3; k++) {
        tosac_quant_report_free(r[k]);
        tosac_quant_iomap_free(io[k]);
        tosac_graph_destroy(q[k]);
    }
    tosac_graph_destroy(g);
    tosac_diag_destroy(d);
}

/* ---- --a16w8: 16-bit multipliers, symmetric int16 q-params, the 513-entry int16 TABLE ------- */

/* scale32 = false: frexp mantissa * 2^15, found here by doubling/halving in long double */
static bool ref_multiplier16(double scale, int32_t *m_out, int32_t *s_out)
{
    return ref_multiplier_bits(scale, 15, m_out, s_out);
}

static void test_multiplier16(void)
{
    int32_t m = 0, s = 0;
    EXPECT(tosac_quant_multiplier16(1.0, &m, &s));
    EXPECT_EQ_I(m, 1 << 14); /* TOSA's apply_scale_16 identity */
    EXPECT_EQ_I(s, 14);
    EXPECT(tosac_quant_multiplier16(1.0 - ldexp(1.0, -20), &m, &s)); /* rounds up to 2^15: halved */
    EXPECT_EQ_I(m, 1 << 14);
    EXPECT_EQ_I(s, 14);
    EXPECT(!tosac_quant_multiplier16(ldexp(1.0, 13), &m, &s)); /* shift 1 */
    EXPECT(!tosac_quant_multiplier16(0.0, &m, &s));
    EXPECT(!tosac_quant_multiplier16(NAN, &m, &s));
    uint64_t st = 777;
    for (int i = 0; i < 100000; i++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        double scale = exp2(-50.0 + (double)(st >> 40) / (double)(1ull << 24) * 62.0); /* 2^-50 .. 2^12 */
        int32_t rm, rs;
        bool ok = tosac_quant_multiplier16(scale, &m, &s), rok = ref_multiplier16(scale, &rm, &rs);
        EXPECT(ok == rok);
        if (!ok || !rok) continue;
        EXPECT_EQ_I(m, rm);
        EXPECT_EQ_I(s, rs);
        EXPECT(m >= 0 && m <= 32767 && s >= 2 && s <= 62); /* an int16 multiplier */
        if (s < 62) EXPECT(m >= (1 << 14) && fabsl(ldexpl((long double)m, -s) - scale) <= ldexpl(0.5L, -s));
    }
}

static void test_choose16(void)
{
    tosac_qparams q = tosac_quant_choose_act16(-2.0, 0.5);
    EXPECT_EQ_I(q.zero_point, 0);
    EXPECT(q.scale == 2.0 / 32767.0);
    q = tosac_quant_choose_act16(0.0, 3.0);
    EXPECT_EQ_I(q.zero_point, 0);
    EXPECT(q.scale == 3.0 / 32767.0);
    q = tosac_quant_choose_act16(0.0, 0.0);
    EXPECT(q.scale == TOSAC_QUANT_EPS16);
    /* finer than int8 for any range int8 resolves (its eps is 2^-16 per 255 codes) */
    EXPECT(tosac_quant_choose_act16(-1e-3, 1e-3).scale < tosac_quant_choose_act(-1e-3, 1e-3).scale);
}

static tosac_status eval_tanh(void *u, const float *x, float *y, uint32_t n, tosac_diag *d)
{
    (void)u, (void)d;
    for (uint32_t k = 0; k < n; k++) y[k] = tanhf(x[k]);
    return TOSAC_OK;
}
static tosac_status eval_step(void *u, const float *x, float *y, uint32_t n, tosac_diag *d)
{
    (void)u, (void)d;
    for (uint32_t k = 0; k < n; k++) y[k] = x[k] < 0 ? -1.0f : 1.0f;
    return TOSAC_OK;
}

/* TOSA's int16 TABLE (TOSA.md): idx = (v + 32768) >> 7, frac = v & 127, (base << 7) + slope * frac */
static int32_t ref_table16(const int16_t *t, int32_t v)
{
    int32_t idx = (v + 32768) >> 7, frac = (v + 32768) & 127;
    return t[idx] * 128 + (t[idx + 1] - t[idx]) * frac;
}

static void test_table16(void)
{
    int16_t t[513];
    bool ok = false;
    tosac_diag *d = tosac_diag_create();
    tosac_qparams in = {4.0 / 32767.0, 0}, out = {1.0 / 32767.0, 0};
    EXPECT(tosac_quant_table_int16(in, out, -INFINITY, INFINITY, eval_tanh, NULL, t, &ok, d) == TOSAC_OK);
    EXPECT(ok);
    for (int i = -256; i <= 256; i++) { /* entry i + 256 samples the input code 128 i (the last: 32768) */
        long double x = (long double)(float)(in.scale * 128.0 * i), v = tanhl(x) * 32767.0L;
        int64_t r = v < 0 ? -rhe(-v) : rhe(v);
        r = r < -32768 ? -32768 : r > 32767 ? 32767 : r;
        long double fr = fabsl(v) - floorl(fabsl(v));
        EXPECT(llabs((long long)(t[i + 256] - r)) <= (fabsl(fr - 0.5L) < 1e-3L ? 1 : 0) + (fabsl(v) > 32000 ? 1 : 0));
    }
    /* interpolated by TOSA's rule, the int32 result at out.scale / 128 follows tanh closely over
       every int16 input code */
    double worst = 0;
    for (int32_t v = -32768; v <= 32767; v++) {
        double y = ref_table16(t, v) * out.scale / 128.0, e = fabs(y - tanh(v * in.scale));
        worst = e > worst ? e : worst;
    }
    EXPECT(worst < 3.0 * out.scale);
    /* the calibrated range holds f constant outside it */
    EXPECT(tosac_quant_table_int16(in, out, -1.0, 2.0, eval_tanh, NULL, t, &ok, d) == TOSAC_OK);
    int16_t lo = (int16_t)rhe(-tanhl(-1.0L) * 32767.0L) * -1, hi = (int16_t)rhe(tanhl(2.0L) * 32767.0L);
    EXPECT_EQ_I(t[0], lo);
    EXPECT_EQ_I(t[100], lo); /* x = -2.44 */
    EXPECT_EQ_I(t[512], hi);
    EXPECT_EQ_I(t[256 + 200], hi); /* x = 3.1 */
    EXPECT(t[256 + 120] < hi);     /* x = 1.83 is inside: not clamped */
    /* a jump of more than 32767 between neighbours breaks TOSA's slope REQUIRE: reported */
    EXPECT(tosac_quant_table_int16(in, out, -INFINITY, INFINITY, eval_step, NULL, t, &ok, d) == TOSAC_OK);
    EXPECT(!ok);
    tosac_qparams coarse = {2.5 / 32767.0, 0};
    EXPECT(tosac_quant_table_int16(in, coarse, -INFINITY, INFINITY, eval_step, NULL, t, &ok, d) == TOSAC_OK);
    EXPECT(ok);
    tosac_diag_destroy(d);
}

/* silu_graph with --a16w8: valid for PRO-INT + EXT-INT16 (and only with it), INT16 I/O, one
   int16 TABLE, results within a few int16 steps of SiLU and ReLU6 (inside the calibrated range:
   8 x 128 standard normal values reach about +-3). */
static void test_quantize_a16w8(void)
{
    tosac_graph *g = silu_graph(), *q = NULL;
    tosac_diag *d = tosac_diag_create();
    tosac_quant_iomap *io = NULL;
    tosac_quant_opts o;
    memset(&o, 0, sizeof o);
    o.n_random = 8;
    o.seed = 3;
    o.a16w8 = true;
    EXPECT(tosac_quantize(g, &o, &q, &io, d) == TOSAC_OK);
    for (size_t k = 0; k < tosac_diag_count(d); k++) printf("  %s\n", tosac_diag_message(d, k, NULL));
    if (!q) goto out;
    tosac_validate_opts vo = tosac_validate_opts_default();
    vo.profiles = TOSAC_PROFILE_INT;
    vo.extensions = TOSAC_EXT_INT16;
    EXPECT(tosac_validate(q, &vo, d) == TOSAC_OK);
    tosac_diag *d2 = tosac_diag_create();
    vo.extensions = 0;
    EXPECT(tosac_validate(q, &vo, d2) != TOSAC_OK);
    tosac_diag_destroy(d2);
    const tosac_block *b = q->regions[0]->blocks[0];
    int tables = 0;
    for (uint32_t k = 0; k < b->n_nodes; k++)
        if (b->nodes[k]->op == TOSAC_OP_TABLE) {
            tables++;
            EXPECT(b->nodes[k]->inputs[0]->dtype == TOSAC_DTYPE_INT16 && b->nodes[k]->inputs[1]->shape[0] == 513 &&
                   b->nodes[k]->outputs[0]->dtype == TOSAC_DTYPE_INT32);
        }
    EXPECT_EQ_I(tables, 1);
    EXPECT(b->inputs[0]->dtype == TOSAC_DTYPE_INT16 && b->outputs[0]->dtype == TOSAC_DTYPE_INT16);
    EXPECT(io->inputs[0].type == TOSAC_QUANT_IO_INT16 && io->outputs[0].type == TOSAC_QUANT_IO_INT16 &&
           io->outputs[1].type == TOSAC_QUANT_IO_INT16);
    EXPECT_EQ_I(io->inputs[0].q.zero_point, 0);
    tosac_program *p = NULL;
    tosac_program_opts po = tosac_program_opts_default();
    po.validate.profiles = TOSAC_PROFILE_INT;
    po.validate.extensions = TOSAC_EXT_INT16;
    EXPECT(tosac_program_create(q, &po, &p, d) == TOSAC_OK);
    if (p) {
        int16_t *in = tosac_program_input_ptr(p, 0), codes[128];
        for (int k = 0; k < 128; k++)
            in[k] = codes[k] = (int16_t)tosac_quant_quantize(-2.5 + 5.0 * k / 127.0, io->inputs[0].q, -32767, 32767);
        EXPECT(tosac_program_invoke(p, d) == TOSAC_OK);
        const int16_t *y = tosac_program_output_ptr(p, 0), *z = tosac_program_output_ptr(p, 1);
        for (int k = 0; k < 128; k++) {
            double xq = tosac_quant_dequantize(codes[k], io->inputs[0].q);
            double silu = xq / (1 + exp(-xq)), relu6 = xq < 0 ? 0 : xq > 6 ? 6 : xq;
            EXPECT(fabs(tosac_quant_dequantize(y[k], io->outputs[0].q) - silu) <= 3.0 * io->outputs[0].q.scale);
            EXPECT(fabs(tosac_quant_dequantize(z[k], io->outputs[1].q) - relu6) <= 1.01 * io->outputs[1].q.scale);
        }
        tosac_program_destroy(p);
    }
out:
    tosac_quant_iomap_free(io);
    tosac_graph_destroy(q);
    tosac_graph_destroy(g);
    tosac_diag_destroy(d);
}

/* Statistics of a CLAMP's result and of data movement are taken from their input's observation
   (calibrate.c): x[1,64,128] -> CLAMP(-1, 9) -> y, x -> IDENTITY -> r, both outputs. Their q-params
   must be those computed here from the definition: the elements clamp(x) and x themselves,
   binned one by one with tosac_quant_hist_bin, then the method's range and the int8 choice.
   mse: every bin's count enters the range. With `inf`, one sample holds +-infinity (the clamp
   moves them: that sample observes y itself; percentile, as mse has no finite range for x).
   One sample holds -0.0; 1, 2 and 3 threads give the same. */
static void derived_stats(tosac_quant_calib_method method, bool inf)
{
    enum { S = 6, N = 64 * 128 };
    tosac_graph *g = tosac_graph_create();
    tosac_block *b = tosac_region_add_block(tosac_graph_add_region(g, "main"), "main");
    int64_t sh[3] = {1, 64, 128};
    tosac_value *x = tosac_block_add_tensor(b, "x", TOSAC_DTYPE_FP32, 3, sh);
    tosac_value *y = tosac_block_add_tensor(b, "y", TOSAC_DTYPE_FP32, 3, sh);
    tosac_value *r = tosac_block_add_tensor(b, "r", TOSAC_DTYPE_FP32, 3, sh);
    tosac_block_add_input(b, x);
    const float lo = -1.0f, hi = 9.0f;
    add_clamp(b, x, y, lo, hi);
    tosac_block_add_node(b, TOSAC_OP_IDENTITY, 1, &x, 1, &r);
    tosac_block_add_output(b, y);
    tosac_block_add_output(b, r);
    tosac_graph_link(g);

    float *data = malloc((size_t)S * N * sizeof *data);
    uint64_t *hy = calloc(TOSAC_QUANT_HIST_BINS, sizeof *hy), *hx = calloc(TOSAC_QUANT_HIST_BINS, sizeof *hx);
    const float *samples[S];
    tosac_diag *d = tosac_diag_create();
    if (!data || !hy || !hx || !d) {
        EXPECT(false);
        goto out;
    }
    uint64_t st = 7;
    double ymin = INFINITY, ymax = -INFINITY, xmin = INFINITY, xmax = -INFINITY;
    for (int k = 0; k < S * N; k++) {
        double u = unif(&st), v = 3.0 * (u - 0.35) * (1.0 + 4.0 * unif(&st));
        float f = (float)v;
        if (inf && k / N == 2 && k % 4001 == 0) f = k % 2 ? INFINITY : -INFINITY;
        if (k / N == 4 && k % 31 == 0) f = -0.0f;
        data[k] = f;
        float fy = f < lo ? lo : f > hi ? hi : f;
        hy[tosac_quant_hist_bin(fy)]++;
        hx[tosac_quant_hist_bin(f)]++;
        ymin = fmin(ymin, fy), ymax = fmax(ymax, fy);
        xmin = fmin(xmin, f), xmax = fmax(xmax, f);
    }
    for (int k = 0; k < S; k++) samples[k] = data + (size_t)k * N;
    double ylo, yhi, xlo, xhi;
    tosac_quant_hist_range(hy, method, ymin, ymax, &ylo, &yhi);
    tosac_quant_hist_range(hx, method, xmin, xmax, &xlo, &xhi);
    tosac_qparams qy = tosac_quant_choose_act(ylo, yhi), qx = tosac_quant_choose_act(xlo, xhi);
    /* the check can tell them apart: the clamp cuts x's lower tail */
    EXPECT(xlo < -1.0 && ylo >= -1.0 && yhi <= 9.0 && (qy.scale != qx.scale || qy.zero_point != qx.zero_point));
    for (uint32_t threads = 1; threads <= 3; threads++) {
        tosac_quant_opts o;
        memset(&o, 0, sizeof o);
        o.n_samples = S;
        o.data = samples;
        o.method = method;
        o.threads = threads;
        tosac_graph *q = NULL;
        tosac_quant_iomap *io = NULL;
        EXPECT(tosac_quantize(g, &o, &q, &io, d) == TOSAC_OK);
        for (size_t k = 0; k < tosac_diag_count(d); k++) printf("  %s\n", tosac_diag_message(d, k, NULL));
        if (io && io->n_outputs == 2) {
            EXPECT(io->outputs[0].q.scale == qy.scale && io->outputs[0].q.zero_point == qy.zero_point);
            EXPECT(io->outputs[1].q.scale == qx.scale && io->outputs[1].q.zero_point == qx.zero_point);
        } else {
            EXPECT(false);
        }
        tosac_quant_iomap_free(io);
        tosac_graph_destroy(q);
    }
out:
    free(data);
    free(hy);
    free(hx);
    tosac_diag_destroy(d);
    tosac_graph_destroy(g);
}

static void test_derived_stats(void)
{
    derived_stats(TOSAC_QUANT_CALIB_MSE, false);
    derived_stats(TOSAC_QUANT_CALIB_PERCENTILE, true);
    derived_stats(TOSAC_QUANT_CALIB_MINMAX, false);
}

int main(void)
{
    RUN(test_multiplier_known);
    RUN(test_multiplier_sweep);
    RUN(test_quantize);
    RUN(test_choose);
    RUN(test_table);
    RUN(test_quantize_graph);
    RUN(test_quantize_max_gather);
    RUN(test_hist_bins);
    RUN(test_hist_percentile);
    RUN(test_sqnr);
    RUN(test_report_kept);
    RUN(test_report_int32);
    RUN(test_multiplier16);
    RUN(test_choose16);
    RUN(test_table16);
    RUN(test_quantize_a16w8);
    RUN(test_derived_stats);
    return test_summary();
}
