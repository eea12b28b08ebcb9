/*
 * RESCALE's prepared path (per-channel tables, portable / AVX2 / AVX-512 loops) against its
 * per-element path and the spec formula computed here, and the fused RESCALE (+ CLAMP) epilogue of
 * CONV2D / DEPTHWISE_CONV2D / MATMUL against the three operators run one after the other: bit for
 * bit, at every instruction-set level, on random data with channel counts around the vector
 * widths, padding, strides, zero points, small shifts (value-range REQUIREs) and bad multipliers.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness/ktensor.h"
#include "harness/test.h"
#include "kernels/k_epilogue.h"
#include "kernels/kernel.h"
#include "unit/kernels_run.h"

#define RNG_SEED 0x9E3779B97F4A7C15ull
#include "harness/rng.h"

static void seti(tt *x, int64_t i, int64_t v)
{
    switch (x->t.dtype) {
    case TOSAC_DTYPE_INT8: ((int8_t *)x->buf)[i] = (int8_t)v; break;
    case TOSAC_DTYPE_INT16: ((int16_t *)x->buf)[i] = (int16_t)v; break;
    default: ((int32_t *)x->buf)[i] = (int32_t)v; break;
    }
}
static int64_t geti(const tt *x, int64_t i)
{
    switch (x->t.dtype) {
    case TOSAC_DTYPE_INT8: return ((const int8_t *)x->buf)[i];
    case TOSAC_DTYPE_INT16: return ((const int16_t *)x->buf)[i];
    default: return ((const int32_t *)x->buf)[i];
    }
}
static void mk(tt *x, tosac_dtype dt, int rank, const int64_t *shape) { tt_make(x, dt, false, rank, shape); }
static void mk1(tt *x, tosac_dtype dt, int64_t n) { mk(x, dt, 1, &n); }

static void attr_i(tosac_attr_val *a, unsigned id, int64_t v)
{
    a[id].present = true;
    a[id].i = v;
}
static void attr_v(tosac_attr_val *a, unsigned id, const void *v, uint32_t n)
{
    a[id].present = true;
    a[id].data = v;
    a[id].len = n;
}

static tosac_kcall mkcall(uint32_t op, tosac_ktensor *in, uint32_t nin, tosac_ktensor *out, const tosac_attr_val *a)
{
    tosac_kcall c;
    memset(&c, 0, sizeof c);
    c.op = op, c.n_in = nin, c.n_out = 1, c.in = in, c.out = out, c.attr = a;
    return c;
}

/* A RESCALE case: input x, multiplier, shift, zero points, output y, attributes. */
typedef struct {
    tt x, mul, shf, izp, ozp, y;
    tosac_attr_val a[TOSAC_ATTR_MAX_FIELDS];
    int64_t nc;
    bool dbl, iu, ou;
} rcase;

static void rcase_free(rcase *r)
{
    tt_free(&r->x), tt_free(&r->mul), tt_free(&r->shf), tt_free(&r->izp), tt_free(&r->ozp), tt_free(&r->y);
}

/* Random multiplier / shift per channel: mostly valid, small shifts now and then (so that large
   values fail the range REQUIRE), a negative multiplier rarely. */
static void rand_scales(rcase *r, bool allow_bad)
{
    /* now and then every shift >= 33 (what the quantizer produces; the kernels' int32-lane form) */
    const bool large = rnd() % 3 == 0;
    for (int64_t j = 0; j < r->nc; j++) {
        int64_t m = rnd_in(0, INT32_MAX), s = large ? rnd_in(33, 62) : rnd_in(20, 50);
        if (large && rnd() % 4 == 0) s = rnd() % 2 ? 33 : 62;
        if (large && rnd() % 8 == 0) m = rnd() % 2 ? 0 : INT32_MAX;
        if (!large && rnd() % 8 == 0) s = rnd_in(2, 62);
        if (allow_bad && rnd() % 40 == 0) m = -rnd_in(1, 1000);
        seti(&r->mul, j, m);
        ((int8_t *)r->shf.buf)[j] = (int8_t)s;
    }
}

