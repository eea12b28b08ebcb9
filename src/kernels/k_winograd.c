/*
 * Winograd F(2x2, 3x3) for FP32 CONV2D (3x3 kernel, stride 1, dilation 1, any padding and batch).
 *
 * The output is cut into tiles of 2x2 pixels, each computed from the 4x4 input patch d under it
 * (zeros outside the image) as Y = A^T [U .* V] A with V = B^T d B per input channel and
 * U = G g G^T per (input, output) channel pair, summed over the input channels: 16 products per
 * tile and channel pair instead of 36. The sum over the input channels is 16 GEMMs, one per
 * position xi of the 4x4 transformed tile, M_xi [tiles][K] = V_xi [tiles][C] x U_xi [C][K], on the
 * FP32 GEMM of k_gemm.h (its panels at AVX-512, whose bits are tosac_gemm_f32's).
 *
 *   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]   G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1]
 *   A^T = [1 1 1 0; 0 1 -1 -1]
 *
 * Prepare computes U in double from the constant weights (one rounding to float per element) and
 * packs U_xi as the GEMM's weight matrices. A run works on blocks of whole tile rows (two output
 * rows each, so that every block is a contiguous range of output pixels for the epilogue's post
 * hook), sized so that the block's V [16][T][C] and M [16][T][K] stay in L2: input transform,
 * 16 GEMMs, output transform, then bias and the fused clamp exactly as the direct path stores
 * them (tosac_gemm_bias_store_f32). Tile rows that stick out of the image (odd height or width)
 * are computed and not stored.
 *
 * Bits: the transforms are additions and subtractions only (no multiplications, so nothing to
 * contract), in a fixed order, elementwise over channels (the vector width changes nothing); the
 * GEMM sums every output over the channels in order from +0 at every ISA level; a tile's values
 * do not depend on the block it is in. So the results are the same at every ISA level and thread
 * count. They differ from the direct path's within TOSA's DOT_PRODUCT bound (docs/RUNTIME.md).
 */
#include "kernels/k_winograd.h"

#include <string.h>

#include "kernels/k_epilogue.h"
#include "kernels/k_gemm.h"
#include "kernels/kutil.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* Budget of one block's V and M: half of L2 (1 MB per core on the machines this was tuned on),
   the rest holding the GEMM's current U_xi; when U is larger than 2 MB every block streams it from
   L3 or memory, so blocks twice as large (14x14x256: 120 against 116 GMAC/s, 7x7x512: 90 against
   85, one thread, direct MACs per second). */
#define WINO_BLOCK_BYTES 524288u
#define WINO_BIG_U 2097152u
/* Floats between the 16 planes of V and of M beyond their T x C (T x K) elements: a tile's
   transforms touch all 16 planes at once, which 16 KB or 32 KB apart would fall in one set of the
   8-way L1 (32x32x16 3x3 16: 47.9 -> 35.2 us, 16x16x32 3x3 32: 33.0 -> 25.9, best invokes) */
#define WINO_SKEW 16

typedef struct wino_plan {
    TOSAC_WINO_GEOM;
    int64_t rows;   /* tile rows per block at most */
    bool panel;     /* U_xi as tosac_gemm_f32_panel's panels (AVX-512, AVX2), else [C][K] */
    size_t ubytes;  /* bytes of one U_xi (64-byte multiple) */
    size_t off_v, off_m, off_y, off_z, total; /* scratch: V, M, one tile row's sums, a zero pixel */
} wino_plan;

/* Whether the call is one Winograd computes: FP32 throughout, 3x3, stride and dilation 1, constant
   finite weights, no RESCALE epilogue or prologue, and the shape rule (docs/RUNTIME.md). */
