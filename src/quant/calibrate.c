/*
 * Calibration: the FP program runs on tosac's own runtime (one executor for everything) and an
 * op callback observes each operator's results while their storage is live, keeping only the
 * running min/max per value; nothing else is kept alive, so memory is that of one inference.
 * Samples run in order and the random generator is seeded: the result is deterministic.
 * For the percentile and mse methods every observed value also lands in a fixed log-scale
 * histogram (tosac_quant_hist_bin): it needs no range known in advance, so one pass suffices.
 * A CLAMP's result (ReLU, ReLU6) and data movement that keeps the elements are not read again:
 * their statistics follow exactly from their input's while that is observed (quant_derive).
 */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/diag.h"
#include "quant/quant_internal.h"
#include "tosac/runtime.h"

/* Elements per range of the parallel statistics. The split never changes a result: min/max and
   integer counts do not depend on the order they are taken in (zeros are made +0 below). */
#define OBS_BLOCK 16384
/* Counts go to OBS_LANES interleaved tables, so that a run of equal classes is not one chain of
   dependent increments; at most 2^31 elements per fold keeps every uint32 count exact. */
#define OBS_LANES 8 /* the AVX2 loop puts element k in lane k mod 8 */
#define OBS_MAX_FOLD ((int64_t)1 << 31)

/* Value y's statistics from those of its input: y = clamp(x, lo, hi) elementwise (a CLAMP with
   nan_mode PROPAGATE; data movement keeping the elements: lo = -inf, hi = +inf). Exact: clamp is
   monotone, so the extremes of y are those of x clamped, and as the histogram bins are monotone
   in the value, the bin of clamp(v) is the bin of v clamped to [blo, bhi] = the bins of lo and
   hi. NaN stays NaN: only the classes of +-infinity, which also hold some NaNs, are ambiguous, so
   a sample where x has such elements that the clamp would move observes y itself. */
typedef struct quant_derive_to {
    uint32_t y;
    float lo, hi;
    uint32_t blo, bhi;
} quant_derive_to;

typedef struct quant_derive {
    uint32_t *first;     /* n + 1: the values derived from value k are to[first[k], first[k + 1]) */
    quant_derive_to *to;
} quant_derive;

typedef struct quant_obs_worker {
    float lo, hi;    /* over its non-NaN elements of the current value */
    uint32_t mag;    /* (raw, histograms) the smallest (|bits| - 1) as unsigned: below it only 0 */
    int64_t n;       /* its elements of the current value */
    uint32_t *raw;   /* QUANT_RAW_BINS * OBS_LANES counts, all zero between two values */
} quant_obs_worker;

void quant_stats_free(quant_stats *st)
{
    free(st->min);
    free(st->max);
    free(st->seen);
    free(st->hist);
    for (uint32_t k = 0; st->w && k < st->n_w; k++) free(st->w[k].raw);
    free(st->w);
    free(st->raw_bin);
    free(st->derived);
    memset(st, 0, sizeof *st);
}

/* The top 14 bits of the float (sign, exponent, 5 mantissa bits) are its class. */
static uint32_t raw_class(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u >> 18;
}

/* Counts v in lane j of its class; mag: the smallest (|bits| - 1), where a zero wraps to the
   largest. */
static inline void obs_count(uint32_t *raw, uint32_t *mag, float v, int64_t j)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    uint32_t m = (u & 0x7FFFFFFFu) - 1u;
    *mag = m < *mag ? m : *mag;
    raw[(u >> 18) * OBS_LANES + (uint32_t)(j & (OBS_LANES - 1))]++;
}

/* Adds x[0, n) to w: its extremes, and (w->raw) its class counts, element k in lane k mod 8.
   lo8/hi8: extremes of eight lanes found so far (a vector loop's), folded in after x. NaN carries
   no range: it fails both comparisons (and is counted in the class of infinity). */
static void obs_finish(quant_obs_worker *w, const float *x, int64_t n, const float *lo8, const float *hi8)
{
    float lo = w->lo, hi = w->hi;
    for (int64_t i = 0; i < n; i++) {
        float v = x[i];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
        if (w->raw) obs_count(w->raw, &w->mag, v, i);
    }
    for (int j = 0; j < 8; j++) {
        lo = lo8[j] < lo ? lo8[j] : lo;
        hi = hi8[j] > hi ? hi8[j] : hi;
    }
    w->lo = lo, w->hi = hi;
}

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) && !defined(TOSAC_NO_SIMD)
#include <immintrin.h>
#define OBS_X86 1
/* The extremes in registers, the eight classes of a vector computed at once. */
__attribute__((target("avx2"))) static void obs_run_avx2(quant_obs_worker *w, const float *x, int64_t n)
{
    __m256 lo8 = _mm256_set1_ps(INFINITY), hi8 = _mm256_set1_ps(-INFINITY);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), abs = _mm256_set1_epi32(0x7FFFFFFF);
    const __m256i one = _mm256_set1_epi32(1);
    __m256i mag8 = _mm256_set1_epi32(-1);
    uint32_t *raw = w->raw;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        lo8 = _mm256_min_ps(v, lo8); /* the second operand when either is NaN: NaN never enters */
        hi8 = _mm256_max_ps(v, hi8);
        if (raw) {
            __m256i b = _mm256_castps_si256(v);
            mag8 = _mm256_min_epu32(mag8, _mm256_sub_epi32(_mm256_and_si256(b, abs), one));
            __m256i u = _mm256_add_epi32(_mm256_slli_epi32(_mm256_srli_epi32(b, 18), 3), lane);
            /* the eight indices two at a time through general registers (not through memory:
               ~20% faster than a store and eight loads) */
            __m128i u0 = _mm256_castsi256_si128(u), u1 = _mm256_extracti128_si256(u, 1);
            uint64_t p0 = (uint64_t)_mm_cvtsi128_si64(u0), p1 = (uint64_t)_mm_extract_epi64(u0, 1);
            uint64_t p2 = (uint64_t)_mm_cvtsi128_si64(u1), p3 = (uint64_t)_mm_extract_epi64(u1, 1);
            raw[(uint32_t)p0]++, raw[p0 >> 32]++, raw[(uint32_t)p1]++, raw[p1 >> 32]++;
            raw[(uint32_t)p2]++, raw[p2 >> 32]++, raw[(uint32_t)p3]++, raw[p3 >> 32]++;
        }
    }
    float l8[8], h8[8];
    uint32_t m8[8];
    _mm256_storeu_ps(l8, lo8);
    _mm256_storeu_ps(h8, hi8);
    _mm256_storeu_si256((__m256i *)(void *)m8, mag8);
    for (int j = 0; j < 8; j++) w->mag = m8[j] < w->mag ? m8[j] : w->mag;
    obs_finish(w, x + i, n - i, l8, h8);
}
#endif

