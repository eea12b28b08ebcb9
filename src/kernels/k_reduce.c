/*
 * Reduction kernels: REDUCE_ALL, REDUCE_ANY, REDUCE_MAX, REDUCE_MIN, REDUCE_PRODUCT, REDUCE_SUM
 * (TOSA.md §B.3 "Reductions").
 *
 * The input is viewed as [outer, len, inner] around the reduced axis; the output is [outer, inner].
 * Each output row is produced in chunks of up to KR_CHUNK inner elements held in a local
 * accumulator array; every input row of the axis is folded into the chunk in axis order, so each
 * output element sees its inputs in the order the spec's pseudocode (and the reference model's
 * sequential reducers) uses.
 *
 * Semantics (matching the reference model):
 *   MAX/MIN FP: acc = apply_max/min(acc, value, nan_mode) starting from -inf/+inf (PROPAGATE) or
 *     NaN (IGNORE): max keeps the accumulator on ties (a >= b ? a : b), min takes the new value
 *     (a < b ? a : b); PROPAGATE yields the default quiet NaN, IGNORE skips NaNs (all-NaN gives the
 *     last NaN). fp16/bf16 are compared as fp32, which is exact.
 *   SUM i32: REQUIRE every partial sum fits i32 (UNPREDICTABLE otherwise).
 *   SUM/PRODUCT FP: fp32 accumulates in fp32; fp16 and bf16 accumulate in fp32 and round once to
 *     the output type; precise mode (f64) accumulates in double.
 */
#include <string.h>

#include "kernels/k_mve.h"
#include "kernels/kutil.h"

/* GCC vectorises the chunk loops (unknown trip counts) only at -O3; IEEE results do not change (no
   reassociation: the fp accumulators stay one per element, in the spec's order). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif

#define KR_CHUNK 256

typedef struct kr_geom {
    int64_t outer, len, inner;
} kr_geom;

static float kr_qnan_f(void) { return tosac_fp32_from_bits(0x7FC00000u); }
static double kr_qnan_d(void) { return tosac_fp64_from_bits(0x7FF8000000000000ull); }
static float kr_inf_f(void) { return tosac_fp32_from_bits(0x7F800000u); }
static double kr_inf_d(void) { return tosac_fp64_from_bits(0x7FF0000000000000ull); }

/* apply_max_s / apply_min_s with nan_mode (ignore = IGNORE). */
#define KR_FMAXMIN(T, SFX, QNAN)                                                   \
    static inline T kr_max_##SFX(T a, T b, bool ignore)                           \
    {                                                                              \
        if (a != a || b != b) return ignore ? (a != a ? b : a) : QNAN;            \
        return a >= b ? a : b;                                                     \
    }                                                                              \
    static inline T kr_min_##SFX(T a, T b, bool ignore)                           \
    {                                                                              \
        if (a != a || b != b) return ignore ? (a != a ? b : a) : QNAN;            \
        return a < b ? a : b;                                                      \
    }
KR_FMAXMIN(float, f, kr_qnan_f())
KR_FMAXMIN(double, d, kr_qnan_d())
#undef KR_FMAXMIN

/*
 * Defines kr_<NAME>(g, in, out, ctx): ET input/output element, AT accumulator, INIT the initial
 * accumulator, LOAD(x) converts an element to AT, STEP(a, v) folds v into a (an lvalue), STORE(a)
 * converts back. `ignore` (the nan_mode flag) is visible to the macros.
 */
