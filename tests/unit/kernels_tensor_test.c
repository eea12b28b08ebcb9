/*
 * Kernels of the conv (CONV2D, CONV3D, DEPTHWISE_CONV2D, TRANSPOSE_CONV2D), pool2d (AVG_POOL2D,
 * MAX_POOL2D), matmul, fft (FFT2D, RFFT2D) and argmax families, called through tosac_kernel_for()
 * with hand-built tosac_kcall structs.
 *
 * Expected values are computed here, independently of the kernels, by naive transcriptions of the
 * spec's pseudocode: int64 arithmetic for the integer rows (compared bit for bit), double sums for
 * the FP rows (compared within the recursive-summation error bound of the accumulator type), and
 * for fp32 / fp16 accumulation also a scalar emulation of the reference model's order and rounding
 * (compared bit for bit: the kernels document that they follow it). TRANSPOSE_CONV2D is checked
 * against the spec's scatter form (the kernel gathers); FFTs against a direct DFT in double.
 * Plus the TOSA.md B.4 spot values and the REQUIRE (UNPREDICTABLE) cases.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/fp.h"
#include "harness/ktensor.h"
#include "harness/test.h"
#include "kernels/k_gemm.h"
#include "kernels/kernel.h"
#include "unit/kernels_run.h"

/* ------------------------------------------------------------------------------------------ */
/* Utilities                                                                                      */

#define RNG_SEED 0x2545F4914F6CDD1Dull
#include "harness/rng.h"


#define CHECK_CASE(ok, ...)                                                     \
    do {                                                                        \
        t_checks++;                                                             \
        if (!(ok)) {                                                            \
            t_failures++;                                                       \
            fprintf(stderr, "%s:%d: case failed: ", __FILE__, __LINE__);        \
            fprintf(stderr, __VA_ARGS__);                                       \
            fprintf(stderr, "\n");                                              \
        }                                                                       \
    } while (0)

static bool is_fp(const tt *x) { return x->t.f64 || tosac_dtype_is_float(x->t.dtype); }

static int64_t geti(const tt *x, int64_t i)
{
    switch (x->t.dtype) {
    case TOSAC_DTYPE_INT4:
    case TOSAC_DTYPE_INT8: return ((const int8_t *)x->buf)[i];
    case TOSAC_DTYPE_INT16: return ((const int16_t *)(const void *)x->buf)[i];
    case TOSAC_DTYPE_INT32: return ((const int32_t *)(const void *)x->buf)[i];
    default: return ((const int64_t *)(const void *)x->buf)[i];
    }
}

static void seti(tt *x, int64_t i, int64_t v)
{
    switch (x->t.dtype) {
    case TOSAC_DTYPE_INT4:
    case TOSAC_DTYPE_INT8: ((int8_t *)x->buf)[i] = (int8_t)v; break;
    case TOSAC_DTYPE_INT16: ((int16_t *)(void *)x->buf)[i] = (int16_t)v; break;
    case TOSAC_DTYPE_INT32: ((int32_t *)(void *)x->buf)[i] = (int32_t)v; break;
    default: ((int64_t *)(void *)x->buf)[i] = v; break;
    }
}

static double getf(const tt *x, int64_t i)
{
    if (x->t.f64) return ((const double *)(const void *)x->buf)[i];
    switch (x->t.dtype) {
    case TOSAC_DTYPE_FP32: return ((const float *)(const void *)x->buf)[i];
    case TOSAC_DTYPE_FP16: return tosac_fp16_to_fp32(((const uint16_t *)(const void *)x->buf)[i]);
    case TOSAC_DTYPE_BF16: return tosac_bf16_to_fp32(((const uint16_t *)(const void *)x->buf)[i]);
    case TOSAC_DTYPE_FP8E4M3: return tosac_fp8e4m3_to_fp32(x->buf[i]);
    case TOSAC_DTYPE_FP8E5M2: return tosac_fp8e5m2_to_fp32(x->buf[i]);
    default: return (double)geti(x, i);
    }
}

/* Stores v rounded to the tensor's storage type. */
static void setf(tt *x, int64_t i, double v)
{
    if (x->t.f64) {
        ((double *)(void *)x->buf)[i] = v;
        return;
    }
    switch (x->t.dtype) {
    case TOSAC_DTYPE_FP32: ((float *)(void *)x->buf)[i] = tosac_fp64_to_fp32(v); break;
    case TOSAC_DTYPE_FP16: ((uint16_t *)(void *)x->buf)[i] = tosac_fp64_to_fp16(v); break;
    case TOSAC_DTYPE_BF16: ((uint16_t *)(void *)x->buf)[i] = tosac_fp64_to_bf16(v); break;
    case TOSAC_DTYPE_FP8E4M3: x->buf[i] = tosac_fp64_to_fp8e4m3(v); break;
    case TOSAC_DTYPE_FP8E5M2: x->buf[i] = tosac_fp64_to_fp8e5m2(v); break;
    default: seti(x, i, (int64_t)v); break;
    }
}

/* Random integers in [lo, hi] or FP values uniform in [-amp, amp] (rounded to the type). */
static void fill_int(tt *x, int64_t lo, int64_t hi)
{
    for (int64_t i = 0; i < x->t.nelem; i++) seti(x, i, rnd_in(lo, hi));
}
static void fill_fp(tt *x, double amp)
{
    for (int64_t i = 0; i < x->t.nelem; i++) setf(x, i, (2.0 * rnd_unit() - 1.0) * amp);
}

/* Runs op through the dispatch table; the scratch is exactly the size the kernel asks for. */
static tosac_status run_op(uint32_t op, tt **ins, uint32_t nin, tt **outs, uint32_t nout, const tosac_attr_val *attr)
{
    tosac_ktensor kin[8], kout[4];
    for (uint32_t i = 0; i < nin; i++) kin[i] = ins[i]->t;
    for (uint32_t i = 0; i < nout; i++) kout[i] = outs[i]->t;
    tosac_kcall c;
    memset(&c, 0, sizeof c);
    c.op = op;
    c.n_in = nin;
    c.n_out = nout;
    c.in = kin;
    c.out = kout;
    c.attr = attr;
    c.flags = TOSAC_KCALL_CONV_DIRECT; /* the reference order's bits (k_winograd_test checks Winograd) */
    tosac_status st = kernels_run_call(&c);
    return st;
}

static void attr_i(tosac_attr_val *a, unsigned id, int64_t v)
{
    a[id].present = true;
    a[id].i = v;
}
static void attr_v(tosac_attr_val *a, unsigned id, const int32_t *v, uint32_t n)
{
    a[id].present = true;
    a[id].data = v;
    a[id].len = n;
}

/* Half a unit in the last place of v in an FP type with `frac` fraction bits (at least its min normal). */
static double half_ulp(double v, int frac, int min_exp)
{
    int e;
    (void)frexp(fabs(v), &e);
    e -= 1;
    if (e < min_exp) e = min_exp;
    return ldexp(1.0, e - frac - 1);
}

typedef struct {
    int frac, min_exp;
} fpfmt;