static void obs_run(quant_obs_worker *w, const float *x, int64_t n)
{
    w->n += n;
#ifdef OBS_X86
    if (__builtin_cpu_supports("avx2")) {
        obs_run_avx2(w, x, n);
        return;
    }
#endif
    float l8[8], h8[8];
    for (int j = 0; j < 8; j++) l8[j] = INFINITY, h8[j] = -INFINITY;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) /* eight independent lanes, branch-free in float: it vectorises */
        for (int j = 0; j < 8; j++) {
            float v = x[i + j];
            l8[j] = v < l8[j] ? v : l8[j];
            h8[j] = v > h8[j] ? v : h8[j];
            if (w->raw) obs_count(w->raw, &w->mag, v, j);
        }
    obs_finish(w, x + i, n - i, l8, h8);
}

typedef struct obs_job {
    quant_stats *st;
    const float *x;
    int64_t n;
} obs_job;

static void obs_task(void *ctx, uint32_t worker, size_t begin, size_t end)
{
    const obs_job *j = ctx;
    int64_t b = (int64_t)begin * OBS_BLOCK, e = (int64_t)end * OBS_BLOCK;
    obs_run(&j->st->w[worker], j->x + b, (e < j->n ? e : j->n) - b);
}

/* The raw class of +infinity (sign bit clear; -infinity: | RAW_SIGN) and the sign bit of a class. */
#define RAW_INF (0x7F800000u >> 18)
#define RAW_SIGN (QUANT_RAW_BINS / 2)

/* Adds the raw counts of classes [r0, r1] to h (value idx) and to the values derived from it
   (to[0, n_to)), and clears them; returns how many there were. */
static uint64_t obs_fold(const quant_stats *st, uint32_t idx, const quant_derive_to *to, uint32_t n_to, uint32_t *raw,
                         uint32_t r0, uint32_t r1)
{
    uint64_t total = 0, *h = st->hist + (size_t)idx * TOSAC_QUANT_HIST_BINS;
    for (uint32_t r = r0; r <= r1; r++) {
        uint32_t *c = raw + (size_t)r * OBS_LANES;
        uint64_t k = 0;
        for (int j = 0; j < OBS_LANES; j++) k += c[j], c[j] = 0;
        if (!k) continue;
        total += k;
        uint32_t b = st->raw_bin[r];
        if (b >= TOSAC_QUANT_HIST_BINS) continue;
        h[b] += k;
        bool nan = (r & RAW_INF) == RAW_INF && (r & 31u); /* exponent 255, mantissa bits set */
        for (uint32_t d = 0; d < n_to; d++) {
            uint32_t bb = nan ? b : b < to[d].blo ? to[d].blo : b > to[d].bhi ? to[d].bhi : b;
            st->hist[(size_t)to[d].y * TOSAC_QUANT_HIST_BINS + bb] += k;
        }
    }
    return total;
}

/* Adds the extremes lo <= hi (not NaN) of value idx; a zero extreme is +0 whichever thread saw it. */
static void merge_range(quant_stats *st, uint32_t idx, float lo, float hi)
{
    lo += 0.0f, hi += 0.0f;
    bool seen = st->seen[idx];
    if (!seen || lo < st->min[idx]) st->min[idx] = lo;
    if (!seen || hi > st->max[idx]) st->max[idx] = hi;
    st->seen[idx] = true;
}

/* Whether a worker's elements include +-infinity-class ones (infinities, some NaNs) that the
   clamp of `to` would move. */
static bool obs_ambiguous(const quant_obs_worker *w, const quant_derive_to *to)
{
    uint64_t pos = 0, neg = 0;
    for (int j = 0; j < OBS_LANES; j++) {
        pos += w->raw[RAW_INF * OBS_LANES + j];
        neg += w->raw[(RAW_SIGN | RAW_INF) * OBS_LANES + j];
    }
    return (pos && to->hi < INFINITY) || (neg && to->lo > -INFINITY);
}

