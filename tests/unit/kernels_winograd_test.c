/*
 * Winograd F(2x2, 3x3) for FP32 CONV2D (kernels/k_winograd.c), through the conv family's prepare
 * and run as the runtime calls them (unit/kernels_run.h):
 * - random 3x3 convolutions (odd and even sizes, padding 0, 1 and asymmetric, batch 1 and 2, C and
 *   K not multiples of 16, bias of K or 1 elements, with and without a fused clamp) against a
 *   convolution computed here in double, with TOSA's DOT_PRODUCT rule (TOSA.md D.5): per element
 *   |imp - ref| <= 2 ksb bnd 2^-24 (ksb = 9 C, + 1 with a bias; bnd the convolution of |x|, |w|,
 *   |b|) and over the tensor sum e^2 <= 4 * 0.4 * ksb * elements;
 * - the same bits at every ISA level (tosac_kernel_limit_isa) and for 1, 2 and 3 workers;
 * - the fused epilogue's post hook: called on every output pixel once, after it is stored;
 * - the opt-out (TOSAC_KCALL_CONV_DIRECT): the reference order's bits, computed here in float;
 * - infinities and NaNs in the input: they reach only the outputs whose windows hold them.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/test.h"
#include "kernels/kernel.h"
#include "unit/kernels_run.h"

#define RNG_SEED 0x5eed3c0dd1ce9ull
#include "harness/rng.h"

typedef struct wcase {
    int64_t N, H, W, C, K, pt, pb, pl, pr, OH, OW;
    bool bias1, clamp, ignore;
    float lo, hi;
} wcase;

typedef struct wdata {
    float *x, *w, *b, *out;
    float zp[1];
    int64_t sx[4], sw[4], sb[1], so[4], sz[1];
    int32_t pad[4], one[2];
    tosac_ktensor t[6];
    tosac_attr_val attr[TOSAC_ATTR_MAX_FIELDS];
    tosac_kepilogue epi;
    /* post hook bookkeeping */
    uint32_t *seen;   /* per output pixel: times post covered it */
    bool post_early;  /* post came for a pixel not yet stored */
} wdata;

static float frand(double amp) { return (float)((2.0 * rnd_unit() - 1.0) * amp); }

static void post_hook(void *ctx, uint32_t worker, int64_t row0, int64_t nrows)
{
    (void)worker;
    wdata *d = ctx;
    const int64_t K = d->so[3];
    for (int64_t p = row0; p < row0 + nrows; p++) {
        d->seen[p]++;
        for (int64_t k = 0; k < K; k++) /* the output was poisoned with NaN before the run */
            if (isnan(d->out[p * K + k])) d->post_early = true;
    }
}