static fpfmt fmt_of(tosac_dtype t, bool f64)
{
    fpfmt f = {23, -126};
    if (f64) return (fpfmt){52, -1022};
    switch (t) {
    case TOSAC_DTYPE_FP16: return (fpfmt){10, -14};
    case TOSAC_DTYPE_BF16: return (fpfmt){7, -126};
    case TOSAC_DTYPE_FP8E4M3: return (fpfmt){3, -6};
    case TOSAC_DTYPE_FP8E5M2: return (fpfmt){2, -14};
    default: return f;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Convolution family                                                                            */

typedef struct {
    uint32_t op;
    tosac_dtype in_t, w_t, out_t, acc_t;
    bool f64;
    int64_t N, ID, IH, IW, IC, OC, KD, KH, KW, M;
    int64_t pad[6];   /* conv2d/depthwise: t b l r; conv3d: d0 d1 t b l r; transpose: out_pad t b l r */
    int64_t stride[3], dil[3];
    int64_t izp, wzp;
    int64_t bc; /* bias length */
    /* derived */
    int64_t OD, OH, OW, OCT; /* OCT: output channels (C*M for depthwise) */
} cspec;

/* Picks the trailing pad so that (base + pad) is a non-negative multiple of s; false if too big. */
static int64_t fit_pad(int64_t base, int64_t s, int64_t extra)
{
    int64_t p = base >= 0 ? 0 : -base;
    while ((base + p) % s != 0) p++;
    return p + s * extra;
}

static void cspec_derive(cspec *s)
{
    bool t3 = s->op == TOSAC_OP_CONV3D;
    if (s->op == TOSAC_OP_TRANSPOSE_CONV2D) {
        s->OD = 1;
        s->OH = (s->IH - 1) * s->stride[0] + s->pad[0] + s->pad[1] + s->KH;
        s->OW = (s->IW - 1) * s->stride[1] + s->pad[2] + s->pad[3] + s->KW;
        s->OCT = s->OC;
        return;
    }
    const int64_t *p = t3 ? s->pad + 2 : s->pad;
    const int64_t *st = t3 ? s->stride + 1 : s->stride, *dl = t3 ? s->dil + 1 : s->dil;
    s->OD = t3 ? (s->ID - 1 + s->pad[0] + s->pad[1] - (s->KD - 1) * s->dil[0]) / s->stride[0] + 1 : 1;
    s->OH = (s->IH - 1 + p[0] + p[1] - (s->KH - 1) * dl[0]) / st[0] + 1;
    s->OW = (s->IW - 1 + p[2] + p[3] - (s->KW - 1) * dl[1]) / st[1] + 1;
    s->OCT = s->op == TOSAC_OP_DEPTHWISE_CONV2D ? s->IC * s->M : s->OC;
}

/* Random geometry for op (pads chosen so the output size divides exactly). */
static void cspec_random(cspec *s, uint32_t op, int64_t maxdim)
{
    s->op = op;
    s->N = rnd_in(1, 2);
    s->ID = op == TOSAC_OP_CONV3D ? rnd_in(1, 4) : 1;
    s->IH = rnd_in(1, maxdim), s->IW = rnd_in(1, maxdim);
    s->IC = rnd_in(1, 9), s->OC = rnd_in(1, 11);
    s->KD = op == TOSAC_OP_CONV3D ? rnd_in(1, 3) : 1;
    s->KH = rnd_in(1, 4), s->KW = rnd_in(1, 4);
    s->M = op == TOSAC_OP_DEPTHWISE_CONV2D ? rnd_in(1, 3) : 1;
    for (int i = 0; i < 3; i++) s->stride[i] = rnd_in(1, 3), s->dil[i] = rnd_in(1, 3);
    if (op == TOSAC_OP_TRANSPOSE_CONV2D) {
        /* out_pad > -K each, and the output must keep at least one row and column */
        do {
            s->pad[0] = rnd_in(-(s->KH - 1), 2), s->pad[1] = rnd_in(-(s->KH - 1), 2);
        } while ((s->IH - 1) * s->stride[0] + s->pad[0] + s->pad[1] + s->KH < 1);
        do {
            s->pad[2] = rnd_in(-(s->KW - 1), 2), s->pad[3] = rnd_in(-(s->KW - 1), 2);
        } while ((s->IW - 1) * s->stride[1] + s->pad[2] + s->pad[3] + s->KW < 1);
    } else if (op == TOSAC_OP_CONV3D) {
        s->pad[0] = rnd_in(0, 2);
        s->pad[1] = fit_pad(s->ID - 1 + s->pad[0] - (s->KD - 1) * s->dil[0], s->stride[0], rnd_in(0, 1));
        s->pad[2] = rnd_in(0, 3);
        s->pad[3] = fit_pad(s->IH - 1 + s->pad[2] - (s->KH - 1) * s->dil[1], s->stride[1], rnd_in(0, 1));
        s->pad[4] = rnd_in(0, 3);
        s->pad[5] = fit_pad(s->IW - 1 + s->pad[4] - (s->KW - 1) * s->dil[2], s->stride[2], rnd_in(0, 1));
    } else {
        s->pad[0] = rnd_in(0, 3);
        s->pad[1] = fit_pad(s->IH - 1 + s->pad[0] - (s->KH - 1) * s->dil[0], s->stride[0], rnd_in(0, 1));
        s->pad[2] = rnd_in(0, 3);
        s->pad[3] = fit_pad(s->IW - 1 + s->pad[2] - (s->KW - 1) * s->dil[1], s->stride[1], rnd_in(0, 1));
    }
    cspec_derive(s);
    s->bc = rnd_in(0, 3) == 0 ? 1 : s->OCT;
}

typedef struct {
    tt in, w, bias, izp, wzp, out;
} cbufs;

static void conv_alloc(const cspec *s, cbufs *b)
{
    int64_t ish[5], wsh[5], osh[5], one[1] = {1}, bsh[1] = {s->bc};
    int rank = 4;
    if (s->op == TOSAC_OP_CONV3D) {
        rank = 5;
        int64_t a[5] = {s->N, s->ID, s->IH, s->IW, s->IC}, w[5] = {s->OC, s->KD, s->KH, s->KW, s->IC},
                o[5] = {s->N, s->OD, s->OH, s->OW, s->OC};
        memcpy(ish, a, sizeof a), memcpy(wsh, w, sizeof w), memcpy(osh, o, sizeof o);
    } else {
        int64_t a[4] = {s->N, s->IH, s->IW, s->IC}, o[4] = {s->N, s->OH, s->OW, s->OCT};
        memcpy(ish, a, sizeof a), memcpy(osh, o, sizeof o);
        if (s->op == TOSAC_OP_DEPTHWISE_CONV2D) {
            int64_t w[4] = {s->KH, s->KW, s->IC, s->M};
            memcpy(wsh, w, sizeof w);
        } else {
            int64_t w[4] = {s->OC, s->KH, s->KW, s->IC};
            memcpy(wsh, w, sizeof w);
        }
    }
    tt_make(&b->in, s->in_t, s->f64, rank, ish);
    tt_make(&b->w, s->w_t, s->f64, rank, wsh);
    tt_make(&b->bias, s->out_t, s->f64, 1, bsh);
    tt_make(&b->izp, s->in_t, s->f64, 1, one);
    tt_make(&b->wzp, s->w_t, s->f64, 1, one);
    tt_make(&b->out, s->out_t, s->f64, rank, osh);
    if (!is_fp(&b->izp)) {
        seti(&b->izp, 0, s->izp);
        seti(&b->wzp, 0, s->wzp);
    }
}

static void conv_free(cbufs *b)
{
    tt_free(&b->in), tt_free(&b->w), tt_free(&b->bias), tt_free(&b->izp), tt_free(&b->wzp), tt_free(&b->out);
}

static tosac_status conv_run(const cspec *s, cbufs *b)
{
    tosac_attr_val a[TOSAC_ATTR_MAX_FIELDS];
    memset(a, 0, sizeof a);
    int32_t pad[6], st[3], dl[3];
    for (int i = 0; i < 6; i++) pad[i] = (int32_t)s->pad[i];
    for (int i = 0; i < 3; i++) st[i] = (int32_t)s->stride[i], dl[i] = (int32_t)s->dil[i];
    switch (s->op) {
    case TOSAC_OP_CONV3D:
        attr_v(a, TOSAC_ATTR_CONV3D_pad, pad, 6);
        attr_v(a, TOSAC_ATTR_CONV3D_stride, st, 3);
        attr_v(a, TOSAC_ATTR_CONV3D_dilation, dl, 3);
        attr_i(a, TOSAC_ATTR_CONV3D_acc_type, s->acc_t);
        break;
    case TOSAC_OP_TRANSPOSE_CONV2D:
        attr_v(a, TOSAC_ATTR_TRANSPOSE_CONV2D_out_pad, pad, 4);
        attr_v(a, TOSAC_ATTR_TRANSPOSE_CONV2D_stride, st, 2);
        attr_i(a, TOSAC_ATTR_TRANSPOSE_CONV2D_acc_type, s->acc_t);
        break;
    default: /* CONV2D and DEPTHWISE_CONV2D share field ids */
        attr_v(a, TOSAC_ATTR_CONV2D_pad, pad, 4);
        attr_v(a, TOSAC_ATTR_CONV2D_stride, st, 2);
        attr_v(a, TOSAC_ATTR_CONV2D_dilation, dl, 2);
        attr_i(a, TOSAC_ATTR_CONV2D_acc_type, s->acc_t);
        break;
    }
    tt *ins[5] = {&b->in, &b->w, &b->bias, &b->izp, &b->wzp}, *outs[1] = {&b->out};
    return run_op(s->op, ins, 5, outs, 1, a);
}

/* One term of a convolution sum: input element index xi, weight element index wi, output index oi. */
typedef void (*term_fn)(void *ctx, int64_t oi, int64_t xi, int64_t wi);

/*
 * Enumerates every (output, input, weight) triple of the operator's definition, for each output
 * in the spec's tap order. TRANSPOSE_CONV2D uses the spec's scatter form (input-major), so its
 * per-output order is (iy, ix, ky, kx, ic); the FP emulations below reorder nothing and are not
 * used for it.
 */
static void conv_enumerate(const cspec *s, term_fn f, void *ctx)
{
    int64_t N = s->N, IC = s->IC;
    if (s->op == TOSAC_OP_TRANSPOSE_CONV2D) {
        for (int64_t n = 0; n < N; n++)
            for (int64_t iy = 0; iy < s->IH; iy++)
                for (int64_t ix = 0; ix < s->IW; ix++)
                    for (int64_t oc = 0; oc < s->OC; oc++)
                        for (int64_t ky = 0; ky < s->KH; ky++)
                            for (int64_t kx = 0; kx < s->KW; kx++) {
                                int64_t oy = iy * s->stride[0] + s->pad[0] + ky;
                                int64_t ox = ix * s->stride[1] + s->pad[2] + kx;
                                if (oy < 0 || oy >= s->OH || ox < 0 || ox >= s->OW) continue;
                                for (int64_t ic = 0; ic < IC; ic++)
                                    f(ctx, ((n * s->OH + oy) * s->OW + ox) * s->OC + oc,
                                      ((n * s->IH + iy) * s->IW + ix) * IC + ic, ((oc * s->KH + ky) * s->KW + kx) * IC + ic);
                            }
        return;
    }
    if (s->op == TOSAC_OP_DEPTHWISE_CONV2D) {
        for (int64_t n = 0; n < N; n++)
            for (int64_t oy = 0; oy < s->OH; oy++)
                for (int64_t ox = 0; ox < s->OW; ox++)
                    for (int64_t c = 0; c < IC; c++)
                        for (int64_t m = 0; m < s->M; m++)
                            for (int64_t ky = 0; ky < s->KH; ky++)
                                for (int64_t kx = 0; kx < s->KW; kx++) {
                                    int64_t iy = oy * s->stride[0] + ky * s->dil[0] - s->pad[0];
                                    int64_t ix = ox * s->stride[1] + kx * s->dil[1] - s->pad[2];
                                    if (iy < 0 || iy >= s->IH || ix < 0 || ix >= s->IW) continue;
                                    f(ctx, ((n * s->OH + oy) * s->OW + ox) * s->OCT + c * s->M + m,
                                      ((n * s->IH + iy) * s->IW + ix) * IC + c, ((ky * s->KW + kx) * IC + c) * s->M + m);
                                }
        return;
    }
    bool t3 = s->op == TOSAC_OP_CONV3D;
    const int64_t *p = t3 ? s->pad + 2 : s->pad;
    const int64_t *st = t3 ? s->stride + 1 : s->stride, *dl = t3 ? s->dil + 1 : s->dil;
    int64_t sd = t3 ? s->stride[0] : 1, dd = t3 ? s->dil[0] : 1, pd = t3 ? s->pad[0] : 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t od = 0; od < s->OD; od++)
            for (int64_t oy = 0; oy < s->OH; oy++)
                for (int64_t ox = 0; ox < s->OW; ox++)
                    for (int64_t oc = 0; oc < s->OC; oc++)
                        for (int64_t kd = 0; kd < s->KD; kd++)
                            for (int64_t ky = 0; ky < s->KH; ky++)
                                for (int64_t kx = 0; kx < s->KW; kx++) {
                                    int64_t id = od * sd + kd * dd - pd;
                                    int64_t iy = oy * st[0] + ky * dl[0] - p[0];
                                    int64_t ix = ox * st[1] + kx * dl[1] - p[2];
                                    if (id < 0 || id >= s->ID || iy < 0 || iy >= s->IH || ix < 0 || ix >= s->IW) continue;
                                    for (int64_t ic = 0; ic < IC; ic++)
                                        f(ctx, (((n * s->OD + od) * s->OH + oy) * s->OW + ox) * s->OC + oc,
                                          (((n * s->ID + id) * s->IH + iy) * s->IW + ix) * IC + ic,
                                          (((oc * s->KD + kd) * s->KH + ky) * s->KW + kx) * IC + ic);
                                }
}

typedef struct {
    const cspec *s;
    const cbufs *b;
    int64_t *acc;    /* integer sums */
    double *accd;    /* double sums */
    double *absd;    /* sums of |terms| */
    float *accf;     /* emulation of fp32 / fp16 accumulation */
    int64_t *nterm;  /* terms per output */
    bool f16;
} cctx;

static void term_int(void *p, int64_t oi, int64_t xi, int64_t wi)
{
    cctx *c = (cctx *)p;
    c->acc[oi] += (geti(&c->b->in, xi) - c->s->izp) * (geti(&c->b->w, wi) - c->s->wzp);
}

static void term_fp(void *p, int64_t oi, int64_t xi, int64_t wi)
{
    cctx *c = (cctx *)p;
    double x = getf(&c->b->in, xi), w = getf(&c->b->w, wi);
    c->accd[oi] += x * w;
    c->absd[oi] += fabs(x * w);
    c->nterm[oi]++;
    float xf = (float)x, wf = (float)w;
    if (c->f16) {
        float prod = tosac_fp16_to_fp32(tosac_fp32_to_fp16(xf * wf));
        c->accf[oi] = tosac_fp16_to_fp32(tosac_fp32_to_fp16(c->accf[oi] + prod));
    } else {
        c->accf[oi] = fmaf(xf, wf, c->accf[oi]); /* each product fused into the sum */
    }
}

/* Runs one conv case; returns false (and prints) on mismatch. */
static bool conv_case(const cspec *s, int64_t amp_x, int64_t amp_w, double famp)
{
    cbufs b;
    conv_alloc(s, &b);
    bool introw = !is_fp(&b.in);
    if (introw) {
        int64_t lo, hi;
        if (s->in_t == TOSAC_DTYPE_INT16)
            lo = -32768, hi = 32767;
        else
            lo = -128, hi = 127;
        if (amp_x) lo = -amp_x, hi = amp_x;
        fill_int(&b.in, lo, hi);
        if (s->w_t == TOSAC_DTYPE_INT4)
            fill_int(&b.w, -8, 7);
        else
            fill_int(&b.w, amp_w ? -amp_w : -128, amp_w ? amp_w : 127);
        fill_int(&b.bias, -100000, 100000);
    } else {
        fill_fp(&b.in, famp);
        fill_fp(&b.w, famp);
        fill_fp(&b.bias, famp);
    }
    int64_t no = b.out.t.nelem;
    cctx cx = {s, &b, calloc((size_t)no + 1, 8), calloc((size_t)no + 1, 8), calloc((size_t)no + 1, 8),
               calloc((size_t)no + 1, 4), calloc((size_t)no + 1, 8), s->acc_t == TOSAC_DTYPE_FP16 && !s->f64};
    conv_enumerate(s, introw ? term_int : term_fp, &cx);
    tosac_status st = conv_run(s, &b);
    bool ok = st == TOSAC_OK;
    int bad = 0;
    bool exact_order = !introw && !s->f64 && s->op != TOSAC_OP_TRANSPOSE_CONV2D;
    fpfmt of = fmt_of(s->out_t, s->f64);
    double eps_acc = s->f64 ? ldexp(1.0, -53) : s->acc_t == TOSAC_DTYPE_FP16 ? ldexp(1.0, -11) : ldexp(1.0, -24);
    for (int64_t i = 0; ok && i < no; i++) {
        int64_t oc = i % s->OCT, bi = s->bc == 1 ? 0 : oc;
        if (introw) {
            int64_t want = cx.acc[i] + geti(&b.bias, bi), got = geti(&b.out, i);
            if (want != got && bad++ < 3) fprintf(stderr, "  out[%lld] = %lld, want %lld\n", (long long)i, (long long)got, (long long)want);
            continue;
        }
        double got = getf(&b.out, i), bias = getf(&b.bias, bi), want = bias + cx.accd[i];
        double tol = (double)(cx.nterm[i] + 2) * eps_acc * 2.0 * (cx.absd[i] + fabs(bias)) + 2.0 * half_ulp(want, of.frac, of.min_exp);
        if (s->f64) tol = 1e-12 * (cx.absd[i] + fabs(bias)) + 1e-300;
        if (!(fabs(got - want) <= tol) && bad++ < 3)
            fprintf(stderr, "  out[%lld] = %.9g, want %.9g (tol %.3g)\n", (long long)i, got, want, tol);
        if (exact_order) {
            /* reference model: bias + acc in float, rounded once to out_t */
            float r = (float)bias + cx.accf[i];
            tt one;
            int64_t sh1[1] = {1};
            tt_make(&one, s->out_t, false, 1, sh1);
            setf(&one, 0, r);
            if (memcmp(one.buf, b.out.buf + (size_t)i * b.out.es, b.out.es) != 0 && bad++ < 3)
                fprintf(stderr, "  out[%lld] = %.9g, reference order gives %.9g\n", (long long)i, got, getf(&one, 0));
            tt_free(&one);
        }
    }
    if (st != TOSAC_OK) fprintf(stderr, "  status %d\n", (int)st);
    ok = ok && bad == 0;
    if (!ok)
        fprintf(stderr,
                "  op %u in %d w %d out %d acc %d f64 %d: N%lld D%lld H%lld W%lld IC%lld OC%lld K%lldx%lldx%lld M%lld "
                "pad %lld,%lld,%lld,%lld,%lld,%lld st %lld,%lld,%lld dil %lld,%lld,%lld zp %lld,%lld bc %lld\n",
                s->op, s->in_t, s->w_t, s->out_t, s->acc_t, s->f64, (long long)s->N, (long long)s->ID, (long long)s->IH,
                (long long)s->IW, (long long)s->IC, (long long)s->OC, (long long)s->KD, (long long)s->KH, (long long)s->KW,
                (long long)s->M, (long long)s->pad[0], (long long)s->pad[1], (long long)s->pad[2], (long long)s->pad[3],
                (long long)s->pad[4], (long long)s->pad[5], (long long)s->stride[0], (long long)s->stride[1],
                (long long)s->stride[2], (long long)s->dil[0], (long long)s->dil[1], (long long)s->dil[2], (long long)s->izp,
                (long long)s->wzp, (long long)s->bc);
    free(cx.acc), free(cx.accd), free(cx.absd), free(cx.accf), free(cx.nterm);
    conv_free(&b);
    return ok;
}

typedef struct {
    tosac_dtype in_t, w_t, out_t, acc_t;
    bool f64;
    const char *name;
} crow;

static const crow conv_rows[] = {
    {TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT32, TOSAC_DTYPE_INT32, false, "i8xi8"},
    {TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT4, TOSAC_DTYPE_INT32, TOSAC_DTYPE_INT32, false, "i8xi4"},
    {TOSAC_DTYPE_INT16, TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT48, TOSAC_DTYPE_INT48, false, "i16xi8"},
    {TOSAC_DTYPE_FP8E4M3, TOSAC_DTYPE_FP8E4M3, TOSAC_DTYPE_FP16, TOSAC_DTYPE_FP16, false, "e4m3"},
    {TOSAC_DTYPE_FP8E5M2, TOSAC_DTYPE_FP8E5M2, TOSAC_DTYPE_FP16, TOSAC_DTYPE_FP16, false, "e5m2"},
    {TOSAC_DTYPE_FP16, TOSAC_DTYPE_FP16, TOSAC_DTYPE_FP16, TOSAC_DTYPE_FP16, false, "fp16 acc16"},
    {TOSAC_DTYPE_FP16, TOSAC_DTYPE_FP16, TOSAC_DTYPE_FP16, TOSAC_DTYPE_FP32, false, "fp16 acc32"},
    {TOSAC_DTYPE_FP32, TOSAC_DTYPE_FP32, TOSAC_DTYPE_FP32, TOSAC_DTYPE_FP32, false, "fp32"},
    {TOSAC_DTYPE_BF16, TOSAC_DTYPE_BF16, TOSAC_DTYPE_BF16, TOSAC_DTYPE_FP32, false, "bf16"},
    {TOSAC_DTYPE_FP32, TOSAC_DTYPE_FP32, TOSAC_DTYPE_FP32, TOSAC_DTYPE_FP32, true, "f64 (fp32 row)"},
    {TOSAC_DTYPE_FP16, TOSAC_DTYPE_FP16, TOSAC_DTYPE_FP16, TOSAC_DTYPE_FP16, true, "f64 (fp16 row)"},
};

static void conv_random_cases(uint32_t op, int per_row)
{
    for (size_t r = 0; r < sizeof conv_rows / sizeof conv_rows[0]; r++) {
        const crow *row = &conv_rows[r];
        int fails = 0;
        for (int k = 0; k < per_row; k++) {
            cspec s;
            memset(&s, 0, sizeof s);
            cspec_random(&s, op, 9);
            s.in_t = row->in_t, s.w_t = row->w_t, s.out_t = row->out_t, s.acc_t = row->acc_t, s.f64 = row->f64;
            if (s.in_t == TOSAC_DTYPE_INT8) s.izp = rnd_in(0, 2) ? rnd_in(-128, 127) : 0;
            if (s.w_t == TOSAC_DTYPE_INT8) s.wzp = rnd_in(0, 2) ? rnd_in(-128, 127) : 0;
            double amp = s.in_t == TOSAC_DTYPE_FP8E4M3 ? 8.0 : s.in_t == TOSAC_DTYPE_FP8E5M2 ? 4.0 : 2.0;
            if (!conv_case(&s, 0, 0, amp)) fails++;
        }
        CHECK_CASE(fails == 0, "op %u row %s: %d of %d cases", op, row->name, fails, per_row);
    }
}

static void test_conv2d_random(void) { conv_random_cases(TOSAC_OP_CONV2D, 30); }
static void test_conv3d_random(void) { conv_random_cases(TOSAC_OP_CONV3D, 12); }
static void test_depthwise_random(void) { conv_random_cases(TOSAC_OP_DEPTHWISE_CONV2D, 30); }
static void test_transpose_random(void) { conv_random_cases(TOSAC_OP_TRANSPOSE_CONV2D, 30); }

/* Larger shapes: int8 GEMM tiles with all remainders, chunked int32 sums (K > 33025 and i16). */
static void test_conv_large(void)
{
    cspec s;
    memset(&s, 0, sizeof s);
    s.op = TOSAC_OP_CONV2D, s.in_t = TOSAC_DTYPE_INT8, s.w_t = TOSAC_DTYPE_INT8, s.out_t = s.acc_t = TOSAC_DTYPE_INT32;
    s.N = 1, s.ID = 1, s.IH = 13, s.IW = 11, s.IC = 35, s.OC = 19, s.KD = 1, s.KH = 3, s.KW = 3, s.M = 1;
    s.pad[0] = s.pad[1] = s.pad[2] = s.pad[3] = 1;
    s.stride[0] = s.stride[1] = s.stride[2] = 1, s.dil[0] = s.dil[1] = s.dil[2] = 1;
    s.izp = -7, s.wzp = 3, s.bc = 19;
    cspec_derive(&s);
    CHECK_CASE(conv_case(&s, 0, 0, 0), "conv2d i8 13x11x35 -> 19");
    /* weight zero point 0 (the u8 x s8 panels at AVX-512 with constant weights): K not a
       multiple of 4, extreme input zero points, 1x1 rows with K a multiple of 4, several blocks
       of 32 columns */
    s.wzp = 0;
    for (int64_t zp = -128; zp <= 127; zp += 255) {
        s.izp = zp;
        CHECK_CASE(conv_case(&s, 0, 0, 0), "conv2d i8 13x11x35 -> 19, weight zp 0");
    }
    s.IC = 64, s.OC = 70, s.KH = s.KW = 1, s.pad[0] = s.pad[1] = s.pad[2] = s.pad[3] = 0, s.izp = 5, s.bc = 70;
    cspec_derive(&s);
    CHECK_CASE(conv_case(&s, 0, 0, 0), "conv2d i8 1x1 64 -> 70, weight zp 0");
    /* narrow last panel blocks (8 and 16 columns: ymm and zmm tiles) alone and after whole ones;
       a 3-channel stem (K = 27, rows of interior pixels copied whole) */
    {
        static const int64_t ocs[] = {3, 8, 13, 16, 20, 40, 48, 56};
        for (size_t i = 0; i < sizeof ocs / sizeof ocs[0]; i++) {
            s.IH = 16, s.IW = 14, s.IC = i % 2 ? 3 : 16, s.OC = ocs[i], s.bc = i % 3 ? ocs[i] : 1, s.izp = -3;
            s.KH = s.KW = 3, s.stride[0] = s.stride[1] = 2, s.pad[0] = s.pad[2] = 1, s.pad[1] = s.pad[3] = 0;
            cspec_derive(&s);
            CHECK_CASE(conv_case(&s, 0, 0, 0), "conv2d i8 3x3 s2 %lld -> %lld, weight zp 0", (long long)s.IC,
                       (long long)s.OC);
        }
        s.stride[0] = s.stride[1] = 1;
    }
    s.IC = 35, s.OC = 19, s.KH = s.KW = 3, s.pad[0] = s.pad[1] = s.pad[2] = s.pad[3] = 1, s.bc = 19;
    s.izp = -7, s.wzp = 3;
    cspec_derive(&s);
    /* K = 34000 > 33025: chunked int32 partial sums */
    s.IH = 2, s.IW = 3, s.IC = 34000, s.OC = 5, s.KH = s.KW = 1, s.pad[0] = s.pad[1] = s.pad[2] = s.pad[3] = 0;
    s.bc = 1;
    cspec_derive(&s);
    CHECK_CASE(conv_case(&s, 0, 0, 0), "conv2d i8 K=34000");
    /* the same with every term 255 * 255: the exact sum exceeds i32 (the int32 partial sums must not wrap) */
    {
        cbufs b;
        s.izp = 127, s.wzp = 127;
        conv_alloc(&s, &b);
        for (int64_t i = 0; i < b.in.t.nelem; i++) seti(&b.in, i, -128);
        for (int64_t i = 0; i < b.w.t.nelem; i++) seti(&b.w, i, -128);
        EXPECT_EQ_I(conv_run(&s, &b), TOSAC_ERR_UNPREDICTABLE);
        for (int64_t i = 0; i < b.w.t.nelem; i += 2) seti(&b.w, i, 127); /* half the terms 0: fits */
        EXPECT_EQ_I(conv_run(&s, &b), TOSAC_OK);
        EXPECT_EQ_I(geti(&b.out, 0), 17000 * 65025 + geti(&b.bias, 0));
        conv_free(&b);
        s.izp = -7, s.wzp = 3;
    }
    /* i16 x i8 with K = 3*3*64 = 576 > 257 */
    s.in_t = TOSAC_DTYPE_INT16, s.out_t = s.acc_t = TOSAC_DTYPE_INT48, s.izp = 0, s.wzp = -5;
    s.IH = 6, s.IW = 5, s.IC = 64, s.OC = 7, s.KH = s.KW = 3, s.pad[0] = s.pad[1] = s.pad[2] = s.pad[3] = 1;
    cspec_derive(&s);
    CHECK_CASE(conv_case(&s, 0, 0, 0), "conv2d i16 K=576");
    /* fp32 bigger (GEMM tiles, exact reference order) */
    s.in_t = s.w_t = s.out_t = s.acc_t = TOSAC_DTYPE_FP32, s.wzp = 0;
    s.IH = 9, s.IW = 10, s.IC = 21, s.OC = 29, s.stride[0] = 2, s.pad[1] = 0;
    s.bc = 29;
    cspec_derive(&s);
    CHECK_CASE(conv_case(&s, 0, 0, 3.0), "conv2d fp32 9x10x21 -> 29");
    /* fp32 on the AVX-512 weight panels: output channels around the 32 / 64-column blocks, K
       over several K blocks, more output pixels than one block, and the 1x1 form */
    {
        /* narrow last blocks (8 to 56 columns: ymm, 1, 2 and 3 zmm tiles, 1 to 3 zmm and a ymm)
           alone and after whole ones, and groups of 64 columns split over the workers */
        static const int64_t ocs[] = {8, 16, 20, 24, 32, 33, 40, 47, 56, 64, 65, 72, 88, 100, 120, 129, 200};
        for (size_t i = 0; i < sizeof ocs / sizeof ocs[0]; i++) {
            s.IH = 12 + (int64_t)i, s.IW = 11, s.IC = 19 + 7 * (int64_t)i, s.OC = ocs[i], s.bc = i % 2 ? 1 : ocs[i];
            s.KH = s.KW = 3, s.stride[0] = 1 + (int64_t)(i % 2), s.pad[0] = s.pad[1] = s.pad[2] = s.pad[3] = 1;
            cspec_derive(&s);
            CHECK_CASE(conv_case(&s, 0, 0, 3.0), "conv2d fp32 3x3 on panels");
            s.KH = s.KW = 1, s.stride[0] = 1, s.pad[0] = s.pad[1] = s.pad[2] = s.pad[3] = 0;
            cspec_derive(&s);
            CHECK_CASE(conv_case(&s, 0, 0, 3.0), "conv2d fp32 1x1 on panels");
        }
        /* K over several of the panels' K blocks (equal parts of at most 1024): 3x3 x 130 (2 blocks),
           1x1 x 2100 (3 blocks), with a whole and a narrow column block */
        s.IH = 7, s.IW = 9, s.IC = 130, s.OC = 72, s.bc = 72, s.stride[0] = 1;
        s.KH = s.KW = 3, s.pad[0] = s.pad[1] = s.pad[2] = s.pad[3] = 1;
        cspec_derive(&s);
        CHECK_CASE(conv_case(&s, 0, 0, 3.0), "conv2d fp32 3x3 K=1170 on panels");
        s.IH = 5, s.IW = 5, s.IC = 2100, s.OC = 80, s.bc = 1;
        s.KH = s.KW = 1, s.pad[0] = s.pad[1] = s.pad[2] = s.pad[3] = 0;
        cspec_derive(&s);
        CHECK_CASE(conv_case(&s, 0, 0, 3.0), "conv2d fp32 1x1 K=2100 on panels");
        /* weights beyond 1 MB on few pixels (all of them in one block on one worker), K in 2
           blocks, 4 whole column blocks and one of 8 (each tile prefetching a share of the next
           block, a narrow one and the first of the next K block), 25 rows in tiles of 5 */
        s.IH = 5, s.IW = 5, s.IC = 128, s.OC = 264, s.bc = 264;
        s.KH = s.KW = 3, s.pad[0] = s.pad[1] = s.pad[2] = s.pad[3] = 1;
        cspec_derive(&s);
        CHECK_CASE(conv_case(&s, 0, 0, 3.0), "conv2d fp32 3x3 weights > 1 MB on panels");
        /* rows of at least 8 output pixels read in place (kernel rows as segments, those in the
           padding skipped, border pixels through patch rows): two images, strides 1 and 2 along
           x, dilation along y, a 1x1 stride-2 shortcut, a 3-channel 7x7 stem, K over 2 blocks,
           rows of 8 and 9 pixels; up to 64 output channels (the panel blocks of 8 to 64 columns) */
        static const struct {
            int64_t N, IH, IW, IC, OC, KH, KW, sy, sx, dy, pt, pb, pl, pr;
        } rw[] = {{2, 5, 30, 7, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1},    {1, 6, 53, 5, 56, 3, 3, 2, 2, 1, 1, 0, 1, 1},
                  {1, 7, 55, 9, 40, 1, 1, 2, 2, 1, 0, 0, 0, 0},    {1, 9, 31, 4, 16, 3, 3, 1, 1, 2, 2, 2, 1, 1},
                  {1, 12, 58, 3, 64, 7, 7, 2, 2, 1, 3, 2, 3, 2},   {1, 4, 26, 130, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1},
                  {1, 3, 24, 6, 8, 3, 5, 1, 1, 1, 0, 0, 2, 2},     {2, 9, 8, 32, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1},
                  {1, 10, 17, 16, 40, 3, 3, 2, 2, 1, 1, 0, 1, 0}};
        for (size_t i = 0; i < sizeof rw / sizeof rw[0]; i++) {
            s.N = rw[i].N, s.IH = rw[i].IH, s.IW = rw[i].IW, s.IC = rw[i].IC, s.OC = rw[i].OC, s.bc = i % 2 ? 1 : rw[i].OC;
            s.KH = rw[i].KH, s.KW = rw[i].KW, s.stride[0] = rw[i].sy, s.stride[1] = rw[i].sx, s.dil[0] = rw[i].dy;
            s.pad[0] = rw[i].pt, s.pad[1] = rw[i].pb, s.pad[2] = rw[i].pl, s.pad[3] = rw[i].pr;
            cspec_derive(&s);
            CHECK_CASE(conv_case(&s, 0, 0, 3.0), "conv2d fp32 rows read in place, case %zu", i);
        }
        s.N = 1, s.stride[0] = s.stride[1] = 1, s.dil[0] = 1;
        s.KH = s.KW = 3, s.pad[0] = s.pad[1] = s.pad[2] = s.pad[3] = 1;
    }
    /* depthwise i8 with many channels */
    memset(&s, 0, sizeof s);
    s.op = TOSAC_OP_DEPTHWISE_CONV2D, s.in_t = TOSAC_DTYPE_INT8, s.w_t = TOSAC_DTYPE_INT8;
    s.out_t = s.acc_t = TOSAC_DTYPE_INT32;
    s.N = 2, s.ID = 1, s.IH = 7, s.IW = 8, s.IC = 37, s.KD = 1, s.KH = 3, s.KW = 3, s.M = 1;
    s.pad[0] = s.pad[1] = s.pad[2] = s.pad[3] = 1;
    s.stride[0] = s.stride[1] = 1, s.dil[0] = s.dil[1] = 1, s.izp = 11, s.wzp = -9;
    cspec_derive(&s);
    s.bc = s.OCT;
    CHECK_CASE(conv_case(&s, 0, 0, 0), "depthwise i8 37 ch");
    /* the depthwise row kernels: groups of 8 interior pixels, whole vectors of channels and the
       rest, one pixel at a time at the borders; strides, dilations, pads wider than a kernel row */
    static const int64_t dws[][6] = {{37, 1, 1, 1, 20, 3}, {70, 2, 1, 0, 23, 3}, {16, 1, 2, 2, 19, 3},
                                     {96, 2, 2, 3, 30, 5}, {5, 1, 1, 4, 13, 3}};
    for (size_t i = 0; i < sizeof dws / sizeof dws[0]; i++) {
        for (int fp = 0; fp < 2; fp++) {
            s.in_t = s.w_t = fp ? TOSAC_DTYPE_FP32 : TOSAC_DTYPE_INT8;
            s.out_t = s.acc_t = fp ? TOSAC_DTYPE_FP32 : TOSAC_DTYPE_INT32;
            s.izp = fp ? 0 : -7, s.wzp = fp ? 0 : 3;
            s.N = 1, s.IH = 6, s.IW = dws[i][4], s.IC = dws[i][0], s.KH = s.KW = dws[i][5];
            s.stride[0] = s.stride[1] = dws[i][1], s.dil[0] = s.dil[1] = dws[i][2];
            s.pad[0] = s.pad[2] = dws[i][3];
            s.pad[1] = fit_pad(s.IH - 1 + s.pad[0] - (s.KH - 1) * s.dil[0], s.stride[0], 0);
            s.pad[3] = fit_pad(s.IW - 1 + s.pad[2] - (s.KW - 1) * s.dil[1], s.stride[1], 1);
            cspec_derive(&s);
            s.bc = i % 2 ? 1 : s.OCT;
            CHECK_CASE(conv_case(&s, 0, 0, 2.0), "depthwise %s rows, case %zu", fp ? "fp32" : "i8", i);
        }
    }
    /* the row kernels' tiles of 8, 4, 2 and 1 pixels, vectors of every width (channel counts below,
       at and above 4, 8, 16, none a multiple of the vector: the last vector overlaps), stride 2
       with the mobilenets' pad [1, 0, 1, 0], 5x5 kernels, multipliers above 1 (the gathered patch),
       rows narrower than a tile */
    static const int64_t dwm[][8] = {
        /* C, M, stride, dil, pad, IW, K, IH */
        {8, 1, 1, 1, 1, 29, 3, 5},  {2, 1, 1, 1, 1, 21, 3, 4},  {3, 1, 2, 1, 1, 18, 3, 5},  {72, 1, 2, 1, 1, 24, 3, 4},
        {88, 1, 1, 1, 1, 15, 3, 3}, {23, 1, 2, 1, 2, 28, 5, 6}, {120, 1, 1, 1, 2, 7, 5, 5}, {16, 1, 2, 1, 1, 48, 3, 4},
        {8, 2, 1, 1, 1, 19, 3, 4},  {5, 3, 2, 1, 1, 22, 3, 5},  {36, 2, 1, 2, 2, 13, 3, 4}, {1, 16, 1, 1, 1, 11, 3, 3},
        {12, 1, 1, 1, 0, 6, 1, 2},  {40, 1, 3, 1, 2, 26, 5, 7},
    };
    for (size_t i = 0; i < sizeof dwm / sizeof dwm[0]; i++) {
        for (int fp = 0; fp < 2; fp++) {
            s.in_t = s.w_t = fp ? TOSAC_DTYPE_FP32 : TOSAC_DTYPE_INT8;
            s.out_t = s.acc_t = fp ? TOSAC_DTYPE_FP32 : TOSAC_DTYPE_INT32;
            s.izp = fp ? 0 : (int64_t)i * 37 % 256 - 128, s.wzp = fp ? 0 : (int64_t)(i % 3) - 1;
            s.N = 1 + (int64_t)(i % 2), s.IC = dwm[i][0], s.M = dwm[i][1], s.IW = dwm[i][5], s.IH = dwm[i][7];
            s.KH = s.KW = dwm[i][6], s.stride[0] = s.stride[1] = dwm[i][2], s.dil[0] = s.dil[1] = dwm[i][3];
            s.pad[0] = s.pad[2] = dwm[i][4];
            s.pad[1] = fit_pad(s.IH - 1 + s.pad[0] - (s.KH - 1) * s.dil[0], s.stride[0], 0);
            s.pad[3] = fit_pad(s.IW - 1 + s.pad[2] - (s.KW - 1) * s.dil[1], s.stride[1], 0);
            cspec_derive(&s);
            s.bc = i % 3 ? s.OCT : 1;
            CHECK_CASE(conv_case(&s, 0, 0, 2.0), "depthwise %s tiles, case %zu", fp ? "fp32" : "i8", i);
        }
    }
}

/* TOSA.md B.4: CONV2D i8 3x3 ones, pad 1, input [[1,2],[3,4]], input_zp -2, bias 100 -> 118. */
static void test_conv2d_spot(void)
{
    cspec s;
    memset(&s, 0, sizeof s);
    s.op = TOSAC_OP_CONV2D, s.in_t = TOSAC_DTYPE_INT8, s.w_t = TOSAC_DTYPE_INT8, s.out_t = s.acc_t = TOSAC_DTYPE_INT32;
    s.N = 1, s.ID = 1, s.IH = 2, s.IW = 2, s.IC = 1, s.OC = 1, s.KD = 1, s.KH = 3, s.KW = 3, s.M = 1;
    s.pad[0] = s.pad[1] = s.pad[2] = s.pad[3] = 1;
    s.stride[0] = s.stride[1] = 1, s.dil[0] = s.dil[1] = 1, s.izp = -2, s.bc = 1;
    cspec_derive(&s);
    cbufs b;
    conv_alloc(&s, &b);
    for (int i = 0; i < 4; i++) seti(&b.in, i, i + 1);
    for (int i = 0; i < 9; i++) seti(&b.w, i, 1);
    seti(&b.bias, 0, 100);
    EXPECT_EQ_I(conv_run(&s, &b), TOSAC_OK);
    EXPECT_EQ_I(b.out.t.nelem, 4);
    for (int i = 0; i < 4; i++) EXPECT_EQ_I(geti(&b.out, i), 118);
    conv_free(&b);
}

/* REQUIRE: i48 accumulator + bias beyond +-2^47 -> UNPREDICTABLE; in range -> exact. */
static void test_conv_i48_overflow(void)
{
    cspec s;
    memset(&s, 0, sizeof s);
    s.op = TOSAC_OP_CONV2D, s.in_t = TOSAC_DTYPE_INT16, s.w_t = TOSAC_DTYPE_INT8, s.out_t = s.acc_t = TOSAC_DTYPE_INT48;
    s.N = 1, s.ID = 1, s.IH = 1, s.IW = 1, s.IC = 2, s.OC = 1, s.KD = 1, s.KH = 1, s.KW = 1, s.M = 1;
    s.stride[0] = s.stride[1] = 1, s.dil[0] = s.dil[1] = 1, s.bc = 1;
    cspec_derive(&s);
    cbufs b;
    conv_alloc(&s, &b);
    seti(&b.in, 0, 32767), seti(&b.in, 1, 32767);
    seti(&b.w, 0, 127), seti(&b.w, 1, 127);
    int64_t acc = 2 * 32767 * 127, lim = (int64_t)1 << 47;
    seti(&b.bias, 0, lim - 1 - acc);
    EXPECT_EQ_I(conv_run(&s, &b), TOSAC_OK);
    EXPECT_EQ_I(geti(&b.out, 0), lim - 1);
    seti(&b.bias, 0, lim - acc);
    EXPECT_EQ_I(conv_run(&s, &b), TOSAC_ERR_UNPREDICTABLE);
    seti(&b.in, 0, -32768), seti(&b.in, 1, -32768);
    seti(&b.bias, 0, -lim + 2 * 32768 * 127);
    EXPECT_EQ_I(conv_run(&s, &b), TOSAC_OK);
    EXPECT_EQ_I(geti(&b.out, 0), -lim);
    seti(&b.bias, 0, -lim + 2 * 32768 * 127 - 1);
    EXPECT_EQ_I(conv_run(&s, &b), TOSAC_ERR_UNPREDICTABLE);
    conv_free(&b);
    /* depthwise and transpose share the check */
    s.op = TOSAC_OP_DEPTHWISE_CONV2D, s.IC = 1, s.M = 1;
    cspec_derive(&s);
    conv_alloc(&s, &b);
    seti(&b.in, 0, 32767), seti(&b.w, 0, 127), seti(&b.bias, 0, lim - 1);
    EXPECT_EQ_I(conv_run(&s, &b), TOSAC_ERR_UNPREDICTABLE);
    conv_free(&b);
    /* i32: acc + bias beyond int32 */
    memset(&s, 0, sizeof s);
    s.op = TOSAC_OP_TRANSPOSE_CONV2D, s.in_t = TOSAC_DTYPE_INT8, s.w_t = TOSAC_DTYPE_INT8, s.out_t = s.acc_t = TOSAC_DTYPE_INT32;
    s.N = 1, s.ID = 1, s.IH = 1, s.IW = 1, s.IC = 1, s.OC = 1, s.KD = 1, s.KH = 1, s.KW = 1, s.M = 1;
    s.stride[0] = s.stride[1] = 1, s.bc = 1;
    cspec_derive(&s);
    conv_alloc(&s, &b);
    seti(&b.in, 0, 100), seti(&b.w, 0, 100), seti(&b.bias, 0, INT32_MAX - 10000);
    EXPECT_EQ_I(conv_run(&s, &b), TOSAC_OK);
    EXPECT_EQ_I(geti(&b.out, 0), INT32_MAX);
    seti(&b.bias, 0, INT32_MAX - 9999);
    EXPECT_EQ_I(conv_run(&s, &b), TOSAC_ERR_UNPREDICTABLE);
    conv_free(&b);
    /* the same for the depthwise row kernels (they add the bias): 20 channels, 3x3, pad 1; the
       interior pixels' sums are +-9 * 100 * 100, channel 5's bias takes them to the int32 limits */
    s.op = TOSAC_OP_DEPTHWISE_CONV2D, s.IH = 3, s.IW = 10, s.IC = 20, s.KH = s.KW = 3, s.bc = 20;
    s.pad[0] = s.pad[1] = s.pad[2] = s.pad[3] = 1, s.dil[0] = s.dil[1] = 1;
    cspec_derive(&s);
    conv_alloc(&s, &b);
    for (int sign = -1; sign <= 1; sign += 2) {
        for (int64_t i = 0; i < b.in.t.nelem; i++) seti(&b.in, i, 100 * sign);
        for (int64_t i = 0; i < b.w.t.nelem; i++) seti(&b.w, i, 100);
        for (int64_t i = 0; i < 20; i++) seti(&b.bias, i, i);
        int64_t edge = sign > 0 ? INT32_MAX : INT32_MIN, mid = (s.OW + 4) * 20 + 5; /* row 1, column 4 */
        seti(&b.bias, 5, edge - sign * 90000);
        EXPECT_EQ_I(conv_run(&s, &b), TOSAC_OK);
        EXPECT_EQ_I(geti(&b.out, mid), edge);
        EXPECT_EQ_I(geti(&b.out, mid + 1), sign * 90000 + 6);
        seti(&b.bias, 5, edge - sign * 89999);
        EXPECT_EQ_I(conv_run(&s, &b), TOSAC_ERR_UNPREDICTABLE);
    }
    conv_free(&b);
}

/*
 * The int8 depthwise rows of the AVX2 level (k_idw_avx2.c: constant weights, multiplier 1, at
 * least 8 channels, 3 or 5 kernel columns, stride 1 or 2 along x, dilation 1 along x; any kernel
 * height up to 8) and the geometries beside them that other rows take, at the portable level and
 * the machine's, on 1 to 3 workers, against the int64 reference: channel counts no multiple of
 * the vector (the last one overlaps), rows of 1 to 29 pixels (tiles of 8 and 4 and the pixels
 * past a row's end), pads wider than the kernel, zero points at the ends of int8; then the
 * REQUIRE on acc + bias with constant weights.
 */
static void test_depthwise_i8_rows(void)
{
    static const int64_t sh[][11] = {
        /* C, M, KH, KW, sy, sx, dy, dx, pad (top and left), IW, IH */
        {8, 1, 3, 3, 1, 1, 1, 1, 1, 29, 5},   {24, 1, 3, 3, 2, 2, 1, 1, 1, 23, 6},  {72, 1, 3, 3, 2, 2, 1, 1, 0, 17, 5},
        {88, 1, 3, 3, 1, 1, 1, 1, 1, 13, 4},  {120, 1, 5, 5, 1, 1, 1, 1, 2, 14, 6}, {1000, 1, 5, 5, 2, 2, 1, 1, 2, 9, 5},
        {144, 1, 3, 3, 1, 1, 1, 1, 1, 7, 3},  {16, 2, 3, 3, 1, 1, 1, 1, 1, 12, 4},  {40, 1, 3, 3, 1, 1, 2, 1, 2, 19, 7},
        {40, 1, 3, 3, 1, 1, 1, 2, 2, 19, 5},  {9, 1, 5, 3, 1, 1, 1, 1, 1, 11, 6},   {17, 1, 4, 5, 2, 1, 1, 1, 3, 21, 9},
        {8, 1, 1, 3, 1, 2, 1, 1, 0, 8, 2},    {12, 1, 8, 3, 1, 1, 1, 1, 4, 10, 9},  {12, 1, 9, 3, 1, 1, 1, 1, 4, 10, 9},
        {33, 1, 3, 3, 1, 1, 1, 1, 3, 5, 4},   {7, 1, 3, 3, 1, 1, 1, 1, 1, 12, 4},   {8, 1, 5, 5, 1, 2, 2, 1, 2, 1, 3},
        {24, 1, 3, 5, 3, 1, 1, 1, 1, 2, 5},   {56, 1, 2, 3, 1, 1, 3, 1, 0, 6, 7},
    };
    static const int64_t zps[][2] = {{-128, 0}, {127, -128}, {0, 127}, {-5, 3}};
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
        cspec s;
        memset(&s, 0, sizeof s);
        s.op = TOSAC_OP_DEPTHWISE_CONV2D, s.in_t = s.w_t = TOSAC_DTYPE_INT8, s.out_t = s.acc_t = TOSAC_DTYPE_INT32;
        s.N = 1 + (int64_t)(i % 2), s.ID = s.KD = 1, s.IC = sh[i][0], s.M = sh[i][1], s.KH = sh[i][2], s.KW = sh[i][3];
        s.stride[0] = sh[i][4], s.stride[1] = sh[i][5], s.dil[0] = sh[i][6], s.dil[1] = sh[i][7];
        s.pad[0] = s.pad[2] = sh[i][8], s.IW = sh[i][9], s.IH = sh[i][10];
        s.pad[1] = fit_pad(s.IH - 1 + s.pad[0] - (s.KH - 1) * s.dil[0], s.stride[0], (int64_t)(i % 2));
        s.pad[3] = fit_pad(s.IW - 1 + s.pad[2] - (s.KW - 1) * s.dil[1], s.stride[1], (int64_t)(i % 3 == 0));
        s.izp = zps[i % 4][0], s.wzp = zps[i % 4][1];
        cspec_derive(&s);
        s.bc = i % 3 == 1 ? 1 : s.OCT;
        for (uint32_t level = TOSAC_KISA_PORTABLE; level <= TOSAC_KISA_AVX2; level++)
            for (uint32_t w = 1; w <= 3; w++) {
                tosac_kernel_limit_isa(level);
                kr_workers = w, kr_const_mask = ~1u;
                CHECK_CASE(conv_case(&s, 0, 0, 0), "depthwise i8 rows, shape %zu, level %u, %u workers", i, level, w);
            }
    }
    for (uint32_t level = TOSAC_KISA_PORTABLE; level <= TOSAC_KISA_AVX2; level++) {
        tosac_kernel_limit_isa(level);
        kr_workers = 1 + level, kr_const_mask = ~1u;
        test_conv_i48_overflow();
    }
    tosac_kernel_limit_isa(TOSAC_KISA_AVX512);
    kr_workers = 1, kr_const_mask = 0;
}

