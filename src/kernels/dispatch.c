/* Kernel dispatch tables, expanded from ops.def (a family without kernels is a link error). */
#include "kernels/kernel.h"

static const tosac_kernel_fn k_run[TOSAC_OP_COUNT] = {
#define TOSAC_OP(E, num, A, chk, acc, ins, outs) [num] = tosac_kernel_##chk,
#include "tosac/ops.def"
#undef TOSAC_OP
};

static const tosac_kernel_scratch_fn k_scratch[TOSAC_OP_COUNT] = {
#define TOSAC_OP(E, num, A, chk, acc, ins, outs) [num] = tosac_kernel_##chk##_scratch,
#include "tosac/ops.def"
#undef TOSAC_OP
};

tosac_kernel_fn tosac_kernel_for(uint32_t op) { return op < TOSAC_OP_COUNT ? k_run[op] : NULL; }

tosac_kernel_scratch_fn tosac_kernel_scratch_for(uint32_t op) { return op < TOSAC_OP_COUNT ? k_scratch[op] : NULL; }

size_t tosac_exec_elem_size(tosac_dtype t, bool f64)
{
    switch (t) {
    case TOSAC_DTYPE_BOOL:
    case TOSAC_DTYPE_INT4:
    case TOSAC_DTYPE_INT8: return 1;
    case TOSAC_DTYPE_INT16: return 2;
    case TOSAC_DTYPE_INT32: return 4;
    case TOSAC_DTYPE_INT48:
    case TOSAC_DTYPE_SHAPE: return 8;
    case TOSAC_DTYPE_FP32: return f64 ? 8 : 4;
    case TOSAC_DTYPE_FP16:
    case TOSAC_DTYPE_BF16: return f64 ? 8 : 2;
    case TOSAC_DTYPE_FP8E4M3:
    case TOSAC_DTYPE_FP8E5M2: return f64 ? 8 : 1;
    default: return 0;
    }
}
