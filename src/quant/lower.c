/*
 * FP graph + calibration ranges -> INT8 graph, with the ExecuTorch Arm backend's lowering rules
 * (docs/QUANT.md). Every FP value gets int8 q-params (its own observed range, or its input's for
 * data movement and pooling). The lowering then walks the FP operators in order and keeps, per
 * FP value, the integer forms it already has:
 *   - an INT8 tensor at some q-params, and/or
 *   - an INT32 tensor with a real scale per last-dimension channel (zero point 0) and a bound on
 *     its magnitude: what convolutions, MATMUL, ADD/SUB/MUL and REDUCE_SUM produce.
 * A consumer asks for the form it needs: as_i8() adds the RESCALE (i32 -> i8 per channel, or
 * i8 -> i8 when q-params differ) the first time, to_i32() a RESCALE i8 -> i32. So a conv's
 * output RESCALE lands at its consumer's q-params (a following ReLU/CLAMP folds into the range),
 * MUL by a positive scalar (GlobalAveragePool's 1/N) folds into the int32 scale, a bias ADD after
 * MATMUL is added in int32, and no i32 -> i32 RESCALE is ever made (an int32 value at the wrong
 * scale goes through its int8 form).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "ir/rewrite.h"
#include "passes/pass.h"
#include "quant/quant_internal.h"
#include "tosac/validate.h"

typedef struct form {
    tosac_value *i8; /* the activation form: INT8, or INT16 under --a16w8 (l->act) */
    tosac_qparams i8q;
    tosac_value *i32; /* INT32, or the INT48 of an int16 CONV2D/MATMUL (a RESCALE is its only reader) */
    const double *sc; /* nsc real scales over the last dimension (nsc == 1: uniform) */
    uint32_t nsc;
    int bits; /* |i32 value| < 2^bits */
    tosac_value *same; /* an integer or bool value (token ids and what is computed from them only):
                          the same values in the INT graph, never quantized */
} form;

typedef struct cluster {
    const tosac_value *x, *y;
    tosac_node **ops;
    uint32_t n_ops;
} cluster;

typedef struct lower {
    const tosac_block *fb; /* FP block */
    tosac_graph *g;
    tosac_block *b; /* INT block */
    tosac_diag *d;
    const quant_stats *st;
    const tosac_quant_opts *o;
    tosac_qparams *qp;
    bool *has_qp;
    form *f;
    int32_t *cluster_of; /* FP node index -> cluster, -1 */
    cluster *cl;
    uint32_t n_cl;
    uint32_t *uses; /* FP value index -> operator input slots + output slots */
    const quant_fixed *fx; /* the model's own Q/DQ (qdq.c) */
    quant_qdq_node *qn;    /* FP node index -> what --emit-qdq needs to know of its lowering */
    tosac_dtype act;       /* INT8, or INT16 with --a16w8 */
    double *lo, *hi;       /* FP value index -> the range its q-params come from (int16 TABLEs) */
    int32_t qmin, qmax;
    const struct weights_ahead *ahead; /* the convolutions' weights computed ahead, or NULL */
} lower;

/* ---- small builders ----------------------------------------------------------------------- */

static tosac_status oom(lower *l) { return tosac_diag_add(l->d, TOSAC_ERR_NOMEM, "out of memory"); }

/* Node `n` reads v's int32 form, not its int8 one: the emitted QDQ model (emit_qdq.c) must then
   feed that operand unrounded. */
static void note_wide(lower *l, const tosac_node *n, const tosac_value *v)
{
    if (!n || n->block != l->fb) return;
    for (uint32_t k = 0; k < n->n_inputs && k < 32; k++)
        if (n->inputs[k] == v) l->qn[n->index].wide |= 1u << k;
}

/* Node `n` reads its constant operand as integers at scales sc[0..n) (recorded per node: one
   constant may be shared by operators that quantize it differently). */
static bool keep_ksc(lower *l, const tosac_node *node, const double *sc, uint32_t n)
{
    if (!node || node->block != l->fb) return true;
    double *copy = tosac_arena_alloc_uninit(&l->g->arena, n * sizeof *copy);
    if (!copy) return false;
    memcpy(copy, sc, n * sizeof *copy);
    l->qn[node->index].ksc = copy;
    l->qn[node->index].nksc = n;
    return true;
}

static tosac_value *int_const(lower *l, const char *prefix, tosac_dtype t, int rank, const int64_t *shape,
                              const int32_t *v, int64_t n)
{
    return quant_enc_const(l->b, prefix, t, rank, shape, v, NULL, n);
}

/* A rank-1 INT48 constant (6 bytes each, TOSA's encoding): an int16 convolution's bias. */
static tosac_value *int48_const(lower *l, const char *prefix, int64_t n, const int64_t *v)
{
    return quant_enc_const(l->b, prefix, TOSAC_DTYPE_INT48, 1, &n, NULL, v, n);
}

/* The activation q-params of a range: asymmetric int8, or symmetric int16 under --a16w8. */
static tosac_qparams choose_act(const lower *l, double lo, double hi)
{
    return l->act == TOSAC_DTYPE_INT16 ? tosac_quant_choose_act16(lo, hi) : tosac_quant_choose_act(lo, hi);
}

static bool is_i32(const tosac_value *t) { return t && t->dtype == TOSAC_DTYPE_INT32; }

static tosac_value *copy_shape_value(lower *l, const tosac_value *v)
{
    uint32_t n = (uint32_t)v->shape[0];
    int64_t vals[TOSAC_MAX_RANK * 2];
    if (n > TOSAC_MAX_RANK * 2 || v->data_len < (size_t)n * 8) return NULL;
    for (uint32_t k = 0; k < n; k++) {
        uint64_t u = 0;
        for (unsigned j = 0; j < 8; j++) u |= (uint64_t)v->data[8 * k + j] << (8 * j);
        vals[k] = (int64_t)u;
    }
    return ir_new_shape(l->b, vals, n);
}

static tosac_value *new_tensor(lower *l, const tosac_value *like, tosac_dtype t)
{
    char prefix[80];
    snprintf(prefix, sizeof prefix, "%.60s_%s", like->name, t == TOSAC_DTYPE_INT8 || t == TOSAC_DTYPE_INT16 ? "q" : "acc");
    return ir_new_tensor(l->b, prefix, t, like->rank, like->shape);
}

static tosac_status unsupported(lower *l, const tosac_node *n, const char *why)
{
    char w[300];
    return tosac_diag_add(l->d, TOSAC_ERR_UNSUPPORTED, "cannot quantize op %u (%s)%s: %s", n ? n->index : 0,
                          n ? tosac_op_name(n->op) : "?", quant_where(n, w, sizeof w), why);
}

/* A value the lowering needs in int8 has no q-params: neither calibration nor a Q/DQ of the model
   gave it a range. */
static tosac_status no_range(lower *l, const tosac_node *n, const char *what)
{
    char buf[300];
    snprintf(buf, sizeof buf, "%s has no quantization range (%s)", what,
             quant_sample_count(l->o) ? "calibration never gave it a finite value"
                                      : "no QuantizeLinear/DequantizeLinear of the model covers it and no calibration "
                                        "data was given: add --calibrate");
    return unsupported(l, n, buf);
}

/* RESCALE in -> out (int8/int16 or int32) by scales[c] (n == 1 or the last dimension). */
static tosac_value *rescale(lower *l, tosac_value *in, tosac_dtype out_t, const double *scales, uint32_t n,
                            int32_t in_zp, int32_t out_zp, const tosac_node *like)
{
    bool uniform = true;
    for (uint32_t c = 1; c < n; c++) uniform &= scales[c] == scales[0];
    if (uniform) n = 1;
    int32_t *m = malloc(n * sizeof *m), *s = malloc(n * sizeof *s);
    tosac_value *out = NULL;
    if (!m || !s) {
        oom(l);
        goto done;
    }
    bool scale32 = in->dtype != TOSAC_DTYPE_INT48;
    for (uint32_t c = 0; c < n; c++)
        if (!(scale32 ? tosac_quant_multiplier(scales[c], &m[c], &s[c]) : tosac_quant_multiplier16(scales[c], &m[c], &s[c]))) {
            char buf[160];
            snprintf(buf, sizeof buf, "a requantization scale %g cannot be a RESCALE multiplier/shift", scales[c]);
            unsupported(l, like, buf);
            goto done;
        }
    out = ir_new_tensor(l->b, out_t == TOSAC_DTYPE_INT32 ? "widened" : "rescaled", out_t, in->rank, in->shape);
    if (!out || !quant_add_rescale(l->b, in, out, m, s, n, in_zp, out_zp, false, false, like)) {
        oom(l);
        out = NULL;
    }
done:
    free(m);
    free(s);
    return out;
}

/* ---- q-params and forms ------------------------------------------------------------------- */

static bool qp_eq(tosac_qparams a, tosac_qparams b) { return a.scale == b.scale && a.zero_point == b.zero_point; }

/* The q-params of an FP value: chosen from calibration (or, for a constant, from its data). */
static bool qp_of(lower *l, const tosac_value *v, tosac_qparams *q)
{
    uint32_t i = v->index;
    if (!l->has_qp[i] && ir_is_const(v) && v->dtype == TOSAC_DTYPE_FP32) {
        int64_t n = tosac_value_nelem(v);
        double lo = 0, hi = 0;
        for (int64_t k = 0; k < n; k++) {
            double x = quant_const_f32(v, k);
            if (x < lo) lo = x;
            if (x > hi) hi = x;
        }
        l->qp[i] = choose_act(l, lo, hi);
        l->has_qp[i] = true;
    }
    *q = l->qp[i];
    return l->has_qp[i];
}

/* The INT8 tensor of FP value v at q-params q (a constant is quantized, a form rescaled). */
static tosac_value *as_i8(lower *l, const tosac_value *v, tosac_qparams q, const tosac_node *like)
{
    form *f = &l->f[v->index];
    if (f->i8 && qp_eq(f->i8q, q)) return f->i8;
    tosac_qparams own;
    bool is_own = qp_of(l, v, &own) && qp_eq(own, q);
    tosac_value *t = NULL;
    if (ir_is_const(v)) {
        if (v->dtype != TOSAC_DTYPE_FP32) return unsupported(l, like, "a non-FP32 constant operand"), NULL;
        int64_t n = tosac_value_nelem(v);
        int32_t *vals = malloc((size_t)(n ? n : 1) * sizeof *vals);
        if (!vals) return oom(l), NULL;
        for (int64_t k = 0; k < n; k++) vals[k] = tosac_quant_quantize(quant_const_f32(v, k), q, l->qmin, l->qmax);
        t = int_const(l, "qconst", l->act, v->rank, v->shape, vals, n);
        free(vals);
        if (!t) oom(l);
    } else if (f->i32) {
        if (!is_own) note_wide(l, like, v);
        double *sc = malloc(f->nsc * sizeof *sc);
        if (!sc) return oom(l), NULL;
        for (uint32_t c = 0; c < f->nsc; c++) sc[c] = f->sc[c] / q.scale;
        t = rescale(l, f->i32, l->act, sc, f->nsc, 0, q.zero_point, like);
        free(sc);
    } else if (f->i8) {
        double sc = f->i8q.scale / q.scale;
        t = rescale(l, f->i8, l->act, &sc, 1, f->i8q.zero_point, q.zero_point, like);
    } else {
        char buf[200];
        snprintf(buf, sizeof buf, "value '%s' has no integer form (an operator before it was not lowered)", v->name);
        unsupported(l, like, buf);
    }
    if (t && is_own && !f->i8) {
        f->i8 = t;
        f->i8q = q;
    }
    return t;
}

static int bits_for(double mag) { return mag < 1 ? 1 : (int)ceil(log2(mag + 1)) + 1; }

/* round_half_even(x) clamped to [-lim, lim], for a constant made integer; NaN gives 0, the real
   zero, as tosac_quant_quantize gives the zero point (converting NaN to an integer is undefined). */
static double round_clamp(double x, double lim)
{
    double r = nearbyint(x);
    return r != r ? 0 : r > lim ? lim : r < -lim ? -lim : r;
}

