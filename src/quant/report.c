/*
 * The per-layer SQNR report (docs/QUANT.md): how much signal each quantized value keeps.
 *
 * The FP program and the INT program run on the same calibration samples (the INT one on them
 * quantized with the input q-params). Every FP value that has an integer form in the INT graph
 * (lower.c's map: FP value -> its int8 tensor and q-params, or its int32 tensor and per-channel
 * real scales) is compared with that form dequantized:
 *   SQNR = 10 log10(sum fp^2 / sum (fp - dequantized)^2), sums over all elements and samples.
 * Errors accumulate along the graph, so a layer's SQNR is that of the whole INT program up to it,
 * not of its own step alone: the first layer where it drops is where the signal is lost.
 *
 * Memory: values are only live inside the op callbacks. The calibration run stored the FP values
 * of the report's first samples (as many as QUANT_KEEP_BYTES holds: the default two samples of
 * the zoo's largest CNNs); for any further sample the FP program runs again and its callback
 * stores them the same way. Then the INT program runs, and its callback compares every integer
 * value with the stored FP one while the integer value is live: no integer value is copied.
 * On several threads the samples run side by side, each lane on single-threaded copies of the
 * programs (sharing their prepared constants) with its own slots; every compare keeps its
 * per-block sums and they are added sample by sample in order, so the report does not depend on
 * the thread count.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/strbuf.h"
#include "ir/rewrite.h"
#include "quant/quant_internal.h"
#include "tosac/runtime.h"

double tosac_quant_sqnr_db(double signal, double noise)
{
    if (!(noise > 0)) return signal > 0 ? INFINITY : 0.0;
    return 10.0 * log10(signal / noise);
}

void tosac_quant_report_free(tosac_quant_report *r)
{
    if (!r) return;
    for (uint32_t k = 0; r->layers && k < r->n_layers; k++) {
        free((char *)r->layers[k].name);
        free((char *)r->layers[k].onnx_node);
    }
    free(r->layers);
    for (uint32_t k = 0; r->outputs && k < r->n_outputs; k++) free((char *)r->outputs[k].name);
    free(r->outputs);
    free(r);
}

typedef struct slot {
    const quant_map_entry *e;
    int64_t nelem;
    double *part;     /* this sample's compare: signal, noise per block (n_part blocks) */
    size_t n_part;
    double signal, noise; /* the totals (the report's own slots) */
    uint64_t n;
} slot;

typedef struct rep_ctx {
    const tosac_program *p; /* the program running (its threads compare) */
    const tosac_block *b;
    slot *slots;
    uint32_t n_slots;
    slot **by_int;    /* sorted by INT value pointer (for the INT callback) */
    int32_t *by_fp;   /* FP value index -> slot, -1 */
    uint32_t n_fp;
    const quant_fp_values *fv; /* the FP values of the current sample: */
    float *fp;                 /* the buffer (fv's layout) */
    bool *had;                 /* by FP value index: stored this sample */
} rep_ctx;

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)(*(slot *const *)a)->e->t, y = (uintptr_t)(*(slot *const *)b)->e->t;
    return x < y ? -1 : x > y;
}

/* The first of the slots compared in INT value v (several FP values can share one int32 tensor:
   a MUL by a positive constant only changes the real scale), or n_slots. */
static uint32_t find_int(const rep_ctx *c, const tosac_value *v)
{
    size_t lo = 0, hi = c->n_slots;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((uintptr_t)c->by_int[mid]->e->t < (uintptr_t)v) lo = mid + 1;
        else hi = mid;
    }
    return (uint32_t)lo;
}

static const tosac_node *main_node(const tosac_program *p, const tosac_block *b, uint32_t op_index)
{
    tosac_op_desc od;
    if (tosac_program_op_info(p, op_index, &od) != TOSAC_OK || od.depth != 0 || od.index >= b->n_nodes) return NULL;
    return b->nodes[od.index];
}

/* The int16 (--a16w8) or int8 program input x quantized with q. */
static void quantize_input(void *dst, const float *x, int64_t n, const tosac_quant_io *q)
{
    int32_t lo, hi;
    tosac_quant_io_range(q->type, &lo, &hi);
    for (int64_t k = 0; k < n; k++) {
        int32_t c = tosac_quant_quantize(x[k], q->q, lo, hi);
        if (q->type == TOSAC_QUANT_IO_INT16) ((int16_t *)dst)[k] = (int16_t)c;
        else ((int8_t *)dst)[k] = (int8_t)c;
    }
}

static void compare(const tosac_program *p, slot *s, const float *x, float lo, float hi, const void *qv, int64_t n);

