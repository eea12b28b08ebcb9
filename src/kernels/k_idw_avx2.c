/*
 * The int8 depthwise rows of the AVX2 level (k_idw_avx2.h): int16 pairs of kernel rows,
 * vpmaddwd + vpaddd, the bias, its REQUIRE and the fused RESCALE applied while the sums are in
 * registers.
 *
 * Form: a tile is P output pixels (8, or 4 for a row's last few) x 8 channels, P int32
 * accumulators. Kernel rows go in pairs (2g, 2g + 1): per input column of the tile, the 8 bytes of
 * each row are interleaved and widened (vpunpcklbw, vpmovsxbw) to 8 int16 pairs (x[2g], x[2g+1]),
 * and one vpmaddwd with the packed weight pairs (w[2g][kx], w[2g+1][kx]) gives each int32 lane
 * both products' sum: 16 multiply-adds per instruction, where the portable tiles' vpmulld does 8.
 * The column is loaded and widened once for every pixel that reads it (pixel p, tap kx: column
 * p * sx + kx). An odd last row is widened to int32 lanes (vpmovsxbd) whose high halves meet a
 * zero weight. Products and pair sums are exact (|x| <= 128, |w| <= 255).
 *
 * Padding: a tap outside the input reads the zero-point row (x = zp), and the tile subtracts zp
 * times the sum of the channel's weights over every tap at the end, so each sum is that of
 * (x - zp) * w over the taps inside (a padding tap adds zp * w - zp * w). In int32 lanes wrapping
 * modulo 2^32 this is exact: the caller bounds the taps so that the true sum fits int32.
 *
 * The end: + bias wrapped to int32 with an overflow flagged as k_igemm_avx2.c's kia_row does
 * (the sum's sign differs from both operands'), then either int32 stores or the hi32 form of
 * the fused RESCALE (k_convert.c) on 8 lanes, clamped and narrowed to int8 / int16.
 */
#include <string.h>

#include "kernels/k_gemm_avx2.h"
#include "kernels/k_idw_avx2.h"

#ifdef TOSAC_KERNEL_X86
#include <immintrin.h>
#endif

#define IDW_P 8                          /* pixels of the widest tile */
#define IDW_NC ((IDW_P - 1) * 2 + 5)    /* input columns of the widest tile (stride 2, 5 columns) */

bool tosac_idw_avx2_fits(int64_t C, int64_t M, int64_t KH, int64_t KW, int64_t sx, int64_t dx)
{
#ifdef TOSAC_KERNEL_X86
    return M == 1 && C >= 8 && KH >= 1 && KH <= TOSAC_IDW_MAX_KH && (KW == 3 || KW == 5) && (sx == 1 || sx == 2) &&
           dx == 1;
#else
    (void)C, (void)M, (void)KH, (void)KW, (void)sx, (void)dx;
    return false;
#endif
}

size_t tosac_idw_avx2_scratch_bytes(int64_t KH, int64_t C)
{
    (void)KH;
    return (size_t)C;
}

size_t tosac_idw_avx2_pack_bytes(int64_t KH, int64_t KW, int64_t C)
{
    return ((size_t)((KH + 1) / 2 * KW) + 1u) * (size_t)C * sizeof(int32_t);
}

void tosac_idw_avx2_pack(int64_t KH, int64_t KW, int64_t C, const int16_t *w, void *dst)
{
    uint8_t *d = dst;
    const int64_t G = (KH + 1) / 2;
    for (int64_t g = 0; g < G; g++)
        for (int64_t kx = 0; kx < KW; kx++)
            for (int64_t c = 0; c < C; c++) {
                const int16_t lo = w[(2 * g * KW + kx) * C + c];
                const int16_t hi = 2 * g + 1 < KH ? w[((2 * g + 1) * KW + kx) * C + c] : 0;
                const uint32_t v = (uint32_t)(uint16_t)lo | (uint32_t)(uint16_t)hi << 16;
                memcpy(d + (size_t)((g * KW + kx) * C + c) * 4u, &v, 4);
            }
    for (int64_t c = 0; c < C; c++) {
        int32_t s = 0;
        for (int64_t t = 0; t < KH * KW; t++) s += w[t * C + c];
        memcpy(d + (size_t)((G * KW) * C + c) * 4u, &s, 4);
    }
}

