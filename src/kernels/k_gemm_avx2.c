/*
 * fp32 GEMM on prepared panels for AVX2 (tosac_gemm_f32_panel_seg at TOSAC_KISA_AVX2): the panels
 * of k_gemm.c as they are (blocks of 64 columns, [K][w] contiguous, the last block w = its columns
 * rounded up to a multiple of 8), the same segments, K blocks and end (tosac_gemm_epi), the same
 * bits: per output each product fused into the sum (vfmadd, one rounding, as the portable tiles'
 * fmaf), k ascending from +0, partial sums stored and reloaded exactly between K blocks.
 *
 * Register tile: R <= 6 rows x 16 columns, 12 ymm accumulators, the two ymm of B's row and the
 * broadcast A element. On Zen 3 the 12 FMAs of a k step take 6 cycles on the two FMA pipes (96
 * multiply-adds, the peak of 16 per cycle), with 2 + 6 loads, inside the 3 per cycle the load
 * unit takes. A tile walks the 16-column
 * sub-blocks of its panel block (B rows w floats apart) and ends with one of 8 columns when w is
 * 8 mod 16, so one tile family serves every block width. Kept in its own file: k_gemm.c already is
 * the long pole of the sanitizer build, and six instantiations here compile in parallel with it.
 */
#include "kernels/k_gemm_avx2.h"

#ifdef TOSAC_KERNEL_X86
#include <immintrin.h>
#include <math.h>
#include <stdbool.h>

/* the panel block width (the panels' format, KGP32_W in k_gemm.c) */
#define KGA_W 64
/* K per pass: a tile's 6 rows of A (6 KB) stay in L1 while it walks the block's four 16-column
   strips of B (16 KB each, from L2). 256 against k_gemm.c's 1024: on Zen 3 (32 KB L1d) a 49 x 512
   x 4608 GEMM ran at 37 GMAC/s against 27-31 with 1024, about even with it at K = 576 (each block
   boundary costs a tile a store and a reload of its 12 accumulators) */
#define KGA_KB 256
#define KGA_ROWS 6

/* The forms of the end (k_gemm.c's KG_END_BODY: the same choice and the same bits, in AVX2). */
enum { KGA_BIAS, KGA_MAX_LO, KGA_MINMAX, KGA_MAX_X, KGA_MAXMIN, KGA_BLEND_KEEP, KGA_BLEND_LO };
typedef struct kga_endc {
    __m256 lo, hi;
    int form;
} kga_endc;

__attribute__((target("avx2,fma"))) static kga_endc kga_end_form(const tosac_gemm_epi *ep)
{
    if (!ep || !ep->clamp) return (kga_endc){_mm256_setzero_ps(), _mm256_setzero_ps(), KGA_BIAS};
    kga_endc e = {_mm256_set1_ps(ep->lo), _mm256_set1_ps(ep->hi), ep->ignore ? KGA_BLEND_LO : KGA_BLEND_KEEP};
    const bool fast = ep->lo == ep->lo && ep->hi == ep->hi;
    if (fast && !ep->ignore && ep->hi != 0.0f)
        e.form = ep->hi == INFINITY ? KGA_MAX_LO : KGA_MINMAX;
    else if (fast && ep->ignore && ep->lo != 0.0f && ep->lo <= ep->hi)
        e.form = ep->hi == INFINITY ? KGA_MAX_X : KGA_MAXMIN;
    return e;
}

/* bias + acc, then the clamp: vmaxps / vminps return their second operand when either is NaN,
   blendv takes its second where the mask is set */