/* ERROR_IF: non-zero zero points outside i8. */
static void test_conv_zp_errors(void)
{
    cspec s;
    memset(&s, 0, sizeof s);
    s.op = TOSAC_OP_CONV2D, s.in_t = TOSAC_DTYPE_INT16, s.w_t = TOSAC_DTYPE_INT8, s.out_t = s.acc_t = TOSAC_DTYPE_INT48;
    s.N = 1, s.ID = 1, s.IH = 1, s.IW = 1, s.IC = 1, s.OC = 1, s.KD = 1, s.KH = 1, s.KW = 1, s.M = 1;
    s.stride[0] = s.stride[1] = 1, s.dil[0] = s.dil[1] = 1, s.bc = 1, s.izp = 1;
    cspec_derive(&s);
    cbufs b;
    conv_alloc(&s, &b);
    EXPECT_EQ_I(conv_run(&s, &b), TOSAC_ERR_TOSA_ERROR);
    conv_free(&b);
    s.in_t = TOSAC_DTYPE_INT8, s.w_t = TOSAC_DTYPE_INT4, s.out_t = s.acc_t = TOSAC_DTYPE_INT32, s.izp = 5, s.wzp = 1;
    conv_alloc(&s, &b);
    EXPECT_EQ_I(conv_run(&s, &b), TOSAC_ERR_TOSA_ERROR);
    conv_free(&b);
    s.in_t = s.w_t = s.out_t = s.acc_t = TOSAC_DTYPE_FP32, s.izp = s.wzp = 0;
    conv_alloc(&s, &b);
    setf(&b.izp, 0, 1.0);
    EXPECT_EQ_I(conv_run(&s, &b), TOSAC_ERR_TOSA_ERROR);
    conv_free(&b);
}

