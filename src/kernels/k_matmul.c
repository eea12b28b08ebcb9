/*
 * MATMUL: output[n, h, w] = sum over c of (A[n, h, c] - A_zp) * (B[n, c, w] - B_zp).
 *
 * Rows: i8 -> i32 (int16 operands, int32 partial sums, exact), i16 -> i48 (int64 accumulation,
 * REQUIRE the sum fits i48 else UNPREDICTABLE), fp16/bf16/fp32 -> fp32 (float accumulation over c
 * in order, one rounding per product and per addition), fp8/fp16 -> fp16 (fp16 accumulation: every
 * product and running sum rounded to fp16), precise mode (f64 tensors) in double. MATMUL has no
 * acc_type attribute: the accumulator is out_t.
 */
#include <math.h>
#include <string.h>

#include "kernels/k_epilogue.h"
#include "kernels/k_gemm.h"
#include "kernels/k_mve.h"
#include "kernels/kutil.h"

#ifdef TOSAC_KERNEL_X86
#include <immintrin.h>
#endif

/* GCC vectorises the conversion and fp16 loops only at -O3; results do not change. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

typedef enum { MK_I8, MK_I16, MK_F32, MK_F16ACC, MK_F64 } mm_kind;

typedef struct {
    mm_kind kind;
    int64_t N, H, C, W;
    int64_t chunk;
    bool bprep;  /* constant B (and B_zp): converted once by prepare */
    bool panel;  /* constant B as tosac_gemm_i16_panel's panels (AVX-512 VNNI), one per batch */
    bool fmv;    /* fp32 matrix-vector (H <= MV_MAXH) on constant B prepared as column blocks */
    int64_t lda; /* A row stride in scratch: C, made even for the panels */
    size_t off_a, off_b, off_c32, off_c64, total;
} mm_plan;

/*
 * fp32 matrix-vector (fully connected layers: H of at most MV_MAXH rows against a constant B).
 * The product is memory bound: B [C][W] read column block by column block walks rows W floats
 * apart, which the prefetchers follow badly. Prepare stores B as blocks of MV_COLS columns, each
 * [C][MV_COLS] (zero beyond W), so a block streams contiguously; each output's sum runs over c in
 * order from +0, each product fused into the sum (the bits of tosac_gemm_f32), in vectors of the
 * variant's width whose lanes are independent outputs, so every level gives the same bits. Blocks
 * are the parallel-for's tiles.
 */
