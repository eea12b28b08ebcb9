/*
 * AVG_POOL2D, MAX_POOL2D (family pool2d) and ARGMAX (family argmax).
 *
 * AVG_POOL2D integer (i8, i16; acc i32): sum of (x - input_zp) over the valid (non-padding) taps,
 *   count = number of valid taps, (m, s) = reciprocal_scale(count), apply_scale_32(sum, m, s,
 *   single round) + output_zp, clamped to in_out_t. REQUIRE: the sum fits i32.
 * AVG_POOL2D FP: sum over the valid taps in the order ky, kx in acc_t (fp32: float; fp16: rounded to
 *   fp16 after every addition), divided by count in acc_t (the count itself converted to acc_t), then
 *   rounded to in_out_t; precise mode in double.
 * MAX_POOL2D: max over the valid taps; integers start from the type minimum; FP follows nan_mode
 *   (PROPAGATE: any NaN gives NaN; IGNORE: NaNs are skipped, all-NaN gives NaN). Ties keep the first
 *   value (so -0 before +0 gives -0), as the reference model does.
 * ARGMAX: first index of the maximum along the axis; PROPAGATE: the first NaN wins; IGNORE: NaNs are
 *   skipped and an all-NaN line gives 0.
 */
#include <string.h>

#include "kernels/k_gemm.h"
#include "kernels/k_mve.h"
#include "kernels/kutil.h"

/* GCC vectorises the per-channel loops (unknown trip counts) only at -O3; results do not change. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif

typedef struct {
    int64_t N, IH, IW, C, OH, OW, ky, kx, sy, sx, pt, pl;
} pool_geom;

static void pool_geometry(const tosac_kcall *c, pool_geom *g)
{
    const tosac_ktensor *in = &c->in[0], *out = &c->out[0];
    bool avg = c->op == TOSAC_OP_AVG_POOL2D;
    unsigned kid = avg ? TOSAC_ATTR_AVG_POOL2D_kernel : TOSAC_ATTR_MAX_POOL2D_kernel;
    unsigned sid = avg ? TOSAC_ATTR_AVG_POOL2D_stride : TOSAC_ATTR_MAX_POOL2D_stride;
    unsigned pid = avg ? TOSAC_ATTR_AVG_POOL2D_pad : TOSAC_ATTR_MAX_POOL2D_pad;
    g->N = in->shape[0], g->IH = in->shape[1], g->IW = in->shape[2], g->C = in->shape[3];
    g->OH = out->shape[1], g->OW = out->shape[2];
    g->ky = tosac_kattr_at(c, kid, 0, 1), g->kx = tosac_kattr_at(c, kid, 1, 1);
    g->sy = tosac_kattr_at(c, sid, 0, 1), g->sx = tosac_kattr_at(c, sid, 1, 1);
    g->pt = tosac_kattr_at(c, pid, 0, 0), g->pl = tosac_kattr_at(c, pid, 2, 0);
}

static size_t pool2d_scratch(const tosac_kcall *c)
{
    if (c->n_in < 1 || c->in[0].rank != 4) return 0;
    /* accumulator row and one converted input row, 8 bytes per channel each */
    return 2 * tosac_kalign64((size_t)c->in[0].shape[3] * 8u);
}

TOSAC_KERNEL_PREPARE_SCRATCH(pool2d, pool2d_scratch)

/* Valid window [y0, y1) x [x0, x1) of output (oy, ox). */
static void window(const pool_geom *g, int64_t oy, int64_t ox, int64_t *y0, int64_t *y1, int64_t *x0, int64_t *x1)
{
    int64_t ys = oy * g->sy - g->pt, xs = ox * g->sx - g->pl;
    *y0 = ys < 0 ? 0 : ys;
    *y1 = ys + g->ky > g->IH ? g->IH : ys + g->ky;
    *x0 = xs < 0 ? 0 : xs;
    *x1 = xs + g->kx > g->IW ? g->IW : xs + g->kx;
}

