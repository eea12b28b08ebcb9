/*
 * Winograd F(2x2, 3x3) for FP32 CONV2D (k_winograd.c), a variant of the conv family that
 * tosac_kernel_conv_prepare chooses for the shapes where it is faster than the direct GEMM path
 * (docs/RUNTIME.md: the rule, the accuracy, the opt-out TOSAC_KCALL_CONV_DIRECT).
 */
#ifndef TOSAC_KERNELS_K_WINOGRAD_H
#define TOSAC_KERNELS_K_WINOGRAD_H

#include "kernels/kernel.h"

/* The geometry both Winograd forms (FP32 here, exact INT8 in k_iwinograd.c) tile: NHWC input,
   [K][3][3][C] weights, TH x TW tiles of 2x2 output pixels per image. The plans hold it as their
   first fields (a union with TOSAC_WINO_GEOM's anonymous struct, so g->N reads it). */
#define TOSAC_WINO_GEOM_FIELDS int64_t N, IH, IW, C, OH, OW, K, pt, pl, TH, TW
typedef struct tosac_wino_geom {
    TOSAC_WINO_GEOM_FIELDS;
} tosac_wino_geom;
#define TOSAC_WINO_GEOM                                                                                  \
    union {                                                                                              \
        tosac_wino_geom geo;                                                                             \
        struct {                                                                                         \
            TOSAC_WINO_GEOM_FIELDS;                                                                      \
        };                                                                                               \
    }

/* Whether c is a CONV2D both forms can tile (rank 4, a 3x3 kernel of stride and dilation 1, the
   five operands, consistent channel counts), its geometry then in *g. */
bool tosac_wino_geom_of(const tosac_kcall *c, tosac_wino_geom *g);

/* Whether the call runs as Winograd: then *sizes holds its prepared bytes and scratch, and with
   dst (sizes->const_size bytes, 64-byte aligned) the transformed weights are written there.
   False (sizes untouched) for any call it does not take. */
bool tosac_wino_prepare(const tosac_kcall *c, tosac_kprep *sizes, void *dst);

/* Runs a call tosac_wino_prepare took, prep its bytes. */
tosac_status tosac_wino_run(tosac_kcall *c, const void *prep);

/* Exact integer Winograd F(2x2, 3x3) for INT8 CONV2D at the AVX2 level (k_iwinograd.c): the
   direct path's bits (docs/RUNTIME.md: the form, the bound on the weights, the shapes it takes).
   The same interface; izp the checked input zero point. */
bool tosac_iwino_prepare(const tosac_kcall *c, tosac_kprep *sizes, void *dst);
tosac_status tosac_iwino_run(tosac_kcall *c, const void *prep, int32_t izp);

#endif
