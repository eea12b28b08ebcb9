/*
 * Internal building blocks of the dot-product kernels (conv family, MATMUL, depthwise): row
 * conversions into the working types and small GEMM / axpy micro-kernels. Portable C that
 * compilers vectorise without reassociating floating-point sums; on x86-64 (GCC, Clang) the hot
 * ones also exist as AVX2 and AVX-512 VNNI builds of the same source, chosen at run time.
 *
 * Working types:
 *   integer rows: int16_t holding (x - zero_point) (i8/i4 values minus an i8 zp fit in 9 bits, i16
 *                 values have zp 0), products summed in int32 over chunks the caller bounds;
 *   fp rows:      float (values of fp32/fp16/bf16/fp8 are exact in float) or double (precise mode).
 * The kernels that exist in several variants take `isa`, the calling kernel's c->isa (chosen once
 * at create, kernel.h; an MVE or unknown level runs the portable build).
 */
#ifndef TOSAC_KERNELS_K_GEMM_H
#define TOSAC_KERNELS_K_GEMM_H

#include <stdbool.h>
#include <stdint.h>

#include "core/fp.h"
#include "kernels/kernel.h"

/* dst[i] = t[off + i] - zp for INT4/INT8/INT16 tensors (n elements). */
void tosac_krow_i16(int16_t *dst, const tosac_ktensor *t, int64_t off, int64_t n, int32_t zp);
/* dst[i] = t[off + i] as float for FP32/FP16/BF16/FP8 tensors in normal (non-f64) storage. */
void tosac_krow_f32(float *dst, const tosac_ktensor *t, int64_t off, int64_t n);
/* dst[i] = t[off + i] as double for any FP tensor (f64 storage included). */
void tosac_krow_f64(double *dst, const tosac_ktensor *t, int64_t off, int64_t n);

/* Stores n floats rounded once to t's FP storage (fp32, fp16, bf16, fp8; double when f64). */
void tosac_kstore_row_f32(const tosac_ktensor *t, int64_t off, const float *v, int64_t n);
/* Stores n doubles rounded once to t's FP storage (fp32, fp16, bf16, fp8; copied when f64). */
void tosac_kstore_row_f64(const tosac_ktensor *t, int64_t off, const double *v, int64_t n);

/*
 * C[p*ldc + j] = sum_k A[p*lda + k] * B[j*ldb + k] for p < P, j < J, k < K (int32 arithmetic; the
 * caller bounds K so that no partial sum can overflow int32).
 */
void tosac_gemm_i16(uint32_t isa, int64_t P, int64_t J, int64_t K, const int16_t *A, int64_t lda, const int16_t *B, int64_t ldb,
                    int32_t *C, int64_t ldc);

/* Pair-interleaved int16 weights in blocks of W columns, each [ceil(K/2)][W] int32 holding the
   int16 pair (B[j][2q] - zp, B[j][2q+1] - zp) (zero beyond K and J), B[j][k] = w[j*sj + k*sk] in
   int8 storage: the panels below (W = 32) and the AVX2 level's (W = 16, tosac_igemm_avx2). */
size_t tosac_gemm_i16_pairs_bytes(int64_t J, int64_t K, int64_t W);
void tosac_gemm_i16_pack_pairs(int64_t J, int64_t K, int64_t W, const int8_t *w, int64_t sj, int64_t sk, int32_t zp,
                               int32_t *panel);
/*
 * Pair-interleaved int16 weight panels for tosac_gemm_i16_panel (AVX-512 VNNI): B [J][K] (the
 * dot-form weights) as blocks of 32 columns, each [ceil(K/2)][32] int32 holding the int16 pair
 * (B[j][2q], B[j][2q+1]) (zero beyond K and J). tosac_gemm_i16_panel_bytes() is the size.
 */
size_t tosac_gemm_i16_panel_bytes(int64_t J, int64_t K);
/* Packs B[j][k] = w[j*sj + k*sk] - zp from int8 storage (INT8, or INT4 one per byte). */
void tosac_gemm_i16_pack_panel(int64_t J, int64_t K, const int8_t *w, int64_t sj, int64_t sk, int32_t zp,
                               int32_t *panel);
