/*
 * Row conversions and GEMM micro-kernels shared by the conv family and MATMUL (see k_gemm.h).
 *
 * The micro-kernels are register tiles written in plain C that compilers vectorise. The integer
 * kernel is a dot-product form (both operands contiguous along K: int16 pairs feed multiply-add
 * instructions); the floating-point kernels are an axpy form (B contiguous along J) that
 * vectorises across outputs, so each output is still summed in the specification's order k = 0,
 * 1, ..., each fp32 product fused into the sum with one rounding (fmaf; the fp64 and fp16 forms
 * round the product and the sum apart). The hot kernels (k_gemm_tiles.h) are compiled three times
 * on x86-64 with GCC or Clang, for the baseline target, AVX2 + FMA and AVX-512 with VNNI, and
 * picked at run time by CPU feature; every variant computes the same bits (integer sums are exact;
 * FP keeps the order and fuses exactly where the portable C calls fmaf).
 */
#include "kernels/k_gemm.h"
#include "kernels/k_gemm_avx2.h"

#include <math.h>
#include <string.h>

#include "core/fp.h"

#ifdef TOSAC_KERNEL_X86
#include <immintrin.h>
#endif

/* fp32 weight panels (tosac_gemm_f32_panel): columns per block, K per pass */
#define KGP32_W 64
#define KGP32_KB 1024

/* No contraction of a*b + c into a fused multiply-add beyond the explicit fmaf calls. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/*
 * GCC vectorises the row conversions and the integer dot products (multiply-add of int16 pairs
 * over k) only at -O3, and at -O3 it turns the floating-point tiles into in-order reductions over
 * k (slow): each part gets its level. Code generation only; the results are the same.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("O3")
#endif

void tosac_krow_i16(int16_t *dst, const tosac_ktensor *t, int64_t off, int64_t n, int32_t zp)
{
    if (t->dtype == TOSAC_DTYPE_INT16) {
        const int16_t *s = (const int16_t *)t->data + off;
        for (int64_t i = 0; i < n; i++) dst[i] = (int16_t)(s[i] - zp);
    } else {
        const int8_t *s = (const int8_t *)t->data + off;
        for (int64_t i = 0; i < n; i++) dst[i] = (int16_t)(s[i] - zp);
    }
}

void tosac_krow_f32(float *dst, const tosac_ktensor *t, int64_t off, int64_t n)
{
    switch (t->dtype) {
    case TOSAC_DTYPE_FP32: {
        const float *s = (const float *)t->data + off;
        for (int64_t i = 0; i < n; i++) dst[i] = s[i];
        break;
    }
    case TOSAC_DTYPE_FP16: {
        const uint16_t *s = (const uint16_t *)t->data + off;
        for (int64_t i = 0; i < n; i++) dst[i] = tosac_fp16_to_fp32(s[i]);
        break;
    }
    case TOSAC_DTYPE_BF16: {
        const uint16_t *s = (const uint16_t *)t->data + off;
        for (int64_t i = 0; i < n; i++) dst[i] = tosac_fp32_from_bits((uint32_t)s[i] << 16);
        break;
    }
    case TOSAC_DTYPE_FP8E4M3: {
        const uint8_t *s = (const uint8_t *)t->data + off;
        for (int64_t i = 0; i < n; i++) dst[i] = tosac_fp8e4m3_to_fp32(s[i]);
        break;
    }
    case TOSAC_DTYPE_FP8E5M2: {
        const uint8_t *s = (const uint8_t *)t->data + off;
        for (int64_t i = 0; i < n; i++) dst[i] = tosac_fp8e5m2_to_fp32(s[i]);
        break;
    }
    default:
        for (int64_t i = 0; i < n; i++) dst[i] = 0.0f;
        break;
    }
}

void tosac_krow_f64(double *dst, const tosac_ktensor *t, int64_t off, int64_t n)
{
    if (t->f64) {
        const double *s = (const double *)t->data + off;
        for (int64_t i = 0; i < n; i++) dst[i] = s[i];
        return;
    }
    if (t->dtype == TOSAC_DTYPE_FP32) {
        const float *s = (const float *)t->data + off;
        for (int64_t i = 0; i < n; i++) dst[i] = s[i];
        return;
    }
    /* 16- and 8-bit types: through float, in blocks */
    float tmp[64];
    for (int64_t i = 0; i < n; i += 64) {
        int64_t m = n - i < 64 ? n - i : 64;
        tosac_krow_f32(tmp, t, off + i, m);
        for (int64_t j = 0; j < m; j++) dst[i + j] = tmp[j];
    }
}

void tosac_kstore_row_f32(const tosac_ktensor *t, int64_t off, const float *v, int64_t n)
{
    if (!t->f64 && t->dtype == TOSAC_DTYPE_FP32) {
        float *d = (float *)t->data + off;
        for (int64_t i = 0; i < n; i++) d[i] = v[i];
        return;
    }
    /* widening to double is exact, so one rounding from double equals one rounding from float */
    double tmp[64];
    for (int64_t i = 0; i < n; i += 64) {
        int64_t m = n - i < 64 ? n - i : 64;
        for (int64_t j = 0; j < m; j++) tmp[j] = v[i + j];
        tosac_kstore_row_f64(t, off + i, tmp, m);
    }
}

void tosac_kstore_row_f64(const tosac_ktensor *t, int64_t off, const double *v, int64_t n)
{
    if (t->f64) {
        double *d = (double *)t->data + off;
        for (int64_t i = 0; i < n; i++) d[i] = v[i];
        return;
    }
    switch (t->dtype) {
    case TOSAC_DTYPE_FP32: {
        float *d = (float *)t->data + off;
        for (int64_t i = 0; i < n; i++) d[i] = tosac_fp64_to_fp32(v[i]);
        break;
    }
    case TOSAC_DTYPE_FP16: {
        uint16_t *d = (uint16_t *)t->data + off;
        for (int64_t i = 0; i < n; i++) d[i] = tosac_fp64_to_fp16(v[i]);
        break;
    }
    case TOSAC_DTYPE_BF16: {
        uint16_t *d = (uint16_t *)t->data + off;
        for (int64_t i = 0; i < n; i++) d[i] = tosac_fp64_to_bf16(v[i]);
        break;
    }
    case TOSAC_DTYPE_FP8E4M3: {
        uint8_t *d = (uint8_t *)t->data + off;
        for (int64_t i = 0; i < n; i++) d[i] = tosac_fp64_to_fp8e4m3(v[i]);
        break;
    }
    case TOSAC_DTYPE_FP8E5M2: {
        uint8_t *d = (uint8_t *)t->data + off;
        for (int64_t i = 0; i < n; i++) d[i] = tosac_fp64_to_fp8e5m2(v[i]);
        break;
    }
    default: break;
    }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC optimize("O2")
#endif

/* ---- floating-point axpy GEMMs --------------------------------------------------------------- */

/*
 * Generic edge loops (rows and columns beyond the last full register tile), with the same
 * per-output order of operations as the tiles: one output row at a time in the axpy form
 * (C row += A[p][k] * B row k, k in order), which reads B along its rows and vectorises across
 * columns. The fp64 tile is 4 rows x 4 doubles written as scalar statements that the
 * straight-line vectoriser packs into vector registers.
 */
#define TOSAC_EDGE(NAME, T)                                                                             \
    static void NAME(int64_t P, int64_t J, int64_t K, const T *A, int64_t lda, const T *B, int64_t ldb,  \
                     T *C, int64_t ldc)                                                                  \
    {                                                                                                    \
        for (int64_t p = 0; p < P; p++) {                                                                \
            T *restrict c = C + p * ldc;                                                                 \
            for (int64_t j = 0; j < J; j++) c[j] = 0;                                                    \
            for (int64_t k = 0; k < K; k++) {                                                            \
                const T a = A[p * lda + k];                                                              \
                const T *restrict b = B + k * ldb;                                                       \
                for (int64_t j = 0; j < J; j++) {                                                        \
                    T prod = a * b[j];                                                                   \
                    c[j] = c[j] + prod;                                                                  \
                }                                                                                        \
            }                                                                                            \
        }                                                                                                \
    }
/* the edge loops have no reduction to reorder: -O3 vectorises them across columns */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("O3")
#endif
TOSAC_EDGE(gemm_f64_edge, double)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

#define D4_ROW(r) double s##r##0 = 0, s##r##1 = 0, s##r##2 = 0, s##r##3 = 0;
#define D4_UPD(r, x) s##r##0 = s##r##0 + x * b0, s##r##1 = s##r##1 + x * b1, s##r##2 = s##r##2 + x * b2, s##r##3 = s##r##3 + x * b3;
#define D4_OUT(r)                                                                                       \
    {                                                                                                    \
        double *c = C + r * ldc;                                                                         \
        c[0] = s##r##0, c[1] = s##r##1, c[2] = s##r##2, c[3] = s##r##3;                                 \
    }

static void gemm_f64_tile(int64_t K, const double *restrict A, int64_t lda, const double *restrict B, int64_t ldb,
                          double *restrict C, int64_t ldc)
{
    D4_ROW(0) D4_ROW(1) D4_ROW(2) D4_ROW(3)
    const double *a0 = A, *a1 = A + lda, *a2 = A + 2 * lda, *a3 = A + 3 * lda;
    for (int64_t k = 0; k < K; k++) {
        const double *b = B + k * ldb;
        double b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3];
        double x0 = a0[k], x1 = a1[k], x2 = a2[k], x3 = a3[k];
        D4_UPD(0, x0) D4_UPD(1, x1) D4_UPD(2, x2) D4_UPD(3, x3)
    }
    D4_OUT(0) D4_OUT(1) D4_OUT(2) D4_OUT(3)
}

