/*
 * The int8 DEPTHWISE_CONV2D rows of the AVX2 level (k_idw_avx2.c), which k_conv.c's depthwise
 * driver takes at TOSAC_KISA_AVX2 for constant weights of the zoo's geometries: multiplier 1,
 * at least 8 channels, 3- or 5-column kernels at stride 1 or 2 along x, dilation 1 along x (any
 * kernel height, stride and dilation along y). Not a public header.
 */
#ifndef TOSAC_KERNELS_K_IDW_AVX2_H
#define TOSAC_KERNELS_K_IDW_AVX2_H

#include "kernels/k_gemm.h"

#define TOSAC_IDW_MAX_KH 8

/* Whether tosac_idw_avx2_row takes this geometry (C input channels, multiplier M). */
bool tosac_idw_avx2_fits(int64_t C, int64_t M, int64_t KH, int64_t KW, int64_t sx, int64_t dx);

/* The packed weights from w [KH][KW][C] int16 (weight minus its zero point, |w| <= 255): kernel
   rows in pairs, [ceil(KH/2)][KW][C] int32 each holding rows 2g (low half) and 2g + 1 (high half,
   0 past the last row), then the sums over the taps of each channel's weights [C] int32. */
size_t tosac_idw_avx2_pack_bytes(int64_t KH, int64_t KW, int64_t C);
void tosac_idw_avx2_pack(int64_t KH, int64_t KW, int64_t C, const int16_t *w, void *dst);

/*
 * Output pixels ox0 .. ox0 + n - 1 of output row oy of one image: for channel c the exact sum
 * over the taps (ky, kx) whose input (iy, ix) = (oy * sy - pt + ky * dy, ox * sx - pl + kx) lies
 * inside of (x[iy][ix][c] - zp) * w[ky][kx][c], plus bias[c] (bias[0] when bcast) wrapped to
 * int32; returns nonzero when such an addition overflowed (the REQUIRE on acc + bias). The
 * results go to out [n][C] as int32, or with rq through the fused RESCALE as rq->ob-byte
 * elements (k_gemm.h tosac_gemm_rq). scratch: tosac_idw_avx2_scratch_bytes() bytes.
 */
typedef struct tosac_idw_geom {
    const int8_t *x; /* the image [IH][IW][C] */
    void *scratch;
    int64_t C, IH, IW, KH, KW, sy, sx, dy, pt, pl;
    int64_t oy, ox0, n;
    int32_t zp;
    const int32_t *bias;
    bool bcast;
    const tosac_gemm_rq *rq;
} tosac_idw_geom;
size_t tosac_idw_avx2_scratch_bytes(int64_t KH, int64_t C);
uint32_t tosac_idw_avx2_row(const tosac_idw_geom *g, const void *packed, void *out);

#endif
