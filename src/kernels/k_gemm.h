/*
 * Internal building blocks of the dot-product kernels (conv family, MATMUL): row conversions into
 * the working types and small GEMM micro-kernels. Plain portable C; the GEMMs are written so that
 * compilers vectorise them without reassociating floating-point sums.
 *
 * Working types:
 *   integer rows: int16_t holding (x - zero_point) (i8/i4 values minus an i8 zp fit in 9 bits, i16
 *                 values have zp 0), products summed in int32 over chunks the caller bounds;
 *   fp rows:      float (values of fp32/fp16/bf16/fp8 are exact in float) or double (precise mode).
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

/*
 * C[p*ldc + j] = sum_k A[p*lda + k] * B[j*ldb + k] for p < P, j < J, k < K (int32 arithmetic; the
 * caller bounds K so that no partial sum can overflow int32).
 */
void tosac_gemm_i16(int64_t P, int64_t J, int64_t K, const int16_t *A, int64_t lda, const int16_t *B, int64_t ldb,
                    int32_t *C, int64_t ldc);

/*
 * C[p*ldc + j] = sum over k = 0, 1, ..., K-1 (in that order, starting from +0) of
 * A[p*lda + k] * B[k*ldb + j], every product and every addition rounded in the working type
 * (no fused multiply-add, no reassociation): the spec's summation order for each output.
 */
void tosac_gemm_f32(int64_t P, int64_t J, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
                    float *C, int64_t ldc);
void tosac_gemm_f64(int64_t P, int64_t J, int64_t K, const double *A, int64_t lda, const double *B, int64_t ldb,
                    double *C, int64_t ldc);

/*
 * Rounds a float to the nearest fp16 value (ties to even; overflow to +-inf, subnormals kept),
 * returned as float: the same value as tosac_fp16_to_fp32(tosac_fp32_to_fp16(f)), inline.
 */
static inline float tosac_round_fp16(float f)
{
    uint32_t u = tosac_fp32_bits(f), a = u & 0x7FFFFFFFu, s = u & 0x80000000u;
    if (a >= 0x7F800000u) return f;                                  /* inf, NaN */
    if (a >= 0x477FF000u) return tosac_fp32_from_bits(s | 0x7F800000u); /* >= 65520: inf */
    if (a >= 0x38800000u) {                                          /* fp16 normal: keep 10 bits */
        a += 0x0FFFu + ((a >> 13) & 1u);
        return tosac_fp32_from_bits(s | (a & ~0x1FFFu));
    }
    uint32_t e = a >> 23;                                            /* fp16 subnormal: step 2^-24 */
    if (e < 96u) return tosac_fp32_from_bits(s);
    uint32_t m = (a & 0x7FFFFFu) | 0x800000u, sh = 126u - e, q = m >> sh, rem = m & ((1u << sh) - 1u),
             half = 1u << (sh - 1u);
    if (rem > half || (rem == half && (q & 1u))) q++;
    float r = (float)q * 5.9604644775390625e-8f;
    return s ? -r : r;
}

/* Depthwise taps over n channels: acc[i] += (x[i] - zp) * w[i]; acc[i] = acc[i] + x[i] * w[i] (float,
 * one rounding per product and per addition). */
void tosac_dw_acc_i8(int32_t *acc, const int8_t *x, const int16_t *w, int64_t n, int32_t zp);
void tosac_dw_acc_f32(float *acc, const float *x, const float *w, int64_t n);

/*
 * Test hook: caps the instruction-set variant of the micro-kernels at `level` (0 portable C for
 * the baseline target, 1 AVX2, 2 AVX-512 VNNI = no cap, the default) even where the CPU offers
 * more; results are identical at every level. Not thread-safe; tests only.
 */
void tosac_gemm_limit_isa(int level);

/* Largest number of int32 partial-sum terms whose products are each at most max_prod in magnitude. */
static inline int64_t tosac_gemm_i32_chunk(int64_t max_prod)
{
    int64_t n = max_prod > 0 ? INT32_MAX / max_prod : INT32_MAX;
    return n < 1 ? 1 : n;
}

#endif