#define MV_COLS 64
#define MV_MAXH 4
/* Products of fewer multiply-adds run as one task (MATMUL splits over output columns). */
#define MMF_MIN_MACS ((int64_t)1 << 17)
typedef void (*mv_fn)(int64_t H, int64_t C, const float *A, const float *blk, float *O, int64_t ldo, int64_t jn);
/* VB: vector bytes; SUB: columns per pass over the block (the accumulators stay in registers) */
#define MV_DEFINE(SFX, TARGET, VB, SUB, FMA)                                                                \
    typedef float mv_vf_##SFX __attribute__((vector_size(VB)));                                             \
    TARGET static void mv_block_##SFX(int64_t H, int64_t C, const float *A, const float *blk, float *O,      \
                                      int64_t ldo, int64_t jn)                                              \
    {                                                                                                       \
        enum { L = (VB) / 4, NV = (SUB) / ((VB) / 4) };                                                     \
        for (int64_t h = 0; h < H; h++) {                                                                   \
            const float *a = A + h * C;                                                                     \
            float out[MV_COLS];                                                                             \
            for (int s = 0; s < MV_COLS; s += (SUB)) {                                                      \
                mv_vf_##SFX acc[NV];                                                                        \
                for (int v = 0; v < NV; v++) acc[v] = (mv_vf_##SFX){0};                                     \
                const float *p = blk + s;                                                                   \
                for (int64_t k = 0; k < C; k++, p += MV_COLS) {                                             \
                    const float x = a[k];                                                                   \
                    for (int v = 0; v < NV; v++) {                                                          \
                        mv_vf_##SFX r;                                                                      \
                        memcpy(&r, p + v * L, sizeof r);                                                    \
                        acc[v] = FMA(r, x, acc[v]);                                                         \
                    }                                                                                       \
                }                                                                                           \
                memcpy(out + s, acc, sizeof acc);                                                           \
            }                                                                                               \
            memcpy(O + h * ldo, out, (size_t)jn * sizeof(float));                                           \
        }                                                                                                   \
    }
typedef float mv_v4 __attribute__((vector_size(16)));
static inline mv_v4 mv_fma_base(mv_v4 r, float x, mv_v4 acc)
{
    for (int l = 0; l < 4; l++) acc[l] = fmaf(r[l], x, acc[l]);
    return acc;
}
MV_DEFINE(base, , 16, 32, mv_fma_base)
#ifdef TOSAC_KERNEL_X86
/* (intrinsics, not the lane loop of the baseline: with the loop GCC keeps acc[] in memory and
   stores every sum back at each k) */
#define MV_FMA8(r, x, acc) (mv_vf_avx2) _mm256_fmadd_ps((__m256)(r), _mm256_set1_ps(x), (__m256)(acc))
#define MV_FMA16(r, x, acc) (mv_vf_avx512) _mm512_fmadd_ps((__m512)(r), _mm512_set1_ps(x), (__m512)(acc))
MV_DEFINE(avx2, __attribute__((target("avx2,fma"))), 32, 64, MV_FMA8)
MV_DEFINE(avx512, __attribute__((target("avx2,fma,avx512f"))), 64, 64, MV_FMA16)
#undef MV_FMA8
#undef MV_FMA16
#endif
#undef MV_DEFINE

static mv_fn mv_pick(uint32_t isa)
{
#ifdef TOSAC_KERNEL_X86
    if (isa == TOSAC_KISA_AVX512) return mv_block_avx512;
    if (isa == TOSAC_KISA_AVX2) return mv_block_avx2;
#endif
    (void)isa;
    return mv_block_base;
}

static int64_t mv_blocks(int64_t W) { return (W + MV_COLS - 1) / MV_COLS; }

/* B [C][W] as the blocks above. */
static void mv_pack(int64_t C, int64_t W, const float *b, float *dst)
{
    for (int64_t j0 = 0; j0 < W; j0 += MV_COLS, dst += C * MV_COLS) {
        const int64_t jn = W - j0 < MV_COLS ? W - j0 : MV_COLS;
        for (int64_t k = 0; k < C; k++) {
            memcpy(dst + k * MV_COLS, b + k * W + j0, (size_t)jn * sizeof(float));
            for (int64_t j = jn; j < MV_COLS; j++) dst[k * MV_COLS + j] = 0.0f;
        }
    }
}

static void mm_make_plan(const tosac_kcall *c, mm_plan *g)
{
    memset(g, 0, sizeof *g);
    const tosac_ktensor *a = &c->in[0], *b = &c->in[1], *out = &c->out[0];
    g->N = a->rank > 0 ? a->shape[0] : 1;
    g->H = a->rank > 1 ? a->shape[1] : 1;
    g->C = a->rank > 2 ? a->shape[2] : 1;
    g->W = b->rank > 2 ? b->shape[2] : 1;
    if (a->f64)
        g->kind = MK_F64;
    else if (a->dtype == TOSAC_DTYPE_INT8)
        g->kind = MK_I8;
    else if (a->dtype == TOSAC_DTYPE_INT16)
        g->kind = MK_I16;
    else
        g->kind = out->dtype == TOSAC_DTYPE_FP16 ? MK_F16ACC : MK_F32;
    size_t o = 0, hc = (size_t)(g->H * g->C), cw = (size_t)(g->C * g->W), hw = (size_t)(g->H * g->W);
    switch (g->kind) {
    case MK_I8:
        g->chunk = tosac_gemm_i32_chunk(255 * 255);
        g->bprep = b->constant && c->in[3].constant;
        g->panel = g->bprep && c->isa >= TOSAC_KISA_AVX512 && g->C <= g->chunk;
        g->lda = g->panel ? g->C + (g->C & 1) : g->C;
        g->off_a = o, o += tosac_kalign64((size_t)(g->H * g->lda) * sizeof(int16_t));
        /* constant B: transposed once by prepare (all N batches), else per batch into scratch */
        if (!g->bprep) g->off_b = o, o += tosac_kalign64(cw * sizeof(int16_t));
        if (g->C > g->chunk || c->epi) g->off_c32 = o, o += tosac_kalign64(hw * sizeof(int32_t));
        if (g->C > g->chunk) g->off_c64 = o, o += tosac_kalign64(hw * sizeof(int64_t));
        break;
    case MK_I16: g->off_c64 = o, o += tosac_kalign64((size_t)g->W * sizeof(int64_t)); break;
    case MK_F32:
    case MK_F16ACC:
        if (a->dtype != TOSAC_DTYPE_FP32) {
            g->off_a = o, o += tosac_kalign64(hc * sizeof(float));
            g->off_b = o, o += tosac_kalign64(cw * sizeof(float));
        }
        if (g->kind == MK_F16ACC) g->off_c32 = o, o += tosac_kalign64((size_t)g->W * sizeof(float));
        break;
    case MK_F64: break; /* all operands are double already */
    }
    g->fmv = g->kind == MK_F32 && !a->f64 && a->dtype == TOSAC_DTYPE_FP32 && b->dtype == TOSAC_DTYPE_FP32 &&
             out->dtype == TOSAC_DTYPE_FP32 && b->constant && g->H <= MV_MAXH;
    g->total = o;
}

static size_t matmul_scratch(const tosac_kcall *c)
{
    if (c->n_in < 4 || c->n_out < 1) return 0;
    mm_plan g;
    mm_make_plan(c, &g);
    return g.total;
}

/* B[n] [C][W] minus B_zp, transposed into [W][C] int16 (the dot-product form of tosac_gemm_i16). */
static void mm_pack_b(const mm_plan *g, const int8_t *bn, int32_t bzp, int16_t *b16)
{
    int64_t C = g->C, W = g->W;
    for (int64_t ci = 0; ci < C; ci++)
        for (int64_t w = 0; w < W; w++) b16[w * C + ci] = (int16_t)(bn[ci * W + w] - bzp);
}

tosac_status tosac_kernel_matmul_prepare(const tosac_kcall *c, tosac_kprep *sizes, void *dst)
{
    if (c->isa == TOSAC_KISA_MVE)
        return tosac_conv_mve_prepare(c, sizes, dst) ? TOSAC_OK
                                                      : tosac_mve_portable_prepare(c, sizes, dst, tosac_kernel_matmul_prepare);
    sizes->const_size = 0;
    sizes->scratch_size = matmul_scratch(c);
    sizes->unread = 0;
    if (c->n_in < 4 || c->n_out < 1) return TOSAC_OK;
    mm_plan g;
    mm_make_plan(c, &g);
    if (g.fmv) {
        const int64_t per = mv_blocks(g.W) * g.C * MV_COLS;
        sizes->const_size = (size_t)(g.N * per) * sizeof(float);
        sizes->unread = 1u << 1; /* the run reads the blocks */
        if (!dst) return TOSAC_OK;
        for (int64_t n = 0; n < g.N; n++)
            mv_pack(g.C, g.W, (const float *)c->in[1].data + n * g.C * g.W, (float *)dst + n * per);
        return TOSAC_OK;
    }
    if (g.kind != MK_I8 || !g.bprep) return TOSAC_OK;
    size_t per = g.panel ? tosac_kalign64(tosac_gemm_i16_panel_bytes(g.W, g.C)) : 0;
    sizes->const_size = g.panel ? (size_t)g.N * per : (size_t)(g.N * g.C * g.W) * sizeof(int16_t);
    if (!dst) return TOSAC_OK;
    /* a bad zero point is the run's to report; the bytes are then unused */
    const tosac_ktensor *bz = &c->in[3];
    int32_t bzp = bz->constant && bz->nelem >= 1 ? (int32_t)tosac_kload_int(bz, 0) : 0;
    if (g.panel) {
        /* B[n] is [C][W]: column j = w, k = c */
        for (int64_t n = 0; n < g.N; n++)
            tosac_gemm_i16_pack_panel(g.W, g.C, (const int8_t *)c->in[1].data + n * g.C * g.W, 1, g.W, bzp,
                                      (int32_t *)(void *)((uint8_t *)dst + (size_t)n * per));
        return TOSAC_OK;
    }
    for (int64_t n = 0; n < g.N; n++)
        mm_pack_b(&g, (const int8_t *)c->in[1].data + n * g.C * g.W, bzp, (int16_t *)dst + n * g.C * g.W);
    return TOSAC_OK;
}

/* int8 MATMUL of one batch over blocks of MMI_COLS output columns (the panels' width) as a
   parallel-for task, and then its fused epilogue over rows: each output is its own exact sum,
   whatever the blocks. The converted A (and B when not prepared) and the int32 results are worker
   0's scratch, shared by the tasks that read it or write their own columns of it. */
#define MMI_COLS 32
typedef struct {
    tosac_kcall *c;
    const mm_plan *g;
    const int16_t *a16, *b16;
    const int32_t *panel;
    int32_t *out; /* [H][W] */
    int64_t off;  /* the batch's first output element */
    tosac_status st[TOSAC_KMAX_WORKERS];
} mmi_task;

static void mmi_cols(void *ctx, uint32_t worker, size_t b0, size_t b1)
{
    const mmi_task *t = ctx;
    const mm_plan *g = t->g;
    const int64_t j0 = (int64_t)b0 * MMI_COLS, j1 = (int64_t)b1 * MMI_COLS < g->W ? (int64_t)b1 * MMI_COLS : g->W;
    (void)worker;
    if (t->panel)
        tosac_gemm_i16_panel(g->H, j1 - j0, g->C, t->a16, g->lda,
                             t->panel + (size_t)(j0 / MMI_COLS) * tosac_gemm_i16_panel_bytes(MMI_COLS, g->C) / sizeof(int32_t),
                             t->out + j0, g->W);
    else
        tosac_gemm_i16(t->c->isa, g->H, j1 - j0, g->C, t->a16, g->C, t->b16 + j0 * g->C, g->C, t->out + j0, g->W);
}

static void mmi_epilogue(void *ctx, uint32_t worker, size_t h0, size_t h1)
{
    mmi_task *t = ctx;
    const int64_t W = t->g->W;
    tosac_status st = tosac_epilogue_store(t->c, t->out + (int64_t)h0 * W, t->off + (int64_t)h0 * W, (int64_t)(h1 - h0) * W);
    if (st != TOSAC_OK) t->st[worker] = st;
}

static tosac_status mm_int8(tosac_kcall *c, const mm_plan *g, int32_t azp, int32_t bzp)
{
    uint8_t *sc = (uint8_t *)c->scratch;
    int16_t *a16 = (int16_t *)(void *)(sc + g->off_a), *bs = (int16_t *)(void *)(sc + g->off_b);
    int64_t H = g->H, C = g->C, W = g->W;
    const int8_t *B = (const int8_t *)c->in[1].data;
    /* split over the workers when large (small products: one task, no pool round trip) */
    const bool split = tosac_kworkers(c) > 1 && H * W * C >= MMF_MIN_MACS;
    for (int64_t n = 0; n < g->N; n++) {
        if (C <= g->chunk) {
            mmi_task t;
            memset(&t, 0, sizeof t);
            t.c = c, t.g = g, t.off = n * H * W;
            /* with a fused epilogue the int32 results stay in scratch */
            t.out = c->epi ? (int32_t *)(void *)(sc + g->off_c32) : (int32_t *)c->out[0].data + n * H * W;
            if (g->panel && c->prep) {
                for (int64_t h = 0; h < H; h++) {
                    tosac_krow_i16(a16 + h * g->lda, &c->in[0], (n * H + h) * C, C, azp);
                    if (g->lda > C) a16[h * g->lda + C] = 0;
                }
                t.panel = (const int32_t *)(const void *)((const uint8_t *)c->prep +
                                                          (size_t)n * tosac_kalign64(tosac_gemm_i16_panel_bytes(W, C)));
            } else {
                tosac_krow_i16(a16, &c->in[0], n * H * C, H * C, azp);
                if (c->prep)
                    t.b16 = (const int16_t *)c->prep + n * C * W;
                else
                    mm_pack_b(g, B + n * C * W, bzp, bs), t.b16 = bs;
            }
            t.a16 = a16;
            const size_t blocks = (size_t)((W + MMI_COLS - 1) / MMI_COLS);
            if (split)
                tosac_kparallel_for(c, mmi_cols, &t, blocks);
            else
                mmi_cols(&t, 0, 0, blocks);
            if (c->epi) {
                if (split)
                    tosac_kparallel_for(c, mmi_epilogue, &t, (size_t)H);
                else
                    mmi_epilogue(&t, 0, 0, (size_t)H);
                for (uint32_t w = 0; w < TOSAC_KMAX_WORKERS; w++)
                    if (t.st[w] != TOSAC_OK) return t.st[w];
            }
            continue;
        }
        /* more terms than int32 sums hold (no panels then): chunks of k added in int64 */
        tosac_krow_i16(a16, &c->in[0], n * H * C, H * C, azp);
        const int16_t *b16 = bs;
        if (c->prep)
            b16 = (const int16_t *)c->prep + n * C * W;
        else
            mm_pack_b(g, B + n * C * W, bzp, bs);
        int32_t *c32 = (int32_t *)(void *)(sc + g->off_c32);
        int32_t *out = c->epi ? c32 : (int32_t *)c->out[0].data + n * H * W;
        int64_t *c64 = (int64_t *)(void *)(sc + g->off_c64);
        for (int64_t i = 0; i < H * W; i++) c64[i] = 0;
        for (int64_t k0 = 0; k0 < C; k0 += g->chunk) {
            int64_t kn = C - k0 < g->chunk ? C - k0 : g->chunk;
            tosac_gemm_i16(c->isa, H, W, kn, a16 + k0, C, b16 + k0, C, c32, W);
            for (int64_t i = 0; i < H * W; i++) c64[i] += c32[i];
        }
        for (int64_t i = 0; i < H * W; i++) {
            if (c64[i] < INT32_MIN || c64[i] > INT32_MAX)
                return tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE, "MATMUL accumulator overflows i32 (REQUIRE)");
            out[i] = (int32_t)c64[i];
        }
        if (c->epi) {
            tosac_status st = tosac_epilogue_store(c, out, n * H * W, H * W);
            if (st != TOSAC_OK) return st;
        }
    }
    return TOSAC_OK;
}