bool tosac_wino_geom_of(const tosac_kcall *c, tosac_wino_geom *g)
{
    if (c->op != TOSAC_OP_CONV2D || c->n_in < 5 || c->n_out < 1) return false;
    const tosac_ktensor *in = &c->in[0], *w = &c->in[1], *out = &c->out[0];
    if (in->rank != 4 || w->rank != 4 || out->rank != 4) return false;
    if (tosac_kdim(w, 1) != 3 || tosac_kdim(w, 2) != 3) return false;
    for (int i = 0; i < 2; i++)
        if (tosac_kattr_at(c, TOSAC_ATTR_CONV2D_stride, i, 1) != 1 || tosac_kattr_at(c, TOSAC_ATTR_CONV2D_dilation, i, 1) != 1)
            return false;
    g->N = tosac_kdim(in, 0), g->IH = tosac_kdim(in, 1), g->IW = tosac_kdim(in, 2), g->C = tosac_kdim(in, 3);
    g->OH = tosac_kdim(out, 1), g->OW = tosac_kdim(out, 2), g->K = tosac_kdim(out, 3);
    if (g->C < 1 || g->K < 1 || g->OH < 1 || g->OW < 1 || tosac_kdim(w, 3) != g->C || tosac_kdim(w, 0) != g->K)
        return false;
    g->pt = tosac_kattr_at(c, TOSAC_ATTR_CONV2D_pad, 0, 0);
    g->pl = tosac_kattr_at(c, TOSAC_ATTR_CONV2D_pad, 2, 0);
    g->TH = (g->OH + 1) / 2, g->TW = (g->OW + 1) / 2;
    return true;
}

static bool wino_takes(const tosac_kcall *c)
{
    tosac_wino_geom q;
    if (c->isa == TOSAC_KISA_MVE || (c->flags & TOSAC_KCALL_CONV_DIRECT) || !tosac_wino_geom_of(c, &q)) return false;
    const tosac_ktensor *in = &c->in[0], *w = &c->in[1], *b = &c->in[2], *out = &c->out[0];
    const tosac_ktensor *dst = c->epi ? c->epi->out : out;
    if (in->dtype != TOSAC_DTYPE_FP32 || w->dtype != TOSAC_DTYPE_FP32 || b->dtype != TOSAC_DTYPE_FP32 ||
        out->dtype != TOSAC_DTYPE_FP32 || dst->dtype != TOSAC_DTYPE_FP32 || in->f64 || w->f64 || b->f64 || out->f64 ||
        dst->f64)
        return false;
    if (c->epi && (c->epi->rescale || c->epi->pre)) return false;
    const int64_t acc = tosac_kattr_or(c, TOSAC_ATTR_CONV2D_acc_type, TOSAC_DTYPE_FP32);
    if (acc != TOSAC_DTYPE_FP32) return false;
    if (!w->constant || !w->data) return false;
    const int64_t C = q.C, K = q.K, OH = q.OH, OW = q.OW;
    /* the shape rule (ops_bench, one thread, direct MACs per second, best invoke, Winograd against
       direct): 56x56x64 3x3 64: 108 / 57; 28x28x128: 118 / 56; 14x14x256: 124 / 57; 7x7x512:
       71-92 / 57; 8x8x64: 109 / 60; 16x16x32: 91 / 57; 32x32x16 -> 16: 67 / 49; 55x55x16 -> 64:
       75 / 48-53; 27x27x32 -> 128: 89 / 51-55; 13x13x48 -> 192: 92 / 53-57. So every layer of
       16 or more input and output channels whose output the tiles cover well enough: 2x2 tiles
       compute 16 products per channel pair where the direct path computes 9 per pixel, which
       must save a third (7x7: 256 against 441; a 3x3 output, 64 against 81, would not) */
    if (C < 16 || K < 16) return false;
    if (2 * 9 * OH * OW < 3 * 16 * ((OH + 1) / 2) * ((OW + 1) / 2)) return false;
    /* a non-finite weight would spread over the whole tile (inf - inf): the direct path then */
    const float *wf = (const float *)w->data;
    for (int64_t i = 0; i < w->nelem; i++)
        if (wf[i] - wf[i] != 0.0f) return false;
    return true;
}

