/*
 * The AVX2 build of the fp32 panel GEMM (k_gemm_avx2.c), which tosac_gemm_f32_panel_seg calls at
 * TOSAC_KISA_AVX2: the same arguments, panels, segments and end as there, the same bits; and
 * tosac_gemm_f32 on B as it is. Not a public header.
 */
#ifndef TOSAC_KERNELS_K_GEMM_AVX2_H
#define TOSAC_KERNELS_K_GEMM_AVX2_H

#include "kernels/k_gemm.h"

#ifdef TOSAC_KERNEL_X86
#include <immintrin.h>

/* The fused RESCALE of 8 int32 lanes in the hi32 form (k_convert.c kr_avx2_hi32), as the int8
   convolution and depthwise tiles apply it to their sums in registers: H, the high half of the
   signed 32 x 32 product v * m, of the even lanes directly and of the odd ones after moving them
   down (mo: the odd multipliers moved down); (H + r) >> s is the single-round result; then + the
   output zero point and the clamp. */
__attribute__((target("avx2"), always_inline)) static inline __m256i tosac_avx2_rq_hi32(__m256i v, __m256i m, __m256i mo,
                                                                                      __m256i r, __m256i s, __m256i zp,
                                                                                      __m256i lo, __m256i hi)
{
    const __m256i h = _mm256_blend_epi32(_mm256_srli_epi64(_mm256_mul_epi32(v, m), 32),
                                         _mm256_mul_epi32(_mm256_srli_epi64(v, 32), mo), 0xAA);
    const __m256i y = _mm256_add_epi32(_mm256_srav_epi32(_mm256_add_epi32(h, r), s), zp);
    return _mm256_min_epi32(_mm256_max_epi32(y, lo), hi);
}

/* u + b in wrapping int32 lanes; a lane whose sum overflowed (its sign differs from both
   operands') sets the sign bit of that lane of *bad. The REQUIRE of acc + bias and of int32 sums. */
__attribute__((target("avx2"), always_inline)) static inline __m256i tosac_avx2_add_checked(__m256i u, __m256i b,
                                                                                          __m256i *bad)
{
    const __m256i t = _mm256_add_epi32(u, b);
    *bad = _mm256_or_si256(*bad, _mm256_and_si256(_mm256_xor_si256(u, t), _mm256_xor_si256(b, t)));
    return t;
}

void tosac_gemm_f32_panel_seg_avx2(int64_t P, int64_t J, int64_t K, const tosac_gemm_seg *sg, int64_t nsg,
                                   const float *A, int64_t lda, const float *panel, float *C, int64_t ldc,
                                   const tosac_gemm_epi *ep);
/* tosac_gemm_f32 at TOSAC_KISA_AVX2 for J a multiple of 8 (B as it is, rows ldb apart): the bits
   of the portable tiles. */
void tosac_gemm_f32_avx2(int64_t P, int64_t J, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
                         float *C, int64_t ldc);
#endif

#endif
