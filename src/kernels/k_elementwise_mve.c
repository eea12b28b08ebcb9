/*
 * Helium kernels of the binary family (k_mve.h): int32 ADD and SUB (wrapping vector arithmetic;
 * the REQUIRE that the exact result fits int32 is the sign test of k_elementwise.c, OR-ed over
 * the vectors) and MUL of int8 / int16 / int32 to int32 with shift 0 (the int8 / int16 products
 * are exact; int32 keeps the low 32 bits, as the portable kernel does), 4 values per vector.
 * Operands of the output's shape, the second one possibly a single value broadcast (a softmax's
 * x - max(x)); other calls go to the portable kernel.
 */
#include "kernels/k_mve.h"
#include "kernels/kutil.h"

/* The calls this kernel takes, from shapes, types and the shift's value (plain C: emit-c asks
   tosac_binary_mve_owns on the host). */
static bool emve_takes(const tosac_kcall *c)
{
    if (!c->in || !c->out || c->n_in < 2 || c->n_out < 1) return false;
    const tosac_ktensor *a = &c->in[0], *b = &c->in[1], *out = &c->out[0];
    if (out->nelem < 1 || a->nelem != out->nelem || (b->nelem != out->nelem && b->nelem != 1) ||
        a->dtype != b->dtype || out->dtype != TOSAC_DTYPE_INT32)
        return false;
    if (c->op == TOSAC_OP_ADD || c->op == TOSAC_OP_SUB) return a->dtype == TOSAC_DTYPE_INT32;
    if (c->op != TOSAC_OP_MUL || c->n_in < 3 || !c->in[2].data || c->in[2].nelem < 1 || tosac_kload_int(&c->in[2], 0) != 0)
        return false;
    return a->dtype == TOSAC_DTYPE_INT8 || a->dtype == TOSAC_DTYPE_INT16 || a->dtype == TOSAC_DTYPE_INT32;
}

bool tosac_binary_mve_owns(const tosac_kcall *c)
{
    return emve_takes(c) && (c->op != TOSAC_OP_MUL || c->in[2].constant);
}

tosac_status tosac_kernel_binary_mve(tosac_kcall *c)
{
    tosac_status st;
    return tosac_binary_mve_run(c, &st) ? st : tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "binary: not a Helium call");
}

#ifdef __ARM_FEATURE_MVE
#include <arm_mve.h>

__attribute__((always_inline)) static inline int32x4_t emve_load(const tosac_ktensor *t, uint32_t i, mve_pred16_t p)
{
    switch (t->dtype) {
    case TOSAC_DTYPE_INT8: return vldrbq_z_s32((const int8_t *)t->data + i, p);
    case TOSAC_DTYPE_INT16: return vldrhq_z_s32((const int16_t *)t->data + i, p);
    default: return vldrwq_z_s32((const int32_t *)t->data + i, p);
    }
}

bool tosac_binary_mve_run(tosac_kcall *c, tosac_status *st)
{
    if (!tosac_kio_ok(c, 2, 1) || !emve_takes(c)) return false;
    const tosac_ktensor *a = &c->in[0], *b = &c->in[1], *out = &c->out[0];
    const uint32_t n = (uint32_t)out->nelem;
    int32_t *y = out->data;
    /* a broadcast second operand: its value in the active lanes, 0 in the others (as a
       zeroing load gives: no overflow reported for them) */
    const bool bcast = b->nelem != out->nelem;
    const int32x4_t bv = vdupq_n_s32(bcast ? (int32_t)tosac_kload_int(b, 0) : 0), zero = vdupq_n_s32(0);
    if (c->op == TOSAC_OP_ADD || c->op == TOSAC_OP_SUB) {
        const int32_t *x0 = a->data, *x1 = b->data;
        const bool add = c->op == TOSAC_OP_ADD;
        int32x4_t bad = vdupq_n_s32(0);
        for (uint32_t i = 0; i < n; i += 4) {
            const mve_pred16_t p = vctp32q(n - i);
            const int32x4_t u = vld1q_z_s32(x0 + i, p), v = bcast ? vpselq_s32(bv, zero, p) : vld1q_z_s32(x1 + i, p);
            const int32x4_t r = add ? vaddq_s32(u, v) : vsubq_s32(u, v);
            /* overflow: sum iff both operands' signs differ from the result's; difference iff the
               operands' signs differ and the result's differs from a's (inactive lanes: 0) */
            bad = vorrq_s32(bad, add ? vandq_s32(veorq_s32(u, r), veorq_s32(v, r))
                                     : vandq_s32(veorq_s32(u, v), veorq_s32(u, r)));
            vst1q_p_s32(y + i, r, p);
        }
        *st = vminvq_s32(0, bad) < 0 ? tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE,
                                                   add ? "ADD: REQUIRE the sum fits INT32 failed"
                                                       : "SUB: REQUIRE the difference fits INT32 failed")
                                     : TOSAC_OK;
        return true;
    }
    if (c->op == TOSAC_OP_MUL) {
        for (uint32_t i = 0; i < n; i += 4) {
            const mve_pred16_t p = vctp32q(n - i);
            vst1q_p_s32(y + i, vmulq_s32(emve_load(a, i, p), bcast ? bv : emve_load(b, i, p)), p);
        }
        *st = TOSAC_OK;
        return true;
    }
    return false;
}

#else

bool tosac_binary_mve_run(tosac_kcall *c, tosac_status *st)
{
    (void)c, (void)st;
    return false;
}

#endif