/* An INT32 tensor of v at the uniform real scale `scale` (zero point 0); *bits bounds it. */
static tosac_value *to_i32(lower *l, const tosac_value *v, double scale, int *bits, const tosac_node *like)
{
    form *f = &l->f[v->index];
    if (ir_is_const(v)) {
        int64_t n = tosac_value_nelem(v);
        int32_t *vals = calloc((size_t)(n ? n : 1), sizeof *vals);
        if (!vals) return oom(l), NULL;
        double mag = 0;
        for (int64_t k = 0; k < n; k++) {
            double r = round_clamp(quant_const_f32(v, k) / scale, 1073741823.0);
            vals[k] = (int32_t)r;
            mag = fabs(r) > mag ? fabs(r) : mag;
        }
        tosac_value *t = int_const(l, "qconst32_", TOSAC_DTYPE_INT32, v->rank, v->shape, vals, n);
        free(vals);
        *bits = bits_for(mag);
        return t ? t : (oom(l), NULL);
    }
    if (is_i32(f->i32) && f->nsc == 1 && f->sc[0] == scale) {
        note_wide(l, like, v);
        *bits = f->bits;
        return f->i32;
    }
    tosac_qparams q;
    if (!qp_of(l, v, &q)) return no_range(l, like, "an input"), NULL;
    tosac_value *t8 = as_i8(l, v, q, like);
    if (!t8) return NULL;
    double sc = q.scale / scale;
    *bits = bits_for((double)(l->qmax - l->qmin) * sc);
    return rescale(l, t8, TOSAC_DTYPE_INT32, &sc, 1, q.zero_point, 0, like);
}

/* v in int32 at its own scale (the int8 codes minus the zero point), unless a small int32 form exists. */
static tosac_value *unit_i32(lower *l, const tosac_value *v, double *scale, int *bits, const tosac_node *like)
{
    form *f = &l->f[v->index];
    if (!ir_is_const(v) && is_i32(f->i32) && f->nsc == 1 && f->bits <= 15) {
        note_wide(l, like, v);
        *scale = f->sc[0];
        *bits = f->bits;
        return f->i32;
    }
    if (ir_is_const(v)) { /* symmetric: the int8 codes themselves */
        int64_t n = tosac_value_nelem(v);
        double absmax = 0;
        for (int64_t k = 0; k < n; k++) absmax = fmax(absmax, fabs(quant_const_f32(v, k)));
        *scale = tosac_quant_choose_weight(absmax);
        if (!keep_ksc(l, like, scale, 1)) return oom(l), NULL;
        return to_i32(l, v, *scale, bits, like);
    }
    tosac_qparams q;
    if (!qp_of(l, v, &q)) return no_range(l, like, "an input"), NULL;
    *scale = q.scale;
    return to_i32(l, v, q.scale, bits, like);
}

static bool set_i32(lower *l, const tosac_value *y, tosac_value *t, const double *sc, uint32_t nsc, int bits)
{
    double *copy = tosac_arena_alloc_uninit(&l->g->arena, nsc * sizeof *copy);
    if (!copy) return oom(l), false;
    memcpy(copy, sc, nsc * sizeof *copy);
    form *f = &l->f[y->index];
    f->i32 = t;
    f->sc = copy;
    f->nsc = nsc;
    f->bits = bits;
    return true;
}

static void set_i8(lower *l, const tosac_value *y, tosac_value *t, tosac_qparams q)
{
    l->f[y->index].i8 = t;
    l->f[y->index].i8q = q;
}

/* ---- operators ---------------------------------------------------------------------------- */

static int64_t last_dim(const tosac_value *v) { return v->rank ? v->shape[v->rank - 1] : 1; }

/* Per-output-channel symmetric int8 weights: channel of element k is chan(k); with --per-tensor
   one absmax over the whole tensor (every channel gets the same scale). */
/* A QDQ model's weights are the model's int8 codes times its scale. The coarsest step s for which
   every weight of the channel (elements first, first + step, ... of w) is an integer multiple, with
   the largest at most 127 steps, gives those weights back exactly when requantized (the model's own
   scale, or a multiple of it when every code shares a factor: the same reals). 0 when there is
   none (weights that were never quantized). */
static double weight_grid(const tosac_value *w, int64_t first, int64_t count, int64_t step, double absmax)
{
    for (int q = 1; q <= 127 && absmax > 0; q++) {
        double g = absmax / q;
        bool ok = true;
        for (int64_t k = 0; k < count && ok; k++) {
            double r = quant_const_f32(w, first + k * step) / g;
            ok = fabs(r - nearbyint(r)) < 1e-3;
        }
        if (ok) return g;
    }
    return 0;
}

/* tosac_quant_quantize(x, {scale, 0}, -127, 127) without a libm call per element: |x/scale| <= 128
   rounds half to even exactly by adding and removing 1.5 * 2^52 (the default rounding mode, which
   nearbyint also uses). */
static inline int32_t quant_weight(float x, double scale)
{
    double t = (double)x / scale;
    if (!(t > -128.0)) return isnan(t) ? 0 : -127;
    if (t > 128.0) return 127;
    double r = (t + 6755399441055744.0) - 6755399441055744.0;
    return r < -127.0 ? -127 : r > 127.0 ? 127 : (int32_t)r;
}

/* Row x[0, n) of float weights: its largest magnitude (NaN never raises it), and its int8 codes at
   scale sc[j] (sc given) or s1 (quant_weight's operations: the same bits). */
static double row_absmax(const uint8_t *x, int64_t n)
{
    double m = 0;
    for (int64_t j = 0; j < n; j++) {
        double a = fabs(quant_f32_at(x, j));
        m = a > m ? a : m;
    }
    return m;
}

static void row_codes(const uint8_t *x, int64_t n, const double *sc, double s1, uint8_t *q)
{
    for (int64_t j = 0; j < n; j++) q[j] = (uint8_t)quant_weight(quant_f32_at(x, j), sc ? sc[j] : s1);
}

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) && !defined(TOSAC_NO_SIMD) && \
    defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#include <immintrin.h>
#define QW_X86 1
/* Eight floats at a time: |x| by clearing the sign, max(a, m) keeps m when a is NaN; the maximum
   of the floats converted is the maximum of the converted floats. */
__attribute__((target("avx2"))) static double row_absmax_avx2(const uint8_t *x, int64_t n)
{
    const __m256 abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    __m256 m8 = _mm256_setzero_ps();
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) m8 = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps((const float *)(const void *)x + j), abs), m8);
    float m[8];
    _mm256_storeu_ps(m, m8);
    double r = row_absmax(x + 4 * j, n - j);
    for (int k = 0; k < 8; k++) r = m[k] > r ? m[k] : r;
    return r;
}

/* Four codes at a time, quant_weight's operations in double: the division, the rounding by
   1.5 * 2^52 (beyond |t| = 128 only the sign matters, which it keeps, infinities included), the
   clamp to +-127, and NaN to 0. */
__attribute__((target("avx2"))) static void row_codes_avx2(const uint8_t *x, int64_t n, const double *sc, double s1,
                                                           uint8_t *q)
{
    const __m256d big = _mm256_set1_pd(6755399441055744.0), lo = _mm256_set1_pd(-127.0), hi = _mm256_set1_pd(127.0);
    const __m256d s = _mm256_set1_pd(s1);
    int64_t j = 0;
    for (; j + 4 <= n; j += 4) {
        __m256d t = _mm256_div_pd(_mm256_cvtps_pd(_mm_loadu_ps((const float *)(const void *)x + j)),
                                  sc ? _mm256_loadu_pd(sc + j) : s);
        __m256d r = _mm256_sub_pd(_mm256_add_pd(t, big), big);
        r = _mm256_min_pd(_mm256_max_pd(r, lo), hi);
        r = _mm256_andnot_pd(_mm256_cmp_pd(t, t, _CMP_UNORD_Q), r);
        __m128i i = _mm256_cvtpd_epi32(r);
        i = _mm_packs_epi16(_mm_packs_epi32(i, i), i);
        int32_t four = _mm_cvtsi128_si32(i);
        memcpy(q + j, &four, 4);
    }
    row_codes(x + 4 * j, n - j, sc ? sc + j : NULL, s1, q + j);
}
#endif

static double row_absmax_any(const uint8_t *x, int64_t n)
{
#ifdef QW_X86
    if (__builtin_cpu_supports("avx2")) return row_absmax_avx2(x, n);
#endif
    return row_absmax(x, n);
}

static void row_codes_any(const uint8_t *x, int64_t n, const double *sc, double s1, uint8_t *q)
{
#ifdef QW_X86
    if (__builtin_cpu_supports("avx2")) {
        row_codes_avx2(x, n, sc, s1, q);
        return;
    }
#endif
    row_codes(x, n, sc, s1, q);
}

/* The weight scales sw[oc] of w and its codes q (the constant's encoding: little-endian int8 or,
   wb = 2, int16); false when out of memory. Reads only w, l->o and l->fx: several run at once. */
static bool weight_codes(const lower *l, const tosac_value *w, int64_t oc, bool depthwise_layout, double *sw,
                         uint8_t *q, unsigned wb)
{
    int64_t n = tosac_value_nelem(w), per = n / oc;
    double *absmax = calloc((size_t)oc, sizeof *absmax);
    if (!absmax) return false;
    /* channel c is element k's k % oc (depthwise layout) or k / per: walked as rows of oc, or
       runs of per (no division per element); NaN never raises a maximum, as with fmax. The
       weights are read through a local pointer: a store through any other pointer may alias
       bytes, so w->data would be reloaded every time. */
    const uint8_t *src = w->data;
    int64_t rows = depthwise_layout ? per : oc, len = depthwise_layout ? oc : per;
    for (int64_t r = 0; r < rows; r++) {
        const uint8_t *row = src + 4 * r * len;
        if (depthwise_layout)
            for (int64_t j = 0; j < len; j++) {
                double a = fabs(quant_f32_at(row, j));
                if (a > absmax[j]) absmax[j] = a;
            }
        else
            absmax[r] = row_absmax_any(row, len);
    }
    if (l->o->per_tensor)
        for (int64_t c = 1; c < oc; c++) absmax[0] = fmax(absmax[0], absmax[c]);
    for (int64_t c = 0; c < oc; c++) {
        double grid = 0;
        if (l->fx->n_chains) /* a QDQ model: its own weight scales */
            grid = l->o->per_tensor ? weight_grid(w, 0, n, 1, absmax[0])
                                    : weight_grid(w, depthwise_layout ? c : c * per, per, depthwise_layout ? oc : 1, absmax[c]);
        sw[c] = grid > 0 ? grid : tosac_quant_choose_weight(absmax[l->o->per_tensor ? 0 : c]);
    }
    for (int64_t r = 0; r < rows; r++) {
        const uint8_t *row = src + 4 * r * len;
        uint8_t *qr = q + (size_t)(r * len) * wb;
        if (wb == 1) row_codes_any(row, len, depthwise_layout ? sw : NULL, depthwise_layout ? 0 : sw[r], qr);
        else
            for (int64_t j = 0; j < len; j++) quant_put_le(qr + 2 * j, quant_weight(quant_f32_at(row, j), sw[depthwise_layout ? j : r]), 2);
    }
    free(absmax);
    return true;
}

static tosac_value *quant_weights(lower *l, const tosac_value *w, int64_t oc, bool depthwise_layout, double *sw,
                                  tosac_dtype t8)
{
    int64_t n = tosac_value_nelem(w);
    unsigned wb = t8 == TOSAC_DTYPE_INT16 ? 2 : 1;
    uint8_t *q = tosac_arena_alloc_uninit(&l->b->graph->arena, (size_t)(n ? n : 1) * wb);
    tosac_value *t = q && weight_codes(l, w, oc, depthwise_layout, sw, q, wb)
                         ? ir_new_const_adopt(l->b, "qweight", t8, w->rank, w->shape, q, (size_t)n * wb)
                         : NULL;
    if (!t) oom(l);
    return t;
}

/* The convolutions' int8 weights (the bulk of a CNN's lowering) computed ahead, side by side on
   the calibration program's threads: node i's scales and codes, or q NULL (then lower_conv
   computes them itself). They depend on the weights alone; lower_conv adopts them in its order,
   so the constants and their names are those of the one-by-one lowering. */
typedef struct weights_ahead {
    const lower *l;
    const tosac_node **node; /* the convolutions, n of them */
    uint8_t **q;             /* by FP node index */
    double **sw;             /* by FP node index */
    uint32_t n;
} weights_ahead;

static bool conv_weights_ok(const tosac_node *n, int64_t *oc)
{
    if ((n->op != TOSAC_OP_CONV2D && n->op != TOSAC_OP_DEPTHWISE_CONV2D && n->op != TOSAC_OP_TRANSPOSE_CONV2D) ||
        n->n_inputs < 3 || n->n_outputs != 1)
        return false;
    const tosac_value *w = n->inputs[1], *y = n->outputs[0];
    *oc = last_dim(y);
    return ir_is_const(w) && w->dtype == TOSAC_DTYPE_FP32 && y->dtype == TOSAC_DTYPE_FP32 && *oc > 0 &&
           tosac_value_nelem(w) % *oc == 0;
}