/*
 * One output row (image n, row oy, every ox) of MAX_POOL2D on fp32 / int8 / int16 and of AVG_POOL2D
 * on fp32, window by window straight from the input into the output (restrict: no overlap): per
 * output pixel the taps in the order ky, kx, each a vector loop over the channels. fp32 maximum:
 * PROPAGATE gives the default NaN when either operand is NaN; IGNORE keeps the non-NaN one (the
 * new value when the maximum is NaN); otherwise a >= v ? a : v (ties keep the first). The fp32
 * average sums from +0 in tap order and divides by the count as float (AVG_POOL2D FP above).
 * Compiled for the baseline, AVX2 and AVX-512: the same element operations, the same bits.
 */
typedef void (*pool_row_fn)(const void *in, void *out, const pool_geom *g, int64_t n, int64_t oy);

/* Lane select: m ? x : y with m a comparison result (all ones or zero per lane) of mask type VM. */
#define PV_SEL(VT, VM, m, x, y) ((VT)((((VM)(x)) & (m)) | (((VM)(y)) & ~(m))))
/* One tap v folded into the window's vector a with the flags f; then the end of the window (q: the
   default NaN; v: the last tap). fp32 maximum: v > a ? v : a from -inf (ties keep the first, a NaN
   tap never wins), f marks lanes that saw a NaN (PROPAGATE: the default NaN) or a number (IGNORE:
   else the last tap, a NaN, as the generic loop's rule gives). */
#define PV_MAXP(VT, VM, a, f, v) (a = PV_SEL(VT, VM, v > a, v, a), f = f | (v != v))
#define PV_MAXI(VT, VM, a, f, v) (a = PV_SEL(VT, VM, v > a, v, a), f = f | (v == v))
#define PV_IMAX(VT, VM, a, f, v) (a = PV_SEL(VT, VM, v > a, v, a), (void)f)
#define PV_ADD(VT, VM, a, f, v) (a = a + v, (void)f)
#define PE_MAXP(VT, VM, a, f, v, q, cnt) (a = PV_SEL(VT, VM, f, q, a), (void)(cnt))
#define PE_MAXI(VT, VM, a, f, v, q, cnt) (a = PV_SEL(VT, VM, f, a, v), (void)(cnt))
#define PE_NONE(VT, VM, a, f, v, q, cnt) ((void)(q), (void)(cnt))
#define PE_AVG(VT, VM, a, f, v, q, cnt) (a = a / (cnt), (void)(q))

/* The taps of the current pixel on the channels [c0, c0 + lanes of VT), in registers (ini, q: the
   initial value and the default NaN in VT). Expands in POOL_ROW. */
#define POOL_CHUNK(T, STEP, END, VT, VM, ini, q, c0)                                                \
    do {                                                                                            \
        VT a_ = (ini), v_ = (q);                                                                    \
        VM f_ = {0};                                                                                \
        for (int64_t y = 0; y < ny; y++) {                                                          \
            const T *p_ = base + y * rs + (c0);                                                     \
            for (int64_t x = 0; x < nx; x++, p_ += C) {                                             \
                memcpy(&v_, p_, sizeof v_);                                                         \
                STEP(VT, VM, a_, f_, v_);                                                           \
            }                                                                                       \
        }                                                                                           \
        END(VT, VM, a_, f_, v_, q, cnt);                                                            \
        memcpy(o + (c0), &a_, sizeof a_);                                                           \
    } while (0)

/* vector type NAME of VB bytes of T, its mask type NAME##m (MT lanes), and the initial value and
   the default NaN in every lane */
#define POOL_VTYPES(NAME, T, MT, VB)                                                                \
    typedef T NAME __attribute__((vector_size(VB)));                                                \
    typedef MT NAME##m __attribute__((vector_size(VB)));                                            \
    NAME NAME##_ini, NAME##_q;                                                                      \
    for (unsigned i_ = 0; i_ < (VB) / sizeof(T); i_++) NAME##_ini[i_] = init, NAME##_q[i_] = qv;

/*
 * One output row (image n, row oy, every ox) of MAX_POOL2D on fp32 / int8 / int16 and of AVG_POOL2D
 * on fp32: per output pixel and vector of channels, the taps in the order ky, kx folded into
 * registers (the last vector overlaps the one before when the channels are not a multiple of its
 * lanes; fewer channels than a 16-byte vector: one-lane vectors). The fp32 average sums from +0 in
 * tap order and divides by the count as float (AVG_POOL2D FP above). Compiled for the baseline
 * (16-byte vectors), AVX2 and AVX-512: the same lane operations, the same bits.
 */