static tosac_status mm_int16(tosac_kcall *c, const mm_plan *g)
{
    int64_t *acc = (int64_t *)(void *)((uint8_t *)c->scratch + g->off_c64);
    int64_t H = g->H, C = g->C, W = g->W;
    const int16_t *A = (const int16_t *)c->in[0].data, *B = (const int16_t *)c->in[1].data;
    int64_t *out = (int64_t *)c->out[0].data;
    const int64_t lim = (int64_t)1 << 47;
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t h = 0; h < H; h++) {
            const int16_t *ar = A + (n * H + h) * C;
            for (int64_t w = 0; w < W; w++) acc[w] = 0;
            for (int64_t ci = 0; ci < C; ci++) {
                int64_t av = ar[ci];
                const int16_t *br = B + (n * C + ci) * W;
                for (int64_t w = 0; w < W; w++) acc[w] += av * br[w];
            }
            int64_t *o = out + (n * H + h) * W;
            for (int64_t w = 0; w < W; w++) {
                if (acc[w] < -lim || acc[w] >= lim)
                    return tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE, "MATMUL accumulator overflows i48 (REQUIRE)");
                o[w] = acc[w];
            }
        }
    return TOSAC_OK;
}

/* Block b of `blocks` column blocks of `cols` per batch: its batch n, first column j0 and width jn
   (the quotient in size_t: no 64-bit division on 32-bit targets). */