static void wino_make_plan(const tosac_kcall *c, wino_plan *g)
{
    memset(g, 0, sizeof *g);
    (void)tosac_wino_geom_of(c, &g->geo); /* (wino_takes took the call) */
    const size_t row_bytes = (size_t)(16 * g->TW * (g->C + g->K)) * sizeof(float);
    const int64_t ntr = g->N * g->TH;
    const bool big = (size_t)(16 * g->C * g->K) * sizeof(float) > WINO_BIG_U;
    int64_t rows = (int64_t)((big ? 2u : 1u) * WINO_BLOCK_BYTES / row_bytes);
    g->rows = rows < 1 ? 1 : rows > ntr ? ntr : rows;
    g->panel = c->isa == TOSAC_KISA_AVX512 || c->isa == TOSAC_KISA_AVX2;
    g->ubytes = tosac_kalign64(g->panel ? tosac_gemm_f32_panel_bytes(g->K, g->C) : (size_t)(g->C * g->K) * sizeof(float));
    const size_t T = (size_t)(g->rows * g->TW);
    size_t o = 0;
    g->off_v = o, o += tosac_kalign64(16u * (T * (size_t)g->C + WINO_SKEW) * sizeof(float));
    g->off_m = o, o += tosac_kalign64(16u * (T * (size_t)g->K + WINO_SKEW) * sizeof(float));
    g->off_y = o, o += tosac_kalign64((size_t)(4 * g->TW * g->K) * sizeof(float));
    g->off_z = o, o += tosac_kalign64((size_t)g->C * sizeof(float));
    g->total = o;
}

bool tosac_wino_prepare(const tosac_kcall *c, tosac_kprep *sizes, void *dst)
{
    if (!wino_takes(c)) return false;
    wino_plan g;
    wino_make_plan(c, &g);
    sizes->const_size = 16u * g.ubytes;
    sizes->scratch_size = g.total;
    sizes->unread = 0; /* the weights too: a tile with an output that is not finite is recomputed from them */
    if (!dst) return true;
    memset(dst, 0, sizes->const_size);
    const int64_t C = g.C, K = g.K;
    const float *w = (const float *)c->in[1].data; /* [K][3][3][C] */
    /* 16 output channels at a time, all input channels: every plane's stores for one input
       channel are then one run of 16 floats (a 64-byte line of a panel row), and the 16 x 9 weight
       rows read advance together (k outer would store 16 floats 256 bytes apart per pair) */
    enum { KB = 16 };
    for (int64_t k0 = 0; k0 < K; k0 += KB) {
        const int64_t nk = K - k0 < KB ? K - k0 : KB;
        for (int64_t ch = 0; ch < C; ch++) {
            float u16[16][KB];
            for (int64_t i = 0; i < nk; i++) {
                const float *wk = w + (k0 + i) * 9 * C + ch;
                double f[3][3], t[4][3];
                for (int y = 0; y < 3; y++)
                    for (int x = 0; x < 3; x++) f[y][x] = wk[(y * 3 + x) * C];
                for (int x = 0; x < 3; x++) { /* t = G f */
                    t[0][x] = f[0][x];
                    t[1][x] = ((f[0][x] + f[1][x]) + f[2][x]) * 0.5;
                    t[2][x] = ((f[0][x] - f[1][x]) + f[2][x]) * 0.5;
                    t[3][x] = f[2][x];
                }
                for (int y = 0; y < 4; y++) { /* u = t G^T, one rounding to float */
                    u16[y * 4 + 0][i] = (float)t[y][0];
                    u16[y * 4 + 1][i] = (float)(((t[y][0] + t[y][1]) + t[y][2]) * 0.5);
                    u16[y * 4 + 2][i] = (float)(((t[y][0] - t[y][1]) + t[y][2]) * 0.5);
                    u16[y * 4 + 3][i] = (float)t[y][2];
                }
            }
            /* k0 is a multiple of 16 and panels are 64 wide, so the block is contiguous in both layouts */
            const size_t at = g.panel ? tosac_gemm_f32_panel_at(K, C, ch, k0) : (size_t)(ch * K + k0);
            for (int xi = 0; xi < 16; xi++)
                memcpy((float *)(void *)((uint8_t *)dst + (size_t)xi * g.ubytes) + at, u16[xi], (size_t)nk * sizeof(float));
        }
    }
    return true;
}

/* ---- transforms -------------------------------------------------------------------------------- */