/*
 * C[p*ldc + j] = sum_k A[p*lda + k] * B[j][k] from the panels; A rows hold an even number of
 * elements (lda even, A[p*lda + K] = 0 when K is odd). Same bits as tosac_gemm_i16 (integer sums
 * are exact within the caller's K bound). Only when tosac_kernel_isa() is TOSAC_KISA_AVX512.
 */
void tosac_gemm_i16_panel(int64_t P, int64_t J, int64_t K, const int16_t *A, int64_t lda, const int32_t *panel,
                          int32_t *C, int64_t ldc);

/*
 * C[p*ldc + j] = sum over k = 0, 1, ..., K-1 (in that order, starting from +0) of
 * A[p*lda + k] * B[k*ldb + j], every product and every addition rounded in the working type
 * (no fused multiply-add, no reassociation): the spec's summation order for each output.
 */
void tosac_gemm_f32(uint32_t isa, int64_t P, int64_t J, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
                    float *C, int64_t ldc);
/*
 * s8 x u8 panels for tosac_gemm_u8_panel (AVX-512 VNNI vpdpbusd): the int8 weights B [J][K]
 * (weight zero point 0) plus 128, as unsigned bytes, in blocks of 32 columns, each
 * [ceil(K/4)][32][4] bytes, a last block of at most 16 (8) columns [ceil(K/4)][16 (8)][4] (zero
 * beyond K and J), followed by one int32 correction per column,
 * zp * sum_k B[j][k] - bias[j * bstep] (wrapping; zp the input zero point; bias NULL: none, so
 * the results are the sums, else the sums plus the bias). The rows of A are the int8 inputs
 * themselves (padding taps: the zero point), K rounded up to a multiple of 4 (any bytes beyond K:
 * their weights are 0): with the row sums rsum[p] = sum_{k<K} A[p][k], which the GEMM computes,
 * sum_k A * (B + 128) - 128 * rsum - corr is sum_k (x - zp) * B exactly (the caller bounds K so that it fits int32: every partial sum then
 * does too, modulo 2^32). Only when tosac_kernel_isa() is TOSAC_KISA_AVX512. The GEMM computes
 * columns [j0, j1) of C (j0 a multiple of 64, j1 one too or J), each the same way for any range.
 * K is in rows of `run` (a convolution's kernel rows, KW x IC; K itself when not a convolution):
 * the panels end with zp * the sum of B[j] over each row, for tosac_gemm_u8_panel_seg.
 */
size_t tosac_gemm_u8_panel_bytes(int64_t J, int64_t K, int64_t run);
void tosac_gemm_u8_pack_panel(int64_t J, int64_t K, int64_t run, const int8_t *w, int32_t zp, const int32_t *bias,
                              int64_t bstep, void *dst);
/* A fused RESCALE the u8 GEMM applies to its sums while they are in registers (the int32 sums never
   reach memory), in the form k_convert.c calls hi32 (SINGLE_ROUND, 33 <= shift <= 62, input zero
   point 0, no REQUIRE can fail): the sum v of column j becomes
   min(max(((floor(v * m32[j] / 2^32) + r32[j]) >> s32[j]) + ozp, lo), hi), stored as an ob-byte
   integer (ob 1 or 2). uniform: one scale, whose tables hold it in 64 entries (a tile reads the
   entries of its columns from a multiple of 32 on). */
typedef struct tosac_gemm_rq {
    const int32_t *m32, *r32, *s32;
    bool uniform;
    int32_t ozp, lo, hi;
    unsigned ob;
} tosac_gemm_rq;
/* rq's tables from column j0 on, for a column range of its GEMM (a uniform rq's are one entry). */
static inline tosac_gemm_rq tosac_gemm_rq_from(tosac_gemm_rq rq, int64_t j0)
{
    if (!rq.uniform) rq.m32 += j0, rq.r32 += j0, rq.s32 += j0;
    return rq;
}
/* rq NULL: C is int32 (the sums); else C holds rq->ob-byte elements, row p at p * ldc. */
void tosac_gemm_u8_panel(int64_t P, int64_t J, int64_t K, const int8_t *A, int64_t lda, const void *panel, void *C,
                         int64_t ldc, int64_t j0, int64_t j1, const tosac_gemm_rq *rq);