/* Each slot of an integer result, compared with its FP value of this sample. */
static void on_int_op(void *user, uint32_t op_index, uint32_t op, uint64_t ns)
{
    (void)op, (void)ns;
    rep_ctx *c = user;
    const tosac_node *n = main_node(c->p, c->b, op_index);
    for (uint32_t k = 0; n && k < n->n_outputs; k++) {
        tosac_tensor_info info = {0};
        const void *data = NULL;
        for (uint32_t j = find_int(c, n->outputs[k]); j < c->n_slots && c->by_int[j]->e->t == n->outputs[k]; j++) {
            slot *s = c->by_int[j];
            if (!data && (tosac_program_op_output(c->p, op_index, k, &info, &data) != TOSAC_OK || !data)) break;
            if (info.nelem != s->nelem || info.dtype != s->e->t->dtype || !c->had[s->e->fp] ||
                c->fv->nelem[s->e->fp] != s->nelem)
                continue;
            uint32_t fi = s->e->fp;
            compare(c->p, s, c->fp + c->fv->off[fi], c->fv->lo[fi], c->fv->hi[fi], data, s->nelem);
        }
    }
}

/* Elements per range of a compare on the program's threads; the sums are taken block by block and
   added in block order, so they do not depend on the thread count. */
#define CMP_BLOCK 16384
#define CMP_CHUNK 256

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) && !defined(TOSAC_NO_SIMD)
#include <immintrin.h>
#define CMP_X86 1
#define CMP_AVX2 __builtin_cpu_supports("avx2")

/* The AVX2 forms below do, element for element, the operations of the scalar loops they stand in
   for (an exact conversion, then the same double subtraction and product; max / min whose NaN
   and zero cases are those of the scalar ?:), so the report does not depend on the CPU. Each
   returns the elements it did, a multiple of 4 (8 for floats); the scalar loop does the rest. */

/* d[k] = (double)q[k] * sc[per ? k : 0] */
__attribute__((target("avx2"))) static int64_t dq_i32_avx2(const int32_t *q, const double *sc, bool per, int64_t m,
                                                           double *d)
{
    int64_t k = 0;
    const __m256d one = _mm256_set1_pd(sc[0]);
    for (; k + 4 <= m; k += 4) {
        __m256d v = _mm256_cvtepi32_pd(_mm_loadu_si128((const __m128i *)(const void *)(q + k)));
        _mm256_storeu_pd(d + k, _mm256_mul_pd(v, per ? _mm256_loadu_pd(sc + k) : one));
    }
    return k;
}

/* d[k] = scale * ((double)q[k] - zp), q int8 (es 1) or int16 (es 2) */
__attribute__((target("avx2"))) static int64_t dq_affine_avx2(const void *q, int es, double scale, double zp,
                                                              int64_t m, double *d)
{
    int64_t k = 0;
    const __m256d s4 = _mm256_set1_pd(scale), z4 = _mm256_set1_pd(zp);
    for (; k + 4 <= m; k += 4) {
        __m128i w;
        if (es == 1) {
            int32_t four;
            memcpy(&four, (const int8_t *)q + k, sizeof four);
            w = _mm_cvtepi8_epi32(_mm_cvtsi32_si128(four));
        } else {
            w = _mm_cvtepi16_epi32(_mm_loadl_epi64((const __m128i *)(const void *)((const int16_t *)q + k)));
        }
        _mm256_storeu_pd(d + k, _mm256_mul_pd(s4, _mm256_sub_pd(_mm256_cvtepi32_pd(w), z4)));
    }
    return k;
}

/* y[k] = hi < v ? hi : v where v = lo > x[k] ? lo : x[k] (maxps / minps return their second
   operand unless the first compares greater / less) */
__attribute__((target("avx2"))) static int64_t clamp_avx2(const float *x, float lo, float hi, int64_t m, float *y)
{
    int64_t k = 0;
    const __m256 l8 = _mm256_set1_ps(lo), h8 = _mm256_set1_ps(hi);
    for (; k + 8 <= m; k += 8) _mm256_storeu_ps(y + k, _mm256_min_ps(h8, _mm256_max_ps(l8, _mm256_loadu_ps(x + k))));
    return k;
}
#endif

static void dq_i32(const int32_t *q, const double *sc, bool per, int64_t m, double *d)
{
    int64_t k = 0;
#ifdef CMP_X86
    if (CMP_AVX2) k = dq_i32_avx2(q, sc, per, m, d);
#endif
    for (; k < m; k++) d[k] = (double)q[k] * sc[per ? k : 0];
}

/* d[0, m) = integer values qv[k0..] of slot s dequantized (an int8 or int16 code through its
   q-params, int32 / INT48 through the per-channel real scales) */
