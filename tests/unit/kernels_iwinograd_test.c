/*
 * The exact integer Winograd F(2x2, 3x3) of INT8 CONV2D at the AVX2 level (kernels/k_iwinograd.c),
 * through the conv family's prepare and run as the runtime calls them (unit/kernels_run.h):
 * - int32 results against the convolution computed here in int64 (+ bias; the REQUIRE on
 *   acc + bias: a bias near INT32_MAX fails the call), on random shapes (odd sizes, padding 0-2 on
 *   each side, batch 1-2, C and K not multiples of 2 or 16, zero points and weights over their
 *   whole ranges, bias of K or 1 elements), at the portable level and at AVX2 on 1, 2 and 3
 *   workers, where it checks that prepare took Winograd for the shapes of the rule, and the AVX2
 *   direct path (TOSAC_KCALL_CONV_DIRECT) on 1-3 workers, whose channel split (few pixels, over 64
 *   output channels) the K = 270 cases below take;
 * - the fused RESCALE (+ CLAMP) to int8 / int16, per-channel or not, in the tiles' form (shift
 *   >= 33) and through the epilogue (smaller shifts): the same bits and status as the direct path
 *   (TOSAC_KCALL_CONV_DIRECT) at AVX2 and as the portable level (an unsigned RESCALE output is
 *   never fused, tosac_rescale_fusable: it reads the int32 results checked above);
 * - weights whose sum |w - wzp| breaks the bound (4 * 255 * sum >= 2^31, C = 1000): the direct path.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/ktensor.h"
#include "harness/test.h"
#include "kernels/k_epilogue.h"
#include "kernels/kernel.h"
#include "unit/kernels_run.h"

#define RNG_SEED 0x1c0ffee5eed7ull
#include "harness/rng.h"

typedef struct icase {
    int64_t N, H, W, C, K, pad[4], OH, OW;
    bool bias1, top; /* one bias element; biases near INT32_MAX */
} icase;

typedef struct idata {
    tt x, w, b, izp, wzp, out;
    int32_t pad[4], one[2];
    tosac_attr_val attr[TOSAC_ATTR_MAX_FIELDS];
} idata;

static void attr_v(tosac_attr_val *a, unsigned id, const void *v, uint32_t n)
{
    a[id].present = true;
    a[id].data = v;
    a[id].len = n;
}

static void setup(idata *d, const icase *c, int64_t wmax)
{
    memset(d, 0, sizeof *d);
    const int64_t sx[4] = {c->N, c->H, c->W, c->C}, sw[4] = {c->K, 3, 3, c->C}, so[4] = {c->N, c->OH, c->OW, c->K};
    const int64_t nb = c->bias1 ? 1 : c->K, one = 1;
    tt_make(&d->x, TOSAC_DTYPE_INT8, false, 4, sx);
    tt_make(&d->w, TOSAC_DTYPE_INT8, false, 4, sw);
    tt_make(&d->b, TOSAC_DTYPE_INT32, false, 1, &nb);
    tt_make(&d->izp, TOSAC_DTYPE_INT8, false, 1, &one);
    tt_make(&d->wzp, TOSAC_DTYPE_INT8, false, 1, &one);
    tt_make(&d->out, TOSAC_DTYPE_INT32, false, 4, so);
    for (int64_t i = 0; i < d->x.t.nelem; i++) ((int8_t *)d->x.buf)[i] = (int8_t)rnd_in(-128, 127);
    const int8_t wzp = (int8_t)rnd_in(-128, 127);
    ((int8_t *)d->izp.buf)[0] = (int8_t)rnd_in(-128, 127);
    ((int8_t *)d->wzp.buf)[0] = wzp;
    for (int64_t i = 0; i < d->w.t.nelem; i++) {
        int64_t v = wzp + rnd_in(-wmax, wmax);
        ((int8_t *)d->w.buf)[i] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
    }
    for (int64_t i = 0; i < nb; i++)
        ((int32_t *)d->b.buf)[i] = c->top ? INT32_MAX - (int32_t)rnd_in(0, 3000000) : (int32_t)rnd_in(-50000, 50000);
    for (int i = 0; i < 4; i++) d->pad[i] = (int32_t)c->pad[i];
    d->one[0] = d->one[1] = 1;
    attr_v(d->attr, TOSAC_ATTR_CONV2D_pad, d->pad, 4);
    attr_v(d->attr, TOSAC_ATTR_CONV2D_stride, d->one, 2);
    attr_v(d->attr, TOSAC_ATTR_CONV2D_dilation, d->one, 2);
    d->attr[TOSAC_ATTR_CONV2D_acc_type] = (tosac_attr_val){true, TOSAC_DTYPE_INT32, NULL, 0};
}