static void weights_task(void *ctx, uint32_t worker, size_t begin, size_t end)
{
    (void)worker;
    weights_ahead *a = ctx;
    for (size_t k = begin; k < end; k++) {
        const tosac_node *n = a->node[k];
        int64_t oc = 0; /* (every listed node passes conv_weights_ok: the test only sets oc) */
        if (!conv_weights_ok(n, &oc) ||
            !weight_codes(a->l, n->inputs[1], oc, n->op == TOSAC_OP_DEPTHWISE_CONV2D, a->sw[n->index], a->q[n->index], 1)) {
            free(a->sw[n->index]);
            a->sw[n->index] = NULL, a->q[n->index] = NULL;
        }
    }
}

/* Fills a (zeroed) for l's convolutions on the threads of program p; nothing when memory is
   short (the lowering then computes every weight itself). */
static void weights_ahead_run(weights_ahead *a, const lower *l, const tosac_program *p)
{
    uint32_t nn = l->fb->n_nodes;
    a->l = l;
    a->node = malloc((nn ? nn : 1) * sizeof *a->node);
    a->q = calloc(nn ? nn : 1, sizeof *a->q);
    a->sw = calloc(nn ? nn : 1, sizeof *a->sw);
    if (!a->node || !a->q || !a->sw) return;
    for (uint32_t i = 0; i < nn; i++) {
        const tosac_node *n = l->fb->nodes[i];
        int64_t oc;
        if (n->index != i || !conv_weights_ok(n, &oc)) continue;
        size_t nw = (size_t)tosac_value_nelem(n->inputs[1]);
        /* the arena is not shared between threads: every buffer is taken here */
        if (!(a->sw[i] = malloc((size_t)oc * sizeof(double))) ||
            !(a->q[i] = tosac_arena_alloc_uninit(&l->b->graph->arena, nw ? nw : 1))) {
            free(a->sw[i]);
            a->sw[i] = NULL;
            break;
        }
        a->node[a->n++] = n;
    }
    tosac_program_parallel_for(p, weights_task, a, a->n);
}

static void weights_ahead_free(weights_ahead *a)
{
    for (uint32_t i = 0; a->sw && i < a->l->fb->n_nodes; i++) free(a->sw[i]);
    free(a->node);
    free(a->q);
    free(a->sw);
    memset(a, 0, sizeof *a);
}

static tosac_status lower_conv(lower *l, const tosac_node *n)
{
    const tosac_value *x = n->inputs[0], *w = n->inputs[1], *bias = n->inputs[2], *y = n->outputs[0];
    if (!ir_is_const(w) || !ir_is_const(bias) || w->dtype != TOSAC_DTYPE_FP32 || bias->dtype != TOSAC_DTYPE_FP32)
        return unsupported(l, n, "weights and bias must be FP32 constants");
    int64_t oc = last_dim(y), nb = tosac_value_nelem(bias);
    bool dw = n->op == TOSAC_OP_DEPTHWISE_CONV2D;
    if (oc <= 0 || tosac_value_nelem(w) % oc || (nb != oc && nb != 1)) return unsupported(l, n, "unexpected weight layout");
    tosac_qparams qx;
    if (!qp_of(l, x, &qx)) return no_range(l, n, "input");
    double *sw = malloc((size_t)oc * sizeof *sw), *sc = malloc((size_t)oc * sizeof *sc);
    int32_t *bq = malloc((size_t)oc * sizeof *bq);
    tosac_status s = TOSAC_OK;
    if (!sw || !sc || !bq) {
        s = oom(l);
        goto out;
    }
    const weights_ahead *a = l->ahead;
    tosac_value *xi = as_i8(l, x, qx, n), *wq = NULL;
    if (xi && a && a->q && n->index < l->fb->n_nodes && l->fb->nodes[n->index] == n && a->q[n->index]) {
        memcpy(sw, a->sw[n->index], (size_t)oc * sizeof *sw);
        wq = ir_new_const_adopt(l->b, "qweight", TOSAC_DTYPE_INT8, w->rank, w->shape, a->q[n->index],
                                (size_t)tosac_value_nelem(w));
        if (!wq) oom(l);
    } else if (xi) {
        wq = quant_weights(l, w, oc, dw, sw, TOSAC_DTYPE_INT8);
    }
    if (!wq) {
        s = TOSAC_ERR_UNSUPPORTED;
        goto out;
    }
    if (!keep_ksc(l, n, sw, (uint32_t)oc)) {
        s = oom(l);
        goto out;
    }
    /* int16 x int8 (EXT-INT16): bias and accumulator INT48 */
    bool wide = l->act == TOSAC_DTYPE_INT16;
    tosac_dtype acc_t = wide ? TOSAC_DTYPE_INT48 : TOSAC_DTYPE_INT32;
    double bmax = wide ? 140737488355327.0 : 2147483647.0;
    int64_t *b64 = wide ? malloc((size_t)oc * sizeof *b64) : NULL;
    if (wide && !b64) {
        s = oom(l);
        goto out;
    }
    for (int64_t c = 0; c < oc; c++) {
        sc[c] = qx.scale * sw[c];
        double r = round_clamp(quant_const_f32(bias, nb == 1 ? 0 : c) / sc[c], bmax);
        if (wide) b64[c] = (int64_t)r;
        else bq[c] = (int32_t)r;
    }
    tosac_value *bt = wide ? int48_const(l, "qbias", oc, b64) : int_const(l, "qbias", TOSAC_DTYPE_INT32, 1, &oc, bq, oc);
    free(b64);
    tosac_value *ins[5] = {xi, wq, bt, NULL, NULL};
    ins[3] = quant_scalar(l->b, l->act, qx.zero_point);
    ins[4] = quant_scalar(l->b, TOSAC_DTYPE_INT8, 0);
    tosac_value *out = new_tensor(l, y, acc_t);
    tosac_node *op = bt ? ir_add_op(l->b, (tosac_op)n->op, 5, ins, out, n) : NULL;
    unsigned acc = n->op == TOSAC_OP_TRANSPOSE_CONV2D ? TOSAC_ATTR_TRANSPOSE_CONV2D_acc_type : TOSAC_ATTR_CONV2D_acc_type;
    if (!op || ir_copy_attrs(op, n) != TOSAC_OK || tosac_node_set_int(op, acc, acc_t) != TOSAC_OK ||
        !set_i32(l, y, out, sc, (uint32_t)oc, wide ? 47 : 31))
        s = oom(l);
out:
    free(sw);
    free(sc);
    free(bq);
    return s;
}

static tosac_status lower_matmul(lower *l, const tosac_node *n)
{
    const tosac_value *a = n->inputs[0], *bm = n->inputs[1], *y = n->outputs[0];
    tosac_qparams qa, qb;
    /* constant FP32 weights get per-column scales (quant_weights), never an activation range:
       qp_of would scan every weight for one */
    bool wconst = ir_is_const(bm) && bm->dtype == TOSAC_DTYPE_FP32;
    if (!qp_of(l, a, &qa) || (!wconst && !qp_of(l, bm, &qb))) return no_range(l, n, "input");
    tosac_value *ai = as_i8(l, a, qa, n), *bi;
    if (!ai) return TOSAC_ERR_UNSUPPORTED;
    int64_t w = last_dim(y);
    double *sc = malloc((size_t)w * sizeof *sc);
    if (!sc) return oom(l);
    uint32_t nsc = 1;
    int32_t bzp = 0;
    if (wconst) { /* weights: per output column */
        /* TOSA's MATMUL has no i16 x i8 row: under --a16w8 the int8 codes are stored as INT16 */
        bi = quant_weights(l, bm, w, true, sc, l->act);
        if (bi && !keep_ksc(l, n, sc, (uint32_t)w)) bi = NULL;
        for (int64_t c = 0; c < w; c++) sc[c] *= qa.scale;
        nsc = (uint32_t)w;
    } else {
        bi = as_i8(l, bm, qb, n);
        sc[0] = qa.scale * qb.scale;
        bzp = qb.zero_point;
    }
    tosac_status s = TOSAC_OK;
    bool wide = l->act == TOSAC_DTYPE_INT16; /* i16 x i16 -> INT48 */
    tosac_value *ins[4] = {ai, bi, NULL, NULL};
    ins[2] = quant_scalar(l->b, l->act, qa.zero_point);
    ins[3] = quant_scalar(l->b, l->act, bzp);
    tosac_value *out = bi ? new_tensor(l, y, wide ? TOSAC_DTYPE_INT48 : TOSAC_DTYPE_INT32) : NULL;
    if (!bi) s = TOSAC_ERR_UNSUPPORTED;
    else if (!ir_add_op(l->b, TOSAC_OP_MATMUL, 4, ins, out, n) || !set_i32(l, y, out, sc, nsc, wide ? 47 : 31)) s = oom(l);
    free(sc);
    return s;
}

/* The magnitude bits of t when it is the widening RESCALE of an activation at q to int32 at `scale`
   (|t| <= max|code - zp| * q.scale / scale); `bits` otherwise. */
static int widened_bits(const lower *l, const tosac_value *t, tosac_qparams q, double scale, int bits)
{
    const tosac_node *p = t->producer;
    if (!p || p->op != TOSAC_OP_RESCALE || p->inputs[0]->dtype != l->act || t->dtype != TOSAC_DTYPE_INT32) return bits;
    double mag = fmax((double)l->qmax - q.zero_point, (double)q.zero_point - l->qmin) * (q.scale / scale);
    int b = (int)ceil(log2(mag + 1));
    return b < bits ? b : bits;
}

static tosac_status lower_add_sub(lower *l, const tosac_node *n)
{
    const tosac_value *a = n->inputs[0], *bv = n->inputs[1], *y = n->outputs[0];
    bool ca = ir_is_const(a), cb = ir_is_const(bv);
    /* a bias after MATMUL (or any int32 result): the constant joins in int32 at that scale */
    const tosac_value *x = !ca && cb ? a : (ca && !cb && n->op == TOSAC_OP_ADD ? bv : NULL), *k = x == a ? bv : a;
    if (x && is_i32(l->f[x->index].i32) && x->rank == y->rank && last_dim(x) == last_dim(y) &&
        tosac_value_nelem(x) == tosac_value_nelem(y) && k->dtype == TOSAC_DTYPE_FP32) {
        const form *f = &l->f[x->index];
        note_wide(l, n, x);
        if (!keep_ksc(l, n, f->sc, f->nsc)) return oom(l);
        int64_t kshape[TOSAC_MAX_RANK], kn = tosac_value_nelem(k), klast = last_dim(k);
        if (k->rank) memcpy(kshape, k->shape, (size_t)k->rank * sizeof *kshape); /* a scalar has no shape */
        if (f->nsc > 1 && klast == 1 && k->rank) kshape[k->rank - 1] = (int64_t)f->nsc;
        int64_t cn = f->nsc > 1 && klast == 1 ? kn * (int64_t)f->nsc : kn;
        int32_t *vals = malloc((size_t)(cn ? cn : 1) * sizeof *vals);
        if (!vals) return oom(l);
        for (int64_t e = 0; e < cn; e++) {
            int64_t c = f->nsc > 1 ? e % (int64_t)f->nsc : 0, src = cn == kn ? e : e / (int64_t)f->nsc;
            double r = round_clamp((double)quant_const_f32(k, src) / f->sc[c], 1073741823.0);
            vals[e] = (int32_t)(n->op == TOSAC_OP_SUB ? -r : r);
        }
        tosac_value *kc = int_const(l, "qbias", TOSAC_DTYPE_INT32, k->rank, kshape, vals, cn);
        free(vals);
        tosac_value *ins[2] = {f->i32, kc}, *out = new_tensor(l, y, TOSAC_DTYPE_INT32);
        if (!kc || !ir_add_op(l->b, TOSAC_OP_ADD, 2, ins, out, n) || !set_i32(l, y, out, f->sc, f->nsc, 31)) return oom(l);
        return TOSAC_OK;
    }
    /* ExecuTorch's InsertRescaleInt32Pass: both to int32 at 2*max(s1,s2)/2^20 (int16: /2^12), add,
       keep in int32. ADD16_SHIFT14: int16 at 2*max/2^15 (TFLite's left shift 15), so that the larger
       input is widened by exactly 2^14, the one form of U55's "advanced" 16-bit ADD input scaling
       Vela fuses (ETHOS_U.md §2, c55:101-118); |code - zp| * 2^14 <= 2^29 per input, the sum fits. */
    tosac_qparams qa, qb;
    if (!qp_of(l, a, &qa) || !qp_of(l, bv, &qb)) return no_range(l, n, "input");
    bool shift14 = l->act == TOSAC_DTYPE_INT16 && (l->o->lowering & TOSAC_LOWER_ADD16_SHIFT14);
    double common = 2.0 * fmax(qa.scale, qb.scale) /
                    (l->act != TOSAC_DTYPE_INT16 ? 1048576.0 : shift14 ? 32768.0 : 4096.0);
    int ba, bb;
    tosac_value *ia = to_i32(l, a, common, &ba, n), *ib = ia ? to_i32(l, bv, common, &bb, n) : NULL;
    if (!ib) return TOSAC_ERR_UNSUPPORTED;
    if (shift14) { /* to_i32's bound counts the whole code range; a widened code is |code - zp| * scale */
        ba = widened_bits(l, ia, qa, common, ba);
        bb = widened_bits(l, ib, qb, common, bb);
    }
    tosac_value *ins[2] = {ia, ib}, *out = new_tensor(l, y, TOSAC_DTYPE_INT32);
    int bits = (ba > bb ? ba : bb) + 1;
    if (bits > 31) return unsupported(l, n, "int32 headroom exceeded");
    if (!ir_add_op(l->b, (tosac_op)n->op, 2, ins, out, n) || !set_i32(l, y, out, &common, 1, bits)) return oom(l);
    return TOSAC_OK;
}