/* Runs the 1 x 3 case of test_conv_fp_special and checks every output: out[x][oc] for x = 0: oc 0 =
   0.5 + 1 + 1 (its NaN tap is padding), oc 1 = inf; x = 1: NaN, inf; x = 2: NaN, 2.5 (the inf tap
   is padding); the other channels 2.5, 3.5, 2.5. Without the NaN weight (nan_w false, a 1 in its
   place) oc 0 is 2.5, 3.5, 2.5 like the others. */
static void expect_fp_special(const cspec *s, cbufs *b, int64_t oc_n, bool nan_w)
{
    EXPECT_EQ_I(conv_run(s, b), TOSAC_OK);
    EXPECT(getf(&b->out, 0) == 2.5);
    EXPECT(isinf(getf(&b->out, 1)));
    EXPECT(nan_w ? isnan(getf(&b->out, oc_n)) : getf(&b->out, oc_n) == 3.5);
    EXPECT(isinf(getf(&b->out, oc_n + 1)));
    EXPECT(nan_w ? isnan(getf(&b->out, 2 * oc_n)) : getf(&b->out, 2 * oc_n) == 2.5);
    EXPECT(getf(&b->out, 2 * oc_n + 1) == 2.5);
    for (int64_t oc = 2; oc < oc_n; oc++)
        EXPECT(getf(&b->out, oc) == 2.5 && getf(&b->out, oc_n + oc) == 3.5 && getf(&b->out, 2 * oc_n + oc) == 2.5);
    conv_free(b);
}

