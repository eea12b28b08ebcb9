/*
 * The integer convolution GEMM of the AVX2 level (k_gemm.h tosac_igemm_avx2): int16 patch rows
 * (x - zp) against pair-interleaved int16 weight panels, vpmaddwd + vpaddd, with the bias, its
 * REQUIRE and the fused RESCALE (+ clamp) applied to the sums while they are in registers.
 *
 * AVX2 has no vpdpbusd / vpdpwssd, and vpmaddubsw saturates its int16 pair sums, so the exact form
 * is vpmaddwd: each int32 lane receives a[2q] * b[2q] + a[2q+1] * b[2q+1] (both products and their
 * sum exact: |x - zp| <= 255 or an int16 value, |w - zp| <= 255, the pair sum within int32), then
 * added in int32. The caller bounds K (k_gemm.h tosac_gemm_i32_chunk) so that no partial sum
 * overflows: the sums are those of tosac_gemm_i16, whatever the order.
 *
 * Panels: blocks of 16 columns (two ymm of int32 lanes), each [ceil(K/2)][16] int32 pairs, one
 * 64-byte line per pair of k. Register tile: 5 rows x 16 columns, 10 accumulators, the two panel
 * vectors, a broadcast pair and a product (14 ymm): per pair of k 2 panel loads and 5 broadcasts
 * feed 10 vpmaddwd (160 multiply-adds). Six rows need all 16 registers and GCC then keeps one row's
 * accumulators on the stack (Zen 3, 28x28x128 3x3: 51 -> 77 GMAC/s with five).
 */
#include <string.h>

#include "kernels/k_gemm_avx2.h"

#ifdef TOSAC_KERNEL_X86
#include <immintrin.h>
#endif

#define KIA_W TOSAC_IGEMM_AVX2_W
#define KIA_R 5   /* rows of the widest register tile */

size_t tosac_igemm_avx2_panel_bytes(int64_t J, int64_t K) { return tosac_gemm_i16_pairs_bytes(J, K, KIA_W); }

void tosac_igemm_avx2_pack(int64_t J, int64_t K, const int8_t *B, int32_t zp, int32_t *panel)
{
    tosac_gemm_i16_pack_pairs(J, K, KIA_W, B, K, 1, zp, panel);
}

#ifdef TOSAC_KERNEL_X86

/* The end of a column block: its 16 columns' bias and RESCALE tables (zero beyond J, so that the
   padding columns neither overflow nor matter) and the constants, loaded once per block. */
typedef struct kia_end {
    __m256i b0, b1;          /* bias */
    __m256i m0, m1, mo0, mo1; /* multipliers (and their odd lanes moved down) */
    __m256i r0, r1, s0, s1;   /* rounding addend and shift of the hi32 form */
    __m256i zp, lo, hi;
    bool bias, rq, b8;
    int64_t nc; /* columns of the block inside J */
} kia_end;

#define KIA_LD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))

/* One tile row's 16 sums: + bias (wrapping; *bad gets the sign bit of an overflowed lane), then
   stored as int32, or rescaled, clamped and narrowed (exactly: the values are within [lo, hi],
   inside the output type) to ob-byte results. */