#define POOL_ROW(NAME, T, MT, INIT, QV, STEP, END, VB, SFX, TARGET)                                     \
    TARGET static void NAME##_##SFX(const void *in_, void *out_, const pool_geom *g, int64_t n,     \
                                    int64_t oy)                                                     \
    {                                                                                               \
        const T *in = in_;                                                                          \
        T *out = out_;                                                                              \
        const int64_t C = g->C, rs = g->IW * C;                                                     \
        const T init = (INIT), qv = (QV);                                                            \
        POOL_VTYPES(vw, T, MT, VB)                                                                  \
        POOL_VTYPES(v16, T, MT, 16)                                                                 \
        POOL_VTYPES(v1, T, MT, sizeof(T))                                                           \
        const int64_t L = (VB) / (int64_t)sizeof(T), L16 = 16 / (int64_t)sizeof(T);                 \
        for (int64_t ox = 0; ox < g->OW; ox++) {                                                    \
            int64_t y0, y1, x0, x1;                                                                 \
            window(g, oy, ox, &y0, &y1, &x0, &x1);                                                  \
            const int64_t ny = y1 - y0, nx = x1 - x0;                                               \
            const T cnt = (T)(ny * nx);                                                             \
            const T *base = in + ((n * g->IH + y0) * g->IW + x0) * C;                               \
            T *o = out + ((n * g->OH + oy) * g->OW + ox) * C;                                       \
            if (C >= L)                                                                             \
                for (int64_t c0 = 0; c0 < C; c0 += L)                                               \
                    POOL_CHUNK(T, STEP, END, vw, vwm, vw_ini, vw_q, c0 + L <= C ? c0 : C - L);      \
            else if (C >= L16)                                                                      \
                for (int64_t c0 = 0; c0 < C; c0 += L16)                                             \
                    POOL_CHUNK(T, STEP, END, v16, v16m, v16_ini, v16_q, c0 + L16 <= C ? c0 : C - L16); \
            else                                                                                    \
                for (int64_t c0 = 0; c0 < C; c0++) POOL_CHUNK(T, STEP, END, v1, v1m, v1_ini, v1_q, c0); \
        }                                                                                           \
    }

#define POOL_ROWS(SFX, TARGET, VB)                                                                                 \
    POOL_ROW(maxp_f32, float, int32_t, tosac_fp32_from_bits(0xFF800000u), tosac_fp32_from_bits(0x7FC00000u),      \
             PV_MAXP, PE_MAXP, VB, SFX, TARGET)                                                                    \
    POOL_ROW(maxi_f32, float, int32_t, tosac_fp32_from_bits(0xFF800000u), tosac_fp32_from_bits(0x7FC00000u),      \
             PV_MAXI, PE_MAXI, VB, SFX, TARGET)                                                                    \
    POOL_ROW(max_i8, int8_t, int8_t, INT8_MIN, 0, PV_IMAX, PE_NONE, VB, SFX, TARGET)                               \
    POOL_ROW(max_i16, int16_t, int16_t, INT16_MIN, 0, PV_IMAX, PE_NONE, VB, SFX, TARGET)                           \
    POOL_ROW(avg_f32, float, int32_t, 0.0f, 0.0f, PV_ADD, PE_AVG, VB, SFX, TARGET)                                 \
    static const pool_row_fn pool_rows_##SFX[5] = {maxp_f32_##SFX, maxi_f32_##SFX, max_i8_##SFX, max_i16_##SFX,    \
                                                   avg_f32_##SFX};
POOL_ROWS(base, , 16)
#ifdef TOSAC_KERNEL_X86
POOL_ROWS(avx2, __attribute__((target("avx2"))), 32)
POOL_ROWS(avx512, __attribute__((target("avx2,avx512f,avx512bw"))), 64)
#endif
#undef POOL_ROWS
#undef POOL_ROW
#undef POOL_VTYPES
#undef POOL_CHUNK
#undef PV_SEL
#undef PV_MAXP
#undef PV_MAXI
#undef PV_IMAX
#undef PV_ADD
#undef PE_MAXP
#undef PE_MAXI
#undef PE_NONE
#undef PE_AVG