static void setup(wdata *d, const wcase *c)
{
    memset(d, 0, sizeof *d);
    const int64_t nx = c->N * c->H * c->W * c->C, nw = c->K * 9 * c->C, nb = c->bias1 ? 1 : c->K,
                  no = c->N * c->OH * c->OW * c->K;
    d->x = malloc((size_t)nx * sizeof(float));
    d->w = malloc((size_t)nw * sizeof(float));
    d->b = malloc((size_t)nb * sizeof(float));
    d->out = malloc((size_t)no * sizeof(float));
    d->seen = calloc((size_t)(c->N * c->OH * c->OW), sizeof(uint32_t));
    for (int64_t i = 0; i < nx; i++) d->x[i] = frand(4.0);
    for (int64_t i = 0; i < nw; i++) d->w[i] = frand(1.0);
    for (int64_t i = 0; i < nb; i++) d->b[i] = frand(2.0);
    d->zp[0] = 0.0f;
    int64_t sx[4] = {c->N, c->H, c->W, c->C}, sw[4] = {c->K, 3, 3, c->C}, so[4] = {c->N, c->OH, c->OW, c->K};
    memcpy(d->sx, sx, sizeof sx), memcpy(d->sw, sw, sizeof sw), memcpy(d->so, so, sizeof so);
    d->sb[0] = nb, d->sz[0] = 1;
    d->t[0] = (tosac_ktensor){d->x, TOSAC_DTYPE_FP32, false, 4, d->sx, nx, false};
    d->t[1] = (tosac_ktensor){d->w, TOSAC_DTYPE_FP32, false, 4, d->sw, nw, false};
    d->t[2] = (tosac_ktensor){d->b, TOSAC_DTYPE_FP32, false, 1, d->sb, nb, false};
    d->t[3] = (tosac_ktensor){d->zp, TOSAC_DTYPE_FP32, false, 1, d->sz, 1, false};
    d->t[4] = (tosac_ktensor){d->zp, TOSAC_DTYPE_FP32, false, 1, d->sz, 1, false};
    d->t[5] = (tosac_ktensor){d->out, TOSAC_DTYPE_FP32, false, 4, d->so, no, false};
    d->pad[0] = (int32_t)c->pt, d->pad[1] = (int32_t)c->pb, d->pad[2] = (int32_t)c->pl, d->pad[3] = (int32_t)c->pr;
    d->one[0] = d->one[1] = 1;
    d->attr[TOSAC_ATTR_CONV2D_pad] = (tosac_attr_val){true, 0, d->pad, 4};
    d->attr[TOSAC_ATTR_CONV2D_stride] = (tosac_attr_val){true, 0, d->one, 2};
    d->attr[TOSAC_ATTR_CONV2D_dilation] = (tosac_attr_val){true, 0, d->one, 2};
    d->attr[TOSAC_ATTR_CONV2D_acc_type] = (tosac_attr_val){true, TOSAC_DTYPE_FP32, NULL, 0};
    d->epi = (tosac_kepilogue){.out = &d->t[5], .flo = c->lo, .fhi = c->hi, .fignore = c->ignore, .post = post_hook,
                               .post_ctx = d};
}

static void release(wdata *d)
{
    free(d->x), free(d->w), free(d->b), free(d->out), free(d->seen);
}

/* Runs the call (weights, bias and zero points constant); flags: tosac_kcall.flags. *wino: whether
   prepare took Winograd (its U needs 16 C K floats; the direct path's weights 9 C K). */
static tosac_status run(wdata *d, const wcase *c, uint32_t flags, bool *wino)
{
    const int64_t no = c->N * c->OH * c->OW * c->K;
    for (int64_t i = 0; i < no; i++) d->out[i] = NAN;
    memset(d->seen, 0, (size_t)(c->N * c->OH * c->OW) * sizeof(uint32_t));
    d->post_early = false;
    tosac_kcall k;
    memset(&k, 0, sizeof k);
    k.op = TOSAC_OP_CONV2D, k.n_in = 5, k.n_out = 1, k.in = d->t, k.out = &d->t[5], k.attr = d->attr;
    k.epi = c->clamp ? &d->epi : NULL;
    k.flags = flags;
    kr_const_mask = 0x1Eu;
    tosac_kcall probe = k;
    tosac_ktensor kin[5];
    for (int i = 0; i < 5; i++) kin[i] = d->t[i], kin[i].constant = i > 0;
    probe.in = kin;
    probe.isa = tosac_kernel_isa();
    tosac_kprep sz = {0, 0, 0};
    tosac_kernel_prepare_for(TOSAC_OP_CONV2D)(&probe, &sz, NULL);
    *wino = sz.const_size >= (size_t)(16 * c->C * c->K) * sizeof(float);
    return kernels_run_call(&k);
}

/* The convolution in double at output element (n, oy, ox, k): the sum and the bound's sum. */
static void ref_at(const wdata *d, const wcase *c, int64_t n, int64_t oy, int64_t ox, int64_t k, double *ref, double *bnd)
{
    double s = 0.0, a = 0.0;
    for (int64_t ky = 0; ky < 3; ky++)
        for (int64_t kx = 0; kx < 3; kx++) {
            const int64_t iy = oy - c->pt + ky, ix = ox - c->pl + kx;
            if (iy < 0 || iy >= c->H || ix < 0 || ix >= c->W) continue;
            const float *xp = d->x + ((n * c->H + iy) * c->W + ix) * c->C, *wp = d->w + ((k * 3 + ky) * 3 + kx) * c->C;
            for (int64_t i = 0; i < c->C; i++) {
                s += (double)xp[i] * wp[i];
                a += fabs((double)xp[i] * wp[i]);
            }
        }
    const double b = d->b[c->bias1 ? 0 : k];
    *ref = s + b;
    *bnd = a + fabs(b);
}

