/*
 * Element access and broadcasting helpers shared by the kernels. The per-element loaders switch
 * on the dtype: use them for the 16-bit and 8-bit float types, precise (f64) mode and cold paths;
 * hot paths (fp32, int8/16/32) index the typed arrays directly.
 */
#ifndef TOSAC_KERNELS_KUTIL_H
#define TOSAC_KERNELS_KUTIL_H

#include "core/fp.h"
#include "kernels/kernel.h"
#include "kernels/quant_math.h"

/* Any FP element (or f64 storage) as double. */
static inline double tosac_kload_fp(const tosac_ktensor *t, int64_t i)
{
    if (t->f64) return ((const double *)t->data)[i];
    switch (t->dtype) {
    case TOSAC_DTYPE_FP32: return ((const float *)t->data)[i];
    case TOSAC_DTYPE_FP16: return tosac_fp16_to_fp32(((const uint16_t *)t->data)[i]);
    case TOSAC_DTYPE_BF16: return tosac_bf16_to_fp32(((const uint16_t *)t->data)[i]);
    case TOSAC_DTYPE_FP8E4M3: return tosac_fp8e4m3_to_fp32(((const uint8_t *)t->data)[i]);
    case TOSAC_DTYPE_FP8E5M2: return tosac_fp8e5m2_to_fp32(((const uint8_t *)t->data)[i]);
    default: return 0.0;
    }
}

/* Stores a double rounded once (to nearest even) to the tensor's FP storage type. */
static inline void tosac_kstore_fp(const tosac_ktensor *t, int64_t i, double v)
{
    if (t->f64) {
        ((double *)t->data)[i] = v;
        return;
    }
    switch (t->dtype) {
    case TOSAC_DTYPE_FP32: ((float *)t->data)[i] = tosac_fp64_to_fp32(v); break;
    case TOSAC_DTYPE_FP16: ((uint16_t *)t->data)[i] = tosac_fp64_to_fp16(v); break;
    case TOSAC_DTYPE_BF16: ((uint16_t *)t->data)[i] = tosac_fp64_to_bf16(v); break;
    case TOSAC_DTYPE_FP8E4M3: ((uint8_t *)t->data)[i] = tosac_fp64_to_fp8e4m3(v); break;
    case TOSAC_DTYPE_FP8E5M2: ((uint8_t *)t->data)[i] = tosac_fp64_to_fp8e5m2(v); break;
    default: break;
    }
}

/* Any integer-like element (BOOL, INT4..INT48, SHAPE) as int64. */
static inline int64_t tosac_kload_int(const tosac_ktensor *t, int64_t i)
{
    switch (t->dtype) {
    case TOSAC_DTYPE_BOOL: return ((const uint8_t *)t->data)[i] != 0;
    case TOSAC_DTYPE_INT4:
    case TOSAC_DTYPE_INT8: return ((const int8_t *)t->data)[i];
    case TOSAC_DTYPE_INT16: return ((const int16_t *)t->data)[i];
    case TOSAC_DTYPE_INT32: return ((const int32_t *)t->data)[i];
    case TOSAC_DTYPE_INT48:
    case TOSAC_DTYPE_SHAPE: return ((const int64_t *)t->data)[i];
    default: return 0;
    }
}

/* Stores the low bits of v in the tensor's integer storage (BOOL stores v != 0). */
static inline void tosac_kstore_int(const tosac_ktensor *t, int64_t i, int64_t v)
{
    switch (t->dtype) {
    case TOSAC_DTYPE_BOOL: ((uint8_t *)t->data)[i] = v != 0; break;
    case TOSAC_DTYPE_INT4: ((int8_t *)t->data)[i] = (int8_t)tosac_wrap(v, 4); break;
    case TOSAC_DTYPE_INT8: ((int8_t *)t->data)[i] = (int8_t)tosac_wrap(v, 8); break;
    case TOSAC_DTYPE_INT16: ((int16_t *)t->data)[i] = (int16_t)tosac_wrap(v, 16); break;
    case TOSAC_DTYPE_INT32: ((int32_t *)t->data)[i] = (int32_t)tosac_wrap(v, 32); break;
    case TOSAC_DTYPE_INT48: ((int64_t *)t->data)[i] = tosac_wrap(v, 48); break;
    case TOSAC_DTYPE_SHAPE: ((int64_t *)t->data)[i] = v; break;
    default: break;
    }
}

/* Range of the integer type: [lo, hi]. */
static inline void tosac_kint_range(tosac_dtype t, int64_t *lo, int64_t *hi)
{
    unsigned bits = tosac_dtype_bits(t);
    if (t == TOSAC_DTYPE_BOOL) bits = 1;
    if (bits >= 64 || bits == 0) {
        *lo = INT64_MIN;
        *hi = INT64_MAX;
        return;
    }
    *hi = ((int64_t)1 << (bits - 1)) - 1;
    *lo = -*hi - 1;
}