/* The row function for (op, dtype, nan_mode) at level isa, or NULL (the generic loops below). */
static pool_row_fn pool_row_pick(uint32_t op, const tosac_ktensor *in, bool ignore, uint32_t isa)
{
    if (in->f64) return NULL;
    int k = -1;
    if (op == TOSAC_OP_MAX_POOL2D)
        k = in->dtype == TOSAC_DTYPE_FP32 ? (ignore ? 1 : 0) : in->dtype == TOSAC_DTYPE_INT8 ? 2 : in->dtype == TOSAC_DTYPE_INT16 ? 3 : -1;
    else if (in->dtype == TOSAC_DTYPE_FP32)
        k = 4;
    if (k < 0) return NULL;
#ifdef TOSAC_KERNEL_X86
    if (isa == TOSAC_KISA_AVX512) return pool_rows_avx512[k];
    if (isa == TOSAC_KISA_AVX2) return pool_rows_avx2[k];
#endif
    (void)isa;
    return pool_rows_base[k];
}

/* Output rows [r0, r1) of all images (row r: image r / OH, output row r % OH) through a row
   function, as a parallel-for task (kernel.h): every output element is its own window's result. */
typedef struct {
    pool_row_fn fn;
    const tosac_kcall *c;
    const pool_geom *g;
} pool_row_task;

static void pool_rows(void *ctx, uint32_t worker, size_t r0, size_t r1)
{
    const pool_row_task *t = ctx;
    (void)worker;
    for (size_t r = r0; r < r1; r++)
        t->fn(t->c->in[0].data, t->c->out[0].data, t->g, (int64_t)(r / (size_t)t->g->OH), (int64_t)(r % (size_t)t->g->OH));
}

static bool is_nan_f(float v) { return v != v; }
static bool is_nan_d(double v) { return v != v; }

/* ---- AVG_POOL2D -------------------------------------------------------------------------------- */

/* Sum of window [y0, y1) x [x0, x1) of image n per channel into ACC (int32 or int64 elements, so each
   width keeps its own typed loop); expands inside avg_int. */
#define AVG_WINDOW_SUM(ACC)                                                              \
    do {                                                                                 \
        for (int64_t ch = 0; ch < C; ch++) (ACC)[ch] = 0;                                \
        for (int64_t y = y0; y < y1; y++)                                                \
            for (int64_t x = x0; x < x1; x++) {                                          \
                int64_t src = ((n * g->IH + y) * g->IW + x) * C;                         \
                if (i16) {                                                               \
                    const int16_t *s = (const int16_t *)in->data + src;                  \
                    for (int64_t ch = 0; ch < C; ch++) (ACC)[ch] += s[ch];               \
                } else {                                                                 \
                    const int8_t *s = (const int8_t *)in->data + src;                    \
                    for (int64_t ch = 0; ch < C; ch++) (ACC)[ch] += s[ch] - izp;         \
                }                                                                        \
            }                                                                            \
    } while (0)

/* Integer AVG_POOL2D over output rows [r0, r1) of all images as a parallel-for task (like
   MAX_POOL2D's): each output element depends on its own window only. A failed REQUIRE is noted in
   the worker's own slot of `fail` (1: no valid tap, 2: the sum overflows i32) and stops the task. */
typedef struct {
    tosac_kcall *c;
    const pool_geom *g;
    int32_t izp, ozp;
    uint8_t fail[TOSAC_KMAX_WORKERS];
} avg_task;