/*
 * FP special values: a NaN or inf weight whose taps only ever meet padding must not reach the
 * output (the reference model skips padding taps), also when an inf is the only non-finite
 * weight; an inf input gives inf.
 */
static void test_conv_fp_special(void)
{
    static const tosac_dtype rows[][2] = {{TOSAC_DTYPE_FP32, TOSAC_DTYPE_FP32},
                                          {TOSAC_DTYPE_FP16, TOSAC_DTYPE_FP16},
                                          {TOSAC_DTYPE_BF16, TOSAC_DTYPE_FP32}};
    /* 40 output channels: fp32 weights on the AVX-512 panels (channels 2.. have weights 1) */
    for (int r = 0; r < 3; r++)
        for (int f64 = 0; f64 < 2; f64++)
        for (int nan_w = 0; nan_w < 2; nan_w++)
        for (int64_t oc_n = 2; oc_n <= 40; oc_n += 38) {
            cspec s;
            memset(&s, 0, sizeof s);
            s.op = TOSAC_OP_CONV2D, s.in_t = s.w_t = s.out_t = rows[r][0], s.acc_t = rows[r][1], s.f64 = f64;
            s.N = 1, s.ID = 1, s.IH = 1, s.IW = 3, s.IC = 1, s.OC = oc_n, s.KD = 1, s.KH = 1, s.KW = 3, s.M = 1;
            s.pad[2] = 1, s.pad[3] = 1; /* output x = 0: tap kx = 0 is padding */
            s.stride[0] = s.stride[1] = 1, s.dil[0] = s.dil[1] = 1, s.bc = 1;
            cspec_derive(&s);
            cbufs b;
            conv_alloc(&s, &b);
            for (int i = 0; i < 3; i++) setf(&b.in, i, 1.0);
            /* oc 0: w = [NaN, 1, 1]; oc 1: w = [1, 1, inf] */
            setf(&b.w, 0, nan_w ? NAN : 1.0), setf(&b.w, 1, 1.0), setf(&b.w, 2, 1.0);
            setf(&b.w, 3, 1.0), setf(&b.w, 4, 1.0), setf(&b.w, 5, INFINITY);
            for (int64_t i = 6; i < 3 * oc_n; i++) setf(&b.w, i, 1.0);
            setf(&b.bias, 0, 0.5);
            expect_fp_special(&s, &b, oc_n, nan_w);
            /* the same as a depthwise convolution (weights [1][3][C][1]): the row kernels add
               padding taps only when every weight is finite */
            s.op = TOSAC_OP_DEPTHWISE_CONV2D, s.IC = oc_n, s.bc = 1;
            cspec_derive(&s);
            conv_alloc(&s, &b);
            for (int64_t i = 0; i < 3 * oc_n; i++) setf(&b.in, i, 1.0), setf(&b.w, i, 1.0);
            setf(&b.w, 0, nan_w ? NAN : 1.0), setf(&b.w, 2 * oc_n + 1, INFINITY);
            setf(&b.bias, 0, 0.5);
            expect_fp_special(&s, &b, oc_n, nan_w);
        }
}

/* ------------------------------------------------------------------------------------------ */
/* MATMUL                                                                                          */

static bool matmul_case(tosac_dtype in_t, tosac_dtype out_t, bool f64, int64_t N, int64_t H, int64_t C, int64_t W,
                        int64_t azp, int64_t bzp)
{
    tt a, b, za, zb, o;
    int64_t ash[3] = {N, H, C}, bsh[3] = {N, C, W}, osh[3] = {N, H, W}, one[1] = {1};
    tt_make(&a, in_t, f64, 3, ash), tt_make(&b, in_t, f64, 3, bsh), tt_make(&o, out_t, f64, 3, osh);
    tt_make(&za, in_t, f64, 1, one), tt_make(&zb, in_t, f64, 1, one);
    bool introw = !is_fp(&a);
    if (introw) {
        if (in_t == TOSAC_DTYPE_INT16)
            fill_int(&a, -32768, 32767), fill_int(&b, -32768, 32767);
        else
            fill_int(&a, -128, 127), fill_int(&b, -128, 127);
        seti(&za, 0, azp), seti(&zb, 0, bzp);
    } else {
        double amp = in_t == TOSAC_DTYPE_FP8E4M3 ? 8.0 : 2.0;
        fill_fp(&a, amp), fill_fp(&b, amp);
    }
    tt *ins[4] = {&a, &b, &za, &zb}, *outs[1] = {&o};
    tosac_attr_val at[TOSAC_ATTR_MAX_FIELDS];
    memset(at, 0, sizeof at);
    tosac_status st = run_op(TOSAC_OP_MATMUL, ins, 4, outs, 1, at);
    bool ok = st == TOSAC_OK;
    int bad = 0;
    bool f16 = out_t == TOSAC_DTYPE_FP16 && !f64;
    fpfmt of = fmt_of(out_t, f64);
    for (int64_t n = 0; ok && n < N; n++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t w = 0; w < W; w++) {
                int64_t oi = (n * H + h) * W + w;
                if (introw) {
                    int64_t s = 0;
                    for (int64_t c = 0; c < C; c++)
                        s += (geti(&a, (n * H + h) * C + c) - azp) * (geti(&b, (n * C + c) * W + w) - bzp);
                    if (s != geti(&o, oi) && bad++ < 3)
                        fprintf(stderr, "  out[%lld] = %lld want %lld\n", (long long)oi, (long long)geti(&o, oi), (long long)s);
                    continue;
                }
                double s = 0, sa = 0;
                float e = 0.0f;
                for (int64_t c = 0; c < C; c++) {
                    double x = getf(&a, (n * H + h) * C + c), y = getf(&b, (n * C + c) * W + w);
                    s += x * y, sa += fabs(x * y);
                    if (f16) {
                        const float p = tosac_fp16_to_fp32(tosac_fp32_to_fp16((float)x * (float)y));
                        e = tosac_fp16_to_fp32(tosac_fp32_to_fp16(e + p));
                    } else {
                        e = fmaf((float)x, (float)y, e);
                    }
                }
                double got = getf(&o, oi);
                double tol = f64 ? 1e-12 * sa + 1e-300
                                 : (double)(C + 2) * 2.0 * (f16 ? ldexp(1.0, -11) : ldexp(1.0, -24)) * sa +
                                       2.0 * half_ulp(s, of.frac, of.min_exp);
                if (!(fabs(got - s) <= tol) && bad++ < 3)
                    fprintf(stderr, "  out[%lld] = %.9g want %.9g\n", (long long)oi, got, s);
                if (!f64 && got != (double)e && bad++ < 3)
                    fprintf(stderr, "  out[%lld] = %.9g, reference order %.9g\n", (long long)oi, got, (double)e);
            }
    if (!ok || bad)
        fprintf(stderr, "  matmul in %d out %d f64 %d N%lld H%lld C%lld W%lld zp %lld %lld: status %d\n", in_t, out_t, f64,
                (long long)N, (long long)H, (long long)C, (long long)W, (long long)azp, (long long)bzp, (int)st);
    tt_free(&a), tt_free(&b), tt_free(&za), tt_free(&zb), tt_free(&o);
    return ok && bad == 0;
}

