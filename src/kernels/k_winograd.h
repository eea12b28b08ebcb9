/*
 * Winograd F(2x2, 3x3) for FP32 CONV2D (k_winograd.c), a variant of the conv family that
 * tosac_kernel_conv_prepare chooses for the shapes where it is faster than the direct GEMM path
 * (docs/RUNTIME.md: the rule, the accuracy, the opt-out TOSAC_KCALL_CONV_DIRECT).
 */
#ifndef TOSAC_KERNELS_K_WINOGRAD_H
#define TOSAC_KERNELS_K_WINOGRAD_H

#include "kernels/kernel.h"

/* Whether the call runs as Winograd: then *sizes holds its prepared bytes and scratch, and with
   dst (sizes->const_size bytes, 64-byte aligned) the transformed weights are written there.
   False (sizes untouched) for any call it does not take. */
bool tosac_wino_prepare(const tosac_kcall *c, tosac_kprep *sizes, void *dst);

/* Runs a call tosac_wino_prepare took, prep its bytes. */
tosac_status tosac_wino_run(tosac_kcall *c, const void *prep);

#endif
