/*
 * Helium (Arm MVE) kernels for the Cortex-M55, one file per family (k_<family>_mve.c), hooked
 * into the family's prepare and run when c->isa is TOSAC_KISA_MVE. Each pair is:
 *   bool tosac_<family>_mve_prepare(c, sizes, dst): true when the Helium kernel takes the call,
 *     with its own prepared layout (written on any host: plain C); false leaves the call to the
 *     portable kernel (which the family then runs as TOSAC_KISA_PORTABLE);
 *   bool tosac_<family>_mve_run(c, &status): true when it ran the call (its prepared bytes
 *     are recognised), false for the portable kernel.
 * The results are the portable kernels' bits (tests/mcu/kernels_mve.c checks them in QEMU). Not a
 * public header.
 */
#ifndef TOSAC_KERNELS_K_MVE_H
#define TOSAC_KERNELS_K_MVE_H

#include "kernels/kernel.h"

bool tosac_conv_mve_prepare(const tosac_kcall *c, tosac_kprep *sizes, void *dst);
bool tosac_conv_mve_run(tosac_kcall *c, tosac_status *st);
/* (no prepared constants: the run alone decides) */
bool tosac_pool_mve_run(tosac_kcall *c, tosac_status *st);

/* Runs a call the Helium kernels left as TOSAC_KISA_PORTABLE (the reason of a failure kept). */
static inline tosac_status tosac_mve_portable(tosac_kcall *c, tosac_kernel_fn fn)
{
    tosac_kcall p = *c;
    p.isa = TOSAC_KISA_PORTABLE;
    tosac_status st = fn(&p);
    c->why = p.why;
    return st;
}
static inline tosac_status tosac_mve_portable_prepare(const tosac_kcall *c, tosac_kprep *sizes, void *dst,
                                                      tosac_kernel_prepare_fn fn)
{
    tosac_kcall p = *c;
    p.isa = TOSAC_KISA_PORTABLE;
    return fn(&p, sizes, dst);
}

#endif