static void dequant_run(const slot *s, const void *qv, int64_t k0, int64_t m, double *d)
{
    const quant_map_entry *e = s->e;
    if (e->i32) {
        /* channel (k0 + k) mod nsc: runs of consecutive channels, or one run of one scale (INT48
           lives in an int64) */
        const int32_t *q = (const int32_t *)qv + k0;
        const int64_t *q48 = (const int64_t *)qv + k0;
        bool per = e->nsc > 1;
        int64_t c = per ? k0 % e->nsc : 0;
        for (int64_t k = 0; k < m; c = 0) {
            int64_t run = per && e->nsc - c < m - k ? e->nsc - c : m - k;
            const double *sc = e->sc + c;
            if (e->t->dtype == TOSAC_DTYPE_INT48)
                for (int64_t j = 0; j < run; j++) d[k + j] = (double)q48[k + j] * sc[per ? j : 0];
            else
                dq_i32(q + k, sc, per, run, d + k);
            k += run;
        }
        return;
    }
    int es = e->t->dtype == TOSAC_DTYPE_INT16 ? 2 : 1;
    double scale = e->q.scale, zp = (double)e->q.zero_point;
    int64_t k = 0;
#ifdef CMP_X86
    if (CMP_AVX2) k = dq_affine_avx2((const int8_t *)qv + k0 * es, es, scale, zp, m, d);
#endif
    if (es == 2)
        for (const int16_t *q = (const int16_t *)qv + k0; k < m; k++) d[k] = scale * ((double)q[k] - zp);
    else
        for (const int8_t *q = (const int8_t *)qv + k0; k < m; k++) d[k] = scale * ((double)q[k] - zp);
}

#ifdef CMP_X86
/* cmp_sums' four lanes as the four doubles of a vector: the same operations in the same order
   (a product, then a sum; no fused multiply-add). Returns the elements done, a multiple of 4. */
__attribute__((target("avx2"))) static int64_t cmp_sums_avx2(const float *x, const double *d, int64_t m, double sig[4],
                                                             double noise[4])
{
    __m256d s4 = _mm256_loadu_pd(sig), n4 = _mm256_loadu_pd(noise);
    int64_t k = 0;
    for (; k + 4 <= m; k += 4) {
        __m256d r = _mm256_cvtps_pd(_mm_loadu_ps(x + k)), e = _mm256_sub_pd(r, _mm256_loadu_pd(d + k));
        s4 = _mm256_add_pd(s4, _mm256_mul_pd(r, r));
        n4 = _mm256_add_pd(n4, _mm256_mul_pd(e, e));
    }
    _mm256_storeu_pd(sig, s4);
    _mm256_storeu_pd(noise, n4);
    return k;
}
#endif

/* Adds element k of x[0, m) and its error x[k] - d[k], squared, to lane k mod 4 of sig and noise,
   each lane in element order: four independent sums in registers, no chain of dependent additions
   through memory. */
static void cmp_sums(const float *x, const double *d, int64_t m, double sig[4], double noise[4])
{
#ifdef CMP_X86
    if (CMP_AVX2) {
        int64_t k = cmp_sums_avx2(x, d, m, sig, noise);
        x += k, d += k, m -= k; /* k is a multiple of 4: the lanes stay element mod 4 */
    }
#endif
    double s0 = sig[0], s1 = sig[1], s2 = sig[2], s3 = sig[3];
    double n0 = noise[0], n1 = noise[1], n2 = noise[2], n3 = noise[3];
    int64_t k = 0;
    for (; k + 4 <= m; k += 4) {
        double r0 = x[k], r1 = x[k + 1], r2 = x[k + 2], r3 = x[k + 3];
        double e0 = r0 - d[k], e1 = r1 - d[k + 1], e2 = r2 - d[k + 2], e3 = r3 - d[k + 3];
        s0 += r0 * r0, s1 += r1 * r1, s2 += r2 * r2, s3 += r3 * r3;
        n0 += e0 * e0, n1 += e1 * e1, n2 += e2 * e2, n3 += e3 * e3;
    }
    sig[0] = s0, sig[1] = s1, sig[2] = s2, sig[3] = s3;
    noise[0] = n0, noise[1] = n1, noise[2] = n2, noise[3] = n3;
    for (; k < m; k++) {
        double r = x[k], e = r - d[k];
        sig[k & 3] += r * r;
        noise[k & 3] += e * e;
    }
}

typedef struct cmp_job {
    const slot *s;
    const float *x;
    float lo, hi;
    const void *q;
    int64_t n;
    double *part;
} cmp_job;

static void cmp_task(void *ctx, uint32_t worker, size_t begin, size_t end)
{
    (void)worker;
    const cmp_job *j = ctx;
    for (size_t blk = begin; blk < end; blk++) {
        int64_t b = (int64_t)blk * CMP_BLOCK, e = b + CMP_BLOCK < j->n ? b + CMP_BLOCK : j->n;
        double sig[4] = {0, 0, 0, 0}, noise[4] = {0, 0, 0, 0}, d[CMP_CHUNK];
        float y[CMP_CHUNK];
        bool clamped = j->lo > -INFINITY || j->hi < INFINITY;
        for (int64_t k0 = b; k0 < e; k0 += CMP_CHUNK) { /* k0 - b is a multiple of 4: lane = element mod 4 */
            int64_t m = e - k0 < CMP_CHUNK ? e - k0 : CMP_CHUNK;
            const float *x = j->x + k0;
            /* a CLAMP (nan_mode PROPAGATE) of the stored value: NaN stays NaN, and the sign of a
               zero it gives changes no square and no difference from a nonzero */
            int64_t k = 0;
#ifdef CMP_X86
            if (clamped && CMP_AVX2) k = clamp_avx2(x, j->lo, j->hi, m, y);
#endif
            for (; clamped && k < m; k++) {
                float v = x[k];
                v = j->lo > v ? j->lo : v;
                y[k] = j->hi < v ? j->hi : v;
            }
            dequant_run(j->s, j->q, k0, m, d);
            cmp_sums(clamped ? y : x, d, m, sig, noise);
        }
        j->part[2 * blk] = (sig[0] + sig[1]) + (sig[2] + sig[3]);
        j->part[2 * blk + 1] = (noise[0] + noise[1]) + (noise[2] + noise[3]);
    }
}

