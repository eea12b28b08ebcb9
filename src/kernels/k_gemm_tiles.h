/*
 * GEMM and depthwise micro-kernels, included by k_gemm.c once per instruction-set variant (the
 * same C compiled for the baseline target and, on x86-64 with GCC or Clang, for AVX2 and for
 * AVX-512 with VNNI). Before including, define:
 *   KG_FN(name)  the variant's function name
 *   KG_TARGET    a function attribute selecting the target (or nothing)
 *   KG_I16_ROWS  rows of the largest integer tile (x 4 columns): 2, or 4 with 32 vector registers
 *   KG_F32_ROWS  rows of the fp32 register tile (8 columns): 4 (8 of the 16 SSE registers) or 6
 *                (AVX: 6 accumulators of 8 floats)
 *   KG_DW_PX, KG_DW_VB  pixels of the depthwise register tile and bytes of its vectors (one
 *                accumulator per pixel)
 * Not a public header.
 */

/*
 * GCC vectorises the integer dot products (multiply-add of int16 pairs over k) only at -O3, and at
 * -O3 it turns the floating-point tiles into in-order reductions over k (slow): each part gets its
 * level. Code generation only; the results are the same.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("O3")
#endif

/* One 2x4 tile of the integer dot-product GEMM: rows a0, a1 against columns b0..b3. */
KG_TARGET static void KG_FN(i16_tile_2x4)(int64_t K, const int16_t *restrict a0, const int16_t *restrict a1,
                                          const int16_t *restrict b0, const int16_t *restrict b1,
                                          const int16_t *restrict b2, const int16_t *restrict b3,
                                          int32_t *restrict c0, int32_t *restrict c1)
{
    int32_t s00 = 0, s01 = 0, s02 = 0, s03 = 0, s10 = 0, s11 = 0, s12 = 0, s13 = 0;
    for (int64_t k = 0; k < K; k++) {
        int32_t x0 = a0[k], x1 = a1[k];
        s00 += x0 * b0[k];
        s01 += x0 * b1[k];
        s02 += x0 * b2[k];
        s03 += x0 * b3[k];
        s10 += x1 * b0[k];
        s11 += x1 * b1[k];
        s12 += x1 * b2[k];
        s13 += x1 * b3[k];
    }
    c0[0] = s00, c0[1] = s01, c0[2] = s02, c0[3] = s03;
    c1[0] = s10, c1[1] = s11, c1[2] = s12, c1[3] = s13;
}

KG_TARGET static void KG_FN(i16_tile_1x4)(int64_t K, const int16_t *restrict a0, const int16_t *restrict b0,
                                          const int16_t *restrict b1, const int16_t *restrict b2,
                                          const int16_t *restrict b3, int32_t *restrict c0)
{
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (int64_t k = 0; k < K; k++) {
        int32_t x0 = a0[k];
        s0 += x0 * b0[k];
        s1 += x0 * b1[k];
        s2 += x0 * b2[k];
        s3 += x0 * b3[k];
    }
    c0[0] = s0, c0[1] = s1, c0[2] = s2, c0[3] = s3;
}