void tosac_gemm_f64(int64_t P, int64_t J, int64_t K, const double *A, int64_t lda, const double *B, int64_t ldb,
                    double *C, int64_t ldc)
{
    int64_t J4 = J - J % 4, P4 = P - P % 4;
    for (int64_t p = 0; p < P4; p += 4)
        for (int64_t j = 0; j < J4; j += 4) gemm_f64_tile(K, A + p * lda, lda, B + j, ldb, C + p * ldc + j, ldc);
    if (J4 < J) gemm_f64_edge(P4, J - J4, K, A, lda, B + J4, ldb, C + J4, ldc);
    if (P4 < P) gemm_f64_edge(P - P4, J, K, A + P4 * lda, lda, B, ldb, C + P4 * ldc, ldc);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

/* ---- instruction-set variants of the hot micro-kernels ---------------------------------------- */

#define KG_FN(name) kg_base_##name
#define KG_TARGET
#define KG_I16_ROWS 2
#define KG_F32_ROWS 4
#define KG_DW_PX 8
#define KG_DW_VB 16
#include "kernels/k_gemm_tiles.h"
#undef KG_FN
#undef KG_TARGET
#undef KG_I16_ROWS
#undef KG_F32_ROWS
#undef KG_DW_PX
#undef KG_DW_VB

#ifdef TOSAC_KERNEL_X86
#define KG_FN(name) kg_avx2_##name
#define KG_TARGET __attribute__((target("avx2,fma")))
#define KG_I16_ROWS 2
#define KG_F32_ROWS 6
#define KG_DW_PX 8
#define KG_DW_VB 32
#include "kernels/k_gemm_tiles.h"
#undef KG_FN
#undef KG_TARGET
#undef KG_I16_ROWS
#undef KG_F32_ROWS
#undef KG_DW_PX
#undef KG_DW_VB
#define KG_FN(name) kg_vnni_##name
#define KG_TARGET __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")))
#define KG_I16_ROWS 4
#define KG_F32_ROWS 6
#define KG_DW_PX 8
#define KG_DW_VB 64
#include "kernels/k_gemm_tiles.h"
#undef KG_FN
#undef KG_TARGET
#undef KG_I16_ROWS
#undef KG_F32_ROWS
#undef KG_DW_PX
#undef KG_DW_VB
#endif

#ifdef TOSAC_KERNEL_X86
#define KG_DISPATCH(name, args)                                                                         \
    switch (isa) {                                                                                      \
    case TOSAC_KISA_AVX512: kg_vnni_##name args; return;                                                \
    case TOSAC_KISA_AVX2: kg_avx2_##name args; return;                                                  \
    default: kg_base_##name args; return;                                                               \
    }
#else
#define KG_DISPATCH(name, args) (void)isa, kg_base_##name args;
#endif

size_t tosac_gemm_i16_pairs_bytes(int64_t J, int64_t K, int64_t W)
{
    /* (size_t: no 64-bit division on 32-bit targets) */
    return ((size_t)J + (size_t)W - 1) / (size_t)W * (size_t)((K + 1) / 2) * (size_t)W * sizeof(int32_t);
}

void tosac_gemm_i16_pack_pairs(int64_t J, int64_t K, int64_t W, const int8_t *B, int64_t sj, int64_t sk, int32_t zp,
                               int32_t *panel)
{
    int64_t Q = (K + 1) / 2;
    for (int64_t jb = 0, blk = 0; jb < J; jb += W, blk++)
        for (int64_t q = 0; q < Q; q++)
            for (int64_t jj = 0; jj < W; jj++) {
                int64_t j = jb + jj, k = 2 * q;
                uint32_t lo = j < J ? (uint16_t)(int16_t)(B[j * sj + k * sk] - zp) : 0u;
                uint32_t hi = j < J && k + 1 < K ? (uint16_t)(int16_t)(B[j * sj + (k + 1) * sk] - zp) : 0u;
                uint32_t v = lo | hi << 16;
                memcpy(&panel[(blk * Q + q) * W + jj], &v, sizeof v);
            }
}

size_t tosac_gemm_i16_panel_bytes(int64_t J, int64_t K) { return tosac_gemm_i16_pairs_bytes(J, K, 32); }

void tosac_gemm_i16_pack_panel(int64_t J, int64_t K, const int8_t *B, int64_t sj, int64_t sk, int32_t zp,
                               int32_t *panel)
{
    tosac_gemm_i16_pack_pairs(J, K, 32, B, sj, sk, zp, panel);
}

#ifdef TOSAC_KERNEL_X86
/*
 * R rows x 32 columns: per pair of k, two panel vectors and one broadcast pair per row feed
 * vpdpwssd (a[2q] * b[2q] + a[2q+1] * b[2q+1] added to each int32 lane).
 */
#define KGP_TILE(R)                                                                                      \
    __attribute__((target("avx512f,avx512bw,avx512vnni"))) static void kgp_tile_##R(                    \
        int64_t Q, const int16_t *A, int64_t lda, const int32_t *Bp, int32_t *C, int64_t ldc, int64_t nc) \
    {                                                                                                    \
        __m512i c0[R], c1[R];                                                                            \
        for (int r = 0; r < R; r++) c0[r] = c1[r] = _mm512_setzero_si512();                              \
        for (int64_t q = 0; q < Q; q++) {                                                                \
            const __m512i b0 = _mm512_loadu_si512(Bp + q * 32), b1 = _mm512_loadu_si512(Bp + q * 32 + 16); \
            for (int r = 0; r < R; r++) {                                                                \
                int32_t pair;                                                                            \
                memcpy(&pair, A + r * lda + 2 * q, sizeof pair);                                         \
                const __m512i a = _mm512_set1_epi32(pair);                                               \
                c0[r] = _mm512_dpwssd_epi32(c0[r], a, b0);                                               \
                c1[r] = _mm512_dpwssd_epi32(c1[r], a, b1);                                               \
            }                                                                                            \
        }                                                                                                \
        __mmask16 m0 = nc >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << nc) - 1u);                       \
        __mmask16 m1 = nc >= 32 ? (__mmask16)0xFFFF : nc <= 16 ? 0 : (__mmask16)((1u << (nc - 16)) - 1u); \
        for (int r = 0; r < R; r++) {                                                                    \
            _mm512_mask_storeu_epi32(C + r * ldc, m0, c0[r]);                                            \
            _mm512_mask_storeu_epi32(C + r * ldc + 16, m1, c1[r]);                                       \
        }                                                                                                \
    }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("O3")
#endif
KGP_TILE(1)
KGP_TILE(2)
KGP_TILE(3)
KGP_TILE(4)
KGP_TILE(5)
KGP_TILE(6)
KGP_TILE(7)
KGP_TILE(8)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
typedef void (*kgp_tile_fn)(int64_t, const int16_t *, int64_t, const int32_t *, int32_t *, int64_t, int64_t);
static const kgp_tile_fn kgp_tiles[9] = {NULL,        kgp_tile_1, kgp_tile_2, kgp_tile_3, kgp_tile_4,
                                         kgp_tile_5, kgp_tile_6, kgp_tile_7, kgp_tile_8};
#endif

void tosac_gemm_i16_panel(int64_t P, int64_t J, int64_t K, const int16_t *A, int64_t lda, const int32_t *panel,
                          int32_t *C, int64_t ldc)
{
#ifdef TOSAC_KERNEL_X86
    int64_t Q = (K + 1) / 2;
    for (int64_t jb = 0; jb < J; jb += 32) {
        const int32_t *Bp = panel + jb / 32 * Q * 32;
        int64_t nc = J - jb < 32 ? J - jb : 32;
        for (int64_t p = 0; p < P; p += 8) {
            int64_t r = P - p < 8 ? P - p : 8;
            kgp_tiles[r](Q, A + p * lda, lda, Bp, C + p * ldc + jb, ldc, nc);
        }
    }
#else
    (void)P, (void)J, (void)K, (void)A, (void)lda, (void)panel, (void)C, (void)ldc;
#endif
}

#ifdef TOSAC_KERNEL_X86
/* M(0) M(1) ... M(R-1): the rows of the register tiles below, as named variables */
#define KG_R1(M) M(0)
#define KG_R2(M) KG_R1(M) M(1)
#define KG_R3(M) KG_R2(M) M(2)
#define KG_R4(M) KG_R3(M) M(3)
#define KG_R5(M) KG_R4(M) M(4)
#define KG_R6(M) KG_R5(M) M(5)
#define KG_R7(M) KG_R6(M) M(6)
#define KG_R8(M) KG_R7(M) M(7)
#define KG_R9(M) KG_R8(M) M(8)
#define KG_R10(M) KG_R9(M) M(9)
#define KG_R11(M) KG_R10(M) M(10)
#define KG_R12(M) KG_R11(M) M(11)
#define KG_R13(M) KG_R12(M) M(12)
#define KG_R14(M) KG_R13(M) M(13)
#define KG_R15(M) KG_R14(M) M(14)
#define KG_R16(M) KG_R15(M) M(15)
#define KG_R17(M) KG_R16(M) M(16)
#define KG_R18(M) KG_R17(M) M(17)
#define KG_R19(M) KG_R18(M) M(18)
#define KG_R20(M) KG_R19(M) M(19)
#define KG_R21(M) KG_R20(M) M(20)
#define KG_R22(M) KG_R21(M) M(21)
#define KG_R23(M) KG_R22(M) M(22)
#define KG_R24(M) KG_R23(M) M(23)
#endif

/* ---- s8 x u8 panels (vpdpbusd) ------------------------------------------------------------------ */

/* Width of the s8 x u8 panel block that starts at column jb (a multiple of 32): 32, or 8 / 16 for
   a last block of so few columns (layers of 8 or 16 output channels compute no zero columns). */
static int64_t kgb_width(int64_t J, int64_t jb)
{
    int64_t n = J - jb;
    return n > 16 ? 32 : n > 8 ? 16 : 8;
}

/* Bytes of the panel blocks (the column corrections follow). */
static size_t kgb_blocks_bytes(int64_t J, int64_t K)
{
    int64_t full = J - J % 32;
    return (size_t)(full + (full < J ? kgb_width(J, full) : 0)) * (size_t)((K + 3) / 4) * 4u;
}

/* Entries of the column corrections and of each row table (whole vectors of 16). */
static int64_t kgb_j16(int64_t J) { return (J + 15) / 16 * 16; }

size_t tosac_gemm_u8_panel_bytes(int64_t J, int64_t K, int64_t run)
{
    const int64_t rows = run > 0 ? (int64_t)((size_t)(K + run - 1) / (size_t)run) : 0; /* (native division) */
    return kgb_blocks_bytes(J, K) + (size_t)((1 + rows) * kgb_j16(J)) * sizeof(int32_t);
}

/* int32 of a wrapped uint32 (the true sums fit int32; no implementation-defined conversion) */
static int32_t kgb_wrap(uint32_t v) { return (int32_t)(v & 0x7FFFFFFFu) + ((v >> 31) ? INT32_MIN : 0); }

