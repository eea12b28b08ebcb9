/*
 * Helium kernels of the reduce family (k_mve.h): REDUCE_SUM of int32 and REDUCE_MAX / REDUCE_MIN
 * of int8 / int16 / int32, along any axis. Along an axis that is not the last, 4 (SUM) or 16 / 8 / 4
 * (MAX, MIN) outputs per vector; along the last one (a softmax's row), one output at a time: SUM
 * on one lane, MAX / MIN a vector of the row then across it. A sum is accumulated in the portable
 * kernel's order (k = 0, 1, ... along the axis), with the REQUIRE that every partial sum fits
 * int32 checked on the wrapped sums (k_elementwise_mve.c's sign test, OR-ed over the steps).
 * Other reductions go to the portable kernel.
 */
#include "kernels/k_mve.h"
#include "kernels/kutil.h"

/* outer x len x inner of the reduction (every reduce op's attribute table has axis at field 0);
   false for the calls this file does not take (plain C: emit-c asks tosac_reduce_mve_owns). */
static bool rdmve_takes(const tosac_kcall *c, int32_t g[3])
{
    if (!c->in || !c->out || c->n_in < 1 || c->n_out < 1) return false;
    const tosac_ktensor *in = &c->in[0], *out = &c->out[0];
    const tosac_dtype t = in->dtype;
    if (out->dtype != t) return false;
    if (c->op == TOSAC_OP_REDUCE_SUM) {
        if (t != TOSAC_DTYPE_INT32) return false;
    } else if (c->op == TOSAC_OP_REDUCE_MAX || c->op == TOSAC_OP_REDUCE_MIN) {
        if (t != TOSAC_DTYPE_INT8 && t != TOSAC_DTYPE_INT16 && t != TOSAC_DTYPE_INT32) return false;
    } else {
        return false;
    }
    const int64_t axis = tosac_kattr_int(c, TOSAC_ATTR_REDUCE_SUM_axis, 0);
    if (axis < 0 || axis >= in->rank || in->nelem < 1 || in->nelem > INT32_MAX) return false;
    int64_t outer = 1, inner = 1;
    for (int32_t d = 0; d < axis; d++) outer *= in->shape[d];
    for (int32_t d = (int32_t)axis + 1; d < in->rank; d++) inner *= in->shape[d];
    g[0] = (int32_t)outer, g[1] = (int32_t)in->shape[axis], g[2] = (int32_t)inner;
    return out->nelem == outer * inner;
}

bool tosac_reduce_mve_owns(const tosac_kcall *c)
{
    int32_t g[3];
    return rdmve_takes(c, g);
}

tosac_status tosac_kernel_reduce_mve(tosac_kcall *c)
{
    tosac_status st;
    return tosac_reduce_mve_run(c, &st) ? st : tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "REDUCE: not a Helium call");
}

#ifdef __ARM_FEATURE_MVE
#include <arm_mve.h>

static tosac_status rdmve_sum(tosac_kcall *c, const int32_t g[3])
{
    const int32_t outer = g[0], len = g[1], inner = g[2];
    const int32_t *x = c->in[0].data;
    int32_t *y = c->out[0].data;
    int32x4_t bad = vdupq_n_s32(0);
    for (int32_t o = 0; o < outer; o++)
        for (int32_t i = 0; i < inner; i += 4) {
            const mve_pred16_t p = vctp32q((uint32_t)(inner - i));
            const int32_t *r = x + o * len * inner + i;
            int32x4_t a = vdupq_n_s32(0);
            for (int32_t k = 0; k < len; k++, r += inner) {
                const int32x4_t v = vld1q_z_s32(r, p), s = vaddq_s32(a, v);
                bad = vorrq_s32(bad, vandq_s32(veorq_s32(a, s), veorq_s32(v, s)));
                a = s;
            }
            vst1q_p_s32(y + o * inner + i, a, p);
        }
    return vminvq_s32(0, bad) < 0 ? tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE, "REDUCE_SUM: i32 accumulator overflow (REQUIRE)")
                                  : TOSAC_OK;
}

/* MAX / MIN of one element type: LANES per vector, VT its vector type, S its intrinsic suffix. */
#define RDMVE_MINMAX(NAME, T, LANES, VT, S, CTP, TMIN, TMAX)                                                      \
    static void NAME(const T *x, T *y, const int32_t g[3], bool mx)                                               \
    {                                                                                                              \
        const int32_t outer = g[0], len = g[1], inner = g[2];                                                     \
        const VT ident = vdupq_n_##S(mx ? TMIN : TMAX);                                                            \
        for (int32_t o = 0; o < outer; o++) {                                                                      \
            const T *row = x + o * len * inner;                                                                    \
            if (inner == 1) { /* along the last axis: a vector of the row, then across it */                     \
                VT a = ident;                                                                                      \
                for (int32_t k = 0; k < len; k += LANES) {                                                         \
                    const mve_pred16_t p = CTP((uint32_t)(len - k));                                               \
                    const VT v = vld1q_z_##S(row + k, p);                                                          \
                    a = mx ? vmaxq_m_##S(a, a, v, p) : vminq_m_##S(a, a, v, p);                                    \
                }                                                                                                  \
                y[o] = (T)(mx ? vmaxvq_##S(TMIN, a) : vminvq_##S(TMAX, a));                                       \
                continue;                                                                                          \
            }                                                                                                      \
            for (int32_t i = 0; i < inner; i += LANES) {                                                           \
                const mve_pred16_t p = CTP((uint32_t)(inner - i));                                                 \
                VT a = ident;                                                                                      \
                for (int32_t k = 0; k < len; k++) {                                                                \
                    const VT v = vld1q_z_##S(row + k * inner + i, p);                                              \
                    a = mx ? vmaxq_##S(a, v) : vminq_##S(a, v);                                                    \
                }                                                                                                  \
                vst1q_p_##S(y + o * inner + i, a, p);                                                              \
            }                                                                                                      \
        }                                                                                                          \
    }
RDMVE_MINMAX(rdmve_mm_i8, int8_t, 16, int8x16_t, s8, vctp8q, INT8_MIN, INT8_MAX)
RDMVE_MINMAX(rdmve_mm_i16, int16_t, 8, int16x8_t, s16, vctp16q, INT16_MIN, INT16_MAX)
RDMVE_MINMAX(rdmve_mm_i32, int32_t, 4, int32x4_t, s32, vctp32q, INT32_MIN, INT32_MAX)
#undef RDMVE_MINMAX

bool tosac_reduce_mve_run(tosac_kcall *c, tosac_status *st)
{
    int32_t g[3];
    if (!tosac_kio_ok(c, 1, 1) || !rdmve_takes(c, g)) return false;
    if (c->op == TOSAC_OP_REDUCE_SUM) {
        *st = rdmve_sum(c, g);
        return true;
    }
    const bool mx = c->op == TOSAC_OP_REDUCE_MAX;
    switch (c->in[0].dtype) {
    case TOSAC_DTYPE_INT8: rdmve_mm_i8(c->in[0].data, c->out[0].data, g, mx); break;
    case TOSAC_DTYPE_INT16: rdmve_mm_i16(c->in[0].data, c->out[0].data, g, mx); break;
    default: rdmve_mm_i32(c->in[0].data, c->out[0].data, g, mx); break;
    }
    *st = TOSAC_OK;
    return true;
}

#else

bool tosac_reduce_mve_run(tosac_kcall *c, tosac_status *st)
{
    (void)c, (void)st;
    return false;
}

#endif