__attribute__((target("avx2"), always_inline)) static inline void kia_row(__m256i v0, __m256i v1, const kia_end *e,
                                                                         void *d, __m256i *bad)
{
    if (e->bias) {
        v0 = tosac_avx2_add_checked(v0, e->b0, bad), v1 = tosac_avx2_add_checked(v1, e->b1, bad);
    }
    if (!e->rq) {
        if (e->nc == KIA_W) {
            _mm256_storeu_si256((__m256i *)d, v0);
            _mm256_storeu_si256((__m256i *)d + 1, v1);
        } else {
            int32_t t[KIA_W];
            _mm256_storeu_si256((__m256i *)(void *)t, v0);
            _mm256_storeu_si256((__m256i *)(void *)(t + 8), v1);
            memcpy(d, t, (size_t)e->nc * sizeof(int32_t));
        }
        return;
    }
    /* packs work within 128-bit lanes: [v0 0-3, v1 0-3, v0 4-7, v1 4-7], reordered by qwords */
    const __m256i w = _mm256_permute4x64_epi64(
        _mm256_packs_epi32(tosac_avx2_rq_hi32(v0, e->m0, e->mo0, e->r0, e->s0, e->zp, e->lo, e->hi),
                           tosac_avx2_rq_hi32(v1, e->m1, e->mo1, e->r1, e->s1, e->zp, e->lo, e->hi)),
        0xD8);
    if (e->b8) {
        const __m128i b = _mm_packs_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
        if (e->nc == KIA_W)
            _mm_storeu_si128((__m128i *)d, b);
        else {
            int8_t t[KIA_W];
            _mm_storeu_si128((__m128i *)(void *)t, b);
            memcpy(d, t, (size_t)e->nc);
        }
    } else if (e->nc == KIA_W) {
        _mm256_storeu_si256((__m256i *)d, w);
    } else {
        int16_t t[KIA_W];
        _mm256_storeu_si256((__m256i *)(void *)t, w);
        memcpy(d, t, (size_t)e->nc * sizeof(int16_t));
    }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("O3")
#endif
/* R rows x 16 columns over Q pairs of k; rows of C es bytes an element, ldc elements apart. The
   accumulators are named variables (arrays of vectors stay in memory with GCC). */
#define KIA_1(M) M(0)
#define KIA_2(M) KIA_1(M) M(1)
#define KIA_3(M) KIA_2(M) M(2)
#define KIA_4(M) KIA_3(M) M(3)
#define KIA_5(M) KIA_4(M) M(4)
#define KIA_ZERO(r) __m256i c##r##0 = _mm256_setzero_si256(), c##r##1 = c##r##0;
#define KIA_DOT(r)                                                                                       \
    {                                                                                                    \
        int32_t pair;                                                                                    \
        memcpy(&pair, A + r * lda + 2 * q, sizeof pair);                                                 \
        const __m256i a = _mm256_set1_epi32(pair);                                                       \
        c##r##0 = _mm256_add_epi32(c##r##0, _mm256_madd_epi16(a, b0));                                   \
        c##r##1 = _mm256_add_epi32(c##r##1, _mm256_madd_epi16(a, b1));                                   \
    }
#define KIA_END(r) kia_row(c##r##0, c##r##1, e, C + (size_t)r * rowb, &bad);
#define KIA_TILE(R)                                                                                      \
    __attribute__((target("avx2"))) static __m256i kia_tile_##R(int64_t Q, const int16_t *A, int64_t lda,  \
                                                                const int32_t *Bp, uint8_t *C, size_t rowb, \
                                                                const kia_end *e, __m256i bad)           \
    {                                                                                                    \
        KIA_##R(KIA_ZERO)                                                                                \
        for (int64_t q = 0; q < Q; q++) {                                                                \
            const __m256i b0 = KIA_LD(Bp + q * KIA_W), b1 = KIA_LD(Bp + q * KIA_W + 8);                   \
            KIA_##R(KIA_DOT)                                                                             \
        }                                                                                                \
        KIA_##R(KIA_END)                                                                                 \
        return bad;                                                                                      \
    }
KIA_TILE(1)
KIA_TILE(2)
KIA_TILE(3)
KIA_TILE(4)
KIA_TILE(5)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
typedef __m256i (*kia_tile_fn)(int64_t, const int16_t *, int64_t, const int32_t *, uint8_t *, size_t, const kia_end *,
                               __m256i);

/* 16 int32 from t + j (zero beyond n), as two vectors */
__attribute__((target("avx2"), always_inline)) static inline void kia_ld16(const int32_t *t, int64_t j, int64_t n,
                                                                          bool bc, __m256i *v0, __m256i *v1)
{
    if (!bc && j + KIA_W <= n) { /* the common case, every block of a run: the ends cost per block */
        *v0 = KIA_LD(t + j), *v1 = KIA_LD(t + j + 8);
        return;
    }
    int32_t x[KIA_W];
    for (int64_t i = 0; i < KIA_W; i++) x[i] = bc ? t[0] : j + i < n ? t[j + i] : 0;
    *v0 = KIA_LD(x), *v1 = KIA_LD(x + 8);
}

/* The end of the column block at jb. */
__attribute__((target("avx2"))) static void kia_end_block(kia_end *e, int64_t jb, int64_t J, const int32_t *bias,
                                                          bool bcast, const tosac_gemm_rq *rq)
{
    /* field by field: a memset of the struct is a rep stos, whose start-up cost showed at a few
       per cent of the Winograd layers, whose 16 GEMMs per block each set up every column block */
    e->bias = bias != NULL, e->rq = rq != NULL, e->b8 = false;
    e->nc = J - jb < KIA_W ? J - jb : KIA_W;
    if (bias) kia_ld16(bias, jb, J, bcast, &e->b0, &e->b1);
    if (rq) {
        e->b8 = rq->ob == 1;
        e->zp = _mm256_set1_epi32(rq->ozp), e->lo = _mm256_set1_epi32(rq->lo), e->hi = _mm256_set1_epi32(rq->hi);
        kia_ld16(rq->m32, jb, J, rq->uniform, &e->m0, &e->m1);
        kia_ld16(rq->r32, jb, J, rq->uniform, &e->r0, &e->r1);
        kia_ld16(rq->s32, jb, J, rq->uniform, &e->s0, &e->s1);
        e->mo0 = _mm256_srli_epi64(e->m0, 32), e->mo1 = _mm256_srli_epi64(e->m1, 32);
    }
}

