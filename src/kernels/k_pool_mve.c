/*
 * Helium kernels of the pool2d family (k_mve.h): int8 AVG_POOL2D and MAX_POOL2D. No prepared
 * constants: the run takes int8 calls and leaves the others to the portable kernel.
 *
 * AVG_POOL2D: per group of 8 channels, the window's int8 values summed in int16 lanes (exact for
 * windows of at most 256 taps; wider windows go to the portable kernel), then widened to int32
 * (even / odd lanes), sum - count * input_zp, the reciprocal scale of the count
 * (tosac_reciprocal_scale) applied as in k_conv_mve.c's SINGLE_ROUND (shift 30 + k >= 32, i.e.
 * counts of at least 3; windows of 1 or 2 valid taps take the scalar apply_scale_32), + output_zp,
 * clamped to int8 and narrowed back in channel order. No REQUIRE can fail: |sum| <= 255 * count <
 * 2^(shift - 1).
 * MAX_POOL2D: vmax of the window's int8 vectors, 16 channels at a time.
 */
#include "kernels/k_mve.h"
#include "kernels/kutil.h"
#include "kernels/quant_math.h"

#ifdef __ARM_FEATURE_MVE
#include <arm_mve.h>

typedef struct pmve_geom {
    int32_t N, IH, IW, C, OH, OW, KY, KX, sy, sx, pt, pl;
} pmve_geom;

static int32_t pmve_dim(const tosac_ktensor *t, int32_t i) { return (int32_t)t->shape[i]; }

/* The valid part of output (oy, ox)'s window in image n: its first element (channel 0) in x, and its
   rows and columns. */
static const int8_t *pmve_window(const pmve_geom *g, const int8_t *x, int32_t n, int32_t oy, int32_t ox,
                                 int32_t *rows, int32_t *cols)
{
    const int32_t ys = oy * g->sy - g->pt, xs = ox * g->sx - g->pl;
    const int32_t y0 = ys < 0 ? 0 : ys, y1 = ys + g->KY > g->IH ? g->IH : ys + g->KY;
    const int32_t x0 = xs < 0 ? 0 : xs, x1 = xs + g->KX > g->IW ? g->IW : xs + g->KX;
    *rows = y1 - y0, *cols = x1 - x0;
    return x + (((size_t)n * (size_t)g->IH + (size_t)y0) * (size_t)g->IW + (size_t)x0) * (size_t)g->C;
}

static void pmve_avg(const pmve_geom *g, const int8_t *x, int8_t *out, int32_t izp, int32_t ozp)
{
    const int32_t C = g->C;
    const size_t rowb = (size_t)g->IW * (size_t)C;
    int8_t *o = out;
    for (int32_t n = 0; n < g->N; n++)
        for (int32_t oy = 0; oy < g->OH; oy++)
            for (int32_t ox = 0; ox < g->OW; ox++, o += C) {
                int32_t rows, cols;
                const int8_t *xb = pmve_window(g, x, n, oy, ox, &rows, &cols);
                const int32_t count = rows * cols;
                int32_t m, s;
                tosac_reciprocal_scale((uint32_t)count, &m, &s);
                const int32x4_t zc = vdupq_n_s32(count * izp), vm = vdupq_n_s32(m), vs = vdupq_n_s32(31 - s);
                for (int32_t ch = 0; ch < C; ch += 8) {
                    const mve_pred16_t p = vctp16q((uint32_t)(C - ch));
                    int16x8_t acc = vdupq_n_s16(0);
                    const int8_t *xr = xb + ch;
                    for (int32_t y = 0; y < rows; y++, xr += rowb) {
                        const int8_t *xt = xr;
                        for (int32_t k = 0; k < cols; k++, xt += C) acc = vaddq_s16(acc, vldrbq_z_s16(xt, p));
                    }
                    const int32x4_t se = vsubq_s32(vmovlbq_s16(acc), zc), so = vsubq_s32(vmovltq_s16(acc), zc);
                    int32x4_t qe, qo;
                    if (s >= 32) {
                        qe = vrshlq_s32(vqdmulhq_s32(se, vm), vs);
                        qo = vrshlq_s32(vqdmulhq_s32(so, vm), vs);
                    } else { /* 1 or 2 valid taps: the scalar apply_scale_32 */
                        int32_t te[4], to[4];
                        vst1q_s32(te, se), vst1q_s32(to, so);
                        for (int i = 0; i < 4; i++) {
                            tosac_apply_scale_32(te[i], m, s, false, &te[i]);
                            tosac_apply_scale_32(to[i], m, s, false, &to[i]);
                        }
                        qe = vld1q_s32(te), qo = vld1q_s32(to);
                    }
                    qe = vminq_s32(vmaxq_s32(vaddq_n_s32(qe, ozp), vdupq_n_s32(-128)), vdupq_n_s32(127));
                    qo = vminq_s32(vmaxq_s32(vaddq_n_s32(qo, ozp), vdupq_n_s32(-128)), vdupq_n_s32(127));
                    int16x8_t r = vmovnbq_s32(vdupq_n_s16(0), qe);
                    r = vmovntq_s32(r, qo);
                    vstrbq_p_s16(o + ch, r, p);
                }
            }
}