static void release(idata *d)
{
    tt_free(&d->x), tt_free(&d->w), tt_free(&d->b), tt_free(&d->izp), tt_free(&d->wzp), tt_free(&d->out);
}

static tosac_kcall mkconv(idata *d, tosac_ktensor *in, uint32_t flags, const tosac_kepilogue *epi)
{
    in[0] = d->x.t, in[1] = d->w.t, in[2] = d->b.t, in[3] = d->izp.t, in[4] = d->wzp.t;
    tosac_kcall k;
    memset(&k, 0, sizeof k);
    k.op = TOSAC_OP_CONV2D, k.n_in = 5, k.n_out = 1, k.in = in, k.out = &d->out.t, k.attr = d->attr;
    k.flags = flags, k.epi = epi;
    return k;
}

/* Whether prepare at the current level takes Winograd: its constants are the 16 U_xi panels
   (16 x ceil(K/16) x 16 x ceil(C/2) int32, 64 bytes of header), the direct path's 9C-long ones. */
static bool takes_wino(idata *d, const icase *c)
{
    tosac_ktensor in[5];
    tosac_kcall k = mkconv(d, in, 0, NULL);
    for (int i = 1; i < 5; i++) in[i].constant = true;
    k.isa = tosac_kernel_isa();
    tosac_kprep sz = {0, 0, 0};
    tosac_kernel_prepare_for(TOSAC_OP_CONV2D)(&k, &sz, NULL);
    const size_t u = (size_t)((c->K + 15) / 16 * 16) * (size_t)((c->C + 1) / 2) * 4u;
    return sz.const_size == 64u + 16u * ((u + 63u) & ~(size_t)63u);
}

static tosac_status run(idata *d, uint32_t flags, const tosac_kepilogue *epi, uint32_t workers)
{
    tosac_ktensor in[5];
    tosac_kcall k = mkconv(d, in, flags, epi);
    memset(d->out.buf, 0x5A, (size_t)d->out.t.nelem * 4u);
    kr_const_mask = 0x1Eu;
    kr_workers = workers;
    tosac_status s = kernels_run_call(&k);
    kr_workers = 1;
    kr_const_mask = 0;
    return s;
}

/* acc + bias in int64 for every output; false when some acc + bias leaves int32 (the REQUIRE). */
static bool reference(const idata *d, const icase *c, int32_t *ref)
{
    const int8_t *x = (const int8_t *)d->x.buf, *w = (const int8_t *)d->w.buf;
    const int64_t izp = ((const int8_t *)d->izp.buf)[0], wzp = ((const int8_t *)d->wzp.buf)[0];
    bool ok = true;
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t oy = 0; oy < c->OH; oy++)
            for (int64_t ox = 0; ox < c->OW; ox++)
                for (int64_t k = 0; k < c->K; k++) {
                    int64_t s = 0;
                    for (int64_t ky = 0; ky < 3; ky++)
                        for (int64_t kx = 0; kx < 3; kx++) {
                            const int64_t iy = oy - c->pad[0] + ky, ix = ox - c->pad[2] + kx;
                            if (iy < 0 || iy >= c->H || ix < 0 || ix >= c->W) continue;
                            const int8_t *xp = x + ((n * c->H + iy) * c->W + ix) * c->C;
                            const int8_t *wp = w + ((k * 3 + ky) * 3 + kx) * c->C;
                            for (int64_t i = 0; i < c->C; i++) s += (xp[i] - izp) * (wp[i] - wzp);
                        }
                    s += ((const int32_t *)d->b.buf)[c->bias1 ? 0 : k];
                    if (s < INT32_MIN || s > INT32_MAX) ok = false;
                    ref[((n * c->OH + oy) * c->OW + ox) * c->K + k] = (int32_t)(ok ? s : 0);
                }
    return ok;
}

