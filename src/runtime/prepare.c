/*
 * The prepare step: every kernel's prepare (kernels/kernel.h) writes its prepared constants (packed
 * weights, per-channel tables) at the offset plan.c gave it, once per program. It reads only
 * constant operands, which build.c has already converted, so the bytes depend on the graph, the
 * fusion choices and the instruction-set level only. The operators are prepared on the program's
 * threads, one operator at a time from a shared counter (a few large convolutions dominate): each
 * writes only its own region, so the bytes do not depend on which thread prepared what.
 */
#include <stdatomic.h>

#include "core/alloc.h"
#include "core/diag.h"
#include "runtime/program.h"

typedef struct prep_job {
    tosac_program *p;
    uint8_t *dst;
    const uint32_t *ops; /* the operators with prepared constants */
    uint32_t n;
    _Atomic uint32_t next;
    bool *failed; /* per entry of ops */
} prep_job;

static void prep_task(void *ctx, uint32_t worker, size_t begin, size_t end)
{
    (void)worker, (void)begin, (void)end;
    prep_job *j = ctx;
    for (uint32_t i; (i = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed)) < j->n;) {
        rt_op *op = &j->p->ops[j->ops[i]];
        tosac_kprep sz = {0, 0, 0};
        op->call.epi = op->has_epi ? &op->epi : NULL;
        j->failed[i] = tosac_kernel_prepare_for(op->op)(&op->call, &sz, j->dst + op->prep_off) != TOSAC_OK ||
                       sz.const_size != op->prep_size;
    }
}

tosac_status rt_prepare(tosac_program *p, uint8_t *dst, tosac_diag *d)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < p->n_ops; k++) n += p->ops[k].prep_size != 0;
    uint32_t *ops = tosac_malloc((n ? n : 1) * sizeof *ops);
    bool *failed = tosac_calloc(n ? n : 1, sizeof *failed);
    if (!ops || !failed) {
        tosac_free(ops, (n ? n : 1) * sizeof *ops);
        tosac_free(failed, (n ? n : 1) * sizeof *failed);
        return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory (prepared constants)");
    }
    n = 0;
    for (uint32_t k = 0; k < p->n_ops; k++)
        if (p->ops[k].prep_size) ops[n++] = k;
    prep_job j = {p, dst, ops, n, 0, failed};
    tosac_program_parallel_for(p, prep_task, &j, p->workers < n ? p->workers : n);
    tosac_status s = TOSAC_OK;
    for (uint32_t i = 0; i < n && s == TOSAC_OK; i++) /* the first failure in program order */
        if (failed[i]) {
            char label[256];
            rt_op_label(p, ops[i], label, sizeof label);
            s = tosac_diag_add(d, TOSAC_ERR_INTERNAL, "%s: the kernel's prepare failed", label);
        }
    tosac_free(ops, (n ? n : 1) * sizeof *ops);
    tosac_free(failed, (n ? n : 1) * sizeof *failed);
    if (s != TOSAC_OK) return s;
    p->prepared = dst;
    p->dirty = true;
    return TOSAC_OK;
}