/* Records x[0, n), value idx, split over the program's threads, and the values derived from it
   (st->derived[y] set for each: its own observation is then skipped this sample). */
static void observe(quant_stats *st, const tosac_program *p, uint32_t idx, const float *x, int64_t n)
{
    const quant_derive_to *to = st->dv ? st->dv->to + st->dv->first[idx] : NULL;
    /* derived in one fold only (beyond it, y is observed itself) */
    uint32_t n_to = st->dv && n <= OBS_MAX_FOLD ? st->dv->first[idx + 1] - st->dv->first[idx] : 0;
    for (int64_t k0 = 0; k0 < n; k0 += OBS_MAX_FOLD) {
        int64_t k1 = n - k0 > OBS_MAX_FOLD ? k0 + OBS_MAX_FOLD : n;
        for (uint32_t w = 0; w < st->n_w; w++)
            st->w[w].lo = INFINITY, st->w[w].hi = -INFINITY, st->w[w].mag = UINT32_MAX, st->w[w].n = 0;
        obs_job j = {st, x + k0, k1 - k0};
        size_t blocks = (size_t)((j.n + OBS_BLOCK - 1) / OBS_BLOCK);
        if (blocks < 4 || st->n_w < 2) obs_task(&j, 0, 0, blocks);
        else tosac_program_parallel_for(p, obs_task, &j, blocks);
        float lo = INFINITY, hi = -INFINITY;
        for (uint32_t w = 0; w < st->n_w; w++) {
            lo = st->w[w].lo < lo ? st->w[w].lo : lo;
            hi = st->w[w].hi > hi ? st->w[w].hi : hi;
        }
        for (uint32_t w = 0; st->hist && w < st->n_w && n_to; w++)
            for (uint32_t dk = 0; dk < n_to && n_to; dk++)
                if (st->w[w].n && obs_ambiguous(&st->w[w], &to[dk])) n_to = 0;
        if (lo <= hi) { /* a value that is not NaN */
            merge_range(st, idx, lo, hi);
            for (uint32_t dk = 0; dk < n_to; dk++)
                merge_range(st, to[dk].y, fminf(fmaxf(lo, to[dk].lo), to[dk].hi), fminf(fmaxf(hi, to[dk].lo), to[dk].hi));
        }
        for (uint32_t dk = 0; dk < n_to; dk++) st->derived[to[dk].y] = true;
        if (!st->hist) continue;
        /* a worker's counts lie in the zero classes and, per sign, between the classes of its
           smallest nonzero magnitude and of its extreme; NaNs lie outside, and then every class
           is folded */
        const uint32_t neg = RAW_SIGN;
        for (uint32_t w = 0; w < st->n_w; w++) {
            quant_obs_worker *ow = &st->w[w];
            if (!ow->n) continue;
            uint64_t got = obs_fold(st, idx, to, n_to, ow->raw, 0, 0) + obs_fold(st, idx, to, n_to, ow->raw, neg, neg);
            if (ow->lo <= ow->hi && ow->mag != UINT32_MAX) { /* a nonzero value */
                uint32_t small = (ow->mag + 1) >> 18;
                small = small ? small : 1; /* class 0 is folded already */
                if (ow->hi > 0) got += obs_fold(st, idx, to, n_to, ow->raw, small, raw_class(ow->hi));
                if (ow->lo < 0) got += obs_fold(st, idx, to, n_to, ow->raw, neg + small, raw_class(ow->lo));
            }
            if (got != (uint64_t)ow->n) obs_fold(st, idx, to, n_to, ow->raw, 0, QUANT_RAW_BINS - 1);
        }
    }
}

typedef struct cal_ctx {
    const tosac_program *p;
    const tosac_block *b;
    quant_stats *st;
    const bool *listed; /* by value index: in the program's observe list */
    quant_fp_values *keep; /* the report's values, or NULL */
    uint32_t sample;    /* the one running */
} cal_ctx;

static void on_op(void *user, uint32_t op_index, uint32_t op, uint64_t ns)
{
    (void)ns;
    cal_ctx *c = user;
    tosac_op_desc od;
    if (op == TOSAC_OP_CONST || op == TOSAC_OP_CONST_SHAPE) return;
    if (tosac_program_op_info(c->p, op_index, &od) != TOSAC_OK || od.depth != 0 || od.index >= c->b->n_nodes) return;
    const tosac_node *n = c->b->nodes[od.index];
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        uint32_t v = n->outputs[k]->index;
        bool keep = c->keep && c->sample < c->keep->n_samples && c->keep->off[v] != QUANT_NOT_KEPT;
        /* recorded with its input, or not needed (and maybe never stored: a chain's intermediate) */
        if ((c->st->derived[v] && !keep) || !c->listed[v]) continue;
        tosac_tensor_info info;
        const void *data = NULL;
        if (tosac_program_op_output(c->p, op_index, k, &info, &data) != TOSAC_OK || !data) continue;
        if (info.dtype != TOSAC_DTYPE_FP32 || info.f64 || n->outputs[k]->is_shape) continue;
        if (keep) quant_fp_values_put(c->keep, c->keep->buf[c->sample], c->keep->had[c->sample], v, &info, data);
        if (!c->st->derived[v]) observe(c->st, c->p, v, data, info.nelem);
    }
}