/* 16 floats as one vector (GCC / Clang vector extension): elementwise IEEE additions, the same bits
   as the scalar code whatever registers the target lowers it to. */
typedef float wino_v16 __attribute__((vector_size(64)));
typedef float wino_v16u __attribute__((vector_size(64), aligned(4), may_alias)); /* unaligned access */
#define WV_LD(p) (*(const wino_v16u *)(const void *)(p))
#define WV_ST(p, x) (*(wino_v16u *)(void *)(p) = (x))

/* V = B^T d B of one tile: d[i*4 + j] the C channels of patch pixel (i, j); v[xi * vs + ch]. */
#define WINO_IN(T, LD, ST, STEP, END)                                                                 \
    for (; ch + STEP <= END; ch += STEP) {                                                           \
        T d[4][4], t[4][4];                                                                          \
        for (int i = 0; i < 4; i++)                                                                  \
            for (int j = 0; j < 4; j++) d[i][j] = LD(p[i * 4 + j] + ch);                             \
        for (int j = 0; j < 4; j++) {                                                                \
            t[0][j] = d[0][j] - d[2][j];                                                             \
            t[1][j] = d[1][j] + d[2][j];                                                             \
            t[2][j] = d[2][j] - d[1][j];                                                             \
            t[3][j] = d[1][j] - d[3][j];                                                             \
        }                                                                                            \
        for (int i = 0; i < 4; i++) {                                                                \
            ST(v + (size_t)(i * 4 + 0) * vs + ch, t[i][0] - t[i][2]);                                \
            ST(v + (size_t)(i * 4 + 1) * vs + ch, t[i][1] + t[i][2]);                                \
            ST(v + (size_t)(i * 4 + 2) * vs + ch, t[i][2] - t[i][1]);                                \
            ST(v + (size_t)(i * 4 + 3) * vs + ch, t[i][1] - t[i][3]);                                \
        }                                                                                            \
    }
#define WS_LD(p) (*(p))
#define WS_ST(p, x) (*(p) = (x))

static inline __attribute__((always_inline)) void wino_in_body(const float *const *p, int64_t C, float *v, size_t vs)
{
    int64_t ch = 0;
    WINO_IN(wino_v16, WV_LD, WV_ST, 16, C)
    WINO_IN(float, WS_LD, WS_ST, 1, C)
}

/* Y = A^T M A of one tile for K channels: m[xi] the tile's sums at position xi; y[i * 2 + j] the
   output pixel (i, j). bad gathers o - o of every output o: 0 while all are finite, NaN after an
   infinity or a NaN. */
#define WINO_OUT(T, LD, ST, STEP, END, BAD)                                                           \
    for (; k + STEP <= END; k += STEP) {                                                             \
        T s[4][4], t[2][4], o[4];                                                                    \
        for (int xi = 0; xi < 16; xi++) s[xi / 4][xi % 4] = LD(m[xi] + k);                           \
        for (int j = 0; j < 4; j++) {                                                                \
            t[0][j] = (s[0][j] + s[1][j]) + s[2][j];                                                 \
            t[1][j] = (s[1][j] - s[2][j]) - s[3][j];                                                 \
        }                                                                                            \
        for (int i = 0; i < 2; i++) {                                                                \
            o[i * 2 + 0] = (t[i][0] + t[i][1]) + t[i][2];                                            \
            o[i * 2 + 1] = (t[i][1] - t[i][2]) - t[i][3];                                            \
        }                                                                                            \
        for (int i = 0; i < 4; i++) {                                                                \
            ST(y[i] + k, o[i]);                                                                      \
            BAD = BAD + (o[i] - o[i]);                                                               \
        }                                                                                            \
    }

/* The output transform; false when an output is not finite. */
static inline __attribute__((always_inline)) bool wino_out_body(const float *const *m, int64_t K, float *const *y)
{
    int64_t k = 0;
    wino_v16 vbad = {0};
    float sbad = 0.0f;
    WINO_OUT(wino_v16, WV_LD, WV_ST, 16, K, vbad)
    WINO_OUT(float, WS_LD, WS_ST, 1, K, sbad)
    for (int i = 0; i < 16; i++) sbad = sbad + vbad[i];
    return sbad == 0.0f;
}