static void test_matmul(void)
{
    static const struct {
        tosac_dtype in, out;
        bool f64;
    } rows[] = {{TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT32, false},     {TOSAC_DTYPE_INT16, TOSAC_DTYPE_INT48, false},
                {TOSAC_DTYPE_FP8E4M3, TOSAC_DTYPE_FP16, false},   {TOSAC_DTYPE_FP8E5M2, TOSAC_DTYPE_FP16, false},
                {TOSAC_DTYPE_FP16, TOSAC_DTYPE_FP16, false},      {TOSAC_DTYPE_FP16, TOSAC_DTYPE_FP32, false},
                {TOSAC_DTYPE_FP32, TOSAC_DTYPE_FP32, false},      {TOSAC_DTYPE_BF16, TOSAC_DTYPE_FP32, false},
                {TOSAC_DTYPE_FP32, TOSAC_DTYPE_FP32, true}};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        int fails = 0;
        for (int k = 0; k < 25; k++) {
            int64_t N = rnd_in(1, 3), H = rnd_in(1, 13), C = rnd_in(1, 40), W = rnd_in(1, 21);
            int64_t azp = 0, bzp = 0;
            if (rows[r].in == TOSAC_DTYPE_INT8) azp = rnd_in(-128, 127), bzp = rnd_in(0, 1) ? rnd_in(-128, 127) : 0;
            if (!matmul_case(rows[r].in, rows[r].out, rows[r].f64, N, H, C, W, azp, bzp)) fails++;
        }
        CHECK_CASE(fails == 0, "matmul row %zu: %d failures", r, fails);
    }
    CHECK_CASE(matmul_case(TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT32, false, 1, 3, 34000, 5, -128, 127), "matmul i8 C=34000");
    CHECK_CASE(matmul_case(TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT32, false, 2, 37, 64, 45, 3, -4), "matmul i8 37x64x45");
    CHECK_CASE(matmul_case(TOSAC_DTYPE_FP32, TOSAC_DTYPE_FP32, false, 2, 37, 64, 45, 0, 0), "matmul fp32 37x64x45");
    /* large enough to be split over column blocks when there are workers */
    CHECK_CASE(matmul_case(TOSAC_DTYPE_FP32, TOSAC_DTYPE_FP32, false, 2, 1, 300, 1000, 0, 0), "matmul fp32 1x300x1000");
    CHECK_CASE(matmul_case(TOSAC_DTYPE_FP32, TOSAC_DTYPE_FP32, false, 1, 5, 600, 90, 0, 0), "matmul fp32 5x600x90");
    /* the GEMM on B as it is in several K blocks (AVX2: of 256), blocks of 64 columns, 6 columns
       left to the portable tile, rows in tiles of 5 and 6 */
    CHECK_CASE(matmul_case(TOSAC_DTYPE_FP32, TOSAC_DTYPE_FP32, false, 2, 41, 600, 150, 0, 0), "matmul fp32 41x600x150");
    /* matrix-vector shapes (fully connected layers; with a constant B the prepared column blocks):
       a partial last block, several rows, batches */
    CHECK_CASE(matmul_case(TOSAC_DTYPE_FP32, TOSAC_DTYPE_FP32, false, 1, 1, 576, 1000, 0, 0), "matmul fp32 1x576x1000");
    CHECK_CASE(matmul_case(TOSAC_DTYPE_FP32, TOSAC_DTYPE_FP32, false, 2, 3, 37, 129, 0, 0), "matmul fp32 3x37x129");
    CHECK_CASE(matmul_case(TOSAC_DTYPE_FP32, TOSAC_DTYPE_FP32, false, 3, 4, 300, 200, 0, 0), "matmul fp32 4x300x200");
    CHECK_CASE(matmul_case(TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT32, false, 1, 1, 576, 1000, 5, -3), "matmul i8 1x576x1000");
    CHECK_CASE(matmul_case(TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT32, false, 2, 7, 300, 131, -7, 0), "matmul i8 7x300x131");
}

static void test_matmul_errors(void)
{
    /* i8 with C = 34000 terms of 255 * 255: beyond i32 -> UNPREDICTABLE */
    {
        tt a, b, za, zb, o;
        int64_t ash[3] = {1, 1, 34000}, bsh[3] = {1, 34000, 1}, osh[3] = {1, 1, 1}, one[1] = {1};
        tt_make(&a, TOSAC_DTYPE_INT8, false, 3, ash), tt_make(&b, TOSAC_DTYPE_INT8, false, 3, bsh);
        tt_make(&za, TOSAC_DTYPE_INT8, false, 1, one), tt_make(&zb, TOSAC_DTYPE_INT8, false, 1, one);
        tt_make(&o, TOSAC_DTYPE_INT32, false, 3, osh);
        for (int64_t i = 0; i < 34000; i++) seti(&a, i, 127), seti(&b, i, 127);
        seti(&za, 0, -128), seti(&zb, 0, -128);
        tosac_attr_val at[TOSAC_ATTR_MAX_FIELDS];
        memset(at, 0, sizeof at);
        tt *ins[4] = {&a, &b, &za, &zb}, *outs[1] = {&o};
        EXPECT_EQ_I(run_op(TOSAC_OP_MATMUL, ins, 4, outs, 1, at), TOSAC_ERR_UNPREDICTABLE);
        for (int64_t i = 0; i < 34000; i += 2) seti(&a, i, -128);
        EXPECT_EQ_I(run_op(TOSAC_OP_MATMUL, ins, 4, outs, 1, at), TOSAC_OK);
        EXPECT_EQ_I(geti(&o, 0), 17000 * 65025);
        tt_free(&a), tt_free(&b), tt_free(&za), tt_free(&zb), tt_free(&o);
    }
    tt a, b, za, zb, o;
    int64_t sh[3] = {1, 1, 2}, bsh[3] = {1, 2, 1}, osh[3] = {1, 1, 1}, one[1] = {1};
    tt_make(&a, TOSAC_DTYPE_INT16, false, 3, sh), tt_make(&b, TOSAC_DTYPE_INT16, false, 3, bsh);
    tt_make(&za, TOSAC_DTYPE_INT16, false, 1, one), tt_make(&zb, TOSAC_DTYPE_INT16, false, 1, one);
    tt_make(&o, TOSAC_DTYPE_INT48, false, 3, osh);
    tosac_attr_val at[TOSAC_ATTR_MAX_FIELDS];
    memset(at, 0, sizeof at);
    tt *ins[4] = {&a, &b, &za, &zb}, *outs[1] = {&o};
    seti(&a, 0, -32768), seti(&a, 1, -32768), seti(&b, 0, -32768), seti(&b, 1, -32768);
    EXPECT_EQ_I(run_op(TOSAC_OP_MATMUL, ins, 4, outs, 1, at), TOSAC_OK);
    EXPECT_EQ_I(geti(&o, 0), (int64_t)1 << 31);
    seti(&za, 0, 1);
    EXPECT_EQ_I(run_op(TOSAC_OP_MATMUL, ins, 4, outs, 1, at), TOSAC_ERR_TOSA_ERROR);
    tt_free(&a), tt_free(&b), tt_free(&za), tt_free(&zb), tt_free(&o);
}

/* ------------------------------------------------------------------------------------------ */
/* Pooling                                                                                         */

typedef struct {
    int64_t N, IH, IW, C, ky, kx, sy, sx, pad[4], OH, OW;
} pspec;

/* Channels of the random pools: up to 7, or up to 150 (vectors of every level's width, with
   partial last vectors) */
static int64_t pool_max_c = 7;

static bool pspec_random(pspec *p, int64_t maxdim)
{
    for (int tries = 0; tries < 100; tries++) {
        p->N = rnd_in(1, 2), p->IH = rnd_in(1, maxdim), p->IW = rnd_in(1, maxdim), p->C = rnd_in(1, pool_max_c);
        p->ky = rnd_in(1, 4), p->kx = rnd_in(1, 4), p->sy = rnd_in(1, 3), p->sx = rnd_in(1, 3);
        p->pad[0] = rnd_in(0, p->ky - 1), p->pad[2] = rnd_in(0, p->kx - 1);
        int64_t by = p->IH + p->pad[0] - p->ky, bx = p->IW + p->pad[2] - p->kx;
        p->pad[1] = fit_pad(by, p->sy, 0), p->pad[3] = fit_pad(bx, p->sx, 0);
        if (p->pad[1] >= p->ky || p->pad[3] >= p->kx) continue;
        p->OH = (by + p->pad[1]) / p->sy + 1, p->OW = (bx + p->pad[3]) / p->sx + 1;
        return true;
    }
    return false;
}

static tosac_status pool_run(uint32_t op, const pspec *p, tt *in, tt *izp, tt *ozp, tt *out, int64_t acc_t,
                             int64_t nan_mode)
{
    tosac_attr_val a[TOSAC_ATTR_MAX_FIELDS];
    memset(a, 0, sizeof a);
    int32_t k[2] = {(int32_t)p->ky, (int32_t)p->kx}, st[2] = {(int32_t)p->sy, (int32_t)p->sx};
    int32_t pad[4] = {(int32_t)p->pad[0], (int32_t)p->pad[1], (int32_t)p->pad[2], (int32_t)p->pad[3]};
    if (op == TOSAC_OP_AVG_POOL2D) {
        attr_v(a, TOSAC_ATTR_AVG_POOL2D_kernel, k, 2);
        attr_v(a, TOSAC_ATTR_AVG_POOL2D_stride, st, 2);
        attr_v(a, TOSAC_ATTR_AVG_POOL2D_pad, pad, 4);
        attr_i(a, TOSAC_ATTR_AVG_POOL2D_acc_type, acc_t);
        tt *ins[3] = {in, izp, ozp}, *outs[1] = {out};
        return run_op(op, ins, 3, outs, 1, a);
    }
    attr_v(a, TOSAC_ATTR_MAX_POOL2D_kernel, k, 2);
    attr_v(a, TOSAC_ATTR_MAX_POOL2D_stride, st, 2);
    attr_v(a, TOSAC_ATTR_MAX_POOL2D_pad, pad, 4);
    attr_i(a, TOSAC_ATTR_MAX_POOL2D_nan_mode, nan_mode);
    tt *ins[1] = {in}, *outs[1] = {out};
    return run_op(op, ins, 1, outs, 1, a);
}

/* Spec reciprocal_scale / apply_scale_32 transcribed independently (int64, floor shifts). */
static int64_t ref_avg_int(int64_t sum, int64_t count)
{
    int64_t k = 0;
    while (((int64_t)1 << k) < count) k++;
    int64_t mult = ((((int64_t)1 << 30) + 1) << k) / count, shift = 30 + k;
    int64_t v = sum * mult + ((int64_t)1 << (shift - 1));
    /* floor division by 2^shift */
    int64_t q = v >= 0 ? v >> shift : -((-v + ((int64_t)1 << shift) - 1) >> shift);
    return q;
}

static void test_avg_pool_spot(void)
{
    /* TOSA.md B.4: 2x2 kernel, stride 1, pad (0,1,0,1), input [[1,2],[4,8]] -> [[4,5],[6,8]] */
    pspec p = {1, 2, 2, 1, 2, 2, 1, 1, {0, 1, 0, 1}, 2, 2};
    tt in, z0, z1, out;
    int64_t ish[4] = {1, 2, 2, 1}, one[1] = {1};
    tt_make(&in, TOSAC_DTYPE_INT8, false, 4, ish), tt_make(&out, TOSAC_DTYPE_INT8, false, 4, ish);
    tt_make(&z0, TOSAC_DTYPE_INT8, false, 1, one), tt_make(&z1, TOSAC_DTYPE_INT8, false, 1, one);
    int64_t v[4] = {1, 2, 4, 8}, want[4] = {4, 5, 6, 8};
    for (int i = 0; i < 4; i++) seti(&in, i, v[i]);
    EXPECT_EQ_I(pool_run(TOSAC_OP_AVG_POOL2D, &p, &in, &z0, &z1, &out, TOSAC_DTYPE_INT32, 0), TOSAC_OK);
    for (int i = 0; i < 4; i++) EXPECT_EQ_I(geti(&out, i), want[i]);
    tt_free(&in), tt_free(&out), tt_free(&z0), tt_free(&z1);
}