/* splitmix64 + Box-Muller: a portable, seeded standard normal stream */
static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double next_normal(uint64_t *s)
{
    double u1 = ((double)(next_u64(s) >> 11) + 1.0) / 9007199254740993.0; /* (0, 1] */
    double u2 = (double)(next_u64(s) >> 11) / 9007199254740992.0;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

uint32_t quant_sample_count(const tosac_quant_opts *o) { return o->data ? o->n_samples : o->n_random; }

void quant_samples_init(quant_samples *qs, const tosac_quant_opts *o)
{
    memset(qs, 0, sizeof *qs);
    qs->o = o;
    qs->seed = o->seed;
}

void quant_samples_free(quant_samples *qs)
{
    free(qs->rnd);
    memset(qs, 0, sizeof *qs);
}

const float *quant_sample(quant_samples *qs, uint32_t sample, uint32_t input, uint32_t n_in, int64_t nelem,
                          tosac_diag *d)
{
    if (qs->o->data) return qs->o->data[(size_t)sample * n_in + input];
    if (nelem < 0 || (uint64_t)nelem > SIZE_MAX / sizeof(float)) {
        tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "calibration input too large");
        return NULL;
    }
    if (qs->rnd_n < (size_t)nelem) {
        free(qs->rnd);
        qs->rnd_n = (size_t)nelem;
        qs->rnd = malloc(qs->rnd_n ? qs->rnd_n * sizeof *qs->rnd : 1);
        if (!qs->rnd) {
            qs->rnd_n = 0;
            tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
            return NULL;
        }
    }
    for (int64_t k = 0; k < nelem; k++) qs->rnd[k] = (float)next_normal(&qs->seed);
    return qs->rnd;
}

void quant_put_sample(void *dst, tosac_dtype t, const float *x, int64_t n)
{
    if (t != TOSAC_DTYPE_INT32) {
        memcpy(dst, x, (size_t)n * sizeof(float));
        return;
    }
    /* integer inputs (token ids): the nearest integer (random samples: small ones, valid indices
       into any table of at least 4 rows, negative ones counted from the end as ONNX does) */
    int32_t *o = dst;
    for (int64_t k = 0; k < n; k++) o[k] = (int32_t)fmax(-2147483648.0, fmin(2147483647.0, nearbyint(x[k])));
}

/* Allocates st for n values and n_w statistics workers (histograms with hist), zeroed; raw_bin
   is st's own when own_bins, else borrowed (set by the caller). */
static tosac_status stats_init(quant_stats *st, uint32_t n, uint32_t n_w, bool hist, bool own_bins)
{
    st->n = n;
    st->n_w = n_w;
    size_t nn = n ? n : 1;
    st->min = calloc(nn, sizeof *st->min);
    st->max = calloc(nn, sizeof *st->max);
    st->seen = calloc(nn, sizeof *st->seen);
    st->w = calloc(n_w, sizeof *st->w);
    st->derived = calloc(nn, sizeof *st->derived);
    if (!st->min || !st->max || !st->seen || !st->w || !st->derived) return TOSAC_ERR_NOMEM;
    if (!hist) return TOSAC_OK;
    /* about 25 KB per value: a few MB for the zoo's largest CNNs; 512 KB per worker */
    if (nn > SIZE_MAX / (TOSAC_QUANT_HIST_BINS * sizeof(uint64_t)) ||
        !(st->hist = calloc(nn * TOSAC_QUANT_HIST_BINS, sizeof *st->hist)) ||
        (own_bins && !(st->raw_bin = malloc(QUANT_RAW_BINS * sizeof *st->raw_bin))))
        return TOSAC_ERR_NOMEM;
    for (uint32_t w = 0; w < n_w; w++)
        if (!(st->w[w].raw = calloc((size_t)QUANT_RAW_BINS * OBS_LANES, sizeof *st->w[w].raw))) return TOSAC_ERR_NOMEM;
    /* the bin of each class: NaN classes (exponent 255, mantissa != 0) share a class with infinity
       (mantissa bits 0) and are counted as infinity (calibration values are finite in practice) */
    for (uint32_t r = 0; own_bins && r < QUANT_RAW_BINS; r++) {
        uint32_t u = r << 18;
        float f;
        memcpy(&f, &u, sizeof f);
        st->raw_bin[r] = (u & 0x7F800000u) == 0x7F800000u ? tosac_quant_hist_bin(u >> 31 ? -INFINITY : INFINITY)
                                                         : tosac_quant_hist_bin(f);
    }
    return TOSAC_OK;
}

/* Adds the statistics of `from` to `to` (every extreme is a canonical zero or nonzero, and the
   counts are integers: the order of the workers does not matter). */
static void stats_merge(quant_stats *to, const quant_stats *from)
{
    for (uint32_t k = 0; k < to->n; k++) {
        if (!from->seen[k]) continue;
        if (!to->seen[k] || from->min[k] < to->min[k]) to->min[k] = from->min[k];
        if (!to->seen[k] || from->max[k] > to->max[k]) to->max[k] = from->max[k];
        to->seen[k] = true;
        if (!to->hist) continue;
        uint64_t *h = to->hist + (size_t)k * TOSAC_QUANT_HIST_BINS;
        const uint64_t *g = from->hist + (size_t)k * TOSAC_QUANT_HIST_BINS;
        for (uint32_t j = 0; j < TOSAC_QUANT_HIST_BINS; j++) h[j] += g[j];
    }
}