static void wino_in_base(const float *const *p, int64_t C, float *v, size_t vs) { wino_in_body(p, C, v, vs); }
static bool wino_out_base(const float *const *m, int64_t K, float *const *y) { return wino_out_body(m, K, y); }
#ifdef TOSAC_KERNEL_X86
__attribute__((target("avx2"))) static void wino_in_avx2(const float *const *p, int64_t C, float *v, size_t vs)
{
    wino_in_body(p, C, v, vs);
}
__attribute__((target("avx2"))) static bool wino_out_avx2(const float *const *m, int64_t K, float *const *y)
{
    return wino_out_body(m, K, y);
}
__attribute__((target("avx512f"))) static void wino_in_avx512(const float *const *p, int64_t C, float *v, size_t vs)
{
    wino_in_body(p, C, v, vs);
}
__attribute__((target("avx512f"))) static bool wino_out_avx512(const float *const *m, int64_t K, float *const *y)
{
    return wino_out_body(m, K, y);
}
#endif

typedef void (*wino_in_fn)(const float *const *p, int64_t C, float *v, size_t vs);
typedef bool (*wino_out_fn)(const float *const *m, int64_t K, float *const *y);

/* ---- run --------------------------------------------------------------------------------------- */

typedef struct wino_task {
    tosac_kcall *c;
    const wino_plan *g;
    const uint8_t *u;
    wino_in_fn tin;
    wino_out_fn tout;
    tosac_gemm_epi ep;
    size_t ntr, nblk; /* tile rows, cut into nblk blocks */
    size_t ng;        /* tasks per block, each over gw output channels (a multiple of 64) */
    int64_t gw;
} wino_task;

/*
 * The sums of the tile at tile row r, column tx for output channels j0 .. j0 + jn - 1 in the
 * direct order (from +0 over ky, kx, input channel; padding taps skipped), into y as the output
 * transform writes them (y[i] at channel j0). For a tile with an output that is not finite: an infinity or a NaN in
 * the 4x4 input patch reaches all four outputs through the transform (inf - inf), also those whose
 * 3x3 window does not hold it, and a huge finite value there can overflow. The direct sums give
 * each output what its own window gives.
 */
static void wino_direct_tile(const wino_task *t, size_t r, int64_t tx, int64_t j0, int64_t jn, float *const *y)
{
    const wino_plan *g = t->g;
    const int64_t C = g->C, IH = g->IH, IW = g->IW;
    const int64_t n = (int64_t)(r / (size_t)g->TH), ty = (int64_t)(r % (size_t)g->TH);
    const float *x = (const float *)t->c->in[0].data, *w = (const float *)t->c->in[1].data; /* [K][3][3][C] */
    for (int i = 0; i < 4; i++) {
        const int64_t oy = 2 * ty + i / 2, ox = 2 * tx + i % 2;
        for (int64_t k = j0; k < j0 + jn; k++) {
            float s = 0.0f;
            for (int64_t ky = 0; ky < 3; ky++)
                for (int64_t kx = 0; kx < 3; kx++) {
                    const int64_t iy = oy - g->pt + ky, ix = ox - g->pl + kx;
                    if (iy < 0 || iy >= IH || ix < 0 || ix >= IW) continue;
                    const float *xp = x + ((n * IH + iy) * IW + ix) * C, *wp = w + ((k * 3 + ky) * 3 + kx) * C;
                    for (int64_t ch = 0; ch < C; ch++) s = s + xp[ch] * wp[ch];
                }
            y[i][k - j0] = s;
        }
    }
}

