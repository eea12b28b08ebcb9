/*
 * Calibration: the FP program runs on tosac's own runtime (one executor for everything) and an
 * op callback observes each operator's results while their storage is live, keeping only the
 * running min/max per value; nothing else is kept alive, so memory is that of one inference.
 * Samples run in order and the random generator is seeded: the result is deterministic.
 * For the percentile and mse methods every observed value also lands in a fixed log-scale
 * histogram (tosac_quant_hist_bin): it needs no range known in advance, so one pass suffices.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "quant/quant_internal.h"
#include "tosac/runtime.h"

void quant_stats_free(quant_stats *st)
{
    free(st->min);
    free(st->max);
    free(st->seen);
    free(st->hist);
    free(st->scratch);
    memset(st, 0, sizeof *st);
}

static void observe(quant_stats *st, uint32_t idx, const float *x, int64_t n)
{
    /* NaN carries no range: it fails both comparisons. Branch-free in float, so it vectorises
       (float to double is exact: the same range as comparing in double) */
    float l8[8], h8[8], lo = INFINITY, hi = -INFINITY;
    for (int j = 0; j < 8; j++) l8[j] = INFINITY, h8[j] = -INFINITY;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) /* eight independent lanes */
        for (int j = 0; j < 8; j++) {
            float v = x[i + j];
            l8[j] = v < l8[j] ? v : l8[j];
            h8[j] = v > h8[j] ? v : h8[j];
        }
    for (; i < n; i++) {
        float v = x[i];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    for (int j = 0; j < 8; j++) {
        lo = l8[j] < lo ? l8[j] : lo;
        hi = h8[j] > hi ? h8[j] : hi;
    }
    if (lo <= hi) { /* a value that is not NaN */
        bool seen = st->seen[idx];
        if (!seen || lo < st->min[idx]) st->min[idx] = lo;
        if (!seen || hi > st->max[idx]) st->max[idx] = hi;
        st->seen[idx] = true;
    }
    if (st->hist) {
        /* count by the top 14 bits of the float (sign, exponent, 5 mantissa bits) into a scratch
           table, branch-free, then fold those 16384 counts into the value's histogram: the
           per-element cost stays that of one increment (the bins of tosac_quant_hist_bin are
           exactly these classes, with the extreme exponents merged) */
        uint64_t *h = st->hist + (size_t)idx * TOSAC_QUANT_HIST_BINS;
        uint32_t *raw = st->scratch;
        for (int64_t k0 = 0; k0 < n;) {
            /* chunks below 2^32 elements keep the uint32 counts exact */
            int64_t k1 = n - k0 > ((int64_t)1 << 31) ? k0 + ((int64_t)1 << 31) : n;
            memset(raw, 0, QUANT_RAW_BINS * sizeof *raw);
            for (int64_t k = k0; k < k1; k++) {
                uint32_t u;
                memcpy(&u, &x[k], sizeof u);
                raw[u >> 18]++;
            }
            for (uint32_t r = 0; r < QUANT_RAW_BINS; r++) {
                if (!raw[r]) continue;
                /* a representative of class r: NaN classes (exponent 255, mantissa != 0) are
                   mixed with infinity in the class with mantissa bits 0; they are counted as
                   infinity (calibration values are finite in practice) */
                uint32_t u = r << 18;
                float f;
                memcpy(&f, &u, sizeof f);
                uint32_t b = (u & 0x7F800000u) == 0x7F800000u ? tosac_quant_hist_bin(u >> 31 ? -INFINITY : INFINITY)
                                                              : tosac_quant_hist_bin(f);
                if (b < TOSAC_QUANT_HIST_BINS) h[b] += raw[r];
            }
            k0 = k1;
        }
    }
}

typedef struct cal_ctx {
    const tosac_program *p;
    const tosac_block *b;
    quant_stats *st;
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
        tosac_tensor_info info;
        const void *data = NULL;
        if (tosac_program_op_output(c->p, op_index, k, &info, &data) != TOSAC_OK || !data) continue;
        if (info.dtype != TOSAC_DTYPE_FP32 || info.f64 || n->outputs[k]->is_shape) continue;
        observe(c->st, n->outputs[k]->index, data, info.nelem);
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

tosac_status quant_calibrate(const tosac_block *b, const tosac_graph *g, const tosac_quant_opts *o, quant_stats *st,
                             tosac_diag *d)
{
    uint32_t n_samples = quant_sample_count(o);
    if (!n_samples)
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG,
                              "quantization needs calibration data (or explicitly random samples)");
    st->n = b->n_tensors;
    st->min = calloc(st->n ? st->n : 1, sizeof *st->min);
    st->max = calloc(st->n ? st->n : 1, sizeof *st->max);
    st->seen = calloc(st->n ? st->n : 1, sizeof *st->seen);
    if (!st->min || !st->max || !st->seen) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    if (o->method != TOSAC_QUANT_CALIB_MINMAX) {
        /* about 25 KB per value: a few MB for the zoo's largest CNNs */
        size_t nh = (size_t)(st->n ? st->n : 1);
        if (nh > SIZE_MAX / (TOSAC_QUANT_HIST_BINS * sizeof(uint64_t)) ||
            !(st->hist = calloc(nh * TOSAC_QUANT_HIST_BINS, sizeof *st->hist)) ||
            !(st->scratch = malloc(QUANT_RAW_BINS * sizeof *st->scratch)))
            return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory (calibration histograms)");
    }
    tosac_program_opts po = tosac_program_opts_default();
    po.validate.profiles = TOSAC_PROFILE_FP | TOSAC_PROFILE_INT;
    po.borrow_constants = true; /* the FP graph outlives the program: no copy of the weights */
    tosac_program *p = NULL;
    tosac_status s = tosac_program_create(g, &po, &p, d);
    if (s != TOSAC_OK) return s;
    cal_ctx c = {p, b, st};
    tosac_program_set_op_callback(p, on_op, &c);
    uint32_t n_in = tosac_program_input_count(p);
    quant_samples qs;
    quant_samples_init(&qs, o);
    for (uint32_t sidx = 0; sidx < n_samples && s == TOSAC_OK; sidx++) {
        for (uint32_t i = 0; i < n_in && s == TOSAC_OK; i++) {
            tosac_tensor_info info;
            tosac_program_input_info(p, i, &info);
            if (info.dtype != TOSAC_DTYPE_FP32 && info.dtype != TOSAC_DTYPE_INT32) {
                s = tosac_diag_add(d, TOSAC_ERR_UNSUPPORTED,
                                   "input '%s' is %s: only FP32 inputs (quantized) and INT32 ones (kept) can be "
                                   "calibrated", info.name, tosac_dtype_name(info.dtype));
                break;
            }
            const float *x = quant_sample(&qs, sidx, i, n_in, info.nelem, d);
            if (!x) {
                s = TOSAC_ERR_NOMEM;
                break;
            }
            quant_put_sample(tosac_program_input_ptr(p, i), info.dtype, x, info.nelem);
            /* graph inputs are observed here: no operator produces them */
            int32_t bi = -1;
            for (uint32_t k = 0; k < b->n_inputs; k++)
                if (!strcmp(b->inputs[k]->name, info.name)) bi = (int32_t)b->inputs[k]->index;
            if (bi >= 0) observe(st, (uint32_t)bi, x, info.nelem);
        }
        if (s == TOSAC_OK) s = tosac_program_invoke(p, d);
        if (s == TOSAC_OK && o->progress) o->progress(o->progress_user, sidx + 1, n_samples);
    }
    quant_samples_free(&qs);
    tosac_program_destroy(p);
    return s;
}