/* The values whose statistics follow from their input's (quant_derive_to): every CLAMP with
   nan_mode PROPAGATE and data movement that keeps the elements, FP32 to FP32. */
static bool derive_of(const tosac_node *n, quant_derive_to *t)
{
    if (n->n_outputs != 1 || !n->n_inputs || n->outputs[0]->dtype != TOSAC_DTYPE_FP32 || n->outputs[0]->is_shape ||
        ir_is_const(n->inputs[0]) || n->inputs[0]->dtype != TOSAC_DTYPE_FP32 || n->inputs[0]->is_shape)
        return false;
    t->y = n->outputs[0]->index;
    t->lo = -INFINITY, t->hi = INFINITY;
    switch (n->op) {
    case TOSAC_OP_RESHAPE:
    case TOSAC_OP_TRANSPOSE:
    case TOSAC_OP_REVERSE:
    case TOSAC_OP_IDENTITY: break;
    case TOSAC_OP_CLAMP: {
        const tosac_attr_val *nm = &n->attr[TOSAC_ATTR_CLAMP_nan_mode];
        if (nm->present && nm->i != TOSAC_NAN_PROPAGATE) return false;
        t->lo = quant_attr_f32(n, TOSAC_ATTR_CLAMP_min_val, -INFINITY);
        t->hi = quant_attr_f32(n, TOSAC_ATTR_CLAMP_max_val, INFINITY);
        if (!(t->lo <= t->hi)) return false;
        break;
    }
    default: return false;
    }
    t->blo = tosac_quant_hist_bin(t->lo);
    t->bhi = tosac_quant_hist_bin(t->hi);
    return true;
}

static tosac_status derive_init(quant_derive *dv, const tosac_block *b)
{
    uint32_t n = b->n_tensors;
    dv->first = calloc((size_t)n + 1, sizeof *dv->first);
    dv->to = malloc((b->n_nodes ? b->n_nodes : 1) * sizeof *dv->to);
    if (!dv->first || !dv->to) return TOSAC_ERR_NOMEM;
    quant_derive_to t;
    for (uint32_t i = 0; i < b->n_nodes; i++)
        if (derive_of(b->nodes[i], &t)) dv->first[b->nodes[i]->inputs[0]->index + 1]++;
    for (uint32_t k = 0; k < n; k++) dv->first[k + 1] += dv->first[k];
    uint32_t *fill = calloc(n ? n : 1, sizeof *fill);
    if (!fill) return TOSAC_ERR_NOMEM;
    for (uint32_t i = 0; i < b->n_nodes; i++) {
        if (!derive_of(b->nodes[i], &t)) continue;
        uint32_t x = b->nodes[i]->inputs[0]->index;
        dv->to[dv->first[x] + fill[x]++] = t;
    }
    free(fill);
    return TOSAC_OK;
}

/* Calibration sample `sample` through program c->p: its inputs written and observed, then the run. */
static tosac_status run_sample(cal_ctx *c, uint32_t sample, const float *const *x, tosac_diag *d)
{
    tosac_program *p = (tosac_program *)(uintptr_t)c->p;
    c->sample = sample;
    memset(c->st->derived, 0, c->st->n * sizeof *c->st->derived);
    for (uint32_t i = 0; i < tosac_program_input_count(p); i++) {
        tosac_tensor_info info;
        tosac_program_input_info(p, i, &info);
        quant_put_sample(tosac_program_input_ptr(p, i), info.dtype, x[i], info.nelem);
        /* graph inputs are observed here: no operator produces them */
        for (uint32_t k = 0; k < c->b->n_inputs; k++)
            if (!strcmp(c->b->inputs[k]->name, info.name)) observe(c->st, c->p, c->b->inputs[k]->index, x[i], info.nelem);
    }
    tosac_status s = tosac_program_invoke(p, d);
    if (s == TOSAC_OK && c->keep && sample < c->keep->n_samples) quant_fp_values_put_outputs(c->keep, c->keep->buf[sample], p);
    return s;
}

/* Samples side by side: worker w runs whole samples on its own single-threaded program (sharing
   the first program's prepared constants) into its own statistics. */
typedef struct cal_par {
    cal_ctx *c;                 /* per worker */
    tosac_diag **d;             /* per worker */
    tosac_status *s;            /* per worker */
    const float *const *x;      /* sample k's inputs: x + k * n_in */
    const uint32_t *order;      /* task k runs sample order[k] */
    uint32_t n_in, n_samples;
    const tosac_quant_opts *o;
    _Atomic uint32_t done;      /* samples finished */
    _Atomic bool failed;
    uint32_t reported;          /* progress: the calling thread (worker 0) reports */
} cal_par;

static void sample_task(void *ctx, uint32_t worker, size_t begin, size_t end)
{
    cal_par *cp = ctx;
    for (size_t k = begin; k < end && !cp->failed; k++) {
        uint32_t sample = cp->order[k];
        tosac_status s = run_sample(&cp->c[worker], sample, cp->x + (size_t)sample * cp->n_in, cp->d[worker]);
        if (s != TOSAC_OK) {
            cp->s[worker] = s;
            cp->failed = true;
            return;
        }
        uint32_t done = ++cp->done;
        if (worker == 0 && cp->o->progress) {
            cp->o->progress(cp->o->progress_user, done, cp->n_samples);
            cp->reported = done;
        }
    }
}

/* The samples on p's threads, one sample per thread at a time: TOSAC_ERR_UNSUPPORTED when that
   cannot be set up (one thread, fewer samples than threads, no memory for the programs), and
   then nothing was observed. */