#ifdef TOSAC_KERNEL_X86

#define IDW_INL __attribute__((target("avx2"), always_inline)) static inline
#define IDW_LD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
/* the weights read as memory operands at every column: held in registers, they left too few for
   the accumulators (GCC kept those on the stack) */
#define IDW_OPAQUE(p) __asm__("" : "+r"(p))
/* acc += v in that order: GCC otherwise reassociates the sums of a column into trees whose
   partial sums take registers (and then the stack) */
#define IDW_ACC(acc, v)                                                                                  \
    do {                                                                                                 \
        acc = _mm256_add_epi32(acc, v);                                                                  \
        __asm__("" : "+x"(acc));                                                                         \
    } while (0)

/* The constants of a call's ends. */
typedef struct idw_end {
    const int32_t *sumw, *bias;
    bool bcast;
    bool safe; /* |sum| + |bias| < 2^31 for every channel: the REQUIRE cannot fail */
    const tosac_gemm_rq *rq;
    __m256i zp, m, mo, r, s; /* m .. s: a uniform RESCALE's */
    __m256i ozp, lo, hi;
} idw_end;

/* 8 int16 pairs (a[i], b[i]) */
IDW_INL __m256i idw_pair(const int8_t *a, const int8_t *b)
{
    const __m128i u = _mm_loadl_epi64((const __m128i *)(const void *)a);
    const __m128i v = _mm_loadl_epi64((const __m128i *)(const void *)b);
    return _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(u, v));
}

/* 8 int32 values within the output range as int16 (the saturating pack is exact) */
IDW_INL __m128i idw_w16(__m256i y)
{
    return _mm_packs_epi32(_mm256_castsi256_si128(y), _mm256_extracti128_si256(y, 1));
}

/* The ends of the tile's np pixels (8 channels from j; pixel p's at o + p * C elements): one loop
   per kind of result, each over constant indices (an index known only at run time keeps every
   accumulator in memory). */
IDW_INL void idw_end_tile(const idw_end *e, const __m256i *a, int np, int64_t C, int64_t j, uint8_t *o,
                          __m256i *bad, const int P)
{
    const __m256i z = _mm256_mullo_epi32(IDW_LD(e->sumw + j), e->zp);
    const __m256i b = e->bcast ? _mm256_set1_epi32(e->bias[0]) : IDW_LD(e->bias + j);
    /* safe (no sum + bias can overflow): one addition of bias - zp * sum(w), exact modulo 2^32 */
    const __m256i bz = _mm256_sub_epi32(b, z);
    const bool safe = e->safe;
    /* sum + bias of pixel p, an overflow flagged in *bad */
#define IDW_V(p)                                                                                         \
    (safe ? _mm256_add_epi32(a[p], bz) : tosac_avx2_add_checked(_mm256_sub_epi32(a[p], z), b, bad))
    const tosac_gemm_rq *rq = e->rq;
    if (!rq) {
        int32_t *d = (int32_t *)(void *)o + j;
#pragma GCC unroll 8
        for (int p = 0; p < P; p++)
            if (p < np) _mm256_storeu_si256((__m256i *)(void *)(d + p * C), IDW_V(p));
        return;
    }
    __m256i m = e->m, mo = e->mo, r = e->r, s = e->s;
    if (!rq->uniform) {
        m = IDW_LD(rq->m32 + j), r = IDW_LD(rq->r32 + j), s = IDW_LD(rq->s32 + j);
        mo = _mm256_srli_epi64(m, 32);
    }
    if (rq->ob == 1) {
        int8_t *d = (int8_t *)o + j;
#pragma GCC unroll 8
        for (int p = 0; p < P; p++)
            if (p < np) {
                const __m128i w = idw_w16(tosac_avx2_rq_hi32(IDW_V(p), m, mo, r, s, e->ozp, e->lo, e->hi));
                _mm_storel_epi64((__m128i *)(void *)(d + p * C), _mm_packs_epi16(w, w));
            }
    } else {
        int16_t *d = (int16_t *)(void *)o + j;
#pragma GCC unroll 8
        for (int p = 0; p < P; p++)
            if (p < np)
                _mm_storeu_si128((__m128i *)(void *)(d + p * C),
                                 idw_w16(tosac_avx2_rq_hi32(IDW_V(p), m, mo, r, s, e->ozp, e->lo, e->hi)));
    }
#undef IDW_V
}

