/*
 * Quantization parameters (PT2E's rules as ExecuTorch's Arm quantizer configures them) and the
 * RESCALE multiplier/shift encoding of ExecuTorch's Arm backend. Everything here is plain
 * arithmetic in double; rounding is half to even (nearbyint in the default rounding mode), as
 * torch.round and Python's round are.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tosac/quant.h"

/* frexp(scale) = mant * 2^exp; m = round_half_even(mant * 2^bits), halved with exp + 1 when it
   rounds up to 2^bits (it must fit the multiplier type); shift = bits - exp; a shift above 62
   drops multiplier bits instead (all of them for scales below 2^-(62 + bits)). */
static bool multiplier_bits(double scale, int bits, int32_t *multiplier, int32_t *shift)
{
    if (!(scale > 0) || !isfinite(scale)) return false;
    int exp = 0;
    double mant = frexp(scale, &exp); /* scale = mant * 2^exp, 0.5 <= mant < 1 */
    int64_t m = (int64_t)nearbyint(ldexp(mant, bits));
    if (m == ((int64_t)1 << bits)) {
        m >>= 1;
        exp += 1;
    }
    int64_t s = bits - (int64_t)exp;
    if (s > 62) { /* tiny scales: fewer multiplier bits instead of an out-of-range shift */
        m = s - 62 < 63 ? m >> (s - 62) : 0;
        s = 62;
    }
    if (s < 2) return false;
    *multiplier = (int32_t)m;
    *shift = (int32_t)s;
    return true;
}

bool tosac_quant_multiplier(double scale, int32_t *multiplier, int32_t *shift)
{
    return multiplier_bits(scale, 31, multiplier, shift);
}

tosac_qparams tosac_quant_choose_act(double min, double max)
{
    /* the range always contains 0 so that zero (padding, ReLU) is exact */
    double lo = min < 0 ? min : 0, hi = max > 0 ? max : 0;
    if (!isfinite(lo)) lo = -1e30;
    if (!isfinite(hi)) hi = 1e30;
    double scale = (hi - lo) / 255.0;
    if (!(scale >= TOSAC_QUANT_EPS)) scale = TOSAC_QUANT_EPS;
    double zp = -128.0 - nearbyint(lo / scale);
    if (zp < -128) zp = -128;
    if (zp > 127) zp = 127;
    tosac_qparams q = {scale, (int32_t)zp};
    return q;
}

bool tosac_quant_multiplier16(double scale, int32_t *multiplier, int32_t *shift)
{
    return multiplier_bits(scale, 15, multiplier, shift); /* the multiplier is an int16 */
}

tosac_qparams tosac_quant_choose_act16(double min, double max)
{
    double a = fmax(fabs(min), fabs(max));
    if (!isfinite(a)) a = 1e30;
    double scale = a / 32767.0;
    if (!(scale >= TOSAC_QUANT_EPS16)) scale = TOSAC_QUANT_EPS16;
    tosac_qparams q = {scale, 0};
    return q;
}

double tosac_quant_choose_weight(double absmax)
{
    double scale = absmax / 127.0;
    return scale >= TOSAC_QUANT_EPS && isfinite(scale) ? scale : TOSAC_QUANT_EPS;
}

int32_t tosac_quant_quantize(double x, tosac_qparams q, int32_t lo, int32_t hi)
{
    if (isnan(x)) return q.zero_point < lo ? lo : q.zero_point > hi ? hi : q.zero_point;
    double r = nearbyint(x / q.scale) + q.zero_point; /* +-inf saturate below */
    return r < lo ? lo : r > hi ? hi : (int32_t)r;
}

double tosac_quant_dequantize(int32_t v, tosac_qparams q) { return q.scale * ((double)v - q.zero_point); }

/* ---- calibration methods ------------------------------------------------------------------ */

bool tosac_quant_calib_method_parse(const char *s, tosac_quant_calib_method *out)
{
    static const char *const names[] = {"minmax", "percentile", "mse"};
    for (int k = 0; k < 3; k++)
        if (s && !strcmp(s, names[k])) {
            *out = (tosac_quant_calib_method)k;
            return true;
        }
    return false;
}

const char *tosac_quant_calib_method_name(tosac_quant_calib_method m)
{
    return m == TOSAC_QUANT_CALIB_PERCENTILE ? "percentile" : m == TOSAC_QUANT_CALIB_MSE ? "mse" : "minmax";
}