static tosac_status calibrate_parallel(tosac_program *p, const tosac_graph *g, const tosac_program_opts *po,
                                       const tosac_block *b, const tosac_quant_opts *o, quant_stats *st,
                                       const float *const *x, uint32_t n_samples, const bool *listed,
                                       quant_fp_programs *keep, tosac_diag *d)
{
    /* every worker of p's pool may take a sample: each needs its program */
    uint32_t T = tosac_program_threads(p);
    if (T < 2 || n_samples < T || T > QUANT_MAX_WORKERS) return TOSAC_ERR_UNSUPPORTED;
    tosac_program *q[QUANT_MAX_WORKERS] = {0};
    quant_stats ws[QUANT_MAX_WORKERS];
    cal_ctx cc[QUANT_MAX_WORKERS];
    tosac_diag *wd[QUANT_MAX_WORKERS] = {0};
    tosac_status wst[QUANT_MAX_WORKERS];
    memset(ws, 0, sizeof ws);
    tosac_program_opts qo = *po;
    qo.threads = 1;
    qo.caller_prepared = tosac_program_prepared_size(p) > 0;
    tosac_status s = TOSAC_OK;
    for (uint32_t w = 0; w < T && s == TOSAC_OK; w++) {
        /* a failure here only means the samples run one after another */
        if (!(wd[w] = tosac_diag_create()) || tosac_program_create(g, &qo, &q[w], wd[w]) != TOSAC_OK ||
            (qo.caller_prepared && tosac_program_share_prepared(q[w], tosac_program_prepared(p),
                                                                tosac_program_prepared_size(p), wd[w]) != TOSAC_OK) ||
            stats_init(&ws[w], st->n, 1, st->hist != NULL, false) != TOSAC_OK)
            s = TOSAC_ERR_UNSUPPORTED;
        ws[w].raw_bin = st->raw_bin;
        ws[w].dv = st->dv;
        cc[w] = (cal_ctx){q[w], b, &ws[w], listed, keep ? &keep->vals : NULL, 0};
        wst[w] = TOSAC_OK;
        if (q[w]) tosac_program_set_op_callback(q[w], on_op, &cc[w]);
    }
    /* the pool hands worker w the tasks [n * w / T, n * (w + 1) / T) first: the samples whose
       values the report keeps (each also copied) go one to each worker's first task */
    uint32_t *order = s == TOSAC_OK ? malloc(n_samples * sizeof *order) : NULL;
    if (!order) s = TOSAC_ERR_UNSUPPORTED;
    uint32_t kept = keep ? keep->vals.n_samples : 0, spread = kept < T ? kept : T, next = spread;
    for (uint32_t k = 0; order && k < n_samples; k++) order[k] = UINT32_MAX;
    for (uint32_t w = 0; order && w < spread; w++) order[(size_t)n_samples * w / T] = w;
    for (uint32_t k = 0; order && k < n_samples; k++)
        if (order[k] == UINT32_MAX) order[k] = next++;
    if (s == TOSAC_OK) {
        cal_par cp = {cc, wd, wst, x, order, tosac_program_input_count(p), n_samples, o, 0, false, 0};
        tosac_program_parallel_for(p, sample_task, &cp, n_samples);
        for (uint32_t w = 0; w < T; w++) {
            if (s == TOSAC_OK && wst[w] != TOSAC_OK) s = wst[w];
            for (size_t k = 0; wst[w] != TOSAC_OK && k < tosac_diag_count(wd[w]); k++) {
                tosac_status code = TOSAC_OK;
                const char *msg = tosac_diag_message(wd[w], k, &code);
                tosac_diag_add(d, code, "%s", msg);
            }
            stats_merge(st, &ws[w]);
        }
        if (s == TOSAC_OK && o->progress && cp.reported < n_samples) o->progress(o->progress_user, n_samples, n_samples);
    }
    free(order);
    for (uint32_t w = 0; w < T; w++) {
        ws[w].raw_bin = NULL; /* st's */
        quant_stats_free(&ws[w]);
        if (s == TOSAC_OK && keep) {
            tosac_program_set_op_callback(q[w], NULL, NULL);
            keep->lane[keep->n_lanes++] = q[w];
        } else {
            tosac_program_destroy(q[w]);
        }
        tosac_diag_destroy(wd[w]);
    }
    return s;
}

void quant_fp_programs_free(quant_fp_programs *f)
{
    for (uint32_t w = 0; w < f->n_lanes; w++) tosac_program_destroy(f->lane[w]);
    tosac_program_destroy(f->p); /* after the lanes: they read its prepared constants */
    quant_fp_values_free(&f->vals);
    memset(f, 0, sizeof *f);
}

uint32_t quant_report_sample_count(const tosac_quant_opts *o)
{
    uint32_t n = quant_sample_count(o);
    return o->report_samples && n > o->report_samples ? o->report_samples : n;
}

void quant_fp_values_free(quant_fp_values *fv)
{
    for (uint32_t k = 0; fv->buf && k < fv->n_samples; k++) {
        free(fv->buf[k]);
        free(fv->had[k]);
    }
    free(fv->buf);
    free(fv->had);
    free(fv->off);
    free(fv->out_off);
    free(fv->nelem);
    free(fv->from);
    free(fv->lo);
    free(fv->hi);
    memset(fv, 0, sizeof *fv);
}

