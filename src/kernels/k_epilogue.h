/*
 * Fused epilogues (kernel.h: tosac_kepilogue). The runtime asks whether a consumer can be fused;
 * a producer with c->epi set hands its int32 results (accumulator + bias, whole channel rows from
 * channel 0) to tosac_epilogue_store instead of storing them.
 */
#ifndef TOSAC_KERNELS_K_EPILOGUE_H
#define TOSAC_KERNELS_K_EPILOGUE_H

#include "kernels/kernel.h"
#include "kernels/kutil.h"

/* A RESCALE call the epilogue runs exactly: int32 input, signed 8/16-bit output, scale32 with
   SINGLE or DOUBLE_ROUND, constant multiplier / shift / zero points. *lo, *hi: its output range. */
bool tosac_rescale_fusable(const tosac_kcall *rescale, int32_t *lo, int32_t *hi);

/* The [min_val, max_val] of an INT8 / INT16 CLAMP call (false for other types or bad bounds). */
bool tosac_clamp_int_bounds(const tosac_kcall *clamp, int32_t *lo, int32_t *hi);

/* The bounds and nan_mode of an FP32 CLAMP call (false for other types or bad bounds). */
bool tosac_clamp_f32_bounds(const tosac_kcall *clamp, float *lo, float *hi, bool *ignore);
/* CLAMP of fp32 values in place (the one implementation: the CLAMP kernel uses it too). */
void tosac_clamp_f32_row(float *x, int64_t n, float lo, float hi, bool ignore);

/* Rescales acc[0..n) in place (from the RESCALE's prepared tables, in c->isa's variant), clips to
   [epi->lo, epi->hi] and stores at element `off` of epi->out. UNPREDICTABLE when the RESCALE's
   REQUIREs fail, as the unfused RESCALE would report. */
tosac_status tosac_epilogue_store(tosac_kcall *c, int32_t *acc, int64_t off, int64_t n);
/* The same for columns [j0, j0 + jn) of `rows` rows of ld channels: acc and the output (from
   element off) hold channel 0 of row p at p * ld. */
tosac_status tosac_epilogue_store_cols(tosac_kcall *c, int32_t *acc, int64_t ld, int64_t off, int64_t rows, int64_t j0,
                                       int64_t jn);

/* The fused RESCALE of c->epi for a GEMM that applies it in registers (k_gemm.h tosac_gemm_rq,
   AVX-512 and AVX2 levels): false when its prepared tables lack that form (or a REQUIRE may fail), where the
   int32 sums go through tosac_epilogue_store instead. */
struct tosac_gemm_rq;
bool tosac_epilogue_rq(const tosac_kcall *c, struct tosac_gemm_rq *rq);

/*
 * Strips: an fp32 elementwise operator as one row function, so that the runtime can run a chain
 * of them (tails, prologues, standalone chains) strip by strip with every intermediate in L1
 * instead of operator by operator over whole blocks. tosac_kstrip_of fills *s for an FP32 ADD,
 * SUB, MUL (shift 0), MAXIMUM, MINIMUM, CLAMP or FP32 unary call (ABS ... SIGMOID, NEGATE with
 * zero points 0) at c->isa, false for anything else (or a call whose kernel could fail);
 * tosac_kstrip_run computes o[i] = f(a[i * sa], b[i * sb]) for i < n (sa, sb: 0 or 1; b and sb
 * unused for one operand; o may be a) with the row code the operator's own kernel runs: the same
 * bits as the kernel on those elements.
 */
enum tosac_kstrip_form { TOSAC_KSTRIP_UNARY = 1, TOSAC_KSTRIP_BINARY, TOSAC_KSTRIP_CLAMP, TOSAC_KSTRIP_SILU, TOSAC_KSTRIP_HSWISH,
                         TOSAC_KSTRIP_FUSED };
typedef struct tosac_kstrip {
    uint8_t form;      /* tosac_kstrip_form */
    uint32_t isa;      /* the call's variant */
    void (*fn)(void);  /* the row function (UNARY, BINARY), cast back to its type to run */
    float lo, hi;      /* CLAMP bounds, nan_mode IGNORE or not */
    bool ignore;
    uint8_t xop;       /* SILU, HSWISH: which operand of the last MUL is x (the other is unread) */
    float k[2];        /* HSWISH: the scalars multiplied by, then added */
} tosac_kstrip;
bool tosac_kstrip_of(const tosac_kcall *c, tosac_kstrip *s);
void tosac_kstrip_run(const tosac_kstrip *s, int64_t n, const float *a, int64_t sa, const float *b, int64_t sb, float *o);
/* Members m[0..n) of a chain in one pass over the rows x, from the x operand (operand xop of the
   last member) of tosac_kstrip_run: n = 2, SIGMOID(x) then a MUL of x by it (SiLU: s->form SILU);
   n = 4, a MUL of x by the scalar k[0], an ADD of the scalar k[1], a CLAMP, a MUL of x by it
   (hard-swish: HSWISH), each member reading the one before. The same bits as the members in turn,
   except the sign of a NaN from a NaN x in SiLU (x's NaN, quieted, at every level); false for
   anything else. The runtime gives the other members the form FUSED, which
   tosac_kstrip_run skips. */
bool tosac_kstrip_fuse(const tosac_kstrip *m, uint32_t n, const float *k, uint32_t xop, tosac_kstrip *s);
/* CLAMP of n fp32 values in the variant isa picks (y may be x; the CLAMP kernel's code). */
void tosac_clamp_f32_isa(uint32_t isa, const float *x, float *y, int64_t n, float lo, float hi, bool ignore);

/* The fp32 epilogue's `post` over output rows [row0, row0 + nrows), all stored (kernel.h). */
static inline void tosac_epilogue_post(const tosac_kcall *c, uint32_t worker, int64_t row0, int64_t nrows)
{
    if (c->epi && c->epi->post && nrows > 0) c->epi->post(c->epi->post_ctx, worker, row0, nrows);
}

/* The post over all npix output rows once a kernel's column groups have stored every channel of
   them (a tail cannot run per group): in as many even pieces as the kernel had tasks, at most one
   row each, on the call's workers. */
typedef struct tosac_epilogue_late {
    const tosac_kcall *c;
    size_t npix, pieces;
} tosac_epilogue_late;
static inline void tosac_epilogue_late_pieces(void *ctx, uint32_t worker, size_t b0, size_t b1)
{
    const tosac_epilogue_late *l = ctx;
    for (size_t i = b0; i < b1; i++) {
        size_t p0, pn;
        tosac_keven_part(l->npix, l->pieces, i, &p0, &pn);
        tosac_epilogue_post(l->c, worker, (int64_t)p0, (int64_t)pn);
    }
}
static inline void tosac_epilogue_post_late(const tosac_kcall *c, size_t npix, size_t tasks)
{
    tosac_epilogue_late l = {c, npix, npix < tasks ? npix : tasks};
    if (c->epi && c->epi->post && l.pieces) tosac_kparallel_for(c, tosac_epilogue_late_pieces, &l, l.pieces);
}

/* The fp32 epilogue's `pre` over input rows [row0, row0 + nrows), before they are read (kernel.h). */
static inline void tosac_epilogue_pre(const tosac_kcall *c, uint32_t worker, int64_t row0, int64_t nrows)
{
    if (c->epi && c->epi->pre && nrows > 0) c->epi->pre(c->epi->pre_ctx, worker, row0, nrows);
}

#endif