static tosac_status lower_mul(lower *l, const tosac_node *n)
{
    const tosac_value *a = n->inputs[0], *bv = n->inputs[1], *y = n->outputs[0];
    /* by a positive scalar constant (GlobalAveragePool's 1/N): only the real scale changes */
    for (int side = 0; side < 2; side++) {
        const tosac_value *k = side ? a : bv, *x = side ? bv : a;
        if (!ir_is_const(k) || ir_is_const(x) || k->dtype != TOSAC_DTYPE_FP32 || tosac_value_nelem(k) != 1) continue;
        double c = quant_const_f32(k, 0);
        if (!(c > 0) || !isfinite(c) || tosac_value_nelem(x) != tosac_value_nelem(y)) continue;
        const form *f = &l->f[x->index];
        double sc1;
        int bits;
        tosac_value *t = f->i32;
        const double *sc = f->sc;
        uint32_t nsc = f->nsc;
        if (t) {
            note_wide(l, n, x);
            bits = f->bits;
        } else {
            t = unit_i32(l, x, &sc1, &bits, n);
            if (!t) return TOSAC_ERR_UNSUPPORTED;
            sc = &sc1;
            nsc = 1;
        }
        double *ns = malloc(nsc * sizeof *ns);
        if (!ns) return oom(l);
        for (uint32_t ch = 0; ch < nsc; ch++) ns[ch] = sc[ch] * c;
        bool ok = set_i32(l, y, t, ns, nsc, bits);
        free(ns);
        return ok ? TOSAC_OK : TOSAC_ERR_NOMEM;
    }
    double sa, sb;
    int ba, bb;
    if (l->act == TOSAC_DTYPE_INT16) {
        /* int16 x int16 -> int32 is exact (zero points are 0): no widening RESCALE */
        tosac_qparams qa, qb;
        if (!qp_of(l, a, &qa) || !qp_of(l, bv, &qb)) return unsupported(l, n, "input without calibration range");
        tosac_value *ha = as_i8(l, a, qa, n), *hb = ha ? as_i8(l, bv, qb, n) : NULL;
        if (!hb) return TOSAC_ERR_UNSUPPORTED;
        double sab = qa.scale * qb.scale;
        tosac_value *hins[3] = {ha, hb, quant_scalar(l->b, TOSAC_DTYPE_INT8, 0)}, *hout = new_tensor(l, y, TOSAC_DTYPE_INT32);
        if (!ir_add_op(l->b, TOSAC_OP_MUL, 3, hins, hout, n) || !set_i32(l, y, hout, &sab, 1, 31)) return oom(l);
        return TOSAC_OK;
    }
    tosac_value *ia = unit_i32(l, a, &sa, &ba, n), *ib = ia ? unit_i32(l, bv, &sb, &bb, n) : NULL;
    if (!ib) return TOSAC_ERR_UNSUPPORTED;
    if (ba + bb > 31) return unsupported(l, n, "int32 product may overflow");
    double sc = sa * sb;
    tosac_value *ins[3] = {ia, ib, quant_scalar(l->b, TOSAC_DTYPE_INT8, 0)}, *out = new_tensor(l, y, TOSAC_DTYPE_INT32);
    if (!ir_add_op(l->b, TOSAC_OP_MUL, 3, ins, out, n) || !set_i32(l, y, out, &sc, 1, ba + bb)) return oom(l);
    return TOSAC_OK;
}

/* Node n is the first REDUCE_SUM of a global pool (over H or W of a rank-4 value, its only reader
   the REDUCE_SUM over the other one). */
static bool pool_first_sum(const lower *l, const tosac_node *n)
{
    const tosac_value *x = n->inputs[0], *y = n->outputs[0];
    int64_t a = n->attr[TOSAC_ATTR_REDUCE_SUM_axis].i;
    if (x->rank != 4 || (a != 1 && a != 2) || l->uses[y->index] != 1) return false;
    for (uint32_t i = 0; i < l->fb->n_nodes; i++) {
        const tosac_node *r = l->fb->nodes[i];
        if (r->n_inputs && r->inputs[0] == y)
            return r->op == TOSAC_OP_REDUCE_SUM && r->attr[TOSAC_ATTR_REDUCE_SUM_axis].i == 3 - a;
    }
    return false;
}

static tosac_status lower_reduce_sum(lower *l, const tosac_node *n)
{
    const tosac_value *x = n->inputs[0], *y = n->outputs[0];
    int64_t axis = n->attr[TOSAC_ATTR_REDUCE_SUM_axis].i;
    if (axis < 0 || axis >= x->rank) return unsupported(l, n, "bad axis");
    int nb = bits_for((double)x->shape[axis]) - 1;
    const form *f = &l->f[x->index];
    tosac_value *t;
    const double *sc;
    double sc1;
    uint32_t nsc;
    int bits;
    /* GAP_AS_POOL under --a16w8: a global pool sums the int16 codes widened by 1 (x - zp), bounded by
       the codes, not an int32 form of x (an int16 TABLE's); so the second sum follows without an
       int16 requantization of the first, and gap-as-pool (target.c) makes the pair one AVG_POOL2D */
    tosac_qparams qx;
    if (l->act == TOSAC_DTYPE_INT16 && (l->o->lowering & TOSAC_LOWER_GAP_AS_POOL) && nb <= 13 && pool_first_sum(l, n) &&
        qp_of(l, x, &qx)) {
        if (!(t = to_i32(l, x, qx.scale, &bits, n))) return TOSAC_ERR_UNSUPPORTED;
        bits = widened_bits(l, t, qx, qx.scale, bits);
        sc1 = qx.scale, sc = &sc1, nsc = 1;
        if (bits + nb > 30) return unsupported(l, n, "int32 sum may overflow");
    } else if (is_i32(f->i32) && f->bits + nb <= 30 && (f->nsc == 1 || axis != x->rank - 1)) {
        note_wide(l, n, x);
        t = f->i32, sc = f->sc, nsc = f->nsc, bits = f->bits;
    } else {
        if (!(t = unit_i32(l, x, &sc1, &bits, n))) return TOSAC_ERR_UNSUPPORTED;
        sc = &sc1, nsc = 1;
        if (bits + nb > 30) return unsupported(l, n, "int32 sum may overflow");
    }
    tosac_value *out = new_tensor(l, y, TOSAC_DTYPE_INT32);
    tosac_node *op = ir_add_op(l->b, TOSAC_OP_REDUCE_SUM, 1, &t, out, n);
    if (!op || ir_copy_attrs(op, n) != TOSAC_OK || !set_i32(l, y, out, sc, nsc, bits + nb)) return oom(l);
    return TOSAC_OK;
}

static tosac_status lower_clamp(lower *l, const tosac_node *n)
{
    const tosac_value *x = n->inputs[0], *y = n->outputs[0];
    tosac_qparams q;
    if (!qp_of(l, y, &q)) return no_range(l, n, "output");
    /* the clamp's own output range becomes the q-params: its bounds mostly come for free */
    tosac_value *t = as_i8(l, x, q, n);
    if (!t) return TOSAC_ERR_UNSUPPORTED;
    float lo = quant_attr_f32(n, TOSAC_ATTR_CLAMP_min_val, -INFINITY),
          hi = quant_attr_f32(n, TOSAC_ATTR_CLAMP_max_val, INFINITY);
    int32_t qlo = tosac_quant_quantize(lo, q, l->qmin, l->qmax), qhi = tosac_quant_quantize(hi, q, l->qmin, l->qmax);
    if (qlo > l->qmin || qhi < l->qmax) {
        tosac_value *out = new_tensor(l, y, l->act);
        tosac_node *op = ir_add_op(l->b, TOSAC_OP_CLAMP, 1, &t, out, n);
        uint8_t blo[2], bhi[2]; /* one value of the operator's type, little-endian */
        unsigned w = l->act == TOSAC_DTYPE_INT16 ? 2 : 1;
        quant_put_le(blo, qlo, w);
        quant_put_le(bhi, qhi, w);
        if (!op || tosac_node_set_bytes(op, TOSAC_ATTR_CLAMP_min_val, blo, w) != TOSAC_OK ||
            tosac_node_set_bytes(op, TOSAC_ATTR_CLAMP_max_val, bhi, w) != TOSAC_OK ||
            tosac_node_set_int(op, TOSAC_ATTR_CLAMP_nan_mode, TOSAC_NAN_PROPAGATE) != TOSAC_OK)
            return oom(l);
        t = out;
    }
    set_i8(l, y, t, q);
    return TOSAC_OK;
}

static bool is_data_movement(uint32_t op)
{
    return op == TOSAC_OP_RESHAPE || op == TOSAC_OP_TRANSPOSE || op == TOSAC_OP_SLICE || op == TOSAC_OP_TILE ||
           op == TOSAC_OP_REVERSE || op == TOSAC_OP_PAD || op == TOSAC_OP_IDENTITY || op == TOSAC_OP_MAX_POOL2D ||
           op == TOSAC_OP_AVG_POOL2D || op == TOSAC_OP_GATHER;
}

/* Data movement and pooling: same q-params as the input; constant operands are shapes, zero
   points and the pad value. */
static tosac_status lower_move(lower *l, const tosac_node *n)
{
    const tosac_value *x = n->inputs[0], *y = n->outputs[0];
    tosac_qparams q = {1.0, 0};
    const form *f = &l->f[x->index];
    /* RESHAPE keeps an int32 form (MATMUL -> RESHAPE -> bias ADD) when its channels survive */
    bool wide = n->op == TOSAC_OP_RESHAPE && !ir_is_const(x) && is_i32(f->i32) && !f->i8 &&
                (f->nsc == 1 || last_dim(x) == last_dim(y));
    if (!wide && !qp_of(l, y, &q)) return no_range(l, n, "output");
    tosac_value *ins[8];
    if (n->n_inputs > 8) return unsupported(l, n, "too many operands");
    if (wide) note_wide(l, n, x);
    ins[0] = wide ? f->i32 : as_i8(l, x, q, n);
    if (!ins[0]) return TOSAC_ERR_UNSUPPORTED;
    for (uint32_t k = 1; k < n->n_inputs; k++) {
        const tosac_value *v = n->inputs[k];
        if (v->is_shape) ins[k] = copy_shape_value(l, v);
        else if (n->op == TOSAC_OP_PAD) ins[k] = as_i8(l, v, q, n); /* pad value, quantized (0 -> zp) */
        else if (n->op == TOSAC_OP_AVG_POOL2D) ins[k] = quant_scalar(l->b, l->act, q.zero_point);
        else if (n->op == TOSAC_OP_GATHER && k == 1 && !ir_is_const(v) && l->f[v->index].same)
            ins[k] = l->f[v->index].same; /* run-time indices (token ids): the integers themselves */
        else if (n->op == TOSAC_OP_GATHER && k == 1 && ir_is_const(v) && v->dtype == TOSAC_DTYPE_INT32) {
            /* the indices are integers already: the same constant in the INT graph */
            int64_t ne = tosac_value_nelem(v);
            int32_t *iv = malloc((size_t)(ne ? ne : 1) * sizeof *iv);
            if (!iv) return oom(l);
            for (int64_t e = 0; e < ne; e++)
                iv[e] = (int32_t)((uint32_t)v->data[4 * e] | (uint32_t)v->data[4 * e + 1] << 8 |
                                  (uint32_t)v->data[4 * e + 2] << 16 | (uint32_t)v->data[4 * e + 3] << 24);
            ins[k] = int_const(l, "indices", TOSAC_DTYPE_INT32, v->rank, v->shape, iv, ne);
            free(iv);
        }
        else return unsupported(l, n, "unexpected constant operand");
        if (!ins[k]) return oom(l);
    }
    tosac_value *out = new_tensor(l, y, wide ? TOSAC_DTYPE_INT32 : l->act);
    tosac_node *op = ir_add_op(l->b, (tosac_op)n->op, n->n_inputs, ins, out, n);
    if (!op || ir_copy_attrs(op, n) != TOSAC_OK) return oom(l);
    if (n->op == TOSAC_OP_AVG_POOL2D && tosac_node_set_int(op, TOSAC_ATTR_AVG_POOL2D_acc_type, TOSAC_DTYPE_INT32) != TOSAC_OK)
        return oom(l);
    if (wide) return set_i32(l, y, out, f->sc, f->nsc, f->bits) ? TOSAC_OK : TOSAC_ERR_NOMEM;
    set_i8(l, y, out, q);
    return TOSAC_OK;
}