__attribute__((target("avx2"))) static uint32_t kia_end_rows(int64_t P, int64_t J, const int32_t *S, int64_t lds,
                                                             void *C, int64_t ldc, const int32_t *bias, bool bcast,
                                                             const tosac_gemm_rq *rq)
{
    const size_t es = rq ? rq->ob : sizeof(int32_t), rowb = (size_t)ldc * es;
    __m256i bad = _mm256_setzero_si256();
    kia_end e;
    for (int64_t jb = 0; jb < J; jb += KIA_W) {
        kia_end_block(&e, jb, J, bias, bcast, rq);
        uint8_t *Cb = (uint8_t *)C + (size_t)jb * es;
        for (int64_t p = 0; p < P; p++) {
            __m256i v0, v1;
            kia_ld16(S + p * lds, jb, J, false, &v0, &v1);
            kia_row(v0, v1, &e, Cb + (size_t)p * rowb, &bad);
        }
    }
    return (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(bad));
}

/* One half (8 columns) of a tile's output transform, read straight from its 16 planes (p, plane xi
   at p + xi * ms): o[i * 2 + j] = (A^T M A)[i][j] >> 2. The sums are 4 R modulo 2^32 and wrap
   alike (k_iwinograd.c), so the shift gives R exactly. Loads feed the additions directly and the
   four results are returned by name: staged through arrays, GCC kept the 32 plane vectors and the
   outputs on the stack (a store and a reload each). */
__attribute__((target("avx2"), always_inline)) static inline void kia_wino_out(const int32_t *p, size_t ms, __m256i *o0,
                                                                              __m256i *o1, __m256i *o2, __m256i *o3)
{
    /* plane 4i + j at q_j + i * r: four pointers and two strides for the sixteen addresses */
    const size_t r = 4 * ms, r3 = 3 * r;
    const int32_t *q0 = p, *q1 = p + ms, *q2 = q1 + ms, *q3 = q2 + ms;
#define KIA_WT(j)                                                                                        \
    const __m256i b##j = KIA_LD(q##j + r), c##j = KIA_LD(q##j + 2 * r);                                  \
    const __m256i u##j = _mm256_add_epi32(_mm256_add_epi32(KIA_LD(q##j), b##j), c##j);                   \
    const __m256i v##j = _mm256_sub_epi32(_mm256_sub_epi32(b##j, c##j), KIA_LD(q##j + r3));
    KIA_WT(0) KIA_WT(1) KIA_WT(2) KIA_WT(3)
#undef KIA_WT
    *o0 = _mm256_srai_epi32(_mm256_add_epi32(_mm256_add_epi32(u0, u1), u2), 2);
    *o1 = _mm256_srai_epi32(_mm256_sub_epi32(_mm256_sub_epi32(u1, u2), u3), 2);
    *o2 = _mm256_srai_epi32(_mm256_add_epi32(_mm256_add_epi32(v0, v1), v2), 2);
    *o3 = _mm256_srai_epi32(_mm256_sub_epi32(_mm256_sub_epi32(v1, v2), v3), 2);
}