#if KG_I16_ROWS == 4
/* 4x4 tile (16 accumulators: for targets with 32 vector registers). */
KG_TARGET static void KG_FN(i16_tile_4x4)(int64_t K, const int16_t *restrict A, int64_t lda,
                                          const int16_t *restrict B, int64_t ldb, int32_t *restrict C, int64_t ldc)
{
    const int16_t *restrict a0 = A, *restrict a1 = A + lda, *restrict a2 = A + 2 * lda, *restrict a3 = A + 3 * lda;
    const int16_t *restrict b0 = B, *restrict b1 = B + ldb, *restrict b2 = B + 2 * ldb, *restrict b3 = B + 3 * ldb;
    int32_t s00 = 0, s01 = 0, s02 = 0, s03 = 0, s10 = 0, s11 = 0, s12 = 0, s13 = 0;
    int32_t s20 = 0, s21 = 0, s22 = 0, s23 = 0, s30 = 0, s31 = 0, s32 = 0, s33 = 0;
    for (int64_t k = 0; k < K; k++) {
        int32_t x0 = a0[k], x1 = a1[k], x2 = a2[k], x3 = a3[k];
        int32_t y0 = b0[k], y1 = b1[k], y2 = b2[k], y3 = b3[k];
        s00 += x0 * y0, s01 += x0 * y1, s02 += x0 * y2, s03 += x0 * y3;
        s10 += x1 * y0, s11 += x1 * y1, s12 += x1 * y2, s13 += x1 * y3;
        s20 += x2 * y0, s21 += x2 * y1, s22 += x2 * y2, s23 += x2 * y3;
        s30 += x3 * y0, s31 += x3 * y1, s32 += x3 * y2, s33 += x3 * y3;
    }
    int32_t *c0 = C, *c1 = C + ldc, *c2 = C + 2 * ldc, *c3 = C + 3 * ldc;
    c0[0] = s00, c0[1] = s01, c0[2] = s02, c0[3] = s03;
    c1[0] = s10, c1[1] = s11, c1[2] = s12, c1[3] = s13;
    c2[0] = s20, c2[1] = s21, c2[2] = s22, c2[3] = s23;
    c3[0] = s30, c3[1] = s31, c3[2] = s32, c3[3] = s33;
}
#endif

KG_TARGET static int32_t KG_FN(i16_dot)(int64_t K, const int16_t *restrict a, const int16_t *restrict b)
{
    int32_t s = 0;
    for (int64_t k = 0; k < K; k++) s += (int32_t)a[k] * b[k];
    return s;
}

KG_TARGET static void KG_FN(gemm_i16)(int64_t P, int64_t J, int64_t K, const int16_t *A, int64_t lda,
                                      const int16_t *B, int64_t ldb, int32_t *C, int64_t ldc)
{
    int64_t p = 0;
#if KG_I16_ROWS == 4
    for (; p + 4 <= P; p += 4) {
        const int16_t *a0 = A + p * lda;
        int32_t *c0 = C + p * ldc;
        int64_t j = 0;
        for (; j + 4 <= J; j += 4) KG_FN(i16_tile_4x4)(K, a0, lda, B + j * ldb, ldb, c0 + j, ldc);
        for (; j < J; j++)
            for (int64_t r = 0; r < 4; r++) c0[r * ldc + j] = KG_FN(i16_dot)(K, a0 + r * lda, B + j * ldb);
    }
#endif
    for (; p + 2 <= P; p += 2) {
        const int16_t *a0 = A + p * lda, *a1 = a0 + lda;
        int32_t *c0 = C + p * ldc, *c1 = c0 + ldc;
        int64_t j = 0;
        for (; j + 4 <= J; j += 4) {
            const int16_t *b0 = B + j * ldb;
            KG_FN(i16_tile_2x4)(K, a0, a1, b0, b0 + ldb, b0 + 2 * ldb, b0 + 3 * ldb, c0 + j, c1 + j);
        }
        for (; j < J; j++) {
            c0[j] = KG_FN(i16_dot)(K, a0, B + j * ldb);
            c1[j] = KG_FN(i16_dot)(K, a1, B + j * ldb);
        }
    }
    for (; p < P; p++) {
        const int16_t *a0 = A + p * lda;
        int32_t *c0 = C + p * ldc;
        int64_t j = 0;
        for (; j + 4 <= J; j += 4) {
            const int16_t *b0 = B + j * ldb;
            KG_FN(i16_tile_1x4)(K, a0, b0, b0 + ldb, b0 + 2 * ldb, b0 + 3 * ldb, c0 + j);
        }
        for (; j < J; j++) c0[j] = KG_FN(i16_dot)(K, a0, B + j * ldb);
    }
}