/* Comparison-only operators whose output is one of the input's values: int8 in and out at the
   input's q-params (ExecuTorch's amax/amin share their input qspec), so the codes compare as the
   reals do and no RESCALE is needed. */
static bool shares_input_qp(uint32_t op)
{
    return is_data_movement(op) || op == TOSAC_OP_REDUCE_MAX || op == TOSAC_OP_REDUCE_MIN || op == TOSAC_OP_RESIZE;
}

/* RESIZE shares its input's q-params (ExecuTorch: upsample shares the input qspec). NEAREST moves
   codes (int8 -> int8). BILINEAR int8 gives int32 = sum of w_i * q_i with weights summing to
   Sy*Sx = scale_y_n*scale_x_n, so subtracting zp*Sy*Sx leaves an int32 form at real scale
   s/(Sy*Sx) and zero point 0, which its consumer rescales (TOSA forbids a zero point on an i32
   RESCALE input, hence the ADD). */
static tosac_status lower_resize(lower *l, const tosac_node *n)
{
    if (n->attr[TOSAC_ATTR_RESIZE_mode].i != TOSAC_RESIZE_BILINEAR) return lower_move(l, n);
    const tosac_value *x = n->inputs[0], *y = n->outputs[0], *sv = n->inputs[1];
    tosac_qparams q;
    if (!qp_of(l, x, &q)) return no_range(l, n, "input");
    if (!sv->is_shape || sv->data_len < 32) return unsupported(l, n, "the scale must be a constant shape");
    int64_t sc[4];
    for (int k = 0; k < 4; k++) {
        uint64_t u = 0;
        for (unsigned j = 0; j < 8; j++) u |= (uint64_t)sv->data[8 * k + j] << (8 * j);
        sc[k] = (int64_t)u;
    }
    double units = (double)sc[0] * (double)sc[2];
    /* int16 (--a16w8, zero point 0): TOSA's int16 RESIZE accumulates in INT48, no ADD needed */
    bool wide16 = l->act == TOSAC_DTYPE_INT16;
    if (!wide16 && units * 255.0 > 1073741823.0)
        return unsupported(l, n, "the bilinear scale numerators are too large for int32");
    tosac_value *ins[4] = {NULL, NULL, NULL, NULL};
    ins[0] = as_i8(l, x, q, n);
    ins[1] = copy_shape_value(l, n->inputs[1]);
    ins[2] = copy_shape_value(l, n->inputs[2]);
    ins[3] = copy_shape_value(l, n->inputs[3]);
    if (!ins[0]) return TOSAC_ERR_UNSUPPORTED;
    if (!ins[1] || !ins[2] || !ins[3]) return oom(l);
    tosac_value *r = new_tensor(l, y, wide16 ? TOSAC_DTYPE_INT48 : TOSAC_DTYPE_INT32);
    tosac_node *op = r ? ir_add_op(l->b, TOSAC_OP_RESIZE, 4, ins, r, n) : NULL;
    if (!op || ir_copy_attrs(op, n) != TOSAC_OK) return oom(l);
    double scale = q.scale / units;
    if (wide16) return set_i32(l, y, r, &scale, 1, bits_for(32767.0 * units)) ? TOSAC_OK : TOSAC_ERR_NOMEM;
    int64_t ones[TOSAC_MAX_RANK];
    for (int k = 0; k < y->rank; k++) ones[k] = 1;
    int32_t off = (int32_t)(-(double)q.zero_point * units);
    tosac_value *add_in[2] = {r, int_const(l, "resize_zp", TOSAC_DTYPE_INT32, y->rank, ones, &off, 1)};
    tosac_value *out = add_in[1] ? new_tensor(l, y, TOSAC_DTYPE_INT32) : NULL;
    if (!out || !ir_add_op(l->b, TOSAC_OP_ADD, 2, add_in, out, n)) return oom(l);
    return set_i32(l, y, out, &scale, 1, bits_for(255.0 * units)) ? TOSAC_OK : TOSAC_ERR_NOMEM;
}

static tosac_status lower_concat(lower *l, const tosac_node *n)
{
    const tosac_value *y = n->outputs[0];
    tosac_qparams q;
    if (!qp_of(l, y, &q)) return no_range(l, n, "output");
    tosac_value **ins = malloc((n->n_inputs ? n->n_inputs : 1) * sizeof *ins);
    if (!ins) return oom(l);
    tosac_status s = TOSAC_OK;
    for (uint32_t k = 0; k < n->n_inputs && s == TOSAC_OK; k++)
        if (!(ins[k] = as_i8(l, n->inputs[k], q, n))) s = TOSAC_ERR_UNSUPPORTED;
    tosac_value *out = s == TOSAC_OK ? new_tensor(l, y, l->act) : NULL;
    tosac_node *op = out ? ir_add_op(l->b, TOSAC_OP_CONCAT, n->n_inputs, ins, out, n) : NULL;
    if (s == TOSAC_OK && (!op || ir_copy_attrs(op, n) != TOSAC_OK)) s = oom(l);
    if (s == TOSAC_OK) set_i8(l, y, out, q);
    free(ins);
    return s;
}

/* int16 TABLE (EXT-INT16): 513 entries at the output's scale (coarser while a slope would break
   TOSA's REQUIRE), an int32 result at that scale / 128, rescaled by its consumer. */
static tosac_status lower_table16(lower *l, const cluster *c, const tosac_node *n, tosac_value *xi, tosac_qparams qx,
                                  tosac_qparams qy)
{
    int16_t table[513];
    bool ok = false;
    tosac_qparams qt = qy;
    for (int tries = 0; !ok && tries < 16; tries++) {
        if (tries) qt.scale *= 2;
        uint32_t xi0 = c->x->index;
        bool seen = xi0 < l->st->n && l->st->seen[xi0];
        tosac_status s = quant_cluster_table16(c->x, c->y, c->ops, c->n_ops, qx, qt, seen ? l->lo[xi0] : -INFINITY,
                                               seen ? l->hi[xi0] : INFINITY, table, &ok, l->d);
        if (s != TOSAC_OK) return s;
    }
    if (!ok) return unsupported(l, n, "the int16 TABLE's slopes exceed int16");
    int32_t vals[513];
    for (int k = 0; k < 513; k++) vals[k] = table[k];
    int64_t n513 = 513;
    tosac_value *ins[2] = {xi, int_const(l, "table", TOSAC_DTYPE_INT16, 1, &n513, vals, 513)};
    tosac_value *out = new_tensor(l, c->y, TOSAC_DTYPE_INT32);
    double sc = qt.scale / 128.0;
    if (!ins[1] || !ir_add_op(l->b, TOSAC_OP_TABLE, 2, ins, out, n) || !set_i32(l, c->y, out, &sc, 1, 24)) return oom(l);
    return TOSAC_OK;
}

static tosac_status lower_table(lower *l, const cluster *c, const tosac_node *n)
{
    tosac_qparams qx, qy;
    if (!qp_of(l, c->x, &qx) || !qp_of(l, c->y, &qy)) return no_range(l, n, "value");
    tosac_value *xi = as_i8(l, c->x, qx, n);
    if (!xi) return TOSAC_ERR_UNSUPPORTED;
    if (l->act == TOSAC_DTYPE_INT16) return lower_table16(l, c, n, xi, qx, qy);
    int8_t table[256];
    tosac_status s = quant_cluster_table(c->x, c->y, c->ops, c->n_ops, qx, qy, table, l->d);
    if (s != TOSAC_OK) return s;
    int32_t vals[256];
    for (int k = 0; k < 256; k++) vals[k] = table[k];
    int64_t n256 = 256;
    tosac_value *ins[2] = {xi, int_const(l, "table", TOSAC_DTYPE_INT8, 1, &n256, vals, 256)};
    tosac_value *out = new_tensor(l, c->y, TOSAC_DTYPE_INT8);
    if (!ins[1] || !ir_add_op(l->b, TOSAC_OP_TABLE, 2, ins, out, n)) return oom(l);
    set_i8(l, c->y, out, qy);
    return TOSAC_OK;
}

/* ---- single-input elementwise subgraphs -> TABLE ------------------------------------------ */

static bool is_ewise(uint32_t op)
{
    switch (op) {
    case TOSAC_OP_SIGMOID: case TOSAC_OP_TANH: case TOSAC_OP_EXP: case TOSAC_OP_LOG: case TOSAC_OP_RECIPROCAL:
    case TOSAC_OP_RSQRT: case TOSAC_OP_ERF: case TOSAC_OP_ABS: case TOSAC_OP_NEGATE: case TOSAC_OP_CEIL:
    case TOSAC_OP_FLOOR: case TOSAC_OP_SIN: case TOSAC_OP_COS: case TOSAC_OP_CLAMP: case TOSAC_OP_ADD:
    case TOSAC_OP_SUB: case TOSAC_OP_MUL: case TOSAC_OP_MAXIMUM: case TOSAC_OP_MINIMUM: case TOSAC_OP_POW:
    /* comparisons and SELECT: piecewise functions (Shrink, Atan, Asinh...) are pointwise too */
    case TOSAC_OP_GREATER: case TOSAC_OP_GREATER_EQUAL: case TOSAC_OP_EQUAL: case TOSAC_OP_SELECT:
    case TOSAC_OP_LOGICAL_AND: case TOSAC_OP_LOGICAL_OR: case TOSAC_OP_LOGICAL_NOT:
        return true;
    default: return false;
    }
}
/* Operators lowered directly in integers when they stand alone. */
static bool is_direct(uint32_t op) { return op == TOSAC_OP_CLAMP || op == TOSAC_OP_ADD || op == TOSAC_OP_SUB || op == TOSAC_OP_MUL; }

static bool same_shape(const tosac_value *a, const tosac_value *b)
{
    if (a->rank != b->rank) return false;
    for (int32_t k = 0; k < a->rank; k++)
        if (a->shape[k] != b->shape[k]) return false;
    return true;
}

/* Tries to make a TABLE cluster of the elementwise operators fed (only) by node i's single
   non-constant input x. Returns true when a cluster was recorded. */
/* FP node i belongs to a Q/DQ chain of the model (lowered as one step, never part of a TABLE). */
static bool in_qdq(const lower *l, uint32_t i) { return l->fx->in_chain[i] || l->fx->chain_in[i] >= 0; }

/* The last node of a Q/DQ chain: its output is the chain input's int8 form at the model's q-params
   (a conv accumulator is rescaled straight to them; an int8 value at them is reused). */
static tosac_status lower_qdq(lower *l, const tosac_node *n)
{
    const tosac_value *x = l->fb->tensors[l->fx->chain_in[n->index]], *y = n->outputs[0];
    tosac_qparams q = l->fx->q[y->index];
    tosac_value *t = as_i8(l, x, q, n);
    if (!t) return TOSAC_ERR_UNSUPPORTED;
    set_i8(l, y, t, q);
    return TOSAC_OK;
}