static void avg_int(void *ctx, uint32_t worker, size_t r0, size_t r1)
{
    avg_task *t = ctx;
    const tosac_kcall *c = t->c;
    const pool_geom *g = t->g;
    const int32_t izp = t->izp, ozp = t->ozp;
    const tosac_ktensor *in = &c->in[0], *out = &c->out[0];
    int64_t C = g->C, lo, hi;
    tosac_kint_range(in->dtype, &lo, &hi);
    uint8_t *sc = (uint8_t *)c->scratch + (size_t)worker * c->scratch_size;
    int64_t *acc = (int64_t *)(void *)sc;
    int32_t *acc32 = (int32_t *)(void *)(sc + tosac_kalign64((size_t)C * 8u));
    bool i16 = in->dtype == TOSAC_DTYPE_INT16;
    /* int32 sums are exact while the window holds fewer than 2^16 taps (|x - zp| <= 2^15); for int8
       they stay below 2^24 in magnitude, inside apply_scale_32's REQUIRE range (shift >= 30), so
       that loop scales without the checks */
    bool narrow = g->ky * g->kx < 65536;
    for (size_t r = r0; r < r1; r++) {
        const int64_t n = (int64_t)(r / (size_t)g->OH), oy = (int64_t)(r % (size_t)g->OH);
        for (int64_t ox = 0; ox < g->OW; ox++) {
            int64_t y0, y1, x0, x1;
            window(g, oy, ox, &y0, &y1, &x0, &x1);
            int64_t count = (y1 - y0) * (x1 - x0);
            if (count < 1 || count > INT32_MAX) {
                t->fail[worker] = 1;
                return;
            }
            int32_t mul, sh;
            tosac_reciprocal_scale((uint32_t)count, &mul, &sh);
            int64_t o0 = ((n * g->OH + oy) * g->OW + ox) * C;
            if (narrow && !i16) {
                AVG_WINDOW_SUM(acc32);
                const int64_t rnd = (int64_t)1 << (sh - 1);
                int8_t *o = (int8_t *)out->data + o0;
                if (count <= 8192) {
                    /* |sum| < 2^21 and mul < 2^31: sum * mul + rnd < 2^53 is exact in double, and so is
                       its scaling by 2^-sh (|.| < 257); + 256 makes it positive with bits from 2^8 down
                       to 2^-43 (exact), so truncation is the spec's floor: the same bits, in a loop that
                       vectorises */
                    const double dm = (double)mul, dr = (double)rnd, ds = tosac_fp64_from_bits((uint64_t)(1023 - sh) << 52);
                    for (int64_t ch = 0; ch < C; ch++) {
                        int32_t v = (int32_t)(((double)acc32[ch] * dm + dr) * ds + 256.0) - 256 + ozp;
                        o[ch] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
                    }
                    continue;
                }
                for (int64_t ch = 0; ch < C; ch++) {
                    int32_t v = tosac_scale32_core(acc32[ch], mul, rnd, (uint32_t)sh) + ozp;
                    o[ch] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
                }
                continue;
            }
            if (narrow) {
                AVG_WINDOW_SUM(acc32);
                for (int64_t ch = 0; ch < C; ch++) acc[ch] = acc32[ch];
            } else {
                AVG_WINDOW_SUM(acc);
            }
            for (int64_t ch = 0; ch < C; ch++) {
                int32_t v;
                if (acc[ch] < INT32_MIN || acc[ch] > INT32_MAX || !tosac_apply_scale_32((int32_t)acc[ch], mul, sh, false, &v)) {
                    t->fail[worker] = 2;
                    return;
                }
                int64_t w = tosac_sat64((int64_t)v + ozp, lo, hi);
                if (i16)
                    ((int16_t *)out->data)[o0 + ch] = (int16_t)w;
                else
                    ((int8_t *)out->data)[o0 + ch] = (int8_t)w;
            }
        }
    }
}
#undef AVG_WINDOW_SUM

