/*
 * Helium kernels of the clamp and table families (k_mve.h): int8 / int16 CLAMP (vmax then vmin,
 * 16 or 8 values per vector) and the int8 TABLE (a byte gather from the 256-entry table at
 * x + 128, 16 values per vector). No prepared constants; other calls go to the portable kernels.
 */
#include "kernels/k_epilogue.h"
#include "kernels/k_mve.h"
#include "kernels/kutil.h"

/* The int8 TABLE calls this file takes (plain C: emit-c asks tosac_table_mve_owns). */
static bool tmve_takes(const tosac_kcall *c)
{
    return c->in && c->out && c->n_in >= 2 && c->n_out >= 1 && c->in[0].dtype == TOSAC_DTYPE_INT8 &&
           c->in[1].dtype == TOSAC_DTYPE_INT8 && c->out[0].dtype == TOSAC_DTYPE_INT8 && c->in[1].nelem == 256 &&
           c->out[0].nelem == c->in[0].nelem;
}

bool tosac_table_mve_owns(const tosac_kcall *c) { return tmve_takes(c); }

tosac_status tosac_kernel_table_mve(tosac_kcall *c)
{
    tosac_status st;
    return tosac_table_mve_run(c, &st) ? st : tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "TABLE: not a Helium call");
}

#ifdef __ARM_FEATURE_MVE
#include <arm_mve.h>

bool tosac_clamp_mve_run(tosac_kcall *c, tosac_status *st)
{
    int32_t lo, hi;
    if (!tosac_kio_ok(c, 1, 1) || c->out[0].nelem != c->in[0].nelem || c->out[0].dtype != c->in[0].dtype ||
        !tosac_clamp_int_bounds(c, &lo, &hi))
        return false;
    const uint32_t n = (uint32_t)c->in[0].nelem;
    if (c->in[0].dtype == TOSAC_DTYPE_INT8) {
        const int8_t *x = c->in[0].data;
        int8_t *y = c->out[0].data;
        const int8x16_t vl = vdupq_n_s8((int8_t)lo), vh = vdupq_n_s8((int8_t)hi);
        for (uint32_t i = 0; i < n; i += 16) {
            const mve_pred16_t p = vctp8q(n - i);
            vst1q_p_s8(y + i, vminq_s8(vmaxq_s8(vld1q_z_s8(x + i, p), vl), vh), p);
        }
    } else if (c->in[0].dtype == TOSAC_DTYPE_INT16) {
        const int16_t *x = c->in[0].data;
        int16_t *y = c->out[0].data;
        const int16x8_t vl = vdupq_n_s16((int16_t)lo), vh = vdupq_n_s16((int16_t)hi);
        for (uint32_t i = 0; i < n; i += 8) {
            const mve_pred16_t p = vctp16q(n - i);
            vst1q_p_s16(y + i, vminq_s16(vmaxq_s16(vld1q_z_s16(x + i, p), vl), vh), p);
        }
    } else {
        return false;
    }
    *st = TOSAC_OK;
    return true;
}

bool tosac_table_mve_run(tosac_kcall *c, tosac_status *st)
{
    if (!tosac_kio_ok(c, 2, 1) || !tmve_takes(c)) return false;
    const uint32_t n = (uint32_t)c->in[0].nelem;
    const int8_t *x = c->in[0].data, *tab = c->in[1].data;
    int8_t *y = c->out[0].data;
    for (uint32_t i = 0; i < n; i += 16) {
        const mve_pred16_t p = vctp8q(n - i);
        /* x + 128 as an unsigned byte offset: the sign bit flipped */
        const uint8x16_t idx = veorq_u8(vreinterpretq_u8_s8(vld1q_z_s8(x + i, p)), vdupq_n_u8(0x80));
        vst1q_p_s8(y + i, vldrbq_gather_offset_z_s8(tab, idx, p), p);
    }
    *st = TOSAC_OK;
    return true;
}

#else

bool tosac_clamp_mve_run(tosac_kcall *c, tosac_status *st)
{
    (void)c, (void)st;
    return false;
}
bool tosac_table_mve_run(tosac_kcall *c, tosac_status *st)
{
    (void)c, (void)st;
    return false;
}

#endif