static void rcase_attrs(rcase *r, bool per_channel)
{
    memset(r->a, 0, sizeof r->a);
    attr_i(r->a, TOSAC_ATTR_RESCALE_scale32, 1);
    attr_i(r->a, TOSAC_ATTR_RESCALE_rounding_mode, r->dbl ? TOSAC_ROUND_DOUBLE : TOSAC_ROUND_SINGLE);
    attr_i(r->a, TOSAC_ATTR_RESCALE_per_channel, per_channel);
    attr_i(r->a, TOSAC_ATTR_RESCALE_input_unsigned, r->iu);
    attr_i(r->a, TOSAC_ATTR_RESCALE_output_unsigned, r->ou);
}

static tosac_status rescale_run(rcase *r, uint32_t const_mask, const char **why)
{
    tosac_ktensor in[5] = {r->x.t, r->mul.t, r->shf.t, r->izp.t, r->ozp.t};
    tosac_kcall c = mkcall(TOSAC_OP_RESCALE, in, 5, &r->y.t, r->a);
    kr_const_mask = const_mask;
    tosac_status s = kernels_run_call(&c);
    kr_const_mask = 0;
    *why = c.why;
    return s;
}

/* floor(a / 2^s) for |a| < 2^63, by division (independent of the kernels' shift forms). */
static int64_t floor_div_pow2(int64_t a, int s)
{
    int64_t d = (int64_t)1 << s, q = a / d;
    return (a % d != 0 && a < 0) ? q - 1 : q;
}

/* The spec's RESCALE of one element (TOSA.md §B.3); false when a REQUIRE fails. */
static bool spec_rescale(const rcase *r, int64_t i, int64_t *out)
{
    int64_t ch = r->nc > 1 ? i % r->nc : 0, v = geti(&r->x, i), izp = geti(&r->izp, 0), ozp = geti(&r->ozp, 0);
    unsigned ib = tosac_dtype_bits(r->x.t.dtype), ob = tosac_dtype_bits(r->y.t.dtype);
    if (r->iu) v &= ((int64_t)1 << ib) - 1, izp &= ((int64_t)1 << ib) - 1;
    if (r->ou) ozp &= ((int64_t)1 << ob) - 1;
    v -= izp;
    int64_t m = geti(&r->mul, ch), s = ((const int8_t *)r->shf.buf)[ch];
    if (m < 0 || s < 2 || s > 62) return false;
    if (v < -((int64_t)1 << (s - 1)) || v >= ((int64_t)1 << (s - 1))) return false;
    int64_t round = (int64_t)1 << (s - 1);
    if (r->dbl && s > 31) round += v >= 0 ? ((int64_t)1 << 30) : -((int64_t)1 << 30);
    int64_t t = floor_div_pow2(v * m + round, (int)s) + ozp;
    if (t < INT32_MIN || t > INT32_MAX) return false;
    int64_t lo = r->ou ? 0 : -((int64_t)1 << (ob - 1)), hi = r->ou ? ((int64_t)1 << ob) - 1 : ((int64_t)1 << (ob - 1)) - 1;
    *out = t < lo ? lo : t > hi ? hi : t;
    return true;
}