static double clampd(const wcase *c, double v)
{
    if (!c->clamp) return v;
    return v < c->lo ? c->lo : v > c->hi ? c->hi : v;
}

/* Checks the output against the double convolution with the DOT_PRODUCT rule; *worst: the largest
   |e| / (2 ksb) seen. */
static bool check_tosa(const wdata *d, const wcase *c, double *worst)
{
    bool anyb = false;
    for (int64_t i = 0; i < (c->bias1 ? 1 : c->K); i++) anyb |= d->b[i] != 0.0f;
    const double ksb = 9.0 * (double)c->C + (anyb ? 1.0 : 0.0), q = ldexp(1.0, -24);
    double sum2 = 0.0;
    int64_t cnt = 0;
    bool ok = true;
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t oy = 0; oy < c->OH; oy++)
            for (int64_t ox = 0; ox < c->OW; ox++)
                for (int64_t k = 0; k < c->K; k++) {
                    double ref, bnd;
                    ref_at(d, c, n, oy, ox, k, &ref, &bnd);
                    const double imp = d->out[((n * c->OH + oy) * c->OW + ox) * c->K + k];
                    if (!isfinite(ref) || !isfinite(bnd)) { /* an infinity or NaN in the window (no clamp) */
                        if (isnan(ref) ? !isnan(imp) : imp != ref) {
                            if (ok)
                                fprintf(stderr, "  (%lld,%lld,%lld,%lld): %.9g, reference %.9g\n", (long long)n,
                                        (long long)oy, (long long)ox, (long long)k, imp, ref);
                            ok = false;
                        }
                        continue;
                    }
                    const double e = (imp - clampd(c, ref)) / fmax(bnd * q, ldexp(1.0, -126));
                    if (!(fabs(e) <= 2.0 * ksb)) {
                        if (ok)
                            fprintf(stderr, "  (%lld,%lld,%lld,%lld): %.9g, reference %.9g, e = %g > %g\n", (long long)n,
                                    (long long)oy, (long long)ox, (long long)k, imp, ref, e, 2.0 * ksb);
                        ok = false;
                    }
                    if (fabs(e) / (2.0 * ksb) > *worst) *worst = fabs(e) / (2.0 * ksb);
                    sum2 += e * e, cnt++;
                }
    if (!(sum2 <= 4.0 * 0.4 * ksb * (double)cnt)) {
        fprintf(stderr, "  variance: sum e^2 = %g > %g\n", sum2, 4.0 * 0.4 * ksb * (double)cnt);
        ok = false;
    }
    return ok;
}

/* The reference order in float (TOSA's pseudocode: sum from +0 over ky, kx, ic, padding taps
   skipped, each product fused into the sum with one rounding; then bias + sum; then the clamp). */
static bool check_direct_bits(const wdata *d, const wcase *c)
{
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t oy = 0; oy < c->OH; oy++)
            for (int64_t ox = 0; ox < c->OW; ox++)
                for (int64_t k = 0; k < c->K; k++) {
                    float s = 0.0f;
                    for (int64_t ky = 0; ky < 3; ky++)
                        for (int64_t kx = 0; kx < 3; kx++) {
                            const int64_t iy = oy - c->pt + ky, ix = ox - c->pl + kx;
                            if (iy < 0 || iy >= c->H || ix < 0 || ix >= c->W) continue;
                            const float *xp = d->x + ((n * c->H + iy) * c->W + ix) * c->C,
                                        *wp = d->w + ((k * 3 + ky) * 3 + kx) * c->C;
                            for (int64_t i = 0; i < c->C; i++) s = fmaf(xp[i], wp[i], s);
                        }
                    float v = d->b[c->bias1 ? 0 : k] + s;
                    if (c->clamp) v = v >= c->lo ? v : c->lo, v = v < c->hi ? v : c->hi;
                    const float imp = d->out[((n * c->OH + oy) * c->OW + ox) * c->K + k];
                    if (memcmp(&imp, &v, sizeof v) != 0) {
                        fprintf(stderr, "  direct (%lld,%lld,%lld,%lld): %.9g, reference order %.9g\n", (long long)n,
                                (long long)oy, (long long)ox, (long long)k, imp, v);
                        return false;
                    }
                }
    return true;
}

