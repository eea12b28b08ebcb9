/*
 * Kernel families that the runtime's executor handles itself (src/runtime/exec.c): CONST and
 * CONST_SHAPE (their results live in the constants buffer), COND_IF and WHILE_LOOP (the executor
 * runs the sub-blocks), the variable operators (the executor copies to and from the variables
 * buffer) and CUSTOM (no custom operator library is linked). They exist so that the dispatch table
 * expanded from ops.def is complete; calling one of the first five is a runtime bug.
 */
#include "kernels/kernel.h"

#define TOSAC_EXECUTOR_FAMILY(fam)                                                           \
    tosac_status tosac_kernel_##fam(tosac_kcall *c)                                          \
    {                                                                                        \
        return tosac_kfail(c, TOSAC_ERR_INTERNAL, "handled by the executor, not a kernel"); \
    }                                                                                        \
    TOSAC_KERNEL_NO_PREPARE(fam)

TOSAC_EXECUTOR_FAMILY(const)
TOSAC_EXECUTOR_FAMILY(const_shape)
TOSAC_EXECUTOR_FAMILY(cond_if)
TOSAC_EXECUTOR_FAMILY(while_loop)
TOSAC_EXECUTOR_FAMILY(variable)

tosac_status tosac_kernel_custom(tosac_kcall *c)
{
    return tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "no custom operator library");
}

TOSAC_KERNEL_NO_PREPARE(custom)