static inline void col_block(size_t b, int64_t blocks, int64_t W, int64_t cols, int64_t *n, int64_t *j0, int64_t *jn)
{
    *n = (int64_t)(b / (size_t)blocks);
    *j0 = (int64_t)(b % (size_t)blocks) * cols;
    *jn = W - *j0 < cols ? W - *j0 : cols;
}

/* fp32 MATMUL over blocks of MMF_COLS output columns of every batch as a parallel-for task
   (kernel.h): each output keeps its own sum over c in order, whatever the blocks (GEMM tiles of any
   width give the same bits). Calls under MMF_MIN_MACS multiply-adds run as one task. */
#define MMF_COLS 64
typedef struct {
    const float *A, *B;
    float *O;
    int64_t H, C, W, blocks; /* blocks per batch */
    uint32_t isa;
} mmf_task;

static void mmf_range(void *ctx, uint32_t worker, size_t b0, size_t b1)
{
    const mmf_task *t = ctx;
    (void)worker;
    for (size_t b = b0; b < b1; b++) {
        int64_t n, j0, jn;
        col_block(b, t->blocks, t->W, MMF_COLS, &n, &j0, &jn);
        tosac_gemm_f32(t->isa, t->H, jn, t->C, t->A + n * t->H * t->C, t->C, t->B + n * t->C * t->W + j0, t->W,
                       t->O + n * t->H * t->W + j0, t->W);
    }
}