static wcase random_case(int i)
{
    wcase c;
    memset(&c, 0, sizeof c);
    c.N = i % 3 == 2 ? 2 : 1;
    c.H = rnd_in(6, 15), c.W = rnd_in(6, 15);
    static const int64_t pads[][4] = {{1, 1, 1, 1}, {0, 0, 0, 0}, {1, 0, 0, 1}, {0, 1, 1, 0}, {2, 1, 0, 2}};
    const int64_t *p = pads[i % 5];
    c.pt = p[0], c.pb = p[1], c.pl = p[2], c.pr = p[3];
    c.OH = c.H + c.pt + c.pb - 2, c.OW = c.W + c.pl + c.pr - 2;
    if (c.OH < 1) c.H += 1 - c.OH, c.OH = 1;
    if (c.OW < 1) c.W += 1 - c.OW, c.OW = 1;
    c.C = rnd_in(17, 90), c.K = rnd_in(33, 90);
    if (i % 4 == 1) c.C = 64, c.K = 64;
    c.bias1 = i % 6 == 3;
    c.clamp = i % 2 == 1;
    c.ignore = i % 4 == 3;
    c.lo = i % 8 == 1 ? -INFINITY : -3.0f, c.hi = i % 8 == 5 ? INFINITY : 6.0f;
    return c;
}

static void test_random(void)
{
    double worst = 0.0;
    int taken = 0;
    for (int i = 0; i < 24; i++) {
        const wcase c = random_case(i);
        wdata d;
        setup(&d, &c);
        bool wino = false;
        tosac_status st = run(&d, &c, 0, &wino);
        EXPECT(st == TOSAC_OK);
        taken += wino;
        const bool ok = check_tosa(&d, &c, &worst);
        if (!ok)
            fprintf(stderr, "  case %d: N%lld H%lld W%lld C%lld K%lld pad %lld,%lld,%lld,%lld clamp %d\n", i, (long long)c.N,
                    (long long)c.H, (long long)c.W, (long long)c.C, (long long)c.K, (long long)c.pt, (long long)c.pb,
                    (long long)c.pl, (long long)c.pr, c.clamp);
        EXPECT(ok);
        if (c.clamp) {
            bool once = true;
            for (int64_t p = 0; p < c.N * c.OH * c.OW; p++) once &= d.seen[p] == 1;
            EXPECT(once);
            EXPECT(!d.post_early);
        }
        release(&d);
    }
    /* every random case is one the rule takes (else this tests the direct path) */
    EXPECT_EQ_I(taken, 24);
    fprintf(stderr, "  largest |e| / (2 ksb): %.3g\n", worst);
}

/* The same bits at every ISA level and for 1, 2 and 3 workers; the opt-out's are the reference
   order's. */