static void test_rescale_random(void)
{
    static const int64_t ncs[] = {1, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 65, 1000};
    for (int iter = 0; iter < 400; iter++) {
        rcase r;
        memset(&r, 0, sizeof r);
        static const tosac_dtype ins[] = {TOSAC_DTYPE_INT32, TOSAC_DTYPE_INT32, TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT16};
        static const tosac_dtype outs[] = {TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT16, TOSAC_DTYPE_INT32};
        tosac_dtype ti = ins[rnd() % 4], to = outs[rnd() % 4];
        bool per_channel = rnd() % 3 != 0;
        r.nc = per_channel ? ncs[rnd() % (sizeof ncs / sizeof ncs[0])] : 1;
        int64_t rows = rnd_in(1, r.nc > 100 ? 3 : 40);
        int64_t shape[2] = {rows, per_channel ? r.nc : rnd_in(1, 70)};
        r.dbl = rnd() % 2;
        r.iu = ti != TOSAC_DTYPE_INT32 && to != TOSAC_DTYPE_INT32 && rnd() % 5 == 0;
        r.ou = !r.iu && ti != TOSAC_DTYPE_INT32 && to != TOSAC_DTYPE_INT32 && rnd() % 5 == 0;
        mk(&r.x, ti, 2, shape);
        mk(&r.y, to, 2, shape);
        mk1(&r.mul, TOSAC_DTYPE_INT32, r.nc);
        mk1(&r.shf, TOSAC_DTYPE_INT8, r.nc);
        mk1(&r.izp, ti, 1);
        mk1(&r.ozp, to, 1);
        int64_t span = ti == TOSAC_DTYPE_INT8 ? 8 : ti == TOSAC_DTYPE_INT16 ? 16 : rnd() % 2 ? 31 : 20;
        /* now and then only values <= 0: a failing range REQUIRE is then the lower bound's alone
           (the multipliers made small below) */
        const bool neg = !r.iu && rnd() % 4 == 0;
        for (int64_t i = 0; i < r.x.t.nelem; i++)
            seti(&r.x, i, rnd_in(-((int64_t)1 << (span - 1)), neg ? 0 : ((int64_t)1 << (span - 1)) - 1));
        if (ti == TOSAC_DTYPE_INT8) seti(&r.izp, 0, rnd_in(-128, 127));
        if (ti == TOSAC_DTYPE_INT16 && r.iu && rnd() % 2) seti(&r.izp, 0, -32768);
        if (to == TOSAC_DTYPE_INT8) seti(&r.ozp, 0, rnd_in(-128, 127));
        rand_scales(&r, true);
        /* with small multipliers an out-of-range value fails only its own REQUIRE, not the result's */
        for (int64_t j = 0; neg && j < r.nc; j++)
            if (geti(&r.mul, j) > 0) seti(&r.mul, j, rnd_in(1, 1 << 10));
        rcase_attrs(&r, per_channel);
        bool wide_shifts = ti == TOSAC_DTYPE_INT32; /* every int32 value is in range: try the extremes */
        for (int64_t j = 0; j < r.nc; j++) wide_shifts &= ((const int8_t *)r.shf.buf)[j] >= 32;
        const size_t n = (size_t)r.x.t.nelem;
        for (size_t i = 0; wide_shifts && i < n; i++)
            if (rnd() % 16 == 0) seti(&r.x, (int64_t)i, rnd() % 2 ? INT32_MIN : INT32_MAX);

        /* the spec, element by element */
        int64_t *expect = calloc(n, sizeof *expect);
        bool spec_ok = true;
        for (size_t i = 0; i < n && spec_ok; i++) spec_ok = spec_rescale(&r, (int64_t)i, &expect[i]);
        /* per-element path (multiplier not constant), then the prepared path at every level */
        const char *why;
        tosac_status ref = rescale_run(&r, 0u, &why);
        EXPECT_EQ_I(ref, spec_ok ? TOSAC_OK : TOSAC_ERR_UNPREDICTABLE);
        for (int64_t i = 0; spec_ok && ref == TOSAC_OK && i < (int64_t)n; i++) {
            /* an unsigned result is stored as its bit pattern */
            int64_t e = !r.ou ? expect[i] : to == TOSAC_DTYPE_INT8 ? (expect[i] ^ 0x80) - 0x80 : (expect[i] ^ 0x8000) - 0x8000;
            if (geti(&r.y, i) != e) {
                EXPECT_EQ_I(geti(&r.y, i), e);
                break;
            }
        }
        uint8_t *want = malloc((size_t)n * r.y.es + 1);
        memcpy(want, r.y.buf, (size_t)n * r.y.es);
        for (uint32_t level = 0; level <= TOSAC_KISA_AVX512; level++) {
            tosac_kernel_limit_isa(level);
            memset(r.y.buf, 0x5A, (size_t)n * r.y.es);
            tosac_status s = rescale_run(&r, ~1u, &why);
            EXPECT_EQ_I(s, ref);
            if (s == TOSAC_OK && ref == TOSAC_OK && memcmp(want, r.y.buf, (size_t)n * r.y.es) != 0) {
                fprintf(stderr, "  level %u: ti %d to %d nc %lld rows %lld dbl %d\n", level, (int)ti, (int)to,
                        (long long)r.nc, (long long)rows, (int)r.dbl);
                EXPECT(!"prepared RESCALE differs from the per-element path");
            }
        }
        /* chunks on three workers in reverse (kernels_run.h) */
        kr_workers = 3;
        memset(r.y.buf, 0x5A, (size_t)n * r.y.es);
        EXPECT_EQ_I(rescale_run(&r, ~1u, &why), ref);
        if (ref == TOSAC_OK) EXPECT(memcmp(want, r.y.buf, (size_t)n * r.y.es) == 0);
        kr_workers = 1;
        tosac_kernel_limit_isa(TOSAC_KISA_AVX512);
        free(want);
        free(expect);
        rcase_free(&r);
    }
}