/* One tile: P pixels (np of them stored) x every 8-channel vector (the last at C - 8, overlapping
   the one before: both compute the same sums). cp[ky * IDW_NC + c]: input column c of the tile
   in kernel row ky (the zero-point row outside). KW, SX, P: constants where this is inlined. */
IDW_INL void idw_tile(const tosac_idw_geom *g, const int32_t *wp, const int8_t *const *cp, int np, uint8_t *o,
                      const idw_end *e, __m256i *bad, const int KW, const int SX, const int P)
{
    const int NC = (P - 1) * SX + KW;
    const int64_t C = g->C, KH = g->KH, G2 = KH / 2;
    for (int64_t j0 = 0; j0 < C; j0 += 8) {
        const int64_t j = j0 + 8 <= C ? j0 : C - 8;
        __m256i a[IDW_P];
#pragma GCC unroll 8
        for (int p = 0; p < P; p++) a[p] = _mm256_setzero_si256();
        for (int64_t gi = 0; gi < G2; gi++) {
            const int8_t *const *r0 = cp + 2 * gi * IDW_NC, *const *r1 = r0 + IDW_NC;
            const int32_t *wg = wp + gi * KW * C + j;
#pragma GCC unroll 24
            for (int c = 0; c < NC; c++) {
                const __m256i xv = idw_pair(r0[c] + j, r1[c] + j);
                IDW_OPAQUE(wg);
#pragma GCC unroll 5
                for (int kx = 0; kx < KW; kx++) {
                    const int d = c - kx;
                    if (d >= 0 && d % SX == 0 && d / SX < P)
                        IDW_ACC(a[d / SX], _mm256_madd_epi16(xv, IDW_LD(wg + kx * C)));
                }
            }
        }
        if (KH & 1) {
            /* the last row alone: int32 lanes (x, its sign) against pairs (w, 0) */
            const int8_t *const *r0 = cp + (KH - 1) * IDW_NC;
            const int32_t *wg = wp + G2 * KW * C + j;
#pragma GCC unroll 24
            for (int c = 0; c < NC; c++) {
                const __m256i xv = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(r0[c] + j)));
                IDW_OPAQUE(wg);
#pragma GCC unroll 5
                for (int kx = 0; kx < KW; kx++) {
                    const int d = c - kx;
                    if (d >= 0 && d % SX == 0 && d / SX < P)
                        IDW_ACC(a[d / SX], _mm256_madd_epi16(xv, IDW_LD(wg + kx * C)));
                }
            }
        }
        idw_end_tile(e, a, np, C, j, o, bad, P);
    }
}

/* The row over tiles of 8 pixels (4 for the last 4 or fewer; the pixels past n are computed from
   the columns there, or the zero-point row past the input, and not stored). */