tosac_status quant_fp_values_init(quant_fp_values *fv, const tosac_block *b, const tosac_program *p, const bool *want,
                                  uint32_t n_samples, size_t bound)
{
    memset(fv, 0, sizeof *fv);
    fv->n_values = b->n_tensors;
    fv->n_out = tosac_program_output_count(p);
    fv->off = malloc((fv->n_values ? fv->n_values : 1) * sizeof *fv->off);
    fv->nelem = calloc(fv->n_values ? fv->n_values : 1, sizeof *fv->nelem);
    fv->out_off = malloc((fv->n_out ? fv->n_out : 1) * sizeof *fv->out_off);
    size_t nv = fv->n_values ? fv->n_values : 1;
    fv->from = malloc(nv * sizeof *fv->from);
    fv->lo = malloc(nv * sizeof *fv->lo);
    fv->hi = malloc(nv * sizeof *fv->hi);
    if (!fv->off || !fv->nelem || !fv->out_off || !fv->from || !fv->lo || !fv->hi) goto oom;
    for (uint32_t v = 0; v < fv->n_values; v++) {
        const tosac_value *t = b->tensors[v];
        fv->from[v] = v;
        fv->lo[v] = -INFINITY, fv->hi[v] = INFINITY;
        fv->nelem[v] = tosac_value_nelem(t);
        bool kept = want[v] && t->dtype == TOSAC_DTYPE_FP32 && !t->is_shape && fv->nelem[v] >= 0;
        fv->off[v] = kept ? 0 : QUANT_NOT_KEPT;
    }
    /* in graph order: a CLAMP's input is placed (stored itself or not) before the CLAMP */
    quant_derive_to t;
    for (uint32_t i = 0; i < b->n_nodes; i++) {
        const tosac_node *n = b->nodes[i];
        if (n->op != TOSAC_OP_CLAMP || !derive_of(n, &t)) continue;
        uint32_t x = n->inputs[0]->index;
        if (fv->off[t.y] != QUANT_NOT_KEPT && fv->off[x] != QUANT_NOT_KEPT && fv->from[x] == x &&
            fv->nelem[x] == fv->nelem[t.y])
            fv->from[t.y] = x, fv->lo[t.y] = t.lo, fv->hi[t.y] = t.hi;
    }
    size_t per = 0;
    bool fits = true;
    for (uint32_t v = 0; v < fv->n_values; v++) {
        if (fv->off[v] == QUANT_NOT_KEPT || fv->from[v] != v) continue;
        fv->off[v] = per;
        fits = fits && tosac_add_size(per, (size_t)fv->nelem[v], &per);
    }
    for (uint32_t v = 0; v < fv->n_values; v++)
        if (fv->off[v] != QUANT_NOT_KEPT) fv->off[v] = fv->off[fv->from[v]];
    for (uint32_t j = 0; j < fv->n_out; j++) {
        tosac_tensor_info info;
        fv->out_off[j] = QUANT_NOT_KEPT;
        if (tosac_program_output_info(p, j, &info) != TOSAC_OK || info.dtype != TOSAC_DTYPE_FP32 || info.f64) continue;
        fv->out_off[j] = per;
        fits = fits && tosac_add_size(per, (size_t)info.nelem, &per);
    }
    if (!fits || per > SIZE_MAX / sizeof(float)) {
        quant_fp_values_free(fv); /* the report then runs the FP program on every sample */
        return TOSAC_ERR_NOMEM;
    }
    fv->per = per;
    /* no more samples than fit in the bound */
    size_t cap = per ? bound / sizeof(float) / per : n_samples;
    fv->n_samples = n_samples < cap ? n_samples : (uint32_t)cap;
    if (!fv->n_samples) return TOSAC_OK;
    fv->buf = calloc(fv->n_samples, sizeof *fv->buf);
    fv->had = calloc(fv->n_samples, sizeof *fv->had);
    if (!fv->buf || !fv->had) goto oom;
    for (uint32_t k = 0; k < fv->n_samples; k++)
        if (!(fv->buf[k] = malloc(per * sizeof(float) + 1)) || !(fv->had[k] = calloc(fv->n_values + 1, sizeof(bool))))
            goto oom;
    return TOSAC_OK;
oom:
    quant_fp_values_free(fv);
    return TOSAC_ERR_NOMEM;
}

void quant_fp_values_put(const quant_fp_values *fv, float *buf, bool *had, uint32_t v, const tosac_tensor_info *info,
                         const void *data)
{
    if (v >= fv->n_values || fv->off[v] == QUANT_NOT_KEPT || info->nelem != fv->nelem[v]) return;
    if (fv->from[v] != v) {
        had[v] = had[fv->from[v]]; /* its input's elements, clamped when read */
        return;
    }
    memcpy(buf + fv->off[v], data, (size_t)info->nelem * sizeof(float));
    had[v] = true;
}

void quant_fp_values_put_outputs(const quant_fp_values *fv, float *buf, const tosac_program *p)
{
    for (uint32_t j = 0; j < fv->n_out; j++) {
        tosac_tensor_info info;
        const void *y = tosac_program_output_ptr(p, j);
        if (fv->out_off[j] == QUANT_NOT_KEPT || tosac_program_output_info(p, j, &info) != TOSAC_OK) continue;
        if (y) memcpy(buf + fv->out_off[j], y, (size_t)info.nelem * sizeof(float));
        else memset(buf + fv->out_off[j], 0, (size_t)info.nelem * sizeof(float));
    }
}