static void test_levels_threads_optout(void)
{
    for (int i = 0; i < 11; i++) {
        wcase c = random_case(i);
        if (i == 10) /* U over 2 MB: with several workers, groups of output channels */
            c = (wcase){.N = 1, .H = 9, .W = 8, .C = 170, .K = 200, .pt = 1, .pb = 1, .pl = 1, .pr = 1, .OH = 9, .OW = 8,
                        .clamp = true, .lo = -2.0f, .hi = 2.0f};
        wdata d;
        setup(&d, &c);
        const int64_t no = c.N * c.OH * c.OW * c.K;
        float *first = malloc((size_t)no * sizeof(float));
        bool wino = false, same = true;
        for (uint32_t level = 3; level-- > 0;) {
            tosac_kernel_limit_isa(level);
            for (uint32_t w = 1; w <= 3; w++) {
                kr_workers = w;
                EXPECT(run(&d, &c, 0, &wino) == TOSAC_OK);
                EXPECT(wino);
                if (c.clamp) {
                    bool once = true;
                    for (int64_t p = 0; p < c.N * c.OH * c.OW; p++) once &= d.seen[p] == 1;
                    EXPECT(once);
                    EXPECT(!d.post_early);
                }
                if (level == 2 && w == 1)
                    memcpy(first, d.out, (size_t)no * sizeof(float));
                else if (memcmp(first, d.out, (size_t)no * sizeof(float)) != 0) {
                    if (same) fprintf(stderr, "  case %d: level %u, %u workers: other bits\n", i, level, w);
                    same = false;
                }
            }
        }
        EXPECT(same);
        double worst = 0.0;
        EXPECT(check_tosa(&d, &c, &worst));
        tosac_kernel_limit_isa(3);
        kr_workers = 2;
        EXPECT(run(&d, &c, TOSAC_KCALL_CONV_DIRECT, &wino) == TOSAC_OK);
        EXPECT(!wino);
        EXPECT(check_direct_bits(&d, &c));
        kr_workers = 1;
        free(first);
        release(&d);
    }
}

/* Infinities and NaNs in the input: every output whose 3x3 window holds none stays within the
   bound (a tile's transform spreads them over all four outputs: those tiles are recomputed
   directly), the others are the infinity or NaN the double convolution gives. */
static void test_nonfinite(void)
{
    for (int i = 0; i < 4; i++) {
        wcase c = random_case(4 * i);
        c.clamp = false;
        wdata d;
        setup(&d, &c);
        const float special[3] = {INFINITY, -INFINITY, NAN};
        for (int s = 0; s < 3; s++) { /* pixels on tile borders and inside, of image 0 */
            const int64_t y = (s * 5 + i) % c.H, x = (s * 3 + 2 * i + 1) % c.W, ch = (s * 7 + i) % c.C;
            d.x[(y * c.W + x) * c.C + ch] = special[(s + i) % 3];
        }
        bool wino = false;
        EXPECT(run(&d, &c, 0, &wino) == TOSAC_OK);
        EXPECT(wino);
        double worst = 0.0;
        EXPECT(check_tosa(&d, &c, &worst));
        release(&d);
    }
}

/* Calls left to the direct path (the prepared size tells which path ran): a non-finite weight
   (inf - inf would spread NaN over whole tiles), and the shape rule's small cases (16 output
   channels; a 3x3 output, which 2x2 tiles cover with 16 products per channel pair against 9 x 9). */
static void test_not_taken(void)
{
    for (int i = 0; i < 3; i++) {
        wcase c = random_case(0);
        if (i == 1) c.K = 12;
        if (i == 2) c.H = 5, c.W = 5, c.OH = 3, c.OW = 3, c.pt = c.pb = c.pl = c.pr = 0;
        wdata d;
        setup(&d, &c);
        if (i == 0) d.w[7] = INFINITY;
        bool wino = true;
        EXPECT(run(&d, &c, 0, &wino) == TOSAC_OK);
        EXPECT(!wino);
        if (i > 0) EXPECT(check_direct_bits(&d, &c));
        release(&d);
    }
}

/* The direct path (TOSAC_KCALL_CONV_DIRECT) on the fp32 panels, whose GEMM has its own build per
   ISA level (AVX2: k_gemm_avx2.c): output channels for every block width and masked tail (8 .. 64
   columns, 5, 13, 15 and 36 of a block stored), K = 9 C over one, two and three K blocks (C 130:
   1170; C 300: 2700), padding (kernel rows in segments), every form of the end (bias only, ReLU,
   ReLU6, clamps that keep or drop NaN, NaN bounds); the same bits at every level and for 1, 2 and
   3 workers, and the reference order's when the input is finite (NaN inputs: the portable
   level's bits are the reference). */