static bool try_cluster(lower *l, uint32_t i, bool *in_s, bool *in_a, tosac_node **stack)
{
    const tosac_block *fb = l->fb;
    const tosac_node *n0 = fb->nodes[i];
    const tosac_value *x = NULL;
    for (uint32_t k = 0; k < n0->n_inputs; k++) {
        const tosac_value *v = n0->inputs[k];
        if (ir_is_const(v)) continue;
        if (x && x != v) return false;
        x = v;
    }
    if (!x || x->dtype != TOSAC_DTYPE_FP32 || x->rank < 1) return false;
    /* S: elementwise operators from i on whose non-constant inputs are x or results of S, with
       scalar constants only and x's shape (so f is one pointwise function of x) */
    memset(in_s, 0, fb->n_nodes);
    bool *prod = in_a; /* reuse as "value produced by S or x", by value index */
    memset(prod, 0, fb->n_tensors);
    prod[x->index] = true;
    uint32_t last = i;
    for (uint32_t j = i; j < fb->n_nodes; j++) {
        const tosac_node *n = fb->nodes[j];
        if (l->cluster_of[j] >= 0 || in_qdq(l, j) || !is_ewise(n->op) || n->n_outputs != 1 || !same_shape(n->outputs[0], x) ||
            (n->outputs[0]->dtype != TOSAC_DTYPE_FP32 && n->outputs[0]->dtype != TOSAC_DTYPE_BOOL))
            continue;
        bool ok = true, fed = false;
        for (uint32_t k = 0; k < n->n_inputs && ok; k++) {
            const tosac_value *v = n->inputs[k];
            if (ir_is_const(v)) ok = tosac_value_nelem(v) == 1;
            else if (v->is_shape || !prod[v->index]) ok = false;
            else fed = true;
        }
        if (!ok || !fed) continue;
        in_s[j] = true;
        prod[n->outputs[0]->index] = true;
        last = j;
    }
    if (!in_s[i]) return false;
    /* y: the latest result of S whose ancestors in S are used only inside them */
    for (uint32_t j = last + 1; j-- > i;) {
        if (!in_s[j] || fb->nodes[j]->outputs[0]->dtype != TOSAC_DTYPE_FP32) continue;
        memset(in_a, 0, fb->n_nodes);
        uint32_t sp = 0, count = 0;
        bool direct_only = true;
        stack[sp++] = fb->nodes[j];
        in_a[j] = true;
        while (sp) {
            const tosac_node *n = stack[--sp];
            count++;
            direct_only &= is_direct(n->op);
            for (uint32_t k = 0; k < n->n_inputs; k++) {
                const tosac_node *p = n->inputs[k]->producer;
                if (p && in_s[p->index] && !in_a[p->index]) {
                    in_a[p->index] = true;
                    stack[sp++] = fb->nodes[p->index];
                }
            }
        }
        if (direct_only && count < 2) continue; /* a lone CLAMP/ADD/SUB/MUL is lowered as such */
        bool closed = true;
        for (uint32_t m = i; m <= j && closed; m++) {
            if (!in_a[m] || m == j) continue;
            uint32_t inside = 0;
            const tosac_value *o = fb->nodes[m]->outputs[0];
            for (uint32_t q = i; q <= j; q++)
                if (in_a[q])
                    for (uint32_t k = 0; k < fb->nodes[q]->n_inputs; k++) inside += fb->nodes[q]->inputs[k] == o;
            closed = inside == l->uses[o->index];
        }
        if (!closed) continue;
        cluster *c = &l->cl[l->n_cl];
        c->ops = malloc(count * sizeof *c->ops);
        if (!c->ops) return false;
        c->x = x;
        c->y = fb->nodes[j]->outputs[0];
        c->n_ops = 0;
        for (uint32_t m = i; m <= j; m++)
            if (in_a[m]) {
                c->ops[c->n_ops++] = fb->nodes[m];
                l->cluster_of[m] = (int32_t)l->n_cl;
            }
        l->n_cl++;
        return true;
    }
    return false;
}

static tosac_status find_clusters(lower *l)
{
    const tosac_block *fb = l->fb;
    uint32_t n = fb->n_nodes, big = n > fb->n_tensors ? n : fb->n_tensors;
    bool *in_s = malloc(n ? n : 1), *in_a = malloc(big ? big : 1);
    tosac_node **stack = malloc((n ? n : 1) * sizeof *stack);
    l->cl = calloc(n ? n : 1, sizeof *l->cl);
    tosac_status s = in_s && in_a && stack && l->cl ? TOSAC_OK : oom(l);
    for (uint32_t i = 0; i < n && s == TOSAC_OK; i++)
        while (l->cluster_of[i] < 0 && !in_qdq(l, i) && is_ewise(fb->nodes[i]->op) && try_cluster(l, i, in_s, in_a, stack)) {
        }
    free(in_s);
    free(in_a);
    free(stack);
    return s;
}

/* ---- integer computations ----------------------------------------------------------------- */

/* An operator of integers or bools only (index arithmetic on token ids: the negative-index wrap
   of a Gather, position ids...): every output is not FP32 and every operand is a constant or a
   value with an integer form of its own. */
static bool is_int_node(const lower *l, const tosac_node *n)
{
    if (n->n_outputs != 1 || n->outputs[0]->dtype == TOSAC_DTYPE_FP32) return false;
    bool fed = false;
    for (uint32_t k = 0; k < n->n_inputs; k++) {
        const tosac_value *v = n->inputs[k];
        if (v->is_shape || ir_is_const(v)) continue;
        if (!l->f[v->index].same) return false;
        fed = true;
    }
    return fed;
}

/* Copies such an operator into the INT graph as it is: integers need no quantization. */
static tosac_status lower_int(lower *l, const tosac_node *n)
{
    tosac_value *ins[8];
    if (n->n_inputs > 8) return unsupported(l, n, "too many operands");
    for (uint32_t k = 0; k < n->n_inputs; k++) {
        const tosac_value *v = n->inputs[k];
        if (v->is_shape) ins[k] = copy_shape_value(l, v);
        else if (ir_is_const(v)) ins[k] = ir_new_const(l->b, "k", v->dtype, v->rank, v->shape, v->data, v->data_len);
        else ins[k] = l->f[v->index].same;
        if (!ins[k]) return oom(l);
    }
    const tosac_value *y = n->outputs[0];
    tosac_value *out = ir_new_tensor(l->b, "int", y->dtype, y->rank, y->shape);
    tosac_node *op = out ? ir_add_op(l->b, (tosac_op)n->op, n->n_inputs, ins, out, n) : NULL;
    if (!op || ir_copy_attrs(op, n) != TOSAC_OK) return oom(l);
    l->f[y->index].same = out;
    return TOSAC_OK;
}

/* ---- driver ------------------------------------------------------------------------------- */

static tosac_status lower_node(lower *l, const tosac_node *n)
{
    for (uint32_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k]->dtype != TOSAC_DTYPE_FP32) return unsupported(l, n, "only FP32 computations can be quantized");
    switch (n->op) {
    case TOSAC_OP_CONV2D:
    case TOSAC_OP_DEPTHWISE_CONV2D:
    case TOSAC_OP_TRANSPOSE_CONV2D: return lower_conv(l, n);
    case TOSAC_OP_MATMUL: return lower_matmul(l, n);
    case TOSAC_OP_ADD:
    case TOSAC_OP_SUB: return lower_add_sub(l, n);
    case TOSAC_OP_MUL: return lower_mul(l, n);
    case TOSAC_OP_REDUCE_SUM: return lower_reduce_sum(l, n);
    case TOSAC_OP_CLAMP: return lower_clamp(l, n);
    case TOSAC_OP_CONCAT: return lower_concat(l, n);
    case TOSAC_OP_RESIZE: return lower_resize(l, n);
    default:
        if (shares_input_qp(n->op)) return lower_move(l, n);
        return unsupported(l, n, "no integer lowering for this operator yet");
    }
}

/*
 * Saturation trimming of TABLE inputs. A value read only by TABLEs (SiLU, sigmoid, tanh, ...)
 * needs int8 codes only where the function still changes: below a point a where f stays within
 * a quarter output step of f(a) (SiLU below about -6, a sigmoid gate beyond +-6), clipping x to a
 * gives the same table entries. The range shrinks to [a, b], so the codes that remain are finer:
 * a conv -> SiLU whose output reaches -18 loses nothing by stopping at -6 (3x finer input), and a
 * squeeze-and-excitation gate whose logits reach +-800 (random-weight deep layers) gets a usable
 * sigmoid input instead of a 0/1 switch. Found on a 4096-point grid of the FP subgraph.
 */
#define TRIM_GRID 4096

static tosac_status trim_cluster(lower *l, const cluster *c, double lo, double hi, double *a, double *b)
{
    *a = lo;
    *b = hi;
    const quant_stats *st = l->st;
    uint32_t yi = c->y->index;
    if (!(hi > lo) || yi >= st->n || !st->seen[yi]) return TOSAC_OK;
    double tol = 0.25 * choose_act(l, st->min[yi], st->max[yi]).scale;
    float *xs = malloc(TRIM_GRID * sizeof *xs), *ys = malloc(TRIM_GRID * sizeof *ys);
    tosac_status s = xs && ys ? TOSAC_OK : oom(l);
    for (uint32_t k = 0; k < TRIM_GRID && s == TOSAC_OK; k++) xs[k] = (float)(lo + (hi - lo) * k / (TRIM_GRID - 1));
    if (s == TOSAC_OK) s = quant_cluster_eval(c->x, c->y, c->ops, c->n_ops, xs, ys, TRIM_GRID, l->d);
    if (s == TOSAC_OK) {
        /* largest left point whose prefix stays within tol of it, likewise from the right; a NaN
           (log of a negative, ...) stops the scan */
        double pmax = ys[0], pmin = ys[0];
        uint32_t ka = 0, kb = TRIM_GRID - 1;
        for (uint32_t k = 0; k < TRIM_GRID && ys[k] == ys[k]; k++) {
            pmax = fmax(pmax, ys[k]);
            pmin = fmin(pmin, ys[k]);
            if (pmax - ys[k] <= tol && ys[k] - pmin <= tol) ka = k;
            else break;
        }
        pmax = pmin = ys[TRIM_GRID - 1];
        for (uint32_t k = TRIM_GRID; k-- > 0 && ys[k] == ys[k];) {
            pmax = fmax(pmax, ys[k]);
            pmin = fmin(pmin, ys[k]);
            if (pmax - ys[k] <= tol && ys[k] - pmin <= tol) kb = k;
            else break;
        }
        if (ka < kb) {
            *a = xs[ka];
            *b = xs[kb];
        }
    }
    free(xs);
    free(ys);
    return s;
}

static tosac_status trim_table_inputs(lower *l, double *lo, double *hi)
{
    const tosac_block *fb = l->fb;
    tosac_status s = TOSAC_OK;
    for (uint32_t ci = 0; ci < l->n_cl && s == TOSAC_OK; ci++) {
        const tosac_value *x = l->cl[ci].x;
        bool first = true;
        for (uint32_t cj = 0; cj < ci; cj++) first &= l->cl[cj].x != x;
        if (!first || x->index >= l->st->n || !l->st->seen[x->index]) continue; /* done with the first */
        /* every read of x must be by a TABLE subgraph whose input it is */
        uint32_t by_tables = 0;
        for (uint32_t i = 0; i < fb->n_nodes; i++)
            for (uint32_t k = 0; k < fb->nodes[i]->n_inputs; k++)
                by_tables += fb->nodes[i]->inputs[k] == x && l->cluster_of[i] >= 0 && l->cl[l->cluster_of[i]].x == x;
        if (by_tables != l->uses[x->index]) continue;
        double a = INFINITY, b = -INFINITY;
        for (uint32_t cj = ci; cj < l->n_cl && s == TOSAC_OK; cj++) {
            if (l->cl[cj].x != x) continue;
            double ca, cb;
            s = trim_cluster(l, &l->cl[cj], lo[x->index], hi[x->index], &ca, &cb);
            a = fmin(a, ca);
            b = fmax(b, cb);
        }
        if (s == TOSAC_OK && a <= b) {
            lo[x->index] = a;
            hi[x->index] = b;
        }
    }
    return s;
}

static uint32_t qp_group(uint32_t *parent, uint32_t k)
{
    while (parent[k] != k) k = parent[k] = parent[parent[k]];
    return k;
}

/*
 * CONCAT_DIRECT, shared q-params (ExecuTorch's SharedQuantizationSpec for cat): a CONCAT input
 * that data movement makes from an earlier value (shufflenet's channel split of the previous
 * block's shuffled CONCAT) would need a RESCALE to the CONCAT's scale between two data-layout
 * operators, where Vela fuses no scaling (ETHOS_U.md §2). That value and the CONCAT share one set
 * of q-params from the union of their ranges instead, and the data movement in between follows.
 */