/* An INT8 input with a per-tensor scale (the table of its 256 results) to INT16 / INT32, shifts
   below 33 as in the quantizer's residual joins, results spanning every byte: the spec, at every
   level, on lengths around the 64-element vectors, also in three workers' chunks. */
static void test_rescale_lut(void)
{
    static const int64_t lens[] = {1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 191, 1000, 4099};
    for (int iter = 0; iter < 120; iter++) {
        rcase r;
        memset(&r, 0, sizeof r);
        const tosac_dtype to = iter % 3 == 0 ? TOSAC_DTYPE_INT16 : TOSAC_DTYPE_INT32;
        const int64_t n = lens[(size_t)iter % (sizeof lens / sizeof lens[0])];
        r.nc = 1;
        r.dbl = rnd() % 2;
        r.iu = to == TOSAC_DTYPE_INT16 && rnd() % 4 == 0;
        mk1(&r.x, TOSAC_DTYPE_INT8, n);
        mk1(&r.y, to, n);
        mk1(&r.mul, TOSAC_DTYPE_INT32, 1);
        mk1(&r.shf, TOSAC_DTYPE_INT8, 1);
        mk1(&r.izp, TOSAC_DTYPE_INT8, 1);
        mk1(&r.ozp, to, 1);
        for (int64_t i = 0; i < n; i++) seti(&r.x, i, rnd_in(-128, 127));
        seti(&r.izp, 0, rnd_in(-128, 127));
        /* (output_zp is 0 for these output types) */
        seti(&r.mul, 0, rnd_in(1 << 30, INT32_MAX));
        ((int8_t *)r.shf.buf)[0] = (int8_t)(to == TOSAC_DTYPE_INT16 ? rnd_in(25, 32) : rnd_in(9, 32));
        if (iter % 4 == 1) { /* a multiplier 2^30, shifts around 30: exact left shifts up to 21 bits, then not */
            seti(&r.mul, 0, 1 << 30);
            ((int8_t *)r.shf.buf)[0] = (int8_t)(to == TOSAC_DTYPE_INT16 ? rnd_in(25, 32) : rnd_in(9, 32));
        }
        rcase_attrs(&r, false);
        int64_t *expect = calloc((size_t)n, sizeof *expect);
        bool spec_ok = true;
        for (int64_t i = 0; i < n && spec_ok; i++) spec_ok = spec_rescale(&r, i, &expect[i]);
        EXPECT(spec_ok);
        const char *why;
        for (uint32_t level = 0; level <= TOSAC_KISA_AVX512; level++)
            for (uint32_t w = 1; w <= 3; w += 2) {
                tosac_kernel_limit_isa(level);
                kr_workers = w;
                memset(r.y.buf, 0x5A, (size_t)n * r.y.es);
                EXPECT_EQ_I(rescale_run(&r, ~1u, &why), TOSAC_OK);
                for (int64_t i = 0; i < n; i++) {
                    const int64_t e = !r.ou ? expect[i] : (expect[i] ^ 0x8000) - 0x8000;
                    if (geti(&r.y, i) != e) {
                        fprintf(stderr, "  level %u workers %u n %lld element %lld\n", level, w, (long long)n,
                                (long long)i);
                        EXPECT_EQ_I(geti(&r.y, i), e);
                        break;
                    }
                }
            }
        kr_workers = 1;
        tosac_kernel_limit_isa(TOSAC_KISA_AVX512);
        free(expect);
        rcase_free(&r);
    }
}

/* ---- fused epilogues ------------------------------------------------------------------------ */

typedef struct {
    uint32_t op;
    tt in, w, bias, izp, wzp, acc; /* conv: in, w, bias, zps -> acc; matmul: in (A), w (B), izp, wzp */
    tosac_attr_val a[TOSAC_ATTR_MAX_FIELDS];
    int32_t pad[4], st[2], dl[2];
} producer;