static void wino_blocks(void *ctx, uint32_t worker, size_t b0, size_t b1)
{
    const wino_task *t = ctx;
    tosac_kcall *c = t->c;
    const wino_plan *g = t->g;
    const int64_t C = g->C, K = g->K, TW = g->TW, OW = g->OW, OH = g->OH, IH = g->IH, IW = g->IW;
    uint8_t *sc = (uint8_t *)c->scratch + (size_t)worker * c->scratch_size;
    float *V = (float *)(void *)(sc + g->off_v), *M = (float *)(void *)(sc + g->off_m);
    float *Y = (float *)(void *)(sc + g->off_y), *zero = (float *)(void *)(sc + g->off_z);
    const float *x = (const float *)c->in[0].data;
    float *out = (float *)(c->epi ? c->epi->out : &c->out[0])->data;
    for (int64_t i = 0; i < C; i++) zero[i] = 0.0f;
    for (size_t task = b0; task < b1; task++) {
        /* group-major: the pool's contiguous share of the tasks gives each worker whole groups
           (the part of U it streams) over every block, rather than whole blocks over every group
           (the whole of U, and blocks of unequal rows) */
        const size_t grp = task / t->nblk, blk = task - grp * t->nblk; /* 32-bit clean */
        const int64_t j0 = (int64_t)grp * t->gw, jn = K - j0 < t->gw ? K - j0 : t->gw;
        size_t r0, rn;
        tosac_keven_part(t->ntr, t->nblk, blk, &r0, &rn);
        const int64_t T = (int64_t)rn * TW;
        const size_t vs = (size_t)(T * C) + WINO_SKEW, ms = (size_t)(T * K) + WINO_SKEW; /* plane strides */
        /* (1) V of every tile of the block */
        for (size_t r = r0; r < r0 + rn; r++) {
            const int64_t n = (int64_t)(r / (size_t)g->TH), ty = (int64_t)(r % (size_t)g->TH);
            const int64_t iy0 = 2 * ty - g->pt;
            for (int64_t tx = 0; tx < TW; tx++) {
                const int64_t ix0 = 2 * tx - g->pl;
                const float *p[16];
                for (int i = 0; i < 4; i++)
                    for (int j = 0; j < 4; j++) {
                        const int64_t iy = iy0 + i, ix = ix0 + j;
                        p[i * 4 + j] = iy >= 0 && iy < IH && ix >= 0 && ix < IW ? x + ((n * IH + iy) * IW + ix) * C : zero;
                    }
                const int64_t ti = (int64_t)(r - r0) * TW + tx;
                t->tin(p, C, V + ti * C, vs);
            }
        }
        /* (2) M_xi = V_xi x U_xi, output channels j0 .. j0 + jn - 1 (the panels' blocks before j0
           are whole, 64 columns: the group's starts j0 * C floats in) */
        for (int xi = 0; xi < 16; xi++) {
            const float *A = V + (size_t)xi * vs, *U = (const float *)(const void *)(t->u + (size_t)xi * g->ubytes);
            float *Mx = M + (size_t)xi * ms + j0;
            if (g->panel)
                tosac_gemm_f32_panel(c->isa, T, jn, C, A, C, U + j0 * C, Mx, K, NULL);
            else
                tosac_gemm_f32(c->isa, T, jn, C, A, C, U + j0, K, Mx, K);
        }
        /* (3) Y = A^T M A, then bias and clamp into the output, tile row by tile row */
        tosac_gemm_epi ep = t->ep;
        if (!ep.bcast) ep.bias += j0;
        for (size_t r = r0; r < r0 + rn; r++) {
            const int64_t n = (int64_t)(r / (size_t)g->TH), ty = (int64_t)(r % (size_t)g->TH);
            for (int64_t tx = 0; tx < TW; tx++) {
                const int64_t ti = (int64_t)(r - r0) * TW + tx;
                const float *m[16];
                for (int xi = 0; xi < 16; xi++) m[xi] = M + (size_t)xi * ms + ti * K + j0;
                float *y[4] = {Y + (2 * tx) * K + j0, Y + (2 * tx + 1) * K + j0, Y + (2 * TW + 2 * tx) * K + j0,
                               Y + (2 * TW + 2 * tx + 1) * K + j0};
                if (!t->tout(m, jn, y)) wino_direct_tile(t, r, tx, j0, jn, y);
            }
            const int64_t oy = 2 * ty, nr = OH - oy < 2 ? OH - oy : 2;
            for (int64_t i = 0; i < nr; i++) {
                float *d = out + ((n * OH + oy + i) * OW) * K + j0;
                const float *a = Y + i * 2 * TW * K + j0;
                if (jn == K)
                    tosac_gemm_bias_store_f32(c->isa, d, a, OW * K, K, &ep);
                else
                    for (int64_t q = 0; q < OW; q++) tosac_gemm_bias_store_f32(c->isa, d + q * K, a + q * K, jn, jn, &ep);
            }
        }
        if (t->ng > 1) continue; /* (the tail runs once every group has stored: tosac_epilogue_post_late) */
        /* the block's output pixels: from its first tile row's first to its last's end */
        const int64_t n0 = (int64_t)(r0 / (size_t)g->TH), y0 = 2 * (int64_t)(r0 % (size_t)g->TH);
        const size_t rl = r0 + rn - 1;
        const int64_t n1 = (int64_t)(rl / (size_t)g->TH), y1 = 2 * (int64_t)(rl % (size_t)g->TH) + 2;
        const int64_t p0 = (n0 * OH + y0) * OW, p1 = (n1 * OH + (y1 < OH ? y1 : OH)) * OW;
        tosac_epilogue_post(c, worker, p0, p1 - p0);
    }
}