__attribute__((target("avx2,fma"), always_inline)) static inline __m256 kga_end(__m256 acc, __m256 b, const kga_endc *e)
{
    const __m256 x = _mm256_add_ps(b, acc), lo = e->lo, hi = e->hi;
    switch (e->form) {
    case KGA_BIAS: return x;
    case KGA_MAX_LO: return _mm256_max_ps(lo, x);
    case KGA_MINMAX: return _mm256_min_ps(hi, _mm256_max_ps(lo, x));
    case KGA_MAX_X: return _mm256_max_ps(x, lo);
    case KGA_MAXMIN: return _mm256_min_ps(_mm256_max_ps(x, lo), hi);
    default: {
        const __m256 v = _mm256_blendv_ps(lo, x, _mm256_cmp_ps(x, lo, _CMP_GE_OQ)); /* x >= lo ? x : lo */
        const __m256 r = _mm256_blendv_ps(hi, v, _mm256_cmp_ps(v, hi, _CMP_LT_OQ)); /* v < hi ? v : hi */
        return _mm256_blendv_ps(r, e->form == KGA_BLEND_LO ? lo : x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    }
    }
}

/* lanes of the 8 columns from c on that lie below nc */
__attribute__((target("avx2,fma"), always_inline)) static inline __m256i kga_mask(int64_t nc, int64_t c)
{
    const int64_t n = nc - c < 0 ? 0 : nc - c > 8 ? 8 : nc - c;
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

#define KGA_R1(M) M(0)
#define KGA_R2(M) KGA_R1(M) M(1)
#define KGA_R3(M) KGA_R2(M) M(2)
#define KGA_R4(M) KGA_R3(M) M(3)
#define KGA_R5(M) KGA_R4(M) M(4)
#define KGA_R6(M) KGA_R5(M) M(5)

#define KGA_LD(r, h)                                                                                     \
    (first ? _mm256_setzero_ps()                                                                         \
           : full##h ? _mm256_loadu_ps(Cq + r * ldc + 8 * h) : _mm256_maskload_ps(Cq + r * ldc + 8 * h, mk##h))
#define KGA_ACC2(r) __m256 c##r##0 = KGA_LD(r, 0), c##r##1 = KGA_LD(r, 1);
#define KGA_ACC1(r) __m256 c##r##0 = KGA_LD(r, 0);
#define KGA_ROW2(r)                                                                                      \
    {                                                                                                    \
        const __m256 a = _mm256_broadcast_ss(As + r * lda + kk);                                          \
        c##r##0 = _mm256_fmadd_ps(a, b0, c##r##0);                                                \
        c##r##1 = _mm256_fmadd_ps(a, b1, c##r##1);                                                \
    }
#define KGA_ROW1(r)                                                                                      \
    {                                                                                                    \
        const __m256 a = _mm256_broadcast_ss(As + r * lda + kk);                                          \
        c##r##0 = _mm256_fmadd_ps(a, b0, c##r##0);                                                \
    }
/* a masked store only where the block ends inside the 8 columns (vmaskmovps to memory is slow on
   Zen 3) */
#define KGA_ST(r, h)                                                                                     \
    {                                                                                                    \
        const __m256 v = bias ? kga_end(c##r##h, bv##h, &ec) : c##r##h;                                  \
        if (full##h)                                                                                     \
            _mm256_storeu_ps(Cq + r * ldc + 8 * h, v);                                                   \
        else                                                                                             \
            _mm256_maskstore_ps(Cq + r * ldc + 8 * h, mk##h, v);                                         \
    }
#define KGA_OUT2(r) KGA_ST(r, 0) KGA_ST(r, 1)
#define KGA_OUT1(r) KGA_ST(r, 0)
/* the sum over the segments of columns Cq .. Cq + 8 NH - 1 (B from Bq), one k per iteration (GCC
   spilled accumulators when the loop was unrolled by two or by four); the first k steps prefetch
   the tile's share of the next panel block (pf .. pfe, see the driver), one cache line per four
   steps (each step names its line: a test per k took dispatch slots that the 24 multiplies and
   adds of a step need, 60 x 112 x 1152: 33 -> 37 GMAC/s). One line per step, in a burst, left the
   tiles waiting on weights from memory: a chain of 24 7x7x512 -> 2048 layers (96 MB of weights)
   ran in 35.9 ms, spread 31.4 (a line per two steps 32.9), resnet50 FP32 3-6% faster; the same
   layer with its weights cached loses about 6% to the extra prefetches (45.7 -> 43 GMAC/s). */
#define KGA_STEP(R, NH, K)                                                                               \
    {                                                                                                    \
        const int64_t kk = (K);                                                                          \
        const __m256 b0 = _mm256_loadu_ps(Bs + kk * ldb);                                                \
        KGA_B##NH(kk)                                                                                    \
        KGA_R##R(KGA_ROW##NH)                                                                            \
    }
#define KGA_SUM(R, NH)                                                                                   \
    for (int64_t s = 0; s < nsg; s++) {                                                                  \
        const float *restrict As = A + sg[s].a, *restrict Bs = Bq + sg[s].b * ldb;                       \
        const int64_t n = sg[s].n, left = pf && pf < pfe ? (pfe - pf + 63) / 64 : 0;                     \
        const int64_t np = n < 4 * left ? n : 4 * left;                                                  \
        int64_t k = 0;                                                                                   \
        for (; k < np; k++) {                                                                            \
            KGA_STEP(R, NH, k)                                                                           \
            _mm_prefetch(pf + (k >> 2) * 64, _MM_HINT_T1);                                               \
        }                                                                                                \
        if (np) pf += (np + 3) / 4 * 64; /* (pf may be NULL: no offset to it) */                          \
        for (; k < n; k++) KGA_STEP(R, NH, k)                                                            \
    }
#define KGA_B1(k)
#define KGA_B2(k) const __m256 b1 = _mm256_loadu_ps(Bs + (k) * ldb + 8);

/*
 * nt tiles of R rows one below the other (A and C R rows further each), over the w columns of
 * one panel block, B rows ldb apart (nc of them stored: the rest are the panel's zero columns). C = (first ? +0 :
 * C) + the sum over the segments, then with bias (the block's w biases, the last K block) the end
 * ec. pf .. pfe: this call's share of the next block to prefetch.
 */
#define KGA_PARAMS                                                                                       \
    const tosac_gemm_seg *sg, int64_t nsg, const float *restrict A, int64_t lda, const float *restrict B,    \
        int64_t ldb, int64_t w, int64_t nc, float *restrict C, int64_t ldc, bool first, const float *bias,  \
        const kga_endc *ecp, const char *pf, const char *pfe, int64_t nt
#define KGA_TILE(R)                                                                                      \
    __attribute__((target("avx2,fma"))) static void kga_tile_##R(KGA_PARAMS)                                    \
    {                                                                                                    \
        const kga_endc ec = *ecp;                                                                        \
        for (int64_t it = 0; it < nt; it++, A += R * lda, C += R * ldc) {                                \
            int64_t j = 0;                                                                               \
            for (; j + 16 <= w; j += 16) {                                                               \
                float *restrict Cq = C + j;                                                              \
                const float *restrict Bq = B + j;                                                        \
                const bool full0 = nc - j >= 8, full1 = nc - j >= 16;                                    \
                const __m256i mk0 = kga_mask(nc, j), mk1 = kga_mask(nc, j + 8);                          \
                KGA_R##R(KGA_ACC2)                                                                       \
                KGA_SUM(R, 2)                                                                            \
                const __m256 bv0 = bias ? _mm256_loadu_ps(bias + j) : _mm256_setzero_ps();               \
                const __m256 bv1 = bias ? _mm256_loadu_ps(bias + j + 8) : _mm256_setzero_ps();           \
                KGA_R##R(KGA_OUT2)                                                                       \
            }                                                                                            \
            if (j < w) {                                                                                 \
                float *restrict Cq = C + j;                                                              \
                const float *restrict Bq = B + j;                                                        \
                const bool full0 = nc - j >= 8;                                                          \
                const __m256i mk0 = kga_mask(nc, j);                                                     \
                KGA_R##R(KGA_ACC1)                                                                       \
                KGA_SUM(R, 1)                                                                            \
                const __m256 bv0 = bias ? _mm256_loadu_ps(bias + j) : _mm256_setzero_ps();               \
                KGA_R##R(KGA_OUT1)                                                                       \
            }                                                                                            \
        }                                                                                                \
    }
KGA_TILE(1)
KGA_TILE(2)
KGA_TILE(3)
KGA_TILE(4)
KGA_TILE(5)
KGA_TILE(6)
typedef void (*kga_tile_fn)(const tosac_gemm_seg *, int64_t, const float *, int64_t, const float *, int64_t, int64_t,
                            int64_t, float *, int64_t, bool, const float *, const kga_endc *, const char *, const char *,
                            int64_t);
static const kga_tile_fn kga_tiles[KGA_ROWS + 1] = {NULL,        kga_tile_1, kga_tile_2, kga_tile_3,
                                                    kga_tile_4, kga_tile_5, kga_tile_6};

/* Width of the panel block that starts at column jb (a multiple of KGA_W). */
static int64_t kga_width(int64_t J, int64_t jb)
{
    int64_t n = J - jb;
    return n >= KGA_W ? KGA_W : (n + 7) & ~(int64_t)7;
}

/* tosac_gemm_f32_panel_seg's walk (k_gemm.c) with this file's tiles, on the panels (ldb 0) or on
   B as it is, rows ldb apart (J a multiple of 8: its blocks of 64 columns are read in place) */
__attribute__((target("avx2,fma"))) static void kga_run(int64_t P, int64_t J, int64_t K, const tosac_gemm_seg *sg,
                                                    int64_t nsg, const float *A, int64_t lda, const float *panel,
                                                    int64_t ldb, float *C, int64_t ldc, const tosac_gemm_epi *ep)
{
    if (P <= 0) return;
    const int64_t kstep = tosac_gemm_kstep(K, KGA_KB);
    const kga_endc ec = kga_end_form(ep);
    for (int64_t k0 = 0; k0 < K; k0 += kstep) {
        int64_t kb = K - k0 < kstep ? K - k0 : kstep;
        tosac_gemm_seg cs[TOSAC_GEMM_MAX_SEG];
        const int64_t ns = tosac_gemm_seg_clip(sg, nsg, k0, kb, cs);
        for (int64_t jb = 0; jb < J; jb += KGA_W) {
            const int64_t w = kga_width(J, jb);
            float bias[KGA_W]; /* the block's w biases, when this is the last K block */
            const float *bp = tosac_gemm_block_bias(k0 + kb == K ? ep : NULL, J, jb, w, bias);
            const float *Bp = ldb ? panel + k0 * ldb + jb : panel + jb * K + k0 * w;
            const int64_t nc = J - jb < KGA_W ? J - jb : KGA_W;
            /* the next block in this order (the next columns, else the first of the next K
               block), a share of it prefetched by each tile; the rows in nt tiles of r or r + 1 */
            const int64_t nt = (P + KGA_ROWS - 1) / KGA_ROWS, r = P / nt, r1 = P - r * nt;
            const char *nx = NULL;
            size_t nbytes = 0;
            if (ldb) {
                /* (B in place: the hardware prefetchers follow its rows) */
            } else if (jb + KGA_W < J) {
                nx = (const char *)(panel + (jb + KGA_W) * K + k0 * kga_width(J, jb + KGA_W));
                nbytes = (size_t)(kb * kga_width(J, jb + KGA_W)) * sizeof(float);
            } else if (k0 + kb < K) {
                const int64_t kn = K - k0 - kb < kstep ? K - k0 - kb : kstep;
                nx = (const char *)(panel + (k0 + kb) * kga_width(J, 0));
                nbytes = (size_t)(kn * kga_width(J, 0)) * sizeof(float);
            }
            const size_t share = (nbytes / (size_t)nt + 63u) & ~(size_t)63;
            for (int64_t t = 0, p = 0; t < nt;) {
                const int64_t rt = r + (t < r1), n = t < r1 ? r1 : nt - t;
                const size_t pa = (size_t)t * share < nbytes ? (size_t)t * share : nbytes;
                const size_t pe = pa + (size_t)n * share < nbytes ? pa + (size_t)n * share : nbytes;
                kga_tiles[rt](cs, ns, A + p * lda, lda, Bp, ldb ? ldb : w, w, nc, C + p * ldc + jb, ldc, k0 == 0, bp,
                              &ec, nx ? nx + pa : NULL, nx ? nx + pe : NULL, n);
                p += rt * n, t += n;
            }
        }
    }
}

void tosac_gemm_f32_panel_seg_avx2(int64_t P, int64_t J, int64_t K, const tosac_gemm_seg *sg, int64_t nsg,
                                   const float *A, int64_t lda, const float *panel, float *C, int64_t ldc,
                                   const tosac_gemm_epi *ep)
{
    kga_run(P, J, K, sg, nsg, A, lda, panel, 0, C, ldc, ep);
}

void tosac_gemm_f32_avx2(int64_t P, int64_t J, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
                         float *C, int64_t ldc)
{
    const tosac_gemm_seg one = {0, 0, K};
    kga_run(P, J, K, &one, 1, A, lda, B, ldb, C, ldc, NULL);
}
#endif