static void producer_free(producer *p)
{
    tt_free(&p->in), tt_free(&p->w), tt_free(&p->bias), tt_free(&p->izp), tt_free(&p->wzp), tt_free(&p->acc);
}

/* A random int8 CONV2D / DEPTHWISE_CONV2D / MATMUL with int32 result of last dimension *oc. */
static void producer_make(producer *p, uint32_t op, int64_t *oc)
{
    memset(p, 0, sizeof *p);
    p->op = op;
    if (op == TOSAC_OP_MATMUL) {
        int64_t N = rnd_in(1, 2), H = rnd_in(1, 9), C = rnd_in(1, 40), W = rnd_in(1, 40);
        if (rnd() % 4 == 0) /* large enough to be split over the workers' column blocks */
            H = rnd_in(6, 9), C = rnd_in(160, 220), W = rnd_in(140, 260);
        int64_t as[3] = {N, H, C}, bs[3] = {N, C, W}, os[3] = {N, H, W};
        mk(&p->in, TOSAC_DTYPE_INT8, 3, as), mk(&p->w, TOSAC_DTYPE_INT8, 3, bs), mk(&p->acc, TOSAC_DTYPE_INT32, 3, os);
        *oc = W;
    } else {
        bool dw = op == TOSAC_OP_DEPTHWISE_CONV2D;
        int64_t N = 1, IH = rnd_in(1, 9), IW = rnd_in(1, 9), IC = rnd_in(1, 20), KH = rnd_in(1, 3), KW = rnd_in(1, 3);
        int64_t M = dw ? rnd_in(1, 2) : 1, OC = dw ? IC * M : rnd_in(1, 40);
        for (int i = 0; i < 4; i++) p->pad[i] = (int32_t)rnd_in(0, 1);
        for (int i = 0; i < 2; i++) p->st[i] = (int32_t)rnd_in(1, 2), p->dl[i] = 1;
        if (!dw && rnd() % 4 == 0) { /* few pixels, many channels: split over the workers' column groups */
            IH = rnd_in(6, 8), IW = rnd_in(6, 8), IC = rnd_in(60, 80), KH = KW = 3, OC = rnd_in(130, 200);
            for (int i = 0; i < 4; i++) p->pad[i] = 1;
            p->st[0] = p->st[1] = 1;
        } else if (dw && rnd() % 2) { /* the AVX2 depthwise rows' geometries (k_idw_avx2.c): 8+ channels, 3 or 5 columns */
            static const int64_t cs[] = {8, 16, 24, 40, 72, 88};
            IH = rnd_in(2, 12), IW = rnd_in(1, 20), IC = cs[rnd() % 6], M = 1, OC = IC;
            KW = rnd() % 2 ? 3 : 5, KH = rnd() % 4 ? KW : rnd_in(1, 4);
            for (int i = 0; i < 4; i++) p->pad[i] = (int32_t)rnd_in(0, KW / 2);
        } else if (!dw && rnd() % 3 == 0) { /* rows of 7+ pixels, kernel rows of whole quads of bytes: read in place (int8 panels) */
            static const int64_t ics[] = {4, 8, 12, 16, 32}, ocs[] = {8, 16, 24, 32, 48, 64, 72};
            IH = rnd_in(3, 8), IW = rnd() % 2 ? rnd_in(7, 23) : rnd_in(24, 60), IC = ics[rnd() % 5], OC = ocs[rnd() % 7];
            KH = rnd_in(1, 3), KW = rnd() % 4 ? 3 : rnd_in(1, 2);
            for (int i = 0; i < 4; i++) p->pad[i] = (int32_t)rnd_in(0, 2);
        }
        int64_t OH = (IH - 1 + p->pad[0] + p->pad[1] - (KH - 1)) / p->st[0] + 1;
        int64_t OW = (IW - 1 + p->pad[2] + p->pad[3] - (KW - 1)) / p->st[1] + 1;
        if (OH < 1 || OW < 1) {
            IH += KH, IW += KW;
            OH = (IH - 1 + p->pad[0] + p->pad[1] - (KH - 1)) / p->st[0] + 1;
            OW = (IW - 1 + p->pad[2] + p->pad[3] - (KW - 1)) / p->st[1] + 1;
        }
        int64_t is[4] = {N, IH, IW, IC}, os[4] = {N, OH, OW, OC};
        int64_t ws[4] = {OC, KH, KW, IC}, wds[4] = {KH, KW, IC, M};
        mk(&p->in, TOSAC_DTYPE_INT8, 4, is), mk(&p->w, TOSAC_DTYPE_INT8, 4, dw ? wds : ws);
        mk(&p->acc, TOSAC_DTYPE_INT32, 4, os);
        mk1(&p->bias, TOSAC_DTYPE_INT32, rnd() % 4 ? OC : 1);
        /* now and then a bias at the top of int32: acc + bias overflows (the REQUIRE) for most sums */
        const bool top = rnd() % 12 == 0;
        for (int64_t i = 0; i < p->bias.t.nelem; i++)
            seti(&p->bias, i, top ? INT32_MAX - rnd_in(0, 1000) : rnd_in(-5000, 5000));
        attr_v(p->a, TOSAC_ATTR_CONV2D_pad, p->pad, 4);
        attr_v(p->a, TOSAC_ATTR_CONV2D_stride, p->st, 2);
        attr_v(p->a, TOSAC_ATTR_CONV2D_dilation, p->dl, 2);
        attr_i(p->a, TOSAC_ATTR_CONV2D_acc_type, TOSAC_DTYPE_INT32);
        *oc = OC;
    }
    for (int64_t i = 0; i < p->in.t.nelem; i++) seti(&p->in, i, rnd_in(-128, 127));
    for (int64_t i = 0; i < p->w.t.nelem; i++) seti(&p->w, i, rnd_in(-128, 127));
    mk1(&p->izp, TOSAC_DTYPE_INT8, 1), mk1(&p->wzp, TOSAC_DTYPE_INT8, 1);
    seti(&p->izp, 0, rnd_in(-128, 127));
    if (op == TOSAC_OP_MATMUL) seti(&p->wzp, 0, rnd_in(-128, 127));
}

