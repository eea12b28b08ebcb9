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

#include "kernels/k_gemm_avx2.h"
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
    int64_t chunks; /* chunks of KR_CHUNK inner positions per outer index (inner > 1) */
} kr_geom;

/* The items of a reduction, the tiles a parallel-for splits (never the reduced axis): each output
   row (inner == 1: one output), else each chunk of an outer index's inner positions. */
static size_t kr_items(const kr_geom *g) { return (size_t)(g->inner == 1 ? g->outer : g->outer * g->chunks); }

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
 * Defines kr_<NAME>(g, in, out, ignore, b0, b1) over the items [b0, b1) (kr_items): ET input/output
 * element, AT accumulator, INIT the initial accumulator, LOAD(x) converts an element to AT, STEP(a, v)
 * folds v into a (an lvalue), STORE(a) converts back, TARGET the instruction set it is compiled for.
 * `ignore` (the nan_mode flag) is visible to the macros.
 */
#define KR_DEFINE_T(NAME, TARGET, ET, AT, INIT, LOAD, STEP, STORE)                              \
    TARGET static void kr_##NAME(const kr_geom *g, const void *in_, void *out_, bool ignore,     \
                                 size_t b0, size_t b1)                                          \
    {                                                                                           \
        (void)ignore;                                                                           \
        const ET *in = (const ET *)in_;                                                         \
        ET *out = (ET *)out_;                                                                   \
        if (g->inner == 1) { /* reducing the innermost axis: one scalar per contiguous row */  \
            for (size_t o = b0; o < b1; o++) {                                                  \
                const ET *row = in + (int64_t)o * g->len;                                       \
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
        for (size_t b = b0; b < b1; b++) {                                                      \
            const int64_t o = (int64_t)(b / (size_t)g->chunks);                                 \
            const int64_t i0 = (int64_t)(b % (size_t)g->chunks) * KR_CHUNK;                    \
            const int64_t n = g->inner - i0 < KR_CHUNK ? g->inner - i0 : KR_CHUNK;              \
            for (int64_t j = 0; j < n; j++) acc[j] = (INIT);                                    \
            const ET *row = in + o * g->len * g->inner + i0;                                    \
            for (int64_t k = 0; k < g->len; k++, row += g->inner)                               \
                for (int64_t j = 0; j < n; j++) {                                               \
                    const AT v = LOAD(row[j]);                                                  \
                    STEP(acc[j], v);                                                            \
                }                                                                               \
            ET *ob = out + o * g->inner + i0;                                                   \
            for (int64_t j = 0; j < n; j++) ob[j] = STORE(acc[j]);                              \
        }                                                                                       \
    }
#define KR_DEFINE(NAME, ET, AT, INIT, LOAD, STEP, STORE) KR_DEFINE_T(NAME, , ET, AT, INIT, LOAD, STEP, STORE)

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

/* fp32 sums (SE blocks' spatial means) also in AVX2 / AVX-512 builds: lanes are independent
   outputs, each summed in axis order, so every build gives the same bits */
KR_DEFINE(sum_f32, float, float, 0.0f, KR_ID, KR_ADD, KR_ID)
#ifdef TOSAC_KERNEL_X86
KR_DEFINE_T(sum_f32_avx2, __attribute__((target("avx2"))), float, float, 0.0f, KR_ID, KR_ADD, KR_ID)
KR_DEFINE_T(sum_f32_avx512, __attribute__((target("avx2,avx512f"))), float, float, 0.0f, KR_ID, KR_ADD, KR_ID)
#endif
KR_DEFINE(sum_f16, uint16_t, float, 0.0f, KR_H2F, KR_ADD, KR_F2H)
KR_DEFINE(sum_bf16, uint16_t, float, 0.0f, KR_B2F, KR_ADD, KR_F2B)
KR_DEFINE(sum_f64, double, double, 0.0, KR_ID, KR_ADD, KR_ID)
KR_DEFINE(prod_f32, float, float, 1.0f, KR_ID, KR_MUL, KR_ID)
KR_DEFINE(prod_f16, uint16_t, float, 1.0f, KR_H2F, KR_MUL, KR_F2H)
KR_DEFINE(prod_bf16, uint16_t, float, 1.0f, KR_B2F, KR_MUL, KR_F2B)
KR_DEFINE(prod_f64, double, double, 1.0, KR_ID, KR_MUL, KR_ID)

/* REDUCE_SUM i32 over the items [b0, b1): exact, REQUIRE every partial sum within i32. Returns false
   on overflow. */
static bool kr_sum_i32(const kr_geom *g, const int32_t *in, int32_t *out, size_t b0, size_t b1)
{
    if (g->inner == 1) {
        for (size_t o = b0; o < b1; o++) {
            const int32_t *row = in + (int64_t)o * g->len;
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
    for (size_t b = b0; b < b1; b++) {
        const int64_t o = (int64_t)(b / (size_t)g->chunks), i0 = (int64_t)(b % (size_t)g->chunks) * KR_CHUNK;
        const int64_t n = g->inner - i0 < KR_CHUNK ? g->inner - i0 : KR_CHUNK;
        for (int64_t j = 0; j < n; j++) acc[j] = 0;
        const int32_t *row = in + o * g->len * g->inner + i0;
        uint32_t ovf = 0;
        for (int64_t k = 0; k < g->len; k++, row += g->inner)
            for (int64_t j = 0; j < n; j++) {
                const uint32_t a = acc[j], x = (uint32_t)row[j], s = a + x;
                ovf |= (a ^ s) & (x ^ s);
                acc[j] = s;
            }
        if (ovf >> 31) return false;
        int32_t *ob = out + o * g->inner + i0;
        for (int64_t j = 0; j < n; j++) ob[j] = tosac_ku32_to_i32(acc[j]);
    }
    return true;
}

#ifdef TOSAC_KERNEL_X86
/* kr_sum_i32 at the AVX2 and AVX-512 levels with inner > 1: the same int32 lanes and overflow flag,
   32 (then 8) positions of a chunk held in registers over the whole axis instead of the chunk's
   accumulators loaded and stored at every row (the SE blocks' spatial sums). */
#define KS_ADD(a, x) a = tosac_avx2_add_checked(a, x, &ovf);
#define KS_LD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define KS_ST(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), v)
__attribute__((target("avx2"))) static bool kr_sum_i32_avx2(const kr_geom *g, const int32_t *in, int32_t *out,
                                                          size_t b0, size_t b1)
{
    __m256i ovf = _mm256_setzero_si256();
    for (size_t b = b0; b < b1; b++) {
        const int64_t o = (int64_t)(b / (size_t)g->chunks), i0 = (int64_t)(b % (size_t)g->chunks) * KR_CHUNK;
        const int64_t n = g->inner - i0 < KR_CHUNK ? g->inner - i0 : KR_CHUNK, len = g->len, inner = g->inner;
        const int32_t *row = in + o * len * inner + i0;
        int32_t *ob = out + o * inner + i0;
        int64_t j = 0;
        for (; j + 32 <= n; j += 32) {
            __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
            const int32_t *r = row + j;
            for (int64_t k = 0; k < len; k++, r += inner) {
                KS_ADD(a0, KS_LD(r)) KS_ADD(a1, KS_LD(r + 8)) KS_ADD(a2, KS_LD(r + 16)) KS_ADD(a3, KS_LD(r + 24))
            }
            KS_ST(ob + j, a0), KS_ST(ob + j + 8, a1), KS_ST(ob + j + 16, a2), KS_ST(ob + j + 24, a3);
        }
        for (; j + 8 <= n; j += 8) {
            __m256i a0 = _mm256_setzero_si256();
            const int32_t *r = row + j;
            for (int64_t k = 0; k < len; k++, r += inner) KS_ADD(a0, KS_LD(r))
            KS_ST(ob + j, a0);
        }
        if (j < n) {
            uint32_t acc[8] = {0}, tov = 0;
            const int32_t *r = row + j;
            for (int64_t k = 0; k < len; k++, r += inner)
                for (int64_t i = 0; i < n - j; i++) {
                    const uint32_t a = acc[i], x = (uint32_t)r[i], s = a + x;
                    tov |= (a ^ s) & (x ^ s);
                    acc[i] = s;
                }
            if (tov >> 31) return false;
            for (int64_t i = 0; i < n - j; i++) ob[j + i] = tosac_ku32_to_i32(acc[i]);
        }
    }
    return !_mm256_movemask_ps(_mm256_castsi256_ps(ovf));
}
#undef KS_ADD
#undef KS_LD
#undef KS_ST
#endif

typedef void (*kr_fn)(const kr_geom *, const void *, void *, bool, size_t, size_t);

/* The routine for (op, dtype, f64) at level isa, or NULL. */
static kr_fn kr_pick(uint32_t op, tosac_dtype t, bool f64, uint32_t isa)
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
        case TOSAC_DTYPE_FP32:
#ifdef TOSAC_KERNEL_X86
            if (isa == TOSAC_KISA_AVX512) return kr_sum_f32_avx512;
            if (isa == TOSAC_KISA_AVX2) return kr_sum_f32_avx2;
#endif
            (void)isa;
            return kr_sum_f32;
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

/* Reductions of at least this many input elements are split over the workers. */
#define KR_PAR_ELEMS ((int64_t)1 << 15)

/* Items [b0, b1) of a reduction as a parallel-for task (kernel.h); an int32 sum that overflows
   marks its worker's slot. */
typedef struct {
    kr_fn fn; /* NULL: REDUCE_SUM of int32 */
    const kr_geom *g;
    const void *in;
    void *out;
    bool ignore;
    bool avx2; /* REDUCE_SUM of int32 with inner > 1 on kr_sum_i32_avx2 */
    uint8_t fail[TOSAC_KMAX_WORKERS];
} kr_task;

static void kr_range(void *ctx, uint32_t worker, size_t b0, size_t b1)
{
    kr_task *t = ctx;
    if (t->fn)
        t->fn(t->g, t->in, t->out, t->ignore, b0, b1);
#ifdef TOSAC_KERNEL_X86
    else if (t->avx2) {
        if (!kr_sum_i32_avx2(t->g, (const int32_t *)t->in, (int32_t *)t->out, b0, b1)) t->fail[worker] = 1;
    }
#endif
    else if (!kr_sum_i32(t->g, (const int32_t *)t->in, (int32_t *)t->out, b0, b1))
        t->fail[worker] = 1;
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
    kr_geom g = {1, in->shape[axis], 1, 1};
    for (int32_t d = 0; d < axis; d++) g.outer *= in->shape[d];
    for (int32_t d = (int32_t)axis + 1; d < rank; d++) g.inner *= in->shape[d];
    g.chunks = (g.inner + KR_CHUNK - 1) / KR_CHUNK;
    kr_task t;
    memset(&t, 0, sizeof t);
    t.g = &g, t.in = in->data, t.out = out->data, t.ignore = ignore;
    t.avx2 = (c->isa == TOSAC_KISA_AVX2 || c->isa == TOSAC_KISA_AVX512) && g.inner > 1;
    if (!(c->op == TOSAC_OP_REDUCE_SUM && in->dtype == TOSAC_DTYPE_INT32)) {
        t.fn = kr_pick(c->op, in->dtype, in->f64, c->isa);
        if (!t.fn) return tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "REDUCE: operator/type combination not supported");
    }
    const size_t items = kr_items(&g);
    if (in->nelem >= KR_PAR_ELEMS && items > 1)
        tosac_kparallel_for(c, kr_range, &t, items);
    else
        kr_range(&t, 0, 0, items);
    for (uint32_t w = 0; w < TOSAC_KMAX_WORKERS; w++)
        if (t.fail[w]) return tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE, "REDUCE_SUM: i32 accumulator overflow (REQUIRE)");
    return TOSAC_OK;
}

TOSAC_KERNEL_NO_PREPARE(reduce)