/* Column blocks [b0, b1) of every batch (block b: batch b / blocks) of the fp32 matrix-vector as a
   parallel-for task. */
typedef struct {
    const float *A, *P;
    float *O;
    int64_t H, C, W, blocks;
    mv_fn fn;
} mv_task;

static void mv_range(void *ctx, uint32_t worker, size_t b0, size_t b1)
{
    const mv_task *t = ctx;
    (void)worker;
    for (size_t b = b0; b < b1; b++) {
        int64_t n, j0, jn;
        col_block(b, t->blocks, t->W, MV_COLS, &n, &j0, &jn);
        t->fn(t->H, t->C, t->A + n * t->H * t->C, t->P + (int64_t)b * t->C * MV_COLS, t->O + n * t->H * t->W + j0, t->W,
              jn);
    }
}

static void mm_fp(tosac_kcall *c, const mm_plan *g)
{
    uint8_t *sc = (uint8_t *)c->scratch;
    int64_t H = g->H, C = g->C, W = g->W;
    const tosac_ktensor *ta = &c->in[0], *tb = &c->in[1], *out = &c->out[0];
    if (g->kind == MK_F64) {
        for (int64_t n = 0; n < g->N; n++)
            tosac_gemm_f64(H, W, C, (const double *)ta->data + n * H * C, C, (const double *)tb->data + n * C * W, W,
                           (double *)out->data + n * H * W, W);
        return;
    }
    if (g->fmv && c->prep) {
        mv_task t = {(const float *)ta->data, (const float *)c->prep, (float *)out->data, H, C, W, mv_blocks(W),
                     mv_pick(c->isa)};
        const size_t n = (size_t)(g->N * t.blocks);
        if (H * W * C >= MMF_MIN_MACS)
            tosac_kparallel_for(c, mv_range, &t, n);
        else
            mv_range(&t, 0, 0, n);
        return;
    }
    if (g->kind == MK_F32 && ta->dtype == TOSAC_DTYPE_FP32 && out->dtype == TOSAC_DTYPE_FP32 && tosac_kworkers(c) > 1 &&
        H * W * C >= MMF_MIN_MACS) {
        mmf_task t = {(const float *)ta->data, (const float *)tb->data, (float *)out->data, H, C, W,
                      (W + MMF_COLS - 1) / MMF_COLS, c->isa};
        tosac_kparallel_for(c, mmf_range, &t, (size_t)(g->N * t.blocks));
        return;
    }
    for (int64_t n = 0; n < g->N; n++) {
        const float *a, *b;
        if (ta->dtype == TOSAC_DTYPE_FP32) {
            a = (const float *)ta->data + n * H * C;
            b = (const float *)tb->data + n * C * W;
        } else {
            float *ca = (float *)(void *)(sc + g->off_a), *cb = (float *)(void *)(sc + g->off_b);
            tosac_krow_f32(ca, ta, n * H * C, H * C);
            tosac_krow_f32(cb, tb, n * C * W, C * W);
            a = ca, b = cb;
        }
        if (g->kind == MK_F32) {
            if (out->dtype == TOSAC_DTYPE_FP32) {
                tosac_gemm_f32(c->isa, H, W, C, a, C, b, W, (float *)out->data + n * H * W, W);
            } else {
                /* fp32 accumulation with a narrower output is not a MATMUL row; stored rounded */
                for (int64_t h = 0; h < H; h++)
                    for (int64_t w = 0; w < W; w++) {
                        float s = 0.0f;
                        for (int64_t ci = 0; ci < C; ci++) {
                            float p = a[h * C + ci] * b[ci * W + w];
                            s = s + p;
                        }
                        tosac_kstore_fp(out, (n * H + h) * W + w, s);
                    }
            }
            continue;
        }
        /* fp16 accumulation, axpy over w so each output keeps the order over c */
        float *acc = (float *)(void *)(sc + g->off_c32);
        uint16_t *o = (uint16_t *)out->data + n * H * W;
        for (int64_t h = 0; h < H; h++) {
            for (int64_t w = 0; w < W; w++) acc[w] = 0.0f;
            for (int64_t ci = 0; ci < C; ci++) {
                tosac_axpy_f16acc(c->isa, acc, a[h * C + ci], b + ci * W, W);
            }
            for (int64_t w = 0; w < W; w++) o[h * W + w] = tosac_fp32_to_fp16(acc[w]);
        }
    }
}