static tosac_status share_concat_qparams(lower *l)
{
    const tosac_block *fb = l->fb;
    uint32_t nt = fb->n_tensors, *parent = malloc((nt ? nt : 1) * sizeof *parent), *size = calloc(nt ? nt : 1, sizeof *size);
    double *glo = malloc((nt ? nt : 1) * sizeof *glo), *ghi = malloc((nt ? nt : 1) * sizeof *ghi);
    if (!parent || !size || !glo || !ghi) {
        free(parent), free(size), free(glo), free(ghi);
        return oom(l);
    }
    for (uint32_t k = 0; k < nt; k++) parent[k] = k;
    bool any = false;
    for (uint32_t i = 0; i < fb->n_nodes; i++) {
        const tosac_node *n = fb->nodes[i];
        uint32_t o = n->n_outputs == 1 ? n->outputs[0]->index : 0;
        if (n->op != TOSAC_OP_CONCAT || n->n_outputs != 1 || !l->has_qp[o] || l->fx->has[o] || o >= l->st->n ||
            !l->st->seen[o])
            continue;
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            const tosac_value *r = n->inputs[k];
            while (r->producer && shares_input_qp(r->producer->op) && r->producer->n_inputs &&
                   !ir_is_const(r->producer->inputs[0]) && !l->fx->has[r->index])
                r = r->producer->inputs[0];
            if (r == n->inputs[k] || ir_is_const(r) || !l->has_qp[r->index] || l->fx->has[r->index] ||
                r->index >= l->st->n || !l->st->seen[r->index])
                continue;
            uint32_t a = qp_group(parent, r->index), b = qp_group(parent, o);
            if (a != b) parent[a < b ? b : a] = a < b ? a : b, any = true;
        }
    }
    for (uint32_t k = 0; k < nt && any; k++) glo[k] = INFINITY, ghi[k] = -INFINITY;
    for (uint32_t k = 0; k < nt && any; k++) size[qp_group(parent, k)]++;
    for (uint32_t k = 0; k < nt && any; k++) { /* a group's members are all calibrated values */
        uint32_t g = qp_group(parent, k);
        if (size[g] > 1) glo[g] = fmin(glo[g], l->lo[k]), ghi[g] = fmax(ghi[g], l->hi[k]);
    }
    for (uint32_t k = 0; k < nt && any; k++) {
        uint32_t g = qp_group(parent, k);
        if (size[g] > 1) l->qp[k] = choose_act(l, glo[g], ghi[g]);
    }
    /* the data movement between them takes its input's q-params again (operators in order) */
    for (uint32_t i = 0; i < fb->n_nodes && any; i++) {
        const tosac_node *n = fb->nodes[i];
        if (shares_input_qp(n->op) && n->n_outputs == 1 && n->n_inputs && !ir_is_const(n->inputs[0]) &&
            l->has_qp[n->inputs[0]->index] && !l->fx->has[n->outputs[0]->index]) {
            l->qp[n->outputs[0]->index] = l->qp[n->inputs[0]->index];
            l->has_qp[n->outputs[0]->index] = true;
        }
    }
    free(parent), free(size), free(glo), free(ghi);
    return TOSAC_OK;
}

static tosac_status build(lower *l, tosac_quant_iomap *io)
{
    const tosac_block *fb = l->fb;
    /* q-params: own range (calibration method, then TABLE saturation), or the input's for data
       movement and pooling (PT2E shared qspec) */
    uint32_t nt = fb->n_tensors;
    double *lo = l->lo = malloc((nt ? nt : 1) * sizeof *lo), *hi = l->hi = malloc((nt ? nt : 1) * sizeof *hi);
    tosac_status s = lo && hi ? TOSAC_OK : oom(l);
    for (uint32_t k = 0; k < nt && s == TOSAC_OK; k++)
        if (k < l->st->n && l->st->seen[k])
            tosac_quant_hist_range16(l->st->hist ? l->st->hist + (size_t)k * TOSAC_QUANT_HIST_BINS : NULL, l->o->method,
                                     l->act == TOSAC_DTYPE_INT16, l->st->min[k], l->st->max[k], &lo[k], &hi[k]);
    if (s == TOSAC_OK) s = trim_table_inputs(l, lo, hi);
    for (uint32_t k = 0; k < nt && s == TOSAC_OK; k++)
        if (k < l->st->n && l->st->seen[k]) {
            l->qp[k] = choose_act(l, lo[k], hi[k]);
            l->has_qp[k] = true;
        }
    if (s != TOSAC_OK) return s;
    /* the model's own Q/DQ q-params win over calibration and over sharing */
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t k = 0; k < nt; k++)
            if (l->fx->has[k]) {
                l->qp[k] = l->fx->q[k];
                l->has_qp[k] = true;
            }
        for (uint32_t i = 0; i < fb->n_nodes && !pass; i++) {
            const tosac_node *n = fb->nodes[i];
            tosac_qparams q;
            if (shares_input_qp(n->op) && n->n_outputs == 1 && !ir_is_const(n->inputs[0]) && qp_of(l, n->inputs[0], &q)) {
                l->qp[n->outputs[0]->index] = q;
                l->has_qp[n->outputs[0]->index] = true;
            }
        }
    }
    if (l->o->lowering & TOSAC_LOWER_CONCAT_DIRECT) {
        tosac_status ss = share_concat_qparams(l);
        if (ss != TOSAC_OK) return ss;
    }
    /* CONCAT_DIRECT: an input only the CONCAT reads, made by an operator with q-params of its own,
       takes the CONCAT's (PT2E's shared qspec for cat): its producer then writes straight into the
       CONCAT's scale instead of RESCALE -> RESCALE (docs/QUANT.md, "Target lowering") */
    for (uint32_t i = 0; i < fb->n_nodes && (l->o->lowering & TOSAC_LOWER_CONCAT_DIRECT); i++) {
        const tosac_node *n = fb->nodes[i];
        if (n->op != TOSAC_OP_CONCAT || n->n_outputs != 1 || !l->has_qp[n->outputs[0]->index]) continue;
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            const tosac_value *v = n->inputs[k];
            if (!ir_is_const(v) && v->producer && !shares_input_qp(v->producer->op) && l->uses[v->index] == 1 &&
                !l->fx->has[v->index]) {
                l->qp[v->index] = l->qp[n->outputs[0]->index];
                l->has_qp[v->index] = true;
            }
        }
    }
    for (uint32_t i = 0; i < fb->n_inputs; i++) {
        const tosac_value *v = fb->inputs[i];
        tosac_qparams q;
        if (v->dtype == TOSAC_DTYPE_INT32 && !l->fx->has[v->index]) { /* token ids: kept as they are */
            tosac_value *t = tosac_block_add_tensor(l->b, v->name, TOSAC_DTYPE_INT32, v->rank, v->shape);
            if (!t || tosac_block_add_input(l->b, t) != TOSAC_OK) return oom(l);
            l->f[v->index].same = t;
            io->inputs[i].q = (tosac_qparams){1.0, 0};
            io->inputs[i].type = TOSAC_QUANT_IO_INT32;
            continue;
        }
        /* FP32, or int8 codes a DequantizeLinear of the model reads */
        if ((v->dtype != TOSAC_DTYPE_FP32 && !(v->dtype == TOSAC_DTYPE_INT8 && l->fx->has[v->index])) || !qp_of(l, v, &q))
            return tosac_diag_add(l->d, TOSAC_ERR_UNSUPPORTED,
                                  "input '%s': only FP32 inputs (or int8 ones read by DequantizeLinear) can be quantized; "
                                  "INT32 ones are kept",
                                  v->name);
        tosac_value *t = tosac_block_add_tensor(l->b, v->name, l->act, v->rank, v->shape);
        if (!t || tosac_block_add_input(l->b, t) != TOSAC_OK) return oom(l);
        set_i8(l, v, t, q);
        io->inputs[i].q = q;
        io->inputs[i].type = l->act == TOSAC_DTYPE_INT16 ? TOSAC_QUANT_IO_INT16 : TOSAC_QUANT_IO_INT8;
    }
    for (uint32_t i = 0; i < fb->n_nodes && s == TOSAC_OK; i++) {
        const tosac_node *n = fb->nodes[i];
        if (n->op == TOSAC_OP_CONST || n->op == TOSAC_OP_CONST_SHAPE) continue;
        if (l->fx->in_chain[i]) continue;
        if (l->fx->chain_in[i] >= 0) {
            s = lower_qdq(l, n);
            continue;
        }
        if (is_int_node(l, n)) {
            s = lower_int(l, n);
            continue;
        }
        int32_t c = l->cluster_of[i];
        if (c >= 0) {
            if (l->cl[c].y == n->outputs[0]) s = lower_table(l, &l->cl[c], n);
            continue;
        }
        s = lower_node(l, n);
    }
    for (uint32_t i = 0; i < fb->n_outputs && s == TOSAC_OK; i++) {
        const tosac_value *v = fb->outputs[i];
        tosac_qparams q;
        if (!qp_of(l, v, &q)) return no_range(l, v->producer, "graph output");
        tosac_value *t = as_i8(l, v, q, v->producer);
        if (!t) return TOSAC_ERR_UNSUPPORTED;
        bool taken = false; /* an input or an earlier output keeps its name: copy */
        for (uint32_t k = 0; k < l->b->n_inputs; k++) taken |= l->b->inputs[k] == t;
        for (uint32_t k = 0; k < l->b->n_outputs; k++) taken |= l->b->outputs[k] == t;
        if (taken) {
            tosac_value *cp = new_tensor(l, v, l->act);
            if (!ir_add_op(l->b, TOSAC_OP_IDENTITY, 1, &t, cp, v->producer)) return oom(l);
            t = cp;
        }
        if (ir_rename(l->b, t, v->name) != TOSAC_OK)
            return tosac_diag_add(l->d, TOSAC_ERR_INTERNAL, "output '%s': the name is taken in the integer graph", v->name);
        if (tosac_block_add_output(l->b, t) != TOSAC_OK) return oom(l);
        io->outputs[i].q = q;
        io->outputs[i].type = l->act == TOSAC_DTYPE_INT16 ? TOSAC_QUANT_IO_INT16 : TOSAC_QUANT_IO_INT8;
    }
    return s;
}

static tosac_status fill_io(tosac_quant_io *io, const tosac_value *v)
{
    size_t len = strlen(v->name) + 1;
    char *name = malloc(len);
    if (!name) return TOSAC_ERR_NOMEM;
    memcpy(name, v->name, len);
    io->name = name;
    io->rank = v->rank < 8 ? v->rank : 8;
    for (int32_t r = 0; r < io->rank; r++) io->shape[r] = v->shape[r];
    return TOSAC_OK;
}

/* io->tensors: the q-params of every int8/int16 tensor of the finished INT program that is the
   activation form of an FP value (set where the form is made: set_i8), once per tensor. The
   target lowering's new tensors (data movement of these) are left to their readers to derive. */
static tosac_status tensor_map(lower *l, tosac_quant_iomap *io)
{
    const tosac_block *fb = l->fb, *b = l->b;
    io->tensors = calloc(fb->n_tensors ? fb->n_tensors : 1, sizeof *io->tensors);
    bool *done = calloc(b->n_tensors ? b->n_tensors : 1, sizeof *done);
    tosac_status s = io->tensors && done ? TOSAC_OK : oom(l);
    for (uint32_t k = 0; k < fb->n_tensors && s == TOSAC_OK; k++) {
        const tosac_value *t = l->f[k].i8;
        if (!t || t->index >= b->n_tensors || b->tensors[t->index] != t || done[t->index] ||
            (t->dtype != TOSAC_DTYPE_INT8 && t->dtype != TOSAC_DTYPE_INT16))
            continue;
        done[t->index] = true;
        tosac_quant_io *e = &io->tensors[io->n_tensors];
        if (fill_io(e, t) != TOSAC_OK) {
            s = oom(l);
            break;
        }
        io->n_tensors++;
        e->type = t->dtype == TOSAC_DTYPE_INT16 ? TOSAC_QUANT_IO_INT16 : TOSAC_QUANT_IO_INT8;
        e->q = l->f[k].i8q;
    }
    free(done);
    return s;
}

/* The SQNR report's map: every FP value with an integer form, except those pure data movement
   produces (the same codes as its input: no error of its own). */
/* Whether the report compares value v when it has an integer form: not a constant, and not data
   movement, which has its input's q-params and values (pooling computes). */