/* Windows of 2^16 taps and more (int64 sums); a sum beyond i32 is UNPREDICTABLE (REQUIRE). */
static void test_avg_pool_large_window(void)
{
    pspec p = {1, 256, 257, 1, 256, 256, 1, 1, {0, 0, 0, 0}, 1, 2};
    tt in, z0, z1, out;
    int64_t ish[4] = {1, 256, 257, 1}, osh[4] = {1, 1, 2, 1}, one[1] = {1};
    tt_make(&in, TOSAC_DTYPE_INT16, false, 4, ish), tt_make(&out, TOSAC_DTYPE_INT16, false, 4, osh);
    tt_make(&z0, TOSAC_DTYPE_INT16, false, 1, one), tt_make(&z1, TOSAC_DTYPE_INT16, false, 1, one);
    fill_int(&in, -32768, 32767);
    EXPECT_EQ_I(pool_run(TOSAC_OP_AVG_POOL2D, &p, &in, &z0, &z1, &out, TOSAC_DTYPE_INT32, 0), TOSAC_OK);
    for (int64_t ox = 0; ox < 2; ox++) {
        int64_t sum = 0;
        for (int64_t y = 0; y < 256; y++)
            for (int64_t x = ox; x < ox + 256; x++) sum += geti(&in, y * 257 + x);
        EXPECT_EQ_I(geti(&out, ox), ref_avg_int(sum, 65536));
    }
    for (int64_t i = 0; i < in.t.nelem; i++) seti(&in, i, 32767);
    EXPECT_EQ_I(pool_run(TOSAC_OP_AVG_POOL2D, &p, &in, &z0, &z1, &out, TOSAC_DTYPE_INT32, 0), TOSAC_OK);
    EXPECT_EQ_I(geti(&out, 0), 32767);
    /* 256 x 257 taps of 32767: 2^31 + 32767 * 256 - 256 > INT32_MAX */
    p.kx = 257, p.OW = 1;
    int64_t osh1[4] = {1, 1, 1, 1};
    tt_free(&out);
    tt_make(&out, TOSAC_DTYPE_INT16, false, 4, osh1);
    EXPECT_EQ_I(pool_run(TOSAC_OP_AVG_POOL2D, &p, &in, &z0, &z1, &out, TOSAC_DTYPE_INT32, 0), TOSAC_ERR_UNPREDICTABLE);
    tt_free(&in), tt_free(&out), tt_free(&z0), tt_free(&z1);
}

static void test_avg_pool_random(void)
{
    static const struct {
        tosac_dtype t, acc;
        bool f64;
    } rows[] = {{TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT32, false},    {TOSAC_DTYPE_INT16, TOSAC_DTYPE_INT32, false},
                {TOSAC_DTYPE_FP8E4M3, TOSAC_DTYPE_FP16, false},  {TOSAC_DTYPE_FP8E5M2, TOSAC_DTYPE_FP16, false},
                {TOSAC_DTYPE_FP16, TOSAC_DTYPE_FP16, false},     {TOSAC_DTYPE_FP16, TOSAC_DTYPE_FP32, false},
                {TOSAC_DTYPE_FP32, TOSAC_DTYPE_FP32, false},     {TOSAC_DTYPE_BF16, TOSAC_DTYPE_FP32, false},
                {TOSAC_DTYPE_FP32, TOSAC_DTYPE_FP32, true}};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        int fails = 0;
        for (int k = 0; k < 40; k++) {
            pspec p;
            if (!pspec_random(&p, 9)) continue;
            tt in, z0, z1, out;
            int64_t ish[4] = {p.N, p.IH, p.IW, p.C}, osh[4] = {p.N, p.OH, p.OW, p.C}, one[1] = {1};
            tosac_dtype t = rows[r].t;
            bool f64 = rows[r].f64;
            tt_make(&in, t, f64, 4, ish), tt_make(&out, t, f64, 4, osh);
            tt_make(&z0, t, f64, 1, one), tt_make(&z1, t, f64, 1, one);
            int64_t izp = 0, ozp = 0, lo = -128, hi = 127;
            bool introw = !is_fp(&in);
            if (t == TOSAC_DTYPE_INT16) lo = -32768, hi = 32767;
            if (t == TOSAC_DTYPE_INT8) izp = rnd_in(-128, 127), ozp = rnd_in(-128, 127);
            if (introw) {
                fill_int(&in, lo, hi);
                seti(&z0, 0, izp), seti(&z1, 0, ozp);
            } else {
                fill_fp(&in, t == TOSAC_DTYPE_FP8E4M3 ? 100.0 : 4.0);
            }
            bool f16 = rows[r].acc == TOSAC_DTYPE_FP16 && !f64;
            tosac_status st = pool_run(TOSAC_OP_AVG_POOL2D, &p, &in, &z0, &z1, &out, rows[r].acc, 0);
            int bad = st != TOSAC_OK;
            fpfmt of = fmt_of(t, f64);
            for (int64_t n = 0; !bad && n < p.N; n++)
                for (int64_t oy = 0; oy < p.OH; oy++)
                    for (int64_t ox = 0; ox < p.OW; ox++)
                        for (int64_t c = 0; c < p.C; c++) {
                            int64_t s = 0, cnt = 0;
                            double sd = 0, sa = 0;
                            float e = 0.0f;
                            for (int64_t ky = 0; ky < p.ky; ky++)
                                for (int64_t kx = 0; kx < p.kx; kx++) {
                                    int64_t y = oy * p.sy + ky - p.pad[0], x = ox * p.sx + kx - p.pad[2];
                                    if (y < 0 || y >= p.IH || x < 0 || x >= p.IW) continue;
                                    int64_t ii = ((n * p.IH + y) * p.IW + x) * p.C + c;
                                    cnt++;
                                    if (introw) {
                                        s += geti(&in, ii) - izp;
                                    } else {
                                        double v = getf(&in, ii);
                                        sd += v, sa += fabs(v);
                                        e = e + (float)v;
                                        if (f16) e = tosac_fp16_to_fp32(tosac_fp32_to_fp16(e));
                                    }
                                }
                            int64_t oi = ((n * p.OH + oy) * p.OW + ox) * p.C + c;
                            if (introw) {
                                int64_t want = ref_avg_int(s, cnt) + ozp;
                                want = want < lo ? lo : want > hi ? hi : want;
                                if (want != geti(&out, oi)) bad++;
                                continue;
                            }
                            double want = sd / (double)cnt, got = getf(&out, oi);
                            double tol = f64 ? 1e-12 * sa / (double)cnt + 1e-300
                                             : ((double)cnt + 2) * 2.0 * (f16 ? ldexp(1.0, -11) : ldexp(1.0, -24)) * sa /
                                                       (double)cnt +
                                                   2.0 * half_ulp(want, of.frac, of.min_exp);
                            if (!(fabs(got - want) <= tol)) bad++;
                            if (!f64) {
                                /* reference model: sum / count in acc_t, then rounded to the output type */
                                float q = e / (f16 ? tosac_fp16_to_fp32(tosac_fp32_to_fp16((float)cnt)) : (float)cnt);
                                if (f16) q = tosac_fp16_to_fp32(tosac_fp32_to_fp16(q));
                                tt one1;
                                int64_t sh1[1] = {1};
                                tt_make(&one1, t, false, 1, sh1);
                                setf(&one1, 0, q);
                                if (memcmp(one1.buf, out.buf + (size_t)oi * out.es, out.es) != 0) bad++;
                                tt_free(&one1);
                            }
                        }
            if (bad) fails++;
            tt_free(&in), tt_free(&out), tt_free(&z0), tt_free(&z1);
        }
        CHECK_CASE(fails == 0, "avg_pool row %zu: %d failures", r, fails);
    }
}

static bool isnan_d(double v) { return v != v; }

/* max with the spec's nan_mode rules (PROPAGATE 1, IGNORE 2) */
static double ref_max(double a, double b, int64_t mode)
{
    if (isnan_d(a) || isnan_d(b)) {
        if (mode != TOSAC_NAN_IGNORE) return NAN;
        return isnan_d(a) ? b : a;
    }
    return a >= b ? a : b;
}

static void test_max_pool_random(void);
/* The pools again with many channels. */
static void test_pool_wide(void)
{
    pool_max_c = 150;
    test_max_pool_random();
    test_avg_pool_random();
    pool_max_c = 7;
}

