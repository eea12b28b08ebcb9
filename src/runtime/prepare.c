/*
 * The prepare step: every kernel's prepare (kernels/kernel.h) writes its prepared constants (packed
 * weights, per-channel tables) at the offset plan.c gave it, once per program. It reads only
 * constant operands, which build.c has already converted, so the bytes depend on the graph, the
 * fusion choices and the instruction-set level only.
 */
#include "core/diag.h"
#include "runtime/program.h"

tosac_status rt_prepare(tosac_program *p, uint8_t *dst, tosac_diag *d)
{
    for (uint32_t k = 0; k < p->n_ops; k++) {
        rt_op *op = &p->ops[k];
        if (!op->prep_size) continue;
        tosac_kprep sz = {0, 0, 0};
        op->call.epi = op->has_epi ? &op->epi : NULL;
        if (tosac_kernel_prepare_for(op->op)(&op->call, &sz, dst + op->prep_off) != TOSAC_OK ||
            sz.const_size != op->prep_size) {
            char label[256];
            rt_op_label(p, k, label, sizeof label);
            return tosac_diag_add(d, TOSAC_ERR_INTERNAL, "%s: the kernel's prepare failed", label);
        }
    }
    p->prepared = dst;
    p->dirty = true;
    return TOSAC_OK;
}