/* Runs the producer (its weights constant: prepared) with epilogue `epi` or none. */
static tosac_status producer_run(producer *p, const tosac_kepilogue *epi)
{
    tosac_ktensor in[5];
    uint32_t n;
    if (p->op == TOSAC_OP_MATMUL)
        in[0] = p->in.t, in[1] = p->w.t, in[2] = p->izp.t, in[3] = p->wzp.t, n = 4;
    else
        in[0] = p->in.t, in[1] = p->w.t, in[2] = p->bias.t, in[3] = p->izp.t, in[4] = p->wzp.t, n = 5;
    tosac_kcall c = mkcall(p->op, in, n, &p->acc.t, p->a);
    c.epi = epi;
    kr_const_mask = ~1u;
    tosac_status s = kernels_run_call(&c);
    kr_const_mask = 0;
    return s;
}

static void test_fused_epilogue(void)
{
    static const uint32_t ops[] = {TOSAC_OP_CONV2D, TOSAC_OP_DEPTHWISE_CONV2D, TOSAC_OP_MATMUL};
    for (int iter = 0; iter < 150; iter++) {
        producer p;
        int64_t oc;
        producer_make(&p, ops[iter % 3], &oc);
        rcase r;
        memset(&r, 0, sizeof r);
        bool per_channel = rnd() % 4 != 0;
        r.nc = per_channel ? oc : 1;
        r.dbl = rnd() % 2;
        r.x = p.acc; /* shares the producer's int32 result (not freed twice) */
        tosac_dtype to = rnd() % 3 ? TOSAC_DTYPE_INT8 : TOSAC_DTYPE_INT16;
        mk(&r.y, to, p.acc.t.rank, p.acc.shape);
        r.y.t.shape = r.y.shape;
        mk1(&r.mul, TOSAC_DTYPE_INT32, r.nc), mk1(&r.shf, TOSAC_DTYPE_INT8, r.nc);
        mk1(&r.izp, TOSAC_DTYPE_INT32, 1), mk1(&r.ozp, to, 1);
        if (to == TOSAC_DTYPE_INT8) seti(&r.ozp, 0, rnd_in(-128, 127));
        for (int64_t j = 0; j < r.nc; j++) {
            seti(&r.mul, j, rnd_in(1 << 29, INT32_MAX));
            ((int8_t *)r.shf.buf)[j] = (int8_t)rnd_in(33, 45);
        }
        if (rnd() % 20 == 0) seti(&r.mul, 0, -7); /* the fused path must fail as the RESCALE does */
        rcase_attrs(&r, per_channel);
        bool clamp = rnd() % 2;
        int64_t qlo = to == TOSAC_DTYPE_INT8 ? -128 : -32768, qhi = -qlo - 1;
        int32_t clo = (int32_t)rnd_in(qlo, 0), chi = (int32_t)rnd_in(0, qhi);
        tt final;
        mk(&final, to, p.acc.t.rank, p.acc.shape);

        /* one by one, on the portable kernels (the fused runs below compare every level with them) */
        const char *why;
        tosac_kernel_limit_isa(TOSAC_KISA_PORTABLE);
        tosac_status s1 = producer_run(&p, NULL);
        EXPECT(s1 == TOSAC_OK || (p.op != TOSAC_OP_MATMUL && s1 == TOSAC_ERR_UNPREDICTABLE));
        tosac_status s2 = s1 == TOSAC_OK ? rescale_run(&r, ~1u, &why) : s1;
        int64_t n = r.y.t.nelem;
        for (int64_t i = 0; i < n && s2 == TOSAC_OK; i++) {
            int64_t v = geti(&r.y, i);
            if (clamp) v = v < clo ? clo : v > chi ? chi : v;
            seti(&final, i, v);
        }
        uint8_t *want = malloc((size_t)n * final.es + 1);
        memcpy(want, final.buf, (size_t)n * final.es);

        /* fused, at every level: the RESCALE call prepared once, the producer writing `got` */
        tosac_ktensor rin[5] = {r.x.t, r.mul.t, r.shf.t, r.izp.t, r.ozp.t};
        for (int i = 1; i < 5; i++) rin[i].constant = true;
        tosac_kcall rc = mkcall(TOSAC_OP_RESCALE, rin, 5, &r.y.t, r.a);
        int32_t lo, hi;
        EXPECT(tosac_rescale_fusable(&rc, &lo, &hi));
        tt got;
        mk(&got, to, p.acc.t.rank, p.acc.shape);
        /* and once more on three workers (kernels_run.h) */
        for (uint32_t pass = 0; pass <= TOSAC_KISA_AVX512 + 1; pass++) {
            const uint32_t level = pass <= TOSAC_KISA_AVX512 ? pass : TOSAC_KISA_AVX512;
            kr_workers = pass <= TOSAC_KISA_AVX512 ? 1 : 3;
            tosac_kernel_limit_isa(level);
            rc.isa = tosac_kernel_isa();
            tosac_kprep sz = {0, 0, 0};
            EXPECT_EQ_I(tosac_kernel_rescale_prepare(&rc, &sz, NULL), TOSAC_OK);
            void *prep = kr_alloc(sz.const_size);
            EXPECT_EQ_I(tosac_kernel_rescale_prepare(&rc, &sz, prep), TOSAC_OK);
            rc.prep = prep;
            tosac_kepilogue epi = {&rc, &got.t, clamp ? clo : lo, clamp ? chi : hi, 0.0f, 0.0f, false, NULL, NULL, NULL, NULL};
            memset(got.buf, 0x5A, (size_t)n * got.es);
            memset(p.acc.buf, 0x77, (size_t)n * sizeof(int32_t)); /* must not be needed */
            tosac_status s3 = producer_run(&p, &epi);
            EXPECT_EQ_I(s3, s2);
            if (s3 == TOSAC_OK && s2 == TOSAC_OK && memcmp(want, got.buf, (size_t)n * got.es) != 0)
                EXPECT(!"fused epilogue differs from the operators run one by one");
            rc.prep = NULL;
            free(prep);
        }
        kr_workers = 1;
        tosac_kernel_limit_isa(TOSAC_KISA_AVX512);
        free(want);
        tt_free(&got), tt_free(&final);
        tt_free(&r.y), tt_free(&r.mul), tt_free(&r.shf), tt_free(&r.izp), tt_free(&r.ozp);
        producer_free(&p);
    }
}