/*
 * The integer GEMM of the AVX2 level (k_igemm_avx2.c; only when tosac_kernel_isa() is at least
 * TOSAC_KISA_AVX2): pair-interleaved int16 weight panels as for tosac_gemm_i16_panel, in blocks of
 * 16 columns ([ceil(K/2)][16] int32 each, tosac_igemm_avx2_panel_bytes()), packed from int8
 * storage B [J][K] (INT8, or INT4 one per byte) minus zp. tosac_igemm_avx2 computes the sums of
 * tosac_gemm_i16 (A rows of an even number of elements, A[p*lda + K] = 0 when K is odd; the caller
 * bounds K) and ends them in registers: + bias[j] (bias[0] when bcast; none when NULL) wrapped to
 * int32, returning nonzero when such an addition overflowed (the REQUIRE on acc + bias), then with
 * rq the fused RESCALE (C of rq->ob-byte elements), else int32 C; row p at p * ldc.
 */
#define TOSAC_IGEMM_AVX2_W 16 /* columns per panel block */
size_t tosac_igemm_avx2_panel_bytes(int64_t J, int64_t K);
void tosac_igemm_avx2_pack(int64_t J, int64_t K, const int8_t *B, int32_t zp, int32_t *panel);
uint32_t tosac_igemm_avx2(int64_t P, int64_t J, int64_t K, const int16_t *A, int64_t lda, const int32_t *panel,
                          void *C, int64_t ldc, const int32_t *bias, bool bcast, const tosac_gemm_rq *rq);
/* The same end for sums computed elsewhere: S[p*lds + j] (p < P, j < J) + bias, then rq or int32,
   into C as tosac_igemm_avx2 stores it (C may be S itself when ldc == lds and C is int32). */
uint32_t tosac_igemm_avx2_end(int64_t P, int64_t J, const int32_t *S, int64_t lds, void *C, int64_t ldc,
                              const int32_t *bias, bool bcast, const tosac_gemm_rq *rq);
/* The exact INT8 Winograd's output transform with that end (k_iwinograd.c): tile t of a tile row of TW has
   its 16 planes' sums at M[xi * ms + t * ldm + j] (j < J); its output pixel (i, j) is column 2t + j of
   row0 (i = 0) or row1 (i = 1; NULL: past the output), stored when 2t + j < OW, pixels ldc elements
   apart. */
uint32_t tosac_igemm_avx2_wino_end(int64_t TW, int64_t J, const int32_t *M, size_t ms, int64_t ldm, void *row0,
                                   void *row1, int64_t OW, int64_t ldc, const int32_t *bias, bool bcast,
                                   const tosac_gemm_rq *rq);

/*
 * fp32 weight panels for tosac_gemm_f32_panel (AVX-512 and AVX2): B [K][J] as blocks of 64
 * columns, each [K][64], the last one [K][w] with w the columns left rounded up to a multiple of 8
 * (zero beyond J); tosac_gemm_f32_panel_at(J, K, k, j) is the index of element (k, j) and
 * tosac_gemm_f32_panel_bytes() the size. tosac_gemm_f32_panel computes what tosac_gemm_f32
 * computes from B (the same bits), ended by ep when not NULL; only with isa TOSAC_KISA_AVX512 or
 * TOSAC_KISA_AVX2 (the calling kernel's c->isa, which the CPU runs).
 */
size_t tosac_gemm_f32_panel_bytes(int64_t J, int64_t K);
size_t tosac_gemm_f32_panel_at(int64_t J, int64_t K, int64_t k, int64_t j);
/* An end for tosac_gemm_f32_panel: C = bias[j] + sum (bias[0] when bcast; one float addition),
   then with clamp the fused CLAMP: x >= lo ? x : lo, then < hi ? : hi, NaN -> lo when ignore else
   NaN (tosac_clamp_f32_row). */
typedef struct tosac_gemm_epi {
    const float *bias;
    bool bcast, clamp, ignore;
    float lo, hi;
} tosac_gemm_epi;
void tosac_gemm_f32_panel(uint32_t isa, int64_t P, int64_t J, int64_t K, const float *A, int64_t lda, const float *panel,
                          float *C, int64_t ldc, const tosac_gemm_epi *ep);