static void avg_fp(tosac_kcall *c, const pool_geom *g, bool f16acc)
{
    const tosac_ktensor *in = &c->in[0], *out = &c->out[0];
    int64_t C = g->C;
    uint8_t *sc = (uint8_t *)c->scratch;
    size_t rowb = tosac_kalign64((size_t)C * 8u);
    bool f64 = in->f64;
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t oy = 0; oy < g->OH; oy++)
            for (int64_t ox = 0; ox < g->OW; ox++) {
                int64_t y0, y1, x0, x1;
                window(g, oy, ox, &y0, &y1, &x0, &x1);
                int64_t count = (y1 - y0) * (x1 - x0);
                int64_t o0 = ((n * g->OH + oy) * g->OW + ox) * C;
                if (f64) {
                    double *acc = (double *)(void *)sc, *row = (double *)(void *)(sc + rowb);
                    for (int64_t ch = 0; ch < C; ch++) acc[ch] = 0.0;
                    for (int64_t y = y0; y < y1; y++)
                        for (int64_t x = x0; x < x1; x++) {
                            tosac_krow_f64(row, in, ((n * g->IH + y) * g->IW + x) * C, C);
                            for (int64_t ch = 0; ch < C; ch++) acc[ch] = acc[ch] + row[ch];
                        }
                    double *o = (double *)out->data + o0;
                    for (int64_t ch = 0; ch < C; ch++) o[ch] = acc[ch] / (double)count;
                    continue;
                }
                float *acc = (float *)(void *)sc, *row = (float *)(void *)(sc + rowb);
                for (int64_t ch = 0; ch < C; ch++) acc[ch] = 0.0f;
                for (int64_t y = y0; y < y1; y++)
                    for (int64_t x = x0; x < x1; x++) {
                        int64_t src = ((n * g->IH + y) * g->IW + x) * C;
                        if (in->dtype == TOSAC_DTYPE_FP32) {
                            const float *s = (const float *)in->data + src;
                            for (int64_t ch = 0; ch < C; ch++) acc[ch] = acc[ch] + s[ch];
                        } else {
                            tosac_krow_f32(row, in, src, C);
                            if (f16acc)
                                for (int64_t ch = 0; ch < C; ch++) acc[ch] = tosac_round_fp16(acc[ch] + row[ch]);
                            else
                                for (int64_t ch = 0; ch < C; ch++) acc[ch] = acc[ch] + row[ch];
                        }
                    }
                if (f16acc) {
                    float cnt = tosac_round_fp16((float)count);
                    for (int64_t ch = 0; ch < C; ch++) acc[ch] = tosac_round_fp16(acc[ch] / cnt);
                } else {
                    float cnt = (float)count;
                    for (int64_t ch = 0; ch < C; ch++) acc[ch] = acc[ch] / cnt;
                }
                tosac_kstore_row_f32(out, o0, acc, C);
            }
}

/* ---- MAX_POOL2D -------------------------------------------------------------------------------- */

/* MAX_POOL2D of the other FP types and precise mode over output rows [r0, r1) of all images, as
   pool_rows. */
typedef struct {
    tosac_kcall *c;
    const pool_geom *g;
    bool ignore;
} max_task;

/* The window maximum of one output pixel into m[0..C) for fp32 or fp64 rows (row: scratch for one
   input pixel): a NaN wins under PROPAGATE and loses under IGNORE; -0 and +0 keep the first seen. */
#define WINDOW_MAX_FP(T, KROW, IS_NAN, NANV, NINF)                                                     \
    do {                                                                                               \
        for (int64_t ch = 0; ch < C; ch++) m[ch] = ignore ? (NANV) : (NINF);                            \
        for (int64_t y = y0; y < y1; y++)                                                              \
            for (int64_t x = x0; x < x1; x++) {                                                        \
                KROW(row, in, ((n * g->IH + y) * g->IW + x) * C, C);                                   \
                for (int64_t ch = 0; ch < C; ch++) {                                                   \
                    T a = m[ch], v = row[ch];                                                          \
                    if (IS_NAN(a) || IS_NAN(v))                                                        \
                        m[ch] = !ignore ? (NANV) : IS_NAN(a) ? v : a;                                  \
                    else                                                                               \
                        m[ch] = a >= v ? a : v;                                                        \
                }                                                                                      \
            }                                                                                          \
    } while (0)

static void max_fp(void *ctx, uint32_t worker, size_t r0, size_t r1)
{
    const max_task *t = ctx;
    const tosac_kcall *c = t->c;
    const pool_geom *g = t->g;
    const bool ignore = t->ignore;
    const tosac_ktensor *in = &c->in[0], *out = &c->out[0];
    int64_t C = g->C;
    uint8_t *sc = (uint8_t *)c->scratch + (size_t)worker * c->scratch_size;
    size_t rowb = tosac_kalign64((size_t)C * 8u);
    float nanf = tosac_fp32_from_bits(0x7FC00000u), ninf = tosac_fp32_from_bits(0xFF800000u);
    double nand = tosac_fp64_from_bits(0x7FF8000000000000u), ninfd = tosac_fp64_from_bits(0xFFF0000000000000u);
    for (size_t r = r0; r < r1; r++) {
        const int64_t n = (int64_t)(r / (size_t)g->OH), oy = (int64_t)(r % (size_t)g->OH);
        for (int64_t ox = 0; ox < g->OW; ox++) {
            int64_t y0, y1, x0, x1;
            window(g, oy, ox, &y0, &y1, &x0, &x1);
            int64_t o0 = ((n * g->OH + oy) * g->OW + ox) * C;
            if (in->f64) {
                double *m = (double *)out->data + o0, *row = (double *)(void *)(sc + rowb);
                WINDOW_MAX_FP(double, tosac_krow_f64, is_nan_d, nand, ninfd);
                continue;
            }
            float *m = (float *)(void *)sc, *row = (float *)(void *)(sc + rowb);
            WINDOW_MAX_FP(float, tosac_krow_f32, is_nan_f, nanf, ninf);
            tosac_kstore_row_f32(out, o0, m, C);
        }
    }
}

