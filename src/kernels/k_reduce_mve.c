/*
 * Helium REDUCE_SUM of int32 along an axis that is not the last (k_mve.h): 4 outputs per vector,
 * each summed in the portable kernel's order (k = 0, 1, ... along the axis), with the REQUIRE
 * that every partial sum fits int32 checked on the wrapped sums (k_elementwise_mve.c's sign
 * test, OR-ed over the steps). Reductions along the last axis go to the portable kernel.
 */
#include "kernels/k_mve.h"
#include "kernels/kutil.h"

#ifdef __ARM_FEATURE_MVE
#include <arm_mve.h>

bool tosac_reduce_mve_run(tosac_kcall *c, tosac_status *st)
{
    if (c->op != TOSAC_OP_REDUCE_SUM || !tosac_kio_ok(c, 1, 1)) return false;
    const tosac_ktensor *in = &c->in[0], *out = &c->out[0];
    const int64_t axis = tosac_kattr_int(c, TOSAC_ATTR_REDUCE_SUM_axis, 0);
    if (in->dtype != TOSAC_DTYPE_INT32 || out->dtype != TOSAC_DTYPE_INT32 || axis < 0 || axis >= in->rank - 1)
        return false;
    int64_t outer = 1, inner = 1;
    for (int32_t d = 0; d < axis; d++) outer *= in->shape[d];
    for (int32_t d = (int32_t)axis + 1; d < in->rank; d++) inner *= in->shape[d];
    const int64_t len = in->shape[axis];
    if (outer * inner * len > INT32_MAX) return false;
    const int32_t *x = in->data;
    int32_t *y = out->data;
    int32x4_t bad = vdupq_n_s32(0);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i += 4) {
            const mve_pred16_t p = vctp32q((uint32_t)(inner - i < 4 ? inner - i : 4));
            const int32_t *r = x + (o * len) * inner + i;
            int32x4_t a = vdupq_n_s32(0);
            for (int64_t k = 0; k < len; k++, r += inner) {
                const int32x4_t v = vld1q_z_s32(r, p), s = vaddq_s32(a, v);
                bad = vorrq_s32(bad, vandq_s32(veorq_s32(a, s), veorq_s32(v, s)));
                a = s;
            }
            vst1q_p_s32(y + o * inner + i, a, p);
        }
    *st = vminvq_s32(0, bad) < 0 ? tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE, "REDUCE_SUM: i32 accumulator overflow (REQUIRE)")
                                 : TOSAC_OK;
    return true;
}

#else

bool tosac_reduce_mve_run(tosac_kcall *c, tosac_status *st)
{
    (void)c, (void)st;
    return false;
}

#endif