/* The sum over k in segments (sg[0 .. nsg - 1], nsg <= TOSAC_GEMM_MAX_SEG, b ascending and not
   overlapping): row r's terms of segment s are A[sg[s].a + r * lda + i] * B[sg[s].b + i][j], i <
   sg[s].n, in that order; k outside every segment is skipped. A convolution read from its input
   (no im2col): one segment per kernel row inside the input, a of its first input element, b of
   its first weight row, lda the input pixels' stride. tosac_gemm_f32_panel is one segment {0, 0, K}. */
typedef struct tosac_gemm_seg {
    int64_t a, b, n;
} tosac_gemm_seg;
#define TOSAC_GEMM_MAX_SEG 16
/* The walk of a panel GEMM over K blocks (every ISA's tiles): blocks of equal size of at most kmax
   (K = 576 with kmax 512: one block, not 512 + 64). */
static inline int64_t tosac_gemm_kstep(int64_t K, int64_t kmax)
{
    const size_t nkb = ((size_t)K + (size_t)kmax - 1) / (size_t)kmax;
    return nkb ? (int64_t)(((size_t)K + nkb - 1) / nkb) : 1;
}
/* The parts of the segments sg[0 .. nsg - 1] inside the K block [k0, k0 + kb) into cs, their B
   rows counted from k0; returns how many. */
static inline int64_t tosac_gemm_seg_clip(const tosac_gemm_seg *sg, int64_t nsg, int64_t k0, int64_t kb,
                                          tosac_gemm_seg *cs)
{
    int64_t ns = 0;
    for (int64_t s = 0; s < nsg; s++) {
        const int64_t lo = sg[s].b > k0 ? sg[s].b : k0, e = sg[s].b + sg[s].n;
        const int64_t hi = e < k0 + kb ? e : k0 + kb;
        if (lo < hi) cs[ns++] = (tosac_gemm_seg){sg[s].a + (lo - sg[s].b), lo - k0, hi - lo};
    }
    return ns;
}
/* The w biases of the panel block at column jb for the tile's end: ep's own where the block's
   columns all exist, else copied into buf (broadcast, zero beyond J); NULL without ep. */
static inline const float *tosac_gemm_block_bias(const tosac_gemm_epi *ep, int64_t J, int64_t jb, int64_t w, float *buf)
{
    if (!ep) return NULL;
    if (!ep->bcast && jb + w <= J) return ep->bias + jb;
    for (int64_t j = 0; j < w; j++) buf[j] = ep->bcast ? ep->bias[0] : jb + j < J ? ep->bias[jb + j] : 0.0f;
    return buf;
}
void tosac_gemm_f32_panel_seg(uint32_t isa, int64_t P, int64_t J, int64_t K, const tosac_gemm_seg *sg, int64_t nsg,
                              const float *A, int64_t lda, const float *panel, float *C, int64_t ldc,
                              const tosac_gemm_epi *ep);
/* The sum over k in segments, as tosac_gemm_f32_panel_seg reads them: here every segment is
   one whole row of `run` (b a multiple of run, n = run, run a multiple of 4), and the rows no
   segment covers count as inputs equal to the zero point (a convolution's kernel rows in the
   padding): the results of the patch rows those pixels would have. */
void tosac_gemm_u8_panel_seg(int64_t P, int64_t J, int64_t K, int64_t run, const tosac_gemm_seg *sg, int64_t nsg,
                             const int8_t *A, int64_t lda, const void *panel, void *C, int64_t ldc, int64_t j0,
                             int64_t j1, const tosac_gemm_rq *rq);
/* d[i + j] = the end ep of acc[i + j] (bias[j]; i a multiple of oc_n, count elements): what
   tosac_gemm_f32_panel stores, for sums computed elsewhere (d and acc do not overlap). */
void tosac_gemm_bias_store_f32(uint32_t isa, float *d, const float *acc, int64_t count, int64_t oc_n,
                               const tosac_gemm_epi *ep);
void tosac_gemm_f64(int64_t P, int64_t J, int64_t K, const double *A, int64_t lda, const double *B, int64_t ldb,
                    double *C, int64_t ldc);