tosac_status tosac_kernel_pool2d(tosac_kcall *c)
{
    tosac_status st;
    if (c->isa == TOSAC_KISA_MVE && tosac_pool_mve_run(c, &st)) return st;
    if (c->n_in < 1 || c->n_out < 1 || c->in[0].rank != 4 || c->out[0].rank != 4)
        return tosac_kfail(c, TOSAC_ERR_INTERNAL, "pool2d: operands");
    if (c->scratch_size < pool2d_scratch(c)) return tosac_kfail(c, TOSAC_ERR_INTERNAL, "pool2d: scratch");
    pool_geom g;
    pool_geometry(c, &g);
    const tosac_ktensor *in = &c->in[0];
    bool fp = in->f64 || tosac_dtype_is_float(in->dtype);
    if (c->op == TOSAC_OP_MAX_POOL2D) {
        max_task t = {c, &g, tosac_kattr_int(c, TOSAC_ATTR_MAX_POOL2D_nan_mode, TOSAC_NAN_PROPAGATE) == TOSAC_NAN_IGNORE};
        pool_row_task rt = {pool_row_pick(c->op, in, t.ignore, c->isa), c, &g};
        if (rt.fn)
            tosac_kparallel_for(c, pool_rows, &rt, (size_t)(g.N * g.OH));
        else
            tosac_kparallel_for(c, max_fp, &t, (size_t)(g.N * g.OH));
        return TOSAC_OK;
    }
    if (c->n_in < 3) return tosac_kfail(c, TOSAC_ERR_INTERNAL, "AVG_POOL2D: operand count");
    bool bad = false;
    int64_t izp = tosac_kzp(&c->in[1], &bad), ozp = tosac_kzp(&c->in[2], &bad);
    if (bad || (in->dtype != TOSAC_DTYPE_INT8 && (izp != 0 || ozp != 0)))
        return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "AVG_POOL2D zero points must be 0 unless in_out_t is i8");
    if (!fp) {
        avg_task t;
        memset(&t, 0, sizeof t);
        t.c = c, t.g = &g, t.izp = (int32_t)izp, t.ozp = (int32_t)ozp;
        tosac_kparallel_for(c, avg_int, &t, (size_t)(g.N * g.OH));
        uint8_t f = 0;
        for (uint32_t w = 0; w < TOSAC_KMAX_WORKERS; w++) f = t.fail[w] > f ? t.fail[w] : f;
        if (f == 1) return tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE, "AVG_POOL2D window has no valid tap");
        if (f == 2) return tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE, "AVG_POOL2D sum overflows i32 (REQUIRE)");
        return TOSAC_OK;
    }
    int64_t acc = tosac_kattr_int(c, TOSAC_ATTR_AVG_POOL2D_acc_type, 0);
    bool f16acc = acc == TOSAC_DTYPE_FP16 ||
                  (acc == 0 && (in->dtype == TOSAC_DTYPE_FP8E4M3 || in->dtype == TOSAC_DTYPE_FP8E5M2));
    pool_row_task rt = {f16acc ? NULL : pool_row_pick(c->op, in, false, c->isa), c, &g};
    if (rt.fn)
        tosac_kparallel_for(c, pool_rows, &rt, (size_t)(g.N * g.OH));
    else
        avg_fp(c, &g, f16acc);
    return TOSAC_OK;
}

/* ---- ARGMAX ------------------------------------------------------------------------------------ */

typedef struct {
    int64_t outer, len, inner;
} argmax_geom;