uint32_t tosac_quant_hist_bin(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    uint32_t e = (bits >> 23) & 0xFFu;
    if (e == 0xFFu && (bits & 0x7FFFFFu)) return TOSAC_QUANT_HIST_BINS; /* NaN */
    /* the exponent and the top 5 mantissa bits are the log-scale bin: no log() per value */
    int ee = (int)e - 127;
    uint32_t m;
    if (ee < -TOSAC_QUANT_HIST_OCTAVES / 2) m = 0;
    else if (ee >= TOSAC_QUANT_HIST_OCTAVES / 2) m = TOSAC_QUANT_HIST_SIDE;
    else m = (uint32_t)(ee + TOSAC_QUANT_HIST_OCTAVES / 2) * TOSAC_QUANT_HIST_SUB + ((bits >> 18) & 31u) + 1;
    return bits >> 31 ? TOSAC_QUANT_HIST_ZERO - m : TOSAC_QUANT_HIST_ZERO + m;
}

void tosac_quant_hist_edges(uint32_t bin, double *lo, double *hi)
{
    int64_t m = (int64_t)bin - TOSAC_QUANT_HIST_ZERO;
    int64_t a = m < 0 ? -m : m;
    if (a == 0) {
        *lo = *hi = 0;
        return;
    }
    int o = (int)((a - 1) / TOSAC_QUANT_HIST_SUB), sub = (int)((a - 1) % TOSAC_QUANT_HIST_SUB);
    double base = ldexp(1.0, o - TOSAC_QUANT_HIST_OCTAVES / 2);
    double mlo = base * (1.0 + (double)sub / TOSAC_QUANT_HIST_SUB), mhi = base * (1.0 + (double)(sub + 1) / TOSAC_QUANT_HIST_SUB);
    if (m > 0) *lo = mlo, *hi = mhi;
    else *lo = -mhi, *hi = -mlo;
}

static double center(uint32_t b)
{
    double lo, hi;
    tosac_quant_hist_edges(b, &lo, &hi);
    return 0.5 * (lo + hi);
}

double tosac_quant_hist_mse(const uint64_t *hist, double lo, double hi)
{
    double e = 0, step2 = (hi - lo) / 255.0 * ((hi - lo) / 255.0) / 12.0;
    for (uint32_t b = 0; b < TOSAC_QUANT_HIST_BINS; b++) {
        if (!hist[b] || b == TOSAC_QUANT_HIST_ZERO) continue; /* zero is exact */
        double v = center(b), c = (double)hist[b];
        e += v > hi ? c * (v - hi) * (v - hi) : v < lo ? c * (v - lo) * (v - lo) : c * step2;
    }
    return e;
}

/* Prefix sums over bins (count, count*center, count*center^2, nonzero-bin count): the error of a
   range is then O(1), so the search can try every bin edge. */
typedef struct hist_sums {
    double *c, *s1, *s2;
} hist_sums;

/* sums over bins [a, b) */
static double range_sum(const double *p, uint32_t a, uint32_t b) { return b > a ? p[b] - p[a] : 0; }

static double sums_mse(const hist_sums *h, double lo, double hi, uint32_t below_end, uint32_t above_start, bool i16)
{
    /* bins [0, below_end) lie below lo, [above_start, BINS) above hi, the rest inside */
    const uint32_t B = TOSAC_QUANT_HIST_BINS, Z = TOSAC_QUANT_HIST_ZERO;
    double e = 0;
    e += range_sum(h->s2, 0, below_end) - 2 * lo * range_sum(h->s1, 0, below_end) + lo * lo * range_sum(h->c, 0, below_end);
    e += range_sum(h->s2, above_start, B) - 2 * hi * range_sum(h->s1, above_start, B) +
         hi * hi * range_sum(h->c, above_start, B);
    double inside = range_sum(h->c, below_end, above_start);
    if (below_end <= Z && Z < above_start) inside -= range_sum(h->c, Z, Z + 1); /* zero is exact */
    /* int8: (hi - lo)/255; symmetric int16: the larger side over 32767 */
    double step = i16 ? fmax(-lo, hi) / 32767.0 : (hi - lo) / 255.0;
    return e + inside * step * step / 12.0;
}