#include "kernels/k_dw_tiles.h"

/* vectors of KG_DW_VB bytes (tosac_gemm_bias_store_f32 below) */
typedef float KG_FN(vf) __attribute__((vector_size(KG_DW_VB)));
typedef int32_t KG_FN(vi) __attribute__((vector_size(KG_DW_VB)));
KG_TARGET static inline KG_FN(vf) KG_FN(load_vf)(const float *p)
{
    KG_FN(vf) v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* fp16 accumulation: acc[i] = r16(acc[i] + r16(x * w[i])) (axpy) or with x[i] (depthwise). */
KG_TARGET static void KG_FN(axpy_f16)(float *restrict acc, float x, const float *restrict w, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        float p = tosac_round_fp16(x * w[i]);
        acc[i] = tosac_round_fp16(acc[i] + p);
    }
}

KG_TARGET static void KG_FN(dw_f16)(float *restrict acc, const float *restrict x, const float *restrict w, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        float p = tosac_round_fp16(x[i] * w[i]);
        acc[i] = tosac_round_fp16(acc[i] + p);
    }
}


#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC optimize("O2")
#endif

/*
 * fp32 register tile: KG_F32_ROWS rows x 8 columns written as scalar statements, which the
 * straight-line vectoriser packs column-wise into vector registers (no reassociation: every
 * output is still summed over k in order, each product fused into the sum with one rounding).
 */
#define KG_ROW(r)                                                                                        \
    float s##r##0 = 0, s##r##1 = 0, s##r##2 = 0, s##r##3 = 0, s##r##4 = 0, s##r##5 = 0, s##r##6 = 0,     \
          s##r##7 = 0;
#define KG_UPD(r)                                                                                        \
    {                                                                                                    \
        float x = a##r[k];                                                                               \
        s##r##0 = fmaf(x, b[0], s##r##0), s##r##1 = fmaf(x, b[1], s##r##1);                             \
        s##r##2 = fmaf(x, b[2], s##r##2), s##r##3 = fmaf(x, b[3], s##r##3);                             \
        s##r##4 = fmaf(x, b[4], s##r##4), s##r##5 = fmaf(x, b[5], s##r##5);                             \
        s##r##6 = fmaf(x, b[6], s##r##6), s##r##7 = fmaf(x, b[7], s##r##7);                             \
    }
#define KG_OUT(r)                                                                                        \
    {                                                                                                    \
        float *c = C + r * ldc;                                                                          \
        c[0] = s##r##0, c[1] = s##r##1, c[2] = s##r##2, c[3] = s##r##3, c[4] = s##r##4, c[5] = s##r##5;  \
        c[6] = s##r##6, c[7] = s##r##7;                                                                  \
    }

KG_TARGET static void KG_FN(f32_tile)(int64_t K, const float *restrict A, int64_t lda, const float *restrict B,
                                      int64_t ldb, float *restrict C, int64_t ldc)
{
    KG_ROW(0) KG_ROW(1) KG_ROW(2) KG_ROW(3)
    const float *a0 = A, *a1 = A + lda, *a2 = A + 2 * lda, *a3 = A + 3 * lda;
#if KG_F32_ROWS == 6
    KG_ROW(4) KG_ROW(5)
    const float *a4 = A + 4 * lda, *a5 = A + 5 * lda;
#endif
    for (int64_t k = 0; k < K; k++) {
        const float *b = B + k * ldb;
        KG_UPD(0) KG_UPD(1) KG_UPD(2) KG_UPD(3)
#if KG_F32_ROWS == 6
        KG_UPD(4) KG_UPD(5)
#endif
    }
    KG_OUT(0) KG_OUT(1) KG_OUT(2) KG_OUT(3)
#if KG_F32_ROWS == 6
    KG_OUT(4) KG_OUT(5)
#endif
}
#undef KG_ROW
#undef KG_UPD
#undef KG_OUT

