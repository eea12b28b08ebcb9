/*
 * Fused epilogues, chosen once at create. A RESCALE that is the only reader of the int32 result of
 * a CONV2D / CONV3D / DEPTHWISE_CONV2D / TRANSPOSE_CONV2D / MATMUL (and a CLAMP that is the only
 * reader of that RESCALE's result), or a CLAMP that is the only reader of the fp32 result of a
 * convolution, runs inside the producer's output loop (kernels/k_epilogue.h), so the intermediate
 * tensor is never written: the producer gets rt_op.epi and the absorbed operators fused_into. The
 * results are the bits the operators give one by one.
 *
 * The memory plan still gives the intermediate values storage: with an op callback set (which
 * promises every operator's result, tosac_program_op_output) the executor runs the operators one
 * by one. The fused result is live from the producer's step on (plan.c).
 */
#include "core/alloc.h"
#include "kernels/k_epilogue.h"
#include "runtime/program.h"

/* The only operator reading value v, if v is an ordinary arena value of its instance read by
   exactly one operand of one operator and by nothing else (block output, copy, capture). */
static uint32_t sole_reader(const tosac_program *p, uint32_t v, const uint32_t *readers)
{
    const rt_val *x = &p->vals[v];
    if (x->kind != RV_ARENA || x->block_io || readers[v] == RT_NONE) return RT_NONE;
    return readers[v];
}

void rt_fuse(tosac_program *p)
{
    /* readers[v]: the one operator reading v; RT_NONE for none or several (or other uses) */
    uint32_t *readers = tosac_malloc(((size_t)p->n_vals + 1) * sizeof(uint32_t));
    uint32_t *count = tosac_calloc((size_t)p->n_vals + 1, sizeof(uint32_t));
    if (!readers || !count) goto out; /* fusion is an optimisation: none without memory */
    for (uint32_t v = 0; v < p->n_vals; v++) {
        readers[v] = RT_NONE;
        if (p->vals[v].kind == RV_LINK) count[rt_final_val(p, v)] += 2; /* a capture or binding */
    }
    for (uint32_t k = 0; k < p->n_ops; k++) {
        const rt_op *op = &p->ops[k];
        for (uint32_t j = 0; j < op->n_in; j++) {
            uint32_t v = p->idx[op->in_base + j];
            count[v]++;
            readers[v] = k;
        }
    }
    for (uint32_t c = 0; c < p->n_copies; c++) count[p->copies[c].src] += 2;
    for (uint32_t v = 0; v < p->n_vals; v++)
        if (count[v] != 1) readers[v] = RT_NONE;

    for (uint32_t k = 0; k < p->n_ops; k++) {
        rt_op *op = &p->ops[k];
        bool producer = op->op == TOSAC_OP_CONV2D || op->op == TOSAC_OP_CONV3D || op->op == TOSAC_OP_DEPTHWISE_CONV2D ||
                        op->op == TOSAC_OP_TRANSPOSE_CONV2D || op->op == TOSAC_OP_MATMUL;
        if (!producer || op->mode != M_KERNEL || op->n_out != 1 || op->fused_into != RT_NONE) continue;
        uint32_t x = p->idx[op->out_base];
        uint32_t r = sole_reader(p, x, readers);
        if (r != RT_NONE && p->vals[x].dtype == TOSAC_DTYPE_FP32 && op->op != TOSAC_OP_MATMUL) {
            rt_op *cop = &p->ops[r];
            if (cop->op == TOSAC_OP_CLAMP && cop->mode == M_KERNEL && cop->inst == op->inst &&
                tosac_clamp_f32_bounds(&cop->call, &op->epi.flo, &op->epi.fhi, &op->epi.fignore)) {
                cop->fused_into = k;
                op->has_epi = true;
                op->epi.out = cop->call.out;
                op->fused_out = p->idx[cop->out_base];
            }
            continue;
        }
        if (p->vals[x].dtype != TOSAC_DTYPE_INT32 || p->vals[x].rank < 1) continue;
        if (r == RT_NONE || p->ops[r].op != TOSAC_OP_RESCALE || p->ops[r].mode != M_KERNEL ||
            p->ops[r].inst != op->inst || p->idx[p->ops[r].in_base] != x)
            continue;
        rt_op *rs = &p->ops[r];
        int32_t lo, hi;
        if (!tosac_rescale_fusable(&rs->call, &lo, &hi)) continue;
        uint32_t out = p->idx[rs->out_base];
        uint32_t cl = sole_reader(p, out, readers);
        int32_t clo, chi;
        rt_op *cop = cl != RT_NONE ? &p->ops[cl] : NULL;
        if (cop && cop->op == TOSAC_OP_CLAMP && cop->mode == M_KERNEL && cop->inst == op->inst &&
            tosac_clamp_int_bounds(&cop->call, &clo, &chi) && cop->call.in[0].dtype == rs->call.out[0].dtype) {
            /* the RESCALE's range contains [clo, chi] (same signed type): the composition clips once */
            lo = clo, hi = chi;
            cop->fused_into = k;
            out = p->idx[cop->out_base];
            op->epi.out = cop->call.out;
        } else {
            op->epi.out = rs->call.out;
        }
        rs->fused_into = k;
        op->has_epi = true;
        op->epi.rescale = &rs->call;
        op->epi.lo = lo, op->epi.hi = hi;
        op->fused_out = out;
    }
out:
    tosac_free(readers, ((size_t)p->n_vals + 1) * sizeof(uint32_t));
    tosac_free(count, ((size_t)p->n_vals + 1) * sizeof(uint32_t));
}
