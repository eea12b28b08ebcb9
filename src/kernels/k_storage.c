/* Execution storage of elements (kernels/kernel.h), apart from the dispatch tables so that a
   program emitted by `tosac emit-c` links only the kernel families it calls. */
#include "kernels/kernel.h"

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