tosac_status tosac_wino_run(tosac_kcall *c, const void *prep)
{
    wino_plan g;
    wino_make_plan(c, &g);
    if (c->scratch_size < g.total) return tosac_kfail(c, TOSAC_ERR_INTERNAL, "conv (Winograd): scratch too small");
    if (g.N * g.OH * g.OW * g.K == 0) return TOSAC_OK;
    const tosac_ktensor *bias = &c->in[2];
    wino_task t = {.c = c, .g = &g, .u = prep, .tin = wino_in_base, .tout = wino_out_base};
#ifdef TOSAC_KERNEL_X86
    if (c->isa == TOSAC_KISA_AVX512) t.tin = wino_in_avx512, t.tout = wino_out_avx512;
    if (c->isa == TOSAC_KISA_AVX2) t.tin = wino_in_avx2, t.tout = wino_out_avx2;
#endif
    t.ep = (tosac_gemm_epi){(const float *)bias->data, bias->nelem == 1, c->epi != NULL, c->epi && c->epi->fignore,
                            c->epi ? c->epi->flo : 0.0f, c->epi ? c->epi->fhi : 0.0f};
    t.ntr = (size_t)(g.N * g.TH);
    size_t nblk = (t.ntr + (size_t)g.rows - 1u) / (size_t)g.rows;
    t.ng = 1, t.gw = g.K;
    const size_t nw = tosac_kworkers(c);
    if (nw > 1 && g.N * g.OH * g.OW * 9 * g.C * g.K >= ((int64_t)1 << 18)) {
        const size_t nb64 = ((size_t)g.K + 63u) / 64u;
        if ((size_t)(16 * g.C * g.K) * sizeof(float) > WINO_BIG_U && nblk < 2u * nw && nb64 >= nw) {
            /* U beyond L2 (the late layers: 7x7x512 has 16 MB), which every block streams whole from
               L3 or memory: the workers split the output channels instead, each streaming its part
               of U once per block (7x7x512 3x3 at two threads: 1294 -> 637 us, best invoke) */
            t.gw = (int64_t)((nb64 + nw - 1u) / nw) * 64;
            t.ng = ((size_t)g.K + (size_t)t.gw - 1u) / (size_t)t.gw; /* (size_t: 32-bit divisions on microcontrollers) */
        } else {
            /* at least two blocks per worker where the tile rows allow, a multiple of the workers
               while the blocks are few */
            if (nblk < 2u * nw) nblk = 2u * nw;
            while (nblk < 8u * nw && nblk % nw) nblk++;
            if (nblk > t.ntr) nblk = t.ntr;
        }
    }
    /* (any split computes every output the same way: the same tiles, the same GEMM order) */
    t.nblk = nblk;
    tosac_kparallel_for(c, wino_blocks, &t, nblk * t.ng);
    if (t.ng > 1) tosac_epilogue_post_late(c, (size_t)(g.N * g.OH * g.OW), nblk * t.ng);
    return TOSAC_OK;
}
