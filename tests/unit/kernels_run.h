/*
 * Runs one kernel call the way the runtime does (kernels/kernel.h): prepare reports the sizes,
 * prepare writes the prepared constants into a fresh buffer, the run gets them and a scratch
 * buffer of exactly the size asked for, filled with garbage (uninitialised per the interface).
 * Inputs whose bit is set in kr_const_mask (default: none) are passed as constant operands, the
 * ones prepare may read and pack.
 */
#ifndef TOSAC_TESTS_KERNELS_RUN_H
#define TOSAC_TESTS_KERNELS_RUN_H

#include <stdlib.h>
#include <string.h>

#include "kernels/kernel.h"

static inline void *kr_alloc(size_t n)
{
    return n ? aligned_alloc(64, (n + 63) & ~(size_t)63) : NULL;
}

static uint32_t kr_const_mask;

/*
 * Workers of the parallel-for the calls get (default 1: none). With more, the call gets that many
 * scratch copies and a parallel-for that runs one-index ranges from the last to the first, each
 * on worker index % workers: a kernel whose results depend on the split or the order of its
 * tiles gives other bits than with one worker (tests/zoo/threads.sh runs real threads).
 */
static uint32_t kr_workers = 1;

static void kr_par_run(void *pool, tosac_ktask_fn fn, void *ctx, size_t n)
{
    (void)pool;
    for (size_t i = n; i-- > 0;) fn(ctx, (uint32_t)(i % kr_workers), i, i + 1);
}

/* The scratch bytes the kernel asks for (0 when prepare fails). */
static inline size_t kernels_scratch_size(const tosac_kcall *c)
{
    tosac_kernel_prepare_fn pf = tosac_kernel_prepare_for(c->op);
    tosac_kprep sz = {0, 0, 0};
    return pf && pf(c, &sz, NULL) == TOSAC_OK ? sz.scratch_size : 0;
}

static inline tosac_status kernels_run_call(tosac_kcall *c)
{
    tosac_ktensor kin[16];
    const tosac_ktensor *orig = c->in;
    if (c->n_in > 16) return TOSAC_ERR_INTERNAL;
    for (uint32_t i = 0; i < c->n_in; i++) {
        kin[i] = c->in[i];
        kin[i].constant = (kr_const_mask >> i) & 1u;
    }
    c->in = kin;
    tosac_kernel_prepare_fn pf = tosac_kernel_prepare_for(c->op);
    tosac_kernel_fn fn = tosac_kernel_for(c->op);
    if (!pf || !fn) return TOSAC_ERR_INTERNAL;
    tosac_kprep sz = {0, 0, 0};
    c->isa = tosac_kernel_isa();
    tosac_status s = pf(c, &sz, NULL);
    if (s != TOSAC_OK) {
        c->in = orig;
        return s;
    }
    uint32_t workers = kr_workers > 1 ? kr_workers : 1;
    c->par = (tosac_kparallel){workers > 1 ? kr_par_run : NULL, NULL, workers};
    void *prep = kr_alloc(sz.const_size), *scr = kr_alloc(sz.scratch_size * workers);
    if ((sz.const_size && !prep) || (sz.scratch_size && !scr)) {
        free(prep);
        free(scr);
        c->in = orig;
        return TOSAC_ERR_NOMEM;
    }
    if (sz.const_size) s = pf(c, &sz, prep);
    if (scr) memset(scr, 0xA5, sz.scratch_size * workers);
    c->prep = prep;
    c->prep_size = sz.const_size;
    c->scratch = scr;
    c->scratch_size = sz.scratch_size;
    if (s == TOSAC_OK) s = fn(c);
    c->prep = NULL;
    c->scratch = NULL;
    c->in = orig;
    free(prep);
    free(scr);
    return s;
}

#endif