#define KR_DEFINE(NAME, ET, AT, INIT, LOAD, STEP, STORE)                                        \
    static void kr_##NAME(const kr_geom *g, const void *in_, void *out_, bool ignore)           \
    {                                                                                           \
        (void)ignore;                                                                           \
        const ET *in = (const ET *)in_;                                                         \
        ET *out = (ET *)out_;                                                                   \
        if (g->inner == 1) { /* reducing the innermost axis: one scalar per contiguous row */  \
            for (int64_t o = 0; o < g->outer; o++) {                                            \
                const ET *row = in + o * g->len;                                                \
                AT a = (INIT);                                                                  \
                for (int64_t k = 0; k < g->len; k++) {                                          \
                    const AT v = LOAD(row[k]);                                                  \
                    STEP(a, v);                                                                 \
                }                                                                               \
                out[o] = STORE(a);                                                              \
            }                                                                                   \
            return;                                                                             \
        }                                                                                       \
        AT acc[KR_CHUNK];                                                                       \
        for (int64_t o = 0; o < g->outer; o++) {                                                \
            const ET *ib = in + o * g->len * g->inner;                                          \
            ET *ob = out + o * g->inner;                                                        \
            for (int64_t i0 = 0; i0 < g->inner; i0 += KR_CHUNK) {                               \
                const int64_t n = g->inner - i0 < KR_CHUNK ? g->inner - i0 : KR_CHUNK;          \
                for (int64_t j = 0; j < n; j++) acc[j] = (INIT);                                \
                const ET *row = ib + i0;                                                        \
                for (int64_t k = 0; k < g->len; k++, row += g->inner)                           \
                    for (int64_t j = 0; j < n; j++) {                                           \
                        const AT v = LOAD(row[j]);                                              \
                        STEP(acc[j], v);                                                        \
                    }                                                                           \
                for (int64_t j = 0; j < n; j++) ob[i0 + j] = STORE(acc[j]);                     \
            }                                                                                   \
        }                                                                                       \
    }

#define KR_ID(x) (x)
#define KR_H2F(x) tosac_fp16_to_fp32(x)
#define KR_B2F(x) tosac_bf16_to_fp32(x)
#define KR_F2H(x) tosac_fp32_to_fp16(x)
#define KR_F2B(x) tosac_fp32_to_bf16(x)

#define KR_AND(a, v) ((a) = (uint8_t)((a) & ((v) != 0)))
#define KR_OR(a, v) ((a) = (uint8_t)((a) | ((v) != 0)))
#define KR_IMAX(a, v) ((a) = (v) > (a) ? (v) : (a))
#define KR_IMIN(a, v) ((a) = (v) < (a) ? (v) : (a))
#define KR_FMAX(a, v) ((a) = kr_max_f((a), (v), ignore))
#define KR_FMIN(a, v) ((a) = kr_min_f((a), (v), ignore))
#define KR_DMAX(a, v) ((a) = kr_max_d((a), (v), ignore))
#define KR_DMIN(a, v) ((a) = kr_min_d((a), (v), ignore))
#define KR_ADD(a, v) ((a) = (a) + (v))
#define KR_MUL(a, v) ((a) = (a) * (v))

KR_DEFINE(all, uint8_t, uint8_t, 1, KR_ID, KR_AND, KR_ID)
KR_DEFINE(any, uint8_t, uint8_t, 0, KR_ID, KR_OR, KR_ID)

KR_DEFINE(max_i8, int8_t, int8_t, INT8_MIN, KR_ID, KR_IMAX, KR_ID)
KR_DEFINE(max_i16, int16_t, int16_t, INT16_MIN, KR_ID, KR_IMAX, KR_ID)
KR_DEFINE(max_i32, int32_t, int32_t, INT32_MIN, KR_ID, KR_IMAX, KR_ID)
KR_DEFINE(min_i8, int8_t, int8_t, INT8_MAX, KR_ID, KR_IMIN, KR_ID)
KR_DEFINE(min_i16, int16_t, int16_t, INT16_MAX, KR_ID, KR_IMIN, KR_ID)
KR_DEFINE(min_i32, int32_t, int32_t, INT32_MAX, KR_ID, KR_IMIN, KR_ID)