static void test_direct_panels(void)
{
    static const struct {
        int64_t N, H, W, C, K, pt, pb, pl, pr;
        bool clamp, ignore, nan;
        float lo, hi;
    } cases[] = {
        {1, 9, 11, 130, 72, 1, 1, 1, 1, true, false, false, 0.0f, 6.0f},
        {2, 7, 10, 300, 40, 2, 1, 0, 2, true, true, true, -3.0f, 6.0f},
        {1, 12, 12, 20, 100, 0, 0, 0, 0, false, false, true, 0.0f, 0.0f},
        {1, 6, 17, 33, 136, 1, 0, 1, 0, true, false, true, 0.0f, INFINITY},
        {1, 8, 9, 70, 24, 1, 1, 1, 1, true, true, false, -3.0f, INFINITY},
        {1, 10, 8, 16, 56, 1, 1, 1, 1, true, true, true, 0.0f, 6.0f},
        {1, 9, 9, 19, 13, 0, 1, 1, 0, true, false, true, -1.0f, 0.0f},
        {1, 13, 7, 24, 5, 1, 1, 1, 1, true, false, true, NAN, 2.0f},
        {2, 5, 20, 45, 64, 1, 1, 1, 1, true, false, true, -2.0f, 2.0f},
        {1, 11, 10, 12, 200, 2, 2, 2, 2, false, false, false, 0.0f, 0.0f},
        {1, 9, 12, 40, 79, 1, 1, 1, 1, true, true, false, -1.0f, 1.0f},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wcase c;
        memset(&c, 0, sizeof c);
        c.N = cases[i].N, c.H = cases[i].H, c.W = cases[i].W, c.C = cases[i].C, c.K = cases[i].K;
        c.pt = cases[i].pt, c.pb = cases[i].pb, c.pl = cases[i].pl, c.pr = cases[i].pr;
        c.OH = c.H + c.pt + c.pb - 2, c.OW = c.W + c.pl + c.pr - 2;
        c.clamp = cases[i].clamp, c.ignore = cases[i].ignore, c.lo = cases[i].lo, c.hi = cases[i].hi;
        c.bias1 = i % 4 == 2;
        wdata d;
        setup(&d, &c);
        if (cases[i].nan)
            for (int s = 0; s < 5; s++) {
                const int64_t y = (s * 5 + (int64_t)i) % c.H, x = (s * 3 + 1) % c.W, ch = (s * 7 + (int64_t)i) % c.C;
                d.x[(y * c.W + x) * c.C + ch] = NAN;
            }
        const int64_t no = c.N * c.OH * c.OW * c.K;
        float *first = malloc((size_t)no * sizeof(float));
        bool wino = true, same = true;
        for (uint32_t level = 0; level <= TOSAC_KISA_AVX512; level++) {
            tosac_kernel_limit_isa(level);
            for (uint32_t w = 1; w <= 3; w++) {
                kr_workers = w;
                EXPECT(run(&d, &c, TOSAC_KCALL_CONV_DIRECT, &wino) == TOSAC_OK);
                EXPECT(!wino);
                if (level == 0 && w == 1)
                    memcpy(first, d.out, (size_t)no * sizeof(float));
                else if (memcmp(first, d.out, (size_t)no * sizeof(float)) != 0) {
                    if (same) fprintf(stderr, "  case %zu: level %u, %u workers: other bits\n", i, level, w);
                    same = false;
                }
            }
        }
        EXPECT(same);
        if (!cases[i].nan) EXPECT(check_direct_bits(&d, &c));
        kr_workers = 1;
        tosac_kernel_limit_isa(3);
        free(first);
        release(&d);
    }
}

int main(void)
{
    RUN(test_random);
    RUN(test_levels_threads_optout);
    RUN(test_nonfinite);
    RUN(test_not_taken);
    RUN(test_direct_panels);
    return test_summary();
}