/* s's block sums of this sample, FP clamp(x, lo, hi) against integer qv (n = s->nelem elements,
   at most once per sample), on p's threads. */
static void compare(const tosac_program *p, slot *s, const float *x, float lo, float hi, const void *qv, int64_t n)
{
    cmp_job j = {s, x, lo, hi, qv, n, s->part};
    size_t blocks = (size_t)((n + CMP_BLOCK - 1) / CMP_BLOCK);
    if (blocks < 4) cmp_task(&j, 0, 0, blocks);
    else tosac_program_parallel_for(p, cmp_task, &j, blocks);
    s->n_part = blocks;
}

/* Adds a lane's sample to the totals (block by block, in order) and clears it. */
static void commit(slot *tot, slot *lane, uint32_t n_slots)
{
    for (uint32_t k = 0; k < n_slots; k++) {
        slot *l = &lane[k];
        if (!l->n_part) continue;
        for (size_t b = 0; b < l->n_part; b++) {
            tot[k].signal += l->part[2 * b];
            tot[k].noise += l->part[2 * b + 1];
        }
        tot[k].n += (uint64_t)l->nelem;
        l->n_part = 0;
    }
}

static void on_fp_op(void *user, uint32_t op_index, uint32_t op, uint64_t ns);

/* One lane: single-threaded copies of the programs (the report's own when it is the only lane;
   no FP program when the calibration stored every sample's FP values), its copies of the slots,
   its buffer for FP values (fv's layout) and the sample it runs. */
typedef struct rep_lane {
    rep_ctx c;
    tosac_program *pf, *pq;
    bool own;
    const tosac_block *fb, *qb;
    float *buf;
    bool *had;
    uint32_t sample;
    tosac_diag *d;
    tosac_status s;
} rep_lane;

/* The sample's FP values (the calibration's, else from a run of the FP program now), then the
   INT program, whose callback compares. */
static void lane_run(rep_lane *L)
{
    const quant_fp_values *fv = L->c.fv;
    if (L->sample < fv->n_samples) {
        L->c.fp = fv->buf[L->sample];
        L->c.had = fv->had[L->sample];
    } else {
        L->c.fp = L->buf;
        L->c.had = L->had;
        memset(L->had, 0, fv->n_values * sizeof *L->had);
        L->c.p = L->pf;
        L->c.b = L->fb;
        tosac_program_set_op_callback(L->pf, on_fp_op, &L->c);
        L->s = tosac_program_invoke(L->pf, L->d);
        if (L->s != TOSAC_OK) return;
        quant_fp_values_put_outputs(fv, L->buf, L->pf);
    }
    L->c.p = L->pq;
    L->c.b = L->qb;
    tosac_program_set_op_callback(L->pq, on_int_op, &L->c);
    L->s = tosac_program_invoke(L->pq, L->d);
}

static void lane_task(void *ctx, uint32_t worker, size_t begin, size_t end)
{
    (void)worker;
    rep_lane *lanes = ctx;
    for (size_t i = begin; i < end; i++) lane_run(&lanes[i]);
}

/* What the programs of one graph are made with: every program of it gets the same (they share
   prepared constants, which depend on the fusions the observe list allows). */
typedef struct prog_kind {
    const tosac_graph *g;
    uint32_t profiles, extensions;
    const uint32_t *observe; /* the values the callbacks read (NULL: every one, unfused) */
    uint32_t n_observe;
} prog_kind;

static tosac_program *make_program(const prog_kind *k, uint32_t threads, const tosac_program *shared, tosac_diag *d)
{
    tosac_program_opts po = tosac_program_opts_default();
    po.threads = threads;
    po.validate.profiles = k->profiles;
    po.validate.extensions = k->extensions;
    po.borrow_constants = true; /* both graphs outlive the programs */
    po.conv_direct = true;      /* FP references in the reference order, as calibration sees them */
    po.observe = k->observe;
    po.n_observe = k->n_observe;
    po.caller_prepared = shared && tosac_program_prepared_size(shared) > 0;
    tosac_program *p = NULL;
    if (tosac_program_create(k->g, &po, &p, d) != TOSAC_OK) return NULL;
    if (po.caller_prepared && tosac_program_share_prepared(p, tosac_program_prepared(shared),
                                                           tosac_program_prepared_size(shared), d) != TOSAC_OK) {
        tosac_program_destroy(p);
        return NULL;
    }
    return p;
}