/*
 * Element strides of `t` viewed with the output's rank `rank` and shape `out_shape` (equal ranks,
 * as TOSA requires): dims of size 1 that the output broadcasts get stride 0.
 */
static inline void tosac_kbroadcast_strides(const tosac_ktensor *t, int32_t rank, const int64_t *out_shape,
                                            int64_t *strides)
{
    int64_t s = 1;
    for (int32_t d = rank - 1; d >= 0; d--) {
        int64_t dim = d < t->rank ? t->shape[d] : 1;
        strides[d] = (dim == 1 && out_shape[d] != 1) ? 0 : s;
        s *= dim;
    }
}

/* ---- call plumbing shared by the kernel families ------------------------------------------- */

/* Scalar attribute `id`, or `def` when the call has no attributes or the field is absent. */
static inline int64_t tosac_kattr_or(const tosac_kcall *c, unsigned id, int64_t def)
{
    return c->attr ? tosac_kattr_int(c, id, def) : def;
}

/* Entry i of the int32 list attribute `id`, or `def` when the call has no attributes or the field
   is absent or shorter. */
static inline int64_t tosac_kattr_at(const tosac_kcall *c, unsigned id, int i, int64_t def)
{
    const int32_t *v = c->attr ? tosac_kattr_ints(c, id) : NULL;
    if (!v || !c->attr[id].present || (uint32_t)i >= c->attr[id].len) return def;
    return v[i];
}

/* Operands the kernel needs: at least nin inputs and nout outputs, each with data and elements. */
static inline bool tosac_kio_ok(const tosac_kcall *c, uint32_t nin, uint32_t nout)
{
    if (!c->in || !c->out || c->n_in < nin || c->n_out < nout) return false;
    for (uint32_t i = 0; i < nin; i++)
        if (!c->in[i].data || c->in[i].nelem < 1) return false;
    for (uint32_t i = 0; i < nout; i++)
        if (!c->out[i].data || c->out[i].nelem < 1) return false;
    return true;
}

/* Bytes of one element of `t` in execution storage. */
static inline size_t tosac_kelem_size(const tosac_ktensor *t) { return tosac_exec_elem_size(t->dtype, t->f64); }

/* Dimension i of t, 1 beyond its rank. */
static inline int64_t tosac_kdim(const tosac_ktensor *t, int32_t i) { return i < t->rank ? t->shape[i] : 1; }

/* Part i of n items cut into parts pieces as even as can be (the first n % parts one longer):
   its first item *b and its length *len (size_t: no 64-bit division on a Cortex-M). */
static inline void tosac_keven_part(size_t n, size_t parts, size_t i, size_t *b, size_t *len)
{
    const size_t q = n / parts, r = n % parts;
    *b = i * q + (i < r ? i : r);
    *len = q + (i < r);
}

/* n rounded up to a multiple of 64 (scratch sub-buffer offsets). */
static inline size_t tosac_kalign64(size_t n) { return (n + 63u) & ~(size_t)63u; }

/*
 * Value of a zero-point operand (element 0; 0 when it has no elements) as int64. A floating-point
 * zero point reads as 0 and sets *nonzero_fp when it is not 0.0 (callers reject that).
 */
static inline int64_t tosac_kzp(const tosac_ktensor *t, bool *nonzero_fp)
{
    if (t->nelem < 1) return 0;
    if (t->f64 || tosac_dtype_is_float(t->dtype)) {
        if (tosac_kload_fp(t, 0) != 0.0) *nonzero_fp = true;
        return 0;
    }
    return tosac_kload_int(t, 0);
}

/* Two's complement reinterpretation of the low bits, without implementation-defined casts. */
static inline int8_t tosac_ku8_to_i8(uint32_t u)
{
    u &= 0xFFu;
    return u < 0x80u ? (int8_t)u : (int8_t)((int32_t)u - 256);
}
static inline int16_t tosac_ku16_to_i16(uint32_t u)
{
    u &= 0xFFFFu;
    return u < 0x8000u ? (int16_t)u : (int16_t)((int32_t)u - 65536);
}
static inline int32_t tosac_ku32_to_i32(uint32_t u)
{
    return u <= (uint32_t)INT32_MAX ? (int32_t)u : (int32_t)(u - 0x80000000u) - INT32_MAX - 1;
}

/* y[i] = tb[x[i] + 128] for a 256-entry table, in isa's variant (k_activation.c: TABLE, and
   RESCALE of int8 through its prepared table of results). */
void tosac_ktable_i8(const int8_t *x, int64_t n, const int8_t *tb, int8_t *y, uint32_t isa);

#endif