static bool report_value(const tosac_value *v)
{
    const tosac_node *p = v->producer;
    return !ir_is_const(v) && !(p && is_data_movement(p->op) && p->op != TOSAC_OP_MAX_POOL2D && p->op != TOSAC_OP_AVG_POOL2D);
}

static tosac_status report_map(const lower *l, quant_map_entry **out, uint32_t *n_out)
{
    const tosac_block *fb = l->fb;
    quant_map_entry *m = calloc(fb->n_tensors ? fb->n_tensors : 1, sizeof *m);
    if (!m) return tosac_diag_add(l->d, TOSAC_ERR_NOMEM, "out of memory");
    uint32_t n = 0;
    for (uint32_t k = 0; k < fb->n_tensors; k++) {
        const tosac_value *v = fb->tensors[k];
        const form *f = &l->f[k];
        if (!report_value(v) || (!f->i8 && !f->i32)) continue;
        quant_map_entry *e = &m[n++];
        e->fp = k;
        if (f->i8) {
            e->t = f->i8;
            e->q = f->i8q;
        } else {
            e->t = f->i32;
            e->i32 = true;
            e->sc = f->sc;
            e->nsc = f->nsc;
        }
    }
    *out = m;
    *n_out = n;
    return TOSAC_OK;
}

/* --emit-qdq: the FP program with Q/DQ where the INT program has int8 values (emit_qdq.c). */
static tosac_status emit_qdq(const lower *l, const tosac_quant_iomap *io)
{
    const tosac_block *fb = l->fb;
    quant_qdq_value *v = calloc(fb->n_tensors ? fb->n_tensors : 1, sizeof *v);
    tosac_status s = v ? TOSAC_OK : tosac_diag_add(l->d, TOSAC_ERR_NOMEM, "out of memory");
    for (uint32_t k = 0; k < fb->n_tensors && s == TOSAC_OK; k++) {
        v[k].i8 = l->f[k].i8 != NULL;
        v[k].q = l->f[k].i8q;
    }
    for (uint32_t i = 0; i < fb->n_nodes && s == TOSAC_OK; i++) l->qn[i].in_table = l->cluster_of[i] >= 0;
    if (s == TOSAC_OK) s = quant_emit_qdq(fb, io, v, l->qn, l->o->emit_qdq, l->d);
    free(v);
    return s;
}

/* The FP values calibration and the report read: all but the results a TABLE subgraph keeps
   inside (find_clusters: only its input's and its output's ranges matter, and no integer form
   is made of them), which the FP program may then compute inside a chain, never stored. */
static tosac_status observed_values(lower *l, uint32_t **out, uint32_t *n)
{
    const tosac_block *fb = l->fb;
    bool *inside = calloc(fb->n_tensors ? fb->n_tensors : 1, sizeof *inside);
    uint32_t *v = malloc((fb->n_tensors ? fb->n_tensors : 1) * sizeof *v);
    if (!inside || !v) {
        free(inside);
        free(v);
        return oom(l);
    }
    for (uint32_t c = 0; c < l->n_cl; c++)
        for (uint32_t k = 0; k < l->cl[c].n_ops; k++)
            if (l->cl[c].ops[k]->outputs[0] != l->cl[c].y) inside[l->cl[c].ops[k]->outputs[0]->index] = true;
    *n = 0;
    for (uint32_t k = 0; k < fb->n_tensors; k++)
        if (!inside[k]) v[(*n)++] = k;
    free(inside);
    *out = v;
    return TOSAC_OK;
}

tosac_status tosac_quantize(const tosac_graph *fp, const tosac_quant_opts *o, tosac_graph **out,
                            tosac_quant_iomap **iop, tosac_diag *d)
{
    return tosac_quantize_report(fp, o, out, iop, NULL, d);
}

tosac_status tosac_quantize_report(const tosac_graph *fp, const tosac_quant_opts *o, tosac_graph **out,
                                   tosac_quant_iomap **iop, tosac_quant_report **report, tosac_diag *d)
{
    const tosac_block *fb = quant_main_block(fp);
    if (!fb || !o || !out || !iop) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_quantize: NULL argument");
    if (fp->n_regions != 1 || fp->regions[0]->n_blocks != 1)
        return tosac_diag_add(d, TOSAC_ERR_UNSUPPORTED, "control flow (several blocks) cannot be quantized yet");
    quant_stats st;
    memset(&st, 0, sizeof st);
    lower l;
    memset(&l, 0, sizeof l);
    l.fb = fb;
    l.d = d;
    l.st = &st;
    l.o = o;
    l.act = o->a16w8 ? TOSAC_DTYPE_INT16 : TOSAC_DTYPE_INT8;
    /* int16: symmetric, as ExecuTorch's a16w8 */
    tosac_quant_io_range(o->a16w8 ? TOSAC_QUANT_IO_INT16 : TOSAC_QUANT_IO_INT8, &l.qmin, &l.qmax);
    tosac_quant_iomap *io = calloc(1, sizeof *io);
    tosac_status s = io ? TOSAC_OK : TOSAC_ERR_NOMEM;
    if (s == TOSAC_OK) {
        io->n_inputs = fb->n_inputs;
        io->n_outputs = fb->n_outputs;
        io->inputs = calloc(fb->n_inputs ? fb->n_inputs : 1, sizeof *io->inputs);
        io->outputs = calloc(fb->n_outputs ? fb->n_outputs : 1, sizeof *io->outputs);
        if (!io->inputs || !io->outputs) s = TOSAC_ERR_NOMEM;
        for (uint32_t k = 0; k < fb->n_inputs && s == TOSAC_OK; k++) s = fill_io(&io->inputs[k], fb->inputs[k]);
        for (uint32_t k = 0; k < fb->n_outputs && s == TOSAC_OK; k++) s = fill_io(&io->outputs[k], fb->outputs[k]);
        if (s != TOSAC_OK) s = oom(&l);
    }
    quant_fixed fx;
    memset(&fx, 0, sizeof fx);
    if (s == TOSAC_OK) s = quant_qdq_find(fb, &fx, d);
    l.fx = &fx;
    if (s == TOSAC_OK && o->a16w8 && fx.n_chains)
        s = tosac_diag_add(d, TOSAC_ERR_UNSUPPORTED,
                           "--a16w8: this model is already quantized (QuantizeLinear/DequantizeLinear pairs with its own "
                           "int8/uint8 scales); compile it without --a16w8");
    if (s == TOSAC_OK && o->a16w8 && o->emit_qdq)
        s = tosac_diag_add(d, TOSAC_ERR_UNSUPPORTED, "--emit-qdq writes int8 QuantizeLinear/DequantizeLinear (opset 13); "
                                                     "it is not available with --a16w8");
    if (s == TOSAC_OK && o->a16w8 && o->io != TOSAC_QUANT_IO_INT8)
        s = tosac_diag_add(d, TOSAC_ERR_UNSUPPORTED, "--a16w8 programs have int16 inputs and outputs (the sidecar maps "
                                                     "them to float); uint8 or in-program float I/O is not supported");
    uint32_t nt = fb->n_tensors, nn = fb->n_nodes;
    if (s == TOSAC_OK) {
        l.qp = calloc(nt ? nt : 1, sizeof *l.qp);
        l.has_qp = calloc(nt ? nt : 1, sizeof *l.has_qp);
        l.f = calloc(nt ? nt : 1, sizeof *l.f);
        l.uses = calloc(nt ? nt : 1, sizeof *l.uses);
        l.qn = calloc(nn ? nn : 1, sizeof *l.qn);
        l.cluster_of = malloc((nn ? nn : 1) * sizeof *l.cluster_of);
        l.g = tosac_graph_create();
        tosac_region *r = l.g ? tosac_graph_add_region(l.g, "main") : NULL;
        l.b = r ? tosac_region_add_block(r, "main") : NULL;
        if (!l.qp || !l.has_qp || !l.f || !l.uses || !l.qn || !l.cluster_of || !l.b) s = oom(&l);
    }
    if (s == TOSAC_OK) {
        for (uint32_t i = 0; i < nn; i++) {
            l.cluster_of[i] = -1;
            for (uint32_t k = 0; k < fb->nodes[i]->n_inputs; k++)
                if (!fb->nodes[i]->inputs[k]->is_shape) l.uses[fb->nodes[i]->inputs[k]->index]++;
        }
        for (uint32_t k = 0; k < fb->n_outputs; k++) l.uses[fb->outputs[k]->index]++;
        s = find_clusters(&l);
    }
    /* a QDQ model needs no calibration; with data, what its Q/DQ leave open is calibrated */
    /* the report runs the calibration's FP programs again (created and prepared once) */
    quant_fp_programs pf;
    memset(&pf, 0, sizeof pf);
    uint32_t *observe = NULL, n_observe = 0;
    bool *want = NULL; /* the FP values the report may compare, stored during calibration */
    if (s == TOSAC_OK && (quant_sample_count(o) || !fx.n_chains)) {
        s = observed_values(&l, &observe, &n_observe);
        if (s == TOSAC_OK && !(want = calloc(fb->n_tensors + 1, sizeof *want))) s = oom(&l);
        /* observed and produced by an operator: graph inputs are compared with the samples themselves */
        for (uint32_t k = 0; k < n_observe && s == TOSAC_OK; k++) {
            const tosac_value *v = fb->tensors[observe[k]];
            want[observe[k]] = v->producer && report_value(v);
        }
        if (s == TOSAC_OK)
            s = quant_calibrate(fb, fp, o, observe, n_observe, &st, report && quant_sample_count(o) ? &pf : NULL, want, d);
    }
    /* the calibration's program, while it lasts, lends its threads */
    weights_ahead ahead;
    memset(&ahead, 0, sizeof ahead);
    if (s == TOSAC_OK && pf.p) {
        weights_ahead_run(&ahead, &l, pf.p);
        l.ahead = &ahead;
    }
    if (s == TOSAC_OK) s = build(&l, io);
    l.ahead = NULL;
    if (ahead.l) weights_ahead_free(&ahead);
    if (s == TOSAC_OK && o->lowering) s = quant_lower_target(l.b, o->lowering, d);
    if (s == TOSAC_OK) {
        /* unused forms (an int8 copy nothing read) go, equal constants (zero points) merge */
        tosac_compile_opts co;
        memset(&co, 0, sizeof co);
        tosac_compile_report rep;
        memset(&rep, 0, sizeof rep);
        pass_ctx pc = {.g = l.g, .b = l.b, .d = d, .o = &co, .r = &rep};
        ir_dce(l.b);
        s = ir_compact(l.b);
        if (s == TOSAC_OK) s = pass_dedupe_constants(&pc);
        if (s == TOSAC_OK) {
            ir_dce(l.b);
            s = ir_compact(l.b);
        }
        if (s != TOSAC_OK && !tosac_diag_count(d)) tosac_diag_add(d, s, "compacting the integer graph failed");
    }
    uint32_t ext = o->a16w8 ? TOSAC_EXT_INT16 : 0;
    if (s == TOSAC_OK) s = quant_validate(l.g, TOSAC_PROFILE_INT, ext, d);
    if (s == TOSAC_OK && report && quant_sample_count(o)) {
        quant_map_entry *map = NULL;
        uint32_t n_map = 0;
        s = report_map(&l, &map, &n_map);
        if (s == TOSAC_OK) {
            s = quant_report(fp, &pf, l.g, o, io, map, n_map, report, d);
        }
        free(map);
    }
    if (s == TOSAC_OK && o->emit_qdq) s = emit_qdq(&l, io);
    /* last: the report runs the program with int8 I/O */
    if (s == TOSAC_OK) s = quant_boundary(l.b, io, o->io, d);
    if (s == TOSAC_OK && o->io != TOSAC_QUANT_IO_INT8)
        s = quant_validate(l.g, TOSAC_PROFILE_INT | (o->io == TOSAC_QUANT_IO_FLOAT32 ? TOSAC_PROFILE_FP : 0), ext, d);
    if (s == TOSAC_OK) s = tensor_map(&l, io);
    for (uint32_t c = 0; c < l.n_cl; c++) free(l.cl[c].ops);
    free(l.cl);
    free(l.lo);
    free(l.hi);
    free(l.qp);
    free(l.has_qp);
    free(l.f);
    free(l.uses);
    free(l.qn);
    free(l.cluster_of);
    quant_fixed_free(&fx);
    quant_stats_free(&st);
    quant_fp_programs_free(&pf);
    free(observe);
    free(want);
    if (s == TOSAC_OK) {
        *out = l.g;
        *iop = io;
    } else {
        tosac_graph_destroy(l.g);
        tosac_quant_iomap_free(io);
    }
    return s;
}