/*
 * Rounds a float to the nearest fp16 value (ties to even; overflow to +-inf, subnormals kept, the
 * sign of zero kept), returned as float: the value of tosac_fp16_to_fp32(tosac_fp32_to_fp16(f)),
 * branch-free so that loops using it vectorise. Adding and subtracting c = +-2^(e+13), e the
 * exponent of f clamped to [-14, 16], rounds f (to nearest even, as every float addition does) at
 * the fp16 quantum of its binade, 2^(e-10), or 2^-24 below the fp16 normal range; both additions
 * are exact apart from that one rounding. Needs round-to-nearest, the default mode.
 */
static inline float tosac_round_fp16(float f)
{
    uint32_t u = tosac_fp32_bits(f), s = u & 0x80000000u;
    int32_t e = (int32_t)((u >> 23) & 0xFFu) - 127;
    e = e < -14 ? -14 : e > 16 ? 16 : e;
    float c = tosac_fp32_from_bits(s | ((uint32_t)(e + 140) << 23));
    float t = f + c;
    t = t - c;
    uint32_t r = tosac_fp32_bits(t) | s, a = r & 0x7FFFFFFFu;
    r = (a > 0x477FE000u && a <= 0x7F800000u) ? (s | 0x7F800000u) : r; /* beyond 65504: inf */
    return tosac_fp32_from_bits(r);
}

/*
 * Depthwise convolution over output pixels ox0 .. ox0 + n - 1 of one output row, C input channels,
 * channel multiplier M (output channel j = c * M + m reads input channel c = j / M):
 * acc[i*C*M + j] = the sum over the kernel rows ky < nky (the caller passes x = the input row of
 * the first of them, at column 0, w = that kernel row's weights [nky][KW][C*M], and only kernel
 * rows inside the input; the next row is ystep elements further) and the kernel columns kx whose
 * column ix = (ox0 + i) * sx - pl + kx * dx is inside [0, IW), in the order ky, kx, of
 * x[ky * ystep + ix * C + j / M] * w[(ky * KW + kx) * C * M + j]. fp32: from +0, one rounding per
 * product and per addition (the reference order), only when every weight is finite; int8:
 * (x - zp) * w (w int16) summed exactly in int32 (the caller bounds the taps). patch: scratch of
 * tosac_dw_patch_bytes() bytes. fp32 with ep: acc receives what tosac_gemm_bias_store_f32 would
 * store from those sums (bias[j], clamp), so it can be the output itself. int8 with ibias: acc
 * receives sum + ibias[j] (ibias[0] when ibcast) wrapped to int32, and *bad is set to 1 when an
 * addition overflowed (the REQUIRE on acc + bias).
 */
typedef struct tosac_dw_geom {
    int64_t C, M, KW, IW, sx, dx, pl;
    int64_t nky, ystep;
    int64_t ox0, n;
    void *patch;
    const tosac_gemm_epi *ep;
    const int32_t *ibias;
    bool ibcast;
    uint32_t *bad;
} tosac_dw_geom;
size_t tosac_dw_patch_bytes(int64_t KH, int64_t KW, int64_t sx, int64_t dx);
void tosac_dw_row_f32(uint32_t isa, float *acc, const float *x, const float *w, const tosac_dw_geom *g);
void tosac_dw_row_i8(uint32_t isa, int32_t *acc, const int8_t *x, const int16_t *w, const tosac_dw_geom *g, int32_t zp);
/* fp16 accumulation (every product and sum rounded to fp16): acc[i] = r16(acc[i] + r16(x * w[i]))
 * with one x, or with x[i]. */
void tosac_axpy_f16acc(uint32_t isa, float *acc, float x, const float *w, int64_t n);
void tosac_dw_acc_f16(uint32_t isa, float *acc, const float *x, const float *w, int64_t n);

/* Largest number of int32 partial-sum terms whose products are each at most max_prod in magnitude. */
static inline int64_t tosac_gemm_i32_chunk(int64_t max_prod)
{
    int64_t n = max_prod > 0 ? INT32_MAX / max_prod : INT32_MAX;
    return n < 1 ? 1 : n;
}

#endif