IDW_INL uint32_t idw_row(const tosac_idw_geom *g, const int32_t *wp, uint8_t *out, const int KW, const int SX)
{
    const int64_t C = g->C, KH = g->KH, IW = g->IW;
    const tosac_gemm_rq *rq = g->rq;
    idw_end e;
    memset(&e, 0, sizeof e);
    e.sumw = wp + (KH + 1) / 2 * KW * C, e.bias = g->bias, e.bcast = g->bcast, e.rq = rq;
    e.zp = _mm256_set1_epi32(g->zp);
    /* |sum| <= KH * KW * 255 * 255 (|x - zp| <= 255, |w| <= 255) */
    int64_t bmax = 0;
    for (int64_t c = 0; c < (g->bcast ? 1 : C); c++) {
        const int64_t v = g->bias[c] < 0 ? -(int64_t)g->bias[c] : g->bias[c];
        bmax = v > bmax ? v : bmax;
    }
    e.safe = KH * KW * 255 * 255 + bmax <= INT32_MAX;
    if (rq) {
        e.ozp = _mm256_set1_epi32(rq->ozp), e.lo = _mm256_set1_epi32(rq->lo), e.hi = _mm256_set1_epi32(rq->hi);
        e.m = _mm256_set1_epi32(rq->m32[0]), e.r = _mm256_set1_epi32(rq->r32[0]), e.s = _mm256_set1_epi32(rq->s32[0]);
        e.mo = _mm256_srli_epi64(e.m, 32);
    }
    const size_t ob = rq ? rq->ob : 4u;
    int8_t *zrow = g->scratch; /* (the taps outside read zp) */
    memset(zrow, (int)(int8_t)g->zp, (size_t)C);
    const int8_t *rows[TOSAC_IDW_MAX_KH], *cp[TOSAC_IDW_MAX_KH * IDW_NC];
    for (int64_t ky = 0; ky < KH; ky++) {
        const int64_t iy = g->oy * g->sy - g->pt + ky * g->dy;
        rows[ky] = iy >= 0 && iy < g->IH ? g->x + iy * IW * C : NULL;
    }
    __m256i bad = _mm256_setzero_si256();
    for (int64_t px = 0; px < g->n; px += IDW_P) {
        const int np = g->n - px < IDW_P ? (int)(g->n - px) : IDW_P;
        const int P = np > IDW_P / 2 ? IDW_P : IDW_P / 2, NC = (P - 1) * SX + KW;
        const int64_t ix0 = (g->ox0 + px) * SX - g->pl;
        const bool inside = ix0 >= 0 && ix0 + NC <= IW;
        for (int64_t ky = 0; ky < KH; ky++) {
            const int8_t **t = cp + ky * IDW_NC, *r = rows[ky];
            if (r && inside)
                for (int c = 0; c < NC; c++) t[c] = r + (ix0 + c) * C;
            else
                for (int c = 0; c < NC; c++) t[c] = r && ix0 + c >= 0 && ix0 + c < IW ? r + (ix0 + c) * C : zrow;
        }
        uint8_t *o = out + (size_t)(px * C) * ob;
        if (P == IDW_P)
            idw_tile(g, wp, cp, np, o, &e, &bad, KW, SX, IDW_P);
        else
            idw_tile(g, wp, cp, np, o, &e, &bad, KW, SX, IDW_P / 2);
    }
    return (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(bad));
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("O3")
#endif
#define IDW_ROW(KW, SX)                                                                                  \
    __attribute__((target("avx2"))) static uint32_t idw_row_##KW##_##SX(const tosac_idw_geom *g,         \
                                                                        const int32_t *wp, uint8_t *out) \
    {                                                                                                    \
        return idw_row(g, wp, out, KW, SX);                                                              \
    }
IDW_ROW(3, 1)
IDW_ROW(3, 2)
IDW_ROW(5, 1)
IDW_ROW(5, 2)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
#endif

uint32_t tosac_idw_avx2_row(const tosac_idw_geom *g, const void *packed, void *out)
{
#ifdef TOSAC_KERNEL_X86
    const int32_t *wp = packed;
    if (g->KW == 3) return (g->sx == 1 ? idw_row_3_1 : idw_row_3_2)(g, wp, out);
    return (g->sx == 1 ? idw_row_5_1 : idw_row_5_2)(g, wp, out);
#else
    (void)g, (void)packed, (void)out;
    return 0;
#endif
}