__attribute__((target("avx2"))) static uint32_t kia_wino_end(int64_t TW, int64_t J, const int32_t *M, size_t ms,
                                                             int64_t ldm, void *row0, void *row1, int64_t OW,
                                                             int64_t ldc, const int32_t *bias, bool bcast,
                                                             const tosac_gemm_rq *rq)
{
    const size_t es = rq ? rq->ob : sizeof(int32_t), pixb = (size_t)ldc * es;
    __m256i bad = _mm256_setzero_si256();
    kia_end e;
    int32_t part[16 * KIA_W]; /* a partial block's planes, zero-padded to 16 columns */
    for (int64_t jb = 0; jb < J; jb += KIA_W) {
        kia_end_block(&e, jb, J, bias, bcast, rq);
        uint8_t *r0 = (uint8_t *)row0 + (size_t)jb * es, *r1 = row1 ? (uint8_t *)row1 + (size_t)jb * es : NULL;
        for (int64_t t = 0; t < TW; t++) {
            const int32_t *p = M + t * ldm + jb;
            size_t ps = ms;
            if (e.nc < KIA_W) {
                for (int xi = 0; xi < 16; xi++)
                    for (int64_t i = 0; i < KIA_W; i++) part[xi * KIA_W + i] = i < e.nc ? p[(size_t)xi * ms + i] : 0;
                p = part, ps = KIA_W;
            }
            __m256i a0, a1, a2, a3, b0, b1, b2, b3; /* output pixel (i, j) is a(2i + j) and b(2i + j) */
            /* each half's outputs fenced in registers as soon as they are made: else GCC sinks
               the sums into the four ends and keeps the planes' partial sums on the stack
               (squeezenet1_1 INT8: kia_wino_end 11.9 -> 10.8 M instructions, callgrind) */
            kia_wino_out(p, ps, &a0, &a1, &a2, &a3);
            __asm__("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3));
            kia_wino_out(p + 8, ps, &b0, &b1, &b2, &b3);
            __asm__("" : "+x"(b0), "+x"(b1), "+x"(b2), "+x"(b3));
            const size_t x0 = (size_t)(2 * t) * pixb, x1 = x0 + pixb;
            const bool two = 2 * t + 1 < OW;
            kia_row(a0, b0, &e, r0 + x0, &bad);
            if (two) kia_row(a1, b1, &e, r0 + x1, &bad);
            if (r1) {
                kia_row(a2, b2, &e, r1 + x0, &bad);
                if (two) kia_row(a3, b3, &e, r1 + x1, &bad);
            }
        }
    }
    return (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(bad));
}

__attribute__((target("avx2"))) static uint32_t kia_gemm(int64_t P, int64_t J, int64_t K, const int16_t *A,
                                                         int64_t lda, const int32_t *panel, void *C, int64_t ldc,
                                                         const int32_t *bias, bool bcast, const tosac_gemm_rq *rq)
{
    static const kia_tile_fn tiles[KIA_R + 1] = {NULL, kia_tile_1, kia_tile_2, kia_tile_3, kia_tile_4, kia_tile_5};
    const int64_t Q = (K + 1) / 2;
    const size_t es = rq ? rq->ob : sizeof(int32_t), rowb = (size_t)ldc * es;
    __m256i bad = _mm256_setzero_si256();
    kia_end e;
    for (int64_t jb = 0; jb < J; jb += KIA_W) {
        kia_end_block(&e, jb, J, bias, bcast, rq);
        const int32_t *Bp = panel + jb / KIA_W * Q * KIA_W;
        uint8_t *Cb = (uint8_t *)C + (size_t)jb * es;
        for (int64_t p = 0; p < P; p += KIA_R) {
            const int64_t r = P - p < KIA_R ? P - p : KIA_R;
            bad = tiles[r](Q, A + p * lda, lda, Bp, Cb + (size_t)p * rowb, rowb, &e, bad);
        }
    }
    return (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(bad));
}
#endif

uint32_t tosac_igemm_avx2(int64_t P, int64_t J, int64_t K, const int16_t *A, int64_t lda, const int32_t *panel,
                          void *C, int64_t ldc, const int32_t *bias, bool bcast, const tosac_gemm_rq *rq)
{
#ifdef TOSAC_KERNEL_X86
    return kia_gemm(P, J, K, A, lda, panel, C, ldc, bias, bcast, rq);
#else
    (void)P, (void)J, (void)K, (void)A, (void)lda, (void)panel, (void)C, (void)ldc, (void)bias, (void)bcast, (void)rq;
    return 0;
#endif
}

uint32_t tosac_igemm_avx2_wino_end(int64_t TW, int64_t J, const int32_t *M, size_t ms, int64_t ldm, void *row0,
                                   void *row1, int64_t OW, int64_t ldc, const int32_t *bias, bool bcast,
                                   const tosac_gemm_rq *rq)
{
#ifdef TOSAC_KERNEL_X86
    return kia_wino_end(TW, J, M, ms, ldm, row0, row1, OW, ldc, bias, bcast, rq);
#else
    (void)TW, (void)J, (void)M, (void)ms, (void)ldm, (void)row0, (void)row1, (void)OW, (void)ldc, (void)bias,
        (void)bcast, (void)rq;
    return 0;
#endif
}

uint32_t tosac_igemm_avx2_end(int64_t P, int64_t J, const int32_t *S, int64_t lds, void *C, int64_t ldc,
                              const int32_t *bias, bool bcast, const tosac_gemm_rq *rq)
{
#ifdef TOSAC_KERNEL_X86
    return kia_end_rows(P, J, S, lds, C, ldc, bias, bcast, rq);
#else
    (void)P, (void)J, (void)S, (void)lds, (void)C, (void)ldc, (void)bias, (void)bcast, (void)rq;
    return 0;
#endif
}