void tosac_gemm_u8_pack_panel(int64_t J, int64_t K, int64_t run, const int8_t *w, int32_t zp, const int32_t *bias,
                              int64_t bstep, void *dst)
{
    int64_t Q = (K + 3) / 4;
    uint8_t *panel = dst;
    int32_t *corr = (int32_t *)(void *)(panel + kgb_blocks_bytes(J, K)), *rowc = corr + kgb_j16(J);
    memset(dst, 0, tosac_gemm_u8_panel_bytes(J, K, run));
    for (int64_t j = 0; j < J; j++) {
        uint32_t sum = 0, rsum = 0;
        const int64_t jb = j - j % 32, wb = kgb_width(J, jb);
        int64_t row = 0, kr = 0; /* (counted: no 64-bit division in the loop on 32-bit targets) */
        for (int64_t k = 0; k < K; k++) {
            int8_t v = w[j * K + k];
            panel[jb * Q * 4 + ((k / 4) * wb + (j - jb)) * 4 + k % 4] = (uint8_t)((uint8_t)v ^ 0x80u); /* v + 128 */
            sum += (uint32_t)(int32_t)v, rsum += (uint32_t)(int32_t)v;
            if (++kr == run || k + 1 == K) { /* the end of a row */
                rowc[row++ * kgb_j16(J) + j] = kgb_wrap(rsum * (uint32_t)zp);
                rsum = 0, kr = 0;
            }
        }
        /* zp * the sum of the column (minus the bias), in wrapping arithmetic (the true results fit
           int32) */
        corr[j] = kgb_wrap(sum * (uint32_t)zp - (bias ? (uint32_t)bias[j * bstep] : 0u));
    }
}

#ifdef TOSAC_KERNEL_X86
/*
 * Register tiles of R rows x Q zmm of columns (Q = 2: one 32-column block of the panels, R <= 12;
 * Q = 4: two blocks, R <= 6), accumulators in named variables: per 4 k, the panel vectors (16
 * columns x 4 weight bytes + 128, unsigned) and the 4 input bytes of each row (signed) feed
 * vpdpbusd, four u8 x s8 products added to each int32 lane without saturation. The input bytes
 * come as an embedded broadcast of a memory operand (m32{1to16}), one per instruction: a broadcast
 * register would take an FP pipe slot on Zen 4 (see the fp32 tiles). GCC writes the instruction as
 * inline assembly (it keeps the accumulators of _mm512_dpbusd_epi32 in memory, and would share one
 * broadcast). The accumulators start from -(128 x the row's input sum) - the column's correction
 * (wrapping int32 sums: the same bits as subtracting both at the end).
 */
typedef int32_t kgb_quad __attribute__((may_alias, aligned(1))); /* 4 input bytes read as one operand */
#if defined(__GNUC__) && !defined(__clang__)
#define KGB_DP(acc, b, p) __asm__("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(b), "m"(*(const kgb_quad *)(p)))
#else
#define KGB_DP(acc, b, p) acc = _mm512_dpbusd_epi32(acc, b, _mm512_set1_epi32(*(const kgb_quad *)(p)))
#endif
#define KGB_S(r) const __m512i s##r = _mm512_set1_epi32((int32_t)((uint32_t)rsum[r] << 7));
#define KGB_ACC1(r) KGB_S(r) __m512i c##r##0 = _mm512_sub_epi32(n0, s##r);
#define KGB_ACC2(r) KGB_S(r) __m512i c##r##0 = _mm512_sub_epi32(n0, s##r), c##r##1 = _mm512_sub_epi32(n1, s##r);
#define KGB_ACC4(r)                                                                                      \
    KGB_S(r)                                                                                             \
    __m512i c##r##0 = _mm512_sub_epi32(n0, s##r), c##r##1 = _mm512_sub_epi32(n1, s##r);                  \
    __m512i c##r##2 = _mm512_sub_epi32(n2, s##r), c##r##3 = _mm512_sub_epi32(n3, s##r);