/* FP32 convolution + CLAMP: fused vs the CLAMP kernel after the convolution, bit for bit. */
static void test_fused_fp_clamp(void)
{
    for (int iter = 0; iter < 60; iter++) {
        producer p;
        int64_t oc;
        producer_make(&p, iter % 2 ? TOSAC_OP_DEPTHWISE_CONV2D : TOSAC_OP_CONV2D, &oc);
        /* the same shapes in fp32 */
        tt in, w, bias, zi, zw, out, got, want;
        mk(&in, TOSAC_DTYPE_FP32, p.in.t.rank, p.in.shape), mk(&w, TOSAC_DTYPE_FP32, p.w.t.rank, p.w.shape);
        mk(&bias, TOSAC_DTYPE_FP32, 1, p.bias.shape), mk1(&zi, TOSAC_DTYPE_FP32, 1), mk1(&zw, TOSAC_DTYPE_FP32, 1);
        mk(&out, TOSAC_DTYPE_FP32, p.acc.t.rank, p.acc.shape), mk(&got, TOSAC_DTYPE_FP32, p.acc.t.rank, p.acc.shape);
        mk(&want, TOSAC_DTYPE_FP32, p.acc.t.rank, p.acc.shape);
        for (int64_t i = 0; i < in.t.nelem; i++) ((float *)in.buf)[i] = (float)rnd_in(-1000, 1000) / 256.0f;
        for (int64_t i = 0; i < w.t.nelem; i++) ((float *)w.buf)[i] = (float)rnd_in(-1000, 1000) / 512.0f;
        for (int64_t i = 0; i < bias.t.nelem; i++) ((float *)bias.buf)[i] = (float)rnd_in(-100, 100) / 8.0f;
        if (rnd() % 4 == 0) ((float *)w.buf)[0] = __builtin_nanf(""); /* NaN results through the clamp */
        attr_i(p.a, TOSAC_ATTR_CONV2D_acc_type, TOSAC_DTYPE_FP32);
        float lo = (float)rnd_in(-20, 0) / 4.0f, hi = (float)rnd_in(0, 20) / 4.0f;
        bool ignore = rnd() % 2;
        tosac_attr_val ca[TOSAC_ATTR_MAX_FIELDS];
        memset(ca, 0, sizeof ca);
        attr_v(ca, TOSAC_ATTR_CLAMP_min_val, &lo, 4);
        attr_v(ca, TOSAC_ATTR_CLAMP_max_val, &hi, 4);
        attr_i(ca, TOSAC_ATTR_CLAMP_nan_mode, ignore ? TOSAC_NAN_IGNORE : TOSAC_NAN_PROPAGATE);
        tosac_ktensor kin[5] = {in.t, w.t, bias.t, zi.t, zw.t};
        tosac_kcall conv = mkcall(p.op, kin, 5, &out.t, p.a);
        kr_const_mask = ~1u;
        EXPECT_EQ_I(kernels_run_call(&conv), TOSAC_OK);
        tosac_ktensor cin = out.t;
        tosac_kcall clamp = mkcall(TOSAC_OP_CLAMP, &cin, 1, &want.t, ca);
        kr_const_mask = 0;
        EXPECT_EQ_I(kernels_run_call(&clamp), TOSAC_OK);
        tosac_kepilogue epi;
        memset(&epi, 0, sizeof epi);
        epi.out = &got.t;
        EXPECT(tosac_clamp_f32_bounds(&clamp, &epi.flo, &epi.fhi, &epi.fignore));
        for (uint32_t level = 0; level <= TOSAC_KISA_AVX512; level++) {
            tosac_kernel_limit_isa(level);
            memset(got.buf, 0x5A, (size_t)got.t.nelem * 4);
            conv.epi = &epi;
            kr_const_mask = ~1u;
            EXPECT_EQ_I(kernels_run_call(&conv), TOSAC_OK);
            kr_const_mask = 0;
            if (memcmp(got.buf, want.buf, (size_t)got.t.nelem * 4) != 0)
                EXPECT(!"fused fp32 CLAMP differs from the CLAMP kernel");
        }
        tosac_kernel_limit_isa(TOSAC_KISA_AVX512);
        tt_free(&in), tt_free(&w), tt_free(&bias), tt_free(&zi), tt_free(&zw), tt_free(&out), tt_free(&got), tt_free(&want);
        producer_free(&p);
    }
}

int main(void)
{
    RUN(test_rescale_random);
    RUN(test_rescale_lut);
    RUN(test_fused_epilogue);
    RUN(test_fused_fp_clamp);
    return test_summary();
}