tosac_status tosac_kernel_matmul(tosac_kcall *c)
{
    if (c->isa == TOSAC_KISA_MVE) {
        tosac_status st;
        return tosac_conv_mve_run(c, &st) ? st : tosac_mve_portable(c, tosac_kernel_matmul);
    }
    if (c->n_in < 4 || c->n_out < 1) return tosac_kfail(c, TOSAC_ERR_INTERNAL, "matmul: operand count");
    bool bad = false;
    int64_t azp = tosac_kzp(&c->in[2], &bad), bzp = tosac_kzp(&c->in[3], &bad);
    bool i8 = c->in[0].dtype == TOSAC_DTYPE_INT8;
    if (bad || (!i8 && (azp != 0 || bzp != 0)))
        return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "A_zp and B_zp must be 0 unless the inputs are i8");
    mm_plan g;
    mm_make_plan(c, &g);
    if (c->scratch_size < g.total) return tosac_kfail(c, TOSAC_ERR_INTERNAL, "matmul: scratch too small");
    if (g.kind == MK_I8 && g.bprep && !c->prep)
        return tosac_kfail(c, TOSAC_ERR_INTERNAL, "matmul: the prepared B is missing");
    if (g.N * g.H * g.W == 0) return TOSAC_OK;
    switch (g.kind) {
    case MK_I8: return mm_int8(c, &g, (int32_t)azp, (int32_t)bzp);
    case MK_I16: return mm_int16(c, &g);
    default: mm_fp(c, &g); return TOSAC_OK;
    }
}