static void argmax_geometry(const tosac_kcall *c, argmax_geom *g)
{
    const tosac_ktensor *in = &c->in[0];
    int64_t axis = tosac_kattr_int(c, TOSAC_ATTR_ARGMAX_axis, 0);
    g->outer = 1, g->len = 1, g->inner = 1;
    for (int32_t d = 0; d < in->rank; d++) {
        if (d < axis)
            g->outer *= in->shape[d];
        else if (d == axis)
            g->len = in->shape[d];
        else
            g->inner *= in->shape[d];
    }
}

static size_t argmax_scratch(const tosac_kcall *c)
{
    if (c->n_in < 1) return 0;
    argmax_geom g;
    argmax_geometry(c, &g);
    /* best value and one converted row, 8 bytes per inner position each */
    return 2 * tosac_kalign64((size_t)g.inner * 8u);
}

TOSAC_KERNEL_PREPARE_SCRATCH(argmax, argmax_scratch)

#define TOSAC_ARGMAX_INT(T, NAME)                                                                       \
    static void NAME(const T *x, const argmax_geom *g, T *best, int32_t *idx)                           \
    {                                                                                                   \
        for (int64_t o = 0; o < g->outer; o++) {                                                        \
            const T *base = x + o * g->len * g->inner;                                                  \
            int32_t *id = idx + o * g->inner;                                                           \
            for (int64_t i = 0; i < g->inner; i++) best[i] = base[i], id[i] = 0;                        \
            for (int64_t a = 1; a < g->len; a++) {                                                      \
                const T *r = base + a * g->inner;                                                       \
                for (int64_t i = 0; i < g->inner; i++)                                                  \
                    if (r[i] > best[i]) best[i] = r[i], id[i] = (int32_t)a;                             \
            }                                                                                           \
        }                                                                                               \
    }
TOSAC_ARGMAX_INT(int8_t, argmax_i8)
TOSAC_ARGMAX_INT(int16_t, argmax_i16)

tosac_status tosac_kernel_argmax(tosac_kcall *c)
{
    if (c->n_in < 1 || c->n_out < 1) return tosac_kfail(c, TOSAC_ERR_INTERNAL, "argmax: operands");
    if (c->scratch_size < argmax_scratch(c)) return tosac_kfail(c, TOSAC_ERR_INTERNAL, "argmax: scratch");
    argmax_geom g;
    argmax_geometry(c, &g);
    const tosac_ktensor *in = &c->in[0];
    int32_t *idx = (int32_t *)c->out[0].data;
    uint8_t *sc = (uint8_t *)c->scratch;
    size_t rowb = tosac_kalign64((size_t)g.inner * 8u);
    if (g.len < 1) return TOSAC_OK;
    if (!in->f64 && in->dtype == TOSAC_DTYPE_INT8) {
        argmax_i8((const int8_t *)in->data, &g, (int8_t *)c->scratch, idx);
        return TOSAC_OK;
    }
    if (!in->f64 && in->dtype == TOSAC_DTYPE_INT16) {
        argmax_i16((const int16_t *)in->data, &g, (int16_t *)c->scratch, idx);
        return TOSAC_OK;
    }
    bool ignore = tosac_kattr_int(c, TOSAC_ATTR_ARGMAX_nan_mode, TOSAC_NAN_PROPAGATE) == TOSAC_NAN_IGNORE;
    double *best = (double *)(void *)sc, *row = (double *)(void *)(sc + rowb);
    double init = ignore ? tosac_fp64_from_bits(0x7FF8000000000000u) : tosac_fp64_from_bits(0xFFF0000000000000u);
    for (int64_t o = 0; o < g.outer; o++) {
        int32_t *id = idx + o * g.inner;
        for (int64_t i = 0; i < g.inner; i++) best[i] = init, id[i] = 0;
        for (int64_t a = 0; a < g.len; a++) {
            tosac_krow_f64(row, in, (o * g.len + a) * g.inner, g.inner);
            for (int64_t i = 0; i < g.inner; i++) {
                double m = best[i], v = row[i];
                bool update;
                if (is_nan_d(m))
                    update = ignore && !is_nan_d(v); /* PROPAGATE: a NaN already won */
                else if (is_nan_d(v))
                    update = !ignore;
                else
                    update = v > m;
                if (update) best[i] = v, id[i] = (int32_t)a;
            }
        }
    }
    return TOSAC_OK;
}
