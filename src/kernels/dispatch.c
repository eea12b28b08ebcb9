/* Kernel dispatch tables, expanded from ops.def (a family without kernels is a link error). */
#include "kernels/kernel.h"

static const tosac_kernel_fn k_run[TOSAC_OP_COUNT] = {
#define TOSAC_OP(E, num, A, chk, acc, ins, outs) [num] = tosac_kernel_##chk,
#include "tosac/ops.def"
#undef TOSAC_OP
};

static const tosac_kernel_prepare_fn k_prepare[TOSAC_OP_COUNT] = {
#define TOSAC_OP(E, num, A, chk, acc, ins, outs) [num] = tosac_kernel_##chk##_prepare,
#include "tosac/ops.def"
#undef TOSAC_OP
};

tosac_kernel_fn tosac_kernel_for(uint32_t op) { return op < TOSAC_OP_COUNT ? k_run[op] : NULL; }

tosac_kernel_prepare_fn tosac_kernel_prepare_for(uint32_t op) { return op < TOSAC_OP_COUNT ? k_prepare[op] : NULL; }

static uint32_t isa_cap = TOSAC_KISA_MVE;

void tosac_kernel_limit_isa(uint32_t level) { isa_cap = level; }

uint32_t tosac_kernel_isa(void)
{
    uint32_t l = TOSAC_KISA_PORTABLE;
#ifdef TOSAC_KERNEL_X86
    /* both levels' fp32 GEMMs fuse with vfmadd: a CPU without FMA runs the portable level */
    const bool fma = __builtin_cpu_supports("fma");
    if (fma && __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512f"))
        l = TOSAC_KISA_AVX512;
    else if (fma && __builtin_cpu_supports("avx2"))
        l = TOSAC_KISA_AVX2;
#endif
#ifdef __ARM_FEATURE_MVE
    l = TOSAC_KISA_MVE;
#endif
    return l < isa_cap ? l : isa_cap;
}
