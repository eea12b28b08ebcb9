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

/* (also int8 MATMUL with a constant B, as a 1x1 convolution: the matmul family's hooks) */
bool tosac_conv_mve_prepare(const tosac_kcall *c, tosac_kprep *sizes, void *dst);
bool tosac_conv_mve_run(tosac_kcall *c, tosac_status *st);
/* RESCALE: the portable prepared bytes (base of them) followed by the Helium tables (a fused
   epilogue of a portable producer reads the former) */
bool tosac_rescale_mve_prepare(const tosac_kcall *c, tosac_kprep *sizes, void *dst, size_t base);
bool tosac_rescale_mve_run(tosac_kcall *c, tosac_status *st);
/* (no prepared constants: the run alone decides) */
bool tosac_pool_mve_run(tosac_kcall *c, tosac_status *st);
bool tosac_clamp_mve_run(tosac_kcall *c, tosac_status *st);
bool tosac_table_mve_run(tosac_kcall *c, tosac_status *st);
bool tosac_binary_mve_run(tosac_kcall *c, tosac_status *st);
bool tosac_reduce_mve_run(tosac_kcall *c, tosac_status *st);

/*
 * The Helium kernel owns a TOSAC_KISA_MVE call (tosac_mve_owns) when its run takes the call
 * whatever the data (the prepared bytes are its own, or shapes, types and constants decide):
 * emitted C then calls the family's Helium-only entry, which never reaches the portable kernel,
 * so the linker drops that (--gc-sections). Given another call the entry fails with
 * TOSAC_ERR_UNSUPPORTED.
 */
bool tosac_conv_mve_owns(const tosac_kcall *c);
bool tosac_rescale_mve_owns(const tosac_kcall *c);
/* (no prepared bytes: shapes, types, a constant shift or axis decide) */
bool tosac_binary_mve_owns(const tosac_kcall *c);
bool tosac_reduce_mve_owns(const tosac_kcall *c);
bool tosac_table_mve_owns(const tosac_kcall *c);
tosac_status tosac_kernel_conv_mve(tosac_kcall *c); /* CONV2D */
tosac_status tosac_kernel_depthwise_mve(tosac_kcall *c);
tosac_status tosac_kernel_matmul_mve(tosac_kcall *c);
tosac_status tosac_kernel_rescale_mve(tosac_kcall *c);
tosac_status tosac_kernel_binary_mve(tosac_kcall *c);
tosac_status tosac_kernel_reduce_mve(tosac_kcall *c);
tosac_status tosac_kernel_table_mve(tosac_kcall *c);
size_t tosac_rescale_mve_unread(const tosac_kcall *c);
static inline bool tosac_mve_owns(const tosac_kcall *c)
{
    if (c->isa != TOSAC_KISA_MVE) return false;
    switch (c->op) {
    case TOSAC_OP_CONV2D:
    case TOSAC_OP_DEPTHWISE_CONV2D:
    case TOSAC_OP_MATMUL: return tosac_conv_mve_owns(c);
    case TOSAC_OP_RESCALE: return tosac_rescale_mve_owns(c);
    case TOSAC_OP_ADD:
    case TOSAC_OP_SUB:
    case TOSAC_OP_MUL: return tosac_binary_mve_owns(c);
    case TOSAC_OP_REDUCE_SUM:
    case TOSAC_OP_REDUCE_MAX:
    case TOSAC_OP_REDUCE_MIN: return tosac_reduce_mve_owns(c);
    case TOSAC_OP_TABLE: return tosac_table_mve_owns(c);
    default: return false;
    }
}
/* The Helium-only entry of an owned call: tosac_kernel_<name>_mve. */
static inline const char *tosac_mve_entry(const tosac_kcall *c)
{
    switch (c->op) {
    case TOSAC_OP_CONV2D: return "conv";
    case TOSAC_OP_DEPTHWISE_CONV2D: return "depthwise";
    case TOSAC_OP_MATMUL: return "matmul";
    case TOSAC_OP_RESCALE: return "rescale";
    case TOSAC_OP_TABLE: return "table";
    case TOSAC_OP_REDUCE_SUM:
    case TOSAC_OP_REDUCE_MAX:
    case TOSAC_OP_REDUCE_MIN: return "reduce";
    default: return "binary";
    }
}
/* The leading prepared bytes of an owned call that its Helium entry never reads (a RESCALE's
   portable layout): emitted C leaves them out. */
static inline size_t tosac_mve_unread_prefix(const tosac_kcall *c)
{
    return c->op == TOSAC_OP_RESCALE ? tosac_rescale_mve_unread(c) : 0;
}

/* An owned conv / matmul call with a fused epilogue was prepared with that epilogue's RESCALE
   (multipliers, shifts and zero points in its prepared bytes: tosac_conv_mve_prepare takes no call
   whose epilogue it cannot fold), so its Helium entry reads nothing of the RESCALE's call: emitted
   C passes the epilogue without it. */
static inline bool tosac_mve_epi_rescale_unread(const tosac_kcall *c)
{
    return (c->op == TOSAC_OP_CONV2D || c->op == TOSAC_OP_DEPTHWISE_CONV2D || c->op == TOSAC_OP_MATMUL) &&
           c->epi && tosac_conv_mve_owns(c);
}

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