tosac_status quant_calibrate(const tosac_block *b, const tosac_graph *g, const tosac_quant_opts *o, const uint32_t *observe,
                             uint32_t n_observe, quant_stats *st, quant_fp_programs *keep, const bool *want,
                             tosac_diag *d)
{
    uint32_t n_samples = quant_sample_count(o);
    if (!n_samples)
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG,
                              "quantization needs calibration data (or explicitly random samples)");
    tosac_program_opts po = tosac_program_opts_default();
    po.validate.profiles = TOSAC_PROFILE_FP | TOSAC_PROFILE_INT;
    po.borrow_constants = true; /* the FP graph outlives the program: no copy of the weights */
    po.threads = o->threads;
    po.conv_direct = true; /* the statistics (and so the q-params) of the reference order, not Winograd's */
    po.observe = observe;
    po.n_observe = n_observe;
    tosac_program *p = NULL;
    tosac_status s = tosac_program_create(g, &po, &p, d);
    if (s != TOSAC_OK) return s;
    uint32_t n_in = tosac_program_input_count(p);
    const float **x = calloc((size_t)n_samples * n_in + 1, sizeof *x);
    bool *listed = calloc(b->n_tensors + 1, sizeof *listed);
    quant_derive dv = {0};
    for (uint32_t k = 0; listed && k < n_observe; k++) listed[observe[k]] = true;
    if (keep) memset(keep, 0, sizeof *keep);
    if (!x || !listed ||
        stats_init(st, b->n_tensors, tosac_program_threads(p), o->method != TOSAC_QUANT_CALIB_MINMAX, true) != TOSAC_OK ||
        derive_init(&dv, b) != TOSAC_OK ||
        (keep && quant_fp_values_init(&keep->vals, b, p, want, quant_report_sample_count(o),
                                      o->report_keep_bytes ? o->report_keep_bytes : QUANT_KEEP_BYTES) != TOSAC_OK)) {
        free(x);
        free(listed);
        free(dv.first);
        free(dv.to);
        tosac_program_destroy(p);
        return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory (calibration statistics)");
    }
    /* every sample's inputs up front: the caller's arrays, or the seeded random stream drawn in
       order (sample by sample, input by input) whichever thread runs the sample */
    st->dv = &dv;
    quant_samples qs;
    quant_samples_init(&qs, o);
    float *rnd = NULL;
    size_t per = 0;
    for (uint32_t i = 0; i < n_in && s == TOSAC_OK; i++) {
        tosac_tensor_info info;
        tosac_program_input_info(p, i, &info);
        if (info.dtype != TOSAC_DTYPE_FP32 && info.dtype != TOSAC_DTYPE_INT32)
            s = tosac_diag_add(d, TOSAC_ERR_UNSUPPORTED,
                               "input '%s' is %s: only FP32 inputs (quantized) and INT32 ones (kept) can be "
                               "calibrated", info.name, tosac_dtype_name(info.dtype));
        else if (!o->data && !tosac_add_size(per, (size_t)info.nelem, &per))
            s = tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "calibration input too large");
    }
    if (s == TOSAC_OK && !o->data && (per > SIZE_MAX / sizeof(float) / n_samples ||
                                      !(rnd = malloc(per * n_samples * sizeof *rnd + 1))))
        s = tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory (calibration samples)");
    size_t off = 0;
    for (uint32_t k = 0; k < n_samples && s == TOSAC_OK; k++)
        for (uint32_t i = 0; i < n_in && s == TOSAC_OK; i++) {
            tosac_tensor_info info;
            tosac_program_input_info(p, i, &info);
            const float *xi = quant_sample(&qs, k, i, n_in, info.nelem, d);
            if (!xi) s = TOSAC_ERR_NOMEM;
            else if (rnd) {
                memcpy(rnd + off, xi, (size_t)info.nelem * sizeof *rnd);
                xi = rnd + off;
                off += (size_t)info.nelem;
            }
            x[(size_t)k * n_in + i] = xi;
        }
    quant_samples_free(&qs);
    tosac_status ps = s == TOSAC_OK ? calibrate_parallel(p, g, &po, b, o, st, x, n_samples, listed, keep, d) : s;
    if (ps != TOSAC_ERR_UNSUPPORTED) s = ps;
    else { /* one sample after another, on p (its threads split the operators and the statistics) */
        cal_ctx c = {p, b, st, listed, keep ? &keep->vals : NULL, 0};
        tosac_program_set_op_callback(p, on_op, &c);
        for (uint32_t k = 0; k < n_samples && s == TOSAC_OK; k++) {
            s = run_sample(&c, k, x + (size_t)k * n_in, d);
            if (s == TOSAC_OK && o->progress) o->progress(o->progress_user, k + 1, n_samples);
        }
        tosac_program_set_op_callback(p, NULL, NULL);
    }
    st->dv = NULL;
    free(dv.first);
    free(dv.to);
    free(rnd);
    free(x);
    free(listed);
    if (keep) keep->observe = observe, keep->n_observe = n_observe;
    if (keep && s == TOSAC_OK) {
        keep->p = p;
    } else if (keep) {
        keep->p = p;
        quant_fp_programs_free(keep);
    } else {
        tosac_program_destroy(p);
    }
    return s;
}