static void pmve_max(const pmve_geom *g, const int8_t *x, int8_t *out)
{
    const int32_t C = g->C;
    const size_t rowb = (size_t)g->IW * (size_t)C;
    int8_t *o = out;
    for (int32_t n = 0; n < g->N; n++)
        for (int32_t oy = 0; oy < g->OH; oy++)
            for (int32_t ox = 0; ox < g->OW; ox++, o += C) {
                int32_t rows, cols;
                const int8_t *xb = pmve_window(g, x, n, oy, ox, &rows, &cols);
                for (int32_t ch = 0; ch < C; ch += 16) {
                    const mve_pred16_t p = vctp8q((uint32_t)(C - ch));
                    int8x16_t acc = vdupq_n_s8(INT8_MIN);
                    const int8_t *xr = xb + ch;
                    for (int32_t y = 0; y < rows; y++, xr += rowb) {
                        const int8_t *xt = xr;
                        for (int32_t k = 0; k < cols; k++, xt += C) acc = vmaxq_s8(acc, vld1q_z_s8(xt, p));
                    }
                    vst1q_p_s8(o + ch, acc, p);
                }
            }
}

bool tosac_pool_mve_run(tosac_kcall *c, tosac_status *st)
{
    if (c->n_in < 1 || c->n_out < 1 || c->in[0].rank != 4 || c->out[0].rank != 4 ||
        c->in[0].dtype != TOSAC_DTYPE_INT8 || c->out[0].dtype != TOSAC_DTYPE_INT8)
        return false;
    const bool avg = c->op == TOSAC_OP_AVG_POOL2D;
    const unsigned kid = avg ? TOSAC_ATTR_AVG_POOL2D_kernel : TOSAC_ATTR_MAX_POOL2D_kernel;
    const unsigned sid = avg ? TOSAC_ATTR_AVG_POOL2D_stride : TOSAC_ATTR_MAX_POOL2D_stride;
    const unsigned pid = avg ? TOSAC_ATTR_AVG_POOL2D_pad : TOSAC_ATTR_MAX_POOL2D_pad;
    pmve_geom g;
    g.N = pmve_dim(&c->in[0], 0), g.IH = pmve_dim(&c->in[0], 1), g.IW = pmve_dim(&c->in[0], 2);
    g.C = pmve_dim(&c->in[0], 3), g.OH = pmve_dim(&c->out[0], 1), g.OW = pmve_dim(&c->out[0], 2);
    g.KY = (int32_t)tosac_kattr_at(c, kid, 0, 1), g.KX = (int32_t)tosac_kattr_at(c, kid, 1, 1);
    g.sy = (int32_t)tosac_kattr_at(c, sid, 0, 1), g.sx = (int32_t)tosac_kattr_at(c, sid, 1, 1);
    g.pt = (int32_t)tosac_kattr_at(c, pid, 0, 0), g.pl = (int32_t)tosac_kattr_at(c, pid, 2, 0);
    /* every window has a valid tap (pads below the kernel size; else the portable kernel reports) */
    for (int i = 0; i < 4; i++)
        if (tosac_kattr_at(c, pid, i, 0) >= (i < 2 ? g.KY : g.KX)) return false;
    *st = TOSAC_OK;
    if (!avg) {
        pmve_max(&g, c->in[0].data, c->out[0].data);
        return true;
    }
    if (c->n_in < 3 || g.KY * g.KX > 256) return false;
    bool bad = false;
    const int64_t izp = tosac_kzp(&c->in[1], &bad), ozp = tosac_kzp(&c->in[2], &bad);
    if (bad) return false; /* the portable kernel reports it */
    pmve_avg(&g, c->in[0].data, c->out[0].data, (int32_t)izp, (int32_t)ozp);
    return true;
}

#else

bool tosac_pool_mve_run(tosac_kcall *c, tosac_status *st)
{
    (void)c, (void)st;
    return false;
}

#endif
