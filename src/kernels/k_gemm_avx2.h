/*
 * The AVX2 build of the fp32 panel GEMM (k_gemm_avx2.c), which tosac_gemm_f32_panel_seg calls at
 * TOSAC_KISA_AVX2: the same arguments, panels, segments and end as there, the same bits; and
 * tosac_gemm_f32 on B as it is. Not a public header.
 */
#ifndef TOSAC_KERNELS_K_GEMM_AVX2_H
#define TOSAC_KERNELS_K_GEMM_AVX2_H

#include "kernels/k_gemm.h"

#ifdef TOSAC_KERNEL_X86
void tosac_gemm_f32_panel_seg_avx2(int64_t P, int64_t J, int64_t K, const tosac_gemm_seg *sg, int64_t nsg,
                                   const float *A, int64_t lda, const float *panel, float *C, int64_t ldc,
                                   const tosac_gemm_epi *ep);
/* tosac_gemm_f32 at TOSAC_KISA_AVX2 for J a multiple of 8 (B as it is, rows ldb apart): the bits
   of the portable tiles. */
void tosac_gemm_f32_avx2(int64_t P, int64_t J, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
                         float *C, int64_t ldc);
#endif

#endif