static void random_case(icase *c)
{
    memset(c, 0, sizeof *c);
    c->N = rnd_in(1, 2);
    c->H = rnd_in(1, 13), c->W = rnd_in(1, 13);
    c->C = rnd() % 3 ? rnd_in(16, 40) : rnd_in(1, 20);
    c->K = rnd() % 3 ? rnd_in(16, 80) : rnd_in(1, 20);
    for (int i = 0; i < 4; i++) c->pad[i] = rnd_in(0, 2);
    c->OH = c->H + c->pad[0] + c->pad[1] - 2, c->OW = c->W + c->pad[2] + c->pad[3] - 2;
    if (c->OH < 1) c->H += 1 - c->OH, c->OH = 1;
    if (c->OW < 1) c->W += 1 - c->OW, c->OW = 1;
    c->bias1 = rnd() % 4 == 0;
    c->top = rnd() % 6 == 0;
}

/* The rule of k_iwinograd.c for these weights (within the bound): C, K >= 16, at least 4 tiles,
   which cover the output well enough. */
static bool rule(const icase *c)
{
    const int64_t tiles = ((c->OH + 1) / 2) * ((c->OW + 1) / 2);
    return c->C >= 16 && c->K >= 16 && c->N * tiles >= 4 && 90 * c->OH * c->OW >= 256 * tiles;
}

static void test_int32_random(void)
{
    int taken = 0;
    for (int iter = 0; iter < 60; iter++) {
        icase c;
        random_case(&c);
        idata d;
        setup(&d, &c, 255);
        const size_t no = (size_t)d.out.t.nelem;
        int32_t *ref = malloc(no * 4u + 4u);
        const bool ok = reference(&d, &c, ref);
        for (uint32_t level = TOSAC_KISA_PORTABLE; level <= TOSAC_KISA_AVX2; level += TOSAC_KISA_AVX2 - TOSAC_KISA_PORTABLE) {
            tosac_kernel_limit_isa(level);
            const bool avx2 = tosac_kernel_isa() == TOSAC_KISA_AVX2;
            if (avx2) {
                const bool w = takes_wino(&d, &c);
                if (w != rule(&c))
                    fprintf(stderr, "  %lldx%lldx%lld -> %lld (%lldx%lld): Winograd %d\n", (long long)c.H, (long long)c.W,
                            (long long)c.C, (long long)c.K, (long long)c.OH, (long long)c.OW, w);
                EXPECT(w == rule(&c));
                taken += w;
            }
            /* AVX2: also the direct path on 1-3 workers (with few pixel blocks and more than 64
               output channels the workers split the channels: panel blocks, bias and stores) */
            for (uint32_t pass = 0; pass < (avx2 ? 6u : 1u); pass++) {
                const uint32_t workers = pass % 3 + 1, flags = pass >= 3 ? TOSAC_KCALL_CONV_DIRECT : 0;
                EXPECT_EQ_I(run(&d, flags, NULL, workers), ok ? TOSAC_OK : TOSAC_ERR_UNPREDICTABLE);
                if (ok && memcmp(d.out.buf, ref, no * 4u) != 0) {
                    fprintf(stderr, "  case %d level %u pass %u: %lldx%lldx%lldx%lld -> %lld pad %lld %lld %lld %lld\n",
                            iter, level, pass, (long long)c.N, (long long)c.H, (long long)c.W, (long long)c.C,
                            (long long)c.K, (long long)c.pad[0], (long long)c.pad[1], (long long)c.pad[2],
                            (long long)c.pad[3]);
                    EXPECT(!"int32 results differ from the int64 reference");
                }
            }
        }
        tosac_kernel_limit_isa(TOSAC_KISA_AVX512);
        free(ref);
        release(&d);
    }
    if (tosac_kernel_isa() >= TOSAC_KISA_AVX2) EXPECT(taken >= 20); /* the cases above exercise it */
}

/* A RESCALE call fused into the convolution: int32 [N, OH, OW, K] -> int8 / int16. */
typedef struct irs {
    tt mul, shf, izp, ozp, y;
    tosac_attr_val a[TOSAC_ATTR_MAX_FIELDS];
    tosac_ktensor in[5];
    tosac_kcall call;
    void *prep;
} irs;

