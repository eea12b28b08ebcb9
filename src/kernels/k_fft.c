/*
 * FFT2D and RFFT2D (fp32; precise mode f64).
 *
 * Definition (TOSA 1.0): out[n, oy, ox] = sum over iy < H, ix < W of in[n, iy, ix] * e^(-s*i*a),
 * a = 2*pi*(iy*oy/H + ix*ox/W), s = +1 forward and -1 for FFT2D inverse; no normalisation. RFFT2D
 * takes a real input and returns the columns ox = 0 .. W/2.
 *
 * Computed in double: a radix-2 FFT over the rows then the columns (H and W are powers of two by
 * the spec's ERROR_IF; any other length falls back to a direct DFT of the line), with twiddle factors
 * that are exact at multiples of pi/2, then rounded once to fp32. This is more accurate than the
 * reference model's fp32 evaluation of the direct sum and well inside the DOT_PRODUCT bound.
 */
#include <math.h>
#include <string.h>

#include "kernels/kutil.h"

#define TOSAC_TWO_PI 6.283185307179586476925286766559

typedef struct {
    int64_t N, H, W, OW;
    size_t off_re, off_im, off_twh, off_tww, off_line, total;
} fft_plan;

static void fft_make_plan(const tosac_kcall *c, fft_plan *g)
{
    memset(g, 0, sizeof *g);
    const tosac_ktensor *in = &c->in[0];
    g->N = in->shape[0], g->H = in->shape[1], g->W = in->shape[2];
    g->OW = c->out[0].shape[2];
    size_t hw = (size_t)(g->H * g->W), o = 0, mx = (size_t)(g->H > g->W ? g->H : g->W);
    g->off_re = o, o += tosac_kalign64(hw * sizeof(double));
    g->off_im = o, o += tosac_kalign64(hw * sizeof(double));
    g->off_twh = o, o += tosac_kalign64((size_t)g->H * 2 * sizeof(double));
    g->off_tww = o, o += tosac_kalign64((size_t)g->W * 2 * sizeof(double));
    g->off_line = o, o += tosac_kalign64(mx * 4 * sizeof(double));
    g->total = o;
}

static size_t fft_scratch(const tosac_kcall *c)
{
    if (c->n_in < 1 || c->n_out < 1 || c->in[0].rank != 3 || c->out[0].rank != 3) return 0;
    fft_plan g;
    fft_make_plan(c, &g);
    return g.total;
}

TOSAC_KERNEL_PREPARE_SCRATCH(fft, fft_scratch)

static bool pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

/* tw[2k], tw[2k+1] = cos, sin of 2*pi*k/n for k < n; exact at multiples of pi/2 when 4 | n. */
static void twiddles(double *tw, int64_t n)
{
    if (n % 4 != 0) {
        for (int64_t k = 0; k < n; k++) {
            double a = TOSAC_TWO_PI * (double)k / (double)n;
            tw[2 * k] = cos(a), tw[2 * k + 1] = sin(a);
        }
        return;
    }
    int64_t q = n / 4;
    for (int64_t k = 0; k <= q; k++) {
        /* first quadrant, evaluated on the half nearer zero for accuracy */
        if (2 * k <= q) {
            double a = TOSAC_TWO_PI * (double)k / (double)n;
            tw[2 * k] = cos(a), tw[2 * k + 1] = sin(a);
        } else {
            double a = TOSAC_TWO_PI * (double)(q - k) / (double)n;
            tw[2 * k] = sin(a), tw[2 * k + 1] = cos(a);
        }
    }
    for (int64_t k = q + 1; k <= 2 * q; k++) tw[2 * k] = -tw[2 * (2 * q - k)], tw[2 * k + 1] = tw[2 * (2 * q - k) + 1];
    for (int64_t k = 2 * q + 1; k < n; k++) tw[2 * k] = tw[2 * (n - k)], tw[2 * k + 1] = -tw[2 * (n - k) + 1];
}

/*
 * In-place transform of one line (re, im contiguous, length n) with e^(-s*i*2*pi*k*j/n);
 * tmp holds 2n doubles for the direct fallback.
 */