/* A single-threaded copy of `shared` (a program of k) using its prepared constants. */
static tosac_program *lane_program(const prog_kind *k, const tosac_program *shared, tosac_diag *d)
{
    return make_program(k, 1, shared, d);
}

/* The lane's slots: the report's, each with its own block sums; its FP value buffer when it runs
   the FP program (fp). */
static bool lane_slots(rep_lane *L, const rep_ctx *c, bool fp)
{
    L->c = *c;
    L->c.slots = calloc(c->n_slots ? c->n_slots : 1, sizeof *L->c.slots);
    L->c.by_int = calloc(c->n_slots ? c->n_slots : 1, sizeof *L->c.by_int);
    if (!L->c.slots || !L->c.by_int) return false;
    if (fp && (!(L->buf = malloc(c->fv->per * sizeof *L->buf + 1)) || !(L->had = calloc(c->fv->n_values + 1, sizeof *L->had))))
        return false;
    for (uint32_t k = 0; k < c->n_slots; k++) {
        slot *s = &L->c.slots[k];
        s->e = c->slots[k].e;
        s->nelem = c->slots[k].nelem;
        s->part = malloc(2 * ((size_t)(s->nelem / CMP_BLOCK) + 1) * sizeof *s->part);
        if (!s->part) return false;
        L->c.by_int[k] = L->c.slots + (c->by_int[k] - c->slots);
    }
    return true;
}

static void lane_free(rep_lane *L)
{
    for (uint32_t k = 0; L->c.slots && k < L->c.n_slots; k++) free(L->c.slots[k].part);
    free(L->buf);
    free(L->had);
    free(L->c.slots);
    free(L->c.by_int);
    if (L->own) {
        tosac_program_destroy(L->pf);
        tosac_program_destroy(L->pq);
        tosac_diag_destroy(L->d);
    }
}

/* Stores the FP values (a sample the calibration did not store). */
static void on_fp_op(void *user, uint32_t op_index, uint32_t op, uint64_t ns)
{
    (void)op, (void)ns;
    rep_ctx *c = user;
    const tosac_node *n = main_node(c->p, c->b, op_index);
    for (uint32_t k = 0; n && k < n->n_outputs; k++) {
        uint32_t fi = n->outputs[k]->index;
        if (fi >= c->n_fp || c->fv->off[fi] == QUANT_NOT_KEPT) continue;
        tosac_tensor_info info;
        const void *data = NULL;
        if (tosac_program_op_output(c->p, op_index, k, &info, &data) != TOSAC_OK || !data) continue;
        if (info.dtype != TOSAC_DTYPE_FP32 || info.f64) continue;
        quant_fp_values_put(c->fv, c->fp, c->had, fi, &info, data);
    }
}

/* Worst (lowest SQNR) first; equal SQNRs in graph order (qsort is not stable, so the FP value
   index is the tie key and the order does not depend on the C library). */
typedef struct ordered {
    tosac_quant_layer l;
    uint32_t pos;
} ordered;