static void test_max_pool_random(void)
{
    static const struct {
        tosac_dtype t;
        bool f64;
    } rows[] = {{TOSAC_DTYPE_INT8, false},  {TOSAC_DTYPE_INT16, false}, {TOSAC_DTYPE_FP8E4M3, false},
                {TOSAC_DTYPE_FP8E5M2, false}, {TOSAC_DTYPE_FP16, false}, {TOSAC_DTYPE_FP32, false},
                {TOSAC_DTYPE_BF16, false},  {TOSAC_DTYPE_FP32, true}};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        int fails = 0;
        for (int k = 0; k < 40; k++) {
            pspec p;
            if (!pspec_random(&p, 9)) continue;
            tt in, out;
            int64_t ish[4] = {p.N, p.IH, p.IW, p.C}, osh[4] = {p.N, p.OH, p.OW, p.C};
            tosac_dtype t = rows[r].t;
            tt_make(&in, t, rows[r].f64, 4, ish), tt_make(&out, t, rows[r].f64, 4, osh);
            bool introw = !is_fp(&in);
            int64_t mode = (k & 1) ? TOSAC_NAN_IGNORE : TOSAC_NAN_PROPAGATE;
            if (introw)
                fill_int(&in, t == TOSAC_DTYPE_INT16 ? -32768 : -128, t == TOSAC_DTYPE_INT16 ? 32767 : 127);
            else {
                fill_fp(&in, 10.0);
                /* some NaNs, infinities and signed zeros */
                for (int64_t i = 0; i < in.t.nelem; i++) {
                    int64_t z = rnd_in(0, 15);
                    if (z == 0) setf(&in, i, NAN);
                    if (z == 1) setf(&in, i, -0.0);
                    if (z == 2) setf(&in, i, 0.0);
                    if (z == 3 && t != TOSAC_DTYPE_FP8E4M3) setf(&in, i, -INFINITY);
                }
            }
            tosac_status st = pool_run(TOSAC_OP_MAX_POOL2D, &p, &in, NULL, NULL, &out, 0, mode);
            int bad = st != TOSAC_OK;
            for (int64_t n = 0; !bad && n < p.N; n++)
                for (int64_t oy = 0; oy < p.OH; oy++)
                    for (int64_t ox = 0; ox < p.OW; ox++)
                        for (int64_t c = 0; c < p.C; c++) {
                            int64_t mi = t == TOSAC_DTYPE_INT16 ? -32768 : -128;
                            double m = mode == TOSAC_NAN_IGNORE ? NAN : -INFINITY;
                            for (int64_t ky = 0; ky < p.ky; ky++)
                                for (int64_t kx = 0; kx < p.kx; kx++) {
                                    int64_t y = oy * p.sy + ky - p.pad[0], x = ox * p.sx + kx - p.pad[2];
                                    if (y < 0 || y >= p.IH || x < 0 || x >= p.IW) continue;
                                    int64_t ii = ((n * p.IH + y) * p.IW + x) * p.C + c;
                                    if (introw)
                                        mi = geti(&in, ii) > mi ? geti(&in, ii) : mi;
                                    else
                                        m = ref_max(m, getf(&in, ii), mode);
                                }
                            int64_t oi = ((n * p.OH + oy) * p.OW + ox) * p.C + c;
                            if (introw) {
                                if (mi != geti(&out, oi)) bad++;
                            } else {
                                double g = getf(&out, oi);
                                if (isnan_d(m) ? !isnan_d(g) : (g != m || signbit(g) != signbit(m))) bad++;
                            }
                        }
            if (bad) fails++;
            tt_free(&in), tt_free(&out);
        }
        CHECK_CASE(fails == 0, "max_pool row %zu: %d failures", r, fails);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* ARGMAX                                                                                          */

static tosac_status argmax_run(tt *in, tt *out, int64_t axis, int64_t mode)
{
    tosac_attr_val a[TOSAC_ATTR_MAX_FIELDS];
    memset(a, 0, sizeof a);
    attr_i(a, TOSAC_ATTR_ARGMAX_axis, axis);
    attr_i(a, TOSAC_ATTR_ARGMAX_nan_mode, mode);
    tt *ins[1] = {in}, *outs[1] = {out};
    return run_op(TOSAC_OP_ARGMAX, ins, 1, outs, 1, a);
}

static void test_argmax_random(void)
{
    static const struct {
        tosac_dtype t;
        bool f64;
    } rows[] = {{TOSAC_DTYPE_INT8, false},  {TOSAC_DTYPE_INT16, false}, {TOSAC_DTYPE_FP8E4M3, false},
                {TOSAC_DTYPE_FP8E5M2, false}, {TOSAC_DTYPE_FP16, false}, {TOSAC_DTYPE_FP32, false},
                {TOSAC_DTYPE_BF16, false},  {TOSAC_DTYPE_FP32, true}};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        int fails = 0;
        for (int k = 0; k < 60; k++) {
            int rank = (int)rnd_in(1, 5);
            int64_t sh[6], osh[6], axis = rnd_in(0, rank - 1);
            for (int d = 0; d < rank; d++) sh[d] = rnd_in(1, 5);
            for (int d = 0, j = 0; d < rank; d++)
                if (d != axis) osh[j++] = sh[d];
            tt in, out;
            tosac_dtype t = rows[r].t;
            tt_make(&in, t, rows[r].f64, rank, sh), tt_make(&out, TOSAC_DTYPE_INT32, false, rank - 1, osh);
            bool introw = !is_fp(&in);
            int64_t mode = (k & 1) ? TOSAC_NAN_IGNORE : TOSAC_NAN_PROPAGATE;
            /* a small value range: many ties */
            for (int64_t i = 0; i < in.t.nelem; i++) {
                int64_t v = rnd_in(-3, 3);
                if (introw)
                    seti(&in, i, k % 5 == 0 ? (t == TOSAC_DTYPE_INT8 ? -128 : -32768) : v);
                else {
                    int64_t z = rnd_in(0, 9);
                    setf(&in, i, z == 0 ? NAN : z == 1 ? -INFINITY : (double)v);
                    if (z == 1 && t == TOSAC_DTYPE_FP8E4M3) setf(&in, i, -448.0);
                }
            }
            int bad = argmax_run(&in, &out, axis, mode) != TOSAC_OK;
            int64_t outer = 1, len = sh[axis], inner = 1;
            for (int d = 0; d < axis; d++) outer *= sh[d];
            for (int d = (int)axis + 1; d < rank; d++) inner *= sh[d];
            for (int64_t o = 0; !bad && o < outer; o++)
                for (int64_t i = 0; i < inner; i++) {
                    /* first index of the maximum; PROPAGATE: first NaN; IGNORE: skip NaN, all NaN -> 0 */
                    int64_t best = 0;
                    bool have = false;
                    double bv = 0;
                    for (int64_t a = 0; a < len; a++) {
                        double v = introw ? (double)geti(&in, (o * len + a) * inner + i) : getf(&in, (o * len + a) * inner + i);
                        if (isnan_d(v)) {
                            if (mode == TOSAC_NAN_PROPAGATE) {
                                best = a;
                                break;
                            }
                            continue;
                        }
                        if (!have || v > bv) best = a, bv = v, have = true;
                    }
                    if (geti(&out, o * inner + i) != best) bad++;
                }
            if (bad) fails++;
            tt_free(&in), tt_free(&out);
        }
        CHECK_CASE(fails == 0, "argmax row %zu: %d failures", r, fails);
    }
    /* explicit ties and NaNs, fp32 rank 1 */
    {
        int64_t sh[1] = {6};
        tt in, out;
        tt_make(&in, TOSAC_DTYPE_FP32, false, 1, sh), tt_make(&out, TOSAC_DTYPE_INT32, false, 0, sh);
        double v[6] = {1, 3, NAN, 3, NAN, 2};
        for (int i = 0; i < 6; i++) setf(&in, i, v[i]);
        EXPECT_EQ_I(argmax_run(&in, &out, 0, TOSAC_NAN_PROPAGATE), TOSAC_OK);
        EXPECT_EQ_I(geti(&out, 0), 2);
        EXPECT_EQ_I(argmax_run(&in, &out, 0, TOSAC_NAN_IGNORE), TOSAC_OK);
        EXPECT_EQ_I(geti(&out, 0), 1);
        for (int i = 0; i < 6; i++) setf(&in, i, NAN);
        EXPECT_EQ_I(argmax_run(&in, &out, 0, TOSAC_NAN_IGNORE), TOSAC_OK);
        EXPECT_EQ_I(geti(&out, 0), 0);
        setf(&in, 0, -0.0), setf(&in, 1, 0.0), setf(&in, 2, -1.0);
        EXPECT_EQ_I(argmax_run(&in, &out, 0, TOSAC_NAN_IGNORE), TOSAC_OK);
        EXPECT_EQ_I(geti(&out, 0), 0); /* -0 and +0 tie: first */
        tt_free(&in), tt_free(&out);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* FFT2D / RFFT2D                                                                                  */

static bool fft_case(bool real, bool inverse, bool f64, int64_t N, int64_t H, int64_t W)
{
    int64_t sh[3] = {N, H, W}, OW = real ? W / 2 + 1 : W, osh[3] = {N, H, OW};
    tt ir, ii, orr, oi;
    tt_make(&ir, TOSAC_DTYPE_FP32, f64, 3, sh), tt_make(&ii, TOSAC_DTYPE_FP32, f64, 3, sh);
    tt_make(&orr, TOSAC_DTYPE_FP32, f64, 3, osh), tt_make(&oi, TOSAC_DTYPE_FP32, f64, 3, osh);
    fill_fp(&ir, 4.0), fill_fp(&ii, 4.0);
    tosac_attr_val a[TOSAC_ATTR_MAX_FIELDS];
    memset(a, 0, sizeof a);
    tosac_status st;
    if (real) {
        tt *ins[1] = {&ir}, *outs[2] = {&orr, &oi};
        st = run_op(TOSAC_OP_RFFT2D, ins, 1, outs, 2, a);
    } else {
        attr_i(a, TOSAC_ATTR_FFT2D_inverse, inverse);
        tt *ins[2] = {&ir, &ii}, *outs[2] = {&orr, &oi};
        st = run_op(TOSAC_OP_FFT2D, ins, 2, outs, 2, a);
    }
    int bad = st != TOSAC_OK;
    double sgn = inverse ? -1.0 : 1.0, pi2 = 6.283185307179586;
    for (int64_t n = 0; !bad && n < N; n++)
        for (int64_t oy = 0; oy < H; oy++)
            for (int64_t ox = 0; ox < OW; ox++) {
                double sr = 0, si = 0, sa = 0;
                for (int64_t iy = 0; iy < H; iy++)
                    for (int64_t ix = 0; ix < W; ix++) {
                        double ang = sgn * pi2 * ((double)((iy * oy) % H) / (double)H + (double)((ix * ox) % W) / (double)W);
                        double vr = getf(&ir, (n * H + iy) * W + ix), vi = real ? 0.0 : getf(&ii, (n * H + iy) * W + ix);
                        sr += vr * cos(ang) + vi * sin(ang);
                        si += -vr * sin(ang) + vi * cos(ang);
                        sa += fabs(vr) + fabs(vi);
                    }
                int64_t o = (n * H + oy) * OW + ox;
                double tol = f64 ? 1e-11 * sa + 1e-300 : ldexp(1.0, -22) * sa;
                if (!(fabs(getf(&orr, o) - sr) <= tol) || !(fabs(getf(&oi, o) - si) <= tol)) {
                    if (bad++ < 3)
                        fprintf(stderr, "  fft out %lld: (%.9g, %.9g) want (%.9g, %.9g)\n", (long long)o, getf(&orr, o),
                                getf(&oi, o), sr, si);
                }
                /* RFFT: imaginary part exactly zero at (0,0), (0,W/2), (H/2,0), (H/2,W/2) */
                if (real && (oy == 0 || 2 * oy == H) && (ox == 0 || 2 * ox == W) && getf(&oi, o) != 0.0) bad++;
            }
    if (bad) fprintf(stderr, "  fft real %d inverse %d f64 %d N%lld H%lld W%lld\n", real, inverse, f64, (long long)N, (long long)H, (long long)W);
    tt_free(&ir), tt_free(&ii), tt_free(&orr), tt_free(&oi);
    return bad == 0;
}

static void test_fft(void)
{
    int fails = 0, cases = 0;
    for (int real = 0; real < 2; real++)
        for (int inv = 0; inv < 2; inv++)
            for (int f64 = 0; f64 < 2; f64++)
                for (int h = 0; h < 6; h++)
                    for (int w = real; w < 6; w++) {
                        if (real && inv) continue;
                        cases++;
                        if (!fft_case(real, inv, f64, 1 + (h + w) % 2, (int64_t)1 << h, (int64_t)1 << w)) fails++;
                    }
    CHECK_CASE(fails == 0, "fft: %d of %d cases", fails, cases);
    /* a round trip: inverse(forward(x)) = H*W*x */
    int64_t sh[3] = {1, 8, 16};
    tt ir, ii, fr, fi, br, bi;
    tt_make(&ir, TOSAC_DTYPE_FP32, false, 3, sh), tt_make(&ii, TOSAC_DTYPE_FP32, false, 3, sh);
    tt_make(&fr, TOSAC_DTYPE_FP32, false, 3, sh), tt_make(&fi, TOSAC_DTYPE_FP32, false, 3, sh);
    tt_make(&br, TOSAC_DTYPE_FP32, false, 3, sh), tt_make(&bi, TOSAC_DTYPE_FP32, false, 3, sh);
    fill_fp(&ir, 1.0), fill_fp(&ii, 1.0);
    tosac_attr_val a[TOSAC_ATTR_MAX_FIELDS];
    memset(a, 0, sizeof a);
    tt *i1[2] = {&ir, &ii}, *o1[2] = {&fr, &fi}, *o2[2] = {&br, &bi};
    EXPECT_EQ_I(run_op(TOSAC_OP_FFT2D, i1, 2, o1, 2, a), TOSAC_OK);
    attr_i(a, TOSAC_ATTR_FFT2D_inverse, 1);
    EXPECT_EQ_I(run_op(TOSAC_OP_FFT2D, o1, 2, o2, 2, a), TOSAC_OK);
    double maxerr = 0;
    for (int64_t i = 0; i < 128; i++) {
        double e1 = fabs(getf(&br, i) / 128.0 - getf(&ir, i)), e2 = fabs(getf(&bi, i) / 128.0 - getf(&ii, i));
        maxerr = e1 > maxerr ? e1 : maxerr;
        maxerr = e2 > maxerr ? e2 : maxerr;
    }
    EXPECT(maxerr < 1e-6);
    tt_free(&ir), tt_free(&ii), tt_free(&fr), tt_free(&fi), tt_free(&br), tt_free(&bi);
}

/* The inline fp16 rounding of the fp16-accumulation paths against the library conversions. */
static void test_round_fp16(void)
{
    int bad = 0;
    for (uint64_t u = 0; u <= 0xFFFFFFFFu; u += 65521) {
        /* every 65521st pattern, and each one's neighbours at the fp16 rounding boundaries */
        for (uint32_t d = 0; d < 3; d++) {
            uint32_t v = ((uint32_t)u & ~0x1FFFu) | (d == 0 ? 0x0FFFu : d == 1 ? 0x1000u : 0x1001u);
            uint32_t pats[2] = {(uint32_t)u, v};
            for (int k = 0; k < 2; k++) {
                float f = tosac_fp32_from_bits(pats[k]);
                uint32_t a = tosac_fp32_bits(tosac_round_fp16(f)), b = tosac_fp32_bits(tosac_fp16_to_fp32(tosac_fp32_to_fp16(f)));
                bool an = (a & 0x7FFFFFFFu) > 0x7F800000u, bn = (b & 0x7FFFFFFFu) > 0x7F800000u;
                if (an != bn || (!an && a != b)) bad++;
            }
        }
    }
    /* every fp16 subnormal and tie below 2^-14 */
    for (uint32_t h = 0; h < 0x400; h++) {
        float f = ldexpf((float)h + 0.5f, -24);
        if (tosac_round_fp16(f) != tosac_fp16_to_fp32(tosac_fp32_to_fp16(f))) bad++;
        if (tosac_round_fp16(-f) != tosac_fp16_to_fp32(tosac_fp32_to_fp16(-f))) bad++;
    }
    EXPECT_EQ_I(bad, 0);
    EXPECT(signbit(tosac_round_fp16(-0.0f)) && signbit(tosac_round_fp16(-1e-30f)));
    EXPECT(tosac_round_fp16(65519.0f) == 65504.0f && isinf(tosac_round_fp16(65520.0f)));
}

int main(void)
{
    RUN(test_round_fp16);
    RUN(test_conv2d_spot);
    RUN(test_conv2d_random);
    RUN(test_conv3d_random);
    RUN(test_depthwise_random);
    RUN(test_transpose_random);
    RUN(test_conv_large);
    RUN(test_conv_i48_overflow);
    RUN(test_depthwise_i8_rows);
    RUN(test_conv_zp_errors);
    RUN(test_conv_fp_special);
    RUN(test_matmul);
    RUN(test_matmul_errors);
    RUN(test_avg_pool_spot);
    RUN(test_avg_pool_random);
    RUN(test_avg_pool_large_window);
    RUN(test_max_pool_random);
    RUN(test_argmax_random);
    RUN(test_fft);
    /* the micro-kernel users again at each lower instruction-set level (the same bits are
       required), the weights as constant operands (prepared once) at some levels and not at
       others (packed by the run) */
    for (int level = 0; level < 3; level++) {
        fprintf(stderr, "micro-kernels capped at level %d, weights %s:\n", level, level == 1 ? "not constant" : "constant");
        tosac_kernel_limit_isa((uint32_t)level);
        kr_const_mask = level == 1 ? 0u : ~1u;
        RUN(test_conv2d_random);
        RUN(test_conv3d_random);
        RUN(test_depthwise_random);
        RUN(test_transpose_random);
        RUN(test_conv_large);
        RUN(test_conv_fp_special);
        RUN(test_matmul);
        RUN(test_max_pool_random);
        RUN(test_avg_pool_random);
        RUN(test_pool_wide);
    }
    /* tiles run in reverse order on three workers (kernels_run.h): the same bits */
    fprintf(stderr, "three workers, weights constant:\n");
    tosac_kernel_limit_isa((uint32_t)2);
    kr_const_mask = ~1u;
    kr_workers = 3;
    RUN(test_conv2d_random);
    RUN(test_conv3d_random);
    RUN(test_depthwise_random);
    RUN(test_transpose_random);
    RUN(test_conv_large);
    RUN(test_matmul);
    RUN(test_max_pool_random);
    RUN(test_avg_pool_random);
    RUN(test_avg_pool_large_window);
    RUN(test_pool_wide);
    kr_workers = 1;
    kr_const_mask = 0;
    return test_summary();
}