KR_DEFINE(max_f32, float, float, ignore ? kr_qnan_f() : -kr_inf_f(), KR_ID, KR_FMAX, KR_ID)
KR_DEFINE(min_f32, float, float, ignore ? kr_qnan_f() : kr_inf_f(), KR_ID, KR_FMIN, KR_ID)
KR_DEFINE(max_f16, uint16_t, float, ignore ? kr_qnan_f() : -kr_inf_f(), KR_H2F, KR_FMAX, KR_F2H)
KR_DEFINE(min_f16, uint16_t, float, ignore ? kr_qnan_f() : kr_inf_f(), KR_H2F, KR_FMIN, KR_F2H)
KR_DEFINE(max_bf16, uint16_t, float, ignore ? kr_qnan_f() : -kr_inf_f(), KR_B2F, KR_FMAX, KR_F2B)
KR_DEFINE(min_bf16, uint16_t, float, ignore ? kr_qnan_f() : kr_inf_f(), KR_B2F, KR_FMIN, KR_F2B)
KR_DEFINE(max_f64, double, double, ignore ? kr_qnan_d() : -kr_inf_d(), KR_ID, KR_DMAX, KR_ID)
KR_DEFINE(min_f64, double, double, ignore ? kr_qnan_d() : kr_inf_d(), KR_ID, KR_DMIN, KR_ID)

KR_DEFINE(sum_f32, float, float, 0.0f, KR_ID, KR_ADD, KR_ID)
KR_DEFINE(sum_f16, uint16_t, float, 0.0f, KR_H2F, KR_ADD, KR_F2H)
KR_DEFINE(sum_bf16, uint16_t, float, 0.0f, KR_B2F, KR_ADD, KR_F2B)
KR_DEFINE(sum_f64, double, double, 0.0, KR_ID, KR_ADD, KR_ID)
KR_DEFINE(prod_f32, float, float, 1.0f, KR_ID, KR_MUL, KR_ID)
KR_DEFINE(prod_f16, uint16_t, float, 1.0f, KR_H2F, KR_MUL, KR_F2H)
KR_DEFINE(prod_bf16, uint16_t, float, 1.0f, KR_B2F, KR_MUL, KR_F2B)
KR_DEFINE(prod_f64, double, double, 1.0, KR_ID, KR_MUL, KR_ID)

/* REDUCE_SUM i32: exact, REQUIRE every partial sum within i32. Returns false on overflow. */
static bool kr_sum_i32(const kr_geom *g, const int32_t *in, int32_t *out)
{
    if (g->inner == 1) {
        for (int64_t o = 0; o < g->outer; o++) {
            const int32_t *row = in + o * g->len;
            int64_t a = 0;
            for (int64_t k = 0; k < g->len; k++) {
                a += row[k];
                if (a < INT32_MIN || a > INT32_MAX) return false;
            }
            out[o] = (int32_t)a;
        }
        return true;
    }
    /* int32 lanes, wrapping: the first partial sum outside int32 is exactly the first add whose
       operands have one sign and whose wrapped sum the other (the loop vectorises in 32-bit lanes) */
    uint32_t acc[KR_CHUNK];
    for (int64_t o = 0; o < g->outer; o++) {
        const int32_t *ib = in + o * g->len * g->inner;
        int32_t *ob = out + o * g->inner;
        for (int64_t i0 = 0; i0 < g->inner; i0 += KR_CHUNK) {
            const int64_t n = g->inner - i0 < KR_CHUNK ? g->inner - i0 : KR_CHUNK;
            for (int64_t j = 0; j < n; j++) acc[j] = 0;
            const int32_t *row = ib + i0;
            uint32_t ovf = 0;
            for (int64_t k = 0; k < g->len; k++, row += g->inner)
                for (int64_t j = 0; j < n; j++) {
                    const uint32_t a = acc[j], x = (uint32_t)row[j], s = a + x;
                    ovf |= (a ^ s) & (x ^ s);
                    acc[j] = s;
                }
            if (ovf >> 31) return false;
            for (int64_t j = 0; j < n; j++) ob[i0 + j] = tosac_ku32_to_i32(acc[j]);
        }
    }
    return true;
}

typedef void (*kr_fn)(const kr_geom *, const void *, void *, bool);