/* first bin whose center is above v / last bin + 1 whose center is below v (centers ascend) */
static uint32_t first_above(double v, uint32_t from)
{
    uint32_t b = from;
    while (b < TOSAC_QUANT_HIST_BINS && !(center(b) > v)) b++;
    return b;
}
static uint32_t end_below(double v, uint32_t from)
{
    uint32_t b = from; /* bins [0, b) have center < v */
    while (b > 0 && !(center(b - 1) < v)) b--;
    return b;
}

void tosac_quant_hist_range(const uint64_t *hist, tosac_quant_calib_method m, double min, double max, double *lo,
                            double *hi)
{
    tosac_quant_hist_range16(hist, m, false, min, max, lo, hi);
}

void tosac_quant_hist_range16(const uint64_t *hist, tosac_quant_calib_method m, bool int16, double min, double max,
                              double *lo, double *hi)
{
    *lo = min;
    *hi = max;
    if (m == TOSAC_QUANT_CALIB_MINMAX || !hist || !(min <= max)) return;
    const uint32_t B = TOSAC_QUANT_HIST_BINS, Z = TOSAC_QUANT_HIST_ZERO;
    double total = 0;
    for (uint32_t b = 0; b < B; b++) total += (double)hist[b];
    if (!(total > 0)) return;
    if (m == TOSAC_QUANT_CALIB_PERCENTILE) {
        double tail = int16 ? TOSAC_QUANT_PERCENTILE_TAIL16 : 1e-4;
        double want[2] = {tail * total, (1.0 - tail) * total}, got[2] = {min, max}, cum = 0;
        int k = 0;
        for (uint32_t b = 0; b < B && k < 2; b++) {
            double c = (double)hist[b];
            while (k < 2 && c > 0 && cum + c >= want[k]) {
                double el, eh;
                tosac_quant_hist_edges(b, &el, &eh);
                got[k] = el + (eh - el) * ((want[k] - cum) / c);
                k++;
            }
            cum += c;
        }
        *lo = got[0] < min ? min : got[0] > max ? max : got[0];
        *hi = got[1] > max ? max : got[1] < min ? min : got[1];
        if (*lo > *hi) *lo = *hi;
        return;
    }
    /* mse: candidate bounds are the outer edges of the bins between 0 and the observed extremes
       (the extreme itself for its own bin) */
    hist_sums h;
    h.c = calloc(B + 1, sizeof *h.c);
    h.s1 = calloc(B + 1, sizeof *h.s1);
    h.s2 = calloc(B + 1, sizeof *h.s2);
    if (!h.c || !h.s1 || !h.s2) goto out; /* out of memory: keep min/max */
    for (uint32_t b = 0; b < B; b++) {
        double c = (double)hist[b], v = center(b);
        h.c[b + 1] = h.c[b] + c;
        h.s1[b + 1] = h.s1[b] + c * v;
        h.s2[b + 1] = h.s2[b] + c * v * v;
    }
    const double L0 = min < 0 ? min : 0, H0 = max > 0 ? max : 0;
    double L = L0, H = H0;
    uint32_t bmin = tosac_quant_hist_bin((float)L0), bmax = tosac_quant_hist_bin((float)H0);
    if (bmin > Z) bmin = Z;
    if (bmax < Z || bmax >= B) bmax = Z;
    double best = sums_mse(&h, L, H, end_below(L, Z), first_above(H, Z), int16);
    for (int iter = 0; iter < 16; iter++) {
        bool moved = false;
        uint32_t be = end_below(L, Z);
        /* best hi for this lo: from the top down, strictly better only (ties keep the wider range) */
        for (uint32_t j = bmax + 1; j-- > Z;) {
            double el, eh;
            tosac_quant_hist_edges(j, &el, &eh);
            double cand = j == bmax || eh > H0 ? H0 : eh;
            double e = sums_mse(&h, L, cand, be, first_above(cand, j), int16);
            if (e < best) best = e, H = cand, moved = true;
        }
        uint32_t fa = first_above(H, Z);
        for (uint32_t i = bmin; i <= Z; i++) {
            double el, eh;
            tosac_quant_hist_edges(i, &el, &eh);
            double cand = i == bmin || el < L0 ? L0 : el;
            double e = sums_mse(&h, cand, H, end_below(cand, i + 1), fa, int16);
            if (e < best) best = e, L = cand, moved = true;
        }
        if (!moved) break;
    }
    *lo = min < L ? L : min;
    *hi = max > H ? H : max;
out:
    free(h.c);
    free(h.s1);
    free(h.s2);
}