static void irs_make(irs *r, const idata *d, int64_t K, tosac_dtype to, bool per_channel, bool small_shift)
{
    memset(r, 0, sizeof *r);
    const int64_t nc = per_channel ? K : 1, one = 1;
    tt_make(&r->mul, TOSAC_DTYPE_INT32, false, 1, &nc);
    tt_make(&r->shf, TOSAC_DTYPE_INT8, false, 1, &nc);
    tt_make(&r->izp, TOSAC_DTYPE_INT32, false, 1, &one);
    tt_make(&r->ozp, to, false, 1, &one);
    tt_make(&r->y, to, false, 4, d->out.shape);
    for (int64_t j = 0; j < nc; j++) {
        ((int32_t *)r->mul.buf)[j] = (int32_t)rnd_in(1 << 29, INT32_MAX);
        ((int8_t *)r->shf.buf)[j] = (int8_t)(small_shift ? rnd_in(20, 32) : rnd_in(33, 45));
    }
    if (to == TOSAC_DTYPE_INT8) ((int8_t *)r->ozp.buf)[0] = (int8_t)rnd_in(-128, 127);
    r->a[TOSAC_ATTR_RESCALE_scale32] = (tosac_attr_val){true, 1, NULL, 0};
    r->a[TOSAC_ATTR_RESCALE_rounding_mode] = (tosac_attr_val){true, rnd() % 2 ? TOSAC_ROUND_DOUBLE : TOSAC_ROUND_SINGLE, NULL, 0};
    r->a[TOSAC_ATTR_RESCALE_per_channel] = (tosac_attr_val){true, per_channel, NULL, 0};
    r->a[TOSAC_ATTR_RESCALE_input_unsigned] = (tosac_attr_val){true, 0, NULL, 0};
    r->a[TOSAC_ATTR_RESCALE_output_unsigned] = (tosac_attr_val){true, 0, NULL, 0};
    r->in[0] = d->out.t, r->in[1] = r->mul.t, r->in[2] = r->shf.t, r->in[3] = r->izp.t, r->in[4] = r->ozp.t;
    for (int i = 1; i < 5; i++) r->in[i].constant = true;
    memset(&r->call, 0, sizeof r->call);
    r->call.op = TOSAC_OP_RESCALE, r->call.n_in = 5, r->call.n_out = 1, r->call.in = r->in, r->call.out = &r->y.t;
    r->call.attr = r->a;
}

/* Prepares the RESCALE at the current level (the fused form depends on it). */
static void irs_prepare(irs *r)
{
    free(r->prep);
    r->call.isa = tosac_kernel_isa();
    tosac_kprep sz = {0, 0, 0};
    EXPECT_EQ_I(tosac_kernel_rescale_prepare(&r->call, &sz, NULL), TOSAC_OK);
    r->prep = kr_alloc(sz.const_size);
    EXPECT_EQ_I(tosac_kernel_rescale_prepare(&r->call, &sz, r->prep), TOSAC_OK);
    r->call.prep = r->prep;
}

static void irs_free(irs *r)
{
    free(r->prep);
    tt_free(&r->mul), tt_free(&r->shf), tt_free(&r->izp), tt_free(&r->ozp), tt_free(&r->y);
}