/* Rows and columns beyond the last full tile, one output row at a time in the axpy form (C row =
   fma(A[p][k], B row k, C row), k in order): the operations of the tile per output. */
KG_TARGET static void KG_FN(f32_edge)(int64_t P, int64_t J, int64_t K, const float *A, int64_t lda, const float *B,
                                      int64_t ldb, float *C, int64_t ldc)
{
    for (int64_t p = 0; p < P; p++) {
        float *restrict c = C + p * ldc;
        for (int64_t j = 0; j < J; j++) c[j] = 0;
        for (int64_t k = 0; k < K; k++) {
            const float a = A[p * lda + k];
            const float *restrict b = B + k * ldb;
            for (int64_t j = 0; j < J; j++) c[j] = fmaf(a, b[j], c[j]);
        }
    }
}

KG_TARGET static void KG_FN(gemm_f32)(int64_t P, int64_t J, int64_t K, const float *A, int64_t lda,
                                      const float *B, int64_t ldb, float *C, int64_t ldc)
{
    int64_t J8 = J - J % 8, PR = P - P % KG_F32_ROWS;
    for (int64_t p = 0; p < PR; p += KG_F32_ROWS)
        for (int64_t j = 0; j < J8; j += 8) KG_FN(f32_tile)(K, A + p * lda, lda, B + j, ldb, C + p * ldc + j, ldc);
    if (J8 < J) KG_FN(f32_edge)(PR, J - J8, K, A, lda, B + J8, ldb, C + J8, ldc);
    if (PR < P) KG_FN(f32_edge)(P - PR, J, K, A + PR * lda, lda, B, ldb, C + PR * ldc, ldc);
}


#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

/* tosac_gemm_bias_store_f32 in vectors of KG_DW_VB bytes (GCC does not vectorise the scalar loop
   at this file's levels), the leftover channels of each row one at a time. Each lane computes the
   expression of tosac_clamp_f32_row: v = x >= lo ? x : lo, r = v < hi ? v : hi, NaN x -> lo when
   ignore else x (the blends pick whole lanes by the comparison masks). */
KG_TARGET static inline KG_FN(vf) KG_FN(blend)(KG_FN(vi) m, KG_FN(vf) a, KG_FN(vf) b)
{
    return (KG_FN(vf))((m & (KG_FN(vi))a) | (~m & (KG_FN(vi))b));
}
KG_TARGET static void KG_FN(bias_store_f32)(float *restrict d, const float *restrict acc, int64_t count,
                                            int64_t oc_n, const tosac_gemm_epi *ep)
{
    enum { VL = KG_DW_VB / 4 };
    const float lo = ep->lo, hi = ep->hi;
    const KG_FN(vf) vlo = lo - (KG_FN(vf)){0}, vhi = hi - (KG_FN(vf)){0};
    for (int64_t i = 0; i < count; i += oc_n) {
        int64_t j = 0;
        for (; j + VL <= oc_n; j += VL) {
            const KG_FN(vf) bv = ep->bcast ? ep->bias[0] - (KG_FN(vf)){0} : KG_FN(load_vf)(ep->bias + j);
            const KG_FN(vf) x = bv + KG_FN(load_vf)(acc + i + j);
            KG_FN(vf) r = x;
            if (ep->clamp) {
                const KG_FN(vf) v = KG_FN(blend)(x >= vlo, x, vlo);
                r = KG_FN(blend)(v < vhi, v, vhi);
                r = KG_FN(blend)(x != x, ep->ignore ? vlo : x, r);
            }
            memcpy(d + i + j, &r, sizeof r);
        }
        for (; j < oc_n; j++) {
            const float x = ep->bias[ep->bcast ? 0 : j] + acc[i + j];
            float r = x;
            if (ep->clamp) {
                const float v = x >= lo ? x : lo;
                r = v < hi ? v : hi;
                r = x != x ? (ep->ignore ? lo : x) : r;
            }
            d[i + j] = r;
        }
    }
}