#define KGB_DOT1(r) KGB_DP(c##r##0, b0, As + r * lda + 4 * i);
#define KGB_DOT2(r) KGB_DP(c##r##0, b0, As + r * lda + 4 * i); KGB_DP(c##r##1, b1, As + r * lda + 4 * i);
#define KGB_DOT4(r) KGB_DOT2(r) KGB_DP(c##r##2, b2, As + r * lda + 4 * i); KGB_DP(c##r##3, b3, As + r * lda + 4 * i);
#define KGB_OUTV(r, v)                                                                                   \
    if (rq)                                                                                              \
        kgb_rq_store(c##r##v, t##v, qc, m[v], (uint8_t *)C + (size_t)(r * ldc + 16 * v) * es);           \
    else                                                                                                 \
        _mm512_mask_storeu_epi32((int32_t *)C + r * ldc + 16 * v, m[v], c##r##v);
#define KGB_OUT1(r)                                                                                      \
    if (qc.pack)                                                                                         \
        kgb_rq_pack(c##r##0, c##r##0, c##r##0, c##r##0, t0, t0, t0, t0, qc, m64, (int8_t *)C + r * ldc);  \
    else {                                                                                               \
        KGB_OUTV(r, 0)                                                                                   \
    }
#define KGB_OUT2(r)                                                                                      \
    if (qc.pack)                                                                                         \
        kgb_rq_pack(c##r##0, c##r##1, c##r##0, c##r##1, t0, t1, t0, t1, qc, m64, (int8_t *)C + r * ldc);  \
    else {                                                                                               \
        KGB_OUTV(r, 0) KGB_OUTV(r, 1)                                                                    \
    }
#define KGB_OUT4(r)                                                                                      \
    if (qc.pack)                                                                                         \
        kgb_rq_pack(c##r##0, c##r##1, c##r##2, c##r##3, t0, t1, t2, t3, qc, m64, (int8_t *)C + r * ldc);  \
    else {                                                                                               \
        KGB_OUTV(r, 0) KGB_OUTV(r, 1) KGB_OUTV(r, 2) KGB_OUTV(r, 3)                                      \
    }
#define KGB_B1 const __m512i b0 = _mm512_loadu_si512(Bp + q * 64);
#define KGB_B2 const __m512i b0 = _mm512_loadu_si512(Bp + q * 128), b1 = _mm512_loadu_si512(Bp + q * 128 + 64);
#define KGB_B4 KGB_B2 const __m512i b2 = _mm512_loadu_si512(Bq + q * 128), b3 = _mm512_loadu_si512(Bq + q * 128 + 64);
#define KGB_NV(v) const __m512i n##v = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_maskz_loadu_epi32(m[v], corr + 16 * v));
#define KGB_N1 KGB_NV(0)
#define KGB_N2 KGB_NV(0) KGB_NV(1)
#define KGB_N4 KGB_NV(0) KGB_NV(1) KGB_NV(2) KGB_NV(3)
/* the byte mask of a row's columns (kgb_rq_pack) */
#define KGB_M1 const __mmask64 m64 = (__mmask64)m[0];
#define KGB_M2 const __mmask64 m64 = (__mmask64)m[0] | (__mmask64)m[1] << 16;
#define KGB_M4 const __mmask64 m64 = (__mmask64)m[0] | (__mmask64)m[1] << 16 | (__mmask64)m[2] << 32 | (__mmask64)m[3] << 48;
#define KGB_T1 const kgb_rqt t0 = kgb_rq_tab(rq, 0, m[0]);
#define KGB_T2 KGB_T1 const kgb_rqt t1 = kgb_rq_tab(rq, 16, m[1]);
#define KGB_T4 KGB_T2 const kgb_rqt t2 = kgb_rq_tab(rq, 32, m[2]), t3 = kgb_rq_tab(rq, 48, m[3]);
/* The fused RESCALE (tosac_gemm_rq) of 16 columns: the tables of a tile's columns and the
   constants, loaded once (into locals: the byte stores may alias *rq), then per row what
   kr_avx512_hi32 (k_convert.c) computes: H of the odd lanes is the high half of their signed
   products, of the even lanes that of the products of the even halves, moved down by a shuffle. */
typedef struct kgb_rqt {
    __m512i m, mo, r, s;
} kgb_rqt;
typedef struct kgb_rqc {
    __m512i zp, lo, hi;
    bool b8, pack;
} kgb_rqc;
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"), always_inline)) static inline kgb_rqt
kgb_rq_tab(const tosac_gemm_rq *rq, int64_t j, __mmask16 k)
{
    kgb_rqt t = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()};
    if (rq) {
        t.m = _mm512_maskz_loadu_epi32(k, rq->m32 + j), t.mo = _mm512_srli_epi64(t.m, 32);
        t.r = _mm512_maskz_loadu_epi32(k, rq->r32 + j), t.s = _mm512_maskz_loadu_epi32(k, rq->s32 + j);
    }
    return t;
}
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"), always_inline)) static inline kgb_rqc
kgb_rq_const(const tosac_gemm_rq *rq)
{
    kgb_rqc q = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(), true, false};
    if (rq) {
        q.b8 = rq->ob == 1;
        /* int8 results whose zero point and clamp are within int8: packed (kgb_rq_pack) */
        q.pack = q.b8 && rq->ozp >= INT8_MIN && rq->ozp <= INT8_MAX && rq->lo >= INT8_MIN && rq->hi <= INT8_MAX &&
                 rq->lo <= rq->hi;
        if (q.pack)
            q.zp = _mm512_set1_epi16((int16_t)rq->ozp), q.lo = _mm512_set1_epi8((char)rq->lo),
            q.hi = _mm512_set1_epi8((char)rq->hi);
        else
            q.zp = _mm512_set1_epi32(rq->ozp), q.lo = _mm512_set1_epi32(rq->lo), q.hi = _mm512_set1_epi32(rq->hi);
    }
    return q;
}
/* kgb_rq_store's scaled value ((H + r) >> s) of 16 lanes, before the zero point */
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"), always_inline)) static inline __m512i
kgb_rq_scale(__m512i v, kgb_rqt t)
{
    const __m512i odd = _mm512_mul_epi32(_mm512_srli_epi64(v, 32), t.mo);
    const __m512i h = _mm512_mask_shuffle_epi32(odd, 0x5555, _mm512_mul_epi32(v, t.m), _MM_PERM_DDBB);
    return _mm512_srav_epi32(_mm512_add_epi32(h, t.r), t.s);
}
/*
 * kgb_rq_store of 64 int8 results (a tile row of 4 zmm; of 2 given twice, the upper half of the
 * bytes unused) in one vector: the scaled values are narrowed with signed saturation to int16,
 * the zero point added with saturation, narrowed to int8, and clamped as bytes. The same bytes as
 * clamping y + zp in int32: each saturation clamps to a range that holds [lo, hi] (lo, hi and zp
 * within int8), and a value it moves is beyond that range on the same side both before and after
 * zp is added (|zp| <= 128 against the int16 bounds). The packs work within 128-bit lanes: lane
 * L holds the 4 columns 4L.. of each vector in turn, and a dword permutation orders them.
 */
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"), always_inline)) static inline void
kgb_rq_pack(__m512i v0, __m512i v1, __m512i v2, __m512i v3, kgb_rqt t0, kgb_rqt t1, kgb_rqt t2, kgb_rqt t3,
            kgb_rqc q, __mmask64 k, int8_t *d)
{
    const __m512i a = _mm512_adds_epi16(_mm512_packs_epi32(kgb_rq_scale(v0, t0), kgb_rq_scale(v1, t1)), q.zp);
    const __m512i b = _mm512_adds_epi16(_mm512_packs_epi32(kgb_rq_scale(v2, t2), kgb_rq_scale(v3, t3)), q.zp);
    const __m512i order = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
    const __m512i z = _mm512_permutexvar_epi32(order, _mm512_packs_epi16(a, b));
    _mm512_mask_storeu_epi8(d, k, _mm512_min_epi8(_mm512_max_epi8(z, q.lo), q.hi));
}
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"), always_inline)) static inline void
kgb_rq_store(__m512i v, kgb_rqt t, kgb_rqc q, __mmask16 k, uint8_t *d)
{
    const __m512i y = _mm512_add_epi32(kgb_rq_scale(v, t), q.zp);
    const __m512i z = _mm512_min_epi32(_mm512_max_epi32(y, q.lo), q.hi);
    if (q.b8) /* (narrowed in a register: the narrowing stores are slow on Zen 4) */
        _mm_mask_storeu_epi8(d, k, _mm512_cvtepi32_epi8(z));
    else
        _mm256_mask_storeu_epi16(d, k, _mm512_cvtepi32_epi16(z));
}
/* the segments of a tile: sg[g] covers quads [b / 4, b / 4 + ceil(n / 4)) of the panels, its rows'
   bytes from A + a on */
#define KGB_SEGS(BODY)                                                                                   \
    for (int64_t g = 0; g < nsg; g++) {                                                                  \
        const int8_t *As = A + sg[g].a;                                                                  \
        const int64_t q0 = sg[g].b / 4, nq = (sg[g].n + 3) / 4;                                          \
        for (int64_t i = 0; i < nq; i++) {                                                               \
            const int64_t q = q0 + i;                                                                    \
            BODY                                                                                         \
        }                                                                                                \
    }
#define KGB_TILE(R, QV)                                                                                  \
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) static void kgb_tile_##R##x##QV(    \
        int64_t Q, const tosac_gemm_seg *sg, int64_t nsg, const int8_t *A, int64_t lda, const uint8_t *Bp, \
        const int32_t *corr, const int32_t *rsum, void *C, int64_t ldc, const __mmask16 *m,             \
        const tosac_gemm_rq *rq)                                                                         \
    {                                                                                                    \
        const uint8_t *Bq = Bp + Q * 128; /* the second block (QV = 4) */                                \
        (void)Bq;                                                                                        \
        KGB_N##QV                                                                                        \
        KG_R##R(KGB_ACC##QV)                                                                             \
        KGB_SEGS(KGB_B##QV KG_R##R(KGB_DOT##QV))                                                         \
        const size_t es = rq ? rq->ob : 4u;                                                              \
        const kgb_rqc qc = kgb_rq_const(rq);                                                             \
        KGB_T##QV                                                                                        \
        KGB_M##QV                                                                                        \
        KG_R##R(KGB_OUT##QV)                                                                             \
    }
KGB_TILE(1, 4)
KGB_TILE(2, 4)
KGB_TILE(3, 4)
KGB_TILE(4, 4)
KGB_TILE(5, 4)
KGB_TILE(6, 4)
KGB_TILE(1, 2)
KGB_TILE(2, 2)
KGB_TILE(3, 2)
KGB_TILE(4, 2)
KGB_TILE(5, 2)
KGB_TILE(6, 2)
KGB_TILE(7, 2)
KGB_TILE(8, 2)
KGB_TILE(9, 2)
KGB_TILE(10, 2)
KGB_TILE(11, 2)
KGB_TILE(12, 2)
KGB_TILE(1, 1)
KGB_TILE(2, 1)
KGB_TILE(3, 1)
KGB_TILE(4, 1)
KGB_TILE(5, 1)
KGB_TILE(6, 1)
KGB_TILE(7, 1)
KGB_TILE(8, 1)
KGB_TILE(9, 1)
KGB_TILE(10, 1)
KGB_TILE(11, 1)
KGB_TILE(12, 1)
/* A block of 8 columns in one ymm per row ({1to8}; Zen 4 runs two ymm in the time of a zmm) */
#if defined(__GNUC__) && !defined(__clang__)
#define KGBY_DP(acc, b, p) __asm__("vpdpbusd %2%{1to8%}, %1, %0" : "+v"(acc) : "v"(b), "m"(*(const kgb_quad *)(p)))
#else
#define KGBY_DP(acc, b, p) acc = _mm256_dpbusd_epi32(acc, b, _mm256_set1_epi32(*(const kgb_quad *)(p)))
#endif
#define KGBY_ACC(r) __m256i c##r = _mm256_sub_epi32(n0, _mm256_set1_epi32((int32_t)((uint32_t)rsum[r] << 7)));
#define KGBY_DOT(r) KGBY_DP(c##r, b0, As + r * lda + 4 * i);
#define KGBY_OUT(r)                                                                                      \
    if (rq)                                                                                              \
        kgby_rq_store(c##r, t0, m8, (uint8_t *)C + (size_t)(r * ldc) * es);                          \
    else                                                                                                 \
        _mm256_mask_storeu_epi32((int32_t *)C + r * ldc, m8, c##r);
/* kgb_rq_store in 8 lanes */
typedef struct kgby_rqt {
    __m256i m, mo, r, s, zp, lo, hi;
    bool b8;
} kgby_rqt;
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"), always_inline)) static inline void
kgby_rq_store(__m256i v, kgby_rqt t, __mmask8 k, uint8_t *d)
{
    const __m256i odd = _mm256_mul_epi32(_mm256_srli_epi64(v, 32), t.mo);
    const __m256i h = _mm256_mask_shuffle_epi32(odd, 0x55, _mm256_mul_epi32(v, t.m), _MM_PERM_DDBB);
    const __m256i y = _mm256_add_epi32(_mm256_srav_epi32(_mm256_add_epi32(h, t.r), t.s), t.zp);
    const __m256i z = _mm256_min_epi32(_mm256_max_epi32(y, t.lo), t.hi);
    if (t.b8)
        _mm_mask_storeu_epi8(d, k, _mm256_cvtepi32_epi8(z));
    else
        _mm_mask_storeu_epi16(d, k, _mm256_cvtepi32_epi16(z));
}
#define KGBY_TILE(R)                                                                                     \
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) static void kgby_tile_##R(          \
        int64_t Q, const tosac_gemm_seg *sg, int64_t nsg, const int8_t *A, int64_t lda, const uint8_t *Bp, \
        const int32_t *corr, const int32_t *rsum, void *C, int64_t ldc, const __mmask16 *m,             \
        const tosac_gemm_rq *rq)                                                                         \
    {                                                                                                    \
        const __mmask8 m8 = (__mmask8)m[0];                                                              \
        const __m256i n0 = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_maskz_loadu_epi32(m8, corr)); \
        (void)Q;                                                                                         \
        KG_R##R(KGBY_ACC)                                                                                \
        KGB_SEGS(const __m256i b0 = _mm256_loadu_si256((const __m256i *)(const void *)(Bp + q * 32));   \
                 KG_R##R(KGBY_DOT))                                                                      \
        const size_t es = rq ? rq->ob : 4u;                                                              \
        kgby_rqt t0 = {n0, n0, n0, n0, n0, n0, n0, true};                                                \
        if (rq) {                                                                                        \
            t0.m = _mm256_maskz_loadu_epi32(m8, rq->m32), t0.mo = _mm256_srli_epi64(t0.m, 32);           \
            t0.r = _mm256_maskz_loadu_epi32(m8, rq->r32), t0.s = _mm256_maskz_loadu_epi32(m8, rq->s32);  \
            t0.zp = _mm256_set1_epi32(rq->ozp), t0.lo = _mm256_set1_epi32(rq->lo);                       \
            t0.hi = _mm256_set1_epi32(rq->hi), t0.b8 = rq->ob == 1;                                      \
        }                                                                                                \
        KG_R##R(KGBY_OUT)                                                                                \
    }
KGBY_TILE(1)
KGBY_TILE(2)
KGBY_TILE(3)
KGBY_TILE(4)
KGBY_TILE(5)
KGBY_TILE(6)
KGBY_TILE(7)
KGBY_TILE(8)
KGBY_TILE(9)
KGBY_TILE(10)
KGBY_TILE(11)
KGBY_TILE(12)
/* sum_{k<K} a[k]: up to 16 bytes (a pointwise layer of few channels, where this was a tenth of
   the time) as one psadbw of the bytes + 128 (bytes beyond K read as 0, so each of the 16 lanes
   adds 128 too), longer rows by vpdpbusd against bytes of 1 */
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) static int32_t kgb_rowsum(const int8_t *a, int64_t K)
{
    if (K <= 16) {
        const __m128i x = _mm_maskz_loadu_epi8((__mmask16)(0xFFFFu >> (16 - K)), a);
        const __m128i s16 = _mm_sad_epu8(_mm_xor_si128(x, _mm_set1_epi8((char)0x80)), _mm_setzero_si128());
        return _mm_cvtsi128_si32(s16) + _mm_extract_epi16(s16, 4) - 16 * 128;
    }
    const __m512i ones = _mm512_set1_epi8(1);
    __m512i s = _mm512_setzero_si512();
    int64_t k = 0;
    for (; k + 64 <= K; k += 64) s = _mm512_dpbusd_epi32(s, ones, _mm512_loadu_si512(a + k));
    if (k < K) s = _mm512_dpbusd_epi32(s, ones, _mm512_maskz_loadu_epi8((__mmask64)(~0ull >> (64 - (K - k))), a + k));
    return _mm512_reduce_add_epi32(s);
}
typedef void (*kgb_tile_fn)(int64_t, const tosac_gemm_seg *, int64_t, const int8_t *, int64_t, const uint8_t *,
                            const int32_t *, const int32_t *, void *, int64_t, const __mmask16 *,
                            const tosac_gemm_rq *);
static const kgb_tile_fn kgb_wide[7] = {NULL, kgb_tile_1x4, kgb_tile_2x4, kgb_tile_3x4, kgb_tile_4x4, kgb_tile_5x4,
                                        kgb_tile_6x4};
static const kgb_tile_fn kgb_q1[13] = {NULL,          kgb_tile_1x1,  kgb_tile_2x1,  kgb_tile_3x1, kgb_tile_4x1,
                                       kgb_tile_5x1,  kgb_tile_6x1,  kgb_tile_7x1,  kgb_tile_8x1, kgb_tile_9x1,
                                       kgb_tile_10x1, kgb_tile_11x1, kgb_tile_12x1};
static const kgb_tile_fn kgby_tiles[13] = {NULL,        kgby_tile_1, kgby_tile_2,  kgby_tile_3,  kgby_tile_4,
                                           kgby_tile_5,  kgby_tile_6, kgby_tile_7,  kgby_tile_8,  kgby_tile_9,
                                           kgby_tile_10, kgby_tile_11, kgby_tile_12};
static const kgb_tile_fn kgb_half[13] = {NULL,          kgb_tile_1x2,  kgb_tile_2x2,  kgb_tile_3x2, kgb_tile_4x2,
                                         kgb_tile_5x2,  kgb_tile_6x2,  kgb_tile_7x2,  kgb_tile_8x2, kgb_tile_9x2,
                                         kgb_tile_10x2, kgb_tile_11x2, kgb_tile_12x2};
#endif

void tosac_gemm_u8_panel_seg(int64_t P, int64_t J, int64_t K, int64_t run, const tosac_gemm_seg *sg, int64_t nsg,
                             const int8_t *A, int64_t lda, const void *panel, void *C, int64_t ldc, int64_t j0,
                             int64_t j1, const tosac_gemm_rq *rq)
{
#ifdef TOSAC_KERNEL_X86
    int64_t Q = (K + 3) / 4;
    const uint8_t *pb = panel;
    const int32_t *corr = (const int32_t *)(const void *)(pb + kgb_blocks_bytes(J, K));
    const size_t es = rq ? rq->ob : sizeof(int32_t); /* bytes per element of C */
    if (P > 60) { /* row sums in blocks of 60 rows */
        for (int64_t p = 0; p < P; p += 60)
            tosac_gemm_u8_panel_seg(P - p < 60 ? P - p : 60, J, K, run, sg, nsg, A + p * lda, lda, panel,
                                    (uint8_t *)C + (size_t)(p * ldc) * es, ldc, j0, j1, rq);
        return;
    }
    int32_t rsum[60];
    for (int64_t p = 0; p < P; p++) {
        rsum[p] = 0;
        for (int64_t g = 0; g < nsg; g++) rsum[p] += kgb_rowsum(A + sg[g].a + p * lda, sg[g].n);
    }
    /* rows no segment covers: their inputs are the zero point, whose terms
       zp * (B + 128) - 128 * zp leave zp * B, the part of the correction the panels hold per row */
    int64_t skip[TOSAC_GEMM_MAX_SEG], nskip = 0;
    const int64_t nrows = (int64_t)((size_t)(K + run - 1) / (size_t)run);
    for (int64_t r = 0, g = 0; r < nrows; r++) {
        while (g < nsg && sg[g].b < r * run) g++;
        if ((g == nsg || sg[g].b != r * run) && nskip < TOSAC_GEMM_MAX_SEG) skip[nskip++] = r;
    }
    const int32_t *rowc = corr + kgb_j16(J);
    int32_t cadj[64];
    const int64_t je = j1 < J ? j1 : J;
    for (int64_t jb = j0; jb < je;) {
        const uint8_t *Bp = pb + jb / 32 * Q * 128;
        int64_t nc = je - jb < 64 ? je - jb : 64;
        __mmask16 m[4];
        for (int v = 0; v < 4; v++) {
            int64_t left = nc - 16 * v;
            m[v] = left >= 16 ? (__mmask16)0xFFFF : left <= 0 ? (__mmask16)0 : (__mmask16)((1u << left) - 1u);
        }
        tosac_gemm_rq qb; /* the tables from column jb on */
        if (rq) {
            const int64_t o = rq->uniform ? 0 : jb;
            qb = *rq, qb.m32 += o, qb.r32 += o, qb.s32 += o;
        }
        const int32_t *cb = corr + jb;
        if (nskip) {
            for (int64_t j = 0; j < nc; j++) {
                uint32_t v = (uint32_t)corr[jb + j];
                for (int64_t i = 0; i < nskip; i++) v -= (uint32_t)rowc[skip[i] * kgb_j16(J) + jb + j];
                cadj[j] = kgb_wrap(v);
            }
            cb = cadj;
        }
        const int64_t w = kgb_width(J, jb);
        const bool wide = nc > 32 && kgb_width(J, jb + 32) == 32; /* two whole blocks */
        const kgb_tile_fn *tiles = wide ? kgb_wide : w == 32 ? kgb_half : w == 16 ? kgb_q1 : kgby_tiles;
        int64_t rows = wide ? 6 : 12;
        for (int64_t p = 0; p < P; p += rows) {
            int64_t r = P - p < rows ? P - p : rows;
            tiles[r](Q, sg, nsg, A + p * lda, lda, Bp, cb, rsum + p, (uint8_t *)C + (size_t)(p * ldc + jb) * es, ldc, m,
                     rq ? &qb : NULL);
        }
        jb += wide ? 64 : 32;
    }
#else
    (void)P, (void)J, (void)K, (void)run, (void)sg, (void)nsg, (void)A, (void)lda, (void)panel, (void)C, (void)ldc;
    (void)j0, (void)j1, (void)rq;
#endif
}

void tosac_gemm_u8_panel(int64_t P, int64_t J, int64_t K, const int8_t *A, int64_t lda, const void *panel, void *C,
                         int64_t ldc, int64_t j0, int64_t j1, const tosac_gemm_rq *rq)
{
    const tosac_gemm_seg whole = {0, 0, K};
    tosac_gemm_u8_panel_seg(P, J, K, K, &whole, 1, A, lda, panel, C, ldc, j0, j1, rq);
}

void tosac_gemm_i16(uint32_t isa, int64_t P, int64_t J, int64_t K, const int16_t *A, int64_t lda, const int16_t *B, int64_t ldb,
                    int32_t *C, int64_t ldc)
{
    KG_DISPATCH(gemm_i16, (P, J, K, A, lda, B, ldb, C, ldc))
}

#ifdef TOSAC_KERNEL_X86
/*
 * AVX-512 fp32 register tiles: R rows x Q zmm of columns (R x 16Q accumulators in named
 * variables), C[r][j] = (first ? +0 : C[r][j]) + sum over k < K in order of A[r][k] * B[k][j], B rows
 * ldb apart, columns beyond the masks m[q] neither read nor written. Each product is fused into
 * its sum (vfmadd231ps, one rounding: fmaf), so each output gets the operations of tosac_gemm_f32
 * in its order: the same bits.
 *
 * The FMA takes A[r][k] as an embedded broadcast of a memory operand (vfmadd231ps m32{1to16}),
 * one per product: on Zen 4 a broadcast into a register shared by a row's products runs on an FP
 * pipe that the arithmetic needs, the embedded one in the load unit (the 6 x 64 tile of a
 * 56x56x64 3x3 convolution, then with a separate multiply and add: 93 -> 110 GFLOP/s in the
 * tile; the peak is 118). GCC writes it as
 * inline assembly (it would share one vbroadcastss), which is also why the accumulators are named
 * variables: with arrays GCC keeps them in memory around the asm statements.
 */
#if defined(__GNUC__) && !defined(__clang__)
#define KGF_FMA(c, b, p) __asm__("vfmadd231ps %2%{1to16%}, %1, %0" : "+v"(c) : "v"(b), "m"(*(p)))
#else
#define KGF_FMA(c, b, p) c = _mm512_fmadd_ps(_mm512_set1_ps(*(p)), b, c)
#endif
#define KGF_C(r, q) (first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(m[q], C + r * ldc + 16 * q))
#define KGF_ACC1(r) __m512 c##r##0 = KGF_C(r, 0);
#define KGF_ACC2(r) __m512 c##r##0 = KGF_C(r, 0), c##r##1 = KGF_C(r, 1);
#define KGF_ACC3(r) __m512 c##r##0 = KGF_C(r, 0), c##r##1 = KGF_C(r, 1), c##r##2 = KGF_C(r, 2);
#define KGF_ACC4(r) __m512 c##r##0 = KGF_C(r, 0), c##r##1 = KGF_C(r, 1), c##r##2 = KGF_C(r, 2), c##r##3 = KGF_C(r, 3);
#define KGF_ROW1(r) KGF_FMA(c##r##0, b0, As + r * lda + k);
#define KGF_ROW2(r) KGF_ROW1(r) KGF_FMA(c##r##1, b1, As + r * lda + k);
#define KGF_ROW3(r) KGF_ROW2(r) KGF_FMA(c##r##2, b2, As + r * lda + k);
#define KGF_ROW4(r) KGF_ROW3(r) KGF_FMA(c##r##3, b3, As + r * lda + k);
#define KGF_ST(r, q) _mm512_mask_storeu_ps(C + r * ldc + 16 * q, m[q], bias ? kgf_end(c##r##q, bv[q], &ec) : c##r##q);
#define KGF_OUT1(r) KGF_ST(r, 0)
#define KGF_OUT2(r) KGF_ST(r, 0) KGF_ST(r, 1)
#define KGF_OUT3(r) KGF_OUT2(r) KGF_ST(r, 2)
#define KGF_OUT4(r) KGF_OUT2(r) KGF_ST(r, 2) KGF_ST(r, 3)
#define KGF_B1 const __m512 b0 = _mm512_loadu_ps(Bs + k * ldb);
#define KGF_B3 KGF_B2 const __m512 b2 = _mm512_loadu_ps(Bs + k * ldb + 32);
#define KGF_B2 const __m512 b0 = _mm512_loadu_ps(Bs + k * ldb), b1 = _mm512_loadu_ps(Bs + k * ldb + 16);
#define KGF_B4 KGF_B2 const __m512 b2 = _mm512_loadu_ps(Bs + k * ldb + 32), b3 = _mm512_loadu_ps(Bs + k * ldb + 48);
/* one cache line of the tile's share of the next panel block per k (pf .. pfe: see
   tosac_gemm_f32_panel_seg), so that block is in L2 before its first tile streams it */
#define KGF_PF                                                                                           \
    if (pf < pfe) _mm_prefetch(pf, _MM_HINT_T1), pf += 64;
/*
 * The end of a sum (tosac_gemm_epi): bias + acc, then the clamp, as fp_store_f32 in k_conv.c. With
 * bounds that are not NaN, max(a, b) = a > b ? a : b and min(a, b) = a < b ? a : b (vmaxps and
 * vminps: b when either is NaN) give the clamp in fewer operations (a 1x1 layer of K = 16 spends
 * a fifth of its time here): min(hi, max(lo, x)) keeps a NaN x (its own bits) and differs from
 * v < hi ? v : hi only when v == hi, the same bits unless both are zeros (hi != 0); with NaN -> lo,
 * min(max(x, lo), hi) differs from x >= lo ? x : lo only when x == lo (lo != 0) and gives lo for a
 * NaN x when lo <= hi. Neither needs the min when hi is +inf (ReLU): v < hi ? v : hi is then v for
 * every v but NaN, which both forms settle before. Always inlined (GCC left it a call, 24 per tile,
 * in the larger tiles).
 */
#define KG_END_FAST(ep) ((ep)->lo == (ep)->lo && (ep)->hi == (ep)->hi)
#define KG_END_KEEP(ep) (!(ep)->ignore && (ep)->hi != 0.0f)
#define KG_END_LO(ep) ((ep)->ignore && (ep)->lo != 0.0f && (ep)->lo <= (ep)->hi)
/* the form of the end, chosen once per tile (GCC re-tested the epilogue's fields for each of a
   tile's 24 accumulators) */
enum { KGE_BIAS, KGE_MAX_LO, KGE_MINMAX, KGE_MAX_X, KGE_MAXMIN, KGE_BLEND_KEEP, KGE_BLEND_LO };
typedef struct kgf_endc {
    __m512 lo, hi;
    int form;
} kgf_endc;
__attribute__((target("avx512f"))) static inline kgf_endc kgf_end_form(const tosac_gemm_epi *ep)
{
    if (!ep || !ep->clamp) return (kgf_endc){_mm512_setzero_ps(), _mm512_setzero_ps(), KGE_BIAS};
    kgf_endc e = {_mm512_set1_ps(ep->lo), _mm512_set1_ps(ep->hi), ep->ignore ? KGE_BLEND_LO : KGE_BLEND_KEEP};
    if (KG_END_FAST(ep) && KG_END_KEEP(ep))
        e.form = ep->hi == INFINITY ? KGE_MAX_LO : KGE_MINMAX;
    else if (KG_END_FAST(ep) && KG_END_LO(ep))
        e.form = ep->hi == INFINITY ? KGE_MAX_X : KGE_MAXMIN;
    return e;
}
#define KG_END_BODY(V, W)                                                                                \
    switch (e->form) {                                                                                   \
    case KGE_BIAS: return x;                                                                             \
    case KGE_MAX_LO: return _##V##_max_ps(lo, x);                                                        \
    case KGE_MINMAX: return _##V##_min_ps(hi, _##V##_max_ps(lo, x));                                     \
    case KGE_MAX_X: return _##V##_max_ps(x, lo);                                                         \
    case KGE_MAXMIN: return _##V##_min_ps(_##V##_max_ps(x, lo), hi);                                     \
    default: {                                                                                           \
        const W v = _##V##_mask_blend_ps(_##V##_cmp_ps_mask(x, lo, _CMP_GE_OQ), lo, x); /* x >= lo ? x : lo */ \
        const W r = _##V##_mask_blend_ps(_##V##_cmp_ps_mask(v, hi, _CMP_LT_OQ), hi, v); /* v < hi ? v : hi */  \
        return _##V##_mask_blend_ps(_##V##_cmp_ps_mask(x, x, _CMP_UNORD_Q), r, e->form == KGE_BLEND_LO ? lo : x); \
    }                                                                                                    \
    }
__attribute__((target("avx512f"), always_inline)) static inline __m512 kgf_end(__m512 acc, __m512 b, const kgf_endc *e)
{
    const __m512 x = _mm512_add_ps(b, acc), lo = e->lo, hi = e->hi;
    KG_END_BODY(mm512, __m512)
}
/* A tile function runs nt tiles of its R rows, one below the other (A and C R rows further each),
   so the row tiles of a block cost one call (112x112x16 1x1 -> 96: 43.7 -> 44.6 GMAC/s; a second
   body with first constant reached 46 but doubled this file's compile time) */
#define KGF_PARAMS                                                                                       \
    const tosac_gemm_seg *sg, int64_t nsg, const float *restrict A, int64_t lda, const float *restrict B,    \
        int64_t ldb, float *restrict C, int64_t ldc, const __mmask16 *m, bool first, const float *bias,     \
        const tosac_gemm_epi *ep, const char *pf, const char *pfe, int64_t nt
/* bias: NULL, or the 16Q biases of the tile's columns, which the tile adds (the last K block).
   The sum runs over the segments sg[0 .. nsg - 1] in order: segment s takes sg[s].n terms, A's
   from A + sg[s].a (rows lda apart), B's rows from B + sg[s].b * ldb (one segment {0, 0, K}: a
   plain GEMM; several: a convolution read from its input, one segment per kernel row). */
#define KGF_TILE(R, Q)                                                                                   \
    __attribute__((target("avx512f,fma"))) static void kgf_tile_##R##x##Q(KGF_PARAMS)                            \
    {                                                                                                    \
    for (int64_t it = 0; it < nt; it++, A += R * lda, C += R * ldc) {                                    \
        KG_R##R(KGF_ACC##Q)                                                                              \
        for (int64_t s = 0; s < nsg; s++) {                                                              \
            const float *restrict As = A + sg[s].a, *restrict Bs = B + sg[s].b * ldb;                    \
            for (int64_t k = 0; k < sg[s].n; k++) {                                                      \
                KGF_B##Q                                                                                 \
                KG_R##R(KGF_ROW##Q)                                                                      \
                KGF_PF                                                                                   \
            }                                                                                            \
        }                                                                                                \
        __m512 bv[Q];                                                                                    \
        for (int q = 0; q < Q; q++) bv[q] = bias ? _mm512_loadu_ps(bias + 16 * q) : _mm512_setzero_ps(); \
        const kgf_endc ec = kgf_end_form(bias ? ep : NULL);                                              \
        KG_R##R(KGF_OUT##Q)                                                                              \
    }                                                                                                    \
    }
KGF_TILE(1, 4)
KGF_TILE(2, 4)
KGF_TILE(3, 4)
KGF_TILE(4, 4)
KGF_TILE(5, 4)
KGF_TILE(6, 4)
KGF_TILE(1, 2)
KGF_TILE(2, 2)
KGF_TILE(3, 2)
KGF_TILE(4, 2)
KGF_TILE(5, 2)
KGF_TILE(6, 2)
KGF_TILE(7, 2)
KGF_TILE(8, 2)
KGF_TILE(9, 2)
KGF_TILE(10, 2)
KGF_TILE(11, 2)
KGF_TILE(12, 2)
KGF_TILE(1, 3)
KGF_TILE(2, 3)
KGF_TILE(3, 3)
KGF_TILE(4, 3)
KGF_TILE(5, 3)
KGF_TILE(6, 3)
KGF_TILE(7, 3)
KGF_TILE(8, 3)
KGF_TILE(1, 1)
KGF_TILE(2, 1)
KGF_TILE(3, 1)
KGF_TILE(4, 1)
KGF_TILE(5, 1)
KGF_TILE(6, 1)
KGF_TILE(7, 1)
KGF_TILE(8, 1)
KGF_TILE(9, 1)
KGF_TILE(10, 1)
KGF_TILE(11, 1)
KGF_TILE(12, 1)
KGF_TILE(13, 1)
KGF_TILE(14, 1)
KGF_TILE(15, 1)
KGF_TILE(16, 1)
KGF_TILE(17, 1)
KGF_TILE(18, 1)
KGF_TILE(19, 1)
KGF_TILE(20, 1)
KGF_TILE(21, 1)
KGF_TILE(22, 1)
KGF_TILE(23, 1)
KGF_TILE(24, 1)

/*
 * The same tile for a block of 8 columns in one ymm per row (vfmadd231ps m32{1to8}): on Zen 4 a zmm
 * operation takes the pipes twice, so 8 columns in ymm run at the rate of 16 in zmm and a layer
 * of 8 output channels does not compute 8 zero columns. Mask m[0] (the low 8 bits).
 */
#if defined(__GNUC__) && !defined(__clang__)
#define KGY_FMA(c, b, p) __asm__("vfmadd231ps %2%{1to8%}, %1, %0" : "+v"(c) : "v"(b), "m"(*(p)))
#else
#define KGY_FMA(c, b, p) c = _mm256_fmadd_ps(_mm256_set1_ps(*(p)), b, c)
#endif
#define KGY_ACC(r) __m256 c##r = first ? _mm256_setzero_ps() : _mm256_maskz_loadu_ps(m8, C + r * ldc);
#define KGY_ROW(r) KGY_FMA(c##r, b0, As + r * lda + k);
#define KGY_OUT(r) _mm256_mask_storeu_ps(C + r * ldc, m8, bias ? kgy_end(c##r, bv, &ec) : c##r);
__attribute__((target("avx512f,avx512vl"), always_inline)) static inline __m256 kgy_end(__m256 acc, __m256 b,
                                                                                      const kgf_endc *e)
{
    const __m256 x = _mm256_add_ps(b, acc), lo = _mm512_castps512_ps256(e->lo), hi = _mm512_castps512_ps256(e->hi);
    KG_END_BODY(mm256, __m256)
}
#define KGY_TILE(R)                                                                                      \
    __attribute__((target("avx512f,avx512vl,fma"))) static void kgy_tile_##R(KGF_PARAMS)                         \
    {                                                                                                    \
        const __mmask8 m8 = (__mmask8)m[0];                                                              \
    for (int64_t it = 0; it < nt; it++, A += R * lda, C += R * ldc) {                                    \
        KG_R##R(KGY_ACC)                                                                                 \
        for (int64_t s = 0; s < nsg; s++) {                                                              \
            const float *restrict As = A + sg[s].a, *restrict Bs = B + sg[s].b * ldb;                    \
            for (int64_t k = 0; k < sg[s].n; k++) {                                                      \
                const __m256 b0 = _mm256_loadu_ps(Bs + k * ldb);                                         \
                KG_R##R(KGY_ROW)                                                                         \
                KGF_PF                                                                                   \
            }                                                                                            \
        }                                                                                                \
        const __m256 bv = bias ? _mm256_loadu_ps(bias) : _mm256_setzero_ps();                            \
        const kgf_endc ec = kgf_end_form(bias ? ep : NULL);                                              \
        KG_R##R(KGY_OUT)                                                                                 \
    }                                                                                                    \
    }
KGY_TILE(1)
KGY_TILE(2)
KGY_TILE(3)
KGY_TILE(4)
KGY_TILE(5)
KGY_TILE(6)
KGY_TILE(7)
KGY_TILE(8)
KGY_TILE(9)
KGY_TILE(10)
KGY_TILE(11)
KGY_TILE(12)
KGY_TILE(13)
KGY_TILE(14)
KGY_TILE(15)
KGY_TILE(16)
KGY_TILE(17)
KGY_TILE(18)
KGY_TILE(19)
KGY_TILE(20)
KGY_TILE(21)
KGY_TILE(22)
KGY_TILE(23)
KGY_TILE(24)
/*
 * Blocks of 24, 40 and 56 columns: Q zmm and one ymm per row (columns 16Q .. 16Q + 7 under the low 8
 * bits of m[Q]), so a layer of 24 or 40 output channels (mobilenet_v2/v3, efficientnet) or a last
 * block of 24 or 56 (88, 120 channels) does not compute 8 zero columns in a zmm (on Zen 4 a ymm
 * operation takes half the pipe time of a zmm one). 12, 8 and 6 rows: 24 accumulators.
 */
#define KGX_YACC(r, q) __m256 c##r##y = first ? _mm256_setzero_ps() : _mm256_maskz_loadu_ps(my, C + r * ldc + 16 * q);
#define KGX_YROW(r) KGY_FMA(c##r##y, by, As + r * lda + k);
#define KGX_YST(r, q) _mm256_mask_storeu_ps(C + r * ldc + 16 * q, my, bias ? kgy_end(c##r##y, bvy, &ec) : c##r##y);
#define KGX_ACC1(r) KGF_ACC1(r) KGX_YACC(r, 1)
#define KGX_ACC2(r) KGF_ACC2(r) KGX_YACC(r, 2)
#define KGX_ACC3(r) KGF_ACC3(r) KGX_YACC(r, 3)
#define KGX_ROW1(r) KGF_ROW1(r) KGX_YROW(r)
#define KGX_ROW2(r) KGF_ROW2(r) KGX_YROW(r)
#define KGX_ROW3(r) KGF_ROW3(r) KGX_YROW(r)
#define KGX_OUT1(r) KGF_OUT1(r) KGX_YST(r, 1)
#define KGX_OUT2(r) KGF_OUT2(r) KGX_YST(r, 2)
#define KGX_OUT3(r) KGF_OUT3(r) KGX_YST(r, 3)
#define KGX_TILE(R, Q)                                                                                   \
    __attribute__((target("avx512f,avx512vl,fma"))) static void kgx_tile_##R##x##Q(KGF_PARAMS)                   \
    {                                                                                                    \
        const __mmask8 my = (__mmask8)m[Q];                                                              \
    for (int64_t it = 0; it < nt; it++, A += R * lda, C += R * ldc) {                                    \
        KG_R##R(KGX_ACC##Q)                                                                              \
        for (int64_t s = 0; s < nsg; s++) {                                                              \
            const float *restrict As = A + sg[s].a, *restrict Bs = B + sg[s].b * ldb;                    \
            for (int64_t k = 0; k < sg[s].n; k++) {                                                      \
                KGF_B##Q                                                                                 \
                const __m256 by = _mm256_loadu_ps(Bs + k * ldb + 16 * Q);                                \
                KG_R##R(KGX_ROW##Q)                                                                      \
                KGF_PF                                                                                   \
            }                                                                                            \
        }                                                                                                \
        __m512 bv[Q];                                                                                    \
        for (int q = 0; q < Q; q++) bv[q] = bias ? _mm512_loadu_ps(bias + 16 * q) : _mm512_setzero_ps(); \
        const __m256 bvy = bias ? _mm256_loadu_ps(bias + 16 * Q) : _mm256_setzero_ps();                  \
        const kgf_endc ec = kgf_end_form(bias ? ep : NULL);                                              \
        KG_R##R(KGX_OUT##Q)                                                                              \
    }                                                                                                    \
    }
KGX_TILE(1, 1)
KGX_TILE(2, 1)
KGX_TILE(3, 1)
KGX_TILE(4, 1)
KGX_TILE(5, 1)
KGX_TILE(6, 1)
KGX_TILE(7, 1)
KGX_TILE(8, 1)
KGX_TILE(9, 1)
KGX_TILE(10, 1)
KGX_TILE(11, 1)
KGX_TILE(12, 1)
KGX_TILE(1, 2)
KGX_TILE(2, 2)
KGX_TILE(3, 2)
KGX_TILE(4, 2)
KGX_TILE(5, 2)
KGX_TILE(6, 2)
KGX_TILE(7, 2)
KGX_TILE(8, 2)
KGX_TILE(1, 3)
KGX_TILE(2, 3)
KGX_TILE(3, 3)
KGX_TILE(4, 3)
KGX_TILE(5, 3)
KGX_TILE(6, 3)
typedef void (*kgf_tile_fn)(const tosac_gemm_seg *, int64_t, const float *, int64_t, const float *, int64_t, float *,
                            int64_t, const __mmask16 *, bool, const float *, const tosac_gemm_epi *, const char *,
                            const char *, int64_t);
static const kgf_tile_fn kgf_q3[9] = {NULL,         kgf_tile_1x3, kgf_tile_2x3, kgf_tile_3x3, kgf_tile_4x3,
                                      kgf_tile_5x3, kgf_tile_6x3, kgf_tile_7x3, kgf_tile_8x3};
static const kgf_tile_fn kgf_q1[25] = {NULL, kgf_tile_1x1, kgf_tile_2x1, kgf_tile_3x1, kgf_tile_4x1, kgf_tile_5x1, kgf_tile_6x1, kgf_tile_7x1, kgf_tile_8x1, kgf_tile_9x1, kgf_tile_10x1, kgf_tile_11x1, kgf_tile_12x1, kgf_tile_13x1, kgf_tile_14x1, kgf_tile_15x1, kgf_tile_16x1, kgf_tile_17x1, kgf_tile_18x1, kgf_tile_19x1, kgf_tile_20x1, kgf_tile_21x1, kgf_tile_22x1, kgf_tile_23x1, kgf_tile_24x1};
static const kgf_tile_fn kgy_tiles[25] = {NULL, kgy_tile_1, kgy_tile_2, kgy_tile_3, kgy_tile_4, kgy_tile_5, kgy_tile_6, kgy_tile_7, kgy_tile_8, kgy_tile_9, kgy_tile_10, kgy_tile_11, kgy_tile_12, kgy_tile_13, kgy_tile_14, kgy_tile_15, kgy_tile_16, kgy_tile_17, kgy_tile_18, kgy_tile_19, kgy_tile_20, kgy_tile_21, kgy_tile_22, kgy_tile_23, kgy_tile_24};
static const kgf_tile_fn kgf_wide[7] = {NULL,           kgf_tile_1x4, kgf_tile_2x4, kgf_tile_3x4,
                                        kgf_tile_4x4, kgf_tile_5x4, kgf_tile_6x4};
static const kgf_tile_fn kgx_24[13] = {NULL,          kgx_tile_1x1,  kgx_tile_2x1,  kgx_tile_3x1, kgx_tile_4x1,
                                       kgx_tile_5x1,  kgx_tile_6x1,  kgx_tile_7x1,  kgx_tile_8x1, kgx_tile_9x1,
                                       kgx_tile_10x1, kgx_tile_11x1, kgx_tile_12x1};
static const kgf_tile_fn kgx_40[9] = {NULL,         kgx_tile_1x2, kgx_tile_2x2, kgx_tile_3x2, kgx_tile_4x2,
                                      kgx_tile_5x2, kgx_tile_6x2, kgx_tile_7x2, kgx_tile_8x2};
static const kgf_tile_fn kgx_56[7] = {NULL,         kgx_tile_1x3, kgx_tile_2x3, kgx_tile_3x3,
                                      kgx_tile_4x3, kgx_tile_5x3, kgx_tile_6x3};
static const kgf_tile_fn kgf_half[13] = {NULL,          kgf_tile_1x2,  kgf_tile_2x2,  kgf_tile_3x2, kgf_tile_4x2,
                                         kgf_tile_5x2,  kgf_tile_6x2,  kgf_tile_7x2,  kgf_tile_8x2, kgf_tile_9x2,
                                         kgf_tile_10x2, kgf_tile_11x2, kgf_tile_12x2};

/*
 * AVX-512 fp32 GEMM on B as it is (MATMUL, non-constant weights): tiles of 12 rows x 32 columns, K
 * in blocks of KG512_KB so that the block of B a tile streams stays in L1 while the row tiles of
 * the block reuse it (a later K block reloads the partial sums the previous one stored, exactly:
 * the blocking changes nothing); columns beyond the last 32 through the AVX-512 build of the
 * portable tiles.
 */
#define KG512_KB 256
static void kg512_gemm_f32(int64_t P, int64_t J, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
                           float *C, int64_t ldc)
{
    static const __mmask16 all[2] = {0xFFFF, 0xFFFF};
    int64_t J32 = J - J % 32;
    for (int64_t k0 = 0; k0 < K; k0 += KG512_KB) {
        int64_t kb = K - k0 < KG512_KB ? K - k0 : KG512_KB;
        const tosac_gemm_seg one = {0, 0, kb};
        for (int64_t j = 0; j < J32; j += 32)
            for (int64_t p = 0; p < P; p += 12) {
                int64_t r = P - p < 12 ? P - p : 12;
                kgf_half[r](&one, 1, A + p * lda + k0, lda, B + k0 * ldb + j, ldb, C + p * ldc + j, ldc, all, k0 == 0,
                            NULL, NULL, NULL, NULL, 1);
            }
    }
    if (J32 < J) kg_vnni_gemm_f32(P, J - J32, K, A, lda, B + J32, ldb, C + J32, ldc);
}

/*
 * fp32 GEMM on prepared panels (AVX-512): B as blocks of 64 columns, each [K][64] contiguous, the
 * last block as narrow as its columns allow (the columns left rounded up to a multiple of 8; zero
 * beyond J), so a tile streams its block of B from consecutive cache lines whatever J is and no
 * layer computes more than 7 zero columns. Register tiles by block width: 6 rows x 64 columns (4
 * zmm per row, 24 accumulators), 6 x 56 (3 zmm + 1 ymm), 8 x 48, 8 x 40 (2 zmm + 1 ymm), 12 x 32,
 * 12 x 24 (1 zmm + 1 ymm), 24 x 16 and 24 x 8 (ymm: a layer of 16 output channels at 12 rows ran
 * 5-7% slower, its tiles' ends weighing twice as much); K in
 * equal blocks of at most KGP32_KB (a block of B, up to 256 KB, is reused from L2 by every row
 * tile of the call; each block boundary costs a tile a store and a reload of its accumulators,
 * which at 128 was 3-4% of a 3x3 convolution); the last block is stored under masks. Per output the same operations in the same order as
 * tosac_gemm_f32 (each product fused into the sum, k ascending, exact reload between K blocks):
 * the same bits.
 */
#endif

/* Width of the panel block that starts at column jb (a multiple of KGP32_W). */
static int64_t kgp32_width(int64_t J, int64_t jb)
{
    int64_t n = J - jb;
    return n >= KGP32_W ? KGP32_W : (n + 7) & ~(int64_t)7;
}

size_t tosac_gemm_f32_panel_bytes(int64_t J, int64_t K)
{
    int64_t full = J - J % KGP32_W;
    return (size_t)(full + (full < J ? kgp32_width(J, full) : 0)) * (size_t)K * sizeof(float);
}

size_t tosac_gemm_f32_panel_at(int64_t J, int64_t K, int64_t k, int64_t j)
{
    int64_t jb = j - j % KGP32_W;
    return (size_t)(jb * K + k * kgp32_width(J, jb) + (j - jb));
}

void tosac_gemm_f32_panel(uint32_t isa, int64_t P, int64_t J, int64_t K, const float *A, int64_t lda, const float *panel,
                          float *C, int64_t ldc, const tosac_gemm_epi *ep)
{
    const tosac_gemm_seg one = {0, 0, K};
    tosac_gemm_f32_panel_seg(isa, P, J, K, &one, 1, A, lda, panel, C, ldc, ep);
}

void tosac_gemm_f32_panel_seg(uint32_t isa, int64_t P, int64_t J, int64_t K, const tosac_gemm_seg *sg, int64_t nsg,
                              const float *A, int64_t lda, const float *panel, float *C, int64_t ldc,
                              const tosac_gemm_epi *ep)
{
#ifdef TOSAC_KERNEL_X86
    if (isa == TOSAC_KISA_AVX2) {
        tosac_gemm_f32_panel_seg_avx2(P, J, K, sg, nsg, A, lda, panel, C, ldc, ep);
        return;
    }
    if (P <= 0) return;
    const int64_t kstep = tosac_gemm_kstep(K, KGP32_KB);
    for (int64_t k0 = 0; k0 < K; k0 += kstep) {
        int64_t kb = K - k0 < kstep ? K - k0 : kstep;
        tosac_gemm_seg cs[TOSAC_GEMM_MAX_SEG];
        const int64_t ns = tosac_gemm_seg_clip(sg, nsg, k0, kb, cs);
        for (int64_t jb = 0; jb < J; jb += KGP32_W) {
            const int64_t w = kgp32_width(J, jb);
            float bias[KGP32_W]; /* the block's w biases, when this is the last K block */
            const float *bp = tosac_gemm_block_bias(k0 + kb == K ? ep : NULL, J, jb, w, bias);
            const float *Bp = panel + jb * K + k0 * w;
            int64_t nc = J - jb < KGP32_W ? J - jb : KGP32_W;
            __mmask16 m[4];
            for (int q = 0; q < 4; q++) {
                int64_t left = nc - 16 * q;
                m[q] = left >= 16 ? (__mmask16)0xFFFF : left <= 0 ? (__mmask16)0 : (__mmask16)((1u << left) - 1u);
            }
            /* tiles and their rows by block width (8 .. 64 in steps of 8) */
            static const kgf_tile_fn *const tiles_w[9] = {NULL,   kgy_tiles, kgf_q1, kgx_24,  kgf_half,
                                                          kgx_40, kgf_q3,    kgx_56, kgf_wide};
            static const int64_t rows_w[9] = {0, 24, 24, 12, 12, 8, 8, 6, 6};
            const kgf_tile_fn *tiles = tiles_w[w / 8];
            const int64_t rows = rows_w[w / 8];
            /* the next block in this order (the next columns, else the first of the next K
               block), a share of it prefetched by each tile; the rows in nt tiles of r or r + 1
               (49 rows: 6 x 4 + 5 x 5, not 6 x 8 + 1: a tile of one row is bound by its stream
               of B) */
            const int64_t nt = (P + rows - 1) / rows, r = P / nt, r1 = P - r * nt;
            const char *nx = NULL;
            size_t nbytes = 0;
            if (jb + KGP32_W < J) {
                nx = (const char *)(panel + (jb + KGP32_W) * K + k0 * kgp32_width(J, jb + KGP32_W));
                nbytes = (size_t)(kb * kgp32_width(J, jb + KGP32_W)) * sizeof(float);
            } else if (k0 + kb < K) {
                const int64_t kn = K - k0 - kb < kstep ? K - k0 - kb : kstep;
                nx = (const char *)(panel + (k0 + kb) * kgp32_width(J, 0));
                nbytes = (size_t)(kn * kgp32_width(J, 0)) * sizeof(float);
            }
            const size_t share = (nbytes / (size_t)nt + 63u) & ~(size_t)63;
            /* the r1 tiles of r + 1 rows in one call, then the others (a call runs its tiles in
               a loop, their shares of the prefetch one range) */
            for (int64_t t = 0, p = 0; t < nt;) {
                const int64_t rt = r + (t < r1), n = t < r1 ? r1 : nt - t;
                const size_t pa = (size_t)t * share < nbytes ? (size_t)t * share : nbytes;
                const size_t pe = pa + (size_t)n * share < nbytes ? pa + (size_t)n * share : nbytes;
                tiles[rt](cs, ns, A + p * lda, lda, Bp, w, C + p * ldc + jb, ldc, m, k0 == 0, bp, ep,
                          nx ? nx + pa : NULL, nx ? nx + pe : NULL, n);
                p += rt * n, t += n;
            }
        }
    }
#else
    (void)isa, (void)P, (void)J, (void)K, (void)sg, (void)nsg, (void)A, (void)lda, (void)panel, (void)C, (void)ldc,
        (void)ep;
#endif
}

void tosac_gemm_f32(uint32_t isa, int64_t P, int64_t J, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb, float *C,
                    int64_t ldc)
{
#ifdef TOSAC_KERNEL_X86
    if (isa == TOSAC_KISA_AVX512 && J >= 32 && K > 0) {
        kg512_gemm_f32(P, J, K, A, lda, B, ldb, C, ldc);
        return;
    }
    if (isa == TOSAC_KISA_AVX2 && J >= 16 && K > 0) {
        const int64_t J8 = J - J % 8;
        tosac_gemm_f32_avx2(P, J8, K, A, lda, B, ldb, C, ldc);
        if (J8 < J) kg_avx2_gemm_f32(P, J - J8, K, A, lda, B + J8, ldb, C + J8, ldc);
        return;
    }
#endif
    KG_DISPATCH(gemm_f32, (P, J, K, A, lda, B, ldb, C, ldc))
}

/* the largest KG_DW_PX and KG_DW_VB of the variants above */
#define KG_DW_MAX_PX 8
#define KG_DW_MAX_VB 64u

size_t tosac_dw_patch_bytes(int64_t KH, int64_t KW, int64_t sx, int64_t dx)
{
    /* [KH][span][widest vector], span the input columns of the widest tile */
    int64_t span = (KG_DW_MAX_PX - 1) * sx + (KW - 1) * dx + 1;
    return (size_t)(KH * span) * KG_DW_MAX_VB;
}

void tosac_dw_row_f32(uint32_t isa, float *acc, const float *x, const float *w, const tosac_dw_geom *g)
{
    KG_DISPATCH(dw_rows_f32, (acc, x, w, g, 0))
}

void tosac_dw_row_i8(uint32_t isa, int32_t *acc, const int8_t *x, const int16_t *w, const tosac_dw_geom *g, int32_t zp)
{
    KG_DISPATCH(dw_rows_i8, (acc, x, w, g, zp))
}

void tosac_axpy_f16acc(uint32_t isa, float *acc, float x, const float *w, int64_t n)
{
    KG_DISPATCH(axpy_f16, (acc, x, w, n))
}

void tosac_dw_acc_f16(uint32_t isa, float *acc, const float *x, const float *w, int64_t n)
{
    KG_DISPATCH(dw_f16, (acc, x, w, n))
}

void tosac_gemm_bias_store_f32(uint32_t isa, float *d, const float *acc, int64_t count, int64_t oc_n,
                               const tosac_gemm_epi *ep)
{
    KG_DISPATCH(bias_store_f32, (d, acc, count, oc_n, ep))
}