static void test_fused_rescale(void)
{
    for (int iter = 0; iter < 42; iter++) {
        icase c;
        random_case(&c);
        c.C = rnd_in(16, 40), c.K = rnd_in(16, 70);
        c.top = rnd() % 8 == 0;
        if (iter >= 40) /* U beyond 2 MB and few tiles: the workers split the output channels */
            c = (icase){.N = 1, .H = 6, .W = 4, .C = 255, .K = 270, .pad = {1, 1, 1, 1}, .OH = 6, .OW = 4};
        idata d;
        setup(&d, &c, 255);
        irs r;
        const tosac_dtype to = rnd() % 3 ? TOSAC_DTYPE_INT8 : TOSAC_DTYPE_INT16;
        irs_make(&r, &d, c.K, to, iter >= 40 || rnd() % 4 != 0, iter < 40 && rnd() % 3 == 0);
        if (iter >= 40) r.a[TOSAC_ATTR_RESCALE_rounding_mode].i = TOSAC_ROUND_SINGLE; /* no REQUIRE fails */
        int32_t lo, hi;
        EXPECT(tosac_rescale_fusable(&r.call, &lo, &hi));
        if (rnd() % 2) { /* a CLAMP after it narrows the range */
            const int64_t qlo = to == TOSAC_DTYPE_INT8 ? -128 : -32768;
            lo = (int32_t)rnd_in(qlo, 0), hi = (int32_t)rnd_in(0, -qlo - 1);
        }
        const tosac_kepilogue epi = {.rescale = &r.call, .out = &r.y.t, .lo = lo, .hi = hi};
        const size_t nb = (size_t)r.y.t.nelem * r.y.es;
        uint8_t *want = malloc(nb + 1);
        /* the portable level (direct), then AVX2 direct and AVX2 (Winograd where the rule says) */
        tosac_kernel_limit_isa(TOSAC_KISA_PORTABLE);
        irs_prepare(&r);
        memset(r.y.buf, 0x33, nb);
        const tosac_status s0 = run(&d, 0, &epi, 1);
        EXPECT(s0 == TOSAC_OK || s0 == TOSAC_ERR_UNPREDICTABLE);
        if (iter >= 40) EXPECT_EQ_I(s0, TOSAC_OK);
        memcpy(want, r.y.buf, nb);
        tosac_kernel_limit_isa(TOSAC_KISA_AVX2);
        irs_prepare(&r);
        if (tosac_kernel_isa() == TOSAC_KISA_AVX2) EXPECT(takes_wino(&d, &c) == rule(&c));
        for (int pass = 0; pass < 6; pass++) { /* direct, then Winograd where the rule says, 1-3 workers */
            memset(r.y.buf, 0x33, nb);
            const tosac_status s = run(&d, pass < 3 ? TOSAC_KCALL_CONV_DIRECT : 0, &epi, (uint32_t)(pass % 3 + 1));
            EXPECT_EQ_I(s, s0);
            if (s == TOSAC_OK && s0 == TOSAC_OK && memcmp(want, r.y.buf, nb) != 0) {
                fprintf(stderr, "  case %d pass %d: %lldx%lldx%lld -> %lld, out %d\n", iter, pass, (long long)c.H,
                        (long long)c.W, (long long)c.C, (long long)c.K, (int)to);
                EXPECT(!"fused RESCALE differs from the portable level");
            }
        }
        tosac_kernel_limit_isa(TOSAC_KISA_AVX512);
        free(want);
        irs_free(&r);
        release(&d);
    }
}

/* Weights beyond the bound: C = 1000, weight zero point -128 and every weight of one output
   channel 127 give 4 * 255 * (9000 * 255) >= 2^31 (the direct path); weights within 40 of the zero
   point keep Winograd. Both exact. */
static void test_bound(void)
{
    for (int big = 0; big < 2; big++) {
        icase c = {.N = 1, .H = 6, .W = 5, .C = 1000, .K = 17, .pad = {1, 1, 1, 1}, .OH = 6, .OW = 5};
        idata d;
        setup(&d, &c, big ? 255 : 40);
        if (big) {
            ((int8_t *)d.wzp.buf)[0] = -128;
            for (int64_t i = 0; i < 9 * c.C; i++) ((int8_t *)d.w.buf)[5 * 9 * c.C + i] = 127;
        }
        int32_t *ref = malloc((size_t)d.out.t.nelem * 4u);
        EXPECT(reference(&d, &c, ref));
        tosac_kernel_limit_isa(TOSAC_KISA_AVX2);
        if (tosac_kernel_isa() == TOSAC_KISA_AVX2) EXPECT_EQ_I(takes_wino(&d, &c), !big);
        for (uint32_t workers = 1; workers <= 2; workers++) {
            EXPECT_EQ_I(run(&d, 0, NULL, workers), TOSAC_OK);
            EXPECT(memcmp(d.out.buf, ref, (size_t)d.out.t.nelem * 4u) == 0);
        }
        tosac_kernel_limit_isa(TOSAC_KISA_AVX512);
        free(ref);
        release(&d);
    }
}

int main(void)
{
    RUN(test_int32_random);
    RUN(test_fused_rescale);
    RUN(test_bound);
    return test_summary();
}