static void fft_line(double *re, double *im, int64_t n, const double *tw, double s, double *tmp)
{
    if (n == 1) return;
    if (!pow2(n)) {
        for (int64_t k = 0; k < n; k++) {
            double sr = 0.0, si = 0.0;
            for (int64_t j = 0, t = 0; j < n; j++, t = t + k >= n ? t + k - n : t + k) { /* t = k * j % n */
                double wr = tw[2 * t], wi = -s * tw[2 * t + 1];
                sr += re[j] * wr - im[j] * wi;
                si += re[j] * wi + im[j] * wr;
            }
            tmp[2 * k] = sr, tmp[2 * k + 1] = si;
        }
        for (int64_t k = 0; k < n; k++) re[k] = tmp[2 * k], im[k] = tmp[2 * k + 1];
        return;
    }
    /* bit reversal */
    for (int64_t i = 1, j = 0; i < n; i++) {
        int64_t bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) {
            double t = re[i];
            re[i] = re[j], re[j] = t;
            t = im[i], im[i] = im[j], im[j] = t;
        }
    }
    for (int64_t len = 2, step = n >> 1; len <= n; len <<= 1, step >>= 1) { /* step = n / len */
        int64_t half = len / 2;
        for (int64_t i = 0; i < n; i += len)
            for (int64_t j = 0; j < half; j++) {
                double wr = tw[2 * j * step], wi = -s * tw[2 * j * step + 1];
                int64_t a = i + j, b = a + half;
                double xr = re[b] * wr - im[b] * wi, xi = re[b] * wi + im[b] * wr;
                re[b] = re[a] - xr, im[b] = im[a] - xi;
                re[a] = re[a] + xr, im[a] = im[a] + xi;
            }
    }
}

static void load_plane(double *dst, const tosac_ktensor *t, int64_t off, int64_t n)
{
    if (t->f64) {
        memcpy(dst, (const double *)t->data + off, (size_t)n * sizeof(double));
        return;
    }
    const float *s = (const float *)t->data + off;
    for (int64_t i = 0; i < n; i++) dst[i] = s[i];
}

static void store(const tosac_ktensor *t, int64_t i, double v)
{
    if (t->f64)
        ((double *)t->data)[i] = v;
    else
        ((float *)t->data)[i] = tosac_fp64_to_fp32(v);
}

tosac_status tosac_kernel_fft(tosac_kcall *c)
{
    bool real = c->op == TOSAC_OP_RFFT2D;
    if (c->n_in < (real ? 1u : 2u) || c->n_out < 2 || c->in[0].rank != 3 || c->out[0].rank != 3)
        return tosac_kfail(c, TOSAC_ERR_INTERNAL, "fft: operands");
    fft_plan g;
    fft_make_plan(c, &g);
    if (c->scratch_size < g.total) return tosac_kfail(c, TOSAC_ERR_INTERNAL, "fft: scratch too small");
    uint8_t *sc = (uint8_t *)c->scratch;
    double *re = (double *)(void *)(sc + g.off_re), *im = (double *)(void *)(sc + g.off_im);
    double *twh = (double *)(void *)(sc + g.off_twh), *tww = (double *)(void *)(sc + g.off_tww);
    double *line = (double *)(void *)(sc + g.off_line);
    int64_t H = g.H, W = g.W, mx = H > W ? H : W;
    double s = (!real && tosac_kattr_int(c, TOSAC_ATTR_FFT2D_inverse, 0)) ? -1.0 : 1.0;
    twiddles(twh, H);
    twiddles(tww, W);
    for (int64_t n = 0; n < g.N; n++) {
        load_plane(re, &c->in[0], n * H * W, H * W);
        if (real)
            for (int64_t i = 0; i < H * W; i++) im[i] = 0.0;
        else
            load_plane(im, &c->in[1], n * H * W, H * W);
        for (int64_t y = 0; y < H; y++) fft_line(re + y * W, im + y * W, W, tww, s, line);
        /* columns ox < OW only are needed */
        double *cr = line + 2 * mx, *ci = cr + mx;
        for (int64_t x = 0; x < g.OW; x++) {
            for (int64_t y = 0; y < H; y++) cr[y] = re[y * W + x], ci[y] = im[y * W + x];
            fft_line(cr, ci, H, twh, s, line);
            for (int64_t y = 0; y < H; y++) {
                store(&c->out[0], (n * H + y) * g.OW + x, cr[y]);
                store(&c->out[1], (n * H + y) * g.OW + x, ci[y]);
            }
        }
    }
    return TOSAC_OK;
}