static int cmp_ordered(const void *a, const void *b)
{
    const ordered *x = a, *y = b;
    if (x->l.sqnr_db < y->l.sqnr_db) return -1;
    if (x->l.sqnr_db > y->l.sqnr_db) return 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* The report outlives the FP graph (the CLI drops it once quantized): names are copied. */
static char *dup_str(const char *s, bool *ok)
{
    if (!s) return NULL;
    size_t len = strlen(s) + 1;
    char *c = malloc(len);
    if (c) memcpy(c, s, len);
    else *ok = false;
    return c;
}

tosac_status quant_report(const tosac_graph *fp, quant_fp_programs *kept, const tosac_graph *q, const tosac_quant_opts *o,
                          const tosac_quant_iomap *io, quant_map_entry *map, uint32_t n_map, tosac_quant_report **out,
                          tosac_diag *d)
{
    tosac_program *pf = kept->p;
    const tosac_block *fb = quant_main_block(fp), *qb = quant_main_block(q);
    uint32_t n_samples = quant_report_sample_count(o);
    /* FP programs run only on samples the calibration did not store */
    bool need_fp = n_samples > kept->vals.n_samples;
    for (uint32_t w = 0; w < kept->n_lanes && !need_fp; w++) {
        tosac_program_destroy(kept->lane[w]);
        kept->lane[w] = NULL;
    }
    rep_ctx c;
    memset(&c, 0, sizeof c);
    c.n_fp = fb->n_tensors;
    c.fv = &kept->vals;
    c.slots = calloc(n_map ? n_map : 1, sizeof *c.slots);
    c.by_int = calloc(n_map ? n_map : 1, sizeof *c.by_int);
    c.by_fp = malloc((c.n_fp ? c.n_fp : 1) * sizeof *c.by_fp);
    tosac_program *pq = NULL;
    prog_kind kf = {fp, TOSAC_PROFILE_FP | TOSAC_PROFILE_INT, 0, kept->observe, kept->n_observe};
    prog_kind kq = {q, TOSAC_PROFILE_INT, o->a16w8 ? TOSAC_EXT_INT16 : 0, NULL, 0};
    uint32_t *int_obs = malloc((n_map ? n_map : 1) * sizeof *int_obs); /* the INT values compared */
    tosac_quant_report *r = NULL;
    ordered *ord = NULL;
    double out_sig = 0, out_noise = 0;
    tosac_status s = c.slots && c.by_int && c.by_fp && int_obs ? TOSAC_OK : TOSAC_ERR_NOMEM;
    if (s == TOSAC_OK && (!pf || c.fv->n_values != c.n_fp))
        s = tosac_diag_add(d, TOSAC_ERR_INTERNAL, "SQNR report without the calibration's FP program");
    for (uint32_t k = 0; k < c.n_fp && s == TOSAC_OK; k++) c.by_fp[k] = -1;
    for (uint32_t k = 0; k < n_map && s == TOSAC_OK; k++) {
        const quant_map_entry *e = &map[k];
        slot *sl = &c.slots[c.n_slots];
        sl->e = e;
        sl->nelem = tosac_value_nelem(e->t);
        if (sl->nelem < 0 || e->fp >= c.n_fp) {
            s = TOSAC_ERR_NOMEM;
            break;
        }
        c.by_fp[e->fp] = (int32_t)c.n_slots;
        c.by_int[c.n_slots] = sl;
        c.n_slots++;
        if (e->t->index < qb->n_tensors && qb->tensors[e->t->index] == e->t) /* still in the INT graph */
            int_obs[kq.n_observe++] = e->t->index;
    }
    kq.observe = int_obs;
    if (s == TOSAC_ERR_NOMEM) tosac_diag_add(d, s, "out of memory (SQNR report)");
    if (s == TOSAC_OK) {
        qsort(c.by_int, c.n_slots, sizeof *c.by_int, cmp_ptr);
        pq = make_program(&kq, o->threads, NULL, d);
        if (!pq) s = tosac_diag_count(d) ? TOSAC_ERR_INTERNAL : tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    }
    uint32_t n_in = pf ? tosac_program_input_count(pf) : 0, n_out = pf ? tosac_program_output_count(pf) : 0;
    /* per output: signal, noise, and whether either program's values stayed one constant */
    typedef struct out_acc {
        double sig, noise, fp0, int0;
        bool seen, fp_const, int_const;
    } out_acc;
    out_acc *oacc = calloc(n_out ? n_out : 1, sizeof *oacc);
    if (!oacc && s == TOSAC_OK) s = tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    /* the lanes: side by side on pf's threads when each can have its copies of the programs,
       else one lane on pf and pq themselves */
    rep_lane lanes[QUANT_MAX_WORKERS];
    memset(lanes, 0, sizeof lanes);
    uint32_t n_lanes = 0;
    if (s == TOSAC_OK) {
        uint32_t T = tosac_program_threads(pf);
        T = T < n_samples ? T : n_samples;
        T = T < QUANT_MAX_WORKERS ? T : QUANT_MAX_WORKERS;
        bool ok = T >= 2;
        for (uint32_t w = 0; w < T && ok; w++) {
            rep_lane *L = &lanes[n_lanes++];
            L->own = true;
            /* the calibration's programs where it ran side by side; a failure here only means one lane */
            if (w < kept->n_lanes) L->pf = kept->lane[w], kept->lane[w] = NULL;
            ok = (L->d = tosac_diag_create()) &&
                 (!need_fp || L->pf || (L->pf = lane_program(&kf, pf, L->d))) &&
                 (L->pq = lane_program(&kq, pq, L->d)) && lane_slots(L, &c, need_fp);
        }
        if (!ok) {
            for (uint32_t w = 0; w < n_lanes; w++) lane_free(&lanes[w]);
            memset(lanes, 0, sizeof lanes);
            n_lanes = 1;
            lanes[0] = (rep_lane){.pf = pf, .pq = pq, .d = d};
            if (!lane_slots(&lanes[0], &c, need_fp)) s = tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory (SQNR report)");
        }
        for (uint32_t w = 0; w < n_lanes; w++) lanes[w].fb = fb, lanes[w].qb = qb;
    }
    quant_samples qs;
    quant_samples_init(&qs, o);
    for (uint32_t base = 0; base < n_samples && s == TOSAC_OK; base += n_lanes) {
        uint32_t m = n_samples - base < n_lanes ? n_samples - base : n_lanes;
        /* the inputs in sample order (the random stream is read in order) */
        for (uint32_t w = 0; w < m && s == TOSAC_OK; w++) {
            rep_lane *L = &lanes[w];
            L->sample = base + w;
            for (uint32_t i = 0; i < n_in && s == TOSAC_OK; i++) {
                tosac_tensor_info info;
                tosac_program_input_info(pf, i, &info);
                const float *x = quant_sample(&qs, base + w, i, n_in, info.nelem, d);
                int32_t qi = tosac_program_input_index(pq, info.name);
                const tosac_quant_io *qio = NULL;
                for (uint32_t k = 0; k < io->n_inputs; k++)
                    if (!strcmp(io->inputs[k].name, info.name)) qio = &io->inputs[k];
                if (!x || qi < 0 || !qio) {
                    s = x ? tosac_diag_add(d, TOSAC_ERR_INTERNAL, "SQNR report: input '%s' not found", info.name) : TOSAC_ERR_NOMEM;
                    break;
                }
                if (L->sample >= c.fv->n_samples) quant_put_sample(tosac_program_input_ptr(L->pf, i), info.dtype, x, info.nelem);
                void *xq = tosac_program_input_ptr(L->pq, (uint32_t)qi);
                if (qio->type == TOSAC_QUANT_IO_INT32) {
                    quant_put_sample(xq, TOSAC_DTYPE_INT32, x, info.nelem);
                    continue;
                }
                quantize_input(xq, x, info.nelem, qio);
                /* the graph input itself: its only error is the input quantization */
                for (uint32_t k = 0; k < fb->n_inputs; k++) {
                    uint32_t fi = fb->inputs[k]->index;
                    if (strcmp(fb->inputs[k]->name, info.name) || c.by_fp[fi] < 0) continue;
                    slot *sl = &L->c.slots[c.by_fp[fi]];
                    if (sl->e->i32 || sl->nelem != info.nelem) continue;
                    compare(L->pq, sl, x, -INFINITY, INFINITY, xq, info.nelem);
                }
            }
        }
        if (s != TOSAC_OK) break;
        if (n_lanes == 1) lane_run(&lanes[0]);
        else tosac_program_parallel_for(pf, lane_task, lanes, m);
        for (uint32_t w = 0; w < m && s == TOSAC_OK; w++) {
            rep_lane *L = &lanes[w];
            if (L->s != TOSAC_OK) {
                s = L->s;
                for (size_t k = 0; L->d != d && k < tosac_diag_count(L->d); k++) {
                    tosac_status code = TOSAC_OK;
                    const char *msg = tosac_diag_message(L->d, k, &code);
                    tosac_diag_add(d, code, "%s", msg);
                }
                break;
            }
            commit(c.slots, L->c.slots, c.n_slots);
            /* the program outputs as users see them: int8 outputs dequantized with the sidecar */
            for (uint32_t k = 0; k < n_out; k++) {
                tosac_tensor_info info;
                tosac_program_output_info(pf, k, &info);
                int32_t qk = tosac_program_output_index(pq, info.name);
                const tosac_quant_io *qio = NULL;
                for (uint32_t j = 0; j < io->n_outputs; j++)
                    if (!strcmp(io->outputs[j].name, info.name)) qio = &io->outputs[j];
                if (qk < 0 || !qio || info.dtype != TOSAC_DTYPE_FP32 || info.f64) continue;
                const float *y = L->c.fp + c.fv->out_off[k];
                const void *yq = tosac_program_output_ptr(L->pq, (uint32_t)qk);
                out_acc *A = &oacc[k];
                for (int64_t e = 0; yq && e < info.nelem; e++) {
                    int32_t v = qio->type == TOSAC_QUANT_IO_INT16 ? ((const int16_t *)yq)[e] : ((const int8_t *)yq)[e];
                    double iv = tosac_quant_dequantize(v, qio->q), dv = (double)y[e] - iv;
                    if (!A->seen) {
                        A->seen = A->fp_const = A->int_const = true;
                        A->fp0 = y[e];
                        A->int0 = iv;
                    }
                    A->fp_const &= (double)y[e] == A->fp0;
                    A->int_const &= iv == A->int0;
                    A->sig += (double)y[e] * y[e];
                    A->noise += dv * dv;
                    out_sig += (double)y[e] * y[e];
                    out_noise += dv * dv;
                }
            }
            if (o->progress) o->progress(o->progress_user, base + w + 1, n_samples);
        }
    }
    for (uint32_t w = 0; w < n_lanes; w++) lane_free(&lanes[w]);
    kept->p = NULL; /* pf: destroyed last */
    quant_fp_programs_free(kept);
    quant_samples_free(&qs);
    if (s == TOSAC_OK) {
        r = calloc(1, sizeof *r);
        ord = calloc(c.n_slots ? c.n_slots : 1, sizeof *ord);
        if (r) r->layers = calloc(c.n_slots ? c.n_slots : 1, sizeof *r->layers);
        if (!r || !ord || !r->layers) s = tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    }
    if (s == TOSAC_OK) {
        uint32_t n = 0;
        bool ok = true;
        for (uint32_t k = 0; k < c.n_slots; k++) {
            const slot *sl = &c.slots[k];
            if (!sl->n) continue; /* not in the final graph (its int form was dropped) */
            const tosac_value *v = fb->tensors[sl->e->fp];
            tosac_quant_layer *L = &ord[n].l;
            ord[n].pos = sl->e->fp;
            L->name = dup_str(v->name, &ok);
            L->op = v->producer ? tosac_op_name(v->producer->op) : "input";
            L->onnx_node = v->producer ? dup_str(v->producer->location, &ok) : NULL;
            L->index = sl->e->fp;
            L->int32 = sl->e->i32;
            L->int16 = sl->e->t->dtype == TOSAC_DTYPE_INT16;
            L->q = sl->e->i32 ? (tosac_qparams){sl->e->sc[0], 0} : sl->e->q;
            L->n = sl->n;
            L->signal = sl->signal;
            L->noise = sl->noise;
            L->sqnr_db = tosac_quant_sqnr_db(sl->signal, sl->noise);
            n++;
        }
        qsort(ord, n, sizeof *ord, cmp_ordered);
        for (uint32_t k = 0; k < n; k++) r->layers[k] = ord[k].l;
        r->n_layers = n; /* set before a failure below so that the copies are freed */
        if (!ok) s = tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
        r->n_samples = n_samples;
        r->output_sqnr_db = tosac_quant_sqnr_db(out_sig, out_noise);
        r->outputs = calloc(n_out ? n_out : 1, sizeof *r->outputs);
        if (!r->outputs) s = tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
        for (uint32_t k = 0; r->outputs && k < n_out; k++) {
            tosac_tensor_info info;
            if (!oacc[k].seen || tosac_program_output_info(pf, k, &info) != TOSAC_OK) continue;
            tosac_quant_output *O = &r->outputs[r->n_outputs++];
            O->name = dup_str(info.name, &ok);
            O->sqnr_db = tosac_quant_sqnr_db(oacc[k].sig, oacc[k].noise);
            O->int_constant = oacc[k].int_const;
            O->fp_constant = oacc[k].fp_const;
            O->int_value = oacc[k].int0;
        }
        if (!ok && s == TOSAC_OK) s = tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
        if (s == TOSAC_OK) {
            *out = r;
            r = NULL;
        }
    }
    tosac_quant_report_free(r);
    free(oacc);
    free(ord);
    tosac_program_destroy(pf);
    tosac_program_destroy(pq);
    free(int_obs);
    free(c.slots);
    free(c.by_int);
    free(c.by_fp);
    return s;
}

static void json_num(tosac_strbuf *sb, double v)
{
    if (isfinite(v)) tosac_strbuf_appendf(sb, "%.17g", v);
    else tosac_strbuf_append(sb, "null"); /* JSON has no infinity: a lossless layer */
}

tosac_status tosac_quant_report_write_json(const tosac_quant_report *r, const char *path, tosac_diag *d)
{
    tosac_strbuf sb;
    tosac_strbuf_init(&sb);
    tosac_strbuf_appendf(&sb, "{\n  \"format\": \"tosac-quant-report\",\n  \"version\": 1,\n  \"samples\": %u,\n",
                         r->n_samples);
    tosac_strbuf_append(&sb, "  \"output_sqnr_db\": ");
    json_num(&sb, r->output_sqnr_db);
    tosac_strbuf_append(&sb, ",\n  \"layers\": [");
    for (uint32_t k = 0; k < r->n_layers; k++) {
        const tosac_quant_layer *L = &r->layers[k];
        tosac_strbuf_append(&sb, k ? ",\n    {\"name\": " : "\n    {\"name\": ");
        tosac_strbuf_append_json_str(&sb, L->name);
        tosac_strbuf_append(&sb, ", \"op\": ");
        tosac_strbuf_append_json_str(&sb, L->op);
        tosac_strbuf_append(&sb, ", \"onnx_node\": ");
        if (L->onnx_node) tosac_strbuf_append_json_str(&sb, L->onnx_node);
        else tosac_strbuf_append(&sb, "null");
        tosac_strbuf_appendf(&sb, ", \"index\": %u", L->index);
        tosac_strbuf_appendf(&sb, ", \"form\": \"%s\", \"scale\": %.17g, \"zero_point\": %d, \"elements\": %llu",
                             L->int32 ? "int32" : L->int16 ? "int16" : "int8", L->q.scale, (int)L->q.zero_point, (unsigned long long)L->n);
        tosac_strbuf_append(&sb, ", \"sqnr_db\": ");
        json_num(&sb, L->sqnr_db);
        tosac_strbuf_appendf(&sb, ", \"signal\": %.17g, \"noise\": %.17g}", L->signal, L->noise);
    }
    tosac_strbuf_append(&sb, r->n_layers ? "\n  ]\n}\n" : "]\n}\n");
    return quant_write_text(&sb, path, "the quantization report", d);
}