/* The routine for (op, dtype, f64), or NULL. */
static kr_fn kr_pick(uint32_t op, tosac_dtype t, bool f64)
{
    const bool fp = tosac_dtype_is_float(t);
    if (fp && f64) {
        switch (op) {
        case TOSAC_OP_REDUCE_MAX: return kr_max_f64;
        case TOSAC_OP_REDUCE_MIN: return kr_min_f64;
        case TOSAC_OP_REDUCE_SUM: return kr_sum_f64;
        case TOSAC_OP_REDUCE_PRODUCT: return kr_prod_f64;
        default: return NULL;
        }
    }
    switch (op) {
    case TOSAC_OP_REDUCE_ALL: return t == TOSAC_DTYPE_BOOL ? kr_all : NULL;
    case TOSAC_OP_REDUCE_ANY: return t == TOSAC_DTYPE_BOOL ? kr_any : NULL;
    case TOSAC_OP_REDUCE_MAX:
        switch (t) {
        case TOSAC_DTYPE_INT8: return kr_max_i8;
        case TOSAC_DTYPE_INT16: return kr_max_i16;
        case TOSAC_DTYPE_INT32: return kr_max_i32;
        case TOSAC_DTYPE_FP32: return kr_max_f32;
        case TOSAC_DTYPE_FP16: return kr_max_f16;
        case TOSAC_DTYPE_BF16: return kr_max_bf16;
        default: return NULL;
        }
    case TOSAC_OP_REDUCE_MIN:
        switch (t) {
        case TOSAC_DTYPE_INT8: return kr_min_i8;
        case TOSAC_DTYPE_INT16: return kr_min_i16;
        case TOSAC_DTYPE_INT32: return kr_min_i32;
        case TOSAC_DTYPE_FP32: return kr_min_f32;
        case TOSAC_DTYPE_FP16: return kr_min_f16;
        case TOSAC_DTYPE_BF16: return kr_min_bf16;
        default: return NULL;
        }
    case TOSAC_OP_REDUCE_SUM:
        switch (t) {
        case TOSAC_DTYPE_FP32: return kr_sum_f32;
        case TOSAC_DTYPE_FP16: return kr_sum_f16;
        case TOSAC_DTYPE_BF16: return kr_sum_bf16;
        default: return NULL;
        }
    case TOSAC_OP_REDUCE_PRODUCT:
        switch (t) {
        case TOSAC_DTYPE_FP32: return kr_prod_f32;
        case TOSAC_DTYPE_FP16: return kr_prod_f16;
        case TOSAC_DTYPE_BF16: return kr_prod_bf16;
        default: return NULL;
        }
    default: return NULL;
    }
}

tosac_status tosac_kernel_reduce(tosac_kcall *c)
{
    tosac_status mst;
    if (c->isa == TOSAC_KISA_MVE && tosac_reduce_mve_run(c, &mst)) return mst;
    const tosac_ktensor *in = &c->in[0], *out = &c->out[0];
    const int32_t rank = in->rank;
    /* every reduce op's attribute table has axis at field 0 and (MAX/MIN) nan_mode at field 1 */
    const int64_t axis = tosac_kattr_int(c, TOSAC_ATTR_REDUCE_SUM_axis, 0);
    if (rank < 1 || axis < 0 || axis >= rank) return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "REDUCE: axis out of range");
    if (out->dtype != in->dtype) return tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "REDUCE: output type differs from input");
    bool ignore = false;
    if (c->op == TOSAC_OP_REDUCE_MAX || c->op == TOSAC_OP_REDUCE_MIN)
        ignore = tosac_kattr_int(c, TOSAC_ATTR_REDUCE_MAX_nan_mode, TOSAC_NAN_PROPAGATE) == TOSAC_NAN_IGNORE;
    kr_geom g = {1, in->shape[axis], 1};
    for (int32_t d = 0; d < axis; d++) g.outer *= in->shape[d];
    for (int32_t d = (int32_t)axis + 1; d < rank; d++) g.inner *= in->shape[d];
    if (c->op == TOSAC_OP_REDUCE_SUM && in->dtype == TOSAC_DTYPE_INT32) {
        if (!kr_sum_i32(&g, (const int32_t *)in->data, (int32_t *)out->data))
            return tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE, "REDUCE_SUM: i32 accumulator overflow (REQUIRE)");
        return TOSAC_OK;
    }
    const kr_fn fn = kr_pick(c->op, in->dtype, in->f64);
    if (!fn) return tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "REDUCE: operator/type combination not supported");
    fn(&g, in->data, out->data, ignore);
    return TOSAC_OK;
}

TOSAC_KERNEL_NO_PREPARE(reduce)
