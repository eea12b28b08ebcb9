/*
 * Quantization parameters (PT2E's rules as ExecuTorch's Arm quantizer configures them) and the
 * RESCALE multiplier/shift encoding of ExecuTorch's Arm backend. Everything here is plain
 * arithmetic in double; rounding is half to even (nearbyint in the default rounding mode), as
 * torch.round and Python's round are.
 */
#include <math.h>

#include "tosac/quant.h"

bool tosac_quant_multiplier(double scale, int32_t *multiplier, int32_t *shift)
{
    if (!(scale > 0) || !isfinite(scale)) return false;
    int exp = 0;
    double mant = frexp(scale, &exp); /* scale = mant * 2^exp, 0.5 <= mant < 1 */
    int64_t m = (int64_t)nearbyint(ldexp(mant, 31));
    if (m == ((int64_t)1 << 31)) { /* mant rounded up to 1.0: keep the multiplier in int32 */
        m >>= 1;
        exp += 1;
    }
    int64_t s = 31 - (int64_t)exp;
    if (s > 62) { /* tiny scales: fewer multiplier bits instead of an out-of-range shift */
        m >>= (s - 62);
        s = 62;
    }
    if (s < 2) return false;
    *multiplier = (int32_t)m;
    *shift = (int32_t)s;
    return true;
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
